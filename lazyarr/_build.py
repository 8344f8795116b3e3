"""NumPy semantics, applied when a node is built (on nodes only: the array layer above
unwraps LazyArrays into their nodes and wraps the resulting node).

Every public operation goes through here: operands are checked (device, dtype),
the result dtype comes from NumPy's own type resolution, the shape from NumPy's
broadcasting, Python scalars are converted under NEP 50. So a bad expression
raises NumPy's exception at the line that wrote it, in lazy mode as in eager.

In lazy mode the result is a new interned node whose operands already have the
dtypes of the chosen loop (explicit ``astype`` nodes are inserted where NumPy
would cast), so backends never resolve types. In eager mode the op runs at once
on the device's array library and the result is a leaf.
"""
from __future__ import annotations

import functools
import math
import operator
import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import _devices, _node
from ._config import get_config
from ._contract import sum_of_product
from ._devices import resolve as resolve_device
from ._devices import xp as xp_for
from ._dtypes import WEAK_SCALAR_TYPES, check_dtype, scalar_fits
from ._materialize import computing_is_deferred, materialize, small_now, stopping
from ._memo import bounded_insert
from ._node import Node
from ._operands import Operand, cast, common_device, made, numpy_scalar_node, operands_of, placed
from ._operands import _scalar_nodes
from ._operands import scalar_node as _scalar_node
from ._program import lower_cached
from ._registry import COMPARE, OPS, OpDef
from ._shapes import broadcast_shapes  # (cached)
from ._stack import user_stacklevel, warn_imaginary_discarded
from .backends import forced_backend, fp_errors, reference, select
from .backends._bind import bound
from ._value_ops import cast_operands as _cast_operands  # type: ignore[import-not-found]  # compiled
from ._value_ops import setup_casts  # type: ignore[import-not-found]

setup_casts(cast, _scalar_node, _scalar_nodes)


# ----------------------------------------------------------------------------- dtypes and shapes
@functools.lru_cache(maxsize=4096)
def _ufunc_dtypes(ufunc: np.ufunc, signature: tuple[Any, ...]) -> tuple[np.dtype, ...]:
    """(loop input dtypes..., output dtype) for input dtypes / weak Python scalar types."""
    dtypes = tuple(ufunc.resolve_dtypes(signature + (None,) * ufunc.nout))
    check_dtype(dtypes[-1], f"the result of {ufunc.__name__}")
    return dtypes


def _check_scalar(value: Any, dtype: np.dtype) -> None:
    if type(value) is not int:
        return
    if dtype.kind in "iu" and not scalar_fits(value, dtype):
        raise OverflowError(f"Python integer {value} out of bounds for {dtype}")
    if dtype.kind == "b" and not scalar_fits(value, np.dtype(np.int64)):
        raise OverflowError("Python int too large to convert to C long")  # NumPy's path and text


def check_weak_int(opdef: OpDef, dtype: np.dtype, value: int) -> None:
    """NumPy's conversion of a Python int operand (after an array of ``dtype``) to its loop's
    dtype, which comes before the call's other checks: ``bool_array += 2**64`` is its
    OverflowError, not the output cast's error."""
    _check_scalar(value, _ufunc_dtypes(opdef.numpy, (dtype, int))[1])


def _out_of_range_comparison(opdef: OpDef, operands: list[Operand]) -> bool | None:
    """NumPy 2 compares an integer array with an out-of-range Python int exactly: the
    answer is the same for every element (``int8_array < 300`` is all True). Returns
    that constant, or None when the comparison is an ordinary one."""
    x, v = operands
    flipped = isinstance(x, int) and not isinstance(x, bool)
    if flipped:
        x, v = v, x
    if not (isinstance(x, Node) and type(v) is int and x.dtype.kind in "iu") \
            or scalar_fits(v, x.dtype):
        return None
    x_is_less = v > 0          # out of range above (x < v everywhere) or below (x > v)
    if flipped:
        x_is_less = not x_is_less
    return {"equal": False, "not_equal": True, "less": x_is_less, "less_equal": x_is_less,
            "greater": not x_is_less, "greater_equal": not x_is_less}[opdef.name]


def resolve_ufunc(opdef: OpDef, operands: list[Operand]) -> tuple[np.dtype, ...]:
    """Loop dtypes for a ufunc op, with NumPy's checks of Python scalar operands."""
    dtypes = _ufunc_dtypes(opdef.numpy, tuple(x.dtype if type(x) is Node else type(x)
                                              for x in operands))
    if opdef.kind == "output":          # one output of frexp/modf: its dtype alone
        dtypes = dtypes[:opdef.nin] + (dtypes[opdef.nin + opdef.output],)
    for x, dt in zip(operands, dtypes):
        if type(x) is int:
            _check_scalar(x, dt)
    if opdef.name == "power" and dtypes[0].kind in "iu" and type(operands[1]) is int \
            and operands[1] < 0 and not _no_elements(operands):
        raise ValueError("Integers to negative integer powers are not allowed.")
    return dtypes


def _no_elements(operands: list[Operand]) -> bool:
    """The operands broadcast to nothing (an empty array among them): NumPy's loop, which
    makes the value checks of integer powers, never runs."""
    return any(type(x) is Node and 0 in x.shape for x in operands)


# ----------------------------------------------------------------------------- building
def _eager(opdef: OpDef, device: str, operands: list[Any], arg: Any = None) -> Node:
    """Run one op now with the device's array library (eager mode).

    Array operands are passed as they are (the library casts inside its loop, as a
    NumPy user's code would); Python scalars arrive already converted to their loop dtype.
    """
    # A constant (a NumPy scalar, or a 0-d host array that went along) is a 0-d array on the
    # op's device: CuPy takes no host arrays.
    values = [(_devices.asarray(device, x.arg) if x.op == "scalar" else materialize(x))
              if isinstance(x, Node) else x for x in operands]
    data = reference.apply(xp_for(device), opdef.name, arg, values)
    return _node.leaf(_devices.asarray(device, data), device)


def _eager_mode() -> bool:
    return get_config().mode == "eager"


class _Rule(NamedTuple):
    """What NumPy's rules decided for one op on operands of given dtypes, shapes, devices.
    (lazyarr/_value_ops.pyx's ``_lazy_node`` reads the fields by index: keep their order.)"""

    dtypes: tuple[np.dtype, ...]   # loop dtypes: one per operand, then the result's
    shape: tuple[int, ...]
    device: str | None             # None: only constants, so the configured one (each call)
    fast: bool                     # the fast path may build it: see ``_fast_rule``
    uncast: bool                   # every operand a node already of its loop dtype


# (op, then per operand: (dtype, shape, device) of a node, or the type of a Python scalar)
#   -> _Rule. Every op a user writes goes through here, so the common case (LazyArrays and
#   Python scalars) skips the general resolution after its first time.
_rules: dict[tuple[Any, ...], _Rule] = {}
_MAX_RULES = 8192      # (keyed by shapes too: the oldest goes first past this, _memo.bounded_insert)
# (op, then per operand: (dtype, device) of a node, or the type of a Python scalar) -> the
#   part of a _Rule that no shape changes (its shape ``()``): ``_new_rule``'s for new shapes.
_typings: dict[tuple[Any, ...], _Rule] = {}


def elementwise(opdef: OpDef, *args: Any) -> Node:
    """An elementwise op with NumPy's semantics: a new node (lazy) or a computed leaf (eager).
    The arguments: nodes, Python scalars, or anything else array-like (a new leaf).

    The fast path: every argument a node or a Python float/int/complex, and a memoized rule for
    their types that needs no per-call check. The rest (and each first time) takes
    ``_elementwise``.
    """
    key: list[Any] = [opdef.name]
    operands: list[Operand] = list(args)
    for i, a in enumerate(args):
        t = type(a)
        if t is Node:
            key += (a.dtype, a.shape, a.device)
        elif t is float or t is int or t is complex:
            key.append(t)
        elif isinstance(a, np.generic) and opdef.name != "power" and \
                (node := numpy_scalar_node(a)) is not None:
            # (a NumPy scalar: a constant node of its dtype; not for power, whose integer
            # exponents _elementwise checks at each call)
            operands[i] = node
            key += (node.dtype, node.shape, node.device)
        else:
            return _elementwise(opdef, args)
    rule = _rules.get(tuple(key))
    if rule is None or not rule.fast:
        return _elementwise(opdef, args)
    dtypes, shape, device, _, uncast = rule
    if get_config().mode == "eager" or not shape and _computed_on_cpu(device, operands):
        return _eager_elementwise(opdef, device, operands, dtypes, shape)  # type: ignore[arg-type]
    src = tuple(operands) if uncast else _cast_operands(operands, dtypes)
    return _bounded(_node.op_node(opdef.name, dtypes[-1], shape, device, src))  # type: ignore[arg-type]


def _fast_rule(opdef: OpDef, operands: list[Operand], dtypes: tuple[np.dtype, ...],
               device: str | None) -> bool:
    """Whether ``elementwise``'s fast path may build this op from its rule alone. Not for
    ``where``, nor where the device is the configured one (only constants), nor for Python
    int operands whose value NumPy checks at each call: out of range for an integer or bool
    loop (``int8_array + 300``), ``** -1``, comparisons out of range."""
    if opdef.name == "where" or device is None:
        return False
    if opdef.scalar_rule == COMPARE or opdef.name == "power":
        return not any(type(x) is int for x in operands)
    return not any(type(x) is int and dt.kind in "iub" for x, dt in zip(operands, dtypes))


def _elementwise(opdef: OpDef, args: tuple[Any, ...]) -> Node:
    if len(args) != opdef.nin:
        raise TypeError(f"{opdef.name}() takes {opdef.nin} array argument(s), got {len(args)}")
    if opdef.name != "where" and all(type(a) in WEAK_SCALAR_TYPES for a in args) and \
            any(type(a) is int and not scalar_fits(a, _INT64) for a in args):
        device = resolve_device(None)
        return _node.leaf(_devices.asarray(device, _numpy_on_python_scalars(opdef, args)), device)
    operands = operands_of(args)
    key: list[Any] = [opdef.name]
    has_int = False
    for x in operands:
        if type(x) is Node:
            key += (x.dtype, x.shape, x.device)
        else:
            key.append(type(x))
            has_int = has_int or type(x) is int
    if has_int and opdef.scalar_rule == COMPARE:
        constant = _out_of_range_comparison(opdef, operands)
        if constant is not None:   # x == x is all True for integers; x != x all False
            x = next(n for n in operands if isinstance(n, Node))
            return elementwise(OPS["equal" if constant else "not_equal"], x, x)
    rule = _rules.get(tuple(key))
    if rule is None:
        rule = _new_rule(opdef, operands)
        bounded_insert(_rules, tuple(key), rule, _MAX_RULES)
    elif has_int and opdef.name != "where":
        resolve_ufunc(opdef, operands)   # value checks of Python ints (out of range, ** -1)
    dtypes, shape, device = rule.dtypes, rule.shape, rule.device or common_device(operands)
    if opdef.name == "power" and dtypes[0].kind in "iu":
        _check_integer_power(operands)
    if opdef.name == "where":
        return _where(opdef, operands, shape, device)
    if get_config().mode == "eager" or not shape and _computed_on_cpu(device, operands):
        return _eager_elementwise(opdef, device, operands, dtypes, shape)
    return _bounded(_node.op_node(opdef.name, dtypes[-1], shape, device, _cast_operands(operands, dtypes)))


def _bounded(node: Node) -> Node:
    """A pending 0-d ``node`` whose DAG outgrew a structure id (more than ``MAX_LEAVES``
    inputs): its pending operands are computed first, so it reads at most a few inputs.

    What this bounds is a loop-carried value on a device where 0-d ops stay lazy (cuda):
    ``s = s + a[i] * b[i]`` grew one node and two inputs per iteration, and the kernel that
    finally computed ``s`` had thousands of inputs (2,000 iterations on the H200: over 300 s,
    asv ``ElementLoop``). Now every ~8 iterations two small kernels of one repeated structure
    run (cached after the first). On the CPU a 0-d op of computed operands runs at once
    (:func:`_computed_on_cpu`) and never gets here with pending operands from a loop."""
    if node.shape or node.sid is not None or node.data is not None or computing_is_deferred():
        return node
    pending = [c for c in node.src if c.data is None and c.src]
    # the biggest first (no leaves known: past the bound itself), and only as many as it
    # takes: the loop's ``s`` is computed, ``a[i] * b[i]`` (two leaves) stays in the next
    # kernel (it was a launch of its own every ~8 iterations: half of the launches)
    pending.sort(key=lambda c: (c.leaves is not None, -len(c.leaves or ())))
    for c in pending:
        materialize(c)
        if _node.redescribed(node).sid is not None:
            break
    return node


def elementwise_typed(opdef: OpDef, args: tuple[Any, ...], signature: Any, casting: str) -> Node:
    """A one-output ufunc op with NumPy's ``dtype=``/``signature=`` and ``casting=``: the loop
    NumPy picks under them (``ufunc.resolve_dtypes``: its own errors, ``UFuncTypeError`` for a
    cast the casting rule forbids), the operands cast to it, fused like any other op."""
    if len(args) != opdef.nin:
        raise TypeError(f"{opdef.name}() takes {opdef.nin} array argument(s), got {len(args)}")
    operands = operands_of(args)
    ufunc = opdef.numpy
    types = tuple(x.dtype if type(x) is Node else type(x) for x in operands)
    typing = {"signature": signature} if signature is not None else {}
    dtypes = tuple(ufunc.resolve_dtypes(types + (None,) * ufunc.nout, casting=casting, **typing))
    check_dtype(dtypes[-1], f"the result of {opdef.name}")
    for x, dt in zip(operands, dtypes):
        if type(x) is int:
            _check_scalar(x, dt)
    if opdef.name == "power" and dtypes[0].kind in "iu":
        _check_integer_power([operands[0], operands[1] if type(operands[1]) is Node else
                              _scalar_node(operands[1], dtypes[1])])
    device = common_device(operands)
    shape = broadcast_shapes(*(x.shape for x in operands if isinstance(x, Node)))
    cast_operands = _cast_operands(operands, dtypes)
    if get_config().mode == "eager" or not shape and _computed_on_cpu(device, operands):
        # (the operands already of the loop's dtypes: NumPy's call picks that loop)
        return _eager(opdef, device, list(cast_operands))
    return _bounded(_node.op_node(opdef.name, dtypes[-1], shape, device, cast_operands))


def _computed_on_cpu(device: str | None, operands: list[Operand]) -> bool:
    """A 0-d op whose operands are all computed runs at once, on the CPU, even in lazy mode:
    a loop-carried scalar (``s = s + a[i] * b[i]``) then never grows a graph, and NumPy's loop
    on one element costs less than building, lowering and running a kernel. (On cuda a 0-d
    op stays lazy: a launch per op would cost more than the graph.)"""
    if device != "cpu" or computing_is_deferred():   # (la.explain, la.jit's trace)
        return False
    for x in operands:
        if type(x) is Node and x.data is None and x.op != "scalar":
            return False
    return True


_INT64 = np.dtype(np.int64)


def _numpy_on_python_scalars(opdef: OpDef, args: tuple[Any, ...]) -> np.ndarray:
    """An op on Python numbers only, one of them an int beyond int64: NumPy's own answer
    (``add(1.5, 2**70)`` is float64 1.18e21; ``add(1, 2**70)`` an OverflowError), as a 0-d
    array (its dtype checked: an object result is not supported)."""
    with np.errstate(all="ignore"):
        value = np.asarray(opdef.numpy_value(*args))
    check_dtype(value.dtype, f"the result of {opdef.name}")
    return value


def _check_integer_power(operands: list[Operand]) -> None:
    """NumPy's check of an integer power whose exponent is known at the line: a constant
    (``x ** np.int8(-1)``; Python ints are checked by ``resolve_ufunc``), unless there is no
    element to raise."""
    exponent = operands[1]
    if type(exponent) is Node and exponent.op == "scalar" and exponent.arg < 0 \
            and not _no_elements(operands):
        raise ValueError("Integers to negative integer powers are not allowed.")


#: Float ops that eager mode on cuda runs as lazyarr's own one-op kernel (NumPy's values) instead
#: of CuPy's ufunc. CuPy compiles every kernel with ``-ftz=true`` (cupy/cuda/compiler.py
#: ``_compile_with_cache_cuda``), so float32/float16 subnormals are read as zero: ``log`` of a
#: subnormal is -inf (NumPy: finite) and of a negative subnormal -inf (NumPy: NaN). Its
#: maximum/minimum/fmax/fmin are CUDA's fmax/fmin, whose choice between -0.0 and +0.0 is not
#: NumPy's. The H200 run of tests/test_gpu_eager.py (2026-12-01) found more: multiply, divide,
#: reciprocal, power and arctan2 flush float32 subnormal *results* to zero, floor_divide and
#: remainder put NaN where NumPy gives ±inf or a signed zero (and the reverse), hypot of float64
#: overflows to inf where NumPy's is finite. (docs/gpu-backend.rst lists the deviations that
#: remain.)
EAGER_OWN_KERNEL_ON_CUDA = frozenset({"log", "log2", "log10", "log1p",
                                      "maximum", "minimum", "fmax", "fmin",
                                      "multiply", "divide", "reciprocal", "power", "arctan2",
                                      "floor_divide", "remainder", "hypot"})


def _eager_elementwise(opdef: OpDef, device: str, operands: list[Operand],
                       dtypes: tuple[np.dtype, ...], shape: tuple[int, ...]) -> Node:
    if device == "cuda" and opdef.name in EAGER_OWN_KERNEL_ON_CUDA and dtypes[-1].kind == "f":
        node = _node.op_node(opdef.name, dtypes[-1], shape, device,
                             _cast_operands(operands, dtypes))
        return _node.leaf(select(device, "lazy").run(lower_cached(node)), device)
    # (a Python number through its constant node: NumPy's report of one that overflows)
    return _eager(opdef, device, [x if type(x) is Node else _scalar_node(x, dt).arg
                                  for x, dt in zip(operands, dtypes)])


def _new_rule(opdef: OpDef, operands: list[Operand]) -> _Rule:
    """Resolve an op on these operands with NumPy's rules (raising NumPy's errors): the
    loop dtypes, device and flags from ``_typings`` where operands of these dtypes were seen
    before with other shapes (a loop whose slices shrink every step: covariance's
    ``data[:, i] @ data[:, i:M] / c``, a new ``_rules`` key at every step), then the shape."""
    key = (opdef.name, *[(x.dtype, x.device) if type(x) is Node else type(x) for x in operands])
    typing = _typings.get(key)
    if typing is None:
        typing = _typings[key] = _new_typing(opdef, operands)
    elif opdef.name != "where" and any(type(x) is int for x in operands):
        resolve_ufunc(opdef, operands)   # value checks of Python ints (out of range, ** -1)
    shape = broadcast_shapes(*(x.shape for x in operands if isinstance(x, Node)))
    return _Rule(typing.dtypes, shape, typing.device, typing.fast, typing.uncast)


def _new_typing(opdef: OpDef, operands: list[Operand]) -> _Rule:
    """The part of an op's :class:`_Rule` that depends on its operands' dtypes, devices and
    Python scalar types only (its shape left ``()``)."""
    device: str | None = common_device(operands)
    # (NumPy resolves the loop before it broadcasts: with both wrong, its error is the dtypes')
    dtypes = () if opdef.name == "where" else resolve_ufunc(opdef, operands)
    # Only constants: the device is the configured one, at each call (so not cached).
    if not any(type(x) is Node and x.device is not None for x in operands):
        device = None
    uncast = all(type(x) is Node and x.dtype == dt for x, dt in zip(operands, dtypes))
    return _Rule(dtypes, (), device, _fast_rule(opdef, operands, dtypes, device), uncast)


def _small_computed(shape: tuple[int, ...], device: str, operands: Any) -> bool:
    """Whether an op of these operands runs at once in lazy mode as the small operators do
    (docs/guide.rst, "Small arrays"): on the CPU, every operand computed (or a constant), a
    result of at most ``eager_max_size`` elements (so its operands too), nothing explained
    or traced."""
    if device != "cpu":
        return False
    for x in operands:
        if type(x) is Node and x.data is None and x.op != "scalar":
            return False
    return small_now(math.prod(shape))


def _where(opdef: OpDef, operands: list[Operand], shape: tuple[int, ...], device: str) -> Node:
    cond, x, y = operands
    values = [v.dtype if isinstance(v, Node) else v for v in (x, y)]
    dtype = check_dtype(np.result_type(*values), "the result of where")
    # A Python scalar is cast with wrap-around, as np.where does (np.where(c, int8, 300) -> 44).
    values = [v if isinstance(v, Node) else np.asarray(v).astype(dtype)[()] for v in (x, y)]
    if _eager_mode() or _small_computed(shape, device, (cond, x, y)):
        return _eager(opdef, device, [cond, *values])
    cond_node = cast(cond, np.dtype(bool)) if isinstance(cond, Node) else \
        _scalar_node(bool(cond), np.dtype(bool))
    src = (cond_node, *(cast(v, dtype) if isinstance(v, Node) else _node.scalar(v)
                        for v in values))
    return _node.op_node(opdef.name, dtype, shape, device, src)


def clip(x: Any, min: Any = None, max: Any = None) -> Node:
    """``np.clip``: exactly NumPy's dispatch (``numpy/_core/_methods.py::_clip``).

    Python int bounds beyond an integer dtype's range are dropped; with one bound
    it is ``maximum``/``minimum``, with both the ``clip`` ufunc (which, unlike
    ``minimum(maximum(..))``, keeps the sign of -0.0).
    """
    node = operands_of((x,))[0]
    assert isinstance(node, Node)
    if node.dtype.kind in "iu":
        info = np.iinfo(node.dtype)
        if type(min) is int and min <= info.min:
            min = None
        if type(max) is int and max >= info.max:
            max = None
    if min is None and max is None:
        return elementwise(OPS["positive"], node)
    if min is None:
        return elementwise(OPS["minimum"], node, max)
    if max is None:
        return elementwise(OPS["maximum"], node, min)
    return elementwise(OPS["clip"], node, min, max)


def astype(x: Any, dtype: Any) -> Node:
    node = placed(operands_of((x,))[0])  # type: ignore[arg-type]
    dt = check_dtype(dtype, "astype")
    if node.dtype.kind == "c" and dt.kind != "c" and dt.kind != "b":
        # NumPy warns when the cast runs; a lazy cast runs later, so warn here, at the line.
        warn_imaginary_discarded()
    if _eager_mode():
        return _eager(OPS["astype"], node.device or "cpu", [node], dt)
    return cast(node, dt)


def complex_part(name: str, x: Any) -> Node:
    """``np.real`` / ``np.imag``. Of a complex array: its part, of the part's float dtype
    (float32 of complex64). Of a real one, as NumPy: ``real`` is the array itself, ``imag``
    zeros of its dtype."""
    node = placed(operands_of((x,))[0])  # type: ignore[arg-type]
    if node.dtype.kind != "c":
        if name == "real":
            return node
        return made(node.device, "zeros", node.shape, dtype=node.dtype)
    dtype = np.dtype(node.dtype.char.lower())          # F -> f (complex64 -> float32), D -> d
    if _eager_mode() or not node.shape and _computed_on_cpu(node.device, [node]):
        return _eager(OPS[name], node.device or "cpu", [node])
    return _node.op_node(name, dtype, node.shape, node.device, (node,))


# ----------------------------------------------------------------------------- reductions
@functools.lru_cache(maxsize=1024)
def _reduction_dtype(op: str, dtype: np.dtype, dtype_arg: np.dtype | None, ndim: int,
                     axes: tuple[int, ...] | None, keepdims: bool) -> np.dtype:
    """NumPy's result dtype, asked of NumPy itself on a one-element array of the same ndim,
    axes and keepdims: NumPy's own errors come out here, at the line that wrote the reduction
    (``std(dtype=int8)`` fails only when the result is an array: its ``sqrt(out=)`` cannot cast)."""
    opdef = OPS[op]
    kw: dict[str, Any] = {"dtype": dtype_arg} if dtype_arg is not None else {}
    if axes is not None:
        kw["axis"] = axes if opdef.takes_axis_tuple else axes[0]
    if keepdims:
        kw["keepdims"] = True
    with np.errstate(all="ignore"):
        probe = opdef.numpy(np.ones((1,) * ndim, dtype), **kw)
    return check_dtype(np.asarray(probe).dtype, f"the result of {op}")


def _normalize_axes(opdef: OpDef, axis: Any, ndim: int) -> tuple[int, ...] | None:
    if axis is None:
        return None
    # As NumPy: an int or (where the reduction takes several axes) a tuple of ints; anything
    # else (0.5, "0", [0], True) is a TypeError naming the type, not "... is not iterable".
    axes = axis if isinstance(axis, tuple) and opdef.takes_axis_tuple else (axis,)
    if any(isinstance(a, bool) for a in axes):
        raise TypeError("an integer is required for the axis")
    axes = normalize_axis_tuple(tuple(map(operator.index, axes)), ndim)
    return axes if not opdef.takes_axis_tuple else tuple(sorted(axes))


def _reduction_spec(op: str, dtype: np.dtype, in_shape: tuple[int, ...], axis: Any, keepdims: bool,
                    dtype_kw: Any, ddof: Any) -> tuple[np.dtype, tuple[int, ...], tuple[Any, ...]]:
    """(result dtype, result shape, node arg) of a reduction, with NumPy's errors."""
    opdef = OPS[op]
    if not in_shape and (axis == 0 or axis == -1) and type(axis) is int and op in _AXIS_ZERO_OF_0D:
        # NumPy's ufunc reductions (and argmax/argmin) take axis 0 or -1 of a 0-d array as
        # reducing nothing (np.sum(0-d, axis=0) is the element, in sum's dtype); mean, var,
        # std and a tuple (0,) raise AxisError
        axis = () if opdef.takes_axis_tuple else None
    axes = _normalize_axes(opdef, axis, len(in_shape))
    if dtype_kw is not None and not opdef.takes_dtype:
        raise TypeError(f"{opdef.name}() got an unexpected keyword argument 'dtype'")
    dtype_arg = check_dtype(dtype_kw, f"{opdef.name}(dtype=...)") if dtype_kw is not None else None
    result_dtype = _reduction_dtype(opdef.name, dtype, dtype_arg, len(in_shape), axes, keepdims)
    if opdef.takes_ddof and not (type(ddof) is int and 0 <= ddof < 1 << 31):
        _check_ddof(opdef, ddof)
    reduced = range(len(in_shape)) if axes is None else axes
    if opdef.identity is None and (any(in_shape[a] == 0 for a in reduced)
                                   or axes is None and 0 in in_shape):
        name = {"min": "minimum", "max": "maximum"}.get(opdef.name)
        if name:
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        raise ValueError(f"attempt to get {opdef.name} of an empty sequence")
    if not opdef.takes_axis_tuple and axes is None:
        shape: tuple[int, ...] = (1,) * len(in_shape) if keepdims else ()
    else:
        kept = set(reduced)
        shape = tuple(1 if i in kept else n for i, n in enumerate(in_shape) if keepdims or i not in kept)
    return result_dtype, shape, (axes, keepdims, dtype_arg, ddof if opdef.takes_ddof else 0)


_AXIS_ZERO_OF_0D = frozenset({"sum", "prod", "max", "min", "any", "all", "argmax", "argmin"})


def _check_ddof(opdef: OpDef, ddof: Any) -> None:
    """NumPy's errors for a ``ddof`` it cannot use (``2**70``: OverflowError; ``"1"``: a
    TypeError), asked of NumPy itself on a two-element array."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opdef.numpy(np.ones(2), ddof=ddof)


def _warn_empty_slices(op: str, shape: tuple[int, ...], axes: tuple[int, ...] | None,
                       ddof: Any, out_shape: tuple[int, ...]) -> int:
    """NumPy's warnings of mean/var/std (numpy/_core/_methods.py) for slices of no element
    (mean) or of at most ``ddof`` elements (var, std): known from the shape alone, so given
    here, at the line that wrote the reduction, whichever backend computes it (in eager
    mode NumPy's own give them). Over no element at all NumPy then divides 0 by 0 (once for
    a mean, twice for a variance: the mean, then the sum of squares), which is its "invalid
    value encountered in divide" (``scalar divide`` for a 0-d result): reported here too, as
    ``np.errstate`` says (the kernels compute those NaNs quietly; the reference backend,
    which runs NumPy's functions, keeps NumPy's own quiet: ``reference._empty_slices``).
    Returns the slices' element count."""
    count = 1
    for i in range(len(shape)) if axes is None else axes:
        count *= shape[i]
    divisions = 0
    if op == "mean" and count == 0:
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=user_stacklevel())
        divisions = 1
    elif op != "mean" and ddof >= count:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning,
                      stacklevel=user_stacklevel())
        divisions = 2 if count == 0 else 0    # (0 < count <= ddof: the values decide)
    if divisions and math.prod(out_shape):    # (an empty result divides nothing)
        fp_errors.report([(fp_errors.INVALID, "divide")] * (divisions - 1)
                         + [(fp_errors.INVALID, fp_errors.divide_words(out_shape))])
    return count


# Keyed on the arguments' values: only for arguments whose values say everything (``axis``
# an int or a tuple of ints, ``keepdims`` a bool), as 1 == 1.0 == True would otherwise let
# ``axis=1.0`` hit the entry of ``axis=1`` (NumPy: TypeError).
_reduction_spec_cached = functools.lru_cache(maxsize=4096)(_reduction_spec)


def ufunc_keepdims(keepdims: Any) -> bool:
    """``keepdims`` (not a bool) as NumPy's ufunc reductions read it (and ``mean``/``var``/
    ``std``, which call them): a C int, so an integer (TypeError for 1.0 or None) and an
    OverflowError past the C int's range (``2**70``)."""
    value = operator.index(keepdims)
    if not -2**31 <= value < 2**31:
        raise OverflowError("Python int too large to convert to C "
                            + ("int" if -2**63 <= value < 2**63 else "long"))
    return bool(value)


def _cacheable(axis: Any, keepdims: Any) -> bool:
    if type(keepdims) is not bool:
        return False
    if axis is None or type(axis) is int:
        return True
    return type(axis) is tuple and all(type(a) is int for a in axis)


def reduce(opdef: OpDef, x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None,
           ddof: int | float = 0, held: bool = False) -> Node:
    """Build a reduction node and materialize it (a reduction is a materialization point).
    ``held``: a variable of the caller still holds ``x`` (the store rule below)."""
    key = None
    if type(x) is Node and type(x.data) is np.ndarray and x.device == "cpu" \
            and type(ddof) is int and _cacheable(axis, keepdims):
        # A computed CPU array with arguments whose values say everything: its runner,
        # bound by an earlier call of the same key, runs it without the spec, the node or
        # the lowering (a hit had no error; warnings of mean/var/std are given again).
        data = x.data
        # (``_value_ops.bound_reduction`` looks up the same key, compiled, for calls without
        # keywords: one key, written twice; tests/test_small_eager.py checks that it hits)
        key = (opdef.name, data.dtype, data.shape, data.strides, data.flags.aligned, axis,
               keepdims, dtype, ddof, forced_backend())
        try:
            hit = _bound_reductions.get(key)
        except TypeError:        # unhashable (dtype=[...]): the path below raises NumPy's error
            hit = key = None
        if hit is not None and not _eager_mode() and not computing_is_deferred():
            run, warn = hit
            if warn is not None:
                _warn_empty_slices(*warn)
            return _node.leaf(run([data]), "cpu")
    # (a node with a device, and the default axis and keepdims, tested inline: ``placed``'s
    # and ``_cacheable``'s frames were ~1,000 instructions of a pending chain's ``la.sum``)
    if type(x) is Node and x.device is not None:
        node = x
    else:
        node = placed(x if type(x) is Node else operands_of((x,))[0])  # type: ignore[arg-type]
    if axis is None and keepdims is False or _cacheable(axis, keepdims):
        try:
            spec = _reduction_spec_cached(opdef.name, node.dtype, node.shape, axis, keepdims,
                                          dtype, ddof)
        except TypeError:        # unhashable (dtype=[...]): the uncached path raises NumPy's error
            spec = _reduction_spec(opdef.name, node.dtype, node.shape, axis, keepdims, dtype, ddof)
    else:                        # NumPy's errors (axis=1.0, keepdims="no", axis=[0]), uncached
        spec = _reduction_spec(opdef.name, node.dtype, node.shape, axis,
                               bool(keepdims) if opdef.name in ("argmax", "argmin")  # (its truth)
                               else ufunc_keepdims(keepdims), dtype, ddof)
    result_dtype, shape, arg = spec
    device = node.device or "cpu"
    if get_config().mode == "eager":     # (_eager_mode, without its frame)
        return _eager(opdef, device, [node], arg)
    warn = None
    if opdef.name in ("mean", "var", "std"):
        warn = (opdef.name, node.shape, arg[0], arg[3], shape)
        count = _warn_empty_slices(*warn)
        if opdef.name != "mean" and 0 < count <= arg[3] and result_dtype.kind == "f" \
                and not computing_is_deferred():
            return _no_degrees_of_freedom(opdef.name, node, device, result_dtype, shape, arg, count)
    if node.data is not None and device == "cpu":
        run = _bound_reduction(opdef.name, result_dtype, shape, arg, node, key, warn)
        if run is not None:
            return _node.leaf(run([node.data]), "cpu")
    if opdef.name == "sum" and device == "cpu" and node.op == "multiply" \
            and not computing_is_deferred():
        contracted = sum_of_product(node, arg[0], result_dtype, shape)
        if contracted is not None:        # (a broadcast product summed: one matrix product)
            return contracted
    if held and node.data is None and node.src and not stopping() \
            and recompute_weight(node) >= store_min_weight(node):
        materialize(node)      # the store rule: computed once, read by this and later uses
    result = _node.op_node(opdef.name, result_dtype, shape, device, (node,), arg)
    materialize(result)
    return result


def _no_degrees_of_freedom(op: str, node: Node, device: str, result_dtype: np.dtype,
                           shape: tuple[int, ...], arg: Any, count: int) -> Node:
    """``var``/``std`` of slices of 1 to ``ddof`` elements, as NumPy computes them
    (numpy/_core/_methods.py, ``_var``): each slice's sum of squared deviations divided by
    zero, so inf, or NaN where the squares sum to 0 (or are NaN), with the warnings that
    division raises: "divide by zero" where a sum is finite and positive, "invalid value"
    where it is 0 (after :func:`_warn_empty_slices`'s "Degrees of freedom <= 0"). The sums
    are lazyarr's ``var`` with ``ddof = count - 1`` (divided by one: exact); the division
    runs here, where its values are known."""
    sums = _node.op_node("var", result_dtype, shape, device, (node,), arg[:3] + (count - 1,))
    materialize(sums)
    data = sums.data
    xp = xp_for(device)
    raised = (fp_errors.INVALID if bool(xp.any(data == 0)) else 0) \
        | (fp_errors.DIVIDE if bool(xp.any(xp.isfinite(data) & (data != 0))) else 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = xp.true_divide(data, 0)
        if op == "std":
            out = xp.sqrt(out)
    fp_errors.report([(raised, fp_errors.divide_words(shape))])
    return _node.leaf(xp.asarray(out, dtype=result_dtype), device)


#: Reductions of computed CPU arrays, each bound once per backend, op, arguments and input
#: layout: the node, the lowering and the launch set-up (``_bind.bound``, la.jit's replay
#: step) happen once, so a repeated ``la.sum(row)`` or ``x.max()`` runs the same kernel (or
#: NumPy's loop, for the reductions it runs faster), with the same bits, without rebuilding
#: them. Keyed by the call's own arguments where :func:`reduce` can look them up before the
#: spec (``key``), else by the spec's. Values: (runner, the arguments of
#: :func:`_warn_empty_slices` or None).
_bound_reductions: dict[tuple[Any, ...], Any] = {}
_MAX_BOUND = 1024


def _bound_reduction(op: str, result_dtype: np.dtype, shape: tuple[int, ...], arg: Any,
                     node: Node, key: tuple[Any, ...] | None = None,
                     warn: tuple[Any, ...] | None = None) -> Any:
    """The bound runner of reduction ``op`` of the computed CPU ``node``, or None (not an
    ndarray, or a call explained or traced: those build the node)."""
    data = node.data
    if type(data) is not np.ndarray or computing_is_deferred():
        return None
    if key is None:
        key = ("spec", op, result_dtype, arg, data.dtype, data.shape, data.strides,
               data.flags.aligned, forced_backend())
    hit = _bound_reductions.get(key)
    if hit is None:
        result = _node.op_node(op, result_dtype, shape, "cpu", (node,), arg)
        # (checked: the key holds the input's dtype and alignment, and it is an ndarray)
        hit = (bound(select("cpu", "lazy"), lower_cached(result), checked=True), warn)
        if len(_bound_reductions) >= _MAX_BOUND:
            _bound_reductions.clear()
        _bound_reductions[key] = hit
    return hit[0]


#: The store rule for reductions (docs/design.rst, "Store or recompute"). A reduction of a
#: pending array that a variable still holds (``y.mean()`` with ``y`` used again, as in
#: ``(y - y.mean()) / y.std()``) computes the array first and keeps it, when recomputing its
#: expression for one more use would cost at least the store: one write of the array and one
#: read. Weights per element: a transcendental op 8, arithmetic 1 (:func:`recompute_weight`).
#: Measured on the 2-core CPU (docs/notes/cpu.rst, "The store rule's weight"): at 2^24
#: elements the store costs 6.1 ms in float32 and 11.2 in float64, an ``exp`` 2.8 and 5.4,
#: so a store that goes to memory pays for one reuse from about two transcendental ops
#: (``exp(sin(x) * 3)``, weight 17); softmax's ``exp(x - max)`` (9) is recomputed (stored,
#: NPBench's softmax took 278 ms at preset L, recomputed 199). An array of up to
#: STORE_CACHED_BYTES stays in the cache between its write and its read, and its store pays
#: from one transcendental op (softmax rows of 2^20 float32: stored 0.57 ms, recomputed 0.70;
#: of 2^23: 10.3 against 7.7).
STORE_MIN_WEIGHT = 16
STORE_MIN_WEIGHT_CACHED = 8
STORE_CACHED_BYTES = 16 << 20
_MAX_WEIGHED = 64    # interior nodes weighed at most (a bigger expression is stored anyway)


def store_min_weight(node: Node) -> int:
    """The recompute weight from which storing ``node`` pays for one more use of it."""
    nbytes = math.prod(node.shape) * node.dtype.itemsize
    return STORE_MIN_WEIGHT_CACHED if nbytes <= STORE_CACHED_BYTES else STORE_MIN_WEIGHT


def recompute_weight(node: Node) -> int:
    """The per-element cost of recomputing ``node``'s pending expression: transcendental ops
    8, every other op 1, each distinct interior node once (computed ones are inputs)."""
    weight, seen, stack = 0, set(), [node]
    while stack:
        n = stack.pop()
        if id(n) in seen or n.data is not None or not n.src:
            continue
        seen.add(id(n))
        if len(seen) > _MAX_WEIGHED:
            return weight + STORE_MIN_WEIGHT
        op = OPS.get(n.op)
        weight += 8 if op is not None and op.transcendental else 1
        stack.extend(n.src)
    return weight
