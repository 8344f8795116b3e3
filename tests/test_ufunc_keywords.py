"""NumPy's ufunc keywords on every native elementwise ufunc (issue 16 item 3): ``out=``,
``where=``, ``dtype=``, ``casting=`` (and ``signature=``, ``order=``, positional outputs), as
``la.<name>(...)`` and as ``numpy.<name>(lazy, ...)``, against NumPy: values, dtypes and
exception types. ``dtype=``/``signature=``/``casting=``, a LazyArray ``out=`` and ``where=``
are native and fused (lazyarr/_ufunc_out.py: the write ``out[...] = where(mask, op, out)``);
a NumPy ``out=`` and ``order=`` are NumPy's own call on the computed operands. ``la.<name>``
takes outputs as ``out=`` only (a positional one is a TypeError, as tests/test_small_eager.py
checks).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_same, needs_cupy, pending

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


def _numpy_error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - compared with lazyarr's
        return type(exc), str(exc)
    raise AssertionError("NumPy raised nothing")


def test_out_and_where_are_lazyarr_writes_fused():
    """``out=``/``where=`` with a LazyArray output: the write ``out[...] = where(mask, op, out)``
    (lazyarr/_ufunc_out.py), no NumPy call (``fallback="error"`` would raise at one)."""
    a = np.linspace(-2, 2, 12)
    x, m = la.asarray(a), la.asarray(a > 0)
    with la.config(fallback="error"):
        c = la.asarray(np.full(12, 7.0))
        r = la.add(la.sin(x), 1, out=c, where=m)
        assert r is c
        got = c.to_numpy()
    want = np.full(12, 7.0)
    np.add(np.sin(a), 1, out=want, where=a > 0)
    assert_same(got, want)
    with la.config(fallback="error"):
        c = la.zeros(12, dtype=np.float32)
        assert la.multiply(x, x, out=(c,), casting="unsafe") is c       # a tuple of one
        assert_same(c.to_numpy(), np.multiply(a, a, out=np.zeros(12, np.float32), casting="unsafe"))
        p = x * 3                                          # a pending array as the output
        assert la.subtract(x, 1, out=p) is p
        assert_same(p.to_numpy(), a - 1)
        o = la.zeros((3, 12))                              # operands broadcast to out's shape
        la.add(x, la.asarray(np.arange(3.0)[:, None]), out=o)
        assert_same(o.to_numpy(), a + np.arange(3.0)[:, None])


def test_where_without_out_warns_as_numpy_and_is_right_where_true():
    a = np.array([1.0, 4.0, 9.0, -1.0])
    mask = a > 0
    with pytest.warns(UserWarning, match="'where' used without 'out'"):
        r = la.sqrt(la.asarray(a), where=la.asarray(mask))
    with pytest.warns(UserWarning, match="'where' used without 'out'"):
        want = np.sqrt(a, where=mask)
    assert r.shape == want.shape and r.dtype == want.dtype
    assert_same(r.to_numpy()[mask], want[mask])            # (NumPy's other values: uninitialized)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = la.add(la.asarray(a), 1, out=None, where=la.asarray(mask[None].repeat(2, 0)))
    assert r.shape == (2, 4)                               # where= takes part in broadcasting
    assert_same(r.to_numpy()[0][mask], a[mask] + 1)


@pytest.mark.parametrize("kwargs", [
    {"out": np.zeros(3)}, {"out": np.zeros(4, np.int8)}, {"where": np.ones(3, bool)},
    {"out": np.zeros((2, 4)), "where": np.ones(3, bool)}, {"out": np.zeros(4, np.int32), "casting": "no"},
], ids=["shape", "dtype", "where_shape", "out_and_where", "casting_no"])
def test_bad_outputs_raise_numpys_errors(kwargs):
    a = np.arange(4.0)
    want = _numpy_error(lambda: np.add(a, 1.0, **kwargs))
    lazy = {k: la.asarray(v) for k, v in kwargs.items() if k in ("out", "where")}
    with la.config(fallback="error"):
        got = _numpy_error(lambda: la.add(la.asarray(a), 1.0, **{**kwargs, **lazy}))
    assert got == want


def test_a_numpy_output_stays_numpys_call():
    """``out=`` a NumPy array: NumPy's own call writes it and returns it (documented)."""
    nd = np.zeros(4)
    r = la.add(la.asarray(np.arange(4.0)), 1, out=nd)
    assert r is nd and (nd == np.arange(4.0) + 1).all()


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy")
@pytest.mark.parametrize("mode", ["lazy", pytest.param("eager", marks=needs_cupy)])
def test_out_and_where_on_cuda(mode):
    a = np.linspace(-2, 2, 12)
    with la.config(mode=mode, device="cuda"):
        x, m = la.asarray(a), la.asarray(a > 0)
        c = la.asarray(np.full(12, 7.0))
        assert la.add(la.sin(x), 1, out=c, where=m) is c
        got = np.asarray(c)
        with pytest.raises(np._core._exceptions._UFuncOutputCastingError):
            la.add(x, 1, out=la.zeros(12, dtype=np.int8))
    want = np.full(12, 7.0)
    np.add(np.sin(a), 1, out=want, where=a > 0)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_where_leaves_out_the_floating_point_errors_of_the_elements_it_skips(mode):
    a = np.array([0.0, 4.0, -1.0, 1.0])
    mask = np.array([False, True, False, True])

    def messages(call, *args, **kwargs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = call(*args, **kwargs)
            if isinstance(r, la.LazyArray):
                r.to_numpy()
        return sorted(str(w.message) for w in caught)
    for fn, ops in ((np.log, (a,)), (np.divide, (a, a)), (np.arctanh, (a - 3,)),
                    (np.log, (np.ones(3)[:, None] * a,))):
        shape = np.broadcast_shapes(*(o.shape for o in ops))
        want = messages(fn, *ops, out=np.zeros(shape), where=mask)
        got = messages(getattr(la, fn.__name__), *map(la.asarray, ops), out=la.zeros(shape),
                       where=la.asarray(mask))
        assert got == want, fn
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.log(a, out=np.zeros(4), where=~mask)
        la.log(la.asarray(a), out=la.zeros(4), where=la.asarray(~mask)).to_numpy()
    assert [str(w.message) for w in caught][:2] == [str(w.message) for w in caught][2:] != []


def test_out_under_jit_runs_the_function_as_a_write():
    """A jitted function writing with ``out=`` runs as a plain function (la.jit's rule for
    writes: a JitWarning), with NumPy's values at every call."""
    f = la.jit(lambda a, c, m: la.multiply(la.sin(a), 2, out=c, where=m))
    mask = np.array([True, False, True, False])
    for k in range(3):
        a, c = np.arange(4.0) + k, la.full(4, 7.0)
        if k == 0:                        # (said at the first call)
            with pytest.warns(la.JitWarning, match="writes into an array"):
                assert f(la.asarray(a), c, la.asarray(mask)) is c
        else:
            assert f(la.asarray(a), c, la.asarray(mask)) is c
        want = np.full(4, 7.0)
        np.multiply(np.sin(a), 2, out=want, where=mask)
        assert_same(c.to_numpy(), want)
