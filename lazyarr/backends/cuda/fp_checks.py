"""NumPy's floating-point errors in the cuda kernels, derived from values (issue 16, item 5).

A GPU has no floating-point status flags, so a checked kernel derives NumPy's flags from each
raising op's operands and result, per element, and ORs them into one uint32 word per op site
(``fpe[k]``, NPY_FPE_* bits) with an atomic that runs only when a flag is set and not yet in
the word. The checks of one element are behind one test of all its raising ops' results
(``|r| < inf`` each, and-ed: :func:`merged`), so a kernel with nothing to report pays a
compare per raising op and one branch per element.

The rules, checked against NumPy's own loops for every op and edge value (float16, float32,
float64; docs/notes/gpu.rst):

* invalid: a NaN result from operands without NaN (``log(-1)``, ``inf - inf``, ``0 * inf``);
* an infinite result from finite operands: "divide by zero" for the ops NumPy says so
  (:data:`POLE`: ``log(0)``, ``1 / 0``, ``arctanh(1)``, ``0 ** -1``), else overflow;
* per-op exceptions of NumPy's loops (:func:`_float_bits`): ``floor_divide`` overflowing
  also says invalid; ``logaddexp`` says invalid for a NaN operand; ``power(0, -inf)`` is a
  divide by zero; ``nextafter(max, inf)`` overflows; ``spacing`` of inf or NaN is invalid
  in float16's loop only;
* integer ``floor_divide``/``remainder``/``fmod`` by 0: divide by zero (``MIN // -1``: overflow),
  ``reciprocal(0)``: divide by zero and invalid;
* casts: float to integer out of the range of the C conversion NumPy uses (int32 for the
  narrow types, int64, uint64) or NaN/inf: invalid; a narrowing float cast (or an integer to
  float16; complex128 to complex64, part by part; a complex to a narrower float, its real
  part) giving inf from a finite value: overflow;
* complex ops: the same rules on the parts; complex ``<``, ``<=``, ``>``, ``>=``: invalid where
  NumPy's loop compares a NaN (:data:`COMPLEX_ORDER`); complex ``add``, ``subtract``,
  ``divide``, ``reciprocal``: invalid where a step of NumPy's loop on the parts is
  (:func:`_complex_invalid`: Smith's division), and division's overflow of its scale;
  complex ``exp``: glibc's invalid cases with a NaN part;

Underflow is not derived (NumPy ignores it by default; an exact test needs the inexact flag).
"""
from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

import numpy as np

from ..._program import Instr
from ..._registry import OPS

INVALID, DIVIDE, OVERFLOW = 8, 1, 2
#: words (op sites) per kernel: a chain with more raising ops checks its first 31 and the
#: reduction's accumulation
MAX_SITES = 32
#: a full tile's checks are tested once after it up to this many op sites in the chain, else
#: per element (render.unrolled; H200 2026-12-03e: 5 sites (Jacobi) 1.08 -> 0.99 of the
#: unchecked kernel's time, 12 sites (16-op chain) 0.95 -> 1.16; 8 lies between, unmeasured)
TILE_SITES = 8
#: the ops that can raise (NumPy's loops, probed over edge values of every float dtype)
RAISING = frozenset({
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "power",
    "float_power", "square", "reciprocal", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "sqrt", "sin", "cos", "tan", "arcsin", "arccos", "arccosh", "arctanh", "sinh",
    "cosh", "hypot", "ldexp", "logaddexp", "logaddexp2", "nextafter", "spacing", "rad2deg",
    "deg2rad"})
_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
#: an infinite result from finite operands is a divide by zero: always, or when the operand
#: named is 0 (else overflow)
POLE = {"log": "True", "log2": "True", "log10": "True", "log1p": "True", "arctanh": "True",
        "divide": "{1} == 0", "floor_divide": "{1} == 0", "remainder": "{1} == 0",
        "fmod": "{1} == 0", "reciprocal": "{0} == 0", "power": "{0} == 0",
        "float_power": "{0} == 0"}
#: comparisons whose complex loops order with C's ``<`` (signalling on NaN): NumPy's
#: ``CLT(xr, xi, yr, yi)`` is ``(xr < yr && !isnan(xi) && !isnan(yi)) || (xr == yr && xi < yi)``
#: (``<=``, ``>``, ``>=`` alike), so a NaN real part, or a NaN imaginary part where the real
#: parts are equal, is invalid. Real float comparisons are quiet in NumPy's loops.
COMPLEX_ORDER = frozenset({"less", "less_equal", "greater", "greater_equal"})
_INT_BY_ZERO = frozenset({"floor_divide", "remainder", "fmod"})
_INF = "math.inf"


def site_name(ins: Instr, operand_dtypes: list[np.dtype]) -> str | None:
    """The name NumPy's messages give the op (``"log"``, ``"cast"``), or None when it cannot
    raise."""
    if ins.op == "astype":
        return "cast" if _cast_can_raise(operand_dtypes[0], ins.dtype) else None
    if ins.op in COMPLEX_ORDER:
        return OPS[ins.op].numpy.__name__ if operand_dtypes[0].kind == "c" else None
    if ins.op not in RAISING:
        return None
    if ins.dtype.kind not in "fc" and not (ins.op in _INT_BY_ZERO or ins.op == "reciprocal"):
        return None
    return OPS[ins.op].numpy.__name__


def _part_size(dt: np.dtype) -> int:
    return dt.itemsize // 2 if dt.kind == "c" else dt.itemsize


def _cast_can_raise(src: np.dtype, dst: np.dtype) -> bool:
    if dst.kind == "c":                     # (complex128 -> complex64: overflow, part by part)
        return src.kind in "fc" and _part_size(src) > _part_size(dst)
    if src.kind == "f":
        return dst.kind in "iu" or (dst.kind == "f" and dst.itemsize < src.itemsize)
    if src.kind == "c" and dst.kind == "f":   # (its real part, narrowed: complex64 -> float16)
        return dst.itemsize < _part_size(src)
    return src.kind in "iu" and dst == np.dtype(np.float16)


def _parts(v: str, dt: np.dtype) -> list[str]:
    return [f"{v}.real", f"{v}.imag"] if dt.kind == "c" else [v]


def _all(terms: list[str]) -> str:
    return " & ".join(f"({t})" for t in terms) if terms else "True"


def _any(terms: list[str]) -> str:
    return " | ".join(f"({t})" for t in terms) if terms else "False"


def _not(cond: str) -> str:
    return f"(({cond}) ^ True)"


def _flag(bit: int, cond: str) -> str:
    """``bit`` where ``cond`` holds, else 0. The checks are built of these, ``&`` and ``|``:
    branch-free, because Numba's SSA and liveness passes grow with the square of a kernel's
    basic blocks, and every ``and``, ``or`` and ``x if c else y`` is one more (a 0-d
    ``s + a*b + ...`` of 14 checked ops took 46 s to compile with them, docs/notes/gpu.rst)."""
    return f"({bit} * ({cond}))"


class Check(NamedTuple):
    """One op site's check: ``usual``, an expression true when the op raised nothing for
    sure (the element's sites are tested together: one compare each, one branch), and
    ``bits``, the NPY_FPE bits it raised (0 when none), ORed into ``fpe[site]`` when
    ``usual`` is not true. ``implied``: ``usual`` follows from another site's (the value
    propagates into it: :func:`implied_tests`), so the element's test leaves it out."""
    usual: str
    site: int
    bits: str
    implied: bool = False


#: ops whose real float result is inf or NaN whenever the real float operand at these
#: positions is (``nan * 0``, ``inf + -inf``, ``inf * 0`` and ``inf / inf`` are NaN; ``x / inf``
#: is not, so only ``divide``'s dividend): a non-finite value never turns finite through them
PROPAGATES = {"add": (0, 1), "subtract": (0, 1), "multiply": (0, 1), "divide": (0,),
              "negative": (0,), "positive": (0,), "absolute": (0,), "square": (0,),
              "sqrt": (0,), "astype": (0,)}


def implied_tests(chain: list[Instr], sites: Collection[int]) -> set[int]:
    """The sites (chain indices) whose test ``|result| < inf`` a later site's test implies:
    the value reaches that site's result through :data:`PROPAGATES` ops only, so if it were
    inf or NaN the later test would fail too, and the element's one test (:func:`merged`)
    needs only the later one (the Jacobi step: 5 tests -> 1; all five sites' flags are still
    derived when it fails)."""
    reaches = [False] * len(chain)   # a non-finite value here makes some site's result non-finite
    for n in reversed(range(len(chain))):
        if chain[n].dtype.kind == "f":
            reaches[n] = any(
                ins.dtype.kind == "f" and (j in sites or reaches[j])
                and any(ins.args[p] == n for p in PROPAGATES.get(ins.op, ()))
                for j, ins in enumerate(chain[n + 1:], n + 1))
    return {n for n in sites if reaches[n]}


def check(ins: Instr, site: int, result: str, operands: list[str],
          operand_dtypes: list[np.dtype]) -> Check:
    """The check of one op whose value is ``result``."""
    if ins.op == "astype":
        return _cast_check(site, result, operands[0], operand_dtypes[0], ins.dtype)
    if ins.op in COMPLEX_ORDER:
        (ar, ai), (br, bi) = _parts(operands[0], operand_dtypes[0]), _parts(operands[1], operand_dtypes[1])
        nan_real = _any([f"{ar} != {ar}", f"{br} != {br}"])
        nan_imag = _any([f"{ai} != {ai}", f"{bi} != {bi}"])
        raised = _any([nan_real, _all([f"{ar} == {br}", nan_imag])])
        return Check(_not(raised), site, _flag(INVALID, raised))
    if ins.dtype.kind not in "fc":          # integer division and reciprocal
        a, b = (operands + [""])[:2]
        if ins.op == "reciprocal":
            return Check(f"({a} != 0)", site, _flag(DIVIDE | INVALID, f"{a} == 0"))
        bits = _flag(DIVIDE, f"{b} == 0")
        if ins.op == "floor_divide" and ins.dtype.kind == "i":
            low = int(np.iinfo(ins.dtype).min)
            bits += " | " + _flag(OVERFLOW, _all([f"{b} == -1", f"{a} == {low}"]))
            return Check(f"(({b} != 0) & ({b} != -1))", site, bits)
        return Check(f"({b} != 0)", site, bits)
    parts = _parts(result, ins.dtype)
    finite = " & ".join(f"(abs({p}) < {_INF})" for p in parts)
    return Check(f"({finite})", site, _float_bits(ins, parts, operands, operand_dtypes))


def usual_test(checks: list[Check]) -> str:
    """``if not (...):``: the one test, of the checks no other implies, that none raised."""
    return f"if not ({' & '.join(c.usual for c in checks if not c.implied)}):"


def merged(checks: list[Check]) -> list[str]:
    """The checks of one element's sites: one test of them all, then each site's flags."""
    if not checks:
        return []
    return [usual_test(checks), *(f"    _fpe_set(fpe, {c.site}, {c.bits})" for c in checks)]


def _float_bits(ins: Instr, parts: list[str], operands: list[str], dts: list[np.dtype]) -> str:
    """The NPY_FPE bits of a float (or complex) op whose result is inf or NaN (0 when it is
    finite): an int expression of the operands and the result's parts."""
    op = ins.op
    flt = [(p, dt) for v, dt in zip(operands, dts) if dt.kind in "fc" for p in _parts(v, dt)]
    no_nan = _all([f"{p} == {p}" for p, _ in flt])
    finite = _all([f"abs({p}) < {_INF}" for p, _ in flt])
    is_nan = _any([f"{p} != {p}" for p in parts])
    is_inf = _any([f"abs({p}) == {_INF}" for p in parts])
    if op == "spacing":     # NaN of an inf or NaN: invalid in float16's loop only
        no_nan = "True" if dts[0] == np.dtype(np.float16) else "False"
    if op in ("logaddexp", "logaddexp2"):
        no_nan = "True"
    if op == "nextafter":
        finite = f"abs({operands[0]}) < {_INF}"
    invalid = _flag(INVALID, _all([is_nan, no_nan]))
    if op in _COMPLEX_STEPS and all(dt.kind == "c" for dt in dts):
        parts_in = [p for v, dt in zip(operands, dts) for p in _parts(v, dt)]
        invalid = _flag(INVALID, _complex_invalid(op, *parts_in))
    if op == "exp" and dts[0].kind == "c":
        # glibc's cexp (NumPy's) raises invalid for a finite real part with a NaN imaginary
        # one, and for a NaN real part with an imaginary part not zero and not NaN
        ar, ai = _parts(operands[0], dts[0])
        invalid = _flag(INVALID, _any([_all([is_nan, no_nan]),
                                       _all([f"abs({ar}) < {_INF}", f"{ai} != {ai}"]),
                                       _all([f"{ar} != {ar}", f"{ai} == {ai}", f"{ai} != 0"])]))
    pole = POLE.get(op)
    if op in ("power", "float_power"):
        # An infinite exponent raises nothing (C99 Annex F: the result is exact), but
        # ``power``'s float32/float64 loops report 0 ** -inf as a divide by zero (float16's
        # and ``float_power``'s do not). NumPy's SIMD pow also reports overflow for some
        # finite bases to +inf (1e30 in float32, the float64 maximum, not 2 or 100): an
        # accident of its internals, not followed (docs/testing.rst, "Where NumPy's own
        # order decides").
        a, b = operands[0], operands[1]
        pole_at_inf = "True" if op == "power" and dts[0] in (_F32, _F64) else f"abs({b}) < {_INF}"
        at_pole = _all([f"{a} == 0", pole_at_inf])
        return " | ".join([invalid, _flag(DIVIDE, _all([is_inf, at_pole])),
                           _flag(OVERFLOW, _all([is_inf, _not(at_pole), finite]))])
    if pole is None:
        return f"{invalid} | {_flag(OVERFLOW, _all([is_inf, finite]))}"
    # (float16's floor_divide divides in float32 and rounds: its overflow is only that)
    over = OVERFLOW | INVALID if op == "floor_divide" and dts[0] != _F16 else OVERFLOW
    at_pole = pole.format(*operands)
    bits = [invalid, _flag(DIVIDE, _all([is_inf, finite, at_pole])),
            _flag(over, _all([is_inf, finite, _not(at_pole)]))]
    if op == "divide" and all(dt.kind == "c" for dt in dts):
        bits.append(_flag(OVERFLOW, _smith_scale_overflow(*_parts(operands[1], dts[1]))))
    return " | ".join(bits)


#: complex ops whose invalid flag follows NumPy's loop step by step (:func:`_complex_invalid`)
#: (not ``multiply``: NumPy's SIMD loop and its strided loop raise differently, ``1j * (inf+nanj)``
#: is invalid in one only; the rule of the parts stays)
_COMPLEX_STEPS = frozenset({"add", "subtract", "divide", "reciprocal"})


def _inf_times_zero(x: str, y: str) -> str:
    return _any([_all([f"abs({x}) == {_INF}", f"{y} == 0"]), _all([f"{x} == 0", f"abs({y}) == {_INF}"])])


def _inf_minus_inf(x: str, y: str, subtract: bool = False) -> str:
    """``x + y`` (``x - y``) of infinities of opposite (the same) signs."""
    return _all([f"abs({x}) == {_INF}", f"abs({y}) == {_INF}", f"{x} {'==' if subtract else '!='} {y}"])


def _smith_steps(nr: str, ni: str, big: str, small: str) -> list[str]:
    """The invalid steps of NumPy's complex division once it picked the divisor's larger
    part ``big``: ``rat = small / big``, ``scl = 1 / (big + small * rat)``, then
    ``(nr + ni * rat) * scl`` and ``(ni - nr * rat) * scl`` (flag for flag what it computes
    for either branch: adding and subtracting are symmetric in their flags)."""
    rat = f"({small} / {big})"
    scl = f"(1.0 / ({big} + {small} * {rat}))"
    return [_all([f"abs({small}) == {_INF}", f"abs({big}) == {_INF}"]),
            _inf_times_zero(small, rat), _inf_minus_inf(big, f"{small} * {rat}"),
            _inf_times_zero(ni, rat), _inf_minus_inf(nr, f"{ni} * {rat}"),
            _inf_times_zero(f"({nr} + {ni} * {rat})", scl),
            _inf_times_zero(nr, rat), _inf_minus_inf(ni, f"{nr} * {rat}", True),
            _inf_times_zero(f"({ni} - {nr} * {rat})", scl)]


def _smith_scale_overflow(br: str, bi: str) -> str:
    """Where NumPy's complex division overflows computing ``scl = 1 / (big + small * rat)``
    (a subnormal divisor: ``x / (1e-310+1e-310j)`` overflows even where the result is NaN)."""
    def scale(big: str, small: str) -> str:
        den = f"({big} + {small} * ({small} / {big}))"
        return _all([f"abs(1.0 / {den}) == {_INF}", f"abs({den}) < {_INF}"])
    wide = f"abs({br}) >= abs({bi})"
    return _any([_all([wide, _not(_all([f"{br} == 0", f"{bi} == 0"])), scale(br, bi)]),
                 _all([f"abs({br}) < abs({bi})", scale(bi, br)])])


def _complex_invalid(op: str, ar: str, ai: str, br: str = "", bi: str = "") -> str:
    """Where NumPy's complex loop raises invalid: one of its IEEE steps on the parts does
    (inf - inf, 0 * inf, inf / inf, 0 / 0, an ordered compare of a NaN); steps on a NaN are
    quiet, so "a NaN from operands without NaN" misses most of these (``-inf + (inf+nanj)``
    is invalid in the real part)."""
    if op == "add":
        return _any([_inf_minus_inf(ar, br), _inf_minus_inf(ai, bi)])
    if op == "subtract":
        return _any([_inf_minus_inf(ar, br, True), _inf_minus_inf(ai, bi, True)])
    if op == "reciprocal":   # |ai| <= |ar| compares first: a NaN part is invalid; then 1 / z
        return _any([f"{ar} != {ar}", f"{ai} != {ai}", _complex_invalid("divide", "1.0", "0.0", ar, ai)])
    # divide: Smith's algorithm, as NumPy's loop runs it (|br| >= |bi| compares first)
    nan_b = _any([f"{br} != {br}", f"{bi} != {bi}"])
    wide = f"abs({br}) >= abs({bi})"
    zero = _all([f"{br} == 0", f"{bi} == 0"])
    return _any([nan_b,
                 _all([zero, _any([f"{ar} == 0", f"{ai} == 0"])]),       # 0 / 0
                 _all([wide, _not(zero), _any(_smith_steps(ar, ai, br, bi))]),
                 _all([_not(nan_b), _not(wide), _any(_smith_steps(ai, ar, bi, br))])])


#: float -> integer casts: the C conversion NumPy's loop uses and the values it takes
#: (trunc toward zero): int32 for the narrower types, int64, and uint64
_INT_RANGE = {"int32": ("-2147483649.0", "2147483648.0"),
              "int64": ("-9223372036854777856.0", "9223372036854775808.0"),
              "uint64": ("-9223372036854777856.0", "18446744073709551616.0")}


def _cast_check(site: int, result: str, src_val: str, src: np.dtype, dst: np.dtype) -> Check:
    if dst.kind == "c":
        pairs = list(zip(_parts(result, dst), _parts(src_val, src) if src.kind == "c" else [src_val]))
        usual = " & ".join(f"(abs({r}) < {_INF})" for r in _parts(result, dst))
        over = _any([_all([f"abs({r}) == {_INF}", f"abs({v}) < {_INF}"]) for r, v in pairs])
        return Check(f"({usual})", site, _flag(OVERFLOW, over))
    if dst.kind in "iu":
        via = "uint64" if dst == np.dtype(np.uint64) else \
            "int64" if dst.itemsize == 8 or (dst.kind == "u" and dst.itemsize == 4) else "int32"
        low, high = _INT_RANGE[via]
        usual = f"(({src_val} > {low}) & ({src_val} < {high}))"
        return Check(usual, site, _flag(INVALID, _not(usual)))
    src_part = f"{src_val}.real" if src.kind == "c" else src_val
    over = _all([f"abs({result}) == {_INF}"] + ([f"abs({src_part}) < {_INF}"] if src.kind in "fc" else []))
    return Check(f"(abs({result}) < {_INF})", site, _flag(OVERFLOW, over))


#: the kernel's helper that ORs bits into a site's word (read first: when every element
#: raises, the atomics stop after the first of each bit)
SET_SOURCE = """@_devfn
def _fpe_set(fpe, k, bits):
    if bits != 0 and (fpe[k] & bits) != bits:
        _atomic_or(fpe, k, _C_uint32(bits))
"""


def seen_update(w: str) -> list[str]:
    """After ``acc (+ or *)= w`` of a float sum/prod/mean: whether the thread's operands held
    a NaN (``sn``) or an infinity (``si``); branch-free, nothing tested per element."""
    return [f"sn = sn | ({w} != {w})", f"si = si | (abs({w}) == {_INF})"]


def thread_check(site: int, acc: str) -> list[str]:
    """A thread's accumulator, once its share is folded: a sum or product that is not finite
    stays so, so one test finds what a test per element would: a NaN from operands without
    one is invalid (``inf - inf``, ``0 * inf``), an infinity from finite operands an overflow.
    (The order of events inside a share is not kept: an overflow in a share that also holds
    an infinity is not told apart, as NumPy's pairwise order would not tell either:
    docs/testing.rst.) The partials are then combined with :func:`combine_check`, so a
    site's word holds only flags that were raised: launches can share it (``flags``)."""
    bits = (f"{_flag(INVALID, _all([f'{acc} != {acc}', _not('sn')]))} | "
            f"{_flag(OVERFLOW, _all([f'abs({acc}) == {_INF}', _not('si')]))}")
    return [f"if not (abs({acc}) < {_INF}):", f"    _fpe_set(fpe, {site}, {bits})"]


def combine_check(site: int, result: str, a: str, b: str) -> list[str]:
    """After ``result = a (+ or *) b``, two partials combined: invalid for a NaN from partials
    without one, overflow for an infinity from finite ones."""
    invalid = _all([f"{result} != {result}", f"{a} == {a}", f"{b} == {b}"])
    overflow = _all([f"abs({result}) == {_INF}", f"abs({a}) < {_INF}", f"abs({b}) < {_INF}"])
    bits = f"{_flag(INVALID, invalid)} | {_flag(OVERFLOW, overflow)}"
    return [f"if not (abs({result}) < {_INF}):", f"    _fpe_set(fpe, {site}, {bits})"]


def result_check(site: int, value: str, acc: str) -> list[str]:
    """The flags of a reduction's result ``value`` from its combined accumulator ``acc``
    (every combine before it was checked): rounded to an infinity (float32, float16) from a
    finite accumulator, an overflow."""
    return [f"if abs({value}) == {_INF} and abs({acc}) < {_INF}:",
            f"    _fpe_set(fpe, {site}, {OVERFLOW})"]
