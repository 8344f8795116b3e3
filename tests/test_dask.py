"""LazyArray as a Dask array chunk type (lazyarr/_dask.py, docs/dask.rst): results equal to
Dask with NumPy chunks, one fused kernel per chunk, mixed arithmetic with Dask arrays in both
orders, size, tokens, compact pickles, the ``array.backend = "lazyarr"`` entry point, and a
LocalCluster with worker processes."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import lazyarr as la
from lazyarr.backends import cpu_fused

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _chain(x, y, xp):
    return xp.sum(xp.sqrt(abs(x * y + 1.5)) * xp.tanh(x) - y)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal(4000).astype(np.float32),
            rng.standard_normal(4000).astype(np.float32))


def test_chunks_fuse_one_kernel_each_with_numpys_answer(data, monkeypatch):
    x, y = data
    want = _chain(da.from_array(x, chunks=1000), da.from_array(y, chunks=1000), np)
    lx = da.from_array(la.asarray(x), chunks=1000)
    ly = da.from_array(la.asarray(y), chunks=1000)
    assert isinstance(lx._meta, la.LazyArray)
    with la.config(mode="lazy", device="cpu"):
        expr = _chain(lx, ly, np)   # (Dask runs the chain on empty chunks for its meta here)
    runs = []
    real_run = cpu_fused.CpuFusedBackend.run
    monkeypatch.setattr(cpu_fused.CpuFusedBackend, "run",
                        lambda self, lowered: runs.append(lowered) or real_run(self, lowered))
    with la.config(mode="lazy", device="cpu"):
        got = expr.compute(scheduler="threads")
    assert isinstance(got, la.LazyArray) and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want.compute(scheduler="threads"), rtol=1e-4)
    # the chain and the chunk's partial sum are one kernel per chunk (4), plus the sum of the
    # four partials
    chunk_kernels = [r for r in runs if r.inputs[0].shape == (1000,)]
    assert len(chunk_kernels) == 4 and len(runs) <= 6, [r.program for r in runs]
    assert all(len(r.program.instrs) > 8 for r in chunk_kernels)   # the whole chain in each


@pytest.mark.parametrize("op", ["mul", "lt", "np.add", "la.add", "concatenate"])
def test_dask_arrays_and_lazyarrays_mix_in_both_orders(data, op):
    x, _ = data
    d, lx = da.from_array(x, chunks=1000), la.asarray(x)
    forms = {"mul": (lambda a, b: a * b, lambda a, b: a * b),
             "lt": (lambda a, b: a < b, lambda a, b: a < b),
             "np.add": (np.add, np.add),
             "la.add": (la.add, np.add),
             "concatenate": (lambda a, b: np.concatenate([a, b]), lambda a, b: np.concatenate([a, b]))}
    fn, numpy_fn = forms[op]
    for a, b, na, nb in ((d, lx, x, x), (lx, d, x, x)):
        got = fn(a, b)
        assert isinstance(got, da.Array), type(got)          # Dask's result: never computed
        assert isinstance(got._meta, la.LazyArray)
        out = got.compute(scheduler="threads")
        assert isinstance(out, la.LazyArray)
        np.testing.assert_array_equal(np.asarray(out), numpy_fn(na, nb))


def test_size_token_and_pickle():
    from dask.sizeof import sizeof
    from dask.tokenize import tokenize

    x = la.asarray(np.arange(1000.0))
    assert sizeof(x) >= x.nbytes and sizeof(x) < x.nbytes + 1024
    assert sizeof(x * 2) >= x.nbytes                      # pending: the bytes it will take
    assert tokenize(x) == tokenize(la.asarray(np.arange(1000.0)))
    assert tokenize(x) != tokenize(x + 1) and tokenize(x) != tokenize(x.astype(np.float32))
    part = la.sum(x * 2)                                  # a chunk's partial result
    assert len(pickle.dumps(part)) <= part.nbytes + 1024
    assert len(pickle.dumps(x * 2)) <= x.nbytes + 1024    # the values only, not the inputs
    np.testing.assert_array_equal(np.asarray(pickle.loads(pickle.dumps(x * 2))), np.arange(1000.0) * 2)


def test_the_lazyarr_backend_makes_lazyarr_chunks():
    def draws():
        return [da.ones((10, 4), chunks=5), da.zeros(7, chunks=3), da.full(6, 2.5, chunks=4),
                da.empty(3, chunks=2), da.arange(10, chunks=4),
                da.random.default_rng(3).random(10, chunks=5),
                da.random.default_rng(3).standard_normal(10, chunks=5),
                da.random.RandomState(3).random_sample(10, chunks=5)]

    with dask.config.set({"array.backend": "lazyarr"}):
        lazy = draws()
    with dask.config.set({"array.backend": "numpy"}):
        plain = draws()
    for i, (got, want) in enumerate(zip(lazy, plain)):
        assert isinstance(got._meta, la.LazyArray), i
        value = got.compute(scheduler="threads")
        assert isinstance(value, la.LazyArray), i
        if i != 3:                                        # (empty: no values to compare)
            np.testing.assert_array_equal(np.asarray(value), want.compute(scheduler="threads"))
    converted = da.from_array(np.arange(6.0), chunks=3).to_backend("lazyarr")
    assert isinstance(converted._meta, la.LazyArray)
    assert isinstance(converted.compute(scheduler="threads"), la.LazyArray)


def test_reductions_dask_dispatches_on_the_chunk_type(data):
    x, _ = data
    x = x.reshape(40, 100).copy()
    x[3, 5] = np.nan
    lx = da.from_array(la.asarray(x), chunks=(10, 50))
    nx = da.from_array(x, chunks=(10, 50))
    for fn in (lambda a: a.mean(axis=0), lambda a: da.nanmean(a, axis=1), lambda a: a.std(),
               lambda a: a.max(axis=1), lambda a: da.nansum(a), lambda a: a[::3, 7:90].sum(axis=0),
               lambda a: a.T[:50, :40].sum(), lambda a: da.tensordot(a, a[:, :10], axes=(0, 0))):
        got, want = fn(lx).compute(scheduler="threads"), fn(nx).compute(scheduler="threads")
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5, equal_nan=True)


def test_local_cluster_with_worker_processes(data):
    """Two worker processes: chunks and partial results travel as their values only, and the
    workers need no user code (unpickling a LazyArray imports lazyarr)."""
    distributed = pytest.importorskip("distributed")
    x, y = data
    want = float(_chain(x.astype(np.float64), y.astype(np.float64), np))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, worker_dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        lx = da.from_array(la.asarray(x), chunks=1000)
        ly = da.from_array(la.asarray(y), chunks=1000)
        got = client.compute(_chain(lx, ly, np)).result()
        assert isinstance(got, la.LazyArray)
        np.testing.assert_allclose(float(got), want, rtol=1e-4)
        blocks = client.compute(lx * 2).result()
        assert isinstance(blocks, la.LazyArray)
        np.testing.assert_array_equal(np.asarray(blocks), x * 2)


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_cuda_chunks(data):
    """Chunks on the GPU: the chain runs there, the answer is NumPy's; the backend's random
    draws and creation functions make cuda chunks under ``la.config(device="cuda")``."""
    x, y = data
    lx = da.from_array(la.asarray(x, device="cuda"), chunks=1000, asarray=False)
    ly = da.from_array(la.asarray(y, device="cuda"), chunks=1000, asarray=False)
    got = _chain(lx, ly, np).compute(scheduler="threads")
    assert isinstance(got, la.LazyArray) and got.device == "cuda"
    np.testing.assert_allclose(float(got), float(_chain(x.astype(np.float64), y.astype(np.float64), np)),
                               rtol=1e-4)
    with la.config(device="cuda"), dask.config.set({"array.backend": "lazyarr"}):
        r = da.random.default_rng(3).random(10, chunks=5).compute(scheduler="threads")
        o = da.ones(6, chunks=3).compute(scheduler="threads")
    assert r.device == "cuda" and o.device == "cuda"
    assert 0 <= float(la.min(r)) and float(la.max(r)) < 1 and float(la.sum(o)) == 6


@pytest.mark.parametrize("call", [
    lambda m, x, y: m.sqrt(x), lambda m, x, y: m.add(x, y), lambda m, x, y: m.tanh(x) - y,
    lambda m, x, y: m.sum(x), lambda m, x, y: m.mean(x * y, axis=0),
    lambda m, x, y: m.concatenate([x, y]), lambda m, x, y: m.where(x > 0, x, y),
    lambda m, x, y: m.zeros_like(x), lambda m, x, y: m.cumsum(x), lambda m, x, y: m.clip(x, -1, 1),
    lambda m, x, y: m.linalg.norm(x), lambda m, x, y: m.fft.rfft(x.rechunk(-1)),
], ids=["sqrt", "add", "tanh-y", "sum", "mean", "concatenate", "where", "zeros_like", "cumsum",
        "clip", "linalg.norm", "fft.rfft"])
def test_lazyarr_functions_of_dask_arrays_are_dask_arrays(data, call):
    """``la.<name>(dask_array)`` is a Dask array, as ``np.<name>(dask_array)`` is (NumPy's
    dispatch: lazyarr/_dispatch.py, ``deferring``), not the whole Dask array computed into one
    LazyArray; its chunks are lazyarr's, and its values NumPy's."""
    x, y = data
    lx, ly = (da.from_array(la.asarray(v), chunks=1000) for v in (x, y))
    with la.config(mode="lazy", device="cpu"):
        got = call(la, lx, ly)
        assert isinstance(got, da.Array)
        value = got.compute()
    want = call(np, da.from_array(x, chunks=1000), da.from_array(y, chunks=1000)).compute()
    assert isinstance(value, la.LazyArray)
    np.testing.assert_allclose(value.to_numpy(), want, rtol=2e-6, atol=1e-6)


class _Duck:
    """Another library's array: NumPy's protocols of its own, results of its own type."""

    def __init__(self, a):
        self.a = a

    @staticmethod
    def _unwrapped(values):
        return [v.a if isinstance(v, _Duck) else _Duck._unwrapped(v) if type(v) is list else v
                for v in values]

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _Duck(getattr(ufunc, method)(*self._unwrapped(inputs), **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        return _Duck(func(*self._unwrapped(args), **kwargs))


def test_other_libraries_arrays_go_to_numpy_asarray_converts(data):
    """Another library's array with NumPy's protocols gets NumPy's answer, through its own
    protocol, from a lazyarr function, as from NumPy's; ``la.asarray`` of a Dask array
    converts it (NumPy's too)."""
    x, y = data
    for call in (lambda m, v: m.sqrt(v), lambda m, v: m.add(v, 1), lambda m, v: m.sum(v, axis=0),
                 lambda m, v: m.concatenate([v, v]), lambda m, v: m.reshape(v, (40, 100)),
                 lambda m, v: m.linalg.norm(v)):
        got = call(la, _Duck(x))
        assert isinstance(got, _Duck)
        np.testing.assert_array_equal(got.a, call(np, x))
    lx = la.asarray(da.from_array(x, chunks=1000))
    assert isinstance(lx, la.LazyArray)
    np.testing.assert_array_equal(lx.to_numpy(), x)
