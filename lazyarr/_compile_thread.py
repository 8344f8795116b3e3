"""The thread that compiles new GPU kernels in the background (``la.config(compile=
"background")``: backends/cuda/first_calls.py says what runs meanwhile), and the CPU's
compiled loops (``la.config(cpu_loops="background")``: backends/cpu_loops.py).

One daemon thread takes the jobs in order. At exit the compile under way finishes (its kernel
reaches the disk cache, so the next run of the script loads it) and the queued ones are
dropped; a daemon thread, so that an exit never waits for a queue of compiles.

While jobs are pending, Python's thread switch interval is :data:`SWITCH_S` instead of its
5 ms: a compile (Numba: Python code) holds the GIL, and every CuPy call of the calls that run
meanwhile releases it (a kernel launch, a copy) and then waits for the compile thread's turn
to end. At 5 ms a turn, the op-by-op call of a 7-op chain with its checks took ~0.5 s on an
H100 (docs/notes/gpu.rst, "A new kernel's first calls").
"""
from __future__ import annotations

import atexit
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:       # (imported at the first compile: 6 ms of ``import lazyarr`` otherwise)
    import concurrent.futures

#: how long an exit waits for the compile under way, in seconds
EXIT_WAIT_S = 30.0
#: Python's thread switch interval while compiles are pending (sys.setswitchinterval)
SWITCH_S = 0.0002

_jobs: Any = None                    # a queue.SimpleQueue of (future, build), made with the thread
_pending: set[concurrent.futures.Future] = set()
_skip_at_exit: set[concurrent.futures.Future] = set()   # jobs an exit does not wait for
_lock = threading.Lock()
_thread: threading.Thread | None = None
_stopping = False
_interval: float | None = None       # the switch interval to restore when none is pending


def submit(build: Callable[[], Any], wait_at_exit: bool = True) -> concurrent.futures.Future:
    """Run ``build`` on the compile thread; its future holds the result or the exception.
    ``wait_at_exit=False``: an exit does not wait for it (a CPU loop, which no cache keeps:
    backends/cpu_loops.py)."""
    global _thread, _interval, _jobs
    import concurrent.futures
    import queue
    future: concurrent.futures.Future = concurrent.futures.Future()
    with _lock:
        _pending.add(future)
        if not wait_at_exit:
            _skip_at_exit.add(future)
        if _interval is None:
            _interval = sys.getswitchinterval()
            sys.setswitchinterval(min(SWITCH_S, _interval))
        if _thread is None:
            _jobs = queue.SimpleQueue()
            _thread = threading.Thread(target=_work, name="lazyarr-compile", daemon=True)
            _thread.start()
    _jobs.put((future, build))
    return future


def _work() -> None:
    while True:
        future, build = _jobs.get()
        if _stopping or not future.set_running_or_notify_cancel():
            _done(future, cancel=True)
            continue
        try:
            future.set_result(build())
        except BaseException as exc:      # (handed to the call that takes the kernel)
            future.set_exception(exc)
        _done(future)


def _done(future: concurrent.futures.Future, cancel: bool = False) -> None:
    global _interval
    if cancel and not future.done():
        future.cancel()
    with _lock:
        _pending.discard(future)
        _skip_at_exit.discard(future)
        if not _pending and _interval is not None:
            sys.setswitchinterval(_interval)
            _interval = None


def wait_compiles(timeout: float | None = None) -> int:
    """Wait until the GPU kernels and CPU loops compiling in the background are ready (or
    ``timeout`` seconds pass); return how many are still compiling. After a warm-up call,
    before timing a loop, this makes every call of the loop launch the compiled kernel.

    >>> import lazyarr as la
    >>> la.wait_compiles()
    0
    """
    with _lock:
        futures = list(_pending)
    if not futures:
        return 0
    import concurrent.futures
    done, not_done = concurrent.futures.wait(futures, timeout=timeout)
    while True:     # (the thread's bookkeeping of a job follows its result at once)
        with _lock:
            if not any(f in _pending for f in done):
                return len(not_done)
        time.sleep(0.0005)


@atexit.register
def _at_exit() -> None:
    global _stopping
    _stopping = True
    with _lock:
        running = [f for f in _pending if f.running() and f not in _skip_at_exit]
    if running:
        import concurrent.futures
        concurrent.futures.wait(running, timeout=EXIT_WAIT_S)
