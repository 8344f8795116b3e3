"""NumPy's own exception for operands a lazyarr function refuses, asked of NumPy itself on
zero-stride stand-ins of the operands (their dtype and shape, one element of memory): the
type and message are NumPy's on every device, and nothing is computed (a pending operand
stays pending). Used where NumPy's message comes from deep in its call (a gufunc's core
dimensions, broadcasting, ``einsum``'s subscripts)."""
from __future__ import annotations

from typing import Any

import numpy as np


def standin(x: Any, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A zero-stride, read-only NumPy array of ``x``'s dtype and shape (or ``shape``)."""
    return np.broadcast_to(np.zeros((), x.dtype), x.shape if shape is None else shape)


def raise_as_numpy(func: Any, *arrays: Any, **kwargs: Any) -> None:
    """Raise what NumPy's ``func`` raises for operands of these shapes and dtypes: called
    where lazyarr knows they are refused."""
    func(*(standin(a) for a in arrays), **kwargs)
    raise ValueError(f"{getattr(func, '__name__', func)}: operands of shapes "   # pragma: no cover
                     f"{', '.join(str(a.shape) for a in arrays)} do not fit")
