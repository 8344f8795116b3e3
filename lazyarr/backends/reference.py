"""The reference backend: runs a program op by op with NumPy (or CuPy).

Eager mode calls :func:`apply` op by op: its results are NumPy's (CuPy's) by
construction. :class:`ReferenceBackend` runs lazy programs (lazy mode with the backend pinned
to ``reference``, and what a fused backend cannot compile): the same calls, except that the
float reductions follow lazyarr's rules for lazy mode (``reduction_rules``: float64
accumulation, IEEE signed zeros of min/max), as the fused backends' kernels do.
"""
from __future__ import annotations

import functools
import threading
import warnings
from types import ModuleType
from typing import Any

import numpy as np
from numpy.exceptions import ComplexWarning

from .._devices import from_host
from .._devices import xp as xp_for
from .._plan import InputInfo, Kernel, Plan
from .._program import Instr, Lowered
from .._registry import OPS
from . import fp_errors, numpy_methods, reduction_rules
from .cuda import templates as cuda_templates


@functools.cache
def _functions(xp: ModuleType) -> dict[str, Any]:
    """op name -> the library function (``np.add`` or ``cupy.add``). CuPy's table leaves out
    the ops that run on the host there (:data:`CUPY_ON_HOST`): CuPy lacks some of them
    (``spacing``), and those it has are not used."""
    table = {}
    for op in OPS.values():
        if op.kind in ("elementwise", "output", "reduction", "generator"):
            if xp.__name__ == "numpy":
                table[op.name] = op.numpy_value if op.kind == "output" else op.numpy
            elif op.name not in CUPY_ON_HOST and op.kind != "generator":
                table[op.name] = getattr(xp, op.numpy.__name__)
    return table


class _Messages:
    """Where NumPy writes the floating-point messages of a call under ``np.errstate`` ``log``
    mode (``"Warning: overflow encountered in add\n"``): the list of this thread's innermost
    :func:`apply`."""

    def write(self, text: str) -> None:
        _calls.lines.append(text)


_MESSAGES = _Messages()
_calls = threading.local()
# NumPy's error state is a context variable holding an "extobj"; ``np.errstate`` makes one and
# sets it (~1.6 µs a call, a quarter of an eager op on 5,000 elements). :func:`apply` sets a
# "log" one made once per error state it is entered from (~0.3 µs). Private NumPy names (numpy
# is pinned below 2.5 in pyproject.toml; tests/test_fp_errors.py checks this path is the one
# taken): without them, ``np.errstate``.
_EXTOBJ = fp_errors.ERROR_STATE
_MAKE_EXTOBJ = getattr(np._core.umath, "_make_extobj", None)
_logging: tuple[Any, Any] = (object(), None)    # (an error state, its "log" twin)


def _log_state() -> Any:
    """The current error state with every error written to :data:`_MESSAGES` (the fields
    ``all``/``call`` do not name, as ``bufsize``, are the current state's)."""
    global _logging
    current = _EXTOBJ.get()
    if _logging[0] is not current:
        _logging = (current, _MAKE_EXTOBJ(all="log", call=_MESSAGES))
    return _logging[1]


def apply(xp: ModuleType, op: str, arg: Any, operands: list[Any], lazy_rules: Any = None) -> Any:
    """Apply one op to materialized operands (arrays or NumPy scalars). ``lazy_rules``: None
    for NumPy's own result (eager mode), or the op's result dtype to apply lazy mode's
    reduction rules.

    NumPy's floating-point errors are taken as its messages (``np.errstate`` ``log`` mode)
    and handled after the call as the caller's error state says, naming the user's line
    (``fp_errors.report_messages``): NumPy's own warning would name this module's line, which
    is no line of the user's (eager mode on arrays past ``eager_max_size``)."""
    if xp.__name__ != "numpy":
        return _apply(xp, op, arg, operands, lazy_rules)
    outer, lines = getattr(_calls, "lines", None), []
    _calls.lines = lines
    try:
        if _EXTOBJ is not None and _MAKE_EXTOBJ is not None:
            token = _EXTOBJ.set(_log_state())
            try:
                result = _apply(xp, op, arg, operands, lazy_rules)
            finally:
                _EXTOBJ.reset(token)
        else:
            with np.errstate(all="log", call=_MESSAGES):
                result = _apply(xp, op, arg, operands, lazy_rules)
    finally:
        _calls.lines = outer
    if lines:
        fp_errors.report_messages(lines)
    return result


def _apply(xp: ModuleType, op: str, arg: Any, operands: list[Any], lazy_rules: Any) -> Any:
    if xp.__name__ != "numpy" and _host_step(op, arg, operands):
        # back to the GPU keeping the sign of a 0-d zero (_devices.asarray says why)
        return from_host(xp, np.asarray(apply(np, op, arg, [on_host(a) for a in operands], lazy_rules)))
    opdef = OPS[op]
    fn = _functions(xp).get(op)
    if opdef.kind == "cast":
        with warnings.catch_warnings():   # complex -> real: _build.astype warned at the line
            warnings.simplefilter("ignore", ComplexWarning)
            return xp.asarray(operands[0]).astype(arg)
    if op in ("real", "imag"):        # a node's value owns its memory (NumPy's part is a view
        # of the operand, here a temporary); .real/.imag become views through _views.part
        return xp.array(fn(operands[0]), copy=True)
    assert fn is not None, op       # every elementwise op and reduction has a library function
    if opdef.kind == "reduction":
        if lazy_rules is not None and op in ("mean", "var", "std") and _empty_slices(arg, operands[0]):
            # lazy mode gave NumPy's warnings of these at the line that wrote the reduction
            # (_build._warn_empty_slices): NumPy's own, here, would repeat them
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)
                return _reduce(xp, op, arg, operands[0], lazy_rules, fn)
        return _reduce(xp, op, arg, operands[0], lazy_rules, fn)
    return fn(*operands)


def _reduce(xp: ModuleType, op: str, arg: Any, a: Any, lazy_rules: Any, fn: Any,
            kw: dict[str, Any] | None = None) -> Any:
    """A reduction, under lazy mode's rules when ``lazy_rules`` (the result dtype) is given.
    ``kw``: ``reduction_kwargs(op, arg)`` if made already (not changed here)."""
    if kw is None:
        kw = reduction_kwargs(op, arg)
    if lazy_rules is not None and op in _RULED:
        ruled = reduction_rules.reduce(xp, op, kw, a, lazy_rules)
        if ruled is not None:
            return ruled
    if xp.__name__ != "numpy" and (numpy_methods.needs_numpy_steps(op, arg[2]) or
                                   op in ("var", "std") and _empty_slices(arg, a)):
        # (no degrees of freedom: NumPy divides by zero, to inf or NaN; CuPy's var gives NaN)
        return _numpy_steps(xp, op, arg, a)
    return fn(a, **kw)


def _empty_slices(arg: Any, a: Any) -> bool:
    """Whether a mean/var/std reduces slices of at most ``ddof`` elements (none for a mean)."""
    axes, _, _, ddof = arg
    count = 1
    for i in range(a.ndim) if axes is None else axes:
        count *= a.shape[i]
    return count <= (ddof or 0)


_RULED = reduction_rules.ACCUMULATING | {"min", "max"}


#: elementwise ops that eager mode on the GPU runs on the host with NumPy's loops, not with CuPy:
#: CuPy lacks some of them (``spacing``) and the values of the others are not checked against
#: NumPy's (real/imag are only ever complex steps, decided below). Lazy mode computes them in
#: its fused kernels (cuda/templates.py); what has no template there runs on the host too.
CUPY_ON_HOST = frozenset({"fmod", "copysign", "nextafter", "spacing", "heaviside", "float_power",
                          "logaddexp", "logaddexp2", "deg2rad", "rad2deg", "signbit",
                          "ldexp", "frexp_mantissa", "frexp_exponent", "modf_fraction",
                          "modf_integral"}) | \
    cuda_templates.RUN_ON_HOST


def _host_step(op: str, arg: Any, operands: list[Any]) -> bool:
    """Whether an op runs on the host with NumPy's loops on the GPU (docs/not-supported.rst):
    an op that reads or makes complex values, CuPy's complex functions not being NumPy's
    (complex division by zero gives NaN where NumPy gives inf, complex64 subnormals are
    flushed to zero, ``clip`` has no complex loop, transcendentals differ by ulps), and an
    elementwise op of :data:`CUPY_ON_HOST` (``fmod``, ``logaddexp``, ...), whose CuPy
    values are not checked against NumPy's."""
    opdef = OPS[op]
    if op in CUPY_ON_HOST or opdef.kind == "generator":
        return True
    if op == "power" and _negative_integer_exponent(operands):
        return True
    if any(_dtype_of(a).kind == "c" for a in operands):
        return True
    target = arg if opdef.kind == "cast" else arg[2] if opdef.kind == "reduction" else None
    return target is not None and np.dtype(target).kind == "c"


def _dtype_of(a: Any) -> np.dtype:
    """An operand's dtype: an array's, or a Python number's own (NumPy's default for it)."""
    dtype = getattr(a, "dtype", None)
    return np.dtype(type(a)) if dtype is None else dtype


def _negative_integer_exponent(operands: list[Any]) -> bool:
    """Whether an integer power meets a negative exponent, where NumPy's loop raises
    ValueError and CuPy's gives 0 (then NumPy's loop runs, on the host). An array exponent
    is tested on the device (a reduction and a copy of its answer)."""
    base, exponent = operands
    if _dtype_of(base).kind not in "iub" or _dtype_of(exponent).kind != "i":
        return False
    if isinstance(exponent, (int, np.integer)):
        return exponent < 0
    return bool((exponent < 0).any())


def on_host(a: Any) -> Any:
    """A device array's values in host memory (NumPy values as they are)."""
    get = getattr(a, "get", None)
    return get() if get is not None else a


def _numpy_steps(xp: ModuleType, op: str, arg: Any, a: Any) -> Any:
    """mean/var/std with a dtype= that CuPy handles differently, the way NumPy computes them
    (``numpy_methods.needs_numpy_steps`` says which)."""
    axes, keepdims, dtype, ddof = arg
    if op == "mean":
        return numpy_methods.mean(xp, a, axes, keepdims, dtype)
    return getattr(numpy_methods, op)(xp, a, axes, keepdims, dtype, ddof)


def reduction_kwargs(op: str, arg: Any) -> dict[str, Any]:
    """The NumPy keyword arguments of a reduction node's static ``arg``."""
    axes, keepdims, dtype, ddof = arg
    opdef = OPS[op]
    if opdef.takes_axis_tuple:
        kw: dict[str, Any] = {"axis": axes, "keepdims": keepdims}
    else:
        kw = {"axis": None if axes is None else axes[0], "keepdims": keepdims}
    if opdef.takes_dtype and dtype is not None:
        kw["dtype"] = dtype
    if opdef.takes_ddof:
        kw["ddof"] = ddof
    return kw


def _last_uses(instrs: tuple[Instr, ...]) -> list[int]:
    last = list(range(len(instrs)))
    for n, ins in enumerate(instrs):
        for a in ins.args:
            last[a] = n
    return last


class ReferenceBackend:
    def __init__(self, xp: ModuleType) -> None:
        self.xp = xp
        self.name = "reference" if xp.__name__ == "numpy" else f"reference-{xp.__name__}"

    def run(self, lowered: Lowered) -> Any:
        instrs = lowered.program.instrs
        last = _last_uses(instrs)
        values: list[Any] = [None] * len(instrs)
        for n, ins in enumerate(instrs):
            if ins.op == "input":
                values[n] = lowered.inputs[ins.arg[0]]
            elif ins.op == "counter":
                values[n] = lowered.inputs[ins.arg[0]].values(self.xp)
            elif ins.op == "scalar":
                values[n] = lowered.scalars[ins.arg]
            else:
                values[n] = apply(self.xp, ins.op, ins.arg, [values[a] for a in ins.args],
                                  lazy_rules=ins.dtype)
                for a in set(ins.args):       # drop intermediates after their last use
                    if last[a] == n:
                        values[a] = None
        return self.xp.asarray(values[-1])

    def bind(self, lowered: Lowered, checked: bool = False) -> Any:
        """``run`` for later calls on other buffers: a reduction of an input alone (a leaf's
        min/max/any/all/arg*, which the cpu-fused backend hands to NumPy's loop) calls
        :func:`_reduce` directly with its keyword arguments made once (the interpreter's
        loop and :func:`apply`'s checks cost ~5 µs of a ~100 µs ``max``); anything else
        runs through :meth:`run`."""
        instrs = lowered.program.instrs
        if self.xp.__name__ != "numpy" or len(instrs) != 2 or instrs[0].op != "input" \
                or OPS[instrs[1].op].kind != "reduction" or instrs[1].op in ("mean", "var", "std"):
            from ._bind import unbound
            return unbound(self, lowered)
        ins, xp = instrs[1], self.xp
        op, arg, result, fn = ins.op, ins.arg, ins.dtype, _functions(xp)[ins.op]
        kw = reduction_kwargs(op, arg)
        return lambda buffers: xp.asarray(_reduce(xp, op, arg, buffers[0], result, fn, kw))

    def plan(self, lowered: Lowered) -> Plan:
        """One library call per op; each reads its array operands and writes its result."""
        import numpy as np

        instrs = lowered.program.instrs
        nbytes: list[int] = []
        for ins in instrs:  # sizes: broadcast of operands (reductions shrink; good enough)
            if ins.op in ("input", "counter"):
                nbytes.append(lowered.inputs[ins.arg[0]].nbytes)
            elif ins.op == "scalar":
                nbytes.append(0)
            else:
                size = max((nbytes[a] // max(instrs[a].dtype.itemsize, 1) for a in ins.args), default=0)
                nbytes.append(size * ins.dtype.itemsize)
        root_bytes = int(np.prod(lowered.shape)) * instrs[-1].dtype.itemsize
        nbytes[-1] = root_bytes
        kernels, read, written = [], 0, 0
        xpname = self.xp.__name__
        for n, ins in enumerate(instrs):
            if ins.op in ("input", "scalar", "counter"):
                continue
            read += sum(nbytes[a] for a in ins.args)
            written += nbytes[n]
            args = ", ".join(f"%{a}" for a in ins.args)
            call = f"%{n} = {xpname}.{_functions(self.xp)[ins.op].__name__}({args})" \
                if ins.op in _functions(self.xp) else f"%{n} = %{ins.args[0]}.astype({ins.arg})"
            kernels.append(Kernel(f"{xpname}.{ins.op}", call))
        inputs = [InputInfo.of(b) for b in lowered.inputs]
        return Plan(self.name, lowered.device, lowered.program, kernels, inputs, read, written,
                    ["op by op: every intermediate is written to and read back from memory"])


@functools.cache
def for_device(device: str) -> ReferenceBackend:
    return ReferenceBackend(xp_for(device))
