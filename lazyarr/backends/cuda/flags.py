"""The floating-point flags of checked cuda kernels, on their way to ``fp_errors.report``.

A checked kernel ORs NumPy's flags into one uint32 word per op site (:mod:`.fp_checks`).
Reading them must not add a synchronization where NumPy's semantics allow none:

* the words of a launch are a slot of a per-stream ring of zeroed device words (no memset per
  launch: a slot is zeroed again only when it held a flag);
* after the launch, an asynchronous copy of the slot into pinned host memory and an event are
  queued behind the kernel (no wait);
* under ``np.errstate`` modes that act at once (``raise``, ``call``, ``print``, ``log``) the
  host waits for that event and reports before the result is returned (a raise leaves the
  array pending, as on the CPU);
* under ``"warn"`` the flags are reported at the next synchronization lazyarr makes anyway
  (a copy to the host, :func:`settle`), or at the next cuda materialization once the kernel
  has finished; the warning names the user's line that materialized.

The simulated device runs a kernel to its end at launch: its flags are reported at once.
"""
from __future__ import annotations

import collections
import sys
import threading
from typing import Any, NamedTuple

import numpy as np

from ..._stack import _PACKAGE_DIR
from .. import fp_errors
from .fp_checks import MAX_SITES

#: words per slot (op sites of one kernel; a kernel with more checks only the first ones),
#: slots per stream (launches whose flags can be in flight)
WORDS, SLOTS = MAX_SITES, 64
_IMMEDIATE = frozenset({"raise", "call", "print", "log"})
_KEYS = ("divide", "over", "invalid")


#: NumPy's error state lives in a context variable whose value is replaced by every
#: errstate/seterr: the decisions below are recomputed only when it changes (np.geterr() is
#: ~0.6 us, the two decisions ~1.9 us: too much for every launch; the lookup is ~15 ns)
_EXTOBJ = getattr(np._core.umath, "_extobj_contextvar", None)
_decided: tuple[Any, bool, bool] = (object(), True, False)


def _decisions() -> tuple[Any, bool, bool]:
    global _decided
    ext = _EXTOBJ.get() if _EXTOBJ is not None else None
    decided = _decided
    if ext is None or ext is not decided[0]:
        state = np.geterr()
        decided = (ext, any(state[k] != "ignore" for k in _KEYS),
                   any(state[k] in _IMMEDIATE for k in _KEYS))
        if ext is not None:
            _decided = decided       # (holding ``ext``: its identity stays its own)
    return decided


def checking() -> bool:
    """Whether kernels check for floating-point errors now (not all of NumPy's divide, over
    and invalid ignored: then the unchecked kernel runs)."""
    return _decisions()[1]


def report_now() -> bool:
    """Whether the error state handles an error at once (raise, call, print, log)."""
    return _decisions()[2]


def report_words(words: Any, sites: tuple[str, ...], line: tuple[str, int] | None = None,
                 state: dict[str, str] | None = None) -> None:
    """``fp_errors.report`` of one launch's words (the SEEN bits of a reduction masked off)."""
    raised = [(int(w) & 15, name) for w, name in zip(words, sites) if int(w) & 15]
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
    """One stream's slots: device words, their pinned host copies, one event each, and the
    launches in flight in launch order (one stream: they finish in that order)."""

    def __init__(self) -> None:
        import cupy
        self.device = cupy.zeros((SLOTS, WORDS), np.uint32)
        mem = cupy.cuda.alloc_pinned_memory(SLOTS * WORDS * 4)
        self.host = np.frombuffer(mem, np.uint32, SLOTS * WORDS).reshape(SLOTS, WORDS)
        self.host[...] = 0
        self.events = [cupy.cuda.Event(disable_timing=True) for _ in range(SLOTS)]
        self.next = 0
        self.pending: collections.deque[_Pending] = collections.deque()
        self.lock = threading.Lock()

    def take(self) -> tuple[int, Any]:
        """A zeroed slot and its device words (when all SLOTS are in flight, after waiting
        for the oldest: its slot is the next one)."""
        with self.lock:
            if len(self.pending) == SLOTS:
                self._settle(self.pending.popleft(), wait=True)
            slot = self.next
            self.next = (slot + 1) % SLOTS
        return slot, self.device[slot]

    def queue(self, slot: int, sites: tuple[str, ...], now: bool) -> None:
        """After the launch: the slot's copy to the host and its event, queued behind the
        kernel; ``now``: wait for them and report before returning."""
        import cupy
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memcpyAsync(self.host[slot].ctypes.data, self.device[slot].data.ptr,
                                      WORDS * 4, cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        self.events[slot].record(stream)
        pending = _Pending(slot, sites, user_line(), np.geterr())
        if now:
            self._settle(pending, wait=True)
        else:
            with self.lock:
                self.pending.append(pending)

    def _settle(self, p: _Pending, wait: bool) -> None:
        if wait:
            self.events[p.slot].synchronize()
        words = self.host[p.slot]
        if words.any():
            flags = words.copy()
            words[...] = 0
            self.device[p.slot] = 0          # (queued: before any later use of the slot)
            report_words(flags, p.sites, p.line, p.state)

    def settle_done(self, wait: bool = False) -> None:
        """Report the launches that have finished (``wait``: all, after waiting)."""
        while self.pending:
            with self.lock:
                if not self.pending or not (wait or self.events[self.pending[0].slot].done):
                    return
                p = self.pending.popleft()
            self._settle(p, wait)


_rings: dict[Any, _Ring] = {}
_lock = threading.Lock()


def ring() -> _Ring:
    import cupy
    key = (cupy.cuda.runtime.getDevice(), cupy.cuda.get_current_stream().ptr)
    r = _rings.get(key)
    if r is None:
        with _lock:
            r = _rings.setdefault(key, _Ring())
    return r


def settle(wait: bool = False) -> None:
    """Report the flags of the finished checked launches (``wait``: of all, after waiting)."""
    if not _rings:
        return
    for r in list(_rings.values()):
        r.settle_done(wait)
