"""Library calls fed by a pending chain (issue 18): ``sort``, ``cumsum`` and ``cumprod`` of a
pending CPU array compute its kernel straight into the result's memory, then sort or scan it
in place: NumPy's values, dtypes, axes and errors; and ``la.explain`` lists library calls as
steps with their bytes and FLOPs."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import lazyarr as la
from lazyarr.backends import cpu_fused

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64, np.float16,
          np.float32, np.float64, np.complex64, np.complex128]


def _data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 5
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.fixture
def into(monkeypatch):
    """Lazy mode on the CPU, counting the kernels run into memory given to them (run_into)
    and those run into new memory (run)."""
    counts = {"into": 0, "run": 0}
    real_into, real_run = cpu_fused.CpuFusedBackend.run_into, cpu_fused.CpuFusedBackend.run

    def run_into(self, lowered, out):
        counts["into"] += 1
        return real_into(self, lowered, out)

    def run(self, lowered):
        counts["run"] += 1
        return real_run(self, lowered)

    monkeypatch.setattr(cpu_fused.CpuFusedBackend, "run_into", run_into)
    monkeypatch.setattr(cpu_fused.CpuFusedBackend, "run", run)
    with la.config(mode="lazy", device="cpu"):
        yield counts


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_sort_of_a_pending_array(into, dtype, axis):
    a = _data(dtype, (37, 29))
    x = la.asarray(a)
    want = np.sort(a + a[::-1], axis=axis)
    _same(la.sort(x + x[::-1], axis=axis), want)
    _same(la.sort(la.asarray(want), axis=axis), np.sort(want, axis=axis))     # computed
    assert into == {"into": 1, "run": 0}          # the chain, into the result's memory


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumulative_of_a_pending_array(into, name, dtype, axis):
    a = _data(dtype, (37, 29))
    x = la.asarray(a)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a * a[::-1], axis=axis)       # int8 -> int64, bool -> int64
        got = getattr(la, name)(x * x[::-1], axis=axis)
        _same(getattr(np, name)(la.asarray(a), axis=axis), getattr(np, name)(a, axis=axis))
    _same(got, want)
    assert into == {"into": 1, "run": 0}


@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.float64])
def test_cumsum_dtype_argument(into, dtype):
    a = _data(dtype, (100,))
    x = la.asarray(a)
    for to in (np.float64, np.int64, np.complex128, np.float32):
        _same(la.cumsum(x * 2, dtype=to), np.cumsum(a * np.asarray(2, dtype), dtype=to))


def test_sort_nan_and_kinds(into):
    a = np.array([3.0, np.nan, -np.inf, 1.0, np.nan, -0.0, 0.0, np.inf, -2.0], np.float32)
    x = la.asarray(a)
    for kind in (None, "quicksort", "mergesort", "heapsort", "stable"):
        _same(la.sort(x + 1, kind=kind), np.sort(a + 1, kind=kind))      # NaNs last
    _same(la.sort(x * 1, stable=True), np.sort(a, stable=True))
    with np.errstate(invalid="ignore"):
        c = (a + 1j * a[::-1]).astype(np.complex64)
    _same(la.sort(la.asarray(c) + 0), np.sort(c + 0))


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4)])
def test_empty(into, shape):
    a = np.zeros(shape, np.float32)
    x = la.asarray(a)
    for axis in (None, 0, -1):
        _same(la.sort(x + 1, axis=axis), np.sort(a + 1, axis=axis))
        _same(la.cumsum(x + 1, axis=axis), np.cumsum(a + 1, axis=axis))


def test_zero_d_and_errors(into):
    x = la.asarray(np.float32(2.5))
    _same(la.cumsum(x + 1), np.cumsum(np.float32(3.5)))
    _same(la.sort(x + 1, axis=None), np.sort(np.float32(3.5), axis=None))
    with pytest.raises(np.exceptions.AxisError):
        la.sort(x + 1)
    y = la.asarray(np.ones((3, 4), np.float32))
    with pytest.raises(np.exceptions.AxisError):
        la.sort(y + 1, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        la.cumsum(y + 1, axis=-3)
    with pytest.raises(ValueError):
        la.sort(y + 1, kind="nonsense")


def test_numpy_functions_reach_them(into):
    a = _data(np.float32, (50,))
    x = la.asarray(a)
    _same(np.cumsum(x * 3), np.cumsum(a * np.float32(3)))
    _same(np.cumprod(x * 3, axis=0), np.cumprod(a * np.float32(3), axis=0))
    assert into["into"] == 2


def test_pending_input_stays_pending_and_correct(into):
    a = _data(np.float32, (1000,))
    x = la.asarray(a)
    y = la.sqrt(la.abs(x)) * 2 - 1
    s = la.sort(y)
    _same(s, np.sort(np.sqrt(np.abs(a)) * 2 - 1))
    _same(y, np.sqrt(np.abs(a)) * 2 - 1)          # the chain's own value, not the sorted one


def test_no_temporary_for_the_chain():
    n = 1 << 20
    x = la.asarray(np.random.default_rng(0).standard_normal(n, dtype=np.float32))
    with la.config(mode="lazy", device="cpu"):
        for fn in (la.sort, la.cumsum):
            fn(la.sqrt(la.abs(x)) * 2 - 1)
            tracemalloc.start()
            r = fn(la.sqrt(la.abs(x)) * 2 - 1)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            del r
            assert peak < 4 * n * 1.1, (fn, peak)      # the result's memory only


def test_explain_lists_library_calls():
    a = la.asarray(np.ones((64, 32), np.float32))
    bias = la.asarray(np.ones(64, np.float32))
    with la.config(mode="lazy", device="cpu"):
        plan = la.explain(lambda: la.sum(la.maximum(a @ a.T + bias, 0)))
    assert len(plan.kernels) == 1
    (call,) = plan.library_calls
    assert (call.name, call.bytes_read, call.bytes_written, call.flops) == \
        ("matmul", 2 * 64 * 32 * 4, 64 * 64 * 4, 2 * 64 * 64 * 32)
    assert "step 0: library call numpy.matmul" in str(plan) and "GFLOP" in str(plan)
    big = la.asarray(np.ones(1 << 16, np.float32))
    with la.config(mode="lazy", device="cpu"):
        plan = la.explain(la.sort(big + 1) * 2)
    assert [c.name for c in plan.library_calls] == ["sort"]
    assert plan.library_calls[0].flops is None and plan.library_calls[0].bytes_written == 4 << 16


def test_matmul_epilogue_is_one_call_and_one_kernel(kernels):
    rng = np.random.default_rng(0)
    a_np, b_np = (rng.standard_normal((256, 256), dtype=np.float32) for _ in range(2))
    bias_np = rng.standard_normal(256, dtype=np.float32)
    a, b, bias = la.asarray(a_np), la.asarray(b_np), la.asarray(bias_np)
    got = la.sum(la.maximum(a @ b + bias, 0))
    want = np.sum(np.maximum(a_np @ b_np + bias_np, 0), dtype=np.float64)
    assert np.isclose(float(got), want, rtol=1e-5)
    assert len(kernels) == 1
