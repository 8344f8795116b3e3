"""Devices: ``"cpu"`` (NumPy buffers) and ``"cuda"`` (CuPy buffers)."""
from __future__ import annotations

import functools
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
