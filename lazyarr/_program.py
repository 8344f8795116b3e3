"""Lowering: an expression DAG becomes a linear program that every backend runs.

A :class:`Program` is pure structure: a tuple of instructions in topological
order, each computed once (common subexpressions are shared nodes, so they are
one instruction). Materialized nodes become ``input`` instructions and scalar
nodes ``scalar`` instructions, numbered by first use; the buffers and values
themselves travel beside the program. Two expressions with the same structure
over different data therefore lower to equal programs, and a program is itself
the compile-cache key.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from . import _node
from ._node import Node


class Instr(NamedTuple):
    op: str                  # registry op name, or "input" / "scalar" / "counter"
    dtype: np.dtype          # result dtype
    args: tuple[int, ...]    # indices of earlier instructions
    arg: Any                 # static operand; input, counter: (position, ndim); scalar: position


class Program(_node.Hashed):
    """The structure of a materialization: instructions in topological order.

    Equal programs (same ops, dtypes, wiring, static args; any data) are equal and hash
    alike, so a program is itself the compile-cache key. The hash is computed once, and
    read by ``_node.Hashed``'s C slot (no Python frame per cache lookup).
    """

    __slots__ = ("instrs",)

    def __init__(self, instrs: tuple[Instr, ...]) -> None:
        self.instrs = instrs
        self._hash = hash(instrs)

    __hash__ = _node.Hashed.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Program) and self._hash == other._hash
                                 and self.instrs == other.instrs)

    def __repr__(self) -> str:
        return f"Program({len(self.instrs)} instructions)"

    @property
    def root(self) -> Instr:
        return self.instrs[-1]

    def ops(self) -> list[str]:
        """The op names of the computed instructions, in order."""
        return [i.op for i in self.instrs if i.op not in ("input", "scalar", "counter")]

    def __str__(self) -> str:
        lines = []
        for n, ins in enumerate(self.instrs):
            operands = ", ".join(f"%{a}" for a in ins.args)
            extra = "" if ins.arg is None or ins.op in ("input", "counter") else f" [{ins.arg}]"
            if ins.op in ("input", "counter"):
                operands = f"{ins.op} {ins.arg[0]}, ndim {ins.arg[1]}"
            elif ins.op == "scalar":
                operands, extra = f"scalar {ins.arg}", ""
            lines.append(f"%{n} = {ins.op}({operands}){extra} : {ins.dtype}")
        return "\n".join(lines)


class Lowered(NamedTuple):
    program: Program
    inputs: list[Any]        # buffers, in input-position order
    scalars: list[np.generic]
    shape: tuple[int, ...]   # the root's shape
    device: str


_new = tuple.__new__   # builds a NamedTuple without its Python-level __new__ (hot path)


def compute_compress(node: Node) -> None:
    """Compute a pending ``"compress"`` node (``X[m]``) and store its buffer on it. Set by
    lazyarr/_masked.py, the only module that builds such nodes, when it is imported (it
    computes through _materialize, which imports this module)."""
    raise AssertionError("lazyarr._masked builds compress nodes and sets compute_compress")


def lower(root: Node) -> Lowered:
    """Flatten the DAG under ``root`` into a program (iteratively: chains 10,000+ deep work)."""
    instrs: list[Instr] = []
    inputs: list[Any] = []
    scalars: list[np.generic] = []
    index: dict[Node, int] = {}     # nodes hash by identity
    stack: list[Any] = [root]       # a node, or (node,) once its children are pushed
    push, pop, emit = stack.append, stack.pop, instrs.append
    while stack:
        item = pop()
        if type(item) is tuple:      # children done: emit the node
            node = item[0]
            if node not in index:
                index[node] = len(instrs)
                emit(_new(Instr, (node.op, node.dtype, tuple([index[s] for s in node.src]), node.arg)))
            continue
        node = item
        if node in index:
            continue
        if node.op == "compress" and node.data is None:
            compute_compress(node)   # ``X[m]`` (lazyarr/_masked.py): NumPy's, computed first
        src = node.src   # read before data: materialized() stores data, then drops src
        if node.op == "leaf" or node.data is not None and (node is not root
                                                           or node.op == "compress"):
            index[node] = len(instrs)
            emit(_new(Instr, ("input", node.dtype, (), (len(inputs), len(node.shape)))))
            inputs.append(node.data)
        elif node.op == "scalar":
            index[node] = len(instrs)
            emit(_new(Instr, ("scalar", node.dtype, (), len(scalars))))
            scalars.append(node.arg)
        elif node.op == "counter":   # numbered with the inputs; its CounterMap travels there
            index[node] = len(instrs)
            emit(_new(Instr, ("counter", node.dtype, (), (len(inputs), len(node.shape)))))
            inputs.append(node.arg)
        else:
            push((node,))
            for i in range(len(src) - 1, -1, -1):
                if src[i] not in index:
                    push(src[i])
    return _new(Lowered, (Program(tuple(instrs)), inputs, scalars, root.shape, root.device or "cpu"))


# ----------------------------------------------------------------------------- repeated expressions
# structure id -> program (see _node: one sid, one program). Bounded: cleared when full.
_by_structure: dict[int, Program] = {}
_MAX_PROGRAMS = 4096
stats = {"lowered": 0, "reused": 0}   # lower_cached: programs built / taken from _by_structure


def _gather(leaves: tuple[Node, ...]) -> tuple[list[Any], list[np.generic]]:
    """The buffers and scalar values of a DAG's leaves, numbered as ``lower`` numbers them.
    (One loop: two list comprehensions cost every cached materialization ~0.3 µs more.)"""
    inputs: list[Any] = []
    scalars: list[np.generic] = []
    for n in leaves:
        op = n.op
        if op == "scalar":
            scalars.append(n.arg)
        else:
            inputs.append(n.arg if op == "counter" else n.data)
    return inputs, scalars


def lower_cached(root: Node) -> Lowered:
    """``lower(root)``, skipping the lowering when an expression of the same structure was
    lowered before: then only the leaves are gathered (see ``_node``'s structure ids)."""
    sid, leaves = root.sid, root.leaves
    fresh = sid is not None and leaves is not None and \
        (root.epoch == _node.epoch or _node.is_fresh(root, _node.epoch))
    if fresh:
        program = _by_structure.get(sid)  # type: ignore[arg-type]
        if program is not None:
            stats["reused"] += 1
            inputs, scalars = _gather(leaves)  # type: ignore[arg-type]
            return _new(Lowered, (program, inputs, scalars, root.shape, root.device or "cpu"))
    lowered = lower(root)
    stats["lowered"] += 1
    if fresh:
        # The first DAG of each structure checks that the leaves are in lowering's order.
        inputs, scalars = _gather(leaves)  # type: ignore[arg-type]
        if list(map(id, inputs)) == list(map(id, lowered.inputs)) and \
                list(map(id, scalars)) == list(map(id, lowered.scalars)):
            if len(_by_structure) >= _MAX_PROGRAMS:
                _by_structure.clear()
            _by_structure[sid] = lowered.program  # type: ignore[index]
    return lowered
