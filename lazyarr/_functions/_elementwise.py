"""Elementwise functions: one per elementwise op of the registry (generated), ``frexp`` and
``modf`` (the pair of their outputs' ops), and ``where``, ``clip``, ``astype``, ``real``,
``imag``, ``angle``.

``conj``, ``clip``, ``astype``, ``real`` and ``imag`` are also array methods: they are defined
by the array layer (lazyarr/_array.py) and exported here as they are.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _dispatch, _node
from .._array import LazyArray, astype, imag, real
from .._array import clip as _clip
from .._array_methods import elementwise_function
from .._build import complex_part, elementwise
from .._materialize import small_now
from .._operands import operands_of
from .._registry import ELEMENTWISE, OPS, TWO_OUTPUTS

_wrap = LazyArray._from_node


_NOT_GIVEN: Any = object()


def where(condition: Any, x1: Any = _NOT_GIVEN, x2: Any = _NOT_GIVEN, /) -> Any:
    """Choose ``x1`` where ``condition`` is true, else ``x2`` (``numpy.where`` with 3
    arguments: elementwise, fused). ``where(condition)`` alone is ``nonzero(condition)``, as
    NumPy's: a tuple of index arrays, computed now (its length depends on the values)."""
    if x1 is _NOT_GIVEN and x2 is _NOT_GIVEN:
        return _dispatch.PROTOCOLS["call"]("nonzero", np.nonzero, (condition,), {})
    if x1 is _NOT_GIVEN or x2 is _NOT_GIVEN:
        raise ValueError("either both or neither of x and y should be given")
    small = _small_where(condition, x1, x2)
    if small is not None:
        return small
    return _wrap(elementwise(OPS["where"], *[a._node if isinstance(a, LazyArray) else a
                                             for a in (condition, x1, x2)]))


_F64 = np.dtype(np.float64)


def _small_where(condition: Any, x1: Any, x2: Any) -> Any:
    """``where(condition, x1, x2)`` at once, as the general path computes it for small computed
    CPU operands (docs/guide.rst, "Small arrays": NumPy's ``where``, ``_build._where``'s
    result type and scalar cast), without its rules (~10 µs of a 1,024-element call): the
    common case only, a computed CPU condition and arrays of its shape (or Python floats),
    at most ``eager_max_size`` elements, nothing explained or traced. None otherwise."""
    if type(condition) is not LazyArray:
        return None
    node = condition._node
    c = node.data
    if type(c) is not np.ndarray or node.device != "cpu" or not small_now(c.size):
        return None
    values = []
    for a in (x1, x2):
        t = type(a)
        if t is LazyArray:
            node = a._node
            data = node.data
            if type(data) is not np.ndarray or node.device != "cpu" or data.shape != c.shape:
                return None
            values.append(data)
        elif t is float:
            values.append(a)
        else:
            return None
    a, b = values
    dtype = np.result_type(a.dtype if type(a) is np.ndarray else a,
                           b.dtype if type(b) is np.ndarray else b)
    # (a Python float cast to the result type, as _build._where casts it)
    if type(a) is float:
        a = _F64.type(a) if dtype == _F64 else np.asarray(a).astype(dtype)[()]
    if type(b) is float:
        b = _F64.type(b) if dtype == _F64 else np.asarray(b).astype(dtype)[()]
    return _wrap(_node.leaf(np.where(c, a, b), "cpu"))


def clip(x: Any, min: Any = None, max: Any = None, out: Any = None, *, a_min: Any = np._NoValue,
         a_max: Any = np._NoValue, **kwargs: Any) -> LazyArray:
    """Limit values to ``[min, max]``: the array API's ``clip(x, min=None, max=None)`` and
    ``numpy.clip``'s keywords ``a_min=``/``a_max=`` (both, as NumPy asks: its TypeError for
    one, its ValueError beside ``min=``/``max=``). Where the two differ the standard's holds
    (docs/array-api.rst): ``clip(x, 0.5)`` clips below only and ``clip(x, 0.5, 3, min=1)`` is
    Python's TypeError (NumPy: TypeError, ValueError). ``x.clip`` is ndarray's."""
    if a_min is not np._NoValue or a_max is not np._NoValue:
        if a_min is np._NoValue or a_max is np._NoValue:
            missing = "a_min" if a_min is np._NoValue else "a_max"
            raise TypeError(f"clip() missing 1 required positional argument: '{missing}'")
        if min is not None or max is not None:
            raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` "
                             "are provided is forbidden.")
        min, max = a_min, a_max
    return _clip(x, min, max, out, **kwargs)


def angle(z: Any, deg: bool = False) -> LazyArray:
    """The counterclockwise angle from the positive real axis (``numpy.angle``):
    ``arctan2(imag, real)``, in degrees with ``deg=True``."""
    node = z._node if isinstance(z, LazyArray) else operands_of((z,))[0]
    if node.dtype.kind == "c":  # type: ignore[union-attr]
        a = elementwise(OPS["arctan2"], complex_part("imag", node), complex_part("real", node))
    else:
        a = elementwise(OPS["arctan2"], 0, node)
    if deg:
        a = elementwise(OPS["multiply"], a, 180 / np.pi)
    return _wrap(a)


def two_output_function(ufunc: np.ufunc) -> Callable[..., Any]:
    """``la.frexp`` / ``la.modf``: the pair of the ufunc's outputs, each a lazy array of its own
    op (``TWO_OUTPUTS``), so each fuses with what computes ``x`` and with what reads it (an
    output nothing reads is never computed). Given outputs or keywords (``out=``, ``where=``,
    ``dtype=``, ...), NumPy's own call on the computed operands (``__array_ufunc__``'s
    fallback), with NumPy's rules and errors."""
    first, second = TWO_OUTPUTS[ufunc]

    def fn(x: Any, /, **kwargs: Any) -> tuple[LazyArray, LazyArray]:
        if kwargs:
            return ufunc(x if isinstance(x, LazyArray) else LazyArray._from_node(operands_of((x,))[0]),
                         **kwargs)
        node = x._node if isinstance(x, LazyArray) else operands_of((x,))[0]
        return _wrap(elementwise(first, node)), _wrap(elementwise(second, node))

    fn.__doc__ = _TWO_OUTPUT_DOCS[ufunc.__name__] + (
        f"\n\nNumPy semantics: ``numpy.{ufunc.__name__}`` (dtypes, edge values, errors). Returns two "
        f"LazyArrays, ``{first.name}`` and ``{second.name}`` of the op registry: each is pending "
        "and fuses with what computes ``x`` and with what reads it (a kernel reading both runs "
        "NumPy's loop once for each). With ``out=`` or other keywords (``where=``, ``dtype=``, "
        "``casting=``): NumPy's own call on the computed operands. (Outputs are taken as ``out=`` "
        "only: a further positional argument is a TypeError, never an array written into.)\n")
    return fn


_TWO_OUTPUT_DOCS = {
    "frexp": "The mantissa and the exponent of ``x``: ``x == mantissa * 2**exponent`` with "
             "``0.5 <= |mantissa| < 1``; the exponent is int32. For 0, inf and NaN the mantissa "
             "is ``x`` itself (its sign too) and the exponent 0.",
    "modf": "The fractional and the integral parts of ``x``, each with the sign of ``x`` "
            "(``modf(-3.0)`` is ``(-0.0, -3.0)``, ``modf(-inf)`` is ``(-0.0, -inf)``).",
}


_SPECIAL = {"where": where, "clip": clip, "real": real, "imag": imag,
            "conj": LazyArray.conj}  # type: ignore[attr-defined]  # (generated)

FUNCTIONS: dict[str, Callable[..., Any]] = {
    op.name: _SPECIAL.get(op.name) or elementwise_function(op, LazyArray) for op in ELEMENTWISE
}
FUNCTIONS.update(astype=astype, angle=angle,
                 **{ufunc.__name__: two_output_function(ufunc) for ufunc in TWO_OUTPUTS})

#: NumPy function -> ours, for ``__array_function__`` (the ufuncs go through
#: ``__array_ufunc__``).
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {
    np.where: where, np.clip: clip, np.real: real, np.imag: imag, np.angle: angle}
