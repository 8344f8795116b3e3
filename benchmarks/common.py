"""Shared helpers for the lazyarr asv suite: devices, modes, sizes, data, and the workloads.

Every benchmark class takes ``device`` and ``mode`` as its first two parameters. ``setup``
calls :func:`prepare`, which

* raises ``NotImplementedError`` (asv then records the combination as skipped) when the
  device is ``"cuda"`` and no usable GPU is present, or when a size is not benchmarked on
  that device (CPU sizes stop at 2**25, GPU sizes go to 2**28);
* sets lazyarr's process-wide mode and device (each asv benchmark runs in its own process).

Sizes (and chain lengths) are listed largest first: asv's graph page selects the first values
of each parameter by default, and the large sizes are where the fused kernels matter.

GPU timings include completion: every timed body ends with :func:`finish`, which
materializes and then synchronizes the device, so a number is what a user's script waits for.

asv-runner re-runs ``setup`` before every timed call, so input data is generated once per
process and memoized here (:func:`data`); lazyarr never writes into its inputs.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import lazyarr as la

if os.environ.get("LAZYARR_BENCH_PREIMPORT"):
    # benchmarks/run_asv_gpu.sh: import CuPy and the cuda backend once, in asv's forkserver,
    # instead of in every forked benchmark process. The script checks first that forked
    # children can still use the GPU (neither import should initialize CUDA).
    try:
        import cupy  # noqa: F401

        import lazyarr.backends.cuda  # noqa: F401
    except Exception:
        pass

DEVICES = ["cpu", "cuda"]
MODES = ["eager", "lazy"]

#: Sizes per device. A size outside a device's set is skipped on that device.
#: The CPU stops at 2**25 (128 MiB per float32 input on a 2-core machine); the GPU goes on
#: to 2**28 (1 GiB per input), the size of the issue's targets, with fewer points (each GPU
#: combination pays a CUDA context in its own process). Classes may pass their own sets.
CPU_SIZES = (2**10, 2**15, 2**20, 2**22, 2**25)
GPU_SIZES = (2**10, 2**20, 2**25, 2**28)

#: Default timing attributes (inherited by every benchmark class through ``Benchmark``).
#: Two rounds (two processes) with a short time budget per combination keep a full
#: ``asv run`` of one commit to a few minutes on the 2-core CI machine.
ROUNDS = 2
REPEAT = (3, 10, 1.0)   # per round: (min samples, max samples, seconds budget)


class Benchmark:
    """Base class: timing attributes shared by the suite."""

    rounds = ROUNDS
    repeat = REPEAT
    timeout = 300.0
    warmup_time = 0.05


# --------------------------------------------------------------------------- devices
@functools.cache
def gpu_available() -> bool:
    try:
        return bool(la.cuda_available())
    except Exception:
        return False


def prepare(device: str, mode: str | None = None, n: int | None = None,
            cpu: Sequence[int] | None = CPU_SIZES, cuda: Sequence[int] | None = GPU_SIZES) -> None:
    """Skip (``NotImplementedError``) what this machine or this size does not run; set the mode.

    Two environment variables narrow a run without changing the suite's parameters:
    ``LAZYARR_BENCH_DEVICES`` (e.g. ``cuda``: the GPU machine skips the CPU rows) and
    ``LAZYARR_BENCH_MAX_SIZE`` (e.g. ``1048576``: the CI smoke run skips big arrays).
    """
    only = os.environ.get("LAZYARR_BENCH_DEVICES")
    if only and device not in only.split(","):
        raise NotImplementedError(f"LAZYARR_BENCH_DEVICES={only} excludes {device}")
    if device == "cuda" and not gpu_available():
        raise NotImplementedError("no usable GPU (CuPy + numba-cuda) on this machine")
    allowed = cpu if device == "cpu" else cuda
    if n is not None and allowed is not None and n not in allowed:
        raise NotImplementedError(f"size {n} is not benchmarked on {device}")
    if n is not None and n > int(os.environ.get("LAZYARR_BENCH_MAX_SIZE", 1 << 62)):
        raise NotImplementedError(f"LAZYARR_BENCH_MAX_SIZE excludes size {n}")
    # a setup's warm-up call compiles the kernel before the timed calls: no op-by-op first
    # calls while it compiles (backends/cuda/first_calls.py) inside a measurement, and on
    # the CPU no compiled loop arriving from the compile thread between two timed calls
    # (backends/cpu_loops.py: the steady state, a program's loop, is what is timed)
    options = {"device": device, "compile": "wait", "cpu_loops": "wait"}
    if mode is not None:
        options["mode"] = mode
    la.set_config(**options)


def sync(device: str) -> None:
    """Wait for the device to finish everything queued (no-op on the CPU)."""
    if device == "cuda":
        import cupy

        cupy.cuda.runtime.deviceSynchronize()


def finish(result: Any, device: str) -> Any:
    """Materialize ``result`` (a pending array runs its kernel) and wait for the device."""
    if isinstance(result, la.LazyArray):
        result.compute()
    sync(device)
    return result


# --------------------------------------------------------------------------- data
_DATA: dict[tuple, Any] = {}


def data(device: str, shape: int | tuple[int, ...], seed: int = 0, low: float = -1.0,
         high: float = 1.0, dtype: Any = np.float32) -> la.LazyArray:
    """A float array uniform in ``[low, high)`` on ``device``, generated on that device once
    per process (memoized: asv re-runs ``setup`` before every timed call)."""
    key = (device, shape, seed, low, high, np.dtype(dtype).str)
    arr = _DATA.get(key)
    if arr is None:
        if device == "cuda":
            import cupy

            arr = cupy.random.default_rng(seed).random(shape, dtype=dtype)
        else:
            arr = np.random.default_rng(seed).random(shape, dtype=dtype)
        arr *= dtype(high - low)
        arr += dtype(low)
        _DATA[key] = arr
        sync(device)
    return la.asarray(arr)


# --------------------------------------------------------------------------- workloads
def sum_abs(x: Any, y: Any = None) -> Any:
    """The seed benchmark: ``sum(abs(x))`` (one input)."""
    return la.sum(abs(x))


def axpy(x: Any, y: Any) -> Any:
    """``x * y + 1.5`` materialized (two inputs read, one output written)."""
    return x * y + 1.5


def chain(x: Any, y: Any) -> Any:
    """The issue's chain ``sum(sqrt(abs(x*y + 1.5)) * tanh(x) - y)``."""
    return la.sum(la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y)


#: The three headline expressions, shared with tools/peers/cpu_peers.py and gpu_peers.py.
HEADLINE: dict[str, Callable[[Any, Any], Any]] = {"sum_abs": sum_abs, "axpy": axpy, "chain": chain}


def _step(i: int) -> Callable[[Any], Any]:
    # a bounded cycle on [-1, 1] inputs: values stay in [0, 2) and never hit a domain error
    return (lambda t: t * 1.0001, lambda t: t + 0.5, abs, la.sqrt)[i % 4]


def elementwise_chain(x: Any, length: int) -> Any:
    """``length`` elementwise ops applied one after another (mul, add, abs, sqrt, ...)."""
    for i in range(length):
        x = _step(i)(x)
    return x


def lazyarr_root() -> str:
    """The directory lazyarr was imported from, for fresh processes (``timeraw_``) that must
    import the same lazyarr (asv's existing-environment runs put it on the path by hand)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(la.__file__)))
