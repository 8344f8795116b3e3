"""Separable 5-tap Gaussian blur of a float32 image with edge padding, applied twice."""
import numpy as np

PRESETS = {"S": {"n": 128}, "L": {"n": 1024}}


def init(n):
    rng = np.random.default_rng(11)
    return rng.random((n, n), dtype=np.float32)


def blur(img):
    w = np.array([1.0, 4.0, 6.0, 4.0, 1.0], dtype=np.float32) / 16
    p = np.pad(img, 2, mode="edge")
    rows = w[0] * p[:, :-4] + w[1] * p[:, 1:-3] + w[2] * p[:, 2:-2] + w[3] * p[:, 3:-1] + w[4] * p[:, 4:]
    return w[0] * rows[:-4] + w[1] * rows[1:-3] + w[2] * rows[2:-2] + w[3] * rows[3:-1] + w[4] * rows[4:]


def kernel(img):
    return blur(blur(img))
