"""Library calls fed by a pending chain (issue 18's CPU benchmarks, asv ``bench_library``).

* ``sort``, ``argsort``, ``cumsum``, ``unique`` of ``f(x) = sqrt(abs(x)) * 2 - 1``, float32:
  NumPy on ``f(x)`` already computed; lazyarr on the pending chain ``f(x)``; lazyarr on
  ``f(x)`` already computed. The target: pending / computed <= 1.1 (the chain costs almost
  nothing extra: it is computed straight into the buffer the call works in).
* ``sum(maximum(A @ B + bias, 0))``, side² float32: NumPy's ``A @ B`` alone, NumPy's whole
  expression, lazyarr's (one library call + one fused kernel). The target: lazyarr / NumPy's
  ``A @ B`` alone <= 1.05.

One process, the variants alternated run by run, medians.

    python tools/peers/library_calls.py [--device cpu] [--sizes 20 24] [--side 4096] [--reps 5] [--md FILE]

``--md docs/_static/perf/library_calls_cpu.md`` appends the tables (markdown) to a file that
``tools/perf_page.py`` puts on the performance page.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any, Callable

import numpy as np

import lazyarr as la
from lazyarr.backends import cpu_fused

CALLS = ("sort", "argsort", "cumsum", "unique")


def f(x: Any) -> Any:
    return la.sqrt(la.abs(x)) * 2 - 1


def timed(fns: dict[str, Callable[[], Any]], reps: int) -> dict[str, float]:
    """Median seconds of each function, the functions alternated run by run (one warm-up)."""
    for fn in fns.values():
        np.asarray(fn())
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            t = time.perf_counter()
            np.asarray(fn())
            times[name].append(time.perf_counter() - t)
    return {name: statistics.median(ts) for name, ts in times.items()}


def chain_calls(n: int, reps: int) -> list[list[str]]:
    x_np = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    fx_np = np.sqrt(np.abs(x_np)) * 2 - 1
    x, fx = la.asarray(x_np), la.asarray(fx_np)
    rows = []
    for name in CALLS:
        np_call, la_call = getattr(np, name), getattr(la, name)
        assert np.array_equal(np.asarray(la_call(f(x))), np.asarray(la_call(fx))), name
        t = timed({"numpy": lambda: np_call(fx_np), "pending": lambda: la_call(f(x)),
                   "computed": lambda: la_call(fx)}, reps)
        rows.append([f"{name}(f(x)), 2^{n.bit_length() - 1}", f"{t['numpy'] * 1e3:.2f}",
                     f"{t['pending'] * 1e3:.2f}", f"{t['computed'] * 1e3:.2f}",
                     f"{t['pending'] / t['computed']:.2f}"])
        print("  ".join(rows[-1]), flush=True)
    return rows


def matmul_epilogue(side: int, reps: int) -> list[list[str]]:
    rng = np.random.default_rng(0)
    a_np, b_np = (rng.standard_normal((side, side), dtype=np.float32) for _ in range(2))
    bias_np = rng.standard_normal(side, dtype=np.float32)
    a, b, bias = la.asarray(a_np), la.asarray(b_np), la.asarray(bias_np)
    t = timed({"A @ B alone (numpy)": lambda: a_np @ b_np,
               "numpy": lambda: np.sum(np.maximum(a_np @ b_np + bias_np, 0)),
               "lazyarr": lambda: la.sum(la.maximum(a @ b + bias, 0))}, reps)
    base = t["A @ B alone (numpy)"]
    return [[name, f"{s * 1e3:.1f}", f"{s / base:.3f}"] for name, s in t.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 24], help="log2 of n")
    parser.add_argument("--side", type=int, default=4096)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--device", choices=["cpu"], default="cpu",
                        help="the device measured (the CPU only: issue 18's CPU side; the "
                        "performance page names the command with it)")
    parser.add_argument("--md", help="append the tables, as markdown, to this file")
    args = parser.parse_args()
    where = (f"{args.device} ({cpu_fused.get_num_threads()} threads, load average "
             f"{os.getloadavg()[0]:.1f} before the run), medians of {args.reps}")
    lines: list[str] = []
    with la.config(mode="lazy", device=args.device):
        rows = [r for k in args.sizes for r in chain_calls(2**k, args.reps)]
        title = f"library calls of f(x) = sqrt(abs(x)) * 2 - 1, float32, {where}"
        lines += [f"# {title}", "", "| call | numpy, f(x) computed (ms) | lazyarr, f(x) pending "
                  "(ms) | lazyarr, f(x) computed (ms) | pending / computed |", "|---|---|---|---|---|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        print(title)
        rows = matmul_epilogue(args.side, args.reps)
        title = f"sum(maximum(A @ B + bias, 0)), {args.side}² float32, {where}"
        print(title)
        lines += ["", f"# {title}", "", "| variant | ms | vs numpy's A @ B alone |", "|---|---|---|"]
        for r in rows:
            print("  ".join(r))
            lines.append("| " + " | ".join(r) + " |")
    if args.md:
        with open(args.md, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
