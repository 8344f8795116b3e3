"""lazyarr's two numeric rules for reductions in lazy mode (docs/testing.rst, "Reductions").

* **Accumulation.** ``sum``, ``prod``, ``mean``, ``var`` and ``std`` whose loop dtype is a
  float (NumPy's: the ``dtype=`` argument, else the result dtype for sum/prod, the input's
  float dtype or float64 for mean/var/std) cast each element to the loop dtype, accumulate in
  float64 and round the float64 result once to the result dtype (``mean``: the float64 sum
  divided by the count; ``std``: the square root of the float64 variance). NumPy accumulates
  float16/float32 in the loop dtype, so its answer depends on where an overflow happens:
  ``sum([3e38, 3e38, -3e38], float32)`` is inf in NumPy and 3e38 here. A complex loop dtype
  accumulates in complex128 (each part in float64) the same way.
* **Signed zeros of min/max.** IEEE 754-2019 ``maximum``/``minimum``: NaN wins, and
  ``+0 > -0`` whatever the order (``max([-0., 0.])`` is 0.0, ``min`` -0.0). NumPy's own sign
  depends on the array length (its SIMD remainder).

The fused backends implement the rules in their kernels; :func:`reduce` implements them with
NumPy (or CuPy) calls, for the reference backend running a lazy program and for the reductions
the cuda backend hands to CuPy. Eager mode is NumPy's (CuPy's) own and follows neither rule.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import fp_errors, numpy_methods

__all__ = ["ACCUMULATING", "loop_dtype", "reduce"]

#: reductions whose float results follow the accumulation rule
ACCUMULATING = frozenset({"sum", "prod", "mean", "var", "std"})
_F64, _C128 = np.dtype(np.float64), np.dtype(np.complex128)


def loop_dtype(op: str, operand: np.dtype, result: np.dtype, dtype_arg: Any) -> np.dtype:
    """The dtype NumPy casts each element to before accumulating (for ACCUMULATING ops)."""
    if dtype_arg is not None:
        return np.dtype(dtype_arg)
    if op in ("sum", "prod"):
        return result
    if operand.kind in "biu":
        return _F64
    if operand.itemsize < 4 and op == "mean":   # NumPy's mean (not var) of float16 uses float32
        return np.dtype(np.float32)
    return operand


#: the largest finite value of each float dtype a wide accumulation is rounded to
FLOAT_MAX = {np.dtype(t): float(np.finfo(t).max) for t in (np.float16, np.float32)}


def rounded_once(val: np.ndarray, result: np.dtype) -> np.ndarray:
    """The float64 (complex128) results ``val`` rounded once to ``result`` (float16/float32,
    complex64). One that becomes inf is NumPy's overflow in its reduction (NumPy accumulates
    in ``result``): reported as "overflow encountered in reduce", as NumPy's is, at the user's
    line (the VM's reductions and the reference backend's, :func:`reduce`)."""
    if result.kind == "c":            # part by part
        parts = np.stack([val.real, val.imag])
        out = np.empty(val.shape, result)
        out.real, out.imag = rounded_once(parts, np.dtype(result.char.lower()))
        return out
    if val.size == 1 and not abs(val.item()) > FLOAT_MAX[result]:   # (NaN: False, no overflow)
        return val.astype(result, copy=False)
    with np.errstate(over="ignore"):
        out = val.astype(result)
    # an overflow shows in the rounded values (an inf from a finite value; one just above max
    # rounds down to it): one pass over the narrow result, and one over ``val`` only where an
    # inf is (abs(val) > max and its two temporaries were ~6 % of the column sums of
    # (512, 32, 1024) float32)
    inf = np.isinf(out)
    if bool(inf.any()) and bool((inf & np.isfinite(val)).any()):
        fp_errors.report([(fp_errors.OVERFLOW, "reduce")])
    return out


def _var_steps(xp: ModuleType, op: str, x: Any, kw: dict[str, Any]) -> Any:
    """``var``/``std`` of the float64 values ``x`` as NumPy's own steps (``numpy_methods``:
    a sum, the deviations, their squares, a sum; ``numpy/_core/_methods.py``'s ``_var``), on any
    array module; None where another keyword is given, or with NumPy where a slice has no
    degrees of freedom (``np.var`` itself then). With NumPy these are ``np.var``'s own calls
    (the same bits); with CuPy they replace its ``var`` kernel, whose full reduction of 2^26
    values took 50 ms on an H100 where a sum takes 0.1 (docs/notes/gpu.rst, 2026-12-06)."""
    if not kw.keys() <= {"axis", "keepdims", "ddof"}:
        return None
    axis = kw.get("axis")
    axes = None if axis is None else normalize_axis_tuple(axis, x.ndim)
    n = x.size if axes is None else int(np.prod([x.shape[j] for j in axes]))
    ddof = kw.get("ddof", 0) or 0
    if n - ddof <= 0 and xp is np:
        return None     # (CuPy's var gives NaN there where NumPy divides by zero: the steps)
    steps = numpy_methods.var if op == "var" else numpy_methods.std
    return xp.asarray(steps(xp, x, axes, bool(kw.get("keepdims", False)), None, ddof))


def reduce(xp: ModuleType, op: str, kwargs: dict[str, Any], a: Any, result: np.dtype) -> Any:
    """``xp.<op>(a, **kwargs)`` under lazyarr's rules (``result``: the result dtype), or None
    where no rule applies (an integer or bool loop dtype: the caller computes NumPy's)."""
    a = xp.asarray(a)
    fn = getattr(xp, op)
    if op in ACCUMULATING:
        kw = dict(kwargs)
        loop = loop_dtype(op, a.dtype, result, kw.pop("dtype", None))
        if loop.kind not in "fc":
            return None
        wide = _C128 if loop.kind == "c" else _F64
        x = a.astype(loop, copy=False).astype(wide, copy=False)   # both casts exact or NumPy's
        total = _var_steps(xp, op, x, kw) if op in ("var", "std") and wide is _F64 else None
        if total is None:
            total = xp.asarray(fn(x, **kw))
        if xp is not np or result.kind not in "fc" or result.itemsize >= total.dtype.itemsize:
            return total.astype(result)
        return rounded_once(total, result)
    if xp is np and op in _EXTREMA and kwargs.keys() <= {"axis", "keepdims"}:
        r = _EXTREMA[op].reduce(a, **kwargs)    # (np.max's wrapper: ~1.5 µs of a leaf's call)
    else:
        r = fn(a, **kwargs)
    if op in ("min", "max") and a.dtype.kind == "f":
        if xp is np and np.ndim(r) == 0 and not r == 0:  # (one result: no ufunc call; NaN too)
            return r
        r = _ieee_signed_zeros(xp, op, kwargs, a, xp.asarray(r))
    return r


_EXTREMA = {"max": np.maximum, "min": np.minimum}


def _ieee_signed_zeros(xp: ModuleType, op: str, kwargs: dict[str, Any], a: Any, r: Any) -> Any:
    """A zero result of max is +0 if the reduced elements hold a +0, else -0 (min: -0 if they
    hold a -0). Non-zero results and NaN are NumPy's already (equal non-zero values have the
    same bits).

    Found by one integer reduction of ``a``'s bits, without temporaries: in a slot whose min
    is zero every element is +-0 or positive (a NaN would be the min), and read as signed
    integers of the same width, -0 (the sign bit alone) is the only negative one: the slot
    holds a -0 iff its integer min is negative. A slot whose max is zero holds a +0 iff its
    integer max is not negative (every other element has the sign bit). When zero slots are
    few, only they are read (an array with a zero in it: ``min`` was 3-6x NumPy's time when
    this took ``signbit``, ``== 0`` and ``any`` over all of ``a``)."""
    zero = r == 0
    if not bool(zero.any()):
        return r
    bits = a.view(np.dtype(a.dtype.str.replace("f", "i")))      # (byte order kept)
    reduce = getattr(xp, op)

    def holds_preferred(ints: Any) -> Any:      # the integer min/max of a zero slot
        return ints < 0 if op == "min" else ints >= 0
    axis, keepdims = kwargs.get("axis"), kwargs.get("keepdims", False)
    axes = range(a.ndim) if axis is None else normalize_axis_tuple(axis, a.ndim)
    kept = [d for d in range(a.ndim) if d not in axes]
    slots = zero.reshape([a.shape[d] for d in kept])            # (keepdims' ones dropped)
    if kept and 4 * int(slots.sum()) <= slots.size:             # the zero slots alone
        where = xp.nonzero(slots)
        chosen = xp.moveaxis(bits, kept, list(range(len(kept))))[where]   # (zeros, *reduced)
        ints = reduce(chosen, axis=tuple(range(1, chosen.ndim))) if chosen.ndim > 1 else chosen
        has = xp.zeros(slots.shape, dtype=bool)
        has[where] = holds_preferred(ints)
        has = has.reshape(zero.shape)
    else:
        has = holds_preferred(reduce(bits, axis=axis, keepdims=keepdims))
    preferred, other = (-0.0, 0.0) if op == "min" else (0.0, -0.0)
    zeros = xp.where(has, r.dtype.type(preferred), r.dtype.type(other))
    return xp.where(zero, zeros, r).astype(r.dtype, copy=False)
