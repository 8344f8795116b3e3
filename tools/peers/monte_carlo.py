"""Monte Carlo pi with two uniform draws per sample (issue 17's benchmark): lazyarr's fused
draws (``default_rng(0, fused=True)``: generated inside the one kernel, nothing stored)
against NumPy (CPU) or CuPy eager (cuda; cuRAND draws written to memory, then the test), and
lazyarr with the library's generator (draws in memory, the rest fused). One process, the
variants alternated call by call, medians (CUDA events around each call on the GPU).

    python tools/peers/monte_carlo.py [--device cpu|cuda] [--log2n 28] [--reps 7] [--md FILE]

``--md docs/_static/perf/monte_carlo_<device>.md`` appends the table (markdown) to a file that
``tools/perf_page.py`` puts on the performance page.
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import numpy as np

import lazyarr as la


def variants(device: str, n: int) -> dict[str, Callable[[], float]]:
    def fused() -> float:
        rng = la.random.default_rng(0, fused=True, device=device)
        return 4 * float(la.mean(rng.random(n) ** 2 + rng.random(n) ** 2 < 1))

    def library_draws() -> float:
        rng = la.random.default_rng(0, device=device)
        return 4 * float(la.mean(rng.random(n) ** 2 + rng.random(n) ** 2 < 1))

    if device == "cpu":
        def peer() -> float:
            rng = np.random.default_rng(0)
            return 4 * float(np.mean(rng.random(n) ** 2 + rng.random(n) ** 2 < 1))
        name = "numpy"
    else:
        import cupy

        def peer() -> float:
            rng = cupy.random.default_rng(0)
            return 4 * float(cupy.mean(rng.random(n) ** 2 + rng.random(n) ** 2 < 1))
        name = "cupy eager"
    return {name: peer, "lazyarr fused draws": fused, "lazyarr, library draws": library_draws}


def timed(fn: Callable[[], Any], device: str) -> float:
    """Seconds of one call (CUDA events on the GPU: the call's host work and kernels)."""
    if device == "cpu":
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t
    import cupy
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    cupy.cuda.get_current_stream().synchronize()
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    return cupy.cuda.get_elapsed_time(start, stop) / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--log2n", type=int, default=28)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--md", help="append the table, as markdown, to this file")
    args = parser.parse_args()
    n = 1 << args.log2n
    fns = variants(args.device, n)
    with la.config(mode="lazy", device=args.device):
        values = {name: fn() for name, fn in fns.items()}     # warm-up: compiles, pools
        times: dict[str, list[float]] = {name: [] for name in fns}
        for _ in range(args.reps):
            for name, fn in fns.items():
                times[name].append(timed(fn, args.device))
    base = statistics.median(next(iter(times.values())))
    title = f"Monte Carlo pi, 2^{args.log2n} samples, {args.device}, medians of {args.reps}"
    print(f"{title}:")
    lines = [f"# {title}", "", "| variant | ms | vs the first | pi |", "|---|---|---|---|"]
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"  {name:24s} {med * 1e3:9.2f} ms  {base / med:5.2f}x  pi ~ {values[name]:.5f}")
        lines.append(f"| {name} | {med * 1e3:.2f} | {base / med:.2f}x | {values[name]:.5f} |")
    if args.md:
        with open(args.md, "a") as f:
            f.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
