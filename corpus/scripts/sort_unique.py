"""Sorting and counting integer data: sort, argsort, unique with counts, the most frequent
value, searchsorted ranks and the median."""
import numpy as np

PRESETS = {"S": {"n": 10_000}, "L": {"n": 200_000}}


def init(n):
    rng = np.random.default_rng(53)
    return rng.integers(0, 1000, n), rng.standard_normal(n)


def kernel(keys, values):
    order = np.argsort(keys, kind="stable")
    sorted_values = values[order]
    uniq, counts = np.unique(keys, return_counts=True)
    mode = uniq[np.argmax(counts)]
    ranks = np.searchsorted(np.sort(values), values)
    return np.sort(keys), sorted_values, uniq, counts, mode, ranks, np.median(values)
