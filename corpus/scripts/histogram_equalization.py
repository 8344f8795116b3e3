"""Histogram equalization of an 8-bit image: bincount, cumulative distribution, a lookup table
indexed by the pixel values."""
import numpy as np

PRESETS = {"S": {"n": 128}, "L": {"n": 2048}}


def init(n):
    rng = np.random.default_rng(17)
    return np.clip(rng.normal(90, 25, (n, n)), 0, 255).astype(np.uint8)


def kernel(img):
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = np.cumsum(hist)
    cdf_min = cdf[cdf > 0].min()
    lut = np.round((cdf - cdf_min) / (img.size - cdf_min) * 255)
    lut = np.clip(lut, 0, 255).astype(np.uint8)
    out = lut[img]
    return out, hist, np.histogram(out, bins=16, range=(0, 256))[0]
