"""The CUDA backend's code generation, tested without a GPU (runs in CI on every commit).

* Every expression of a battery renders to ONE kernel that ``numba.cuda.compile_ptx`` turns
  into PTX for sm_90 with exactly one ``.entry`` and no local-memory spill (``.local``) —
  except libdevice's sin/cos/tan, whose huge-argument reduction keeps a small array in local
  memory on its slow path.
* The same kernels run in Numba's CUDA simulator (the ``cuda-sim`` backend of the simulated
  cuda device) on NumPy arrays and match NumPy, in this process (the simulator's ``jit`` is
  used directly: no ``NUMBA_ENABLE_CUDASIM``, the PTX compiler stays usable).
"""
from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import lazyarr as la
from lazyarr._program import Lowered
from lazyarr.backends.cuda import fp_checks

pytest.importorskip("numba.cuda")


class _Captured(Exception):
    def __init__(self, lowered: Lowered) -> None:
        self.lowered = lowered


class _Capture:
    name = "capture"

    def run(self, lowered: Lowered):
        raise _Captured(lowered)

    def plan(self, lowered: Lowered):
        raise _Captured(lowered)


def _selecting_modules() -> list:
    """The core modules that pick a backend with ``backends.select`` (imported by name)."""
    names = ("lazyarr._build", "lazyarr._materialize")
    return [sys.modules[n] for n in names if hasattr(sys.modules.get(n), "select")]


def capture(fn) -> Lowered:
    """The lowered program of the first materialization ``fn`` makes (nothing runs)."""
    modules = _selecting_modules()
    originals = [m.select for m in modules]
    for m in modules:
        m.select = lambda device, mode: _Capture()
    try:
        with la.config(mode="lazy", device="cpu"):
            fn()
    except _Captured as c:
        return c.lowered
    finally:
        for m, orig in zip(modules, originals):
            m.select = orig
    raise AssertionError("nothing was materialized")


def data():
    rng = np.random.default_rng(7)
    f32 = rng.standard_normal(3001).astype(np.float32)
    return {
        "x": la.asarray(f32), "y": la.asarray(rng.standard_normal(3001).astype(np.float32)),
        "m": la.asarray(rng.standard_normal((9, 70)).astype(np.float32)),
        "t": la.asarray(rng.standard_normal((4, 5, 6))),
        "i8": la.asarray(rng.integers(-128, 127, 500, dtype=np.int8)),
        "j8": la.asarray(rng.integers(-128, 127, 500, dtype=np.int8)),
        "u64": la.asarray(rng.integers(0, 2**63, 300, dtype=np.uint64)),
        "h": la.asarray(rng.standard_normal(300).astype(np.float16)),
        "b": la.asarray(rng.integers(0, 2, 300).astype(bool)),
        "s": la.asarray(rng.standard_normal((20, 30))[::2, ::-3]),     # negative + gapped strides
        "row": la.asarray(rng.standard_normal(70).astype(np.float32)),
        "zero": la.asarray(np.float32(2.5)),
        # signed zeros for NumPy's tie rules (clip); the bounds: several elements vs one
        **{f"z{b}": la.asarray(np.tile(np.array([-0.0, 0.0, 1.0, -2.0], f"f{b // 8}"), 25))
           for b in (16, 32, 64)},
        **{f"lo{b}": la.asarray(np.zeros(100, f"f{b // 8}")) for b in (16, 32, 64)},
        "one64": la.asarray(np.zeros(1)),
        "wide": la.asarray(rng.standard_normal((2, 3, 300)).astype(np.float32)),
        # the accumulation rule (float64, rounded once): NumPy's float32 sum overflows, its
        # float32 product of a zero and two 1e30 is 0 or NaN by position; float16 near 65504
        "big32": la.asarray(np.array([3e38, 3e38, -3e38], np.float32)),
        "pos32": la.asarray(np.full(9, 3e38, np.float32)),
        "zprod32": la.asarray(_zero_and_overflow(4098)),
        "big16": la.asarray(np.full(300, 60000.0, np.float16)),
        # the signed-zero rule of min/max: one zero of the other sign, last (or first)
        "zmax": la.asarray(_zeros_one_other_sign(129, -0.0, 0.0)),
        "zmin": la.asarray(_zeros_one_other_sign(129, 0.0, -0.0)),
        "zcols": la.asarray(np.stack([_zeros_one_other_sign(40, -0.0, 0.0),
                                      _zeros_one_other_sign(40, 0.0, -0.0)[::-1]], axis=1)),
        "zrows": la.asarray(np.stack([_zeros_one_other_sign(40, -0.0, 0.0),
                                      _zeros_one_other_sign(40, 0.0, -0.0)[::-1]])),
        "z16pair": la.asarray(np.array([-0.0, 0.0], np.float16)),
        # complex values (finite: the simulator's check below compares them within rtol)
        **{f"c{b}": la.asarray((rng.standard_normal(300) + 1j * rng.standard_normal(300))
                               .astype(f"c{b // 8}")) for b in (64, 128)},
        "cm": la.asarray((rng.standard_normal((9, 70)) + 1j * rng.standard_normal((9, 70)))
                         .astype(np.complex64)),
        "x64": la.asarray(rng.standard_normal(300)),
    }


def _zero_and_overflow(n: int) -> np.ndarray:
    a = np.ones(n, np.float32)
    a[0], a[-2:] = 0, 1e30
    return a


def _zeros_one_other_sign(n: int, fill: float, last: float) -> np.ndarray:
    a = np.full(n, fill)
    a[-1] = last
    return a


# name -> function of the data dict making one materialization. Each is one kernel launch.
BATTERY = {
    "chain": lambda d: (la.sqrt(abs(d["x"] * d["y"] + 1.5)) * la.tanh(d["x"]) - d["y"]).compute(),
    "sum_chain": lambda d: la.sum(la.sqrt(abs(d["x"] * d["y"] + 1.5)) * la.tanh(d["x"]) - d["y"]),
    "sum_abs": lambda d: la.sum(abs(d["x"])),
    "mean": lambda d: la.mean(d["x"] * 2),
    "prod_f64": lambda d: la.prod(d["t"] / 4 + 1),
    "min_nan": lambda d: la.min(la.where(d["x"] > 2, la.nan, d["x"])),
    "max_i8": lambda d: la.max(d["i8"] - d["j8"]),
    "any": lambda d: la.any(d["x"] > 3),
    "all": lambda d: la.all(d["b"] | True),
    "sum_bool": lambda d: la.sum(d["b"]),
    "sum_rows": lambda d: la.sum(d["m"] * d["m"], axis=1),
    "sum_cols": lambda d: la.sum(d["m"] * d["m"], axis=0),
    "max_cols_keep": lambda d: la.max(d["m"] - d["row"], axis=0, keepdims=True),
    "mean_mid": lambda d: la.mean(d["t"], axis=1),
    "sum_outer2": lambda d: la.sum(d["t"] * 2, axis=(0, 2)),
    "broadcast": lambda d: (d["m"] + d["row"] * d["zero"]).compute(),
    "strided": lambda d: (d["s"] * 2 - 1).compute(),
    "int8_ops": lambda d: ((d["i8"] // d["j8"]) + (d["i8"] % d["j8"]) + (d["i8"] << (d["j8"] & 7))
                           + (d["i8"] >> 9)).compute(),
    "int_pow": lambda d: (d["i8"] ** (d["j8"] & 3)).compute(),
    "uint64": lambda d: ((d["u64"] // 3) ^ (d["u64"] >> 5) | ~d["u64"]).compute(),
    "float16": lambda d: (la.exp(d["h"]) * d["h"] + d["h"] / 3).compute(),
    "float_divmod": lambda d: ((d["x"] // d["y"]) + (d["x"] % 0.75) + la.sign(d["y"])).compute(),
    "casts": lambda d: (d["x"].astype(la.int16) + (d["x"] * 9).astype(la.uint8)
                        + (d["x"] > 0)).compute(),
    "trig": lambda d: (la.sin(d["x"]) + la.cos(d["y"]) + la.arctan2(d["x"], d["y"])).compute(),
    "clip_minmax": lambda d: (la.clip(d["x"], -1, 1) + la.maximum(d["x"], la.nan)
                              + la.fmin(d["y"], 0.5)).compute(),
    "clip_ties_f32_single_bounds": lambda d: la.clip(d["z32"], 0.0, 5.0).compute(),
    "clip_ties_f32_single_hi": lambda d: la.clip(d["z32"], -5.0, -0.0).compute(),
    "clip_ties_f64_array_lo": lambda d: la.clip(d["z64"], d["lo64"], 5.0).compute(),
    "clip_ties_f64_size1_lo": lambda d: la.clip(d["z64"], d["one64"], 5.0).compute(),
    "clip_ties_f64_size1_expr": lambda d: la.clip(d["z64"], d["one64"] * 2, 5.0).compute(),
    "clip_ties_f16_arrays": lambda d: la.clip(d["z16"], d["lo16"], d["lo16"] + 1).compute(),
    "clip_ties_f32_arrays_hi": lambda d: la.clip(d["z32"], d["lo32"] - 5, d["lo32"]).compute(),
    "mean_dtype_uint64": lambda d: la.mean(d["i8"], dtype=la.uint64),
    # "wide_": run with a thread per output (COLS_ONE_THREAD_MIN_OUTPUTS lowered in the test)
    "wide_sum_middle": lambda d: la.sum(d["wide"] * 2, axis=1),
    "wide_max_outer": lambda d: la.max(d["wide"] - 1, axis=(0, 1)),
    "mean_dtype_int8_rows": lambda d: la.mean(d["m"] * 9, axis=1, dtype=la.int8),
    "sum_f32_rounded_once": lambda d: la.sum(d["big32"]),
    "mean_f32_rounded_once": lambda d: la.mean(d["pos32"] * 1),
    "prod_f32_zero_then_overflow": lambda d: la.prod(d["zprod32"]),
    "sum_f16_rounded_once": lambda d: la.sum(d["big16"] * 1),
    "mean_f16_rounded_once": lambda d: la.mean(d["big16"] + 0),
    "max_prefers_positive_zero": lambda d: la.max(d["zmax"] * 1),
    "min_prefers_negative_zero": lambda d: la.min(d["zmin"] * 1),
    "max_cols_signed_zeros": lambda d: la.max(d["zcols"] * 1, axis=0),
    "min_cols_signed_zeros": lambda d: la.min(d["zcols"] * 1, axis=0),
    "max_rows_signed_zeros": lambda d: la.max(d["zrows"] * 1, axis=1),
    "max_f16_signed_zeros": lambda d: la.max(d["z16pair"] * 1),
    "min_f16_signed_zeros": lambda d: la.min(d["z16pair"][::-1] * 1),
    "logical": lambda d: (la.logical_xor(d["x"] > 0, d["y"] < 1) & la.isfinite(d["x"] / 0)).compute(),
    # fused random draws: counters in, Philox in the kernel
    "fused_pi": lambda d: (lambda rng: la.mean(rng.random(5000) ** 2 + rng.random(5000) ** 2 < 1))(
        la.random.default_rng(0, fused=True)),
    "fused_normal_view_rows": lambda d: la.sum(
        la.random.default_rng(1, fused=True).standard_normal((64, 50), dtype=la.float32)[::2, 1:].T,
        axis=1),
    # complex values in the kernel: every complex template, scalars, casts, the reductions
    "complex_arith": lambda d: (d["c64"] * d["c64"][::-1] / (d["c64"] + 1) - la.square(d["c64"])
                                + la.reciprocal(d["c64"]) + la.conj(d["c64"])
                                + abs(d["c64"]) - (-d["c64"])).compute(),
    "complex_compare": lambda d: (la.where(d["c128"] < d["c128"][::-1], la.maximum(d["c128"], 1j),
                                           la.fmin(d["c128"], d["c128"][::-1]))
                                  + la.minimum(d["c128"], 0.5) + la.fmax(d["c128"], -1j)
                                  + ((d["c128"] >= 0) | (d["c128"] <= 1j) | (d["c128"] > 1)
                                     | la.isnan(d["c128"]) | la.isinf(d["c128"])
                                     | ~la.isfinite(d["c128"]) | (d["c128"] == 1)
                                     | (d["c128"] != 1) | la.logical_not(d["c128"]))).compute(),
    "complex_scalar_casts": lambda d: ((d["c128"] * (2 - 1j)).astype(la.float32)
                                       + la.real(d["c64"] * 1j) + la.imag(d["c64"] + 0.5j)
                                       + (d["x"][:300] + 1j).real
                                       + d["i8"][:300].astype(la.complex64).imag
                                       + d["c64"].astype(la.bool_)).compute(),
    "complex_sum_rows": lambda d: la.sum(d["cm"] * d["cm"], axis=1),
    "complex_mean_cols": lambda d: la.mean(d["cm"] * 2, axis=0),
    "complex_prod": lambda d: la.prod(d["c128"] / 4 + 1),
    "complex_mean": lambda d: la.mean(d["c64"] - 1j),
    # complex accumulators are float64 parts (render.Reduction.parts): rows shuffle each part
    "complex_prod_rows": lambda d: la.prod(d["cm"] / 4 + 1, axis=1),
    "complex64_sum_rows": lambda d: la.sum((d["cm"] * 1j).astype(la.complex64), axis=1),
    "complex_sum_of_reals_as_complex64": lambda d: la.sum(d["x"] * 2, dtype=la.complex64),
    # a product's ``_has`` part, min/max's ``_ix`` part (the first NaN / first of equal wins)
    "complex_prod_cols": lambda d: la.prod(d["cm"] / 4 + 1, axis=0),
    "complex_max": lambda d: la.max(d["c128"] * 1j),
    "complex64_min_rows": lambda d: la.min((d["cm"] - 1j).astype(la.complex64), axis=1),
    "complex_max_cols": lambda d: la.max(d["cm"] + 1, axis=0),
    # npymath's complex functions (helpers.py: msun's csqrt, cexp, catrig, ...), each dtype
    **{f"complex_{group}_c{b}": lambda d, b=b, fns=fns: sum(
        (fn(d[f"c{b}"] * 0.5) for fn in fns), d[f"c{b}"] * 0).compute()
       for b in (64, 128) for group, fns in (
           ("exp_log", (la.sqrt, la.exp, la.exp2, la.expm1, la.log, la.log2, la.log10, la.log1p,
                        lambda z: z ** (1.5 - 1j), lambda z: z ** 3, la.sign,
                        lambda z: la.rint(z * 4), lambda z: la.clip(z, -1j, 1 + 1j))),
           ("trig", (la.sin, la.cos, la.tan, la.sinh, la.cosh, la.tanh)),
           ("arc", (la.arcsin, la.arccos, la.arctan, la.arcsinh, la.arccosh, la.arctanh)))},
    # the ops NumPy computes with its own formulas (templates.py: fmod, nextafter, ...)
    **{f"npymath_f{b}": lambda d, b=b: (
        la.fmod(d[f"z{b}"], 0.75) + la.copysign(d[f"z{b}"], -1) + la.nextafter(d[f"z{b}"], 5)
        + la.spacing(d[f"z{b}"]) + la.heaviside(d[f"z{b}"], 0.5) + la.logaddexp(d[f"z{b}"], 1)
        + la.logaddexp2(d[f"z{b}"], -1) + la.deg2rad(d[f"z{b}"]) + la.rad2deg(d[f"z{b}"])
        + la.signbit(d[f"z{b}"])).compute() for b in (16, 32, 64)},
    # ldexp, frexp and modf (each output of the two its own op; both read by one kernel)
    **{f"floating_parts_f{b}": lambda d, b=b: (
        la.ldexp(d[f"z{b}"], 3) + la.ldexp(d[f"z{b}"], d["i8"][:100])
        + sum(la.frexp(d[f"z{b}"] * 1)) + sum(la.modf(d[f"z{b}"] * 1))).compute() for b in (16, 32, 64)},
    "npymath_ints": lambda d: (la.fmod(d["i8"][:300], d["j8"][:300]) + la.fmod(d["u64"], 7)
                               + la.float_power(d["x64"], 1.5)).compute(),
}


@pytest.fixture(scope="module")
def battery():
    d = data()
    return {name: capture(lambda fn=fn: fn(d)) for name, fn in BATTERY.items()}


@pytest.mark.parametrize("name", list(BATTERY))
def test_compiles_to_one_ptx_entry_without_spills(name, battery):
    from lazyarr.backends.cuda import render as R
    from lazyarr.backends.cuda.compile import compile_ptx

    low = battery[name]
    geo = R.analyze(low.program, low.inputs)
    rendered = R.render(low.program, geo.spec)
    ptx, entry = compile_ptx(rendered, cc=(9, 0))
    assert ptx.count(".entry") == 1 and entry in ptx
    assert ".target sm_90" in ptx
    trig = re.search(r"\bF_(sin|cos|tan)_f", rendered.source)    # (complex exp calls them too)
    if not trig:
        assert ".local" not in ptx, "local-memory spill in the kernel"
    if geo.spec.kind in ("full", "cols"):
        assert "bar.sync" in ptx
    if geo.spec.kind == "rows":
        assert "shfl.sync" in ptx and "bar.sync" not in ptx     # a warp per row
    if geo.spec.kind == "full":
        assert "atom.global.add" in ptx or "red.global.add" in ptx
    if name.startswith("complex_") and name.endswith("_c64"):    # complex64 computes in float32
        # (but libdevice's sinf/cosf/tanf, whose huge-argument reduction multiplies by
        # pi/2 * 2**-64 in float64: 0d3BF921FB54442D19)
        f64 = [line for line in ptx.splitlines() if "0d3BF921FB54442D19" not in line
               and re.search(r"\b(add|sub|mul|div|fma)\.\w*\.?f64", line)]
        assert not f64, f"float64 arithmetic: {f64[:4]}"


def test_draws_read_in_order_take_one_philox_block_per_two_elements():
    """A thread takes adjacent elements when a draw is read in order, so one Philox block
    gives both its numbers (``H_philox64x2``); a strided draw does not pair."""
    from lazyarr.backends.cuda import render as R

    def source(fn):
        low = capture(fn)
        return R.render(low.program, R.analyze(low.program, low.inputs).spec).source

    rng = la.random.default_rng(3, fused=True)
    paired = source(lambda: la.mean(rng.random(4096) ** 2 + rng.random(4096) ** 2 < 1).compute())
    assert paired.count("= H_philox64x2_uint64(") == 2 and "(cuda.blockIdx.x * BS + cuda.threadIdx.x) * U" in paired
    x = la.asarray(np.ones((64, 64)))
    strided = source(lambda: (rng.random((64, 1)) * x).compute())     # (counters broadcast)
    assert "H_philox64_uint64(" in strided and "x2_" not in strided


def test_no_fma_contraction():
    """NumPy rounds x*y before adding c: the kernel must not fuse them into one FMA."""
    from lazyarr.backends.cuda import render as R
    from lazyarr.backends.cuda.compile import compile_ptx

    x = la.asarray(np.ones(100, np.float32))
    low = capture(lambda: (x * x + 1.5).compute())
    ptx, _ = compile_ptx(R.render(low.program, R.analyze(low.program, low.inputs).spec))
    assert "mul.rn.f32" in ptx and "fma" not in ptx


def test_explain_cuda_without_gpu():
    x = la.ones((64, 32), dtype=la.float32)
    plan = la.explain(lambda: la.sum(x * x, axis=1), device="cuda")
    assert plan.backend == "cuda" and len(plan.kernels) == 1
    k = plan.kernels[0]
    assert k.name == "lazyarr_kernel[rows]" and "def lazyarr_kernel" in k.source
    assert "grid=" in k.launch and "block=" in k.launch
    assert plan.bytes_read == 64 * 32 * 4 and plan.bytes_written == 64 * 4
    plan = la.explain(lambda: la.var(x * 2), device="cuda")     # (backend._var_two_pass)
    assert len(plan.kernels) == 2 and any("two of lazyarr's reductions" in n for n in plan.notes)
    assert [k.name for k in plan.kernels] == ["lazyarr_kernel[full]"] * 2
    plan = la.explain(lambda: la.argmax(x * 2), device="cuda")
    assert len(plan.kernels) == 2 and any("second launch" in n for n in plan.notes)


def test_cache_key_and_files(tmp_path, monkeypatch):
    from lazyarr.backends.cuda import compile as C
    from lazyarr.backends.cuda import render as R

    monkeypatch.setenv("LAZYARR_CACHE_DIR", str(tmp_path))
    low = capture(lambda: la.sum(abs(la.asarray(np.ones(10, np.float32)))))
    rendered = R.render(low.program, R.analyze(low.program, low.inputs).spec)
    key = C.cache_key(rendered, (9, 0))
    assert key != C.cache_key(rendered, (8, 0))
    assert C.write_cache(key, "ptx", "entry", b"payload")
    assert C.read_cache(key) == ("ptx", "entry", b"payload")
    path = tmp_path / f"{key}.bin"
    path.write_bytes(path.read_bytes()[:-2] + b"XX")           # corrupted: detected
    with pytest.warns(RuntimeWarning, match="damaged CUDA kernel cache entry"):
        assert C.read_cache(key) is None
    monkeypatch.setenv("LAZYARR_CACHE_DIR", "/proc/no-such-dir/cache")   # unwritable: no error
    assert not C.write_cache(key, "ptx", "entry", b"payload")
    assert C.read_cache(key) is None


def test_simulator_matches_numpy(monkeypatch):
    """Every battery kernel run by the simulated cuda device's backend (registered as
    ``cuda-sim``; usable in this process whatever LAZYARR_CUDA_SIM says) against NumPy. The
    kernels themselves: also those of programs the backend sends to the host (complex ->
    integer casts, any reduction named in backend._COMPLEX_ON_HOST)."""
    import warnings

    from lazyarr import backends
    from lazyarr.backends.cuda import backend as cuda_backend
    from lazyarr.backends.cuda import render as R

    monkeypatch.setattr(cuda_backend, "_runs_on_host", lambda program: False)
    from lazyarr.backends.reference import for_device

    sim = backends.load("cuda-sim")
    d = data()
    default_min = R.COLS_ONE_THREAD_MIN_OUTPUTS
    failed = {}
    for name, fn in BATTERY.items():
        low = capture(lambda fn=fn: fn(d))
        R.COLS_ONE_THREAD_MIN_OUTPUTS = 1 if name.startswith("wide_") else default_min
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = np.asarray(sim.run(low))
        finally:
            R.COLS_ONE_THREAD_MIN_OUTPUTS = default_min
        with np.errstate(all="ignore"):
            want = np.asarray(for_device("cpu").run(low))
        ok = got.dtype == want.dtype and got.shape == want.shape
        if ok and want.dtype.kind in "fc":
            ok = bool(np.allclose(got, want, rtol=2e-3 if want.dtype == np.float16 else 1e-5,
                                  atol=1e-6, equal_nan=True))
            parts = (got, want) if want.dtype.kind == "f" else tuple(
                np.atleast_1d(v).view(v.real.dtype) for v in (got, want))
            zeros = parts[1] == 0      # and the sign of every zero, as NumPy's
            ok = ok and bool(np.array_equal(np.signbit(parts[0][zeros]), np.signbit(parts[1][zeros])))
        elif ok:
            ok = bool(np.array_equal(got, want))
        if not ok:
            failed[name] = f"{got!r} != {want!r}"
    assert not failed, failed


def test_template_selection_by_dtype_name_then_kind():
    """``maximum`` has a float16-only template (NumPy's float16 loop keeps the first operand on
    ties; its float32/float64 SIMD loops the second): each dtype must get its own."""
    from lazyarr.backends.cuda import render as R

    for dt, tie in ((np.float16, ">="), (np.float32, ">"), (np.float64, ">"), (np.int8, ">=")):
        x = la.asarray(np.zeros(8, dt))
        low = capture(lambda x=x: la.maximum(x, x * 2).compute())
        src = R.render(low.program, R.analyze(low.program, low.inputs).spec).source
        line = next(ln for ln in src.splitlines() if " if (" in ln or " if v" in ln)
        assert f" {tie} " in line, (dt, line)


def test_an_elementwise_op_without_a_cuda_row_is_named_at_import(monkeypatch):
    """templates.py checks at import that every elementwise op has a row or runs on the host."""
    from lazyarr.backends.cuda import templates

    templates._check_rows()
    monkeypatch.delitem(templates.TEMPLATES, "tanh")
    with pytest.raises(RuntimeError, match=r"no CUDA row: \['tanh'\]"):
        templates._check_rows()
    monkeypatch.setattr(templates, "RUN_ON_HOST", templates.RUN_ON_HOST | {"tanh"})
    templates._check_rows()          # or it runs on the host with NumPy


def test_parameter_recipe_describes_every_parameter(battery):
    """The kernel's parameters are the recipe's, in order; every size and every stride of a
    strided input is a layout parameter whose value comes from the geometry, and the launch
    template fills exactly the per-call slots."""
    import re

    from lazyarr.backends.cuda import render as R
    from lazyarr.backends.cuda.backend import _Entry
    from lazyarr.backends.cuda.params import PER_CALL, Role

    for name, low in battery.items():
        geo = R.analyze(low.program, low.inputs)
        rendered = R.render(low.program, geo.spec)
        signature = re.search(r"def lazyarr_kernel\((.*)\):", rendered.source).group(1)
        assert signature.split(", ") == [p.name for p in rendered.params], name
        by_role = {role: [p for p in rendered.params if p.role is role] for role in Role}
        assert [p.index for p in by_role[Role.SIZE]] == list(range(len(geo.sizes))), name
        strided = [k for k, c in enumerate(geo.spec.classes) if c == "s"]
        assert sorted({p.input for p in by_role[Role.STRIDE]}) == strided, name
        for p in by_role[Role.STRIDE]:
            assert p.layout_value(geo) == geo.strides[p.input][p.index], name
        # every input is a pointer, or a value for a random draw's counters (no memory)
        assert sorted(p.input for p in by_role[Role.INPUT] + by_role[Role.COUNTER_OFFSET]) == \
            list(range(len(low.inputs))), name
        assert [p.input for p in by_role[Role.COUNTER_OFFSET]] == \
            [k for k, a in enumerate(low.inputs) if type(a).__name__ == "CounterMap"], name
        entry = _Entry(None, geo, rendered, 132)
        per_call = [slot for slot, p in enumerate(rendered.params) if p.role in PER_CALL]
        assert [slot for slot, v in enumerate(entry.template) if v is None] == per_call, name
        assert (entry.acc is not None) == (geo.spec.kind == "full"), name


def test_link_route_by_kernel_kind(monkeypatch):
    """Row/column reductions are linked to a cubin by nvJitLink, the rest cached as PTX for the
    driver to compile (the faster SASS of each, measured on the H200; compile.link_route)."""
    from lazyarr.backends.cuda import compile as C
    from lazyarr.backends.cuda import render as R

    d = data()
    monkeypatch.delenv("LAZYARR_CUDA_LINK", raising=False)
    kinds = {}
    for name in ("chain", "sum_chain", "sum_rows", "sum_cols"):
        low = capture(lambda name=name: BATTERY[name](d))
        rendered = R.render(low.program, R.analyze(low.program, low.inputs).spec)
        kinds[rendered.kind] = C.link_route(rendered)
        monkeypatch.setenv("LAZYARR_CUDA_LINK", "cubin")
        assert C.link_route(rendered) == "cubin"
        key_cubin = C.cache_key(rendered, (9, 0))
        monkeypatch.setenv("LAZYARR_CUDA_LINK", "ptx")
        assert C.link_route(rendered) == "ptx" and C.cache_key(rendered, (9, 0)) != key_cubin
        monkeypatch.delenv("LAZYARR_CUDA_LINK")
    assert kinds == {"map": "ptx", "full": "ptx", "rows": "cubin", "cols": "cubin"}


def test_nvjitlink_links_a_cubin_without_a_gpu():
    from lazyarr.backends.cuda import compile as C
    from lazyarr.backends.cuda import render as R

    low = capture(lambda: BATTERY["sum_rows"](data()))
    rendered = R.render(low.program, R.analyze(low.program, low.inputs).spec)
    ptx, entry = C.compile_ptx(rendered, (9, 0))
    cubin = C.link_cubin(ptx, (9, 0))
    assert cubin is not None and cubin[:4] == b"\x7fELF" and entry.encode() in cubin


def test_column_reduction_with_many_outputs_gives_each_thread_an_output(monkeypatch):
    from lazyarr.backends.cuda import render as R

    low = capture(lambda: BATTERY["wide_sum_middle"](data()))
    spec = R.analyze(low.program, low.inputs).spec
    assert (spec.kind, spec.tx, spec.ty) == ("cols", R.COLS_TX, R.COLS_TY)    # 600 outputs: few
    monkeypatch.setattr(R, "COLS_ONE_THREAD_MIN_OUTPUTS", 600)
    spec = R.analyze(low.program, low.inputs).spec
    assert (spec.kind, spec.tx, spec.ty) == ("cols", R.BLOCK, 1)


def _libdevice_hypot(a, b):
    """libdevice's ``__nv_hypot`` (libdevice.10.bc, CUDA 13), step by step in float64, its
    ``rsqrt.approx`` + Newton step taken as ``1/sqrt``: it overflows at DBL_MAX as on the H200."""
    import struct

    def bits(d):
        return struct.unpack("<Q", struct.pack("<d", d))[0]

    def from_hi(h):
        return struct.unpack("<d", struct.pack("<Q", (h & 0xFFFFFFFF) << 32))[0]
    a, b = abs(float(a)), abs(float(b))
    lo, hi = (a, b) if bits(a) < bits(b) else (b, a)
    exp = ((bits(hi) >> 32) & 0xFFC00000) - 0x3FF00000 + 0x00100000
    scale = from_hi(0x3FF00000 - exp)
    s = (hi * scale) ** 2 + (lo * scale) ** 2
    r = s * (1.0 / np.sqrt(min(s, np.finfo(np.float64).max))) * from_hi(exp + 0x3FF00000)
    if lo == 0:
        r = hi
    if lo == np.inf or lo != lo:
        r = lo
    return np.float64(r)


def test_hypot_at_the_largest_float_is_finite_despite_libdevice_rounding():
    """libdevice's hypot is within 2 ulp, so hypot(DBL_MAX, 1.0) rounds to inf on the GPU; the
    cuda template recomputes an inf from finite operands scaled and gets NumPy's DBL_MAX."""
    from lazyarr.backends.cuda import compile as cuda_compile
    from lazyarr.backends.cuda import helpers
    big = np.finfo(np.float64).max
    assert _libdevice_hypot(big, 1.0) == np.inf           # the stand-in shows the GPU's defect
    ns = dict(cuda_compile.simulator_namespace())
    ns["F_hypot_f8"] = _libdevice_hypot
    exec(helpers.helper_source("H_fhypot", np.dtype(np.float64), "hyp", "_C_float64", "f8"), ns)  # noqa: S102
    values = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5, 3e-308, big, -big, big / 3]
    for a in values:
        for b in values:
            got, want = ns["hyp"](a, b), np.hypot(a, b)
            assert (got == want) or (np.isnan(got) and np.isnan(want)) or \
                abs(got - want) <= 4e-16 * want, (a, b, got, want)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_min_max_kernels_stay_the_size_of_a_sum(op, axis):
    """min/max's combine names each operand three or four times; written as one nested
    expression, the fold of 8 unrolled accumulators repeated them ~4^3 times (18 KB of source,
    ~10 s of NVVM per kernel). One statement per combine keeps the kernel near a sum's size."""
    from lazyarr.backends.cuda import render as R

    m = la.asarray(np.random.default_rng(0).standard_normal((600, 700)).astype(np.float32))

    def source(fn):
        low = capture(fn)
        return R.render(low.program, R.analyze(low.program, low.inputs).spec).source

    reduced, summed = source(lambda: getattr(la, op)(m, axis=axis)), source(lambda: la.sum(m, axis=axis))
    assert len(reduced) < 2 * len(summed), (len(reduced), len(summed))
    assert max(len(line) for line in reduced.splitlines()) < 300


@pytest.mark.parametrize("kind", ["map", "full", "rows", "cols", "complex", "integer"])
def test_checked_kernels_compile_with_their_flag_words(kind):
    """A kernel checking NumPy's floating-point errors (lazyarr/backends/cuda/fp_checks.py)
    compiles to one entry without local memory; its flag words are written only by atomic ORs
    (global ``atom...or``), one site per raising op (and the reduction's "reduce")."""
    from lazyarr.backends.cuda import render as R
    from lazyarr.backends.cuda.compile import compile_ptx

    h = la.asarray(np.ones((64, 48), np.float16))
    x = la.asarray(np.ones((64, 48)))
    expr = {"map": lambda: (la.log(x) / x + la.sqrt(h) * 2).astype(np.int32).compute(),
            "full": lambda: la.sum(la.exp(x) * x).compute(),
            "rows": lambda: la.sum(la.log1p(h), axis=1).compute(),
            "cols": lambda: la.mean(x * x, axis=0).compute(),
            "complex": lambda: (la.log(x * 1j) / (x + 1j)).astype(np.complex64).compute(),
            "integer": lambda: (la.astype(x, np.int32) // la.astype(h, np.int32)
                                % la.astype(x, np.uint8)).compute()}[kind]
    low = capture(expr)
    rendered = R.render(low.program, R.analyze(low.program, low.inputs).spec, checked=True)
    assert rendered.fpe_sites and rendered.kind == kind.replace("complex", "map").replace("integer", "map")
    assert ("reduce" in rendered.fpe_sites) == (rendered.kind != "map")
    ptx, _ = compile_ptx(rendered)
    assert ptx.count(".entry") == 1 and ".local" not in ptx
    assert re.search(r"atom\.global\.or\.b32", ptx)
    plain = R.render(low.program, R.analyze(low.program, low.inputs).spec)
    assert not plain.fpe_sites and "_fpe_set" not in plain.source
    with np.errstate(all="ignore"):           # explain shows the kernel that would run
        assert not any("floating-point" in n for n in la.explain(expr, device="cuda").notes)
    assert any("floating-point errors of" in n for n in la.explain(expr, device="cuda").notes)


def _kernel_body(source: str) -> str:
    return source[source.index("def lazyarr_kernel"):]


@pytest.mark.parametrize("n, unrolled", [(1, False), (256, False), (257, True), (3001, True)])
def test_at_most_one_blocks_elements_render_one_copy_of_the_chain(n, unrolled):
    """A map or full reduction over at most one block's elements (one per thread) renders
    ``U = 1`` and no tail: one copy of the chain, not a tile and a tail of U each (the
    compile-time fix of docs/notes/gpu.rst, 2026-12-03g). More elements: unrolled, with a
    tail, and a checked map one more copy, looped: its failed tile computed again element by
    element (render.unrolled). The rendered sizes are what is compared; the values are the
    simulator's tests'."""
    from lazyarr.backends.cuda import render as R

    x = la.asarray(np.linspace(-1, 1, n))
    for expr in (lambda: (la.sqrt(x * x + 1) * 2 - x).compute(), lambda: la.sum(la.exp(x) * x)):
        low = capture(expr)
        spec = R.analyze(low.program, low.inputs).spec
        body = _kernel_body(R.render(low.program, spec, checked=True).source)
        assert (spec.unroll > 1) == unrolled
        # the chain's sqrt/exp, once per element rendered: U in the tile and U in the tail
        # (and a map's failed tile computed again: one more)
        copies = body.count("F_sqrt_f8(") + body.count("F_exp_f8(")
        again = spec.kind == "map"
        assert copies == (2 * spec.unroll + again if unrolled else 1), (n, copies)


def test_fast_divisor_divides_every_dividend_below_2_31():
    """``params.fast_divisor``'s multiply-high and shift give ``r // d`` for every divisor and
    dividend below 2**31: every divisor up to 1024, each power of two from 2**10 and its
    neighbours, the largest, random ones; per divisor the dividends at its multiples' edges,
    at 2**31's edge, and random ones (the kernel's formula, in uint64 as the kernel's int64)."""
    from lazyarr.backends.cuda.params import fast_divisor

    rng = np.random.default_rng(3)
    top = 2**31 - 1
    divisors = [*range(1, 1025), *(2**k + e for k in range(10, 31) for e in (-1, 0, 1)), top,
                *rng.integers(1, 2**31, 2000).tolist()]
    for d in divisors:
        m, s = fast_divisor(d)
        assert 0 <= m < 2**32 and 0 <= s <= 31
        r = np.array([0, 1, d - 1, d, d + 1, 2 * d - 1, top, top // d * d, top // d * d - 1,
                      *rng.integers(0, 2**31, 64).tolist()], dtype=np.uint64)
        r = r[r <= top]
        q = (((r * np.uint64(m)) >> np.uint64(32)) + r) >> np.uint64(s)
        assert np.array_equal(q, r // np.uint64(d)), d
    assert fast_divisor(0) == (0, 0)          # an empty dim: no element is ever divided
    with pytest.raises(ValueError):
        fast_divisor(2**31)


def test_strided_coordinates_divide_by_magic_numbers_below_2_31_elements():
    """A map over a strided 2-d space of fewer than 2**31 elements finds each coordinate with
    the multiply-high of ``params.fast_divisor`` (layout parameters ``mg1``, ``sh1``), not a
    division; from 2**31 elements (where the magic numbers no longer hold) with ``//``. The
    values are the simulator's tests' (test_views.py, ``test_strided_coordinates_on_cuda``)."""
    from lazyarr.backends.cuda import render as R
    from lazyarr.backends.cuda.params import Role

    a = np.ones((37, 110), np.float32)
    low = capture(lambda: (la.asarray(a)[1:, :50] * 2).compute())
    for inputs, fast in (([a[1:, :50]], True),
                         # 40,000 x 70,000 elements, no memory: a broadcast row, cut short
                         ([np.broadcast_to(np.ones(70001, np.float32), (40000, 70001))[:, :70000]], False)):
        spec = R.analyze(low.program, inputs).spec
        rendered = R.render(low.program, spec)
        body = _kernel_body(rendered.source)
        assert spec.fastdiv == fast and ("_umulhi(" in body) == fast and ("//" in body) != fast
        roles = {p.role for p in rendered.params}
        assert (Role.DIV_MAGIC in roles and Role.DIV_SHIFT in roles) == fast


@pytest.mark.parametrize("kind", ["map", "full", "rows", "complex-prod", "complex-max"])
def test_checked_and_complex_combine_code_is_branch_free_in_the_kernel(kind):
    """The kernel function holds no ``and``/``or``/conditional expression in its
    floating-point flags, and a complex product's or min/max's combine is a device function:
    each was a basic block per site, per unrolled element, per combine, and Numba's SSA and
    liveness passes grow with the square of a function's blocks (a 0-d loop value took 46 s
    to compile, complex min/max reductions 8-23 s: docs/notes/gpu.rst, 2026-12-03g)."""
    from lazyarr.backends.cuda import render as R

    x = la.asarray(np.linspace(-1, 1, 3001))
    m = la.asarray(np.linspace(-1, 1, 3000).reshape(60, 50))
    z = la.asarray(np.linspace(-1, 1, 3001) + 0.5j)
    expr = {"map": lambda: (la.log(x) / x + la.power(x, 2.5) - la.arctanh(x)).astype(np.int32).compute(),
            "full": lambda: la.sum(la.exp(x) * x),
            "rows": lambda: la.sum(la.log1p(m) * m, axis=1),
            "complex-prod": lambda: la.prod(z * z),
            "complex-max": lambda: la.max(z * 2)}[kind]
    low = capture(expr)
    rendered = R.render(low.program, R.analyze(low.program, low.inputs).spec, checked=True)
    body = _kernel_body(rendered.source)
    flags = [ln for ln in body.splitlines() if "_fpe_set(" in ln]
    assert flags or kind.startswith("complex")
    for ln in flags:
        assert not re.search(r"\b(and|or)\b| if .* else ", ln.split("_fpe_set(", 1)[1]), ln
    if kind.startswith("complex"):
        combine = "_combine_prod(" if kind == "complex-prod" else "_combine_max("
        assert combine in body and f"def {combine}" in rendered.source
        assert " if " not in "".join(ln for ln in body.splitlines() if "= _combine_" in ln)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", sorted(fp_checks.PROPAGATES))
def test_propagating_ops_never_turn_a_non_finite_operand_finite(op, dt):
    """fp_checks.PROPAGATES, checked against NumPy: at each listed operand position an inf or
    NaN operand gives an inf or NaN result, whatever the other operand (edge values)."""
    edges = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 3.0, 1e4, np.inf, -np.inf, np.nan,
                      float(np.finfo(dt).max), float(np.finfo(dt).tiny)], dt)
    bad = np.array([np.inf, -np.inf, np.nan], dt)
    with np.errstate(all="ignore"):
        for p in fp_checks.PROPAGATES[op]:
            if op == "astype":
                for to in (np.float16, np.float32, np.float64):
                    assert not np.isfinite(bad.astype(to)).any()
                continue
            f = getattr(np, op)
            if f.nin == 1:
                assert not np.isfinite(f(bad)).any(), op
                continue
            a, b = np.meshgrid(bad, edges, indexing="ij")
            args = (a, b) if p == 0 else (b, a)
            assert not np.isfinite(f(*args)).any(), (op, p)


def test_a_chain_of_propagating_ops_is_tested_once_per_element():
    """The Jacobi step's five checked ops (four adds, a multiply): the element's test is of
    the last result only (each earlier result reaches it through adds and a multiply), and
    each site's flags are still derived when it fails; ``1 / (x * x)`` keeps both tests (the
    divisor does not propagate: ``1 / inf`` is 0)."""
    from lazyarr.backends.cuda import render as R

    def tested_values(expr):
        low = capture(expr)
        src = R.render(low.program, R.analyze(low.program, low.inputs).spec, checked=True).source
        tests = [ln for ln in src.splitlines() if ln.strip().startswith("if not (")]
        assert tests
        return {frozenset(re.findall(r"abs\((v\d+)_(?:\d+|r)\) < math\.inf", ln)) for ln in tests}, src

    u = la.asarray(np.ones((64, 64), np.float32))
    names, src = tested_values(lambda: (0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1]
                                               + u[1:-1, :-2] + u[1:-1, 2:])).compute())
    assert {len(n) for n in names} == {1}
    assert all(f"_fpe_set(fpe, {k}," in src for k in range(5))
    x = la.asarray(np.ones(4096, np.float32))
    names, _ = tested_values(lambda: (1.0 / (x * x)).compute())
    assert {len(n) for n in names} == {2}


def test_a_tiles_loads_stay_ahead_of_its_branchy_arithmetic():
    """The tile's loads are written before its arithmetic so that a thread has all of them in
    flight; NVVM sank each element's loads past the previous element's ``sqrt.rn``, whose
    slow path is a branch, until a syncwarp after the loads pinned them (docs/notes/gpu.rst,
    2026-12-05e: the chain's sum 8 % faster on an H100). The simulator's source leaves the
    syncwarp out (it has no warp primitives)."""
    from lazyarr.backends.cuda import render as R
    from lazyarr.backends.cuda.compile import compile_ptx

    x = la.asarray(np.linspace(-1, 1, 1 << 20, dtype=np.float32))
    y = la.asarray(np.linspace(1, -1, 1 << 20, dtype=np.float32))
    low = capture(lambda: la.sum(la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y))
    spec = R.analyze(low.program, low.inputs).spec
    assert spec.unroll > 1
    ptx, _ = compile_ptx(R.render(low.program, spec), cc=(9, 0))
    lines = ptx.splitlines()
    first_sqrt = next(i for i, line in enumerate(lines) if "sqrt.rn.f32" in line)
    loads = sum("ld.global" in line for line in lines[:first_sqrt])
    assert loads >= 2 * spec.unroll, (loads, spec.unroll)
    assert "syncwarp" not in R.render(low.program, spec, shuffles=False).source
