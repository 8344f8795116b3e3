"""The fallback: every NumPy name lazyarr has no fused implementation of still works.

A fallback call computes its LazyArray operands (also those nested in lists, tuples and
dicts), calls the function of the same name in NumPy (cpu) or CuPy (cuda), and wraps the
array results as computed LazyArrays on the same device. It is not fused: it costs the library
call plus the materialization of each pending operand. It serves

* ``lazyarr.<name>`` and the namespaces ``lazyarr.linalg``, ``lazyarr.fft``, ``lazyarr.random``,
  ... (:func:`attribute`, through the package's module ``__getattr__``);
* ``numpy.<name>(lazy, ...)`` (:func:`array_function`, :func:`array_ufunc`, called by
  ``LazyArray.__array_function__``/``__array_ufunc__``), so libraries that call NumPy on lazyarr
  arrays work; arrays of other libraries with their own dispatch are left to it;
* ndarray methods and attributes ``LazyArray`` has no native form of (:func:`method`, through
  ``LazyArray.__getattr__``), and the operators ``@`` and ``divmod`` (LazyArray calls these
  through lazyarr/_dispatch.py, where this module registers them).

Results: NumPy/CuPy arrays and NumPy scalars of a dtype lazyarr holds become LazyArrays (a
scalar a 0-d one); tuples and lists of them keep their type; everything else (Python numbers
and bools, dtypes, strings, arrays of dtypes lazyarr does not hold) is returned as the library
returns it. Each wrapped result remembers the function that made it (:func:`origin_of`,
shown by ``la.explain``). ``la.config(fallback="warn" | "error")`` makes every fallback call
warn or raise. Writing functions (``copyto``, ``put``, ``ufunc.at``, ``out=``, ``x.sort()``)
write into the LazyArray's memory, as the in-place operators do (docs/guide.rst).
"""
from __future__ import annotations

import functools
import operator
import types
import warnings
from typing import Any

import numpy as np

from . import _cupy_gaps, _devices, _dispatch, _materialize, _node, _operands, _views, _writes
from ._array import LazyArray
from ._config import get_config
from ._dtypes import SUPPORTED_DTYPES
from ._materialize import DEFERRING, computing_is_deferred, materialize_into, select, tape
from ._node import Node
from ._plan import _PRODUCTS, LibraryCall, array_bytes, call_order, call_record, with_flops
from ._plan import library_call as _library_call
from ._program import lower_cached
from ._stack import user_stacklevel
from ._value_ops import computed_product, setup_library_calls  # type: ignore[import-not-found]
from .backends._cpu_vm import result_pool_call  # type: ignore[import-not-found]

_SUPPORTED = frozenset(SUPPORTED_DTYPES)


class FallbackWarning(UserWarning):
    """A call ran through the NumPy/CuPy fallback (``la.config(fallback="warn")``)."""


class FallbackError(TypeError):
    """A call would run through the NumPy/CuPy fallback (``la.config(fallback="error")``)."""


#: NumPy names that make no sense for lazyarr, each with the reason (``lazyarr.<name>`` raises
#: AttributeError with it; ``numpy.<name>(lazy)`` still works where NumPy converts its argument).
UNSUPPORTED: dict[str, str] = {
    "ctypeslib": "it makes ctypes pointers into host memory, and a LazyArray may be pending or "
                 "on the GPU: use numpy.ctypeslib on x.to_numpy()",
    "f2py": "it builds Fortran extension modules; it does not compute on arrays",
    "core": "numpy.core is NumPy's private, deprecated implementation module",
    "ma": "masked arrays are an ndarray subclass carrying a mask, which lazyarr does not have: "
          "use numpy.ma on x.to_numpy()",
    "char": "it works on string arrays, a dtype lazyarr does not hold",
    "strings": "it works on string arrays, a dtype lazyarr does not hold",
    "rec": "record arrays have structured dtypes, which lazyarr does not hold",
    "recarray": "record arrays have structured dtypes, which lazyarr does not hold",
    "record": "record scalars have structured dtypes, which lazyarr does not hold",
    "matrix": "numpy.matrix is a deprecated ndarray subclass whose * is a matrix product; "
              "lazyarr arrays are plain arrays (use @)",
    "asmatrix": "numpy.matrix is a deprecated ndarray subclass; lazyarr arrays are plain arrays",
    "bmat": "numpy.matrix is a deprecated ndarray subclass; lazyarr arrays are plain arrays",
    "memmap": "a memory-mapped file is a buffer written in place; open it with numpy.memmap "
              "and wrap it with la.asarray",
}

#: Submodules served as NumPy's own (they hold exceptions, types and type hints, no functions
#: of arrays).
_PASSTHROUGH_MODULES = ("exceptions", "dtypes", "typing")

#: ndarray methods that write into the array: run on a copy, the LazyArray then rebound to it.
_WRITING_METHODS = frozenset({"sort", "partition", "fill", "put", "resize", "setfield",
                              "itemset"})
_UNSUPPORTED_METHODS = {
    "setflags": "a LazyArray's buffer flags belong to lazyarr (it may be pending or shared)",
    "data": "LazyArray.data is the NumPy/CuPy buffer, not a memoryview",
}
#: Functions that write into an argument (its position): run on a copy, then rebound.
_WRITTEN_ARGUMENT = {"copyto": 0, "put": 0, "place": 0, "putmask": 0, "fill_diagonal": 0,
                     "put_along_axis": 0, "random.shuffle": 0}

def origin_of(node: Node) -> str | None:
    """The fallback function that computed this node's buffer, if one did."""
    call = node.origin
    return None if call is None else call[0]  # type: ignore[no-any-return]


def library_calls(root: Node) -> list[LibraryCall]:
    """``la.explain``'s steps: the library calls that computed arrays of this DAG, in the
    order they ran (each once, also where it made several results)."""
    found: dict[int, tuple[Any, ...]] = {}
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        call = node.origin
        if call is not None:
            found[id(call)] = call
        stack.extend(node.src)
    return [LibraryCall(*call[:4]) for call in sorted(found.values(), key=lambda c: c[4])]


def notes(root: Node) -> list[str]:
    """``la.explain``'s notes on the arrays of this DAG that a fallback call computed."""
    found, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        origin = origin_of(node)
        if origin is not None:
            what = "this array" if node is root else f"an input {node.dtype}{list(node.shape)}"
            found.append(f"{what} was computed by the fallback numpy.{origin} "
                         "(NumPy/CuPy, not fused)")
        stack.extend(node.src)
    return found


# ------------------------------------------------------------------------------ the call
def policy(name: str) -> bool:
    """Warn or raise, as ``la.config(fallback=...)`` asks, about a call of NumPy's ``name``;
    True where it allows the call silently ("allow")."""
    policy = get_config().fallback
    if policy == "allow":
        return True
    message = (f"lazyarr.{name} has no fused implementation: it runs through the NumPy/CuPy "
               "fallback (operands computed, not fused)")
    if policy == "error":
        raise FallbackError(message + "; la.config(fallback='allow') permits it")
    warnings.warn(message, FallbackWarning, stacklevel=user_stacklevel())
    return False


def _walk(obj: Any, seen: list[LazyArray]) -> None:
    if isinstance(obj, LazyArray):
        seen.append(obj)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _walk(item, seen)
    elif isinstance(obj, dict):
        for item in obj.values():
            _walk(item, seen)


def _device(args: Any, kwargs: dict[str, Any]) -> str | None:
    """The device of the LazyArrays among the arguments, None if there are none."""
    found: list[LazyArray] = []
    _walk(args, found)
    _walk(kwargs, found)
    devices = {a.device for a in found}
    if len(devices) > 1:
        raise ValueError(f"operands are on different devices ({' and '.join(sorted(devices))}); "
                         "move one explicitly with la.asarray(x, device=...)")
    return devices.pop() if devices else None


def _buffers(obj: Any) -> Any:
    """``obj`` with every LazyArray (also inside lists, tuples, dicts) replaced by its memory,
    owned by that array from now on and given to its pushed-down views first
    (``_views.claim``, ``anchor``): a result of the call that views the memory (``np.split``,
    ``x.view()``, ``np.ascontiguousarray``) is then a view of the array, which its writes
    and the array's other views see, as NumPy's."""
    if isinstance(obj, LazyArray):
        if obj._node.op == "scalar" or obj._node.data is None or obj._node.owner is None:
            _views.anchor(obj)
            return _views.claim(obj)
        return obj.data
    if type(obj) in (list, tuple):
        return type(obj)(_buffers(item) for item in obj)
    if isinstance(obj, dict):
        return {key: _buffers(value) for key, value in obj.items()}
    return obj


def resolve(module: Any, path: str) -> Any:
    obj = module
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _library_function(path: str, device: str | None, numpy_func: Any) -> tuple[Any, str]:
    """The function to call (NumPy's or CuPy's) and the device its array results live on."""
    if device != "cuda":
        target = _devices.resolve(None) if device is None else device
        if target == "cuda":   # no array operand: creation functions make cuda arrays
            try:
                return resolve(_devices.xp("cuda"), path), "cuda"
            except AttributeError:   # CuPy lacks it: NumPy's, results moved to the GPU
                return numpy_func, "cuda"
        return numpy_func, "cpu"
    xp = _devices.xp("cuda")
    if path in _cupy_gaps.FUNCTIONS:     # CuPy lacks it or differs: NumPy's, with CuPy's functions
        return functools.partial(_cupy_gaps.FUNCTIONS[path], xp), "cuda"
    try:
        return resolve(xp, path), "cuda"
    except AttributeError:
        raise TypeError(f"numpy.{path} has no CuPy counterpart (cupy.{path}), so lazyarr "
                        "cannot run it on cuda arrays; move them with "
                        "la.asarray(x, device='cpu')") from None


def _wrap(result: Any, device: str, origin: str, operands: Any = (),
          call: tuple[Any, ...] | None = None) -> Any:
    """Array results as computed LazyArrays on ``device``; the rest as it is. Each remembers
    the call that made it (``origin`` of ``operands``, the buffers it was given)."""
    if device == "cpu" and type(result) is np.ndarray and result.dtype in _SUPPORTED:
        out = LazyArray._from_node(_node.leaf(result, "cpu"))    # (a loop's ``a @ b``)
        out._node.origin = call or _library_call(origin, operands, result)
        return out
    if isinstance(result, np.generic) and result.dtype in _SUPPORTED:
        result = np.asarray(result)
    is_array = isinstance(result, np.ndarray) or _devices.device_of(result) == "cuda"
    if is_array and getattr(result, "dtype", None) in _SUPPORTED:
        if device == "cuda" and not _devices.is_cupy_array(result):
            result = _devices.asarray("cuda", result)   # (CuPy's asarray of its own: ~8 µs)
        out = LazyArray._from_node(_node.leaf(result, device))
        out._node.origin = call or _library_call(origin, operands, result)
        return out
    if type(result) in (tuple, list) or (isinstance(result, tuple) and hasattr(result, "_fields")):
        call = call or _library_call(origin, operands, result)
    if type(result) in (tuple, list):
        return type(result)(_wrap(item, device, origin, call=call) for item in result)
    if isinstance(result, tuple) and hasattr(result, "_fields"):    # a named tuple (linalg)
        return type(result)(*(_wrap(item, device, origin, call=call) for item in result))
    return result


def call(path: str, numpy_func: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
         written: int | None = None) -> Any:
    """Run ``numpy.<path>`` (or ``cupy.<path>``) on computed operands; wrap its results.

    ``written``: the position of an argument the function writes into. A LazyArray written
    (there or as ``out=``) is written in its memory, as NumPy does: views of it see the
    write and pending expressions that read it keep the old values (lazyarr/_writes.py).
    """
    # (another policy than "allow": the general path, as computed_buffers says)
    if policy(path) and written is None and tape() is None:
        buffers = _computed_call_buffers(args, kwargs)
        if buffers is not None and path not in _PRODUCTS:     # (products: their FLOPs)
            read = tuple([b for b in buffers if type(b) is np.ndarray])
            return wrap_computed(path, call_computed_memory(numpy_func, buffers, kwargs, read),
                                 read)
    func, result_device = _library_function(path, _device(args, kwargs), numpy_func)
    return run(path, func, result_device, args, kwargs, written)


#: argument types the computed fast path of :func:`call` passes as they are
_PLAIN_VALUES = frozenset({int, float, complex, bool, str, type(None)})


def _computed_call_buffers(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    """:func:`run`'s arguments for :func:`call` (a loop's ``la.take(x, i)`` on small
    computed arrays) in the common case, without its walks over nested arguments: every
    positional argument a computed CPU LazyArray (its memory, claimed as :func:`_buffers`
    claims it) or a plain Python value, at least one LazyArray, every keyword's value a plain
    Python value (so no ``out=``). None otherwise. The call, its results, their record and
    aliasing are then :func:`run`'s (``_device`` is "cpu", the function NumPy's own)."""
    for v in kwargs.values():
        if type(v) not in _PLAIN_VALUES:
            return None
    out = []
    found = False
    for x in args:
        if type(x) is LazyArray:
            node = x._node
            data = node.data
            if type(data) is not np.ndarray or node.device != "cpu":
                return None
            # (owned memory as it is; else the claim of _buffers)
            out.append(data if node.owner is not None and node.op != "scalar" else None)
            found = True
        elif type(x) in _PLAIN_VALUES:
            out.append(x)
        else:
            return None
    if not found:
        return None
    for i, x in enumerate(args):
        if out[i] is None and type(x) is LazyArray:
            out[i] = _buffers(x)
    return tuple(out)


def call_computed(path: str, numpy_func: Any, *args: Any) -> Any:
    """:func:`call` of ``numpy_func`` on computed CPU LazyArrays only, the common case of a
    loop's ``a @ b`` or ``np.dot(a, b)``, without the general walk over the arguments: NumPy's
    call on their buffers, its result wrapped. None (nothing called) when an argument is
    anything else, the policy is not "allow", or a call is explained or traced. (Two
    operands: compiled, ``_value_ops.computed_product``.)"""
    if len(args) == 2:
        out = computed_product(path, numpy_func, *args)
        return out if out is not None else _computed_product_cuda(path, *args)
    for x in args:
        if type(x) is not LazyArray:
            return None
        node = x._node
        if node.data is None or node.device != "cpu":
            return None
    if get_config().fallback != "allow" or computing_is_deferred():
        return None
    buffers = [x._node.data for x in args]
    return _wrap(numpy_func(*buffers), "cpu", path, buffers)


def computed_memory(items: Any) -> list[np.ndarray] | None:
    """The memory of ``items`` (a list or tuple) where each is a computed CPU LazyArray (a
    NumPy array) and no call is explained or traced (every step must go through :func:`run`
    then); None otherwise. (Loops, not comprehensions, here and below: a comprehension is a
    call, ~0.5 µs.)"""
    buffers = []
    for x in items:
        if type(x) is not LazyArray:
            return None
        node = x._node
        data = node.data
        if type(data) is not np.ndarray or node.device != "cpu":
            return None
        buffers.append(data)
    if DEFERRING and computing_is_deferred():
        return None
    return buffers


def computed_buffers(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """:func:`computed_memory` of ``args``, for a library call that only reads its operands
    and makes new arrays (:func:`run_computed`), where ``la.config(fallback=)`` is "allow"
    (else the policy must speak). The memory is read as it is, not claimed
    (:func:`_buffers`): no result views it."""
    if get_config().fallback != "allow":
        return None
    buffers = computed_memory(args)
    return None if buffers is None else tuple(buffers)


def computed_on_cuda(x: Any) -> Any:
    """The memory of ``x`` where it is a computed cuda LazyArray that a library call reading
    it and making new arrays (CuPy's ``sort``, ``argsort``, ``cumsum``, ``unique``) may run on
    at once: ``la.config(fallback=)`` "allow" and nothing explained or traced. CuPy's array
    (NumPy's on the simulated device), read as it is, not claimed (:func:`computed_buffers`'
    rule: no result views it). None otherwise: the general :func:`call` then. Its walks over
    the arguments, the function's lookup and the record's walk were ~60 % of the host time
    of ``la.cumsum`` of a computed cuda array (simulator, docs/notes/gpu.rst 2026-12-08)."""
    if type(x) is not LazyArray:
        return None
    node = x._node
    data = node.data
    if data is None or node.device != "cuda" or node.op == "scalar" \
            or get_config().fallback != "allow" or DEFERRING and computing_is_deferred():
        return None
    return data


def wrapped_on_cuda(result: Any, path: str, bytes_read: int = 0) -> Any:
    """:func:`wrapped` of a cuda library call's ``result`` that read ``bytes_read`` bytes of
    array operands: the same LazyArrays and record as :func:`_wrap` makes, an array of the
    device's at once (a CuPy array: no ``_wrap`` tests, no record walk)."""
    if _devices.is_cupy_array(result) and result.dtype in _SUPPORTED:
        out = LazyArray._from_node(_node.leaf(result, "cuda"))
        out._node.origin = call_record(path, bytes_read, result.nbytes)
        return out
    return _wrap(result, "cuda", path, call=call_record(path, bytes_read, array_bytes(result)))


#: Below this many bytes of operands a library call on computed memory is made without the
#: result pool (:func:`run_computed`): the pool keeps blocks of 4 MiB and more only, and
#: switching NumPy's memory handler costs ~1 µs, a fifth of a 4x4 ``inv``.
SMALL_CALL_BYTES = 1 << 16


def run_computed(path: str, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                 read: tuple[Any, ...], flops: int | None = None) -> Any:
    """:func:`run` of ``func(*args, **kwargs)`` on the CPU where the array operands are
    :func:`computed_buffers`' ``read``: the same call, results and record, without the
    general walk over the arguments, the claim of their memory and the trace's check (~10
    µs of a small ``la.linalg.inv``'s ~25)."""
    return wrap_computed(path, call_computed_memory(func, args, kwargs, read), read, flops)


def call_computed_memory(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                         read: tuple[Any, ...]) -> Any:
    """``func(*args, **kwargs)`` whose array operands are ``read``, through the result pool
    as :func:`run` calls it, unless they are small (:data:`SMALL_CALL_BYTES`)."""
    nbytes = 0
    for b in read:
        nbytes += b.nbytes
    if nbytes < SMALL_CALL_BYTES:
        return func(*args, **kwargs)
    return result_pool_call(func, args, kwargs)


def wrap_computed(path: str, result: Any, read: tuple[Any, ...], flops: int | None = None) -> Any:
    """The results of a call of ``numpy.<path>`` on the CPU that read the arrays ``read``
    (:func:`computed_buffers`'), wrapped as :func:`run` wraps them, with the same record:
    the bytes of ``read`` and of the results, ``flops``. (An array, a NumPy scalar or a
    tuple of arrays such as linalg's named tuples, wrapped here at once; anything else by
    :func:`_wrap`.)"""
    nread = 0
    for b in read:
        nread += b.nbytes
    if type(result) is not np.ndarray and isinstance(result, np.generic) \
            and result.dtype in _SUPPORTED:
        result = np.asarray(result)         # (a scalar result: a 0-d array, as _wrap's)
    if type(result) is np.ndarray and result.dtype in _SUPPORTED:
        out = LazyArray._from_node(_node.leaf(result, "cpu"))
        out._node.origin = call_record(path, nread, result.nbytes, flops)
        return out
    if isinstance(result, tuple):
        written = 0
        for r in result:
            if type(r) is not np.ndarray or r.dtype not in _SUPPORTED:
                break
            written += r.nbytes
        else:           # arrays only (linalg's named tuples)
            record = call_record(path, nread, written, flops)
            outs = []
            for r in result:
                out = LazyArray._from_node(_node.leaf(r, "cpu"))
                out._node.origin = record
                outs.append(out)
            return tuple(outs) if type(result) is tuple else type(result)(*outs)
    return _wrap(result, "cpu", path, call=call_record(path, nread, array_bytes(result), flops))


def _computed_product_cuda(path: str, a: Any, b: Any) -> Any:
    """:func:`call_computed`'s product on cuda: CuPy's ``matmul``/``dot`` on the buffers of two
    computed cuda LazyArrays (CuPy's own arrays), the result wrapped with its record, as the
    compiled CPU path does. The general :func:`call` walked the arguments, looked the
    function up, claimed the memory and copied the result through ``cupy.asarray``: ~70 µs
    of host time a product in NPBench's ``covariance`` on an H100 host, against CuPy's own
    ~77 (2026-12-06f). None where this does not apply (then :func:`call` runs)."""
    if type(a) is not LazyArray or type(b) is not LazyArray:
        return None
    na, nb = a._node, b._node
    da, db = na.data, nb.data
    if na.device != "cuda" or nb.device != "cuda" or not _devices.is_cupy_array(da) \
            or not _devices.is_cupy_array(db) or path in _cupy_gaps.FUNCTIONS \
            or get_config().fallback != "allow" or computing_is_deferred():
        return None
    result = getattr(_devices.xp("cuda"), path)(da, db)
    if not _devices.is_cupy_array(result) or result.dtype not in _SUPPORTED:
        return _wrap(result, "cuda", path, (da, db))
    out = LazyArray._from_node(_node.leaf(result, "cuda"))
    flops = 2 * int(result.size) * int(da.shape[-1]) if da.ndim else None
    out._node.origin = call_record(path, int(da.nbytes) + int(db.nbytes),
                                   int(result.nbytes), flops)
    return out


def computed_into_new(x: LazyArray, dtype: Any = None, consume: Any = None,
                      cuda: bool = False) -> Any:
    """A pending ``x`` (cast to ``dtype``, ``x``'s own by default) computed by its fused
    kernel straight into new memory, which the caller owns and may write: the buffer a library
    call then works in, in place (``sort``, ``cumsum``), instead of computing ``x`` into one
    temporary and the call copying it into another. On the CPU (a NumPy array); with
    ``cuda=True`` on cuda too (a CuPy array: the caller's call then works in place with CuPy).
    None, with nothing computed, where ``x`` is computed (or a constant), on another device,
    explained or traced (every kernel must go through :func:`lazyarr._materialize.materialize`
    then), or its kernel cannot write into memory it is given (a reduction). ``x`` itself stays
    pending (the memory is not its). ``consume(memory, r0, r1)``: the call's own work on rows
    of dim 0 as they are computed (:func:`lazyarr._materialize.materialize_into`)."""
    node = x._node
    device = node.device or "cpu"
    if node.data is not None or node.op == "scalar" or computing_is_deferred() \
            or not (device == "cpu" or device == "cuda" and cuda):
        return None
    out = _devices.xp(device).empty(node.shape, node.dtype if dtype is None else np.dtype(dtype))
    if device == "cuda":    # (materialize_into's steps for cuda, where no consume is taken)
        return out if _cuda_into_new(_operands.cast(node, out.dtype), out) else None
    return out if materialize_into(_operands.cast(node, out.dtype), out, consume, fresh=True) else None


def _cuda_into_new(node: Node, out: Any) -> bool:
    """:func:`materialize_into` of the pending cuda ``node`` into the new memory ``out``
    (``fresh``), without its generic steps: the backend's lookup and the tests of a pipelined
    form (cuda has none)."""
    run_into = getattr(select("cuda", get_config().mode), "run_into", None)
    if run_into is None:        # (the reference backend's: pinned by la.use_backend)
        return False
    try:
        return bool(run_into(lower_cached(node), out, fresh=True))
    except MemoryError as exc:
        raise _materialize._out_of_memory(node, exc) from exc


def wrapped(result: Any, path: str, operands: Any = (), device: str = "cpu") -> Any:
    """A library call's result ``result`` on ``device`` (an array, or a tuple of them: one
    computed LazyArray each) as a computed LazyArray made by ``numpy.<path>`` of ``operands``
    (its buffers)."""
    if device == "cuda" and type(operands) is tuple and not operands:
        return wrapped_on_cuda(result, path)
    return _wrap(result, device, path, operands)


def run(path: str, func: Any, result_device: str, args: tuple[Any, ...], kwargs: dict[str, Any],
        written: int | None = None, flops: int | None = None) -> Any:
    """Call the library function ``func`` on the buffers of the arguments' LazyArrays, write
    into the written ones (``written``, ``out=``), wrap array results on ``result_device``.
    ``flops``: the call's FLOP count for ``la.explain`` (lazyarr's own library calls: the
    decompositions of lazyarr/_functions/_decompositions.py)."""
    targets: list[tuple[LazyArray, Any]] = []
    args = tuple(args)
    if written is not None and written < len(args) and isinstance(args[written], LazyArray):
        memory = _writes.target(args[written])
        targets.append((args[written], memory))
        args = args[:written] + (memory,) + args[written + 1:]
    if "out" in kwargs:
        kwargs = dict(kwargs)
        outs = kwargs["out"]
        single = not isinstance(outs, tuple)
        outs = (outs,) if single else outs
        copies = []
        plain = [o for o in outs if isinstance(o, np.ndarray)]   # returned as they are, as NumPy
        for o in outs:
            if isinstance(o, LazyArray):
                memory = _writes.target(o)
                targets.append((o, memory))
                copies.append(memory)
            else:
                if isinstance(o, np.ndarray):    # a user's NumPy array: pending readers first
                    _writes.barrier(o, "cpu")
                copies.append(o)
        kwargs["out"] = copies[0] if single else tuple(copies)
    else:
        plain = []
    if path == "copyto":
        kwargs = _scalar_where(kwargs)
    args, kwargs = _buffers(args), _buffers(kwargs)
    # (on the CPU NumPy's arrays come from the result pool: a large draw or result made at
    # every step of a loop takes the memory of the last one, not fresh pages:
    # docs/cpu-backend.rst, "The result pool")
    result = func(*args, **kwargs) if result_device != "cpu" else result_pool_call(func, args, kwargs)
    if any(result is o for o in plain):
        return result
    by_buffer = {id(memory): target for target, memory in targets}
    if by_buffer:       # (a write: la.jit's tape was told by _writes.target)
        if id(result) in by_buffer:
            return by_buffer[id(result)]
        if type(result) is tuple:
            return tuple(by_buffer.get(id(r), r) for r in result)
    record = None if flops is None else with_flops(_library_call(path, (args, kwargs), result), flops)
    return _traced(path, func, args, kwargs,
                   _wrap(result, result_device, path, (args, kwargs), record), result_device)


def _scalar_where(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``copyto``'s ``where=`` given a 0-d LazyArray: lazyarr's 0-d results stand for NumPy's
    scalars (``x[i]``, ``x.sum()``, a ufunc of 0-d operands), and NumPy takes a scalar
    ``where=`` by its truth (``where=np.float32(-inf)`` writes), where a 0-d array must cast
    safely to bool (a float one raises TypeError). So the value's truth is passed
    (docs/porting.rst, "0-d results")."""
    where = kwargs.get("where")
    if isinstance(where, LazyArray) and where.ndim == 0 and where.dtype != np.bool_:
        kwargs = dict(kwargs, where=bool(where))
    return kwargs


def _traced(path: str, func: Any, args: Any, kwargs: dict[str, Any], wrapped: Any,
            device: str) -> Any:
    """``wrapped``, the wrapped result of ``func(*args, **kwargs)`` (on buffers), told to the
    la.jit trace running, if any, as a step its replays call again (lazyarr/_jit.py)."""
    t = tape()
    if t is not None:
        t.call(func, args, kwargs, wrapped, functools.partial(_wrap, device=device, origin=path),
               path)
    return wrapped


# ------------------------------------------------------------------------------ numpy.<name>(lazy)
def foreign(t: type) -> bool:
    """A type with its own ``__array_function__``/``__array_ufunc__`` that is not ours, NumPy's
    or CuPy's: its dispatch must run (Dask arrays, torch tensors, astropy quantities...)."""
    if issubclass(t, LazyArray):
        return False
    if issubclass(t, (np.ndarray, np.generic)):
        return (getattr(t, "__array_function__", None) is not np.ndarray.__array_function__
                or getattr(t, "__array_ufunc__", None) is not np.ndarray.__array_ufunc__)
    return not t.__module__.startswith("cupy")


_dispatch.PROTOCOLS["foreign_type"] = foreign

#: NumPy functions that dispatch but whose lazyarr forms answer for any argument (dtypes)
_NOT_DEFERRED = frozenset({"result_type", "can_cast", "isdtype"})


def deferring_as_numpy(fn: Any, numpy_fn: Any) -> Any:
    """``fn``, a native lazyarr function, handing a call with another library's array among
    its arguments to NumPy's ``numpy_fn`` (``_dispatch.deferring``) where NumPy's function
    dispatches on its arguments (a ufunc, or a function with ``__array_function__``
    dispatch); as it is where NumPy's does not (``asarray``: it converts, as NumPy's does)."""
    dispatches = isinstance(numpy_fn, np.ufunc) or hasattr(numpy_fn, "_implementation")
    if not dispatches or getattr(numpy_fn, "__name__", None) in _NOT_DEFERRED \
            or getattr(fn, "__wrapped__", None) is not None:
        return fn
    # one public function in every namespace that serves it (la.vecdot is la.linalg.vecdot)
    wrapper = _DEFERRING_FORMS.get(id(fn))
    if wrapper is None:
        wrapper = _DEFERRING_FORMS[id(fn)] = _dispatch.deferring(fn, numpy_fn)
    return wrapper


_DEFERRING_FORMS: dict[int, Any] = {}   # id(native function) -> its deferring form (holds it)


def deferring_form(fn: Any) -> Any:
    """The form :func:`deferring_as_numpy` made of ``fn``, the public function; ``fn`` itself
    where it made none."""
    return _DEFERRING_FORMS.get(id(fn), fn)


def _met(values: Any) -> None:
    """A Dask collection among ``values``: register LazyArray with Dask, whose override NumPy
    calls next (lazyarr/_dask.py)."""
    for v in values:
        if _dispatch.dask_collection(v):
            _dispatch.PROTOCOLS["met_dask_collection"](v)
            return


def _numpy_path(func: Any) -> str:
    module = getattr(func, "__module__", None) or "numpy"
    prefix = module.removeprefix("numpy").lstrip(".")
    if prefix and not prefix.startswith(("linalg", "fft", "random", "polynomial", "testing")):
        prefix = ""   # an implementation module (numpy.lib._xxx_impl): the public name is np.<name>
    return f"{prefix}.{func.__name__}" if prefix else func.__name__


def array_function(func: Any, types_: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``numpy.<func>(lazy, ...)`` with no native lazyarr form: the fallback, or NotImplemented
    when another library's array is among the arguments."""
    if any(foreign(t) for t in types_):
        _met(args)
        return NotImplemented
    path = _numpy_path(func)
    return call(path, func, args, kwargs, written=_WRITTEN_ARGUMENT.get(path))


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
    """A ufunc call or method (``np.add.outer``, ``np.add.at``, ``out=``) lazyarr has no native
    form of: the fallback, or NotImplemented for another library's arrays."""
    others = list(inputs) + list(kwargs.get("out", ()))
    if any(foreign(type(x)) for x in others if hasattr(x, "__array_ufunc__")):
        _met(others)
        return NotImplemented
    if method == "__call__":
        return call(ufunc.__name__, ufunc, inputs, kwargs)
    return call(f"{ufunc.__name__}.{method}", getattr(ufunc, method), inputs, kwargs,
                written=0 if method == "at" else None)


# ------------------------------------------------------------------------------ lazyarr.<name>
class FallbackFunction:
    """``lazyarr.<path>`` for a NumPy function lazyarr has no native form of."""

    def __init__(self, path: str, numpy_func: Any) -> None:
        self._path, self._numpy_func = path, numpy_func
        # (a ufunc's ``at``, ``la.add.at``, writes its first argument, as ``np.add.at`` does)
        self._written = _WRITTEN_ARGUMENT.get(path, 0 if path.endswith(".at") else None)
        functools.update_wrapper(self, numpy_func)  # type: ignore[arg-type]
        self.__module__ = "lazyarr." + path.rpartition(".")[0] if "." in path else "lazyarr"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call(self._path, self._numpy_func, args, kwargs, written=self._written)

    def __getattr__(self, name: str) -> Any:
        """ufunc methods and attributes: ``la.fmod.outer``, ``la.matmul.nin``."""
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self._numpy_func, name)
        if callable(value) and isinstance(self._numpy_func, np.ufunc):
            return FallbackFunction(f"{self._path}.{name}", value)
        return value

    def __repr__(self) -> str:
        return f"<lazyarr fallback for numpy.{self._path}>"


class FallbackIndexer:
    """``lazyarr.mgrid[...]``, ``r_``, ``c_``, ``ogrid``: NumPy's index tricks, results wrapped."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getitem__(self, key: Any) -> Any:
        policy(f"{self._name}[]")
        device = _device(key, {}) or _devices.resolve(None)
        indexer = getattr(_devices.xp(device), self._name, None)
        if indexer is None:
            raise TypeError(f"numpy.{self._name} has no CuPy counterpart (cupy.{self._name})")
        key = _buffers(key)
        return _traced(f"{self._name}[]", indexer.__getitem__, (key,), {},
                       _wrap(indexer[key], device, f"{self._name}[]"), device)

    def __repr__(self) -> str:
        return f"<lazyarr fallback for numpy.{self._name}[...]>"


class FallbackNamespace(types.ModuleType):
    """``lazyarr.linalg``, ``lazyarr.fft``, ``lazyarr.random``, ...: NumPy's submodule, each
    function through the fallback (classes and exceptions are NumPy's own), except the names
    in ``native``, which are lazyarr's own (``NATIVE``: their names, for the NumPy-names page)."""

    def __init__(self, path: str, native: dict[str, Any] | None = None) -> None:
        native = native or {}
        own = f"; {', '.join(sorted(native))} are lazyarr's own" if native else ""
        super().__init__(f"lazyarr.{path}", f"NumPy's numpy.{path} through lazyarr's fallback{own}.")
        self._path = path
        self._numpy = resolve(np, path)
        self.NATIVE = frozenset(native)
        for name, value in native.items():
            numpy_fn = getattr(self._numpy, name, None)
            setattr(self, name, value if numpy_fn is None else deferring_as_numpy(value, numpy_fn))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"module 'lazyarr.{self._path}' has no attribute {name!r}")
        value = _served(f"{self._path}.{name}", getattr(self._numpy, name, _MISSING))
        if value is _MISSING:
            raise AttributeError(f"module 'lazyarr.{self._path}' has no attribute {name!r}")
        setattr(self, name, value)
        return value

    def __dir__(self) -> list[str]:
        return [n for n in dir(self._numpy) if not n.startswith("_")]


_MISSING = object()
_INDEXERS = ("mgrid", "ogrid", "r_", "c_")


def _served(path: str, obj: Any) -> Any:
    """What ``lazyarr.<path>`` is for NumPy's object ``obj``."""
    if obj is _MISSING:
        return obj
    if isinstance(obj, types.ModuleType):
        name = path.rpartition(".")[2]
        return obj if name in _PASSTHROUGH_MODULES else FallbackNamespace(path)
    if isinstance(obj, type):
        return obj                      # dtypes, finfo, errstate, exceptions: NumPy's own
    if path in _INDEXERS:
        return FallbackIndexer(path)
    if callable(obj):
        return FallbackFunction(path, obj)
    return obj                          # constants, typecodes, s_, index_exp


@functools.cache
def attribute(name: str) -> Any:
    """``lazyarr.<name>`` for a name lazyarr does not define (the module ``__getattr__``)."""
    if name in UNSUPPORTED:
        raise AttributeError(f"lazyarr does not provide numpy.{name}: {UNSUPPORTED[name]}")
    if name.startswith("_"):
        raise AttributeError(f"module 'lazyarr' has no attribute {name!r}")
    value = _served(name, getattr(np, name, _MISSING))
    if value is _MISSING:
        raise AttributeError(f"module 'lazyarr' has no attribute {name!r}")
    return value


# ------------------------------------------------------------------------------ x.<method>
def _call_method(name: str, memory: Any, *args: Any, **kwargs: Any) -> Any:
    return getattr(memory, name)(*args, **kwargs)


def method(x: LazyArray, name: str) -> Any:
    """``x.<name>`` for an ndarray attribute LazyArray has no native form of (its
    ``__getattr__``): a method computes ``x`` and calls the buffer's method; an attribute is
    read from the computed buffer. Array results are wrapped; not fused."""
    if name.startswith("_") or not hasattr(np.ndarray, name):
        raise AttributeError(f"'LazyArray' object has no attribute {name!r}")
    if name in _UNSUPPORTED_METHODS:
        raise AttributeError(f"LazyArray.{name} is not NumPy's: {_UNSUPPORTED_METHODS[name]}")
    path = f"ndarray.{name}"
    if not callable(getattr(np.ndarray, name)):     # a property: T, mT, real, flat, strides...
        policy(path)
        data = _buffers(x)                           # (x.T, x.flat ... view x's memory)
        return _traced(path, operator.attrgetter(name), (data,), {},
                       _wrap(getattr(data, name), x.device, path, data), x.device)

    def bound(*args: Any, **kwargs: Any) -> Any:
        policy(path)
        device = _device((x, args), kwargs)
        if name in _WRITING_METHODS:
            if name == "resize":        # a new shape: new memory, as NumPy's (refcheck aside)
                memory = x.data.copy()
                result = memory.resize(*_buffers(args), **_buffers(kwargs))
                x._node = _node.leaf(memory, x.device)
                x._node.origin = _library_call(path, (), memory)
                return result
            memory = _writes.target(x)
            result = getattr(memory, name)(*_buffers(args), **_buffers(kwargs))
            return _wrap(result, device or x.device, path)
        call = functools.partial(_call_method, name)
        args = (_buffers(x), *_buffers(args))     # (a view it returns is a view of x: x.view())
        kwargs = _buffers(kwargs)
        return _traced(path, call, args, kwargs,
                       _wrap(call(*args, **kwargs), device or x.device, path, (args, kwargs)),
                       device or x.device)

    bound.__name__ = bound.__qualname__ = name
    bound.__doc__ = f"``numpy.ndarray.{name}`` through lazyarr's fallback (not fused)."
    return bound


def _ufunc_methods(fn: Any, ufunc: np.ufunc) -> None:
    """Give a native lazyarr function of a ufunc's name the ufunc's methods (``la.add.outer``)
    and attributes (``nin``, ``identity``...), the methods through the fallback."""
    name = ufunc.__name__
    for meth in ("outer", "reduce", "accumulate", "reduceat", "at"):
        if not hasattr(fn, meth):           # (a native one: la.add.outer, lazyarr/_functions)
            setattr(fn, meth, FallbackFunction(f"{name}.{meth}", getattr(ufunc, meth)))
    for attr in ("nin", "nout", "nargs", "ntypes", "types", "identity", "signature"):
        setattr(fn, attr, getattr(ufunc, attr))


def install(namespace: dict[str, Any]) -> None:
    """Give the native functions of the package namespace that are NumPy ufuncs their methods
    (``la.add.outer``) through the fallback."""
    for name, fn in namespace.items():
        ufunc = getattr(np, name, None)
        if isinstance(ufunc, np.ufunc) and callable(fn) and not isinstance(fn, type):
            _ufunc_methods(fn, ufunc)


# LazyArray's hooks into the fallback (``x.<name>``, ``@``, ``divmod``, ``numpy.<ufunc>(lazy,
# out=...)``): the array layer is below this module, so it looks them up (lazyarr/_dispatch.py).
_dispatch.PROTOCOLS.update(method=method, array_ufunc=array_ufunc, call=call)


setup_library_calls(_SUPPORTED, call_order, _wrap)
