"""A new cuda kernel's first calls run op by op while it compiles in the background
(``la.config(compile="background")``: lazyarr/backends/cuda/first_calls.py).

Held: the compile of every new kernel is held (its future never completes while the test runs),
so every call of an eligible program runs op by op; its values and NumPy's floating-point
warnings are checked against the kernel's, and the cuda FP-error suite runs again that way.
Then the path end to end: the kernel launched once its compile is done, a failed compile
raised at the next call, the programs that wait for their compile (the option and the compile
thread: tests/test_compile_thread.py). On the GPU
(``pytest -m gpu``) op by op is CuPy; on the simulated device NumPy.
"""
from __future__ import annotations

import concurrent.futures

import numpy as np
import pytest
import test_gpu_fp_errors as FP
from helpers import GPU_DTYPES, SIMULATED, assert_same, random_array
from test_fp_errors import CASES

import lazyarr as la
from lazyarr._registry import TRANSCENDENTAL
from lazyarr.backends.cuda.first_calls import runs_op_by_op

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy")]


def _backend():
    if SIMULATED:
        from lazyarr.backends.cuda.simulate import BACKEND
    else:
        from lazyarr.backends.cuda.backend import BACKEND
    return BACKEND


@pytest.fixture
def fresh(monkeypatch):
    """The cuda backend with no kernel cached in it, compiles in the background."""
    backend = _backend()
    monkeypatch.setattr(backend, "_entries", {})
    monkeypatch.setattr(backend, "_kernels", {})    # (what another test file compiled)
    monkeypatch.setattr(backend, "_later", {})
    monkeypatch.setattr(backend, "_through", {})
    with la.config(compile="background", device="cuda", mode="lazy"):
        yield backend


class _Runs:
    """How many calls ran op by op since the test began (truthy when some did). Counted by
    first_calls itself: a spy's frame would stand between lazyarr's and the user's line that
    the warnings name."""
    def __init__(self):
        from lazyarr.backends.cuda import first_calls
        self.stats, self.start = first_calls.stats, first_calls.stats["calls"]

    def __len__(self):
        return self.stats["calls"] - self.start

    def __eq__(self, n):
        return len(self) == n


@pytest.fixture
def runs():
    return _Runs()


@pytest.fixture
def held(fresh, monkeypatch, runs):
    """Every new kernel's compile held: the calls run op by op. Yields their count. A call
    that must take the kernel instead (a float32 value CuPy may have flushed) compiles it
    then, in its own thread."""
    monkeypatch.setattr(fresh, "compile_later", lambda rendered, cc: concurrent.futures.Future())
    monkeypatch.setattr(fresh, "loaded", lambda rendered, cc: None)     # no disk cache either
    waits = type(fresh)._compiled_now

    def compiled_now(self, key):
        self._start_compiles()
        later = self._later.get(key)
        if later is not None and not later.future.done():
            later.future.set_result(self.load(later.rendered, later.cc))
        return waits(self, key)
    monkeypatch.setattr(type(fresh), "_compiled_now", compiled_now)
    yield runs


def _flushed():
    """How many calls have taken the kernel as a float32 value may have been flushed."""
    from lazyarr.backends.cuda import first_calls
    return first_calls.stats["flushed"]


def _launches(monkeypatch, backend):
    count = []
    real = type(backend).launch
    monkeypatch.setattr(type(backend), "launch", lambda self, e, a: count.append(1) or real(self, e, a))
    return count


EXPRESSIONS = {
    "chain": lambda x, y: la.sqrt(la.abs(x * y + 1.5)) * la.tanh(x) - y,
    "axpy": lambda x, y: x * 2.5 + y,
    "compare and where": lambda x, y: la.where(x > y, x - y, y * 3),
    "cast": lambda x, y: (x + y).astype(np.float64) / 3,
    "sum": lambda x, y: la.sum(x * y + 1),
    "row sums": lambda x, y: la.sum(x - y, axis=1),
    "column max": lambda x, y: la.max(x * y, axis=0),
    "mean": lambda x, y: la.mean(x + y),
    "any": lambda x, y: la.any(x > y, axis=1),
    "maximum": lambda x, y: la.maximum(x, y) * 2,
    "minimum of a scalar": lambda x, y: la.minimum(x - y, 0),
    "fmax and fmin": lambda x, y: la.fmax(x, y) - la.fmin(y, x),
}
_EXACT_SUMS = {"chain": False, "sum": False, "row sums": False, "mean": False}


@pytest.mark.parametrize("dtype", [d for d in GPU_DTYPES if d.kind in "iuf"], ids=str)
@pytest.mark.parametrize("name", list(EXPRESSIONS))
def test_op_by_op_gives_the_kernels_values(name, dtype, held, rng):
    """The same values as the kernel's: maps exactly (the transcendentals within the GPU
    suite's tolerance: CUDA's math functions on both sides), sums to their last bits."""
    xs = random_array(rng, dtype, (33, 70)), random_array(rng, dtype, (33, 70))
    fn = EXPRESSIONS[name]
    with np.errstate(all="ignore"):
        try:
            # (the program of the call's materialization, planned, not run)
            program = la.explain(lambda: np.asarray(fn(*(la.asarray(a) for a in xs)))).program
        except TypeError:       # (tanh of bool, ...: the same error as NumPy's, both paths)
            return
        first = np.asarray(fn(*(la.asarray(a) for a in xs)))
        # (float32: its subnormal edge values take the kernel instead: test_float32_values_...)
        assert runs_op_by_op(program) and held == 1
        with la.config(compile="wait"):
            kernel = np.asarray(fn(*(la.asarray(a) for a in xs)))
    assert first.dtype == kernel.dtype and first.shape == kernel.shape
    inexact = name == "chain" or (not _EXACT_SUMS.get(name, True) and kernel.dtype.kind == "f")
    if inexact:
        tol = {2: 2e-3, 4: 2e-5, 8: 1e-12}[kernel.dtype.itemsize]
        np.testing.assert_allclose(first, kernel, rtol=tol, atol=tol)
    else:
        assert_same(first, kernel)


@pytest.mark.parametrize("op, dtype", [
    (op, dt) for op in ("maximum", "minimum", "fmax", "fmin", "sign")
    for dt in (np.float16, np.float32, np.float64, np.int32, np.bool_)
    if not (op == "sign" and dt is np.bool_)])      # (NumPy has no sign of bool)
def test_selects_pick_the_kernels_operand_bit_for_bit(op, dtype, held):
    """Ties of signed zeros and NaNs of either sign and payload in either operand: the same
    bits as the kernel's select (cuda/templates.py), where CuPy's own would give a canonical
    NaN and CUDA's zero ties."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        nan2 = -np.array(np.nan, dt)                # a NaN of the other sign
        a = np.array([0.0, -0.0, np.nan, 1.0, np.nan, nan2, -np.inf, 2.0], dt)
        b = np.array([-0.0, 0.0, 1.0, np.nan, nan2, np.nan, -np.inf, 2.0], dt)
    else:
        a = np.array([0, 1, 1, 0, 5, -3, 7, 7][: 8]).astype(dt)
        b = np.array([1, 0, 1, 0, 4, -2, 7, 8]).astype(dt)
    fn = getattr(la, op)
    operands = (np.concatenate([a, b]),) if op == "sign" else (a, b)
    first = np.asarray(fn(*map(la.asarray, operands)))
    assert held, "the call did not run op by op"
    with la.config(compile="wait"):
        kernel = np.asarray(fn(*map(la.asarray, operands)))
    assert first.dtype == kernel.dtype == dt
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    np.testing.assert_array_equal(first.view(bits), kernel.view(bits))


def test_transcendentals_are_the_ones_the_kernels_call(held, rng):
    """Each elementwise transcendental op by op against the kernel's: float32 bit for bit
    (tools/device/ftz_probe.py compares every float32 value on a GPU), float64 within 1e-12."""
    flushed = _flushed()
    x = rng.uniform(0.1, 0.9, 257)
    for dtype in (np.float32, np.float64):
        for op in sorted(TRANSCENDENTAL):
            fn = getattr(la, op, None)
            if fn is None or getattr(fn, "nin", 1) != 1:
                continue
            with np.errstate(all="ignore"):
                first = np.asarray(fn(la.asarray(x.astype(dtype))))
                with la.config(compile="wait"):
                    kernel = np.asarray(fn(la.asarray(x.astype(dtype))))
            if dtype is np.float32:
                assert_same(first, kernel)
            else:
                np.testing.assert_allclose(first, kernel, rtol=1e-12, atol=1e-12, err_msg=op)
    assert held and _flushed() == flushed


@pytest.mark.parametrize("name, fn, arrays", CASES, ids=[c[0] for c in CASES])
def test_the_warnings_are_numpys_op_by_op(name, fn, arrays, held):
    """(The cases whose programs run op by op do so; the others wait for their kernel.)"""
    FP.test_the_warnings_are_numpys(name, fn, arrays)


@pytest.mark.parametrize("dt", FP.FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", [op for op in FP.UNARY if op not in ("spacing", "rad2deg")])
def test_unary_edge_values_op_by_op(op, dt, held):
    FP.test_unary_ops_each_edge_value(op, dt)
    assert held or (op, dt) == ("exp2", np.float32)   # (waits: first_calls.FLOAT32_NOT_THE_KERNELS)


@pytest.mark.parametrize("dt", FP.FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "power", "arctan2"])
def test_binary_edge_values_op_by_op(op, dt, held):
    FP.test_binary_ops_each_pair_of_edge_values(op, dt)
    assert held


@pytest.mark.parametrize("check", [FP.test_reductions,
                                   FP.test_the_warning_names_the_users_line,
                                   FP.test_errstate_ignore_raise_call,
                                   FP.test_in_place_write_and_jit_replays],
                         ids=lambda f: f.__name__)
def test_fp_error_rules_op_by_op(check, held):
    check()
    assert held


def test_casts_op_by_op(held):
    for src, dst in [(np.float64, np.float16), (np.int64, np.float16), (np.int8, np.float64)]:
        FP.test_casts(src, dst)
    assert held


def test_the_kernel_runs_once_compiled(fresh, monkeypatch, runs):
    monkeypatch.setattr(fresh, "loaded", lambda rendered, cc: None)     # not in the disk cache
    launches = _launches(monkeypatch, fresh)
    x = la.asarray(np.arange(1000.0))
    want = np.cos(np.arange(1000.0) * 0.25) + 7.5
    first = np.asarray(la.cos(x * 0.25) + 7.5)
    assert runs == 1 and not launches
    assert la.wait_compiles(timeout=120) == 0
    again = np.asarray(la.cos(x * 0.25) + 7.5)
    assert runs == 1 and launches == [1]
    np.testing.assert_allclose(first, want, rtol=1e-12)
    assert_same(again, first)
    np.asarray(la.cos(x * 0.25) + 7.5)
    assert launches == [1, 1] and runs == 1


def test_a_failed_compile_raises_at_the_next_call(fresh, monkeypatch):
    def broken(rendered, cc):
        raise ValueError("no such instruction")
    monkeypatch.setattr(fresh, "load", broken)
    monkeypatch.setattr(fresh, "loaded", lambda rendered, cc: None)     # not in the disk cache
    x = la.asarray(np.arange(10.0))
    np.testing.assert_array_equal(np.asarray(x * 3 + 1), np.arange(10.0) * 3 + 1)
    assert la.wait_compiles(timeout=60) == 0
    with pytest.raises(RuntimeError, match="could not compile the CUDA kernel.*no such instruction"):
        np.asarray(x * 3 + 1)


@pytest.mark.parametrize("case", ["complex", "random", "host op", "remainder",
                                  "floor_divide", "hypot", "integer power",
                                  "float to int", "floor of int", "to float16",
                                  "int32 to float16", "float32 exp2"])
def test_programs_op_by_op_cannot_run_wait_for_their_kernel(case, fresh, monkeypatch, runs):
    later = []
    monkeypatch.setattr(fresh, "compile_later", lambda r, cc: later.append(1) or concurrent.futures.Future())
    x = la.asarray(np.linspace(0.5, 2, 64))
    if case == "complex":
        got, want = (x * 1j + 2) * 3, (np.linspace(0.5, 2, 64) * 1j + 2) * 3
    elif case == "random":
        got = la.random.default_rng(5, fused=True).random(64) * x
        want = np.asarray(la.asarray(la.random.default_rng(5, fused=True).random(64),
                                     device="cpu")) * np.linspace(0.5, 2, 64)
    elif case == "host op":
        got, want = la.logaddexp(x, 1.0) * 2, np.logaddexp(np.linspace(0.5, 2, 64), 1.0) * 2
    else:       # CuPy's values differ from NumPy's (first_calls.SAME_ON_CUPY)
        xn = np.linspace(0.5, 2, 64)
        fn = {"remainder": lambda a: (a + 1) % 0.75, "floor_divide": lambda a: (a * 3) // 0.5,
              "hypot": lambda a: np.hypot(a, 2.0) + 1,               "integer power": lambda a: (a * 4).astype(np.int64) ** 3 + 1,
              "float to int": lambda a: (a * 7).astype(np.int32) + 1,
              "floor of int": lambda a: np.floor(a.astype(np.int64) * 3) + 1,
              "to float16": lambda a: (a * 3).astype(np.float16) + 1,
              "int32 to float16": lambda a: (a + 0).astype(np.float16) + 1,
              # (CuPy's -ftz=true makes float32 exp2 an approximation: first_calls says)
              "float32 exp2": lambda a: np.exp2(a) + 1}[case]
        if case == "int32 to float16":
            xn = np.arange(64, dtype=np.int32) * 1001
            x = la.asarray(xn)
        elif case == "float32 exp2":
            xn = np.linspace(0.5, 2, 64, dtype=np.float32)
            x = la.asarray(xn)
        got, want = fn(x), fn(xn)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6 if case == "float32 exp2" else 1e-12)
    assert not later and runs == 0


_T = np.finfo(np.float32).tiny
#: float32 values that CuPy's -ftz=true kernels would flush (log(1e-40) -inf, 1e-20 * 1e-20 0):
#: (function, its operands) as NumPy computes them
FLUSHED = {
    "subnormal input": (lambda a: np.log(a) * (a > 0), [np.full(64, 1e-40, np.float32)]),
    "subnormal constant": (lambda a: a * np.float32(1e-40) + 0, [np.linspace(1, 2, 64, dtype=np.float32)]),
    "product": (lambda a, b: a * b + 0, [np.full(64, 1e-20, np.float32), np.linspace(0.5e-20, 1e-20, 64, dtype=np.float32)]),
    "difference": (lambda a, b: (a - b) * 4, [np.full(64, _T * 1.5, np.float32), np.full(64, _T * 1.25, np.float32)]),
    "sum of two": (lambda a, b: (a + b) * 4, [np.full(64, _T * 1.5, np.float32), np.full(64, -_T * 1.25, np.float32)]),
    "quotient": (lambda a, b: a / b + 0, [np.full(64, 1e-20, np.float32), np.full(64, 1e20, np.float32)]),
    "exp": (lambda a: np.exp(a) * 2, [np.linspace(-100, -90, 64, dtype=np.float32)]),
    "arctan2": (lambda a, b: np.arctan2(a, b) * 2, [np.full(64, 1e-20, np.float32), np.full(64, 1e20, np.float32)]),
    "cast": (lambda a: (a * 0.5).astype(np.float32) * 2, [np.full(64, 2e-40)]),
    "sum": (lambda a: np.sum(a * 1), [np.array([_T * 1.5, -_T * 1.25], np.float32)]),
}


@pytest.mark.parametrize("case", list(FLUSHED))
def test_float32_values_cupy_would_flush_are_the_kernels(case, held):
    """A float32 program runs op by op, but where a value may be one CuPy's kernels flushed
    (a subnormal input or constant, or an op site's zero where the exact result is not zero:
    first_calls.FLUSH_TESTS), the call takes the kernel's value instead. On the simulated
    device NumPy flushes nothing, so only the inputs and constants take the kernel there."""
    fn, arrays = FLUSHED[case]
    flushed = _flushed()
    with np.errstate(all="ignore"):
        want = fn(*arrays)
        got = np.asarray(fn(*map(la.asarray, arrays)))
    assert_same(got, want, exact=case != "sum")
    assert want.dtype == np.float32
    assert held == 1
    assert _flushed() == flushed + (1 if not SIMULATED or "subnormal" in case else 0)


def test_a_float32_zero_is_a_flush_only_where_the_exact_result_is_not_zero():
    """The flush tests of first_calls, on a result CuPy flushed to zero and on true zeros."""
    from lazyarr.backends.cuda.first_calls import FLUSH_TESTS, _subnormal
    f32, zero = np.float32, np.zeros(3, np.float32)
    a, b = np.array([1e-20, 0.0, 3.0], f32), np.array([1e-20, 5.0, 0.0], f32)
    assert FLUSH_TESTS["multiply"](np, zero, a, b).tolist() == [True, False, False]
    c, d = np.array([_T * 1.5, 2.0, -0.0], f32), np.array([_T * 1.25, 2.0, 0.0], f32)
    assert FLUSH_TESTS["subtract"](np, zero, c, d).tolist() == [True, False, False]
    assert FLUSH_TESTS["add"](np, zero, c, -d).tolist() == [True, False, False]
    e = np.array([-100.0, -np.inf, 0.0], f32)
    assert FLUSH_TESTS["exp"](np, zero, e).tolist() == [True, False, True]
    assert FLUSH_TESTS["divide"](np, zero, np.array([1e-20, 1.0, 0.0], f32),
                                 np.array([1e20, np.inf, 2.0], f32)).tolist() == [True, False, False]
    assert bool(_subnormal(np, np.array([0.0, -0.0, _T, np.inf, np.nan], f32))) is False
    assert bool(_subnormal(np, np.array([1.0, -1e-45], f32)))
    assert bool(_subnormal(np, np.array([[1.0, 2.0], [3.0, 1e-40]], f32)[:, 1]))   # (a view)


def test_writes_into_arrays_while_the_kernel_compiles(held):
    base = np.arange(40.0).reshape(5, 8)
    u = la.asarray(base.copy())
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    v = la.asarray(base.copy())
    v[:, 2] = la.sin(v[:, 3]) + 1
    want_u, want_v = base.copy(), base.copy()
    want_u[1:-1, 1:-1] = 0.25 * (base[:-2, 1:-1] + base[2:, 1:-1] + base[1:-1, :-2] + base[1:-1, 2:])
    want_v[:, 2] = np.sin(base[:, 3]) + 1
    assert_same(np.asarray(u), want_u)
    np.testing.assert_allclose(np.asarray(v), want_v, rtol=1e-12)
    assert held


def test_the_compile_starts_after_the_first_result(fresh, monkeypatch):
    """A process's first compile imports Numba (~1 s, much of it holding the GIL): the call
    that runs op by op starts it after its own value is computed."""
    from lazyarr.backends.cuda import first_calls
    events = []
    real_run = first_calls.run
    monkeypatch.setattr(first_calls, "run", lambda *a: events.append("value") or real_run(*a))
    monkeypatch.setattr(fresh, "loaded", lambda rendered, cc: None)
    monkeypatch.setattr(fresh, "compile_later",
                        lambda r, cc: events.append("compile") or concurrent.futures.Future())
    x = la.asarray(np.arange(6.0))
    np.testing.assert_array_equal(np.asarray(la.sqrt(x) * 2 - x), np.sqrt(np.arange(6.0)) * 2 - np.arange(6.0))
    assert events == ["value", "compile"]
    np.asarray(la.sqrt(x) * 2 - x)      # still compiling: op by op, no second compile
    assert events == ["value", "compile", "value"]


def test_threads_share_a_kernel_compiling_in_the_background(fresh):
    """Several threads' first calls of one new expression: each gets its value (op by op or
    the kernel), and the kernel serves them all once compiled."""
    import threading
    x = la.asarray(np.linspace(0, 1, 300))
    want = np.linspace(0, 1, 300) * 1.75 - 0.5
    got, errors = [], []

    def call():
        try:
            with la.config(compile="background", device="cuda", mode="lazy"):
                for _ in range(5):
                    got.append(np.asarray(x * 1.75 - 0.5))
        except Exception as exc:        # (reported below)
            errors.append(exc)
    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(got) == 20
    for g in got:
        assert_same(g, want)
    assert la.wait_compiles(timeout=60) == 0
    assert_same(np.asarray(x * 1.75 - 0.5), want)


def test_a_call_without_memory_for_its_temporaries_waits_for_the_kernel(fresh, monkeypatch, runs):
    """Op by op needs temporaries the fused kernel does not: where they do not fit (CuPy's
    OutOfMemoryError is a MemoryError), the call waits for the kernel."""
    from lazyarr.backends.cuda import first_calls

    def no_memory(*args):
        raise MemoryError("out of memory allocating 4,294,967,296 bytes")
    monkeypatch.setattr(first_calls, "run", no_memory)
    launches = _launches(monkeypatch, fresh)
    x = la.asarray(np.linspace(-3, 3, 500))
    assert_same(np.asarray(la.abs(x) * 0.5 - x), np.abs(np.linspace(-3, 3, 500)) * 0.5 - np.linspace(-3, 3, 500))
    assert launches == [1]


def test_a_float_sites_test_is_one_isfinite():
    """(One CuPy kernel per site where ``abs`` and ``<`` are two: fewer compiles at a process's
    first new expression.) Integer division keeps its own test."""
    from lazyarr._program import Instr
    from lazyarr.backends.cuda.first_calls import _site_check
    f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
    usual, _ = _site_check(Instr("log", f32, (0,), None), (f32,))
    assert usual.co_names == ("isfinite", "_r")
    usual, _ = _site_check(Instr("floor_divide", i32, (0, 1), None), (i32, i32))
    assert "isfinite" not in usual.co_names
