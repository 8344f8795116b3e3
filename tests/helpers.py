"""Test data and comparison helpers shared by the test modules."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _build
from lazyarr._devices import cuda_simulated
from lazyarr._dtypes import SUPPORTED_DTYPES
from lazyarr.backends._bind import bound

DTYPES = list(SUPPORTED_DTYPES)
FLOAT_DTYPES = [d for d in DTYPES if d.kind == "f"]
COMPLEX_DTYPES = [d for d in DTYPES if d.kind == "c"]
INT_DTYPES = [d for d in DTYPES if d.kind in "iu"]

#: The cuda device is Numba's simulator here (``LAZYARR_CUDA_SIM=1``): GPU tests run a
#: representative subset at small sizes (docs/testing.rst), and those needing CuPy skip.
SIMULATED = cuda_simulated()
#: one dtype of each kind and width class the kernels special-case (bool as uint8, float16
#: through float32, 64-bit ints, unsigned)
SIM_DTYPES = [np.dtype(d) for d in ("bool", "int8", "uint16", "int64", "float16", "float32",
                                    "float64")]
GPU_DTYPES = SIM_DTYPES if SIMULATED else DTYPES
NO_CUPY = "needs CuPy: the simulated cuda device (LAZYARR_CUDA_SIM=1) has none; checked on the GPU"
needs_cupy = pytest.mark.skipif(SIMULATED, reason=NO_CUPY)


def sim_sized(gpu: Any, sim: Any) -> Any:
    """``gpu`` on a GPU, ``sim`` on the simulated device (a launch of one block of 256 threads
    takes ~0.1 s there, a full reduction ~1 s)."""
    return sim if SIMULATED else gpu


def op_dtype_params(ops: list[Any], per_op: int = 2) -> list[Any]:
    """``(op, dtype)`` parameters: every pair on a GPU; on the simulated device ``per_op``
    dtypes per op, taken in turn from :data:`SIM_DTYPES` so that each dtype meets many ops."""
    if SIMULATED:
        k = len(SIM_DTYPES)
        pairs = [(op, SIM_DTYPES[(i * per_op + j) % k]) for i, op in enumerate(ops)
                 for j in range(per_op)]
    else:
        pairs = [(op, dt) for op in ops for dt in DTYPES]
    return [pytest.param(op, dt, id=f"{op.name}-{dt}") for op, dt in pairs]


def edge_values(dtype: np.dtype) -> np.ndarray:
    """The values where implementations disagree: NaN, ±inf, -0.0, extremes, subnormals."""
    if dtype.kind == "f":
        info = np.finfo(dtype)
        vals = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, info.max, info.min,
                info.tiny, info.smallest_subnormal, -info.smallest_subnormal, 3.0, 100.0]
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        vals = [0, 1, 2, 7, info.max, info.min, info.max - 1, info.min + 1]
        if dtype.kind == "i":
            vals += [-1, -2, -7]
    elif dtype.kind == "c":
        re = edge_values(np.finfo(dtype).dtype)
        n = len(re)
        z = np.zeros(3 * n, dtype)
        z.real[:n] = re                                    # in the real part (imaginary +0)
        z.real[n:2 * n], z.imag[n:2 * n] = re, re[::-1]    # in both parts
        z.imag[2 * n:] = re                                # in the imaginary part alone
        return z
    else:
        vals = [True, False]
    return np.array(vals, dtype=dtype)


def nan_slices(dtype: np.dtype, bound: float | None = None) -> np.ndarray:
    """Three rows of :func:`edge_values` (the middle one all NaN for floats and complex: a
    NaN-only slice); finite values above ``bound`` (squares or products that would overflow)
    replaced by 1."""
    row = edge_values(dtype)
    a = np.stack([row, np.roll(row, 3), row[::-1]])
    if dtype.kind in "fc":
        a[1] = np.nan
    if bound is not None and dtype.kind == "f":
        a = np.where(np.isfinite(a) & (np.abs(a.astype(np.float64)) > bound), 1, a).astype(dtype)
    return a


def random_data(shape: tuple[int, ...], dtype: Any = np.float64, seed: Any = 0,
                ints: tuple[int, int] = (-5, 5), bools: str = "coin",
                scale: float = 1.0) -> np.ndarray:
    """Random values of ``dtype`` drawn from ``np.random.default_rng(seed)`` (``seed`` an int,
    or a Generator to draw from): for floats the standard normal times ``scale`` (complex:
    each part); for integers ``rng.integers(*ints)`` (half-open; cast to ``dtype``, so negative
    ones wrap for unsigned dtypes); for bools a fair coin (``bools="coin"``) or the nonzero of
    those integers (``"nonzero"``)."""
    rng = np.random.default_rng(seed)
    kind = np.dtype(dtype).kind
    if kind == "b" and bools == "coin":
        return rng.integers(0, 2, shape).astype(bool)
    if kind in "iub":
        return rng.integers(*ints, shape).astype(dtype)
    a = rng.standard_normal(shape) * scale
    if kind == "c":
        a = a + 1j * (rng.standard_normal(shape) * scale)
    return a.astype(dtype)


def random_array(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...],
                 edges: bool = True) -> np.ndarray:
    """Random data of ``dtype`` (:func:`random_data`: floats times 4, integers from -100 to
    100 within the dtype's range) with edge values mixed in (when the array is big enough)."""
    dtype = np.dtype(dtype)
    ints = (-100, 101)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        ints = (max(info.min, -100), min(info.max, 100) + 1)
    data = random_data(shape, dtype, rng, ints=ints, scale=4).reshape(-1)
    if edges and data.size:
        ev = edge_values(dtype)
        idx = rng.choice(data.size, size=min(data.size, len(ev)), replace=False)
        data[idx] = ev[: len(idx)]
    return data.reshape(shape)


def each_same(got: Any, want: Any, same: Any) -> None:
    """``same(got, want)``, or for a tuple of results (NumPy's ``unique(..., return_counts=True)``,
    a function's several results) the same length and ``same`` of each pair."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    else:
        same(got, want)


def assert_same(got, want, exact: bool = True, rtol: float | None = None) -> None:
    """Same dtype, same shape, and the same values (NaN where NaN, the sign of zeros too).

    ``exact=False`` compares floats within ``rtol`` (default by dtype) — used for
    reductions of fused backends, whose summation order differs from NumPy's.
    """
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    if want.dtype.kind == "c":          # part by part: NaN positions and signed zeros of each
        assert_same(got.real, want.real, exact, rtol)
        assert_same(got.imag, want.imag, exact, rtol)
        return
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"NaN positions differ:\n{got}\n{want}"
    if exact:
        np.testing.assert_array_equal(got, want)
        zeros = want == 0
        assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros])), "sign of zero differs"
    else:
        tol = rtol if rtol is not None else {2: 2e-3, 4: 2e-5, 8: 1e-12}[want.dtype.itemsize]
        np.testing.assert_allclose(got, want, rtol=tol, atol=0, equal_nan=True)


def lazy_reduction(name: str, a: np.ndarray, **kw) -> np.ndarray:
    """What lazy mode must return for the reduction ``np.<name>(a, **kw)`` (docs/testing.rst,
    "Reductions"), computed here independently of lazyarr's code:

    * float ``sum``/``prod``/``mean``/``var``/``std``: the elements cast to NumPy's loop dtype,
      accumulated in float64, the float64 result rounded once to NumPy's result dtype
      (complex: in complex128);
    * float ``min``/``max``: NumPy's value, a zero of the sign IEEE 754-2019 gives (+0 > -0);
    * anything else: NumPy's result.
    """
    fn = getattr(np, name)
    a = np.asarray(a)
    with np.errstate(all="ignore"):
        want = np.asarray(fn(a, **kw))
        if want.dtype.kind not in "fc":
            return want
        if name in ("sum", "prod", "mean", "var", "std"):
            kw = dict(kw)
            dt = kw.pop("dtype", None)
            if dt is not None:
                loop = np.dtype(dt)
            elif name in ("sum", "prod"):
                loop = want.dtype
            else:
                loop = a.dtype if a.dtype.kind in "fc" else np.dtype(np.float64)
            wide = np.complex128 if loop.kind == "c" else np.float64
            return np.asarray(fn(a.astype(loop).astype(wide), **kw)).astype(want.dtype)
    if name in ("min", "max") and want.dtype.kind == "f" and (want == 0).any():
        axis, keep = kw.get("axis"), kw.get("keepdims", False)
        zeros = a == 0
        if name == "max":   # +0 when a +0 is among the reduced elements
            neg = ~np.any(zeros & ~np.signbit(a), axis=axis, keepdims=keep)
        else:               # -0 when a -0 is
            neg = np.any(zeros & np.signbit(a), axis=axis, keepdims=keep)
        want = np.where(want == 0, np.where(neg, -0.0, 0.0).astype(want.dtype), want).astype(want.dtype)
    return want


def complex_product_mismatch(got: np.ndarray, a: np.ndarray, axis=None, keepdims=False,
                             rtol: float | None = None) -> str | None:
    """Where a lazy complex ``prod`` (``got``) of ``a`` breaks the product rule
    (docs/testing.rst, "Accumulation rule"), or None. NumPy multiplies in sequence from
    ``1+0j``; the kernels in blocks and trees, so which parts of a non-finite product are
    NaN or +-inf depends on the order. The rule, checked per result against ``a``'s parts
    and against NumPy's own product (``np.prod`` in ``a``'s dtype and the rule's
    complex128 one, ``lazy_reduction``) alike:

    * an element with a NaN part: ``nan+nanj``;
    * else an element with an infinite part: both parts non-finite (each +-inf or NaN);
    * else (finite elements) where the reference is finite: each part within ``rtol``
      times the reference's modulus (plus the smallest normal value times what the factors
      can grow it by: an underflow midway is order-dependent too); where the reference has a non-finite part the product
      overflowed midway (its order decides which parts), and ``got`` must have a
      non-finite part only if the exact modulus is past twice the largest finite value."""
    a = np.asarray(a)
    parts = np.stack([a.real, a.imag])
    nan_in = np.isnan(parts).any(axis=0).any(axis=axis, keepdims=keepdims)
    inf_in = np.isinf(parts).any(axis=0).any(axis=axis, keepdims=keepdims) & ~nan_in
    with np.errstate(all="ignore"):
        numpys = np.asarray(np.prod(a, axis=axis, keepdims=keepdims))
        ruled = lazy_reduction("prod", a, axis=axis, keepdims=keepdims)
        logmod = np.sum(np.log2(np.abs(a.astype(np.complex128))), axis=axis, keepdims=keepdims)
    got = np.asarray(got)
    if got.dtype != ruled.dtype or got.shape != ruled.shape:
        return f"dtype/shape {got.dtype}{got.shape} != {ruled.dtype}{ruled.shape}"
    nan_both = lambda v: np.isnan(v.real) & np.isnan(v.imag)            # noqa: E731
    nonfinite_both = lambda v: ~np.isfinite(v.real) & ~np.isfinite(v.imag)  # noqa: E731
    for name, v in (("lazyarr", got), ("NumPy", numpys), ("the complex128 product", ruled)):
        if not nan_both(v)[nan_in].all():
            return f"{name}: not nan+nanj where an element has a NaN part: {v[nan_in]}"
        if not nonfinite_both(v)[inf_in].all():
            return f"{name}: a finite part where an element has an infinite part: {v[inf_in]}"
    fin_in = ~nan_in & ~inf_in
    ok = fin_in & np.isfinite(ruled)
    tol = rtol if rtol is not None else {8: 2e-5, 16: 1e-12}[ruled.dtype.itemsize]
    mod = np.abs(ruled[ok].astype(np.complex128))
    # gradual underflow midway (subnormal parts) is order-dependent too: an absolute error
    # of the smallest normal value, times what the later factors can grow it by
    with np.errstate(all="ignore"):
        growth = np.exp2(np.sum(np.maximum(np.log2(np.abs(a.astype(np.complex128))), 0), axis=axis,
                                keepdims=keepdims))
    atol = np.finfo(ruled.dtype).tiny * np.broadcast_to(growth, ruled.shape)[ok]
    for part in ("real", "imag"):
        g, w = (getattr(v[ok], part).astype(np.float64) for v in (got, ruled))
        if not (np.abs(g - w) <= tol * mod + atol).all():
            return f"{part} parts off the finite reference: {got[ok]} vs {ruled[ok]}"
    over = fin_in & ~np.isfinite(ruled) & (logmod > np.log2(np.finfo(ruled.dtype).max) + 1)
    if np.isfinite(got[over]).any():
        return f"finite where the exact product is past twice the largest value: {got[over]}"
    return None


def sum_part_mismatch(got: float, values: np.ndarray, result_dtype: np.dtype) -> str | None:
    """Where one part of a complex (or a float64) ``sum`` breaks the sum rule near the
    overflow edge (docs/testing.rst, "Accumulation rule"), or None: the part is within
    ``4 (1 + log2 n) eps`` times ``sum |x|`` of the exact sum (rounded to ``result_dtype``)
    when it is finite, and it may be +-inf or NaN only where ``sum |x|`` is past the largest
    float64 (a partial sum can overflow in some order: NumPy's pairwise one or the kernel's)
    or the exact sum rounds past the result dtype's largest value."""
    from fractions import Fraction
    values = np.asarray(values, np.float64).ravel()
    exact = sum((Fraction(float(v)) for v in values), Fraction(0))
    size = sum((Fraction(abs(float(v))) for v in values), Fraction(0))
    n = max(len(values), 1)
    big = Fraction(float(np.finfo(np.float64).max))
    limit = Fraction(float(np.finfo(result_dtype).max))
    got = float(got)
    if not np.isfinite(got):
        if size > big or abs(exact) > limit:
            return None
        return f"{got} where no partial sum can overflow (sum |x| = {float(size):.6g}, exact {float(exact):.6g})"
    bound = 4 * (1 + np.log2(n)) * np.finfo(np.float64).eps
    spacing = Fraction(float(np.spacing(np.asarray(abs(got), result_dtype))))   # its own rounding
    if abs(Fraction(got) - exact) > Fraction(bound) * size + spacing:
        return f"{got} is off the exact sum {float(exact):.17g} by more than the bound"
    return None


def pending(a: np.ndarray) -> la.LazyArray:
    """A pending LazyArray of ``a``'s values and dtype (nothing computed yet, in lazy mode):
    ``where(True, a, a)``, which any test can run as computed and as pending input (built
    with ``eager_max_size=0``: a small ``where`` of computed operands runs at once)."""
    x = la.asarray(a)
    with la.config(eager_max_size=0):
        out = la.where(la.asarray(np.ones(a.shape, bool)), x, x)
    assert not out.is_materialized or la.get_config().mode == "eager"
    return out


def record_bound_reductions(monkeypatch, describe, runs):
    """Record the reductions of computed arrays too, which run their kernel through a runner
    bound once (``_build._bound_reduction``) rather than the backend's ``run``: each call
    appends ``describe(lowered)`` to ``runs``. The bound runners made before are dropped."""
    def recording(backend, lowered, **kw):
        run = bound(backend, lowered, **kw)
        return lambda buffers: runs.append(describe(lowered)) or run(buffers)
    monkeypatch.setattr(_build, "_bound_reductions", {})
    monkeypatch.setattr(_build, "bound", recording)


def warning_messages(fn: Any) -> list[str]:
    """The RuntimeWarning messages ``fn()`` emits under NumPy's "warn" error state (underflow
    ignored, as NumPy's default), sorted: what tests of floating-point errors compare."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(all="warn", under="ignore"):
            fn()
    return sorted({str(w.message) for w in caught if w.category is RuntimeWarning})


def lazy_warning_messages(fn: Any, arrays: tuple[Any, ...], device: str) -> list[str]:
    """:func:`warning_messages` of ``fn`` on the arrays as LazyArrays on ``device``, computed
    (the copy to the host: where a "warn" of a GPU kernel is reported at the latest)."""
    with la.config(mode="lazy", device=device):
        return warning_messages(lambda: np.asarray(fn(*(la.asarray(a) for a in arrays))))


def errcall_seen(fn: Any) -> list[tuple[str, int]]:
    """The ``(kind, flag)`` pairs ``np.seterrcall``'s handler gets while ``fn()`` runs under
    ``np.errstate(all="call")``, sorted."""
    seen: list[tuple[str, int]] = []
    with np.errstate(all="call"):
        old = np.seterrcall(lambda kind, flag: seen.append((kind, flag)))
        try:
            fn()
        finally:
            np.seterrcall(old)
    return sorted(seen)

