"""Issue 14's CPU number against what this machine can do: the Jacobi sum of a pending ``sqrt``
(``float(la.sum(jacobi(la.sqrt(w))))``, 4096² float32) and of the leaf ``w``, beside the
2-thread read of ``w`` (NumPy's ``max`` over each half in its own thread: the issue's ceiling)
and the 2-thread cost of the ``sqrt`` alone (a compiled loop, IEEE ``sqrt`` of each element of
``w`` into a cache-resident buffer, each thread over its half): no implementation that computes
the correctly rounded ``sqrt`` once per element can take less. Medians of ``--reps`` calls,
``--rounds`` rounds, ms. ``python tools/peers/jacobi_floor.py [--side 4096] [--rounds 3]``."""
from __future__ import annotations

import argparse
import threading
import time

import numba
import numpy as np

import lazyarr as la
from cpu_compilers import read_twice_in_threads     # (issue 13's read ceiling, the same read)


def jacobi(u):
    return 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


@numba.njit(nogil=True, error_model="numpy")
def _sqrt_rows(w, buf):
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            buf[j] = np.sqrt(w[i, j])


def two_threads(fn, w):
    """``fn(half, k)`` for the two halves of ``w``'s rows, each in its own thread (the
    ``sqrt`` row: each thread writes a buffer of its own)."""
    h = w.shape[0] // 2
    ts = [threading.Thread(target=fn, args=(w[k * h:(k + 1) * h], k)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def median_ms(fn, reps):
    fn()
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--side", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=21)
    args = ap.parse_args()
    la.set_config(device="cpu", cpu_loops="wait")
    wn = np.random.default_rng(0).random((args.side, args.side), dtype=np.float32)
    w = la.asarray(wn)
    bufs = [np.empty(args.side, np.float32) for _ in range(2)]
    rows = {
        "2-thread read of w": lambda: read_twice_in_threads(wn),
        "2-thread sqrt of w (compiled loop)": lambda: two_threads(
            lambda part, k: _sqrt_rows(part, bufs[k]), wn),
        "lazyarr: Jacobi sum of the leaf w": lambda: float(la.sum(jacobi(w))),
        "lazyarr: Jacobi sum of a pending sqrt(w)": lambda: float(la.sum(jacobi(la.sqrt(w)))),
    }
    got = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, fn in rows.items():
            got[name].append(median_ms(fn, args.reps))
    print(f"{args.side}² float32, medians of {args.reps} calls per round, ms")
    for name, values in got.items():
        print(f"{name:45s} " + " / ".join(f"{v:6.2f}" for v in values))


if __name__ == "__main__":
    main()
