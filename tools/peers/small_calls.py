"""Small calls (issue 13, item 1): asv's ``CachedCall.track_hot_call_us`` body (the
median of 2,000 calls back to back, 1,024 float32 elements) for the three headline expressions
in lazy and eager mode and under ``la.jit``, NumPy's own forms beside them, and two loops of
small statements, lazyarr's and NumPy's: the
loop over elements ``s = s + a[i] * b[i]`` (200 elements) and a row-by-row stencil written
into its array (62 rows of 62). One process prints one JSON line of medians, in µs.

The machine's speed moves between runs (docs/notes/cpu.rst), so compare trees in processes
alternated on the same machine::

    python tools/peers/small_calls.py                       # this tree, one process
    python tools/peers/small_calls.py --ab OLD NEW 4        # 4 rounds of OLD, NEW processes
    python tools/peers/small_calls.py --device cpu --md docs/_static/perf/small_calls_cpu.md

(``OLD``/``NEW``: source trees with their extensions built, e.g. ``git archive`` of a commit
and ``python setup.py build_ext --inplace``.)

On a GPU (``--device cuda [--md FILE]``) the same three expressions, each call synchronized,
in lazyarr (lazy, ``la.jit``, eager mode: CuPy op by op through lazyarr) beside CuPy's own
forms, ``cupy.fuse`` of each (one kernel per call, CuPy's fusion) and the floor of any small
call: an empty ``RawKernel`` launch and a synchronization, all in one process, medians of
2,000 calls, so that the ratios hold on whatever host the GPU came with. OpenBLAS's threads are kept to one: their
spinning after a BLAS call takes a core of this 2-core machine from the timed thread.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")    # (before NumPy loads OpenBLAS)
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))    # (benchmarks/common.py)

#: NumPy's own forms of benchmarks/common.py's HEADLINE expressions
NUMPY: dict[str, Callable[[Any, Any], Any]] = {
    "sum_abs": lambda x, y: np.sum(abs(x)),
    "axpy": lambda x, y: x * y + 1.5,
    "chain": lambda x, y: np.sum(np.sqrt(abs(x * y + 1.5)) * np.tanh(x) - y),
}


def median_us(fn: Callable[[], Any], n: int = 2000, warm: int = 100) -> float:
    """The median µs of ``n`` calls of ``fn`` after ``warm`` untimed ones (each timed alone)."""
    times = []
    for i in range(n + warm):
        t0 = time.perf_counter()
        fn()
        if i >= warm:
            times.append(time.perf_counter() - t0)
    times.sort()
    return round(times[len(times) // 2] * 1e6, 3)


def alternated_medians(bound: dict[str, tuple[Callable[[], Any], Callable[[], Any]]],
                       rounds: int, n: int = 300, warm: int = 30) -> dict[str, tuple[float, float]]:
    """Per case, NumPy's and lazyarr's call (``bound``: name -> the two, bound to their data)
    timed by :func:`median_us` of ``n`` calls, the cases alternated over ``rounds``; the
    medians of the rounds (µs), NumPy's first."""
    runs: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in bound}
    for _ in range(rounds):
        for name, (numpy_call, lazy_call) in bound.items():
            runs[name][0].append(median_us(numpy_call, n, warm))
            runs[name][1].append(median_us(lazy_call, n, warm))
    return {name: (statistics.median(a), statistics.median(b)) for name, (a, b) in runs.items()}


def profile_calls(lazy_call: Callable[[], Any], path: str) -> None:
    """cProfile of 5,000 calls of ``lazy_call`` after 100 warm ones, its top functions by
    own time (small_functions.py, small_library_calls.py: ``--profile NAME``)."""
    import cProfile
    import pstats
    for _ in range(100):
        lazy_call()
    cProfile.runctx("for _ in range(5000): lazy_call()", globals(), {"lazy_call": lazy_call},
                    path)
    pstats.Stats(path).sort_stats("tottime").print_stats(25)


def print_ratios(result: dict[str, tuple[float, float]], width: int, as_json: bool) -> None:
    """The table of (NumPy µs, lazyarr µs) per call, with their ratio; the same as JSON too."""
    print(f"{'call':<{width}}{'NumPy µs':>10}{'lazyarr µs':>12}{'ratio':>8}")
    for name, (n, z) in result.items():
        print(f"{name:<{width}}{n:>10.2f}{z:>12.2f}{z / n:>8.2f}")
    if as_json:
        print(json.dumps({k: [round(n, 3), round(z, 3)] for k, (n, z) in result.items()}))


def _lazyarr_rows(device: str) -> tuple[dict[str, float], tuple[Any, Any]]:
    """asv's ``CachedCall`` body on ``device``: the headline expressions in lazy and eager
    mode, and under ``la.jit`` (asv's ``JitCall``: the kernels replayed); with the two inputs."""
    import lazyarr as la
    from common import HEADLINE, data, finish, prepare

    out: dict[str, float] = {}
    for mode in ("lazy", "eager"):
        prepare(device, mode)
        x, y = data(device, 1024, seed=0), data(device, 1024, seed=1)
        for name, fn in HEADLINE.items():
            out[f"{mode} {name}"] = median_us(lambda fn=fn: finish(fn(x, y), device))
    prepare(device, "lazy")
    for name, fn in HEADLINE.items():
        jitted = la.jit(fn)
        finish(jitted(x, y), device)
        out[f"la.jit {name}"] = median_us(lambda jitted=jitted: finish(jitted(x, y), device))
    return out, (x, y)


def measure() -> dict[str, float]:
    import lazyarr as la
    from common import prepare

    out, (x, y) = _lazyarr_rows("cpu")
    xn, yn = np.asarray(x), np.asarray(y)
    for name, fn in NUMPY.items():
        out[f"numpy {name}"] = median_us(lambda fn=fn: fn(xn, yn))

    prepare("cpu", "lazy")
    rng = np.random.default_rng(0)
    an, bn, grid = rng.random(200), rng.random(200), rng.random((64, 64))
    for lib, wrap in (("numpy", np.asarray), ("lazy", la.asarray)):
        a, b, g = wrap(an), wrap(bn), wrap(grid)
        out[f"{lib} element loop 200"] = median_us(lambda a=a, b=b: element_loop(a, b), 200, 10)
        out[f"{lib} row loop 62"] = median_us(lambda g=g: row_loop(g), 200, 10)
    return out


def measure_cuda() -> dict[str, float]:
    """The GPU rows (``--device cuda``): µs a call, each ending in a device synchronization."""
    import cupy as cp

    from common import HEADLINE

    out, _ = _lazyarr_rows("cuda")
    sync = cp.cuda.runtime.deviceSynchronize
    xc, yc = (cp.random.default_rng(seed).random(1024, dtype=cp.float32) * 2 - 1 for seed in (0, 1))
    forms = {"sum_abs": lambda x, y: cp.sum(abs(x)), "axpy": lambda x, y: x * y + 1.5,
             "chain": lambda x, y: cp.sum(cp.sqrt(abs(x * y + 1.5)) * cp.tanh(x) - y)}
    def fused_sum_abs(x, y):        # (cupy.fuse names its kernel after the function: no lambdas)
        return cp.sum(cp.abs(x))

    def fused_axpy(x, y):
        return x * y + 1.5

    def fused_chain(x, y):
        return cp.sum(cp.sqrt(cp.abs(x * y + 1.5)) * cp.tanh(x) - y)
    fused = {"sum_abs": cp.fuse(fused_sum_abs), "axpy": cp.fuse(fused_axpy),
             "chain": cp.fuse(fused_chain)}
    for name in HEADLINE:
        out[f"cupy {name}"] = median_us(lambda f=forms[name]: (f(xc, yc), sync()))
        out[f"cupy.fuse {name}"] = median_us(lambda f=fused[name]: (f(xc, yc), sync()))
    empty = cp.RawKernel(r'extern "C" __global__ void empty(float *x) {}', "empty")
    out["launch floor"] = median_us(lambda: (empty((1,), (32,), (xc,)), sync()))
    return out


def markdown_cuda(out: dict[str, float]) -> str:
    """The performance page's table of one GPU run (``--device cuda --md``)."""
    import cupy as cp
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    lines = [f"# Small calls, 1,024 float32, cuda ({name}; an empty RawKernel launch and a "
             f"synchronization: {out['launch floor']:.1f} µs), median µs of 2,000 calls", "",
             "| expression | CuPy | cupy.fuse | lazyarr | lazyarr, la.jit | lazyarr eager mode "
             "| lazyarr / cupy.fuse |", "|---|---|---|---|---|---|---|"]
    for name in NUMPY:
        lines.append(f"| {name} | {out[f'cupy {name}']:.1f} | {out[f'cupy.fuse {name}']:.1f} | "
                     f"{out[f'lazy {name}']:.1f} | {out[f'la.jit {name}']:.1f} | "
                     f"{out[f'eager {name}']:.1f} | "
                     f"{out[f'lazy {name}'] / out[f'cupy.fuse {name}']:.2f} |")
    return "\n".join(lines) + "\n"


def element_loop(a: Any, b: Any) -> Any:
    """The loop over elements: ``s = s + a[i] * b[i]``."""
    s = a[0] * 0
    for i in range(a.shape[0]):
        s = s + a[i] * b[i]
    return s


def row_loop(grid: Any) -> Any:
    """A 5-point stencil written row by row into a copy of ``grid`` (a Gauss-Seidel sweep)."""
    u = grid.copy()
    for i in range(1, u.shape[0] - 1):
        u[i, 1:-1] = 0.2 * (u[i, 1:-1] + u[i - 1, 1:-1] + u[i + 1, 1:-1] + u[i, :-2] + u[i, 2:])
    return u


def markdown(out: dict[str, float]) -> str:
    """The performance page's tables of one run (``--md``)."""
    load = os.getloadavg()[0]
    lines = [f"# Small calls, 1,024 float32, cpu (load average {load:.1f} after the run), "
             "median µs of 2,000 calls", "",
             "| expression | NumPy | lazyarr | lazyarr, la.jit | lazyarr eager mode |",
             "|---|---|---|---|---|"]
    for name in NUMPY:
        lines.append(f"| {name} | {out[f'numpy {name}']:.2f} | {out[f'lazy {name}']:.2f} | "
                     f"{out[f'la.jit {name}']:.2f} | {out[f'eager {name}']:.2f} |")
    lines += ["", "# Loops of small statements, float64, median µs of 200 loops", "",
              "| loop | NumPy | lazyarr | vs numpy |", "|---|---|---|---|"]
    for name, what in (("element loop 200", "s = s + a[i] * b[i], 200 elements"),
                       ("row loop 62", "a 5-point stencil written row by row, 62 rows of 62")):
        n, z = out[f"numpy {name}"], out[f"lazy {name}"]
        lines.append(f"| {what} | {n:.1f} | {z:.1f} | {n / z:.2f}x |")
    return "\n".join(lines) + "\n"


def alternate(trees: list[str], rounds: int) -> None:
    """``rounds`` rounds of one process per tree, in turn; each round's rows, then medians."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    runs: list[list[dict[str, float]]] = [[] for _ in trees]
    for _ in range(rounds):
        for k, tree in enumerate(trees):
            env["PYTHONPATH"] = tree
            line = subprocess.run([sys.executable, os.path.abspath(__file__)], env=env, cwd="/",
                                  check=True, capture_output=True, text=True).stdout
            runs[k].append(json.loads(line))
            print(tree, line.strip(), flush=True)
    print(f"{'call':<20}" + "".join(f"{os.path.basename(t.rstrip('/')):>14}" for t in trees))
    for row in runs[0][0]:
        print(f"{row:<20}" + "".join(
            f"{statistics.median(r[row] for r in tree_runs):>14.2f}" for tree_runs in runs))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--ab"]:
        alternate(sys.argv[2:4], int(sys.argv[4]) if len(sys.argv) > 4 else 4)
    elif "--device" in sys.argv and sys.argv[sys.argv.index("--device") + 1] == "cuda":
        text = markdown_cuda(measure_cuda())
        if "--md" in sys.argv:
            with open(sys.argv[sys.argv.index("--md") + 1], "w") as f:
                f.write(text)
        print(text)
    elif "--md" in sys.argv:                 # --device cpu --md FILE: the performance page's
        text = markdown(measure())
        with open(sys.argv[sys.argv.index("--md") + 1], "w") as f:
            f.write(text)
        print(text)
    else:
        print(json.dumps(measure()))
