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
# A new GPU kernel's first calls run op by op while it compiles in the background (the
# default: backends/cuda/first_calls.py). The suite tests the kernels, most of them in one
# call, so it waits for each compile; tests/test_first_calls.py tests the other path (and its
# subprocesses inherit the variable).
os.environ["LAZYARR_COMPILE"] = "wait"
la.set_config(compile="wait")
# A CPU program of float arithmetic that has run twice compiles into one loop (the default:
# backends/cpu_loops.py), with Numba in the background. The suite runs the VM's instructions,
# whose values the loops must match bit for bit (tests/test_cpu_loops.py tests them);
# LAZYARR_TEST_CPU_LOOPS=wait runs the whole suite with the loops.
la.set_config(cpu_loops=os.environ.get("LAZYARR_TEST_CPU_LOOPS", "off"))

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


# ----------------------------------------------------------------- the GPU suite's wall time
# The H200 runs ``pytest -m gpu`` on 15 xdist workers. A test that starts late and runs for
# a minute or two leaves the other workers idle at the end (2026-12-03f: 2,957 test-seconds,
# 480 s of wall clock). tests/gpu_durations.txt holds the slow tests' durations measured there
# (``python tools/device/gpu_durations.py gpu-tests.xml`` writes it); those tests are
# collected first, slowest first, so that they start at once and the short ones fill the end.
_DURATIONS = os.path.join(os.path.dirname(__file__), "gpu_durations.txt")


def _known_durations():
    try:
        with open(_DURATIONS) as f:
            rows = [line.split(None, 1) for line in f if line.strip() and not line.startswith("#")]
    except OSError:
        return {}
    return {nodeid.strip(): float(seconds) for seconds, nodeid in rows}   # (ids hold spaces)


def pytest_collection_modifyitems(config, items):
    known = _known_durations()
    if known:   # (a stable sort: the other tests keep their order, after the slow ones)
        items.sort(key=lambda item: -known.get(item.nodeid, 0.0))


# LAZYARR_TEST_STATS=<dir>: each process writes, for every test that loaded a CUDA kernel, the
# seconds spent getting kernels (Numba compiles, links, disk-cache loads, where the driver
# compiles a cached PTX) to <dir>/<worker>.json; tools/device/gpu_durations.py --stats sums
# them up. Where a GPU test's time goes, without a profiler on the device.
_STATS_DIR = os.environ.get("LAZYARR_TEST_STATS")
_kernel_stats = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if not _STATS_DIR:
        yield
        return
    import time
    try:
        from lazyarr.backends.cuda import compile as compile_mod
    except ImportError:     # (no numba-cuda here)
        yield
        return
    spent = {"get_s": 0.0, "gets": 0}
    real = compile_mod._load_or_build

    def timed(*args):
        t0 = time.perf_counter()
        try:
            return real(*args)
        finally:
            spent["get_s"] += time.perf_counter() - t0
            spent["gets"] += 1

    before = dict(compile_mod.stats)
    compile_mod._load_or_build = timed
    t0 = time.perf_counter()
    try:
        yield
    finally:
        compile_mod._load_or_build = real
        after = compile_mod.stats
        row = {k: round(after[k] - before.get(k, 0), 4) for k in after
               if isinstance(after[k], (int, float)) and after[k] != before.get(k, 0)}
        row.update(spent, test_s=round(time.perf_counter() - t0, 3))
        if spent["gets"]:
            _kernel_stats[item.nodeid] = row


def pytest_sessionfinish(session):
    if _STATS_DIR and _kernel_stats:
        import json
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        os.makedirs(_STATS_DIR, exist_ok=True)
        with open(os.path.join(_STATS_DIR, f"{worker}.json"), "w") as f:
            json.dump(_kernel_stats, f)
