"""One asv benchmark row, timed again in one process: ``setup`` once, then rounds of calls
(wall time per call, each call ending in the benchmark's own ``finish``), median and spread.
For an asv number that moved between commits on hosts that differ, before calling it a
regression. Development tool (tools/device/README.md).

    python tools/device/asv_row.py bench_elementwise.ChainLength.time_sum cuda lazy 16 67108864
"""
from __future__ import annotations

import argparse
import ast
import importlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("name", help="module.Class.method under benchmarks/")
    ap.add_argument("params", nargs="*", help="the row's parameters, in order")
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    module, cls, method = args.name.rsplit(".", 2)
    bench = getattr(importlib.import_module(f"benchmarks.{module}"), cls)()
    params = []
    for p in args.params:
        try:
            params.append(ast.literal_eval(p))
        except (ValueError, SyntaxError):
            params.append(p)
    if hasattr(bench, "setup"):
        bench.setup(*params)
    fn = getattr(bench, method)
    for _ in range(5):
        fn(*params)
    per_call = []
    for _ in range(args.rounds):
        t = time.perf_counter()
        for _ in range(args.calls):
            fn(*params)
        per_call.append((time.perf_counter() - t) / args.calls * 1e6)
    print(f"{args.name}{tuple(params)}: median {statistics.median(per_call):.1f} µs a call "
          f"(rounds {', '.join(f'{v:.1f}' for v in per_call)})")


if __name__ == "__main__":
    main()
