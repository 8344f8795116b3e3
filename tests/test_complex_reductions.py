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
from helpers import assert_same, edge_values, lazy_reduction, pending
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


def _check(op, a, got, mode, exact_products=False, ordered=True, **kw):
    """``got`` (lazyarr's ``op`` of ``a``) against NumPy (eager) or lazy mode's rules.
    ``exact_products``: a product bit for bit (one block, NumPy's full-reduction loop);
    ``ordered=False``: ``a`` is a view that NumPy may visit in memory order, so the
    reference backend's sums too are compared within the bound."""
    if mode == "eager":
        assert_same(got, _numpy(op, a, **kw))
        return
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ruled = lazy_reduction(op, a, **kw)
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
        for op in OPS:
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
