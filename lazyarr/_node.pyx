# cython: language_level=3, annotation_typing=False
"""Expression nodes: immutable, interned, and cheap to build.

A node is an operation applied to other nodes. Leaves hold a materialized buffer
(a NumPy or CuPy array); scalar nodes hold a NumPy scalar (a Python number already
converted to its operand dtype). Interior nodes are interned: building the same op
on the same children twice returns the same object, so common subexpressions are
shared by construction and ``is`` compares them.

When an interior node is materialized its buffer is stored in ``data``; from then
on every expression containing it treats it as a leaf (like ``dask.persist``), and the
node drops its sources and leaf list: a computed result holds its buffer and nothing
else, so the inputs it was computed from can be freed (``materialized``).

Structure ids. Every node also gets, when it is built, a small integer ``sid`` naming its
*structure*: what lowering it would produce, i.e. the ops, dtypes and static args of the
DAG, and which of its leaves are the same leaf (``x * x`` is not ``x * y``), but not the
data, the scalar values or the shapes. Beside it, ``leaves`` lists the DAG's distinct
leaves (inputs and scalars) in the order lowering numbers them. Two DAGs with one sid lower
to the same program, so a repeated expression skips lowering (see ``_program.lower_cached``).

A structure id describes the DAG as it was when the node was built: materializing an
interior node later turns it into a leaf. ``epoch`` (bumped after every materialization)
records when the node was built; a node from an older epoch is re-checked before its sid
is trusted (``is_fresh``). Large DAGs (more than ``MAX_LEAVES`` leaves) get no sid and
are always lowered: the leaf lists are copied on merge, which must stay O(1) per node.

Compiled (Cython, a module of its own: no .py of the same name to shadow) because every op a
user writes builds a node here: ``Node`` is an extension type, so building one and reading its
fields in ``_describe`` and ``op_node`` are C struct accesses rather than Python attribute
lookups (docs/notes/core.rst, "Per-call overhead"). The rest is the Python it was.
"""

cimport cython
cimport numpy as cnp
from cpython.ref cimport Py_DECREF, Py_INCREF

import itertools
import weakref
from typing import Any

import numpy as np

MAX_LEAVES = 16           # bigger DAGs get no structure id (sid None): lowered every time
_MAX_STRUCTURES = 1 << 16  # the table is cleared when it grows past this (ids are never reused)
_MAX_WALK = 64            # interior nodes is_fresh may visit before giving up

cnp.import_array()


cdef extern from "Python.h":
    ctypedef struct PyObject
    Py_ssize_t _refcount "Py_REFCNT"(PyObject *o)


cdef class Node:
    """One node of an expression DAG (see the module docstring; its fields: lazyarr/_node.pxd)."""

    def __init__(self, op, dtype, shape, device, tuple src=(), arg=None, data=None):
        self.op, self.dtype, self.shape, self.device = op, dtype, shape, device
        self.src, self.arg, self.data = src, arg, data
        self.sid, self.leaves, self.epoch, self.owner = None, None, 0, None
        self.views = self.origin = None

    def __repr__(self):
        return f"Node({self.op}, {self.dtype}, {self.shape})"

    def __dealloc__(self):
        # An interned node takes its table entry with it. The entry is this node's if it is
        # still this node's key object (a newer node of the same key, made after this one was
        # materialized, filed its own); the key lets go of the node first. ``ikey`` is a
        # pointer the cycle collector does not clear (see ``_Key``), so this runs for a node
        # the collector frees too.
        cdef object key
        if self.ikey == NULL:
            return
        key = <object>self.ikey
        (<_Key>key).node = NULL
        if _INTERNED is not None and _INTERNED.get(key) is key:
            _INTERNED.pop(key, None)     # (pop: held_pending, in a thread, may have taken it)
        self.ikey = NULL
        Py_DECREF(key)               # (the reference _store took by hand)


cdef class Hashed:
    """A base whose hash is the ``_hash`` it was given, read by a C slot: ``_program.Program``'s
    (a Python ``__hash__`` was a frame at every compile-cache lookup, ~500 instructions of a
    cached call: docs/notes/core.rst 2026-12-07i). A subclass that defines ``__eq__`` sets
    ``__hash__ = Hashed.__hash__`` (CPython then keeps this C slot, not a Python call)."""
    cdef public Py_hash_t _hash

    def __hash__(self):
        return self._hash


# ----------------------------------------------------------------------------- structures
_structures: dict[tuple[Any, ...], int] = {}
_next_sid = itertools.count()
_ticks = itertools.count(1)
epoch = 0   # bumped (after the buffer is stored) by every materialization: see materialized()


def structure(key: tuple[Any, ...]) -> int:
    """The id of a structure key. Ids are never reused, so clearing the table is safe."""
    sid = _structures.get(key)
    if sid is None:
        if len(_structures) >= _MAX_STRUCTURES:
            _structures.clear()
        sid = _structures.setdefault(key, next(_next_sid))
    return sid


def materialized(node: Node, data: Any) -> None:
    """Store a computed buffer on ``node`` and drop its expression (sources, leaves): the
    node is an input from now on and holds nothing but its buffer. Every sid built before
    now may be stale. (The epoch moves after the store: a node built in between sees the
    buffer, and is stale anyway.)

    Order matters to readers in other threads: the buffer is stored first, then the
    input sid, then the sources go. So a reader that finds ``src`` empty finds ``data``
    and the input sid set, and one that read ``src`` before it went may use it.
    """
    global epoch
    node.data = data
    node.sid = _as_leaf(node)
    node.leaves = ()
    node.src = ()
    epoch = next(_ticks)


cdef dict _input_sids = {}   # (dtype, ndim) -> structure(("input", dtype, ndim))


cdef object _last_dtype = None   # the last _input_sid asked: a loop's results are all alike
cdef Py_ssize_t _last_ndim = -1
cdef object _last_sid = None


cdef inline object _input_sid(object dtype, Py_ssize_t ndim):
    """``structure(("input", dtype, ndim))``, memoized: every small operator's result is a new
    leaf (~0.1 us of its ~1 us). (An id stays valid after the structure table is cleared:
    ids are never reused, and a key that got a new id there only misses caches.)"""
    global _last_dtype, _last_ndim, _last_sid
    if dtype is _last_dtype and ndim == _last_ndim:
        return _last_sid
    cdef tuple key = (dtype, ndim)
    cdef object sid = _input_sids.get(key)
    if sid is None:
        sid = _input_sids[key] = structure(("input", dtype, ndim))
    _last_dtype, _last_ndim, _last_sid = dtype, ndim, sid
    return sid


cpdef object _as_leaf(Node node):
    """The structure id of a materialized interior node seen as an input."""
    return _input_sid(node.dtype, len(node.shape))


cdef inline Py_ssize_t _find(tuple leaves, object leaf):
    """The index of ``leaf`` in ``leaves``, or -1: by identity, as nodes compare (a C loop
    over at most ``MAX_LEAVES``, where ``in`` and ``index`` ask each node's comparison)."""
    cdef Py_ssize_t i
    for i in range(len(leaves)):
        if <PyObject *>leaves[i] == <PyObject *>leaf:
            return i
    return -1


cdef void _describe(Node node, tuple src):
    """Set ``node``'s sid, leaves and epoch from its children's (and its op, dtype, arg).

    Leaves merge by first occurrence, left to right, which is the order lowering's
    depth-first walk numbers them in. When children share leaves the key records where
    each child's leaves land in the merged list (so ``x * x`` and ``x * y`` differ).
    (C loops and one list for the key: this runs for every node built.)
    """
    cdef object now = epoch
    cdef list key = [node.op, node.dtype, node.arg]     # then the children's sids
    cdef list parts = []
    cdef list new
    cdef Node c
    cdef tuple leaves, part
    cdef object leaf
    cdef bint shared = False
    cdef Py_ssize_t i, n = len(src)
    for c in src:
        if not c.src:                     # a leaf, a scalar, or materialized (its input sid)
            key.append(c.sid)
            parts.append((c,))
        elif c.data is not None:          # materialized: an input from now on
            key.append(_as_leaf(c))
            parts.append((c,))
        elif c.sid is None or c.epoch != now and not is_fresh(c, now):
            return
        else:
            known, sid = c.leaves, c.sid  # (in this order: _forget_structure clears sid first)
            if known is None or sid is None:
                return
            key.append(sid)
            parts.append(known)
    leaves = <tuple>parts[0]
    for i in range(1, n):
        part = <tuple>parts[i]
        new = None
        for leaf in part:
            if _find(leaves, leaf) >= 0:
                shared = True
            elif new is None:
                new = [leaf]
            else:
                new.append(leaf)
        if new is not None:
            leaves += tuple(new)
    if len(leaves) > MAX_LEAVES:
        return
    if shared:   # where each child's leaves are in the merged list
        new = []
        for part in parts:
            for leaf in part:
                new.append(_find(leaves, leaf))
        key.append(tuple(new))
    cdef tuple k = tuple(key)
    # (the table read as a dict: ``.get`` of an untyped global is an attribute lookup and a
    # method call, ~1k instructions a node; read at each call, as tests swap the table)
    cdef dict table = _structures
    sid = table.get(k)
    node.sid = structure(k) if sid is None else sid
    node.leaves, node.epoch = leaves, now


def is_fresh(node: Node, now: int) -> bool:
    """True if no interior node under ``node`` was materialized since its sid was set
    (so the sid still describes the DAG); marks the nodes checked with epoch ``now``.

    A child that has a buffer now was a leaf when its parent was built only if it is in
    the parent's leaves. Gives up (False) after ``_MAX_WALK`` interior nodes.

    A stale node found on the way loses its sid and leaves (with the nodes above it on the
    path walked): its leaves may hold inputs that only the since-materialized child read,
    and it would be found stale again at every later check anyway.
    """
    if node.sid is None or node.data is not None:
        return False
    seen: list[Node] = []
    parent: list[int] = []          # parent[i]: the index in ``seen`` of seen[i]'s parent
    stack: list[tuple[Node, int]] = [(node, -1)]
    while stack:
        n, up = stack.pop()
        if n.epoch == now:
            continue
        seen.append(n)
        parent.append(up)
        if len(seen) > _MAX_WALK:
            return False
        here = len(seen) - 1
        for c in n.src:
            if c.data is not None:        # a leaf, or materialized: since n was built?
                if c.op != "leaf" and c not in n.leaves:  # type: ignore[operator]
                    _forget_structure(seen, parent, here)
                    return False
            elif not c.src:               # a scalar: never changes
                continue
            elif c.sid is None:
                return False
            else:
                stack.append((c, here))
    for n in seen:
        n.epoch = now
    return True


def _forget_structure(seen: list[Node], parent: list[int], i: int) -> None:
    """Drop the sid and leaves of seen[i] and of the nodes above it on the path walked."""
    while i >= 0:
        n = seen[i]
        if n.data is None:
            n.sid, n.leaves = None, None
        i = parent[i]


# ----------------------------------------------------------------------------- interning
# The intern table: structural key -> that key, which points at the node (``_Key.node``, no
# reference: the node removes its entry when it dies). (A WeakValueDictionary would cost ~3 us
# per insertion, on the path of every op a user writes.)
# No lock: dict operations are atomic under the GIL, and the only race (two threads building
# the same node at once) costs a missed sharing, never a wrong node.
_interned: dict[Any, Any] = {}   # (a _Key, below, to itself: its ``node``)
cdef dict _INTERNED = _interned     # (the same dict, read from C: Node.__dealloc__ too)


class _Ref(weakref.ref):  # type: ignore[type-arg]
    """A weak reference that carries a key for its callback (cheaper than a closure per
    node): here its intern key; lazyarr/_views.py's record keeps ids in it."""
    __slots__ = ("key",)
    key: Any


# The intern key's hash, combined as CPython's tuple hash combines its items' (xxHash's
# primes and rotation: Objects/tupleobject.c), so the table spreads keys as it did tuples.
cdef extern from *:
    """
    #define LAZYARR_XXPRIME_1 ((unsigned long long)11400714785074694791ULL)
    #define LAZYARR_XXPRIME_2 ((unsigned long long)14029467366897019727ULL)
    #define LAZYARR_XXPRIME_5 ((unsigned long long)2870177450012600261ULL)
    static inline unsigned long long lazyarr_xx_step(unsigned long long acc, Py_hash_t lane) {
        acc += (unsigned long long)lane * LAZYARR_XXPRIME_2;
        acc = (acc << 31) | (acc >> 33);
        return acc * LAZYARR_XXPRIME_1;
    }
    """
    unsigned long long LAZYARR_XXPRIME_5
    unsigned long long lazyarr_xx_step(unsigned long long acc, Py_hash_t lane)


@cython.final
cdef class _Key:
    """An interior node's key in the intern table: its op, dtype and arg, and its children's
    addresses (what ``id()`` gives). Equal when those are (as the tuple it replaces was);
    its hash is computed once, where a tuple's was computed again at every use: the lookup,
    the store, and the two at the node's death (``Node.__dealloc__``): ~1,000 instructions of
    each node's life (docs/notes/core.rst 2026-12-07i)."""
    cdef object op, dtype, arg
    cdef size_t a, b             # the first two children's addresses (0: none)
    cdef tuple more              # all children's ids when there are more than two, else None
    cdef Py_hash_t h
    cdef void *node              # the node filed under this key (a table's value), not counted:
                                 # the node clears it and removes its entry when it dies

    def __hash__(self):
        return self.h

    def __eq__(self, other):
        if type(other) is not _Key:
            return NotImplemented
        cdef _Key o = <_Key>other
        return (self.h == o.h and self.a == o.a and self.b == o.b
                and (self.op is o.op or self.op == o.op)
                and (self.dtype is o.dtype or self.dtype == o.dtype)
                and (self.arg is o.arg or self.arg == o.arg)
                and (self.more is o.more or self.more == o.more))

    def __call__(self):
        """The node filed under this key, or None (as a weak reference reads)."""
        return <object>self.node if _alive(self.node) else None

    def __repr__(self):
        ids = self.more if self.more is not None else tuple([p for p in (self.a, self.b) if p])
        return f"_Key({self.op!r}, {self.dtype!r}, {self.arg!r}, {ids!r})"


cdef inline bint _alive(void *node):
    """Whether a ``_Key``'s node may be referenced: set, and not being freed. (Its reference
    count is 0 from the start of its dealloc, where weak references' callbacks may run Python,
    a lookup too, until its ``__dealloc__`` clears the pointer: a new reference then would
    free it twice.)"""
    return node != NULL and _refcount(<PyObject *>node) > 0


cdef _Key _key_of(object op, object dtype, object arg, tuple src):
    """The intern key of a node of ``op`` on ``src`` (see ``_Key``)."""
    cdef _Key key = _Key.__new__(_Key)
    cdef Py_ssize_t n = len(src)
    cdef unsigned long long acc = LAZYARR_XXPRIME_5
    key.op, key.dtype, key.arg = op, dtype, arg
    acc = lazyarr_xx_step(acc, hash(op))
    acc = lazyarr_xx_step(acc, hash(dtype))
    acc = lazyarr_xx_step(acc, hash(arg))
    if n <= 2:
        if n >= 1:
            key.a = <size_t><void *>src[0]
            acc = lazyarr_xx_step(acc, <Py_hash_t>key.a)
        if n == 2:
            key.b = <size_t><void *>src[1]
            acc = lazyarr_xx_step(acc, <Py_hash_t>key.b)
    else:
        key.more = tuple([id(c) for c in src])
        acc = lazyarr_xx_step(acc, hash(key.more))
    acc += <unsigned long long>(n + 3)
    key.h = <Py_hash_t>acc
    if key.h == -1:
        key.h = 1546275796
    return key


cdef Node _store(_Key key, Node node):
    """File ``node`` under ``key``: the table's value is the key itself, which points at the
    node without a reference (no weak reference made, cleared and freed per node: ~350
    instructions of each node's life, docs/notes/core.rst 2026-12-07i); the node holds its key
    (``ikey``, a reference taken by hand, out of the cycle collector's ``tp_clear``) and removes
    the entry in ``__dealloc__``, whichever way it dies."""
    key.node = <void *>node
    _INTERNED[key] = key
    Py_INCREF(key)
    node.ikey = <void *>key
    return node


cdef object _lookup(_Key key):
    """The live interned node for ``key``. A materialized node holds the value its inputs
    had when it ran; a new expression reads the buffers as they are now, so it gets a fresh
    node (the old one keeps its memo). A node the cycle collector is clearing (its fields
    are None then, ``src`` too, until its ``__dealloc__`` removes the entry) is not one."""
    cdef object found = _INTERNED.get(key)
    cdef Node node
    if found is not None and _alive((<_Key>found).node):
        node = <Node>(<_Key>found).node
        if node.data is None and node.src is not None:
            return node
    return None


cdef extern from "Python.h":
    Py_ssize_t Py_REFCNT(object o)
    int PyDict_Next(object d, Py_ssize_t *pos, PyObject **key, PyObject **value)


#: what :func:`_extent` found: no element, the bytes ``[lo, hi)``, or no array it can read
#: (the caller then takes the safe side)
cdef enum:
    _NO_ELEMENT = 0
    _EXTENT = 1
    _UNKNOWN = 2
    _MAX_DIMS = 64      # the most dims a GPU array's extent is read for (NumPy's own limit)


cdef int _span(const char *start, Py_ssize_t itemsize, Py_ssize_t nd, const Py_ssize_t *dims,
               const Py_ssize_t *strides, const char **lo, const char **hi):
    """The bytes ``[lo, hi)`` that an array's elements lie in, from its first element's address,
    shape and strides (``_EXTENT``), or ``_NO_ELEMENT``."""
    cdef const char *end = start + itemsize
    cdef Py_ssize_t d
    for d in range(nd):
        if dims[d] == 0:
            return _NO_ELEMENT
        if strides[d] > 0:
            end += (dims[d] - 1) * strides[d]
        else:
            start += (dims[d] - 1) * strides[d]
    lo[0], hi[0] = start, end
    return _EXTENT


cdef int _extent(object data, const char **lo, const char **hi) except -1:
    """``data``'s byte extent (:func:`_span`): a NumPy array's, or a GPU array's from
    ``data.ptr``, ``shape``, ``strides`` and ``itemsize`` (CuPy's, as ``_devices._extent`` reads
    them; CUDA's unified virtual addresses keep host and device pointers apart, so a host
    buffer and a GPU one never seem to overlap); ``_UNKNOWN`` for anything else."""
    cdef Py_ssize_t dims[_MAX_DIMS]
    cdef Py_ssize_t strides[_MAX_DIMS]
    cdef Py_ssize_t nd, d
    if type(data) is np.ndarray:
        return _span(<const char *>cnp.PyArray_BYTES(<cnp.ndarray>data),
                     cnp.PyArray_ITEMSIZE(<cnp.ndarray>data), cnp.PyArray_NDIM(<cnp.ndarray>data),
                     <const Py_ssize_t *>cnp.PyArray_DIMS(<cnp.ndarray>data),
                     <const Py_ssize_t *>cnp.PyArray_STRIDES(<cnp.ndarray>data), lo, hi)
    try:
        shape, steps, ptr, itemsize = data.shape, data.strides, data.data.ptr, data.itemsize
        nd = len(shape)
        if nd > _MAX_DIMS or len(steps) != nd:
            return _UNKNOWN
        for d in range(nd):
            dims[d], strides[d] = shape[d], steps[d]
        return _span(<const char *><Py_ssize_t>ptr, itemsize, nd, dims, strides, lo, hi)
    except (AttributeError, TypeError):
        return _UNKNOWN


cdef bint _may_overlap(object data, const char *lo, const char *hi):
    """Whether the buffer ``data`` may share a byte with ``[lo, hi)``: the byte extents of a
    NumPy (or GPU) array overlap (``np.may_share_memory``'s answer); anything else may."""
    cdef const char *start
    cdef const char *end
    cdef int found = _extent(data, &start, &end)
    if found == _UNKNOWN:
        return True
    return found == _EXTENT and start < hi and lo < end


cdef bint _may_read(Node root, const char *lo, const char *hi):
    """Whether a computed buffer the pending ``root`` reads may overlap ``[lo, hi)``."""
    cdef Node n
    cdef bint deep = False
    if root.leaves is not None and root.epoch == epoch:
        # (leaves of an older epoch may be stale: a child materialized since is read as
        # memory now, where the leaves still list what it read; the walk below sees it)
        for n in root.leaves:
            if n.data is not None and _may_overlap(n.data, lo, hi):
                return True
        return False
    for n in root.src:                       # (most often one level: no walk to allocate)
        if n.data is not None:
            if _may_overlap(n.data, lo, hi):
                return True
        elif n.src:
            deep = True
    if not deep:
        return False
    cdef list stack = [root]
    cdef set seen = set()
    while stack:
        n = <Node>stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.data is not None:
            if _may_overlap(n.data, lo, hi):
                return True
        else:
            stack.extend(n.src)
    return False


cpdef bint overlaps_any(object buffers, object memory, object skip_type):
    """Whether one of ``buffers`` (but those of ``skip_type``) may share a byte with
    ``memory``, an array about to be written: ``np.may_share_memory``'s answer (byte
    extents), ``memory``'s extent read once. A buffer that is no array may (the safe side).
    The cuda backend's write into memory asks it of every input (``run_into``): on a GPU two
    ``_devices._extent`` walks in Python per input before (~1-2 µs each on the H200's host)."""
    cdef const char *lo = NULL
    cdef const char *hi = NULL
    cdef int found = _extent(memory, &lo, &hi)
    cdef object a
    if found == _NO_ELEMENT:
        return False
    for a in buffers:
        if type(a) is skip_type:
            continue
        if found == _UNKNOWN or _may_overlap(a, lo, hi):
            return True
    return False


cpdef list held_pending(object skip, bint exact, object memory=None):
    """The live pending interior nodes that something besides other pending nodes holds (a
    LazyArray, a user's variable), but ``skip``, in build order (children before parents):
    the candidates of the write barrier (lazyarr/_writes.py). A node held only by pending
    parents is a part of their kernels. Without ``exact`` reference counts (see
    ``_views.EXACT_REFCOUNTS``) every pending node but ``skip`` is a candidate: the safe side.
    ``memory`` (a NumPy or GPU array about to be written): only the candidates whose computed
    inputs may share its memory (byte extents), as ``np.may_share_memory`` would tell (GPU
    arrays by their pointers: a write into a CuPy array filtered nothing before 2026-12-06f,
    and vadv's barrier asked Python about every held pending node, half its host time).

    Compiled: it walks the intern table at every write (a stencil step's barrier was ~10 µs
    of Python on the H200's host, most of it this count). Materialized nodes leave the table
    as the walk meets them (a lookup treats them as missing already), so a script holding
    thousands of computed results does not pay for them at every write; the extent test
    keeps thousands of held pending ones unrelated to the target at ~20 ns each."""
    cdef list pending = []
    cdef list stale = []
    cdef list candidates = []
    cdef dict parents
    cdef list held = []
    cdef Node n
    cdef Node c
    cdef object node
    cdef object k
    cdef const char *lo = NULL
    cdef const char *hi = NULL
    cdef bint filtered = memory is not None
    cdef Py_ssize_t pos = 0
    cdef PyObject *key
    cdef PyObject *ref
    cdef int found
    if filtered:
        found = _extent(memory, &lo, &hi)
        if found == _NO_ELEMENT:
            return held                      # (no element is written)
        filtered = found == _EXTENT          # (not an array: every candidate stays)
    # One pass over the table without allocating Python objects (which could run the cycle
    # collector, whose callbacks edit the table): the pending interior nodes, and the keys of
    # materialized ones, removed after the pass. (A node removes its own entry when it dies. A
    # node the cycle collector is clearing has ``src`` None: not pending.)
    while PyDict_Next(_interned, &pos, &key, &ref):
        if not _alive((<_Key>ref).node):     # (being freed: its __dealloc__ removes the entry)
            continue
        node = <object>(<_Key>ref).node                     # (a new reference, from here)
        if (<Node>node).data is None:
            if (<Node>node).src:
                pending.append(node)
        else:
            stale.append(<object>key)
    node = None
    for k in stale:
        ref_obj = _interned.get(k)
        if ref_obj is not None and (ref_obj() is None or ref_obj().data is not None):
            del _interned[k]
    ref_obj = None
    for n in pending:
        if n is not skip and (not filtered or _may_read(n, lo, hi)):
            candidates.append(n)
    if not candidates or not exact:
        return candidates
    # held from outside: references beyond ``pending``, ``candidates``, the loop variable and
    # each pending parent's ``src``
    parents = {id(n): 0 for n in candidates}
    for n in pending:
        for c in n.src:
            k = id(c)
            if k in parents:
                parents[k] += 1
    c = None                                 # (the last child: no reference left here)
    for n in candidates:
        if Py_REFCNT(n) - 3 - <Py_ssize_t>parents[id(n)] > 0:
            held.append(n)
    return held


cpdef Node leaf(object data, object device):
    """A materialized buffer as a node. Leaves are not interned: one per buffer wrapper."""
    cdef Node node = Node.__new__(Node)        # (the fields set here: no __init__ call)
    cdef object shape
    if type(data) is np.ndarray:               # (NumPy's getters, without the attribute lookups)
        node.dtype = <object>cnp.PyArray_DESCR(<cnp.ndarray>data)
        node.shape = cnp.PyArray_IntTupleFromIntp(cnp.PyArray_NDIM(<cnp.ndarray>data),
                                                  cnp.PyArray_DIMS(<cnp.ndarray>data))
    else:
        shape = data.shape
        node.dtype, node.shape = data.dtype, shape if type(shape) is tuple else tuple(shape)
    node.op, node.device, node.src, node.data, node.epoch = "leaf", device, (), data, 0
    node.sid = _input_sid(node.dtype, len(node.shape))
    return node


def counter(cmap: Any, device: str) -> Node:
    """The counters of a fused random draw (a ``_counters.CounterMap``, in ``arg``): an input
    of the program that takes no memory. Like leaves, not interned; never materialized."""
    node = Node("counter", cmap.dtype, cmap.shape, device, arg=cmap)
    node.sid = structure(("counter", len(cmap.shape)))
    return node


# Constants have a table of their own: the write barrier walks the table of interior nodes
# at every write, where a loop's many constants would only be skipped (docs/notes/core.rst).
_scalars: dict[tuple[Any, ...], weakref.ref[Node]] = {}


def _forget_scalar(ref: _Ref) -> None:
    if _scalars.get(ref.key) is ref:
        del _scalars[ref.key]


cpdef Node scalar(object value):
    """A constant operand (already of its final dtype); interned by dtype and bit pattern."""
    cdef tuple key = (value.dtype, value.tobytes())
    cdef object ref = _scalars.get(key)
    cdef object node = ref() if ref is not None else None
    if node is None:
        node = Node("scalar", value.dtype, (), None, arg=value)
        node.sid = structure(("scalar", value.dtype))
        ref = _Ref(node, _forget_scalar)
        ref.key = key
        _scalars[key] = ref
    return node


cpdef Node redescribed(Node node):
    """``node`` with its sid and leaves set again from its children as they are now (after
    some of them were materialized: see ``_build._bounded``)."""
    _describe(node, node.src)
    return node


cpdef Node op_node(object op, object dtype, object shape, object device, tuple src,
                   object arg=None):
    """An interior node, interned on (op, dtype, arg, children's identities).

    A node that was already materialized is not reused: it memoizes the buffers' values at
    that time, while a newly built expression must read them when it is materialized.

    Keys use the children's ids: a child cannot die (and its id be reused) while
    a parent referencing it is alive, and the parent's entry dies with the parent.
    """
    cdef _Key key = _key_of(op, dtype, arg, src)
    cdef object found = _lookup(key)
    cdef Node node
    if found is not None:
        return <Node>found
    node = Node.__new__(Node)       # (Node.__init__'s fields, without its argument parsing)
    node.op, node.dtype, node.shape, node.device = op, dtype, shape, device
    node.src, node.arg, node.epoch = src, arg, 0
    _describe(node, src)
    return _store(key, node)
