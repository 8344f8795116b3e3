"""The cuda device, on a GPU: ops × dtypes × shapes in both modes against NumPy, determinism,
strided inputs, zero-copy interop, the disk cache across processes.

Run on the GPU machine with ``pytest -m gpu`` (``-n 8`` with pytest-xdist compiles in
parallel). With ``LAZYARR_CUDA_SIM=1`` (CI) they run on the simulated cuda device: a
representative subset at small sizes (``helpers.GPU_DTYPES``, ``sim_sized``), lazy mode only;
what needs CuPy skips there with that reason. Without either, every test here is skipped.

Tolerances: ops whose NumPy result is correctly rounded (``+ - * /``, ``sqrt``, rounding,
comparisons, integer ops, ``floor_divide``/``remainder``, casts) must match NumPy bit for bit.
Transcendental functions (libdevice on the GPU, NumPy's own SIMD code on the host) differ by
a few ulps: compared with rtol 2e-5 (float32), 2e-3 (float16), 1e-12 (float64), atol the same.
Reductions of floats sum in a different order from NumPy's pairwise sum: same tolerances.
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from helpers import (DTYPES, GPU_DTYPES, NO_CUPY, SIMULATED, assert_same, complex_product_mismatch,
                     lazy_reduction, needs_cupy,
                     op_dtype_params, random_array, sim_sized)

import lazyarr as la
from lazyarr import backends
from lazyarr._registry import ELEMENTWISE, REDUCTIONS, TRANSCENDENTAL

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy")]

INEXACT = TRANSCENDENTAL      # compared within TOL (the module docstring says why)
TOL = {2: 2e-3, 4: 2e-5, 8: 1e-12}
UNARY = [op for op in ELEMENTWISE if op.nin == 1]
BINARY = [op for op in ELEMENTWISE if op.nin == 2]


@pytest.fixture(params=["eager", "lazy"])
def gmode(request):
    if SIMULATED and request.param == "eager":
        pytest.skip("eager mode on cuda is CuPy op by op: " + NO_CUPY)
    with la.config(mode=request.param, device="cuda"):
        yield request.param


@pytest.fixture
def rng():
    return np.random.default_rng(2026)


def _quiet(fn, *args, **kw):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kw), None
        except Exception as exc:  # noqa: BLE001
            return None, type(exc)


def _compare(got, want, inexact: bool):
    got = np.asarray(got)
    inexact = inexact or _eager()
    if inexact and want.dtype.kind == "c":     # part by part
        assert got.dtype == want.dtype
        _compare(got.real, want.real, True)
        _compare(got.imag, want.imag, True)
    elif inexact and want.dtype.kind == "f":
        tol = TOL[want.dtype.itemsize]
        if _eager() and want.dtype.itemsize == 2:
            tol = 1e-2      # CuPy rounds float16 products/sums to float16 at every step
        assert got.dtype == want.dtype and got.shape == want.shape
        fin = np.isfinite(want)
        assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
        assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
        np.testing.assert_allclose(got[fin].astype(np.float64), want[fin].astype(np.float64),
                                   rtol=tol, atol=tol)
    else:
        assert_same(got, want)


def _flush_subnormals(a):
    """Eager mode on cuda is CuPy, whose kernels flush subnormals to zero (seen on the H200);
    lazy mode (lazyarr's kernels) keeps them, as NumPy does."""
    if isinstance(a, np.ndarray) and a.dtype.kind == "f" and la.get_config().mode == "eager":
        a = a.copy()
        a[(a != 0) & (np.abs(a) < np.finfo(a.dtype).tiny)] = 0
    return a


def _check(la_fn, np_fn, np_args, inexact=False, **kw):
    np_args = tuple(_flush_subnormals(a) for a in np_args)
    if np_fn in (np.sign, np.sqrt) and np_args[0].dtype.kind == "c" \
            and (np_fn is np.sign or not SIMULATED):
        # complex sign divides by NumPy's complex abs (H_cabs), where NumPy's own divides by
        # glibc's hypot (an ulp apart); sqrt on a GPU takes libdevice's hypot (within 2 ulp)
        inexact = True
    want, err = _quiet(np_fn, *np_args, **kw)
    la_args = [la.asarray(a) if isinstance(a, np.ndarray) else a for a in np_args]
    if err is not None:
        with pytest.raises(err):
            _quiet_raise(la_fn, *la_args, **kw)
        return
    got, gerr = _quiet(lambda: np.asarray(la_fn(*la_args, **kw)))
    assert gerr is None, gerr
    want = np.asarray(want)
    if np_fn in (np.power, np.float_power) and want.dtype.kind == "c" and not _eager():
        _compare_complex_power(got, want, *np_args)
        return
    _compare(got, want, inexact)


def _compare_complex_power(got, want, a, b):
    """Complex ``power`` is glibc's ``cexp(b * clog(a))`` in NumPy and a port of it in the
    kernel (test_gpu_native_ops.test_complex_power): compared as there, normwise within
    ``ULPS * (1 + |b log a|)`` ulps (the rounding errors grow with the exponent). An infinite
    or zero part (``exp`` of ``Re(b log a)`` overflowed or underflowed) is checked to be so,
    and its sign too unless the angle ``|Im(b log a)|`` is past 1e4: the sign is then that of
    cos/sin of an angle whose last bit (atan2's, libdevice's or glibc's) decides it (the H200:
    ``float_power(1.135 + 2.308j, -3.4e38)``, angle -3.8e38, gave ``0 - 0i``, NumPy ``0 + 0i``)."""
    from test_gpu_native_ops import _assert_close_cx, power_ulps
    a, b = (np.broadcast_to(x, want.shape).astype(np.complex128) for x in (a, b))
    with np.errstate(all="ignore"):
        angle = (b * np.log(a)).imag
    free = ~(np.abs(angle) <= 1e4)               # (NaN too: no angle to speak of)
    got = got.copy()
    for part in ("real", "imag"):
        g, w = getattr(got, part), getattr(want, part)
        same = free & (np.isinf(g) & np.isinf(w) | (g == 0) & (w == 0))
        g[same] = w[same]
    _assert_close_cx(got, want, power_ulps(a, b))


def _quiet_raise(fn, *args, **kw):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(fn(*args, **kw))


def _eager() -> bool:
    return la.get_config().mode == "eager"


def _rand(rng, dtype, shape, edges=True):
    """Random data with NumPy's edge values mixed in -- except in eager mode, which is CuPy op
    by op: CuPy departs from NumPy on edge values (subnormals flushed, sign of zero in
    maximum/fmax, inf/NaN in floor_divide/remainder, shifts past the width), so eager mode is
    compared on ordinary values only. lazyarr's own kernels (lazy mode) get the edges."""
    return random_array(rng, dtype, shape, edges=edges and not _eager())


def _operand(rng, dtype, shape, op_name, position):
    data = _rand(rng, dtype, shape)
    if _eager() and op_name in ("left_shift", "right_shift") and position == 1:
        data = (np.abs(data.astype(np.int64)) % (8 * np.dtype(dtype).itemsize)).astype(dtype)
    if op_name == "hypot" and np.dtype(dtype).kind == "f":
        # libdevice's hypot overflows to inf within a few ulps of the largest float (NumPy not)
        data = np.where(np.abs(data) > np.finfo(dtype).max / 4, 1, data).astype(dtype)
    if op_name == "power" and position == 1 and np.dtype(dtype).kind in "iu":
        data = (np.abs(data.astype(np.int64)) % 5).astype(dtype)
    if op_name == "reciprocal" and np.dtype(dtype).kind in "iu":
        data = np.where(data == 0, 1, data).astype(dtype)   # 1/0 in C: NumPy's value is platform's
    return data


# ------------------------------------------------------------------------------ elementwise
@pytest.mark.parametrize("op, dtype", op_dtype_params(UNARY))
def test_unary(op, dtype, gmode, rng):
    for shape in sim_sized([(), (0,), (7,), (3, 5), (1000,)], [(), (0,), (3, 5), (20,)]):
        a = _operand(rng, dtype, shape, op.name, 0)
        _check(getattr(la, op.name), op.numpy, (a,), inexact=op.name in INEXACT)


@pytest.mark.parametrize("op, dtype", op_dtype_params(BINARY))
def test_binary(op, dtype, gmode, rng):
    for sa, sb in sim_sized([((1001,), (1001,)), ((6, 7), (7,))], [((20,), (20,))]) + \
            [((3, 1), (1, 5)), ((), (4,)), ((0,), (1,))]:
        a = _operand(rng, dtype, sa, op.name, 0)
        b = _operand(rng, dtype, sb, op.name, 1)
        _check(getattr(la, op.name), op.numpy, (a, b), inexact=op.name in INEXACT)


@pytest.mark.parametrize("op", BINARY, ids=lambda o: o.name)
def test_binary_mixed_dtypes(op, gmode, rng):
    if gmode == "eager" and op.name.startswith("logical_"):
        pytest.xfail("eager cuda = CuPy: logical_and/or/xor of some mixed dtype pairs differ "
                     "from NumPy (seen on the H200, CuPy 14.2)")
    pairs = [(DTYPES[i], DTYPES[j]) for i, j in rng.integers(0, len(DTYPES), (sim_sized(10, 2), 2))]
    for da, db in pairs:
        a = _operand(rng, da, (9,), op.name, 0)
        b = _operand(rng, db, (9,), op.name, 1)
        _check(getattr(la, op.name), op.numpy, (a, b), inexact=op.name in INEXACT)


SCALARS = [2, -3, 0, 2.5, -0.0, float("nan"), True, 300]


@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("op", [o for o in BINARY if o.name in (
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "maximum", "less",
    "power", "left_shift", "right_shift", "bitwise_and")], ids=lambda o: o.name)
def test_binary_python_scalars(op, scalar, gmode, rng):
    if gmode == "eager" and scalar is True:
        pytest.xfail("eager cuda: `cupy_array + True` raises TypeError (core eager path + CuPy)")
    dtypes = (np.int8, np.uint16, np.int64, np.float16, np.float32, np.float64)
    turn = (BINARY.index(op) + SCALARS.index(scalar)) % len(dtypes)   # the simulator: one in turn
    for dtype in sim_sized(dtypes, dtypes[turn:turn + 1]):
        if op.name == "power" and np.dtype(dtype).kind in "iu" and isinstance(scalar, int) \
                and scalar > 60:
            continue
        a = _operand(rng, dtype, (5,), op.name, 0)
        _check(getattr(la, op.name), op.numpy, (a, scalar), inexact=op.name in INEXACT)


@pytest.mark.parametrize("dtype", GPU_DTYPES, ids=str)
def test_where_clip_astype(dtype, gmode, rng):
    cond = rng.integers(0, 2, 12).astype(bool).reshape(3, 4)
    a = _rand(rng, dtype, (3, 4))
    b = _rand(rng, dtype, (1, 4))
    _check(la.where, np.where, (cond, a, b))
    _check(la.where, np.where, (a, a, 0))
    bounds = [(0, 5), (-1.5, 2.5), (None, 3), (0, 300)]
    if gmode == "lazy":     # CuPy's clip (eager) ignores a NaN bound; NumPy propagates it
        bounds.append((float("nan"), 1.0))
    for lo, hi in bounds:
        _check(la.clip, np.clip, (a, lo, hi))
    src = _rand(rng, dtype, (4, 4), edges=np.dtype(dtype).kind != "f")
    for dst in GPU_DTYPES:
        data = src
        if _eager() and src.dtype.kind == "f" and np.dtype(dst).kind == "u":
            # a negative float to an unsigned int is undefined in C: NumPy (x86) wraps through
            # int64, CuPy gives 0. lazyarr's kernels (lazy) follow NumPy; CuPy gets |x|
            data = np.abs(src)
        _check(lambda x, dst=dst: x.astype(dst), lambda x, dst=dst: x.astype(dst), (data,))


def test_chain_matches_numpy(gmode, rng):
    n = sim_sized(100_003, 1003)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    lx, ly = la.asarray(x), la.asarray(y)
    got = np.asarray(la.sqrt(abs(lx * ly + 1.5)) * la.tanh(lx) - ly)
    want = np.sqrt(np.abs(x * y + np.float32(1.5))) * np.tanh(x) - y
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    exact = np.asarray(lx * ly + 1.5)
    np.testing.assert_array_equal(exact, x * y + np.float32(1.5))   # no FMA contraction


# ------------------------------------------------------------------------------ reductions
def _reduction_cases(op, full):
    yield (), None
    yield (0,), None
    yield (0, 3), 0
    yield (0, 3), 1
    if SIMULATED:       # a full reduction, one over the rows, one over the columns
        yield (6, 9), None
        yield (6, 9), 1
        yield (3, 4, 5), 0
        return
    shapes = [(17,), (6, 9), (3, 4, 5), (5000,)] if full else [(6, 9), (3, 4, 5)]
    for shape in shapes:
        for axis in [None, 0, -1, *([(0, -1), 1] if len(shape) > 1 else [])]:
            if isinstance(axis, tuple) and not op.takes_axis_tuple:
                continue
            yield shape, axis


@pytest.mark.parametrize("keepdims", sim_sized([False, True], [False]))
@pytest.mark.parametrize("op, dtype", op_dtype_params(REDUCTIONS, per_op=1))
def test_reduction(op, dtype, keepdims, gmode, rng):
    full = np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.int8), np.dtype(bool),
                               np.dtype(np.float16), np.dtype(np.uint64))
    for shape, axis in _reduction_cases(op, full):
        a = _rand(rng, dtype, shape)
        if op.name == "prod" and a.dtype.kind != "c":
            a = np.where(abs(a.astype(np.float64)) > 3, 1, a).astype(dtype)
            if _eager() and a.dtype == np.float16:
                # CuPy multiplies float16 in a tree: a partial overflows to inf while another
                # underflows to 0, and inf * 0 is NaN where NumPy's running product gives -inf.
                # Order-independent data for CuPy's float16 product (lazyarr's kernels get the above)
                a = np.sign(a)
        if op.name in ("sum", "mean", "var", "std") and a.dtype.kind in "fiu" and a.dtype.itemsize >= 2:
            # ±max in one sum: the result (inf, 0, ...) depends on the summation order
            big = np.finfo(a.dtype).max / 4 if a.dtype.kind == "f" else np.iinfo(a.dtype).max // 4
            a = np.where(np.abs(a.astype(np.float64)) > float(big), 1, a).astype(dtype)
        if op.name in ("sum", "mean", "var", "std") and a.dtype.kind == "c":
            # the same for each part (the sum rule near the edge: test_complex_reductions.py's
            # test_cuda_products_and_sums_follow_the_order_rules)
            big = np.finfo(a.dtype).max / 4
            a = (np.where(np.abs(a.real) > big, 1, a.real) + 1j * np.where(np.abs(a.imag) > big, 1, a.imag)
                 ).astype(dtype)
        if op.name == "prod" and a.dtype.kind == "c" and not _eager():
            # the product rule (docs/testing.rst): the order decides which parts of a product
            # with an infinite part are NaN; moduli up to 3 (no overflow midway) keep the
            # edge values' NaN and infinite parts
            a = np.where(np.abs(a) > 3, np.where(np.isfinite(a), 1, a), a).astype(dtype)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = np.asarray(la.prod(la.asarray(a), axis=axis, keepdims=keepdims))
            problem = complex_product_mismatch(got, a, axis=axis, keepdims=keepdims)
            assert problem is None, (a, axis, problem)
            continue
        # min/max of floats: the sign of a zero result depends on NumPy's SIMD order (compared
        # as values); sums: summation order (tolerance, see the module docstring)
        if a.dtype.kind == "c" and not _eager():
            # complex: the accumulation rule (complex128, rounded once): helpers.lazy_reduction's
            # value, within the tolerance of the kernel's summation order (min/max: NumPy's on
            # the host, exact; argmin/argmax: exact)
            _check(getattr(la, op.name), functools.partial(lazy_reduction, op.name), (a,),
                   inexact=op.name in ("sum", "prod", "mean", "var", "std"), axis=axis,
                   keepdims=keepdims)
            continue
        inexact = op.name not in ("argmin", "argmax", "any", "all") and \
            (op.name not in ("min", "max") or a.dtype.kind == "f")
        _check(getattr(la, op.name), op.numpy, (a,), inexact=inexact, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("op", [o for o in REDUCTIONS if o.takes_dtype], ids=lambda o: o.name)
def test_reduction_dtype_argument(op, gmode, rng):
    a = random_array(rng, np.int8, (4, 6))
    for dt in (np.int16, np.float32, np.float64, np.uint64):
        data = a
        if op.name in ("var", "std") and np.dtype(dt).kind == "u":
            # negative data into uint64: the mean wraps to ~3e18, its squares overflow uint64, and
            # float -> uint64 out of range is undefined in C (x86 NumPy 0, the GPU saturates)
            data = np.where(a < 0, 0, a).astype(a.dtype)
        _check(getattr(la, op.name), op.numpy, (data,), inexact=True, axis=1, dtype=dt)


@pytest.mark.parametrize("shape,axis", sim_sized(
    [((1000, 3000), 1), ((3000, 1000), 0), ((64, 50, 70), (0, 2)), ((64, 50, 70), 1), ((300, 7), 1),
     ((7, 3000), 0),
     # >= 2^18 outputs: a thread per output (cols kernel)
     ((4, 7, 70000), 1), ((2, 3, 270000), (0, 1))],
    # the simulator: the row, column and outer-axes kernels at small sizes (a thread per output:
    # test_cuda_codegen.py's battery, wide_*)
    [((10, 300), 1), ((300, 10), 0), ((6, 5, 7), (0, 2)), ((6, 5, 7), 1)]))
def test_axis_reduction_of_chain(shape, axis, gmode, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    lx = la.asarray(x)
    got = np.asarray(la.sum(lx * lx, axis=axis))
    np.testing.assert_allclose(got, np.sum(x.astype(np.float64) ** 2, axis=axis), rtol=1e-4)
    got = np.asarray(la.max(abs(lx) - 1, axis=axis))
    np.testing.assert_array_equal(got, np.max(np.abs(x) - 1, axis=axis))


@pytest.mark.skipif(SIMULATED, reason="the simulator runs blocks one after another: GPU scheduling "
                    "is what this checks")
def test_reductions_bitwise_deterministic(rng):
    with la.config(mode="lazy", device="cuda"):
        x = la.asarray(rng.standard_normal(1 << 24).astype(np.float32))
        m = la.asarray(rng.standard_normal((2048, 4096)).astype(np.float32))
        for fn in (lambda: la.sum(abs(x) * 1.5), lambda: la.mean(x * x),
                   lambda: la.sum(m * m, axis=1), lambda: la.sum(m * m, axis=0)):
            first = np.asarray(fn()).tobytes()
            assert all(np.asarray(fn()).tobytes() == first for _ in range(10))


@needs_cupy
def test_full_reduction_is_one_launch_and_small(rng):
    import cupy
    with la.config(mode="lazy", device="cuda"):
        x = la.asarray(rng.standard_normal(1 << 26).astype(np.float32))
        plan = la.explain(lambda: la.sum(la.sqrt(abs(x * 2 + 1.5)) * la.tanh(x) - x))
        assert len(plan.kernels) == 1 and "last block" in " ".join(plan.notes)
        la.sum(abs(x))   # compile + warm
        pool = cupy.get_default_memory_pool()
        before = pool.used_bytes()
        r = la.sum(abs(x))
        assert pool.used_bytes() - before <= (1 << 20)
        del r


# ------------------------------------------------------------------------------ layouts
@needs_cupy
def test_strided_and_broadcast_inputs(gmode, rng):
    import cupy
    base = rng.standard_normal((64, 96)).astype(np.float32)
    d = cupy.asarray(base)
    views = [(d[::2, 1::3], base[::2, 1::3]), (d[:, ::-1], base[:, ::-1]), (d.T, base.T),
             (d[5], base[5]), (d[::-3, ::-2], base[::-3, ::-2])]
    for dv, hv in views:
        lv = la.asarray(dv)
        assert lv.data.data.ptr == dv.data.ptr             # no copy
        _compare(np.asarray(lv * 2 + lv), hv * 2 + hv, False)
        _compare(np.asarray(la.sum(lv * lv, axis=-1)), np.sum(hv * hv, axis=-1), True)
        _compare(np.asarray(la.max(lv, axis=0)), np.max(hv, axis=0), False)
    row = la.asarray(cupy.asarray(base[0]))
    _compare(np.asarray(la.asarray(d) - row), base - base[0], False)
    bc = cupy.broadcast_to(cupy.asarray(base[:, :1]), (64, 96))
    _compare(np.asarray(la.asarray(bc) * 3), np.broadcast_to(base[:, :1], (64, 96)) * 3, False)
    _compare(np.asarray(la.asarray(d) - la.asarray(d).mean()), base - base.mean(), True)


@needs_cupy
def test_layout_constants_are_launch_arguments_made_once(rng):
    """An entry's strides, sizes and divisors are CuPy ``CPointer`` objects into one int64
    array it keeps (backend.prepare_constants: CuPy would make a CScalar of each per call),
    pointing at the values of the layout; launches through them compute NumPy's answer."""
    import ctypes

    from cupy.cuda.function import CPointer

    from lazyarr.backends.cuda import render as R
    from lazyarr.backends.cuda.backend import BACKEND
    from lazyarr.backends.cuda.params import PER_CALL
    base = rng.standard_normal((67, 45)).astype(np.float32)
    with la.config(device="cuda", mode="lazy"):
        u = la.asarray(base)
        got = np.asarray(0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]))
    want = np.float32(0.2) * (base[1:-1, 1:-1] + base[:-2, 1:-1] + base[2:, 1:-1] + base[1:-1, :-2] + base[1:-1, 2:])
    np.testing.assert_array_equal(got, want)
    checked = 0
    for (program, _layout, fp_checked, *_), entry in BACKEND._entries.items():
        if entry.constants is None:
            continue
        rendered = R.render(program, entry.geo.spec, shuffles=BACKEND.shuffles, checked=fp_checked)
        want_values = [p.layout_value(entry.geo) for p in rendered.params if p.role not in PER_CALL]
        constants = [v for v in entry.template if v is not None]
        assert all(type(v) is CPointer for v in constants)
        assert [ctypes.c_int64.from_address(v.ptr).value for v in constants] == want_values
        checked += 1
    assert checked


def test_a_loop_of_shrinking_slices_renders_its_kernels_once(monkeypatch, rng):
    """NPBench's covariance step, ``cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] /
    c``: a new shape at every step, and NumPy's values. Only the first step renders kernels;
    the others make an entry for their shape from the same rendered source and kernel
    (``CudaBackend._kernels``), their geometry from ``render.analyze``."""
    from lazyarr.backends.cuda import backend as B
    from lazyarr.backends.cuda import render as R
    from lazyarr.backends.cuda.simulate import BACKEND as SIM
    rendered = []
    render = R.render

    def spy(program, spec, *args, **kwargs):
        rendered.append(spec)
        return render(program, spec, *args, **kwargs)
    monkeypatch.setattr(R, "render", spy)
    for backend in (B.BACKEND, SIM):
        monkeypatch.setattr(backend, "_entries", {})
        monkeypatch.setattr(backend, "_kernels", {})
    M, N = 40, 12          # (every slice of at most one element per thread: one spec)
    data = rng.standard_normal((N, M))
    want = np.zeros((M, M))
    for i in range(M - 1):
        want[i:M, i] = want[i, i:M] = data[:, i] @ data[:, i:M] / (N - 1.0)
    with la.config(device="cuda", mode="lazy"):
        d, cov = la.asarray(data), la.asarray(np.zeros((M, M)))
        counts = []
        for i in range(M - 1):
            cov[i:M, i] = cov[i, i:M] = d[:, i] @ d[:, i:M] / (N - 1.0)
            counts.append(len(rendered))
        got = np.asarray(cov)
    assert counts[0] >= 1 and counts[-1] == counts[0], counts
    # (to rounding: on a GPU the product is cuBLAS's, whose sums round otherwise than NumPy's)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_tables_keyed_by_shapes_stay_bounded(monkeypatch, rng):
    """A loop over ever-new shapes keeps at most ``MAX_ENTRIES`` kernel entries and
    ``_MAX_RULES`` dtype rules (the oldest go first: ``_memo.bounded_insert``), with NumPy's
    values throughout, also for shapes whose entries were dropped and are made again."""
    from lazyarr import _build
    from lazyarr.backends.cuda import backend as B
    from lazyarr.backends.cuda.simulate import BACKEND as SIM
    monkeypatch.setattr(B, "MAX_ENTRIES", 8)
    monkeypatch.setattr(_build, "_MAX_RULES", 8)
    monkeypatch.setattr(_build, "_rules", {})
    for backend in (B.BACKEND, SIM):
        monkeypatch.setattr(backend, "_entries", {})
    a = rng.standard_normal(64)
    with la.config(device="cuda", mode="lazy"):
        x = la.asarray(a)
        for rounds in range(2):             # (the second round's shapes were dropped)
            for i in range(30):
                np.testing.assert_array_equal(np.asarray(x[i:] * 2.0 + 1.0), a[i:] * 2.0 + 1.0)
        sizes = [len(backend._entries) for backend in (B.BACKEND, SIM)]
        assert max(sizes) > 0 and all(n <= 8 for n in sizes), sizes
    assert 0 < len(_build._rules) <= 8


# ------------------------------------------------------------------------------ interop
@needs_cupy
def test_signed_zero_reaches_the_gpu():
    """CuPy copies 0-d host data and fills with a memset for any value == 0, losing -0.0
    (lazyarr._devices.asarray/full work around it); found by the GPU fuzz run."""
    with la.config(device="cuda"):
        for dt in (np.float16, np.float32, np.float64):
            zero = np.array(-0.0, dt)
            for arr in (la.asarray(zero), la.asarray(zero[()]), la.full((), -0.0, dtype=dt),
                        la.full((5,), zero)):
                assert arr.device == "cuda" and np.all(np.signbit(np.asarray(arr))), arr
            for mode in ("eager", "lazy"):
                with la.config(mode=mode):
                    x = la.asarray(zero)
                    got = np.asarray(x + x)
                    assert got.dtype == dt and np.signbit(got), (mode, got)


@needs_cupy
def test_zero_copy_interop_cupy_and_torch():
    import cupy
    c = cupy.arange(10, dtype=cupy.float32)
    x = la.asarray(c)
    assert x.device == "cuda" and x.data.data.ptr == c.data.ptr
    with la.config(mode="lazy"):
        y = (x * 2).compute()
    back = cupy.asarray(y)
    assert back.data.ptr == y.data.data.ptr
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32, device="cuda")
    lt = la.asarray(t)
    assert lt.data.data.ptr == t.data_ptr()
    with la.config(mode="lazy"):
        z = (lt + 1).compute()
    tz = torch.from_dlpack(z)
    assert tz.data_ptr() == z.data.data.ptr
    assert tz.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


# ------------------------------------------------------------------------------ disk cache
_CHILD = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import cupy
    import lazyarr as la
    from lazyarr.backends.cuda import compile as C
    x = la.asarray(cupy.asarray(np.linspace(-1, 1, 4096, dtype=np.float32)))
    y = la.asarray(cupy.asarray(np.linspace(2, -3, 4096, dtype=np.float32)))
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    with la.config(mode="lazy", device="cuda"):
        r = float(la.sum(la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y))
    dt = time.perf_counter() - t0
    print(json.dumps({"r": r, "s": dt, "stats": C.stats, "numba": "numba" in sys.modules}))
""")


def _child(env):
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@needs_cupy
def test_disk_cache_across_processes(tmp_path):
    env = dict(os.environ, LAZYARR_CACHE_DIR=str(tmp_path / "cache"))
    first = _child(env)
    assert first["stats"]["compiled"] == 1 and first["numba"]
    second = _child(env)
    assert second["stats"]["compiled"] == 0 and second["stats"]["disk_hits"] == 1
    assert not second["numba"], "a disk-cache hit must not import Numba"
    assert second["r"] == first["r"]
    for f in (tmp_path / "cache").iterdir():          # corrupt every entry: detected, rebuilt
        f.write_bytes(f.read_bytes()[:-10] + b"garbage!!!")
    third = _child(env)
    assert third["stats"]["compiled"] == 1 and third["r"] == first["r"]
    ro = dict(os.environ, LAZYARR_CACHE_DIR="/proc/lazyarr-cannot-write-here")
    assert _child(ro)["r"] == first["r"]                # unwritable cache: only slower


def test_explain_shows_kernel_source_and_launch():
    with la.config(mode="lazy", device="cuda"):
        x = la.asarray(np.ones(1 << 20, np.float32), device="cuda")
        plan = la.explain(abs(x) * 2 + 1)
    assert plan.backend == backends.fused_name("cuda") and len(plan.kernels) == 1
    assert "def lazyarr_kernel" in plan.kernels[0].source and "grid=" in plan.kernels[0].launch
    assert plan.bytes_read == 4 << 20 and plan.bytes_written == 4 << 20


# ----------------------------------------------------------------------------- issue 11
_GPU_CHILD = textwrap.dedent("""
    import json, time
    import numpy as np
    import lazyarr as la
    x = la.asarray(np.linspace(0, 1, 1 << 20, dtype=np.float32).reshape(-1, 1), device="cuda")
    y = la.asarray(np.linspace(0, 1, 1 << 19, dtype=np.float32).reshape(1, -1), device="cuda")
    float(la.sum(la.sin(x[:4] * y[:, :4])))        # compiled before the long call
    long = lambda: float(la.sum(la.sin(x * y) * la.cos(x - y) + la.sqrt(x + y)))  # 2^39 elements
    t0 = time.monotonic(); long(); once = time.monotonic() - t0
    print(json.dumps({"once": once}), flush=True)
    start = time.monotonic()
    try:
        for _ in range(1000):
            long()
        outcome = "finished"
    except KeyboardInterrupt:
        outcome = "interrupted"
    stopped = time.monotonic()
    a = np.arange(1 << 20, dtype=np.float64)
    ok = float(la.sum(la.asarray(a, device="cuda") * 2)) == float(np.sum(a * 2))
    print(json.dumps({"outcome": outcome, "ran_for": stopped - start, "stopped_at": stopped,
                      "then_correct": ok}))
""")


@needs_cupy   # waits on a CUDA event for a kernel long enough to interrupt
def test_ctrl_c_while_waiting_on_the_gpu():
    """SIGINT while the process waits for a long kernel: KeyboardInterrupt within a fraction
    of the kernel's time (the wait polls, sleeping in Python), and the next result is right."""
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-c", _GPU_CHILD], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        once = json.loads(proc.stdout.readline())["once"]
        time.sleep(max(0.5, once / 2))
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=600)
    finally:
        proc.kill()
    assert proc.returncode == 0, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert result["outcome"] == "interrupted" and result["then_correct"], result
    # (time.monotonic is one clock for both processes) the wait polls: the interrupt lands
    # well before the kernel it waits on would have finished
    assert result["stopped_at"] - sent < 0.5 * once + 0.25, (result, once)


@needs_cupy
def test_computed_gpu_result_releases_inputs_and_pickles_small():
    import gc
    import pickle
    import weakref

    import cupy

    data = cupy.arange(1 << 22, dtype=cupy.float32)
    alive = weakref.ref(data)
    s = la.sum(la.asarray(data) * 2 + 1)
    del data
    gc.collect()
    assert alive() is None
    assert len(pickle.dumps(s)) < 1000
    back = pickle.loads(pickle.dumps(s))
    assert back.device == "cuda" and back.item() == s.item()


# ----------------------------------------------------------------------------- issue 11's rules
def _lazy_cuda(op, a, **kw):
    with la.config(mode="lazy", device="cuda"), np.errstate(all="ignore"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(getattr(la, op)(la.asarray(a), **kw))


def test_float_reductions_accumulate_in_float64_and_round_once_on_the_gpu():
    """The accumulation rule (docs/testing.rst "Reductions") on the H200: the issue's cases,
    against the rule computed with NumPy in float64 (tests/helpers.lazy_reduction)."""
    from helpers import lazy_reduction
    from test_reduction_rules import _issue_cases

    for name, op, a, kw in _issue_cases():
        got, want = _lazy_cuda(op, a, **kw), lazy_reduction(op, a, **kw)
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert np.array_equal(np.isnan(got), np.isnan(want)), (name, got, want)
        np.testing.assert_allclose(got, want, rtol=2 * float(np.finfo(want.dtype).eps), atol=0,
                                   err_msg=name)


def test_var_std_over_a_leading_axis_are_two_pass_accurate_on_the_gpu():
    col = np.array([1e9 - 2, 1e9 - 1, 1e9 - 1])
    a = col[:, None] * np.ones((1, 4))
    np.testing.assert_allclose(_lazy_cuda("var", a, axis=0), 2 / 9, rtol=1e-12)
    np.testing.assert_allclose(_lazy_cuda("std", a, axis=0), np.sqrt(2 / 9), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=str)
def test_min_max_of_signed_zeros_follow_ieee_maximum_minimum_on_the_gpu(dtype):
    """Full, row and column kernels: max prefers +0, min -0, at any position and length (the
    simulator takes about a second per launch whatever the length: there, one length and
    position, which still crosses a warp and the block tree)."""
    lengths = (33,) if SIMULATED else (2, 3, 31, 32, 33, 129, 1000, 70000)
    for n in lengths:
        for pos in [n // 2] if SIMULATED else sorted({0, n // 2, n - 1}):
            for fill, other in ((-0.0, 0.0), (0.0, -0.0)):
                a = np.full(n, fill, dtype)
                a[pos] = other
                for op in ("max", "min"):
                    got = _lazy_cuda(op, a * 1)
                    assert got == 0 and np.signbit(got) == (op == "min"), (op, n, pos, fill)
                m = np.stack([a, a[::-1]])
                for op, axis, x in (("max", 1, m), ("min", 1, m), ("max", 0, m.T.copy()),
                                    ("min", 0, m.T.copy())):
                    got = _lazy_cuda(op, x, axis=axis)
                    assert np.all(got == 0) and np.all(np.signbit(got) == (op == "min")), \
                        (op, axis, n, pos, fill)


def test_npymath_ops_are_fused_on_cuda():
    # fmod, logaddexp, copysign, ... are templates (NumPy's formulas) in the fused kernel in
    # lazy mode; eager mode runs them on the host with NumPy's loops (reference.CUPY_ON_HOST)
    a = np.array([-0.0, 1.5, -2.5, np.inf, np.nan, 7.0])
    for mode in ("lazy", "eager"):
        if SIMULATED and mode == "eager":
            continue
        with la.config(device="cuda", mode=mode), np.errstate(all="ignore"):
            x = la.asarray(a)
            e = la.copysign(la.logaddexp(la.fmod(x, 2.0), x), -1.0) + 1
            if mode == "lazy":
                plan = la.explain(e)
                assert len(plan.kernels) == 1 and "not fused" not in " ".join(plan.notes)
            _compare(e.to_numpy(), np.copysign(np.logaddexp(np.fmod(a, 2.0), a), -1.0) + 1, True)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_reductions_of_float32_subnormals_in_lazy_mode(op):
    """CuPy's kernels flush float32 subnormals (``-ftz=true``): the chain is written as float64
    for CuPy's argmax/argmin (``backend._fallback_chain``), so tiny values keep their order."""
    a = np.array([[1e-40, 2e-40, 0.0, -1e-40, -3e-40], [0.0, -0.0, 5e-45, 1e-44, 1e-38]],
                 np.float32)
    with la.config(device="cuda", mode="lazy"):
        for axis in (None, 0, 1):
            for x in (la.asarray(a), la.asarray(a) * 1):       # a leaf, and a chain
                assert_same(np.asarray(getattr(la, op)(x, axis=axis)), getattr(np, op)(a, axis=axis))
