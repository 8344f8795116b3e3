"""``LazyArray``: the user-facing array (the array layer).

Its methods unwrap LazyArrays into nodes and call the layers below (lazyarr/_build.py for
NumPy's rules, lazyarr/_views.py and lazyarr/_writes.py for views and writes,
lazyarr/_materialize.py to compute), then wrap the resulting node. The operators and
reductions are generated from the op registry (lazyarr/_array_methods.py). Methods that are a
public function or the fallback applied to the array (``x.reshape``, ``x.cumsum``,
``__array_function__``) look it up in lazyarr/_dispatch.py, where the layers above register.
"""
from __future__ import annotations

import math
import operator
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _build, _devices, _dispatch, _masked, _node, _views, _writes
from ._array_methods import generated, native_keywords, native_outputs
from ._config import get_config
from ._dtypes import check_dtype
from ._materialize import computing_is_deferred, materialize, tape
from ._node import Node
from ._operands import made
from ._program import lower
from ._registry import BY_NUMPY, TWO_OUTPUTS
from ._shapes import order_of
from ._stack import warn_imaginary_discarded
from ._value_ops import ArrayBase, element_key  # type: ignore[import-not-found]  # compiled

_MAX_REPR_OPS = 8
_UFUNC_REDUCTIONS = {np.add: "sum", np.multiply: "prod", np.minimum: "min", np.maximum: "max",
                     np.logical_or: "any", np.logical_and: "all"}
_NATIVE_OPERANDS: tuple[type, ...] = (int, float, bool, np.generic, np.ndarray, list, tuple)  # LazyArray: added below
_IMPLICIT_REPR_DTYPES = (np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.bool_),
                         np.dtype(np.complex128))  # as NumPy
_ARRAY_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def _node_of(x: Any) -> Any:
    """A LazyArray's node; anything else as it is (the layers below convert it)."""
    return x._node if isinstance(x, LazyArray) else x


def _transposed(data: Any) -> Any:
    return data.transpose()


def _public(name: str) -> Callable[..., Any]:
    """The public function ``lazyarr.<name>`` (registered by lazyarr/_functions/)."""
    return _dispatch.FUNCTIONS[name]


# ----------------------------------------------------------------------------- function forms
# Functions that are also methods (``la.astype(x, t)`` is ``x.astype(t)``): defined here, in
# the array layer, and exported as they are by the function groups (lazyarr/_functions/).
def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: str | None = None) -> LazyArray:
    """Cast to ``dtype`` (unsafe casting, as ``ndarray.astype``), on ``device`` if given. A
    new array, also when the dtype already matches (a computed ``x`` is copied then, as NumPy
    copies), unless ``copy=False``: then ``x`` itself comes back when nothing changes."""
    if device is not None:
        x = _public("asarray")(x, device=device)
    if not copy and isinstance(x, LazyArray) and np.dtype(dtype) == x.dtype:
        return x
    node = _build.astype(_node_of(x), dtype)
    if isinstance(x, LazyArray) and node is x._node and node.data is not None:
        return _public("copy")(x)   # (order "K", as astype's copy: x.copy() is C-ordered)
    return LazyArray._from_node(node)


def clip(x: Any, min: Any = None, max: Any = None, out: Any = None, **kwargs: Any) -> LazyArray:
    """Limit values to ``[min, max]``; either bound may be None, as ``numpy.clip``
    (NaN propagates; the sign of -0.0 is kept). With ``out=`` or ufunc keywords
    (``where=``, ``dtype=``, ``casting=``): NumPy's own call on the computed operands."""
    if out is not None or kwargs:
        return _dispatch.PROTOCOLS["call"]("clip", np.clip, (x, min, max), {"out": out, **kwargs})
    return LazyArray._from_node(_build.clip(_node_of(x), _node_of(min), _node_of(max)))


def _as_lazy(x: Any) -> Any:
    """``x`` as a LazyArray: a NumPy array (or scalar, list ...) wrapped as ``la.asarray``
    wraps it (the same memory where it can: ``la.real(z)`` of a NumPy ``z`` is a view of ``z``,
    as ``np.real(z)`` is)."""
    return x if isinstance(x, LazyArray) else _public("asarray")(x)


def real(x: Any) -> LazyArray:
    """The real part (``numpy.real``): float32 of complex64, float64 of complex128, a view of
    ``x`` as NumPy's (``z.real[...] = 0`` writes into ``z``); of a real array, the array itself;
    of a Python number, its ``.real`` (a Python number, weak in promotion, as NumPy's)."""
    if type(x) in (int, float, complex, bool):
        return x.real  # type: ignore[no-any-return]
    x = _as_lazy(x)
    if x.dtype.kind == "c":
        return _views.part(x, operator.attrgetter("real"),  # type: ignore[no-any-return]
                           lambda: _build.complex_part("real", x._node))
    return x


def imag(x: Any) -> LazyArray:
    """The imaginary part (``numpy.imag``): float32 of complex64, float64 of complex128, a view
    of ``x`` as NumPy's; of a real CPU array, a new read-only array of zeros of its dtype (as
    NumPy's: writing it is a ``ValueError``); of a Python number, its ``.imag``."""
    if type(x) in (int, float, complex, bool):
        return x.imag  # type: ignore[no-any-return]
    x = _as_lazy(x)
    if x.dtype.kind == "c":
        return _views.part(x, operator.attrgetter("imag"),  # type: ignore[no-any-return]
                           lambda: _build.complex_part("imag", x._node))
    node = _build.complex_part("imag", x._node)
    if node.device == "cpu":
        zeros = np.zeros(node.shape, node.dtype)
        zeros.flags.writeable = False
    else:   # (read-only on the GPU: _devices.read_only)
        zeros = _devices.mark_read_only(_devices.xp(node.device).broadcast_to(
            _devices.full(node.device, (), 0, node.dtype), node.shape))
    return LazyArray._from_node(_node.leaf(zeros, node.device))


def _part_setter(name: str) -> Callable[[LazyArray, Any], None]:
    """``z.real = v`` / ``z.imag = v``: a write through the view, as NumPy."""
    def setter(self: LazyArray, value: Any) -> None:
        if name == "imag" and self.dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        getattr(self, name)[...] = value
    return setter


def _values_leave(how: str) -> None:
    """The array's values leave lazyarr (to Python, NumPy, another library): a la.jit trace
    cannot be replayed (lazyarr/_jit.py), as the caller may act on them."""
    t = tape()
    if t is not None:
        t.cannot_replay(how)


def _element_of(node: Node, key: Any) -> Node:
    """One element of a computed array on a device other than the CPU, holding its value.
    In lazy mode a pending copy of the element's 0-d view: it fuses into what reads it (``s +
    a[i] * b[i]`` launches no copy per element, which cost two thirds of a loop's time on the
    H200), and a write into the array first computes it (the write barrier), so it keeps the
    value the element had at this line. In eager mode, a copy now. (Lazy mode outside a
    trace or ``la.explain`` takes the compiled twin of this, in ``_value_ops.getitem``.)"""
    view_key = (*key, Ellipsis) if type(key) is tuple else (key, Ellipsis)
    element = node.data[view_key]      # (the 0-d view, in NumPy's memory on the simulated GPU)
    if get_config().mode == "eager":
        return _node.leaf(element.copy(), node.device)
    t = tape()
    if t is not None:                  # la.jit: a replay reads the element of its argument
        t.view(element, node.data, operator.itemgetter(view_key))
    view = _node.leaf(element, node.device)
    return _node.op_node("astype", element.dtype, (), node.device, (view,), element.dtype)


def _flat_values(dtype: np.dtype, single: bool, value: Any) -> np.ndarray:
    """The values ``x.flat[key] = value`` writes, converted as NumPy's flat write converts
    them: an integer key (``single``) takes one element (``ValueError`` where ``value`` is no
    scalar of ``dtype``); any other key NumPy's conversion to ``dtype`` of a value that is no
    array (``OverflowError`` for 300 into uint8) or an array's values cast to it (NumPy's
    warnings)."""
    value = value.to_numpy() if isinstance(value, LazyArray) else value
    if single:
        one = np.empty(1, dtype)
        try:
            one[0] = value
        except (TypeError, ValueError, OverflowError) as e:
            raise ValueError("Error setting single item of array.") from e
        return one
    if isinstance(value, np.ndarray):
        return value.astype(dtype, copy=False)
    return np.asarray(value, dtype=dtype)


class FlatIndexer:
    """``x.flat`` of a LazyArray (:attr:`LazyArray.flat`): reads through a raveled copy or
    view, writes through ``x[index arrays] = values``, so every write is lazyarr's (the write
    barrier, views of ``x``, NumPy's casting)."""

    __slots__ = ("base",)

    def __init__(self, base: Any) -> None:
        self.base = base

    def __len__(self) -> int:
        return self.base.size  # type: ignore[no-any-return]

    def __iter__(self) -> Any:
        return iter(self.base.ravel())

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.asarray(self.base.ravel().to_numpy(), dtype=dtype)

    def copy(self) -> Any:
        """The elements as a new 1-D array (``ndarray.flat.copy``)."""
        return self.base.ravel().copy()

    def __getitem__(self, key: Any) -> Any:
        key = key.to_numpy() if isinstance(key, LazyArray) else key
        result = self.base.ravel()[key]
        return result.copy() if isinstance(result, LazyArray) and result.ndim else result

    def _positions(self, key: Any) -> np.ndarray:
        """The flat positions ``key`` selects, as a 1-D array (NumPy's IndexError)."""
        positions = np.arange(self.base.size)[key if key is not Ellipsis else slice(None)]
        return np.atleast_1d(positions)

    def __setitem__(self, key: Any, value: Any) -> None:
        base = self.base
        key = key.to_numpy() if isinstance(key, LazyArray) else key
        single = isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_))
        # NumPy checks an integer key before it converts the value, any other key after
        positions = self._positions(key) if single else None
        values = _flat_values(base.dtype, single, value)
        if values.size == 0:
            return                  # (NumPy writes nothing from an empty value)
        positions = self._positions(key) if positions is None else positions
        if not positions.size:
            return
        values = np.resize(values, positions.shape)   # repeated or cut, as NumPy's flat write
        base[np.unravel_index(positions, base.shape)] = values


@generated
class LazyArray(ArrayBase):  # type: ignore[misc]  # compiled base: the node, the operators' slots
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

    __slots__ = ()                  # the node and weak references: ArrayBase's fields
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
        return LazyArray._from_node(made(None, "empty", shape, dtype=check_dtype(dtype)))

    # ----------------------------------------------------------------- attributes
    @property
    def shape(self) -> tuple[int, ...]:
        """The array's dimensions, a tuple of ints (known without running anything)."""
        return self._node.shape

    @shape.setter
    def shape(self, value: Any) -> None:
        """``x.shape = (2, 3)``: NumPy's in-place reshape, ``x`` a view of the same memory from
        now on (computed first if pending); NumPy's ``AttributeError`` where a copy would be
        needed, as ``ndarray.shape``'s."""
        self._set_memory_attribute("shape", value)

    @property
    def dtype(self) -> np.dtype:
        """The element type, a :class:`numpy.dtype` (NumPy's result type, known without running)."""
        return self._node.dtype

    @dtype.setter
    def dtype(self, value: Any) -> None:
        """``x.dtype = np.int64``: NumPy's in-place reinterpretation of the memory (as
        ``ndarray.dtype``'s; ``x.view(dtype)`` says the same without changing ``x``)."""
        self._set_memory_attribute("dtype", value)

    def _set_memory_attribute(self, name: str, value: Any) -> None:
        _views.anchor(self)                    # pushed-down views get their memory first
        view = _views.claim(self).view()
        if name == "dtype" and type(view) is not np.ndarray:
            view = view.view(value)            # (CuPy's dtype cannot be set: its view is that)
        else:
            setattr(view, name, value)         # NumPy's (CuPy's) rules and errors
        check_dtype(view.dtype)
        self._node = _node.leaf(view, self.device)

    @property
    def ndim(self) -> int:
        """The number of dimensions, ``len(shape)``."""
        return len(self._node.shape)

    @property
    def size(self) -> int:
        """The number of elements, the product of ``shape`` (1 for a 0-d array)."""
        return math.prod(self._node.shape)

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
            materialize(node)   # the node keeps the buffer and drops its expression
        return self

    @property
    def data(self) -> Any:
        """The materialized buffer (a NumPy or CuPy array), computing it if needed."""
        return self.compute()._node.data

    def to_numpy(self) -> np.ndarray:
        """The values as a NumPy array (copied from the GPU for cuda arrays)."""
        _values_leave("it reads an array's values into Python (float(), bool(), printing, "
                      "np.asarray...)")
        data = self.data
        if isinstance(data, np.ndarray) and self.device == "cpu":
            return data
        return _devices.to_host(self.device, data)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        node = self._node
        claimed = (node.data is None or node.owner is None or node.op == "scalar") and not copy \
            and self.device == "cpu"
        del node    # (claim counts the node's references: one held here made it copy the memory)
        if claimed:
            # np.asarray(x) is x's memory, as NumPy's: owned by x from now on and given to its
            # pushed-down views first (as the fallback's operands), so a later write into x or
            # a view of it shows in the NumPy array (else the write went into a copy, or into
            # memory that x and its views got only then)
            _values_leave("it reads an array's values into NumPy (np.asarray...)")
            _views.anchor(self)
            _views.claim(self)
        arr = self.to_numpy()
        if dtype is not None and arr.dtype != dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def item(self, *args: Any) -> Any:
        """The single element as a Python scalar (materializes; ``ValueError`` unless size is 1);
        ``x.item(i)`` (a flat index) or ``x.item(i, j, ...)`` (one per axis): that element, as
        NumPy's.

        >>> import lazyarr as la
        >>> (la.asarray([2.0]) * 3).item()
        6.0
        """
        return self.to_numpy().item(*args)

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
        Like NumPy's scalar it holds the element's value, not a view: a later write into ``x``
        does not change it (``x[0, ...]`` is the 0-d view, as in NumPy).
        """
        node = self._node
        one = type(key) is int and len(node.shape) == 1 or \
            type(key) is tuple and element_key(key, node.shape)
        if one and node.data is None and node.op != "scalar" and not computing_is_deferred():
            # one element of a pending array: the array is computed (once: what NumPy's script
            # computed at that line) and the element is its value, as NumPy's scalar is, which
            # a later write into the array leaves as it was. (A pending element view took the
            # array's memory with it when the array was written, on every device; and on the
            # CPU a loop reading elements ran one kernel per element.)
            materialize(node)
            return self[key]
        if node.data is not None and one:
            # one element of a computed array on another device than the CPU: its value now
            # (on the CPU, the compiled LazyArray.__getitem__ of lazyarr/_value_ops.pyx has
            # made a ScalarValue of it before this method runs)
            return LazyArray._from_node(_element_of(node, key))
        if _views.is_basic(key):
            # (a trailing ``...`` makes NumPy/CuPy return a 0-d view, never a scalar)
            view_key = (key if isinstance(key, tuple) else (key,))
            if Ellipsis not in view_key:
                view_key += (Ellipsis,)
            return _views.view(self, operator.itemgetter(view_key))  # type: ignore[no-any-return]
        else:
            _views.check_scalar_key(self._node.shape, key)   # bad keys raise before computing
        if isinstance(key, (LazyArray, np.ndarray)):
            # a bool mask of the full shape: pending (lazyarr/_masked.py), so that a masked
            # update ``x[m] = f(x[m])`` fuses; NumPy's index when something computes it
            pending = _masked.compress(self, key._node if isinstance(key, LazyArray) else key)
            if pending is not None:
                return LazyArray._from_node(pending)
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
        """``round(x)``: for a 0-d array (which stands for NumPy's scalars: ``x[i]``, ``x.sum()``)
        NumPy's scalar rule (a Python int without ``ndigits``); NumPy's ``TypeError`` for more
        dimensions (``ndarray`` has no ``__round__``: ``np.round(x)`` rounds an array)."""
        if self.ndim == 0:
            return round(self.to_numpy()[()], ndigits)  # type: ignore[call-overload]
        raise TypeError("type numpy.ndarray doesn't define __round__ method")

    def __contains__(self, value: Any) -> bool:
        """``value in x``: whether any element equals ``value`` (``ndarray.__contains__``)."""
        return bool((self == value).any())  # type: ignore[attr-defined]  # (generated)

    @property
    def flat(self) -> FlatIndexer:
        """``x.flat``: NumPy's flat view of the elements in C order. ``x.flat[i]``,
        ``x.flat[2:5]``, iteration and ``len`` read them (a slice is a copy, as NumPy's);
        ``x.flat[key] = v`` and ``x.flat = v`` write into ``x`` with NumPy's rules (``v``
        repeated or cut to the elements written) through lazyarr's write path."""
        return FlatIndexer(self)

    @flat.setter
    def flat(self, value: Any) -> None:
        FlatIndexer(self)[...] = value

    def __iter__(self) -> Any:
        for i in range(len(self)):
            yield self[i]

    def copy(self, order: str = "C") -> LazyArray:
        """A copy: an array of its own with the values ``self`` has now (``ndarray.copy``).

        A pending ``self`` stays pending, so the copy fuses into what reads it
        (``a + b.copy()`` is one kernel): the copy shares the expression, and whichever of the
        two first uses its memory as memory (a write, a view, an export) gets a buffer of its
        own (lazyarr/_views.py, "Memory ownership"). A computed ``self`` is copied now.
        ``order`` ("C" by default, as ``ndarray.copy``; "K", "A", "F") is the copy's memory
        layout, as NumPy's, for a computed ``self``; a pending copy takes the expression's
        layout (NumPy's order "K" of its inputs: C-contiguous unless they are not), and "F"
        copies now (docs/not-supported.rst)."""
        order = order_of(order, "C")
        node = self._node
        if node.data is None and node.op != "scalar" and order != "F":
            return LazyArray._from_node(node)
        return LazyArray._from_node(_node.leaf(self.data.copy(order), self.device))

    def __sizeof__(self) -> int:
        """``sys.getsizeof(x)`` (and Dask's ``sizeof``, which calls it): the object plus the
        bytes of its values, computed or to be computed (not the inputs a pending array reads)."""
        return object.__sizeof__(self) + self.nbytes

    def __dask_tokenize__(self) -> Any:
        """Dask's token of the array: its device and values (a pending array is computed),
        the same in every process, as Dask's token of a NumPy array."""
        from dask.tokenize import normalize_token    # only Dask calls this
        return ("lazyarr.LazyArray", self.device, normalize_token(self.to_numpy()))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickling sends the values only: a pending array is materialized first (as any
        conversion), and neither its expression nor its inputs travel along."""
        _values_leave("it pickles an array")
        return _unpickle, (self.data, self.device)

    # ----------------------------------------------------------------- interop
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        _values_leave("it hands an array to another library (__cuda_array_interface__)")
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
            # np.add.reduce(x, axis=0) -> la.sum(x, axis=0)
            kwargs.setdefault("axis", 0)   # ufunc.reduce's default axis is 0, not None
            return getattr(LazyArray, _UFUNC_REDUCTIONS[ufunc])(*inputs, **kwargs)
        opdef = BY_NUMPY.get(ufunc)
        if method == "__call__" and opdef is not None \
                and all(isinstance(x, _NATIVE_OPERANDS) for x in inputs):
            if not kwargs:      # (la.<name>'s own path: a small computed operand runs at once)
                return _dispatch.FUNCTIONS[opdef.name](*inputs)
            if native_keywords(opdef, len(inputs), kwargs) or \
                    native_outputs(opdef, len(inputs), kwargs, LazyArray):   # dtype=, out=: fused too
                return _dispatch.FUNCTIONS[opdef.name](*inputs, **kwargs)
        if method == "__call__" and ufunc in TWO_OUTPUTS and not kwargs and len(inputs) == 1 \
                and isinstance(inputs[0], _NATIVE_OPERANDS):
            return _public(ufunc.__name__)(*inputs)          # np.frexp(lazy): the fused pair
        native_outer = getattr(_dispatch.FUNCTIONS.get(opdef.name), "outer", None) \
            if method == "outer" and opdef is not None and not kwargs else None
        if native_outer is not None and all(isinstance(x, _NATIVE_OPERANDS) for x in inputs):
            return native_outer(*inputs)             # np.add.outer(lazy, b): fused
        return _dispatch.PROTOCOLS["array_ufunc"](ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """``np.sum(lazy)`` and friends go to the lazyarr function of the same name; NumPy
        functions lazyarr has no native form of (or given keywords the native form lacks) run
        through the fallback; NotImplemented where another library's array takes part."""
        return _dispatch.PROTOCOLS["array_function"](func, types, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        """``x.<name>`` for an ndarray attribute LazyArray has no native form of (its
        ``__getattr__``): a method computes ``x`` and calls the buffer's method; an attribute is
        read from the computed buffer. Array results are wrapped; not fused
        (lazyarr/_fallback.py)."""
        return _dispatch.PROTOCOLS["method"](self, name)

    def __matmul__(self, other: Any) -> Any:
        return _public("matmul")(self, other)          # lazyarr/_functions/_linalg.py

    def __imatmul__(self, other: Any) -> Any:
        """``x @= y``: NumPy's ``matmul(x, y, out=x)``, the product written into ``x``'s memory
        (views see it; ``x`` keeps its dtype: NumPy's ``UFuncTypeError`` where the product's
        may not be cast to it, ``same_kind``)."""
        return _public("matmul")(self, other, out=self)

    def __rmatmul__(self, other: Any) -> Any:
        return _public("matmul")(other, self)

    def __divmod__(self, other: Any) -> Any:
        return _dispatch.PROTOCOLS["call"]("divmod", np.divmod, (self, other), {})

    def __rdivmod__(self, other: Any) -> Any:
        return _dispatch.PROTOCOLS["call"]("divmod", np.divmod, (other, self), {})

    # ----------------------------------------------------------------- the array API's
    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        """The array API namespace of this array: the ``lazyarr`` module."""
        if api_version is not None and api_version not in _ARRAY_API_VERSIONS:
            raise ValueError(f"lazyarr implements the array API standard 2024.12 (and the "
                             f"versions before it), not {api_version!r}")
        return sys.modules["lazyarr"]

    def to_device(self, device: str, /, *, stream: Any = None) -> LazyArray:
        """This array on ``device`` (``"cpu"`` or ``"cuda"``): itself if it is there, else a copy.
        ``stream`` is accepted for the standard's signature; copies use the current stream."""
        return _public("asarray")(self, device=device)  # type: ignore[no-any-return]

    def __dlpack__(self, /, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        """The DLPack capsule of the computed buffer (NumPy's or CuPy's ``__dlpack__``)."""
        _values_leave("it hands an array to another library (DLPack)")
        kwargs: dict[str, Any] = {}
        if stream is not None:
            kwargs["stream"] = stream
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return self.data.__dlpack__(**kwargs)

    # ----------------------------------------------------------------- writes, casts, parts
    def __setitem__(self, key: Any, value: Any, _temporary: bool = False) -> None:
        """``x[key] = value`` as NumPy: ``value`` is computed in full, then written with
        NumPy's (CuPy's) indexing, broadcasting and unsafe casting (lazyarr/_writes.py).
        (``_temporary``: from the compiled ``__setitem__`` of lazyarr/_value_ops.pyx, the value
        is a temporary of the statement, ``u[1:] = f(u)``, so nothing else will read it.)"""
        if isinstance(key, tuple):      # (inline: a call per part cost ~0.1 µs each)
            key = tuple([k._node if isinstance(k, LazyArray) else k for k in key])
        elif isinstance(key, LazyArray):
            key = key._node
        _writes.setitem(self, key, _node_of(value), _temporary)

    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
               copy: bool = True, device: str | None = None) -> LazyArray:
        """Cast to ``dtype``, as ``ndarray.astype``: ``casting=`` checked as NumPy's (a
        ``TypeError`` where the rule forbids the cast; ``"same_value"``: NumPy's own call on the
        computed array, which checks the values), ``order=`` the result's layout."""
        order = order_of(order, "K")
        if casting == "same_value":
            return _dispatch.PROTOCOLS["call"](  # type: ignore[no-any-return]
                "astype", lambda a, t: a.astype(t, order=order, casting=casting, copy=copy),
                (self, dtype), {})
        if casting != "unsafe" and not np.can_cast(self.dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to "
                            f"{np.dtype(dtype)!r} according to the rule '{casting}'")
        result = astype(self, dtype, copy=copy, device=device)
        if order == "A":
            order = "F" if self.flags.f_contiguous and not self.flags.c_contiguous else "C"
        if order == "C" and not result.flags.c_contiguous \
                or order == "F" and not result.flags.f_contiguous:
            return _public("asarray")(result, order=order)  # type: ignore[no-any-return]
        return result

    clip = clip
    real = property(real, _part_setter("real"), doc=real.__doc__)
    imag = property(imag, _part_setter("imag"), doc=imag.__doc__)

    # ----------------------------------------------------------------- shape methods
    # ndarray's forms of the shape functions (lazyarr/_functions/_manipulation.py).
    def transpose(self, *axes: Any) -> LazyArray:
        """Permute the axes, as ``ndarray.transpose``: ``x.transpose()``, ``x.transpose(1, 0)`` or
        ``x.transpose((1, 0))``; a view."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _public("transpose")(self, axes or None)  # type: ignore[no-any-return]

    def reshape(self, *shape: Any, order: str = "C", copy: bool | None = None) -> LazyArray:
        """A new shape, as ``ndarray.reshape``: ``x.reshape(2, 3)`` or ``x.reshape((2, 3))``."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if copy is None and type(self) is LazyArray:    # (la.reshape's computed CPU path)
            memory = _views.owned_memory(self)
            if memory is not None:
                return LazyArray._from_node(_node.leaf(memory.reshape(shape, order=order), "cpu"))
        return _public("reshape")(self, shape, order=order, copy=copy)  # type: ignore[no-any-return]

    def swapaxes(self, axis1: int, axis2: int) -> LazyArray:
        """Interchange two axes, as ``ndarray.swapaxes``: a view."""
        return _public("swapaxes")(self, axis1, axis2)  # type: ignore[no-any-return]

    def squeeze(self, axis: Any = None) -> LazyArray:
        """Remove length-1 axes, as ``ndarray.squeeze``: a view."""
        return _public("squeeze")(self, axis)  # type: ignore[no-any-return]

    def ravel(self, order: str = "C") -> LazyArray:
        """The elements as a 1-D array, as ``ndarray.ravel``."""
        return _public("ravel")(self, order)  # type: ignore[no-any-return]

    def repeat(self, repeats: Any, axis: Any = None) -> LazyArray:
        """Each element repeated, as ``ndarray.repeat``: :func:`lazyarr.repeat`."""
        return _public("repeat")(self, repeats, axis)  # type: ignore[no-any-return]

    def argsort(self, axis: Any = -1, kind: str | None = None, order: Any = None, *,
                stable: bool | None = None) -> LazyArray:
        """The indices that sort the array, as ``ndarray.argsort``: :func:`lazyarr.argsort`,
        stable unless ``kind``/``stable=False`` say otherwise (NumPy's default leaves the
        order of ties open; on the CPU the stable indices cost about what NumPy's default
        sort does)."""
        return _public("argsort")(self, axis, kind, order, stable=stable)  # type: ignore[no-any-return]

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> LazyArray:
        """The diagonal, as ``ndarray.diagonal``: :func:`lazyarr.diagonal`, a read-only view."""
        return _public("diagonal")(self, offset, axis1, axis2)  # type: ignore[no-any-return]

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
              out: Any = None) -> Any:
        """The sum of the diagonal, as ``ndarray.trace``: :func:`lazyarr.trace`, fused."""
        return _public("trace")(self, offset, axis1, axis2, dtype, out)

    def argpartition(self, kth: Any, axis: Any = -1, kind: str = "introselect",
                     order: Any = None) -> LazyArray:
        """The indices that partition the array, as ``ndarray.argpartition``:
        :func:`lazyarr.argpartition`."""
        return _public("argpartition")(self, kth, axis, kind, order)  # type: ignore[no-any-return]

    def partition(self, kth: Any, axis: Any = -1, kind: str = "introselect",
                  order: Any = None) -> None:
        """Partition the array in place, as ``ndarray.partition``: the ``kth`` element(s)
        along ``axis`` in their sorted places (views of the array see the write)."""
        _dispatch.PROTOCOLS["partition_in_place"](self, kth, axis, kind, order)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> LazyArray:
        """Where the values ``v`` go into this sorted 1-D array, as ``ndarray.searchsorted``:
        :func:`lazyarr.searchsorted`."""
        return _public("searchsorted")(self, v, side, sorter)  # type: ignore[no-any-return]

    @property
    def T(self) -> LazyArray:
        """The transpose (axes reversed), as ``ndarray.T``: a view."""
        view = _views.owned_view(self, _transposed)     # (a computed CPU array: at once)
        if view is not None:
            return view  # type: ignore[no-any-return]
        return _public("transpose")(self)  # type: ignore[no-any-return]

    @property
    def mT(self) -> LazyArray:
        """The last two axes swapped, as ``ndarray.mT``: a view."""
        return _public("matrix_transpose")(self)  # type: ignore[no-any-return]

    # ----------------------------------------------------------------- printing
    def __repr__(self) -> str:
        if self.is_materialized:
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
        """As ``ndarray.__format__``: a 0-d array formats its NumPy scalar (``f"{x[0]}"`` of
        float32 0.1 is ``0.10000000149011612``, the Python float's, where ``str`` gives ``0.1``);
        another array its ``str`` for an empty spec, NumPy's TypeError for any other."""
        if self.ndim == 0:
            return format(self.to_numpy()[()], spec)
        if not spec:
            return str(self)
        return format(self.to_numpy(), spec)


def _unpickle(data: Any, device: str) -> LazyArray:
    return LazyArray._from_node(_node.leaf(data, device))


_NATIVE_OPERANDS += (LazyArray,)


def _pending_ops(root: Node) -> list[str]:
    """The op names of the not-yet-computed part of the DAG, in execution order."""
    return lower(root).program.ops()
