"""Operands of an op, as nodes: leaves made of array-likes (the memory path of ``la.asarray``),
weak Python scalars, NumPy scalars as constant nodes, casts, and the device the op runs on.

Works on nodes only. The array layer (lazyarr/_array.py) unwraps LazyArrays into their nodes
before calling here; anything else array-like becomes a new leaf.
"""
from __future__ import annotations

import functools
import math
import operator
from typing import Any

import numpy as np

from . import _devices, _memory, _node
from ._devices import resolve as resolve_device
from ._dtypes import WEAK_SCALAR_TYPES, cast_overflowed, check_dtype, scalar_to_dtype
from ._node import Node
from .backends import fp_errors
from .backends._cpu_vm import result_pool_call  # type: ignore[import-not-found]

Operand = Node | int | float  # a node, or a weak Python scalar


# ----------------------------------------------------------------------------- leaves
def leaf_of(obj: Any, dtype: Any = None, order: Any = None, device: str | None = None,
            copy: bool | None = None) -> Node:
    """A leaf holding the data of ``obj``, an array-like (``la.asarray``'s rules for memory,
    devices and copies)."""
    return leaf_from(obj, _devices.device_of(obj), dtype, order, device, copy)


def leaf_from(obj: Any, src_device: str | None, dtype: Any = None, order: Any = None,
              device: str | None = None, copy: bool | None = None) -> Node:
    """A leaf holding the data of ``obj``, which lives on ``src_device`` (None: the host), on
    ``device`` (None: where it is, or the configured device for host data)."""
    target = resolve_device(device) if device is not None else (src_device or resolve_device(None))
    if target == "cuda":
        if copy is False and src_device != "cuda":
            raise ValueError("Unable to avoid copy while creating an array as requested "
                             "(host data to device 'cuda')")
        data = _devices.asarray("cuda", obj, dtype)  # zero-copy for CAI / DLPack objects
        if copy and src_device == "cuda":          # (host data was copied to the GPU above)
            data = data.copy()
        data = _in_order(data, order, "cuda", copy)
    elif src_device == "cuda":
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested "
                             "(device 'cuda' to the host)")
        data = _devices.to_host("cuda", obj)
        data = _in_order(data if dtype is None else data.astype(dtype), order, "cpu", copy)
    else:
        data = np.asarray(obj, dtype=dtype, order=order, copy=copy)
    check_dtype(data.dtype)
    return _node.leaf(data, target)


def _in_order(data: Any, order: Any, device: str, copy: bool | None) -> Any:
    """``data`` laid out as ``order`` asks (``"C"``, ``"F"``; the other orders keep it): a copy
    where it is not laid out so already, as ``numpy.asarray(order=)`` (the CPU's own path)."""
    if order == "C" and not data.flags.c_contiguous or order == "F" and not data.flags.f_contiguous:
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested "
                             f"(order {order})")
        return _devices.xp(device).asarray(data, order=order)
    return data


#: the makers whose large arrays come from the result pool (``zeros`` is calloc's: its pages
#: are zeroed as they are first touched, which a kept block would have to pay at once), from
#: the pool's smallest block at 8 bytes an element
_POOLED = frozenset({"empty", "ones", "full"})
_POOL_MIN_ELEMENTS = _memory.MIN_BYTES // 8


def _elements(shape: Any) -> int:
    """The element count of a maker's ``shape`` argument; 0 where it is not one (the maker's
    own error then)."""
    try:
        return math.prod(shape) if isinstance(shape, (tuple, list)) else operator.index(shape)
    except TypeError:
        return 0


def made(device: str | None, make: str, *args: Any, **kwargs: Any) -> Node:
    """A new leaf from the device's array library (``numpy.<make>``/``cupy.<make>``)."""
    dev = _devices.resolve(device)
    maker = functools.partial(_devices.full, dev) if make == "full" else getattr(_devices.xp(dev), make)
    if dev == "cpu" and make in _POOLED and \
            _elements(args[0] if args else kwargs.get("shape")) >= _POOL_MIN_ELEMENTS:
        data = result_pool_call(maker, args, kwargs)   # (as a kernel's result: docs/cpu-backend.rst)
    else:
        data = maker(*args, **kwargs)
    check_dtype(data.dtype)
    return _node.leaf(data, dev)


def placed(node: Node) -> Node:
    """A constant (a NumPy scalar operand) as a 0-d array on the configured device, as
    ``la.asarray(np.int8(3))`` would be; other nodes as they are."""
    if node.device is not None:
        return node
    device = resolve_device(None)
    return _node.leaf(_devices.asarray(device, node.arg), device)


# ----------------------------------------------------------------------------- operands
def common_device(operands: list[Operand]) -> str:
    device = None
    for x in operands:
        if type(x) is Node and x.device is not None and x.device != device:
            if device is not None:
                raise ValueError(f"operands are on different devices ({device} and {x.device}); "
                                 "move one explicitly with la.asarray(x, device=...)")
            device = x.device
    # Only constants (NumPy scalars): the configured default device, as for Python scalars.
    return device or resolve_device(None)


_SUPPORTED_SCALAR_KINDS = frozenset("biuf")


def numpy_scalar_node(x: Any) -> Node | None:
    """A NumPy scalar of a real supported dtype as a constant node of its own dtype (NumPy 2:
    it is not weak), memoized as Python numbers are (:func:`scalar_node`: building its node
    each time cost ~5 µs an operator); None for any other (complex, datetime, ...:
    ``to_operand`` makes or refuses those)."""
    if x.dtype.kind not in _SUPPORTED_SCALAR_KINDS:
        return None
    return scalar_node(x, check_dtype(x.dtype, "a scalar operand"))


def to_operand(x: Any, device: str | None = None) -> Operand:
    """A node, a weak Python scalar, or anything array-like as a new leaf."""
    if type(x) is Node or type(x) in WEAK_SCALAR_TYPES:
        return x
    if device == "cuda" and isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]     # a 0-d host array is a value, as a NumPy scalar: it goes along to the GPU
    if isinstance(x, (bool, np.generic)):
        return _node.scalar(np.asarray(x)[()] if not isinstance(x, np.generic)
                            else np.asarray(x, dtype=check_dtype(x.dtype, "a scalar operand"))[()])
    if isinstance(x, (np.ndarray, list, tuple)) and device == "cuda":
        raise ValueError("cannot mix a host (NumPy) array with a cuda array; move it explicitly "
                         "with la.asarray(x, device='cuda') (only 0-d arrays and scalars go "
                         "along as values)")
    return leaf_of(x, device=device)


def operands_of(args: tuple[Any, ...]) -> list[Operand]:
    """Convert the arguments of an op, placing array-likes on the device of the nodes."""
    if all(type(a) is Node or type(a) in WEAK_SCALAR_TYPES for a in args):   # the hot path
        ops: list[Operand] = list(args)
    else:
        device = next((a.device for a in args if type(a) is Node), None)
        ops = [to_operand(a, device) for a in args]
    if not any(isinstance(x, Node) for x in ops):   # all Python scalars: NumPy makes them arrays
        ops = [to_operand(np.asarray(x)) for x in ops]
    return ops


def cast(x: Node, dtype: np.dtype) -> Node:
    """``x.astype(dtype)`` as a node (or the node itself when the dtype already matches)."""
    if x.dtype == dtype:
        return x
    if x.op == "scalar":
        return _node.scalar(x.arg.astype(dtype))
    return _node.op_node("astype", dtype, x.shape, x.device, (x,), dtype)


# (Python number, dtype[, sign of a zero]) -> its scalar node: the constants of a program
# repeat, and converting one (NumPy scalar, bytes for the intern key) costs a microsecond.
# Equal numbers convert to the same value, except 0.0 and -0.0 (hence the sign); NaN is
# never equal to itself, so it is not memoized. Holds the nodes alive: bounded.
_scalar_nodes: dict[tuple[Any, ...], Node] = {}
_MAX_SCALAR_NODES = 1024


def scalar_node(value: Any, dtype: np.dtype) -> Node:
    """A Python number (or a NumPy scalar of ``dtype``: an equal key is an equal value) as a
    constant node of ``dtype``."""
    if value != value:
        return _node.scalar(scalar_to_dtype(value, dtype))
    if type(value) is complex:    # 0j, -0j, 0-0j, -0+0j: four zeros
        key = (value, dtype, math.copysign(1.0, value.real), math.copysign(1.0, value.imag))
    else:
        key = (value, dtype) if value else (value, dtype, math.copysign(1.0, value))
    node = _scalar_nodes.get(key)
    if node is None:
        converted = scalar_to_dtype(value, dtype)
        node = _node.scalar(converted)
        if cast_overflowed(value, converted):
            # NumPy's "overflow encountered in cast" at each use (so not memoized: a hit in
            # the memo reports nothing), under the error state at the user's line
            fp_errors.report([(fp_errors.OVERFLOW, "cast")])
            return node
        if len(_scalar_nodes) >= _MAX_SCALAR_NODES:
            _scalar_nodes.clear()
        _scalar_nodes[key] = node
    return node
