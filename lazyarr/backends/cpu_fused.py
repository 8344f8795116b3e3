"""The fused CPU backend (``cpu-fused``): a block virtual machine compiled from Cython.

A lowered program runs in ONE pass over its inputs, block by block (a few thousand
elements, so every intermediate stays in L1/L2), with the GIL released and the blocks
spread over a small thread pool (``LAZYARR_NUM_THREADS`` or :func:`set_num_threads`).

* Elementwise instructions call NumPy's own strided inner loops, fetched once per
  program with ``ufunc._resolve_dtypes_and_context`` + ``ufunc._get_strided_loop``
  (NumPy's API for Numba-like consumers), so results are bit-identical to NumPy
  and keep its SIMD transcendentals. ``astype`` and ``where`` are C loops.
* A reduction at the root is fused into the same pass, under lazy mode's rules
  (``reduction_rules``): float sum/prod/mean/var/std accumulate in float64 (sums pairwise
  within a block and over blocks) and round once to the result dtype; integers wrap around
  as NumPy's; var/std from two-pass (mean, M2) pairs merged with Chan's formula; min/max
  order signed zeros as IEEE 754-2019 (+0 > -0).
* Setup (loops, casts, registers) is cached by the program (equal programs are equal keys); a repeated expression
  pays only the run. Anything the VM cannot run falls back to the reference backend.

Thread count never changes results: work is cut into the same blocks and partials are
combined in the same order whatever the number of threads.
"""
from __future__ import annotations

import functools
import math
import os
import queue
import threading
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .._config import THREAD_ENVIRONMENT
from .. import _memory
from .._counters import CounterMap
from . import cpu_loops, cpu_stencil
from .._dtypes import SUPPORTED_DTYPES
from .._memo import BuildOnce
from .._shapes import broadcast_shapes
from .._plan import InputInfo, Kernel, Plan
from .._program import Instr, Lowered, Program
from ._bind import bound
from .._registry import OPS, TRANSCENDENTAL
from . import _cpu_vm  # type: ignore[attr-defined]  # ImportError: lazy cpu uses the reference backend
from . import fp_errors, reduction_rules

if not hasattr(np.add, "_get_strided_loop") or not hasattr(np.add, "_resolve_dtypes_and_context"):
    raise ImportError("cpu-fused needs ufunc._get_strided_loop (NumPy >= 1.24)")

__all__ = ["BACKEND", "CpuFusedBackend", "set_num_threads", "get_num_threads",
           "set_result_pool_bytes", "release_result_pool", "result_pool_info"]

# The VM's numbers are defined once, in the X-macro tables of _cpu_vm.h, and read here by name.
#: dtype -> type code of _cpu_vm.h
TYPE_CODE = {np.dtype(name): code for name, code in _cpu_vm.DTYPE_CODES.items()}
if tuple(TYPE_CODE) != SUPPORTED_DTYPES:
    raise ImportError(f"_cpu_vm.h's LZ_DTYPES {tuple(TYPE_CODE)} is not lazyarr._dtypes."
                      f"SUPPORTED_DTYPES {SUPPORTED_DTYPES}: rebuild the extension or fix the table")

_MODE_EW, _MODE_RED_A, _MODE_RED_B, _MODE_RED_ROWS = (
    _cpu_vm.MODES[m] for m in ("elementwise", "slot_major", "reduce_major", "row_blocks"))
#: the reduction the VM computes for a lazyarr reduction op: mean is a sum and std a var,
#: finished in :func:`_finalize`
_VM_REDUCTION = {"sum": "sum", "mean": "sum", "prod": "prod", "min": "min", "max": "max",
                 "any": "any", "all": "all", "argmin": "argmin", "argmax": "argmax",
                 "var": "var", "std": "var"}

#: below this many elements a reduction runs on one thread (waking threads costs more)
SERIAL_BELOW = 1 << 15
#: an elementwise run takes the thread pool from this much work (elements x ``Compiled.work``;
#: below, one thread is faster: a second one pays for itself only on ~100 µs of one thread's
#: work on the 2-core machine, docs/notes/cpu.rst 2026-12-04c)
PARALLEL_WORK = 3 << 20
#: what an instruction of these ops weighs in ``Compiled.work`` (the others: 1)
EXPENSIVE_OPS = TRANSCENDENTAL | {"sqrt", "divide", "floor_divide", "remainder", "fmod",
                                  "philox_random64", "philox_random32"}
EXPENSIVE_WEIGHT = 4
#: the dtypes whose sqrt is the VM's own loop (_cpu_vm.h's lz_get_sqrt: exact, and twice
#: NumPy's speed where NumPy's loop is compiled for SSE only)
OWN_SQRT = frozenset({np.dtype(np.float32), np.dtype(np.float64)})
#: instructions per input from which the VM prefetches the next block (_arithmetic_heavy)
PREFETCH_STEPS = 3


#: the most threads a call may ask for (a C int; the pool itself stops at 257)
MAX_THREADS = (1 << 31) - 1


def _omp_threads() -> int | None:
    """``OMP_NUM_THREADS``'s first level as a count, or None where it is unset or not a
    positive integer (the variable is OpenMP's, not ours: a value OpenMP would reject is
    left to OpenMP). Dask's nanny sets it to 1 in every worker process, so that the worker's
    threads are its parallelism; numexpr and the BLAS libraries honour it too. Read as it was
    at ``import lazyarr`` (``_config.THREAD_ENVIRONMENT`` says why)."""
    first = (THREAD_ENVIRONMENT["OMP_NUM_THREADS"] or "").split(",")[0].strip()
    return int(first) if first.isdigit() and 1 <= int(first) <= MAX_THREADS else None


def _default_threads() -> int:
    env = THREAD_ENVIRONMENT["LAZYARR_NUM_THREADS"]    # (read at ``import lazyarr``)
    if env:
        try:
            n = int(env)
        except ValueError as exc:
            raise ValueError(f"LAZYARR_NUM_THREADS={env!r} is not an integer") from exc
        if not 1 <= n <= MAX_THREADS:
            raise ValueError(f"LAZYARR_NUM_THREADS={env!r} must be between 1 and {MAX_THREADS}")
        return n
    omp = _omp_threads()
    if omp is not None:
        return omp
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


_num_threads = _default_threads()
_cpu_vm.set_pool_threads(_num_threads)


def set_num_threads(n: int) -> int:
    """Set the number of threads the fused CPU backend uses; returns the previous value."""
    global _num_threads
    if not 1 <= int(n) <= MAX_THREADS:
        raise ValueError(f"the number of threads must be between 1 and {MAX_THREADS}, got {n}")
    old, _num_threads = _num_threads, int(n)
    _cpu_vm.set_pool_threads(_num_threads)     # (bound runners read it at each call)
    return old


def get_num_threads() -> int:
    return _num_threads


# ----------------------------------------------------------------------------- result pool
# A result of 4 MiB or more is allocated through the result pool (_cpu_pool.h): when it dies
# its memory is kept for the next result of the same size instead of going back to the
# system, whose fresh pages the next result would pay to touch again (a new 2^24 float32
# result cost 17 ms where writing memory already touched took 7.7: docs/cpu-backend.rst,
# "The result pool"). Its limit: lazyarr/_memory.py, set at import.
release_result_pool = _memory.release_result_pool
result_pool_info = _memory.result_pool_info
set_result_pool_bytes = _memory.set_result_pool_bytes

#: results of at least this many bytes use the pool
RESULT_POOL_MIN_BYTES = _memory.MIN_BYTES


class Unsupported(Exception):
    """The VM cannot run this program; the reference backend will."""


@dataclass
class Compiled:
    vm: Any                      # _cpu_vm.VMProgram
    listing: list[str]           # the VM program, for explain
    reduction: str | None        # root reduction op name, or None (elementwise root)
    red_arg: Any
    compute: np.dtype | None     # the reduction's loop dtype (NumPy's)
    canon: np.dtype | None       # the dtype the reduction kernel reads
    result: np.dtype
    input_dtypes: list[np.dtype]
    serial: bool = False         # a loop may raise (integer power): run on the calling thread
    # per VM instruction, then the reduction's own arithmetic: the name NumPy's floating-point
    # messages give it ("log", "cast", "reduce") and the exceptions reported (NPY_FPE_* bits)
    fpe: tuple[tuple[str, int], ...] = ()
    # the work of one element, for the thread decision of an elementwise run: the widest
    # value's bytes x (inputs read + instructions, an EXPENSIVE_OPS one weighing EXPENSIVE_WEIGHT)
    work: int = 1
    # its runs of instructions as compiled loops, once the program's calls pay (cpu_loops.py)
    loop: cpu_loops.LoopPlan | None = None


def _canonical(dt: np.dtype) -> np.dtype:
    if dt.kind == "c":
        return dt
    if dt.kind == "f":
        return dt if dt.itemsize >= 4 else np.dtype(np.float32)
    if dt.kind == "i":
        return np.dtype(np.int64)
    if dt.kind == "u":
        return np.dtype(np.uint64)
    return np.dtype(np.bool_)


def _compute_dtype(op: str, operand: np.dtype, result: np.dtype, dtype_arg: Any) -> np.dtype:
    """The dtype NumPy reduces in (what each element is cast to before accumulating)."""
    if op in ("sum", "prod"):
        if result.kind == "b":
            raise Unsupported("sum/prod with dtype=bool (logical or/and)")
        return result
    if op in ("mean", "var", "std"):
        c = reduction_rules.loop_dtype(op, operand, result, dtype_arg)
        if op != "mean" and c.kind not in "fc":
            raise Unsupported(f"var/std with a {c} loop dtype")
        if c.kind == "b":
            raise Unsupported("mean with dtype=bool")
        return c
    if op in ("any", "all"):
        return np.dtype(np.bool_)
    return operand  # min, max, argmin, argmax


def _resolve_loop(ufunc: np.ufunc, dtypes: tuple[np.dtype, ...]) -> Any:
    """NumPy's strided inner loop for exactly these dtypes (a filled call-info capsule).

    The API is private and versioned (the capsule's name carries its layout version):
    anything unexpected makes the program Unsupported, i.e. run by the reference backend.
    """
    try:
        resolved, capsule = ufunc._resolve_dtypes_and_context(dtypes, casting="no")  # type: ignore[attr-defined]
        if tuple(resolved) != dtypes:
            raise Unsupported(f"{ufunc.__name__}{dtypes}: NumPy resolves {resolved}")
        ufunc._get_strided_loop(capsule)  # type: ignore[attr-defined]
        requires_pyapi, _ = _cpu_vm.loop_flags(capsule)
    except Unsupported:
        raise
    except Exception as exc:  # noqa: BLE001 - a changed private API: fall back, never crash
        raise Unsupported(f"ufunc._get_strided_loop failed for {ufunc.__name__}{dtypes}: {exc}") from exc
    if requires_pyapi:
        raise Unsupported(f"{ufunc.__name__}{dtypes} needs the GIL")
    return capsule


def _block_size(n_buffers: int, esz: int = 8, arithmetic: bool = False) -> int:
    """Elements per block: registers of B*esz bytes each should fit in about 512 KiB; a
    program with much arithmetic per input (``_arithmetic_heavy``) takes half as many, so that its
    registers stay nearer the core (memory-bound programs lose to the extra blocks' overhead:
    docs/notes/cpu.rst, "Prefetching the next block")."""
    b = 2048 if arithmetic else 4096
    while b > 512 and n_buffers * b * esz > 512 * 1024:
        b //= 2
    return b


# ----------------------------------------------------------------------------- compiling
# compile_program is a recipe of small passes (numexpr's necompiler.py is the model):
# check the dtypes, find the sink, one VM instruction spec per body instruction, fold and
# cast for the reduction sink, allocate registers, then build the C program.

class _Spec(NamedTuple):
    """One VM instruction before register allocation (see VMProgram in _cpu_vm.pyx)."""
    kind: str                # "ufunc", "ufunc2" (a two-output loop), "cast", "imag", "sqrt",
                             # "sqrt_abs" or "where"
    out: int                 # the value it computes
    args: tuple[int, ...]    # the values it reads
    dtype: np.dtype          # of ``out``
    extra: Any               # ufunc: the loop capsule; ufunc2: (capsule, output kept, the other's
                             # dtype); cast: (dst, src) type codes; imag: src code
    text: str                # what the listing shows
    fpe: str | None = None   # its name in NumPy's floating-point messages ("log", "cast")


@dataclass
class _Sink:
    """Where the program's value goes: the output array, or a reduction kernel."""
    reduction: str | None            # root reduction op name, or None (elementwise root)
    result_val: int                  # the value the sink consumes
    compute: np.dtype | None = None  # the reduction's loop dtype (NumPy's)
    canon: np.dtype | None = None    # the dtype the reduction kernel reads
    fold: str = "none"               # elementwise op folded into the reduction kernel


def compile_program(program: Program) -> Compiled:
    """The VM program for ``program``; raises Unsupported for what the VM cannot run."""
    instrs = program.instrs
    _check_dtypes(instrs)
    reduction = _root_reduction(instrs)
    body = instrs[:-1] if reduction else instrs
    dtypes = [ins.dtype for ins in body]   # one per value; the reduction sink appends its casts
    specs = _body_specs(body, dtypes, instrs[-1].args[0] if reduction else len(body) - 1)
    sink = _reduction_sink(instrs, specs, dtypes) if reduction else _Sink(None, len(body) - 1)
    regs, nregs = _allocate_registers(specs, sink)
    vm = _build_vm(body, specs, regs, nregs, dtypes, sink)
    root = instrs[-1]
    loop = cpu_loops.plan(specs, regs, sink.result_val, dtypes,
                          {n for n, ins in enumerate(body) if ins.op == "scalar"})
    if loop is not None:
        vm.set_runs([(r.first, r.end) for r in loop.runs])
    listing = _listing(body, specs, regs, sink, loop,
                       cpu_loops.why_not(specs, sink.result_val, dtypes) if loop is None else "")
    return Compiled(vm, listing, reduction, root.arg if reduction else None,
                    sink.compute, sink.canon, root.dtype, _input_dtypes(instrs), _must_run_serially(body),
                    _fpe_names(specs, sink), _work(body), loop)


def _work(body: tuple[Instr, ...]) -> int:
    """``Compiled.work``: what one element of the program costs, in rough units."""
    units = sum(1 if ins.op in ("input", "counter") else EXPENSIVE_WEIGHT if ins.op in EXPENSIVE_OPS
                else 0 if ins.op == "scalar" else 1 for ins in body)
    return max(ins.dtype.itemsize for ins in body) * max(units, 1)


def _fpe_names(specs: list[_Spec], sink: _Sink) -> tuple[tuple[str, int], ...]:
    """What NumPy's floating-point messages call each VM instruction and the reduction kernel,
    and which exceptions are reported. The comparisons of min/max/argmin/argmax (and the
    tests of any/all) raise "invalid" on a NaN where NumPy's loops stay quiet: their kernel
    reports only a folded op's overflow (``max(x * x)``, as ``square``)."""
    names = [(s.fpe or s.kind, 15) for s in specs]
    if sink.reduction in ("sum", "prod", "mean", "var", "std"):
        names.append(("reduce", 15))
    else:
        names.append(("square" if sink.fold == "square" else "absolute", 7))
    return tuple(names)


def _check_dtypes(instrs: tuple[Instr, ...]) -> None:
    """Every value must have a type code of the VM."""
    for ins in instrs:
        if ins.dtype not in TYPE_CODE:
            raise Unsupported(f"dtype {ins.dtype}")


def _root_reduction(instrs: tuple[Instr, ...]) -> str | None:
    """The reduction op at the root, or None when the root is elementwise."""
    root = instrs[-1]
    opdef = OPS.get(root.op)
    if opdef is not None and opdef.kind == "reduction":
        if root.op not in _VM_REDUCTION:
            raise Unsupported(f"reduction {root.op}")
        return root.op
    if root.op in ("input", "scalar", "counter"):
        raise Unsupported("nothing to compute")
    return None


def _body_specs(body: tuple[Instr, ...], dtypes: list[np.dtype], result: int) -> list[_Spec]:
    """One VM instruction per computing instruction (inputs and scalars are only values),
    except an ``abs`` that only a float ``sqrt`` reads: the two are one pass of the VM's own
    loop (:func:`_sqrt_of_abs`). ``result``: the value the sink consumes."""
    fused = _sqrt_of_abs(body, dtypes, result)
    compared = _abs_compared(body, dtypes, result)
    gone = set(fused.values()) | {a for a, _, _ in compared.values()}
    return [_sqrt_abs_spec(n, body[fused[n]].args[0], ins.dtype) if n in fused
            else _abs_compare_spec(n, body, *compared[n]) if n in compared
            else _spec(n, ins, dtypes)
            for n, ins in enumerate(body)
            if ins.op not in ("input", "scalar", "counter") and n not in gone]


_C16, _F8, _BOOL = np.dtype(np.complex128), np.dtype(np.float64), np.dtype(bool)
#: the comparisons of ``abs(z)`` with a bound (VK_CABS_CMP's codes), and each one's mirror
#: (``c > abs(z)`` is ``abs(z) < c``)
_ABS_COMPARE = {"less": 0, "less_equal": 1, "greater": 2, "greater_equal": 3}
_MIRROR = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
           "greater_equal": "less_equal"}


def _readers(body: tuple[Instr, ...], result: int) -> dict[int, int]:
    """How many instructions (and the sink) read each value."""
    readers: dict[int, int] = {result: 1}
    for ins in body:
        if ins.op not in ("input", "scalar", "counter"):
            for a in ins.args:
                readers[a] = readers.get(a, 0) + 1
    return readers


def _abs_compared(body: tuple[Instr, ...], dtypes: list[np.dtype],
                  result: int) -> dict[int, tuple[int, int, int]]:
    """``{comparison value: (abs value, bound value, code)}`` for each ``abs(z) < c`` (``<=``,
    ``>``, ``>=``, either side) of a complex128 ``z`` and a float64 ``c`` whose ``abs`` nothing
    else reads: one instruction (lz_cabs_cmp) that decides from ``re*re + im*im`` where that is
    sure and takes NumPy's ``absolute`` loop elsewhere: the same answers and flags, without
    NumPy's hypot on every element (mandelbrot1's ``less(abs(Z), horizon)``: docs/notes/cpu.rst,
    2026-12-08)."""
    readers = _readers(body, result)
    found = {}
    for n, ins in enumerate(body):
        if ins.op not in _ABS_COMPARE or ins.dtype != _BOOL or len(ins.args) != 2:
            continue
        for side, op in ((0, ins.op), (1, _MIRROR[ins.op])):
            a, b = ins.args[side], ins.args[1 - side]
            src = body[a]
            if src.op == "abs" and readers.get(a) == 1 and dtypes[a] == _F8 \
                    and dtypes[src.args[0]] == _C16 and dtypes[b] == _F8 and a != b:
                found[n] = (a, b, _ABS_COMPARE[op])
                break
    return found


def _abs_compare_spec(n: int, body: tuple[Instr, ...], a: int, b: int, code: int) -> _Spec:
    """``abs(z) <op> c`` as one instruction (:func:`_abs_compared`)."""
    op = [k for k, v in _ABS_COMPARE.items() if v == code][0]
    return _Spec("cabs_cmp", n, (body[a].args[0], b), _BOOL,
                 (_resolve_loop(np.absolute, (_C16, _F8)), code),
                 f"lazyarr {op}(absolute(complex128), float64) [numpy.absolute loop "
                 f"complex128->float64 where unsure]", "absolute")


def _sqrt_of_abs(body: tuple[Instr, ...], dtypes: list[np.dtype], result: int) -> dict[int, int]:
    """``{sqrt value: abs value}`` for each float32/float64 ``sqrt(abs(v))`` whose ``abs`` is
    read by that ``sqrt`` alone: run as one pass, ``sqrt(fabs(v))`` per element
    (``lz_sqrt_abs_*``), which skips a pass over the block (NumPy's ``absolute`` loop was ~4 %
    of the chain's time, docs/notes/cpu.rst). The same bits and flags: NumPy's ``absolute``
    clears the sign bit and raises nothing (NaNs and signalling NaNs included), as ``fabs``
    does, and the sqrt is the same instruction."""
    readers = _readers(body, result)
    fused = {}
    for n, ins in enumerate(body):
        if ins.op == "sqrt" and ins.dtype in OWN_SQRT:
            a = ins.args[0]
            src = body[a]
            if src.op == "abs" and readers.get(a) == 1 and src.dtype == ins.dtype \
                    and dtypes[src.args[0]] == ins.dtype:
                fused[n] = a
    return fused


def _sqrt_abs_spec(n: int, operand: int, dtype: np.dtype) -> _Spec:
    """``sqrt(abs(operand))`` as one instruction (:func:`_sqrt_of_abs`)."""
    return _Spec("sqrt_abs", n, (operand,), dtype, TYPE_CODE[dtype],
                 f"lazyarr sqrt(abs) loop {dtype}", "sqrt")


def _cast_spec(out: int, src: int, dtypes: list[np.dtype], dst: np.dtype, text: str) -> _Spec:
    return _Spec("cast", out, (src,), dst, (TYPE_CODE[dst], TYPE_CODE[dtypes[src]]), text, "cast")


def _spec(n: int, ins: Instr, dtypes: list[np.dtype]) -> _Spec:
    """The VM instruction that computes value ``n``: a C cast or select, or NumPy's loop."""
    if ins.op == "astype":
        return _cast_spec(n, ins.args[0], dtypes, ins.dtype, f"astype {dtypes[ins.args[0]]}->{ins.dtype}")
    if ins.op == "real":                   # the real part is the cast to the part's dtype
        return _cast_spec(n, ins.args[0], dtypes, ins.dtype, f"real part of {dtypes[ins.args[0]]}")
    if ins.op == "where":
        return _Spec("where", n, ins.args, ins.dtype, None, "select")
    if ins.op == "imag":
        src = dtypes[ins.args[0]]
        return _Spec("imag", n, ins.args, ins.dtype, TYPE_CODE[src], f"imaginary part of {src}")
    if ins.op == "sqrt" and ins.dtype in OWN_SQRT and dtypes[ins.args[0]] == ins.dtype:
        return _Spec("sqrt", n, ins.args, ins.dtype, TYPE_CODE[ins.dtype],
                     f"lazyarr sqrt loop {ins.dtype}", "sqrt")
    opdef = OPS.get(ins.op)
    fn = opdef.numpy if opdef is not None else None
    if opdef is not None and opdef.kind == "output":
        return _two_output_spec(n, ins, opdef, dtypes)
    if not isinstance(fn, np.ufunc) or fn.nout != 1:
        raise Unsupported(f"op {ins.op}")
    loop_dtypes = tuple(dtypes[a] for a in ins.args) + (ins.dtype,)
    sig = ",".join(d.name for d in loop_dtypes[:-1]) + "->" + ins.dtype.name
    return _Spec("ufunc", n, ins.args, ins.dtype, _resolve_loop(fn, loop_dtypes),
                 f"numpy.{fn.__name__} loop {sig}", fn.__name__)


def _two_output_spec(n: int, ins: Instr, opdef: Any, dtypes: list[np.dtype]) -> _Spec:
    """One output of NumPy's two-output loop (frexp, modf): the loop writes both, the other
    output into the spare register (``_build_vm``), which nothing reads."""
    fn = opdef.numpy
    ins_dtypes = tuple(dtypes[a] for a in ins.args)
    outs = list(fn.resolve_dtypes(ins_dtypes + (None,) * fn.nout)[fn.nin:])
    if outs[opdef.output] != ins.dtype:
        raise Unsupported(f"{ins.op}: NumPy's {fn.__name__} loop gives {outs}")
    capsule = _resolve_loop(fn, ins_dtypes + tuple(outs))
    sig = ",".join(d.name for d in ins_dtypes) + "->" + ",".join(d.name for d in outs)
    return _Spec("ufunc2", n, ins.args, ins.dtype, (capsule, opdef.output, outs[1 - opdef.output]),
                 f"numpy.{fn.__name__} loop {sig}, output {opdef.output}", fn.__name__)


def _reduction_sink(instrs: tuple[Instr, ...], specs: list[_Spec], dtypes: list[np.dtype]) -> _Sink:
    """The reduction's dtypes; a last abs/square folded into its kernel (``specs`` loses it);
    the casts to its loop dtype and to the dtype its kernel reads (``specs`` and ``dtypes``
    gain them, as new values)."""
    root = instrs[-1]
    operand = root.args[0]
    compute = _compute_dtype(root.op, dtypes[operand], root.dtype, root.arg[2])
    if dtypes[operand].kind == "c" and compute.kind not in "cb":
        # (a complex sum with a real dtype=: NumPy's cast drops the imaginary parts, warning)
        raise Unsupported(f"{root.op} of complex values in {compute}")
    sink = _Sink(root.op, operand, compute, _canonical(compute))
    _fold_into_reduction(sink, instrs, specs)
    for target in (sink.compute, sink.canon):
        src = sink.result_val
        if target != dtypes[src]:
            specs.append(_cast_spec(len(dtypes), src, dtypes, target, f"astype {dtypes[src]}->{target}"))
            sink.result_val = len(dtypes)
            dtypes.append(target)
    return sink


def _fold_into_reduction(sink: _Sink, instrs: tuple[Instr, ...], specs: list[_Spec]) -> None:
    """sum/mean/min/max of a last abs(x) or x*x of float x: the reduction kernel applies it to
    x itself (one pass less over each block; exact, see LZ_FOLDS in _cpu_vm.h). Not for a
    complex x, whose abs is its modulus (float too, but the kernel's fabs would read the
    real part alone)."""
    operand = instrs[sink.result_val]
    square = operand.op == "square" or operand.op == "multiply" and operand.args[0] == operand.args[1]
    used_elsewhere = any(sink.result_val in ins.args for ins in instrs[:-1])
    if sink.reduction in ("sum", "mean", "min", "max") and (operand.op == "abs" or square) \
            and operand.dtype.kind == "f" and operand.dtype.itemsize >= 4 \
            and instrs[operand.args[0]].dtype == operand.dtype \
            and sink.compute == sink.canon == operand.dtype \
            and not used_elsewhere and specs and specs[-1].out == sink.result_val:
        specs.pop()
        sink.fold = "square" if square else "abs"
        sink.result_val = operand.args[0]


def _allocate_registers(specs: list[_Spec], sink: _Sink) -> tuple[list[int], int]:
    """A block register per spec (-1: the elementwise root writes the output array), by a
    linear scan that frees a register after its value's last use. A result never shares a
    register with its own operands (casts change the element size in place otherwise)."""
    last_use: dict[int, int] = {}
    for j, spec in enumerate(specs):
        for a in spec.args:
            last_use[a] = j
    last_use[sink.result_val] = len(specs)
    free: list[int] = []
    reg_of: dict[int, int] = {}
    regs: list[int] = []
    nregs = 0
    for j, spec in enumerate(specs):
        if sink.reduction is None and j == len(specs) - 1:
            reg = -1
        else:
            if free:
                reg = free.pop()
            else:
                reg, nregs = nregs, nregs + 1
            reg_of[spec.out] = reg
        for a in set(spec.args):
            if last_use.get(a) == j and a in reg_of:
                free.append(reg_of.pop(a))
        regs.append(reg)
    return regs, nregs


def _input_values(body: tuple[Instr, ...]) -> list[tuple[int, int]]:
    """(value, itemsize) per input position; (-1, 1) for an input the program does not read;
    itemsize 0 for a random draw's counters (no memory: the VM computes them, lz_counters)."""
    inputs = {ins.arg[0]: (n, ins.dtype.itemsize if ins.op == "input" else 0)   # 0: counters
              for n, ins in enumerate(body) if ins.op in ("input", "counter")}
    return [inputs.get(p, (-1, 1)) for p in range(max(inputs, default=-1) + 1)]


def _build_vm(body: tuple[Instr, ...], specs: list[_Spec], regs: list[int], nregs: int,
              dtypes: list[np.dtype], sink: _Sink) -> Any:
    """The C program (_cpu_vm.VMProgram), its numbers named through _cpu_vm's tables."""
    inputs = _input_values(body)
    esz = 16 if any(dt.itemsize > 8 for dt in dtypes) else 8   # complex128 values: 16 bytes
    if any(s.kind == "ufunc2" for s in specs):     # the spare register of two-output loops
        spare, nregs = nregs, nregs + 1
    arithmetic = _arithmetic_heavy(body)
    block = _block_size(nregs + sum(val >= 0 for val, _ in inputs), esz, arithmetic)
    red_kind = _VM_REDUCTION[sink.reduction] if sink.reduction else "none"
    red_type = _cpu_vm.REDUCTION_TYPES[sink.canon.name] if sink.canon is not None else 0
    return _cpu_vm.VMProgram(
        [(s.kind, s.out, s.args, reg, s.dtype.itemsize,
          (s.extra[0], s.extra[1], spare, s.extra[2].itemsize) if s.kind == "ufunc2" else s.extra)
         for s, reg in zip(specs, regs)],
        inputs, _scalar_values(body), len(dtypes), nregs, sink.result_val,
        _cpu_vm.REDUCTION_KINDS[red_kind], red_type, block, _cpu_vm.FOLDS[sink.fold], esz,
        arithmetic)


def _arithmetic_heavy(body: tuple[Instr, ...]) -> bool:
    """Whether the program has PREFETCH_STEPS instructions per input or more: the VM then
    prefetches each input's next block while it computes one (spread over the instructions;
    fewer, larger bursts stall the loads of the block at hand), on smaller blocks
    (:func:`_block_size`)."""
    inputs = sum(ins.op == "input" for ins in body)
    steps = sum(ins.op not in ("input", "counter", "scalar") for ins in body)
    return inputs > 0 and steps >= PREFETCH_STEPS * inputs


def _scalar_values(body: tuple[Instr, ...]) -> list[int]:
    """The value of each scalar operand, by position (Lowered.scalars' order)."""
    scalars = {ins.arg: n for n, ins in enumerate(body) if ins.op == "scalar"}
    return [scalars[p] for p in range(len(scalars))]


def _input_dtypes(instrs: tuple[Instr, ...]) -> list[np.dtype]:
    """The dtype of each input, by position (what run_compiled converts the buffers to)."""
    return [ins.dtype for ins in sorted((i for i in instrs if i.op in ("input", "counter")),
                                        key=lambda i: i.arg[0])]


def _must_run_serially(body: tuple[Instr, ...]) -> bool:
    """NumPy's integer power loop raises ValueError for negative exponents (through the GIL):
    only the calling thread can carry that exception back."""
    return any(ins.op == "power" and ins.dtype.kind in "iu" for ins in body)


def _listing(body: tuple[Instr, ...], specs: list[_Spec], regs: list[int], sink: _Sink,
             loop: cpu_loops.LoopPlan | None = None, no_loop: str = "") -> list[str]:
    """The VM program as explain shows it, one line per instruction, then its runs of
    compiled loops (``loop``; else ``no_loop`` says why none) and the reduction's fold."""
    listing = []
    for spec, reg in zip(specs, regs):
        op = body[spec.out].op if spec.out < len(body) else "astype"   # else: a sink's cast
        listing.append(f"%{spec.out} = {op}({', '.join(f'%{a}' for a in spec.args)}) -> "
                       f"{'out' if reg < 0 else f'r{reg}'} : {spec.dtype} [{spec.text}]")
    if loop is not None:
        runs = ", ".join(f"%{specs[r.first].out}..%{specs[r.end - 1].out}" for r in loop.runs)
        listing.append(f"(compiled loops of the runs {runs} once the program has run "
                       f"{cpu_loops.CALLS_BEFORE_COMPILE} times and done "
                       f"2^{cpu_loops.WORK_BEFORE_COMPILE.bit_length() - 1} element-instructions: "
                       "la.config(cpu_loops=...))")
    elif len(specs) > 1:
        listing.append(f"(no compiled loop: {no_loop})")
    if sink.fold != "none":
        listing.append(f"(folded into the reduction kernel: {sink.fold}(%{sink.result_val}) : "
                       f"{sink.canon}, exact)")
    return listing


# ----------------------------------------------------------------------------- the cache
#: program key -> its compiled form, or the reason it cannot be compiled (then the reference
#: backend runs it); each key compiled once per process
_compiled: BuildOnce[Compiled | Unsupported] = BuildOnce(max_size=1024)


def get_compiled(program: Program) -> Compiled | Unsupported:
    """The compiled program for ``program``; compiled once, even when threads miss together."""
    return _compiled.get(program, lambda: _compile_or_reason(program))


def _compile_or_reason(program: Program) -> Compiled | Unsupported:
    try:
        return compile_program(program)
    except Unsupported as exc:
        return exc


# ----------------------------------------------------------------------------- running
def _prepare(buf: Any, dtype: np.dtype) -> np.ndarray:
    if type(buf) is CounterMap:     # a random draw's counters: computed by the VM
        return buf  # type: ignore[return-value]
    a = buf if type(buf) is np.ndarray else np.asarray(buf)
    if a.dtype != dtype or not a.flags.aligned:
        a = np.ascontiguousarray(a, dtype=dtype)
    return a


#: Reductions over rows (the reduced dims the fast ones). Rows of up to ROWS_MAX_BYTES (of the
#: reduction's dtype) and half a ROWS_BLOCK run whole rows per block of ROWS_BLOCK elements
#: (MODE_RED_ROWS: a row costs its reduction kernel alone), longer ones a block at a time
#: (mode A); rows shorter than ROWS_MIN go column by column (mode B), float sums and means
#: from ROWS_MIN_SUM. Measured over 2^23 elements in rows of 2 to 1,024 (docs/notes/cpu.rst,
#: "Short rows").
ROWS_MAX_BYTES, ROWS_BLOCK, ROWS_MIN, ROWS_MIN_SUM = 2048, 1024, 8, 2


@functools.lru_cache(maxsize=4096)
def _layout(shape: tuple[int, ...], axes: tuple[int, ...] | None,
            fast: int = -1, rows_min: int = ROWS_MIN) -> tuple[int, tuple[int, ...], int]:
    """(mode, dim order, number of outer dims) for an iteration space and reduced axes.

    Mode A (slot-major: each output slot reduces contiguous runs, pairwise) when the
    reduced dims are the fast (last) ones, mode B (accumulate rows into the slots) when
    the kept dims are; the smaller side flips the choice when it is tiny (rows of fewer
    than ``rows_min`` elements go column by column, mode B). ``fast`` is the dim with the
    smallest stride in memory (the last one for C order). The choice depends on shapes and
    layout only, never on the thread count.
    """
    nd = len(shape)
    if axes is None:
        return _MODE_RED_A, tuple(range(nd)), 0
    red = set(axes)
    kept = tuple(d for d in range(nd) if d not in red)
    msz = math.prod(shape[d] for d in kept)
    rsz = math.prod(shape[d] for d in axes)
    last = fast if fast >= 0 else next((d for d in reversed(range(nd)) if shape[d] != 1), nd - 1)
    if last in red:
        mode = _MODE_RED_B if rsz < rows_min and msz >= 1024 else _MODE_RED_A
    else:
        mode = _MODE_RED_A if msz < 128 and rsz >= 1024 else _MODE_RED_B
    if mode == _MODE_RED_A:
        return mode, kept + tuple(axes), len(kept)
    return mode, tuple(axes) + kept, len(axes)


#: a program whose compiled loop is set (cpu_loops.py) runs the instructions the loop takes in
#: about a quarter of the VM's time, so they count this many times less toward PARALLEL_WORK
#: (which stands for ~100 µs of one thread's VM instructions): channel_flow's 8-op pressure
#: statement over 199² float64 took 69 µs a statement on one thread, 104 on two (docs/notes/cpu.rst,
#: 2026-12-07i)
LOOP_WORK_DIVISOR = 4


def _elementwise_parallel(c: Compiled, size: int) -> bool:
    """Whether an elementwise run of ``size`` elements takes the pool: from ``PARALLEL_WORK``
    (one add of float64 from ~200k elements, a 7-op chain with a tanh from ~30k), the share of
    the instructions a compiled loop runs weighing 1 / LOOP_WORK_DIVISOR once it is set."""
    work = size * c.work
    loop = c.loop
    if loop is not None and loop.state == "set":
        n = max(len(c.fpe) - 1, loop.ninstr, 1)
        work -= work * loop.ninstr * (LOOP_WORK_DIVISOR - 1) // (n * LOOP_WORK_DIVISOR)
    return not c.serial and work >= PARALLEL_WORK


def _elementwise_threads(c: Compiled, size: int) -> int:
    """Threads for an elementwise run of ``size`` elements (:func:`_elementwise_parallel`)."""
    return _num_threads if _elementwise_parallel(c, size) else 1


#: an elementwise run goes row by row when an input is not one run over the space and the rows
#: hold at least this many bytes (of the widest input); with two or more such inputs (a
#: stencil's views), at least ROW_RUN_MANY_BYTES (:func:`_rows_outer`)
ROW_RUN_MIN_BYTES = 2048
ROW_RUN_MANY_BYTES = 1024


def _rows_outer(shape: tuple[int, ...], inputs: list[np.ndarray]) -> int:
    """The outer dims of an elementwise run: 0 (blocks run over the whole space in C order), or
    all dims but the last when the rows are long and an input is not one run over the space
    (a view such as ``u[:-2, 1:-1]``, a broadcast row): blocks then stay within a row, where
    every input is read in place with its own strides instead of gathered block by block
    (a 4096² float32 stencil: 20 ms a kernel instead of 28, docs/notes/cpu.rst). A row costs
    the program's instructions once each: short rows are cheaper gathered into whole blocks,
    and the more inputs must be gathered, the shorter the rows that pay (docs/notes/cpu.rst,
    2026-12-04c: 5-point stencils of 150-400 columns)."""
    if len(shape) < 2:
        return 0
    gathered, itemsize = 0, 4
    for a in inputs:
        if type(a) is not CounterMap:
            itemsize = max(itemsize, a.itemsize)
            if not (a.shape == shape and a.flags.c_contiguous):
                gathered += 1
    if not gathered:            # (the common case, without a call)
        return 0
    return len(shape) - 1 if _long_rows(shape[-1], itemsize, gathered) else 0


def _long_rows(run: int, itemsize: int, gathered: int) -> bool:
    """Whether runs of ``run`` elements are long enough to go block by block within them
    (:func:`_rows_outer`, :func:`_block_cut`): some input would be gathered otherwise, and the
    runs hold ROW_RUN_MIN_BYTES of the widest input, ROW_RUN_MANY_BYTES with two such inputs."""
    if not gathered:
        return False
    return run * itemsize >= (ROW_RUN_MANY_BYTES if gathered > 1 else ROW_RUN_MIN_BYTES)


#: a write-back's chunk of results: about this many bytes per thread (they stay in its L2),
#: and the most it may take to hold 4x the rows a chunk must keep for its neighbours
CHUNK_BYTES = 1 << 19
MAX_CHUNK_BYTES = 1 << 22
#: ... and at least this many chunks per thread when the run takes the pool (the threads claim
#: them as they come: a few per thread even out a late or loaded helper)
WRITE_BACK_ITEMS = 4


def _write_back_plan(inputs: list[np.ndarray], out: np.ndarray, shared: list[bool],
                     threads: int = 1) -> tuple[int, int, int] | None:
    """``(chunk rows, back, fwd)`` for writing an elementwise value straight into ``out``, a
    view that the inputs may also read (``u[1:-1, 1:-1] = f(u[:-2, 1:-1], ...)``), with every
    read seeing the old values; None where no such bound is proved (then the value is computed
    into a temporary and copied, as NumPy does).

    The kernel computes chunks of rows of dim 0 whole before it writes them (lz_do_chunk in
    _cpu_vm.h), so it needs to know which rows read what a row writes. Row ``i`` of ``out``
    writes the bytes ``[lo, hi] + i·s`` (``s``: the row stride); an input read through the same
    row stride reads ``[lo_k, hi_k] + j·s`` in row ``j``. The two meet for ``j = i + d`` with
    ``d·s`` in ``[lo - hi_k, hi - lo_k]``: the write of row ``i`` may be read by the rows
    ``back`` before it to ``fwd`` after it, and by no other. An input that is ``out`` itself
    reads each element only where it is written (no bound needed); one read with another row
    stride (a transpose, a broadcast row of ``out``) gets no bound. ``shared``: whether each
    input may share memory with ``out``.

    A chunk is one work item of the thread pool: with ``threads`` > 1 a target of fewer rows
    than ``threads * WRITE_BACK_ITEMS`` chunks of CHUNK_BYTES is cut into that many chunks
    (at least 4x the edge rows each), so that a mid-sized write (a 201² grid) runs on every
    thread instead of one."""
    if out.ndim == 0:
        return None
    rows = out.shape[0]
    row_bytes = out.size // rows * out.itemsize if rows else 0
    fits = rows <= CHUNK_BYTES // max(row_bytes, 1)
    back = fwd = 0
    if rows > 1 and any(shared):
        lo, hi = _row_extent(out)
        s0 = out.strides[0]
        for a, sh in zip(inputs, shared):
            if not sh or _same_view(a, out):
                continue
            b = _in_rows_of(a, out)
            if b is None:
                # no bound: one chunk computes the whole value before anything is written,
                # whatever the inputs read (a transpose of the target), if it fits
                return (rows, 0, 0) if fits else None
            lo_k, hi_k = _row_extent(b)
            first, last, s = lo - hi_k, hi - lo_k, s0      # d·s in [first, last]
            if s < 0:
                first, last, s = -last, -first, -s
            back, fwd = max(back, -first // s), max(fwd, last // s)
    chunk = max(1, CHUNK_BYTES // max(row_bytes, 1), 4 * (back + fwd))
    if threads > 1:
        chunk = min(chunk, max(1, 4 * (back + fwd), -(-rows // (threads * WRITE_BACK_ITEMS))))
    if chunk >= rows:                   # one chunk: every read comes before every write
        return max(rows, 1), 0, 0
    if chunk * row_bytes > MAX_CHUNK_BYTES:
        return None
    return chunk, back, fwd


def _in_rows_of(a: np.ndarray, out: np.ndarray) -> np.ndarray | None:
    """``a`` broadcast to ``out``'s shape where it steps through memory by ``out``'s row
    stride along dim 0 (so a row bound exists: :func:`_write_back_plan`), else None (a
    broadcast along dim 0, a transpose, another row stride)."""
    b = a if a.shape == out.shape else np.broadcast_to(a, out.shape)
    s0 = out.strides[0]
    return b if s0 != 0 and b.strides[0] == s0 else None


#: an input that reads the memory a write goes to, with no row bound, is copied first when its
#: own elements number at most the target's / SNAPSHOT_FRACTION (:func:`_snapshot_small_reads`)
SNAPSHOT_FRACTION = 8


def _snapshot_small_reads(inputs: list[Any], shared: list[bool],
                          out: np.ndarray) -> tuple[list[Any], list[bool]]:
    """``inputs`` with each one that shares memory with ``out``, is broadcast along dim 0
    or read through another row stride (no row bound: :func:`_write_back_plan`), and holds
    few elements of its own, replaced by a copy: NumPy copies an input that overlaps a
    ufunc's output (``NPY_ITER_COPY_IF_OVERLAP``) in the same way. Floyd-Warshall's
    ``path[:] = minimum(path, add.outer(path[:, k], path[k]))`` reads row ``k`` in every row:
    copying those 850 elements lets the value be written in place in parallel chunks,
    instead of into an 850² temporary and copied."""
    if out.ndim == 0 or out.shape[0] < 2:
        return inputs, shared
    inputs, shared = list(inputs), list(shared)
    for k, (a, sh) in enumerate(zip(inputs, shared)):
        if not sh or _same_view(a, out) or _in_rows_of(a, out) is not None:
            continue                                   # bounded: the write-back handles it
        # its own elements: one along each dim it repeats (stride 0)
        own = tuple(slice(0, 1) if st == 0 else slice(None) for st in a.strides)
        if a[own].size * SNAPSHOT_FRACTION > out.size:
            continue
        inputs[k] = np.broadcast_to(a[own].copy(), a.shape)
        shared[k] = False
    return inputs, shared


_side = threading.local()


def _side_buffer(nbytes: int) -> np.ndarray:
    """This thread's buffer for a write-back's edge rows, kept between calls (a fresh one
    each step page-faults: ~1 ms of a 4096² stencil step), grown as needed."""
    buf = getattr(_side, "buf", None)
    if buf is None or buf.nbytes < nbytes:
        buf = _side.buf = np.empty(nbytes, np.uint8)
    return buf


#: the first and last byte address row 0 of an array touches (compiled: per input per write)
_row_extent = _cpu_vm.row_extent


def _same_view(a: np.ndarray, out: np.ndarray) -> bool:
    """``a`` reads exactly the elements of ``out``, each at its own position."""
    return a.shape == out.shape and a.strides == out.strides and a.dtype == out.dtype \
        and _cpu_vm.data_address(a) == _cpu_vm.data_address(out)


class _Launch(NamedTuple):
    """Everything about running a compiled program that depends on the program and on its
    inputs' shapes and layout only: a repeat with inputs alike (``la.jit``'s replay) reuses it."""

    c: Compiled
    scalars: bytes                   # the scalar operands, packed as the VM reads them
    shape: tuple[int, ...]           # the iteration space (the inputs broadcast)
    out_shape: tuple[int, ...]
    threads: int
    reduction: tuple[Any, ...] | None  # _reduction_plan's answer (None: elementwise)
    outer: int = 0                   # elementwise: the outer dims (_rows_outer)
    order: tuple[int, ...] | None = None  # elementwise: a new result's dims in memory (_k_order)
    parallel: bool = False           # big enough for the pool: ``threads`` is the count then


def _k_order(shape: tuple[int, ...], inputs: list[Any]) -> tuple[int, ...] | None:
    """The dims of ``shape``, outermost first, in the order NumPy's ``order="K"`` lays out a
    new result of these inputs (its iterator's axis sort, npyiter_find_best_axis_ordering:
    an axis moves inside another only where every input with a stride on both says so, any
    input against it keeps C order); None for C order. ``a.T * 2`` is then Fortran-ordered as
    NumPy's (its reshape a copy, not a view), and the kernel reads the inputs in memory order
    (a transposed 4096² chain ran 6x slower read across the rows)."""
    nd = len(shape)
    if nd < 2 or not inputs:
        return None
    c_like = True                        # every input's strides shrink outward to inward
    for a in inputs:
        if type(a) is CounterMap:
            return None                  # (a draw's counters: C order by construction)
        if a.shape == shape and a.flags.c_contiguous:
            return None                  # (it says C order for every pair of dims)
        if c_like:                       # (a stencil's views: no input asks for a move)
            last = 0
            for st, n in zip(a.strides, a.shape):
                if st and n != 1:
                    st = abs(st)
                    if last and st > last:
                        c_like = False
                        break
                    last = st
    if c_like:
        return None
    strides = []
    for a in inputs:
        off = nd - a.ndim
        strides.append([0 if d < off or a.shape[d - off] == 1 else abs(a.strides[d - off])
                        for d in range(nd)])
    perm = list(range(nd - 1, -1, -1))   # fastest first, as NumPy's iterator keeps them
    for i0 in range(1, nd):
        j0, pos = perm[i0], i0
        for i1 in range(i0 - 1, -1, -1):
            j1, ambiguous, swap = perm[i1], True, False
            for st in strides:
                if st[j0] and st[j1]:
                    if st[j1] <= st[j0]:
                        swap = False
                    elif ambiguous:
                        swap = True
                    ambiguous = False
            if not ambiguous:
                if not swap:
                    break
                pos = i1
        if pos != i0:
            del perm[i0]
            perm.insert(pos, j0)
    order = tuple(reversed(perm))
    return None if order == tuple(range(nd)) else order


#: elementwise launches by program (its id: the launch holds the program, checked on a hit),
#: scalars, the inputs' layouts and the settings the rules read: a statement that a loop
#: repeats on new memory of the same layout (``p[1:-1, 1:-1] = f(pn, b)`` each step) finds
#: its launch instead of ordering and sizing it again (~5 of ~7 µs; docs/notes/cpu.rst,
#: 2026-12-07i)
_launches: dict[tuple[Any, ...], _Launch] = {}
_MAX_LAUNCHES = 1024


def _launch(c: Compiled, lowered: Lowered, inputs: list[np.ndarray]) -> _Launch:
    scalars = _cpu_vm.scalar_bytes(lowered.scalars)
    key = None
    if c.reduction is None and all(type(a) is np.ndarray for a in inputs):
        key = (id(c), scalars, lowered.shape, _num_threads, PARALLEL_WORK, LOOP_WORK_DIVISOR,
               c.loop is not None and c.loop.state == "set", ROW_RUN_MIN_BYTES,
               ROW_RUN_MANY_BYTES, *[(a.shape, a.strides) for a in inputs])
        hit = _launches.get(key)
        if hit is not None and hit.c is c:
            return hit
    shapes = tuple(a.shape for a in inputs)
    shape = shapes[0] if len(set(shapes)) == 1 else broadcast_shapes(*shapes)
    if c.reduction is None:
        size = math.prod(lowered.shape)
        order = _k_order(shape, inputs) if shape == lowered.shape else None
        if order is None:
            outer = _rows_outer(shape, inputs) if shape == lowered.shape else 0
        else:                            # (the rows of the space in memory order)
            outer = _rows_outer(tuple(shape[d] for d in order),
                                [a.reshape((1,) * (len(shape) - a.ndim) + a.shape).transpose(order)
                                 for a in inputs])
        threads = _elementwise_threads(c, size)
        launch = _Launch(c, scalars, shape, lowered.shape, threads, None, outer, order,
                         threads > 1 or _elementwise_parallel(c, size))
        if key is not None:
            if len(_launches) >= _MAX_LAUNCHES:
                _launches.clear()
            _launches[key] = launch
        return launch
    axes = c.red_arg[0]
    fast = -1
    if axes is not None and inputs:      # the memory-fastest dim of the biggest input decides
        big = max(inputs, key=lambda a: a.size)
        if big.ndim == len(shape) and type(big) is np.ndarray and not big.flags.c_contiguous:
            dims = [d for d in range(big.ndim) if big.shape[d] > 1]
            if dims:
                fast = min(dims, key=lambda d: (abs(big.strides[d]), -d))
    rows_min = ROWS_MIN_SUM if c.reduction in ("sum", "mean") and c.canon.kind == "f" else ROWS_MIN
    plan = _reduction_plan(shape, axes, c.vm.block, fast, rows_min, c.canon.itemsize)
    if axes is None and plan[0] == _MODE_RED_A and c.reduction not in ("argmin", "argmax"):
        # a full reduction reads in memory order, as NumPy's (an arg* position counts in C order)
        order = _k_order(shape, inputs)
        if order is not None:
            plan = (plan[0], order, *plan[2:])
    if plan[0] == _MODE_RED_A and len(shape) - plan[2] >= 2:   # (two inner dims at least)
        cut = _block_cut(shape, plan, inputs, c.vm.block)
        if cut:         # ceil(cut / B) blocks per run of the inner index
            nb = (plan[4] // cut) * -(-cut // c.vm.block)
            plan = (*plan[:5], nb, *plan[6:8], plan[3] * nb, cut)
    m, rsz = plan[3], plan[4]
    parallel = not c.serial and m * rsz >= SERIAL_BELOW
    return _Launch(c, scalars, shape, lowered.shape, _num_threads if parallel else 1, plan,
                   0, None, parallel)


def _block_cut(shape: tuple[int, ...], plan: tuple[Any, ...], inputs: list[Any],
               block: int) -> int:
    """Mode A's blocks end with the runs of its last inner dim (the run's length; 0: blocks of
    ``block`` over a slot's whole inner index) when an input is not one strided run over the
    inner dims (a view such as ``u[:-2, 1:-1]`` in a full sum) and the runs are long, as
    :func:`_rows_outer` decides for an elementwise run: each block then reads such an input in
    place, where a block across two runs gathers a copy of it first (a 4096² float32 Jacobi
    step's ``sum`` of a pending ``sqrt``: 21.6 -> 14.9 ms, docs/notes/cpu.rst 2026-12-06). A run
    shorter than ``block`` makes more, shorter blocks: the same rule's row lengths decide."""
    mode, order, n_outer = plan[0], plan[1], plan[2]
    inner = [d for d in order[n_outer:] if shape[d] != 1]
    if mode != _MODE_RED_A or len(inner) < 2:
        return 0
    gathered, itemsize = 0, 4
    for a in inputs:
        itemsize = max(itemsize, a.itemsize) if type(a) is not CounterMap else itemsize
        off = len(shape) - a.ndim
        step, run = None, 1
        for d in reversed(inner):
            e = d - off
            s = 0 if e < 0 or a.shape[e] == 1 else a.strides[e]
            if step is None:
                step = s
            elif s != step * run:
                gathered += 1
                break
            run *= shape[d]
    run = shape[inner[-1]]
    return run if _long_rows(run, itemsize, gathered) and run < plan[4] else 0


def _bound_threads(launch: _Launch) -> int:
    """The thread count a bound runner passes: -1 (the pool's count at each call, so that
    :func:`set_num_threads` reaches runners bound before it) for a launch big enough for the
    pool, else 1."""
    return -1 if launch.parallel else 1


def _execute(launch: _Launch, inputs: list[np.ndarray], out: np.ndarray | None = None,
             writeback: tuple[np.ndarray, int, int, int] | None = None,
             out_read: bool = True, out_ostride: int = 0) -> np.ndarray:
    """Run the launch on ``inputs``; an elementwise program writes into ``out`` if given (C
    order, or rows ``out_ostride`` bytes apart: :func:`_outer_stride`; ``out_read``: an input
    may read its memory, ``_cpu_vm.execute``), or into
    ``writeback``'s view through the chunked write-back (``(target, chunk rows, back, fwd)``:
    :func:`_write_back_plan`)."""
    c, scalars, shape = launch.c, launch.scalars, launch.shape
    if c.loop is not None and c.loop.state == "new":
        cpu_loops.note_call(c.loop, c.vm, math.prod(shape))
    if launch.reduction is None:
        order, fpe = tuple(range(len(shape))), bytearray(len(c.fpe))
        if writeback is not None:
            target, chunk, back, fwd = writeback
            if not target.size:
                return target
            side = None
            if back + fwd:
                side = _side_buffer(-(-target.shape[0] // chunk) * (back + fwd)
                                    * target.itemsize * (target.size // target.shape[0]))
            if _cpu_vm.execute(c.vm, inputs, scalars, shape, order, launch.outer, _MODE_EW,
                               launch.threads, nb=1, fpe=fpe,
                               writeback=(target, chunk, back, fwd, side)):
                _report_fp_errors(c, fpe)
            return target
        if out is None and launch.order is not None:
            # a new result in NumPy's K order: the kernel writes it C-ordered over the dims
            # in memory order, and the result is its view with the dims back in place
            out = _new_result(tuple(shape[d] for d in launch.order), c.result, launch.threads)
            if out.size and _execute_into(launch, inputs, out, fpe, out_read=False,
                                          order=launch.order):
                _report_fp_errors(c, fpe)
            return out.transpose(np.argsort(launch.order))
        if out is None:
            out, out_read = _new_result(launch.out_shape, c.result, launch.threads), False
        if out.size and _execute_into(launch, inputs, out, fpe, out_read=out_read,
                                      out_ostride=out_ostride):
            _report_fp_errors(c, fpe)
        return out
    op = c.reduction
    assert op is not None and c.compute is not None and c.canon is not None
    mode, order, n_outer, m, rsz, nb, nchunk, chunk_rows, nparts, cut = launch.reduction
    if m == 0:
        return np.empty(launch.out_shape, c.result)
    if rsz == 0:
        with np.errstate(all="ignore"):   # mean/var of nothing: 0/0, as NumPy computes it
            fill = {"sum": 0, "prod": 1, "any": False, "all": True}.get(
                op, np.true_divide(np.zeros((), c.compute), 0))
            return np.full(launch.out_shape, fill, dtype=c.result)
    # the runner of this launch, made once: a pending expression's reduction builds its
    # launch each call, and making the runner cost ~3-4 µs of a ~33 µs call (conv2d_bias's
    # loop of 14,161 small reductions, docs/notes/cpu.rst 2026-12-05h)
    key = (id(c), launch.scalars, launch.shape, launch.out_shape, launch.reduction, launch.parallel)
    hit = _reduction_runners.get(key)
    if hit is None:
        if len(_reduction_runners) >= _MAX_REDUCTION_RUNNERS:
            _reduction_runners.clear()
        hit = _reduction_runners[key] = (c, _bound_reduction(launch, None))
    return hit[1](inputs)


#: the runners :func:`_execute` made for reduction launches, by the launch's program (its id:
#: the entry holds the program, so no other object takes that id while the entry lives) and
#: everything else the runner depends on
_reduction_runners: dict[tuple[Any, ...], tuple[Compiled, Any]] = {}
_MAX_REDUCTION_RUNNERS = 1024


#: a new result of at least this many bytes, written by the pool, is made resident first
#: (_cpu_vm.prefault): NumPy madvises huge pages from 4 MiB
PREFAULT_BYTES = 1 << 22


@functools.cache
def _transparent_huge_pages() -> str:
    """The kernel's transparent huge page mode (``always``, ``madvise``, ``never``); ``never``
    where it cannot be read (not Linux)."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            text = f.read()
    except OSError:
        return "never"
    start, end = text.find("["), text.find("]")
    return text[start + 1:end] if 0 <= start < end else "never"


def _huge_pages_likely() -> bool:
    """Whether a new large NumPy array is backed by huge pages: THP ``always``, or ``madvise``
    with NumPy's madvise on (its default; a private NumPy switch, read where it exists:
    ``numpy._core.multiarray._get_madvise_hugepage``, tests/test_cpu_fused.py checks it)."""
    mode = _transparent_huge_pages()
    if mode != "madvise":
        return mode == "always"
    from numpy._core import multiarray
    return bool(getattr(multiarray, "_get_madvise_hugepage", lambda: True)())


def _new_result(shape: tuple[int, ...], dtype: np.dtype, threads: int) -> np.ndarray:
    """A new elementwise result's array, through the result pool from RESULT_POOL_MIN_BYTES (a
    kept block's pages are resident already). A fresh one that the thread pool will write on
    huge pages is made resident first by this thread: two threads first-touching the same
    fresh huge pages ran ~3x slower than one thread (with 4 KiB pages their faults overlap
    well, and one thread populating them all is slower: docs/notes/cpu.rst)."""
    if math.prod(shape) * dtype.itemsize >= RESULT_POOL_MIN_BYTES:
        out, kept = _cpu_vm.result_pool_empty(shape, dtype, _huge_pages_likely())
    else:
        out, kept = np.empty(shape, dtype), False
    # (a kept block's pages are resident: the last result's)
    if not kept and threads > 1 and out.nbytes >= PREFAULT_BYTES and _huge_pages_likely():
        _cpu_vm.prefault(out)
    return out


def _execute_into(launch: _Launch, inputs: list[np.ndarray], out: np.ndarray,
                  fpe: bytearray, progress: np.ndarray | None = None, out_read: bool = True,
                  order: tuple[int, ...] | None = None, out_ostride: int = 0) -> int:
    """An elementwise launch run into ``out`` (C order, not empty; of the space's dims in
    ``order`` when given); the floating-point exceptions raised are ORed into ``fpe``
    (returned: their bits, 0 if none). ``progress``: a pipelined run's counter; ``out_read``:
    an input may read ``out`` (``_cpu_vm.execute``); ``out_ostride``: the bytes between the
    outputs of consecutive outer indices where ``out`` is not C-contiguous (0: it is)."""
    c, shape = launch.c, launch.shape
    order = order or tuple(range(len(shape)))
    run = shape[order[-1]] if launch.outer else out.size
    return int(_cpu_vm.execute(c.vm, inputs, launch.scalars, shape, order,
                               launch.outer, _MODE_EW, launch.threads, out=out,
                               nb=-(-run // c.vm.block), fpe=fpe, progress=progress,
                               out_read=out_read, out_ostride=out_ostride))


def _outer_stride(out: np.ndarray, outer: int) -> int:
    """The byte stride from one outer index's outputs to the next's where an elementwise run
    with ``outer`` outer dims (:func:`_rows_outer`) can write straight into ``out``, a view
    that is not C-contiguous: its inner dims C-contiguous, its outer dims one regular step
    (a 2-d view's rows, ``p[1:-1, 1:-1]``; a 3-d view whose last two dims are whole); else 0."""
    if not outer or out.ndim <= outer:
        return 0
    shape, strides, step = out.shape, out.strides, out.itemsize
    for d in range(out.ndim - 1, outer - 1, -1):       # inner dims: C order
        if shape[d] != 1 and strides[d] != step:
            return 0
        step *= shape[d]
    ostride, n = 0, 1
    for d in range(outer - 1, -1, -1):                  # outer dims: ostride * (C steps)
        if shape[d] != 1:
            if not ostride:
                ostride, n = strides[d], shape[d]
            elif strides[d] != ostride * n:
                return 0
            else:
                n *= shape[d]
    return ostride


#: a pipelined run (:meth:`CpuFusedBackend.run_into_pipelined`) for results of at least this
#: many bytes (below, handing the kernel to the worker thread costs more than it overlaps)
PIPE_MIN_BYTES = 1 << 20
#: ... whose consumer takes at most this many bytes of rows a call (at least one row)
PIPE_CHUNK_BYTES = 1 << 22


def _writes_into(c: Any, lowered: Lowered, out: Any) -> bool:
    """Whether the compiled program ``c`` may write its result into ``out`` at all (what
    ``run_into`` and ``run_into_pipelined`` both ask first): an elementwise program the VM
    runs, not serial (a loop may raise midway, integer power; the target must stay as it
    was), and ``out`` an aligned, writeable ndarray of the result's dtype and shape."""
    return not (isinstance(c, Unsupported) or c.reduction is not None or c.serial) \
        and type(out) is np.ndarray and out.dtype == c.result and out.shape == lowered.shape \
        and out.flags.aligned and out.flags.writeable


def _pipe_rows(out: np.ndarray) -> int:
    """The most rows of dim 0 a pipelined run's consumer takes in one call."""
    return max(1, PIPE_CHUNK_BYTES // max(1, out.nbytes // out.shape[0]))


def _run_pipelined(launch: _Launch, inputs: list[np.ndarray], out: np.ndarray,
                   consume: Any) -> bytearray:
    """The kernel on the worker thread (:func:`_pipe_submit`), in one VM run that counts
    the elements it has written (``progress``: the GIL is released for all of it, so the
    worker never waits for the consumer, which may hold the GIL: NumPy's accumulate does),
    and ``consume(out, r0, r1)`` on the calling thread on the rows of dim 0 written since its
    last call (at most :func:`_pipe_rows`), in order, as soon as there are any. Returns the
    floating-point exceptions the kernel raised, not reported yet. An exception on either
    side (Ctrl-C in ``consume``, an error in the kernel) stops both and is raised here."""
    n0, rows = out.shape[0], _pipe_rows(out)
    row = out.size // n0
    fpe = bytearray(len(launch.c.fpe))
    progress = np.zeros(2, np.int64)
    failed: list[BaseException] = []
    finished = threading.Event()

    def work() -> None:
        try:
            _execute_into(launch._replace(threads=1), inputs, out, fpe, progress, out_read=False)
        except BaseException as exc:   # (raised on the calling thread)
            failed.append(exc)
        finally:
            finished.set()

    _pipe_submit(work)
    complete = False
    try:
        done = 0
        while done < n0:
            want = (done + 1) * row    # (any new row: the kernel is usually ahead)
            while _cpu_vm.wait_progress(progress, want, 1e-3) < want and not finished.is_set():
                pass        # (the first rows, or a consumer ahead of the kernel)
            if failed:
                raise failed[0]
            ready = min(_cpu_vm.progress_of(progress) // row, done + rows)
            if ready <= done:                # (cannot happen: never a silent loop)
                raise RuntimeError("lazyarr cpu-fused: a pipelined kernel stopped early")
            consume(out, done, ready)
            done = ready
        complete = True
    finally:
        if not complete:    # stop the kernel (it reads [1] after each block), then let it go
            progress[1] = 1
            finished.wait()
    # (all of ``out`` written means the VM has noted its last flags too: the worker's thread
    # may still be returning from it, but it touches neither ``out`` nor ``fpe`` again)
    return fpe


# The pipelined runs' worker: one thread, started once per process (a thread started per call
# cost ~0.5 ms here, a tenth of a 2^20 cumsum), serving the runs in turn (a run never waits
# for its consumer, so runs of several user threads queue without a deadlock).
_pipe_tasks: queue.SimpleQueue[Any] | None = None
_pipe_pid = -1
_pipe_lock = threading.Lock()


def _pipe_submit(task: Any) -> None:
    global _pipe_tasks, _pipe_pid
    with _pipe_lock:
        if _pipe_tasks is None or _pipe_pid != os.getpid():     # (a forked child has none)
            _pipe_tasks, _pipe_pid = queue.SimpleQueue(), os.getpid()
            threading.Thread(target=_pipe_serve, args=(_pipe_tasks,), name="lazyarr-pipeline",
                             daemon=True).start()
        _pipe_tasks.put(task)


def _pipe_serve(tasks: queue.SimpleQueue[Any]) -> None:
    while True:
        tasks.get()()          # (a task catches its own exceptions)


def _bound_reduction(launch: _Launch, dtypes: list[np.dtype] | None) -> Any:
    """The runner of a reduction ``launch`` over a non-empty space, a function of its input
    buffers (``_cpu_vm.BoundReduction``, compiled): the partial arrays the VM fills
    (:func:`_partial_arrays`), its floating-point errors reported, and the finishing step
    (a full float sum/prod/mean in C, everything else :func:`_finalize`), decided here once,
    not per call (a repeated small ``la.sum``: ~1 µs of its ~3 were this step in Python).
    ``dtypes``: the inputs' kernel dtypes for :func:`_prepare`, or None when the caller's
    key guarantees them (the buffers are passed as they are)."""
    c = launch.c
    op = c.reduction
    assert op is not None and c.compute is not None and c.canon is not None
    mode, order, n_outer, m, rsz, nb, nchunk, chunk_rows, nparts, cut = launch.reduction
    parts = _partial_arrays(op, c.canon)
    ddof, out_shape, result = c.red_arg[3], launch.out_shape, c.result
    # a full float sum/prod/mean: _finalize's Python-float branch, taken in C
    scalar_float = (m == 1 and result.kind == "f" and c.compute.kind != "c"
                    and op in ("sum", "prod", "mean") and parts[0][0] == "d")
    top = reduction_rules.FLOAT_MAX.get(result, math.inf)
    return _cpu_vm.BoundReduction(
        c.vm, launch.scalars, launch.shape, order, n_outer, mode, _bound_threads(launch), nb, nchunk,
        chunk_rows, nparts, m, tuple(("p" + name, "r" + name, dt) for name, dt in parts),
        len(c.fpe), None if dtypes is None else tuple(dtypes), _prepare,
        functools.partial(_report_fp_errors, c),
        functools.partial(_finalize, c, op, rsz=rsz, ddof=ddof, shape=out_shape),
        scalar_float, op == "mean", top, rsz, result, out_shape, op, cut)


def _report_fp_errors(c: Compiled, fpe: bytearray) -> None:
    """The floating-point exceptions the run raised, handled as NumPy would (np.errstate)."""
    fp_errors.report((flags & mask, name) for flags, (name, mask) in zip(fpe, c.fpe))


def run_compiled(c: Compiled, lowered: Lowered, out: np.ndarray | None = None) -> np.ndarray:
    inputs = [_prepare(b, dt) for b, dt in zip(lowered.inputs, c.input_dtypes)]
    launch = _launch(c, lowered, inputs)
    if out is None and len(launch.shape) == 2:
        plan = _fields_of(lowered, inputs, launch)
        if plan is not None:
            result = _run_fields(plan, lowered, inputs)
            if result is not None:
                return result
    return _execute(launch, inputs, out)


def _fields_of(lowered: Lowered, inputs: list[np.ndarray], launch: _Launch) -> cpu_stencil.Plan | None:
    """The stencil fields of ``lowered`` on ``inputs`` where ``launch`` keeps its blocks in
    rows (:func:`_fields_fit`), or None."""
    if not _fields_fit(launch):
        return None
    return cpu_stencil.find(lowered.program, inputs, launch.shape, _compiled_or_none)


def _run_on(c: Compiled, lowered: Lowered, buffers: list[Any]) -> Any:
    """``run_compiled`` of ``lowered``'s program and scalars on other input buffers."""
    return run_compiled(c, lowered._replace(inputs=buffers))


def _compiled_or_none(program: Program) -> Compiled | None:
    """The compiled program, or None where the VM cannot run it (cpu_stencil's programs)."""
    c = get_compiled(program)
    return None if isinstance(c, Unsupported) else c


def _fields_fit(launch: _Launch) -> bool:
    """Whether a launch's blocks each lie in one row of a big enough 2-d space, as stencil
    fields need (cpu_stencil): an elementwise run by rows into a new C-ordered result, or a
    full reduction cut at the rows (mode A, no outer dims)."""
    shape = launch.shape
    if len(shape) != 2 or shape[0] * shape[1] < cpu_stencil.MIN_ELEMENTS:
        return False
    if launch.reduction is None:
        return launch.outer == 1 and launch.order is None and launch.out_shape == shape
    mode, order, n_outer = launch.reduction[:3]
    return mode == _MODE_RED_A and n_outer == 0 and order == (0, 1) and launch.reduction[9] == shape[1]


def _stencil_of(c: Compiled, lowered: Lowered) -> cpu_stencil.Plan | None:
    """The stencil fields a run of ``lowered`` would use (``la.explain``), or None."""
    if any(type(b) is not np.ndarray for b in lowered.inputs):
        return None
    inputs = [_prepare(b, dt) for b, dt in zip(lowered.inputs, c.input_dtypes)]
    return _stencil_in(lowered, inputs, _launch(c, lowered, inputs))


def _stencil_in(lowered: Lowered, inputs: list[np.ndarray], launch: _Launch
                ) -> cpu_stencil.Plan | None:
    """:func:`_stencil_of` for ``lowered``'s inputs as :func:`_prepare` made them and their
    launch (NumPy arrays all)."""
    plan = _fields_of(lowered, inputs, launch)
    return plan if plan is not None and _fields_launch(plan, lowered, inputs) is not None else None


def _fields_launch(plan: cpu_stencil.Plan, lowered: Lowered, inputs: list[np.ndarray]
                   ) -> tuple[_Launch, list[np.ndarray]] | None:
    """The launch of ``plan``'s main program and its inputs (the lowered ones, then one
    stand-in per shifted value: the VM points those into the fields' rings), or None where
    that launch would not keep its blocks in rows."""
    c = plan.main
    shape = tuple(lowered.shape if c.reduction is None else inputs[plan.fields[0].base].shape)
    main_inputs = inputs + [np.broadcast_to(np.zeros((), dt), shape) for dt in plan.tops]
    main = lowered._replace(program=None, inputs=main_inputs,
                            scalars=[lowered.scalars[p] for p in plan.scalars])
    launch = _launch(c, main, main_inputs)
    if launch.shape != shape or not _fields_fit(launch) \
            or cpu_stencil.ring_bytes(plan, shape[1], c.vm.block) > cpu_stencil.MAX_RING_BYTES:
        return None
    return launch, main_inputs


def _run_fields(plan: cpu_stencil.Plan, lowered: Lowered, inputs: list[np.ndarray]) -> Any:
    """Run the main program of ``plan`` with its fields (None, with nothing run, where its
    launch does not keep its blocks in rows: :func:`_fields_launch`), the fields' own
    floating-point errors reported after the run's."""
    c = plan.main
    found = _fields_launch(plan, lowered, inputs)
    if found is None:
        return None
    if c.loop is not None and c.loop.state == "new":
        cpu_loops.note_call(c.loop, c.vm, math.prod(found[0].shape))
    launch, main_inputs = found
    shape = launch.shape
    fpes = [bytearray(len(f.compiled.fpe)) for f in plan.fields]
    fields = tuple(
        (f.compiled.vm, _cpu_vm.scalar_bytes([lowered.scalars[p] for p in f.scalars]), fpe,
         inputs[f.base], inputs[f.base].strides[0], inputs[f.base].strides[1], f.tops)
        for f, fpe in zip(plan.fields, fpes))
    if c.reduction is None:
        out = _new_result(shape, c.result, launch.threads)
        fpe = bytearray(len(c.fpe))
        if _cpu_vm.execute(c.vm, main_inputs, launch.scalars, shape, (0, 1), 1, _MODE_EW,
                           launch.threads, out=out, nb=-(-shape[1] // c.vm.block), fpe=fpe,
                           out_read=False, fields=fields):
            _report_fp_errors(c, fpe)
        result = out
    else:
        result = _bound_reduction(launch, None)(main_inputs, fields)
    for f, fpe in zip(plan.fields, fpes):
        if any(fpe):
            _report_fp_errors(f.compiled, fpe)
    return result


@functools.lru_cache(maxsize=4096)
def _reduction_plan(shape: tuple[int, ...], axes: tuple[int, ...] | None, block: int,
                    fast: int = -1, rows_min: int = ROWS_MIN, itemsize: int = 8) -> tuple[Any, ...]:
    """Everything about a reduction call that depends on the shapes only (cached); its last
    entry, the blocks' cut, is 0 here: :func:`_launch` sets it from the inputs' layout."""
    mode, order, n_outer = _layout(shape, axes, fast, rows_min)
    osz = math.prod(shape[d] for d in order[:n_outer])
    isz = math.prod(shape[d] for d in order[n_outer:])
    m, rsz = (osz, isz) if mode == _MODE_RED_A else (isz, osz)
    nchunk, chunk_rows = 1, 0
    if mode == _MODE_RED_A and m > 1 and 0 < isz <= min(ROWS_MAX_BYTES // itemsize, ROWS_BLOCK // 2):
        mode, nb, nparts = _MODE_RED_ROWS, ROWS_BLOCK // isz, m   # nb: rows per block (lz_do_rows)
    elif mode == _MODE_RED_A:
        nb = -(-isz // block)
        nparts = m * nb
    else:
        # rows in fixed chunks (never depending on the thread count), one partial per
        # (chunk, slot), combined in chunk order: parallel over chunks, streaming rows.
        # Each chunk's partials (8 bytes a slot) are written once more and read by the
        # serial combine: at most 64 chunks, and fewer where a chunk's column would hold
        # under 1 KiB of input (at least 16 chunks, for the pool). Column sums of 4096²
        # float32 in 64 chunks spent ~9 % on them (docs/notes/cpu.rst, "Fewer chunks").
        nb = m if m <= 16384 else 8192
        nchunk = max(1, min(64, rsz // 16, (1 << 22) // max(m, 1),
                            max(16, rsz * itemsize // 1024)))
        if m >= 16 * nb:     # the slots' blocks alone feed the pool: no partials to combine
            nchunk = 1
        chunk_rows = -(-rsz // nchunk)
        nchunk = -(-rsz // chunk_rows) if rsz else 1
        nparts = nchunk * m
    return mode, order, n_outer, m, rsz, nb, nchunk, chunk_rows, nparts, 0   # (cut: _block_cut)


@functools.lru_cache(maxsize=256)
def _partial_arrays(op: str, canon: np.dtype) -> tuple[tuple[str, type], ...]:
    """The partial/result arrays a reduction kernel fills (see lz_run in _cpu_vm.h): float64
    "d" for float values (var: the means), "i" for int64 extrema, "u" (uint64) for wrapping
    integer sums and products and for any/all, "idx" for arg* positions and var's counts,
    "m2" for var's sums of squared deviations; complex values: their real parts in "d", their
    imaginary parts in "m2"."""
    kind, is_float, is_int64 = _VM_REDUCTION[op], canon.kind == "f", canon.kind == "i"
    if canon.kind == "c" and kind == "var":
        # the real parts' (mean, M2) in "d"/"m2", the imaginary parts' in "i"/"u" as float64
        # (LZ_CVAR_D in _cpu_vm.h), the counts in "idx"
        return (("d", np.float64), ("m2", np.float64), ("idx", np.int64), ("i", np.float64),
                ("u", np.float64))
    if canon.kind == "c":           # sum, prod, min, max: the real parts in "d", imaginary in "m2"
        names = ["d", "m2", "idx"] if kind in ("argmin", "argmax") else ["d", "m2"]
    elif kind == "var":
        names = ["d", "m2", "idx"]
    elif kind in ("argmin", "argmax"):
        names = ["idx", "d" if is_float else ("i" if is_int64 else "u")]
    elif is_float and kind in ("sum", "prod", "min", "max"):
        names = ["d"]
    else:
        names = ["i" if is_int64 and kind in ("min", "max") else "u"]
    dt = {"d": np.float64, "m2": np.float64, "i": np.int64, "idx": np.int64, "u": np.uint64}
    return tuple((n, dt[n]) for n in names)


#: results from this many on are finished in place (_finalize)
_IN_PLACE_FROM = 1 << 15


def _finalize(c: Compiled, op: str, arrays: dict[str, np.ndarray], rsz: int, ddof: Any,
              shape: tuple[int, ...]) -> np.ndarray:
    """Partials -> the result dtype. Floats: the float64 result rounded once (the accumulation
    rule of ``reduction_rules``). A rounding that overflows warns, as NumPy's reductions do."""
    result, compute = c.result, c.compute
    assert compute is not None
    if op in ("argmin", "argmax"):
        return arrays["ridx"].astype(result, copy=False).reshape(shape)
    if compute.kind == "c" and op not in ("var", "std"):
        return _finalize_complex(op, arrays["rd"], arrays["rm2"], rsz, result, shape)
    if op in ("min", "max", "any", "all"):       # exact: no arithmetic
        val = next(arrays[k] for k in ("rd", "ri", "ru") if k in arrays)
        return val.astype(result, copy=False).reshape(shape)
    if op in ("var", "std"):
        m2 = arrays["rm2"]
        if compute.kind == "c":     # |z - mean|^2: the two parts' sums of squares
            m2 = m2 + arrays["ru"]
            # NumPy's mean is sum / (n + 0j) (Smith's division): an infinite part of it makes
            # the other part NaN, and so the variance (the parts' means are in rd and ri)
            m2 = np.where(np.isinf(arrays["rd"]) | np.isinf(arrays["ri"]), np.nan, m2)
        # (slices of at most ddof elements: NumPy's warnings came from _build's
        # _warn_empty_slices and _no_degrees_of_freedom, or, under la.jit/la.explain, the
        # first only: docs/not-supported.rst)
        with np.errstate(divide="ignore", invalid="ignore"):
            # (in place: the run's own arrays; a new 4 MiB one per step came from fresh pages)
            val = np.true_divide(m2, max(rsz - ddof, 0), out=m2)
            if op == "std":
                val = np.sqrt(val, out=val)
    elif "rd" in arrays:
        rd = arrays["rd"]
        if rd.size == 1 and result.kind == "f":
            # one result (a full reduction), in Python floats: the same IEEE operations as
            # the array path below, without its three NumPy calls (~1 µs of a small call)
            v = rd.item()
            if op != "prod":                   # NumPy's sums start from +0.0 (a product
                v = v + 0.0                    # keeps its zero's sign)
            if op == "mean":
                v = v / rsz
            if result.itemsize == 8 or not abs(v) > reduction_rules.FLOAT_MAX[result]:
                one = np.array(v, dtype=result)
                return one.reshape(shape) if shape else one
        # NumPy's sums start from +0.0; a product keeps its zero's sign (-0.0 of [-0.0, 1.0],
        # as NumPy's). Big arrays in place (a new one came from fresh pages); small ones by
        # the operators (``out=`` costs ~0.1 µs of a small call)
        big = rd.size >= _IN_PLACE_FROM
        val = rd if op == "prod" else np.add(rd, 0.0, out=rd) if big else rd + 0.0
        if op == "mean":
            val = np.true_divide(val, rsz, out=val) if big else val / rsz
    else:
        val = arrays["ru"]
        if compute.kind == "i":
            val = val.view(np.int64)
        if compute.kind in "iu":
            val = val.astype(compute)          # NumPy's wrap-around in the loop dtype
        if op == "mean":
            val = np.true_divide(val, rsz)
    if result.kind == "f" and val.dtype.kind == "f" and result.itemsize < val.dtype.itemsize:
        return reduction_rules.rounded_once(val, result).reshape(shape)
    return val.astype(result, copy=False).reshape(shape)


def _finalize_complex(op: str, re: np.ndarray, im: np.ndarray, rsz: int, result: np.dtype,
                      shape: tuple[int, ...]) -> np.ndarray:
    """The complex128 results from their float64 parts: sums start from +0.0 (as NumPy's),
    a mean divides by the count with NumPy's complex division (``sum / (n + 0j)``: Smith's
    algorithm, not ``sum / n`` part by part; an infinite part makes the other one NaN, which
    NumPy reports as an invalid value in its divide), then each rounds once to ``result``."""
    val = np.empty(re.shape, np.complex128)
    if op in ("sum", "mean"):
        val.real, val.imag = re + 0.0, im + 0.0
    else:
        val.real, val.imag = re, im
    if op == "mean":
        with np.errstate(all="ignore"):
            quotient = np.true_divide(val, rsz)
        if bool((np.isnan(quotient) & ~np.isnan(val)).any()):
            fp_errors.report([(fp_errors.INVALID, fp_errors.divide_words(shape))])
        val = quotient
    if result != val.dtype:
        # min/max: exact (the parts are result's own values); else rounded once
        val = val.astype(result) if op in ("min", "max") else reduction_rules.rounded_once(val, result)
    return val.reshape(shape)


#: Reductions that NumPy's own loop runs faster than the VM on an input alone, when nothing is
#: fused into them: NumPy's min/max/argmin/argmax are SIMD (AVX-512 where the CPU has it) and its
#: any/all stop at the first deciding element; the VM's integer min/max are scalar loops.
#: Measured on 1024² and 4096² float64/float32/int32/bool leaves (docs/notes/cpu.rst).
_NUMPY_ON_AN_INPUT = frozenset({"min", "max", "any", "all", "argmin", "argmax"})
#: ... but not on a small input (one VM block): there the set-up is most of the call, and the
#: VM's kernel bound once (a loop's ``la.max(row)``, lazyarr/_build.py) costs half the
#: reference backend's run (1,024 float64: ~8 vs ~15 µs)
_SMALL_INPUT = 4096


#: ... and float32/float64 min/max: the VM's (AVX-512 or AVX2 folds, both threads) beats
#: NumPy's single-threaded loop where the last axis is reduced (rows of 16 to 4,096: 1.5-12x)
#: and over everything from this many bytes (16 MiB: 1.1-1.5x; below, 0.4-0.9x), but not
#: along a leading axis alone (docs/notes/cpu.rst, "Leaf min/max on the VM")
_VM_FULL_MINMAX_BYTES = 1 << 24


def numpy_reduces_faster(lowered: Lowered) -> bool:
    """Whether ``lowered`` is one of those reductions of a C-contiguous input alone (argmin and
    argmax only over the last axis or all: NumPy's loop over a leading axis is 3-15x slower
    than the VM's; float min/max only along leading axes, or over everything below
    ``_VM_FULL_MINMAX_BYTES``). The reference backend then runs it with NumPy under the same
    lazy-mode rules (IEEE signed zeros of min/max), so the values are the same as the VM's."""
    instrs = lowered.program.instrs
    if len(instrs) != 2 or instrs[0].op != "input" or instrs[1].op not in _NUMPY_ON_AN_INPUT:
        return False
    x = lowered.inputs[0]
    if type(x) is not np.ndarray or x.dtype.kind == "c" or not x.flags.c_contiguous \
            or x.size <= _SMALL_INPUT:
        return False
    op, axes = instrs[1].op, instrs[1].arg[0]
    if op in ("min", "max") and x.dtype.kind == "f" and x.dtype.itemsize >= 4:
        if axes is None or len(axes) == x.ndim:
            return x.nbytes < _VM_FULL_MINMAX_BYTES
        return x.ndim - 1 not in axes
    return op not in ("argmin", "argmax") or axes is None or x.ndim - 1 in axes


# ----------------------------------------------------------------------------- the backend
class CpuFusedBackend:
    """Runs a lowered program as one fused pass on the CPU (see the module docstring)."""

    name = "cpu-fused"

    def run(self, lowered: Lowered) -> Any:
        c = get_compiled(lowered.program)
        if isinstance(c, Unsupported) or numpy_reduces_faster(lowered):
            from .reference import for_device
            return for_device("cpu").run(lowered)
        return run_compiled(c, lowered)

    def bind(self, lowered: Lowered, checked: bool = False) -> Any:
        """``run`` for later calls with inputs like ``lowered``'s (dtypes, shapes, strides)
        and the same scalars: a function of the input buffers, with the set-up done once.
        ``checked``: the caller guarantees NumPy arrays of ``lowered``'s inputs' dtypes and
        alignment (its key holds them), so inputs that needed no conversion then need no
        check either."""
        c = get_compiled(lowered.program)
        if isinstance(c, Unsupported) or numpy_reduces_faster(lowered):
            from .reference import for_device
            return bound(for_device("cpu"), lowered)     # what ``run`` would hand it
        if c.loop is not None and c.loop.state == "new":
            cpu_loops.note_call(c.loop, c.vm, math.prod(lowered.shape), repeated=True)  # (la.jit)
        dtypes = c.input_dtypes
        inputs = [_prepare(b, dt) for b, dt in zip(lowered.inputs, dtypes)]
        launch = _launch(c, lowered, inputs)    # (once: a loop of new shapes binds every step)
        if all(type(b) is np.ndarray for b in lowered.inputs) \
                and _stencil_in(lowered, inputs, launch) is not None:
            # stencil fields: each call checks that its inputs lie as these do (run_compiled,
            # cpu_stencil.find's kept answer: ~5 µs on spaces of 65,536 elements or more)
            return functools.partial(_run_on, c, lowered._replace(inputs=[]))
        as_given = checked and all(type(a) is np.ndarray and a is b
                                   for a, b in zip(inputs, lowered.inputs))
        if c.reduction is not None and launch.reduction[3] and launch.reduction[4]:
            return _bound_reduction(launch, None if as_given else dtypes)
        if launch.out_shape != launch.shape or np.dtype(c.result).byteorder not in "=|" \
                or launch.order is not None:
            return lambda buffers: _execute(launch, [_prepare(b, dt) for b, dt in zip(buffers, dtypes)])
        return _cpu_vm.BoundElementwise(     # (compiled: a jitted small call's replay)
            c.vm, launch.scalars, launch.shape, launch.outer, _bound_threads(launch), c.result,
            launch.out_shape, c.vm.block, len(c.fpe), None if as_given else tuple(dtypes),
            _prepare, functools.partial(_report_fp_errors, c))

    def run_into(self, lowered: Lowered, out: Any, fresh: bool = False) -> bool:
        """Run an elementwise program writing its result straight into ``out`` (``x op= y``,
        ``x[key] = y``): no temporary, no copy; False, with nothing written, where that is
        not safe: ``out`` not aligned, writeable and of the result's dtype and shape, or an
        input overlapping ``out`` in a way :func:`_write_back_plan` proves no bound for.
        A C-contiguous ``out`` that no input shares memory with other than as ``out`` itself
        (a block is read before it is written) is the kernel's output; any other ``out`` is
        written by the chunked write-back, which keeps every read on the old values.
        (``fresh``, new memory of the caller's: the checks here are cheap, all kept.)"""
        c = get_compiled(lowered.program)
        if not _writes_into(c, lowered, out):
            return False
        inputs = [_prepare(b, dt) for b, dt in zip(lowered.inputs, c.input_dtypes)]
        shared = [type(a) is not CounterMap and np.may_share_memory(a, out) for a in inputs]
        if any(shared):
            inputs, shared = _snapshot_small_reads(inputs, shared, out)
        launch = _launch(c, lowered, inputs)
        if out.flags.c_contiguous and all(not s or _same_view(a, out) for a, s in zip(inputs, shared)):
            _execute(launch, inputs, out, out_read=any(shared))
            return True
        if not any(shared) and launch.order is None:
            # rows of the space written in place: ``p[1:-1, 1:-1] = f(pn, b)`` (no input reads
            # ``p``) without the write-back's stage and scatter (docs/notes/cpu.rst, 2026-12-07i)
            ostride = _outer_stride(out, launch.outer)
            if ostride:
                _execute(launch, inputs, out, out_read=False, out_ostride=ostride)
                return True
        plan = (_write_back_plan(inputs, out, shared, launch.threads)
                if launch.shape == out.shape else None)
        if plan is None:
            return False
        _execute(launch, inputs, writeback=(out, *plan))
        return True

    def run_masked(self, lowered: Lowered, mask: Any, out: Any, count: int) -> bool:
        """A masked update ``x[m] = f(x[m], y[m], s)``: the elementwise program (``f`` over the
        whole arrays, of ``x``'s dtype) computed on the True lanes of ``mask`` only and written
        into ``out`` (``x``'s memory) there, the other lanes left as they are; one pass, where
        NumPy compresses each operand, computes and scatters (lz_exec_masked in _cpu_vm.h).
        Each block takes its inputs at its True lanes, so the program sees NumPy's values in
        NumPy's loops: its floating-point flags exactly. ``count``: the mask's True lanes (the
        work, for the thread count). False, with nothing written, where it cannot: ``out`` and
        ``mask`` (bool) not C-contiguous of the space or sharing memory, an input neither
        C-contiguous of the space nor one element, an input sharing ``out``'s memory other
        than as ``out`` itself, a random draw's counters, a serial program (integer power)."""
        c = get_compiled(lowered.program)
        if not _writes_into(c, lowered, out) or not out.flags.c_contiguous \
                or type(mask) is not np.ndarray or mask.dtype != np.bool_ \
                or mask.shape != out.shape or not mask.flags.c_contiguous \
                or np.may_share_memory(mask, out):
            return False        # (a mask in the target's memory: NumPy's write reads it as it writes)
        inputs = [_prepare(b, dt) for b, dt in zip(lowered.inputs, c.input_dtypes)]
        for a in inputs:
            if type(a) is CounterMap:
                return False
            if a.size != 1 and not (a.shape == out.shape and a.flags.c_contiguous):
                return False
            if a.size != 1 and np.may_share_memory(a, out) and not _same_view(a, out):
                return False
        inputs = [a.reshape(()) if a.size == 1 else a for a in inputs]   # (stride 0 throughout)
        if not out.size or not count:
            return True
        size = out.size
        if c.loop is not None and c.loop.state == "new":
            cpu_loops.note_call(c.loop, c.vm, count)
        # the work: the True lanes' program and each lane's mask byte
        threads = _elementwise_threads(c, count + size // 16)
        fpe = bytearray(len(c.fpe))
        if _cpu_vm.execute(c.vm, inputs, _cpu_vm.scalar_bytes(lowered.scalars), out.shape,
                           tuple(range(out.ndim)), 0, _MODE_EW, threads, out=out,
                           nb=-(-size // c.vm.block), fpe=fpe, out_read=False, mask=mask):
            _report_fp_errors(c, fpe)
        return True

    def run_fill(self, out: Any, mask: Any, value: Any, count: int) -> bool:
        """``x[m] = value`` for a scalar ``value``: the element ``value`` (an array of ``out``'s
        dtype, NumPy's conversion of the scalar done) written into the True lanes of ``mask``
        alone, one pass (the masked run of a program that only casts its scalar operand:
        :meth:`run_masked`); False, with nothing written, where ``out`` and ``mask`` are not
        C-contiguous of one shape or share memory (NumPy's write reads such a mask as it
        writes: the caller writes with NumPy then)."""
        if type(out) is not np.ndarray or out.dtype not in TYPE_CODE or not out.flags.c_contiguous \
                or not out.flags.writeable or not out.flags.aligned or type(mask) is not np.ndarray \
                or mask.dtype != np.bool_ or mask.shape != out.shape or not mask.flags.c_contiguous \
                or np.may_share_memory(mask, out):
            return False
        if not out.size or not count:
            return True
        vm = _fill_program(out.dtype)
        size = out.size
        # (one thread: ~1 ns a mask byte and ~2 a lane written, hot, on the 2-core EPYC;
        # PARALLEL_WORK stands for ~100 µs: mandelbrot1's N[I] = n at 833², 25 % True, 0.165 ms
        # on one thread, 0.10 on two; docs/notes/cpu.rst, 2026-12-08)
        threads = _num_threads if (size + 2 * count) * 4 >= PARALLEL_WORK else 1
        _cpu_vm.execute(vm, [], _cpu_vm.scalar_bytes([value.reshape(-1)[0]]), out.shape,
                        tuple(range(out.ndim)), 0, _MODE_EW, threads, out=out,
                        nb=-(-size // vm.block), out_read=False, mask=mask)
        return True

    def run_into_pipelined(self, lowered: Lowered, out: Any, consume: Any) -> bool:
        """:meth:`run_into` overlapped with a consumer of the result: ``out`` (new memory the
        caller owns, C-contiguous, of the result's dtype and shape) is written by the kernel on
        a worker thread, and ``consume(out, r0, r1)`` runs on the calling thread on the rows
        of dim 0 as soon as they are written, in order, while the worker writes the next ones
        (``cumsum`` of a pending array scans the chain's values as they come: the scan is one
        sequential pass, so the chain costs nothing when it runs beside it). The kernel's
        floating-point errors are reported on the calling thread after the last rows are
        consumed. False, with
        nothing written or consumed, where :meth:`run_into` would refuse, where ``out`` is
        not C-contiguous, has fewer than two rows or :data:`PIPE_MIN_BYTES`, an input shares
        its memory or is a random draw's counters, and on one thread (nothing to overlap: the
        caller runs :meth:`run_into`, then consumes)."""
        c = get_compiled(lowered.program)
        if _num_threads < 2 or not _writes_into(c, lowered, out) or not out.ndim \
                or out.nbytes < max(PIPE_MIN_BYTES, 1) or out.shape[0] < 2 \
                or not out.flags.c_contiguous:
            return False
        inputs = [_prepare(b, dt) for b, dt in zip(lowered.inputs, c.input_dtypes)]
        if any(type(a) is CounterMap or np.may_share_memory(a, out) for a in inputs):
            return False
        launch = _launch(c, lowered, inputs)
        if launch.shape != out.shape:
            return False
        _report_fp_errors(c, _run_pipelined(launch, inputs, out, consume))
        return True

    def plan(self, lowered: Lowered) -> Plan:
        c = get_compiled(lowered.program)
        if isinstance(c, Unsupported) or numpy_reduces_faster(lowered):
            from .reference import for_device
            plan = for_device("cpu").plan(lowered)
            plan.notes.append("a reduction of an input alone: NumPy's loop is faster than the "
                              "VM's here (nothing to fuse)" if not isinstance(c, Unsupported) else
                              f"cpu-fused cannot run this program ({c}); the reference backend does")
            return plan
        inputs = [InputInfo.of(b) for b in lowered.inputs]
        read = sum(i.nbytes for i in inputs)
        written = int(np.prod(lowered.shape, dtype=np.int64)) * c.result.itemsize
        notes = ["one pass over the inputs; intermediates live in per-thread block registers"]
        stencil = _stencil_of(c, lowered)
        run = c if stencil is None else stencil.main     # (then each field's program after it)
        src = [f"block {run.vm.block} elements, {run.vm.nregs} register(s) per thread, "
               f"up to {_num_threads} thread(s)", *run.listing]
        if stencil is not None:
            for k, f in enumerate(stencil.fields):
                reads = ", ".join(f"input {i} at ({di}, {dj})" for i, di, dj in f.tops)
                src.append(f"field {k}: computed once per element of input {f.base}'s rows "
                           f"(a ring of rows per thread), read as {reads}")
                src += ["  " + line for line in f.compiled.listing]
                ops = " -> ".join(line.split(" = ", 1)[1].split("(", 1)[0] for line in f.compiled.listing)
                notes.append(f"stencil: {ops} is read at {len(f.tops)} shifts of one buffer: "
                             f"computed once per element, not once per view (cpu_stencil.py)")
        if c.reduction:
            axes = c.red_arg[0]
            src.append(f"sink: {c.reduction} over axes {'all' if axes is None else axes}, "
                       f"loop dtype {c.compute}, kernel reads {c.canon}"
                       + (", float64 pairwise accumulation" if c.canon is not None and c.canon.kind == "f"
                          and c.reduction in reduction_rules.ACCUMULATING else "")
                       + (", each part accumulated in float64" if c.canon is not None
                          and c.canon.kind == "c" and c.reduction in reduction_rules.ACCUMULATING
                          else ""))
        else:
            src.append("sink: the root writes the output directly")
        return Plan(self.name, lowered.device, lowered.program,
                    [Kernel("cpu-fused.vm", "\n".join(src), f"{_num_threads} thread(s)")],
                    inputs, read, written, notes)


BACKEND = CpuFusedBackend()


@functools.cache
def _fill_program(dtype: np.dtype) -> Any:
    """The VM program of :meth:`CpuFusedBackend.run_fill`: value 0, its one scalar operand,
    cast (a copy: the same dtype) into the output."""
    code = TYPE_CODE[dtype]
    return _cpu_vm.VMProgram([("cast", 1, (0,), -1, dtype.itemsize, (code, code))], [], [0], 2,
                             0, 1, _cpu_vm.REDUCTION_KINDS["none"], 0, 1024, 0,
                             16 if dtype.itemsize > 8 else 8)


def _self_check() -> None:
    """At import: NumPy's loop API must give a loop that adds two float64 blocks correctly;
    otherwise the module refuses to import and lazy mode on cpu uses the reference backend."""
    f8 = np.dtype(np.float64)
    try:
        capsule = _resolve_loop(np.add, (f8, f8, f8))
        vm = _cpu_vm.VMProgram([("ufunc", 2, (0, 1), -1, 8, capsule)], [(0, 8), (1, 8)], [], 3, 0, 2,
                               _cpu_vm.REDUCTION_KINDS["none"], 0, 512)
        a, b, out = np.arange(5.0), np.full(5, 0.5), np.empty(5)
        _cpu_vm.execute(vm, [a, b], b"", (5,), (0,), 0, _MODE_EW, 1, out, nb=1)
    except Exception as exc:  # noqa: BLE001
        raise ImportError(f"cpu-fused: NumPy {np.__version__}'s strided-loop API is unusable ({exc})") from exc
    if not np.array_equal(out, a + b):
        raise ImportError(f"cpu-fused: NumPy {np.__version__}'s strided loops gave wrong results")


_self_check()
