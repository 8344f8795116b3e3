"""Dask's own cost per ``compute`` (issue 20): the chain ``sum(sqrt(abs(x*y+1.5))*tanh(x)-y)``
over tiny persisted chunks, NumPy's and lazyarr's, on Dask's threaded scheduler, so that the
chunks' work is nothing and what is timed is Dask's: a whole ``compute`` (building and
optimizing the expression's graph, then running it), a prebuilt graph computed again, and
the graph's building alone. Bounds what any chunk type can gain over another at a given
size: ``(a + dask) / (b + dask)``. Medians of 15, ms.

    python tools/peers/dask_overhead.py [--n 16384] [--chunk 1024]
"""
from __future__ import annotations

import argparse
import statistics
import time

import dask
import dask.array as da
import numpy as np

import lazyarr  # noqa: F401  (registers the "lazyarr" array backend)


def chain(x, y):
    return (da.sqrt(abs(x * y + 1.5)) * da.tanh(x) - y).sum()


def draw(backend: str, n: int, chunk: int):
    with dask.config.set({"array.backend": backend}):
        rng = da.random.default_rng(0)
        return (rng.random(n, dtype=np.float32, chunks=chunk).persist(),
                rng.random(n, dtype=np.float32, chunks=chunk).persist())


def median_ms(fn, reps: int = 15) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--chunk", type=int, default=1024)
    opts = ap.parse_args()
    print(f"Dask's own cost: the chain over {opts.n} float32 in chunks of {opts.chunk} "
          f"({-(-opts.n // opts.chunk)} chunks), threaded scheduler, medians of 15, ms")
    print("| chunks | compute | prebuilt graph computed | graph built |")
    print("|---|---|---|---|")
    for backend in ("numpy", "lazyarr"):
        x, y = draw(backend, opts.n, opts.chunk)
        with dask.config.set(scheduler="threads"):
            graph = chain(x, y)
            graph.compute()
            whole = median_ms(lambda: chain(x, y).compute())
            again = median_ms(graph.compute)
            built = median_ms(lambda: chain(x, y).__dask_graph__())
        print(f"| {backend} | {whole:.2f} | {again:.2f} | {built:.2f} |")


if __name__ == "__main__":
    main()
