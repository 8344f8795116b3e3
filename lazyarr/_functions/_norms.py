"""``lazyarr.linalg``: NumPy's ``numpy.linalg`` (CuPy's ``cupy.linalg`` on cuda) through the
fallback, except the norms ``norm``, ``vector_norm`` and ``matrix_norm``, which are lazyarr's
own: each is NumPy 2.4's algorithm (numpy/linalg/_linalg.py) written with lazyarr's fused
functions, so the norm of a pending expression (``la.linalg.norm(a - b)``) is one reduction
kernel that reads ``a`` and ``b``: no temporary for ``a - b`` nor for its squares, where
NumPy writes both. What follows the reduction (the square root, the max of the column sums
of a matrix 1-norm) runs on the reduced array. The norms of the singular values (matrix
``ord`` 2, -2, ``'nuc'``) call the library's SVD (``linalg.svd``, lazyarr/_functions/
_decompositions.py) and reduce its result, as NumPy does.

The values are NumPy's to rounding (lazyarr's sums are its own); dtypes, shapes, the
handling of empty axes and NumPy's exceptions are NumPy's exactly.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .. import _fallback
from . import _products
from .._array import LazyArray
from .._build import ufunc_keepdims
from . import _decompositions
from ._creation import asarray, zeros
from ._elementwise import FUNCTIONS as _EW
from ._linalg import matmul, vecdot
from ._manipulation import matrix_transpose, moveaxis, reshape

_sqrt = _EW["sqrt"]


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> LazyArray:
    """``numpy.linalg.norm``: a vector norm along one axis (``axis`` an int, or None for a
    1-D ``x``), a matrix norm over two (a 2-tuple, or None for a 2-D ``x``); with ``axis`` and
    ``ord`` None, the 2-norm of all of ``x``. Integers and bools are normed as float64; a
    complex ``x`` gives its real dtype."""
    x = _inexact(x)
    if axis is None and (ord is None or (ord in ("f", "fro") and x.ndim == 2)
                         or (ord == 2 and x.ndim == 1)):
        return _vector_norm(x, None, None, keepdims)
    if axis is None:
        axis = tuple(range(x.ndim))
    elif not isinstance(axis, tuple):
        axis = (_integer_axis(axis),)
    if len(axis) == 1:
        if not isinstance(ord, str):    # (NumPy's ufunc reduction reads axis and keepdims
            _no_bool_axis(axis)         # here: keepdims as a C int; elsewhere its truth)
            if type(keepdims) is not bool:
                keepdims = ufunc_keepdims(keepdims)
        return _vector_norm(x, axis, ord, keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, axis, ord, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False,
                ord: Any = 2) -> LazyArray:
    """``numpy.linalg.vector_norm``: the ``ord``-norm of the vectors along ``axis`` (None: all
    of ``x`` as one vector; an int; a tuple: those axes flattened into one)."""
    x = _inexact(x)
    if axis is None:
        return _vector_norm(x, None, ord, keepdims)
    if isinstance(axis, tuple):
        axis = normalize_axis_tuple(axis, x.ndim)
    else:
        axis = (_integer_axis(axis),)
    return _vector_norm(x, axis, ord, keepdims)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> LazyArray:
    """``numpy.linalg.matrix_norm``: the ``ord``-norm of the matrices of the last two axes."""
    return norm(x, axis=(-2, -1), keepdims=keepdims, ord=ord)


def _inexact(x: Any) -> LazyArray:
    """``x`` as NumPy's norms take it: integers and bool as float64 (NumPy's
    ``x.astype(float)``), floating and complex dtypes as they are."""
    x = asarray(x)
    return x if x.dtype.kind in "fc" else x.astype(np.float64)


def _integer_axis(axis: Any) -> int:
    """A single ``axis`` as NumPy's ``norm`` takes it (``int(axis)``), with its TypeError."""
    try:
        return int(axis)
    except Exception as e:
        raise TypeError("'axis' must be None, an integer or a tuple of integers") from e


def _no_bool_axis(axis: tuple[Any, ...]) -> None:
    """NumPy's TypeError where its norm gives ``axis`` to a ufunc reduction as it came: a bool
    is not an axis there (``norm(x, axis=(True,))``), though ``normalize_axis_index`` takes it."""
    if any(isinstance(a, (bool, np.bool_)) for a in axis):
        raise TypeError("an integer is required")


def _two_norm(x: LazyArray, axis: tuple[int, ...] | None) -> LazyArray:
    """The square root of the sum over ``axis`` of ``|x|**2``, the squares as NumPy takes
    them (``(conj(x) * x).real``: no square root per element, as ``abs`` would take)."""
    squares = (x.conj() * x).real if x.dtype.kind == "c" else x * x
    return _sqrt(squares.sum(axis=axis))


def _kept(result: LazyArray, shape: tuple[int, ...], axis: tuple[int, ...] | None) -> LazyArray:
    """``result`` of a reduction over ``axis`` of an array of ``shape``, reshaped as
    ``keepdims=True`` has it (as NumPy's ``vector_norm`` does; reducing without keepdims
    leaves the root of a full reduction a 0-d value, which costs no kernel)."""
    kept = tuple(1 if axis is None or i in axis else n for i, n in enumerate(shape))
    return reshape(result, kept)


def _vector_norm(x: LazyArray, axis: tuple[int, ...] | None, ord: Any,
                 keepdims: bool) -> LazyArray:
    """NumPy's vector norms of ``x`` along ``axis`` (a tuple of axes reduced together, or
    None: all of them), for every ``ord``."""
    if isinstance(ord, str):        # ('fro' and 'nuc' are matrix norms)
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if axis is not None:
        axis = normalize_axis_tuple(axis, x.ndim)
    result = _vector_norm_of(x, axis, ord)
    return _kept(result, x.shape, axis) if keepdims else result


def _vector_norm_of(x: LazyArray, axis: tuple[int, ...] | None, ord: Any) -> LazyArray:
    """NumPy's branches for a numeric ``ord``, in its order and with its comparisons (``True``
    is the 1-norm, ``nan`` the general formula): one reduction of ``x`` each."""
    if ord == math.inf:
        return _max_from_zero(abs(x), axis)
    if ord == -math.inf:
        return _min(abs(x), axis)
    if ord == 0:
        return _sum((x != 0).astype(_real_dtype(x)), axis)
    if ord == 1:
        return _sum(abs(x), axis)
    if ord is None or ord == 2:
        return _two_norm(x, axis)
    magnitude = abs(x)
    powers = magnitude ** ord       # (NumPy's in-place ``absx **= ord``: absx's dtype kept)
    if powers.dtype != magnitude.dtype:
        powers = powers.astype(magnitude.dtype)
    total = _sum(powers, axis)
    return total ** np.reciprocal(ord, dtype=total.dtype)     # type: ignore[no-any-return]


def _matrix_norm(x: LazyArray, axis: tuple[Any, Any], ord: Any, keepdims: bool) -> LazyArray:
    """NumPy's matrix norms of the matrices of ``x``'s two axes ``axis`` (rows, columns)."""
    row = normalize_axis_index(axis[0], x.ndim)
    col = normalize_axis_index(axis[1], x.ndim)
    if row == col:
        raise ValueError("Duplicate axes given.")
    if ord == 2:
        result = _singular_value_norm(x, row, col, _max_from_zero)
    elif ord == -2:
        result = _singular_value_norm(x, row, col, _min)
    elif ord in (1, -1):        # the largest (smallest) column sum
        sums = abs(x).sum(axis=row)
        reduce = _max_from_zero if ord == 1 else _min
        result = reduce(sums, (col - (col > row),))
    elif ord in (math.inf, -math.inf):      # the largest (smallest) row sum
        sums = abs(x).sum(axis=col)
        reduce = _max_from_zero if ord == math.inf else _min
        result = reduce(sums, (row - (row > col),))
    elif ord in (None, "fro", "f"):
        _no_bool_axis(axis)
        result = _two_norm(x, (row, col))
    elif ord == "nuc":
        result = _singular_value_norm(x, row, col, _sum)
    else:
        raise ValueError("Invalid norm order for matrices.")
    return _kept(result, x.shape, (row, col)) if keepdims else result


def _singular_value_norm(x: LazyArray, row: int, col: int,
                         reduce: Callable[[LazyArray, tuple[int, ...]], LazyArray]) -> LazyArray:
    """``reduce`` of the singular values of each matrix (NumPy's ``_multi_svd_norm``): the
    library's SVD (``linalg.svd``) of ``x`` computed."""
    matrices = moveaxis(x, (row, col), (-2, -1))
    return reduce(linalg.svd(matrices, compute_uv=False), (-1,))


def _max_from_zero(a: LazyArray, axis: tuple[int, ...] | None) -> LazyArray:
    """NumPy's ``a.max(axis, initial=0)`` of values ``a >= 0``: 0 where the axes are empty,
    which a max has no value for (the fused max takes no ``initial=``)."""
    reduced = range(a.ndim) if axis is None else normalize_axis_tuple(axis, a.ndim)
    if math.prod(a.shape[i] for i in reduced) == 0:
        shape = tuple(n for i, n in enumerate(a.shape) if i not in reduced)
        return zeros(shape, dtype=a.dtype, device=a.device)
    return a.max(axis=axis)  # type: ignore[no-any-return]


def _min(a: LazyArray, axis: tuple[int, ...] | None) -> LazyArray:
    return a.min(axis=axis)  # type: ignore[no-any-return]


def _sum(a: LazyArray, axis: tuple[int, ...] | None) -> LazyArray:
    return a.sum(axis=axis)  # type: ignore[no-any-return]


def _real_dtype(x: LazyArray) -> np.dtype:
    """The dtype of ``x.real`` (a complex dtype's component, a float dtype itself)."""
    return np.finfo(x.dtype).dtype


#: ``lazyarr.linalg``: the three norms, the decompositions and solvers
#: (lazyarr/_functions/_decompositions.py), ``vecdot``, ``matmul`` and ``matrix_transpose``
#: are lazyarr's; every other name is NumPy's (CuPy's) through the fallback.
linalg = _fallback.FallbackNamespace("linalg", {
    "norm": norm, "vector_norm": vector_norm, "matrix_norm": matrix_norm,
    **_decompositions.FUNCTIONS,
    # the array API's names of the main namespace's own functions
    "vecdot": vecdot, "matmul": matmul, "matrix_transpose": matrix_transpose,
    **_products.LINALG})   # cross, outer, trace, diagonal, tensordot: lazyarr/_functions/_products.py

#: (the norms live in ``la.linalg`` only: nothing for the main namespace)
FUNCTIONS: dict[str, Callable[..., Any]] = {}
NUMPY_FUNCTIONS = {np.linalg.norm: norm, np.linalg.vector_norm: vector_norm,
                   np.linalg.matrix_norm: matrix_norm, **_decompositions.NUMPY_FUNCTIONS}
