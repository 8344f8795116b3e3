"""lazyarr/_functions/_nanfunctions.py's nanvar, nanstd and average against NumPy 2: every dtype
with edge values and all-NaN slices, every axis form, keepdims, ddof/correction, weights of
every kind, empty and 0-d arrays, computed and pending operands, both modes; NumPy's dtypes,
shapes, warnings and errors. Float results are compared with lazyarr's accumulation rule
(docs/testing.rst, "Reductions"): nanvar/nanstd as var/std (the elements cast to the loop
dtype, everything in float64, rounded once), average's sums as every sum."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import DTYPES, assert_same, lazy_reduction, nan_slices, pending, record_bound_reductions

import lazyarr as la
from lazyarr.backends import cpu_fused, reference

AXES = [None, 0, 1, -1, (0, 1), (1, 0)]
_OURS = ("Degrees of freedom", "NaN", "empty slice")


def _outcome(fn, *args, **kw):
    """(value or exception, the sorted NaN-function RuntimeWarnings it gave)."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        try:
            value = fn(*args, **kw)
            value = tuple(map(np.asarray, value)) if isinstance(value, tuple) else np.asarray(value)
        except Exception as exc:  # noqa: BLE001 - compared by the caller
            value = exc
    return value, sorted({str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)
                          and any(s in str(w.message) for s in _OURS)})


def _rule_nanvar(name, a, dtype=None, **kw):
    """What lazyarr's nanvar/nanstd return for float input: NumPy's on the elements cast to the
    loop dtype, then to float64, rounded once to the result dtype."""
    loop = np.dtype(dtype) if dtype is not None else a.dtype
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(getattr(np, name)(a.astype(loop).astype(np.float64), **kw)).astype(loop)


def _check(got, want, reference=None):
    """``got`` against NumPy's outcome ``want``: the same exception type, or the same dtype,
    shape and warnings, and the values of ``reference`` (NumPy's own by default)."""
    (value, warned), (expected, expected_warned) = got, want
    if isinstance(expected, Exception):
        assert isinstance(value, type(expected)), (value, expected)
        return
    assert not isinstance(value, Exception), value
    assert warned == expected_warned, (warned, expected_warned)
    reference = expected if reference is None else reference
    assert value.dtype == expected.dtype and value.shape == expected.shape
    assert_same(value, reference, exact=False)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
def test_nanvar_nanstd_match_numpy(name, dtype, mode):
    bound = np.sqrt(float(np.finfo(dtype).max)) / 64 if dtype.kind == "f" else None
    a = nan_slices(dtype, bound)
    for make in (la.asarray, pending):
        for axis in AXES:
            for keepdims in (False, True):
                for ddof in (0, 1, 3):
                    kw = dict(axis=axis, keepdims=keepdims, ddof=ddof)
                    want = _outcome(getattr(np, name), a, **kw)
                    got = _outcome(getattr(la, name), make(a), **kw)
                    ref = _rule_nanvar(name, a, **kw) if dtype.kind == "f" else None
                    _check(got, want, ref)


@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
@pytest.mark.parametrize("case", [
    dict(dtype=np.float32), dict(dtype=np.float16), dict(dtype="f8"), dict(ddof=0.5),
    dict(ddof=1.5, axis=1), dict(correction=1, axis=0), dict(correction=1, ddof=1),
    dict(dtype=np.int64), dict(ddof=2**70), dict(axis=2), dict(axis=(0, 0)), dict(axis=1.0)],
    ids=repr)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "bool"])
def test_keywords_match_numpy(name, case, dtype, mode):
    a = np.array([[1.5, np.nan, -2.0, 4.0], [np.nan, np.nan, np.nan, np.nan], [0.5, 3.0, 3.0, 7.25]])
    a = np.nan_to_num(a).astype(dtype) if dtype in ("int16", "bool") else a.astype(dtype)
    want = _outcome(getattr(np, name), a, **case)
    got = _outcome(getattr(la, name), la.asarray(a), **case)
    ref = None
    if a.dtype.kind == "f" and not isinstance(want[0], Exception):
        kw = {k: v for k, v in case.items() if k != "correction"}
        kw["ddof"] = case.get("correction", case.get("ddof", 0))
        ref = _rule_nanvar(name, a, **kw)
    _check(got, want, ref)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (), (1,)], ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "complex128"])
def test_empty_and_0d(shape, dtype, mode):
    a = np.full(shape, np.nan if dtype[0] in "fc" else 2, dtype)
    b = np.full(shape, 2.5, dtype) if dtype != "int32" else a
    for axis in (None, 0, 1, -1):
        for name in ("nanvar", "nanstd"):
            for data in (a, b):
                for ddof in (0, 1):
                    want = _outcome(getattr(np, name), data, axis=axis, ddof=ddof)
                    _check(_outcome(getattr(la, name), la.asarray(data), axis=axis, ddof=ddof), want)
        for returned in (False, True):
            want = _outcome(np.average, b, axis=axis, returned=returned)
            got = _outcome(la.average, la.asarray(b), axis=axis, returned=returned)
            if isinstance(want[0], tuple):
                assert got[1] == want[1]
                for g, w in zip(got[0], want[0]):
                    _check((g, []), (w, []))
            else:
                _check(got, want)


def test_keywords_lazyarr_cannot_fuse_run_numpys_own():
    a = np.array([[1.0, np.nan, 3.0, 4.5], [np.nan] * 4, [2.0, 2.0, -1.0, np.nan]])
    x = la.asarray(a)
    mask = np.array([True, False, True, True])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in ("nanvar", "nanstd"):
            fn, ref = getattr(la, name), getattr(np, name)
            np.testing.assert_array_equal(np.asarray(fn(x, axis=1, where=mask)), ref(a, axis=1, where=mask))
            mean = np.nanmean(a, axis=1, keepdims=True)
            np.testing.assert_array_equal(np.asarray(fn(x, axis=1, mean=mean)), ref(a, axis=1, mean=mean))
            out = la.zeros(3)
            assert fn(x, axis=1, out=out) is out
            np.testing.assert_array_equal(np.asarray(out), ref(a, axis=1))
            got = fn(x, axis=0, dtype=np.complex128)
            assert_same(np.asarray(got), ref(a, axis=0, dtype=np.complex128))
            z = a + 1j * a[::-1]
            assert_same(np.asarray(fn(la.asarray(z), axis=1, ddof=1)), ref(z, axis=1, ddof=1))


def test_numpy_calls_reach_the_native_forms():
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan]])
    w = np.array([1.0, 2.0, 0.5])
    x = la.asarray(a)
    for got, want in [(np.nanvar(x, axis=1), np.nanvar(a, axis=1)),
                      (np.nanstd(x, ddof=1), np.nanstd(a, ddof=1)),
                      (np.average(la.asarray(np.nan_to_num(a)), axis=1, weights=la.asarray(w)),
                       np.average(np.nan_to_num(a), axis=1, weights=w))]:
        assert isinstance(got, la.LazyArray)
        assert_same(np.asarray(got), want, exact=False)


def _weights(wdtype, shape, rng):
    w = rng.integers(0, 4, size=shape)
    w.flat[0] = 1
    return w.astype(wdtype)


def _rule_average(a, axis, w, keepdims):
    """np.average's definition with its two sums under lazyarr's accumulation rule."""
    r = np.result_type(a.dtype, w.dtype, *(("f8",) if a.dtype.kind in "biu" else ()))
    wide = np.complex128 if r.kind == "c" else np.float64
    if w.shape != a.shape:       # laid along the axes, as NumPy does
        w = w.transpose(np.argsort(axis)).reshape([n if i in axis else 1
                                                   for i, n in enumerate(a.shape)])
    ax = tuple(axis) if axis is not None else None
    with np.errstate(all="ignore"):
        scl = w.astype(r).astype(wide).sum(ax, keepdims=keepdims).astype(r)
        num = np.multiply(a, w, dtype=r).astype(wide).sum(ax, keepdims=keepdims).astype(r)
        return np.asarray(num / scl)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_average_matches_numpy(dtype, mode, rng):
    bound = np.sqrt(float(np.finfo(dtype).max)) / 64 if dtype.kind in "fc" else None
    if dtype.kind == "c":
        a = nan_slices(np.dtype(dtype.char.lower()), bound).astype(dtype)
        a.imag = a.real[:, ::-1]
    else:
        a = nan_slices(dtype, bound)
    for wdtype in sorted({dtype, np.dtype(bool), np.dtype(np.int8), np.dtype(np.float32),
                          np.dtype(np.float64)}, key=str):
        for make in (la.asarray, pending):
            for axis in AXES:
                axes = None if axis is None else np.atleast_1d(axis) % 2
                shapes = [a.shape] if axis is None else \
                    [a.shape, tuple(a.shape[i] for i in axes)]
                for wshape in shapes:
                    w = _weights(wdtype, wshape, rng)
                    for keepdims in (False, True):
                        for returned in (False, True):
                            kw = dict(axis=axis, weights=w, keepdims=keepdims, returned=returned)
                            want = _outcome(np.average, a, **kw)
                            got = _outcome(la.average, make(a), **{**kw, "weights": make(w)})
                            if isinstance(want[0], Exception):
                                _check(got, want)
                                continue
                            rule = _rule_average(a, axes, w, keepdims)
                            avg = want[0][0] if returned else want[0]
                            _check((got[0][0] if returned else got[0], got[1]), (avg, want[1]),
                                   rule)
                            if returned:
                                assert_same(got[0][1], want[0][1], exact=False)
        for axis in AXES:        # no weights: the mean
            for returned in (False, True):
                want = _outcome(np.average, a, axis=axis, returned=returned)
                got = _outcome(la.average, la.asarray(a), axis=axis, returned=returned)
                rule = lazy_reduction("mean", a, axis=axis)
                if returned:
                    _check((got[0][0], got[1]), (want[0][0], want[1]), rule)
                    assert_same(got[0][1], want[0][1])
                else:
                    _check(got, want, rule)


@pytest.mark.parametrize("case", [
    dict(weights=np.ones(4)),                                  # TypeError: axis needed
    dict(weights=np.ones(3), axis=1),                          # ValueError: shape along axis
    dict(weights=np.ones((4, 3)), axis=(0, 1)),
    dict(weights=np.ones((3, 4, 1))),
    dict(weights=np.array([1.0, -1.0, 0.0]), axis=0),          # ZeroDivisionError
    dict(weights=np.array([[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]]), axis=1),  # in one row
    dict(weights=np.zeros((3, 4), bool)),
    dict(weights=np.array([1, 1, 2, 0]), axis=2),              # AxisError
    dict(axis=(1, -1)),                                        # repeated axis
    dict(axis=1.0)], ids=repr)
def test_average_errors_are_numpys(case, mode):
    a = np.arange(12.0).reshape(3, 4)
    want = _outcome(np.average, a, **case)
    got = _outcome(la.average, la.asarray(a), **case)
    assert isinstance(want[0], Exception)
    assert type(got[0]) is type(want[0]) and str(got[0]) == str(want[0]), (got[0], want[0])


@pytest.fixture
def kernel_ops(monkeypatch):
    """The kernels lazy mode runs on the CPU: each as its program's ops (the reference
    backend's as 'reference')."""
    runs = []
    fused, ref = cpu_fused.CpuFusedBackend.run, reference.ReferenceBackend.run
    monkeypatch.setattr(cpu_fused.CpuFusedBackend, "run", lambda self, lowered: runs.append(
        [i.op for i in lowered.program.instrs]) or fused(self, lowered))
    monkeypatch.setattr(reference.ReferenceBackend, "run", lambda self, lowered: runs.append(
        "reference") or ref(self, lowered))
    record_bound_reductions(monkeypatch, lambda lowered: [i.op for i in lowered.program.instrs],
                            runs)
    with la.config(mode="lazy", device="cpu"):
        yield runs


@pytest.mark.skipif("cpu-fused" not in la.backends.available(), reason="the fused CPU backend is not built")
def test_the_reductions_are_fused(kernel_ops):
    a = np.linspace(-2, 2, 3000).reshape(30, 100)
    a[a > 1.9] = np.nan                       # (no slice all NaN)
    x = la.asarray(a)
    plan = la.explain(lambda: la.nanvar(x * 2 + 1, axis=1))
    assert len(plan.kernels) == 1 and "isnan" in str(plan) and "fallback" not in str(plan)
    # the count, the sum and the squared deviations: each reads x with the expression and the
    # NaN test fused in; then the test of the reduced counts and the final division
    got = np.asarray(la.nanvar(x * 2 + 1, axis=1, ddof=1))
    assert_same(got, np.nanvar(a * 2 + 1, axis=1, ddof=1), exact=False)
    assert len(kernel_ops) == 5 and "reference" not in kernel_ops
    assert all("isnan" in k and "multiply" in k and "sum" in k for k in kernel_ops[:3])
    assert all("input" in k and "multiply" not in k[:2] for k in kernel_ops[3:])
    kernel_ops.clear()
    la.nanstd(la.exp(x), axis=0).compute()    # an expensive expression is stored once first
    assert len(kernel_ops) == 6 and kernel_ops[0] == ["input", "exp"]
    assert not any("exp" in k for k in kernel_ops[1:])
    kernel_ops.clear()
    w = np.linspace(1, 2, 100)
    got = np.asarray(la.average(x * 2 + 1, axis=1, weights=w))
    assert_same(got, np.average(a * 2 + 1, axis=1, weights=w), exact=False)
    # the weights' sum, its zero test, the weighted sum of the expression, the division
    assert len(kernel_ops) == 4 and kernel_ops[0] == ["input", "sum"] and "reference" not in kernel_ops
    assert kernel_ops[2].count("multiply") == 2 and kernel_ops[2][-1] == "sum"
    kernel_ops.clear()
    assert_same(np.asarray(la.average(x * 2 + 1)), lazy_reduction("mean", a * 2 + 1))
    assert len(kernel_ops) == 1 and kernel_ops[0][-1] == "mean"


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA device (or LAZYARR_CUDA_SIM=1)")
def test_nanvar_and_average_on_cuda():
    """nanvar, nanstd and average are compositions of lazyarr's ops: on cuda they run through
    the same kernels and give NumPy's values."""
    a = np.array([[1.0, np.nan, -2.5, 0.5], [np.nan, np.nan, np.nan, np.nan], [1.5, 2.5, -1.5, 7.0]])
    w = np.array([1.0, 2.0, 0.5, 1.0])
    x = la.asarray(a, device="cuda")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = la.nanvar(x, axis=1, ddof=1)
    assert [str(c.message) for c in caught] == ["Degrees of freedom <= 0 for slice."]
    fine = np.nan_to_num(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cases = [(got, np.nanvar(a, axis=1, ddof=1)),
                 (la.nanstd(x[::2], axis=0), np.nanstd(a[::2], axis=0)),
                 (la.average(la.asarray(fine, device="cuda"), axis=1, weights=w),
                  np.average(fine, axis=1, weights=w))]
    for got, want in cases:
        assert got.device == "cuda"
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12, equal_nan=True)
