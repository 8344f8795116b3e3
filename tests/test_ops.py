"""Every registry op × every dtype × every mode/backend, against NumPy.

The op lists come from the registry, so a new op is tested the moment it is added.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import DTYPES, assert_same, lazy_reduction, random_array
from strategies import FLOAT64_REDUCTIONS, Step, reduction_mismatch

import lazyarr as la
from lazyarr._registry import ELEMENTWISE, REDUCTIONS

UNARY = [op for op in ELEMENTWISE if op.nin == 1]
BINARY = [op for op in ELEMENTWISE if op.nin == 2]
SHAPES = [(), (0,), (7,), (3, 5)]


def _numpy_or_error(fn, *args, **kwargs):
    """NumPy's result, or the exception type NumPy raises."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs), None
        except Exception as exc:   # noqa: BLE001 - we compare exception types
            return None, type(exc)


def _lazyarr_result(fn, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(fn(*args, **kwargs))


def _check(la_fn, np_fn, np_args, la_args, exact=True, **kwargs):
    want, err = _numpy_or_error(np_fn, *np_args, **kwargs)
    if err is not None:
        with pytest.raises(err), np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.asarray(la_fn(*la_args, **kwargs))
        return
    assert_same(_lazyarr_result(la_fn, *la_args, **kwargs), np.asarray(want), exact=exact)


def _operand(rng, dtype, shape, op_name, position):
    data = random_array(rng, dtype, shape)
    if op_name == "power" and position == 1 and np.dtype(dtype).kind in "iu":
        data = (np.abs(data.astype(np.int64)) % 5).astype(dtype)  # int ** negative raises
    return data


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", UNARY, ids=lambda o: o.name)
def test_unary(op, dtype, mode, rng):
    for shape in SHAPES:
        a = random_array(rng, dtype, shape)
        _check(getattr(la, op.name), op.numpy, (a,), (la.asarray(a),))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", BINARY, ids=lambda o: o.name)
def test_binary_same_dtype(op, dtype, mode, rng):
    for shape_a, shape_b in [((7,), (7,)), ((3, 1), (1, 5)), ((), (4,)), ((0,), (1,))]:
        a = _operand(rng, dtype, shape_a, op.name, 0)
        b = _operand(rng, dtype, shape_b, op.name, 1)
        _check(getattr(la, op.name), op.numpy, (a, b), (la.asarray(a), la.asarray(b)))


@pytest.mark.parametrize("op", BINARY, ids=lambda o: o.name)
def test_binary_mixed_dtypes(op, mode, rng):
    """Promotion across every pair of dtypes, as np.result_type / the ufunc's resolver."""
    for da in DTYPES:
        for db in DTYPES:
            a = _operand(rng, da, (6,), op.name, 0)
            b = _operand(rng, db, (6,), op.name, 1)
            _check(getattr(la, op.name), op.numpy, (a, b), (la.asarray(a), la.asarray(b)))


@pytest.mark.parametrize("scalar", [2, -3, 0, 2.5, -0.0, float("nan"), float("inf"), True, 300,
                                    -129, 2**40, 2**64],
                         ids=repr)
@pytest.mark.parametrize("op", BINARY, ids=lambda o: o.name)
def test_binary_python_scalars(op, scalar, mode, rng):
    """NEP 50: Python scalars are weak (float32 * 2.0 stays float32; int8 + 300 raises)."""
    for dtype in DTYPES:
        if op.name == "power" and np.dtype(dtype).kind in "iu" and isinstance(scalar, int) \
                and scalar > 60:
            continue  # NumPy computes these by repeated squaring in the loop dtype: tested above
        a = _operand(rng, dtype, (5,), op.name, 0)
        _check(getattr(la, op.name), op.numpy, (a, scalar), (la.asarray(a), scalar))
        b = _operand(rng, dtype, (5,), op.name, 1)
        _check(getattr(la, op.name), op.numpy, (scalar, b), (scalar, la.asarray(b)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_where(dtype, mode, rng):
    cond = rng.integers(0, 2, 12).astype(bool).reshape(3, 4)
    a = random_array(rng, dtype, (3, 4))
    b = random_array(rng, dtype, (1, 4))
    _check(la.where, np.where, (cond, a, b), (la.asarray(cond), la.asarray(a), la.asarray(b)))
    _check(la.where, np.where, (a, a, 0), (la.asarray(a), la.asarray(a), 0))  # non-bool condition
    _check(la.where, np.where, (cond, a, 2.5), (la.asarray(cond), la.asarray(a), 2.5))
    _check(la.where, np.where, (cond, a, 300), (la.asarray(cond), la.asarray(a), 300))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_clip(dtype, mode, rng):
    a = random_array(rng, dtype, (9,))
    for lo, hi in [(0, 5), (-1.5, 2.5), (None, 3), (2, None), (0, 300), (-300, 300), (5, 0),
                   (float("nan"), 1.0)]:
        _check(la.clip, np.clip, (a, lo, hi), (la.asarray(a), lo, hi))


@pytest.mark.parametrize("src", DTYPES, ids=str)
def test_astype(src, mode, rng):
    a = random_array(rng, src, (4, 4), edges=src.kind != "f")  # float->int of NaN/inf: UB in C
    for dst in DTYPES:
        _check(lambda x, dst=dst: x.astype(dst), lambda x, dst=dst: x.astype(dst), (a,), (la.asarray(a),))


def _reduction_cases(op):
    yield (), None
    yield (0,), None
    yield (0, 3), 0
    yield (0, 3), 1
    for shape in [(17,), (6, 9), (3, 4, 5)]:
        for axis in [None, 0, -1, *([(0, -1), 1] if len(shape) > 1 else [])]:
            if isinstance(axis, tuple) and not op.takes_axis_tuple:
                continue
            yield shape, axis


def _check_reduction(op, a, mode, **kw):
    """Eager mode must give NumPy's bits; lazy mode follows the reduction rules of
    docs/testing.rst (tests/helpers.lazy_reduction): the reference backend exactly, a fused
    backend (which sums in another order) within the rounding bound of a float64 reference
    (tests/strategies.reduction_mismatch) for float sums/means/products/variances."""
    want, err = _numpy_or_error(op.numpy, a, **kw)
    if err is not None or mode == "eager":
        _check(getattr(la, op.name), op.numpy, (a,), (la.asarray(a),), **kw)
        return
    got = _lazyarr_result(getattr(la, op.name), la.asarray(a), **kw)
    want = np.asarray(want)
    ruled = lazy_reduction(op.name, a, **kw)
    if mode == "lazy-reference" or want.dtype.kind not in "fc" or op.name not in ("sum", "prod", "mean", "var", "std"):
        assert_same(got, ruled)
        return
    assert got.dtype == want.dtype and got.shape == want.shape
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the reference's own empty-slice notes
        problem = reduction_mismatch(Step(op.name, (0,), tuple(kw.items())), a, got,
                                     FLOAT64_REDUCTIONS, want)
    assert problem is None, problem


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", REDUCTIONS, ids=lambda o: o.name)
def test_reduction(op, dtype, keepdims, mode, rng):
    for shape, axis in _reduction_cases(op):
        a = random_array(rng, dtype, shape)
        if op.name == "prod":
            a = np.where(abs(a.astype(np.float64)) > 3, 1, a).astype(dtype)  # keep products finite
        _check_reduction(op, a, mode, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("op", [o for o in REDUCTIONS if o.takes_dtype], ids=lambda o: o.name)
def test_reduction_dtype_argument(op, mode, rng):
    a = random_array(rng, np.int8, (4, 6))
    for dt in (np.int16, np.float32, np.float64, np.uint64):
        _check_reduction(op, a, mode, axis=1, dtype=dt)


def test_reduction_of_expression(mode, rng):
    """A reduction runs the pending chain feeding it; the result is a materialized leaf."""
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    lx, ly = la.asarray(x), la.asarray(y)
    got = la.sum(la.sqrt(abs(lx * ly + 1.5)) * la.tanh(lx) - ly)
    want = np.sum(np.sqrt(np.abs(x * y + 1.5)) * np.tanh(x) - y)
    assert got.is_materialized and got.shape == () and got.dtype == np.float32
    np.testing.assert_allclose(float(got), float(want), rtol=1e-5)
    centered = lx - lx.mean()
    np.testing.assert_allclose(np.asarray(centered), x - x.mean(), rtol=1e-6, atol=1e-6)
