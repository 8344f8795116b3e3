"""Every bad input of issue 6: the exception type (NumPy's where NumPy has one) and a message
that names the problem. In lazy mode a bad expression must fail at the line that wrote it,
not later at materialization: each check below runs in both modes, and in lazy mode nothing
has been materialized when the error is raised.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _node, backends

MODES = ["lazy", "eager"]


@pytest.fixture(params=MODES)
def mode(request):
    with la.config(mode=request.param, device="cpu"):
        yield request.param


def _raises_like_numpy(np_call, la_call, exc_type, match):
    """NumPy raises ``exc_type``; lazyarr raises the same type with a message matching."""
    with pytest.raises(exc_type):
        np_call()
    with pytest.raises(exc_type, match=match):
        la_call()


# --------------------------------------------------------------------------- shapes
def test_shape_mismatch_names_both_shapes(mode):
    a, b = np.ones(3), np.ones((2, 4))
    x, y = la.asarray(a), la.asarray(b)
    _raises_like_numpy(lambda: a + b, lambda: x + y, ValueError, r"\(3,\).*\(2, 4\)")
    with pytest.raises(ValueError, match="broadcast"):
        la.where(x > 0, x, y)
    with pytest.raises(ValueError, match="broadcast"):
        la.clip(x, y, None)


def test_shape_mismatch_raises_when_built_not_when_materialized():
    x = la.asarray(np.ones(3))
    pending = x * 2 + 1
    with pytest.raises(ValueError):
        pending + la.asarray(np.ones(4))    # the line that wrote the mistake
    assert not pending.is_materialized      # nothing ran


# --------------------------------------------------------------------------- dtypes
@pytest.mark.parametrize("data", [
    np.array([1, "a"], dtype=object), np.array(["ab", "c"]), np.array([b"x"]),
    np.array(["2020-01-01"], dtype="datetime64[D]"), np.array([1], dtype="timedelta64[s]"),
    np.ones(2, dtype=np.clongdouble), np.ones(2, dtype=np.longdouble),
], ids=["object", "str", "bytes", "datetime64", "timedelta64", "clongdouble", "longdouble"])
def test_unsupported_dtype_is_named_with_the_supported_list(data, mode):
    with pytest.raises(TypeError, match=re.escape(f"does not support dtype {np.dtype(data.dtype)}")
                       + ".*supported dtypes: bool"):
        la.asarray(data)


@pytest.mark.parametrize("call", [
    lambda x: x.astype(object), lambda x: la.astype(x, "U3"), lambda x: la.zeros(3, dtype=object),
    lambda x: la.full(3, 1.0, dtype=np.clongdouble), lambda x: x.sum(dtype=np.clongdouble),
    lambda x: la.ones_like(x, dtype="datetime64[s]"),
], ids=["astype-object", "astype-str", "zeros", "full", "sum-dtype", "ones_like"])
def test_unsupported_dtype_arguments(call, mode):
    with pytest.raises(TypeError, match="does not support dtype"):
        call(la.asarray(np.ones(3)))


def test_not_a_dtype(mode):
    with pytest.raises(TypeError, match="is not a dtype"):
        la.asarray(np.ones(3)).astype("not-a-dtype")


def test_complex_python_scalar_is_weak(mode):
    # a Python complex is weak, as in NumPy 2: float32 with 1j is complex64
    for a in (np.ones(3, np.float32), np.ones(3, np.int16), np.ones(3)):
        got, want = la.asarray(a) + 1j, a + 1j
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)


def test_ufunc_without_a_loop_for_the_dtype(mode):
    a = np.ones(3)
    _raises_like_numpy(lambda: a & a, lambda: la.asarray(a) & la.asarray(a), TypeError,
                       "bitwise_and.*not supported for the input types")
    b = np.ones(3, dtype=bool)
    _raises_like_numpy(lambda: -b, lambda: -la.asarray(b), TypeError, "boolean negative")


# --------------------------------------------------------------------------- devices
def _fake_cuda(values):
    """A LazyArray placed on "cuda" without a GPU: only device bookkeeping is exercised."""
    return la.LazyArray._from_node(_node.leaf(np.asarray(values), "cuda"))


def test_mixing_devices_names_both(mode):
    x, g = la.asarray(np.ones(3)), _fake_cuda(np.ones(3))
    with pytest.raises(ValueError, match=r"different devices \(cpu and cuda\).*la.asarray"):
        x + g
    with pytest.raises(ValueError, match="different devices"):
        la.where(x > 0, g, 1.0)


def test_mixing_a_numpy_array_with_a_cuda_array(mode):
    g = _fake_cuda(np.ones(3))
    with pytest.raises(ValueError, match=r"host \(NumPy\) array with a cuda array.*device='cuda'"):
        g + np.ones(3)
    with pytest.raises(ValueError, match="host"):
        la.maximum(g, [1.0, 2.0, 3.0])


@pytest.mark.skipif(la.cuda_available(), reason="this machine has a usable GPU")
def test_cuda_without_a_gpu_says_what_is_missing():
    with pytest.raises(RuntimeError, match=r"no usable GPU.*pip install 'lazyarr\[cuda\]'"):
        la.asarray([1.0], device="cuda")
    with pytest.raises(RuntimeError, match="no usable GPU"):
        la.zeros(3, device="cuda")


def test_unknown_device():
    with pytest.raises(ValueError, match="device='tpu' is not valid"):
        la.asarray([1.0], device="tpu")


# --------------------------------------------------------------------------- ops and axes
def test_unknown_op():
    with pytest.raises(AttributeError, match="no attribute 'frexpp'"):
        la.frexpp  # noqa: B018  (not a NumPy name either; NumPy's names: tests/test_fallback.py)
    x = la.asarray(np.ones(3))
    # A NumPy ufunc lazyarr does not implement runs through the fallback; with
    # fallback="error" it raises a TypeError naming it.
    with la.config(fallback="error"):
        with pytest.raises(TypeError, match="divmod"):
            np.divmod(x, 2.0)
        with pytest.raises(TypeError, match="add.accumulate"):
            np.add.accumulate(x)
    with pytest.raises(ValueError, match="unknown or unavailable backend 'nope'; available"):
        with backends.use_backend("nope"):
            pass


def test_wrong_number_of_arguments():
    x = la.asarray(np.ones(3))
    with pytest.raises(TypeError, match="takes 2 array argument"):
        la.add(x)
    with pytest.raises(ValueError, match="either both or neither of x and y"):   # NumPy's
        la.where(x, x)
    with pytest.raises(TypeError, match="takes from 1 to 3 positional arguments"):
        la.where(x, x, x, x)


@pytest.mark.parametrize("axis, exc, match", [
    (2, np.exceptions.AxisError, "axis 2 is out of bounds for array of dimension 2"),
    (-3, np.exceptions.AxisError, "axis -3 is out of bounds"),
    ((0, 0), ValueError, "repeated axis|duplicate value"),
    ((0, 5), np.exceptions.AxisError, "axis 5 is out of bounds"),
    (0.5, TypeError, "'float' object cannot be interpreted as an integer"),
    ("0", TypeError, "'str' object cannot be interpreted as an integer"),
])
def test_bad_axis(axis, exc, match, mode):
    a = np.ones((2, 3))
    _raises_like_numpy(lambda: np.sum(a, axis=axis), lambda: la.asarray(a).sum(axis=axis), exc, match)


def test_argmin_takes_a_single_axis(mode):
    a = np.ones((2, 3))
    _raises_like_numpy(lambda: np.argmin(a, axis=(0,)), lambda: la.argmin(la.asarray(a), axis=(0,)),
                       TypeError, "'tuple' object cannot be interpreted as an integer")


def test_unknown_reduction_keyword(mode):
    x = la.asarray(np.ones(3))
    with pytest.raises(TypeError, match="sum\\(\\) got an unexpected keyword argument 'ddof'"):
        x.sum(ddof=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtype'"):
        x.max(dtype=np.float32)


@pytest.mark.parametrize("op, want", [("max", "reduction operation maximum which has no identity"),
                                      ("min", "reduction operation minimum which has no identity"),
                                      ("argmin", "attempt to get argmin of an empty sequence"),
                                      ("argmax", "attempt to get argmax of an empty sequence")])
def test_empty_reduction_without_identity(op, want, mode):
    a = np.ones((0, 3))
    _raises_like_numpy(lambda: getattr(np, op)(a), lambda: getattr(la, op)(la.asarray(a)), ValueError, want)
    # along a non-empty axis it is fine, as in NumPy
    assert getattr(la, op)(la.asarray(a), axis=1).shape == (0,)


# --------------------------------------------------------------------------- in-place ops
def test_inplace_that_would_change_dtype(mode):
    a = np.arange(3, dtype=np.int8)
    x = la.asarray(a)

    def np_iadd():
        t = a.copy()
        t += 1.5

    def la_iadd():
        t = x
        t += 1.5

    _raises_like_numpy(np_iadd, la_iadd, TypeError,
                       r"Cannot cast ufunc 'add' output from dtype\('float64'\) to dtype\('int8'\) "
                       "with casting rule 'same_kind'")
    assert x.dtype == np.int8 and np.array_equal(np.asarray(x), a)   # unchanged


def test_inplace_that_would_broadcast_the_target(mode):
    x = la.asarray(np.ones(3))
    with pytest.raises(ValueError, match=r"non-broadcastable output operand with shape \(3,\) "
                                         r"doesn't match the broadcast shape \(2, 3\)"):
        x += la.asarray(np.ones((2, 3)))


def test_inplace_writes_the_memory_as_numpy(mode):
    a = np.arange(4.0)
    x = la.asarray(a)
    alias = la.asarray(a)
    x += 10
    x *= 2
    np.testing.assert_array_equal(a, [20, 22, 24, 26])      # np.asarray(a) is a: written
    np.testing.assert_array_equal(np.asarray(alias), [20, 22, 24, 26])
    np.testing.assert_array_equal(np.asarray(x), [20, 22, 24, 26])


# --------------------------------------------------------------------------- Python ints
@pytest.mark.parametrize("dtype, value", [(np.int8, 300), (np.int8, -129), (np.uint8, -1),
                                          (np.uint16, 70000), (np.int64, 2 ** 63), (np.uint64, -1)])
def test_out_of_range_python_int(dtype, value, mode):
    a = np.ones(3, dtype=dtype)
    _raises_like_numpy(lambda: a + value, lambda: la.asarray(a) + value, OverflowError,
                       rf"Python integer {value} out of bounds for {np.dtype(dtype).name}")
    _raises_like_numpy(lambda: np.maximum(a, value), lambda: la.maximum(la.asarray(a), value),
                       OverflowError, "out of bounds")


def test_out_of_range_python_int_is_fine_where_numpy_allows_it(mode):
    a = np.array([-5, 0, 100], dtype=np.int8)
    x = la.asarray(a)
    np.testing.assert_array_equal(np.asarray(x < 300), a < 300)       # exact comparison
    np.testing.assert_array_equal(np.asarray(x == -1000), a == -1000)
    np.testing.assert_array_equal(np.asarray(la.clip(x, 0, 300)), np.clip(a, 0, 300))
    assert (x + 2.5).dtype == np.float64


def test_negative_integer_power(mode):
    a = np.arange(1, 4, dtype=np.int32)
    _raises_like_numpy(lambda: a ** -1, lambda: la.asarray(a) ** -1, ValueError,
                       "Integers to negative integer powers are not allowed")


def test_negative_integer_power_in_data_reference():
    # Data-dependent: only known when the kernel runs, so it raises at materialization.
    with la.config(device="cpu"), backends.use_backend("reference"):
        base, exp = la.asarray(np.array([2, 3], np.int8)), la.asarray(np.array([-1, 2], np.int8))
        y = la.power(base, exp)
        with pytest.raises(ValueError, match="Integers to negative integer powers"):
            y.compute()


@pytest.mark.skipif("cpu-fused" not in backends.available(), reason="cpu-fused not built")
def test_negative_integer_power_in_data_cpu_fused():
    base, exp = la.asarray(np.array([2, 3], np.int8), device="cpu"), \
        la.asarray(np.array([-1, 2], np.int8), device="cpu")
    with backends.use_backend("cpu-fused"):
        with pytest.raises(ValueError, match="Integers to negative integer powers"):
            la.power(base, exp).compute()


# --------------------------------------------------------------------------- buffers
def test_asarray_references_and_lazy_reads_at_materialization():
    """The documented semantics: ``la.asarray(ndarray)`` does not copy; a pending expression
    reads its input buffers when it is materialized; a materialized result keeps its values."""
    a = np.array([1.0, 2.0, 3.0])
    with la.config(mode="lazy", device="cpu"):
        x = la.asarray(a)
        assert np.shares_memory(np.asarray(x), a)
        y = x * 10                      # pending
        a[0] = 100.0                    # written before y materializes: y sees it
        np.testing.assert_array_equal(np.asarray(y), [1000, 20, 30])
        a[1] = -1.0                     # written after: y keeps its values
        np.testing.assert_array_equal(np.asarray(y), [1000, 20, 30])
        np.testing.assert_array_equal(np.asarray(x * 10), [1000, -10, 30])   # a new expression
        s = x.sum()                      # a reduction materializes at once
        a[2] = 0.0
        assert float(s) == 102.0 and float(x.sum()) == 99.0


def test_eager_mode_reads_the_buffer_when_the_op_runs():
    a = np.array([1.0, 2.0])
    with la.config(mode="eager", device="cpu"):
        y = la.asarray(a) * 10          # computed now
        a[0] = 100.0
        np.testing.assert_array_equal(np.asarray(y), [10, 20])


# --------------------------------------------------------------------------- config
@pytest.mark.parametrize("kw, exc, match", [
    ({"mode": "fast"}, ValueError, "mode='fast' is not valid; choose one of 'lazy', 'eager'"),
    ({"device": "tpu"}, ValueError, "device='tpu' is not valid; choose one of 'auto', 'cpu', 'cuda'"),
    ({"mode": 1}, ValueError, "mode=1 is not valid"),
    ({"colour": "red"}, TypeError, "unknown lazyarr config option 'colour'; options: mode, device"),
])
def test_invalid_config(kw, exc, match):
    before = la.get_config()
    with pytest.raises(exc, match=match):
        la.set_config(**kw)
    with pytest.raises(exc, match=match):
        with la.config(**kw):
            pass
    assert la.get_config() == before


@pytest.mark.parametrize("var, value, match", [
    ("LAZYARR_MODE", "fast", "LAZYARR_MODE='fast' is not valid"),
    ("LAZYARR_DEVICE", "gpu0", "LAZYARR_DEVICE='gpu0' is not valid"),
])
def test_invalid_environment(var, value, match):
    env = dict(os.environ, **{var: value})
    proc = subprocess.run([sys.executable, "-c", "import lazyarr"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0
    assert "ValueError" in proc.stderr and match in proc.stderr


@pytest.mark.skipif("cpu-fused" not in backends.available(), reason="cpu-fused not built")
def test_invalid_thread_count_environment():
    env = dict(os.environ, LAZYARR_NUM_THREADS="many")
    proc = subprocess.run([sys.executable, "-c", "import lazyarr.backends.cpu_fused"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "LAZYARR_NUM_THREADS='many' is not an integer" in proc.stderr


# --------------------------------------------------------------------------- conversions
def test_conversions_of_the_wrong_size(mode):
    x = la.asarray(np.ones(3))
    with pytest.raises(ValueError, match="truth value of an array with more than one element"):
        bool(x)
    with pytest.raises(TypeError, match="only (length-1|0-dimensional) arrays"):
        float(x)
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(la.asarray(1.0))
