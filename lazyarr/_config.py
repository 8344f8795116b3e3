"""Configuration: evaluation mode, default device, what a NumPy fallback call does, up to
what size an operator on computed CPU arrays runs at once, and whether a new GPU kernel's first
calls wait for its compile.

The process-wide default comes from the environment (``LAZYARR_MODE``, ``LAZYARR_DEVICE``,
``LAZYARR_FALLBACK``, ``LAZYARR_EAGER_MAX_SIZE``, ``LAZYARR_COMPILE``, ``LAZYARR_CPU_LOOPS``) and
:func:`set_config`; :func:`config`
overrides it for a ``with`` block. Overrides live in a :class:`contextvars.ContextVar`, so they are
local to the thread or asyncio task that entered the block.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace

MODES = ("lazy", "eager")
DEVICES = ("auto", "cpu", "cuda")
FALLBACKS = ("allow", "warn", "error")
COMPILES = ("background", "wait")
CPU_LOOPS = ("background", "wait", "off")
_CHOICES = {"mode": MODES, "device": DEVICES, "fallback": FALLBACKS, "compile": COMPILES,
            "cpu_loops": CPU_LOOPS}
_ENV = {"mode": "LAZYARR_MODE", "device": "LAZYARR_DEVICE", "fallback": "LAZYARR_FALLBACK",
        "eager_max_size": "LAZYARR_EAGER_MAX_SIZE", "compile": "LAZYARR_COMPILE",
        "cpu_loops": "LAZYARR_CPU_LOOPS"}
_OPTIONS = (*_CHOICES, "eager_max_size")


@dataclass(frozen=True)
class Config:
    """A complete configuration. ``mode`` is ``"lazy"`` or ``"eager"``;
    ``device`` is ``"auto"``, ``"cpu"`` or ``"cuda"``; ``fallback`` says what a call that
    lazyarr hands to NumPy/CuPy does: ``"allow"`` it, ``"warn"`` (a
    :class:`~lazyarr.FallbackWarning`) or ``"error"`` (a :class:`~lazyarr.FallbackError`).
    ``eager_max_size``: in lazy mode, an operator (``x + y``, ``-x``, ``x += y``) whose operands
    are computed CPU arrays (or numbers) of at most this many elements, with a result no
    bigger, runs at once with NumPy, as in eager mode: there is nothing to fuse, and NumPy's
    loop costs less than a kernel (docs/guide.rst, "Small arrays"; 32,768 elements, 256 KiB of
    float64: measured in docs/notes/cpu.rst, 2026-12-04c). 0 turns it off.
    ``compile``: on a GPU, a new kernel compiles in ``"background"`` while its first calls run
    op by op with CuPy (the same values and floating-point warnings; docs/gpu-backend.rst,
    "A new kernel's first calls"), or each call waits for it (``"wait"``).
    ``cpu_loops``: on the CPU, a program of arithmetic, comparisons, ``where`` and casts that
    has run twice (and done enough work to pay) is compiled by Numba into one loop per block
    (the same values, bit for bit; docs/cpu-backend.rst, "Compiled loops") on the compile
    thread (``"background"``) or at its first call (``"wait"``); ``"off"`` keeps the VM's
    instruction by instruction passes."""

    mode: str = "lazy"
    device: str = "auto"
    fallback: str = "allow"
    eager_max_size: int = 32768
    compile: str = "background"
    cpu_loops: str = "background"


def _validate(source: str, key: str, value: object) -> str | int:
    if key not in _OPTIONS:
        raise TypeError(f"unknown lazyarr config option {key!r}; options: {', '.join(_OPTIONS)}")
    if key == "eager_max_size":
        return _size(source, value)
    choices = _CHOICES[key]
    if not isinstance(value, str) or value.lower() not in choices:
        raise ValueError(f"{source}={value!r} is not valid; choose one of {', '.join(map(repr, choices))}")
    return value.lower()


def _size(source: str, value: object) -> int:
    """A non-negative element count, from an int or (the environment) a decimal string."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if type(value) is not int or value < 0:
        raise ValueError(f"{source}={value!r} is not valid; give a non-negative int")
    return value


def _from_environment() -> Config:
    values = {}
    for key, var in _ENV.items():
        if var in os.environ:
            values[key] = _validate(var, key, os.environ[var])
    return Config(**values)


_default = _from_environment()

#: The CPU backend's thread-count variables as they were when lazyarr was imported. The
#: backend loads at its first kernel, and by then a Dask ``LocalCluster`` may have set
#: ``OMP_NUM_THREADS=1`` in this very process: distributed's nanny puts its workers'
#: ``pre-spawn-environ`` into ``os.environ`` of the process that starts them.
THREAD_ENVIRONMENT = {name: os.environ.get(name) for name in ("LAZYARR_NUM_THREADS", "OMP_NUM_THREADS")}
_override: contextvars.ContextVar[Config | None] = contextvars.ContextVar("lazyarr_config", default=None)


def get_config() -> Config:
    """Return the configuration in effect here (this thread/task, this ``with`` block)."""
    return _override.get() or _default


def set_config(**options: str | int) -> Config:
    """Change the process-wide default configuration; returns the new default.

    ``with lazyarr.config(...)`` blocks still override it where they are active.

    >>> import lazyarr as la
    >>> old = la.get_config()
    >>> la.set_config(mode="eager").mode
    'eager'
    >>> _ = la.set_config(mode=old.mode)
    """
    global _default
    _default = replace(_default, **{k: _validate(k, k, v) for k, v in options.items()})
    return _default


@contextlib.contextmanager
def config(**options: str | int) -> Iterator[Config]:
    """Override the configuration inside a ``with`` block (thread- and task-local).

    >>> import lazyarr as la
    >>> with la.config(mode="eager", device="cpu") as cfg:
    ...     cfg.mode
    'eager'
    """
    new = replace(get_config(), **{k: _validate(k, k, v) for k, v in options.items()})
    token = _override.set(new)
    try:
        yield new
    finally:
        _override.reset(token)
