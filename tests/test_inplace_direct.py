"""``x op= y`` computed straight into ``x``'s memory (lazyarr/_writes.py ``assign``, the CPU
backend's ``run_into``): one pass and no temporary where that is safe, the old copy path where
an input overlaps the target other than element for element. Values, dtypes and aliasing are
NumPy's either way."""
from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr.backends import cpu_fused

RNG = np.random.default_rng(5)


@pytest.fixture
def direct(monkeypatch):
    """Whether each ``run_into`` call wrote into the target (True) or declined (False)."""
    calls = []
    real = cpu_fused.CpuFusedBackend.run_into
    monkeypatch.setattr(cpu_fused.CpuFusedBackend, "run_into",
                        lambda self, lowered, out: calls.append(real(self, lowered, out))
                        or calls[-1])
    with la.config(mode="lazy", device="cpu"):
        yield calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=str)
def test_rank_one_updates_in_place(direct, dtype):
    A = (RNG.standard_normal((33, 21)) * 10).astype(dtype)
    u1, v1, u2, v2 = ((RNG.standard_normal(n) * 10).astype(dtype) for n in (33, 21, 33, 21))
    a = la.asarray(A.copy())
    view = np.asarray(a)                           # NumPy's view of a's memory
    a += la.outer(la.asarray(u1), la.asarray(v1)) + la.outer(la.asarray(u2), la.asarray(v2))
    want = A.copy()
    want += np.outer(u1, v1) + np.outer(u2, v2)
    assert direct == [True]
    np.testing.assert_array_equal(view, want)      # the same memory, NumPy's bits
    np.testing.assert_array_equal(np.asarray(a), want)
    assert np.asarray(a).dtype == want.dtype


def test_pending_readers_keep_their_values(direct):
    X = RNG.standard_normal((8, 9))
    a = la.asarray(X.copy())
    b = a * 2
    a += 1
    np.testing.assert_array_equal(np.asarray(b), X * 2)
    np.testing.assert_array_equal(np.asarray(a), X + 1)


@pytest.mark.parametrize("case", ["reversed", "shifted view target", "transposed target",
                                  "transposed input", "broadcast row of itself"])
def test_overlapping_operands_take_the_copy_path(direct, case):
    X = RNG.standard_normal((6, 6))
    want, a = X.copy(), la.asarray(X.copy())
    if case == "reversed":
        want += want[::-1]
        a += a[::-1]
    elif case == "shifted view target":
        w, t = want[1:], a[1:]
        w += want[:-1] * 2
        t += a[:-1] * 2
    elif case == "transposed target":
        w, t = want.T, a.T
        w += 1
        t += 1
    elif case == "transposed input":
        want += want.T * 1
        a += a.T * 1
    else:
        want *= want[2]
        a *= a[2]
    np.testing.assert_array_equal(np.asarray(a), want)
    if case in ("reversed", "broadcast row of itself", "transposed target"):
        assert direct == [False]       # a view of the target read directly: declined
    # (a pending `a[:-1] * 2` is computed by the write barrier first: then nothing overlaps)


def test_cast_back_and_errors_leave_the_target_as_numpy():
    f32 = la.asarray(np.arange(6, dtype=np.float32))
    f32 += la.asarray(np.full(6, 0.1)) * 3                 # float64 result cast back
    want = np.arange(6, dtype=np.float32)
    want += np.full(6, 0.1) * 3
    np.testing.assert_array_equal(np.asarray(f32), want)
    assert np.asarray(f32).dtype == np.float32
    i = la.asarray(np.arange(1, 7))
    with pytest.raises(ValueError, match="negative"):
        i **= la.asarray(np.array([1, 2, 3, -1, 2, 2])) * 1
    np.testing.assert_array_equal(np.asarray(i), np.arange(1, 7))   # nothing written
