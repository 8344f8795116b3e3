"""Fused random draws: ``la.random.default_rng(seed, fused=True)``.

A draw of a fused generator is not computed when it is written: it is a lazy expression whose
leaves are *counters* (lazyarr/_counters.py: element ``i`` of the draw, C order, is counter
``i``) and whose first op is ``philox_random64(counter, key, stream)`` (``philox_random32``
for float32): uniform numbers from Philox4x32-10, the counter-based generator of cuRAND, JAX
and torch.compile's fused draws. The conversion to the distribution is ordinary ops after it, so the draw fuses into whatever reads it and is
never written to memory: ``la.mean(rng.random(n) ** 2 + rng.random(n) ** 2 < 1)`` is one
kernel that allocates nothing.

The stream (docs/guide.rst, "Random numbers"), a pure function of (seed, draw number, element):

* ``key`` = ``numpy.random.SeedSequence(seed).generate_state(1, uint64)``;
* the ``d``-th draw of the generator (``d`` = 0, 1, ...) uses streams ``2d`` and ``2d + 1``
  (a normal needs two uniforms per element);
* ``bits(i, s)`` = half ``i & 1`` (words 0-1 or 2-3) of the Philox4x32-10 block with counter
  words ``(i >> 1, s)`` and key ``key`` (lazyarr/_philox.h): the numbers of two neighbouring
  elements come from one block;
* float64 uniform ``(bits >> 11) * 2**-53``, float32 ``(bits >> 40) * 2**-24``: in [0, 1),
  exactly as NumPy turns 64 random bits into a double;
* normal: Box-Muller, ``sqrt(-2 log(1 - u1)) * cos(2 pi u2)``; exponential ``-log(1 - u)``.

So a given seed gives the same draws on every device, thread count and block size (bit for bit
for the uniforms; the transcendental transforms of normal/exponential agree to the few ulps
NumPy's and libdevice's log/cos/sqrt differ by), and a view of a draw (``u[::2]``, ``u.T``)
reads the same numbers as the draw itself. They are *not* NumPy's numbers for that seed (that
is ``fused=False``, the default): fusing is opt-in because it changes the stream.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from . import _devices, _node
from ._config import config, get_config
from ._counters import CounterMap
from ._materialize import materialize

_F8 = np.dtype(np.float64)
_FLOATS = (_F8, np.dtype(np.float32))
#: the registry op of a uniform draw of each dtype (lazyarr/_philox.h: the bits, then the float)
_UNIFORM_OP = {np.dtype(np.float64): "philox_random64", np.dtype(np.float32): "philox_random32"}


def _shape(size: Any) -> tuple[int, ...] | None:
    if size is None:
        return None
    if isinstance(size, (int, np.integer)):
        return (operator.index(size),)
    return tuple(operator.index(n) for n in size)


def _float_dtype(dtype: Any, method: str, out: Any) -> np.dtype:
    """The draw's dtype (float64 or float32, NumPy's TypeError otherwise); a fused draw takes
    no ``out=`` (it is computed where it is read)."""
    if out is not None:
        raise TypeError("a fused draw has no out=: it is computed where it is read")
    dt = np.dtype(dtype)
    if dt not in _FLOATS:
        raise TypeError(f"Unsupported dtype {dt!r} for {method}")
    return dt


class FusedGenerator:
    """A random generator whose draws are lazy and fused into the kernels that read them
    (made by ``la.random.default_rng(seed, fused=True)``; the module docstring gives the
    stream). Methods: :meth:`random`, :meth:`uniform`, :meth:`standard_normal`,
    :meth:`normal`, :meth:`exponential`, with NumPy's signatures."""

    def __init__(self, seed: Any = None, device: str | None = None) -> None:
        seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        self.seed_seq = seq
        self.key = np.uint64(seq.generate_state(1, np.uint64)[0])
        self.device = _devices.resolve(device)
        self.draws = 0          # draws made so far: the next one uses streams 2d, 2d + 1

    def __repr__(self) -> str:
        return f"FusedGenerator(Philox4x32-10, device={self.device!r}, draws={self.draws})"

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("_") and hasattr(np.random.Generator, name):
            raise AttributeError(
                f"a fused generator draws random, uniform, standard_normal, normal and "
                f"exponential; for {name}() use la.random.default_rng(seed) (NumPy's streams "
                f"on the CPU, CuPy's on cuda)")
        raise AttributeError(name)

    # ------------------------------------------------------------------ building blocks
    def _uniform(self, shape: tuple[int, ...], dtype: np.dtype, stream: int) -> Any:
        """A lazy uniform draw in [0, 1) of ``shape`` from ``stream``."""
        from ._array import LazyArray
        counters = _node.counter(CounterMap.c_order(shape), self.device)
        return LazyArray._from_node(_node.op_node(
            _UNIFORM_OP[dtype], dtype, shape, self.device,
            (counters, _node.scalar(self.key), _node.scalar(np.uint64(stream)))))

    def _next_streams(self) -> int:
        d = self.draws
        self.draws += 1
        return 2 * d

    def _finish(self, x: Any, size: Any, eager: bool) -> Any:
        """A draw with ``size=None`` is a Python float (as NumPy's); in eager mode the draw is
        computed at once, by the device's fused kernel (called in lazy mode)."""
        if size is None and x.ndim == 0:
            return float(x)
        if eager:
            materialize(x._node)
        return x

    def _draw(self, size: Any, params: tuple[Any, ...], make: Any) -> Any:
        """``make(shape, streams, *params)`` built lazily on the generator's device: ``params``
        as NumPy takes them (float64; arrays broadcast with ``size``)."""
        from ._array import LazyArray
        from ._functions._creation import asarray
        shape = _shape(size)
        params = tuple(p if isinstance(p, (float, int)) and not isinstance(p, bool) else
                       asarray(p, device=self.device).astype(np.float64, copy=False)
                       if isinstance(p, LazyArray) else
                       asarray(np.asarray(p, dtype=np.float64), device=self.device)
                       for p in params)
        pshape = np.broadcast_shapes(*(np.shape(p) for p in params if not isinstance(p, (float, int))))
        if shape is None:
            shape = pshape
        elif np.broadcast_shapes(shape, pshape) != shape:
            raise ValueError(f"shape mismatch: objects cannot be broadcast to a single shape "
                             f"(the parameters' {pshape} and size {shape})")
        streams = self._next_streams()
        eager = get_config().mode == "eager"
        with config(mode="lazy", device=self.device):
            return self._finish(make(shape, streams, *params), size, eager)

    # ------------------------------------------------------------------ NumPy's methods
    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        """Uniform floats in [0, 1), as ``numpy.random.Generator.random``."""
        dt = _float_dtype(dtype, "random", out)
        return self._draw(size, (), lambda shape, s: self._uniform(shape, dt, s))

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
        """Uniform float64 in [low, high): ``low + (high - low) * random()``, as NumPy's."""
        _check_range(low, high)
        return self._draw(size, (low, high), lambda shape, s, lo, hi:
                          lo + (hi - lo) * self._uniform(shape, _F8, s))

    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        """Standard normal floats (Box-Muller of two fused uniforms)."""
        dt = _float_dtype(dtype, "standard_normal", out)
        return self._draw(size, (), lambda shape, s: self._normal(shape, dt, s))

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        """Normal float64 with mean ``loc`` and standard deviation ``scale`` (>= 0)."""
        _check_nonnegative(scale, "scale")
        return self._draw(size, (loc, scale), lambda shape, s, mu, sigma:
                          mu + sigma * self._normal(shape, _F8, s))

    def exponential(self, scale: Any = 1.0, size: Any = None) -> Any:
        """Exponential float64 with mean ``scale`` (>= 0): ``-log(1 - u) * scale``."""
        _check_nonnegative(scale, "scale")
        return self._draw(size, (scale,), lambda shape, s, beta:
                          -_f("log1p")(-self._uniform(shape, _F8, s)) * beta)

    def _normal(self, shape: tuple[int, ...], dt: np.dtype, s: int) -> Any:
        u1 = self._uniform(shape, dt, s)
        u2 = self._uniform(shape, dt, s + 1)
        two = dt.type(2)
        radius = _f("sqrt")(-two * _f("log1p")(-u1))     # log(1 - u1): u1 < 1, finite
        return radius * _f("cos")(dt.type(2 * math.pi) * u2)


def _f(name: str) -> Any:
    from ._functions._elementwise import FUNCTIONS
    return FUNCTIONS[name]


def _check_nonnegative(p: Any, name: str) -> None:
    if np.any(np.asarray(p) < 0):       # (NumPy's checks of the values: a lazy one computed)
        raise ValueError(f"{name} < 0")


def _check_range(low: Any, high: Any) -> None:
    with np.errstate(over="ignore", invalid="ignore"):
        span = np.asarray(high) - np.asarray(low)
    if not np.all(np.isfinite(span)):
        raise OverflowError("high - low range exceeds valid bounds")
