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
