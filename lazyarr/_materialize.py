"""Materialization and planning of a node: its buffer, computed by the device's backend, or
the backend's plan of computing it (``la.explain``), asked with the device and the mode as
arguments.

``la.explain(fn)`` plans the *first materialization inside a call* (a reduction, which runs as
soon as it is written, or a function that materializes internally). Nothing may run, so the
call has to stop at that point, wherever it is on the stack: :func:`first_materialization`
sets one switch (a context variable, so other threads are unaffected) that makes
:func:`materialize` raise :class:`FirstMaterialization` with the pending node instead of
computing it; the exception unwinds the user's function and explain plans the node like any
other (:func:`plan`). The switch is read in two places only: here, and by the 0-d shortcut of
lazyarr/_build.py, which must not compute a scalar while a call is being planned.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import _devices, _node, _program
from ._config import get_config
from ._node import Node
from ._plan import Plan
from ._program import lower, lower_cached
from .backends import select


def plan(node: Node, device: str, mode: str) -> Plan:
    """The plan of the backend of ``device`` and ``mode`` for materializing ``node`` (nothing
    runs; ``device`` need not be the data's: planning for cuda is code generation only)."""
    return select(device, mode).plan(lower(node))


def materialize(node: Node) -> Any:
    """The node's buffer, computing it (and memoizing it on the node) if needed."""
    if node.data is None:
        if node.op == "scalar":   # a LazyArray over a constant (``la.astype(np.int8(3), ...)``)
            return _devices.asarray(node.device or "cpu", node.arg)
        if _stopping.get():
            raise FirstMaterialization(node)
        if node.op == "compress":  # ``X[m]``: NumPy's (CuPy's) index (lazyarr/_masked.py)
            _program.compute_compress(node)
            return node.data
        try:
            lowered = lower_cached(node)
            if node.data is not None:   # another thread computed it meanwhile
                return node.data
            data = select(node.device or "cpu", get_config().mode).run(lowered)
        except MemoryError as exc:
            raise _out_of_memory(node, exc) from exc
        _node.materialized(node, data)
        tape = _tape.get()
        if tape is not None:      # la.jit is tracing: this kernel is one step of the replay
            tape.step(lowered, data)
    return node.data


def materialize_into(node: Node, out: Any, consume: Any = None, fresh: bool = False) -> bool:
    """Compute the pending ``node`` straight into the memory ``out`` (``x op= y``), where the
    backend can do that safely; False, with nothing written, otherwise. The node is not
    memoized: ``out`` belongs to the array written, not to the expression.

    ``consume(out, r0, r1)``, if given, is called on the rows ``[r0, r1)`` of dim 0 of ``out``
    once they hold their values, in order, covering all of them: overlapped with the kernel
    where the backend can (``run_into_pipelined``: new C-contiguous memory of the caller's),
    else once on the whole of ``out`` after it. Not called when False is returned.

    ``fresh``: ``out`` is new memory of the caller's that nothing else holds (no input can
    overlap it): the backend may skip the checks that guard a write into memory an input
    reads (cuda's ``run_into``)."""
    if node.data is not None or node.op == "scalar" or _stopping.get():
        return False
    backend = select(node.device or "cpu", get_config().mode)
    run_into = getattr(backend, "run_into", None)
    if run_into is None:
        return False
    try:
        lowered = lower_cached(node)
        pipelined = getattr(backend, "run_into_pipelined", None)
        if consume is not None and pipelined is not None and pipelined(lowered, out, consume):
            return True
        if not run_into(lowered, out, fresh=fresh):
            return False
    except MemoryError as exc:
        raise _out_of_memory(node, exc) from exc
    if consume is not None:
        consume(out, 0, out.shape[0])
    return True


def materialize_masked(node: Node, mask: Any, out: Any, count: int) -> bool:
    """Compute the pending elementwise ``node`` (of ``out``'s shape and dtype) on the True
    lanes of the computed bool array ``mask`` only, straight into ``out`` there (a masked
    update, lazyarr/_masked.py: ``count`` True lanes); False, with nothing written, where the
    backend has no masked run for it (only the CPU's fused backend has one)."""
    if node.data is not None or node.op == "scalar" or _stopping.get():
        return False
    backend = select(node.device or "cpu", get_config().mode)
    run = getattr(backend, "run_masked", None)
    if run is None:
        return False
    try:
        return bool(run(lower_cached(node), mask, out, count))
    except MemoryError as exc:
        raise _out_of_memory(node, exc) from exc


# ----------------------------------------------------------------------------- explain(fn)
# True while explain() runs a function to find its first materialization.
_stopping: contextvars.ContextVar[bool] = contextvars.ContextVar("lazyarr_stop_at_materialization",
                                                                 default=False)


class FirstMaterialization(Exception):
    """Raised by ``materialize`` while :func:`first_materialization` runs a function: the
    pending node that would have been computed."""

    def __init__(self, node: Node) -> None:
        super().__init__("lazyarr: stopped at the first materialization (la.explain)")
        self.node = node


def first_materialization(fn: Callable[[], Any]) -> Node:
    """Call ``fn()`` up to its first materialization (nothing is computed) and return the node
    it would have materialized; ValueError if ``fn`` returns without materializing anything."""
    with _deferring(_stopping, True):
        try:
            fn()
        except FirstMaterialization as stopped:
            return stopped.node
    raise ValueError("the function given to explain() materialized nothing")


def stopping() -> bool:
    """Whether a call is being run to its first materialization (nothing may compute)."""
    return _stopping.get()


# ----------------------------------------------------------------------------- la.jit's tape
# The tape of the la.jit trace running in this context (lazyarr/_jit.py), or None. The engine
# reports to it what a replay must repeat: each kernel run (here), each view of an array's
# memory (lazyarr/_views.py), and what a replay cannot repeat: writes (lazyarr/_writes.py)
# and values read into Python (lazyarr/_array.py).
_tape: contextvars.ContextVar[Any] = contextvars.ContextVar("lazyarr_jit_tape", default=None)


def tape() -> Any:
    """The la.jit tape recording in this context, or None."""
    return _tape.get()


#: Not empty while a call is explained or traced, in any thread: the 0-d shortcuts of scalar
#: values (lazyarr/_value.py) test it before :func:`computing_is_deferred` (two context
#: variable reads and a call, ~0.1 µs of an operator's ~0.3 µs).
DEFERRING: list[None] = []


@contextlib.contextmanager
def _deferring(var: contextvars.ContextVar[Any], value: Any) -> Iterator[None]:
    token = var.set(value)
    DEFERRING.append(None)
    try:
        yield
    finally:
        DEFERRING.pop()
        var.reset(token)


def tracing(tape: Any) -> contextlib.AbstractContextManager[None]:
    """Record on ``tape`` (la.jit's trace, lazyarr/_jit.py) inside the ``with``."""
    return _deferring(_tape, tape)


def computing_is_deferred() -> bool:
    """Whether only :func:`materialize` may compute now: while ``la.explain`` runs a call
    (nothing may compute) or ``la.jit`` traces one (every kernel must be a step of its
    tape). The 0-d shortcuts, which compute with NumPy on the spot, then build nodes."""
    return _stopping.get() or _tape.get() is not None


def small_now(size: int) -> bool:
    """Whether work on ``size`` elements of computed CPU memory runs at once in lazy mode, as
    the small operators do (docs/guide.rst, "Small arrays"): at most ``eager_max_size``
    elements (0 turns it off, also for empty arrays) and nothing explained or traced."""
    limit = get_config().eager_max_size
    return size <= limit and limit != 0 and not (DEFERRING and computing_is_deferred())


def small_computed(node: Node) -> Any:
    """``node``'s buffer where it is a computed CPU array (a NumPy array) that is
    :func:`small_now`: an operand a function may hand to NumPy's own call at once, as the
    small operators do. None otherwise."""
    data = node.data
    if type(data) is not np.ndarray or node.device != "cpu" or not small_now(data.size):
        return None
    return data


def _out_of_memory(node: Node, exc: MemoryError) -> MemoryError:
    """The library's MemoryError (it names the allocation) plus what was being computed
    and what to do about it. The process can carry on: nothing was left half-built."""
    nbytes = math.prod(node.shape) * node.dtype.itemsize
    device = node.device or "cpu"
    free = " (and cupy.get_default_memory_pool().free_all_blocks())" if device == "cuda" else ""
    return MemoryError(f"{exc}\nlazyarr: out of {device} memory while computing a {node.shape} "
                       f"{node.dtype} result ({nbytes:,} bytes; the allocation that failed is "
                       "named above). Free arrays you no longer need"
                       f"{free}, or work on smaller pieces of the data.")
