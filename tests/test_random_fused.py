"""Fused random draws (``la.random.default_rng(seed, fused=True)``): the stream as
lazyarr/_random_fused.py defines it, bit for bit on every backend, thread count and view;
the distributions statistically; nothing allocated; NumPy's errors for bad input."""
from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _philox
from lazyarr._philox import philox_bits, philox_random32, philox_random64
from lazyarr._program import lower
from lazyarr.backends import cpu_fused, reference, use_backend


U64 = np.uint64


def _key(seed):
    return U64(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])


def _bits(n, seed, stream):
    """The stream's bits for counters 0..n-1, from the ufunc (itself checked below)."""
    return philox_bits(np.arange(n, dtype=U64), _key(seed), U64(stream))


def _uniform(n, seed, stream, dtype=np.float64):
    """The documented float of the bits: (bits >> 11) * 2**-53, (bits >> 40) * 2**-24."""
    shift, scale = (11, 2.0 ** -53) if dtype == np.float64 else (40, 2.0 ** -24)
    return (_bits(n, seed, stream) >> U64(shift)).astype(dtype) * dtype(scale)


def test_philox_known_answers():
    """Random123's known-answer vectors for Philox4x32-10."""
    assert _philox.philox4x32((0, 0, 0, 0), (0, 0)) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)
    assert _philox.philox4x32((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2) == \
        (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)
    assert _philox.philox4x32((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
                              (0xA4093822, 0x299F31D0)) == (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)


def _bits_by_definition(counter, key, stream):
    block = counter >> 1
    w = _philox.philox4x32((block & 0xFFFFFFFF, block >> 32, stream & 0xFFFFFFFF, stream >> 32),
                           (key & 0xFFFFFFFF, key >> 32))
    return (w[2] | w[3] << 32) if counter & 1 else (w[0] | w[1] << 32)


@pytest.mark.parametrize("start,n", [(0, 1000), (1, 999), (5, 8), (2**33 + 1, 50), (0, 3), (7, 1)])
def test_bits_ufunc_is_the_definition(start, n):
    """Consecutive counters (the vectorized pairs path, odd and even starts), reversed and
    strided ones (the scalar path), one key and stream or an array of them."""
    key, stream = (123 | 77 << 40), (7 | 5 << 33)
    counters = np.arange(start, start + n, dtype=U64)
    want = np.array([_bits_by_definition(int(c), key, stream) for c in counters], dtype=U64)
    np.testing.assert_array_equal(philox_bits(counters, U64(key), U64(stream)), want)
    np.testing.assert_array_equal(philox_bits(counters[::-1].copy(), U64(key), U64(stream)), want[::-1])
    np.testing.assert_array_equal(philox_bits(counters, np.full(n, key, U64), U64(stream)), want)
    if n > 2:
        np.testing.assert_array_equal(philox_bits(counters[::2], U64(key), U64(stream)), want[::2])
    # the floats: the same blocks (the pairs path writes them directly), then NumPy's conversion
    f64 = (want >> U64(11)).astype(np.float64) * 2.0 ** -53
    f32 = (want >> U64(40)).astype(np.float32) * np.float32(2.0 ** -24)
    np.testing.assert_array_equal(philox_random64(counters, U64(key), U64(stream)), f64)
    np.testing.assert_array_equal(philox_random32(counters, U64(key), U64(stream)), f32)
    np.testing.assert_array_equal(philox_random64(counters[::-1].copy(), U64(key), U64(stream)), f64[::-1])
    np.testing.assert_array_equal(philox_random32(counters[::-1].copy(), U64(key), U64(stream)), f32[::-1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_random_is_the_documented_stream(dtype):
    rng = la.random.default_rng(7, fused=True)
    first, second = rng.random((30, 40), dtype=dtype), rng.random(1000, dtype=dtype)
    assert first.dtype == dtype and first.shape == (30, 40)
    np.testing.assert_array_equal(np.asarray(first), _uniform(1200, 7, 0, dtype).reshape(30, 40))
    np.testing.assert_array_equal(np.asarray(second), _uniform(1000, 7, 2, dtype))   # draw 1: stream 2
    assert rng.draws == 2


def test_same_seed_same_draws_and_values_in_range():
    a, b = la.random.default_rng(3, fused=True), la.random.default_rng(3, fused=True)
    x, y = np.asarray(a.random(10_000)), np.asarray(b.random(10_000))
    np.testing.assert_array_equal(x, y)
    assert x.min() >= 0 and x.max() < 1
    assert not np.array_equal(np.asarray(a.random(100)), np.asarray(la.random.default_rng(4, fused=True).random(100)))


@pytest.mark.parametrize("view", [
    lambda u: u[1:, ::3], lambda u: u.T, lambda u: u[::-1, 2], lambda u: u[5, ...],
    lambda u: u[:, None, ::-2][3:], lambda u: la.broadcast_to(u[None, :, :1], (3, 40, 7)),
])
def test_a_view_of_a_draw_reads_the_draws_numbers(view):
    """A view of a pending draw is pushed down to its counters: the same numbers as the same
    view of the computed draw, in a fused kernel."""
    lazy = view(la.random.default_rng(11, fused=True).random((40, 30))) * 2
    stored = la.asarray(np.asarray(la.random.default_rng(11, fused=True).random((40, 30))))
    np.testing.assert_array_equal(np.asarray(lazy), np.asarray(view(stored) * 2))


def test_a_broadcast_draw_fuses():
    u = la.random.default_rng(2, fused=True).random((50, 1))
    got = np.asarray(u + la.zeros((50, 4)))
    np.testing.assert_array_equal(got, np.broadcast_to(_uniform(50, 2, 0).reshape(50, 1), (50, 4)))


def test_thread_count_and_backend_do_not_change_the_numbers():
    n = 3 * (1 << 16) + 5       # past cpu_fused.PARALLEL_WORK: several threads, uneven blocks
    assert n * cpu_fused.get_compiled(lower(la.random.default_rng(5, fused=True).random(n)._node).program).work \
        >= cpu_fused.PARALLEL_WORK
    want = _uniform(n, 5, 0)
    draw = lambda: la.random.default_rng(5, fused=True).random(n)  # noqa: E731
    old = cpu_fused.set_num_threads(1)
    try:
        one = np.asarray(draw())
        cpu_fused.set_num_threads(3)
        three = np.asarray(draw())
    finally:
        cpu_fused.set_num_threads(old)
    with use_backend("reference"):
        ref = np.asarray(draw())
    with la.config(mode="eager"):
        eager = np.asarray(draw())
    for got in (one, three, ref, eager):
        np.testing.assert_array_equal(got, want)


def test_reference_backend_runs_the_counters():
    u = la.random.default_rng(9, fused=True).random((6, 5))[::2, 1:]
    got = reference.for_device("cpu").run(lower(u._node))
    np.testing.assert_array_equal(got, _uniform(30, 9, 0).reshape(6, 5)[::2, 1:])


def test_a_monte_carlo_pi_stores_nothing():
    """``la.mean(u**2 + v**2 < 1)``: one kernel, no N-sized allocation (the draws would be
    2 x 32 MiB)."""
    n = 1 << 22
    rng = la.random.default_rng(0, fused=True)
    la.mean(rng.random(1024) ** 2 + rng.random(1024) ** 2 < 1)    # compiled outside
    tracemalloc.start()
    try:
        pi = 4 * float(la.mean(rng.random(n) ** 2 + rng.random(n) ** 2 < 1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak
    assert abs(pi - np.pi) < 6 * 4 * np.sqrt(np.pi / 4 * (1 - np.pi / 4) / n)
    u, v = _uniform(n, 0, 4), _uniform(n, 0, 6)     # draws 2 and 3 of this generator
    assert pi == 4 * float(np.mean(u ** 2 + v ** 2 < 1))


def _within(value, want, sigma, k=6.0):
    assert abs(value - want) < k * sigma, (value, want, sigma)


def test_uniform_is_uniform():
    n = 1 << 20
    x = np.asarray(la.random.default_rng(21, fused=True).random(n))
    _within(x.mean(), 0.5, np.sqrt(1 / 12 / n))
    counts = np.bincount((x * 64).astype(int), minlength=64)
    p = 1 / 64
    for c in counts:        # every bin within 6 sigma of n/64
        _within(c, n * p, np.sqrt(n * p * (1 - p)))
    f32 = np.asarray(la.random.default_rng(21, fused=True).random(n, dtype=la.float32))
    _within(f32.mean(), 0.5, np.sqrt(1 / 12 / n))
    assert f32.dtype == np.float32 and f32.max() < 1


def test_normal_and_exponential_distributions():
    n = 1 << 20
    rng = la.random.default_rng(22, fused=True)
    z = np.asarray(rng.standard_normal(n))
    _within(z.mean(), 0.0, np.sqrt(1 / n))
    _within(z.var(), 1.0, np.sqrt(2 / n))
    _within(np.mean(np.abs(z) < 1), 0.6826894921370859, np.sqrt(0.2167 / n))
    _within(np.mean(z > 2), 0.022750131948179195, np.sqrt(0.0223 / n))
    assert np.isfinite(z).all()
    g = np.asarray(rng.normal(5.0, 0.5, size=n))
    _within(g.mean(), 5.0, 0.5 / np.sqrt(n))
    _within(g.std(), 0.5, 0.5 * np.sqrt(0.5 / n))
    e = np.asarray(rng.exponential(2.0, n))
    _within(e.mean(), 2.0, 2.0 / np.sqrt(n))
    assert (e >= 0).all() and np.isfinite(e).all()
    z32 = np.asarray(rng.standard_normal(n, dtype=la.float32))
    assert z32.dtype == np.float32
    _within(z32.mean(), 0.0, np.sqrt(1 / n))


def test_normal_is_box_muller_of_the_two_streams():
    rng = la.random.default_rng(1, fused=True)
    z = np.asarray(rng.standard_normal(1000))
    u1, u2 = _uniform(1000, 1, 0), _uniform(1000, 1, 1)
    np.testing.assert_allclose(z, np.sqrt(-2 * np.log1p(-u1)) * np.cos(2 * np.pi * u2), rtol=1e-13)


def test_numpy_signatures_and_results():
    rng = la.random.default_rng(4, fused=True)
    assert isinstance(rng.random(), float) and isinstance(rng.normal(5, 0.1), float)
    u = rng.uniform(-1, [1.0, 2.0, 3.0], size=(2, 3))
    assert u.shape == (2, 3) and u.dtype == np.float64
    got = np.asarray(u)
    assert ((got >= -1) & (got < np.array([1.0, 2.0, 3.0]))).all()
    assert rng.normal(la.asarray([0.0, 10.0]), 1.0).shape == (2,)
    assert rng.exponential(la.ones(4)).shape == (4,)
    assert rng.random(0).shape == (0,) and np.asarray(rng.random((3, 0))).shape == (3, 0)
    assert rng.random(np.int64(3)).shape == (3,)


def test_bad_input_raises_numpys_errors():
    rng = la.random.default_rng(0, fused=True)
    with pytest.raises(TypeError, match="Unsupported dtype"):
        rng.random(3, dtype=la.int32)
    with pytest.raises(ValueError, match="scale < 0"):
        rng.normal(0, -1.0)
    with pytest.raises(ValueError, match="scale < 0"):
        rng.exponential([1.0, -2.0])
    with pytest.raises(OverflowError, match="range exceeds"):
        rng.uniform(-1e308, 1e308)
    with pytest.raises(ValueError, match="shape mismatch"):
        rng.uniform([0.0, 1.0], 2.0, size=3)
    with pytest.raises(TypeError, match="out="):
        rng.random(3, out=np.empty(3))
    with pytest.raises(AttributeError, match="integers.*default_rng"):
        rng.integers(3)
    with pytest.raises(TypeError, match="not another generator"):
        la.random.default_rng(np.random.default_rng(0), fused=True)
    assert rng.draws == 0       # nothing was drawn by a call that raised


def test_jit_runs_a_drawing_function_plainly_with_new_draws():
    rng = la.random.default_rng(0, fused=True)

    @la.jit
    def f(x):
        return x + rng.random(x.shape)

    x = la.zeros(4)
    with pytest.warns(la.JitWarning, match="fused random numbers"):
        first = np.asarray(f(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", la.JitWarning)
        second = np.asarray(f(x))
    np.testing.assert_array_equal(first, _uniform(4, 0, 0))
    np.testing.assert_array_equal(second, _uniform(4, 0, 2))


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_cuda_draws_the_cpu_numbers():
    """The cuda kernels compute the same bits: uniforms bit for bit (and through views),
    normals within the ulps of the device's log/cos/sqrt."""
    with la.config(device="cuda"):
        rng = la.random.default_rng(13, fused=True)
        u = rng.random((64, 33))
        u32 = rng.random(100, dtype=la.float32)
        z = rng.standard_normal(257)
        view = la.random.default_rng(13, fused=True).random((64, 33))[::-3, 1:].T * 1
        pi = 4 * float(la.mean(rng.random(5000) ** 2 + rng.random(5000) ** 2 < 1))
        # a thread's two adjacent numbers: one Philox block when the first counter is even,
        # two blocks when it is odd (a slice from 1), and the tail element alone (odd n)
        odd = la.random.default_rng(13, fused=True).random(1001)[1:] * 1
        even = la.random.default_rng(13, fused=True).random(1001) * 1
        assert u.device == "cuda"
        got_u, got_u32, got_z, got_view = (np.asarray(la.asarray(a, device="cpu"))
                                           for a in (u, u32, z, view))
    want = _uniform(64 * 33, 13, 0).reshape(64, 33)
    np.testing.assert_array_equal(got_u, want)
    np.testing.assert_array_equal(got_view, want[::-3, 1:].T)
    np.testing.assert_array_equal(got_u32, _uniform(100, 13, 2, np.float32))
    np.testing.assert_array_equal(np.asarray(la.asarray(even, device="cpu")), _uniform(1001, 13, 0))
    np.testing.assert_array_equal(np.asarray(la.asarray(odd, device="cpu")), _uniform(1001, 13, 0)[1:])
    u1, u2 = _uniform(257, 13, 4), _uniform(257, 13, 5)
    np.testing.assert_allclose(got_z, np.sqrt(-2 * np.log1p(-u1)) * np.cos(2 * np.pi * u2), rtol=1e-12)
    a, b = _uniform(5000, 13, 6), _uniform(5000, 13, 8)
    assert pi == 4 * float(np.mean(a ** 2 + b ** 2 < 1))


def test_eager_mode_computes_a_draw_at_once_with_the_fused_kernel(monkeypatch):
    """In eager mode a draw is computed when written (as NumPy's), by the device's fused
    kernel: not by the op-by-op backend, which would write the counters to memory first."""
    from lazyarr._counters import CounterMap

    def no_counters(self, xp=np):
        raise AssertionError("the draw's counters were written to memory")

    monkeypatch.setattr(CounterMap, "values", no_counters)
    with la.config(mode="eager"):
        u = la.random.default_rng(6, fused=True).random(100)
        assert u._node.data is not None
        got = np.asarray(u * 2)
    np.testing.assert_array_equal(got, _uniform(100, 6, 0) * 2)


def test_zero_d_empty_and_pickled_generators():
    import pickle

    rng = la.random.default_rng(8, fused=True)
    zero_d = rng.random(())                 # size=() is a 0-d array, as NumPy's
    assert zero_d.shape == () and float(zero_d) == _uniform(1, 8, 0)[0]
    assert np.asarray(rng.random((0, 3))).shape == (0, 3)
    assert float(la.sum(rng.standard_normal((2, 0)))) == 0.0
    copy = pickle.loads(pickle.dumps(rng))  # the stream goes on where it was
    np.testing.assert_array_equal(np.asarray(copy.random(5)), np.asarray(rng.random(5)))
    np.testing.assert_array_equal(np.asarray(copy.random(5)), _uniform(5, 8, 2 * copy.draws - 2))
