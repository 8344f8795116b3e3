"""Where a warm-cache GPU test's time goes: lazyarr's disk cache holds PTX for most kernels,
which the driver JIT-compiles to machine code at every load on a fresh machine (its own
ComputeCache does not travel). Run with CUDA_CACHE_DISABLE=1 to time the driver's JIT:

    CUDA_CACHE_DISABLE=1 python3 tools/device/load_probe.py

Prints, per reduction of test_gpu.py's slowest tests, the first call's time (disk hit + load)
and a second call's, then the load time of each cached payload by kind (ptx / cubin).
"""
from __future__ import annotations

import time

import numpy as np

import lazyarr as la
from lazyarr.backends.cuda import compile as C

rng = np.random.default_rng(0)
rows = []
for dtype in (np.float16, np.float32, np.float64):
    for op in ("max", "min", "sum"):
        for shape, axis in [((5000,), None), ((6, 9), 0), ((6, 9), 1), ((3, 4, 5), (0, 2))]:
            x = la.asarray(rng.standard_normal(shape).astype(dtype), device="cuda")
            t0 = time.perf_counter()
            getattr(la, op)(x, axis=axis).to_numpy()
            t1 = time.perf_counter()
            getattr(la, op)(x, axis=axis).to_numpy()
            t2 = time.perf_counter()
            r = (np.dtype(dtype).name, op, shape, axis, t1 - t0, t2 - t1)
            rows.append(r)          # (printed as it goes: a cut run still says something)
            print(f"{r[0]:8} {r[1]:4} {str(r[2]):10} {str(r[3]):7} first {r[4] * 1e3:8.1f} ms  "
                  f"again {r[5] * 1e3:6.2f} ms  {C.stats}", flush=True)
print("stats", C.stats)

from cupy.cuda import function  # noqa: E402

by_kind: dict[str, list[float]] = {}
for key in list(C._kernels.values):
    hit = C.read_cache(key)
    if hit is None:
        continue
    kind, _, payload = hit
    t0 = time.perf_counter()
    function.Module().load(payload)
    by_kind.setdefault(kind, []).append(time.perf_counter() - t0)
for kind, ts in by_kind.items():
    ts.sort()
    print(f"load {kind}: n={len(ts)} median {ts[len(ts) // 2] * 1e3:.1f} ms max {ts[-1] * 1e3:.1f} ms "
          f"total {sum(ts):.2f} s")
