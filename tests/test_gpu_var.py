"""var/std on cuda as two of lazyarr's own reductions (``CudaBackend._var_two_pass``): the
mean of the chain's float64 values, then the sum of their squared deviations from it, against
lazy mode's rule (``helpers.lazy_reduction``: NumPy's steps on the float64 values, rounded
once), over dtypes, axes, keepdims, ddof and edge values; two kernels, nothing stored, the
chain's floating-point errors reported once. On the GPU (``pytest -m gpu``) and the simulated
device."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import GPU_DTYPES, lazy_reduction, random_array

import lazyarr as la

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy")]

TOL = {2: 2e-3, 4: 2e-6, 8: 1e-12}


def _backend():
    from helpers import SIMULATED
    if SIMULATED:
        from lazyarr.backends.cuda.simulate import BACKEND
    else:
        from lazyarr.backends.cuda.backend import BACKEND
    return BACKEND


@pytest.fixture
def runs(monkeypatch):
    """The programs the cuda backend runs, as their root ops."""
    backend = _backend()
    seen = []
    real = type(backend).run
    monkeypatch.setattr(type(backend), "run", lambda self, low: seen.append(low.program.root.op)
                        or real(self, low))
    return seen


@pytest.mark.parametrize("dtype", [d for d in GPU_DTYPES if d.kind in "biuf"], ids=str)
@pytest.mark.parametrize("op", ["var", "std"])
def test_values_follow_lazy_modes_rule(op, dtype, rng, runs):
    a = random_array(rng, dtype, (23, 41))
    for kw in ({}, {"axis": 0}, {"axis": 1, "keepdims": True}, {"ddof": 1}, {"axis": (0, 1)},
               {"axis": -1, "ddof": 2}):
        with la.config(device="cuda", mode="lazy"), np.errstate(all="ignore"):
            x = la.asarray(a)
            got = np.asarray(getattr(la, op)(x * 1, **kw))
        want = lazy_reduction(op, a * np.asarray(1, a.dtype), **kw)
        assert got.dtype == want.dtype and got.shape == want.shape, kw
        np.testing.assert_allclose(got, want, rtol=TOL[want.dtype.itemsize],
                                   atol=TOL[want.dtype.itemsize], err_msg=str(kw))
    assert runs.count("sum") >= 2


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_two_kernels_and_edge_values(runs):
    a = np.array([[1.0, np.nan, 3.0], [np.inf, 2.0, -1.0], [4.0, 5.0, 6.0]])
    with la.config(device="cuda", mode="lazy"), np.errstate(all="ignore"):
        x = la.asarray(a)
        got = np.asarray(la.std(la.sqrt(abs(x)) + 1, axis=1))
    want = lazy_reduction("std", np.sqrt(abs(a)) + 1, axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
    assert runs == ["std", "sum", "sum"]


def test_the_chains_warnings_are_reported_once():
    a = np.array([0.0, 1.0, 2.0, -1.0])
    with la.config(device="cuda", mode="lazy"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.asarray(la.var(la.log(la.asarray(a))))
    messages = sorted(str(w.message) for w in caught if w.category is RuntimeWarning)
    assert messages == ["divide by zero encountered in log", "invalid value encountered in log"]


def test_complex_takes_the_other_way(runs):
    with la.config(device="cuda", mode="lazy"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = np.array([1 + 2j, 3 - 1j, -2 + 0.5j])
        np.testing.assert_allclose(np.asarray(la.var(la.asarray(z) * 2)), np.var(z * 2), rtol=1e-12)
    assert "sum" not in runs


def test_no_degrees_of_freedom_sums_the_squares_then_divides_by_zero(runs):
    """Slices of at most ``ddof`` elements: the two passes with ``ddof = count - 1`` (the
    sums of squares, exactly), divided by zero after (``_build._no_degrees_of_freedom``)."""
    with la.config(device="cuda", mode="lazy"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.asarray(la.var(la.asarray(np.arange(3.0)) * 2, ddof=3)) == \
            np.var(np.arange(3.0) * 2, ddof=3)      # (8 / 0: inf; CuPy's var gives NaN)
    assert runs.count("sum") == 2


@pytest.mark.parametrize("mode", ["lazy", "eager"])
@pytest.mark.parametrize("dtype", [np.int16, np.float32, np.float64])
@pytest.mark.parametrize("op", ["var", "std"])
def test_no_degrees_of_freedom_divides_by_zero_as_numpy(op, dtype, mode):
    """``ddof >= n``: NumPy's sum of squares over 0 (inf, NaN for a constant slice), where
    CuPy's own var gives NaN (seen on an H100): NumPy's steps run with CuPy instead."""
    a = np.array([[0, 1, 1], [2, 2, 2]]).astype(dtype)
    for kw in ({"axis": 1, "ddof": 3}, {"ddof": 6}, {"axis": 0, "ddof": 5}):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            want = getattr(np, op)(a, **kw)
            with la.config(device="cuda", mode=mode):
                x = la.asarray(a)
                got = np.asarray(getattr(la, op)(x * 1 if mode == "lazy" else x, **kw))
        assert got.dtype == want.dtype and got.shape == np.shape(want), kw
        np.testing.assert_array_equal(got, want, err_msg=str(kw))


def test_explain_shows_the_two_reductions():
    with la.config(device="cuda", mode="lazy"):
        x = la.asarray(np.arange(10.0))
        plan = la.explain(lambda: la.std(la.sqrt(x) + 1))
    assert [k.name for k in plan.kernels] == ["lazyarr_kernel[full]"] * 2
    assert any("two of lazyarr's reductions" in n for n in plan.notes)
    assert len(plan.notes) == len(set(plan.notes))          # (each told once)
    assert any(n.startswith("second pass: ") for n in plan.notes)
