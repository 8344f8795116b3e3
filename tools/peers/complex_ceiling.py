"""Complex elementwise chains against real ones of the same byte width (issue 17): the
fraction of the memory ceiling each reaches, on one device, in one process.

Pairs with the same bytes per element (read, and written where the result is materialized):

* complex64 ``z`` against float64 ``x`` (8 bytes): ``z * z + c`` / ``x * x + c``, and the
  reductions ``sum(abs(z * z + c))`` / ``sum(abs(x * x + c))``;
* each complex reduction against the same arithmetic on a pair of real arrays (``hypot`` of
  ``x*x - y*y + re(c)`` and ``2*x*y + im(c)``): complex ``abs`` is a ``hypot``, more work
  than a real ``abs``;
* complex128 ``z`` against two float64 arrays ``x, y`` (16 bytes read): ``sum(abs(z * z + c))``
  / ``sum(abs(x * x + y))``, and ``z * z + c`` / ``x * x + y`` (16 against 8 bytes written:
  the real pair's bytes are counted as they are).

The ceiling is a copy of the same array (``la.copy``, lazyarr's own kernel: read + write), so
"fraction" = (bytes moved / time) / (copy's bytes / copy's time). One process, the variants
alternated, medians; CUDA events on the GPU.

    python tools/peers/complex_ceiling.py [--device cpu|cuda] [--log2n 26] [--reps 7] [--md FILE]
"""
from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np
from monte_carlo import timed  # (beside this script: CUDA events on the GPU, else wall time)

import lazyarr as la


def finish(x: Any, device: str) -> None:
    x.compute() if isinstance(x, la.LazyArray) else None
    if device == "cuda":
        import cupy
        cupy.cuda.get_current_stream().synchronize()


def cases(device: str, n: int) -> list[tuple[str, int, Callable[[], Any]]]:
    """(name, bytes moved, call)."""
    rng = np.random.default_rng(0)
    x, y = (la.asarray(rng.uniform(-1, 1, n), device=device) for _ in range(2))
    xf, yf = (la.asarray(rng.uniform(-1, 1, n).astype(np.float32), device=device) for _ in range(2))
    z64 = la.asarray((rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(np.complex64),
                     device=device)
    z128 = la.asarray(rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n), device=device)
    c = 0.25 - 0.5j
    return [
        ("copy float64 (the ceiling)", 16 * n, lambda: la.copy(x)),
        ("float64 x*x + 0.25 (8 B in, 8 out)", 16 * n, lambda: x * x + 0.25),
        ("complex64 z*z + c (8 B in, 8 out)", 16 * n, lambda: z64 * z64 + np.complex64(c)),
        ("float64 sum(abs(x*x + 0.25)) (8 B in)", 8 * n, lambda: la.sum(abs(x * x + 0.25))),
        ("complex64 sum(abs(z*z + c)) (8 B in)", 8 * n, lambda: la.sum(abs(z64 * z64 + np.complex64(c)))),
        ("float32 pair, the same arithmetic (8 B in)", 8 * n, lambda: la.sum(la.hypot(
            xf * xf - yf * yf + np.float32(c.real), 2 * xf * yf + np.float32(c.imag)))),
        ("float64 x*x + y (16 B in, 8 out)", 24 * n, lambda: x * x + y),
        ("complex128 z*z + c (16 B in, 16 out)", 32 * n, lambda: z128 * z128 + c),
        ("float64 sum(abs(x*x + y)) (16 B in)", 16 * n, lambda: la.sum(abs(x * x + y))),
        ("complex128 sum(abs(z*z + c)) (16 B in)", 16 * n, lambda: la.sum(abs(z128 * z128 + c))),
        ("float64 pair, the same arithmetic (16 B in)", 16 * n, lambda: la.sum(la.hypot(
            x * x - y * y + c.real, 2 * x * y + c.imag))),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--log2n", type=int, default=26)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--md", help="append the table, as markdown, to this file")
    args = parser.parse_args()
    n = 1 << args.log2n
    with la.config(mode="lazy", device=args.device):
        runs = cases(args.device, n)
        for _, _, fn in runs:               # warm-up: compiles, pools
            finish(fn(), args.device)
        times: dict[str, list[float]] = {name: [] for name, _, _ in runs}
        for _ in range(args.reps):
            for name, _, fn in runs:
                times[name].append(timed(lambda fn=fn: finish(fn(), args.device), args.device))
    ceiling = runs[0][1] / statistics.median(times[runs[0][0]])
    title = (f"Complex against real chains, 2^{args.log2n} elements, {args.device}, medians of "
             f"{args.reps}; ceiling = a copy, {ceiling / 1e9:.0f} GB/s")
    print(title)
    lines = [f"# {title}", "", "| chain | ms | GB/s | fraction of the ceiling |", "|---|---|---|---|"]
    for name, nbytes, _ in runs:
        med = statistics.median(times[name])
        rate = nbytes / med
        print(f"  {name:42s} {med * 1e3:8.2f} ms {rate / 1e9:7.0f} GB/s {rate / ceiling:6.2f}")
        lines.append(f"| {name} | {med * 1e3:.2f} | {rate / 1e9:.0f} | {rate / ceiling:.2f} |")
    if args.md:
        with open(args.md, "a") as f:
            f.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
