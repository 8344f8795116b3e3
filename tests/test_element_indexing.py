"""``x[i]`` down to one element: a 0-d LazyArray that converts, prints and indexes as NumPy's
scalar does (issue 14's bug; the rule is in docs/guide.rst, "Porting from NumPy")."""
from __future__ import annotations

import operator

import numpy as np
import pytest
from helpers import DTYPES, edge_values

import lazyarr as la


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
    np.testing.assert_array_equal(np.asarray(round(x)), np.round(a))
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


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int8, np.int64, np.uint8,
                                   np.bool_, np.complex128], ids=str)
def test_arithmetic_on_elements_runs_at_once_as_numpy(dtype, any_mode):
    """Operators on computed 0-d values (the loop over elements' fast path): NumPy's dtypes,
    values and errors for every operator, with another element or a Python number, either side."""
    a = edge_values(np.dtype(dtype))
    x = la.asarray(a)
    ops = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
           operator.mod, operator.pow, operator.lt, operator.eq, operator.ne, operator.and_,
           operator.or_, operator.xor, operator.lshift]
    others = [1, 2, -1, 300, 0.5, 2.0, 1j]
    n = min(len(a), 6)
    for op in ops:
        for i in range(n):
            for j in range(n):
                _same_outcome(op, x[i], x[j], a[i][...], a[j][...])
            for other in others:
                _same_outcome(op, x[i], other, a[i][...], other)
                _same_outcome(op, other, x[i], other, a[i][...])
    s = la.zeros((), dtype=dtype)
    assert not s._node.src and (s + x[0])._node.op == "leaf"     # computed now: no graph


def _same_outcome(op, x, y, want_x, want_y):
    with np.errstate(all="ignore"):
        try:
            want = np.asarray(op(want_x, want_y))
        except Exception as exc:  # noqa: BLE001 - the same exception type is expected
            with pytest.raises(type(exc)):
                op(x, y)
            return
        got = op(x, y)
    assert isinstance(got, la.LazyArray) and got.shape == () and got._node.data is not None
    got = np.asarray(got)
    assert got.dtype == want.dtype, (op, x, y)
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f" and got == 0:
        assert np.signbit(got) == np.signbit(want)
