"""The Mandelbrot set in real arithmetic (no complex dtype): the escape count of each point by
masked updates with np.where."""
import numpy as np

PRESETS = {"S": {"n": 64, "iters": 30}, "L": {"n": 400, "iters": 30}}


def init(n, iters):
    return np.linspace(-2.0, 0.6, n), np.linspace(-1.2, 1.2, n), iters


def kernel(xs, ys, iters):
    cr = xs[None, :] + 0.0 * ys[:, None]
    ci = ys[:, None] + 0.0 * xs[None, :]
    zr = np.zeros_like(cr)
    zi = np.zeros_like(ci)
    count = np.zeros(cr.shape, dtype=np.int32)
    for _ in range(iters):
        alive = zr * zr + zi * zi <= 4.0
        zr, zi = np.where(alive, zr * zr - zi * zi + cr, zr), np.where(alive, 2 * zr * zi + ci, zi)
        count = count + alive
    return count
