"""``lazyarr.random``: NumPy's random API, drawing NumPy's numbers on the CPU.

The streams (docs/guide.rst, "Random numbers"):

* on the CPU, ``la.random.default_rng(seed)`` is NumPy's generator (PCG64) and every method
  draws what NumPy draws for that seed; the legacy functions (``la.random.seed``, ``rand``,
  ``randn``, ``randint``, ``normal`` ...) are NumPy's global ``RandomState``. A ported script
  prints the numbers it printed before.
* on ``cuda``, CuPy's generators (``cupy.random.default_rng``, the legacy ``cupy.random``
  functions): other numbers for the same seed, drawn on the GPU.

Draws run when they are written, as in NumPy (a generator's state advances at the call), and
come back as computed LazyArrays on the generator's device, so what follows them fuses. Array
arguments (``rng.choice(x)``, ``rng.shuffle(x)``) are computed first; ``shuffle`` writes into
its argument's memory, as NumPy's (views see it, pending readers keep their values).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _devices, _fallback
from ._random_fused import FusedGenerator

#: Generator methods that write into their first argument.
_WRITES_FIRST = frozenset({"shuffle"})


class Generator:
    """NumPy's ``numpy.random.Generator`` (CuPy's on ``cuda``) with LazyArray results.

    Every method of the wrapped generator is available with NumPy's signature; array results
    are computed LazyArrays on :attr:`device`, other results (a Python float for
    ``random()``) are returned as they are. Made by :func:`default_rng`.
    """

    def __init__(self, generator: Any, device: str) -> None:
        self._generator = generator
        self.device = device

    @property
    def bit_generator(self) -> Any:
        """The wrapped generator's bit generator (NumPy's ``PCG64`` on the CPU)."""
        return self._generator.bit_generator

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            method = getattr(self._generator, name)
        except AttributeError:
            if self.device == "cuda" and hasattr(np.random.Generator, name):
                raise AttributeError(
                    f"CuPy's random Generator has no {name}(): draw it on the CPU with "
                    f"la.random.default_rng(seed, device='cpu') and move the result with "
                    f"la.asarray(x, device='cuda')") from None
            raise
        if not callable(method):
            return method
        path = f"random.Generator.{name}"
        written = 0 if name in _WRITES_FIRST else None

        def draw(*args: Any, **kwargs: Any) -> Any:
            device = _fallback._device(args, kwargs)
            if device is not None and device != self.device:
                raise ValueError(f"a {self.device} generator was given {device} arrays; move "
                                 "them with la.asarray(x, device=...)")
            return _fallback.run(path, method, self.device, args, kwargs, written)

        draw.__name__ = draw.__qualname__ = name
        draw.__doc__ = getattr(method, "__doc__", None)
        return draw

    def __dir__(self) -> list[str]:
        return sorted(set(object.__dir__(self)) | {n for n in dir(self._generator)
                                                   if not n.startswith("_")})

    def __repr__(self) -> str:
        return f"Generator({type(self.bit_generator).__name__}, device={self.device!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"generator": self._generator, "device": self.device}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._generator, self.device = state["generator"], state["device"]


class DaskBitGenerator(np.random.PCG64):
    """NumPy's PCG64 (the same streams) under lazyarr's name. Dask's random functions find the
    library to draw a chunk with from their bit generator's module name (``typename(bitgen)``
    in ``dask/array/random.py``): with ``array.backend = "lazyarr"`` (lazyarr/_dask.py) this
    one makes them call ``lazyarr.random.default_rng(bitgen)``, so the chunks are LazyArrays."""


class DaskRandomState:
    """NumPy's legacy ``RandomState`` (the same streams, on the CPU) whose array draws come back
    as LazyArrays: what Dask's legacy random functions (``da.random.random``) draw a chunk with
    when ``array.backend = "lazyarr"`` (lazyarr/_dask.py)."""

    def __init__(self, seed: Any = None) -> None:
        self._state = np.random.RandomState(seed)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._state, name)
        if not callable(attr):
            return attr

        def draw(*args: Any, **kwargs: Any) -> Any:
            return _fallback.run(f"random.RandomState.{name}", attr, "cpu", args, kwargs)
        return draw


def default_rng(seed: Any = None, *, device: str | None = None,
                fused: bool = False) -> Generator | FusedGenerator:
    """A random generator with NumPy's ``default_rng`` signature, on ``device`` (default: the
    configured one). On the CPU it is ``numpy.random.default_rng(seed)``, with NumPy's
    streams; on ``cuda`` ``cupy.random.default_rng(seed)``. A :class:`Generator` (or NumPy's
    or CuPy's own generator) given as ``seed`` is wrapped as it is.

    ``fused=True``: a :class:`FusedGenerator`, whose draws are lazy and generated inside the
    kernel that reads them (Philox4x32-10, nothing stored; the same numbers on every device,
    not NumPy's): ``lazyarr/_random_fused.py`` and the guide's "Random numbers"."""
    if fused:
        if isinstance(seed, (Generator, np.random.Generator, np.random.BitGenerator)):
            raise TypeError("a fused generator takes a seed (an int, a sequence of ints or a "
                            "SeedSequence), not another generator")
        return FusedGenerator(seed, device)
    if isinstance(seed, Generator):
        return seed
    device = _devices.resolve(device)
    if isinstance(seed, np.random.Generator) and device != "cuda":
        return Generator(seed, "cpu")
    if isinstance(seed, np.random.BitGenerator) and device == "cuda":
        seed = int(seed.random_raw())   # CuPy takes no NumPy bit generator: a seed drawn from it
    library = _devices.xp(device).random
    return Generator(library.default_rng(seed), device)


#: ``lazyarr.random``: :func:`default_rng` and :class:`Generator` are lazyarr's; every other
#: name (the legacy functions, the bit generators) is NumPy's through the fallback.
random = _fallback.FallbackNamespace("random", {"default_rng": default_rng, "Generator": Generator,
                                                "FusedGenerator": FusedGenerator})
