"""Per-statement cost of two NPBench loop kernels (issue 19's loop category), lazyarr against
NumPy in the same process, medians of 7 alternated rounds: ``lu`` (60², 3,600 statements such
as ``A[i, j] -= A[i, :j] @ A[:j, j]``) and ``syrk`` (50x40, 2,000 statements
``C[i, :i+1] += alpha * A[i, k] * A[:i+1, k]``). The host's speed moves between runs, so
compare the lazy/NumPy ratios. A/B of two trees: ``PYTHONPATH=<tree> python
tools/peers/loop_statements.py`` for each, alternated (docs/notes/cpu.rst, 2026-12-04).
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import lazyarr as la


def lu(xp, A):
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]


def syrk(xp, alpha, beta, C, A):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]


def per_statement(fn, statements: int) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) / statements * 1e6


def main() -> None:
    rng = np.random.default_rng(0)
    n = 60
    a_lu = rng.random((n, n)) + n * np.eye(n)
    a_syrk, c_syrk = rng.random((50, 40)), rng.random((50, 50))
    rows = {
        "lu": lambda: lu(la, la.asarray(a_lu.copy())),
        "lu numpy": lambda: lu(np, a_lu.copy()),
        "syrk": lambda: syrk(la, 1.5, 1.2, la.asarray(c_syrk.copy()), la.asarray(a_syrk)),
        "syrk numpy": lambda: syrk(np, 1.5, 1.2, c_syrk.copy(), a_syrk),
    }
    statements = {"lu": n * n, "syrk": 50 * 40}
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(7):
        for name, fn in rows.items():
            times[name].append(per_statement(fn, statements[name.split()[0]]))
    med = {name: statistics.median(t) for name, t in times.items()}
    print(" | ".join(f"{name} {us:.2f}" for name, us in med.items()), "µs per statement;",
          f"lu {med['lu'] / med['lu numpy']:.1f}x NumPy, syrk {med['syrk'] / med['syrk numpy']:.1f}x NumPy")


if __name__ == "__main__":
    main()
