"""Repeating and rotating arrays: ``tile``, ``repeat`` and ``roll``, as NumPy defines them.
Each returns a new array (NumPy's do), never a view of its input.

* ``tile`` and ``repeat`` with one count are a **broadcast** of the input, reshaped (where
  the repeated blocks are long: :data:`MIN_FUSED_RUN`):
  ``repeat(x, k, axis)`` is ``x`` with a length-1 axis after ``axis``, broadcast to length
  ``k`` there, then that axis merged into ``axis``; ``tile(x, reps)`` is ``x`` with a
  length-1 axis before each of its axes, broadcast to ``reps``, then each pair merged. Of a
  pending elementwise expression the broadcast is pushed down to its inputs
  (lazyarr/_views.py), so the expression and its repetition are ONE kernel writing the
  result; the merge is then a reshape of that new memory (a view of it, as NumPy's). (While
  la.jit traces, the input is computed and NumPy's call runs on it: two steps of its tape.)
  The broadcast is not recorded as a view of the input (it is not one to the user), so the
  input stays pending. A computed input (eager mode always) is NumPy's (CuPy's) call on its
  buffer: that one copy is all there is to do.
* ``repeat`` with an array of counts is data-dependent: the counts are computed, checked
  (NumPy's errors, before the input is computed), then NumPy's (CuPy's) ``repeat`` runs on
  the computed input.
* ``roll`` along one axis is lazyarr's :func:`concatenate` of two slices (views, so pending
  ones fuse and are computed straight into the result); along several axes NumPy's (CuPy's)
  ``roll`` on the computed input; ``axis=None`` rolls the flattened array (which computes a
  pending input, as ``ravel`` does).

Arguments are checked first with NumPy's exception types and messages, on zero-stride
stand-ins of the input's shape where NumPy's own code is the check (so the messages are its
own), and nothing is computed for a call that fails.
"""
from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _devices, _fallback, _node, _views
from .._array import LazyArray
from .._build import recompute_weight
from .._materialize import materialize, tape
from ._creation import asarray, copy
from ._joining import concatenate
from ._manipulation import reshape


# ----------------------------------------------------------------------------- helpers
def _stand_in(shape: tuple[int, ...]) -> np.ndarray:
    """A bool array of ``shape`` that takes no memory (one element, zero strides)."""
    return np.broadcast_to(np.empty((), np.bool_), shape)


def _fusable(x: LazyArray) -> bool:
    """A pending elementwise expression a broadcast can be pushed down through."""
    node = x._node
    return node.data is None and node.op != "scalar" and _views._pushable(node)


#: The shortest run of consecutive input elements (the innermost axes the broadcast leaves
#: alone) for which the fused broadcast is taken. Over a shorter run (``repeat`` along the
#: last axis: a run of 1, k copies) the kernel's inner loops are too short: computing the
#: input, then NumPy's copy, is faster (2 cores, float32 2^22: repeat(sqrt(x) * 2, 2) fused
#: 15.9 ms, NumPy 11.3 ms). Note that each repetition re-evaluates the expression: over long
#: runs a cheap one fuses at about the speed of computing it then copying (repeat(x * 2, 2,
#: axis=0), 2048^2: 5.2 ms, computed then copied 5.9 ms) and saves the temporary; an
#: expensive one is slower (the same with sqrt(x) * 2: 13.6 ms against 7.4 ms).
MIN_FUSED_RUN = 1024
#: an expression evaluated once per copy weighs less than this in all (``_cheap_to_repeat``)
REPEAT_STORE_WEIGHT = 8


def _broadcast_copy(x: LazyArray, fn: Callable[[Any], Any], out_shape: tuple[int, ...],
                    run: int, name: str, library: Callable[[Any, Any], Any]) -> LazyArray:
    """``fn(x)`` (a broadcast view of ``x``) reshaped to ``out_shape``, in new memory: for a
    pending ``x`` whose broadcast reads ``run`` (>= :data:`MIN_FUSED_RUN`) consecutive
    elements at a time, ``fn`` pushed down to its inputs and the expression computed into the
    result; otherwise ``library(xp, buffer)`` (NumPy's/CuPy's function) on ``x``'s buffer."""
    if not _fusable(x) or run < MIN_FUSED_RUN or tape() is not None \
            or not _cheap_to_repeat(x._node, math.prod(out_shape) // max(x.size, 1)):
        # (while la.jit traces, a result must be a step's own result, not a view of one: the
        # input's kernel, then the library call, are two steps of its tape)
        return _on_buffer(x, name, library)
    node = x._node
    # a pending array of the broadcast's shape, computed into memory of its own, reshaped (a
    # view of that memory, as NumPy's reshape of a new contiguous array). (No name holds the
    # pushed node: claim would take another reader of it for a sharer, and copy its memory.)
    memory = _views.claim(LazyArray._from_node(
        _views._push(node, node.shape, fn, _views.shape_of(node.shape, fn))))
    return _wrap(memory.reshape(out_shape), x.device)


def _cheap_to_repeat(node: Any, copies: int) -> bool:
    """Whether evaluating ``node``'s expression once per copy costs less than storing it once
    and copying it: the ``copies - 1`` extra evaluations weigh less than ``REPEAT_STORE_WEIGHT``
    (the store rule's weights, ``_build.recompute_weight``; its own threshold, measured: a
    repeated copy reads through an index map, which costs more per element than a
    reduction's plain read). ``repeat(x * 2, 2)`` fuses (5.2 ms against 5.9 computed then
    copied, 2048^2 float32); ``repeat(sqrt(x) * 2, 2)`` is computed first (fused: 13.6 ms,
    computed then copied: 7.4)."""
    return recompute_weight(node) * (copies - 1) < REPEAT_STORE_WEIGHT


def _on_buffer(x: LazyArray, name: str, library: Callable[[Any, Any], Any]) -> LazyArray:
    """``library(xp, buffer)`` on ``x``'s computed buffer, wrapped (a step of la.jit's tape)."""
    device = x.device
    func = functools.partial(library, _devices.xp(device))
    buffer = materialize(x._node)
    wrap = functools.partial(_wrap, device=device)
    result = wrap(func(buffer))
    t = tape()
    if t is not None:       # la.jit: a step its replays call again
        t.call(func, (buffer,), {}, result, wrap, name)
    return result


def _wrap(data: Any, device: str) -> LazyArray:
    return LazyArray._from_node(_node.leaf(data, device))


# ----------------------------------------------------------------------------- tile
def _count(r: Any) -> bool:
    """An integer (not a float, not a string) of at least zero."""
    try:
        return operator.index(r) >= 0
    except TypeError:
        return False


def tile(A: Any, reps: Any) -> LazyArray:
    """``A`` repeated ``reps`` times along each axis, as ``numpy.tile``: ``reps`` an int or a
    sequence; a longer ``reps`` gives ``A`` leading axes of length 1, a shorter one is padded
    with 1s in front; a 0 gives an empty axis. A new array of ``A``'s dtype (a pending ``A``
    and its repetition are one kernel).

    >>> import lazyarr as la
    >>> la.tile(la.asarray([1, 2]), (2, 2))
    LazyArray([[1, 2, 1, 2],
               [1, 2, 1, 2]])
    """
    x = asarray(A)
    try:
        tup = tuple(reps)
    except TypeError:
        tup = (reps,)
    if not all(_count(r) for r in tup):
        # NumPy's error (a negative count, a float, a string ...), from NumPy's tile on a
        # stand-in with x's dimensions: x's shape if x is empty (its error then names the
        # shape), else all 1s (its errors then come from the counts alone); where NumPy takes
        # such reps (a negative count of an empty array), NumPy's own call
        np.tile(_stand_in(x.shape if x.size == 0 else (1,) * x.ndim), reps)
        return _fallback.call("tile", np.tile, (x, reps), {})  # type: ignore[no-any-return]
    tup = tuple(operator.index(r) for r in tup)
    shape = (1,) * (len(tup) - x.ndim) + x.shape
    tup = (1,) * (len(shape) - len(tup)) + tup
    out_shape = tuple(s * t for s, t in zip(shape, tup))
    if out_shape == x.shape and all(t == 1 for t in tup):
        return copy(x)                  # (a pending x: its copy stays pending and fuses)
    # x with a length-1 axis before each of its axes (and leading ones where reps is longer)
    key = (None, None) * (len(shape) - x.ndim) + (None, slice(None)) * x.ndim
    paired = tuple(n for st in zip(tup, shape) for n in st)

    def broadcast(d: Any) -> Any:
        return np.broadcast_to(d[key], paired)

    run = shape[-1] if shape else 1     # (the trailing axes not repeated, as one run)
    for i in range(len(shape) - 2, -1, -1):
        if tup[i + 1] != 1:
            break
        run *= shape[i]
    return _broadcast_copy(x, broadcast, out_shape, run, "tile", lambda xp, b: xp.tile(b, tup))


# ----------------------------------------------------------------------------- repeat
def _length(counts: Any) -> int | None:
    """How many counts ``counts`` holds (None where NumPy cannot tell: a ragged list)."""
    try:
        return int(np.size(counts))
    except (ValueError, TypeError):
        return None


def repeat(a: Any, repeats: Any, axis: Any = None) -> LazyArray:
    """Each element of ``a`` repeated, as ``numpy.repeat``: ``repeats`` one count for every
    element or one per element along ``axis`` (an array of counts); ``axis=None`` repeats
    the flattened elements. A new array of ``a``'s dtype: one count is a broadcast of ``a``
    (a pending ``a`` and its repetition are one kernel); counts per element are NumPy's
    (CuPy's) ``repeat`` on the computed ``a``. NumPy's errors (negative counts, counts of
    another length, counts that are not integers) before anything is computed.

    >>> import lazyarr as la
    >>> la.repeat(la.asarray([[1, 2], [3, 4]]), 2, axis=0)
    LazyArray([[1, 2],
               [1, 2],
               [3, 4],
               [3, 4]])
    """
    if type(a) is LazyArray and type(repeats) is int and (repeats != 1 or axis is None):
        node = a._node      # a computed CPU ``a``: the general path's library call, at once
        data = node.data    # (one count along an axis: its copy, below)
        # (not _fallback.computed_memory((a,)): same result, explained too, but ~0.13 µs slower)
        if type(data) is np.ndarray and node.device == "cpu" and tape() is None:
            return _wrap(np.repeat(data, repeats, axis), "cpu")
    x = asarray(a)
    counts = repeats.to_numpy() if isinstance(repeats, LazyArray) else repeats
    # (NumPy's repeat along an axis takes a 0-d array as 1-d)
    shape = (1,) if x.ndim == 0 and axis is not None else x.shape
    try:
        ax = None if axis is None else np.lib.array_utils.normalize_axis_index(
            operator.index(axis), len(shape))
    except (TypeError, ValueError):     # (AxisError is both) NumPy's error, from NumPy below
        ax = None
        np.repeat(_stand_in(shape), 1, axis)
    n = x.size if axis is None else shape[ax]
    single = _length(counts) == 1
    # NumPy's checks of the counts, by NumPy's repeat on a stand-in: x's axis (the flattened
    # elements for axis=None) with its length (1 if nonzero for one count), the other axes cut
    # to length <= 1; it allocates at most the counts' sum of bools
    cut = [min(s, 1) for s in shape]
    if axis is None:
        cut = [min(n, 1) if single else n]
    else:
        cut[ax] = min(n, 1) if single else n
    repeated = np.repeat(_stand_in(tuple(cut)), counts, 0 if axis is None else ax)
    if x.shape != shape:
        x = reshape(x, shape)
    if not single or n == 0:
        held = _host_counts(counts)
        return _on_buffer(x, "repeat", lambda xp, b: xp.repeat(b, held, axis))
    k = repeated.shape[0 if axis is None else ax]
    if axis is None:
        out_shape, pair = (x.size * k,), shape + (k,)

        def broadcast(d: Any) -> Any:
            return np.broadcast_to(d[..., None], pair)
    else:
        out_shape = shape[:ax] + (shape[ax] * k,) + shape[ax + 1:]
        pair = shape[:ax + 1] + (k,) + shape[ax + 1:]

        def broadcast(d: Any) -> Any:
            return np.broadcast_to(np.expand_dims(d, ax + 1), pair)
    if k == 1 and axis is not None:
        return copy(x)
    run = 1 if axis is None else math.prod(shape[ax + 1:])
    return _broadcast_copy(x, broadcast, out_shape, run, "repeat",
                           lambda xp, b: xp.repeat(b, k, axis))


def _host_counts(counts: Any) -> Any:
    """The counts (checked already) as Python ints: what NumPy's and CuPy's ``repeat`` take."""
    held = np.asarray(counts)
    if held.dtype.kind not in "iub":
        held = held.astype(np.intp)      # (a string NumPy read as a number)
    return held.tolist()


# ----------------------------------------------------------------------------- roll
def roll(a: Any, shift: Any, axis: Any = None) -> LazyArray:
    """The elements rotated by ``shift`` places along ``axis`` (those that leave at one end
    come back at the other), as ``numpy.roll``: ``shift`` and ``axis`` ints or sequences
    broadcast against each other (shifts of one axis add up); any shift, negative or past the
    length; ``axis=None`` rolls the flattened array and gives back ``a``'s shape. A new array:
    along one axis the two slices joined by :func:`concatenate` (a pending ``a`` is computed
    straight into the result where its part is contiguous).

    >>> import lazyarr as la
    >>> la.roll(la.arange(5), 2)
    LazyArray([3, 4, 0, 1, 2])
    """
    x = asarray(a)
    if axis is None:        # the flattened array rolled, in a's shape
        moved = _offsets((x.size,), shift, 0)
        if not moved:
            return copy(x)
        if x.ndim == 1:
            return _rolled(x, *moved[0])
        # (a flat view of a pending x computes it, as ravel does: NumPy's roll of the buffer)
        off = moved[0][1]
        return _on_buffer(x, "roll", lambda xp, b: xp.roll(b, off))
    moved = _offsets(x.shape, shift, axis)
    if not moved:
        return copy(x)
    if len(moved) == 1:
        return _rolled(x, *moved[0])
    steps, where = tuple(off for _, off in moved), tuple(ax for ax, _ in moved)
    return _on_buffer(x, "roll", lambda xp, b: xp.roll(b, steps, where))


def _offsets(shape: tuple[int, ...], shift: Any, axis: Any) -> list[tuple[int, int]]:
    """The axes ``roll`` moves and by how much (in ``range(length)``), by NumPy's own steps
    (numpy/_core/numeric.py), so with its errors: ``shift`` and ``axis`` broadcast against each
    other, shifts of one axis added up."""
    ndim = len(shape)
    axes = np.lib.array_utils.normalize_axis_tuple(axis, ndim, allow_duplicate=True)
    broadcasted = np.broadcast(shift, axes)
    if broadcasted.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = dict.fromkeys(range(ndim), 0)
    for sh, ax in broadcasted:
        shifts[ax] += int(sh)
    if ndim == 0:           # (what NumPy's loop over no axes raises)
        raise ValueError("not enough values to unpack (expected 2, got 0)")
    offsets = ((ax, off % (shape[ax] or 1)) for ax, off in shifts.items())
    return [(ax, off) for ax, off in offsets if off]


def _rolled(x: LazyArray, ax: int, off: int) -> LazyArray:
    """``x`` rolled by ``off`` (> 0) along ``ax``: its last ``off`` places, then the rest."""
    lead = (slice(None),) * ax
    return concatenate([x[lead + (slice(-off, None),)], x[lead + (slice(None, -off),)]], axis=ax)


FUNCTIONS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (tile, repeat, roll)}
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {getattr(np, name): fn for name, fn in FUNCTIONS.items()}
