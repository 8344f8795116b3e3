"""Fixed costs: a cached call on tiny arrays, building a graph, and the cold first call in a
fresh process with and without the disk cache of compiled kernels."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import lazyarr as la

from .common import (
    DEVICES,
    HEADLINE,
    MODES,
    Benchmark,
    data,
    elementwise_chain,
    finish,
    lazyarr_root,
    prepare,
)


class CachedCall(Benchmark):
    """One call of a headline expression on 1024 elements, its kernel already compiled
    (asv's warm-up runs it first): the per-call overhead a small-array user pays."""

    params = [DEVICES, MODES, list(HEADLINE)]
    param_names = ["device", "mode", "expr"]
    repeat = (50, 400, 0.5)  # asv times one call per sample here: take many samples

    def setup(self, device, mode, expr):
        prepare(device, mode)
        self.x = data(device, 1024, seed=0)
        self.y = data(device, 1024, seed=1)
        self.fn = HEADLINE[expr]

    def time_call(self, device, mode, expr):
        finish(self.fn(self.x, self.y), device)

    def track_hot_call_us(self, device, mode, expr):
        """Median wall time (µs) of one call, including synchronization, among 300 calls run
        back to back after 30 warm-ups (asv's ``time_call`` re-runs ``setup`` before every
        call, so there the machine is idle before each call; here it is busy)."""
        fn, x, y = self.fn, self.x, self.y
        times = []
        for i in range(330):
            t0 = time.perf_counter()
            finish(fn(x, y), device)
            if i >= 30:
                times.append(time.perf_counter() - t0)
        times.sort()
        return round(times[len(times) // 2] * 1e6, 2)

    track_hot_call_us.unit = "µs"


class JitCall(Benchmark):
    """``CachedCall`` with the expression in a ``la.jit`` function (lazy mode: in eager mode a
    jitted function runs as it is): its kernels replayed without rebuilding the expression."""

    params = [DEVICES, list(HEADLINE)]
    param_names = ["device", "expr"]
    repeat = (50, 400, 0.5)

    def setup(self, device, expr):
        prepare(device, "lazy")
        self.x = data(device, 1024, seed=0)
        self.y = data(device, 1024, seed=1)
        self.fn = la.jit(HEADLINE[expr])
        finish(self.fn(self.x, self.y), device)      # the trace

    def time_call(self, device, expr):
        finish(self.fn(self.x, self.y), device)

    def track_hot_call_us(self, device, expr):
        """As ``CachedCall.track_hot_call_us``: the median of 300 calls back to back."""
        return CachedCall.track_hot_call_us(self, device, "lazy", expr)

    track_hot_call_us.unit = "µs"


class GraphBuild(Benchmark):
    """Lazy mode's bookkeeping alone: build (and lower, via ``explain``) a chain of 8 or 64
    ops without running it."""

    params = [DEVICES, [8, 64]]
    param_names = ["device", "length"]
    repeat = (20, 200, 0.5)

    def setup(self, device, length):
        prepare(device, "lazy")
        self.x = data(device, 1024)

    def time_build(self, device, length):
        elementwise_chain(self.x, length)

    def time_explain(self, device, length):
        la.explain(elementwise_chain(self.x, length))


# The first call of the chain in a new process; the setup (imports, data) is not timed.
_COLD_SETUP = """
import atexit, os, shutil, sys, tempfile
sys.path.insert(0, {root!r})
{cache_setup}
import numpy as np
import lazyarr as la
la.set_config(mode={mode!r}, device={device!r}, compile={compile!r})
if {device!r} == "cuda":
    import cupy as xp
    a = xp.random.default_rng(0).random(1 << 20, dtype=xp.{dtype}) * 2 - 1
    b = xp.random.default_rng(1).random(1 << 20, dtype=xp.{dtype}) * 2 - 1
    xp.cuda.runtime.deviceSynchronize()
else:
    a = np.random.default_rng(0).random(1 << 20, dtype=np.{dtype}) * 2 - 1
    b = np.random.default_rng(1).random(1 << 20, dtype=np.{dtype}) * 2 - 1
x, y = la.asarray(a), la.asarray(b)
"""
_COLD_STMT = "float(la.sum(la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y))"

_FRESH_CACHE = """
d = tempfile.mkdtemp(prefix="lazyarr-asv-cold-")
atexit.register(shutil.rmtree, d, True)
for var, sub in (("LAZYARR_CACHE_DIR", "lazyarr"), ("CUPY_CACHE_DIR", "cupy"), ("NUMBA_CACHE_DIR", "numba")):
    os.environ[var] = os.path.join(d, sub)
"""
_WARM_CACHE = """
for var, sub in (("LAZYARR_CACHE_DIR", "lazyarr"), ("CUPY_CACHE_DIR", "cupy"), ("NUMBA_CACHE_DIR", "numba")):
    os.environ[var] = os.path.join({cache_dir!r}, sub)
"""
_warm_dirs: dict[tuple[str, str], str] = {}


def _cold_setup(compile, **kw):
    """``_COLD_SETUP`` filled in: float32 data, but float64 under ``compile="background"``
    (its rows since 2026-12-06c, when float32 programs waited for their kernel; since
    2026-12-06d they run op by op too, with tests of CuPy's float32 flush:
    lazyarr/backends/cuda/first_calls.py)."""
    return _COLD_SETUP.format(compile=compile, dtype="float64" if compile == "background"
                              else "float32", **kw)


def _warm_cache_dir(device, mode, compile="wait"):
    """A cache directory filled by one earlier process that ran the chain."""
    key = (device, mode, compile)
    if key not in _warm_dirs:
        d = tempfile.mkdtemp(prefix="lazyarr-asv-warm-")
        code = _cold_setup(cache_setup=_WARM_CACHE.format(cache_dir=d), mode=mode,
                                  device=device, root=lazyarr_root(), compile=compile) + _COLD_STMT
        if compile == "background":     # (the kernel itself too, before the process exits)
            code += "\nla.wait_compiles()"
        subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))
        _warm_dirs[key] = d
    return _warm_dirs[key]


class ColdStart(Benchmark):
    """Time from the first materialization call to the result in a new Python process
    (the chain on 2**20 elements): ``no_cache`` with empty kernel caches (compile included),
    ``disk_cache`` with the caches an earlier process wrote. On the CPU no compiler runs
    (the Cython backend is built ahead), so both show first-call setup only. On cuda the
    call waits for its kernel's compile (``compile="wait"``: what this series measured
    before a new kernel's first calls ran op by op; :class:`FirstResult` measures that)."""

    params = [DEVICES, MODES]
    param_names = ["device", "mode"]
    repeat = (3, 5, 20.0)

    def setup(self, device, mode):
        prepare(device, mode)

    def timeraw_first_call_no_cache(self, device, mode):
        setup = _cold_setup(cache_setup=_FRESH_CACHE, mode=mode, device=device,
                                   root=lazyarr_root(), compile="wait")
        return _COLD_STMT, setup

    def timeraw_first_call_disk_cache(self, device, mode):
        cache = _warm_cache_dir(device, mode)
        setup = _cold_setup(cache_setup=_WARM_CACHE.format(cache_dir=cache), mode=mode,
                                   device=device, root=lazyarr_root(), compile="wait")
        return _COLD_STMT, setup


_NEW_KERNEL_CACHE = """
d = tempfile.mkdtemp(prefix="lazyarr-asv-new-")
atexit.register(shutil.rmtree, d, True)
os.environ["LAZYARR_CACHE_DIR"] = d
os.environ["CUPY_CACHE_DIR"] = os.path.join({cache_dir!r}, "cupy")
"""


class FirstResult(Benchmark):
    """A new expression's first result in a new process on cuda, lazy mode, under the default
    ``compile="background"`` (the call runs op by op while the kernel compiles: issue 13 item
    3; docs/gpu-backend.rst, "A new kernel's first calls"; float64 data: a float32 program
    waits for its kernel, as ``ColdStart``): ``new_kernel`` with lazyarr's
    kernel cache empty and CuPy's holding what an earlier process of the same script compiled
    (a machine where CuPy has run before), ``no_cache`` with both empty. ``ColdStart`` is the
    same call waiting for its compile."""

    params = [["cuda"]]
    param_names = ["device"]
    repeat = (3, 5, 20.0)

    def setup(self, device):
        prepare(device, "lazy")

    def timeraw_new_kernel(self, device):
        cache = _warm_cache_dir(device, "lazy", "background")
        setup = _cold_setup(cache_setup=_NEW_KERNEL_CACHE.format(cache_dir=cache),
                                   mode="lazy", device=device, root=lazyarr_root(),
                                   compile="background")
        return _COLD_STMT, setup

    def timeraw_no_cache(self, device):
        setup = _cold_setup(cache_setup=_FRESH_CACHE, mode="lazy", device=device,
                                   root=lazyarr_root(), compile="background")
        return _COLD_STMT, setup


class Import(Benchmark):
    """``import lazyarr`` in a fresh process."""

    repeat = (3, 5, 10.0)

    def timeraw_import(self):
        return "import lazyarr", f"import sys; sys.path.insert(0, {lazyarr_root()!r})"
