"""Devices: ``"cpu"`` (NumPy buffers) and ``"cuda"`` (CuPy buffers).

With ``LAZYARR_CUDA_SIM=1`` in the environment the ``"cuda"`` device is *simulated*: the same
placement, planning and code generation, its kernels launched in Numba's CUDA simulator, with
host memory (NumPy arrays) standing in for device buffers and NumPy for CuPy's calls (eager
mode, the CuPy steps of var/std/argmin/argmax). For testing without a GPU (docs/testing.rst).
"""
from __future__ import annotations

import functools
import os
import sys
import threading
import time
import weakref
from types import ModuleType
from typing import Any, Callable

import numpy as np

from ._config import get_config


@functools.cache
def cuda_simulated() -> bool:
    """True when the cuda device is simulated (``LAZYARR_CUDA_SIM=1``; read once per process)."""
    value = os.environ.get("LAZYARR_CUDA_SIM", "")
    if value not in ("", "0", "1"):
        raise ValueError(f"LAZYARR_CUDA_SIM={value!r} is not valid; choose '0' or '1'")
    return value == "1"


@functools.cache
def numba_installed() -> bool:
    """Whether Numba is installed (found, not imported: ~0.3-0.5 s). The cuda backend and the
    CPU's compiled loops (backends/cpu_loops.py) compile with it."""
    import importlib.util
    return importlib.util.find_spec("numba") is not None


@functools.cache
def cuda_available() -> bool:
    """True when CuPy imports and sees at least one GPU and Numba is installed (or when the
    cuda device is simulated: ``LAZYARR_CUDA_SIM=1``).

    Numba is found, not imported: importing ``numba.cuda`` takes ~0.3 s, which a new
    expression's first result does not need (it runs with CuPy while its kernel compiles,
    backends/cuda/first_calls.py), so the compile pays it, on the compile thread. A Numba
    that is installed but cannot compile says so at the first compile (``RuntimeError``)."""
    if cuda_simulated():
        return True
    try:
        if not numba_installed():
            return False
        import cupy
        return bool(cupy.cuda.runtime.getDeviceCount() > 0)
    except Exception:
        return False


def resolve(device: str | None) -> str:
    """Turn ``None`` (the configured default), ``"auto"``, ``"cpu"`` or ``"cuda"`` into a device."""
    if device is None:
        device = get_config().device
    if device == "auto":
        return "cuda" if cuda_available() else "cpu"
    if device == "cpu":
        return "cpu"
    if device == "cuda":
        if not cuda_available():
            raise RuntimeError("device 'cuda' was requested but no usable GPU was found "
                               "(lazyarr needs CuPy and numba-cuda: pip install 'lazyarr[cuda]')")
        return "cuda"
    raise ValueError(f"device={device!r} is not valid; choose one of 'auto', 'cpu', 'cuda'")


def xp(device: str) -> ModuleType:
    """The array module behind a device: ``numpy`` or ``cupy`` (``numpy`` on the simulated
    cuda device)."""
    if device == "cuda" and not cuda_simulated():
        import cupy
        return cupy
    return np


def asarray(device: str, obj: Any, dtype: Any = None) -> Any:
    """``numpy.asarray`` / ``cupy.asarray`` on ``device``, keeping the sign of zero.

    CuPy copies 0-d host data with ``ndarray.fill``, which writes any value equal to 0 with a
    memset (cupy/_core/core.pyx ``_array_default``; CuPy 14): ``cupy.asarray(np.array(-0.0))``
    is +0.0. A one-element 1-D copy is a plain memcpy. (Seen on the H200 machine; tested by
    tests/test_gpu.py::test_signed_zero_reaches_the_gpu.)
    """
    module = xp(device)
    if device == "cuda" and cuda_simulated():     # host memory stands in: a copy, as to a GPU
        return np.array(obj, dtype=dtype)
    if device == "cuda" and device_of(obj) is None:
        return from_host(module, np.asarray(obj, dtype=dtype))
    return module.asarray(obj, dtype=dtype)


def from_host(module: ModuleType, host: np.ndarray) -> Any:
    """A host array in the memory of the array module ``module`` (NumPy: as it is; CuPy: a
    copy to the GPU, a 0-d one through a one-element copy: see :func:`asarray`)."""
    if module is np:
        return host
    if host.ndim == 0:
        return module.asarray(host.reshape(1)).reshape(())
    return module.asarray(host)


def full(device: str, shape: Any, fill_value: Any, dtype: Any = None, order: str = "C") -> Any:
    """``numpy.full`` / ``cupy.full``; CuPy's ``fill`` memsets a -0.0 fill value to +0.0 (as
    above), so on the GPU the value is broadcast-copied from a one-element array."""
    if device != "cuda":
        return np.full(shape, fill_value, dtype=dtype, order=order)
    if device_of(fill_value) is None:
        # NumPy's conversion of a host value (np.full's copyto, casting="unsafe"): NaN into
        # int8 is 0 with a RuntimeWarning, 2**64 into bool an OverflowError, as NumPy's
        # (asarray's np.array(nan, dtype=int8) raised, and np.array(2**64, bool) was True)
        host = np.empty(np.shape(fill_value), np.asarray(fill_value).dtype if dtype is None
                        else dtype)
        np.copyto(host, fill_value, casting="unsafe")
        fill_value, dtype = host, None
    value = asarray(device, fill_value, dtype)
    data = xp(device).empty(shape, value.dtype, order=order)
    data[...] = value
    return data


# CuPy arrays lazyarr made read-only (``mark_read_only``), by ``id``: CuPy's arrays are not
# hashable (no WeakSet), but weakly referenced, so an entry leaves with its array.
_read_only_memory: dict[int, weakref.ref[Any]] = {}


def mark_read_only(data: Any) -> Any:
    """``data`` made read-only, as NumPy's ``flags.writeable = False``: a NumPy array's flag;
    a CuPy array (which has no flag) is remembered, for :func:`read_only`. Returns ``data``."""
    if isinstance(data, np.ndarray):
        data.flags.writeable = False
        return data
    key = id(data)

    def forget(ref: weakref.ref[Any], key: int = key) -> None:
        if _read_only_memory.get(key) is ref:   # (not a later array that took the same id)
            del _read_only_memory[key]
    _read_only_memory[key] = weakref.ref(data, forget)
    return data


def inherit_read_only(memory: Any, view: Any) -> Any:
    """``view``, a view of ``memory``, marked read-only where ``memory`` is: NumPy's views
    inherit the flag, CuPy's have none to inherit. Returns ``view``."""
    if type(memory) is not np.ndarray and view is not memory and read_only(memory):
        mark_read_only(view)
    return view


def read_only(data: Any) -> bool:
    """Whether writing ``data`` is refused, as NumPy refuses it: a NumPy array's own flag;
    CuPy's arrays have none, so on the GPU the arrays :func:`mark_read_only` marked (the
    result of ``broadcast_to``, even to its own shape, and every view of a marked array), and
    memory with a zero stride over more than one element, are read-only (NumPy's broadcast
    views, the read-only arrays NumPy's functions make, are those; CuPy would write every
    alias of an element)."""
    if isinstance(data, np.ndarray):
        return not data.flags.writeable
    ref = _read_only_memory.get(id(data))
    if ref is not None and ref() is data:
        return True
    # (CuPy gives an empty array zero strides: nothing aliases there)
    return any(s == 0 and n > 1 for s, n in zip(data.strides, data.shape)) and 0 not in data.shape


_events = threading.local()


def wait(data: Any) -> None:
    """Wait until the GPU work queued on the current stream (which writes ``data``) is done,
    sleeping in Python between polls: a signal handler (Ctrl-C: KeyboardInterrupt) runs
    while the GPU computes, where a blocking copy would hold the thread in the driver until
    the kernel ends. The kernel itself runs on; later work queues behind it."""
    import cupy

    event = getattr(_events, "event", None)
    if event is None:
        event = _events.event = cupy.cuda.Event(disable_timing=True)
    event.record()
    start = time.perf_counter()
    while not event.done:
        elapsed = time.perf_counter() - start
        if elapsed > SPIN_S:
            time.sleep(min(elapsed * SLEEP_FRACTION, 2e-3))


#: How ``wait`` polls. Spinning (a query per loop, ~1 µs) for the first millisecond returns
#: within microseconds of a short kernel's end; a sleep would not (Linux's timer slack makes a
#: ``sleep(1e-5)`` ~60 µs, and doubling sleeps overshot a 1 ms kernel by up to 60 %: 2026-12-03,
#: docs/notes/gpu.rst "Waiting for a result"). Past that, sleeps of a tenth of the time waited
#: so far keep the overshoot near 10 % and leave the core to other threads.
SPIN_S = 1e-3
SLEEP_FRACTION = 0.1
def may_share_memory(a: Any, b: Any) -> bool:
    """Whether two arrays' memory extents overlap (NumPy's ``may_share_memory``: bounds
    only). For GPU arrays from their pointers, shapes and strides: ``cupy.may_share_memory``
    is Python that builds objects per call (~10 µs, 2026-12-03 H200 profile of a stencil
    step, where the write barrier asks it once per input of every pending expression)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.may_share_memory(a, b))
    try:
        lo_a, hi_a = _extent(a)
        lo_b, hi_b = _extent(b)
    except AttributeError:      # not two arrays of one GPU (a NumPy scalar, host and GPU)
        return False
    return lo_a < hi_b and lo_b < hi_a


def _extent(a: Any) -> tuple[int, int]:
    """The bytes ``[lo, hi)`` an array's elements span (empty: an empty interval)."""
    lo = hi = a.data.ptr
    if a.size == 0:
        return lo, lo
    for n, st in zip(a.shape, a.strides):
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    return lo, hi + a.itemsize


def to_host(device: str, data: Any) -> np.ndarray:
    """A device buffer as a NumPy array: a copy from the GPU (from the simulated device too),
    the floating-point flags of the kernels that ran reported first (``flags.read_back``: a
    small result and the flags in one synchronization)."""
    if device != "cuda":
        return np.asarray(data)
    if cuda_simulated():
        return np.array(data)
    read_back = _read_back[0]
    if read_back is None:
        # (kept: an import here cost every read back ~0.8 µs; the cuda backend imports this
        # module, so not at the top)
        from .backends.cuda import flags
        read_back = _read_back[0] = flags.read_back
    return read_back(data, wait)


#: flags.read_back, once imported
_read_back: list[Callable[[Any, Callable[[Any], None]], np.ndarray] | None] = [None]


def is_cupy_array(obj: Any) -> bool:
    """Whether ``obj`` is a ``cupy.ndarray`` on a real GPU (False without CuPy imported, and on
    the simulated device, whose buffers are NumPy's): a type test, where the generic tests
    below build CuPy's ``__cuda_array_interface__`` dict (~1-2 µs a call on the hot paths)."""
    cupy = sys.modules.get("cupy")
    return cupy is not None and type(obj) is getattr(cupy, "ndarray", None) and not cuda_simulated()


def device_of(obj: Any) -> str | None:
    """``"cuda"`` for GPU buffers (CUDA array interface or a CUDA DLPack device), else None."""
    if isinstance(obj, np.ndarray):
        return None
    if is_cupy_array(obj):
        return "cuda"
    if hasattr(obj, "__cuda_array_interface__"):
        return "cuda"
    dl = getattr(obj, "__dlpack_device__", None)
    if dl is not None:
        try:
            kind = int(dl()[0])
        except Exception:
            return None
        return "cuda" if kind in (2, 3, 13) else None  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged
    return None
