"""Boolean masks of an array's full shape: ``X[m]`` pending, and the masked update
``X[m] = f(X[m], Y[m], s)`` as one write (docs/views-and-writes.rst, "Masked updates").

``X[m]`` (``m`` a bool array of ``X``'s shape) is a pending ``"compress"`` node over ``X``
and ``m``: its shape ``(count,)`` is known at once (``m`` is computed and counted), its values
are NumPy's (CuPy's) ``X[m]`` of the computed operands whenever something computes it
(:func:`compute`, called by lowering: no backend ever sees the op). It reads ``X`` and
``m`` as a pending expression does, so a later write into either computes it first (the
write barrier): ``v = X[m]`` keeps the old values, as NumPy's copy does.

``X[m] = value``, where ``value`` is a pending expression built only of elementwise ops,
casts, scalars (and 0-d values) and ``A[m]`` with that same ``m`` (A of the mask's shape),
and at least :data:`DENSE` of the mask is True, is the write ``X[...] = where(m, value', X)``,
``value'`` the same ops over the whole ``A``'s: one fused kernel into ``X``'s memory, where
NumPy computes the compressed operands, the op chain and the scatter. NumPy computes ``f``
on the True lanes only, so nothing of the False lanes may raise a floating-point warning:
every op that can raise one (``fp_checks.site_name``) reads a quiet constant there instead
of an operand that may raise (:func:`_op`). A sparser mask, a scalar or a computed value
is NumPy's write (it moves only the True elements: faster there, measured).

On the CPU (the fused backend's ``run_masked``) ``X[m]`` is pending at any density, and the
masked update of a C-ordered ``X`` is computed on the True lanes alone (:func:`sparse_value`:
``value'`` with nothing quieted, run by the VM a block at a time on each input taken at the
mask's runs of True lanes, the result put back there: NumPy's loops on NumPy's values, so
its flags exactly), which beat the dense write at every density measured (docs/notes/cpu.rst,
2026-12-08); ``X[m] = scalar`` fills the True lanes the same way (:func:`fill_mask`).
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from . import _devices, _node, _program
from .backends import select
from ._config import get_config
from ._materialize import computing_is_deferred, materialize
from ._node import Node
from ._program import Instr
from ._registry import OPS
from ._ufunc_out import quiet_constant
from .backends.cuda.fp_checks import site_name

_BOOL = np.dtype(bool)
#: the least fraction of True lanes for which a masked update is the fused write: it reads and
#: writes every element of the arrays, where NumPy's boolean indexing moves the True ones
#: only (mandelbrot1's ``Z[I] = Z[I]**2 + C[I]`` at 833x833 on the quiet 2-core CPU: the fused
#: write ~1.4 ms at any density, NumPy's path 1.33 at 30 %, 1.61 at 40 %, 2.17 at 60 %;
#: docs/notes/cpu.rst, 2026-12-07i). On the CPU a C-ordered target takes the run on the True
#: lanes instead, at any density (:func:`sparse_value`)
DENSE = 0.4
#: masks of at least 64 times this many elements are sampled before they are counted
_SAMPLE = 1024
#: interior nodes of a value a masked write rebuilds at most (a bigger one: NumPy's write)
_MAX_NODES = 64
_KINDS = frozenset({"elementwise", "cast", "output"})


def _lazy_size(size: int) -> bool:
    """Whether an array of ``size`` elements takes the pending path: lazy mode, nothing
    explained or traced, and bigger than the small operators' limit (which run at once)."""
    config = get_config()
    if config.mode == "eager" or computing_is_deferred():
        return False
    limit = config.eager_max_size
    return limit == 0 or size > limit


def _mask_node(x: Any, key: Any) -> Node | None:
    """The node of ``key`` where it is a bool mask of ``x``'s full shape (at least 1-d) on
    ``x``'s device; None otherwise."""
    shape = x._node.shape
    if type(key) is Node:
        node = key
    elif type(key) is np.ndarray:
        if key.dtype != _BOOL or key.shape != shape:
            return None
        # (a copy: the caller may change its NumPy array after the line)
        node = _node.leaf(_devices.asarray(x.device, key.copy()), x.device)
    else:
        return None
    if node.dtype != _BOOL or node.shape != shape or not shape or node.op == "scalar" \
            or (node.device or "cpu") != x.device:
        return None
    return node


def masked_runs(device: str) -> bool:
    """Whether ``device``'s backend runs a masked update on the True lanes alone (the CPU's
    fused backend: ``run_masked``), so that a sparse mask's update fuses too."""
    return device == "cpu" and hasattr(select(device, get_config().mode), "run_masked")


def fill_mask(x: Any, key: Any) -> tuple[Any, int] | None:
    """The computed mask and its count where ``x[key] = scalar`` is a masked fill (``key`` a
    LazyArray's bool mask of ``x``'s full shape, ``x`` of a numeric dtype on the pending path,
    a backend that fills: :func:`masked_runs`); None otherwise."""
    node = x._node
    if type(key) is not Node or node.op == "scalar" or x.dtype.kind not in "biufc" \
            or not _lazy_size(math.prod(node.shape)) or not masked_runs(x.device):
        return None
    mask = _mask_node(x, key)
    if mask is None:
        return None
    data = materialize(mask)
    return data, int(_devices.xp(x.device).count_nonzero(data))


def compress(x: Any, key: Any) -> Node | None:
    """``x[key]``'s pending node where ``key`` is a full-shape bool mask (a LazyArray's node or
    a NumPy array) and ``x`` takes the pending path: on the CPU at any density for a
    LazyArray's mask (a masked update runs on the True lanes: :func:`sparse_value`), else with
    at least :data:`DENSE` of it True; None otherwise (the caller indexes at once: a sparser
    mask's update is NumPy's write there, and a pending read would only add its bookkeeping,
    ~0.1 ms a statement in mandelbrot1)."""
    node = x._node
    if node.op == "scalar" or not _lazy_size(math.prod(node.shape)):
        return None
    mask = _mask_node(x, key)
    if mask is None:
        return None
    data = materialize(mask)
    xp = _devices.xp(x.device)
    size = math.prod(node.shape)
    sparse = type(key) is Node and masked_runs(x.device)    # (a NumPy mask: a new leaf, which
    if sparse:                                             # no update's key is: never fused)
        count = int(xp.count_nonzero(data))
    elif size >= 64 * _SAMPLE and data.flags.c_contiguous:
        # a first look at every 61st element (~1/60 of a count's time): a mask that is
        # clearly sparse is indexed at once (a periodic mask that fools it is counted below)
        sample = data.reshape(-1)[::61]
        if int(xp.count_nonzero(sample)) < (DENSE - 0.05) * sample.size:
            return None
    if not sparse:
        count = int(xp.count_nonzero(data))
        if count < DENSE * size:
            return None     # (no masked update of it fuses: NumPy's index at once, as before)
    found = _node.op_node("compress", node.dtype, (count,), x.device, (node, mask), count)
    # no structure id: every expression over it is lowered afresh, and lowering computes it
    found.sid, found.leaves = None, None
    return found


def compute(node: Node) -> None:
    """Compute the pending compress ``node`` (NumPy's or CuPy's boolean index of its computed
    operands) and store it on the node: an input from now on."""
    x, mask = node.src
    data = materialize(x)[materialize(mask)]
    _node.materialized(node, data)


_program.compute_compress = compute     # (lowering calls it: see there)


# ----------------------------------------------------------------------------- masked writes
class _NotFused(Exception):
    """The value is not of the fused form: the write is NumPy's."""


def fused_value(x: Any, key: Any, value: Any) -> Node | None:
    """The node ``where(m, value', x)`` that ``x[key] = value`` writes into ``x`` (of its
    dtype and shape), or None where the write is not a fused masked update (NumPy's then):
    ``value`` a pending node of the fused form, ``key`` its mask, at least :data:`DENSE` of
    the mask True."""
    node = x._node
    if type(value) is not Node or value.data is not None or not value.shape \
            or node.op == "scalar" or not _lazy_size(math.prod(node.shape)):
        return None     # (a scalar, a 0-d or a computed value: NumPy's scatter, measured faster)
    if value.dtype.kind == "c" and x.dtype.kind not in "cb":
        return None     # (NumPy's ComplexWarning depends on the count)
    mask = _mask_node(x, key) if type(key) is Node else None   # (a NumPy mask would be a new
    if mask is None:                                           # leaf, which no ``A[m]`` reads)
        return None
    try:
        new, known, count = _rebuild(value, mask, node.shape)
        if new.dtype != x.dtype:
            new, known = _op("astype", x.dtype, x.dtype, [(new, known)], mask,
                             count < math.prod(node.shape))
    except _NotFused:
        return None
    return _node.op_node("where", x.dtype, node.shape, x.device, (mask, new, node))


def sparse_value(x: Any, key: Any, value: Any) -> tuple[Node, Node, int] | None:
    """``(value', mask, count)`` where ``x[key] = value`` is a masked update that the backend
    runs on the mask's True lanes alone (:func:`masked_runs`: the CPU): ``value'`` the same
    ops over the whole arrays, of ``x``'s dtype, with nothing quieted (no False lane is
    computed), ``mask`` the key's node and ``count`` its True lanes; None where it is not of
    the form (:func:`fused_value`'s rules, at any density)."""
    node = x._node
    if type(value) is not Node or value.data is not None or not value.shape \
            or node.op == "scalar" or not _lazy_size(math.prod(node.shape)) \
            or not masked_runs(x.device):
        return None
    if value.dtype.kind == "c" and x.dtype.kind not in "cb":
        return None     # (NumPy's ComplexWarning depends on the count)
    mask = _mask_node(x, key) if type(key) is Node else None
    if mask is None:
        return None
    try:
        new, known, count = _rebuild(value, mask, node.shape, sparse=True)
        if new.dtype != x.dtype:
            new, known = _op("astype", x.dtype, x.dtype, [(new, known)], mask, False)
    except _NotFused:
        return None
    return new, mask, count


def _same_mask(a: Node, b: Node) -> bool:
    """Whether the masks ``a`` (a compress node's, computed) and ``b`` (the write's) are one:
    the same node or memory, or equal values (``x[x > 0] = log(x[x > 0])`` builds ``x > 0``
    twice: the first was computed by the read, so the second is a new node)."""
    if a is b or a.data is not None and a.data is b.data:
        return True
    if a.data is None or a.shape != b.shape or (a.device or "cpu") != (b.device or "cpu"):
        return False
    return bool(_devices.xp(a.device or "cpu").array_equal(a.data, materialize(b)))


def _rebuild(value: Node, mask: Node, shape: tuple[int, ...],
             sparse: bool = False) -> tuple[Node, Any, int]:
    """``value`` over the uncompressed arrays (of ``shape``), its value on the False lanes
    where that is one known constant (None: unknown), and the mask's count. Raises
    :class:`_NotFused` where ``value`` is not of the fused form. ``sparse``: for a run on the
    True lanes alone (:func:`sparse_value`): any count, nothing quieted."""
    memo: dict[int, tuple[Node, Any]] = {}   # (by id: no reference to the old nodes survives)
    count = [0, -1]                          # interior nodes rebuilt, the mask's count
    same: list[Node] = [mask]                # the nodes found to be the mask
    size = math.prod(shape)

    def go(n: Node) -> tuple[Node, Any]:
        done = memo.get(id(n))
        if done is not None:
            return done
        if n.op == "scalar":
            out: tuple[Node, Any] = (n, n.arg)
        elif not n.shape:                    # a 0-d value: the same on every lane
            data = n.data
            out = (n, data[()] if type(data) is np.ndarray else None)
        elif n.op == "compress" and n.data is None and n.src[0].shape == shape:
            if n.arg < DENSE * size and not sparse:
                raise _NotFused          # (before anything is built)
            if n.src[1] not in same:
                if not _same_mask(n.src[1], mask):
                    raise _NotFused
                same.append(n.src[1])
            out = (n.src[0], None)
            count[1] = n.arg
        else:
            opdef = OPS.get(n.op)
            if n.data is not None or opdef is None or opdef.kind not in _KINDS \
                    or n.op == "power" and n.dtype.kind in "iu":   # (its checks see every lane)
                raise _NotFused
            count[0] += 1
            if count[0] > _MAX_NODES:
                raise _NotFused
            kids = [go(c) for c in n.src]
            # (a mask all True has no False lane to quiet: mandelbrot1's first step)
            out = _op(n.op, n.dtype, n.arg, kids, mask, count[1] < size and not sparse)
        memo[id(n)] = out
        return out
    try:
        new, known = go(value)
        if count[1] < 0:
            raise _NotFused              # (no compressed operand)
        return new, known, count[1]
    finally:
        same.clear()
        memo.clear()     # (``go`` is in a reference cycle: the rebuilt nodes must not be)


def _op(op: str, dtype: np.dtype, arg: Any, kids: list[tuple[Node, Any]], mask: Node,
        quiet: bool) -> tuple[Node, Any]:
    """The op over the rebuilt ``kids`` (node, False-lane constant), its operands quieted on
    the False lanes where it can raise (``quiet``: the mask has False lanes), and its own
    False-lane constant."""
    if quiet and site_name(Instr(op, dtype, (), arg), [k.dtype for k, _ in kids]) is not None:
        # NumPy computes nothing on the False lanes: they read quiet constants there
        kids = [_quiet(op, k, mask) if c is None else (k, c) for k, c in kids]
        known = _evaluate(op, dtype, arg, [c for _, c in kids])
        if known is None:    # (``log(x[m] - 5)``: the constants raise; quiet every operand)
            kids = [(k, c) if k.op == "scalar" else _quiet(op, k, mask) for k, c in kids]
            known = _evaluate(op, dtype, arg, [c for _, c in kids])
            if known is None:
                raise _NotFused
    else:
        consts = [c for _, c in kids]
        known = None if any(c is None for c in consts) else _evaluate(op, dtype, arg, consts)
    src = tuple(k for k, _ in kids)
    shape = mask.shape if any(k.shape for k in src) else ()     # (0-d operands only: 0-d)
    return _node.op_node(op, dtype, shape, mask.device, src, arg), known


def _quiet(op: str, node: Node, mask: Node) -> tuple[Node, Any]:
    """``where(mask, node, q)``: ``q`` the op's :func:`_ufunc_out.quiet_constant` of
    ``node``'s dtype, which raises nothing in the op (as ``where=``'s lanes)."""
    if node.dtype.kind not in "iufc":
        raise _NotFused
    q = np.asarray(quiet_constant(op)).astype(node.dtype)[()]
    quiet = _node.op_node("where", node.dtype, mask.shape, mask.device,
                          (mask, node, _node.scalar(q)))
    return quiet, q


def _evaluate(op: str, dtype: np.dtype, arg: Any, consts: list[Any]) -> Any:
    """The op on constant operands, as NumPy computes it; None where that raises anything (a
    floating-point error, a warning) or cannot be computed here."""
    try:
        with np.errstate(all="raise"), warnings.catch_warnings():
            warnings.simplefilter("error")
            values = [np.asarray(c) for c in consts]
            if op == "astype":
                result = values[0].astype(dtype)
            elif arg is not None:
                return None
            else:
                result = OPS[op].numpy_value(*values)
            return np.asarray(result).astype(dtype)[()]
    except Exception:
        return None
