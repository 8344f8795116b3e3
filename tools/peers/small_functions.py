"""Per-call overhead of common non-ufunc functions (``where``, ``concatenate``, ``reshape``,
``flip``, ``clip``, ``mean`` ...) on small computed CPU float64 arrays (1,024 and 16
elements), as Python loops of real scripts call them, against NumPy's own call on the same
data. Each row: the median time of one call (back to back, a few hundred calls), NumPy's and
lazyarr's alternated in each round; the row's number is the median over the rounds. One
process prints a table (µs, lazyarr/NumPy) and, with ``--json``, one JSON line::

    python tools/peers/small_functions.py [ROUNDS] [--only NAME;...] [--size N] [--json]
    python tools/peers/small_functions.py --profile NAME [--size N]   # cProfile of lazyarr's call
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import lazyarr as la
from small_calls import alternated_medians, print_ratios, profile_calls  # noqa: E402  # (this folder is on sys.path: run as a script)


def _inputs(n: int) -> dict[str, Any]:
    rng = np.random.default_rng(n)
    side = int(round(n ** 0.5))
    x = rng.standard_normal(n)
    return {"x": x, "y": rng.standard_normal(n), "c": x > 0,
            "m": rng.standard_normal((side, n // side)),       # 32x32 (4x4)
            "col": rng.standard_normal((n, 1)),
            "i": rng.integers(0, n, n // 4), "s": side}


# name: (call of a namespace ``m`` (numpy or lazyarr) and its operands, operand keys...)
_CASES: dict[str, tuple] = {
    "where(c,x,y)": (lambda m, c, x, y: m.where(c, x, y), "c", "x", "y"),
    "where(c,x,0.0)": (lambda m, c, x: m.where(c, x, 0.0), "c", "x"),
    "where(c)": (lambda m, c: m.where(c), "c"),
    "concatenate": (lambda m, x, y: m.concatenate([x, y]), "x", "y"),
    "stack": (lambda m, x, y: m.stack([x, y]), "x", "y"),
    "hstack": (lambda m, x, y: m.hstack([x, y]), "x", "y"),
    "vstack": (lambda m, x, y: m.vstack([x, y]), "x", "y"),
    "reshape": (lambda m, x, s: m.reshape(x, (s, -1)), "x", "s"),
    "x.reshape": (lambda m, x, s: x.reshape(s, -1), "x", "s"),
    "ravel": (lambda m, a: m.ravel(a), "m"),
    "transpose": (lambda m, a: m.transpose(a), "m"),
    ".T": (lambda m, a: a.T, "m"),
    "swapaxes": (lambda m, a: m.swapaxes(a, 0, 1), "m"),
    "moveaxis": (lambda m, a: m.moveaxis(a, 0, -1), "m"),
    "expand_dims": (lambda m, x: m.expand_dims(x, 0), "x"),
    "squeeze": (lambda m, a: m.squeeze(a), "col"),
    "flip": (lambda m, x: m.flip(x), "x"),
    "roll": (lambda m, x: m.roll(x, 3), "x"),
    "tile": (lambda m, x: m.tile(x, 2), "x"),
    "repeat": (lambda m, x: m.repeat(x, 2), "x"),
    "clip": (lambda m, x: m.clip(x, -0.5, 0.5), "x"),
    "astype": (lambda m, x: x.astype(m.float32), "x"),
    "zeros_like": (lambda m, x: m.zeros_like(x), "x"),
    "ones_like": (lambda m, x: m.ones_like(x), "x"),
    "empty_like": (lambda m, x: m.empty_like(x), "x"),
    "full_like": (lambda m, x: m.full_like(x, 2.5), "x"),
    "copy": (lambda m, x: m.copy(x), "x"),
    "diff": (lambda m, x: m.diff(x), "x"),
    "outer": (lambda m, x: m.outer(x[:32], x[:32]), "x"),
    "tril": (lambda m, a: m.tril(a), "m"),
    "triu": (lambda m, a: m.triu(a), "m"),
    "take": (lambda m, x, i: m.take(x, i), "x", "i"),
    "take_along_axis": (lambda m, x, i: m.take_along_axis(x, i, axis=0), "x", "i"),
    "isclose": (lambda m, x, y: m.isclose(x, y), "x", "y"),
    "allclose": (lambda m, x, y: m.allclose(x, y), "x", "y"),
    "argmax": (lambda m, x: m.argmax(x), "x"),
    "argmin": (lambda m, x: m.argmin(x), "x"),
    "any": (lambda m, c: m.any(c), "c"),
    "all": (lambda m, c: m.all(c), "c"),
    "mean": (lambda m, x: m.mean(x), "x"),
    "std": (lambda m, x: m.std(x), "x"),
    "var": (lambda m, x: m.var(x), "x"),
    "sqrt(abs) (ref)": (lambda m, x: m.sqrt(m.abs(x)), "x"),
    "sum (ref)": (lambda m, x: m.sum(x), "x"),
}


def _bound(name: str, size: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
    fn, *keys = _CASES[name]
    data = _inputs(size)
    host = [data[k] for k in keys]
    # computed CPU LazyArrays (``la.asarray`` of NumPy data is computed; ints pass through)
    lazy = [la.asarray(d) if isinstance(d, np.ndarray) else d for d in host]
    return (lambda: fn(np, *host)), (lambda: fn(la, *lazy))


def measure(rounds: int = 5, only: list[str] | None = None,
            size: int = 1024) -> dict[str, tuple[float, float]]:
    names = only or list(_CASES)
    bound = {name: _bound(name, size) for name in names}
    return alternated_medians(bound, rounds)


def main(argv: list[str]) -> None:
    size = int(argv[argv.index("--size") + 1]) if "--size" in argv else 1024
    if argv[:1] == ["--profile"]:
        _, lazy_call = _bound(argv[1], size)
        profile_calls(lazy_call, "/tmp/small_functions.prof")
        return
    rounds = int(argv[0]) if argv and argv[0].isdigit() else 5
    only = argv[argv.index("--only") + 1].split(";") if "--only" in argv else None
    result = measure(rounds, only, size)
    print(f"{size} float64 elements")
    print_ratios(result, 20, "--json" in argv)


if __name__ == "__main__":
    main(sys.argv[1:])
