"""Regressions from an adversarial round against NumPy 2 over the reductions: each a case
where lazyarr differed from NumPy (a value, a sign of zero, a warning), pinned."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_same

import lazyarr as la


# Eager mode is NumPy's call bit for bit, signed zeros included (docs/testing.rst): nanmax and
# nanmin are NumPy's fmax/fmin.reduce, whose zero result is not max/min's of the NaN-replaced
# values (np.nanmax([0.0, -0.0]) is 0.0 where np.max gives -0.0). Eager gave max's zero.
@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_eager_nanmax_nanmin_keep_numpys_signed_zero(name, dtype):
    rows = [[0.0, -0.0], [-0.0, 0.0], [0.0, -0.0, np.nan], [np.nan, -0.0, 0.0], [1.0, -0.0, 0.0],
            [-1.0, 0.0, -0.0]]
    with la.config(mode="eager", device="cpu"):
        for row in rows:
            a = np.array(row, dtype)
            assert_same(getattr(la, name)(la.asarray(a)), getattr(np, name)(a))
        a = np.array([[0.0, -0.0], [-0.0, 0.0], [np.nan, -0.0]], dtype)
        for axis in (0, 1, None):
            assert_same(getattr(la, name)(la.asarray(a), axis=axis, keepdims=True),
                        getattr(np, name)(a, axis=axis, keepdims=True))


# percentile/quantile of empty data: NumPy's IndexError ("index 0 is out of bounds") for any
# dtype, where a full reduction meets no element; lazyarr checked the dtype first on one
# element of its own, which for bool data raised NumPy's TypeError (boolean subtract).
@pytest.mark.parametrize("name, q", [("percentile", 30), ("quantile", [0.1, 0.9]),
                                     ("nanpercentile", 30), ("median", None)])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float32])
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 2)], ids=str)
def test_quantiles_of_empty_data_are_numpys(name, q, dtype, shape, mode):
    a = np.zeros(shape, dtype)
    args = () if q is None else (q,)
    for axis in (None, 0, -1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # (NumPy's empty-slice warnings)
            try:
                want = getattr(np, name)(a, *args, axis=axis)
            except Exception as e:     # (NumPy's exception type is what is compared)
                with pytest.raises(type(e)):
                    getattr(la, name)(la.asarray(a), *args, axis=axis)
            else:
                assert_same(getattr(la, name)(la.asarray(a), *args, axis=axis), want)
