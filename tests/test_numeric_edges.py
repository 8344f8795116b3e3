"""Numeric edge semantics as NumPy (issue 6), on every CPU target, bit for bit: integer
overflow wraps, integer division by zero, float division by zero and invalid operations give
inf/NaN, NaN in min/max/argmin/argmax, -0.0, subnormals (no flush to zero).

And where NumPy's RuntimeWarnings are (not) raised, as docs/testing.rst states: eager mode
warns as NumPy at the line that runs; lazy mode on the reference backend warns when the
expression is materialized; the fused backends never warn.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import strategies as S

import lazyarr as la

TARGETS = [t for t in S.targets() if t != "lazy-cuda"]
F32 = np.finfo(np.float32)
F64 = np.finfo(np.float64)

CASES = {
    # name: (input array, function of (module, x)) -- the same code runs on NumPy and lazyarr
    "int8-overflow-wraps": (np.array([127, -128, 100], np.int8), lambda m, x: x + np.int8(1)),
    "int8-mul-wraps": (np.array([64, -128, 16], np.int8), lambda m, x: x * 4),
    "uint8-underflow-wraps": (np.array([0, 1, 255], np.uint8), lambda m, x: x - np.uint8(2)),
    "int64-overflow-wraps": (np.array([2**63 - 1, -2**63], np.int64), lambda m, x: x + 1),
    "int-floordiv-by-zero": (np.array([7, -7, 0], np.int32), lambda m, x: x // 0),
    "int-mod-by-zero": (np.array([7, -7, 0], np.int32), lambda m, x: x % 0),
    "int-min-floordiv-minus-one": (np.array([-2**31, 5], np.int32), lambda m, x: x // -1),
    "int-floordiv-signs": (np.array([7, -7, 7, -7], np.int16), lambda m, x: x // m.asarray(
        np.array([2, 2, -2, -2], np.int16))),
    "int-mod-signs": (np.array([7, -7, 7, -7], np.int16), lambda m, x: x % m.asarray(
        np.array([2, 2, -2, -2], np.int16))),
    "float-div-by-zero": (np.array([1.0, -1.0, 0.0, np.nan]), lambda m, x: x / 0.0),
    "float-div-by-minus-zero": (np.array([1.0, -1.0], np.float32), lambda m, x: x / -0.0),
    "invalid-ops": (np.array([-1.0, np.inf, -np.inf, 0.0]),
                    lambda m, x: m.sqrt(x) + m.log(x) * 0 + m.arcsin(x * 2)),
    "inf-minus-inf": (np.array([np.inf, -np.inf], np.float32), lambda m, x: x + x[::-1]
                      if m is np else x + m.asarray(np.array([-np.inf, np.inf], np.float32))),
    "float16-overflow": (np.array([60000, -60000, 1], np.float16), lambda m, x: x * 2),
    "float-floordiv-mod-zero": (np.array([1.0, -1.0, 0.0]), lambda m, x: (x // 0.0) + (x % 0.0)),
    "minus-zero-kept": (np.array([-0.0, 0.0], np.float32), lambda m, x: x * 1.0),
    "minus-zero-ops": (np.array([-0.0, 0.0]), lambda m, x: m.maximum(x, 0.0) + m.minimum(x, -0.0)
                       * 1 + m.sign(x) + m.sqrt(x) + m.rint(x * 0.4) + m.trunc(-x)),
    "nan-propagates-maximum": (np.array([np.nan, 1.0, 2.0]), lambda m, x: m.maximum(x, 1.5)),
    "nan-ignored-fmax": (np.array([np.nan, 1.0, 2.0]), lambda m, x: m.fmax(x, 1.5) + m.fmin(x, 1.5)),
    "subnormals-kept": (np.array([F32.smallest_subnormal, F32.tiny / 4, -F32.tiny / 2], np.float32),
                        lambda m, x: x * 1.5 + np.float32(F32.smallest_subnormal)),
    "subnormal-float64": (np.array([F64.smallest_subnormal, F64.tiny / 2]),
                          lambda m, x: (x + x) * 0.5),
    "subnormal-division": (np.array([F32.tiny], np.float32), lambda m, x: x / 4),
    "float-to-float16-rounding": (np.array([65519.0, 65520.0, 1e-8, 6e-8, 2049.0]),
                                  lambda m, x: x.astype(np.float16)),
    "int-to-float32-rounding": (np.array([2**24 + 1, -(2**31) + 1], np.int64),
                                lambda m, x: x.astype(np.float32)),
    "bool-arithmetic": (np.array([True, False]), lambda m, x: (x + x) * 3),
}

REDUCTION_CASES = {
    "min-nan": (np.array([1.0, np.nan, -1.0]), "min"),
    "max-nan": (np.array([1.0, np.nan, 5.0], np.float32), "max"),
    "argmin-nan-first": (np.array([1.0, np.nan, -1.0, np.nan]), "argmin"),
    "argmax-nan-first": (np.array([1.0, 3.0, np.nan]), "argmax"),
    "argmin-ties-first": (np.array([2, 1, 1, 0, 0], np.int8), "argmin"),
    "min-minus-zero": (np.array([0.0, -0.0]), "min"),
    "sum-int8-to-int64": (np.full(300, 100, np.int8), "sum"),
    "sum-uint64-wraps": (np.array([2**64 - 1, 2], np.uint64), "sum"),
    "prod-int-wraps": (np.array([2**40, 2**40], np.int64), "prod"),
    "sum-inf-minus-inf": (np.array([np.inf, -np.inf]), "sum"),
    "sum-empty": (np.zeros(0, np.int16), "sum"),
    "prod-empty": (np.zeros(0, np.float32), "prod"),
    "any-empty": (np.zeros(0, bool), "any"),
    "all-empty": (np.zeros(0, bool), "all"),
    "mean-empty": (np.zeros(0), "mean"),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", list(CASES))
def test_elementwise_edges(case, target):
    a, fn = CASES[case]
    with np.errstate(all="ignore"):
        want = np.asarray(fn(np, a))
    with S.target(target), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = np.asarray(fn(la, la.asarray(a)))
    assert S.mismatch(got, want) is None, S.mismatch(got, want)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", list(REDUCTION_CASES))
def test_reduction_edges(case, target, request):
    a, op = REDUCTION_CASES[case]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.asarray(getattr(np, op)(a))
        with S.target(target):
            got = np.asarray(getattr(la, op)(la.asarray(a)))
    assert S.mismatch(got, want) is None, S.mismatch(got, want)


# ------------------------------------------------------------------------------ warnings
def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_eager_mode_warns_as_numpy_at_the_line():
    a = np.array([1.0, 2.0])
    with la.config(mode="eager", device="cpu"):
        x = la.asarray(a)
        _, ws = _warnings_of(lambda: x / 0.0)
        assert len(ws) == 1 and "divide by zero" in str(ws[0].message)
        _, ws = _warnings_of(lambda: la.log(-x))
        assert len(ws) == 1 and "invalid value" in str(ws[0].message)


def test_lazy_reference_warns_when_materialized_not_when_built():
    from lazyarr import backends

    x = la.asarray(np.array([1.0, 2.0]), device="cpu")
    with la.config(mode="lazy", device="cpu"), backends.use_backend("reference"):
        y, ws = _warnings_of(lambda: x / 0.0)
        assert ws == [] and not y.is_materialized
        _, ws = _warnings_of(lambda: y.compute())
        assert len(ws) == 1 and "divide by zero" in str(ws[0].message)


@pytest.mark.parametrize("backend", [b for b in ("cpu-fused",) if f"lazy-{b}" in TARGETS])
def test_fused_backends_warn_as_numpy(backend):
    """The fused CPU kernel reports the floating-point exceptions each op raised, as NumPy's
    ufuncs do (tests/test_fp_errors.py has the cases); the values are NumPy's."""
    from lazyarr import backends

    x = la.asarray(np.array([1.0, 0.0, -1.0]), device="cpu")
    a = np.asarray(x)
    with la.config(mode="lazy", device="cpu"), backends.use_backend(backend):
        got, ws = _warnings_of(lambda: np.asarray(la.log(x) / 0.0 + x.astype(np.int32) // 0))
    want, wants = _warnings_of(lambda: np.log(a) / 0.0 + a.astype(np.int32) // 0)
    assert sorted({str(w.message) for w in ws}) == sorted({str(w.message) for w in wants})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["lazy", "eager"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int64", "float16", "float32",
                                   "float64", "complex64", "complex128"])
def test_the_power_operator_takes_numpys_fast_paths(dtype, mode):
    """``a ** 2``, ``a ** -1``, ``a ** 0.5`` are NumPy's ``square``/``reciprocal``/``sqrt`` for
    float and complex ``a`` (``** 2`` of bool too), ``x **= e`` the same in place, with NumPy's
    errors (``bool **= -1``: the output cast fails first), values, dtypes and signed zeros;
    other exponents stay ``power`` (issue 13: the fast ops are 2-4x faster on the CPU)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=300) * 10
    x = x > 0 if dtype == "bool" else x.astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[:6] = [-0.0, 0.0, np.inf, -np.inf, np.nan, np.finfo(dtype).tiny / 4]

    def run(lib, e, inplace):
        a = x.copy() if lib == "numpy" else la.asarray(x.copy())
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if inplace:
                    a **= e
                    return np.asarray(a)
                return np.asarray(a ** e)
            except Exception as exc:  # noqa: BLE001 - compared with NumPy's
                return exc

    with la.config(mode=mode):
        for e in (2, -1, 0.5, 2.0, -1.0, 3, True):
            for inplace in (False, True):
                want, got = run("numpy", e, inplace), run("lazyarr", e, inplace)
                if isinstance(want, Exception) or isinstance(got, Exception):
                    assert type(got) is type(want), (e, inplace, got, want)
                    continue
                assert got.dtype == want.dtype, (e, inplace)
                assert np.array_equal(got, want, equal_nan=True), (e, inplace)
                assert np.array_equal(np.signbit(got.real), np.signbit(want.real)), (e, inplace)
    if np.dtype(dtype).kind in "fc":
        ops = la.explain(la.asarray(x) ** 0.5 + la.asarray(x) ** -1 + la.asarray(x) ** 2).program.ops()
        assert {"sqrt", "reciprocal", "square"} <= set(ops) and "power" not in ops
