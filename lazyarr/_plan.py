"""What a materialization will do, described without running it (``la.explain``)."""
from __future__ import annotations

import itertools
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


@dataclass(frozen=True, eq=False)
class LibraryCall:
    """A library call (NumPy's/CuPy's: ``matmul``, ``sort``, ``fft.rfft``...) that computed an
    input of a plan: it ran when it was written (library calls are not deferred), so its
    numbers are those of the call made. ``bytes_read``: its array operands' bytes;
    ``bytes_written``: its array results'; ``flops``: the multiply-adds of a matrix product
    counted twice (``2 m n k``), None for other calls."""
    name: str
    bytes_read: int
    bytes_written: int
    flops: int | None = None

    def __str__(self) -> str:
        mib = 1 << 20
        flops = f", {self.flops / 1e9:.3f} GFLOP" if self.flops is not None else ""
        return (f"library call numpy.{self.name}: reads {self.bytes_read / mib:.3f} MiB, "
                f"writes {self.bytes_written / mib:.3f} MiB{flops}")


#: A leaf a library call computed holds that call's record in ``node.origin``: ``(name, bytes
#: read, bytes written, flops, order)``, made a LibraryCall when ``la.explain`` asks (a loop's
#: ``a @ b`` pays a tuple and a field, not a dataclass and a weak dictionary's entry); one
#: record for every result of one call
call_order = itertools.count()
_PRODUCTS = frozenset({"matmul", "dot"})


def _arrays(obj: Any) -> list[Any]:
    """The arrays (NumPy's, CuPy's) among ``obj``, also inside lists, tuples and dicts."""
    if type(obj) is np.ndarray:
        return [obj]
    if not isinstance(obj, type) and hasattr(obj, "nbytes") and hasattr(obj, "shape"):
        return [obj]         # (not a class: np.float32 has ``nbytes``/``shape`` descriptors)
    if isinstance(obj, (list, tuple)):
        return [a for item in obj for a in _arrays(item)]
    if isinstance(obj, dict):
        return [a for item in obj.values() for a in _arrays(item)]
    return []


def array_bytes(obj: Any) -> int:
    """The bytes of the arrays among ``obj`` (:func:`library_call`'s count of a call's
    results), an array's at once."""
    if type(obj) is np.ndarray:
        return int(obj.nbytes)
    if isinstance(obj, tuple) and all([type(a) is np.ndarray for a in obj]):
        return sum([int(a.nbytes) for a in obj])
    return sum(int(a.nbytes) for a in _arrays(obj))


def call_record(path: str, bytes_read: int, bytes_written: int,
                flops: int | None = None) -> tuple[Any, ...]:
    """The record of one call of ``numpy.<path>`` (``Node.origin``), numbered in call order."""
    return (path, bytes_read, bytes_written, flops, next(call_order))


def with_flops(record: tuple[Any, ...], flops: int) -> tuple[Any, ...]:
    """A call's record (:func:`call_record`) with its FLOP count set to ``flops``: a library
    call lazyarr counts itself (a factorization, a search), made after the call's record."""
    return (*record[:3], flops, *record[4:])


def library_call(path: str, operands: Any, result: Any) -> tuple[Any, ...]:
    """The record of one call of ``numpy.<path>`` on ``operands`` (buffers) giving ``result``
    (``Node.origin``)."""
    ins, outs = _arrays(operands), _arrays(result)
    flops = None
    if path in _PRODUCTS and ins and outs:
        k = ins[0].shape[-1] if ins[0].ndim else 1
        flops = 2 * int(outs[0].size) * int(k)
    return call_record(path, sum(int(a.nbytes) for a in ins), sum(int(a.nbytes) for a in outs),
                       flops)


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
    is read or written). ``library_calls`` lists the library calls (``matmul``, ``sort``...)
    that computed its inputs, with their bytes and, for matrix products, FLOPs: the steps
    that ran before the kernels.
    """

    backend: str
    device: str
    program: Program
    kernels: list[Kernel]
    inputs: list[InputInfo]
    bytes_read: int
    bytes_written: int
    notes: list[str] = field(default_factory=list)
    #: the library calls that computed this plan's inputs (run before it), in the order run
    library_calls: list[LibraryCall] = field(default_factory=list)

    def __str__(self) -> str:
        mib = 1 << 20
        head = (f"Plan: {len(self.kernels)} kernel launch(es) on {self.device} "
                f"[{self.backend}], reads {self.bytes_read / mib:.3f} MiB, "
                f"writes {self.bytes_written / mib:.3f} MiB")
        if self.library_calls:
            head = f"{len(self.library_calls)} library call(s), then {head[6:]}"
            head = "Plan: " + head
        lines = [head]
        lines += [f"step {i}: {c}" for i, c in enumerate(self.library_calls)]
        lines += ["inputs:"]
        lines += [f"  {i}: {x}" for i, x in enumerate(self.inputs)]
        lines += ["program:"] + ["  " + ln for ln in str(self.program).splitlines()]
        for k in self.kernels:
            lines.append(f"kernel {k.name}" + (f" <<<{k.launch}>>>" if k.launch else "") + ":")
            lines += ["  " + ln for ln in k.source.splitlines()]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)
