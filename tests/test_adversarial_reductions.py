"""Regressions from an adversarial round against NumPy 2 over the reductions: each a case
where lazyarr differed from NumPy (a value, a sign of zero, a warning), pinned."""
from __future__ import annotations

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
