"""The table of NumPy's public names and how lazyarr serves each: native, through the fallback
(lazyarr/_fallback.py), or unsupported with the reason. docs/gen_numpy_names.py writes it as a
page; tests/test_fallback.py checks it against NumPy's namespace."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _fallback

#: The NumPy namespaces the comparison page (docs/generated/numpy-names.rst) lists.
LISTED_NAMESPACES = ("", "linalg", "fft", "random")


def numpy_names() -> list[str]:
    """Every public name of NumPy's main namespace and of linalg, fft and random (their
    ``__all__``), as ``"name"`` or ``"linalg.name"``."""
    names: list[str] = []
    for space in LISTED_NAMESPACES:
        module = _fallback.resolve(np, space) if space else np
        names += [f"{space}.{n}" if space else n for n in sorted(module.__all__)]
    return names


def status(path: str) -> tuple[str, str]:
    """How lazyarr serves ``numpy.<path>``: ``("native" | "fallback" | "unsupported", note)``.

    native: lazyarr's own (fused where it computes); fallback: NumPy/CuPy called on computed
    operands, or NumPy's own object (a type, a constant) served as it is; unsupported: the
    reason.
    """
    import lazyarr

    space, _, name = path.rpartition(".")
    # a namespace with some names of its own (its NATIVE set: lazyarr.random, lazyarr.fft)
    mixed = getattr(vars(lazyarr).get(name), "NATIVE", None) if not space else None
    if mixed and _functions_of(getattr(np, name)) <= mixed:   # (fft, linalg: all of them)
        return "native", "a namespace: every function lazyarr's"
    if mixed:
        return "fallback", (f"a namespace: {', '.join(sorted(mixed))} are lazyarr's, each other "
                            "function through the fallback")
    if space and "." not in space and name in getattr(getattr(lazyarr, space), "NATIVE", ()):
        return "native", ""
    if not space and name in vars(lazyarr):
        return "native", ""
    if not space and name in _fallback.UNSUPPORTED:
        return "unsupported", _fallback.UNSUPPORTED[name]
    obj = _fallback.resolve(np, path)
    served = getattr(lazyarr, name) if not space else getattr(getattr(lazyarr, space), name)
    if isinstance(served, _fallback.FallbackNamespace):
        return "fallback", "a namespace: each function through the fallback"
    if isinstance(served, (_fallback.FallbackFunction, _fallback.FallbackIndexer)):
        return "fallback", ""
    if served is obj:
        return "fallback", "NumPy's own object, as it is"
    raise AssertionError(f"numpy.{path} is served as {served!r}")   # pragma: no cover


def _functions_of(module: Any) -> set[str]:
    """The functions of a NumPy namespace's ``__all__``: its types (``LinAlgError``,
    ``Generator``) are NumPy's own objects, served as they are, not functions to implement."""
    return {n for n in module.__all__ if not isinstance(getattr(module, n), type)}
