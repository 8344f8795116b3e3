"""Compiled loops for the CPU VM (``la.config(cpu_loops=...)``; docs/cpu-backend.rst,
"Compiled loops").

The VM runs a program one instruction at a time over each block: every op is one pass of
NumPy's own loop over a register in cache. Below ~100,000 elements, and for arithmetic-heavy
statements at any size, those passes are the time (~0.3 ns an op and element: docs/notes/
cpu.rst, "The NPBench kernels at preset L again"). A run of instructions that all have an
exact compiled form (:data:`EXPRESSIONS`: IEEE float arithmetic, integer arithmetic wrapped
back to its dtype, comparisons, logic, ``where``, casts that are not float-to-integer) can
instead run as ONE loop per block, each element's intermediates in registers: Numba compiles
it (LLVM, vectorized; no fast-math, no contraction into FMAs), and the VM jumps over the run's
instructions to call it (``lz_run_loop`` in _cpu_vm.h; :func:`plan` says which runs). The values are the instructions' bit for
bit, NaN payloads and signed zeros included (tests/test_cpu_loops.py).

What stays with the instructions: a block whose floating-point flags must be told op by op
(a block that raised one runs again through the instructions, which note each op's flags for
NumPy's messages), and a block whose output may be an input's memory (their pass order is
the one kept there).

When: Numba imports in ~0.5 s and compiles a loop in ~0.1 s, holding the GIL, so a program
is compiled once it has run :data:`CALLS_BEFORE_COMPILE` times and done
:data:`WORK_BEFORE_COMPILE` (a statement in a loop): on the compile thread (``"background"``,
the default; the calls meanwhile run the instructions), or at a program's first call
(``"wait"``: tests and benchmarks).
``"off"`` never compiles. Without Numba the VM runs the instructions, as before.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._config import get_config
from .._devices import numba_installed
from . import _cpu_vm  # type: ignore[attr-defined]  # (only cpu_fused imports this module)

#: the Python expression of each NumPy loop the compiled loop computes ({0}, {1}: its
#: operands), by the ufunc's name, and the operand kinds it takes ("f" float, "i" signed,
#: "u" unsigned, "b" bool). Each gives NumPy's loop's bits: IEEE arithmetic is correctly
#: rounded in both; integer results wrap, as NumPy's do (the result is taken modulo its
#: dtype: ``_typed``); comparisons are exact.
EXPRESSIONS = {
    "add": ("{0} + {1}", "fiu"), "subtract": ("{0} - {1}", "fiu"),
    "multiply": ("{0} * {1}", "fiu"), "divide": ("{0} / {1}", "f"),
    "negative": ("-{0}", "fi"), "positive": ("{0}", "fiu"), "absolute": ("abs({0})", "fi"),
    "square": ("{0} * {0}", "fiu"), "sqrt": ("np.sqrt({0})", "f"),
    "sqrt_abs": ("np.sqrt(abs({0}))", "f"),
    "equal": ("{0} == {1}", "fiub"), "not_equal": ("{0} != {1}", "fiub"),
    "less": ("{0} < {1}", "fiu"), "less_equal": ("{0} <= {1}", "fiu"),
    "greater": ("{0} > {1}", "fiu"), "greater_equal": ("{0} >= {1}", "fiu"),
    "logical_and": ("{0} & {1}", "b"), "logical_or": ("{0} | {1}", "b"),
    "logical_xor": ("{0} ^ {1}", "b"), "logical_not": ("not {0}", "b"),
    "bitwise_and": ("{0} & {1}", "iub"), "bitwise_or": ("{0} | {1}", "iub"),
    "bitwise_xor": ("{0} ^ {1}", "iub"), "invert": ("~{0}", "iu"),
}
#: the same ops of bools where Python's operator is another (``~True`` is -2)
BOOL_EXPRESSIONS = {"invert": "not {0}"}
#: a program's loop is compiled at its second call (a program run once gains nothing) once
#: its calls have done this much work (elements x instructions): ~20 ms of the VM's passes
#: (~0.3 ns an element and instruction), against Numba's ~0.1 s a loop and ~0.5 s import,
#: on the compile thread
CALLS_BEFORE_COMPILE = 2
WORK_BEFORE_COMPILE = 1 << 26
#: the VM's limits on a loop's operands and on a program's runs (_cpu_vm.h: LZ_LOOP_MAX_IN,
#: LZ_MAX_RUNS)
MAX_OPERANDS = _cpu_vm.LOOP_MAX_OPERANDS
MAX_RUNS = _cpu_vm.LOOP_MAX_RUNS
_KINDS = "fiub"


@dataclass(eq=False)
class Run:
    """One run of instructions as a loop: ``specs[first:end]``, its Python source, the VM
    values it reads."""
    first: int
    end: int
    source: str
    operands: list[int]
    itemsizes: list[int]


@dataclass(eq=False)
class LoopPlan:
    """A program's runs of instructions that compiled loops take (at most :data:`MAX_RUNS`)."""
    runs: list[Run]
    ninstr: int = 1                  # instructions in the runs, for the work count
    calls: int = 0
    work: int = 0
    state: str = "new"               # "new", "compiling", "set", "failed"
    error: str = ""                  # why it failed
    lock: threading.Lock = field(default_factory=threading.Lock)


def _typed(expr: str, dtype: np.dtype) -> str:
    """``expr`` as a value of ``dtype``: Numba widens integer arithmetic to 64 bits, so an
    integer result is converted back (wrapping, as NumPy's loop's does); floats and bools
    are of their dtype already."""
    return f"np.{_name(dtype)}({expr})" if dtype.kind in "iu" else expr


def _name(dtype: np.dtype) -> str:
    """The NumPy attribute Numba knows a dtype by."""
    return "bool_" if dtype.kind == "b" else dtype.name


def _expression(s: Any, dtypes: list[np.dtype]) -> str | None:
    """The expression of VM instruction spec ``s`` (``cpu_fused._Spec``), or None where the
    loop has no exact form of it."""
    args = [dtypes[a] for a in s.args]
    if any(d.kind not in _KINDS or d.itemsize > 8 or d.kind == "f" and d.itemsize < 4
           for d in [*args, s.dtype]):
        return None                 # (complex; float16: NumPy's loops round through float32)
    names = [f"v{a}" for a in s.args]
    if s.kind == "where":
        return f"{names[1]} if {names[0]} else {names[2]}" \
            if args[0].kind == "b" and args[1] == args[2] == s.dtype else None
    if s.kind == "cast":
        src = args[0]
        if s.dtype.kind == "b":
            return f"{names[0]} != 0"
        if src.kind == "f" and s.dtype.kind != "f":
            return None             # (out of range and NaN: the C conversion's, not LLVM's)
        return f"np.{_name(s.dtype)}({names[0]})"
    if s.kind not in ("ufunc", "sqrt", "sqrt_abs"):
        return None
    # (the VM's own sqrt(abs) instruction is named "sqrt" in NumPy's messages)
    found = EXPRESSIONS.get("sqrt_abs" if s.kind == "sqrt_abs" else s.fpe or "")
    if found is None:
        return None
    expr, kinds = found
    if args and args[0].kind == "b" and s.fpe in BOOL_EXPRESSIONS:
        expr, kinds = BOOL_EXPRESSIONS[s.fpe], "b"
    if any(d.kind not in kinds or d != args[0] for d in args):
        return None                 # (NumPy's loop of one operand dtype)
    if s.dtype.kind != "b" and s.dtype != args[0]:
        return None
    return _typed(expr.format(*names), s.dtype)


def why_not(specs: list[Any], result_val: int, dtypes: list[np.dtype]) -> str:
    """What keeps a VM instruction list from any loop (``explain`` says it)."""
    if len(specs) < 2:
        return "one instruction: nothing to fuse"
    bad = [s.text for s in specs if _expression(s, dtypes) is None]
    if len(bad) >= len(specs) - 1:
        return f"{bad[0]}: no exact compiled form"
    return ("no run of two instructions or more that can be one loop (a value read after "
            "the run, or its output in an operand's register)")


def plan(specs: list[Any], regs: list[int], result_val: int, dtypes: list[np.dtype],
         scalar_values: set[int]) -> LoopPlan | None:
    """The runs of a VM instruction list (``cpu_fused._Spec``, with its registers) that
    compiled loops take: maximal runs of instructions with an exact compiled form, two or
    more, of which only the last value is read after the run, that do not write into the
    register of one of their operands (an operand at stride 0 is read at element 0 of its
    register for every element: a loop writing that register element by element would
    change it); None where there is none."""
    exprs = [_expression(s, dtypes) for s in specs]
    runs: list[Run] = []
    j = 0
    while j < len(specs) and len(runs) < MAX_RUNS:
        if exprs[j] is None:
            j += 1
            continue
        k = j
        while k < len(specs) and exprs[k] is not None:
            k += 1
        run = _run(specs, regs, exprs, j, k, result_val, dtypes, scalar_values)
        if run is not None:
            runs.append(run)
        j = k
    return LoopPlan(runs, sum(r.end - r.first for r in runs)) if runs else None


def _run(specs: list[Any], regs: list[int], exprs: list[str | None], first: int, end: int,
         result_val: int, dtypes: list[np.dtype], scalar_values: set[int]) -> Run | None:
    if end - first < 2:
        return None
    made = {s.out for s in specs[first:end]}
    last = specs[end - 1].out
    later = {a for s in specs[end:] for a in s.args} | {result_val}
    if (made - {last}) & later:
        return None
    producer = {s.out: i for i, s in enumerate(specs)}
    operands: list[int] = []
    lines: list[str] = []
    for s, expr in zip(specs[first:end], exprs[first:end]):
        for a in s.args:
            if a not in made and a not in operands:
                operands.append(a)
        lines.append(f"v{s.out} = {expr}")
    if len(operands) > MAX_OPERANDS:
        return None
    out_reg = regs[end - 1]
    if out_reg >= 0 and any(a in producer and regs[producer[a]] == out_reg for a in operands):
        return None
    return Run(first, end, _source(operands, lines, last, dtypes, scalar_values), operands,
               [dtypes[v].itemsize for v in operands])


def _source(operands: list[int], lines: list[str], result_val: int, dtypes: list[np.dtype],
            scalar_values: set[int]) -> str:
    """The loop as Python for Numba: ``loop(args, strides, n)``. Two copies of the body: one
    where every operand runs at one element a step (or is a scalar, read once), which LLVM
    vectorizes, and one at any strides."""
    k_out = len(operands)
    head = ["def loop(args, strides, n):"]
    for k, v in enumerate(operands):
        dt = dtypes[v]
        head.append(f"    s{k} = strides[{k}] // {dt.itemsize}")
        head.append(f"    a{k} = carray(args[{k}], (n * s{k} - s{k} + 1,), np.{_name(dt)})")
    dt = dtypes[result_val]
    head.append(f"    so = strides[{k_out}] // {dt.itemsize}")
    head.append(f"    out = carray(args[{k_out}], (n * so - so + 1,), np.{_name(dt)})")
    unit = " and ".join([f"s{k} == {0 if v in scalar_values else 1}" for k, v in enumerate(operands)]
                        + ["so == 1"])
    body_fast = [f"        v{v} = a{k}[0]" for k, v in enumerate(operands) if v in scalar_values]
    body_fast.append("        for i in range(n):")
    body_fast += [f"            v{v} = a{k}[i]" for k, v in enumerate(operands) if v not in scalar_values]
    body_fast += [f"            {ln}" for ln in lines]
    body_fast.append(f"            out[i] = v{result_val}")
    body_any = ["        for i in range(n):"]
    body_any += [f"            v{v} = a{k}[i * s{k}]" for k, v in enumerate(operands)]
    body_any += [f"            {ln}" for ln in lines]
    body_any.append(f"            out[i * so] = v{result_val}")
    return "\n".join(head + [f"    if {unit}:"] + body_fast + ["    else:"] + body_any) + "\n"


#: source -> (address, the cfunc object that keeps the code alive); loops are shared by the
#: programs that have the same one
_loops: dict[str, tuple[int, Any]] = {}
_loops_lock = threading.Lock()


def _compile(source: str) -> tuple[int, Any]:
    with _loops_lock:
        done = _loops.get(source)
    if done is not None:
        return done
    import numba
    from numba import carray, types
    namespace: dict[str, Any] = {"np": np, "carray": carray}
    exec(compile(source, "<lazyarr compiled loop>", "exec"), namespace)   # noqa: S102 - our own source
    signature = types.void(types.CPointer(types.voidptr), types.CPointer(types.intp), types.intp)
    # error_model="numpy": a division by zero gives inf or NaN and raises the flag, as NumPy's
    # loop does (Python's model would raise ZeroDivisionError); no fastmath: IEEE throughout
    made = numba.cfunc(signature, error_model="numpy", fastmath=False)(namespace["loop"])
    done = (made.address, made)
    with _loops_lock:
        return _loops.setdefault(source, done)


def note_call(loop: LoopPlan, vm: Any, elements: int, repeated: bool = False) -> None:
    """A call of the program that ``loop`` belongs to, over ``elements``: once the calls
    reach :data:`CALLS_BEFORE_COMPILE` and :data:`WORK_BEFORE_COMPILE` (where the caller will
    repeat it, ``la.jit``'s bound replays: the work alone), compile its loop and give it to
    ``vm`` (the program's VMProgram), as ``la.config(cpu_loops=...)`` says (``"wait"``: at
    the first call, whatever the work)."""
    loop.calls += CALLS_BEFORE_COMPILE if repeated else 1
    loop.work += elements * loop.ninstr * (CALLS_BEFORE_COMPILE if repeated else 1)
    how = get_config().cpu_loops
    if how == "off" or loop.state != "new" or how == "background" and (
            loop.calls < CALLS_BEFORE_COMPILE or loop.work < WORK_BEFORE_COMPILE):
        return
    if not numba_installed():
        return
    with loop.lock:
        if loop.state != "new":
            return
        loop.state = "compiling"
    if how == "wait":
        _build(loop, vm)
    else:
        from .. import _compile_thread
        _compile_thread.submit(lambda: _build(loop, vm), wait_at_exit=False)


def _build(loop: LoopPlan, vm: Any) -> None:
    try:
        for k, run in enumerate(loop.runs):
            address, keep = _compile(run.source)
            vm.set_loop(k, address, run.operands, run.itemsizes, keep)
    except Exception as exc:    # noqa: BLE001 - the instructions stay: same values, slower
        loop.state, loop.error = "failed", f"{type(exc).__name__}: {exc}"
        return
    loop.state = "set"
