"""Complex elementwise chains and Monte Carlo with ``la.random`` (issue 17).

Complex values are fused on the CPU (NumPy's own complex loops in one kernel) and on cuda (the
kernels' own complex templates, NumPy's formulas). Monte Carlo draws come from
NumPy's (CPU) or CuPy's (cuda) generator into memory, the test and the mean after them fused
(``time_pi``), or from a fused generator inside the one kernel (``time_pi_fused``; the 2^28
comparison with NumPy and CuPy is ``tools/peers/monte_carlo.py``).
"""
from __future__ import annotations

import numpy as np

import lazyarr as la

from .common import DEVICES, MODES, Benchmark, data, finish, prepare

_COMPLEX: dict = {}


def complex_data(n: int, device: str = "cpu") -> la.LazyArray:
    """A complex128 array of n values with parts uniform in [-1, 1) (made once per process),
    on ``device``."""
    z = _COMPLEX.get(n)
    if z is None:
        re = np.asarray(data("cpu", n, seed=0))
        im = np.asarray(data("cpu", n, seed=1))
        z = _COMPLEX[n] = (re + 1j * im).astype(np.complex128)
    return la.asarray(z, device=device)


class ComplexChain(Benchmark):
    """``sum(abs(z * z + c) * conj(z).real)`` over complex128 values, ``z * z + c``
    materialized, and its complex sum: eager writes each complex intermediate, lazy runs one
    kernel."""

    params = [DEVICES, MODES, [2**20, 2**22]]
    param_names = ["device", "mode", "n"]

    def setup(self, device, mode, n):
        prepare(device, mode, n, cpu=(2**20, 2**22), cuda=(2**20, 2**22))
        self.z = complex_data(n, device)

    def time_sum(self, device, mode, n):
        z = self.z
        finish(la.sum(abs(z * z + (0.25 - 0.5j)) * la.conj(z).real), device)

    def time_materialize(self, device, mode, n):
        finish(self.z * self.z + (0.25 - 0.5j), device)

    def time_complex_sum(self, device, mode, n):
        """A complex reduction of the chain: ``sum(z * z + c)``, one kernel in lazy mode."""
        finish(la.sum(self.z * self.z + (0.25 - 0.5j)), device)


class MonteCarloPi(Benchmark):
    """pi from 2 x n uniform draws: ``4 * mean(u**2 + v**2 < 1)``, a fresh generator per call."""

    params = [DEVICES, MODES, [2**22, 2**26]]
    param_names = ["device", "mode", "n"]

    def setup(self, device, mode, n):
        prepare(device, mode, n, cpu=(2**22,), cuda=(2**26,))

    def time_pi(self, device, mode, n):
        rng = la.random.default_rng(0, device=device)
        finish(4 * la.mean(rng.random(n) ** 2 + rng.random(n) ** 2 < 1), device)

    def time_pi_fused(self, device, mode, n):
        rng = la.random.default_rng(0, device=device, fused=True)
        finish(4 * la.mean(rng.random(n) ** 2 + rng.random(n) ** 2 < 1), device)


class ComplexReductions(Benchmark):
    """Complex reductions of a chain (complex128): ``sum``, ``prod`` (of unit moduli),
    ``argmax`` and ``var`` of ``z * z + c``; eager (NumPy) writes the chain, lazy fuses it into
    the reduction's kernel (``tools/peers/complex_reductions.py`` alternates the two)."""

    params = [DEVICES, MODES, [2**22]]
    param_names = ["device", "mode", "n"]

    def setup(self, device, mode, n):
        prepare(device, mode, n, cpu=(2**22,), cuda=(2**22,))
        self.z = complex_data(n, device)

    def time_sum(self, device, mode, n):
        finish(la.sum(self.z * self.z + (0.25 - 0.5j)), device)

    def time_prod(self, device, mode, n):
        u = self.z / abs(self.z)
        finish(la.prod(u * u), device)

    def time_argmax(self, device, mode, n):
        finish(la.argmax(self.z * self.z + (0.25 - 0.5j)), device)

    def time_var(self, device, mode, n):
        finish(la.var(self.z * self.z + (0.25 - 0.5j)), device)
