"""``numpy.argsort(a, axis, stable=True)`` on the CPU, the same indices, faster.

lazyarr's ``argsort`` is stable by default (the array API's default), and NumPy's stable sort
(radix sort for 8- and 16-bit types, timsort for the rest) is 2-6x slower than its default
sort, which on x86 is x86-simd-sort (AVX-512/AVX2 quicksort; docs/notes/cpu.rst, "A stable
argsort from NumPy's fast sorts"). Two exact routes through the fast sort:

* 4-byte and narrower types: each element becomes one uint64 key, its value mapped to 32
  bits that order as the values do (high half) and its index (low half). The keys are all
  different, so any sort of them gives the one order of (value, index): the stable argsort.
  NumPy's unsigned 64-bit sort is the SIMD one; the keys are ~4x faster to sort than the
  values' argsort.
* 8-byte floats and integers: the default argsort, then the ties, if any, put in index order:
  the elements of each run of equal sorted values are sorted again by (run, index) as one
  int64 key each.

Equal means NumPy's sort order: ``-0.0`` and ``0.0`` are equal, every NaN is equal to every
other NaN and after every number (NumPy sorts NaNs last, in their original order when stable).
Anything else (complex, strings, ``order=``, axes longer than 2^32) runs NumPy's stable sort.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

#: the dtypes whose values map to 32-bit order keys (kind, itemsize)
_NARROW = {("f", 2), ("f", 4), ("i", 1), ("i", 2), ("i", 4), ("u", 1), ("u", 2), ("u", 4),
           ("b", 1)}
#: the 8-byte dtypes taken through the default sort and a fix-up of ties
_WIDE = {("f", 8), ("i", 8), ("u", 8)}


def stable_argsort_is_fast(dtype: np.dtype) -> bool:
    """Whether :func:`stable_argsort` takes a fast route for ``dtype`` (else NumPy's own)."""
    key = (dtype.kind, dtype.itemsize)
    return dtype.byteorder in "=|" and (key in _NARROW or key in _WIDE)


def stable_argsort(a: np.ndarray, axis: Any = -1) -> np.ndarray:
    """``np.argsort(a, axis=axis, stable=True)``: the same indices."""
    kind = (a.dtype.kind, a.dtype.itemsize)
    if a.ndim == 0 or a.size < 2 or not stable_argsort_is_fast(a.dtype) \
            or isinstance(axis, (bool, np.bool_)):     # (not an axis: NumPy's TypeError)
        return np.argsort(a, axis=axis, stable=True)
    if axis is None:
        a, axis = a.reshape(-1), -1
    axis = np.lib.array_utils.normalize_axis_index(axis, a.ndim)
    n = a.shape[axis]
    if n >= 1 << 32:
        return np.argsort(a, axis=axis, stable=True)
    rows = np.moveaxis(a, axis, -1)
    shape = rows.shape
    rows = rows.reshape(-1, n)
    idx = _narrow(rows) if kind in _NARROW else _wide(rows)
    return np.moveaxis(idx.reshape(shape), -1, axis)


#: where each uint64 key's two 32-bit halves lie in a view of its memory as uint32 pairs
_LOW, _HIGH = (0, 1) if sys.byteorder == "little" else (1, 0)


def _order_bits_into(rows: np.ndarray, out: np.ndarray) -> None:
    """``out`` (uint32, ``rows``' shape) := keys that order as ``rows`` sorts (NumPy's order:
    -0.0 equal to 0.0, NaNs last and equal to each other). Written in place, one temporary."""
    k = rows.dtype.kind
    if k == "f":
        with np.errstate(invalid="ignore"):               # (float16 -> float32 is exact; a
            x = rows.astype(np.float32, copy=False)       # signalling NaN may flag the cast)
        bits = x.view(np.uint32)
        # negative numbers: every bit flipped (a larger magnitude, a smaller key); the rest:
        # the sign bit set. That is bits ^ (0xFFFFFFFF if negative else 0x80000000).
        flip = bits >> np.uint32(31)
        flip *= np.uint32(0x7FFFFFFF)
        flip ^= np.uint32(0x80000000)
        np.bitwise_xor(bits, flip, out=out)
        out[bits == np.uint32(0x80000000)] = np.uint32(0x80000000)   # -0.0: +0.0's key
        out[np.isnan(x)] = np.uint32(0xFFFFFFFF)                     # every NaN: the last
    elif k == "i":                                        # two's complement, sign bit flipped
        wide = rows if rows.dtype.itemsize == 4 else rows.astype(np.int32)
        np.bitwise_xor(wide.view(np.uint32), np.uint32(0x80000000), out=out)
    else:                                                 # unsigned, bool
        out[...] = rows


def _narrow(rows: np.ndarray) -> np.ndarray:
    m, n = rows.shape
    keys = np.empty((m, n), np.uint64)
    halves = keys.view(np.uint32).reshape(m, n, 2)
    _order_bits_into(rows, halves[..., _HIGH])
    halves[..., _LOW] = np.arange(n, dtype=np.uint32)
    keys.sort(axis=-1)                                    # all different: the order is unique
    keys &= np.uint64(0xFFFFFFFF)                         # the indices, in the keys' memory
    return keys.view(np.intp) if np.dtype(np.intp).itemsize == 8 else keys.astype(np.intp)


def _wide(rows: np.ndarray) -> np.ndarray:
    m, n = rows.shape
    idx = np.argsort(rows, axis=-1)                       # NumPy's default (fast) sort
    # the sorted values: sorted again rather than gathered through idx (a sort reads memory
    # in order, the gather at random: 2^24 float64 ~0.15 s against ~0.6 s). Both orders have
    # the same runs of equal values (they differ at most in which of -0.0 and 0.0, or which
    # NaN, comes first, and those compare as one value below).
    s = np.sort(rows, axis=-1)
    tie = s[:, 1:] == s[:, :-1]                           # (-0.0 == 0.0: equal, as sorted)
    if rows.dtype.kind == "f" and np.isnan(s[:, -1]).any():   # NaNs are sorted last
        nan = np.isnan(s)
        tie |= nan[:, 1:] & nan[:, :-1]
    if not tie.any():
        return idx
    # the elements of a run of equal values, flat; a run starts where its value differs from
    # the one before (or a row starts)
    in_run = np.zeros((m, n), bool)
    in_run[:, 1:] |= tie
    in_run[:, :-1] |= tie
    at = in_run.reshape(-1)
    starts = np.ones((m, n), bool)
    starts[:, 1:] = ~tie
    # (cast first: NumPy's cumsum casting bool to int64 as it goes is ~10x slower)
    run = np.cumsum(starts.reshape(-1)[at].astype(np.int64))
    flat = idx.reshape(-1)
    if run[-1] >= (1 << 62) // n:                         # (run, index) would not fit an int64
        return np.argsort(rows, axis=-1, stable=True)
    run *= n
    key = run + flat[at]
    key.sort()                                            # all different: the order is unique
    # the runs keep their places and sizes, so position k of the sorted keys is still in run
    # ``run[k]``: subtracting it leaves the index (a modulo would cost ~20 ns an element)
    key -= run
    flat[at] = key
    return idx
