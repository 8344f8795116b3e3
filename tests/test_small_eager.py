"""Small computed CPU arrays run at once (``eager_max_size``; the guide's "Small arrays").

In lazy mode an operator (``x + y``, ``-x``, ``x += y``) or an elementwise function
(``la.sqrt(x)``, ``la.maximum(x, y)``) whose operands are computed CPU arrays (or numbers, or
elements) of at most ``eager_max_size`` elements, with a result no bigger, runs NumPy's own
operator or ufunc at once (lazyarr/_value_ops.pyx). These tests check that path against NumPy:
values, dtypes, errors, warnings at the user's line, writes and aliasing, and where the
threshold lies. The rest of the suite runs with ``eager_max_size=0`` (tests/conftest.py), so it
tests the engine; the fuzz here runs the differential battery with the default on.
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np
import pytest
import strategies as S
from helpers import DTYPES, assert_same, edge_values
from hypothesis import HealthCheck, given, settings

import lazyarr as la
from lazyarr import _build
from lazyarr._registry import ELEMENTWISE
from lazyarr.backends import use_backend

DEFAULT = la._config.Config().eager_max_size


@pytest.fixture(autouse=True)
def small_path():
    """The default configuration (lazy mode on the CPU, ``eager_max_size`` at its default)."""
    with la.config(mode="lazy", device="cpu", eager_max_size=DEFAULT):
        yield


def _both(fn, *arrays):
    """``fn`` on NumPy arrays and on LazyArrays of them: (NumPy's result or exception, ours)."""
    try:
        with np.errstate(all="ignore"):
            want = fn(*arrays)
    except Exception as exc:  # noqa: BLE001 - NumPy's exception is the expected answer
        want = exc
    lazy = [la.asarray(a) for a in arrays]
    if isinstance(want, Exception):
        with pytest.raises(type(want)), np.errstate(all="ignore"):
            fn(*lazy)
        return want, None
    with np.errstate(all="ignore"):
        got = fn(*lazy)
    return want, got


BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.pow, operator.and_, operator.or_, operator.xor,
          operator.lshift, operator.rshift, operator.lt, operator.le, operator.eq,
          operator.ne, operator.gt, operator.ge]
UNARY = [operator.neg, operator.pos, abs, operator.invert]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_operators_at_once_equal_numpy(op, dtype):
    a = edge_values(dtype)
    b = a[::-1].copy()
    for fn in (lambda x, y: op(x, y), lambda x, y: op(x, 3), lambda x, y: op(2.5, y),
               lambda x, y: op(x[:1], y)):
        want, got = _both(fn, a, b)
        if got is not None:
            assert got.is_materialized            # ran at once: nothing pending
            assert_same(got, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", UNARY, ids=lambda f: f.__name__)
def test_unary_operators_at_once_equal_numpy(op, dtype):
    want, got = _both(op, edge_values(dtype))
    if got is not None:
        assert got.is_materialized
        assert_same(got, want)


_UFUNC_OPS = [op for op in ELEMENTWISE if isinstance(op.numpy, np.ufunc) and op.numpy.nout == 1
              and op.nin < 3]


@pytest.mark.parametrize("opdef", _UFUNC_OPS, ids=lambda o: o.name)
def test_function_forms_at_once_equal_numpy(opdef):
    fn = getattr(la, opdef.name)
    for dtype in DTYPES:
        a = edge_values(dtype)
        arrays = (a,) if opdef.nin == 1 else (a, a[::-1].copy())
        want, got = _both(lambda *xs: (opdef.numpy if isinstance(xs[0], np.ndarray) else fn)(*xs),
                          *arrays)
        if got is not None:
            assert got.is_materialized, (opdef.name, dtype)
            assert_same(got, want)


def test_elements_with_small_arrays_give_numpys_dtypes():
    a = np.arange(5, dtype=np.float32)
    x = la.asarray(a)
    for got, want in [(x[2] * x, a[2] * a), (x * x[2], a * a[2]), (x[1] - x, a[1] - a),
                      (x[3] < x, a[3] < a), (la.asarray(np.arange(5.0))[1] * x,
                                             np.arange(5.0)[1] * a)]:
        assert got.is_materialized
        assert_same(got, want)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "float16", "float32", "complex64"])
def test_python_scalars_stay_weak(dtype):
    a = np.arange(1, 6).astype(dtype)
    x = la.asarray(a)
    for got, want in [(x * 1j, a * 1j), (1j + x, 1j + a), (x * 2.5, a * 2.5), (3 - x, 3 - a),
                      (x / 2, a / 2), (x ** 2, a ** 2), (True + x, True + a),
                      (la.maximum(x, 2), np.maximum(a, 2))]:
        assert got.is_materialized
        assert_same(got, want)


def test_function_forms_of_elements_are_numpys_scalar_calls():
    a = np.array([0.0, 2.0, -1.0], dtype=np.float32)
    x = la.asarray(a)
    for got, want in [(la.sqrt(x[1]), np.sqrt(a[1])), (la.maximum(x[0], 2.5), np.maximum(a[0], 2.5)),
                      (la.add(1, x[2]), np.add(1, a[2])), (la.arctan2(x[1], x[2]),
                                                           np.arctan2(a[1], a[2]))]:
        assert type(got) is la._value.ScalarValue
        assert_same(got, want)
        assert type(got.item()) is type(want.item())
    with warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always")
        la.log(x[0])
    assert [str(w.message) for w in raised] == ["divide by zero encountered in log"]
    assert raised[0].filename == __file__
    with pytest.raises(OverflowError):
        la.maximum(la.asarray(np.arange(3, dtype=np.int8))[1], 300)


def test_results_own_new_memory_as_numpys_do():
    a = np.arange(6.0)
    x = la.asarray(a)
    y = x + 0
    assert y.is_materialized and not np.shares_memory(np.asarray(y), a)
    a[0] = 10                       # an op read its inputs at its line, as NumPy's does
    assert np.asarray(y)[0] == 0


# ----------------------------------------------------------------------------- the threshold
def test_threshold_on_size_and_on_the_broadcast_result():
    def at_once(x, y=1.0):
        return (la.asarray(x) + (la.asarray(y) if isinstance(y, np.ndarray) else y)).is_materialized
    assert at_once(np.ones(DEFAULT))
    assert not at_once(np.ones(DEFAULT + 1))
    assert at_once(np.ones(DEFAULT), np.ones(DEFAULT))
    side = math.isqrt(DEFAULT)
    assert at_once(np.ones((side, 1)), np.ones((1, side)))            # side² <= DEFAULT elements
    assert not at_once(np.ones((side + 1, 1)), np.ones((1, side + 1)))   # more: fused, pending
    assert at_once(np.ones((100, 1)), np.ones(30))              # 3,000
    assert at_once(np.ones(DEFAULT), np.ones(1))
    assert not at_once(np.ones((2, 1)), np.ones(DEFAULT // 2 + 1))     # DEFAULT + 2
    x = la.asarray(np.ones(10))
    with la.config(eager_max_size=0):
        assert not (x + 1).is_materialized and not la.sqrt(x).is_materialized
    with la.config(eager_max_size=10):
        assert (x + 1).is_materialized
    with la.config(eager_max_size=9):
        assert not (x + 1).is_materialized


def test_only_computed_operands_and_never_while_explained():
    x = la.asarray(np.arange(8.0))
    with la.config(eager_max_size=0):
        pending = x * 2
    assert not pending.is_materialized
    y = pending + 1                 # reads a pending array: fuses with it
    assert not y.is_materialized
    assert_same(y, np.arange(8.0) * 2 + 1)
    plan = la.explain(lambda: la.sum(la.sqrt(x * 2 + 1)))
    assert len(plan.kernels) == 1   # explained: the graph it would have built, one kernel
    with la.config(mode="eager"):
        assert (x * 2).is_materialized
    assert_same(la.sqrt(x * 2 + 1), np.sqrt(np.arange(8.0) * 2 + 1))


def test_config_option_is_checked(monkeypatch):
    for bad in (-1, 1.5, "many", None):
        with pytest.raises(ValueError, match="eager_max_size"):
            la.set_config(eager_max_size=bad)
    assert la.get_config().eager_max_size == DEFAULT
    monkeypatch.setenv("LAZYARR_EAGER_MAX_SIZE", "12")
    assert la._config._from_environment().eager_max_size == 12
    monkeypatch.setenv("LAZYARR_EAGER_MAX_SIZE", "-3")
    with pytest.raises(ValueError, match="LAZYARR_EAGER_MAX_SIZE"):
        la._config._from_environment()


# ----------------------------------------------------------------------------- warnings, errors
def test_numpys_warnings_name_the_users_line():
    def statements(x, log):
        x / 0                                                   # operator
        log(x)                                                  # function form
        x[0] / x                                                # element and array

    def caught(x, log):
        with warnings.catch_warnings(record=True) as raised:
            warnings.simplefilter("always")
            statements(x, log)
        return raised

    a = np.array([0.0, 1.0])
    ours, numpys = caught(la.asarray(a), la.log), caught(a, np.log)
    assert [str(w.message) for w in ours] == [str(w.message) for w in numpys]
    assert len(ours) == 4
    assert {(w.filename, w.lineno) for w in ours} == {(w.filename, w.lineno) for w in numpys}
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        la.log(la.asarray(a))


def test_wrong_argument_counts_are_never_numpys_out():
    x, y = la.asarray(np.arange(3.0)), la.asarray(np.zeros(3))
    with pytest.raises(TypeError, match="takes 1 array argument"):
        la.sqrt(x, y)           # np.sqrt(a, b) would write into b
    with pytest.raises(TypeError, match="takes 1 array argument"):
        la.sqrt(x[1], y[0])
    with pytest.raises(TypeError, match="takes 2 array argument"):
        la.add(x)
    assert_same(y, np.zeros(3))


def test_errors_are_numpys():
    i = la.asarray(np.arange(4, dtype=np.int8))
    with pytest.raises(OverflowError):
        i + 300
    with pytest.raises(ValueError, match="negative integer powers"):
        i ** -1
    with pytest.raises(ValueError):
        i + la.asarray(np.ones(3, np.int8))
    with pytest.raises(TypeError):
        la.asarray(np.ones(3, bool)) - la.asarray(np.ones(3, bool))


# ----------------------------------------------------------------------------- writes
def test_operators_are_the_compiled_bases_slots():
    """LazyArray's operators, ``x[key]``, ``x[key] = v`` and ``del x[key]`` are C slots of its
    compiled base (``ArrayBase``, lazyarr/_value_ops.pyx), which LazyArray inherits, and an
    element's (ScalarValue's) operators those of ``ScalarBase``: a
    Python method in LazyArray's namespace, or a method object where the base's slot wrapper
    belongs, would send every operator through Python's generic slot (a lookup and a call,
    ~0.1 µs). They still answer as methods, as NumPy's do."""
    from lazyarr._value import ScalarValue
    from lazyarr._value_ops import ARRAY_CODES, ArrayBase, ScalarBase
    wrapper = type(int.__add__)
    operators = {*ARRAY_CODES} | {"__r" + n[2:] for n in ARRAY_CODES if "__r" + n[2:] in vars(ArrayBase)}
    assert len(operators) == 12 * 3 + 6 + 4
    for name in sorted(operators | {"__getitem__", "__setitem__", "__delitem__", "__matmul__",
                                    "__rmatmul__"}):
        assert name not in vars(la.LazyArray), name
        assert type(vars(ArrayBase)[name]) is wrapper, name
    for name in sorted(operators):              # an element's operators: ScalarBase's slots
        assert name not in vars(ScalarValue), name
        assert type(vars(ScalarBase)[name]) is wrapper, name
    a = np.arange(1.0, 5.0)
    x = la.asarray(a)
    assert_same(np.asarray(x.__sub__(1.5)), a.__sub__(1.5))
    assert_same(np.asarray(x.__rsub__(1.5)), a.__rsub__(1.5))
    assert_same(np.asarray(x.__lt__(2.5)), a.__lt__(2.5))
    for fn in (lambda v: v.__delitem__(0), lambda v: pow(v, 2, 3)):
        with pytest.raises(Exception) as numpys:
            fn(a)
        with pytest.raises(numpys.type):
            fn(x)


def test_inplace_writes_memory_that_views_and_numpy_share():
    a = np.arange(6.0)
    x = la.asarray(a)
    v = x[1:4]
    v += 10                                  # through a view, into the base's memory
    x *= 2
    want = np.arange(6.0)
    want[1:4] += 10
    want *= 2
    assert_same(x, want)
    assert_same(v, want[1:4])
    np.testing.assert_array_equal(a, want)   # the NumPy array handed to asarray shares it


@pytest.mark.parametrize("stmt", ["x += x[::-1]", "x -= x[0]", "x **= 2", "x //= 3",
                                  "x[1:] += x[:-1]", "x[::2] *= x[1::2]"])
def test_inplace_equals_numpy_with_overlap(stmt):
    a = np.arange(1.0, 9.0)
    x = la.asarray(a.copy())
    exec(stmt, {"x": a})
    exec(stmt, {"x": x})
    assert_same(x, a)


def test_failed_inplace_writes_nothing():
    i = la.asarray(np.arange(1, 7))
    with pytest.raises(ValueError, match="negative"):
        i **= la.asarray(np.array([1, 2, 3, -1, 2, 2]))
    assert_same(i, np.arange(1, 7))
    with pytest.raises(TypeError, match="same_kind"):
        i += 1.5
    assert_same(i, np.arange(1, 7))
    f = la.asarray(np.array([1.0, 0.0, 2.0]))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        f /= la.asarray(np.array([1.0, 0.0, 0.0]))
    assert_same(f, np.array([1.0, 0.0, 2.0]))
    with pytest.raises(ValueError, match="broadcast"):
        f += la.asarray(np.ones((2, 3)))
    assert_same(f, np.array([1.0, 0.0, 2.0]))


def test_inplace_keeps_pending_readers_old_values():
    small = la.asarray(np.arange(4.0))
    rows = DEFAULT // 4 + 1
    big = la.asarray(np.ones((rows, 4))) * small          # too big: pending, reads small
    assert not big.is_materialized
    small += 100
    assert_same(big, np.ones((rows, 4)) * np.arange(4.0))
    assert_same(small, np.arange(4.0) + 100)


def test_inplace_on_a_fresh_view_keeps_pending_readers_and_aliasing():
    """``c[i, :j] += v``'s steps, as a loop writes them: the compiled in-place operator claims
    the index's fresh view itself (_value_ops._unclaimed_leaf: the barrier, then its owner),
    so a pending expression that read the memory keeps the old values, the base and a view
    taken before see the write, as in NumPy."""
    cn = np.arange(40.0).reshape(5, 8)
    c = la.asarray(cn.copy())
    big = la.asarray(np.ones((2000, 8))) * c[1]           # too big: pending, reads row 1
    assert not big.is_materialized
    row = c[1]
    head = c[1, :4]
    head += la.asarray(np.full(4, 10.0))
    assert big.is_materialized                             # (computed before the write)
    c[1, :4] = head
    view = c[2, 2:6]
    view *= 3
    want = cn.copy()
    want[1, :4] += 10
    want[2, 2:6] *= 3
    assert_same(big, np.ones((2000, 8)) * cn[1])
    assert_same(c, want)
    assert_same(row, want[1])
    assert_same(view, want[2, 2:6])


# ----------------------------------------------------------------------------- reductions
_REDUCTIONS = ["sum", "prod", "mean", "var", "std", "min", "max", "any", "all", "argmin",
               "argmax"]


def _reduced(name, x, **kw):
    try:
        with warnings.catch_warnings(record=True) as raised, np.errstate(all="warn"):
            warnings.simplefilter("always")
            got = np.asarray(getattr(la, name)(x, **kw))
    except Exception as exc:  # noqa: BLE001 - compared by type below
        return type(exc), []
    return got, [(str(w.message), w.filename) for w in raised]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", _REDUCTIONS)
def test_small_reductions_run_the_kernel_bound_once(name, dtype, monkeypatch):
    """A reduction of a small computed array runs the same kernel as ever, bound once per
    layout (``_build._bound_reduction``): the same bits and warnings as the unbound
    path (the node lowered and materialized every call), also for new data, views and empty
    arrays."""
    a = edge_values(dtype)
    m = np.resize(a, (4, 6))
    for arr, kw in [(a, {}), (m, {"axis": 0}), (m, {"axis": 1, "keepdims": True}),
                    (m[::-1, ::2], {}), (m[:0], {"axis": 0}), (a[::-1].copy(), {}),
                    (m.T, {"axis": (0, 1)} if name not in ("argmin", "argmax") else {})]:
        if name in ("var", "std"):
            kw = dict(kw, ddof=1)
        for _ in range(2):                          # the second call reuses the binding
            got, got_warnings = _reduced(name, la.asarray(arr), **kw)
            with monkeypatch.context() as unbound:   # the plain lowering, every time
                unbound.setattr(_build, "_bound_reduction", lambda *args: None)
                unbound.setattr(_build, "_bound_reductions", {})
                want, want_warnings = _reduced(name, la.asarray(arr), **kw)
            if isinstance(want, type):
                assert got is want, (name, kw)
                continue
            assert_same(got, want)
            assert got_warnings == want_warnings


def _bound_and_unbound(name, arr, monkeypatch, **kw):
    """The reduction of ``arr`` twice through the bound runners (the second call finds the
    runner by the call's key), and once through the plain lowering: all three alike."""
    results = [_reduced(name, la.asarray(arr), **kw) for _ in range(2)]
    with monkeypatch.context() as unbound:
        unbound.setattr(_build, "_bound_reduction", lambda *args: None)
        unbound.setattr(_build, "_bound_reductions", {})
        want, want_warnings = _reduced(name, la.asarray(arr), **kw)
    for got, got_warnings in results:
        if isinstance(want, type):
            assert got is want, (name, kw)
            continue
        assert_same(got, want)
        assert got_warnings == want_warnings


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", _REDUCTIONS)
def test_leaf_reductions_bound_once_match_the_unbound_path(name, dtype, monkeypatch):
    """Bigger inputs than one VM block: min/max/any/all/arg* of a C-contiguous one run
    NumPy's loop through the reference backend's bound runner (``ReferenceBackend.bind``),
    the others the VM's through cpu-fused's (``cpu_fused._bound_reduction``); every axis,
    keepdims, slices of zeros only (the signed zeros of min/max), views, an empty input."""
    a = np.resize(edge_values(dtype), (64, 80))
    a[:3] = 0                        # rows and columns of zeros (signed ones where a float)
    if dtype.kind in "fc":
        a[1, ::2] = -a[1, ::2]
        a[:, :3] = -a[:, :3]
    for arr, kw in [(a, {}), (a, {"axis": 0}), (a, {"axis": 1}), (a, {"axis": -1, "keepdims": True}),
                    (a[::-1, ::2], {"axis": 0}), (a.T, {"axis": 1}), (a[:, :0], {"axis": 0}),
                    (a, {"axis": (0, 1)} if name not in ("argmin", "argmax") else {"axis": None}),
                    (np.asarray(a[0, 0]), {})]:
        if name in ("var", "std"):
            kw = dict(kw, ddof=1)
        _bound_and_unbound(name, arr, monkeypatch, **kw)


def test_the_key_of_a_bound_reduction(monkeypatch):
    """A bound runner is found by the call's arguments only where their values say
    everything: ``axis=1.0``, an unhashable ``dtype``, ``keepdims`` not a bool, a float
    ``ddof`` still get NumPy's answers or errors; eager mode and a pinned backend are asked
    each call; a misaligned input is not mistaken for an aligned one of the same layout."""
    x = np.random.default_rng(1).random((8, 600)).astype(np.float32)
    for name, kw in [("sum", {"axis": 1}), ("sum", {"axis": 1.0}), ("sum", {"axis": True}),
                     ("sum", {"axis": (1,)}), ("sum", {"axis": [1]}), ("sum", {"dtype": [1]}),
                     ("sum", {"keepdims": np.True_}), ("sum", {"keepdims": "no"}),
                     ("var", {"ddof": 1}), ("var", {"ddof": 1.0}), ("var", {"ddof": True}),
                     ("var", {"axis": 0, "ddof": 8}), ("mean", {"axis": 1}), ("max", {"axis": 3}),
                     ("mean", {"dtype": np.float64}), ("mean", {"dtype": "f8"})]:
        _bound_and_unbound(name, x, monkeypatch, **kw)
    lx = la.asarray(x)
    fused = np.asarray(la.sum(lx))                        # bound in lazy mode
    with la.config(mode="eager"):                         # eager mode: NumPy's own sum
        assert_same(np.asarray(la.sum(lx)), np.sum(x))
    with use_backend("reference"):                        # a runner of its own backend
        assert_same(np.asarray(la.sum(lx)), fused)
    assert any(key[-1] == "reference" for key in _build._bound_reductions)
    raw = np.zeros(x.nbytes + 1, np.uint8)
    odd = raw[1:].view(np.float32).reshape(x.shape)       # not aligned
    odd[...] = x
    for arr in (odd, x.copy(), odd):
        for name in ("sum", "max", "argmin"):
            _bound_and_unbound(name, arr, monkeypatch, axis=0)


def test_a_small_float32_sum_overflow_warns_at_the_line():
    x = la.asarray(np.array([3e38, 3e38], dtype=np.float32))
    with warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always")
        s = la.sum(x)
    assert np.isinf(np.asarray(s))
    assert [(str(w.message), w.filename) for w in raised] == [
        ("overflow encountered in reduce", __file__)]


# ----------------------------------------------------------------------------- fuzz
@settings(derandomize=True, deadline=None, database=None, max_examples=300,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(S.expressions())
def test_fuzz_with_small_arrays_at_once(expr):
    problems = S.check(expr, [t for t in S.targets() if t.startswith("lazy-")
                              and not t.startswith("lazy-cuda")])
    assert not problems, "\n".join(f"[{t}] {p}" for t, p in problems.items()) + \
        f"\n\nreproduce with strategies.check({expr!r})\n\nas code:\n{expr.source()}"


def test_a_repeated_reduction_of_a_computed_array_takes_its_bound_runner(monkeypatch):
    """``x.sum(0)`` again on a computed CPU array runs the runner its first call bound, from
    the compiled ``_value_ops.bound_reduction`` (no builder call): the same values; the empty
    slices' warnings of ``mean`` every time; eager mode, a ``dtype=`` or another layout goes
    the builder's way."""
    from lazyarr import _array_methods
    calls = []
    reduce = _array_methods._reduce

    def counting(*args, **kw):
        calls.append(args[0].name)
        return reduce(*args, **kw)
    monkeypatch.setattr(_array_methods, "_reduce", counting)
    a = np.arange(12.0).reshape(3, 4)
    x = la.asarray(a)
    for got in (x.sum(0), x.sum(0), la.sum(x, 0), x.max(), x.max()):
        assert isinstance(got, la.LazyArray) and got.is_materialized
    assert calls == ["sum", "max"]
    assert_same(np.asarray(x.sum(0)), a.sum(0))
    assert_same(np.asarray(x.max()), np.asarray(a.max()))
    x.sum(0, dtype=np.float32)
    la.sum(x.T, 0)
    with la.config(mode="eager"):
        x.sum(0)
    assert calls == ["sum", "max", "sum", "sum", "sum"]
    empty = la.asarray(np.empty((0, 3)))
    with warnings.catch_warnings(record=True) as numpys:
        warnings.simplefilter("always")
        np.empty((0, 3)).mean(0)
    for _ in range(2):                  # (the second call: the bound runner's)
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            got = empty.mean(0)
        assert [str(w.message) for w in ours] == [str(w.message) for w in numpys]
        assert_same(np.asarray(got), np.full(3, np.nan))
    assert calls.count("mean") == 1
