"""The NumPy/CuPy fallback (lazyarr/_fallback.py): every public NumPy name, ``numpy.<f>(lazy)``,
ndarray methods, writing functions, other libraries' arrays, the fallback setting, the name page."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest
from helpers import DTYPES, NO_CUPY, SIMULATED, random_array

import lazyarr as la
from lazyarr import _devices, _node, _numpy_names


@pytest.fixture(params=["lazy", "eager"])
def any_mode(request):
    with la.config(mode=request.param, device="cpu"):
        yield request.param


def _same(got, want):
    """A fallback result equals NumPy's: array results are LazyArrays, the rest as NumPy's."""
    if isinstance(want, (np.ndarray, np.generic)) and np.dtype(want.dtype) in DTYPES:
        assert isinstance(got, la.LazyArray), type(got)
        g = np.asarray(got)
        assert g.dtype == want.dtype and g.shape == np.shape(want)
        np.testing.assert_array_equal(g, want)
    elif isinstance(want, tuple):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, np.ndarray):                   # a dtype lazyarr does not hold
        assert type(got) is np.ndarray
        np.testing.assert_array_equal(got, want)
    else:
        assert type(got) is type(want) and got == want


# ------------------------------------------------------------------------------ the calls
_A = np.array([[3.0, -1.0, 2.0], [0.5, 4.0, -2.0], [1.0, 1.0, 5.0]])
_V = np.array([3.0, -1.0, 2.0, 2.0])
CALLS = {   # name: (the call, on a module that is numpy or lazyarr, and the NumPy inputs)
    "concatenate": (lambda m, a, v: m.concatenate([a, a * 2], axis=1), ),
    "stack": (lambda m, a, v: m.stack((v, v + 1)), ),
    "block": (lambda m, a, v: m.block([[a, a], [a, a]]), ),
    "reshape": (lambda m, a, v: m.reshape(a, (9,)), ),
    "transpose": (lambda m, a, v: m.transpose(a), ),
    "outer": (lambda m, a, v: m.outer(v, v), ),
    "dot": (lambda m, a, v: m.dot(a, a[0]), ),
    "dot scalar": (lambda m, a, v: m.dot(v, v), ),
    "einsum": (lambda m, a, v: m.einsum("ij,jk->ik", a, a), ),
    "cumsum": (lambda m, a, v: m.cumsum(v), ),
    "sort": (lambda m, a, v: m.sort(v), ),
    "median": (lambda m, a, v: m.median(a, axis=0), ),
    "unique": (lambda m, a, v: m.unique(v, return_counts=True), ),
    "nonzero": (lambda m, a, v: m.nonzero(a > 1), ),
    "allclose": (lambda m, a, v: m.allclose(a, a + 1e-12), ),
    "isclose": (lambda m, a, v: m.isclose(v, 2.0), ),
    "result_type": (lambda m, a, v: m.result_type(a, np.float32), ),
    "shape": (lambda m, a, v: m.shape(a), ),
    "tril": (lambda m, a, v: m.tril(a), ),
    "flip": (lambda m, a, v: m.flip(v), ),
    "linalg.norm": (lambda m, a, v: m.linalg.norm(a), ),
    "linalg.inv": (lambda m, a, v: m.linalg.inv(a), ),
    "linalg.eigh": (lambda m, a, v: m.linalg.eigh(a + a.T), ),
    "linalg.svd": (lambda m, a, v: m.linalg.svd(a), ),
    "fft.fft (complex: NumPy's)": (lambda m, a, v: m.fft.fft(v), ),
    "fft.fftfreq": (lambda m, a, v: m.fft.fftfreq(4), ),
    "add.outer": (lambda m, a, v: m.add.outer(v, v), ),
    "maximum.accumulate": (lambda m, a, v: m.maximum.accumulate(v), ),
    "fmod": (lambda m, a, v: m.fmod(v, 2.0), ),
    "frexp": (lambda m, a, v: m.frexp(v), ),
    "matmul": (lambda m, a, v: m.matmul(a, a), ),
    "@": (lambda m, a, v: a @ a, ),
    "divmod": (lambda m, a, v: divmod(v, 2.0), ),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_lazyarr_name_as_numpy(name, any_mode):
    """``la.<name>(lazy)`` gives NumPy's answer; array results are computed LazyArrays."""
    call, = CALLS[name]
    want = call(np, _A, _V)
    a, v = la.asarray(_A) * 1, la.asarray(_V) + 0          # pending operands in lazy mode
    _same(call(la, a, v), want)


@pytest.mark.parametrize("name", [n for n in CALLS if n != "fft.fftfreq"])   # that takes no array
def test_numpy_function_on_lazy_arrays(name, any_mode):
    """``numpy.<name>(lazy)``, what SciPy or matplotlib do: dispatched to the fallback."""
    call, = CALLS[name]
    want = call(np, _A, _V)
    _same(call(np, la.asarray(_A) * 1, la.asarray(_V) + 0), want)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_through_the_fallback(dtype, rng, any_mode):
    a = random_array(rng, dtype, (4, 5))
    x = la.asarray(a)
    for fn in (lambda m, t: m.concatenate([t, t]), lambda m, t: m.cumsum(t, axis=1),
               lambda m, t: m.sort(t, axis=0), lambda m, t: m.roll(t, 2),
               lambda m, t: m.repeat(t, 2, axis=0), lambda m, t: m.diff(t),
               lambda m, t: m.count_nonzero(t), lambda m, t: m.tile(t[0], 2),
               lambda m, t: m.zeros_like(t[:, :0]), lambda m, t: m.copy(t[0, 0])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = fn(np, a)
            _same(fn(la, x), want)
            _same(fn(np, x), want)


def test_nested_pending_arrays_are_computed(any_mode):
    a = la.asarray(np.arange(4.0))
    p, q = la.sqrt(a), a * 2                     # pending in lazy mode
    got = np.concatenate([p, q, [7.0]])
    np.testing.assert_array_equal(np.asarray(got), np.concatenate(
        [np.sqrt(np.arange(4.0)), np.arange(4.0) * 2, [7.0]]))
    buf = io.BytesIO()
    np.savez(buf, first=p, second=(q, q))         # keyword arguments, a tuple inside
    buf.seek(0)
    saved = np.load(buf)
    np.testing.assert_array_equal(saved["first"], np.sqrt(np.arange(4.0)))
    np.testing.assert_array_equal(saved["second"], [np.arange(4.0) * 2] * 2)
    buf = io.BytesIO()
    np.save(buf, p)                               # numpy.save(f, lazy), issue 16
    buf.seek(0)
    np.testing.assert_array_equal(np.load(buf), np.sqrt(np.arange(4.0)))


def test_zero_d_and_empty():
    z = la.asarray(np.float32(2.0))
    _same(la.atleast_1d(z), np.atleast_1d(np.float32(2.0)))
    _same(np.outer(z, la.asarray([1.0, 2.0])), np.outer(np.float32(2.0), [1.0, 2.0]))
    e = la.zeros((0, 3))
    _same(np.concatenate([e, e]), np.zeros((0, 3)))
    _same(la.median(la.asarray([1.0, 3.0])), np.median([1.0, 3.0]))   # a scalar: 0-d array


def test_creation_and_namespaces():
    _same(la.array([1, 2, 3], dtype=np.int8), np.array([1, 2, 3], dtype=np.int8))
    _same(la.eye(3, k=1), np.eye(3, k=1))
    _same(la.mgrid[0:2, 0:3], np.mgrid[0:2, 0:3])
    _same(la.r_[la.asarray([1.0]), 2.0], np.r_[np.array([1.0]), 2.0])
    la.random.seed(5)
    got = la.random.rand(3)
    np.random.seed(5)
    _same(got, np.random.rand(3))
    assert la.newaxis is None and la.linalg.LinAlgError is np.linalg.LinAlgError
    assert la.finfo(la.float32).eps == np.finfo(np.float32).eps and la.intp is np.intp
    assert la.random.PCG64 is np.random.PCG64    # classes are NumPy's own (Generator is lazyarr's)
    with pytest.raises(np.linalg.LinAlgError):
        la.linalg.inv(la.zeros((2, 2)))            # NumPy's exception, as NumPy raises it
    with pytest.raises(ValueError):
        la.concatenate([la.zeros((2, 2)), la.zeros(3)])


def test_ndarray_is_lazyarray():
    x = la.ndarray((2, 3), dtype=la.float32)
    assert isinstance(x, la.ndarray) and isinstance(x, la.LazyArray)
    assert x.shape == (2, 3) and x.dtype == np.float32
    assert not isinstance(np.zeros(2), la.ndarray)
    with pytest.raises(TypeError, match="buffer"):
        la.ndarray((2,), buffer=b"12345678")


def test_native_functions_have_ufunc_methods():
    x = la.asarray([1.0, 2.0, 3.0])
    _same(la.add.outer(x, x), np.add.outer([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]))
    _same(la.maximum.reduce(x), np.maximum.reduce([1.0, 2.0, 3.0]))
    _same(la.multiply.accumulate(x), np.multiply.accumulate([1.0, 2.0, 3.0]))
    assert la.add.nin == 2 and la.add.identity == 0


# ------------------------------------------------------------------------------ writing
def test_out_writes_into_the_array_and_checks_as_numpy(any_mode):
    x = la.asarray([1.0, 2.0, 3.0])
    o = la.zeros(3)
    alias = o[:]                                   # a view: shares o's memory
    before = o + 0                                 # pending: keeps the values it read
    assert np.add(x, 1, out=o) is o
    np.testing.assert_array_equal(np.asarray(o), [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(alias), [2.0, 3.0, 4.0])   # as NumPy's view
    np.testing.assert_array_equal(np.asarray(before), [0.0, 0.0, 0.0])
    r = la.zeros(3)
    assert np.sum(la.asarray(np.ones((2, 3))), axis=0, out=r) is r
    np.testing.assert_array_equal(np.asarray(r), [2.0, 2.0, 2.0])
    for bad_out, exc in ((la.zeros(3, dtype=la.int32), TypeError), (la.zeros(4), ValueError)):
        with pytest.raises(exc):
            np.add(np.ones(3), np.ones(3), out=bad_out.to_numpy())   # NumPy's own error...
        with pytest.raises(exc):
            np.add(x, 1.5, out=bad_out)                              # ... is ours
        np.testing.assert_array_equal(np.asarray(bad_out), 0)         # and nothing written


_R = np.array([[3.0, -1.0, 2.0, 7.0], [0.5, 4.0, -2.0, 1.0], [1.0, 1.0, 5.0, -3.0]])
NUMPY_KEYWORDS = {   # NumPy's parameters a native function has no fused form of: NumPy's call
    "sum where": lambda m, x: m.sum(x, axis=1, where=x > 0),
    "sum initial": lambda m, x: m.sum(x, initial=10.0),
    "method sum where": lambda m, x: x.sum(where=x > 0),
    "max initial": lambda m, x: m.max(x, axis=0, initial=4.5),
    "min where initial": lambda m, x: m.min(x, where=x > 0, initial=100.0),
    "mean where": lambda m, x: m.mean(x, axis=0, where=x > 0),
    "std mean": lambda m, x: m.std(x, axis=1, mean=m.mean(x, axis=1, keepdims=True)),
    "prod positional dtype": lambda m, x: m.prod(x, 0, np.float32),
    "sum positional keepdims": lambda m, x: m.sum(x, 1, None, None, True),
    "max positional keepdims": lambda m, x: x.max(0, None, True),
    "any where": lambda m, x: m.any(x > 4, axis=1, where=x < 6),
    "at NumPy's defaults": lambda m, x: m.sum(x, 0, out=None, where=True),
    "where one argument": lambda m, x: m.where(x > 1),
    "linspace retstep": lambda m, x: m.linspace(0.0, 1.0, 5, retstep=True),
    "linspace axis": lambda m, x: m.linspace([0.0, 1.0], [1.0, 3.0], 3, axis=1),
    "linspace no endpoint retstep": lambda m, x: m.linspace(2, 3, 4, False, True, np.float32),
    "zeros_like shape": lambda m, x: m.zeros_like(x, shape=(2, 5)),
    "full_like subok": lambda m, x: m.full_like(x, 7, dtype=np.int16, subok=False),
    "item flat": lambda m, x: x.item(5),
    "item per axis": lambda m, x: (x * 2).item(2, 3),
}


_ON_CUDA = [pytest.mark.gpu, pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")]


@pytest.fixture(params=["cpu lazy", "cpu eager", pytest.param("cuda lazy", marks=_ON_CUDA),
                        pytest.param("cuda eager", marks=_ON_CUDA)])
def any_device_mode(request):
    device, mode = request.param.split()
    if device == "cuda" and mode == "eager" and SIMULATED:
        pytest.skip(NO_CUPY)
    with la.config(mode=mode, device=device):
        yield device


@pytest.mark.parametrize("name", NUMPY_KEYWORDS)
def test_numpy_parameters_of_native_functions(name, any_device_mode):
    """``la.sum(x, where=m)``, ``la.linspace(..., retstep=True)``, ``la.where(c)``, ``x.item(i)``:
    NumPy's parameters that the native forms have no fused form of give NumPy's answer, on
    each device (on cuda through CuPy: the values of _R sum exactly in any order)."""
    call = NUMPY_KEYWORDS[name]
    got = call(la, la.asarray(_R))
    for g in (got if isinstance(got, tuple) else (got,)):
        if isinstance(g, la.LazyArray):
            assert g.device == any_device_mode
    _same(got, call(np, _R.copy()))


def test_memory_order_of_created_arrays(any_mode):
    """``order=`` of the creation functions, and the ``*_like`` forms keep a computed
    Fortran-ordered prototype's order ('K'), as NumPy's."""
    for make in (lambda m, **k: m.zeros((3, 4), **k), lambda m, **k: m.ones((3, 4), np.int8, **k),
                 lambda m, **k: m.empty((3, 4), **k), lambda m, **k: m.full((3, 4), 2.5, **k)):
        for order in ("C", "F"):
            got, want = make(la, order=order).to_numpy(), make(np, order=order)
            assert got.flags.f_contiguous == want.flags.f_contiguous
            assert got.flags.c_contiguous == want.flags.c_contiguous
            assert got.dtype == want.dtype and got.shape == want.shape
    fortran = np.asfortranarray(_R)
    for order in ("K", "A", "C", "F"):
        got, want = la.zeros_like(la.asarray(fortran), order=order).to_numpy(), np.zeros_like(fortran, order=order)
        assert (got.flags.f_contiguous, got.flags.c_contiguous) == \
            (want.flags.f_contiguous, want.flags.c_contiguous), order
    with pytest.raises(ValueError, match="only 'C' or 'F' order"):
        la.full((2, 2), 1.0, order="A")                  # NumPy's error
    with pytest.raises(ValueError, match="either both or neither"):
        la.where(la.asarray(_R) > 1, 1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        la.sum(la.asarray(_R), bogus=1)
    with pytest.raises(TypeError, match="positional arguments"):
        la.max(la.asarray(_R), 0, None, False, 1.0, True, 9)


def test_writing_functions_and_methods_write_in_place_as_numpy(any_mode):
    base, want = np.array([5.0, 1.0, 4.0]), np.array([5.0, 1.0, 4.0])
    x = la.asarray(base)                           # wraps the user's memory, as np.asarray
    np.add.at(x, [0, 0, 2], 1.0)
    np.add.at(want, [0, 0, 2], 1.0)
    np.testing.assert_array_equal(np.asarray(x), want)
    np.testing.assert_array_equal(base, want)      # the user's array is the same memory
    np.copyto(x, 2.0)
    np.testing.assert_array_equal(base, [2.0, 2.0, 2.0])
    y = la.asarray(np.array([5.0, 1.0, 4.0]))
    view = y[::-1]
    assert y.sort() is None
    np.testing.assert_array_equal(np.asarray(y), [1.0, 4.0, 5.0])
    np.testing.assert_array_equal(np.asarray(view), [5.0, 4.0, 1.0])
    y.fill(9.0)
    np.testing.assert_array_equal(np.asarray(view), [9.0, 9.0, 9.0])


def test_copyto_where_a_0d_result_is_a_scalars_truth(any_device_mode):
    """lazyarr's 0-d results stand for NumPy's scalars: ``copyto(where=)`` takes their truth,
    as NumPy takes ``where=np.float32(-inf)`` (stateful fuzz seed 9200005); a bool 0-d stays
    an array mask."""
    for value, writes in ((-np.inf, True), (0.0, False), (np.nan, True), (3.0, True)):
        a = np.array([value, 1.0], dtype=np.float32)
        want = np.zeros(2)
        np.copyto(want, 0.25, where=np.add(np.bool_(True), a[0]) if value != 0.0 else a[0])
        assert (want == 0.25).all() == writes
        x = la.asarray(a)
        got = la.zeros(2)
        np.copyto(got, 0.25, where=la.add(np.bool_(True), x[..., 0]) if value != 0.0 else x[0])
        np.testing.assert_array_equal(np.asarray(got), want)
        got = la.zeros(2)
        la.copyto(got, 0.25, where=x.sum() != 0)                       # a bool 0-d
        np.testing.assert_array_equal(np.asarray(got), np.full(2, 0.25) if a.sum() != 0
                                      else np.zeros(2))


def test_array_methods_and_attributes(any_mode):
    a = np.arange(6.0).reshape(2, 3)
    x = la.asarray(a) + 0
    _same(x.T, a.T)
    _same(x.reshape(3, 2), a.reshape(3, 2))
    _same(x.reshape((6,)), a.reshape((6,)))
    _same(x.flatten(), a.flatten())
    _same(x.dot(x.T), a.dot(a.T))
    _same(x.cumsum(axis=1), a.cumsum(axis=1))
    _same(x.nonzero(), a.nonzero())
    _same(x.argsort(), a.argsort())
    assert x.itemsize == 8 and (la.asarray(a)).strides == a.strides
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        x.nope  # noqa: B018
    with pytest.raises(AttributeError):
        x._private  # noqa: B018
    with pytest.raises(AttributeError, match="buffer flags"):
        x.setflags(write=False)
    assert not hasattr(x, "__cuda_array_interface__")


# ------------------------------------------------------------------------------ other libraries
class Foreign:
    """An array of another library (Dask, torch...): its own dispatch must run."""

    def __array_function__(self, func, types_, args, kwargs):
        return ("foreign", func.__name__)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return ("foreign", ufunc.__name__, method)


def test_other_libraries_arrays_are_not_swallowed():
    x = la.asarray([1.0, 2.0])
    f = Foreign()
    assert np.concatenate([x, f]) == ("foreign", "concatenate")
    assert np.where(x > 0, f, 0) == ("foreign", "where")           # a native function too
    assert np.add(x, f) == ("foreign", "add", "__call__")           # a native ufunc
    assert np.fmod(x, f) == ("foreign", "fmod", "__call__")         # a fallback ufunc
    assert np.add.outer(x, f) == ("foreign", "add", "outer")


# ------------------------------------------------------------------------------ the setting
def test_fallback_setting():
    x = la.asarray([3.0, 1.0])
    with la.config(fallback="warn"), pytest.warns(la.FallbackWarning, match="lazyarr.sort"):
        la.sort(x)
    with la.config(fallback="warn"), pytest.warns(la.FallbackWarning, match="ndarray.cumsum"):
        x.cumsum()
    for use in (lambda: np.cumsum(x), lambda: np.cumprod(x), lambda: x @ x,
                lambda: np.divmod(x, 2.0)):
        with la.config(fallback="warn"), pytest.warns(la.FallbackWarning) as record:
            use()
        assert record[0].filename == __file__            # the warning names the user's line
    with la.config(fallback="error"):
        with pytest.raises(la.FallbackError, match="cumprod"):
            np.cumprod(x)
        with pytest.raises(TypeError, match="matmul"):                 # FallbackError is one
            x @ x  # noqa: B018
        la.sum(x)                                                      # native: no fallback
        assert la.float32 is np.float32 and la.finfo is np.finfo       # objects, not calls
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        la.sort(x)                                                     # allow: silent
    with pytest.raises(ValueError, match="fallback"):
        la.set_config(fallback="sometimes")
    env = dict(os.environ, LAZYARR_FALLBACK="error")
    out = subprocess.run([sys.executable, "-c", "import lazyarr as la; print(la.get_config()."
                          "fallback); la.sort(la.asarray([1.0]))"], capture_output=True,
                         text=True, env=env, check=False)
    assert out.stdout.split() == ["error"] and "FallbackError" in out.stderr


def test_explain_names_fallback_results():
    x = la.asarray(np.eye(2) * 2)
    inv = la.linalg.inv(x)
    assert any("numpy.linalg.inv" in n for n in la.explain(inv).notes)
    assert any("numpy.linalg.inv" in n and "input" in n for n in la.explain(inv * 2 + 1).notes)
    assert "numpy.linalg.inv" in str(la.explain(inv * 2))
    assert not any("fallback" in n for n in la.explain(x * 2).notes)


# ------------------------------------------------------------------------------ cuda without CuPy's name
def test_a_name_cupy_lacks_raises_naming_it(monkeypatch):
    """On cuda the fallback calls CuPy; a name CuPy lacks is a TypeError naming it (checked
    here with a stand-in CuPy module, before any data is touched)."""
    fake_cupy = types.SimpleNamespace(linalg=types.SimpleNamespace())
    monkeypatch.setattr(_devices, "xp", lambda device: fake_cupy if device == "cuda" else np)
    x = la.LazyArray._from_node(_node.leaf(np.ones((2, 2)), "cuda"))
    with pytest.raises(TypeError, match=r"numpy\.trapezoid.*cupy\.trapezoid"):
        la.trapezoid(x[0])
    with pytest.raises(TypeError, match=r"numpy\.nanmedian"):
        np.nanmedian(x)
    with pytest.raises(TypeError, match=r"numpy\.add\.at"):
        la.add.at(x, [0], 1.0)


def test_names_cupy_lacks_or_changes_run_with_cupys_functions(monkeypatch):
    """The array API linalg names, ``unstack``, ... are missing
    from CuPy or differ there (the array API suite on the H200): on cuda the fallback runs
    lazyarr/_cupy_gaps.py's version, written with the array module's own functions. Here the
    stand-in CuPy is NumPy without those names, so the results must be NumPy's."""

    lacking = {"svdvals", "trace", "diagonal", "tensordot", "vecdot", "vector_norm",
               "matrix_norm", "cross", "unstack"}                  # as CuPy 14.2 lacks them
    fake_linalg = types.SimpleNamespace(**{k: v for k, v in vars(np.linalg).items() if k not in lacking})
    fake_cupy = types.SimpleNamespace(**{k: v for k, v in vars(np).items()
                                         if k not in lacking and k != "linalg"}, linalg=fake_linalg)
    monkeypatch.setattr(_devices, "xp", lambda device: fake_cupy if device == "cuda" else np)
    monkeypatch.setattr(_devices, "to_host", lambda device, data: np.asarray(data))
    a = np.arange(12.0).reshape(3, 4) - 5
    x = la.LazyArray._from_node(_node.leaf(a, "cuda"))
    got = la.linalg.vecdot(x, x, axis=1)
    assert got.device == "cuda"
    np.testing.assert_array_equal(got.to_numpy(), np.linalg.vecdot(a, a, axis=1))
    np.testing.assert_allclose(la.linalg.svdvals(x).to_numpy(), np.linalg.svdvals(a), rtol=1e-12)
    assert [u.to_numpy().tolist() for u in la.unstack(x)] == a.tolist()
    m = a[:, 1:] * a[:, 1:] + 1          # (a pending expression would need the real GPU)
    result = la.linalg.slogdet(la.LazyArray._from_node(_node.leaf(m, "cuda")))
    assert type(result) is type(np.linalg.slogdet(np.eye(1)))          # NumPy's SlogdetResult
    want = np.linalg.slogdet(m)
    np.testing.assert_allclose(result.logabsdet.to_numpy(), want.logabsdet)
    assert float(result.sign) == want.sign


# ------------------------------------------------------------------------------ the name page
def test_every_numpy_name_is_served_as_the_table_says():
    names = _numpy_names.numpy_names()
    assert set(np.__all__) <= set(names) and "linalg.solve" in names and "fft.rfft" in names
    for path in names:
        kind, note = _numpy_names.status(path)
        space, _, name = path.rpartition(".")
        module = getattr(la, space) if space else la
        if kind == "unsupported":
            with pytest.raises(AttributeError, match="lazyarr does not provide"):
                getattr(module, name)
            assert note
        else:
            assert kind in ("native", "fallback")
            assert getattr(module, name) is not None or name == "newaxis"


def test_name_page_lists_every_name():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "docs"))
    try:
        import gen_numpy_names
    finally:
        sys.path.pop(0)
    page = gen_numpy_names.page()
    names = _numpy_names.numpy_names()
    for path in names:
        assert f"``numpy.{path}``" in page
    counts = {k: sum(_numpy_names.status(p)[0] == k for p in names)
              for k in ("native", "fallback", "unsupported")}
    assert (f"Totals: {len(names)} names; {counts['native']} native, {counts['fallback']} "
            f"through the fallback, {counts['unsupported']} unsupported.") in page
    assert counts["unsupported"] < 20 and counts["native"] > 100
    with pytest.raises(AttributeError, match="ctypes"):
        la.ctypeslib  # noqa: B018


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy")
def test_fallback_on_cuda():
    with la.config(device="cuda"):
        x = la.asarray(_A)
        for got, want in ((la.concatenate([x, x * 2]), np.concatenate([_A, _A * 2])),
                          (np.linalg.inv(x), np.linalg.inv(_A)), (x @ x, _A @ _A),
                          (x.T, _A.T), (np.add.outer(x[0], x[1]), np.add.outer(_A[0], _A[1])),
                          (la.eye(3), np.eye(3)), (x[1, 2], _A[1, 2])):
            assert isinstance(got, la.LazyArray) and got.device == "cuda"
            np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12)
        assert float(x[0, 0]) == 3.0 and la.random.rand(3).device == "cuda"
