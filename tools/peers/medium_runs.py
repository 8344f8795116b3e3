"""Two decisions of an elementwise CPU run on medium arrays (10^4-10^6 elements), each timed
with the rule before 2026-12-04c and the current one, alternated in one process, with NumPy's
time beside. Findings in docs/notes/cpu.rst (2026-12-04c).

* ``rows``: whether it goes row by row (``cpu_fused._rows_outer``; before: rows of at least 512
  elements; now: by bytes and by how many inputs are gathered), on 2-d stencils and a
  broadcast row;
* ``threads``: one thread or the pool (``cpu_fused._elementwise_threads``; before: the pool
  from 2^15 elements; now: by the program's work per element), on 1-d expressions.
* ``fresh``: the pool's threshold ``cpu_fused.PARALLEL_WORK`` at ``--work-before`` and at its
  current value (Mi units), on statements that read what the statement before wrote (a
  stencil's steps into two arrays by turns, a 1-d chain the same way), as scripts run them,
  and on the same statements repeated over unchanged inputs (what the other parts and asv
  time). Data written by one core is read from its cache by the other at a cost, so the pool
  pays later on fresh data (docs/notes/cpu.rst, 2026-12-06f).

    python tools/peers/medium_runs.py [rows|threads|fresh ...] [--dtypes float64 float32]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import lazyarr as la
from lazyarr._counters import CounterMap
from lazyarr.backends import cpu_fused

CURRENT = cpu_fused._rows_outer
CURRENT_THREADS = cpu_fused._elementwise_threads


def threads_before(c, size):
    """The rule before 2026-12-04c: the pool from 2^15 elements, whatever the program."""
    return 1 if c.serial or size < 1 << 15 else cpu_fused.get_num_threads()


def before(shape, inputs):
    """The rule before 2026-12-04c: rows of at least 512 elements, any input gathered."""
    if len(shape) < 2 or shape[-1] < 512:
        return 0
    for a in inputs:
        if type(a) is not CounterMap and not (a.shape == shape and a.flags.c_contiguous):
            return len(shape) - 1
    return 0


def stencil(xp, a):
    return 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])


def timed(cases: dict, n: int, rounds: int, use_before, use_now) -> dict[str, dict[str, float]]:
    """Medians (µs a call) of each case's lazy call under both rules and NumPy's, alternated."""
    out = {}
    for name, (lazy, numpy_fn) in cases.items():
        reps = max(10, int(2e5 // n))
        times: dict[str, list[float]] = {"numpy": [], "before": [], "now": []}
        for r in range(rounds):
            for which in (("before", "now", "numpy") if r % 2 else ("now", "before", "numpy")):
                fn = numpy_fn if which == "numpy" else lazy
                (use_before if which == "before" else use_now)()
                fn()
                t0 = time.perf_counter()
                for _ in range(reps):
                    fn()
                times[which].append((time.perf_counter() - t0) / reps * 1e6)
        use_now()
        out[name] = {k: statistics.median(v) for k, v in times.items()}
    return out


def show(label: str, m: dict[str, float]) -> None:
    print(f"{label:40s} {m['numpy']:8.1f} {m['before']:8.1f} {m['now']:8.1f} {m['before'] / m['now']:10.2f}")


def use_rule(name: str, fn):
    """A call that makes ``cpu_fused.<name>`` the rule ``fn``."""
    def use():
        setattr(cpu_fused, name, fn)
    return use


def rows(opts, rng) -> None:
    for dt in map(np.dtype, opts.dtypes):
        for n in opts.sides:
            an, bn = rng.random((n, n)).astype(dt), rng.random((n, n)).astype(dt)
            rown = rng.random(n).astype(dt)
            a, b, row = la.asarray(an), la.asarray(bn.copy()), la.asarray(rown)
            cases = {
                "B[1:-1, 1:-1] = stencil(A)": (
                    lambda: b.__setitem__((slice(1, -1), slice(1, -1)), stencil(la, a)),
                    lambda: bn.__setitem__((slice(1, -1), slice(1, -1)), stencil(np, an))),
                "stencil(A)": (lambda: stencil(la, a).compute(), lambda: stencil(np, an)),
                "A * row + 1": (lambda: (a * row + 1).compute(), lambda: an * rown + 1),
            }
            for name, m in timed(cases, n * n, opts.rounds, use_rule("_rows_outer", before),
                                   use_rule("_rows_outer", CURRENT)).items():
                show(f"{name} {n}² {dt.name}", m)


def threads(opts, rng) -> None:
    for dt in map(np.dtype, opts.dtypes):
        for log2n in opts.log2n:
            n = 1 << log2n
            an, bn = rng.random(n).astype(dt), rng.random(n).astype(dt)
            a, b = la.asarray(an), la.asarray(bn)
            cases = {
                "a + 1": (lambda: (a + 1).compute(), lambda: an + 1),
                "a * b + 1": (lambda: (a * b + 1).compute(), lambda: an * bn + 1),
                "sqrt(a * b + 1)": (lambda: la.sqrt(a * b + 1).compute(), lambda: np.sqrt(an * bn + 1)),
                "the chain": (lambda: (la.sqrt(abs(a * b + 1.5)) * la.tanh(a) - b).compute(),
                              lambda: np.sqrt(abs(an * bn + 1.5)) * np.tanh(an) - bn),
            }
            for name, m in timed(cases, n, opts.rounds, use_rule("_elementwise_threads", threads_before),
                                   use_rule("_elementwise_threads", CURRENT_THREADS)).items():
                show(f"{name} 2^{log2n} {dt.name}", m)


def fresh(opts, rng) -> None:
    """The pool's threshold on statements that read what the one before wrote, and on the same
    statements over unchanged inputs (medians of alternated rounds; the NumPy column runs the
    same steps)."""
    now = cpu_fused.PARALLEL_WORK
    before_work = int(opts.work_before * (1 << 20))
    use_b, use_n = use_rule("PARALLEL_WORK", before_work), use_rule("PARALLEL_WORK", now)
    inner = (slice(1, -1), slice(1, -1))
    for dt in map(np.dtype, opts.dtypes):
        for n in opts.sides:
            an, bn = rng.random((n, n)).astype(dt), rng.random((n, n)).astype(dt)
            a, b = la.asarray(an.copy()), la.asarray(bn.copy())
            a2, b2 = an.copy(), bn.copy()

            def ping_la():
                b[inner] = stencil(la, a)
                a[inner] = stencil(la, b)

            def ping_np():
                b2[inner] = stencil(np, a2)
                a2[inner] = stencil(np, b2)

            def same_la():
                b[inner] = stencil(la, a)

            def same_np():
                b2[inner] = stencil(np, a2)
            cases = {"stencil steps, each reading the last (2)": (ping_la, ping_np),
                     "stencil step, unchanged input": (same_la, same_np)}
            for name, m in timed(cases, n * n, opts.rounds, use_b, use_n).items():
                show(f"{name} {n}² {dt.name}", m)
        for log2n in opts.log2n:
            k = 1 << log2n
            xn, yn = rng.random(k).astype(dt), rng.random(k).astype(dt)
            x, y = la.asarray(xn.copy()), la.asarray(yn.copy())
            x2, y2 = xn.copy(), yn.copy()

            def chain(xp, u):
                return xp.sqrt(abs(u * 0.5 + 1.5)) * xp.tanh(u) - u * 0.25

            def ping1_la():
                y[...] = chain(la, x)
                x[...] = chain(la, y)

            def ping1_np():
                y2[...] = chain(np, x2)
                x2[...] = chain(np, y2)
            cases = {"chain steps, each reading the last (2)": (ping1_la, ping1_np),
                     "chain, unchanged input": (lambda: y.__setitem__(..., chain(la, x)),
                                                lambda: y2.__setitem__(..., chain(np, x2)))}
            for name, m in timed(cases, k, opts.rounds, use_b, use_n).items():
                show(f"{name} 2^{log2n} {dt.name}", m)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("parts", nargs="*", default=["rows", "threads"])
    ap.add_argument("--dtypes", nargs="+", default=["float64", "float32"])
    ap.add_argument("--sides", nargs="+", type=int, default=[100, 150, 200, 300, 400, 600])
    ap.add_argument("--log2n", nargs="+", type=int, default=[15, 16, 17, 18, 19, 20])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--work-before", type=float, default=3.0,
                    help="fresh: the threshold compared with the current one (Mi units)")
    opts = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'case':40s} {'numpy':>8s} {'before':>8s} {'now':>8s} {'before/now':>10s}  (µs, medians of "
          f"{opts.rounds} alternated rounds)")
    if "rows" in opts.parts:
        rows(opts, rng)
    if "threads" in opts.parts:
        threads(opts, rng)
    if "fresh" in opts.parts:
        fresh(opts, rng)


if __name__ == "__main__":
    main()
