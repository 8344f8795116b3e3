"""Regressions from an adversarial round against NumPy 2 over writes: each a case where a
write into a LazyArray differed from NumPy's (a value, an exception type), pinned."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import pending

import lazyarr as la

# x.flat[key] = value converts value as NumPy's flat write does: a value that is no array to
# x's dtype (OverflowError for 300 into uint8, where lazyarr wrote 300 wrapped around: 44), an
# integer key one element (ValueError "Error setting single item of array."), the integer
# key's IndexError before the value's errors and any other key's after them.
FLAT_VALUES = [300, -1, [300, 1], 2.5, [np.nan], np.nan, 1j, [1j], np.array([300]),
               np.array([np.nan]), np.int64(300), np.array(300), "5", None, [[1, 2]], 1e300,
               [], 2**64]
FLAT_KEYS = [0, np.int8(1), -1, 5, [0, 1], [5], slice(0, 2), Ellipsis,
             np.array([True, False, True, False, False, True])]


def _flat_write(x, key, value):
    """The values after ``x.flat[key] = value`` (or the exception type), and the categories
    of the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            x.flat[key] = value
            result = repr(np.asarray(x).tolist())     # (repr: NaN equals NaN)
        except Exception as e:     # (NumPy's exception type is what is compared)
            result = type(e)
    return result, sorted({w.category.__name__ for w in caught})


@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.float32, np.bool_, np.complex64])
def test_flat_write_converts_as_numpy(dtype, mode):
    a = np.zeros((2, 3), dtype)
    for value in FLAT_VALUES:
        for key in FLAT_KEYS:
            want = _flat_write(a.copy(), key, value)
            for x in (la.asarray(a.copy()), pending(a)):
                assert _flat_write(x, key, value) == want, (value, key)


def _outcome(fn):
    """``fn()``'s values as a repr (NaN equal to NaN), or its exception type, and the
    categories of the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn()
            result = repr(np.asarray(result.to_device("cpu") if isinstance(result, la.LazyArray)
                                     else result).tolist())
        except Exception as e:     # (NumPy's exception type is what is compared)
            result = type(e)
    return result, sorted({w.category.__name__ for w in caught})


# On cuda, x[basic key] = <NumPy scalar> converts the scalar as NumPy does there, as one
# element (np.int64(300) into int8 is NumPy's OverflowError, np.float64(nan) into an integer
# its ValueError), where CuPy cast it as an array (44, INT_MIN); fancy and boolean keys cast
# in NumPy too. la.full/la.full_like convert a host fill value as np.full's copyto
# (casting="unsafe"): NaN into int8 is 0 with a RuntimeWarning (lazyarr's ValueError), 2**64
# into bool NumPy's OverflowError (lazyarr's True).
SCALARS = [np.int64(300), np.uint64(2**64 - 1), np.float64(np.nan), np.float32(np.inf),
           np.float64(2.5), np.complex128(1j), np.uint8(255), np.bool_(True), np.float64(-0.0)]
CUDA_DTYPES = [np.int8, np.uint8, np.int64, np.float32, np.bool_]


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
@pytest.mark.parametrize("dtype", CUDA_DTYPES, ids=str)
def test_cuda_setitem_of_a_numpy_scalar_converts_as_numpy(dtype):
    for value in SCALARS:
        for key in (0, slice(0, 2), Ellipsis, (None, 1), [0, 1]):
            def write(x, key=key, value=value):
                x[key] = value
                return x
            want = _outcome(lambda: write(np.zeros(3, dtype)))
            for mode in ("lazy", "eager"):
                with la.config(mode=mode):
                    got = _outcome(lambda: write(la.asarray(np.zeros(3, dtype), device="cuda")))
                assert got == want, (mode, value, key)


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
@pytest.mark.parametrize("dtype", [*CUDA_DTYPES, None], ids=str)
def test_cuda_full_converts_the_fill_value_as_numpy(dtype):
    big = [2**64, -2**63 - 1] if dtype is not None else []   # (else NumPy's object dtype)
    for value in [*SCALARS, np.nan, np.inf, 1j, *big, 300, -0.0, [1, 2, 3]]:
        want = _outcome(lambda: np.full((2, 3), value, dtype=dtype))
        got = _outcome(lambda: la.full((2, 3), value, dtype=dtype, device="cuda"))
        assert got == want, value
        want = _outcome(lambda: np.full_like(np.zeros(3, np.float32), value, dtype=dtype))
        got = _outcome(lambda: la.full_like(la.zeros(3, np.float32, device="cuda"), value,
                                            dtype=dtype))
        assert got == want, value
