"""Reductions that skip NaNs, and more built from the registry's: ``nansum``, ``nanprod``,
``nanmax``, ``nanmin``, ``nanmean``, ``nanvar``, ``nanstd``, ``nanargmax``, ``nanargmin``,
``count_nonzero``, ``ptp``, ``average``. Each is NumPy 2's definition
(numpy/lib/_nanfunctions_impl.py, numpy/lib/_function_base_impl.py) written with lazyarr's
ops, so the NaN test fuses into the reduction's kernel (``la.nansum(f(x))`` is one kernel) on
either device. Complex NaN-reductions, and the keywords the native forms lack (``out=``,
``initial=``, ``where=``, ``mean=``), run NumPy's own through the fallback, and so do eager
mode's float ``nanmax``/``nanmin`` (NumPy's signed zeros). Values, dtypes and
warnings are NumPy's (``tests/test_nanfunctions.py``, ``tests/test_nanvar_average.py``), under
lazy mode's accumulation rule for float sums as every lazy sum (``nanvar``/``nanstd``: the rule
of ``var``/``std``)."""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _devices, _fallback
from .._array import LazyArray
from .._build import recompute_weight, store_min_weight
from .._config import get_config
from .._stack import user_stacklevel
from ._creation import asarray, copy, full
from ._elementwise import FUNCTIONS as _EW
from ._manipulation import broadcast_to, reshape, transpose
from ._statistical import FUNCTIONS as _R

_where, _isnan, _not_equal, _logical_not, _maximum, _sqrt = (
    _EW[n] for n in ("where", "isnan", "not_equal", "logical_not", "maximum", "sqrt"))
_F64 = np.dtype(np.float64)


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
    if x.dtype.kind == "f" and get_config().mode == "eager":
        # Eager mode is NumPy's (CuPy's) own call, signed zeros included: NumPy's nanmax is
        # fmax.reduce, which keeps another zero than max of the NaN-replaced values does
        # (np.nanmax([0.0, -0.0]) is 0.0, np.max is -0.0). Lazy mode: the IEEE sign, as max's.
        func = getattr(_devices.xp(x.device), name)
        return _fallback.run(name, func, x.device, (x,), {"axis": axis, "keepdims": keepdims})
    result = _R[reduction](_replaced(x, fill), axis, keepdims=keepdims)
    if x.dtype.kind != "f":
        return result
    all_nan = _R["all"](_isnan(x), axis, keepdims=keepdims)
    if bool(_R["any"](all_nan)):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=user_stacklevel())
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
    if dtype is not None and np.dtype(dtype).kind not in "fc":      # (NumPy's check, as nanvar's)
        raise TypeError("If a is inexact, then dtype must be inexact")
    nan = _isnan(x)
    total = _R["sum"](_where(nan, 0, x), axis, dtype=dtype, keepdims=keepdims)
    count = _R["sum"](_logical_not(nan), axis, dtype=np.intp, keepdims=keepdims)
    if bool(_R["any"](count == 0)):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=user_stacklevel())
        # NaN there, without computing 0/0: NumPy divides under errstate(invalid="ignore"),
        # and the kernel runs later, under whatever error state is then in effect
        empty = count == 0
        return _where(empty, np.nan, total / _where(empty, 1, count)).astype(total.dtype)
    return (total / count).astype(total.dtype)


def _any(mask: LazyArray) -> bool:
    """Whether any element of the computed or pending ``mask`` is true (a 0-d one read as it
    is, without a reduction kernel)."""
    return bool(mask) if mask.ndim == 0 else bool(_R["any"](mask))


def _stored(x: LazyArray) -> LazyArray:
    """``x`` computed first when it is pending and recomputing it for its two later reads
    weighs at least what the store rule stores from (``_build.store_min_weight``, per element:
    docs/design.rst, "Store or recompute"): nanvar reads ``x`` in three kernels, and
    recomputing an ``exp`` twice more costs about one write and a read."""
    if not x.is_materialized and 2 * recompute_weight(x._node) >= store_min_weight(x._node):
        x.compute()
    return x


def _nan_variance(name: str, a: Any, axis: Any, dtype: Any, out: Any, ddof: Any, keepdims: bool,
                  where: Any, mean: Any, correction: Any) -> Any:
    """``nanvar`` (``name`` "nanvar") or ``nanstd`` ("nanstd"), as NumPy computes them: the
    count and the sum of the elements that are not NaN, their mean, the sum of the squared
    deviations of those elements from it, divided by ``count - ddof`` (NaN and a
    RuntimeWarning where that is <= 0). The result dtype is ``dtype`` or the input's (float64
    for integers and bools, which have no NaN: those are ``var``/``std`` themselves).

    Lazy: three fused kernels (the count, the sum, the squared deviations, each reading the
    input with the NaN test fused in) and the final division, pending. Everything is computed
    in float64 from the elements cast to the loop dtype, and rounded once to the result
    dtype: the accumulation rule of lazyarr's ``var``/``std`` (docs/testing.rst,
    "Reductions"); NumPy computes float16/float32 in their own precision."""
    x = asarray(a)
    arrays = (np.ndarray, LazyArray)      # (an array ddof: NumPy's broadcasting, its errors)
    if not _native(x, out, where, mean) or dtype is not None and np.dtype(dtype).kind == "c" \
            or isinstance(ddof, arrays) or isinstance(correction, arrays):
        return _numpy(name, a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                      where=where, mean=mean, correction=correction)
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if x.dtype.kind != "f":         # no NaN to skip: NumPy's nanvar is var
        return _R[name[3:]](x, axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    loop = x.dtype if dtype is None else np.dtype(dtype)
    if loop.kind != "f":
        raise TypeError("If a is inexact, then dtype must be inexact")
    if x.ndim == 0 and type(axis) is int and axis in (0, -1):
        axis = None     # NumPy's sums (so its nanvar) take axis 0 or -1 of a 0-d array as None
    x = _stored(x)
    nan = _isnan(x)
    values = x.astype(loop, copy=False).astype(_F64, copy=False)
    count = _R["sum"](_logical_not(nan), axis, dtype=np.intp, keepdims=True)
    total = _R["sum"](_where(nan, 0, values), axis, keepdims=True)
    # An all-NaN slice's mean is NaN in NumPy (0/0, its warning silenced); here its total is
    # divided by 1: its deviations are all replaced by 0 below either way, and the kernel
    # then raises no floating-point error for NumPy's state to report at materialization.
    deviation = _where(nan, 0, values - total / _maximum(count, 1))
    squares = _R["sum"](deviation * deviation, axis, keepdims=keepdims)
    dof = reshape(count, squares.shape) - ddof
    bad = dof <= 0
    # Value-dependent (NumPy warns at the call): only the reduced counts are read for it.
    if _any(bad):
        warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning,
                      stacklevel=user_stacklevel())
    variance = _where(bad, np.nan, squares / _where(bad, 1, dof))   # (no 0/0 reported, as NumPy)
    result = _sqrt(variance) if name == "nanstd" else variance
    return result.astype(loop, copy=False)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False, *, where: Any = None, mean: Any = None,
           correction: Any = None) -> Any:
    """The variance of the elements that are not NaN, as ``numpy.nanvar``: the mean of their
    squared deviations from their mean, divided by ``count - ddof`` instead of the count
    (``correction`` is the array API's name of ``ddof``). A slice with ``count - ddof <= 0``
    (all NaN, or empty) gives NaN and a RuntimeWarning. Float input keeps its dtype (or
    ``dtype``'s, which must be inexact); integers and bools give float64, as ``var``."""
    return _nan_variance("nanvar", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False, *, where: Any = None, mean: Any = None,
           correction: Any = None) -> Any:
    """The standard deviation of the elements that are not NaN, as ``numpy.nanstd``: the
    square root of :func:`nanvar` (same keywords, dtypes, NaN and warning)."""
    return _nan_variance("nanstd", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


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


def _broadcastable_weights(weights: Any, x: LazyArray, axes: tuple[int, ...] | None) -> LazyArray:
    """The weights, shaped to broadcast against ``x``, with NumPy's checks: weights of another
    shape than ``x``'s need ``axis``, and then the shape of ``x`` along those axes (in the
    order the axes were given), and are laid along them."""
    w = asarray(weights)
    if w.shape == x.shape:
        return w
    if axes is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    if w.shape != tuple(x.shape[ax] for ax in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
    w = transpose(w, tuple(int(i) for i in np.argsort(axes)))
    return reshape(w, tuple(n if ax in axes else 1 for ax, n in enumerate(x.shape)))


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """The weighted average along ``axis``, as ``numpy.average``: ``sum(a * weights) /
    sum(weights)`` in ``result_type(a, weights)`` (with float64 for integer and bool ``a``),
    or the ``mean`` without weights. Weights of ``a``'s shape, or of its shape along
    ``axis``; weights that sum to zero raise ZeroDivisionError. ``returned=True`` also
    returns the sum of the weights (the element count without weights), broadcast to the
    average's shape."""
    x = asarray(a)
    axes = None if axis is None else np.lib.array_utils.normalize_axis_tuple(axis, x.ndim, argname="axis")
    if weights is None:
        avg = _R["mean"](x, axes, keepdims=keepdims)
        # NumPy's count per result, a Python division (a ZeroDivisionError for an empty result)
        count = avg.dtype.type(x.size / avg.size)
        return (avg, full(avg.shape, count, dtype=avg.dtype, device=x.device)) if returned else avg
    w = _broadcastable_weights(weights, x, axes)
    result = np.result_type(x.dtype, w.dtype, *((np.float64,) if x.dtype.kind in "biu" else ()))
    scale = _R["sum"](w, axes, dtype=result, keepdims=keepdims)
    # NumPy raises before averaging: the weights' sums are needed for the division anyway, so
    # the check reads only them (one reduction of the weights, not of ``a``), and the data are
    # never read when it fails.
    if _any(scale == 0):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    # np.multiply(a, w, dtype=result): both cast to the result dtype, then multiplied
    products = x.astype(result, copy=False) * w.astype(result, copy=False)
    avg = _R["sum"](products, axes, keepdims=keepdims) / scale
    if not returned:
        return avg
    if scale.shape != avg.shape:
        scale = copy(broadcast_to(scale, avg.shape))
    return avg, scale


FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (nansum, nanprod, nanmax, nanmin, nanmean, nanvar, nanstd, nanargmax,
                            nanargmin, count_nonzero, ptp, average)
}
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {getattr(np, name): fn for name, fn in FUNCTIONS.items()}
