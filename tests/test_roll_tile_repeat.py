"""lazyarr/_functions/_repeating.py: tile, repeat and roll against NumPy 2 (values, dtypes,
shapes, exception types and messages) on computed, pending, negative-stride and host inputs,
in both modes; the result is new memory; a pending input and its repetition are one kernel."""
from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest
from helpers import DTYPES, SIM_DTYPES, assert_same, pending, random_array

import lazyarr as la


def _outcome(fn):
    """What ``fn()`` gives: ("ok", array) or (exception type, message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return "ok", np.asarray(fn())
        except Exception as exc:   # noqa: BLE001 - NumPy's exception is the expectation
            return type(exc), str(exc)


def _forms(a):
    """``a`` as a computed LazyArray, a pending one, and (1-d and up) negative-stride views of
    each: pairs (LazyArray, the NumPy array of its values)."""
    forms = [(la.asarray(a), a), (pending(a), a)]
    if a.ndim:
        flipped = np.flip(a)
        forms += [(la.asarray(flipped)[::-1], flipped[::-1]),
                  (pending(flipped)[::-1], flipped[::-1]),
                  (la.asarray(a)[..., ::-1], a[..., ::-1]), (pending(a)[..., ::-1], a[..., ::-1])]
    return forms


def _like_numpy(call, a):
    """``call(la, x)`` gives ``call(np, a)``'s outcome for every form ``x`` of ``a``: the same
    array (a LazyArray), or the same exception and message."""
    for x, a_ in _forms(a):
        want = _outcome(lambda: call(np, a_))
        got = _outcome(lambda: call(la, x))
        assert got[0] == want[0], (got, want)
        if want[0] == "ok":
            assert isinstance(call(la, x), la.LazyArray)
            assert_same(got[1], want[1])
        else:
            assert got[1] == want[1]


SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]

REPEATS = [(2, None), (0, None), (3, 0), (1, 0), (2, -1), ([3], -1), (np.int8(2), 1),
           (True, 0), ([1, 0, 2], 0), ([2, 1, 0, 3], -1), (np.array([1, 2, 0]), 1),
           ([0, 1, 2, 3, 0], None), ("2", None)]
TILES = [2, 0, 1, (), (1,), (2, 1), (1, 3), (2, 0, 1), (1, 1, 1), (3, 1, 2, 2), [2, 2], (0,),
         np.array([2, 3]), np.int16(2)]
ROLLS = [(1, None), (-3, None), (7, None), (2**70, None), ((1, 2), None), (0, None), (1, 0),
         (-1, -1), (13, 1), (0, 1), ((1, 2), (0, 1)), ((2, -1), (1, 1)), (1, (0, -1)),
         (np.int64(-5), 0), (True, -1), ((3, 1, 1), (0, 1, 0))]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_and_form(dtype, mode, rng):
    for shape in SHAPES:
        a = random_array(rng, dtype, shape)
        for reps, axis in REPEATS:
            _like_numpy(lambda m, x: m.repeat(x, reps, axis=axis), a)
        for reps in TILES:
            _like_numpy(lambda m, x: m.tile(x, reps), a)
        for shift, axis in ROLLS:
            _like_numpy(lambda m, x: m.roll(x, shift, axis=axis), a)


def test_errors_are_numpys(mode):
    """NumPy's exception types and messages, before anything is computed."""
    a = np.arange(6.0).reshape(2, 3)
    calls = [lambda m, x: m.repeat(x, -1), lambda m, x: m.repeat(x, 2.0),
             lambda m, x: m.repeat(x, [1, 2]), lambda m, x: m.repeat(x, [1, -2], axis=0),
             lambda m, x: m.repeat(x, [[1, 2]], axis=0), lambda m, x: m.repeat(x, 2, axis=2),
             lambda m, x: m.repeat(x, [], axis=1), lambda m, x: m.repeat(x, None, axis=1),
             lambda m, x: m.repeat(x, 2, axis=1.0), lambda m, x: m.repeat(x, 2**70, axis=1),
             lambda m, x: m.repeat(x, np.array([1, 2, 3], np.uint64), axis=1),
             lambda m, x: m.repeat(x, [1, 2, 3], axis=-3), lambda m, x: m.repeat(x[0, 0, ...], 2, 1),
             lambda m, x: m.repeat(x[0, 0, ...], [1, 2], 0),
             lambda m, x: m.tile(x, -1), lambda m, x: m.tile(x, (2, -1)),
             lambda m, x: m.tile(x, 2.0), lambda m, x: m.tile(x, "ab"),
             lambda m, x: m.tile(x, None), lambda m, x: m.tile(x[:0], -2),
             lambda m, x: m.tile(x[0, :0], -1), lambda m, x: m.tile(x[:0], (2.0, 1)),
             lambda m, x: m.roll(x, 1.5), lambda m, x: m.roll(x, (1, 2), axis=(0, 1, 1)),
             lambda m, x: m.roll(x, [[1]], axis=0), lambda m, x: m.roll(x, 1, axis=2),
             lambda m, x: m.roll(x, 1, axis=1.0), lambda m, x: m.roll(x, None, axis=1),
             lambda m, x: m.roll(x, "1", axis=1), lambda m, x: m.roll(x[0, 0, ...], 1, axis=()),
             lambda m, x: m.roll(x, 1, axis=(0, 5))]
    for call in calls:
        _like_numpy(call, a)
    with la.config(mode="lazy", device="cpu"):
        for call in calls:       # a pending input stays pending: the checks came first
            x = pending(a)
            if _outcome(lambda: call(np, a))[0] != "ok":
                with pytest.raises(Exception):
                    call(la, x)
                assert not x.is_materialized


def test_python_and_host_inputs(mode):
    for call in (lambda m: m.repeat(5, 3), lambda m: m.repeat([[1, 2], [3, 4]], [1, 2], 0),
                 lambda m: m.tile(2.5, (2, 2)), lambda m: m.tile([True, False], 3),
                 lambda m: m.roll([1, 2, 3], 1), lambda m: m.roll(7, 1),
                 lambda m: m.repeat(np.arange(3), la.asarray([1, 0, 2])),
                 lambda m: m.repeat(np.arange(3), la.asarray(2)),
                 lambda m: m.repeat(np.arange(3), pending(np.array([1, 2, 3]))),
                 lambda m: m.tile(np.arange(3), la.asarray([2, 1]))):
        want = call(np)
        got = call(la)
        assert isinstance(got, la.LazyArray)
        assert_same(np.asarray(got), np.asarray(want))
    x = la.asarray(np.arange(4.0))      # numpy.<name>(lazy) is lazyarr's, native
    with la.config(fallback="error"):
        for y in (x, x * 2):                # the method, ndarray.repeat
            assert_same(y.repeat(2).to_numpy(), np.asarray(y).repeat(2))
            assert_same(y.repeat([1, 0, 2, 1], axis=0).to_numpy(),
                        np.asarray(y).repeat([1, 0, 2, 1], axis=0))
        for fn in (lambda m: m.repeat(x, 2), lambda m: m.repeat(x * 2, [1, 2, 0, 1]),
                   lambda m: m.tile(x, (2, 2)), lambda m: m.roll(x * 2, 1),
                   lambda m: m.roll(x.reshape(2, 2), (1, 1), (0, 1))):
            assert isinstance(fn(np), la.LazyArray)
            assert_same(fn(np).to_numpy(), fn(la).to_numpy())


def test_the_result_is_new_memory(mode, rng):
    """Writing into the result leaves the input as it was (NumPy's results are new arrays),
    even where the result has the input's shape (a count of 1, a shift of 0)."""
    a = rng.standard_normal((3, 4))
    calls = [lambda x: la.repeat(x, 1, axis=0), lambda x: la.repeat(x, 1),
             lambda x: la.repeat(x, 3, axis=1), lambda x: la.repeat(x, [1, 1, 1], axis=0),
             lambda x: la.repeat(x[:1, :1], 4, axis=0), lambda x: la.repeat(x[:1, :1], 4),
             lambda x: la.tile(x, 1), lambda x: la.tile(x, (1, 1, 1)), lambda x: la.tile(x, 2),
             lambda x: la.tile(x[:1, :1], (3, 1)), lambda x: la.tile(x[0, 0], ()),
             lambda x: la.roll(x, 0), lambda x: la.roll(x, 4, axis=1), lambda x: la.roll(x, 1),
             lambda x: la.roll(x, 1, axis=0), lambda x: la.roll(x, (1, 1), axis=(0, 1))]
    for call in calls:
        for x, _ in _forms(a)[:2]:
            before = np.array(x.to_numpy())
            out = call(x)
            out[...] = -7.0
            assert_same(x.to_numpy(), before)
            assert bool(la.all(out == -7.0))
            assert not np.shares_memory(np.asarray(out), a)


def test_pending_input_is_one_kernel():
    """In lazy mode a pending elementwise input and its repetition (tile, repeat with one
    count) are one kernel: the input itself stays pending; roll along axis 0 computes each
    part straight into the result."""
    a = np.arange(3 * 2 * 1024.0).reshape(3, 2, 1024)
    with la.config(mode="lazy", device="cpu"):
        for call, want in ((lambda x: la.repeat(x, 2, axis=1), np.repeat((a + 1) * 2, 2, axis=1)),
                           (lambda x: la.repeat(x, 3, axis=0), np.repeat((a + 1) * 2, 3, axis=0)),
                           (lambda x: la.tile(x, (2, 1, 1, 2)), np.tile((a + 1) * 2, (2, 1, 1, 2))),
                           (lambda x: la.tile(x, (3, 1, 1)), np.tile((a + 1) * 2, (3, 1, 1)))):
            x = (la.asarray(a) + 1) * 2
            got = call(x)
            assert not x.is_materialized
            assert_same(got.to_numpy(), want)
        for call, b in ((lambda x: la.repeat(x, 2), a), (lambda x: la.repeat(x, 2, axis=-1), a),
                        (lambda x: la.tile(x, (1, 2)), a[..., :8])):
            x = (la.asarray(b) + 1) * 2     # short runs: x computed, then NumPy's copy
            call(x)
            assert x.is_materialized
        n = 1 << 19
        big = la.asarray(np.arange(n, dtype=np.float64).reshape(256, -1))
        for call in (lambda y: la.tile(y, 2), lambda y: la.repeat(y, 2, axis=0)):
            y = big * 2
            tracemalloc.start()
            out = call(y)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            assert peak < 2 * n * 8 * 1.25       # the result, not a copy of it too
            assert not y.is_materialized and out.size == 2 * n
        x = la.asarray(a) * 2
        assert "multiply" in la.explain(lambda: la.tile(x, 3)).kernels[0].source
        got = la.roll(x, 1, axis=0)
        assert not x.is_materialized
        assert_same(got.to_numpy(), np.roll(a * 2, 1, axis=0))


def test_under_jit():
    @la.jit
    def fn(a):
        return la.tile(a * 2, 2) + la.repeat(a, 2) + la.tile(la.roll(a, 1) + la.roll(a + 1, 3)[::-1], 2)

    with warnings.catch_warnings():
        warnings.simplefilter("error", la.JitWarning)       # traced and replayed
        for k in range(3):
            a = np.arange(4.0) + k
            want = np.tile(a * 2, 2) + np.repeat(a, 2) + np.tile(np.roll(a, 1) + np.roll(a + 1, 3)[::-1], 2)
            assert_same(fn(la.asarray(a)).to_numpy(), want)


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_on_cuda():
    """On cuda: NumPy's values, the result on cuda, new memory."""
    rng = np.random.default_rng(3)
    for dtype in SIM_DTYPES:
        a = random_array(rng, dtype, (3, 4))
        x = la.asarray(a, device="cuda")
        px = la.where(la.ones(x.shape, bool, device="cuda"), x, x)          # pending
        for y in (x, px, px[:, ::-1]):
            b = np.asarray(y.to_numpy())
            for got, want in ((la.repeat(y, 2, axis=1), np.repeat(b, 2, axis=1)),
                              (la.repeat(y, 3), np.repeat(b, 3)),
                              (la.repeat(y, [1, 0, 2], axis=0), np.repeat(b, [1, 0, 2], axis=0)),
                              (la.tile(y, (2, 1, 2)), np.tile(b, (2, 1, 2))),
                              (la.roll(y, 1, axis=0), np.roll(b, 1, axis=0)),
                              (la.roll(y, -1, axis=1), np.roll(b, -1, axis=1)),
                              (la.roll(y, 5), np.roll(b, 5)),
                              (la.roll(y, (1, 2), axis=(0, 1)), np.roll(b, (1, 2), axis=(0, 1)))):
                assert got.device == "cuda"
                assert_same(got.to_numpy(), want)
    x = la.asarray(np.arange(4.0), device="cuda")
    out = la.tile(x, 1)
    out[...] = 7.0
    assert_same(x.to_numpy(), np.arange(4.0))


def test_an_expensive_pending_input_is_computed_once_not_per_copy():
    """The store rule: a repetition evaluates a fused expression once per copy, so an
    expensive one (an exp) is computed first and copied, a cheap one (x * 2) fuses."""
    a = np.random.default_rng(0).random((4, 2048))
    x = la.asarray(a)
    cheap, costly = x * 2, la.exp(x)
    np.testing.assert_array_equal(np.asarray(la.tile(cheap, (1, 2))), np.tile(a * 2, (1, 2)))
    np.testing.assert_array_equal(np.asarray(la.tile(costly, (1, 2))), np.tile(np.exp(a), (1, 2)))
    assert not cheap.is_materialized and costly.is_materialized
    many = x + 1
    np.testing.assert_array_equal(np.asarray(la.tile(many, (1, 20))), np.tile(a + 1, (1, 20)))
    assert many.is_materialized            # 19 extra evaluations of even one add: stored
