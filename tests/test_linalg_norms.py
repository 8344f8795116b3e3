"""``la.linalg.norm``, ``vector_norm`` and ``matrix_norm``: lazyarr's own (lazyarr/_functions/_norms.py),
checked against NumPy 2.4's: dtypes and shapes exactly, values to rounding (lazyarr's sums are
its own), every ``ord``, ``axis`` and ``keepdims``, NaN/inf/-0.0, empty inputs, NumPy's
exceptions with their messages, one kernel for a pending input, eager mode and cuda."""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _fallback, _numpy_names

DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.int64, np.bool_]
VECTOR_ORDS = [None, 2, 1, 0, math.inf, -math.inf, 3, 0.5, -1, -2.5, True]
MATRIX_ORDS = ["fro", "f", "nuc", 1, -1, 2, -2, math.inf, -math.inf]
_NEEDS_CUDA = pytest.mark.skipif(not la.cuda_available(),
                                 reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")


def _data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 3
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    if np.dtype(dtype) == np.bool_:
        return a > 0
    return a.astype(dtype)


def _rtol(dtype):
    return 1e-5 if dtype in (np.float32, np.complex64) else 1e-12


def _run(module, call, a, kw):
    """``call(module, a, **kw)`` as a NumPy array, with the floating-point warnings silenced
    (a negative ``ord`` divides by zero at a zero element, in both libraries; lazyarr's at
    the computation, which ``to_numpy`` may run)."""
    x = a if module is np else la.asarray(a)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = call(module, x, **kw)
        if module is la:
            assert isinstance(result, la.LazyArray), (kw, type(result))
            return result.to_numpy()
        return np.asarray(result)


def _check(call, a, **kw):
    """``call(la, ...)`` as ``call(np, ...)``: a LazyArray of NumPy's dtype and shape and its
    values to rounding, or NumPy's exception (type and message)."""
    try:
        want = _run(np, call, a, kw)
    except Exception as e:         # noqa: BLE001 (whatever NumPy raises, lazyarr must too)
        with pytest.raises(type(e), match=f"^{re.escape(str(e))}$"):
            _run(la, call, a, kw)
        return
    got = _run(la, call, a, kw)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), kw
    np.testing.assert_allclose(got, want, rtol=_rtol(want.dtype), atol=0, err_msg=str(kw))


def _norm(m, x, **kw):
    return m.linalg.norm(x, **kw)


def _vector_norm(m, x, **kw):
    return m.linalg.vector_norm(x, **kw)


def _matrix_norm(m, x, **kw):
    return m.linalg.matrix_norm(x, **kw)


def _axes(ndim):
    """Every single axis (also negative), None, and the tuples of axes of an ``ndim``-d array."""
    singles = [i for i in range(-ndim, ndim)]
    tuples = [(0, ndim - 1), (-1, 0), tuple(range(ndim))] if ndim >= 2 else [(0,)] * ndim
    return [None, *singles, *tuples]


# ----------------------------------------------------------------------------- the values
@pytest.mark.parametrize("shape", [(), (7,), (0,), (4, 5), (0, 3), (2, 3, 4), (2, 0, 3)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_vector_norm(dtype, shape, mode):
    a = _data(dtype, shape)
    for axis in _axes(len(shape)):
        for ord in VECTOR_ORDS:
            for keepdims in (False, True):
                kw = {"axis": axis, "keepdims": keepdims}
                _check(_vector_norm, a, **kw, **({} if ord is None else {"ord": ord}))


@pytest.mark.parametrize("shape", [(), (7,), (0,), (4, 5), (3, 0), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_norm(dtype, shape, mode):
    """Vector norms along one axis, matrix norms over two, the 2-norm of all of ``x`` (``ord``
    and ``axis`` None); ``axis`` None picks by ``x.ndim``, and raises where NumPy does."""
    a = _data(dtype, shape)
    for axis in [None, *range(-len(shape), len(shape)), (0, -1), (-1, 0)][:2 + 2 * len(shape)]:
        for ord in VECTOR_ORDS + MATRIX_ORDS:
            for keepdims in (False, True):
                _check(_norm, a, ord=ord, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("shape", [(4, 5), (5, 3), (3, 2, 4), (0, 3), (3, 0), (2, 0, 3), (1, 1)],
                         ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_matrix_norm(dtype, shape, mode):
    """Every matrix ``ord``, batched over the leading axes; empty matrices (NumPy's 0 where
    its max has ``initial=0``, its error where a min has no value)."""
    a = _data(dtype, shape)
    for ord in MATRIX_ORDS:
        for keepdims in (False, True):
            _check(_matrix_norm, a, ord=ord, keepdims=keepdims)
            _check(_norm, a, ord=ord, axis=(-1, 0), keepdims=keepdims)    # transposed


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_nan_inf_and_negative_zero(dtype, mode):
    base = np.array([[1.0, np.nan, -0.0], [np.inf, -2.0, 0.0], [-np.inf, 3.0, 4.0],
                     [0.0, -0.0, 1e-3]])
    for a in (base, base[[0, 2, 3]], base[[1, 2]], np.full((2, 3), -0.0)):
        a = a.astype(dtype)
        if a.dtype.kind == "c":             # (inf and NaN parts in both halves)
            with np.errstate(invalid="ignore"):
                a = a + 1j * a[::-1]
        for ord in VECTOR_ORDS:
            for axis in (None, 0, 1):
                _check(_vector_norm, a, ord=ord, axis=axis)
        for ord in MATRIX_ORDS:
            _check(_matrix_norm, a, ord=ord)


def test_integer_and_bool_norms_are_float64():
    for dtype in (np.int8, np.uint16, np.int64, np.bool_):
        a = _data(dtype, (3, 4))
        for call in (_norm, _vector_norm, _matrix_norm):
            assert call(la, la.asarray(a)).dtype == np.float64
    assert la.linalg.norm(la.asarray(np.ones(3, np.float16))).dtype == np.float16


def test_array_like_inputs():
    for a in ([3, 4], [[1.0, 2.0], [3.0, 4.0]], 5.0):
        np.testing.assert_allclose(la.linalg.norm(a).to_numpy(), np.linalg.norm(a), rtol=1e-12)
        np.testing.assert_allclose(la.linalg.vector_norm(a).to_numpy(),
                                   np.linalg.vector_norm(a), rtol=1e-12)


# ----------------------------------------------------------------------------- errors
_ERRORS = [
    (_vector_norm, (3, 4), {"ord": "fro"}),
    (_vector_norm, (3, 4), {"ord": "nuc", "axis": 0}),
    (_vector_norm, (3, 4), {"axis": 2}),
    (_vector_norm, (3, 4), {"axis": -3}),
    (_vector_norm, (3, 4), {"axis": (0, 0)}),
    (_vector_norm, (3, 4), {"axis": (1, -1)}),
    (_vector_norm, (3, 4), {"axis": (0, 5)}),
    (_vector_norm, (3, 4), {"axis": [0, 1]}),
    (_vector_norm, (3, 4), {"axis": "0x"}),
    (_vector_norm, (0, 4), {"ord": -math.inf}),
    (_vector_norm, (0,), {"ord": -math.inf, "axis": 0}),
    (_norm, (3, 4), {"ord": 3}),                    # a matrix: no 3-norm
    (_norm, (3, 4), {"ord": "x", "axis": (0, 1)}),
    (_norm, (3, 4), {"ord": 0, "axis": (1, 0)}),
    (_norm, (3, 4), {"ord": "fro", "axis": 1}),
    (_norm, (3, 4), {"ord": "nuc", "axis": 0}),
    (_norm, (3, 4), {"axis": (0, 0)}),
    (_norm, (3, 4), {"axis": (0, -2)}),
    (_norm, (3, 4), {"axis": (0, 2)}),
    (_norm, (3, 4), {"axis": (0, 1, 1)}),
    (_norm, (3, 4), {"axis": ()}),
    (_norm, (3, 4), {"axis": [0]}),
    (_norm, (3, 4), {"axis": 4}),
    (_norm, (2, 3, 4), {"ord": 2}),                 # 3-d: neither a vector nor a matrix
    (_norm, (2, 3, 4), {"ord": "fro"}),
    (_norm, (), {"ord": 2}),
    (_norm, (3, 0), {"ord": -1}),                   # a min of no column sums
    (_norm, (0, 3), {"ord": -math.inf}),            # ... of no row sums
    (_norm, (0, 3), {"ord": -2}),
    (_matrix_norm, (4,), {}),                       # NumPy's AxisError for axis -2
    (_matrix_norm, (), {"ord": 1}),
    (_matrix_norm, (3, 4), {"ord": 3}),
    (_matrix_norm, (3, 4), {"ord": 0}),
]


@pytest.mark.parametrize("call, shape, kw", _ERRORS,
                         ids=[f"{c.__name__[1:]}-{s}-{k}" for c, s, k in _ERRORS])
def test_numpys_exceptions(call, shape, kw, mode):
    a = _data(np.float64, shape)
    with pytest.raises(Exception) as numpy_error:       # noqa: PT011 (the type is NumPy's)
        _run(np, call, a, kw)
    with pytest.raises(type(numpy_error.value), match=f"^{re.escape(str(numpy_error.value))}$"):
        _run(la, call, a, kw)


# ----------------------------------------------------------------------------- fused
#: norms over all of ``x`` (its leading matrix for the matrix norms): one kernel each
_FULL = {"norm": lambda m, x: m.linalg.norm(x),
         "norm-inf": lambda m, x: m.linalg.norm(x[0, 0], ord=math.inf),
         "norm-fro": lambda m, x: m.linalg.norm(x[0], ord="fro"),
         "vector_norm": lambda m, x: m.linalg.vector_norm(x),
         "vector_norm-1": lambda m, x: m.linalg.vector_norm(x, ord=1),
         "vector_norm-0": lambda m, x: m.linalg.vector_norm(x, ord=0),
         "vector_norm-3": lambda m, x: m.linalg.vector_norm(x, ord=3),
         "vector_norm--inf": lambda m, x: m.linalg.vector_norm(x, ord=-math.inf),
         "vector_norm-keepdims": lambda m, x: m.linalg.vector_norm(x, axis=(0, 1, 2),
                                                                   keepdims=True),
         "matrix_norm-2d": lambda m, x: m.linalg.matrix_norm(x[0])}
#: norms along axes: the reduction's kernel, then one over the reduced array (the root, the
#: max of the column sums)
_ALONG = {"vector_norm-axis": lambda m, x: m.linalg.vector_norm(x, axis=-1),
          "vector_norm-axes": lambda m, x: m.linalg.vector_norm(x, axis=(0, 2), ord=0.5),
          "norm-axis": lambda m, x: m.linalg.norm(x, axis=1, ord=3),
          "matrix_norm": lambda m, x: m.linalg.matrix_norm(x),
          "matrix_norm-1": lambda m, x: m.linalg.matrix_norm(x, ord=1),
          "matrix_norm-inf": lambda m, x: m.linalg.matrix_norm(x, ord=math.inf, keepdims=True)}


def _pending_norm(call, dtype):
    """``call`` of the pending ``la.asarray(a) * 2 - 1``, checked against NumPy's."""
    a = _data(dtype, (3, 40, 30))
    got = call(la, la.asarray(a) * 2 - 1)
    want = np.asarray(call(np, a * 2 - 1))
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(got.to_numpy(), want, rtol=_rtol(want.dtype))


@pytest.mark.parametrize("name", list(_FULL))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128], ids=str)
def test_norm_of_a_pending_input_is_one_kernel(kernels, name, dtype):
    """The norm of all of a pending expression (``la.linalg.norm(a - b)``) is one kernel: the
    expression, ``|x|**p`` and the sum in one pass, no temporary; the root of the 0-d sum
    runs no kernel."""
    _pending_norm(_FULL[name], dtype)
    assert len(kernels) == 1, kernels


@pytest.mark.parametrize("name", list(_ALONG))
def test_norm_along_axes_of_a_pending_input(kernels, name):
    """Along axes, the pending expression is read by one kernel (the reduction); one more
    runs over the reduced array only."""
    _pending_norm(_ALONG[name], np.float64)
    assert len(kernels) == 2, kernels


def test_singular_value_norms_call_the_librarys_svd(kernels):
    """ord 2, -2 and 'nuc' reduce the singular values of NumPy's SVD (the fallback, which
    ``fallback="error"`` forbids): the pending matrix is computed for it. The other norms
    make no fallback call."""
    for ord in (2, -2, "nuc"):
        _pending_norm(lambda m, x, o=ord: m.linalg.matrix_norm(x, ord=o), np.float64)
    x = la.asarray(_data(np.float64, (4, 4))) + 1
    with la.config(fallback="error"):
        for ord in (None, "fro", 1, -1, math.inf, -math.inf):
            la.linalg.norm(x, ord=ord)
        la.linalg.vector_norm(x, ord=3)
        for ord in (2, -2, "nuc"):
            with pytest.raises(la.FallbackError, match="linalg.svd"):
                la.linalg.matrix_norm(x, ord=ord)


# ----------------------------------------------------------------------------- the namespace
def test_the_norms_are_native_and_so_is_the_rest_of_linalg():
    assert {"norm", "vector_norm", "matrix_norm", "vecdot", "matmul",
            "matrix_transpose"} <= la.linalg.NATIVE
    for name in la.linalg.NATIVE:
        assert _numpy_names.status(f"linalg.{name}") == ("native", "")
        assert not isinstance(getattr(la.linalg, name), _fallback.FallbackFunction)
    assert set(np.linalg.__all__) - la.linalg.NATIVE == {"LinAlgError"}   # (a type: NumPy's own)
    assert la.linalg.LinAlgError is np.linalg.LinAlgError
    assert _numpy_names.status("linalg") == ("native", "a namespace: every function lazyarr's")
    a = _data(np.float64, (3, 3)) + 3 * np.eye(3)
    np.testing.assert_allclose(la.linalg.inv(la.asarray(a)).to_numpy(), np.linalg.inv(a))
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        la.linalg.nonesuch  # noqa: B018


# ----------------------------------------------------------------------------- cuda
@pytest.mark.gpu
@_NEEDS_CUDA
def test_norms_on_cuda():
    """A subset on the cuda device: a pending input, vector and matrix norms (the SVD's:
    CuPy's, through the fallback), keepdims, an empty axis; results on cuda."""
    a = _data(np.float64, (2, 4, 3))
    want_input = a * 2 - 1
    with la.config(device="cuda"):
        x = la.asarray(a) * 2 - 1
        cases = [(lambda m, t: m.linalg.norm(t), 1e-12)]
        cases += [(lambda m, t, o=o: m.linalg.matrix_norm(t, ord=o), 1e-12)
                  for o in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)]
        cases += [(lambda m, t, o=o: m.linalg.vector_norm(t, axis=(0, 2), ord=o,
                                                            keepdims=True), 1e-12)
                  for o in (2, 1, 0, 3, -math.inf, math.inf)]
        for call, rtol in cases:
            got = call(la, x)
            want = call(np, want_input)
            assert got.device == "cuda" and (got.dtype, got.shape) == (want.dtype, want.shape)
            np.testing.assert_allclose(got.to_numpy(), want, rtol=rtol)
        x32 = la.asarray(a.astype(np.complex64)) * 2
        got = la.linalg.vector_norm(x32, axis=-1)
        assert got.device == "cuda" and got.dtype == np.float32
        np.testing.assert_allclose(got.to_numpy(), np.linalg.vector_norm(a * 2, axis=-1),
                                   rtol=1e-5)
        empty = la.linalg.vector_norm(la.zeros((0, 3)), axis=0, ord=math.inf)
        assert empty.device == "cuda"
        np.testing.assert_array_equal(empty.to_numpy(), np.zeros(3))


def test_numpys_norms_of_a_lazy_array_are_lazyarrs(kernels):
    """``numpy.linalg.norm(lazy)`` (and ``vector_norm``, ``matrix_norm``) reach lazyarr's own
    norms through ``__array_function__``: a pending input is one kernel there too."""
    a = _data(np.float64, (4, 5))
    x = la.asarray(a)
    for fn, kwargs in ((np.linalg.norm, {}), (np.linalg.vector_norm, {"ord": 3}),
                       (np.linalg.matrix_norm, {"ord": "fro"})):
        kernels.clear()
        got = fn(x * 2 - 1, **kwargs)
        assert isinstance(got, la.LazyArray) and len(kernels) == 1, (fn, kernels)
        np.testing.assert_allclose(got.to_numpy(), fn(a * 2 - 1, **kwargs), rtol=1e-12)
