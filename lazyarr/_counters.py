"""Counter maps: the element numbers a fused random draw is generated from.

A fused draw (lazyarr/_random_fused.py) is ``f(bits(counter, key, stream))``: element ``i``
(C order) of a draw of shape ``s`` gets counter ``i``. A view of the draw (``u[1:, ::2]``,
``u.T``, a broadcast) reads the same numbers at other places, so what a kernel needs per
element is the *counter of the element it reads*: an affine map
``offset + sum(index_d * strides_d)`` over the kernel's iteration space, as a strided array's
address is. A :class:`CounterMap` is that map. Kernels take it where they take an input
buffer and compute the number instead of loading it (the ``counter`` instruction of
``_program``); nothing is allocated.

Views compose as NumPy's do on memory: :meth:`CounterMap.view` applies the view function to
a stand-in array whose *addresses* are the counters (``as_strided`` over one real byte; only
views are ever applied, see ``_views._push``, so no element of it is read) and reads the map
back from the result's strides and data pointer.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

_U64 = np.dtype(np.uint64)
_ITEM = _U64.itemsize


class CounterMap:
    """The counters ``offset + sum(i_d * strides[d])`` (strides in elements) over ``shape``.

    Quacks like the input buffers of a program where the backends ask (``shape``, ``ndim``,
    ``size``, ``dtype`` uint64, ``strides`` in bytes of uint64, ``nbytes`` 0: it takes no
    memory), and has no ``__array__``: code that does not know it fails instead of reading.
    """

    __slots__ = ("shape", "elem_strides", "offset")

    dtype = _U64
    itemsize = _ITEM
    nbytes = 0
    base = None

    def __init__(self, shape: tuple[int, ...], elem_strides: tuple[int, ...], offset: int) -> None:
        self.shape, self.elem_strides, self.offset = tuple(shape), tuple(elem_strides), int(offset)

    @classmethod
    def c_order(cls, shape: tuple[int, ...]) -> CounterMap:
        """Element ``i`` in C order gets counter ``i``: a fresh draw of ``shape``."""
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step if n != 1 else 0)
            step *= n
        return cls(shape, tuple(reversed(strides)), 0)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def strides(self) -> tuple[int, ...]:
        """Byte strides of a uint64 array with these element strides (what kernels read)."""
        return tuple(s * _ITEM for s in self.elem_strides)

    def __repr__(self) -> str:
        return f"CounterMap(shape={self.shape}, strides={self.elem_strides}, offset={self.offset})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CounterMap) and (self.shape, self.elem_strides, self.offset) == \
            (other.shape, other.elem_strides, other.offset)

    def __hash__(self) -> int:
        return hash((self.shape, self.elem_strides, self.offset))

    def view(self, fn: Any) -> CounterMap:
        """The map of ``fn(draw)`` for a view function ``fn`` (an index, a transpose, a
        broadcast ...): NumPy's own view arithmetic, applied to addresses."""
        hold = np.empty(1, _U64)       # the stand-in's element (0, ..., 0): counter `offset`
        stand_in = np.lib.stride_tricks.as_strided(hold, self.shape, self.strides, writeable=False)
        out = fn(stand_in)
        if not isinstance(out, np.ndarray) or out.base is None:
            raise TypeError(f"{fn!r} is not a view function")   # (_views pushes only views)
        return CounterMap(out.shape, tuple(s // _ITEM for s in out.strides),
                          self.offset + (out.ctypes.data - hold.ctypes.data) // _ITEM)

    def values(self, xp: Any = np) -> Any:
        """The counters as a uint64 array (the op-by-op backends read them from memory)."""
        out = xp.full(self.shape, self.offset, dtype=_U64)
        for d, (n, s) in enumerate(zip(self.shape, self.elem_strides)):
            if s and n > 1:
                idx = xp.arange(n, dtype=np.int64) * s
                out = out + idx.reshape((n,) + (1,) * (self.ndim - d - 1)).astype(_U64)
        return out

