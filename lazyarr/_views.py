"""Basic indexing (ints, slices of any step, ``None``, ``...``) as views, fused.

A basic index of a *computed* array is NumPy's (CuPy's) view of its memory, as a new input:
kernels take any strides, so it costs nothing to read it in place. A basic index of a
*pending* elementwise expression is pushed down to its inputs,
``f(a, b)[key] = f(a'[key], b'[key])`` (``a'``: ``a`` broadcast to the expression's shape),
so ``u[1:-1] + u[:-2] + u[2:]`` on a pending ``u`` is ONE kernel reading ``u``'s inputs
through three views (docs/views-and-writes.rst). The plain case of :func:`view` (a key of
Python ints and slices, every operand of the full shape, no random draw, no ``la.jit`` trace)
runs in LazyArray's compiled ``getitem`` slot (lazyarr/_value_ops.pyx, ``_pushed_view``) with
this module's rule, limits and :func:`record`; everything else comes here.

Store or recompute. Pushing a view down recomputes the expression once per view that reads
it. That is right for a few views of a small expression and wrong for a stencil iterated k
times (5 views per step: 5^k paths), or a loop indexing a pending array element by element.
The rule: a view of a pending array is pushed down while the array's expression reads at most
``MAX_PUSHED_LEAVES`` inputs and fewer than ``MAX_PUSHED_VIEWS`` views of it were taken; past
that, the array is computed once (stored) and the view reads its memory. So k fused stencil
steps cost O(k) work, and a loop over ``x[i]`` computes ``x`` once.

Aliasing. A pushed-down view has no memory of its own, but NumPy says it shares its base's:
a write to either must show in the other. So the view remembers its base and key, and the
base its views (weakly). Before a write into either (lazyarr/_writes.py), :func:`anchor`
computes the base and turns every such view into a real view of the base's memory.
"""
from __future__ import annotations

import sys
import weakref
from typing import Any

import numpy as np

from . import _devices, _node
from ._materialize import materialize, tape
from ._node import Node
from ._registry import OPS

MAX_PUSHED_LEAVES = 8    # inputs of an expression a view is still pushed through
MAX_PUSHED_VIEWS = 8     # views of one pending array pushed down before it is stored

_PUSHABLE = frozenset(name for name, op in OPS.items() if op.kind in ("elementwise", "output", "cast"))

def is_basic(key: Any) -> bool:
    """Ints, slices, ``None`` and ``...`` only (NumPy's basic indexing: a view)."""
    parts = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))
               and not isinstance(k, (bool, np.bool_)) for k in parts)


def check_scalar_key(shape: tuple[int, ...], key: Any) -> None:
    """NumPy's error for a key without arrays in it (``x[1.5]``, ``x['a']``) before anything
    is computed; keys with arrays (advanced indexing) are checked by NumPy on the data."""
    parts = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(k, (list, np.ndarray)) or hasattr(k, "_node") or hasattr(k, "shape")
               for k in parts):
        shape_of(shape, lambda a: a[key])


def shape_of(shape: tuple[int, ...], fn: Any) -> tuple[int, ...]:
    """The shape of ``fn`` applied to an array of ``shape``, with NumPy's errors (IndexError,
    AxisError ...), computed on a zero-stride, read-only stand-in: nothing is allocated or
    computed. (Made by ``np.ndarray`` over one byte: ``np.broadcast_to`` took ~10 µs, once per
    view of every GPU array.)"""
    standin = np.ndarray(shape, np.bool_, _ONE_BYTE, 0, (0,) * len(shape))
    return tuple(fn(standin).shape)


_ONE_BYTE = np.zeros(1, np.bool_)
_ONE_BYTE.flags.writeable = False


def _pushable(node: Node) -> bool:
    """A view of ``node`` may be pushed down to its inputs: an op views commute with, inputs
    known and few, and one of them an array (pushed into constants alone, a view such as
    ``[None]`` would lose its shape: constants broadcast to anything). The compiled view
    (lazyarr/_value_ops.pyx, ``_pushed_view``) has this test inline: change both."""
    leaves = node.leaves
    return node.op in _PUSHABLE and leaves is not None and len(leaves) <= MAX_PUSHED_LEAVES \
        and any(leaf.op != "scalar" for leaf in leaves)


def _push(node: Node, shape: tuple[int, ...], fn: Any, out_shape: tuple[int, ...]) -> Node:
    """``fn(broadcast_to(node, shape))`` as a node: ``fn`` (a view: an index, a transpose ...)
    applied to each input, broadcast to ``shape`` first; the same ops above."""
    if node.op == "scalar":
        return node
    if node.op == "counter":     # a fused random draw's counters: the view of their map
        return _node.counter(node.arg.view(lambda a: fn(np.broadcast_to(a, shape))), node.device)
    if node.data is None and node.shape != shape:
        materialize(node)      # a pending operand of a smaller shape: stored
    if node.data is not None:
        data = node.data
        broadcast = data.shape != shape
        if broadcast:
            data = _devices.xp(node.device or "cpu").broadcast_to(data, shape)
        view = fn(data)
        t = tape()
        if t is not None:       # la.jit: how a replay takes this view of the new buffer
            t.view(view, node.data, _broadcast_then(fn, node.device, shape) if broadcast else fn)
        return _node.leaf(view, node.device or "cpu")
    src = tuple(_push(c, shape, fn, out_shape) for c in node.src)
    return _node.op_node(node.op, node.dtype, out_shape, node.device, src, node.arg)


def _broadcast_then(fn: Any, device: str | None, shape: tuple[int, ...]) -> Any:
    broadcast_to = _devices.xp(device or "cpu").broadcast_to
    return lambda data: fn(broadcast_to(data, shape))


def view(x: Any, fn: Any) -> Any:
    """``fn(x)`` for a view function ``fn`` (what gives NumPy's view of an array: an index, a
    transpose, ``expand_dims`` ...), as a LazyArray: of a computed ``x``, a view of its
    memory; of a pending elementwise ``x``, pushed down to its inputs (the store rule above)."""
    node = x._node
    if node.data is not None and x.device == "cpu":   # NumPy's view of the memory, its errors
        return _of_memory(x, fn)
    out_shape = shape_of(node.shape, fn)          # NumPy's errors before anything runs
    if node.data is None and _pushable(node) and views_taken(x) < MAX_PUSHED_VIEWS:
        out = type(x)._from_node(_push(node, node.shape, fn, out_shape))
        record(x, out, fn)
        return out
    return _of_memory(x, fn)


def part(x: Any, fn: Any, pending: Any) -> Any:
    """A view ``fn(x)`` that cannot be pushed down (``.real``/``.imag`` of a complex ``x``:
    the ops below do not commute with it): of a computed ``x``, a view of its memory; of a
    pending ``x``, the node ``pending()`` computes, remembered as ``fn(x)``, so a write into
    either turns it into a view of ``x``'s memory first (:func:`anchor`)."""
    if x._node.data is None:
        out = type(x)._from_node(pending())
        record(x, out, fn)
        return out
    return _of_memory(x, fn)


def view_of_memory(memory: Any, fn: Any) -> Any:
    """``fn(memory)``, read-only where ``memory`` is (:func:`lazyarr._devices.inherit_read_only`)."""
    return _devices.inherit_read_only(memory, fn(memory))


def _of_memory(x: Any, fn: Any) -> Any:
    """``fn`` applied to ``x``'s memory (computing ``x`` if pending): a real view."""
    memory = owned_memory(x)
    if memory is not None:      # (a NumPy array: its views inherit its read-only flag)
        view = fn(memory)
    else:
        anchor(x)   # (x's own pushed-down views get memory first: they alias this view too)
        memory = claim(x)
        view = view_of_memory(memory, fn)
    t = tape()
    if t is not None:
        t.view(view, memory, fn)
    return type(x)._from_node(_node.leaf(view, x.device))


# Memory ownership. Equal pending expressions built twice share one (interned) node, so two
# LazyArrays can hold one computed buffer. They are equal values, not aliases: the first of
# them to use the memory as memory (a view of it, a write, an export) owns it; a holder that
# does so while another holds it too, or after another claimed it, gets its own copy first.
# The owner is a weak reference in the node's ``owner`` slot (it dies with the node).


#: Whether ``sys.getrefcount`` counts every reference a value has: CPython before 3.14. From
#: 3.14 the interpreter may borrow the references on its stack, so a held value can look
#: unheld; the reference-count tests here and in lazyarr/_writes.py (is a node held by
#: someone else?) then take their safe side: copy, compute and keep, never write into it.
EXACT_REFCOUNTS = sys.implementation.name == "cpython" and sys.version_info < (3, 14)


def claim(x: Any) -> Any:
    """``x``'s memory (computing ``x`` if pending), owned by ``x`` from now on."""
    node = x._node
    if node.op == "scalar":                 # a LazyArray over a constant
        x._node = node = _node.leaf(materialize(node), x.device)
    elif node.data is None:
        materialize(node)
    ref = node.owner
    owner = ref() if ref is not None else None
    # An interior node (a computed expression) unowned but held by others too: they never
    # used it as memory, so x takes a copy. Expected are x._node, ``node`` and getrefcount's
    # argument; a pending expression reading it adds one more (a copy, then, is only
    # wasted). Leaves are never interned: one per wrapped buffer.
    if owner is x or owner is None and (node.op == "leaf" or EXACT_REFCOUNTS
                                        and sys.getrefcount(node) <= 3):
        node.owner = weakref.ref(x)
    else:
        # (order="K": the copy keeps the layout, so x's strides stay NumPy's; an F-ordered
        # result copied C-ordered made x.ravel() a view where NumPy's is a copy)
        x._node = node = _node.leaf(node.data.copy(order="K"), x.device)
        node.owner = weakref.ref(x)
    return node.data


def owned_memory(x: Any) -> Any:
    """``anchor(x)`` then ``claim(x)`` where they have nothing to do but mark ``x`` the owner:
    ``x`` a computed CPU array (a NumPy array) whose memory is its own or a fresh leaf's, with
    no pushed-down views and not one itself. Its memory then; None otherwise (the general
    pair must run). The common view of a loop's small computed array takes ~1 µs less."""
    node = x._node
    data = node.data
    if type(data) is not np.ndarray or node.device != "cpu":
        return None
    key = id(x)
    if key in _base_of or _views_of.get(key):
        return None
    ref = node.owner
    if ref is None:
        if node.op != "leaf":
            return None
        node.owner = weakref.ref(x)     # (claim's first holder of a leaf)
    elif ref() is not x:
        return None
    return data


def owned_view(x: Any, fn: Any) -> Any:
    """:func:`view`'s ``fn(x)`` where ``x`` is a LazyArray with :func:`owned_memory` and no
    la.jit trace runs (which records each view): NumPy's view of the memory, its errors;
    None otherwise. (The method forms, ``x.T``, and the view functions come here first.)"""
    memory = owned_memory(x)
    if memory is None or tape() is not None:
        return None
    return type(x)._from_node(_node.leaf(fn(memory), "cpu"))


# Pushed-down views of pending arrays only, keyed by id (a LazyArray is unhashable: == is
# elementwise), with their view function. A view holds its base (as NumPy's ``.base``); a
# base holds its views weakly. Entries go when their array dies (weak-reference callbacks).
_base_of: dict[int, tuple[weakref.ref[Any], Any, Any]] = {}         # id(view) -> (ref, base, fn)
_views_of: dict[int, dict[int, tuple[weakref.ref[Any], Any]]] = {}  # id(base) -> {id(view): (ref, fn)}
_base_refs: dict[int, weakref.ref[Any]] = {}
_taken: dict[int, int] = {}             # id(base) -> views pushed down so far (live or not)


def _view_gone(ref: Any) -> None:
    vid, bid = ref.key
    _base_of.pop(vid, None)
    views = _views_of.get(bid)
    if views is not None:
        views.pop(vid, None)


def _base_gone(ref: Any) -> None:
    _views_of.pop(ref.key, None)
    _base_refs.pop(ref.key, None)
    _taken.pop(ref.key, None)


def record(base: Any, view: Any, fn: Any) -> None:
    """``view`` is ``fn(base)``, pushed down: remember both ways for writes. (The weak
    references carry the ids their callbacks forget: no closure per view.)"""
    vid, bid = id(view), id(base)
    ref = _node._Ref(view, _view_gone)
    ref.key = (vid, bid)
    _base_of[vid] = (ref, base, fn)
    if bid not in _base_refs:
        bref = _base_refs[bid] = _node._Ref(base, _base_gone)
        bref.key = bid
    _views_of.setdefault(bid, {})[vid] = (ref, fn)
    _taken[bid] = _taken.get(bid, 0) + 1


def views_taken(x: Any) -> int:
    """How many views of ``x`` were pushed down (the store rule's count)."""
    return _taken.get(id(x), 0)


def aliased(x: Any) -> bool:
    """Whether ``x`` is a pushed-down view or has pushed-down views (shares memory-to-be)."""
    return id(x) in _base_of or bool(_views_of.get(id(x)))


def anchor(x: Any) -> None:
    """Before a write into ``x``: give ``x``, its base (if ``x`` is a pushed-down view) and
    all their pushed-down views real memory, so the write shows in each of them."""
    entry = _base_of.pop(id(x), None)
    if entry is not None:
        _, base, fn = entry
        views = _views_of.get(id(base))
        if views is not None:
            views.pop(id(x), None)
        anchor(base)
        x._node = _node.leaf(view_of_memory(claim(base), fn), base.device)
    views = _views_of.pop(id(x), None)
    if views:
        memory = claim(x)
        for vid, (ref, fn) in list(views.items()):
            v = ref()
            _base_of.pop(vid, None)
            if v is not None:
                v._node = _node.leaf(view_of_memory(memory, fn), x.device)
                anchor(v)
