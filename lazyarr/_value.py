"""``ScalarValue``: a computed 0-d CPU array that holds its value as a NumPy scalar.

This is what the loop over elements runs on (``s = s + a[i] * b[i]``, docs/notes/core.rst,
"Loops over elements"). ``x[i]`` of a computed CPU array and an operator of computed 0-d CPU
operands give one: a ``LazyArray`` (a subclass, 0-d, materialized, on the CPU, as the issue's
rule says) that holds the NumPy scalar NumPy's own ``x[i]`` / ``a * b`` would have given, and
builds its expression node (a leaf over a 0-d copy of the value) only when something asks for
``_node``: a view, a write into it, a function form, an operand of an array expression. Until
then an element read or an operator allocates one object, where a node and a LazyArray cost
~4x more.

Arithmetic is NumPy's *scalar* arithmetic (``np.float64 * np.float64``, ~70 ns, where the 0-d
ufunc call is ~500 ns): exactly what the user's NumPy script did, as NumPy's ``x[i]`` and the
0-d result of a ufunc are NumPy scalars. So dtypes are NumPy 2's (NEP 50: a Python number takes
the scalar's dtype; scalars and 0-d arrays promote alike), and the warnings and errors are NumPy
scalars' (integer overflow warns, ``1 // 0`` warns and gives 0, never a ZeroDivisionError;
``int ** -1`` raises), at the user's line. ``x op= y`` rebinds, as it does for NumPy's scalars
(``s += v`` is ``s = s + v``: the dtype may change, and no other reference sees it).

The operators and the element read are compiled (lazyarr/_value_ops.pyx: ~150 ns an operator
where a Python method costs ~250, and no Python frame of lazyarr between NumPy's warning and
the user's line). What they do not handle comes back here or to ``LazyArray``'s methods: an
operand that is not a number (an n-d or pending array, a Dask collection, None) and any
operator while a call is explained or traced by la.jit (nothing may compute then) are
``LazyArray``'s operators, on the node.

Once the node exists (``_v`` is None) the value lives in the node's buffer, which views may
share and writes may change: the value is read from there (``data[()]``, still a NumPy scalar).

The same module installs ``LazyArray``'s compiled fast paths for small computed CPU arrays
(the guide's "Small arrays"; lazyarr/_value_ops.pyx): its operators and the function forms of
ufunc ops run NumPy's own at once when every operand is computed and the result has at most
``eager_max_size`` elements (a computed LazyArray wraps the result), ``x op= y`` then computes
NumPy's in-place result on a copy and writes it back; and a basic index or a write of a
computed value into an input whose memory the array owns already skips the steps that are
no-ops there (lazyarr/_views.py's claim and anchor). Everything else is the Python methods'.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _array, _build, _config, _dispatch, _materialize, _node, _operands, _views, _writes, backends
from ._array import LazyArray
from ._dtypes import SUPPORTED_DTYPES
from ._registry import BY_NUMPY, ELEMENTWISE
from ._value_ops import (  # type: ignore[import-not-found]  # compiled
    ARRAY_CODES, BINARY_STEMS, METHODS, ArrayBase, ScalarBase, make_value, setup, setup_nodes,
    setup_products, setup_reductions, setup_views)

_NODE = ArrayBase.__dict__["_node"]           # LazyArray's field: the node, once built
_deferred = _materialize.computing_is_deferred
_DEFERRING = _materialize.DEFERRING           # non-empty while a call is explained or traced
_SUPPORTED = frozenset(SUPPORTED_DTYPES)
_PYTHON_NUMBERS = {float, int, complex, bool}


class ScalarValue(LazyArray, ScalarBase):  # type: ignore[misc]  # ScalarBase: value, operators
    """A computed 0-d CPU array holding its value as a NumPy scalar (see the module docstring).
    A ``LazyArray`` in every respect but speed, and in that ``op=`` rebinds as for a scalar."""

    __slots__ = ()                # the value: ScalarBase's field

    _v: Any          # the NumPy scalar; None once the node is built

    def _get_node(self) -> _node.Node:
        v = self._v
        if v is None:
            return _NODE.__get__(self)  # type: ignore[no-any-return]
        node = _node.leaf(np.asarray(v), "cpu")     # (a new, writable 0-d array)
        _NODE.__set__(self, node)
        self._v = None
        return node

    def _set_node(self, node: _node.Node) -> None:
        _NODE.__set__(self, node)
        self._v = None

    _node = property(_get_node, _set_node)  # type: ignore[assignment]

    @staticmethod
    def _from_node(node: _node.Node) -> LazyArray:
        """Arrays made from a value's node (its views: ``v[None]``) are plain LazyArrays."""
        return LazyArray._from_node(node)

    def _value(self) -> Any:
        """The NumPy scalar: held, or read from the node's buffer."""
        v = self._v
        return v if v is not None else _NODE.__get__(self).data[()]

    # ------------------------------------------------------------- what needs no node
    shape = property(lambda self: (), doc=LazyArray.shape.__doc__)
    ndim = property(lambda self: 0, doc=LazyArray.ndim.__doc__)
    size = property(lambda self: 1, doc=LazyArray.size.__doc__)
    device = property(lambda self: "cpu", doc=LazyArray.device.__doc__)
    is_materialized = property(lambda self: True, doc=LazyArray.is_materialized.__doc__)

    @property
    def dtype(self) -> np.dtype:
        """The element type, a :class:`numpy.dtype`."""
        return self._value().dtype  # type: ignore[no-any-return]

    def compute(self) -> LazyArray:
        """Computed already: ``self``."""
        return self

    def to_numpy(self) -> np.ndarray:
        """The value as a new 0-d NumPy array (as ``np.asarray`` of NumPy's scalar)."""
        _array._values_leave("it reads an array's values into Python (float(), bool(), "
                             "printing, np.asarray...)")
        return np.asarray(self._value())

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """A new 0-d array of the value, as ``np.asarray`` of NumPy's scalar (an element is
        no view: nothing to claim, and no node is built)."""
        arr = self.to_numpy()
        return arr.astype(dtype) if dtype is not None and arr.dtype != dtype else arr

    def item(self, *args: Any) -> Any:
        """The value as a Python scalar (``args``: NumPy's, ``()`` or ``(0,)``)."""
        return self.to_numpy().item(*args)

    # The conversions read the held NumPy scalar as it is (NumPy's own conversions of it):
    # a loop testing elements, crc16's ``if (crc & 1) ^ (cur_byte & 1):``, paid ~3 µs a
    # test through ``to_numpy`` (NumPy ~0.05). They go LazyArray's way where no scalar is
    # held, while a la.jit trace records (``_DEFERRING`` is not empty then; the tape must
    # hear that the values leave), for a complex value (its real part, with NumPy's
    # warning) and for ``__index__`` of a non-integer. (The test is written out in each:
    # a shared method was ~0.08 µs more a conversion, a fifth of ``bool``'s.)
    def __bool__(self) -> bool:
        v = self._v
        if v is None or _DEFERRING and _materialize.tape() is not None:
            return LazyArray.__bool__(self)
        return bool(v)

    def __int__(self) -> int:
        v = self._v
        if v is None or v.dtype.kind == "c" or _DEFERRING and _materialize.tape() is not None:
            return LazyArray.__int__(self)
        return int(v)

    def __float__(self) -> float:
        v = self._v
        if v is None or v.dtype.kind == "c" or _DEFERRING and _materialize.tape() is not None:
            return LazyArray.__float__(self)
        return float(v)

    def __index__(self) -> int:
        v = self._v
        if v is None or v.dtype.kind not in "iu" or _DEFERRING and _materialize.tape() is not None:
            return LazyArray.__index__(self)
        return v.__index__()  # type: ignore[no-any-return]

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """``np.sqrt(v)``, and ``np.float32(2) * v`` (NumPy hands a scalar's operator with an
        array-like to the ufunc): NumPy's ufunc on the values, now, for lazyarr's elementwise
        ops of numbers; everything else as ``LazyArray``'s."""
        if method == "__call__" and not kwargs and ufunc.nout == 1 and ufunc in BY_NUMPY \
                and not (_DEFERRING and _deferred()):
            values = [_ufunc_operand(x) for x in inputs]
            if None not in values:
                result = ufunc(*values)
                if isinstance(result, np.generic):
                    return value(result)
        return LazyArray.__array_ufunc__(self, ufunc, method, *inputs, **kwargs)

    def __reduce__(self) -> tuple[Any, ...]:
        _array._values_leave("it pickles an array")
        return _array._unpickle, (np.asarray(self._value()), "cpu")


def value(v: Any) -> ScalarValue:
    """A ``ScalarValue`` holding the NumPy scalar ``v``."""
    return make_value(v)  # type: ignore[no-any-return]


def _operand(x: Any) -> Any:
    """The value of an operand the scalar arithmetic takes beyond the common ones (a held
    ScalarValue, a Python number): a ScalarValue's value from its buffer, a NumPy scalar of
    a supported dtype, or
    a computed 0-d CPU LazyArray's buffer (NumPy's scalar-with-0-d-array rule then applies,
    a NumPy scalar result). None for everything else."""
    if isinstance(x, LazyArray):
        if type(x) is ScalarValue:
            return x._value()
        node = x._node
        if node.data is not None and not node.shape and node.device == "cpu":
            return node.data
        return None
    if isinstance(x, np.generic) and x.dtype in _SUPPORTED:   # (not np.longdouble, np.str_)
        return x
    return None


def _weak_complex(c: complex, x: ScalarValue) -> Any:
    """A Python complex left of an ``np.float64`` (a subclass of float): as NumPy's complex128,
    so that NumPy's scalar arithmetic runs (Python's own would give a Python complex, and
    ``1j / np.float64(0)`` a ZeroDivisionError); the dtype is the same (NEP 50)."""
    return np.complex128(c) if type(x._value()) is np.float64 else c


def _ufunc_operand(x: Any) -> Any:
    return x if type(x) in _PYTHON_NUMBERS else _operand(x)


def _install() -> None:
    """The operators (``__add__``, ``__radd__``, ``__neg__``, ...) of ScalarValue and LazyArray,
    and LazyArray's element read and write, are the C slots of their compiled bases
    (lazyarr/_value_ops.pyx: ScalarBase, ArrayBase); what those do not handle goes to
    ``LazyArray``'s generated methods. ``s op= y`` rebinds, as for NumPy's scalars."""
    operators = {f"__{op.operator}__" for op in ELEMENTWISE if op.operator is not None}
    operators |= {f"__r{op.operator}__" for op in ELEMENTWISE if op.operator and op.reflected
                  and op.nin == 2}
    assert operators == set(METHODS), operators ^ set(METHODS)   # the registry's operators
    assert set(METHODS) <= set(ARRAY_CODES) and all(name in vars(LazyArray) for name in ARRAY_CODES)
    setup(ScalarValue, ScalarValue._value, _operand, _weak_complex, _deferred, _DEFERRING,
          {name: vars(LazyArray)[name] for name in ARRAY_CODES}, vars(LazyArray)["__getitem__"],
          LazyArray, _writes.target, _config, (_views._base_of, _views._views_of),
          _writes.barrier, vars(LazyArray)["__setitem__"], _views.EXACT_REFCOUNTS)
    by_operator = {op.operator: op.name for op in ELEMENTWISE if op.operator is not None}
    setup_nodes(_build._rules,
                tuple([by_operator[stem] for stem in BINARY_STEMS]),
                tuple([by_operator[stem] for stem in ("neg", "pos", "abs", "invert")]),
                _operands.numpy_scalar_node)
    setup_reductions(_build._bound_reductions, backends._forced, _build._warn_empty_slices)
    setup_views(vars(_views), _materialize.tape)
    setup_products(vars(LazyArray)["__matmul__"], vars(LazyArray)["__rmatmul__"], np.matmul)
    # LazyArray's own operators, x[key] and x[key] = v are the slow paths from now on: the
    # slots of its compiled base (ArrayBase) serve them, without a method lookup or a frame
    for name in (*ARRAY_CODES, "__getitem__", "__setitem__", "__matmul__", "__rmatmul__"):
        delattr(LazyArray, name)
    _dispatch.PROTOCOLS["scalar_value"] = value


_install()
