"""A new kernel's first calls: its program op by op with the device's array library while the
kernel compiles on a background thread (``la.config(compile="background")``, the default).

Numba compiles a new fused kernel in ~0.2-1.3 s (docs/notes/gpu.rst, "Compile time"); CuPy's
op-by-op calls of the same program take milliseconds in a process that has run those ops
before. So a call that misses the kernel caches (memory and disk) starts the compile on the
backend's one compile thread and computes this call op by op; a later call launches the kernel
once it is loaded (``CudaBackend.run``). What the op-by-op call keeps of the kernel's contract:

* the values: elementwise ops are CuPy's, whose kernels call the same CUDA math functions as
  lazyarr's (libdevice) at the same precision; reductions follow lazy mode's rules
  (``reduction_rules``: float64 accumulation rounded once, NumPy's signed zeros), so a float
  sum can differ from the kernel's in its last bits only, as two summation orders do
  (docs/testing.rst, "Where NumPy's own order decides");
* NumPy's floating-point errors: each op site the kernel would check is checked here from the
  same rule (:func:`fp_checks.check`'s flag expression, which is branch-free: it evaluates on
  whole arrays as it does on one element), in the kernel's site order and names, and handled
  as the error state says, at the user's line.

Only the ops that CuPy computes as the kernels do run this way (:data:`SAME_ON_CUPY`: IEEE
arithmetic, comparisons and logic, and the CUDA math functions), and ``maximum``/``minimum``/
``fmax``/``fmin`` and ``sign`` as the kernels' own selects (:data:`SELECTS`: CuPy's are CUDA's
``fmax``/``fmin`` with a canonical NaN, which keep neither NumPy's signed-zero ties nor its NaN
payloads, and CuPy's ``sign`` of NaN is 0). A program with another step waits for its
compile, as under ``compile="wait"``:

* the ops whose templates copy NumPy's own loops where CuPy's differ (on an H100:
  ``remainder(0, inf)`` NaN against NumPy's 0, ``floor_divide(inf, 1)`` inf against NaN,
  ``hypot(1, DBL_MAX)`` inf), integer division, power and shifts;
* float-to-integer casts, casts to float16 from float64 or wide integers (the kernel rounds
  through float32), ``floor``/``ceil``/``trunc``/``rint`` of integers (NumPy 2 keeps their
  dtype);
* complex values, random draws, the host's ops, and var/std/argmin/argmax (their chain is a
  program of its own, through ``CudaBackend._fallback``);
* float32 ``exp2``, which CuPy's ``-ftz=true`` makes an approximation
  (:data:`FLOAT32_NOT_THE_KERNELS`), and any float32 op that can make a subnormal value and is
  not in :data:`FLUSH_TESTS`.

float32 values need one more test. CuPy compiles its kernels with ``-ftz=true``
(``cupy/cuda/compiler.py``): float32 subnormals are read as zeros and made as zeros there, where
the kernel (and NumPy) keeps them: ``log(1e-40)`` is -inf there, ``1e-20 * 1e-20`` is 0. A
flush can only change a value that is or would be subnormal, and a CuPy kernel never makes one,
so a float32 program is CuPy's exactly when (a) no float32 input or constant is subnormal (a
test of the bits, as integers) and (b) no op site made a zero where the kernel's exact result
would not be zero (:data:`FLUSH_TESTS`: per op that can make a subnormal from normal operands,
``r == 0`` where the operands, in float64, say the result is not an exact zero). Both are read
with the floating-point tests, in the call's one synchronization; where one fails the call
takes the kernel instead (:class:`Flushed`). float64 has no flush; float16 is computed through
float32, where its values and their products are normal numbers.

One synchronization per call: each checked site's ``usual`` test (nothing raised) and each
float32 flush test is reduced on the device, the tests are read together at the end, and only
when a ``usual`` test fails does the program run again with every site's flags derived
(:func:`_run`'s ``flags_now``). Intermediates are dropped after their last use, as eager mode
does (a call whose temporaries do not fit in GPU memory waits for the kernel:
``CudaBackend.run``).
"""
from __future__ import annotations

import contextlib
import functools
import math
from typing import Any

import numpy as np

from ..._program import Instr, Lowered, Program
from ..._registry import OPS
from .. import fp_errors
from ..reference import _apply, _last_uses, reduction_kwargs
from . import flags, fp_checks
from .render import NATIVE_REDUCTIONS, reduction_of

_OPERANDS = ("_a0", "_a1", "_a2")
#: calls run op by op in this process, and of them those that took the kernel instead as a
#: float32 value may have been flushed (tests/test_first_calls.py counts them)
stats = {"calls": 0, "flushed": 0}
#: the elementwise ops whose CuPy kernels compute what lazyarr's templates do (IEEE arithmetic,
#: comparisons, logic, the CUDA math functions: cuda/templates.py), float-only where noted
SAME_ON_CUPY = frozenset({
    "add", "subtract", "multiply", "negative", "positive", "square", "abs", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal", "isnan", "isinf",
    "isfinite", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "invert", "where"})
SAME_ON_CUPY_FLOAT = frozenset({
    "divide", "reciprocal", "power", "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2",
    "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "arctan2", "floor", "ceil", "trunc", "rint"})
_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_TINY32 = np.finfo(np.float32).tiny


class Flushed(Exception):
    """A float32 value of the call may be one that CuPy's ``-ftz=true`` kernels flushed: the
    call takes the kernel instead (``CudaBackend.run``)."""


def _wide(xp: Any, v: Any) -> Any:
    """An operand as float64 (exact: a float32 op's operands are float32 or narrower)."""
    return xp.asarray(v).astype(_F64)


def _nonzero_operand(xp: Any, r: Any, a: Any, *rest: Any) -> Any:
    return (r == 0) & (_wide(xp, a) != 0)


#: per float32 op that can make a subnormal from normal operands: where CuPy's result ``r`` may
#: be a flushed one, i.e. it is zero where the exact result is not (the operands read in
#: float64, exactly, without a flush; a sum or product of two float32 values is exact there).
#: The ops of :data:`NO_FLUSH` cannot make one: with normal operands (tested at the inputs:
#: CuPy makes no subnormal) their results are normal, zero, infinite or NaN as the kernel's.
FLUSH_TESTS: dict[str, Any] = {
    "add": lambda xp, r, a, b: (r == 0) & (_wide(xp, a) + _wide(xp, b) != 0),
    "subtract": lambda xp, r, a, b: (r == 0) & (_wide(xp, a) - _wide(xp, b) != 0),
    "multiply": lambda xp, r, a, b: (r == 0) & (_wide(xp, a) * _wide(xp, b) != 0),
    "divide": lambda xp, r, a, b: _nonzero_operand(xp, r, a) & ~xp.isinf(_wide(xp, b)),
    "arctan2": lambda xp, r, a, b: _nonzero_operand(xp, r, a) & ~xp.isinf(_wide(xp, b)),
    "reciprocal": lambda xp, r, a: (r == 0) & ~xp.isinf(_wide(xp, a)),
    "exp": lambda xp, r, a: (r == 0) & (_wide(xp, a) > -math.inf),
    # (these are ~x near zero, so zero only at zero; tested all the same, as libdevice's
    # flushing variants are not documented element by element)
    **dict.fromkeys(("square", "power", "expm1", "log1p", "sin", "tan", "arcsin", "arctan",
                     "sinh", "tanh", "arcsinh", "arctanh", "cbrt", "astype"), _nonzero_operand),
}
NO_FLUSH = frozenset({
    "negative", "positive", "abs", "sqrt", "log", "log2", "log10", "cos", "arccos", "cosh",
    "arccosh", "floor", "ceil", "trunc", "rint", "where", "maximum", "minimum", "fmax", "fmin",
    "sign", "min", "max"})
#: float32 ops whose CuPy kernels are not the kernels' arithmetic: under -ftz=true libdevice's
#: exp2f is one ``ex2.approx.ftz`` (exp2(8.6e-8) is 1.0000001 where the kernel's, and NumPy's,
#: is 1.0: 189 million float32 inputs differ on an H100, tools/device/ftz_probe.py)
FLOAT32_NOT_THE_KERNELS = frozenset({"exp2"})
#: float32 reductions: accumulated in float64 and rounded once (reduction_rules), where the
#: rounding may flush; a zero result is taken as one
_REDUCTIONS_ROUNDED = frozenset({"sum", "prod", "mean"})


def _subnormal(xp: Any, a: Any) -> Any:
    """Whether float32 ``a`` holds a subnormal: a test of its bits (a float compare would
    flush it), as a device boolean."""
    magnitude = xp.asarray(a).view(np.uint32) & np.uint32(0x7FFFFFFF)
    return xp.any((magnitude != 0) & (magnitude < np.uint32(0x00800000)))


def _select(ge: str, gt: str, nan_kept: int) -> Any:
    """A select op of cuda/templates.py, as ``where(picks_first, a, b)``: the bits of the
    operand picked (NaN payloads and zero signs included). The compare: ``ge`` on ties for
    integers and float16 (the first operand kept), ``gt`` for float32/float64 (the second:
    NumPy's SIMD loops); for floats the first operand is also picked where operand
    ``nan_kept`` is NaN (maximum/minimum: a NaN first operand is kept, and a NaN second one
    loses every compare; fmax/fmin: the first is kept unless the second is NaN-free and wins)."""
    def op(xp: Any, a: Any, b: Any, dtype: np.dtype) -> Any:
        picks_first = getattr(xp, ge if dtype.kind != "f" or dtype == _F16 else gt)(a, b)
        if dtype.kind == "f":
            picks_first = picks_first | xp.isnan((a, b)[nan_kept])
        return xp.where(picks_first, a, b)
    return op


#: the select ops, as cuda/templates.py computes them (sign: helpers.H_fsign)
SELECTS = {
    "maximum": _select("greater_equal", "greater", 0),
    "minimum": _select("less_equal", "less", 0),
    "fmax": _select("greater_equal", "greater", 1),
    "fmin": _select("less_equal", "less", 1),
    "sign": lambda xp, a, dt: _float_sign(xp, a, dt) if dt.kind == "f" else xp.sign(a),
}


def _float_sign(xp: Any, a: Any, dtype: np.dtype) -> Any:
    """helpers.H_fsign as selects: 1, -1, +0 for either zero, a NaN as it is (CuPy's sign of
    NaN is 0)."""
    one, zero = xp.asarray(1, dtype), xp.asarray(0, dtype)
    return xp.where(a > 0, one, xp.where(a < 0, -one, xp.where(a == 0, zero, a)))


@functools.lru_cache(maxsize=4096)
def runs_op_by_op(program: Program) -> bool:
    """Whether ``program``'s first calls may run op by op while its kernel compiles."""
    instrs = program.instrs
    for ins in instrs:
        if ins.dtype.kind == "c" or any(instrs[a].dtype.kind == "c" for a in ins.args):
            return False
        if ins.op in ("input", "scalar"):
            continue
        if ins.dtype == _F32 and (ins.op in FLOAT32_NOT_THE_KERNELS or ins.op not in FLUSH_TESTS
                                  and ins.op not in NO_FLUSH and ins.op not in _REDUCTIONS_ROUNDED):
            return False            # (CuPy's -ftz=true: no test of its flushes here)
        if ins.op == "astype":
            src = instrs[ins.args[0]].dtype
            if ins.dtype.kind in "iub" and src.kind == "f":
                return False        # (out-of-range and NaN values: NumPy's C conversion)
            if ins.dtype == _F16 and not (src == _F32 or src.kind in "biu" and src.itemsize <= 2):
                return False        # (the kernel rounds through float32 first: exact from these)
        elif ins.op in NATIVE_REDUCTIONS:
            if ins is not program.root:
                return False
        elif ins.op in SAME_ON_CUPY_FLOAT:
            if ins.dtype.kind != "f":
                return False
        elif ins.op in SELECTS:
            if any(instrs[a].dtype != ins.dtype for a in ins.args):
                return False        # (mixed operands: the kernel's casts; not taken here)
        elif ins.op not in SAME_ON_CUPY:
            return False
    return True


@functools.lru_cache(maxsize=4096)
def _site_check(ins: Instr, dtypes: tuple[np.dtype, ...]) -> tuple[Any, Any]:
    """The compiled ``usual`` and flag expressions of one op site (fp_checks.check), of the
    result ``_r`` and the operands ``_a0``..."""
    check = fp_checks.check(ins, 0, "_r", list(_OPERANDS[:len(dtypes)]), list(dtypes))
    usual = "isfinite(_r)" if check.usual == _FINITE else check.usual
    return (compile(usual, f"<fp test of {ins.op}>", "eval"),
            compile(check.bits, f"<fp check of {ins.op}>", "eval"))


#: a real float op's ``usual`` test: evaluated as the array module's ``isfinite`` (the same
#: truth, NaN included; one kernel where ``abs`` and ``<`` are two, each compiled by CuPy at
#: its first use in a process)
_FINITE = "((abs(_r) < math.inf))"


_NAMESPACE = {"math": math, "abs": abs}


def _all(xp: Any, test: Any) -> Any:
    """Whether ``test`` holds everywhere: a device boolean (no synchronization)."""
    return xp.all(xp.asarray(test))


def _word(xp: Any, bits: Any) -> Any:
    """The OR of a site's NPY_FPE bits over its elements, as a device integer."""
    bits = xp.asarray(bits)
    word = xp.zeros((), np.int64)
    for b in (fp_checks.DIVIDE, fp_checks.OVERFLOW, fp_checks.INVALID):
        word = word + b * xp.any((bits & b) != 0)
    return word


def _reduce_bits(xp: Any, ins: Instr, a: Any, r: Any) -> Any:
    """The kernel's "reduce" site (a float sum/prod/mean): a NaN result from a slice without a
    NaN is invalid, an infinite result from a slice without an infinity an overflow
    (``fp_checks.thread_check``, ``combine_check``, ``result_check``)."""
    kw = reduction_kwargs(ins.op, ins.arg)
    had_nan = xp.isnan(a).any(axis=kw["axis"], keepdims=kw["keepdims"])
    had_inf = xp.isinf(a).any(axis=kw["axis"], keepdims=kw["keepdims"])
    return fp_checks.INVALID * (xp.isnan(r) & ~had_nan) | fp_checks.OVERFLOW * (xp.isinf(r) & ~had_inf)


def run(xp: Any, lowered: Lowered, checked: bool) -> Any:
    """``lowered``'s value computed op by op with ``xp`` (CuPy; NumPy on the simulated
    device), its floating-point flags derived as the checked kernel's are when ``checked``."""
    stats["calls"] += 1
    value, tests, flushes = _run(xp, lowered, checked, flags_now=False)
    if flushes or tests:
        read = _host(xp, tests + flushes)
        if any(read[len(tests):]):
            stats["flushed"] += 1
            raise Flushed
        tests_pass = all(read[:len(tests)])
    else:
        tests_pass = True
    if not tests_pass:
        # some site raised: again, with each site's flags (rare: NaN/inf values)
        value, words, _ = _run(xp, lowered, checked, flags_now=True)
        raised = [(int(w), name) for w, name in zip(_host(xp, [w for w, _ in words]),
                                                      [n for _, n in words]) if int(w)]
        if raised:
            flags.settle()              # the earlier launches' warnings first, in their order
            fp_errors.report(raised)
    return xp.asarray(value)


def _host(xp: Any, values: list[Any]) -> list[Any]:
    """Device scalars read in one copy."""
    return [v.item() for v in xp.stack([xp.asarray(v) for v in values])] if xp is not np \
        else [np.asarray(v).item() for v in values]


def _run(xp: Any, lowered: Lowered, checked: bool,
         flags_now: bool) -> tuple[Any, list[Any], list[Any]]:
    """The value; per checked site its ``usual`` test (or with ``flags_now`` its flags word
    and name); and the float32 flush tests (none with ``flags_now``: they passed), on the
    device."""
    instrs = lowered.program.instrs
    root = lowered.program.root
    last = _last_uses(instrs)
    values: list[Any] = [None] * len(instrs)
    out: list[Any] = []
    flushes: list[Any] = []
    with np.errstate(all="ignore") if xp is np else contextlib.nullcontext():
        for n, ins in enumerate(instrs):
            if ins.op == "input":
                values[n] = lowered.inputs[ins.arg[0]]
                if ins.dtype == _F32 and not flags_now:
                    flushes.append(_subnormal(xp, values[n]))
                continue
            if ins.op == "scalar":
                values[n] = lowered.scalars[ins.arg]
                if ins.dtype == _F32 and 0 < abs(np.float32(values[n])) < _TINY32:
                    stats["flushed"] += 1
                    raise Flushed       # (a subnormal constant: CuPy's kernels would read 0)
                continue
            operands = [values[a] for a in ins.args]
            select = SELECTS.get(ins.op)
            if select is not None:
                # (a scalar operand as an array of its dtype: a Python scalar in a compare
                # would take part in the promotion)
                r = select(xp, *(xp.asarray(v, instrs[a].dtype) for v, a in zip(operands, ins.args)),
                           ins.dtype)
            else:
                r = _apply(xp, ins.op, ins.arg, operands, ins.dtype)
            if getattr(r, "dtype", ins.dtype) != ins.dtype:
                r = xp.asarray(r).astype(ins.dtype)     # (a library's promotion of a scalar)
            values[n] = r
            if ins.dtype == _F32 and not flags_now:
                test = FLUSH_TESTS.get(ins.op)
                if test is not None:
                    flushes.append(xp.any(test(xp, r, *operands)))
                elif ins.op in _REDUCTIONS_ROUNDED:
                    flushes.append(xp.any(xp.asarray(r) == 0))
            if checked:
                out += _site(xp, ins, instrs, operands, r, ins is root, len(out), flags_now)
            for a in set(ins.args):
                if last[a] == n:
                    values[a] = None
    return values[-1], out, flushes


def _site(xp: Any, ins: Instr, instrs: Any, operands: list[Any], r: Any, at_root: bool,
          sites: int, flags_now: bool) -> list[Any]:
    """The site's test or (``flags_now``) flags word and name: [] where the kernel checks
    nothing (an op that cannot raise, past fp_checks.MAX_SITES)."""
    if at_root and OPS[ins.op].kind == "reduction":
        if ins.op not in ("sum", "prod", "mean") or \
                reduction_of(ins, instrs[ins.args[0]].dtype).acc.kind != "f":
            return []
        if not flags_now:
            return [_all(xp, xp.isfinite(xp.asarray(r)))]
        return [(_word(xp, _reduce_bits(xp, ins, xp.asarray(operands[0]), xp.asarray(r))), "reduce")]
    dtypes = tuple(instrs[a].dtype for a in ins.args)
    name = fp_checks.site_name(ins, list(dtypes))
    if name is None or sites >= fp_checks.MAX_SITES - 1:
        return []
    usual, bits = _site_check(ins, dtypes)
    env = dict(zip(_OPERANDS, operands), _r=r)
    if not flags_now:
        return [_all(xp, eval(usual, {**_NAMESPACE, "isfinite": xp.isfinite}, env))]
    return [(_word(xp, eval(bits, _NAMESPACE, env)), name)]
