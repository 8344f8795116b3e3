"""Elementwise chains: the fusion win, materialized and reduced, across chain lengths and sizes."""
from __future__ import annotations

import lazyarr as la

from .common import (
    CPU_SIZES,
    DEVICES,
    GPU_SIZES,
    HEADLINE,
    MODES,
    Benchmark,
    data,
    elementwise_chain,
    finish,
    prepare,
)


class ChainLength(Benchmark):
    """A chain of 1, 2, 4, 8, 16 elementwise ops: eager pays one pass over memory per op,
    lazy one pass in all. ``materialize`` writes the result, ``sum`` reduces it."""

    params = [DEVICES, MODES, [16, 8, 4, 2, 1], [2**26, 2**20, 2**10]]
    param_names = ["device", "mode", "length", "n"]

    def setup(self, device, mode, length, n):
        prepare(device, mode, n, cpu=(2**10, 2**20), cuda=(2**10, 2**26))
        self.x = data(device, n)

    def time_materialize(self, device, mode, length, n):
        finish(elementwise_chain(self.x, length), device)

    def time_sum(self, device, mode, length, n):
        finish(la.sum(elementwise_chain(self.x, length)), device)


class Headline(Benchmark):
    """The issue's three expressions across sizes: ``sum_abs`` = sum(abs(x)), ``axpy`` =
    x * y + 1.5 materialized, ``chain`` = sum(sqrt(abs(x*y + 1.5)) * tanh(x) - y)."""

    params = [DEVICES, MODES, list(HEADLINE), sorted(set(CPU_SIZES) | set(GPU_SIZES) - {2**24, 2**26}, reverse=True)]
    param_names = ["device", "mode", "expr", "n"]
    repeat = (3, 10, 3.0)

    def setup(self, device, mode, expr, n):
        prepare(device, mode, n)
        self.x = data(device, n, seed=0)
        self.y = data(device, n, seed=1)
        self.fn = HEADLINE[expr]

    def time_expr(self, device, mode, expr, n):
        finish(self.fn(self.x, self.y), device)


class Broadcast(Benchmark):
    """A broadcasting expression over a (rows, 1) column, a (1, cols) row and a (cols,)
    vector: ``exp(-(a - b)**2 * c)``, materialized (rows x cols) and reduced along rows."""

    params = [DEVICES, MODES, [2**26, 2**22, 2**20, 2**12]]
    param_names = ["device", "mode", "n"]

    def setup(self, device, mode, n):
        prepare(device, mode, n, cpu=(2**12, 2**20, 2**22), cuda=(2**12, 2**22, 2**26))
        rows = 1 << ((n.bit_length() - 1) // 2)
        cols = n // rows
        self.a = data(device, (rows, 1), seed=0)
        self.b = data(device, (1, cols), seed=1)
        self.c = data(device, (cols,), seed=2, low=0.5, high=1.5)

    def _expr(self):
        return la.exp(-(self.a - self.b) ** 2 * self.c)

    def time_materialize(self, device, mode, n):
        finish(self._expr(), device)

    def time_sum_axis1(self, device, mode, n):
        finish(la.sum(self._expr(), axis=1), device)
