"""Expression nodes: immutable, interned, and cheap to build.

A node is an operation applied to other nodes. Leaves hold a materialized buffer
(a NumPy or CuPy array); scalar nodes hold a NumPy scalar (a Python number already
converted to its operand dtype). Interior nodes are interned: building the same op
on the same children twice returns the same object, so common subexpressions are
shared by construction and ``is`` compares them.

When an interior node is materialized its buffer is stored in ``data``; from then
on every expression containing it treats it as a leaf (like ``dask.persist``).
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np


class Node:
    __slots__ = ("op", "dtype", "shape", "device", "src", "arg", "data", "__weakref__")

    op: str                  # registry op name, or "leaf" / "scalar"
    dtype: np.dtype
    shape: tuple[int, ...]
    device: str | None       # None for scalars: they go anywhere
    src: tuple[Node, ...]
    arg: Any                 # static operand: cast dtype, reduction spec, scalar value
    data: Any                # the buffer, once materialized (always set for leaves)

    def __init__(self, op: str, dtype: np.dtype, shape: tuple[int, ...], device: str | None,
                 src: tuple[Node, ...] = (), arg: Any = None, data: Any = None) -> None:
        self.op, self.dtype, self.shape, self.device = op, dtype, shape, device
        self.src, self.arg, self.data = src, arg, data

    def __repr__(self) -> str:
        return f"Node({self.op}, {self.dtype}, {self.shape})"


# The intern table: structural key -> weak reference to the node. (A WeakValueDictionary
# does the same but costs ~3 us per insertion, on the path of every op a user writes.)
# No lock: dict operations are atomic under the GIL, and the only race (two threads building
# the same node at once) costs a missed sharing, never a wrong node.
_interned: dict[tuple[Any, ...], weakref.ref[Node]] = {}


def _forget(key: tuple[Any, ...]) -> Any:
    def callback(ref: weakref.ref[Node]) -> None:
        if _interned.get(key) is ref:
            del _interned[key]
    return callback


def _intern(key: tuple[Any, ...], make: Any) -> Node:
    ref = _interned.get(key)
    node = ref() if ref is not None else None
    # A materialized node holds the value its inputs had when it ran; a new expression reads
    # the buffers as they are now, so it gets a fresh node (the old one keeps its memo).
    if node is None or node.data is not None:
        node = make()
        _interned[key] = weakref.ref(node, _forget(key))
    return node  # type: ignore[no-any-return]


def leaf(data: Any, device: str) -> Node:
    """A materialized buffer as a node. Leaves are not interned: one per buffer wrapper."""
    return Node("leaf", data.dtype, tuple(data.shape), device, data=data)


def scalar(value: np.generic) -> Node:
    """A constant operand (already of its final dtype); interned by dtype and bit pattern."""
    return _intern(("scalar", value.dtype, value.tobytes()),
                   lambda: Node("scalar", value.dtype, (), None, arg=value))


def op_node(op: str, dtype: np.dtype, shape: tuple[int, ...], device: str | None,
            src: tuple[Node, ...], arg: Any = None) -> Node:
    """An interior node, interned on (op, dtype, arg, children's identities).

    A node that was already materialized is not reused: it memoizes the buffers' values at
    that time, while a newly built expression must read them when it is materialized.

    Keys use the children's ids: a child cannot die (and its id be reused) while
    a parent referencing it is alive, and the parent's entry dies with the parent.
    """
    return _intern((op, dtype, arg, *map(id, src)),
                   lambda: Node(op, dtype, shape, device, src, arg))
