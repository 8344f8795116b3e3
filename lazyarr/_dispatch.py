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

from collections.abc import Callable
from typing import Any

#: lazyarr's public functions by name (``"reshape"``, ``"asarray"``, ...).
FUNCTIONS: dict[str, Callable[..., Any]] = {}

#: The NumPy protocols answered above the array layer, by name:
#: ``array_function(func, types, args, kwargs)`` (native function or fallback),
#: ``array_ufunc(ufunc, method, inputs, kwargs)`` (the fallback's ufunc calls and methods),
#: ``method(x, name)`` (an ndarray attribute LazyArray has no native form of),
#: ``call(path, numpy_func, args, kwargs)`` (one NumPy/CuPy function through the fallback),
#: ``scalar_value(numpy_scalar)`` (a computed 0-d CPU LazyArray holding it, lazyarr/_value.py).
PROTOCOLS: dict[str, Callable[..., Any]] = {}


def dask_collection(value: Any) -> bool:
    """Whether ``value`` is a Dask collection (its class has ``__dask_graph__``). Asked of the
    type: on a LazyArray, ``hasattr(x, ...)`` would go through ``LazyArray.__getattr__`` (the
    fallback's attribute lookup, ~1.7 µs a miss), and every binary operator asks."""
    return hasattr(type(value), "__dask_graph__")
