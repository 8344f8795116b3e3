"""Library calls fed by a pending chain (issue 18): ``sort``, ``argsort``, ``cumsum``,
``unique`` and ``fft.rfft`` of ``f(x) = sqrt(abs(x)) * 2 - 1`` pending or computed, and
``sum(maximum(A @ B + bias, 0))`` (one library call + one fused kernel). The ratios against
NumPy (CuPy on cuda), measured in one run, come from ``tools/peers/library_calls.py``
(docs/performance.rst)."""
from __future__ import annotations

import lazyarr as la

from .common import DEVICES, MODES, Benchmark, data, finish, prepare


def f(x):
    return la.sqrt(la.abs(x)) * 2 - 1


class ChainIntoCall(Benchmark):
    """``call(f(x))``, ``f(x)`` pending (``input="pending"``: its kernel writes the call's
    input) or computed beforehand (``"computed"``: the call alone)."""

    params = [DEVICES, MODES, ["sort", "argsort", "cumsum", "unique"], ["pending", "computed"],
              [2**24, 2**20]]
    param_names = ["device", "mode", "call", "input", "n"]

    def setup(self, device, mode, call, input, n):
        prepare(device, mode, n, cpu=(2**24, 2**20), cuda=(2**20, 2**24))
        self.x = data(device, n)
        self.fx = f(self.x).compute()
        self.call = getattr(la, call)

    def time_call(self, device, mode, call, input, n):
        finish(self.call(f(self.x) if input == "pending" else self.fx), device)


class MatmulEpilogue(Benchmark):
    """``sum(maximum(A @ B + bias, 0))`` on side² float32 (``"epilogue"``) against ``A @ B``
    alone (``"matmul"``)."""

    params = [DEVICES, MODES, ["epilogue", "matmul"], [4096, 1024]]
    param_names = ["device", "mode", "what", "side"]

    def setup(self, device, mode, what, side):
        prepare(device, mode, side * side, cpu=(4096**2, 1024**2), cuda=(4096**2, 1024**2))
        self.a, self.b = data(device, (side, side), seed=1), data(device, (side, side), seed=2)
        self.bias = data(device, side, seed=3)

    def time_call(self, device, mode, what, side):
        if what == "matmul":
            finish(self.a @ self.b, device)
        else:
            finish(la.sum(la.maximum(self.a @ self.b + self.bias, 0)), device)


class RfftChain(Benchmark):
    """``fft.rfft(f(x))``: ``f(x)`` pending (``input="pending"``: one kernel writes the FFT's
    input; in eager mode the ops one by one, as the library's eager code) or computed
    beforehand (``"computed"``: the rfft alone)."""

    params = [DEVICES, MODES, ["pending", "computed"], [2**24, 2**20]]
    param_names = ["device", "mode", "input", "n"]

    def setup(self, device, mode, input, n):
        prepare(device, mode, n, cpu=(2**24, 2**20), cuda=(2**24, 2**20))
        self.x = data(device, n)
        self.fx = f(self.x).compute()

    def time_call(self, device, mode, input, n):
        finish(la.fft.rfft(f(self.x) if input == "pending" else self.fx), device)


class SumOfProduct(Benchmark):
    """A sum of a broadcast product, ``la.sum(x[:, :, :, None] * w[None], axis=(1, 2, 3))``:
    NPBench's ``conv2d`` statement ((8, 10, 10, 3) window by (10, 10, 3, 8) weights, float32)
    and a stack of 1,000 (4, 256) @ (256, 4) products. On the CPU in lazy mode it runs as one
    matrix product (lazyarr/_contract.py); eager mode is NumPy's multiply and sum; on cuda the
    fused kernel."""

    params = [DEVICES, MODES, ["conv2d", "stack"]]
    param_names = ["device", "mode", "shape"]

    def setup(self, device, mode, shape):
        prepare(device, mode)
        if shape == "conv2d":
            self.x = data(device, (8, 10, 10, 3), seed=1)[:, :, :, :, None]
            self.w = data(device, (10, 10, 3, 8), seed=2)[None]
            self.axes = (1, 2, 3)
        else:
            self.x = data(device, (1000, 4, 256), seed=1)[:, :, :, None]
            self.w = data(device, (1000, 256, 4), seed=2)[:, None]
            self.axes = (2,)
        finish(la.sum(self.x * self.w, axis=self.axes), device)

    def time_sum(self, device, mode, shape):
        finish(la.sum(self.x * self.w, axis=self.axes), device)
