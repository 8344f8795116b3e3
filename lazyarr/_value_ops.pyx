# cython: language_level=3
"""The hot path of ``ScalarValue`` (lazyarr/_value.py) in C: its operators and the element read
``x[i]`` of a computed array (the loop over elements, docs/notes/core.rst).

Compiled for two reasons. Speed: a Python-level operator method costs ~250 ns (the frame, the
bytecode of its checks, the new object), this ~100 ns more than NumPy's own scalar operator.
And warnings: NumPy warns from C at the innermost *Python* frame, which is the user's line
only if no Python frame of lazyarr is in between (as for NumPy's own scalars), so that
``warnings`` filters, ``-W error`` and the printed location name the user's code.

Everything that is not the common case (an operand that is not a number, a value whose node
was built, a call being explained or traced) goes to the Python functions :func:`setup` was
given, so the rules stay in one place, lazyarr/_value.py.
"""
from cpython.list cimport PyList_GET_SIZE
from cpython.object cimport PyObject, PyTypeObject

cdef extern from "Python.h":
    object PyType_GenericAlloc(PyTypeObject *tp, Py_ssize_t nitems)

# set once by setup() (lazyarr/_value.py)
cdef object ScalarValue = None
cdef object _value = None            # the value of a ScalarValue whose node was built
cdef object _operand = None          # the value of any other operand, or None
cdef object _weak_complex = None     # a Python complex left of a value
cdef object _deferred = None         # computing_is_deferred()
cdef list DEFERRING = None           # not empty while some call is explained or traced
cdef tuple SLOW = ()                 # LazyArray's operator methods, by operator code
cdef object _getitem = None          # LazyArray's __getitem__ (everything but x[i])
cdef object generic = None           # numpy.generic
cdef object ndarray = None           # numpy.ndarray

# operator codes: the forward binary operators, then their reflected forms (+ REFLECTED), then
# the unary ones; setup() gets LazyArray's method of each, in this order
cdef enum:
    ADD, SUB, MUL, TRUEDIV, FLOORDIV, MOD, POW, AND, OR, XOR, LSHIFT, RSHIFT,
    LT, LE, EQ, NE, GT, GE, REFLECTED
cdef enum:
    NEG = 2 * REFLECTED, POS, ABS, INVERT



def setup(cls, value, operand, weak_complex, deferred, list deferring, dict slow, getitem):
    """Give the module what it calls: ``cls`` (ScalarValue), ``value`` (ScalarValue._value),
    ``operand`` and ``weak_complex`` (lazyarr/_value.py), ``deferred`` and ``deferring``
    (lazyarr/_materialize.py), ``slow`` (LazyArray's operator methods by name, for those of
    :data:`METHODS`) and ``getitem`` (LazyArray's ``__getitem__``)."""
    global ScalarValue, _value, _operand, _weak_complex, _deferred, DEFERRING, SLOW, _getitem
    global generic, ndarray
    import numpy
    ScalarValue, _value, _operand, _weak_complex = cls, value, operand, weak_complex
    _deferred, DEFERRING, _getitem = deferred, deferring, getitem
    codes = {code: slow[name] for name, (_, code) in METHODS.items()}
    SLOW = tuple([codes.get(code) for code in range(INVERT + 1)])
    generic, ndarray = numpy.generic, numpy.ndarray


cdef inline object _make(object v):
    """A new ScalarValue holding ``v`` (what ``object.__new__`` does, without the call)."""
    cdef object s = PyType_GenericAlloc(<PyTypeObject*>ScalarValue, 0)
    s._v = v
    return s


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
    cdef object v = self._v
    cdef object w
    cdef object t = type(other)
    cdef bint reflected = op >= REFLECTED
    if t is ScalarValue:
        w = other._v
        if w is None:
            w = _value(other)
    elif t is float or t is int or t is bool:
        w = other
    elif t is complex:
        w = _weak_complex(other, self) if reflected else other
    else:
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
    cdef object v = self._v
    if PyList_GET_SIZE(DEFERRING) and _deferred():
        return SLOW[op](self)
    if v is None:
        v = _value(self)
    if op == NEG:
        return _make(-v)
    if op == POS:
        return _make(+v)
    if op == ABS:
        return _make(abs(v))
    return _make(~v)


def getitem(self, key):
    """``LazyArray.__getitem__``: ``x[i]`` (one Python int per axis) of a computed CPU array
    is a ScalarValue of NumPy's scalar (its value now: the loop over elements' path); every
    other key, and every other device (the simulated cuda device holds NumPy arrays too), is
    the Python method's."""
    cdef object node = self._node
    cdef object data = node.data
    cdef object element
    cdef object t = type(key)
    if isinstance(data, ndarray) and node.device == "cpu" and (
            t is int and len(node.shape) == 1 or
            t is tuple and element_key(<tuple>key, node.shape)):
        element = data[key]
        if isinstance(element, generic):
            return _make(element)
    return _getitem(self, key)


cpdef bint element_key(tuple key, tuple shape):
    """Whether ``key`` is one Python int per axis of ``shape`` (it picks one element; also
    ``LazyArray.__getitem__``'s test on the other devices)."""
    if len(key) != len(shape):
        return False
    for k in key:
        if type(k) is not int:
            return False
    return True


def _binary_method(str name, int op):
    def method(self, other):
        return _binary(self, other, op)
    method.__name__ = method.__qualname__ = name
    return method


def _unary_method(str name, int op):
    def method(self):
        return _unary(self, op)
    method.__name__ = method.__qualname__ = name
    return method


#: ScalarValue's methods: ``x op y``, ``y op x`` (reflected: ``__radd__``; the comparisons
#: have none, Python swaps them), ``op x``: name -> (the function, its operator code)
METHODS = {}
for _code, _stem in enumerate(("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and",
                               "or", "xor", "lshift", "rshift", "lt", "le", "eq", "ne", "gt",
                               "ge")):
    METHODS[f"__{_stem}__"] = (_binary_method(f"__{_stem}__", _code), _code)
    if _code < LT:
        METHODS[f"__r{_stem}__"] = (_binary_method(f"__r{_stem}__", REFLECTED + _code),
                                    REFLECTED + _code)
for _code, _stem in enumerate(("neg", "pos", "abs", "invert"), NEG):
    METHODS[f"__{_stem}__"] = (_unary_method(f"__{_stem}__", _code), _code)
