"""The array API standard's inspection namespace (docs/array-api.rst):
``__array_api_version__`` and ``__array_namespace_info__()``. ``lazyarr`` itself is the
namespace (``x.__array_namespace__()``, lazyarr/_array.py, gives the module).

Devices are the strings ``"cpu"`` and ``"cuda"`` (what ``x.device`` gives); dtypes are NumPy's.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _devices
from .._dtypes import SUPPORTED_DTYPES

__array_api_version__ = "2024.12"

_KINDS = {
    "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
    "real floating": "f", "complex floating": "c", "numeric": "iufc",
}


class Info:
    """What ``lazyarr.__array_namespace_info__()`` returns: lazyarr's capabilities, devices and
    dtypes, as the array API standard's inspection functions describe them."""

    __module__ = "lazyarr"

    def capabilities(self) -> dict[str, Any]:
        """``boolean indexing`` and ``data-dependent shapes`` (``x[mask]``, ``unique``: the
        shape is known once computed); ``max dimensions`` 64, as NumPy 2."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> str:
        """The configured device (``la.config(device=...)``; ``"auto"`` resolved)."""
        return _devices.resolve(None)

    def devices(self) -> list[str]:
        """``["cpu"]``, and ``"cuda"`` where a usable GPU (or the simulated device) is there."""
        return ["cpu", "cuda"] if _devices.cuda_available() else ["cpu"]

    def default_dtypes(self, *, device: str | None = None) -> dict[str, np.dtype]:
        """NumPy's defaults, on every device: float64, complex128, int64 (intp) for indexing."""
        self._check_device(device)
        return {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.intp), "indexing": np.dtype(np.intp)}

    def dtypes(self, *, device: str | None = None,
               kind: str | tuple[str, ...] | None = None) -> dict[str, np.dtype]:
        """The standard's dtypes, by name, optionally of one ``kind`` (or a tuple of kinds):
        ``"bool"``, ``"signed integer"``, ``"unsigned integer"``, ``"integral"``, ``"real
        floating"``, ``"complex floating"``, ``"numeric"``. lazyarr also holds float16, which
        the standard does not name (so it is not listed, as in NumPy's own info)."""
        self._check_device(device)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        letters = ""
        for k in kinds:
            if k is None:
                letters += "biufc"
            elif k in _KINDS:
                letters += _KINDS[k]
            else:
                raise ValueError(f"unknown dtype kind {k!r}; the kinds are {', '.join(map(repr, _KINDS))}")
        return {dt.name: dt for dt in SUPPORTED_DTYPES if dt.kind in letters and dt != np.float16}

    def _check_device(self, device: str | None) -> None:
        if device is not None and device not in self.devices():
            raise ValueError(f"device {device!r} is not one of {self.devices()}")


def __array_namespace_info__() -> Info:
    """The array API inspection namespace: ``capabilities()``, ``default_device()``,
    ``default_dtypes()``, ``devices()``, ``dtypes()``."""
    return Info()
