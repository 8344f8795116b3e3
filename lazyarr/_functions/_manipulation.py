"""Manipulation functions: those that are views in NumPy, native and lazy (transposes, axis
moves, flips, ``expand_dims``/``squeeze``, ``broadcast_to``); and ``reshape``/``ravel``.

Each is a *view function* handed to :func:`lazyarr._views.view`: of a computed array it is
NumPy's (CuPy's) view of the memory; of a pending expression it is pushed down to the inputs
and fuses. ``reshape`` is a view only where NumPy's is (its strides allow it); of a pending
expression it computes the expression first, then reshapes the memory (NumPy's view of a
fresh contiguous array). NumPy does the argument checks (on a zero-stride stand-in of the
shape), so errors are NumPy's, at the line that wrote the call. The ndarray method forms
(``x.reshape(2, 3)``, ``x.T``) are LazyArray's (lazyarr/_array.py); they call these.
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _devices, _fallback, _node, _views
from .._array import LazyArray
from ._creation import asarray


def _view(x: Any, fn: Callable[[Any], Any]) -> LazyArray:
    if type(x) is LazyArray:
        view = _views.owned_view(x, fn)     # (a computed CPU array: NumPy's view at once)
        if view is not None:
            return view  # type: ignore[no-any-return]
    return _views.view(asarray(x), fn)  # type: ignore[no-any-return]


def transpose(a: Any, axes: Any = None) -> LazyArray:
    """Permute the axes (reverse them by default), as ``numpy.transpose``: a view."""
    return _view(a, lambda d: d.transpose(axes))


def permute_dims(a: Any, axes: Any) -> LazyArray:
    """The array API's ``transpose`` with required ``axes``: a view."""
    return _view(a, lambda d: d.transpose(axes))


def matrix_transpose(x: Any) -> LazyArray:
    """Swap the last two axes (a stack of matrices transposed), as ``numpy.matrix_transpose``."""
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return _views.view(x, lambda d: d.swapaxes(-1, -2))  # type: ignore[no-any-return]


def swapaxes(a: Any, axis1: int, axis2: int) -> LazyArray:
    """Interchange two axes, as ``numpy.swapaxes``: a view."""
    return _view(a, lambda d: d.swapaxes(axis1, axis2))


def moveaxis(a: Any, source: Any, destination: Any) -> LazyArray:
    """Move axes to new positions, the others keeping their order, as ``numpy.moveaxis``."""
    return _view(a, lambda d: np.moveaxis(d, source, destination))


def expand_dims(a: Any, axis: Any) -> LazyArray:
    """Insert length-1 axes at ``axis`` (an int or a tuple), as ``numpy.expand_dims``."""
    return _view(a, lambda d: np.expand_dims(d, axis))


def squeeze(a: Any, axis: Any = None) -> LazyArray:
    """Remove length-1 axes (all of them, or those in ``axis``), as ``numpy.squeeze``."""
    return _view(a, lambda d: d.squeeze(axis))


def flip(m: Any, axis: Any = None) -> LazyArray:
    """Reverse the order of elements along ``axis`` (all axes by default): a view with negative
    strides, as ``numpy.flip``."""
    return _view(m, lambda d: np.flip(d, axis))


def fliplr(m: Any) -> LazyArray:
    """Reverse the columns (axis 1), as ``numpy.fliplr``."""
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return _views.view(m, lambda d: d[:, ::-1])  # type: ignore[no-any-return]


def flipud(m: Any) -> LazyArray:
    """Reverse the rows (axis 0), as ``numpy.flipud``."""
    m = asarray(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return _views.view(m, lambda d: d[::-1, ...])  # type: ignore[no-any-return]


def broadcast_to(array: Any, shape: Any) -> LazyArray:
    """``array`` broadcast to ``shape``: a read-only view (writing it is a ``ValueError``), as
    ``numpy.broadcast_to``."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return _view(array, lambda d: _xp_broadcast_to(d, shape))


def broadcast_arrays(*args: Any) -> tuple[LazyArray, ...]:
    """The arrays broadcast against each other, as ``numpy.broadcast_arrays`` (a tuple): an
    array of the broadcast shape already is itself, as NumPy's; the others read-only views
    (NumPy's may be written, with a DeprecationWarning, and will not be)."""
    arrays = [asarray(a) for a in args]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    return tuple(a if a.shape == shape else broadcast_to(a, shape) for a in arrays)


def _xp_broadcast_to(d: Any, shape: tuple[int, ...]) -> Any:
    # (read-only even to its own shape, as NumPy's; CuPy's view is marked so)
    return _devices.mark_read_only(np.broadcast_to(d, shape))


def reshape(a: Any, shape: Any = None, order: str = "C", *,
            copy: bool | None = None) -> LazyArray:
    """A new shape for the same elements, as ``numpy.reshape``: a view of the memory where
    NumPy gives one (always for a pending array, which is computed first), else a copy, in
    any ``order``; ``copy=`` as NumPy's (``False``: NumPy's error where a copy is needed).
    NumPy 2.4's signature: ``newshape=`` (removed there) is a TypeError."""
    if shape is None:
        raise TypeError("reshape() missing 1 required positional argument: 'shape'")
    x = asarray(a)
    fn = operator.methodcaller("reshape", shape, order=order)
    if copy is None:
        memory = _views.owned_memory(x)
        if memory is not None:              # (NumPy's errors from its own reshape)
            return LazyArray._from_node(_node.leaf(fn(memory), "cpu"))
    _views.shape_of(x.shape, fn)            # NumPy's errors first
    if copy is not None:
        if x.device != "cpu":               # (CuPy's reshape takes no copy=)
            return _fallback.call("reshape", np.reshape, (x, shape),  # type: ignore[no-any-return]
                                  {"order": order, "copy": copy})
        fn = operator.methodcaller("reshape", shape, order=order, copy=copy)
    return LazyArray._from_node(_node_of(x, fn))


def ravel(a: Any, order: str = "C") -> LazyArray:
    """The elements as a 1-D array, as ``numpy.ravel``: a view of the memory where NumPy's
    ravel gives one (for ``order="C"``: a C-contiguous array), else a copy."""
    x = asarray(a)
    fn = operator.methodcaller("ravel", order)
    memory = _views.owned_memory(x)
    if memory is not None:                  # (NumPy's errors from its own ravel)
        return LazyArray._from_node(_node.leaf(fn(memory), "cpu"))
    _views.shape_of(x.shape, fn)
    return LazyArray._from_node(_node_of(x, fn))


def _node_of(x: LazyArray, fn: Callable[[Any], Any]) -> Any:
    """``fn`` (a reshape) of ``x``'s memory: a view where the strides allow, else a copy."""
    _views.anchor(x)
    return _node.leaf(fn(_views.claim(x)), x.device)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (transpose, permute_dims, matrix_transpose, swapaxes, moveaxis,
                            expand_dims, squeeze, flip, fliplr, flipud, broadcast_to,
                            broadcast_arrays, reshape, ravel)
}

#: NumPy function -> ours, for ``__array_function__`` (NumPy's own names only: its aliases,
#: ``np.permute_dims is np.transpose``, map to the function of that name).
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {
    getattr(np, name): fn for name, fn in FUNCTIONS.items()
    if getattr(getattr(np, name, None), "__name__", None) == name
}
