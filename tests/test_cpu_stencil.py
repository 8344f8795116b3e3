"""Stencil fields on the CPU VM (lazyarr/backends/cpu_stencil.py): a pending subexpression read
through several shifted views is computed once per element into a ring of rows.

Every case is checked three ways: against NumPy, against the same call with fields turned off
(the same bits for elementwise results: only how many times each op runs changes; a float64
sum to rounding, as the main program's blocks may be longer), and on 1 to 3 threads (the same
bits). Spies on the two ways a run goes prove which one it took.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import backends
from lazyarr.backends import cpu_fused, cpu_stencil


@pytest.fixture(autouse=True)
def fused():
    with la.config(mode="lazy", device="cpu"), backends.use_backend("cpu-fused"):
        yield


@pytest.fixture
def fields_used(monkeypatch):
    """Per fused run: True when it ran with stencil fields (cpu_fused._run_fields), False
    when it ran without (cpu_fused._execute)."""
    calls = []
    run_fields, execute = cpu_fused._run_fields, cpu_fused._execute

    def with_fields(*args):
        result = run_fields(*args)
        if result is not None:
            calls.append(True)
        return result

    def without(*args, **kwargs):
        calls.append(False)
        return execute(*args, **kwargs)

    monkeypatch.setattr(cpu_fused, "_run_fields", with_fields)
    monkeypatch.setattr(cpu_fused, "_execute", without)
    return calls


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def jacobi(u):
    return 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def wide(u):   # shifts of up to 4 rows and 3 columns, two of them at one row
    return u[4:, 3:] - 2 * u[:-4, :-3] + u[2:-2, 1:-2] * u[2:-2, 3:]


def two_fields(u):   # sqrt(u) at three shifts, exp(u / 4) at two
    return la.sqrt(u[1:-1, 1:-1]) + la.sqrt(u[:-2, 1:-1]) * la.exp(u[2:, 1:-1] / 4) \
        - la.sqrt(u[2:, :-2]) + la.exp(u[1:-1, 2:] / 4) if isinstance(u, la.LazyArray) else \
        np.sqrt(u[1:-1, 1:-1]) + np.sqrt(u[:-2, 1:-1]) * np.exp(u[2:, 1:-1] / 4) \
        - np.sqrt(u[2:, :-2]) + np.exp(u[1:-1, 2:] / 4)


CASES = {
    "jacobi of sqrt": (lambda w: jacobi(la.sqrt(w)), lambda w: jacobi(np.sqrt(w))),
    "jacobi of a scaled exp": (lambda w: jacobi(la.exp(w * 0.5) + 1),
                               lambda w: jacobi(np.exp(w * np.float32(0.5)) + np.float32(1))),
    "wide shifts of a square": (lambda w: wide(w * w - 3), lambda w: wide(w * w - np.float32(3))),
    "two fields": (lambda w: two_fields(w), lambda w: two_fields(w)),
}


def fields_off(monkeypatch):
    monkeypatch.setattr(cpu_stencil, "MIN_ELEMENTS", 1 << 62)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("shape", [(300, 260), (70, 5000)])   # rows of one block, and of two
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduce", [False, True])
def test_fields_give_the_values_of_the_program_without_them(case, shape, dtype, reduce,
                                                           fields_used, monkeypatch):
    lazy, eager = CASES[case]
    w = (np.random.default_rng(shape[1]).random(shape) + 0.25).astype(dtype)
    run = (lambda: np.asarray(la.sum(lazy(la.asarray(w))))) if reduce else \
        (lambda: np.asarray(lazy(la.asarray(w))))
    with np.errstate(all="raise"):
        want = eager(w)
    old = cpu_fused.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3):
            cpu_fused.set_num_threads(n)
            results.append(run())
        assert all(fields_used), "the fields were not used"
        fields_off(monkeypatch)
        del fields_used[:]
        plain = run()
        assert not any(fields_used)
    finally:
        cpu_fused.set_num_threads(old)
    for got in results[1:]:
        np.testing.assert_array_equal(bits(got), bits(results[0]))
    if reduce:      # (the main program's blocks may be longer: a float64 sum's partials differ)
        np.testing.assert_allclose(results[0], plain, rtol=1e-13)
    else:
        np.testing.assert_array_equal(bits(results[0]), bits(plain))
    if reduce:
        np.testing.assert_allclose(plain, np.sum(want.astype(np.float64)), rtol=1e-5)
    else:
        assert plain.dtype == want.dtype
        np.testing.assert_array_equal(bits(plain), bits(want))


def test_an_integer_field_and_scalars_on_both_sides(fields_used):
    """A field whose value changes dtype (int16 -> float64 sqrt), a scalar inside the field and
    another outside it, an input that is not a member (a leaf of the space's shape)."""
    rng = np.random.default_rng(5)
    w = rng.integers(0, 1000, (400, 300)).astype(np.int16)
    b = rng.random((398, 298))
    got = np.asarray(la.sqrt(la.asarray(w) + 7)[1:-1, 2:] * 3 - la.sqrt(la.asarray(w) + 7)[2:, :-2]
                     + la.asarray(b))
    u = np.sqrt(w + np.int16(7))
    want = u[1:-1, 2:] * 3 - u[2:, :-2] + b
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_array_equal(bits(got), bits(want))
    assert any(fields_used)


@pytest.mark.parametrize("where", ["read", "unread corner"])
def test_flags_only_where_the_views_read(where, fields_used):
    """A negative element inside the views raises ``sqrt``'s invalid-value warning, as NumPy
    on the views does; one at a corner that no view reads (the field row holds only the
    columns its views read) raises nothing."""
    w = np.random.default_rng(1).random((300, 300)).astype(np.float32)
    w[(150, 150) if where == "read" else (0, 0)] = -1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = np.asarray(jacobi(la.sqrt(la.asarray(w))))
    assert any(fields_used)
    messages = [str(c.message) for c in caught]
    if where == "read":
        assert any("invalid value encountered in sqrt" in m for m in messages), messages
        assert np.isnan(got[148:151, 148:151]).sum() == 5
    else:
        assert not messages
        assert not np.isnan(got).any()
    with np.errstate(invalid="raise"):
        if where == "read":
            with pytest.raises(FloatingPointError):
                np.asarray(jacobi(la.sqrt(la.asarray(w))))
        else:
            np.asarray(jacobi(la.sqrt(la.asarray(w))))


def test_no_fields_where_nothing_is_shared(fields_used):
    """Views of two different buffers, reversed views, a small space, and views of a leaf
    (nothing computed per view) run without fields."""
    rng = np.random.default_rng(2)
    a, b = (rng.random((400, 400)).astype(np.float32) for _ in range(2))
    la_a, la_b = la.asarray(a), la.asarray(b)
    cases = [(la.sqrt(la_a)[1:, :] + la.sqrt(la_b)[:-1, :], np.sqrt(a)[1:, :] + np.sqrt(b)[:-1, :]),
             (la.sqrt(la_a)[::-1, :][1:] + la.sqrt(la_a)[::-1, :][:-1],
              np.sqrt(a)[::-1][1:] + np.sqrt(a)[::-1][:-1]),
             (jacobi(la.sqrt(la.asarray(a[:100, :100]))), jacobi(np.sqrt(a[:100, :100]))),
             (jacobi(la_a), jacobi(a))]
    for lazy, want in cases:
        np.testing.assert_array_equal(bits(np.asarray(lazy)), bits(want))
    assert not any(fields_used)


def test_explain_shows_the_fields():
    """``la.explain`` lists the main program, each field's program and where it is read, and
    says what is computed once; nothing runs."""
    w = la.asarray(np.random.default_rng(3).random((512, 512)).astype(np.float32) + 0.5)
    plan = la.explain(lambda: la.sum(jacobi(la.sqrt(w))))
    text = str(plan)
    assert "field 0: computed once per element of input 1's rows" in text
    assert "input 7 at (2, 0)" in text and "input 8 at (1, -1)" in text
    assert "stencil: sqrt is read at 5 shifts of one buffer" in text
    assert text.count("sqrt loop") == 1          # once, in the field's program
    small = la.asarray(np.ones((64, 64), np.float32))
    assert "stencil" not in str(la.explain(lambda: la.sum(jacobi(la.sqrt(small)))))


def test_rings_stay_small_and_integer_powers_stay_off_the_pool(fields_used, monkeypatch):
    """Rows so long that a thread's rings would pass ``MAX_RING_BYTES`` run without fields; so
    does a field with NumPy's integer power (it raises through the GIL: the calling thread
    alone carries that back). The values and the errors are NumPy's either way."""
    w = np.random.default_rng(4).random((40, 3000)).astype(np.float32) + 0.5
    with monkeypatch.context() as m:
        m.setattr(cpu_stencil, "MAX_RING_BYTES", 1000)
        np.testing.assert_array_equal(np.asarray(jacobi(la.sqrt(la.asarray(w)))),
                                      jacobi(np.sqrt(w)))
    assert fields_used and not any(fields_used)
    np.asarray(jacobi(la.sqrt(la.asarray(w))))
    assert fields_used[-1], "the same call with the default bound takes the fields"
    fields_used.clear()
    k = np.random.default_rng(5).integers(1, 5, (300, 300))
    np.testing.assert_array_equal(np.asarray(jacobi(la.asarray(k) ** 7)), jacobi(k ** 7))
    with pytest.raises(ValueError, match="negative"):
        np.asarray(jacobi(la.asarray(k) ** -1))
    assert fields_used and not any(fields_used)


def test_a_jitted_stencil_takes_its_fields(fields_used):
    """``la.jit``'s replay runs the fields too, and checks each call that its inputs lie as
    the first call's did (another layout runs without them, with the same values)."""
    @la.jit
    def step(w):
        return la.sum(jacobi(la.sqrt(w)))

    rng = np.random.default_rng(6)
    for w in [rng.random((300, 300)).astype(np.float32) + 0.5 for _ in range(3)]:
        got = float(step(la.asarray(w)))
        np.testing.assert_allclose(got, np.sum(jacobi(np.sqrt(w)).astype(np.float64)), rtol=1e-6)
    assert len(fields_used) >= 3 and all(fields_used[-2:])
    fields_used.clear()
    wide = rng.random((300, 600)).astype(np.float32)[:, ::2] + 0.5   # columns two apart
    got = float(step(la.asarray(wide)))
    np.testing.assert_allclose(got, np.sum(jacobi(np.sqrt(wide)).astype(np.float64)), rtol=1e-6)


FIELD_OPS = {
    "sqrt_abs": (lambda u: la.sqrt(abs(u)), lambda u: np.sqrt(np.abs(u))),
    "exp_quarter": (lambda u: la.exp(u / 4), lambda u: np.exp(u / np.float32(4))),
    "square_plus": (lambda u: u * u + 1.5, lambda u: u * u + np.float32(1.5)),
    "tanh_times": (lambda u: la.tanh(u) * u, lambda u: np.tanh(u) * u),
}


@settings(derandomize=True, deadline=None, database=None, max_examples=30,
          suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(sorted(FIELD_OPS)),
       shifts=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), min_size=2, max_size=6,
                       unique=True),
       signs=st.lists(st.sampled_from([1, -1]), min_size=6, max_size=6),
       reduce=st.booleans(), dtype=st.sampled_from([np.float32, np.float64]))
def test_random_stencils_match_numpy(field, shifts, signs, reduce, dtype):
    """Random fields read at random shifts (rows 0-3, columns 0-4 from the corner), added or
    subtracted in order: NumPy's values bit for bit (a sum to rounding), on the fields' path."""
    w = (np.random.default_rng(len(shifts)).standard_normal((260, 300)) * 2).astype(dtype)
    lazy_f, eager_f = FIELD_OPS[field]

    def stencil(u, fn):
        total = None
        for (di, dj), sign in zip(shifts, signs):
            view = fn(u)[di:260 - 3 + di, dj:300 - 4 + dj]
            total = view if total is None else (total + view if sign > 0 else total - view)
        return total

    with np.errstate(all="ignore"):
        want = stencil(w, eager_f)
        ran = []
        real = cpu_fused._run_fields

        def spy(*args):
            result = real(*args)
            ran.append(result is not None)
            return result

        cpu_fused._run_fields = spy
        try:
            lazy = stencil(la.asarray(w), lazy_f)
            got = np.asarray(la.sum(lazy) if reduce else lazy)
        finally:
            cpu_fused._run_fields = real
    assert ran == [True]
    if reduce:
        np.testing.assert_allclose(got, np.sum(want.astype(np.float64)), rtol=1e-5, atol=1e-3)
    else:
        np.testing.assert_array_equal(bits(got), bits(want))


def test_the_kept_answer_tells_a_broadcast_row_from_a_view(fields_used):
    """The same program run on two views of one buffer, then on a view and a one-row array
    that starts at the other view's address with its strides (broadcast by the operator):
    the kept answer is keyed by the inputs' shapes too, so the second call is no stencil and
    gives NumPy's values."""
    w = np.random.default_rng(7).random((300, 300)).astype(np.float32) + 0.5
    lw = la.asarray(w)

    def step(a, b):
        return np.asarray(la.sqrt(a) + la.sqrt(b))

    u = np.sqrt(w)
    np.testing.assert_array_equal(step(lw[1:, 1:], lw[:-1, :-1]), u[1:, 1:] + u[:-1, :-1])
    assert fields_used == [True]
    got = step(lw[1:, 1:], lw[:1, :-1])
    np.testing.assert_array_equal(got, u[1:, 1:] + u[:1, :-1])
    assert fields_used == [True, False]
