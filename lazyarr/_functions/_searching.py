"""Searching, counting and partitioning: ``searchsorted``, ``digitize``, ``bincount``,
``histogram``, ``histogram_bin_edges``, ``partition``, ``argpartition`` and ``isin``.

Each is one library call on computed operands (a pending operand is computed once, by its
fused kernel), run by NumPy on the CPU and by CuPy on cuda, its result a computed LazyArray
on the operands' device that elementwise work downstream fuses with. What lazyarr adds over
the fallback:

* NumPy 2's semantics on cuda, where CuPy differs: ``searchsorted`` compares in NumPy's
  common dtype (CuPy compares a float32 array with a Python float in float64), validates
  ``side`` (CuPy takes anything but ``'right'`` as ``'left'``) and ``sorter``'s range;
  ``digitize`` is NumPy's (its monotonicity check, on the small ``bins`` copied to the host);
  ``bincount`` raises NumPy's errors and takes NumPy's dtypes; ``histogram``'s bin edges are
  NumPy's own, computed on the host from the data's minimum and maximum (or from a host copy
  of the data for the string estimators, ``'auto'``, ``'fd'``..., which CuPy lacks), the
  counting runs on the device; ``isin`` compares in NumPy's common dtype and takes ``kind=``.
  Errors that depend only on the operands' dtypes and shapes come from NumPy itself, asked
  on empty stand-ins of the same dtype and dimension (:func:`_like`).
* ``partition`` of a pending array computes its kernel straight into the result's memory and
  partitions that in place (``ndarray.partition``), as ``sort`` does
  (lazyarr/_functions/_sorting.py): NumPy's ``np.partition`` would copy it once more.
* ``isin`` of a pending ``element`` against a small set (at most :data:`SMALL_SET` values)
  is no library call: one fused kernel of OR-ed equality comparisons, in NumPy's common
  dtype (NumPy's own loop for small sets: ``mask |= ar1 == a``; NaN equals nothing, -0.0
  equals 0.0).
* ``la.explain`` records each call with its bytes, and for ``searchsorted``/``digitize`` the
  comparisons of its binary searches, for ``bincount``/``histogram`` the additions, as FLOPs.
"""
from __future__ import annotations

import functools
import math
import operator
from typing import Any

import numpy as np
from numpy._core.multiarray import _monotonicity
from numpy.lib import _histograms_impl

from .. import _devices, _dispatch, _fallback, _writes
from .._array import LazyArray
from .._plan import with_flops
from ._creation import asarray

#: ``isin``'s fused comparisons serve test sets of at most this many values.
SMALL_SET = 8


# ------------------------------------------------------------------------------ the call
def _call(path: str, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
          flops: Any = None) -> Any:
    """``func(xp, device, *buffers, **kwargs)``, NumPy's (``xp`` numpy, on the CPU) or
    CuPy's (cuda) work on the computed operands, through the fallback's runner (pending
    operands computed once, results wrapped on the device, la.jit's tape told); its record
    given ``flops(out, *args, **kwargs)`` (from the sizes of the result ``out`` and the
    operands; None: not meaningful)."""
    _fallback.policy(path)
    device = _fallback._device(args, kwargs) or _devices.resolve(None)
    out = _fallback.run(path, functools.partial(func, _devices.xp(device), device), device,
                        args, kwargs)
    results = out if isinstance(out, tuple) else (out,)
    if flops is not None and isinstance(results[0], LazyArray) \
            and results[0]._node.origin is not None:
        record = with_flops(results[0]._node.origin, int(flops(out, *args, **kwargs)))
        for item in results:
            if isinstance(item, LazyArray):
                item._node.origin = record
    return out


def _size(x: Any) -> int:
    """The number of elements of an operand (a LazyArray's without computing it)."""
    return int(x.size) if isinstance(x, LazyArray) else int(np.size(x))


def _host(x: Any) -> np.ndarray:
    """A device buffer's values on the host (a copy from the GPU; a host array as it is:
    the cuda branches run with ``xp = numpy`` in tests/test_searching.py)."""
    return x if isinstance(x, np.ndarray) else _devices.to_host("cuda", x)


def _like(x: Any, n: int = 0) -> Any:
    """A host stand-in for ``x`` (a buffer or a Python value) that NumPy's checks of dtypes
    and dimensions answer as they would for ``x``: its dtype, its number of dimensions, ``n``
    zeros along each (NumPy skips some casts of empty arrays); Python scalars as they are
    (NumPy's weak scalars)."""
    if isinstance(x, (bool, int, float, complex)) or x is None:
        return x
    if not hasattr(x, "dtype"):
        x = np.asarray(x)
    return np.zeros((n,) * x.ndim, x.dtype)


def _on(xp: Any, x: Any, dtype: Any = None) -> Any:
    """``x`` as an array of the device's module (of ``dtype``)."""
    return xp.asarray(x, dtype=dtype)


def _dtype(x: Any) -> Any:
    """What NumPy's promotion takes for ``x``: a Python scalar as it is (weak, NEP 50), an
    array's dtype."""
    if isinstance(x, (bool, int, float, complex)):
        return x
    return x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype


def _log2(n: int) -> int:
    """The comparisons of a binary search among ``n`` values."""
    return max(1, math.ceil(math.log2(max(n, 0) + 1)))


# ------------------------------------------------------------------------------ searchsorted
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> LazyArray:
    """``numpy.searchsorted`` (the array API's ``searchsorted(x1, x2, /, *, side, sorter)``
    too): the indices (intp) where the values ``v`` would be inserted into the sorted 1-D
    ``a`` (sorted by ``sorter`` when given) to keep it sorted. NumPy's binary search on the
    CPU, CuPy's on cuda, in NumPy's common dtype of ``a`` and ``v``, NaNs sorted last."""
    return _call("searchsorted", _searchsorted, (a, v), {"side": side, "sorter": sorter},
                 _search_flops)


def _search_flops(out: Any, a: Any, v: Any, side: str = "left", sorter: Any = None) -> int:
    return _size(v) * _log2(_size(a))


def _searchsorted(xp: Any, device: str, a: Any, v: Any, side: str = "left",
                  sorter: Any = None) -> Any:
    if device != "cuda":
        return np.searchsorted(a, v, side=side, sorter=sorter)
    np.searchsorted(_like(a), _like(v), side=side,      # (NumPy's errors: _like)
                    sorter=None if sorter is None else _like(sorter))
    common = np.result_type(_dtype(a), _dtype(v))
    x, values = _on(xp, a, common), _on(xp, v, common)
    if sorter is not None:
        order = _on(xp, sorter)
        if order.size != x.size:
            raise ValueError("sorter.size must equal a.size")
        if order.size and (int(order.min()) < 0 or int(order.max()) >= x.size):
            raise ValueError("Sorter index out of range.")
        x = x[order]
    return xp.searchsorted(x, values, side=side).astype(np.intp, copy=False)


# ------------------------------------------------------------------------------ digitize
def digitize(x: Any, bins: Any, right: bool = False) -> LazyArray:
    """``numpy.digitize``: the index of the bin of each value of ``x`` in the monotonic
    ``bins`` (increasing or decreasing), NumPy's: a ``searchsorted`` of ``x`` in ``bins``
    (reversed when they decrease), with NumPy's checks (``bins`` monotonic, ``x`` not
    complex). On cuda the monotonicity is checked on a host copy of ``bins`` (small), the
    search runs on the device."""
    return _call("digitize", _digitize, (x, bins), {"right": right}, _digitize_flops)


def _digitize_flops(out: Any, x: Any, bins: Any, right: bool = False) -> int:
    return _size(x) * _log2(_size(bins))


def _digitize(xp: Any, device: str, x: Any, bins: Any, right: bool = False) -> Any:
    if device != "cuda":
        return np.digitize(x, bins, right=right)
    x, bins = _on(xp, x), _on(xp, bins)
    if x.dtype.kind == "c":
        raise TypeError("x may not be complex")
    mono = _monotonicity(_host(bins))
    if mono == 0:
        raise ValueError("bins must be monotonically increasing or decreasing")
    side = "left" if right else "right"
    if mono == -1:
        return len(bins) - _searchsorted(xp, device, bins[::-1], x, side=side)
    return _searchsorted(xp, device, bins, x, side=side)


# ------------------------------------------------------------------------------ bincount
def bincount(x: Any, /, weights: Any = None, minlength: int = 0) -> LazyArray:
    """``numpy.bincount``: the number of occurrences of each value of the non-negative
    integers ``x`` (intp), or the sums of their ``weights`` (float64). NumPy's on the CPU;
    on cuda CuPy's count, with NumPy's errors (``x`` not safely castable to intp, negative
    values, ``weights`` of another length, a negative ``minlength``) and result dtypes."""
    return _call("bincount", _bincount, (x,), {"weights": weights, "minlength": minlength},
                 None if weights is None else lambda out, x, **k: _size(x))


def _bincount(xp: Any, device: str, x: Any, weights: Any = None, minlength: int = 0) -> Any:
    if device != "cuda":
        return np.bincount(x, weights=weights, minlength=minlength)
    # NumPy's errors (_like); where ``x`` is empty NumPy looks at no weights (their dtype,
    # length and dimensions): the stand-in for ``x`` is empty then too
    np.bincount(_like(x, 1 if _size(x) else 0),
                weights=None if weights is None else _like(weights, 1), minlength=minlength)
    x = _on(xp, x)
    if not x.size:      # (NumPy's dtype for no values, with weights too)
        return xp.zeros(operator.index(minlength), np.intp)
    if int(x.min()) < 0:
        raise ValueError("'list' argument must have no negative elements")
    if weights is not None:
        weights = _on(xp, weights, np.float64)
        if weights.shape != x.shape:
            raise ValueError("The weights and list don't have the same length.")
    size = max(int(x.max()) + 1, operator.index(minlength))
    counts = xp.bincount(x.astype(np.intp, copy=False), weights=weights, minlength=size)
    return counts.astype(np.intp if weights is None else np.float64, copy=False)


# ------------------------------------------------------------------------------ histogram
def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,
              weights: Any = None) -> tuple[LazyArray, LazyArray]:
    """``numpy.histogram``: ``(hist, bin_edges)``, NumPy's on the CPU. On cuda the edges
    are NumPy's own (dtype and values: from the data's minimum and maximum, reduced on the
    device, or, for a string ``bins`` such as ``'auto'``, which CuPy lacks, from a host copy
    of the data), the counting (a binary search per value, then a bin count) runs on the
    device; the counts have NumPy's dtype (intp, the weights' dtype, float64 for density)."""
    return _call("histogram", _histogram, (a,),  # type: ignore[no-any-return]
                 {"bins": bins, "range": range, "density": density, "weights": weights},
                 _histogram_flops)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,
                        weights: Any = None) -> LazyArray:
    """``numpy.histogram_bin_edges``: the edges :func:`histogram` uses, NumPy's (on cuda
    computed on the host from the data's minimum and maximum, or a host copy of the data for
    a string ``bins``), on the data's device."""
    return _call("histogram_bin_edges", _histogram_bin_edges, (a,),  # type: ignore[no-any-return]
                 {"bins": bins, "range": range, "weights": weights})


def _histogram_flops(out: Any, a: Any, *args: Any, **kwargs: Any) -> int:
    """The comparisons of a binary search per value among the edges (``out[1]``)."""
    return _size(a) * _log2(_size(out[1]))


def _histogram_bin_edges(xp: Any, device: str, a: Any, bins: Any = 10, range: Any = None,
                         weights: Any = None) -> Any:
    if device != "cuda":
        return np.histogram_bin_edges(a, bins, range, weights)
    return _edges_on_host(xp, a, bins, range, weights)


def _edges_on_host(xp: Any, a: Any, bins: Any, range: Any, weights: Any) -> np.ndarray:
    """NumPy's bin edges (``_get_bin_edges``, NumPy 2.4) for the device array ``a``: given a
    host array with ``a``'s minimum and maximum only (all NumPy reads of the data for a
    number of bins, or array bins, with no ``range``), or all of ``a`` for a string ``bins``."""
    a = _on(xp, a)
    w = None if weights is None else _on(xp, weights)
    if isinstance(bins, str) or a.size == 0:
        host = _host(a)
        host_weights = None if w is None else _host(w)
    else:
        flat = a.reshape(-1)
        host = _host(xp.stack([flat.min(), flat.max()]))
        host_weights = None if w is None else np.zeros(2, w.dtype)
        if w is not None and w.shape != a.shape:     # (NumPy's check, of the real shapes)
            raise ValueError("weights should have the same shape as a.")
    if not isinstance(bins, str) and np.ndim(bins) == 1:
        bins = _host(_on(xp, bins))
    host, host_weights = _histograms_impl._ravel_and_check_weights(host, host_weights)
    return _histograms_impl._get_bin_edges(host, bins, range, host_weights)[0]


def _histogram(xp: Any, device: str, a: Any, bins: Any = 10, range: Any = None,
               density: Any = None, weights: Any = None) -> Any:
    if device != "cuda":
        return np.histogram(a, bins, range, density, weights)
    edges = _edges_on_host(xp, a, bins, range, weights)
    x = _on(xp, a).reshape(-1)
    if x.dtype == np.bool_:
        x = x.astype(np.uint8)
    n = edges.size - 1
    ntype = np.dtype(np.intp) if weights is None else _on(xp, weights).dtype
    if x.size:
        # NumPy's bins: [e_i, e_i+1), the last one closed; values outside them (and NaN)
        # are left out. Values and edges compared in their common dtype (NumPy's: the edges'
        # dtype for a number of bins, where they are made from the values' dtype).
        common = np.result_type(edges.dtype, x.dtype)
        values, dev_edges = x.astype(common, copy=False), _on(xp, edges, common)
        keep = (values >= dev_edges[0]) & (values <= dev_edges[-1])
        index = xp.searchsorted(dev_edges, values[keep], side="right") - 1
        index = xp.minimum(index, n - 1)
        w = None if weights is None else _on(xp, weights).reshape(-1)[keep]
        hist = _counts(xp, index, w, n, ntype)
    else:
        hist = xp.zeros(n, ntype)
    dev_edges = _on(xp, edges)
    if density:
        widths = xp.diff(dev_edges).astype(float)
        return hist / widths / hist.sum(), dev_edges
    return hist, dev_edges


def _counts(xp: Any, index: Any, w: Any, n: int, ntype: np.dtype) -> Any:
    """The count (or the sum of the weights ``w``) per bin, in NumPy's ``ntype``: complex
    weights are counted as their real and imaginary parts (NumPy's way)."""
    if w is None:
        return xp.bincount(index, minlength=n).astype(ntype, copy=False)
    if ntype.kind == "c":
        real = xp.bincount(index, weights=w.real.astype(np.float64), minlength=n)
        imag = xp.bincount(index, weights=w.imag.astype(np.float64), minlength=n)
        return (real + 1j * imag).astype(ntype)
    return xp.bincount(index, weights=w.astype(np.float64), minlength=n).astype(ntype)


# ------------------------------------------------------------------------------ partition
def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
              order: Any = None) -> LazyArray:
    """``numpy.partition``: a copy of ``a`` with the ``kth`` element(s) along ``axis`` in
    their sorted places, smaller-or-equal ones before, larger-or-equal after (their order
    otherwise unspecified, as NumPy's). A pending ``a`` is computed straight into the
    result's memory and partitioned there in place (``ndarray.partition``: NumPy's and
    CuPy's own copy saved); a computed one is NumPy's (CuPy's) call."""
    x = a if isinstance(a, LazyArray) else asarray(a)
    if x.ndim and order is None:
        memory = _fallback.computed_into_new(x, cuda=True)
        if memory is not None:
            _fallback.policy("partition")
            if axis is None:
                memory, axis = memory.reshape(-1), -1
            _partition_in_place(_devices.xp(x.device), x.device, memory, kth, axis, kind)
            # (its record: the memory read and written in place)
            return _fallback.wrapped(memory, "partition", memory, device=x.device)  # type: ignore[no-any-return]
    return _call("partition", _partition, (x, kth),  # type: ignore[no-any-return]
                 {"axis": axis, "kind": kind, "order": order})


def partition_in_place(x: LazyArray, kth: Any, axis: Any = -1, kind: str = "introselect",
                       order: Any = None) -> None:
    """``x.partition(kth)``: ``ndarray.partition``, in ``x``'s memory (views of it see the
    write, pending expressions that read it keep the old values: lazyarr/_writes.py), with
    NumPy's checks on cuda too (CuPy's ``ndarray.partition`` takes neither ``kind`` nor
    ``order``)."""
    _fallback.policy("ndarray.partition")
    if x.device == "cuda":
        _check_partition(x, kth, axis, kind, order)     # (before anything is written)
    memory = _writes.target(x)
    if order is not None:
        memory.partition(kth, axis=axis, kind=kind, order=order)
    else:
        _partition_in_place(_devices.xp(x.device), x.device, memory, kth, axis, kind)


def argpartition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
                 order: Any = None) -> LazyArray:
    """``numpy.argpartition``: the indices (intp) that partition ``a`` along ``axis`` as
    :func:`partition` does. NumPy's on the CPU; CuPy's on cuda (a full sort there), with
    NumPy's checks of ``kth`` and ``axis``."""
    return _call("argpartition", _argpartition, (a, kth),  # type: ignore[no-any-return]
                 {"axis": axis, "kind": kind, "order": order})


def _check_partition(x: Any, kth: Any, axis: Any, kind: str, order: Any,
                     func: Any = np.partition) -> int:
    """NumPy's errors for a partition of ``x`` on cuda (CuPy takes neither ``kind`` nor
    ``order``, and words its errors otherwise), asked of NumPy on a line of int8 zeros of
    ``x``'s length along ``axis`` (the bounds of ``kth`` depend on it); the axis, normalized."""
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    shape = (int(x.size),) if axis is None else tuple(x.shape)
    if not shape:
        func(np.zeros((), np.int8), kth, axis=axis, kind=kind)    # (NumPy's error)
    axis = np.lib.array_utils.normalize_axis_index(-1 if axis is None else axis, len(shape))
    np.partition(np.zeros(shape[axis], np.int8), kth, kind=kind)
    return axis  # type: ignore[no-any-return]


def _python_kth(kth: Any) -> Any:
    """``kth`` as CuPy's partitions take it: a Python int or a list of them."""
    return np.asarray(_host(kth) if _devices.is_cupy_array(kth) else kth).tolist()


def _partition_in_place(xp: Any, device: str, memory: Any, kth: Any, axis: Any,
                        kind: str) -> None:
    if device != "cuda":
        memory.partition(kth, axis=axis, kind=kind)
        return
    axis = _check_partition(memory, kth, axis, kind, None)
    # CuPy's ndarray.partition takes Python ints (a NumPy integer is not an ``int`` there) and
    # contiguous memory only (NotImplementedError): a strided view is partitioned in a copy
    kth = _python_kth(kth)
    if not memory.size:
        return
    if memory.flags.c_contiguous:
        memory.partition(kth, axis=axis)
    else:
        work = memory.copy()
        work.partition(kth, axis=axis)
        memory[...] = work


def _partition(xp: Any, device: str, a: Any, kth: Any, axis: Any = -1,
               kind: str = "introselect", order: Any = None) -> Any:
    if device != "cuda":
        return np.partition(a, kth, axis=axis, kind=kind, order=order)
    if order is not None:
        _check_partition(a, kth, axis, kind, order)      # (raises NumPy's error)
    memory = a.reshape(-1).copy() if axis is None else a.copy()
    _partition_in_place(xp, device, memory, kth, -1 if axis is None else axis, kind)
    return memory


def _argpartition(xp: Any, device: str, a: Any, kth: Any, axis: Any = -1,
                  kind: str = "introselect", order: Any = None) -> Any:
    if device != "cuda":
        return np.argpartition(a, kth, axis=axis, kind=kind, order=order)
    if not a.ndim:      # (NumPy's argpartition of a 0-d array: the indices of its one element)
        return np.argpartition(_host(a), kth, axis=axis, kind=kind, order=order)
    if axis is None:
        a = a.reshape(-1)
    axis = _check_partition(a, kth, axis, kind, order, np.argpartition)
    if not a.size:      # (CuPy's is of shape (0,) whatever the array's)
        return xp.empty(a.shape, np.intp)
    return xp.argpartition(a, _python_kth(kth), axis=axis).astype(np.intp, copy=False)


# ------------------------------------------------------------------------------ isin
def isin(element: Any, test_elements: Any, assume_unique: bool = False,
         invert: bool = False, *, kind: str | None = None) -> LazyArray:
    """``numpy.isin``: True where an element of ``element`` is among ``test_elements``
    (bool, ``element``'s shape; ``invert``: where it is not). A pending ``element`` against
    at most :data:`SMALL_SET` values is one fused kernel of equality comparisons, in NumPy's
    common dtype (NaN equals nothing, -0.0 equals 0.0, as NumPy's); otherwise NumPy's
    (CuPy's) call on the computed operands, compared in NumPy's common dtype."""
    fused = _fused_isin(element, test_elements, invert, kind)
    if fused is not None:
        return fused
    return _call("isin", _isin, (element, test_elements),  # type: ignore[no-any-return]
                 {"assume_unique": assume_unique, "invert": invert, "kind": kind})


def _fused_isin(element: Any, test_elements: Any, invert: bool,
                kind: str | None) -> LazyArray | None:
    """``isin`` as one fused kernel of ``element == t0 | element == t1 | ...``; None where it
    does not apply (``element`` not pending, a large or pending set, ``kind`` given, a
    dtype pair NumPy would compare otherwise)."""
    if not isinstance(element, LazyArray) or kind is not None:
        return None
    node = element._node
    if node.data is not None or node.op == "scalar":
        return None
    if isinstance(test_elements, LazyArray):
        if test_elements._node.data is None or test_elements.device != element.device \
                or test_elements.size > SMALL_SET:
            return None
        values = test_elements.to_numpy().reshape(-1)
    else:
        values = np.asarray(test_elements)
        if values.dtype.kind not in "biufc" or values.size > SMALL_SET:
            return None
        values = values.reshape(-1)
    common = np.result_type(element.dtype, values.dtype)
    if not values.size or (element.dtype.kind in "biu" and values.dtype.kind in "biu"
                           and common.kind not in "biu"):
        return None     # (uint64 with int64: NumPy compares exactly, not in float64)
    x = element if element.dtype == common else element.astype(common)
    found = None
    for v in values.astype(common):
        hit = x == v
        found = hit if found is None else found | hit
    assert found is not None
    return ~found if invert else found


def _isin(xp: Any, device: str, element: Any, test_elements: Any, assume_unique: bool = False,
          invert: bool = False, kind: str | None = None) -> Any:
    if device != "cuda":
        return np.isin(element, test_elements, assume_unique=assume_unique, invert=invert,
                       kind=kind)
    np.isin(_like(element), _like(test_elements), kind=kind)    # (NumPy's errors: _like)
    x, t = _on(xp, element), _on(xp, test_elements)
    common = np.result_type(x.dtype, t.dtype)
    return xp.isin(x.astype(common, copy=False), t.astype(common, copy=False),
                   assume_unique=assume_unique, invert=invert)


FUNCTIONS = {f.__name__: f for f in (searchsorted, digitize, bincount, histogram,
                                      histogram_bin_edges, partition, argpartition, isin)}
for _fn in FUNCTIONS.values():
    _fn.__module__ = "lazyarr"
NUMPY_FUNCTIONS = {getattr(np, name): fn for name, fn in FUNCTIONS.items()}
_dispatch.PROTOCOLS["partition_in_place"] = partition_in_place    # (LazyArray.partition)
