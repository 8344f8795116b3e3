"""lazyarr's stable argsort on the CPU (lazyarr/_functions/_stable_argsort.py): NumPy's
``argsort(stable=True)`` indices, through NumPy's faster default sort, for every dtype it
takes, every axis, ties, signed zeros, NaNs of both signs and any payload, and layouts."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr._functions import _stable_argsort
from lazyarr._functions._stable_argsort import stable_argsort

FLOATS = [np.float16, np.float32, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _edge_values(dtype: np.dtype, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Values drawn from a small set of edges (so ties are many)."""
    if dtype.kind == "f":
        nan_payload = np.array([0x7FF8000000000123, 0xFFF0000000000001], np.uint64).view(np.float64)
        pool = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1.5, -1.5, 2.0, 1e-40,
                         -1e-300, 65504.0, *nan_payload], np.float64)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            return rng.choice(pool, size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dtype)
    pool = np.array([info.min, info.min + 1, 0, 1, info.max - 1, info.max], dtype)
    return rng.choice(pool, size=shape)


def _random_values(dtype: np.dtype, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", [np.dtype(t) for t in FLOATS + INTS + [np.bool_]], ids=str)
@pytest.mark.parametrize("shape", [(1,), (2,), (9,), (300,), (3, 70), (4, 5, 6), (0,), (2, 0), ()])
def test_the_indices_of_numpys_stable_sort(dtype, shape):
    rng = np.random.default_rng(sum(shape) + dtype.itemsize)
    for values in (_edge_values(dtype, rng, shape), _random_values(dtype, rng, shape)):
        layouts = [values]
        if values.ndim:
            layouts += [values[..., ::-1], np.asfortranarray(values)]
        for a in layouts:
            for axis in [*range(-a.ndim, a.ndim), None] if a.ndim else [None, -1]:
                want = np.argsort(a, axis=axis, stable=True)
                with warnings.catch_warnings():
                    warnings.simplefilter("error")      # (no flag of a signalling NaN)
                    got = stable_argsort(a, axis)
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want, err_msg=f"{dtype} {shape} axis={axis}")


def test_big_endian_and_other_dtypes_take_numpys_stable_sort():
    for a in (np.arange(20, 0, -1, dtype=">f8") % 3, np.array([3 + 1j, 1 - 1j, 3 + 1j, 0j]),
              np.array(["b", "a", "b"])):
        np.testing.assert_array_equal(stable_argsort(a), np.argsort(a, stable=True))


def test_ties_of_wide_values_are_put_in_index_order(monkeypatch):
    """8-byte values take NumPy's default argsort, which leaves ties in any order: the fix-up
    must reorder them (a default sort that reverses every run of ties must still give the
    stable indices)."""
    real = np.argsort

    def reversing_ties(a, axis=-1, **kw):
        if kw:
            return real(a, axis, **kw)
        # stable order of (value, -index): every run of ties reversed
        rows = np.moveaxis(a, axis, -1)
        keys = np.broadcast_to(-np.arange(rows.shape[-1]), rows.shape)
        order = np.lexsort((keys, rows), axis=-1)
        return np.moveaxis(order, -1, axis)

    rng = np.random.default_rng(7)
    a = rng.integers(0, 5, (6, 40)).astype(np.float64)
    a[0, :3] = [-0.0, 0.0, -0.0]
    a[1, ::4] = np.nan
    a[2, ::3] = -np.nan
    monkeypatch.setattr(_stable_argsort.np, "argsort", reversing_ties)
    for axis in (0, 1, None):
        np.testing.assert_array_equal(stable_argsort(a, axis), real(a, axis=axis, stable=True))


def test_la_argsort_is_stable_by_default_and_with_each_spelling():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, (5, 64)).astype(np.float32)
    x = la.asarray(a)
    want = np.argsort(a, stable=True)
    for got in (la.argsort(x), la.argsort(x, stable=True), la.argsort(x, kind="stable"),
                la.argsort(x, kind="mergesort"), la.argsort(la.abs(x) + 0)):
        np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(la.argsort(x, axis=0)), np.argsort(a, axis=0, stable=True))
    np.testing.assert_array_equal(np.asarray(la.argsort(x, axis=None)), np.argsort(a, axis=None, stable=True))
    # an unstable request gives a valid order (NumPy's own call)
    got = np.asarray(la.argsort(x, stable=False))
    np.testing.assert_array_equal(np.take_along_axis(a, got, -1), np.sort(a))
    with pytest.raises(ValueError):
        la.argsort(x, kind="stable", stable=True)


@pytest.mark.parametrize("dtype", [np.dtype(t) for t in FLOATS + INTS + [np.bool_]], ids=str)
@pytest.mark.parametrize("shape", [(0,), (1,), (50,), (4, 30)])
def test_unique_with_indices_is_numpys(dtype, shape):
    """``unique(return_index=True)`` (and ``unique_all``) through the stable argsort: NumPy's
    values, first indices, inverse and counts, equal_nan both ways."""
    rng = np.random.default_rng(len(shape) + dtype.itemsize)
    for values in (_edge_values(dtype, rng, shape), _random_values(dtype, rng, shape)):
        for equal_nan in (True, False):
            for inverse in (False, True):
                for counts in (False, True):
                    want = np.unique(values, return_index=True, return_inverse=inverse,
                                     return_counts=counts, equal_nan=equal_nan)
                    got = la.unique(la.asarray(values), return_index=True, return_inverse=inverse,
                                    return_counts=counts, equal_nan=equal_nan)
                    for g, w in zip(got, want, strict=True):
                        g = np.asarray(g)
                        assert g.dtype == w.dtype and g.shape == w.shape
                        np.testing.assert_array_equal(g.view(np.uint8) if g.dtype.kind == "f" else g,
                                                      w.view(np.uint8) if w.dtype.kind == "f" else w)
        if len(shape) == 1:
            want = np.unique(values, return_index=True, axis=0)
            got = la.unique(la.asarray(values), return_index=True, axis=0)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(np.asarray(g), w)
        x = la.asarray(values)
        want = np.unique(values, return_index=True, return_inverse=True, return_counts=True,
                         equal_nan=False)
        got = la.unique_all(x)
        np.testing.assert_array_equal(np.asarray(got.indices), want[1])
        np.testing.assert_array_equal(np.asarray(got.inverse_indices), want[2].reshape(shape))
        np.testing.assert_array_equal(np.asarray(got.counts), want[3])


def test_the_argsort_method_is_la_argsort():
    rng = np.random.default_rng(11)
    a = rng.integers(0, 3, (4, 40)).astype(np.float64)
    a[0, :4] = [0.0, -0.0, 0.0, -0.0]
    x = la.asarray(a)
    for axis in (-1, 0, None):
        np.testing.assert_array_equal(np.asarray(x.argsort(axis)), np.argsort(a, axis=axis, stable=True))
    np.testing.assert_array_equal(np.asarray(x.argsort(kind="stable")), np.argsort(a, stable=True))
    got = np.asarray(x.argsort(kind="quicksort"))           # NumPy's own: a valid order
    np.testing.assert_array_equal(np.take_along_axis(a, got, -1), np.sort(a))
