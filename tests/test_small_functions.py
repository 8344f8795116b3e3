"""Non-ufunc functions on small computed CPU arrays take fast paths (a loop's ``la.where``,
``la.concatenate``, ``x.T``, ``la.take`` ...; tools/peers/small_functions.py): the joins
(``lazyarr/_functions/_joining.py``, ``_computed``), the fallback's call
(``_fallback._computed_call_buffers``), views of memory an array owns
(``_views.owned_memory``/``owned_view``), ``where`` (``_elementwise._small_where`` and
``_build._where`` at once within ``eager_max_size``), ``tril``/``triu``
(``_materialize.small_computed``), ``repeat`` of one count and the ``*_like`` functions.
These tests run each call with the fast paths on and off (the helpers made to answer None)
and ask for NumPy's results (dtype, shape, bits, memory order), the same aliasing (views of
the same memory, read-only where NumPy's are) and NumPy's exception types; and that pending
or large operands, ``la.explain`` and ``la.jit`` keep the general path."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _fallback, _views
from lazyarr._functions import _building, _elementwise, _joining, _logic

from helpers import assert_same

SMALL = 32768           # the default eager_max_size (the suite runs with 0)


@pytest.fixture(autouse=True)
def _small_on():
    with la.config(eager_max_size=SMALL, device="cpu"):
        yield


def _general(monkeypatch):
    """The fast paths off: every call the general one."""
    monkeypatch.setattr(_joining, "_computed", lambda items: None)
    monkeypatch.setattr(_fallback, "_computed_call_buffers", lambda args, kwargs: None)
    monkeypatch.setattr(_views, "owned_memory", lambda x: None)
    monkeypatch.setattr(_elementwise, "_small_where", lambda c, a, b: None)
    monkeypatch.setattr(_building, "small_computed", lambda node: None)
    monkeypatch.setattr(_logic, "small_computed", lambda node: None)


_rng = np.random.default_rng(7)
X = _rng.standard_normal(64)
Y = _rng.standard_normal(64)
M = _rng.standard_normal((8, 8))
F = np.asfortranarray(_rng.standard_normal((4, 6)))
I = _rng.integers(0, 64, 16)
# values isclose must get right: NaNs, infinities of both signs, equal and near elements
E = np.array([np.nan, np.inf, -np.inf, 1.0, 0.0, -0.0, 1e308, -1e308, 1.0 + 1e-9, 5.0])
E2 = np.array([np.nan, np.inf, np.inf, 1.0, -0.0, 1e-9, -1e308, 1e308, 1.0, np.nan])

#: name: (call of a namespace ``m`` and operands, NumPy operands)
CASES = {
    "where": (lambda m, c, x, y: m.where(c, x, y), (X > 0, X, Y)),
    "where float": (lambda m, c, x: m.where(c, x, 0.0), (X > 0, X)),
    "where float32": (lambda m, c, x: m.where(c, x, 0.5), (X > 0, X.astype(np.float32))),
    "where int": (lambda m, c, x: m.where(c, x, 1.5), (X > 0, I.repeat(4))),
    "where two floats": (lambda m, c: m.where(c, 1.0, -1.0), (X > 0,)),
    "where 1-arg": (lambda m, c: m.where(c), (X > 0,)),
    "concatenate": (lambda m, x, y: m.concatenate([x, y]), (X, Y)),
    "concatenate mixed": (lambda m, x, y: m.concatenate((x, y)), (X, I)),
    "concatenate None": (lambda m, a, b: m.concatenate([a, b], axis=None), (M, F)),
    "concatenate axis": (lambda m, a: m.concatenate([a, a], axis=1), (M,)),
    "stack": (lambda m, x, y: m.stack([x, y], axis=1), (X, Y)),
    "hstack": (lambda m, x, y: m.hstack([x, y]), (X, Y)),
    "vstack": (lambda m, x, y: m.vstack((x, y)), (X, Y)),
    "reshape": (lambda m, x: m.reshape(x, (8, -1)), (X,)),
    "reshape F": (lambda m, x: m.reshape(x, (8, -1), order="F"), (X,)),
    "method reshape": (lambda m, x: x.reshape(4, 16), (X,)),
    "reshape copy": (lambda m, a: a.reshape(-1), (F,)),
    "ravel": (lambda m, a: m.ravel(a), (M,)),
    "ravel F": (lambda m, a: m.ravel(a), (F,)),
    "transpose": (lambda m, a: m.transpose(a), (M,)),
    ".T": (lambda m, a: a.T, (F,)),
    "swapaxes": (lambda m, a: m.swapaxes(a, 0, 1), (M,)),
    "moveaxis": (lambda m, a: m.moveaxis(a, 0, -1), (M,)),
    "expand_dims": (lambda m, x: m.expand_dims(x, 0), (X,)),
    "squeeze": (lambda m, a: m.squeeze(a), (X[:, None],)),
    "flip": (lambda m, x: m.flip(x), (M,)),
    "repeat": (lambda m, x: m.repeat(x, 2), (X,)),
    "repeat axis": (lambda m, a: m.repeat(a, 3, axis=1), (M,)),
    "repeat 0": (lambda m, a: m.repeat(a, 0, axis=0), (M,)),
    "tril": (lambda m, a: m.tril(a), (M,)),
    "triu": (lambda m, a: m.triu(a, 2), (M,)),
    "tril 1-d": (lambda m, x: m.tril(x[:5], -1), (X,)),
    "triu int": (lambda m, a: m.triu(a), (I.reshape(4, 4),)),
    "zeros_like": (lambda m, x: m.zeros_like(x), (X,)),
    "ones_like F": (lambda m, a: m.ones_like(a), (F,)),
    "empty_like": (lambda m, a: m.empty_like(a).shape, (F,)),
    "empty_like F": (lambda m, a: m.empty_like(a).flags.f_contiguous, (F,)),
    "full_like": (lambda m, x: m.full_like(x, 2.5), (I,)),
    "outer": (lambda m, x, y: m.outer(x[:16], y[:8]), (X, Y)),
    "outer 2-d": (lambda m, a, x: m.outer(a, x[:3]), (M, X)),
    "outer bool": (lambda m, x, y: m.outer(x > 0, y > 0), (X, Y)),
    "outer mixed": (lambda m, x, i: m.outer(x[:4], i), (X.astype(np.float32), I)),
    "isclose": (lambda m, x, y: m.isclose(x, y), (X, X + 1e-9)),
    "isclose edges": (lambda m, x, y: m.isclose(x, y), (E, E2)),
    "isclose equal_nan": (lambda m, x, y: m.isclose(x, y, 0.0, 0.5, equal_nan=True), (E, E2)),
    "isclose float32": (lambda m, x, y: m.isclose(x, y), (E.astype(np.float32),
                                                          E2.astype(np.float32))),
    "isclose mixed": (lambda m, x, y: m.isclose(x, y), (E, E2.astype(np.float32))),
    "allclose": (lambda m, x, y: m.allclose(x, y), (X, X * (1 + 1e-7))),
    "allclose not": (lambda m, x, y: m.allclose(x, y, equal_nan=True), (E, E2)),
    "take": (lambda m, x, i: m.take(x, i), (X, I)),
    "take_along_axis": (lambda m, x, i: m.take_along_axis(x, i, axis=0), (X, I)),
    "nonzero": (lambda m, x: m.nonzero(x), (I,)),
}


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    if not isinstance(want, np.ndarray):
        assert got == want
        return
    assert isinstance(got, la.LazyArray) and got.is_materialized
    assert_same(got, want)
    assert got.data.flags.c_contiguous == want.flags.c_contiguous
    assert got.data.flags.f_contiguous == want.flags.f_contiguous


@pytest.mark.parametrize("name", list(CASES))
def test_fast_path_is_numpy_and_the_general_path(name, monkeypatch):
    call, operands = CASES[name]
    want = call(np, *operands)
    _same(call(la, *[la.asarray(a) for a in operands]), want)
    _general(monkeypatch)
    general = call(la, *[la.asarray(a) for a in operands])
    if isinstance(general, la.LazyArray):
        general.compute()
    _same(general, want)


def test_views_stay_views_of_the_same_memory():
    x = la.asarray(M.copy())
    for view in (x.T, la.transpose(x), la.reshape(x, (4, 16)), x.reshape(64), la.ravel(x),
                 la.swapaxes(x, 0, 1), la.expand_dims(x, 0), la.flip(x), x[None].squeeze()):
        assert np.shares_memory(view.data, x.data)
    t = x.T
    t[0, 1] = 99.0                  # a write into the view shows in the base, as NumPy's
    assert float(x[1, 0]) == 99.0
    x[2, 3] = -5.0                  # and the base's in the view
    assert float(t[3, 2]) == -5.0
    r = la.reshape(x, (64,))
    r[0] = 7.0
    assert float(x[0, 0]) == 7.0
    # a copy where NumPy's reshape copies (a Fortran-ordered ravel)
    f = la.asarray(F.copy(order="F"))
    assert not np.shares_memory(la.ravel(f).data, f.data)


def test_views_of_read_only_memory_are_read_only():
    frozen = M.copy()
    frozen.flags.writeable = False
    x = la.asarray(frozen)
    for view in (x.T, la.reshape(x, (64,)), la.flip(x)):
        with pytest.raises(ValueError, match="read-only"):
            view[0] = 1.0


def test_views_of_an_array_with_pushed_down_views_take_the_general_path():
    with la.config(eager_max_size=0):
        pending = la.asarray(M) * 2
        part = pending[1:]                  # pushed down to the inputs: no memory yet
    assert not part.is_materialized
    t = pending.T                           # the base's memory, and its views', made first
    t[0, 1] = 42.0                          # (row 1, column 0): seen by the part's row 0
    assert float(pending[1, 0]) == 42.0
    assert float(part[0, 0]) == 42.0


def test_shared_memory_is_copied_as_the_general_path_copies():
    x = la.asarray(M.copy())
    y = la.asarray(x)               # the same array (asarray of a LazyArray)
    assert y is x
    v = x.T                         # x owns its memory now
    w = la.reshape(v, (64,))        # a copy: the transpose is not C-contiguous
    assert not np.shares_memory(w.data, x.data)
    assert np.shares_memory(v.data, x.data)


@pytest.mark.parametrize("call, exc", [
    (lambda x, a: la.concatenate([x[0], x[1]]), ValueError),          # zero-dimensional
    (lambda x, a: la.concatenate([x, a]), ValueError),                 # dimensions differ
    (lambda x, a: la.concatenate([a, a[:, :3]], axis=0), ValueError),  # sizes differ
    (lambda x, a: la.concatenate([x, x], axis=1), np.exceptions.AxisError),
    (lambda x, a: la.stack([x, x[:3]]), ValueError),
    (lambda x, a: la.stack([x, x], axis=3), np.exceptions.AxisError),
    (lambda x, a: la.vstack([a, x[:5]]), ValueError),
    (lambda x, a: la.hstack([a, x]), ValueError),
    (lambda x, a: la.reshape(x, (5, 5)), ValueError),
    (lambda x, a: x.reshape(7, -1), ValueError),
    (lambda x, a: la.transpose(a, (0, 0)), ValueError),
    (lambda x, a: la.swapaxes(a, 0, 2), np.exceptions.AxisError),
    (lambda x, a: la.squeeze(a, 0), ValueError),
    (lambda x, a: la.repeat(x, -1), ValueError),
    (lambda x, a: la.repeat(a, 2, axis=2), np.exceptions.AxisError),
    (lambda x, a: la.take(x, la.asarray(np.array([100]))), IndexError),
    (lambda x, a: la.where(x > 0, x, a), ValueError),                 # shapes do not broadcast
    (lambda x, a: la.tril(x[0]), TypeError),
])
def test_errors_are_numpys_both_ways(call, exc, monkeypatch):
    x, a = la.asarray(X), la.asarray(M)
    with pytest.raises(exc):
        call(x, a)
    _general(monkeypatch)
    with pytest.raises(exc):
        call(x, a)


def test_pending_and_large_operands_stay_lazy():
    with la.config(eager_max_size=0):
        p = la.asarray(X) * 2
    c = la.asarray(X > 0)
    assert not la.where(c, p, 0.0).is_materialized     # a pending operand: fuses
    with la.config(eager_max_size=0):
        pm = la.asarray(M) * 2
    assert not la.tril(pm).is_materialized
    big = la.asarray(np.ones(SMALL + 1))
    assert not la.where(big > 0, big, 0.0).is_materialized
    assert not la.tril(la.asarray(np.ones((200, 200)))).is_materialized
    with la.config(eager_max_size=0):
        x = la.asarray(X)
        assert not la.where(c, x, 0.0).is_materialized
        assert not la.where(la.asarray(np.ones(0, bool)), la.asarray(np.ones(0)), 1.0) \
            .is_materialized                           # 0 turns it off, also for empty arrays
    assert_same(la.where(c, p, 0.0), np.where(X > 0, X * 2, 0.0))


def test_explain_and_jit_keep_the_general_path():
    x, c = la.asarray(X), la.asarray(X > 0)
    plan = la.explain(lambda: (la.where(c, x, 0.0) * 2).compute())
    assert len(plan.kernels) == 1           # the graph it would build: one fused kernel
    plan = la.explain(lambda: (la.tril(la.reshape(x, (8, 8))) + 1).compute())
    assert len(plan.kernels) == 1

    def step(a, b, i, m):
        joined = la.concatenate([a, b])
        return (la.where(a > 0, a, 0.0) + joined[:64], m.T + 1, la.take(joined, i) * 2,
                la.repeat(b, 2), la.swapaxes(m, 0, 1) - 1)

    jitted = la.jit(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", la.JitWarning)
        for seed in range(3):
            args = (la.asarray(X + seed), la.asarray(Y - seed), la.asarray(I),
                    la.asarray(M * seed))
            for got, want in zip(jitted(*args), step(*args)):
                assert_same(got, want.to_numpy())


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
@pytest.mark.parametrize("name", [n for n in CASES if "like" not in n and n != "nonzero"])
def test_cuda_operands_take_the_general_path(name, monkeypatch):
    """The fast paths are the CPU's: computed cuda operands of every case give NumPy's values
    and stay on cuda, with the fast paths on and off."""
    call, operands = CASES[name]
    want = call(np, *operands)
    for general in (False, True):
        if general:
            _general(monkeypatch)
        with la.config(device="cuda"):
            got = call(la, *[la.asarray(a, device="cuda") for a in operands])
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            if isinstance(w, np.ndarray):
                assert g.device == "cuda"
                assert_same(g.to_numpy(), w)
            else:
                assert g == w
