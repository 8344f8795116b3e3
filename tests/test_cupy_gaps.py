"""lazyarr/_cupy_gaps.py: NumPy functions CuPy lacks, written with the array module's own
functions. Run here with ``xp = numpy`` against NumPy's own function: same dtype, shape and
bits (and NumPy's result types), so their semantics are checked without a GPU."""
from __future__ import annotations

import math

import numpy as np
import pytest

from lazyarr import _cupy_gaps as G

RNG = np.random.default_rng(7)
DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float32", "float64", "complex64", "complex128"]


def _data(dtype, shape):
    values = RNG.normal(size=shape) * 4
    if np.dtype(dtype).kind == "c":
        values = values + 1j * RNG.normal(size=shape)
    return values.astype(dtype) if dtype != "bool" else values > 0


def _same(got, want, close=False):
    """Same type, dtype, shape and bits; ``close``: floats within a few ulps per summed term
    (NumPy's vecdot sums floats with BLAS, in an order of its own)."""
    if isinstance(want, tuple):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, close)
        return
    if isinstance(want, int):
        assert type(got) is int and got == want
        return
    if isinstance(want, np.generic):    # NumPy's scalar result: a 0-d array or scalar here
        assert isinstance(got, (np.ndarray, np.generic)) and np.ndim(got) == 0
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if close and want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=16 * np.finfo(want.dtype).eps)
    else:
        np.testing.assert_array_equal(got, want)


def _check(path, *args, close=False, **kw):
    numpy_function = np
    for part in path.split("."):
        numpy_function = getattr(numpy_function, part)
    try:
        want = numpy_function(*args, **kw)
    except Exception as exc:  # noqa: BLE001 - the same exception type is expected
        with pytest.raises(type(exc)):
            G.FUNCTIONS[path](np, *args, **kw)
        return
    _same(G.FUNCTIONS[path](np, *args, **kw), want, close)


@pytest.mark.parametrize("dtype", DTYPES)
def test_trace_diagonal_tensordot_vecdot(dtype):
    for shape in [(3, 3), (2, 4, 3), (0, 2, 2), (5, 1)]:
        x = _data(dtype, shape)
        for offset in (0, 1, -1):
            _check("linalg.trace", x, offset=offset)
            _check("linalg.diagonal", x, offset=offset)
        _check("linalg.trace", x, dtype=np.float64)
    a, b = _data(dtype, (2, 3, 4)), _data(dtype, (3, 4, 5))
    for axes in (2, 1, ([1], [0]), 0):
        _check("linalg.tensordot", a, b if axes != 1 else _data(dtype, (4, 2)), axes=axes)
    for x1, x2, axis in [((4, 3), (4, 3), -1), ((4, 3), (3,), -1), ((4, 3), (4, 1), 0),
                         ((0,), (0,), -1), ((2, 5), (3, 5), -1)]:
        for path in ("vecdot", "linalg.vecdot"):
            _check(path, _data(dtype, x1), _data(dtype, x2), axis=axis, close=True)


@pytest.mark.parametrize("dtype", ["int8", "int32", "float32", "float64", "complex64"])
def test_cross(dtype):
    for s1, s2, axis in [((3,), (3,), -1), ((4, 3), (3,), -1), ((3, 4), (3, 1), 0), ((2, 2), (2, 2), -1)]:
        _check("linalg.cross", _data(dtype, s1), _data(dtype, s2), axis=axis)


@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_and_matrix_norms(dtype):
    x = _data(dtype, (3, 4, 5))
    for ord in (2, 1, 0, math.inf, -math.inf, 3, 0.5, -1):
        for axis in (None, 0, -1, (0, 2), (2, 0)):
            for keepdims in (False, True):
                _check("linalg.vector_norm", x, axis=axis, keepdims=keepdims, ord=ord)
    _check("linalg.vector_norm", _data(dtype, ()))
    _check("linalg.vector_norm", _data(dtype, (0,)), ord=math.inf)     # NumPy's max(initial=0)
    _check("linalg.vector_norm", _data(dtype, (0, 3)), axis=0, ord=-math.inf)   # NumPy raises
    _check("linalg.vector_norm", x, ord="fro")                          # ValueError
    if dtype != "bool":
        for ord in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
            for keepdims in (False, True):
                _check("linalg.matrix_norm", _data(dtype, (2, 3, 3)), ord=ord, keepdims=keepdims)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unstack(dtype):
    x = _data(dtype, (3, 4))
    for axis in (0, 1, -1):
        _check("unstack", x, axis=axis)
    _check("unstack", _data(dtype, (0, 2)), axis=1)
    _check("unstack", _data(dtype, ()))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_outer(dtype):
    _check("linalg.outer", _data(dtype, (3,)), _data(dtype, (4,)))
    _check("linalg.outer", _data(dtype, (3, 1)), _data(dtype, (4,)))   # ValueError


@pytest.mark.parametrize("dtype", ["bool", "int32", "float32", "complex128"])
def test_reduction_keywords_cupy_lacks_run_numpys_call(dtype):
    # CuPy's reductions take no where=, initial=, mean=: such a call runs NumPy's on the host
    # (the H200 suite, 2026-12-05); without them, the array module's own reduction
    x = _data(dtype, (3, 4))
    mask = _data("bool", (3, 4))
    for path in ("sum", "prod", "mean", "any", "all"):
        _check(path, x, axis=1, where=mask)
        _check(path, x, axis=0)
    if dtype != "complex128":
        for path in ("max", "min", "amax", "amin"):
            _check(path, x, axis=0, where=mask, initial=True if dtype == "bool" else 2)
            _check(path, x, initial=1)
    _check("sum", x, initial=3)
    if dtype != "bool":
        _check("std", x, axis=1, mean=np.mean(x, axis=1, keepdims=True))
        _check("var", x, axis=0, where=mask, ddof=1)
    out = np.zeros(4, np.sum(x, axis=0).dtype)
    assert G.FUNCTIONS["sum"](np, x, axis=0, where=mask, out=out) is out
    np.testing.assert_array_equal(out, np.sum(x, axis=0, where=mask))
