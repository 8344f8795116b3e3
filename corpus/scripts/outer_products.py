"""Broadcasting outer products: an outer sum and product, a pairwise distance matrix, a Gaussian
kernel matrix and its row sums."""
import numpy as np

PRESETS = {"S": {"n": 200}, "L": {"n": 1000}}


def init(n):
    rng = np.random.default_rng(61)
    return rng.random(n), rng.random(n), rng.random((n, 3))


def kernel(a, b, pts):
    prod = a[:, None] * b[None, :]
    outer_sum = np.add.outer(a, b)
    same = np.outer(a, b)
    dist = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(axis=-1))
    gauss = np.exp(-(dist**2) / 0.1)
    return prod - same, outer_sum.max(axis=0), dist, gauss.sum(axis=1)
