"""Joining arrays: ``concatenate`` (the array API's ``concat``), ``stack``, ``hstack``,
``vstack``, ``dstack``, ``column_stack``, as NumPy defines them (the stacks in terms of
``concatenate``, with lazyarr's ``atleast_*d`` views).

NumPy's own call, given pending operands, would compute each into a temporary and then copy
all of them into the result: two passes over the data. Here the result is one new array and
each operand is written straight into its part of it:

* a **pending** operand whose part is C-contiguous (joining along axis 0, along any axis after
  leading dims of length 1, ``axis=None``, ``stack`` along axis 0) is computed by its fused
  kernel directly into that part (:func:`lazyarr._materialize.materialize_into`: the cpu
  backend; no temporary, and the operand stays pending, as ``x op= y`` leaves ``y``);
* anything else is copied in by NumPy's (CuPy's) assignment ``out[part] = buffer``: a computed
  operand (or a view of one) as it is, a pending one computed first (other axes, or a
  backend that cannot write into given memory: cuda today, eager mode).

When no operand is pending (eager mode always), NumPy's (CuPy's) ``concatenate`` runs on the
buffers: it is that same copy, in one call. The checks come first, with NumPy's exception
types and messages (shapes, axis, ``dtype=``/``casting=``, Python scalars weak as NumPy 2's
``concatenate`` takes them with ``axis=None``), so nothing is computed for a call that fails.
``out=``, an array or an iterator given as the sequence, arrays of another library among the
operands and dtypes lazyarr does not hold take NumPy's own call (the fallback). The result
never shares memory with an operand.
"""
from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _devices, _fallback, _node, _operands
from .._array import LazyArray
from .._dtypes import SUPPORTED_DTYPES
from .._materialize import materialize, materialize_into, tape
from ._building import atleast_1d, atleast_2d, atleast_3d
from ._creation import asarray

_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_SUPPORTED = frozenset(SUPPORTED_DTYPES)
_WEAK = (int, float, complex)       # Python scalars NumPy 2's concatenate takes as weak


# ----------------------------------------------------------------------------- operands
def _foreign(items: Any) -> bool:
    """An array of another library with its own dispatch among ``items`` (Dask, torch)."""
    return any(hasattr(a, "__array_function__") and _fallback.foreign(type(a)) for a in items)


def _parts(items: Any, weak: bool) -> tuple[list[LazyArray], dict[int, Any], str]:
    """The operands as LazyArrays on one device, the Python scalars among them by position
    (``weak``: kept as NumPy 2's ``concatenate`` keeps them, for the result type), and the
    device. NumPy arrays and lists go to the LazyArrays' device; host data is not copied to a
    cuda operand's device silently (the error of lazyarr's operators)."""
    lazies = [a for a in items if isinstance(a, LazyArray)]
    devices = {a.device for a in lazies}
    if len(devices) > 1:
        raise ValueError(f"operands are on different devices ({' and '.join(sorted(devices))}); "
                         "move one explicitly with la.asarray(x, device=...)")
    placed = devices.pop() if devices else None
    device = placed or _devices.resolve(None)
    parts, scalars = [], {}
    for i, a in enumerate(items):
        if isinstance(a, LazyArray):
            parts.append(a)
            continue
        if weak and type(a) in _WEAK:
            scalars[i] = a
            data = np.asarray(a)
            if data.dtype == object:            # an int past uint64, as NumPy's conversion
                raise OverflowError("Python int too large to convert to C long")
            a = data
        elif placed == "cuda" and _devices.device_of(a) is None \
                and isinstance(a, (np.ndarray, list, tuple)):
            raise ValueError("cannot mix a host (NumPy) array with a cuda array; move it "
                             "explicitly with la.asarray(x, device='cuda')")
        parts.append(asarray(a, device=device))
    return parts, scalars, device


def _computed(items: Any) -> list[np.ndarray] | None:
    """The buffers of ``items`` (a list or tuple, not empty) where each is a computed CPU
    LazyArray and nothing is explained or traced (``_fallback.computed_memory``), else None.
    Then the general path would only check what NumPy's own call checks and call it on these
    buffers (no pending part): the fast path calls it at once, with NumPy's results and
    errors (~2 µs against ~15 of the checks in Python, on 1,024 elements:
    tools/peers/small_functions.py)."""
    return _fallback.computed_memory(items) if items else None


def _plain(casting: Any, dtype: Any, seq: Any) -> bool:
    """Whether a join takes the computed fast path's arguments: a list or tuple, NumPy's
    default casting, no ``dtype=`` (the general path checks and casts those)."""
    return dtype is None and casting == "same_kind" and type(casting) is str \
        and type(seq) in (list, tuple)


def _axis(axis: Any) -> int:
    """``axis`` as an int, with NumPy's errors for anything else (a bool is not an axis)."""
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError("an integer is required for the axis")
    return operator.index(axis)


def _joined_shape(shapes: list[tuple[int, ...]], axis: int) -> tuple[tuple[int, ...], int]:
    """The shape of the concatenation along ``axis`` and the axis made non-negative, with
    NumPy's checks and messages in NumPy's order (numpy/_core/src/multiarray/multiarraymodule.c,
    ``PyArray_ConcatenateArrays``)."""
    ndim = len(shapes[0])
    if ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = np.lib.array_utils.normalize_axis_index(axis, ndim)
    shape = list(shapes[0])
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != ndim:
            raise ValueError("all the input arrays must have same number of dimensions, but the "
                             f"array at index 0 has {ndim} dimension(s) and the array at index "
                             f"{i} has {len(s)} dimension(s)")
        for d in range(ndim):
            if d == axis:
                shape[d] += s[d]
            elif shape[d] != s[d]:
                raise ValueError("all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along dimension {d}, the array "
                                 f"at index 0 has size {shape[d]} and the array at index {i} "
                                 f"has size {s[d]}")
    return tuple(shape), axis


def _result_dtype(parts: list[LazyArray], scalars: dict[int, Any], dtype: Any) -> np.dtype:
    """``dtype`` if given, else NumPy's result type of the operands (Python scalars weak)."""
    if dtype is not None:
        return np.dtype(dtype)
    strong = {p.dtype for i, p in enumerate(parts) if i not in scalars}
    weak = {type(v): v for v in scalars.values()}.values()   # (only the type matters: NEP 50)
    return np.result_type(*strong, *weak)


def _weak_can_cast(value: Any, to: np.dtype, casting: str) -> bool:
    """NumPy 2's cast check of a Python scalar operand (``can_cast_pyscalar_scalar_to``)."""
    if to.kind == "c":
        return True
    if to.kind == "f":
        return type(value) is not complex or casting == "unsafe"
    if to.kind in "iu":
        return type(value) is int or casting == "unsafe"
    default = {int: np.int64, float: np.float64, complex: np.complex128}[type(value)]
    return bool(np.can_cast(default, to, casting))


def _check_casts(parts: list[LazyArray], scalars: dict[int, Any], dtype: np.dtype,
                 casting: str) -> None:
    """NumPy's ``TypeError`` for the first operand that ``casting`` does not allow to cast."""
    for i, p in enumerate(parts):
        if i in scalars:
            ok, what = _weak_can_cast(scalars[i], dtype, casting), "scalar"
        else:
            ok, what = bool(np.can_cast(p.dtype, dtype, casting)), "array data"
        if not ok:
            raise TypeError(f"Cannot cast {what} from {p.dtype!r} to {dtype!r} according to the "
                            f"rule {casting!r}")


def _check_casting(casting: Any) -> None:
    if casting not in _CASTINGS:
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe' "
                         f"(got {casting!r})")


# ----------------------------------------------------------------------------- writing
def _pending(x: LazyArray) -> bool:
    node = x._node
    return node.data is None and node.op != "scalar"


def _write(dest: Any, part: LazyArray) -> None:
    """``part`` written into ``dest`` (a view of the result, of ``part``'s shape): a pending
    part computed straight into a C-contiguous ``dest`` where the backend can; otherwise its
    buffer (computed first if pending) copied in by NumPy's (CuPy's) assignment."""
    node = part._node
    if _pending(part) and dest.flags.c_contiguous \
            and materialize_into(_operands.cast(node, dest.dtype), dest):
        return
    dest[...] = materialize(node)


def _assemble(parts: list[LazyArray], shape: tuple[int, ...], dtype: np.dtype, device: str,
              keys: list[Any], library: Callable[[Any, list[Any]], Any]) -> LazyArray:
    """The result: ``parts[i]`` written into ``out[keys[i]]`` (reshaped to the part's shape:
    ``axis=None``), or, with no pending part (or while la.jit traces: every kernel must be a
    step of its tape), ``library(xp, buffers)``, NumPy's (CuPy's) own call on the buffers."""
    xp = _devices.xp(device)
    if tape() is not None or not any(_pending(p) for p in parts):
        return _library_call(library, xp, [materialize(p._node) for p in parts], device)
    out = xp.empty(shape, dtype)
    for part, key in zip(parts, keys):
        if part.size:
            dest = out[key]
            _write(dest if dest.shape == part.shape else dest.reshape(part.shape), part)
    return LazyArray._from_node(_node.leaf(out, device))


def _library_call(library: Callable[[Any, list[Any]], Any], xp: Any, buffers: list[Any],
                  device: str) -> LazyArray:
    func = functools.partial(library, xp)
    wrap = functools.partial(_wrap, device=device)
    result = wrap(func(buffers))
    t = tape()
    if t is not None:       # la.jit: a step its replays call again
        t.call(func, (buffers,), {}, result, wrap, "concatenate")
    return result


def _wrap(data: Any, device: str) -> LazyArray:
    return LazyArray._from_node(_node.leaf(data, device))


def _concatenated(xp: Any, buffers: list[Any], axis: int | None, dtype: np.dtype) -> Any:
    # (the casts were checked already; weak Python scalars come as int64/float64 arrays)
    return xp.concatenate(buffers, axis=axis, dtype=dtype, casting="unsafe")


def _stacked(xp: Any, buffers: list[Any], axis: int, dtype: np.dtype) -> Any:
    new = (slice(None),) * axis + (None,)
    return xp.concatenate([b[new] for b in buffers], axis=axis, dtype=dtype, casting="unsafe")


# ----------------------------------------------------------------------------- the functions
def concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                casting: str = "same_kind") -> Any:
    """Join a sequence of arrays along an existing axis (``axis=None``: flattened first), as
    ``numpy.concatenate``: one new array, each operand written into its part (a pending one
    computed straight into it where its part is contiguous); NumPy's result type (Python
    scalars weak with ``axis=None``), ``dtype=``, ``casting=`` and errors. ``out=`` is
    NumPy's call writing into the LazyArray's memory.

    >>> import lazyarr as la
    >>> x = la.asarray([[1.0, 2.0]])
    >>> la.concatenate([x, x * 10])
    LazyArray([[ 1.,  2.],
               [10., 20.]])
    """
    if out is None and _plain(casting, dtype, arrays) and (axis is None or type(axis) is int):
        buffers = _computed(arrays)
        if buffers is not None:
            return _wrap(np.concatenate(buffers, axis=axis), "cpu")
    if out is not None or not isinstance(arrays, (list, tuple)) or _foreign(arrays) \
            or dtype is not None and np.dtype(dtype) not in _SUPPORTED:
        return _fallback.call("concatenate", np.concatenate, (arrays,),
                              {"axis": axis, "out": out, "dtype": dtype, "casting": casting})
    _check_casting(casting)
    axis = None if axis is None else _axis(axis)
    parts, scalars, device = _parts(arrays, weak=True)
    if not parts:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        shape, sizes = (sum(p.size for p in parts),), [p.size for p in parts]
        keys = [slice(s - n, s) for s, n in zip(np.cumsum(sizes).tolist(), sizes)]
    else:
        shape, axis = _joined_shape([p.shape for p in parts], axis)
        sizes = [p.shape[axis] for p in parts]
        lead = (slice(None),) * axis
        keys = [lead + (slice(s - n, s),) for s, n in zip(np.cumsum(sizes).tolist(), sizes)]
    result = _result_dtype(parts, scalars, dtype)
    _check_casts(parts, scalars, result, casting)
    return _assemble(parts, shape, result, device, keys,
                     functools.partial(_concatenated, axis=axis, dtype=result))


def _sequence(tup: Any) -> Any:
    """NumPy's check of the stacks' argument (``_arrays_for_stack_dispatcher``)."""
    if not hasattr(tup, "__getitem__"):
        raise TypeError('arrays to stack must be passed as a "sequence" type such as list or '
                        'tuple.')
    return tup


def stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: str = "same_kind") -> Any:
    """Join arrays of one shape along a new axis, as ``numpy.stack``: operand ``i`` is written
    into ``result[..., i, ...]`` (``axis`` places the new axis), a pending one computed
    straight into it for ``axis=0``; NumPy's ``dtype=``, ``casting=`` and errors.

    >>> import lazyarr as la
    >>> la.stack([la.asarray([1, 2]), la.asarray([3, 4])], axis=1)
    LazyArray([[1, 3],
               [2, 4]])
    """
    if out is None and _plain(casting, dtype, arrays) and type(axis) is int:
        buffers = _computed(arrays)
        if buffers is not None:
            return _wrap(np.stack(buffers, axis=axis), "cpu")
    _sequence(arrays)
    if out is not None or _foreign(arrays) \
            or dtype is not None and np.dtype(dtype) not in _SUPPORTED:
        return _fallback.call("stack", np.stack, (arrays,),
                              {"axis": axis, "out": out, "dtype": dtype, "casting": casting})
    parts, _, device = _parts(list(arrays), weak=False)
    if not parts:
        raise ValueError("need at least one array to stack")
    if len({p.shape for p in parts}) != 1:
        raise ValueError("all input arrays must have the same shape")
    # (NumPy's stack normalizes the axis so: a Python bool is an int there, np.True_ not)
    axis = np.lib.array_utils.normalize_axis_index(axis, parts[0].ndim + 1)
    _check_casting(casting)
    result = _result_dtype(parts, {}, dtype)
    _check_casts(parts, {}, result, casting)
    shape = parts[0].shape[:axis] + (len(parts),) + parts[0].shape[axis:]
    keys = [(slice(None),) * axis + (i, Ellipsis) for i in range(len(parts))]   # (0-d: a view)
    return _assemble(parts, shape, result, device, keys,
                     functools.partial(_stacked, axis=axis, dtype=result))


def _viewed(fn: Callable[..., Any], tup: Any) -> list[LazyArray]:
    """``fn`` (an ``atleast_*d``) of each operand, as a list (NumPy's stacks call it so)."""
    parts, _, _ = _parts(list(_sequence(tup)), weak=False)
    out = fn(*parts)
    return list(out) if isinstance(out, tuple) else [out]


def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Join arrays column-wise, as ``numpy.hstack``: ``concatenate`` of the ``atleast_1d``
    views along axis 1 (axis 0 for vectors).

    >>> import lazyarr as la
    >>> la.hstack([la.asarray([1, 2]), la.asarray([3])])
    LazyArray([1, 2, 3])
    """
    if _plain(casting, dtype, tup):
        buffers = _computed(tup)
        if buffers is not None:
            return _wrap(np.hstack(buffers), "cpu")
    arrs = _viewed(atleast_1d, tup)
    return concatenate(arrs, 0 if arrs and arrs[0].ndim == 1 else 1, dtype=dtype, casting=casting)


def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Join arrays row-wise, as ``numpy.vstack``: ``concatenate`` of the ``atleast_2d`` views
    along axis 0 (so each pending operand is computed straight into its rows).

    >>> import lazyarr as la
    >>> la.vstack([la.asarray([1, 2]), la.asarray([3, 4])])
    LazyArray([[1, 2],
               [3, 4]])
    """
    if _plain(casting, dtype, tup):
        buffers = _computed(tup)
        if buffers is not None:
            return _wrap(np.vstack(buffers), "cpu")
    return concatenate(_viewed(atleast_2d, tup), 0, dtype=dtype, casting=casting)


def dstack(tup: Any) -> Any:
    """Join arrays along the third axis, as ``numpy.dstack``: ``concatenate`` of the
    ``atleast_3d`` views along axis 2.

    >>> import lazyarr as la
    >>> la.dstack([la.asarray([1, 2]), la.asarray([3, 4])]).shape
    (1, 2, 2)
    """
    return concatenate(_viewed(atleast_3d, tup), 2)


def column_stack(tup: Any) -> Any:
    """Join 1-D arrays as columns (and 2-D arrays as they are) into a 2-D array, as
    ``numpy.column_stack``.

    >>> import lazyarr as la
    >>> la.column_stack([la.asarray([1, 2]), la.asarray([3, 4])])
    LazyArray([[1, 3],
               [2, 4]])
    """
    parts, _, _ = _parts(list(_sequence(tup)), weak=False)
    return concatenate([p if p.ndim >= 2 else atleast_2d(p).T for p in parts], 1)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (concatenate, stack, hstack, vstack, dstack, column_stack)
}
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {getattr(np, name): fn for name, fn in FUNCTIONS.items()}
