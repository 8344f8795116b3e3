"""Configuration: evaluation mode, default device, and what a NumPy fallback call does.

The process-wide default comes from the environment (``LAZYARR_MODE``,
``LAZYARR_DEVICE``, ``LAZYARR_FALLBACK``) and :func:`set_config`; :func:`config` overrides it for a
``with`` block. Overrides live in a :class:`contextvars.ContextVar`, so they are
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
_CHOICES = {"mode": MODES, "device": DEVICES, "fallback": FALLBACKS}
_ENV = {"mode": "LAZYARR_MODE", "device": "LAZYARR_DEVICE", "fallback": "LAZYARR_FALLBACK"}


@dataclass(frozen=True)
class Config:
    """A complete configuration. ``mode`` is ``"lazy"`` or ``"eager"``;
    ``device`` is ``"auto"``, ``"cpu"`` or ``"cuda"``; ``fallback`` says what a call that
    lazyarr hands to NumPy/CuPy does: ``"allow"`` it, ``"warn"`` (a
    :class:`~lazyarr.FallbackWarning`) or ``"error"`` (a :class:`~lazyarr.FallbackError`)."""

    mode: str = "lazy"
    device: str = "auto"
    fallback: str = "allow"


def _validate(source: str, key: str, value: object) -> str:
    if key not in _CHOICES:
        raise TypeError(f"unknown lazyarr config option {key!r}; options: {', '.join(_CHOICES)}")
    choices = _CHOICES[key]
    if not isinstance(value, str) or value.lower() not in choices:
        raise ValueError(f"{source}={value!r} is not valid; choose one of {', '.join(map(repr, choices))}")
    return value.lower()


def _from_environment() -> Config:
    values = {}
    for key, var in _ENV.items():
        if var in os.environ:
            values[key] = _validate(var, key, os.environ[var])
    return Config(**values)


_default = _from_environment()
_override: contextvars.ContextVar[Config | None] = contextvars.ContextVar("lazyarr_config", default=None)


def get_config() -> Config:
    """Return the configuration in effect here (this thread/task, this ``with`` block)."""
    return _override.get() or _default


def set_config(**options: str) -> Config:
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
def config(**options: str) -> Iterator[Config]:
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
