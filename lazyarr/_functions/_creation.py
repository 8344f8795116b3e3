"""Creation functions: ``asarray``, ``array``, ``copy``, ``zeros``, ``ones``, ``full``, ``empty``, ``arange``,
``linspace``, the ``*_like`` forms and ``from_dlpack``. Each makes a materialized array with
the device's array library (lazyarr/_operands.py makes the leaf)."""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _devices, _fallback, _node
from .._array import LazyArray
from .._dtypes import check_dtype
from .._operands import _POOL_MIN_ELEMENTS, leaf_from, leaf_of, made
from .._shapes import order_of


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, device: str | None = None,
            copy: bool | None = None, like: Any = None) -> LazyArray:
    """Convert ``a`` to a :class:`LazyArray`, with ``numpy.asarray``'s signature.

    NumPy arrays are referenced, not copied (as ``np.asarray``): a lazy expression
    reads its input buffers when it is materialized. CuPy arrays and anything with
    ``__cuda_array_interface__`` or a CUDA ``__dlpack__`` (PyTorch, JAX) are taken
    without a copy and live on ``"cuda"``; host data asked to live on ``"cuda"`` is
    copied to the GPU once. ``copy=True`` always copies, ``copy=False`` never does (a
    ``ValueError`` when the dtype, the device or the order needs one), ``copy=None`` (the
    default) copies only when needed. A LazyArray is returned as it is (pending or not)
    when nothing needs changing.

    >>> import lazyarr as la
    >>> la.asarray([1, 2, 3], dtype=la.float32)
    LazyArray([1., 2., 3.], dtype=float32)
    """
    if like is not None:
        raise TypeError("lazyarr.asarray does not take like= (NumPy's __array_function__ "
                        "dispatch); call the other library's asarray")
    if isinstance(a, LazyArray):
        target = _devices.resolve(device) if device is not None else a.device
        order = None if order is None else order_of(order, "K")
        if order in ("C", "F") and target == a.device and _in_order(a, order):
            order = "K"             # (its memory has that order already: a itself, as NumPy's)
        same = target == a.device and (dtype is None or np.dtype(dtype) == a.dtype) \
            and order in (None, "K", "A")
        if same and not copy:
            return a
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested "
                             f"(dtype {a.dtype} -> {dtype}, device {a.device} -> {target}, "
                             f"order {order})")
        if target == a.device and order in (None, "K", "A"):
            # (NumPy's copy keeps the layout, order "K"; ndarray.copy()'s is "C")
            return a.astype(dtype) if dtype is not None and np.dtype(dtype) != a.dtype \
                else a.copy(order or "K")
        src_device = a.device if a.device != "cpu" else None
        return LazyArray._from_node(leaf_from(a.data, src_device, dtype, order, device, copy))
    return LazyArray._from_node(leaf_of(a, dtype, order, device, copy))


def array(object: Any, dtype: Any = None, *, copy: bool | None = True, order: str = "K",
          subok: bool = False, ndmin: int = 0, like: Any = None) -> LazyArray:
    """An array of ``object``'s values, as ``numpy.array``: a copy by default (``copy=True``),
    of a LazyArray too; ``copy=None`` copies only when needed (:func:`asarray`), ``copy=False``
    never (a ``ValueError`` when the dtype, the order or a list needs one, as NumPy 2). The
    copy of a pending LazyArray stays pending and fuses (:meth:`LazyArray.copy`). ``ndmin``
    prepends length-1 axes up to that many dimensions (a view). ``subok`` has no effect: there
    are no LazyArray subclasses. ``like`` may be None or a LazyArray.

    >>> import lazyarr as la
    >>> la.array([1, 2, 3], dtype=la.float32, ndmin=2)
    LazyArray([[1., 2., 3.]], dtype=float32)
    """
    if like is not None and not isinstance(like, LazyArray):
        raise TypeError("lazyarr.array takes like= only as None or a LazyArray (NumPy's "
                        "__array_function__ dispatch): call the other library's array")
    if isinstance(copy, (str, bytes)):
        raise ValueError("strings are not allowed for 'copy' keyword. Use True/False/None instead.")
    if copy is not None:
        copy = bool(copy)                      # (NumPy takes any truth value, as bool() does)
    ndmin = operator.index(ndmin)
    if ndmin > 64:
        raise ValueError(f"ndmin must be <= ndmax (64), got {ndmin}")
    order = order_of(order, "K")
    if isinstance(object, LazyArray) and order in ("C", "F") and _in_order(object, order):
        order = "K"                            # (its memory has that order already: no copy needed)
    out = asarray(object, dtype, order, copy=copy)
    if out.ndim < ndmin:
        out = out[(None,) * (ndmin - out.ndim)]
    return out


def _in_order(a: LazyArray, order: str) -> bool:
    """Whether ``a``'s memory is ``order``-contiguous (``"C"``/``"F"``): its flags say (a
    pending array of 2 or more dimensions is computed for them: its layout is NumPy's order
    "K" of its inputs, not always C)."""
    if a.ndim <= 1:
        return True
    return bool(a.flags[order + "_CONTIGUOUS"])


def copy(a: Any, order: str = "K", subok: bool = False) -> LazyArray:
    """A copy of ``a`` with the values it has now, as ``numpy.copy`` (``subok`` is accepted and
    has no effect: there are no LazyArray subclasses). A pending LazyArray's copy stays
    pending and fuses (:meth:`LazyArray.copy`); anything else is copied now.

    >>> import lazyarr as la
    >>> x = la.asarray([1.0, 2.0])
    >>> y = la.copy(x)
    >>> x[0] = 5.0
    >>> y
    LazyArray([1., 2.])
    """
    order = order_of(order, "K")
    if isinstance(a, LazyArray):
        return a.copy(order)
    return asarray(a, order=order, copy=True)


def _made(device: str | None, make: str, *args: Any, **kwargs: Any) -> LazyArray:
    """A new materialized array from the device's array library (``numpy.<make>``/``cupy.<make>``)."""
    return LazyArray._from_node(made(device, make, *args, **kwargs))


def _create(fill: str, shape: Any, dtype: Any, device: str | None, order: str = "C") -> LazyArray:
    return _made(device, fill, shape, dtype=check_dtype(dtype if dtype is not None else np.float64),
                 order=order)


def zeros(shape: Any, dtype: Any = None, order: str = "C", *, device: str | None = None) -> LazyArray:
    """A new array of zeros (float64 unless ``dtype`` is given); ``order="F"``: its memory in
    Fortran order, as NumPy's."""
    return _create("zeros", shape, dtype, device, order)


def ones(shape: Any, dtype: Any = None, order: str = "C", *, device: str | None = None) -> LazyArray:
    """A new array of ones (float64 unless ``dtype`` is given); ``order`` as :func:`zeros`."""
    return _create("ones", shape, dtype, device, order)


def empty(shape: Any, dtype: Any = None, order: str = "C", *, device: str | None = None) -> LazyArray:
    """A new uninitialized array (float64 unless ``dtype`` is given); ``order`` as :func:`zeros`."""
    return _create("empty", shape, dtype, device, order)


def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", *,
         device: str | None = None) -> LazyArray:
    """A new array filled with ``fill_value`` (dtype inferred from it as NumPy does);
    ``order`` as :func:`zeros`."""
    return _made(device, "full", shape, fill_value, dtype=dtype, order=order)


def arange(start: Any = None, stop: Any = None, step: Any = None, dtype: Any = None,
           device: str | None = None) -> LazyArray:
    """Evenly spaced values in ``[start, stop)``, as ``np.arange`` (``arange(stop=n)`` too)."""
    if start is None:
        if stop is None:
            raise TypeError("arange() requires stop to be specified.")
        start = 0
    args = [a for a in (start, stop, step) if a is not None] if step is None else [start, stop, step]
    return _made(device, "arange", *args, dtype=dtype)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0, *, device: str | None = None) -> Any:
    """``num`` evenly spaced values over ``[start, stop]``, as ``np.linspace``; with
    ``retstep=True`` the pair ``(values, step)``, the step a 0-d array (as the fallback gives
    NumPy's scalars)."""
    if not retstep and axis == 0:
        return _made(device, "linspace", start, stop, num, endpoint=endpoint, dtype=dtype)
    dev = _devices.resolve(device)
    result = _devices.xp(dev).linspace(start, stop, num, endpoint=endpoint, retstep=retstep,
                                       dtype=dtype, axis=axis)
    check_dtype((result[0] if retstep else result).dtype)
    if retstep and isinstance(result[1], float):
        # (CuPy's step of scalar bounds is a Python float: NumPy's is a scalar of the type
        # the values are computed in, a 0-d array here)
        kinds = [getattr(v, "dtype", v) for v in (start, stop)]
        result = (result[0], np.asarray(result[1], np.result_type(*kinds, float(num)))[()])
    return _fallback.wrapped(result, "linspace", device=dev)   # (the step a 0-d array, as the fallback's)


_NUMPY_MAKERS = {"zeros": np.zeros, "ones": np.ones, "empty": np.empty, "full": np.full}


def _like(fill: str, x: Any, dtype: Any, order: str, shape: Any, device: str | None,
          *args: Any) -> LazyArray:
    if type(x) is LazyArray and dtype is None and shape is None and device is None \
            and order == "K":
        data = x._node.data
        if type(data) is np.ndarray and x._node.device == "cpu":    # (computed CPU: at once)
            order = "F" if data.ndim > 1 and data.flags.f_contiguous \
                and not data.flags.c_contiguous else "C"
            if data.size >= _POOL_MIN_ELEMENTS:     # (the result pool's sizes: made's own)
                return LazyArray._from_node(made("cpu", fill, data.shape, *args,
                                                 dtype=data.dtype, order=order))
            return LazyArray._from_node(_node.leaf(
                _NUMPY_MAKERS[fill](data.shape, *args, dtype=data.dtype, order=order), "cpu"))
    x = asarray(x)
    dtype = x.dtype if dtype is None else dtype
    dev = x.device if device is None else device
    order = order_of(order, "K")
    if order in ("K", "A"):     # the prototype's order (a computed Fortran-ordered buffer)
        data = x._node.data
        order = "F" if data is not None and data.ndim > 1 \
            and data.flags.f_contiguous and not data.flags.c_contiguous else "C"
        if order == "F" and shape is not None and len(np.shape(np.empty(shape, bool))) != x.ndim:
            order = "C"         # NumPy keeps the prototype's order only for its own rank
    shape = x.shape if shape is None else shape
    if fill == "full":
        return full(shape, args[0], dtype=dtype, order=order, device=dev)
    return _create(fill, shape, dtype, dev, order)


_LIKE_DOC = ("``order`` ('K' by default, or 'A': a computed Fortran-ordered prototype gives a "
             "Fortran-ordered array, anything else C order) and ``shape`` (instead of the prototype's) "
             "as NumPy's; ``subok`` is accepted and has no effect (lazyarr has no subclasses).")


def zeros_like(x: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None,
               *, device: str | None = None) -> LazyArray:
    return _like("zeros", x, dtype, order, shape, device)


def ones_like(x: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None,
              *, device: str | None = None) -> LazyArray:
    return _like("ones", x, dtype, order, shape, device)


def empty_like(x: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None,
               *, device: str | None = None) -> LazyArray:
    return _like("empty", x, dtype, order, shape, device)


def full_like(x: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None, *, device: str | None = None) -> LazyArray:
    return _like("full", x, dtype, order, shape, device, fill_value)


for _fn, _what in ((zeros_like, "Zeros"), (ones_like, "Ones"), (empty_like, "Uninitialized"),
                   (full_like, "Filled with ``fill_value``")):
    _fn.__doc__ = (f"{_what}, with the shape (and by default dtype and device) of ``x``. "
                   + _LIKE_DOC)


def from_dlpack(x: Any, /, *, device: str | None = None, copy: bool | None = None) -> LazyArray:
    """An array from any object with ``__dlpack__`` (NumPy, CuPy, PyTorch, JAX ...), sharing its
    memory where the device allows (``copy=None``), on ``device`` if given."""
    if isinstance(x, LazyArray):
        return asarray(x, device=device, copy=copy)
    source = _devices.device_of(x)
    if source == "cuda":
        import cupy
        data = cupy.from_dlpack(x)
    else:
        data = np.from_dlpack(x, copy=copy)
    return asarray(data, device=device, copy=None if copy is None else (copy and source == "cuda"))


FUNCTIONS = {f.__name__: f for f in (asarray, array, copy, zeros, ones, full, empty, arange, linspace,
                                     zeros_like, ones_like, full_like, empty_like, from_dlpack)}

#: NumPy function -> ours, for ``__array_function__``.
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {np.copy: copy}
