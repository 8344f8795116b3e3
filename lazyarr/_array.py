"""``LazyArray``: the user-facing array, and the functions that create one."""
from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from . import _build, _devices, _node, _views
from ._dtypes import check_dtype
from ._node import Node
from ._stack import warn_imaginary_discarded
from ._registry import BY_NUMPY

_MAX_REPR_OPS = 8
_UFUNC_REDUCTIONS = {np.add: "sum", np.multiply: "prod", np.minimum: "min", np.maximum: "max",
                     np.logical_or: "any", np.logical_and: "all"}
_NATIVE_OPERANDS: tuple[type, ...] = (int, float, bool, np.generic, np.ndarray, list, tuple)  # LazyArray: added below
_IMPLICIT_REPR_DTYPES = (np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.bool_))  # as NumPy


class LazyArray:
    """An n-dimensional array whose elementwise operations are recorded, not run.

    A ``LazyArray`` is either *materialized* (it holds a NumPy or CuPy buffer) or
    *pending* (it holds an expression over materialized arrays). Reductions,
    :meth:`compute`, and every conversion (``np.asarray``, ``float()``, printing the
    values) materialize it: the whole pending expression runs as one fused kernel.

    >>> import lazyarr as la
    >>> x = la.asarray([1.0, -2.0, 3.0])
    >>> y = abs(x) * 2 + 1          # pending: nothing has run yet
    >>> y.sum().item()
    15.0
    """

    __slots__ = ("_node", "__weakref__")
    __array_priority__ = 100        # NumPy defers binary operators to us
    __hash__ = None                 # type: ignore[assignment]  # == is elementwise

    _node: Node

    def __new__(cls, shape: Any, dtype: Any = float, buffer: Any = None, offset: int = 0,
                strides: Any = None, order: Any = None) -> LazyArray:
        """``la.ndarray(shape, dtype)`` (``la.ndarray`` is ``LazyArray``): a new uninitialized
        array, as ``numpy.ndarray(shape, dtype)``; ``la.empty`` says the same more plainly.
        Arrays over a given buffer are made with ``la.asarray(numpy.ndarray(...))``."""
        if buffer is not None or strides is not None or offset:
            raise TypeError("la.ndarray(shape, dtype) makes a new array; for one over a given "
                            "buffer use la.asarray(numpy.ndarray(shape, dtype, buffer, ...))")
        return empty(shape, dtype)

    @classmethod
    def _from_node(cls, node: Node) -> LazyArray:
        self = object.__new__(cls)
        self._node = node
        return self

    # ----------------------------------------------------------------- attributes
    @property
    def shape(self) -> tuple[int, ...]:
        """The array's dimensions, a tuple of ints (known without running anything)."""
        return self._node.shape

    @property
    def dtype(self) -> np.dtype:
        """The element type, a :class:`numpy.dtype` (NumPy's result type, known without running)."""
        return self._node.dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions, ``len(shape)``."""
        return len(self._node.shape)

    @property
    def size(self) -> int:
        """The number of elements, the product of ``shape`` (1 for a 0-d array)."""
        return int(np.prod(self._node.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        """The bytes the materialized values take: ``size * dtype.itemsize``."""
        return self.size * self.dtype.itemsize

    @property
    def device(self) -> str:
        """Where the data lives and the kernel runs: ``"cpu"`` or ``"cuda"``."""
        return self._node.device or "cpu"

    @property
    def is_materialized(self) -> bool:
        """Whether the values exist (a buffer), as opposed to a pending expression."""
        return self._node.data is not None

    def __len__(self) -> int:
        if not self._node.shape:
            raise TypeError("len() of unsized object")
        return self._node.shape[0]

    # ----------------------------------------------------------------- materialization
    def compute(self) -> LazyArray:
        """Materialize (run the pending expression as one kernel); returns ``self``."""
        node = self._node
        if node.data is None:
            _build.materialize(node)   # the node keeps the buffer and drops its expression
        return self

    @property
    def data(self) -> Any:
        """The materialized buffer (a NumPy or CuPy array), computing it if needed."""
        return self.compute()._node.data

    def to_numpy(self) -> np.ndarray:
        """The values as a NumPy array (copied from the GPU for cuda arrays)."""
        data = self.data
        if isinstance(data, np.ndarray) and self.device == "cpu":
            return data
        return _devices.to_host(self.device, data)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        arr = self.to_numpy()
        if dtype is not None and arr.dtype != dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def item(self) -> Any:
        """The single element as a Python scalar (materializes; ``ValueError`` unless size is 1).

        >>> import lazyarr as la
        >>> (la.asarray([2.0]) * 3).item()
        6.0
        """
        return self.to_numpy().item()

    def tolist(self) -> Any:
        """The values as nested Python lists of Python scalars (materializes)."""
        return self.to_numpy().tolist()

    def __float__(self) -> float:
        return float(self._real_scalar())

    def __int__(self) -> int:
        return int(self._real_scalar())

    def _real_scalar(self) -> Any:
        """The value for ``float()``/``int()``: as NumPy's scalar (what ``x[i]`` and a full
        reduction give in NumPy), a complex one gives its real part with a ComplexWarning."""
        value = self.to_numpy()
        if value.dtype.kind == "c" and value.ndim == 0:
            warn_imaginary_discarded()
            return value.real[()]
        return value

    def __index__(self) -> int:
        return self.to_numpy().__index__()  # type: ignore[no-any-return]

    def __bool__(self) -> bool:
        return bool(self.to_numpy())

    def __complex__(self) -> complex:
        return complex(self.to_numpy())

    def __getitem__(self, key: Any) -> LazyArray:
        """Basic and advanced indexing, as NumPy: a basic index (ints, slices, ``None``,
        ``...``) is a view, an advanced one a copy. A view of a computed array reads its memory;
        a view of a pending expression is pushed down to the expression's inputs, so it fuses
        (lazyarr/_views.py).

        Indexing down to one element gives a 0-d array (as CuPy, JAX and the array API do;
        NumPy gives a scalar): ``float(x[0])``, ``x[0].item()``, ``x[x[0]]`` work as on NumPy.
        """
        if _views.is_basic(key):
            # (a trailing ``...`` makes NumPy/CuPy return a 0-d view, never a scalar)
            view_key = (key if isinstance(key, tuple) else (key,))
            if Ellipsis not in view_key:
                view_key += (Ellipsis,)
            return _views.view(self, operator.itemgetter(view_key))  # type: ignore[no-any-return]
        else:
            _views.check_scalar_key(self._node.shape, key)   # bad keys raise before computing
        data = self.data
        if isinstance(key, tuple):
            key = tuple(k.data if isinstance(k, LazyArray) else k for k in key)
        elif isinstance(key, LazyArray):
            key = key.data
        result = data[key]
        if isinstance(result, np.generic):      # NumPy's scalar: the 0-d array of its value
            result = np.asarray(result)
        return LazyArray._from_node(_node.leaf(result, self.device))

    def __round__(self, ndigits: int | None = None) -> Any:
        """``round(x)``: for a 0-d array NumPy's scalar rule (a Python int without ``ndigits``),
        else ``np.round`` (through the fallback)."""
        if self.ndim == 0:
            return round(self.to_numpy()[()], ndigits)  # type: ignore[call-overload]
        return np.round(self, ndigits or 0)

    def __contains__(self, value: Any) -> bool:
        """``value in x``: whether any element equals ``value`` (``ndarray.__contains__``)."""
        return bool((self == value).any())  # type: ignore[attr-defined]  # installed by _api

    def __iter__(self) -> Any:
        for i in range(len(self)):
            yield self[i]

    def copy(self) -> LazyArray:
        """A materialized copy with its own buffer."""
        return LazyArray._from_node(_node.leaf(self.data.copy(), self.device))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickling sends the values only: a pending array is materialized first (as any
        conversion), and neither its expression nor its inputs travel along."""
        return _unpickle, (self.data, self.device)

    # ----------------------------------------------------------------- interop
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        data = self.data
        if isinstance(data, np.ndarray):
            raise AttributeError("__cuda_array_interface__ is only defined for cuda arrays")
        return data.__cuda_array_interface__  # type: ignore[no-any-return]

    def __dlpack_device__(self) -> Any:
        return self.data.__dlpack_device__()

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """``np.exp(lazy)`` stays lazy: a NumPy ufunc call becomes the lazyarr op. Other ufunc
        calls and methods (``out=``, ``np.add.outer``, ``np.add.at``) run through the fallback
        (lazyarr/_fallback.py); NotImplemented where another library's array takes part."""
        if method == "reduce" and ufunc in _UFUNC_REDUCTIONS and len(inputs) == 1 \
                and set(kwargs) <= {"axis", "keepdims", "dtype"}:
            from . import _api  # np.add.reduce(x, axis=0) -> la.sum(x, axis=0)

            kwargs.setdefault("axis", 0)   # ufunc.reduce's default axis is 0, not None
            return _api.FUNCTIONS[_UFUNC_REDUCTIONS[ufunc]](*inputs, **kwargs)
        opdef = BY_NUMPY.get(ufunc)
        if method == "__call__" and opdef is not None and not kwargs \
                and all(isinstance(x, _NATIVE_OPERANDS) for x in inputs):
            return LazyArray._from_node(_build.elementwise(opdef, *inputs))
        from . import _fallback

        return _fallback.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """``np.sum(lazy)`` and friends go to the lazyarr function of the same name; NumPy
        functions lazyarr has no native form of (or given keywords the native form lacks) run
        through the fallback; NotImplemented where another library's array takes part."""
        from . import _api, _fallback

        impl = _api.NUMPY_FUNCTIONS.get(func)
        if impl is not None and not any(_fallback.foreign(t) for t in types):
            try:
                _api.signature_of(impl).bind(*args, **kwargs)
            except TypeError:
                pass                    # e.g. out=, where=, initial=: NumPy's through the fallback
            else:
                return impl(*args, **kwargs)
        return _fallback.array_function(func, types, args, kwargs)

    # ----------------------------------------------------------------- printing
    def __repr__(self) -> str:
        if self._node.data is not None:
            arr = self.to_numpy()
            body = np.array2string(arr, separator=", ", prefix="LazyArray(")
            if arr.size == 0 and arr.shape != (0,):
                body += f", shape={arr.shape}"
            if arr.dtype not in _IMPLICIT_REPR_DTYPES or arr.size == 0:
                body += f", dtype={arr.dtype}"
            if self.device != "cpu":
                body += f", device='{self.device}'"
            return f"LazyArray({body})"
        ops = _pending_ops(self._node)
        shown = " -> ".join(ops[-_MAX_REPR_OPS:])
        if len(ops) > _MAX_REPR_OPS:
            shown = f"... {len(ops) - _MAX_REPR_OPS} more -> " + shown
        return (f"LazyArray<pending, shape={self.shape}, dtype={self.dtype}, device={self.device}, "
                f"{len(ops)} op(s): {shown}>")

    def __str__(self) -> str:
        """The values, as NumPy prints them (printing materializes; ``repr`` does not)."""
        return str(self.to_numpy())

    def __format__(self, spec: str) -> str:
        if not spec:
            return str(self)
        return format(self.to_numpy().item() if self.ndim == 0 else self.to_numpy(), spec)


def _unpickle(data: Any, device: str) -> LazyArray:
    return LazyArray._from_node(_node.leaf(data, device))


_NATIVE_OPERANDS += (LazyArray,)


def _pending_ops(root: Node) -> list[str]:
    """The op names of the not-yet-computed part of the DAG, in execution order."""
    from ._program import lower

    return lower(root).program.ops()


# --------------------------------------------------------------------------- creation
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
        same = target == a.device and (dtype is None or np.dtype(dtype) == a.dtype) \
            and order in (None, "K", "A")
        if same and not copy:
            return a
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested "
                             f"(dtype {a.dtype} -> {dtype}, device {a.device} -> {target}, "
                             f"order {order})")
        if target == a.device and order in (None, "K", "A"):
            out = a.astype(dtype) if dtype is not None and np.dtype(dtype) != a.dtype else a.copy()
            return out
        src_device: str | None = a.device if a.device != "cpu" else None
        obj = a.data
    else:
        obj = a
        src_device = _devices.device_of(obj)
    target = _devices.resolve(device) if device is not None else (src_device or _devices.resolve(None))
    if target == "cuda":
        if copy is False and src_device != "cuda":
            raise ValueError("Unable to avoid copy while creating an array as requested "
                             "(host data to device 'cuda')")
        data = _devices.asarray("cuda", obj, dtype)  # zero-copy for CAI / DLPack objects
        if copy and src_device == "cuda":          # (host data was copied to the GPU above)
            data = data.copy()
    elif src_device == "cuda":
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested "
                             "(device 'cuda' to the host)")
        data = _devices.to_host("cuda", obj)
        data = data if dtype is None else data.astype(dtype)
    else:
        data = np.asarray(obj, dtype=dtype, order=order, copy=copy)
    check_dtype(data.dtype)
    return LazyArray._from_node(_node.leaf(data, target))


def _made(device: str | None, make: str, *args: Any, **kwargs: Any) -> LazyArray:
    """A new materialized array from the device's array library (``numpy.<make>``/``cupy.<make>``)."""
    dev = _devices.resolve(device)
    maker = functools.partial(_devices.full, dev) if make == "full" else getattr(_devices.xp(dev), make)
    data = maker(*args, **kwargs)
    check_dtype(data.dtype)
    return LazyArray._from_node(_node.leaf(data, dev))


def _create(fill: str, shape: Any, dtype: Any, device: str | None) -> LazyArray:
    return _made(device, fill, shape, dtype=check_dtype(dtype if dtype is not None else np.float64))


def zeros(shape: Any, dtype: Any = None, device: str | None = None) -> LazyArray:
    """A new array of zeros (float64 unless ``dtype`` is given)."""
    return _create("zeros", shape, dtype, device)


def ones(shape: Any, dtype: Any = None, device: str | None = None) -> LazyArray:
    """A new array of ones (float64 unless ``dtype`` is given)."""
    return _create("ones", shape, dtype, device)


def empty(shape: Any, dtype: Any = None, device: str | None = None) -> LazyArray:
    """A new uninitialized array (float64 unless ``dtype`` is given)."""
    return _create("empty", shape, dtype, device)


def full(shape: Any, fill_value: Any, dtype: Any = None, device: str | None = None) -> LazyArray:
    """A new array filled with ``fill_value`` (dtype inferred from it as NumPy does)."""
    return _made(device, "full", shape, fill_value, dtype=dtype)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None,
           device: str | None = None) -> LazyArray:
    """Evenly spaced values in ``[start, stop)``, as ``np.arange``."""
    args = [a for a in (start, stop, step) if a is not None] if step is None else [start, stop, step]
    return _made(device, "arange", *args, dtype=dtype)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
             device: str | None = None) -> LazyArray:
    """``num`` evenly spaced values over ``[start, stop]``, as ``np.linspace``."""
    return _made(device, "linspace", start, stop, num, endpoint=endpoint, dtype=dtype)


def _like(fill: str, x: Any, dtype: Any, device: str | None, *args: Any) -> LazyArray:
    x = asarray(x)
    dtype = x.dtype if dtype is None else dtype
    dev = x.device if device is None else device
    if fill == "full":
        return full(x.shape, args[0], dtype=dtype, device=dev)
    return _create(fill, x.shape, dtype, dev)


def zeros_like(x: Any, dtype: Any = None, device: str | None = None) -> LazyArray:
    """Zeros with the shape (and by default dtype and device) of ``x``."""
    return _like("zeros", x, dtype, device)


def ones_like(x: Any, dtype: Any = None, device: str | None = None) -> LazyArray:
    """Ones with the shape (and by default dtype and device) of ``x``."""
    return _like("ones", x, dtype, device)


def empty_like(x: Any, dtype: Any = None, device: str | None = None) -> LazyArray:
    """Uninitialized, with the shape (and by default dtype and device) of ``x``."""
    return _like("empty", x, dtype, device)


def full_like(x: Any, fill_value: Any, dtype: Any = None, device: str | None = None) -> LazyArray:
    """Filled with ``fill_value``, with the shape (and by default dtype and device) of ``x``."""
    return _like("full", x, dtype, device, fill_value)
