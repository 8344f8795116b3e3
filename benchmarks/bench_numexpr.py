"""The numexpr project's own test expressions (issue 13, item 2: no expression slower than NumPy).

``EXPRESSIONS`` is the expression list of numexpr's ``numexpr/tests/test_numexpr.py``
(pydata/numexpr at a561ee3, July 2026: sections MISC, OPERATIONS, COMPARISONS, 1_ARG_FUNCS,
2_ARG_FUNCS, POW_TESTS), less the ones without an array operand (``'1+1'``, ``'cos(1+1)'``,
``'arcsin(0.5)'``, ``'7.0 < 5'``: nothing for lazyarr to compute) and the complex-only
``(a-10).real`` form. The data follow that test too (``a`` strided, ``a2`` a matrix of zeros),
at 2**22 elements. Each expression is evaluated with ``np`` being NumPy or lazyarr and its
result materialized. The list grows as lazyarr gains functions (``round`` is NumPy's
``np.round``).

``tools/peers/numexpr_expressions.py`` runs the list interleaved and reports each lazy/NumPy
ratio (docs/performance.rst); this asv class tracks them over commits.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

import lazyarr as la

from .common import Benchmark, prepare

_MISC = ["b*c+d*e", "2*a+3*b", "-a", "sinh(a)", "2*a + (cos(3)+5)*sinh(cos(b))",
         "2*a + arctan2(a, b)", "where(a != 0.0, 2, a)", "where(a > 10, b < a, b > a)",
         "0.25 * (a < 5) + 0.33 * (a >= 5)", "cos(a2)"]
_OPERATIONS = [form % op for op in ["+", "-", "*", "/", "%", "**"] for form in (
    "(a+1) %s (b+3)", "3 %s (b+3)", "(a+1) %s 4", "2 %s (b+3)", "(a+1) %s 2", "(a+1) %s -1",
    "(a+1) %s 0.5", "(a+1) %s 0")]
_COMPARISONS = [form % op for op in ["<", "<=", "==", ">=", ">", "!="]
                for form in ("a/2+5 %s b", "a/2+5 %s 7", "7 %s b")]
_FUNC1 = [f"a + {f}(b+c)" for f in (
    "copy", "ones_like", "sqrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
    "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "log", "log1p", "log10", "log2", "exp",
    "expm1", "abs", "conj", "ceil", "floor", "round", "trunc", "sign")]
_FUNC2 = [form % f for f in ("arctan2", "fmod", "hypot", "nextafter", "copysign")
          for form in ("a + %s(b+c, d+1)", "a + %s(b+c, 1)", "a + %s(1, d+1)")]
_POW = [f"(a+1)**{n}" for n in ("-7", "-2.5", "-1.5", "-1.3", "-.5", "0", "0.0", "1", "2.3", "2.5", "3")]
EXPRESSIONS = _MISC + _OPERATIONS + _COMPARISONS + _FUNC1 + _FUNC2 + _POW

N = 2**22
DTYPES = ["float32", "float64"]


@functools.cache
def numpy_data(dtype: str, n: int = N) -> dict[str, np.ndarray]:
    """numexpr's test data at ``n`` elements (``a`` is a strided view, as there)."""
    side = int(round(n ** 0.5))
    b = np.arange(n, dtype=dtype)
    return {"a": np.arange(2 * n, dtype=dtype)[::2], "a2": np.zeros((side, side), dtype=dtype),
            "b": b / np.asarray(n, dtype=dtype), "c": np.arange(n, dtype=dtype),
            "d": np.arange(n, dtype=dtype), "e": np.arange(n, dtype=dtype)}


def namespace(lib: str, dtype: str, n: int = N) -> dict[str, Any]:
    """The names an expression reads: the library's functions and the data (as lazyarr leaves
    for ``lib == "lazyarr"``)."""
    module: Any = la if lib == "lazyarr" else np
    arrays = numpy_data(dtype, n)
    names = {k: (la.asarray(v) if lib == "lazyarr" else v) for k, v in arrays.items()}
    functions = {f: getattr(module, f) for f in (
        "where", "sinh", "cos", "arctan2", "copy", "ones_like", "sqrt", "sin", "tan", "arcsin",
        "arccos", "arctan", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "log", "log1p",
        "log10", "log2", "exp", "expm1", "abs", "conj", "ceil", "floor", "round", "trunc",
        "sign", "fmod", "hypot", "nextafter", "copysign")}
    return {**functions, **names}


def evaluate(expr: str, names: dict[str, Any]) -> Any:
    """The expression's value, materialized (a LazyArray is computed)."""
    with np.errstate(all="ignore"):
        value = eval(expr, {"__builtins__": {}}, names)  # noqa: S307 - the fixed list above
        return value.compute() if isinstance(value, la.LazyArray) else value


class NumexprExpressions(Benchmark):
    """Each expression, NumPy vs lazyarr (lazy mode, CPU), 2**22 elements."""

    params = [["numpy", "lazyarr"], DTYPES, EXPRESSIONS]
    param_names = ["lib", "dtype", "expr"]

    def setup(self, lib, dtype, expr):
        prepare("cpu", "lazy", N)
        self.names = namespace(lib, dtype)
        evaluate(expr, self.names)             # compiles lazyarr's program once

    def time_expression(self, lib, dtype, expr):
        evaluate(expr, self.names)
