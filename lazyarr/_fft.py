"""``lazyarr.fft``: NumPy's ``numpy.fft`` (CuPy's ``cupy.fft`` on cuda) through the fallback,
with ``fftfreq``/``rfftfreq`` taking the array API standard's ``dtype=`` and ``device=`` too
(NumPy 2.4's take ``device=`` only): both signatures hold at once.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _devices, _fallback, _node
from ._array import LazyArray
from ._dtypes import check_dtype


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: str | None = None) -> LazyArray:
    """The sample frequencies of an ``n``-point DFT with sample spacing ``d``
    (``numpy.fft.fftfreq``), float64 unless ``dtype`` (a real floating dtype) says otherwise,
    on ``device``."""
    return _frequencies("fftfreq", n, d, dtype, device)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: str | None = None) -> LazyArray:
    """The sample frequencies of ``rfft`` of ``n`` points (``numpy.fft.rfftfreq``), float64
    unless ``dtype`` says otherwise, on ``device``."""
    return _frequencies("rfftfreq", n, d, dtype, device)


def _frequencies(name: str, n: int, d: float, dtype: Any, device: str | None) -> LazyArray:
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise ValueError(f"{name}: dtype must be a real floating dtype, not {np.dtype(dtype)}")
    dev = _devices.resolve(device)
    values = getattr(_devices.xp(dev).fft, name)(n, d)
    if dtype is not None:
        values = values.astype(check_dtype(dtype), copy=False)
    return LazyArray._from_node(_node.leaf(values, dev))


#: ``lazyarr.fft``: ``fftfreq`` and ``rfftfreq`` are lazyarr's; every other name is NumPy's
#: (CuPy's) through the fallback.
fft = _fallback.FallbackNamespace("fft", {"fftfreq": fftfreq, "rfftfreq": rfftfreq})
