"""Matrix products (lazyarr/_functions/_linalg.py) against NumPy: a matrix-vector product
with a pending float matrix is one fused kernel, a stack times a matrix one library call,
everything else NumPy's own call on the operands' memory. Dtypes and shapes are NumPy's
exactly, values to rounding (a fused product sums in float64, BLAS in its own order)."""
from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la

RNG = np.random.default_rng(11)
A = RNG.standard_normal((37, 29))
B = RNG.standard_normal((37, 29))
X = RNG.standard_normal(29)
Y = RNG.standard_normal(37)
FLOATS = [np.float32, np.float64]


def _same(got, want):
    """NumPy's dtype and shape exactly; values to rounding of the dtype."""
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    eps = np.finfo(want.dtype).eps if want.dtype.kind == "f" else 0
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=0, atol=64 * eps * max(scale, 1.0))


# The kernels' shapes of work: name -> f(module, A, B, x, y) with A, B (37, 29), x (29,), y (37,)
CASES = {
    "alpha*A @ x + beta*B @ x": lambda m, a, b, x, y: 1.5 * a @ x + 1.2 * b @ x,
    "y @ (A + B)": lambda m, a, b, x, y: y @ (a + b),
    "(A*2).T @ y": lambda m, a, b, x, y: (a * 2).T @ y,
    "x @ (A*2).T": lambda m, a, b, x, y: x @ (a * 2).T,
    "A[::2] * 3 @ x": lambda m, a, b, x, y: (a[::2] * 3) @ x,
    "A[:, ::2] ** 2 @ x[::2]": lambda m, a, b, x, y: (a[:, ::2] ** 2) @ x[::2],
    "pending vector": lambda m, a, b, x, y: (a - 1) @ m.exp(x / 4),
    "matmul": lambda m, a, b, x, y: m.matmul(a * 2, x),
    "dot": lambda m, a, b, x, y: m.dot(y, a + b),
    "leaves": lambda m, a, b, x, y: y @ a + (a @ x) @ b,
    "A.T @ B (matrix)": lambda m, a, b, x, y: (a * 2).T @ b,
    "A @ B.T": lambda m, a, b, x, y: a @ b.T,
}


@pytest.mark.parametrize("dtype", FLOATS, ids=["float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_matrix_products_as_numpy(case, dtype):
    f = CASES[case]
    args = [v.astype(dtype) for v in (A, B, X, Y)]
    want = f(np, *args)
    _same(f(la, *map(la.asarray, args)), want)
    _same(f(np, *map(la.asarray, args)), want)      # numpy.matmul/dot on lazy arrays too


@pytest.mark.parametrize("dtypes", [(np.float32, np.float64), (np.float64, np.float32),
                                    (np.int32, np.float32), (np.int64, np.int64),
                                    (np.float32, np.complex64), (np.bool_, np.bool_)], ids=str)
def test_mixed_and_other_dtypes(dtypes):
    a = (A * 3).astype(dtypes[0])
    x = (X * 3).astype(dtypes[1])
    want = (a + a) @ x
    got = (la.asarray(a) + la.asarray(a)) @ la.asarray(x)
    if want.dtype.kind in "iub":
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    else:
        _same(got, want)


def test_a_pending_matrix_times_a_vector_is_one_kernel(kernels):
    a, b, x = la.asarray(A), la.asarray(B), la.asarray(X)
    got = 1.5 * a @ x + 1.2 * b @ x
    assert len(kernels) == 2                     # one fused multiply-and-sum per product
    assert all(n <= 6 for n in kernels)          # input, scalar, multiply, input, multiply, sum
    _same(got, 1.5 * A @ X + 1.2 * B @ X)
    kernels.clear()
    y = la.asarray(Y)
    _same(y @ (a * b), Y @ (A * B))
    assert len(kernels) == 1


def test_a_pending_vector_is_computed_once(kernels):
    a, x = la.asarray(A), la.asarray(X)
    got = (a * 2) @ la.sin(x)
    assert len(kernels) == 2                     # sin(x) first, then the fused product
    _same(got, (A * 2) @ np.sin(X))


def test_explain_shows_the_fused_product():
    a, x = la.asarray(A), la.asarray(X)
    plan = la.explain(lambda: (a * 2) @ x)
    assert "sum" in str(plan) and "multiply" in str(plan)


@pytest.mark.parametrize("shape", [(3, 4, 29), (2, 3, 1, 29), (5, 1, 29)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS + [np.int64], ids=str)
def test_a_stack_times_a_matrix(shape, dtype):
    s = RNG.standard_normal(shape).astype(dtype)
    c = RNG.standard_normal((29, 7)).astype(dtype)
    for got_s, want_s in ((la.asarray(s), s), (la.asarray(s) * 2, s * 2),
                          (la.asarray(np.swapaxes(s, 0, 1).copy()).swapaxes(0, 1), s)):
        _same(got_s @ la.asarray(c), want_s @ c)
        _same(got_s @ la.asarray(c[:, 0]), want_s @ c[:, 0])
        _same(got_s @ la.asarray(c.T.copy()).T, want_s @ c)


def test_eager_mode_is_numpys_call():
    with la.config(mode="eager"):
        got = (la.asarray(A) * 2) @ la.asarray(X)
    np.testing.assert_array_equal(np.asarray(got), (A * 2) @ X)


def test_special_values_and_empty_shapes():
    a = A.copy()
    a[3, 4], a[5, 6], a[7, 8] = np.nan, np.inf, -np.inf
    want = (a * 2) @ X
    got = np.asarray((la.asarray(a) * 2) @ la.asarray(X))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    _same((la.asarray(np.ones((4, 0))) * 2) @ la.asarray(np.ones(0)), np.ones((4, 0)) @ np.ones(0))
    _same(la.asarray(np.ones(0)) @ (la.asarray(np.ones((0, 3))) * 2), np.ones(0) @ np.ones((0, 3)))
    _same(la.asarray(np.ones((0, 2, 3))) @ la.asarray(np.ones((3, 4))),
          np.ones((0, 2, 3)) @ np.ones((3, 4)))


def test_numpys_errors():
    a, x = la.asarray(A) * 2, la.asarray(np.ones(5))
    for fn in (lambda: a @ x, lambda: x @ a, lambda: la.asarray(np.ones((2, 3, 4))) @ x,
               lambda: a @ 2.0):
        with pytest.raises(ValueError, match="matmul"):
            fn()


def test_computed_operands_call_numpy_at_once_with_its_rules():
    """``a @ b`` and ``la.dot(a, b)`` of computed CPU arrays: NumPy's call on their memory right
    away (``_fallback.call_computed``), its result, its errors; the fallback policy, la.explain's
    note and la.jit's trace still see the call."""
    rng = np.random.default_rng(3)
    a, b = rng.random((5, 4)), rng.random(4).astype(np.float32)
    x, y = la.asarray(a), la.asarray(b)
    for got, want in [(x @ y, a @ b), (la.dot(x[1], y), np.dot(a[1], b)), (y @ y, b @ b),
                      (la.matmul(x.T, x), a.T @ a), (la.dot(x, x.T), np.dot(a, a.T))]:
        assert got.is_materialized
        np.testing.assert_array_equal(np.asarray(got), want)
        assert np.asarray(got).dtype == want.dtype
    with pytest.raises(ValueError, match="mismatch"):
        x @ la.asarray(np.ones(5))
    assert any("numpy.matmul" in n for n in la.explain((x @ y) * 2).notes)
    with la.config(fallback="warn"), pytest.warns(la.FallbackWarning, match="matmul"):
        x @ y
