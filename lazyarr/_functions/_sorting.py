"""Sorting functions: ``sort`` and ``argsort``, NumPy's (CuPy's) sort on the computed array
through the fallback, with the array API's ``descending`` and stable default."""
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
    ``descending`` too. Runs NumPy's (CuPy's) sort on the computed array; not fused."""
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


FUNCTIONS = {"sort": sort, "argsort": argsort}
