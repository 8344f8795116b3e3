"""``python -m lazyarr demo``: one fused chain, eager vs lazy, on the best device present."""
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import lazyarr as la


def chain(x: la.LazyArray, y: la.LazyArray) -> la.LazyArray:
    """The demo workload: sum(sqrt(abs(x*y + 1.5)) * tanh(x) - y)."""
    return la.sum(la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y)


def _median_ms(fn: Callable[[], object], device: str, repeat: int) -> float:
    sync = (lambda: __import__("cupy").cuda.Device().synchronize()) if device == "cuda" else (lambda: None)
    fn()
    sync()                      # warm-up: compiles and caches the kernel
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def demo(size: int | None, device: str | None, repeat: int) -> None:
    dev = la.get_config().device if device is None else device
    dev = "cuda" if dev == "auto" and la.cuda_available() else ("cpu" if dev == "auto" else dev)
    n = size or (1 << 28 if dev == "cuda" else 1 << 24)
    rng = np.random.default_rng(0)
    x = la.asarray(rng.standard_normal(n, dtype=np.float32), device=dev)
    y = la.asarray(rng.standard_normal(n, dtype=np.float32), device=dev)
    print(f"lazyarr {la.__version__} demo: sum(sqrt(abs(x*y + 1.5)) * tanh(x) - y)")
    print(f"  {n:,} float32 elements per input on {dev} (GPU usable here: {la.cuda_available()})")
    results = {}
    for mode in ("eager", "lazy"):
        with la.config(mode=mode):
            ms = _median_ms(lambda: chain(x, y), dev, repeat)
            answer = float(chain(x, y))
            plan = la.explain(lambda: chain(x, y))
        kernels = len(plan.kernels)
        results[mode] = (ms, kernels, answer, plan.backend)
        print(f"  {mode:5s} [{plan.backend}]: {ms:9.3f} ms  {kernels:2d} kernel launch(es)  answer {answer:.6g}")
    speedup = results["eager"][0] / results["lazy"][0]
    print(f"  lazy is {speedup:.2f}x the speed of eager; answers agree to "
          f"{abs(results['eager'][2] - results['lazy'][2]) / max(abs(results['eager'][2]), 1e-30):.1e} (relative)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m lazyarr", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="time a fused chain eager vs lazy")
    d.add_argument("--size", type=int, default=None, help="elements per input (default 2^24 cpu, 2^28 cuda)")
    d.add_argument("--device", choices=["auto", "cpu", "cuda"], default=None)
    d.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    if args.command == "demo":
        demo(args.size, args.device, args.repeat)


if __name__ == "__main__":
    main()
