"""The ufunc keywords ``out=`` and ``where=`` as lazyarr writes (issue 16 item 3).

``la.add(a, b, out=c)`` is the write ``c[...] = add(a, b)`` through lazyarr's assignment
machinery (lazyarr/_writes.py: a pending expression that read ``c`` keeps the old values; on
the CPU, one fused kernel writes into ``c``'s memory), after NumPy's checks: the output's
shape must be the broadcast shape exactly, its dtype reachable under ``casting=``
(``"same_kind"`` by default), with NumPy's exception types and messages. It returns ``c``
itself. ``where=mask`` writes ``where(mask, add(a, b), c)``; without ``out=``, NumPy's result
is uninitialized where ``mask`` is False (and NumPy warns so unless ``out=None`` is given):
here it holds the op's value there (both values are "unspecified"). An ``out=`` that is not a
LazyArray (a NumPy array) stays NumPy's own call (``_array_methods._with_keywords``).

NumPy's loop skips the elements ``where=`` leaves out, so they raise no floating-point
error: an op that can raise one (``fp_checks.RAISING``) reads 1 there instead of its operands
(:func:`_quiet`: ``where(mask, a, 1)``, fused into the same kernel).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import _build, _devices, _node, _views
from ._node import Node
from ._registry import OPS, OpDef
from ._shapes import broadcast_shapes
from ._stack import user_stacklevel
from .backends.cuda.fp_checks import RAISING

#: the keywords this path takes (the others make the call NumPy's own)
KEYWORDS = frozenset({"out", "where", "dtype", "signature", "casting"})


def takes(given: dict[str, Any], cls: Any) -> bool:
    """Whether this path runs the call: only its keywords, a LazyArray output (or none) and a
    boolean ``where=`` (a Python bool, or an array of bools)."""
    if not given.keys() <= KEYWORDS or output_of(given, cls) is NotImplemented:
        return False
    where = given.get("where", True)
    return isinstance(where, bool) or getattr(where, "dtype", None) == np.dtype(bool)


def output_of(given: dict[str, Any], cls: Any) -> Any:
    """The LazyArray that ``out=`` names (itself or a tuple of one), None for no output, or
    NotImplemented when it is something else (a NumPy array: NumPy's own call writes it)."""
    out = given.get("out")
    if isinstance(out, tuple):
        if len(out) != 1:
            return NotImplemented
        out = out[0]
    if out is None or isinstance(out, cls):
        return out
    return NotImplemented


def _shape_text(shape: tuple[int, ...]) -> str:
    """A shape as NumPy's broadcasting messages write it: ``(2,3)``, ``(3,)``, ``()``."""
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    try:
        return broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(map(_shape_text, shapes)) + " ") from None


def call(opdef: OpDef, cls: Any, nodes: tuple[Any, ...], given: dict[str, Any], out: Any,
         out_given: bool, signature: Any) -> Any:
    """``la.<ufunc>(*nodes, out=, where=, dtype=, signature=, casting=)`` (``given``: the
    keywords not at their default; ``out``: :func:`output_of`'s LazyArray or None;
    ``out_given``: whether the call named ``out=`` at all)."""
    casting = given.get("casting", "same_kind")

    def op(*operands: Any) -> Any:
        return cls._from_node(_build.elementwise_typed(opdef, operands, signature, casting)
                              if signature is not None or "casting" in given
                              else _build.elementwise(opdef, *operands))
    where = given.get("where", True)
    mask = None if where is True else where if isinstance(where, cls) else \
        _on_device(cls, np.asarray(where), _device_of(nodes, out))
    shapes = [_shape_of(n) for n in nodes]
    shapes += [out.shape] if out is not None else []
    shapes += [mask.shape] if mask is not None else []
    try:
        shape = _broadcast(shapes)
    except ValueError:
        # NumPy resolves the loop and the output's cast before it broadcasts: with both
        # wrong, its error is the dtypes' (resolved here on 0-d stand-ins of the operands)
        standins = [_node.leaf(np.zeros((), n.dtype), "cpu") if isinstance(n, Node) else n
                    for n in nodes]
        _check_cast(opdef, op(*standins).dtype, out, casting)
        raise
    quiet = mask is not None and opdef.name in RAISING
    value = op(*(_quiet(opdef, n, mask) for n in nodes) if quiet else nodes)
    if out is None:
        if mask is not None and not out_given:
            warnings.warn("'where' used without 'out', expect unitialized memory in output. If "
                          "this is intentional, use out=None.", UserWarning, stacklevel=user_stacklevel())
        return value if value.shape == shape else _broadcast_to(value, shape)
    _check_cast(opdef, value.dtype, out, casting)    # (NumPy's: before the output's shape)
    if shape != out.shape:
        raise ValueError(f"non-broadcastable output operand with shape {_shape_text(out.shape)} "
                         f"doesn't match the broadcast shape {_shape_text(shape)}")
    out[...] = value if mask is None else cls._from_node(
        _build.elementwise(OPS["where"], mask._node, value._node, out._node))
    return out


def _check_cast(opdef: OpDef, dtype: np.dtype, out: Any, casting: str) -> None:
    """NumPy's ``UFuncTypeError`` when the result's ``dtype`` may not be cast to ``out``'s."""
    if out is not None and not np.can_cast(dtype, out.dtype, casting):
        from numpy._core._exceptions import _UFuncOutputCastingError
        raise _UFuncOutputCastingError(opdef.numpy, casting, dtype, out.dtype, 0)


def quiet_constant(op: str) -> int:
    """The operand value with which ``op`` raises no floating-point error: 1 (``arctanh``: 0).
    Lanes NumPy's loop does not compute (``where=``, a masked update's False lanes) read it."""
    return 0 if op == "arctanh" else 1


def _quiet(opdef: OpDef, node: Any, mask: Any) -> Any:
    """An array operand of an op that can raise a floating-point error, with a value that
    raises none where ``mask`` is False (NumPy's loop does not compute those elements: no
    warning of theirs): :func:`quiet_constant`. Its values where True are the operand's."""
    if not isinstance(node, Node) or node.dtype.kind not in "iufc":
        return node
    return _build.elementwise(OPS["where"], mask._node, node, quiet_constant(opdef.name))


def _device_of(nodes: tuple[Any, ...], out: Any) -> str | None:
    """Where a ``where=`` given as NumPy data goes: the output's device, or an operand's."""
    if out is not None:
        return out.device        # type: ignore[no-any-return]
    return next((n.device for n in nodes if isinstance(n, Node) and n.device), None)


def _shape_of(n: Any) -> tuple[int, ...]:
    shape = getattr(n, "shape", None)
    return tuple(shape) if shape is not None else np.shape(n)


def _broadcast_to(value: Any, shape: tuple[int, ...]) -> Any:
    """``la.broadcast_to(value, shape)`` of a LazyArray (the view; this module is below
    lazyarr._functions in the import order)."""
    return _views.view(value, lambda d: np.broadcast_to(d, shape))


def _on_device(cls: Any, a: np.ndarray, device: str | None) -> Any:
    """The NumPy array ``a`` as a computed LazyArray on ``device`` (None: the configured one)."""
    device = _devices.resolve(device)
    return cls._from_node(_node.leaf(_devices.asarray(device, a), device))
