"""Elementwise functions: one per elementwise op of the registry (generated), and ``where``,
``clip``, ``astype``, ``real``, ``imag``, ``angle``.

``conj``, ``clip``, ``astype``, ``real`` and ``imag`` are also array methods: they are defined
by the array layer (lazyarr/_array.py) and exported here as they are.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._array import LazyArray, astype, clip, imag, real
from .._array_methods import elementwise_function
from .._build import complex_part, elementwise
from .._operands import operands_of
from .._registry import ELEMENTWISE, OPS

_wrap = LazyArray._from_node


def where(condition: Any, x1: Any, x2: Any) -> LazyArray:
    """Choose ``x1`` where ``condition`` is true, else ``x2`` (``numpy.where`` with 3 arguments)."""
    return _wrap(elementwise(OPS["where"], *[a._node if isinstance(a, LazyArray) else a
                                             for a in (condition, x1, x2)]))


def angle(z: Any, deg: bool = False) -> LazyArray:
    """The counterclockwise angle from the positive real axis (``numpy.angle``):
    ``arctan2(imag, real)``, in degrees with ``deg=True``."""
    node = z._node if isinstance(z, LazyArray) else operands_of((z,))[0]
    if node.dtype.kind == "c":  # type: ignore[union-attr]
        a = elementwise(OPS["arctan2"], complex_part("imag", node), complex_part("real", node))
    else:
        a = elementwise(OPS["arctan2"], 0, node)
    if deg:
        a = elementwise(OPS["multiply"], a, 180 / np.pi)
    return _wrap(a)


_SPECIAL = {"where": where, "clip": clip, "real": real, "imag": imag,
            "conj": LazyArray.conj}  # type: ignore[attr-defined]  # (generated)

FUNCTIONS: dict[str, Callable[..., Any]] = {
    op.name: _SPECIAL.get(op.name) or elementwise_function(op, LazyArray) for op in ELEMENTWISE
}
FUNCTIONS.update(astype=astype, angle=angle)

#: NumPy function -> ours, for ``__array_function__`` (the ufuncs go through
#: ``__array_ufunc__``).
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {
    np.where: where, np.clip: clip, np.real: real, np.imag: imag, np.angle: angle}
