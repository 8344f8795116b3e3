"""Realistic workloads: softmax-style row normalization, standardization, a polynomial, and a
physics kernel (Lennard-Jones energy)."""
from __future__ import annotations

import lazyarr as la

from .common import DEVICES, MODES, Benchmark, data, finish, prepare

# degree-8 polynomial coefficients (Horner form), a truncated exp series
COEFFS = [1 / 40320, 1 / 5040, 1 / 720, 1 / 120, 1 / 24, 1 / 6, 1 / 2, 1.0, 1.0]


def softmax_rows(x):
    """Row-wise softmax: exp(x - max(x, rows)) / sum(..., rows)."""
    e = la.exp(x - la.max(x, axis=1, keepdims=True))
    return e / la.sum(e, axis=1, keepdims=True)


def standardize(x):
    """(x - x.mean()) / x.std()."""
    return (x - la.mean(x)) / la.std(x)


def polynomial(x):
    """A degree-8 polynomial by Horner's rule: 16 fused elementwise ops."""
    p = x * COEFFS[0] + COEFFS[1]
    for c in COEFFS[2:]:
        p = p * x + c
    return p


def lennard_jones(r):
    """Total Lennard-Jones energy sum(4 eps ((s/r)**12 - (s/r)**6)) over pair distances r."""
    sr6 = (1.0 / r) ** 6
    return la.sum(4.0 * (sr6 * sr6 - sr6))


WORKLOADS = {"softmax": softmax_rows, "standardize": standardize, "polynomial": polynomial,
             "lennard_jones": lennard_jones}


class Workloads(Benchmark):
    """Each workload on a (n / 1024, 1024) float32 array (distances in [0.9, 2.5) for
    Lennard-Jones)."""

    params = [DEVICES, MODES, list(WORKLOADS), [2**26, 2**22, 2**20]]
    param_names = ["device", "mode", "workload", "n"]

    def setup(self, device, mode, workload, n):
        prepare(device, mode, n, cpu=(2**20, 2**22), cuda=(2**22, 2**26))
        shape = (n // 1024, 1024)
        if workload == "lennard_jones":
            self.x = data(device, shape, low=0.9, high=2.5)
        else:
            self.x = data(device, shape)
        self.fn = WORKLOADS[workload]

    def time_workload(self, device, mode, workload, n):
        finish(self.fn(self.x), device)
