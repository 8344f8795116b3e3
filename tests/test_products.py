"""The products of lazyarr/_functions/_products.py against NumPy: ``diagonal``, ``trace``,
``diag``/``diagflat``, ``kron``, ``cross`` (fused: views and elementwise work, no library
call), ``inner``, ``vdot``, ``tensordot``, ``matvec``/``vecmat`` (on ``matmul``/``vecdot``),
``einsum`` (NumPy's/CuPy's call with its FLOPs in ``la.explain``), the ``la.linalg`` forms;
dtypes bool to complex, batched and empty shapes, negative strides, pending operands (one
kernel where fused), NumPy's exceptions and messages, ``numpy.<name>(lazy)`` and the cuda
device (``-m gpu``, also under ``LAZYARR_CUDA_SIM=1``)."""
from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pytest
from helpers import random_data

import lazyarr as la
from lazyarr import _numpy_names

DTYPES = [np.bool_, np.int8, np.int32, np.uint8, np.float32, np.float64, np.complex64,
          np.complex128]
NAMES = ["diagonal", "trace", "diag", "diagflat", "kron", "cross", "inner", "vdot",
         "tensordot", "matvec", "vecmat", "einsum", "linalg.cross", "linalg.outer",
         "linalg.trace", "linalg.diagonal", "linalg.tensordot", "linalg.matrix_transpose"]


_data = partial(random_data, ints=(-5, 6))


def _check(got, want, exact=False):
    """``got`` (a LazyArray) is NumPy's ``want``: dtype, shape, values (exactly, or to the
    rounding of the dtype: lazyarr's sums and BLAS's blockings round differently)."""
    want = np.asarray(want)
    assert isinstance(got, la.LazyArray), type(got)
    g = got.to_numpy()
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, g.shape, want.dtype, want.shape)
    if exact or want.dtype.kind in "biu":
        np.testing.assert_array_equal(g, want)
    else:
        tol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(g, want, rtol=tol, atol=tol * 10)


def _same_error(lazy_call, numpy_call, exc=Exception):
    """Both raise, the same type and message."""
    with pytest.raises(exc) as theirs:
        numpy_call()
    with pytest.raises(type(theirs.value)) as ours:
        lazy_call()
    assert str(ours.value) == str(theirs.value)


def _no_library_call(fn):
    """``la.explain`` of the call's first materialization: fused kernels only."""
    plan = la.explain(fn)
    assert plan.library_calls == [], plan
    assert len(plan.kernels) >= 1


def test_all_native_in_the_comparison_page():
    for name in NAMES:
        assert _numpy_names.status(name) == ("native", ""), name
    for name in ("diagonal", "trace"):     # and the methods
        assert getattr(la.LazyArray, name).__qualname__.startswith("LazyArray.")


# ----------------------------------------------------------------------------- diagonal, trace
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, offset, axis1, axis2", [
    ((4, 5), 0, 0, 1), ((4, 5), 2, 0, 1), ((4, 5), -3, 0, 1), ((4, 5), 7, 0, 1),
    ((2, 3, 4), 1, 2, 0), ((2, 3, 4), -1, -1, -2), ((0, 3), 0, 0, 1), ((3, 0, 2), 0, 1, 2)])
def test_diagonal_and_trace(dtype, shape, offset, axis1, axis2):
    a = _data(shape, dtype)
    x = la.asarray(a)
    _check(la.diagonal(x, offset, axis1, axis2), np.diagonal(a, offset, axis1, axis2), exact=True)
    _check(x.diagonal(offset, axis1, axis2), a.diagonal(offset, axis1, axis2), exact=True)
    want = np.trace(a, offset, axis1, axis2)
    _check(la.trace(x, offset, axis1, axis2), want)
    _check(x.trace(offset, axis1, axis2), want)
    if np.dtype(dtype).kind != "b":
        _check(la.trace(x, offset, axis1, axis2, dtype=np.complex128),
               np.trace(a, offset, axis1, axis2, dtype=np.complex128))


def test_diagonal_is_a_read_only_view_of_negative_strides(kernels):
    a = _data((6, 7), np.float64)
    x = la.asarray(a)
    d = la.diagonal(x[::-1, ::-2], 1)
    _check(d, np.diagonal(a[::-1, ::-2], 1), exact=True)
    with pytest.raises(ValueError, match="read-only"):
        d[0] = 1.0
    pending = la.diagonal(x * 2 - 1, -1)          # a pending diagonal: read-only too
    with pytest.raises(ValueError, match="read-only"):
        pending[0] = 1.0
    _check(pending, np.diagonal(a * 2 - 1, -1), exact=True)
    _same_error(lambda: la.diagonal(x, 0, 0, 0), lambda: np.diagonal(a, 0, 0, 0))
    _same_error(lambda: la.diagonal(x, 0, 0, 2), lambda: np.diagonal(a, 0, 0, 2))
    _same_error(lambda: la.diagonal(la.asarray(np.ones(3)), 0),
                lambda: np.diagonal(np.ones(3), 0))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.complex128], ids=str)
def test_trace_of_a_pending_array_is_one_kernel(kernels, dtype):
    a, b = _data((5, 40, 40), dtype), _data((5, 40, 40), dtype, seed=1)
    x, y = la.asarray(a), la.asarray(b)
    kernels.clear()
    _check(la.trace(x * 2 + y, 1, 1, 2), np.trace(a * 2 + b, 1, 1, 2))
    assert len(kernels) == 1, kernels
    kernels.clear()
    _check(la.linalg.trace(x - y, offset=-2), np.linalg.trace(a - b, offset=-2))
    assert len(kernels) == 1, kernels
    _no_library_call(lambda: la.trace(x * 2 + y, axis1=1, axis2=2) + 1)
    _check(la.linalg.diagonal(x * 3, offset=1), np.linalg.diagonal(a * 3, offset=1), exact=True)


def test_trace_keywords_and_dispatch():
    a = _data((4, 4), np.int8)
    x = la.asarray(a)
    _check(np.trace(x), np.trace(a))
    _check(np.diagonal(x, 1), np.diagonal(a, 1), exact=True)
    out = la.zeros((), dtype=np.int64)
    la.trace(x, out=out)
    assert out.to_numpy() == np.trace(a)
    assert np.trace(a.astype(np.uint8)).dtype == la.trace(la.asarray(a.astype(np.uint8))).dtype


# ----------------------------------------------------------------------------- diag, diagflat
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float32, np.complex128], ids=str)
@pytest.mark.parametrize("k", [0, 2, -3])
def test_diag(dtype, k):
    v, m = _data((5,), dtype), _data((4, 6), dtype)
    _check(la.diag(la.asarray(v), k), np.diag(v, k), exact=True)
    _check(la.diag(la.asarray(v)[::-2], k), np.diag(v[::-2], k), exact=True)
    _check(la.diag(la.asarray(m), k), np.diag(m, k), exact=True)
    _check(la.diagflat(la.asarray(m[:2, :3]), k), np.diagflat(m[:2, :3], k), exact=True)
    _check(la.diag(la.asarray(v[:0]), k), np.diag(v[:0], k), exact=True)
    _check(np.diag(la.asarray(v), k), np.diag(v, k), exact=True)
    _check(np.diagflat(la.asarray(v), k), np.diagflat(v, k), exact=True)


def test_diag_fused_and_errors(kernels):
    v = _data((50,), np.float64)
    x = la.asarray(v)
    _no_library_call(lambda: la.sum(la.diag(x * 2) + 1, axis=0))
    kernels.clear()
    _check(la.sum(la.diag(x * 2) + 1, axis=0), np.sum(np.diag(v * 2) + 1, axis=0))
    assert len(kernels) == 1, kernels           # the matrix is never written
    _check(la.diag(x - 1, 3), np.diag(v - 1, 3), exact=True)
    for k in (-3, 2):       # (the vector joined with |k| zeros, the matrix still fused)
        kernels.clear()
        _check(la.sum(la.diagflat(x - 1, k), axis=1), np.sum(np.diagflat(v - 1, k), axis=1))
        assert 1 <= len(kernels) <= 2, kernels  # (the vector joined), the matrix summed
        _no_library_call(lambda: la.diag(x, k).sum(axis=0))
    _same_error(lambda: la.diag(la.ones((2, 2, 2))), lambda: np.diag(np.ones((2, 2, 2))))
    _same_error(lambda: la.diag(x, 1.5), lambda: np.diag(v, 1.5))


# ----------------------------------------------------------------------------- kron
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("sa, sb", [((2, 3), (4, 5)), ((3,), (2, 4)), ((2, 1, 3), (4,)),
                                    ((), (3, 2)), ((2, 3), ()), ((0, 2), (3, 4)), ((3,), (0,))])
def test_kron(dtype, sa, sb):
    a, b = _data(sa, dtype), _data(sb, np.float32 if dtype is np.int8 else dtype, seed=1)
    _check(la.kron(la.asarray(a), la.asarray(b)), np.kron(a, b), exact=True)
    _check(np.kron(la.asarray(a), b), np.kron(a, b), exact=True)


def test_kron_is_one_kernel_and_no_library_call(kernels):
    a, b = _data((20, 30), np.float64), _data((7, 3), np.complex64, seed=1)
    x, y = la.asarray(a), la.asarray(b)
    kernels.clear()
    _check(la.kron(x * 2, y[::-1] + 1), np.kron(a * 2, b[::-1] + 1))
    assert len(kernels) == 1, kernels
    _no_library_call(lambda: la.kron(x * 2, y + 1))


# ----------------------------------------------------------------------------- cross
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.float32, np.float64,
                                   np.complex128], ids=str)
def test_cross_of_3_vectors(dtype):
    a, b = _data((4, 3), dtype), _data((2, 1, 3), dtype, seed=1)
    x, y = la.asarray(a), la.asarray(b)
    _check(la.cross(x, y), np.cross(a, b), exact=True)
    _check(la.cross(x, y, axisc=0), np.cross(a, b, axisc=0), exact=True)
    _check(la.cross(x.T, y, axisa=0), np.cross(a.T, b, axisa=0), exact=True)
    _check(la.cross(x[::-1], b[0, 0]), np.cross(a[::-1], b[0, 0]), exact=True)
    _check(la.cross(x.T, x.T[:, ::-1], axis=0), np.cross(a.T, a.T[:, ::-1], axis=0), exact=True)
    _check(la.linalg.cross(x, y), np.linalg.cross(a, b), exact=True)
    _check(la.cross(x[:0], y), np.cross(a[:0], b), exact=True)
    _check(np.cross(x, y), np.cross(a, b), exact=True)
    _check(np.linalg.cross(x, y), np.linalg.cross(a, b), exact=True)


@pytest.mark.parametrize("n, m", [(2, 2), (2, 3), (3, 2)])
def test_cross_of_2_vectors_is_deprecated_as_numpys(n, m):
    a, b = _data((5, n), np.float64), _data((5, m), np.int32, seed=1)
    with pytest.warns(DeprecationWarning, match="2-dimensional vectors are deprecated"):
        want = np.cross(a, b, axisc=0)
    with pytest.warns(DeprecationWarning, match="2-dimensional vectors are deprecated"):
        got = la.cross(la.asarray(a), la.asarray(b), axisc=0)
    _check(got, want, exact=True)


def test_cross_errors_and_fusion(kernels):
    a, b = _data((50, 3), np.float64), _data((50, 3), np.float64, seed=1)
    x, y = la.asarray(a), la.asarray(b)
    kernels.clear()
    _check(la.cross(x * 2, y - 1), np.cross(a * 2, b - 1))
    assert len(kernels) == 1, kernels
    _no_library_call(lambda: la.cross(x * 2, y - 1).sum(axis=0))
    for args, kw in [((np.ones((2, 4)), np.ones((2, 3))), {}), ((np.ones(()), np.ones(3)), {}),
                     ((np.ones((2, 3)), np.ones((4, 3))), {}), ((a, b), {"axisa": 2}),
                     ((a, b), {"axisb": -3}), ((a, b), {"axisc": 2}),
                     ((a.astype(bool), b.astype(bool)), {})]:
        _same_error(lambda: la.cross(*(la.asarray(v) for v in args), **kw),
                    lambda: np.cross(*args, **kw))
    for args in [(np.ones((2, 2)), np.ones((2, 2))), (np.ones((2, 3)), np.ones((2, 2)))]:
        _same_error(lambda: la.linalg.cross(*(la.asarray(v) for v in args)),
                    lambda: np.linalg.cross(*args), ValueError)


# ----------------------------------------------------------------------------- inner, vdot
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("sa, sb", [((5,), (5,)), ((3, 5), (5,)), ((5,), (2, 4, 5)),
                                    ((2, 3, 5), (4, 5)), ((), (3, 2)), ((0, 4), (2, 4)),
                                    ((3, 0), (2, 0))])
def test_inner(dtype, sa, sb):
    a, b = _data(sa, dtype), _data(sb, dtype, seed=1)
    _check(la.inner(la.asarray(a), la.asarray(b)), np.inner(a, b))
    _check(np.inner(la.asarray(a), b), np.inner(a, b))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("sa, sb", [((5,), (5,)), ((2, 3), (3, 2)), ((6,), (2, 3)),
                                    ((2, 3), (2, 3)), ((0,), (0, 2))])
def test_vdot(dtype, sa, sb):
    a, b = _data(sa, dtype), _data(sb, dtype, seed=1)
    _check(la.vdot(la.asarray(a), la.asarray(b)), np.vdot(a, b))
    _check(la.vdot(la.asarray(a).T, la.asarray(b)), np.vdot(a.T, b))
    _check(np.vdot(la.asarray(a), b), np.vdot(a, b))


def test_inner_vdot_fused_and_errors(kernels):
    a, b = _data((8, 30), np.complex128), _data((8, 30), np.complex128, seed=1)
    x, y = la.asarray(a), la.asarray(b)
    kernels.clear()
    _check(la.vdot(x * 2, y), np.vdot(a * 2, b))
    assert len(kernels) == 1, kernels           # conj(x * 2) * y summed: nothing flattened
    _no_library_call(lambda: la.vdot(x * 2, y) + 1)
    _same_error(lambda: la.inner(x, la.asarray(b[:, :4])), lambda: np.inner(a, b[:, :4]))
    _same_error(lambda: la.vdot(x, la.asarray(b[:, :4])), lambda: np.vdot(a, b[:, :4]))


# ----------------------------------------------------------------------------- tensordot
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("sa, sb, axes", [
    ((3, 4, 5), (4, 5, 2), 2), ((3, 4), (4, 2), 1), ((3, 4), (5, 2), 0),
    ((3, 4, 5), (5, 3, 2), ([0, 2], [1, 0])), ((3, 4, 5), (4, 2), (1, 0)),
    ((0, 4), (4, 3), 1), ((2, 0), (0, 3), 1)])
def test_tensordot(dtype, sa, sb, axes):
    a, b = _data(sa, dtype), _data(sb, dtype, seed=1)
    _check(la.tensordot(la.asarray(a), la.asarray(b), axes), np.tensordot(a, b, axes))
    _check(la.linalg.tensordot(la.asarray(a), la.asarray(b), axes=axes),
           np.linalg.tensordot(a, b, axes=axes))
    _check(np.tensordot(la.asarray(a), b, axes), np.tensordot(a, b, axes))


def test_tensordot_errors():
    a, b = np.ones((3, 4)), np.ones((5, 3))
    x, y = la.asarray(a), la.asarray(b)
    for axes in (1, ([0, 0], [0, 1]), ([0], [0, 1]), ([1], [1])):
        _same_error(lambda: la.tensordot(x, y, axes), lambda: np.tensordot(a, b, axes))


# ----------------------------------------------------------------------------- matvec, vecmat
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("sa, sb", [((3, 4), (4,)), ((2, 3, 4), (4,)), ((3, 4), (2, 4)),
                                    ((2, 1, 3, 4), (5, 4)), ((0, 4), (4,)), ((3, 0), (0,))])
def test_matvec_and_vecmat(dtype, sa, sb):
    m, v = _data(sa, dtype), _data(sb, dtype, seed=1)
    _check(la.matvec(la.asarray(m), la.asarray(v)), np.matvec(m, v))
    _check(np.matvec(la.asarray(m), v), np.matvec(m, v))
    mt = np.swapaxes(m, -1, -2)
    _check(la.vecmat(la.asarray(v), la.asarray(mt)), np.vecmat(v, mt))
    _check(np.vecmat(v, la.asarray(mt)), np.vecmat(v, mt))


def test_matvec_vecmat_fused_and_errors(kernels):
    m, v = _data((40, 30), np.float64), _data((30,), np.float64, seed=1)
    x, y = la.asarray(m), la.asarray(v)
    kernels.clear()
    _check(la.matvec(x * 2 - 1, y), np.matvec(m * 2 - 1, v))
    assert len(kernels) == 1, kernels           # the pending matrix is never written
    _no_library_call(lambda: la.matvec(x * 2 - 1, y) + 1)
    kernels.clear()
    _check(la.vecmat(y[:, None][:, 0][:30], x.T * 3), np.vecmat(v, m.T * 3))
    assert len(kernels) == 1, kernels
    for f, a, b in [(np.matvec, m, v[:4]), (np.matvec, np.ones((2, 40, 30)), np.ones((3, 30))),
                    (np.matvec, v, v), (np.vecmat, v[:4], m.T), (np.vecmat, m, np.ones(()))]:
        _same_error(lambda: getattr(la, f.__name__)(la.asarray(a), la.asarray(b)),
                    lambda: f(a, b), ValueError)


# ----------------------------------------------------------------------------- einsum
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("optimize", [False, True, "optimal"])
def test_einsum(dtype, optimize):
    a, b, c = _data((3, 4), dtype), _data((4, 5), dtype, seed=1), _data((5, 2), dtype, seed=2)
    x, y, z = la.asarray(a), la.asarray(b), la.asarray(c)
    for subscripts, ops, lazy in [("ij,jk,kl->il", (a, b, c), (x, y, z)), ("ii", (a[:, :3],), (x[:, :3],)),
                                  ("ij->j", (a[::-1],), (x[::-1],)), ("i,i", (a[0], a[1]), (x[0], x[1])),
                                  ("...j,jk", (a, b), (x, y)), ("ij,jk", (a[:0], b), (x[:0], y))]:
        _check(la.einsum(subscripts, *lazy, optimize=optimize),
               np.einsum(subscripts, *ops, optimize=optimize))
    _check(la.einsum(x, [0, 1], y, [1, 2], [0, 2], optimize=optimize),
           np.einsum(a, [0, 1], b, [1, 2], [0, 2], optimize=optimize))
    _check(np.einsum("ij,jk", x, b, optimize=optimize), np.einsum("ij,jk", a, b, optimize=optimize))
    if np.dtype(dtype).kind != "c":
        _check(la.einsum("ij,jk", x, y, dtype=np.complex128, optimize=optimize),
               np.einsum("ij,jk", a, b, dtype=np.complex128, optimize=optimize))


def test_einsum_record_operands_and_errors(kernels):
    a, b, c = _data((30, 40), np.float64), _data((40, 50), np.float64, seed=1), _data((50, 6), np.float64)
    x, y, z = la.asarray(a), la.asarray(b), la.asarray(c)
    kernels.clear()
    got = la.einsum("ij,jk,kl->il", x * 2, y + 1, z, optimize=True)
    assert len(kernels) == 2, kernels          # each pending operand: its one kernel
    _check(got, np.einsum("ij,jk,kl->il", a * 2, b + 1, c, optimize=True))
    call, = la.explain(got).library_calls
    assert call.name == "einsum" and call.bytes_read == a.nbytes + b.nbytes + c.nbytes
    assert call.bytes_written == got.nbytes
    report = np.einsum_path("ij,jk,kl->il", a, b, c, optimize=True)[1]
    assert f"{float(call.flops):.3e}" in report and "Optimized FLOP count" in report
    naive, = la.explain(la.einsum("ij,jk,kl->il", x, y, z)).library_calls
    naive_report = np.einsum_path("ij,jk,kl->il", a, b, c, optimize=False)[1]
    assert f"Naive FLOP count:  {float(naive.flops):.3e}" in naive_report
    assert naive.flops > call.flops             # (the optimized order is cheaper here)
    out = la.zeros((30, 6))
    la.einsum("ij,jk,kl->il", x, y, z, out=out)
    _check(out, np.einsum("ij,jk,kl->il", a, b, c))
    for args, kw in [(("ij,jk", a, c), {}), (("ij,jk", a, c), {"optimize": True}),
                     (("ij,j", a), {}), (("i->j", a[0]), {}), (("ij,jk", a, b), {"dtype": np.int32}),
                     (("ij,jk", a, b), {"casting": "bogus"})]:
        _same_error(lambda: la.einsum(*(la.asarray(v) if isinstance(v, np.ndarray) else v
                                        for v in args), **kw),
                    lambda: np.einsum(*args, **kw))


# ----------------------------------------------------------------------------- linalg.outer
def test_linalg_outer_and_matrix_transpose(kernels):
    a, b = _data((5,), np.complex64), _data((7,), np.float64, seed=1)
    kernels.clear()
    _check(la.linalg.outer(la.asarray(a) * 2, la.asarray(b)), np.linalg.outer(a * 2, b), exact=True)
    assert len(kernels) == 1
    _check(np.linalg.outer(la.asarray(a), b), np.linalg.outer(a, b), exact=True)
    _same_error(lambda: la.linalg.outer(la.ones((2, 2)), la.asarray(b)),
                lambda: np.linalg.outer(np.ones((2, 2)), b), ValueError)
    m = _data((2, 3, 4), np.int32)
    _check(np.linalg.matrix_transpose(la.asarray(m)), np.linalg.matrix_transpose(m), exact=True)


# ----------------------------------------------------------------------------- cuda
@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_diagonal_trace_diag_kron_on_cuda():
    a, v = _data((3, 6, 6), np.complex128), _data((5,), np.int32)
    with la.config(device="cuda", mode="lazy"):
        x, y = la.asarray(a), la.asarray(v)
        d = la.diagonal(x * 2, 1, 1, 2)
        assert d.device == "cuda"
        _check(d, np.diagonal(a * 2, 1, 1, 2), exact=True)
        with pytest.raises(ValueError, match="read-only"):
            la.diagonal(x, 0, 1, 2)[0, 0] = 1
        _check(la.trace(x - 1, axis1=1, axis2=2), np.trace(a - 1, axis1=1, axis2=2))
        _check(la.linalg.trace(x, offset=-1), np.linalg.trace(a, offset=-1))
        _check(la.diag(y * 2), np.diag(v * 2), exact=True)
        _check(la.diag(y, -2), np.diag(v, -2), exact=True)
        _check(la.kron(y[:3], x[0, :2, :3] + 1), np.kron(v[:3], a[0, :2, :3] + 1), exact=True)


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_cross_on_cuda():
    a, b = _data((4, 3), np.float32), _data((4, 3), np.int8, seed=1)
    with la.config(device="cuda", mode="lazy"):
        x, y = la.asarray(a), la.asarray(b)
        got = la.cross(x * 2, y, axisc=0)
        assert got.device == "cuda"
        _check(got, np.cross(a * 2, b, axisc=0))
        _check(la.linalg.cross(x, y), np.linalg.cross(a, b))
        _same_error(lambda: la.linalg.cross(x[:, :2], y[:, :2]),
                    lambda: np.linalg.cross(a[:, :2], b[:, :2]), ValueError)
        with pytest.warns(DeprecationWarning):
            _check(la.cross(x[:, :2], y[:, :2]), np.cross(a[:, :2], b[:, :2]))


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
@pytest.mark.parametrize("dtype", [np.float64, np.complex64], ids=str)
def test_products_on_cuda(dtype):
    m, v = _data((2, 3, 4), dtype), _data((4,), dtype, seed=1)
    with la.config(device="cuda", mode="lazy"):
        x, y = la.asarray(m), la.asarray(v)
        got = la.matvec(x * 2, y)
        assert got.device == "cuda"
        _check(got, np.matvec(m * 2, v))
        _check(la.vecmat(y, x.mT), np.vecmat(v, np.swapaxes(m, -1, -2)))
        _check(la.inner(x, y - 1), np.inner(m, v - 1))
        _check(la.vdot(x, x + 1), np.vdot(m, m + 1))
        _check(la.tensordot(x, x, ([1, 2], [1, 2])), np.tensordot(m, m, ([1, 2], [1, 2])))
        _same_error(lambda: la.matvec(x, y[:3]), lambda: np.matvec(m, v[:3]), ValueError)
        _same_error(lambda: la.inner(x, y[:3]), lambda: np.inner(m, v[:3]), ValueError)


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_einsum_on_cuda():
    a, b = _data((3, 4), np.float32), _data((4, 5), np.float32, seed=1)
    with la.config(device="cuda", mode="lazy"):
        x, y = la.asarray(a), la.asarray(b)
        got = la.einsum("ij,jk->ik", x * 2, y, optimize=True)
        assert got.device == "cuda"
        _check(got, np.einsum("ij,jk->ik", a * 2, b, optimize=True))
        call, = la.explain(got).library_calls
        assert call.flops is not None and call.flops > 0
        _check(la.einsum("ij,jk", x, y, dtype=np.float64, casting="same_kind", order="C"),
               np.einsum("ij,jk", a, b, dtype=np.float64, casting="same_kind", order="C"))
        _same_error(lambda: la.einsum("ij,jk", x, y, dtype=np.int32),
                    lambda: np.einsum("ij,jk", a, b, dtype=np.int32), TypeError)
        _same_error(lambda: la.einsum("ij,jk", x, x), lambda: np.einsum("ij,jk", a, a), ValueError)


def test_no_warning_for_3_vectors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        la.cross(la.ones(3), la.ones(3)).to_numpy()


def test_every_family_in_each_mode(mode):
    """Eager mode (NumPy op by op) and each lazy CPU backend: the same results."""
    a, b = _data((4, 3), np.complex128), _data((4, 3), np.float32, seed=1)
    x, y = la.asarray(a), la.asarray(b)
    _check(la.trace(x * 2, -1), np.trace(a * 2, -1))
    _check(la.diagonal(x + 1, 1), np.diagonal(a + 1, 1), exact=True)
    _check(la.diag(y[:, 0] - 1, 1), np.diag(b[:, 0] - 1, 1), exact=True)
    _check(la.kron(x - 1, y), np.kron(a - 1, b), exact=True)
    _check(la.cross(x * 2, y), np.cross(a * 2, b))
    _check(la.inner(x, y * 2), np.inner(a, b * 2))
    _check(la.vdot(x * 2, y), np.vdot(a * 2, b))
    _check(la.tensordot(x, y.T + 1, 1), np.tensordot(a, b.T + 1, 1))
    _check(la.matvec(x + 1, y[0]), np.matvec(a + 1, b[0]))
    _check(la.vecmat(x[0], y.T * 3), np.vecmat(a[0], b.T * 3))
    _check(la.einsum("ij,kj->ik", x - 1, y, optimize=True), np.einsum("ij,kj->ik", a - 1, b, optimize=True))


def test_diagonal_aliases_its_base_as_numpys():
    """A write into the base shows in its diagonal, computed or pending (a view's memory)."""
    a = np.arange(12.0).reshape(3, 4)
    x = la.asarray(a.copy())
    d = la.diagonal(x, 1)
    x[0, 1] = 99.0
    want = a.copy()
    want[0, 1] = 99.0
    _check(d, np.diagonal(want, 1), exact=True)
    p = la.asarray(a) * 2
    e = la.diagonal(p)
    p[1, 1] = -1.0
    want = a * 2
    want[1, 1] = -1.0
    _check(e, np.diagonal(want), exact=True)
    _check(p, want, exact=True)
