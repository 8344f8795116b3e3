"""NumPy's floating-point errors from the fused CPU kernels (issue 16, item 5).

NumPy handles the floating-point exceptions each ufunc raised as ``np.errstate`` says (a
RuntimeWarning "divide by zero encountered in log" by default); the cpu-fused VM records them
per instruction and lazyarr handles them the same way when the kernel runs
(lazyarr/backends/fp_errors.py). Each case here is compared with NumPy's own messages.
"""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from helpers import errcall_seen, lazy_warning_messages, warning_messages

import lazyarr as la
from lazyarr import backends

pytestmark = pytest.mark.skipif("cpu-fused" not in backends.available(),
                                reason="the fused CPU backend is not built")


_messages = warning_messages


def _lazy(fn, *arrays):
    return lazy_warning_messages(fn, arrays, "cpu")


def _numpy(fn, *arrays):
    return warning_messages(lambda: fn(*arrays))


F64 = np.array([0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0])
F32 = F64.astype(np.float32)
BIG32 = np.array([100.0, 1.0, 3e38], np.float32)

CASES = [
    ("log", lambda x: np.log(x), (F64,)),
    ("log f32", lambda x: np.log(x), (F32,)),
    ("sqrt", lambda x: np.sqrt(x), (F64,)),
    ("arcsin", lambda x: np.arcsin(x * 2), (F64,)),
    ("divide", lambda x, y: x / y, (F64, F64[::-1].copy())),
    ("floor_divide", lambda x, y: x // y, (F64, F64[::-1].copy())),
    ("exp overflow f32", lambda x: np.exp(x), (BIG32,)),
    ("multiply overflow f32", lambda x: x * x, (BIG32,)),
    ("power", lambda x: x ** 3.5, (F64,)),
    ("cast NaN to int", lambda x: (x * 1).astype(np.int64), (F64,)),
    ("a chain: only its log raises", lambda x: np.sqrt(np.abs(x) + 1) * np.log(x) - 2, (F64,)),
    ("where still computes both sides", lambda x: np.where(x > 0, np.log(x), 0.0), (F64,)),
    ("comparisons of NaN are quiet", lambda x: (x < 1) | (x == x), (F64,)),
    ("maximum of NaN is quiet", lambda x: np.maximum(x, 1.0) + np.fmax(x, 0.0), (F64,)),
    # NumPy's loops of these clear the floating-point status when they end: an earlier
    # instruction's flag must be taken before them (lz_instr.clears_fpe in _cpu_vm.h)
    ("a flag before clip", lambda x, y: np.clip(x / y, -1, 1), (F64, F64[::-1].copy())),
    ("a flag before minimum", lambda x: np.minimum(np.sqrt(x), 1.0), (F64,)),
    ("a flag before maximum f32", lambda x: np.maximum(np.log(x), 0), (F32,)),
    ("a flag before fmin", lambda x, y: np.fmin(x / y, 1.0), (F64, F64[::-1].copy())),
    ("a flag before abs", lambda x: np.abs(np.log(x)) * 2, (F64,)),
    ("a flag before negative", lambda x: -np.arcsin(x * 2), (F64,)),
    ("a flag before a comparison", lambda x: np.log(x) < 1, (F64,)),
    ("a flag before isnan", lambda x: np.isnan(np.sqrt(x)), (F64,)),
    ("two flags before clip", lambda x, y: np.clip(np.log(x) + x / y, -1, 1),
     (F64, F64[::-1].copy())),
    ("max of NaN is quiet", lambda x: np.max(x * 1), (F64,)),
    ("argmin of NaN is quiet", lambda x: np.argmin(x * 1), (F64,)),
    ("min over an axis", lambda x: np.min((x * 1).reshape(7, 1), axis=1), (F64,)),
    ("sum of inf - inf", lambda x: np.sum(x * 1), (np.array([np.inf, -np.inf, 1.0]),)),
    ("float32 sum overflows", lambda x: np.sum(x * 1), (np.array([3e38, 3e38], np.float32),)),
    ("float32 row sums overflow", lambda x: np.sum((x * 1).reshape(2, 2), axis=1),
     (np.array([3e38, 3e38, 1, 2], np.float32),)),
    ("float32 sum of inf: no overflow", lambda x: np.sum(x * 1),
     (np.array([np.inf, 1], np.float32),)),
    ("float16 mean just below the top", lambda x: np.mean(x * 1),
     (np.array([65504, 65504], np.float16),)),
    ("mean of a NaN-free sum", lambda x: np.mean(x * 2), (np.array([1.0, 2.0]),)),
    ("nothing raised", lambda x: np.tanh(x) + 1, (np.array([0.5, -2.0]),)),
    ("isclose of infinities is quiet", lambda x, y: np.isclose(x, y) & np.isclose(x, y, rtol=0),
     (np.array([np.inf, 1.0, np.nan, -np.inf, np.inf, 5.0]),
      np.array([np.inf, 1.0, np.nan, np.inf, 3.0, np.inf]))),
    ("nanmean of an all-NaN slice: no 0/0", lambda x: np.nanmean(x.reshape(2, 2), axis=1),
     (np.array([np.nan, np.nan, 1.0, 2.0]),)),
]


@pytest.mark.parametrize("name, fn, arrays", CASES, ids=[c[0] for c in CASES])
def test_the_warnings_are_numpys(name, fn, arrays):
    assert _lazy(fn, *arrays) == _numpy(fn, *arrays)


def _run_as(how: str):
    """Eager mode, or lazy mode on the reference backend: NumPy's own calls
    (``reference.apply``), not the VM's kernels."""
    return la.config(mode="eager") if how == "eager" else backends.use_backend("reference")


@pytest.mark.parametrize("how", ["eager", "reference"])
@pytest.mark.parametrize("name, fn, arrays", CASES, ids=[c[0] for c in CASES])
def test_numpys_own_calls_give_numpys_warnings(name, fn, arrays, how):
    with _run_as(how):
        assert warning_messages(lambda: np.asarray(fn(*(la.asarray(a) for a in arrays))))\
            == _numpy(fn, *arrays)


@pytest.mark.parametrize("how", ["eager", "reference"])
def test_numpys_own_calls_warn_at_the_users_line_under_the_callers_errstate(how):
    """``reference.apply`` takes NumPy's messages (``np.errstate`` "log") and reports them
    after the call as the caller's error state says: a warning names the user's line (NumPy's
    own named reference.py), a raise is NumPy's FloatingPointError, "call" gets NumPy's
    flags, "ignore" is silent."""
    x, big = la.asarray(F64), la.asarray(BIG32)
    with _run_as(how):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            np.asarray(la.log(x))
            np.asarray(la.sum(big * big))
        got = [(str(w.message), w.filename) for w in caught if w.category is RuntimeWarning]
        assert sorted(m for m, _ in got) == ["divide by zero encountered in log",
                                             "invalid value encountered in log",
                                             "overflow encountered in multiply"]
        assert {f for _, f in got} == {__file__}
        with np.errstate(divide="raise"), pytest.raises(
                FloatingPointError, match="divide by zero encountered in log"):
            np.asarray(la.log(x * 1))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="ignore"):
                np.asarray(la.log(x * 2))
        assert errcall_seen(lambda: np.asarray(la.asarray(F64) / 0.0)) == \
            [("divide by zero", 1), ("invalid value", 8)]


def test_numpys_own_calls_take_the_cheap_error_state_path_and_leave_the_state_as_it_was():
    """``reference.apply`` sets its "log" error state through NumPy's private context variable
    (``_extobj_contextvar``, ``_make_extobj``: numpy is pinned below 2.5), not
    ``np.errstate`` (a quarter of an eager op's time on 5,000 elements); a NumPy that moves
    them falls back to ``np.errstate``, which this test then flags. Threads each get their own
    errors, and the caller's state is untouched."""
    from concurrent.futures import ThreadPoolExecutor

    from lazyarr.backends import reference
    assert reference._EXTOBJ is not None and reference._MAKE_EXTOBJ is not None
    before = np.geterr()
    with la.config(mode="eager"):
        np.asarray(la.asarray(F64) + 1)

        def seen(k):
            x = la.asarray(F64)
            return errcall_seen(lambda: np.asarray(la.log(x) if k else la.sqrt(x - 2)))
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(seen, [0, 1, 2, 0, 1, 2]))
    assert got[1] == got[2] == [("divide by zero", 1), ("invalid value", 8)]
    assert got[0] == [("invalid value", 8)]
    assert np.geterr() == before


def test_every_thread_reports():
    # big enough to run on every thread of the pool; the zero is in the last block
    x = np.ones(1 << 21)
    x[-1] = 0.0
    assert _lazy(np.log, x) == ["divide by zero encountered in log"]
    assert _lazy(lambda a: np.sum(np.log(a)), x) == ["divide by zero encountered in log"]


def test_the_warning_names_the_users_line():
    x = la.asarray(F64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        la.log(x).compute()
    raised = [w for w in caught if w.category is RuntimeWarning]
    assert len(raised) == 2 and all(w.filename == __file__ for w in raised)   # divide, invalid


def test_errstate_ignore_raise_call_and_seterr():
    x = la.asarray(F64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="ignore"):
            la.log(x).compute()
        with np.errstate(divide="ignore", invalid="ignore"):
            (la.log(x) * 2).compute()
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError,
                                                    match="divide by zero encountered in log"):
        la.log(x * 1).compute()
    y = la.log(x * 3)
    with np.errstate(invalid="raise", divide="ignore"), pytest.raises(FloatingPointError,
                                                                      match="invalid value"):
        y.compute()
    assert not y.is_materialized          # a raise leaves the array pending, as it was
    assert errcall_seen(lambda: (la.asarray(F64) / 0.0).compute()) == \
        [("divide by zero", 1), ("invalid value", 8)]
    old = np.seterr(divide="raise")
    try:
        with pytest.raises(FloatingPointError):
            (1.0 / la.asarray(F64)).compute()
    finally:
        np.seterr(**old)


def test_underflow_follows_errstate_too():
    x = la.asarray(np.array([1e-300]))
    assert _messages(lambda: (x * 1e-300).compute()) == []      # NumPy ignores it by default
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(under="warn"):
            (x * 1e-200).compute()
    assert [str(w.message) for w in caught] == ["underflow encountered in multiply"]


def test_in_place_and_jit_replays_report_as_well():
    x = la.asarray(F64.copy())
    assert _messages(lambda: x.__itruediv__(0.0)) == ["divide by zero encountered in divide",
                                                       "invalid value encountered in divide"]
    f = la.jit(lambda a: la.log(a) + 1)
    a = la.asarray(np.array([1.0, 2.0]))
    f(a)
    assert _messages(lambda: f(la.asarray(np.array([0.0, 1.0])))) == \
        ["divide by zero encountered in log"]


@pytest.mark.parametrize("backend", [None, "reference"])
@pytest.mark.parametrize("call", [
    lambda m, a: m.mean(a), lambda m, a: m.mean(a, keepdims=True), lambda m, a: m.mean(a, axis=0),
    lambda m, a: m.mean(a, axis=1), lambda m, a: m.var(a), lambda m, a: m.var(a, axis=0),
    lambda m, a: m.std(a, axis=1), lambda m, a: m.std(a, axis=0, ddof=1),
])
def test_reductions_of_empty_slices_warn_as_numpy(call, backend):
    """mean/var/std over no element: NumPy's "Mean of empty slice" / "Degrees of freedom"
    and then the 0/0 of its division ("invalid value encountered in (scalar) divide", none
    for an empty result), once each: the fused kernels are quiet, the reference backend's
    NumPy calls do not repeat them."""
    z = np.zeros((0, 3))

    def messages(fn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn()
        return [str(c.message) for c in caught]

    want = messages(lambda: call(np, z * 1))
    with backends.use_backend(backend):
        assert messages(lambda: call(la, la.asarray(z) * 1)) == want
        with np.errstate(invalid="ignore"):
            assert messages(lambda: call(la, la.asarray(z) * 1)) == \
                messages(lambda: call(np, z * 1))
        if any("invalid" in m for m in want):
            with np.errstate(invalid="raise"), pytest.raises(FloatingPointError), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                call(la, la.asarray(z) * 1)


@pytest.mark.parametrize("threads", [1, 2])
def test_one_block_among_many_names_its_instruction(threads):
    """The VM tests the status once per block and runs a block that raised a flag again,
    noting after each instruction (lz_exec_block): the messages are NumPy's whichever block
    raised, on any thread count, and the values are the first run's."""
    from lazyarr.backends import cpu_fused
    old = cpu_fused.get_num_threads()
    cpu_fused.set_num_threads(threads)
    try:
        a = np.linspace(0.5, 3.0, 200_000)
        a[77_777] = 0.0                   # log: divide by zero, in one block
        a[150_001] = -1.0                 # log: invalid, in another
        b = np.full_like(a, 1e300)
        b[3] = 1e305                      # exp(a) * b overflows in the multiply only
        fns = [lambda x: np.sqrt(np.abs(x) + 1) * np.log(x) - 2,
               lambda x, y: np.exp(x) * y + 1]
        for fn, args in ((fns[0], (a,)), (fns[1], (a, b))):
            assert _lazy(fn, *args) == _numpy(fn, *args)
            with np.errstate(all="ignore"):
                np.testing.assert_array_equal(
                    np.asarray(fn(*(la.asarray(x) for x in args))), fn(*args))
    finally:
        cpu_fused.set_num_threads(old)


def test_a_write_into_an_input_notes_every_instruction(monkeypatch):
    """``x[...] = f(x)`` computed straight into ``x``: the block has overwritten what it read,
    so the VM notes the flags after each instruction on the first run instead of running a
    block again (``out_read``): NumPy's values and messages."""
    from lazyarr.backends import cpu_fused
    runs = []
    execute = cpu_fused._cpu_vm.execute

    def spy(*args, **kwargs):
        runs.append(kwargs.get("out_read"))
        return execute(*args, **kwargs)

    monkeypatch.setattr(cpu_fused._cpu_vm, "execute", spy)
    a = np.linspace(-1.0, 3.0, 100_000)
    a[5_000] = 0.0
    want = a.copy()
    expected = warning_messages(lambda: want.__setitem__(Ellipsis, np.log(want) * 2 + 1))
    with la.config(mode="lazy", device="cpu"):
        x = la.asarray(a.copy())

        def write() -> None:
            x[...] = la.log(x) * 2 + 1

        got = warning_messages(write)
        np.testing.assert_array_equal(np.asarray(x), want)
        assert runs == [True]             # (computed into x, which it reads)
        fresh = np.asarray(la.log(x) * 2 + 1)
        assert runs == [True, False]
        del fresh
    assert got == expected == ["divide by zero encountered in log",
                               "invalid value encountered in log"]


def _warned_at(fn):
    """(file name, line) of each warning ``fn`` gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(os.path.basename(w.filename), w.lineno, str(w.message)) for w in caught]


def test_nan_function_cross_and_isclose_warnings_name_the_users_line():
    """lazyarr's own warnings of the nan functions, cross and isclose name the user's line, as
    NumPy's do, not a line of lazyarr's (they had fixed stack levels, one short through
    lazyarr's dispatch)."""
    cases = [
        (lambda m: m.nanmean(m.asarray([np.nan])), "Mean of empty slice"),
        (lambda m: m.nanmax(m.asarray([np.nan])), "All-NaN slice encountered"),
        (lambda m: m.cross(m.asarray([1.0, 2.0]), m.asarray([3.0, 4.0])), "Arrays of 2-dimensional"),
        (lambda m: m.isclose(m.asarray([1.0]), m.asarray([1.0]), atol=np.inf), "One of rtol or atol"),
    ]
    here = os.path.basename(__file__)
    for case, message in cases:
        got = _warned_at(lambda: np.asarray(case(la)))
        assert len(got) == 1 and got[0][2].startswith(message), (message, got)
        assert got[0][0] == here, (message, got)       # this file: the line that called
