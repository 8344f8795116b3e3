"""Searching, counting and partitioning (lazyarr/_functions/_searching.py): ``searchsorted``,
``digitize``, ``bincount``, ``histogram``, ``histogram_bin_edges``, ``partition``,
``argpartition`` and ``isin``, lazyarr's own, checked against NumPy 2.4: dtypes, shapes and
values (partition: the sorted values and the values at ``kth``, NumPy leaves the rest's order
open), NaN/inf/-0.0, empty inputs, axes, pending inputs (computed once; ``partition`` in the
result's memory; ``isin`` against a small set one fused kernel), ``numpy.NAME(lazy)``, the
methods, NumPy's errors with their messages, ``la.explain``'s records.

The cuda branches (NumPy's semantics where CuPy differs) are also run here with ``xp =
numpy`` on host arrays (``_cuda`` below: the same code CuPy's arrays go through on a GPU), over
all dtypes; the ``gpu`` tests run them through the cuda device (``LAZYARR_CUDA_SIM=1``)."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _numpy_names
from lazyarr._functions import _searching

NAMES = ["searchsorted", "digitize", "bincount", "histogram", "histogram_bin_edges",
         "partition", "argpartition", "isin"]
DTYPES = [np.bool_, np.int8, np.int64, np.uint8, np.uint64, np.float32, np.float64]
FLOATS = [np.float32, np.float64]
_NEEDS_CUDA = pytest.mark.skipif(not la.cuda_available(),
                                 reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")


def _data(dtype, shape, seed=0, special=True):
    """Values of ``dtype``; floats with NaN, +-inf and -0.0/0.0 among them."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -20, 20, shape).astype(dtype)
    a = np.round(rng.standard_normal(shape) * 5, 1)
    if dtype.kind == "c":
        a = a + 1j * np.round(rng.standard_normal(shape), 1)
    a = a.astype(dtype)
    flat = a.reshape(-1)
    if special and flat.size >= 6:
        flat[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.nan]
        rng.shuffle(flat)
    return a


def _np(x):
    return x.to_numpy() if isinstance(x, la.LazyArray) else np.asarray(x)


def _same(got, want):
    got = _np(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype,
                                                                 got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def _cuda(name, *args, **kwargs):
    """The cuda branch of ``name`` run with ``xp = numpy`` on host arrays."""
    return getattr(_searching, "_" + name)(np, "cuda", *args, **kwargs)


def _raises_as_numpy(numpy_call, *calls):
    """Each of ``calls`` raises NumPy's exception: its type and message."""
    with pytest.raises(Exception) as info:
        numpy_call()
    for call in calls:
        with pytest.raises(type(info.value), match=re.escape(str(info.value))):
            call()


# ------------------------------------------------------------------------------ searchsorted
@pytest.mark.parametrize("dtype", [*DTYPES, np.complex128], ids=str)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_is_numpys(dtype, side):
    a = np.sort(_data(dtype, 40))
    v = _data(dtype, (3, 7), seed=1)
    want = np.searchsorted(a, v, side=side)
    _same(la.searchsorted(la.asarray(a), la.asarray(v), side=side), want)
    _same(_cuda("searchsorted", a, v, side=side), want)
    order = np.argsort(a[::-1], kind="stable")
    want = np.searchsorted(a[::-1], v, side=side, sorter=order)
    _same(la.searchsorted(la.asarray(a[::-1]), v, side=side, sorter=la.asarray(order)), want)
    _same(_cuda("searchsorted", a[::-1], v, side=side, sorter=order), want)


def test_searchsorted_scalars_empty_pending_dispatch_method(kernels):
    a = np.array([0.1, 0.5, 1.0], np.float32)
    x = la.asarray(a)
    # a Python float is NumPy's weak scalar: compared as float32 (CuPy's would be float64)
    for v in (0.1, 1, np.float64(0.1), [0.1, 2.0]):
        _same(la.searchsorted(x, v), np.searchsorted(a, v))
        _same(_cuda("searchsorted", a, v), np.searchsorted(a, v))
    _same(la.searchsorted(la.asarray(np.empty(0)), [1.0, 2.0]),
          np.searchsorted(np.empty(0), [1.0, 2.0]))
    _same(la.searchsorted(x, np.empty((0, 3))), np.searchsorted(a, np.empty((0, 3))))
    _same(_cuda("searchsorted", np.empty(0), [1.0]), np.searchsorted(np.empty(0), [1.0]))
    kernels.clear()
    got = la.searchsorted(x * 2, x + 0.25)          # two pending operands: one kernel each
    _same(got, np.searchsorted(a * 2, a + np.float32(0.25)))
    assert len(kernels) == 2, kernels
    _same(np.searchsorted(x, [0.5], side="right"), np.searchsorted(a, [0.5], side="right"))
    assert isinstance(np.searchsorted(x, [0.5]), la.LazyArray)
    _same(x.searchsorted(0.5, side="right"), a.searchsorted(0.5, side="right"))
    _same(la.searchsorted(x, [0.5], sorter=None), np.searchsorted(a, [0.5]))


def test_searchsorted_errors():
    a, v = np.array([1, 2, 3]), np.array([2])
    x = la.asarray(a)
    cases = [dict(side="middle"), dict(sorter=[0, 1]), dict(sorter=[0, 7, 1]),
             dict(sorter=[0.0, 1.0, 2.0])]
    for kw in cases:
        _raises_as_numpy(lambda: np.searchsorted(a, v, **kw), lambda: la.searchsorted(x, v, **kw),
                         lambda: _cuda("searchsorted", a, v, **kw))
    for bad in (np.ones((2, 2)), np.ones(())):
        _raises_as_numpy(lambda: np.searchsorted(bad, v), lambda: la.searchsorted(bad, v),
                         lambda: _cuda("searchsorted", bad, v))


# ------------------------------------------------------------------------------ digitize
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("right", [False, True])
def test_digitize_is_numpys(dtype, right):
    x = _data(dtype, (4, 6))
    for bins in (np.array([-3.0, 0.0, 0.0, 2.5, 7.0]), np.array([9, 4, 0, -2]), np.array([1.0]),
                 np.empty(0), np.array([-np.inf, 0, np.inf])):
        want = np.digitize(x, bins, right=right)
        _same(la.digitize(la.asarray(x), la.asarray(bins), right=right), want)
        _same(_cuda("digitize", x, bins, right=right), want)
    _same(np.digitize(la.asarray(x) * 1, [0, 1]), np.digitize(x * 1, [0, 1]))
    bins = np.array([0.0, np.nan, 1.0])          # (NumPy takes these as monotonic)
    _same(la.digitize(la.asarray(x), bins), np.digitize(x, bins))
    _same(_cuda("digitize", x, bins), np.digitize(x, bins))


def test_digitize_errors():
    x = np.array([1.0, 2.0])
    for bins, data in (([1, 0, 2], x), ([[1, 2]], x), (5, x), ([1, 2], x + 1j)):
        _raises_as_numpy(lambda: np.digitize(data, bins),
                         lambda: la.digitize(la.asarray(data), bins),
                         lambda: _cuda("digitize", data, np.asarray(bins)))


# ------------------------------------------------------------------------------ bincount
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint64],
                         ids=str)
def test_bincount_is_numpys(dtype):
    x = np.abs(_data(dtype, 50)).astype(dtype)
    w = _data(np.float64, 50, special=False)
    for kw in ({}, {"minlength": 30}, {"weights": w}, {"weights": w.astype(np.float32),
                                                       "minlength": 3},
               {"weights": np.arange(50)}):
        want = np.bincount(x, **kw)
        _same(la.bincount(la.asarray(x), **kw), want)
        _same(_cuda("bincount", x, **kw), want)
    empty = np.empty(0, dtype)
    # (with no values NumPy looks at no weights: complex ones, or of another length, give
    # int zeros; the cuda branch raised TypeError, ValueError)
    for kw in ({}, {"minlength": 4}, {"weights": np.empty(0)}, {"weights": np.empty(0, complex)},
               {"weights": np.ones(3), "minlength": 2}):
        _same(la.bincount(la.asarray(empty), **kw), np.bincount(empty, **kw))
        _same(_cuda("bincount", empty, **kw), np.bincount(empty, **kw))


def test_bincount_pending_dispatch_and_errors(kernels):
    a = np.array([0, 3, 3, 1])
    x = la.asarray(a)
    kernels.clear()
    _same(np.bincount(x * 2, weights=la.asarray(a) + 0.5), np.bincount(a * 2, weights=a + 0.5))
    assert len(kernels) == 2, kernels
    cases = [(np.array([1.0, 2.0]), {}), (np.array([-1, 2]), {}), (np.ones((2, 2), int), {}),
             (a, {"minlength": -1}), (a, {"weights": [1.0, 2.0]}),
             (a, {"weights": np.ones(4, complex)})]
    for data, kw in cases:
        _raises_as_numpy(lambda: np.bincount(data, **kw),
                         lambda: la.bincount(la.asarray(data), **kw),
                         lambda: _cuda("bincount", data, **kw))
    with pytest.raises(TypeError, match=re.escape(
            "Cannot cast array data from dtype('float64') to dtype('int64') according to the "
            "rule 'safe'")):
        la.bincount(la.asarray(np.array([1.0])))


# ------------------------------------------------------------------------------ histogram
BINS = [10, 3, 1, [0.0, 1.0, 2.5, 4.0], np.array([-5, 0, 5]), "auto", "fd", "sturges",
        "doane", "scott", "stone", "rice", "sqrt"]


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int64, np.uint8, *FLOATS], ids=str)
@pytest.mark.parametrize("bins", BINS, ids=str)
def test_histogram_is_numpys(dtype, bins):
    a = _data(dtype, (5, 9), special=False)
    if dtype in FLOATS:
        a.reshape(-1)[:3] = [-0.0, 0.0, 2.5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)    # (NumPy's bool -> uint8 warning)
        want = np.histogram(a, bins)
        got = la.histogram(la.asarray(a), bins)
        cuda = _cuda("histogram", a, bins)
        edges = _cuda("histogram_bin_edges", a, bins)
        want_edges = np.histogram_bin_edges(a, bins)
    for result in (got, cuda):
        _same(result[0], want[0])
        _same(result[1], want[1])
    _same(edges, want_edges)


@pytest.mark.parametrize("kw", [{"range": (-2, 3)}, {"range": (0.5, 0.5)}, {"density": True},
                                {"weights": "float32"}, {"weights": "int8"},
                                {"weights": "complex128"}, {"weights": "float64", "density": True},
                                {"bins": [0, 1, 3], "weights": "float64"}], ids=str)
def test_histogram_keywords(kw):
    a = _data(np.float64, 60, special=False)
    a[:3] = [np.nan, np.inf, -np.inf] if "range" in kw else a[:3]
    kw = dict(kw)
    if "weights" in kw:
        kw["weights"] = _data(kw["weights"], 60, seed=3, special=False)
    with np.errstate(invalid="ignore"):
        want = np.histogram(a, **kw)
        for got in (la.histogram(la.asarray(a), **kw), _cuda("histogram", a, **kw)):
            assert _np(got[0]).dtype == want[0].dtype
            np.testing.assert_allclose(_np(got[0]), want[0], rtol=1e-6)
            _same(got[1], want[1])


def test_histogram_empty_pending_dispatch_and_errors(kernels):
    for kw in ({}, {"range": (0, 1), "bins": 4}, {"bins": [0, 1]}):
        want = np.histogram(np.empty(0), **kw)
        for got in (la.histogram(la.asarray(np.empty(0)), **kw), _cuda("histogram", np.empty(0), **kw)):
            _same(got[0], want[0])
            _same(got[1], want[1])
    a = np.linspace(-1, 1, 101)
    x = la.asarray(a)
    kernels.clear()
    hist, edges = np.histogram(x * 2 + 1, bins="auto")
    assert len(kernels) == 1, kernels
    want = np.histogram(a * 2 + 1, bins="auto")
    _same(hist, want[0])
    _same(edges, want[1])
    _same(np.histogram_bin_edges(x, 4), np.histogram_bin_edges(a, 4))
    w = np.ones(101)
    cases = [({"bins": -1}, a), ({"bins": 2.5}, a), ({"bins": [2, 1]}, a), ({}, np.array([1.0, np.nan])),
             ({"range": (2, 1)}, a), ({"bins": "auto", "weights": w}, a), ({"bins": "bogus"}, a),
             ({"weights": np.ones(3)}, a), ({"range": (0, np.inf)}, a)]
    for kw, data in cases:
        _raises_as_numpy(lambda: np.histogram(data, **kw),
                         lambda: la.histogram(la.asarray(data), **kw),
                         lambda: _cuda("histogram", data, **kw))


# ------------------------------------------------------------------------------ partition
def _check_partition(got, a, kth, axis, indices=False):
    """NumPy's partition contract: the same values along ``axis``, the ``kth`` sorted ones
    in place, nothing after a kth element smaller than it (NumPy's order of the others is
    unspecified, so they are not compared bit for bit)."""
    got = _np(got)
    if axis is None:
        a, axis = a.reshape(-1), -1
    if indices:
        assert got.dtype == np.intp and got.shape == a.shape
        np.testing.assert_array_equal(np.sort(got, axis=axis),
                                      np.broadcast_to(np.arange(a.shape[axis]).reshape(
                                          [-1 if i == axis % a.ndim else 1 for i in range(a.ndim)]),
                                          a.shape))
        got = np.take_along_axis(a, got, axis=axis)
    assert got.dtype == a.dtype and got.shape == a.shape
    ordered = np.sort(a, axis=axis)
    np.testing.assert_array_equal(np.sort(got, axis=axis), ordered)
    kths = np.atleast_1d(kth)
    np.testing.assert_array_equal(np.take(got, kths, axis=axis), np.take(ordered, kths, axis=axis))
    if a.dtype.kind != "c":         # (NaN sorts last: ranked as +inf here)
        key = np.where(np.isnan(got), np.inf, got) if a.dtype.kind == "f" else got.astype(float)
        n = a.shape[axis]
        for k in kths % n if n else ():
            pivot = np.take(key, [k], axis=axis)
            assert np.all(np.take(key, np.arange(k), axis=axis) <= pivot)
            assert np.all(np.take(key, np.arange(k + 1, n), axis=axis) >= pivot)


@pytest.mark.parametrize("dtype", [*DTYPES, np.complex128], ids=str)
@pytest.mark.parametrize("shape, axis, kth", [((17,), -1, 5), ((17,), 0, [0, 8, -1]),
                                              ((4, 9), -1, 3), ((4, 9), 0, [1, 2]),
                                              ((2, 3, 8), 1, -1), ((3, 7), None, 10),
                                              ((2, 0), 0, 1)])
def test_partition_is_numpys(dtype, shape, axis, kth):
    a = _data(dtype, shape)
    for x in (la.asarray(a), la.asarray(a) + 0 if dtype != np.bool_ else la.asarray(a) | False):
        _check_partition(la.partition(x, kth, axis=axis), a, kth, axis)
        _check_partition(la.argpartition(x, kth, axis=axis), a, kth, axis, indices=True)
    _check_partition(_cuda("partition", a, kth, axis=axis), a, kth, axis)
    _check_partition(_cuda("argpartition", a, kth, axis=axis), a, kth, axis, indices=True)


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_partition_pending_is_one_kernel_into_the_result(monkeypatch, axis):
    from lazyarr.backends import cpu_fused
    runs = []           # the CPU kernels run: into memory given to them, or into new memory
    for method in ("run", "run_into"):
        real = getattr(cpu_fused.CpuFusedBackend, method)
        monkeypatch.setattr(cpu_fused.CpuFusedBackend, method,
                            lambda self, *args, _m=method, _real=real, **kw: runs.append(_m)
                            or _real(self, *args, **kw))
    a = _data(np.float64, (6, 50))
    with la.config(mode="lazy", device="cpu"):
        got = la.partition(la.asarray(a) * 2 - 1, 4, axis=axis)
    assert runs == ["run_into"]           # the chain, into the result's memory
    _check_partition(got, a * 2 - 1, 4, axis)
    assert got._node.origin[0] == "partition"


def test_partition_dispatch_and_methods():
    a = _data(np.float64, (6, 50))
    x = la.asarray(a)
    got = la.partition(x * 2 - 1, 7)
    _check_partition(got, a * 2 - 1, 7, -1)
    _check_partition(np.partition(x + 1, [1, 4], axis=0), a + 1, [1, 4], 0)
    _check_partition(np.argpartition(x, 3), a, 3, -1, indices=True)
    _check_partition(x.argpartition(3, axis=0), a, 3, 0, indices=True)
    y = la.asarray(a.copy())
    view = y[0]
    assert y.partition(5) is None                      # in place, as ndarray.partition
    _check_partition(y, a, 5, -1)
    np.testing.assert_array_equal(_np(view), _np(y)[0])   # the view sees the write
    z = la.asarray(a.copy())
    before = z * 1                                   # a pending reader keeps the old values
    z.partition([2, 3], axis=0)
    _check_partition(z, a, [2, 3], 0)
    _same(before, a)
    _raises_as_numpy(lambda: a.copy().partition(50), lambda: z.partition(50))
    np.testing.assert_array_equal(np.sort(_np(z), axis=0), np.sort(a, axis=0))   # unwritten


def test_partition_errors():
    a = np.arange(5.0)
    x = la.asarray(a)
    cases = [(a, 5, {}), (a, -6, {}), (a, True, {}), (a, 1.0, {}), (np.ones((2, 3)), 1, {"axis": 2}),
             (a, 1, {"kind": "quick"}), (np.ones(()), 0, {}), (a, [[1]], {})]
    for data, kth, kw in cases:
        for name in ("partition", "argpartition") if data.ndim else ("partition",):
            np_call = getattr(np, name)
            la_call = getattr(la, name)
            _raises_as_numpy(lambda: np_call(data, kth, **kw),
                             lambda: la_call(la.asarray(data), kth, **kw),
                             lambda: la_call(la.asarray(data) + 0, kth, **kw),
                             lambda: _cuda(name, data, kth, **kw))
    with pytest.raises(ValueError):
        la.partition(x, 1, order="f")
    scalar = np.ones(())     # (NumPy's argpartition of a 0-d array: [0])
    _same(la.argpartition(la.asarray(scalar), 0), np.argpartition(scalar, 0))
    _same(_cuda("argpartition", scalar, 0), np.argpartition(scalar, 0))


# ------------------------------------------------------------------------------ isin
@pytest.mark.parametrize("dtype", [*DTYPES, np.complex128], ids=str)
@pytest.mark.parametrize("test_dtype", [np.int64, np.float32, np.float64, np.uint8], ids=str)
def test_isin_is_numpys(dtype, test_dtype):
    a = _data(dtype, (5, 8))
    small = np.array([0, -0.0, np.nan, 3, 2.5] if np.dtype(test_dtype).kind == "f"
                     else [0, 3, 7, 200]).astype(test_dtype)
    large = _data(test_dtype, 30, seed=2)
    for tests in (small, large, small[:1], small[:0]):
        for invert in (False, True):
            want = np.isin(a, tests, invert=invert)
            _same(la.isin(la.asarray(a), tests, invert=invert), want)
            _same(la.isin(la.asarray(a) + (0 if dtype != np.bool_ else False), la.asarray(tests),
                          invert=invert), np.isin(a + (0 if dtype != np.bool_ else False), tests,
                                                  invert=invert))
            _same(_cuda("isin", a, tests, invert=invert), want)


def test_isin_small_set_is_one_fused_kernel(kernels):
    a = _data(np.float64, (7, 9))
    x = la.asarray(a)
    kernels.clear()
    got = la.isin(x * 2, [0.0, np.nan, 1.0, -0.0])
    plan = la.explain(got)
    assert plan.library_calls == [] and len(plan.kernels) == 1
    _same(got, np.isin(a * 2, [0.0, np.nan, 1.0, -0.0]))
    assert len(kernels) == 1, kernels
    # downstream elementwise work fuses with it
    kernels.clear()
    _same(la.where(la.isin(x + 1, [1, 2], invert=True), x, 0),
          np.where(np.isin(a + 1, [1, 2], invert=True), a, 0))
    assert len(kernels) == 1, kernels
    # uint64 against int64: NumPy compares exactly, not through float64 (no fused kernel)
    big = np.array([2**63 + 1, 5], np.uint64)
    _same(la.isin(la.asarray(big) + np.uint64(0), np.array([-1, 5])),
          np.isin(big, np.array([-1, 5])))
    _same(np.isin(x + 0, [1.0]), np.isin(a, [1.0]))
    for kind in ("sort", "table"):
        ints = np.arange(10)
        _same(la.isin(la.asarray(ints) * 1, [3, 4], kind=kind), np.isin(ints, [3, 4], kind=kind))


def test_isin_empty_and_batched():
    for shape in ((0,), (3, 0), (2, 3, 4)):
        a = _data(np.float32, shape, special=False)
        for tests in ([1.5, 0.0], np.arange(-3, 30, dtype=np.int16), []):
            _same(la.isin(la.asarray(a) + 0, tests), np.isin(a + 0, tests))
            _same(_cuda("isin", a, tests), np.isin(a, tests))


def test_eager_mode_is_the_same_calls():
    a = _data(np.float64, (3, 10))
    s = np.sort(a[0])
    with la.config(mode="eager"):
        x = la.asarray(a)
        _same(la.searchsorted(la.asarray(s), x + 1), np.searchsorted(s, a + 1))
        _same(la.digitize(x, [-1, 0, 1]), np.digitize(a, [-1, 0, 1]))
        _same(la.bincount(la.asarray(np.arange(5)) * 2), np.bincount(np.arange(5) * 2))
        _same(la.histogram(x * 2, range=(-5, 5))[0], np.histogram(a * 2, range=(-5, 5))[0])
        _check_partition(la.partition(x * 2, 2), a * 2, 2, -1)
        _check_partition(la.argpartition(x, 2, axis=0), a, 2, 0, indices=True)
        _same(la.isin(x * 2, [np.inf, 0.0]), np.isin(a * 2, [np.inf, 0.0]))


def test_isin_errors():
    a = np.arange(4.0)
    for kw in ({"kind": "table"}, {"kind": "bogus"}):
        _raises_as_numpy(lambda: np.isin(a, [1.0], **kw), lambda: la.isin(la.asarray(a), [1.0], **kw),
                         lambda: la.isin(la.asarray(a) * 1, [1.0], **kw),
                         lambda: _cuda("isin", a, [1.0], **kw))


# ------------------------------------------------------------------------------ all of them
def test_native_names_and_records():
    for name in NAMES:
        assert _numpy_names.status(name) == ("native", ""), name
        assert getattr(la, name).__module__ == "lazyarr"
    a = la.asarray(np.arange(1024.0))
    (call,) = la.explain(la.searchsorted(a, a[:100] + 0.5) + 1).library_calls
    assert (call.name, call.bytes_written, call.flops) == ("searchsorted", 100 * 8, 100 * 11)
    (call,) = la.explain(la.bincount(la.asarray(np.arange(64)), weights=a[:64])).library_calls
    assert (call.name, call.flops) == ("bincount", 64)
    (call,) = la.explain(la.histogram(a, bins=4)[0]).library_calls
    assert (call.name, call.bytes_read, call.flops) == ("histogram", 1024 * 8, 1024 * 3)
    (call,) = la.explain(la.partition(a * 2, 3)).library_calls
    assert (call.name, call.bytes_read, call.bytes_written, call.flops) == \
        ("partition", 1024 * 8, 1024 * 8, None)


def test_jit_replays_the_calls():
    """Under ``la.jit`` each call is a step its replays run again, on the new operands."""
    search = la.jit(lambda a, v: la.searchsorted(a, v * 2) + 1)
    hist = la.jit(lambda x: la.histogram(x * 2, bins=4)[0] * 1)
    part = la.jit(lambda x: la.partition(x * 2, 3) - 1)
    for i in range(3):
        a, v = np.arange(10.0), np.array([1.0, 2.5, i])
        _same(search(la.asarray(a), la.asarray(v)), np.searchsorted(a, v * 2) + 1)
        _same(hist(la.asarray(a + i)), np.histogram((a + i) * 2, bins=4)[0])
        _check_partition(part(la.asarray(a[::-1] + i)), (a[::-1] + i) * 2 - 1, 3, -1)


# ------------------------------------------------------------------------------ cuda
def _on_cuda_searchsorted(a, x):
    s = np.sort(a[0])
    sx = la.asarray(s)
    _same_on_cuda(la.searchsorted(sx, x * 2, side="right"), np.searchsorted(s, a * 2, side="right"))
    _same_on_cuda(la.searchsorted(sx, 0.1), np.searchsorted(s, 0.1))     # (float32: weak 0.1)
    _same_on_cuda(sx.searchsorted(x[1]), s.searchsorted(a[1]))
    with pytest.raises(ValueError, match=re.escape("search side must be 'left' or 'right'")):
        la.searchsorted(sx, x, side="bogus")


def _on_cuda_digitize(a, x):
    _same_on_cuda(la.digitize(x * 1, [3, 0, -3]), np.digitize(a, [3, 0, -3]))
    _same_on_cuda(la.digitize(x, [-1, 0, 1], right=True), np.digitize(a, [-1, 0, 1], right=True))
    with pytest.raises(ValueError, match="bins must be monotonically increasing or decreasing"):
        la.digitize(x, [0, 2, 1])


def _on_cuda_bincount(a, x):
    i = la.asarray(np.array([0, 4, 4]))
    _same_on_cuda(la.bincount(i + 1), np.bincount([1, 5, 5]))
    _same_on_cuda(la.bincount(i, weights=la.asarray(np.array([0.5, 1, 2])), minlength=7),
                  np.bincount([0, 4, 4], weights=[0.5, 1, 2], minlength=7))
    with pytest.raises(ValueError, match="'list' argument must have no negative elements"):
        la.bincount(la.asarray(np.array([-1, 2])))
    with pytest.raises(TypeError, match=re.escape("Cannot cast array data from dtype('float64') "
                                                  "to dtype('int64') according to the rule 'safe'")):
        la.bincount(la.asarray(np.array([1.0])))


def _on_cuda_histogram(a, x):
    b = np.nan_to_num(a, posinf=9, neginf=-9)
    y = la.asarray(b)
    for bins in (5, "auto", [-9, 0, 9]):
        hist, edges = la.histogram(y + 1, bins)
        want = np.histogram(b + 1, bins)
        _same_on_cuda(hist, want[0])
        _same_on_cuda(edges, want[1])
    _same_on_cuda(la.histogram_bin_edges(y, "fd"), np.histogram_bin_edges(b, "fd"))
    with pytest.raises(ValueError, match="autodetected range of"):
        la.histogram(x)


def _on_cuda_partition(a, x):
    got = la.partition(x * 2, 3, axis=0)
    assert got.device == "cuda"
    _check_partition(got, a * 2, 3, 0)
    _check_partition(la.partition(x, [1, 5], axis=None), a, [1, 5], None)
    with pytest.raises(ValueError, match=re.escape("kth(=12) out of bounds (12)")):
        la.partition(x, 12)
    y = la.asarray(a.copy())
    y.partition(np.int64(4))
    assert y.device == "cuda"
    _check_partition(y, a, 4, -1)
    z = la.asarray(a.copy())
    z[:, ::2].partition([1, 2])                  # a strided view, partitioned in z's memory
    _check_partition(z[:, ::2], a[:, ::2], [1, 2], -1)
    _same(z[:, 1::2], a[:, 1::2])
    with pytest.raises(ValueError, match=re.escape("select kind must be 'introselect'")):
        y.partition(1, kind="quick")


def _on_cuda_argpartition(a, x):
    got = la.argpartition(x, [1, 5])
    assert got.device == "cuda"
    _check_partition(got, a, [1, 5], -1, indices=True)
    _check_partition(x.argpartition(2, axis=0), a, 2, 0, indices=True)
    with pytest.raises(ValueError, match=re.escape("select kind must be 'introselect'")):
        la.argpartition(x, 1, kind="quick")


def _on_cuda_isin(a, x):
    _same_on_cuda(la.isin(x * 1, [np.nan, 0.0, -0.0]), np.isin(a, [np.nan, 0.0, -0.0]))
    _same_on_cuda(la.isin(x, np.arange(20.0), invert=True), np.isin(a, np.arange(20.0), invert=True))
    with pytest.raises(ValueError, match="The 'table' method is only supported"):
        la.isin(x, [1.0], kind="table")


def _same_on_cuda(got, want):
    assert got.device == "cuda"
    _same(got, want)


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("name", ["searchsorted", "digitize", "bincount", "histogram",
                                  "partition", "argpartition", "isin"])
def test_on_cuda(name):
    a = _data(np.float32, (4, 12))
    with la.config(device="cuda", mode="lazy"):
        globals()["_on_cuda_" + name](a, la.asarray(a))
