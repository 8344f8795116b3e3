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

import threading
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


_interned: weakref.WeakValueDictionary[tuple[Any, ...], Node] = weakref.WeakValueDictionary()
_intern_lock = threading.Lock()


def leaf(data: Any, device: str) -> Node:
    """A materialized buffer as a node. Leaves are not interned: one per buffer wrapper."""
    return Node("leaf", data.dtype, tuple(data.shape), device, data=data)


def scalar(value: np.generic) -> Node:
    """A constant operand (already of its final dtype); interned by dtype and bit pattern."""
    key = ("scalar", value.dtype, value.tobytes())
    with _intern_lock:
        node = _interned.get(key)
        if node is None:
            node = Node("scalar", value.dtype, (), None, arg=value)
            _interned[key] = node
    return node


def op_node(op: str, dtype: np.dtype, shape: tuple[int, ...], device: str | None,
            src: tuple[Node, ...], arg: Any = None) -> Node:
    """An interior node, interned on (op, dtype, arg, children's identities).

    A node that was already materialized is not reused: it memoizes the buffers' values at
    that time, while a newly built expression must read them when it is materialized.

    Keys use the children's ids: a child cannot die (and its id be reused) while
    a parent referencing it is alive, and the parent's entry dies with the parent.
    """
    key = (op, dtype, arg, *map(id, src))
    with _intern_lock:
        node = _interned.get(key)
        # A materialized node holds the value its inputs had when it ran; a new expression
        # reads the buffers as they are now, so it gets a fresh node (the old one keeps its memo).
        if node is None or node.data is not None:
            node = Node(op, dtype, shape, device, src, arg)
            _interned[key] = node
    return node
