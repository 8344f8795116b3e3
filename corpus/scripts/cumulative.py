"""Cumulative sums and products on a price series: a moving average by the cumsum trick,
compounded returns, the running maximum and the maximum drawdown."""
import numpy as np

PRESETS = {"S": {"n": 10_000, "w": 20}, "L": {"n": 1_000_000, "w": 50}}


def init(n, w):
    rng = np.random.default_rng(47)
    return 100.0 * np.exp(np.cumsum(0.01 * rng.standard_normal(n))), w


def kernel(price, w):
    c = np.cumsum(np.concatenate(([0.0], price)))
    moving = (c[w:] - c[:-w]) / w
    returns = np.diff(price) / price[:-1]
    growth = np.cumprod(1.0 + returns)
    peak = np.maximum.accumulate(price)
    drawdown = (price - peak) / peak
    return moving, growth, drawdown.min(), np.argmin(drawdown)
