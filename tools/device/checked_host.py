"""Where a checked cuda launch's extra host time goes (issue 16: the floating-point checks'
cost on small calls): each step of ``CudaBackend.run`` timed alone, checked (NumPy's default
error state) against unchecked (``np.errstate(all="ignore")``), in one process, without
synchronizing (the launches queue; the GPU is not what is timed). Development tool; findings
in docs/notes/gpu.rst.

    python tools/device/checked_host.py [--reps 20000]
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import time

import cupy
import numpy as np

import lazyarr as la
from lazyarr._program import lower_cached
from lazyarr.backends.cuda import backend as B
from lazyarr.backends.cuda import flags


def per_call_us(fn, reps: int, rounds: int = 5) -> float:
    """Median over rounds of the mean time per call (µs)."""
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        out.append((time.perf_counter() - t0) / reps * 1e6)
        cupy.cuda.Device().synchronize()
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20000)
    reps = ap.parse_args().reps
    g = cupy.random.default_rng(0)
    backend = B.BACKEND
    with la.config(device="cuda", mode="lazy"):
        xs = la.asarray(g.random(1024, dtype=cupy.float32))
        ys = la.asarray(g.random(1024, dtype=cupy.float32))
        u = la.asarray(g.random((4096, 4096), dtype=cupy.float32))

        def jacobi(v):
            return 0.2 * (v[1:-1, 1:-1] + v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:])
        exprs = {"x*y+1.5 1024": lambda: xs * ys + 1.5,
                 # the chain's hot call: 48 µs in asv at 4772ca7, 84 µs at ea18c3d (notes/gpu.rst)
                 "chain 1024": lambda: la.sum(la.sqrt(abs(xs * ys + 1.5)) * la.tanh(xs) - ys),
                 "jacobi 4096^2": lambda: jacobi(u)}
        print(f"{'step':40s} {'checked':>9s} {'unchecked':>9s} {'extra':>7s}  (µs per call, medians)")
        for name, build in exprs.items():
            rows: dict[str, list[float]] = {}
            for label in ("checked", "unchecked"):
                ctx = np.errstate(all="ignore") if label == "unchecked" else contextlib.nullcontext()
                with ctx:
                    lowered = lower_cached(build()._node)
                    backend.run(lowered)            # compiles, caches the entry
                    key = (lowered.program, tuple((a.shape, a.strides) for a in lowered.inputs),
                           flags.checking())
                    entry = backend._entries[key]
                    out = cupy.empty(lowered.shape, lowered.program.root.dtype)
                    args = backend.arguments(entry, lowered.inputs, lowered.scalars, out)
                    steps = {
                        "build the expression": build,
                        "lower_cached": lambda: lower_cached(build()._node),
                        "flags.checking": flags.checking,
                        "arguments": lambda: backend.arguments(entry, lowered.inputs, lowered.scalars, out),
                        "flags.ring": flags.ring,
                        "cupy.empty": lambda: cupy.empty(lowered.shape, lowered.program.root.dtype),
                        "_launch (take + launch)": lambda: backend._launch(entry, args),
                        "BACKEND.run": lambda: backend.run(lowered),
                        "compute() of a new expression": lambda: build().compute(),
                        # asv's CachedCall.track_hot_call_us: the call, then a synchronization
                        "compute() + synchronize": lambda: (build().compute(),
                                                            cupy.cuda.runtime.deviceSynchronize()),
                    }
                    if entry.fpe_slot >= 0:
                        ring = flags.ring()
                        steps["ring.take"] = lambda: ring.take(entry, entry.sites)
                        steps["launch alone (fpe given)"] = lambda: backend.launch(entry, args_fpe)
                        filled = list(args)
                        filled[entry.fpe_slot] = ring.take(entry, entry.sites)[0]
                        args_fpe = tuple(filled)
                    else:
                        steps["launch alone"] = lambda: backend.launch(entry, args)
                    for step, fn in steps.items():
                        rows.setdefault(step, [float("nan"), float("nan")])
                        slow = any(w in step for w in ("compute", "build", "lower"))
                        n = reps // 10 if slow else reps
                        if name.startswith("jacobi") and any(w in step for w in ("launch", "run", "compute")):
                            n = 400     # (its ~45 µs kernels: more launches would fill the queue)
                        rows[step][0 if label == "checked" else 1] = per_call_us(fn, n)
            print(f"-- {name}")
            for step, (c, un) in rows.items():
                print(f"{step:40s} {c:9.3f} {un:9.3f} {c - un:7.3f}")
        flags.settle()


if __name__ == "__main__":
    main()
