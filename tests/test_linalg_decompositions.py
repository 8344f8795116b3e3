"""``la.linalg``'s decompositions and solvers, lazyarr's own (lazyarr/_functions/
_decompositions.py), against NumPy 2.4's: result types (the named tuples), dtypes and shapes
exactly, values to rounding (linear algebra rounds differently between LAPACK builds and
cuSOLVER: 32-bit results to ~1e-4, 64-bit to ~1e-10, eigen- and singular vectors compared by
what they reconstruct, as NumPy's own tests do), 2-D and stacked inputs, empty matrices and
stacks, pending operands, NumPy's exceptions with their messages, ``numpy.linalg.<name>(lazy)``,
``la.explain``'s records and ``la.jit``. The cuda calls (CuPy's functions made NumPy's) run
here on NumPy standing in for CuPy; the ``gpu`` tests run them on the (simulated) device."""
from __future__ import annotations

import math
import re
import sys
import types
import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _devices, _fallback, _node, _numpy_names
from lazyarr._functions import _decompositions as D

NAMES = ["cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq",
         "matrix_power", "matrix_rank", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
         "cond", "multi_dot", "tensorinv", "tensorsolve"]
FLOATS = [np.float32, np.float64, np.complex64, np.complex128]
DTYPES = FLOATS + [np.int64]
_NEEDS_CUDA = pytest.mark.skipif(not la.cuda_available(),
                                 reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")


# ----------------------------------------------------------------------------- data, comparison
def _data(dtype, shape, seed=0, kind="general"):
    """A matrix (stack) of ``dtype``: ``general`` well conditioned when square (the diagonal
    raised), ``hermitian``, ``spd`` (Hermitian positive definite), ``rect`` as drawn."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        a = rng.integers(-4, 5, shape).astype(np.float64)
    else:
        a = rng.standard_normal(shape)
        if dtype.kind == "c":
            a = a + 1j * rng.standard_normal(shape)
    n = shape[-1]
    if kind in ("hermitian", "spd"):
        a = a + np.conj(np.swapaxes(a, -1, -2))
        if kind == "spd":
            a = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    elif kind == "general" and len(shape) > 1 and shape[-2] == n:
        a = a + 2 * n * np.eye(n)
    return a.astype(dtype)


def _tol(dtype):
    """(rtol, atol scale) for results of ``dtype``: a 32-bit one rounds at ~1e-7 and NumPy's
    computes it in double precision, cuSOLVER in single."""
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return (2e-4, 2e-4) if single else (1e-10, 1e-10)


def _host(x):
    return x.to_numpy() if isinstance(x, la.LazyArray) else np.asarray(x)


def _close(got, want, err=""):
    got, want = _host(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), (err, got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    if want.size:
        rtol, atol = _tol(want.dtype)
        scale = float(np.max(np.abs(want[np.isfinite(want)]), initial=1.0))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale, err_msg=err)


def _same(got, want, err=""):
    """``got`` (lazyarr's) as ``want`` (NumPy's): the same result type (a named tuple's
    class, a tuple, a LazyArray for an array or NumPy scalar), then each array's dtype, shape
    and values to rounding."""
    if isinstance(want, tuple):
        assert type(got) is type(want), (err, type(got), type(want))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, err)
        return
    if isinstance(want, (np.ndarray, np.generic)):
        assert isinstance(got, la.LazyArray), (err, type(got))
    else:
        assert type(got) is type(want), (err, type(got), type(want))
    _close(got, want, err)


def _both(call, a, *more, pending=True, **kw):
    """``call(la, ...)`` and ``call(np, ...)`` of the same data: lazyarr's operands pending
    (``x * 1``, a fused kernel's result) unless ``pending`` is False."""
    lazy = [la.asarray(v) * 1 if pending else la.asarray(v) for v in (a, *more)]
    return call(la, *lazy, **kw), call(np, a, *more, **kw)


def _check(call, *arrays, **kw):
    got, want = _both(call, *arrays, **kw)
    _same(got, want, str(kw))
    return got


def _numpy_error(call, *arrays, **kw):
    """NumPy's exception for ``call``; lazyarr must raise the same type and message."""
    try:
        call(np, *arrays, **kw)
    except Exception as e:   # noqa: BLE001
        return e
    raise AssertionError("NumPy raised nothing")                     # pragma: no cover


def _raises_as_numpy(call, *arrays, **kw):
    e = _numpy_error(call, *arrays, **kw)
    with pytest.raises(type(e), match=f"^{re.escape(str(e))}$"):
        call(la, *[la.asarray(v) * 1 for v in arrays], **kw)


def _reconstructs_svd(result, a):
    u, s, vh = (_host(v) for v in result)
    k = s.shape[-1]
    back = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    rtol, atol = _tol(s.dtype)
    np.testing.assert_allclose(back, a, rtol=rtol, atol=atol * max(1.0, np.abs(a).max()) * 10)


# ----------------------------------------------------------------------------- the namespace
def test_every_name_is_native_and_numpy_reaches_it():
    assert set(NAMES) <= la.linalg.NATIVE
    for name in NAMES:
        assert _numpy_names.status(f"linalg.{name}") == ("native", "")
        fn = getattr(la.linalg, name)
        # (the public function hands another library's arrays to NumPy: lazyarr/_dispatch.py)
        assert fn.__wrapped__ is D.FUNCTIONS[name] and not isinstance(fn, _fallback.FallbackFunction)
    assert _numpy_names.status("linalg") == ("native", "a namespace: every function lazyarr's")
    a = _data(np.float64, (3, 3))
    for name, call in (("inv", lambda m, x: m.linalg.inv(x)),
                       ("eigh", lambda m, x: m.linalg.eigh(x + x.T)),
                       ("multi_dot", lambda m, x: m.linalg.multi_dot([x, x, x])),
                       ("pinv", lambda m, x: m.linalg.pinv(x, rtol=None))):
        got = call(np, la.asarray(a) * 1)        # numpy.linalg.<name>(lazy): __array_function__
        _same(got, call(np, a), name)


def test_signatures_are_numpys():
    import inspect
    for name in NAMES:
        ours = inspect.signature(getattr(la.linalg, name))
        theirs = inspect.signature(getattr(np.linalg, name))
        assert list(ours.parameters) == list(theirs.parameters), name
        for p, q in zip(ours.parameters.values(), theirs.parameters.values()):
            assert p.kind == q.kind, (name, p.name)


# ----------------------------------------------------------------------------- each function
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 1, 3, 3)], ids=str)
def test_inv_det_slogdet(dtype, shape):
    a = _data(dtype, shape)
    _check(lambda m, x: m.linalg.inv(x), a)
    _check(lambda m, x: m.linalg.det(x), a)
    _check(lambda m, x: m.linalg.slogdet(x), a)
    _check(lambda m, x: m.linalg.matrix_power(x, -2), a)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_solve(dtype):
    a, a3 = _data(dtype, (4, 4)), _data(dtype, (3, 4, 4), 1)
    for aa, b in ((a, _data(dtype, (4,), 2)), (a, _data(dtype, (4, 2), 3)),
                  (a3, _data(dtype, (4,), 4)),          # one vector for every matrix
                  (a3, _data(dtype, (3, 4, 2), 5)),
                  (a3, _data(dtype, (1, 4, 3), 6)),     # NumPy 2: the stacks broadcast
                  (a3, _data(dtype, (2, 1, 4, 1), 7)),
                  (a, _data(dtype, (5, 4, 2), 8)),
                  (a, _data(dtype, (4, 0), 9))):        # no column
        _check(lambda m, x, y: m.linalg.solve(x, y), aa, b)
    _check(lambda m, x, y: m.linalg.solve(x, y), a, _data(np.float32, (4, 2)))   # mixed dtypes
    _check(lambda m, x, y: m.linalg.tensorsolve(x, y), _data(dtype, (6, 2, 3), 10),
           _data(dtype, (6,), 11))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cholesky(dtype):
    for shape in ((4, 4), (3, 4, 4)):
        a = _data(dtype, shape, kind="spd")
        lower = _check(lambda m, x: m.linalg.cholesky(x), a)
        upper = _check(lambda m, x: m.linalg.cholesky(x, upper=True), a)
        np.testing.assert_allclose(_host(upper), np.conj(np.swapaxes(_host(lower), -1, -2)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_eigh_and_eigvalsh(dtype):
    for shape in ((5, 5), (2, 3, 3)):
        a = _data(dtype, shape, kind="hermitian")
        for uplo in ("L", "U", "l"):
            _check(lambda m, x: m.linalg.eigh(x, uplo), a)
            _check(lambda m, x: m.linalg.eigvalsh(x, UPLO=uplo), a)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_eig_and_eigvals(dtype):
    """Complex eigenvalues (a general real matrix), and real ones (a symmetric real matrix:
    NumPy's results are real then)."""
    for kind in ("general", "hermitian"):
        for shape in ((5, 5), (2, 3, 3)):
            a = _data(dtype, shape, kind=kind)
            _check(lambda m, x: m.linalg.eig(x), a)
            _check(lambda m, x: m.linalg.eigvals(x), a)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3)], ids=str)
def test_svd_svdvals_qr(dtype, shape):
    a = _data(dtype, shape, kind="rect")
    for full in (True, False):
        _check(lambda m, x: m.linalg.svd(x, full_matrices=full), a)
    _check(lambda m, x: m.linalg.svd(x, compute_uv=False), a)
    _check(lambda m, x: m.linalg.svdvals(x), a)
    for mode in ("reduced", "complete", "r", "raw"):
        _check(lambda m, x: m.linalg.qr(x, mode=mode), a)
    if shape[-1] == shape[-2]:
        h = _data(dtype, shape, kind="hermitian")
        _check(lambda m, x: m.linalg.svd(x, hermitian=True), h)
        _check(lambda m, x: m.linalg.svd(x, compute_uv=False, hermitian=True), h)


def test_qr_deprecated_modes():
    a = _data(np.float64, (5, 3))
    for mode in ("full", "economic"):
        with pytest.warns(DeprecationWarning) as record:
            got = la.linalg.qr(la.asarray(a), mode)
        assert record[0].filename == __file__            # the user's line
        with pytest.warns(DeprecationWarning):
            want = np.linalg.qr(a, mode)
        _same(got, want)
    with pytest.raises(ValueError, match="^Unrecognized mode 'bad'$"):
        la.linalg.qr(la.asarray(a), "bad")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_lstsq(dtype):
    rank_one = np.outer(np.arange(1.0, 6), [1.0, 2, 3]).astype(dtype)
    for a, b, rcond in ((_data(dtype, (6, 3), kind="rect"), _data(dtype, (6,), 1), None),
                        (_data(dtype, (6, 3), kind="rect"), _data(dtype, (6, 2), 1), None),
                        (_data(dtype, (3, 5), kind="rect"), _data(dtype, (3,), 2), None),
                        (rank_one, _data(dtype, (5,), 3), None),
                        (rank_one, _data(dtype, (5, 2), 3), 0.5),
                        (_data(dtype, (6, 3), kind="rect"), _data(dtype, (6, 0), 4), -1)):
        _check(lambda m, x, y: m.linalg.lstsq(x, y, rcond=rcond), a, b)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_pinv_matrix_rank_cond(dtype):
    full = _data(dtype, (5, 3), kind="rect")
    deficient = np.stack([np.outer(np.arange(1.0, 5), np.arange(1.0, 4)),
                          _data(np.float64, (4, 3), 7, kind="rect")]).astype(dtype)
    for a in (full, deficient):
        _check(lambda m, x: m.linalg.pinv(x), a)
        _check(lambda m, x: m.linalg.pinv(x, 1e-3), a)
        _check(lambda m, x: m.linalg.matrix_rank(x), a)
        _check(lambda m, x: m.linalg.matrix_rank(x, rtol=0.3), a)
        _check(lambda m, x: m.linalg.matrix_rank(x, tol=1.0), a)
        for p in (None, 2, -2):
            _check(lambda m, x: m.linalg.cond(x, p), a)
    if np.dtype(dtype).kind in "fc":
        _check(lambda m, x: m.linalg.pinv(x, rtol=None), full)
        _check(lambda m, x: m.linalg.pinv(x, rtol=np.array([0.1, 0.9])), deficient)
        _check(lambda m, x: m.linalg.matrix_rank(x, rtol=np.array([0.1, 0.9])), deficient)
        _check(lambda m, x: m.linalg.matrix_rank(x, tol=np.array([1e-3, 10.0])), deficient)
    _check(lambda m, x: m.linalg.matrix_rank(x), np.zeros((3, 3), dtype))
    _check(lambda m, x: m.linalg.pinv(x), np.ones((3, 3), dtype))
    h = _data(dtype, (2, 4, 4), kind="hermitian")
    _check(lambda m, x: m.linalg.pinv(x, hermitian=True), h)
    _check(lambda m, x: m.linalg.matrix_rank(x, hermitian=True), h)
    square = _data(dtype, (2, 4, 4))
    for p in (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc"):
        _check(lambda m, x: m.linalg.cond(x, p), square)
    assert la.linalg.matrix_rank(la.asarray([0.0, 0.0])) == 0        # a Python int, as NumPy's
    assert type(la.linalg.matrix_rank(la.asarray([0.0, 2.0]))) is int


def test_cond_of_singular_matrices_is_inf():
    s = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
    for p in (None, 1, math.inf, "fro", -2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            _check(lambda m, x: m.linalg.cond(x, p), s)
    _check(lambda m, x: m.linalg.cond(x, 1), np.zeros((2, 2)))


def test_matrix_power_multi_dot_tensorinv():
    a, i = _data(np.float64, (2, 3, 3)), _data(np.int64, (3, 3))
    for n in (0, 1, 2, 3, 5, 6, -1, -3):
        _check(lambda m, x: m.linalg.matrix_power(x, n), a)
        _check(lambda m, x: m.linalg.matrix_power(x, n), i)
    x = la.asarray(a)
    assert la.linalg.matrix_power(x, 1) is x                      # ``a`` itself, as NumPy's
    _check(lambda m, x: m.linalg.matrix_power(x, np.int8(2)), a)
    shapes = [(4, 6), (6, 2), (2, 7), (7, 3), (3, 5)]
    mats = [_data(np.float64, s, k, kind="rect") for k, s in enumerate(shapes)]
    for arrays in (mats[:2], mats[:3], mats, [mats[0][0], *mats[1:4], mats[4][:, 0]],
                   [mats[0][0], *mats[1:3]], [mats[1], mats[2], mats[3][:, 0]]):
        got = la.linalg.multi_dot([la.asarray(v) * 1 for v in arrays])
        _same(got, np.linalg.multi_dot(arrays))
    t = _data(np.float64, (24, 24)).reshape(4, 6, 8, 3)
    _check(lambda m, x: m.linalg.tensorinv(x), t)
    _check(lambda m, x: m.linalg.tensorinv(x, ind=1), _data(np.float64, (24, 24)).reshape(24, 8, 3))
    _check(lambda m, x, y: m.linalg.tensorsolve(x, y, axes=(0, 2)),
           _data(np.float64, (36, 36), 1).reshape(6, 6, 6, 6),
           _data(np.float64, (6, 6), 2, kind="rect"))


def test_multi_dot_out_writes_the_array():
    mats = [_data(np.float64, s, k, kind="rect") for k, s in enumerate([(3, 4), (4, 5), (5, 2)])]
    out = la.zeros((3, 2))
    assert la.linalg.multi_dot([la.asarray(m) for m in mats], out=out) is out
    np.testing.assert_allclose(out.to_numpy(), np.linalg.multi_dot(mats))


def test_empty_matrices_and_stacks():
    """NumPy's answers for 0x0 matrices (det 1, slogdet (1, 0), inv 0x0...) and stacks of
    none."""
    for dtype in (np.float32, np.complex128, np.int64):
        for shape in ((0, 0), (0, 3, 3), (2, 0, 0)):
            a = np.zeros(shape, dtype)
            for call in (lambda m, x: m.linalg.inv(x), lambda m, x: m.linalg.det(x),
                         lambda m, x: m.linalg.slogdet(x), lambda m, x: m.linalg.cholesky(x),
                         lambda m, x: m.linalg.eig(x), lambda m, x: m.linalg.eigvals(x),
                         lambda m, x: m.linalg.eigh(x), lambda m, x: m.linalg.eigvalsh(x),
                         lambda m, x: m.linalg.svd(x), lambda m, x: m.linalg.svdvals(x),
                         lambda m, x: m.linalg.qr(x), lambda m, x: m.linalg.pinv(x),
                         lambda m, x: m.linalg.matrix_rank(x),
                         lambda m, x: m.linalg.matrix_power(x, 3),
                         lambda m, x: m.linalg.solve(x, x[..., :1])):
                _check(call, a)
        for shape in ((0, 3), (3, 0)):
            a = np.zeros(shape, dtype)
            _check(lambda m, x: m.linalg.pinv(x), np.zeros((2,) + shape, dtype))
            _check(lambda m, x: m.linalg.matrix_rank(x), np.zeros((2,) + shape, dtype))
            for mode in ("reduced", "complete", "r", "raw"):
                _check(lambda m, x: m.linalg.qr(x, mode), a)
            for full in (True, False):
                _check(lambda m, x: m.linalg.svd(x, full_matrices=full), a)
            _check(lambda m, x: m.linalg.pinv(x), a)
            _check(lambda m, x: m.linalg.matrix_rank(x), a)
            b = np.ones(shape[:1], dtype)
            _check(lambda m, x, y: m.linalg.lstsq(x, y), a, b)
            _check(lambda m, x, y: m.linalg.lstsq(x, y), a, np.ones(shape[:1] + (2,), dtype))


def test_results_are_computed_arrays_that_fuse_into_their_consumers(kernels):
    """A pending operand is computed by its kernel; the result is a computed LazyArray, and
    ``inv(a) @ b + 1``'s ``+ 1`` is part of the consumer's kernel."""
    a = _data(np.float64, (40, 40))
    x = la.asarray(a) * 2 + la.eye(40)
    inverse = la.linalg.inv(x)
    assert inverse._node.data is not None and len(kernels) == 1
    y = inverse * 3 + 1
    plan = la.explain(y)
    assert len(plan.kernels) == 1 and plan.library_calls[0].name == "linalg.inv"
    np.testing.assert_allclose(y.to_numpy(), np.linalg.inv(a * 2 + np.eye(40)) * 3 + 1)


def test_explain_records_bytes_and_flops():
    n, k = 50, 3
    x = la.asarray(_data(np.float64, (2, n, n)))
    b = la.asarray(_data(np.float64, (2, n, k), 1))
    cases = {"linalg.inv": (la.linalg.inv(x), 2 * 2 * n ** 3),
             "linalg.solve": (la.linalg.solve(x, b), 2 * (2 * n ** 3 / 3 + 2 * n * n * k)),
             "linalg.cholesky": (la.linalg.cholesky(x @ la.matrix_transpose(x) + la.eye(n)),
                                 2 * n ** 3 / 3),
             "linalg.det": (la.linalg.det(x), 2 * 2 * n ** 3 / 3),
             "linalg.svdvals": (la.linalg.svdvals(x), 2 * (4 * n ** 3 - 4 * n ** 3 / 3))}
    for name, (result, flops) in cases.items():
        call = [c for c in la.explain(result * 2).library_calls if c.name == name][0]
        assert call.flops == round(flops), name
        assert call.bytes_written == result.nbytes
        assert call.bytes_read >= x.nbytes if name != "linalg.cholesky" else True
    q = la.linalg.qr(x)
    assert [c.name for c in la.explain(q.Q + q.R).library_calls] == ["linalg.qr"]


def test_jit_traces_and_replays_the_calls():
    def step(a, b):
        w, v = la.linalg.eigh(a @ la.matrix_transpose(a))
        return la.linalg.solve(a * 2, b) + 1, la.linalg.inv(a) @ b, (v * w[..., None, :]).sum()

    jitted = la.jit(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", la.JitWarning)
        for seed in range(3):
            a, b = _data(np.float64, (5, 5), seed), _data(np.float64, (5, 2), seed + 10)
            got = jitted(la.asarray(a), la.asarray(b))
            want = step(la.asarray(a), la.asarray(b))
            for g, w in zip(got, want):
                _close(g, w.to_numpy())
    assert jitted.traces == 1
    with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):    # in a replay too
        jitted(la.zeros((5, 5)), la.asarray(b))


@pytest.mark.parametrize("mode", ["lazy", "eager"])
def test_both_modes(mode):
    with la.config(mode=mode, device="cpu"):
        _modes()


def _modes():
    a = _data(np.complex64, (3, 4, 4))
    _check(lambda m, x: m.linalg.inv(x), a)
    _check(lambda m, x: m.linalg.pinv(x), a)
    _check(lambda m, x: m.linalg.cond(x, "nuc"), a)


# ----------------------------------------------------------------------------- errors
_ERRORS = {
    "inv singular": (lambda m, x: m.linalg.inv(x), np.ones((2, 3, 3))),
    "inv 1-d": (lambda m, x: m.linalg.inv(x), np.ones(3)),
    "inv 0-d": (lambda m, x: m.linalg.inv(x), np.float64(3)),
    "inv not square": (lambda m, x: m.linalg.inv(x), np.ones((2, 3))),
    "inv float16": (lambda m, x: m.linalg.inv(x), np.ones((2, 2), np.float16)),
    "det not square": (lambda m, x: m.linalg.det(x), np.ones((4, 2, 3))),
    "solve singular": (lambda m, x: m.linalg.solve(x, x[..., 0]), np.ones((3, 3))),
    "solve singular, no column": (lambda m, x: m.linalg.solve(x, x[:, :0]), np.ones((3, 3))),
    "solve vector length": (lambda m, x: m.linalg.solve(x, x[0, :2]), np.eye(3)),
    "solve rows": (lambda m, x: m.linalg.solve(x, x[:2]), np.eye(3)),
    "solve 0-d b": (lambda m, x: m.linalg.solve(x, x[0, 0]), np.eye(3)),
    "solve stacks": (lambda m, x: m.linalg.solve(x, m.concatenate([x, x, x])[..., :1]),
                     np.stack([np.eye(3)] * 2)),
    "solve float16": (lambda m, x: m.linalg.solve(x, x.astype(np.float16)), np.eye(3)),
    "cholesky not positive definite": (lambda m, x: m.linalg.cholesky(x), -np.eye(3)),
    "cholesky 1-d": (lambda m, x: m.linalg.cholesky(x), np.ones(3)),
    "eig nan": (lambda m, x: m.linalg.eig(x), np.full((2, 2), np.nan)),
    "eigvals inf": (lambda m, x: m.linalg.eigvals(x), np.full((2, 2), np.inf)),
    "eig float16": (lambda m, x: m.linalg.eig(x), np.ones((2, 2), np.float16)),
    "eigh nan": (lambda m, x: m.linalg.eigh(x), np.full((3, 3), np.nan)),   # (2x2: NaNs)
    "eigh UPLO": (lambda m, x: m.linalg.eigh(x, "X"), np.eye(2)),
    "eigvalsh UPLO not str": (lambda m, x: m.linalg.eigvalsh(x, 1), np.eye(2)),
    "svd nan": (lambda m, x: m.linalg.svd(x), np.full((3, 2), np.nan)),
    "svd 1-d": (lambda m, x: m.linalg.svd(x), np.ones(3)),
    "svd hermitian not square": (lambda m, x: m.linalg.svd(x, hermitian=True), np.ones((3, 2))),
    "svdvals nan": (lambda m, x: m.linalg.svdvals(x), np.full((3, 2), np.nan)),
    "qr 1-d": (lambda m, x: m.linalg.qr(x), np.ones(3)),
    "lstsq incompatible": (lambda m, x: m.linalg.lstsq(x, x[0]), np.ones((3, 2))),
    "lstsq 3-d b": (lambda m, x: m.linalg.lstsq(x, x[None, :, :]), np.ones((3, 2))),
    "lstsq nan": (lambda m, x: m.linalg.lstsq(x, x[:, 0]), np.full((3, 2), np.nan)),
    "matrix_power exponent": (lambda m, x: m.linalg.matrix_power(x, 1.5), np.eye(2)),
    "matrix_power singular": (lambda m, x: m.linalg.matrix_power(x, -1), np.zeros((2, 2))),
    "matrix_rank tol and rtol": (lambda m, x: m.linalg.matrix_rank(x, 1, rtol=1), np.eye(2)),
    "pinv rcond and rtol": (lambda m, x: m.linalg.pinv(x, 1e-3, rtol=1e-3), np.eye(2)),
    "pinv integer rtol=None": (lambda m, x: m.linalg.pinv(x, rtol=None), np.eye(2, dtype=int)),
    "cond empty": (lambda m, x: m.linalg.cond(x), np.ones((0, 3))),
    "cond norm": (lambda m, x: m.linalg.cond(x, 3), np.eye(2)),
    "cond not square": (lambda m, x: m.linalg.cond(x, 1), np.ones((2, 3))),
    "multi_dot one array": (lambda m, x: m.linalg.multi_dot([x]), np.eye(2)),
    "multi_dot 3-d": (lambda m, x: m.linalg.multi_dot([x, x, x[None]]), np.eye(2)),
    "tensorinv ind": (lambda m, x: m.linalg.tensorinv(x, ind=0), np.eye(4).reshape(2, 2, 4)),
    "tensorsolve shapes": (lambda m, x: m.linalg.tensorsolve(x, x[:, 0, 0]),
                           np.ones((2, 3, 4))),
}


@pytest.mark.parametrize("name", list(_ERRORS))
def test_errors_are_numpys(name):
    call, a = _ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _raises_as_numpy(call, a)


def test_shape_errors_compute_nothing(kernels):
    """What the shapes refuse is refused before a pending operand is computed."""
    x = la.asarray(np.ones((2, 3))) * 2
    for call in (la.linalg.inv, la.linalg.det, la.linalg.cholesky, la.linalg.eigh):
        with pytest.raises(np.linalg.LinAlgError):
            call(x)
    with pytest.raises(ValueError, match="solve1"):
        la.linalg.solve(la.asarray(np.eye(3)) * 2, x[0, :2])
    assert kernels == [] and x._node.data is None


# ----------------------------------------------------------------------------- the cuda calls
@pytest.fixture
def cupy_stand_in(monkeypatch):
    """NumPy standing in for CuPy as the cuda device's array module (not the simulated device:
    ``xp`` is NumPy itself there, which takes NumPy's own calls): the cuda calls run their
    CuPy code on NumPy's functions. Yields ``to_cuda(ndarray)``, a computed cuda LazyArray."""
    fake = types.SimpleNamespace(**{k: v for k, v in vars(np).items() if not k.startswith("__")})
    fake.__name__ = "stand-in"
    monkeypatch.setattr(_devices, "xp", lambda device: fake if device == "cuda" else np)
    monkeypatch.setattr(_devices, "to_host", lambda device, data: np.asarray(data))
    yield lambda a: la.LazyArray._from_node(_node.leaf(np.asarray(a), "cuda"))


def _cuda_check(to_cuda, call, *arrays, **kw):
    got = call(la, *[to_cuda(a) for a in arrays], **kw)
    want = call(np, *arrays, **kw)
    for g in (got if isinstance(got, tuple) else (got,)):
        assert not isinstance(g, la.LazyArray) or g.device == "cuda"
    _same(got, want, str(kw))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_calls_give_numpys_results(cupy_stand_in, dtype):
    to_cuda = cupy_stand_in
    a, a3 = _data(dtype, (4, 4)), _data(dtype, (3, 4, 4), 1)
    r, h, spd = _data(dtype, (5, 3), kind="rect"), _data(dtype, (2, 4, 4), kind="hermitian"), \
        _data(dtype, (2, 4, 4), kind="spd")
    cases = [(lambda m, x: m.linalg.inv(x), a3), (lambda m, x: m.linalg.det(x), a3),
             (lambda m, x: m.linalg.slogdet(x), a3),
             (lambda m, x: m.linalg.cholesky(x, upper=True), spd),
             (lambda m, x: m.linalg.eig(x), a3), (lambda m, x: m.linalg.eigvals(x), h),
             (lambda m, x: m.linalg.eig(x), h), (lambda m, x: m.linalg.eigh(x, "u"), h),
             (lambda m, x: m.linalg.eigvalsh(x), h), (lambda m, x: m.linalg.svd(x), r),
             (lambda m, x: m.linalg.svd(x, full_matrices=False), r),
             (lambda m, x: m.linalg.svd(x, hermitian=True), h),
             (lambda m, x: m.linalg.svd(x, compute_uv=False, hermitian=True), h),
             (lambda m, x: m.linalg.svdvals(x), r), (lambda m, x: m.linalg.cond(x), a3),
             (lambda m, x: m.linalg.cond(x, "nuc"), a3), (lambda m, x: m.linalg.cond(x, 1), a),
             (lambda m, x: m.linalg.cond(x, -math.inf), a3)]
    cases += [(lambda m, x, mode=mode: m.linalg.qr(x, mode), r)
              for mode in ("reduced", "complete", "r", "raw")]
    for call, x in cases:
        _cuda_check(to_cuda, call, x)
    for b in (_data(dtype, (4,), 2), _data(dtype, (3, 4, 2), 3), _data(dtype, (2, 1, 4, 1), 4),
              _data(dtype, (4, 0), 5)):
        _cuda_check(to_cuda, lambda m, x, y: m.linalg.solve(x, y), a3, b)
    _cuda_check(to_cuda, lambda m, x, y: m.linalg.solve(x, y), a, _data(dtype, (4, 3), 6))
    rank_one = np.outer(np.arange(1.0, 6), [1.0, 2, 3]).astype(dtype)
    for x, y, rcond in ((r, _data(dtype, (5,), 7), None), (r, _data(dtype, (5, 2), 7), None),
                        (r.T.copy(), _data(dtype, (3,), 8), None),
                        (rank_one, _data(dtype, (5, 2), 9), None),
                        (r, _data(dtype, (5, 0), 9), 0.1), (rank_one, _data(dtype, (5,), 9), -1)):
        if np.dtype(dtype).itemsize >= 8 or rank_one is not x:    # (float32: the rank's rounding)
            _cuda_check(to_cuda, lambda m, x, y: m.linalg.lstsq(x, y, rcond=rcond), x, y)


def test_cuda_calls_of_empty_matrices(cupy_stand_in):
    to_cuda = cupy_stand_in
    for shape in ((0, 0), (2, 0, 0), (0, 3, 3)):
        a = np.zeros(shape, np.float32)
        for call in (lambda m, x: m.linalg.inv(x), lambda m, x: m.linalg.det(x),
                     lambda m, x: m.linalg.slogdet(x), lambda m, x: m.linalg.cholesky(x),
                     lambda m, x: m.linalg.eig(x), lambda m, x: m.linalg.eigvals(x),
                     lambda m, x: m.linalg.eigh(x), lambda m, x: m.linalg.eigvalsh(x),
                     lambda m, x: m.linalg.svd(x), lambda m, x: m.linalg.solve(x, x)):
            _cuda_check(to_cuda, call, a)
    for shape in ((0, 3), (3, 0)):
        _cuda_check(to_cuda, lambda m, x, y: m.linalg.lstsq(x, y), np.zeros(shape),
                    np.ones(shape[:1]))


@pytest.mark.parametrize("name", ["inv singular", "solve singular", "solve singular, no column",
                                  "cholesky not positive definite", "eig nan", "eigvals inf",
                                  "eigh nan", "svd nan", "svdvals nan", "lstsq nan",
                                  "solve stacks", "solve vector length"])
def test_cuda_calls_raise_numpys_errors(cupy_stand_in, name):
    call, a = _ERRORS[name]
    e = _numpy_error(call, a)
    with pytest.raises(type(e), match=f"^{re.escape(str(e))}$"):
        call(la, cupy_stand_in(a))


def test_cuda_eig_on_the_host_where_cupy_has_no_geev(cupy_stand_in):
    linalg = types.SimpleNamespace(**{k: v for k, v in vars(np.linalg).items()
                                      if k not in ("eig", "eigvals")})
    _devices.xp("cuda").linalg = linalg
    a = _data(np.float64, (2, 4, 4))
    _cuda_check(cupy_stand_in, lambda m, x: m.linalg.eig(x), a)
    _cuda_check(cupy_stand_in, lambda m, x: m.linalg.eigvals(x), a)


@pytest.fixture
def cupyx_stand_in(monkeypatch):
    """A module named ``cupy`` (NumPy's functions) and a ``cupyx`` whose ``errstate`` and
    ``lapack.gesv`` keep CuPy's contracts in NumPy: the code that only runs with CuPy (the
    status checks, the factorization in the fed work buffer, ``geev``'s availability)."""
    fake = types.SimpleNamespace(**{k: v for k, v in vars(np).items() if not k.startswith("__")})
    fake.__name__ = "cupy"
    state = {"linalg": "ignore", "geev": True}

    class errstate:
        def __init__(self, linalg):
            self.linalg = linalg

        def __enter__(self):
            self.before, state["linalg"] = state["linalg"], self.linalg

        def __exit__(self, *exc):
            state["linalg"] = self.before

    def gesv(a, b):
        """cupyx.lapack.gesv: ``a @ x = b`` for ``a`` C- or F-contiguous (read as Fortran,
        transposed for C), ``b`` F-contiguous; ``x`` written over ``b``, ``a`` overwritten;
        a zero pivot raises under ``errstate(linalg="raise")`` only, as CuPy's devInfo check."""
        assert a.ndim == 2 and a.shape[0] == a.shape[1] and a.dtype == b.dtype
        assert (a.flags.c_contiguous or a.flags.f_contiguous) and b.flags.f_contiguous
        assert state["linalg"] == "raise"              # (lazyarr checks the status)
        try:
            b[...] = np.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            raise np.linalg.LinAlgError("Error reported by getrf in cuSOLVER. devInfo = 1.") \
                from None
        a[...] = np.nan

    cupyx = types.ModuleType("cupyx")
    cupyx.errstate = errstate
    cupyx.lapack = types.SimpleNamespace(gesv=gesv)
    cusolver = types.ModuleType("cupyx.cusolver")
    cusolver.check_availability = lambda name: state[name]
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)
    monkeypatch.setitem(sys.modules, "cupyx.cusolver", cusolver)
    monkeypatch.setattr(_devices, "to_host", lambda device, data: np.asarray(data))
    yield fake, state


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cuda_calls_in_the_fed_work_buffer(cupyx_stand_in, dtype):
    """inv and solve of a 2-D operand computed into memory of their own: cuSOLVER's getrf
    factors it in place (``cupyx.lapack.gesv``), with the status checked."""
    xp, state = cupyx_stand_in
    a = _data(dtype, (5, 5))
    np.testing.assert_allclose(D._inv(xp, a.copy(), owned=True), np.linalg.inv(a),
                               rtol=_tol(dtype)[0])
    for b in (_data(dtype, (5,), 1), _data(dtype, (5, 3), 2), _data(np.float64, (5, 2), 3),
              _data(dtype, (5, 0), 4)):
        want = np.linalg.solve(a, b)
        got = D._solve(xp, a.astype(want.dtype), b, owned=True)
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        np.testing.assert_allclose(got, want, rtol=_tol(dtype)[0])
    singular = np.ones((3, 3), dtype)
    for call in (lambda: D._inv(xp, singular.copy(), owned=True),
                 lambda: D._solve(xp, singular.copy(), singular[0], owned=True),
                 lambda: D._solve(xp, singular.copy(), singular[:, :0], owned=True),
                 lambda: D._inv(xp, singular), lambda: D._cholesky(xp, -np.eye(2, dtype=dtype))):
        with pytest.raises(np.linalg.LinAlgError, match="^(Singular matrix|Matrix is not "
                                                        "positive definite)$"):
            call()
    assert state["linalg"] == "ignore"                  # (the status checks end with the call)


def test_cuda_eig_where_geev_is_missing(cupyx_stand_in):
    xp, state = cupyx_stand_in
    a = _data(np.float64, (2, 4, 4))
    for geev in (True, False):          # cuSOLVER's geev, or NumPy's on a host copy
        state["geev"] = geev
        got, want = D._eig(xp, a), np.linalg.eig(a)
        assert type(got) is type(want)
        for g, w in zip(got, want):
            _close(g, w)
        h = a + np.swapaxes(a, -1, -2)              # real eigenvalues: real results
        _close(D._eig(xp, h, vectors=False), np.linalg.eigvals(h))


# ----------------------------------------------------------------------------- cuda
def _on_cuda(a):
    """``a`` as a pending cuda array (``x * 2 - x``: a kernel of the device computes it)."""
    x = la.asarray(a, device="cuda")
    return x * 2 - x


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int32], ids=str)
def test_lu_family_on_cuda(dtype):
    """inv, solve, det, slogdet, matrix_power, tensorinv, tensorsolve on the device: NumPy's
    values and dtypes, cuda results, NumPy's LinAlgError for a singular matrix."""
    a, a3 = _data(dtype, (4, 4)), _data(dtype, (2, 4, 4), 1)
    b, b3 = _data(dtype, (4, 3), 2), _data(dtype, (1, 4, 2), 3)
    cases = [(la.linalg.inv(_on_cuda(a)), np.linalg.inv(a)),
             (la.linalg.inv(_on_cuda(a3)), np.linalg.inv(a3)),
             (la.linalg.solve(_on_cuda(a), _on_cuda(b)), np.linalg.solve(a, b)),
             (la.linalg.solve(_on_cuda(a3), _on_cuda(b3)), np.linalg.solve(a3, b3)),
             (la.linalg.solve(_on_cuda(a3), _on_cuda(b[:, 0])), np.linalg.solve(a3, b[:, 0])),
             (la.linalg.det(_on_cuda(a3)), np.linalg.det(a3)),
             (la.linalg.slogdet(_on_cuda(a3)), np.linalg.slogdet(a3)),
             (la.linalg.matrix_power(_on_cuda(a), -2), np.linalg.matrix_power(a, -2)),
             (la.linalg.tensorinv(_on_cuda(a.reshape(2, 2, 4)), 2),
              np.linalg.tensorinv(a.reshape(2, 2, 4), 2)),
             (la.linalg.det(la.zeros((0, 0), dtype=dtype, device="cuda")),
              np.linalg.det(np.zeros((0, 0), dtype)))]
    for got, want in cases:
        for g in (got if isinstance(got, tuple) else (got,)):
            assert g.device == "cuda"
        _same(got, want)
    singular = np.ones((2, 3, 3), dtype)
    for call in (lambda x: la.linalg.inv(x), lambda x: la.linalg.solve(x, x[..., :1]),
                 lambda x: la.linalg.inv(x[0]), lambda x: la.linalg.solve(x[0], x[0, :, 0])):
        with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):
            call(_on_cuda(singular))
    sign, logdet = la.linalg.slogdet(_on_cuda(singular))
    np.testing.assert_array_equal(sign.to_numpy(), [0, 0])
    np.testing.assert_array_equal(logdet.to_numpy(), [-np.inf, -np.inf])


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("dtype", [np.float32, np.complex128], ids=str)
def test_cholesky_and_eigh_on_cuda(dtype):
    spd = _data(dtype, (2, 4, 4), kind="spd")
    for upper in (False, True):
        got = la.linalg.cholesky(_on_cuda(spd), upper=upper)
        assert got.device == "cuda"
        _same(got, np.linalg.cholesky(spd, upper=upper))
    with pytest.raises(np.linalg.LinAlgError, match="^Matrix is not positive definite$"):
        la.linalg.cholesky(_on_cuda(-spd))
    with pytest.raises(np.linalg.LinAlgError, match="^Matrix is not positive definite$"):
        la.linalg.cholesky(_on_cuda(-spd[0]))
    h = _data(dtype, (2, 4, 4), kind="hermitian")
    for uplo in ("L", "u"):
        w, v = la.linalg.eigh(_on_cuda(h), uplo)
        want = np.linalg.eigh(h, uplo)
        _same(w, want.eigenvalues)
        assert v.dtype == want.eigenvectors.dtype and v.device == "cuda"
        vv = v.to_numpy()
        _close(h @ vv, vv * want.eigenvalues[..., None, :])
        _same(la.linalg.eigvalsh(_on_cuda(h[0]), uplo), np.linalg.eigvalsh(h[0], uplo))


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("dtype", [np.float64, np.complex64], ids=str)
def test_eig_on_cuda(dtype):
    for kind in ("general", "hermitian"):
        a = _data(dtype, (2, 4, 4), kind=kind)
        w, v = la.linalg.eig(_on_cuda(a))
        want = np.linalg.eig(a)
        assert (w.dtype, v.dtype, w.device) == (want.eigenvalues.dtype,
                                               want.eigenvectors.dtype, "cuda")
        ww, vv = w.to_numpy(), v.to_numpy()       # (the order may differ from LAPACK's)
        _close(a @ vv, vv * ww[..., None, :])
        _close(np.sort_complex(ww.reshape(-1)), np.sort_complex(want.eigenvalues.reshape(-1)))
        vals = la.linalg.eigvals(_on_cuda(a[0]))
        assert vals.dtype == want.eigenvalues.dtype
        _close(np.sort_complex(vals.to_numpy()), np.sort_complex(want.eigenvalues[0]))
    with pytest.raises(np.linalg.LinAlgError, match="^Array must not contain infs or NaNs$"):
        la.linalg.eig(_on_cuda(np.full((2, 2), np.nan, dtype)))


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128], ids=str)
def test_svd_family_on_cuda(dtype):
    """svd, svdvals, pinv, matrix_rank, cond, lstsq, qr, multi_dot."""
    r, sq = _data(dtype, (2, 5, 3), kind="rect"), _data(dtype, (3, 3))
    for full in (True, False):
        result = la.linalg.svd(_on_cuda(r), full_matrices=full)
        want = np.linalg.svd(r, full_matrices=full)
        assert type(result) is type(want)
        for g, w in zip(result, want):
            assert (g.dtype, g.shape, g.device) == (w.dtype, w.shape, "cuda")
        _close(result.S, want.S)
        _reconstructs_svd(result, r)
    h = _data(dtype, (4, 4), kind="hermitian")
    _reconstructs_svd(la.linalg.svd(_on_cuda(h), hermitian=True), h)
    _same(la.linalg.svdvals(_on_cuda(r)), np.linalg.svdvals(r))
    _same(la.linalg.pinv(_on_cuda(r)), np.linalg.pinv(r))
    _same(la.linalg.matrix_rank(_on_cuda(r)), np.linalg.matrix_rank(r))
    for p in (None, -2, 1, "fro"):
        _same(la.linalg.cond(_on_cuda(sq), p), np.linalg.cond(sq, p))
    a2, b = r[0], _data(dtype, (5, 2), 1)
    got, want = la.linalg.lstsq(_on_cuda(a2), _on_cuda(b)), np.linalg.lstsq(a2, b)
    for g, w in zip(got, want):
        _same(g, w)
    q, rr = la.linalg.qr(_on_cuda(r))
    want = np.linalg.qr(r)
    assert (q.dtype, q.shape, rr.shape) == (want.Q.dtype, want.Q.shape, want.R.shape)
    _close(q.to_numpy() @ rr.to_numpy(), r)
    _close(np.abs(rr.to_numpy()), np.abs(want.R))
    assert la.linalg.qr(_on_cuda(r), "r").shape == want.R.shape
    mats = [_data(dtype, s, k, kind="rect") for k, s in enumerate([(3, 4), (4, 5), (5, 2)])]
    _same(la.linalg.multi_dot([_on_cuda(m) for m in mats]), np.linalg.multi_dot(mats))
    with pytest.raises(np.linalg.LinAlgError, match="^SVD did not converge$"):
        la.linalg.svd(_on_cuda(np.full((3, 2), np.nan, dtype)))
