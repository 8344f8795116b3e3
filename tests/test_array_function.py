"""``la.array``: native (issue 16 item 3), ``numpy.array``'s semantics returning a LazyArray.

A copy by default, of a LazyArray too (a pending one's copy stays pending and fuses);
``copy=None`` as :func:`la.asarray`; ``copy=False`` NumPy 2's ValueError where a copy is
needed; ``ndmin``; ``order``; NumPy's exceptions for bad arguments.
"""
from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_same, pending

import lazyarr as la
from lazyarr._fallback import FallbackFunction

_OBJECTS = [[1, 2, 3], [[1.5, -0.0], [np.inf, np.nan]], 7, -0.0, True, 2 + 1j, [],
            np.arange(6, dtype=np.int16).reshape(2, 3), np.float32(3.5), [np.int8(1), 2.5]]


def _outcome(fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - the type is compared with NumPy's
        return type(exc)


def test_array_is_native():
    assert not isinstance(la.array, FallbackFunction)


@pytest.mark.parametrize("obj", _OBJECTS, ids=repr)
def test_array_of_python_and_numpy_objects_as_numpy(mode, obj):
    for kw in ({}, {"dtype": np.float32}, {"dtype": "int64"}, {"ndmin": 3}, {"order": "F"},
               {"copy": None}, {"copy": False}, {"copy": 0}, {"subok": True, "ndmin": 1},
               {"dtype": np.complex64, "order": "C", "ndmin": 2}):
        want = _outcome(lambda: np.array(obj, **kw))
        got = _outcome(lambda: la.array(obj, **kw))
        if isinstance(want, type):
            assert got is want, (kw, got, want)
        else:
            assert isinstance(got, la.LazyArray), kw
            assert_same(got.to_numpy(), want)


def test_array_copies_numpy_arrays_unless_asked_not_to():
    a = np.arange(4.0)
    for copy, shares in ((True, False), (None, True), (False, True)):
        x = la.array(a, copy=copy)
        assert np.shares_memory(x.to_numpy(), a) == shares == np.shares_memory(np.array(a, copy=copy), a)
    x = la.array(a)
    a[0] = 99.0
    assert x.to_numpy()[0] == 0.0


@pytest.mark.parametrize("computed", [True, False], ids=["computed", "pending"])
def test_array_of_a_lazy_array_copies_by_default(mode, computed):
    a = np.arange(6.0).reshape(2, 3)
    x = la.asarray(a.copy()) if computed else pending(a)
    y = la.array(x)
    assert y is not x
    x[0, 0] = -5.0                        # the copy keeps the values it had
    assert_same(y.to_numpy(), a)
    assert_same(x.to_numpy()[0], np.array([-5.0, 1.0, 2.0]))
    assert la.array(x, copy=None) is x
    assert la.array(x, copy=False) is x
    assert la.array(x, copy=False, order="C") is x
    z = la.array(x, dtype=np.float32, ndmin=4)
    assert z.shape == (1, 1, 2, 3) and z.dtype == np.float32
    assert_same(z.to_numpy(), np.array(x.to_numpy(), dtype=np.float32, ndmin=4))
    for kw in ({"dtype": np.float32}, {"dtype": np.int64}):   # a copy is needed: NumPy's error
        with pytest.raises(ValueError, match="copy"):
            la.array(x, copy=False, **kw)
        with pytest.raises(ValueError, match="copy"):
            np.array(x.to_numpy(), copy=False, **kw)
    assert_same(la.array(x, order="F").to_numpy(), np.array(x.to_numpy(), order="F"))
    assert la.array(x, order="F").to_numpy().flags.f_contiguous


def test_array_of_a_pending_chain_fuses(kernels):
    x = la.asarray(np.linspace(0, 1, 1000))
    y = la.array(la.sin(x) * 2, ndmin=2)          # a pending copy and a view of it: nothing runs
    assert not y.is_materialized and kernels == []
    assert_same(la.sum(y + 1).to_numpy(), np.asarray(np.sum(np.sin(np.linspace(0, 1, 1000)) * 2 + 1)),
                exact=False)
    assert len(kernels) == 1


def test_array_arguments_errors_as_numpy():
    x = la.asarray(np.ones(3))
    for kw in ({"ndmin": 65}, {"ndmin": 1.5}, {"order": "X"}, {"copy": "yes"}, {"dtype": "f9"}):
        want = _outcome(lambda: np.array(np.ones(3), **kw))
        assert isinstance(want, type)
        for obj in (x, [1.0, 1.0, 1.0]):
            assert _outcome(lambda: la.array(obj, **kw)) is want, kw
    for dtype in ("S3", object):                   # dtypes lazyarr does not hold: TypeError
        with pytest.raises(TypeError):
            la.array([1, 2], dtype=dtype)
    with pytest.raises(TypeError, match="like="):
        la.array([1, 2], like=np.empty(0))
    assert_same(la.array([1, 2], like=x).to_numpy(), np.array([1, 2]))
    assert_same(la.array(x, ndmin=-1).to_numpy(), np.array(np.ones(3), ndmin=-1))
