"""A new expression's first result on the GPU (issue 13 item 3): in a warm process, under
``compile="background"`` (the default: the first calls run op by op with CuPy while the kernel
compiles, backends/cuda/first_calls.py) and under ``compile="wait"``; then a fresh process's
first call against the floor of importing CuPy and numba-cuda and creating the context (and
``background+numba``: numba.cuda imported before lazyarr, as ``la.cuda_available()`` did
until 2026-12-06c).
Each expression is new to the process and to the kernel cache (a fresh ``LAZYARR_CACHE_DIR``).

    python tools/device/first_result.py [--count 10] [--log2n 20] [--dtype float64] [--md out.md]

Prints, per mode, the median and maximum time to the first result on the host, and for the
background mode the compile's own time (until ``la.wait_compiles()``), the first op-by-op
result against the kernel's (bit-identical elements; largest relative difference), and the
call after the compile (the kernel's). Development tool; results in docs/notes/gpu.rst.
"""
from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
os.environ["LAZYARR_CACHE_DIR"] = tempfile.mkdtemp(prefix="lazyarr-first-")
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

#: the data's dtype (``--dtype``)
DTYPE = np.dtype(np.float64)

#: the steps the new expressions are made of (each expression a different sequence)
STEPS = [
    lambda a, x, y: a * y + 1.5,
    lambda a, x, y: la.sqrt(la.abs(a)),
    lambda a, x, y: la.tanh(a) - y,
    lambda a, x, y: a * a - x,
    lambda a, x, y: la.sin(a) + 0.25,
    lambda a, x, y: la.maximum(a, y) * 2,
    lambda a, x, y: la.exp(-la.abs(a)),
    lambda a, x, y: (a - x) / 3,
]


def expressions(count: int, offset: int):
    """``count`` new chains of three steps, each with a reduction or not (by parity)."""
    seqs = list(itertools.permutations(range(len(STEPS)), 3))[offset:offset + count]

    def make(seq, reduce):
        def f(x, y):
            a = x
            for k in seq:
                a = STEPS[k](a, x, y)
            return la.sum(a) if reduce else a
        return f
    return [make(seq, i % 2 == 0) for i, seq in enumerate(seqs)]


def to_host(v):
    return np.asarray(v.get() if hasattr(v, "get") else v)


def warm_process(count: int, log2n: int) -> dict[str, list[float]]:
    """Per mode, each new expression's first result in ms (printed as it goes)."""
    found: dict[str, list[float]] = {}
    n = 1 << log2n
    rng = np.random.default_rng(0)
    xn, yn = (rng.standard_normal(n).astype(DTYPE) for _ in range(2))
    x, y = la.asarray(xn, device="cuda"), la.asarray(yn, device="cuda")
    # warm-up: CuPy's kernels for these ops and this dtype, lazyarr's first compile of a process
    with la.config(compile="wait"):
        for f in expressions(4, 200):
            to_host(la.asarray(f(x, y), device="cpu"))
        for f in STEPS:
            with la.config(mode="eager"):
                to_host(la.asarray(f(x, x, y), device="cpu"))
                to_host(la.asarray(la.sum(f(x, x, y)), device="cpu"))
    for mode, offset in (("background", 0), ("wait", count)):
        first, compile_s, after, same, worst = [], [], [], [], []
        for f in expressions(count, offset):
            with la.config(compile=mode):
                t0 = time.perf_counter()
                r1 = to_host(la.asarray(f(x, y), device="cpu"))
                first.append(time.perf_counter() - t0)
                if mode == "background":
                    la.wait_compiles()
                    compile_s.append(time.perf_counter() - t0)
                    t1 = time.perf_counter()
                    r2 = to_host(la.asarray(f(x, y), device="cpu"))
                    after.append(time.perf_counter() - t1)
                    bits = np.dtype(f"u{r1.dtype.itemsize}")
                    same.append(float(np.mean(r1.view(bits) == r2.view(bits))))
                    with np.errstate(all="ignore"):
                        rel = np.abs(r1.astype(np.float64) - r2) / np.maximum(np.abs(r2), 1e-30)
                    worst.append(float(np.nanmax(rel)) if rel.size else 0.0)
        ms = [1e3 * t for t in first]
        found[mode] = ms
        print(f"warm process, compile={mode}: first result median {statistics.median(ms):.1f} ms, "
              f"max {max(ms):.1f} ms ({len(ms)} new expressions, 2^{log2n} {np.dtype(DTYPE).name})")
        print(f"  in order: {', '.join(f'{t:.1f}' for t in ms)} ms")
        if compile_s:
            print(f"  the compile in the background: median {1e3 * statistics.median(compile_s):.0f} ms; "
                  f"the call after it {1e3 * statistics.median(after):.2f} ms; op by op against the "
                  f"kernel: {min(same) * 100:.2f}-{max(same) * 100:.2f} % of elements bit-identical, "
                  f"largest relative difference {max(worst):.2e}")
    return found


FRESH = textwrap.dedent("""
    import os, sys, time
    t0 = time.perf_counter()
    mode = sys.argv[1]
    if mode == "floor":
        import cupy, numba.cuda  # noqa: F401
        cupy.zeros(1).get()
    else:
        sys.path.insert(0, {root!r})
        if mode == "background+numba":      # (as before 2026-12-06c: Numba imported first)
            import numba.cuda  # noqa: F401
            mode = "background"
        import numpy as np
        import lazyarr as la
        x = la.asarray(np.linspace(-1, 1, 1 << 20, dtype={dtype!r}), device="cuda")
        with la.config(compile=mode):
            v = float(la.sum(la.sqrt(la.abs(x * 2.5 + {k})) * la.tanh(x) - x * x))
    t = time.perf_counter() - t0
    print("numba.cuda" in sys.modules, t)     # (imported by the first result, or not yet)
""")


def fresh_processes(rounds: int) -> dict[str, list[float]]:
    """Per mode (and the floor), each round's fresh process to its first result, in ms."""
    rows: dict[str, list[float]] = {"floor": [], "background": [], "background+numba": [],
                                   "wait": []}
    imported: dict[str, bool] = {}
    for r in range(rounds):
        for mode in rows:
            env = dict(os.environ, LAZYARR_CACHE_DIR=tempfile.mkdtemp(prefix="lazyarr-fresh-"))
            code = FRESH.format(root=ROOT, k=f"{1.5 + r}", dtype=np.dtype(DTYPE).name)
            out = subprocess.run([sys.executable, "-c", code, mode], capture_output=True,
                                 text=True, env=env, check=True)
            numba, t = out.stdout.split()[-2:]
            rows[mode].append(float(t))
            imported[mode] = numba == "True"
    for mode, ts in rows.items():
        print(f"fresh process, {mode}: median {1e3 * statistics.median(ts):.0f} ms "
              f"({', '.join(f'{1e3 * t:.0f}' for t in ts)}; numba.cuda imported: {imported[mode]})")
    return {mode: [1e3 * t for t in ts] for mode, ts in rows.items()}


def markdown(warm: dict[str, list[float]], fresh: dict[str, list[float]], log2n: int) -> str:
    """The table of docs/performance.rst ("GPU: a new expression's first result")."""
    import cupy
    name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"].decode()

    def each(ts: list[float]) -> str:
        return f"{statistics.median(ts):,.0f} ms ({', '.join(f'{t:,.0f}' for t in ts)})"
    n, r = len(warm["background"]), len(fresh["floor"])
    return "\n".join([
        f"# first result of a new expression, 2^{log2n} {np.dtype(DTYPE).name}, cuda ({name}), one run",
        "",
        "| first result | background (default) | wait |",
        "|---|---|---|",
        f"| warm process, median of {n} new expressions | {statistics.median(warm['background']):.1f} ms "
        f"| {statistics.median(warm['wait']):.1f} ms |",
        f"| warm process, the slowest of {n} | {max(warm['background']):,.1f} ms | {max(warm['wait']):,.1f} ms |",
        f"| fresh process, median of {r} rounds (floor: {each(fresh['floor'])}) | "
        f"{each(fresh['background'])} | {each(fresh['wait'])} |",
        f"| fresh process, numba.cuda imported before lazyarr | {each(fresh['background+numba'])} | |",
        ""])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--log2n", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", choices=["cuda"], default="cuda")
    ap.add_argument("--dtype", default="float64", help="float32 programs run op by op with tests "
                    "of CuPy's flush of subnormals (first_calls.FLUSH_TESTS)")
    ap.add_argument("--md", help="also write the table here (docs/_static/perf/first_result_cuda.md)")
    args = ap.parse_args()
    DTYPE = np.dtype(args.dtype)
    import lazyarr as la
    warm = warm_process(args.count, args.log2n)
    if os.environ.get("LAZYARR_CUDA_SIM") != "1":      # (a smoke test of the above: no CuPy)
        fresh = fresh_processes(args.rounds)
        if args.md:
            with open(args.md, "w") as f:
                f.write(markdown(warm, fresh, args.log2n))
