"""The cuda backend: a lowered program becomes ONE Numba CUDA kernel per materialization.

``templates`` (the op table), ``params`` (the kernel's parameter recipe), ``render`` (program ->
kernel source, pure Python), ``compile`` (source -> PTX/cubin with a disk cache; also the
simulator path), ``backend`` (launch through CuPy). Importing this package needs neither a GPU
nor CuPy nor Numba: ``la.explain(..., backend="cuda")`` renders kernels anywhere.
"""
from __future__ import annotations

from typing import Any

__all__ = ["BACKEND", "CudaBackend"]


def __getattr__(name: str) -> Any:
    # The backend (render, compile, launch) is imported on first use: the reference backend
    # imports only this package's op table (which ops run on the host), at ``import lazyarr``.
    if name in __all__:
        from . import backend
        return getattr(backend, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
