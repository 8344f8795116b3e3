"""Regressions from adversarial rounds against NumPy 2 over the shape, indexing, joining,
creation, elementwise, reduction and FFT surface: each a case where lazyarr differed from
NumPy (a wrong alias, a keyword NumPy takes, NumPy's exception type, a value), or a deviation
docs/not-supported.rst names, pinned."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_same, pending

import lazyarr as la



# np.asarray(x) of a pending x (or of a view of one) is x's memory: a later write into x or
# into the view shows in it, as in NumPy (it was a copy, or memory x got only later).
ASARRAY_WRITES = {
    "asarray x, write x": (lambda x, v: x, lambda x, v: x.__setitem__(5, 99.0)),
    "asarray x, write view": (lambda x, v: x, lambda x, v: v.__setitem__(0, 99.0)),
    "asarray view, write view": (lambda x, v: v, lambda x, v: v.__setitem__(0, 99.0)),
    "asarray view, write x": (lambda x, v: v, lambda x, v: x.__setitem__(5, 99.0)),
    "asarray view, write it": (lambda x, v: v, lambda x, v: None),
}


@pytest.mark.parametrize("case", ASARRAY_WRITES, ids=str)
def test_asarray_of_a_pending_array_aliases_it(case, mode):
    exported, write = ASARRAY_WRITES[case]
    a = np.arange(6.0)
    x = pending(a)
    v = x[::-1]
    n = np.asarray(exported(x, v))
    write(x, v)
    if case == "asarray view, write it":
        n[0] = 99.0
    want = a.copy()
    want[5] = 99.0
    assert_same(x, want)
    assert_same(v, want[::-1])
    assert_same(n, want if exported(x, v) is x else want[::-1])


# x.astype takes ndarray.astype's casting= (NumPy's TypeError where the rule forbids the cast,
# ValueError for an unknown rule) and order= (the result's layout); np.clip / la.clip take
# numpy.clip's a_min=/a_max= keywords and raise its errors, where the array API's signature
# allows (CLIP_STANDARD); arange(stop=n) is NumPy's.
@pytest.mark.parametrize("dtype", ["i1", "f4", "c8", "?"], ids=str)
@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe", "bogus"])
def test_astype_casting_is_numpys(dtype, casting, mode):
    a = np.array([1.5, -2.0, 0.0])
    for x in (la.asarray(a), pending(a)):
        try:
            want = a.astype(dtype, casting=casting)
        except Exception as e:      # (NumPy's TypeError or ValueError, raised as NumPy's)
            with pytest.raises(type(e)):
                x.astype(dtype, casting=casting)
        else:
            assert_same(x.astype(dtype, casting=casting), want)


@pytest.mark.parametrize("order", ["K", "A", "C", "F"])
@pytest.mark.parametrize("transposed", [False, True])
def test_astype_order_is_numpys(order, transposed, mode):
    a = np.arange(6.0).reshape(2, 3)
    a = a.T if transposed else a
    for dtype in (np.float32, np.float64):       # (float64: a copy of the same dtype)
        want = a.astype(dtype, order=order)
        got = la.asarray(a).astype(dtype, order=order)
        assert_same(got, want)
        assert got.flags.c_contiguous == want.flags.c_contiguous
        assert got.flags.f_contiguous == want.flags.f_contiguous
    with pytest.raises(ValueError, match="order must be one of"):
        la.asarray(a).astype(np.float32, order="Z")


CLIP_CALLS = {
    "a_min a_max": lambda m, x: m.clip(x, a_min=0.5, a_max=3),
    "a_min only": lambda m, x: m.clip(x, a_min=0.5),
    "one positional": lambda m, x: m.clip(x, 0.5),
    "positional and min=": lambda m, x: m.clip(x, 0.5, 3, min=1),
    "min= max=": lambda m, x: m.clip(x, min=0.5, max=3),
    "max= only": lambda m, x: m.clip(x, max=3),
    "none": lambda m, x: m.clip(x),
}


#: where numpy.clip and the array API's clip(x, min=None, max=None) differ, the standard's
#: answer (the conformance suite's signature test; docs/array-api.rst)
CLIP_STANDARD = {"one positional": lambda x: np.clip(x, 0.5, None),
                 "positional and min=": TypeError}


@pytest.mark.parametrize("call", CLIP_CALLS, ids=str)
def test_clip_signature_is_numpys(call, mode):
    a = np.array([0.0, 1.0, 2.0, 4.0])
    fn = CLIP_CALLS[call]
    if call in CLIP_STANDARD:
        standard = CLIP_STANDARD[call]
        for x in (la.asarray(a), pending(a)):
            if standard is TypeError:
                with pytest.raises(TypeError):
                    fn(la, x)
            else:
                assert_same(fn(la, x), standard(a))
        return
    try:
        want = fn(np, a)
    except Exception as e:
        for x in (la.asarray(a), pending(a)):
            with pytest.raises(type(e)):
                fn(la, x)
            with pytest.raises(type(e)):
                fn(np, x)                       # (through __array_function__)
    else:
        for x in (la.asarray(a), pending(a)):
            assert_same(fn(la, x), want)
            assert_same(fn(np, x), want)


def test_arange_stop_keyword():
    assert_same(la.arange(stop=5), np.arange(stop=5))
    assert_same(la.arange(stop=5, step=2), np.arange(stop=5, step=2))
    assert_same(la.arange(2, stop=5), np.arange(2, stop=5))
    with pytest.raises(TypeError, match="requires stop"):
        la.arange(step=2)


def test_reshape_takes_numpy_24s_keywords():
    x = la.asarray(np.arange(6.0))
    assert_same(la.reshape(x, shape=(2, 3)), np.reshape(np.arange(6.0), shape=(2, 3)))
    with pytest.raises(TypeError):          # NumPy 2.4 removed newshape=
        np.reshape(np.arange(6.0), newshape=(2, 3))
    with pytest.raises(TypeError):
        la.reshape(x, newshape=(2, 3))


# la.asarray/la.array of a LazyArray with order= and copy=, as NumPy's: the array itself where
# its memory has the order already (copy=False too: it raised), a copy that keeps the layout
# (order "K": it was C-ordered), a copy in the order asked otherwise (on cuda: order= was
# ignored).
LAYOUT_CALLS = {
    "asarray C copy=False": lambda m, x: m.asarray(x, order="C", copy=False),
    "asarray F copy=False": lambda m, x: m.asarray(x, order="F", copy=False),
    "asarray copy=True": lambda m, x: m.asarray(x, copy=True),
    "asarray A copy=True": lambda m, x: m.asarray(x, order="A", copy=True),
    "asarray C": lambda m, x: m.asarray(x, order="C"),
    "asarray F": lambda m, x: m.asarray(x, order="F"),
    "array": lambda m, x: m.array(x),
    "array C": lambda m, x: m.array(x, order="C"),
    "array F": lambda m, x: m.array(x, order="F"),
}


def _layouts(device):
    a = np.arange(12.0).reshape(3, 4)
    for src in (a, a.T):
        for x in ((la.asarray(src, device=device),) if device == "cuda" else
                  (la.asarray(src), la.asarray(src[::-1].copy())[::-1], la.asarray(src) * 1)):
            yield src, x


def _check_layout(call, device):
    fn = LAYOUT_CALLS[call]
    for src, x in _layouts(device):
        # (the NumPy side: the same values, of x's layout)
        base = np.asarray(x.to_numpy() if device == "cuda" else x)
        if device == "cuda" and x.flags.f_contiguous and not x.flags.c_contiguous:
            base = np.asfortranarray(base)  # (CuPy's get() gives C order: keep x's layout)
        try:
            want = fn(np, base)
        except ValueError:
            with pytest.raises(ValueError):
                fn(la, x)
            continue
        got = fn(la, x)
        assert_same(got, want)
        assert (got.flags.c_contiguous, got.flags.f_contiguous) == \
            (want.flags.c_contiguous, want.flags.f_contiguous), call
        if device == "cpu":
            assert np.shares_memory(np.asarray(got), np.asarray(x)) == np.shares_memory(want, base)


@pytest.mark.parametrize("call", LAYOUT_CALLS, ids=str)
def test_asarray_order_and_copy_of_a_lazyarray(call, mode):
    _check_layout(call, "cpu")


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")
@pytest.mark.parametrize("call", LAYOUT_CALLS, ids=str)
def test_asarray_order_on_cuda(call):
    _check_layout(call, "cuda")


# order= as NumPy reads it: one letter in either case, None the function's default; another
# string a ValueError, another type a TypeError (lowercase letters and None raised).
ORDER_CALLS = {
    "x.copy": lambda m, x, o: x.copy(order=o),
    "copy": lambda m, x, o: m.copy(x, order=o),
    "x.astype": lambda m, x, o: x.astype(np.float32, order=o),
    "asarray": lambda m, x, o: m.asarray(x, order=o),
    "array": lambda m, x, o: m.array(x, order=o),
    "zeros_like": lambda m, x, o: m.zeros_like(x, order=o),
    "full_like": lambda m, x, o: m.full_like(x, 2.0, order=o),
    "eye": lambda m, x, o: m.eye(3, order=o),
}


@pytest.mark.parametrize("order", ["c", "f", "a", "k", None, "Fortran", 1.5], ids=repr)
@pytest.mark.parametrize("call", ORDER_CALLS, ids=str)
def test_order_letters_as_numpy_reads_them(call, order):
    a = np.arange(12.0).reshape(3, 4).T
    fn = ORDER_CALLS[call]
    try:
        want = fn(np, a, order)
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e)):
            fn(la, la.asarray(a), order)
        return
    got = fn(la, la.asarray(a), order)
    assert_same(got, want)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == \
        (want.flags.c_contiguous, want.flags.f_contiguous)


# keepdims as NumPy reads it: the ufunc reductions (sum, max, any, mean, std, nansum,
# count_nonzero, norm along one axis) as a C int (an OverflowError past its range: 2**70 and
# 2**31 were taken as True), argmax/argmin by its truth (a float or None raised TypeError).
KEEPDIMS_CALLS = {
    "sum": lambda m, x, k: m.sum(x, axis=1, keepdims=k),
    "sum all": lambda m, x, k: m.sum(x, keepdims=k),
    "x.max": lambda m, x, k: x.max(1, keepdims=k),
    "any": lambda m, x, k: m.any(x, axis=1, keepdims=k),
    "mean": lambda m, x, k: m.mean(x, 1, keepdims=k),
    "std": lambda m, x, k: m.std(x, axis=1, keepdims=k),
    "nansum": lambda m, x, k: m.nansum(x, axis=1, keepdims=k),
    "count_nonzero": lambda m, x, k: m.count_nonzero(x, axis=1, keepdims=k),
    "argmax": lambda m, x, k: m.argmax(x, axis=1, keepdims=k),
    "argmin": lambda m, x, k: m.argmin(x, keepdims=k),
    "norm axis": lambda m, x, k: m.linalg.norm(x, axis=1, keepdims=k),
    "norm inf axis": lambda m, x, k: m.linalg.norm(x, np.inf, axis=1, keepdims=k),
    "norm": lambda m, x, k: m.linalg.norm(x, keepdims=k),
    "median": lambda m, x, k: m.median(x, axis=1, keepdims=k),
}


@pytest.mark.parametrize("keepdims", [2**70, 2**63, 2**31, -2**31 - 1, 2**31 - 1, -1,
                                      np.array(2**40), np.int8(3), 1.0, None, "yes"], ids=repr)
@pytest.mark.parametrize("call", KEEPDIMS_CALLS, ids=str)
def test_keepdims_as_numpy_reads_it(call, keepdims, mode):
    a = np.arange(6.0).reshape(2, 3)
    fn = KEEPDIMS_CALLS[call]
    try:
        want = fn(np, a, keepdims)
    except Exception as e:
        for x in (la.asarray(a), pending(a)):
            with pytest.raises(type(e)):
                fn(la, x, keepdims)
        return
    for x in (la.asarray(a), pending(a)):
        assert_same(fn(la, x, keepdims), want)


# tri/tril/triu take what NumPy's tri passes to its two aranges (of its small int dtypes): a
# float k, N or M, with NumPy's values (k=0.5 cast per arange value: all ones) and errors
# (k=2**70, -2**63: OverflowError). A float raised TypeError; k=2**70 and -2**63 of tri gave
# an object-dtype TypeError and all zeros.
TRI_CALLS = {
    "tril": lambda m, x, k: m.tril(x, k),
    "triu": lambda m, x, k: m.triu(x, k=k),
    "tri": lambda m, x, k: m.tri(3, 4, k),
    "tri float N": lambda m, x, k: m.tri(3.0, k=k, dtype=int),
    "tri float M": lambda m, x, k: m.tri(3, 2.5, k=k),
}


@pytest.mark.parametrize("k", [1, -2, 1.0, 1.5, -0.5, 0.5, 2.5, np.float32(-1.5), True,
                               np.int8(1), np.array(1.5), 2**63, 2**70, -2**63, 1j, None, "1"],
                         ids=repr)
@pytest.mark.parametrize("call", TRI_CALLS, ids=str)
def test_tri_k_as_numpy_takes_it(call, k, mode):
    a = np.arange(12.0).reshape(3, 4)
    fn = TRI_CALLS[call]
    try:
        want = fn(np, a, k)
    except Exception as e:
        for x in (la.asarray(a), pending(a)):
            with pytest.raises(type(e)):
                fn(la, x, k)
        return
    for x in (la.asarray(a), pending(a)):
        assert_same(fn(la, x, k), want)


# A bool axis as NumPy takes it: stack's normalize_axis_index takes a Python bool as an int
# (np.True_ not), argsort, cumulative_sum/prod and norm's ufunc reductions do not (stack
# raised; argsort, cumulative_sum and norm(axis=(True,)) took True as axis 1).
BOOL_AXIS_CALLS = {
    "stack": lambda m, x, ax: m.stack([x, x + 1], axis=ax),
    "concatenate": lambda m, x, ax: m.concatenate([x, x], axis=ax),
    "argsort": lambda m, x, ax: m.argsort(x, ax),
    "sort": lambda m, x, ax: m.sort(x, ax),
    "cumulative_sum": lambda m, x, ax: m.cumulative_sum(x, axis=ax),
    "cumulative_prod tuple": lambda m, x, ax: m.cumulative_prod(x, axis=(ax,)),
    "norm": lambda m, x, ax: m.linalg.norm(x, axis=(ax,)),
    "norm 1": lambda m, x, ax: m.linalg.norm(x, 1, axis=(ax,)),
    "norm fro": lambda m, x, ax: m.linalg.norm(x, axis=(ax, 0)),
    "norm inf": lambda m, x, ax: m.linalg.norm(x, np.inf, axis=(0, ax)),
    "vector_norm": lambda m, x, ax: m.linalg.vector_norm(x, axis=ax),
    "sum": lambda m, x, ax: m.sum(x, axis=ax),
}


@pytest.mark.parametrize("axis", [True, False, np.True_, np.False_], ids=repr)
@pytest.mark.parametrize("call", BOOL_AXIS_CALLS, ids=str)
def test_a_bool_axis_as_numpy_takes_it(call, axis, mode):
    a = np.arange(6.0).reshape(2, 3)[:, ::-1]
    fn = BOOL_AXIS_CALLS[call]
    try:
        want = fn(np, a, axis)
    except Exception as e:
        for x in (la.asarray(a), pending(a)):
            with pytest.raises(type(e)):
                fn(la, x, axis)
        return
    for x in (la.asarray(a), pending(a)):
        assert_same(fn(la, x, axis), want)


# The layout of a join (docs/not-supported.rst, the first row): of computed operands, NumPy's
# (its stride permutation of the operands: F-ordered for F-ordered operands); with a pending
# operand, C-contiguous (computed straight into its part of a C-ordered result).
JOIN_LAYOUT_CALLS = {
    "concatenate": lambda m, x, y: m.concatenate([x.T, y.T]),
    "concatenate axis 1": lambda m, x, y: m.concatenate([x.T, y.T], axis=1),
    "stack": lambda m, x, y: m.stack([x.T, y.T]),
    "stack axis 2": lambda m, x, y: m.stack([x.T, y.T], axis=2),
    "vstack": lambda m, x, y: m.vstack([x.T, y.T]),
    "hstack": lambda m, x, y: m.hstack([x.T, y.T]),
    "column_stack": lambda m, x, y: m.column_stack([x.T, y.T]),
    "concatenate mixed": lambda m, x, y: m.concatenate([x.T, y.T.copy()]),
}


@pytest.mark.parametrize("call", JOIN_LAYOUT_CALLS, ids=str)
def test_the_layout_of_a_join(call, mode):
    a = np.arange(12.0).reshape(3, 4)
    fn = JOIN_LAYOUT_CALLS[call]
    want = fn(np, a, a * 2)
    computed = fn(la, la.asarray(a), la.asarray(a * 2))
    assert_same(computed, want)
    assert computed.strides == want.strides
    with la.config(eager_max_size=0):
        joined = fn(la, pending(a), pending(a * 2))
    assert_same(joined, want)
    if la.get_config().mode == "eager":     # (no operand is pending: NumPy's call)
        assert joined.strides == want.strides
    else:
        assert joined.flags.c_contiguous


# x op= python_int: NumPy converts the int to its loop's dtype before it checks the output's
# cast, so a bool x with an int past int64 is its OverflowError (a pending bool x raised the
# cast's UFuncTypeError); an int that fits keeps the cast error (bool **= -1).
@pytest.mark.parametrize("value", [2**64, 2**63, -2**63 - 1, 2**100, 300, -1, 1], ids=repr)
@pytest.mark.parametrize("op", ["+", "*", "//", "&", "<<", "**"])
@pytest.mark.parametrize("dtype", ["?", "u1", "i8"])
def test_inplace_with_a_python_int_as_numpy(dtype, op, value, mode):
    a = np.array([1, 0, 1, 1]).astype(dtype)

    def apply(x):
        ns = {"x": x, "v": value}
        exec(f"x {op}= v", ns)
        return ns["x"]
    try:
        want = apply(a.copy())
    except Exception as e:
        for x in (la.asarray(a), pending(a)):
            with pytest.raises(type(e)):
                apply(x)
        return
    for x in (la.asarray(a), pending(a)):
        assert_same(apply(x), want)


# round(x, decimals) scales by NumPy's power of ten (1e9 times 10, n - 9 times: not 10.0**n,
# which differs in the last bit from n = 23 on, and so did thousands of rounded values), inf
# past 308 (all NaN: it raised OverflowError); decimals is a C int (2**31: OverflowError, also
# for integers, which were copied).
@pytest.mark.parametrize("decimals", [0, 3, 22, 23, 31, 44, 59, 200, 308, 309, 400, -23, -309,
                                      2**31, -2**31 - 1, 2**70], ids=repr)
@pytest.mark.parametrize("dtype", ["f8", "f4", "f2", "i8", "u1"])
def test_round_scales_as_numpy(dtype, decimals, mode):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(512) * 10.0 ** rng.integers(-40, 5, 512)
    a[:4] = [np.nan, np.inf, -0.0, 2.5e-23]
    a = a.astype(dtype) if dtype[0] == "f" else rng.integers(0, 100, 512).astype(dtype)
    with np.errstate(all="ignore"):
        try:
            want = np.round(a, decimals)
        except Exception as e:
            for x in (la.asarray(a), pending(a)):
                with pytest.raises(type(e)):
                    la.round(x, decimals)
            return
        for x in (la.asarray(a), pending(a)):
            assert_same(la.round(x, decimals), want)
            assert_same(x.round(decimals), want)


# format(x, spec) as ndarray.__format__: a 0-d array (an element x[i], a reduction's result)
# formats its NumPy scalar, also for an empty spec (f"{x[0]}" of float32 0.1 is the Python
# float's 0.10000000149011612; it was str's 0.1); another array its str, or NumPy's TypeError.
@pytest.mark.parametrize("spec", ["", ">12", ".3f", "e", "+", "g", "x"], ids=repr)
@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "c8", "?", "i1", "u8"])
def test_format_as_numpy(dtype, spec, mode):
    a = np.array([0.1, 65504.0, -3.0]).astype(dtype)
    x = la.asarray(a)
    for want_of, got_of in ((a[0], x[0]), (np.sum(a), la.sum(x)), (np.sum(a), la.sum(pending(a))),
                            (a[:1].reshape(()), la.reshape(x[:1], ())), (a, x), (a, pending(a))):
        try:
            want = format(want_of, spec)
        except Exception as e:
            with pytest.raises(type(e)):
                format(got_of, spec)
            continue
        assert format(got_of, spec) == want


# nanmean of a float array with a dtype= that is not inexact: NumPy's TypeError, as nanvar's
# (it gave the int8/bool/uint8 mean); an inexact dtype= (complex too) is taken.
@pytest.mark.parametrize("dtype", ["i1", "?", "u1", "i8", "f2", "f4", "c8"])
@pytest.mark.parametrize("fn", ["nanmean", "nanvar", "nanstd", "nansum"])
def test_nan_functions_dtype_as_numpy(fn, dtype, mode):
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan]])
    try:
        want = getattr(np, fn)(a, axis=1, dtype=dtype)
    except TypeError:
        for x in (la.asarray(a), pending(a)):
            with pytest.raises(TypeError, match="must be inexact"):
                getattr(la, fn)(x, axis=1, dtype=dtype)
        return
    for x in (la.asarray(a), pending(a)):
        assert_same(getattr(la, fn)(x, axis=1, dtype=dtype), want, exact=fn == "nansum")


# var/std of complex data with dtype=: NumPy's (the mean in that dtype, of the real parts for a
# real one, then the complex deviations' squares): the values of the cast data's variance came
# out (1.56 where NumPy gives 2.22), and a complex dtype's NaN had a 0 imaginary part.
@pytest.mark.parametrize("dtype", ["f4", "f8", "f2", "c8", "c16"])
@pytest.mark.parametrize("fn", ["var", "std"])
def test_complex_var_with_a_dtype_as_numpy(fn, dtype, mode):
    a = np.array([[1j, 2, np.nan], [1, 1 + 1j, -1], [3 - 1j, 0.5j, 2]], np.complex64)
    for axis in (0, None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(np, fn)(a, axis=axis, dtype=dtype)
            for x in (la.asarray(a), pending(a)):
                for got in (getattr(la, fn)(x, axis=axis, dtype=dtype),
                            getattr(x, fn)(axis=axis, dtype=dtype)):
                    assert_same(got, want)
    b = np.array([[0.5, 6e4, -3], [np.nan, 1, 2]], np.float16)     # (a complex dtype of reals)
    if np.dtype(dtype).kind == "c":
        for x in (la.asarray(b), pending(b)):
            assert_same(getattr(la, fn)(x, axis=0, dtype=dtype),
                        getattr(np, fn)(b, axis=0, dtype=dtype))


# The FFTs' n (and s) as NumPy's _raw_fft takes it: a bool is no output length (fft(x, n=True):
# TypeError; it was n=1), though rfft's n // 2 + 1 of one is (rfft(x, n=np.True_) is n=1: it
# raised).
@pytest.mark.parametrize("n", [True, np.True_, False, np.int8(3), 3.0, 5], ids=repr)
@pytest.mark.parametrize("fn", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "rfftn",
                                "irfftn", "rfft2"])
def test_fft_points_as_numpy(fn, n, mode):
    a = np.arange(8.0).reshape(2, 4)
    for s in ([(n, 2), (2, n)] if fn[-1] in "n2" else [n]):
        call = (lambda m, x: getattr(m.fft, fn)(x, s=s, axes=(0, 1))) if fn[-1] in "n2" else \
            (lambda m, x: getattr(m.fft, fn)(x, n=s))
        try:
            want = call(np, a)
        except Exception as e:
            for x in (la.asarray(a), pending(a)):
                with pytest.raises(type(e)):
                    call(la, x)
            continue
        for x in (la.asarray(a), pending(a)):
            assert_same(call(la, x), want, exact=False)


# var/std/nanvar/nanstd with an array ddof (or correction): NumPy's (the array broadcasts
# against the counts: ddof=np.array([1]) gives shape (1,)); lazy mode raised "unhashable
# type: 'numpy.ndarray'".
@pytest.mark.parametrize("ddof", [np.array(1), np.array([1]), np.array([0, 1, 2, 3]),
                                  np.array([[1], [2], [0]]), np.array(1.5)], ids=repr)
@pytest.mark.parametrize("fn", ["var", "std", "nanvar", "nanstd"])
def test_array_ddof_as_numpy(fn, ddof, mode):
    a = np.arange(12.0).reshape(3, 4)
    a[1, 1] = np.nan
    for axis in (None, 0, 1):
        for key in ("ddof", "correction"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    want = getattr(np, fn)(a, axis=axis, **{key: ddof})
                except Exception as e:
                    for x in (la.asarray(a), pending(a)):
                        with pytest.raises(type(e)):
                            getattr(la, fn)(x, axis=axis, **{key: ddof})
                    continue
                for x in (la.asarray(a), pending(a)):
                    assert_same(getattr(la, fn)(x, axis=axis, **{key: ddof}), want)


# An element times a list, tuple, str or bytes is NumPy's scalar's: the sequence's repetition
# (np.int64(2) * [1] is [1, 1]; a float's is the sequence's TypeError), where lazyarr gave an
# array (the 0-d array's elementwise product, which a reduction's 0-d result still gives).
@pytest.mark.parametrize("dtype", ["i8", "u1", "i1", "f8", "?", "c8"])
@pytest.mark.parametrize("expr", ["x[0] * [1, 2]", "[1, 2] * x[0]", "x[0] * (1,)", "x[0] * 'ab'",
                                  "x[0] * b'a'", "x[0] * range(3)", "x[0] + [1, 2]",
                                  "s *= [1, 2]", "s *= 'ab'"])
def test_an_element_times_a_sequence_as_numpy(dtype, expr, mode):
    a = np.array([2, 3]).astype(dtype)

    def run(x):
        ns = {"x": x, "s": x[0]}
        exec(f"r = {expr}" if "=" not in expr else f"{expr}\nr = s", ns)
        return ns["r"]
    try:
        want = run(a)
    except TypeError:
        for x in (la.asarray(a), pending(a)):
            with pytest.raises(TypeError):
                run(x)
        return
    for x in (la.asarray(a), pending(a)):
        got = run(x)
        if isinstance(want, np.ndarray):
            assert_same(got, want)
        else:
            assert type(got) is type(want) and got == want
