"""Issue 14's GPU target in one process: the Jacobi step of a pending array plus its sum,
``sum(0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]))`` with
``u = sqrt(w)`` pending, float32, in lazyarr (the stencil kernel: ``sqrt`` once per element in
shared memory, lazyarr/backends/cuda/stencil.py), in lazyarr with the stencil off (the flat
kernel: ``sqrt`` once per view, five per element), in ``torch.compile`` (inductor) and CuPy
eager, with CuPy's ``w.sum()`` (the read of ``w``) beside them; alternated over rounds on the
same data. CUDA-event medians: one call between the events (host work included), and
``_b2b``: 20 calls back to back (the kernel time). ``--map``: the step materialized instead of
summed. The ``la.jit`` row traces the step once and replays it, as ``torch.compile`` does.

Run there (tools/device/README.md): ``python3 tools/device/stencil_vs_torch.py [--side 16384]``
"""
from __future__ import annotations

import argparse

import cupy as cp
import numpy as np

import lazyarr as la
from chain_vs_torch import print_alternated
from lazyarr.backends.cuda import backend as cuda_backend
from lazyarr.backends.cuda import stencil
from stencil_host import jacobi


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--side", type=int, default=4096)
    ap.add_argument("--map", action="store_true", help="materialize the step instead of its sum")
    ap.add_argument("--variant", action="append", default=[],
                    help="a row with the stencil module's settings changed: NAME=V[,NAME=V]")
    args = ap.parse_args()
    import torch
    w = cp.random.default_rng(0).uniform(0, 1, (args.side, args.side), dtype=cp.float32)
    tw = torch.from_dlpack(w)
    if args.map:
        f = torch.compile(lambda a: jacobi(torch.sqrt(a)))
    else:
        f = torch.compile(lambda a: jacobi(torch.sqrt(a)).sum())
    with la.config(device="cuda"):
        lw = la.asarray(w)
        default = {name: getattr(stencil, name) for name in ("MIN_SAVED", "TILE_ROWS")}
        current = dict(default)

        def lazy(**change):
            """lazyarr with the stencil module's settings changed (a new kernel entry)."""
            want = {**default, **change}

            def run():
                if want != current:
                    for name, value in want.items():
                        setattr(stencil, name, value)
                    current.update(want)
                    cuda_backend.BACKEND._entries.clear()
                v = jacobi(la.sqrt(lw))
                return (v if args.map else la.sum(v)).compute()
            return run

        def unchecked():
            with la.errstate(all="ignore"):
                return lazy()()

        @la.jit
        def traced(a):          # (la.jit: traced once, replayed: what torch.compile's row is)
            v = jacobi(la.sqrt(a))
            return v if args.map else la.sum(v)

        rows = {"lazyarr (stencil)": lazy(), "lazyarr (stencil, errstate ignore)": unchecked,
                "lazyarr (stencil, la.jit)": lambda: traced(lw).compute(),
                "lazyarr (flat, stencil off)": lazy(MIN_SAVED=1 << 30)}
        for v in args.variant:          # e.g. TILE_ROWS=32
            change = {k: int(x) for k, x in (kv.split("=") for kv in v.split(","))}
            rows[f"lazyarr (stencil, {v})"] = lazy(**change)
        rows.update({
                "torch.compile": lambda: f(tw),
                "cupy eager": lambda: jacobi(cp.sqrt(w)) if args.map else jacobi(cp.sqrt(w)).sum(),
                "cupy w.sum() (read)": lambda: w.sum()})
        ref = jacobi(np.sqrt(cp.asnumpy(w).astype(np.float64)))
        want = ref if args.map else ref.sum()
        for name in ("lazyarr (stencil)", "lazyarr (stencil, la.jit)", "lazyarr (flat, stencil off)"):
            got = cp.asnumpy(cp.asarray(rows[name]()))
            print(name, "max rel. error", float(np.max(np.abs(got - want) / np.abs(want))))
        print(f"{torch.cuda.get_device_name()}, {args.side}² float32, {'map' if args.map else 'sum'}")
        print_alternated(rows, args.rounds, 20, 5)


if __name__ == "__main__":
    main()
