"""Library calls on computed CPU operands take a fast path (lazyarr/_fallback.py
``computed_buffers``, ``run_computed``; ``_decompositions._on_computed``; ``sort``,
``argsort``, ``cumsum``, ``cumprod``): NumPy's call on the operands' memory at once, without
the checks and walks of the general path (the fallback's ``run``). These tests run each call
both ways (the fast path turned off by making ``computed_buffers`` answer None) and ask for
the same results (type, dtype, shape, bits), the same records for ``la.explain`` (name,
bytes, FLOPs) and the same exceptions, NumPy's; and that the fast path is the one taken
where it applies, and not where it must not be (``la.config(fallback=...)``, ``la.jit``'s
trace, pending or cuda operands)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _fallback


def _matrix(n, seed=0, spd=False, stack=()):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(stack + (n, n))
    if spd:
        return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return a + n * np.eye(n)


A4, S4, B4 = _matrix(4), _matrix(4, 1, spd=True), np.random.default_rng(2).standard_normal(4)
A32 = _matrix(32, 3)
STACK = _matrix(3, 4, stack=(2,))
V16 = np.random.default_rng(5).standard_normal(16)
C = (_matrix(3, 6) + 1j * _matrix(3, 7)).astype(np.complex64)

#: name: (call of a namespace ``m`` and operands, NumPy operands)
CASES = {
    "inv": (lambda m, a: m.linalg.inv(a), (A4,)),
    "inv 32": (lambda m, a: m.linalg.inv(a), (A32,)),
    "inv stack": (lambda m, a: m.linalg.inv(a), (STACK,)),
    "inv complex64": (lambda m, a: m.linalg.inv(a), (C,)),
    "inv int": (lambda m, a: m.linalg.inv(a), (np.array([[2, 1], [1, 3]]),)),
    "solve vector": (lambda m, a, b: m.linalg.solve(a, b), (A4, B4)),
    "solve matrix": (lambda m, a, b: m.linalg.solve(a, b), (A4, A4[:, :2].copy())),
    "solve stack": (lambda m, a, b: m.linalg.solve(a, b), (STACK, STACK[0])),
    "det": (lambda m, a: m.linalg.det(a), (A4,)),
    "det stack": (lambda m, a: m.linalg.det(a), (STACK,)),
    "slogdet": (lambda m, a: m.linalg.slogdet(a), (A4,)),
    "cholesky": (lambda m, a: m.linalg.cholesky(a), (S4,)),
    "cholesky upper": (lambda m, a: m.linalg.cholesky(a, upper=True), (S4,)),
    "eig": (lambda m, a: m.linalg.eig(a), (A4,)),
    "eigvals": (lambda m, a: m.linalg.eigvals(a), (A4,)),
    "eigh": (lambda m, a: m.linalg.eigh(a), (S4,)),
    "eigh U": (lambda m, a: m.linalg.eigh(a, "u"), (S4,)),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a), (S4,)),
    "svd": (lambda m, a: m.linalg.svd(a), (A4,)),
    "svd thin": (lambda m, a: m.linalg.svd(a[:, :3].copy(), full_matrices=False), (A4,)),
    "svd values": (lambda m, a: m.linalg.svd(a, compute_uv=False), (A4,)),
    "svd hermitian": (lambda m, a: m.linalg.svd(a, hermitian=True), (S4,)),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), (A4,)),
    "qr": (lambda m, a: m.linalg.qr(a), (A4,)),
    "qr complete": (lambda m, a: m.linalg.qr(a, "complete"), (A4,)),
    "qr r": (lambda m, a: m.linalg.qr(a, "r"), (A4,)),
    "qr raw": (lambda m, a: m.linalg.qr(a, "raw"), (A4,)),
    "lstsq": (lambda m, a, b: m.linalg.lstsq(a, b), (A4, B4)),
    "cond": (lambda m, a: m.linalg.cond(a), (A4,)),
    "sort": (lambda m, v: m.sort(v), (V16,)),
    "sort axis None": (lambda m, a: m.sort(a, axis=None), (A4,)),
    "sort axis 0": (lambda m, a: m.sort(a, axis=0), (A4,)),
    "argsort": (lambda m, v: m.argsort(v), (np.array([3.0, 1, 3, 1, 2]),)),
    "cumsum": (lambda m, v: m.cumsum(v), (V16,)),
    "cumsum axis": (lambda m, a: m.cumsum(a, axis=1), (A4,)),
    "cumsum int": (lambda m, v: m.cumsum(v), (np.arange(10, dtype=np.int8),)),
    "cumprod": (lambda m, v: m.cumprod(v, dtype=np.float32), (V16,)),
}

#: calls that raise, with NumPy's exception
ERRORS = {
    "inv singular": (lambda m, a: m.linalg.inv(a), (np.ones((3, 3)),)),
    "inv 1-d": (lambda m, a: m.linalg.inv(a), (np.ones(3),)),
    "inv 0-d": (lambda m, a: m.linalg.inv(a), (np.array(3.0),)),
    "inv non-square": (lambda m, a: m.linalg.inv(a), (np.ones((2, 3)),)),
    "inv float16": (lambda m, a: m.linalg.inv(a), (np.eye(2, dtype=np.float16),)),
    "solve shapes": (lambda m, a, b: m.linalg.solve(a, b), (A4, np.ones(3))),
    "solve stacks": (lambda m, a, b: m.linalg.solve(a, b), (STACK, np.ones((3, 3, 2)))),
    "solve singular": (lambda m, a, b: m.linalg.solve(a, b), (np.ones((3, 3)), np.ones(3))),
    "cholesky not pd": (lambda m, a: m.linalg.cholesky(a), (-np.eye(3),)),
    "det 1-d": (lambda m, a: m.linalg.det(a), (np.ones(3),)),
    "eigh UPLO": (lambda m, a: m.linalg.eigh(a, "X"), (S4,)),
    "svd 1-d": (lambda m, a: m.linalg.svd(a), (np.ones(3),)),
    "svd nan": (lambda m, a: m.linalg.svd(a), (np.full((3, 3), np.nan),)),
    "qr mode": (lambda m, a: m.linalg.qr(a, "bad"), (A4,)),
    "qr 1-d": (lambda m, a: m.linalg.qr(a), (np.ones(3),)),
    "sort axis": (lambda m, v: m.sort(v, axis=2), (V16,)),
    "sort 0-d": (lambda m, v: m.sort(v), (np.array(1.0),)),
    "cumsum axis": (lambda m, v: m.cumsum(v, axis=1), (V16,)),
}


@pytest.fixture
def runs(monkeypatch):
    """The names of the calls that went through the fallback's general ``run``."""
    seen = []
    real = _fallback.run
    monkeypatch.setattr(_fallback, "run", lambda path, *a, **k: seen.append(path)
                        or real(path, *a, **k))
    with la.config(device="cpu"):
        yield seen


def _general(monkeypatch):
    """The fast path off: every call the general one."""
    monkeypatch.setattr(_fallback, "computed_buffers", lambda args: None)
    monkeypatch.setattr(_fallback, "_computed_call_buffers", lambda args, kwargs: None)


def _arrays(result):
    return list(result) if isinstance(result, tuple) else [result]


def _record(x):
    """``x``'s call record without its running number (name, bytes read, written, FLOPs)."""
    return x._node.origin[:4]


def _same_results(got, want):
    """``got`` (lazyarr's) as ``want`` (lazyarr's, or NumPy's: an array for an array or a
    NumPy scalar, a tuple or named tuple of arrays): computed LazyArrays of the same bits."""
    if isinstance(want, tuple):
        assert type(got) is type(want)
    for g, w in zip(_arrays(got), _arrays(want), strict=True):
        assert type(g) is la.LazyArray and g._node.data is not None
        gh, wh = g.to_numpy(), np.asarray(w.to_numpy() if isinstance(w, la.LazyArray) else w)
        assert (gh.dtype, gh.shape) == (wh.dtype, wh.shape)
        assert gh.tobytes() == wh.tobytes()     # the bits, NaNs and signed zeros included


@pytest.mark.parametrize("name", list(CASES))
def test_fast_path_is_the_general_path(name, runs, monkeypatch):
    call, operands = CASES[name]
    fast = call(la, *[la.asarray(a) for a in operands])
    assert not runs, "the fast path was not taken"
    numpy_result = call(np, *operands)
    _same_results(fast, numpy_result if isinstance(numpy_result, tuple)
                  else np.asarray(numpy_result))
    _general(monkeypatch)
    general = call(la, *[la.asarray(a) for a in operands])
    assert runs, "the general path was not taken"
    _same_results(fast, general)
    for f, g in zip(_arrays(fast), _arrays(general)):
        assert _record(f) == _record(g)
        # (la.explain's steps: the library calls that computed a plan's inputs)
        assert [str(c) for c in _fallback.library_calls(f._node)] == \
            [str(c) for c in _fallback.library_calls(g._node)]


@pytest.mark.parametrize("name", list(ERRORS))
def test_fast_path_raises_numpys_exceptions(name, runs, monkeypatch):
    call, operands = ERRORS[name]
    with pytest.raises(Exception) as numpy_error:
        call(np, *operands)
    with pytest.raises(type(numpy_error.value)) as fast:
        call(la, *[la.asarray(a) for a in operands])
    assert str(fast.value) == str(numpy_error.value)
    _general(monkeypatch)
    with pytest.raises(type(numpy_error.value)) as general:
        call(la, *[la.asarray(a) for a in operands])
    assert str(general.value) == str(numpy_error.value)


def test_one_record_for_a_named_tuples_results(runs):
    x = la.asarray(A4)
    q, r = la.linalg.qr(x)
    assert q._node.origin is r._node.origin
    assert _record(q) == ("linalg.qr", A4.nbytes, 2 * A4.nbytes, round(4 * 4 ** 3 * 2 / 3))
    plan = la.explain(q + r)
    assert [c.name for c in plan.library_calls] == ["linalg.qr"]
    assert "library call numpy.linalg.qr" in str(plan)


def test_flops_of_the_fast_path(runs):
    n, k = 6, 2
    a = la.asarray(_matrix(n, stack=(3,)))
    b = la.asarray(np.ones((n, k)))
    assert _record(la.linalg.inv(a))[3] == 3 * 2 * n ** 3
    assert _record(la.linalg.solve(a, b))[3] == round(3 * (2 * n ** 3 / 3 + 2 * n * n * k))
    assert _record(la.linalg.solve(a[0], la.asarray(np.ones(n))))[3] == round(
        2 * n ** 3 / 3 + 2 * n * n)
    assert _record(la.linalg.cholesky(la.asarray(S4)))[3] == round(4 ** 3 / 3)
    assert not runs


def test_the_general_path_where_the_fast_one_must_not_run(runs):
    x = la.asarray(A4)
    with la.config(fallback="warn"), pytest.warns(_fallback.FallbackWarning, match="linalg.inv"):
        la.linalg.inv(x)
    with la.config(fallback="warn"), pytest.warns(_fallback.FallbackWarning, match="sort"):
        la.sort(la.asarray(V16))
    with la.config(fallback="error"), pytest.raises(_fallback.FallbackError):
        la.cumsum(la.asarray(V16))
    assert runs == ["linalg.inv", "sort"]
    runs.clear()
    with la.config(eager_max_size=0):
        pending = x * 2             # a pending operand: computed by its kernel first
    assert pending._node.data is None
    np.testing.assert_array_equal(la.linalg.inv(pending).to_numpy(), np.linalg.inv(A4 * 2))
    assert runs == ["linalg.inv"]
    runs.clear()
    got = la.linalg.inv(A4)         # a NumPy operand: converted, then the call made at once
    assert got.to_numpy().tobytes() == np.linalg.inv(A4).tobytes()
    assert _record(got) == ("linalg.inv", A4.nbytes, A4.nbytes, 2 * 4 ** 3)


def test_jit_traces_the_general_path_and_replays_it(runs):
    def step(a, v):
        return la.linalg.inv(a) + 1, la.sort(v), la.cumsum(v), la.linalg.eigh(a @ a.T)[0]

    jitted = la.jit(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", la.JitWarning)
        for seed in range(3):
            a, v = la.asarray(_matrix(4, seed)), la.asarray(V16 + seed)
            for got, want in zip(jitted(a, v), step(a, v)):
                _same_results(got, want)
    assert jitted.traces == 1
    assert "linalg.inv" in runs     # the trace's calls went through run, the tape's steps
    with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):
        jitted(la.zeros((4, 4)), la.asarray(V16))


def test_explain_of_a_function_runs_the_general_path(runs):
    x = la.asarray(A4)
    plan = la.explain(lambda: la.sum(la.linalg.inv(x) * 2))
    assert runs == ["linalg.inv"]
    assert [c.name for c in plan.library_calls] == ["linalg.inv"]
    assert plan.library_calls[0].flops == 2 * 4 ** 3


def test_large_operands_go_through_the_result_pool(runs, monkeypatch):
    used = []
    real = _fallback.result_pool_call
    monkeypatch.setattr(_fallback, "result_pool_call",
                        lambda fn, args, kwargs: used.append(fn) or real(fn, args, kwargs))
    la.linalg.inv(la.asarray(A4))
    assert used == []               # small: NumPy's call as it is
    n = 96                          # 72 KiB: over SMALL_CALL_BYTES
    big = _matrix(n)
    assert big.nbytes >= _fallback.SMALL_CALL_BYTES
    got = la.linalg.inv(la.asarray(big))
    assert len(used) == 1 and not runs
    assert got.to_numpy().tobytes() == np.linalg.inv(big).tobytes()


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(),
                    reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_cuda_operands_take_the_general_path(runs):
    with la.config(device="cuda"):
        x = la.asarray(A4, device="cuda")
        got = la.linalg.inv(x)
        assert got.device == "cuda" and runs == ["linalg.inv"]
        np.testing.assert_allclose(la.asarray(got, device="cpu").to_numpy(), np.linalg.inv(A4))
