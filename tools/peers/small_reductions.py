"""A loop of small reductions of pending expressions (NPBench's conv2d_bias statement:
``sum(input[:, i:i+K, j:j+K, :, None] * weights[None], axis=(1, 2, 3))``, 8x10x10x3x8
float32), with the reduction runners made once per launch (cpu_fused's
``_reduction_runners``) and made at every call, alternated in one process; µs a statement,
medians. ``python tools/peers/small_reductions.py [ROUNDS]``."""
from __future__ import annotations

import sys
import time

import numpy as np

import lazyarr as la
from lazyarr.backends import cpu_fused


class _Forgetful(dict):
    """A runner cache that keeps nothing: every call makes its runner."""

    def __setitem__(self, key, value) -> None:
        pass


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    rng = np.random.default_rng(0)
    inp = la.asarray(rng.random((8, 128, 128, 3), dtype=np.float32))
    w = la.asarray(rng.random((10, 10, 3, 8), dtype=np.float32))
    k = 10

    def statements() -> None:
        for i in range(20):
            for j in range(50):
                la.sum(inp[:, i:i + k, j:j + k, :, None] * w[None, :, :, :], axis=(1, 2, 3))

    kept = cpu_fused._reduction_runners
    times: dict[str, list[float]] = {"runner made once": [], "runner made each call": []}
    try:
        for _ in range(rounds):
            for name in times:
                cpu_fused._reduction_runners = kept if name == "runner made once" else _Forgetful()
                t = time.perf_counter()
                statements()
                times[name].append((time.perf_counter() - t) / 1000 * 1e6)
    finally:
        cpu_fused._reduction_runners = kept
    for name, ts in times.items():
        print(f"{name}: {sorted(ts)[len(ts) // 2]:.1f} µs a statement")


if __name__ == "__main__":
    main()
