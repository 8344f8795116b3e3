"""Sorting functions: ``sort`` and ``argsort``, NumPy's (CuPy's) sort on the computed array
through the fallback, with the array API's ``descending`` and stable default; and the
cumulative ``cumsum`` and ``cumprod``.

``sort`` and ``cumsum``/``cumprod`` of a pending CPU array compute its fused kernel straight
into the result's memory, then sort or scan that memory in place (``ndarray.sort``,
``np.cumsum(buf, out=buf)``): NumPy's call copies its input into a new array and works there,
so a pending input would otherwise be one temporary written and read once more (issue 18:
the chain then costs only its own kernel, docs/notes/cpu.rst). ``sort``, ``cumsum`` and
``cumprod`` do the same on cuda (``cupy.sort`` and ``cupy.cumsum`` too copy their input, then
sort or scan the copy in place).

A computed CPU operand is NumPy's call on its memory at once (``_fallback.run_computed``: the
general call's results and record without its walks over the arguments; ~3x less overhead
for a loop's sort of 16 elements).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .. import _devices, _fallback
from .._array import LazyArray
from ._creation import asarray
from ._stable_argsort import stable_argsort


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
    ``descending`` too. Runs NumPy's (CuPy's) sort on the computed array; a pending ``a``
    is computed straight into the result's memory, sorted there."""
    return _sort("sort", a, axis, kind, order, stable, descending)


def _sort(name: str, a: Any, axis: int, kind: str | None, order: Any, stable: bool | None,
          descending: bool) -> LazyArray:
    buffers = None if descending else _fallback.computed_buffers((a,))
    if buffers is not None:     # a computed CPU a (a loop's small sort): NumPy's call now
        if name == "argsort" and kind is None and stable is None:
            stable = True       # (as below)
        return _fallback.run_computed(name, _numpy_argsort if name == "argsort" else np.sort,
                                      (buffers[0], axis),
                                      {"kind": kind, "order": order, "stable": stable}, buffers)
    data = None if descending or isinstance(axis, LazyArray) else _fallback.computed_on_cuda(a)
    if data is not None:        # a computed cuda a: CuPy's call now (as _fallback.call's)
        return _fallback.wrapped_on_cuda(getattr(_devices.xp("cuda"), name)(data, axis), name,
                                         data.nbytes)
    x = a if isinstance(a, LazyArray) else asarray(a)
    kwargs: dict[str, Any] = {}
    if x.device != "cuda":          # CuPy's sorts are stable and take neither keyword
        if name == "argsort" and kind is None and stable is None:
            stable = True           # the standard's default (NumPy leaves ties' order open)
        kwargs.update(kind=kind, order=order, stable=stable)
    if not descending:
        if order is None and x.ndim:
            memory = _fallback.computed_into_new(x, cuda=True)
            if memory is not None and name == "sort":  # np.sort's own copy: sorted in place
                _fallback.policy(name)
                if axis is None:        # np.sort(a, axis=None): the flattened array, sorted
                    memory, axis = memory.reshape(-1), -1
                if x.device == "cuda":  # (cupy.sort: a copy, then ndarray.sort(axis) on it)
                    memory.sort(axis=axis)
                else:
                    memory.sort(axis=axis, kind=kind, stable=stable)
                return _fallback.wrapped(memory, name, device=x.device)
            if memory is not None:      # argsort of the pending x, computed into new memory
                _fallback.policy(name)  # (the general path's materialization, without its walk)
                result = _argsort_cuda_in_place(memory, axis) if x.device == "cuda" \
                    else _numpy_argsort(memory, axis, **kwargs)
                return _fallback.wrapped(result, name, device=x.device)
        return _fallback.call(name, _numpy_argsort if name == "argsort" else np.sort, (x, axis),
                              kwargs)
    # descending (the standard's; NumPy has none): a stable ascending sort of the reversed
    # array, reversed back, so equal elements keep their original order as the standard asks
    if x.device != "cuda" and kind is None and not stable:
        kwargs["stable"] = True
    flipped = _fallback.call("flip", np.flip, (x,), {"axis": axis})
    idx = _fallback.call("argsort", _numpy_argsort, (flipped, axis), kwargs)
    n = x.shape[axis] if x.ndim else 1
    idx = (n - 1) - _fallback.call("flip", np.flip, (idx,), {"axis": axis})
    if name == "argsort":
        return idx
    return _fallback.call("take_along_axis", np.take_along_axis, (x, idx), {"axis": axis})


def _argsort_cuda_in_place(memory: Any, axis: Any) -> Any:
    """``cupy.argsort(memory, axis)`` of new C-contiguous cuda memory of the caller's, the
    keys sorted where they are: ``cupy.argsort`` copies its input first (its Thrust argsort
    sorts the keys along with the indices: ``_ndarray_argsort`` in CuPy 14.2's
    ``cupy/_core/_routines_sorting.pyx``), a copy kernel and its allocation a pending
    operand's kernel has made needless. Along the last axis (or ``axis=None``, the memory
    flattened: a view) CuPy's ``thrust.argsort`` runs on it, with the arguments CuPy's own
    call gives it; elsewhere, or where that private API is not found, ``cupy.argsort``."""
    xp = _devices.xp("cuda")
    ndim = memory.ndim
    if axis is None:
        memory, ndim, axis = memory.reshape(-1), 1, -1
    if xp is np or not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) \
            or not -ndim <= axis < ndim or axis % ndim != ndim - 1:
        return xp.argsort(memory, axis)
    argsort = _thrust_argsort()
    if argsort is None:
        return xp.argsort(memory, axis)
    shape = memory.shape
    idx = xp.ndarray(shape, np.intp)
    keys = None if ndim == 1 else xp.ndarray(shape, np.intp)   # (held until the call returns)
    argsort(memory.dtype, idx.data.ptr, memory.data.ptr, 0 if keys is None else keys.data.ptr,
            shape)
    return idx


@functools.cache
def _thrust_argsort() -> Any:
    """CuPy's ``thrust.argsort`` (private API), None where it is not found; looked up once (an
    import with a from-list costs ~0.8 µs a call, docs/notes/gpu.rst 2026-12-07g)."""
    try:
        from cupy.cuda import thrust
        return thrust.argsort if thrust.available else None
    except (ImportError, AttributeError):
        return None


def _numpy_argsort(a: Any, axis: Any = -1, kind: str | None = None, order: Any = None, *,
                   stable: bool | None = None) -> np.ndarray:
    """``numpy.argsort`` on the CPU; a stable one (what lazyarr's ``argsort`` gives by default)
    through :func:`stable_argsort`, NumPy's stable indices from its faster default sort."""
    if order is None and type(a) is np.ndarray and (
            stable is True and kind is None or stable is None and kind in ("stable", "mergesort")):
        return stable_argsort(a, axis)
    return np.argsort(a, axis, kind=kind, order=order, stable=stable)


def cumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """``numpy.cumsum``: NumPy's (CuPy's) scan; a pending CPU ``a`` is computed straight into
    the result's memory (cast to the result's dtype: int64 for small integers, as NumPy's)
    and scanned there."""
    return _cumulative("cumsum", np.cumsum, a, axis, dtype, out)


def cumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """``numpy.cumprod``: as :func:`cumsum`, with products."""
    return _cumulative("cumprod", np.cumprod, a, axis, dtype, out)


def _cumulative(name: str, func: Any, a: Any, axis: int | None, dtype: Any, out: Any) -> Any:
    kwargs = {"axis": axis, "dtype": dtype, "out": out}
    buffers = None if out is not None else _fallback.computed_buffers((a,))
    if buffers is not None:         # a computed CPU a (a loop's small scan): NumPy's call now
        return _fallback.run_computed(name, func, buffers, kwargs, buffers)
    data = None if out is not None or isinstance(axis, LazyArray) or isinstance(dtype, LazyArray) \
        else _fallback.computed_on_cuda(a)
    if data is not None:            # a computed cuda a: CuPy's call now (as _fallback.call's)
        return _fallback.wrapped_on_cuda(getattr(_devices.xp("cuda"), name)(data, **kwargs), name,
                                         data.nbytes)
    if out is None and isinstance(a, LazyArray) and a.ndim and _plain_axis(axis, a.ndim):
        result = _scan_dtype(func, a.dtype, dtype)
        in_place = _scanned_on_cuda if a.device == "cuda" else _scanned_on_cpu
        scanned = in_place(name, func, a, axis, result)
        if scanned is not None:
            return scanned
    return _fallback.call(name, func, (a,), kwargs)


def _scan_dtype(func: Any, dtype: np.dtype, requested: Any) -> np.dtype:
    """The result's dtype of a scan of ``dtype`` values with ``dtype=requested``: NumPy's for
    an empty input (or its error, for a dtype it refuses, raised at every call), memoized
    (NumPy's call: ~2 µs of every ``cumsum``)."""
    try:
        return _scan_dtypes(func, dtype, requested)
    except TypeError as exc:
        if "unhashable" not in str(exc):
            raise
        return func(np.empty(0, dtype), dtype=requested).dtype


@functools.lru_cache(maxsize=256)
def _scan_dtypes(func: Any, dtype: np.dtype, requested: Any) -> np.dtype:
    return func(np.empty(0, dtype), dtype=requested).dtype


def _scanned_on_cpu(name: str, func: Any, a: LazyArray, axis: int | None,
                    result: np.dtype) -> LazyArray | None:
    """The scan of a pending CPU ``a`` in the memory its kernel writes, row chunks scanned as
    they come (:class:`_ChunkScan`); None where ``a`` cannot be computed into memory."""
    scan = _ChunkScan(func, name == "cumprod", axis, a.ndim)
    # complex products along an axis of an n-d array are scanned whole: NumPy's
    # accumulate picks its inner loop by shape there, and its SIMD complex multiply
    # rounds differently from the scalar one, so a scan of a few rows could differ
    whole = name == "cumprod" and result.kind == "c" and axis is not None and a.ndim > 1
    memory = _fallback.computed_into_new(a, result, consume=None if whole else scan)
    if memory is None:
        return None
    if whole:
        scan(memory, 0, memory.shape[0])
    _fallback.policy(name)
    scan.report(result)
    return _fallback.wrapped(memory.reshape(-1) if axis is None else memory, name)


def _scanned_on_cuda(name: str, func: Any, a: LazyArray, axis: int | None,
                     result: np.dtype) -> LazyArray | None:
    """The scan of a pending cuda ``a`` in the memory its kernel writes
    (:func:`_scan_cuda_in_place`); None where ``a`` cannot be computed into memory."""
    memory = _fallback.computed_into_new(a, result, cuda=True)
    if memory is None:
        return None
    _fallback.policy(name)
    flat = memory.reshape(-1) if axis is None else memory
    _scan_cuda_in_place(name, flat, 0 if axis is None else int(axis))
    return _fallback.wrapped(flat, name, device="cuda")


def _scan_cuda_in_place(name: str, memory: Any, axis: int) -> None:
    """``cumsum``/``cumprod`` of the cuda ``memory`` along ``axis``, written over it: CuPy's
    CUB scan (``cupy.cuda.cub.cub_scan``, in place; what ``cupy.cumsum`` itself runs on a 1-d
    array, after copying its input) where CuPy uses CUB and takes the dtype; else CuPy's own
    scan with ``out=memory`` (a copy of the memory onto itself first: CuPy's
    ``scan_core``). ``cub_scan`` is CuPy's private API (CuPy 14.2's ``cupy/cuda/cub.pyx``):
    any change to it falls back to the public call (tests/test_library_calls.py checks the
    path taken on a GPU)."""
    xp = _devices.xp("cuda")
    if xp is not np and memory.ndim == 1 and _cub_scan(memory, name):
        return
    getattr(xp, name)(memory, axis=axis, out=memory)


def _cub_scan(memory: Any, name: str) -> bool:
    """CuPy's in-place CUB scan of the 1-d ``memory``; False where it does not run it."""
    modules = _cub_modules()
    if modules is None:
        return False
    _accelerator, cub = modules
    try:
        if _accelerator.ACCELERATOR_CUB not in _accelerator.get_routine_accelerators():
            return False
        op = cub.CUPY_CUB_CUMPROD if name == "cumprod" else cub.CUPY_CUB_CUMSUM
        return cub.cub_scan(memory, op) is not None
    except AttributeError:
        return False


@functools.cache
def _cub_modules() -> Any:
    """CuPy's ``_accelerator`` and ``cub`` modules (private API), None where they are not
    found; imported once (an import with a from-list costs ~0.8 µs a call)."""
    try:
        from cupy._core import _accelerator
        from cupy.cuda import cub
    except ImportError:
        return None
    return _accelerator, cub


def _plain_axis(axis: Any, ndim: int) -> bool:
    """``axis`` is None or a valid axis (anything else takes NumPy's own path and error)."""
    if axis is None:
        return True
    return isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) \
        and -ndim <= axis < ndim


class _ChunkScan:
    """The scan of ``cumsum``/``cumprod`` done in place on the rows ``[r0, r1)`` of dim 0
    of the result as they are computed (:func:`lazyarr._fallback.computed_into_new`). Its
    bits are NumPy's: NumPy's accumulate is one sequential pass (``out[i] = out[i-1] op
    x[i]``), and a chunk is scanned together with the previous chunk's last element (row),
    which the accumulate copies as it is: its first new value is then the same operation, by
    the same loop, as in NumPy's one pass. (A separate ``np.multiply`` of the two would not
    do: NumPy's SIMD complex multiply rounds differently from the scalar loop.) Over
    the flattened array (``axis`` None) and along dim 0 the chunks carry; along another axis
    each chunk's rows are scans of their own.

    The chain's floating-point errors come first in NumPy (its operations run before the
    scan), but here the kernel reports them after the last chunk: the scan's own errors are
    recorded (``np.errstate(call=...)``) and raised afterwards, by :meth:`report`, in the
    user's error state and with NumPy's message (``overflow encountered in accumulate``)."""

    def __init__(self, func: Any, product: bool, axis: int | None, ndim: int) -> None:
        self.func, self.product = func, product
        self.axis = None if axis is None else int(axis) % ndim
        self.raised = 0       # NumPy's error bits: 1 divide, 2 over, 4 under, 8 invalid

    def __call__(self, memory: np.ndarray, r0: int, r1: int) -> None:
        if not memory.size:
            return
        if self.axis is None:
            row = memory.size // memory.shape[0]
            part, axis = memory.reshape(-1)[max(r0 * row - 1, 0):r1 * row], 0
        else:
            part, axis = memory[r0 - 1 if r0 and self.axis == 0 else r0:r1], self.axis
        with np.errstate(all="call", call=self._record):
            self.func(part, axis=axis, out=part)

    def _record(self, kind: str, flags: int) -> None:
        self.raised |= flags     # (NumPy passes every bit the loop raised, once per kind)

    def report(self, dtype: np.dtype) -> None:
        """The scan's floating-point errors, as NumPy's accumulate of ``dtype`` raises them:
        each one replayed (NumPy's order) on two elements that raise it alone."""
        if not self.raised:
            return
        info = np.finfo(dtype)
        big, tiny = info.max, info.smallest_normal
        cases = {2: [big, big], 4: [tiny, tiny], 8: [0, np.inf] if self.product
                 else [np.inf, -np.inf]}
        for flag in (2, 4, 8):
            if self.raised & flag:
                self.func(np.array(cases[flag], dtype))


FUNCTIONS = {"sort": sort, "argsort": argsort, "cumsum": cumsum, "cumprod": cumprod}
NUMPY_FUNCTIONS = {np.cumsum: cumsum, np.cumprod: cumprod}
