"""What LazyArray needs from the layers above it, registered by them when the package loads.

The array layer (lazyarr/_array.py) sits below the public functions (lazyarr/_functions/)
and the NumPy/CuPy fallback (lazyarr/_fallback.py), yet a few of its methods are one of them
applied to the array: ``x.reshape(2, 3)`` is ``la.reshape(x, (2, 3))``, ``np.concatenate([x])``
(``__array_function__``) is a native function or the fallback, ``x.cumsum()``
(``__getattr__``) the fallback. Importing them would close an import cycle, so the upper
layers register here at import (lazyarr/_functions/__init__.py, lazyarr/_fallback.py) and
the methods look them up when called. This module imports nothing of lazyarr.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

#: lazyarr's public functions by name (``"reshape"``, ``"asarray"``, ...).
FUNCTIONS: dict[str, Callable[..., Any]] = {}

#: The NumPy protocols answered above the array layer, by name:
#: ``array_function(func, types, args, kwargs)`` (native function or fallback),
#: ``array_ufunc(ufunc, method, inputs, kwargs)`` (the fallback's ufunc calls and methods),
#: ``method(x, name)`` (an ndarray attribute LazyArray has no native form of),
#: ``call(path, numpy_func, args, kwargs)`` (one NumPy/CuPy function through the fallback),
#: ``scalar_value(numpy_scalar)`` (a computed 0-d CPU LazyArray holding it, lazyarr/_value.py),
#: ``foreign_type(t)`` (another library's array type with NumPy's protocols, lazyarr/_fallback.py),
#: ``met_dask_collection(x)`` (Dask told of LazyArray chunks, lazyarr/_dask.py).
PROTOCOLS: dict[str, Callable[..., Any]] = {}


def dask_collection(value: Any) -> bool:
    """Whether ``value`` is a Dask collection (its class has ``__dask_graph__``). Asked of the
    type: on a LazyArray, ``hasattr(x, ...)`` would go through ``LazyArray.__getattr__`` (the
    fallback's attribute lookup, ~1.7 µs a miss), and every binary operator asks."""
    return hasattr(type(value), "__dask_graph__")


# ---------------------------------------------------------------- another library's arrays
#: lazyarr's functions that hand another library's arrays to NumPy in their own bodies (the
#: registry's ufuncs and reductions: no wrapper from :func:`deferring` around them)
DEFERS_IN_ITS_BODY: set[Callable[..., Any]] = set()

#: type -> whether it is another library's array with NumPy's protocols (memoized ``foreign``)
_FOREIGN_TYPES: dict[type, bool] = {}
_PLAIN_TYPES = frozenset({int, float, complex, bool, str, type(None), slice, type(Ellipsis)})


def _foreign_type(t: type) -> bool:
    known = _FOREIGN_TYPES.get(t)
    if known is None:
        known = (hasattr(t, "__array_function__") or hasattr(t, "__array_ufunc__")) \
            and PROTOCOLS["foreign_type"](t)
        _FOREIGN_TYPES[t] = known
    return known


def foreign_argument(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The first argument (also an item of a list or tuple argument, or a keyword's value) that
    is another library's array with NumPy's protocols of its own (a Dask array, a masked array,
    a pandas Series: ``lazyarr/_fallback.py``, ``foreign``); None if there is none."""
    for values in (args, kwargs.values()):
        for v in values:
            t = type(v)
            if t in _PLAIN_TYPES:
                continue
            if t is list or t is tuple:
                for item in v:
                    if type(item) not in _PLAIN_TYPES and _foreign_type(type(item)):
                        return item
            elif _foreign_type(t):
                return v
    return None


def deferring(fn: Callable[..., Any], numpy_fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a lazyarr function), except that a call with another library's array among its
    arguments (:func:`foreign_argument`) is NumPy's ``numpy_fn``, whose dispatch hands it to
    that library as ``numpy.<name>`` would: ``la.sqrt(dask_array)`` is a Dask array, as
    ``np.sqrt(dask_array)`` is (converting it would compute all of it, silently). Dask
    learns of LazyArray chunks first (``met_dask_collection``)."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        other = foreign_argument(args, kwargs)
        if other is None:
            return fn(*args, **kwargs)
        return deferred(other, numpy_fn, args, kwargs)
    return call


def deferred(other: Any, numpy_fn: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
    """NumPy's ``numpy_fn(*args, **kwargs)``, whose dispatch hands the call to ``other``'s
    library (:func:`deferring`)."""
    if dask_collection(other):
        PROTOCOLS["met_dask_collection"](other)
    return numpy_fn(*args, **kwargs)
