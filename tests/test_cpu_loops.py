"""Compiled loops of the CPU VM (lazyarr/backends/cpu_loops.py, ``la.config(cpu_loops=...)``):
a program of float arithmetic that has run twice runs as one Numba-compiled loop per block.
Every result is checked bit for bit against the VM's instructions (``cpu_loops="off"``) and
against NumPy, over edge values (NaN, ±inf, ±0, subnormals, extremes), strides, broadcasts,
0-d values, reductions, stencil fields, in-place writes, threads and floating-point errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_same, random_array

import lazyarr as la
from lazyarr._devices import numba_installed
from lazyarr.backends import cpu_fused, cpu_loops

pytestmark = pytest.mark.skipif(not numba_installed(), reason="needs Numba")

FLOATS = [np.float32, np.float64]


def _program(fn, *arrays):
    return la.explain(lambda: np.asarray(fn(*(la.asarray(a) for a in arrays)))).program


def _bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def looped(fn, *arrays, calls=3, loop=True):
    """``fn`` of ``arrays`` in lazy mode on the CPU: with the compiled loop (asserted set,
    unless ``loop`` is False: 0-d values never reach the VM) and with the VM's instructions;
    (loop result, instructions result)."""
    with la.config(mode="lazy", device="cpu", cpu_loops="off"), np.errstate(all="ignore"):
        plain = np.asarray(fn(*(la.asarray(a) for a in arrays)))
    with la.config(mode="lazy", device="cpu", cpu_loops="wait"), np.errstate(all="ignore"):
        for _ in range(calls):
            got = np.asarray(fn(*(la.asarray(a) for a in arrays)))
        c = cpu_fused.get_compiled(_program(fn, *arrays))
    if not loop:
        return got, plain
    assert c.loop is not None and c.loop.state == "set", (c.loop and (c.loop.state, c.loop.error))
    assert c.vm.has_loop
    return got, plain


UNARY = {"negative": np.negative, "positive": np.positive, "absolute": np.abs,
         "square": np.square, "sqrt": np.sqrt, "sqrt_abs": lambda a: np.sqrt(np.abs(a))}
BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide}


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", [*UNARY, *BINARY])
def test_each_op_bit_for_bit_with_edge_values(op, dtype, rng):
    x = random_array(rng, dtype, (37, 29))
    y = random_array(rng, dtype, (37, 29))[::-1].copy()    # (the edge values meet others)
    if op in UNARY:
        f = UNARY[op]
        fn = lambda a, b: f(a) * b if not op.startswith("sqrt") else f(a) - b    # noqa: E731
    else:
        f = BINARY[op]
        fn = lambda a, b: f(a, b) + a        # noqa: E731
    got, plain = looped(fn, x, y)
    with np.errstate(all="ignore"):
        want = fn(x, y)
    np.testing.assert_array_equal(_bits(got), _bits(plain))
    assert_same(got, want)
    np.testing.assert_array_equal(_bits(got), _bits(want))      # NaN payloads and signs too


INTEGERS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("dtype", INTEGERS, ids=lambda d: np.dtype(d).name)
def test_integer_arithmetic_wraps_as_numpys(dtype, rng):
    """Numba widens integer arithmetic to 64 bits; each result is taken back to its dtype,
    wrapping as NumPy's loops do (the edge values: the extremes, -1, ...)."""
    x = random_array(rng, dtype, (41, 23))
    y = random_array(rng, dtype, (41, 23))[::-1].copy()
    signed = np.dtype(dtype).kind == "i"
    fn = (lambda a, b: np.abs(-(a * b) + np.square(a - b)) - b) if signed \
        else (lambda a, b: np.square(a * b + a) - b * b)    # noqa: E731
    got, plain = looped(fn, x, y)
    with np.errstate(all="ignore"):
        want = fn(x, y)
    assert_same(got, plain)
    assert_same(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_comparisons_logic_and_where(dtype, rng):
    x = random_array(rng, dtype, (300,))
    y = random_array(rng, dtype, (300,))[::-1].copy()
    picks = lambda a, b: np.where((a > b) | (a == b) & ~(a < b), a - b, b * a)   # noqa: E731
    tests = lambda a, b: ((a <= b) ^ (a != b)) & np.logical_not(a >= b * b)     # noqa: E731
    for fn in (picks, tests):
        got, plain = looped(fn, x, y)
        with np.errstate(all="ignore"):
            want = fn(x, y)
        np.testing.assert_array_equal(_bits(got), _bits(plain))
        assert_same(got, want)


@pytest.mark.parametrize("case", ["float32 to float64", "float64 to float32", "int64 to float64",
                                  "uint64 to float32", "int32 to int8", "bool to float64",
                                  "float64 to bool", "int16 to bool"])
def test_casts(case, rng):
    src, dst = case.split(" to ")
    x = random_array(rng, np.dtype(src), (257,))
    y = random_array(rng, np.dtype(dst), (257,))
    if dst == "bool":
        fn = lambda a, b: (a * a).astype(np.bool_) ^ b     # noqa: E731
    elif src == "bool":
        fn = lambda a, b: (~a).astype(dst) - b            # noqa: E731
    else:
        fn = lambda a, b: (a * a).astype(dst) - b         # noqa: E731
    got, plain = looped(fn, x, y)
    with np.errstate(all="ignore"):
        want = fn(x, y)
    np.testing.assert_array_equal(_bits(got), _bits(plain))
    assert_same(got, want)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_random_expressions_bit_for_bit(dtype, rng):
    """Random trees of the loop's ops over three inputs and a scalar."""
    ops2 = [np.add, np.subtract, np.multiply, np.divide]
    ops1 = [np.negative, np.abs, np.square, np.sqrt]
    data = [random_array(rng, dtype, (300,)) for _ in range(3)]

    def tree(depth, r):
        if depth == 0 or r.random() < 0.2:
            k = int(r.integers(0, 4))
            return (lambda *xs: xs[k]) if k < 3 else (lambda *xs: dtype(1.75))
        if r.random() < 0.3:
            f, sub = ops1[int(r.integers(0, 4))], tree(depth - 1, r)
            return lambda *xs: f(sub(*xs))
        f, a, b = ops2[int(r.integers(0, 4))], tree(depth - 1, r), tree(depth - 1, r)
        return lambda *xs: f(a(*xs), b(*xs))

    made = 0
    for seed in range(40):
        expr = tree(4, np.random.default_rng(seed))
        fn = lambda a, b, c: expr(a, b, c) * a + b      # noqa: E731 - (at least two ops, arrays)
        with np.errstate(all="ignore"):
            want = fn(*data)
        if want.dtype != dtype:
            continue
        got, plain = looped(fn, *data)
        np.testing.assert_array_equal(_bits(got), _bits(plain), err_msg=f"seed {seed}")
        assert_same(got, want)
        made += 1
    assert made >= 30


@pytest.mark.parametrize("case", ["strided", "transposed", "reversed", "broadcast row",
                                  "broadcast column", "0-d", "scalar only", "empty"])
def test_layouts(case, rng):
    base = rng.standard_normal((40, 64))
    other = rng.standard_normal((40, 64))
    fn = lambda a, b: (a * 2.5 + b) / (b - 0.5)     # noqa: E731
    a, b = {
        "strided": (base[::2, ::3], other[::2, ::3]),
        "transposed": (base.T, other.T),
        "reversed": (base[::-1, ::-1], other[::-1]),
        "broadcast row": (base, other[0]),
        "broadcast column": (base, other[:, :1]),
        "0-d": (np.asarray(1.5), np.asarray(-2.0)),
        "scalar only": (np.asarray(3.0), np.asarray(0.25)),
        "empty": (base[:0], other[:0]),
    }[case]
    if case == "empty":
        with la.config(mode="lazy", device="cpu", cpu_loops="wait"):
            for _ in range(3):
                got = np.asarray(fn(la.asarray(a), la.asarray(b)))
        assert_same(got, fn(a, b))
        return
    got, plain = looped(fn, a, b, loop=case not in ("0-d", "scalar only"))
    np.testing.assert_array_equal(_bits(got), _bits(plain))
    assert_same(got, fn(a, b))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions_of_a_loop(dtype, axis, rng):
    x = rng.standard_normal((300, 257)).astype(dtype)
    y = rng.standard_normal((300, 257)).astype(dtype)
    fn = lambda a, b: la.sum(a * b + (a - b) / 3, axis=axis) if isinstance(a, la.LazyArray) \
        else np.sum(a * b + (a - b) / 3, axis=axis)     # noqa: E731
    got, plain = looped(fn, x, y)
    np.testing.assert_array_equal(_bits(got), _bits(plain))
    tol = 1e-4 if dtype is np.float32 else 1e-12     # (NumPy's summation order is another)
    np.testing.assert_allclose(got, fn(x, y), rtol=tol, atol=tol)


def test_a_stencil_with_fields(rng):
    """The Jacobi sum of a pending sqrt: the fields' program and the main program's loop."""
    w = rng.random((300, 400), dtype=np.float32) + 0.5

    def jac(u):
        return (0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])).sum()
    fn = lambda w: jac(la.sqrt(w)) if isinstance(w, la.LazyArray) else jac(np.sqrt(w))  # noqa: E731
    cpu_fused._compiled.values.clear()
    got, plain = looped(fn, w, loop=False)      # (the loop is the main program's: below)
    assert_same(got, plain)
    np.testing.assert_allclose(got, fn(w), rtol=1e-5)
    mains = [c for c in cpu_fused._compiled.values.values()
             if isinstance(c, cpu_fused.Compiled) and c.reduction == "sum" and c.loop is not None]
    assert any(c.vm.has_loop and c.loop.state == "set" for c in mains)


def test_in_place_writes_read_before_they_write(rng):
    """``out`` that is an input's memory: those blocks keep the instructions' order."""
    base = rng.standard_normal((64, 64))
    for _ in range(3):
        with la.config(mode="lazy", device="cpu", cpu_loops="wait"):
            u = la.asarray(base.copy())
            u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] - u[1:-1, :-2] * u[1:-1, 2:])
            v = la.asarray(base.copy())
            v += v * 3 - 1
    want_u = base.copy()
    want_u[1:-1, 1:-1] = 0.25 * (base[:-2, 1:-1] + base[2:, 1:-1] - base[1:-1, :-2] * base[1:-1, 2:])
    assert_same(np.asarray(u), want_u)
    assert_same(np.asarray(v), base + (base * 3 - 1))


def test_threads_run_the_loop_alike(rng):
    """A run big enough for the thread pool: the same bits as the instructions'."""
    x = rng.standard_normal(1 << 20)
    y = rng.standard_normal(1 << 20)
    got, plain = looped(lambda a, b: (a * b - a) / (b + 4), x, y)
    np.testing.assert_array_equal(_bits(got), _bits(plain))


def test_floating_point_errors_are_numpys():
    """A block that raises a flag runs again through the instructions, which tell NumPy's
    messages which op raised it."""
    x = np.array([1.0, 0.0, 2.0, -1.0] * 300)
    y = np.array([0.0, 0.0, 1.0, 3.0] * 300)
    fn = lambda a, b: a / b + b * 2     # noqa: E731
    looped(fn, x, y)
    with la.config(mode="lazy", device="cpu", cpu_loops="wait"):
        with pytest.warns(RuntimeWarning, match="divide by zero encountered in divide"):
            got = np.asarray(fn(la.asarray(x), la.asarray(y)))
        with np.errstate(invalid="raise", divide="ignore"), \
                pytest.raises(FloatingPointError, match="invalid value encountered in divide"):
            np.asarray(fn(la.asarray(x), la.asarray(y)))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.asarray(fn(la.asarray(x + 1), la.asarray(y + 1)))      # (none raised: quiet)
    with np.errstate(all="ignore"):
        assert_same(got, fn(x, y))


def test_background_compiles_once_the_work_pays(rng, monkeypatch):
    """In the background a loop is compiled once a program's calls have done
    WORK_BEFORE_COMPILE (a few calls over small arrays never reach it)."""
    x = rng.standard_normal(5000)
    fn = lambda a: (a * 1.25 - 3) * a      # noqa: E731
    with la.config(mode="lazy", device="cpu", cpu_loops="background"):
        for _ in range(3):
            first = np.asarray(fn(la.asarray(x)))
        c = cpu_fused.get_compiled(_program(fn, x))
        assert c.loop.state == "new" and c.loop.work == 3 * 5000 * 3
        monkeypatch.setattr(cpu_loops, "WORK_BEFORE_COMPILE", 4 * 5000 * 3)
        np.asarray(fn(la.asarray(x)))
        assert la.wait_compiles(timeout=60) == 0
        assert c.vm.has_loop
        assert_same(np.asarray(fn(la.asarray(x))), first)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_runs_around_an_op_without_a_loop(dtype, rng):
    """The chain: tanh keeps NumPy's loop; the arithmetic before and after it runs as two
    compiled loops."""
    x = random_array(rng, dtype, (500,))
    y = random_array(rng, dtype, (500,))[::-1].copy()
    fn = lambda a, b: np.sqrt(np.abs(a * b + 1.5)) * np.tanh(a) - b     # noqa: E731
    got, plain = looped(fn, x, y)
    c = cpu_fused.get_compiled(_program(fn, x, y))
    assert len(c.loop.runs) == 2 and "compiled loops of the runs" in " ".join(c.listing)
    with np.errstate(all="ignore"):
        want = fn(x, y)
    np.testing.assert_array_equal(_bits(got), _bits(plain))
    assert_same(got, want)


def test_programs_without_a_loop():
    """Other ops or dtypes, one instruction: the VM's instructions, no loop planned."""
    for fn, args in [(lambda a: np.tanh(a) * 2, (np.linspace(1, 2, 50),)),          # tanh
                     (lambda a: (a * 7).astype(np.int32) + 1, (np.linspace(1, 2, 50),)),  # to int
                     (lambda a: a // 3 + 1, (np.arange(50),)),                      # floor_divide
                     (lambda a: a * 3, (np.linspace(1, 2, 50),)),                   # one op
                     (lambda a: a * np.float16(3) + 1, (np.linspace(1, 2, 50).astype(np.float16),))]:
        c = cpu_fused.get_compiled(_program(fn, *args))
        assert c.loop is None


def test_off_never_compiles(rng):
    x = rng.standard_normal(1000)
    fn = lambda a: (a - 0.5) * (a + 7.5) / 3    # noqa: E731
    with la.config(mode="lazy", device="cpu", cpu_loops="off"):
        for _ in range(4):
            np.asarray(fn(la.asarray(x)))
    c = cpu_fused.get_compiled(_program(fn, x))
    assert c.loop is not None and c.loop.state == "new" and not c.vm.has_loop


def test_the_config_option():
    assert la.get_config().cpu_loops in ("background", "wait", "off")
    with pytest.raises(ValueError, match="cpu_loops"):
        with la.config(cpu_loops="sometimes"):
            pass


def test_an_exit_does_not_wait_for_a_loop():
    """A CPU loop's compile is dropped at exit (no cache keeps it), where a GPU kernel's
    compile under way is finished (its disk cache does)."""
    import subprocess
    import sys
    import time
    code = ("import time, lazyarr._compile_thread as t\n"
            "t.submit(lambda: time.sleep(20), wait_at_exit=False)\n"
            "time.sleep(0.2)\n")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert time.perf_counter() - t0 < 10


def test_a_uniform_register_operand_keeps_its_value(rng):
    """``tanh`` of a one-element array broadcast is computed once, into element 0 of r0
    (stride 0), and the run ``x * t + 1`` after it reads that element for every element. The
    linear scan gives the run's last instruction r0 (``t``'s last use is inside the run): a
    loop writing r0 element by element would change ``t`` under it, so cpu_loops.plan keeps
    that run's instructions."""
    x = rng.standard_normal(5000)
    c = np.asarray([0.75])
    fn = lambda a, s: np.exp(a * np.tanh(s) + 1)     # noqa: E731
    with la.config(mode="lazy", device="cpu", cpu_loops="wait"):
        for _ in range(3):
            got = np.asarray(fn(la.asarray(x), la.asarray(c)))
        c_ = cpu_fused.get_compiled(_program(fn, x, c))
    listing = " ".join(c_.listing)
    assert "tanh(%1) -> r0" in listing and "add(%3, %4) -> r0" in listing and c_.loop is None
    with la.config(mode="lazy", device="cpu", cpu_loops="off"):
        plain = np.asarray(fn(la.asarray(x), la.asarray(c)))
    np.testing.assert_array_equal(_bits(got), _bits(plain))
    assert_same(got, fn(x, c))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("depth", [4, 8, 16])
def test_sparse_strided_operands(dtype, depth, rng):
    """``[:, :, k]`` slices read in place (rows of 300 elements): from an operand stride of 64
    bytes (an element per cache line) a block runs the VM's instructions, not the compiled
    loop (lz_run_loop: the loop's strided body was up to 2x slower there); below it, the loop.
    Either way the bits are the instructions' and NumPy's, new results and writes alike."""
    w = random_array(rng, dtype, (7, 300, depth))
    t = random_array(rng, dtype, (6, 300))
    fn = lambda w, t: (w[1:, :, 1] - w[:-1, :, 2]) * t + w[:-1, :, 1] / 3   # noqa: E731
    got, plain = looped(fn, w, t)
    np.testing.assert_array_equal(_bits(got), _bits(plain))
    with np.errstate(all="ignore"):
        assert_same(got, fn(w, t))
    target = np.zeros((6, 300, depth), dtype)
    for mode in ("off", "wait"):
        with la.config(mode="lazy", device="cpu", cpu_loops=mode), np.errstate(all="ignore"):
            c = la.asarray(target.copy())
            lw, lt = la.asarray(w), la.asarray(t)
            for _ in range(3):
                c[:, :, 2] = fn(lw, lt)
            if mode == "off":
                plain = np.asarray(c).copy()
    want = target.copy()
    with np.errstate(all="ignore"):
        want[:, :, 2] = fn(w, t)
    np.testing.assert_array_equal(_bits(np.asarray(c)), _bits(plain))
    assert_same(np.asarray(c), want)


def test_a_set_loop_takes_the_pool_from_more_work():
    """Once a program's compiled loop is set, the instructions it runs count 1 /
    LOOP_WORK_DIVISOR toward PARALLEL_WORK (the loop does their work in about a quarter of the
    VM's time): a run of 60,000 float64 elements that took the pool on the instructions runs
    on one thread, four times as many still take it, and the values are the same."""
    from lazyarr._program import lower
    old = cpu_fused.set_num_threads(2)
    try:
        X = np.random.default_rng(3).random((300, 200))
        x = la.asarray(X)
        expr = (x + 1.5) * x - x / 3.0
        c = cpu_fused.get_compiled(lower(expr._node).program)
        size = X.size
        assert size * c.work >= cpu_fused.PARALLEL_WORK > size * c.work // cpu_fused.LOOP_WORK_DIVISOR
        assert c.loop is not None and c.loop.state == "new"
        assert cpu_fused._elementwise_parallel(c, size)
        with la.config(cpu_loops="wait"):
            got = np.asarray(expr)
        assert c.loop.state == "set" and c.loop.ninstr == len(c.fpe) - 1
        assert not cpu_fused._elementwise_parallel(c, size)
        assert cpu_fused._elementwise_parallel(c, size * cpu_fused.LOOP_WORK_DIVISOR)
        with la.config(cpu_loops="wait"):
            again = np.asarray((x + 1.5) * x - x / 3.0)
        want = (X + 1.5) * X - X / 3.0
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(again, want)
    finally:
        cpu_fused.set_num_threads(old)
