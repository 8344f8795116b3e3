"""The store rule's costs (lazyarr/_build.py, ``store_min_weight``; docs/notes/cpu.rst, "The
store rule's weight"): what a store and a recompute cost, and the shapes the rule decides,
stored against recomputed in one process (the rule's thresholds switched between calls).

    python tools/peers/store_rule.py ops       # a store and each transcendental op, 2^24
    python tools/peers/store_rule.py shapes    # softmax and normalizations, 2^22 and 2^25
    python tools/peers/store_rule.py rows      # softmax rows of 1024, 2^19 to 2^23 float32

Times are ms, medians; ``stored`` forces the store (every weight stores), ``recomputed``
forbids it.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

import lazyarr as la
from lazyarr import _build

NEVER = 10**9


def median_ms(fn: Callable[[], object], reps: int = 7) -> float:
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[reps // 2]


def stored_and_recomputed(fn: Callable[[], object], calls: int = 15) -> tuple[float, float]:
    """Medians of ``fn`` with every held array stored and with none, the two alternated call
    by call (a store's cost depends on the allocator's state: fresh pages fault, reused
    ones do not, so both variants see the same history)."""
    saved = _build.STORE_MIN_WEIGHT, _build.STORE_MIN_WEIGHT_CACHED
    times: dict[bool, list[float]] = {True: [], False: []}
    try:
        for k in range(calls + 1):
            for store in (True, False):
                _build.STORE_MIN_WEIGHT = _build.STORE_MIN_WEIGHT_CACHED = 0 if store else NEVER
                t = time.perf_counter()
                fn()
                if k:                               # (the first call of each: warm-up)
                    times[store].append((time.perf_counter() - t) * 1e3)
    finally:
        _build.STORE_MIN_WEIGHT, _build.STORE_MIN_WEIGHT_CACHED = saved
    return sorted(times[True])[calls // 2], sorted(times[False])[calls // 2]


def softmax(x: la.LazyArray) -> np.ndarray:
    tmp_out = la.exp(x - la.max(x, axis=-1, keepdims=True))
    return np.asarray(tmp_out / la.sum(tmp_out, axis=-1, keepdims=True))


def normalized(f: Callable[[la.LazyArray], la.LazyArray]) -> Callable[[la.LazyArray], np.ndarray]:
    def g(x: la.LazyArray) -> np.ndarray:
        y = f(x)
        return np.asarray((y - y.mean()) / y.std())
    return g


def ops() -> None:
    n = 1 << 24
    for dt in (np.float32, np.float64):
        x = la.asarray(np.random.default_rng(0).uniform(0.1, 0.9, n).astype(dt))
        base = median_ms(lambda: float(la.sum(x + 1)))
        store = median_ms(lambda: float(la.sum((x + 1).compute())))
        row = [f"{dt.__name__}: sum(x + 1) {base:.2f} ms; over it, a store {store - base:.2f}"]
        for op in ("exp", "log", "sin", "cos", "tanh", "sqrt"):
            f = getattr(la, op)
            row.append(f"{op} {median_ms(lambda: float(la.sum(f(x + 1)))) - base:.2f}")
        print(", ".join(row), flush=True)


def shapes() -> None:
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64):
        for n in (1 << 22, 1 << 25):
            x = la.asarray(rng.random(n).astype(dt))
            rows = la.asarray(rng.random((n // 448, 448)).astype(dt))
            for name, fn, arg in (("softmax", softmax, rows),
                                  ("normalize exp", normalized(la.exp), x),
                                  ("normalize exp(sin*3)", normalized(lambda v: la.exp(la.sin(v) * 3)), x)):
                s, r = stored_and_recomputed(lambda: fn(arg))
                print(f"{name:22s} {dt.__name__:8s} 2^{n.bit_length() - 1}: stored {s:8.2f}  "
                      f"recomputed {r:8.2f}  ({r / s:.2f})", flush=True)


def rows() -> None:
    for k in range(19, 24):
        x = la.asarray(np.random.default_rng(0).random(((1 << k) // 1024, 1024), dtype=np.float32))
        s, r = stored_and_recomputed(lambda: softmax(x))
        print(f"softmax rows of 1024 float32, 2^{k}: stored {s:.3f}  recomputed {r:.3f}", flush=True)


if __name__ == "__main__":
    {"ops": ops, "shapes": shapes, "rows": rows}[sys.argv[1] if len(sys.argv) > 1 else "ops"]()
