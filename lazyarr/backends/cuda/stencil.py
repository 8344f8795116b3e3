"""Stencils of a pending array on the GPU: the shared value computed once per element.

A basic view of a pending elementwise array is pushed down to its inputs (lazyarr/_views.py),
so ``0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + ...)`` of a pending ``u = sqrt(w)`` reaches the
kernel as five views of ``w`` with a ``sqrt`` of each: every output computes ``sqrt`` five
times (an H200 measured the Jacobi of a pending ``sqrt`` at ~1.3-2 ms for 16384², issue-bound,
where reading ``w`` takes ~0.3 ms: docs/notes/gpu.rst).

:func:`find` recognises that shape in a lowered program over its 2-d iteration space: a
*family* of strided inputs that are views of one buffer with equal strides, whose addresses
differ by a small shift ``(di, dj)`` of rows and columns; and a *field*, one subexpression of
a family's members computed at several shifts (its ``tops``: ``sqrt(w_view_k)`` for each
``k``). The kernel then works in 2-d tiles of ``TILE_ROWS x TILE_COLS`` outputs: the block
computes the field once per element of the tile's region (the tile grown by the shifts'
span) into shared memory, reading the family's lowest-addressed member (``base``) at the
element's address, then each output reads its shifted values from there
(``render._Kernel._stencil_tiles``). The shifts are part of the kernel's source; a launch
checks that its inputs still lie where the kernel assumes (``members``).

Which reads are safe. Every address an output needs is an element of one of the members, so
it is at or past ``base``'s first element and at or before the last element of the member
that ends last. A region element that no output needs (a halo's corner, past the array's
edge) is read only where its address lies in that span; else (and, in a kernel that
records floating-point errors, always) the element reads a needed address instead, so no
value that NumPy would not compute raises a flag.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._program import Instr

TILE_ROWS = 64        # outputs of a tile along the rows (8 per thread of a 256-thread block)
TILE_COLS = 32        # ... and along the columns (a warp: one row of the tile)
MAX_SHIFT = 4         # |di|, |dj| of a member's shift from its family's base
#: a field is computed once per element when that saves at least this much work per output:
#: (shifts - 1) x its cost, a heavy op (sqrt, a division, a libdevice call) counting 8 and
#: any other op 1. Cheap fields (``2 * u`` read at five shifts) are recomputed: five
#: multiplies cost less than a shared-memory tile's barrier and halo.
MIN_SAVED = 8
HEAVY_COST = 8


@dataclass(frozen=True)
class Field:
    """One subexpression of a family's members, computed once per region element."""

    base: int                                  # the input whose pointer the field reads
    rep: int                                   # the chain value computed per element (a top)
    tops: tuple[tuple[int, int, int], ...]     # (chain value, di, dj): the field at output + shift
    dtype: np.dtype                            # its value's dtype (the shared array holds its compute dtype)

    @property
    def di0(self) -> int:
        return min(di for _, di, _ in self.tops)

    @property
    def dj0(self) -> int:
        return min(dj for _, _, dj in self.tops)

    @property
    def region(self) -> tuple[int, int]:
        """Rows and columns of a tile's region (the tile grown by the shifts' span)."""
        return (TILE_ROWS + max(di for _, di, _ in self.tops) - self.di0,
                TILE_COLS + max(dj for _, _, dj in self.tops) - self.dj0)


@dataclass(frozen=True)
class Stencil:
    fields: tuple[Field, ...]
    #: (input, base input, byte distance): where the kernel assumes each member lies
    members: tuple[tuple[int, int, int], ...]

    @property
    def given(self) -> frozenset[int]:
        """The chain values read from the fields' shared arrays."""
        return frozenset(n for f in self.fields for n, _, _ in f.tops)


def find(chain: Sequence[Instr], value_index: int, classes: Sequence[str],
         strides: Sequence[Sequence[int]], inputs: Sequence[Any],
         addresses: Sequence[tuple[int, Any] | None], heavy: Collection[str]) -> Stencil | None:
    """The stencil of a 2-d kernel's chain (``strides``: per input, its two collapsed element
    strides; ``addresses``: per input, its first element's address and an identity of its
    allocation, or None), or None when no field saves enough work."""
    member = _families(chain, classes, strides, inputs, addresses)
    if not member:
        return None
    out = "out"
    label: list[Any] = []            # per value: None (no position), "out", or (family, di, dj)
    key: list[Any] = []              # per value: its structure, the shift left out
    for ins in chain:
        if ins.op == "input":
            k = ins.arg[0]
            if k in member:
                fam, di, dj = member[k][:3]
                label.append((fam, di, dj))
                key.append(("in", fam, ins.dtype))
            elif classes[k] == "b":
                label.append(None)
                key.append(("b", k))
            else:
                label.append(out)
                key.append(None)
        elif ins.op == "scalar":
            label.append(None)
            key.append(("s", ins.arg))
        elif ins.op == "counter":
            return None
        else:
            labels = {label[a] for a in ins.args} - {None}
            if out in labels or len(labels) > 1:
                label.append(out)
                key.append(None)
            else:
                label.append(labels.pop() if labels else None)
                key.append((ins.op, ins.arg, ins.dtype, tuple(key[a] for a in ins.args)))
    if label[value_index] != out:
        return None                  # (one shift, or no position: nothing is shared)
    # every shifted value by its structure; a field is a structure at two or more shifts
    # worth computing once, the largest first (``c * sqrt(u[v])`` with a weight per view:
    # the products differ, their ``sqrt`` is one field), none inside one already taken
    groups: dict[Any, dict[int, tuple[int, int]]] = {}
    for n, ins in enumerate(chain):
        if label[n] not in (None, out) and ins.op != "input":
            groups.setdefault(key[n], {})[n] = label[n][1:]
    candidates = []
    for tops in groups.values():
        rep = min(tops)
        nshifts = len(set(tops.values()))
        cost = _cost(chain, rep, heavy)
        if nshifts >= 2 and chain[rep].dtype.kind in "fiu" and \
                (nshifts - 1) * cost >= MIN_SAVED:
            candidates.append((cost, rep, tops))
    fields = []
    inside: set[int] = set()
    for _, rep, tops in sorted(candidates, key=lambda c: (-c[0], c[1])):
        if any(n in inside for n in tops):
            continue
        inside.update(*(subtree(chain, n) for n in tops))
        fam = label[rep][0]
        base = next(m[3] for m in member.values() if m[0] == fam)
        fields.append(Field(base, rep, tuple(sorted((n, di, dj) for n, (di, dj) in tops.items())),
                            chain[rep].dtype))
    if not fields:
        return None
    used = {label[f.rep][0] for f in fields}
    members = tuple((k, m[3], m[4]) for k, m in sorted(member.items()) if m[0] in used)
    return Stencil(tuple(sorted(fields, key=lambda f: f.rep)), members)


def subtree(chain: Sequence[Instr], n: int) -> frozenset[int]:
    """The chain values ``n`` is computed from, ``n`` included."""
    return consumer(chain, n, ())


def consumer(chain: Sequence[Instr], value_index: int, given: Collection[int]) -> frozenset[int]:
    """The chain values an output computes itself: ``value_index``'s subtree, stopping at the
    values read from shared memory (``given``, included)."""
    seen = {value_index}
    todo = [value_index]
    while todo:
        n = todo.pop()
        if n in given:
            continue
        for a in chain[n].args:
            if a not in seen:
                seen.add(a)
                todo.append(a)
    return frozenset(seen)


def distances(members: Sequence[tuple[int, int, int]], inputs: Sequence[Any], pointer: Any) -> tuple[int, ...]:
    """Each member's byte distance from its base, as ``inputs`` lie (``Stencil.members``)."""
    return tuple(pointer(inputs[k]) - pointer(inputs[b]) for k, b, _ in members)


def holds(members: Sequence[tuple[int, int, int]], inputs: Sequence[Any], pointer: Any) -> bool:
    """Whether ``inputs`` lie where a stencil kernel assumes (:func:`distances` as a loop that
    stops at the first miss: every cached call of a stencil kernel asks)."""
    for k, b, d in members:
        if pointer(inputs[k]) - pointer(inputs[b]) != d:
            return False
    return True


def host_address(a: np.ndarray) -> tuple[int, np.ndarray]:
    """A host array's first element's address and the array that owns its memory (the end
    of its chain of bases): the simulator's buffers, and ``explain`` without a GPU."""
    owner = a
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return a.__array_interface__["data"][0], owner



def _cost(chain: Sequence[Instr], n: int, heavy: Collection[str]) -> int:
    return sum(HEAVY_COST if chain[m].op in heavy else 1 for m in subtree(chain, n)
               if chain[m].op not in ("input", "scalar"))


def _families(chain: Sequence[Instr], classes: Sequence[str], strides: Sequence[Sequence[int]],
              inputs: Sequence[Any], addresses: Sequence[tuple[int, Any] | None]
              ) -> dict[int, tuple[int, int, int, int, int]]:
    """Per member input: (family, di, dj, base input, byte distance from the base). A family:
    strided inputs of one dtype, equal positive strides and one allocation, at least two of
    them at distinct shifts of at most ``MAX_SHIFT`` rows and columns from the lowest."""
    groups: dict[Any, list[tuple[int, int]]] = {}
    for ins in chain:
        if ins.op != "input":
            continue
        k = ins.arg[0]
        st = tuple(strides[k])
        if classes[k] != "s" or addresses[k] is None or len(st) != 2 or min(st) <= 0 \
                or not _offsets_fit(*st):
            continue
        ptr, alloc = addresses[k]
        groups.setdefault((st, inputs[k].dtype, id(alloc)), []).append((k, ptr))
    member: dict[int, tuple[int, int, int, int, int]] = {}
    for fam, (((s0, s1), dt, _), ks) in enumerate(groups.items()):
        if len(ks) < 2:
            continue
        base, lo = min(ks, key=lambda kp: (kp[1], kp[0]))
        for k, ptr in ks:
            if (ptr - lo) % dt.itemsize:
                continue
            shift = _decompose((ptr - lo) // dt.itemsize, s0, s1)
            if shift is not None:
                member[k] = (fam, *shift, base, ptr - lo)
    return member


def _offsets_fit(s0: int, s1: int) -> bool:
    """A region element's offset from its tile's first element fits the kernel's int32."""
    span = 2 * MAX_SHIFT + 1
    return (TILE_ROWS + span) * s0 + (TILE_COLS + span) * s1 < 2 ** 31


def _decompose(delta: int, s0: int, s1: int) -> tuple[int, int] | None:
    """The one ``(di, dj)`` with ``di * s0 + dj * s1 == delta``, both within ``MAX_SHIFT``
    (``di`` >= 0: ``delta`` is measured from the lowest address), or None."""
    found = [(di, (delta - di * s0) // s1) for di in range(MAX_SHIFT + 1)
             if (delta - di * s0) % s1 == 0 and abs((delta - di * s0) // s1) <= MAX_SHIFT]
    return found[0] if len(found) == 1 else None
