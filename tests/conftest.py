"""Shared fixtures: every lazy backend available here, and the modes."""
from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
from helpers import record_bound_reductions

import lazyarr as la
from lazyarr import backends
from lazyarr.backends import cpu_fused

# The suite tests the engine: lazy mode's graphs, kernels and rules, mostly on small arrays.
# Operators on small computed CPU arrays run at once by default (``eager_max_size``, the guide's
# "Small arrays"); that path has its own tests (tests/test_small_eager.py) and runs elsewhere
# only when asked: LAZYARR_TEST_EAGER_MAX_SIZE=4096 runs the suite with the default.
la.set_config(eager_max_size=int(os.environ.get("LAZYARR_TEST_EAGER_MAX_SIZE", "0")))

# Every backend that can run here: the reference interpreter, plus each fused backend that
# imports (the Cython CPU backend once built; "cuda" only on a GPU machine).
CPU_BACKENDS = [name for name in backends.available() if name != "cuda"]


@pytest.fixture(params=["eager", *[f"lazy-{b}" for b in CPU_BACKENDS]])
def mode(request):
    """Run the test body in eager mode and in lazy mode on each CPU backend."""
    name = request.param
    if name == "eager":
        ctx = la.config(mode="eager", device="cpu")
    else:
        ctx = contextlib.ExitStack()
        ctx.enter_context(la.config(mode="lazy", device="cpu"))
        ctx.enter_context(backends.use_backend(name.removeprefix("lazy-")))
    with ctx:
        yield name


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def kernels(monkeypatch):
    """Lazy mode on the CPU, recording the programs the fused backend runs as their
    instruction counts (how many kernels a call makes, and how big)."""
    runs = []
    real = cpu_fused.CpuFusedBackend.run
    monkeypatch.setattr(cpu_fused.CpuFusedBackend, "run",
                        lambda self, lowered: runs.append(len(lowered.program.instrs))
                        or real(self, lowered))
    record_bound_reductions(monkeypatch, lambda lowered: len(lowered.program.instrs), runs)
    with la.config(mode="lazy", device="cpu"):
        yield runs
