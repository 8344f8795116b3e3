"""Complex reductions of a chain against NumPy on the CPU (issue 17): ``sum``, ``prod``,
``argmax`` and ``var`` of ``z * z + c`` (``prod`` of ``z/|z| * z/|z|``: unit moduli, no
overflow), complex128 and complex64, 2^22 values with parts uniform in [-1, 1).

NumPy computes the chain into memory and reduces it; lazyarr runs one fused kernel (the VM's
complex reduction kernels). One process, NumPy and lazyarr alternated call by call, medians.

    python tools/peers/complex_reductions.py [--log2n 22] [--reps 15] [--md FILE]
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import lazyarr as la

C = 0.25 - 0.5j


def _chains(xp: Any, z: Any) -> dict[str, Callable[[], Any]]:
    def unit() -> Any:
        u = z / abs(z)
        return u * u
    return {"sum(z * z + c)": lambda: xp.sum(z * z + C),
            "prod(z/abs(z) * z/abs(z))": lambda: xp.prod(unit()),
            "argmax(z * z + c)": lambda: xp.argmax(z * z + C),
            "var(z * z + c)": lambda: xp.var(z * z + C)}


def _time(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    r = fn()
    if isinstance(r, la.LazyArray):
        r.compute()
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log2n", type=int, default=22)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--device", choices=["cpu"], default="cpu", help="the CPU only (the VM's kernels)")
    parser.add_argument("--md", help="append the table, as markdown, to this file "
                        "(docs/_static/perf/complex_reductions_cpu.md: tools/perf_page.py)")
    args = parser.parse_args()
    n = 1 << args.log2n
    rng = np.random.default_rng(0)
    z128 = rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)
    rows = []
    for dtype in (np.complex128, np.complex64):
        z = z128.astype(dtype)
        with la.config(mode="lazy", device="cpu"):
            lz = la.asarray(z)
            ours, numpys = _chains(la, lz), _chains(np, z)
            for name in ours:
                kernels = len(la.explain(ours[name]).kernels)
                a, b = [], []
                for _ in range(args.reps):          # alternated, call by call
                    a.append(_time(numpys[name]))
                    b.append(_time(ours[name]))
                ma, mb = statistics.median(a), statistics.median(b)
                rows.append((name, np.dtype(dtype).name, ma * 1e3, mb * 1e3, ma / mb, kernels))
    head = f"{'chain':22s} {'dtype':11s} {'NumPy ms':>9s} {'lazyarr ms':>10s} {'ratio':>6s} kernels"
    lines = [head] + [f"{r[0]:22s} {r[1]:11s} {r[2]:9.1f} {r[3]:10.1f} {r[4]:5.2f}x {r[5]}" for r in rows]
    print("\n".join(lines))
    if args.md:
        with open(args.md, "a") as f:
            f.write(f"\n# Complex reductions, 2^{args.log2n}, cpu, medians of {args.reps} alternated\n\n")
            f.write("| chain | dtype | NumPy ms | lazyarr ms | NumPy/lazyarr | kernels |\n|---|---|---|---|---|---|\n")
            for r in rows:
                f.write(f"| {r[0]} | {r[1]} | {r[2]:.1f} | {r[3]:.1f} | {r[4]:.2f}x | {r[5]} |\n")


if __name__ == "__main__":
    main()
