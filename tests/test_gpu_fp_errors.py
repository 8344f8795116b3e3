"""NumPy's floating-point errors from the cuda kernels (issue 16, item 5).

A checked kernel derives NumPy's flags from values (lazyarr/backends/cuda/fp_checks.py) and
lazyarr reports them as ``np.errstate`` says (lazyarr/backends/cuda/flags.py): each case here
is compared with NumPy's own messages, as tests/test_fp_errors.py does for the CPU. Runs on
the GPU (``pytest -m gpu``) and on the simulated device (``LAZYARR_CUDA_SIM=1``).
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from helpers import errcall_seen, lazy_warning_messages, sim_sized, warning_messages
from test_fp_errors import CASES, F64

import lazyarr as la

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy")]


_messages = warning_messages


def _lazy(fn, *arrays):
    return lazy_warning_messages(fn, arrays, "cuda")


def _numpy(fn, *arrays):
    return warning_messages(lambda: fn(*arrays))


@pytest.mark.parametrize("name, fn, arrays", CASES, ids=[c[0] for c in CASES])
def test_the_warnings_are_numpys(name, fn, arrays):
    assert _lazy(fn, *arrays) == _numpy(fn, *arrays)


EDGES = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -3.5, 100.0, np.inf, -np.inf, np.nan, 1e30, 710.0, 1e4]
UNARY = ["log", "log2", "log10", "log1p", "sqrt", "exp", "exp2", "expm1", "sin", "cos", "tan",
         "arcsin", "arccos", "arccosh", "arctanh", "sinh", "cosh", "reciprocal", "square",
         "rad2deg", "spacing", "arctan", "tanh", "floor"]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "power",
          "float_power", "hypot", "logaddexp", "logaddexp2", "nextafter", "maximum", "arctan2"]
FLOATS = [np.float16, np.float32, np.float64]


def _edges(dt):
    v = np.array(EDGES + [float(np.finfo(dt).max), float(np.finfo(dt).tiny)])
    with np.errstate(all="ignore"):
        return v.astype(dt)


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", UNARY)
def test_unary_ops_each_edge_value(op, dt):
    f = getattr(np, op)
    for v in _edges(dt):        # one value at a time: each value's own messages
        x = np.array([v, 1], dt)
        assert _lazy(lambda a: getattr(la, op)(a), x) == _numpy(f, x), (op, v)


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", BINARY)
def test_binary_ops_each_pair_of_edge_values(op, dt):
    f = getattr(np, op)
    pairs = list(itertools.product(_edges(dt), repeat=2))
    for a, b in pairs[::sim_sized(1, 7)]:      # (every 7th pair on the simulated device)
        x, y = np.array([a], dt), np.array([b], dt)
        want = _numpy(f, x, y)
        if op in ("power", "float_power") and np.isinf(b) and np.isfinite(a) and a != 0:
            # NumPy's SIMD pow reports overflow for some finite bases to +inf, not for others
            # (docs/testing.rst, "Where NumPy's own order decides"): our rule, none
            want = [m for m in want if not m.startswith("overflow")]
        assert _lazy(lambda p, q: getattr(la, op)(p, q), x, y) == want, (op, a, b)


@pytest.mark.parametrize("src, dst", [(np.float64, np.int64), (np.float64, np.int8),
                                      (np.float32, np.uint8), (np.float64, np.uint32),
                                      (np.float64, np.uint64), (np.float32, np.int32),
                                      (np.float64, np.float32), (np.float64, np.float16),
                                      (np.int64, np.float16)])
def test_casts(src, dst):
    vals = [0.0, 1.5, -1.0, 300.0, -300.0, 70000.0, 3e9, 1e19, -1e19, 1e300, np.inf, -np.inf,
            np.nan] if np.dtype(src).kind == "f" else [1, 70000, -70000]
    for v in vals:
        with np.errstate(all="ignore"):
            x = np.array([v]).astype(src)
        assert _lazy(lambda a: (a * 1).astype(dst), x) == _numpy(lambda a: (a * 1).astype(dst), x), v


def test_complex_narrowing_casts():
    z = np.array([1e300 + 1j, 1 + 1e300j, np.inf + 0j, 2 + 2j])
    for src in (z, z.real.copy()):
        for v in src:
            x = np.array([v, 1])
            assert _lazy(lambda a: (a * 1).astype(np.complex64), x) == \
                _numpy(lambda a: (a * 1).astype(np.complex64), x), v


def test_integer_division_by_zero():
    a, b = np.array([7, -8, np.iinfo(np.int32).min, 3], np.int32), np.array([0, 2, -1, 1], np.int32)
    for op in ("floor_divide", "remainder", "fmod"):
        assert _lazy(getattr(la, op), a, b) == _numpy(getattr(np, op), a, b), op
    assert _lazy(la.reciprocal, b) == _numpy(np.reciprocal, b)


def test_complex():
    z = np.array([1 + 1j, 0j, np.inf + 0j, 1e308 + 1e308j])
    for fn in (lambda a: a / 0, lambda a: a * a, np.log, lambda a: np.exp(a * 1000)):
        assert _lazy(fn, z) == _numpy(fn, z)


def test_reductions():
    big = np.array([1e308, 1e308, 1.0])
    for fn, x in [(np.sum, big), (np.sum, np.array([np.inf, -np.inf])),
                  (np.prod, np.array([1e200, 1e200])), (np.sum, np.array([np.nan, 1.0])),
                  (np.mean, big), (lambda a: np.sum(a.reshape(3, 1), axis=1), big),
                  (lambda a: np.sum(a.reshape(1, 3), axis=1), big * 1e-290),
                  (lambda a: np.sum(a.reshape(2, 2), axis=0),
                   np.array([3e38, 1, 3e38, 2], np.float32))]:
        assert _lazy(fn, x) == _numpy(fn, x)


def test_the_warning_names_the_users_line():
    with la.config(mode="lazy", device="cuda"):
        x = la.asarray(F64)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = la.log(x).compute()
            np.asarray(y)
    raised = [w for w in caught if w.category is RuntimeWarning]
    assert len(raised) == 2 and all(w.filename == __file__ for w in raised)


def test_errstate_ignore_raise_call():
    with la.config(mode="lazy", device="cuda"):
        x = la.asarray(F64)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="ignore"):
                np.asarray(la.log(x))
            with np.errstate(divide="ignore", invalid="ignore"):
                np.asarray(la.log(x) * 2)
        y = la.log(x * 3)
        with np.errstate(divide="raise"), pytest.raises(FloatingPointError,
                                                        match="divide by zero encountered in log"):
            y.compute()
        assert not y.is_materialized
        assert errcall_seen(lambda: (la.asarray(F64) / 0.0).compute()) == \
            [("divide by zero", 1), ("invalid value", 8)]


def test_in_place_write_and_jit_replays():
    with la.config(mode="lazy", device="cuda"):
        x = la.asarray(F64.copy())
        assert _messages(lambda: np.asarray(x.__itruediv__(0.0))) == \
            ["divide by zero encountered in divide", "invalid value encountered in divide"]
        x = la.asarray(F64.copy())
        with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
            x[...] = la.log(x)
            x.compute()
        np.testing.assert_array_equal(np.asarray(x), F64)      # nothing written
        f = la.jit(lambda a: la.log(a) + 1)
        f(la.asarray(np.array([1.0, 2.0])))
        assert _messages(lambda: np.asarray(f(la.asarray(np.array([0.0, 1.0]))))) == \
            ["divide by zero encountered in log"]


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_one_bad_element_in_a_full_tile(where):
    """The checks of a kernel's full tiles are tested once per tile (render.unrolled) and a
    reduction's accumulator once per thread (fp_checks.thread_check): one bad element among
    many, in every kind of kernel, still gives NumPy's messages, and good data none. A map's
    failed tile is computed again element by element for its flags: each site's own (an
    overflow at two sites, then an invalid one), also through strided coordinates."""
    n = 8192
    at = {"first": 0, "middle": n // 2 + 3, "last": n - 1}[where]
    zero = np.linspace(1, 2, n)
    zero[at] = 0.0
    big = np.full(n, 1e307)
    pair = np.linspace(1, 2, n)
    pair[at], pair[(at + 1) % n] = np.inf, -np.inf
    for fn, x in [(np.log, zero), (lambda a: np.sum(np.log(a)), zero),
                  (lambda a: np.sum(a * a, axis=0), zero.reshape(64, 128) * 1e200),
                  (lambda a: np.sum(a.reshape(64, 128), axis=1), big),
                  (np.sum, big), (np.sum, pair), (np.sum, np.linspace(1, 2, n)),
                  (lambda a: 1.0 / a, zero),
                  (lambda a: a * 1e10 - a * 1e10, np.where(zero == 0, 1e300, zero)),
                  (lambda a: np.log(a.reshape(64, 128)[:, 1:-1] * 2.0), zero),
                  (_past_tile_sites, zero)]:        # (tested per element: TILE_SITES)
        assert _lazy(fn, x) == _numpy(fn, x), (fn, where)


def _past_tile_sites(a):
    for _ in range(9):
        a = a * 1.0 + 0.0
    return np.log(a)


def test_launches_of_one_reduction_share_a_slot_and_keep_each_ones_flags():
    """A reduction's launches share their ring slot until it is read (flags._Ring.take), as an
    elementwise kernel's do: a launch whose operands held a NaN (nothing to report) leaves
    nothing in the word that hides a later launch's invalid ``inf - inf`` or overflow."""
    n = 4096
    data = [np.linspace(1, 2, n), np.linspace(1, 2, n), np.linspace(1, 2, n), np.full(n, 1e307)]
    data[0][5] = np.nan
    data[1][7], data[1][n - 1] = np.inf, -np.inf

    def sums(launch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = [np.asarray(r) for r in [launch(d) for d in data]]   # (launched, then read)
        return got, sorted(str(w.message) for w in caught if w.category is RuntimeWarning)

    with la.config(mode="lazy", device="cuda"):
        got, messages = sums(lambda d: la.sum(la.asarray(d)).compute())
    want, want_messages = sums(np.sum)
    assert want_messages == ["invalid value encountered in reduce",
                             "overflow encountered in reduce"]
    assert messages == want_messages
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("cols", [8, 64])
def test_row_sums_raise_nothing_for_what_only_lanes_outside_the_tree_add(cols):
    """A row sum's warp shuffles add, on the lanes outside the tree, a lane of the next row or
    their own value: only the tree's combines are tested (render._axes), so adjacent rows of
    inf and -inf, or a lone value past half the maximum, raise nothing, as in NumPy."""
    a = np.zeros((64, cols))
    a[0, 0], a[1, 0] = np.inf, -np.inf
    a[5:, cols - 1] = 1e308
    for fn in (lambda x: np.sum(x, axis=1), lambda x: np.mean(x, axis=1)):
        assert _lazy(fn, a) == _numpy(fn, a) == []


#: sites whose tests are implied by a later one (fp_checks.implied_tests) and sites that must
#: keep theirs: ``1 / (a * a)`` is finite where ``a * a`` overflowed (the dividend only
#: propagates), ``-(a * a) - 1`` is not
_IMPLIED_CHAINS = [lambda a: 0.2 * (a + a + a * 3.0 - a), lambda a: 1.0 / (a * a),
                   lambda a: np.sqrt(np.abs(a * a + 1.5)) * 2 - a,
                   lambda a: (a * a).astype(np.float32) + 1, lambda a: np.exp(-(a * a)),
                   lambda a: -(a * a) - 1]


@pytest.mark.parametrize("value", [1e200, np.inf, -np.inf, np.nan, 0.0, 1.0])
def test_implied_tests_keep_every_sites_flags(value):
    """One element of ``value`` among good ones, in chains whose sites are partly tested only
    through a later site (the element's test fails there, then every site's flags are
    derived): NumPy's messages, each chain on its own."""
    x = np.linspace(1, 2, 4096)
    x[1234] = value
    for k, fn in enumerate(_IMPLIED_CHAINS):
        assert _lazy(fn, x) == _numpy(fn, x), (k, value)
