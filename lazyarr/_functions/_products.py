"""The other products of issue 18: diagonals, ``trace``, ``diag``/``diagflat``, ``kron``,
``cross``, ``inner``, ``vdot``, ``tensordot``, ``matvec``/``vecmat``, ``einsum``, and the
array API's ``linalg`` forms of them.

Each is NumPy's own definition written with lazyarr's views, elementwise ops, reductions and
products, so it is what those are:

* **Views, fused.** ``diagonal`` (and ``diag`` of a matrix, ``linalg.diagonal``) is a view
  (:func:`lazyarr._views.view`): NumPy's read-only view of a computed array's memory, pushed
  down into a pending expression's inputs, so ``la.trace(a + b)`` and ``la.diagonal(a * 2)``
  are one kernel that reads only the diagonal.
* **Elementwise, fused.** ``diag``/``diagflat`` of a vector is a ``where`` of an index
  comparison (as lazyarr's ``tri`` builds its mask), never written unless what reads it is; ``kron`` is the broadcast product of the
  operands with new axes, computed by one kernel and reshaped (a view of its memory);
  ``cross`` is the componentwise formula, its components chosen by index (one kernel, all
  three components at once). No library call: ``la.explain`` lists none.
* **Products.** ``inner``, ``vdot``, ``tensordot``, ``matvec`` and ``vecmat`` are views and
  reshapes around lazyarr's ``matmul``/``vecdot`` (lazyarr/_functions/_linalg.py), so they
  take those paths: BLAS (cuBLAS) on computed operands, one fused kernel for a matrix-vector
  product with a pending matrix or the dot products of a pending operand.
* **einsum**: NumPy's (CuPy's) ``einsum`` with ``optimize`` honoured, on the operands computed
  once each by their fused kernel; ``la.explain`` shows it with its bytes and the FLOP count
  of ``numpy.einsum_path``'s report (computed from the shapes alone).

Shapes, dtypes and exceptions are NumPy 2.4's on both devices: where NumPy's message comes
from the library call (``inner``, ``vdot``, the gufuncs, ``einsum``), the call is made on
zero-stride stand-ins of the operands' shapes, which fails before anything is computed.
"""
from __future__ import annotations

import contextlib
import math
import operator
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .. import _devices, _fallback, _plan, _views
from .._array import LazyArray
from .._config import get_config
from .._stack import user_stacklevel
from ._building import outer
from ._creation import _made, asarray, zeros
from ._elementwise import FUNCTIONS as _EW
from ._joining import concatenate
from ._linalg import _pending, matmul, vecdot
from ._manipulation import expand_dims, matrix_transpose, moveaxis, ravel, reshape, transpose
from ._numpy_checks import raise_as_numpy, standin

_where, _equal, _conj = _EW["where"], _EW["equal"], _EW["conj"]


# ----------------------------------------------------------------------------- diagonals
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> LazyArray:
    """The ``offset``-th diagonal of the matrices of axes ``axis1``, ``axis2`` (moved to the
    end), as ``numpy.diagonal``: a read-only view, fused into what reads it."""
    return _views.view(  # type: ignore[no-any-return]
        asarray(a), lambda d: _devices.mark_read_only(d.diagonal(offset, axis1, axis2)))


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Any:
    """The sum of the ``offset``-th diagonal, as ``numpy.trace``: the diagonal view summed, one
    fused kernel for a pending ``a``; NumPy's dtypes (integers and bool summed as the platform
    integer, as ``sum``). ``out=`` is NumPy's call."""
    if out is not None:
        return _fallback.call("trace", np.trace, (a, offset, axis1, axis2, dtype), {"out": out})
    return diagonal(a, offset, axis1, axis2).sum(axis=-1, dtype=dtype)


def diag(v: Any, k: int = 0) -> LazyArray:
    """``numpy.diag``: of a vector, the square matrix with it on the ``k``-th diagonal (fused:
    ``where`` of an index comparison); of a matrix, its ``k``-th diagonal (a view)."""
    x = asarray(v)
    k = operator.index(k)
    if x.ndim == 1:
        return _diagonal_matrix(x, k)
    if x.ndim == 2:
        return diagonal(x, k)
    raise ValueError("Input must be 1- or 2-d.")


def diagflat(v: Any, k: int = 0) -> LazyArray:
    """``numpy.diagflat``: the square matrix with the flattened ``v`` on the ``k``-th diagonal."""
    x = asarray(v)
    return _diagonal_matrix(x if x.ndim == 1 else ravel(x), operator.index(k))


def _diagonal_matrix(v: LazyArray, k: int) -> LazyArray:
    """The ``(n + |k|)``-square matrix with ``v`` (length n) on its ``k``-th diagonal, zeros
    elsewhere: ``where(row + max(k, 0) == column + max(-k, 0), v[row or column], 0)``, lazy,
    so what reads it fuses with it (the matrix is never written). For ``k != 0`` the vector
    is ``v`` joined with |k| zeros first (a vector: the rows or columns past ``v`` hold no
    element of it, the comparison is false there)."""
    size = v.shape[0] + abs(k)
    if k:
        v = concatenate((v, zeros(abs(k), v.dtype, device=v.device)))
    index = _made(v.device, "arange", size)
    rows, cols = expand_dims(index, 1), expand_dims(index, 0)
    mask = _equal(rows + max(k, 0), cols + max(-k, 0)) if k else _equal(rows, cols)
    values = expand_dims(v, 1 if k >= 0 else 0)
    return _where(mask, values, zeros(1, v.dtype, device=v.device))  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- kron
def kron(a: Any, b: Any) -> LazyArray:
    """The Kronecker product, as ``numpy.kron``: ``a`` with new axes after each of its axes
    times ``b`` with new axes before each of its, one fused kernel (the operands padded with
    leading length-1 axes to the same ndim first), reshaped to the product of the shapes (a
    view of the kernel's result)."""
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y  # type: ignore[no-any-return]
    nd = max(x.ndim, y.ndim)
    xs = (1,) * (nd - x.ndim) + x.shape
    ys = (1,) * (nd - y.ndim) + y.shape
    x = expand_dims(x, tuple(range(nd - x.ndim))) if x.ndim < nd else x
    y = expand_dims(y, tuple(range(nd - y.ndim))) if y.ndim < nd else y
    product = expand_dims(x, tuple(range(1, 2 * nd, 2))) * expand_dims(y, tuple(range(0, 2 * nd, 2)))
    return reshape(product, tuple(m * n for m, n in zip(xs, ys)))


# ----------------------------------------------------------------------------- cross
_CROSS_DIMENSIONS = "incompatible dimensions for cross product\n(dimension must be 2 or 3)"


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> LazyArray:
    """The cross products of the vectors along ``axisa`` of ``a`` and ``axisb`` of ``b``
    (``axis``: all three), as ``numpy.cross``: the componentwise formula, fused into one
    kernel that computes the three components (chosen by index along the result's last
    axis, then moved to ``axisc``). 2-vectors are NumPy's deprecated form: a
    ``DeprecationWarning``, the z component of the product (2 x 2), or 0 taken for the missing
    component (2 x 3)."""
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    x, y = asarray(a), asarray(b)
    if x.ndim < 1 or y.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    axisa = normalize_axis_index(axisa, x.ndim, msg_prefix="axisa")
    axisb = normalize_axis_index(axisb, y.ndim, msg_prefix="axisb")
    x, y = moveaxis(x, axisa, -1), moveaxis(y, axisb, -1)
    m, n = x.shape[-1], y.shape[-1]
    if m not in (2, 3) or n not in (2, 3):
        raise ValueError(_CROSS_DIMENSIONS)
    if m == 2 or n == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=user_stacklevel())
    shape = np.broadcast(standin(x, x.shape[:-1]), standin(y, y.shape[:-1])).shape  # (its error)
    dtype = np.promote_types(x.dtype, y.dtype)
    x, y = x.astype(dtype, copy=False), y.astype(dtype, copy=False)
    a0, a1, b0, b1 = x[..., 0], x[..., 1], y[..., 0], y[..., 1]
    # (1-d vectors: the components are 0-d, their products NumPy's scalars, which warn where
    # an integer one wraps around; NumPy's cross works on arrays, which do not)
    with np.errstate(over="ignore") if dtype.kind in "biu" else contextlib.nullcontext():
        z = a0 * b1 - a1 * b0
        if m == 2 and n == 2:
            return z  # type: ignore[no-any-return]
        axisc = normalize_axis_index(axisc, len(shape) + 1, msg_prefix="axisc")
        if m == 3 and n == 3:
            a2, b2 = x[..., 2], y[..., 2]
            parts = (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2)
        elif m == 2:                       # a2 = 0
            b2 = y[..., 2]
            parts = (a1 * b2, -(a0 * b2))
        else:                              # b2 = 0
            a2 = x[..., 2]
            parts = (-(a2 * b1), a2 * b0)
    component = _made(z.device, "arange", 3)
    c0, c1, c2 = (expand_dims(p, -1) for p in (*parts, z))
    product = _where(_equal(component, 0), c0, _where(_equal(component, 1), c1, c2))
    return moveaxis(product, -1, axisc)


def linalg_cross(x1: Any, x2: Any, /, *, axis: int = -1) -> LazyArray:
    """``numpy.linalg.cross`` (the array API's): :func:`cross` of 3-vectors along ``axis``
    only (NumPy's ValueError for others)."""
    x, y = asarray(x1), asarray(x2)
    if x.shape[axis] != 3 or y.shape[axis] != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, "
            f"but they are {x.shape[axis]} and {y.shape[axis]} dimensional instead.")
    return cross(x, y, axis=axis)


# ----------------------------------------------------------------------------- products
def inner(a: Any, b: Any, /) -> LazyArray:
    """The sums of products over the last axes, as ``numpy.inner`` (no conjugation): the
    operands as ``(-1, n)`` matrices (views where their memory allows), one :func:`matmul`
    of the first by the transposed second (a vector by :func:`matmul` itself), reshaped to
    ``a.shape[:-1] + b.shape[:-1]``."""
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y  # type: ignore[no-any-return]
    if x.shape[-1] != y.shape[-1]:
        raise_as_numpy(np.inner, x, y)
    if y.ndim == 1:
        return matmul(x, y)  # type: ignore[no-any-return]
    n = x.shape[-1]
    rows = reshape(y, (math.prod(y.shape[:-1]), n))      # (not -1: n may be 0)
    if x.ndim == 1:
        product = matmul(rows, x)
    else:
        product = matmul(reshape(x, (math.prod(x.shape[:-1]), n)), matrix_transpose(rows))
    return reshape(product, x.shape[:-1] + y.shape[:-1])


def vdot(a: Any, b: Any, /) -> LazyArray:
    """The dot product of the flattened operands, the first conjugated, as ``numpy.vdot`` (a
    0-d array): :func:`vecdot` of the two as vectors; of equal shapes with a pending float or
    complex operand, one fused multiply-and-sum over all axes (nothing flattened)."""
    x, y = asarray(a), asarray(b)
    if x.size != y.size:
        raise_as_numpy(np.vdot, x, y)
    dtype = np.result_type(x.dtype, y.dtype)
    if x.shape == y.shape and x.ndim != 1 and (_pending(x) or _pending(y)) \
            and dtype.kind in "fc" and x.device == y.device and get_config().mode == "lazy":
        return ((_conj(x) if x.dtype.kind == "c" else x) * y).sum(dtype=dtype)  # type: ignore[no-any-return]
    return vecdot(x if x.ndim == 1 else ravel(x), y if y.ndim == 1 else ravel(y))  # type: ignore[no-any-return]


def tensordot(a: Any, b: Any, axes: Any = 2) -> LazyArray:
    """The sums of products over ``axes`` (an int: the last ``axes`` of ``a`` with the first
    of ``b``; a pair of sequences: those axes), as ``numpy.tensordot``: NumPy's own steps,
    each operand transposed (a view) and reshaped to a matrix, one :func:`matmul`, the result
    reshaped."""
    try:
        iter(axes)
    except Exception:
        axes_a, axes_b = list(range(-axes, 0)), list(range(axes))
    else:
        axes_a, axes_b = axes
    axes_a = list(axes_a) if _has_len(axes_a) else [axes_a]
    axes_b = list(axes_b) if _has_len(axes_b) else [axes_b]
    if len(set(axes_a)) != len(axes_a) or len(set(axes_b)) != len(axes_b):
        raise ValueError("duplicate axes are not allowed in tensordot")
    x, y = asarray(a), asarray(b)
    if len(axes_a) != len(axes_b) \
            or any(x.shape[i] != y.shape[j] for i, j in zip(axes_a, axes_b)):
        raise ValueError("shape-mismatch for sum")
    axes_a = [i + x.ndim if i < 0 else i for i in axes_a]
    axes_b = [j + y.ndim if j < 0 else j for j in axes_b]
    free_a = [i for i in range(x.ndim) if i not in axes_a]
    free_b = [j for j in range(y.ndim) if j not in axes_b]
    summed = math.prod(x.shape[i] for i in axes_a)
    rows = math.prod(x.shape[i] for i in free_a)
    cols = math.prod(y.shape[j] for j in free_b)
    left = reshape(transpose(x, free_a + axes_a), (rows, summed))
    right = reshape(transpose(y, axes_b + free_b), (summed, cols))
    return reshape(matmul(left, right),
                   tuple(x.shape[i] for i in free_a) + tuple(y.shape[j] for j in free_b))


def _has_len(axes: Any) -> bool:
    try:
        len(axes)
    except TypeError:
        return False
    return True


def matvec(x1: Any, x2: Any, /) -> LazyArray:
    """The matrix-vector products of the stacks ``x1`` (``(..., m, n)``) and ``x2``
    (``(..., n)``), as NumPy 2.2's ``numpy.matvec`` (no conjugation): :func:`matmul` with
    ``x2`` as a column (views), so a pending matrix times a vector is one fused kernel."""
    x, y = asarray(x1), asarray(x2)
    if x.ndim < 2 or y.ndim < 1 or x.shape[-1] != y.shape[-1] \
            or not _broadcastable(x.shape[:-2], y.shape[:-1]):
        raise_as_numpy(np.matvec, x, y)
    if y.ndim == 1:
        return matmul(x, y)  # type: ignore[no-any-return]
    return matmul(x, expand_dims(y, -1))[..., 0]  # type: ignore[no-any-return]


def vecmat(x1: Any, x2: Any, /) -> LazyArray:
    """The vector-matrix products of the stacks ``x1`` (``(..., n)``, conjugated) and ``x2``
    (``(..., n, m)``), as NumPy 2.2's ``numpy.vecmat``: :func:`matmul` with ``conj(x1)`` as a
    row (views)."""
    x, y = asarray(x1), asarray(x2)
    if x.ndim < 1 or y.ndim < 2 or x.shape[-1] != y.shape[-2] \
            or not _broadcastable(x.shape[:-1], y.shape[:-2]):
        raise_as_numpy(np.vecmat, x, y)
    if x.dtype.kind == "c":
        x = _conj(x)
    if x.ndim == 1:
        return matmul(x, y)  # type: ignore[no-any-return]
    return matmul(expand_dims(x, -2), y)[..., 0, :]  # type: ignore[no-any-return]


def _broadcastable(*shapes: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------- einsum
_FLOPS = {False: re.compile(r"Naive FLOP count:\s*(\S+)"),
          True: re.compile(r"Optimized FLOP count:\s*(\S+)")}


def einsum(*operands: Any, out: Any = None, optimize: Any = False, dtype: Any = None,
           order: str = "K", casting: str = "safe") -> Any:
    """Einstein summation, as ``numpy.einsum`` (subscripts and operands, or NumPy's
    interleaved form): NumPy's (CuPy's) ``einsum`` with ``optimize`` (its contraction order)
    on the operands computed once each by their fused kernel. ``la.explain`` shows the call
    with its bytes and FLOPs (``numpy.einsum_path``'s count for the shapes: optimized where
    ``optimize`` is); NumPy's exceptions on both devices. ``out=`` is NumPy's call."""
    kwargs: dict[str, Any] = {"optimize": optimize}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if order != "K":
        kwargs["order"] = order
    if casting != "safe":
        kwargs["casting"] = casting
    if out is not None:
        return _fallback.call("einsum", np.einsum, operands, {**kwargs, "out": out})
    if not operands:
        raise TypeError("function takes at least 1 argument (0 given)")
    arrays = [i for i in range(len(operands))
              if (i > 0 if isinstance(operands[0], str) else i % 2 == 0 and i < len(operands) - 1)]
    operands = tuple(asarray(x) if i in arrays else x for i, x in enumerate(operands))
    standins = tuple(standin(x) if i in arrays else x for i, x in enumerate(operands))
    flops = _einsum_flops(standins, kwargs)
    if len(kwargs) > 1:         # dtype=, casting=, order=: NumPy's checks, on one element each
        np.einsum(*(np.zeros((1,) * x.ndim, x.dtype) if i in arrays else x
                    for i, x in enumerate(standins)), **kwargs)
        if any(operands[i].device == "cuda" for i in arrays):
            kwargs.pop("order", None)       # (CuPy's einsum takes neither: checked above,
            kwargs.pop("casting", None)     # and the layout is CuPy's own)
    result = _fallback.call("einsum", np.einsum, operands, kwargs)
    if isinstance(result, LazyArray):
        read = sum(operands[i].nbytes for i in arrays)
        result._node.origin = _plan.call_record("einsum", read, result.nbytes, flops)
    return result


def _einsum_flops(standins: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The FLOP count of ``numpy.einsum_path``'s report for these shapes; NumPy's einsum's
    exception (raised by its call on the stand-ins: no work) for operands it refuses."""
    optimize = kwargs["optimize"]
    try:
        _, report = np.einsum_path(*standins, optimize=optimize if optimize else False)
    except Exception:
        np.einsum(*standins, **kwargs)        # (NumPy's own message, its exception type)
        return None                 # (an input einsum takes and einsum_path not: no count)
    found = _FLOPS[bool(optimize)].search(report)
    return int(float(found.group(1))) if found else None


# ----------------------------------------------------------------------------- linalg
def _linalg(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    fn.__name__ = fn.__qualname__ = name
    return fn


def _linalg_outer(x1: Any, x2: Any, /) -> LazyArray:
    """``numpy.linalg.outer``: the outer product of two vectors (fused: :func:`outer`)."""
    x, y = asarray(x1), asarray(x2)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError("Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x.ndim} and x2.ndim={y.ndim}.")
    return outer(x, y)


def _linalg_trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> LazyArray:
    """``numpy.linalg.trace`` (the array API's): the traces of the matrices of the last two
    axes, fused (:func:`trace`)."""
    return trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)  # type: ignore[no-any-return]


def _linalg_diagonal(x: Any, /, *, offset: int = 0) -> LazyArray:
    """``numpy.linalg.diagonal`` (the array API's): the diagonals of the matrices of the last
    two axes, a view (:func:`diagonal`)."""
    return diagonal(x, offset, axis1=-2, axis2=-1)


def _linalg_tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> LazyArray:
    """``numpy.linalg.tensordot`` (the array API's): :func:`tensordot`."""
    return tensordot(x1, x2, axes)


#: ``lazyarr.linalg``'s functions of this module (added to its namespace, lazyarr/_functions/_norms.py)
LINALG: dict[str, Callable[..., Any]] = {
    "cross": _linalg("cross", linalg_cross), "outer": _linalg("outer", _linalg_outer),
    "trace": _linalg("trace", _linalg_trace), "diagonal": _linalg("diagonal", _linalg_diagonal),
    "tensordot": _linalg("tensordot", _linalg_tensordot)}

FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (diagonal, trace, diag, diagflat, kron, cross, inner, vdot,
                            tensordot, matvec, vecmat, einsum)}
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {
    **{getattr(np, name): fn for name, fn in FUNCTIONS.items() if name not in ("matvec", "vecmat")},
    **{getattr(np.linalg, name): fn for name, fn in LINALG.items()},
    np.linalg.matrix_transpose: matrix_transpose}
#: ``numpy.matvec(lazy, ...)``, ``numpy.vecmat``: ufuncs (``__array_ufunc__``)
UFUNCS: dict[np.ufunc, Callable[..., Any]] = {np.matvec: matvec, np.vecmat: vecmat}
