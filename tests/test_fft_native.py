"""``lazyarr.fft`` (lazyarr/_fft.py): every function of ``numpy.fft`` native. Values against
NumPy's (to rounding relative to the largest magnitude: pocketfft builds and cuFFT round
differently), NumPy 2's dtypes, shapes (``n``/``s`` cropping and padding), norms, errors and
deprecation warnings; a pending operand computed by one fused kernel into the buffer the
library transforms; the call's record for ``la.explain``; ``numpy.fft.<name>(lazy)``;
``la.jit``; and the cuda device (``-m gpu``; with ``LAZYARR_CUDA_SIM=1`` its array module is
NumPy, so there the library call is ``numpy.fft`` on the simulated device's host buffers)."""
from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pytest
from helpers import random_data

import lazyarr as la
from lazyarr import _numpy_names
from lazyarr.backends import cpu_fused

DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.int32]
ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
MANY_AXES = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
REAL_INPUT = ("rfft", "ihfft", "rfft2", "rfftn")


_data = partial(random_data, bools="nonzero")


def _close(got, want, computed_in=None):
    """``got`` (lazy) against NumPy's ``want``, within the precision of the transform's
    working dtype (``computed_in``: want's own unless the result was cast after it)."""
    assert isinstance(got, la.LazyArray)
    got = got.to_numpy()
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                  want.dtype, want.shape)
    precise = (computed_in or want.dtype) in (np.float64, np.complex128)
    tol = 1e-12 if precise else 1e-5
    scale = float(np.abs(want).max()) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(scale, 1.0))


def _applies(name, dtype):
    return not (name in REAL_INPUT and np.dtype(dtype).kind == "c")


# ----------------------------------------------------------------------------- values
@pytest.mark.parametrize("name, dtype", [(f, d) for f in ONE_AXIS for d in DTYPES
                                         if _applies(f, d)], ids=str)
@pytest.mark.parametrize("shape, n, axis", [((16,), None, -1), ((16,), 9, -1), ((15,), 24, 0),
                                            ((6, 10), None, 0), ((6, 10), 7, -1),
                                            ((3, 4, 9), 12, 1), ((0, 8), None, -1),
                                            ((1,), None, 0)])
def test_one_axis_transforms_are_numpys(name, dtype, shape, n, axis):
    a = _data(shape, dtype)
    if name in ("irfft", "hfft") and n is None and shape[axis] == 1:
        n = 1       # (the default, 0 points, is NumPy's error: test_errors)
    want = getattr(np.fft, name)(a, n=n, axis=axis)
    _close(getattr(la.fft, name)(la.asarray(a), n=n, axis=axis), want)


@pytest.mark.parametrize("name, dtype", [(f, d) for f in MANY_AXES for d in DTYPES
                                         if _applies(f, d)], ids=str)
@pytest.mark.parametrize("shape, s, axes", [((6, 8), None, None), ((5, 6, 8), (4, 10), (0, 2)),
                                            ((4, 6, 8), None, (-1, 0)), ((7, 9), (3, 4), (0, 1)),
                                            ((2, 6, 8), (6, 16), (-2, -1)), ((3, 4), (3,), (1,)),
                                            ((4, 4), (4, 4, 6), (0, 1, 0))])
def test_many_axes_transforms_are_numpys(name, dtype, shape, s, axes):
    a = _data(shape, dtype)
    kw = {} if axes is None and name.endswith("2") else {"axes": axes}
    want = getattr(np.fft, name)(a, s=s, **kw)
    _close(getattr(la.fft, name)(la.asarray(a), s=s, **kw), want)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("name", ONE_AXIS + MANY_AXES)
def test_every_norm(name, norm):
    a = _data((6, 10), np.float64)
    x = la.asarray(a)
    _close(getattr(la.fft, name)(x, norm=norm), getattr(np.fft, name)(a, norm=norm))
    # a pending operand too, n cropped and padded
    if name in ONE_AXIS:
        for n in (5, 13):
            _close(getattr(la.fft, name)(x * 2 - 1, n=n, norm=norm),
                   getattr(np.fft, name)(a * 2 - 1, n=n, norm=norm))


@pytest.mark.parametrize("dtype", [np.float16, np.bool_, np.int8, np.uint64], ids=str)
@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "rfftn", "irfftn"])
def test_other_dtypes_are_numpys(name, dtype):
    """float16 is transformed in single precision (irfft/hfft give float16 back, as NumPy's);
    integers and bools in double."""
    a = _data((4, 8), dtype)
    want = getattr(np.fft, name)(a)
    _close(getattr(la.fft, name)(la.asarray(a)), want)
    _close(getattr(la.fft, name)(la.asarray(a) + dtype(1) if dtype != np.bool_ else
                                 ~la.asarray(a)),
           getattr(np.fft, name)(a + dtype(1) if dtype != np.bool_ else ~a))


def test_round_trips_and_lists():
    a = _data((5, 12), np.complex128)
    x = la.asarray(a)
    _close(la.fft.ifft(la.fft.fft(x)), np.fft.ifft(np.fft.fft(a)))
    _close(la.fft.irfftn(la.fft.rfftn(x.real), s=(5, 12), axes=(0, 1)),
           np.fft.irfftn(np.fft.rfftn(a.real), s=(5, 12), axes=(0, 1)))
    _close(la.fft.fft([1.0, 2.0, 3.0]), np.fft.fft([1.0, 2.0, 3.0]))
    _close(la.fft.fft(np.arange(6.0)), np.fft.fft(np.arange(6.0)))


def test_array_api_signatures():
    a = _data((6, 8), np.float32)
    x = la.asarray(a)
    _close(la.fft.fft(x, n=4, axis=0, norm="ortho"), np.fft.fft(a, n=4, axis=0, norm="ortho"))
    _close(la.fft.fftn(x, s=(3, 5), axes=(0, 1), norm="forward"),
           np.fft.fftn(a, s=(3, 5), axes=(0, 1), norm="forward"))
    _close(la.fft.irfftn(la.fft.rfftn(x), s=(6, 8), axes=(0, 1), norm="backward"),
           np.fft.irfftn(np.fft.rfftn(a), s=(6, 8), axes=(0, 1)))
    _close(la.fft.hfft(x, n=5, axis=-1), np.fft.hfft(a, n=5, axis=-1))
    _close(la.fft.fftshift(x, axes=0), np.fft.fftshift(a, axes=0))


def test_empty_axes_and_zero_length_batches():
    a = np.ones((0, 8), np.float32)
    _close(la.fft.rfft(la.asarray(a)), np.fft.rfft(a))
    _close(la.fft.fft2(la.asarray(a), s=(2, 8)), np.fft.fft2(a, s=(2, 8)))
    b = np.ones((3, 4))
    out = la.fft.fftn(la.asarray(b), axes=())
    np.testing.assert_array_equal(out.to_numpy(), np.fft.fftn(b, axes=()))
    assert out.dtype == np.float64     # (NumPy's input as it is)


# ----------------------------------------------------------------------------- errors
def _same_error(call_la, call_np, match=None):
    with pytest.raises(Exception) as want:
        call_np()
    with pytest.raises(type(want.value)) as got:
        call_la()
    assert str(got.value) == str(want.value) or match and match in str(got.value), \
        (str(got.value), str(want.value))


@pytest.mark.parametrize("name", ONE_AXIS)
def test_errors(name):
    a = _data((4, 6), np.float64)
    x = la.asarray(a)
    for kw in ({"n": 0}, {"n": -3}, {"norm": "x"}, {"norm": "Ortho"}, {"axis": 2},
               {"n": 4, "axis": 2}, {"n": 2.5}):
        _same_error(lambda kw=kw: getattr(la.fft, name)(x, **kw),
                    lambda kw=kw: getattr(np.fft, name)(a, **kw))
    e = np.ones(0)
    _same_error(lambda: getattr(la.fft, name)(la.asarray(e)), lambda: getattr(np.fft, name)(e))
    one = np.ones((4, 1))        # irfft/hfft: n = 0 by default
    _same_error(lambda: getattr(la.fft, name)(la.asarray(one), axis=-1, n=0),
                lambda: getattr(np.fft, name)(one, axis=-1, n=0))
    for kw in ({}, {"norm": "x"}, {"n": 0, "norm": "x"}, {"n": 2, "norm": "x"}):
        _same_error(lambda kw=kw: getattr(la.fft, name)(la.asarray(np.array(1.0)), **kw),
                    lambda kw=kw: getattr(np.fft, name)(np.array(1.0), **kw))
    if name in ("rfft", "ihfft"):
        c = _data((4, 6), np.complex64)
        for n in (6, 7):
            _same_error(lambda n=n: getattr(la.fft, name)(la.asarray(c), n=n),
                        lambda n=n: getattr(np.fft, name)(c, n=n))


@pytest.mark.parametrize("name", MANY_AXES)
def test_many_axes_errors_and_warnings(name):
    a = _data((4, 6), np.float64)
    x = la.asarray(a)
    for kw in ({"s": (2, 3), "axes": (0,)}, {"axes": (0, 5)}, {"s": (4, 0), "axes": (0, 1)},
               {"norm": "x"}, {"s": (4, 6), "axes": (0, 3)}):
        _same_error(lambda kw=kw: getattr(la.fft, name)(x, **kw),
                    lambda kw=kw: getattr(np.fft, name)(a, **kw))
    if name.endswith("n"):      # s without axes: NumPy 2's deprecation, then its result
        with pytest.warns(DeprecationWarning, match="`axes` should not be `None`"):
            got = getattr(la.fft, name)(x, s=(4, 4))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            _close(got, getattr(np.fft, name)(a, s=(4, 4)))
    with pytest.warns(DeprecationWarning, match="containing `None` values"):
        got = getattr(la.fft, name)(x, s=(None, 5), axes=(0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _close(got, getattr(np.fft, name)(a, s=(None, 5), axes=(0, 1)))
    _close(getattr(la.fft, name)(x, s=(-1, 5), axes=(0, 1)),
           getattr(np.fft, name)(a, s=(-1, 5), axes=(0, 1)))


# ----------------------------------------------------------------------------- pending operands
@pytest.fixture
def launches(kernels, monkeypatch):
    """The ``kernels`` fixture (lazy mode on the CPU, the programs run into new memory),
    with the programs run into memory given to them (``run_into``) recorded as ``"into"``."""
    real = cpu_fused.CpuFusedBackend.run_into
    monkeypatch.setattr(cpu_fused.CpuFusedBackend, "run_into",
                        lambda self, lowered, out, **kw: kernels.append("into")
                        or real(self, lowered, out, **kw))
    return kernels


@pytest.mark.parametrize("name, dtype, kw", [
    ("rfft", np.float32, {}), ("rfft", np.float64, {"n": 100}), ("fft", np.float32, {}),
    ("fft", np.complex128, {"n": 300, "axis": 0}), ("ifft", np.float64, {"axis": 0}),
    ("irfft", np.complex64, {"n": 64}), ("hfft", np.complex128, {}), ("ihfft", np.float32, {}),
    ("fft2", np.float64, {}), ("rfftn", np.float32, {"s": (20, 60), "axes": (0, 1)}),
    ("irfft2", np.complex128, {"s": (40, 30)}), ("ifftn", np.complex64, {"axes": (0,)})])
def test_a_pending_operand_is_one_fused_kernel_then_the_call(launches, name, dtype, kw):
    a = _data((48, 200), dtype)
    x = la.asarray(a)
    launches.clear()
    got = getattr(la.fft, name)(la.sqrt(abs(x)) * 2 - 1, **kw)
    assert launches == ["into"]               # the chain, into the library's buffer
    assert got.is_materialized and got._node.origin[0] == f"fft.{name}"
    chain = np.sqrt(np.abs(a)) * np.asarray(2, a.real.dtype) - np.asarray(1, a.real.dtype)
    _close(got, getattr(np.fft, name)(chain.astype(np.result_type(chain, a)), **kw))
    launches.clear()
    y = got * 2 + 1                            # elementwise work on the result: one kernel
    y.compute()
    assert len(launches) == 1 and launches[0] != "into"


def test_the_chain_is_computed_in_the_dtype_the_transform_reads(monkeypatch):
    """A float32 chain into a float32 buffer for rfft, a real chain into a complex one for fft,
    only the part of the axis the transform reads; no other buffer."""
    seen = []
    real = np.fft.rfft, np.fft.fft
    monkeypatch.setattr(np.fft, "rfft", lambda b, **kw: seen.append(b) or real[0](b, **kw))
    monkeypatch.setattr(np.fft, "fft", lambda b, **kw: seen.append(b) or real[1](b, **kw))
    x = la.asarray(_data((8, 1000), np.float32))
    with la.config(mode="lazy", device="cpu"):
        la.fft.rfft(la.sqrt(abs(x)) * 2 - 1)
        la.fft.fft(x * 2, n=300)
        la.fft.fft(x * 2, n=3000)
    assert [(b.dtype, b.shape) for b in seen] == [(np.float32, (8, 1000)),
                                                  (np.complex64, (8, 300)),
                                                  (np.complex64, (8, 1000))]


def test_explain_lists_the_call_with_bytes_and_flops():
    x = la.asarray(_data((64, 4096), np.float32))
    with la.config(mode="lazy", device="cpu"):
        r = la.fft.rfft(la.sqrt(abs(x)) * 2 - 1)
        plan = la.explain(abs(r) * 2)
        (call,) = plan.library_calls
        assert (call.name, call.bytes_read, call.bytes_written, call.flops) == \
            ("fft.rfft", 64 * 4096 * 4, 64 * 2049 * 8, int(2.5 * 4096 * 12 * 64))
        assert len(plan.kernels) == 1
        (call,) = la.explain(abs(la.fft.fft2(x)) + 1).library_calls
        # 5 n log2 n per complex transform: 64 of 4096 points, then 4096 of 64
        assert (call.name, call.flops) == ("fft.fft2", 5 * 4096 * 12 * 64 + 5 * 64 * 6 * 4096)
        plan = la.explain(lambda: la.fft.fft(x * 2))
        assert len(plan.kernels) == 1          # (the chain's kernel, the call's first step)


# ----------------------------------------------------------------------------- shifts
@pytest.mark.parametrize("shape, axes", [((7,), None), ((8,), None), ((5, 6), None),
                                         ((5, 6), 0), ((5, 6), (1,)), ((3, 4, 5), (0, 2)),
                                         ((3, 4, 5), -1), ((0, 3), None)])
@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts_are_numpys(name, shape, axes):
    a = _data(shape, np.complex64)
    x = la.asarray(a)
    np.testing.assert_array_equal(getattr(la.fft, name)(x, axes=axes).to_numpy(),
                                  getattr(np.fft, name)(a, axes=axes))
    np.testing.assert_array_equal(getattr(la.fft, name)(x * 2, axes).to_numpy(),
                                  getattr(np.fft, name)(a * 2, axes))


def test_a_shift_is_no_library_call(launches):
    """``fftshift`` is ``roll``: of a pending input along axis 0 one kernel into the result;
    of the transform's result (memory) a copy of its two halves, and what reads it one
    kernel."""
    a = _data((4096,), np.float32)
    x = la.asarray(a)
    launches.clear()
    got = la.fft.fftshift(x * 2)
    _close(got, np.fft.fftshift(a * np.float32(2)))
    assert len(launches) == 2     # (each half of the pending input into its part)
    with la.config(mode="lazy", device="cpu"):
        y = la.fft.fftshift(la.fft.fft(x)).real * 2
    launches.clear()
    _close(y.compute(), np.fft.fftshift(np.fft.fft(a)).real * np.float32(2))
    assert len(launches) == 1


# ----------------------------------------------------------------------------- out=
def test_out():
    a = _data((4, 8), np.float64)
    x = la.asarray(a)
    out = la.zeros((4, 8), dtype=la.complex128)
    r = la.fft.fft(x * 2, out=out)
    assert r is out
    _close(out, np.fft.fft(a * 2))
    o = np.zeros((4, 5), np.complex128)
    assert np.fft.rfft(x, out=o) is o
    np.testing.assert_allclose(o, np.fft.rfft(a), rtol=1e-12, atol=1e-12)
    for norm in ("forward", "ortho", None):
        out = la.zeros((4, 5), dtype=la.complex128)
        assert la.fft.ihfft(x - 1, norm=norm, out=out) is out
        _close(out, np.fft.ihfft(a - 1, norm=norm))
        out = la.zeros((4, 8), dtype=la.complex64)     # (same_kind: complex128 written there)
        assert la.fft.fft2(x, norm=norm, out=out) is out
        _close(out, np.fft.fft2(a, norm=norm).astype(np.complex64))
    out = la.zeros((4, 8))
    got = la.fft.hfft(x, n=8, out=out)       # ignored by NumPy 2.4's hfft, ifft2 and irfft2
    assert got is not out and not out.to_numpy().any()
    _same_error(lambda: la.fft.fft(x, out=la.zeros((4, 7), dtype=la.complex128)),
                lambda: np.fft.fft(a, out=np.zeros((4, 7), np.complex128)))


# ----------------------------------------------------------------------------- the namespace
def test_every_name_is_native_and_numpy_reaches_it():
    assert _numpy_names.status("fft")[0] == "native"
    for name in np.fft.__all__:
        assert _numpy_names.status(f"fft.{name}") == ("native", ""), name
        assert getattr(la.fft, name).__module__ == "lazyarr.fft"
    a = _data((6, 8), np.float32)
    x = la.asarray(a)
    for name in ONE_AXIS + MANY_AXES + ["fftshift", "ifftshift"]:
        got = getattr(np.fft, name)(x)
        assert isinstance(got, la.LazyArray), name
        want = getattr(np.fft, name)(a)
        if name.endswith("shift"):
            np.testing.assert_array_equal(got.to_numpy(), want)
        else:
            _close(got, want)


def test_jit_replays_the_calls():
    def f(x):
        spectrum = la.fft.rfft(la.sqrt(abs(x)) * 2 - 1, n=48)
        return la.fft.irfft(spectrum * 0.5, n=x.shape[-1]) + la.fft.fft2(x).real

    jitted = la.jit(f)
    with la.config(mode="lazy"), warnings.catch_warnings():
        warnings.simplefilter("error", la.JitWarning)
        for seed in range(3):
            a = _data((8, 64), np.float32, seed)
            got = jitted(la.asarray(a))
            np.testing.assert_array_equal(got.to_numpy(), f(la.asarray(a)).to_numpy())
            chain = np.sqrt(np.abs(a)) * np.float32(2) - np.float32(1)
            _close(got, np.fft.irfft(np.fft.rfft(chain, n=48) * np.float32(0.5), n=64)
                   + np.fft.fft2(a).real)
    assert jitted.traces == 1


# ----------------------------------------------------------------------------- cuda
_NEEDS_CUDA = pytest.mark.skipif(not la.cuda_available(),
                                 reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int32], ids=str)
def test_one_axis_transforms_on_cuda(dtype):
    a = _data((6, 20), dtype)
    with la.config(device="cuda", mode="lazy"):
        x = la.asarray(a)
        for name in ONE_AXIS:
            if not _applies(name, dtype):
                continue
            for kw in ({}, {"n": 11, "norm": "ortho"}, {"n": 32, "axis": 0, "norm": "forward"}):
                got = getattr(la.fft, name)(x, **kw)
                assert got.device == "cuda"
                _close(got, getattr(np.fft, name)(a, **kw))
            got = getattr(la.fft, name)(x * 2 - 1, n=13)      # pending: into the buffer
            assert got.device == "cuda"
            _close(got, getattr(np.fft, name)(a * 2 - 1, n=13))


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.complex64], ids=str)
def test_many_axes_transforms_shifts_and_out_on_cuda(dtype):
    a = _data((4, 6, 8), dtype)
    with la.config(device="cuda", mode="lazy"):
        x = la.asarray(a)
        for name in MANY_AXES:
            if not _applies(name, dtype):
                continue
            for kw in ({}, {"s": (3, 10), "axes": (0, 2)}, {"axes": (1, 1)}):
                _close(getattr(la.fft, name)(x, **kw), getattr(np.fft, name)(a, **kw))
        _close(la.fft.irfftn(x + 1, s=(5, 7), axes=(1, 2)),
               np.fft.irfftn(a + dtype(1), s=(5, 7), axes=(1, 2)))
        np.testing.assert_array_equal(la.fft.fftshift(x, axes=(0, 2)).to_numpy(),
                                      np.fft.fftshift(a, axes=(0, 2)))
        np.testing.assert_array_equal(la.fft.ifftshift(x * 2).to_numpy(),
                                      np.fft.ifftshift(a * dtype(2)))
        want = np.fft.fft(a, axis=1)
        out = la.zeros(want.shape, dtype=la.complex128)
        assert la.fft.fft(x, axis=1, out=out) is out
        _close(out, want.astype(np.complex128), want.dtype)    # (cuFFT's complex64, cast)
        with pytest.raises(ValueError, match="output array has wrong shape"):
            la.fft.fft(x, n=3, out=out)
        want = np.fft.ihfft(a.real, norm="forward")
        out = la.zeros(want.shape, dtype=want.dtype)
        assert la.fft.ihfft(x.real, norm="forward", out=out) is out
        _close(out, want)
        with pytest.raises(ValueError, match="Invalid number of FFT data points"):
            la.fft.rfft2(x.real, s=(0, 2))
        empty = la.fft.rfft(la.zeros((0, 8), dtype=la.float32))     # (cuFFT: no empty batch)
        assert empty.device == "cuda" and empty.shape == (0, 5) and empty.dtype == np.complex64
        with pytest.raises(ValueError, match='Invalid norm value x; should be "backward", '):
            la.fft.ifft(x, norm="x")
