"""Ordinary least squares by the normal equations: a design matrix with an intercept column,
X.T @ X solved with np.linalg.solve, residuals and R^2."""
import numpy as np

PRESETS = {"S": {"n": 1000, "p": 5}, "L": {"n": 50_000, "p": 20}}


def init(n, p):
    rng = np.random.default_rng(43)
    x = rng.standard_normal((n, p))
    return x, x @ np.linspace(-1, 1, p) + 0.5 + 0.1 * rng.standard_normal(n)


def kernel(x, y):
    design = np.hstack([np.ones((x.shape[0], 1)), x])
    beta = np.linalg.solve(design.T @ design, design.T @ y)
    resid = y - design @ beta
    r2 = 1.0 - (resid @ resid) / ((y - y.mean()) ** 2).sum()
    return beta, resid, r2
