"""Reductions of a leaf (nothing to fuse) against NumPy: every reduction (min/max/any/all/
argmin/argmax/sum/prod/mean/var/std) of a computed 1024x1024 float64 array over every axis,
lazy and eager mode, interleaved medians (issue 13's "reductions on leaves").
``python tools/peers/leaf_reductions.py [--side 1024 | --shape 512,32,1024] [--reps 31]
[--dtype float32] [--zero]`` (``--shape``: any shape, every axis of it; a middle axis keeps
an inner space that no one stride walks)
(``--zero``: one element set to 0.0, as arrays with a zero in them are: the signed-zero rule
of min/max then has work to do)."""
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
    parser.add_argument("--shape", default=None, help="e.g. 512,32,1024 (instead of --side)")
    parser.add_argument("--reps", type=int, default=31)
    parser.add_argument("--dtype", default="float64")
    parser.add_argument("--zero", action="store_true", help="one element 0.0")
    parser.add_argument("--ops", default="max,min,any,all,argmin,argmax,sum,prod,mean,var,std")
    args = parser.parse_args()
    shape = tuple(int(n) for n in args.shape.split(",")) if args.shape else (args.side, args.side)
    x = np.random.default_rng(0).random(shape).astype(args.dtype)
    if args.zero:
        x[tuple(n // 3 for n in shape)] = 0.0
    else:                              # (a draw may hold an exact zero: none, unless asked)
        x[x == 0] = 0.5
    if "prod" in args.ops:             # products near 1, so that they stay finite
        x = (1 + (x - 0.5) / max(shape)).astype(args.dtype) if not args.zero else x
    lx = la.asarray(x)
    print("| op | axis | NumPy µs | lazy µs | eager µs | NumPy/lazy |\n|---|---|---|---|---|---|")
    for op in args.ops.split(","):
        for axis in (None, *range(len(shape))):
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
