"""Set functions: ``unique`` and the array API's ``unique_values``, ``unique_counts``,
``unique_inverse``, ``unique_all``: NumPy's ``np.unique`` on the computed array, through the
fallback.

``unique`` of a pending CPU array, where NumPy's ``np.unique`` sorts (values of a dtype its
hash table does not take, or counts): NumPy flattens (copies) its input and sorts that copy
in place; here the chain's kernel writes that memory instead, and NumPy's own steps (the
sort, the mask of first elements, the selection, the counts) run on it: the pending input is
then one kernel, not a temporary plus NumPy's copy of it (issue 18, docs/notes/cpu.rst).

With ``return_index`` (and ``unique_all``) NumPy orders the elements by its stable sort; on
the CPU that permutation comes from ``_stable_argsort`` (the same one, several times faster)
and NumPy's remaining steps run on it.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .. import _devices, _fallback
from .._array import LazyArray
from ._stable_argsort import stable_argsort, stable_argsort_is_fast

# The standard's unique_* leave the order open; NumPy 2.3+ gives its hash order for
# unique_values, array_api_compat and array_api_strict give sorted values, and consumers
# (scikit-learn's unique_labels) rely on that. lazyarr gives the sorted values, NumPy's
# ``np.unique`` (every NaN distinct, as the standard asks), on the computed array.
_UNIQUE_TYPES = {name: type(getattr(np, name)(np.zeros(1))) for name in
                 ("unique_all", "unique_counts", "unique_inverse")}


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Any = None, *, equal_nan: bool = True,
           sorted: bool = True) -> Any:
    """``numpy.unique``: NumPy's on the computed array; a pending CPU ``ar`` of values NumPy
    sorts (floats, bool; any dtype with ``return_counts``) is computed straight into the
    memory NumPy would copy it into, and NumPy's steps run there (the same values, bits,
    dtypes and return forms)."""
    data = _fallback.computed_on_cuda(ar) if type(ar) is LazyArray and ar._node.device == "cuda" \
        and not isinstance(axis, LazyArray) else None
    if data is not None:    # a computed cuda ar: CuPy's call now (as _fallback.call's)
        kwargs = {"return_index": return_index, "return_inverse": return_inverse,
                  "return_counts": return_counts, "axis": axis, "equal_nan": equal_nan}
        if not sorted:
            kwargs["sorted"] = sorted
        return _fallback.wrapped_on_cuda(_devices.xp("cuda").unique(data, **kwargs), "unique",
                                         data.nbytes)
    if isinstance(ar, LazyArray) and axis is None and not (return_index or return_inverse) \
            and ar.ndim and (return_counts or _sorted_by_numpy(ar.dtype)):
        memory = _fallback.computed_into_new(ar)
        if memory is not None:
            _fallback.policy("unique")
            result = _sorted_unique(memory.reshape(-1), bool(return_counts), equal_nan)
            return _fallback.wrapped(result if return_counts else result[0], "unique")
    kwargs: dict[str, Any] = {"return_index": return_index, "return_inverse": return_inverse,
                              "return_counts": return_counts, "axis": axis, "equal_nan": equal_nan}
    if isinstance(ar, LazyArray) and ar.device == "cuda" and axis is None and sorted \
            and ar.ndim:
        # CuPy's unique of a pending ar: computed into new memory (which cupy.unique then
        # flattens, as it does any input), without the general path's walk of its operands
        memory = _fallback.computed_into_new(ar, cuda=True)
        if memory is not None:
            _fallback.policy("unique")
            values = None if return_index or return_inverse or return_counts \
                else _unique_cuda_in_place(memory, equal_nan)
            return _fallback.wrapped(_devices.xp("cuda").unique(memory, **kwargs)
                                     if values is None else values, "unique", device="cuda")
    if not sorted:      # (NumPy 2.3+'s keyword; left out where it is the default)
        kwargs["sorted"] = sorted
    return _fallback.call("unique", _numpy_unique, (ar,), kwargs)


def _unique_cuda_in_place(memory: Any, equal_nan: Any) -> Any:
    """``cupy.unique(memory, equal_nan=equal_nan)`` (values only) of new C-contiguous cuda
    memory of the caller's, CuPy's steps (``_unique_1d``, CuPy 14.2's
    ``cupy/_manipulation/add_remove.py``) run on that memory: ``cupy.unique`` flattens its
    input into a copy first (``ar.flatten()``), a copy kernel and its allocation a pending
    operand's kernel has made needless; the memory is flattened as a view and sorted in
    place, then the same mask of the first elements of runs (every NaN one run with
    ``equal_nan``, by CuPy's own fused kernel) and the same selection. None where CuPy's
    private kernel is not found (``cupy.unique`` then); on the simulated device NumPy runs
    the same steps, the NaN rule as CuPy's kernel writes it."""
    xp = _devices.xp("cuda")
    if xp is np:
        def update(mask: Any, x0: Any) -> None:
            np.logical_and(mask, np.logical_not(np.isnan(x0)), out=mask)
    else:
        update = _unique_nan_kernel()
        if update is None:
            return None
    aux = memory.reshape(-1)
    aux.sort()
    mask = xp.empty(aux.shape, dtype=np.bool_)
    mask[:1] = True
    mask[1:] = aux[1:] != aux[:-1]
    if equal_nan:
        update(mask[1:], aux[:-1])
    return aux[mask]


@functools.cache
def _unique_nan_kernel() -> Any:
    """CuPy's fused kernel of ``unique``'s NaN rule (private API), None where it is not found;
    looked up once (an import with a from-list costs ~0.8 µs a call)."""
    try:
        from cupy._manipulation.add_remove import _unique_update_mask_equal_nan
    except ImportError:
        return None
    return _unique_update_mask_equal_nan


@functools.cache
def _sorted_by_numpy(dtype: np.dtype) -> bool:
    """Whether NumPy's ``np.unique(a)`` (values only) of ``dtype`` takes its sorting path:
    NumPy 2.3+ first asks its hash table (``_unique_hash``), which answers NotImplemented for
    the dtypes it does not take (floats, bool, timedelta in NumPy 2.4). Asked of NumPy itself,
    once per dtype; False (NumPy's own call) where that cannot be asked."""
    try:
        from numpy._core._multiarray_umath import _unique_hash
    except ImportError:
        return False
    try:
        return _unique_hash(np.empty(0, dtype), equal_nan=True) is NotImplemented
    except Exception:
        return False


def _sorted_unique(aux: np.ndarray, return_counts: bool, equal_nan: bool) -> tuple[Any, ...]:
    """NumPy's ``_unique1d`` sorting path (numpy/lib/_arraysetops_impl.py, NumPy 2.4) on
    ``aux``, the flattened values in memory the caller owns: sorted in place (the same sort,
    ``ndarray.sort``'s default kind, as NumPy's on its copy: equal values such as -0.0 and
    0.0 come out in the same order, and the first of each run is kept), then the mask of the
    first elements of the runs (NaNs one run when ``equal_nan``), the values, the counts."""
    aux.sort()
    mask = _first_of_runs(aux, equal_nan)
    ret: tuple[Any, ...] = (aux[mask],)
    if return_counts:
        ret += (_run_lengths(mask),)
    return ret


def _first_of_runs(aux: np.ndarray, equal_nan: bool) -> np.ndarray:
    """NumPy's ``_unique1d`` mask over sorted ``aux``: True at the first element of each run
    of equal values (every NaN one run when ``equal_nan``)."""
    mask = np.empty(aux.shape, dtype=np.bool_)
    mask[:1] = True
    if equal_nan and aux.shape[0] > 0 and aux.dtype.kind in "cfmM" and np.isnan(aux[-1]):
        if aux.dtype.kind == "c":  # for complex all NaNs are considered equivalent
            aux_firstnan = np.searchsorted(np.isnan(aux), True, side="left")
        else:
            aux_firstnan = np.searchsorted(aux, aux[-1], side="left")
        if aux_firstnan > 0:
            mask[1:aux_firstnan] = aux[1:aux_firstnan] != aux[:aux_firstnan - 1]
        mask[aux_firstnan] = True
        mask[aux_firstnan + 1:] = False
    else:
        mask[1:] = aux[1:] != aux[:-1]
    return mask


def _run_lengths(mask: np.ndarray) -> np.ndarray:
    idx = np.concatenate(np.nonzero(mask) + ([mask.size],))
    return np.diff(idx)


def _numpy_unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
                  return_counts: bool = False, axis: Any = None, *, equal_nan: bool = True,
                  sorted: bool = True) -> Any:
    """``numpy.unique`` on the CPU. With ``return_index`` over the flattened array NumPy
    orders the elements by its stable sort (``argsort(kind="mergesort")``, 2-6x slower than
    its default); here the same permutation comes from :func:`stable_argsort`, and NumPy's
    steps (``_unique1d``, NumPy 2.4) run on it: the same values, indices, inverse and counts."""
    if return_index and type(ar) is np.ndarray and (axis is None or ar.ndim == 1) \
            and stable_argsort_is_fast(ar.dtype):
        if axis is not None:
            np.lib.array_utils.normalize_axis_index(axis, ar.ndim)
        flat = ar.reshape(-1)
        perm = stable_argsort(flat)
        aux = flat[perm]
        mask = _first_of_runs(aux, equal_nan)
        ret: tuple[Any, ...] = (aux[mask], perm[mask])
        if return_inverse:
            inverse = np.empty(mask.shape, dtype=np.intp)
            inverse[perm] = np.cumsum(mask) - 1
            ret += (inverse.reshape(ar.shape),)
        if return_counts:
            ret += (_run_lengths(mask),)
        return ret
    kwargs = {} if sorted else {"sorted": sorted}     # (NumPy 2.3+'s keyword)
    return np.unique(ar, return_index, return_inverse, return_counts, axis,
                     equal_nan=equal_nan, **kwargs)


def unique_values(x: Any, /) -> LazyArray:
    """The unique elements of ``x``, sorted (every NaN distinct)."""
    return unique(x, equal_nan=False)  # type: ignore[no-any-return]


def unique_counts(x: Any, /) -> Any:
    """``(values, counts)`` of the unique elements of ``x``, values sorted."""
    values, counts = unique(x, return_counts=True, equal_nan=False)
    return _UNIQUE_TYPES["unique_counts"](values, counts)


def unique_inverse(x: Any, /) -> Any:
    """``(values, inverse_indices)``: the sorted unique values and, for each element of ``x``
    (in ``x``'s shape), the index of its value."""
    values, inverse = _fallback.call("unique", np.unique, (x,), {"return_inverse": True, "equal_nan": False})
    return _UNIQUE_TYPES["unique_inverse"](values, inverse.reshape(_shape(x)))


def unique_all(x: Any, /) -> Any:
    """``(values, indices, inverse_indices, counts)`` of the unique elements, values sorted."""
    values, indices, inverse, counts = _fallback.call(
        "unique", _numpy_unique, (x,), {"return_index": True, "return_inverse": True,
                                     "return_counts": True, "equal_nan": False})
    return _UNIQUE_TYPES["unique_all"](values, indices, inverse.reshape(_shape(x)), counts)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


FUNCTIONS = {f.__name__: f for f in (unique, unique_values, unique_counts, unique_inverse,
                                      unique_all)}
NUMPY_FUNCTIONS = {np.unique: unique}
