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

Programs with a step CuPy does not compute as the kernel does are not run this way (their
first call waits for the compile, as under ``compile="wait"``): complex values, random draws,
the host's ops (``reference.CUPY_ON_HOST``) and var/std/argmin/argmax (their chain is, through
``CudaBackend._fallback``).
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
from ..reference import CUPY_ON_HOST, _apply, reduction_kwargs
from . import flags, fp_checks
from .render import NATIVE_REDUCTIONS, reduction_of

_OPERANDS = ("_a0", "_a1", "_a2")
#: calls run op by op in this process (tests/test_first_calls.py counts them)
stats = {"calls": 0}


@functools.lru_cache(maxsize=4096)
def runs_op_by_op(program: Program) -> bool:
    """Whether ``program``'s first calls may run op by op while its kernel compiles."""
    instrs = program.instrs
    for ins in instrs:
        if ins.op in ("input", "scalar"):
            if ins.dtype.kind == "c":
                return False
            continue
        if ins.op == "counter" or ins.op in CUPY_ON_HOST or ins.dtype.kind == "c" \
                or any(instrs[a].dtype.kind == "c" for a in ins.args):
            return False
        kind = OPS[ins.op].kind
        if kind == "reduction":
            if ins.op not in NATIVE_REDUCTIONS or ins is not program.root:
                return False
        elif kind != "elementwise" and ins.op != "astype":
            return False
    return True


@functools.lru_cache(maxsize=4096)
def _site_bits(ins: Instr, dtypes: tuple[np.dtype, ...]) -> Any:
    """The compiled flag expression of one op site (NPY_FPE bits, 0 where none), of the
    result ``_r`` and the operands ``_a0``..."""
    check = fp_checks.check(ins, 0, "_r", list(_OPERANDS[:len(dtypes)]), list(dtypes))
    return compile(check.bits, f"<fp check of {ins.op}>", "eval")


def _word(xp: Any, bits: Any) -> int:
    """The OR of a site's bits over its elements (a Python int, or an array of them)."""
    if not hasattr(bits, "dtype"):
        return int(bits)
    if bits.size == 0 or not bool(bits.any()):
        return 0
    return sum(b for b in (fp_checks.DIVIDE, fp_checks.OVERFLOW, fp_checks.INVALID)
               if bool((bits & b).any()))


def _reduce_bits(xp: Any, ins: Instr, a: Any, r: Any) -> int:
    """The kernel's "reduce" site (a float sum/prod/mean): a NaN result from a slice without a
    NaN is invalid, an infinite result from a slice without an infinity an overflow
    (``fp_checks.thread_check``, ``combine_check``, ``result_check``)."""
    kw = reduction_kwargs(ins.op, ins.arg)
    axis = kw["axis"]
    had_nan = xp.isnan(a).any(axis=axis, keepdims=kw["keepdims"])
    had_inf = xp.isinf(a).any(axis=axis, keepdims=kw["keepdims"])
    bits = fp_checks.INVALID * (xp.isnan(r) & ~had_nan) | fp_checks.OVERFLOW * (xp.isinf(r) & ~had_inf)
    return _word(xp, xp.asarray(bits))


def run(xp: Any, lowered: Lowered, checked: bool) -> Any:
    """``lowered``'s value computed op by op with ``xp`` (CuPy; NumPy on the simulated
    device), its floating-point flags derived as the checked kernel's are when ``checked``."""
    stats["calls"] += 1
    instrs = lowered.program.instrs
    root = lowered.program.root
    values: list[Any] = [None] * len(instrs)
    raised: list[tuple[int, str]] = []
    sites = 0
    quiet = np.errstate(all="ignore") if xp is np else contextlib.nullcontext()
    with quiet:
        for n, ins in enumerate(instrs):
            if ins.op == "input":
                values[n] = lowered.inputs[ins.arg[0]]
                continue
            if ins.op == "scalar":
                values[n] = lowered.scalars[ins.arg]
                continue
            operands = [values[a] for a in ins.args]
            values[n] = _apply(xp, ins.op, ins.arg, operands, ins.dtype)
            if not checked:
                continue
            if ins is root and OPS[ins.op].kind == "reduction":
                red = reduction_of(ins, instrs[ins.args[0]].dtype)
                if ins.op in ("sum", "prod", "mean") and red.acc.kind == "f":
                    raised.append((_reduce_bits(xp, ins, xp.asarray(operands[0]), xp.asarray(values[n])),
                                   "reduce"))
                continue
            dtypes = tuple(instrs[a].dtype for a in ins.args)
            name = fp_checks.site_name(ins, list(dtypes))
            if name is None or sites >= fp_checks.MAX_SITES - 1:
                continue
            sites += 1
            env = dict(zip(_OPERANDS, operands), _r=values[n])
            raised.append((_word(xp, eval(_site_bits(ins, dtypes), {"math": math, "abs": abs}, env)),
                           name))
    raised = [(w, name) for w, name in raised if w]
    if raised:
        flags.settle()                  # the earlier launches' warnings first, in their order
        fp_errors.report(raised, flags.user_line())
    return xp.asarray(values[-1])
