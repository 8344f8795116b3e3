"""The kernel's parameter recipe, as data: what the launch passes in each parameter.

``render`` writes the kernel and, alongside it, one :class:`Param` per kernel parameter, in
order. Everything downstream reads the recipe, never the parameter names: the Numba signature
and the cache key (``compile``), the launch's argument template (``backend._Entry``) and the
simulator's buffers (``simulate``).

Two kinds of parameter:

* **per call** (:data:`PER_CALL`): buffers and values that change from call to call of a
  cached kernel: the output, the input pointers, the scalars, and a full reduction's
  per-block partials and ticket counter. ``_Entry`` records their slots once; a call fills
  only those.
* **layout** (:data:`LAYOUT`): integers fixed by the inputs' shapes and strides, which are
  part of the cache key of an ``_Entry``: element strides and the sizes of the iteration
  space. ``_Entry`` evaluates them once (:meth:`Param.layout_value`) into its argument
  template.

Views and slices fit the same recipe: a view's element *offset* into its base is a layout
parameter of one input (a role ``OFFSET`` with ``input=k``, its value from the geometry, as
``STRIDE``), and an *index map* (a gathered axis) is a per-call pointer of one input (a role
``INDEX_MAP`` with ``input=k`` and ``index=axis``). A new role is one line in
:class:`Role`, one case in :meth:`Param.layout_value` (layout roles) or in ``_Entry`` (per-call
ones), and the renderer's use of the parameter; no names to parse.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Layout(Protocol):
    """What a layout parameter's value is read from (``render.Geometry`` is one; a protocol,
    so this module does not import the renderer that imports it)."""

    strides: Sequence[Sequence[int]]
    sizes: Sequence[int]


class Role(enum.Enum):
    OUTPUT = "output"        # the result buffer (pointer)
    PARTIALS = "partials"    # full reductions: per-block partial results (pointer, acc dtype;
    #                          a complex accumulator: ``index`` float64 parts a block)
    COUNTER = "counter"      # full reductions: the zeroed uint32 ticket counter (pointer)
    FPE = "fpe"              # checked kernels: zeroed uint32 words, NumPy's FP flags per op site
    INPUT = "input"          # input buffer ``input`` (pointer to its element 0)
    COUNTER_OFFSET = "counter_offset"  # a random draw's counters (input ``input``, a
    #                          _counters.CounterMap): the counter of element 0 (int64 value)
    SCALAR = "scalar"        # the scalar at position ``input`` of ``Lowered.scalars`` (value)
    STRIDE = "stride"        # element stride of input ``input`` along axis ``index`` (int64)
    SIZE = "size"            # ``Geometry.sizes[index]`` (int64)
    DIV_MAGIC = "div_magic"  # fast division by ``Geometry.sizes[index]``: its multiplier,
    DIV_SHIFT = "div_shift"  # and its shift (:func:`fast_divisor`; int64)


#: roles whose arguments are pointers (the rest are values)
POINTERS = frozenset({Role.OUTPUT, Role.PARTIALS, Role.COUNTER, Role.FPE, Role.INPUT})
#: roles filled at every call of a cached kernel
PER_CALL = frozenset({Role.OUTPUT, Role.PARTIALS, Role.COUNTER, Role.FPE, Role.INPUT, Role.SCALAR,
                      Role.COUNTER_OFFSET})
#: roles fixed by the input layout (evaluated once per cached kernel)
LAYOUT = frozenset({Role.STRIDE, Role.SIZE, Role.DIV_MAGIC, Role.DIV_SHIFT})

#: dividends below this take the fast division (:func:`fast_divisor`)
FAST_DIVIDEND_LIMIT = 1 << 31


def fast_divisor(d: int) -> tuple[int, int]:
    """(multiplier, shift) that divide by ``d`` without a division instruction: for every
    ``0 <= r < 2**31`` and ``1 <= d < 2**31``, ``r // d == (umulhi(r, m) + r) >> s``, where
    ``umulhi`` is the high 32 bits of the 64-bit product (one ``IMAD.HI``). The round-up
    method of Granlund and Montgomery ("Division by invariant integers using
    multiplication", 1994), in the form of PyTorch's ``IntDivider`` and CUTLASS's
    ``FastDivmod``: ``s = ceil(log2(d))``, ``m = floor(2**32 * (2**s - d) / d) + 1`` (below
    2**32). A coordinate of a strided kernel is one such division per dimension and element
    (a 32-bit ``div`` is ~20 instructions on the GPU: docs/notes/gpu.rst). ``d = 0`` has no
    dividend (an empty space runs no iteration): (0, 0)."""
    if d <= 0:
        return 0, 0
    if d >= FAST_DIVIDEND_LIMIT:
        raise ValueError(f"fast division by {d}: divisors must be below 2**31")
    shift = (d - 1).bit_length()
    return ((1 << 32) * ((1 << shift) - d)) // d + 1, shift


@dataclass(frozen=True)
class Param:
    """One kernel parameter.

    name:  its identifier in the kernel source.
    role:  what it holds (:class:`Role`).
    dtype: the pointer's element type, or the value's type.
    input: INPUT and STRIDE: the input buffer; SCALAR: the scalar's position.
    index: STRIDE: the axis of the (collapsed) iteration space; SIZE, DIV_MAGIC, DIV_SHIFT:
           the position in ``Geometry.sizes``; SCALAR: -1, or a complex scalar's part (0 real, 1 imaginary);
           PARTIALS: -1 (one value a block), or a complex accumulator's parts a block.
    """

    name: str
    role: Role
    dtype: np.dtype
    input: int = -1
    index: int = -1

    @property
    def is_pointer(self) -> bool:
        return self.role in POINTERS

    @property
    def kind(self) -> str:
        """``"ptr"``, ``"i64"`` or ``"scalar"``: the parameter's type class (in the cache key)."""
        if self.is_pointer:
            return "ptr"
        return "scalar" if self.role is Role.SCALAR else "i64"

    def layout_value(self, geometry: Layout) -> np.int64:
        """The value of a layout parameter for a launch geometry."""
        if self.role is Role.STRIDE:
            return np.int64(geometry.strides[self.input][self.index])
        if self.role is Role.SIZE:
            return np.int64(geometry.sizes[self.index])
        if self.role in (Role.DIV_MAGIC, Role.DIV_SHIFT):
            magic, shift = fast_divisor(int(geometry.sizes[self.index]))
            return np.int64(magic if self.role is Role.DIV_MAGIC else shift)
        raise ValueError(f"{self.role} is filled per call, not from the layout")
