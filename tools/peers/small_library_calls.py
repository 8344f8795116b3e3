"""Small library calls on computed CPU arrays: ``la.linalg.inv``/``solve``/``det``/
``cholesky``/``qr``/``eigh``/``svd``/``norm`` of 4x4 and 32x32 float64 matrices, small
products, ``cumsum`` and ``sort``, each against NumPy's own call on the same data (NPBench's
``lu``, ``cholesky``, ``ludcmp``, ``gramschmidt`` call such functions once an iteration, so
the per-call overhead is what counts). Each row: the median time of one call (back to back,
a few hundred calls), NumPy's and lazyarr's alternated in each round; the row's number is the
median over the rounds. One process prints a table (µs) and, with ``--json``, one JSON line::

    python tools/peers/small_library_calls.py [ROUNDS] [--only NAME,...] [--json]
    python tools/peers/small_library_calls.py --profile NAME     # cProfile of lazyarr's call

OpenBLAS's threads are kept to one (a 2-core machine: their spinning takes the timed core).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")    # (before NumPy loads OpenBLAS)
import numpy as np  # noqa: E402

import lazyarr as la  # noqa: E402
from small_calls import alternated_medians, print_ratios, profile_calls  # noqa: E402  # (this folder is on sys.path: run as a script)


def _inputs(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n))
    spd = a @ a.T + n * np.eye(n)
    return {"a": a + n * np.eye(n), "spd": spd, "b": rng.standard_normal(n),
            "v": rng.standard_normal(16)}


def _cases() -> dict[str, tuple[Callable[[Any], Any], str, str]]:
    """name: (call of a namespace ``m`` (numpy or lazyarr) and its operands, operand keys...)"""
    cases: dict[str, Any] = {}
    for n in (4, 32):
        cases.update({
            f"linalg.inv {n}": (lambda m, a: m.linalg.inv(a), n, "a"),
            f"linalg.solve {n}": (lambda m, a, b: m.linalg.solve(a, b), n, "a", "b"),
            f"linalg.det {n}": (lambda m, a: m.linalg.det(a), n, "a"),
            f"linalg.cholesky {n}": (lambda m, a: m.linalg.cholesky(a), n, "spd"),
            f"linalg.qr {n}": (lambda m, a: m.linalg.qr(a), n, "a"),
            f"linalg.eigh {n}": (lambda m, a: m.linalg.eigh(a), n, "spd"),
            f"linalg.svd {n}": (lambda m, a: m.linalg.svd(a), n, "a"),
            f"linalg.norm {n}": (lambda m, a: m.linalg.norm(a), n, "a"),
            f"dot {n}": (lambda m, a, b: m.dot(a, b), n, "a", "b"),
            f"matmul {n}": (lambda m, a: m.matmul(a, a), n, "a"),
        })
    cases.update({
        "cumsum 16": (lambda m, v: m.cumsum(v), 4, "v"),
        "sort 16": (lambda m, v: m.sort(v), 4, "v"),
        "outer 16": (lambda m, v: m.outer(v, v), 4, "v"),
    })
    return cases


def _bound(name: str) -> tuple[Callable[[], Any], Callable[[], Any]]:
    fn, n, *keys = _cases()[name]
    data = _inputs(n)
    host = [data[k] for k in keys]
    lazy = [la.asarray(d) for d in host]        # computed CPU LazyArrays
    return (lambda: fn(np, *host)), (lambda: fn(la, *lazy))


def measure(rounds: int = 5, only: list[str] | None = None) -> dict[str, tuple[float, float]]:
    names = only or list(_cases())
    bound = {name: _bound(name) for name in names}
    return alternated_medians(bound, rounds)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--profile"]:
        _, lazy_call = _bound(argv[1])
        profile_calls(lazy_call, "/tmp/small_library_calls.prof")
        return
    rounds = int(argv[0]) if argv and argv[0].isdigit() else 5
    only = argv[argv.index("--only") + 1].split(",") if "--only" in argv else None
    result = measure(rounds, only)
    print_ratios(result, 22, "--json" in argv)


if __name__ == "__main__":
    main(sys.argv[1:])
