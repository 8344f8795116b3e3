"""NumPy's ``mean``/``var``/``std`` with a ``dtype=``, step by step on any array module.

NumPy computes these in ``numpy/_core/_methods.py`` (``_mean``, ``_var``) from ufunc calls: the
sums in the requested dtype (wrapped, for integers), ``true_divide`` cast back unsafely into it.
CuPy departs from that when ``dtype=`` is given (seen on the H200 with CuPy 14.2): ``var``
returns float64 for an integer dtype, ``mean(dtype=uint64)`` of negative int8 values gives 0,
and ``var(int8 data, dtype=float32)`` is 1.5e-4 away from NumPy's; ``var`` of a slice with
no degrees of freedom (``ddof >= n``) is NaN where NumPy divides by zero (inf unless the
squares sum to 0; seen on an H100). So on the cuda device these run as NumPy's steps with
CuPy. Written against the array-module API: CI checks it with NumPy.
"""
from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np


def needs_numpy_steps(op: str, dtype: Any) -> bool:
    """True where CuPy's own reduction departs from NumPy's: var/std with any ``dtype=``, mean
    with an integer or bool one (CuPy's float mean matches NumPy's within rounding). (And
    var/std of slices with no degrees of freedom, known from the shape: ``reference._reduce``.)"""
    if dtype is None:
        return False
    return op in ("var", "std") or op == "mean" and dtype.kind not in "fc"


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
    if dtype is None and a.dtype.kind in "biu":
        dtype = np.dtype(np.float64)        # (NumPy's _var: bool and integers in float64)
    centre = _divided(xp, xp.asarray(xp.sum(a, axis=axes, dtype=dtype, keepdims=True)), n)
    x = xp.asarray(a - centre)
    x = xp.multiply(x, x, out=x)
    total = xp.asarray(xp.sum(x, axis=axes, dtype=dtype, keepdims=keepdims))
    return _divided(xp, total, max(n - ddof, 0))


def std(xp: ModuleType, a: Any, axes: tuple[int, ...] | None, keepdims: bool, dtype: Any,
        ddof: int) -> Any:
    """For an integer dtype only a 0-d result gets here (NumPy's ``sqrt(out=)`` into an integer
    array raises, and lazyarr raises that when the expression is built): converted back."""
    v = var(xp, a, axes, keepdims, dtype, ddof)
    return xp.sqrt(v).astype(v.dtype)
