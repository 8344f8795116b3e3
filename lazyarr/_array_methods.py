"""LazyArray's methods generated from the op registry: the operators (``x + y``, ``-x``,
``x += y`` ...), the reductions (``x.sum()``), and the function form of an elementwise op.

Part of the array layer: :func:`generated` is the class decorator of ``LazyArray``
(lazyarr/_array.py), and every generator takes the class as an argument, so this module never
imports it. Each method unwraps its LazyArrays into nodes, builds the result node
(lazyarr/_build.py) and wraps it.
"""
from __future__ import annotations

import inspect
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _build, _devices, _dispatch, _node, _ufunc_out, _views, _writes
from ._dispatch import dask_collection
from ._materialize import computing_is_deferred
from ._node import Node
from ._operands import made, to_operand
from ._registry import ELEMENTWISE, OPS, REDUCTIONS, OpDef
from ._stack import user_stacklevel
from ._value_ops import bound_reduction, ufunc_function  # type: ignore[import-not-found]  # compiled

# Bound once: every operator and reduction a user writes calls them.
_elementwise, _reduce = _build.elementwise, _build.reduce
_ARG_NAMES = {1: ("x",), 2: ("x1", "x2"), 3: ("condition", "x1", "x2")}


def docstring(opdef: OpDef, params: str) -> str:
    """The docstring of the function form of a registry op."""
    np_name = getattr(opdef.numpy, "__name__", opdef.name)
    return (f"{opdef.doc}\n\nSemantics (dtypes, broadcasting, edge values) are those of "
            f"``numpy.{np_name}``. {params}\n")


def generated(cls: type) -> type:
    """Class decorator: add the registry's operators, reductions and ``conj`` to ``cls``."""
    for opdef in ELEMENTWISE:
        stem = opdef.operator
        if stem is None:
            continue
        if opdef.nin == 1:
            setattr(cls, f"__{stem}__", _unary_operator(opdef, cls))
            continue
        setattr(cls, f"__{stem}__", _binary_operator(opdef, cls, reflected=False))
        if opdef.reflected:
            setattr(cls, f"__r{stem}__", _binary_operator(opdef, cls, reflected=True))
            setattr(cls, f"__i{stem}__", _inplace_operator(opdef, cls))
    for opdef in REDUCTIONS:
        setattr(cls, opdef.name, reduction_function(opdef, cls))
    cls.conj = cls.conjugate = elementwise_function(OPS["conj"], cls)  # type: ignore[attr-defined]
    return cls


def _named(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "lazyarr"
    return fn


# ------------------------------------------------------------------------------ function forms
def elementwise_function(opdef: OpDef, cls: Any) -> Callable[..., Any]:
    """``lazyarr.<op>(x1, x2)`` of an elementwise op, returning ``cls`` (LazyArray) objects."""
    wrap = cls._from_node
    # One body per arity, unwrapping without a loop: every function call a user writes runs it.
    # A wrong number of arguments goes to the node builder as it is, which raises NumPy's error.
    if opdef.nin == 1:
        def fn(*args: Any, **kwargs: Any) -> Any:
            if len(args) != 1 or kwargs:
                return _with_keywords(opdef, cls, args, kwargs)
            x = args[0]
            return wrap(_elementwise(opdef, x._node if isinstance(x, cls) else x))
    elif opdef.nin == 2:
        def fn(*args: Any, **kwargs: Any) -> Any:
            if len(args) != 2 or kwargs:
                return _with_keywords(opdef, cls, args, kwargs)
            x1, x2 = args
            return wrap(_elementwise(opdef, x1._node if isinstance(x1, cls) else x1,
                                     x2._node if isinstance(x2, cls) else x2))
    else:
        def fn(*args: Any, **kwargs: Any) -> Any:
            if len(args) != opdef.nin or kwargs:
                return _with_keywords(opdef, cls, args, kwargs)
            return wrap(_elementwise(opdef, *[a._node if isinstance(a, cls) else a for a in args]))

    if callable(opdef.numpy):   # another library's array (a Dask array): NumPy's, its dispatch
        fn = _dispatch.deferring(fn, opdef.numpy)
    if isinstance(opdef.numpy, np.ufunc) and opdef.numpy.nout == 1 and opdef.nin < 3:
        fn = ufunc_function(opdef.numpy, opdef.name, fn)  # small computed operands: NumPy's ufunc, at once
    names = _ARG_NAMES[opdef.nin]
    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    fn.__doc__ = docstring(opdef, "In lazy mode the result is pending until materialized "
                           "(small computed CPU operands: at once, see ``eager_max_size``).")
    _dispatch.DEFERS_IN_ITS_BODY.add(fn)
    return _named(fn, opdef.name)


#: NumPy's ufunc keywords at their default values: a call giving them is a call without them
_UFUNC_DEFAULTS = {"out": None, "where": True, "casting": "same_kind", "order": "K", "subok": True,
                   "dtype": None, "signature": None}
#: the keywords the native path takes (the rest, ``out=`` and ``where=`` first, is NumPy's call)
_NATIVE_KEYWORDS = frozenset({"dtype", "signature", "casting"})


def _given(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keywords of a ufunc call that are not at their default value."""
    return {k: v for k, v in kwargs.items()
            if not (k in _UFUNC_DEFAULTS and (v is _UFUNC_DEFAULTS[k] or isinstance(v, str)
                                              and v == _UFUNC_DEFAULTS[k]))}


def _with_keywords(opdef: OpDef, cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``la.<ufunc>(...)`` with outputs or keywords, as NumPy's ufunc call. ``dtype=``,
    ``signature=`` (a tuple) and ``casting=`` are native: NumPy's loop under them, fused
    (:func:`_build.elementwise_typed`); so are ``out=`` a LazyArray and ``where=``, a lazyarr
    write (:mod:`._ufunc_out`). Other outputs (a NumPy array), ``order=``, ``subok=``:
    NumPy's own call, which hands LazyArray operands to the fallback
    (``__array_ufunc__``: the operands computed, a LazyArray output written in its memory),
    with NumPy's values and errors. Outputs are taken as ``out=`` only: a further positional
    argument is the wrong number of arguments (a TypeError), never an array written into."""
    if len(args) != opdef.nin:       # never NumPy's positional outputs (la.sqrt(x, y)): an error
        return cls._from_node(_elementwise(opdef, *args))
    if native_outputs(opdef, len(args), kwargs, cls):      # out=, where=: a lazyarr write
        given = _given(kwargs)
        nodes = tuple(a._node if isinstance(a, cls) else a for a in args)
        return _ufunc_out.call(opdef, cls, nodes, given, _ufunc_out.output_of(given, cls),
                               "out" in kwargs, _signature(opdef, given))
    if native_keywords(opdef, len(args), kwargs):
        given = _given(kwargs)
        nodes = tuple(a._node if isinstance(a, cls) else a for a in args)
        if not given:
            return cls._from_node(_elementwise(opdef, *nodes))
        return cls._from_node(_build.elementwise_typed(opdef, nodes, _signature(opdef, given),
                                                       given.get("casting", "same_kind")))
    if not opdef.is_ufunc:           # where, clip: no ufunc keywords
        raise TypeError(f"{opdef.name}() got an unexpected keyword argument {next(iter(kwargs))!r}")
    outs = kwargs.get("out")
    for o in outs if isinstance(outs, tuple) else (outs,):
        if isinstance(o, np.ndarray):     # a user's NumPy array written: its pending readers first
            _writes.barrier(o, "cpu")
    result = opdef.numpy(*args, **kwargs)
    if isinstance(result, np.ndarray) and _given(kwargs).get("out") is None:
        return cls._from_node(_node.leaf(result, "cpu"))   # (no LazyArray among the arguments)
    return result


def native_outputs(opdef: OpDef, nargs: int, kwargs: dict[str, Any], cls: Any) -> bool:
    """Whether a ufunc call of ``opdef`` writes its output (``out=`` a LazyArray) or takes
    ``where=`` natively (lazyarr/_ufunc_out.py): only ``out=``, ``where=`` and the native
    keywords."""
    if not opdef.is_ufunc or nargs != opdef.nin or opdef.name == "clip" or opdef.numpy.nout != 1:
        return False
    given = _given(kwargs)
    return bool(given.keys() & {"out", "where"}) and _ufunc_out.takes(given, cls) \
        and type(given.get("signature")) in (tuple, type(None))


def native_keywords(opdef: OpDef, nargs: int, kwargs: dict[str, Any]) -> bool:
    """Whether a ufunc call of ``opdef`` with ``nargs`` arguments and these keywords has a
    native form: no outputs, and no keywords but ``dtype=``, ``signature=`` (a tuple) and
    ``casting=`` (or any at its default value)."""
    if not opdef.is_ufunc or nargs != opdef.nin or opdef.name == "clip":
        return False            # (la.clip is numpy.clip, whose keywords are NumPy's call's)
    given = _given(kwargs)
    return given.keys() <= _NATIVE_KEYWORDS and type(given.get("signature")) in (tuple, type(None))


def _signature(opdef: OpDef, given: dict[str, Any]) -> Any:
    """The ufunc ``signature`` that ``dtype=``/``signature=`` ask for (NumPy's ``dtype=X`` is
    the output's dtype: ``(None, ..., X)``); None for neither; a non-tuple signature as given."""
    if "dtype" in given and "signature" in given:
        raise TypeError("cannot specify both 'signature' and 'dtype'")
    if "dtype" in given:
        return (None,) * opdef.nin + (np.dtype(given["dtype"]),)
    signature = given.get("signature")
    return None if signature is None else tuple(None if d is None else np.dtype(d) for d in signature)


def _references_here(x: Any) -> int:
    return sys.getrefcount(x)


#: ``sys.getrefcount`` of a temporary argument inside the function it was passed to: 2 on
#: CPython 3.11-3.13 (the callee's local and getrefcount's argument), 3 before 3.11 (the
#: caller's stack too). Measured at import, as interpreters differ.
_TEMPORARY_REFS = _references_here(object())


#: NumPy's defaults of the reduction keywords lazyarr leaves to NumPy: given at these values
#: they change nothing, so the call stays native
_NUMPY_DEFAULTS = (("out", None), ("where", True))


def _numpy_reduction_parameters(numpy_func: Any) -> tuple[tuple[str, ...], frozenset[str]]:
    """NumPy's reduction's parameters after ``axis`` that may be given by position, and the
    names of all its parameters (``np.sum(a, axis, dtype, out, keepdims, initial, where)``)."""
    params = list(inspect.signature(numpy_func).parameters.values())[2:]
    positional = tuple(p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD)
    return positional, frozenset(p.name for p in params)


def _dtype_kind(dtype: Any) -> str | None:
    """``np.dtype(dtype).kind``, None where ``dtype`` is none NumPy takes (its call raises)."""
    try:
        return np.dtype(dtype).kind
    except TypeError:
        return None


def reduction_function(opdef: OpDef, cls: Any) -> Callable[..., Any]:
    """``lazyarr.<op>(x, axis)`` of a reduction, also the method ``x.<op>(axis)``.

    NumPy's own parameters that the fused reduction has no form of (``out=``, ``where=``,
    ``initial=``, ``mean=``; NumPy's positional order after ``axis`` too: ``np.sum(x, 0,
    np.float32)``) run NumPy's (or CuPy's) reduction through the fallback, as
    ``numpy.sum(lazy, where=...)`` does (lazyarr/_fallback.py)."""
    wrap = cls._from_node
    allowed = {name for name, ok in (("dtype", opdef.takes_dtype), ("ddof", opdef.takes_ddof),
                                     ("correction", opdef.takes_ddof)) if ok}
    positional, numpy_names = _numpy_reduction_parameters(opdef.numpy)

    name = opdef.name

    def fn(x: Any, axis: Any = None, *args: Any, keepdims: bool = False, **kw: Any) -> Any:
        if not kw and not args:         # a computed CPU array's repeated call: its bound runner
            done = bound_reduction(name, x, axis, keepdims)
            if done is not None:
                return done
        if not isinstance(x, cls):      # another library's array (a Dask array): NumPy's
            other = _dispatch.foreign_argument((x,), kw)    # reduction, whose dispatch runs it
            if other is not None:
                return _dispatch.deferred(other, opdef.numpy, (x, axis, *args),
                                          {"keepdims": keepdims, **kw})
        if args or kw:                  # (NumPy's parameters: checked only when given)
            if args:
                if len(args) > len(positional):
                    raise TypeError(f"{name}() takes from 1 to {2 + len(positional)} positional "
                                    f"arguments but {2 + len(args)} were given")
                for key, value in zip(positional, args):
                    if key in kw or key == "keepdims" and keepdims is not False:
                        raise TypeError(f"{name}() got multiple values for argument {key!r}")
                    kw[key] = value
                keepdims = kw.pop("keepdims", keepdims)
            for key, default in _NUMPY_DEFAULTS:
                if key in kw and kw[key] is default:
                    del kw[key]
            if name in ("var", "std") and (kw.get("dtype") is not None and "c" in (
                    getattr(getattr(x, "dtype", None), "kind", None), _dtype_kind(kw["dtype"]))
                    or isinstance(kw.get("ddof", kw.get("correction")), (np.ndarray, cls))):
                # NumPy's var of complex data with dtype= takes the mean in that dtype (a real
                # one: of the real parts) and the deviations' squares as complex numbers; a
                # complex dtype= sums the squares in it (NaN+NaNj where NaN); an array ddof
                # broadcasts against the counts (its shape joins the result's): its own call
                return _dispatch.PROTOCOLS["call"](name, opdef.numpy, (x,),
                                                   {"axis": axis, "keepdims": keepdims, **kw})
            if kw.keys() - allowed:
                unknown = set(kw) - allowed - numpy_names
                if unknown:
                    raise TypeError(f"{name}() got an unexpected keyword argument {unknown.pop()!r}")
                return _dispatch.PROTOCOLS["call"](name, opdef.numpy, (x,),
                                                   {"axis": axis, "keepdims": keepdims, **kw})
        node = x._node if isinstance(x, cls) else x
        # Held by a variable of the caller too (the store rule, lazyarr/_build.py)? A variable
        # (``y.mean()``, ``la.sum(y)``) is one reference more than a temporary argument
        # (``la.sum(la.exp(x))``). Only for a call from the user's code: lazyarr's own
        # callers (``numpy.sum(y)`` through ``__array_function__``) hold references too.
        held = isinstance(x, cls) and node.data is None and sys.getrefcount(x) > _TEMPORARY_REFS \
            and not sys._getframe(1).f_globals.get("__name__", "").startswith("lazyarr")
        if kw:
            if "correction" in kw:          # the array API's name of ddof (NumPy 2 takes both)
                if "ddof" in kw:
                    raise ValueError("ddof and correction can't be provided simultaneously.")
                kw["ddof"] = kw.pop("correction")
            return wrap(_reduce(opdef, node, axis, keepdims, held=held, **kw))
        return wrap(_reduce(opdef, node, axis, keepdims, held=held))

    P = inspect.Parameter
    params = [P("x", P.POSITIONAL_OR_KEYWORD), P("axis", P.POSITIONAL_OR_KEYWORD, default=None),
              P("keepdims", P.KEYWORD_ONLY, default=False)]
    if opdef.takes_dtype:
        params.append(P("dtype", P.KEYWORD_ONLY, default=None))
    if opdef.takes_ddof:
        params += [P("ddof", P.KEYWORD_ONLY, default=0), P("correction", P.KEYWORD_ONLY, default=0)]
    fn.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    axis_doc = "an int or a tuple of ints" if opdef.takes_axis_tuple else "an int"
    fn.__doc__ = docstring(opdef, f"``axis`` is None (all axes) or {axis_doc}, negative allowed. "
                           "A reduction materializes: it runs the pending expression feeding "
                           "it and returns a materialized array (0-d for a full reduction). "
                           "NumPy's further parameters (``out=``, ``where=``, ``initial=``, and "
                           "NumPy's positional order) run NumPy's reduction on the computed "
                           "operand (the fallback: not fused).")
    _dispatch.DEFERS_IN_ITS_BODY.add(fn)
    return _named(fn, opdef.name)


# ------------------------------------------------------------------------------ operators
def _unary_operator(opdef: OpDef, cls: Any) -> Callable[[Any], Any]:
    wrap = cls._from_node

    def method(self: Any) -> Any:
        return wrap(_elementwise(opdef, self._node))
    return method


def _binary_operator(opdef: OpDef, cls: Any, reflected: bool) -> Callable[[Any, Any], Any]:
    """``x op y`` (or, reflected, ``y op x``). The plain methods are one call from the node
    builder (every operator a user writes runs them); the special cases wrap them."""
    wrap = cls._from_node
    if reflected:
        def method(self: Any, other: Any) -> Any:
            return wrap(_elementwise(opdef, other._node if isinstance(other, cls) else other,
                                     self._node))
    else:
        def method(self: Any, other: Any) -> Any:
            return wrap(_elementwise(opdef, self._node,
                                     other._node if isinstance(other, cls) else other))
    if opdef.name in ("equal", "not_equal"):
        method = _identity_comparison_of_non_arrays(method, cls, opdef.name == "equal")
    elif opdef.name == "power" and not reflected:
        method = _scalar_power(method, cls)
    return _operator(method, opdef, cls, reflected)


_MIRRORED = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}   # x < y is y > x


def _operator(method: Callable[[Any, Any], Any], opdef: OpDef, cls: Any,
              reflected: bool) -> Callable[[Any, Any], Any]:
    """The operator method: ``method`` (which builds the node), with two cases before it.

    * ``other`` is a Dask collection: NotImplemented, so that Dask's operator runs (a
      LazyArray is one of its chunk types, lazyarr/_dask.py), never ``other`` computed into one
      LazyArray here.
    * ``x op y`` of a computed 0-d ``x`` on the CPU and a computed 0-d ``y`` (or a Python
      number): NumPy's ufunc on the two 0-d arrays, now, in either mode, as NumPy's 0-d
      arrays. (Elements, ``a[i]``, and the results of this are ``ScalarValue`` values, whose own
      operators run NumPy's scalar arithmetic: the loop over elements, lazyarr/_value.py.)
      ``method`` gives the same values (a 0-d op of computed operands runs at once on the
      CPU, ``_build._computed_on_cpu``) at ~3 µs an op; this path costs ~1.5 µs. NumPy
      computes the result dtype and raises its own errors (``int8 + 300``, integers to negative
      powers); its NumPy scalar result is held by a ``ScalarValue`` (lazyarr/_value.py), as
      the result was a NumPy scalar in NumPy too.
    """
    ufunc = opdef.numpy
    power = opdef.name == "power" and not reflected
    # the method Python calls on ``other`` when this one returns NotImplemented
    stem = opdef.operator
    mirror = f"__{_MIRRORED.get(stem, stem)}__" if not opdef.reflected else \
        f"__{stem}__" if reflected else f"__r{stem}__"

    def operator_method(self: Any, other: Any) -> Any:
        kind = type(other)
        if kind is not cls and kind is not float and kind is not int and dask_collection(other):
            # A Dask collection: Dask's operator runs (a LazyArray is one of its chunk types).
            # The first time, Dask did not know LazyArray yet and may have declined already.
            if _dispatch.PROTOCOLS["met_dask_collection"](other):
                return getattr(other, mirror)(self)
            return NotImplemented
        node = self._node
        if node.data is None or node.shape or node.device != "cpu":
            return method(self, other)
        if isinstance(other, cls):
            o = other._node
            if o.data is None or o.shape or o.device != "cpu":
                return method(self, other)
            value = o.data
        elif kind is float or kind is int or kind is complex:
            value = other
        else:
            return method(self, other)
        if computing_is_deferred():      # la.explain of a call, la.jit's trace
            return method(self, other)
        scalar_value = _dispatch.PROTOCOLS["scalar_value"]
        with warnings.catch_warnings(record=True) as raised:   # NumPy's, for the user's line
            warnings.simplefilter("always")
            if power and (fast := _fast_scalar_power(node, other)) is not None:
                result = scalar_value(fast.numpy(node.data))
            else:
                result = scalar_value(ufunc(value, node.data) if reflected else ufunc(node.data, value))
        for w in raised:
            warnings.warn(w.message, w.category, stacklevel=user_stacklevel())
        return result
    operator_method.__name__ = operator_method.__qualname__ = method.__name__
    return operator_method


def _identity_comparison_of_non_arrays(method: Callable[[Any, Any], Any], cls: Any,
                                       equal: bool) -> Callable[..., Any]:
    def compare(self: Any, other: Any) -> Any:
        if other is None or isinstance(other, str):
            # As NumPy 2: elementwise, and no element equals such an object (all False for
            # ==, all True for !=); a materialized array, as nothing needs computing.
            return cls._from_node(made(self.device, "full", self.shape, not equal, dtype=np.bool_))
        return method(self, other)
    return compare


def _fast_scalar_power(base: Node, exponent: Any) -> OpDef | None:
    """ndarray.__pow__'s fast path (NumPy 2's ``fast_scalar_power``, number.c): for a float
    or complex ``a`` and a Python ``int``/``float`` exponent, ``a ** 2`` is ``np.square(a)``,
    ``a ** -1`` is ``np.reciprocal(a)`` and ``a ** 0.5`` is ``np.sqrt(a)`` (``a ** 2`` of a
    bool ``a`` too: int8 where ``np.power`` gives int64). Other exponents and ``np.power``
    itself stay ``power``. For floats the values equal ``np.power``'s, and the fast ops are
    2-4x faster (float32 at 2**22: sqrt 1.35 ms, power(x, 0.5) 5.37 ms); for complex,
    ``square`` rounds once where complex power multiplies (an ulp)."""
    kind = base.dtype.kind
    if type(exponent) is int and exponent == 2 and kind in "bfc":
        return OPS["square"]
    if type(exponent) is int and exponent == -1 and kind in "fc":
        return OPS["reciprocal"]
    if type(exponent) is float and exponent == 0.5 and kind in "fc":
        return OPS["sqrt"]
    return None


def _scalar_power(method: Callable[[Any, Any], Any], cls: Any) -> Callable[..., Any]:
    def power(self: Any, other: Any) -> Any:
        fast = _fast_scalar_power(self._node, other)
        if fast is not None:
            return cls._from_node(_elementwise(fast, self._node))
        return method(self, other)
    return power


#: ``x op= y``'s output casts NumPy allowed (``resolve_dtypes(..., casting="same_kind")``
#: passed): (op, x's dtype, y's dtype or Python type). The answer depends on these alone, and
#: NumPy's call costs ~1 µs of every in-place statement (a refused cast is asked each time,
#: so it raises NumPy's error each time).
_INPLACE_CASTS: set[tuple[Any, ...]] = set()


def _inplace_operator(opdef: OpDef, cls: Any) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        """``x op= y`` as ``np.op(x, y, out=x)``: NumPy's checks (same_kind casting, no
        broadcasting of ``x``), then the result, cast back to ``x.dtype``, is written into
        ``x``'s memory, so views of ``x`` see it (lazyarr/_writes.py). A pending ``x`` has no
        memory anything could share: it is rebound to the new expression and stays lazy."""
        node = self._node
        other = other._node if isinstance(other, cls) else other
        operand = to_operand(other, self.device)  # a Python scalar stays weak
        other_dt = operand.dtype if isinstance(operand, Node) else type(operand)
        # NumPy refuses a read-only output first, then checks the output cast before it
        # computes (bool **= -1: the cast error)
        data = node.data
        if data is not None and _devices.read_only(data):
            raise ValueError("output array is read-only")
        if other_dt is int:         # (the value, not its type: checked at every call)
            _build.check_weak_int(opdef, node.dtype, operand)
        cast_key = (opdef.name, node.dtype, other_dt)
        if cast_key not in _INPLACE_CASTS:
            opdef.numpy.resolve_dtypes((node.dtype, other_dt, node.dtype), casting="same_kind")
            if len(_INPLACE_CASTS) >= 1024:
                _INPLACE_CASTS.clear()
            _INPLACE_CASTS.add(cast_key)
        fast = _fast_scalar_power(node, other) if opdef.name == "power" else None
        result = _elementwise(fast, node) if fast is not None else _elementwise(opdef, node, other)
        if result.shape != node.shape:
            raise ValueError(f"non-broadcastable output operand with shape {node.shape} doesn't "
                             f"match the broadcast shape {result.shape}")
        if result.dtype != node.dtype:      # (the same dtype: astype's node is ``result``)
            result = _build.astype(result, node.dtype)
        if node.data is None and node.op != "scalar" and not _views.aliased(self):
            self._node = result
        else:
            _writes.assign(self, result)
        return self
    return method
