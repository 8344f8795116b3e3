"""lazyarr's cuda backend against its peers, all in one run on one GPU.

    python tools/peers/gpu_peers.py [--quick] [--json out.json]

Peers: CuPy eager (op by op), ``cupy.fuse``, ``torch.compile`` (inductor), and the read / copy
ceilings (CuPy ``x.sum()`` and a device-to-device copy). float32, 2^28 elements per input
(1 GiB). Each figure is the median of CUDA-event timings of single calls (the GPU idle before
each, so host work before the kernel starts counts, as in a user's script) after warm-ups;
"b2b" is the per-call time of 20 calls back to back (kernel time, host work overlapped).
Small-call figures are wall clock per call including synchronization. Prints a markdown table.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import cupy

import lazyarr as la

RESULTS: list[dict[str, object]] = []


def event_ms(fn, reps: int = 30, warm: int = 3, b2b: int = 20) -> tuple[float, float]:
    for _ in range(warm):
        fn()
    cupy.cuda.Device().synchronize()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(reps):
        cupy.cuda.Device().synchronize()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
        if times[0] > 50 and len(times) >= 3:
            break
    single = statistics.median(times)
    if single > 50:
        return single, float("nan")
    cupy.cuda.Device().synchronize()
    start.record()
    for _ in range(b2b):
        fn()
    end.record()
    end.synchronize()
    return single, cupy.cuda.get_elapsed_time(start, end) / b2b


def wall_us(fn, reps: int = 300, warm: int = 20) -> float:
    sync = cupy.cuda.Device().synchronize
    for _ in range(warm):
        fn()
        sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def record(work: str, impl: str, ms: float, b2b: float = float("nan"), extra: str = "") -> None:
    RESULTS.append({"work": work, "impl": impl, "ms": ms, "b2b": b2b, "extra": extra})
    print(f"  {work:38s} {impl:16s} {ms:10.4f} ms  b2b {b2b:9.4f} ms  {extra}", flush=True)


def torch_compiled(fn):
    try:
        import torch
        return torch.compile(fn)
    except Exception as exc:  # noqa: BLE001
        print("torch.compile unavailable:", exc)
        return None


def bench_axis(axis, m, lm, tm, side, mbytes, read_bw, torch) -> None:
    w = f"sum(x*x, axis={axis}) {side}x{side}"
    record(w, "cupy eager", *event_ms(lambda: cupy.sum(m * m, axis=axis)))

    def sum_sq(a):
        return cupy.sum(a * a, axis=axis)
    fa = cupy.fuse(sum_sq)
    record(w, "cupy.fuse", *event_ms(lambda: fa(m)))
    if torch:
        f4 = torch_compiled(lambda a: (a * a).sum(dim=axis))
        record(w, "torch.compile", *event_ms(lambda: f4(tm)))
    with la.config(mode="lazy"):
        ms, b2b = event_ms(lambda: la.sum(lm * lm, axis=axis))
        bw = mbytes / (ms * 1e-3) / 1e9
        record(w, "lazyarr", ms, b2b, f"{bw:.0f} GB/s = {bw / read_bw:.1%} of read")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="2^24 elements instead of 2^28")
    ap.add_argument("--json", default=None)
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()
    n = 1 << (24 if args.quick else 28)
    side = 1 << (12 if args.quick else 14)
    torch = None
    if not args.no_torch:
        try:
            import torch
        except Exception:  # noqa: BLE001
            torch = None
    dev = cupy.cuda.Device()
    print(f"GPU: {cupy.cuda.runtime.getDeviceProperties(dev.id)['name'].decode()}, n = 2^{n.bit_length() - 1}")
    rng = cupy.random.default_rng(0)
    x = rng.standard_normal(n, dtype=cupy.float32)
    y = rng.standard_normal(n, dtype=cupy.float32)
    lx, ly = la.asarray(x), la.asarray(y)
    tx = torch.from_dlpack(x) if torch else None
    ty = torch.from_dlpack(y) if torch else None
    gib = n * 4

    # ---- ceilings
    dst = cupy.empty_like(x)
    ms, b2b = event_ms(lambda: cupy.copyto(dst, x))
    copy_bw = 2 * gib / (b2b * 1e-3) / 1e9
    record("copy (ceiling)", "cupy copyto", ms, b2b, f"{copy_bw:.0f} GB/s r+w (b2b)")
    ms, b2b = event_ms(lambda: x.sum())
    read_bw = gib / (b2b * 1e-3) / 1e9
    sum_ms = ms
    record("read (ceiling)", "cupy x.sum()", ms, b2b, f"{read_bw:.0f} GB/s read (b2b)")

    # ---- sum(abs(x))
    w = "sum(abs(x))"
    record(w, "cupy eager", *event_ms(lambda: cupy.abs(x).sum()))
    def sum_abs(a):
        return cupy.sum(cupy.abs(a))
    fused = cupy.fuse(sum_abs)
    record(w, "cupy.fuse", *event_ms(lambda: fused(x)))
    if torch:
        f = torch_compiled(lambda t: t.abs().sum())
        record(w, "torch.compile", *event_ms(lambda: f(tx)))
    with la.config(mode="lazy"):
        ms, b2b = event_ms(lambda: la.sum(abs(lx)))
        record(w, "lazyarr", ms, b2b, f"{ms / sum_ms:.3f}x cupy x.sum()")

    # ---- the chain
    w = "sum(sqrt(abs(x*y+1.5))*tanh(x)-y)"

    def chain_cp(a, b):
        return cupy.sum(cupy.sqrt(cupy.abs(a * b + 1.5)) * cupy.tanh(a) - b)
    record(w, "cupy eager", *event_ms(lambda: chain_cp(x, y)))
    eager_ms = RESULTS[-1]["ms"]
    fchain = cupy.fuse(chain_cp)
    record(w, "cupy.fuse", *event_ms(lambda: fchain(x, y), reps=3, warm=1))
    if torch:
        f2 = torch_compiled(lambda a, b: (torch.sqrt(torch.abs(a * b + 1.5)) * torch.tanh(a) - b).sum())
        record(w, "torch.compile", *event_ms(lambda: f2(tx, ty)))
    with la.config(mode="lazy"):
        ms, b2b = event_ms(lambda: la.sum(la.sqrt(abs(lx * ly + 1.5)) * la.tanh(lx) - ly))
        record(w, "lazyarr", ms, b2b, f"{eager_ms / ms:.1f}x faster than eager")

    # ---- elementwise, materialized
    w = "x*y+1.5 materialized"
    record(w, "cupy eager", *event_ms(lambda: x * y + 1.5))
    def mul_add(a, b):
        return a * b + 1.5
    fe = cupy.fuse(mul_add)
    record(w, "cupy.fuse", *event_ms(lambda: fe(x, y)))
    if torch:
        f3 = torch_compiled(lambda a, b: a * b + 1.5)
        record(w, "torch.compile", *event_ms(lambda: f3(tx, ty)))
    with la.config(mode="lazy"):
        ms, b2b = event_ms(lambda: (lx * ly + 1.5).compute())
        bw = 3 * gib / (ms * 1e-3) / 1e9
        record(w, "lazyarr", ms, b2b, f"{bw:.0f} GB/s = {bw / copy_bw:.1%} of copy")
    dst = None

    # ---- axis reductions on side x side
    m = rng.standard_normal((side, side), dtype=cupy.float32)
    lm = la.asarray(m)
    tm = torch.from_dlpack(m) if torch else None
    mbytes = side * side * 4
    for axis in (1, 0):
        bench_axis(axis, m, lm, tm, side, mbytes, read_bw, torch)
    # ---- layouts without a copy: a middle axis, a transposed and a strided input
    with la.config(mode="lazy"):
        t3 = m.reshape(side // 32, 32, side)          # 3-d view, reduce the middle axis
        lt3 = la.asarray(t3)
        w = f"sum(x*x, axis=1) {t3.shape} (middle axis)"
        record(w, "cupy eager", *event_ms(lambda: cupy.sum(t3 * t3, axis=1)))
        ms, b2b = event_ms(lambda: la.sum(lt3 * lt3, axis=1))
        record(w, "lazyarr", ms, b2b, f"{mbytes / (ms * 1e-3) / 1e9:.0f} GB/s, no copy")
        w = f"(x.T * 2) materialized {side}x{side} (transposed input)"
        record(w, "cupy eager", *event_ms(lambda: m.T * 2))
        lmt = la.asarray(m.T)
        ms, b2b = event_ms(lambda: (lmt * 2).compute())
        record(w, "lazyarr", ms, b2b, f"{2 * mbytes / (ms * 1e-3) / 1e9:.0f} GB/s r+w, indexed")
        w = "sum(abs(x[::2])) (strided input, 2^27 of 2^28)"
        xs = x[::2]
        record(w, "cupy eager", *event_ms(lambda: cupy.abs(xs).sum()))
        lxs = la.asarray(xs)
        ms, b2b = event_ms(lambda: la.sum(abs(lxs)))
        record(w, "lazyarr", ms, b2b, "indexed with a stride, no copy")
    m = lm = tm = None

    # ---- small cached calls, wall clock incl. synchronization
    sx = rng.standard_normal(1024, dtype=cupy.float32)
    sy = rng.standard_normal(1024, dtype=cupy.float32)
    lsx, lsy = la.asarray(sx), la.asarray(sy)
    w = "chain, 1024 elems, wall/call"
    record(w, "cupy eager", wall_us(lambda: chain_cp(sx, sy)) / 1e3, )
    record(w, "cupy.fuse", wall_us(lambda: fchain(sx, sy)) / 1e3)
    if torch:
        tsx, tsy = torch.from_dlpack(sx), torch.from_dlpack(sy)
        record(w, "torch.compile", wall_us(lambda: f2(tsx, tsy)) / 1e3)
    with la.config(mode="lazy"):
        us = wall_us(lambda: la.sum(la.sqrt(abs(lsx * lsy + 1.5)) * la.tanh(lsx) - lsy))
        record(w, "lazyarr", us / 1e3, extra=f"{us:.1f} us")
        jitted = la.jit(lambda a, b: la.sum(la.sqrt(abs(a * b + 1.5)) * la.tanh(a) - b))
        us_jit = wall_us(lambda: jitted(lsx, lsy))
        record(w, "lazyarr la.jit", us_jit / 1e3, extra=f"{us_jit:.1f} us (replayed)")
        from lazyarr._program import lower
        from lazyarr.backends.cuda import BACKEND
        node = (la.sqrt(abs(lsx * lsy + 1.5)) * la.tanh(lsx) - lsy)._node
        low = lower(node)
        us_run = wall_us(lambda: BACKEND.run(low))
        us_lower = wall_us(lambda: lower(node))
        record(w, "lazyarr run only", us_run / 1e3, extra=f"{us_run:.1f} us backend.run (elementwise)")
        record(w, "lazyarr lower only", us_lower / 1e3, extra=f"{us_lower:.1f} us lower()")
        raw = wall_us(lambda: cupy.abs(sx))
        record(w, "cupy 1 kernel floor", raw / 1e3, extra=f"{raw:.1f} us cupy.abs")

    # ---- memory of a lazy full reduction
    pool = cupy.get_default_memory_pool()
    with la.config(mode="lazy"):
        la.sum(abs(lx))
        cupy.cuda.Device().synchronize()
        before = pool.used_bytes()
        peak_before = pool.total_bytes()
        r = la.sum(abs(lx))
        used = pool.used_bytes() - before
        grown = pool.total_bytes() - peak_before
        del r
    record("sum(abs(x)) extra device memory", "lazyarr", float("nan"),
           extra=f"{used} B in use during/after call (incl. 0-d result), pool grew {grown} B")

    # ---- cold and warm-cache first calls in fresh processes
    child = textwrap.dedent(f"""
        import time, json, sys
        t_imp = time.perf_counter()
        import numpy as np, cupy
        import lazyarr as la
        x = la.asarray(cupy.ones({1024}, cupy.float32)); y = la.asarray(cupy.ones({1024}, cupy.float32))
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        with la.config(mode="lazy"):
            r = float(la.sum(la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y))
        t1 = time.perf_counter()
        from lazyarr.backends.cuda import compile as C
        print(json.dumps({{"first_call_s": t1 - t0, "numba": "numba" in sys.modules,
                          "stats": C.stats}}))
    """)
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, LAZYARR_CACHE_DIR=d)
        for label in ("cold (empty cache, new process)", "warm disk cache, new process"):
            out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True,
                                 text=True)
            if out.returncode:
                print(out.stderr[-2000:])
                continue
            res = json.loads(out.stdout.strip().splitlines()[-1])
            st = res["stats"]
            record("first chain call: " + label, "lazyarr", res["first_call_s"] * 1e3,
                   extra=(f"of which compile (Numba import + NVVM) {st['compile_s']:.2f} s, "
                          f"load {st['load_s']:.3f} s" if res["numba"] else
                          "kernel from the disk cache; Numba not imported"))

    # ---- table
    print()
    print("| work | implementation | per call (ms) | back to back (ms) | note |")
    print("|---|---|---|---|---|")
    for r in RESULTS:
        b = "" if r["b2b"] != r["b2b"] else f"{r['b2b']:.4f}"
        m_ = "" if r["ms"] != r["ms"] else f"{r['ms']:.4f}"
        print(f"| {r['work']} | {r['impl']} | {m_} | {b} | {r['extra']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(RESULTS, f, indent=1)


if __name__ == "__main__":
    main()
