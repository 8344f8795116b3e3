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
