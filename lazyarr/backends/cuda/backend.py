"""The cuda backend: one fused kernel launch per materialization, launched through CuPy.

Per call: look the (program, input layout) pair up in a dictionary; on a hit, allocate the
output, build the argument tuple and launch the cached CuPy ``Function`` (no Numba dispatcher,
no rendering). On a miss: :func:`render.analyze` + :func:`render.render`, then
:func:`compile.load_kernel` (memory cache, disk cache, or Numba compile). A kernel that must be
compiled compiles on the background thread while its first calls run op by op
(:mod:`.first_calls`), unless ``la.config(compile="wait")``.
"""
from __future__ import annotations

import concurrent.futures
import functools
import math
import sys
import weakref
from weakref import getweakrefcount
from dataclasses import dataclass
from sys import getrefcount
from typing import Any

import numpy as np

from ... import _compile_thread
from ..._config import get_config
from ..._devices import asarray as asarray_on
from ..._node import overlaps_any
from ..._plan import InputInfo, Kernel, Plan
from ..._program import Instr, Lowered, Program
from ..._shapes import broadcast_shapes
from ..._views import EXACT_REFCOUNTS
from .. import numpy_methods, reduction_rules
from . import first_calls, flags, stencil
from . import render as R
from .compile import load_cached, load_kernel
from ..._counters import CounterMap
from .params import PER_CALL, Param, Role
from .templates import RUN_ON_HOST, select
from ..._memo import bounded_insert

#: kernel entries kept per backend (one per program and input layout): past this, the oldest
#: goes first (a loop over ever-new shapes made one per shape without a bound)
MAX_ENTRIES = 8192

_KIND_NOTES = {
    "map": "elementwise: one thread per element (grid-stride, {u} elements in flight per thread)",
    "full": "full reduction in ONE launch: per-thread accumulators -> block tree -> per-block "
            "partials; the last block to finish (atomic ticket) combines the partials in block "
            "order. Deterministic: same bits run to run.",
    "rows": "reduction over the innermost axes: {ty} output(s) per block, {tx} lanes (a warp) "
            "along the reduced axes of each, combined by warp shuffles in a fixed order "
            "(deterministic)",
    "cols": "reduction over outer axes: {tx} consecutive outputs per block (coalesced), {ty} lanes "
            "along the reduced axes, fixed-order tree (deterministic)",
}


@functools.cache
def device_info(device_id: int) -> tuple[int, tuple[int, int]]:
    """(multiprocessor count, compute capability) of a CUDA device."""
    import cupy
    dev = cupy.cuda.Device(device_id)
    cc = dev.compute_capability
    return int(dev.attributes["MultiProcessorCount"]), (int(cc[:-1]), int(cc[-1]))


def _current_device_info() -> tuple[int, tuple[int, int]]:
    import cupy
    return device_info(cupy.cuda.runtime.getDevice())


class _Recipe:
    """What a launch takes from its rendered kernel, the same for every input layout: the
    slots of the per-call parameters and the layout parameters that its template evaluates.
    Made once per rendered kernel (``CudaBackend._kernels``): a loop whose shapes change every
    step makes an entry per step, and walked the parameters' roles for each (~5 µs)."""

    __slots__ = ("out_slot", "input_slots", "offset_slots", "scalar_slots", "partials_slot",
                 "counter_slot", "fpe_slot", "acc", "partials_per_block", "layout", "size")

    def __init__(self, rendered: R.Rendered) -> None:
        self.input_slots: list[tuple[int, int]] = []            # (slot, input)
        self.offset_slots: list[tuple[int, int]] = []           # (slot, input): counters
        self.scalar_slots: list[tuple[int, int, Any]] = []      # (slot, scalar position, type)
        self.layout: list[tuple[int, Param]] = []               # (slot, a layout parameter)
        self.acc: np.dtype | None = None                        # full: the partials' dtype
        self.partials_per_block = 1                             # (a complex one: its parts)
        self.out_slot = self.partials_slot = self.counter_slot = self.fpe_slot = -1
        self.size = len(rendered.params)
        for slot, param in enumerate(rendered.params):
            role = param.role
            if role is Role.OUTPUT:
                self.out_slot = slot
            elif role is Role.INPUT:
                self.input_slots.append((slot, param.input))
            elif role is Role.COUNTER_OFFSET:
                self.offset_slots.append((slot, param.input))
            elif role is Role.SCALAR:
                self.scalar_slots.append((slot, param.input, _scalar_type(param)))
            elif role is Role.PARTIALS:
                self.partials_slot, self.acc = slot, param.dtype
                self.partials_per_block = max(1, param.index)
            elif role is Role.COUNTER:
                self.counter_slot = slot
            elif role is Role.FPE:
                self.fpe_slot = slot
            if role not in PER_CALL:
                self.layout.append((slot, param))


def _counts(a: Any) -> tuple[Any, ...]:
    """The references to a kept array and, for a CuPy array, to its ``MemoryPointer`` and its
    memory (every view, ``ndarray(memptr=...)`` and pointer into it holds one of the three),
    and the array's weak references (a NumPy array's: its writeable flag too)."""
    if type(a) is np.ndarray:           # (the simulated device's: a view or export holds it;
        return getweakrefcount(a), getrefcount(a), a.flags.writeable    # read-only: a flag)
    d = a.data
    return getweakrefcount(a), getrefcount(a), getrefcount(d), getrefcount(d.mem)


def _claimed(kept: tuple[Any, Any]) -> tuple[Any, tuple[Any, ...]]:
    """The kept array, claimed (a reference held here first: two threads claiming it at once
    both count the other's), and its :func:`_counts`."""
    a = kept[1]
    return a, _counts(a)


class _Pointer:
    __slots__ = ("mem",)


class _Array:
    __slots__ = ("data", "__weakref__")


def _stand_in() -> _Array:
    """CuPy's array -> ``MemoryPointer`` -> memory chain, each held once."""
    a = _Array()
    a.data = _Pointer()
    a.data.mem = object()
    return a


#: :func:`_claimed`'s counts of arrays held by nothing but their kept tuple (NumPy's, and a
#: stand-in of CuPy's): measured, as interpreters count differently. None where counts are
#: not exact (CPython 3.14's borrowed references, a free-threaded build): nothing is reused.
_SOLE = (_claimed((None, np.empty(())))[1], _claimed((None, _stand_in()))[1]) \
    if EXACT_REFCOUNTS and getattr(sys, "_is_gil_enabled", lambda: True)() else None


def _sole(kept: tuple[Any, Any]) -> Any:
    """``kept``'s array when nothing but ``kept`` refers to it or its memory (no user's
    result, view, ``.data``, export: DLPack and the CUDA array interface's consumers hold the
    array; no pending expression; no lazyarr record: ``mark_read_only``, a write through hold a
    weak reference), else None. A raw pointer kept without its array is as unsafe as after
    CuPy's pool reused the memory."""
    a, counts = _claimed(kept)
    return a if _SOLE is not None and counts == _SOLE[len(counts) == 4] else None


class _Entry:
    """A compiled launch for one (program, input layout): the function and its argument template.

    The template holds every layout parameter's value (strides, sizes: fixed for the layout);
    the slots of the per-call parameters are recorded once (:class:`_Recipe`, shared by the
    entries of one rendered kernel), so a call only fills those."""

    __slots__ = ("fn", "geo", "grid", "block", "acc", "template", "out_slot", "input_slots", "offset_slots",
                 "scalar_slots", "partials_slot", "counter_slot", "fpe_slot", "sites",
                 "partials_per_block", "scratch_bytes", "held", "constants", "members", "kept")

    def __init__(self, fn: Any, geo: R.Geometry, rendered: R.Rendered, sms: int,
                 recipe: _Recipe | None = None) -> None:
        if recipe is None:
            recipe = _Recipe(rendered)
        self.fn, self.geo = fn, geo
        self.grid, self.block = (geo.grid(sms),), (geo.spec.block,)
        # None in the per-call slots (filled by each call), the layout values in the others
        self.template: list[Any] = [None] * recipe.size
        for slot, param in recipe.layout:
            self.template[slot] = param.layout_value(geo)
        self.out_slot, self.input_slots, self.offset_slots = \
            recipe.out_slot, recipe.input_slots, recipe.offset_slots
        self.scalar_slots, self.partials_slot, self.counter_slot, self.fpe_slot = \
            recipe.scalar_slots, recipe.partials_slot, recipe.counter_slot, recipe.fpe_slot
        self.acc, self.partials_per_block = recipe.acc, recipe.partials_per_block
        # a full reduction's per-block partials (_fill: the stream's scratch, at least this)
        self.scratch_bytes = 0 if self.acc is None else \
            self.grid[0] * self.partials_per_block * self.acc.itemsize
        self.sites = rendered.fpe_sites                         # checked: the op sites' names
        self.held: flags.Held | None = None                     # checked: its shared slot
        self.constants: Any = None                              # what the template points into
        # a stencil kernel: where it assumes its inputs lie (stencil.Stencil.members)
        self.members = geo.spec.stencil.members if geo.spec.stencil is not None else None
        # a 0-d output: (where it was made, the array), reused while only this refers to it
        self.kept: tuple[Any, Any] | None = None


class _Through:
    """A write through a temporary kept for the next step (``CudaBackend._through_temporary``):
    the value's program, its buffers (weakly), scalars and error-check choice, the memory
    written (weakly), the stream, the temporary and both kernels. A step replays it when all
    of these are the same (the buffers and the memory written: the same objects, as a
    stencil's kept views are), so the launches read what they read before, from the memory
    as it is now. Only the temporary is held: the arrays read and written go when their
    owner does, and the entry with them (``CudaBackend._keep``).

    Other buffers of the same layouts (floyd_warshall's ``path[:] = np.minimum(path[:],
    np.add.outer(path[:, k], path[k, :]))``: a new column and row each step) replay it too
    where one of them overlaps the memory written (``layouts``): the value's entry is the one
    their key finds (the program and the inputs' shapes and strides; not a stencil's, which
    depends on the inputs' addresses too), and the temporary is of the value's shape and
    dtype. Before 2026-12-07c such a step allocated a new temporary, looked both kernels up
    and kept a new write."""

    KEPT = 8            # writes kept at once (each holds a temporary the size of its value)
    __slots__ = ("program", "inputs", "layouts", "scalars", "out", "checked", "stream", "temp",
                 "value_entry", "copy_entry")

    def __init__(self, lowered: Lowered, out: Any, checked: bool, stream: int, temp: Any,
                 value_entry: _Entry, copy_entry: _Entry) -> None:
        self.program, self.scalars = lowered.program, list(lowered.scalars)
        self.inputs = [weakref.ref(a) for a in lowered.inputs]  # (TypeError: not kept)
        self.layouts = [(a.shape, a.strides) for a in lowered.inputs]
        self.out, self.checked, self.stream, self.temp = out, checked, stream, temp
        self.value_entry, self.copy_entry = value_entry, copy_entry

    def replays(self, lowered: Lowered, out: Any, checked: bool, stream: int) -> bool:
        """Whether this write replays for ``lowered`` into ``out``, the same buffers read."""
        return self._matches(lowered, out, checked, stream, True)

    def replays_like(self, lowered: Lowered, out: Any, checked: bool, stream: int) -> bool:
        """Whether it replays for other buffers of the same layouts (the caller has found
        that one overlaps ``out``: the value goes through a temporary anyway)."""
        return self._matches(lowered, out, checked, stream, False)

    def _matches(self, lowered: Lowered, out: Any, checked: bool, stream: int,
                 same_buffers: bool) -> bool:
        inputs, scalars = lowered.inputs, lowered.scalars
        if self.out() is not out or lowered.program is not self.program \
                or checked is not self.checked or stream != self.stream \
                or len(inputs) != len(self.inputs) or len(scalars) != len(self.scalars):
            return False
        if same_buffers:
            for a, ref in zip(inputs, self.inputs):
                if ref() is not a:
                    return False
        elif self.value_entry.members is not None \
                or self.layouts != [(a.shape, a.strides) for a in inputs]:
            return False
        for a, b in zip(scalars, self.scalars):     # (NumPy scalars: the same bits)
            if a is not b and (a.dtype != b.dtype or a.tobytes() != b.tobytes()):
                return False
        return True


@functools.lru_cache(maxsize=None)
def _copy_program(dtype: np.dtype, ndim: int) -> Program:
    """The program whose value is its one input: a copy kernel (run_into's second pass)."""
    return Program((Instr("input", dtype, (), (0, ndim)),))


class CudaBackend:
    """Launches through CuPy on the GPU. The methods under "the device" are all that touch it:
    the simulated device (:mod:`.simulate`) overrides them and shares everything else."""

    name = "cuda"
    shuffles = True      # warp primitives: shuffles in row reductions, the loads' syncwarp (the simulator has none)

    def __init__(self) -> None:
        self._xp: Any = None                    # self.xp(), kept by run's hot path
        self._entries: dict[Any, _Entry] = {}
        self._later: dict[Any, _Later] = {}             # key -> a kernel compiling in the background
        self._buffers: dict[Any, tuple[Any, Any]] = {}
        self._through: dict[int, _Through] = {}     # id(out) -> a write through a temporary
        # (program, spec, checked, compute capability) -> (rendered source, kernel, recipe): the entry
        # of another shape with the same launch spec (a loop whose slices shrink every step,
        # covariance's ``data[:, i] @ data[:, i:M] / c``) reuses them instead of rendering the
        # source again (~0.5 ms of Python) and hashing it for the kernel cache's key
        self._kernels: dict[Any, tuple[R.Rendered, Any, _Recipe]] = {}

    # ------------------------------------------------------------------ the device
    def xp(self) -> Any:
        """The array module of the device's buffers."""
        import cupy
        return cupy

    def device_info(self) -> tuple[int, tuple[int, int]]:
        """(multiprocessor count, compute capability) of the current device."""
        return _current_device_info()

    def load(self, rendered: R.Rendered, cc: tuple[int, int]) -> Any:
        """The launchable kernel for a rendered source."""
        return load_kernel(rendered, cc)

    def loaded(self, rendered: R.Rendered, cc: tuple[int, int]) -> Any:
        """The launchable kernel if it needs no compile (loaded already, or in the disk
        cache), else None."""
        return load_cached(rendered, cc)

    def compile_later(self, rendered: R.Rendered, cc: tuple[int, int]) -> Any:
        """A future of :meth:`load` run on the compile thread, on this thread's device."""
        import cupy
        device = cupy.cuda.runtime.getDevice()

        def build() -> Any:
            with cupy.cuda.Device(device):
                return self.load(rendered, cc)
        return _compile_thread.submit(build)

    def launch(self, entry: _Entry, args: tuple) -> None:
        entry.fn(entry.grid, entry.block, args)

    def prepare_constants(self, entry: _Entry) -> None:
        """Make the template's layout constants (strides, sizes, divisors: int64 values fixed
        for the entry) launch arguments once: CuPy's launch turns each argument into a pointer
        to its value, a new ``CScalar`` per number per call (~0.3 µs each; a 2-d stencil has
        14 of them), and passes a ``CPointer`` as it is. The values live in one int64 array
        the entry keeps; a launch copies them (cuLaunchKernel copies its parameters)."""
        from cupy.cuda.function import CPointer
        slots = [k for k, v in enumerate(entry.template) if v is not None]
        if not slots:
            return
        values = np.array([entry.template[k] for k in slots], np.int64)
        base = values.ctypes.data
        for i, k in enumerate(slots):
            entry.template[k] = CPointer(base + i * values.itemsize)
        entry.constants = values

    def launch_checked(self, entry: _Entry, args: list[Any]) -> None:
        """A kernel that records floating-point flags: its words are a slot of the stream's
        ring, reported as :mod:`.flags` says (now, or at the next synchronization)."""
        # (the slot is the kernel's, not the entry's: a loop whose shapes change every step,
        # covariance's ``data[:, i] @ data[:, i:M]``, makes an entry per step, and a slot per
        # entry took a new slot, a stack walk for the line, and a synchronization every
        # SLOTS launches: ~8 µs of a ~250 µs step on an H100 host, 2026-12-06f)
        args[entry.fpe_slot], now, entry.held = flags.take(entry.fn, entry.sites, entry.held)
        self.launch(entry, tuple(args))
        if now is not None:
            flags.ring().read(now)

    def usable(self, a: Any) -> Any:
        """Strides that are not whole elements cannot be indexed: copy those (rare)."""
        return _usable(a)

    def _stream_buffers(self, nbytes: int) -> tuple[Any, Any]:
        """Per-(device, stream) scratch for the per-block partials of full reductions and the
        zeroed uint32 ticket counter. Reused: launches on one stream run one after another, and
        every full-reduction kernel leaves the counter at zero again. Grown when needed."""
        import cupy
        key = (cupy.cuda.runtime.getDevice(), cupy.cuda.get_current_stream().ptr)
        bufs = self._buffers.get(key)
        if bufs is None or bufs[0].nbytes < nbytes:
            scratch = cupy.empty(max(nbytes, 1 << 16), np.uint8)
            counter = bufs[1] if bufs is not None else cupy.zeros(1, np.uint32)
            bufs = self._buffers[key] = (scratch, counter)
        return bufs

    # ------------------------------------------------------------------ run
    def run(self, lowered: Lowered) -> Any:
        program = lowered.program
        inputs = lowered.inputs
        # (a kernel without checks under all="ignore"; flags.checking() without its frame)
        checked = flags._decisions().checking
        # (_entry_key, written out: a call more cost this hot path ~0.1-0.25 µs, simulated)
        key: Any = (program, tuple([(a.shape, a.strides) for a in inputs]), checked)
        entry = self._entries.get(key)
        if entry is not None and entry.members is None:
            # a cached kernel (not a stencil's: those check their inputs' shifts below): the
            # hot path checks nothing else (an entry is never made for a program that runs on
            # the host or a fallback reduction's root: their checks below are for a miss)
            xp = self._xp
            if xp is None:
                xp = self._xp = self.xp()
            shape = lowered.shape
            dtype = program.instrs[-1].dtype    # (the root's: ``program.root`` is a property)
            if shape or _SOLE is None:
                # (the array type itself: ``cupy.empty`` is a Python function that calls it)
                out = xp.ndarray(shape, dtype)
            else:
                out = self._output_0d(entry, xp, dtype)
            self._launch(entry, self._fill(entry, _with_scalars(entry, lowered.scalars), inputs, out))
            return out
        xp = self.xp()
        root = program.root
        if entry is not None and not stencil.holds(entry.members, inputs, self.pointer):
            # a stencil's kernel for other shifts: one entry per arrangement of the inputs
            key = (key, stencil.distances(entry.members, inputs, self.pointer))
            entry = self._entries.get(key)
            if entry is not None and entry.members is not None and not stencil.holds(
                    entry.members, inputs, self.pointer):
                entry = key = None
        if entry is None and _runs_on_host(program):    # with NumPy: reference._host_step says why
            from ..reference import for_device, on_host
            host = Lowered(program, [on_host(a) for a in inputs], lowered.scalars,
                           lowered.shape, "cpu")
            return asarray_on("cuda", for_device("cpu").run(host))   # keeps a 0-d -0.0
        if root.op in R.FALLBACK_REDUCTIONS:
            return self._fallback(lowered)
        if entry is None:
            inputs = [self.usable(a) for a in inputs]
            later = self._later.get(key) if key is not None else None
            if later is None:
                geo = R.analyze(program, inputs, addresses=self.addresses)
                if geo.out_size == 0 or geo.work == 0 and geo.spec.kind == "map":
                    return xp.empty(lowered.shape, root.dtype)
                entry = self._compiled(program, geo, checked,
                                       later_key=key if self._may_compile_later(program, geo) else None)
            else:
                entry = self._finished(key, later)
            if entry is None:           # compiling: this call runs op by op
                try:
                    value = first_calls.run(xp, lowered._replace(inputs=inputs), checked)
                except (MemoryError, first_calls.Flushed):
                    # (CuPy's OutOfMemoryError) op by op needs temporaries the kernel does
                    # not, or a float32 value may be one that CuPy flushed: this call waits
                    # for the kernel instead
                    entry = self._compiled_now(key)
                else:
                    self._start_compiles()
                    return value
            if key is not None and all(a is b for a, b in zip(inputs, lowered.inputs)):
                bounded_insert(self._entries, key, entry, MAX_ENTRIES)
        out = xp.empty(lowered.shape, root.dtype)
        self._launch(entry, self._fill(entry, _with_scalars(entry, lowered.scalars), inputs, out))
        return out

    @staticmethod
    def pointer(a: Any) -> int:
        """The address of ``a``'s first element."""
        return a.data.ptr

    def addresses(self, inputs: list[Any]) -> list[tuple[int, Any] | None]:
        """Per input: its first element's address and its allocation (stencil.find), or None
        for what has no memory (a random draw's counters)."""
        return [None if type(a) is CounterMap else (a.data.ptr, a.data.mem) if hasattr(a.data, "ptr")
                else stencil.host_address(a) for a in inputs]

    def _launch(self, entry: _Entry, args: list[Any]) -> None:
        if entry.fpe_slot < 0:
            self.launch(entry, tuple(args))
        else:
            self.launch_checked(entry, args)

    def _compiled(self, program: Program, geo: R.Geometry, checked: bool,
                  later_key: Any = None) -> _Entry | None:
        """The entry of ``program``'s kernel, compiled now if it must be; with ``later_key``,
        None instead of a compile, which then runs on the compile thread (:meth:`_finished`
        takes it)."""
        sms, cc = self.device_info()
        kernel_key = (program, geo.spec, checked, cc)
        known = self._kernels.get(kernel_key)
        if known is not None:
            rendered, kernel, recipe = known
        else:
            rendered = R.render(program, geo.spec, shuffles=self.shuffles, checked=checked)
            if later_key is not None:
                kernel = self.loaded(rendered, cc)
                if kernel is None:
                    self._later[later_key] = _Later(program, geo, rendered, sms, cc)
                    return None
            else:
                try:
                    kernel = self.load(rendered, cc)
                except Exception as exc:
                    raise _compile_error(program, geo, exc) from exc
            recipe = _Recipe(rendered)
            self._kernels[kernel_key] = (rendered, kernel, recipe)
        entry = _Entry(kernel, geo, rendered, sms, recipe)
        self.prepare_constants(entry)
        return entry

    @staticmethod
    def _may_compile_later(program: Program, geo: R.Geometry) -> bool:
        """Whether a call may run op by op while this kernel compiles (first_calls)."""
        return get_config().compile == "background" and geo.work > 0 \
            and first_calls.runs_op_by_op(program)

    def _start_compiles(self) -> None:
        """Start the compiles that the calls before asked for. A call that runs op by op
        starts them after its result: a process's first compile imports Numba (~1 s, much of
        it holding the GIL), which the first result then does not wait for."""
        for later in list(self._later.values()):       # (another thread may add one)
            if later.future is None:
                later.future = self.compile_later(later.rendered, later.cc)

    def _compiled_now(self, key: Any) -> _Entry:
        """The entry of the kernel compiling in the background under ``key``, once compiled."""
        self._start_compiles()
        later = self._later.get(key)
        if later is None:               # (another thread took it: its entry is kept)
            return self._entries[key]
        concurrent.futures.wait([later.future])
        entry = self._finished(key, later)
        assert entry is not None
        return entry

    def _finished(self, key: Any, later: _Later) -> _Entry | None:
        """The entry of a kernel compiled in the background, None while it compiles; a
        compile that failed raises here, as it would have in the call that started it."""
        if later.future is None:
            self._start_compiles()
        if not later.future.done():
            return None
        self._later.pop(key, None)      # (threads finishing the same key: each makes the entry)
        try:
            kernel = later.future.result()
        except Exception as exc:
            raise _compile_error(later.program, later.geo, exc) from exc
        entry = _Entry(kernel, later.geo, later.rendered, later.sms)
        self.prepare_constants(entry)
        return entry

    def run_into(self, lowered: Lowered, out: Any, fresh: bool = False) -> bool:
        """Compute an elementwise program straight into ``out`` (the memory a write selects:
        ``x[1:-1, 1:-1] = value``, ``x op= y``), through its strides: no temporary and no
        copy kernel after it. A value that reads ``out``'s memory (a stencil written into its
        own array) is computed into a temporary first, then copied in by one more kernel of
        this backend, so that every element is read before any is written. False, with
        nothing written, where this does not apply (a reduction, a program run on the host,
        another dtype or shape, a negative or unaligned stride): the caller copies then.

        ``fresh``: ``out`` is new memory of the caller's that nothing else holds (a library
        call's working buffer, ``_fallback.computed_into_new``): no input can overlap it and
        no write through a temporary is kept for it, so a kernel already in the entries is
        launched at once, as ``run``'s hot path does (the entry's key stands for the checks
        below, passed when it was made; only ``out``'s dtype and shape are not in it)."""
        program, root = lowered.program, lowered.program.root
        if fresh:
            inputs = lowered.inputs
            key: Any = (program, tuple([(a.shape, a.strides) for a in inputs]), flags.checking(),
                        out.strides)                        # (_into_entry's key, written out)
            entry = self._entries.get(key)
            if entry is not None and out.dtype == root.dtype and out.shape == lowered.shape:
                self._launch(entry, self._fill(entry, _with_scalars(entry, lowered.scalars), inputs, out))
                return True
        if root.op in R.NATIVE_REDUCTIONS or root.op in R.FALLBACK_REDUCTIONS \
                or _runs_on_host(program) or out.dtype != root.dtype or out.size == 0 \
                or out.shape != lowered.shape \
                or any(st < 0 or st % out.itemsize for st in out.strides):
            return False
        inputs = lowered.inputs
        checked = flags.checking()
        kept = self._through.get(id(out))
        if kept is not None and kept.replays(lowered, out, checked, self.stream()):
            self._replay(kept, inputs, lowered.scalars, out)
            return True
        if overlaps_any(inputs, out, CounterMap):      # (may_share_memory, compiled)
            if kept is not None and kept.replays_like(lowered, out, checked, self.stream()):
                self._replay(kept, inputs, lowered.scalars, out)
                try:                    # (the next step may read these very buffers)
                    kept.inputs = [weakref.ref(a) for a in inputs]
                except TypeError:
                    pass
                return True
            return self._through_temporary(lowered, out, checked)
        entry = self._into_entry(lowered.program, inputs, out, checked)
        if entry is None:
            return False
        self._launch(entry, self.arguments(entry, inputs, lowered.scalars, out))
        return True

    def _into_entry(self, program: Program, inputs: list[Any], out: Any, checked: bool,
                    wait: bool = False) -> _Entry | None:
        """The cached launch of ``program`` writing ``out`` through its strides (None: an input
        this device must copy first, run's way, or the kernel compiling in the background,
        unless ``wait``)."""
        key = (*_entry_key(program, inputs, checked), out.strides)     # (run's, and out's strides)
        entry = self._entries.get(key)
        if entry is None:
            usable = [self.usable(a) for a in inputs]
            if any(a is not b for a, b in zip(usable, inputs)):
                return None
            later = self._later.get(key)
            if later is None:
                geo = R.analyze(program, inputs, out)
                entry = self._compiled(program, geo, checked,
                                       later_key=key if not wait and self._may_compile_later(program, geo)
                                       else None)
            else:
                entry = self._finished(key, later)
            if entry is None:           # compiling: the caller computes and copies meanwhile
                return None
            bounded_insert(self._entries, key, entry, MAX_ENTRIES)
        return entry

    def _replay(self, kept: _Through, inputs: list[Any], scalars: list[Any], out: Any) -> None:
        """A kept write through a temporary (:class:`_Through`) with this step's buffers."""
        temp = kept.temp
        self._launch(kept.value_entry, self.arguments(kept.value_entry, inputs, scalars, temp))
        self._launch(kept.copy_entry, self.arguments(kept.copy_entry, [temp], [], out))

    def _through_temporary(self, lowered: Lowered, out: Any, checked: bool) -> bool:
        """A value that reads ``out``'s memory: computed into a temporary, then copied in by a
        second kernel, so that every element is read before any is written. The temporary
        and both kernels are kept for ``out`` (:class:`_Through`): a loop's next step
        (``u[1:-1, 1:-1] = jacobi(u)``: the same kept views of ``u`` read, the same kept
        view written) launches the two kernels again into the same temporary, with no
        allocation, overlap test or entry lookup (docs/notes/gpu.rst 2026-12-04d)."""
        temp = self.run(lowered)
        copy_entry = self._into_entry(_copy_program(temp.dtype, temp.ndim), [temp], out, checked,
                                      wait=True)
        if copy_entry is None:          # (never: a temporary is contiguous)
            return False
        self._launch(copy_entry, self.arguments(copy_entry, [temp], [], out))
        # (run's key of its cached entry: a value whose inputs it had to copy has none)
        value_entry = self._entries.get(_entry_key(lowered.program, lowered.inputs, checked))
        # (a stencil's entry under that key may be another arrangement of the inputs than
        # theirs, which ``run`` found under a longer key: not kept then)
        if value_entry is not None and (value_entry.members is None or stencil.holds(
                value_entry.members, lowered.inputs, self.pointer)):
            self._keep(lowered, out, checked, temp, value_entry, copy_entry)
        return True

    def _keep(self, lowered: Lowered, out: Any, checked: bool, temp: Any, value_entry: _Entry,
              copy_entry: _Entry) -> None:
        """Keep a write through ``temp`` while ``out`` lives (a weak reference: the entry and
        its temporary go with the memory written), at most ``_Through.KEPT`` of them (the
        oldest goes first). Arrays without weak references are not kept."""
        key = id(out)
        table = self._through

        def gone(_: Any, key: int = key) -> None:
            table.pop(key, None)
        try:
            through = _Through(lowered, weakref.ref(out, gone), checked, self.stream(), temp,
                               value_entry, copy_entry)
        except TypeError:
            return
        table.pop(key, None)
        if len(table) >= _Through.KEPT:
            table.pop(next(iter(table)))
        table[key] = through

    def stream(self) -> int:
        """The current stream's handle: a kept temporary is reused on its own stream only."""
        import cupy
        return int(cupy.cuda.get_current_stream().ptr)

    def place(self) -> Any:
        """The current device and stream: a kept 0-d output is reused there only."""
        import cupy
        return cupy.cuda.runtime.getDevice(), cupy.cuda.get_current_stream().ptr

    def _output_0d(self, entry: _Entry, xp: Any, dtype: Any) -> Any:
        """A cached kernel's 0-d output (a full reduction's): the one its last call made, when
        nothing but the entry refers to that array or its memory (:func:`_sole`: the user
        dropped the result, as ``float(la.sum(...))`` does) and this call runs on its device
        and stream (the kernels that read it before ran there: they come first); else a new
        one, kept. CuPy's pool allocation and the last one's free cost a call ~2-4 µs on a GPU
        host (docs/notes/gpu.rst, 2026-12-07h)."""
        kept = entry.kept
        place = self.place()
        if kept is not None and kept[0] == place:
            out = _sole(kept)
            if out is not None:
                return out
        out = xp.ndarray((), dtype)
        entry.kept = (place, out)
        return out

    def arguments(self, entry: _Entry, inputs: list[Any], scalars: list[Any], out: Any) -> list[Any]:
        """The launch arguments: the entry's constant template with this call's buffers filled
        in (a checked launch fills its flag words: ``launch_checked``)."""
        return self._fill(entry, _with_scalars(entry, scalars), inputs, out)

    def bind(self, lowered: Lowered, checked: bool = False) -> Any:
        """``run`` for later calls with inputs like ``lowered``'s (dtypes, shapes, strides) and
        its scalars (``la.jit``'s replay, backends/_bind.py): :class:`_BoundLaunch`."""
        if lowered.program.root.op in R.FALLBACK_REDUCTIONS:
            from .._bind import unbound
            return unbound(self, lowered)
        key = _entry_key(lowered.program, lowered.inputs, flags.checking())
        return _BoundLaunch(self, lowered._replace(inputs=[]), key)

    def _fill(self, entry: _Entry, args: list[Any], inputs: list[Any], out: Any) -> list[Any]:
        """``args`` (a copy of the entry's template with its scalars: :func:`_with_scalars`)
        with this call's output, inputs, input offsets and a full reduction's scratch filled
        in, in place."""
        args[entry.out_slot] = out
        for slot, k in entry.input_slots:
            args[slot] = inputs[k]
        for slot, k in entry.offset_slots:
            args[slot] = np.int64(inputs[k].offset)
        if entry.acc is not None:               # a full reduction: partials and counter
            scratch, counter = self._stream_buffers(entry.scratch_bytes)
            args[entry.partials_slot], args[entry.counter_slot] = scratch, counter
        return args

    def _fallback(self, lowered: Lowered) -> Any:
        """var/std/argmin/argmax: the fused chain into a temporary (one launch), then CuPy's
        reduction on it (its own launches), var/std under lazy mode's accumulation rule
        (float64, rounded once: ``reduction_rules``)."""
        from ..reference import apply
        xp = self.xp()
        program, root = lowered.program, lowered.program.root
        two_pass = self._var_two_pass(lowered)
        if two_pass is not None:
            return two_pass
        chain = _fallback_chain(lowered)
        if chain is None:
            tmp = lowered.inputs[program.instrs[root.args[0]].arg[0]]
        else:
            tmp = self.run(chain)
        return xp.asarray(apply(xp, root.op, root.arg, [tmp], lazy_rules=root.dtype))

    def _var_two_pass(self, lowered: Lowered) -> Any:
        """``var``/``std`` of a real chain as two of lazyarr's own reductions over its float64
        values (NumPy's ``_var`` steps, ``reduction_rules._var_steps``, fused): the mean (a
        sum kept as the reduced axes, divided by the count), then the sum of the squared
        deviations from it (the mean a second input, broadcast), divided by ``count - ddof``,
        rooted for ``std``, rounded once to the result dtype. The chain runs in both passes
        (nothing stored); its floating-point errors are reported by the first. None where
        this does not apply (complex values, a ``dtype=``, no degrees of freedom): the
        caller's way then."""
        found = _var_shape(lowered)
        if found is None:
            return None
        xp, root = self.xp(), lowered.program.root
        count, ddof = found[1], root.arg[3] or 0
        mean = xp.asarray(self.run(_var_pass(lowered, found)))
        mean = xp.true_divide(mean, count, out=mean)
        with np.errstate(all="ignore"):     # (the chain's errors: reported by the first pass)
            total = xp.asarray(self.run(_var_pass(lowered, found, mean)))
        total = xp.true_divide(total, count - ddof, out=total)
        if root.op == "std":
            total = xp.sqrt(total, out=total)
        return total.astype(root.dtype)

    # ------------------------------------------------------------------ plan
    def plan(self, lowered: Lowered) -> Plan:
        program, root = lowered.program, lowered.program.root
        if _runs_on_host(program):
            # Complex -> integer casts (and a complex reduction of _COMPLEX_ON_HOST) are
            # not in the kernels, and CuPy's are not NumPy's
            # (reference._host_step): such a program runs on the host with NumPy.
            from ..reference import for_device
            plan = for_device("cpu").plan(lowered)
            held = f"complex {'/'.join(sorted(_COMPLEX_ON_HOST))} reductions and " if _COMPLEX_ON_HOST else ""
            plan.notes.append(f"{held}complex-to-integer casts are not fused on cuda yet: the inputs are copied "
                              "to the host, the program runs op by op with NumPy there, and the "
                              "result is copied back")
            return plan
        notes: list[str] = []
        kernels: list[Kernel] = []
        inputs_info = [InputInfo.of(a) for a in lowered.inputs]
        read = sum(i.nbytes for i in inputs_info)
        out_bytes = int(np.prod(lowered.shape)) * root.dtype.itemsize
        written = out_bytes
        try:
            sms, _ = self.device_info()
        except Exception:
            sms = 132
            notes.append("no GPU here: launch configuration shown for an H200 (132 SMs, sm_90)")
        found = _var_shape(lowered)
        if found is not None:           # var/std: two reductions (_var_two_pass)
            first = self.plan(_var_pass(lowered, found))
            # (a stand-in of the mean's shape: planning reads shapes and strides, and runs
            # without CuPy)
            mean = np.zeros(found[0], _F64)
            with np.errstate(all="ignore"):     # (as it runs: unchecked)
                second = self.plan(_var_pass(lowered, found, mean))
            notes.append(f"{root.op} runs as two of lazyarr's reductions of the chain's float64 "
                         "values: their mean, then the sum of their squared deviations from it "
                         "(the chain computed in both, nothing stored)")
            # (the second pass's notes where they differ from the first's: the same kernel
            # kind is not told twice)
            again = [f"second pass: {n}" for n in second.notes if n not in first.notes]
            return Plan(self.name, "cuda", program, first.kernels + second.kernels, inputs_info,
                        first.bytes_read + second.bytes_read, first.bytes_written + second.bytes_written,
                        notes + first.notes + again)
        fused_lowered = lowered
        if root.op in R.FALLBACK_REDUCTIONS:
            child = root.args[0]
            fused_lowered = _fallback_chain(lowered)  # type: ignore[assignment]
            temp = program.instrs[child].dtype if fused_lowered is None else \
                fused_lowered.program.root.dtype
            chain_bytes = int(np.prod(broadcast_shapes(*(a.shape for a in lowered.inputs)))) * \
                temp.itemsize
            then = (f"NumPy's steps for {root.op}(dtype=...) run with CuPy (numpy_methods: sums, "
                    "divides, a square; several launches)"
                    if numpy_methods.needs_numpy_steps(root.op, root.arg[2])
                    else f"CuPy's {root.op} runs on it (a second launch)")
            if temp != program.instrs[child].dtype:
                then += (f"; the {program.instrs[child].dtype} values are written as {temp} "
                         "(CuPy's kernels flush float32 subnormals)")
            notes.append(f"{root.op} is not fused: the chain is materialized by the fused kernel "
                         f"into a temporary, then {then}")
        if fused_lowered is not None:
            usable = [self.usable(a) for a in fused_lowered.inputs]
            geo = R.analyze(fused_lowered.program, usable, addresses=self.addresses)
            rendered = R.render(fused_lowered.program, geo.spec, shuffles=self.shuffles,
                                checked=flags.checking())
            s = geo.spec
            launch = f"grid=({geo.grid(sms)},), block=({s.block},)"
            kernels.append(Kernel(f"lazyarr_kernel[{s.kind}]", rendered.source, launch))
            notes.append(_KIND_NOTES[s.kind].format(u=s.unroll, tx=s.tx, ty=s.ty))
            chain = fused_lowered.program.instrs
            for f in s.stencil.fields if s.stencil is not None else ():
                ops = " -> ".join(chain[n].op for n in sorted(stencil.subtree(chain, f.rep))
                                  if chain[n].op not in ("input", "scalar"))
                shifts = len({(di, dj) for _, di, dj in f.tops})
                notes.append(f"stencil: {ops} is read at {shifts} shifts of one buffer: computed once "
                             f"per element into shared memory, per tile of {stencil.TILE_ROWS}x"
                             f"{stencil.TILE_COLS} outputs (stencil.py)")
            if rendered.fpe_sites:
                notes.append(f"checks NumPy's floating-point errors of {', '.join(rendered.fpe_sites)}: "
                             "flags derived from values, one word per op (fp_checks); none under "
                             "np.errstate(all='ignore')")
            if s.kind in ("map", "full"):
                notes.append(f"iteration space collapsed to {s.nd} dim(s); input classes "
                             f"{''.join(s.classes) or '-'} (c: flat contiguous, b: one element, "
                             "s: strided)")
            partials = [p for p in rendered.params if p.role is Role.PARTIALS]
            if partials:
                written += geo.grid(sms) * max(1, partials[0].index) * partials[0].dtype.itemsize + 4
        if root.op in R.FALLBACK_REDUCTIONS:
            kernels.append(Kernel(f"cupy.{root.op}", f"cupy.{root.op}(tmp, ...)"))
            if fused_lowered is not None:
                written += chain_bytes
                read += chain_bytes
        return Plan(self.name, "cuda", program, kernels, inputs_info, read, written, notes)


class _BoundLaunch:
    """A replay step's runner on cuda (``CudaBackend.bind``): once the step's kernel is in the
    backend's entries (compiled: the trace's call may have run op by op while it compiled),
    each call fills the entry's template, its scalars converted once, with its buffers and
    launches, without ``run``'s lookups. Until then each call is ``run``'s; so is every call
    of a stencil's kernel (``run`` checks its inputs' shifts each call), and a call under
    another floating-point error state than the entry's (its kernel checks flags or not)."""
    __slots__ = ("backend", "lowered", "key", "entry", "template", "looking")

    def __init__(self, backend: CudaBackend, lowered: Lowered, key: Any) -> None:
        self.backend, self.lowered, self.key = backend, lowered, key
        self.entry: _Entry | None = None
        self.template: list[Any] = []
        self.looking = True             # for the entry (False: run's, for good)

    def __call__(self, buffers: list[Any]) -> Any:
        backend, entry = self.backend, self.entry
        if entry is None:
            entry = backend._entries.get(self.key) if self.looking else None
            if entry is None:
                return backend.run(self.lowered._replace(inputs=buffers))
            if entry.members is not None:
                self.looking = False
                return backend.run(self.lowered._replace(inputs=buffers))
            self.entry, self.template = entry, _with_scalars(entry, self.lowered.scalars)
        if flags.checking() != self.key[2]:
            return backend.run(self.lowered._replace(inputs=buffers))
        xp = backend._xp                # (run's hot path's way: the module kept, the array type)
        if xp is None:
            xp = backend._xp = backend.xp()
        out = xp.ndarray(self.lowered.shape, self.lowered.program.root.dtype)
        backend._launch(entry, backend._fill(entry, self.template.copy(), buffers, out))
        return out


@dataclass
class _Later:
    """A kernel to compile on the compile thread (``future``: None until started), with what
    its entry is made of."""
    program: Program
    geo: R.Geometry
    rendered: R.Rendered
    sms: int
    cc: tuple[int, int]
    future: Any = None


def _compile_error(program: Program, geo: R.Geometry, exc: Exception) -> RuntimeError:
    return RuntimeError(
        f"lazyarr could not compile the CUDA kernel for the expression "
        f"{' -> '.join(program.ops())} ({program.root.dtype}, {geo.spec.kind} kernel): "
        f"{type(exc).__name__}: {exc}")


_F64, _F32 = np.dtype(np.float64), np.dtype(np.float32)


def _var_pass(lowered: Lowered, found: tuple[tuple[int, ...], int], mean: Any = None) -> Lowered:
    """A pass of ``CudaBackend._var_two_pass``: the sum of the chain's float64 values over the
    reduced axes, kept (``mean`` None), or the sum of their squared deviations from ``mean``
    (an input, broadcast), with the var's ``keepdims``."""
    kept = found[0]
    program, root = lowered.program, lowered.program.root
    axes, keepdims = root.arg[0], root.arg[1]
    chain, x = list(program.instrs[:-1]), root.args[0]
    loop = reduction_rules.loop_dtype(root.op, chain[x].dtype, root.dtype, None)
    for dt in dict.fromkeys((loop, _F64)):
        if chain[x].dtype != dt:
            chain.append(Instr("astype", dt, (x,), dt))
            x = len(chain) - 1
    if mean is None:
        chain.append(Instr("sum", _F64, (x,), (axes, True, None, None)))
        return Lowered(Program(tuple(chain)), lowered.inputs, lowered.scalars, kept, lowered.device)
    k = len(chain)
    chain += [Instr("input", _F64, (), (len(lowered.inputs), mean.ndim)),
              Instr("subtract", _F64, (x, k), None), Instr("multiply", _F64, (k + 1, k + 1), None),
              Instr("sum", _F64, (k + 2,), (axes, keepdims, None, None))]
    return Lowered(Program(tuple(chain)), [*lowered.inputs, mean], lowered.scalars, lowered.shape,
                   lowered.device)


def _var_shape(lowered: Lowered) -> tuple[tuple[int, ...], int] | None:
    """For a var/std that runs as two reductions (``CudaBackend._var_two_pass``): the shape of
    the mean (the chain's, the reduced axes kept as 1) and the count of the reduced elements;
    None where it does not (not a var/std, complex values, a ``dtype=``, no degrees of
    freedom)."""
    program, root = lowered.program, lowered.program.root
    if root.op not in ("var", "std"):
        return None
    axes, _, dtype, ddof = root.arg
    child = root.args[0]
    if dtype is not None or root.dtype.kind != "f" or program.instrs[child].dtype.kind == "c" \
            or child != len(program.instrs) - 2:
        return None
    shape = broadcast_shapes(*(a.shape for a in lowered.inputs)) if lowered.inputs else ()
    reduced = tuple(range(len(shape))) if axes is None else tuple(axes)
    count = math.prod(shape[j] for j in reduced)
    kept = tuple(1 if j in reduced else n for j, n in enumerate(shape))
    return None if count - (ddof or 0) <= 0 else (kept, count)


def _entry_key(program: Program, inputs: list[Any], checked: bool) -> tuple[Any, ...]:
    """The key of a compiled kernel's entry in ``CudaBackend._entries``: the program, each
    input's shape and strides, and whether the kernel checks floating-point flags."""
    return (program, tuple([(a.shape, a.strides) for a in inputs]), checked)


def _with_scalars(entry: _Entry, scalars: list[Any]) -> list[Any]:
    """The entry's launch template with a call's scalars converted into it."""
    args = entry.template.copy()
    for slot, pos, typ in entry.scalar_slots:
        args[slot] = typ(scalars[pos])
    return args


def _scalar_type(param: Any) -> Any:
    """What makes a SCALAR argument from the scalar's value: its type, or for a part of a
    complex scalar (``index`` 0 or 1) the part, as that float type."""
    typ = param.dtype.type
    if param.index == 0:
        return lambda v: typ(complex(v).real)
    if param.index == 1:
        return lambda v: typ(complex(v).imag)
    return typ


#: reductions whose complex values run on the host: none. History (docs/notes/gpu.rst): with
#: complex accumulators (2026-12-02) sum/prod gave NaN where NumPy gives +-inf on the H200;
#: accumulating each part as a float64 value (render.Reduction.parts) passed the special-value
#: tests (2026-12-03d) but not ``test_gpu.py``'s ``test_reduction``: a product's identity lanes
#: (1+0j times inf+0j is inf+nanj; now a ``_has`` part: an empty lane never multiplies) and a
#: complex128 sum of +-DBL_MAX values, whose overflow depends on the order (now the written
#: rule of docs/testing.rst, "Accumulation rule"). min/max carry the element's position
#: (``_ix``) for NumPy's first-NaN and first-of-equal rule. An op named here runs on the host
#: again (the switch, e.g. for a GPU that disagrees).
_COMPLEX_ON_HOST: frozenset[str] = frozenset()


def negative_exponent_possible(instrs: tuple[Instr, ...], ins: Instr) -> bool:
    """Whether an integer ``power`` may meet a negative exponent the kernel cannot report:
    NumPy's integer loop raises ValueError at the first one, and a kernel has no way to
    raise. A constant exponent was checked where the expression was written
    (``_build._check_integer_power``); an array of a signed type may hold one (one cast from
    an unsigned type or bool cannot)."""
    if ins.dtype.kind not in "iu":
        return False
    exponent = instrs[ins.args[1]]
    if exponent.dtype.kind != "i" or exponent.op == "scalar":
        return False
    return not (exponent.op == "astype" and instrs[exponent.args[0]].dtype.kind in "ub")


@functools.lru_cache(maxsize=4096)
def _runs_on_host(program: Program) -> bool:
    """Whether the program runs on the host with NumPy: an op in ``RUN_ON_HOST``, an
    elementwise op whose row has no template for its operands' dtype (none now:
    ``templates.select``), a complex reduction of ``_COMPLEX_ON_HOST``, a complex ->
    integer cast, or an integer ``power`` whose exponent may be negative (NumPy raises
    ValueError there: :func:`negative_exponent_possible`). Memoized per program (``run_into``
    asks at every write)."""
    instrs = program.instrs
    for ins in instrs:
        if ins.op in RUN_ON_HOST:
            return True
        if ins.op == "astype" and instrs[ins.args[0]].dtype.kind == "c" and ins.dtype.kind in "iu":
            return True     # (complex -> integer differed from NumPy on the H200, 2026-12-02)
        if ins.op == "power" and negative_exponent_possible(instrs, ins):
            return True
        if ins.op in ("input", "scalar", "astype") or not ins.args:
            continue
        key = instrs[ins.args[1] if ins.op == "where" else ins.args[0]].dtype
        if ins.op in R.NATIVE_REDUCTIONS or ins.op in R.FALLBACK_REDUCTIONS:
            if key.kind == "c" and ins.op in _COMPLEX_ON_HOST:
                return True
        elif select(ins.op, key) is None:
            return True
    return False


def _fallback_chain(lowered: Lowered) -> Lowered | None:
    """What ``CudaBackend._fallback`` computes before CuPy's reduction: the chain under the
    root, or None where the root reads an input as it is. An argmin/argmax of float32 values
    gets them widened to float64 by the chain's kernel (exact, in the same order): CuPy's
    kernels flush float32 subnormals (``-ftz=true``), so its argmax of [1e-40, 2e-40] would
    be 0."""
    program = lowered.program
    root = program.root
    widen = root.op in ("argmin", "argmax") and program.instrs[root.args[0]].dtype == _F32
    if program.instrs[root.args[0]].op == "input" and not widen:
        return None
    chain = _chain_of(lowered)
    if widen:
        instrs = chain.program.instrs
        chain = chain._replace(program=Program(instrs + (Instr("astype", _F64, (len(instrs) - 1,), _F64),)))
    return chain


def _chain_of(lowered: Lowered) -> Lowered:
    """The elementwise program under a reduction root (the root's operand is the last instr)."""
    program = lowered.program
    child = program.root.args[0]
    if child != len(program.instrs) - 2:
        raise NotImplementedError("unexpected program order under a reduction")
    sub = Program(program.instrs[:-1])
    shape = broadcast_shapes(*(a.shape for a in lowered.inputs)) if lowered.inputs else ()
    return Lowered(sub, lowered.inputs, lowered.scalars, shape, lowered.device)


def _usable(a: Any) -> Any:
    """Strides that are not whole elements cannot be indexed: copy those (rare)."""
    if type(a) is CounterMap:
        return a
    if any(s % a.dtype.itemsize for s in a.strides):
        import cupy
        return cupy.ascontiguousarray(a)
    return a


BACKEND = CudaBackend()
