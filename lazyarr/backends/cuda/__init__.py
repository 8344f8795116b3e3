"""The cuda backend: a lowered program becomes ONE Numba CUDA kernel per materialization.

``render`` (program -> kernel source, pure Python), ``compile`` (source -> PTX/cubin with a disk
cache; also the simulator path), ``backend`` (launch through CuPy). Importing this package
needs neither a GPU nor CuPy nor Numba: ``la.explain(..., backend="cuda")`` renders kernels
anywhere.
"""
from .backend import BACKEND, CudaBackend

__all__ = ["BACKEND", "CudaBackend"]
