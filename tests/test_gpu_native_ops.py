"""Complex values and NumPy's own-formula ops (fmod, nextafter, spacing, logaddexp, ...) in the
fused cuda kernel (issue 17 item 1, issue 16): edge values of every dtype, empty and 0-d arrays,
against NumPy. On the simulated device (``LAZYARR_CUDA_SIM=1``) the float functions are
NumPy's and the C library's, so every exact op must match bit for bit; on a GPU, libdevice's
``hypot`` (complex ``sign``) and the transcendental ops are compared within ``TOL``.

The simulator is slow: each op is one launch over every pair of edge values (or over the
edge values), a few kernels per dtype. The PTX of each template is compiled in
tests/test_cuda_codegen.py's battery (``complex_*``, ``npymath_*``).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_same, edge_values, lazy_reduction

import lazyarr as la

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy")]

TOL = {2: 2e-3, 4: 2e-5, 8: 1e-12}
COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
FLOATS = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)]
CX_UNARY = ["negative", "positive", "conj", "square", "reciprocal", "abs", "real", "imag",
            "isnan", "isinf", "isfinite", "logical_not"]
CX_BINARY = ["add", "subtract", "multiply", "divide", "equal", "not_equal", "less", "less_equal",
             "greater", "greater_equal", "maximum", "minimum", "fmax", "fmin", "logical_and",
             "logical_xor"]
REAL_UNARY = ["spacing", "deg2rad", "rad2deg", "signbit"]
REAL_BINARY = ["fmod", "copysign", "nextafter", "heaviside", "logaddexp", "logaddexp2"]
#: within TOL: transcendental (libdevice)
INEXACT = {"logaddexp", "logaddexp2", "float_power"}


def _pairs(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of ``a``'s values, as two arrays."""
    return np.repeat(a, len(a)), np.tile(a, len(a))


def _lazy(fn, *arrays, fused=True):
    with la.config(mode="lazy", device="cuda"), np.errstate(all="ignore"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(*[la.asarray(a) for a in arrays])
        notes = " ".join(la.explain(out).notes)
        assert ("not fused" not in notes) == fused, notes
        return np.asarray(out)


def _compare(got, want, op: str) -> None:
    if op not in INEXACT:
        assert_same(got, want)
        return
    assert got.dtype == want.dtype and got.shape == want.shape
    for g, w in ((got.real, want.real), (got.imag, want.imag)) if want.dtype.kind == "c" else \
            ((got, want),):
        assert np.array_equal(np.isnan(g), np.isnan(w)), (g, w)
        inf = np.isinf(w)
        assert np.array_equal(g[inf], w[inf])
        fin = np.isfinite(w)
        np.testing.assert_allclose(g[fin].astype(np.float64), w[fin].astype(np.float64),
                                   rtol=TOL[w.dtype.itemsize], atol=TOL[w.dtype.itemsize])


def _check(op: str, *arrays: np.ndarray, ulps=None, fused=True, real_scale=None) -> None:
    """``op`` of ``arrays`` in the kernel against NumPy: exact (``_compare``), or with
    ``ulps``, complex values within that many ulps (``_assert_close_cx``; ``real_scale``:
    the real part's). ``fused=False``: an op that runs on the host (``explain`` says so)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(getattr(np, op if op != "conj" else "conjugate")(*arrays))
    got = _lazy(lambda *xs: getattr(la, op)(*xs), *arrays, fused=fused)
    try:
        if ulps is None:
            _compare(got, want, op)
        else:
            _assert_close_cx(got, want, ulps, real_scale)
    except AssertionError as exc:
        raise AssertionError(f"{op} of {[a.dtype for a in arrays]}: {exc}") from None


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_unary_ops_of_edge_values(dtype):
    # NaN, ±inf, -0.0, huge and tiny values in the real part, in both, in the imaginary part
    z = edge_values(dtype)
    for op in CX_UNARY:
        _check(op, z)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_binary_ops_of_edge_value_pairs(dtype):
    a, b = _pairs(edge_values(dtype))
    for op in CX_BINARY:
        _check(op, a, b)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_where_casts_scalars_empty_and_0d(dtype):
    z = edge_values(dtype)
    cond = np.arange(len(z)) % 3 == 0
    # (contiguous operands: NumPy's complex multiply of a reversed complex64 view rounds a
    # subnormal product to a zero of the other sign, another loop than the contiguous one's)
    w = np.roll(z, 7)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [
            (lambda c, x, y: la.where(c, x, y * (0.5 - 2j)), (cond, z, w),
             np.where(cond, z, w * (0.5 - 2j))),
            # complex -> every real kind (the real part), real -> complex, complex -> complex
            (lambda x: (x * 1).astype(np.float32) + (x - 0).astype(np.int16)
             + (x + 0).astype(bool) + x.real.astype(np.complex64).imag, (z,),
             (z * 1).astype(np.float32) + np.where(np.isfinite(z.real), z.real, 0).astype(np.int16)
             + (z + 0).astype(bool) + z.real.astype(np.complex64).imag),
            (lambda x: (x * 1).astype(np.complex128 if x.dtype == np.complex64 else np.complex64),
             (z,), (z * 1).astype(np.complex128 if z.dtype == np.complex64 else np.complex64)),
            (lambda x: x[:0] / (1 + 1j), (z,), z[:0] / (1 + 1j)),                  # empty
            (lambda x: x[3] * x[4] - 1j, (z,), np.asarray(z[3] * z[4] - 1j)),      # 0-d
            (lambda x: la.sign(x[20]) + abs(x[5]), (z,), np.asarray(np.sign(z[20]) + abs(z[5]))),
        ]
    for k, (fn, args, want) in enumerate(cases):
        if k == 1:      # complex -> int16 of a non-finite real part is undefined in C
            args = (np.where(np.isfinite(z.real), z, 0).astype(dtype),)
            want = (args[0] * 1).astype(np.float32) + args[0].astype(np.int16) + \
                (args[0] + 0).astype(bool) + args[0].real.astype(np.complex64).imag
        # (complex -> integer casts run on the host: wrong on the H200 in the kernel,
        # 2026-12-02; test_complex_functions_without_a_template_... checks that)
        assert_same(_lazy(fn, *args, fused=k != 1), want)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_reductions_in_the_kernel(dtype):
    """sum/prod/mean (complex128 accumulation as two float64 parts, rounded once), any/all:
    full, row and column kernels (rows: warp shuffles of each part on a GPU)."""
    rng = np.random.default_rng(17)
    a = (rng.standard_normal((6, 9)) + 1j * rng.standard_normal((6, 9))).astype(dtype)
    a[2, 3] = 0
    for op in ("sum", "prod", "mean", "any", "all"):
        for axis in (None, 0, 1):
            got = _lazy(lambda x: getattr(la, op)(x * 1, axis=axis), a)
            assert_same(got, lazy_reduction(op, a, axis=axis), exact=op in ("any", "all"))
    edges = edge_values(dtype)[:, None]             # NaN and inf propagate as NumPy's
    got = _lazy(lambda x: la.sum(x * 1, axis=1), edges)
    with np.errstate(all="ignore"):
        assert_same(got, lazy_reduction("sum", edges * 1, axis=1))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_npymath_ops_of_edge_values(dtype):
    e = edge_values(dtype)
    a, b = _pairs(e)
    for op in REAL_BINARY:
        _check(op, a, b)
    for op in REAL_UNARY:
        _check(op, e)
    for op in ("spacing", "signbit", "deg2rad"):   # empty and 0-d
        _check(op, e[:0])
        _check(op, np.asarray(e[3]))
    _check("nextafter", np.asarray(e[3]), np.asarray(e[4]))
    if dtype == np.float64:
        _check("float_power", a, b)


@pytest.mark.parametrize("dtype", [np.dtype(np.int8), np.dtype(np.uint16), np.dtype(np.int64)],
                         ids=str)
def test_integer_fmod_of_edge_values(dtype):
    a, b = _pairs(edge_values(dtype))
    _check("fmod", a, b)
    _check("fmod", np.asarray(a[5]), np.asarray(b[7]))


#: npymath's complex functions (helpers.py ports msun's algorithms; NumPy calls glibc's)
CX_FUNCTIONS = ["sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
                "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh",
                "arccosh", "arctanh", "sign"]
#: finite values within ULPS ulps of |NumPy's value| (normwise: a part much smaller than the
#: other is compared at the larger one's scale, where NumPy's own formulas for expm1 and
#: log1p cancel); power within ULPS * (1 + |b log a|) (glibc's cpow is cexp(b clog(a)),
#: whose rounding errors grow with the exponent's size as those of any such algorithm)
ULPS = 4


def _cx_grid(dtype: np.dtype) -> np.ndarray:
    """Every pair of special parts (zeros of both signs, +-1, +-inf, NaN, huge, tiny,
    subnormal, the values where exp overflows, points on the branch cuts) as complex values."""
    f = np.finfo(dtype)
    parts = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, f.max, -f.max,
                      f.tiny, f.smallest_subnormal, 3.0, 100.0, 89.5 if f.bits == 32 else 710.0,
                      1e-5], f.dtype)
    z = np.empty((len(parts), len(parts)), dtype)
    z.real, z.imag = parts[:, None], parts[None, :]
    return z.ravel()


def _cx_random(dtype: np.dtype, n: int = 96, seed: int = 17) -> np.ndarray:
    """Random values of magnitudes 1e-6 .. 1e6 (1e12 for complex128) at every angle."""
    rng = np.random.default_rng(seed)
    top = 6 if dtype == np.complex64 else 12
    return (10.0 ** rng.uniform(-6, top, n) * np.exp(1j * rng.uniform(-np.pi, np.pi, n))).astype(dtype)


def _ulps_of(scale: np.ndarray, part: np.dtype) -> np.ndarray:
    """One ulp of ``scale`` (clipped to the part's finite range) in float64."""
    with np.errstate(all="ignore"):
        return np.maximum(np.spacing(np.minimum(scale, np.finfo(part).max).astype(part)),
                          np.finfo(part).smallest_subnormal).astype(np.float64)


def _assert_close_cx(got: np.ndarray, want: np.ndarray, ulps: np.ndarray | float = ULPS,
                     real_scale: np.ndarray | None = None) -> None:
    """NaN where NaN, infinities and the signs of zeros as NumPy's (C99 Annex G's special
    values), finite parts within ``ulps`` ulps of NumPy's |value| (the real part's within
    ulps of ``real_scale`` where that is larger)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    part = np.finfo(want.dtype).dtype
    with np.errstate(all="ignore"):
        scale = np.abs(want.astype(np.complex128))
    tol = np.asarray(ulps) * _ulps_of(scale, part)
    real_tol = tol if real_scale is None else np.maximum(tol, np.asarray(ulps) * _ulps_of(real_scale, part))
    for g, w, tol in ((got.real, want.real, real_tol), (got.imag, want.imag, tol)):
        bad = np.isnan(g) != np.isnan(w)
        inf = np.isinf(w) | np.isinf(g)
        bad |= inf & (g != w)
        zeros = (w == 0) & (g == 0)
        bad |= zeros & (np.signbit(g) != np.signbit(w))
        fin = np.isfinite(w) & np.isfinite(g)
        with np.errstate(all="ignore"):
            bad |= fin & (np.abs(g.astype(np.float64) - w.astype(np.float64)) > tol)
        assert not bad.any(), f"got {got[bad]} want {want[bad]}"


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("op", CX_FUNCTIONS)
def test_complex_functions_of_special_and_random_values(op, dtype):
    """One kernel per op: the special-value grid and random values across magnitudes.
    log1p's real part is NumPy's log(|1 + z|): one ulp more or less in the hypot (glibc's and
    libdevice's last bits differ) moves it by ~eps, whatever its size, so its scale is 1
    (NumPy's own value of a small |z| is that far off: its formula cancels there)."""
    z = np.concatenate([_cx_grid(dtype), _cx_random(dtype)])
    _check(op, z, ulps=ULPS, real_scale=np.ones(z.shape) if op == "log1p" else None)


def power_ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The bound for complex ``a ** b`` = cexp(b clog(a)): ``ULPS * (1 + |b log a|)`` ulps
    (glibc's cpow and the port round alike; their errors grow with the exponent's size)."""
    with np.errstate(all="ignore"):
        growth = 1 + np.abs(b.astype(np.complex128) * np.log(a.astype(np.complex128)))
    return ULPS * np.where(np.isfinite(growth), growth, 1)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_power(dtype):
    """npy_cpow: small integer exponents by repeated (plain) multiplication, exactly as NumPy;
    zero exponents and bases; otherwise cexp(b clog(a)) (glibc's cpow); complex ** real."""
    z = _cx_grid(dtype)[::3]
    exps = np.array([0, 1, 2, 3, -1, -2, 5, -7, 99, 0.5, -0.5, 2.5, 1j, 1 + 1j, -2j, np.inf,
                     np.nan, complex(0, np.inf)], dtype)
    a, b = np.repeat(z, len(exps)), np.tile(exps, len(z))
    integral = (b.imag == 0) & (np.trunc(b.real) == b.real) & (np.abs(b.real) < 100)
    _check("power", a[integral], b[integral], ulps=0)          # NumPy's own products
    a, b = np.concatenate([a[~integral], _cx_random(dtype)]), \
        np.concatenate([b[~integral], _cx_random(dtype, seed=5) / 1e3])
    _check("power", a, b, ulps=power_ulps(a, b))
    r = np.array([2.0, 0.5, -1.5, 3.0], np.finfo(dtype).dtype)       # complex ** real
    zr = _cx_random(dtype, 4)
    _check("power", zr, r, ulps=ULPS * 64)
    if dtype == np.complex64:                                      # float_power: complex128
        _check("float_power", zr, r, ulps=ULPS * 64)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_rint_clip_empty_0d_and_a_fused_chain(dtype):
    z = _cx_grid(dtype)
    with np.errstate(all="ignore"):
        _check("rint", z * 3.7)
    _check("clip", z, np.asarray(-1 + 0.5j, dtype), np.asarray(2 - 1j, dtype))
    _check("clip", z, np.roll(z, 5), np.roll(z, 11))
    for op in ("exp", "log", "sqrt", "arctanh"):       # empty and 0-d
        _check(op, z[:0], ulps=ULPS)
        _check(op, np.asarray(z[40]), ulps=ULPS)
    _check("power", np.asarray(z[40]), np.asarray(z[41]), ulps=np.inf)   # (0-d: a NaN or not)
    x = _cx_random(dtype, 64)
    with la.config(mode="lazy", device="cuda"):
        lz = la.asarray(x)
        expr = la.exp(lz * 1e-6) * la.sqrt(lz) + la.log(lz) - la.arcsinh(lz) ** 2
        plan = la.explain(expr)
        assert len(plan.kernels) == 1 and "not fused" not in " ".join(plan.notes), plan.notes
        got = np.asarray(expr)
    with np.errstate(all="ignore"):
        want = np.exp(x * 1e-6) * np.sqrt(x) + np.log(x) - np.arcsinh(x) ** 2
    _assert_close_cx(got, want, ulps=64)      # (four functions and a sum: rounding adds up)


def test_complex_functions_without_a_template_still_run_on_the_host():
    """Complex casts to integers run on the host with NumPy (wrong on the H200 in the kernel,
    2026-12-02): explain says so, values NumPy's."""
    a = np.array([1 + 2j, -3 + 0.5j, 0j, np.inf + 1j], np.complex128)
    with la.config(mode="lazy", device="cuda"), np.errstate(all="ignore"):
        b = np.where(np.isfinite(a), a, 0)     # (an integer of inf is undefined in C)
        for expr, want in ((la.astype(la.asarray(b) * 1, la.int8), (b * 1).astype(np.int8)),):
            notes = " ".join(la.explain(expr).notes)
            assert "complex-to-integer casts are not fused on cuda" in notes, notes
            assert_same(np.asarray(expr), want)


def _special_rows(dtype: np.dtype, k: int = 64) -> np.ndarray:
    """Rows of ``k`` complex values whose sums are exact in any order (small integers) with
    special values in one or both parts: +-inf, NaN, -0.0."""
    n = np.nan
    rows = np.tile(np.arange(k) % 5 - 2 + 1j * (np.arange(k) % 3 - 1), (9, 1)).astype(dtype)
    rows[0, 17] = complex(np.inf, 1)                   # real +inf
    rows[1, 3], rows[1, 40] = complex(-np.inf, 0), complex(0, np.inf)   # -inf, +inf i
    rows[2, 5], rows[2, 6] = complex(np.inf, 0), complex(-np.inf, 0)    # inf - inf: NaN
    rows[3, k - 1] = complex(1, n)                     # a NaN imaginary part alone
    rows[4, 0] = complex(n, -np.inf)                   # NaN real, -inf imaginary
    rows[5] = complex(-0.0, -0.0)                      # -0 parts: the sum is +0 (NumPy's)
    rows[6] = complex(-0.0, 1)
    rows[7, 31], rows[7, 32] = complex(np.inf, np.inf), complex(1, -np.inf)   # across the shuffle
    return rows


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_sums_and_means_of_infinite_nan_and_signed_zero_parts(dtype):
    """The parts are accumulated as separate float64 values (render.Reduction.parts), so
    +-inf, NaN and -0.0 parts come out as NumPy's, in the full, row (warp shuffles of each
    part) and column kernels, each one kernel (passed on the H200, 2026-12-03d); while
    ``_COMPLEX_ON_HOST`` holds them, explain says they run on the host."""
    from lazyarr.backends.cuda import backend as cuda_backend
    rows = _special_rows(dtype)
    for op in ("sum", "mean"):
        with la.config(mode="lazy", device="cuda"):
            z = la.asarray(rows)
            for expr in (lambda: getattr(la, op)(z * 1j, axis=1),
                         lambda: getattr(la, op)(z.T * 1j, axis=0)):
                plan = la.explain(expr)
                if op in cuda_backend._COMPLEX_ON_HOST:     # (the switch: its comment says why)
                    assert "not fused on cuda" in " ".join(plan.notes), plan
                else:
                    assert len(plan.kernels) == 1 and "not fused" not in " ".join(plan.notes), plan
        assert_same(_lazy(lambda x: getattr(la, op)(x * 1j, axis=1), rows),
                    lazy_reduction(op, rows * 1j, axis=1))
        assert_same(_lazy(lambda x: getattr(la, op)(x.T * 1j, axis=0), rows),
                    lazy_reduction(op, rows.T * 1j, axis=0))
        for r in rows:
            assert_same(_lazy(lambda x: getattr(la, op)(x * 1j), r), lazy_reduction(op, r * 1j))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_products_of_special_parts(dtype):
    """Products of units and small integers are exact in any order: NumPy's bits. With an
    infinite or NaN part, which parts end up NaN depends on the order of the products
    (inf * 0), so there the result must be non-finite where NumPy's is."""
    k = 48
    units = np.array([1, -1, 1j, -1j, 1 + 1j, 2], dtype)
    rows = units[np.random.default_rng(5).integers(0, 6, (6, k))]
    rows[1] = np.where(np.arange(k) % 2, 1 + 1j, complex(-0.0, 1))
    assert_same(_lazy(lambda x: la.prod(x + 0, axis=1), rows), lazy_reduction("prod", rows, axis=1))
    assert_same(_lazy(lambda x: la.prod(x.T + 0, axis=0), rows), lazy_reduction("prod", rows.T, axis=0))
    for r in rows:
        assert_same(_lazy(lambda x: la.prod(x + 0), r), lazy_reduction("prod", r))
    special = _special_rows(dtype, k)[:5] / 2
    got = _lazy(lambda x: la.prod(x + 0, axis=1), special)
    want = lazy_reduction("prod", special, axis=1)
    assert np.array_equal(np.isfinite(got), np.isfinite(want)), (got, want)
