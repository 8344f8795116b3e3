"""CPU throughput against the compilers a user would pick instead (issue 13, item 4):
lazyarr, ``jax.jit`` and ``torch.compile`` on the same workloads, 2 threads each, beside
NumPy and the read ceiling (the 2-thread read of the input: ``np.max`` over each half in its
own thread, NumPy's fastest pass over memory).

Each library runs in its own process (torch's OpenMP threads and XLA's thread pool spin
after a call and would take a core of a 2-core machine from the next library's call), one
process per library in turn, for several rounds; a table row is the median over rounds of
each process's median call. Every process checks its results against a float64 NumPy
reference (the largest relative error is printed), so all rows compute the same thing.

jax and torch are not lazyarr's dependencies (torch alone is several GB); install them in
a separate environment and put this tree on its path::

    python3.11 -m venv /tmp/peers && /tmp/peers/bin/pip install numpy "jax[cpu]" torch
    PYTHONPATH=. /tmp/peers/bin/python tools/peers/cpu_compilers.py [ROUNDS]
    PYTHONPATH=. /tmp/peers/bin/python tools/peers/cpu_compilers.py --device cpu \\
        --md docs/_static/perf/cpu_compilers_cpu.md

A library that does not import is reported as missing, not timed.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")    # (before NumPy loads OpenBLAS)
import numpy as np  # noqa: E402

THREADS = 2
VECTOR = 1 << 24              # float32 elements of x and y
MATRIX = (4096, 4096)         # float32, for the row and column sums
LIBRARIES = ("numpy", "read", "lazyarr", "jax.jit", "torch.compile")

#: the workloads: name -> (what, NumPy's form on (x, y, m), the input it reads)
WORKLOADS: dict[str, tuple[str, Callable[[Any, Any, Any], Any], str]] = {
    "sum_abs": ("sum(abs(x)), 2^24 float32", lambda x, y, m: np.sum(np.abs(x)), "x"),
    "chain": ("sum(sqrt(abs(x*y + 1.5)) * tanh(x) - y), 2^24 float32",
              lambda x, y, m: np.sum(np.sqrt(np.abs(x * y + 1.5)) * np.tanh(x) - y), "x"),
    "row_sums": ("sum(m, axis=1), 4096x4096 float32", lambda x, y, m: np.sum(m, axis=1), "m"),
    "col_sums": ("sum(m, axis=0), 4096x4096 float32", lambda x, y, m: np.sum(m, axis=0), "m"),
}


def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (rng.standard_normal(VECTOR, dtype=np.float32),
            rng.standard_normal(VECTOR, dtype=np.float32),
            rng.standard_normal(MATRIX, dtype=np.float32))


def read_twice_in_threads(a: np.ndarray) -> None:
    """The read ceiling: each half of ``a`` reduced by NumPy's max in its own thread."""
    flat = a.reshape(-1)
    half = flat.shape[0] // 2
    th = threading.Thread(target=np.max, args=(flat[half:],))
    th.start()
    np.max(flat[:half])
    th.join()


def forms(library: str, x: np.ndarray, y: np.ndarray, m: np.ndarray) -> dict[str, Callable[[], Any]]:
    """Zero-argument calls of each workload in ``library``, each returning a NumPy array."""
    if library == "numpy":
        return {name: (lambda f=f: np.asarray(f(x, y, m))) for name, (_, f, _) in WORKLOADS.items()}
    if library == "read":
        return {name: (lambda a=(x if src == "x" else m): read_twice_in_threads(a))
                for name, (_, _, src) in WORKLOADS.items()}
    if library == "lazyarr":
        import lazyarr as la
        from lazyarr.backends import cpu_fused
        cpu_fused.set_num_threads(THREADS)
        lx, ly, lm = la.asarray(x), la.asarray(y), la.asarray(m)
        fns = {"sum_abs": lambda: la.sum(la.abs(lx)),
               "chain": lambda: la.sum(la.sqrt(la.abs(lx * ly + 1.5)) * la.tanh(lx) - ly),
               "row_sums": lambda: la.sum(lm, axis=1), "col_sums": lambda: la.sum(lm, axis=0)}
        return {name: (lambda f=f: np.asarray(f())) for name, f in fns.items()}
    if library == "jax.jit":
        import jax
        import jax.numpy as jnp
        jx, jy, jm = jnp.asarray(x), jnp.asarray(y), jnp.asarray(m)
        jitted = {"sum_abs": (jax.jit(lambda a: jnp.sum(jnp.abs(a))), (jx,)),
                  "chain": (jax.jit(lambda a, b: jnp.sum(jnp.sqrt(jnp.abs(a * b + 1.5)) * jnp.tanh(a) - b)),
                            (jx, jy)),
                  "row_sums": (jax.jit(lambda a: jnp.sum(a, axis=1)), (jm,)),
                  "col_sums": (jax.jit(lambda a: jnp.sum(a, axis=0)), (jm,))}
        return {name: (lambda f=f, a=a: np.asarray(f(*a).block_until_ready()))
                for name, (f, a) in jitted.items()}
    if library == "torch.compile":
        import torch
        torch.set_num_threads(THREADS)
        tx, ty, tm = torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(m)
        compiled = {"sum_abs": (torch.compile(lambda a: a.abs().sum()), (tx,)),
                    "chain": (torch.compile(lambda a, b: (torch.sqrt(torch.abs(a * b + 1.5))
                                                          * torch.tanh(a) - b).sum()), (tx, ty)),
                    "row_sums": (torch.compile(lambda a: a.sum(1)), (tm,)),
                    "col_sums": (torch.compile(lambda a: a.sum(0)), (tm,))}
        return {name: (lambda f=f, a=a: f(*a).numpy()) for name, (f, a) in compiled.items()}
    raise ValueError(f"unknown library {library!r}; one of {LIBRARIES}")


def measure(library: str, calls: int = 21) -> dict[str, Any]:
    """One process's medians (ms) and largest relative errors, or why the library is missing."""
    x, y, m = data()
    try:
        fns = forms(library, x, y, m)
    except ImportError as exc:
        return {"missing": f"{type(exc).__name__}: {exc}"}
    out: dict[str, Any] = {"ms": {}, "rel_err": {}}
    for name, fn in fns.items():
        first = fn()                                  # (compiles)
        fn()
        if library != "read":
            exact = np.asarray(WORKLOADS[name][1](x.astype(np.float64), y.astype(np.float64),
                                                  m.astype(np.float64)))
            out["rel_err"][name] = float(np.max(np.abs(first - exact)) / np.max(np.abs(exact)))
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        out["ms"][name] = statistics.median(times) * 1e3
    return out


def alternate(rounds: int) -> dict[str, list[dict[str, Any]]]:
    """``rounds`` rounds of one process per library, in turn."""
    runs: dict[str, list[dict[str, Any]]] = {lib: [] for lib in LIBRARIES}
    for r in range(rounds):
        for lib in LIBRARIES:
            line = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", lib],
                                  check=True, capture_output=True, text=True).stdout
            runs[lib].append(json.loads(line.strip().splitlines()[-1]))
            print(f"round {r} {lib}: {runs[lib][-1]}", file=sys.stderr, flush=True)
    return runs


def markdown(runs: dict[str, list[dict[str, Any]]]) -> str:
    def med(lib: str, name: str) -> float | None:
        if "missing" in runs[lib][0]:
            return None
        return statistics.median(run["ms"][name] for run in runs[lib])

    def ms(v: float | None) -> str:
        return "missing" if v is None else f"{v:.2f}"

    versions = [f"numpy {np.__version__}"]
    for mod in ("jax", "torch"):
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            versions.append(f"{mod} missing")
    rounds = len(runs["numpy"])
    lines = [f"# CPU throughput against the compilers, {THREADS} threads each, medians of "
             f"{rounds} alternated processes (ms; load average {os.getloadavg()[0]:.1f}; "
             f"{', '.join(versions)})", "",
             "| workload | NumPy | read ceiling | lazyarr | jax.jit | torch.compile "
             "| lazyarr / read | jax.jit / lazyarr | torch.compile / lazyarr |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, (what, _, _) in WORKLOADS.items():
        v = {lib: med(lib, name) for lib in LIBRARIES}
        lazy = v["lazyarr"]

        def ratio(a: float | None, b: float | None) -> str:
            return "" if a is None or b is None else f"{a / b:.2f}x"

        lines.append(f"| {what} | {ms(v['numpy'])} | {ms(v['read'])} | {ms(lazy)} | "
                     f"{ms(v['jax.jit'])} | {ms(v['torch.compile'])} | {ratio(lazy, v['read'])} | "
                     f"{ratio(v['jax.jit'], lazy)} | {ratio(v['torch.compile'], lazy)} |")
    errs = []
    for lib in LIBRARIES:
        if lib != "read" and "missing" not in runs[lib][0]:
            worst = max(runs[lib][0]["rel_err"].values())
            errs.append(f"{lib} {worst:.1e}")
    lines += ["", f"(Largest relative error against float64 NumPy, over the workloads: "
              f"{', '.join(errs)}. The read ceiling reads the workload's input: x, or m.)"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(measure(sys.argv[2])))
    else:
        args = sys.argv[1:]
        md = None
        if "--device" in args:
            assert args[args.index("--device") + 1] == "cpu", "cpu_compilers.py: cpu only"
            args = [a for a in args if a not in ("--device", "cpu")]
        if "--md" in args:
            md = args[args.index("--md") + 1]
            args = [a for a in args if a not in ("--md", md)]
        text = markdown(alternate(int(args[0]) if args else 5))
        if md:
            with open(md, "w") as f:
                f.write(text)
        print(text)
