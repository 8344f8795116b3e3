"""Normalization of a data table: z-scores over all values and per column, min-max scaling per
column, and unit-length rows."""
import numpy as np

PRESETS = {"S": {"n": 1000, "m": 16}, "L": {"n": 100_000, "m": 16}}


def init(n, m):
    rng = np.random.default_rng(29)
    return rng.normal(3.0, 2.0, (n, m)) * np.arange(1, m + 1)


def kernel(y):
    z = (y - y.mean()) / y.std()
    zcol = (y - y.mean(axis=0)) / y.std(axis=0, ddof=1)
    lo, hi = y.min(axis=0), y.max(axis=0)
    scaled = (y - lo) / (hi - lo)
    unit = y / np.sqrt((y**2).sum(axis=1, keepdims=True))
    return z, zcol, scaled, unit
