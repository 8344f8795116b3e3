"""How long ``float(la.sum(x))`` takes on the GPU with each way of waiting for the result
(lazyarr/_devices.py ``wait``): spin then sleep (now), doubling sleeps (before 2026-12-03),
and CuPy's blocking copy (no Ctrl-C while the kernel runs). Development tool; findings in
docs/notes/gpu.rst ("Waiting for a result").

    python tools/device/wait_probe.py
"""
from __future__ import annotations

import statistics
import time

import cupy

import lazyarr as la
from lazyarr import _devices


def doubling_sleeps(data):
    event = cupy.cuda.Event(disable_timing=True)
    event.record()
    delay = 1e-5
    while not event.done:
        time.sleep(delay)
        delay = min(2 * delay, 2e-3)


def blocking(data):
    pass                           # data.get() blocks in the driver


def main() -> None:
    now = _devices.wait
    ways = {"spin, then sleeps (now)": now, "doubling sleeps (before)": doubling_sleeps,
            "blocking copy (CuPy)": blocking}
    rng = cupy.random.default_rng(0)
    print(f"{'elements':>10s} " + " ".join(f"{w:>26s}" for w in ways) + "   (median us of 41 calls)")
    with la.config(device="cuda", mode="lazy"):
        for log2n in (10, 20, 24, 26, 28):
            x = la.asarray(rng.random(1 << log2n, dtype=cupy.float32))
            row = []
            for way in ways.values():
                _devices.wait = way
                float(la.sum(la.sqrt(x)))
                times = []
                for _ in range(41):
                    t0 = time.perf_counter()
                    float(la.sum(la.sqrt(x)))
                    times.append(time.perf_counter() - t0)
                row.append(statistics.median(times) * 1e6)
            _devices.wait = now
            print(f"{1 << log2n:>10d} " + " ".join(f"{t:26.1f}" for t in row), flush=True)


if __name__ == "__main__":
    main()
