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
