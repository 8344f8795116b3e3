"""NumPy's ufunc keywords on every native elementwise ufunc (issue 16 item 3): ``out=``,
``where=``, ``dtype=``, ``casting=`` (and ``signature=``, ``order=``, positional outputs), as
``la.<name>(...)`` and as ``numpy.<name>(lazy, ...)``, against NumPy: values, dtypes and
exception types. ``dtype=``/``signature=``/``casting=`` alone are native and fused; outputs
and ``where=`` are NumPy's own call on the computed operands, writing a LazyArray output in
its memory. ``la.<name>`` takes outputs as ``out=`` only (a positional one is a TypeError, as
tests/test_small_eager.py checks).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_same, pending

import lazyarr as la
from lazyarr._registry import ELEMENTWISE

UFUNCS = [op for op in ELEMENTWISE if isinstance(op.numpy, np.ufunc) and op.name != "clip"]
_INTEGER_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"}


def _operands(op):
    if op.name in _INTEGER_ONLY:
        return [np.array([1, 2, 3, 40], np.int64), np.array([3, 1, 2, 5], np.int64)][:op.nin]
    if op.name == "ldexp":
        return [np.array([1.5, -2.0, -0.0, 3.0]), np.array([3, -1, 2, 2000], np.int32)]
    return [np.array([1.5, -2.0, -0.0, 3.0]), np.array([0.5, 2.0, -1.0, np.nan])][:op.nin]


def _result_dtype(op, arrays):
    with np.errstate(all="ignore"):
        return op.numpy(*arrays).dtype


def _cases(op, arrays, lazy):
    """name -> (args, kwargs) of one call; ``lazy``: LazyArray operands and outputs."""
    wrap = la.asarray if lazy else np.asarray
    dt = _result_dtype(op, arrays)
    mask = wrap(np.array([True, False, True, False]))
    return {
        "out": ((), {"out": wrap(np.zeros(4, dt))}),
        "out_tuple": ((), {"out": (wrap(np.zeros(4, dt)),)}),
        "positional_out": ((wrap(np.zeros(4, dt)),), {}),
        "where_out": ((), {"out": wrap(np.full(4, 7, dt)), "where": mask}),
        "out_wrong_shape": ((), {"out": wrap(np.zeros(3, dt))}),
        "out_int8": ((), {"out": wrap(np.zeros(4, np.int8))}),
        "out_int8_unsafe": ((), {"out": wrap(np.zeros(4, np.int8)), "casting": "unsafe"}),
        "out_none": ((), {"out": None}),
        "dtype_float32": ((), {"dtype": np.float32}),
        "dtype_int32": ((), {"dtype": "int32"}),
        "dtype_int8_unsafe": ((), {"dtype": np.int8, "casting": "unsafe"}),
        "signature": ((), {"signature": (None,) * op.nin + (np.float32,)}),
        "dtype_and_signature": ((), {"dtype": np.float32, "signature": (None,) * op.nin + (None,)}),
        "casting_no": ((), {"casting": "no"}),
        "casting_bad": ((), {"casting": "sometimes"}),
        "order_F": ((), {"order": "F"}),
        "defaults": ((), {"out": None, "where": True, "casting": "same_kind", "order": "K",
                          "dtype": None, "subok": True}),
    }


def _run(fn, args, kwargs, nin):
    """(result values or exception type, the output arrays' values after the call)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(*args, **kwargs)
            value = np.asarray(r.to_numpy() if isinstance(r, la.LazyArray) else r)
    except Exception as exc:  # noqa: BLE001 - its type is compared with NumPy's
        value = type(exc)
    outs = kwargs.get("out")
    outs = outs if isinstance(outs, tuple) else (outs,) if outs is not None else tuple(args[nin:])
    return value, [np.asarray(o.to_numpy() if isinstance(o, la.LazyArray) else o) for o in outs]


def _same(got, want, what):
    (gv, gouts), (wv, wouts) = got, want
    if isinstance(wv, type):
        assert gv is wv, what
    else:
        assert not isinstance(gv, type), (what, gv)
        assert_same(gv, wv)
    for g, w in zip(gouts, wouts):
        assert_same(g, w)


@pytest.mark.parametrize("op", UFUNCS, ids=lambda op: op.name)
def test_ufunc_keywords_as_numpy(mode, op):
    arrays = _operands(op)
    np_cases = _cases(op, arrays, lazy=False)
    for lazy_input in (la.asarray, pending):
        for name, (extra, kwargs) in np_cases.items():
            want = _run(op.numpy, [*arrays, *extra], kwargs, op.nin)
            for label, fn in (("la", getattr(la, op.name)), ("np", op.numpy)):
                la_extra, la_kwargs = _cases(op, arrays, lazy=True)[name]
                got = _run(fn, [*map(lazy_input, arrays), *la_extra], la_kwargs, op.nin)
                if label == "la" and la_extra:    # la's positional outputs: the wrong argument count
                    assert got[0] is TypeError and not got[1][0].any()
                    continue
                _same(got, want, f"{label}.{op.name} {name}")


def test_dtype_and_casting_are_native_and_fused(kernels):
    a = np.linspace(-2, 2, 1001)
    x = la.asarray(a)
    with la.config(fallback="error"):
        y = la.add(la.sin(x), 1, dtype=np.float32)
        z = np.multiply(y, x, dtype=np.float32, casting="same_kind")
        w = la.sqrt(la.abs(z), signature=(np.float64, np.float64))
        assert isinstance(w, la.LazyArray) and not w.is_materialized
        got = w.to_numpy()
    assert len(kernels) == 1
    want = np.sqrt(np.abs(np.multiply(np.add(np.sin(a), 1, dtype=np.float32), a, dtype=np.float32)),
                   signature=(np.float64, np.float64))
    assert_same(got, want)
    with pytest.raises(np._core._exceptions._UFuncInputCastingError):
        la.add(x, x, dtype=np.int32)                     # float64 -> int32 is not same_kind
    with pytest.raises(ValueError, match="negative integer powers"):
        la.power(la.asarray(np.arange(3)), -1, dtype=np.int64)


def test_out_writes_a_lazy_array_in_its_memory_as_numpy():
    a = np.arange(6.0).reshape(2, 3)
    x = la.asarray(a.copy())
    view = x[0]                                   # a view sees the write
    before = x * 1                                # a pending reader keeps the old values
    r = la.multiply(x, 2, out=x)
    assert r is x
    assert_same(x.to_numpy(), a * 2)
    assert_same(view.to_numpy(), a[0] * 2)
    assert_same(before.to_numpy(), a)
    o = la.zeros(3)
    np.add(x[1], 1.0, out=o, where=la.asarray(np.array([True, False, True])))
    assert_same(o.to_numpy(), np.array([7.0, 0.0, 11.0]))
