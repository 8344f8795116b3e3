"""The simulated cuda device (``LAZYARR_CUDA_SIM=1``): the cuda backend with its kernels
launched in Numba's CUDA simulator and host memory (NumPy arrays) standing in for device buffers.

Everything but the launch is the real backend's (:class:`.backend.CudaBackend`): the same
analysis, rendering, argument recipe and launch geometry, so placement, planning and codegen
are tested on a machine without a GPU. What differs: the simulator has no warp shuffles (the
lanes of a row reduce through shared memory), kernel arguments are 1-D NumPy arrays instead of
pointers, float functions are NumPy's instead of libdevice's, and NumPy stands in for CuPy (the
second step of var/std/argmin/argmax). Launches run one at a time (the simulator's rule) on a
small simulated GPU (2 multiprocessors), so grids stay small. docs/testing.rst says what only a
real GPU checks.
"""
from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np
from numpy.lib.array_utils import byte_bounds
from numpy.lib.stride_tricks import as_strided

from ... import _compile_thread
from ..._counters import CounterMap
from . import flags
from . import render as R
from .backend import CudaBackend, _Entry
from .compile import simulator_kernel
from .stencil import host_address

SIMULATED_SMS = 2
SIMULATED_CC = (9, 0)
_LAUNCH = threading.Lock()      # the simulator runs one kernel at a time


def _pointer(a: np.ndarray) -> np.ndarray:
    """A 1-D array whose element 0 is ``a``'s element 0, spanning every element of ``a`` and
    on to the end of its allocation, as a device pointer reaches (a stencil's kernel reads
    its other views through the lowest one: stencil.py)."""
    if a.dtype == np.bool_:
        a = a.view(np.uint8)
    if a.size == 0:
        return np.zeros(1, a.dtype)
    span = 1 + sum((n - 1) * (s // a.itemsize) for n, s in zip(a.shape, a.strides))
    first, root = host_address(a)
    lo, hi = byte_bounds(root)
    if lo <= first < hi:
        span = max(span, (hi - first) // a.itemsize)
    return as_strided(a, shape=(span,), strides=(a.itemsize,))


class SimulatedCudaBackend(CudaBackend):
    name = "cuda-sim"
    shuffles = False

    def xp(self) -> Any:
        return np

    def device_info(self) -> tuple[int, tuple[int, int]]:
        return SIMULATED_SMS, SIMULATED_CC

    def load(self, rendered: R.Rendered, cc: tuple[int, int]) -> Any:
        return simulator_kernel(rendered)

    def loaded(self, rendered: R.Rendered, cc: tuple[int, int]) -> Any:
        """None: every new kernel is built (on the compile thread under ``compile=
        "background"``, so the simulated device runs that path)."""
        return None

    def compile_later(self, rendered: R.Rendered, cc: tuple[int, int]) -> Any:
        return _compile_thread.submit(lambda: self.load(rendered, cc))

    @staticmethod
    def pointer(a: Any) -> int:
        return a.__array_interface__["data"][0]

    def usable(self, a: Any) -> Any:
        """Element 0 first (no negative strides: a 1-D view cannot start before its base), whole
        elements, and writeable (the simulator writes to its arguments' flags)."""
        if type(a) is CounterMap:
            return a
        a = np.asarray(a)
        if any(s < 0 or s % a.itemsize for s in a.strides) or not a.flags.writeable:
            return np.array(a, order="C")
        return a

    def _stream_buffers(self, nbytes: int) -> tuple[Any, Any]:
        return np.empty(max(nbytes, 8), np.uint8), np.zeros(1, np.uint32)

    def stream(self) -> int:
        return 0                        # (one stream: every launch runs to its end at once)

    def place(self) -> int:
        return 0

    def launch(self, entry: _Entry, args: tuple) -> None:
        values = list(args)
        if entry.acc is not None:       # the partials: the scratch bytes as accumulators
            slot = entry.partials_slot
            values[slot] = values[slot][: entry.scratch_bytes].view(entry.acc)
        values = [_pointer(v) if isinstance(v, np.ndarray) else v for v in values]
        with _LAUNCH, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            entry.fn[entry.grid, entry.block](*values)

    def prepare_constants(self, entry: _Entry) -> None:
        """The simulated kernel takes the template's values as they are."""

    def launch_checked(self, entry: _Entry, args: list[Any]) -> None:
        """The simulated kernel has finished when the launch returns: its flags are reported
        at once."""
        words = args[entry.fpe_slot] = np.zeros(flags.WORDS, np.uint32)
        self.launch(entry, tuple(args))
        flags.report_words(words, entry.sites)


BACKEND = SimulatedCudaBackend()
