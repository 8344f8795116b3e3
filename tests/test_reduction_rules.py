"""Lazy mode's numeric rules for reductions (docs/testing.rst, "Reductions"; issue 11).

* var/std over any axis are as accurate as NumPy's two-pass method;
* float sum/prod/mean/var/std accumulate in float64 and round once to the result dtype
  (tested against ``helpers.lazy_reduction``, that rule computed with NumPy in float64 — not
  against NumPy's float16/float32 answer, which depends on where an overflow happens);
* float min/max give the zero that IEEE 754-2019 maximum/minimum give (+0 > -0);
* eager mode is NumPy's own: these tests also pin where it differs.

Run on every CPU mode (``mode`` fixture: eager, lazy-reference, lazy-cpu-fused); the cuda
backend's kernels get the same cases in tests/test_cuda_codegen.py (simulator) and
tests/test_gpu.py (H200).
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import strategies as S
from helpers import assert_same, lazy_reduction

import lazyarr as la

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)


def _run(fn, a, mode, expression=False, **kw):
    """``fn`` of ``a`` in lazyarr; ``expression``: of ``a * 1`` (the same values), so that the
    VM's own kernel runs (a contiguous input alone goes to NumPy's loop for min/max/any/all)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        x = la.asarray(a)
        return np.asarray(getattr(la, fn)(x * 1 if expression else x, **kw))


def _expected(fn, a, mode, **kw):
    """NumPy's result in eager mode, the rule's in lazy mode."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(getattr(np, fn)(a, **kw)) if mode == "eager" else lazy_reduction(fn, a, **kw)


# ----------------------------------------------------------------------------- finding 1
@pytest.mark.parametrize("offset", [1e9, 1e12])
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_over_a_leading_axis_are_two_pass_accurate(op, offset, mode):
    """var of offset + {-2, -1, -1} is 2/9 over axis 0 as over axis 1 (a one-pass update of the
    running mean lost 3e-8 relative at 1e9, 3e-5 at 1e12)."""
    col = np.array([offset - 2, offset - 1, offset - 1])
    for a, axis in [(col[:, None] * np.ones((1, 4)), 0), (col[None, :] * np.ones((4, 1)), 1),
                    (col[None, :, None] * np.ones((2, 1, 5)), 1), (col[:, None] * np.ones((1, 4)), None)]:
        got = _run(op, a, mode, axis=axis)
        want = np.asarray(np.var(a, axis=axis))
        want = np.sqrt(want) if op == "std" else want
        np.testing.assert_allclose(got, want, rtol=1e-9)
        exact = 2 / 9 if axis is not None else np.var(np.repeat(col, 4) - offset)
        np.testing.assert_allclose(got, np.sqrt(exact) if op == "std" else exact,
                                   rtol=1e-12 if offset < 1e10 else 1e-6)


def test_var_over_many_leading_rows_is_accurate_whatever_the_chunking(mode, rng):
    """Many rows (several row chunks merged with Chan's formula) and a large offset."""
    a = 1e8 + rng.standard_normal((5000, 7))
    a32 = a.astype(np.float32)
    for x in (a, a32):
        got = _run("var", x, mode, axis=0)
        want = _expected("var", x, mode, axis=0)     # eager: NumPy's float32 var, less accurate
        np.testing.assert_allclose(got, want, rtol=1e-9 if x.dtype == F64 else 1e-6)


# ----------------------------------------------------------------------------- finding 2
def _issue_cases():
    """(name, op, array, kwargs): the cases of issue 11 and their relatives along axes."""
    s32 = np.array([3e38, 3e38, -3e38], np.float32)
    yield "sum f32 overflowing midway", "sum", s32, {}
    yield "mean f32 overflowing midway", "mean", np.full(9, 3e38, np.float32), {}
    yield "sum f32 midway along axis 0", "sum", np.tile(s32[:, None], (1, 5)), {"axis": 0}
    yield "sum f32 midway along axis 1", "sum", np.tile(s32, (5, 1)), {"axis": 1}
    h = (30 + np.random.default_rng(3).standard_normal(2401)).astype(np.float16)
    for op in ("var", "std", "mean", "sum"):
        yield f"{op} f16 near 30", op, h, {}
    yield "var f16 along axis 0", "var", np.tile(h[:, None], (1, 3)), {"axis": 0}
    for zero_at in (0, 2000, 4097):
        a = np.ones(4098, np.float32)
        a[-2:] = 1e30
        a[zero_at] = 0
        yield f"prod f32 zero at {zero_at}", "prod", a, {}
        yield f"prod f32 zero at {zero_at} along axis 0", "prod", np.tile(a[:, None], (1, 3)), {"axis": 0}
    yield "prod f16", "prod", np.full(50, 1.5, np.float16), {}
    yield "sum f64 as f32", "sum", np.array([3e38, 3e38, -3e38]), {"dtype": np.float32}
    yield "mean int8 as f16", "mean", np.full(600, 120, np.int8), {"dtype": np.float16}


@pytest.mark.parametrize("case", list(_issue_cases()), ids=lambda c: c[0])
def test_float_reductions_accumulate_in_float64_and_round_once(case, mode):
    name, op, a, kw = case
    got = _run(op, a, mode, **kw)
    assert_same(got, _expected(op, a, mode, **kw))


def test_lazy_and_eager_float32_sums_differ_where_numpy_overflows():
    """The documented difference: eager is NumPy's (inf), lazy the rule's (3e38)."""
    a = np.array([3e38, 3e38, -3e38], np.float32)
    with la.config(mode="eager", device="cpu"):
        assert np.isinf(float(la.sum(la.asarray(a))))
    with la.config(mode="lazy", device="cpu"):
        assert float(la.sum(la.asarray(a))) == float(np.float32(3e38))


@pytest.mark.parametrize("dtype", [F16, F32, F64], ids=str)
@pytest.mark.parametrize("op", ["sum", "prod", "mean", "var", "std"])
def test_float_reductions_match_the_float64_rule_on_random_data(op, dtype, mode, rng):
    for shape, axis in [((300,), None), ((40, 70), 0), ((40, 70), 1), ((6, 5, 4), (0, 2))]:
        a = (rng.standard_normal(shape) * 3).astype(dtype)
        if op == "prod":
            a = (1 + a / 64).astype(dtype)
        got, want = _run(op, a, mode, axis=axis), _expected(op, a, mode, axis=axis)
        if mode == "lazy-cpu-fused":       # float64 sums in another order: the rounding bound
            assert S.reduction_mismatch(S.Step(op, (0,), (("axis", axis),)), a, got,
                                        S.FLOAT64_REDUCTIONS, want) is None
        else:
            assert_same(got, want)


# ----------------------------------------------------------------------------- finding 5
@pytest.mark.parametrize("dtype", [F16, F32, F64], ids=str)
def test_min_max_of_signed_zeros_follow_ieee_maximum_minimum(dtype, mode):
    """max prefers +0, min -0, whatever the position and the length (NumPy's own sign follows
    its SIMD remainder: length 129 and 128 differ). Every length up to 140 covers the vector
    body and tail of each kernel; strided views take the scalar kernels."""
    for n in list(range(1, 41)) + [63, 64, 65, 127, 128, 129, 130, 140]:
        for pos in sorted({0, n // 2, n - 1}):
            for fill, other in ((-0.0, 0.0), (0.0, -0.0)):
                a = np.full(n, fill, dtype)
                a[pos] = other
                # (eager: NumPy's own sign, which moves with the layout of a * 1)
                variants = (False,) if mode == "eager" else (False, True)
                for x, expression in itertools.product((a, np.repeat(a, 2)[::2]), variants):
                    for op in ("max", "min"):
                        got, want = _run(op, x, mode, expression), _expected(op, x, mode)
                        assert_same(got, want)
                        if mode != "eager" and n > 1:     # both signs present
                            assert np.signbit(got) == (op == "min"), (op, n, pos, fill)


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_a_product_keeps_the_sign_of_its_zero(axis, dtype, mode):
    """A product's sign is the product of its factors' signs, a zero one included, in NumPy
    and under the rule alike: ``prod([-0.0, 1.0])`` is -0.0, three -0.0 give -0.0, two give
    +0.0. The float64 partial was given ``+ 0.0`` as a sum's is (NumPy's sums start from
    +0.0), which made every zero product +0.0 (found by hand, 2026-12-05). Leaves and
    expressions, one value and 40,000 (the pool's blocks), rows and columns."""
    for rows, cols in ((3, 4), (200, 200)):
        a = np.ones((rows, cols), dtype)
        a[:, 1] = -0.0                   # one zero per row: -0.0 rows
        a[0, :] = -0.0                   # row 0: cols zeros (an even count: +0.0)
        a[2, 2] = -1.0
        for x, expression in itertools.product((a, a[::-1, ::-1]), (False, True)):
            got, want = _run("prod", x, mode, expression, axis=axis), np.prod(x, axis=axis)
            assert_same(got, want)
    for n in (1, 2, 3):
        x = np.full(n, -0.0, dtype)
        assert_same(_run("prod", x, mode), np.prod(x))
        assert_same(_run("prod", x, mode, True), np.prod(x))


@pytest.mark.parametrize("axis", [0, 1])
def test_min_max_of_signed_zeros_along_an_axis(axis, mode):
    """Both reduction layouts (rows accumulated into the slots, and slot-major), with one
    zero of the other sign at the first, middle or last position of each lane."""
    for rows in (3, 40, 2000):
        a = np.full((rows, 6), -0.0)
        b = np.zeros((rows, 6))
        for j, r in enumerate((0, rows // 2, rows - 1, 0, rows // 2, rows - 1)):
            a[r, j] = 0.0
            b[r, j] = -0.0
        for x in (a, b):
            x = x if axis == 0 else np.ascontiguousarray(x.T)
            for op in ("max", "min"):
                got, want = _run(op, x, mode, axis=axis), _expected(op, x, mode, axis=axis)
                assert_same(got, want)


def _signed_zero_rule(op, a, axis, keepdims):
    """The rule slot by slot, the plain way: NumPy's value, its zero given the preferred sign
    when a zero of that sign is among the slot's elements (``axis``: None or a tuple)."""
    axes = list(range(a.ndim)) if axis is None else [d % a.ndim for d in axis]
    kept = [a.shape[d] for d in range(a.ndim) if d not in axes]
    lanes = np.moveaxis(a, axes, list(range(a.ndim - len(axes), a.ndim))).reshape(*kept, -1)
    out = np.asarray(getattr(np, op)(lanes, axis=-1)).copy()
    for slot in np.ndindex(out.shape):
        if out[slot] == 0:
            lane = lanes[slot]
            has = ((lane == 0) & (np.signbit(lane) == (op == "min"))).any()
            out[slot] = (-0.0 if has else 0.0) if op == "min" else (0.0 if has else -0.0)
    return out.reshape(np.asarray(getattr(np, op)(a, axis=axis, keepdims=keepdims)).shape)


@pytest.mark.parametrize("dtype", [F16, F32, F64, np.dtype(">f4"), np.dtype(">f8")], ids=str)
def test_the_signed_zero_rule_read_from_the_bits(dtype):
    # reduction_rules._ieee_signed_zeros reads the sign of a zero slot's zeros from one integer
    # min/max of the bits (over the zero slots alone when they are few): the same as the rule
    # written slot by slot, for every axis and layout, with NaN and other slots beside them
    from lazyarr.backends import reduction_rules

    rng = np.random.default_rng(5)
    for shape, axes in [((50,), [None, 0, (0,)]), ((7, 9), [None, 0, 1, -1, (0, 1)]),
                        ((4, 5, 6), [None, 0, 1, 2, (0, 2), (1, 2), (-1, 0)])]:
        for dense in (False, True):
            base = rng.choice([0.0, -0.0, 1.5, -2.0, np.nan] if dense else [1.5, 3.0, -2.0],
                              size=shape)
            if not dense:                  # a few zero slots among many: the restricted path
                base.flat[rng.integers(0, base.size, 3)] = -0.0
                base.flat[rng.integers(0, base.size, 3)] = 0.0
            x = base.astype(dtype)
            layouts = [x, x[::-1], np.asfortranarray(x), np.repeat(x, 2, axis=-1)[..., ::2]]
            for a, axis, keepdims, op in itertools.product(layouts, axes, (False, True),
                                                           ("min", "max")):
                kw = {"axis": axis, "keepdims": keepdims}
                got = reduction_rules.reduce(np, op, kw, a, a.dtype.newbyteorder("="))
                want = _signed_zero_rule(op, a, None if axis is None else (
                    (axis,) if isinstance(axis, int) else axis), keepdims)
                assert_same(np.asarray(got), want.astype(np.asarray(got).dtype))


def test_max_of_many_signed_zeros_is_thread_count_independent(mode):
    """Past the serial threshold: blocks on several threads, partials merged in order."""
    x = np.full(1 << 17, -0.0)
    x[77777] = 0.0
    from lazyarr.backends import cpu_fused

    old = cpu_fused.set_num_threads(2)
    try:
        got = _run("max", x, mode)
    finally:
        cpu_fused.set_num_threads(old)
    assert_same(got, _expected("max", x, mode))
    if mode != "eager":
        assert not np.signbit(got)


# ----------------------------------------------------------------------------- finding 10
def test_fuzz_oracle_accepts_either_sign_where_numpy_clip_is_ambiguous():
    """np.clip(zero, 0.0, -0.0) is +0.0 when every operand has size 1 and -0.0 otherwise: the
    fuzz harness accepts either sign there, and only there."""
    amb = S.zero_sign_ambiguous(np.zeros(3), 0.0, -0.0)
    assert amb.all()
    assert not S.zero_sign_ambiguous(np.zeros(3), 0.0, 0.0).any()
    assert not S.zero_sign_ambiguous(np.array([0.0, 1.0]), -0.0, 2.0)[1]
    # an expression where NumPy's two clip paths disagree: size-1 input, scalar bounds
    leaf = S.Leaf(np.dtype("float64"), (1,), "C", 5)
    expr = S.Expr((leaf,), (S.Step("abs", (0,)), S.Step("multiply", (1, S.Scalar(0.0))),
                            S.Step("clip", (2, S.Scalar(0.0), S.Scalar(-0.0))),
                            S.Step("divide", (S.Scalar(1.0), 3))), (4,))
    assert S.check(expr) == {}


def test_fuzz_oracle_accepts_either_sign_where_numpy_fmax_is_ambiguous():
    """np.fmax(np.array(-0.0), 0.0) is -0.0 (NumPy's scalar loop returns the first operand on
    a tie) and +0.0 on 64 elements (its SIMD loop returns the second); the cuda kernels return
    the second (found by the GPU fuzz on the H200, 2026-12-02). Either sign is accepted there."""
    assert np.signbit(np.fmax(np.array(-0.0), 0.0)) != np.signbit(np.fmax(np.full(64, -0.0), 0.0)[0])
    policy = S.Policy()
    for op in ("fmax", "fmin"):
        step = S.Step(op, (0, S.Scalar(0.0)))
        oracle = [np.array(-0.0), getattr(np, op)(np.array(-0.0), 0.0)]
        for got in (0.0, -0.0):                      # a tie of mixed-sign zeros: either sign
            assert S._signed_zero_step(step, [None], oracle, la.asarray(got), policy) == (None, True)
        problem, _ = S._signed_zero_step(step, [None], oracle, la.asarray(1.0), policy)
        assert problem                               # anything else is still compared
        oracle = [np.array(0.0), np.array(0.0)]      # zeros of one sign: compared exactly
        assert S._signed_zero_step(step, [None], oracle, la.asarray(-0.0), policy) == (None, False)


def test_fuzz_oracle_still_catches_a_wrong_clip(monkeypatch):
    from lazyarr.backends import reference

    leaf = S.Leaf(np.dtype("float64"), (4,), "C", 5)
    expr = S.Expr((leaf,), (S.Step("clip", (0, S.Scalar(-0.5), S.Scalar(0.5))),), (1,))
    assert S.check(expr, ["lazy-reference"]) == {}
    real_run = reference.ReferenceBackend.run
    monkeypatch.setattr(reference.ReferenceBackend, "run",
                        lambda self, low: real_run(self, low) * 0.5)
    assert S.check(expr, ["lazy-reference"])


def test_fuzz_oracle_checks_the_signed_zero_rule_of_lazy_max(monkeypatch):
    """A lazy backend returning NumPy's own zero sign instead of the rule's is reported."""
    from lazyarr.backends import reference

    leaf = S.Leaf(np.dtype("float64"), (5,), "C", 5)
    # max(x * 0.0): zeros of both signs (the data has both signs)
    expr = S.Expr((leaf,), (S.Step("multiply", (0, S.Scalar(0.0))), S.Step("max", (1,)),
                            S.Step("divide", (S.Scalar(1.0), 2))), (3,))
    x = leaf.make() * 0.0
    assert (np.signbit(x) != np.signbit(x[0])).any()    # mixed signs: the rule decides
    assert S.check(expr, ["lazy-reference"]) == {}
    real_run = reference.ReferenceBackend.run
    monkeypatch.setattr(reference.ReferenceBackend, "run",
                        lambda self, low: np.asarray(-real_run(self, low)) if low.program.root.op == "max"
                        else real_run(self, low))
    assert "signed-zero" in S.check(expr, ["lazy-reference"]).get("lazy-reference", "")


def _flip_zero_signs_of_clip(monkeypatch):
    """The reference backend, except that a clip's zeros come out with the other sign (what
    NumPy's other clip path gives for the same values)."""
    from lazyarr.backends import reference

    real_run = reference.ReferenceBackend.run

    def run(self, low):
        out = np.asarray(real_run(self, low))
        if low.program.root.op == "clip" and out.dtype.kind == "f":
            out = np.where(out == 0, -out, out).astype(out.dtype)
        return out

    monkeypatch.setattr(reference.ReferenceBackend, "run", run)


def _clip_of_zeros(lo: float, hi: float) -> S.Expr:
    leaf = S.Leaf(np.dtype("float64"), (3,), "C", 5)
    return S.Expr((leaf,), (S.Step("abs", (0,)), S.Step("multiply", (1, S.Scalar(0.0))),
                            S.Step("clip", (2, S.Scalar(lo), S.Scalar(hi))),
                            S.Step("divide", (S.Scalar(1.0), 3))), (3, 4))   # clip: a root


def test_fuzz_oracle_accepts_the_other_numpy_clip_path_for_zero_bounds_of_mixed_sign(monkeypatch):
    """np.clip(zeros, 0.0, -0.0): +0.0 when every operand has size 1, -0.0 otherwise. A
    backend giving the other of NumPy's two answers is no lazyarr mismatch (the old oracle
    reported it)..."""
    assert np.signbit(np.clip(np.zeros(2), np.zeros(2), -np.zeros(2))[0])
    assert not np.signbit(np.clip(np.zeros(1), 0.0, -0.0)[0])
    _flip_zero_signs_of_clip(monkeypatch)
    assert S.check(_clip_of_zeros(0.0, -0.0), ["lazy-reference"]) == {}


def test_fuzz_oracle_reports_a_wrong_zero_sign_of_clip_where_numpy_is_consistent(monkeypatch):
    """...but where the operands' zeros all have one sign, a flipped zero is still reported."""
    _flip_zero_signs_of_clip(monkeypatch)
    assert S.check(_clip_of_zeros(0.0, 0.0), ["lazy-reference"])


def test_fuzz_oracle_leaves_numpy_reductions_of_numpy_scalars_to_numpy():
    """``np.var(numpy_scalar, dtype=float16)`` in a lazyarr run is NumPy's own computation
    (inf for 2**31 - 1 cast to float16 and back): the float64 rule (NaN) is not asked of it.
    Found by the campaign with seed 11012."""
    expr = S.Expr((S.Leaf(np.dtype("int32"), (), "numpy-scalar", 1),
                   S.Leaf(np.dtype("bool"), (), "C", 0)),
                  (S.Step("negative", (0,)), S.Step("negative", (2,)), S.Step("negative", (3,)),
                   S.Step("var", (0,), (("dtype", np.dtype("float16")), ("ddof", 0)), "numpy")),
                  (5,))
    assert S.check(expr) == {}


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("shape, kw", [((100, 37), {}), ((100, 37), {"axis": 0}),
                                       ((100, 37), {"axis": (1,), "ddof": 1, "keepdims": True}),
                                       ((5, 6, 7), {"axis": (0, 2), "ddof": 2}),
                                       ((3, 4), {"axis": -1}), ((0, 3), {"axis": 1})])
def test_var_steps_are_numpys_own(op, shape, kw, rng, monkeypatch):
    """``reduction_rules.reduce`` computes a float var/std as NumPy's own steps (a sum, the
    deviations, their squares, a sum: what the cuda backend hands to CuPy instead of its ``var``
    kernel): with NumPy they are ``np.var``'s calls on the float64 values, so the bits are
    NumPy's; a slice with no degrees of freedom keeps NumPy's own call and its warning."""
    from lazyarr.backends import numpy_methods, reduction_rules

    steps = []
    real = numpy_methods.var
    monkeypatch.setattr(numpy_methods, "var", lambda *args: steps.append(1) or real(*args))
    a = rng.standard_normal(shape).astype(np.float32) * 100 + 7
    got = reduction_rules.reduce(np, op, dict(kw), a, F32)
    assert steps, "NumPy's steps were not taken"
    want = getattr(np, op)(a.astype(np.float64), **kw).astype(np.float32)
    assert_same(np.asarray(got), np.asarray(want))
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        reduction_rules.reduce(np, op, {"ddof": 5}, a.ravel()[:4], F32)
