"""Issue 18's functions against NumPy on both devices: complex inputs (where NumPy takes
them; NumPy's exception type where it does not), empty inputs (NumPy's result, or its
exception type) and batched (stacked, ndim > 2) shapes. docs/testing.rst, "Issue 18's
functions: what the tests cover", says which of these cells other test files cover and which
this file adds. Each row runs on the cpu (lazy mode on given and on pending
inputs, and eager mode) and, gpu-marked, on the cuda device (lazy): small arrays, most of them
library calls (about 20 s on the simulated device)."""
from __future__ import annotations

import operator
import warnings
from functools import partial

import numpy as np
import pytest
from helpers import random_data

import lazyarr as la

_NEEDS_CUDA = pytest.mark.skipif(not la.cuda_available(),
                                 reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")


_arr = partial(random_data, ints=(-5, 6))


def _spd(shape, dtype):
    """Hermitian positive definite matrices (stacked): a @ a^H + n I."""
    a = _arr(shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _wc(shape, dtype):
    """Well-conditioned square matrices (stacked)."""
    return (_arr(shape, dtype) + 3 * np.eye(shape[-1])).astype(dtype)


C64, C128, F64 = np.complex64, np.complex128, np.float64


def _c(name, *args, check=None, **kw):
    """A case: ``name`` ('linalg.qr', 'fft.fft', 'matmul', '@'), its arguments (NumPy
    arrays become lazy arrays on the device), keywords, and a check for results that are
    not unique (factorizations)."""
    return name, args, kw, check


# ----------------------------------------------------------------- checks for factorizations
def _tol(dt):
    return 2e-4 if np.dtype(dt) in (np.float32, np.complex64) else 1e-9


def _not_after(a, b):
    """Elementwise: ``a`` sorts at or before ``b`` in NumPy's order (complex: lexicographic)."""
    return (np.sort(np.stack([a, b], -1), -1)[..., 1] == b).all()


def _check_partition(got, want, a, kth, axis=-1, **kw):
    """NumPy leaves the order on each side of a partition point open (CuPy's differs): the
    values at ``kth`` are the sorted array's, those before sort at or before them and those
    after at or after them."""
    _same_meta(got, want)
    values, ordered = np.asarray(got), np.sort(a, axis=axis)
    np.testing.assert_array_equal(np.sort(values, axis=axis), ordered)
    v, o = np.moveaxis(values, axis, -1), np.moveaxis(ordered, axis, -1)
    for k in np.atleast_1d(kth) % max(v.shape[-1], 1):
        np.testing.assert_array_equal(v[..., k], o[..., k])
        assert all(_not_after(v[..., i], v[..., k]) for i in range(k))
        assert all(_not_after(v[..., k], v[..., i]) for i in range(k + 1, v.shape[-1]))


def _check_argpartition(got, want, a, kth, axis=-1, **kw):
    """An argpartition's indices: a permutation along ``axis`` whose values are partitioned."""
    _same_meta(got, want)
    g = np.asarray(got)
    np.testing.assert_array_equal(np.sort(g, axis=axis), np.sort(np.asarray(want), axis=axis))
    _check_partition(np.take_along_axis(a, g, axis), np.sort(a, axis=axis), a, kth, axis)


def _check_qr(got, want, a, *_, **kw):
    _same_meta(got, want)
    if kw.get("mode", "reduced") == "r":     # (R's rows are unique up to a unit factor)
        np.testing.assert_allclose(np.abs(got), np.abs(want), rtol=_tol(a.dtype),
                                   atol=_tol(a.dtype))
        return
    q, r = got
    np.testing.assert_allclose(q @ r, a, rtol=_tol(a.dtype), atol=_tol(a.dtype) * 10)
    np.testing.assert_allclose(np.triu(r), r)


def _check_svd(got, want, a, *_, **kw):
    _same_meta(got, want)
    if kw.get("compute_uv", True) is False:
        np.testing.assert_allclose(got, want, rtol=_tol(a.dtype), atol=_tol(a.dtype))
        return
    u, s, vh = got
    np.testing.assert_allclose(s, want[1], rtol=_tol(a.dtype), atol=_tol(a.dtype))
    k = s.shape[-1]
    rec = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(rec, a, rtol=_tol(a.dtype), atol=_tol(a.dtype) * 10)


def _check_eigh(got, want, a, *_, **kw):
    _same_meta(got, want)
    w, v = got
    np.testing.assert_allclose(w, want[0], rtol=_tol(a.dtype), atol=_tol(a.dtype) * 10)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=_tol(a.dtype),
                               atol=_tol(a.dtype) * 100)


def _check_eig(got, want, a, *_, **kw):
    _check_eigvals(got[0], want[0], a)
    w, v = got
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=_tol(a.dtype),
                               atol=_tol(a.dtype) * 100)


def _check_eigvals(got, want, a, *_, **kw):
    _same_meta(got, want)     # (eigenvalues in no set order: compared sorted)
    np.testing.assert_allclose(np.sort(got.astype(complex), axis=-1),
                               np.sort(want.astype(complex), axis=-1),
                               rtol=_tol(a.dtype), atol=_tol(a.dtype) * 10)


def _check_set(got, want, *_, **kw):
    """``unique_values``: NumPy 2.3+ leaves the order unspecified (hash-based); compared
    sorted."""
    _same_meta(got, want)
    np.testing.assert_array_equal(np.sort(got), np.sort(want))


# ------------------------------------------------------------------------------------ cases
_sq = _wc((3, 3), C128)
_pd = _spd((3, 3), C128)
CASES = {
    "products": [
        _c("matmul", _arr((3, 4), C64), _arr((4, 2), C64, 1)),
        _c("@", _arr((3, 4), C128), _arr((4,), F64, 1)),
        _c("matmul", np.zeros((0, 3)), np.zeros((3, 2))),
        _c("matmul", np.zeros((2, 0), C64), np.zeros((0, 3), C64)),
        _c("@", _arr((2, 1, 3, 4), C64), _arr((3, 4, 2), C64, 1)),
        _c("@", np.zeros((2, 0, 3)), np.zeros((3, 4))),
        _c("matmul", _arr((2, 3, 4)), _arr((4,), F64, 1)),
        _c("matmul", _arr((2, 3)), _arr((2, 2, 3))),          # ValueError (core dims)
        _c("dot", _arr((3, 4), C64), _arr((4,), C64, 1)),
        _c("dot", np.zeros(0, C128), np.zeros(0, C128)),
        _c("dot", np.zeros((0, 3)), np.zeros((3, 0))),
        _c("dot", _arr((2, 3, 4)), _arr((5, 4, 2), F64, 1)),
        _c("vdot", _arr((2, 3), C128), _arr((3, 2), C128, 1)),
        _c("vdot", np.zeros(0, C64), np.zeros(0, C64)),
        _c("vdot", _arr((2, 3, 2), C64), _arr((12,), C64, 1)),
        _c("vecdot", _arr((3, 4), C64), _arr((4,), C64, 1)),
        _c("vecdot", np.zeros((0, 3)), np.zeros((0, 3))),
        _c("vecdot", np.zeros((2, 0), C128), np.zeros((2, 0), C128)),
        _c("vecdot", _arr((2, 3, 4), C128), _arr((3, 4), C128, 1), axis=-1),
        _c("inner", _arr((3, 4), C64), _arr((2, 4), C64, 1)),
        _c("inner", np.zeros(0), np.zeros(0)),
        _c("inner", np.zeros((2, 0), C64), np.zeros((3, 0), C64)),
        _c("inner", _arr((2, 3, 4)), _arr((5, 4), F64, 1)),
        _c("tensordot", _arr((3, 4), C128), _arr((4, 2), C128, 1), axes=1),
        _c("tensordot", np.zeros((2, 0)), np.zeros((0, 3)), axes=1),
        _c("tensordot", _arr((2, 3, 4), C64), _arr((3, 4, 5), C64, 1), axes=2),
        _c("tensordot", _arr((2, 3, 4)), _arr((4, 2, 3), F64, 1), axes=([1, 2], [2, 0])),
        _c("einsum", "ij,jk->ik", _arr((3, 4), C64), _arr((4, 2), C64, 1)),
        _c("einsum", "ij,jk->ik", np.zeros((2, 0)), np.zeros((0, 3))),
        _c("einsum", "ii", np.zeros((0, 0), C128)),
        _c("einsum", "bij,bjk->bik", _arr((2, 3, 4), C128), _arr((2, 4, 2), C128, 1)),
        _c("einsum", "...ii->...i", _arr((2, 3, 3, 3))),
        _c("kron", _arr((2, 2), C64), _arr((2, 3), C64, 1)),
        _c("kron", np.zeros((0, 2)), _arr((2, 2))),
        _c("kron", _arr((2, 2, 2), C128), _arr((2, 3), F64, 1)),
        _c("trace", _arr((3, 4), C64)),
        _c("trace", np.zeros((0, 0), C128)),
        _c("trace", np.zeros((2, 0, 3))),
        _c("trace", _arr((2, 3, 3), C128), axis1=1, axis2=2),
        _c("trace", _arr((4,))),                               # ValueError (1-d)
        _c("diagonal", _arr((3, 4), C64), offset=1),
        _c("diagonal", np.zeros((0, 3), C128)),
        _c("diagonal", _arr((2, 3, 4)), axis1=1, axis2=2),
        _c("cross", _arr((3,), C64), _arr((3,), C64, 1)),
        _c("cross", np.zeros((0, 3)), np.zeros((0, 3))),
        _c("cross", _arr((2, 4, 3), C128), _arr((4, 3), C128, 1)),
        _c("cross", _arr((2, 4, 2)), _arr((4, 2), F64, 1)),    # ValueError (2-vectors)
    ],
    "linalg": [
        _c("linalg.cholesky", _pd.astype(C64)),
        _c("linalg.cholesky", _spd((2, 3, 3), C128), upper=True),
        _c("linalg.cholesky", np.zeros((0, 0), C64)),
        _c("linalg.cholesky", np.zeros((2, 0, 0))),
        _c("linalg.cholesky", _arr((2, 3))),                   # LinAlgError (not square)
        _c("linalg.det", _sq),
        _c("linalg.det", np.zeros((0, 0), C64)),
        _c("linalg.det", np.zeros((2, 0, 0))),
        _c("linalg.det", _wc((2, 2, 3, 3), C64)),
        _c("linalg.eigh", _pd, check=_check_eigh),
        _c("linalg.eigh", np.zeros((0, 0), C64), check=_check_eigh),
        _c("linalg.eigh", _spd((2, 3, 3), C64), UPLO="U", check=_check_eigh),
        _c("linalg.eigvalsh", _pd.astype(C64)),
        _c("linalg.eigvalsh", np.zeros((2, 0, 0))),
        _c("linalg.eigvalsh", _spd((2, 2, 3, 3), C128)),
        _c("linalg.inv", _sq.astype(C64)),
        _c("linalg.inv", np.zeros((0, 0), C128)),
        _c("linalg.inv", _wc((2, 3, 3), C128)),
        _c("linalg.inv", np.zeros((3, 3))),                    # LinAlgError (singular)
        _c("linalg.matrix_norm", _arr((3, 4), C64)),
        _c("linalg.matrix_norm", _arr((2, 3, 4), C128), ord=2),
        _c("linalg.matrix_norm", _arr((2, 3, 4), C64), ord="nuc", keepdims=True),
        _c("linalg.matrix_norm", np.zeros((0, 0), C128)),
        _c("linalg.matrix_norm", np.zeros((2, 0, 3)), ord=1),
        _c("linalg.matrix_norm", np.zeros((0, 3)), ord=2),
        _c("linalg.matrix_power", _sq.astype(C64), 3),
        _c("linalg.matrix_power", _wc((2, 3, 3), C128), -2),
        _c("linalg.matrix_power", np.zeros((0, 0), C64), 2),
        _c("linalg.matrix_power", np.zeros((2, 0, 0)), 0),
        _c("linalg.matrix_rank", _arr((3, 4), C128)),
        _c("linalg.matrix_rank", _arr((2, 3, 4), C64)),
        _c("linalg.matrix_rank", np.zeros((0, 0))),
        _c("linalg.matrix_rank", np.zeros((2, 0, 3), C64)),
        _c("linalg.pinv", _arr((3, 4), C128)),
        _c("linalg.pinv", _arr((2, 4, 3), C64)),
        _c("linalg.pinv", np.zeros((0, 3), C64)),
        _c("linalg.pinv", np.zeros((2, 3, 0))),
        _c("linalg.qr", _arr((4, 3), C128), check=_check_qr),
        _c("linalg.qr", _arr((2, 3, 4), C64), mode="complete", check=_check_qr),
        _c("linalg.qr", _arr((2, 4, 3), C128), mode="r", check=_check_qr),
        _c("linalg.qr", np.zeros((0, 3), C64), check=_check_qr),
        _c("linalg.qr", np.zeros((2, 3, 0)), mode="complete", check=_check_qr),
        _c("linalg.slogdet", _sq.astype(C64)),
        _c("linalg.slogdet", np.zeros((0, 0), C128)),
        _c("linalg.slogdet", _wc((2, 3, 3), C128)),
        _c("linalg.solve", _sq, _arr((3,), C128, 1)),
        _c("linalg.solve", _wc((2, 3, 3), C64), _arr((2, 3, 2), C64, 1)),
        _c("linalg.solve", _wc((2, 3, 3), F64), _arr((2, 3), F64, 1)),
        _c("linalg.solve", np.zeros((0, 0), C64), np.zeros((0,), C64)),
        _c("linalg.solve", np.zeros((2, 0, 0)), np.zeros((2, 0, 3))),
        _c("linalg.svd", _arr((3, 4), C64), check=_check_svd),
        _c("linalg.svd", _arr((2, 4, 3), C128), full_matrices=False, check=_check_svd),
        _c("linalg.svd", _arr((2, 3, 4), C64), compute_uv=False, check=_check_svd),
        _c("linalg.svd", np.zeros((0, 3), C64), check=_check_svd),
        _c("linalg.svd", np.zeros((2, 3, 0)), full_matrices=False, check=_check_svd),
        _c("linalg.svdvals", _arr((3, 4), C128)),
        _c("linalg.svdvals", _arr((2, 4, 3), C64)),
        _c("linalg.svdvals", np.zeros((2, 0, 3))),
        _c("linalg.vector_norm", _arr((3, 4), C64)),
        _c("linalg.vector_norm", _arr((2, 3, 4), C128), axis=(0, 2), ord=3),
        _c("linalg.vector_norm", _arr((2, 3, 4), C64), axis=-1, ord=np.inf, keepdims=True),
        _c("linalg.vector_norm", np.zeros((0,), C128)),
        _c("linalg.vector_norm", np.zeros((2, 0)), axis=1, ord=1),
        _c("linalg.vector_norm", np.zeros((0,)), ord=np.inf),
        _c("linalg.norm", _arr((3, 4), C128), "nuc"),
        _c("linalg.norm", _arr((2, 3, 4), C64), axis=(1, 2)),
        _c("linalg.norm", _arr((2, 3, 4), C128), ord=1, axis=-1),
        _c("linalg.norm", np.zeros((0, 3), C64)),
        _c("linalg.norm", np.zeros((2, 0)), ord=-np.inf, axis=1),
        _c("linalg.eig", _sq, check=_check_eig),
        _c("linalg.eig", _wc((2, 3, 3), C64), check=_check_eig),
        _c("linalg.eig", np.zeros((0, 0), C64), check=_check_eig),
        _c("linalg.eig", np.zeros((2, 0, 0)), check=_check_eig),
        _c("linalg.eigvals", _wc((2, 3, 3), C128), check=_check_eigvals),
        _c("linalg.eigvals", np.zeros((0, 0)), check=_check_eigvals),
        _c("linalg.lstsq", _arr((5, 3), C128), _arr((5, 2), C128, 1), rcond=None),
        _c("linalg.lstsq", _arr((5, 3), C64), _arr((5,), C64, 1), rcond=None),
        _c("linalg.lstsq", np.zeros((0, 3), C64), np.zeros((0,), C64), rcond=None),
        _c("linalg.lstsq", np.zeros((3, 0)), np.zeros((3, 2)), rcond=None),
        _c("linalg.lstsq", _arr((2, 5, 3)), _arr((2, 5), F64, 1)),   # LinAlgError (3-d)
        _c("linalg.lstsq", np.zeros((0, 0), C128), np.zeros((0, 0), C128), rcond=None),
        _c("linalg.cond", _sq.astype(C64)),
        _c("linalg.cond", _wc((2, 3, 3), C128), "fro"),
        _c("linalg.cond", np.zeros((0, 0))),                       # LinAlgError (empty)
        _c("linalg.multi_dot", [_arr((2, 3), C64), _arr((3, 4), C64, 1), _arr((4,), C64, 2)]),
        _c("linalg.multi_dot", [np.zeros((0, 3)), _arr((3, 4)), _arr((4, 2))]),
        _c("linalg.multi_dot", [_arr((2, 2, 3)), _arr((3, 4)), _arr((4,))]),  # LinAlgError
        _c("linalg.outer", _arr((3,), C128), _arr((2,), C128, 1)),
        _c("linalg.outer", np.zeros(0, C64), _arr((2,), C64)),
        _c("linalg.outer", _arr((2, 3, 2)), _arr((2,))),          # ValueError (1-d only)
        _c("linalg.tensorinv", _wc((6, 6), C128).reshape(6, 2, 3), ind=1),
        _c("linalg.tensorinv", np.zeros((0, 2, 0)), ind=1),          # ValueError (NumPy's)
        _c("linalg.tensorsolve", _wc((6, 6), C64).reshape(2, 3, 6), _arr((2, 3), C64, 1)),
        _c("linalg.tensorsolve", np.zeros((0, 2, 0), C64), np.zeros((0, 2), C64)),
        _c("linalg.matrix_transpose", _arr((2, 3, 4), C64)),
        _c("linalg.matrix_transpose", np.zeros((0, 3))),
        _c("linalg.trace", _arr((2, 3, 3), C128), offset=1),
        _c("linalg.trace", np.zeros((2, 0, 3), C64)),
        _c("linalg.diagonal", np.zeros((2, 0, 3), C64)),
        _c("linalg.cross", _arr((2, 3), C64), _arr((3,), C64, 1)),
        _c("linalg.cross", np.zeros((2, 0, 3)), _arr((3,))),
        _c("linalg.matmul", _arr((2, 3, 4), C128), np.zeros((4, 0), C128)),
        _c("linalg.vecdot", _arr((2, 3), C64), _arr((2, 3), C64, 1)),
        _c("linalg.vecdot", np.zeros((2, 0, 3)), _arr((3,))),
        _c("linalg.tensordot", np.zeros((0, 2), C64), _arr((2, 3), C64), axes=1),
        _c("linalg.tensordot", _arr((2, 3, 4)), _arr((4, 3, 2)), axes=([1, 2], [1, 0])),
    ],
    "fft": [
        *[_c(f"fft.{n}", _arr((2, 3, 8), C64), norm=m)
          for n in ("fft", "ifft") for m in ("backward", "ortho", "forward")],
        _c("fft.fft", _arr((5,), C128), n=8, axis=0),
        _c("fft.fft", np.zeros((0,), C64)),                       # ValueError
        _c("fft.fft", np.zeros((3, 0)), axis=0),
        _c("fft.ifft", np.zeros((0, 4), C128), norm="ortho"),
        *[_c("fft.rfft", _arr((2, 3, 7)), norm=m) for m in ("backward", "ortho", "forward")],
        _c("fft.rfft", _arr((4,), C64)),                          # TypeError (complex)
        _c("fft.rfft", np.zeros((0, 6), np.float32), norm="forward"),
        *[_c("fft.irfft", _arr((2, 3, 5), C128), norm=m) for m in ("backward", "ortho", "forward")],
        _c("fft.irfft", _arr((2, 3, 5), C64), n=9),
        _c("fft.irfft", np.zeros((0,), C64)),                     # ValueError
        _c("fft.irfft", np.zeros((0, 4), C64), norm="ortho"),
        *[_c(f"fft.{n}", _arr((2, 4, 6), C128), norm=m)
          for n in ("fftn", "ifftn", "fft2") for m in ("ortho", "forward")],
        _c("fft.fftn", _arr((2, 4, 6), C64), axes=(0, 2), s=(3, 8)),
        _c("fft.fft2", np.zeros((2, 0, 3), C64), axes=(0, 2)),
        _c("fft.ifft2", _arr((2, 3, 4), C64), norm="ortho"),
        _c("fft.ifft2", np.zeros((2, 0, 3), C64)),                # ValueError
        _c("fft.fftn", np.zeros((3, 0), C128), axes=(0,)),
        _c("fft.ifftn", np.zeros((0, 4), C128)),                  # ValueError
        *[_c("fft.rfftn", _arr((2, 4, 6)), norm=m) for m in ("ortho", "forward")],
        _c("fft.rfftn", _arr((2, 4, 6), np.float32), axes=(0, 1)),
        _c("fft.rfftn", _arr((2, 4), C64)),                       # TypeError (complex)
        _c("fft.rfftn", np.zeros((0, 4))),                        # ValueError
        _c("fft.rfft2", _arr((2, 4, 6)), norm="ortho"),
        _c("fft.rfft2", _arr((2, 3), C128)),                      # TypeError (complex)
        _c("fft.rfft2", np.zeros((0, 3, 4), np.float32)),
        *[_c("fft.irfftn", _arr((2, 4, 6), C64), norm=m) for m in ("ortho", "forward")],
        _c("fft.irfftn", _arr((2, 4, 6), C128), s=(4, 9)),
        _c("fft.irfft2", _arr((2, 4, 6), C128), norm="forward"),
        _c("fft.irfft2", np.zeros((0, 3), C64)),                  # ValueError
        _c("fft.irfftn", np.zeros((2, 0, 3), C64), axes=(0, 2)),
        *[_c("fft.hfft", _arr((2, 3, 5), C64), norm=m) for m in ("backward", "ortho", "forward")],
        _c("fft.hfft", np.zeros((0,), C128)),                     # ValueError
        _c("fft.hfft", np.zeros((0, 4), C64), n=6),
        *[_c("fft.ihfft", _arr((2, 3, 7)), norm=m) for m in ("backward", "ortho", "forward")],
        _c("fft.ihfft", _arr((4,), C64)),                         # TypeError (complex)
        _c("fft.ihfft", np.zeros((0, 5), np.float32)),
        _c("fft.fftfreq", 7, 0.5),
        _c("fft.fftfreq", 0),                                     # ZeroDivisionError
        _c("fft.rfftfreq", 8, 2.0),
        _c("fft.rfftfreq", 1),
        _c("fft.fftshift", _arr((2, 3, 5), C64)),
        _c("fft.fftshift", np.zeros((0, 3), C128), axes=1),
        _c("fft.ifftshift", _arr((2, 3, 5), C128), axes=(0, 2)),
        _c("fft.ifftshift", np.zeros((2, 0))),
    ],
    "sorting": [
        _c("sort", _arr((7,), C64) * np.array([1, 1, 1j, 1, 1, 1j, 1], C64)),
        _c("sort", np.zeros((3, 0), C128), axis=0),
        _c("sort", _arr((2, 3, 5)), axis=1),
        _c("sort", _arr((2, 3, 5), C128), axis=None),
        _c("argsort", np.array([1 + 1j, 1, 1 + 1j, 1 - 1j, 1, 0j], C128), stable=True),
        _c("argsort", np.zeros((0,), C64), stable=True),
        _c("argsort", np.zeros((2, 0, 3)), axis=1),
        _c("argsort", _arr((2, 3, 6), np.int8), axis=-1, stable=True),
        _c("argsort", _arr((2, 3, 4)), axis=None, stable=True),
        _c("partition", _arr((2, 3, 6), C64), 2, check=_check_partition),
        _c("partition", np.zeros((0,), C128), 0),                  # ValueError (kth)
        _c("partition", np.zeros((2, 0)), 1, axis=0),
        _c("partition", _arr((2, 3, 6)), (1, 4), axis=2, check=_check_partition),
        _c("argpartition", _arr((2, 3, 6), C128), 3, check=_check_argpartition),
        _c("argpartition", np.zeros((3, 0), C64), 0, axis=0),
        _c("argpartition", _arr((2, 5, 3)), -1, axis=1, check=_check_argpartition),
        _c("searchsorted", np.sort(_arr((6,), C64)), _arr((2, 3), C64, 1)),
        _c("searchsorted", np.zeros(0, C128), _arr((3,), C128)),
        _c("searchsorted", _arr((5,)), np.zeros((2, 0))),
        _c("searchsorted", np.sort(_arr((6,))), _arr((2, 3, 2), F64, 1), side="right"),
        _c("searchsorted", _arr((2, 3)), _arr((2,))),              # ValueError (2-d a)
        _c("unique", np.array([1j, 1, 1j, 2, 1 - 1j, 1], C64), return_index=True,
           return_inverse=True, return_counts=True),
        _c("unique", np.zeros((0,), C128), return_counts=True),
        _c("unique", np.zeros((2, 0)), return_inverse=True),
        _c("unique", _arr((2, 3, 4), np.int8), return_inverse=True),
        _c("unique", np.array([[1, 2], [1, 2], [0, 1]]), axis=0, return_counts=True),
        *[_c(f"unique_{k}", np.array([[1j, 1], [1j, 2 + 0j]], C128))
          for k in ("all", "counts", "inverse")],
        _c("unique_values", np.array([[1j, 1], [1j, 2 + 0j]], C128), check=_check_set),
        *[_c(f"unique_{k}", np.zeros((0, 3))) for k in ("all", "counts", "inverse", "values")],
        _c("unique_values", _arr((2, 2, 3), np.int8), check=_check_set),
        *[_c(f"unique_{k}", _arr((2, 2, 3), np.int8)) for k in ("all", "counts", "inverse")],
        _c("isin", np.array([1j, 2, 3 + 0j], C64), np.array([2, 1j], C128)),
        _c("isin", np.zeros((0, 2)), _arr((3,))),
        _c("isin", _arr((3,), np.int8), np.zeros(0, np.int8)),
        _c("isin", _arr((2, 3, 4), np.int8), _arr((2, 2), np.int8, 1), invert=True),
    ],
    "cumulative": [
        *[_c(n, _arr((2, 3, 4), C64), axis=1) for n in ("cumsum", "cumprod")],
        *[_c(n, _arr((2, 3, 4), C128), axis=-1, include_initial=True)
          for n in ("cumulative_sum", "cumulative_prod")],
        *[_c(n, np.zeros((0,), C64)) for n in ("cumsum", "cumprod")],
        *[_c(n, np.zeros((2, 0)), axis=1) for n in
          ("cumsum", "cumprod", "cumulative_sum", "cumulative_prod")],
        _c("cumulative_sum", np.zeros((0,), C128), include_initial=True),
        _c("cumsum", _arr((2, 3, 4))),
        _c("cumprod", _arr((2, 3, 4), np.int8), axis=0),
        _c("cumulative_sum", _arr((2, 3, 4))),                    # ValueError (axis needed)
        _c("diff", _arr((2, 3, 5), C64), n=2, axis=1),
        _c("diff", np.zeros((0,), C128)),
        _c("diff", np.zeros((2, 0)), axis=0),
        _c("diff", _arr((2, 3, 4)), prepend=0, append=_arr((2, 3, 1), F64, 1)),
        _c("gradient", _arr((6,), C128), 0.5),
        _c("gradient", _arr((2, 3, 5), C64), axis=(0, 2)),
        _c("gradient", np.zeros((0,))),                            # ValueError
        _c("gradient", _arr((2, 3, 4)), 2.0, edge_order=2),
    ],
    "counting": [
        _c("histogram", _arr((6,), C64)),
        _c("histogram", np.zeros((0,)), bins=3),
        _c("histogram", np.zeros((0,)), bins=3, range=(0, 2)),
        _c("histogram", _arr((2, 3, 4)), bins=5, density=True),
        _c("bincount", _arr((4,), C64)),                          # TypeError
        _c("bincount", np.zeros(0, np.int64)),
        _c("bincount", np.zeros(0, np.int64), minlength=3),
        # (NumPy looks at no weights where there are no values: their dtype, their length;
        # cuda's checks raised TypeError, ValueError)
        _c("bincount", np.zeros(0, np.int64), weights=np.zeros(0, C128)),
        _c("bincount", np.zeros(0, np.int64), weights=np.ones(3), minlength=2),
        _c("bincount", np.array([0, 2, 1, 2]), weights=np.array([1j, 1, 2, 1 - 1j])),
        _c("bincount", np.ones((2, 3, 2), np.int64)),              # ValueError (1-d only)
        _c("digitize", _arr((4,), C64), np.array([0.0, 1.0])),    # TypeError
        _c("digitize", np.zeros((0,)), np.array([0.0, 1.0])),
        _c("digitize", _arr((3,)), np.zeros(0)),
        _c("digitize", _arr((2, 3, 4)), np.array([-1.0, 0, 1]), right=True),
    ],
    "statistics": [
        _c("median", _arr((2, 3, 5), C64), axis=1),
        _c("median", _arr((2, 3, 4), C128)),
        _c("median", np.zeros((0,))),
        _c("median", np.zeros((2, 0), C64), axis=1),
        _c("median", _arr((2, 3, 4)), axis=(0, 2), keepdims=True),
        *[_c(n, _arr((4,), C64), q) for n, q in (("percentile", 50), ("quantile", 0.5))],
        *[_c(n, np.zeros((0,)), q) for n, q in (("percentile", 30), ("quantile", 0.3))],
        *[_c(n, np.zeros((3, 0)), q, axis=0) for n, q in (("percentile", [10, 90]),
                                                          ("quantile", [0.1, 0.9]))],
        _c("percentile", _arr((2, 3, 5)), [25, 75], axis=-1, method="nearest"),
        _c("quantile", _arr((2, 3, 5), np.int8), 0.4, axis=(0, 2), keepdims=True),
        _c("cov", _arr((3, 5), C64)),
        _c("cov", _arr((3, 5), C128), _arr((2, 5), C128, 1), rowvar=True),
        _c("cov", np.zeros((0, 3))),
        _c("cov", np.zeros((2, 0), C64)),
        _c("cov", _arr((2, 3, 4), C64)),                           # ValueError (3-d)
        _c("corrcoef", _arr((3, 5), C128)),
        _c("corrcoef", np.zeros((0, 3))),
        _c("corrcoef", _arr((2, 3, 4))),                           # ValueError (3-d)
        *[_c(n, _arr((5,), C64), _arr((3,), C64, 1), mode=m) for n in ("convolve", "correlate")
          for m in ("full", "same", "valid")],
        *[_c(n, np.zeros((0,)), _arr((3,))) for n in ("convolve", "correlate")],  # ValueError
        *[_c(n, _arr((2, 3, 2)), _arr((3,))) for n in ("convolve", "correlate")],  # ValueError
    ],
}

def _resolve(module, name):
    if name == "@":
        return operator.matmul
    for part in name.split("."):
        module = getattr(module, part)
    return module


def _lazy(x, device, pending=False):
    """NumPy arrays in ``x`` as lazy arrays on ``device``; ``pending``: computed ones (a
    kernel's ``x + 0`` of their dtype), which the library calls compute first."""
    if isinstance(x, np.ndarray):
        y = la.asarray(x, device=device)
        return y + np.zeros((), x.dtype) if pending else y
    if isinstance(x, list):
        return [_lazy(v, device, pending) for v in x]
    return x


def _host(x, device):
    """A lazy result as NumPy (its device checked); tuples (named too) field by field."""
    if isinstance(x, tuple):
        fields = [_host(v, device) for v in x]
        return type(x)(*fields) if hasattr(x, "_fields") else tuple(fields)
    if isinstance(x, la.LazyArray):
        assert x.device == device, (x.device, device)
        return x.to_numpy()
    return x


def _same_meta(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), (type(got), type(want))
        for g, w in zip(got, want):
            _same_meta(g, w)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert (g.dtype, g.shape) == (w.dtype, w.shape), ((g.dtype, g.shape), (w.dtype, w.shape))


def _close(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), (type(got), type(want))
        if hasattr(want, "_fields"):        # NumPy's named results keep their names
            assert getattr(got, "_fields", None) == want._fields
        for g, w in zip(got, want):
            _close(g, w)
        return
    _same_meta(got, want)
    g, w = np.asarray(got), np.asarray(want)
    if w.dtype.kind in "fc":
        tol = _tol(w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


def _run(group, index, device, pending=False):
    name, args, kw, check = CASES[group][index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (empty medians, covariances: NumPy's warnings)
        try:
            want = _resolve(np, name)(*args, **kw)
        except Exception as e:
            with pytest.raises(type(e)):
                _resolve(la, name)(*_lazy(list(args), device, pending), **kw)
            return
        got = _host(_resolve(la, name)(*_lazy(list(args), device, pending), **kw), device)
    if check is not None:
        check(got, want, *args, **kw)
    else:
        _close(got, want)


_PARAMS = [pytest.param(g, i, id=f"{g}-{i}-{CASES[g][i][0]}")
           for g in CASES for i in range(len(CASES[g]))]


@pytest.mark.parametrize("how", ["lazy", "pending", "eager"])
@pytest.mark.parametrize("group,index", _PARAMS)
def test_cpu(group, index, how):
    with la.config(device="cpu", mode="eager" if how == "eager" else "lazy"):
        _run(group, index, "cpu", pending=how == "pending")


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("group,index", _PARAMS)
def test_cuda(group, index):
    with la.config(device="cuda", mode="lazy"):
        _run(group, index, "cuda")
