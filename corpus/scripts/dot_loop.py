"""A dot product, a running maximum and a polynomial written as explicit element loops, the way
a port from C or MATLAB often starts."""
import numpy as np

PRESETS = {"S": {"n": 300}, "L": {"n": 20_000}}


def init(n):
    rng = np.random.default_rng(19)
    return rng.random(n), rng.random(n)


def kernel(a, b):
    n = a.shape[0]
    s = 0.0
    for i in range(n):
        s = s + a[i] * b[i]
    best = a[0]
    for i in range(1, n):
        if a[i] > best:
            best = a[i]
    out = np.zeros(n)
    for i in range(n):
        out[i] = 1.0 + a[i] * (0.5 + a[i] * 0.25)
    return s, best, out
