"""NumPy functions that CuPy lacks, or has with another signature or result type, written with
the array module's own functions, for the fallback on cuda arrays (lazyarr/_fallback.py).

Each entry of :data:`FUNCTIONS` maps a NumPy path (``"linalg.trace"``) to ``f(xp, *args,
**kwargs)``, which computes NumPy's result with the functions of the array module ``xp``
(CuPy on cuda). They are written against ``xp`` and tested with ``xp = numpy`` against NumPy's
own functions (tests/test_cupy_gaps.py), so CI checks their semantics without a GPU; the array
API conformance suite with ``device="cuda"`` checks them on the GPU. Found missing on the
H200 (CuPy 14.2) by that suite: the array API ``linalg`` names (``trace``, ``diagonal``,
``tensordot``, ``vecdot``, ``vector_norm``, ``matrix_norm``, ``svdvals``, ``cross``),
``cholesky(upper=)``, ``unstack``, and the named-tuple results of ``slogdet``/``svd``/``eigh``;
in the next run, ``linalg.outer``, ``pinv(rtol=)`` and ``qr``'s named tuple; then
``matrix_rank(rtol=)`` (2026-12-03, with the conformance suite's files on the device).
(``count_nonzero`` is lazyarr's own now: lazyarr/_functions/_nanfunctions.py; so are
``linalg``'s decompositions and solvers, NumPy's on cuda too: lazyarr/_functions/
_decompositions.py.)
"""
from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from . import _devices
from ._shapes import broadcast_shapes


def trace(xp: ModuleType, x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """``numpy.linalg.trace``: over the last two axes."""
    return xp.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(xp: ModuleType, x: Any, /, *, offset: int = 0) -> Any:
    """``numpy.linalg.diagonal``: over the last two axes."""
    return xp.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def tensordot(xp: ModuleType, x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    return xp.tensordot(x1, x2, axes=axes)


def vecdot(xp: ModuleType, x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """``numpy.vecdot``: sum over ``axis`` of ``conj(x1) * x2``, in the dtype of the product
    (a gufunc: no widening of small integers, bool is "any of and")."""
    x1, x2 = xp.moveaxis(x1, axis, -1), xp.moveaxis(x2, axis, -1)
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"vecdot: the contracted axes differ in length ({x1.shape[-1]} and "
                         f"{x2.shape[-1]})")
    product = xp.conj(x1) * x2 if xp.iscomplexobj(x1) else x1 * x2
    return xp.sum(product, axis=-1, dtype=product.dtype)


def cross(xp: ModuleType, x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """``numpy.linalg.cross``: 3-vectors along ``axis``, the other axes broadcast."""
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they are {x1.shape[axis]} and {x2.shape[axis]} dimensional instead.")
    x1, x2 = xp.moveaxis(x1, axis, -1), xp.moveaxis(x2, axis, -1)
    shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    out = xp.cross(xp.broadcast_to(x1, shape), xp.broadcast_to(x2, shape))
    return xp.moveaxis(out, -1, axis)


def _inexact(xp: ModuleType, x: Any) -> Any:
    """NumPy's norms compute in floating point: integers and bool as float64."""
    return x if xp.issubdtype(x.dtype, xp.inexact) else x.astype(np.float64)


def vector_norm(xp: ModuleType, x: Any, /, *, axis: Any = None, keepdims: bool = False,
                ord: Any = 2) -> Any:
    """``numpy.linalg.vector_norm``, step for step as NumPy 2.4 computes it
    (numpy/linalg/_linalg.py: the reduced axes moved to the front and flattened into one, then
    ``norm``'s reduction for ``ord`` along it), so the float sums round as NumPy's do."""
    shape = x.shape
    if axis is None:
        x, reduced = xp.reshape(x, (-1,)), tuple(range(len(shape)))
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        reduced = tuple(a % len(shape) for a in axes)
        rest = tuple(i for i in range(len(shape)) if i not in reduced)
        x = xp.reshape(xp.transpose(x, reduced + rest),
                       (math.prod(shape[i] for i in reduced), *(shape[i] for i in rest)))
    result = _norm_along_0(xp, _inexact(xp, x), ord)
    if keepdims:
        result = xp.reshape(result, tuple(1 if i in reduced else n for i, n in enumerate(shape)))
    return result


def _norm_along_0(xp: ModuleType, x: Any, ord: Any) -> Any:
    """``numpy.linalg.norm(x, axis=0, ord=ord)`` for a vector norm."""
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord == math.inf:          # NumPy's max(initial=0): an empty axis has norm 0
        a = xp.abs(x)
        return xp.max(a, axis=0) if x.shape[0] else xp.zeros(x.shape[1:], a.dtype)
    if ord == -math.inf:
        return xp.min(xp.abs(x), axis=0)
    if ord == 0:
        return xp.sum((x != 0).astype(x.real.dtype), axis=0)
    if ord == 1:
        return xp.sum(xp.abs(x), axis=0)
    if ord is None or ord == 2:
        return xp.sqrt(xp.sum((xp.conj(x) * x).real, axis=0))
    total = xp.sum(xp.abs(x) ** ord, axis=0)
    return total ** xp.reciprocal(xp.asarray(ord, dtype=total.dtype))


def matrix_norm(xp: ModuleType, x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    """``numpy.linalg.matrix_norm``: over the last two axes."""
    return xp.linalg.norm(_inexact(xp, x), ord=ord, axis=(-2, -1), keepdims=keepdims)


def outer(xp: ModuleType, x1: Any, x2: Any, /) -> Any:
    """``numpy.linalg.outer``: 1-D operands only (``numpy.outer`` flattens)."""
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError("Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} and x2.ndim={x2.ndim}.")
    return xp.outer(x1, x2)


def unstack(xp: ModuleType, x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    return tuple(xp.moveaxis(x, axis, 0))


#: NumPy's reduction parameters that CuPy's reductions lack (CuPy 14: ``where=``, ``initial=``,
#: and NumPy 2's ``mean=`` of ``std``/``var``; found by the H200 suite, 2026-12-05)
_HOST_KEYWORDS = ("where", "initial", "mean")


def _on_host_with(name: str) -> Callable[..., Any]:
    """``xp.<name>``, except that a call with a parameter CuPy's reduction lacks runs NumPy's
    ``numpy.<name>`` on host copies of the arrays, its result copied back (an ``out=`` array
    written): NumPy's values and rules exactly, at the cost of the copies (such calls are
    rare: docs/gpu-backend.rst, "What runs on the host")."""
    def call(xp: ModuleType, *args: Any, **kwargs: Any) -> Any:
        if not any(k in kwargs for k in _HOST_KEYWORDS):
            return getattr(xp, name)(*args, **kwargs)
        to_host = getattr(xp, "asnumpy", np.asarray)

        def host(v: Any) -> Any:
            return to_host(v) if isinstance(v, xp.ndarray) else v
        out = kwargs.pop("out", None)
        result = getattr(np, name)(*map(host, args), **{k: host(v) for k, v in kwargs.items()})
        result = _devices.from_host(xp, np.asarray(result))   # (a 0-d -0.0 stays -0.0)
        if out is None:
            return result
        out[...] = result
        return out
    call.__name__ = name
    return call


#: NumPy path -> ``f(xp, *args, **kwargs)``
FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{name: _on_host_with(name) for name in ("sum", "prod", "max", "min", "amax", "amin",
                                              "mean", "std", "var", "any", "all")},
    "linalg.trace": trace,
    "linalg.diagonal": diagonal, "linalg.tensordot": tensordot, "linalg.vecdot": vecdot,
    "vecdot": vecdot, "linalg.cross": cross, "linalg.vector_norm": vector_norm,
    "linalg.matrix_norm": matrix_norm, "unstack": unstack, "linalg.outer": outer,
}
