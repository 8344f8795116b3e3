"""A sum of a broadcast product as one matrix product (lazyarr/_contract.py): where the rule
applies, the values are the exact sum rounded once (float32) or BLAS's dgemm (float64), NumPy's
to rounding, and ``la.explain`` lists the call; where it does not, the fused kernel runs as
before; NumPy's warnings and errors are NumPy's either way."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _contract

FLOATS = [np.float32, np.float64]


def _exact(a: np.ndarray, b: np.ndarray, axis, keepdims=False) -> np.ndarray:
    """The sum of the products in long double: the reference the rounded-once sum meets."""
    return np.sum(a.astype(np.longdouble) * b.astype(np.longdouble), axis=axis, keepdims=keepdims)


def _check(got, a, b, axis, keepdims=False):
    want = np.sum(a * b, axis=axis, keepdims=keepdims)          # NumPy's
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    exact = _exact(a, b, axis, keepdims)
    scale = np.sum(np.abs(a.astype(np.float64) * b), axis=axis, keepdims=keepdims)
    # one rounding of an accurate sum: within the result dtype's spacing (plus float64's
    # error over the terms' magnitudes, for sums that cancel)
    tol = np.spacing(np.abs(exact).astype(got.dtype)).astype(np.float64) + 1e-13 * scale
    assert np.all(np.abs(got.astype(np.longdouble) - exact) <= tol)
    np.testing.assert_allclose(got, want, rtol=1e-4 if got.dtype == np.float32 else 1e-12,
                               atol=1e-4 * float(scale.max(initial=0)))


def _contracted(got) -> bool:
    return any(step.name == "matmul" for step in la.explain(got).library_calls)


@pytest.mark.parametrize("dtype", FLOATS)
def test_a_convolution_window_times_the_weights(dtype):
    """NPBench's conv2d statement: a window of the image times the weights, summed over three
    axes (M: the batch, N: the output channels, K: 10 x 10 x 3)."""
    rng = np.random.default_rng(1)
    image = rng.standard_normal((8, 24, 24, 3)).astype(dtype)
    weights = rng.standard_normal((10, 10, 3, 8)).astype(dtype)
    li, lw = la.asarray(image), la.asarray(weights)
    for i, j in [(0, 0), (5, 9), (14, 14)]:
        got = la.sum(li[:, i:i + 10, j:j + 10, :, None] * lw[None, :, :, :], axis=(1, 2, 3))
        assert _contracted(got)
        _check(got, image[:, i:i + 10, j:j + 10, :, None], weights[None], (1, 2, 3))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", ["matmul", "keepdims", "negative axis", "transposed",
                                  "reversed", "method", "numpy function", "M and N interleaved",
                                  "mixed dtypes", "a stack"])
def test_broadcast_products_summed(dtype, case):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((37, 50)).astype(dtype)
    b = rng.standard_normal((50, 29)).astype(dtype)
    la_a, la_b = la.asarray(a), la.asarray(b)
    keepdims, axis = False, 1
    x, y, lx, ly = a[:, :, None], b[None], la_a[:, :, None], la_b[None]
    if case == "keepdims":
        keepdims = True
    elif case == "negative axis":
        axis = -2
    elif case == "transposed":          # B^T A^T through views, a (29, 37) result
        x, y, lx, ly = b.T[:, :, None], a.T[None], la_b.T[:, :, None], la_a.T[None]
    elif case == "reversed":            # negative strides
        x, y = a[::-1, ::-1][:, :, None], b[::-1][None]
        lx, ly = la_a[::-1, ::-1][:, :, None], la_b[::-1][None]
    elif case == "M and N interleaved":  # (M0, N, K, M1): kept axes of both sides alternate
        c = rng.standard_normal((6, 50, 5)).astype(dtype)
        x, y = c[:, None, :, :], b.T[None, :, :, None]
        lx, ly = la.asarray(c)[:, None, :, :], la_b.T[None, :, :, None]
        axis = 2
    elif case == "a stack":             # (3, M, K, 1) * (3, 1, K, N): a batch axis kept on both
        c = rng.standard_normal((3, 37, 50)).astype(dtype)
        d = rng.standard_normal((3, 50, 29)).astype(dtype)
        x, y = c[:, :, :, None], d[:, None]
        lx, ly = la.asarray(c)[:, :, :, None], la.asarray(d)[:, None]
        axis = 2
    elif case == "mixed dtypes":        # the float32 factor cast to float64 first, as NumPy's
        y, ly = b.astype(np.float64)[None], la.asarray(b.astype(np.float64))[None]
    if case == "method":
        got = (lx * ly).sum(axis=axis, keepdims=keepdims)
    elif case == "numpy function":
        got = np.sum(lx * ly, axis=axis, keepdims=keepdims)
    else:
        got = la.sum(lx * ly, axis=axis, keepdims=keepdims)
    assert _contracted(got)
    _check(got, x, y, axis, keepdims)


@pytest.mark.parametrize("dtype", FLOATS)
def test_pending_factors_are_computed_once_and_contracted(dtype):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 30)).astype(dtype)
    b = rng.standard_normal((30, 20)).astype(dtype)
    la_a, la_b = la.asarray(a), la.asarray(b)
    got = la.sum((la_a * 2 + 1)[:, :, None] * la.sqrt(la.abs(la_b))[None], axis=1)
    assert _contracted(got)
    _check(got, (a * dtype(2) + dtype(1))[:, :, None], np.sqrt(np.abs(b))[None], 1)


@pytest.mark.parametrize("case", ["a batched dot", "an empty stack", "one side sums", "narrow side", "small",
                                  "integers", "dtype argument", "all axes",
                                  "a scalar factor", "complex"])
def test_where_the_rule_does_not_apply_the_kernel_runs(case):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((16, 50)).astype(np.float32)
    b = rng.standard_normal((50, 16)).astype(np.float32)
    x, y, kw = a[:, :, None], b[None], {"axis": 1}
    if case == "a batched dot":         # batch axes only, no M or N: the kernel's work
        x, y = rng.standard_normal((8, 16, 50)), rng.standard_normal((8, 16, 50))
        kw = {"axis": 2}
    elif case == "an empty stack":      # (0, M, K) @ (0, K, N): nothing to multiply
        x, y = np.ones((0, 16, 50, 1), np.float32), np.ones((0, 1, 50, 16), np.float32)
        kw = {"axis": 2}
    elif case == "one side sums":       # axis 0 is summed but only x has it
        kw = {"axis": (0, 1)}
    elif case == "narrow side":
        y = b[None, :, :_contract.MIN_SIDE - 1]
    elif case == "small":
        x, y = a[:4, :8, None], b[None, :8, :4]
    elif case == "integers":
        x, y = (a * 100).astype(np.int64)[:, :, None], (b * 100).astype(np.int64)[None]
    elif case == "dtype argument":
        kw = {"axis": 1, "dtype": np.float64}
    elif case == "all axes":
        kw = {"axis": None}
    elif case == "a scalar factor":
        y = np.float32(3.0)
    elif case == "complex":
        x, y = x.astype(np.complex64), y.astype(np.complex64)
    got = la.sum(la.asarray(x) * la.asarray(y), **kw)
    assert not _contracted(got)
    want = np.sum(x * y, **kw)
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-3)


def test_eager_mode_is_numpys_sum():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((16, 50)), rng.standard_normal((50, 16))
    with la.config(mode="eager"):
        got = la.sum(la.asarray(a)[:, :, None] * la.asarray(b)[None], axis=1)
    np.testing.assert_array_equal(np.asarray(got), np.sum(a[:, :, None] * b[None], axis=1))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("edge", ["nan", "inf", "overflow"])
def test_non_finite_and_overflowing_factors_give_numpys_values_and_warnings(dtype, edge):
    """NaN, inf or products past the dtype's range: the fused kernel runs (the bound says
    so), with NumPy's values and NumPy's warnings."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((16, 50)).astype(dtype)
    b = rng.standard_normal((50, 16)).astype(dtype)
    if edge == "nan":
        a[3, 7] = np.nan
    elif edge == "inf":
        a[3, 7], b[7, 0] = np.inf, 0       # inf * 0: NaN, "invalid value"
    else:
        a[3, 7] = b[7, 2] = np.finfo(dtype).max / 4
    with warnings.catch_warnings(record=True) as seen_numpy:
        warnings.simplefilter("always")
        want = np.sum(a[:, :, None] * b[None], axis=1)
    with warnings.catch_warnings(record=True) as seen_lazy:
        warnings.simplefilter("always")
        lazy = la.sum(la.asarray(a)[:, :, None] * la.asarray(b)[None], axis=1)
        got = np.asarray(lazy)
    assert not _contracted(lazy)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    with np.errstate(invalid="ignore", over="ignore"):
        scale = np.sum(np.abs(a.astype(np.float64)[:, :, None] * b[None]), axis=1)
    assert np.all(np.abs(got[fin].astype(np.float64) - want[fin]) <= 1e-5 * scale[fin])
    assert sorted(str(w.message) for w in seen_lazy) == sorted(str(w.message) for w in seen_numpy)


def test_errstate_raise_on_overflow_is_numpys():
    a = np.ones((16, 50), np.float32)
    a[0, 0] = 1e30
    b = np.full((50, 16), 1e30, np.float32)
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            np.sum(a[:, :, None] * b[None], axis=1)
        with pytest.raises(FloatingPointError):
            np.asarray(la.sum(la.asarray(a)[:, :, None] * la.asarray(b)[None], axis=1))


def test_random_shapes_and_views_against_numpy():
    """300 random products of 2-5 axes, each axis a role (kept on the first factor, on the
    second, summed on both, a batch, size 1), factors read through reversed or strided
    views, summed over random axes: NumPy's shape, dtype and values (to rounding) every time,
    and the matrix product exactly where the rule says."""
    rng = np.random.default_rng(7)
    roles = ["m", "n", "k", "m", "n", "k", "batch", "one"]
    contracted = 0
    for case in range(300):
        dtype = FLOATS[case % 2]
        nd = int(rng.integers(2, 6))
        role = [roles[i] for i in rng.integers(0, len(roles), nd)]
        size = [int(rng.integers(2, 25)) for _ in range(nd)]
        xs = tuple(1 if r in ("n", "one") else s for r, s in zip(role, size))
        ys = tuple(1 if r in ("m", "one") else s for r, s in zip(role, size))
        summed = tuple(i for i, r in enumerate(role) if r == "k" or (r == "one" and rng.random() < 0.5)
                       or (r in ("m", "batch") and rng.random() < 0.15))   # (a one-sided sum: no rule)
        keepdims = bool(rng.random() < 0.3)
        # factors through views: every other one reversed along its first axis, or strided
        x = rng.standard_normal(tuple(s * 2 for s in xs)).astype(dtype)[tuple(slice(None, None, 2) for _ in xs)]
        y = rng.standard_normal(ys).astype(dtype)[::-1]
        drop = int(rng.integers(0, 2)) if ys[0] == 1 else 0      # a leading 1 broadcast away
        y = y[0] if drop else y
        lx = la.asarray(np.ascontiguousarray(x[::-1]))[::-1]
        ly = la.asarray(y)
        got = la.sum(lx * ly, axis=summed or None, keepdims=keepdims)
        want = np.sum(x * y, axis=summed or None, keepdims=keepdims)
        assert np.asarray(got).shape == want.shape and np.asarray(got).dtype == want.dtype, case
        scale = np.sum(np.abs(x.astype(np.float64) * y), axis=summed or None, keepdims=keepdims)
        tol = (1e-6 if dtype == np.float32 else 1e-14) * (scale + 1)
        assert np.all(np.abs(np.asarray(got).astype(np.float64) - want) <= tol), (case, role, summed)
        m = int(np.prod([xs[i] for i in range(nd) if role[i] == "m" and i not in summed]))
        n = int(np.prod([ys[i] for i in range(nd) if role[i] == "n"]))
        k = int(np.prod([xs[i] for i in range(nd) if role[i] == "k" or role[i] == "batch" and i in summed]))
        rule = (summed and all(role[i] in ("k", "one", "batch") for i in summed)   # (a batch summed is a K)
                and min(m, n) >= _contract.MIN_SIDE and m * n * k >= _contract.MIN_WORK)
        assert _contracted(got) == bool(rule), (case, role, summed, xs, ys)
        contracted += bool(rule)
    assert contracted >= 20, contracted       # (the rule is exercised, not only its refusals)


def test_explain_of_the_call_says_it_runs_as_a_matrix_product():
    """``la.explain(lambda: ...)`` stops before anything computes, so its plan is the fused
    kernel's; a note says the sum runs as a matrix product where the factors allow."""
    a, b = la.ones((16, 50), dtype=la.float32), la.ones((50, 16), dtype=la.float32)
    plan = la.explain(lambda: la.sum(a[:, :, None] * b[None], axis=1))
    assert any("runs as one matrix product" in n for n in plan.notes)
    plan = la.explain(lambda: la.sum(a[:, :3, None] * b[None, :3], axis=1))   # 16*16*3 < 4096
    assert not any("matrix product" in n for n in plan.notes)
    with la.config(mode="eager"):
        plan = la.explain(lambda: la.sum(a[:, :, None] * b[None], axis=1))
    assert not any("matrix product" in n for n in plan.notes)
    assert _contracted(la.sum(a[:, :, None] * b[None], axis=1))


def test_inside_la_jit_the_kernel_runs_with_the_same_values():
    """A trace records kernels (lazyarr/_jit.py), so a jitted function's sum stays the fused
    kernel's; its values are NumPy's to rounding all the same."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((16, 50)).astype(np.float32)
    b = rng.standard_normal((50, 16)).astype(np.float32)

    @la.jit
    def f(x, y):
        return la.sum(x[:, :, None] * y[None], axis=1)

    want = np.sum(a[:, :, None] * b[None], axis=1)
    scale = np.sum(np.abs(a.astype(np.float64)[:, :, None] * b[None]), axis=1)
    for _ in range(3):                   # the trace, then replays
        got = np.asarray(f(la.asarray(a), la.asarray(b)))
        # (the kernel rounds each product to float32 before its float64 sum: NumPy's
        # accuracy, not the one-rounding of the matrix product's exact products)
        assert got.dtype == want.dtype and np.all(np.abs(got - want) <= 1e-6 * scale)
