"""A 2-D low-pass filter of an image in the frequency domain: fft2, a radial mask built from
fftfreq, ifft2, and the energy kept."""
import numpy as np

PRESETS = {"S": {"n": 64}, "L": {"n": 1024}}


def init(n):
    rng = np.random.default_rng(5)
    yy, xx = np.mgrid[0:n, 0:n] / n
    return np.sin(12 * np.pi * xx) * np.cos(6 * np.pi * yy) + 0.3 * rng.standard_normal((n, n))


def kernel(img):
    n0, n1 = img.shape
    fy = np.fft.fftfreq(n0)[:, None]
    fx = np.fft.fftfreq(n1)[None, :]
    keep = np.sqrt(fx**2 + fy**2) < 0.1
    spec = np.fft.fft2(img)
    smooth = np.fft.ifft2(spec * keep).real
    energy = (np.abs(spec * keep) ** 2).sum() / (np.abs(spec) ** 2).sum()
    return smooth, energy
