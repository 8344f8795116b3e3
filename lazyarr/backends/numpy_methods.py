"""NumPy's ``mean``/``var`` with an integer or bool ``dtype=``, step by step on any array module.

NumPy computes these in ``numpy/_core/_methods.py`` (``_mean``, ``_var``) from ufunc calls: the
sum wrapped in the requested dtype, then ``true_divide`` in float64 cast back unsafely into it.
CuPy's ``mean``/``var`` do not follow that for integer dtypes (``var`` returns float64,
``mean(dtype=uint64)`` of negative int8 values gives 0), so on the cuda device the same steps
are run with CuPy. Written against the array-module API, so CI checks it with NumPy itself.
"""
from __future__ import annotations

import math
from types import ModuleType
from typing import Any


def needs_numpy_steps(op: str, dtype: Any) -> bool:
    """True where CuPy's own reduction departs from NumPy's: mean/var/std with dtype= int/bool."""
    return op in ("mean", "var", "std") and dtype is not None and dtype.kind not in "fc"


def _count(a: Any, axes: tuple[int, ...] | None) -> int:
    return a.size if axes is None else math.prod(a.shape[j] for j in axes)


def _divided(xp: ModuleType, total: Any, count: int) -> Any:
    """``total / count`` stored back into ``total``'s dtype, as NumPy's ``true_divide(..., out=,
    casting='unsafe')`` (``total`` is always an array here: CuPy returns 0-d arrays)."""
    return xp.true_divide(total, count, out=total, casting="unsafe")


def mean(xp: ModuleType, a: Any, axes: tuple[int, ...] | None, keepdims: bool, dtype: Any) -> Any:
    total = xp.asarray(xp.sum(a, axis=axes, dtype=dtype, keepdims=keepdims))
    return _divided(xp, total, _count(a, axes))


def var(xp: ModuleType, a: Any, axes: tuple[int, ...] | None, keepdims: bool, dtype: Any,
        ddof: int) -> Any:
    n = _count(a, axes)
    centre = _divided(xp, xp.asarray(xp.sum(a, axis=axes, dtype=dtype, keepdims=True)), n)
    x = xp.asarray(a - centre)
    x = xp.multiply(x, x, out=x)
    total = xp.asarray(xp.sum(x, axis=axes, dtype=dtype, keepdims=keepdims))
    return _divided(xp, total, max(n - ddof, 0))


def std(xp: ModuleType, a: Any, axes: tuple[int, ...] | None, keepdims: bool, dtype: Any,
        ddof: int) -> Any:
    """Only reached for a 0-d result: NumPy's ``sqrt(out=)`` into an integer array raises, and
    lazyarr raises that when the expression is built; a scalar is converted back instead."""
    v = var(xp, a, axes, keepdims, dtype, ddof)
    return xp.sqrt(v).astype(v.dtype)
