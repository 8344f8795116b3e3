"""The dtypes lazyarr supports, and the checks that keep everything else out.

NumPy's own promotion rules are used everywhere (``ufunc.resolve_dtypes``,
``np.result_type``); this module only decides which dtypes are admitted and how
Python scalars are converted to an operand dtype.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

#: The one list of the dtypes lazyarr admits. The fused CPU backend's C type codes follow this
#: order (LZ_DTYPES in backends/_cpu_vm.h; cpu_fused checks it at import).
SUPPORTED_DTYPES: tuple[np.dtype, ...] = (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64,
    complex64, complex128,
)
_SUPPORTED = frozenset(SUPPORTED_DTYPES)

_FLOAT_MAX = {dt: float(np.finfo(dt).max) for dt in (float16, float32, float64)}

#: Python scalar types that NumPy 2 treats as "weak" (NEP 50): they take the array's dtype
#: (a complex one takes the complex dtype of the array's precision: ``float32_array * 1j`` is
#: complex64).
WEAK_SCALAR_TYPES = (int, float, complex)


def check_dtype(dtype: object, what: str = "array") -> np.dtype:
    """Return ``np.dtype(dtype)`` if lazyarr supports it, else raise ``TypeError``."""
    try:
        dt = np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError as exc:
        raise TypeError(f"{dtype!r} is not a dtype") from exc
    dt = dt.newbyteorder("=") if dt.byteorder == ">" else dt
    if dt not in _SUPPORTED:
        names = ", ".join(d.name for d in SUPPORTED_DTYPES)
        raise TypeError(f"lazyarr does not support dtype {dt} for {what}; supported dtypes: {names}")
    return dt


def scalar_to_dtype(value: int | float | complex | bool, dtype: np.dtype) -> np.generic:
    """Convert a Python scalar operand (or a NumPy scalar, to its own dtype) to ``dtype``
    exactly as a NumPy ufunc does.

    An out-of-range Python int raises ``OverflowError`` (NumPy's own message);
    a float that overflows a smaller float type becomes inf (a complex one part by part), here
    silently: NumPy's ufuncs report that as ``overflow encountered in cast``, which the caller
    does (:func:`cast_overflowed`).
    """
    if dtype.kind == "c":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.asarray(value, dtype=dtype)[()]
    if dtype.kind != "f" or abs(value) <= _FLOAT_MAX[dtype] or value != value:
        return dtype.type(value)  # type: ignore[no-any-return]  # fast: no overflow possible
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(value, dtype=dtype)[()]


def cast_overflowed(value: int | float | complex, converted: np.generic) -> bool:
    """Whether :func:`scalar_to_dtype` made an infinity of a finite Python number (1e40 as
    float32, 70000 as float16, either part of a complex): NumPy's ufuncs convert such an
    operand under ``np.errstate`` and report ``overflow encountered in cast``."""
    kind = type(value)      # (Python numbers only: a NumPy scalar comes as its own dtype)
    if kind is not int and kind is not float and kind is not complex \
            or converted.dtype.kind not in "fc":
        return False
    if kind is int:
        return math.isinf(converted.real)
    return (math.isinf(converted.real) and math.isfinite(value.real)) or \
        (math.isinf(converted.imag) and math.isfinite(value.imag))


def scalar_fits(value: int, dtype: np.dtype) -> bool:
    """True if the Python int ``value`` is representable in the integer dtype."""
    info = np.iinfo(dtype)
    return info.min <= value <= info.max
