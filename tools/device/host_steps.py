"""Where a host-bound cuda call's time goes, step by step (issues 13, 15, 16): the Jacobi step
of ``fp_cost.py`` at 4096² (a ~57 µs call around a ~45 µs kernel on the H200) and the small
chain, each step timed alone on the objects the call makes, checked and unchecked
(``np.errstate(all="ignore")``) alternated. Runs on the H200 (CuPy) and in the simulator
(``LAZYARR_CUDA_SIM=1``, NumPy buffers, launches stubbed) so the two can be compared.
Development tool; findings in docs/notes/gpu.rst.

    python tools/device/host_steps.py [--reps 2000] [--rounds 7]
"""
from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import time

import numpy as np

# the steps below look up the compiled kernel's entry: the first call waits for its compile
os.environ.setdefault("LAZYARR_COMPILE", "wait")
import lazyarr as la  # noqa: E402
from lazyarr._materialize import select
from lazyarr._program import lower_cached

SIM = os.environ.get("LAZYARR_CUDA_SIM") == "1"
if SIM:
    xp = np

    def sync() -> None:
        pass
else:
    import cupy as xp

    def sync() -> None:
        xp.cuda.runtime.deviceSynchronize()


def mean_us(fn, reps: int) -> float:
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    t = (time.perf_counter() - t0) / reps * 1e6
    sync()
    return t


def alternated_medians(steps: dict, rounds: int, measure) -> dict:
    """Each step's median over ``rounds`` of ``measure(step)`` (µs), the steps in turn and
    every other round in reverse order, so that a drift of the machine shows as spread, not as
    a bias against the steps run last (library_host.py, loop_statements_host.py)."""
    times: dict = {k: [] for k in steps}
    names = list(steps)
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            times[name].append(measure(steps[name]))
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--side", type=int, default=64 if SIM else 4096)
    opts = ap.parse_args()
    backend = select("cuda", "lazy")
    if SIM:
        backend.launch = lambda entry, args: None       # the host path only
    rng = np.random.default_rng(0)
    n = opts.side
    with la.config(device="cuda", mode="lazy"):
        raw = xp.asarray(rng.random((n, n), dtype=np.float32))
        u = la.asarray(raw)
        a, b = u[1:-1, 1:-1], u[:-2, 1:-1]
        w = la.asarray(xp.zeros((n, n), np.float32))

        def jacobi(v):
            return 0.2 * (v[1:-1, 1:-1] + v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:])
        pending = jacobi(u)                 # built once, never computed: lowering it again
        lowered = lower_cached(pending._node)
        layout = lambda: tuple((x.shape, x.strides) for x in lowered.inputs)  # noqa: E731
        # (launches of a ~45 µs kernel: the queue would fill; few per round on the GPU)
        launches = opts.reps if SIM else 200
        # the launch of a small strided kernel (Jacobi on 64²: its 14 layout constants), with
        # the constants as the entry keeps them and as NumPy int64 values (CuPy converts each)
        small = la.asarray(xp.asarray(rng.random((64, 64), dtype=np.float32)))
        low64 = lower_cached(jacobi(small)._node)
        backend.run(low64)
        with np.errstate(all="ignore"):
            backend.run(low64)
            entry = backend._entries[(low64.program, tuple((x.shape, x.strides) for x in low64.inputs), False)]
        out64 = xp.empty(low64.shape, np.float32)
        prepared = tuple(backend.arguments(entry, low64.inputs, low64.scalars, out64))
        raw_args = tuple(np.int64(ctypes.c_int64.from_address(v.ptr).value)
                         if type(v).__name__ == "CPointer" else v for v in prepared)
        if SIM:
            def make_view():
                return np.ndarray((n - 2, n - 2), np.float32, raw, (n + 1) * 4, raw.strides)
        else:
            mem = raw.data + (n + 1) * 4

            def make_view():
                return xp.ndarray((n - 2, n - 2), np.float32, mem, strides=raw.strides)
        steps = {
            "launch 64² (constants made once)": (lambda: backend.launch(entry, prepared), opts.reps),
            "launch 64² (constants as int64)": (lambda: backend.launch(entry, raw_args), opts.reps),
            "jacobi(small).compute() 64²": (lambda: jacobi(small).compute(), opts.reps),
            "raw slice (xp)": (lambda: raw[1:-1, 1:-1], opts.reps),
            "raw slice with ...": (lambda: raw[(slice(1, -1), slice(1, -1), Ellipsis)], opts.reps),
            "raw .shape, .strides": (lambda: (raw.shape, raw.strides), opts.reps),
            "xp.ndarray(shape, memptr, strides)": (make_view, opts.reps),
            "u[1:-1, 1:-1] (a view)": (lambda: u[1:-1, 1:-1], opts.reps),
            "view + view (pending)": (lambda: a + b, opts.reps),
            "jacobi(u) built": (lambda: jacobi(u), opts.reps),
            "lower_cached (built)": (lambda: lower_cached(pending._node), opts.reps),
            "layout key": (layout, opts.reps),
            "flags + entry lookup": (lambda: backend._entries.get((lowered.program, layout(), True)), opts.reps),
            "xp.empty": (lambda: xp.empty(lowered.shape, np.float32), opts.reps),
            "BACKEND.run (lowered)": (lambda: backend.run(lowered), launches),
            "jacobi(u).compute()": (lambda: jacobi(u).compute(), launches),
            "w[1:-1, 1:-1] = jacobi(u)": (lambda: w.__setitem__((slice(1, -1), slice(1, -1)), jacobi(u)), launches),
            "u[1:-1, 1:-1] = jacobi(u)": (lambda: u.__setitem__((slice(1, -1), slice(1, -1)), jacobi(u)), launches),
        }
        print(f"{'step':32s} {'checked':>9s} {'unchecked':>9s}  (µs per call, medians of "
              f"{opts.rounds} alternated rounds; {'simulator' if SIM else 'GPU'}, {n}²)")
        with np.errstate(all="ignore"):
            backend.run(lowered)
        backend.run(lowered)
        for step, (fn, reps) in steps.items():
            times: tuple[list[float], list[float]] = ([], [])
            for r in range(opts.rounds):
                for which in ((0, 1) if r % 2 == 0 else (1, 0)):
                    if which:
                        with np.errstate(all="ignore"):
                            times[1].append(mean_us(fn, reps))
                    else:
                        times[0].append(mean_us(fn, reps))
            print(f"{step:32s} {statistics.median(times[0]):9.3f} {statistics.median(times[1]):9.3f}")


if __name__ == "__main__":
    main()
