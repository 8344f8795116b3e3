"""Where the host time of issue 14's pending Jacobi goes on cuda: ``sum(jacobi(sqrt(w)))``
at 4096² is host-bound (~200 µs a call back to back on the H200 against ~57 µs for
``jacobi(w)`` of a leaf). Wall time per call of N calls back to back (synchronized once at the
end) for the leaf, the pending field with the stencil kernel and with it off, then a
``cProfile`` of the pending calls, by own time. Also runs in the simulator
(``LAZYARR_CUDA_SIM=1``: launches stubbed), for comparison with this machine.
Development tool; findings in docs/notes/gpu.rst.

    python tools/device/stencil_host.py [--side 4096] [--calls 300]
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import time

import numpy as np

import lazyarr as la
from lazyarr.backends.cuda import stencil

SIM = os.environ.get("LAZYARR_CUDA_SIM") == "1"


def jacobi(u):
    return 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--side", type=int, default=4096)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    if SIM:
        from lazyarr.backends.cuda import simulate
        simulate.SimulatedCudaBackend.launch = lambda self, entry, a: None
        sync = lambda: None     # noqa: E731
        wn = np.random.default_rng(0).uniform(0, 1, (args.side, args.side)).astype(np.float32)
    else:
        import cupy as cp
        sync = cp.cuda.runtime.deviceSynchronize
        wn = cp.random.default_rng(0).uniform(0, 1, (args.side, args.side), dtype=cp.float32)
    min_saved = stencil.MIN_SAVED
    with la.config(device="cuda"):
        w = la.asarray(wn)
        traced = la.jit(lambda a: la.sum(jacobi(la.sqrt(a))))
        calls = {"leaf: sum(jacobi(w))": lambda: float(la.sum(jacobi(w))),
                 "pending, la.jit": lambda: float(traced(w)),
                 "pending: sum(jacobi(sqrt(w)))": lambda: float(la.sum(jacobi(la.sqrt(w)))),
                 "pending, map": lambda: jacobi(la.sqrt(w)).compute(),
                 "leaf, map": lambda: jacobi(w).compute()}
        for flat in (False, True):
            stencil.MIN_SAVED = 1 << 30 if flat else min_saved
            for name, fn in calls.items():
                for _ in range(20):
                    fn()
                sync()
                best = []
                for _ in range(3):
                    t = time.perf_counter()
                    for _ in range(args.calls):
                        fn()
                    sync()
                    best.append((time.perf_counter() - t) / args.calls * 1e6)
                print(f"{name:34s} {'flat' if flat else 'stencil':8s} {min(best):8.1f} µs a call")
        stencil.MIN_SAVED = min_saved
        for name in ("pending: sum(jacobi(sqrt(w)))", "leaf: sum(jacobi(w))"):
            fn = calls[name]
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(args.calls):
                fn()
            sync()
            pr.disable()
            print(f"\n== {name}: cProfile, {args.calls} calls, by own time")
            pstats.Stats(pr).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
