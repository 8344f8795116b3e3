"""Kernel-only timings of lazyarr's CUDA kernel variants (unroll, block shape, grid, NVVM
options), to choose the defaults. Development tool; findings in docs/notes/gpu.rst.

    python tools/device/gpu_variants.py [--only NAME,...]
"""
from __future__ import annotations

import argparse
import dataclasses
import time

import cupy
import numpy as np

import lazyarr as la
from lazyarr import _materialize
from lazyarr.backends.cuda import backend as B
from lazyarr.backends.cuda import compile as C
from lazyarr.backends.cuda import render as R


class _Captured(Exception):
    pass


def capture(fn):
    class Cap:
        name = "cap"

        def run(self, lowered):
            raise _Captured(lowered)
        plan = run
    orig = _materialize.select
    _materialize.select = lambda d, m: Cap()
    try:
        with la.config(mode="lazy"):
            fn()
    except _Captured as c:
        return c.args[0]
    finally:
        _materialize.select = orig
    raise AssertionError


def kernel_ms(lowered, spec=None, nvvm=None, threads_per_sm=None, checked=False, reps=20,
              transform=None):
    # (with the inputs' addresses, as the backend analyzes: a stencil's tile kernel)
    geo = R.analyze(lowered.program, lowered.inputs, addresses=B.BACKEND.addresses)
    spec = dict(spec or {})
    if threads_per_sm:
        spec["threads_per_sm"] = threads_per_sm
    if spec:
        geo.spec = dataclasses.replace(geo.spec, **spec)
    rendered = R.render(lowered.program, geo.spec, checked=checked)
    if transform is not None:    # (experiments: tools/device/kernel_transforms.py)
        import kernel_transforms
        source = kernel_transforms.apply(transform, rendered.source, C.gpu_namespace())
        rendered = dataclasses.replace(rendered, source=source)
    t0 = time.perf_counter()
    ptx, entry = C.compile_ptx(rendered, (9, 0), nvvm)
    t_compile = time.perf_counter() - t0
    mod = cupy.cuda.function.Module()
    mod.load(ptx.encode())
    fn = mod.get_function(entry)
    sms, _ = B._current_device_info()
    e = B._Entry(fn, geo, rendered, sms)
    out = cupy.empty(lowered.shape, lowered.program.root.dtype)
    args = B.BACKEND.arguments(e, lowered.inputs, lowered.scalars, out)
    if e.fpe_slot >= 0:      # a checked kernel's flag words (read by no one here)
        args[e.fpe_slot] = cupy.zeros(64, np.uint32)
    args = tuple(args)
    for _ in range(3):
        fn(e.grid, e.block, args)
    s, t = cupy.cuda.Event(), cupy.cuda.Event()
    cupy.cuda.Device().synchronize()
    s.record()
    for _ in range(reps):
        fn(e.grid, e.block, args)
    t.record()
    t.synchronize()
    return cupy.cuda.get_elapsed_time(s, t) / reps, out, t_compile, e.grid[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    n = 1 << 28
    rng = cupy.random.default_rng(1)
    x = la.asarray(rng.standard_normal(n, dtype=cupy.float32))
    y = la.asarray(rng.standard_normal(n, dtype=cupy.float32))
    side = 1 << 14
    m = la.asarray(rng.standard_normal((side, side), dtype=cupy.float32))
    w = la.asarray(rng.random((side, side), dtype=cupy.float32))
    w4 = la.asarray(rng.random((4096, 4096), dtype=cupy.float32))
    gb = n * 4 / 1e9

    def jacobi(u):
        return 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    work = {
        "jacobi_sum": (lambda: la.sum(jacobi(la.sqrt(w))), side * side * 4 / 1e9),
        "jacobi_map": (lambda: jacobi(w).compute(), side * side * 8 / 1e9),
        "jacobi_map4k": (lambda: jacobi(w4).compute(), 4096 * 4096 * 8 / 1e9),
        "map": (lambda: (x * y + 1.5).compute(), 3 * gb),
        "sumabs": (lambda: la.sum(abs(x)), gb),
        "chain": (lambda: la.sum(la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y), 2 * gb),
        "tanh": (lambda: la.sum(la.tanh(x)), gb),
        "sqrtabs": (lambda: la.sum(la.sqrt(abs(x * y + 1.5))), 2 * gb),
        "rows": (lambda: la.sum(m * m, axis=1), side * side * 4 / 1e9),
        "cols": (lambda: la.sum(m * m, axis=0), side * side * 4 / 1e9),
    }
    # strided coordinates: magic-number division (the default), a division instruction, carried;
    # each also with NumPy's floating-point checks
    carry = [dict(), dict(spec=dict(fastdiv=False)), dict(spec=dict(carry=True)),
             dict(checked=True), dict(spec=dict(fastdiv=False), checked=True)]
    variants = {
        # (the stencil tile's threads: 256 x 8 rows a thread take 86 registers, 512 x 4 take
        # 53, 1024 x 2 take 56 on sm_90: ptxas -v)
        "jacobi_sum": carry + [dict(spec=dict(tx=512, unroll=4)), dict(spec=dict(tx=1024, unroll=2)),
                               dict(spec=dict(tx=512, unroll=4), threads_per_sm=8192)],
        "jacobi_map": carry, "jacobi_map4k": carry,
        "map": [dict(), dict(spec=dict(unroll=2)), dict(spec=dict(unroll=8)), dict(spec=dict(tx=512)),
                dict(checked=True)],
        "sumabs": [dict(), dict(spec=dict(unroll=16)), dict(threads_per_sm=8192)],
        "chain": [dict(), dict(spec=dict(unroll=1)), dict(spec=dict(unroll=4)),
                  dict(spec=dict(unroll=8)),
                  dict(threads_per_sm=2048), dict(threads_per_sm=8192),
                  dict(spec=dict(unroll=4), threads_per_sm=2048),
                  dict(spec=dict(unroll=4), threads_per_sm=8192),
                  dict(spec=dict(tx=128)), dict(spec=dict(tx=512)),
                  dict(spec=dict(tx=128, unroll=4)), dict(spec=dict(tx=512, unroll=4)),
                  dict(spec=dict(unroll=1), threads_per_sm=8192), dict(nvvm=dict(prec_sqrt=False)),
                  dict(spec=dict(unroll=4), transform="vec4"),
                  dict(spec=dict(unroll=4), transform="vec4", threads_per_sm=8192),
                  dict(spec=dict(unroll=4, tx=128), transform="vec4"),
                  dict(transform="i32"), dict(spec=dict(unroll=4), transform="i32"),
                  dict(spec=dict(unroll=4), transform="i32", threads_per_sm=8192),
                  dict(spec=dict(unroll=4, tx=128), transform="i32"),
                  dict(spec=dict(unroll=2, tx=128), transform="i32")],
        "tanh": [dict(), dict(nvvm=dict(ftz=True)), dict(nvvm=dict(fastmath=True, fma=True))],
        "sqrtabs": [dict(), dict(nvvm=dict(ftz=True)), dict(nvvm=dict(prec_sqrt=False))],
        "rows": [dict(), dict(threads_per_sm=1 << 30), dict(spec=dict(tx=32, ty=4)),
                 dict(spec=dict(tx=32, ty=4), threads_per_sm=1 << 30), dict(spec=dict(tx=16, ty=16))],
        "cols": [dict(), dict(spec=dict(tx=32, ty=8)), dict(spec=dict(tx=32, ty=8, unroll=16)),
                 dict(spec=dict(tx=32, ty=4, unroll=16)), dict(spec=dict(tx=32, ty=32, unroll=4))],
    }
    rows_out = []
    for name, (fn, gbytes) in work.items():
        if only and name not in only:
            continue
        low = capture(fn)
        ref = None
        for v in variants[name]:
            try:
                ms, out, tc, grid = kernel_ms(low, **v)
            except Exception as exc:  # noqa: BLE001
                print(f"{name:8s} {v!s:60s} FAILED {exc!r}"[:300])
                continue
            val = cupy.asnumpy(out).ravel()[:4]
            if ref is None:
                ref = val
            same = np.allclose(val, ref, rtol=1e-3)
            line = (f"{name:8s} {v!s:60s} {ms:8.4f} ms {gbytes / (ms * 1e-3):7.0f} GB/s "
                    f"grid {grid:7d} compile {tc:5.2f}s {'' if same else 'MISMATCH'}")
            print(line, flush=True)
            rows_out.append(line)
    return rows_out


if __name__ == "__main__":
    main()
