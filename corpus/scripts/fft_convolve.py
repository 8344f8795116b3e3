"""Linear convolution of two signals through the FFT (rfft, product, irfft), checked against
the direct sum for the first samples."""
import numpy as np

PRESETS = {"S": {"n": 4096, "m": 257}, "L": {"n": 500_000, "m": 4097}}


def init(n, m):
    rng = np.random.default_rng(3)
    return rng.standard_normal(n), np.hanning(m)


def kernel(signal, taps):
    size = signal.size + taps.size - 1
    nfft = 1 << (size - 1).bit_length()
    spec = np.fft.rfft(signal, nfft) * np.fft.rfft(taps, nfft)
    out = np.fft.irfft(spec, nfft)[:size]
    power = np.abs(spec) ** 2
    return out, power.sum() / nfft
