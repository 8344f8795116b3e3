"""Run a lowered program's CUDA kernel in Numba's simulator (``NUMBA_ENABLE_CUDASIM=1``).

Exactly the kernel the GPU runs (same :func:`render.analyze` / :func:`render.render`), with
NumPy arrays standing in for device pointers, except that the simulator has no warp shuffles:
the lanes of a row reduce through shared memory there. Used by the CI tests (no GPU).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..._program import Lowered
from . import render as R
from .compile import simulator_kernel


def _pointer(a: np.ndarray) -> np.ndarray:
    """A 1-D array whose element 0 is ``a``'s element 0, spanning every element of ``a``."""
    if a.dtype == np.bool_:
        a = a.view(np.uint8)
    if a.size == 0:
        return np.zeros(1, a.dtype)
    span = 1 + sum((n - 1) * (s // a.itemsize) for n, s in zip(a.shape, a.strides))
    return as_strided(a, shape=(span,), strides=(a.itemsize,))


def _prepare(a: Any) -> np.ndarray:
    a = np.asarray(a)
    if any(s < 0 or s % a.itemsize for s in a.strides):
        a = np.ascontiguousarray(a)
    return a


def run_simulated(lowered: Lowered, sms: int = 2) -> np.ndarray:
    """The materialized root, computed by the simulated kernel."""
    program, root = lowered.program, lowered.program.root
    if root.op in R.FALLBACK_REDUCTIONS:
        raise NotImplementedError(f"{root.op} runs through CuPy on the GPU")
    inputs = [_prepare(a) for a in lowered.inputs]
    geo = R.analyze(program, inputs)
    out = np.empty(lowered.shape, root.dtype)
    if geo.out_size == 0:
        return out
    rendered = R.render(program, geo.spec, shuffles=False)
    kernel = simulator_kernel(rendered)
    grid = geo.grid(sms)
    flat_out = out.reshape(-1).view(np.uint8) if root.dtype == np.bool_ else out.reshape(-1)
    args: list[Any] = []
    for name, kind, dt in rendered.params:
        if name == "out":
            args.append(flat_out)
        elif name == "partials":
            args.append(np.empty(grid, dt))
        elif name == "counter":
            args.append(np.zeros(1, np.uint32))
        elif kind == "ptr":
            args.append(_pointer(inputs[int(name[1:])]))
        elif kind == "scalar":
            args.append(dt.type(lowered.scalars[int(name[1:])]))
        else:
            args.append(np.int64(_size(geo, name)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kernel[grid, geo.spec.block](*args)
    return out


def _size(geo: R.Geometry, name: str) -> int:
    nd = geo.spec.nd
    if name.startswith("st"):
        k, j = map(int, name[2:].split("_"))
        return geo.strides[k][j]
    if name in ("n", "M"):
        return geo.sizes[0]
    if name == "K":
        return geo.sizes[1]
    if name.startswith("dm"):
        return geo.sizes[2 + int(name[2:])]
    if name.startswith("dk"):
        return geo.sizes[2 + nd + int(name[2:])]
    return geo.sizes[1 + int(name[1:])]
