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

One difference from NumPy: the op is computed for every element, so a floating-point error
of an element ``where=`` leaves out is reported too (NumPy's loop skips those elements).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import _build
from ._registry import OPS, OpDef
from ._shapes import broadcast_shapes
from ._stack import user_stacklevel

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
    node = _build.elementwise_typed(opdef, nodes, signature, casting) \
        if signature is not None or "casting" in given else _build.elementwise(opdef, *nodes)
    value = cls._from_node(node)
    where = given.get("where", True)
    mask = None if where is True else where if isinstance(where, cls) else \
        _asarray(np.asarray(where), device=value.device)
    shapes = [_shape_of(n) for n in nodes]
    shapes += [out.shape] if out is not None else []
    shapes += [mask.shape] if mask is not None else []
    shape = _broadcast(shapes)
    if out is None:
        if mask is not None and not out_given:
            warnings.warn("'where' used without 'out', expect unitialized memory in output. If "
                          "this is intentional, use out=None.", UserWarning, stacklevel=user_stacklevel())
        return value if value.shape == shape else _broadcast_to(value, shape)
    if shape != out.shape:
        raise ValueError(f"non-broadcastable output operand with shape {_shape_text(out.shape)} "
                         f"doesn't match the broadcast shape {_shape_text(shape)}")
    if not np.can_cast(value.dtype, out.dtype, casting):
        from numpy._core._exceptions import _UFuncOutputCastingError
        raise _UFuncOutputCastingError(opdef.numpy, casting, value.dtype, out.dtype, 0)
    out[...] = value if mask is None else cls._from_node(
        _build.elementwise(OPS["where"], mask._node, value._node, out._node))
    return out


def _shape_of(n: Any) -> tuple[int, ...]:
    shape = getattr(n, "shape", None)
    return tuple(shape) if shape is not None else np.shape(n)


def _broadcast_to(value: Any, shape: tuple[int, ...]) -> Any:
    from ._functions._manipulation import broadcast_to
    return broadcast_to(value, shape)


def _asarray(a: Any, device: str) -> Any:
    from ._functions._creation import asarray
    return asarray(a, device=device)
