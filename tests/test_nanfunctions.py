"""lazyarr/_functions/_nanfunctions.py against NumPy 2: nansum/nanprod/nanmax/nanmin/nanmean,
count_nonzero and ptp on every dtype with edge values and NaN-only slices, every axis and
keepdims, computed and pending operands, both modes; NumPy's warnings and errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import DTYPES, assert_same, nan_slices, pending

import lazyarr as la


def _outcome(fn, *args, **kw):
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        try:
            value = fn(*args, **kw)
            value = np.asarray(value)
        except Exception as exc:  # noqa: BLE001 - compared below
            value = exc
    return value, sorted({str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)
                          and ("NaN" in str(w.message) or "empty slice" in str(w.message))})


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmax", "nanmin", "nanmean",
                                  "nanargmax", "nanargmin", "count_nonzero", "ptp"])
def test_matches_numpy(name, dtype, mode):
    a = nan_slices(dtype)
    if name == "nanprod" and dtype.kind in "fc":
        a = np.where(np.abs(a) > 4, 1, a).astype(dtype)     # products that stay finite
    if name in ("nansum", "nanmean") and dtype.kind in "fiu" and dtype.itemsize >= 2:
        big = np.finfo(dtype).max / 8 if dtype.kind == "f" else np.iinfo(dtype).max // 8
        a = np.where(np.abs(a.astype(np.float64)) > float(big), 1, a).astype(dtype)
    for make in (la.asarray, pending):
        for axis in (None, 0, 1, -1, (0, 1)):
            for keepdims in (False, True):
                want, want_warn = _outcome(getattr(np, name), a, axis=axis, keepdims=keepdims)
                got, got_warn = _outcome(getattr(la, name), make(a), axis=axis, keepdims=keepdims)
                if isinstance(want, Exception):
                    assert isinstance(got, type(want)), (name, axis, got)
                    continue
                assert not isinstance(got, Exception), got
                assert got_warn == want_warn, (name, axis, got_warn, want_warn)
                exact = name in ("nanmax", "nanmin", "nanargmax", "nanargmin", "count_nonzero",
                                 "ptp") or dtype.kind not in "fc"
                if name in ("nanmax", "nanmin", "ptp") and dtype.kind == "f":
                    assert got.dtype == want.dtype and got.shape == want.shape
                    np.testing.assert_array_equal(got, want)   # (zeros' signs: the min/max rule)
                else:
                    assert_same(got, want, exact=exact)


def test_numpy_calls_reach_the_native_forms_and_keywords_fall_back():
    a = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    x = la.asarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in ("nansum", "nanmax", "nanmean"):
            got = getattr(np, name)(x, axis=1)
            assert isinstance(got, la.LazyArray)
            np.testing.assert_array_equal(np.asarray(got), getattr(np, name)(a, axis=1))
        np.testing.assert_array_equal(np.asarray(la.nansum(x, where=np.array([True, False, True]))),
                                      np.nansum(a, where=np.array([True, False, True])))
        np.testing.assert_array_equal(np.asarray(la.nanmax(x, initial=5.0)), np.nanmax(a, initial=5.0))
    with pytest.raises(TypeError):
        la.ptp(la.asarray([True, False]))


def test_a_nan_reduction_of_an_expression_is_one_kernel():
    with la.config(mode="lazy", device="cpu"):
        x = la.asarray(np.linspace(-2, 2, 1000))
        plan = la.explain(lambda: la.nansum(la.log(x) * 2))
        assert len(plan.kernels) == 1 and "isnan" in str(plan) and "fallback" not in str(plan)
