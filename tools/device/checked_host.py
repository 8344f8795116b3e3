"""Where a checked cuda launch's extra host time goes (issue 16: the floating-point checks'
cost on small calls): each step of ``CudaBackend.run`` timed alone, checked (NumPy's default
error state) against unchecked (``np.errstate(all="ignore")``), in one process, the two states alternated round by round (the first one timed was
slower in both directions before: an order effect), without synchronizing (the launches queue;
the GPU is not what is timed). A full reduction runs its kernel when it is built (reductions
materialize at once): only its build and its call with a synchronization are timed. Development tool; findings
in docs/notes/gpu.rst.

    python tools/device/checked_host.py [--reps 20000]
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import cupy
import numpy as np

import lazyarr as la
from lazyarr._program import lower_cached
from lazyarr.backends.cuda import backend as B
from lazyarr.backends.cuda import flags


def mean_us(fn, reps: int) -> float:
    """The mean time per call (µs) of ``reps`` calls, then a synchronization (not timed)."""
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    t = (time.perf_counter() - t0) / reps * 1e6
    cupy.cuda.Device().synchronize()
    return t


def unchecked():
    return np.errstate(all="ignore")


def steps_of(build, backend) -> dict[str, Any]:
    """The host steps of one launch of ``build()``'s kernel under the current error state."""
    steps: dict[str, Any] = {"build the expression": build}
    if build()._node.data is not None:      # (a reduction: computed when built)
        steps["build + synchronize"] = lambda: (build(), cupy.cuda.runtime.deviceSynchronize())
        return steps
    lowered = lower_cached(build()._node)
    backend.run(lowered)            # compiles, caches the entry
    key = (lowered.program, tuple((a.shape, a.strides) for a in lowered.inputs), flags.checking())
    entry = backend._entries[key]
    out = cupy.empty(lowered.shape, lowered.program.root.dtype)
    args = backend.arguments(entry, lowered.inputs, lowered.scalars, out)
    steps.update({
        "lower_cached": lambda: lower_cached(build()._node),
        "flags.checking": flags.checking,
        "arguments": lambda: backend.arguments(entry, lowered.inputs, lowered.scalars, out),
        "flags.ring": flags.ring,
        "cupy.empty": lambda: cupy.empty(lowered.shape, lowered.program.root.dtype),
        "_launch (take + launch)": lambda: backend._launch(entry, args),
        "BACKEND.run": lambda: backend.run(lowered),
        "compute() of a new expression": lambda: build().compute(),
        # asv's CachedCall.track_hot_call_us: the call, then a synchronization
        "compute() + synchronize": lambda: (build().compute(), cupy.cuda.runtime.deviceSynchronize()),
    })
    if entry.fpe_slot >= 0:
        ring = flags.ring()
        filled = list(args)
        filled[entry.fpe_slot] = ring.take(entry, entry.sites)[0]
        args_fpe = tuple(filled)
        steps["ring.take"] = lambda: ring.take(entry, entry.sites)
        steps["launch alone (fpe given)"] = lambda: backend.launch(entry, args_fpe)
    else:
        plain_args = tuple(args)
        steps["launch alone"] = lambda: backend.launch(entry, plain_args)
    return steps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    opts = ap.parse_args()
    g = cupy.random.default_rng(0)
    backend = B.BACKEND
    with la.config(device="cuda", mode="lazy"):
        xs = la.asarray(g.random(1024, dtype=cupy.float32))
        ys = la.asarray(g.random(1024, dtype=cupy.float32))
        u = la.asarray(g.random((4096, 4096), dtype=cupy.float32))

        def jacobi(v):
            return 0.2 * (v[1:-1, 1:-1] + v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:])
        exprs = {"x*y+1.5 1024": lambda: xs * ys + 1.5,
                 "chain 1024": lambda: la.sum(la.sqrt(abs(xs * ys + 1.5)) * la.tanh(xs) - ys),
                 "jacobi 4096^2": lambda: jacobi(u)}
        print(f"{'step':40s} {'checked':>9s} {'unchecked':>9s} {'extra':>7s}  "
              f"(µs per call, medians of {opts.rounds} alternated rounds)")
        for name, build in exprs.items():
            checked = steps_of(build, backend)
            with unchecked():
                plain = steps_of(build, backend)
            print(f"-- {name}")
            for step in checked:
                n = opts.reps // 10 if any(w in step for w in ("compute", "build", "lower")) else opts.reps
                if name.startswith("jacobi") and any(w in step for w in ("launch", "run", "compute")):
                    n = 400     # (its ~45 µs kernels: more launches would fill the queue)
                times: tuple[list[float], list[float]] = ([], [])
                for r in range(opts.rounds):
                    for which in ((0, 1) if r % 2 == 0 else (1, 0)):
                        if which == 0:
                            times[0].append(mean_us(checked[step], n))
                        elif step in plain:
                            with unchecked():
                                times[1].append(mean_us(plain[step], n))
                c = statistics.median(times[0])
                un = statistics.median(times[1]) if times[1] else float("nan")
                print(f"{step:40s} {c:9.3f} {un:9.3f} {c - un:7.3f}")
            for step in plain:
                if step not in checked:
                    with unchecked():
                        print(f"{step:40s} {'':9s} {statistics.median(mean_us(plain[step], opts.reps) for _ in range(opts.rounds)):9.3f}")
        flags.settle()


if __name__ == "__main__":
    main()
