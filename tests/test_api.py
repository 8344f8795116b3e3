"""The public API: names, creation, conversion, interop, printing, explain, the DAG."""
from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _node
from lazyarr._registry import OPS

PUBLIC_FUNCTIONS = """asarray zeros ones full empty arange linspace zeros_like ones_like full_like
empty_like abs negative positive exp exp2 expm1 log log2 log10 log1p sqrt cbrt square reciprocal
sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh floor ceil trunc
rint sign maximum minimum fmax fmin hypot power isnan isinf isfinite logical_and logical_or
logical_xor logical_not where clip astype sum prod min max mean var std any all argmin argmax
config set_config get_config explain""".split()


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_public_names_exist(name):
    fn = getattr(la, name)
    assert callable(fn) and fn.__doc__


def test_dtypes_and_constants():
    for name in "bool_ int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64".split():
        assert np.dtype(getattr(la, name)) == np.dtype(getattr(np, name))
    assert (la.pi, la.e, la.inf) == (np.pi, np.e, np.inf) and np.isnan(la.nan)


def test_private_numpy_clip_ufunc_is_there():
    # The registry's clip op is np._core.umath.clip (pinned numpy<2.5): fail loudly if it moves.
    assert isinstance(OPS["clip"].numpy, np.ufunc) and OPS["clip"].numpy.nin == 3


def test_creation_matches_numpy():
    pairs = [
        (la.zeros((2, 3)), np.zeros((2, 3))), (la.ones(4, dtype=la.int8), np.ones(4, np.int8)),
        (la.full((2,), 7), np.full((2,), 7)), (la.full(3, 1.5, dtype=la.float32), np.full(3, 1.5, np.float32)),
        (la.arange(5), np.arange(5)), (la.arange(1, 10, 2.5), np.arange(1, 10, 2.5)),
        (la.arange(3, dtype=la.uint16), np.arange(3, dtype=np.uint16)),
        (la.linspace(0, 1, 7), np.linspace(0, 1, 7)),
        (la.linspace(0, 1, 4, endpoint=False, dtype=la.float32),
         np.linspace(0, 1, 4, endpoint=False, dtype=np.float32)),
    ]
    for got, want in pairs:
        assert got.is_materialized and got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    x = la.asarray(np.arange(6, dtype=np.int16).reshape(2, 3))
    for fn, want in [(la.zeros_like, np.zeros((2, 3), np.int16)), (la.ones_like, np.ones((2, 3), np.int16))]:
        got = fn(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), want)
    assert la.empty((3, 2)).shape == (3, 2) and la.empty_like(x).dtype == np.int16
    np.testing.assert_array_equal(np.asarray(la.full_like(x, 9)), np.full((2, 3), 9, np.int16))
    assert la.zeros_like(x, dtype=la.float32).dtype == np.float32


@pytest.mark.parametrize("obj", [np.array(["a"]), np.array([1 + 2j], np.clongdouble),
                                 np.array([None], dtype=object),
                                 np.array(["2020-01-01"], dtype="datetime64[D]")])
def test_unsupported_dtypes_are_clear_errors(obj):
    with pytest.raises(TypeError, match="lazyarr does not support dtype"):
        la.asarray(obj)


def test_asarray_references_numpy_buffers():
    a = np.arange(4.0)
    x = la.asarray(a)
    assert np.shares_memory(np.asarray(x), a)
    y = x * 2          # pending: reads the buffer when materialized
    a[0] = 10
    assert np.asarray(y)[0] == 20


def test_attributes_and_conversions():
    x = la.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    y = x + 1
    assert (y.shape, y.dtype, y.ndim, y.size, y.device, len(y)) == ((3, 4), np.float32, 2, 12, "cpu", 3)
    assert not y.is_materialized
    s = y.sum()
    assert s.is_materialized and s.shape == () and isinstance(s, la.LazyArray)
    assert float(s) == 78.0 and int(s) == 78 and s.item() == 78.0 and bool(s)
    assert np.asarray(s).dtype == np.float32
    np.testing.assert_array_equal(y.to_numpy(), np.arange(1, 13, dtype=np.float32).reshape(3, 4))
    with pytest.raises(TypeError, match="unsized"):
        len(s)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(y)
    np.testing.assert_array_equal(np.asarray(y[1]), [5, 6, 7, 8])
    np.testing.assert_array_equal(np.asarray(x[::-2, 1]), [9, 1])


def test_repr_of_pending_does_not_compute():
    x = la.asarray(np.arange(3.0))
    y = la.sqrt(abs(x * 2 - 1))
    text = repr(y)
    assert not y.is_materialized
    assert "pending" in text and "shape=(3,)" in text and "float64" in text and "device=cpu" in text
    assert "multiply -> subtract -> abs -> sqrt" in text
    y.compute()
    assert repr(y) == "LazyArray([1.        , 1.        , 1.73205081])"
    assert str(la.asarray(np.array([1, 2], np.int8)) + 1) == "[2 3]"   # printing shows values
    assert repr(la.ones(2, dtype=la.float32)) == "LazyArray([1., 1.], dtype=float32)"


def test_numpy_protocols():
    a = np.linspace(-1, 1, 9).astype(np.float32)
    x = la.asarray(a)
    e = np.exp(x)                         # __array_ufunc__: stays lazy
    assert isinstance(e, la.LazyArray) and not e.is_materialized
    np.testing.assert_array_equal(np.asarray(e), np.exp(a))
    m = np.maximum(a, x)                  # NumPy array on the left defers to us
    assert isinstance(m, la.LazyArray)
    s = np.sum(x * 2, axis=0)             # __array_function__ -> la.sum
    assert isinstance(s, la.LazyArray) and float(s) == pytest.approx(float(np.sum(a * 2)))
    assert isinstance(np.mean(x), la.LazyArray) and isinstance(np.clip(x, 0, 1), la.LazyArray)
    assert isinstance(np.where(x > 0, x, 0), la.LazyArray)
    assert isinstance(a + x, la.LazyArray) and isinstance(2.0 * x, la.LazyArray)
    r = np.add.reduce(x * 2)              # ufunc.reduce -> the matching reduction (axis 0)
    assert isinstance(r, la.LazyArray) and float(r) == pytest.approx(float(np.add.reduce(a * 2)))
    m2 = np.maximum.reduce(la.asarray(np.arange(6.0).reshape(2, 3)), axis=1, keepdims=True)
    np.testing.assert_array_equal(np.asarray(m2), [[2.0], [5.0]])
    c = np.concatenate([x, x])            # la.concatenate (tests/test_concatenate.py)
    assert isinstance(c, la.LazyArray)
    np.testing.assert_array_equal(np.asarray(c), np.concatenate([a, a]))


def test_operators_match_numpy():
    rng = np.random.default_rng(0)
    a = rng.integers(-50, 50, 20).astype(np.int32)
    b = rng.integers(1, 50, 20).astype(np.int32)
    x, y = la.asarray(a), la.asarray(b)
    cases = [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b), (x // y, a // b),
             (x % y, a % b), (x ** 2, a ** 2), (-x, -a), (+x, +a), (abs(x), abs(a)), (~x, ~a),
             (x & y, a & b), (x | y, a | b), (x ^ y, a ^ b), (x << 2, a << 2), (x >> 1, a >> 1),
             (x == y, a == b), (x != y, a != b), (x < y, a < b), (x <= y, a <= b), (x > y, a > b),
             (x >= y, a >= b), (3 - x, 3 - a), (7 // y, 7 // b), (2 ** y % 5, 2 ** b % 5),
             (1.5 / y, 1.5 / b)]
    for got, want in cases:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)


def test_inplace_operators_write_into_memory_and_check_casting():
    a = np.arange(4, dtype=np.float32)
    x = la.asarray(a)                                  # the user's memory, as np.asarray
    alias, view, pending = x, x[1:], x * 1
    x += 1
    x *= 2.0
    assert alias is x and x.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(x), [2, 4, 6, 8])
    np.testing.assert_array_equal(a, [2, 4, 6, 8])     # written in place, as NumPy
    np.testing.assert_array_equal(np.asarray(view), [4, 6, 8])
    np.testing.assert_array_equal(np.asarray(pending), [0, 1, 2, 3])  # read before the write
    lazy = la.asarray(a) * 1                           # pending: no memory to share
    lazy += 1
    assert not lazy.is_materialized
    np.testing.assert_array_equal(np.asarray(lazy), [3, 5, 7, 9])
    i = la.asarray(np.arange(3))
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
        i += 1.5
    with pytest.raises(ValueError, match="non-broadcastable output"):
        i += la.ones((2, 3), dtype=la.int64)
    i //= 2
    np.testing.assert_array_equal(np.asarray(i), [0, 0, 1])


def test_errors_at_the_line_that_wrote_them():
    x = la.asarray(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="broadcast"):
        x + la.ones(4)
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        la.asarray(np.ones(3, np.int8)) + 300
    with pytest.raises(TypeError, match="ufunc 'bitwise_and' not supported"):
        x & 1
    with pytest.raises(np.exceptions.AxisError):
        x.sum(axis=1)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        la.max(la.zeros((0, 3)))
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtype'"):
        la.max(x, dtype=la.float64)
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        la.asarray(np.arange(3)) ** -1


def test_devices_never_mix():
    cpu = la.asarray(np.ones(3))
    fake_cuda = la.LazyArray._from_node(_node.leaf(np.ones(3), "cuda"))  # a node that claims cuda
    with pytest.raises(ValueError, match="different devices"):
        cpu + fake_cuda
    with pytest.raises(ValueError, match="cannot mix a host"):
        fake_cuda + np.ones(3)


def test_common_subexpressions_are_one_node_and_computed_once():
    x = la.asarray(np.arange(5.0))
    y = la.asarray(np.arange(5.0) + 1)
    assert (x * y)._node is (x * y)._node            # interned
    z = la.sin(x * y) + la.cos(x * y) * (x * y)
    plan = la.explain(z)
    assert plan.program.ops().count("multiply") == 2  # x*y once, cos(..)*(x*y) once
    np.testing.assert_allclose(np.asarray(z), np.sin(np.arange(5.0) * (np.arange(5.0) + 1))
                               + np.cos(np.arange(5.0) * (np.arange(5.0) + 1)) * np.arange(5.0) * (np.arange(5.0) + 1))


def test_same_structure_over_new_data_has_the_same_program_key():
    def expr(a):
        x = la.asarray(a)
        return la.sum(la.sqrt(abs(x * 2.0 + 1.5)))
    k1 = la.explain(la.sqrt(abs(la.asarray(np.ones(4)) * 2.0 + 1.5))).program
    k2 = la.explain(la.sqrt(abs(la.asarray(np.zeros(9)) * 3.0 + 0.5))).program
    assert k1 == k2                                   # scalars are parameters, not constants
    assert float(expr(np.ones(4))) == pytest.approx(4 * np.sqrt(3.5))


def test_ten_thousand_op_chain():
    a = np.linspace(0, 1, 16)
    x = la.asarray(a)
    y = x
    for i in range(10_000):
        y = y + 1 if i % 2 else y * 1.0001
    want = a.copy()
    for i in range(10_000):
        want = want + 1 if i % 2 else want * 1.0001
    assert len(la.explain(y).program.ops()) == 10_000
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-12)
    del y                                              # deep chains also free without recursion


def test_explain_plan_fields():
    x = la.asarray(np.ones(1000, np.float32))
    plan = la.explain(la.sqrt(abs(x * 2 + 1)))
    assert isinstance(plan, la.Plan) and plan.kernels and all(k.name and k.source for k in plan.kernels)
    assert plan.inputs[0].shape == (1000,) and plan.inputs[0].dtype == np.float32
    assert plan.bytes_read >= 4000 and plan.bytes_written >= 4000
    assert "kernel" in str(plan) and "input" in str(plan)
    assert la.explain(x).kernels == []                 # materialized: nothing to run


def test_explain_a_reduction_without_running_it():
    x = la.asarray(np.ones(100, np.float32))
    plan = la.explain(lambda: la.sum(abs(x) * 2))
    assert plan.program.ops()[-1] == "sum" and plan.kernels
    with la.config(mode="eager"):
        assert len(la.explain(lambda: la.sum(abs(x) * 2)).kernels) == 3   # one launch per op
    with pytest.raises(ValueError, match="materialized nothing"):
        la.explain(lambda: x + 1)


def test_explain_of_a_call_leaves_nothing_behind():
    # explain stops a call at its first materialization (lazyarr/_materialize.py); afterwards,
    # also when the call raised, or stopped inside a nested explain, everything computes again
    x = la.asarray(np.ones(100, np.float32))
    with pytest.raises(ZeroDivisionError):
        la.explain(lambda: 1 / 0)
    assert float(la.sum(x)) == 100.0
    inner = []
    plan = la.explain(lambda: inner.append(la.explain(lambda: la.max(x * 3))) or la.sum(x * 2))
    assert plan.program.ops()[-1] == "sum" and inner[0].program.ops()[-1] == "max"
    s = la.sum(x)                               # 0-d ops on computed operands run at once again
    assert (s + 1).is_materialized and float(s + 1) == 101.0
