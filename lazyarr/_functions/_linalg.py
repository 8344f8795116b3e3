"""Matrix and vector products: ``matmul`` (the ``@`` operator), ``dot`` and ``vecdot``.

NumPy's own call computes them (BLAS, through the fallback: lazyarr/_fallback.py), on the
operands' memory as it is: a computed array or a view of one (``A.T``, ``data[:, i]``) goes
to BLAS with its strides, not copied. Two shapes of work do better than that:

* **A matrix-vector product whose matrix is pending** (``(alpha * A) @ x``, ``y @ (A + B)``)
  is one fused kernel: the elementwise product with the vector broadcast along the matrix,
  summed over the shared axis. NumPy writes the pending matrix to a temporary and reads it
  back; here the matrix is never written. The sum is lazyarr's (float64 accumulation, rounded
  once), so the values are NumPy's to rounding, as ``sum`` is. Only for float32/float64 and in
  lazy mode (eager mode is NumPy's call); a pending *vector* is computed first (it is small,
  and the fused kernel would otherwise recompute it once per row).
* **A stack of matrices times one matrix or vector** (``(..., m, k) @ (k, n)``): NumPy loops
  over the stack with one small BLAS call each (one ``gemv`` per row when ``m == 1``); the
  stack, one block of memory, is one ``(-1, k) @ (k, n)`` call instead (values to rounding:
  BLAS blocks the sums differently).
* **The dot products of vectors along an axis with a pending operand** (``vecdot(a - b, w)``)
  are one fused kernel: ``conj(x1) * x2`` summed over the axis, nothing written but the
  result. Computed operands are NumPy's (CuPy's) ``vecdot``, its bits.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _fallback
from .._array import LazyArray
from .._config import get_config
from ._elementwise import FUNCTIONS as _ELEMENTWISE
from ._manipulation import moveaxis, reshape

_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _pending(x: LazyArray) -> bool:
    node = x._node
    return node.data is None and node.op != "scalar"


def _fused_matvec(a: LazyArray, b: LazyArray) -> LazyArray | None:
    """``a @ b`` as one fused multiply-and-sum when one operand is a pending matrix and the
    other a vector of the right length; None where that does not apply."""
    if (a.ndim, b.ndim) == (2, 1):
        matrix, axis = a, 1
    elif (a.ndim, b.ndim) == (1, 2):
        matrix, axis = b, 0
    else:
        return None
    if not _pending(matrix) or a.shape[-1] != b.shape[0] or a.device != b.device \
            or a.dtype not in _FUSED_DTYPES or b.dtype not in _FUSED_DTYPES \
            or get_config().mode != "lazy":
        return None
    vector = b if axis == 1 else a
    if _pending(vector):
        vector = vector.compute()
    dtype = np.result_type(a.dtype, b.dtype)
    if axis == 1:
        product = matrix * vector                  # x broadcast along the rows
    else:
        product = vector[:, None] * matrix         # y_i scales row i
    return product.sum(axis=axis, dtype=dtype)     # type: ignore[no-any-return]


def _folded_stack(a: LazyArray, b: LazyArray) -> LazyArray | None:
    """``a @ b`` for a stack ``a`` (ndim >= 3) and a matrix or vector ``b``, as one library
    call on ``a`` viewed as ``(-1, k)``; None where that does not apply."""
    if a.ndim < 3 or b.ndim not in (1, 2) or a.size == 0 or a.shape[-1] != b.shape[0]:
        return None
    flat = reshape(a, (-1, a.shape[-1]))            # a view (a pending `a` is computed first)
    out = _fallback.call("matmul", np.matmul, (flat, b), {})
    return reshape(out, a.shape[:-1] + b.shape[1:])


def matmul(x1: Any, x2: Any, /, **kwargs: Any) -> Any:
    """The matrix product ``x1 @ x2``, as ``numpy.matmul``: NumPy's (CuPy's) call on the
    operands' memory; a matrix-vector product with a pending float matrix is one fused
    kernel (values to rounding), and a stack times a matrix one library call. NumPy's
    keywords (``out=``, ``dtype=``, ``casting=``, ``axes=`` ...) are NumPy's call (``out=`` a
    LazyArray is written in its memory)."""
    if kwargs:
        return _fallback.call("matmul", np.matmul, (x1, x2), kwargs)
    if getattr(x1, "ndim", 3) < 3:           # (a stack is folded into one call below)
        out = _fallback.call_computed("matmul", np.matmul, x1, x2)   # computed: NumPy's, now
        if out is not None:
            return out
    if isinstance(x1, LazyArray) or isinstance(x2, LazyArray):
        a, b = _as_lazy(x1), _as_lazy(x2)
        if a is not None and b is not None:
            out = _fused_matvec(a, b)
            if out is None:
                out = _folded_stack(a, b)
            if out is not None:
                return out
    return _fallback.call("matmul", np.matmul, (x1, x2), {})


def dot(a: Any, b: Any, out: Any = None) -> Any:
    """``numpy.dot``: for a matrix and a vector it is :func:`matmul`; everything else
    (``out=``, scalars, N-d operands) is NumPy's (CuPy's) own call."""
    if out is None:
        computed = _fallback.call_computed("dot", np.dot, a, b)     # computed: NumPy's, now
        if computed is not None:
            return computed
    if out is None and (isinstance(a, LazyArray) or isinstance(b, LazyArray)):
        x, y = _as_lazy(a), _as_lazy(b)
        if x is not None and y is not None and (x.ndim, y.ndim) in ((2, 1), (1, 2)):
            fused = _fused_matvec(x, y)
            if fused is not None:
                return fused
    return _fallback.call("dot", np.dot, (a, b), {} if out is None else {"out": out})


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, **kwargs: Any) -> Any:
    """``numpy.vecdot`` (and ``numpy.linalg.vecdot``): the dot products of the vectors along
    ``axis`` of the two operands, ``conj(x1) * x2`` summed there, the other axes broadcast.
    With a pending float or complex operand in lazy mode it is one fused multiply-and-sum
    kernel (values to rounding: lazyarr's sums); computed operands, integers, NumPy's
    keywords (``out=``, ``dtype=``, ``axes=`` ...) and NumPy's errors are NumPy's (CuPy's)
    own call."""
    a, b = _as_lazy(x1), _as_lazy(x2)
    fused = None if kwargs or a is None or b is None else _fused_vecdot(a, b, axis)
    if fused is not None:
        return fused
    return _fallback.call("vecdot", np.vecdot, (x1, x2), {"axis": axis, **kwargs})


def _fused_vecdot(a: LazyArray, b: LazyArray, axis: Any) -> LazyArray | None:
    """:func:`vecdot` as one fused kernel, or None where NumPy's call is the answer (nothing
    pending, another mode or device, no float or complex result, or an error to raise)."""
    dtype = np.result_type(a.dtype, b.dtype)
    if not (_pending(a) or _pending(b)) or a.device != b.device or dtype.kind not in "fc" \
            or get_config().mode != "lazy" or type(axis) is not int \
            or not (-a.ndim <= axis < a.ndim and -b.ndim <= axis < b.ndim) \
            or a.shape[axis] != b.shape[axis]:
        return None
    u, v = moveaxis(a, axis, -1), moveaxis(b, axis, -1)
    try:
        np.broadcast_shapes(u.shape[:-1], v.shape[:-1])
    except ValueError:
        return None                     # (NumPy's call raises its own message)
    if u.dtype.kind == "c":
        u = _ELEMENTWISE["conj"](u)
    return (u * v).sum(axis=-1, dtype=dtype)  # type: ignore[no-any-return]


def _as_lazy(x: Any) -> LazyArray | None:
    """A LazyArray operand; None for anything else (NumPy arrays, scalars, lists, other
    libraries' arrays: NumPy's own call sorts those out)."""
    return x if isinstance(x, LazyArray) else None


FUNCTIONS = {f.__name__: f for f in (matmul, dot, vecdot)}
NUMPY_FUNCTIONS = {np.dot: dot, np.vecdot: vecdot, np.linalg.vecdot: vecdot}
