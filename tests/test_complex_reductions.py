"""Complex reductions (issue 17): ``sum``, ``prod``, ``mean``, ``min``, ``max``, ``any`` and
``all`` of complex64/complex128 values, fused into the CPU VM's reduction kernels.

Eager mode is NumPy's own. Lazy mode follows the accumulation rule (docs/testing.rst,
"Reductions"): each part accumulated in float64 (complex128 arithmetic), rounded once; a
fused kernel sums in another order than NumPy's pairwise sum, so sums and means are checked
within the rule's bound (``tests/strategies.reduction_mismatch``), the complex modulus of the
error against ``c (1 + log2 n) eps`` times the sum of ``|z|``. A product of at most one block
(4,096 elements) is NumPy's sequential product bit for bit; min/max are NumPy 2's
lexicographic order, the first NaN winning: exact."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from helpers import (assert_same, complex_product_mismatch, edge_values, lazy_reduction, pending,
                     sum_part_mismatch)
from strategies import FLOAT64_REDUCTIONS, Step, reduction_mismatch

import lazyarr as la
from lazyarr.backends import cpu_fused

COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
OPS = ["sum", "prod", "mean", "max", "min", "any", "all"]
ACCUMULATING = ("sum", "prod", "mean")


def _numpy(op, a, **kw):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(getattr(np, op)(a, **kw))


def _lazyarr(op, x, **kw):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(getattr(la, op)(x, **kw))


def _ruled(op, a, got, mode, **kw):
    """Eager mode: ``got`` is NumPy's own (asserted; None). Lazy mode: the rule's value."""
    if mode == "eager":
        assert_same(got, _numpy(op, a, **kw))
        return None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return lazy_reduction(op, a, **kw)


def _check(op, a, got, mode, exact_products=False, ordered=True, **kw):
    """``got`` (lazyarr's ``op`` of ``a``) against NumPy (eager) or lazy mode's rules.
    ``exact_products``: a product bit for bit (one block, NumPy's full-reduction loop);
    ``ordered=False``: ``a`` is a view that NumPy may visit in memory order, so the
    reference backend's sums too are compared within the bound."""
    ruled = _ruled(op, a, got, mode, **kw)
    if ruled is None:
        return
    if op not in ACCUMULATING or (mode == "lazy-reference" and ordered) \
            or (op == "prod" and exact_products):
        assert_same(got, ruled)
        return
    assert got.dtype == ruled.dtype and got.shape == ruled.shape
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        problem = reduction_mismatch(Step(op, (0,), tuple(kw.items())), a, got,
                                     FLOAT64_REDUCTIONS, ruled)
    assert problem is None, problem


def _random(rng, dtype, shape, unit=False):
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if unit:                                        # |z| = 1: products stay finite
        z = z / np.abs(z)
    return z.astype(dtype)


def _axes(ndim):
    yield None
    yield from range(ndim)
    if ndim > 1:
        yield (0, ndim - 1)
        yield -1


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_every_axis_of_pending_and_computed_arrays(op, dtype, keepdims, mode, rng):
    for shape in [(), (1,), (7,), (5, 9), (3, 4, 6), (130, 33), (33, 130)]:
        a = _random(rng, dtype, shape, unit=op == "prod")
        for axis in _axes(len(shape)):
            for x in (la.asarray(a), pending(a)):
                _check(op, a, _lazyarr(op, x, axis=axis, keepdims=keepdims), mode,
                       axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_edge_values_in_either_part(op, dtype, mode):
    # NaN, +-inf, -0.0, the extremes and subnormals in the real part, in both and in the
    # imaginary part alone (helpers.edge_values), as a column, rows and permuted rows
    a = edge_values(dtype)
    rows = np.stack([a, np.roll(a, 5), a[::-1], np.roll(a, 17)])
    for values, axes in [(a, [None]), (rows, [None, 0, 1])]:
        for axis in axes:
            for x in (la.asarray(values), pending(values)):
                _check(op, values, _lazyarr(op, x, axis=axis), mode, axis=axis)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_products_that_overflow(dtype, mode):
    big = np.finfo(dtype).max ** 0.5 * 4
    cases = [np.full(3, big * (1 + 1j), dtype), np.full(3, big + 0j, dtype),
             np.array([big * 1j, big * 1j, 1e-30 + 0j, 1 + 1j], dtype),
             np.array([np.inf + 0j, 2 + 0j, 0j], dtype), np.array([np.inf + 1j, 1j, 1j], dtype)]
    for a in cases:
        for x in (la.asarray(a), pending(a)):
            _check("prod", a, _lazyarr("prod", x), mode, exact_products=True)


def test_complex64_products_accumulate_in_complex128(mode):
    # (1e20 + 1e20j)**3 overflows complex64 midway in NumPy (NaN parts); the rule's complex128
    # product is (-2e60 + 2e60j), which rounds to (-inf + infj)
    a = np.full(3, 1e20 + 1e20j, np.complex64)
    got = _lazyarr("prod", la.asarray(a))
    if mode == "eager":
        assert np.isnan(got.real) and np.isnan(got.imag)
    else:
        assert_same(got, np.complex64(complex(-np.inf, np.inf)))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_empty_and_zero_dimensional(dtype, mode):
    for shape, axis in [((0,), None), ((3, 0), None), ((3, 0), 1), ((3, 0), 0), ((0, 4), 0),
                        ((0, 4), 1)]:
        a = np.zeros(shape, dtype)
        for op in OPS:
            if op in ("max", "min") and a.size == 0 and (axis is None or shape[axis] == 0):
                with pytest.raises(ValueError):
                    getattr(la, op)(la.asarray(a), axis=axis)
                continue
            _check(op, a, _lazyarr(op, la.asarray(a), axis=axis), mode, axis=axis)
    with warnings.catch_warnings(record=True) as ours:      # NumPy's two warnings, at this line
        warnings.simplefilter("always")
        got = la.mean(la.asarray(np.zeros(0, dtype)))
    with warnings.catch_warnings(record=True) as numpys:
        warnings.simplefilter("always")
        want = np.mean(np.zeros(0, dtype))
    # (NumPy says "scalar divide" or "divide" by the dtype of its 0-d sum: a quirk of its scalars)
    assert [str(w.message).replace("scalar ", "") for w in ours] == \
        [str(w.message).replace("scalar ", "") for w in numpys]
    if mode != "eager":
        assert {w.filename for w in ours} == {__file__}
    assert_same(got, want)
    assert_same(la.sum(la.asarray(np.zeros(0, dtype))), np.array(0j, dtype))
    assert_same(la.prod(la.asarray(np.zeros(0, dtype))), np.array(1 + 0j, dtype))
    z = np.array(3 - 4j, dtype)
    for op in OPS:
        _check(op, z, _lazyarr(op, la.asarray(z)), mode)
        _check(op, z, _lazyarr(op, la.asarray(z) * 1), mode)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_views_negative_strides_and_non_contiguous_data(dtype, mode, rng):
    base = _random(rng, dtype, (40, 90))
    base.flat[::7] = np.nan + 1j      # NaN real parts (min/max: the first NaN wins)
    for view in (base[::-1], base[:, ::-3], base.T, base[::2, 1::4].T, base[5]):
        for op in OPS:
            for axis in _axes(view.ndim):
                got = _lazyarr(op, la.asarray(view), axis=axis)
                if op in ("max", "min") and mode != "eager":
                    # of several NaNs the first in C order of the view wins in the kernel,
                    # where NumPy may visit a view in memory order: a NaN where NumPy has one
                    want = _numpy(op, view, axis=axis)
                    assert got.dtype == want.dtype and np.array_equal(np.isnan(got), np.isnan(want))
                    assert np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)])
                    if mode == "lazy-cpu-fused":
                        assert_same(got, _numpy(op, np.ascontiguousarray(view), axis=axis))
                    continue
                _check(op, view, got, mode, ordered=False, axis=axis)


def test_min_max_are_lexicographic_and_the_first_nan_wins(mode):
    n = np.nan
    cases = [[1 + 2j, 1 + 3j, 0 + 9j], [2 + 0j, complex(3, n), complex(n, 1), 5 + 0j],
             [complex(n, 2), complex(3, n)], [1 + 0j, complex(n, -0.0)],
             [complex(-0.0, 0.0), 0j, complex(0.0, -0.0)],     # equal values: the first's bits
             [complex(np.inf, n), complex(-np.inf, 0)], [complex(-np.inf, 1), complex(-np.inf, -1)]]
    for values in cases:
        for dtype in COMPLEX:
            a = np.array(values, dtype)
            for op in ("max", "min"):
                assert_same(_lazyarr(op, la.asarray(a)), _numpy(op, a))
                assert_same(_lazyarr(op, pending(a)), _numpy(op, a))


@pytest.mark.parametrize("op", ["max", "min"])
def test_the_first_nan_wins_across_blocks_chunks_and_threads(op):
    # several blocks (the slot-major layout) and several row chunks (the row layout), over
    # 1 and 2 threads: the partials combine in order, so the first NaN in C order wins
    a = _random(np.random.default_rng(4), np.complex128, (2 ** 17,))
    a[70_000] = complex(np.nan, 1)
    a[9_000] = complex(2, np.nan)
    a[100_000] = complex(np.nan, np.nan)
    rows = a.reshape(4096, 32)
    old = cpu_fused.set_num_threads(1)
    try:
        with la.config(mode="lazy", device="cpu"):
            for threads in (1, 2):
                cpu_fused.set_num_threads(threads)
                assert_same(_lazyarr(op, pending(a)), _numpy(op, a))
                for axis in (0, 1):
                    assert_same(_lazyarr(op, pending(rows), axis=axis), _numpy(op, rows, axis=axis))
    finally:
        cpu_fused.set_num_threads(old)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_dtype_arguments(dtype, mode, rng):
    a = _random(rng, dtype, (6, 50), unit=True)
    other = np.complex128 if dtype == np.complex64 else np.complex64
    for op in ACCUMULATING:
        for axis in (None, 0, 1):
            _check(op, a, _lazyarr(op, la.asarray(a) * 1, axis=axis, dtype=other), mode,
                   axis=axis, dtype=other)
    r = rng.standard_normal((6, 50))
    for op in ACCUMULATING:
        _check(op, r, _lazyarr(op, la.asarray(r) + 0, axis=1, dtype=dtype), mode, axis=1, dtype=dtype)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "prod", "max", "min", "any", "all"])
def test_a_complex_chain_and_its_reduction_are_one_kernel(op, dtype, kernels, rng):
    a = _random(rng, dtype, (64, 300), unit=True)
    c = dtype.type(0.5 - 0.25j)
    want_chain = a * a + c
    for axis in (None, 0, 1):
        kernels.clear()
        z = la.asarray(a)
        got = getattr(la, op)(z * z + c, axis=axis)
        assert len(kernels) == 1, kernels
        _check(op, want_chain, np.asarray(got), "lazy-cpu-fused", axis=axis)
    z = la.asarray(a)
    plan = la.explain(lambda: getattr(la, op)(z * z + c, axis=1))
    assert len(plan.kernels) == 1 and plan.kernels[0].name == "cpu-fused.vm", plan
    if op in ACCUMULATING:
        assert "each part accumulated in float64" in plan.kernels[0].source


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_the_fused_kernel_runs_complex_reductions(dtype, monkeypatch, rng):
    # the VM runs them (the reference backend would give the rule's values too)
    from lazyarr.backends import reference

    def refuse(self, lowered):
        raise AssertionError(f"the reference backend ran {lowered.program.instrs[-1].op}")

    monkeypatch.setattr(type(reference.for_device("cpu")), "run", refuse)
    a = _random(rng, dtype, (2000,), unit=True)
    with la.config(mode="lazy", device="cpu"):
        for op in OPS + ["argmin", "argmax", "var", "std"]:
            getattr(la, op)(pending(a))
            getattr(la, op)(la.asarray(a))
        for op in ACCUMULATING:
            getattr(la, op)(la.asarray(a.real.copy()) * 2, dtype=dtype)


def test_sums_are_within_the_bound_of_the_exact_sum_part_by_part():
    # 2^21 values of widely varying magnitude, against math.fsum of each part: within the
    # rule's 4 (1 + log2 n) eps sum|part| (NumPy's pairwise bound), and the same bits on 1
    # and 2 threads
    rng = np.random.default_rng(7)
    n = 1 << 21
    a = (rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)
         + 1j * rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n))
    bound = 4 * (1 + math.log2(n)) * np.finfo(np.float64).eps
    old = cpu_fused.set_num_threads(1)
    try:
        with la.config(mode="lazy", device="cpu"):
            one = complex(la.sum(la.asarray(a) * 1))
            cpu_fused.set_num_threads(2)
            two = complex(la.sum(la.asarray(a) * 1))
            rows = np.asarray(la.sum(la.asarray(a.reshape(2048, 1024)) * 1, axis=0))
    finally:
        cpu_fused.set_num_threads(old)
    assert one == two
    for got, part in [(one.real, a.real), (one.imag, a.imag)]:
        assert abs(got - math.fsum(part)) <= bound * np.abs(part).sum()
    cols = a.reshape(2048, 1024)
    for j in (0, 511, 1023):
        for got, part in [(rows[j].real, cols[:, j].real), (rows[j].imag, cols[:, j].imag)]:
            assert abs(got - math.fsum(part)) <= bound * np.abs(part).sum()


def test_complex64_sums_round_once_and_report_overflow():
    a = np.array([3e38 + 1j, 3e38 + 0j, -3e38 + 0j], np.complex64)   # NumPy: inf midway
    with la.config(mode="lazy", device="cpu"):
        assert_same(la.sum(la.asarray(a) * 1), np.array(3e38 + 1j, np.complex64))
        with pytest.warns(RuntimeWarning, match="overflow encountered in reduce"):
            got = la.sum(la.asarray(a[:2]) * 1)
    assert_same(got, np.array(complex(np.inf, 1), np.complex64))


@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_divides_as_numpy_does(keepdims):
    # NumPy's mean is the sum over (n + 0j): an infinite part makes the other one NaN, with
    # NumPy's warning, here at the user's line
    a = np.array([np.inf + 0j, 1 + 1j, 2 + 0j])
    with warnings.catch_warnings(record=True) as numpys:
        warnings.simplefilter("always")
        want = np.mean(a, axis=0, keepdims=keepdims)
    with la.config(mode="lazy", device="cpu"), warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = la.mean(pending(a), axis=0, keepdims=keepdims)
    assert_same(got, want)
    assert [str(w.message) for w in ours] == [str(w.message) for w in numpys]
    assert {w.filename for w in ours} == {__file__}


# --------------------------------------------------------------------------- argmin, argmax
@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("op", ["argmin", "argmax"])
def test_argmin_argmax_every_axis_edge_values_and_views(op, dtype, mode, rng):
    """NumPy 2's lexicographic order, the first NaN winning, the first of equal values
    (``-0.0`` and ``+0.0`` parts equal): NumPy's index exactly, pending and computed, every
    axis, edge values in either part (helpers.edge_values), ties, views, 0-d; empty is
    NumPy's ValueError."""
    small = (rng.integers(-2, 3, (5, 9, 4)) + 1j * rng.integers(-2, 3, (5, 9, 4))).astype(dtype)
    e = edge_values(dtype)
    rows = np.stack([e, np.roll(e, 5), e[::-1], np.roll(e, 17)])
    for a in (small, rows, e, small[::-1, ::2], small.T, np.array(3 - 4j, dtype)):
        for axis in [None, *range(a.ndim), *([-1] if a.ndim else [])]:
            for x in (la.asarray(a), pending(a)):
                assert_same(_lazyarr(op, x, axis=axis), _numpy(op, a, axis=axis))
                assert_same(_lazyarr(op, x * 1, axis=axis), _numpy(op, a * 1, axis=axis))
    for shape, axis in [((0,), None), ((3, 0), 1), ((0, 4), 0)]:
        with pytest.raises(ValueError):
            getattr(la, op)(la.asarray(np.zeros(shape, dtype)), axis=axis)
    assert_same(_lazyarr(op, la.asarray(np.zeros((0, 4), dtype)), axis=1),
                _numpy(op, np.zeros((0, 4), dtype), axis=1))


@pytest.mark.parametrize("op", ["argmin", "argmax"])
def test_argmin_argmax_across_blocks_chunks_and_threads(op, kernels):
    """One kernel (the VM's), several blocks and row chunks on 1 and 2 threads: the first
    NaN, and of equal extrema the first, in C order."""
    a = (np.random.default_rng(4).integers(-50, 50, 2 ** 17)
         + 1j * np.random.default_rng(5).integers(-50, 50, 2 ** 17)).astype(np.complex128)
    nan = a.copy()
    nan[70_000], nan[9_000], nan[100_000] = complex(np.nan, 1), complex(2, np.nan), np.nan
    old = cpu_fused.set_num_threads(1)
    try:
        with la.config(mode="lazy", device="cpu"):
            for threads in (1, 2):
                cpu_fused.set_num_threads(threads)
                for values in (a, nan):
                    rows = values.reshape(4096, 32)
                    kernels.clear()
                    assert_same(_lazyarr(op, la.asarray(values) * 1), _numpy(op, values))
                    assert len(kernels) == 1, kernels
                    for axis in (0, 1):
                        assert_same(_lazyarr(op, la.asarray(rows) * 1, axis=axis),
                                    _numpy(op, rows, axis=axis))
                        assert_same(_lazyarr(op, la.asarray(rows.T) * 1, axis=axis),
                                    _numpy(op, rows.T, axis=axis))
    finally:
        cpu_fused.set_num_threads(old)


# --------------------------------------------------------------------------- var, std
def _check_var(op, a, got, mode, rtol=None, **kw):
    """NumPy's definition (mean of |z - mean|^2, a real result): eager mode NumPy's bits,
    lazy mode the rule's complex128 value (each part's two-pass (mean, M2) in float64,
    rounded once) within the rounding bound, NaN and inf where it has them. ``rtol``: the
    bound for data whose mean is far from zero next to its spread (the deviations ``x - mean``
    carry ``eps |mean|`` each, in NumPy's two passes as in the kernel's)."""
    want = _ruled(op, a, got, mode, **kw)
    if want is None:
        return
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)]), (got, want)
    fin = np.isfinite(want)
    # (``var(x, dtype=<complex>)`` is complex in NumPy, with a zero imaginary part)
    if rtol is None:
        rtol = 2e-6 if np.finfo(want.dtype).dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_every_axis_edge_values_empty_and_0d(op, dtype, mode, rng):
    for shape in [(), (1,), (7,), (5, 9), (3, 4, 6), (130, 33), (33, 130)]:
        # a large mean next to a small spread: the two-pass (mean, M2) keeps the digits
        a = (rng.standard_normal(shape) + 3 + 1j * (rng.standard_normal(shape) - 1e3)).astype(dtype)
        for axis in _axes(len(shape)):
            for ddof in (0, 1):
                for x in (la.asarray(a), pending(a)):
                    _check_var(op, a, _lazyarr(op, x, axis=axis, ddof=ddof), mode, axis=axis, ddof=ddof)
    e = edge_values(dtype)
    e = e[np.abs(e.astype(np.complex128)) < 1e150]     # (|z - mean|^2 of the extremes overflows)
    rows = np.stack([e, np.roll(e, 5), e[::-1]])
    for values, axes in [(e, [None]), (rows, [None, 0, 1])]:
        for axis in axes:
            _check_var(op, values, _lazyarr(op, pending(values), axis=axis), mode, axis=axis)
    # NumPy's mean is sum / (n + 0j): an infinite part of it (an infinite element, or a sum
    # that overflows) makes the other part NaN, and the variance NaN
    big = np.finfo(dtype).max
    for values in ([big + 1j, big + 2j], [np.inf + 0j, 1 + 1j], [1 + 1j, complex(1, -np.inf)],
                   [complex(-big, 1), complex(-big, 1), 3j]):
        z = np.array(values, dtype)
        _check_var(op, z, _lazyarr(op, la.asarray(z) * 1), mode)
    for shape, axis in [((0,), None), ((3, 0), 1), ((0, 4), 0), ((0, 4), 1)]:
        z = np.zeros(shape, dtype)
        _check_var(op, z, _lazyarr(op, la.asarray(z), axis=axis), mode, axis=axis)
    view = _random(rng, dtype, (40, 90))[::-2, 1::3].T
    for axis in (None, 0, 1):
        _check_var(op, view, _lazyarr(op, la.asarray(view) * 1, axis=axis), mode, axis=axis)
    r = view.real.copy()          # real values in a complex loop dtype
    _check_var(op, r, _lazyarr(op, la.asarray(r) + 0, axis=0, dtype=dtype), mode, axis=0, dtype=dtype)


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_are_one_kernel_across_blocks_chunks_and_threads(op, kernels):
    """The VM's kernel (each part's (mean, M2) Chan-merged over blocks and row chunks), the
    same bits on 1 and 2 threads, NumPy's value within the bound."""
    rng = np.random.default_rng(6)
    a = (rng.standard_normal(2 ** 17) + 1e6 + 1j * rng.standard_normal(2 ** 17)).astype(np.complex128)
    rows = a.reshape(4096, 32)
    old = cpu_fused.set_num_threads(1)
    try:
        with la.config(mode="lazy", device="cpu"):
            outs = []
            for threads in (1, 2):
                cpu_fused.set_num_threads(threads)
                kernels.clear()
                one = [_lazyarr(op, la.asarray(a) * 1)]
                assert len(kernels) == 1, kernels
                one += [_lazyarr(op, la.asarray(rows) * 1, axis=axis) for axis in (0, 1)]
                outs.append(one)
                _check_var(op, a, one[0], "lazy-cpu-fused", rtol=1e-9)     # (mean 1e6, spread 1)
                for axis in (0, 1):
                    _check_var(op, rows, one[1 + axis], "lazy-cpu-fused", rtol=1e-9, axis=axis)
            for x, y in zip(*outs):
                assert_same(x, y)
    finally:
        cpu_fused.set_num_threads(old)


# --------------------------------------------------------------------------- the order rules
def _special_products(dtype):
    """Rows whose products meet NaN and infinite parts in every position (first, middle,
    last, several), zeros next to infinities, and products that overflow midway."""
    n, inf = np.nan, np.inf
    base = np.array([1.5 - 0.5j, -2 + 1j, 0.25 + 3j, 1j, -1 + 0j, 2 - 2j, 0.5 + 0.5j, 3 + 0j], dtype)
    rows = [base]
    for pos in (0, 3, 7):
        for special in (complex(n, 1), complex(1, n), complex(inf, 0), complex(0, -inf),
                        complex(inf, inf), complex(-inf, 2), complex(n, inf)):
            r = base.copy()
            r[pos] = special
            rows.append(r)
    r = base.copy()
    r[2], r[5] = complex(inf, 0), 0j                  # inf * 0
    rows.append(r)
    r = base.copy()
    r[1], r[6] = complex(inf, 1), complex(-1, inf)
    rows.append(r)
    rows.append(np.full(8, complex(1e200, 1e200) if dtype == np.complex128 else
                        complex(1e30, 1e30), dtype))                      # overflows midway
    r = base.copy()
    r[0] = complex(inf, 2)                            # NumPy: (1+0j)(inf+2j) = inf+nanj
    rows.append(r[:1].repeat(8))
    return np.stack(rows)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_products_with_special_parts_follow_the_rule(dtype, mode):
    """The product rule (docs/testing.rst, "Accumulation rule"; ``helpers.complex_product_mismatch``):
    a NaN part anywhere gives nan+nanj, an infinite part (no NaN) both parts non-finite, as
    NumPy's sequential product does; which of them are NaN depends on the order. Eager
    mode is NumPy's own (its bits)."""
    rows = _special_products(dtype)
    for values, axis in [(rows, 1), (rows.T, 0), (rows, None)] + [(r, None) for r in rows] + \
            [(r[:1], None) for r in rows]:
        for x in (la.asarray(values), pending(values)):
            got = _lazyarr("prod", x, axis=axis)
            if mode == "eager":
                assert_same(got, _numpy("prod", values, axis=axis))
            else:
                problem = complex_product_mismatch(got, values, axis=axis)
                assert problem is None, (values, axis, problem)


def _overflow_edge_sums(rng):
    """complex128 values whose parts are near +-DBL_MAX among ordinary ones: whether a
    partial sum overflows depends on the order (NumPy's pairwise one, the kernels')."""
    big = np.finfo(np.float64).max
    out = []
    for n in (3, 8, 33, 257, 3000):
        re = rng.standard_normal(n)
        im = rng.standard_normal(n)
        k = max(2, n // 8)
        re[rng.choice(n, k, replace=False)] = rng.choice([-1, 1], k) * big * rng.uniform(0.5, 1, k)
        im[rng.choice(n, k, replace=False)] = rng.choice([-1, 1], k) * big * rng.uniform(0.9, 1, k)
        out.append(re + 1j * im)
    out.append(np.array([big, big, -big, -big]) + 1j * np.array([big, -big, big, -big]))
    out.append(np.array([big, -big, big, -big]) * (1 + 1j))
    return out


def _assert_sum_rule(got, a):
    for part in ("real", "imag"):
        problem = sum_part_mismatch(getattr(complex(got), part), getattr(a, part), np.float64)
        assert problem is None, (part, problem)


def test_sums_near_the_overflow_edge_follow_the_rule(mode, rng):
    """The sum rule (docs/testing.rst, "Accumulation rule"; ``helpers.sum_part_mismatch``):
    a finite part is within the bound of the exact sum; a part may be +-inf or NaN only where
    a partial sum can overflow in some order. NumPy's own sums keep that rule too (asserted
    here), with other overflows: no test asserts NumPy's bits near the edge."""
    for a in _overflow_edge_sums(rng):
        _assert_sum_rule(_numpy("sum", a), a)
        for x in (la.asarray(a), pending(a)):
            _assert_sum_rule(_lazyarr("sum", x), a)
        rows = np.stack([a, a[::-1]])
        got = _lazyarr("sum", la.asarray(rows), axis=1)
        cols = _lazyarr("sum", la.asarray(np.ascontiguousarray(rows.T)), axis=0)
        for j in range(2):
            _assert_sum_rule(got[j], rows[j])
            _assert_sum_rule(cols[j], rows[j])


# --------------------------------------------------------------------------- the same on cuda
needs_cuda = pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy")


def _cuda(fn, *arrays):
    """``fn`` of the arrays in lazy mode on cuda, as one kernel (explain says so)."""
    with la.config(mode="lazy", device="cuda"), np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xs = [la.asarray(a) for a in arrays]
        plan = la.explain(lambda: fn(*xs))
        assert len(plan.kernels) == 1 and "not fused" not in " ".join(plan.notes), plan
        return np.asarray(fn(*xs))


@pytest.mark.gpu
@needs_cuda
@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("op", ["sum", "prod", "mean", "max", "min"])
def test_cuda_reductions_are_one_kernel_on_every_layout(op, dtype, rng):
    """Full, row and column kernels (and a full reduction of several blocks), against the
    rule's value: sums and means within the bound, products of units, min/max exact."""
    for shape, axes in [((7,), [None]), ((6, 9), [None, 0, 1]), ((3, 4, 5), [0, (0, 2)]),
                        ((40, 70), [0, 1]), ((5000,), [None])]:
        a = _random(rng, dtype, shape, unit=op == "prod")
        a.flat[3] = complex(np.nan, 1) if op in ("max", "min") else a.flat[3]
        for axis in axes:
            got = _cuda(lambda x: getattr(la, op)(x + 0, axis=axis), a)
            _check(op, a + 0, got, "lazy-cuda", axis=axis)


@pytest.mark.gpu
@needs_cuda
@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_cuda_products_and_sums_follow_the_order_rules(dtype, rng):
    rows = _special_products(dtype)
    for values, axis in [(rows, 1), (np.ascontiguousarray(rows.T), 0), (rows, None)] + \
            [(r, None) for r in rows[::3]] + [(r[:1], None) for r in rows[::4]]:
        got = _cuda(lambda x: la.prod(x + 0, axis=axis), values)
        problem = complex_product_mismatch(got, values, axis=axis)
        assert problem is None, (values, axis, problem)
    if dtype == np.complex128:
        for a in _overflow_edge_sums(rng):
            _assert_sum_rule(_cuda(lambda x: la.sum(x + 0), a), a)
            rows2 = np.stack([a, a[::-1]])
            got = _cuda(lambda x: la.sum(x + 0, axis=1), rows2)
            cols = _cuda(lambda x: la.sum(x + 0, axis=0), np.ascontiguousarray(rows2.T))
            for j in range(2):
                _assert_sum_rule(got[j], rows2[j])
                _assert_sum_rule(cols[j], rows2[j])


@pytest.mark.gpu
@needs_cuda
def test_cuda_min_max_are_lexicographic_and_the_first_nan_wins():
    """NumPy 2's order with the element's position carried through the tree
    (render.Reduction.parts ``_ix``): the first NaN and the first of equal values win, in
    the full kernel across blocks, the row kernel across lanes and the column kernel."""
    n = np.nan
    cases = [[1 + 2j, 1 + 3j, 0 + 9j], [2 + 0j, complex(3, n), complex(n, 1), 5 + 0j],
             [complex(n, 2), complex(3, n)], [1 + 0j, complex(n, -0.0)],
             [complex(-0.0, 0.0), 0j, complex(0.0, -0.0)],
             [complex(np.inf, n), complex(-np.inf, 0)], [complex(-np.inf, 1), complex(-np.inf, -1)],
             [complex(np.inf, np.inf)], [complex(-np.inf, -np.inf), complex(-np.inf, -np.inf)]]
    big = _random(np.random.default_rng(4), np.complex128, (5000,))
    big[3000], big[4000], big[700] = complex(n, 1), complex(2, n), complex(n, n)
    zeros = np.zeros(3000, np.complex128)
    zeros[::3] = complex(-0.0, 0.0)
    zeros[1::3] = complex(0.0, -0.0)
    for dtype in COMPLEX:
        for values in cases + [big, big[:2999], zeros, zeros[1:]]:
            a = np.array(values, dtype)
            for op in ("max", "min"):
                assert_same(_cuda(lambda x: getattr(la, op)(x), a), _numpy(op, a))
        for rows in (big.reshape(50, 100).astype(dtype), zeros.reshape(30, 100).astype(dtype)):
            for op in ("max", "min"):
                for axis in (0, 1):
                    assert_same(_cuda(lambda x: getattr(la, op)(x, axis=axis), rows),
                                _numpy(op, rows, axis=axis))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "ptp"])
def test_reductions_of_the_modulus(op, dtype, rng):
    """``abs(z)`` of complex ``z`` is the modulus: a reduction of it is never the kernel's
    folded ``fabs``, which reads one float (found by a bug hunt: ``abs(3+4j).sum()`` was 3)."""
    z = (rng.standard_normal((300, 200)) + 1j * rng.standard_normal((300, 200))).astype(dtype)
    z[0, 0] = 3 + 4j
    for axis in (None, 0, 1):
        want = getattr(np, op)(np.abs(z), axis=axis)
        got = np.asarray(getattr(la, op)(la.abs(la.asarray(z)), axis=axis))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == np.complex64 else 1e-12)
    assert float(la.max(la.abs(la.asarray(np.full(5000, 3 + 4j, dtype))))) == 5.0
