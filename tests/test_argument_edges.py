"""Arguments at the edges of what NumPy accepts (issue 11, findings 7 and 8): validation that
does not depend on earlier calls, NumPy's answers for odd operands, limits named in errors.
Each runs in eager mode and in lazy mode on every CPU backend (the ``mode`` fixture)."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import backends

from helpers import assert_same


# ----------------------------------------------------------------------------- finding 7
@pytest.mark.parametrize("bad_axis", [1.0, True, np.float64(1.0), (1.0,), (True,), (0, 1.0)])
def test_axis_must_be_an_integer_whatever_ran_before(bad_axis, mode):
    x = la.asarray(np.ones((3, 4)))
    for _ in range(2):                  # before and after the same reduction with axis=1
        with pytest.raises(TypeError):
            np.sum(np.ones((3, 4)), axis=bad_axis)
        with pytest.raises(TypeError):
            la.sum(x, axis=bad_axis)
        with pytest.raises(TypeError):
            la.var(x, axis=bad_axis)
        assert_same(la.sum(x, axis=1), np.full(3, 4.0))
        assert_same(la.sum(x, axis=(0, 1)), np.float64(12.0))


@pytest.mark.parametrize("bad", ["no", None, 1.0, np.True_])
def test_keepdims_must_be_an_integer_or_bool(bad, mode):
    x = la.asarray(np.ones((3, 4)))
    with pytest.raises(TypeError):
        np.sum(np.ones((3, 4)), axis=0, keepdims=bad)
    for op in (la.sum, la.max, la.var, la.any):
        with pytest.raises(TypeError):
            op(x, axis=0, keepdims=bad)
    assert la.sum(x, axis=0, keepdims=1).shape == (1, 4)      # an int is fine, as in NumPy
    assert la.sum(x, axis=0, keepdims=True).shape == (1, 4)


@pytest.mark.parametrize("ddof, exc", [(2**70, OverflowError), (-(2**70), OverflowError),
                                       ("1", TypeError), (None, TypeError)])
def test_unusable_ddof_raises_numpys_error(ddof, exc, mode):
    a = np.arange(12.0).reshape(3, 4)
    with pytest.raises(exc):
        np.var(a, ddof=ddof)
    x = la.asarray(a)
    for call in (lambda: la.var(x * 2, ddof=ddof), lambda: la.std(x, axis=0, ddof=ddof)):
        with pytest.raises(exc):
            call()


def test_large_and_fractional_ddof_as_numpy(mode):
    a = np.arange(12.0).reshape(3, 4)
    x = la.asarray(a)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same(la.var(x, ddof=1.5), np.var(a, ddof=1.5), exact=False)
        assert_same(la.var(x, axis=0, ddof=2**63 - 1), np.var(a, axis=0, ddof=2**63 - 1))


# ----------------------------------------------------------------------------- finding 8
def test_arrays_of_up_to_64_dimensions(mode):
    a = np.arange(2.0).reshape((1,) * 40 + (2,))
    b = np.arange(3.0).reshape((3,) + (1,) * 41)
    x, y = la.asarray(a), la.asarray(b)
    assert_same(x + y, a + b)
    assert_same(la.sum(x * 2), np.sum(a * 2))
    assert_same(la.sum(x * y, axis=0), np.sum(a * b, axis=0))
    assert_same(la.max(x - y, axis=41), np.max(a - b, axis=41))
    with pytest.raises(ValueError, match="shape mismatch"):
        x + la.asarray(np.ones((1,) * 40 + (3,)))


def test_python_scalars_beyond_int64(mode):
    assert_same(la.add(1.5, 2**70), np.add(1.5, 2**70))
    assert_same(la.multiply(2**70, 0.5), np.multiply(2**70, 0.5))
    assert_same(la.less(1, 2**70), np.less(1, 2**70))
    for call in (np.add, la.add):
        with pytest.raises(OverflowError):
            call(1, 2**70)


@pytest.mark.parametrize("other", [None, "a"])
def test_comparison_with_a_non_number_is_elementwise(other, mode):
    a = np.arange(6.0).reshape(2, 3)
    x = la.asarray(a)
    assert_same(x == other, a == other)
    assert_same(x != other, a != other)
    assert_same(other == x, other == a)


def test_membership_in_any_dimension(mode):
    a = np.arange(6.0).reshape(2, 3)
    x = la.asarray(a) * 1
    assert (2.0 in x) is (2.0 in a) is True
    assert (7.0 in x) is (7.0 in a) is False
    assert (np.nan in la.asarray(np.array([np.nan]))) is False


@pytest.mark.parametrize("exponent", [np.int8(-1), np.int64(-2), np.array(-1, np.int16)[()]])
def test_negative_integer_power_of_a_constant_raises_at_the_line(exponent, mode):
    x = la.asarray(np.arange(6).reshape(2, 3))
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        np.arange(6) ** exponent
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        x ** exponent
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        la.power(x, exponent)
    assert_same(x ** np.int8(2), np.arange(6).reshape(2, 3) ** np.int8(2))
    with np.errstate(divide="ignore"):
        assert_same(x ** np.float32(-1), np.arange(6).reshape(2, 3) ** np.float32(-1))


def test_explain_rejects_an_unknown_device():
    x = la.asarray(np.ones(4))
    with pytest.raises(ValueError, match="device='tpu' is not valid"):
        la.explain(x + 1, device="tpu")
    assert la.explain(x + 1, device="cpu").device == "cpu"


@pytest.mark.skipif("cpu-fused" not in backends.available(), reason="cpu-fused not built")
@pytest.mark.parametrize("value", ["4294967296", "0", "-3"])
def test_thread_count_environment_out_of_range_names_the_variable(value):
    env = dict(os.environ, LAZYARR_NUM_THREADS=value)
    proc = subprocess.run([sys.executable, "-c", "import lazyarr.backends.cpu_fused"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert f"LAZYARR_NUM_THREADS='{value}' must be between 1 and" in proc.stderr


@pytest.mark.skipif("cpu-fused" not in backends.available(), reason="cpu-fused not built")
def test_set_num_threads_out_of_range():
    from lazyarr.backends import cpu_fused

    for n in (0, 2**32):
        with pytest.raises(ValueError, match="between 1 and"):
            cpu_fused.set_num_threads(n)


@pytest.mark.skipif("cpu-fused" not in backends.available(), reason="cpu-fused not built")
def test_out_of_memory_names_the_allocation_that_failed():
    """A 4-byte sum over a lazy 2^62-element broadcast: its partial sums do not fit."""
    x = la.asarray(np.ones((2**21, 1, 1), np.float32))
    y = la.asarray(np.ones((1, 2**21, 1), np.float32))
    z = la.asarray(np.ones((1, 1, 2**20), np.float32))
    with backends.use_backend("cpu-fused"), \
            pytest.raises(MemoryError, match=r"partial results of the sum over \(2097152, "):
        la.sum(x * y * z)
    assert la.sum(x[:2] * y[:, :2] * z[:, :, :2]).item() == 8.0        # carries on


@pytest.mark.parametrize("mode", ["lazy", "eager"])
@pytest.mark.parametrize("dtype", ["float64", "int8", "bool", "float16"])
def test_axis_zero_of_a_0d_array_is_numpys(dtype, mode):
    """NumPy's ufunc reductions (and argmax/argmin, and the nan-functions built on them) take
    ``axis=0`` or ``-1`` of a 0-d array as reducing nothing; ``mean``/``var`` and a tuple
    ``(0,)`` raise AxisError, as any other axis does."""
    a = np.asarray(np.ones((), dtype) * 2)
    names = ("sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "mean", "var",
             "nansum", "nanmax", "nanprod", "count_nonzero", "nanmean")
    for name in names:
        for axis in (0, -1, (0,), 1, ()):
            if name.startswith("arg") and isinstance(axis, tuple):
                continue
            with la.config(mode=mode):
                try:
                    got = np.asarray(getattr(la, name)(la.asarray(a), axis=axis))
                except Exception as exc:  # noqa: BLE001 - compared with NumPy's
                    got = type(exc)
            try:
                want = np.asarray(getattr(np, name)(a, axis=axis))
            except Exception as exc:  # noqa: BLE001
                want = type(exc)
            if isinstance(want, type):
                assert got is want, (name, axis)
            else:
                assert not isinstance(got, type), (name, axis, got)
                assert got.dtype == want.dtype and got.shape == want.shape and got.tolist() == want.tolist()
