"""The public functions of lazyarr, by group (as the array API standard groups them), apart
from the engine: adding a NumPy function is a function in one of these modules, and one row
in its ``FUNCTIONS`` (and ``NUMPY_FUNCTIONS`` where ``numpy.<name>(lazy)`` should reach it).

* ``_creation``: ``asarray``, ``zeros``, ``arange``, ``linspace``, ``*_like``, ``from_dlpack``
* ``_elementwise``: one function per elementwise op of the registry; ``where``, ``clip``,
  ``astype``, ``real``, ``imag``, ``angle``
* ``_manipulation``: transposes, axis moves, flips, ``broadcast_to``, ``reshape``, ``ravel``
* ``_nanfunctions``: ``nansum``, ``nanprod``, ``nanmax``, ``nanmin``, ``nanmean``,
  ``nanvar``, ``nanstd``, ``nanargmax``, ``nanargmin``, ``count_nonzero``, ``ptp``, ``average``
* ``_logic``: ``isclose``, ``allclose``, ``array_equal``, ``array_equiv``
* ``_building``: ``outer`` (and ``ufunc.outer``), ``tri``/``tril``/``triu``, ``eye``,
  ``meshgrid``, ``atleast_*d``
* ``_joining``: ``concatenate`` (``concat``), ``stack``, ``hstack``, ``vstack``, ``dstack``,
  ``column_stack``
* ``_repeating``: ``tile``, ``repeat``, ``roll``
* ``_statistical``: the reductions of the registry
* ``_sorting``, ``_set``: ``sort``/``argsort``, ``unique_*``
* ``_searching``: ``searchsorted``, ``digitize``, ``bincount``, ``histogram``, ``partition``, ``isin``
* ``_statistics_library``: ``cumulative_sum``/``cumulative_prod``, ``gradient``, ``cov``,
  ``corrcoef``, ``median``/``percentile``/``quantile``, ``convolve``/``correlate``
* ``_linalg``: ``matmul`` (the ``@`` operator), ``dot``
* ``_products``: ``diagonal``, ``trace``, ``diag``, ``kron``, ``cross``, ``inner``, ``vdot``,
  ``tensordot``, ``matvec``/``vecmat``, ``einsum``
* ``_info``: the array API's ``__array_namespace_info__``
* ``_explain``: ``explain``

``lazyarr.fft`` and ``lazyarr.random`` are namespaces of their own (lazyarr/_fft.py,
lazyarr/_random.py). This module assembles the tables and registers in lazyarr/_dispatch.py
what LazyArray's methods and NumPy's protocols need from this layer.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _dispatch, _fallback, _fft
from .._array import LazyArray
from . import (_building, _creation, _elementwise, _explain, _joining, _linalg, _logic,
               _manipulation, _nanfunctions, _norms, _products, _repeating, _searching, _set,
               _sorting, _statistical, _statistics_library)

#: Every public function by name (the names of lazyarr's own; aliases below).
FUNCTIONS: dict[str, Callable[..., Any]] = {}
for _group in (_elementwise, _statistical, _manipulation):
    FUNCTIONS.update(_group.FUNCTIONS)
# These are generated from the registry, or shared with LazyArray's methods: each carries its
# public name and module (``lazyarr.sum``), as the docs and ``help()`` show them.
for _name, _fn in FUNCTIONS.items():
    _fn.__name__ = _fn.__qualname__ = _name
    _fn.__module__ = "lazyarr"
FUNCTIONS.update(_creation.FUNCTIONS)
for _group in (_building, _joining, _repeating, _logic, _nanfunctions, _linalg, _products,
               _statistics_library):   # (written here: their public module)
    for _fn in _group.FUNCTIONS.values():
        _fn.__module__ = "lazyarr"
    FUNCTIONS.update(_group.FUNCTIONS)
FUNCTIONS.update(_sorting.FUNCTIONS)
FUNCTIONS.update(_set.FUNCTIONS)
FUNCTIONS.update(_searching.FUNCTIONS)
FUNCTIONS.update(_explain.FUNCTIONS)

#: NumPy's other names of lazyarr functions.
ALIASES = {"absolute": "abs", "true_divide": "divide", "mod": "remainder", "bitwise_not": "invert",
           "amin": "min", "amax": "max", "conjugate": "conj", "degrees": "rad2deg",
           "radians": "deg2rad", "around": "round", "concat": "concatenate",
           # the array API standard's names, NumPy 2's aliases of the same ufuncs
           "acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
           "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh", "pow": "power",
           "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
           "bitwise_right_shift": "right_shift"}

#: NumPy function -> lazyarr function, for ``__array_function__``.
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {}
for _group in (_statistical, _elementwise, _manipulation, _building, _joining, _repeating,
               _creation, _logic, _nanfunctions, _linalg, _norms, _sorting, _set, _products,
               _searching, _statistics_library):
    NUMPY_FUNCTIONS.update(_group.NUMPY_FUNCTIONS)
NUMPY_FUNCTIONS.update(_fft.NUMPY_FUNCTIONS)     # (numpy.fft.<name>(lazy): lazyarr/_fft.py)

# ``la.add.outer`` of the native binary ufuncs: native (the other ufunc methods are given by
# the fallback, lazyarr/_fallback.py ``install``)
for _name, _fn in _elementwise.FUNCTIONS.items():
    _ufunc = getattr(np, _name, None)
    if isinstance(_ufunc, np.ufunc) and _ufunc.nin == 2 and _ufunc.nout == 1:
        _fn.outer = _building.native_ufunc_outer(_fn, _ufunc)  # type: ignore[attr-defined]


@functools.cache
def _signature_of(fn: Callable[..., Any]) -> inspect.Signature:
    """The signature of a native function (to tell whether it takes a call's arguments)."""
    return inspect.signature(fn)


def array_function(func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    """``LazyArray.__array_function__``: ``np.sum(lazy)`` and friends go to the lazyarr
    function of the same name; NumPy functions lazyarr has no native form of (or given
    keywords the native form lacks) run through the fallback; NotImplemented where another
    library's array takes part."""
    impl = NUMPY_FUNCTIONS.get(func)
    if impl is not None and not any(_fallback.foreign(t) for t in types):
        try:
            _signature_of(impl).bind(*args, **kwargs)
        except TypeError:
            pass                    # e.g. out=, where=, initial=: NumPy's through the fallback
        else:
            return impl(*args, **kwargs)
    return _fallback.array_function(func, types, args, kwargs)


_fallback_array_ufunc = _dispatch.PROTOCOLS["array_ufunc"]


def array_ufunc(ufunc: np.ufunc, method: str, inputs: Any, kwargs: Any) -> Any:
    """The ufunc calls and methods ``LazyArray.__array_ufunc__`` does not answer itself:
    ``numpy.matmul(lazy, ...)`` (also ``ndarray @ lazy``) is lazyarr's :func:`matmul`, the
    rest the fallback's."""
    if ufunc is np.matmul and method == "__call__" and not kwargs \
            and all(isinstance(x, (LazyArray, np.ndarray)) for x in inputs):
        return _linalg.matmul(*inputs)
    if ufunc in _products.UFUNCS and method == "__call__" and not kwargs \
            and all(isinstance(x, (LazyArray, np.ndarray)) for x in inputs):
        return _products.UFUNCS[ufunc](*inputs)         # numpy.matvec(lazy, ...), vecmat
    return _fallback_array_ufunc(ufunc, method, inputs, kwargs)


# A call with another library's array among its arguments (``la.sqrt(dask_array)``) is NumPy's,
# whose dispatch hands it to that library, as ``numpy.<name>`` would (the registry's ufuncs
# and reductions do this in their own bodies: lazyarr/_array_methods.py)
for _name, _fn in FUNCTIONS.items():
    _numpy_fn = getattr(np, _name, None)
    if _numpy_fn is not None and _fn not in _dispatch.DEFERS_IN_ITS_BODY:
        FUNCTIONS[_name] = _fallback.deferring_as_numpy(_fn, _numpy_fn)
# ``numpy.<name>(lazy)`` reaches the public function itself (NumPy has checked its arguments'
# types by then: the wrapper finds nothing to hand on)
NUMPY_FUNCTIONS = {_k: _fallback.deferring_form(_v) for _k, _v in NUMPY_FUNCTIONS.items()}
_dispatch.FUNCTIONS.update(FUNCTIONS)
_dispatch.PROTOCOLS["array_function"] = array_function
_dispatch.PROTOCOLS["array_ufunc"] = array_ufunc
