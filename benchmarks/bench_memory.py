"""Memory: peak RSS on the CPU (``peakmem_``) and CuPy memory-pool growth on the GPU
(``track_``), for the headline expressions. Fusion should need no N-sized temporaries."""
from __future__ import annotations

from .common import DEVICES, HEADLINE, MODES, Benchmark, data, finish, prepare, sync


class PeakMemory(Benchmark):
    """Peak resident memory of the benchmark process (inputs included: 2 x 128 MiB at 2**25)."""

    params = [DEVICES, MODES, list(HEADLINE), [2**25, 2**22]]
    param_names = ["device", "mode", "expr", "n"]

    def setup(self, device, mode, expr, n):
        if device == "cuda":
            raise NotImplementedError("peak RSS is a CPU measure; the GPU has GpuPool")
        prepare(device, mode, n)
        self.x = data(device, n, seed=0)
        self.y = data(device, n, seed=1)
        self.fn = HEADLINE[expr]

    def peakmem_expr(self, device, mode, expr, n):
        finish(self.fn(self.x, self.y), device)


class GpuPool(Benchmark):
    """Growth of CuPy's default memory pool (MiB) during one call, the result included
    (for ``axpy`` that is the N-sized output itself): extra device memory the call needed."""

    params = [DEVICES, MODES, list(HEADLINE), [2**28, 2**24]]
    param_names = ["device", "mode", "expr", "n"]
    unit = "MiB"

    def setup(self, device, mode, expr, n):
        if device == "cpu":
            raise NotImplementedError("the CuPy pool exists on the GPU only")
        prepare(device, mode, n)
        self.x = data(device, n, seed=0)
        self.y = data(device, n, seed=1)
        self.fn = HEADLINE[expr]
        finish(self.fn(self.x, self.y), device)     # compile outside the measurement

    def track_pool_growth(self, device, mode, expr, n):
        import cupy

        pool = cupy.get_default_memory_pool()
        sync(device)
        pool.free_all_blocks()
        before = pool.total_bytes()
        result = finish(self.fn(self.x, self.y), device)
        grown = pool.total_bytes() - before
        del result
        return grown / 2**20


class GpuEvents(Benchmark):
    """CUDA-event time (ms) of one call of each headline expression, median of 20 after 5
    warm-ups; each call alone between two events and followed by a synchronize, host work
    before the launch included (the method of ../shared/device/README.md)."""

    params = [DEVICES, MODES, list(HEADLINE), [2**28, 2**20, 2**10]]
    param_names = ["device", "mode", "expr", "n"]
    unit = "ms"

    def setup(self, device, mode, expr, n):
        if device == "cpu":
            raise NotImplementedError("CUDA events exist on the GPU only")
        prepare(device, mode, n)
        self.x = data(device, n, seed=0)
        self.y = data(device, n, seed=1)
        self.fn = HEADLINE[expr]

    def track_event_ms(self, device, mode, expr, n):
        import cupy

        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        times = []
        for i in range(25):
            sync(device)
            start.record()
            result = self.fn(self.x, self.y)
            result.compute()
            end.record()
            end.synchronize()
            if i >= 5:
                times.append(cupy.cuda.get_elapsed_time(start, end))
            del result
        times.sort()
        return times[len(times) // 2]
