"""The store rule for reductions (lazyarr/_build.py, docs/design.rst "Store or recompute"): a
reduction of a pending array that a variable still holds computes and keeps the array when
its expression is costly (``(y - y.mean()) / y.std()`` runs ``y``'s chain once); a cheap
expression, a temporary, and NumPy's own functions keep the fused form. Values are NumPy's
either way."""
from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la


X = np.random.default_rng(3).random(5000)


def test_a_costly_array_held_by_a_variable_is_computed_once(kernels):
    x = la.asarray(X)
    y = la.exp(la.sin(x) * 3)
    got = (y - y.mean()) / y.std()
    assert y.is_materialized                       # stored by the first reduction
    assert kernels == [5, 2, 2]                    # y (input, sin, scalar, multiply, exp), mean, std
    want_y = np.exp(np.sin(X) * 3)
    np.testing.assert_allclose(np.asarray(got), (want_y - want_y.mean()) / want_y.std(), rtol=1e-9)
    assert len(kernels) == 4                       # the final expression reads y: no recompute
    x[0] = 7.0                                      # y is y's own memory now, as in NumPy
    np.testing.assert_array_equal(np.asarray(y), want_y)


@pytest.mark.parametrize("case", ["cheap", "one transcendental", "temporary", "numpy function",
                                  "method of a temporary"])
def test_cheap_or_unheld_arrays_keep_the_fused_reduction(kernels, case):
    x = la.asarray(X)
    if case == "cheap":
        y = x * 2 + 1                               # weight 2: recomputing beats a store
        value = y.mean()
        assert not y.is_materialized
    elif case == "one transcendental":              # softmax's exp(x - max), weight 9: an
        from lazyarr import _build                  # exp again costs less than a store that
        old = _build.STORE_CACHED_BYTES             # goes to memory (arrays over 16 MiB:
        _build.STORE_CACHED_BYTES = X.nbytes - 1    # this one is made to count as one)
        try:
            y = la.exp(x - 0.5)
            value = y.mean()
        finally:
            _build.STORE_CACHED_BYTES = old
        assert not y.is_materialized
    elif case == "temporary":
        value = la.mean(la.exp(la.sin(x)))
    elif case == "numpy function":
        y = la.exp(la.sin(x))
        value = np.mean(y)                          # through __array_function__
        assert not y.is_materialized
    else:
        value = la.exp(la.sin(x)).mean()
    assert len(kernels) == 1, kernels               # one fused kernel
    want = {"cheap": (X * 2 + 1).mean(), "one transcendental": np.exp(X - 0.5).mean()}.get(
        case, np.exp(np.sin(X)).mean())
    np.testing.assert_allclose(float(value), want, rtol=1e-12)


def test_one_transcendental_op_is_stored_while_the_array_fits_the_cache(kernels):
    """Up to ``STORE_CACHED_BYTES`` the store stays in the cache between its write and its read,
    and it pays from one transcendental op (weight 8); this array is 40 KB."""
    x = la.asarray(X)
    y = la.exp(x - 0.5)
    got = y / y.sum()
    assert y.is_materialized and kernels[0] == 4     # y (input, scalar, subtract, exp), then
    np.testing.assert_allclose(np.asarray(got), np.exp(X - 0.5) / np.exp(X - 0.5).sum(),
                               rtol=1e-12)
    assert len(kernels) == 3                         # its sum, and the division reading it


def test_the_rule_follows_every_reduction_and_axis(kernels):
    x = la.asarray(X.reshape(50, 100))
    for name in ("sum", "max", "argmin", "var", "any"):
        y = la.log1p(x) * la.cos(x)
        got = getattr(la, name)(y, axis=1)
        want = getattr(np, name)(np.log1p(X.reshape(50, 100)) * np.cos(X.reshape(50, 100)), axis=1)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
        assert y.is_materialized, name


def test_eager_mode_and_explain_are_untouched():
    x = la.asarray(X)
    with la.config(mode="eager"):
        y = la.exp(x)
        np.testing.assert_allclose(float(y.mean()), np.exp(X).mean(), rtol=1e-12)
    y = la.exp(x)
    plan = la.explain(lambda: y.mean())             # an explained call computes nothing
    assert not y.is_materialized and "exp" in str(plan)
