"""Writes into arrays with NumPy's aliasing: ``x[key] = value``, ``x op= y`` and the fallback's
writing functions (``out=``, ``np.copyto``, ``x.fill``, ``x.sort()``).

The rules (docs/views-and-writes.rst, "Writes"):

* **Memory carries aliasing.** A write goes into the target's memory, so every array that
  shares it (a basic-index view, ``np.asarray(x)``, the NumPy array given to ``la.asarray``)
  sees it, as in NumPy. Two LazyArrays that hold one *node* (an interned expression built
  twice, ``x.astype(x.dtype)``) are equal values, not aliases: the memory belongs to the first
  that views, exports or writes it (``_views.claim``); the other gets its own copy first.
* **Pending readers keep the old values (the write barrier).** Before memory is written,
  every pending expression that reads it is computed, so each has the value it had at the
  line that wrote it (``b = a + 1; a[0] = 5`` leaves ``b`` as it was).
* **Checks before anything is written.** The value is computed and NumPy's (CuPy's)
  ``__setitem__`` does the indexing, broadcasting and casting checks, so a bad write raises
  NumPy's exception and leaves the target as it was.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from . import _devices, _masked, _node, _views
from ._materialize import materialize, materialize_into, materialize_masked, tape
from ._node import Node, overlaps_any
from ._value_ops import device_view
from ._config import get_config
from .backends import fp_errors, select
from .backends._cpu_vm import data_address


def _leaf_buffers(root: Node) -> list[Node]:
    """The computed nodes (leaves and materialized interior nodes) a pending ``root`` reads."""
    if root.leaves is not None and root.epoch == _node.epoch:   # (older ones may be stale)
        return [n for n in root.leaves if n.data is not None]
    found: list[Node] = []
    seen: set[int] = set()
    stack = [root]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.data is not None:
            found.append(n)
        else:
            stack.extend(n.src)
    return found


def _reads(node: Node, memory: Any, device: str) -> bool:
    # (``_devices.may_share_memory`` per buffer, compiled: ``memory``'s extent read once; on a
    # GPU that was two Python extent walks per buffer, and vadv's barrier asks of ~5 buffers)
    return overlaps_any([leaf.data for leaf in _leaf_buffers(node)
                         if (leaf.device or "cpu") == device], memory, None)


def barrier(memory: Any, device: str, skip: Node | None = None,
            held: list[Node] | None = None, spare: Node | None = None) -> None:
    """Compute every live pending expression that reads ``memory`` (before it is written).

    The pending nodes are found in the intern table (every interior node is interned while
    it lives), those whose inputs lie apart from ``memory`` left out in C (``held_pending``).
    Only those something else holds (a LazyArray, a user variable) are computed;
    a node held only by other pending readers is part of their kernel. The table keeps build
    order, children before parents, so a held child is computed first and its parent reads it
    (each is asked again here: one computed before may have left it reading that child's new
    memory). ``held``: ``held_pending``'s answer when the caller has it already. ``spare``:
    a pending node no one will read again (the temporary value of a fused masked update,
    which the write has rebuilt: :func:`_masked_update`), left pending.
    """
    if held is None:
        held = _node.held_pending(skip, _views.EXACT_REFCOUNTS, memory)
    for n in held:
        if n is not spare and _reads(n, memory, device):
            materialize(n)


def target(x: Any, writing: Node | None = None, spare: Node | None = None) -> Any:
    """``x``'s memory, ready to be written: computed, the writer's own, with no pending
    expression reading it (but ``writing``, the expression about to be written into it, and
    :func:`barrier`'s ``spare``). A pending ``x`` is computed into new memory first."""
    t = tape()
    if t is not None:
        t.cannot_replay("it writes into an array")
    _views.anchor(x)                        # pushed-down views get real memory first
    if x._node.data is None and x._node.op != "scalar":
        materialize(x._node)
    if x._node.data is not None:            # (first: computed readers stop holding the node)
        barrier(x._node.data, x.device, writing, spare=spare)
    memory = _views.claim(x)
    if type(memory) is not np.ndarray and _devices.read_only(memory):   # (NumPy's own check)
        raise ValueError("assignment destination is read-only")
    return memory


def _device_value(value: Any, device: str) -> Any:
    """The value to write, computed and on ``device`` (Python scalars stay as they are: NumPy
    applies its own range checks to them). A LazyArray's value comes as its node."""
    if type(value) is Node:
        return _buffer_on(value, device)
    if device == "cuda" and _devices.device_of(value) is None and not isinstance(
            value, (int, float, complex, bool)):
        return _devices.asarray(device, value)
    return value


def _buffer_on(node: Node, device: str) -> Any:
    """The node's buffer (computed if pending) on ``device`` (copied there if elsewhere)."""
    data = materialize(node)
    source = node.device or "cpu"
    return data if source == device else _devices.asarray(device, _devices.to_host(source, data))


def _device_key(key: Any, device: str) -> Any:
    """The index on ``device``; LazyArrays in it come as their nodes."""
    def one(k: Any) -> Any:
        if type(k) is Node:
            if not k.shape and k.dtype.kind in "iu":
                # an integer: basic indexing, as NumPy's 0-d index
                return _devices.to_host(k.device or "cpu", materialize(k)).item()
            return _buffer_on(k, device)
        return k
    if type(key) is tuple:
        for k in key:
            if type(k) is Node:
                return tuple(one(k) for k in key)
        return key                  # (a loop's ints and slices: the tuple as it is)
    return tuple(one(k) for k in key) if isinstance(key, tuple) else one(key)


def setitem(x: Any, key: Any, value: Any, temporary: bool = False) -> None:
    """``x[key] = value`` as NumPy: ``value`` is computed in full, then written with
    NumPy's (CuPy's) indexing, broadcasting and unsafe casting. LazyArrays in ``value`` and
    ``key`` come as their nodes (the array layer unwraps them); ``temporary``: the value's
    LazyArray was a temporary of the caller's statement.

    A pending value that nothing else holds, of the target's dtype and of the shape a basic
    index selects, is computed straight into the target's memory where the backend can do
    that with every read seeing the old values (:func:`_materialize.materialize_into`; the
    CPU's chunked write-back, docs/design.rst "Writes into the array read"): no temporary
    and one pass, instead of NumPy's temporary and copy."""
    device = x.device
    if type(value) is Node and value.data is not None and _writes_itself(x, key, value.data):
        return
    if type(key) is Node and type(value) is Node and value.data is None \
            and _masked_update(x, key, value, temporary):
        return
    if type(key) is Node and type(value) in _FILL_SCALARS and _masked_fill(x, key, value):
        return
    # (held: the value's node, the LazyArray's ``_node``, getrefcount's argument)
    if temporary and _views.EXACT_REFCOUNTS and type(value) is Node and value.data is None \
            and value.op != "scalar" \
            and value.dtype == x.dtype and (value.device or "cpu") == device \
            and sys.getrefcount(value) <= 3 and _basic(key) and not fp_errors.interrupting():
        memory = target(x, writing=value)
        # (on cuda the view is kept on the leaf: a loop writes through the same key each time)
        dest = device_view(x._node, key) if device == "cuda" else memory[key]
        if type(dest) is type(memory) and dest.shape == value.shape \
                and materialize_into(value, dest):
            return
    element = _element_view(value) if device == "cuda" else None
    if device == "cuda" and isinstance(value, np.generic):
        value = _numpy_element(value, x.dtype) if _basic(key) else _numpy_cast(value, x.dtype)
    if element is None:
        value = _device_value(value, device)
    key = _device_key(key, device)
    memory = target(x)
    if element is not None:
        # the pending copy of one element (fdtd_2d's ``ey[0, :] = _fict_[t]``): its 0-d view
        # written as it is, which CuPy broadcasts, instead of a kernel computing the copy
        # first; the same values, as nothing has written the element since the line that
        # read it (a write would have computed the copy: the barrier). Unless the view lies
        # in the memory written (``x[0, :] = x[0, 5]``): then the copy, NumPy's scalar.
        value = _device_value(value, device) if overlaps_any((element,), memory, None) \
            else element
    memory[key] = value


def _masked_update(x: Any, key: Any, value: Any, temporary: bool) -> bool:
    """``x[m] = value`` as the fused write ``x[...] = where(m, value', x)`` where it is a
    masked update (lazyarr/_masked.py, :func:`_masked.fused_value`); False, with nothing
    written, where it is not (NumPy's write then)."""
    if fp_errors.interrupting():
        return False        # (NumPy raises before it writes: the general path computes first)
    data = x._node.data
    if data is None or type(data) is np.ndarray and data.flags.c_contiguous:
        # the CPU: computed on the True lanes alone, at any density (docs/notes/cpu.rst,
        # 2026-12-08: faster than the dense write below from ~50 % True down, as fast above)
        found = _masked.sparse_value(x, key, value)
        if found is not None:
            return _sparse_update(x, value, temporary, *found)
    result = _masked.fused_value(x, key, value)
    if result is None:
        return False
    # A temporary value (``x[m] = x[m] ** 2``) is read by no one after this line: its pending
    # compressed expression, which reads ``x``, need not be computed before the write.
    spare = value if temporary and type(value) is Node else None
    del value
    memory = target(x, writing=result, spare=spare)
    if not materialize_into(result, memory):
        data = materialize(result)
        memory = target(x)
        memory[...] = data
    return True


def _sparse_update(x: Any, value: Any, temporary: bool, new: Node, mask: Node,
                   count: int) -> bool:
    """``x[m] = value`` computed on the True lanes of ``m`` alone and written there, one pass
    (``new``, ``mask``, ``count``: :func:`_masked.sparse_value`'s answer; ``run_masked`` of the
    CPU's fused backend). Where that backend does not take the layouts, NumPy's write of
    the value (computed as NumPy computes it)."""
    spare = value if temporary and type(value) is Node else None
    memory = target(x, writing=new, spare=spare)
    data = materialize(mask)
    if value.data is None and materialize_masked(new, data, memory, count):
        return True
    # (a layout the masked run does not take, or a value computed by the write's barrier
    # because something else holds it: NumPy's write of the value)
    values = materialize(value)
    memory = target(x)
    memory[data] = values
    return True


#: the scalar values of ``x[m] = value`` that :func:`_masked_fill` writes
_FILL_SCALARS = frozenset({int, float, complex, bool, np.bool_, np.int8, np.int16, np.int32,
                           np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
                           np.float32, np.float64, np.complex64, np.complex128})
_ONE = np.ones(1, bool)


def _masked_fill(x: Any, key: Any, value: Any) -> bool:
    """``x[m] = value`` for a scalar ``value`` and a mask ``m`` of ``x``'s shape on the CPU
    (mandelbrot1's ``N[I] = n``): the value, converted as NumPy converts it (its errors and
    warnings, which do not depend on the count), written into the True lanes in one pass on
    the kernel's threads (``run_fill``), where NumPy's scatter runs on one. False, with nothing
    done, where it does not apply (NumPy's write then)."""
    data = x._node.data
    if data is not None and (type(data) is not np.ndarray or not data.flags.c_contiguous):
        return False
    found = _masked.fill_mask(x, key)
    if found is None:
        return False
    mask, count = found
    memory = target(x)
    one = np.zeros(1, memory.dtype)
    one[_ONE] = value                   # (NumPy's conversion: ``memory[m] = value``'s own)
    if not select("cpu", get_config().mode).run_fill(memory, mask, one, count):
        memory[mask] = one[0]
    return True


def _numpy_element(value: np.generic, dtype: np.dtype) -> np.generic:
    """A NumPy scalar written through a basic index, converted as NumPy converts it there:
    as one element (np.int64(300) into int8 is NumPy's OverflowError, NaN into an integer
    its ValueError), where CuPy casts it as an array (44, INT_MIN). (Fancy and boolean keys
    cast it as an array in NumPy too, but with NumPy's cast: :func:`_numpy_cast`.)"""
    one = np.empty(1, dtype)
    one[0] = value
    return one[0]  # type: ignore[no-any-return]


def _numpy_cast(value: np.generic, dtype: np.dtype) -> np.ndarray:
    """A NumPy scalar written through a fancy or boolean key, cast as NumPy casts it there (an
    unsafe cast of the value as an array, with NumPy's warnings): a 0-d host array of the
    target's dtype, which the write copies to the GPU as it is. CuPy's own cast differs
    (``np.float32(inf)`` into int8: -1 where NumPy gives 0; ``np.float32(-0.0)``: +0.0, its
    fill of a zero; the H100, 2026-12-07)."""
    return np.asarray(value).astype(dtype)


def _element_view(value: Any) -> Any:
    """The 0-d view of a computed cuda array that ``value`` is a pending copy of (an element
    read in lazy mode: ``_array._element_of``), or None."""
    if type(value) is Node and value.data is None and value.op == "astype" and not value.shape:
        src = value.src
        if len(src) == 1:
            view = src[0]
            if view.op == "leaf" and view.device == "cuda" and view.data is not None \
                    and view.dtype == value.dtype:
                return view.data
    return None


def _writes_itself(x: Any, key: Any, data: Any) -> bool:
    """Whether ``x[key] = data`` would write each element of ``x[key]`` with itself: ``data``
    is that very view of ``x``'s memory (the same address, shape, strides and dtype), as in
    the write that ends an augmented assignment, ``x[1:, :] -= v`` (Python calls
    ``x.__setitem__(key, x[key].__isub__(v))``: the subtraction has already written ``x``).
    Nothing changes then, and the write is skipped, as NumPy's and CuPy's own assignments skip
    it; a read-only target still goes the usual way, which refuses it. Before 2026-12-06f the
    write ran the barrier, the claim and CuPy's ``__setitem__`` (~15 µs of a cuda statement's
    host time in fdtd_2d, a NumPy call on the CPU)."""
    memory = x._node.data
    if memory is None or type(data) is not type(memory):
        return False
    # (False is always safe: the usual write then. So first the cheap test that ``data`` is
    # no view of ``memory``'s allocation, a computed value's new memory: a NumPy view's base
    # is the array owning the memory, a CuPy view's pointer holds the allocation. Then a loop
    # writing a result into a new key each step, conv2d's ``output[:, i, j, :] = ...``,
    # makes no view of the target here, a CuPy view ~2-4 µs on the H200's host)
    if type(memory) is np.ndarray:
        if (data if data.base is None else data.base) is not (
                memory if memory.base is None else memory.base):
            return False
        if not _basic(key) or not memory.flags.writeable:
            return False
        try:
            dest = memory[key]
        except (IndexError, TypeError):
            return False          # (the usual way raises NumPy's error)
        return type(dest) is np.ndarray and dest.shape == data.shape \
            and dest.strides == data.strides and dest.dtype == data.dtype \
            and data_address(dest) == data_address(data)   # (an element: a NumPy scalar)
    if not _devices.is_cupy_array(memory) or data.data.mem is not memory.data.mem \
            or not _basic(key) or _devices.read_only(memory):
        return False
    try:
        dest = device_view(x._node, key)
    except (IndexError, TypeError):
        return False
    return dest is data or (dest.shape == data.shape and dest.strides == data.strides
                            and dest.dtype == data.dtype and dest.data.ptr == data.data.ptr)


def _basic(key: Any) -> bool:
    """Whether ``key`` is a basic index (ints, slices, None, ...): it selects a view."""
    for k in key if type(key) is tuple else (key,):
        if not (k is None or k is Ellipsis or type(k) is slice or type(k) is int
                or isinstance(k, np.integer)):
            return False
    return True


def assign(x: Any, result: Node) -> None:
    """``x op= y``: the computed ``result`` (already cast to ``x.dtype``, of ``x.shape``)
    written into ``x``'s memory: computed straight into it where the backend can do that
    safely (``A += outer(u, v)``: one pass, no temporary the size of ``A``), else computed and
    copied. A result that something else holds (``b = a + 1; a += 1``: one interned node) is
    computed and kept, so the holder keeps its value."""
    # (held: the caller's ``result``, this parameter and getrefcount's argument)
    if result.data is None and _views.EXACT_REFCOUNTS and sys.getrefcount(result) <= 3:
        memory = target(x, writing=result)
        if materialize_into(result, memory):
            return
    data = materialize(result)
    memory = target(x)
    memory[...] = data
