"""Where an in-place stencil step's time goes on the GPU (issue 15's 100 steps of
``u[1:-1, 1:-1] = jacobi(u)`` at 4096² float32), and the Python element loop (issue 14).
Development tool; findings in docs/notes/gpu.rst.

    python tools/device/stencil_probe.py [--side 4096] [--steps 100] [--only-steps]

Prints, per variant: the time per step over ``--steps`` steps with CUDA events (host work
included), the host time to issue the steps (before the final sync), the kernels launched per
step (lazyarr's launch counter), then a cProfile of 20 steps (top functions by own time).
torch.compile's 100 steps (the issue's peer) are timed beside, in the same process, when torch
is importable. ``--only-steps``: only the in-place rows, torch.compile's and a profile of 1,000
steps in µs of own time per step (where a step's host time goes).
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

import cupy

import lazyarr as la


def jacobi(u):
    return 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def steps(u, n):
    for _ in range(n):
        u[1:-1, 1:-1] = jacobi(u)
    return u


def timed(label, fn, reps=3):
    fn()                                   # compiles, first-touch
    cupy.cuda.Device().synchronize()
    best = None
    for _ in range(reps):
        s, e = cupy.cuda.Event(), cupy.cuda.Event()
        s.record()
        t0 = time.perf_counter()
        fn()
        host = time.perf_counter() - t0
        e.record()
        e.synchronize()
        ms = cupy.cuda.get_elapsed_time(s, e)
        best = min(best or (ms, host), (ms, host))
    print(f"{label:44s} {best[0]:9.3f} ms   host issue {best[1] * 1e3:9.3f} ms", flush=True)
    return best[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--only-steps", action="store_true")
    args = ap.parse_args()
    n = args.steps
    w = cupy.random.default_rng(0).random((args.side, args.side), dtype=cupy.float32)
    with la.config(device="cuda", mode="lazy"):
        lw = la.asarray(w)
        timed(f"lazyarr {n} in-place steps", lambda: steps(lw.copy(), n).compute())
        torch_steps(w, n)
        timed(f"lazyarr {n} in-place steps", lambda: steps(lw.copy(), n).compute())
        if args.only_steps:
            u = lw.copy()
            steps(u, 3)
            profile_per_step(lambda: steps(u, 1), 1000)
            profile_per_step(lambda: jacobi(u).compute(), 1000)
            return
        timed(f"lazyarr {n} steps, u = w.copy() only", lambda: lw.copy().compute())
        timed(f"lazyarr {n} x v = jacobi(u) (no write)",
              lambda: [jacobi(lw).compute() for _ in range(n)])
        u = lw.copy()
        steps(u, 3)
        print("kernels per step:", len(la.explain(lambda: steps(u, 1)).kernels))
        print(la.explain(jacobi(u)))
        prof = cProfile.Profile()
        cupy.cuda.Device().synchronize()
        prof.enable()
        steps(u, 20)
        u.compute()
        cupy.cuda.Device().synchronize()
        prof.disable()
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(30)
        pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(40)
        print(text.getvalue()[-14000:])
        lw4 = la.asarray(w)
        timed("float(sum(jacobi(sqrt(w)))) x 20",
              lambda: [float(la.sum(jacobi(la.sqrt(lw4)))) for _ in range(20)])
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(20):
            float(la.sum(jacobi(la.sqrt(lw4))))
        prof.disable()
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(20)
        print(text.getvalue()[-5000:])
    with la.config(device="cuda", mode="eager"):
        timed(f"eager (CuPy) {n} in-place steps", lambda: steps(la.asarray(w).copy(), n).compute())
    cu = w.copy()
    timed(f"CuPy {n} in-place steps", lambda: steps(cu.copy(), n))
    a = cupy.random.default_rng(1).random(2000)
    b = cupy.random.default_rng(2).random(2000)
    for mode in ("lazy", "eager"):
        with la.config(device="cuda", mode=mode):
            la_a, la_b = la.asarray(a), la.asarray(b)

            def loop():
                s = la.asarray(cupy.zeros((), cupy.float64))
                for i in range(2000):
                    s = s + la_a[i] * la_b[i]
                return float(s)
            timed(f"element loop 2000, {mode}", loop, reps=1)
            if mode == "lazy":          # where an iteration's host time goes
                prof = cProfile.Profile()
                prof.enable()
                loop()
                prof.disable()
                text = io.StringIO()
                pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(25)
                pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(30)
                print(text.getvalue()[-12000:])


def torch_steps(w, n) -> None:
    """torch.compile (inductor) on the same steps, the array mutated in place as here."""
    try:
        import torch
    except ImportError as exc:
        print("torch.compile unavailable:", exc)
        return

    def step(t):
        t[1:-1, 1:-1] = 0.2 * (t[1:-1, 1:-1] + t[:-2, 1:-1] + t[2:, 1:-1] + t[1:-1, :-2] + t[1:-1, 2:])

    compiled = torch.compile(step)
    tw = torch.from_dlpack(w)

    def run():
        t = tw.clone()
        for _ in range(n):
            compiled(t)
    timed(f"torch.compile {n} in-place steps", run)


def profile_per_step(fn, calls: int) -> None:
    """The functions with the most own time, in µs per call of ``fn`` (profiled)."""
    for _ in range(50):
        fn()
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    wall = (time.perf_counter() - t0) / calls * 1e6
    cupy.cuda.Device().synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    cupy.cuda.Device().synchronize()
    stats = pstats.Stats(prof).stats
    total = sum(v[2] for v in stats.values()) / calls * 1e6
    print(f"\nper call: {wall:.1f} us issued unprofiled; profiled own time {total:.1f} us")
    rows = sorted(stats.items(), key=lambda kv: -kv[1][2])[:28]
    for (file, line, func), (_, ncalls, tottime, _, _) in rows:
        print(f"  {tottime / calls * 1e6:7.2f}  {ncalls / calls:5.1f}  {func} ({file.rsplit('/', 1)[-1]}:{line})")


if __name__ == "__main__":
    main()
