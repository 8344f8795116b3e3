"""Monte Carlo estimate of pi: uniform points in the unit square, the share inside the circle.
The samples are drawn inside the script with np.random."""
import numpy as np

PRESETS = {"S": {"n": 100_000}, "L": {"n": 2_000_000}}


def init(n):
    return (n,)


def kernel(n):
    rng = np.random.default_rng(1234)
    x = rng.random(n)
    y = rng.random(n)
    inside = x * x + y * y <= 1.0
    return 4.0 * np.count_nonzero(inside) / n, inside.mean()
