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
