"""The host time of a library call whose operand is a pending chain, on cuda (issue 18): at
2^20 float32 elements on the H200 ``la.sort(f(x))`` of ``f(x) = sqrt(abs(x))*2-1`` cost
1.27-1.82x ``la.sort`` of a computed array, ``la.fft.rfft(f(x))`` 1.46x: a fixed host cost to
build the chain, lower it, find its kernel and launch it into the library's buffer
(``_fallback.computed_into_new`` -> ``_materialize.materialize_into`` -> the backend's
``run_into``; on cuda ``_fallback._cuda_into_new`` -> ``run_into`` since 2026-12-08), against
a ~3 µs kernel. Each step timed alone, medians of alternated rounds.
Runs on a GPU (CuPy) and in the simulator (``LAZYARR_CUDA_SIM=1``, NumPy buffers, launches
stubbed: the host path only, a launch copying the chain's values into its output, ~0.3 µs).
Development tool; findings in docs/notes/gpu.rst (instruction counts of the same calls,
steadier on a shared machine: library_host_instructions.py).

    python tools/device/library_host.py [--n 1024] [--reps 2000] [--rounds 7]
"""
from __future__ import annotations

import argparse
import inspect
import os
import time

import numpy as np

# the steps below look up the compiled kernel's entry: the first call waits for its compile
os.environ.setdefault("LAZYARR_COMPILE", "wait")
import lazyarr as la  # noqa: E402
from lazyarr import _fallback  # noqa: E402
from lazyarr._materialize import materialize_into, select  # noqa: E402

# (the simulator or the GPU, NumPy or CuPy buffers, and a synchronization: as host_steps.py)
from host_steps import SIM, alternated_medians, sync, xp  # noqa: E402,F401


def mean_us(fn, reps: int) -> float:
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - t0) / reps * 1e6


def f(x):
    return la.sqrt(la.abs(x)) * 2 - 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    opts = ap.parse_args()
    backend = select("cuda", "lazy")
    rng = np.random.default_rng(0)
    with la.config(device="cuda", mode="lazy"):
        x = la.asarray(xp.asarray(rng.standard_normal(opts.n, dtype=np.float32)))
        done = f(x).compute()           # the same values, computed
        calls = {"sort": la.sort, "argsort": la.argsort, "cumsum": la.cumsum,
                 "unique": la.unique, "rfft": la.fft.rfft}
        for call in calls.values():     # compiles (waited for) and first calls
            call(f(x)).compute()
            call(done).compute()
        if SIM:     # the host path only: a launch writes the values the kernel would (not
            # garbage: an FFT or sort of np.empty's leftovers, NaNs, subnormals, runs slower)
            values = done.data

            def launch(entry, args) -> None:
                out = args[entry.out_slot]
                if out.shape == values.shape and out.dtype == values.dtype:
                    out[...] = values
            backend.launch = launch
        # (nodes are interned: a pending f(x) kept here would be the one f(x).compute()
        # memoizes, and every later f(x) computed; the same program with another constant)
        built = la.sqrt(la.abs(x)) * 3 - 1
        memory = xp.empty(built.shape, built.dtype)
        steps = {
            "f(x) built": lambda: f(x),
            "computed_into_new(f(x))": lambda: _fallback.computed_into_new(f(x), cuda=True),
            "f(x).compute()": lambda: f(x).compute(),
            # (a kept pending array stays pending: computed into new memory at each call)
            "computed_into_new(kept)": lambda: _fallback.computed_into_new(built, cuda=True),
            # its kernel into new memory: as a write (every write-hazard check), and fresh
            "materialize_into(kept)": lambda: materialize_into(built._node, memory),
        }
        if "fresh" in inspect.signature(materialize_into).parameters:    # (not before it was)
            steps["... fresh=True"] = lambda: materialize_into(built._node, memory, fresh=True)
        for name, call in calls.items():
            steps[f"{name}(f(x))"] = lambda call=call: call(f(x))
            steps[f"{name}(computed)"] = lambda call=call: call(done)
        medians = alternated_medians(steps, opts.rounds, lambda fn: mean_us(fn, opts.reps))
        print(f"{'step':28s} {'µs':>8s}  (per call, medians of {opts.rounds} alternated rounds; "
              f"{'simulator, launches stubbed' if SIM else 'GPU'}, {opts.n} float32)")
        for step, us in medians.items():
            print(f"{step:28s} {us:8.2f}")
        for name in calls:
            extra = medians[f"{name}(f(x))"] - medians[f"{name}(computed)"]
            print(f"{name + ' pending - computed':28s} {extra:8.2f}")


if __name__ == "__main__":
    main()
