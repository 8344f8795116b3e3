"""CUDA-event timing shared by the device tools. CuPy only (no lazyarr import), so that a probe
can run on the device's own Python before lazyarr's wheels are installed
(cufft_callback_probe.py). Development tool."""
from __future__ import annotations

import statistics

import cupy


def events_ms(fn, reps: int = 30, warm: int = 3) -> float:
    """The median ms of ``reps`` calls of ``fn`` after ``warm`` untimed ones, each alone between
    two CUDA events with the device idle before it (its host launch work counts, as in a
    script's single call)."""
    for _ in range(warm):
        fn()
    s, e = cupy.cuda.Event(), cupy.cuda.Event()
    ts = []
    for _ in range(reps):
        cupy.cuda.Device().synchronize()
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(cupy.cuda.get_elapsed_time(s, e))
    return statistics.median(ts)
