"""The Python array API standard's namespace hooks (docs/array-api.rst): ``lazyarr`` itself is
the namespace (``x.__array_namespace__()`` is the module), ``__array_api_version__``, the
inspection namespace ``__array_namespace_info__()``, ``x.to_device``, ``from_dlpack``.

Devices are the strings ``"cpu"`` and ``"cuda"`` (what ``x.device`` gives); dtypes are NumPy's.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from . import _devices, _fallback
from ._array import LazyArray, asarray
from ._dtypes import SUPPORTED_DTYPES

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


def array_namespace(self: LazyArray, /, *, api_version: str | None = None) -> Any:
    """The array API namespace of this array: the ``lazyarr`` module."""
    if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12", "2024.12"):
        raise ValueError(f"lazyarr implements the array API standard 2024.12 (and the versions "
                         f"before it), not {api_version!r}")
    return sys.modules["lazyarr"]


def to_device(self: LazyArray, device: str, /, *, stream: Any = None) -> LazyArray:
    """This array on ``device`` (``"cpu"`` or ``"cuda"``): itself if it is there, else a copy.
    ``stream`` is accepted for the standard's signature; copies use the current stream."""
    return asarray(self, device=device)


def dlpack(self: LazyArray, /, *, stream: Any = None, max_version: tuple[int, int] | None = None,
           dl_device: Any = None, copy: bool | None = None) -> Any:
    """The DLPack capsule of the computed buffer (NumPy's or CuPy's ``__dlpack__``)."""
    kwargs: dict[str, Any] = {}
    if stream is not None:
        kwargs["stream"] = stream
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return self.data.__dlpack__(**kwargs)


def from_dlpack(x: Any, /, *, device: str | None = None, copy: bool | None = None) -> LazyArray:
    """An array from any object with ``__dlpack__`` (NumPy, CuPy, PyTorch, JAX ...), sharing its
    memory where the device allows (``copy=None``), on ``device`` if given."""
    if isinstance(x, LazyArray):
        return asarray(x, device=device, copy=copy)
    source = _devices.device_of(x)
    if source == "cuda":
        import cupy
        data = cupy.from_dlpack(x)
    else:
        data = np.from_dlpack(x, copy=copy)
    return asarray(data, device=device, copy=None if copy is None else (copy and source == "cuda"))


def argsort(a: Any, axis: int = -1, kind: str | None = None, order: Any = None, *,
            stable: bool | None = None, descending: bool = False) -> LazyArray:
    """The indices that sort ``a`` along ``axis``: ``numpy.argsort`` with the array API's
    ``descending`` too. Stable unless ``kind``/``stable=False`` say otherwise: equal elements
    keep their order (the standard's default; NumPy's default sort leaves it open, so for
    ties lazyarr's indices can differ from NumPy's). Runs NumPy's (CuPy's) sort on the
    computed array; not fused."""
    return _sort("argsort", a, axis, kind, order, stable, descending)


def sort(a: Any, axis: int = -1, kind: str | None = None, order: Any = None, *,
         stable: bool | None = None, descending: bool = False) -> LazyArray:
    """A sorted copy of ``a`` along ``axis``: ``numpy.sort`` with the array API's
    ``descending`` too. Runs NumPy's (CuPy's) sort on the computed array; not fused."""
    return _sort("sort", a, axis, kind, order, stable, descending)


def _sort(name: str, a: Any, axis: int, kind: str | None, order: Any, stable: bool | None,
          descending: bool) -> LazyArray:
    x = a if isinstance(a, LazyArray) else asarray(a)
    kwargs: dict[str, Any] = {}
    if x.device != "cuda":          # CuPy's sorts are stable and take neither keyword
        if name == "argsort" and kind is None and stable is None:
            stable = True           # the standard's default (NumPy leaves ties' order open)
        kwargs.update(kind=kind, order=order, stable=stable)
    if not descending:
        return _fallback.call(name, getattr(np, name), (x, axis), kwargs)
    # descending (the standard's; NumPy has none): a stable ascending sort of the reversed
    # array, reversed back, so equal elements keep their original order as the standard asks
    if x.device != "cuda" and kind is None and not stable:
        kwargs["stable"] = True
    flipped = _fallback.call("flip", np.flip, (x,), {"axis": axis})
    idx = _fallback.call("argsort", np.argsort, (flipped, axis), kwargs)
    n = x.shape[axis] if x.ndim else 1
    idx = (n - 1) - _fallback.call("flip", np.flip, (idx,), {"axis": axis})
    if name == "argsort":
        return idx
    return _fallback.call("take_along_axis", np.take_along_axis, (x, idx), {"axis": axis})


# The standard's unique_* leave the order open; NumPy 2.3+ gives its hash order for
# unique_values, array_api_compat and array_api_strict give sorted values, and consumers
# (scikit-learn's unique_labels) rely on that. lazyarr gives the sorted values, NumPy's
# ``np.unique`` (every NaN distinct, as the standard asks), on the computed array.
_UNIQUE_TYPES = {name: type(getattr(np, name)(np.zeros(1))) for name in
                 ("unique_all", "unique_counts", "unique_inverse")}


def unique_values(x: Any, /) -> LazyArray:
    """The unique elements of ``x``, sorted (every NaN distinct)."""
    return _fallback.call("unique", np.unique, (x,), {"equal_nan": False})


def unique_counts(x: Any, /) -> Any:
    """``(values, counts)`` of the unique elements of ``x``, values sorted."""
    values, counts = _fallback.call("unique", np.unique, (x,), {"return_counts": True, "equal_nan": False})
    return _UNIQUE_TYPES["unique_counts"](values, counts)


def unique_inverse(x: Any, /) -> Any:
    """``(values, inverse_indices)``: the sorted unique values and, for each element of ``x``
    (in ``x``'s shape), the index of its value."""
    values, inverse = _fallback.call("unique", np.unique, (x,), {"return_inverse": True, "equal_nan": False})
    return _UNIQUE_TYPES["unique_inverse"](values, inverse.reshape(_shape(x)))


def unique_all(x: Any, /) -> Any:
    """``(values, indices, inverse_indices, counts)`` of the unique elements, values sorted."""
    values, indices, inverse, counts = _fallback.call(
        "unique", np.unique, (x,), {"return_index": True, "return_inverse": True,
                                     "return_counts": True, "equal_nan": False})
    return _UNIQUE_TYPES["unique_all"](values, indices, inverse.reshape(_shape(x)), counts)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def install() -> None:
    LazyArray.__array_namespace__ = array_namespace  # type: ignore[attr-defined]
    LazyArray.to_device = to_device  # type: ignore[attr-defined]
    LazyArray.__dlpack__ = dlpack  # type: ignore[method-assign]
