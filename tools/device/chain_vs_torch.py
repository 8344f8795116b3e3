"""Issue 13 item 5 in one process: the headline chain ``sum(sqrt(abs(x*y + 1.5)) * tanh(x) - y)``
at 2^28 float32 in lazyarr and in ``torch.compile`` (inductor), alternated over rounds on the
same data, with CuPy's ``x.sum()`` (the read) beside them. CUDA-event medians: one call
between the events (host launch work included), and ``_b2b``: 20 calls back to back between
the events (the kernel time). Both sums are printed (they differ in the last places: torch
contracts FMAs and sums in its own order).

Run there (tools/device/README.md): ``python3 tools/device/chain_vs_torch.py [--rounds 3]``
"""
from __future__ import annotations

import argparse

import cupy as cp
import numpy as np

import lazyarr as la


def span_us(fn, calls: int, reps: int) -> float:
    """The median over ``reps`` of the CUDA-event span of ``calls`` calls, per call (µs)."""
    fn()
    fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        for _ in range(calls):
            fn()
        b.record()
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b) / calls)
    return round(sorted(ts)[len(ts) // 2] * 1000, 1)


def print_alternated(rows: dict, rounds: int, one_reps: int, b2b_reps: int) -> None:
    """Each row timed in turn, ``rounds`` times over (so drift falls on every row alike), as
    one call and 20 back to back (``span_us``), printed as a Markdown table."""
    table = {name: [] for name in rows}
    for _ in range(rounds):
        for name, fn in rows.items():
            table[name].append((span_us(fn, 1, one_reps), span_us(fn, 20, b2b_reps)))
    print("| work | one call, µs (per round) | back to back, µs (per round) |\n|---|---|---|")
    for name, vals in table.items():
        print(f"| {name} | {' / '.join(str(v[0]) for v in vals)} | {' / '.join(str(v[1]) for v in vals)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--log2n", type=int, default=28)
    args = ap.parse_args()
    import torch
    g = cp.random.default_rng(0)
    n = 1 << args.log2n
    x = g.uniform(-1, 1, n, dtype=cp.float32)
    y = g.uniform(-1, 1, n, dtype=cp.float32)
    tx, ty = torch.from_dlpack(x), torch.from_dlpack(y)
    f = torch.compile(lambda a, b: (torch.sqrt(torch.abs(a * b + 1.5)) * torch.tanh(a) - b).sum())
    with la.config(device="cuda"):
        lx, ly = la.asarray(x), la.asarray(y)

        def lazy():
            return la.sum(la.sqrt(abs(lx * ly + 1.5)) * la.tanh(lx) - ly).compute()

        rows = {"lazyarr": lazy, "torch.compile": lambda: f(tx, ty), "cupy x.sum() (read)": lambda: x.sum()}
        print(f"{torch.cuda.get_device_name()}, n = 2^{args.log2n}; lazyarr {float(np.asarray(lazy())):.6e}, "
              f"torch.compile {float(f(tx, ty)):.6e}")
        print_alternated(rows, args.rounds, 30, 7)


if __name__ == "__main__":
    main()
