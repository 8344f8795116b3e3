"""Issue 14's element loop on cuda (``s = s + a[i] * b[i]``, 2,000 iterations over computed
arrays; target >= 5x CuPy eager): medians of lazy and eager rounds, alternated after a
warm-up, then where a lazy iteration's host time goes (own time per iteration, profiled).
Development tool; findings in docs/notes/gpu.rst.

    python tools/device/element_loop.py [--n 2000] [--rounds 5]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time

import cupy

import lazyarr as la


def loop(la_a, la_b, n):
    s = la.asarray(cupy.zeros((), cupy.float64))
    for i in range(n):
        s = s + la_a[i] * la_b[i]
    return float(s)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    a = cupy.random.default_rng(1).random(args.n)
    b = cupy.random.default_rng(2).random(args.n)
    want = float(cupy.asnumpy(a) @ cupy.asnumpy(b))
    arrays = {}
    for mode in ("lazy", "eager"):
        with la.config(device="cuda", mode=mode):
            arrays[mode] = (la.asarray(a), la.asarray(b))
            got = loop(*arrays[mode], args.n)          # compiles, warms
            assert abs(got - want) <= 1e-9 * abs(want), (mode, got, want)
    times = {"lazy": [], "eager": []}
    for _ in range(args.rounds):
        for mode in ("lazy", "eager"):
            with la.config(device="cuda", mode=mode):
                cupy.cuda.Device().synchronize()
                t0 = time.perf_counter()
                loop(*arrays[mode], args.n)
                times[mode].append((time.perf_counter() - t0) * 1e3)
    lazy, eager = statistics.median(times["lazy"]), statistics.median(times["eager"])
    print(f"element loop {args.n}: lazy {lazy:.2f} ms, eager {eager:.2f} ms, eager / lazy "
          f"{eager / lazy:.2f}x (rounds: lazy {[round(t, 1) for t in times['lazy']]}, "
          f"eager {[round(t, 1) for t in times['eager']]})", flush=True)
    with la.config(device="cuda", mode="lazy"):
        prof = cProfile.Profile()
        prof.enable()
        loop(*arrays["lazy"], args.n)
        prof.disable()
    stats = pstats.Stats(prof).stats
    total = sum(v[2] for v in stats.values()) / args.n * 1e6
    print(f"profiled own time per iteration {total:.2f} us")
    rows = sorted(stats.items(), key=lambda kv: -kv[1][2])[:30]
    for (file, line, func), (_, ncalls, tottime, cumtime, _) in rows:
        print(f"  {tottime / args.n * 1e6:7.2f}  {cumtime / args.n * 1e6:7.2f}  {ncalls / args.n:6.2f}"
              f"  {func} ({file.rsplit('/', 1)[-1]}:{line})")


if __name__ == "__main__":
    main()
