"""Differential fuzzing: random expression DAGs, every lazyarr target against NumPy (issue 6).

Each example is an expression drawn by :func:`strategies.expressions` from the op registry,
run by NumPy (the oracle) and by lazyarr in eager mode and in lazy mode on every backend
available here (``reference``, ``cpu-fused`` when built, ``cuda`` on a GPU machine; the CUDA
simulator in :func:`test_fuzz_cuda_simulator`). The tolerance policy is
``strategies.POLICIES`` (docs/testing.rst). The budget is fixed and derandomized, so CI runs
the same examples every time; ``python tools/fuzz_campaign.py`` runs the long campaign.

A failure prints the shrunk expression as a runnable ``Expr(...)``: keep it in
tests/test_regressions.py once fixed.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import strategies as S
from hypothesis import HealthCheck, given, settings

import lazyarr as la
from lazyarr._registry import OPS

FUZZ = settings(derandomize=True, deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])
# The real GPU is fuzzed by test_fuzz_cuda_gpu (per op pool and policy), not by the general tests.
TARGETS = [t for t in S.targets() if t != "lazy-cuda"]


def _check(expr: S.Expr) -> None:
    problems = S.check(expr, TARGETS)
    assert not problems, "\n".join(f"[{t}] {p}" for t, p in problems.items()) + \
        f"\n\nreproduce with strategies.check({expr!r})\n\nas code:\n{expr.source()}"


def test_targets_include_every_cpu_backend():
    # No silent skip: the fuzz runs on everything available, which includes these two.
    assert "eager" in TARGETS and "lazy-reference" in TARGETS
    from lazyarr import backends
    for name in backends.available():
        if name != "cuda":
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


# ------------------------------------------------------------------------- CUDA simulator
_SIM = textwrap.dedent("""
    import json, os, sys
    assert os.environ["NUMBA_ENABLE_CUDASIM"] == "1"
    sys.path.insert(0, {tests!r})
    sys.argv = ["sim"]
    import strategies as S
    from hypothesis import HealthCheck, given, settings
    count, problems = [0], []

    @settings(derandomize=True, deadline=None, database=None, max_examples={n},
              suppress_health_check=list(HealthCheck))
    @given(S.expressions(max_steps=6, ops={ops}, allow_errors=False))
    def fuzz(expr):
        count[0] += 1
        p = S.check(expr, ["lazy-cuda-sim"], {{"lazy-cuda-sim": S.{policy}}})
        if p:
            problems.append(repr(expr) + "\\n" + p["lazy-cuda-sim"])

    fuzz()
    print(json.dumps({{"count": count[0], "problems": problems[:3], "n_problems": len(problems)}}))
""")


_SIM_EXACT = "S.EXACT_OPS"


def _simulate(ops: str, policy: str, n: int) -> dict:
    tests = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-c", _SIM.format(tests=tests, n=n, ops=ops, policy=policy)],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("ops, policy, n", [(_SIM_EXACT, "GPU_EXACT", 80),
                                            ("S.CONTINUOUS_OPS", "GPU_ULPS", 80)],
                         ids=["correctly-rounded-ops", "transcendentals"])
def test_fuzz_cuda_simulator(ops, policy, n):
    """The CUDA kernels (rendered exactly as for the GPU) run in Numba's simulator. Two
    pools: ops CUDA computes correctly rounded (exact policy, float64-reference reductions),
    and transcendentals in continuous expressions (ulp-bounded policy); docs/testing.rst."""
    pytest.importorskip("numba.cuda")
    result = _simulate(ops, policy, n)
    assert result["count"] == n
    assert not result["problems"], f"{result['n_problems']} mismatches, first:\n" + \
        "\n\n".join(result["problems"])


def test_cuda_simulator_sign_of_signed_int():
    """Regression (fuzzing): the CUDA template for the sign of a signed int subtracted two
    bools, which the simulator rejects (TypeError: numpy boolean subtract)."""
    pytest.importorskip("numba.cuda")
    result = _simulate("[S.OPS['sign']]", "GPU_EXACT", 10)
    assert result["count"] == 10
    assert not result["problems"], result["problems"][0]


GPU_EXAMPLES = int(os.environ.get("LAZYARR_GPU_FUZZ_EXAMPLES", "200"))


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy and numba-cuda")
@pytest.mark.parametrize("pool, policy", [("exact", S.GPU_EXACT), ("transcendental", S.GPU_ULPS)])
def test_fuzz_cuda_gpu(pool, policy):
    """On the GPU machine: the cuda backend against NumPy, GPU_EXAMPLES expressions per pool
    (each compiles new kernels, ~0.8 s on the H200 machine)."""
    ops = [op for op in S.EXACT_OPS] if pool == "exact" else S.CONTINUOUS_OPS
    count = [0]

    @settings(FUZZ, max_examples=GPU_EXAMPLES)
    @given(S.expressions(max_steps=10, ops=ops, allow_errors=False))
    def run(expr):
        count[0] += 1
        problems = S.check(expr, ["lazy-cuda"], {"lazy-cuda": policy})
        assert not problems, f"{problems['lazy-cuda']}\n\n{expr!r}"

    run()
    assert count[0] == GPU_EXAMPLES


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
