"""Regressions from an adversarial round against NumPy 2 over dtypes, integer wrap-around and
the warnings that come with them: each a case where lazyarr differed from NumPy, pinned."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_same, pending

import lazyarr as la


# np.cross of 1-d integer vectors wraps around silently (NumPy computes it on arrays); lazyarr's
# components of 1-d vectors are 0-d, whose products are NumPy's scalars, which warned
# "overflow encountered in scalar subtract".
@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint64])
@pytest.mark.parametrize("shapes", [(3, 3), (2, 3), (3, 2), (2, 2)], ids=str)
def test_cross_of_integer_vectors_wraps_without_warning(dtype, shapes, mode):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, 3, info.max - 1][: shapes[0]], dtype)
    b = np.array([3, info.max, info.min][: shapes[1]], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)      # (2-vectors: NumPy's)
        warnings.simplefilter("error", RuntimeWarning)
        want = np.cross(a, b)
        for x in (la.asarray(a), pending(a)):
            assert_same(la.cross(x, b), want)


# round() of an array of one or more dimensions is NumPy's TypeError (ndarray has no
# __round__); lazyarr returned np.round's array. A 0-d array stands for NumPy's scalar (x[i],
# x.sum()) and rounds as it does.
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_])
def test_round_builtin_of_an_array_is_numpys_type_error(dtype, mode):
    a = np.array([2.5, 1.0, 0.0]).astype(dtype)
    for x in (la.asarray(a), pending(a)):
        for ndigits in (None, 0, 1):
            for v in (x, x[:1], x[None]):
                with pytest.raises(TypeError):
                    round(v, ndigits)
            if dtype == np.bool_:              # (NumPy's bool scalar has no __round__ either)
                with pytest.raises(TypeError):
                    round(a[0], ndigits)
                with pytest.raises(TypeError):
                    round(x[0], ndigits)
                continue
            assert round(x[0], ndigits) == round(a[0], ndigits)
            assert type(round(x[0], ndigits)) is type(round(a[0], ndigits))


# np.isclose(x, 1.0001) of float32 data subtracts and compares in float32 (1.0001 is a weak
# Python scalar in NumPy's expression, and so is the tolerance atol + rtol * 1.0001); lazyarr
# zeroed the equal elements with a `where`, which made the scalar a float64 array and the
# comparison float64's: True for 1.00009 where NumPy says False.
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.complex64])
def test_isclose_to_a_python_number_compares_in_numpys_dtype(dtype, mode):
    rng = np.random.default_rng(0)
    for y in (0.1, 1.0001, 1e-3, 65504.0, 7e4, 3, 2**63, 1 + 1e-4j, np.inf, np.nan):
        if np.isfinite(abs(y)):
            a = abs(y) * (1 + rng.standard_normal(64) * 1e-4)
        else:
            a = np.array([1.0, np.inf, -np.inf, np.nan])
        with np.errstate(all="ignore"):     # (the data: inf into int8, 7e4 into float16)
            a = (np.round(a % 100) if dtype == np.int8 else a).astype(dtype)
        for rtol, atol, equal_nan in ((1e-5, 1e-8, False), (1e-3, 0.0, True), (0.0, 1e-3, False)):
            with np.errstate(all="ignore"):
                want = np.isclose(a, y, rtol=rtol, atol=atol, equal_nan=equal_nan)
                want_swapped = np.isclose(y, a, rtol=rtol, atol=atol, equal_nan=equal_nan)
                for x in (la.asarray(a), pending(a)):
                    got = la.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)
                    assert_same(got, want)
                    assert_same(la.isclose(y, x, rtol=rtol, atol=atol, equal_nan=equal_nan),
                                want_swapped)


# An integer power meeting a negative exponent in an array: NumPy's loop raises ValueError.
# The cuda kernels gave 0 (2 ** -1 in C) and CuPy's eager power does too: such programs run
# on the host there (backends/cuda/backend.py negative_exponent_possible), and eager mode
# tests the exponent on the device first (reference._negative_integer_exponent).
_POWER_CASES = [
    (np.int64, [2, 3], np.int64, [-1, 2], True),
    (np.int64, [1, -1], np.int8, [-3, -2], True),
    (np.int8, [2, 3], np.int8, [1, 2], False),
    (np.uint8, [2, 3], np.int8, [1, 2], False),
    (np.int16, [2, 3], np.uint8, [1, 2], False),
    (np.int32, [], np.int32, [], False),
]


def _power_cases(device):
    for bdt, b, edt, e, raises in _POWER_CASES:
        yield (la.asarray(np.asarray(b, bdt), device=device), la.asarray(np.asarray(e, edt), device=device),
               np.asarray(b, bdt), np.asarray(e, edt), raises)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=[
    pytest.mark.gpu,
    pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")])])
@pytest.mark.parametrize("mode", ["lazy", "eager"])
def test_integer_power_of_a_negative_array_exponent_raises(device, mode):
    with la.config(mode=mode):
        _check_integer_powers(device)


def _check_integer_powers(device):
    for x, y, nx, ny, raises in _power_cases(device):
        if raises:
            with pytest.raises(ValueError, match="negative integer powers"):
                nx ** ny
            with pytest.raises(ValueError, match="negative integer powers"):
                (x ** y).compute()
            with pytest.raises(ValueError, match="negative integer powers"):
                float(la.sum(x ** (y + 0)))     # the exponent pending: inside the fused kernel
        else:
            assert_same(x ** y, nx ** ny)
            assert_same((x + 1) ** (y + 1), (nx + 1) ** (ny + 1))


# A Python number that overflows the loop's float dtype (1e40 with float32, 70000 with
# float16, either part of a complex with complex64): NumPy converts it before the loop and
# reports "overflow encountered in cast" under np.errstate, at each call, even for an empty
# array; lazyarr converted it silently (scalar_to_dtype, memoized in _operands.scalar_node).
def _f(dt=np.float32, n=2):
    return np.arange(1, n + 1).astype(dt)


_OVERFLOWING_SCALARS = [
    lambda m, a: a * 1e40,
    lambda m, a: 1e40 - a,
    lambda m, a: a < -1e300,
    lambda m, a: m.maximum(a, 2**200),
    lambda m, a: m.clip(a, 0, 1e40),
    lambda m, a: a.astype(np.float16) + 70000,
    lambda m, a: m.add(a.astype(np.float16), 1e5, signature=(np.float16,) * 3),
    lambda m, a: a.astype(np.complex64) + complex(np.inf, 1e40),
    lambda m, a: a[:0] * 1e40,
]
_FITTING_SCALARS = [
    lambda m, a: a + np.inf,
    lambda m, a: a + 3.4028235e38,       # float32's max: no overflow
    lambda m, a: m.add(a.astype(np.float16), 1e5, dtype=np.float32),
    lambda m, a: a.astype(np.float64) * 1e300,
]


def _check_overflowing_scalars(device):
    for i, fn in enumerate(_OVERFLOWING_SCALARS + _FITTING_SCALARS):
        want = _outcome_with_warnings(lambda: fn(np, _f()))
        for x in (la.asarray(_f(), device=device), pending(_f()).to_device(device)):
            for _ in range(2):      # (each call reports: the converted constant is memoized)
                assert _outcome_with_warnings(lambda: fn(la, x)) == want, i
        with np.errstate(over="raise"):
            if i < len(_OVERFLOWING_SCALARS):
                with pytest.raises(FloatingPointError, match="overflow encountered in cast"):
                    fn(la, la.asarray(_f(), device=device))


def _outcome_with_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = fn()
        values = np.asarray(r.to_device("cpu") if isinstance(r, la.LazyArray) else r)
    return repr(values.tolist()), values.dtype, [str(w.message) for w in caught]


def test_python_number_overflowing_the_loop_dtype_warns(mode):
    _check_overflowing_scalars("cpu")


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
@pytest.mark.parametrize("mode", ["lazy", "eager"])
def test_python_number_overflowing_the_loop_dtype_warns_on_cuda(mode):
    with la.config(mode=mode):
        _check_overflowing_scalars("cuda")


# A complex cast to a narrower float (complex64 -> float16, complex128 -> float32) whose real
# part overflows: NumPy's cast reports "overflow encountered in cast" (with its ComplexWarning).
# The cuda kernels checked float -> float and complex -> complex narrowing only
# (backends/cuda/fp_checks._cast_can_raise), so the lazy cuda cast said nothing.
_COMPLEX_VALUES = [complex(1e5, 1), complex(np.inf, 1), complex(1, 1e300), complex(np.nan, 0),
                   complex(-1e300, 0), 2 + 3j]


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
@pytest.mark.parametrize("mode", ["lazy", "eager"])
def test_complex_to_narrower_float_cast_overflow_warns_on_cuda(mode):
    for src in (np.complex64, np.complex128):
        for dst in (np.float16, np.float32, np.float64):
            a = np.asarray(_COMPLEX_VALUES, src)
            values, dtype, messages = _outcome_with_warnings(lambda: (a * 1).astype(dst))
            with la.config(mode=mode):
                x = la.asarray(a, device="cuda")
                got = _outcome_with_warnings(lambda: (x * 1).astype(dst))
            # (in lazy mode the cast's ComplexWarning comes at its line, before the kernel's)
            assert got[:2] == (values, dtype) and sorted(got[2]) == sorted(messages), (src, dst)


# Complex <, <=, >, >= compare with C's signalling "<": NumPy's loop reports "invalid value
# encountered in less" where it compares a NaN (a NaN real part, or a NaN imaginary part where
# the real parts are equal). The cuda kernels derived no flag for a comparison.
_NAN = np.nan
_CMP_X = [complex(_NAN, 0), 1 + 1j, complex(0, _NAN), complex(np.inf, 0), 1 + 1j, complex(1, _NAN),
          2 + 0j, complex(1, _NAN)]
_CMP_Y = [0j, complex(_NAN, 1), 1j, complex(np.inf, 1), complex(1, _NAN), 2 + 0j, complex(1, _NAN),
          complex(1, _NAN)]


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
@pytest.mark.parametrize("mode", ["lazy", "eager"])
@pytest.mark.parametrize("op", ["less", "less_equal", "greater", "greater_equal", "equal"])
def test_complex_comparison_with_nan_is_invalid_on_cuda(op, mode):
    fn = getattr(np, op)
    for dtype in (np.complex64, np.complex128):
        for i in range(len(_CMP_X)):
            a, b = np.asarray(_CMP_X[i:i + 1], dtype), np.asarray(_CMP_Y[i:i + 1], dtype)
            want = _outcome_with_warnings(lambda: fn(a * 1, b))
            with la.config(mode=mode):
                x, y = la.asarray(a, device="cuda"), la.asarray(b, device="cuda")
                assert _outcome_with_warnings(lambda: getattr(la, op)(x * 1, y)) == want, (i, dtype)


# Complex add, subtract, divide and reciprocal on cuda: NumPy's loops raise invalid where one
# of their IEEE steps on the parts does (-inf + (inf+nanj) in the real part; Smith's division
# compares |br| >= |bi|, signalling on a NaN, then inf * 0 ...), and its division overflows
# computing 1 / (br + bi * rat) for a subnormal divisor. The kernels' rule on the parts ("a NaN
# from operands without NaN") missed those (fp_checks._complex_invalid). Multiply stays on that
# rule: NumPy's own flags there differ between its SIMD and strided loops.
_INF = np.inf
_COMPLEX_EDGES = [0j, 2 + 3j, complex(_INF, 0), complex(-_INF, _INF), complex(0, _NAN),
                  complex(_INF, _NAN), complex(1e-310, 1e-310), complex(-_INF, 0)]


def _complex_outcome(fn):
    """Values (NaN and inf where NumPy's are, finite values within a few ulps: cuda's
    division) and the RuntimeWarnings' kinds."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = fn()
        r = np.asarray(r.to_device("cpu") if isinstance(r, la.LazyArray) else r)
    kinds = sorted({str(w.message).split(" encountered")[0] for w in caught
                    if w.category is RuntimeWarning})
    return r, kinds


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
@pytest.mark.parametrize("op", ["add", "subtract", "divide", "reciprocal"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_arithmetic_flags_on_cuda(op, dtype):
    values = np.asarray(_COMPLEX_EDGES, dtype)
    pairs = [(v,) for v in values] if op == "reciprocal" else \
        [(v, u) for v in values for u in values]
    fn = getattr(np, op)
    for args in pairs:
        arrays = [np.asarray([v]) for v in args]
        want, want_kinds = _complex_outcome(lambda: fn(*arrays))
        x = [la.asarray(a, device="cuda") for a in arrays]
        first = la.where(la.asarray([True], device="cuda"), x[0], x[0])   # (pending: fused)
        got, got_kinds = _complex_outcome(lambda: getattr(la, op)(first, *x[1:]))
        assert got_kinds == want_kinds, args
        for g, w in ((got.real, want.real), (got.imag, want.imag)):
            assert np.array_equal(np.isnan(g), np.isnan(w)) and np.array_equal(np.isinf(g), np.isinf(w)), args
            finite = np.isfinite(w)
            np.testing.assert_allclose(g[finite], w[finite], rtol=1e-5 if dtype == np.complex64 else 1e-12)


# Complex exp of a NaN part: NumPy's (glibc's cexp) raises invalid for a finite real part with
# a NaN imaginary part, and for a NaN real part with an imaginary part neither 0 nor NaN; the
# kernels' rule ("a NaN from operands without NaN") said nothing there.
_EXP_VALUES = [complex(0, _NAN), complex(1, _NAN), complex(_NAN, 0), complex(_NAN, 1),
               complex(_NAN, _NAN), complex(_NAN, _INF), complex(_INF, _NAN), complex(-_INF, _NAN),
               complex(1, _INF), complex(_INF, _INF), 1 + 2j]


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_exp_of_nan_parts_flags_on_cuda(dtype):
    for v in _EXP_VALUES:
        a = np.asarray([v], dtype)
        want, want_kinds = _complex_outcome(lambda: np.exp(a))
        x = la.asarray(a, device="cuda")
        got, got_kinds = _complex_outcome(
            lambda: la.exp(la.where(la.asarray([True], device="cuda"), x, x)))
        assert got_kinds == want_kinds, v
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.complex64 else 1e-12)


# var/std of slices of 1 to ddof elements: NumPy warns "Degrees of freedom <= 0" and then
# divides each sum of squared deviations by zero, which warns again ("divide by zero" where a
# sum is positive, "invalid value" where it is 0; "scalar divide" for a 0-d result). lazyarr
# gave the first warning only.
_NO_DOF_CASES = [
    (np.array(2.5), {"ddof": 1}),
    (np.array([2.5]), {"ddof": 2}),
    (np.array([[1., 2.]]), {"ddof": 2}),                   # a positive sum: inf
    (np.array([[1., 2.]]), {"axis": 0, "ddof": 1}),        # sums of 0: NaN
    (np.array([[1., 2.], [3., 3.]], np.float32), {"axis": 1, "ddof": 2, "keepdims": True}),
    (np.array([[np.nan, 1.]]), {"axis": 0, "ddof": 1}),    # a NaN sum divides quietly
    (np.array([[np.nan, 1.]]), {"axis": 1, "ddof": 5}),
    (np.array([[5., 0.]], np.float16), {"axis": 0, "ddof": 1}),
    (np.array([1 + 2j, 3 - 1j]), {"ddof": 2}),
]


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=[
    pytest.mark.gpu,
    pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")])])
@pytest.mark.parametrize("mode", ["lazy", "eager"])
@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("case", range(len(_NO_DOF_CASES)))
def test_var_without_degrees_of_freedom_warns_as_numpy_divides(case, op, device, mode):
    with la.config(mode=mode):
        _check_no_dof(*_NO_DOF_CASES[case], op, device, mode)


def _check_no_dof(a, kw, op, device, mode):
    with warnings.catch_warnings(record=True) as want_warned:
        warnings.simplefilter("always")
        want = getattr(np, op)(a, **kw)
    x = la.asarray(a, device=device)
    with la.config(eager_max_size=0):
        held = la.where(la.asarray(np.ones(a.shape, bool), device=device), x, x)
    for x in (x, held):
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            got = getattr(la, op)(x, **kw).to_numpy()
        assert_same(got, np.asarray(want))
        if device == "cuda" and mode == "eager":
            continue                   # (CuPy op by op reports none: docs/not-supported.rst)
        assert [str(w.message) for w in warned] == [str(w.message) for w in want_warned]
        # (at the user's line; eager mode's "Degrees of freedom" is NumPy's own, which names
        # numpy/_core/fromnumeric.py as NumPy does)
        assert all(w.filename == __file__ for w in warned
                   if mode == "lazy" or "encountered" in str(w.message))
