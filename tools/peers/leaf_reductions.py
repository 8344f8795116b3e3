"""Reductions of a leaf (nothing to fuse) against NumPy: min/max/any/all/argmax of a computed
1024x1024 float64 array over every axis, lazy and eager mode, interleaved medians (issue 13's
"reductions on leaves"). ``python tools/peers/leaf_reductions.py [--side 1024] [--reps 31]``."""
from __future__ import annotations

import argparse
import time

import numpy as np

import lazyarr as la


def _median_us(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2] * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--side", type=int, default=1024)
    parser.add_argument("--reps", type=int, default=31)
    parser.add_argument("--dtype", default="float64")
    args = parser.parse_args()
    x = np.random.default_rng(0).random((args.side, args.side)).astype(args.dtype)
    lx = la.asarray(x)
    print("| op | axis | NumPy µs | lazy µs | eager µs | NumPy/lazy |\n|---|---|---|---|---|---|")
    for op in ("max", "min", "any", "all", "argmax"):
        for axis in (None, 0, 1):
            numpy_fn, lazy_fn = getattr(np, op), getattr(la, op)
            with la.config(mode="lazy"):
                lazy_fn(lx, axis=axis).compute()
            t_np = t_lazy = t_eager = float("inf")
            for _ in range(3):   # interleaved: the best median of three rounds each
                t_np = min(t_np, _median_us(lambda: numpy_fn(x, axis=axis), args.reps))
                with la.config(mode="lazy"):
                    t_lazy = min(t_lazy, _median_us(lambda: lazy_fn(lx, axis=axis).compute(), args.reps))
                with la.config(mode="eager"):
                    t_eager = min(t_eager, _median_us(lambda: lazy_fn(lx, axis=axis).compute(), args.reps))
            print(f"| {op} | {axis} | {t_np:.0f} | {t_lazy:.0f} | {t_eager:.0f} | {t_np / t_lazy:.2f}x |")


if __name__ == "__main__":
    main()
