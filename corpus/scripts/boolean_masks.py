"""Boolean masks: filtering, counting, clamping outliers in place, nonzero positions, and a
masked mean per group."""
import numpy as np

PRESETS = {"S": {"n": 10_000}, "L": {"n": 1_000_000}}


def init(n):
    rng = np.random.default_rng(59)
    return rng.standard_normal(n), rng.integers(0, 4, n)


def kernel(x, group):
    positive = x[x > 0]
    count = np.count_nonzero(np.abs(x) > 2)
    x[x > 2.5] = 2.5
    x[x < -2.5] = -2.5
    where_big = np.nonzero(np.abs(x) >= 2.5)[0]
    means = np.array([x[group == g].mean() for g in range(4)])
    both = np.logical_and(x > 0, group == 1)
    return positive.sum(), count, x, where_big, means, both.mean()
