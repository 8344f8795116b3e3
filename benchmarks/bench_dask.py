"""Dask with lazyarr chunks (issue 20): ``sum(sqrt(abs(x*y+1.5)) * tanh(x) - y)`` over float32
arrays in 16 chunks on Dask's threaded scheduler, with lazyarr chunks (one fused kernel per
chunk) and, as the baseline, NumPy (CPU) or CuPy (cuda) chunks. The LocalCluster rows of
docs/dask.rst come from ``tools/peers/dask_chain.py`` (a cluster per asv process would time
the cluster's start)."""
from __future__ import annotations

import numpy as np

import lazyarr as la

from .common import DEVICES, Benchmark, prepare


def chain(x, y):
    return np.sum(np.sqrt(abs(x * y + 1.5)) * np.tanh(x) - y)


class DaskChain(Benchmark):
    """n float32 elements in 16 chunks; ``chunks``: "lazyarr" or the device's own library."""

    params = [DEVICES, ["lazy"], ["lazyarr", "library"], [2**26, 2**24]]
    param_names = ["device", "mode", "chunks", "n"]

    def setup(self, device, mode, chunks, n):
        try:
            import dask.array as da
        except ImportError:      # (asv's virtualenv on the CPU machine has no Dask): skipped
            raise NotImplementedError("Dask is not installed in this environment") from None

        prepare(device, mode, n, cpu=(2**24, 2**26), cuda=(2**24, 2**26))
        rng = np.random.default_rng(0)
        x, y = (rng.random(n, dtype=np.float32) for _ in range(2))
        if chunks == "lazyarr":
            x, y = la.asarray(x, device=device), la.asarray(y, device=device)
        elif device == "cuda":
            import cupy

            x, y = cupy.asarray(x), cupy.asarray(y)
        self.x = da.from_array(x, chunks=n // 16, asarray=False)
        self.y = da.from_array(y, chunks=n // 16, asarray=False)

    def time_chain_sum(self, device, mode, chunks, n):
        float(chain(self.x, self.y).compute(scheduler="threads"))
