# cython: language_level=3
"""The compiled hot paths of the array layer: what a script's small statements run.

* ``ArrayBase`` and ``ScalarBase``: the compiled bases of ``LazyArray`` (lazyarr/_array.py) and
  of ``ScalarValue`` (lazyarr/_value.py), holding the node (and an element's NumPy scalar) as C
  fields and owning the C slots of the operators, ``@``, ``x[key]`` and ``x[key] = v``, which
  Python calls without a method lookup or a frame.
* The element's operators: NumPy's scalar arithmetic at once (the loop over elements,
  docs/notes/core.rst).
* ``LazyArray``'s operators and ufunc function forms on small computed CPU arrays, which run
  NumPy's own at once (``_array_binary``: the rule is lazyarr/_value.py's), else a pending node
  built by a memoized rule (``_lazy_node``).
* Indexing and writes on memory an array owns: ``x[i]`` (an element), basic views, writes of a
  computed value, with the write barrier's compiled scan; cuda's kept views of a leaf.
* Repeated calls: a reduction's bound runner (``bound_reduction``), a product of two computed
  arrays (``computed_product``), and ``la.jit``'s replay of a one-kernel trace (``JitBase``).

Compiled for two reasons. Speed: a Python-level operator method costs ~250 ns (the frame, the
bytecode of its checks, the new object), this ~100 ns more than NumPy's own scalar operator.
And warnings: NumPy warns from C at the innermost *Python* frame, which is the user's line
only if no Python frame of lazyarr is in between (as for NumPy's own scalars), so that
``warnings`` filters, ``-W error`` and the printed location name the user's code.

Everything that is not the common case (an operand that is not a number, a value whose node
was built, a call being explained or traced) goes to the Python functions the ``setup*``
functions were given, so the rules stay in one place: the Python modules.
"""
cimport cython
from libc.math cimport copysign
from cpython.contextvars cimport get_value
from cpython.list cimport PyList_GET_SIZE
from cpython.ref cimport Py_REFCNT
from cpython.object cimport PyObject, PyTypeObject

cimport numpy as cnp

from lazyarr._node cimport Node, held_pending, leaf, op_node

cnp.import_array()

import weakref
from operator import itemgetter

from lazyarr._devices import inherit_read_only, read_only
from lazyarr._dtypes import SUPPORTED_DTYPES

cdef extern from "Python.h":
    ctypedef struct PyWrapperDescrObject:    # (descrobject.h: a slot wrapper, ``int.__add__``)
        void *d_base                         # its slot's ``struct wrapperbase``
        void *d_wrapped                      # the C function of the slot
    object PyDescr_NewWrapper(PyTypeObject *tp, void *base, void *wrapped)
    void PyType_Modified(PyTypeObject *tp)

# set once by setup() (lazyarr/_value.py)
cdef type ScalarValue = None
cdef object _value = None            # the value of a ScalarValue whose node was built
cdef object _operand = None          # the value of any other operand, or None
cdef object _weak_complex = None     # a Python complex left of a value
cdef object _deferred = None         # computing_is_deferred()
cdef list DEFERRING = None           # not empty while some call is explained or traced
cdef tuple SLOW = ()                 # LazyArray's operator methods, by operator code
cdef object _getitem = None          # LazyArray's __getitem__ (everything but x[i])
cdef object generic = None           # numpy.generic
cdef object ndarray = None           # numpy.ndarray
cdef type LazyArray = None
cdef object _target = None           # x's memory, ready to be written (lazyarr/_writes.py)
cdef object _config_override = None  # lazyarr/_config.py: its ContextVar, and its namespace
cdef dict _config_namespace = None   # (for ``_default``), read here without a Python call
cdef dict _BASE_OF = None            # _views._base_of: id(pushed-down view) -> its base
cdef dict _VIEWS_OF = None           # _views._views_of: id(base) -> its pushed-down views
cdef object _barrier = None          # _writes.barrier
cdef bint _exact_refcounts = False   # _views.EXACT_REFCOUNTS
cdef object _setitem = None          # LazyArray's __setitem__ (every other write)
# the node builder's fast path (lazyarr/_build.py, ``elementwise``), given by setup_nodes()
cdef dict _rules = None              # _build._rules: memoized NumPy rules by operand types
cdef object _cast = None             # _operands.cast (a node to another dtype)
cdef object _scalar_node = None      # _operands.scalar_node (a Python number's constant node)
cdef dict _scalar_nodes = None       # _operands._scalar_nodes: its memo, read here first
cdef object _numpy_scalar_node = None    # _operands.numpy_scalar_node
cdef tuple OP_NAMES = ()             # the registry's op name of each binary operator code
cdef tuple UNARY_NAMES = ()          # ... and of each unary one (code - NEG)

# operator codes: the forward binary operators, then their reflected forms (+ REFLECTED), then
# the unary ones; setup() gets LazyArray's method of each, in this order
cdef enum:
    ADD, SUB, MUL, TRUEDIV, FLOORDIV, MOD, POW, AND, OR, XOR, LSHIFT, RSHIFT,
    LT, LE, EQ, NE, GT, GE, REFLECTED
cdef enum:
    NEG = 2 * REFLECTED, POS, ABS, INVERT, INPLACE



def setup(cls, value, operand, weak_complex, deferred, list deferring, dict slow, getitem,
          array_cls, target, config, owns, barrier, setitem_, bint exact_refcounts):
    """Give the module what it calls: ``cls`` (ScalarValue), ``value`` (ScalarValue._value),
    ``operand`` and ``weak_complex`` (lazyarr/_value.py), ``deferred`` and ``deferring``
    (lazyarr/_materialize.py), ``slow`` (LazyArray's own operator methods by name, for those
    of :data:`ARRAY_CODES`), ``getitem`` (LazyArray's ``__getitem__``),
    ``array_cls`` (LazyArray), ``target``
    (``_writes.target``), ``config`` (the module lazyarr/_config.py), ``owns``
    (``_views._base_of`` and ``_views._views_of``, which :func:`_owns` reads), ``barrier``
    (``_writes.barrier``), ``setitem_`` (LazyArray's ``__setitem__``) and
    ``exact_refcounts`` (``_views.EXACT_REFCOUNTS``)."""
    global ScalarValue, _value, _operand, _weak_complex, _deferred, DEFERRING, SLOW, _getitem
    global generic, ndarray, LazyArray, _target, _config_override, _config_namespace
    global _BASE_OF, _VIEWS_OF, _barrier, _setitem, _exact_refcounts
    import numpy
    ScalarValue, _value, _operand, _weak_complex = cls, value, operand, weak_complex
    _deferred, DEFERRING, _getitem = deferred, deferring, getitem
    LazyArray, _target = array_cls, target
    _config_override, _config_namespace = config._override, vars(config)
    _BASE_OF, _VIEWS_OF = owns
    _barrier, _setitem, _exact_refcounts = barrier, setitem_, exact_refcounts
    codes = {code: slow[name] for name, code in ARRAY_CODES.items()}
    SLOW = tuple([codes.get(code) for code in range(INPLACE + RSHIFT + 1)])
    generic, ndarray = numpy.generic, numpy.ndarray


cdef dict _BOUND_REDUCTIONS = None   # _build._bound_reductions: runners by call key
cdef object _forced = None           # the ContextVar of backends.forced_backend()
cdef object _warn_empty = None       # _build._warn_empty_slices


def setup_reductions(dict bound, forced, warn_empty):
    """Give :func:`bound_reduction` the reduction builder's table of bound runners
    (``_build._bound_reductions``), the forced backend's context variable and
    ``_build._warn_empty_slices``."""
    global _BOUND_REDUCTIONS, _forced, _warn_empty
    _BOUND_REDUCTIONS, _forced, _warn_empty = bound, forced, warn_empty


def bound_reduction(str name, object x, object axis, object keepdims):
    """``name(x, axis, keepdims=keepdims)`` of a computed CPU LazyArray whose runner an
    earlier call bound (``_build.reduce``'s first lines, under the same key: a repeated
    ``x.sum()`` or ``la.max(row, 0)``), as a new LazyArray; None for everything else (the
    caller's path decides, and binds). Compiled: a small reduction is a few µs, of which the
    Python lookup was one and a half."""
    cdef Node node
    cdef object data
    cdef object hit
    if type(x) is not LazyArray or type(keepdims) is not bool \
            or not (axis is None or type(axis) is int):
        return None
    node = <Node>(<ArrayBase>x)._node
    data = node.data
    if type(data) is not ndarray or node.device != "cpu" or _eager_mode() \
            or PyList_GET_SIZE(DEFERRING) and _deferred():
        return None
    hit = _BOUND_REDUCTIONS.get((name, data.dtype, data.shape, data.strides, data.flags.aligned,
                                 axis, keepdims, None, 0, _forced.get()))
    if hit is None:
        return None
    if (<tuple>hit)[1] is not None:
        _warn_empty(*(<tuple>hit)[1])
    return _wrap((<tuple>hit)[0]([data]))


cdef type _Replay = None              # lazyarr/_jit.py's _Replay (a trace to replay)


def setup_jit(replay):
    """Give :func:`jit_replay` the class of a replayable trace (``_jit._Replay``)."""
    global _Replay
    _Replay = replay


cdef object jit_replay(dict traces, tuple args):
    """``Jitted.__call__``'s common case, compiled (lazyarr/_jit.py): positional arguments that
    are computed LazyArrays and Python numbers, in lazy mode, outside a trace or
    ``la.explain``, with a trace of one kernel (``_Replay.one_kernel``): the call's signature
    key, built as ``_jit._signature_of`` and ``Jitted.__call__`` build it, the lookup, the
    kernel on the arguments' buffers, its result wrapped. None for everything else (the Python
    path decides, and traces)."""
    cdef list parts = []
    cdef list buffers = []
    cdef list ids = []
    cdef Node node
    cdef object data
    cdef object t
    cdef object replay
    cdef object one
    _read_config()
    if not _seen_lazy or PyList_GET_SIZE(DEFERRING) and _deferred():
        return None
    for a in args:
        t = type(a)
        if t is LazyArray:
            node = <Node>(<ArrayBase>a)._node
            data = node.data
            if data is None:
                return None
            buffers.append(data)
            ids.append(id(data))
            parts.append((LazyArray, node.dtype, node.shape, data.strides, node.device))
        elif t is float:
            parts.append((t, a, copysign(1.0, a)) if a == a else (t, "nan"))
        elif t is int or t is bool or a is None:
            parts.append((t, a))
        else:
            return None
    if len(ids) > 1 and len(set(ids)) < len(ids):   # one array passed twice: its own trace
        parts.append(tuple([ids.index(i) for i in ids]))
    parts.append(_seen_device)
    parts.append(_forced.get())
    replay = traces.get(tuple(parts))
    if type(replay) is not _Replay:
        return None
    one = replay.one_kernel
    if one is None:
        return None
    run, inputs, device = <tuple>one
    return _array(leaf(run([buffers[i] for i in <tuple>inputs]), device))


cdef class JitBase:
    """The compiled base of ``Jitted`` (lazyarr/_jit.py): its traces by signature, and the call
    slot, whose common case (:func:`jit_replay`) runs without a Python frame; every other call
    is the Python class's ``_call``."""
    cdef public dict _traces
    cdef dict __dict__                   # (functools.update_wrapper's attributes)

    def __call__(self, *args, **kwargs):
        cdef object done
        if not kwargs:
            done = jit_replay(self._traces, args)
            if done is not None:
                return done
        return self._call(*args, **kwargs)


cdef object _matmul_slow = None       # LazyArray's own __matmul__ and __rmatmul__ (the public
cdef object _rmatmul_slow = None      # matmul, lazyarr/_functions/_linalg.py)
cdef object _np_matmul = None         # numpy.matmul
cdef frozenset _SUPPORTED = None      # the dtypes lazyarr supports
cdef object _call_order = None        # _plan.call_order: the library calls' running count
cdef object _wrap_result = None       # _fallback._wrap: any other result of a library call


def setup_products(matmul, rmatmul, np_matmul):
    """Give the module ``@``'s slow paths (LazyArray's own ``__matmul__``, ``__rmatmul__``) and
    ``numpy.matmul`` (lazyarr/_value.py)."""
    global _matmul_slow, _rmatmul_slow, _np_matmul
    _matmul_slow, _rmatmul_slow, _np_matmul = matmul, rmatmul, np_matmul


def setup_library_calls(frozenset supported, order, wrap):
    """Give :func:`computed_product` the supported dtypes and, from lazyarr/_fallback.py, the
    library calls' running count and ``_wrap`` (set when that module is imported)."""
    global _SUPPORTED, _call_order, _wrap_result
    _SUPPORTED, _call_order, _wrap_result = supported, order, wrap


cpdef object computed_product(str path, object func, object a, object b):
    """``_fallback.call_computed`` of a product of two arrays (``a @ b``, ``np.dot(a, b)``,
    ``path`` naming ``func``), compiled: NumPy's call on the buffers of two computed CPU
    LazyArrays, its result a computed LazyArray whose node keeps the call's record for
    ``la.explain`` (``Node.origin``: the function, bytes read and written, flops, order). None,
    with nothing called, for other operands, a fallback policy other than "allow", or a call
    explained or traced. A loop's ``A[i, :j] @ A[:j, j]`` (NPBench's ``lu``, ``cholesky``,
    ``symm``) is one of these per statement."""
    cdef Node na
    cdef Node nb
    cdef object da
    cdef object db
    cdef object result
    cdef object out
    cdef object flops = None
    if type(a) is not LazyArray or type(b) is not LazyArray or _call_order is None:
        return None
    na, nb = <Node>(<ArrayBase>a)._node, <Node>(<ArrayBase>b)._node
    da, db = na.data, nb.data
    if type(da) is not ndarray or type(db) is not ndarray or na.device != "cpu" \
            or nb.device != "cpu":
        return None
    _read_config()
    if not _seen_fallback or PyList_GET_SIZE(DEFERRING) and _deferred():
        return None
    result = func(da, db)
    if isinstance(result, generic):         # (a product of vectors: NumPy's scalar)
        result = cnp.PyArray_FROM_O(result)
    if type(result) is not ndarray or result.dtype not in _SUPPORTED:
        return _wrap_result(result, "cpu", path, [da, db])
    out = _array(leaf(result, "cpu"))
    if cnp.PyArray_NDIM(<cnp.ndarray>da):
        flops = 2 * cnp.PyArray_SIZE(<cnp.ndarray>result) * da.shape[-1]
    (<Node>(<ArrayBase>out)._node).origin = (
        path, cnp.PyArray_NBYTES(<cnp.ndarray>da) + cnp.PyArray_NBYTES(<cnp.ndarray>db),
        cnp.PyArray_NBYTES(<cnp.ndarray>result), flops, next(_call_order))
    return out


def setup_nodes(dict rules, tuple op_names, tuple unary_names, numpy_scalar_node):
    """Give the module the node builder's pieces for :func:`_lazy_node`: ``rules``
    (``_build._rules``), ``op_names`` (the registry's op of each operator in
    :data:`BINARY_STEMS`' order), ``unary_names`` (of ``-x``, ``+x``, ``abs(x)``, ``~x``) and
    ``numpy_scalar_node`` (``_operands.numpy_scalar_node``). (The nodes themselves:
    lazyarr/_node.pxd's builders.)"""
    global _rules, OP_NAMES, UNARY_NAMES, _numpy_scalar_node
    assert len(op_names) == REFLECTED and len(unary_names) == INPLACE - NEG
    _rules, _numpy_scalar_node = rules, numpy_scalar_node
    OP_NAMES, UNARY_NAMES = op_names, unary_names


cdef inline object _array(Node node):
    """A new LazyArray of ``node`` (``LazyArray._from_node``, without the call)."""
    cdef ArrayBase a = _new(LazyArray, ArrayBase)
    a._node = node
    return a


cdef tuple _NO_ARGS = ()


cdef inline object _new(type cls, type base):
    """``base.__new__(cls)`` (``object.__new__`` for an extension type's subclass): the compiled
    base's C slot, which sets its fields, called as a function (Cython calls ``__new__`` of a
    class defined further down as a Python method), not ``cls``'s own ``__new__``
    (``la.ndarray(shape)``). ``base``: ArrayBase, or ScalarBase for an element's class."""
    return (<PyTypeObject*>base).tp_new(cls, <PyObject*>_NO_ARGS, NULL)


cdef inline Node _node_of(object x):
    """The node of ``x``, a LazyArray or a subclass: a field read for a LazyArray; a subclass
    may make it a property (ScalarValue builds its node when it is first asked for)."""
    if type(x) is LazyArray:
        return <Node>(<ArrayBase>x)._node
    return <Node>x._node


cdef object _wrap(object data):
    """A small operator's result (a new CPU buffer) as a computed LazyArray."""
    return _array(leaf(data, "cpu"))


def setup_casts(cast, scalar_node, dict scalar_nodes):
    """Give :func:`cast_operands` ``_operands.cast``, ``_operands.scalar_node`` and the
    latter's memo (``lazyarr/_build.py`` does, as it is imported)."""
    global _cast, _scalar_node, _scalar_nodes
    _cast, _scalar_node, _scalar_nodes = cast, scalar_node, scalar_nodes


cpdef tuple cast_operands(object operands, object dtypes):
    """The operands (nodes and Python numbers) as nodes of their loop dtypes ``dtypes``: a node
    cast (``_operands.cast``), a number as its constant node (``_operands.scalar_node``). A
    nonzero, non-NaN float or int is looked up in ``scalar_node``'s memo first, under the key
    it files such a number by, ``(value, dtype)``; anything else (a zero, whose sign is in its
    key, NaN, a complex, a miss) asks ``scalar_node`` itself. (~0.1 µs a constant here,
    against ~1.2 µs through the Python function: x * 2 on a computed cuda leaf, 2026-12-07.)"""
    cdef Py_ssize_t i, n = len(operands)
    cdef list out = [None] * n
    cdef object x, dt, t, node
    for i in range(n):
        x = operands[i]
        dt = dtypes[i]
        if type(x) is Node:
            out[i] = x if (<Node>x).dtype is dt or (<Node>x).dtype == dt else _cast(x, dt)
            continue
        t = type(x)
        node = None
        if (t is float or t is int) and x and x == x:
            node = _scalar_nodes.get((x, dt))
        out[i] = node if node is not None else _scalar_node(x, dt)
    return tuple(out)


cdef object _lazy_node(object name, object x, object y, int nin):
    """``name(x)`` or ``name(x, y)`` as a new pending LazyArray, from a rule
    ``_build.elementwise`` memoized (what its fast path does, without the Python frames of the
    operator method, the function form and the builder: ~1.5 µs an op, docs/notes/core.rst);
    None where that path would not take it, or where the operator method has a case of its
    own (a computed 0-d CPU operand first, a Dask collection, ``None``/strings for ``==``):
    the caller then takes the slow path, which decides. The operands: LazyArrays and Python
    numbers."""
    cdef object t
    cdef Node node, other
    cdef object found
    cdef tuple rule, dtypes, src, rule_key
    cdef object shape
    cdef list operands
    cdef list key
    if type(x) is LazyArray and (nin == 1 or type(y) is LazyArray):
        # LazyArrays only (most ops): the rule's key and the operands as tuples at once
        node = <Node>(<ArrayBase>x)._node
        if node.data is not None and not node.shape and node.device == "cpu":
            return None                 # a computed 0-d CPU value: NumPy's 0-d rules
        if nin == 1:
            rule_key = (name, node.dtype, node.shape, node.device)
            src = (node,)
        else:
            other = <Node>(<ArrayBase>y)._node
            if other.data is not None and not other.shape and other.device == "cpu":
                return None
            rule_key = (name, node.dtype, node.shape, node.device,
                        other.dtype, other.shape, other.device)
            src = (node, other)
        return _from_rule(name, nin, rule_key, src)
    operands = []
    key = [name]
    for i in range(nin):
        v = x if i == 0 else y
        t = type(v)
        if t is LazyArray:
            node = <Node>(<ArrayBase>v)._node
            if node.data is not None and not node.shape and node.device == "cpu":
                return None             # a computed 0-d CPU value: NumPy's 0-d rules
            key.append(node.dtype)
            key.append(node.shape)
            key.append(node.device)
            operands.append(node)
        elif t is float or t is int or t is complex:
            key.append(t)
            operands.append(v)
        elif isinstance(v, cnp.generic):
            # a NumPy scalar: a constant node of its own dtype (memoized; None for a dtype
            # the slow path decides). Not for power: the builder checks integer exponents
            # at each call (``x ** np.int64(-1)`` raises).
            if name == "power":
                return None
            node = _numpy_scalar_node(v)
            if node is None:
                return None
            key.append(node.dtype)
            key.append(node.shape)
            key.append(node.device)
            operands.append(node)
        else:
            return None
    return _from_rule(name, nin, tuple(key), tuple(operands))


cdef object _from_rule(object name, int nin, tuple rule_key, tuple operands):
    """:func:`_lazy_node`'s node from the memoized rule of ``rule_key`` (the key
    ``_build.elementwise`` files it by), or None."""
    cdef Node node
    cdef object found
    cdef tuple rule, dtypes, src
    cdef object shape
    found = _rules.get(rule_key)
    if found is None:
        return None
    # (a _build._Rule, a named tuple: its fields by index, (dtypes, shape, device, fast,
    # uncast), as C reads of a tuple rather than five attribute lookups)
    rule = <tuple>found
    if not rule[3]:
        return None
    shape = rule[1]
    if _eager_mode():
        return None
    dtypes = <tuple>rule[0]
    src = operands if rule[4] else cast_operands(operands, dtypes)
    node = op_node(name, dtypes[nin], shape, rule[2], src)
    if not shape and node.sid is None and node.data is None:
        # a 0-d DAG that outgrew a structure id (a loop-carried value on cuda: ``s = s +
        # a[i] * b[i]``): the builder's ``_bounded`` computes its pending operands first, on
        # the slow path (the node is interned: built again there, it is this one)
        return None
    return _array(node)


cdef inline object _make(object v):
    """A new ScalarValue holding ``v`` (what ``object.__new__`` does, without the call)."""
    cdef ScalarBase s = _new(ScalarValue, ScalarBase)
    s._v = v
    return s


def make_value(v):
    """A new ScalarValue holding the NumPy scalar ``v`` (``lazyarr._value.value``)."""
    return _make(v)


cdef object _apply(int op, object a, object b):
    if op == ADD:
        return a + b
    if op == SUB:
        return a - b
    if op == MUL:
        return a * b
    if op == TRUEDIV:
        return a / b
    if op == FLOORDIV:
        return a // b
    if op == MOD:
        return a % b
    if op == POW:
        return a ** b
    if op == AND:
        return a & b
    if op == OR:
        return a | b
    if op == XOR:
        return a ^ b
    if op == LSHIFT:
        return a << b
    if op == RSHIFT:
        return a >> b
    if op == LT:
        return a < b
    if op == LE:
        return a <= b
    if op == EQ:
        return a == b
    if op == NE:
        return a != b
    if op == GT:
        return a > b
    return a >= b


cdef object _binary(object self, object other, int op):
    cdef object v = (<ScalarBase>self)._v
    cdef object w
    cdef object t = type(other)
    cdef bint reflected = op >= REFLECTED
    if t is ScalarValue:
        w = (<ScalarBase>other)._v
        if w is None:
            w = _value(other)
    elif t is float or t is int or t is bool:
        w = other
    elif t is complex:
        w = _weak_complex(other, self) if reflected else other
    else:
        w = _small_buffer(other) if t is LazyArray else None
        if w is not None:
            # an element and a small computed array (``alpha * a[i] * row``): at once, an array
            if not _fits(w, None, 1):
                return SLOW[op](self, other)
            if v is None:
                v = _value(self)
            return _wrap(_apply(op - REFLECTED, w, v) if reflected else _apply(op, v, w))
        w = _operand(other)
        if w is None:
            return SLOW[op](self, other)
    if PyList_GET_SIZE(DEFERRING) and _deferred():
        return SLOW[op](self, other)
    if v is None:
        v = _value(self)
    if reflected:
        return _make(_apply(op - REFLECTED, w, v))
    return _make(_apply(op, v, w))


cdef object _unary(object self, int op):
    cdef object v = (<ScalarBase>self)._v
    if PyList_GET_SIZE(DEFERRING) and _deferred():
        return SLOW[op](self)
    if v is None:
        v = _value(self)
    return _make(_apply_unary(op, v))


cdef object _apply_unary(int op, object a):
    if op == NEG:
        return -a
    if op == POS:
        return +a
    if op == ABS:
        return abs(a)
    return ~a


cdef object _apply_inplace(int op, object a, object b):
    if op == ADD:
        a += b
    elif op == SUB:
        a -= b
    elif op == MUL:
        a *= b
    elif op == TRUEDIV:
        a /= b
    elif op == FLOORDIV:
        a //= b
    elif op == MOD:
        a %= b
    elif op == POW:
        a **= b
    elif op == AND:
        a &= b
    elif op == OR:
        a |= b
    elif op == XOR:
        a ^= b
    elif op == LSHIFT:
        a <<= b
    else:
        a >>= b


#: NumPy's scalar types of lazyarr's dtypes (no longdouble, no strings)
cdef frozenset _NUMPY_SCALARS = frozenset([d.type for d in SUPPORTED_DTYPES])


cdef object _small_operand(object other, Py_ssize_t *size):
    """The value ``other`` brings to a small operator (``size``: its elements), or None: a
    Python number, a NumPy scalar (``v / np.float64(n - 1)``: NumPy's own promotion, as the
    ufunc is NumPy's), an element's NumPy scalar, a computed CPU array's buffer."""
    cdef object t = type(other)
    cdef Node node
    cdef object data
    if t is float or t is int or t is bool or t is complex or t in _NUMPY_SCALARS:
        size[0] = 1
        return other
    if t is ScalarValue:
        size[0] = 1
        data = (<ScalarBase>other)._v
        return data if data is not None else _value(other)
    if t is LazyArray:
        node = <Node>(<ArrayBase>other)._node
        data = node.data
        if type(data) is ndarray and node.device == "cpu":
            size[0] = cnp.PyArray_SIZE(<cnp.ndarray>data)
            return data
    return None


cdef object _small_buffer(object self):
    """``self``'s buffer if it is a computed n-d CPU array that may take the small path."""
    cdef Node node = _node_of(self)
    cdef object data = node.data
    if type(data) is ndarray and node.device == "cpu" and cnp.PyArray_NDIM(<cnp.ndarray>data):
        return data
    return None


cdef object _seen_config = None     # the Config read last: frozen, so its fields below hold
cdef bint _seen_eager = False        # its ``mode == "eager"``
cdef bint _seen_lazy = False         # its ``mode == "lazy"``
cdef object _seen_device = None      # its ``device``
cdef bint _seen_fallback = False     # its ``fallback == "allow"``
cdef Py_ssize_t _seen_limit = 0      # its ``eager_max_size``


cdef inline bint _eager_mode():
    """Whether the current ``_config.get_config()`` is in eager mode (without its frame)."""
    _read_config()
    return _seen_eager


cdef inline Py_ssize_t _small_limit():
    """The current ``_config.get_config().eager_max_size``."""
    _read_config()
    return _seen_limit


cdef inline void _read_config():
    """``_config.get_config()`` (its context variable, else its module's default), its fields
    read only when it is another Config than the last one: each small operator asks twice."""
    global _seen_config, _seen_eager, _seen_lazy, _seen_device, _seen_fallback, _seen_limit
    cdef object config = get_value(_config_override)
    if config is None:
        config = _config_namespace["_default"]
    if config is not _seen_config:
        _seen_eager = config.mode == "eager"
        _seen_lazy = config.mode == "lazy"
        _seen_device = config.device
        _seen_fallback = config.fallback == "allow"
        _seen_limit = config.eager_max_size
        _seen_config = config


cdef bint _fits(object a, object b, Py_ssize_t m):
    """Whether ``a`` (a buffer) and ``b`` (an operand of ``m`` elements) make a small operator:
    both, and their broadcast result, within ``eager_max_size`` (the result has ``a``'s size
    when ``b`` is one element or of ``a``'s shape, and at most ``n * m`` elements otherwise);
    and nothing is being explained or traced (nothing may compute then)."""
    cdef Py_ssize_t limit = _small_limit()
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>a)
    if n > limit or m > limit:
        return False
    if m > 1 and n * m > limit and (type(b) is not ndarray or a.shape != b.shape):
        return False
    return not (PyList_GET_SIZE(DEFERRING) and _deferred())


cdef object _array_binary(object self, object other, int op):
    cdef object a = _small_buffer(self)
    cdef object b
    cdef Py_ssize_t m = 0
    if a is not None:
        b = _small_operand(other, &m)
        if b is not None and _fits(a, b, m):
            if op >= REFLECTED:
                return _wrap(_apply(op - REFLECTED, b, a))
            return _wrap(_apply(op, a, b))
    if op != POW and op != POW + REFLECTED and op != EQ and op != NE:
        # (powers: ndarray.__pow__'s scalar fast paths; ==, !=: None and strings)
        b = _lazy_node(OP_NAMES[op % REFLECTED], other, self, 2) if op >= REFLECTED else \
            _lazy_node(OP_NAMES[op], self, other, 2)
        if b is not None:
            return b
    return SLOW[op](self, other)


cdef object _slot_binary(object a, object b, int op):
    """``a op b`` from :class:`ArrayBase`'s slot, which Python calls with either operand
    an ArrayBase: ``a``'s forward operator, else ``b``'s reflected one. (A ScalarValue left
    ran its own method first: Python gave the slot its turn, so it is the reflected case.)"""
    if isinstance(a, ArrayBase) and type(a) is not ScalarValue:
        return _array_binary(a, b, op)
    return _array_binary(b, a, op + REFLECTED)


cdef object _array_unary(object self, int op):
    cdef object a = _small_buffer(self)
    if a is not None and _fits(a, None, 1):
        return _wrap(_apply_unary(op, a))
    a = _lazy_node(UNARY_NAMES[op - NEG], self, None, 1)
    return a if a is not None else SLOW[op](self)


cdef inline int _write_barrier(object memory) except -1:
    """``_writes.barrier(memory, "cpu")`` before a write: its scan of the pending nodes
    (compiled, ``_node.held_pending``) first, and the Python function only when some held
    pending expression may read ``memory`` (a loop's writes find none)."""
    cdef list held = held_pending(None, _exact_refcounts, memory)
    if held:
        _barrier(memory, "cpu", None, held)
    return 0


cdef object _array_inplace(object self, object other, int op):
    cdef object a = _small_buffer(self)
    cdef object b
    cdef object memory
    cdef object result
    cdef Py_ssize_t m = 0
    if a is None:
        return SLOW[INPLACE + op](self, other)
    b = _small_operand(other, &m)
    if b is None or not _fits(a, b, m):
        return SLOW[INPLACE + op](self, other)
    if not a.flags.writeable:       # NumPy refuses a read-only output before any cast check
        raise ValueError("output array is read-only")
    if _owned_input(self, _node_of(self)):
        memory = a                  # owned already: only the write barrier is left to do
        _write_barrier(memory)
    elif not PyList_GET_SIZE(DEFERRING) and _unclaimed_leaf(self):
        # a view an index has just made (a loop's ``c[i, :j] += v``): what _writes.target
        # would do is the barrier and the claim, which here is only setting its owner
        _node_of(self).owner = weakref.ref(self)
        memory = a
        _write_barrier(memory)
    else:
        memory = _target(self)
    # NumPy's in-place op (its casting check, overlap handling, fast scalar powers) on a copy,
    # then the copy written back: an error (integers to negative powers, errstate "raise")
    # leaves the target as it was. (The copy is of at most eager_max_size elements.)
    result = memory.copy()
    _apply_inplace(op, result, b)
    memory[...] = result
    return self


cdef object _ufunc_call(object ufunc, object name, int nin, tuple args, object slow):
    """A function form (``la.sqrt(x)``, ``la.maximum(x, y)``): NumPy's ufunc at once when its
    operands make a small operator (an n-d small computed CPU array and, for two, a small
    operand), else a pending node from a memoized rule (:func:`_lazy_node`), else ``slow``
    (the node builder's function form)."""
    cdef object a
    cdef object b
    cdef Py_ssize_t m = 0
    cdef Py_ssize_t nargs = len(args)
    if nargs != nin:                # (NumPy would take a further argument as ``out``)
        return slow(*args)
    if _on_values(args):
        # elements and numbers: NumPy's ufunc on the scalars, a scalar (``np.sqrt(a[i])``)
        a = ufunc(*[_scalar_of(x) for x in args])
        if isinstance(a, generic):
            return _make(a)
    elif nargs == 1:
        a = _small_buffer(args[0]) if type(args[0]) is LazyArray else None
        if a is not None and _fits(a, None, 1):
            return _wrap(ufunc(a))
    elif nargs == 2:
        a = _small_buffer(args[0]) if type(args[0]) is LazyArray else None
        if a is not None:
            b = _small_operand(args[1], &m)
            if b is not None and _fits(a, b, m):
                return _wrap(ufunc(a, b))
        else:
            b = _small_buffer(args[1]) if type(args[1]) is LazyArray else None
            if b is not None:
                a = _small_operand(args[0], &m)
                if a is not None and _fits(b, a, m):
                    return _wrap(ufunc(a, b))
    if nargs == 1:
        a = _lazy_node(name, args[0], None, 1)
    else:
        a = _lazy_node(name, args[0], args[1], 2)
    if a is not None:
        return a
    return slow(*args)


cdef bint _on_values(tuple args):
    """Whether ``args`` are elements (ScalarValue) and Python numbers, one element at least,
    and nothing is being explained or traced."""
    cdef bint value = False
    for x in args:
        t = type(x)
        if t is ScalarValue:
            value = True
        elif not (t is float or t is int or t is bool or t is complex):
            return False
    return value and not (PyList_GET_SIZE(DEFERRING) and _deferred())


cdef inline object _scalar_of(object x):
    cdef object v
    if type(x) is ScalarValue:
        v = (<ScalarBase>x)._v
        return v if v is not None else _value(x)
    return x


def ufunc_function(ufunc, str name, slow):
    """The function form of the registry's op ``name``, whose NumPy function is ``ufunc`` (one
    output): small operators at once, common pending ones from a memoized rule
    (:func:`_ufunc_call`), everything else ``slow``'s (keywords too: ``out=``, ``dtype=``, ...).
    Compiled, so that NumPy's warnings name the user's line."""
    cdef int nin = ufunc.nin
    def fn(*args, **kwargs):
        if kwargs:
            return slow(*args, **kwargs)
        return _ufunc_call(ufunc, name, nin, args, slow)
    return fn


cdef object getitem(object self, object key):
    """``LazyArray.__getitem__`` (``ArrayBase``'s slot): ``x[i]`` (one Python int per axis) of
    a computed CPU array is a ScalarValue of NumPy's scalar (its value now: the loop over
    elements' path); every other key, and every other device (the simulated cuda device holds
    NumPy arrays too), is the Python method's."""
    cdef Node node = _node_of(self)
    cdef object data = node.data
    cdef object element
    cdef object t = type(key)
    if isinstance(data, ndarray) and node.device == "cpu" and (
            t is int and len(node.shape) == 1 or
            t is tuple and element_key(<tuple>key, node.shape)):
        element = data[key]
        if isinstance(element, generic):
            return _make(element)
    elif data is not None and node.device == "cuda" and not PyList_GET_SIZE(DEFERRING) and (
            t is int and len(node.shape) == 1 or
            t is tuple and element_key(<tuple>key, node.shape)) \
            and not _eager_mode():
        # one element of a computed cuda array in lazy mode: a pending copy of its 0-d view,
        # which fuses into what reads it (``LazyArray.__getitem__``'s ``_element_of``, without
        # its Python frames: a loop over elements takes two a step)
        element = data[(key, Ellipsis) if t is int else <tuple>key + (Ellipsis,)]
        return _array(op_node("astype", element.dtype, (), "cuda", (leaf(element, "cuda"),),
                               element.dtype))
    elif not PyList_GET_SIZE(DEFERRING) and _owned_input(self, node):
        # a basic index of an input whose memory it owns already (no claim or anchor to do):
        # NumPy's view of the memory, with NumPy's errors (lazyarr/_views.py, _of_memory)
        view_key = _view_key(key)
        if view_key is not None:
            return _wrap(data[view_key])
    elif not PyList_GET_SIZE(DEFERRING) and _owned_gpu_input(self, node) and not (
            t is int and len(node.shape) == 1 or t is tuple and element_key(<tuple>key, node.shape)):
        # the same on cuda (an element is its value, a copy: the Python method's); a bad key
        # goes to the Python method, which raises NumPy's error before touching memory
        # (a slice bound that is no Python int, ``x[1.0:]``, is NumPy's error, not CuPy's view)
        view_key = _view_key(key)
        kept = _key_of(view_key) if view_key is not None else None
        if kept is not None:
            try:
                element = _device_view(node, data, view_key, kept)
            except Exception:
                return _getitem(self, key)
            return _array(leaf(element, "cuda"))
    elif data is None and _VIEWS is not None and not PyList_GET_SIZE(DEFERRING) \
            and type(self) is LazyArray and not (
            t is int and len(node.shape) == 1 or t is tuple and element_key(<tuple>key, node.shape)):
        # a basic index of a pending elementwise expression, pushed down to its inputs
        # (lazyarr/_views.py, view) where that is plain: no broadcast operand, no random
        # draw, no la.jit trace; the rest is the Python method's
        view_key = _view_key(key)
        if view_key is not None:
            element = _pushed_view(self, node, <tuple>view_key)
            if element is not None:
                return element
    return _getitem(self, key)


# lazyarr/_views.py's namespace (its store rule's limits are read at each view, as tests
# change them), its record, the pushable ops and _materialize.tape: given by setup_views()
cdef dict _VIEWS = None
cdef object _record = None
cdef object _pushable_ops = None
cdef object _tape = None
cdef object _shape_of = None
cdef dict _TAKEN = None
cdef dict _VIEW_SHAPES = {}         # (shape, view key) -> the view's shape (NumPy's, once)


def setup_views(dict views_namespace, tape):
    """Give :func:`_pushed_view` lazyarr/_views.py's module namespace and
    ``_materialize.tape``."""
    global _VIEWS, _record, _pushable_ops, _tape, _shape_of, _TAKEN
    _VIEWS, _tape = views_namespace, tape
    _record, _pushable_ops = views_namespace["record"], views_namespace["_PUSHABLE"]
    _shape_of, _TAKEN = views_namespace["shape_of"], views_namespace["_taken"]


cdef object _pushed_view(object self, Node node, tuple view_key):
    """``_views.view(self, itemgetter(view_key))`` for a pending ``node`` whose view goes down
    to its inputs, without its Python frames (a pending array's view cost ~5 µs, of which a
    stencil takes five a step); None where the Python method decides (the store rule says
    store, or the push is not plain)."""
    cdef object kept, shape_key, out_shape, pushed, out, fn
    cdef Node leaf_node
    # _views._pushable, inline (calling it cost ~0.5 µs of a ~3 µs view here)
    if node.op not in _pushable_ops or node.leaves is None \
            or len(node.leaves) > _VIEWS["MAX_PUSHED_LEAVES"] \
            or _TAKEN.get(id(self), 0) >= _VIEWS["MAX_PUSHED_VIEWS"] or _tape() is not None:
        return None
    for leaf_node in node.leaves:
        if leaf_node.op != "scalar":
            break
    else:
        return None
    kept = _key_of(view_key)
    if kept is None:
        return None
    fn = itemgetter(view_key)
    shape_key = (node.shape, kept)
    out_shape = _VIEW_SHAPES.get(shape_key)
    if out_shape is None:
        out_shape = _shape_of(node.shape, fn)       # NumPy's errors, before anything is built
        if len(_VIEW_SHAPES) >= 4096:
            _VIEW_SHAPES.clear()
        _VIEW_SHAPES[shape_key] = out_shape
    pushed = _push(node, node.shape, view_key, kept, out_shape)
    if pushed is None:
        return None
    out = _array(<Node>pushed)
    _record(self, out, fn)
    return out


cdef object _push(Node node, tuple shape, tuple view_key, object kept, tuple out_shape):
    """``_views._push`` for the plain case: constants stay, computed operands of the full
    shape are viewed (a GPU leaf's view kept on it: :func:`_device_view`), pending ones are
    built again over the views; None for a broadcast operand or a random draw."""
    cdef list src
    cdef object child, data
    if node.op == "scalar":
        return node
    data = node.data
    if data is not None:
        if node.shape != shape:
            return None
        if node.device == "cuda" and node.op == "leaf":
            return leaf(_device_view(node, data, view_key, kept), "cuda")
        return leaf(data[view_key], node.device or "cpu")
    if node.op == "counter" or node.shape != shape:
        return None
    src = []
    for child in node.src:
        child = _push(<Node>child, shape, view_key, kept, out_shape)
        if child is None:
            return None
        src.append(child)
    return op_node(node.op, node.dtype, out_shape, node.device, tuple(src), node.arg)


cdef object setitem(object self, object key, object value):
    """``LazyArray.__setitem__`` (``ArrayBase``'s slot): ``x[key] = value`` with a basic key
    (Python ints, slices, None, ``...``) into an input whose memory ``x`` owns already, of a
    computed value (a number, an element, a computed CPU array): the write barrier (pending
    readers of the memory are computed first), then NumPy's ``__setitem__`` on the memory, as
    the Python method does (lazyarr/_writes.py) without its steps that are no-ops here. Every
    other write is the Python method's."""
    cdef Node node = _node_of(self)
    cdef object data = node.data
    cdef object w
    cdef Py_ssize_t m = 0
    if not PyList_GET_SIZE(DEFERRING) and _view_key(key) is not None \
            and _owned_input(self, node):
        w = _small_operand(value, &m)
        if w is not None:
            _write_barrier(data)
            data[key] = w
            return
    elif type(value) is LazyArray and not PyList_GET_SIZE(DEFERRING) \
            and _writes_its_own_view(self, node, key, value):
        return
    _setitem(self, key, value, Py_REFCNT(value) <= _TEMPORARY_VALUE_REFS)


cdef bint _writes_its_own_view(object self, Node node, object key, object value):
    """Whether ``x[key] = v`` writes nothing: ``v`` holds the very view of ``x``'s GPU memory
    that ``key`` selects, the one kept on ``x``'s leaf (:func:`_device_view`), as in the write
    that ends an augmented assignment, ``ey[1:, :] -= d`` (Python calls ``ey.__setitem__(key,
    ey[key].__isub__(d))``: the subtraction has written ``ey`` already). ``_writes._writes_itself``'s
    answer without the Python method's frames (~2 µs of each of fdtd_2d's in-place statements
    on the simulated device); every other case is the Python method's, which asks it again.
    A read-only target goes the usual way, which refuses it."""
    cdef dict views = node.views
    cdef object view_key, kept, hit
    if views is None or not _owned_gpu_input(self, node):
        return False
    view_key = _view_key(key)
    if view_key is None:
        return False
    kept = _key_of(<tuple>view_key)
    if kept is None:
        return False
    hit = views.get(kept)
    # (a view whose shape was changed in place is no longer the one the key selects)
    return hit is not None and (<tuple>hit)[0] is (<Node>(<ArrayBase>value)._node).data \
        and (<tuple>hit)[0].shape == (<tuple>hit)[1] and not read_only(node.data)


cdef Py_ssize_t _probed_refs = 0


cdef object _probe_setitem(object self, object key, object value):
    global _probed_refs
    _probed_refs = Py_REFCNT(value)


cdef class _Probe:
    """``x[k] = v`` the way ``ArrayBase``'s slot takes it (the same wrapper, one call deep)."""
    def __setitem__(self, key, value):
        _probe_setitem(self, key, value)


cdef Py_ssize_t _temporary_value_refs():
    probe = _Probe()
    probe[0] = object()
    return _probed_refs


#: ``Py_REFCNT`` of the value of ``x[k] = f(y)`` inside ``setitem`` (reached from a slot as
#: ``_probe_setitem`` is), when it is a temporary of the statement: 1 on CPython 3.11 (the
#: interpreter's stack; the arguments are borrowed). A variable's value counts one more.
#: Measured at import, as interpreters differ.
cdef Py_ssize_t _TEMPORARY_VALUE_REFS = _temporary_value_refs()


cdef inline bint _no_pushed_views(object x):
    """``x`` is no pushed-down view and has none (lazyarr/_views.py's two tables)."""
    cdef object key = id(x)
    return key not in _BASE_OF and not _VIEWS_OF.get(key)


cdef bint _owns(object x):
    """Whether a view of computed ``x`` needs neither ``_views.claim`` nor ``_views.anchor``:
    ``x`` owns its node's memory already (``node.owner``) and has no pushed-down views
    (lazyarr/_views.py, "Memory ownership"). Compiled: each basic index and write of the fast
    paths here asks it (a loop's ``c[i, :j] += v`` three times)."""
    cdef object ref = _node_of(x).owner
    if ref is None or ref() is not x:
        return False
    return _no_pushed_views(x)


cdef bint _unclaimed_leaf(object x):
    """Whether ``x`` holds a computed CPU leaf that nobody has claimed and has no pushed-down
    views: ``_writes.target(x)`` is then the write barrier and ``_views.claim(x)``, which
    only sets the node's owner (``anchor`` has nothing to do)."""
    cdef Node node
    if type(x) is not LazyArray:
        return False
    node = _node_of(x)
    if node.op != "leaf" or node.owner is not None \
            or node.device != "cpu":
        return False
    return _no_pushed_views(x)


cdef bint _owned_input(object self, Node node):
    """Whether ``self`` (a LazyArray, not a ScalarValue, holding ``node``) is a computed CPU
    input whose memory it owns already (:func:`_owns`): a view of it or a write into
    it needs no claim or anchor, only the write barrier for a write."""
    return type(node.data) is ndarray and node.device == "cpu" and node.op == "leaf" \
        and type(self) is LazyArray and _owns(self)


cdef bint _owned_gpu_input(object self, Node node):
    """:func:`_owned_input` on cuda (its memory: CuPy's, or NumPy's on the simulated device)."""
    return node.device == "cuda" and node.op == "leaf" and node.data is not None \
        and type(self) is LazyArray and _owns(self)


cdef inline bint _basic_part(object k):
    return k is None or type(k) is slice or type(k) is int


cdef object _view_key(object key):
    """A basic key (Python ints, slices, None, ``...``) with a trailing ``...`` (so that
    NumPy returns a 0-d view, never a scalar), or None for every other key."""
    cdef bint ellipsis = False
    if type(key) is tuple:
        for k in <tuple>key:
            if k is Ellipsis:
                if ellipsis:
                    return None
                ellipsis = True
            elif not _basic_part(k):
                return None
        return key if ellipsis else key + (Ellipsis,)
    if key is Ellipsis:
        return (key,)
    if _basic_part(key):
        return (key, Ellipsis)
    return None


#: views kept per GPU leaf (a loop over many keys starts the table again when it is full)
cdef Py_ssize_t _MAX_DEVICE_VIEWS = 32


cdef object _key_of(tuple view_key):
    """A view key (:func:`_view_key`) as a dictionary key, or None where a slice bound is
    not None or a Python int (NumPy's error for ``x[1.5:]``, or an ``np.int64`` bound, stays
    the indexing's own)."""
    cdef Py_ssize_t n = len(view_key)
    cdef Py_ssize_t i
    cdef object k
    cdef list parts = [None] * n
    for i in range(n):
        k = view_key[i]
        if type(k) is slice:
            start, stop, step = (<slice>k).start, (<slice>k).stop, (<slice>k).step
            if not ((start is None or type(start) is int) and (stop is None or type(stop) is int)
                    and (step is None or type(step) is int)):
                return None
            parts[i] = (start, stop, step)
        else:
            parts[i] = k
    return tuple(parts)


cdef object _device_view(Node node, object data, tuple view_key, object key):
    """``data[view_key]`` for a GPU leaf ``node`` holding ``data``, made once per key and kept
    on the node (``node.views``): CuPy's indexing costs 2-4 µs on the H200's host (NumPy's
    0.2), and a stencil takes the same five views of its array at every step. The leaves
    made from one key share the CuPy view, as views of one memory (a write through either
    is seen by both, as NumPy's two views would). A view whose shape was changed in place
    (``a.shape = ...`` on what ``np.asarray`` gave) is made again. ``key``: ``_key_of(view_key)``
    (None: made, not kept)."""
    cdef dict views = node.views
    cdef object hit
    if key is not None and views is not None:
        hit = views.get(key)
        if hit is not None and (<tuple>hit)[0].shape == (<tuple>hit)[1]:
            return (<tuple>hit)[0]
    view = inherit_read_only(data, data[view_key])     # (CuPy's views have no flag)
    if key is not None:
        if views is None:
            node.views = views = {}
        elif len(views) >= _MAX_DEVICE_VIEWS:
            views.clear()
        views[key] = (view, view.shape)
    return view


def device_view(Node node, key):
    """``node.data[key]`` for a GPU leaf and a basic ``key``, as :func:`_device_view` keeps
    it (the memory a write selects, lazyarr/_writes.py); any other key indexes as it is."""
    view_key = _view_key(key)
    if view_key is None:
        return node.data[key]
    return _device_view(node, node.data, view_key, _key_of(view_key))


cpdef bint element_key(tuple key, tuple shape):
    """Whether ``key`` is one Python int per axis of ``shape`` (it picks one element; also
    ``LazyArray.__getitem__``'s test on the other devices)."""
    if len(key) != len(shape):
        return False
    for k in key:
        if type(k) is not int:
            return False
    return True


#: The operators of an element (:class:`ScalarBase`) and of an array (:class:`ArrayBase`): ``x op
#: y``, ``y op x`` (reflected: ``__radd__``; the comparisons have none, Python swaps them),
#: ``op x``: name -> operator code
METHODS = {}
#: the binary operators' stems (``__add__``), in operator-code order
BINARY_STEMS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
                "lshift", "rshift", "lt", "le", "eq", "ne", "gt", "ge")
for _code, _stem in enumerate(BINARY_STEMS):
    METHODS[f"__{_stem}__"] = _code
    if _code < LT:
        METHODS[f"__r{_stem}__"] = REFLECTED + _code
for _code, _stem in enumerate(("neg", "pos", "abs", "invert"), NEG):
    METHODS[f"__{_stem}__"] = _code


#: LazyArray's operators (:class:`ArrayBase`'s slots): the names of :data:`METHODS`, and
#: ``x op= y`` (``__iadd__``: code INPLACE + the operator's): name -> operator code
ARRAY_CODES = dict(METHODS)
for _code, _stem in enumerate(BINARY_STEMS[:LT]):
    ARRAY_CODES[f"__i{_stem}__"] = INPLACE + _code


@cython.auto_pickle(False)           # LazyArray's __reduce__ pickles it
# binary operators as C's slots take them (``__add__(a, b)``, ``self`` either operand): then
# Python's ``__add__`` and ``__radd__`` of the class are slot wrappers, and a Python subclass
# (LazyArray) inherits the slot itself; Cython's default would put method objects there, which
# a subclass calls through a lookup and a frame-less Python call (~0.1 µs an operator)
@cython.c_api_binop_methods(True)
cdef class ArrayBase:
    """The compiled base of ``LazyArray`` (lazyarr/_array.py): the array's node, and the
    slots of its operators, ``x[key]`` and ``x[key] = value``, which Python calls without a
    method lookup or a frame. Each is this module's fast path (small computed CPU operands at
    once, a pending node from a memoized rule, an element, a view or a write of an owned
    input); everything else is LazyArray's own method (``SLOW``, ``_getitem``, ``_setitem``),
    where the rules live. Where a ``ScalarValue`` (a subclass) is an operand, its own methods
    (:class:`ScalarBase`'s slots) come first, as Python gives a subclass's reflected operator
    priority."""
    cdef public object _node          # the expression node (lazyarr/_node.pyx)
    cdef object __weakref__

    @classmethod
    def _from_node(cls, node):
        """A new array of ``cls`` holding ``node`` (an element's class sets its fields too)."""
        cdef ArrayBase a = _new(cls, ScalarBase if issubclass(cls, ScalarBase) else ArrayBase)
        a._node = node
        return a

    def __getitem__(self, key):
        return getitem(self, key)

    def __setitem__(self, key, value):
        setitem(self, key, value)

    def __delitem__(self, key):
        raise ValueError("cannot delete array elements")

    def __matmul__(a, b):
        # computed CPU matrices or vectors: NumPy's product at once; else LazyArray's own
        cdef object out
        if type(a) is LazyArray and len((<Node>(<ArrayBase>a)._node).shape) < 3:
            out = computed_product("matmul", _np_matmul, a, b)
            if out is not None:
                return out
        if isinstance(a, ArrayBase):
            return _matmul_slow(a, b)
        return _rmatmul_slow(b, a)

    def __add__(a, b):
        return _slot_binary(a, b, ADD)

    def __iadd__(self, other):
        return _array_inplace(self, other, ADD)

    def __sub__(a, b):
        return _slot_binary(a, b, SUB)

    def __isub__(self, other):
        return _array_inplace(self, other, SUB)

    def __mul__(a, b):
        return _slot_binary(a, b, MUL)

    def __imul__(self, other):
        return _array_inplace(self, other, MUL)

    def __truediv__(a, b):
        return _slot_binary(a, b, TRUEDIV)

    def __itruediv__(self, other):
        return _array_inplace(self, other, TRUEDIV)

    def __floordiv__(a, b):
        return _slot_binary(a, b, FLOORDIV)

    def __ifloordiv__(self, other):
        return _array_inplace(self, other, FLOORDIV)

    def __mod__(a, b):
        return _slot_binary(a, b, MOD)

    def __imod__(self, other):
        return _array_inplace(self, other, MOD)

    def __and__(a, b):
        return _slot_binary(a, b, AND)

    def __iand__(self, other):
        return _array_inplace(self, other, AND)

    def __or__(a, b):
        return _slot_binary(a, b, OR)

    def __ior__(self, other):
        return _array_inplace(self, other, OR)

    def __xor__(a, b):
        return _slot_binary(a, b, XOR)

    def __ixor__(self, other):
        return _array_inplace(self, other, XOR)

    def __lshift__(a, b):
        return _slot_binary(a, b, LSHIFT)

    def __ilshift__(self, other):
        return _array_inplace(self, other, LSHIFT)

    def __rshift__(a, b):
        return _slot_binary(a, b, RSHIFT)

    def __irshift__(self, other):
        return _array_inplace(self, other, RSHIFT)

    def __pow__(a, b, mod):
        # (a modulus: NumPy's TypeError, "unsupported operand type(s) for ** or pow()")
        return _slot_binary(a, b, POW) if mod is None else NotImplemented

    def __ipow__(self, other):
        return _array_inplace(self, other, POW)

    def __lt__(self, other):
        return _array_binary(self, other, LT)

    def __le__(self, other):
        return _array_binary(self, other, LE)

    def __eq__(self, other):
        return _array_binary(self, other, EQ)

    def __ne__(self, other):
        return _array_binary(self, other, NE)

    def __gt__(self, other):
        return _array_binary(self, other, GT)

    def __ge__(self, other):
        return _array_binary(self, other, GE)

    def __neg__(self):
        return _array_unary(self, NEG)

    def __pos__(self):
        return _array_unary(self, POS)

    def __abs__(self):
        return _array_unary(self, ABS)

    def __invert__(self):
        return _array_unary(self, INVERT)


cdef void _slot_wrappers(type cls, tuple stems, type reference=int):
    """Make ``cls.__add__`` (...) the slot wrapper that Python's own type setup would have
    made from ``cls``'s binary slot (``int.__add__``'s kind; ``reference``: a type whose slot
    wrapper describes it, ``int`` or NumPy's ndarray for ``@``), where Cython put a method object
    beside the slot. A Python subclass inherits a slot only through a slot wrapper: through the
    method object, its operators would take Python's generic path (a lookup and a call per
    operator, ~0.1 µs). The wrapper is made as CPython makes it: ``int.__add__``'s description
    of the slot, and the C function that ``cls.__radd__`` (a slot wrapper already) wraps.
    tests/test_small_eager.py checks that LazyArray's operators are these slots."""
    cdef dict namespace = <dict>(<PyTypeObject*>cls).tp_dict
    cdef object forward
    cdef object reflected
    for stem in stems:
        forward = reference.__dict__[f"__{stem}__"]
        reflected = namespace[f"__r{stem}__"]
        assert type(forward) is type(reflected) is type(int.__add__)
        namespace[f"__{stem}__"] = PyDescr_NewWrapper(
            <PyTypeObject*>cls, (<PyWrapperDescrObject*>forward).d_base,
            (<PyWrapperDescrObject*>reflected).d_wrapped)
    PyType_Modified(<PyTypeObject*>cls)


_slot_wrappers(ArrayBase, ("add", "sub", "mul", "truediv", "floordiv", "mod", "and", "or", "xor",
                           "lshift", "rshift"))
_slot_wrappers(ArrayBase, ("matmul",), __import__("numpy").ndarray)

#: the sequences whose ``*`` is a repetition: NumPy's scalar leaves ``n * seq`` to them
#: (``np.int64(2) * [1]`` is ``[1, 1]``, ``np.float64(2) * [1]`` their TypeError), where a 0-d
#: array multiplies elementwise
_REPEATED = (list, tuple, str, bytes, bytearray)


@cython.auto_pickle(False)           # ScalarValue's __reduce__ pickles it
@cython.c_api_binop_methods(True)    # (as ArrayBase's: slot wrappers a subclass inherits)
cdef class ScalarBase(ArrayBase):
    """The compiled base of ``ScalarValue`` (lazyarr/_value.py), an element of a computed CPU
    array: its NumPy scalar (``_v``; None once its node is built), and the C slots of its
    operators, NumPy's scalar arithmetic at once (:func:`_binary`, :func:`_unary`). ``s op= y``
    rebinds, as for NumPy's scalars. ``ScalarValue(LazyArray, ScalarBase)`` takes its layout
    and these slots from here and everything else from LazyArray."""
    cdef public object _v

    def __add__(a, b):
        return _element_slot(a, b, ADD)

    def __iadd__(self, other):          # (``s op= y`` rebinds: ``s = s op y``)
        return _binary(self, other, ADD)

    def __sub__(a, b):
        return _element_slot(a, b, SUB)

    def __isub__(self, other):          # (``s op= y`` rebinds: ``s = s op y``)
        return _binary(self, other, SUB)

    def __mul__(a, b):
        if isinstance(a, _REPEATED) or isinstance(b, _REPEATED):
            return NotImplemented       # (NumPy's scalar: the sequence's repetition, or its error)
        return _element_slot(a, b, MUL)

    def __imul__(self, other):          # (``s op= y`` rebinds: ``s = s op y``)
        if isinstance(other, _REPEATED):
            # (Python tries no right-hand repetition for ``*=`` where the left operand is a
            # sequence type, as a LazyArray is: the sequence's own ``*``, NumPy's scalar's)
            return other * self
        return _binary(self, other, MUL)

    def __truediv__(a, b):
        return _element_slot(a, b, TRUEDIV)

    def __itruediv__(self, other):          # (``s op= y`` rebinds: ``s = s op y``)
        return _binary(self, other, TRUEDIV)

    def __floordiv__(a, b):
        return _element_slot(a, b, FLOORDIV)

    def __ifloordiv__(self, other):          # (``s op= y`` rebinds: ``s = s op y``)
        return _binary(self, other, FLOORDIV)

    def __mod__(a, b):
        return _element_slot(a, b, MOD)

    def __imod__(self, other):          # (``s op= y`` rebinds: ``s = s op y``)
        return _binary(self, other, MOD)

    def __and__(a, b):
        return _element_slot(a, b, AND)

    def __iand__(self, other):          # (``s op= y`` rebinds: ``s = s op y``)
        return _binary(self, other, AND)

    def __or__(a, b):
        return _element_slot(a, b, OR)

    def __ior__(self, other):          # (``s op= y`` rebinds: ``s = s op y``)
        return _binary(self, other, OR)

    def __xor__(a, b):
        return _element_slot(a, b, XOR)

    def __ixor__(self, other):          # (``s op= y`` rebinds: ``s = s op y``)
        return _binary(self, other, XOR)

    def __lshift__(a, b):
        return _element_slot(a, b, LSHIFT)

    def __ilshift__(self, other):          # (``s op= y`` rebinds: ``s = s op y``)
        return _binary(self, other, LSHIFT)

    def __rshift__(a, b):
        return _element_slot(a, b, RSHIFT)

    def __irshift__(self, other):          # (``s op= y`` rebinds: ``s = s op y``)
        return _binary(self, other, RSHIFT)

    def __pow__(a, b, mod):
        return _element_slot(a, b, POW) if mod is None else NotImplemented

    def __ipow__(self, other):
        return _binary(self, other, POW)

    def __lt__(self, other):
        return _binary(self, other, LT)

    def __le__(self, other):
        return _binary(self, other, LE)

    def __eq__(self, other):
        return _binary(self, other, EQ)

    def __ne__(self, other):
        return _binary(self, other, NE)

    def __gt__(self, other):
        return _binary(self, other, GT)

    def __ge__(self, other):
        return _binary(self, other, GE)

    def __neg__(self):
        return _unary(self, NEG)

    def __pos__(self):
        return _unary(self, POS)

    def __abs__(self):
        return _unary(self, ABS)

    def __invert__(self):
        return _unary(self, INVERT)


cdef object _element_slot(object a, object b, int op):
    """``a op b`` from :class:`ScalarBase`'s slot: ``a``'s forward operator when ``a`` is the
    element, else ``b``'s reflected one."""
    if isinstance(a, ScalarBase):
        return _binary(a, b, op)
    return _binary(b, a, op + REFLECTED)


_slot_wrappers(ScalarBase, ("add", "sub", "mul", "truediv", "floordiv", "mod", "and", "or", "xor",
                            "lshift", "rshift"))
