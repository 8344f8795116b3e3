"""In-place Jacobi steps (issue 15's benchmark, asv ``bench_views.InPlaceStencil``):
``u[1:-1, 1:-1] = 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])``
on a side² float32 array, ``--steps`` steps per run: NumPy; lazyarr (the value, a temporary
of the statement, computed straight into ``u`` by the chunked write-back, docs/design.rst
"Writes into the array read"); and lazyarr with the value held by a variable first
(``v = jacobi(u); u[1:-1, 1:-1] = v``: computed into a temporary, then copied, as before the
write-back). One process, the variants alternated run by run, medians.

``--device cuda`` (the H200): CuPy eager as the base, lazyarr (a temporary and a copy kernel per
step, the launches kept from step to step: docs/design.rst), lazyarr with the value in a
variable, and torch.compile (inductor) on the same steps when torch is importable (issue 15:
lazyarr within 1.5x of it). Wall time of each run with its synchronization.

    python tools/peers/inplace_stencil.py [--device cpu|cuda] [--side 4096] [--steps 100] [--reps 3] [--md FILE]

``--md docs/_static/perf/inplace_stencil_cpu.md`` appends the table (markdown) to a file that
``tools/perf_page.py`` puts on the performance page.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any, Callable

import numpy as np

import lazyarr as la
from lazyarr.backends import cpu_fused


def jacobi(u: Any) -> Any:
    return 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def cuda_variants(w: Any, steps: int) -> dict[str, Callable[[], Any]]:
    """The GPU's variants (``w``: a CuPy array); each returns its result on the device (its
    ``np.asarray`` is a copy to the host, made for the check only)."""
    def cupy_eager() -> Any:
        u = w.copy()
        for _ in range(steps):
            u[1:-1, 1:-1] = jacobi(u)
        return u

    def written_in_place() -> Any:
        u = la.asarray(w.copy())
        for _ in range(steps):
            u[1:-1, 1:-1] = jacobi(u)
        return u.compute()

    def temporary_and_copy() -> Any:
        u = la.asarray(w.copy())
        for _ in range(steps):
            v = jacobi(u)
            u[1:-1, 1:-1] = v
        return u.compute()

    fns = {"cupy (eager)": cupy_eager, "lazyarr": written_in_place,
           "lazyarr, value in a variable (temporary + copy)": temporary_and_copy}
    try:
        import torch
    except ImportError as exc:
        print("torch.compile unavailable:", exc)
        return fns
    step = torch.compile(lambda t: t.__setitem__((slice(1, -1), slice(1, -1)), jacobi(t)))
    tw = torch.from_dlpack(w)

    def torch_compiled() -> Any:
        t = tw.clone()
        for _ in range(steps):
            step(t)
        return t
    fns["torch.compile"] = torch_compiled
    return fns


def _host(result: Any) -> np.ndarray:
    """A GPU variant's result on the host (CuPy, LazyArray or torch)."""
    if hasattr(result, "detach"):
        return result.detach().cpu().numpy()
    if hasattr(result, "get") and not hasattr(result, "_node"):
        return result.get()
    return np.asarray(result)


def variants(w: np.ndarray, steps: int) -> dict[str, Callable[[], np.ndarray]]:
    def numpy() -> np.ndarray:
        u = w.copy()
        for _ in range(steps):
            u[1:-1, 1:-1] = jacobi(u)
        return u

    def written_in_place() -> np.ndarray:
        u = la.asarray(w.copy())
        for _ in range(steps):
            u[1:-1, 1:-1] = jacobi(u)
        return np.asarray(u)

    def temporary_and_copy() -> np.ndarray:
        u = la.asarray(w.copy())
        for _ in range(steps):
            v = jacobi(u)
            u[1:-1, 1:-1] = v
        return np.asarray(u)

    return {"numpy": numpy, "lazyarr": written_in_place,
            "lazyarr, value in a variable (temporary + copy)": temporary_and_copy}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--side", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--md", help="append the table, as markdown, to this file")
    args = parser.parse_args()
    w = np.random.default_rng(0).random((args.side, args.side), dtype=np.float32)
    if args.device == "cuda":
        import cupy
        fns = cuda_variants(cupy.asarray(w), args.steps)
        sync = cupy.cuda.Device().synchronize
    else:
        fns, sync = variants(w, args.steps), (lambda: None)
    base_name = next(iter(fns))
    host = _host if args.device == "cuda" else np.asarray
    want = host(fns[base_name]())
    with la.config(mode="lazy", device=args.device):
        for name, fn in fns.items():                       # warm-up (compiles), and the bits
            got = host(fn())
            if not np.array_equal(got, want):
                # lazyarr's must be NumPy's (CuPy's) bits; a peer's may round otherwise
                # (torch.compile contracts to FMA): said, not fatal
                message = (f"{name}: not the bits of {base_name}, largest difference "
                           f"{float(np.max(np.abs(got - want))):.3g}")
                if name.startswith("lazyarr"):
                    raise SystemExit(message)
                print(" ", message)
        times: dict[str, list[float]] = {name: [] for name in fns}
        for _ in range(args.reps):
            for name, fn in fns.items():
                sync()
                t = time.perf_counter()
                fn()
                sync()
                times[name].append(time.perf_counter() - t)
    base = statistics.median(times[base_name])
    where = (f"{cpu_fused.get_num_threads()} threads, load average {os.getloadavg()[0]:.1f} "
             f"after the run" if args.device == "cpu" else "H200")
    title = (f"{args.steps} in-place Jacobi steps, {args.side}² float32, {args.device} "
             f"({where}), medians of {args.reps}")
    print(f"{title}:")
    lines = [f"# {title}", "", f"| variant | s | ms per step | vs {base_name.split()[0]} |",
             "|---|---|---|---|"]
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"  {name:48s} {med:7.3f} s  {med / args.steps * 1e3:7.3f} ms/step  {base / med:5.2f}x")
        lines.append(f"| {name} | {med:.3f} | {med / args.steps * 1e3:.3f} | {base / med:.2f}x |")
    if args.md:
        with open(args.md, "a") as f:
            f.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
