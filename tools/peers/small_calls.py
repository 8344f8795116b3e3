"""Small calls on the CPU (issue 13, item 1): asv's ``CachedCall.track_hot_call_us`` body (the
median of 2,000 calls back to back, 1,024 float32 elements) for the three headline expressions
in lazy and eager mode, NumPy's own chain beside them, and two loops of small statements: the
loop over elements ``s = s + a[i] * b[i]`` (200 elements) and a row-by-row stencil written
into its array (62 rows of 62). One process prints one JSON line of medians, in µs.

The machine's speed moves between runs (docs/notes/cpu.rst), so compare trees in processes
alternated on the same machine::

    python tools/peers/small_calls.py                       # this tree, one process
    python tools/peers/small_calls.py --ab OLD NEW 4        # 4 rounds of OLD, NEW processes

(``OLD``/``NEW``: source trees with their extensions built, e.g. ``git archive`` of a commit
and ``python setup.py build_ext --inplace``.) OpenBLAS's threads are kept to one: their
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

#: NumPy's own forms of benchmarks/common.py's HEADLINE expressions
NUMPY: dict[str, Callable[[Any, Any], Any]] = {
    "sum_abs": lambda x, y: np.sum(abs(x)),
    "axpy": lambda x, y: x * y + 1.5,
    "chain": lambda x, y: np.sum(np.sqrt(abs(x * y + 1.5)) * np.tanh(x) - y),
}


def _median_us(fn: Callable[[], Any], n: int = 2000, warm: int = 100) -> float:
    times = []
    for i in range(n + warm):
        t0 = time.perf_counter()
        fn()
        if i >= warm:
            times.append(time.perf_counter() - t0)
    times.sort()
    return round(times[len(times) // 2] * 1e6, 3)


def measure() -> dict[str, float]:
    import lazyarr as la
    sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))
    from common import HEADLINE, data, finish, prepare

    out: dict[str, float] = {}
    for mode in ("lazy", "eager"):
        prepare("cpu", mode)
        x, y = data("cpu", 1024, seed=0), data("cpu", 1024, seed=1)
        for name, fn in HEADLINE.items():
            out[f"{mode} {name}"] = _median_us(lambda fn=fn: finish(fn(x, y), "cpu"))
    prepare("cpu", "lazy")
    for name, fn in HEADLINE.items():            # asv's JitCall: the kernels replayed
        jitted = la.jit(fn)
        finish(jitted(x, y), "cpu")
        out[f"la.jit {name}"] = _median_us(lambda jitted=jitted: finish(jitted(x, y), "cpu"))
    xn, yn = np.asarray(x), np.asarray(y)
    for name, fn in NUMPY.items():
        out[f"numpy {name}"] = _median_us(lambda fn=fn: fn(xn, yn))

    prepare("cpu", "lazy")
    rng = np.random.default_rng(0)
    a, b = la.asarray(rng.random(200)), la.asarray(rng.random(200))

    def element_loop() -> Any:
        s = a[0] * 0
        for i in range(200):
            s = s + a[i] * b[i]
        return s

    grid = la.asarray(rng.random((64, 64)))

    def row_loop() -> Any:
        u = grid.copy()
        for i in range(1, 63):
            u[i, 1:-1] = 0.2 * (u[i, 1:-1] + u[i - 1, 1:-1] + u[i + 1, 1:-1] + u[i, :-2] + u[i, 2:])
        return u

    out["element loop 200"] = _median_us(element_loop, n=200, warm=10)
    out["row loop 62"] = _median_us(row_loop, n=200, warm=10)
    return out


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
    else:
        print(json.dumps(measure()))
