"""Stencils of a pending array on the CPU: the shared value computed once per element.

A basic view of a pending elementwise array is pushed down to its inputs (lazyarr/_views.py),
so ``0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + ...)`` of a pending ``u = sqrt(w)`` reaches the
VM as five views of ``w`` with a ``sqrt`` of each: every output computes ``sqrt`` five times,
each a pass over the block (the 4096² Jacobi sum: ``sqrt`` was 56 % of its time,
docs/notes/cpu.rst 2026-12-06).

The recognition is the GPU's (:func:`lazyarr.backends.cuda.stencil.find`, pure Python): a
*family* of views of one buffer with equal strides at small shifts ``(di, dj)`` from the
lowest-addressed one (the *base*), and *fields*, subexpressions of the members computed at
several shifts. Here each field becomes its own small VM program ``F`` (one input, the base's
element; its root, the field's value), and the program itself becomes a *main* program that
reads each shifted value as an input numbered after the lowered inputs. The VM computes each
field row once per thread into a ring of rows and points those inputs into it, block by
block (lz_field, lz_fields_prepare in _cpu_vm.h). Blocks must lie in one row of the 2-d space:
an elementwise run by rows, or a full reduction whose blocks end with the rows
(cpu_fused._block_cut).

Rules:

* A field row holds the columns that the views whose output row exists read, so no element
  outside the views is computed, and no floating-point flag is raised that computing the
  views one by one would not raise (the pushed-down views' own rule).
* The values are those of the program without fields: every op runs NumPy's loop on the same
  operands; only how many times it runs changes.
* On the CPU every op is its own pass over a block, so a subexpression read at two shifts or
  more is worth a field whatever its ops (``HEAVY``: each counts as a heavy op in ``find``'s
  rule).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .._program import Instr, Program
from .._registry import OPS
from . import _cpu_vm  # type: ignore[attr-defined]
from .cuda import stencil as _stencil

#: a 2-d space of at least this many elements is looked at (below, the analysis, ~20-40 µs of
#: Python on a first layout, is a noticeable part of the call)
MIN_ELEMENTS = 1 << 16
#: every op of a field counts as heavy in find's rule (see the module docstring)
HEAVY = frozenset(OPS)
#: the most bytes of field rings a thread may keep (rows of millions of elements would need
#: a ring row per block of the row: no fields there)
MAX_RING_BYTES = 8 << 20


def ring_bytes(plan: Plan, cols: int, block: int) -> int:
    """The bytes of ``plan``'s rings per thread (lz_field_bytes in _cpu_vm.h, roughly)."""
    total = 0
    for f in plan.fields:
        di = [t[1] for t in f.tops]
        dj = [t[2] for t in f.tops]
        rows = (max(di) - min(di) + 1) * -(-cols // block)
        total += rows * (block + max(dj) - min(dj) + 8) * f.compiled.result.itemsize
    return total


class Field(NamedTuple):
    """One field: its program, where its operands come from, where it is read."""

    compiled: Any                        # cpu_fused.Compiled of F
    scalars: tuple[int, ...]             # F's scalar operands: positions in the lowered program's
    base: int                            # the lowered input F reads (the family's lowest view)
    tops: tuple[tuple[int, int, int], ...]   # (main input, di, dj) per shifted read


class Plan(NamedTuple):
    """The program with its fields (:func:`find`)."""

    main: Any                            # cpu_fused.Compiled of the main program
    scalars: tuple[int, ...]             # its scalar operands: positions in the lowered program's
    tops: tuple[np.dtype, ...]           # the dtype of each input after the lowered ones
    fields: tuple[Field, ...]


def find(program: Program, inputs: Sequence[Any], shape: tuple[int, ...],
         compile_program: Callable[[Program], Any]) -> Plan | None:
    """The fields of ``program`` over ``inputs`` (NumPy arrays of the 2-d space ``shape``),
    or None: no family, no field worth it, a space too small to look at, or a program the VM
    cannot run (``compile_program`` answers None; a module-level function: it keys the
    cache)."""
    if len(shape) != 2 or shape[0] * shape[1] < MIN_ELEMENTS \
            or min(shape) <= 2 * _stencil.MAX_SHIFT:
        return None
    # The answer depends on the inputs' shapes, strides and where they lie relative to each
    # other only (views of one buffer at fixed shifts): the last one per program is kept under
    # that signature (the analysis costs ~80-100 µs of Python; the signature ~1 µs). (The
    # shapes: a broadcast row at a member's address and strides is no member.)
    if any(type(a) is not np.ndarray for a in inputs):
        return None
    at = [_cpu_vm.data_address(a) for a in inputs]
    signature = (shape, *((a.shape, a.strides, a.dtype.num, p - at[0]) for a, p in zip(inputs, at)))
    hit = _found.get(program)
    if hit is not None and hit[0] == signature:
        return hit[1]
    if len(_found) >= _MAX_FOUND:
        _found.clear()
    plan = _find(program, inputs, shape, compile_program)
    _found[program] = (signature, plan)
    return plan


#: program -> (signature, plan) of its last layout (find)
_found: dict[Program, tuple[Any, Plan | None]] = {}
_MAX_FOUND = 256


def _find(program: Program, inputs: Sequence[np.ndarray], shape: tuple[int, ...],
          compile_program: Callable[[Program], Any]) -> Plan | None:
    strides, classes, addresses = [], [], []
    for a in inputs:
        st = tuple(0 if a.shape[d] == 1 else a.strides[d] // a.itemsize for d in range(2)) \
            if a.ndim == 2 and all(a.strides[d] % a.itemsize == 0 for d in range(2)) else None
        strides.append(st or (0, 0))
        classes.append("b" if a.size == 1 else "c" if st == (shape[1], 1) else "s" if st else "x")
        addresses.append(_stencil.host_address(a) if st else None)
    chain, value = _chain(program)
    found = _stencil.find(chain, value, classes, strides, inputs, addresses, HEAVY)
    if found is None:
        return None
    return _plan(program, found, compile_program)


def _chain(program: Program) -> tuple[tuple[Instr, ...], int]:
    """The values computed per element (a root reduction's own left out) and the one the
    sink takes."""
    instrs = program.instrs
    opdef = OPS.get(instrs[-1].op)
    if opdef is not None and opdef.kind == "reduction":
        return instrs[:-1], instrs[-1].args[0]
    return instrs, len(instrs) - 1


@functools.lru_cache(maxsize=256)
def _plan(program: Program, found: _stencil.Stencil, compile_program: Any) -> Plan | None:
    """The main and field programs of ``program`` with the stencil ``found`` (cached: both
    are structure only; a layout with the same shifts reuses them)."""
    instrs = program.instrs
    chain, value = _chain(program)
    n_inputs = 1 + max(ins.arg[0] for ins in instrs if ins.op in ("input", "counter"))
    top_input: dict[int, int] = {}
    fields = []
    for f in found.fields:
        tops = []
        for n, di, dj in f.tops:
            top_input[n] = n_inputs + len(top_input)
            tops.append((top_input[n], di, dj))
        body, scalars = _renumbered(chain, _stencil.subtree(chain, f.rep), {})
        compiled = compile_program(Program(body))
        # (a field that may raise through the GIL, NumPy's integer power, would run on the
        # pool's threads: the calling thread alone carries such an exception back)
        if compiled is None or compiled.serial or len(tops) > 16 \
                or sum(ins.op == "input" for ins in body) != 1:
            return None
        fields.append(Field(compiled, scalars, f.base, tuple(tops)))
    keep = _stencil.consumer(chain, value, top_input)
    body, scalars = _renumbered(chain, keep, top_input)
    if len(chain) < len(instrs):       # the root reduction, reading the value
        body = body + (instrs[-1]._replace(args=(len(body) - 1,)),)
    main = compile_program(Program(body))
    if main is None:
        return None
    return Plan(main, scalars,
                tuple(chain[n].dtype for n in sorted(top_input, key=top_input.get)),
                tuple(fields))


def _renumbered(chain: Sequence[Instr], keep: Any, as_input: dict[int, int]
                ) -> tuple[tuple[Instr, ...], tuple[int, ...]]:
    """The instructions ``keep`` of ``chain`` in order as a program of their own: each value of
    ``as_input`` read as that input (2-d), a field's input as input 0, and the scalar
    operands renumbered in order (returned: their positions in ``chain``'s numbering). A
    field's inputs are all one view at one shift (``w * w`` of a pending ``w * w`` viewed
    lowers to two inputs of the same view): one input instruction reads them all."""
    index: dict[int, int] = {}
    body: list[Instr] = []
    scalars: list[int] = []
    field = not as_input            # (a field's program: its input becomes input 0)
    for n in sorted(keep):
        ins = chain[n]
        if n in as_input:
            ins = Instr("input", ins.dtype, (), (as_input[n], 2))
        elif ins.op == "input" and field:
            first = next((index[m] for m in sorted(keep) if m < n and chain[m].op == "input"), None)
            if first is not None:
                index[n] = first
                continue
            ins = Instr("input", ins.dtype, (), (0, 2))
        elif ins.op == "scalar":
            ins = ins._replace(arg=len(scalars))
            scalars.append(chain[n].arg)
        else:
            ins = ins._replace(args=tuple(index[a] for a in ins.args))
        index[n] = len(body)
        body.append(ins)
    return tuple(body), tuple(scalars)
