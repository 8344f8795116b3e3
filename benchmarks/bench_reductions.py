"""Reductions: every reduction, full and along each axis of a 2-D array, with a fused
elementwise op feeding it (a reduction is a materialization point)."""
from __future__ import annotations

import lazyarr as la

from .common import DEVICES, MODES, Benchmark, data, finish, prepare

REDUCTIONS = ["sum", "prod", "min", "max", "mean", "var", "std", "any", "all", "argmin", "argmax"]
AXES = ["none", "0", "1"]


def _axis(label):
    return None if label == "none" else int(label)


class Reductions(Benchmark):
    """``op(abs(x), axis)`` (``op(x > 0, axis)`` for any/all) on a square array:
    1024 x 1024 on the CPU, 4096 x 4096 on the GPU."""

    params = [DEVICES, MODES, REDUCTIONS, AXES]
    param_names = ["device", "mode", "op", "axis"]
    repeat = (3, 8, 1.0)

    def setup(self, device, mode, op, axis):
        side = 1024 if device == "cpu" else 4096
        prepare(device, mode, side * side, cpu=None, cuda=None)
        self.x = data(device, (side, side))
        self.fn = getattr(la, op)
        self.boolean = op in ("any", "all")

    def time_reduce(self, device, mode, op, axis):
        operand = (self.x > 0) if self.boolean else abs(self.x)
        finish(self.fn(operand, axis=_axis(axis)), device)


class SumSquares(Benchmark):
    """``sum(x * x, axis)``, the issue's row/column reduction targets: 4096 x 8192 on the CPU
    (2**25), 16384 x 16384 on the GPU (2**28); plus a small 256 x 256 case."""

    params = [DEVICES, MODES, ["16384x16384", "4096x8192", "256x256"], AXES]
    param_names = ["device", "mode", "shape", "axis"]

    def setup(self, device, mode, shape, axis):
        rows, cols = map(int, shape.split("x"))
        prepare(device, mode, rows * cols, cpu=None, cuda=None)
        if shape == "16384x16384" and device == "cpu":
            raise NotImplementedError("2**28 is GPU-only")
        if shape == "4096x8192" and device == "cuda":
            raise NotImplementedError("the GPU runs 16384x16384 instead")
        self.x = data(device, (rows, cols))

    def time_sum_squares(self, device, mode, shape, axis):
        finish(la.sum(self.x * self.x, axis=_axis(axis)), device)


class ShortRows(Benchmark):
    """Reductions over short rows, 2**23 float32 elements on the CPU (2**26 on the GPU): the
    squared norms of points (``sum(x * x, axis=1)`` of N x 3), and ``sum``/``max``/``argmax``
    over rows of 16 and 64 (docs/notes/cpu.rst, "Short rows")."""

    params = [DEVICES, MODES, ["3", "16", "64"], ["sum_squares", "max", "argmax"]]
    param_names = ["device", "mode", "row", "op"]

    def setup(self, device, mode, row, op):
        n = 2**23 if device == "cpu" else 2**26
        prepare(device, mode, n, cpu=None, cuda=None)
        length = int(row)
        self.x = data(device, (n // length, length))

    def time_short_rows(self, device, mode, row, op):
        if op == "sum_squares":
            finish(la.sum(self.x * self.x, axis=1), device)
        else:
            finish(getattr(la, op)(self.x * 2, axis=1), device)
