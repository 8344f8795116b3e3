"""Where the fused Monte Carlo pi's time goes on the GPU (issue 17): lazyarr's kernel in a few
geometries against a bare Numba kernel doing only the same Philox4x32-10 blocks, the same
float64 conversion and the same test (the floor for this stream), and CuPy eager.

    python tools/device/philox_floor.py [--log2n 28]           # runs each variant in a child

Each variant runs in its own process (the geometry is a module constant); CUDA events,
medians of 9. Development tool: docs/notes/gpu.rst keeps the numbers.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

VARIANTS = {
    "lazyarr U=2 paired, full grid 4096/SM": {},
    "lazyarr U=4 paired": {"HEAVY_UNROLL": 4},
    "lazyarr U=2 paired, grid 2048/SM": {"GRID_FULL": 2048},
    "lazyarr U=2 paired, grid 8192/SM": {"GRID_FULL": 8192},
    "lazyarr U=2 unpaired": {"UNPAIRED": 1},
    "lazyarr U=2 paired, >= 5 blocks/SM (48 regs)": {"MIN_BLOCKS": 5},
    "lazyarr U=2 paired, >= 6 blocks/SM (40 regs)": {"MIN_BLOCKS": 6},
    "lazyarr U=4 paired, >= 4 blocks/SM": {"HEAVY_UNROLL": 4, "MIN_BLOCKS": 4},
}


def events(fn, reps=9):
    """Median CUDA-event milliseconds of ``fn`` (gpu_probe's, imported when first timing: after
    a child's patches)."""
    from gpu_probe import events_ms
    return events_ms(fn, reps)


def child(name: str, n: int) -> None:
    cfg = VARIANTS[name]
    from lazyarr.backends.cuda import render as R
    if "HEAVY_UNROLL" in cfg:
        R.HEAVY_UNROLL = cfg["HEAVY_UNROLL"]
    if "GRID_FULL" in cfg:
        R.GRID_THREADS_PER_SM["full"] = cfg["GRID_FULL"]
    if "UNPAIRED" in cfg:
        R._Kernel._paired_draws = lambda self: []
    if "MIN_BLOCKS" in cfg:      # fewer registers (the key schedule, ...) for more warps
        import tempfile

        from numba.cuda.cudadrv import nvvm
        os.environ["LAZYARR_CACHE_DIR"] = tempfile.mkdtemp()     # (the PTX differs, not the source)
        set_bounds = nvvm.set_launch_bounds
        nvvm.set_launch_bounds = lambda kernel, block: set_bounds(kernel, (block, cfg["MIN_BLOCKS"]))
    import lazyarr as la

    def fused():
        rng = la.random.default_rng(0, fused=True, device="cuda")
        return float(la.mean(rng.random(n) ** 2 + rng.random(n) ** 2 < 1))
    print(f"{name:44s} {events(fused):7.3f} ms  pi/4 ~ {fused():.6f}", flush=True)


def floor(n: int) -> None:
    """The same numbers and test in a bare Numba kernel: counters 2j, 2j+1 of draw streams
    (key 0), one block per pair per draw."""
    import cupy
    import numpy as np
    from numba import cuda, float64, uint32, uint64
    from numba.cuda.libdevice import umulhi

    @cuda.jit(device=True, inline="always")
    def block(b, s0, s1, k0, k1):
        c0, c1, c2, c3 = uint32(b), uint32(b >> uint64(32)), s0, s1
        m0, m1 = uint32(0xD2511F53), uint32(0xCD9E8D57)
        for _ in range(10):
            c0, c1, c2, c3 = (uint32(umulhi(c2, m1) ^ c1 ^ k0), uint32(c2 * m1),
                              uint32(umulhi(c0, m0) ^ c3 ^ k1), uint32(c0 * m0))
            k0 = uint32(k0 + uint32(0x9E3779B9))
            k1 = uint32(k1 + uint32(0xBB67AE85))
        lo = uint64(c0) | (uint64(c1) << uint64(32))
        hi = uint64(c2) | (uint64(c3) << uint64(32))
        return float64(lo >> uint64(11)) * 1.1102230246251565e-16, float64(hi >> uint64(11)) * 1.1102230246251565e-16

    @cuda.jit
    def kernel(nblocks, out, key0, key1):     # key0 == 0: the key as constants in the code
        i = cuda.grid(1)
        acc = 0
        while i < nblocks:
            if key0 == 0:
                u0, u1 = block(uint64(i), uint32(4), uint32(0), uint32(0x12345678), uint32(0x9ABCDEF0))
                v0, v1 = block(uint64(i), uint32(6), uint32(0), uint32(0x12345678), uint32(0x9ABCDEF0))
            else:
                u0, u1 = block(uint64(i), uint32(4), uint32(0), uint32(key0), uint32(key1))
                v0, v1 = block(uint64(i), uint32(6), uint32(0), uint32(key0), uint32(key1))
            acc += (u0 * u0 + v0 * v0 < 1.0) + (u1 * u1 + v1 * v1 < 1.0)
            i += cuda.gridsize(1)
        cuda.atomic.add(out, 0, acc)

    out = cupy.zeros(1, np.int64)
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    for per_sm, key in ((2048, 0), (4096, 0), (2048, 0x12345678), (4096, 0x12345678)):
        grid = sms * per_sm // 256

        def run():
            out[...] = 0
            kernel[grid, 256](n // 2, out, np.uint32(key), np.uint32(0x9ABCDEF0))
        ms = events(run)
        label = f"bare Numba Philox, grid {per_sm}/SM, key {'at run time' if key else 'constant'}"
        print(f"{label:44s} {ms:7.3f} ms  pi/4 ~ {int(out[0]) / n:.6f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log2n", type=int, default=28)
    parser.add_argument("--child")
    parser.add_argument("--floor", action="store_true")
    args = parser.parse_args()
    n = 1 << args.log2n
    if args.child:
        return child(args.child, n)
    if args.floor:
        return floor(n)
    for name in VARIANTS:
        subprocess.run([sys.executable, __file__, "--log2n", str(args.log2n), "--child", name],
                       env=os.environ, timeout=120)
    subprocess.run([sys.executable, __file__, "--log2n", str(args.log2n), "--floor"], timeout=120)


if __name__ == "__main__":
    main()
