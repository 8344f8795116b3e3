"""lazyarr/_functions/_logic.py against NumPy 2: isclose/allclose/array_equal/array_equiv on
every dtype with edge values (NaN, ±inf, -0.0, extremes), broadcasting, Python numbers, array
tolerances, computed and pending operands, both modes; the comparison of two pending
expressions is one fused kernel."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import DTYPES, edge_values, pending

import lazyarr as la


def _same(got, want):
    if isinstance(want, (bool, np.bool_)) and not isinstance(got, la.LazyArray):
        assert type(got) is type(want) and got == want
        return
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_isclose_allclose_match_numpy(dtype, mode):
    a = edge_values(dtype)
    b = np.roll(a, 1)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x, y in ((a, a), (a, b), (a, b[:1]), (a[:1].reshape(()), b)):
            for make in (la.asarray, pending):
                for kw in ({}, {"equal_nan": True}, {"rtol": 0.5, "atol": 1}, {"rtol": 0, "atol": 0}):
                    _same(la.isclose(make(x), make(y), **kw), np.isclose(x, y, **kw))
                    _same(la.allclose(make(x), make(y), **kw), np.allclose(x, y, **kw))
                    _same(np.allclose(make(x), make(y), **kw), np.allclose(x, y, **kw))
        if dtype.kind in "fc":
            _same(la.isclose(la.asarray(a), 1.0), np.isclose(a, 1.0))
            _same(la.isclose(2, la.asarray(a)), np.isclose(2, a))
            tol = np.linspace(0, 1, len(a))
            _same(la.isclose(la.asarray(a), la.asarray(b), atol=tol), np.isclose(a, b, atol=tol))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_array_equal_and_equiv_match_numpy(dtype, mode):
    a = edge_values(dtype)
    cases = [(a, a.copy()), (a, np.roll(a, 1)), (a, a[:-1]), (a[:1], a[:1].reshape(1, 1)),
             (np.ones((2, 3), dtype), np.ones(3, dtype)), (a[:0], a[:0])]
    with np.errstate(all="ignore"):
        for x, y in cases:
            for make in (la.asarray, pending):
                for equal_nan in (False, True):
                    _same(la.array_equal(make(x), make(y), equal_nan=equal_nan),
                          np.array_equal(x, y, equal_nan=equal_nan))
                _same(la.array_equiv(make(x), make(y)), np.array_equiv(x, y))
        x = la.asarray(a)
        _same(la.array_equal(x, x, equal_nan=True), np.array_equal(a, a, equal_nan=True))
    _same(la.array_equal([1, 2], [1, 2]), np.array_equal([1, 2], [1, 2]))


def test_bad_tolerance_warns_as_numpy():
    x = la.asarray([1.0, 2.0])
    with pytest.warns(RuntimeWarning, match="rtol or atol"):
        la.isclose(x, x, atol=np.nan)
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        la.isclose(x, x, rtol=np.inf)


def test_the_comparison_is_one_fused_kernel():
    with la.config(mode="lazy", device="cpu"):
        x = la.asarray(np.random.default_rng(0).random(10_000))
        expr = lambda: la.allclose(la.sin(x) ** 2 + la.cos(x) ** 2, 1.0)  # noqa: E731
        plan = la.explain(expr)
        assert len(plan.kernels) == 1 and "fallback" not in str(plan)
        assert expr() is True
