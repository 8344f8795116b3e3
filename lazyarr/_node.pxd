# cython: language_level=3
"""The C declarations of lazyarr/_node.pyx: ``Node``'s fields and the builders other compiled
modules call without a Python call (lazyarr/_value_ops.pyx: every small operator's result is a
new leaf, and every pending one an interned node)."""


cdef class Node:
    cdef public object op        # registry op name, or "leaf" / "scalar" / "counter"
    cdef public object dtype     # np.dtype
    cdef public object shape     # tuple[int, ...]
    cdef public object device    # None for scalars: they go anywhere
    cdef public tuple src        # the children
    cdef public object arg       # static operand: cast dtype, reduction spec, scalar value
    cdef public object data      # the buffer, once materialized (always set for leaves)
    cdef public object sid       # structure id (see the module docstring); None: too big, or stale
    cdef public object leaves    # interior nodes: the distinct leaves, in lowering order, or None
    cdef public object epoch     # interior nodes: the epoch the sid was last known valid in
    cdef public object owner     # a weak reference to the LazyArray that owns the memory, or None
                                 # (lazyarr/_views.py, claim)
    cdef public object views     # a GPU leaf: views of ``data`` made so far, by basic key, or
                                 # None (lazyarr/_value_ops.pyx, device_view)
    cdef public object origin    # a leaf a library call made: that call's record (the
                                 # function, bytes, flops: lazyarr/_fallback.py), or None
    cdef void *ikey              # its key in the intern table (a ``_Key``, a reference counted
                                 # by hand: no tp_clear empties it), or NULL (not interned): the
                                 # entry goes when the node does (Node.__dealloc__)
    cdef object __weakref__


cpdef object _as_leaf(Node node)
cpdef bint overlaps_any(object buffers, object memory, object skip_type)
cpdef list held_pending(object skip, bint exact, object memory=*)
cpdef Node leaf(object data, object device)
cpdef Node scalar(object value)
cpdef Node redescribed(Node node)
cpdef Node op_node(object op, object dtype, object shape, object device, tuple src,
                   object arg=*)
