"""European call and put priced by Monte Carlo over geometric Brownian motion, with the
standard error of the estimate (normal draws made by the data initialisation)."""
import numpy as np

PRESETS = {"S": {"n": 100_000}, "L": {"n": 1_000_000}}


def init(n):
    rng = np.random.default_rng(42)
    return rng.standard_normal(n), 100.0, 105.0, 0.03, 0.2, 1.5


def kernel(z, s0, strike, rate, sigma, t):
    st = s0 * np.exp((rate - 0.5 * sigma**2) * t + sigma * np.sqrt(t) * z)
    disc = np.exp(-rate * t)
    call = disc * np.maximum(st - strike, 0.0)
    put = disc * np.maximum(strike - st, 0.0)
    return call.mean(), put.mean(), call.std() / np.sqrt(z.size)
