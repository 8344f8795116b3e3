"""Where ``standardize`` (asv ``Workloads``: ``(x - la.mean(x)) / la.std(x)``) spends its time
on cuda: CUDA-event medians of each step alone, lazyarr (lazy and eager) against CuPy, with
CuPy's reduction accelerators as they are and with CUB asked for, then a cProfile of one lazy
``la.std``. Development tool; findings in docs/notes/gpu.rst (2026-12-06).

    python tools/device/std_probe.py [--log2n 26] [--rounds 5]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats

import cupy
from cupy._core import _accelerator
from gpu_probe import events_ms  # (beside this script)

import lazyarr as la


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    n = 1 << args.log2n
    x = cupy.random.default_rng(0).random((n // 1024, 1024), dtype=cupy.float32)
    print(f"n = 2^{args.log2n} float32 as ({n // 1024}, 1024); CuPy {cupy.__version__}; "
          f"reduction accelerators {_accelerator.get_reduction_accelerators()}, routine "
          f"accelerators {_accelerator.get_routine_accelerators()}")
    rows = {
        "cupy x.mean()": lambda: x.mean(),
        "cupy x.std()": lambda: x.std(),
        "cupy x.var(dtype=float64)": lambda: x.var(dtype=cupy.float64),
        "cupy x.sum()": lambda: x.sum(),
        "cupy (x - m) / s": lambda: (x - x.mean()) / x.std(),
    }
    for mode in ("lazy", "eager"):
        with la.config(device="cuda", mode=mode):
            lx = la.asarray(x)
        rows[f"la.mean {mode}"] = lambda lx=lx, mode=mode: _run(mode, lambda: la.mean(lx))
        rows[f"la.std {mode}"] = lambda lx=lx, mode=mode: _run(mode, lambda: la.std(lx))
        rows[f"standardize {mode}"] = lambda lx=lx, mode=mode: _run(
            mode, lambda: (lx - la.mean(lx)) / la.std(lx))
    for name, fn in rows.items():
        print(f"{name:28s} {events_ms(fn, args.rounds):9.3f} ms")
    for accel in (["cub"], ["cub", "cutensor"]):
        try:
            _accelerator.set_reduction_accelerators(accel)
            _accelerator.set_routine_accelerators(accel)
        except Exception as exc:                       # (an accelerator this build lacks)
            print(f"accelerators {accel}: {type(exc).__name__}: {exc}")
            continue
        print(f"with accelerators {accel}:")
        for name in ("cupy x.std()", "cupy x.var(dtype=float64)", "cupy x.sum()", "la.std lazy",
                     "standardize lazy", "standardize eager"):
            print(f"  {name:26s} {events_ms(rows[name], args.rounds):9.3f} ms")
    _accelerator.set_reduction_accelerators([])
    _accelerator.set_routine_accelerators([])
    with la.config(device="cuda", mode="lazy"):
        lx = la.asarray(x)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(3):
            float(la.std(lx))
        prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(18)


def _run(mode: str, fn):
    """``fn()`` in ``mode``, its result computed (a pending array runs its kernels)."""
    with la.config(device="cuda", mode=mode):
        out = fn()
        if isinstance(out, la.LazyArray):
            out.compute()
        return out


if __name__ == "__main__":
    main()
