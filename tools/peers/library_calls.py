"""Library calls fed by a pending chain (issue 18; asv ``bench_library``), on the CPU or a GPU.

* ``sort``, ``argsort``, ``cumsum``, ``unique`` of ``f(x) = sqrt(abs(x)) * 2 - 1``, float32:
  the library (NumPy on the CPU, CuPy on cuda) on ``f(x)`` already computed; lazyarr on the
  pending chain ``f(x)``; lazyarr on ``f(x)`` already computed. The target: pending /
  computed <= 1.1 (the chain costs almost nothing extra: it is computed straight into the
  buffer the call works in).
  On cuda also per call in runs of 20 calls back to back (each result computed, none waited
  for): a single call from an idle GPU is host-bound at 2^20 (the GPU waits while Python
  builds the chain and launches its kernel); back to back, a call's host work overlaps the
  GPU work of the calls before it, as in a script's loop.
* ``fft.rfft(f(x))``: the library's whole expression eager (op by op, then the rfft), the
  library's rfft alone on ``f(x)`` computed, lazyarr's on ``f(x)`` pending (one kernel writes
  the FFT's input) and computed. The GPU target: pending / rfft alone <= 1.3 (CuPy eager 2.8).
* ``sum(maximum(A @ B + bias, 0))``, side² float32: the library's ``A @ B`` alone, its whole
  expression, lazyarr's (one library call + one fused kernel). The targets: lazyarr / the
  library's ``A @ B`` alone <= 1.05 (CPU), <= 1.03 (cuda: cuBLAS through CuPy in NumPy's
  float32 precision, no TF32: ``CUPY_TF32`` unset).

One process, the variants alternated run by run, medians. On cuda each call is timed by CUDA
events (the GPU idle before it: host work before the first kernel counts, as in
tools/peers/gpu_peers.py) and ends with its result computed; every variant runs
``--warmup`` times first (CuPy's and lazyarr's kernel compiles, cuFFT plans, cuBLAS handles).
Before timing, the script checks that lazyarr's results equal the library's, and prints what
each lazyarr variant runs (its kernel launches, counted at the backend, and the library calls
``la.explain`` lists): e.g. ``1 kernel(s) [into], 1 call(s) [sort]``.

    python tools/peers/library_calls.py [--device cpu|cuda] [--sizes 20 24] [--fft-sizes 24]
        [--side 4096] [--reps 5] [--warmup 2] [--md FILE]

``--md docs/_static/perf/library_calls_<device>.md`` appends the tables (markdown) to a file
that ``tools/perf_page.py`` puts on the performance page. Small sizes check the script end to
end, e.g. in Numba's simulator without a GPU:
``LAZYARR_CUDA_SIM=1 python tools/peers/library_calls.py --device cuda --sizes 12
--fft-sizes 12 --side 64 --reps 2 --warmup 1``.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from typing import Any, Callable, Iterator

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import lazyarr as la  # noqa: E402
from lazyarr import _devices  # noqa: E402
from lazyarr.backends import cpu_fused  # noqa: E402

CALLS = ("sort", "argsort", "cumsum", "unique")


def f(x: Any) -> Any:
    return la.sqrt(la.abs(x)) * 2 - 1


class Device:
    """The device measured: its array module (``xp``: NumPy, or CuPy; NumPy on the simulated
    GPU), how a result is finished and how a call is timed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.xp = _devices.xp(name)
        self.gpu = name == "cuda" and not _devices.cuda_simulated()

    def sync(self) -> None:
        if self.gpu:
            self.xp.cuda.Device().synchronize()

    def finish(self, result: Any) -> Any:
        """Compute a pending result (every array of a tuple); the CPU's library results are
        NumPy arrays already."""
        for r in result if isinstance(result, tuple) else (result,):
            if isinstance(r, la.LazyArray):
                r.compute()
        return result

    def host(self, result: Any) -> np.ndarray:
        if isinstance(result, la.LazyArray):
            return result.to_numpy()
        return np.asarray(result.get() if self.gpu else result)

    def seconds(self, fn: Callable[[], Any]) -> float:
        """One call, finished: CUDA events on a GPU (idle before the call), else the wall clock."""
        if self.gpu:
            cp = self.xp
            start, end = cp.cuda.Event(), cp.cuda.Event()
            self.sync()
            start.record()
            self.finish(fn())
            end.record()
            end.synchronize()
            return cp.cuda.get_elapsed_time(start, end) * 1e-3
        t = time.perf_counter()
        self.finish(fn())
        return time.perf_counter() - t

    def seconds_back_to_back(self, fn: Callable[[], Any], calls: int) -> float:
        """Seconds per call of ``calls`` calls issued back to back (each result computed, none
        waited for) between two CUDA events: the host work of a call overlaps the GPU work of
        the calls before it, as in a script's loop (on the CPU: the wall clock)."""
        if self.gpu:
            cp = self.xp
            start, end = cp.cuda.Event(), cp.cuda.Event()
            self.sync()
            start.record()
            for _ in range(calls):
                self.finish(fn())
            end.record()
            end.synchronize()
            return cp.cuda.get_elapsed_time(start, end) * 1e-3 / calls
        t = time.perf_counter()
        for _ in range(calls):
            self.finish(fn())
        return (time.perf_counter() - t) / calls

    def describe(self) -> str:
        if self.name == "cpu":
            return f"cpu ({cpu_fused.get_num_threads()} threads, load average " \
                   f"{os.getloadavg()[0]:.1f} before the run)"
        if not self.gpu:
            return "cuda (Numba's simulator: the script's check, not a measurement)"
        cp = self.xp
        gpu = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()
        return f"cuda ({gpu}, CuPy {cp.__version__}, CUPY_TF32={os.environ.get('CUPY_TF32', 'unset')})"


def timed(dev: Device, fns: dict[str, Callable[[], Any]], reps: int, warmup: int) -> dict[str, float]:
    """Median seconds of each function, the functions alternated run by run, after ``warmup``
    runs of each."""
    for _ in range(warmup):
        for fn in fns.values():
            dev.finish(fn())
    dev.sync()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            times[name].append(dev.seconds(fn))
    return {name: statistics.median(ts) for name, ts in times.items()}


def timed_back_to_back(dev: Device, fns: dict[str, Callable[[], Any]], reps: int,
                       calls: int = 20) -> dict[str, float]:
    """Median seconds per call of each function in runs of ``calls`` back-to-back calls
    (:meth:`Device.seconds_back_to_back`), the functions alternated run by run."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            times[name].append(dev.seconds_back_to_back(fn, calls))
    return {name: statistics.median(ts) for name, ts in times.items()}


# ----------------------------------------------------------------------------- what runs
@contextlib.contextmanager
def counting_kernels(device: str) -> Iterator[list[str]]:
    """The lazyarr kernels launched inside the ``with``: "run" (into new memory) or "into"
    (into memory given: the buffer a library call then works in), counted at the backend."""
    from lazyarr import backends
    backend = type(backends.select(device, "lazy"))
    launched: list[str] = []
    real_run, real_into = backend.run, getattr(backend, "run_into", None)

    def run(self: Any, lowered: Any) -> Any:
        launched.append("run")
        return real_run(self, lowered)

    def run_into(self: Any, lowered: Any, out: Any, **kw: Any) -> bool:
        done = real_into(self, lowered, out, **kw)
        if done:
            launched.append("into")
        return done

    backend.run = run
    if real_into is not None:
        backend.run_into = run_into
    try:
        yield launched
    finally:
        backend.run = real_run
        if real_into is not None:
            backend.run_into = real_into


def structure(dev: Device, fn: Callable[[], Any]) -> str:
    """What one call of ``fn`` runs: lazyarr's kernel launches and its library calls (those
    ``la.explain`` lists as steps: each is recorded by ``_fallback._library_call``)."""
    from lazyarr import _fallback
    calls: list[str] = []
    real = _fallback._library_call

    def recorded(path: str, operands: Any, result: Any) -> Any:
        calls.append(path)
        return real(path, operands, result)

    sizes: list[int] = []
    _fallback._library_call = recorded
    try:
        with counting_kernels(dev.name) as launched, allocations(dev, sizes):
            dev.finish(fn())
    finally:
        _fallback._library_call = real
    kinds = ", ".join(launched) or "none"
    text = f"{len(launched)} kernel(s) [{kinds}], {len(calls)} library call(s) [{', '.join(calls)}]"
    if dev.gpu:
        big = [f"{s / 2**20:.0f}" for s in sizes if s >= 1 << 20]
        text += f", {len(big)} allocation(s) >= 1 MiB [{', '.join(big)} MiB]"
    return text


@contextlib.contextmanager
def allocations(dev: Device, sizes: list[int]) -> Iterator[None]:
    """The sizes of the device allocations (CuPy's memory pool) made inside the ``with``, on a
    GPU: the temporaries of a call (a pending chain's kernel writes one buffer only)."""
    hook = None
    if dev.gpu:
        try:
            base = dev.xp.cuda.memory_hook.MemoryHook

            class Sizes(base):   # type: ignore[misc, valid-type]
                name = "library_calls_sizes"

                def malloc_preprocess(self, **kw: Any) -> None:
                    sizes.append(int(kw.get("mem_size", kw.get("size", 0))))

            hook = Sizes()
        except Exception as exc:  # noqa: BLE001
            print(f"  (allocations not counted: {exc})")
    if hook is None:
        yield
        return
    with hook:
        yield


def same(dev: Device, got: Any, want: Any, exact: bool = True) -> None:
    g, w = dev.host(got), dev.host(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    if exact:
        assert np.array_equal(g, w), "results differ"
    else:
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-3 * float(np.abs(w).max() or 1))


# ----------------------------------------------------------------------------- the rows
def inputs(dev: Device, n: int) -> tuple[Any, Any, Any, Any]:
    """``x`` and ``f(x)`` computed, as the library's arrays and as lazyarr's."""
    xp = dev.xp
    x_h = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    x_d = xp.asarray(x_h)
    fx_d = xp.sqrt(xp.abs(x_d)) * 2 - 1
    return x_d, fx_d, la.asarray(x_d), la.asarray(fx_d)


def chain_calls(dev: Device, n: int, reps: int, warmup: int) -> list[list[str]]:
    _, fx_d, x, fx = inputs(dev, n)
    rows = []
    for name in CALLS:
        lib_call, la_call = getattr(dev.xp, name), getattr(la, name)
        # (CuPy's float scan is CUB's, whose partial sums meet in an order that can vary from
        # call to call: the H200 gave two cumsums of one input that differ in the last bits)
        exact = not (name == "cumsum" and dev.name == "cuda")
        same(dev, la_call(f(x)), la_call(fx), exact)
        # (lazyarr's argsort is stable, as the array API asks; NumPy's default is not; CuPy's is)
        stable = {"kind": "stable"} if name == "argsort" and dev.name == "cpu" else {}
        same(dev, la_call(fx), lib_call(fx_d, **stable), exact)
        print(f"  {name}(f(x)) 2^{n.bit_length() - 1}: pending runs "
              f"{structure(dev, lambda: la_call(f(x)))}; computed runs "
              f"{structure(dev, lambda: la_call(fx))}", flush=True)
        fns = {"library": lambda: lib_call(fx_d), "pending": lambda: la_call(f(x)),
               "computed": lambda: la_call(fx)}
        t = timed(dev, fns, reps, warmup)
        rows.append([f"{name}(f(x)), 2^{n.bit_length() - 1}", f"{t['library'] * 1e3:.3f}",
                     f"{t['pending'] * 1e3:.3f}", f"{t['computed'] * 1e3:.3f}",
                     f"{t['pending'] / t['computed']:.2f}"])
        if dev.name == "cuda":      # and with the host work of each call hidden behind the GPU's
            b = timed_back_to_back(dev, fns, reps)
            rows[-1] += [f"{b['library'] * 1e3:.3f}", f"{b['pending'] * 1e3:.3f}",
                         f"{b['computed'] * 1e3:.3f}", f"{b['pending'] / b['computed']:.2f}"]
        print("  ".join(rows[-1]), flush=True)
    return rows


def rfft(dev: Device, n: int, reps: int, warmup: int) -> list[list[str]]:
    x_d, fx_d, x, fx = inputs(dev, n)
    xp, lib = dev.xp, "cupy" if dev.gpu else "numpy"
    same(dev, la.fft.rfft(f(x)), xp.fft.rfft(fx_d), exact=False)
    same(dev, la.fft.rfft(f(x)), la.fft.rfft(fx))
    print(f"  rfft(f(x)) 2^{n.bit_length() - 1}: pending runs "
          f"{structure(dev, lambda: la.fft.rfft(f(x)))}; computed runs "
          f"{structure(dev, lambda: la.fft.rfft(fx))}", flush=True)
    t = timed(dev, {f"rfft alone ({lib}, f(x) computed)": lambda: xp.fft.rfft(fx_d),
                    f"{lib} eager, whole expression": lambda: xp.fft.rfft(xp.sqrt(xp.abs(x_d)) * 2 - 1),
                    "lazyarr, f(x) pending": lambda: la.fft.rfft(f(x)),
                    "lazyarr, f(x) computed": lambda: la.fft.rfft(fx)}, reps, warmup)
    base = next(iter(t.values()))
    return [[name, f"{s * 1e3:.3f}", f"{s / base:.3f}"] for name, s in t.items()]


def matmul_epilogue(dev: Device, side: int, reps: int, warmup: int) -> list[list[str]]:
    xp, lib = dev.xp, "cupy" if dev.gpu else "numpy"
    rng = np.random.default_rng(0)
    a_d, b_d = (xp.asarray(rng.standard_normal((side, side), dtype=np.float32)) for _ in range(2))
    bias_d = xp.asarray(rng.standard_normal(side, dtype=np.float32))
    a, b, bias = la.asarray(a_d), la.asarray(b_d), la.asarray(bias_d)
    got = float(la.sum(la.maximum(a @ b + bias, 0)))
    want = float(xp.sum(xp.maximum(a_d @ b_d + bias_d, 0), dtype=np.float64))
    assert abs(got - want) <= 1e-4 * abs(want), (got, want)
    print(f"  epilogue {side}²: lazyarr runs "
          f"{structure(dev, lambda: la.sum(la.maximum(a @ b + bias, 0)))}", flush=True)
    t = timed(dev, {f"A @ B alone ({lib})": lambda: a_d @ b_d,
                    lib: lambda: xp.sum(xp.maximum(a_d @ b_d + bias_d, 0)),
                    "lazyarr": lambda: la.sum(la.maximum(a @ b + bias, 0))}, reps, warmup)
    base = t[f"A @ B alone ({lib})"]
    return [[name, f"{s * 1e3:.3f}", f"{s / base:.3f}"] for name, s in t.items()]


def variant_table(title: str, against: str, rows: list[list[str]]) -> list[str]:
    """A table of variants (ms, ratio to ``against``), printed, and as markdown lines."""
    print(title)
    lines = ["", f"# {title}", "", f"| variant | ms | vs {against} |", "|---|---|---|"]
    for r in rows:
        print("  ".join(r), flush=True)
        lines.append("| " + " | ".join(r) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[20, 24],
                        help="log2 of n for sort/argsort/cumsum/unique (none: skip them)")
    parser.add_argument("--fft-sizes", type=int, nargs="*", default=[24],
                        help="log2 of n for the rfft (none: skip it)")
    parser.add_argument("--side", type=int, default=4096, help="the matrices' side (0: skip)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs of each variant first")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                        help="the device measured (cuda: CuPy is the library side)")
    parser.add_argument("--md", help="append the tables, as markdown, to this file")
    args = parser.parse_args()
    t0 = time.perf_counter()
    lines: list[str] = []
    with la.config(mode="lazy", device=args.device):
        dev = Device(args.device)
        lib = "cupy" if dev.gpu else "numpy"
        where = f"{dev.describe()}, medians of {args.reps}"
        if args.device == "cuda":
            where += " (CUDA events)" if dev.gpu else ""
        if args.sizes:
            rows = [r for k in args.sizes for r in chain_calls(dev, 2**k, args.reps, args.warmup)]
            title = f"library calls of f(x) = sqrt(abs(x)) * 2 - 1, float32, {where}"
            head = (f"| call | {lib}, f(x) computed (ms) | lazyarr, f(x) pending (ms) | "
                    "lazyarr, f(x) computed (ms) | pending / computed |")
            if args.device == "cuda":
                head += (f" 20 back to back: {lib} (ms a call) | lazyarr pending | lazyarr "
                         "computed | pending / computed |")
            lines += [f"# {title}", "", head, "|---" * head.count(" | ") + "|---|"]
            lines += ["| " + " | ".join(r) + " |" for r in rows]
            print(title, flush=True)
        for k in args.fft_sizes:
            lines += variant_table(f"fft.rfft(f(x)), f(x) = sqrt(abs(x)) * 2 - 1, 2^{k} float32, "
                                   f"{where}", f"{lib}'s rfft alone",
                                   rfft(dev, 2**k, args.reps, args.warmup))
        if args.side:
            lines += variant_table(f"sum(maximum(A @ B + bias, 0)), {args.side}² float32, {where}",
                                   f"{lib}'s A @ B alone",
                                   matmul_epilogue(dev, args.side, args.reps, args.warmup))
    print(f"({time.perf_counter() - t0:.1f} s in all)")
    if args.md:
        with open(args.md, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
