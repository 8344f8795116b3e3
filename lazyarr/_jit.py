"""``la.jit``: trace a function once per signature, then replay its kernels.

A plain call of an array function rebuilds its expression every time: a node per op (~1.5-3 µs
each in Python), the rule lookups, the program lookup. For small arrays that is most of the
call. ``la.jit`` runs the function once for each *signature* of its arguments (types, dtypes,
shapes and devices of the arrays; the values of everything else) while a *tape* records what
the engine does: every kernel it runs (the program, and where each input buffer came from:
an argument, an earlier kernel's result, or a view of one of those) and every view it takes of
an array's memory. A later call with the same signature replays the tape: it gathers the new
arguments' buffers and runs the recorded kernels, building no node at all.

The trace is the function's first call, run as a plain call (its results are the plain
call's), with one difference: 0-d work that a plain call does on the spot with NumPy (a
loop-carried scalar) is built as nodes, so that it is part of a kernel on the tape.

A tape is only valid where re-running the recorded kernels on new buffers is what the
function would do. The engine reports what breaks that; the function then runs as a plain
function for that signature (with one :class:`JitWarning` per function saying why):

* a value read into Python (``float(x)``, ``bool(x)``, ``x.item()``, printing, ``np.asarray``):
  the Python code may branch on it;
* a write into an array (``x[i] = v``, ``x += 1``): it changes memory the replay would not;
* a NumPy/CuPy call through the fallback (``@``, ``np.linalg``, random numbers): not a kernel;
* a kernel input that is none of the above, e.g. an array that is not an argument (a global or
  a closure's: the replay could not see it rebound);
* a result that is not computed by a kernel of the tape (an argument itself, a view of one).

Python scalars, strings, tuples and other hashable non-arrays are part of the signature by
value (``f(x, 2.0)`` and ``f(x, 3.0)`` are two traces), as ``torch.compile`` specializes on
them; pass a 0-d array to vary a value without retracing. Results are computed arrays.
"""
from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _devices, _materialize, _node
from ._array import LazyArray
from ._config import get_config
from ._counters import CounterMap
from ._program import Lowered
from ._stack import user_stacklevel
from ._value import ScalarValue
from .backends import forced_backend, select
from .backends._bind import bound
from ._value_ops import JitBase, setup_jit  # type: ignore[import-not-found]  # compiled

#: Signatures traced per function at most; calls with further signatures run plainly.
MAX_TRACES = 64

class JitWarning(UserWarning):
    """A ``la.jit`` function could not be traced for replay (the message says why); it runs
    as a plain function, with the same results."""


class _CannotReplay(Exception):
    pass


class Tape:
    """What a traced call did, as a replay needs it. Buffers are known by identity while the
    trace runs (the tape keeps every one it has seen alive, so an id is never reused).

    A *source* says where a buffer comes from: an int ``i`` is ``pool[i]`` (the arguments'
    buffers first, then each step's results), a pair ``(source, fn)`` the view ``fn(source)``.
    A step is a kernel run (one result) or a library call through the fallback (its array
    results, in order).
    """

    def __init__(self, buffers: list[Any]) -> None:
        self.source: dict[int, Any] = {id(b): i for i, b in enumerate(buffers)}
        self.alive: list[Any] = list(buffers)
        self.arguments = self.pool_size = len(buffers)
        # (kernel: its Lowered | call: _Call, input sources)
        self.steps: list[tuple[Any, tuple[Any, ...]]] = []
        self.broken: str | None = None

    def cannot_replay(self, reason: str) -> None:
        if self.broken is None:
            self.broken = reason

    def view(self, view: Any, memory: Any, fn: Callable[[Any], Any]) -> None:
        """``view`` is ``fn(memory)``, a view of its memory (lazyarr/_views.py)."""
        source = self.source.get(id(memory))
        if source is not None:
            self.source[id(view)] = (source, fn)
            self.alive.append(view)

    def step(self, lowered: Lowered, result: Any) -> None:
        """A kernel ran: ``lowered`` gave ``result`` (lazyarr/_materialize.py)."""
        inputs = tuple(self.source.get(id(b)) for b in lowered.inputs)
        if None in inputs:
            self.cannot_replay(_FUSED_DRAW if any(type(b) is CounterMap for b in lowered.inputs)
                               else _NOT_AN_ARGUMENT)
            return
        self._results(lowered, inputs, [result])

    def call(self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
             wrapped: Any, wrap: Callable[[Any], Any], path: str) -> None:
        """A library call ran through the fallback (lazyarr/_fallback.py): ``func(*args,
        **kwargs)`` on buffers gave ``wrapped`` (after ``wrap``, which a replay applies too)."""
        inputs: list[Any] = []
        try:
            args_, kwargs_ = _template(args, self, inputs), _template(kwargs, self, inputs)
        except _CannotReplay as exc:
            self.cannot_replay(f"it calls {path} on {exc}")
            return
        outputs = _arrays_of(wrapped)
        if outputs is None:
            self.cannot_replay(f"it reads a value that {path} returned into Python")
            return
        layout = [(b.shape, b.dtype) for b in outputs]
        self._results(_Call(func, args_, kwargs_, wrap, layout, path), tuple(inputs), outputs)

    def _results(self, step: Any, inputs: tuple[Any, ...], results: list[Any]) -> None:
        for r in results:
            self.source.setdefault(id(r), self.pool_size)   # (a call may return its input)
            self.pool_size += 1
        self.steps.append((step, inputs))
        self.alive.extend(results)


_FUSED_DRAW = ("it draws fused random numbers (la.random.default_rng(..., fused=True)): each "
               "call must draw new ones, so its kernels are built again")
_NOT_AN_ARGUMENT = ("a kernel reads an array that is not an argument of the function (pass "
                    "the arrays it reads as arguments)")


class _Slot:
    """Where an input buffer goes in a recorded call's arguments."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


_CONSTANT_TYPES = (bool, int, float, complex, str, slice, bytes, type(None), type(Ellipsis),
                   np.dtype, np.generic, type)


def _template(obj: Any, tape: Tape, inputs: list[Any]) -> Any:
    """``obj`` (a call's arguments, buffers in place of LazyArrays) with each buffer replaced
    by a :class:`_Slot` (its source appended to ``inputs``); _CannotReplay for anything a
    replay could not rebuild (a buffer of unknown origin, a callable, an object)."""
    t = type(obj)
    if t is np.ndarray or hasattr(obj, "__cuda_array_interface__"):
        source = tape.source.get(id(obj))
        if source is None:
            raise _CannotReplay("an array that is not an argument of the function")
        inputs.append(source)
        return _Slot(len(inputs) - 1)
    if t is tuple or t is list:
        return t(_template(item, tape, inputs) for item in obj)
    if t is dict:
        return {key: _template(value, tape, inputs) for key, value in obj.items()}
    if isinstance(obj, _CONSTANT_TYPES):
        return obj
    raise _CannotReplay(f"a {t.__name__} argument")


def _fill(template: Any, buffers: list[Any]) -> Any:
    t = type(template)
    if t is _Slot:
        return buffers[template.i]
    if t is tuple or t is list:
        return t(_fill(item, buffers) for item in template)
    if t is dict:
        return {key: _fill(value, buffers) for key, value in template.items()}
    return template


def _arrays_of(wrapped: Any) -> list[Any] | None:
    """The buffers of a call's results (LazyArrays, in tuples, lists or named tuples), in
    order; None if anything else is among them (a value the caller reads in Python)."""
    if isinstance(wrapped, LazyArray):
        return [wrapped._node.data]
    if isinstance(wrapped, (tuple, list)):
        out: list[Any] = []
        for item in wrapped:
            arrays = _arrays_of(item)
            if arrays is None:
                return None
            out += arrays
        return out
    return None


class _ShapeChanged(Exception):
    """A replayed library call returned arrays of another shape or dtype than at the trace
    (``np.unique``, a mask's ``nonzero``): the recorded kernels after it do not apply."""


class _Call:
    """A recorded library call, replayable on new buffers."""

    __slots__ = ("func", "args", "kwargs", "wrap", "layout", "path")

    def __init__(self, func: Callable[..., Any], args: Any, kwargs: Any, wrap: Callable[[Any], Any],
                 layout: list[tuple[Any, Any]], path: str) -> None:
        self.func, self.args, self.kwargs, self.wrap = func, args, kwargs, wrap
        self.layout, self.path = layout, path

    def __call__(self, buffers: list[Any]) -> list[Any]:
        result = self.func(*_fill(self.args, buffers), **_fill(self.kwargs, buffers))
        outputs = _arrays_of(self.wrap(result))
        if outputs is None or [(b.shape, b.dtype) for b in outputs] != self.layout:
            raise _ShapeChanged(f"{self.path} returned arrays of other shapes or dtypes than when "
                                "the function was traced (a data-dependent shape)")
        return outputs


def _gather(source: Any, pool: list[Any]) -> Any:
    if type(source) is int:
        return pool[source]
    base, fn = source
    return fn(_gather(base, pool))


class _Replay:
    """A tape that can be replayed: its steps, and the function's results."""

    __slots__ = ("steps", "results", "single", "one_kernel")

    def __init__(self, steps: list[Any], results: list[Any], single: bool, arguments: int) -> None:
        # (the backend's runner bound to the kernel, or a _Call; input sources; whether the
        # step gives a list of results)
        self.steps = steps
        # per result: (None, value) of a non-array; (source, device, first) of an array,
        # ``first`` the position of the same array returned earlier (else None)
        self.results = results
        self.single = single
        # the common case, one kernel of the arguments giving the one result: (runner, the
        # arguments it reads, device), run without the general loop
        self.one_kernel = None
        if single and len(steps) == 1 and not steps[0][2] and results[0][0] == arguments \
                and all(type(s) is int for s in steps[0][1]):
            self.one_kernel = (steps[0][0], steps[0][1], results[0][1])

    def __call__(self, pool: list[Any]) -> Any:
        if self.one_kernel is not None:
            run, inputs, device = self.one_kernel
            return LazyArray._from_node(_node.leaf(run([pool[s] for s in inputs]), device))
        for run, inputs, many in self.steps:
            out = run([pool[s] if type(s) is int else _gather(s, pool) for s in inputs])
            if many:
                pool.extend(out)
            else:
                pool.append(out)
        if self.single:
            source, device, _ = self.results[0]
            return LazyArray._from_node(_node.leaf(pool[source], device)) \
                if source is not None else device
        out: list[Any] = []
        nodes: dict[int, Any] = {}
        for source, value, first in self.results:
            if source is None:
                out.append(value)
            elif first is not None:
                out.append(out[first])
            else:       # distinct arrays of one buffer share a leaf: the first to write copies
                node = nodes.get(source)
                if node is None:
                    node = nodes[source] = _node.leaf(pool[source], value)
                out.append(LazyArray._from_node(node))
        return tuple(out)


def _replay_of(tape: Tape, result: Any) -> _Replay:
    """The replay of a finished trace whose function returned ``result`` (or _CannotReplay)."""
    single = type(result) is not tuple
    items = (result,) if single else result
    for item in items:
        if isinstance(item, LazyArray) and item._node.data is None and item._node.op != "scalar":
            _materialize.materialize(item._node)    # a pending result: a kernel of the tape
    if tape.broken is not None:
        raise _CannotReplay(tape.broken)
    results: list[Any] = []
    position: dict[int, int] = {}
    for i, item in enumerate(items):
        if isinstance(item, LazyArray):
            node = item._node
            source = tape.source.get(id(node.data)) if node.data is not None else None
            if type(source) is not int or source < tape.arguments:
                raise _CannotReplay("a result is an argument, a view of one, or not computed "
                                    "by a kernel")
            results.append((source, item.device, position.get(id(item))))
            position.setdefault(id(item), i)
        elif item is None or type(item) in (bool, int, float, complex, str):
            results.append((None, item, None))
        else:
            raise _CannotReplay(f"it returns a {type(item).__name__} (arrays, Python scalars, "
                                "strings and None, alone or in a tuple, can be replayed)")
    steps = [(step, inputs, True) if type(step) is _Call else
             (bound(select(step.device, "lazy"), step), inputs, False)
             for step, inputs in tape.steps]
    return _Replay(steps, results, single, tape.arguments)


# ----------------------------------------------------------------------------- signatures
_UNTRACEABLE = object()   # a signature whose trace could not be replayed: plain calls


def _signature_of(value: Any, buffers: list[Any], ids: list[int]) -> Any:
    """The part of a call's signature ``value`` gives: for an array, what the program depends
    on (and its buffer goes to ``buffers``); for anything else, the value itself (typed, so
    ``1`` and ``1.0`` differ, and ``0.0`` and ``-0.0``). Raises TypeError if unhashable."""
    t = type(value)
    if t is LazyArray or t is ScalarValue:   # (a 0-d value of a loop: an array too)
        t = LazyArray
        node = value._node
        if node.data is None:
            if node.op == "scalar":
                raise TypeError          # a LazyArray over a constant: run it plainly
            _materialize.materialize(node)
        data = node.data
        buffers.append(data)
        ids.append(id(data))
        return (t, node.dtype, node.shape, data.strides, node.device)
    if t is float:
        return (t, value, math.copysign(1.0, value)) if value == value else (t, "nan")
    if t is int or t is bool or t is str or value is None:
        return (t, value)
    if t is np.ndarray or _devices.device_of(value) == "cuda" and hasattr(value, "strides"):
        buffers.append(value)
        ids.append(id(value))
        return (t, value.dtype, value.shape, value.strides)
    if isinstance(value, np.generic) or t is complex:
        return (t, repr(value), np.asarray(value).tobytes())
    hash(value)
    return (t, value)


class Jitted(JitBase):  # type: ignore[misc]  # compiled base: the traces, the call's fast path
    """A function traced once per signature and replayed after (see :func:`jit`)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self._traces: dict[Any, Any] = {}
        self._warned = False

    def __repr__(self) -> str:
        return f"<lazyarr.jit of {self.fn!r}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """As a method: bound to the instance (the instance is an argument like any other)."""
        return self if obj is None else functools.partial(self, obj)

    @property
    def traces(self) -> int:
        """How many signatures were traced for replay."""
        return sum(1 for v in self._traces.values() if v is not _UNTRACEABLE)

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        """A call that JitBase's compiled slot (``__call__``) did not replay by itself:
        keywords, other arguments, a first call (the trace), a trace of several steps."""
        cfg = get_config()
        if cfg.mode != "lazy" or _materialize.tape() is not None or _materialize.stopping():
            return self.fn(*args, **kwargs)   # eager mode, inside another trace, la.explain
        buffers: list[Any] = []
        ids: list[int] = []
        try:
            key: Any = tuple([_signature_of(a, buffers, ids) for a in args])
            if kwargs:
                key += tuple([(k, _signature_of(v, buffers, ids)) for k, v in kwargs.items()])
        except TypeError:                 # an unhashable argument: no signature
            return self.fn(*args, **kwargs)
        if len(ids) > 1 and len(set(ids)) < len(ids):  # one array passed twice: its own trace
            key += (tuple(ids.index(i) for i in ids),)
        key += (cfg.device, forced_backend())
        replay = self._traces.get(key)
        if replay is None:
            return self._trace(key, buffers, args, kwargs)
        if replay is _UNTRACEABLE:
            return self.fn(*args, **kwargs)
        try:
            return replay(buffers)
        except _ShapeChanged as exc:
            self._traces[key] = _UNTRACEABLE
            self._warn(str(exc))
            return self.fn(*args, **kwargs)

    def _trace(self, key: Any, buffers: list[Any], args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:
        if len(self._traces) >= MAX_TRACES:
            self._warn(f"more than {MAX_TRACES} signatures were traced; further ones run plainly")
            return self.fn(*args, **kwargs)
        tape = Tape(buffers)
        with _materialize.tracing(tape):
            result = self.fn(*args, **kwargs)
            try:
                self._traces[key] = _replay_of(tape, result)
            except _CannotReplay as exc:
                self._traces[key] = _UNTRACEABLE
                self._warn(str(exc))
        return result

    def _warn(self, reason: str) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(f"la.jit: {getattr(self.fn, '__qualname__', self.fn)} runs as a plain "
                          f"function: {reason}", JitWarning, stacklevel=user_stacklevel())


def jit(fn: Callable[..., Any] | None = None, /) -> Any:
    """Trace ``fn`` once per signature of its arguments, then replay its kernels.

    The first call with arrays of given dtypes, shapes and devices (and given values of its
    other arguments) runs ``fn`` as usual while lazyarr records the kernels it runs; later
    calls with the same signature run those kernels on the new arrays without running
    ``fn``'s Python code: no expression is rebuilt, which is most of the cost of a call on
    small arrays. ``fn`` must be a function of its arguments: the arrays it reads are its
    arguments, it writes into none, reads no value into Python and calls no function that
    lazyarr runs through NumPy (``@``, ``np.linalg``...). Where it does, it runs as a plain
    function (the same results) and a :class:`JitWarning` says why. Results are computed
    arrays. In eager mode ``fn`` runs as it is.

    >>> import lazyarr as la
    >>> @la.jit
    ... def energy(x, y):
    ...     return la.sum(la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y)
    >>> x = la.linspace(0, 1, 1024, dtype=la.float32)
    >>> y = la.ones(1024, dtype=la.float32)
    >>> round(float(energy(x, y)), 3)          # traced
    -374.028
    >>> round(float(energy(x * 2, y)), 3)      # replayed: same dtypes and shapes
    92.642
    >>> energy.traces
    1
    """
    if fn is None:
        return jit
    return Jitted(fn)


setup_jit(_Replay)
