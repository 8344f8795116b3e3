"""Set functions: the array API's ``unique_values``, ``unique_counts``, ``unique_inverse``,
``unique_all``: NumPy's ``np.unique`` on the computed array, through the fallback."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _fallback
from .._array import LazyArray

# The standard's unique_* leave the order open; NumPy 2.3+ gives its hash order for
# unique_values, array_api_compat and array_api_strict give sorted values, and consumers
# (scikit-learn's unique_labels) rely on that. lazyarr gives the sorted values, NumPy's
# ``np.unique`` (every NaN distinct, as the standard asks), on the computed array.
_UNIQUE_TYPES = {name: type(getattr(np, name)(np.zeros(1))) for name in
                 ("unique_all", "unique_counts", "unique_inverse")}


def unique_values(x: Any, /) -> LazyArray:
    """The unique elements of ``x``, sorted (every NaN distinct)."""
    return _fallback.call("unique", np.unique, (x,), {"equal_nan": False})


def unique_counts(x: Any, /) -> Any:
    """``(values, counts)`` of the unique elements of ``x``, values sorted."""
    values, counts = _fallback.call("unique", np.unique, (x,), {"return_counts": True, "equal_nan": False})
    return _UNIQUE_TYPES["unique_counts"](values, counts)


def unique_inverse(x: Any, /) -> Any:
    """``(values, inverse_indices)``: the sorted unique values and, for each element of ``x``
    (in ``x``'s shape), the index of its value."""
    values, inverse = _fallback.call("unique", np.unique, (x,), {"return_inverse": True, "equal_nan": False})
    return _UNIQUE_TYPES["unique_inverse"](values, inverse.reshape(_shape(x)))


def unique_all(x: Any, /) -> Any:
    """``(values, indices, inverse_indices, counts)`` of the unique elements, values sorted."""
    values, indices, inverse, counts = _fallback.call(
        "unique", np.unique, (x,), {"return_index": True, "return_inverse": True,
                                     "return_counts": True, "equal_nan": False})
    return _UNIQUE_TYPES["unique_all"](values, indices, inverse.reshape(_shape(x)), counts)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


FUNCTIONS = {f.__name__: f for f in (unique_values, unique_counts, unique_inverse, unique_all)}
