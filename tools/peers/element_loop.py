"""The loop over elements (asv ``bench_views.ElementLoop``): ``s = s + a[i] * b[i]`` for
i < 2,000 over computed float64 arrays, NumPy (with its scalars) against lazyarr lazy and eager,
alternated in one process; then its parts (the element reads alone, the operators alone). Each
round times 5 loops (``time.process_time``, mean); medians of the rounds, in ms.

    cd /tmp && PYTHONPATH=<tree> python <repo>/tools/peers/element_loop.py [ROUNDS]
"""
from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import lazyarr as la

N = 2000


def loop(a: Any, b: Any) -> Any:
    s = np.zeros(()) if type(a) is np.ndarray else la.zeros(())
    for i in range(N):
        s = s + a[i] * b[i]
    return s


def reads(a: Any, b: Any) -> None:
    for i in range(N):
        a[i]
        b[i]


def operators(a: Any, b: Any) -> None:
    s, x, y = a[0], a[1], b[1]
    for _ in range(N):
        s = s + x * y


def _ms(fn: Callable[..., Any], *args: Any) -> float:
    t0 = time.process_time()
    for _ in range(5):
        fn(*args)
    return (time.process_time() - t0) / 5 * 1e3


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    rng = np.random.default_rng(0)
    an, bn = rng.standard_normal(N), rng.standard_normal(N)
    a, b = la.asarray(an), la.asarray(bn)            # computed, as the asv benchmark's data()
    rows: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, fn in (("loop", loop), ("reads", reads), ("operators", operators)):
            rows.setdefault(f"{name} numpy", []).append(_ms(fn, an, bn))
            for mode in ("lazy", "eager"):
                with la.config(mode=mode):
                    rows.setdefault(f"{name} {mode}", []).append(_ms(fn, a, b))
    with la.config(mode="lazy"):
        assert float(loop(a, b)) == float(loop(an, bn))      # the same bits
    for name in ("loop", "reads", "operators"):
        base = statistics.median(rows[f"{name} numpy"])
        cells = [f"{name:9s} numpy {base:6.3f}"]
        for mode in ("lazy", "eager"):
            t = statistics.median(rows[f"{name} {mode}"])
            cells.append(f"{mode} {t:6.3f} ({t / base:4.1f}x)")
        print("  ".join(cells), "ms")


if __name__ == "__main__":
    main()
