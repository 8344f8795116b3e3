"""The result pool (lazyarr/backends/_cpu_pool.h, ``cpu_fused._new_result``): a large CPU
result's memory is kept when the array dies and taken by the next result of its size, with
NumPy's values, ownership and aliasing unchanged."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from numpy._core.multiarray import get_handler_name

import lazyarr as la
from lazyarr import _memory
from lazyarr.backends import cpu_fused

MIN = cpu_fused.RESULT_POOL_MIN_BYTES
N = MIN // 8 + 5                    # float64 elements: a result just over the pool's minimum


@pytest.fixture(autouse=True)
def empty_pool():
    """Each test starts with an empty pool of the default limit, and leaves one."""
    cpu_fused.release_result_pool()
    old = cpu_fused.set_result_pool_bytes(1 << 30)
    yield
    cpu_fused.set_result_pool_bytes(old)
    cpu_fused.release_result_pool()


def _x(seed=0, n=N):
    return la.asarray(np.random.default_rng(seed).random(n))


def test_a_large_result_comes_from_the_pool_and_owns_its_memory_as_numpys_does():
    x = _x()
    got = np.asarray((x * 2 + 1).compute())
    assert get_handler_name(got) == "lazyarr_result_pool"
    assert got.flags.owndata and got.base is None and got.flags.writeable
    np.testing.assert_array_equal(got, np.asarray(x) * 2 + 1)
    small = np.asarray((la.asarray(np.ones(1000)) * 2).compute())
    assert get_handler_name(small) != "lazyarr_result_pool"      # below the minimum


def test_a_dead_result_s_memory_is_taken_by_the_next_result_of_its_size():
    x = _x()
    first = np.asarray((x * 2).compute())
    address = first.ctypes.data
    del first
    info = cpu_fused.result_pool_info()
    assert info["blocks"] == 1 and info["bytes"] == N * 8
    hits = info["hits"]
    second = np.asarray((x + 3).compute())
    assert second.ctypes.data == address
    assert cpu_fused.result_pool_info()["hits"] == hits + 1
    assert cpu_fused.result_pool_info()["blocks"] == 0
    # every element written again: nothing of the last result's values is left
    np.testing.assert_array_equal(second, np.asarray(x) + 3)


def test_live_results_never_share_memory():
    x = _x()
    kept = [np.asarray((x * k).compute()) for k in range(1, 4)]
    del kept[1]                                  # one block back in the pool
    kept += [np.asarray((x - k).compute()) for k in range(2)]
    addresses = {a.ctypes.data for a in kept}
    assert len(addresses) == len(kept)
    for a, b in zip(kept, kept[1:]):
        assert not np.shares_memory(a, b)
    np.testing.assert_array_equal(kept[0], np.asarray(x))
    np.testing.assert_array_equal(kept[-1], np.asarray(x) - 1)


def test_a_result_of_another_size_or_dtype_takes_new_memory():
    x = _x()
    a = np.asarray((x * 2).compute())
    del a
    hits = cpu_fused.result_pool_info()["hits"]
    b = np.asarray((x[:-1] * 2).compute())           # one element fewer
    c = np.asarray((x.astype(np.float32) * 2).compute())  # half the bytes
    info = cpu_fused.result_pool_info()
    assert info["blocks"] == 1 and info["hits"] == hits
    np.testing.assert_array_equal(b, np.asarray(x)[:-1] * 2)
    np.testing.assert_array_equal(c, np.asarray(x).astype(np.float32) * 2)


def test_the_limit_bounds_what_is_kept_oldest_first():
    cpu_fused.set_result_pool_bytes(2 * N * 8)
    x = _x()
    results = [np.asarray((x * k).compute()) for k in range(3)]
    addresses = [a.ctypes.data for a in results]
    for k in range(3):                              # three blocks freed, oldest first
        results[k] = None
    info = cpu_fused.result_pool_info()
    assert info["blocks"] == 2 and info["bytes"] == 2 * N * 8
    again = np.asarray((x + 1).compute())           # the newest block is taken first
    assert again.ctypes.data == addresses[2]
    assert cpu_fused.set_result_pool_bytes(0) == 2 * N * 8
    assert cpu_fused.result_pool_info()["blocks"] == 0   # a lower limit frees at once
    del again
    assert cpu_fused.result_pool_info()["blocks"] == 0   # limit 0: nothing is kept
    fresh = np.asarray((x * 5).compute())
    assert get_handler_name(fresh) != "lazyarr_result_pool"
    np.testing.assert_array_equal(fresh, np.asarray(x) * 5)


def test_release_returns_the_kept_bytes():
    x = _x()
    a = np.asarray((x * 2).compute())
    del a
    assert cpu_fused.release_result_pool() == N * 8
    assert cpu_fused.result_pool_info()["bytes"] == 0
    assert cpu_fused.release_result_pool() == 0
    with pytest.raises(ValueError, match="at least 0"):
        cpu_fused.set_result_pool_bytes(-1)


def test_numpys_own_operations_on_a_pool_array_work_as_on_any_array():
    x = _x()
    a = np.asarray((x * 2).compute())
    want = np.asarray(x) * 2
    a.resize(N + 1000, refcheck=False)              # realloc through the handler
    np.testing.assert_array_equal(a[:N], want)
    a.resize(10, refcheck=False)
    np.testing.assert_array_equal(a, want[:10])
    b = np.asarray((x * 2).compute())
    view = b[::2]
    del b                                           # the view keeps the memory alive
    c = np.asarray((x * 7).compute())
    assert not np.shares_memory(view, c)
    np.testing.assert_array_equal(view, want[::2])


def test_transposed_and_multi_dim_results_and_jit_replays():
    m = la.asarray(np.random.default_rng(1).random((N // 64, 64)))
    t = np.asarray((m.T * 2).compute())             # a K-order result: a view of pool memory
    np.testing.assert_array_equal(t, np.asarray(m).T * 2)

    @la.jit
    def f(a):
        return a * 3 - 1

    for _ in range(3):                              # a trace, then bound replays
        got = np.asarray(f(m))
        np.testing.assert_array_equal(got, np.asarray(m) * 3 - 1)
        assert get_handler_name(got) == "lazyarr_result_pool"


@pytest.mark.parametrize("value, error", [("-1", "at least 0"), ("lots", "not an integer")])
def test_bad_environment_values_say_what_is_wrong(monkeypatch, value, error):
    monkeypatch.setenv("LAZYARR_RESULT_POOL_BYTES", value)
    with pytest.raises(ValueError, match=error):
        _memory._default_bytes()


def test_the_environment_sets_the_limit_at_import():
    code = ("from lazyarr.backends import cpu_fused as c; import lazyarr as la, numpy as np; "
            "a = (la.asarray(np.ones(1 << 20)) * 2).compute(); del a; "
            "print(c.result_pool_info()['limit'], c.result_pool_info()['blocks'])")
    env = dict(os.environ, LAZYARR_RESULT_POOL_BYTES="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["0", "0"]


def test_large_random_draws_and_creations_come_from_the_pool():
    rng, ref = la.random.default_rng(7), np.random.default_rng(7)
    first = np.asarray(rng.random(N))
    assert get_handler_name(first) == "lazyarr_result_pool"
    np.testing.assert_array_equal(first, ref.random(N))
    address = first.ctypes.data
    del first
    second = np.asarray(rng.random(N))             # the next draw takes the kept block
    assert second.ctypes.data == address
    np.testing.assert_array_equal(second, ref.random(N))
    for make in (lambda: la.empty(N), lambda: la.ones(N), lambda: la.full((N,), 2.5)):
        assert get_handler_name(np.asarray(make())) == "lazyarr_result_pool"
    np.testing.assert_array_equal(np.asarray(la.full((N,), 2.5)), np.full(N, 2.5))
    np.testing.assert_array_equal(np.asarray(la.ones(N)), np.ones(N))
    assert get_handler_name(np.asarray(la.zeros(N))) != "lazyarr_result_pool"  # calloc's
    assert get_handler_name(np.asarray(la.ones(10))) != "lazyarr_result_pool"
    cpu_fused.set_result_pool_bytes(0)              # off: NumPy's own allocator
    assert get_handler_name(np.asarray(rng.random(N))) != "lazyarr_result_pool"
