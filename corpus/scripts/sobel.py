"""Sobel edge detection: gradients from 3x3 stencils on shifted slices, magnitude, direction and
a thresholded edge map."""
import numpy as np

PRESETS = {"S": {"n": 128}, "L": {"n": 1024}}


def init(n):
    rng = np.random.default_rng(13)
    yy, xx = np.mgrid[0:n, 0:n]
    disc = ((xx - n / 2) ** 2 + (yy - n / 3) ** 2 < (n / 4) ** 2).astype(np.float64)
    return disc + 0.05 * rng.standard_normal((n, n))


def kernel(img):
    gx = (img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:]) - (img[:-2, :-2] + 2 * img[1:-1, :-2] + img[2:, :-2])
    gy = (img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:]) - (img[:-2, :-2] + 2 * img[:-2, 1:-1] + img[:-2, 2:])
    mag = np.hypot(gx, gy)
    angle = np.arctan2(gy, gx)
    edges = mag > 0.5 * mag.max()
    return mag, angle, edges, edges.sum()
