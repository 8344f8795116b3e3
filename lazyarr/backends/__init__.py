"""Backends: what runs a lowered program on a device.

A backend is an object with

* ``name`` — shown by ``la.explain``;
* ``run(lowered) -> buffer`` — materialize the program's root (a NumPy/CuPy array
  of the root's dtype and shape);
* ``plan(lowered) -> Plan`` — describe the launches ``run`` would make, without running.

Fused backends are registered by name in :data:`BACKENDS`; :data:`FUSED` names each
device's. ``select(device, mode)`` picks one. Eager mode materializes every op as it is
built, so a program reaching a backend in eager mode only happens when a pending
array (built in lazy mode) is materialized inside an eager block: the op-by-op
reference backend runs it. Lazy mode uses the fused backend of the device.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import warnings
from collections.abc import Iterator
from typing import Any, Protocol

from .._devices import cuda_simulated
from .._plan import Plan
from .._program import Lowered


class Backend(Protocol):
    name: str

    def run(self, lowered: Lowered) -> Any: ...

    def plan(self, lowered: Lowered) -> Plan: ...


# Tests (and curious users) can pin the backend: ``with use_backend("reference"): ...``
_forced: contextvars.ContextVar[str | None] = contextvars.ContextVar("lazyarr_backend", default=None)


@contextlib.contextmanager
def use_backend(name: str | None) -> Iterator[None]:
    """Force the lazy-mode backend by name (``"reference"``, ``"cpu-fused"``, ``"cuda"``,
    ``"cuda-sim"``)."""
    if name not in (None, *available()):
        raise ValueError(f"unknown or unavailable backend {name!r}; available: {available()}")
    token = _forced.set(name)
    try:
        yield
    finally:
        _forced.reset(token)


def _reference(device: str) -> Backend:
    from .reference import for_device
    return for_device(device)


#: Every fused backend, by name: the device it runs on and the module (under
#: ``lazyarr.backends``) whose ``BACKEND`` it is. A new backend is one row here.
BACKENDS: dict[str, tuple[str, str]] = {
    "cpu-fused": ("cpu", "cpu_fused"),
    "cuda": ("cuda", "cuda"),
    "cuda-sim": ("cuda", "cuda.simulate"),   # the simulated cuda device (LAZYARR_CUDA_SIM=1)
}
#: device -> the name of its fused backend (the simulated cuda device: ``cuda-sim``)
FUSED: dict[str, str] = {"cpu": "cpu-fused", "cuda": "cuda"}


def fused_name(device: str) -> str:
    """The name of the fused backend of ``device`` in this process."""
    if device == "cuda" and cuda_simulated():
        return "cuda-sim"
    return FUSED[device]


@functools.cache
def load(name: str) -> Backend | None:
    """The registered backend ``name``, or None where it is not built/installed (imported once)."""
    device, module = BACKENDS[name]
    try:
        loaded = importlib.import_module(f".{module}", __name__)
    except ImportError as exc:
        missing = isinstance(exc, ModuleNotFoundError) and exc.name == f"{__name__}.{module}"
        if device == "cpu" and not missing:   # present but not loadable: a broken build
            warnings.warn(f"lazyarr's fused CPU backend could not be loaded ({exc}); lazy mode on "
                          "cpu falls back to the op-by-op reference interpreter. Reinstall lazyarr "
                          "(pip install .) to build it.", RuntimeWarning, stacklevel=3)
        return None
    return getattr(loaded, "BACKEND", None)  # a module may set BACKEND = None: unusable here


#: device -> its fused backend (or None): :func:`_fused`'s answers, asked at every
#: materialization (``fused_name`` reads the environment: ~0.3 µs a call; the simulated
#: device is decided once per process, as ``_devices.cuda_simulated`` says)
_fused_of: dict[str, Backend | None] = {}


def _fused(device: str) -> Backend | None:
    """The device's fused backend, or None where it is not built/installed."""
    try:
        return _fused_of[device]
    except KeyError:
        backend = _fused_of[device] = load(fused_name(device))
        return backend


def available() -> list[str]:
    names = ["reference"]
    for device in FUSED:
        fused = _fused(device)
        if fused is not None:
            names.append(fused.name)
    return names


def forced_backend() -> str | None:
    """The backend pinned by :func:`use_backend` in this context, if any."""
    return _forced.get()


def select(device: str, mode: str) -> Backend:
    """The backend that runs (or plans, for ``la.explain``) programs on ``device`` in ``mode``."""
    forced = _forced.get()
    if mode == "eager" or forced == "reference":
        return _reference(device)
    try:                  # (_fused's answer known: without its frame, at every materialization)
        fused = _fused_of[device]
    except KeyError:
        fused = _fused(device)
    if fused is not None and forced in (None, fused.name):
        return fused
    if forced is not None and (fused is None or forced != fused.name):
        raise ValueError(f"backend {forced!r} cannot run on device {device!r}")
    return _reference(device)
