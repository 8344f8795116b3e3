"""``la.explain``: the plan of materializing an array, or of a call's first materialization."""
from __future__ import annotations

from typing import Any

from .. import _contract, _devices, _fallback
from .._array import LazyArray
from .._config import config, get_config
from .._materialize import first_materialization, plan
from .._node import Node
from .._operands import operands_of
from .._plan import Plan
from .._program import Program


def explain(x: Any, device: str | None = None) -> Any:
    """The :class:`~lazyarr.Plan` of materializing ``x``: its kernels, inputs and memory
    traffic. Nothing runs (on ``cuda`` not even a GPU is needed: code generation only).

    ``x`` is a pending array, or a function of no arguments whose first materialization
    is planned instead of run; that is how to explain a reduction, which would
    otherwise run as soon as it is written (and an expression on small computed CPU arrays,
    which runs at once: the guide's "Small arrays"):

    >>> import lazyarr as la
    >>> x = la.ones(100_000, dtype=la.float32)
    >>> plan = la.explain(abs(x) * 2)
    >>> plan.bytes_read >= 400_000
    True
    >>> len(la.explain(lambda: la.sum(abs(x) * 2)).kernels) >= 1
    True

    ``device="cuda"`` plans the same expression for the GPU whatever device its data is on
    (code generation only: no GPU needed), e.g. to read the fused CUDA kernel on a laptop:

    >>> print(la.explain(abs(x) * 2, device="cuda").kernels[0].name)
    lazyarr_kernel[map]

    Library calls (``matmul``, ``sort``, ``fft.rfft``...) run when they are written, not
    deferred; those that computed the plan's inputs are its first steps
    (``plan.library_calls``: each with its bytes and, for a matrix product, its FLOPs):

    >>> a = la.ones((64, 32), dtype=la.float32)
    >>> plan = la.explain(lambda: la.sum(la.maximum(a @ a.T + 1, 0)))
    >>> print(plan.library_calls[0])
    library call numpy.matmul: reads 0.016 MiB, writes 0.016 MiB, 0.000 GFLOP
    >>> plan.library_calls[0].flops, len(plan.kernels)
    (262144, 1)
    """
    if device is not None and device not in ("cpu", "cuda"):
        device = _devices.resolve(device)    # "auto" as configured; anything else: ValueError
    mode = get_config().mode                 # the plan is that of the mode in effect
    if callable(x) and not isinstance(x, LazyArray):
        # The function runs in lazy mode, so that its ops are recorded, up to its first
        # materialization (lazyarr/_materialize.py says how it stops there).
        with config(mode="lazy"):
            first = first_materialization(x)
        return _with_library_calls(plan(first, device or first.device or "cpu", mode), first, mode)
    node: Node = operands_of((x._node if isinstance(x, LazyArray) else x,))[0]  # type: ignore[assignment]
    if node.data is not None:
        return Plan("none", node.device or "cpu", Program(()), [], [], 0, 0,
                    ["already materialized: nothing to run", *_fallback.notes(node)],
                    _fallback.library_calls(node))
    return _with_library_calls(plan(node, device or node.device or "cpu", mode), node, mode)


def _with_library_calls(result: Plan, node: Node, mode: str) -> Plan:
    """The plan with the library calls that computed its inputs as its first steps (and,
    for a sum that runs as a matrix product in lazy mode on the CPU, a note saying so)."""
    note = _contract.explain_note(node) if result.device == "cpu" and mode == "lazy" else None
    if note is not None:
        result.notes.append(note)
    result.notes.extend(_fallback.notes(node))
    result.library_calls.extend(_fallback.library_calls(node))
    return result


FUNCTIONS = {"explain": explain}
