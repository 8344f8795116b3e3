"""ldexp, frexp and modf: native and fused (issue 16 item 3), against NumPy.

``ldexp`` is a binary op of the registry (float mantissa, integer exponent). ``frexp`` and
``modf`` are NumPy's two-output ufuncs: each output is its own single-output op of the
registry (``frexp_mantissa``/``frexp_exponent``, ``modf_fraction``/``modf_integral``) and the
public function returns the pair, so each output fuses with what computes its operand and with
what reads it. Values are NumPy's bit for bit (signed zeros, inf, NaN, subnormals), on every
dtype, computed and pending operands, lazy and eager mode; on the cuda device (the simulator,
``LAZYARR_CUDA_SIM=1``, and the GPU) too.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import DTYPES, FLOAT_DTYPES, assert_same, edge_values, pending

import lazyarr as la
from lazyarr._fallback import FallbackFunction

_EXPONENTS = [np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64),
              np.dtype(np.uint8), np.dtype(np.uint32)]


def _exponents(n: int, dtype: np.dtype) -> np.ndarray:
    """``n`` exponents of ``dtype``: 0, ±1, the extremes of the dtype and of the float range
    (overflow to inf, underflow to 0 and subnormals, huge exponents clamped by NumPy)."""
    vals = [0, 1, -1, 3, -3, 60, -60, 1000, -1000, 1100, -1075, 2 ** 31 - 1, -2 ** 31,
            2 ** 40, -2 ** 40, 127, -128, 255]
    info = np.iinfo(dtype)
    vals = [v for v in vals if info.min <= v <= info.max]
    return np.resize(np.array(vals, dtype), n)


def _outcome(fn, *args):
    """``fn(*args)``'s value, or the type of the exception it raised (NumPy's are compared)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return type(exc)


def _same_outcome(got, want) -> None:
    if isinstance(want, type):
        assert got is want, (got, want)
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(np.asarray(g), w)
    else:
        assert_same(np.asarray(got), want)


# ------------------------------------------------------------------------------ ldexp
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_ldexp_of_every_dtype_and_exponent_dtype(mode, dtype):
    x = edge_values(dtype)
    for edt in _EXPONENTS + [np.dtype(np.uint64), np.dtype(np.float64), np.dtype(bool)]:
        e = np.resize(edge_values(edt) if edt.kind in "fb" else _exponents(len(x), edt), len(x))
        want = _outcome(np.ldexp, x, e)
        for a in (la.asarray(x), pending(x)):
            got = _outcome(lambda a, b: la.ldexp(a, b).to_numpy(), a, la.asarray(e))
            _same_outcome(got, want)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_ldexp_edges_overflow_underflow_and_python_exponents(mode, dtype):
    x = edge_values(dtype)
    n = len(x)
    for e in (_exponents(n, np.dtype(np.int64)), _exponents(n, np.dtype(np.int32))[::-1]):
        x2, e2 = np.repeat(x, len(e)), np.tile(e, n)          # every pair
        _same_outcome(_outcome(lambda a, b: la.ldexp(a, b).to_numpy(), la.asarray(x2), la.asarray(e2)),
                      _outcome(np.ldexp, x2, e2))
    for k in (0, 5, -5, 2000, -2000, 2 ** 31 - 1, 2 ** 40, -2 ** 63, 2 ** 64):   # Python ints
        _same_outcome(_outcome(lambda a: la.ldexp(a, k).to_numpy(), la.asarray(x)),
                      _outcome(np.ldexp, x, k))
    _same_outcome(_outcome(lambda a: la.ldexp(a, 1.5), la.asarray(x)), _outcome(np.ldexp, x, 1.5))
    # empty, 0-d, a negative stride, a broadcast exponent row
    e = _exponents(n, np.dtype(np.int32))
    assert_same(la.ldexp(la.asarray(x[:0]), la.asarray(e[:0])).to_numpy(), np.ldexp(x[:0], e[:0]))
    with np.errstate(all="ignore"):
        assert_same(la.ldexp(la.asarray(x)[3], 7).to_numpy(), np.asarray(np.ldexp(x[3], 7)))
        assert_same(la.ldexp(la.asarray(x)[::-2], la.asarray(e)[::-2]).to_numpy(),
                    np.ldexp(x[::-2], e[::-2]))
        m = np.resize(x, (4, n))
        assert_same(la.ldexp(pending(m), la.asarray(e)).to_numpy(), np.ldexp(m, e))


def test_ldexp_fuses_and_reports_floating_point_errors_as_numpy(kernels):
    x = np.linspace(-3, 3, 1000)
    e = np.arange(1000) % 7 - 3
    out = la.sum(la.ldexp(la.sin(la.asarray(x)), la.asarray(e)) * 2)
    assert kernels == [7]                  # input, sin, input, ldexp, scalar, multiply, sum
    np.testing.assert_allclose(out.to_numpy(), np.sum(np.ldexp(np.sin(x), e) * 2), rtol=1e-12)
    big = la.asarray(np.array([1.0, 2.0, 0.0]))
    for kind, k in (("overflow", 5000), ("underflow", -5000)):
        with np.errstate(all="raise"), pytest.raises(FloatingPointError, match=f"{kind} encountered in ldexp"):
            np.ldexp(np.array([1.0, 2.0, 0.0]), k)
        with np.errstate(all="raise"), pytest.raises(FloatingPointError, match=f"{kind} encountered in ldexp"):
            la.ldexp(big * 1, k).to_numpy()
        with pytest.warns(RuntimeWarning, match=f"{kind} encountered in ldexp"), np.errstate(all="warn"):
            la.ldexp(big * 1, k).to_numpy()
    with np.errstate(all="raise"):        # exact results, inf and 0 operands: nothing raised
        la.ldexp(la.asarray(np.array([np.inf, 0.0, 3.0])) * 1, la.asarray(np.array([5000, 5000, -1074])))
        assert la.ldexp(big * 1, 3).to_numpy().tolist() == [8.0, 16.0, 0.0]


def test_ldexp_through_numpy_and_the_array_protocols():
    x = la.asarray(np.array([1.5, -2.0, np.inf]))
    r = np.ldexp(x, np.int32(3))                           # __array_ufunc__: native
    assert isinstance(r, la.LazyArray) and not isinstance(la.ldexp, FallbackFunction)
    assert_same(r.to_numpy(), np.ldexp(x.to_numpy(), np.int32(3)))
    with la.config(fallback="error"):
        assert_same(np.ldexp(x * 1, la.asarray(np.array([1, 2, 3]))).to_numpy(),
                    np.ldexp(x.to_numpy(), np.array([1, 2, 3])))


# ------------------------------------------------------------------------------ cuda
def _cuda(fn, *arrays):
    with la.config(mode="lazy", device="cuda"), np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(*[la.asarray(a) for a in arrays])
        outs = out if isinstance(out, tuple) else (out,)
        for o in outs:
            assert not any("not fused" in n for n in la.explain(o).notes)
        return tuple(np.asarray(o) for o in outs) if isinstance(out, tuple) else np.asarray(out)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("edt", [np.dtype(np.int32), np.dtype(np.int64)], ids=str)
@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy")
def test_ldexp_in_the_cuda_kernel(dtype, edt):
    x = edge_values(dtype)
    e = _exponents(len(x), edt)
    x2, e2 = np.repeat(x, len(e)), np.tile(e, len(x))
    with np.errstate(all="ignore"):
        assert_same(_cuda(lambda a, b: la.ldexp(a * 1, b), x2, e2), np.ldexp(x2 * 1, e2))
        assert_same(_cuda(lambda a, b: la.ldexp(a, b), x[:0], e[:0]), np.ldexp(x[:0], e[:0]))
        assert_same(_cuda(lambda a: la.ldexp(a[3], 9) + 0, x), np.asarray(np.ldexp(x[3], 9) + 0))


# ------------------------------------------------------------------------------ frexp, modf
_PAIRS = [np.frexp, np.modf]


@pytest.mark.parametrize("ufunc", _PAIRS, ids=lambda u: u.__name__)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_frexp_and_modf_of_every_dtype(mode, ufunc, dtype):
    # NaN, ±inf, -0.0, subnormals, the extremes; int and bool operands take NumPy's float loop,
    # complex ones NumPy's TypeError
    x = edge_values(dtype)
    fn = getattr(la, ufunc.__name__)
    want = _outcome(ufunc, x)
    for a in (la.asarray(x), pending(x), la.asarray(x)[::-1], la.asarray(np.resize(x, (3, len(x))))[1:, ::2]):
        got = _outcome(lambda a: tuple(r.to_numpy() for r in fn(a)), a)
        w = want if isinstance(want, type) else _outcome(ufunc, a.to_numpy())
        _same_outcome(got, w)


@pytest.mark.parametrize("ufunc", _PAIRS, ids=lambda u: u.__name__)
def test_frexp_and_modf_of_empty_0d_python_numbers_and_lists(mode, ufunc):
    fn = getattr(la, ufunc.__name__)
    for x in (np.zeros(0), np.zeros((2, 0), np.float32), np.asarray(-0.0), np.asarray(np.float16(-np.inf))):
        _same_outcome(tuple(r.to_numpy() for r in fn(la.asarray(x))), ufunc(x))
    for v in (-0.0, 2.5, -np.inf, np.nan, 7, True, [1.5, -3.0]):
        got = fn(v)
        assert isinstance(got, tuple) and all(isinstance(r, la.LazyArray) for r in got)
        _same_outcome(tuple(r.to_numpy() for r in got), tuple(np.asarray(w) for w in ufunc(v)))
    with pytest.raises(TypeError):
        fn(la.asarray(np.ones(2, np.complex64)))
    with pytest.raises(TypeError):
        fn(la.asarray(np.ones(2)), la.asarray(np.ones(2)), la.asarray(np.ones(2)), la.asarray(np.ones(2)))


def test_frexp_of_a_pending_chain_and_its_consumer_is_one_kernel(kernels):
    a = np.linspace(-40, 40, 5001)
    m, e = la.frexp(la.sin(la.asarray(a)) * 1e3)
    out = (m * 2.0 + e).to_numpy()
    assert len(kernels) == 1
    wm, we = np.frexp(np.sin(a) * 1e3)
    assert_same(out, wm * 2.0 + we)
    f, i = la.modf(la.asarray(a) / 3)                   # each output alone: one kernel each
    assert_same(la.sum(i).to_numpy(), np.sum(np.modf(a / 3)[1]))
    assert_same(f.to_numpy(), np.modf(a / 3)[0])
    assert len(kernels) == 3
    # (the spare register of the loop's other output: exact beside every register use)
    x = la.asarray(np.resize(edge_values(np.dtype(np.float32)), 9000))
    fr, it = la.modf(x * 3)
    got = la.where(fr > 0, it, fr) + la.frexp(it)[1]
    with np.errstate(all="ignore"):
        wf, wi = np.modf(np.resize(edge_values(np.dtype(np.float32)), 9000) * 3)
        assert_same(got.to_numpy(), np.where(wf > 0, wi, wf) + np.frexp(wi)[1])


def test_numpy_frexp_and_modf_of_lazy_arrays_are_native():
    a = np.array([1.5, -0.0, np.inf, -np.inf, np.nan, 6e-310, -1e300])
    x = la.asarray(a) * 1
    with la.config(fallback="error"):
        for ufunc in _PAIRS:
            got = ufunc(x)                     # __array_ufunc__: the native pair, pending
            assert isinstance(got, tuple) and not got[0].is_materialized
            _same_outcome(tuple(r.to_numpy() for r in got), ufunc(a))
    assert not isinstance(la.frexp, FallbackFunction) and not isinstance(la.modf, FallbackFunction)


@pytest.mark.parametrize("ufunc", _PAIRS, ids=lambda u: u.__name__)
def test_frexp_and_modf_outputs_and_keywords_as_numpy(ufunc):
    # out= (a tuple, positional outputs), where=, dtype=, casting=: NumPy's own call, with its
    # errors; a LazyArray given as an output is written in its memory
    a = np.array([1.5, -0.0, np.inf, -2.25, np.nan])
    fn = getattr(la, ufunc.__name__)
    second = np.int32 if ufunc is np.frexp else np.float64
    o1, o2 = la.zeros(5), la.zeros(5, second)
    r = fn(la.asarray(a), out=(o1, o2))
    assert r[0] is o1 and r[1] is o2
    _same_outcome((o1.to_numpy(), o2.to_numpy()), ufunc(a))
    p1, p2 = la.zeros(5), la.zeros(5, second)
    ufunc(la.asarray(a), p1, p2)                  # NumPy's positional outputs
    _same_outcome((p1.to_numpy(), p2.to_numpy()), ufunc(a))
    with pytest.raises(TypeError):                # la's: never an array written into
        fn(la.asarray(a), p1, p2)
    w1, w2 = np.full(5, 7.0), np.full(5, 7, second)
    ufunc(a, out=(w1, w2), where=a > 0)
    q1, q2 = la.full(5, 7.0), la.full(5, 7, second)
    ufunc(la.asarray(a), out=(q1, q2), where=la.asarray(a > 0))
    _same_outcome((q1.to_numpy(), q2.to_numpy()), (w1, w2))
    for dt in (np.float32, np.float16):        # (frexp: NumPy's TypeError, its int32 output)
        _same_outcome(_outcome(lambda: tuple(r.to_numpy() for r in fn(la.asarray(a), dtype=dt))),
                      _outcome(lambda: ufunc(a, dtype=dt)))
    for bad in (dict(out=(la.zeros(5, np.int8), la.zeros(5, second))), dict(out=(la.zeros(4), la.zeros(4))),
                dict(casting="no", dtype=np.float32), dict(out=la.zeros(5))):
        want = _outcome(lambda: ufunc(a, **{k: (tuple(np.asarray(v) for v in x) if isinstance(x, tuple)
                                                else np.asarray(x) if isinstance(x, la.LazyArray) else x)
                                            for k, x in bad.items()}))
        assert isinstance(want, type)
        assert _outcome(lambda: fn(la.asarray(a), **bad)) is want


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy")
def test_frexp_and_modf_in_the_cuda_kernel(dtype):
    x = edge_values(dtype)
    with np.errstate(all="ignore"):                                           # more values
        big = np.resize(x, 700) * np.resize(np.array([1, 3, -7, 0.125], dtype), 700)
    for ufunc in _PAIRS:
        fn = getattr(la, ufunc.__name__)
        with np.errstate(all="ignore"):
            for a in (x, big, x[:0]):
                _same_outcome(_cuda(lambda v: fn(v * 1), a), ufunc(a * 1))
            # both outputs read by one kernel, and a 0-d operand
            first, second = ufunc(big * 1)
            assert_same(_cuda(lambda v: (lambda p: p[0] * 2 + p[1])(fn(v * 1)), big), first * 2 + second)
            assert_same(_cuda(lambda v: fn(v[5] + 0)[1] + 0, x), np.asarray(ufunc(x[5] + 0)[1] + 0))
