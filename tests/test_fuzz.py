"""Differential fuzzing: random expression DAGs, every lazyarr target against NumPy (issue 6).

Each example is an expression drawn by :func:`strategies.expressions` from the op registry,
run by NumPy (the oracle) and by lazyarr in eager mode and in lazy mode on every backend
available here (``reference``, ``cpu-fused`` when built; the cuda device, real or simulated,
in :func:`test_fuzz_cuda_gpu`). The tolerance policy is
``strategies.POLICIES`` (docs/testing.rst). The budget is fixed and derandomized, so CI runs
the same examples every time; ``python tools/fuzz_campaign.py`` runs the long campaign.

A failure prints the shrunk expression as a runnable ``Expr(...)``: keep it in
tests/test_regressions.py once fixed.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

import pytest
import strategies as S
from helpers import sim_sized
from hypothesis import HealthCheck, given, seed, settings

import lazyarr as la
from lazyarr import backends
from lazyarr._registry import OPS

FUZZ = settings(derandomize=True, deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])
# The cuda device (a GPU or the simulated one) is fuzzed by test_fuzz_cuda_gpu (per op pool
# and policy), not by the general tests.
TARGETS = [t for t in S.targets() if not t.startswith("lazy-cuda")]


def _check(expr: S.Expr) -> None:
    problems = S.check(expr, TARGETS)
    assert not problems, "\n".join(f"[{t}] {p}" for t, p in problems.items()) + \
        f"\n\nreproduce with strategies.check({expr!r})\n\nas code:\n{expr.source()}"


def test_targets_include_every_cpu_backend():
    # No silent skip: the fuzz runs on everything available, which includes these two.
    assert "eager" in TARGETS and "lazy-reference" in TARGETS
    for name in backends.available():
        if backends.BACKENDS.get(name, ("cpu",))[0] == "cpu":
            assert f"lazy-{name}" in TARGETS


@settings(FUZZ, max_examples=1500)
@given(S.expressions())
def test_fuzz_random_expressions(expr):
    _check(expr)


@settings(FUZZ, max_examples=200)
@given(S.expressions(max_steps=40, max_leaves=2, allow_errors=False))
def test_fuzz_deep_expressions(expr):
    _check(expr)


@settings(FUZZ, max_examples=300)
@given(S.expressions(max_steps=8, ops=S.REDUCTION_OPS + [OPS["multiply"], OPS["subtract"],
                                                        OPS["astype"], OPS["where"]]))
def test_fuzz_reduction_heavy(expr):
    _check(expr)


@pytest.mark.parametrize("op", [op.name for op in S.ALL_OPS])
def test_fuzz_each_registry_op(op):
    """Every op of the registry, in 25 small expressions where it is the only op drawn (plus
    the casts its loops need): an op added to the registry is fuzzed here automatically."""
    seen = []

    @settings(FUZZ, max_examples=25)
    @given(S.expressions(max_steps=4, ops=[OPS[op]]))
    def run(expr):
        seen.append(any(s.op == op for s in expr.steps))
        _check(expr)

    run()
    assert sum(seen) >= 10, f"{op} was drawn in only {sum(seen)} of {len(seen)} expressions"


# ------------------------------------------------------------------------- the cuda device
# The cuda backend is fuzzed by test_fuzz_cuda_gpu: on the H200 (``pytest -m gpu``) and in CI
# on the simulated device (``LAZYARR_CUDA_SIM=1 pytest -m gpu``). Each pool is split into
# shards that pytest-xdist spreads over its workers; each shard draws its own examples (its
# own seed: derandomize=True would give every shard the same ones), reproducibly, and a
# failure is shrunk for at most GPU_SHRINK_S seconds (every new expression compiles kernels).
GPU_EXAMPLES = int(os.environ.get("LAZYARR_GPU_FUZZ_EXAMPLES", sim_sized("200", "80")))
GPU_SHARD = sim_sized(25, 20)                   # examples per shard
GPU_SHRINK_S = float(os.environ.get("LAZYARR_GPU_SHRINK_S", "60"))
GPU_SHARDS = -(-GPU_EXAMPLES // GPU_SHARD)
CUDA_TARGET = f"lazy-{backends.fused_name('cuda')}"     # lazy-cuda, or lazy-cuda-sim
_GPU_POOLS = {"exact": (S.EXACT_OPS, S.GPU_EXACT), "transcendental": (S.CONTINUOUS_OPS, S.GPU_ULPS)}


class BoundedShrink:
    """Wraps a property so that shrinking stops ``budget_s`` after the first failure: from
    then on an example not seen failing passes at once (nothing runs), and one seen failing
    fails again the same way, so Hypothesis ends its shrink with the smallest failure found so
    far and replays it consistently."""

    def __init__(self, check: Callable[[S.Expr], None], budget_s: float) -> None:
        self.check, self.budget_s = check, budget_s
        self.first_failure: float | None = None
        self.failures: dict[str, BaseException] = {}

    def __call__(self, expr: S.Expr) -> None:
        key = repr(expr)
        if key in self.failures:
            raise self.failures[key]
        if self.first_failure is not None and \
                time.monotonic() - self.first_failure > self.budget_s:
            return
        try:
            self.check(expr)
        except Exception as exc:
            self.failures[key] = exc
            if self.first_failure is None:
                self.first_failure = time.monotonic()
            raise


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
@pytest.mark.parametrize("shard", range(GPU_SHARDS))
@pytest.mark.parametrize("pool", list(_GPU_POOLS))
def test_fuzz_cuda_gpu(pool, shard):
    """The cuda backend against NumPy: GPU_EXAMPLES expressions per pool (ops CUDA computes
    correctly rounded, exact policy with float64-reference reductions; transcendentals in
    continuous expressions, ulp-bounded policy: docs/testing.rst), GPU_SHARD per shard. Each
    new expression compiles kernels (~0.8 s on the H200, cached on disk across runs)."""
    ops, policy = _GPU_POOLS[pool]
    n = min(GPU_SHARD, GPU_EXAMPLES - shard * GPU_SHARD)
    count = [0]

    def check(expr: S.Expr) -> None:
        problems = S.check(expr, [CUDA_TARGET], {CUDA_TARGET: policy})
        assert not problems, f"{problems[CUDA_TARGET]}\n\n{expr!r}"

    bounded = BoundedShrink(check, GPU_SHRINK_S)

    @seed(20260 + 1000 * list(_GPU_POOLS).index(pool) + shard)
    @settings(FUZZ, derandomize=False, max_examples=n)
    @given(S.expressions(max_steps=sim_sized(10, 6), ops=list(ops), allow_errors=False))
    def run(expr):
        count[0] += 1
        bounded(expr)

    run()
    assert count[0] == n


def test_bounded_shrink_reports_the_smallest_failure_found_in_budget():
    """The shrink bound itself: past the budget, unseen examples pass without running and
    a failure seen before fails the same way (so Hypothesis's final replay is consistent)."""
    calls = []

    def check(expr):
        calls.append(expr)
        raise AssertionError(f"bad {expr}")

    bounded = BoundedShrink(check, budget_s=0.0)
    with pytest.raises(AssertionError, match="bad a"):
        bounded("a")
    time.sleep(0.01)
    bounded("b")                                   # past the budget: passes, nothing runs
    with pytest.raises(AssertionError, match="bad a"):
        bounded("a")                               # seen failing: fails again
    assert calls == ["a"]


def test_gpu_fuzz_shards_cover_the_budget():
    # at least as many examples as one pool of GPU_EXAMPLES, every shard with its own seed
    assert GPU_SHARDS * GPU_SHARD >= GPU_EXAMPLES > (GPU_SHARDS - 1) * GPU_SHARD


def test_check_detects_a_wrong_backend(monkeypatch):
    """The harness itself: a backend that is off by one ulp is caught (no vacuous passes)."""
    import numpy as np

    from lazyarr.backends import reference

    expr = S.Expr((S.Leaf(np.dtype("float32"), (3,), "C", 1),),
                  (S.Step("exp", (0,), (), "function"),), (1,))
    assert S.check(expr, ["lazy-reference"]) == {}
    real_run = reference.ReferenceBackend.run

    def off_by_one_ulp(self, lowered):
        out = real_run(self, lowered)
        return np.nextafter(out, np.inf, dtype=out.dtype) if out.dtype.kind == "f" else out

    monkeypatch.setattr(reference.ReferenceBackend, "run", off_by_one_ulp)
    problems = S.check(expr, ["lazy-reference"])
    assert "values differ" in problems["lazy-reference"]
    assert json.dumps(problems)  # printable
