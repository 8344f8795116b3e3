"""Running one program again and again on new buffers (``la.jit``'s replay, lazyarr/_jit.py).

A backend may offer ``bind(lowered)``: a function of the input buffers that runs ``lowered``'s
program with its scalars on buffers like ``lowered``'s (the same dtypes, shapes and strides),
with the set-up that depends on those done once. :func:`bound` falls back to ``run``.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._program import Lowered


def run_on(backend: Any, lowered: Lowered, buffers: list[Any]) -> Any:
    """``backend.run`` of ``lowered``'s program and scalars on other input buffers."""
    return backend.run(lowered._replace(inputs=buffers))


def bound(backend: Any, lowered: Lowered, checked: bool = False) -> Callable[[list[Any]], Any]:
    """``backend``'s runner of ``lowered``'s program on buffers like ``lowered``'s.
    ``checked``: the caller passes only NumPy arrays of the dtypes and alignment of
    ``lowered``'s inputs (a backend may then skip its checks of them)."""
    bind = getattr(backend, "bind", None)
    if bind is None:
        return unbound(backend, lowered)
    return bind(lowered, checked=checked)


def unbound(backend: Any, lowered: Lowered) -> Callable[[list[Any]], Any]:
    """:func:`run_on` of ``lowered``'s program, holding none of its input buffers."""
    return functools.partial(run_on, backend, lowered._replace(inputs=[]))
