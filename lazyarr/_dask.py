"""LazyArray as a Dask array chunk type: Dask schedules the chunks, lazyarr fuses each chunk's
work into one kernel (docs/dask.rst).

What Dask needs from a chunk type, modelled on how Dask wires CuPy in
(``dask/array/backends.py``: ``register_cupy``; ``dask/array/cupy_entry_point.py``):

* the chunk type registry (``register_chunk_type``), so that a Dask array does not defer to a
  LazyArray in ``dask_array * lazy`` and ``np.add(dask_array, lazy)``;
* the lookups Dask dispatches on the chunk type (concatenate, take, tensordot, einsum, empty,
  percentile, numel/nannumel, to_numpy);
* its size and token (``LazyArray.__sizeof__`` and ``__dask_tokenize__``, which need no
  registration: a worker that unpickles a chunk has them with the class) and compact pickles
  (``LazyArray.__reduce__``: the computed buffer only);
* the ``dask.array.backends`` entry point (``array.backend = "lazyarr"``: ``da.ones``,
  ``da.random.default_rng`` ... make lazyarr chunks).

Dask is imported only here, and only when it is used: :func:`register` runs when lazyarr is
imported after ``dask.array``, when a LazyArray first meets a Dask collection (an operator or a
NumPy function with both), and when Dask loads the backend entry point. Registering twice is
a no-op.
"""
from __future__ import annotations

import functools
import sys
from typing import Any

import numpy as np

from . import _dispatch
from ._array import LazyArray

_registered = False


def register() -> bool:
    """Register LazyArray with Dask's array dispatch (idempotent). True if this call did."""
    global _registered
    if _registered:
        return False
    from dask.array import dispatch as lookups
    from dask.array.chunk_types import register_chunk_type
    from dask.array.percentile import _percentile

    register_chunk_type(LazyArray)
    # NumPy's functions dispatch to lazyarr's (LazyArray.__array_function__): the native one
    # where lazyarr has it, else the fallback, so a new native function needs nothing here
    lookups.concatenate_lookup.register(LazyArray, np.concatenate)
    lookups.take_lookup.register(LazyArray, np.take)
    lookups.tensordot_lookup.register(LazyArray, np.tensordot)
    lookups.einsum_lookup.register(LazyArray, np.einsum)
    lookups.empty_lookup.register(LazyArray, _dispatch.FUNCTIONS["empty"])
    lookups.percentile_lookup.register(LazyArray, lambda a, q, method="linear":
                                       _percentile(np.asarray(a), q, method))
    lookups.numel_lookup.register(LazyArray, _numel)
    lookups.nannumel_lookup.register(LazyArray, _nannumel)
    lookups.to_numpy_dispatch.register(LazyArray, lambda data, **kwargs: data.to_numpy())
    _registered = True
    return True


def _numel(x: LazyArray, axis: Any = None, keepdims: bool = False, dtype: Any = np.float64,
           **kwargs: Any) -> Any:
    """The element count of a chunk (``mean``'s denominator), as a LazyArray on its device:
    Dask's ``_numel`` for array-likes (``np.full_like``), without computing ``x``."""
    shape = x.shape
    if axis is None:
        axes = tuple(range(len(shape)))
    else:
        axes = tuple(a % len(shape) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    count = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    if axis is None and not keepdims:
        return np.dtype(dtype).type(count)
    out_shape = tuple(1 if i in axes else n for i, n in enumerate(shape)) if keepdims else \
        tuple(n for i, n in enumerate(shape) if i not in axes)
    return _dispatch.FUNCTIONS["full"](out_shape, count, dtype=dtype, device=x.device)


def _nannumel(x: LazyArray, **kwargs: Any) -> Any:
    """The count of the elements that are not NaN (``nanmean``'s denominator): one fused
    reduction of the chunk."""
    return _dispatch.FUNCTIONS["sum"](~_dispatch.FUNCTIONS["isnan"](x), **kwargs)


def met_dask_collection(other: Any) -> bool:
    """Called where a LazyArray meets an object with ``__dask_graph__`` (lazyarr/_array_methods.py,
    lazyarr/_fallback.py): registers with Dask. True if Dask did not know LazyArray until now
    (the caller then retries the operation on the Dask side, which declined it a moment ago)."""
    return "dask.array" in sys.modules and register()


def backend_entrypoint() -> Any:
    """The ``dask.array.backends`` entry point ``lazyarr`` (pyproject.toml): with
    ``dask.config.set({"array.backend": "lazyarr"})`` Dask's creation functions and
    ``da.random.default_rng`` make lazyarr chunks, on the configured lazyarr device."""
    import dask.array as da
    from dask import config
    from dask.array.backends import ArrayBackendEntrypoint

    from ._random import DaskBitGenerator, DaskRandomState

    register()

    def with_lazyarr_meta(name: str, *args: Any, meta: Any = None, **kwargs: Any) -> Any:
        meta = _dispatch.FUNCTIONS["empty"](()) if meta is None else meta
        with config.set({"array.backend": "numpy"}):
            return getattr(da, name)(*args, meta=meta, **kwargs)

    class LazyarrBackendEntrypoint(ArrayBackendEntrypoint):  # type: ignore[misc]
        @classmethod
        def to_backend_dispatch(cls) -> Any:
            return to_lazyarr

        @classmethod
        def to_backend(cls, data: Any, **kwargs: Any) -> Any:
            if isinstance(data._meta, LazyArray):
                return data
            return data.map_blocks(to_lazyarr, **kwargs)

        @property
        def RandomState(self) -> Any:   # the legacy functions: NumPy's streams
            return DaskRandomState

        @property
        def default_bit_generator(self) -> Any:
            return DaskBitGenerator

        @staticmethod
        def arange(*args: Any, like: Any = None, **kwargs: Any) -> Any:
            like = _dispatch.FUNCTIONS["empty"](()) if like is None else like
            with config.set({"array.backend": "numpy"}):
                return da.arange(*args, like=like, **kwargs)

    for name in ("ones", "zeros", "empty", "full"):   # Dask's own, with a LazyArray as the meta
        setattr(LazyarrBackendEntrypoint, name, staticmethod(functools.partial(with_lazyarr_meta, name)))
    return LazyarrBackendEntrypoint()


def to_lazyarr(data: Any, **kwargs: Any) -> LazyArray:
    """A chunk as a LazyArray (``dask_array.to_backend("lazyarr")``)."""
    return _dispatch.FUNCTIONS["asarray"](data, **kwargs)
