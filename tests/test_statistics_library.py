"""Issue 18's statistics (lazyarr/_functions/_statistics_library.py), each against NumPy:
``cumulative_sum``/``cumulative_prod``, ``gradient``, ``cov``/``corrcoef``,
``median``/``percentile``/``quantile``, ``convolve``/``correlate``. Dtypes (integers, floats,
complex where NumPy takes them), NaN and inf, empty inputs with NumPy's errors and warnings,
1-d, 2-d and batched shapes, axes; pending inputs computed by their fused kernels (counted)
straight into the memory the library works in; ``numpy.NAME(lazy)`` dispatch; the native
status on the NumPy-names page; a few cases on cuda (gpu-marked; the simulator checks
them)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import random_data, record_bound_reductions, warning_messages

import lazyarr as la
from lazyarr._fallback import library_calls
from lazyarr._numpy_names import status
from lazyarr.backends import cpu_fused

NAMES = ["cumulative_sum", "cumulative_prod", "gradient", "cov", "corrcoef", "median",
         "percentile", "quantile", "convolve", "correlate"]
REAL = [np.int8, np.int32, np.int64, np.float32, np.float64]
ALL = [*REAL, np.complex64, np.complex128]
_NEEDS_CUDA = pytest.mark.skipif(not la.cuda_available(),
                                 reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")


def _data(shape, dtype, seed=0, special=False):
    a = random_data(shape, dtype, seed, ints=(-6, 7), scale=4)
    if special and a.dtype.kind in "fc" and a.size >= 4:
        flat = a.reshape(-1)
        flat[1], flat[-2] = np.nan, np.inf
    return a


def _close(got, want, rtol=None):
    assert isinstance(got, la.LazyArray), type(got)
    got = got.to_numpy()
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, \
        ((got.dtype, got.shape), (want.dtype, want.shape))
    if rtol is None:
        rtol = 2e-5 if want.dtype in (np.float32, np.complex64, np.float16) else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 10, equal_nan=True)


def _exact(got, want):
    assert isinstance(got, la.LazyArray), type(got)
    got, want = got.to_numpy(), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def _same_error(numpy_call, lazy_call):
    with pytest.raises(Exception) as numpy_error:
        numpy_call()
    with pytest.raises(type(numpy_error.value), match=_escaped(numpy_error.value)):
        lazy_call()


def _pending(x):
    """A pending copy of ``x`` (its values and dtype, bool too)."""
    return x + np.zeros((), x.dtype)


def _escaped(error):
    import re
    return re.escape(str(error))


@pytest.fixture
def counts(monkeypatch):
    """Lazy mode on the CPU, counting the kernels run into new memory (``run``, and the
    reductions' bound runners) and into memory given to them (``run_into``)."""
    found = {"run": 0, "into": 0}
    real_run, real_into = cpu_fused.CpuFusedBackend.run, cpu_fused.CpuFusedBackend.run_into

    def run(self, lowered):
        found["run"] += 1
        return real_run(self, lowered)

    def run_into(self, lowered, out, **kw):
        done = real_into(self, lowered, out, **kw)
        found["into"] += bool(done)
        return done

    monkeypatch.setattr(cpu_fused.CpuFusedBackend, "run", run)
    monkeypatch.setattr(cpu_fused.CpuFusedBackend, "run_into", run_into)
    reductions: list[int] = []
    record_bound_reductions(monkeypatch, lambda lowered: 1, reductions)
    with la.config(mode="lazy", device="cpu"):
        yield found, reductions


# ----------------------------------------------------------------------------- the names
@pytest.mark.parametrize("name", NAMES)
def test_native_and_reached_by_numpy(name):
    assert status(name)[0] == "native"
    assert getattr(la, name).__module__ == "lazyarr"
    from lazyarr._functions import NUMPY_FUNCTIONS
    assert NUMPY_FUNCTIONS[getattr(np, name)] is getattr(la, name)


def test_numpy_calls_return_lazy_arrays():
    a = _data((4, 9), np.float64)
    x = la.asarray(a)
    for got, want in [(np.cumulative_sum(x, axis=1), np.cumulative_sum(a, axis=1)),
                      (np.cumulative_prod(x[0], include_initial=True),
                       np.cumulative_prod(a[0], include_initial=True)),
                      (np.cov(x), np.cov(a)), (np.corrcoef(x), np.corrcoef(a)),
                      (np.median(x, axis=1), np.median(a, axis=1)),
                      (np.percentile(x, 30), np.percentile(a, 30)),
                      (np.quantile(x, [0.2, 0.9], axis=0), np.quantile(a, [0.2, 0.9], axis=0)),
                      (np.convolve(x[0], x[1]), np.convolve(a[0], a[1])),
                      (np.correlate(x[0], x[1, :3]), np.correlate(a[0], a[1, :3]))]:
        _close(got, want)
    got = np.gradient(x)
    assert type(got) is tuple and len(got) == 2
    for g, w in zip(got, np.gradient(a)):
        _close(g, w)


# ----------------------------------------------------------------------------- cumulative_*
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, *ALL], ids=str)
@pytest.mark.parametrize("shape, axis", [((7,), None), ((7,), 0), ((4, 6), 0), ((4, 6), 1),
                                         ((3, 4, 5), -1), ((0, 3), 0), ((3, 0), 1), ((), None)])
@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_cumulative(name, dtype, shape, axis, include_initial):
    a = _data(shape, dtype) if np.dtype(dtype) != np.bool_ else _data(shape, np.int8) > 0
    if name == "cumulative_prod" and a.dtype.kind in "fc":
        a = (a / 4 + 1).astype(dtype)      # (products of ~1: no overflow)
    x = la.asarray(a)
    want = getattr(np, name)(a, axis=axis, include_initial=include_initial)
    check = _exact if a.dtype.kind in "biu" else _close
    with la.config(mode="lazy"):
        check(getattr(la, name)(x, axis=axis, include_initial=include_initial), want)
        check(getattr(la, name)(_pending(x), axis=axis, include_initial=include_initial), want)
    with la.config(mode="eager"):
        check(getattr(la, name)(x, axis=axis, include_initial=include_initial), want)


def test_cumulative_dtype_keyword_special_values_and_errors():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 2.0])
    x = la.asarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _exact(la.cumulative_sum(x * 1, include_initial=True),
               np.cumulative_sum(a, include_initial=True))
        _exact(la.cumulative_prod(x * 1), np.cumulative_prod(a))
    _exact(la.cumulative_sum(la.asarray(np.arange(5, dtype=np.int8)) * 3, dtype=np.int16,
                             include_initial=True),
           np.cumulative_sum(np.arange(5, dtype=np.int8) * 3, dtype=np.int16,
                             include_initial=True))
    b = _data((3, 4), np.float64)
    _same_error(lambda: np.cumulative_sum(b), lambda: la.cumulative_sum(la.asarray(b) * 2))
    _same_error(lambda: np.cumulative_prod(b, axis=2),
                lambda: la.cumulative_prod(la.asarray(b) * 2, axis=2))
    out = la.asarray(np.zeros((3, 5)))
    got = la.cumulative_sum(la.asarray(b), axis=1, include_initial=True, out=out)
    assert got is out
    _close(out, np.cumulative_sum(b, axis=1, include_initial=True))


def test_cumulative_include_initial_of_a_pending_array_is_one_kernel(counts):
    found, reductions = counts
    a = _data((300, 70), np.float64)
    x = la.asarray(a)
    for axis in (0, 1):
        found.update(run=0, into=0)
        got = la.cumulative_sum(x * 2 - 1, axis=axis, include_initial=True)
        assert (found["run"], found["into"]) == (0, 1), found
        _close(got, np.cumulative_sum(a * 2 - 1, axis=axis, include_initial=True))


# ----------------------------------------------------------------------------- gradient
@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.float32, np.float64, np.complex128],
                         ids=str)
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_uniform(dtype, edge_order):
    shapes = [(9,), (5, 7), (3, 4, 6), (4, 3, 5)] + ([(2, 3)] if edge_order == 1 else [])
    for shape in shapes:
        a = _data(shape, dtype, special=True)
        x = la.asarray(a)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = np.gradient(a, edge_order=edge_order)
            got = la.gradient(x, edge_order=edge_order)
            got_pending = la.gradient(x * 1, edge_order=edge_order)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        got_pending = got_pending if isinstance(got_pending, tuple) else (got_pending,)
        assert len(got) == len(want) == len(got_pending)
        for g, p, w in zip(got, got_pending, want):
            _exact(g, w)
            _exact(p, w)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex64], ids=str)
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_spacing_and_axes(dtype, edge_order):
    a = _data((6, 5, 4), dtype)
    x = la.asarray(a)
    coords = np.array([0.0, 0.5, 1.5, 1.75, 3.0])
    cases = [((2.0,), {}), ((0.5,), {"axis": 1}), ((3,), {"axis": (0, 2)}),
             ((np.float64(0.25),), {"axis": -1}),
             ((coords,), {"axis": 1}), ((la.asarray(coords),), {"axis": 1}),
             ((np.arange(6) * 2, 1.5), {"axis": (0, 2)}),        # equal steps: a scalar
             ((1.0, coords, np.array([1.0, 2.0, 4.0, 8.0])), {}),
             ((np.float32(2),), {"axis": 0})]
    for varargs, kwargs in cases:
        host = tuple(v.to_numpy() if isinstance(v, la.LazyArray) else v for v in varargs)
        want = np.gradient(a, *host, edge_order=edge_order, **kwargs)
        got = la.gradient(x * 1, *varargs, edge_order=edge_order, **kwargs)
        assert isinstance(got, tuple) == isinstance(want, tuple)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            _exact(g, w)


def test_gradient_errors_are_numpys():
    a = _data((2, 5), np.float64)
    x = la.asarray(a)
    for args, kwargs in [((), {"edge_order": 2}), ((), {"edge_order": 3}),
                         ((1.0, 2.0, 3.0), {}), ((np.ones(4),), {"axis": 1}),
                         ((np.ones((2, 5)),), {"axis": 1}), ((), {"axis": 2}),
                         ((), {"axis": (0, 0)})]:
        _same_error(lambda: np.gradient(a, *args, **kwargs),
                    lambda: la.gradient(x * 1, *args, **kwargs))
    b = np.array([True, False, True])
    _same_error(lambda: np.gradient(b), lambda: la.gradient(la.asarray(b)))
    _same_error(lambda: np.gradient(np.ones(1)), lambda: la.gradient(la.asarray(np.ones(1))))
    _same_error(lambda: np.gradient(np.ones((0, 3)), axis=0),
                lambda: la.gradient(la.asarray(np.ones((0, 3))), axis=0))
    assert la.gradient(la.asarray(np.float64(3.0))) == np.gradient(np.float64(3.0)) == ()
    _close(la.gradient(la.asarray(np.ones((3, 0))), axis=0), np.gradient(np.ones((3, 0)), axis=0))


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("spacing", [0.5, np.array([0.0, 1, 3, 3.5, 5, 8, 9])],
                         ids=["uniform", "coordinates"])
def test_gradient_of_a_pending_array_writes_each_output_with_two_kernels(counts, edge_order,
                                                                         spacing):
    """Each output: its interior, and its two edges together (strided views of ``f``:
    ``[f[1], f[-1]] - [f[0], f[-2]]``), two fused kernels over views of the pending ``f``
    written straight into the output's parts (no temporary; ``f`` not computed, as one axis
    takes fewer views of it than lazyarr stores a pending array at)."""
    found, reductions = counts
    a = _data((7, 7), np.float32)
    x = la.asarray(a)
    for axis in (0, 1):
        found.update(run=0, into=0)
        got = la.gradient(x * 2 - 1, spacing, axis=axis, edge_order=edge_order)
        assert (found["run"], found["into"], len(reductions)) == (0, 2, 0), found
        _exact(got, np.gradient(a * np.float32(2) - np.float32(1), spacing, axis=axis,
                                edge_order=edge_order))
        assert got.to_numpy().flags.c_contiguous


def test_gradient_is_fused_not_a_library_call():
    a = _data((6, 7), np.float64)
    x = la.asarray(a)
    with la.config(mode="lazy"):
        got = la.gradient(x * 2, axis=0)
        assert library_calls(got._node) == []
        assert "library call" not in str(la.explain(got))
        out = np.empty((6, 7))                      # (NumPy's out= of its own: none)
        with pytest.raises(TypeError):
            np.gradient(x, out=out)


# ----------------------------------------------------------------------------- cov, corrcoef
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_cov_and_corrcoef(dtype):
    a = _data((4, 11), dtype)
    b = _data((2, 11), dtype, seed=1)
    x, y = la.asarray(a), la.asarray(b)
    cases = [((), {}), ((), {"rowvar": False}), ((), {"bias": True}), ((), {"ddof": 3}),
             ((y,), {}), ((), {"dtype": np.float32}), ((), {"fweights": np.arange(1, 12)}),
             ((), {"aweights": np.linspace(0.1, 2, 11)}),
             ((), {"fweights": np.arange(1, 12), "aweights": np.linspace(0.1, 2, 11),
                   "ddof": 2}),
             ((), {"aweights": np.linspace(0.1, 2, 11), "bias": True})]
    for args, kwargs in cases:
        host = tuple(v.to_numpy() for v in args)
        _close(la.cov(x * 1, *args, **kwargs), np.cov(a, *host, **kwargs), rtol=1e-4
               if np.dtype(dtype) in (np.complex64, np.float32)
               or kwargs.get("dtype") == np.float32 else None)
    for args, kwargs in [((), {}), ((), {"rowvar": False}), ((y,), {}),
                         ((), {"dtype": np.float32})]:
        host = tuple(v.to_numpy() for v in args)
        _close(la.corrcoef(x * 1, *args, **kwargs), np.corrcoef(a, *host, **kwargs),
               rtol=1e-4)


def test_cov_single_variables_empty_inputs_and_warnings():
    v = _data((9,), np.float64)
    _close(la.cov(la.asarray(v)), np.cov(v))
    assert la.cov(la.asarray(v)).shape == ()
    _close(la.corrcoef(la.asarray(v)), np.corrcoef(v))
    _close(la.cov(la.asarray(v), la.asarray(v[::-1])), np.cov(v, v[::-1]))
    two = _data((2, 1), np.float64)
    for fn in ("cov", "corrcoef"):
        with warnings.catch_warnings(record=True) as want_w:
            warnings.simplefilter("always")
            want = getattr(np, fn)(two)
        with warnings.catch_warnings(record=True) as got_w:
            warnings.simplefilter("always")
            got = getattr(la, fn)(la.asarray(two))
            _close(got, want)
        assert "Degrees of freedom <= 0 for slice" in {str(w.message) for w in got_w}
        assert {w.category for w in got_w} == {w.category for w in want_w} == {RuntimeWarning}
    with pytest.warns(RuntimeWarning, match="Degrees of freedom") as caught:
        _close(la.cov(la.asarray(v), ddof=9), np.cov(v, ddof=9))
    assert caught[0].filename == __file__           # (the user's line, as NumPy's)
    _close(la.cov(la.asarray(np.ones((0, 3)))), np.cov(np.ones((0, 3))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _close(la.cov(la.asarray(np.ones((2, 0)))), np.cov(np.ones((2, 0))))
        c = _data((3, 6), np.float64)
        c[1] = 5.0                              # a constant row: its correlations are nan
        c[2, 3] = np.nan
        _close(la.corrcoef(la.asarray(c)), np.corrcoef(c))
        _close(la.cov(la.asarray(c)), np.cov(c))


@pytest.mark.parametrize("case", [
    "corrcoef_constant_row",
    "corrcoef_single_constant",
                                  "median_empty", "gradient_inf", "cov_nan",
                                  "quantile_nan", "cumulative_prod_overflow"])
def test_floating_point_warnings_are_numpys(case):
    """The RuntimeWarnings NumPy's call gives (helpers.warning_messages), with a pending
    input, computed."""
    c = _data((3, 6), np.float64)
    c[1] = 5.0
    nan = c.copy()
    nan[0, 2] = np.nan
    fn, a = {"corrcoef_constant_row": ("corrcoef", c),
             "corrcoef_single_constant": ("corrcoef", np.ones(4)),
             "median_empty": ("median", np.ones(0)),
             "gradient_inf": ("gradient", np.array([1.0, np.inf, -np.inf, 2.0])),
             "cov_nan": ("cov", nan), "quantile_nan": ("quantile", nan),
             "cumulative_prod_overflow": ("cumulative_prod", np.full(4, 1e200))}[case]
    args = (0.5,) if fn == "quantile" else ()
    with la.config(mode="lazy"):
        assert warning_messages(lambda: getattr(np, fn)(a, *args)) \
            == warning_messages(lambda: np.asarray(getattr(la, fn)(la.asarray(a) * 1, *args)))


def test_cov_errors_are_numpys():
    a = _data((3, 5), np.float64)
    x = la.asarray(a)
    for args, kwargs in [((), {"ddof": 1.5}), ((np.ones((2, 2, 2)),), {}),
                         ((), {"fweights": [1.5] * 5}), ((), {"fweights": np.ones((5, 1))}),
                         ((), {"fweights": [1, 2]}), ((), {"fweights": [1, -1, 1, 1, 1]}),
                         ((), {"aweights": [1, 2]}), ((), {"aweights": [1, -1, 1, 1, 1]}),
                         ((), {"aweights": np.ones((5, 1))}), ((np.ones((2, 4)),), {})]:
        _same_error(lambda: np.cov(a, *args, **kwargs),
                    lambda: la.cov(x * 1, *(la.asarray(v) for v in args), **kwargs))
    _same_error(lambda: np.cov(np.ones((2, 2, 2))), lambda: la.cov(la.asarray(np.ones((2, 2, 2)))))


def test_cov_centering_is_one_kernel_feeding_the_product(counts):
    """The mean's reduction and the centering (one elementwise kernel reading the pending
    input again, writing the product's operand); the product is BLAS's; the scaling stays
    pending and fuses into the consumer (one kernel with ``+ 1``)."""
    found, reductions = counts
    a = _data((40, 3000), np.float64)
    x = la.asarray(a)
    found.update(run=0, into=0)
    c = la.cov(x * 2 - 1)
    assert len(reductions) + found["run"] == 2, (found, reductions)
    assert c._node.data is None                    # the scaling: pending
    steps = [s for s in str(la.explain(c)).splitlines() if "library call numpy.matmul" in s]
    assert len(steps) == 1
    before = found["run"]
    _close(c + 1, np.cov(a * 2 - 1) + 1)
    assert found["run"] == before + 1
    # corrcoef: the same two kernels and product, then ONE kernel for the scaling, the
    # standard deviations (the product's diagonal, a view), the divisions and the clip
    found.update(run=0, into=0)
    reductions.clear()
    r = la.corrcoef(x * 2 - 1)
    assert len(reductions) + found["run"] == 2 and r._node.data is None
    _close(r, np.corrcoef(a * 2 - 1))
    assert len(reductions) + found["run"] == 3, (found, reductions)


# ----------------------------------------------------------------------------- quantiles
@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_median(dtype):
    for shape, axis in [((11,), None), ((6, 7), 0), ((6, 7), 1), ((3, 4, 5), (0, 2)),
                        ((3, 4, 5), -1), ((4, 6), None)]:
        a = _data(shape, dtype, special=True)
        x = la.asarray(a)
        for keepdims in (False, True):
            want = np.median(a, axis=axis, keepdims=keepdims)
            _close(la.median(x, axis=axis, keepdims=keepdims), want)
            _close(la.median(x * 1, axis=axis, keepdims=keepdims), want)
    c = _data((5, 4), np.complex128)
    _close(la.median(la.asarray(c) * 1, axis=0), np.median(c, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _close(la.median(la.asarray(np.ones(0))), np.median(np.ones(0)))
        _close(la.median(la.asarray(np.ones((0, 3))) * 1, axis=0), np.median(np.ones((0, 3)), axis=0))
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        la.median(la.asarray(np.ones(0)) * 1)


METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
           "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
           "normal_unbiased", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64], ids=str)
def test_percentile_and_quantile_methods(method, dtype):
    a = _data((6, 9), dtype, special=dtype != np.int32)
    x = la.asarray(a)
    q = np.array([0, 12.5, 50, 99, 100])
    for axis in (None, 1, 0):
        _close(la.percentile(x * 1, q, axis=axis, method=method),
               np.percentile(a, q, axis=axis, method=method))
        _close(la.quantile(x * 1, q[2] / 100, axis=axis, method=method, keepdims=True),
               np.quantile(a, q[2] / 100, axis=axis, method=method, keepdims=True))
        _close(la.quantile(x, q / 100, axis=axis, method=method),
               np.quantile(a, q / 100, axis=axis, method=method))


def test_quantile_weights_errors_and_out():
    a = _data((5, 8), np.float64)
    x = la.asarray(a)
    w = np.arange(1.0, 9.0)
    _close(la.quantile(x * 1, [0.3, 0.7], axis=1, method="inverted_cdf", weights=w),
           np.quantile(a, [0.3, 0.7], axis=1, method="inverted_cdf", weights=w))
    _close(la.percentile(x * 1, 40, axis=1, method="inverted_cdf", weights=la.asarray(w)),
           np.percentile(a, 40, axis=1, method="inverted_cdf", weights=w))
    for fn, q, kwargs in [("percentile", 101, {}), ("percentile", [-1, 5], {}),
                          ("quantile", 1.5, {}), ("quantile", 0.5, {"method": "bad"}),
                          ("quantile", 0.5, {"weights": w}), ("quantile", 0.5, {"axis": 3}),
                          ("percentile", 50, {"weights": np.ones(3), "axis": 1,
                                              "method": "inverted_cdf"})]:
        _same_error(lambda: getattr(np, fn)(a, q, **kwargs),
                    lambda: getattr(la, fn)(x * 1, q, **kwargs))
    _same_error(lambda: np.percentile(a + 1j, 50), lambda: la.percentile(la.asarray(a + 1j), 50))
    out = la.asarray(np.zeros(5))
    got = la.median(x * 1, axis=1, out=out)
    assert got is out
    _close(out, np.median(a, axis=1))
    plain = np.zeros(5)                             # NumPy's out=, through numpy.median(lazy)
    assert np.median(x * 1, axis=1, out=plain) is plain
    np.testing.assert_allclose(plain, np.median(a, axis=1))
    x_before = x.to_numpy().copy()
    la.median(x, overwrite_input=True)       # (a computed input is left as it was)
    np.testing.assert_array_equal(x.to_numpy(), x_before)


@pytest.mark.parametrize("dtype", [np.bool_, np.int64, np.float64])
@pytest.mark.parametrize("shape, axis", [((0,), None), ((0, 3), 1), ((3, 0), 0), ((2, 3), 1)])
def test_quantiles_of_empty_and_bool_arrays_raise_or_answer_as_numpy(dtype, shape, axis):
    """An empty ``a``: NumPy's IndexError (before a bool's TypeError) or its empty result;
    a bool ``a``: NumPy's TypeError (its subtraction), computed or pending."""
    a = np.zeros(shape, dtype)
    for fn, q in [("percentile", 50), ("quantile", 0.5), ("quantile", [0.25, 0.75])]:
        for x in (la.asarray(a), _pending(la.asarray(a))):
            try:
                want = getattr(np, fn)(a, q, axis=axis)
            except Exception as exc:          # (NumPy's own error, as lazyarr must raise it)
                _same_error(lambda: getattr(np, fn)(a, q, axis=axis),
                            lambda: getattr(la, fn)(x, q, axis=axis))
                assert type(exc) in (IndexError, TypeError)
            else:
                _close(getattr(la, fn)(x, q, axis=axis), want)


def test_quantile_of_a_pending_array_is_its_kernel_into_the_partitioned_buffer(counts):
    found, reductions = counts
    a = _data((300, 200), np.float64)
    x = la.asarray(a)
    for fn, args in [("median", ()), ("percentile", ([10, 90],)), ("quantile", (0.25,))]:
        found.update(run=0, into=0)
        y = x * 2 - 1
        got = getattr(la, fn)(y, *args, axis=1)
        assert (found["run"], found["into"]) == (0, 1), found
        assert y._node.data is None                # (the memory was the call's, not y's)
        _close(got, getattr(np, fn)(a * 2 - 1, *args, axis=1))
        assert f"library call numpy.{fn}" in str(la.explain(got))


# ----------------------------------------------------------------------------- convolve
@pytest.mark.parametrize("dtype", [np.bool_, *ALL], ids=str)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolve_and_correlate(name, dtype, mode):
    for n, m in [(9, 4), (4, 9), (5, 5), (1, 6), (7, 1)]:
        a = _data((n,), dtype) if dtype != np.bool_ else _data((n,), np.int8) > 0
        v = _data((m,), dtype, seed=1) if dtype != np.bool_ else _data((m,), np.int8, 1) > 0
        want = getattr(np, name)(a, v, mode)
        check = _exact if want.dtype.kind in "biu" else _close
        check(getattr(la, name)(la.asarray(a), la.asarray(v), mode), want)
        check(getattr(la, name)(_pending(la.asarray(a)), v, mode=mode), want)
        check(getattr(la, name)(a, _pending(la.asarray(v)), mode), want)
    a, v = _data((6,), np.float32), _data((3,), np.complex128)
    _close(getattr(la, name)(la.asarray(a), la.asarray(v), mode), getattr(np, name)(a, v, mode))
    _close(getattr(la, name)(la.asarray(v), la.asarray(a), mode), getattr(np, name)(v, a, mode))


def test_convolve_special_values_errors_and_explain():
    a = np.array([1.0, np.nan, 2.0, np.inf, 3.0])
    v = np.array([0.5, 1.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in ("convolve", "correlate"):
            _close(getattr(la, name)(la.asarray(a), v, "full"), getattr(np, name)(a, v, "full"))
    for name in ("convolve", "correlate"):
        fn, lazy = getattr(np, name), getattr(la, name)
        for args in [(np.ones(0), np.ones(3)), (np.ones(3), np.ones(0)),
                     (np.ones((2, 2)), np.ones(2)), (np.ones(3), np.ones(2), "bad"),
                     (np.ones(3), np.ones(2), 5), (np.ones(0), np.ones(0))]:
            _same_error(lambda: fn(*args), lambda: lazy(*(la.asarray(t) if isinstance(
                t, np.ndarray) else t for t in args)))
        if name == "convolve":
            _exact(lazy(la.asarray(np.float64(2.0)), la.asarray(np.ones(3))),
                   fn(np.float64(2.0), np.ones(3)))
        else:
            _same_error(lambda: fn(np.float64(2.0), np.ones(3)),
                        lambda: lazy(la.asarray(np.float64(2.0)), la.asarray(np.ones(3))))
    x, y = la.asarray(np.ones(1000)), la.asarray(np.ones(10))
    text = str(la.explain(la.convolve(x * 2, y)))
    assert "library call numpy.convolve" in text
    # (the pairs each mode's outputs sum; 'same' drops the partial overlaps of the full
    # result's 4 first and 5 last outputs, NumPy's centring for a length-10 ``v``)
    if la.cuda_available():
        with pytest.raises(ValueError, match="different devices"):
            la.convolve(la.asarray(np.ones(4), device="cpu"),
                        la.asarray(np.ones(3), device="cuda"))
    for mode, pairs in [("full", 10000), ("valid", 991 * 10), ("same", 10000 - (1 + 2 + 3 + 4) - (1 + 2 + 3 + 4 + 5))]:
        call, = library_calls(la.convolve(x * 2, y, mode)._node)
        assert call.flops == 2 * pairs, (mode, call.flops)
        assert call.bytes_read == 8 * 1010


# ----------------------------------------------------------------------------- eager mode
def test_eager_mode_gives_the_same_results():
    a = _data((5, 8), np.float64, special=True)
    with la.config(mode="eager"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        x = la.asarray(a)
        for got, want in [
                (la.cumulative_sum(x * 2, axis=0, include_initial=True),
                 np.cumulative_sum(a * 2, axis=0, include_initial=True)),
                (la.gradient(x * 2, 0.5, axis=1, edge_order=2),
                 np.gradient(a * 2, 0.5, axis=1, edge_order=2)),
                (la.cov(x * 2, rowvar=False), np.cov(a * 2, rowvar=False)),
                (la.corrcoef(x[:, 2:4] * 2), np.corrcoef(a[:, 2:4] * 2)),
                (la.median(x * 2, axis=0), np.median(a * 2, axis=0)),
                (la.quantile(x * 2, [0.1, 0.5], axis=1, method="nearest"),
                 np.quantile(a * 2, [0.1, 0.5], axis=1, method="nearest")),
                (la.correlate(x[0, 2:] * 2, x[1, :3]), np.correlate(a[0, 2:] * 2, a[1, :3]))]:
            _close(got, want)


# ----------------------------------------------------------------------------- cuda
def _cuda_cases(group, a, b, nan, ints, x, y, z, k):
    """(lazyarr's result, NumPy's) pairs of one group on cuda operands ``x, y, z, k`` (the
    NumPy arrays ``a, b, nan, ints``), a pending input among the operands."""
    if group == "cumulative":
        return [(la.cumulative_sum(x * 2, axis=1, include_initial=True),
                 np.cumulative_sum(a * 2, axis=1, include_initial=True)),
                (la.cumulative_prod(y * 1), np.cumulative_prod(b)),
                (la.cumulative_prod(k, axis=0, include_initial=True),
                 np.cumulative_prod(ints, axis=0, include_initial=True))]
    if group == "gradient":
        return [(la.gradient(x * 2, axis=1), np.gradient(a * 2, axis=1)),
                (la.gradient(x * 2, [0, 1, 3, 4, 6], edge_order=2, axis=0),
                 np.gradient(a * 2, [0, 1, 3, 4, 6], edge_order=2, axis=0)),
                *zip(la.gradient(k * 1, 2.0), np.gradient(ints, 2.0))]
    if group == "cov":
        return [(la.cov(x * 2), np.cov(a * 2)),
                (la.corrcoef(x * 2, rowvar=False), np.corrcoef(a * 2, rowvar=False)),
                (la.cov(y * 1, aweights=np.arange(1, 9)), np.cov(b, aweights=np.arange(1, 9))),
                (la.corrcoef(x[:2] * (1 + 1j)), np.corrcoef(a[:2] * (1 + 1j)))]
    if group == "quantiles":
        return [(la.median(x * 2, axis=1), np.median(a * 2, axis=1)),
                (la.percentile(x * 2, [5, 50], axis=0), np.percentile(a * 2, [5, 50], axis=0)),
                (la.quantile(x * 2, 0.3, method="hazen"), np.quantile(a * 2, 0.3, method="hazen")),
                (la.percentile(z * 1, [10, 50], axis=1), np.percentile(nan, [10, 50], axis=1)),
                (la.quantile(z, 0.5, axis=0, method="lower"),
                 np.quantile(nan, 0.5, axis=0, method="lower")),
                (la.median(z * 1, axis=1), np.median(nan, axis=1)),
                (la.quantile(k * 1, [0.2, 0.7], axis=1), np.quantile(ints, [0.2, 0.7], axis=1)),
                (la.median(k, axis=0, keepdims=True), np.median(ints, axis=0, keepdims=True)),
                (la.quantile(z * 1, np.full((2, 2), 0.3)), np.quantile(nan, np.full((2, 2), 0.3)))]
    return [(la.convolve(x[0] * 2, y), np.convolve(a[0] * 2, b)),
            (la.correlate(y, x[1] * 2, "same"), np.correlate(b, a[1] * 2, "same")),
            (la.correlate(x[0, :3], y * 2, "same"), np.correlate(a[0, :3], b * 2, "same")),
            (la.convolve(k[0] * 1, k[1, :3]), np.convolve(ints[0], ints[1, :3])),
            (la.correlate(k[0] > 0, k[1, :5] > 1, "full"),
             np.correlate(ints[0] > 0, ints[1, :5] > 1, "full"))]


_CUDA_ERRORS = {
    "cumulative": (lambda a: np.cumulative_sum(a), lambda x: la.cumulative_sum(x * 2)),
    "gradient": (lambda a: np.gradient(a[:1]), lambda x: la.gradient(x[:1] * 2)),
    "cov": (lambda a: np.cov(a, ddof=0.5), lambda x: la.cov(x * 2, ddof=0.5)),
    "quantiles": (lambda a: np.quantile(a, 2.0), lambda x: la.quantile(x * 2, 2.0)),
    "convolution": (lambda a: np.convolve(a[0, :0], a[0]),
                    lambda x: la.convolve(x[0, :0], x[0] * 2)),
}


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("group", list(_CUDA_ERRORS))
def test_on_cuda(group):
    """Each group on the cuda device: results on cuda with NumPy's values, dtypes and errors
    (CuPy's calls; NumPy's on the host where CuPy lacks a quantile method, ``weights`` or
    N-d ``q``; NaN propagation and dtypes as NumPy's where CuPy's differ)."""
    a = _data((5, 8), np.float32)
    b = _data((8,), np.complex64, seed=1)
    nan = a.copy()
    nan[1, 2] = np.nan
    ints = _data((5, 8), np.int32)
    with la.config(device="cuda", mode="lazy"):
        x, y, z, k = la.asarray(a), la.asarray(b), la.asarray(nan), la.asarray(ints)
        for got, want in _cuda_cases(group, a, b, nan, ints, x, y, z, k):
            assert got.device == "cuda"
            _close(got, want, rtol=1e-4)
        numpy_call, lazy_call = _CUDA_ERRORS[group]
        _same_error(lambda: numpy_call(a), lambda: lazy_call(x))


# ----------------------------------------------------------------------------- la.jit
@pytest.mark.parametrize("fn", [
    lambda x: la.gradient(x * 2, 0.5, axis=1),
    lambda x: la.cumulative_sum(x * 2, axis=1, include_initial=True),
    lambda x: la.cumulative_prod(x, axis=0, include_initial=True),
    lambda x: la.cov(x * 2 - 1),
    lambda x: la.corrcoef(x * (1 + 1j)),
    lambda x: la.median(x * 2, axis=1),
    lambda x: la.percentile(x * 2, [20, 80], axis=0, method="weibull"),
    lambda x: la.convolve(x[0] * 2, x[1]),
    lambda x: la.correlate(x[0, :3], x[1] * 2, "same"),
], ids=["gradient", "cumsum", "cumprod", "cov", "corrcoef", "median", "percentile",
        "convolve", "correlate"])
def test_jit_replays_compute_new_values(fn, request):
    """Traced by la.jit, each call's library work is a step of the tape: replays on new
    inputs give the plain call's values (nothing computed at trace time is reused)."""
    fn.__name__ = request.node.callspec.id
    jitted = la.jit(fn)
    with la.config(mode="lazy"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for seed in range(3):
            a = _data((4, 9), np.float64, seed=seed)
            got, want = jitted(la.asarray(a)), fn(la.asarray(a))
            _close(got, want.to_numpy())
    plain = [str(w.message) for w in caught if issubclass(w.category, la.JitWarning)]
    if fn.__name__ in ("cov", "corrcoef"):
        # (la.jit runs a function plainly where a matmul reads a computed intermediate, and
        # a kernel the product's result: ``c = x - x.mean(...); c @ c.T`` does too,
        # lazyarr/_jit.py); the values are the plain call's
        assert jitted.traces == 0 and plain
    else:
        assert jitted.traces == 1 and not plain, plain


def test_cuda_quantiles_work_in_place_only_over_trailing_axes():
    """CuPy's quantiles sort a strided view of the memory (NotImplementedError) where
    ``overwrite_input`` meets reduced axes that are not the last ones (the H100,
    2026-12-07): lazyarr lets CuPy copy there."""
    from lazyarr._functions._statistics_library import _overwritable
    m = np.zeros((3, 4, 5))
    assert _overwritable(True, m, {"axis": None})
    assert _overwritable(True, m, {"axis": 2}) and _overwritable(True, m, {"axis": (-1, 1)})
    assert not _overwritable(True, m, {"axis": 0}) and not _overwritable(True, m, {"axis": (0, 2)})
    assert _overwritable(False, m, {"axis": 0})     # (NumPy's quantiles take any axis)


@pytest.mark.parametrize("fn", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_axis_tuples_are_numpys(fn):
    """A one-axis tuple is that axis; more than one is NumPy's ValueError, other types its
    TypeError (the adversarial round, 2026-12-07)."""
    a = np.arange(6.0).reshape(2, 3)
    for axis in [(0,), (-1,)]:
        np.testing.assert_array_equal(getattr(la, fn)(la.asarray(a), axis=axis).to_numpy(),
                                      getattr(np, fn)(a, axis=axis))
    for axis, error in [((0, 1), ValueError), ((), ValueError), ([0], TypeError), (1.5, TypeError)]:
        with pytest.raises(error):
            getattr(np, fn)(a, axis=axis)
        with pytest.raises(error):
            getattr(la, fn)(la.asarray(a), axis=axis)
