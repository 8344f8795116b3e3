"""Sorting functions: ``sort`` and ``argsort``, NumPy's (CuPy's) sort on the computed array
through the fallback, with the array API's ``descending`` and stable default; and the
cumulative ``cumsum`` and ``cumprod``.

``sort`` and ``cumsum``/``cumprod`` of a pending CPU array compute its fused kernel straight
into the result's memory, then sort or scan that memory in place (``ndarray.sort``,
``np.cumsum(buf, out=buf)``): NumPy's call copies its input into a new array and works there,
so a pending input would otherwise be one temporary written and read once more (issue 18:
the chain then costs only its own kernel, docs/notes/cpu.rst).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _fallback
from .._array import LazyArray
from ._creation import asarray


def argsort(a: Any, axis: int = -1, kind: str | None = None, order: Any = None, *,
            stable: bool | None = None, descending: bool = False) -> LazyArray:
    """The indices that sort ``a`` along ``axis``: ``numpy.argsort`` with the array API's
    ``descending`` too. Stable unless ``kind``/``stable=False`` say otherwise: equal elements
    keep their order (the standard's default; NumPy's default sort leaves it open, so for
    ties lazyarr's indices can differ from NumPy's). Runs NumPy's (CuPy's) sort on the
    computed array; not fused."""
    return _sort("argsort", a, axis, kind, order, stable, descending)


def sort(a: Any, axis: int = -1, kind: str | None = None, order: Any = None, *,
         stable: bool | None = None, descending: bool = False) -> LazyArray:
    """A sorted copy of ``a`` along ``axis``: ``numpy.sort`` with the array API's
    ``descending`` too. Runs NumPy's (CuPy's) sort on the computed array; a pending CPU
    ``a`` is computed straight into the result's memory, sorted there."""
    return _sort("sort", a, axis, kind, order, stable, descending)


def _sort(name: str, a: Any, axis: int, kind: str | None, order: Any, stable: bool | None,
          descending: bool) -> LazyArray:
    x = a if isinstance(a, LazyArray) else asarray(a)
    kwargs: dict[str, Any] = {}
    if x.device != "cuda":          # CuPy's sorts are stable and take neither keyword
        if name == "argsort" and kind is None and stable is None:
            stable = True           # the standard's default (NumPy leaves ties' order open)
        kwargs.update(kind=kind, order=order, stable=stable)
    if not descending:
        if name == "sort" and order is None and x.ndim:
            memory = _fallback.computed_into_new(x)
            if memory is not None:      # np.sort's own copy, of the pending x: sort it in place
                _fallback.policy(name)
                if axis is None:        # np.sort(a, axis=None): the flattened array, sorted
                    memory, axis = memory.reshape(-1), -1
                memory.sort(axis=axis, kind=kind, stable=stable)
                return _fallback.wrapped(memory, name)
        return _fallback.call(name, getattr(np, name), (x, axis), kwargs)
    # descending (the standard's; NumPy has none): a stable ascending sort of the reversed
    # array, reversed back, so equal elements keep their original order as the standard asks
    if x.device != "cuda" and kind is None and not stable:
        kwargs["stable"] = True
    flipped = _fallback.call("flip", np.flip, (x,), {"axis": axis})
    idx = _fallback.call("argsort", np.argsort, (flipped, axis), kwargs)
    n = x.shape[axis] if x.ndim else 1
    idx = (n - 1) - _fallback.call("flip", np.flip, (idx,), {"axis": axis})
    if name == "argsort":
        return idx
    return _fallback.call("take_along_axis", np.take_along_axis, (x, idx), {"axis": axis})


def cumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """``numpy.cumsum``: NumPy's (CuPy's) scan; a pending CPU ``a`` is computed straight into
    the result's memory (cast to the result's dtype: int64 for small integers, as NumPy's)
    and scanned there."""
    return _cumulative("cumsum", np.cumsum, a, axis, dtype, out)


def cumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """``numpy.cumprod``: as :func:`cumsum`, with products."""
    return _cumulative("cumprod", np.cumprod, a, axis, dtype, out)


def _cumulative(name: str, func: Any, a: Any, axis: int | None, dtype: Any, out: Any) -> Any:
    if out is None and isinstance(a, LazyArray) and a.ndim:
        # the result's dtype is NumPy's (or its error, for a dtype it refuses) for an empty input
        result = func(np.empty(0, a.dtype), dtype=dtype).dtype
        memory = _fallback.computed_into_new(a, result)
        if memory is not None:
            _fallback.policy(name)
            # the values cast first, then scanned: NumPy's accumulation casts each as it reads
            flat = memory.reshape(-1) if axis is None else memory
            return _fallback.wrapped(func(flat, axis=0 if axis is None else axis, out=flat), name)
    return _fallback.call(name, func, (a,), {"axis": axis, "dtype": dtype, "out": out})


FUNCTIONS = {"sort": sort, "argsort": argsort, "cumsum": cumsum, "cumprod": cumprod}
NUMPY_FUNCTIONS = {np.cumsum: cumsum, np.cumprod: cumprod}
