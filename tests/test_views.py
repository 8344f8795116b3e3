"""Basic indexing of pending expressions: views pushed down to the inputs, fused into one
kernel, with NumPy's values and aliasing (lazyarr/_views.py)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from helpers import DTYPES, GPU_DTYPES, assert_same, pending, random_array

import lazyarr as la
from lazyarr import _views

KEYS = [0, -1, slice(None), slice(1, -1), slice(None, None, -1), slice(5, 0, -2), (Ellipsis, 1),
        (1, slice(None, None, 3)), (slice(None), None, slice(1, None)), (None, Ellipsis), (),
        (slice(2, 2), slice(None)), (-2, -3)]


def _launches(fn):
    return len(la.explain(fn).kernels)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_views_of_pending_expressions_match_numpy(dtype, key, mode, rng):
    a = random_array(rng, dtype, (6, 5))
    b = random_array(rng, dtype, (5,))                 # broadcast along the rows
    with np.errstate(all="ignore"):
        want = np.maximum(a, b)[key]
        got = la.maximum(la.asarray(a), la.asarray(b))[key]
    assert got.shape == want.shape
    assert_same(np.asarray(got), want)


def test_a_stencil_on_a_pending_array_is_one_kernel():
    w = np.random.default_rng(0).random((64, 48))
    u = la.sqrt(la.asarray(w))
    v = 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    assert not u.is_materialized and not v.is_materialized
    assert _launches(lambda: v.sum()) == 1
    un = np.sqrt(w)
    want = 0.2 * (un[1:-1, 1:-1] + un[:-2, 1:-1] + un[2:, 1:-1] + un[1:-1, :-2] + un[1:-1, 2:])
    np.testing.assert_allclose(np.asarray(v), want, rtol=1e-15)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(
    not la.cuda_available(), reason="needs a cuda device")])])
def test_views_of_a_pending_array_are_pushed_down_on_either_path(device):
    """A basic index of a pending elementwise array goes down to its inputs, whether the
    compiled slot does it (plain keys) or the Python method (a broadcast operand, an
    np.int64 bound, a key seen for the first time): the same values, nothing computed, and
    the store rule counts both."""
    rng = np.random.default_rng(3)
    a, b, row = rng.random((6, 7)), rng.random((6, 7)), rng.random(7)
    keys = [(slice(1, -1), slice(None, None, -2)), 2, (None, Ellipsis, 3), (slice(None), None),
            (Ellipsis,), (slice(np.int64(1), None),), (-1, slice(2, 5))]
    with la.config(device=device):
        for key in keys:
            for u, un in ((la.sqrt(la.asarray(a)) * la.asarray(b), np.sqrt(a) * b),
                          (la.asarray(a) + la.asarray(row), a + row)):      # (broadcast)
                v = u[key]
                assert not u.is_materialized and not v.is_materialized
                assert _views.views_taken(u) == 1
                np.testing.assert_array_equal(np.asarray(v.compute()), un[key])
        u = la.sqrt(la.asarray(a))
        with pytest.raises(IndexError):
            u[6]
        with pytest.raises(IndexError):
            u[:, 7:, 1]


def test_repeated_stencils_store_instead_of_recomputing():
    """k steps of a 3-point stencil: pushing every view down would read 3^k inputs; the
    store rule computes an array once its expression reads too many inputs."""
    a = np.random.default_rng(1).random(200)
    x, xn = la.asarray(a) * 1.0, a * 1.0
    for _ in range(12):
        x = (x[:-2] + x[1:-1] + x[2:]) / 3
        xn = (xn[:-2] + xn[1:-1] + xn[2:]) / 3
        assert x.is_materialized or len(x._node.leaves) <= 3 * _views.MAX_PUSHED_LEAVES
    np.testing.assert_allclose(np.asarray(x), xn, rtol=1e-13)


def test_a_loop_over_elements_computes_the_array_once():
    x = la.asarray(np.arange(40.0)) * 2
    total = 0.0
    for i in range(40):
        total += float(x[i])
    assert total == float(np.sum(np.arange(40.0) * 2))
    assert x.is_materialized                          # stored after MAX_PUSHED_VIEWS views


def test_bad_indices_raise_at_the_line_and_compute_nothing(mode):
    x = la.asarray(np.arange(6.0).reshape(2, 3)) + 1
    for key, exc in ((5, IndexError), ((0, 0, 0), IndexError), (1.5, IndexError),
                     ((Ellipsis, Ellipsis), IndexError)):
        with pytest.raises(exc):
            np.arange(6.0).reshape(2, 3)[key]
        with pytest.raises(exc):
            x[key]
    assert not x.is_materialized or la.get_config().mode == "eager"


# ----------------------------------------------------------------------------- aliasing
def test_writes_through_a_pending_view_reach_the_base_and_back():
    w = np.arange(12.0).reshape(3, 4)
    u = la.asarray(w) * 2                             # pending
    row, col = u[1], u[:, ::-1]                       # pushed-down views
    inner = row[1:]                                   # a view of a view
    row[0] = -1.0                                     # a write into a view...
    want = w * 2
    want[1, 0] = -1.0
    assert_same(np.asarray(u), want)                  # ... is in the base
    assert_same(np.asarray(col), want[:, ::-1])
    u[1, 2] = 50.0                                    # a write into the base ...
    want[1, 2] = 50.0
    assert_same(np.asarray(inner), want[1, 1:])       # ... is in the views of views


def test_inplace_on_a_pending_array_with_views_writes_its_memory():
    u = la.asarray(np.arange(4.0)) + 1
    tail = u[2:]
    before = tail * 10                                # pending, read before the write
    u += 100
    assert_same(np.asarray(tail), np.array([103.0, 104.0]))
    assert_same(np.asarray(before), np.array([30.0, 40.0]))


def test_equal_expressions_are_not_aliases_through_views():
    w = la.asarray(np.arange(5.0))
    u, u2 = la.sqrt(w), la.sqrt(w)                    # one interned node
    view = u2[1:]
    u2[1] = -7.0
    assert float(view[0]) == -7.0
    np.testing.assert_array_equal(np.asarray(u), np.sqrt(np.arange(5.0)))


# ----------------------------------------------------------------------------- cuda
@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
@pytest.mark.parametrize("dtype", GPU_DTYPES, ids=str)
def test_views_of_pending_expressions_on_cuda(dtype, rng):
    a = random_array(rng, dtype, (6, 5))
    with la.config(device="cuda", mode="lazy"), np.errstate(all="ignore"):
        x = la.asarray(a)
        y = (x * x)[::-1, 1:]
        s = y[1:, :-1] + y[:-1, 1:]
        want = (a * a)[::-1, 1:]
        assert_same(np.asarray(s), want[1:, :-1] + want[:-1, 1:])
        assert _launches(lambda: s.sum()) == 1


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
def test_views_of_an_owned_gpu_input_match_numpy_and_raise_its_errors(rng):
    """A basic index of a computed cuda array whose memory it owns (the compiled getitem's
    path: CuPy's view, no claim or anchor) gives NumPy's view, shares memory with later
    writes, and a bad key raises NumPy's exception with NumPy's message."""
    a = rng.standard_normal((5, 4)).astype(np.float32)
    with la.config(device="cuda"):
        x = la.asarray(a.copy())
        first = x[1:]                                   # claims x's memory
        for key in [(slice(None, None, -2),), (1, slice(None)), (None, 2), (Ellipsis, 3),
                    (slice(1, 4), slice(None, None, -1)), ()]:
            assert_same(np.asarray(x[key]), a[key])
        view = x[::2, 1:]
        x[0, 1] = 7.0
        assert float(np.asarray(view)[0, 0]) == 7.0 and float(np.asarray(first)[0, 0]) == a[1, 0]
        for key in [(10, slice(None)), (0, 0, 0), (slice(None), 9)]:
            with pytest.raises(IndexError) as got:
                x[key]
            with pytest.raises(IndexError) as want:
                a[key]
            assert str(got.value) == str(want.value)


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
def test_views_kept_on_a_gpu_leaf_alias_as_numpys_views(rng):
    """A basic index of an owned cuda input is made once per key and kept on the leaf
    (``_value_ops.device_view``): two LazyArrays of one key share it, so a write through
    either reaches the base and the other, as two NumPy views of one array do; a key with a
    bound that is not a Python int is indexed as it is (NumPy's error for a float bound);
    a kept view whose shape was changed in place is made again."""
    a = rng.standard_normal((6, 5)).astype(np.float32)
    want = a.copy()
    with la.config(device="cuda"):
        x = la.asarray(a.copy())
        x[0, 0] = 1.0                                   # x owns its memory from here
        want[0, 0] = 1.0
        v, w = x[1:-1, 1:], x[1:-1, 1:]
        assert len(x._node.views) == 1
        v[0, 0] = 5.0
        want[1:-1, 1:][0, 0] = 5.0
        w[1, 2] += 2.0
        want[1:-1, 1:][1, 2] += 2.0
        assert_same(np.asarray(x), want)
        assert_same(np.asarray(v), want[1:-1, 1:])
        assert_same(np.asarray(w), want[1:-1, 1:])
        assert_same(np.asarray(x[np.int64(1):3]), want[1:3])
        assert_same(np.asarray(x[...]), want)
        x[...] = x[...] * 2                             # (a bare ``...``: a kept key too)
        want[...] = want * 2
        assert_same(np.asarray(x), want)
        with pytest.raises(TypeError) as got:
            x[1.0:3]
        with pytest.raises(TypeError) as numpy_error:
            want[1.0:3]
        assert str(got.value) == str(numpy_error.value)
        rows = x[1:-1]
        kept = x._node.views[((1, -1, None), Ellipsis)][0]
        assert kept is rows._node.data
        kept.shape = (kept.size,)                       # (rows are contiguous: allowed)
        assert_same(np.asarray(x[1:-1]), want[1:-1])


# Strided n-d spaces: a flat kernel finds each element's coordinates by a multiply-high and a
# shift per dim (params.fast_divisor, the default), by a division instruction, or carries them
# forward (one division per thread, then digits added with a carry; render._carry_add). Small
# grids make every thread walk several steps, so the carry across rows and the step's own
# digits are exercised.
CARRY_CASES = [
    ("rows shorter than a block", lambda x: x[1:-1, 2:] + x[:-2, :-2], (37, 55)),
    ("rows longer than a block", lambda x: x[:, ::2] * 2, (5, 3001)),
    ("3-d transposed", lambda x: x.transpose(2, 0, 1) + 1, (7, 11, 13)),
    ("4-d of 2s and 3s", lambda x: x[:, ::-1, :, 1:] - x[:, :, :, :-1], (3, 2, 3, 4)),
    ("broadcast column and row", lambda x: x[:, :1] + x[:1, :], (33, 70)),
    ("two stride groups", lambda x: x[:20, ::2] * x[::2, :20] - x[1:21, 1::2], (40, 40)),
]


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
@pytest.mark.parametrize("coords", ["carried", "divided", "magic"])
@pytest.mark.parametrize("threads_per_sm", [256, None], ids=["small-grid", "default-grid"])
@pytest.mark.parametrize("what,call,shape", CARRY_CASES, ids=[c[0] for c in CARRY_CASES])
def test_strided_coordinates_on_cuda(what, call, shape, coords, threads_per_sm, monkeypatch, rng):
    from lazyarr.backends.cuda import backend as cuda_backend
    from lazyarr.backends.cuda import render as R
    from lazyarr.backends.cuda.simulate import BACKEND as SIM

    analyze = R.analyze

    def analyze_as_asked(program, inputs, **kwargs):
        geo = analyze(program, inputs, **kwargs)
        grid = dict(R.GRID_THREADS_PER_SM, map=threads_per_sm, full=threads_per_sm) \
            if threads_per_sm else R.GRID_THREADS_PER_SM
        geo.spec = replace(geo.spec, carry=coords == "carried", threads_per_sm=grid[geo.spec.kind],
                           fastdiv=geo.spec.fastdiv and coords == "magic")
        return geo
    monkeypatch.setattr(R, "analyze", analyze_as_asked)
    for backend in (cuda_backend.BACKEND, SIM):      # kernels cached under the default geometry
        monkeypatch.setattr(backend, "_entries", {})
    a = rng.standard_normal(shape).astype(np.float32)
    with la.config(device="cuda", mode="lazy"):
        y = call(la.asarray(a))
        assert_same(np.asarray(y), call(a))
        np.testing.assert_allclose(float(la.sum(call(la.asarray(a)))), call(a).sum(dtype=np.float64),
                                   rtol=1e-5)
        empty = la.asarray(np.zeros((3, 0, 4), np.float32))
        assert float(la.sum(empty.transpose(2, 0, 1))) == 0.0


# ----------------------------------------------------------------------------- shape functions
SHAPE_CALLS = [
    ("transpose", lambda m, a: m.transpose(a)),
    ("transpose axes", lambda m, a: m.transpose(a, (1, 2, 0))),
    ("permute_dims", lambda m, a: m.permute_dims(a, (2, 0, 1))),
    ("matrix_transpose", lambda m, a: m.matrix_transpose(a)),
    ("swapaxes", lambda m, a: m.swapaxes(a, 0, -1)),
    ("moveaxis", lambda m, a: m.moveaxis(a, 0, -1)),
    ("expand_dims", lambda m, a: m.expand_dims(a, (0, 3))),
    ("squeeze", lambda m, a: m.squeeze(m.expand_dims(a, 1), 1)),
    ("flip", lambda m, a: m.flip(a, (0, 2))),
    ("flip all", lambda m, a: m.flip(a)),
    ("fliplr", lambda m, a: m.fliplr(a)),
    ("flipud", lambda m, a: m.flipud(a)),
    ("broadcast_to", lambda m, a: m.broadcast_to(a[:1], (4, 3, 4))),
    ("reshape", lambda m, a: m.reshape(a, (6, -1))),
    ("ravel", lambda m, a: m.ravel(a)),
    (".T", lambda m, a: a.T),
    (".mT", lambda m, a: a.mT),
    (".reshape", lambda m, a: a.reshape(3, 8)),
    (".transpose", lambda m, a: a.transpose(2, 0, 1)),
    ("view of a view", lambda m, a: m.flip(a.T, 0)[1:, ::-2]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name, call", SHAPE_CALLS, ids=[c[0] for c in SHAPE_CALLS])
def test_shape_functions_match_numpy_on_computed_and_pending(name, call, dtype, mode, rng):
    a = random_array(rng, dtype, (2, 3, 4))
    want = call(np, a)
    for x in (la.asarray(a), pending(a)):
        got = call(la, x)
        assert isinstance(got, la.LazyArray) and got.shape == want.shape
        assert_same(np.asarray(got), want)


def test_numpy_functions_dispatch_to_the_native_views():
    x = la.asarray(np.arange(6.0).reshape(2, 3)) * 2
    t = np.transpose(x)
    assert isinstance(t, la.LazyArray) and not x.is_materialized
    assert_same(np.asarray(np.flip(x, 1)), np.flip(np.arange(6.0).reshape(2, 3) * 2, 1))


def test_a_transposed_pending_array_fuses():
    x = la.asarray(np.arange(12.0).reshape(3, 4)) + 1
    y = x.T * x.T[::-1]
    assert _launches(lambda: y.sum()) == 1 and not x.is_materialized
    xn = np.arange(12.0).reshape(3, 4) + 1
    assert float(y.sum()) == float((xn.T * xn.T[::-1]).sum())


def test_writes_through_shape_views_reach_the_base():
    x = la.asarray(np.zeros((2, 3))) + 0               # pending
    t, f = x.T, la.flip(x, 1)
    t[0, 1] = 5.0                                        # x[1, 0]
    f[0, 0] = 7.0                                        # x[0, 2]
    want = np.zeros((2, 3))
    want[1, 0], want[0, 2] = 5.0, 7.0
    assert_same(np.asarray(x), want)
    r = x.reshape(6)                                     # a view of contiguous memory
    r[1] = -1.0
    assert float(x[0, 1]) == -1.0
    with pytest.raises(ValueError, match="read-only"):
        la.broadcast_to(x[0], (4, 3))[0, 0] = 1.0


@pytest.mark.parametrize("call, exc", [
    (lambda m, a: m.transpose(a, (0, 0, 1)), ValueError),
    (lambda m, a: m.swapaxes(a, 0, 3), np.exceptions.AxisError),
    (lambda m, a: m.squeeze(a, 0), ValueError),
    (lambda m, a: m.reshape(a, (5, 5)), ValueError),
    (lambda m, a: m.broadcast_to(a, (3, 3)), ValueError),
    (lambda m, a: m.expand_dims(a, 5), np.exceptions.AxisError),
])
def test_bad_shape_arguments_raise_numpys_exception_before_computing(call, exc):
    a = np.ones((2, 3, 4))
    with pytest.raises(exc):
        call(np, a)
    x = la.asarray(a) * 2
    with pytest.raises(exc):
        call(la, x)
    assert not x.is_materialized
