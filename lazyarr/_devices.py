"""Devices: ``"cpu"`` (NumPy buffers) and ``"cuda"`` (CuPy buffers)."""
from __future__ import annotations

import functools
import threading
import time
from types import ModuleType
from typing import Any

import numpy as np

from ._config import get_config


@functools.cache
def cuda_available() -> bool:
    """True when CuPy and numba-cuda import and see at least one GPU."""
    try:
        import cupy
        from numba import cuda
    except Exception:
        return False
    try:
        return bool(cupy.cuda.runtime.getDeviceCount() > 0 and cuda.is_available())
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
    """The array module behind a device: ``numpy`` or ``cupy``."""
    if device == "cuda":
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
    if device == "cuda" and device_of(obj) is None:
        host = np.asarray(obj, dtype=dtype)
        if host.ndim == 0:
            return module.asarray(host.reshape(1)).reshape(())
        return module.asarray(host)
    return module.asarray(obj, dtype=dtype)


def full(device: str, shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    """``numpy.full`` / ``cupy.full``; CuPy's ``fill`` memsets a -0.0 fill value to +0.0 (as
    above), so on the GPU the value is broadcast-copied from a one-element array."""
    if device != "cuda":
        return np.full(shape, fill_value, dtype=dtype)
    value = asarray(device, fill_value, dtype)
    data = xp(device).empty(shape, value.dtype)
    data[...] = value
    return data


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
    delay = 1e-5
    while not event.done:
        time.sleep(delay)
        delay = min(2 * delay, 2e-3)


def device_of(obj: Any) -> str | None:
    """``"cuda"`` for GPU buffers (CUDA array interface or a CUDA DLPack device), else None."""
    if isinstance(obj, np.ndarray):
        return None
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
