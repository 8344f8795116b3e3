"""``concatenate`` of two pending float32 expressions: lazyarr's native join (each pending
operand computed straight into its part of the result) against the fallback it replaced
(each operand computed into a temporary, then NumPy's ``concatenate`` copies them: the
``FallbackFunction`` that ``la.concatenate`` was) and NumPy, in one process, alternated call by
call, medians. Also along axis 1 of a 2-D shape (the copy path: computed, then copied).
``python tools/peers/concat_ab.py [--log2n 22] [--reps 41]``."""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import lazyarr as la
from lazyarr import _fallback


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log2n", type=int, default=22)
    parser.add_argument("--reps", type=int, default=41)
    args = parser.parse_args()
    n = 1 << args.log2n
    rng = np.random.default_rng(0)
    a, b = rng.random(n, np.float32), rng.random(n, np.float32)
    x, y = la.asarray(a), la.asarray(b)
    before = _fallback.FallbackFunction("concatenate", np.concatenate)
    shape2 = (1 << (args.log2n // 2), -1)
    a2, b2 = a.reshape(shape2), b.reshape(shape2)
    x2, y2 = la.asarray(a2), la.asarray(b2)
    cases = {
        "axis 0": {
            "numpy": lambda: np.concatenate([a * b + 1.5, a - 2 * b]),
            "before (fallback)": lambda: before([x * y + 1.5, x - 2 * y]).compute(),
            "after (native)": lambda: la.concatenate([x * y + 1.5, x - 2 * y]).compute(),
        },
        "axis 1 (2-D)": {
            "numpy": lambda: np.concatenate([a2 * b2 + 1.5, a2 - 2 * b2], axis=1),
            "before (fallback)": lambda: before([x2 * y2 + 1.5, x2 - 2 * y2], axis=1).compute(),
            "after (native)": lambda: la.concatenate([x2 * y2 + 1.5, x2 - 2 * y2], axis=1).compute(),
        },
    }
    with la.config(mode="lazy", device="cpu"):
        for case, fns in cases.items():
            want = fns["numpy"]()
            for fn in fns.values():
                np.testing.assert_array_equal(np.asarray(fn()), want)
            times: dict[str, list[float]] = {name: [] for name in fns}
            for _ in range(args.reps):
                for name, fn in fns.items():       # alternated call by call
                    t = time.perf_counter()
                    fn()
                    times[name].append(time.perf_counter() - t)
            print(f"{case}, 2^{args.log2n} float32 per operand, median of {args.reps}:")
            for name, ts in times.items():
                print(f"  {name:18s} {statistics.median(ts) * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
