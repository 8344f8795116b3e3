"""``la.vecdot`` and ``la.linalg.vecdot`` (lazyarr/_functions/_linalg.py): NumPy's ``vecdot``
for computed operands; one fused multiply-and-sum kernel when an operand is pending (float
and complex), values within rounding of NumPy's; NumPy's dtypes, shapes, broadcasting and
errors. ``numpy.vecdot(lazy, ...)`` reaches it; ``la.linalg`` serves the main namespace's
``vecdot``, ``matmul`` and ``matrix_transpose``."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import random_data as _data

import lazyarr as la

FLOATS = [np.float32, np.float64, np.complex64, np.complex128]


def _close(got, want):
    got = got.to_numpy() if isinstance(got, la.LazyArray) else np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    tol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


def _exact(got, want):
    got = got.to_numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shapes, axis", [(((6, 9), (9,)), -1), (((6, 9), (6, 9)), 0),
                                          (((2, 1, 5), (3, 5)), -1), (((4,), (4,)), 0),
                                          (((3, 0), (0,)), -1), (((0, 3), (0, 3)), -1)])
def test_a_pending_operand_is_one_fused_kernel(kernels, dtype, shapes, axis):
    a, b = _data(shapes[0], dtype), _data(shapes[1], dtype, seed=1)
    x, y = la.asarray(a), la.asarray(b)
    kernels.clear()
    got = la.vecdot(x * 2 - 1, y, axis=axis)
    want = np.vecdot(a * dtype(2) - dtype(1), b, axis=axis)
    _close(got, want)
    if a.size and b.size:                    # (an empty product has no kernel to count)
        assert len(kernels) == 1, kernels
    _close(la.linalg.vecdot(x, y - 0.5, axis=axis), np.linalg.vecdot(a, b - dtype(0.5), axis=axis))


@pytest.mark.parametrize("dtype", [*FLOATS, np.int32, np.int64, np.bool_], ids=str)
def test_computed_operands_are_numpys_call(dtype):
    """(NumPy's own call; its float sums depend on the operands' alignment there, BLAS's
    kernels: values to rounding)"""
    a, b = _data((5, 7), dtype), _data((7,), dtype, seed=2)
    check = _exact if np.dtype(dtype).kind in "iub" else _close
    check(la.vecdot(la.asarray(a), la.asarray(b)), np.vecdot(a, b))
    got = la.vecdot(la.asarray(a) * dtype(1), la.asarray(b))  # (integers pending: NumPy's call)
    check(got, np.vecdot(a * dtype(1), b))


def test_numpy_dispatch_keywords_and_eager_mode(kernels):
    a, b = _data((4, 6), np.float64), _data((4, 6), np.float64, seed=3)
    x, y = la.asarray(a), la.asarray(b)
    _close(np.vecdot(x * 3, y), np.vecdot(a * 3, b))
    assert isinstance(np.vecdot(x * 3, y), la.LazyArray)
    _close(la.vecdot(x * 3, y, dtype=np.float32), np.vecdot(a * 3, b, dtype=np.float32))
    with la.config(mode="eager"):
        _close(la.vecdot(x * 3, y, axis=0), np.vecdot(a * 3, b, axis=0))


def test_values_at_nan_inf_and_signed_zero():
    a = np.array([[np.nan, 1.0], [np.inf, 1.0], [-0.0, -0.0], [np.inf, -np.inf]])
    b = np.array([[1.0, 2.0], [0.0, 1.0], [0.0, 1.0], [1.0, 1.0]])
    with pytest.warns(RuntimeWarning, match="invalid value encountered"):    # (inf * 0)
        want = np.vecdot(a, b)
    with pytest.warns(RuntimeWarning, match="invalid value encountered"):    # (in multiply)
        got = la.vecdot(la.asarray(a) * 1.0, la.asarray(b)).to_numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shapes, axis", [(((3, 4), (5,)), -1), (((3, 4), (4, 3)), 0),
                                          (((2, 4), (3, 4)), -1), (((4,), (4,)), 1),
                                          (((), (4,)), -1)])
def test_errors_are_numpys(shapes, axis):
    a, b = _data(shapes[0], np.float64), _data(shapes[1], np.float64, seed=1)
    with pytest.raises(Exception) as numpy_error:
        np.vecdot(a, b, axis=axis)
    with pytest.raises(type(numpy_error.value)):
        la.vecdot(la.asarray(a) * 2, la.asarray(b), axis=axis)


def test_linalg_serves_the_main_namespaces_products():
    a = _data((3, 4), np.float64)
    x = la.asarray(a)
    assert la.linalg.vecdot is la.vecdot and la.linalg.matmul is la.matmul
    assert la.linalg.matrix_transpose is la.matrix_transpose
    np.testing.assert_array_equal(la.linalg.matmul(x, x.T).to_numpy(), np.linalg.matmul(a, a.T))
    np.testing.assert_array_equal(la.linalg.matrix_transpose(x).to_numpy(),
                                  np.linalg.matrix_transpose(a))
    with pytest.raises(ValueError):
        la.linalg.matrix_transpose(la.asarray(np.ones(3)))


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
@pytest.mark.parametrize("dtype", [np.float32, np.complex128], ids=str)
def test_vecdot_on_cuda(dtype):
    a, b = _data((6, 9), dtype), _data((9,), dtype, seed=1)
    with la.config(device="cuda", mode="lazy"):
        x, y = la.asarray(a), la.asarray(b)
        got = la.vecdot(x * 2 - 1, y)
        assert got.device == "cuda"
        _close(got, np.vecdot(a * dtype(2) - dtype(1), b))
        _close(la.vecdot(x, y), np.vecdot(a, b))
