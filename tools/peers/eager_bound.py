"""The bound of the small-array path (``eager_max_size``: operators on computed CPU arrays of
at most that many elements run at once with NumPy): expressions on 2^13-2^16 elements timed
with the bound at 4,096 (the old default), 16,384, 32,768 (the default since 2026-12-04c) and
65,536, alternated in one process, with NumPy's time beside (µs a call, medians of 7 rounds).
Findings in docs/notes/cpu.rst.

    python tools/peers/eager_bound.py
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import lazyarr as la

BOUNDS = (4096, 16384, 32768, 65536)


def stencil(a):
    return 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])


def per_call_us(fn, reps: int) -> float:
    fn()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps * 1e6


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'case':32s} {'numpy':>7s} " + " ".join(f"{s:>7d}" for s in BOUNDS))
    for dt in (np.float64, np.float32):
        for n in (1 << 13, 1 << 14, 1 << 15, 1 << 16):
            side = int(n ** 0.5) + 2
            an, bn = rng.random(n).astype(dt), rng.random(n).astype(dt)
            big_a, big_b = rng.random((side, side)).astype(dt), rng.random((side, side)).astype(dt)
            a, b, sa, sb = la.asarray(an), la.asarray(bn), la.asarray(big_a), la.asarray(big_b.copy())
            inner = (slice(1, -1), slice(1, -1))
            cases = {
                "a+1": (lambda: (a + 1).compute(), lambda: an + 1),
                "sqrt(a*b+1)": (lambda: la.sqrt(a * b + 1).compute(), lambda: np.sqrt(an * bn + 1)),
                "chain7": (lambda: (la.sqrt(abs(a * b + 1.5)) * la.tanh(a) - b).compute(),
                           lambda: np.sqrt(abs(an * bn + 1.5)) * np.tanh(an) - bn),
                "sum(a*b)": (lambda: la.sum(a * b).compute(), lambda: np.sum(an * bn)),
                "B[1:-1,1:-1]=st(A)": (lambda: sb.__setitem__(inner, stencil(sa)),
                                       lambda: big_b.__setitem__(inner, stencil(big_a))),
            }
            for name, (lazy, numpy_fn) in cases.items():
                reps = max(20, int(3e5 // n))
                times: dict = {k: [] for k in BOUNDS + ("numpy",)}
                for r in range(7):
                    for k in (BOUNDS + ("numpy",) if r % 2 else ("numpy",) + BOUNDS[::-1]):
                        if k == "numpy":
                            times[k].append(per_call_us(numpy_fn, reps))
                        else:
                            with la.config(eager_max_size=k):
                                times[k].append(per_call_us(lazy, reps))
                m = {k: statistics.median(v) for k, v in times.items()}
                label = f"{name} {n} {np.dtype(dt).name}"
                print(f"{label:32s} {m['numpy']:7.1f} " + " ".join(f"{m[s]:7.1f}" for s in BOUNDS),
                      flush=True)


if __name__ == "__main__":
    main()
