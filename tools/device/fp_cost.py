"""What NumPy's floating-point checks cost on the GPU (issue 16: <= 3 % on the elementwise
benchmarks): each workload timed with the checked kernels (NumPy's default error state) and
with the unchecked ones (``np.errstate(all="ignore")``, which runs the kernels of before),
alternated in one process. Development tool; findings in docs/notes/gpu.rst.

    python tools/device/fp_cost.py [--rounds 7] [--profile]

``--profile``: cProfile of the small chain's hot call, checked and unchecked (where the host
time per call goes: the functions with the most own time, per call).

``--latency``: the GPU's own time per small hot call, checked and unchecked: the calls are
queued behind a spin kernel, so the host is ahead and the CUDA events between the first and
the last call measure only the device (kernel latency and the gaps between launches).

Large arrays: CUDA-event medians of the kernel calls; small ones: the median wall time of a
call with a synchronization (host work included).
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time

import cupy
import numpy as np

import lazyarr as la

sys.path.insert(0, "benchmarks")
from common import elementwise_chain  # noqa: E402
from gpu_probe import _b2b as events_ms  # noqa: E402  (CUDA-event ms per call, back to back)


def wall_us(fn, reps=300):
    """The median wall time of one call with its synchronization (asv's CachedCall measure:
    a mean takes in the host's hiccups, which were larger than the checks' cost)."""
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        cupy.cuda.Device().synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--latency", action="store_true")
    opts = ap.parse_args()
    rounds = opts.rounds
    g = cupy.random.default_rng(0)
    with la.config(device="cuda", mode="lazy"):
        x = la.asarray(g.random(1 << 28, dtype=cupy.float32))
        y = la.asarray(g.random(1 << 28, dtype=cupy.float32))
        x26 = la.asarray(g.random(1 << 26, dtype=cupy.float32))
        u = la.asarray(g.random((4096, 4096), dtype=cupy.float32))
        m = la.asarray(g.random((16384, 16384), dtype=cupy.float32))
        xs = la.asarray(g.random(1024, dtype=cupy.float32))
        ys = la.asarray(g.random(1024, dtype=cupy.float32))

        def jacobi(v):
            return 0.2 * (v[1:-1, 1:-1] + v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:])
        work = {
            "sum(abs(x)) 2^28": (events_ms, lambda: la.sum(abs(x)).compute(), "ms"),
            "x*y+1.5 2^28": (events_ms, lambda: (x * y + 1.5).compute(), "ms"),
            "chain 2^28": (events_ms, lambda: la.sum(la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y).compute(), "ms"),
            "16-op chain 2^26": (events_ms, lambda: elementwise_chain(x26, 16).compute(), "ms"),
            # (host-bound: 100 calls back to back a round, not 20)
            "jacobi 4096^2": (lambda fn: events_ms(fn, reps=100), lambda: jacobi(u).compute(), "ms"),
            # (4096^2 is host-bound: a call's host work outlasts its ~0.05 ms kernel)
            "jacobi 16384^2": (events_ms, lambda: jacobi(m).compute(), "ms"),
            "sum(m*m, axis=0) 16384^2": (events_ms, lambda: la.sum(m * m, axis=0).compute(), "ms"),
            "sum(m*m, axis=1) 16384^2": (events_ms, lambda: la.sum(m * m, axis=1).compute(), "ms"),
            "chain 1024, hot call": (wall_us, lambda: la.sum(la.sqrt(abs(xs * ys + 1.5)) * la.tanh(xs) - ys).compute(), "us"),
            "x*y+1.5 1024, hot call": (wall_us, lambda: (xs * ys + 1.5).compute(), "us"),
        }
        if opts.latency:
            device_latency({k: work[k][1] for k in work if k.endswith("hot call")}, rounds)
        print(f"{'workload':28s} {'checked':>10s} {'unchecked':>10s} {'ratio':>7s}   (medians of {rounds} alternated rounds)")
        for name, (timer, fn, unit) in work.items():
            c, u_ = alternated(fn, timer, rounds)
            print(f"{name:28s} {c:10.4f} {u_:10.4f} {c / u_:7.3f}   {unit}", flush=True)
        # (Jacobi 4096²'s call is host-bound: its rounds of 100 calls moved 0.88-1.06 from call
        # to call, 2026-12-04c/d; call by call, the host's drift falls on both alike)
        paired({k: work[k][1] for k in work if k.endswith("hot call") or k == "jacobi 4096^2"})
        if opts.profile:
            profile_hot_call(work["chain 1024, hot call"][1])


def alternated(fn, timer, rounds: int) -> tuple[float, float]:
    """``timer(fn)`` checked and unchecked (``np.errstate(all="ignore")``) in turn, ``rounds``
    times after a warm-up of each: the medians (checked, unchecked)."""
    fn()
    with np.errstate(all="ignore"):
        fn()
    checked, unchecked = [], []
    for _ in range(rounds):
        checked.append(timer(fn))
        with np.errstate(all="ignore"):
            unchecked.append(timer(fn))
    return statistics.median(checked), statistics.median(unchecked)


def paired(work: dict, pairs: int = 4000) -> None:
    """The hot calls alternated call by call (checked and unchecked, ``pairs`` times), each
    call's wall time with its synchronization: the host's drift, which moves a round of 300
    calls by more than the checks cost, falls on both alike. Medians and the median of the
    per-pair ratios."""
    sync = cupy.cuda.Device().synchronize
    print(f"{'call by call (median)':28s} {'checked':>10s} {'unchecked':>10s} {'ratio':>7s}   us, {pairs} pairs")
    for name, fn in work.items():
        checked, unchecked = [], []
        for _ in range(200):
            fn()
        sync()
        for i in range(pairs):
            for ignoring in ((False, True) if i % 2 else (True, False)):  # (either first in turn)
                with np.errstate(all="ignore") if ignoring else contextlib.nullcontext():
                    t0 = time.perf_counter()
                    fn()
                    sync()
                    t = time.perf_counter() - t0
                (unchecked if ignoring else checked).append(t)
        c, u_ = statistics.median(checked) * 1e6, statistics.median(unchecked) * 1e6
        ratio = statistics.median(a / b for a, b in zip(checked, unchecked))
        print(f"{name:28s} {c:10.3f} {u_:10.3f} {c / u_:7.3f}   (pairs' median ratio {ratio:.3f})",
              flush=True)


_SPIN = None


def _spin(ms: float) -> None:
    """Keeps the GPU busy for about ``ms`` milliseconds (a clock64 loop on one thread)."""
    global _SPIN
    if _SPIN is None:
        _SPIN = cupy.RawKernel(r"""
        extern "C" __global__ void spin(long long cycles) {
            long long t0 = clock64();
            while (clock64() - t0 < cycles) {}
        }""", "spin")
    rate_khz = cupy.cuda.runtime.getDeviceProperties(0)["clockRate"]
    _SPIN((1,), (1,), (np.int64(ms * rate_khz),))


def device_us(fn, calls: int = 200) -> float:
    """The device time per call of ``calls`` calls queued behind a spin kernel (us)."""
    cupy.cuda.Device().synchronize()
    _spin(4.0 + calls * 0.1)               # longer than the host needs to issue the calls
    s, e = cupy.cuda.Event(), cupy.cuda.Event()
    s.record()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    issued = time.perf_counter() - t0
    ahead = not s.done                     # the spin still ran when the last call was issued
    e.record()
    e.synchronize()
    if not ahead:
        print(f"  (the host took {issued * 1e3:.1f} ms to issue: not ahead of the spin)")
    return cupy.cuda.get_elapsed_time(s, e) * 1e3 / calls


def device_latency(work: dict, rounds: int) -> None:
    print(f"{'device time per call':28s} {'checked':>10s} {'unchecked':>10s} {'ratio':>7s}   us")
    for name, fn in work.items():
        c, u_ = alternated(fn, device_us, rounds)
        print(f"{name:28s} {c:10.3f} {u_:10.3f} {c / u_:7.3f}", flush=True)


def profile_hot_call(fn, calls: int = 3000) -> None:
    """The functions with the most own time per hot call, checked and unchecked."""
    import cProfile
    import pstats
    for label in ("checked", "unchecked"):
        prof = cProfile.Profile()
        with np.errstate(all="ignore") if label == "unchecked" else contextlib.nullcontext():
            for _ in range(200):
                fn()
            prof.enable()
            for _ in range(calls):
                fn()
                cupy.cuda.Device().synchronize()
            prof.disable()
        rows = sorted(pstats.Stats(prof).stats.items(), key=lambda kv: -kv[1][2])[:14]
        print(f"\n{label}: own time per call (us), calls per call")
        for (file, line, func), (_, ncalls, tottime, _, _) in rows:
            print(f"  {tottime / calls * 1e6:7.2f}  {ncalls / calls:5.1f}  {func} ({file.rsplit('/', 1)[-1]}:{line})")


if __name__ == "__main__":
    main()
