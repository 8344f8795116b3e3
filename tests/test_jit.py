"""la.jit: a function traced once per signature, its kernels replayed after (lazyarr/_jit.py).

The contract: a replayed call returns what a plain call of the function would, bit for bit;
where a replay could not (a write, a value read into Python, a fallback call, an array that
is not an argument, a result that is not a kernel's), the function runs plainly and a
JitWarning says why, once.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import strategies as S
from helpers import each_same, sim_sized
from hypothesis import given, settings
from test_fuzz import FUZZ

import lazyarr as la


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":     # signed zeros too
        assert np.array_equal(np.signbit(got), np.signbit(want))


def _jitted(fn):
    """``la.jit(fn)`` whose warnings are errors (a test that expects one says so)."""
    return la.jit(fn)


@pytest.fixture(autouse=True)
def _jit_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", la.JitWarning)
        yield


def _data(seed, shape=(64,), dtype=np.float32):
    return la.asarray(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def chain(x, y):
    return la.sum(la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y)


def normalize(y):
    return (y - y.mean()) / y.std()


def stencil(u):
    return 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]) - u[1:-1, 1:-1]


def pushed_views(x, row):
    t = la.exp(x) + row          # a pending expression: its views are pushed to x and row
    return t[1:, ::-1] * t[:-1, :].T.T


@pytest.mark.parametrize("fn, args", [
    (chain, lambda s: (_data(s), _data(s + 100))),
    (chain, lambda s: (_data(s, (8, 16), np.float64), _data(s + 100, (16,), np.float64))),
    (normalize, lambda s: (la.exp(la.sin(_data(s, (300,), np.float64)) * 3),)),
    (stencil, lambda s: (_data(s, (12, 10), np.float64),)),
    (pushed_views, lambda s: (_data(s, (6, 7), np.float64), _data(s + 1, (7,), np.float64))),
    (lambda x: (x > 0).sum(axis=0), lambda s: (_data(s, (5, 6)),)),
    (lambda x: (x.max(axis=1), la.argmin(x, axis=0), x * 2), lambda s: (_data(s, (5, 6)),)),
    (lambda x, n: x.astype(la.int32) * n - 7, lambda s: (_data(s) * 10, np.int64(s))),
    (lambda x, y: la.where(x > y, x, -0.0), lambda s: (_data(s), _data(s + 1))),
])
def test_replay_is_the_plain_call(fn, args):
    jitted = _jitted(fn)
    for seed in range(4):
        a = args(seed)
        each_same(jitted(*a), fn(*a), _same)
    assert jitted.traces >= 1


def test_a_replay_builds_no_node_and_runs_the_recorded_kernels():
    from lazyarr import _node
    jitted = _jitted(chain)
    x, y = _data(0), _data(1)
    jitted(x, y)
    before = len(_node._structures), _node.epoch
    for _ in range(3):
        jitted(x, y)
    assert (len(_node._structures), _node.epoch) == before   # no node built or materialized
    (replay,) = jitted._traces.values()
    assert len(replay.steps) == 1


def test_signatures_retrace_and_python_scalars_are_part_of_them():
    calls = []

    def f(x, c):
        calls.append(c)
        return x * c + 1

    jitted = _jitted(f)
    x = _data(0)
    for c in (2.0, 3.0, 2.0, -0.0, 0.0, 2, True):
        _same(jitted(x, c), x * c + 1)
    assert calls == [2.0, 3.0, -0.0, 0.0, 2, True]     # one trace per value (and type, sign)
    _same(jitted(_data(1, (3, 4)), 2.0), _data(1, (3, 4)) * 2.0 + 1)   # a new shape
    _same(jitted(_data(1, dtype=np.float64), 2.0), _data(1, dtype=np.float64) * 2.0 + 1)
    assert jitted.traces == 8


def test_one_kernel_replays_take_the_compiled_call(monkeypatch):
    """The call of a traced signature whose replay is one kernel, with computed arrays and
    Python numbers as arguments, is replayed by the compiled call slot (``JitBase``,
    ``_value_ops.jit_replay``), which builds the signature key as the Python path does:
    ``Jitted._call`` sees only the calls that trace (a new value, type or sign of a number, an
    array passed twice), keywords, and a trace of several steps."""
    seen = []
    plain = la._jit.Jitted._call

    def counted(self, *args, **kwargs):
        seen.append((args[2:], tuple(kwargs)))
        return plain(self, *args, **kwargs)

    monkeypatch.setattr(la._jit.Jitted, "_call", counted)
    jitted = _jitted(lambda x, y, c, d=None: la.sum(x * c + y) if d is None else x * d)
    x, y = _data(0), _data(1)
    calls = [(x, y, 2.0), (x, y, 2.0), (x, y, -0.0), (x, y, 0.0), (x, y, -0.0), (x, y, 2),
             (x, y, 2), (x, y, True), (x, y, True), (x, x, 2.0), (x, x, 2.0),
             (x, y, float("nan")), (x, y, float("nan")), (x, y, 2.0, None), (x, y, 2.0, None)]
    for args in calls:
        _same(jitted(*args), la.sum(args[0] * args[2] + args[1]))
    traced = [a for a, _ in seen]                # the second call of each: compiled
    assert len(traced) == 8 and np.isnan(traced[6][0])
    assert [repr(a) for a in traced] == [repr(a) for a in [
        (2.0,), (-0.0,), (0.0,), (2,), (True,), (2.0,), (float("nan"),), (2.0, None)]]
    seen.clear()
    _same(jitted(x, y, c=2.0), la.sum(x * 2.0 + y))       # keywords: the Python path
    assert seen == [((), ("c",))]


@pytest.mark.parametrize("reduce", [False, True])
def test_replays_report_floating_point_errors_as_the_plain_call(reduce):
    """A replayed kernel (compiled runners: ``_cpu_vm.BoundElementwise``/``BoundReduction``)
    warns as the plain call does, at the caller's line, and raises under
    ``np.errstate(divide="raise")``; an empty array runs nothing."""
    fn = (lambda x: la.sum(la.log(x))) if reduce else (lambda x: la.log(x) * 2.0)
    jitted = _jitted(fn)
    for x in (la.asarray(np.array([0.0, 1.0, 2.0])), la.asarray(np.array([0.0, 1.0, 2.0])),
              la.asarray(np.zeros(0))):
        for call in (fn, jitted, jitted):
            with warnings.catch_warnings(record=True) as raised:
                warnings.simplefilter("always", RuntimeWarning)
                got = np.asarray(call(x))               # (a plain call computes here)
            assert [(str(w.message), w.filename) for w in raised] == (
                [("divide by zero encountered in log", __file__)] if x.size else [])
            with np.errstate(divide="ignore"):
                _same(got, fn(x))
        if x.size:
            with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
                np.asarray(jitted(x))


def test_replays_of_rows_and_of_arguments_to_prepare():
    """A replayed elementwise kernel that runs row by row (a strided view: the launch's outer
    dims) and one whose arguments need preparing (a misaligned buffer of the traced layout, a
    dtype the kernel casts) give the plain call's values (``_cpu_vm.BoundElementwise``,
    ``_kernel_inputs``)."""
    rng = np.random.default_rng(0)
    x, y = la.asarray(rng.random((8, 1024))), la.asarray(rng.random((8, 512)))
    rows = _jitted(lambda x, y: x[:, ::2] * 2.0 + y)
    for _ in range(3):
        _same(rows(x, y), x[:, ::2] * 2.0 + y)
    mixed = _jitted(lambda a, b: a * 2.0 + b)
    a = rng.random(300).astype(np.float32)
    raw = np.zeros(a.nbytes + 1, np.uint8)
    odd = raw[1:].view(np.float32)                  # the same layout, not aligned
    odd[...] = a
    b = la.asarray(rng.random(300))
    for arg in (la.asarray(a), la.asarray(odd), la.asarray(a)):
        _same(mixed(arg, b), arg * 2.0 + b)


def test_a_0d_argument_varies_without_retracing():
    jitted = _jitted(lambda x, c: x * c)
    x = _data(0)
    for c in (1.5, 2.5, -3.0):
        _same(jitted(x, la.asarray(c)), x * la.asarray(c))
    assert jitted.traces == 1


def test_numpy_arrays_keyword_arguments_and_pending_arguments():
    jitted = _jitted(lambda x, *, y: la.sum(x * y, axis=0))
    xn = np.arange(12.0).reshape(3, 4)
    for k in range(3):
        y = _data(k, (4,), np.float64) * 2       # pending: computed before the call
        _same(jitted(xn + k, y=y), la.sum(la.asarray(xn + k) * y, axis=0))
    assert jitted.traces == 1
    # the same array passed twice is a signature of its own
    f = _jitted(lambda a, b: a - b * 2)
    a, b = _data(0), _data(1)
    _same(f(a, a), a - a * 2)
    _same(f(a, b), a - b * 2)
    _same(f(b, b), b - b * 2)
    assert f.traces == 2


def test_replays_read_the_arguments_current_values_and_return_new_arrays():
    jitted = _jitted(lambda x: x * 2)
    x = la.asarray(np.arange(4.0))
    first = jitted(x)
    x[0] = 10.0                             # a write between calls (NumPy: seen by the next)
    second = jitted(x)
    _same(second, [20.0, 2, 4, 6])
    second[1] = -1                          # results are the caller's own arrays
    _same(first, [0.0, 2, 4, 6])
    _same(jitted(x), [20.0, 2, 4, 6])


def test_results_keep_identity_and_constants():
    def f(x):
        y = x + 1
        return y, y, x.shape[0], None, "tag"

    jitted = _jitted(f)
    for seed in range(3):
        y1, y2, n, none, tag = jitted(_data(seed))
        assert y1 is y2 and n == 64 and none is None and tag == "tag"
        _same(y1, _data(seed) + 1)


@pytest.mark.parametrize("fn, why", [
    (lambda x: x + GLOBAL, "not an argument"),
    (lambda x: x * 2 if float(la.sum(x)) > 0 else x * 3, "values into Python"),
    (lambda x: x * 2 if x[0] > -1 else x * 3, "values into Python"),          # bool()
    (lambda x: x * int(x[3] > -1) + float(x[2]), "values into Python"),      # int(), float()
    (lambda x: x[: la.asarray(np.int64(5))[()]], "values into Python"),      # __index__
    (lambda x: x + la.asarray(np.ones(64)), "not an argument"),
    (lambda x: x * 2 if x.strides[0] > 0 else x, "ndarray.strides returned into Python"),
    (lambda x: x, "a result is an argument"),
    (lambda x: x[1:], "a result is an argument, a view"),
    (lambda x: [x * 2], "it returns a list"),
])
def test_what_cannot_be_replayed_runs_plainly_and_says_why(fn, why):
    jitted = la.jit(fn)
    with pytest.warns(la.JitWarning, match=why):
        first = jitted(_data(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", la.JitWarning)      # said once
        for seed in (1, -1):
            x = _data(seed) if seed > 0 else -abs(_data(5))   # the other branch too
            got, want = jitted(x), fn(x)
            _same(got[0] if isinstance(got, list) else got, want[0] if isinstance(want, list) else want)
    assert jitted.traces == 0
    del first


GLOBAL = _data(7)


def test_writes_cannot_be_replayed_and_happen_every_call():
    def f(x):
        x[1:] += 1.0
        return x * 2

    jitted = la.jit(f)
    x = la.asarray(np.zeros(3))
    with pytest.warns(la.JitWarning, match="writes"):
        jitted(x)
    _same(jitted(x), [0.0, 4, 4])
    _same(x, [0.0, 2, 2])

    def g(x):
        y = x * 1
        y += 1          # a pending y, no view of it: rebound to y + 1 (no write), replayable
        return y

    jitted = _jitted(g)
    for _ in range(2):
        _same(jitted(x), [1.0, 3, 3])
    assert jitted.traces == 1


def test_library_calls_are_steps_of_the_replay():
    def layer(x, w, b):
        return la.sum(la.maximum(x @ w + b, 0), axis=1), la.cumsum(x, axis=0), x.T.dot(x)

    jitted = _jitted(layer)
    for seed in range(3):
        args = (_data(seed, (8, 5), np.float64), _data(seed + 1, (5, 3), np.float64),
                _data(seed + 2, (3,), np.float64))
        for got, want in zip(jitted(*args), layer(*args)):
            _same(got, want)
    assert jitted.traces == 1


def test_random_draws_are_calls_replayed_with_the_generators_state():
    rng, twin = la.random.default_rng(0), la.random.default_rng(0)
    jitted = _jitted(lambda x, g: x + g.random(3))
    plain = lambda x, g: x + g.random(3)          # noqa: E731
    for _ in range(3):      # the same draws as plain calls: the stream advances at each call
        _same(jitted(la.zeros(3), rng), plain(la.zeros(3), twin))
    assert jitted.traces == 1


def test_a_data_dependent_shape_runs_plainly_from_then_on():
    jitted = la.jit(lambda x: la.unique(x) * 2)
    _same(jitted(la.asarray([1.0, 1, 2])), [2.0, 4])
    with pytest.warns(la.JitWarning, match="unique.*other shapes"):
        _same(jitted(la.asarray([1.0, 3, 2])), [2.0, 4, 6])
    _same(jitted(la.asarray([5.0, 5, 5])), [10.0])


def test_errors_are_the_plain_calls_and_leave_no_trace():
    jitted = _jitted(lambda x, y: x + y)
    with pytest.raises(ValueError, match="broadcast"):
        jitted(_data(0, (3,)), _data(1, (4,)))
    assert jitted.traces == 0 and not jitted._traces


def test_eager_mode_explain_and_nesting_run_plainly():
    inner = _jitted(lambda x: x * 2)
    outer = _jitted(lambda x: inner(x) + 1)
    x = _data(0)
    for _ in range(2):
        _same(outer(x), x * 2 + 1)
    assert outer.traces == 1 and inner.traces == 0      # inner ran inside outer's trace
    with la.config(mode="eager"):
        _same(outer(x), x * 2 + 1)
    assert outer.traces == 1
    plan = la.explain(lambda: la.sum(outer(x)))
    assert "sum" in str(plan)


def test_methods_and_metadata():
    class Model:
        def __init__(self, w):
            self.scale = w

        @la.jit
        def forward(self, x):
            """Scale x."""
            return la.tanh(x) * self.scale

    m = Model(3.0)
    for seed in range(2):
        _same(m.forward(_data(seed)), la.tanh(_data(seed)) * 3.0)
    assert Model.forward.__doc__ == "Scale x." and Model.forward.__name__ == "forward"
    assert "jit" in repr(Model.forward)


def test_unhashable_arguments_run_plainly():
    jitted = _jitted(lambda x, opts: x * opts["k"])
    _same(jitted(_data(0), {"k": 2.0}), _data(0) * 2.0)
    assert jitted.traces == 0


def test_too_many_signatures_run_plainly(monkeypatch):
    from lazyarr import _jit
    monkeypatch.setattr(_jit, "MAX_TRACES", 2)
    jitted = la.jit(lambda x, c: x + c)
    x = _data(0)
    jitted(x, 1.0)
    jitted(x, 2.0)
    with pytest.warns(la.JitWarning, match="signatures"):
        _same(jitted(x, 3.0), x + 3.0)
    assert jitted.traces == 2


def _as_function(expr: S.Expr):
    """The expression as a function of its leaves, returning its outputs."""
    def fn(*leaves):
        values = list(leaves)
        for step in expr.steps:
            values.append(S.apply_step(step, values, "lazyarr"))
        return tuple(values[i] for i in expr.outputs)
    return fn


def _outcome(fn, args):
    try:
        return [np.asarray(v) for v in fn(*args)]
    except Exception as exc:  # noqa: BLE001 - compared with the plain call's exception
        return type(exc)


def _leaves(expr, shift):
    out = []
    for leaf in expr.leaves:
        data = dataclasses.replace(leaf, seed=leaf.seed + shift).make()
        out.append(data if isinstance(data, np.generic) else la.asarray(data))
    return out


@settings(FUZZ, max_examples=sim_sized(150, 40))
@given(S.expressions())
def test_fuzz_replay_against_plain_calls(expr):
    fn = _as_function(expr)
    jitted = la.jit(fn)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for shift in (0, 1, 2):     # the trace, then two replays on other data
            got, want = _outcome(jitted, _leaves(expr, shift)), _outcome(fn, _leaves(expr, shift))
            if isinstance(want, type):
                assert got is want, (got, want, expr)
                continue
            assert not isinstance(got, type), (got, want, expr)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape, expr
                assert np.array_equal(g, w, equal_nan=g.dtype.kind in "fc"), expr


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_replay_on_cuda():
    jitted = _jitted(chain)
    with la.config(device="cuda"):
        for seed in range(3):
            x = la.asarray(np.random.default_rng(seed).random(4096).astype(np.float32))
            y = la.asarray(np.random.default_rng(seed + 9).random(4096).astype(np.float32))
            got, want = jitted(x, y), chain(x, y)
            assert got.device == "cuda"
            _same(got.to_numpy(), want.to_numpy())
        st = _jitted(stencil)
        u = la.asarray(np.random.default_rng(3).random((40, 30)))
        for _ in range(2):
            _same(st(u).to_numpy(), stencil(u).to_numpy())
    assert jitted.traces == 1 and st.traces == 1


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_cuda_replays_launch_their_kernel_without_run(monkeypatch):
    """A replayed step on cuda is the backend's bound runner (``CudaBackend.bind``): the
    kernel's entry found once, each call filling in its buffers, no ``run``. A map, a full
    reduction (its scratch) and a scalar operand; then a call under another floating-point
    error state, which runs ``run`` (the entry's kernel checks flags or not) and warns as a
    plain call does."""
    from lazyarr.backends.cuda import backend as cuda_backend
    cls = cuda_backend.CudaBackend
    runs = []
    real_run = cls.run

    def run(self, lowered):
        runs.append(lowered.program.root.op)
        return real_run(self, lowered)

    def fn(x, y):
        return la.log(x * 2.5 + y), la.sum(abs(x - 0.5) * y)

    jitted = _jitted(fn)
    with la.config(device="cuda", compile="wait"):    # (the trace's call waits for its kernels)
        data = [(la.asarray(np.random.default_rng(s).random(300).astype(np.float32) + 0.1),
                 la.asarray(np.random.default_rng(s + 7).random(300).astype(np.float32)))
                for s in range(3)]
        wants = [[w.to_numpy() for w in fn(x, y)] for x, y in data]    # (plain calls)
        jitted(*data[0])                         # the trace
        monkeypatch.setattr(cls, "run", run)
        for (x, y), want in zip(data[1:], wants[1:]):
            for g, w in zip(jitted(x, y), want):
                _same(g.to_numpy(), w)
        assert jitted.traces == 1
        replayed = len(runs)
        x, y = data[1]
        zero = la.asarray(np.zeros(300, np.float32))
        with np.errstate(divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            got = jitted(zero, zero)
        assert got[0].to_numpy()[0] == -np.inf
        with pytest.warns(RuntimeWarning, match="divide by zero"):
            jitted(zero, zero)[0].to_numpy()
    assert replayed == 0 and len(runs) >= 1
