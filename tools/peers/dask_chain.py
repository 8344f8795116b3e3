"""Issue 20's measurement: ``sum(sqrt(abs(x*y+1.5))*tanh(x)-y)`` over float32 arrays of
2^26 elements in 2^22-element chunks, NumPy and lazyarr alone, Dask on threads and on a
LocalCluster (2 workers x 1 thread) with NumPy and with lazyarr chunks; medians of
interleaved rounds, ms. The data are drawn on the workers (``da.random`` with each array
backend) and persisted first, so only the chain is timed. Also the pickle size of a computed
chunk. ``python tools/peers/dask_chain.py [--log2n 26] [--log2chunk 22] [--rounds 7]``."""
from __future__ import annotations

import argparse
import pickle
import time
from typing import Any

import dask
import dask.array as da
import numpy as np

import lazyarr as la


def chain(x, y, xp=np):
    return xp.sum(xp.sqrt(abs(x * y + 1.5)) * xp.tanh(x) - y)


def draw(backend: str, n: int, chunk: int):
    with dask.config.set({"array.backend": backend}):
        rng = da.random.default_rng(0)
        return (rng.random(n, dtype=np.float32, chunks=chunk),
                rng.random(n, dtype=np.float32, chunks=chunk))


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1e3


def medians(rows: dict[str, Any], reference: str, rounds: int) -> dict[str, float]:
    """Each row's median time (ms) over interleaved rounds, after one warm call of each whose
    value must be the ``reference`` row's (the same sum, within float32 rounding)."""
    values = {name: fn() for name, fn in rows.items()}   # warm: compiles, connections
    for name, value in values.items():
        assert abs(value - values[reference]) <= 1e-3 * abs(values[reference]), (name, value, values[reference])
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(rounds):
        for name, fn in rows.items():
            times[name].append(timed(fn))
    return {name: sorted(t)[len(t) // 2] for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log2n", type=int, default=26)
    parser.add_argument("--log2chunk", type=int, default=22)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                        help="cuda: CuPy and lazyarr cuda chunks on Dask's threads (no cluster)")
    parser.add_argument("--profile", action="store_true",
                        help="cuda: also Dask's own cost (the graph built once; NumPy chunks of "
                             "16 elements) and a cProfile of one compute with lazyarr chunks "
                             "on Dask's synchronous scheduler")
    args = parser.parse_args()
    n, chunk = 1 << args.log2n, 1 << args.log2chunk
    if args.device == "cuda":
        return gpu(n, chunk, args.rounds, args.profile)
    xn, yn = (np.asarray(a) for a in dask.compute(*draw("numpy", n, chunk), scheduler="threads"))
    xl, yl = la.asarray(xn), la.asarray(yn)
    import distributed   # (the cuda rows need only dask)

    threaded = {b: dask.persist(*draw(b, n, chunk), scheduler="threads") for b in ("numpy", "lazyarr")}
    rows = {
        "NumPy, one process": lambda: float(chain(xn, yn)),
        "lazyarr alone": lambda: float(chain(xl, yl, la)),
        "Dask threaded, NumPy chunks": lambda: float(chain(*threaded["numpy"]).compute(scheduler="threads")),
        "Dask threaded, lazyarr chunks": lambda: float(chain(*threaded["lazyarr"]).compute(scheduler="threads")),
    }
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        on_cluster = {b: client.persist(list(draw(b, n, chunk))) for b in ("numpy", "lazyarr")}
        distributed.wait([a for pair in on_cluster.values() for a in pair])
        rows["Dask LocalCluster, NumPy chunks"] = lambda: float(client.compute(chain(*on_cluster["numpy"])).result())
        rows["Dask LocalCluster, lazyarr chunks"] = lambda: float(client.compute(chain(*on_cluster["lazyarr"])).result())
        med = medians(rows, "NumPy, one process", args.rounds)
    print(f"n = 2^{args.log2n} float32, chunks of 2^{args.log2chunk}, medians of {args.rounds} rounds")
    print("| variant | ms | vs NumPy | vs lazyarr alone |\n|---|---|---|---|")
    for name, ms in med.items():
        print(f"| {name} | {ms:.0f} | {med['NumPy, one process'] / ms:.2f}x | "
              f"{ms / med['lazyarr alone']:.2f}x |")
    print(f"threaded: lazyarr chunks {med['Dask threaded, NumPy chunks'] / med['Dask threaded, lazyarr chunks']:.2f}x "
          f"Dask with NumPy chunks; LocalCluster: "
          f"{med['Dask LocalCluster, NumPy chunks'] / med['Dask LocalCluster, lazyarr chunks']:.2f}x")
    part = la.sum(la.asarray(xn[:chunk]) * 2)
    print(f"pickle of a computed chunk: {len(pickle.dumps(la.asarray(xn[:chunk])))} bytes for "
          f"{chunk * 4} bytes of values; of a partial sum: {len(pickle.dumps(part))} bytes")


def gpu(n: int, chunk: int, rounds: int, profile: bool = False) -> None:
    """The chain on the GPU: CuPy and lazyarr alone, Dask threaded with CuPy and lazyarr chunks
    (one thread per chunk task; a worker per GPU is dask_cuda's business)."""
    import cupy

    rng = cupy.random.default_rng(0)
    xc, yc = rng.random(n, dtype=cupy.float32), rng.random(n, dtype=cupy.float32)
    xl, yl = la.asarray(xc), la.asarray(yc)
    dc = [da.from_array(a, chunks=chunk, asarray=False) for a in (xc, yc)]
    dl = [da.from_array(a, chunks=chunk, asarray=False) for a in (xl, yl)]
    rows = {
        "CuPy eager, one call": lambda: float(chain(xc, yc, cupy)),
        "lazyarr alone": lambda: float(chain(xl, yl, la)),
        "Dask threaded, CuPy chunks": lambda: float(chain(*dc).compute(scheduler="threads")),
        "Dask threaded, lazyarr chunks": lambda: float(chain(*dl).compute(scheduler="threads")),
    }
    if profile:       # what Dask itself costs per compute, whatever the chunks hold
        built = chain(*dl)
        tiny = [da.from_array(np.ones(n // chunk * 16, np.float32), chunks=16) for _ in range(2)]
        rows["Dask threaded, lazyarr chunks, graph built once"] = lambda: float(built.compute(scheduler="threads"))
        rows["Dask threaded, NumPy chunks of 16 elements (Dask's own cost)"] = \
            lambda: float(chain(*tiny).compute(scheduler="threads"))
    med = medians(rows, "CuPy eager, one call", rounds) if not profile else \
        medians({k: v for k, v in rows.items() if "16 elements" not in k}, "CuPy eager, one call", rounds)
    if profile:
        med["Dask threaded, NumPy chunks of 16 elements (Dask's own cost)"] = \
            medians({"t": rows["Dask threaded, NumPy chunks of 16 elements (Dask's own cost)"]}, "t", rounds)["t"]
        import cProfile
        import io
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        float(chain(*dl).compute(scheduler="sync"))    # (in this thread, so that it is seen)
        prof.disable()
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(30)
        print(text.getvalue()[-9000:])
    print(f"cuda: n = {n} float32, chunks of {chunk}, medians of {rounds} rounds")
    print("| variant | ms | vs CuPy eager |\n|---|---|---|")
    for name, ms in med.items():
        print(f"| {name} | {ms:.2f} | {med['CuPy eager, one call'] / ms:.2f}x |")
    print(f"Dask threaded: lazyarr chunks "
          f"{med['Dask threaded, CuPy chunks'] / med['Dask threaded, lazyarr chunks']:.2f}x CuPy chunks")


if __name__ == "__main__":
    main()
