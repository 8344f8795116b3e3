"""Broadcasting of shapes, for any number of dimensions NumPy arrays may have (64).

``np.broadcast_shapes`` goes through ``np.broadcast``, which stops at 32 dimensions
("this function only supports up to 32 dimensions"); NumPy 2 arrays and ufuncs take 64.
Up to 32 dimensions NumPy's own function answers (its error message names the shapes);
beyond, the same rule and the same message, here.

The result is cached (the same shapes meet again at every call of a cached expression): this
is the one cached ``broadcast_shapes`` of the package; the shapes must be tuples.
"""
from __future__ import annotations

import functools

import numpy as np

_NP_LIMIT = 32


@functools.lru_cache(maxsize=4096)
def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    if shapes and shapes.count(shapes[0]) == len(shapes):
        # one shape, or all equal: itself (NumPy's function costs ~3 µs, and a loop whose
        # shapes change every step misses the cache at every step)
        return shapes[0]
    if not shapes or max(map(len, shapes)) <= _NP_LIMIT:
        return tuple(np.broadcast_shapes(*shapes))
    ndim = max(map(len, shapes))
    out = [1] * ndim
    owner = [0] * ndim          # which shape set each dimension (for the message)
    for k, shape in enumerate(shapes):
        for i, n in enumerate(shape, ndim - len(shape)):
            if n == 1 or out[i] == n:
                continue
            if out[i] != 1:
                raise ValueError(
                    "shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                    f"between arg {owner[i]} with shape {shapes[owner[i]]} and arg {k} with shape "
                    f"{shape}.")
            out[i], owner[i] = n, k
    return tuple(out)


def order_of(order: object, default: str) -> str:
    """NumPy's reading of an ``order=`` argument (``PyArray_OrderConverter``): None is the
    function's ``default``; one letter of C, F, A, K in either case; another string a
    ``ValueError``, anything else a ``TypeError``."""
    if order is None:
        return default
    if not isinstance(order, str):
        raise TypeError(f"order must be str, not {type(order).__name__}")
    if len(order) == 1 and order.upper() in "CFAK":
        return order.upper()
    raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
