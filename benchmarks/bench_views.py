"""Views and writes (issues 14 and 15): the 5-point Jacobi step of a pending array, reduced
(one fused kernel reading the array's input through five views), and a stencil updated in
place (``u[1:-1, 1:-1] = ...``) for several steps. ``time_read`` is the ceiling: one read of
the input (a sum)."""
from __future__ import annotations

import math

import numpy as np

import lazyarr as la

from .common import DEVICES, MODES, Benchmark, data, finish, prepare


def jacobi(u):
    return 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


class Stencil(Benchmark):
    """n = side² float32 elements."""

    params = [DEVICES, MODES, [2**28, 2**24, 2**20]]
    param_names = ["device", "mode", "n"]

    def setup(self, device, mode, n):
        prepare(device, mode, n, cpu=(2**20, 2**24), cuda=(2**24, 2**28))
        side = math.isqrt(n)
        self.w = data(device, (side, side), low=0.0, high=1.0)

    def time_jacobi_of_pending_sum(self, device, mode, n):
        finish(la.sum(jacobi(la.sqrt(self.w))), device)

    def time_read(self, device, mode, n):
        finish(la.sum(self.w), device)


class InPlaceStencil(Benchmark):
    """10 steps of ``u[1:-1, 1:-1] = jacobi(u)`` on a side² float32 array (a fresh copy each
    call: the input is shared by the suite). Issue 15's number is 100 steps at 4096² (2^24):
    10 steps keep eager mode's call under a second on the CPU; the per-step ratio is the
    same (``tools/peers/inplace_stencil.py`` runs the 100 steps against NumPy)."""

    params = [DEVICES, MODES, [2**24, 2**20]]
    param_names = ["device", "mode", "n"]

    def setup(self, device, mode, n):
        prepare(device, mode, n, cpu=(2**24, 2**20), cuda=(2**20, 2**24))
        side = math.isqrt(n)
        self.w = data(device, (side, side), low=0.0, high=1.0)

    def time_steps(self, device, mode, n):
        u = self.w.copy()
        for _ in range(10):
            u[1:-1, 1:-1] = jacobi(u)
        finish(u, device)


def numpy_steps(w: np.ndarray, steps: int = 10) -> np.ndarray:
    """The same in-place stencil with NumPy (the baseline in docs/performance.rst)."""
    u = w.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = jacobi(u)
    return u


class ElementLoop(Benchmark):
    """``s = s + a[i] * b[i]`` for i < 2000 over computed float64 arrays: Python-loop
    overhead (a loop-carried 0-d value runs at once on the CPU and never grows a graph)."""

    params = [DEVICES, MODES]
    param_names = ["device", "mode"]

    def setup(self, device, mode):
        prepare(device, mode)
        self.a = data(device, 2000, dtype=np.float64)
        self.b = data(device, 2000, seed=1, dtype=np.float64)

    def time_loop(self, device, mode):
        a, b = self.a, self.b
        s = la.zeros((), device=device)
        for i in range(2000):
            s = s + a[i] * b[i]
        finish(s, device)


class RowLoop(Benchmark):
    """A loop over rows, one small statement per step (NPBench's ``syrk`` at its preset S, 70 x
    50 float64: ``C[i, :i+1] += alpha * A[i, k] * A[:i+1, k]``, 3,570 statements): views of
    computed arrays, an element, an in-place operator and a write per statement, each on at
    most 70 elements (the guide's "Small arrays": they run at once with NumPy on the CPU).
    The CPU only: on cuda each statement is a kernel launch (the element loop's rule)."""

    params = [DEVICES, MODES]
    param_names = ["device", "mode"]

    def setup(self, device, mode):
        prepare(device, mode)
        if device != "cpu":
            raise NotImplementedError("small statements run at once on the CPU only")
        self.a = np.random.default_rng(0).random((70, 50))
        self.c = np.random.default_rng(1).random((70, 70))

    def time_syrk(self, device, mode):
        alpha, beta = 1.5, 1.2
        c, a = la.asarray(self.c.copy()), la.asarray(self.a)
        for i in range(a.shape[0]):
            c[i, :i + 1] *= beta
            for k in range(a.shape[1]):
                c[i, :i + 1] += alpha * a[i, k] * a[:i + 1, k]
        finish(c, device)


class Normalize(Benchmark):
    """``(y - y.mean()) / y.std()`` of a pending ``y = exp(sin(x) * 3)`` (issue 14's store rule:
    ``y``'s chain runs once, not three times), n float64 elements."""

    params = [DEVICES, MODES, [2**24, 2**22]]
    param_names = ["device", "mode", "n"]

    def setup(self, device, mode, n):
        prepare(device, mode, n, cpu=(2**22,), cuda=(2**22, 2**24))
        self.x = data(device, n, dtype=np.float64)

    def time_normalize(self, device, mode, n):
        y = la.exp(la.sin(self.x) * 3)
        finish((y - y.mean()) / y.std(), device)


class MediumArrays(Benchmark):
    """Arrays of 10^4-10^5 elements, where an elementwise run's fixed costs and its two
    decisions (one thread or the pool, row by row or gathered: docs/notes/cpu.rst 2026-12-04c)
    count: a 5-point stencil of a 300² float64 array written into another (NPBench's jacobi_2d
    step at preset M), and one add on 2^16 float64 elements."""

    params = [DEVICES, MODES]
    param_names = ["device", "mode"]

    def setup(self, device, mode):
        prepare(device, mode)
        self.a = data(device, (300, 300), dtype=np.float64)
        self.b = data(device, (300, 300), seed=1, dtype=np.float64).copy()
        self.x = data(device, 1 << 16, dtype=np.float64)

    def time_stencil_write(self, device, mode):
        self.b[1:-1, 1:-1] = jacobi(self.a)
        finish(self.b, device)

    def time_add(self, device, mode):
        finish(self.x + 1, device)
