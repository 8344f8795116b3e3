"""What a materialization will do, described without running it (``la.explain``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._program import Program


@dataclass(frozen=True)
class Kernel:
    """One kernel launch (or, for op-by-op backends, one library call)."""

    name: str
    source: str
    launch: str = ""


@dataclass(frozen=True)
class InputInfo:
    shape: tuple[int, ...]
    dtype: np.dtype
    nbytes: int
    view: str = ""      # for a view of other memory: its strides and offset, in elements

    @classmethod
    def of(cls, buffer: Any) -> InputInfo:
        return cls(tuple(buffer.shape), buffer.dtype, int(buffer.nbytes), _view_of(buffer))

    def __str__(self) -> str:
        return f"shape={self.shape} dtype={self.dtype}" + (f", {self.view}" if self.view else "")


def _pointer(a: Any) -> int:
    face = getattr(a, "__cuda_array_interface__", None) or a.__array_interface__
    return int(face["data"][0])


def _view_of(buffer: Any) -> str:
    """``view of a (shape) buffer, strides (...), offset k`` for an array that views another's
    memory (a basic index); "" for an array that owns its memory."""
    base = getattr(buffer, "base", None)
    if base is None or not hasattr(base, "shape"):
        return ""
    while getattr(base, "base", None) is not None and hasattr(base.base, "shape"):
        base = base.base
    item = buffer.dtype.itemsize
    strides = tuple(s // item for s in buffer.strides)
    try:
        offset = f", offset {(_pointer(buffer) - _pointer(base)) // item}"
    except (AttributeError, KeyError, TypeError):
        offset = ""
    return f"view of a {tuple(base.shape)} buffer, strides {strides}{offset}"


@dataclass(frozen=True)
class Plan:
    """The plan of one materialization: returned by :func:`lazyarr.explain`.

    ``kernels`` has one entry per kernel launch; ``bytes_read`` and ``bytes_written``
    count the device-memory traffic those launches need (each buffer each time it
    is read or written).
    """

    backend: str
    device: str
    program: Program
    kernels: list[Kernel]
    inputs: list[InputInfo]
    bytes_read: int
    bytes_written: int
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        mib = 1 << 20
        head = (f"Plan: {len(self.kernels)} kernel launch(es) on {self.device} "
                f"[{self.backend}], reads {self.bytes_read / mib:.3f} MiB, "
                f"writes {self.bytes_written / mib:.3f} MiB")
        lines = [head, "inputs:"]
        lines += [f"  {i}: {x}" for i, x in enumerate(self.inputs)]
        lines += ["program:"] + ["  " + ln for ln in str(self.program).splitlines()]
        for k in self.kernels:
            lines.append(f"kernel {k.name}" + (f" <<<{k.launch}>>>" if k.launch else "") + ":")
            lines += ["  " + ln for ln in k.source.splitlines()]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)
