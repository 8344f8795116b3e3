"""Reductions that skip NaNs, and two more built from the registry's: ``nansum``, ``nanprod``,
``nanmax``, ``nanmin``, ``nanmean``, ``nanargmax``, ``nanargmin``, ``count_nonzero``, ``ptp``. Each is NumPy 2's definition
(numpy/lib/_nanfunctions_impl.py) written with lazyarr's ops, so the NaN test fuses into the
reduction's kernel (``la.nansum(f(x))`` is one kernel) on either device. Complex NaN-reductions,
and the keywords the native forms lack (``out=``, ``initial=``, ``where=``), run NumPy's own
through the fallback. Values, dtypes and warnings are NumPy's (``tests/test_nanfunctions.py``),
under lazy mode's accumulation rule for float sums as every lazy sum."""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _fallback
from .._array import LazyArray
from ._creation import asarray
from ._elementwise import FUNCTIONS as _EW
from ._statistical import FUNCTIONS as _R

_where, _isnan, _not_equal, _logical_not = (_EW[n] for n in ("where", "isnan", "not_equal",
                                                              "logical_not"))


def _numpy(name: str, a: Any, **kwargs: Any) -> Any:
    """NumPy's (CuPy's) own ``name`` through the fallback, given only the keywords that are set."""
    return _fallback.call(name, getattr(np, name), (a,),
                          {k: v for k, v in kwargs.items() if v is not None})


def _native(x: LazyArray, *extras: Any) -> bool:
    """Whether the native form applies: real data and none of NumPy's extra keywords."""
    return x.dtype.kind != "c" and all(v is None for v in extras)


def _replaced(x: LazyArray, fill: float) -> LazyArray:
    """``x`` with its NaNs replaced by ``fill`` (pending; ``x`` itself when it holds no floats)."""
    return _where(_isnan(x), fill, x) if x.dtype.kind == "f" else x


def _nan_filled(name: str, reduction: str, fill: float, a: Any, axis: Any, dtype: Any, out: Any,
                keepdims: bool, initial: Any, where: Any) -> Any:
    x = asarray(a)
    if not _native(x, out, initial, where):
        return _numpy(name, a, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                      initial=initial, where=where)
    return _R[reduction](_replaced(x, fill), axis, dtype=dtype, keepdims=keepdims)


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """The sum with NaNs counted as zero, as ``numpy.nansum`` (an all-NaN slice sums to 0)."""
    return _nan_filled("nansum", "sum", 0, a, axis, dtype, out, keepdims, initial, where)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Any:
    """The product with NaNs counted as one, as ``numpy.nanprod``."""
    return _nan_filled("nanprod", "prod", 1, a, axis, dtype, out, keepdims, initial, where)


def _nan_extreme(name: str, reduction: str, fill: float, a: Any, axis: Any, out: Any,
                 keepdims: bool, initial: Any, where: Any) -> Any:
    x = asarray(a)
    if not _native(x, out, initial, where):
        return _numpy(name, a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)
    result = _R[reduction](_replaced(x, fill), axis, keepdims=keepdims)
    if x.dtype.kind != "f":
        return result
    all_nan = _R["all"](_isnan(x), axis, keepdims=keepdims)
    if bool(_R["any"](all_nan)):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
        result = _where(all_nan, np.nan, result)
    return result


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> Any:
    """The maximum ignoring NaNs, as ``numpy.nanmax`` (an all-NaN slice gives NaN and a
    RuntimeWarning)."""
    return _nan_extreme("nanmax", "max", -np.inf, a, axis, out, keepdims, initial, where)


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> Any:
    """The minimum ignoring NaNs, as ``numpy.nanmin`` (an all-NaN slice gives NaN and a
    RuntimeWarning)."""
    return _nan_extreme("nanmin", "min", np.inf, a, axis, out, keepdims, initial, where)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            *, where: Any = None) -> Any:
    """The mean of the elements that are not NaN, as ``numpy.nanmean``: their sum divided by
    their count, in the sum's dtype (an all-NaN slice gives NaN and a RuntimeWarning)."""
    x = asarray(a)
    if not _native(x, out, where):
        return _numpy("nanmean", a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    if x.dtype.kind != "f":
        return _R["mean"](x, axis, dtype=dtype, keepdims=keepdims)
    nan = _isnan(x)
    total = _R["sum"](_where(nan, 0, x), axis, dtype=dtype, keepdims=keepdims)
    count = _R["sum"](_logical_not(nan), axis, dtype=np.intp, keepdims=keepdims)
    if bool(_R["any"](count == 0)):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total / count).astype(total.dtype)


def _nan_arg(name: str, reduction: str, fill: float, a: Any, axis: Any, out: Any,
             keepdims: bool) -> Any:
    x = asarray(a)
    if not _native(x, out):
        return _numpy(name, a, axis=axis, out=out, keepdims=keepdims)
    if x.dtype.kind == "f" and x.size and bool(_R["any"](_R["all"](_isnan(x), axis))):
        raise ValueError("All-NaN slice encountered")
    return _R[reduction](_replaced(x, fill), axis, keepdims=keepdims)


def nanargmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    """The index of the maximum ignoring NaNs, as ``numpy.nanargmax`` (an all-NaN slice is a
    ``ValueError``)."""
    return _nan_arg("nanargmax", "argmax", -np.inf, a, axis, out, keepdims)


def nanargmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    """The index of the minimum ignoring NaNs, as ``numpy.nanargmin`` (an all-NaN slice is a
    ``ValueError``)."""
    return _nan_arg("nanargmin", "argmin", np.inf, a, axis, out, keepdims)


def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> LazyArray:
    """The number of non-zero elements, as ``numpy.count_nonzero`` (an ``intp`` count, 0-d for
    ``axis=None``)."""
    return _R["sum"](_not_equal(asarray(a), 0), axis, dtype=np.intp,  # type: ignore[no-any-return]
                     keepdims=keepdims)


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Peak to peak, ``max - min``, as ``numpy.ptp``."""
    if out is not None:
        return _numpy("ptp", a, axis=axis, out=out, keepdims=keepdims)
    x = asarray(a)
    return _R["max"](x, axis, keepdims=keepdims) - _R["min"](x, axis, keepdims=keepdims)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (nansum, nanprod, nanmax, nanmin, nanmean, nanargmax, nanargmin,
                            count_nonzero, ptp)
}
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {getattr(np, name): fn for name, fn in FUNCTIONS.items()}
