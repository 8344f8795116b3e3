"""Eager mode on cuda against NumPy on special values (issue 10, item 3).

Eager mode is CuPy op by op, except the ops in ``_build.EAGER_OWN_KERNEL_ON_CUDA``, which run as
lazyarr's own one-op kernel. Every unary and binary elementwise op, every float dtype, on
NaN, ±inf, ±0, negative values, the smallest normal and the largest value (binary ops: every
pair). Correctly-rounded ops must match NumPy bit for bit (the sign of zeros included);
transcendentals must put NaN, ±inf and ±0 where NumPy does and be within the tolerances of
tests/test_gpu.py elsewhere. Subnormals are separate (``test_eager_subnormals``): CuPy flushes
them to zero in float32/float16 (``-ftz=true``), a documented deviation for the ops that stay on
CuPy (docs/gpu-backend.rst).

On the simulated cuda device only the routed ops run (the rest would compare NumPy with NumPy).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import FLOAT_DTYPES, NO_CUPY, SIMULATED, assert_same
from test_gpu import INEXACT, TOL

import lazyarr as la
from lazyarr._build import EAGER_OWN_KERNEL_ON_CUDA
from lazyarr._registry import ELEMENTWISE

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")]

FLOAT_OPS = [op for op in ELEMENTWISE if op.nin in (1, 2) and op.name != "where"]


def special_values(dtype: np.dtype) -> np.ndarray:
    info = np.finfo(dtype)
    return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0,
                     info.tiny, -info.tiny, info.max, -info.max], dtype=dtype)


def subnormals(dtype: np.dtype) -> np.ndarray:
    info = np.finfo(dtype)
    s = info.smallest_subnormal
    return np.array([s, -s, s * 7, -s * 7, info.tiny / 2, -info.tiny / 2, 1.0, -1.0, 0.0],
                    dtype=dtype)


def _operands(op, values):
    if op.nin == 1:
        return (values,)
    return (values[:, None], values[None, :])


def _numpy(op, args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return op.numpy(*args), None
        except Exception as exc:  # noqa: BLE001
            return None, type(exc)


def _eager(op, args):
    with la.config(mode="eager", device="cuda"), np.errstate(all="ignore"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(getattr(la, op.name)(*(la.asarray(a) for a in args)))


def _same_specials(got, want, inexact):
    """Bit for bit; for transcendentals: NaN, ±inf and ±0 where NumPy has them, the rest close."""
    if not inexact or want.dtype.kind != "f":
        assert_same(got, want)
        return
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(np.isnan(got), np.isnan(want)), ("NaN positions", got, want)
    special = np.isinf(want) | (want == 0)
    assert np.array_equal(got[special], want[special]), ("inf/zero", got, want)
    assert np.array_equal(np.signbit(got[special]), np.signbit(want[special])), ("sign", got, want)
    fin = np.isfinite(want) & ~special
    tol = TOL[want.dtype.itemsize]
    np.testing.assert_allclose(got[fin].astype(np.float64), want[fin].astype(np.float64),
                               rtol=tol, atol=0)


def _skip_unrouted_on_simulator(op):
    if SIMULATED and op.name not in EAGER_OWN_KERNEL_ON_CUDA:
        pytest.skip("eager mode on cuda is CuPy op by op: " + NO_CUPY)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("op", FLOAT_OPS, ids=lambda o: o.name)
def test_eager_special_values(op, dtype):
    _skip_unrouted_on_simulator(op)
    args = _operands(op, special_values(dtype))
    want, err = _numpy(op, args)
    if err is not None:
        with pytest.raises(err):
            _eager(op, args)
        return
    _same_specials(_eager(op, args), np.asarray(want), op.name in INEXACT)


def _flushed(a):
    a = np.array(a, copy=True)
    if a.dtype.kind == "f" and a.dtype.itemsize <= 4:
        tiny = np.finfo(a.dtype).tiny
        sub = (a != 0) & (np.abs(a) < tiny)
        a[sub] = np.copysign(0, a[sub])
    return a


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("op", FLOAT_OPS, ids=lambda o: o.name)
def test_eager_subnormals(op, dtype):
    """NumPy's values for the ops lazyarr runs itself; for the rest, NumPy's values or, in
    float32/float16, exactly CuPy's flush-to-zero (NumPy on flushed inputs, output flushed):
    the documented deviation and nothing else."""
    _skip_unrouted_on_simulator(op)
    args = _operands(op, subnormals(dtype))
    want, err = _numpy(op, args)
    if err is not None:
        return                                   # errors: test_eager_special_values
    want = np.asarray(want)
    got = _eager(op, args)
    inexact = op.name in INEXACT
    if op.name in EAGER_OWN_KERNEL_ON_CUDA or np.dtype(dtype).itemsize == 8:
        _same_specials(got, want, inexact)
        return
    try:
        _same_specials(got, want, inexact)
    except AssertionError:
        flushed, _ = _numpy(op, tuple(_flushed(a) for a in args))
        _same_specials(got, _flushed(np.asarray(flushed)), inexact)
