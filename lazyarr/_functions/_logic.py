"""Logic functions: ``isclose``, ``allclose``, ``array_equal``, ``array_equiv``. Each is NumPy
2's own definition written with lazyarr's elementwise ops and reductions, so the comparison of
two pending expressions is one fused kernel (``la.allclose(f(x), g(x))`` computes neither
``f(x)`` nor ``g(x)`` into memory), on either device; values and result types are NumPy's
(``tests/test_logic.py``)."""
from __future__ import annotations

import builtins
import cmath
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _node
from .._array import LazyArray
from .._materialize import small_computed
from .._stack import user_stacklevel
from ._creation import asarray
from ._elementwise import FUNCTIONS as _EW
from ._statistical import FUNCTIONS as _REDUCTIONS

_abs, _less_equal, _isfinite, _equal, _isnan, _where = (
    _EW[n] for n in ("abs", "less_equal", "isfinite", "equal", "isnan", "where"))
_all = _REDUCTIONS["all"]


def _operand(v: Any) -> Any:
    """A Python number stays one (NumPy's weak scalars); anything else is an array."""
    return v if isinstance(v, (int, float, complex)) and not isinstance(v, bool) else asarray(v)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, complex))


def _finite_number_or(v: Any, same: Any) -> Any:
    """``v`` itself where it is a finite Python number, else ``v`` with the elements where
    ``same`` zeroed (no inf - inf)."""
    return v if _is_number(v) and cmath.isfinite(v) else _where(same, 0, v)


_FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


def isclose(a: Any, b: Any, rtol: Any = 1.e-5, atol: Any = 1.e-8,
            equal_nan: bool = False) -> Any:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (``b`` finite), or ``a == b``, as
    ``numpy.isclose`` (NumPy 2): a bool array, or a 0-d one for 0-d operands (NumPy returns its
    scalar there)."""
    if type(a) is LazyArray and type(b) is LazyArray and type(rtol) is float \
            and type(atol) is float and math.isfinite(rtol) and math.isfinite(atol) \
            and type(equal_nan) is bool:
        da, db = small_computed(a._node), small_computed(b._node)
        if da is not None and db is not None and da.ndim and da.shape == db.shape \
                and da.dtype == db.dtype and da.dtype in _FLOATS:
            # (small computed float arrays of one shape: NumPy's isclose, which the ops
            # below reproduce, at once, as those small ops would run one by one)
            return LazyArray._from_node(_node.leaf(np.isclose(da, db, rtol, atol, equal_nan),
                                                   "cpu"))
    x, y = _operand(a), _operand(b)
    atol_, rtol_ = _operand(atol), _operand(rtol)
    if isinstance(y, LazyArray):
        dt = np.result_type(y.dtype, 1.0)           # an inexact y: no abs(MIN_INT) trouble
        if dt != y.dtype:
            y = y.astype(dt)
    elif isinstance(y, int):
        y = float(y)
    if not (bool(np.all(np.isfinite(np.asarray(atol_)))) and bool(np.all(np.isfinite(np.asarray(rtol_))))):
        message = f"One of rtol or atol is not valid, atol: {atol}, rtol: {rtol}"
        mode = np.geterr()["invalid"]
        if mode == "warn":
            warnings.warn(message, RuntimeWarning, stacklevel=user_stacklevel())
        elif mode == "raise":
            raise FloatingPointError(message)
        elif mode == "print":
            print(message)
    # NumPy computes |x - y| <= atol + rtol * |y| under errstate(invalid="ignore"): equal
    # infinities give inf - inf, an infinite y with rtol 0 gives 0 * inf. Here the kernel runs
    # later, under the error state in effect then, so those NaNs are not computed at all: the
    # equal elements subtract as zeros (their result is `same` anyway) and an infinite y counts
    # as 0 in the tolerance (its result is `same` anyway, masked by isfinite(y)). A finite
    # Python number enters as it is, a weak scalar as in NumPy's expression: float32 data
    # minus 1.0001 is float32, and so is the comparison with a Python tolerance (a zeroing
    # `where` would make it a float64 array and the comparison float64's).
    same = _equal(x, y)
    diff = _abs(_finite_number_or(x, same) - _finite_number_or(y, same))
    if _is_number(y):
        result = _less_equal(diff, atol_ + rtol_ * abs(y)) | same if cmath.isfinite(y) else same
    else:
        finite = _isfinite(y)
        result = _less_equal(diff, atol_ + rtol_ * _abs(_where(finite, y, 0))) & finite | same
    if equal_nan:
        result = result | _isnan(x) & _isnan(y)
    return result


def allclose(a: Any, b: Any, rtol: Any = 1.e-5, atol: Any = 1.e-8, equal_nan: bool = False) -> bool:
    """Whether every element of ``a`` is close to ``b`` (:func:`isclose`), as
    ``numpy.allclose``: a Python ``bool``, from one fused reduction."""
    return builtins.bool(_all(asarray(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))))


def _cannot_hold_nan(dtype: np.dtype) -> bool:
    return dtype.kind not in "fc"


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    """Whether ``a1`` and ``a2`` have the same shape and elements, as ``numpy.array_equal``
    (``equal_nan``: NaNs in the same places count as equal): a Python ``bool``."""
    try:
        x, y = asarray(a1), asarray(a2)
    except Exception:       # noqa: BLE001 - NumPy's: anything not an array is not equal
        return False
    if x.shape != y.shape:
        return False
    if not equal_nan:
        return builtins.bool(_all(_equal(x, y)))
    if x is y:              # NumPy's: NaN compares equal to itself here
        return True
    if _cannot_hold_nan(x.dtype) and _cannot_hold_nan(y.dtype):
        return builtins.bool(_all(_equal(x, y)))
    nan_x, nan_y = _isnan(x), _isnan(y)
    # equal, or NaN in both places: one fused reduction (NumPy compares the NaN masks, then
    # the other elements; the answer is the same)
    return builtins.bool(_all((nan_x == nan_y) & (_equal(x, y) | nan_x)))


def array_equiv(a1: Any, a2: Any) -> bool:
    """Whether ``a1`` and ``a2`` broadcast to one shape with equal elements, as
    ``numpy.array_equiv``: a Python ``bool``."""
    try:
        x, y = asarray(a1), asarray(a2)
        np.broadcast_shapes(x.shape, y.shape)
    except Exception:       # noqa: BLE001 - NumPy's: not broadcastable, not equivalent
        return False
    return builtins.bool(_all(_equal(x, y)))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (isclose, allclose, array_equal, array_equiv)
}
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {getattr(np, name): fn for name, fn in FUNCTIONS.items()}
