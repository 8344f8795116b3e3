"""``lazyarr.backends.numpy_methods``: NumPy's mean/var/std with a ``dtype=``,
written against the array-module API (run with CuPy on the GPU). Checked here with NumPy as the
module, against NumPy's own functions, value for value."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import lazyarr as la
from lazyarr.backends import numpy_methods as M

AXES = (None, (0,), (1,), (0, 1))


# var/std of bool data into bool: NumPy raises (bool minus bool) for every axis; tested below
CASES = [(op, dt, idt) for op in ("mean", "var", "std")
         for dt in (np.int8, np.int16, np.uint64, np.int64, np.bool_, np.float32, np.float64)
         for idt in (np.int8, np.uint8, np.int64, np.bool_, np.float32)
         if op == "mean" or not (dt is idt is np.bool_)]


@pytest.mark.parametrize("op, dtype, in_dtype", CASES)
def test_matches_numpy(op, dtype, in_dtype):
    rng = np.random.default_rng(3)
    a = (rng.integers(0, 2, (4, 6)) if in_dtype is np.bool_ else rng.integers(-128, 127, (4, 6)))
    a = a.astype(in_dtype)
    checked = 0
    for axes, keepdims, ddof in itertools.product(AXES, (False, True), (0, 1)):
        if op == "mean" and ddof:
            continue
        kw = {"axis": axes if axes is None or len(axes) > 1 else axes[0], "keepdims": keepdims,
              "dtype": dtype, **({"ddof": ddof} if op != "mean" else {})}
        with np.errstate(all="ignore"):
            try:
                want = np.asarray(getattr(np, op)(a, **kw))
            except TypeError:       # std into an integer array (sqrt(out=) cannot cast), bool
                continue            # minus bool: lazyarr raises these at build (test below)
            extra = () if op == "mean" else (ddof,)
            got = np.asarray(getattr(M, op)(np, a, axes, keepdims, np.dtype(dtype), *extra))
        assert got.dtype == want.dtype and got.shape == want.shape
        if want.dtype.kind == "f":      # the same steps; CPU sums can differ in the last bit
            np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype == np.float32 else 1e-14)
        else:
            np.testing.assert_array_equal(got, want)
        checked += 1
    assert checked >= (2 if op == "std" else 4)


def test_std_into_an_integer_array_raises_at_build():
    """NumPy raises from ``sqrt(out=int array)`` only when the result is an array; lazyarr raises
    the same error when the expression is written, in both modes."""
    a = la.asarray(np.arange(24, dtype=np.int8).reshape(4, 6))
    for mode in ("eager", "lazy"):
        with la.config(mode=mode, device="cpu"):
            with pytest.raises(TypeError, match="sqrt"):
                la.std(a, axis=1, dtype=np.int16)
            assert la.std(a, dtype=np.int16).dtype == np.int16     # 0-d: converted, as NumPy
            with pytest.raises(TypeError, match="boolean subtract"):
                la.var(a > 3, dtype=bool)


@pytest.mark.parametrize("in_dtype", [np.int8, np.uint16, np.bool_, np.float32, np.float64])
@pytest.mark.parametrize("op", ["var", "std"])
def test_no_degrees_of_freedom_divides_by_zero_as_numpy(op, in_dtype):
    """``ddof >= n`` without a ``dtype=``: CuPy's var gives NaN, so on the GPU these steps
    run (``reference._reduce``); NumPy's answer is its sum of squares over 0 (inf, or NaN where
    the slice is constant), in float64 for integer data."""
    a = np.array([[0, 1, 1], [2, 2, 2]]).astype(in_dtype)
    for axes, ddof in [((1,), 3), ((1,), 4), (None, 6), ((0,), 2)]:
        with np.errstate(all="ignore"), pytest.warns(RuntimeWarning, match="Degrees of freedom"):
            want = getattr(np, op)(a, axis=axes, ddof=ddof)
        with np.errstate(all="ignore"):
            got = np.asarray(getattr(M, op)(np, a, axes, False, None, ddof))
        assert got.dtype == want.dtype and got.shape == np.shape(want), (axes, ddof)
        np.testing.assert_array_equal(got, want)
