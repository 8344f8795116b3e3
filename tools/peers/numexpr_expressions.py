"""lazyarr vs NumPy over numexpr's own test expressions (issue 13, item 2), interleaved medians.

    python tools/peers/numexpr_expressions.py [--n 4194304] [--reps 9] [--json out.json]

The expression list and data are ``benchmarks/bench_numexpr.py``'s. For each dtype and
expression: lazyarr's value is checked against NumPy's (same dtype and shape, values within
a few ulps, NaN where NaN), then NumPy and lazyarr (lazy mode, CPU) are timed alternately,
``--reps`` rounds of one call each after a warm-up, and the ratio of the medians
(NumPy / lazyarr, > 1 = lazyarr faster) is printed, slowest first. An expression lazyarr
cannot evaluate is reported with its error.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.append(os.path.join(os.path.dirname(__file__), "..", ".."))   # benchmarks/ (after an installed lazyarr)
from benchmarks.bench_numexpr import DTYPES, EXPRESSIONS, evaluate, namespace  # noqa: E402

import lazyarr as la  # noqa: E402


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind == "f":
        return bool(np.allclose(got, want, rtol=8 * np.finfo(want.dtype).eps, atol=0, equal_nan=True))
    return bool(np.array_equal(got, want))


def measure(expr: str, dtype: str, n: int, reps: int) -> dict[str, object]:
    np_names, la_names = namespace("numpy", dtype, n), namespace("lazyarr", dtype, n)
    want = evaluate(expr, np_names)
    try:
        got = np.asarray(evaluate(expr, la_names))
    except Exception as exc:  # noqa: BLE001 - reported
        return {"expr": expr, "dtype": dtype, "error": f"{type(exc).__name__}: {exc}"}
    if not _same(got, want):
        return {"expr": expr, "dtype": dtype, "error": f"differs from NumPy ({got.dtype}, {want.dtype})"}
    t_np, t_la = [], []
    for _ in range(reps):
        t0 = time.perf_counter(); evaluate(expr, np_names); t_np.append(time.perf_counter() - t0)
        t0 = time.perf_counter(); evaluate(expr, la_names); t_la.append(time.perf_counter() - t0)
    numpy_ms, lazy_ms = statistics.median(t_np) * 1e3, statistics.median(t_la) * 1e3
    return {"expr": expr, "dtype": dtype, "numpy_ms": round(numpy_ms, 3), "lazy_ms": round(lazy_ms, 3),
            "ratio": round(numpy_ms / lazy_ms, 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2**22)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--json")
    args = ap.parse_args()
    la.set_config(device="cpu", mode="lazy")
    rows = [measure(e, dt, args.n, args.reps) for dt in args.dtypes.split(",") for e in EXPRESSIONS]
    timed = sorted((r for r in rows if "ratio" in r), key=lambda r: r["ratio"])
    print("| dtype | expression | NumPy ms | lazyarr ms | NumPy/lazyarr |\n|---|---|---|---|---|")
    for r in timed:
        print(f"| {r['dtype']} | `{r['expr']}` | {r['numpy_ms']} | {r['lazy_ms']} | {r['ratio']} |")
    for r in rows:
        if "error" in r:
            print(f"not run: {r['dtype']} `{r['expr']}`: {r['error']}")
    for dt in args.dtypes.split(","):
        mine = [r["ratio"] for r in timed if r["dtype"] == dt]
        slow = sum(1 for x in mine if x < 0.95)
        print(f"{dt}: {len(mine)} expressions, median ratio {statistics.median(mine):.2f}, "
              f"{slow} below 0.95x, minimum {min(mine):.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "reps": args.reps, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
