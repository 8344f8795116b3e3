"""NumPy scalar operands (``x * np.float64(dt)``, ``np.sqrt(2.0) * x``): NumPy 2 treats them as
typed values, not weak ones, and lazyarr builds them on the operators' fast paths
(``_operands.numpy_scalar_node``, memoized): the same dtypes, values, signed zeros, NaNs and
errors as NumPy, in lazy and eager mode, forward, reflected and through the function forms."""
from __future__ import annotations

import operator

import numpy as np
import pytest
from helpers import assert_same

import lazyarr as la
from lazyarr import _operands

SCALARS = [np.float64(1.5), np.float32(-2.25), np.float16(0.5), np.float64(-0.0), np.float32(0.0),
           np.float64(np.nan), np.float64(np.inf), np.int64(3), np.int8(-7), np.uint8(200),
           np.uint64(2**63 + 5), np.bool_(True), np.bool_(False)]
ARRAYS = [np.linspace(-3, 3, 5000), np.linspace(-3, 3, 5000).astype(np.float32),
          np.arange(-2500, 2500).astype(np.int8), np.arange(5000).astype(np.uint16),
          np.arange(5000) % 3 == 0]
OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.lt, operator.eq,
       operator.and_]


@pytest.mark.parametrize("mode", ["lazy", "eager"])
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_dtypes_and_values_are_numpys(op, mode):
    checked = 0
    for a in ARRAYS:
        for s in SCALARS:
            for args in ((a, s), (s, a)):
                try:
                    with np.errstate(all="ignore"):
                        want = op(*args)
                except TypeError:       # (bool - bool, float & int, ...)
                    with la.config(mode=mode), pytest.raises(TypeError):
                        op(*(la.asarray(v) if v is a else v for v in args))
                    continue
                with la.config(mode=mode), np.errstate(all="ignore"):
                    got = op(*(la.asarray(v) if v is a else v for v in args))
                    assert_same(np.asarray(got), want)
                checked += 1
    assert checked > 30      # (& of floats raises: the fewest pairs)


def test_the_function_forms_and_reductions_take_them():
    x = la.asarray(np.linspace(0, 1, 1000, dtype=np.float32))
    xn = np.linspace(0, 1, 1000, dtype=np.float32)
    assert_same(np.asarray(la.multiply(x, np.float64(0.1))), np.multiply(xn, np.float64(0.1)))
    assert_same(np.asarray(la.maximum(np.float32(0.5), x)), np.maximum(np.float32(0.5), xn))
    s = la.sum(x * np.sqrt(2.0))
    assert s.dtype == np.float64 and np.isclose(float(s), float(np.sum(xn * np.sqrt(2.0))), rtol=1e-12)


def test_a_zeros_sign_is_kept_apart_in_the_memo():
    x = la.asarray(np.ones(1000))
    assert_same(np.asarray(x * np.float64(0.0)), np.ones(1000) * 0.0)
    assert_same(np.asarray(x * np.float64(-0.0)), np.ones(1000) * -0.0)
    assert _operands.numpy_scalar_node(np.float64(0.0)) is not _operands.numpy_scalar_node(np.float64(-0.0))
    assert _operands.numpy_scalar_node(np.float64(2.0)) is _operands.numpy_scalar_node(np.float64(2.0))
    assert _operands.numpy_scalar_node(np.float32(2.0)) is not _operands.numpy_scalar_node(np.float64(2.0))
    assert _operands.numpy_scalar_node(np.complex128(1j)) is None    # (to_operand's way)


def test_integer_powers_are_checked_at_each_call():
    x = la.asarray(np.arange(1, 2000, dtype=np.int64))
    assert_same(np.asarray(x ** np.int64(2)), np.arange(1, 2000, dtype=np.int64) ** np.int64(2))
    with pytest.raises(ValueError, match="negative integer powers"):
        x ** np.int64(-1)
    with pytest.raises(ValueError, match="negative integer powers"):
        la.power(x, np.int64(-1))


def test_they_build_pending_nodes_in_lazy_mode():
    x = la.asarray(np.linspace(0, 1, 100_000))
    with la.config(mode="lazy"):
        y = (x * np.float64(2.0) + np.float32(1.0)) * np.sqrt(2.0)
        plan = la.explain(lambda: y.compute())
    assert len(plan.kernels) == 1
    assert_same(np.asarray(y), (np.linspace(0, 1, 100_000) * 2.0 + np.float32(1.0)) * np.sqrt(2.0))
