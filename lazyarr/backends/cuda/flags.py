"""The floating-point flags of checked cuda kernels, on their way to ``fp_errors.report``.

A checked kernel ORs NumPy's flags into one uint32 word per op site (:mod:`.fp_checks`).
Reading them must not add a synchronization, nor a driver call per launch, where NumPy's
semantics allow none:

* the words of a launch are a slot of a per-stream ring of zeroed device words (no memset per
  launch: a slot is zeroed again only when it held a flag); a launch only records which slot,
  which ops, the user's line and the error state (Python bookkeeping, no driver call; a
  kernel launched again before its slot is read shares it: a dictionary lookup);
* under ``np.errstate`` modes that act at once (``raise``, ``call``, ``print``, ``log``) the
  host copies the launch's words right after it (a synchronization the semantics need: a
  raise leaves the array pending, as on the CPU);
* under ``"warn"`` the flags are reported at the next synchronization lazyarr makes anyway, a
  copy to the host (:func:`read_back`, from ``_devices.to_host``: the one pending launch's
  words, or the whole ring, copied with a small result into pinned memory and one wait for
  all; :func:`settle` elsewhere), or when the ring is full (one synchronization per :data:`SLOTS` launches that no
  host copy followed), or at exit; the warning names the user's line that materialized, and
  is handled under the error state of then.

The simulated device runs a kernel to its end at launch: its flags are reported at once.
"""
from __future__ import annotations

import atexit
import collections
import sys
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..._stack import _PACKAGE_DIR
from .. import fp_errors
from .fp_checks import MAX_SITES

#: words per slot (op sites of one kernel; a kernel with more checks only the first ones),
#: slots per stream (launches whose flags can be in flight)
WORDS, SLOTS = MAX_SITES, 64
_NO_FLAGS = bytes(4 * WORDS)         # a slot's words, none raised
_new = tuple.__new__    # a NamedTuple without its Python-level __new__ (the launch's path)
_EXTOBJ = fp_errors.ERROR_STATE
#: the error state's decisions (checking, reporting at once), made once per state
_decisions = fp_errors.decided


def checking() -> bool:
    """Whether kernels check for floating-point errors now (not all of NumPy's divide, over
    and invalid ignored: then the unchecked kernel runs)."""
    return _decisions().checking


def report_now() -> bool:
    """Whether the error state handles an error at once (raise, call, print, log)."""
    return _decisions().immediate


def report_words(words: Any, sites: tuple[str, ...], line: tuple[str, int] | None = None,
                 state: dict[str, str] | None = None) -> None:
    """``fp_errors.report`` of one launch's words (NPY_FPE_* bits per site)."""
    raised = [(int(w), name) for w, name in zip(words, sites) if int(w)]
    if raised:
        fp_errors.report(raised, line, state)


def user_line() -> tuple[str, int] | None:
    """(file, line) of the first frame outside lazyarr: where a deferred warning points."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back        # type: ignore[assignment]
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


class _Pending(NamedTuple):
    slot: int
    sites: tuple[str, ...]
    line: tuple[str, int] | None     # the user's line that materialized
    state: dict[str, str]            # np.geterr() then: how its warnings are handled


class _Ring:
    """One stream's slots of device words and the launches whose words are not read yet, in
    launch order. Launches of one kernel under one error state share a slot until
    it is read (a loop's launches cost a dictionary lookup each; NumPy's warnings of a loop
    come once per line under Python's default filter too): the first launch's line is named."""

    def __init__(self) -> None:
        import cupy
        self.stream = cupy.cuda.get_current_stream()
        self.device = cupy.zeros((SLOTS, WORDS), np.uint32)
        self.words = [self.device[k] for k in range(SLOTS)]     # (views made once)
        self.next = 0
        self.pending: collections.deque[_Pending] = collections.deque()
        self.active: dict[tuple[Any, Any], int] = {}            # (kernel, error state) -> slot
        self.epoch = 0          # bumped whenever ``active`` is forgotten: a cached slot is stale
        self.lock = threading.Lock()

    def take(self, kernel: Any, sites: tuple[str, ...]) -> tuple[Any, _Pending | None]:
        """The device words a launch of ``kernel`` ORs its flags into, and, when the error
        state handles errors at once, the launch to :meth:`read` right after it."""
        decided = _decisions()
        ext, now, state = decided.ext, decided.immediate, decided.state
        share = not now
        if share:
            slot = self.active.get((kernel, ext))
            if slot is not None:
                return self.words[slot], None
        with self.lock:
            if len(self.pending) == SLOTS:
                self._settle_locked()
            slot = self.next
            self.next = (slot + 1) % SLOTS
            p = _new(_Pending, (slot, sites, user_line(), state))
            if now:
                return self.words[slot], p
            self.pending.append(p)
            if share:
                self.active[(kernel, ext)] = slot
        return self.words[slot], None

    def read(self, p: _Pending) -> None:
        """Report a launch's flags now (a copy: it waits for the kernel)."""
        self._report(p, self.words[p.slot].get(stream=self.stream))

    def settle(self) -> None:
        with self.lock:
            self._settle_locked()

    def _settle_locked(self) -> None:
        """Report every pending launch: one copy of the ring (waits for the stream's work),
        or of the one pending launch's words (a result read back after each launch: its copy
        waits as well, and a slot's words need no scan of the ring's)."""
        pending = self.pending
        if not pending:
            return
        words = self.words[pending[0].slot].get(stream=self.stream) if len(pending) == 1 \
            else self.device.get(stream=self.stream)
        self._forget()
        self._report_read(pending, words)

    def _report_read(self, pending: Any, words: np.ndarray) -> None:
        """Report the launches of one read (``pending``, forgotten already) from the words it
        copied: the one launch's slot, or the whole ring's."""
        if len(pending) == 1:
            self._report(pending[0], words)
            return
        flagged = words.any(axis=1).tolist()
        for p in pending:
            if flagged[p.slot]:
                self._report(p, words[p.slot])

    def _forget(self) -> None:
        """After a read: no launch pending, no slot shared (what was held is stale)."""
        self.pending = collections.deque()
        self.active.clear()
        self.epoch += 1

    def _report(self, p: _Pending, words: np.ndarray) -> None:
        if words.tobytes() != _NO_FLAGS:    # (words.any(): ~1.5 µs of NumPy's reduction)
            self.device[p.slot] = 0          # (queued: before any later use of the slot)
            report_words(words, p.sites, p.line, p.state)


class Held(NamedTuple):
    """A launch's shared slot, as :func:`take` left it for the kernel's next launch."""
    ring: _Ring
    epoch: int
    ext: Any                         # NumPy's error state then (its context variable's value)
    stream: Any
    words: Any


def take(kernel: Any, sites: tuple[str, ...], held: Held | None) -> tuple[Any, _Pending | None, Held | None]:
    """``ring().take(kernel, sites)`` with what the kernel's last launch left (``held``): a
    kernel launched again on the same stream under the same error state while its shared slot
    is unread gets the slot from there, with no ring lookup (the ring's key and its dictionary
    were ~0.6 µs of a small call's ~5 µs launch on the H200: docs/notes/gpu.rst 2026-12-04b).
    Returns (the words, the launch to :meth:`_Ring.read` at once or None, what to hold)."""
    import cupy
    if held is not None and held.ring.epoch == held.epoch and _EXTOBJ.get() is held.ext \
            and cupy.cuda.get_current_stream() is held.stream:
        return held.words, None, held
    r = ring()
    epoch = r.epoch         # (read first: a settle during take makes the held slot stale, not wrong)
    words, now = r.take(kernel, sites)
    ext = _EXTOBJ.get() if _EXTOBJ is not None else None
    keep = None if now is not None or ext is None else _new(Held, (r, epoch, ext, r.stream, words))
    return words, now, keep


_rings: dict[Any, _Ring] = {}
_lock = threading.Lock()


def ring() -> _Ring:
    import cupy
    key = (cupy.cuda.runtime.getDevice(), cupy.cuda.get_current_stream().ptr)
    r = _rings.get(key)
    if r is None:
        with _lock:
            if not _rings:
                atexit.register(settle)      # (a script that never copies a result back)
            r = _rings.setdefault(key, _Ring())
    return r


#: a result read back with the flags in one synchronization (:func:`read_back`): at most this
#: many bytes (a larger one is copied as before: its own synchronizing copy, after the flags')
READ_BYTES = 4096
_RING_BYTES = 4 * WORDS * SLOTS
_local = threading.local()      # this thread's pinned staging memory


def _staging() -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """This thread's pinned host bytes, their address, and views of their start as one slot's
    words and as the ring's (made once): the ring's words (or a slot's), then a result. Pinned
    (page-locked) memory: a copy into it is asynchronous on the stream; one into pageable
    memory is a synchronization of its own. Per thread: a read's copies land there until its
    wait ends, and another thread may read back at the same time."""
    import cupy
    mem = cupy.cuda.alloc_pinned_memory(_RING_BYTES + READ_BYTES)
    staging = np.frombuffer(mem, np.uint8, _RING_BYTES + READ_BYTES)
    ring_words = staging[:_RING_BYTES].view(np.uint32).reshape(SLOTS, WORDS)
    _local.staging = kept = (staging, staging.ctypes.data, ring_words[0], ring_words)
    return kept


#: staging memory that an interrupted read's copies may still write: never reused nor freed
_abandoned: list[np.ndarray] = []


def read_back(data: Any, wait: Callable[[Any], None]) -> np.ndarray:
    """A CuPy array copied to the host (``_devices.to_host``), the floating-point flags of
    the kernels that ran reported first, as :func:`settle` reports them.

    A small contiguous result on the current stream and device is read with the pending
    launches' words in ONE synchronization: the words (one slot's 128 bytes, or the ring's)
    and the result are copied asynchronously into this thread's pinned memory on the stream,
    then ``wait`` (``_devices.wait``, passed in by its caller, which this module's imports
    do not reach: an event, polled, interruptible) waits for both, then the flags
    are reported (a warning, or an error that a warnings filter raises, comes before the
    value is returned) and the value is copied out of the pinned memory into a new array.
    Before, the slot's words and the result were two synchronizing copies after the wait
    (docs/notes/gpu.rst, 2026-12-07h). Else (a larger or non-contiguous result, another
    stream's pending launches): wait, :func:`settle`, ``data.get()``, as before."""
    import cupy
    cuda = cupy.cuda
    device = cuda.runtime.getDevice()
    stream = cuda.get_current_stream()
    nbytes = data.nbytes
    r = _rings.get((device, stream.ptr))
    others = len(_rings) > (r is not None)      # (rings of other streams: their launches too)
    if not (data._c_contiguous and 0 < nbytes <= READ_BYTES and data.data.device_id == device) \
            or others and any(o.pending for o in _rings.values() if o is not r):
        wait(data)              # interruptible (Ctrl-C) while the kernel runs
        settle()                # the floating-point errors of the kernels that ran (all done now)
        return data.get()  # type: ignore[no-any-return]
    kept = getattr(_local, "staging", None)
    staging, base, slot_words, ring_words = _staging() if kept is None else kept
    # (the runtime's call with integer addresses: ``MemoryPointer.copy_to_host_async`` takes a
    # ``ctypes.c_void_p``, one more object a copy)
    copy, to_host, on = cuda.runtime.memcpyAsync, cuda.runtime.memcpyDeviceToHost, stream.ptr
    if r is None or not r.pending:
        copy(base + _RING_BYTES, data.data.ptr, nbytes, to_host, on)
        _wait(data, staging, wait)
        return np.ndarray(data.shape, data.dtype, staging, _RING_BYTES).copy()
    with r.lock:
        pending = r.pending
        one = len(pending) == 1
        if one:
            copy(base, r.words[pending[0].slot].data.ptr, 4 * WORDS, to_host, on)
        else:
            copy(base, r.device.data.ptr, _RING_BYTES, to_host, on)
        copy(base + _RING_BYTES, data.data.ptr, nbytes, to_host, on)
        _wait(data, staging, wait)    # (interrupted: nothing forgotten, a later read copies again)
        r._forget()
        r._report_read(pending, slot_words if one else ring_words)
    return np.ndarray(data.shape, data.dtype, staging, _RING_BYTES).copy()


def _wait(data: Any, staging: np.ndarray, wait: Callable[[Any], None]) -> None:
    """``wait`` (``_devices.wait``); if it is interrupted (Ctrl-C), the copies queued into
    ``staging`` still land there later: the thread's next read takes new staging memory (a
    read on another stream would not be ordered after them), and this one is kept from being
    freed."""
    try:
        wait(data)
    except BaseException:
        _local.staging = None
        _abandoned.append(staging)
        raise


def settle() -> None:
    """Report the flags of the checked launches not read yet (a copy of each stream's ring,
    which waits for that stream's work: called where lazyarr synchronizes anyway)."""
    for r in list(_rings.values()):
        r.settle()
