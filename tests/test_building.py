"""lazyarr/_functions/_building.py: outer (and ufunc.outer), tri/tril/triu, eye, meshgrid and
atleast_*d against NumPy (values, dtype, shape, result type), on computed and pending inputs, in
both modes; each stays lazy and fuses with what reads it."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import DTYPES, assert_same, edge_values, pending, random_array

import lazyarr as la

SHAPES_2D = [(3, 4), (4, 3), (1, 1), (0, 3), (2, 3, 4), (2, 0, 2)]


def _both(a):
    """The same values as a computed and as a pending LazyArray."""
    return [la.asarray(a), pending(a)]


def _same(got, want):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert isinstance(got, la.LazyArray)
    assert_same(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tril_triu(dtype, mode, rng):
    for shape in SHAPES_2D + [(5,)]:
        a = random_array(rng, dtype, shape)
        for x in _both(a):
            for k in (0, 1, -1, 5, -5):
                _same(la.tril(x, k), np.tril(a, k))
                _same(la.triu(x, k=k), np.triu(a, k=k))
        _same(np.triu(la.asarray(a), 1), np.triu(a, 1))          # numpy.triu(lazy): ours
    _same(la.tril([[1, 2], [3, 4]]), np.tril([[1, 2], [3, 4]]))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_outer(dtype, mode, rng):
    for sa, sb in [((3,), (4,)), ((2, 3), (4,)), ((), (3,)), ((0,), (3,)), ((2, 2), (2, 2))]:
        a, b = random_array(rng, dtype, sa), random_array(rng, dtype, sb)
        for x in _both(a):
            for y in _both(b):
                _same(la.outer(x, y), np.outer(a, b))
                _same(np.outer(x, y), np.outer(a, b))
                if dtype.kind != "b":
                    _same(la.add.outer(x, y), np.add.outer(a, b))
                    _same(np.subtract.outer(x, y), np.subtract.outer(a, b))
                _same(la.maximum.outer(x, y), np.maximum.outer(a, b))


def test_tri_eye(mode):
    for args, kw in [((3,), {}), ((3, 5), {}), ((4, 2, -1), {}), ((3,), {"k": 2, "dtype": np.int8}),
                     ((0, 3), {}), ((3, None, 1), {"dtype": bool})]:
        _same(la.tri(*args, **kw), np.tri(*args, **kw))
        _same(la.eye(*args, **kw), np.eye(*args, **kw))
    _same(la.eye(3, dtype=None), np.eye(3, dtype=None))
    assert np.asarray(la.eye(3, order="F")).flags.f_contiguous
    with pytest.raises(ValueError):
        la.eye(3, order="K")


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.complex64], ids=str)
def test_meshgrid(dtype, mode, rng):
    vectors = [random_array(rng, np.dtype(dtype), (n,)) for n in (3, 4, 2)]
    for count in (0, 1, 2, 3):
        vs = vectors[:count]
        for kw in ({}, {"indexing": "ij"}, {"sparse": True}, {"copy": False}, {"indexing": "ij", "sparse": True}):
            got = la.meshgrid(*[la.asarray(v) for v in vs], **kw)
            _same(got, tuple(np.meshgrid(*vs, **kw)))
    grids = la.meshgrid(la.asarray(vectors[0]), la.asarray(vectors[1]))
    grids[0][0, 0] = vectors[0][1]                 # copy=True: memory of their own
    assert np.asarray(grids[0])[1, 0] == vectors[0][0]
    with pytest.raises(ValueError, match="indexing"):
        la.meshgrid(la.asarray(vectors[0]), indexing="xx")


def test_atleast(mode, rng):
    arrays = [np.float32(2.5), np.arange(3), np.ones((2, 3)), np.ones((2, 3, 4)), np.ones((0,))]
    for fn, numpy_fn in ((la.atleast_1d, np.atleast_1d), (la.atleast_2d, np.atleast_2d),
                         (la.atleast_3d, np.atleast_3d)):
        for a in arrays:
            _same(fn(la.asarray(a)), numpy_fn(a))
        _same(fn(*[la.asarray(a) for a in arrays]), numpy_fn(*arrays))
        _same(numpy_fn(la.asarray(arrays[1])), numpy_fn(arrays[1]))


def test_they_stay_lazy_and_fuse():
    with la.config(mode="lazy", device="cpu"):
        x = la.asarray(np.arange(12.0).reshape(3, 4))
        y = la.triu(x * 2, 1) + la.outer(x[0], x[:, 0])[:4, :3].T
        assert not y.is_materialized
        plan = la.explain(y)
        assert len(plan.kernels) == 1 and "fallback" not in str(plan)
        want = np.triu(np.arange(12.0).reshape(3, 4) * 2, 1) + \
            np.outer(np.arange(12.0).reshape(3, 4)[0], np.arange(12.0).reshape(3, 4)[:, 0])[:4, :3].T
        np.testing.assert_array_equal(np.asarray(y), want)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_diff(dtype, mode, rng):
    for shape in [(7,), (3, 5), (2, 3, 4), (0, 3), (1,)]:
        a = random_array(rng, dtype, shape)
        for x in _both(a):
            for n in (0, 1, 2, 3):
                for axis in range(-len(shape), len(shape)):
                    with np.errstate(all="ignore"):
                        _same(la.diff(x, n, axis), np.diff(a, n, axis))
    a = random_array(rng, dtype, (5,))
    _same(la.diff(la.asarray(a), prepend=a[:1], append=a[-1:]),
          np.diff(a, prepend=a[:1], append=a[-1:]))
    with pytest.raises(ValueError):
        la.diff(la.asarray(a), -1)
    with pytest.raises(ValueError):
        la.diff(la.asarray(a[0]))
    with pytest.raises(np.exceptions.AxisError):
        la.diff(la.asarray(a), axis=1)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round(dtype, mode, rng):
    """Bit for bit NumPy's: its own steps for floats (rint of a scaled value), signed zeros
    and half-to-even included; NumPy's own for complex, bool and integers to negative places."""
    a = np.concatenate([random_array(rng, dtype, (200,)), edge_values(dtype)])
    if dtype.kind == "f":
        a = (a * np.asarray(10.0, dtype) ** rng.integers(-3, 4, a.shape).astype(dtype)).astype(dtype)
    for x in _both(a):
        for decimals in (-2, -1, 0, 1, 2, 5):
            with np.errstate(all="ignore"):
                try:
                    want = np.round(a, decimals)
                except Exception as exc:  # noqa: BLE001 - bool: NumPy's own error
                    with pytest.raises(type(exc)):
                        la.round(x, decimals)
                    continue
                _same(la.round(x, decimals), want)
                _same(la.around(x, decimals=decimals), np.around(a, decimals=decimals))
                _same(np.round(x, decimals), want)


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_the_compositions_on_cuda():
    """The building, logic and NaN functions are compositions of lazyarr's ops: on cuda they
    run through the same kernels and give NumPy's values."""
    a = np.array([[1.0, np.nan, -2.5, 0.5], [3.25, 4.0, np.nan, -0.0], [1.5, 2.5, -1.5, 7.0]])
    x = la.asarray(a, device="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cases = [(la.tril(x, -1), np.tril(a, -1)), (la.triu(x), np.triu(a)),
                 (la.outer(x[0], x[1]), np.outer(a[0], a[1])), (la.diff(x, axis=1), np.diff(a, axis=1)),
                 (la.round(x * 1.2345, 2), np.round(a * 1.2345, 2)),
                 (la.nansum(x, axis=0), np.nansum(a, axis=0)), (la.nanmax(x, axis=1), np.nanmax(a, axis=1)),
                 (la.nanmean(x, axis=1), np.nanmean(a, axis=1)), (la.count_nonzero(x), np.count_nonzero(a)),
                 (la.isclose(x, x + 1e-9), np.isclose(a, a + 1e-9)),
                 (la.eye(3, device="cuda"), np.eye(3)),
                 (la.meshgrid(x[0], x[1][:2])[1], np.meshgrid(a[0], a[1][:2])[1])]
    for got, want in cases:
        assert got.device == "cuda"
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12, equal_nan=True)
    assert la.allclose(x, x, equal_nan=True) is True and la.array_equal(x, x * 1) is False
