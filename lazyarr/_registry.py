"""The op registry: the single source of truth for every operation lazyarr knows.

Everything else is generated from :data:`OPS`: the module functions and
``LazyArray`` operators (``_api``), the eager and reference backends (they call
``OpDef.numpy``), the fused backends (they look ops up here by name), the docs'
op table and the test parameters.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._philox import philox_random32, philox_random64  # type: ignore[import-not-found]  # compiled

#: How a Python int operand that does not fit the operand dtype is treated.
STRICT = "strict"    # OverflowError, as NumPy ufuncs (``int8_array + 300``)
COMPARE = "compare"  # comparisons: NumPy 2 compares the exact values, so widen the array operand
WRAP = "wrap"        # ``np.where`` casts the scalar with wrap-around, as NumPy does


@dataclass(frozen=True)
class OpDef:
    """One operation.

    name:      public name (``la.<name>``), also the node/program opcode.
    kind:      ``"elementwise"``, ``"cast"``, ``"reduction"``, ``"output"`` (one output of a
               NumPy ufunc with two, ``frexp`` or ``modf``: an elementwise op of its own, so
               each output fuses; the public function returns the pair, :data:`TWO_OUTPUTS`)
               or ``"generator"`` (the uniform numbers of a fused random draw: internal, no
               public function; lazyarr/_random_fused.py).
    nin:       number of array operands.
    numpy:     the NumPy function with the semantics we copy; its ufunc type
               resolution is the dtype rule of every ufunc op.
    doc:       one-line summary for docstrings and the docs table.
    category:  docs grouping.
    operator:  Python operator dunder stem (``"add"`` -> ``__add__``/``__radd__``/``__iadd__``).
    reflected: whether the operator has a reflected form (comparisons do not: Python swaps them).
    scalar_rule: see STRICT / COMPARE / WRAP.
    identity:  reductions: the value of an empty reduction (None: empty input is an error).
    takes_dtype / takes_ddof / takes_axis_tuple: reductions: which NumPy keywords apply.
    output:    ``"output"`` ops: which output of the ufunc ``numpy`` the op is (0 or 1).
    transcendental: a libm-style function (``exp``, ``sin``, ``power`` …) whose float result
               is not correctly rounded, so implementations (NumPy's SIMD and scalar loops,
               libdevice) differ by ulps: tests compare it within a tolerance, and the cuda
               backend counts it as compute-heavy.

    How each backend computes an op lives in that backend (the cuda backend's expression
    templates are ``lazyarr/backends/cuda/templates.py``), not here.
    """

    name: str
    kind: str
    nin: int
    numpy: Callable[..., Any]
    doc: str
    category: str = "math"
    operator: str | None = None
    reflected: bool = True
    scalar_rule: str = STRICT
    identity: object = None
    takes_dtype: bool = False
    takes_ddof: bool = False
    takes_axis_tuple: bool = True
    transcendental: bool = False
    output: int = 0

    @property
    def is_ufunc(self) -> bool:
        return isinstance(self.numpy, np.ufunc)

    def numpy_value(self, *args: Any) -> Any:
        """NumPy's value of this op (of an ``"output"`` op: its output of the ufunc's pair)."""
        value = self.numpy(*args)
        return value[self.output] if self.kind == "output" else value


def _ew(name: str, nin: int, numpy: Callable[..., Any], doc: str, category: str,
        operator: str | None = None, **kw: Any) -> OpDef:
    return OpDef(name, "elementwise", nin, numpy, doc, category, operator, **kw)


def _tr(name: str, nin: int, numpy: Callable[..., Any], doc: str, category: str,
        operator: str | None = None) -> OpDef:
    """A transcendental elementwise op (see ``OpDef.transcendental``)."""
    return _ew(name, nin, numpy, doc, category, operator, transcendental=True)


def _output(name: str, numpy: np.ufunc, output: int, doc: str) -> OpDef:
    """One output of a two-output ufunc (``frexp``, ``modf``): a single-output op."""
    return OpDef(name, "output", 1, numpy, doc, _FLOATING, output=output)


def _red(name: str, numpy: Callable[..., Any], doc: str, identity: object = None, **kw: Any) -> OpDef:
    return OpDef(name, "reduction", 1, numpy, doc, "reduction", identity=identity, **kw)


_ARITH, _CMP, _BIT, _LOGIC, _EXP, _TRIG, _ROUND, _CLASS, _COMPLEX, _FLOATING = (
    "arithmetic", "comparison", "bitwise", "logical", "exponential and logarithmic",
    "trigonometric and hyperbolic", "rounding", "classification", "complex numbers",
    "floating-point parts",
)

_OP_LIST: list[OpDef] = [
    # arithmetic
    _ew("add", 2, np.add, "Add arguments element-wise.", _ARITH, "add"),
    _ew("subtract", 2, np.subtract, "Subtract arguments element-wise.", _ARITH, "sub"),
    _ew("multiply", 2, np.multiply, "Multiply arguments element-wise.", _ARITH, "mul"),
    _ew("divide", 2, np.divide, "True division element-wise (integers give float64).", _ARITH, "truediv"),
    _ew("floor_divide", 2, np.floor_divide, "Floor division element-wise, with NumPy's signs.", _ARITH, "floordiv"),
    _ew("remainder", 2, np.remainder, "Remainder with the sign of the divisor.", _ARITH, "mod"),
    _tr("power", 2, np.power, "First argument raised to the power of the second.", _ARITH, "pow"),
    _ew("negative", 1, np.negative, "Numerical negative.", _ARITH, "neg"),
    _ew("positive", 1, np.positive, "Numerical positive (a copy).", _ARITH, "pos"),
    _ew("abs", 1, np.absolute, "Absolute value.", _ARITH, "abs"),
    _ew("square", 1, np.square, "Square.", _ARITH),
    _ew("reciprocal", 1, np.reciprocal, "Reciprocal, 1/x.", _ARITH),
    _ew("sign", 1, np.sign, "Sign: -1, 0 or 1 (NaN for NaN).", _ARITH),
    _ew("maximum", 2, np.maximum, "Element-wise maximum; propagates NaN.", _ARITH),
    _ew("minimum", 2, np.minimum, "Element-wise minimum; propagates NaN.", _ARITH),
    _ew("fmax", 2, np.fmax, "Element-wise maximum; ignores NaN.", _ARITH),
    _ew("fmin", 2, np.fmin, "Element-wise minimum; ignores NaN.", _ARITH),
    _ew("fmod", 2, np.fmod, "Remainder with the sign of the dividend (C's fmod).", _ARITH),
    _ew("copysign", 2, np.copysign, "x1 with the sign of x2.", _ARITH),
    _ew("nextafter", 2, np.nextafter, "The next float after x1 towards x2.", _ARITH),
    _ew("spacing", 1, np.spacing, "Distance to the next float away from zero (an ulp).", _ARITH),
    _ew("heaviside", 2, np.heaviside, "Heaviside step: 0, x2 at 0, or 1.", _ARITH),
    _tr("float_power", 2, np.float_power, "x1**x2 in at least float64.", _ARITH),
    # exponential, logarithmic, roots
    _tr("exp", 1, np.exp, "Exponential, e**x.", _EXP),
    _tr("exp2", 1, np.exp2, "Base-2 exponential, 2**x.", _EXP),
    _tr("expm1", 1, np.expm1, "exp(x) - 1, accurate near 0.", _EXP),
    _tr("log", 1, np.log, "Natural logarithm.", _EXP),
    _tr("log2", 1, np.log2, "Base-2 logarithm.", _EXP),
    _tr("log10", 1, np.log10, "Base-10 logarithm.", _EXP),
    _tr("log1p", 1, np.log1p, "log(1 + x), accurate near 0.", _EXP),
    _ew("sqrt", 1, np.sqrt, "Square root.", _EXP),
    _tr("cbrt", 1, np.cbrt, "Cube root.", _EXP),
    _tr("hypot", 2, np.hypot, "sqrt(x1**2 + x2**2) without overflow.", _EXP),
    _tr("logaddexp", 2, np.logaddexp, "log(exp(x1) + exp(x2)) without overflow.", _EXP),
    _tr("logaddexp2", 2, np.logaddexp2, "log2(2**x1 + 2**x2) without overflow.", _EXP),
    _ew("ldexp", 2, np.ldexp, "x1 * 2**x2 (float mantissa, integer exponent), exact.", _FLOATING),
    # trigonometric and hyperbolic
    _tr("sin", 1, np.sin, "Sine.", _TRIG),
    _tr("cos", 1, np.cos, "Cosine.", _TRIG),
    _tr("tan", 1, np.tan, "Tangent.", _TRIG),
    _tr("arcsin", 1, np.arcsin, "Inverse sine.", _TRIG),
    _tr("arccos", 1, np.arccos, "Inverse cosine.", _TRIG),
    _tr("arctan", 1, np.arctan, "Inverse tangent.", _TRIG),
    _tr("arctan2", 2, np.arctan2, "Arc tangent of x1/x2 choosing the quadrant.", _TRIG),
    _tr("sinh", 1, np.sinh, "Hyperbolic sine.", _TRIG),
    _tr("cosh", 1, np.cosh, "Hyperbolic cosine.", _TRIG),
    _tr("tanh", 1, np.tanh, "Hyperbolic tangent.", _TRIG),
    _tr("arcsinh", 1, np.arcsinh, "Inverse hyperbolic sine.", _TRIG),
    _tr("arccosh", 1, np.arccosh, "Inverse hyperbolic cosine.", _TRIG),
    _tr("arctanh", 1, np.arctanh, "Inverse hyperbolic tangent.", _TRIG),
    _ew("deg2rad", 1, np.deg2rad, "Degrees to radians (``radians``).", _TRIG),
    _ew("rad2deg", 1, np.rad2deg, "Radians to degrees (``degrees``).", _TRIG),
    # rounding
    _ew("floor", 1, np.floor, "Floor.", _ROUND),
    _ew("ceil", 1, np.ceil, "Ceiling.", _ROUND),
    _ew("trunc", 1, np.trunc, "Truncate toward zero.", _ROUND),
    _ew("rint", 1, np.rint, "Round to nearest integer, ties to even.", _ROUND),
    # comparison
    _ew("equal", 2, np.equal, "x1 == x2.", _CMP, "eq", reflected=False, scalar_rule=COMPARE),
    _ew("not_equal", 2, np.not_equal, "x1 != x2.", _CMP, "ne", reflected=False, scalar_rule=COMPARE),
    _ew("less", 2, np.less, "x1 < x2.", _CMP, "lt", reflected=False, scalar_rule=COMPARE),
    _ew("less_equal", 2, np.less_equal, "x1 <= x2.", _CMP, "le", reflected=False, scalar_rule=COMPARE),
    _ew("greater", 2, np.greater, "x1 > x2.", _CMP, "gt", reflected=False, scalar_rule=COMPARE),
    _ew("greater_equal", 2, np.greater_equal, "x1 >= x2.", _CMP, "ge", reflected=False,
        scalar_rule=COMPARE),
    # classification
    _ew("isnan", 1, np.isnan, "True where NaN.", _CLASS),
    _ew("isinf", 1, np.isinf, "True where +inf or -inf.", _CLASS),
    _ew("isfinite", 1, np.isfinite, "True where neither inf nor NaN.", _CLASS),
    _ew("signbit", 1, np.signbit, "True where the sign bit is set (-0.0 and NaNs with it too).", _CLASS),
    # logical
    _ew("logical_and", 2, np.logical_and, "Logical AND.", _LOGIC),
    _ew("logical_or", 2, np.logical_or, "Logical OR.", _LOGIC),
    _ew("logical_xor", 2, np.logical_xor, "Logical XOR.", _LOGIC),
    _ew("logical_not", 1, np.logical_not, "Logical NOT.", _LOGIC),
    # bitwise
    _ew("bitwise_and", 2, np.bitwise_and, "Bitwise AND.", _BIT, "and"),
    _ew("bitwise_or", 2, np.bitwise_or, "Bitwise OR.", _BIT, "or"),
    _ew("bitwise_xor", 2, np.bitwise_xor, "Bitwise XOR.", _BIT, "xor"),
    _ew("invert", 1, np.invert, "Bitwise NOT (logical NOT for bool).", _BIT, "invert"),
    _ew("left_shift", 2, np.left_shift, "Shift bits left.", _BIT, "lshift"),
    _ew("right_shift", 2, np.right_shift, "Shift bits right (arithmetic for signed).", _BIT, "rshift"),
    # complex numbers. real/imag are not ufuncs: _build.complex_part gives their dtypes (the
    # part's float dtype) and takes a real operand's shortcuts (the array / zeros).
    _ew("real", 1, np.real, "Real part (of a real array: the array itself).", _COMPLEX),
    _ew("imag", 1, np.imag, "Imaginary part (of a real array: zeros).", _COMPLEX),
    _ew("conj", 1, np.conjugate, "Complex conjugate (of a real array: a copy).", _COMPLEX),
    # selection and conversion (not ufuncs: their dtype rules live in _build)
    _ew("where", 3, np.where, "Choose x1 where condition is true, else x2.", "selection",
        scalar_rule=WRAP),
    # The ufunc behind np.clip when both bounds are given (np.clip itself is a Python function
    # that picks positive/minimum/maximum/clip: _build.clip does the same). Private but stable
    # since NumPy 1.17; numpy is pinned <2.5 and tests/test_api.py checks it exists.
    _ew("clip", 3, np._core.umath.clip,  # type: ignore[attr-defined]  # private, pinned (above)
        "Limit values to [min, max].", "selection"),
    OpDef("astype", "cast", 1, lambda x, dtype: x.astype(dtype), "Cast to a dtype (unsafe casting, "
          "as ndarray.astype).", "selection"),
    # the outputs of frexp and modf (the public functions return the pair: TWO_OUTPUTS)
    _output("frexp_mantissa", np.frexp, 0, "frexp's mantissa: x = mantissa * 2**exponent, "
            "0.5 <= abs(mantissa) < 1 (0, inf and NaN: x itself)."),
    _output("frexp_exponent", np.frexp, 1, "frexp's exponent, int32 (0 for 0, inf and NaN)."),
    _output("modf_fraction", np.modf, 0, "modf's fractional part, with the sign of x."),
    _output("modf_integral", np.modf, 1, "modf's integral part, with the sign of x."),
    # reductions
    _red("sum", np.sum, "Sum of elements.", identity=0, takes_dtype=True),
    _red("prod", np.prod, "Product of elements.", identity=1, takes_dtype=True),
    _red("min", np.min, "Minimum; propagates NaN; empty input is an error."),
    _red("max", np.max, "Maximum; propagates NaN; empty input is an error."),
    _red("mean", np.mean, "Arithmetic mean (integers give float64).", identity=float("nan"),
         takes_dtype=True),
    _red("var", np.var, "Variance.", identity=float("nan"), takes_dtype=True, takes_ddof=True),
    _red("std", np.std, "Standard deviation.", identity=float("nan"), takes_dtype=True,
         takes_ddof=True),
    _red("any", np.any, "True if any element is true.", identity=False),
    _red("all", np.all, "True if all elements are true.", identity=True),
    _red("argmin", np.argmin, "Index of the minimum (first occurrence; NaN wins).",
         takes_axis_tuple=False),
    _red("argmax", np.argmax, "Index of the maximum (first occurrence; NaN wins).",
         takes_axis_tuple=False),
    # the uniform numbers of fused draws: Philox4x32-10 of (counter, key, stream), uint64
    # operands, a float64 / float32 in [0, 1) (lazyarr/_philox.h)
    OpDef("philox_random64", "generator", 3, philox_random64, "Philox4x32-10 uniform float64 "
          "in [0, 1) for a counter, key and stream.", "random"),
    OpDef("philox_random32", "generator", 3, philox_random32, "Philox4x32-10 uniform float32 "
          "in [0, 1) for a counter, key and stream.", "random"),
]

#: name -> OpDef, in registry order (the order is stable: backends may number ops by it).
OPS: dict[str, OpDef] = {op.name: op for op in _OP_LIST}
ELEMENTWISE = [op for op in _OP_LIST if op.kind == "elementwise"]
REDUCTIONS = [op for op in _OP_LIST if op.kind == "reduction"]
#: names of the transcendental ops (``OpDef.transcendental``)
TRANSCENDENTAL = frozenset(op.name for op in ELEMENTWISE if op.transcendental)
#: NumPy's two-output ufuncs -> their outputs' ops, in order (``la.frexp(x)`` is the pair)
TWO_OUTPUTS: dict[np.ufunc, tuple[OpDef, OpDef]] = {
    ufunc: tuple(op for op in _OP_LIST if op.kind == "output" and op.numpy is ufunc)  # type: ignore[misc]
    for ufunc in (np.frexp, np.modf)}
#: NumPy function -> OpDef, for ``__array_ufunc__`` / ``__array_function__`` dispatch.
BY_NUMPY: dict[Any, OpDef] = {op.numpy: op for op in _OP_LIST if op.kind in ("elementwise", "reduction")}
BY_NUMPY[np.amin] = OPS["min"]
BY_NUMPY[np.clip] = OPS["clip"]
BY_NUMPY[np.amax] = OPS["max"]
