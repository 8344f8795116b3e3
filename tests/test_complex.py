"""Complex numbers (issue 17): what the op x dtype suites (tests/test_ops.py, every op on
complex64/complex128 with edge values) do not cover — views of parts, weak complex scalars,
warnings at the user's line, the functions NumPy builds from parts, and the cuda path."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazyarr as la
from helpers import assert_same, edge_values

COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("pending", [False, True])
def test_real_and_imag_are_views_as_numpys(dtype, pending, mode):
    a = np.array([1 + 2j, 3 - 4j, -5j], dtype)
    z = la.asarray(a.copy())
    if pending:
        z, a = z * 1, a * 1
    r, i = z.real, z.imag
    assert r.dtype == a.real.dtype and i.dtype == a.imag.dtype
    r[0] = 7
    a.real[0] = 7
    assert_same(z, a)
    assert_same(i, a.imag)                  # another view of the same memory
    z.imag = 9
    a.imag = 9
    assert_same(z, a)
    assert_same(r, a.real)
    assert_same(i, a.imag)


def test_parts_of_real_arrays(mode):
    a = np.arange(3.0)
    x = la.asarray(a.copy())
    assert x.real is x                       # NumPy: the same memory
    assert_same(x.imag, a.imag)
    x.real = 4
    a.real = 4
    assert_same(x, a)
    with pytest.raises(TypeError, match="does not have imaginary part"):
        x.imag = 1


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int64, np.uint8])
def test_python_complex_scalars_are_weak(dtype, mode):
    a = np.arange(1, 5, dtype=dtype)
    for got, want in [(la.asarray(a) * 1j, a * 1j), (1j + la.asarray(a), 1j + a),
                      (la.asarray(a) ** (0.5 + 0j), a ** (0.5 + 0j))]:
        assert_same(got, want)


def test_complex_to_real_warns_at_the_users_line(mode):
    z = la.asarray(np.array([1 + 2j]))
    with pytest.warns(np.exceptions.ComplexWarning) as record:
        x = z.astype(np.float32)
    assert record[0].filename == __file__
    assert_same(x, np.array([1.0], np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # to bool: no warning, as NumPy
        assert_same(z.astype(bool), np.array([True]))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_angle_conj_abs_of_edge_values(dtype, mode):
    a = edge_values(dtype)
    z = la.asarray(a)
    with np.errstate(all="ignore"):
        assert_same(la.angle(z), np.angle(a))
        assert_same(la.angle(z, deg=True), np.angle(a, deg=True))
        assert_same(z.conj(), a.conj())
        assert_same(la.conjugate(z), np.conjugate(a))
        assert_same(abs(z), abs(a))
        assert_same(la.real(z) + la.imag(z), a.real + a.imag)
    assert_same(la.angle(la.asarray(np.array([-1.0, 0.0, 2.0]))), np.angle(np.array([-1.0, 0.0, 2.0])))


def test_mandelbrot_loop(mode):
    # the NPBench mandelbrot pattern: a complex grid, masked updates, an escape count
    x = np.linspace(-2, 1, 40)
    y = np.linspace(-1.5, 1.5, 30)

    def run(xp):
        c = xp.asarray(x)[None, :] + xp.asarray(y)[:, None] * 1j
        z = xp.zeros_like(c)
        n = xp.zeros(c.shape, dtype=np.int64)
        for _ in range(20):
            inside = abs(z) <= 2
            z[inside] = z[inside] ** 2 + c[inside]
            n[inside] += 1
        return n, z

    n, z = run(la)
    want_n, want_z = run(np)
    assert_same(n, want_n)
    assert_same(z, want_z)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_reductions_follow_the_accumulation_rule(dtype, mode):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(1000) + 1j * rng.standard_normal(1000)).astype(dtype)
    z = la.asarray(a)
    for got, want in [(z.sum(), a.astype(np.complex128).sum().astype(dtype)),
                      (la.mean(z * 2), (a * 2).astype(np.complex128).mean().astype(dtype))]:
        assert got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6 if dtype == np.complex64 else 1e-13)


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
def test_complex_expressions_on_cuda_are_fused():
    a = np.array([1 + 2j, -3 + 0.5j, 0j, np.inf + 1j], np.complex128)
    with la.config(device="cuda", mode="lazy"), np.errstate(all="ignore"):
        z = la.asarray(a)
        expr = abs(z * z + 1j) + la.real(z)
        plan = la.explain(expr)
        assert len(plan.kernels) == 1 and "not fused" not in " ".join(plan.notes)
        assert_same(expr.to_numpy(), abs(a * a + 1j) + a.real)
        expr = la.exp(z) + 1                # npymath's cexp: a helper in the kernel
        plan = la.explain(expr)
        assert len(plan.kernels) == 1 and "not fused" not in " ".join(plan.notes)
        assert_same(expr.to_numpy(), np.exp(a) + 1)
        expr = la.sign(z) + 1               # NumPy 2's z / |z|: a helper in the kernel
        plan = la.explain(expr)
        assert len(plan.kernels) == 1 and "not fused" not in " ".join(plan.notes)
        # (|z| is NumPy's complex abs, where NumPy's sign divides by glibc's hypot: an ulp)
        np.testing.assert_allclose(expr.to_numpy(), np.sign(a) + 1, rtol=0, atol=8 * np.finfo(float).eps)


def test_complex_steps_on_a_device_library_run_with_numpy_on_the_host():
    # CuPy's complex functions are not NumPy's (division by zero, flushed complex64
    # subnormals, no complex clip): eager steps with complex values run NumPy's loops on host
    # copies. A stand-in device library that refuses complex values shows the routing.
    import types

    from lazyarr.backends import reference

    class DeviceArray:
        def __init__(self, a):
            self.a, self.dtype = np.asarray(a), np.asarray(a).dtype

        def get(self):
            return self.a

        def reshape(self, shape):
            return DeviceArray(self.a.reshape(shape))

    def refuse(*args, **kwargs):
        raise AssertionError("a complex step reached the device library")

    fake = types.ModuleType("fakecupy")
    fake.asarray = DeviceArray
    for name in ("divide", "clip", "sum", "negative", "add"):
        setattr(fake, name, refuse)
    z = np.array([1 + 1j, 0j, 1e-45 + 0j], np.complex64)
    zero = np.zeros(3, np.complex64)
    with np.errstate(all="ignore"):
        got = reference.apply(fake, "divide", None, [DeviceArray(z), DeviceArray(zero)])
        assert_same(got.a, z / zero)
    got = reference.apply(fake, "negative", None, [DeviceArray(z)])
    assert_same(got.a, -z)                                   # the subnormal stays
    got = reference.apply(fake, "clip", None, [DeviceArray(z), 0j, 1 + 0j])
    assert_same(got.a, np.clip(z, 0j, 1 + 0j))
    got = reference.apply(fake, "sum", (None, False, np.dtype(np.complex128), 0),
                          [DeviceArray(np.ones(3))])         # a complex dtype= argument
    assert_same(got.a, np.ones(3).sum(dtype=np.complex128))
