"""The cuda backend's op table: one row of CUDA expression templates per elementwise op.

A row maps dtype keys to a Python expression that ``render`` writes into the kernel (Numba
CUDA compiles it). Keys are a dtype name (``"float16"``, tried first) or dtype kinds of the
(loop-typed) operands: ``b`` bool, ``i`` signed, ``u`` unsigned, ``f`` float (float16 is
computed in float32 and rounded back after every op, as NumPy does). ``{0}``..``{2}`` are the
operands, ``{T}`` casts to the result's compute type, ``{W}`` is the operand's bit width;
``F_name(`` is a float function (libdevice on the GPU, NumPy in the simulator) and ``H_name(``
a helper from :mod:`.helpers`. Key ``c``: complex operands (complex64/complex128, computed as
they are; ``.real``/``.imag`` are their parts). Every result is cast to its dtype afterwards (integer results
wrap, as NumPy's do).

Every elementwise op of the registry has a row here or is named in :data:`RUN_ON_HOST`; importing this module checks it, so an op added to the registry without
a row fails at import with a message naming it, not at its first compile.
"""
from __future__ import annotations

import math
import re

import numpy as np

from ..._registry import ELEMENTWISE, OPS
from . import helpers

_ALL, _INT, _FLT = "biuf", "iu", "f"
_same = lambda t: {_ALL: t}  # noqa: E731
#: op name -> {dtype key: expression template} (the module docstring gives the syntax)
TEMPLATES: dict[str, dict[str, str]] = {
    "add": _same("({0} + {1})"), "subtract": _same("({0} - {1})"),
    "multiply": _same("({0} * {1})"), "divide": {_FLT: "({0} / {1})"},
    "floor_divide": {_INT: "H_idiv({0}, {1})", _FLT: "H_fdiv({0}, {1})"},
    "remainder": {_INT: "H_irem({0}, {1})", _FLT: "H_frem({0}, {1})"},
    "power": {_INT: "H_ipow({0}, {1})", _FLT: "F_pow({0}, {1})"},
    "negative": _same("(-{0})"), "positive": _same("{0}"), "conj": _same("{0}"),
    "abs": {"b": "{0}", "u": "{0}", "i": "abs({0})", _FLT: "F_fabs({0})"},
    "square": _same("({0} * {0})"),
    "reciprocal": {_INT: "H_irecip({0})", _FLT: "({T}(1) / {0})"},
    "sign": {"u": "({0} > 0)", "i": "(({0} > 0) * 1 - ({0} < 0) * 1)", _FLT: "H_fsign({0})"},
    # NumPy's float32/float64 loops (SIMD) return the second operand on ties (max(-0.0, 0.0)
    # is 0.0, max(0.0, -0.0) is -0.0); its float16 loop returns the first. NaN propagates.
    "maximum": {"biu": "({0} if {0} >= {1} else {1})",
                "float16": "({0} if ({0} >= {1} or {0} != {0}) else {1})",
                _FLT: "({0} if ({0} > {1} or {0} != {0}) else {1})"},
    "minimum": {"biu": "({0} if {0} <= {1} else {1})",
                "float16": "({0} if ({0} <= {1} or {0} != {0}) else {1})",
                _FLT: "({0} if ({0} < {1} or {0} != {0}) else {1})"},
    "fmax": {"biu": "({0} if {0} >= {1} else {1})",
             "float16": "({0} if ({0} >= {1} or {1} != {1}) else {1})",
             _FLT: "({0} if ({0} > {1} or {1} != {1}) else {1})"},
    "fmin": {"biu": "({0} if {0} <= {1} else {1})",
             "float16": "({0} if ({0} <= {1} or {1} != {1}) else {1})",
             _FLT: "({0} if ({0} < {1} or {1} != {1}) else {1})"},
    **{name: {_FLT: f"F_{name}({{0}})"} for name in (
        "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "sin", "cos",
        "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
        "arctanh")},
    "hypot": {_FLT: "H_fhypot({0}, {1})"}, "arctan2": {_FLT: "F_arctan2({0}, {1})"},
    **{name: {"biu": "{0}", _FLT: f"F_{name}({{0}})"} for name in ("floor", "ceil", "trunc", "rint")},
    "equal": _same("({0} == {1})"), "not_equal": _same("({0} != {1})"),
    "less": _same("({0} < {1})"), "less_equal": _same("({0} <= {1})"),
    "greater": _same("({0} > {1})"), "greater_equal": _same("({0} >= {1})"),
    "isnan": {"biu": "False", _FLT: "({0} != {0})"},
    "isinf": {"biu": "False", _FLT: "(({0} == math.inf) or ({0} == -math.inf))"},
    "isfinite": {"biu": "True", _FLT: "(({0} == {0}) and ({0} != math.inf) and ({0} != -math.inf))"},
    "logical_and": _same("(({0} != 0) and ({1} != 0))"),
    "logical_or": _same("(({0} != 0) or ({1} != 0))"),
    "logical_xor": _same("(({0} != 0) != ({1} != 0))"),
    "logical_not": _same("({0} == 0)"),
    "bitwise_and": {"biu": "({0} & {1})"}, "bitwise_or": {"biu": "({0} | {1})"},
    "bitwise_xor": {"biu": "({0} ^ {1})"},
    "invert": {"b": "({0} == 0)", _INT: "(~{0})"},
    "left_shift": {_INT: "H_lshift({0}, {1}, {W})"}, "right_shift": {_INT: "H_rshift({0}, {1}, {W})"},
    "where": _same("({1} if {0} else {2})"),
    # the uniform numbers of fused draws (uint64 operands: lazyarr/_philox.h)
    "philox_random64": {"u": "H_philox64({0}, {1}, {2})"},
    "philox_random32": {"u": "H_philox32({0}, {1}, {2})"},
    # "single-bounds": float32/float64 with both bounds single values (see helpers._FCLIP)
    "clip": {"biu": "H_iclip({0}, {1}, {2})", "float16": "H_fclip_keep({0}, {1}, {2})",
             "single-bounds": "H_fclip_keep({0}, {1}, {2})", _FLT: "H_fclip({0}, {1}, {2})"},
    # NumPy's own loops (npy_math_internal.h.src, halffloat.cpp; helpers.py says which)
    "fmod": {_INT: "H_ifmod({0}, {1})", _FLT: "F_fmod({0}, {1})"},
    "copysign": {_FLT: "F_copysign({0}, {1})"},
    "nextafter": {"float16": "H_hnextafter({0}, {1})", _FLT: "F_nextafter({0}, {1})"},
    "spacing": {"float16": "H_hspacing({0})", _FLT: "H_fspacing({0})"},
    "heaviside": {_FLT: "H_fheaviside({0}, {1})"},
    "float_power": {_FLT: "F_pow({0}, {1})"},
    "logaddexp": {_FLT: "H_flogaddexp({0}, {1})"},
    "logaddexp2": {_FLT: "H_flogaddexp2({0}, {1})"},
    "ldexp": {_FLT: "H_fldexp({0}, {1})"},     # (libdevice's ldexp: exact, as C's)
    # the outputs of frexp and modf (exact: C's frexp, modf's integral part is trunc)
    "frexp_mantissa": {_FLT: "H_ffrexp_mantissa({0})"},
    "frexp_exponent": {_FLT: "H_ffrexp_exponent({0})"},
    "modf_fraction": {_FLT: "H_fmodf_fraction({0})"},
    "modf_integral": {_FLT: "F_trunc({0})"},
    # x * (NPY_PI / 180) and x * (180 / NPY_PI); float32 (and float16, computed in float32):
    # the constants of npy_deg2radf / npy_rad2degf, a float division rounded to float32
    **{name: {"float64": f"({{0}} * {c64!r})", _FLT: f"({{0}} * {{T}}({c32!r}))"}
       for name, c64, c32 in (
           ("deg2rad", math.pi / 180, float(np.float32(np.float32(math.pi) / np.float32(180)))),
           ("rad2deg", 180 / math.pi, float(np.float32(np.float32(180) / np.float32(math.pi)))))},
    "signbit": {_FLT: "(math.copysign(1.0, {0}) < 0)"},
}


def _cx_lex(cmp: str, eq: str) -> str:
    """NumPy's lexicographic complex comparison (loops.c.src CLT, CLE, CGT, CGE): the real
    parts, then the imaginary ones when the real parts are equal; NaN compares false."""
    return (f"(({{0}}.real {cmp} {{1}}.real and {{0}}.imag == {{0}}.imag and {{1}}.imag == "
            f"{{1}}.imag) or ({{0}}.real == {{1}}.real and {{0}}.imag {eq} {{1}}.imag))")


_CX_NAN = "({0}.real != {0}.real or {0}.imag != {0}.imag)"
#: complex rows (key ``"c"``): the operands are complex values (``.real``, ``.imag``); the
#: helpers (``H_c*``) copy NumPy's loops
_COMPLEX: dict[str, str] = {
    **{name: TEMPLATES[name][_ALL] for name in (
        "add", "subtract", "negative", "positive", "equal", "not_equal", "logical_and",
        "logical_or", "logical_xor", "logical_not", "where")},
    "multiply": "H_cmul({0}, {1})", "divide": "H_cdiv({0}, {1})", "square": "H_csquare({0})",
    # (sign: NumPy's z / |z|; its |z| is H_cabs, as libdevice's hypot rounded |DBL_MAX + 1j| up
    # to inf on the H200 and sign gave 1j there, 2026-12-03)
    "sign": "H_csign({0})",
    "reciprocal": "H_crecip({0})", "abs": "H_cabs({0})",
    "conj": "{0}.conjugate()",
    # only ever complex operands (of a real array, _build.complex_part gives the array or zeros)
    "real": "{0}.real", "imag": "{0}.imag",
    "isnan": _CX_NAN,
    "isinf": "(F_fabs({0}.real) == math.inf or F_fabs({0}.imag) == math.inf)",
    "isfinite": "(F_fabs({0}.real) < math.inf and F_fabs({0}.imag) < math.inf)",
    "less": _cx_lex("<", "<"), "less_equal": _cx_lex("<", "<="),
    "greater": _cx_lex(">", ">"), "greater_equal": _cx_lex(">", ">="),
    # loops.c.src: maximum/minimum keep a NaN of the first operand, else the CGE/CLE winner;
    # fmax/fmin keep the first operand unless the second is NaN-free and wins
    "maximum": f"({{0}} if ({_CX_NAN} or {_cx_lex('>', '>=')}) else {{1}})",
    "minimum": f"({{0}} if ({_CX_NAN} or {_cx_lex('<', '<=')}) else {{1}})",
    "fmax": f"({{0}} if ({_CX_NAN.replace('0', '1')} or {_cx_lex('>', '>=')}) else {{1}})",
    "fmin": f"({{0}} if ({_CX_NAN.replace('0', '1')} or {_cx_lex('<', '<=')}) else {{1}})",
    # npymath's complex functions (the C library's cexp, clog, csqrt, cpow, csinh, ...: glibc),
    # ported from msun as helpers.py says
    **{name: f"H_c{name.replace('arc', 'a')}({{0}})" for name in (
        "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
        "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh")},
    "power": "H_cpow({0}, {1})", "float_power": "H_cpow({0}, {1})",   # (float_power: complex128)
    "rint": "{T}(complex(F_rint({0}.real), F_rint({0}.imag)))",     # nc_rint: part by part
    "clip": "H_cclip({0}, {1}, {2})",
}
for _name, _template in _COMPLEX.items():
    TEMPLATES.setdefault(_name, {})["c"] = _template

#: Elementwise ops with no row at all: on the cuda device they run on the host with NumPy's
#: loops (``explain`` says so). Every op has a row now; an op of a dtype its row has no key
#: for runs on the host too (:func:`select` gives None); so do complex reductions and casts to
#: integers (``backend._COMPLEX_ON_HOST``, ``_runs_on_host``).
RUN_ON_HOST: frozenset[str] = frozenset()


def select(op: str, key: np.dtype, variant: str | None = None) -> str | None:
    """The template of ``op`` for operands of dtype ``key`` (``where``: of its values): the
    ``variant`` row (float32/float64 only), the dtype's name, then the first key naming its
    kind; None when the row has none (the program then runs on the host)."""
    templates = TEMPLATES.get(op)
    if templates is None:
        return None
    special = templates.get(variant) if variant and key.kind == "f" else None
    return special or templates.get(key.name) or next(
        (t for kinds, t in templates.items() if set(kinds) <= set("biufc") and key.kind in kinds),
        None)



def _called(call: re.Pattern[str]) -> set[str]:
    """The names that the rows call in the form ``call`` (``helpers.FLOAT_CALL``, ...)."""
    return {name for row in TEMPLATES.values() for template in row.values()
            for name in call.findall(template)}


#: Every float function (``F_name``) a row or a helper calls: the kernel namespaces of
#: ``compile`` bind each one (to libdevice, or to NumPy in the simulator).
FLOAT_FUNCTIONS = tuple(sorted(_called(helpers.FLOAT_CALL) | helpers.FLOAT_FUNCTIONS))


def _check_rows() -> None:
    """Every elementwise op has exactly one place here, and every row names known helpers."""
    elementwise = {op.name for op in ELEMENTWISE} | {n for n, op in OPS.items()
                                                     if op.kind in ("generator", "output")}
    placed = TEMPLATES.keys() | RUN_ON_HOST
    problems = []
    if elementwise - placed:
        problems.append(f"elementwise ops with no CUDA row: {sorted(elementwise - placed)}; add a row "
                        "to TEMPLATES, or name the op in RUN_ON_HOST to run it on the host with NumPy")
    if placed - elementwise:
        problems.append(f"rows for ops the registry does not have: {sorted(placed - elementwise)}")
    if TEMPLATES.keys() & RUN_ON_HOST:
        problems.append(f"ops both with a row and in RUN_ON_HOST: {sorted(TEMPLATES.keys() & RUN_ON_HOST)}")
    unknown = _called(helpers.HELPER_CALL) - helpers.HELPERS
    if unknown:
        problems.append(f"rows call helpers that helpers.py does not define: {sorted(unknown)}")
    if problems:
        # not an ImportError: backends.load takes that for "not installed" and would hide it
        raise RuntimeError("lazyarr/backends/cuda/templates.py: " + "; ".join(problems))


_check_rows()
