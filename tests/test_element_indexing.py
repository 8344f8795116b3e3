"""``x[i]`` down to one element: a 0-d LazyArray that converts, prints and indexes as NumPy's
scalar does (issue 14's bug; the rule is in docs/guide.rst, "Porting from NumPy")."""
from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
from helpers import DTYPES, edge_values

import lazyarr as la
from lazyarr import _node


@pytest.fixture
def on_cpu():
    """The CPU's elements are held values (lazyarr/_value.py): tests of those run there, also
    where the configured device is the simulated cuda one."""
    with la.config(device="cpu"):
        yield


@pytest.fixture(params=["lazy", "eager"])
def any_mode(request):
    with la.config(mode=request.param, device="cpu"):
        yield request.param


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_element_of_every_dtype_converts_as_numpys_scalar(dtype, any_mode):
    a = edge_values(dtype)
    # pending in lazy mode, the same values (complex: x * 1 turns nan+0j into nan+nanj)
    x = la.asarray(a) if dtype.kind == "b" else -(-la.asarray(a)) if dtype.kind == "c" \
        else la.asarray(a) * 1
    for i in (0, 1, len(a) - 1, -1, -len(a)):
        v, want = x[i], a[i]
        assert isinstance(v, la.LazyArray) and v.shape == () and v.dtype == want.dtype
        assert v.item() == want.item() or (want != want and v.item() != v.item())
        assert type(v.item()) is type(want.item())
        np.testing.assert_array_equal(np.asarray(v), np.asarray(want))
        assert np.asarray(v).shape == ()
        assert bool(v) == bool(want)
        assert str(v) == str(np.asarray(want))
        assert f"{v}" == f"{np.asarray(want)}"
        assert _outcome(operator.index, v) == _outcome(operator.index, want)  # floats, bools: TypeError
        if dtype.kind == "f":
            assert repr(float(v)) == repr(float(want))          # NaN, inf, -0.0 included
            assert complex(v) == complex(want) or want != want
            assert f"{v:.3e}" == f"{want:.3e}"
        elif dtype.kind == "c":
            assert complex(v) == complex(want) or want != want
            assert repr(complex(v)) == repr(complex(want))
            # as NumPy's scalar: the real part, with a ComplexWarning at this line
            with pytest.warns(np.exceptions.ComplexWarning) as record:
                got = float(v)
            assert record[0].filename == __file__
            with pytest.warns(np.exceptions.ComplexWarning):
                assert repr(got) == repr(float(want))
        else:
            assert int(v) == int(want)
            assert f"{v:>8}" == f"{want:>8}"


def _outcome(fn, value):
    try:
        return fn(value)
    except Exception as exc:  # noqa: BLE001 - the exception type is the outcome compared
        return type(exc)


def test_float_of_an_element_issue_14():
    x = la.asarray([1.5, 2.0, 3.0], device="cpu")
    assert float(x[0]) == 1.5 and int(x[1]) == 2 and x[2].item() == 3.0
    assert repr(x[0]) == "LazyArray(1.5)" and str(x[1]) == "2.0"
    assert [float(v) for v in list(x)] == [1.5, 2.0, 3.0]
    assert np.asarray(x[0]).shape == () and float(np.asarray(x[0])) == 1.5


def test_elements_index_other_arrays():
    x = la.asarray(np.arange(10.0))
    a = la.asarray(np.array([2, 5, 7]))
    np.testing.assert_array_equal(np.asarray(x[a[0]:a[1]]), np.arange(2.0, 5.0))
    assert float(x[a[2]]) == 7.0
    assert float(x[a[0], ...]) == 2.0                      # a 0-d index inside a tuple
    assert float(la.asarray(np.arange(12.0).reshape(3, 4))[a[0] - 1, a[0]]) == 6.0
    total = la.asarray(0.0)
    for i in range(3):                                     # a loop-carried 0-d value
        total = total + x[a[i]]
    assert float(total) == 14.0


def test_element_of_a_row_and_of_nd():
    a = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    x = la.asarray(a)
    assert int(x[1, 2, 3]) == a[1, 2, 3] and x[1, 2, 3].dtype == np.int16
    assert int(x[-1, -2, -3]) == a[-1, -2, -3]
    np.testing.assert_array_equal(np.asarray(x[1][2]), a[1][2])
    assert int(x[1][2][3]) == a[1][2][3]


def test_zero_d():
    z = la.asarray(np.float32(2.5))
    for key in ((), ...):
        v = z[key]
        assert isinstance(v, la.LazyArray) and v.shape == () and v.dtype == np.float32
        assert float(v) == 2.5
    with pytest.raises(IndexError):
        z[0]                          # too many indices for a 0-d array, as NumPy
    with pytest.raises(TypeError):
        len(z)
    with pytest.raises(TypeError):
        iter(z).__next__()


@pytest.mark.parametrize("key", [3, -4, (0, 0), (1, 2.0), 1.0, np.float64(1.0), (0, 0, 0)],
                         ids=repr)
def test_bad_element_indices_raise_as_numpy(key):
    a = np.arange(6.0).reshape(2, 3) if isinstance(key, tuple) else np.arange(3.0)
    if isinstance(key, tuple) and len(key) == 2 and key == (0, 0):
        a = np.arange(3.0)            # too many indices for 1-D
    with pytest.raises(Exception) as want:
        a[key]
    with pytest.raises(want.type):
        la.asarray(a)[key]
    assert want.type is IndexError


def test_what_does_not_carry_over():
    """The documented differences from NumPy's scalars (docs/guide.rst)."""
    v = la.asarray([1.5])[0]
    assert not isinstance(v, float)              # np.float64 is a float subclass; this is not
    with pytest.raises(TypeError):
        hash(v)                                  # arrays are unhashable: use v.item()
    assert isinstance(v.item(), float) and hash(v.item()) == hash(1.5)


def test_copy_and_pickle():
    import copy
    import pickle

    x = la.asarray([1.5, 2.0]) * 2
    for y in (copy.copy(x), copy.deepcopy(x), pickle.loads(pickle.dumps(x)),
              pickle.loads(pickle.dumps(x[1]))):
        assert isinstance(y, la.LazyArray) and y.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(pickle.loads(pickle.dumps(x))), [3.0, 4.0])
    assert float(pickle.loads(pickle.dumps(x[1]))) == 4.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16], ids=str)
def test_round_and_contains_as_numpy(dtype):
    a = np.array([2.5, -1.5, 3.25], dtype=dtype) if np.dtype(dtype).kind == "f" \
        else np.array([2, -1, 3], dtype=dtype)
    x = la.asarray(a)
    for i in range(3):
        got, want = round(x[i]), round(a[i])
        assert type(got) is type(want) and got == want
        assert round(x[i], 1) == round(a[i], 1)
    with pytest.raises(TypeError):      # (an array: NumPy's ndarray has no __round__)
        round(a)
    with pytest.raises(TypeError):
        round(x)
    assert (3 in x) == (3 in a) and (7 in x) == (7 in a)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.uint64, np.bool_, np.complex64],
                         ids=str)
def test_an_element_holds_its_value_as_numpys_scalar(dtype, any_mode):
    """``v = x[i]`` of a computed ``x`` is the element's value (NumPy's scalar), not a view: a
    later write into ``x`` (or into a view of it) leaves ``v`` as it was; ``x[i, ...]`` is
    NumPy's 0-d view and follows the write."""
    a = np.arange(1, 7).reshape(2, 3).astype(dtype)
    x = la.asarray(a.copy())
    first, corner, view = x[0, 0], x[1, 2], x[0, 0, ...]
    row = x[1]
    row_element = row[2]
    x[0, 0] = 0
    x[1] = 0
    ref = a.copy()
    ref_first, ref_corner, ref_view = ref[0, 0], ref[1, 2], ref[0, 0, ...]
    ref_row_element = ref[1][2]
    ref[0, 0] = 0
    ref[1] = 0
    for got, want in ((first, ref_first), (corner, ref_corner), (view, ref_view),
                      (row_element, ref_row_element)):
        assert got.item() == want.item() and np.asarray(got).dtype == np.asarray(want).dtype


_OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
              operator.mod, operator.pow, operator.lt, operator.le, operator.gt, operator.ge,
              operator.eq, operator.ne, operator.and_, operator.or_, operator.xor, operator.lshift,
              operator.rshift]
_COMPARISONS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
_PYTHON_OTHERS = [1, 2, -1, 0, 300, 2**70, 0.5, 2.0, -0.0, float("inf"), 1j, True, False]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_arithmetic_on_elements_is_numpys_scalar_arithmetic(dtype, any_mode):
    """Operators on elements (the loop over elements' fast path, lazyarr/_value.py) do what the
    NumPy script did with its scalars: NumPy's dtypes, values, errors and *scalar* warnings
    ('overflow encountered in scalar add', integer division by zero warns, never a
    ZeroDivisionError) for every operator, with another element or a Python number on either
    side, and the result is a computed 0-d LazyArray."""
    a = edge_values(np.dtype(dtype))
    # computed by a kernel (complex: x * 1 would turn inf+0j into inf+nanj)
    x = la.asarray(a) if dtype.kind == "b" else la.negative(-la.asarray(a)) \
        if dtype.kind == "c" else la.asarray(a) * 1
    x = x.compute()
    n = min(len(a), 6)
    for op in _OPERATORS:
        for i in range(n):
            for j in range(n):
                _same_outcome(op, x[i], x[j], a[i], a[j], warnings_too=True)
            for other in _PYTHON_OTHERS:
                _same_outcome(op, x[i], other, a[i], other, warnings_too=True)
                # (Python's complex left of np.float64, a float subclass, is Python's complex
                # arithmetic in NumPy's script: a Python complex or ZeroDivisionError; here it
                # is NumPy's complex128, the same dtype NEP 50 gives)
                ref = np.complex128(other) if type(other) is complex and dtype == np.float64 \
                    and op not in _COMPARISONS else other
                _same_outcome(op, other, x[i], ref, a[i], warnings_too=True)
    for op in (operator.neg, operator.pos, abs, operator.invert):
        for i in range(len(a)):
            _same_outcome(lambda u, _, op=op: op(u), x[i], None, a[i], None, warnings_too=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int8, np.uint64,
                                   np.bool_, np.complex64], ids=str)
def test_elements_with_numpy_scalars_and_0d_arrays(dtype, any_mode):
    """An element with a NumPy scalar right of it: NumPy's scalar arithmetic. A NumPy scalar
    left of it hands the operator to ``__array_ufunc__`` (NumPy's protocol), so NumPy's ufunc
    runs on the two scalars, as ``np.multiply(s, v)`` would: the same dtype and value, the
    warnings of arrays. With a 0-d array (``la.zeros(())``): NumPy's 0-d rule, a scalar result."""
    a = edge_values(np.dtype(dtype))
    x = la.asarray(a).compute()
    scalars = [np.float32(2), np.int8(3), np.uint64(5), np.float64(0.0), np.complex64(1j),
               np.bool_(True), np.float16(-1.5)]
    for op in (operator.add, operator.mul, operator.truediv, operator.pow, operator.lt):
        for i in range(min(len(a), 6)):
            for sc in scalars:
                _same_outcome(op, x[i], sc, a[i], sc, warnings_too=True)
                _same_outcome(op, sc, x[i], sc, a[i][...])
            zero_d = np.ones((), dtype)
            _same_outcome(op, la.asarray(zero_d), x[i], zero_d, a[i])
            _same_outcome(op, x[i], la.asarray(zero_d), a[i], zero_d)


def test_a_loop_over_elements_is_numpys_and_grows_no_graph(any_mode):
    """The asv ElementLoop: the same bits as NumPy's loop; the loop-carried value is a
    computed 0-d LazyArray at every step (nothing pending, no node kept)."""
    rng = np.random.default_rng(0)
    an, bn = rng.standard_normal(500), rng.standard_normal(500)
    a, b = la.asarray(an).compute(), la.asarray(bn).compute()
    s, want = la.zeros(()), np.zeros(())
    for i in range(500):
        s, want = s + a[i] * b[i], want + an[i] * bn[i]
        assert isinstance(s, la.LazyArray) and s.is_materialized and s.shape == ()
    assert type(want) is np.float64 and s.dtype == np.float64
    assert float(s) == float(want) and s._node.op == "leaf" and not s._node.src
    # the same with op= (a scalar rebinds: s += v is s = s + v) and integer elements
    ai = la.asarray(np.arange(-50, 50, dtype=np.int16)).compute()
    t, want_t = ai[0], np.arange(-50, 50, dtype=np.int16)[0]
    for i in range(100):
        t += ai[i] * 3
        want_t += np.arange(-50, 50, dtype=np.int16)[i] * 3
    assert t.dtype == want_t.dtype and int(t) == int(want_t)


def test_op_assignment_on_an_element_rebinds_as_numpys_scalar(on_cpu):
    x32 = la.asarray(np.array([1.5, 2.5], np.float32)).compute()
    x64 = la.asarray(np.array([0.25], np.float64)).compute()
    s = x32[0]
    alias = s
    s += x64[0]                          # NumPy: np.float32 += np.float64 is float64
    assert s.dtype == np.float64 and float(s) == 1.75
    assert alias.dtype == np.float32 and float(alias) == 1.5   # not written in place
    s = x32[1]
    s *= la.ones(3)                      # NumPy: the scalar becomes an array
    assert s.shape == (3,)
    np.testing.assert_array_equal(np.asarray(s), np.full(3, 2.5))
    z = la.zeros((), dtype=np.float32)   # a 0-d array (not an element): written in place
    same = z
    z += x32[0]
    assert z is same and z.dtype == np.float32 and float(z) == 1.5


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.uint64], ids=str)
def test_integer_overflow_and_division_warn_as_numpys_scalars(dtype, on_cpu):
    info = np.iinfo(dtype)
    x = la.asarray(np.array([info.max, 0, 2], dtype)).compute()
    n = np.array([info.max, 0, 2], dtype)
    for op, i, j, message in ((operator.add, 0, 0, "overflow encountered in scalar add"),
                              (operator.mul, 0, 2, "overflow encountered in scalar multiply"),
                              (operator.floordiv, 2, 1, "divide by zero encountered in scalar floor_divide"),
                              (operator.mod, 2, 1, "divide by zero encountered in scalar remainder")):
        with pytest.warns(RuntimeWarning, match=message):
            want = op(n[i], n[j])
        with pytest.warns(RuntimeWarning, match=message) as record:
            got = op(x[i], x[j])
        assert record[0].filename == __file__                  # at the user's line
        assert got.dtype == want.dtype and got.item() == want.item()
        with np.errstate(all="raise"):
            with pytest.raises(FloatingPointError):
                op(x[i], x[j])
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in scalar divide"):
        assert float(x[2] / x[1]) == np.inf                   # never a ZeroDivisionError
    # (NEP 50: -1 is out of range of an unsigned scalar)
    with pytest.raises(ValueError if info.min < 0 else OverflowError):
        x[2] ** -1


def test_element_values_convert_print_and_pickle_without_a_node(on_cpu):
    """A held element's conversions, printing and pickling read its value: no node is built,
    so the value keeps the fast path."""
    import pickle

    x = la.asarray(np.array([1.25, -2.0, 3.0])).compute()
    v = x[0]
    assert (float(v), int(v), bool(v), complex(v), v.item()) == (1.25, 1, True, 1.25 + 0j, 1.25)
    assert (str(v), repr(v), f"{v:.1f}", round(v, 1)) == ("1.25", "LazyArray(1.25)", "1.2", 1.2)
    assert (v.dtype, v.shape, v.ndim, v.size, v.device, v.nbytes) == \
        (np.float64, (), 0, 1, "cpu", 8)
    assert v.is_materialized and v.compute() is v
    back = pickle.loads(pickle.dumps(v))
    assert isinstance(back, la.LazyArray) and back.dtype == np.float64 and float(back) == 1.25
    np.testing.assert_array_equal(np.asarray(v), np.asarray(1.25))
    np.asarray(v)[()] = 9.0              # a new array, as np.asarray of NumPy's scalar
    assert v._v is not None and float(v) == 1.25        # (internal: still no node)
    assert float(np.sqrt(x[2] * 3)) == 3.0 and type(la.sqrt(x[2])) is not np.float64


def test_an_element_is_a_0d_array_for_views_writes_and_functions(any_mode):
    """What needs the element as an array (a view, a write, a function form, an operand of an
    array expression) gets it, and the value follows: a write through a view changes it."""
    x = la.asarray(np.array([1.0, 2.0, 3.0])).compute()
    v = x[1]
    view = v[...]
    view[...] = 7.0
    assert float(v) == 7.0 and float(v + 1) == 8.0 and float(x[1]) == 2.0
    w = x[2]
    w[()] = 5
    assert float(w * 2) == 10.0 and float(-w) == -5.0
    np.testing.assert_array_equal(np.asarray(x[0] * x), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(la.maximum(x, x[1])), [2.0, 2.0, 3.0])
    assert float(la.sqrt(x[2] + 6)) == 3.0 and float(la.sum(x * x[2])) == 18.0
    y = la.zeros(3, dtype=np.int32)
    for i in range(3):
        y[i] = x[i] * 2.5                # unsafe casting, as NumPy's write of a scalar
    np.testing.assert_array_equal(np.asarray(y), np.array([2.5, 5.0, 7.5]).astype(np.int32))
    assert float(x[int(x[0])]) == 2.0 and float(x[x[0].astype(int)]) == 2.0
    assert v == 7.0 and (v == None) is not None and not bool(v == "a")  # noqa: E711


def test_element_arithmetic_is_deferred_while_explained_or_traced(on_cpu):
    """Inside ``la.explain(fn)`` nothing computes and in a ``la.jit`` trace every kernel is on
    the tape: an operator on elements then builds a node, as before."""
    x = la.asarray(np.array([1.0, 2.0, 4.0])).compute()

    def f(y):
        s = y[0] * 2 + y[1]
        return (s * y).sum()

    plan = la.explain(lambda: f(x))
    assert "multiply" in str(plan) or "mul" in str(plan)
    jitted = la.jit(lambda y, s: (y * (s + 1)).sum())
    for k in range(3):
        s = x[k] * 2                    # a held element value as an argument
        assert float(jitted(x, s)) == float((x * (x[k] * 2 + 1)).sum())


def _same_outcome(op, x, y, want_x, want_y, warnings_too=False):
    """``op(x, y)`` as NumPy's ``op(want_x, want_y)``: the exception type, or a computed 0-d
    LazyArray of the same dtype and bits (and, if asked, the same warnings)."""
    with warnings.catch_warnings(record=True) as wanted:
        warnings.simplefilter("always")
        try:
            want = np.asarray(op(want_x, want_y))
        except Exception as exc:  # noqa: BLE001 - the same exception type is expected
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(type(exc)):
                    op(x, y)
            return
    with warnings.catch_warnings(record=True) as got_warnings:
        warnings.simplefilter("always")
        got = op(x, y)
    assert isinstance(got, la.LazyArray) and got.shape == () and got.is_materialized
    if warnings_too:
        assert [str(w.message) for w in got_warnings] == [str(w.message) for w in wanted], \
            (op, x, y)
    got = np.asarray(got)
    assert got.dtype == want.dtype, (op, x, y)
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f" and got == 0:
        assert np.signbit(got) == np.signbit(want)


_NEEDS_CUDA = pytest.mark.skipif(not la.cuda_available(),
                                 reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")


@pytest.mark.gpu
@_NEEDS_CUDA
def test_an_element_of_a_cuda_array_stays_a_cuda_0d_array():
    """Only the CPU's elements are held values: on cuda ``x[i]`` is a 0-d cuda array and an
    operator on it stays lazy (a launch per 0-d op would cost more than the graph)."""
    x = la.asarray(np.arange(6.0).reshape(2, 3), device="cuda")
    for v in (x[1, 2], x[1][2]):
        assert v.device == "cuda" and v.shape == () and float(v) == 5.0
        w = v * 2
        assert w.device == "cuda" and not w.is_materialized and float(w) == 10.0


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.bool_, np.complex64], ids=str)
def test_an_element_of_a_cuda_array_keeps_its_value_and_fuses(dtype):
    """On cuda ``x[i]`` is a pending copy of the element's 0-d view (``_array._element_of``):
    what reads it fuses it into one kernel (no copy launched per element), a write into ``x``
    first computes it (the write barrier), so it keeps the element's value at its line, as
    NumPy's scalar does; in eager mode it is a copy made at once."""
    xn = np.arange(1, 7).astype(dtype)
    for mode in ("lazy", "eager"):
        with la.config(mode=mode, device="cuda"):
            x = la.asarray(xn.copy())
            e, f = x[1], x[2]
            assert e.shape == () and e.dtype == xn.dtype
            if mode == "lazy":
                assert not e.is_materialized
                plan = la.explain(e * f)
                assert len(plan.kernels) == 1 and len(plan.inputs) == 2
            g = e * f
            x[1] = x[5]
            x[2] += x[2]
            x.compute()
            np.testing.assert_array_equal(e.to_numpy(), xn[1])
            np.testing.assert_array_equal(g.to_numpy(), xn[1] * xn[2])
            np.testing.assert_array_equal(f.to_numpy(), xn[2])
            np.testing.assert_array_equal(x[1].to_numpy(), xn[5])


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32], ids=str)
def test_a_loop_carried_cuda_value_reads_a_bounded_number_of_inputs(dtype):
    """``s = s + a[i] * b[i]`` on cuda: the pending 0-d value never reads more than MAX_LEAVES
    inputs (its pending operands are computed when it would: ``_build._bounded``), so the loop
    costs a few small kernels per ~8 iterations, not one kernel of thousands of inputs (2,000
    iterations took over 300 s on the H200 before); the value is NumPy's loop's, bit for bit
    (the same additions in the same order)."""
    rng = np.random.default_rng(7)
    an, bn = (rng.integers(-50, 50, 60).astype(dtype) for _ in range(2))
    a, b = la.asarray(an, device="cuda"), la.asarray(bn, device="cuda")
    s, want = la.zeros((), dtype=dtype, device="cuda"), dtype(0)
    for i in range(60):
        s = s + a[i] * b[i]
        want = want + an[i] * bn[i]
        node = s._node
        assert node.data is not None or len(node.leaves) <= _node.MAX_LEAVES, i
    got = s.to_numpy()
    assert got.dtype == want.dtype and got == want


def _cuda_element_loop(n):
    """``s = s + a[i] * b[i]`` over ``n`` elements on cuda: NumPy's loop's value."""
    an, bn = np.arange(float(n)), np.arange(float(n))[::-1].copy()
    a, b = la.asarray(an, device="cuda"), la.asarray(bn, device="cuda")
    s, want = la.zeros((), device="cuda"), 0.0
    for i in range(n):
        s = s + a[i] * b[i]
        want = want + an[i] * bn[i]
    assert float(s) == want


@pytest.mark.gpu
@_NEEDS_CUDA
def test_a_bounded_loop_value_computes_only_the_carried_part(monkeypatch):
    """When ``s + a[i] * b[i]`` outgrows a structure id, only the carried ``s`` is computed:
    the step's own ``a[i] * b[i]`` (two inputs) goes into the next kernel. (Both were computed,
    two launches every ~8 iterations.) One launch per ~8 iterations; NumPy's loop's value."""
    from lazyarr import _build
    launches = []
    materialize = _build.materialize

    def counting(node):
        launches.append(len(node.leaves or ()))
        return materialize(node)
    monkeypatch.setattr(_build, "materialize", counting)
    _cuda_element_loop(80)
    assert 0 < len(launches) <= 80 // 7 and min(launches) > 2, launches


@pytest.mark.gpu
@_NEEDS_CUDA
def test_a_cuda_element_loop_builds_its_steps_in_the_compiled_path(monkeypatch):
    """The steps of ``s = s + a[i] * b[i]`` on cuda are built by the compiled operators and
    getitem (lazyarr/_value_ops.pyx): the builder's Python path runs only where the 0-d
    value outgrew a structure id and is bounded (``_bounded``), a few times per ~8 steps;
    ``_element_of``'s Python frames never. The values are NumPy's loop's."""
    from lazyarr import _array, _array_methods
    calls = {"elementwise": 0, "element_of": 0}
    elementwise, element_of = _array_methods._elementwise, _array._element_of

    def counting_elementwise(*args):
        calls["elementwise"] += 1
        return elementwise(*args)

    def counting_element_of(*args):
        calls["element_of"] += 1
        return element_of(*args)
    monkeypatch.setattr(_array_methods, "_elementwise", counting_elementwise)
    monkeypatch.setattr(_array, "_element_of", counting_element_of)
    _cuda_element_loop(64)
    assert calls["element_of"] == 0
    assert 0 < calls["elementwise"] <= 64 // 4, calls


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = fn()
    assert all(w.filename == __file__ for w in record), [w.filename for w in record]  # user's line
    return result, [str(w.message) for w in record]


@pytest.mark.parametrize("dtype", [np.int64, np.float32], ids=str)
def test_computed_0d_results_run_numpys_0d_ufunc_with_warnings_at_the_users_line(dtype, any_mode):
    """A computed 0-d result (a reduction's, a 0-d leaf) runs NumPy's 0-d ufunc in every mode
    and backend (docs/guide.rst, "Indexing down to one element": the rule that keeps lazy,
    eager and fused 0-d values equal); an element runs NumPy's scalar arithmetic. Warnings
    name the user's line either way."""
    big = np.iinfo(dtype).max if np.dtype(dtype).kind in "iu" else np.finfo(dtype).max
    n = np.array([big, 0], dtype)
    x = la.asarray(n)
    for lazy_side, numpy_side in ((lambda a: a.sum(), lambda m: np.asarray(m.sum())),
                                  (lambda a: la.asarray(np.asarray(big)), lambda m: np.asarray(big)),
                                  (lambda a: a[0], lambda m: m[0])):                 # the scalar
        for other in (2, 1.5):
            for fn in (lambda v: v * other, lambda v: other * v):
                want, want_w = _warnings_of(lambda: fn(numpy_side(n)))
                got, got_w = _warnings_of(lambda: fn(lazy_side(x)))
                assert got_w == want_w, (got_w, want_w)
                assert np.asarray(got).dtype == np.asarray(want).dtype
                np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint64, np.int64, np.float16,
                                   np.float32, np.float64, np.complex64, np.complex128])
def test_python_conversions_of_an_element_are_numpys(dtype):
    """``bool``, ``int``, ``float``, ``operator.index`` and ``complex`` of ``x[i]`` (a held
    NumPy scalar on the CPU: ``_value.ScalarValue``'s own conversions) give NumPy's value,
    type, exception and warnings for every dtype, NaN, ±inf, -0.0 and extremes included."""
    if dtype is np.bool_:
        a = np.array([False, True])
    elif np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        a = np.array([0, 1, info.min, info.max], dtype)
    else:
        a = np.array([0.0, -0.0, 1.5, np.nan, np.inf, -np.inf, np.finfo(dtype).max], dtype=dtype)
        if np.dtype(dtype).kind == "c":
            a = a + np.array(1j, dtype)
    x = la.asarray(a)

    def outcome(f, v):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                r = f(v)
                result = (repr(r), type(r))
            except Exception as e:       # (NumPy's exception type is what is compared)
                result = type(e)
        return result, sorted({w.category.__name__ for w in caught})
    for i in range(len(a)):
        for f in (bool, int, float, operator.index, complex):
            assert outcome(f, x[i]) == outcome(f, a[i]), (f.__name__, a[i])
