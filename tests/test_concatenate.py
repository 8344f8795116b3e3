"""lazyarr/_functions/_joining.py: concatenate (concat), stack, hstack, vstack, dstack and
column_stack against NumPy 2 (values, dtypes, shapes, exception types and messages), on
computed, pending, view, broadcast and host operands, in both modes; the result is new memory,
and a pending operand whose part is contiguous is computed straight into it."""
from __future__ import annotations

import itertools
import tracemalloc
import warnings

import numpy as np
import pytest
from helpers import DTYPES, SIM_DTYPES, assert_same, pending, random_array

import lazyarr as la
from lazyarr._functions import _joining


def _same(got, want):
    assert isinstance(got, la.LazyArray)
    assert_same(np.asarray(got), want)


def _forms(a):
    """``a`` as a computed LazyArray, a pending one, and a view of a pending one."""
    big = np.concatenate([a, a], axis=0) if a.ndim else a
    return [la.asarray(a), pending(a), pending(big)[:a.shape[0]] if a.ndim else pending(a)]


def _outcome(fn):
    """What ``fn()`` gives: ("ok", array) or (exception type, message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        warnings.simplefilter("ignore", RuntimeWarning)      # casts out of range, as NumPy's
        try:
            return "ok", np.asarray(fn())
        except Exception as exc:   # noqa: BLE001 - NumPy's exception is the expectation
            return type(exc), str(exc)


def _as_numpy(obj):
    if isinstance(obj, la.LazyArray):
        return obj.to_numpy()
    if isinstance(obj, (list, tuple)):
        return type(obj)(_as_numpy(o) for o in obj)
    return obj


def _like_numpy(call, *operands, **kwargs):
    """``call(la, ...)`` gives NumPy's outcome: the same array, or the same exception."""
    want = _outcome(lambda: call(np, *[_as_numpy(o) for o in operands], **kwargs))
    got = _outcome(lambda: call(la, *operands, **kwargs))
    assert got[0] == want[0], (got, want)
    if want[0] == "ok":
        assert_same(got[1], want[1])
    else:
        assert got[1] == want[1]


# ----------------------------------------------------------------------------- values and dtypes
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_every_axis(dtype, mode, rng):
    a, b = random_array(rng, dtype, (3, 4)), random_array(rng, dtype, (2, 4))
    c = random_array(rng, dtype, (3, 2))
    for x, y, z in itertools.product(_forms(a), _forms(b), _forms(c)):
        _same(la.concatenate([x, y]), np.concatenate([a, b]))
        _same(la.concatenate((x, y, x), axis=-2), np.concatenate([a, b, a], axis=-2))
        _same(la.concatenate([x, z], axis=1), np.concatenate([a, c], axis=1))
        _same(la.concatenate([z, x, z], axis=-1), np.concatenate([c, a, c], axis=-1))
        _same(la.concatenate([x, y, z], axis=None), np.concatenate([a, b, c], axis=None))
        _same(np.concatenate([x, y]), np.concatenate([a, b]))     # numpy.concatenate(lazy): ours
        _same(la.concat([x, y], axis=0), np.concat([a, b], axis=0))


def test_mixed_dtypes(mode, rng):
    for d1, d2 in itertools.product(DTYPES, repeat=2):
        a, b = random_array(rng, d1, (2, 3)), random_array(rng, d2, (1, 3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for x, y in ((la.asarray(a), pending(b)), (pending(a), la.asarray(b))):
                _same(la.concatenate([x, y]), np.concatenate([a, b]))
                _same(la.concatenate([y, x], axis=None), np.concatenate([b, a], axis=None))
                _same(la.stack([x[0], y[0]], axis=1), np.stack([a[0], b[0]], axis=1))


def test_higher_dims_and_leading_ones(mode, rng):
    """Joining along a later axis after leading dims of 1: each part is contiguous too."""
    a, b = rng.standard_normal((1, 1, 3, 4)), rng.standard_normal((1, 1, 2, 4))
    for x, y in itertools.product(_forms(a), _forms(b)):
        _same(la.concatenate([x * 2, y], axis=2), np.concatenate([a * 2, b], axis=2))
    c = rng.standard_normal((2, 3, 4, 5))
    for axis in range(-4, 4):
        _same(la.concatenate([pending(c), la.asarray(c) + 1], axis=axis),
              np.concatenate([c, c + 1], axis=axis))


def test_views_broadcasts_and_host_operands(mode, rng):
    a = rng.standard_normal((4, 5)).astype(np.float32)
    x = la.asarray(a)
    cases = [
        (lambda m, t: m.concatenate([t[::-1], t[:, ::-2] * 0 + t[:, :3]], axis=1), x),
        (lambda m, t: m.concatenate([t[::-1, ::-1], (t * 2)[::-2]]), x),
        (lambda m, t: m.concatenate([m.broadcast_to(t[0], (3, 5)), t]), x),
        (lambda m, t: m.concatenate([m.broadcast_to(t[:, :1] + 1, (4, 3)), t], axis=1), x),
        (lambda m, t: m.concatenate([t, a, [[1.0] * 5]]), x),
        (lambda m, t: m.concatenate([[[1, 2, 3, 4, 5]], t * 2], axis=0), x),
        (lambda m, t: m.concatenate([t[0], np.float32(2), 3.0, 7, [1j]], axis=None), x),
        (lambda m, t: m.concatenate([t.astype(np.int8), 300, True], axis=None), x),
        (lambda m, t: m.concatenate([t.astype(np.float16), 1.5, 2], axis=None), x),
        (lambda m, t: m.concatenate([1, 2.5], axis=None), x),
        (lambda m, t: m.concatenate([t[0, 0], t[1, 1] * 2, t], axis=None), x),
        (lambda m, t: m.concatenate([t.T, t.T[::-1] * 2], axis=-1), x),
    ]
    for call, t in cases:
        _like_numpy(call, t)


def test_empty_parts(mode):
    e, f = np.zeros((0, 3), np.float32), np.arange(6, dtype=np.int16).reshape(2, 3)
    for x in (la.asarray(e), pending(e)):
        for y in _forms(f):
            _same(la.concatenate([x, y, x]), np.concatenate([e, f, e]))
            _same(la.concatenate([x, x]), np.concatenate([e, e]))
            _same(la.concatenate([x, y], axis=None), np.concatenate([e, f], axis=None))
            _same(la.concatenate([y[:, :0], y], axis=1), np.concatenate([f[:, :0], f], axis=1))
            _same(la.stack([x, x], axis=2), np.stack([e, e], axis=2))
            _same(la.vstack([x, y]), np.vstack([e, f]))


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_dtype_and_casting(casting, mode, rng):
    for d1, d2 in [("int8", "int16"), ("float32", "float64"), ("float64", "int32"),
                   ("complex64", "float32"), ("uint8", "bool"), ("int64", "float16")]:
        a = random_array(rng, np.dtype(d1), (2, 3))
        for x in (la.asarray(a), pending(a)):
            for dtype in (None, d2):
                _like_numpy(lambda m, t: m.concatenate([t, t * 1], dtype=dtype, casting=casting), x)
                _like_numpy(lambda m, t: m.stack([t, t], axis=1, dtype=dtype, casting=casting), x)
                _like_numpy(lambda m, t: m.hstack([t, t], dtype=dtype, casting=casting), x)
                _like_numpy(lambda m, t: m.vstack([t, t[0]], dtype=dtype, casting=casting), x)
    i8 = la.asarray(np.array([1, 2], np.int8))
    for values in ([i8, 300], [i8, 1.5], [i8, 2j], [1.5, 2]):
        for dtype in (None, "int8", "float32", "bool", "complex64"):
            _like_numpy(lambda m, *v: m.concatenate(list(v), axis=None, dtype=dtype,
                                                    casting=casting), *values)


def test_errors_are_numpys(mode):
    a2, b2 = la.asarray(np.zeros((2, 3))), la.asarray(np.zeros((2, 2)))
    a1, z = la.asarray(np.zeros(3, np.float32)), la.asarray(np.float32(1))
    p = a2 * 2
    cases = [
        lambda m, x, y, v, s: m.concatenate([]),
        lambda m, x, y, v, s: m.concatenate(()),
        lambda m, x, y, v, s: m.concatenate([s, s]),
        lambda m, x, y, v, s: m.concatenate([v, s]),
        lambda m, x, y, v, s: m.concatenate([v, 1.0]),
        lambda m, x, y, v, s: m.concatenate([x, v]),
        lambda m, x, y, v, s: m.concatenate([x, y]),
        lambda m, x, y, v, s: m.concatenate([x, x, y, y]),
        lambda m, x, y, v, s: m.concatenate([x, y], axis=2),
        lambda m, x, y, v, s: m.concatenate([x, y], axis=-3),
        lambda m, x, y, v, s: m.concatenate([x], axis=1.0),
        lambda m, x, y, v, s: m.concatenate([x], axis=True),
        lambda m, x, y, v, s: m.concatenate([x], axis="0"),
        lambda m, x, y, v, s: m.concatenate([x, v], casting="bogus"),
        lambda m, x, y, v, s: m.concatenate([x, x], dtype="int32"),
        lambda m, x, y, v, s: m.concatenate([x, x], out=x, dtype=float),
        lambda m, x, y, v, s: m.concatenate(v[0]),
        lambda m, x, y, v, s: m.stack([]),
        lambda m, x, y, v, s: m.stack([x, y]),
        lambda m, x, y, v, s: m.stack([x, x], axis=3),
        lambda m, x, y, v, s: m.stack([x, x], axis=-4),
        lambda m, x, y, v, s: m.stack((t for t in [x, x])),
        lambda m, x, y, v, s: m.hstack((t for t in [x, x])),
        lambda m, x, y, v, s: m.hstack([]),
        lambda m, x, y, v, s: m.vstack([x, v]),
        lambda m, x, y, v, s: m.dstack([]),
        lambda m, x, y, v, s: m.dstack([x, v]),
        lambda m, x, y, v, s: m.column_stack([]),
        lambda m, x, y, v, s: m.column_stack([x, v]),
        lambda m, x, y, v, s: m.hstack([x, v], casting="safe", dtype=np.int8),
    ]
    for i, call in enumerate(cases):
        for x in (a2, p):
            _like_numpy(call, x, b2, a1, z)


def test_the_stacks(mode, rng):
    shapes = [(), (3,), (2, 3), (2, 3, 2)]
    for shape in shapes:
        a = rng.standard_normal(shape)
        for x in _forms(a):
            y = x * 2
            for axis in range(-len(shape) - 1, len(shape) + 1):
                _same(la.stack([x, y, x], axis=axis), np.stack([a, a * 2, a], axis=axis))
            for name in ("hstack", "vstack", "dstack", "column_stack"):
                if name == "column_stack" and len(shape) > 2:
                    continue
                want = getattr(np, name)([a, a * 2])
                _same(getattr(la, name)([x, y]), want)
                _same(getattr(la, name)((x,)), getattr(np, name)((a,)))
                _same(getattr(np, name)([x, y]), want)          # numpy.<name>(lazy): ours
    _like_numpy(lambda m: m.hstack([1, 2.0]))
    _like_numpy(lambda m: m.stack([1, 2]))
    _like_numpy(lambda m: m.vstack([[1, 2], np.array([3, 4], np.int8)]))
    _like_numpy(lambda m: m.column_stack([[1, 2], [[3], [4]]]))


# ----------------------------------------------------------------------------- memory
def test_the_result_is_new_memory(mode, rng):
    a = rng.standard_normal((3, 4))
    for x in _forms(a):
        for joined in (la.concatenate([x]), la.concatenate([x], axis=None), la.stack([x]),
                       la.concatenate([x, x], axis=1), la.vstack([x]), la.hstack([x])):
            joined[...] = -1.0
            assert_same(np.asarray(x), a)
            assert float(la.sum(joined)) == -joined.size
    x = la.asarray(a)
    joined = np.concatenate([x, x])
    assert not np.may_share_memory(np.asarray(joined), a)


def test_out_writes_into_the_lazyarray(mode, rng):
    a = rng.standard_normal((2, 3))
    z = la.zeros((4, 3))
    view = z[2:]
    got = la.concatenate([la.asarray(a) * 2, a], out=z)
    assert got is z
    assert_same(np.asarray(view), a)
    assert_same(np.asarray(z), np.concatenate([a * 2, a]))
    z2 = la.zeros((2, 2, 3))
    assert la.stack([la.asarray(a), a], out=z2) is z2
    assert_same(np.asarray(z2), np.stack([a, a]))


def test_pending_parts_go_straight_into_the_result(monkeypatch):
    """In lazy mode on the cpu backend, a pending operand whose part is contiguous is computed
    by its kernel directly into the result: ``materialize_into`` accepts it, the operand stays
    pending (it was not computed into memory of its own), and no temporary the size of an
    operand is allocated (tracemalloc sees NumPy's allocations)."""
    if "cpu-fused" not in la.backends.available():
        pytest.skip("the fused CPU backend is not built")
    calls = []
    real = _joining.materialize_into

    def spy(node, out):
        done = real(node, out)
        calls.append((out.shape, done))
        return done
    monkeypatch.setattr(_joining, "materialize_into", spy)
    n = 1 << 20
    a = la.asarray(np.arange(n, dtype=np.float64))
    with la.config(mode="lazy", device="cpu"):
        x, y = la.sqrt(a) + 1, a * 2
        x8 = x.astype(np.float32)
        tracemalloc.start()
        out = la.concatenate([x, y])
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert calls == [((n,), True), ((n,), True)]
        assert not x.is_materialized and not y.is_materialized
        assert peak < 2 * n * 8 + n * 8 // 2          # the result, no operand-sized temporary
        want = np.concatenate([np.sqrt(np.arange(n)) + 1, np.arange(n) * 2.0])
        np.testing.assert_array_equal(out.to_numpy(), want)
        calls.clear()
        want8 = np.concatenate([(np.sqrt(np.arange(n)) + 1).astype(np.float32), np.arange(n) * 2.0])
        np.testing.assert_array_equal(la.concatenate([x8, y], axis=None).to_numpy(), want8)  # cast fused
        assert [c[1] for c in calls] == [True, True]
        calls.clear()
        s = la.stack([x, y])                  # stack along axis 0, vstack: rows
        v = la.vstack([x, y])
        assert [c[1] for c in calls] == [True] * 4
        np.testing.assert_array_equal(s.to_numpy(), want.reshape(2, n))
        np.testing.assert_array_equal(v.to_numpy(), want.reshape(2, n))
        calls.clear()
        c = la.stack([x, y], axis=1)          # columns: not contiguous, computed then copied
        assert calls == []
        np.testing.assert_array_equal(c.to_numpy(), want.reshape(2, n).T)
        assert x.is_materialized


def test_native_not_the_fallback():
    x = la.asarray([1.0, 2.0])
    with la.config(fallback="error"):
        for fn in (lambda m: m.concatenate([x, x * 2]), lambda m: m.stack([x, x]),
                   lambda m: m.hstack([x, x]), lambda m: m.vstack([x, x]),
                   lambda m: m.dstack([x, x]), lambda m: m.column_stack([x, x]),
                   lambda m: m.concat([x, x])):
            assert isinstance(fn(la), la.LazyArray) and isinstance(fn(np), la.LazyArray)
        with pytest.raises(la.FallbackError):
            la.concatenate([x], out=la.zeros(2))      # out=: NumPy's call


def test_under_jit_and_explain():
    @la.jit
    def joined(a, b):
        return la.concatenate([a * 2, b]) + 1

    with warnings.catch_warnings():
        warnings.simplefilter("error", la.JitWarning)       # traced and replayed, not plain
        for k in range(3):
            a, b = np.arange(4.0) + k, np.arange(3.0) * k
            np.testing.assert_array_equal(joined(la.asarray(a), la.asarray(b)).to_numpy(),
                                          np.concatenate([a * 2, b]) + 1)
    x = la.asarray(np.arange(4.0))
    with la.config(mode="lazy", device="cpu"):
        assert "multiply" in la.explain(lambda: la.concatenate([x * 2, x])).kernels[0].source


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_on_cuda():
    """On cuda the parts are copied in (CuPy's assignment; the backend has no ``run_into``):
    NumPy's values, the result on cuda, new memory; mixing devices is lazyarr's error."""
    rng = np.random.default_rng(3)
    for dtype in SIM_DTYPES:
        a, b = random_array(rng, dtype, (3, 4)), random_array(rng, dtype, (3, 2))
        x, y = la.asarray(a, device="cuda"), la.asarray(b, device="cuda")
        px, py = (la.where(la.ones(t.shape, bool, device="cuda"), t, t) for t in (x, y))  # pending
        for got, want in ((la.concatenate([x, px]), np.concatenate([a, a])),
                          (la.concatenate([x, py[:, ::-1]], axis=1),
                           np.concatenate([a, b[:, ::-1]], axis=1)),
                          (la.concatenate([px, y], axis=None), np.concatenate([a, b], axis=None)),
                          (la.stack([px, x], axis=1), np.stack([a, a], axis=1)),
                          (la.vstack([x, px[0]]), np.vstack([a, a[0]]))):
            assert got.device == "cuda"
            assert_same(got.to_numpy(), want)
    x = la.asarray(np.arange(4.0), device="cuda")
    mixed = la.concatenate([x.astype(np.float32), x * 2, 3], axis=None)
    assert mixed.device == "cuda"
    assert_same(mixed.to_numpy(), np.concatenate([np.arange(4.0, dtype=np.float32),
                                                  np.arange(4.0) * 2, 3], axis=None))
    joined = la.concatenate([x])
    joined[...] = 7.0
    assert_same(x.to_numpy(), np.arange(4.0))
    with pytest.raises(ValueError, match="different devices"):
        la.concatenate([x, la.asarray(np.arange(4.0), device="cpu")])
    with pytest.raises(ValueError, match="host"):
        la.concatenate([x, np.arange(4.0)])
