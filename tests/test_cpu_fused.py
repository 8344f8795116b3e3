"""The fused CPU backend (``cpu-fused``): bit-identity, layouts, reductions, threads, cache.

This module imports the compiled backend directly: if the Cython extension was not
built, every test here fails (CI must exercise the fused backend, never skip it).
"""
from __future__ import annotations

import math
import os
import platform
import subprocess
import sys
import warnings

import numpy as np
import pytest
from helpers import DTYPES, random_array

import lazyarr as la
from lazyarr import backends
from lazyarr._memo import BuildOnce
from lazyarr._program import lower
from lazyarr._registry import ELEMENTWISE
from lazyarr.backends import cpu_fused  # ImportError here = the extension is not built: fail loudly

BIG = 3 * 4096 + 17          # several blocks, and a ragged last one


@pytest.fixture(autouse=True)
def fused():
    with la.config(mode="lazy", device="cpu"), backends.use_backend("cpu-fused"), \
            np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture
def threads():
    old = cpu_fused.get_num_threads()
    yield cpu_fused.set_num_threads
    cpu_fused.set_num_threads(old)


def test_backend_is_built_and_default():
    assert "cpu-fused" in backends.available()
    with backends.use_backend(None):
        assert backends.select("cpu", "lazy") is cpu_fused.BACKEND


def bits(a: np.ndarray) -> np.ndarray:
    """The raw bits (so NaN payloads and the sign of zero are compared too)."""
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def assert_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(bits(got), bits(want))


def _numpy(fn, *args):
    try:
        return fn(*args)
    except (TypeError, ValueError, OverflowError):
        return None


# ----------------------------------------------------------------------------- elementwise
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_elementwise_op_bit_identical(dtype, rng):
    """Every ufunc op of the registry, over several blocks, matches NumPy eager bit for bit."""
    a = random_array(rng, dtype, (BIG,))
    b = random_array(rng, dtype, (BIG,))
    if dtype.kind in "iu":
        b_pow = (np.abs(b.astype(np.int64)) % 5).astype(dtype)
    for op in ELEMENTWISE:
        if op.name == "where":
            continue
        args = (a,) if op.nin == 1 else (a, b_pow if op.name == "power" and dtype.kind in "iu" else b)
        want = _numpy(op.numpy, *args)
        if want is None:
            continue
        got = np.asarray(getattr(la, op.name)(*map(la.asarray, args)))
        assert_bits(got, want)


@pytest.mark.parametrize("src", DTYPES, ids=str)
def test_astype_bit_identical(src, rng):
    a = random_array(rng, src, (BIG,), edges=src.kind != "f")   # NaN/inf -> int is UB in C
    if src.kind == "f":
        a[:16] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 65504, -65504, 1e-8, 2.5, -2.5, 0.5, 1.5,
                  100, -100, 3.75, 7]
    for dst in DTYPES:
        if src.kind == "f" and dst.kind in "iub":
            x = a[np.isfinite(a)] if dst.kind != "b" else a
            x = np.clip(x, -100, 100) if dst.kind != "b" else x
            if dst.kind == "u":
                x = np.abs(x)
        else:
            x = a
        assert_bits(la.asarray(x).astype(dst), x.astype(dst))


def test_where_and_chain(rng):
    x = random_array(rng, np.float32, (BIG,))
    y = random_array(rng, np.float32, (BIG,))
    lx, ly = la.asarray(x), la.asarray(y)
    got = la.where(lx > ly, la.sqrt(abs(lx * ly + 1.5)) * la.tanh(lx) - ly, la.exp(-abs(ly)))
    want = np.where(x > y, np.sqrt(np.abs(x * y + np.float32(1.5))) * np.tanh(x) - y, np.exp(-np.abs(y)))
    assert_bits(got, want)
    # mixed dtypes: int8 * float64 scalar, int / int -> float64, comparisons with casts
    i = random_array(rng, np.int8, (BIG,))
    u = random_array(rng, np.uint16, (BIG,))
    li, lu = la.asarray(i), la.asarray(u)
    assert_bits((li * 2.5 + lu) / (lu + 1), (i * 2.5 + u) / (u + 1))
    assert_bits(la.where(li > 3, li, lu), np.where(i > 3, i, u))


LAYOUTS = {
    "strided": lambda a: a[::3],
    "reversed": lambda a: a[::-1],
    "transposed": lambda a: a[:12300].reshape(60, -1)[:, :50].T,
    "column": lambda a: a[:12299].reshape(-1, 7)[:, 2],
    "0-d": lambda a: np.asarray(a[5]),
    "empty": lambda a: a[:0],
    "empty2d": lambda a: a[:0].reshape(0, 3)[:, :2],
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_layouts_elementwise(layout, rng):
    a = LAYOUTS[layout](random_array(rng, np.float64, (BIG,)))
    b = LAYOUTS[layout](random_array(rng, np.float64, (BIG,)))
    la_, lb = la.asarray(a), la.asarray(b)
    assert_bits(la.hypot(la_, lb) * la.cos(la_) - 2.0, np.hypot(a, b) * np.cos(a) - 2.0)


def test_broadcasting(rng):
    m = random_array(rng, np.float32, (300, 70))
    row = random_array(rng, np.float32, (70,))
    col = random_array(rng, np.float32, (300, 1))
    s = np.float32(3.0)
    lm, lr, lc = la.asarray(m), la.asarray(row), la.asarray(col)
    assert_bits(la.maximum(lm * lr, lc) + la.asarray(s), np.maximum(m * row, col) + s)
    assert_bits(lc + lr, col + row)                 # outer-product-like: no input has the shape
    assert_bits(la.asarray(m.T) * 2, m.T * 2)
    z = np.float64(2.0)
    assert_bits(la.asarray(np.asarray(z)) + la.asarray(m), z + m)     # 0-d input


# ----------------------------------------------------------------------------- reductions
def _exact_sum(x: np.ndarray) -> float:
    return math.fsum(x.astype(np.float64).ravel().tolist())


@pytest.mark.parametrize("n", [1, 7, 129, 4096, 100_003])
def test_sum_accuracy_at_least_numpy(n, rng):
    """Float sums: error against the exact (fsum) value no worse than NumPy's pairwise sum."""
    x = (rng.standard_normal(n) * 10 + 3).astype(np.float32)
    exact = _exact_sum(x)
    scale = float(np.abs(x.astype(np.float64)).sum())
    got = float(la.sum(la.asarray(x)))
    err_np = abs(float(np.sum(x)) - exact)
    err_ours = abs(got - exact)
    assert err_ours <= max(err_np, np.finfo(np.float32).eps * abs(exact), 1e-30)
    assert err_ours <= 4 * np.finfo(np.float32).eps * scale
    x64 = x.astype(np.float64) * np.pi
    exact64 = _exact_sum(x64)
    err64 = abs(float(la.sum(la.asarray(x64))) - exact64)
    assert err64 <= max(abs(float(np.sum(x64)) - exact64), 1e-15 * abs(exact64)) * 1.0 + 1e-300


def test_var_std_mean_accuracy(rng):
    """One-pass var (per-block two-pass + Chan merge) vs the exact two-pass float64 value."""
    x = (rng.standard_normal(200_001) + 1e4).astype(np.float64)  # large mean: naive sums fail
    mean = _exact_sum(x) / x.size
    var = math.fsum(((x - mean) ** 2).tolist()) / x.size
    assert abs(float(la.mean(la.asarray(x))) - mean) <= 1e-14 * abs(mean)
    assert abs(float(la.var(la.asarray(x))) - var) <= 1e-10 * var
    assert abs(float(la.std(la.asarray(x), ddof=1)) - math.sqrt(var * x.size / (x.size - 1))) \
        <= 1e-10 * math.sqrt(var)
    m = x.reshape(-1, 1).repeat(3, axis=1)[:150_000] * [1, 2, 3]
    for axis in (0, 1, None):
        np.testing.assert_allclose(la.var(la.asarray(m), axis=axis), np.var(m, axis=axis), rtol=1e-9)


REDUCTION_CASES = [
    ((BIG,), None), ((300, 70), 0), ((300, 70), 1), ((300, 70), None), ((3, 5000), 0),
    ((5000, 3), 1), ((5000, 3), 0), ((20, 30, 40), 1), ((20, 30, 40), (0, 2)), ((20, 30, 40), (1, 2)),
    ((7, 1, 9), 1), ((0, 4), 0), ((4, 0), 0),
]


@pytest.mark.parametrize("op", ["sum", "mean", "var", "std", "prod", "min", "max", "argmin",
                                "argmax", "any", "all"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint8, np.bool_], ids=str)
def test_reductions_shapes_and_axes(op, dtype, rng):
    dtype = np.dtype(dtype)
    for shape, axis in REDUCTION_CASES:
        if op.startswith("arg") and isinstance(axis, tuple):
            continue
        a = random_array(rng, dtype, shape, edges=False)
        if op == "prod":
            a = (np.abs(a.astype(np.float64)) % 0.002 + 0.999).astype(dtype) if dtype.kind == "f" else a % 3
        try:
            want = getattr(np, op)(a, axis=axis)
        except ValueError:
            with pytest.raises(ValueError):
                getattr(la, op)(la.asarray(a), axis=axis)
            continue
        got = np.asarray(getattr(la, op)(la.asarray(a), axis=axis))
        assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want), (shape, axis)
        if op in ("sum", "mean", "var", "std", "prod") and got.dtype.kind == "f":
            # reference in float64 (NumPy itself rounds in float32 for float32 inputs)
            ref = getattr(np, op)(a.astype(np.float64), axis=axis)
            tol = {4: 1e-5, 8: 1e-12}[got.dtype.itemsize]
            np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.abs(a).max(initial=0) * 10)
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{shape} {axis}")


def test_reductions_of_layouts_and_expressions(rng):
    m = random_array(rng, np.float64, (400, 300), edges=False)
    for view in (m[::2, ::-3], m.T, m[:, 5:6], m[::-1]):
        v = la.asarray(view)
        for axis in (None, 0, 1):
            np.testing.assert_allclose(la.sum(v * v + 1, axis=axis), np.sum(view * view + 1, axis=axis),
                                       rtol=1e-12)
            np.testing.assert_array_equal(la.argmax(la.sin(v), axis=axis), np.argmax(np.sin(view), axis=axis))
    row = random_array(rng, np.float32, (300,), edges=False)
    np.testing.assert_allclose(la.mean(la.asarray(m) * la.asarray(row), axis=0, keepdims=True),
                               np.mean(m * row, axis=0, keepdims=True), rtol=1e-6)


def test_integer_reductions_wrap_exactly(rng):
    a = rng.integers(-128, 128, size=(50, 4000)).astype(np.int8)
    for kw in ({}, {"dtype": np.int8}, {"dtype": np.uint16}, {"dtype": np.int64}):
        for axis in (None, 0, 1):
            assert_bits(la.sum(la.asarray(a), axis=axis, **kw), np.sum(a, axis=axis, **kw))
    u = np.full(10_000, 2**63 + 12345, dtype=np.uint64)
    assert_bits(la.sum(la.asarray(u)), np.sum(u))
    assert_bits(la.prod(la.asarray(a[:, :30] | 1), axis=1), np.prod(a[:, :30] | 1, axis=1))
    i64 = rng.integers(-2**62, 2**62, size=9999)
    assert_bits(la.min(la.asarray(i64)), np.min(i64))
    assert_bits(la.argmax(la.asarray(i64)), np.argmax(i64))


def test_nan_semantics(rng):
    x = rng.standard_normal(BIG)
    x[[5000, 9000]] = np.nan
    lx = la.asarray(x)
    for op in ("min", "max", "sum", "mean", "argmin", "argmax"):
        np.testing.assert_array_equal(getattr(la, op)(lx), getattr(np, op)(x))
    m = x.reshape(-1, 1)[: 4096 * 3].reshape(3, 4096)
    for op in ("min", "max", "argmin", "argmax"):
        for axis in (0, 1):
            np.testing.assert_array_equal(getattr(la, op)(la.asarray(m), axis=axis), getattr(np, op)(m, axis=axis))


def test_empty_and_zero_d_reductions():
    e = np.zeros((0, 5), np.float32)
    for op, kw in [("sum", {}), ("prod", {}), ("mean", {"axis": 0}), ("any", {}), ("all", {}),
                   ("sum", {"axis": 1}), ("var", {"axis": 0})]:
        assert_bits(getattr(la, op)(la.asarray(e), **kw), getattr(np, op)(e, **kw))
    z = np.float32(2.5)
    for op in ("sum", "mean", "var", "min", "argmax", "prod"):
        assert_bits(getattr(la, op)(la.asarray(np.asarray(z))), getattr(np, op)(np.asarray(z)))


# ----------------------------------------------------------------------------- threads, cache, plan
def test_threads_give_the_same_bits(threads, rng):
    x = random_array(rng, np.float32, (1 << 18,), edges=False)
    m = x.reshape(512, 512)
    results = {}
    for n in (1, 2, 3):
        threads(n)
        lx, lm = la.asarray(x), la.asarray(m)
        results[n] = [np.asarray(r) for r in (
            la.sum(la.sqrt(abs(lx)) * 3 - 1), la.var(lx), la.argmin(la.sin(lx)), la.sum(lm * lm, axis=0),
            la.sum(lm * lm, axis=1), la.std(lm, axis=0), la.tanh(lx) * 2)]
    for n in (2, 3):
        for a, b in zip(results[1], results[n]):
            assert_bits(a, b)


def test_when_a_run_takes_the_pool_and_goes_row_by_row(threads):
    """The two decisions of an elementwise run on medium arrays (tools/peers/medium_runs.py
    measures them): the pool from PARALLEL_WORK (elements x the program's work per element),
    rows when a gathered input's rows hold ROW_RUN_MIN_BYTES (ROW_RUN_MANY_BYTES for two or
    more gathered inputs). Both give the same bits either way (test_threads_give_the_same_bits,
    the layout tests)."""
    threads(2)

    def decide(expr):
        lowered = lower(expr._node)
        c = cpu_fused.get_compiled(lowered.program)
        inputs = [cpu_fused._prepare(b, dt) for b, dt in zip(lowered.inputs, c.input_dtypes)]
        launch = cpu_fused._launch(c, lowered, inputs)
        return launch.threads, launch.outer, c.work

    a64 = la.asarray(np.ones(1 << 16))
    assert decide(a64 + 1) == (1, 0, 16)                 # one add: 2^20 units, one thread
    assert decide(la.tanh(a64) * 2)[0] == 2              # an expensive op: 2^16 x 48 units
    assert decide(la.asarray(np.ones(1 << 18)) + 1)[0] == 2
    assert decide(la.asarray(np.ones(1 << 20, np.float32)) + 1)[0] == 2
    for side, dtype, outer in ((150, np.float64, 1), (100, np.float64, 0), (300, np.float32, 1),
                               (200, np.float32, 0)):
        u = la.asarray(np.ones((side, side), dtype))
        stencil = u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
        assert decide(stencil)[1] == outer, (side, dtype)
    for side, dtype, outer in ((300, np.float64, 1), (200, np.float64, 0), (300, np.float32, 0),
                               (600, np.float32, 1)):
        m, row = la.asarray(np.ones((side, side), dtype)), la.asarray(np.ones(side, dtype))
        assert decide(m * row)[1] == outer, (side, dtype)


def test_a_repeated_statement_finds_its_launch_and_settings_still_count(threads, monkeypatch):
    """``_launch`` keeps an elementwise launch by program, scalars, the inputs' layouts and
    the settings its rules read: new memory of the same layout finds it (the same object),
    another layout, scalar (-0.0 against 0.0: the bytes decide, not ==), thread count or
    PARALLEL_WORK makes another, and the values stay NumPy's."""
    def launch_of(expr):
        lowered = lower(expr._node)
        c = cpu_fused.get_compiled(lowered.program)
        inputs = [cpu_fused._prepare(b, dt) for b, dt in zip(lowered.inputs, c.input_dtypes)]
        return cpu_fused._launch(c, lowered, inputs)

    threads(1)
    A, B = np.ones((200, 300)), np.ones((200, 300))
    first = launch_of(la.asarray(A)[1:-1, 1:-1] * 2.0 + la.asarray(B)[:-2, 1:-1])
    again = launch_of(la.asarray(A.copy())[1:-1, 1:-1] * 2.0 + la.asarray(B.copy())[:-2, 1:-1])
    assert again is first and first.threads == 1
    other = launch_of(la.asarray(np.ones((198, 298))) * 2.0 + la.asarray(B)[:-2, 1:-1])
    assert other is not first and other.shape == first.shape
    assert launch_of(la.asarray(A)[2:, :-2] * 2.0 + la.asarray(B)[:-2, 1:-1]) is first
    threads(2)
    assert launch_of(la.asarray(A)[1:-1, 1:-1] * 2.0 + la.asarray(B)[:-2, 1:-1]) is not first
    monkeypatch.setattr(cpu_fused, "PARALLEL_WORK", 1)
    assert launch_of(la.asarray(A)[1:-1, 1:-1] * 2.0 + la.asarray(B)[:-2, 1:-1]).threads == 2
    X = np.linspace(-1.0, 1.0, 40_000).reshape(200, 200)
    for zero in (0.0, -0.0, 0.0):
        got = np.asarray(la.asarray(X) * zero + zero)
        want = X * zero + zero
        np.testing.assert_array_equal(got, want)
        assert (np.signbit(got) == np.signbit(want)).all()


def test_arithmetic_heavy_programs_prefetch_on_smaller_blocks():
    """The VM prefetches each input's next block, on blocks of 2,048 elements, for programs of
    ``PREFETCH_STEPS`` instructions per input or more (docs/notes/cpu.rst, "Prefetching the
    next block"); memory-bound ones keep 4,096-element blocks without."""
    def block(expr):
        c = cpu_fused.get_compiled(lower(expr._node).program)
        return c.vm.block, c.vm.prefetch

    x, y = la.asarray(np.ones(1 << 16, np.float32)), la.asarray(np.ones(1 << 16, np.float32))
    assert block(x * y + 1.5) == (4096, False)
    assert block(la.sin(x)) == (4096, False)
    assert block(((x * 0.5 + 1.0) * x + 2.0) * x + 3.0) == (2048, True)
    assert block(la.sqrt(la.abs(x * y + 1.5)) * la.tanh(x) - y) == (2048, True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_own_sqrt_loop_gives_numpys_bits(dtype, threads):
    """sqrt is the VM's own loop (AVX2 where NumPy's is SSE): IEEE sqrt is exact, so every
    bit is NumPy's, NaN payloads and signed zeros included, on contiguous and strided input,
    with NumPy's "invalid" warning for a negative."""
    edges = np.array([4, 2, -1, -0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-40, 5e-324,
                      np.finfo(dtype).max, np.finfo(dtype).tiny, 0.3], dtype)
    rng = np.random.default_rng(5)
    data = np.concatenate([edges, np.abs(rng.standard_normal(9000)).astype(dtype) * 1e3,
                           rng.standard_normal(1000).astype(dtype)])
    data[100:105] = np.frombuffer(np.array([0x7FC01234, 0xFFC00001, 0x7F800001, 0x00000001,
                                            0x80000001], np.uint32).tobytes(), np.float32)
    for n in (1, 2):
        threads(n)
        for a in (data, data[::-3]):
            with np.errstate(invalid="ignore"):
                expected = np.sqrt(a)
                got = la.sqrt(la.asarray(a))
                assert "lazyarr sqrt loop" in la.explain(got).kernels[0].source
                assert_bits(got, expected)
    with np.errstate(invalid="warn"), pytest.warns(RuntimeWarning, match="invalid value encountered in sqrt"):
        np.asarray(la.sqrt(la.asarray(data) * 1))


@pytest.mark.parametrize("rows", [1, 3, 7, 8, 9, 15, 17, 63, 100, 1000])
def test_column_sums_of_any_row_count(rows, threads):
    """Column sums take eight rows per pass over the partials, then the rest one by one; the
    result is the float64 sum rounded once (to rounding), and the same bits on any thread count."""
    rng = np.random.default_rng(rows)
    for dtype in (np.float32, np.float64):
        m = rng.standard_normal((rows, 300)).astype(dtype)
        results = []
        for n in (1, 2):
            threads(n)
            for expr in (la.sum(la.asarray(m), axis=0), la.sum(la.abs(la.asarray(m)), axis=0),
                         la.sum(la.asarray(m) * 2 + 1, axis=0)):
                results.append(np.asarray(expr))
        exact = [np.sum(t.astype(np.float64), axis=0) for t in (m, np.abs(m), m * 2 + 1)]
        for got, want in zip(results, exact * 2):     # (the float64 sum, rounded once)
            np.testing.assert_allclose(got, want.astype(dtype), rtol=1e-6 if dtype == np.float32 else 1e-13,
                                       atol=1e-6 if dtype == np.float32 else 1e-12)
        for a, b in zip(results[:3], results[3:]):
            assert_bits(a, b)


def _row_reduction_cases(rng, rows, length):
    """(name, lazy builder, NumPy reference) of every reduction kind over rows of ``length``."""
    f32 = rng.standard_normal((rows, length)).astype(np.float32)
    f64 = rng.standard_normal((rows, length))
    f64[::7, length // 2] = np.nan                     # NaN rows, and signed zeros in others
    f64[1::7] = 0.0
    f64[1::7, ::2] = -0.0
    ints = rng.integers(-(2 ** 62), 2 ** 62, (rows, length))
    u8 = rng.integers(0, 255, (rows, length), dtype=np.uint8)
    c128 = (rng.standard_normal((rows, length)) + 1j * rng.standard_normal((rows, length)))
    shift = rng.standard_normal((rows, 1))
    return [
        ("sum f32", lambda: la.sum(la.asarray(f32) * 2, axis=1), np.sum(f32.astype(np.float64) * 2, axis=1).astype(np.float32)),
        ("abs sum f64", lambda: la.sum(la.abs(la.asarray(f64)), axis=-1), np.sum(np.abs(f64), axis=-1)),
        ("softmax-style shift", lambda: la.sum(la.exp(la.asarray(f64) - la.asarray(shift)), axis=1),
         np.sum(np.exp(f64 - shift), axis=1)),
        ("transposed input", lambda: la.sum(la.asarray(np.ascontiguousarray(f32.T)).T + 1, axis=1),
         np.sum(f32.astype(np.float64) + 1, axis=1).astype(np.float32)),
        ("mean keepdims", lambda: la.mean(la.asarray(f64) * 3, axis=1, keepdims=True), np.mean(f64 * 3, axis=1, keepdims=True)),
        ("max f64", lambda: la.max(la.asarray(f64) + 0.0, axis=1), np.max(f64 + 0.0, axis=1)),
        ("min f32", lambda: la.min(la.asarray(f32) - 1, axis=1), np.min(f32 - 1, axis=1)),
        ("max of squares", lambda: la.max(la.asarray(f32) * la.asarray(f32), axis=1), np.max(f32 * f32, axis=1)),
        ("argmax", lambda: la.argmax(la.asarray(f64) * 2, axis=1), np.argmax(f64 * 2, axis=1)),
        ("argmin", lambda: la.argmin(la.asarray(f32) + 1, axis=1), np.argmin(f32 + 1, axis=1)),
        ("var ddof", lambda: la.var(la.asarray(f32) * 2, axis=1, ddof=1), np.var(f32.astype(np.float64) * 2, axis=1, ddof=1).astype(np.float32)),
        ("std", lambda: la.std(la.asarray(f64) - 1, axis=1), np.std(f64 - 1, axis=1)),
        ("prod", lambda: la.prod(la.asarray(f64) * 0.5 + 1, axis=1), np.prod(f64 * 0.5 + 1, axis=1)),
        ("int sum wraps", lambda: la.sum(la.asarray(ints) * 3, axis=1), np.sum(ints * 3, axis=1)),
        ("int max", lambda: la.max(la.asarray(ints) - 1, axis=1), np.max(ints - 1, axis=1)),
        ("uint8 sum", lambda: la.sum(la.asarray(u8) + 1, axis=1), np.sum(u8 + 1, axis=1)),
        ("any", lambda: la.any(la.asarray(f32) > 1.5, axis=1), np.any(f32 > 1.5, axis=1)),
        ("all", lambda: la.all(la.asarray(f32) > -2, axis=1), np.all(f32 > -2, axis=1)),
        ("complex sum", lambda: la.sum(la.asarray(c128) * 2, axis=1), np.sum(c128 * 2, axis=1)),
        ("complex max", lambda: la.max(la.asarray(c128) + 1, axis=1), np.max(c128 + 1, axis=1)),
        ("3-d, last two axes", lambda: la.sum(la.asarray(f64.reshape(rows, -1, 1)) * 2, axis=(1, 2)),
         np.sum(f64.reshape(rows, -1, 1) * 2, axis=(1, 2))),
    ]


def test_row_reductions_pick_their_mode_by_row_length():
    """Rows of 8 elements to 2 KB (512 float32, 256 float64) run whole rows per block
    (``row_blocks``), longer ones a block at a time (``slot_major``), shorter ones column by column (``reduce_major``) but for float
    sums and means, which run whole rows from 2 elements (docs/notes/cpu.rst, "Short rows")."""
    modes = {v: k for k, v in cpu_fused._cpu_vm.MODES.items()}

    def mode(length, rows_min=cpu_fused.ROWS_MIN, itemsize=8):
        return modes[cpu_fused._reduction_plan((100_000, length), (1,), 4096, -1, rows_min, itemsize)[0]]
    assert [mode(n) for n in (2, 7, 8, 256, 257)] == \
        ["reduce_major", "reduce_major", "row_blocks", "row_blocks", "slot_major"]
    assert [mode(n, itemsize=4) for n in (256, 512, 513)] == ["row_blocks", "row_blocks", "slot_major"]
    assert [mode(n, cpu_fused.ROWS_MIN_SUM) for n in (1, 2, 7)] == ["reduce_major", "row_blocks", "row_blocks"]
    from lazyarr import _node
    x = la.asarray(np.ones((5000, 3)))
    for op, want in (("sum", "row_blocks"), ("max", "reduce_major")):     # rows of 3: by op
        node = _node.op_node(op, np.dtype(np.float64), (5000,), "cpu", ((x * 2)._node,),
                             ((1,), False, None, 0))
        lowered = lower(node)
        launch = cpu_fused._launch(cpu_fused.get_compiled(lowered.program), lowered, [x.to_numpy()])
        assert modes[launch.reduction[0]] == want


@pytest.mark.parametrize("length", [1, 2, 3, 7, 8, 15, 16, 33, 100, 127, 128, 256, 257, 513, 1500])
def test_reductions_over_rows_of_any_length(length, threads):
    """Reductions over rows (the last axis) of every length: rows of up to a block run whole
    rows per block (``row_blocks``), longer ones a block at a time (``slot_major``), a few
    elements long may go column by column (``reduce_major``). Every kind gives NumPy's value
    (float sums to rounding: float64 accumulation) and the same bits on 1 to 3 threads."""
    rows = max(3, 40_000 // length)         # past SERIAL_BELOW: 2 and 3 threads do split it
    cases = _row_reduction_cases(np.random.default_rng(length), rows, length)
    results = {}
    for n in (1, 2, 3):
        threads(n)
        for name, build, want in cases:
            with np.errstate(all="ignore"):
                got = np.asarray(build())
            if n == 1:
                assert got.dtype == want.dtype and got.shape == want.shape, name
                if got.dtype.kind in "fc":
                    tol = 1e-5 if got.dtype in (np.float32, np.complex64) else 1e-12
                    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
                    if name.startswith(("max", "min")):
                        assert_bits(got, want)            # extrema: NumPy's bits, signed zeros too
                else:
                    np.testing.assert_array_equal(got, want, err_msg=name)
                results[name] = got
            else:
                assert_bits(got, results[name])


@pytest.mark.parametrize("shape, axis", [((6, 5, 300), 1), ((40, 33, 1030), 1), ((3, 20, 7, 512), (1, 2)),
                                         ((9, 300, 257), 0), ((4, 64, 300), (0, 1))])
@pytest.mark.parametrize("layout", ["C", "reversed", "transposed", "broadcast"])
def test_middle_axis_reductions_read_in_place(shape, axis, layout, threads):
    """A reduced middle axis keeps an inner space that no single stride walks; blocks then
    end at the last inner dim's runs (of 256 elements or more) and each input is read in
    place at that dim's stride, instead of a gathered copy (lz_run_cut). Every kind, leaves
    and expressions, reversed and transposed inputs, a broadcast (stride 0) operand: NumPy's
    values (float sums to rounding), the same bits on 1 to 3 threads."""
    rng = np.random.default_rng(len(shape) * 7 + shape[-1])
    base = rng.standard_normal(shape).astype(np.float32)
    if layout == "reversed":
        a = base[..., ::-1]
    elif layout == "transposed":       # the same shape, memory in another order
        a = np.ascontiguousarray(base.swapaxes(0, -1)).swapaxes(0, -1)
    else:
        a = base
    if layout == "broadcast":          # the last dim at stride 0
        b = np.broadcast_to(rng.integers(-50, 50, shape[:-1] + (1,)), shape)
        la_b = la.broadcast_to(la.asarray(b[..., :1]), shape)
    else:
        b = rng.integers(-50, 50, shape)
        la_b = la.asarray(b)
    la_a = la.asarray(a)
    cases = [("sum", lambda: la.sum(la_a, axis=axis), np.sum(a.astype(np.float64), axis=axis).astype(np.float32)),
             ("mean", lambda: la.mean(la_a * 2, axis=axis), np.mean((a * 2).astype(np.float64), axis=axis).astype(np.float32)),
             ("var", lambda: la.var(la_a + la_b, axis=axis), np.var((a + b).astype(np.float64), axis=axis)),
             ("max", lambda: la.max(la_a - la_b, axis=axis), np.max(a - b, axis=axis)),
             ("argmin", lambda: la.argmin(la_a, axis=axis[0] if type(axis) is tuple else axis),
              np.argmin(a, axis=axis[0] if type(axis) is tuple else axis)),
             ("isum", lambda: la.sum(la_b * 3, axis=axis), np.sum(b * 3, axis=axis)),
             ("any", lambda: la.any(la_a > 2.5, axis=axis), np.any(a > 2.5, axis=axis))]
    check_on_threads(cases, threads, atol=1e-5)


def check_on_threads(cases, threads, atol: float) -> None:
    """Each ``(name, build, want)`` case on 1 thread against NumPy's ``want`` (floats to
    ``rtol`` 2e-5 and ``atol``), then on 2 and 3 threads the same bits as on 1."""
    results = {}
    for n in (1, 2, 3):
        threads(n)
        for name, build, want in cases:
            got = np.asarray(build())
            if n == 1:
                assert got.shape == np.shape(want), name
                if got.dtype.kind == "f":
                    np.testing.assert_allclose(got, want, rtol=2e-5, atol=atol, err_msg=name)
                else:
                    np.testing.assert_array_equal(got, want, err_msg=name)
                results[name] = got
            else:
                assert_bits(got, results[name])


@pytest.mark.parametrize("shape, key, axis", [
    ((40, 4096), (slice(1, -1), slice(1, -1)), None),       # a stencil's view: rows of 4094
    ((9, 5000), (slice(None), slice(3, None)), None),       # runs longer than a block
    ((30, 700), (slice(None, None, -1), slice(2, -3)), None),   # rows upside down
    ((7, 6, 600), (slice(None), slice(1, None), slice(None, -2)), (1, 2)),  # kept slots, mode A
    ((5, 3, 2100), (slice(None), slice(None), slice(None, None, -1)), None)])
def test_reductions_of_views_end_blocks_with_rows(shape, key, axis, threads, monkeypatch):
    """A full reduction of views (``sum(u[1:-1, 1:-1] + u[:-2, 1:-1])``) runs its blocks
    within the rows (cpu_fused._block_cut), so each view is read in place rather than gathered
    across a row's end: every kind, NumPy's values (float sums to rounding), the same bits on 1
    to 3 threads, and arg-reductions' flat positions."""
    rng = np.random.default_rng(shape[-1])
    base = rng.standard_normal(shape).astype(np.float32)
    ibase = rng.integers(-9, 9, shape)
    a, b = base[key], ibase[key]
    la_a, la_b = la.asarray(base)[key], la.asarray(ibase)[key]
    c = a + b
    n_outer = 0 if axis is None else 1
    assert cpu_fused._block_cut(a.shape, (cpu_fused._MODE_RED_A, tuple(range(a.ndim)), n_outer,
                                          1, a.size), [a], 2048) == a.shape[-1]
    cases = [("sum", lambda: la.sum(la_a + la_b, axis=axis), np.sum(c.astype(np.float64), axis=axis)),
             ("mean", lambda: la.mean(la_a * 2, axis=axis), np.mean((a * 2).astype(np.float64), axis=axis)),
             ("var", lambda: la.var(la_a - la_b, axis=axis), np.var((a - b).astype(np.float64), axis=axis)),
             ("max", lambda: la.max(la_a - la_b, axis=axis), np.max(a - b, axis=axis)),
             ("prod", lambda: la.prod(1 + la_a / 1e4, axis=axis),
              np.prod((1 + a / np.float32(1e4)).astype(np.float64), axis=axis)),
             ("isum", lambda: la.sum(la_b * 3, axis=axis), np.sum(b * 3, axis=axis)),
             ("all", lambda: la.all(la_a < 4.2, axis=axis), np.all(a < 4.2, axis=axis))]
    if axis is None:
        cases.append(("argmax", lambda: la.argmax(la_a + la_b), np.argmax(c)))
        cases.append(("argmin", lambda: la.argmin(la_b - la_a), np.argmin(b - a)))
    cuts = []
    real_cut = cpu_fused._block_cut
    monkeypatch.setattr(cpu_fused, "_block_cut", lambda *args: cuts.append(real_cut(*args)) or cuts[-1])
    with la.config(eager_max_size=0):          # (the operators stay pending: one kernel)
        check_on_threads(cases, threads, atol=1e-4)
    assert cuts and set(cuts) == {a.shape[-1]}


def test_block_cut_decides_by_layout_and_row_length():
    """Blocks end with rows only where an input would be gathered across a row's end, and the
    rows are long (as an elementwise run decides, cpu_fused._rows_outer)."""
    cut = cpu_fused._block_cut
    plan = lambda shape: (cpu_fused._MODE_RED_A, tuple(range(len(shape))), 0, 1, math.prod(shape))
    u = np.zeros((64, 4096), np.float32)
    assert cut((62, 4094), plan((62, 4094)), [u[1:-1, 1:-1], u[:-2, 2:]], 4096) == 4094
    assert cut((64, 4096), plan((64, 4096)), [u, u], 4096) == 0          # one run: no cut
    assert cut((64, 100), plan((64, 100)), [u[:, :100]], 4096) == 0      # short rows: gathered
    assert cut((64, 300), plan((64, 300)), [u[:, :300], u[:, 1:301]], 4096) == 300   # two views
    assert cut((62, 4094), (cpu_fused._MODE_RED_B, (1, 0), 1, 4094, 62), [u[1:-1, 1:-1]], 4096) == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["sum", "mean", "var", "max"])
def test_reused_scratch_never_reaches_a_result(op, dtype):
    """A reduction's big partial and result arrays go back to a small pool after the call
    (``_cpu_vm._give_scratch``) and the next call of the same size takes them; a result (or
    a view of one) the caller holds is never given back, so later calls cannot write into
    it. The pool stays within its cap."""
    from lazyarr.backends import _cpu_vm

    rng = np.random.default_rng(3)
    data = [rng.standard_normal((64, 16, 1024)).astype(dtype) for _ in range(3)]
    kept = [np.asarray(getattr(la, op)(la.asarray(a), axis=1)) for a in data]
    kept += [np.asarray(getattr(la, op)(la.asarray(a), axis=0)) for a in data]
    for got, a in zip(kept, data + data):
        axis = 1 if got.shape == (64, 1024) else 0
        np.testing.assert_allclose(got, getattr(np, op)(a.astype(np.float64), axis=axis),
                                   rtol=2e-5 if dtype == np.float32 else 1e-12,
                                   atol=1e-5 if dtype == np.float32 else 1e-12)
    assert len({k.__array_interface__["data"][0] for k in kept}) == len(kept)
    assert 0 < _cpu_vm.spare_bytes() <= _cpu_vm.SPARE_MAX_BYTES


@pytest.mark.parametrize("side", [5, 17, 64, 201])
def test_written_statements_on_any_thread_count(side, threads):
    """Statements written through the chunked write-back, reading what they write or not:
    every read sees the old values on any thread count, as NumPy's statement does."""
    rng = np.random.default_rng(side)
    grid = rng.standard_normal((side, side))
    other = rng.standard_normal((side, side))
    want = grid.copy()
    want[1:-1, 1:-1] = 0.25 * (want[:-2, 1:-1] + want[2:, 1:-1] + want[1:-1, :-2] + want[1:-1, 2:])
    want2 = grid.copy()
    want2[1:-1, 1:-1] = (other[1:-1, 2:] + other[1:-1, :-2]) * 0.5 - other[2:, 1:-1] / 3
    for n in (1, 2, 3):
        threads(n)
        u, v, o = la.asarray(grid.copy()), la.asarray(grid.copy()), la.asarray(other)
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        v[1:-1, 1:-1] = (o[1:-1, 2:] + o[1:-1, :-2]) * 0.5 - o[2:, 1:-1] / 3
        assert_bits(u, want)
        assert_bits(v, want2)


@pytest.mark.parametrize("lazyarr_threads, omp_threads, want", [
    ("3", None, "3"), ("3", "1", "3"),       # ours wins
    (None, "1", "1"), (None, "5,2", "5"),    # OpenMP's (Dask's workers: 1), its first level
    (None, "", None), (None, "many", None), (None, "0", None),   # not a count: all cores
])
def test_num_threads_environment(lazyarr_threads, omp_threads, want):
    code = "from lazyarr.backends import cpu_fused; print(cpu_fused.get_num_threads())"
    env = {k: v for k, v in os.environ.items() if k not in ("LAZYARR_NUM_THREADS", "OMP_NUM_THREADS")}
    for name, value in (("LAZYARR_NUM_THREADS", lazyarr_threads), ("OMP_NUM_THREADS", omp_threads)):
        if value is not None:
            env[name] = value
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (want or str(len(os.sched_getaffinity(0))))


def test_thread_count_environment_is_read_at_import_lazyarr():
    """A Dask LocalCluster started after ``import lazyarr`` puts ``OMP_NUM_THREADS=1`` (its
    workers' setting) into this process's environment before the CPU backend loads."""
    code = """if True:
        import os, lazyarr as la
        os.environ["OMP_NUM_THREADS"] = "1"
        from lazyarr.backends import cpu_fused
        print(cpu_fused.get_num_threads())
    """
    env = {k: v for k, v in os.environ.items() if k not in ("LAZYARR_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(len(os.sched_getaffinity(0)))


def test_a_thread_count_set_later_reaches_bound_runners():
    """Repeated calls on computed arrays run bound runners (a leaf's ``la.sum``, la.jit's
    replays) built at their first call. ``set_num_threads`` after that first call must still
    reach them: a runner bound at one thread kept running on one (a leaf's row sums at
    4096x4096 float32: 2.0 ms where two threads take 1.2). Fresh process, so the pool starts
    with no helper."""
    code = """if True:
        import numpy as np, lazyarr as la
        from lazyarr.backends import cpu_fused, _cpu_vm
        m = la.asarray(np.arange(1 << 20, dtype=np.float32).reshape(256, 4096))
        x = la.asarray(np.linspace(0, 1, 1 << 20))
        step = la.jit(lambda a: a * 2 + 1)
        first = [np.asarray(la.sum(m, axis=1)), np.asarray(step(x))]
        assert _cpu_vm.pool_helpers() == 0
        cpu_fused.set_num_threads(3)
        again = [np.asarray(la.sum(m, axis=1)), np.asarray(step(x))]
        assert step.traces == 1
        for a, b in zip(first, again):
            assert a.tobytes() == b.tobytes()
        print(_cpu_vm.pool_helpers())
    """
    env = dict(os.environ, LAZYARR_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2"


def test_a_pending_reduction_makes_its_runner_once(monkeypatch):
    """A reduction of a pending expression builds its launch at each call, its runner once
    per program, scalars and shapes (conv2d_bias's loop of small reductions); other
    scalars or another view's shape make a runner of their own, and the values are NumPy's."""
    made = []
    real = cpu_fused._bound_reduction
    monkeypatch.setattr(cpu_fused, "_bound_reduction", lambda *a: made.append(1) or real(*a))
    monkeypatch.setattr(cpu_fused, "_reduction_runners", {})
    a = np.random.default_rng(7).random((40, 30, 6))
    x = la.asarray(a)
    with backends.use_backend("cpu-fused"):
        for scale, start, n in [(2.5, 1, 10), (2.5, 1, 10), (2.5, 2, 10), (2.5, 1, 12),
                                (3.5, 1, 10), (3.5, 3, 10)]:
            got = la.sum(x[:, start:start + n] * scale, axis=(0, 1))
            np.testing.assert_allclose(np.asarray(got), np.sum(a[:, start:start + n] * scale, axis=(0, 1)),
                                       rtol=1e-13)
    assert len(made) == 3          # 2.5 over 10 columns (wherever they start), over 12, 3.5


def test_program_cache_hit(rng):
    def expr(x, y):
        return la.sum(la.exp(la.asarray(x)) * la.asarray(y) - 0.25, axis=0)

    x, y = (random_array(rng, np.float64, (40, 50), edges=False) for _ in range(2))
    expr(x, y)
    hits, misses = cpu_fused._compiled.hits, cpu_fused._compiled.misses
    x2, y2 = x + 1, y * 2                       # new data, same structure: no compile
    got = expr(x2, y2)
    assert cpu_fused._compiled.misses == misses
    assert cpu_fused._compiled.hits == hits + 1
    np.testing.assert_allclose(got, np.sum(np.exp(x2) * y2 - 0.25, axis=0), rtol=1e-12)


def test_explain_shows_the_vm_program():
    x = la.ones(10_000, dtype=la.float32)
    plan = la.explain(la.sqrt(abs(x * 2.0 + 1.5)))
    assert plan.backend == "cpu-fused" and len(plan.kernels) == 1
    src = plan.kernels[0].source
    assert "numpy.multiply loop float32,float32->float32" in src
    # the abs that only the sqrt reads is the sqrt's own pass (cpu_fused._sqrt_of_abs)
    assert "lazyarr sqrt(abs) loop float32" in src and "-> out" in src
    assert "absolute" not in src and src.count(" -> ") == 3     # multiply, add, sqrt(abs)
    assert plan.bytes_read == 40_000 and plan.bytes_written == 40_000
    assert "cpu-fused" in str(plan)
    src = la.explain(la.sqrt(x * 2.0 + 1.5)).kernels[0].source
    assert "lazyarr sqrt loop float32" in src


def test_sqrt_of_abs_is_one_pass_with_numpys_bits_and_flags():
    """sqrt(abs(v)) as one VM instruction where the abs has no other reader: NumPy's bits
    (signed zeros, NaN payloads, signalling NaNs) and its "invalid" warning; an abs read
    elsewhere too stays its own instruction."""
    edges = np.array([-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, -1.5, 2.25, 1e-45, -1e-45],
                     np.float32)
    snan = np.array([0xFFC00123, 0x7FA00001, 0xFFA00001], np.uint32).view(np.float32)
    for a in (np.resize(np.concatenate([edges, snan]), 1 << 15),
              np.resize(edges.astype(np.float64), 1 << 15),
              np.resize(np.array([0x7FF4000000000001], np.uint64).view(np.float64), 1 << 15)):
        x = la.asarray(a)
        assert "sqrt(abs) loop" in la.explain(la.sqrt(abs(x))).kernels[0].source
        with warnings.catch_warnings(record=True) as got_w:
            warnings.simplefilter("always")
            got = np.asarray(la.sqrt(abs(x)))
        with warnings.catch_warnings(record=True) as want_w:
            warnings.simplefilter("always")
            want = np.sqrt(np.abs(a))
        assert [str(w.message) for w in got_w] == [str(w.message) for w in want_w]
        assert_bits(got, want)
        with np.errstate(all="ignore"):
            both = la.sqrt(abs(x)) + abs(x)        # the abs read twice: two instructions
            assert "sqrt(abs) loop" not in la.explain(both).kernels[0].source
            assert_bits(np.asarray(both), np.sqrt(np.abs(a)) + np.abs(a))
            # in a reduction: the same sum as of the values computed apart (without NaNs, whose
            # payload in a sum depends on the order the partial sums meet)
            f = np.where(np.isnan(a), a.dtype.type(3), a)
            assert_bits(la.sum(la.sqrt(abs(la.asarray(f) * 2))),
                        la.sum(la.asarray(np.sqrt(np.abs(f * 2)))))


_CABS_EDGES = [0.0, -0.0, 5e-324, 1e-320, 1e-200, 1e-150, 1e-145, 1.0, 1.2, 1.6, 2.0,
               1.4142135623730951, 1.414213562373095, 2 - 2**-51, 2 + 2**-51, 1e149, 1e150,
               1e200, 1.7e308, np.inf, -np.inf, np.nan, -2.0, 3.0]


@pytest.mark.parametrize("bound", [2.0, 1.4142135623730951, 1e-145, 1e-141, 1e149, 0.0, -1.0,
                                   5e-324, np.inf, np.nan])
def test_abs_of_complex_compared_as_numpy(bound):
    """``abs(z) < c`` (and <=, >, >=, either side) of complex128 ``z``, float64 ``c``: one VM
    instruction deciding from re*re + im*im where sure (lz_cabs_cmp), NumPy's ``absolute``
    elsewhere: NumPy's answers on edges (zeros, subnormals, huge, inf, NaN, exact boundary
    points such as 1.2+1.6j against 2, the band's edges) and its warnings, in every errstate,
    with the bound a scalar or an array, z contiguous or strided."""
    rng = np.random.default_rng(3)
    e = np.array(_CABS_EDGES)
    n = 40_000
    z = np.empty(n, np.complex128)
    z.real, z.imag = rng.choice(e, n), rng.choice(e, n)
    z[:6] = [1.2 + 1.6j, 2, -2j, np.sqrt(2) * (1 + 1j), 1.6 - 1.2j, 0]
    c = np.full(n, bound)
    c[::7] = rng.choice(e, len(c[::7]))
    zl, cl = la.asarray(z), la.asarray(c)
    assert "lazyarr less(absolute(complex128), float64)" in \
        la.explain(la.less(abs(zl), bound)).kernels[0].source
    for op in (np.less, np.less_equal, np.greater, np.greater_equal):
        for errs in ("ignore", "warn", "raise"):
            cases = [(lambda xp, z, c: op(abs(z), bound)), (lambda xp, z, c: op(bound, abs(z))),
                     (lambda xp, z, c: op(abs(z), c)), (lambda xp, z, c: op(abs(z[::3]), c[::3])),
                     (lambda xp, z, c: xp.sum(op(abs(z), bound)))]
            for case in cases:
                outcome = []
                for xp, zz, cc in ((np, z, c), (la, zl, cl)):
                    with np.errstate(all=errs), warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        try:
                            value, error = np.asarray(case(xp, zz, cc)), None
                        except FloatingPointError as exc:
                            value, error = None, str(exc)
                    outcome.append((value, error, sorted(str(w.message) for w in caught)))
                (got, got_e, got_w), (want, want_e, want_w) = outcome[1], outcome[0]
                assert got_w == want_w and got_e == want_e, (op, errs)
                np.testing.assert_array_equal(got, want)


def test_unsupported_program_falls_back_to_reference(rng):
    h = random_array(rng, np.float16, (100,), edges=False)
    got = la.sum(la.asarray(h) * 0 + 1.001, dtype=bool)   # logical or: the reference backend runs it
    assert_bits(got, np.sum(h * 0 + np.float16(1.001), dtype=bool))
    plan = la.explain(la.asarray(h) * 2)
    assert plan.backend == "cpu-fused"


def test_memory_is_not_n_sized(rng):
    """The chain reduction allocates no N-sized temporaries (tracemalloc sees NumPy's allocations)."""
    import tracemalloc

    x = rng.standard_normal(1 << 20).astype(np.float32)
    y = rng.standard_normal(1 << 20).astype(np.float32)
    lx, ly = la.asarray(x), la.asarray(y)
    la.sum(la.sqrt(abs(lx * ly + 1.5)) * la.tanh(lx) - ly)     # warm the cache
    tracemalloc.start()
    la.sum(la.sqrt(abs(lx * ly + 1.5)) * la.tanh(lx) - ly)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < x.nbytes // 4


def test_concurrent_python_threads(threads, rng):
    """Calls from several Python threads at once (the GIL is released): all correct."""
    from concurrent.futures import ThreadPoolExecutor

    threads(2)
    data = [random_array(rng, np.float64, (200_000,), edges=False) for _ in range(6)]

    def work(x):
        with la.config(mode="lazy", device="cpu"), backends.use_backend("cpu-fused"):
            lx = la.asarray(x)
            return np.asarray(la.exp(lx * 0.5) - 1), float(la.var(lx)), np.asarray(la.sum(lx))

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, data * 3))
    for x, (ew, var, total) in zip(data * 3, results):
        assert_bits(ew, np.exp(x * 0.5) - 1)
        assert abs(var - np.var(x)) <= 1e-12 * np.var(x)
        np.testing.assert_allclose(total, np.sum(x), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_folded_abs_and_square(dtype, rng):
    """sum/mean/min/max of abs(x), x*x, square(x) fold the op into the reduction kernel:
    same values as NumPy's (min/max exact, sums within rounding), including -0.0 and NaN."""
    a = random_array(rng, dtype, (70, 300))
    a[3, 5], a[4, 7] = -0.0, -3.0
    la_a = la.asarray(a)
    cases = [(lambda v: abs(v), np.abs), (lambda v: v * v, lambda v: v * v),
             (lambda v: la.square(v), np.square)]
    for la_fn, np_fn in cases:
        plan = str(la.explain(la_fn(la_a) + 0))   # not folded: elementwise root
        assert "folded" not in plan
        for op in ("sum", "mean", "min", "max"):
            for axis in (None, 0, 1):
                got = np.asarray(getattr(la, op)(la_fn(la_a), axis=axis))
                want = getattr(np, op)(np_fn(a), axis=axis)
                if op in ("min", "max"):
                    assert_bits(got, want)
                else:
                    ok = np.isfinite(want)
                    np.testing.assert_allclose(got[ok], want[ok], rtol={np.float32: 1e-5, np.float64: 1e-12}[dtype])
                    assert np.array_equal(np.isnan(got), np.isnan(want))
    clean = np.abs(random_array(rng, dtype, (5000,), edges=False))
    x = la.asarray(clean - 1)
    assert_bits(la.max(abs(x)), np.max(np.abs(clean - 1)))


def test_fold_is_used():
    from lazyarr import _node

    x = la.asarray(np.ones(10, np.float32))
    for expr in (abs(x), x * x, la.square(x)):
        node = _node.op_node("sum", np.dtype(np.float32), (), "cpu", (expr._node,), (None, False, None, 0))
        compiled = cpu_fused.get_compiled(lower(node).program)
        assert compiled.vm.red_pre and "folded" in compiled.listing[-1]


def test_unaligned_big_endian_and_empty_axes(rng):
    raw = np.concatenate([[0], rng.standard_normal(1000).view(np.uint8)]).astype(np.uint8).tobytes()
    v = np.frombuffer(raw, np.float64, 1000, 1)           # misaligned buffer
    assert not v.flags.aligned
    assert_bits(la.asarray(v) * 3 + 1, v * 3 + 1)
    be = np.arange(20, dtype=">f4")                       # non-native: the reference backend runs it
    assert_bits(la.asarray(be) * 2, be * 2)
    m = random_array(rng, np.float64, (3, 4), edges=False)
    assert_bits(la.sum(la.asarray(m), axis=()), np.sum(m, axis=()))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_thread_pool_survives_fork(threads, rng):
    threads(2)
    x = random_array(rng, np.float64, (1 << 18,), edges=False)
    want = float(np.sum(x * 2))
    float(la.sum(la.asarray(x) * 2))                      # the pool's helpers exist now
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                          # child: helpers are gone, pool restarts
        ok = abs(float(la.sum(la.asarray(x) * 2)) - want) <= 1e-9 * abs(want)
        os.write(w, b"1" if ok else b"0")
        os._exit(0)
    os.close(w)
    assert os.read(r, 1) == b"1"
    os.waitpid(pid, 0)


def test_changed_private_api_falls_back(monkeypatch, rng):
    """If NumPy's private loop API misbehaves (renamed capsule, ...), programs run on the
    reference backend instead of crashing."""
    def broken(capsule):
        raise ValueError("PyCapsule_GetPointer called with incorrect name")

    monkeypatch.setattr(cpu_fused._cpu_vm, "loop_flags", broken)
    monkeypatch.setattr(cpu_fused, "_compiled", BuildOnce(max_size=1024))
    x = random_array(rng, np.float32, (1000,))
    assert_bits(la.cosh(la.asarray(x)) * 3, np.cosh(x) * np.float32(3))
    assert isinstance(cpu_fused.get_compiled(la.explain(la.asarray(x) * 3).program), cpu_fused.Unsupported)
    with pytest.raises(ImportError):
        cpu_fused._self_check()


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_min_max_lanes_and_tails(dtype, rng):
    """Vectorized min/max/argmin/argmax: every size around the lane widths, ties, NaN
    anywhere, folded abs."""
    for n in [*range(1, 70), 4095, 4096, 4097, 9000]:
        x = (rng.standard_normal(n) * 100).astype(dtype)
        lx = la.asarray(x)
        for op in ("min", "max"):
            assert_bits(getattr(la, op)(lx), getattr(np, op)(x))
            assert_bits(getattr(la, op)(abs(lx)), getattr(np, op)(np.abs(x)))
        for op in ("argmin", "argmax"):
            assert_bits(getattr(la, op)(lx), getattr(np, op)(x))
            ties = np.round(x / 50).astype(dtype)          # many equal elements: the first wins
            assert_bits(getattr(la, op)(la.asarray(ties)), getattr(np, op)(ties))
        y = x.copy()
        y[rng.integers(n, size=2)] = np.nan
        for op in ("min", "max"):
            assert np.isnan(float(getattr(la, op)(la.asarray(y))))
            assert np.isnan(float(getattr(la, op)(abs(la.asarray(y)))))
        for op in ("argmin", "argmax"):                      # the first NaN wins
            assert_bits(getattr(la, op)(la.asarray(y)), getattr(np, op)(y))


def test_vm_numbers_come_from_the_c_tables():
    """The numbers Python passes to the VM are the X-macro tables of _cpu_vm.h (one definition):
    the dtype codes in lazyarr._dtypes' order, and a name for every kind cpu_fused uses."""
    from lazyarr._dtypes import SUPPORTED_DTYPES

    vm = cpu_fused._cpu_vm
    assert tuple(np.dtype(name) for name in vm.DTYPE_CODES) == SUPPORTED_DTYPES
    assert list(vm.DTYPE_CODES.values()) == list(range(len(SUPPORTED_DTYPES)))
    assert cpu_fused.TYPE_CODE == {np.dtype(n): c for n, c in vm.DTYPE_CODES.items()}
    assert set(cpu_fused._VM_REDUCTION.values()) | {"none"} == set(vm.REDUCTION_KINDS)
    assert set(vm.MODES) == {"elementwise", "slot_major", "reduce_major", "row_blocks"}
    assert set(vm.FOLDS) == {"none", "abs", "square"}
    for dt in ("float32", "float64", "int64", "uint64", "bool"):   # _canonical's results
        assert dt in vm.REDUCTION_TYPES
    assert not hasattr(vm, "set_prefetch")


def test_listing_names_the_sink_casts():
    """A cast the reduction sink inserts (float16 -> float32 here) is listed as astype."""
    from lazyarr import _node

    x = la.asarray(np.ones(10, np.float16))
    node = _node.op_node("sum", np.dtype(np.float16), (), "cpu", (x._node,), (None, False, None, 0))
    compiled = cpu_fused.get_compiled(lower(node).program)
    assert compiled.listing == ["%1 = astype(%0) -> r0 : float32 [astype float16->float32]"]


def test_a_reduction_the_vm_does_not_know_falls_back(monkeypatch):
    """A reduction op without a VM kind (a new registry row) runs on the reference backend."""
    from lazyarr import _node

    monkeypatch.delitem(cpu_fused._VM_REDUCTION, "prod")
    monkeypatch.setattr(cpu_fused, "_compiled", BuildOnce(max_size=1024))
    x = la.asarray(np.arange(1, 6, dtype=np.float64))
    node = _node.op_node("prod", np.dtype(np.float64), (), "cpu", (x._node,), (None, False, None, 0))
    lowered = lower(node)
    assert isinstance(cpu_fused.get_compiled(lowered.program), cpu_fused.Unsupported)
    assert float(cpu_fused.BACKEND.run(lowered)) == 120.0


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "float32", "float64"])
def test_a_reduction_of_a_small_input_stays_in_the_vm(dtype):
    """... but not of a small input (one VM block at most): there the VM's kernel, bound once
    (a loop's ``la.max(row)``), is the cheaper; the same values as NumPy's loop."""
    x = random_array(np.random.default_rng(6), np.dtype(dtype), (8, 50))
    lx = la.asarray(x)
    for op in ("min", "max", "any", "all", "argmin", "argmax"):
        for axis in (None, 0, 1):
            with la.config(mode="lazy"):
                assert "NumPy's loop is faster" not in str(
                    la.explain(lambda: getattr(la, op)(lx, axis=axis)))
                got = np.asarray(getattr(la, op)(lx, axis=axis))
            with la.config(mode="eager"):
                want = np.asarray(getattr(la, op)(lx, axis=axis))
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "float32", "float64"])
def test_a_reduction_of_an_input_alone_runs_numpys_loop(dtype):
    """min/max/any/all (and argmin/argmax over the last axis) of a contiguous input alone run
    NumPy's loop, which beats the VM's there; with the same values as the VM's (the IEEE zero
    rule of min/max included); anything fused in, a strided input, or argmax over a leading
    axis stays in the VM, and so does a float32/float64 min/max that reduces the last axis
    (the VM's folds on both threads beat NumPy's loop there: _VM_FULL_MINMAX_BYTES)."""
    x = random_array(np.random.default_rng(5), np.dtype(dtype), (37, 300))
    lx = la.asarray(x)
    vm_minmax = dtype in ("float32", "float64")
    for op in ("min", "max", "any", "all", "argmin", "argmax"):
        for axis in (None, 0, 1):
            routed = op not in ("argmin", "argmax") or axis != 0
            if op in ("min", "max") and vm_minmax and axis == 1:
                routed = False
            for arr, expect_routed in ((lx, routed), (lx * 1, False), (lx[:, ::2], False)):
                with la.config(mode="lazy"):
                    plan = la.explain(lambda: getattr(la, op)(arr, axis=axis))
                    got = np.asarray(getattr(la, op)(arr, axis=axis))
                assert ("NumPy's loop is faster" in str(plan)) == expect_routed, (op, axis)
                with la.config(mode="eager"):
                    want = np.asarray(getattr(la, op)(arr, axis=axis))
                np.testing.assert_array_equal(got, want)
                assert got.dtype == want.dtype


def test_a_large_float_min_max_of_an_input_alone_runs_the_vm():
    # over everything, NumPy's single-threaded loop wins below _VM_FULL_MINMAX_BYTES and the
    # VM above; along the leading axis alone NumPy's stays; the same values either way (the
    # IEEE zero rule: the VM's own, NumPy's through the fix-up)
    n = cpu_fused._VM_FULL_MINMAX_BYTES // 4
    x = np.random.default_rng(2).random(n, dtype=np.float32).reshape(-1, 1024)
    x[3, 5], x[7, 9] = 0.0, -0.0
    lx = la.asarray(x)
    for op, axis, routed in (("min", None, False), ("max", None, False), ("min", 0, True),
                             ("max", 1, False), ("min", (0, 1), False)):
        plan = la.explain(lambda: getattr(la, op)(lx, axis=axis))
        assert ("NumPy's loop is faster" in str(plan)) == routed, (op, axis)
        got = np.asarray(getattr(la, op)(lx, axis=axis))
        want = getattr(np, op)(x, axis=axis)
        np.testing.assert_array_equal(got, want)
    assert np.signbit(np.asarray(la.min(lx))) and not np.signbit(np.asarray(la.max(-lx * 0)))
    small = la.asarray(x[:8])
    assert "NumPy's loop is faster" in str(la.explain(lambda: la.min(small)))


def test_the_kernels_scalar_operands_are_numpys_bytes():
    """``_cpu_vm.scalar_bytes`` (compiled, once per launch): each NumPy scalar's own bytes in a
    SCALAR_BYTES slot, zero-padded, as ``tobytes`` gives them: signed zeros, NaN payloads,
    complex parts, every width; a Python number (not a NumPy scalar) is refused."""
    from lazyarr.backends import _cpu_vm
    nan = np.frombuffer(np.uint64(0x7FF8_0000_0000_0123).tobytes(), np.float64)[0]
    scalars = [np.float64(1.5), np.float32(-0.0), np.complex128(1 - 0j), np.bool_(True),
               np.float16(-2.5), np.int8(-3), np.uint64(2**64 - 1), np.complex64(-0.0 - 0j),
               nan, np.int64(-(2**63))]
    want = b"".join(s.tobytes().ljust(_cpu_vm.SCALAR_BYTES, b"\0") for s in scalars)
    assert _cpu_vm.scalar_bytes(scalars) == want
    assert _cpu_vm.scalar_bytes(tuple(scalars)) == want
    assert _cpu_vm.scalar_bytes([]) == b""
    with pytest.raises(TypeError, match="NumPy scalar"):
        _cpu_vm.scalar_bytes([1.5])


@pytest.mark.skipif(not sys.platform.startswith("linux")
                    or tuple(int(v) for v in platform.release().split(".")[:2]) < (5, 14),
                    reason="MADV_POPULATE_WRITE is Linux 5.14+ (elsewhere prefault does nothing)")
def test_prefault_populates_fresh_memory_once_and_keeps_values():
    # A new large result is made resident by the calling thread before the pool writes it
    # (parallel first touches of fresh huge pages were ~3x slower than one thread's): fresh
    # anonymous memory is populated, resident memory left alone, values never changed
    import mmap

    from lazyarr.backends import _cpu_vm

    size = 8 << 20
    region = mmap.mmap(-1, size)               # anonymous, never touched: not resident
    fresh = np.frombuffer(region, dtype=np.float32)
    assert _cpu_vm.prefault(fresh) is True
    assert _cpu_vm.prefault(fresh) is False    # resident now: only probed
    assert not fresh.any()
    data = np.arange(1 << 21, dtype=np.float64)
    assert _cpu_vm.prefault(data) is False
    np.testing.assert_array_equal(data, np.arange(1 << 21, dtype=np.float64))
    del fresh
    region.close()


def test_huge_pages_likely_follows_the_kernel_mode_and_numpys_madvise_switch(monkeypatch):
    # _new_result prefaults only where huge pages back new arrays (with 4 KiB pages the
    # pool's own faults overlap better than one thread's); in the kernel's "madvise" mode
    # that is NumPy's private madvise switch, which must exist where lazyarr reads it
    from numpy._core import multiarray

    assert cpu_fused._transparent_huge_pages.__wrapped__() in ("always", "madvise", "never")
    assert callable(multiarray._get_madvise_hugepage) and callable(multiarray._set_madvise_hugepage)
    monkeypatch.setattr(cpu_fused, "_transparent_huge_pages", lambda: "madvise")
    old = multiarray._set_madvise_hugepage(True)
    try:
        assert cpu_fused._huge_pages_likely()
        multiarray._set_madvise_hugepage(False)
        assert not cpu_fused._huge_pages_likely()
    finally:
        multiarray._set_madvise_hugepage(old)
    monkeypatch.setattr(cpu_fused, "_transparent_huge_pages", lambda: "always")
    assert cpu_fused._huge_pages_likely()
    monkeypatch.setattr(cpu_fused, "_transparent_huge_pages", lambda: "never")
    assert not cpu_fused._huge_pages_likely()


def test_a_new_large_result_on_the_pool_is_prefaulted(monkeypatch):
    calls = []
    monkeypatch.setattr(cpu_fused, "_huge_pages_likely", lambda: True)
    monkeypatch.setattr(cpu_fused._cpu_vm, "prefault", lambda out: calls.append(out.nbytes))
    old = cpu_fused.set_num_threads(2)
    cpu_fused.release_result_pool()            # (an earlier test's kept block is resident)
    try:
        x = np.arange(1 << 21, dtype=np.float32)
        with la.config(device="cpu", mode="lazy"):
            got = ((la.asarray(x) + 3) * 2).to_numpy()
            small = ((la.asarray(x[:1000]) + 3) * 2).to_numpy()
            np.testing.assert_array_equal(got, (x + 3) * 2)
            del got                            # its block is kept by the result pool ...
            again = ((la.asarray(x) + 4) * 2).to_numpy()
    finally:
        cpu_fused.set_num_threads(old)
    np.testing.assert_array_equal(small, (x[:1000] + 3) * 2)
    np.testing.assert_array_equal(again, (x + 4) * 2)
    assert calls == [x.nbytes]                 # the first 8 MiB result only: ... and resident
