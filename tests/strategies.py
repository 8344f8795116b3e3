"""Random expression DAGs for differential testing against NumPy (issue 6).

An :class:`Expr` is pure data: input arrays (described by dtype, shape, memory layout and
a seed), then steps, each an op of the registry applied to earlier values or Python
scalars, written in one of the forms a user writes (``la.add(a, b)``, ``a + b``,
``a += b``, ``np.add(a, b)``, ``a.sum(axis=1)``, ``np.sum(a)``). :func:`run` evaluates it
with NumPy or with lazyarr, so the same expression is the oracle and the test, and
``repr(expr)`` is a runnable reproduction (what a shrunk failure is kept as).

The strategy draws ops from :data:`lazyarr.OPS` (not from a hand list), so an op added to
the registry is fuzzed without touching this file. Each step is type-checked while it is
drawn by running it through NumPy on placeholder arrays of the right dtype and shape: a
step NumPy rejects with ``TypeError`` is repaired by casting the operands to a dtype of
one of the ufunc's loops; a step NumPy rejects otherwise (``int8_array + 300``, the max
of an empty axis) is kept, rarely, as the last step, and then lazyarr must raise the same
exception type.

Conventions that keep the comparison meaningful (see docs/testing.rst):

* float -> int casts go through ``where(isnan(x), 0, clip(x, lo, hi))`` first: NumPy itself
  leaves out-of-range float->int conversion undefined (platform-dependent); complex -> int
  casts take ``real(x)`` first, then the same;
* integer ``power`` gets a non-negative exponent (``bitwise_and(e, 7)``): a negative one is
  a data-dependent ``ValueError`` in NumPy, tested in tests/test_errors.py instead;
* ``signbit(x)`` and ``copysign(_, x)`` get ``where(isnan(x), 0.0, x)``: the sign bit of a
  NaN is not specified (NumPy's own depends on which of its loops made the NaN);
* integer ``reciprocal`` gets an odd operand (``bitwise_or(x, 1)``): NumPy's ``reciprocal``
  of integer 0 casts ``1.0 / 0`` to an integer (undefined, platform-dependent).
"""
from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import backends
from lazyarr._dtypes import SUPPORTED_DTYPES
from lazyarr._registry import OPS, TRANSCENDENTAL, OpDef

DTYPES: list[np.dtype] = list(SUPPORTED_DTYPES)
#: Registry ops the fuzzer draws from, by kind. ``astype`` and ``clip`` are included.
ELEMENTWISE_OPS = [op for op in OPS.values() if op.kind == "elementwise"]
REDUCTION_OPS = [op for op in OPS.values() if op.kind == "reduction"]
# (fused draws: test_random_fused; the outputs of frexp/modf, no public function of their own:
# test_frexp_ldexp)
ALL_OPS = [op for op in OPS.values() if op.kind not in ("generator", "output")]
LAYOUTS = ("C", "F", "strided", "reversed", "broadcast", "numpy-scalar")
#: ops that read the sign bit of an operand (its position): of a NaN it is not specified
_NAN_SIGN_READ = {"signbit": 0, "copysign": 1}
_INPLACE_OK = {op.name for op in OPS.values() if op.operator and op.reflected and op.nin == 2}


# ----------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class Scalar:
    """A Python scalar operand (weak under NEP 50)."""

    value: int | float | bool

    def __repr__(self) -> str:
        v = self.value
        if isinstance(v, float) and not np.isfinite(v):
            return f"float({str(v)!r})"
        return repr(v)


@dataclass(frozen=True)
class Leaf:
    """An input array: ``layout`` says how its buffer is laid out (views included)."""

    dtype: np.dtype
    shape: tuple[int, ...]
    layout: str
    seed: int

    def make(self) -> Any:
        """The input, built fresh each time (NumPy and lazyarr each get their own copy)."""
        rng = np.random.default_rng(self.seed)
        if self.layout == "numpy-scalar":
            return random_values(rng, self.dtype, 1)[0]
        shape = self.shape
        if self.layout == "broadcast":       # zero strides on the broadcast axes
            base_shape = tuple(1 if i % 2 == 0 else n for i, n in enumerate(shape))
            return np.broadcast_to(random_values(rng, self.dtype, int(np.prod(base_shape)))
                                   .reshape(base_shape), shape)
        if self.layout == "strided":         # every other element of a bigger buffer
            big = random_values(rng, self.dtype, int(np.prod(shape)) * 2 ** len(shape))
            big = big.reshape(tuple(2 * n for n in shape))
            return big[(*(slice(None, None, 2) for _ in shape), ...)]   # "..." keeps 0-d an array
        data = random_values(rng, self.dtype, int(np.prod(shape))).reshape(shape)
        if self.layout == "F":
            return np.asfortranarray(data)
        if self.layout == "reversed":        # negative strides
            return data[(*(slice(None, None, -1) for _ in shape), ...)]
        return data

    def __repr__(self) -> str:
        return f"Leaf(np.dtype({self.dtype.name!r}), {self.shape}, {self.layout!r}, {self.seed})"


@dataclass(frozen=True)
class Step:
    """``op`` (a registry name) on ``args`` (value indices or :class:`Scalar`), in ``form``:

    * ``"function"``: ``la.<op>(*args, **kw)``; ``"ufunc"``: ``np.<ufunc>(*args)`` on LazyArrays;
    * ``"operator"``: ``a + b``, ``-a`` …; ``"inplace"``: ``t = a; t += b``;
    * ``"method"``: ``a.sum(**kw)`` / ``a.astype(dt)``; ``"numpy"``: ``np.sum(a, **kw)``.
    """

    op: str
    args: tuple[Any, ...]
    kw: tuple[tuple[str, Any], ...] = ()
    form: str = "function"

    def __repr__(self) -> str:
        kw = "(" + "".join(f"({k!r}, {_kw_repr(v)}), " for k, v in self.kw) + ")"
        return f"Step({self.op!r}, {self.args!r}, {kw}, {self.form!r})"


@dataclass(frozen=True)
class Expr:
    leaves: tuple[Leaf, ...]
    steps: tuple[Step, ...]
    #: value indices to materialize, in this order (the last value is always among them)
    outputs: tuple[int, ...]

    @property
    def n_values(self) -> int:
        return len(self.leaves) + len(self.steps)

    def __repr__(self) -> str:
        lines = ["Expr("]
        lines.append("    leaves=(" + "".join(f"\n        {leaf!r}," for leaf in self.leaves) + "\n    ),")
        lines.append("    steps=(" + "".join(f"\n        {s!r},  # v{len(self.leaves) + i}"
                                            for i, s in enumerate(self.steps)) + "\n    ),")
        lines.append(f"    outputs={self.outputs!r},")
        lines.append(")")
        return "\n".join(lines)

    def source(self) -> str:
        """The expression as lazyarr code a person would write (for reports)."""
        names = [f"v{i}" for i in range(self.n_values)]
        out = [f"v{i} = la.asarray({leaf!r}.make())" for i, leaf in enumerate(self.leaves)]
        for i, s in enumerate(self.steps):
            out.append(f"{names[len(self.leaves) + i]} = {_step_source(s, names)}")
        return "\n".join(out)


_OPERATOR_SYMBOLS = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
    "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
    "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
    "neg": "-", "pos": "+", "invert": "~",
}


def _step_source(s: Step, names: list[str]) -> str:
    args = [names[a] if isinstance(a, int) else repr(a) for a in s.args]
    kw = ", ".join(f"{k}={_kw_repr(v)}" for k, v in s.kw)
    opdef = OPS[s.op]
    if s.form in ("operator", "inplace"):
        if opdef.operator == "abs":
            return f"abs({args[0]})"
        sym = _OPERATOR_SYMBOLS[opdef.operator]  # type: ignore[index]
        if len(args) == 1:
            return f"{sym}{args[0]}"
        return f"({args[0]} {sym} {args[1]})" if s.form == "operator" else \
            f"inplace({args[0]}, '{sym}=', {args[1]})"
    if s.form == "method":
        return f"{args[0]}.{s.op}({', '.join(args[1:] + ([kw] if kw else []))})"
    np_name = "clip" if s.op == "clip" else opdef.numpy.__name__
    prefix = "np." + np_name if s.form in ("ufunc", "numpy") else "la." + s.op
    return f"{prefix}({', '.join(args + ([kw] if kw else []))})"


def _kw_repr(v: Any) -> str:
    return f"np.dtype({v.name!r})" if isinstance(v, np.dtype) else repr(v)


# ----------------------------------------------------------------------------- data
_FLOAT_SCALARS = (0.5, -1.5, 2.0, 3.0, -0.0, 0.0, 1e10, 1e-300, 1e300, float("nan"), float("inf"),
                  float("-inf"), 3.141592653589793)
_INT_SCALARS = (0, 1, 2, 3, -1, -7, 5, 100, 127, 200, 255, 300, -129, 2 ** 31, 2 ** 63 - 1)


def random_values(rng: np.random.Generator, dtype: np.dtype, size: int) -> np.ndarray:
    """``size`` values of ``dtype``: mostly small, with NaN, ±inf, -0.0, extremes, subnormals."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        edges = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1]
                         + ([-1] if dtype.kind == "i" else []), dtype=dtype)
        lo, hi = max(info.min, -20), min(info.max, 20)
        data = rng.integers(lo, hi, size, endpoint=True).astype(dtype)
    else:
        info = np.finfo(dtype)
        edges = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, info.max, -info.max, info.tiny,
                          info.smallest_subnormal, 1.0, -1.0, 0.5], dtype=dtype)
        data = (rng.standard_normal(size) * 3).astype(dtype)
    if size:
        k = rng.integers(0, max(1, size // 3) + 1)
        idx = rng.choice(size, size=min(k, size), replace=False)
        data[idx] = rng.choice(edges, size=len(idx))
    return data


# ----------------------------------------------------------------------------- evaluation
class Raised:
    """The outcome of an evaluation that raised."""

    def __init__(self, exc: BaseException, step: int | None) -> None:
        self.exc, self.step = exc, step

    @property
    def kind(self) -> type:
        """The nearest built-in exception class (NumPy's subclasses compare by it)."""
        return next(c for c in type(self.exc).__mro__ if c.__module__ == "builtins")

    def __repr__(self) -> str:
        return f"Raised({type(self.exc).__name__}: {self.exc}, at step {self.step})"


def inplace(a: Any, sym: str, b: Any, lib: str = "lazyarr") -> Any:
    """``a op= b`` on a fresh binding, leaving the caller's ``a`` as it was.

    With lazyarr the target is always a LazyArray. In-place operators write memory as NumPy's
    do (lazyarr/_writes.py), so a computed ``a`` (or a NumPy leaf) is copied first, as on
    NumPy's side; a pending one is shared (its in-place op rebinds the fresh binding)."""
    if lib == "lazyarr":
        if isinstance(a, la.LazyArray) and not a.is_materialized:
            t = la.LazyArray._from_node(a._node)
        else:
            t = la.asarray(np.array(a), device=a.device if isinstance(a, la.LazyArray) else None)
    else:
        t = np.array(a)  # a copy: NumPy's in-place op writes the buffer
    ns = {"t": t, "b": b}
    exec(f"t {sym} b", ns)  # noqa: S102 - the operator symbol comes from the registry table
    return ns["t"]


def apply_step(s: Step, values: list[Any], lib: str) -> Any:
    """Run one step with ``lib`` ("numpy" or "lazyarr") on materialized/pending values."""
    opdef = OPS[s.op]
    args = [values[a] if isinstance(a, int) else a.value for a in s.args]
    kw = dict(s.kw)
    if s.form in ("operator", "inplace"):
        stem = opdef.operator
        assert stem is not None
        if stem == "abs":
            return abs(args[0])
        sym = _OPERATOR_SYMBOLS[stem]
        if len(args) == 1:
            return eval(f"{sym}a", {"a": args[0]})  # noqa: S307
        if s.form == "inplace":
            return inplace(args[0], sym + "=", args[1], lib)
        return eval(f"a {sym} b", {"a": args[0], "b": args[1]})  # noqa: S307
    if opdef.kind == "cast":
        if lib == "numpy" or s.form == "method" and isinstance(args[0], np.generic):
            return np.asarray(args[0]).astype(kw["dtype"])
        return args[0].astype(kw["dtype"]) if s.form == "method" else la.astype(args[0], kw["dtype"])
    if lib == "numpy" or s.form in ("ufunc", "numpy"):
        if s.form == "method":   # NumPy scalars' methods differ (np.uint32(1).clip(-1, None))
            return getattr(np.asarray(args[0]), s.op)(*args[1:], **kw)
        if s.op == "clip":       # the registry holds the clip ufunc; users call np.clip
            return np.clip(*args, **kw)
        return opdef.numpy(*args, **kw)
    if s.form == "method":
        return getattr(args[0], s.op)(*args[1:], **kw)
    return getattr(la, s.op)(*args, **kw)


def run(expr: Expr, lib: str, oracle: list[Any] | None = None,
        policy: Policy | None = None) -> list[np.ndarray] | Raised:
    """Evaluate ``expr`` with NumPy or lazyarr (in the mode/backend in effect); the outputs
    as NumPy arrays, or :class:`Raised`. lazyarr outputs are materialized in ``expr.outputs``
    order, so earlier ones become memoized inputs of later ones.

    With a policy whose ``reductions`` is ``"float64"``, ``oracle`` (NumPy's values of every
    step, from :func:`run_numpy`) is needed: each float-accumulating reduction is checked
    against a float64 reference computed on NumPy's input, within the policy's bound, and
    then NumPy's own result replaces it, so what follows is compared exactly again. Likewise
    float min/max under ``ieee_signed_zeros`` (checked against NumPy's result with the sign of
    its zeros set by the IEEE rule), and every ``clip`` whose NumPy result is a zero of an
    ambiguous sign (:func:`zero_sign_ambiguous`), and likewise ``fmax``/``fmin``.
    """
    values: list[Any] = []
    for leaf in expr.leaves:
        data = leaf.make()
        values.append(data if lib == "numpy" or isinstance(data, np.generic) else la.asarray(data))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for i, s in enumerate(expr.steps):
            try:
                value = apply_step(s, values, lib)
            except Exception as exc:  # noqa: BLE001 - compared with NumPy's exception
                return Raised(exc, i)
            if isinstance(value, np.generic):
                # A 0-d result stays a 0-d array, as lazyarr's are: NumPy's scalar arithmetic is
                # a separate implementation (float32 ``s ** s`` on NumPy scalars is an ulp
                # from np.power on 0-d arrays). NumPy-scalar inputs are still tested (leaves).
                # (A NumPy method on a NumPy-scalar leaf gives one, in lazyarr runs too: like a
                # NumPy scalar, a 0-d host array is a value and goes along to a cuda array.)
                value = np.asarray(value)
            # the rules apply to what lazyarr computed: a NumPy function of NumPy scalars
            # (a numpy-scalar leaf) stays NumPy's own value, compared exactly
            ruled = isinstance(value, la.LazyArray)
            if oracle is not None and policy is not None and policy.reductions == "float64" \
                    and ruled and _accumulates_floats(s, value) and len(oracle) > len(values):
                x = np.asarray(oracle[s.args[0]])
                problem = reduction_mismatch(s, x, np.asarray(value), policy,
                                             np.asarray(oracle[len(values)]))
                if problem:
                    return Raised(ReductionMismatch(f"step {i} ({s!r}): {problem}"), i)
                value = la.asarray(np.asarray(oracle[len(values)]))
            elif oracle is not None and policy is not None and len(oracle) > len(values):
                problem, replace = _signed_zero_step(s, values, oracle, value, policy)
                if problem:
                    return Raised(ReductionMismatch(f"step {i} ({s!r}): {problem}"), i)
                if replace:
                    value = la.asarray(np.asarray(oracle[len(values)]))
            values.append(value)
        if lib == "numpy" and oracle is not None:
            oracle[:] = values
        if lib == "lazyarr":
            problem = _explain_runs_nothing([values[i] for i in expr.outputs])
            if problem:
                return Raised(ExplainRan(problem), None)
        try:
            return [np.asarray(values[i]) for i in expr.outputs]
        except Exception as exc:  # noqa: BLE001 - data-dependent errors raise at materialization
            return Raised(exc, None)


def run_numpy(expr: Expr) -> tuple[list[np.ndarray] | Raised, list[Any]]:
    """NumPy's outcome and the value of every step (the oracle for float64 reductions)."""
    values: list[Any] = []
    outcome = run(expr, "numpy", oracle=values)
    return outcome, values


class ExplainRan(AssertionError):
    """``la.explain`` failed on, or materialized, a pending array."""


def _explain_runs_nothing(outputs: list[Any]) -> str | None:
    """``la.explain`` of each pending output returns a plan and leaves it pending."""
    for v in outputs:
        if isinstance(v, la.LazyArray) and not v.is_materialized:
            try:
                plan = la.explain(v)
            except Exception as exc:  # noqa: BLE001
                return f"la.explain raised {type(exc).__name__}: {exc}"
            if v.is_materialized or not str(plan):
                return "la.explain materialized its argument"
    return None


def zero_sign_ambiguous(*operands: Any) -> np.ndarray:
    """Where NumPy's own ``clip``, ``fmax`` or ``fmin`` returns a zero whose sign depends on
    the operands' sizes: the operands (broadcast; None left out) are all zeros of mixed signs.
    ``np.clip(0.0, 0.0, -0.0)`` gives 0.0 when every operand has size 1 and -0.0 otherwise
    (its scalar-bounds fast path and its general loop pick different operands);
    ``np.fmax(np.array(-0.0), 0.0)`` is -0.0 (the scalar loop returns the first operand on a
    tie) and +0.0 for 64 elements (the SIMD loop returns the second). No backend can match
    both, so there either sign is accepted (docs/testing.rst, "Signed zeros")."""
    ops = [np.asarray(v) for v in operands if v is not None]
    if any(o.dtype.kind != "f" for o in ops[:1]):
        return np.zeros(np.broadcast_shapes(*(o.shape for o in ops)), bool)
    b = np.broadcast_arrays(*ops)
    zero = np.logical_and.reduce([o == 0 for o in b])
    signs = [np.signbit(o) for o in b]
    mixed = np.logical_or.reduce(signs) & ~np.logical_and.reduce(signs)
    return zero & mixed


def ieee_signed_zeros(op: str, x: np.ndarray, numpy_result: np.ndarray, kw: dict[str, Any]) -> np.ndarray:
    """NumPy's float ``min``/``max`` with the sign of a zero result set by IEEE 754-2019
    maximum/minimum (+0 > -0): lazy mode's rule (docs/testing.rst, "Signed zeros")."""
    r = np.array(numpy_result)
    zero = r == 0
    if not zero.any():
        return r
    pos_zero, neg_zero = (x == 0) & ~np.signbit(x), (x == 0) & np.signbit(x)
    axis, keep = kw.get("axis"), kw.get("keepdims", False)
    if op == "max":
        sign_neg = ~np.any(pos_zero, axis=axis, keepdims=keep)
    else:
        sign_neg = np.any(neg_zero, axis=axis, keepdims=keep)
    z = np.where(sign_neg, -0.0, 0.0).astype(r.dtype)
    return np.where(zero, z, r).astype(r.dtype)


def _same_bits(got: np.ndarray, want: np.ndarray, free_sign: np.ndarray | None = None) -> bool:
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    signs = np.signbit(got) == np.signbit(want)
    if free_sign is not None:
        signs |= free_sign
    return bool(np.all(same & (signs | np.isnan(want))))


def _signed_zero_step(s: Step, values: list[Any], oracle: list[Any], value: Any,
                      policy: Policy) -> tuple[str | None, bool]:
    """(problem, replace by NumPy's value) for a min/max under the IEEE signed-zero rule or
    a clip with a zero of ambiguous sign; (None, False) for any other step (no materialization)."""
    want = np.asarray(oracle[len(values)])
    if want.dtype.kind != "f" or not isinstance(value, (la.LazyArray, np.ndarray, np.generic)):
        return None, False
    if s.op in ("min", "max") and policy.ieee_signed_zeros and isinstance(s.args[0], int) \
            and isinstance(value, la.LazyArray):
        if not (want == 0).any():
            return None, False
        kw = dict(s.kw)
        if kw.get("axis") is not None and not isinstance(kw["axis"], tuple):
            kw["axis"] = (kw["axis"],)
        expected = ieee_signed_zeros(s.op, np.asarray(oracle[s.args[0]]), want, kw)
        got = np.asarray(value)
        if not _same_bits(got, expected):
            return (f"{s.op} breaks the IEEE signed-zero rule:\n  got      {got!r}\n  expected "
                    f"{expected!r}\n  numpy    {want!r}"), False
        return None, True
    if s.op in ("clip", "fmax", "fmin"):
        args = [np.asarray(oracle[a]) if isinstance(a, int) else a.value for a in s.args]
        if s.op == "clip":
            args += [None] * (3 - len(args))
            kw = dict(s.kw)
            args[1:] = kw.get("min", kw.get("a_min", args[1])), kw.get("max", kw.get("a_max", args[2]))
        free = zero_sign_ambiguous(*args)
        if not free.any():
            return None, False
        got = np.asarray(value)
        if not _same_bits(got, want, np.broadcast_to(free, want.shape)):
            return (f"{s.op} differs beyond the sign of ambiguous zeros:\n  got  {got!r}\n"
                    f"  numpy {want!r}"), False
        return None, True
    return None, False


class ReductionMismatch(AssertionError):
    """A reduction differs from the float64 reference beyond the policy's bound."""


def _accumulates_floats(s: Step, value: Any) -> bool:
    return s.op in ("sum", "prod", "mean", "var", "std") and np.asarray(value).dtype.kind in "fc"


def reduction_mismatch(s: Step, x: np.ndarray, got: np.ndarray, policy: Policy,
                       numpy_result: np.ndarray) -> str | None:
    """``got`` (a float reduction of ``x``) against lazy mode's accumulation rule: the same
    reduction done in float64 on the elements cast to the loop dtype, rounded once to the
    result dtype (docs/testing.rst, "Reductions"). NumPy's own float16/float32 result is NOT
    accepted: it accumulates in the loop dtype and overflows where the rule does not
    (``numpy_result`` is only shown in the message).

    The bound: ``c * eps(result dtype) * scale`` plus the dtype's ``tiny``, where ``scale`` is
    the sum (mean) of ``|x|`` for sum (mean), ``|reference|`` for prod, the mean of ``x**2``
    for var/std (std compared squared), and ``c = policy.reduction_ulps * (1 + log2(n))``.
    NaN must be where the reference has NaN, infinities equal. Complex results are compared
    part by part (each part is accumulated on its own): a sum's or mean's real part against
    the sum (mean) of ``|real(x)|``, its imaginary part likewise; each part of a product
    against the reference's modulus (the bound of the product's error), and a complex product
    with a non-finite element or an overflow midway under the product rule (its order decides
    which parts are NaN).
    """
    kw = dict(s.kw)
    dtype = kw.pop("dtype", None)
    fn = OPS[s.op].numpy
    x = x if dtype is None else x.astype(dtype)                          # NumPy casts to dtype=
    wide = np.complex128 if x.dtype.kind == "c" else np.float64          # complex: part by part
    x64 = x.astype(wide)
    with np.errstate(all="ignore"):
        ref = np.asarray(fn(x64, **kw)).astype(got.dtype).astype(wide if got.dtype.kind == "c"
                                                                  else np.float64)
        g = got.astype(ref.dtype)
        if g.shape != ref.shape:
            return f"shape {g.shape} != reference {ref.shape}"
        axis, keep = kw.get("axis"), kw.get("keepdims", False)
        n = max(1, x.size // max(1, ref.size))
        if s.op in ("sum", "mean"):
            def scale_of(part):
                return np.asarray(fn(np.abs(part(x64)), axis=axis, keepdims=keep))
        elif s.op == "prod":
            def scale_of(part):
                return np.abs(ref)
        else:
            def scale_of(part):
                return np.asarray(np.mean(np.abs(x64) ** 2, axis=axis, keepdims=keep)) * n / max(1, n - 1)
            if s.op == "std":
                g, ref = g * g, ref * ref
        eps = float(np.finfo(got.dtype).eps)
        c = policy.reduction_ulps * (1 + np.log2(n)) * eps
        tiny = float(np.finfo(got.dtype).tiny)
        bad = np.zeros(ref.shape, bool)
        for part in ((np.real, np.imag) if ref.dtype.kind == "c" else (lambda v: v,)):
            gp, rp, tol = part(g), part(ref), c * scale_of(part) + tiny
            bad |= ~((gp == rp) | (np.isnan(gp) & np.isnan(rp)) | (np.abs(gp - rp) <= tol))
        if s.op == "prod" and ref.dtype.kind == "c":
            # the product rule (docs/testing.rst): which parts of a product with a non-finite
            # part are NaN depends on the order of the products; a NaN part anywhere gives
            # nan+nanj, an infinite one two non-finite parts; a product of finite values that
            # overflows midway is not compared (its order decides)
            parts = np.stack([x64.real, x64.imag])
            nan_in = np.isnan(parts).any(axis=0).any(axis=axis, keepdims=keep)
            odd_in = (~np.isfinite(parts)).any(axis=0).any(axis=axis, keepdims=keep)
            ruled = np.where(nan_in, np.isnan(g.real) & np.isnan(g.imag),
                             ~np.isfinite(g.real) & ~np.isfinite(g.imag))
            bad = np.where(odd_in, ~ruled, bad & np.isfinite(ref))
    if np.any(bad):
        return (f"{s.op} differs from the float64 reference beyond {policy.reduction_ulps} ulps "
                f"x (1 + log2 n):\n  got   {got!r}\n  numpy {numpy_result!r}\n  float64 reference "
                f"{np.asarray(fn(x64, **kw))!r}")
    return None


# ----------------------------------------------------------------------------- comparison
@dataclass
class Policy:
    """How closely a backend must match NumPy (docs/testing.rst, "Tolerance policy").

    ``exact``: same dtype, shape, bits (NaN where NaN, sign of zeros). Otherwise integer and
    bool results are still exact, and floats agree within ``rtol`` relative to the larger
    magnitude (or ``atol_ulps`` of the dtype's ``tiny`` near zero).
    """

    exact: bool = True
    rtol: dict[int, float] = field(default_factory=lambda: {2: 4e-3, 4: 1e-5, 8: 1e-13})
    #: "exact": reductions too are bit-identical to NumPy's; "float64": float-accumulating
    #: reductions are checked against a float64 reference (see :func:`reduction_mismatch`).
    reductions: str = "exact"
    reduction_ulps: float = 4.0
    #: compare float outputs that depend on a transcendental op within ``rtol`` (others stay
    #: exact): NumPy's own transcendental results depend on array length and memory layout
    #: (SIMD and scalar loops differ by an ulp), so a backend running NumPy's loops over
    #: contiguous blocks can differ from NumPy run on the user's views.
    rtol_after_transcendentals: bool = False
    #: float min/max follow IEEE 754-2019 for the sign of a zero result (+0 > -0), lazy
    #: mode's rule; False: NumPy's own sign (eager mode)
    ieee_signed_zeros: bool = False


EXACT = Policy()
#: Lazy mode on the reference backend: NumPy op by op, but with explicit cast nodes whose
#: buffers may be laid out unlike NumPy's in-loop casts, and NumPy's float reductions depend on
#: memory order (np.prod of the same values in C and F order differ in the last bit).
FLOAT64_REDUCTIONS = Policy(reductions="float64", ieee_signed_zeros=True)
#: The fused CPU backend: NumPy's own elementwise loops (bit-identical), but over contiguous
#: blocks (see ``rtol_after_transcendentals``), reductions in float64.
CPU_FUSED = Policy(reductions="float64", rtol_after_transcendentals=True, ieee_signed_zeros=True)
#: CUDA (GPU or simulator) on ops it computes correctly rounded, and on transcendentals.
GPU_EXACT = FLOAT64_REDUCTIONS
GPU_ULPS = Policy(exact=False, reductions="float64", ieee_signed_zeros=True)
POLICIES: dict[str, Policy] = {"lazy-reference": FLOAT64_REDUCTIONS, "lazy-cpu-fused": CPU_FUSED,
                               "lazy-cuda": GPU_ULPS, "lazy-cuda-sim": GPU_ULPS}

#: Ops whose result is correctly rounded (or exact) on every backend: IEEE arithmetic, sqrt,
#: rounding, comparisons, bitwise, selection, casts, reductions (all but the transcendentals,
#: ``OpDef.transcendental``).
EXACT_OPS = [op for op in ALL_OPS if not op.transcendental]
#: Transcendentals and the exact continuous ops around them (no comparison, rounding, cast or
#: select whose output jumps when an input moves by an ulp): for ulp-bounded backends.
CONTINUOUS_OPS = [OPS[n] for n in sorted(TRANSCENDENTAL) + ["add", "subtract", "multiply",
                                                             "divide", "sqrt", "square", "negative",
                                                             "abs", "maximum", "minimum", "clip"]]


def mismatch(got: np.ndarray, want: np.ndarray, policy: Policy = EXACT) -> str | None:
    """None when ``got`` matches ``want`` under ``policy``, else a description."""
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != NumPy {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} != NumPy {want.shape}"
    if want.dtype.kind == "c":
        # part by part; an ulp-bounded part is judged against the complex magnitude (the
        # error bound of complex functions is relative to |z|, not to each part)
        with np.errstate(all="ignore"):
            scale = np.maximum(np.abs(got), np.abs(want))
        for name in ("real", "imag"):
            problem = _float_mismatch(np.asarray(getattr(got, name)), np.asarray(getattr(want, name)),
                                      policy, scale)
            if problem:
                return f"{name} parts: {problem}\n  got  {got!r}\n  want {want!r}"
        return None
    if want.dtype.kind != "f":
        if not np.array_equal(got, want):
            return f"values differ:\n  got  {got!r}\n  want {want!r}"
        return None
    return _float_mismatch(got, want, policy)


def _float_mismatch(got: np.ndarray, want: np.ndarray, policy: Policy,
                    scale: np.ndarray | None = None) -> str | None:
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    if not np.array_equal(nan_g, nan_w):
        return f"NaN positions differ:\n  got  {got!r}\n  want {want!r}"
    g, w = got[~nan_w], want[~nan_w]
    if policy.exact:
        if not np.array_equal(g, w) or not np.array_equal(np.signbit(g), np.signbit(w)):
            return f"values differ (exact policy):\n  got  {got!r}\n  want {want!r}"
        return None
    with np.errstate(all="ignore"):
        inf = np.isinf(w)
        if not np.array_equal(g[inf], w[inf]):
            return f"infinities differ:\n  got  {got!r}\n  want {want!r}"
        g64, w64 = g[~inf].astype(np.float64), w[~inf].astype(np.float64)
        scale = np.maximum(np.abs(g64), np.abs(w64)) if scale is None \
            else np.asarray(scale, np.float64)[~nan_w][~inf]
        tol = policy.rtol[want.dtype.itemsize] * scale + float(np.finfo(want.dtype).tiny)
        bad = np.abs(g64 - w64) > tol
    if bad.any():
        return f"values differ beyond rtol={policy.rtol[want.dtype.itemsize]}:\n  got  {got!r}\n  want {want!r}"
    return None


def transcendental_dependent(expr: Expr) -> dict[int, int]:
    """The values of ``expr`` that depend on a transcendental op, each with the narrowest float
    width (bytes) such an op may have computed in: its error is that width's, also after a
    cast to a wider float (``log2(log1p(uint16))`` is float32, times a float64 is float64 with
    a float32 error). The width of a transcendental of an operand is bounded by the operand's
    leaves: NumPy computes bool/int8/uint8 in float16, int16/uint16 in float32, floats in their
    own width, wider integers in float64."""
    n = len(expr.leaves)
    width: dict[int, int] = {}
    for i, leaf in enumerate(expr.leaves):
        dt = np.dtype(leaf.dtype)
        width[i] = dt.itemsize if dt.kind == "f" else 2 if dt.itemsize == 1 else 4 if dt.itemsize == 2 else 8
    out: dict[int, int] = {}
    for k, s in enumerate(expr.steps):
        srcs = [a for a in s.args if isinstance(a, int)]
        width[n + k] = min((width[a] for a in srcs), default=8)
        tainted = [out[a] for a in srcs if a in out]
        if s.op in TRANSCENDENTAL:
            tainted.append(width[n + k])
        if tainted:
            out[n + k] = min(tainted)
    return out


def compare(expr: Expr, got: Any, want: Any, policy: Policy = EXACT) -> str | None:
    """None if lazyarr's outcome ``got`` matches NumPy's ``want``, else a description."""
    if isinstance(want, Raised):
        if not isinstance(got, Raised):
            return f"NumPy raised {want!r}; lazyarr did not"
        if not issubclass(got.kind, want.kind):
            return f"NumPy raised {want!r}; lazyarr raised {got!r}"
        return None
    if isinstance(got, Raised):
        return f"lazyarr raised {got!r}; NumPy did not"
    tainted = transcendental_dependent(expr) if policy.rtol_after_transcendentals else {}
    for i, g, w in zip(expr.outputs, got, want):
        if i in tainted:
            rtol = {size: policy.rtol[min(size, tainted[i])] for size in policy.rtol}
            problem = mismatch(g, w, Policy(exact=False, rtol=rtol))
        else:
            problem = mismatch(g, w, policy)
        if problem:
            return f"output v{i}: {problem}"
    return None


# ----------------------------------------------------------------------------- modes
def targets() -> list[str]:
    """Every lazyarr evaluation available here: eager, and lazy on each backend (the cuda one
    where a cuda device is usable: a GPU, or the simulated device)."""
    return ["eager", *(f"lazy-{b}" for b in backends.available()
                       if backends.BACKENDS.get(b, ("cpu",))[0] != "cuda" or la.cuda_available())]


@contextlib.contextmanager
def target(name: str) -> Any:
    """Enter a target of :func:`targets`: ``"eager"`` or ``"lazy-<backend>"`` (on the backend's
    device; ``lazy-cuda-sim`` is the simulated cuda device, ``LAZYARR_CUDA_SIM=1``)."""
    with contextlib.ExitStack() as stack:
        if name == "eager":
            stack.enter_context(la.config(mode="eager", device="cpu"))
        else:
            backend = name.removeprefix("lazy-")
            device = backends.BACKENDS[backend][0] if backend in backends.BACKENDS else "cpu"
            stack.enter_context(la.config(mode="lazy", device=device))
            stack.enter_context(backends.use_backend(backend))
        yield


def check(expr: Expr, targets_: list[str] | None = None,
          policies: dict[str, Policy] | None = None) -> dict[str, str]:
    """Run ``expr`` on NumPy and on each target; target name -> problem, for mismatches."""
    want, oracle = run_numpy(expr)
    problems = {}
    policies = POLICIES if policies is None else policies
    for name in targets_ if targets_ is not None else targets():
        policy = policies.get(name, EXACT)
        with target(name):
            try:
                got = run(expr, "lazyarr", oracle, policy)
            except Exception as exc:  # noqa: BLE001 - run() returns errors; this is a crash of it
                got = Raised(exc, -1)
        problem = compare(expr, got, want, policy)
        if problem:
            problems[name] = problem
    return problems


# ----------------------------------------------------------------------------- the strategy
def _proto(shape: tuple[int, ...], dtype: np.dtype, numpy_scalar: bool = False) -> Any:
    """A placeholder value with the dtype and shape of a value (ones: no division by zero)."""
    if numpy_scalar:
        return np.ones((), dtype)[()]
    return np.ones(shape, dtype)


def _try(step: Step, protos: list[Any]) -> Any:
    """The step run by NumPy on placeholders: the result, or the exception NumPy raises."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return apply_step(step, protos, "numpy")
        except Exception as exc:  # noqa: BLE001
            return exc


def _loop_dtypes(opdef: OpDef) -> list[tuple[np.dtype, ...]]:
    """The input dtypes of the ufunc's loops that lazyarr supports."""
    loops = []
    for t in opdef.numpy.types:
        ins = t.split("->")[0]
        try:
            dts = tuple(np.dtype(c) for c in ins)
        except TypeError:
            continue
        if all(d in SUPPORTED_DTYPES for d in dts):
            loops.append(dts)
    return loops


@st.composite
def shapes(draw: Any, max_dims: int = 3) -> tuple[int, ...]:
    ndim = draw(st.integers(0, max_dims))
    return tuple(draw(st.sampled_from((1, 2, 3, 4, 0, 5))) for _ in range(ndim))


def _sub_shape(draw: Any, base: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts to ``base``: a suffix of it, some dimensions set to 1."""
    k = draw(st.integers(0, len(base)))
    return tuple(1 if draw(st.booleans()) and draw(st.booleans()) else n for n in base[len(base) - k:])


@st.composite
def leaves(draw: Any, base: tuple[int, ...]) -> Leaf:
    dtype = draw(st.sampled_from(DTYPES))
    layout = draw(st.sampled_from(LAYOUTS))
    shape = () if layout == "numpy-scalar" else _sub_shape(draw, base)
    return Leaf(np.dtype(dtype), shape, layout, draw(st.integers(0, 2 ** 32 - 1)))


def _scalar(draw: Any, dtype: np.dtype) -> Scalar:
    kind = draw(st.sampled_from(("int", "float", "bool")) if dtype.kind == "f" else
                st.sampled_from(("int", "int", "float", "bool")))
    if kind == "bool":
        return Scalar(draw(st.booleans()))
    if kind == "int":
        return Scalar(draw(st.sampled_from(_INT_SCALARS)))
    return Scalar(draw(st.sampled_from(_FLOAT_SCALARS)))


class _Builder:
    """Draws steps while tracking each value's placeholder (its dtype and shape)."""

    def __init__(self, draw: Any, leaves_: list[Leaf], allow_errors: bool) -> None:
        self.draw = draw
        self.leaves = leaves_
        self.protos: list[Any] = [_proto(lf.shape, lf.dtype, lf.layout == "numpy-scalar")
                                  for lf in leaves_]
        self.steps: list[Step] = []
        self.allow_errors = allow_errors
        self.failed = False  # an expected error ended the expression

    def n(self) -> int:
        return len(self.protos)

    def dtype(self, i: int) -> np.dtype:
        return np.asarray(self.protos[i]).dtype

    def shape(self, i: int) -> tuple[int, ...]:
        return np.shape(self.protos[i])

    def add(self, step: Step) -> int | None:
        """Append ``step`` if NumPy accepts it; returns its index, or None."""
        result = _try(step, self.protos)
        if isinstance(result, Exception):
            if isinstance(result, TypeError) or not self.allow_errors:
                return None
            self.failed = True       # e.g. OverflowError for int8 + 300: the expected outcome
        self.steps.append(step)
        self.protos.append(None if self.failed else result)
        return self.n() - 1

    def pick(self, broadcast_with: int | None = None) -> int:
        """An existing value; recent ones are likelier (deep chains), any may be reused."""
        candidates = list(range(self.n()))
        if broadcast_with is not None:
            target_shape = self.shape(broadcast_with)
            candidates = [i for i in candidates if _broadcasts(self.shape(i), target_shape)]
        if self.draw(st.booleans()):
            return candidates[-1]
        return self.draw(st.sampled_from(candidates))

    # ------------------------------------------------------------------ step kinds
    def cast(self, i: int, dtype: np.dtype) -> int:
        """``i.astype(dtype)``; float -> int through a clip into range first (see module doc)."""
        src = self.dtype(i)
        dtype = np.dtype(dtype)
        if src == dtype:
            return i
        if src.kind == "c" and dtype.kind in "iu":
            # complex -> int: NumPy's own cast of an out-of-range real part differs from its
            # float -> int cast (-3.4e38+0j to uint32: 2**31, as float32: 0); take the real
            # part, then the float rule below
            j = self.add(Step("real", (i,)))
            assert j is not None
            i, src = j, self.dtype(j)
        if src.kind == "f" and dtype.kind in "iu":
            info, finfo = np.iinfo(dtype), np.finfo(src)
            hi = float(min(2 ** (info.bits - (2 if info.kind == "i" else 1)) if info.bits > 8
                           else info.max, float(finfo.max)))
            lo = -hi if info.kind == "i" else 0.0
            clipped = self.add(Step("clip", (i, Scalar(lo), Scalar(hi))))
            isnan = self.add(Step("isnan", (i,)))
            assert clipped is not None and isnan is not None
            j = self.add(Step("where", (isnan, Scalar(0.0), clipped)))
            assert j is not None
            i = j
        form = self.draw(st.sampled_from(("function", "method")))
        k = self.add(Step("astype", (i,), (("dtype", dtype),), form))
        assert k is not None
        return k

    def elementwise(self, opdef: OpDef) -> int | None:
        draw = self.draw
        first = self.pick()
        args: list[Any] = [first]
        for _ in range(1, opdef.nin):
            if draw(st.integers(0, 3)) == 0:
                args.append(_scalar(draw, self.dtype(first)))
            else:
                args.append(self.pick(broadcast_with=first))
        if opdef.nin >= 2 and draw(st.booleans()):   # scalar / operand position varies
            k = draw(st.integers(0, opdef.nin - 1))
            args[0], args[k] = args[k], args[0]
        if not any(isinstance(a, int) for a in args):
            args[0] = first
        if opdef.name == "power":
            args = self._power_args(args)
            if args is None:
                return None
        if opdef.name == "reciprocal":
            args = self._nonzero_int(args)
        if opdef.name in _NAN_SIGN_READ:
            args = self._nan_free(args, _NAN_SIGN_READ[opdef.name])
        forms = ["function"]
        if opdef.is_ufunc:
            forms.append("ufunc")
        if opdef.operator and (isinstance(args[0], int) or opdef.nin == 2 and opdef.reflected
                               or opdef.nin == 2 and isinstance(args[1], int)):
            forms += ["operator", "operator"]
            if opdef.name in _INPLACE_OK and isinstance(args[0], int):
                forms.append("inplace")
        if opdef.name == "clip":
            forms = ["function", "method", "numpy"]
            if draw(st.integers(0, 4)) == 0:      # a bound may be None (not both)
                args[draw(st.integers(1, 2))] = Scalar(None)  # type: ignore[arg-type]
        step = Step(opdef.name, tuple(args), (), draw(st.sampled_from(forms)))
        if opdef.name == "clip" and step.form == "method" and not isinstance(args[0], int):
            step = Step(opdef.name, step.args, (), "function")
        result = self.add(step)
        if result is None and opdef.is_ufunc and not self.failed:
            result = self._repair(opdef, step)
        return result

    def _repair(self, opdef: OpDef, step: Step) -> int | None:
        """NumPy has no loop for these dtypes: cast the array operands to a loop's dtypes."""
        loops = _loop_dtypes(opdef)
        if not loops:
            return None
        loop = self.draw(st.sampled_from(loops))
        args = [self.cast(a, dt) if isinstance(a, int) else a for a, dt in zip(step.args, loop)]
        if opdef.name == "power":
            args = self._power_args(args)  # type: ignore[assignment]
            if args is None:
                return None
        if opdef.name == "reciprocal":
            args = self._nonzero_int(args)
        if opdef.name in _NAN_SIGN_READ:
            args = self._nan_free(args, _NAN_SIGN_READ[opdef.name])
        return self.add(Step(step.op, tuple(args), step.kw, step.form))

    def _nan_free(self, args: list[Any], position: int) -> list[Any]:
        """The sign bit of a NaN is not specified (NumPy's own depends on which of its loops
        made it: SIMD or scalar, float16 through float32): the operand whose sign is read
        (``signbit(x)``, ``copysign(_, x)``) gets ``where(isnan(x), 0.0, x)``."""
        x = args[position]
        if isinstance(x, int) and self.dtype(x).kind in "fc":
            nan = self.add(Step("isnan", (x,)))
            clean = None if nan is None else self.add(Step("where", (nan, Scalar(0.0), x)))
            if clean is not None:
                args = list(args)
                args[position] = clean
        return args

    def _nonzero_int(self, args: list[Any]) -> list[Any]:
        """Integer ``reciprocal(0)`` is undefined (NumPy computes 1.0/0 and casts inf to int):
        an integer operand gets ``bitwise_or(x, 1)``, which is odd, so never 0."""
        (x,) = args
        if isinstance(x, int) and self.dtype(x).kind in "iu":
            odd = self.add(Step("bitwise_or", (x, Scalar(1))))
            return [x if odd is None else odd]
        return args

    def _power_args(self, args: list[Any]) -> list[Any] | None:
        """Integer power: exponent ``bitwise_and(e, 7)`` or a small non-negative scalar."""
        base, exp = args
        dts = [self.dtype(a) if isinstance(a, int) else type(a.value) for a in args]
        if not all(d in (int, bool) or isinstance(d, np.dtype) and d.kind in "iub" for d in dts):
            return args
        if isinstance(exp, Scalar):
            return [base, Scalar(abs(int(exp.value)) % 8)]
        masked = self.add(Step("bitwise_and", (exp, Scalar(7))))
        return None if masked is None else [base, masked]

    def reduction(self, opdef: OpDef) -> int | None:
        draw = self.draw
        i = self.pick()
        ndim = len(self.shape(i))
        kw: list[tuple[str, Any]] = []
        if ndim and draw(st.integers(0, 3)):
            if opdef.takes_axis_tuple and draw(st.booleans()):
                axes = draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim,
                                     unique_by=lambda a: a % ndim))
                kw.append(("axis", tuple(axes)))
            else:
                kw.append(("axis", draw(st.integers(-ndim, ndim - 1))))
        if draw(st.booleans()):
            kw.append(("keepdims", True))
        if opdef.takes_dtype and draw(st.integers(0, 3)) == 0:
            choices = [d for d in DTYPES if d.kind == "f"] if opdef.name in ("mean", "var", "std") \
                else [d for d in DTYPES if d.kind != "b"]
            kw.append(("dtype", np.dtype(draw(st.sampled_from(choices)))))
        if opdef.takes_ddof and draw(st.booleans()):
            kw.append(("ddof", draw(st.sampled_from((0, 1, 2)))))
        form = draw(st.sampled_from(("function", "method", "numpy")))
        return self.add(Step(opdef.name, (i,), tuple(kw), form))


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


@st.composite
def expressions(draw: Any, max_steps: int = 20, max_leaves: int = 4, allow_errors: bool = True,
                ops: list[OpDef] | None = None) -> Expr:
    """A random expression: 1..``max_leaves`` inputs broadcasting to one random shape, then up
    to ``max_steps`` steps, each a registry op (``ops``, default all)."""
    base = draw(shapes())
    leaves_ = [draw(leaves(base)) for _ in range(draw(st.integers(1, max_leaves)))]
    b = _Builder(draw, leaves_, allow_errors and draw(st.integers(0, 9)) == 0)
    ops = ops if ops is not None else ALL_OPS
    n_steps = draw(st.integers(1, max_steps))
    attempts = 0
    while len(b.steps) < n_steps and not b.failed and attempts < 4 * max_steps:
        attempts += 1
        opdef = draw(st.sampled_from(ops))
        if opdef.kind == "cast":
            b.cast(b.pick(), draw(st.sampled_from(DTYPES)))
        elif opdef.kind == "reduction":
            b.reduction(opdef)
        else:
            b.elementwise(opdef)
    if not b.steps:   # every draw was rejected: a cast always works
        b.cast(b.pick(), np.dtype(np.float64))
    last = b.n() - 1
    earlier = draw(st.lists(st.integers(len(leaves_), last), max_size=2, unique=True)) \
        if not b.failed else []
    return Expr(tuple(leaves_), tuple(b.steps), tuple([e for e in earlier if e != last] + [last]))
