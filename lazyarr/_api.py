"""The public functions and the ``LazyArray`` operators, generated from the registry."""
from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _build, _fallback, _shape_functions, _views, _writes
from ._array import LazyArray, _made, asarray
from ._node import Node
from ._registry import ELEMENTWISE, OPS, REDUCTIONS, OpDef

_wrap = LazyArray._from_node
# Bound once: every operator and reduction a user writes calls them.
_elementwise, _reduce = _build.elementwise, _build.reduce
_ARG_NAMES = {1: ("x",), 2: ("x1", "x2"), 3: ("condition", "x1", "x2")}


def _docstring(opdef: OpDef, params: str) -> str:
    np_name = getattr(opdef.numpy, "__name__", opdef.name)
    return (f"{opdef.doc}\n\nSemantics (dtypes, broadcasting, edge values) are those of "
            f"``numpy.{np_name}``. {params}\n")


def _elementwise_function(opdef: OpDef) -> Callable[..., LazyArray]:
    def fn(*args: Any) -> LazyArray:
        return _wrap(_elementwise(opdef, *args))

    names = _ARG_NAMES[opdef.nin]
    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    fn.__doc__ = _docstring(opdef, "In lazy mode the result is pending until materialized.")
    return fn


def _reduction_function(opdef: OpDef) -> Callable[..., LazyArray]:
    allowed = {name for name, ok in (("dtype", opdef.takes_dtype), ("ddof", opdef.takes_ddof),
                                     ("correction", opdef.takes_ddof)) if ok}

    def fn(x: Any, axis: Any = None, *, keepdims: bool = False, **kw: Any) -> LazyArray:
        if kw:
            unknown = set(kw) - allowed
            if unknown:
                raise TypeError(f"{opdef.name}() got an unexpected keyword argument {unknown.pop()!r}")
            if "correction" in kw:          # the array API's name of ddof (NumPy 2 takes both)
                if "ddof" in kw:
                    raise ValueError("ddof and correction can't be provided simultaneously.")
                kw["ddof"] = kw.pop("correction")
            return _wrap(_reduce(opdef, x, axis, keepdims, **kw))
        return _wrap(_reduce(opdef, x, axis, keepdims))

    P = inspect.Parameter
    params = [P("x", P.POSITIONAL_OR_KEYWORD), P("axis", P.POSITIONAL_OR_KEYWORD, default=None),
              P("keepdims", P.KEYWORD_ONLY, default=False)]
    if opdef.takes_dtype:
        params.append(P("dtype", P.KEYWORD_ONLY, default=None))
    if opdef.takes_ddof:
        params += [P("ddof", P.KEYWORD_ONLY, default=0), P("correction", P.KEYWORD_ONLY, default=0)]
    fn.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    axis_doc = "an int or a tuple of ints" if opdef.takes_axis_tuple else "an int"
    fn.__doc__ = _docstring(opdef, f"``axis`` is None (all axes) or {axis_doc}, negative allowed. "
                            "A reduction materializes: it runs the pending expression feeding "
                            "it and returns a materialized array (0-d for a full reduction).")
    return fn


def where(condition: Any, x1: Any, x2: Any) -> LazyArray:
    """Choose ``x1`` where ``condition`` is true, else ``x2`` (``numpy.where`` with 3 arguments)."""
    return _wrap(_build.elementwise(OPS["where"], condition, x1, x2))


def clip(x: Any, min: Any = None, max: Any = None) -> LazyArray:
    """Limit values to ``[min, max]``; either bound may be None, as ``numpy.clip``
    (NaN propagates; the sign of -0.0 is kept)."""
    return _wrap(_build.clip(x, min, max))


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: str | None = None) -> LazyArray:
    """Cast to ``dtype`` (unsafe casting, as ``ndarray.astype``), on ``device`` if given. A
    new array, also when the dtype already matches (a computed ``x`` is copied then, as NumPy
    copies), unless ``copy=False``: then ``x`` itself comes back when nothing changes."""
    if device is not None:
        x = asarray(x, device=device)
    if not copy and isinstance(x, LazyArray) and np.dtype(dtype) == x.dtype:
        return x
    node = _build.astype(x, dtype)
    if isinstance(x, LazyArray) and node is x._node and node.data is not None:
        return x.copy()
    return _wrap(node)


def real(x: Any) -> LazyArray:
    """The real part (``numpy.real``): float32 of complex64, float64 of complex128, a view of
    ``x`` as NumPy's (``z.real[...] = 0`` writes into ``z``); of a real array, the array itself."""
    if isinstance(x, LazyArray) and x.dtype.kind == "c":
        return _views.part(x, operator.attrgetter("real"), lambda: _build.complex_part("real", x))
    node = _build.complex_part("real", x)
    return x if isinstance(x, LazyArray) and node is x._node else _wrap(node)


def imag(x: Any) -> LazyArray:
    """The imaginary part (``numpy.imag``): float32 of complex64, float64 of complex128, a view
    of ``x`` as NumPy's; of a real array, a new array of zeros of its dtype."""
    if isinstance(x, LazyArray) and x.dtype.kind == "c":
        return _views.part(x, operator.attrgetter("imag"), lambda: _build.complex_part("imag", x))
    return _wrap(_build.complex_part("imag", x))


def angle(z: Any, deg: bool = False) -> LazyArray:
    """The counterclockwise angle from the positive real axis (``numpy.angle``):
    ``arctan2(imag, real)``, in degrees with ``deg=True``."""
    if not isinstance(z, LazyArray):
        z = _wrap(_build.operands_of((z,))[0])
    if z.dtype.kind == "c":
        a = _elementwise(OPS["arctan2"], _wrap(_build.complex_part("imag", z)),
                         _wrap(_build.complex_part("real", z)))
    else:
        a = _elementwise(OPS["arctan2"], 0, z)
    if deg:
        a = _elementwise(OPS["multiply"], _wrap(a), 180 / np.pi)
    return _wrap(a)


def explain(x: Any, device: str | None = None) -> Any:
    """The :class:`~lazyarr.Plan` of materializing ``x``: its kernels, inputs and memory
    traffic. Nothing runs (on ``cuda`` not even a GPU is needed: code generation only).

    ``x`` is a pending array, or a function of no arguments whose first materialization
    is planned instead of run; that is how to explain a reduction, which would
    otherwise run as soon as it is written:

    >>> import lazyarr as la
    >>> x = la.ones(1000, dtype=la.float32)
    >>> plan = la.explain(abs(x) * 2)
    >>> plan.bytes_read >= 4000
    True
    >>> len(la.explain(lambda: la.sum(abs(x) * 2)).kernels) >= 1
    True

    ``device="cuda"`` plans the same expression for the GPU whatever device its data is on
    (code generation only: no GPU needed), e.g. to read the fused CUDA kernel on a laptop:

    >>> print(la.explain(abs(x) * 2, device="cuda").kernels[0].name)
    lazyarr_kernel[map]
    """
    if device is not None:
        from . import _devices
        from .backends import plan_for_device
        if device not in ("cpu", "cuda"):      # "auto" as configured; anything else: ValueError
            device = _devices.resolve(device)
        with plan_for_device(device):
            return explain(x)
    from ._plan import Plan
    from ._program import Program

    if callable(x) and not isinstance(x, LazyArray):
        return _build.plan_first_materialization(x)
    node: Node = _build.operands_of((x,))[0]  # type: ignore[assignment]
    if node.data is not None:
        return Plan("none", node.device or "cpu", Program(()), [], [], 0, 0,
                    ["already materialized: nothing to run", *_fallback.notes(node)])
    plan = _build.plan(node)
    plan.notes.extend(_fallback.notes(node))
    return plan


# ------------------------------------------------------------------------------ generation
FUNCTIONS: dict[str, Callable[..., Any]] = {}
for _op in ELEMENTWISE:
    if _op.name not in ("where", "clip", "real", "imag"):
        FUNCTIONS[_op.name] = _elementwise_function(_op)
for _op in REDUCTIONS:
    FUNCTIONS[_op.name] = _reduction_function(_op)
FUNCTIONS.update(where=where, clip=clip, astype=astype, real=real, imag=imag, angle=angle)
FUNCTIONS.update(_shape_functions.FUNCTIONS)
for _name, _fn in FUNCTIONS.items():
    _fn.__name__ = _fn.__qualname__ = _name
    _fn.__module__ = "lazyarr"

ALIASES = {"absolute": "abs", "true_divide": "divide", "mod": "remainder", "bitwise_not": "invert",
           "amin": "min", "amax": "max", "conjugate": "conj", "degrees": "rad2deg",
           "radians": "deg2rad"}

#: NumPy function -> lazyarr function, for ``__array_function__``.
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {
    op.numpy: FUNCTIONS[op.name] for op in OPS.values() if op.kind == "reduction"
}
NUMPY_FUNCTIONS.update({np.where: where, np.clip: clip, np.amin: FUNCTIONS["min"],
                        np.amax: FUNCTIONS["max"], np.real: real, np.imag: imag, np.angle: angle})
NUMPY_FUNCTIONS.update(_shape_functions.NUMPY_FUNCTIONS)


@functools.cache
def signature_of(fn: Callable[..., Any]) -> inspect.Signature:
    """The signature of a native function (to tell whether it takes a call's arguments)."""
    return inspect.signature(fn)


def _install_operators() -> None:
    for opdef in ELEMENTWISE:
        stem = opdef.operator
        if stem is None:
            continue
        if opdef.nin == 1:
            setattr(LazyArray, f"__{stem}__", _unary_operator(opdef))
            continue
        setattr(LazyArray, f"__{stem}__", _binary_operator(opdef, reflected=False))
        if opdef.reflected:
            setattr(LazyArray, f"__r{stem}__", _binary_operator(opdef, reflected=True))
            setattr(LazyArray, f"__i{stem}__", _inplace_operator(opdef))
    for opdef in REDUCTIONS:
        setattr(LazyArray, opdef.name, FUNCTIONS[opdef.name])
    LazyArray.__setitem__ = _writes.setitem  # type: ignore[assignment]
    _shape_functions.install()
    LazyArray.astype = astype  # type: ignore[attr-defined]
    LazyArray.real = property(real, _part_setter("real"), doc=real.__doc__)  # type: ignore[attr-defined]
    LazyArray.imag = property(imag, _part_setter("imag"), doc=imag.__doc__)  # type: ignore[attr-defined]
    LazyArray.conj = LazyArray.conjugate = FUNCTIONS["conj"]  # type: ignore[attr-defined]
    LazyArray.clip = clip  # type: ignore[attr-defined]


def _part_setter(name: str) -> Callable[[LazyArray, Any], None]:
    """``z.real = v`` / ``z.imag = v``: a write through the view, as NumPy."""
    def setter(self: LazyArray, value: Any) -> None:
        if name == "imag" and self.dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        getattr(self, name)[...] = value
    return setter


def _unary_operator(opdef: OpDef) -> Callable[[LazyArray], LazyArray]:
    def method(self: LazyArray) -> LazyArray:
        return _wrap(_elementwise(opdef, self))
    return method


def _binary_operator(opdef: OpDef, reflected: bool) -> Callable[[LazyArray, Any], Any]:
    """``x op y`` (or, reflected, ``y op x``). The plain methods are one call from the node
    builder (every operator a user writes runs them); the special cases wrap them."""
    if reflected:
        def method(self: LazyArray, other: Any) -> Any:
            return _wrap(_elementwise(opdef, other, self))
    else:
        def method(self: LazyArray, other: Any) -> Any:
            return _wrap(_elementwise(opdef, self, other))
    if opdef.name in ("equal", "not_equal"):
        return _identity_comparison_of_non_arrays(method, opdef.name == "equal")
    if opdef.name == "power" and not reflected:
        return _scalar_power(method)
    return method


def _identity_comparison_of_non_arrays(method: Callable[[LazyArray, Any], Any],
                                       equal: bool) -> Callable[..., Any]:
    def compare(self: LazyArray, other: Any) -> Any:
        if other is None or isinstance(other, str):
            # As NumPy 2: elementwise, and no element equals such an object (all False for
            # ==, all True for !=); a materialized array, as nothing needs computing.
            return _made(self.device, "full", self.shape, not equal, dtype=np.bool_)
        return method(self, other)
    return compare


def _fast_scalar_power(base: LazyArray, exponent: Any) -> OpDef | None:
    """ndarray.__pow__'s fast path (NumPy's ``fast_scalar_power``): ``a ** 2`` is
    ``np.square(a)``; of a complex ``a`` also ``a ** -1`` is ``np.reciprocal(a)`` and
    ``a ** 0.5`` ``np.sqrt(a)``. The values differ from ``np.power``'s only for bool (int8
    where ``np.power`` gives int64) and complex (``square`` rounds once where complex power
    multiplies: an ulp); for floats the two are the same, and ``power`` stays."""
    kind = base.dtype.kind
    if type(exponent) is int and exponent == 2 and kind in "bc":
        return OPS["square"]
    if kind == "c" and (type(exponent) is int and exponent == -1):
        return OPS["reciprocal"]
    if kind == "c" and type(exponent) is float and exponent == 0.5:
        return OPS["sqrt"]
    return None


def _scalar_power(method: Callable[[LazyArray, Any], Any]) -> Callable[..., Any]:
    def power(self: LazyArray, other: Any) -> Any:
        fast = _fast_scalar_power(self, other)
        if fast is not None:
            return _wrap(_elementwise(fast, self))
        return method(self, other)
    return power


def _inplace_operator(opdef: OpDef) -> Callable[[LazyArray, Any], LazyArray]:
    def method(self: LazyArray, other: Any) -> LazyArray:
        """``x op= y`` as ``np.op(x, y, out=x)``: NumPy's checks (same_kind casting, no
        broadcasting of ``x``), then the result, cast back to ``x.dtype``, is written into
        ``x``'s memory, so views of ``x`` see it (lazyarr/_writes.py). A pending ``x`` has no
        memory anything could share: it is rebound to the new expression and stays lazy."""
        fast = _fast_scalar_power(self, other) if opdef.name == "power" else None
        result = _build.elementwise(fast, self) if fast is not None \
            else _build.elementwise(opdef, self, other)
        operand = _build.to_operand(other, self.device)  # a Python scalar stays weak
        other_dt = operand.dtype if isinstance(operand, Node) else type(operand)
        opdef.numpy.resolve_dtypes((self.dtype, other_dt, self.dtype), casting="same_kind")
        if result.shape != self.shape:
            raise ValueError(f"non-broadcastable output operand with shape {self.shape} doesn't "
                             f"match the broadcast shape {result.shape}")
        result = _build.astype(_wrap(result), self.dtype)
        if self._node.data is None and self._node.op != "scalar" and not _views.aliased(self):
            self._node = result
        else:
            _writes.assign(self, result)
        return self
    return method


_install_operators()
