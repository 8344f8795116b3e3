"""``lazyarr.linalg``'s decompositions and solvers, lazyarr's own: ``cholesky``, ``det``,
``eig``, ``eigh``, ``eigvals``, ``eigvalsh``, ``inv``, ``lstsq``, ``matrix_power``,
``matrix_rank``, ``pinv``, ``qr``, ``slogdet``, ``solve``, ``svd``, ``svdvals``, ``cond``,
``multi_dot``, ``tensorinv`` and ``tensorsolve``, with NumPy 2.4's signatures (which take the
array API's keywords too: ``pinv(rtol=)``, ``matrix_rank(rtol=)``, ``cholesky(upper=)``),
results (the named tuples ``EighResult``, ``QRResult``, ``SlogdetResult``, ``SVDResult``,
``EigResult``; ``lstsq``'s plain tuple), dtypes and exceptions.

What NumPy checks from the shapes and dtypes alone (``LinAlgError`` for fewer than two
dimensions or a non-square matrix, ``TypeError`` for float16, a gufunc's ``ValueError`` for
operands that do not fit) is checked here, before any pending operand is computed, with
NumPy's messages (a gufunc's own are asked of NumPy on zero-stride stand-ins of the operands:
lazyarr/_functions/_numpy_checks.py). Then one library call per function:

* on the CPU it is NumPy's own ``numpy.linalg`` function on the computed operands: NumPy's
  values, bits and errors (``Singular matrix``, ``Matrix is not positive definite``...).
  NumPy's gufuncs copy each matrix into a Fortran-ordered work buffer of their own, so a
  pending operand is computed by its fused kernel into its own memory first (the fallback's
  way), which costs what NumPy's input would;
* on cuda it is CuPy's (cuSOLVER/cuBLAS) function, made NumPy's: run under
  ``cupyx.errstate(linalg="raise")`` (CuPy's default returns NaN or garbage for a singular
  or non-positive-definite matrix) with its ``LinAlgError`` raised again with NumPy's
  message; NumPy's ``SVD did not converge`` for non-finite input, which cuSOLVER does not
  report; ``solve``'s NumPy 2 batch broadcasting, ``eigh``'s lowercase
  ``UPLO``, ``svd(hermitian=True)``, ``eig``'s real results for real eigenvalues, ``lstsq``
  (CuPy's differs in ``rcond`` and residuals) and ``cond`` written after NumPy's algorithms
  with CuPy's functions. CuPy computes float32 and complex64 in their own precision (NumPy
  in double precision, rounded at the end): values agree to that precision. ``eig`` and
  ``eigvals`` are cuSOLVER's ``geev`` (CuPy 14); where it is not available (cuSOLVER before
  11.7, CUDA 12.6) they run NumPy's on a host copy, the results copied back. A pending 2-D
  operand of ``inv`` or ``solve`` is computed by its kernel straight into the matrix
  cuSOLVER's ``getrf`` factors in place (``cupyx.lapack.gesv``), the copy CuPy's
  ``inv``/``solve`` would make.

``pinv``, ``matrix_rank``, ``matrix_power``, ``multi_dot``, ``tensorinv`` and
``tensorsolve`` are NumPy's algorithms written with lazyarr's functions around those calls
(``pinv``'s cut-off and reciprocals fuse into one kernel, ``matrix_rank``'s count is a fused
reduction, the products are lazyarr's ``matmul``). Results are computed LazyArrays on the
operands' device, so ``la.linalg.inv(a) @ b + 1`` fuses the ``+ 1`` as with any array. Each
library call is recorded for ``la.explain`` with the bytes it read and wrote and the usual
textbook FLOP count of its factorization (:func:`_flops`). Like ``matmul`` and ``sort``, the
calls are library calls, not fused kernels: ``la.config(fallback="warn" | "error")`` reports
them.

Computed CPU operands (a loop's ``inv`` of a small matrix, NPBench's ``lu``, ``ludcmp``) take
a short way (:func:`_on_computed`): NumPy's function on their memory at once, before any of
the checks above, which NumPy's call makes itself with the same messages; the results and
the record (FLOPs memoized by the shapes) are the general path's. The general path's walks
cost ~15 µs a call, three times a 4x4 ``inv`` (docs/notes/cpu.rst, 2026-12-07, thirty-ninth
session). Not while ``la.explain`` or ``la.jit`` runs a call, nor under
``la.config(fallback="warn" | "error")``: those go the general way.
"""
from __future__ import annotations

import contextlib
import functools
import math
import operator
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import _devices, _fallback
from .._array import LazyArray
from .._stack import user_stacklevel
from ._building import atleast_2d, eye
from ._creation import asarray, copy, empty, zeros
from ._elementwise import FUNCTIONS as _EW
from ._linalg import dot, matmul
from ._manipulation import broadcast_to, ravel, reshape, swapaxes, transpose
from ._nanfunctions import count_nonzero
from ._numpy_checks import raise_as_numpy

LinAlgError = np.linalg.LinAlgError
_where = _EW["where"]

#: NumPy's ``_realType`` of each inexact dtype linalg takes (float16 is not one)
_REAL = {np.dtype(t): np.dtype(r) for t, r in ((np.float32, np.float32),
                                                  (np.float64, np.float64),
                                                  (np.complex64, np.float32),
                                                  (np.complex128, np.float64))}
_QR_MODES = ("reduced", "complete", "r", "raw")
_MATRIX_NORMS = (1, -1, math.inf, -math.inf, "fro", "f", "nuc")


class _NoValue:
    """NumPy's ``_NoValue``: ``pinv``'s ``rtol`` not given (``rtol=None`` means something)."""

    def __repr__(self) -> str:
        return "<no value>"


_NOVALUE = _NoValue()


# ------------------------------------------------------------------------------ NumPy's checks
def _operands(*values: Any) -> list[LazyArray]:
    """The arguments as LazyArrays on one device: that of the LazyArrays among them
    (``ValueError`` for two devices, as the fallback's), others converted onto it."""
    device = _fallback._device(values, {})
    return [v if isinstance(v, LazyArray) else asarray(v, device=device) for v in values]


def _assert_stacked_2d(*arrays: LazyArray) -> None:
    for a in arrays:
        if a.ndim < 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least "
                              "two-dimensional")


def _assert_stacked_square(*arrays: LazyArray) -> None:
    _assert_stacked_2d(*arrays)
    for a in arrays:
        if a.shape[-1] != a.shape[-2]:
            raise LinAlgError("Last 2 dimensions of the array must be square")


def _assert_2d(*arrays: LazyArray) -> None:
    for a in arrays:
        if a.ndim != 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be "
                              "two-dimensional")


def _result_type(*dtypes: np.dtype) -> np.dtype:
    """NumPy's ``_commonType``'s result type: float32 for float32 (complex64 for complex64)
    operands alone, float64 (complex128) as soon as one is 64-bit, an integer or bool;
    float16 is NumPy's TypeError. (NumPy computes in double precision and casts its results
    to this type; CuPy computes in it.)"""
    double = is_complex = False
    for dt in dtypes:
        dt = np.dtype(dt)
        if dt.kind in "fc":
            real = _REAL.get(dt)
            if real is None:
                raise TypeError(f"array type {dt.name} is unsupported in linalg")
            is_complex |= dt.kind == "c"
            double |= real == np.float64
        else:
            double = True
    if is_complex:
        return np.dtype(np.complex128 if double else np.complex64)
    return np.dtype(np.float64 if double else np.float32)


def _real(dt: np.dtype) -> np.dtype:
    return _REAL[np.dtype(dt)]


def _complex(dt: np.dtype) -> np.dtype:
    return np.dtype(np.complex128 if _real(dt) == np.float64 else np.complex64)


def _stack(x: LazyArray) -> int:
    """The number of matrices in a stack ``x`` (its batch dimensions' product)."""
    return math.prod(x.shape[:-2])


#: The usual textbook FLOP counts (Golub & Van Loan, *Matrix Computations*, 4th ed.: a
#: multiply-add counted twice, as the matmul records have it; complex arithmetic counted as
#: real) of one matrix ``m x n`` (``lo``/``hi``: the smaller/larger of the two; ``k``:
#: right-hand sides): estimates for ``la.explain``, about the work LAPACK's and cuSOLVER's
#: blocked codes do.
_COUNTS = {
    "inv": lambda m, n, lo, hi, k: 2 * n ** 3,                 # LU, then the inverse from it
    "solve": lambda m, n, lo, hi, k: 2 * n ** 3 / 3 + 2 * n * n * k,   # LU, two triangular solves
    "lu": lambda m, n, lo, hi, k: 2 * n ** 3 / 3,              # det, slogdet
    "cholesky": lambda m, n, lo, hi, k: n ** 3 / 3,
    "qr_r": lambda m, n, lo, hi, k: 2 * hi * lo * lo - 2 * lo ** 3 / 3,    # Householder (4/3 n^3)
    "qr_q": lambda m, n, lo, hi, k: 4 * hi * lo * lo - 4 * lo ** 3 / 3,    # ... and Q formed
    "svd_s": lambda m, n, lo, hi, k: 4 * hi * lo * lo - 4 * lo ** 3 / 3,   # bidiagonalization
    "svd_thin": lambda m, n, lo, hi, k: 14 * hi * lo * lo + 8 * lo ** 3,   # Golub-Reinsch, thin
    "svd_full": lambda m, n, lo, hi, k: 4 * hi * hi * lo + 8 * hi * lo * lo + 9 * lo ** 3,
    "eigh_w": lambda m, n, lo, hi, k: 4 * n ** 3 / 3,          # tridiagonalization, values only
    "eigh_v": lambda m, n, lo, hi, k: 9 * n ** 3,              # ... with the eigenvectors
    "eig_w": lambda m, n, lo, hi, k: 10 * n ** 3,              # Hessenberg QR, values only
    "eig_v": lambda m, n, lo, hi, k: 25 * n ** 3,              # ... with the right eigenvectors
    "lstsq": lambda m, n, lo, hi, k: 14 * hi * lo * lo + 8 * lo ** 3 + 2 * (m + n) * lo * k,
}


def _flops(kind: str, m: int, n: int, batch: int, k: int = 0) -> int:
    """:data:`_COUNTS`' ``kind`` for one call on ``batch`` matrices ``m x n``."""
    return int(round(batch * _COUNTS[kind](m, n, min(m, n), max(m, n), k)))


# ------------------------------------------------------------------------------ the library call
def _call(path: str, route: Any, device: str, args: tuple[Any, ...], kwargs: dict[str, Any],
          flops: int) -> Any:
    """``route(xp, *buffers, **kwargs)`` on the computed operands ``args`` (LazyArrays, or
    memory a pending operand was computed into), ``xp`` the device's array module: one
    library call, its results computed LazyArrays on ``device``, recorded for ``la.explain``
    (``numpy.<path>``, bytes, ``flops``) and on a la.jit tape (lazyarr/_fallback.py ``run``).
    Computed CPU operands (a loop's small ``inv``): NumPy's call on their memory at once
    (``_fallback.run_computed``: the same call, results and record)."""
    if device == "cpu":
        buffers = _fallback.computed_buffers(args)
        if buffers is not None:
            return _fallback.run_computed(path, route, (np, *buffers), kwargs, buffers, flops)
    _fallback.policy(path)
    func = functools.partial(route, _devices.xp(device))
    return _fallback.run(path, func, device, args, kwargs, flops=flops)


def _on_computed(path: str, func: Any, operands: tuple[Any, ...], kwargs: dict[str, Any],
                 flops: Any, kind: str) -> Any:
    """``numpy.<path>`` (``func``) at once where each of ``operands`` is a computed CPU
    LazyArray (a loop's small ``inv``), or None, with nothing called (then the general path
    runs). What :func:`_call` does on the CPU, without the checks and the walks around it:
    NumPy's call on the operands' memory checks what the functions below check before it,
    with the same messages (theirs are NumPy's), so the errors, results and the record for
    ``la.explain`` are the general path's. ``flops(kind, *shapes)``: the call's FLOP count
    from the operands' shapes (memoized by them), asked once the call succeeded."""
    buffers = _fallback.computed_buffers(operands)
    if buffers is None:
        return None
    result = _fallback.call_computed_memory(func, buffers, kwargs, buffers)
    shapes = (buffers[0].shape,) if len(buffers) == 1 else (buffers[0].shape, buffers[1].shape)
    return _fallback.wrap_computed(path, result, buffers, flops(kind, *shapes))


@functools.lru_cache(maxsize=1024)
def _square_flops(kind: str, shape: tuple[int, ...]) -> int:
    """:func:`_flops`' ``kind`` for a stack of square matrices of ``shape``."""
    return _flops(kind, shape[-1], shape[-1], math.prod(shape[:-2]))


@functools.lru_cache(maxsize=1024)
def _matrix_flops(kind: str, shape: tuple[int, ...]) -> int:
    """:func:`_flops`' ``kind`` for a stack of matrices of ``shape``."""
    return _flops(kind, shape[-2], shape[-1], math.prod(shape[:-2]))


@functools.lru_cache(maxsize=1024)
def _solve_flops(kind: str, a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """:func:`solve`'s FLOP count for operands of shapes ``a`` and ``b`` (that fit)."""
    if len(b) == 1:
        k, batch = 1, a[:-2]
    else:
        k, batch = b[-1], np.broadcast_shapes(a[:-2], b[:-2])
    return _flops(kind, a[-1], a[-1], math.prod(batch), k)


def _fed(x: LazyArray, dtype: np.dtype) -> Any:
    """A pending cuda matrix ``x`` computed by its kernel straight into new memory of
    ``dtype`` (C order) that the library call may factor in place; None where that does not
    apply (a computed ``x``, the CPU, a stack, la.jit or la.explain running)."""
    if x.device != "cuda" or x.ndim != 2:
        return None
    return _fallback.computed_into_new(x, dtype, cuda=True)


def _is_cupy(xp: Any) -> bool:
    return getattr(xp, "__name__", "") == "cupy"


@contextlib.contextmanager
def _raising(xp: Any, message: str) -> Iterator[None]:
    """CuPy's status checks on (``cupyx.errstate(linalg="raise")``: a non-zero ``devInfo`` of
    cuSOLVER/cuBLAS raises), the ``LinAlgError`` raised again with NumPy's ``message``. (The
    shapes were checked before: a LinAlgError here is the factorization's.)"""
    state: Any = contextlib.nullcontext()
    if _is_cupy(xp):
        import cupyx
        state = cupyx.errstate(linalg="raise")
    try:
        with state:
            yield
    except LinAlgError:
        raise LinAlgError(message) from None


def _quiet(xp: Any) -> Any:
    """CuPy's status checks off (``cond`` inverts singular matrices on purpose)."""
    if _is_cupy(xp):
        import cupyx
        return cupyx.errstate(linalg="ignore")
    return contextlib.nullcontext()


def _require_finite(xp: Any, a: Any, message: str) -> None:
    """NumPy's ``message`` for a matrix with a NaN or an infinity, which LAPACK reports as a
    failure and cuSOLVER may not (one reduction, read on the host)."""
    if a.size and not bool(xp.isfinite(a).all()):
        raise LinAlgError(message)


@functools.cache
def _named_type(name: str) -> type:
    """NumPy's named-tuple result class of ``numpy.linalg.<name>`` (``EigResult``,
    ``EighResult``, ``QRResult``, ``SlogdetResult``, ``SVDResult``; its module is private, so
    the class is taken from one call on a 1x1 matrix)."""
    return type(getattr(np.linalg, name)(np.eye(1)))


def _named(name: str, *values: Any) -> Any:
    return _named_type(name)(*values)


# ------------------------------------------------------------------------------ the calls
# Each ``_x(xp, ...)`` is one call on buffers: NumPy's own function where ``xp`` is NumPy (the
# CPU and the simulated cuda device), NumPy's semantics with CuPy's functions otherwise.

def _inv(xp: Any, a: Any, owned: bool = False) -> Any:
    if xp is np:
        return np.linalg.inv(a)
    result = _result_type(a.dtype)
    if a.size == 0:
        return xp.empty(a.shape, result)
    with _raising(xp, "Singular matrix"):
        if owned and _is_cupy(xp):     # a: our C-ordered memory of dtype ``result``
            from cupyx import lapack
            out = xp.eye(a.shape[-1], dtype=result)
            lapack.gesv(a.T, out.T)     # a.T x = I in Fortran order: out = inv(a)
            return out
        return xp.linalg.inv(a).astype(result, copy=False)


def _solve(xp: Any, a: Any, b: Any, owned: bool = False) -> Any:
    if xp is np:
        return np.linalg.solve(a, b)
    result = _result_type(a.dtype, b.dtype)
    m = a.shape[-1]
    if b.ndim == 1:
        batch, shape = a.shape[:-2], a.shape[:-1]
    else:       # NumPy 2: the stacks broadcast (CuPy's solve takes equal ones)
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        shape = batch + b.shape[-2:]
        if a.shape[:-2] != batch:
            a = xp.broadcast_to(a, batch + (m, m))
        if b.shape != shape:
            b = xp.broadcast_to(b, shape)
    if math.prod(batch) == 0 or m == 0:
        return xp.empty(shape, result)
    if b.ndim > 1 and b.shape[-1] == 0:   # no column: the factorization still tells singular
        return _solve(xp, a, xp.zeros(shape[:-1] + (1,), result), owned)[..., :0]
    with _raising(xp, "Singular matrix"):
        if owned and a.ndim == 2 and _is_cupy(xp):     # a: our C-ordered memory
            from cupyx import lapack
            x = b.astype(result, order="F", copy=True)
            lapack.gesv(a, x)           # getrf on a's memory, then the transposed solve
            return x
        return xp.linalg.solve(a, b).astype(result, copy=False)


def _cholesky(xp: Any, a: Any, upper: bool = False) -> Any:
    if xp is np:
        return np.linalg.cholesky(a, upper=upper)
    result = _result_type(a.dtype)
    if a.size == 0:
        return xp.empty(a.shape, result)
    with _raising(xp, "Matrix is not positive definite"):
        lower = xp.linalg.cholesky(a).astype(result, copy=False)
    return xp.ascontiguousarray(xp.conj(xp.swapaxes(lower, -1, -2))) if upper else lower


def _det(xp: Any, a: Any) -> Any:
    if xp is np:
        return np.linalg.det(a)
    result = _result_type(a.dtype)
    if a.size == 0:             # an empty stack, or 0x0 matrices: det 1, NumPy's answer
        return xp.ones(a.shape[:-2], result)
    return xp.linalg.det(a).astype(result, copy=False)


def _slogdet(xp: Any, a: Any) -> Any:
    if xp is np:
        return np.linalg.slogdet(a)
    result = _result_type(a.dtype)
    if a.size == 0:
        return _named("slogdet", xp.ones(a.shape[:-2], result),
                      xp.zeros(a.shape[:-2], _real(result)))
    sign, logdet = xp.linalg.slogdet(a)
    return _named("slogdet", sign.astype(result, copy=False),
                  logdet.astype(_real(result), copy=False))


def _eig(xp: Any, a: Any, vectors: bool = True) -> Any:
    """``eig`` (``vectors``) or ``eigvals``: cuSOLVER's ``geev`` (CuPy 14), or NumPy's on a
    host copy where CuPy's cannot run it; NumPy's real results for a real matrix whose
    eigenvalues are all real (one test, read on the host, for the whole stack)."""
    if xp is np:
        return np.linalg.eig(a) if vectors else np.linalg.eigvals(a)
    _require_finite(xp, a, "Array must not contain infs or NaNs")
    result = _result_type(a.dtype)
    if a.size == 0:             # (no eigenvalue has an imaginary part: a real input stays real)
        w = xp.empty(a.shape[:-1], result)
        return _named("eig", w, xp.empty(a.shape, result)) if vectors else w
    if not _geev_available(xp):
        host = np.linalg.eig if vectors else np.linalg.eigvals
        out = host(_devices.to_host("cuda", a))
        back = [_devices.from_host(xp, np.ascontiguousarray(v))
                for v in (out if vectors else (out,))]
        return _named("eig", *back) if vectors else back[0]
    with _raising(xp, "Eigenvalues did not converge"):
        out = xp.linalg.eig(a) if vectors else (xp.linalg.eigvals(a),)
    w, *v = out
    if result.kind == "f" and bool(xp.all(w.imag == 0)):
        w, v = xp.ascontiguousarray(w.real), [xp.ascontiguousarray(x.real) for x in v]
    else:
        result = _complex(result)
    w, v = w.astype(result, copy=False), [x.astype(result, copy=False) for x in v]
    return _named("eig", w, v[0]) if vectors else w


def _geev_available(xp: Any) -> bool:
    """Whether CuPy can run cuSOLVER's ``geev`` (``cupy.linalg.eig``: CuPy 14, cuSOLVER 11.7)."""
    if not _is_cupy(xp):
        return hasattr(xp.linalg, "eig")
    if not hasattr(xp.linalg, "eig"):
        return False
    try:
        from cupyx.cusolver import check_availability
        return bool(check_availability("geev"))
    except (ImportError, RuntimeError, ValueError):
        return False


def _eigh(xp: Any, a: Any, UPLO: str = "L", vectors: bool = True) -> Any:
    """``eigh`` (``vectors``) or ``eigvalsh``, reading the triangle ``UPLO`` only. (A NaN
    there gives NaNs or NumPy's ``Eigenvalues did not converge``, as cuSOLVER reports it:
    LAPACK's outcome, and so NumPy's, depends on the matrix too.)"""
    if xp is np:
        return np.linalg.eigh(a, UPLO) if vectors else np.linalg.eigvalsh(a, UPLO)
    result = _result_type(a.dtype)
    real = _real(result)
    if a.size == 0:
        w = xp.empty(a.shape[:-1], real)
        return _named("eigh", w, xp.empty(a.shape, result)) if vectors else w
    with _raising(xp, "Eigenvalues did not converge"):
        if not vectors:
            return xp.linalg.eigvalsh(a, UPLO=UPLO).astype(real, copy=False)
        w, v = xp.linalg.eigh(a, UPLO=UPLO)
    return _named("eigh", w.astype(real, copy=False), v.astype(result, copy=False))


def _svd(xp: Any, a: Any, full_matrices: bool = True, compute_uv: bool = True,
         hermitian: bool = False) -> Any:
    if xp is np:
        return np.linalg.svd(a, full_matrices, compute_uv, hermitian)
    if hermitian:       # NumPy's: from the eigendecomposition (CuPy's svd has no hermitian=)
        if not compute_uv:
            s = xp.abs(_eigh(xp, a, vectors=False))
            return xp.sort(s, axis=-1)[..., ::-1]
        s, u = _eigh(xp, a)
        sgn = xp.copysign(1.0, s).astype(s.dtype, copy=False)
        s = xp.abs(s)
        order = xp.argsort(s, axis=-1)[..., ::-1]
        sgn = xp.take_along_axis(sgn, order, axis=-1)
        s = xp.take_along_axis(s, order, axis=-1)
        u = xp.take_along_axis(u, order[..., None, :], axis=-1)
        vt = xp.conj(xp.swapaxes(u * sgn[..., None, :], -1, -2))
        return _named("svd", u, s, vt)
    result = _result_type(a.dtype)
    _require_finite(xp, a, "SVD did not converge")
    with _raising(xp, "SVD did not converge"):
        out = xp.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    if not compute_uv:
        return out.astype(_real(result), copy=False)
    u, s, vh = out
    return _named("svd", u.astype(result, copy=False), s.astype(_real(result), copy=False),
                  vh.astype(result, copy=False))


def _qr(xp: Any, a: Any, mode: str = "reduced") -> Any:
    """``qr`` in one of NumPy's modes (``"economic"``, deprecated: the raw Householder
    matrix, untransposed)."""
    if xp is np:
        with warnings.catch_warnings():     # (the deprecation was told at the user's line)
            warnings.simplefilter("ignore", DeprecationWarning)
            return np.linalg.qr(a, mode)
    result = _result_type(a.dtype)
    with _raising(xp, "Incorrect argument found while performing QR factorization"):
        out = xp.linalg.qr(a, mode="raw" if mode == "economic" else mode)
    if mode == "r":
        return out.astype(result, copy=False)
    if mode == "economic":
        return xp.ascontiguousarray(xp.swapaxes(out[0], -1, -2)).astype(result, copy=False)
    first, second = (x.astype(result, copy=False) for x in out)
    return (first, second) if mode == "raw" else _named("qr", first, second)


def _lstsq(xp: Any, a: Any, b: Any, rcond: Any = None) -> Any:
    """NumPy's ``lstsq`` (LAPACK's ``gelsd``) from CuPy's SVD: singular values at or below
    ``rcond`` times the largest count as zero (``rcond`` None: the computing precision's
    epsilon times ``max(m, n)``; negative: the epsilon); the residuals' squared norms where ``a`` has full column
    rank and more rows than columns. The rank is a 0-d int32 array, as NumPy's scalar."""
    if xp is np:
        return np.linalg.lstsq(a, b, rcond=rcond)
    result = _result_type(a.dtype, b.dtype)
    real = _real(result)
    is_1d = b.ndim == 1
    if is_1d:
        b = b[:, None]
    m, n = a.shape
    a, b = a.astype(result, copy=False), b.astype(result, copy=False)
    eps = float(np.finfo(result).eps)
    rcond = eps * max(n, m) if rcond is None else eps if rcond < 0 else rcond   # (gelsd's)
    message = "SVD did not converge in Linear Least Squares"
    _require_finite(xp, a, message)
    with _raising(xp, message):
        u, s, vh = xp.linalg.svd(a, full_matrices=False)
    s = s.astype(real, copy=False)
    if s.size:
        large = s > rcond * s.max()
    else:
        large = xp.zeros(s.shape, bool)
    rank = int(xp.count_nonzero(large))
    inverse = xp.where(large, 1 / xp.where(large, s, 1), 0).astype(real, copy=False)
    uhb = xp.matmul(xp.conj(u.T), b)
    x = xp.matmul(xp.conj(vh.T), inverse[:, None] * uhb).astype(result, copy=False)
    if rank == n and m > n:
        r = b - xp.matmul(u, uhb)
        resids = xp.sum((xp.conj(r) * r).real, axis=0).astype(real, copy=False)
    else:
        resids = xp.empty((0,), real)
    if is_1d:
        x = x[:, 0]
    return x, resids, xp.asarray(rank, dtype=np.int32), s


def _cond(xp: Any, x: Any, p: Any = None) -> Any:
    """NumPy's ``cond``: the ratio of the extreme singular values (``p`` None, 2, -2), else
    ``norm(x, p) * norm(inv(x), p)`` with a singular matrix's inverse not raising; a NaN that
    ``x`` has none of becomes inf."""
    if xp is np:
        return np.linalg.cond(x, p)
    with np.errstate(all="ignore"):     # (NumPy's, where NumPy stands in for CuPy)
        if p is None or p in {2, -2}:
            s = _svd(xp, x, compute_uv=False)
            r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
        else:
            result = _result_type(x.dtype)
            x = x.astype(result, copy=False)
            inverse = _inverse_or_nan(xp, x)
            norms = [xp.linalg.norm(v, p, axis=(-2, -1)) for v in (x, inverse)]
            r = (norms[0] * norms[1]).astype(_real(result), copy=False)
    nan = xp.isnan(r) & ~xp.isnan(x).any(axis=(-2, -1))
    return xp.where(nan, xp.inf, r).astype(r.dtype, copy=False)


def _inverse_or_nan(xp: Any, x: Any) -> Any:
    """``inv(x)``, where a singular matrix gives NaNs or infinities instead of an error (as
    NumPy's gufunc under ``errstate(all="ignore")``)."""
    if not _is_cupy(xp):         # NumPy standing in for CuPy: its gufunc, NaN for singular
        from numpy.linalg import _umath_linalg
        signature = "D->D" if x.dtype.kind == "c" else "d->d"
        with np.errstate(all="ignore"):
            return _umath_linalg.inv(x, signature=signature).astype(x.dtype, copy=False)
    with _quiet(xp):        # a zero pivot divides by zero: inf and NaN in the inverse
        return xp.linalg.inv(x)


# ------------------------------------------------------------------------------ the functions
def inv(a: Any) -> LazyArray:
    """The inverse of each matrix of ``a`` (``numpy.linalg.inv``): ``LinAlgError("Singular
    matrix")`` on every device."""
    out = _on_computed("linalg.inv", np.linalg.inv, (a,), {}, _square_flops, "inv")
    if out is not None:
        return out
    x, = _operands(a)
    _assert_stacked_square(x)
    result = _result_type(x.dtype)
    flops = _flops("inv", x.shape[-1], x.shape[-1], _stack(x))
    memory = _fed(x, result) if math.prod(x.shape) else None
    if memory is not None:
        return _call("linalg.inv", _inv, x.device, (memory,), {"owned": True}, flops)
    return _call("linalg.inv", _inv, x.device, (x,), {}, flops)


def solve(a: Any, b: Any) -> LazyArray:
    """The solution ``x`` of ``a @ x = b`` (``numpy.linalg.solve``, NumPy 2's rules): ``b``
    of shape ``(M,)`` is one vector for every matrix of ``a``; otherwise ``b`` is a stack of
    ``(M, K)`` matrices whose stack dimensions broadcast with ``a``'s."""
    out = _on_computed("linalg.solve", np.linalg.solve, (a, b), {}, _solve_flops, "solve")
    if out is not None:
        return out
    x, y = _operands(a, b)
    _assert_stacked_square(x)
    result = _result_type(x.dtype, y.dtype)
    m = x.shape[-1]
    if y.ndim == 1:
        fits, k, batch = y.shape[0] == m, 1, x.shape[:-2]
    else:
        try:
            batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2]) if y.ndim else ()
        except ValueError:
            batch = None
        fits = y.ndim >= 2 and y.shape[-2] == m and batch is not None
        k = y.shape[-1] if y.ndim else 0
    if not fits:
        raise_as_numpy(np.linalg.solve, x, y)
    flops = _flops("solve", m, m, math.prod(batch), k)
    memory = _fed(x, result) if math.prod(x.shape) and y.ndim <= 2 and y is not x else None
    if memory is not None:
        return _call("linalg.solve", _solve, x.device, (memory, y), {"owned": True}, flops)
    return _call("linalg.solve", _solve, x.device, (x, y), {}, flops)


def cholesky(a: Any, /, *, upper: bool = False) -> LazyArray:
    """The Cholesky factor of each Hermitian positive-definite matrix of ``a``
    (``numpy.linalg.cholesky``): lower triangular, or with ``upper=True`` (the array API's)
    the upper one, its conjugate transpose. ``LinAlgError("Matrix is not positive definite")``
    on every device (on cuda also for a NaN on the diagonal's path, which cuSOLVER reports
    as such where NumPy's LAPACK may return NaNs)."""
    out = _on_computed("linalg.cholesky", np.linalg.cholesky, (a,), {"upper": bool(upper)},
                       _square_flops, "cholesky")
    if out is not None:
        return out
    x, = _operands(a)
    _assert_stacked_square(x)
    _result_type(x.dtype)
    flops = _flops("cholesky", x.shape[-1], x.shape[-1], _stack(x))
    return _call("linalg.cholesky", _cholesky, x.device, (x,), {"upper": bool(upper)}, flops)


def det(a: Any) -> LazyArray:
    """The determinant of each matrix of ``a`` (``numpy.linalg.det``); 1 for a 0x0 matrix."""
    out = _on_computed("linalg.det", np.linalg.det, (a,), {}, _square_flops, "lu")
    if out is not None:
        return out
    x, = _operands(a)
    _assert_stacked_square(x)
    _result_type(x.dtype)
    return _call("linalg.det", _det, x.device, (x,), {},
                 _flops("lu", x.shape[-1], x.shape[-1], _stack(x)))


def slogdet(a: Any) -> Any:
    """The sign and the log of the absolute value of each determinant of ``a``
    (``numpy.linalg.slogdet``): a ``SlogdetResult(sign, logabsdet)``; ``(0, -inf)`` for a
    singular matrix, ``(1, 0)`` for a 0x0 one."""
    out = _on_computed("linalg.slogdet", np.linalg.slogdet, (a,), {}, _square_flops, "lu")
    if out is not None:
        return out
    x, = _operands(a)
    _assert_stacked_square(x)
    _result_type(x.dtype)
    return _call("linalg.slogdet", _slogdet, x.device, (x,), {},
                 _flops("lu", x.shape[-1], x.shape[-1], _stack(x)))


def eig(a: Any) -> Any:
    """The eigenvalues and right eigenvectors of each square matrix of ``a``
    (``numpy.linalg.eig``): an ``EigResult(eigenvalues, eigenvectors)``, complex unless ``a``
    is real and every eigenvalue of the stack is real (then real, as NumPy's). On cuda:
    cuSOLVER's ``geev`` through CuPy 14 (the eigenvalues' order may differ from LAPACK's),
    NumPy's on a host copy where CuPy cannot run it."""
    out = _on_computed("linalg.eig", np.linalg.eig, (a,), {}, _square_flops, "eig_v")
    if out is not None:
        return out
    x, = _operands(a)
    _assert_stacked_square(x)
    return _call("linalg.eig", _eig, x.device, (x,), {},
                 _flops("eig_v", x.shape[-1], x.shape[-1], _stack(x)))


def eigvals(a: Any) -> LazyArray:
    """The eigenvalues of each square matrix of ``a`` (``numpy.linalg.eigvals``), typed as
    :func:`eig`'s."""
    out = _on_computed("linalg.eigvals", np.linalg.eigvals, (a,), {}, _square_flops, "eig_w")
    if out is not None:
        return out
    x, = _operands(a)
    _assert_stacked_square(x)
    return _call("linalg.eigvals", _eig, x.device, (x,), {"vectors": False},
                 _flops("eig_w", x.shape[-1], x.shape[-1], _stack(x)))


def _uplo(UPLO: Any) -> str:
    UPLO = UPLO.upper()
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return str(UPLO)


def eigh(a: Any, UPLO: str = "L") -> Any:
    """The eigenvalues (ascending) and eigenvectors of each Hermitian matrix of ``a``, of
    which the triangle ``UPLO`` (``"L"`` or ``"U"``, either case) is read
    (``numpy.linalg.eigh``): an ``EighResult(eigenvalues, eigenvectors)``."""
    UPLO = _uplo(UPLO)
    out = _on_computed("linalg.eigh", np.linalg.eigh, (a,), {"UPLO": UPLO}, _square_flops,
                       "eigh_v")
    if out is not None:
        return out
    x, = _operands(a)
    _assert_stacked_square(x)
    _result_type(x.dtype)
    return _call("linalg.eigh", _eigh, x.device, (x,), {"UPLO": UPLO},
                 _flops("eigh_v", x.shape[-1], x.shape[-1], _stack(x)))


def eigvalsh(a: Any, UPLO: str = "L") -> LazyArray:
    """The eigenvalues (ascending) of each Hermitian matrix of ``a``
    (``numpy.linalg.eigvalsh``), real."""
    UPLO = _uplo(UPLO)
    out = _on_computed("linalg.eigvalsh", np.linalg.eigvalsh, (a,), {"UPLO": UPLO},
                       _square_flops, "eigh_w")
    if out is not None:
        return out
    x, = _operands(a)
    _assert_stacked_square(x)
    _result_type(x.dtype)
    return _call("linalg.eigvalsh", _eigh, x.device, (x,), {"UPLO": UPLO, "vectors": False},
                 _flops("eigh_w", x.shape[-1], x.shape[-1], _stack(x)))


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Any:
    """The singular value decomposition of each matrix of ``a`` (``numpy.linalg.svd``): an
    ``SVDResult(U, S, Vh)`` (``full_matrices``: square ``U`` and ``Vh``), or the singular
    values alone (``compute_uv=False``), descending. ``hermitian=True`` takes them from the
    eigendecomposition, as NumPy does."""
    if hermitian:
        kind = "eigh_v" if compute_uv else "eigh_w"
    else:
        kind = ("svd_full" if full_matrices else "svd_thin") if compute_uv else "svd_s"
    kwargs = {"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv),
              "hermitian": bool(hermitian)}
    out = _on_computed("linalg.svd", np.linalg.svd, (a,), kwargs, _matrix_flops, kind)
    if out is not None:
        return out
    x, = _operands(a)
    if hermitian:
        _assert_stacked_square(x)
    else:
        _assert_stacked_2d(x)
    _result_type(x.dtype)
    m, n = x.shape[-2:]
    return _call("linalg.svd", _svd, x.device, (x,), kwargs, _flops(kind, m, n, _stack(x)))


def svdvals(x: Any, /) -> LazyArray:
    """The singular values of each matrix of ``x``, descending (``numpy.linalg.svdvals``,
    the array API's)."""
    out = _on_computed("linalg.svdvals", np.linalg.svd, (x,), {"compute_uv": False},
                       _matrix_flops, "svd_s")
    if out is not None:
        return out
    y, = _operands(x)
    _assert_stacked_2d(y)
    _result_type(y.dtype)
    m, n = y.shape[-2:]
    return _call("linalg.svdvals", _svd, y.device, (y,), {"compute_uv": False},
                 _flops("svd_s", m, n, _stack(y)))


def qr(a: Any, mode: str = "reduced") -> Any:
    """The QR decomposition of each matrix of ``a`` (``numpy.linalg.qr``): a
    ``QRResult(Q, R)`` for ``mode`` ``"reduced"`` or ``"complete"``, ``R`` alone for
    ``"r"``, NumPy's ``(h, tau)`` for ``"raw"``; the deprecated ``"full"`` and
    ``"economic"`` as NumPy 2.4 takes them, with its DeprecationWarning."""
    if mode not in _QR_MODES:
        if mode in ("f", "full"):
            warnings.warn("The 'full' option is deprecated in favor of 'reduced'.\n"
                          "For backward compatibility let mode default.",
                          DeprecationWarning, stacklevel=user_stacklevel())
            mode = "reduced"
        elif mode in ("e", "economic"):
            warnings.warn("The 'economic' option is deprecated.", DeprecationWarning,
                          stacklevel=user_stacklevel())
            mode = "economic"
        else:
            raise ValueError(f"Unrecognized mode '{mode}'")
    else:       # (the deprecated modes: NumPy's call would warn again)
        kind = "qr_q" if mode in ("reduced", "complete") else "qr_r"
        out = _on_computed("linalg.qr", np.linalg.qr, (a,), {"mode": mode}, _matrix_flops, kind)
        if out is not None:
            return out
    x, = _operands(a)
    _assert_stacked_2d(x)
    _result_type(x.dtype)
    m, n = x.shape[-2:]
    kind = "qr_q" if mode in ("reduced", "complete") else "qr_r"
    return _call("linalg.qr", _qr, x.device, (x,), {"mode": mode},
                 _flops(kind, m, n, _stack(x)))


def lstsq(a: Any, b: Any, rcond: Any = None) -> Any:
    """The least-squares solution of ``a @ x = b`` (``numpy.linalg.lstsq``, 2-D ``a``):
    the tuple ``(x, residuals, rank, s)``, ``rank`` a 0-d int32 array. Singular values at or
    below ``rcond`` times the largest count as zero (None: the precision's epsilon times
    ``max(M, N)``)."""
    x, y = _operands(a, b)
    y2 = y[:, None] if y.ndim == 1 else y
    _assert_2d(x, y2)
    m, n = x.shape
    if m != y2.shape[0]:
        raise LinAlgError("Incompatible dimensions")
    _result_type(x.dtype, y.dtype)
    return _call("linalg.lstsq", _lstsq, x.device, (x, y), {"rcond": rcond},
                 _flops("lstsq", m, n, 1, y2.shape[1]))


def cond(x: Any, p: Any = None) -> LazyArray:
    """The condition number of each matrix of ``x`` in the norm ``p``
    (``numpy.linalg.cond``): the ratio of its extreme singular values (``p`` None, 2, -2),
    else ``norm(x, p) * norm(inv(x), p)``; inf for a singular matrix."""
    y, = _operands(x)
    if y.size == 0 and math.prod(y.shape[-2:]) == 0:
        raise LinAlgError("cond is not defined on empty arrays")
    if p is None or p in {2, -2}:
        _assert_stacked_2d(y)
        _result_type(y.dtype)
        flops = _flops("svd_s", y.shape[-2], y.shape[-1], _stack(y))
    else:
        _assert_stacked_square(y)
        _result_type(y.dtype)
        if p not in _MATRIX_NORMS:
            raise ValueError("Invalid norm order for matrices.")
        n = y.shape[-1]
        flops = _flops("inv", n, n, _stack(y)) + (2 * _flops("svd_s", n, n, _stack(y))
                                                   if p == "nuc" else 0)
    return _call("linalg.cond", _cond, y.device, (y,), {"p": p}, flops)


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NOVALUE) -> Any:
    """The Moore-Penrose pseudo-inverse of each matrix of ``a`` (``numpy.linalg.pinv``), from
    its SVD (the library's) with the singular values at or below ``rcond`` (or the array
    API's ``rtol``; None: ``max(M, N)`` epsilons) times the largest dropped: the cut-off and
    the reciprocals are one fused kernel, the product lazyarr's ``matmul``."""
    x, = _operands(a)
    if rcond is None:
        if rtol is _NOVALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(x.shape[-2:]) * np.finfo(x.dtype).eps
        else:
            rcond = rtol
    elif rtol is not _NOVALUE:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    rcond = rcond if isinstance(rcond, LazyArray) else np.asarray(rcond)
    if x.size == 0 and math.prod(x.shape[-2:]) == 0:
        m, n = x.shape[-2:]
        return empty(x.shape[:-2] + (n, m), dtype=x.dtype, device=x.device)
    if x.dtype.kind == "c":
        x = x.conj()
    u, s, vt = svd(x, full_matrices=False, hermitian=hermitian)
    cutoff = asarray(rcond, device=x.device)[..., None] * s.max(axis=-1, keepdims=True)
    large = s > cutoff
    s = _where(large, 1 / _where(large, s, 1), 0)       # (no division where s is dropped)
    return matmul(swapaxes(vt, -1, -2), s[..., None] * swapaxes(u, -1, -2))


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:
    """The rank of each matrix of ``A`` (``numpy.linalg.matrix_rank``): how many of its
    singular values (the library's SVD) exceed ``tol``, or ``rtol`` (the array API's; None:
    ``max(M, N)`` epsilons) times the largest, counted by a fused reduction. For ``A`` of
    fewer than two dimensions a Python int, 1 unless every element is 0, as NumPy's."""
    if rtol is not None and tol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    x, = _operands(A)
    if x.ndim < 2:
        return int(not bool((x == 0).all()))
    S = svd(x, compute_uv=False, hermitian=hermitian)
    if tol is None:
        if rtol is None:
            rtol = max(x.shape[-2:]) * np.finfo(S.dtype).eps
        else:
            rtol = asarray(rtol, device=x.device)[..., None]
        if S.shape[-1]:         # (NumPy's max(initial=0): 0 for matrices with no value)
            largest = S.max(axis=-1, keepdims=True)
        else:
            largest = zeros(S.shape[:-1] + (1,), dtype=S.dtype, device=x.device)
        tol = largest * rtol
    else:
        tol = asarray(tol, device=x.device)[..., None]
    return count_nonzero(S > tol, axis=-1)


def matrix_power(a: Any, n: Any) -> LazyArray:
    """Each square matrix of ``a`` to the integer power ``n`` (``numpy.linalg.matrix_power``):
    NumPy's binary decomposition into lazyarr's ``matmul``; ``n == 0`` the identity in
    ``a``'s dtype, ``n < 0`` powers of :func:`inv`'s inverse, ``n == 1`` ``a`` itself."""
    x, = _operands(a)
    _assert_stacked_square(x)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n == 0:
        identity = eye(x.shape[-2], dtype=x.dtype, device=x.device)
        return copy(broadcast_to(identity, x.shape))
    if n < 0:
        x = inv(x)
        n = abs(n)
    if n == 1:
        return x
    if n == 2:
        return matmul(x, x)  # type: ignore[no-any-return]
    if n == 3:
        return matmul(matmul(x, x), x)  # type: ignore[no-any-return]
    z = result = None
    while n > 0:
        z = x if z is None else matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else matmul(result, z)
    return result  # type: ignore[return-value]


def multi_dot(arrays: Any, *, out: Any = None) -> Any:
    """The product of two or more arrays in the cheapest order (``numpy.linalg.multi_dot``:
    its matrix-chain order, a 1-D first or last array a row or column vector), each product
    lazyarr's ``dot``. ``out=`` is NumPy's (CuPy's) call, writing ``out``."""
    if out is not None:
        return _fallback.call("linalg.multi_dot", np.linalg.multi_dot, (arrays,), {"out": out})
    count = len(arrays)
    if count < 2:
        raise ValueError("Expecting at least two arrays.")
    if count == 2:
        return dot(arrays[0], arrays[1])
    arrays = _operands(*arrays)
    ndim_first, ndim_last = arrays[0].ndim, arrays[-1].ndim
    if ndim_first == 1:
        arrays[0] = atleast_2d(arrays[0])
    if ndim_last == 1:
        arrays[-1] = transpose(atleast_2d(arrays[-1]))
    _assert_2d(*arrays)
    if count == 3:
        result = _multi_dot_three(*arrays)
    else:
        result = _multi_dot(arrays, _chain_order(arrays), 0, count - 1)
    if ndim_first == 1 and ndim_last == 1:
        return result[0, 0]
    if ndim_first == 1 or ndim_last == 1:
        return ravel(result)
    return result


def _multi_dot_three(a: LazyArray, b: LazyArray, c: LazyArray) -> Any:
    """NumPy's choice for three: ``(ab)c`` when it costs fewer multiplications than ``a(bc)``."""
    a0, a1b0 = a.shape
    b1c0, c1 = c.shape
    if a0 * b1c0 * (a1b0 + c1) < a1b0 * c1 * (a0 + b1c0):
        return dot(dot(a, b), c)
    return dot(a, dot(b, c))


def _chain_order(arrays: list[LazyArray]) -> list[list[int]]:
    """NumPy's ``_multi_dot_matrix_chain_order`` (Cormen's dynamic program): ``s[i][j]``, where
    the cheapest product of ``arrays[i..j]`` splits."""
    n = len(arrays)
    p = [a.shape[0] for a in arrays] + [arrays[-1].shape[1]]
    cost = [[0.0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _multi_dot(arrays: list[LazyArray], order: list[list[int]], i: int, j: int) -> Any:
    if i == j:
        return arrays[i]
    return dot(_multi_dot(arrays, order, i, order[i][j]),
               _multi_dot(arrays, order, order[i][j] + 1, j))


def tensorinv(a: Any, ind: int = 2) -> LazyArray:
    """The inverse of ``a`` as an operator on its first ``ind`` axes
    (``numpy.linalg.tensorinv``): :func:`inv` of its matrix reshape, reshaped back."""
    x, = _operands(a)
    oldshape = x.shape
    if ind > 0:
        invshape = oldshape[ind:] + oldshape[:ind]
        prod = math.prod(oldshape[ind:])
    else:
        raise ValueError("Invalid ind argument.")
    return reshape(inv(reshape(x, (prod, -1))), invshape)


def tensorsolve(a: Any, b: Any, axes: Any = None) -> LazyArray:
    """The ``x`` of ``tensordot(a, x, axes=x.ndim) = b`` (``numpy.linalg.tensorsolve``):
    :func:`solve` of the matrix reshape of ``a`` (its ``axes`` moved to the end first)."""
    x, y = _operands(a, b)
    an = x.ndim
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        x = transpose(x, allaxes)
    oldshape = x.shape[-(an - y.ndim):]
    prod = math.prod(oldshape)
    if x.size != prod ** 2:
        raise LinAlgError("Input arrays must satisfy the requirement             "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return reshape(solve(reshape(x, (prod, prod)), ravel(y)), oldshape)


#: ``lazyarr.linalg``'s decompositions and solvers (lazyarr/_functions/_norms.py holds the
#: namespace)
FUNCTIONS = {f.__name__: f for f in (
    cholesky, det, eig, eigh, eigvals, eigvalsh, inv, lstsq, matrix_power, matrix_rank, pinv,
    qr, slogdet, solve, svd, svdvals, cond, multi_dot, tensorinv, tensorsolve)}
NUMPY_FUNCTIONS = {getattr(np.linalg, name): fn for name, fn in FUNCTIONS.items()}
