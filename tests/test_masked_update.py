"""Boolean masks of the full shape (lazyarr/_masked.py): ``X[m]`` pending, and the masked
update ``X[m] = f(X[m], Y[m], s)`` as one fused write ``X[...] = where(m, f', X)``, against
NumPy: values (bit for bit: NaN, signed zeros), dtypes, exceptions and the floating-point
warnings (none from the False lanes, which NumPy never computes)."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _masked, _writes

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float16, np.float32,
          np.float64, np.complex64, np.complex128]
FLOATS = [np.float16, np.float32, np.float64, np.complex64, np.complex128]
CUDA = pytest.mark.skipif(not la.cuda_available(),
                          reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")


@pytest.fixture(autouse=True)
def pending_small_arrays():
    """Small arrays take the pending path too (else they run at once, as NumPy's)."""
    with la.config(eager_max_size=0):
        yield


@pytest.fixture
def fused(monkeypatch):
    """Every mask dense enough to fuse; the list of the writes that fused (the dense write
    ``where(m, f', x)``, or on the CPU the run on the True lanes: :func:`masked_runs`)."""
    monkeypatch.setattr(_masked, "DENSE", 0.0)
    return _results_of(monkeypatch, _writes, "_masked_update")


def _results_of(monkeypatch, owner, name):
    """The list of what each call of ``owner.name`` returned (it is wrapped to record them)."""
    done: list[bool] = []
    original = getattr(owner, name)

    def counting(*args):
        result = original(*args)
        done.append(result)
        return result
    monkeypatch.setattr(owner, name, counting)
    return done


@pytest.fixture
def masked_runs(monkeypatch):
    """The list of the CPU's runs on the True lanes (``run_masked``: whether each ran)."""
    from lazyarr.backends import cpu_fused
    return _results_of(monkeypatch, cpu_fused.CpuFusedBackend, "run_masked")


def _values(dtype, n, seed=0):
    """``n`` values of ``dtype`` with its edge cases (NaN, inf, -0.0, extremes)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        pool = np.array([0, 1, 2, 3, 7, info.max, info.min, info.max // 3], dtype=np.int64)
        if dt.kind == "i":
            pool = np.concatenate([pool, [-1, -5]])
        return rng.choice(pool, n).astype(dt)
    pool = np.array([0.0, -0.0, 0.5, -1.5, 2.0, 3.25, np.nan, np.inf, -np.inf, 1e4])
    v = rng.choice(pool, n)
    if dt.kind == "c":
        c = np.empty(n, np.complex128)
        c.real, c.imag = v, rng.choice(pool, n)
        v = c
    return v.astype(dt)


def _outcome(fn):
    """What ``fn()`` gives: its result (a NumPy copy), the exception type, the warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result, error = np.array(np.asarray(fn()), copy=True), None
        except Exception as exc:     # noqa: BLE001  (the type is compared)
            result, error = None, type(exc)
    return result, error, sorted({(w.category.__name__, str(w.message)) for w in caught})


def _same(got, want):
    g, ge, gw = got
    w, we, ww = want
    assert ge is we, (ge, we)
    assert gw == ww, (gw, ww)
    if w is None:
        return
    assert g.dtype == w.dtype and g.shape == w.shape
    np.testing.assert_array_equal(g, w)
    if w.dtype.kind in "fc":     # (signed zeros too; a NaN's sign is no value)
        parts = (lambda a: (a.real, a.imag)) if w.dtype.kind == "c" else (lambda a: (a,))
        for gp, wp in zip(parts(g), parts(w)):
            numbers = ~np.isnan(wp)
            assert np.array_equal(np.signbit(gp)[numbers], np.signbit(wp)[numbers])


def _compare(statement, arrays, mask, device="cpu"):
    """``statement(xp, *arrays, mask)`` (writing into the first array, returning what to
    compare) run by NumPy and by lazyarr on copies of ``arrays``."""
    want = _outcome(lambda: statement(np, *[a.copy() for a in arrays], mask.copy()))
    got = _outcome(lambda: statement(la, *[la.asarray(a.copy(), device=device) for a in arrays],
                                     la.asarray(mask.copy(), device=device)))
    _same(got, want)


def _mask(shape, density, seed=1):
    return np.random.default_rng(seed).random(shape) < density


def _update(xp, x, y, m):
    x[m] = x[m] * y[m] + 1
    return x


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(40,), (5, 8)], ids=str)
def test_update_of_every_dtype_fuses_as_numpy(fused, dtype, shape):
    x, y = _values(dtype, 40).reshape(shape), _values(dtype, 40, seed=3).reshape(shape)
    for density in (0.0, 0.3, 0.8, 1.0):
        _compare(_update, (x, y), _mask(shape, density))
    assert fused and all(fused)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sparse_masks_take_numpy_s_write(dtype):
    x, y = _values(dtype, 64), _values(dtype, 64, seed=3)
    for density in (0.0, 0.3, 1.0):        # (below and above DENSE)
        _compare(_update, (x, y), _mask(64, density))


def test_log_of_the_positive_lanes_warns_nothing(fused):
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0, -0.0, np.nan, 4.0])

    def log(xp, x):
        x[x > 0] = xp.log(x[x > 0])
        return x
    _compare(lambda xp, x, m: log(xp, x), (x,), x > 0)
    assert fused == [True]


def test_inner_ops_are_quieted_too(fused):
    # ``log(x[m] - 5)``: the False lanes' operand of ``log`` is computed, not a leaf
    x = np.array([6.0, 7.0, 1.0, -2.0, 0.0, 9.0, np.nan, 12.0])

    def f(xp, x, m):
        x[m] = xp.log(x[m] - 5)
        return x
    _compare(f, (x,), x > 5.5)                 # no warning
    _compare(f, (x,), x > 0.5)                 # NumPy's invalid value from log(1 - 5)
    assert fused == [True, True]


def test_reciprocal_with_zeros_in_the_false_lanes_only(fused):
    x = np.array([0.0, 2.0, -0.0, 4.0, 0.0, 8.0], dtype=np.float32)

    def f(xp, x, m):
        x[m] = 1 / x[m]
        return x
    _compare(f, (x,), x != 0)
    _compare(f, (x,), np.ones(6, bool))        # NumPy's divide by zero
    assert fused == [True, True]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8], ids=str)
def test_integer_division_by_zero_in_the_false_lanes(fused, dtype):
    x = np.array([7, 9, 100, 3, 5, 6], dtype=dtype)
    y = np.array([2, 0, 3, 0, 0, 4], dtype=dtype)

    def f(xp, x, y, m):
        x[m] = x[m] // y[m] + x[m] % y[m]
        return x
    _compare(f, (x, y), y != 0)
    _compare(f, (x, y), np.ones(6, bool))      # NumPy's divide by zero
    assert fused == [True, True]


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.bool_, np.float16], ids=str)
def test_casting_into_the_target_as_numpy(fused, dtype):
    # float values into integers: NaN and overflow in the False lanes raise nothing, in the
    # True lanes NumPy's "invalid value encountered in cast"
    y = np.array([1.5, np.nan, 1e30, -2.5, 3.0, -np.inf, 0.0, 250.0])
    x = np.zeros(8, dtype=dtype)
    finite = np.isfinite(y) & (abs(y) < 100)

    def f(xp, x, y, m):
        x[m] = y[m] * 2
        return x
    _compare(f, (x, y), finite)
    _compare(f, (x, y), np.ones(8, bool))


def test_complex_into_a_float_target_is_numpy_s_write(fused):
    x, y = np.zeros(4), np.array([1 + 2j, 3j, -1, 2 - 1j])

    def f(xp, x, y, m):
        x[m] = y[m] * 2
        return x
    _compare(f, (x, y), np.array([True, False, True, True]))   # NumPy's ComplexWarning
    assert fused == [False]


def test_value_reads_other_arrays_and_pending_expressions(fused):
    x, y, z = _values(np.float64, 30), _values(np.float64, 30, 4), _values(np.float64, 30, 5)

    def f(xp, x, y, z, m):
        x[m] = xp.maximum(x[m], (y * 2)[m]) - xp.sqrt(abs(z[m])) * 0.5
        return x
    _compare(f, (x, y, z), _mask(30, 0.9))
    assert fused == [True]


def test_mandelbrot_statement(fused):
    c = (np.linspace(-2, 0.5, 30) + np.linspace(-1.25, 1.25, 20)[:, None] * 1j)

    def f(xp, c, m):
        z = xp.zeros_like(c)
        n = xp.zeros_like(c, dtype=np.int64)
        for it in range(30):
            i = xp.less(abs(z), 2.0)
            n[i] = it
            z[i] = z[i] ** 2 + c[i]
        return z + n
    _compare(f, (c,), np.ones(c.shape, bool))
    assert True in fused


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64], ids=str)
def test_views_with_negative_strides_write_into_the_base(fused, dtype):
    base = _values(dtype, 48).reshape(6, 8)
    y = _values(dtype, 12, seed=7).reshape(3, 4)

    def f(xp, base, y, m):
        x = base[::2, ::-2]
        x[m] = x[m] - y[m]
        return base
    _compare(f, (base, y), _mask((3, 4), 0.8))
    assert fused == [True]


def test_target_viewed_by_another_array(fused):
    def f(xp, a, m):
        v = a[1:]
        v[m] = v[m] * 3
        return a
    _compare(f, (np.arange(10.0),), _mask(9, 0.8))
    assert fused == [True]


def test_mismatched_masks_are_numpy_s_write():
    x = _values(np.float64, 20)
    m = _mask(20, 0.8)

    def same_values(xp, x, m):
        m2 = m.copy() if xp is np else la.asarray(np.asarray(m).copy())
        x[m] = x[m2] * 2
        return x

    def other_count(xp, x, m):
        x[m] = x[~m] * 2                        # NumPy's ValueError (the counts differ)
        return x
    with la.config(eager_max_size=0):
        _compare(same_values, (x,), m)
        _compare(other_count, (x,), m)


def test_numpy_mask_key_and_eager_mode():
    x, m = _values(np.float32, 20), _mask(20, 0.9)

    def f(xp, x, mm):
        key = np.asarray(mm)                    # a NumPy bool array as the key
        x[key] = x[key] + 1
        return x
    _compare(f, (x,), m)
    key = m.copy()
    v = la.asarray(x)[key]
    assert v._node.op == "compress" and v._node.data is None
    key[:] = False                              # the NumPy mask changed after the line
    np.testing.assert_array_equal(np.asarray(v), x[m])
    with la.config(mode="eager"):
        _compare(_update, (x, x[::-1].copy()), m)
        assert la.asarray(x)[la.asarray(m)]._node.data is not None   # computed at once


def test_compress_is_pending_and_copies_as_numpy(fused):
    x = la.asarray(np.arange(10.0))
    m = x > 3
    v = x[m]
    assert v._node.op == "compress" and v._node.data is None and v.shape == (6,)
    w = v * 2                                   # an elementwise op: a normal pending node
    x[m] = 0                                    # NumPy: ``v`` is a copy, it keeps its values
    np.testing.assert_array_equal(np.asarray(v), np.arange(4.0, 10.0))
    np.testing.assert_array_equal(np.asarray(w), np.arange(4.0, 10.0) * 2)
    np.testing.assert_array_equal(np.asarray(x), [0, 1, 2, 3, 0, 0, 0, 0, 0, 0])


def test_copy_rule_through_a_fused_write(fused):
    xn = np.arange(10.0)
    x = la.asarray(xn.copy())
    m = x > 2
    v = x[m]
    x[m] = x[m] * 10
    assert fused == [True]
    np.testing.assert_array_equal(np.asarray(v), np.arange(3.0, 10.0))
    np.testing.assert_array_equal(np.asarray(x), np.where(xn > 2, xn * 10, xn))


def test_mask_written_after_the_read(fused):
    x = la.asarray(np.arange(6.0))
    m = la.asarray(np.array([True, False, True, False, True, True]))
    v = x[m]
    m[0] = False                                # v was read with the old mask
    np.testing.assert_array_equal(np.asarray(v), [0.0, 2.0, 4.0, 5.0])


@pytest.mark.parametrize("key", [np.ones(5, bool), np.ones((2, 3), bool), np.ones(7, bool)],
                         ids=["short", "2-d", "long"])
def test_bad_masks_raise_numpy_s_error(fused, key):
    def f(xp, x, m):
        return x[key if xp is np else la.asarray(key)]
    _compare(f, (np.arange(6.0),), np.ones(6, bool))


@pytest.mark.parametrize("dense", [0.0, _masked.DENSE])
def test_compress_of_a_pending_array_and_reductions(monkeypatch, dense):
    monkeypatch.setattr(_masked, "DENSE", dense)
    a = np.linspace(-1, 1, 50)
    m = _mask(50, 0.5)

    def f(xp, a, m):
        y = xp.sin(a) * 2
        return y[y > 0] ** 2, y[m].max(), xp.sum(y[m] * 3)
    got, want = f(la, la.asarray(a), la.asarray(m)), f(np, a, m)
    np.testing.assert_array_equal(np.asarray(got[0]), want[0])
    assert float(got[1]) == want[1]
    assert float(got[2]) == pytest.approx(want[2], rel=1e-15)   # (lazy mode's pairwise sum)


@pytest.mark.gpu
@CUDA
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int64, np.float32, np.float64,
                                   np.complex128], ids=str)
def test_cuda_update_as_numpy(fused, dtype):
    x, y = _values(dtype, 40).reshape(5, 8), _values(dtype, 40, seed=3).reshape(5, 8)
    for density in (0.0, 0.8, 1.0):
        _compare(_update, (x, y), _mask((5, 8), density), device="cuda")
    assert fused and all(fused)


@pytest.mark.gpu
@CUDA
def test_cuda_quiet_false_lanes_and_copy_rule(fused):
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0, -0.0, np.nan, 4.0])

    def f(xp, x, m):
        x[m] = xp.log(x[m] - 0.25)
        return x
    _compare(f, (x,), x > 0.3, device="cuda")
    _compare(f, (x,), x > 0.0, device="cuda")       # log(0.5 - 0.25) fine, log(-0.25) not
    xl = la.asarray(np.arange(8.0), device="cuda")
    m = xl > 2
    v = xl[m]
    xl[m] = xl[m] * 10
    np.testing.assert_array_equal(np.asarray(v), np.arange(3.0, 8.0))
    assert fused == [True, True, True]


def test_npbench_mandelbrot1_preset_s():
    """The benchmark's own check at preset S: lazyarr's result equals NumPy's."""
    run = "/work/shared/npbench/run.py"
    if not os.path.exists(run):
        pytest.skip("NPBench's runner is not on this machine")
    env = {k: v for k, v in os.environ.items() if k not in ("LAZYARR_CUDA_SIM", "LAZYARR_DEVICE")}
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(la.__file__))    # (on the CPU)
    done = subprocess.run([sys.executable, run, "--preset", "S", "mandelbrot1"], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "1 / 1 kernels correct" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("all_true", [False, True])
def test_the_fused_write_is_one_kernel(fused, all_true):
    """mandelbrot1's statement as the write's one program: the quiet operands of ``square``
    and ``add`` where the mask has False lanes, none where it is all True."""
    from lazyarr._array import LazyArray
    from lazyarr._program import lower
    z = la.asarray(np.full((6, 7), 0.5 + 0.5j))
    c = la.asarray(np.full((6, 7), 0.25j))
    i = la.asarray(np.ones((6, 7), bool) if all_true else _mask((6, 7), 0.8))
    node = _masked.fused_value(z, i._node, (z[i] ** 2 + c[i])._node)
    plan = la.explain(LazyArray._from_node(node))
    assert len(plan.kernels) == 1
    ops = lower(node).program.ops()
    assert ops == (["square", "add", "where"] if all_true
                   else ["where", "square", "where", "add", "where"])


@pytest.mark.parametrize("n", [10, 100_000])
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu, CUDA])])
def test_value_reads_the_target_through_other_views(fused, n, device):
    """The value reads the memory written at other indices (reversed, shifted by one): every
    read sees the old values, as NumPy's computed value does."""
    m = np.ones(n, bool)
    m[::7] = False

    def reversed_(xp, x, m):
        x[m] = x[::-1][m] * 2 + x[m]
        return x

    def shifted(xp, b, m):
        x1, x0 = b[1:n + 1], b[0:n]
        x1[m] = x0[m] + 1
        return b
    _compare(reversed_, (np.arange(float(n)),), m, device)
    _compare(shifted, (np.arange(2.0 * n),), m, device)
    assert fused == [True, True]


# ------------------------------------------------------------- the CPU's run on the True lanes
def _runs_mask(shape, density, seed=2):
    """A mask of runs (rows of a disc, as mandelbrot1's): True where a smooth field is low."""
    n = int(np.prod(shape))
    field = np.sin(np.arange(n) * 0.013 + seed) + np.sin(np.arange(n) * 0.0021)
    return (field < np.quantile(field, density) if density > 0 else np.zeros(n, bool)).reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("threads", [1, 2])
def test_sparse_masks_run_on_the_true_lanes(masked_runs, monkeypatch, dtype, threads):
    """Masks of every density, of runs and scattered, over several blocks of the VM: values,
    dtypes and warnings as NumPy's, each write one run on the True lanes (on two threads: the
    pool takes any work)."""
    from lazyarr.backends import cpu_fused
    monkeypatch.setattr(cpu_fused, "PARALLEL_WORK", 0)
    shape = (37, 301)                          # (11,137 elements: blocks of the VM and a tail)
    x = _values(dtype, 37 * 301).reshape(shape)
    y = _values(dtype, 37 * 301, seed=3).reshape(shape)
    old = cpu_fused.set_num_threads(threads)
    try:
        for density in (0.0, 0.02, 0.25, 0.6, 1.0):
            _compare(_update, (x, y), _mask(shape, density))
            _compare(_update, (x, y), _runs_mask(shape, density))
    finally:
        cpu_fused.set_num_threads(old)
    assert masked_runs == [True] * 10


@pytest.mark.parametrize("density", [0.0, 0.1, 0.27, 1.0])
def test_mandelbrot_step_of_complex128_on_the_true_lanes(masked_runs, density):
    c = np.linspace(-2, 0.5, 90) + np.linspace(-1.25, 1.25, 70)[:, None] * 1j
    z = c * (1 + 3 * np.random.default_rng(5).random(c.shape))

    def f(xp, z, c, m):
        z[m] = z[m] ** 2 + c[m]
        return z
    _compare(f, (z, c), _runs_mask(c.shape, density))
    assert masked_runs == [True]


@pytest.mark.parametrize("shape", [(0,), (0, 5), (3, 0)], ids=str)
def test_empty_arrays(masked_runs, shape):
    x = np.zeros(shape, np.float32)

    def f(xp, x, m):
        x[m] = xp.log(x[m]) + 1
        return x
    _compare(f, (x,), np.zeros(shape, bool))


def test_only_the_true_lanes_warn(masked_runs):
    """The False lanes hold values that raise in every op (log of negatives, 0/0, overflow);
    the True lanes raise one warning each in some blocks only: NumPy's warnings exactly."""
    n = 20_000
    x = np.full(n, -1.0)
    y = np.zeros(n)
    m = np.zeros(n, bool)
    m[100:5000] = True
    m[7000:7003] = True
    x[m], y[m] = 2.0, 3.0
    xs = x.copy()
    xs[7001] = -5.0                             # log's invalid value, in one True lane

    def f(xp, x, y, m):
        x[m] = xp.log(x[m]) / y[m] + xp.exp(y[m] * 10)
        return x
    _compare(f, (x, y), m)                     # nothing
    _compare(f, (xs, y), m)                    # "invalid value encountered in log"
    ys = y.copy()
    ys[150] = 0.0                               # divide by zero, then overflow in exp
    ys[4000] = 200.0

    def g(xp, x, y, m):
        x[m] = x[m] / y[m] + xp.exp(y[m] * 10)
        return x
    _compare(g, (x, ys), m)
    assert masked_runs == [True, True, True]


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8, np.complex64], ids=str)
def test_value_cast_into_the_target_on_the_true_lanes(masked_runs, dtype):
    y = np.array([1.5, np.nan, 1e30, -2.5, 3.0, -np.inf, 0.0, 250.0] * 500)
    x = np.zeros(4000, dtype=dtype)
    finite = np.isfinite(y) & (abs(y) < 100)

    def f(xp, x, y, m):
        x[m] = y[m] * 2
        return x
    _compare(f, (x, y), finite)                # nothing raised (NaN and 1e30 are False lanes)
    _compare(f, (x, y), ~finite)               # NumPy's cast warnings where it casts them
    assert masked_runs == [True, True]


def test_strided_operands_take_numpy_s_write(masked_runs):
    """An operand the run cannot read with one stride (a view of every other column), or
    one overlapping the target at other lanes: NumPy's write of NumPy's value."""
    big = _values(np.float64, 2 * 60 * 50).reshape(60, 100)
    x = _values(np.float64, 60 * 50, seed=9).reshape(60, 50)

    def strided(xp, x, big, m):
        x[m] = x[m] + big[:, ::2][m] * 2
        return x

    def overlapping(xp, big, m):
        a, b = big[:, :50], big[:, 1:51]
        a[m] = a[m] + b[m]
        return big
    m = _runs_mask((60, 50), 0.3)
    _compare(strided, (x, big), m)
    _compare(overlapping, (big,), m)
    assert masked_runs == [False]               # (the second: a target not C-contiguous)


def test_scalars_zero_d_values_and_a_held_value(masked_runs):
    x, y = _values(np.float64, 5000), _values(np.float64, 5000, seed=4)
    m = _mask(5000, 0.2)

    def scalars(xp, x, y, m):
        x[m] = (x[m] - y[m]) * xp.asarray(2.5) + np.float32(1.25)
        return x

    def held(xp, x, y, m):
        v = x[m] * y[m]                         # held: computed by the write's barrier
        x[m] = v
        return x + v.sum()
    _compare(scalars, (x, y), m)
    _compare(held, (x, y), m)
    assert masked_runs == [True]


def test_raising_errstate_leaves_the_target_unwritten(masked_runs):
    x = np.linspace(-1, 1, 9000)
    m = np.ones(9000, bool)
    m[::3] = False

    def f(xp, x, m):
        with np.errstate(all="raise"):
            x[m] = xp.log(x[m])
        return x
    _compare(f, (x,), m)                        # FloatingPointError, nothing written
    xl = la.asarray(x.copy())
    with pytest.raises(FloatingPointError), np.errstate(all="raise"):
        xl[la.asarray(m)] = la.log(xl[la.asarray(m)])
    np.testing.assert_array_equal(np.asarray(xl), x)
    assert masked_runs == []


@pytest.fixture
def fills(monkeypatch):
    """The list of the CPU's masked fills (``run_fill``: whether each ran)."""
    from lazyarr.backends import cpu_fused
    return _results_of(monkeypatch, cpu_fused.CpuFusedBackend, "run_fill")


FILL_VALUES = [7, -1, 300, 2**70, 2.5, -0.0, np.nan, np.inf, 1e300, True, 1 + 2j,
               np.float32(3.5), np.int64(-9), np.uint8(200), np.complex64(2 - 1j), np.float16(-2)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_scalar_fill_of_the_true_lanes_as_numpy(fills, monkeypatch, dtype):
    """``x[m] = scalar`` (mandelbrot1's ``N[I] = n``): NumPy's conversion of the scalar (its
    errors and warnings, whatever the count) and its values, on one and two threads."""
    from lazyarr.backends import cpu_fused
    shape = (23, 517)
    x = _values(dtype, 23 * 517).reshape(shape)
    for value in FILL_VALUES:
        def f(xp, x, m):
            x[m] = value
            return x
        for density in (0.0, 0.3, 1.0):
            _compare(f, (x,), _runs_mask(shape, density))
    monkeypatch.setattr(cpu_fused, "PARALLEL_WORK", 0)
    old = cpu_fused.set_num_threads(2)
    try:
        def g(xp, x, m):
            x[m] = 1
            return x
        _compare(g, (x,), _mask(shape, 0.4))
    finally:
        cpu_fused.set_num_threads(old)
    assert fills and all(fills)


def test_scalar_fill_into_a_read_only_or_strided_target(fills):
    x = np.arange(12000.0)
    m = _mask(12000, 0.5)

    def read_only(xp, x, m):
        y = xp.broadcast_to(x, (2, 12000))[0]
        y[m] = 1.0                                  # NumPy's ValueError, nothing written
        return x

    def strided(xp, x, m):
        y = x.reshape(2, 6000)[:, ::2].reshape(6000)  # (a view of x at a stride of 2)
        y[m[:6000]] = 2.0
        return y
    _compare(read_only, (x,), m)
    _compare(strided, (x,), m)
    xl = la.asarray(x.copy()).reshape(200, 60)[:, :40]
    xl[la.asarray(m.reshape(200, 60)[:, :40].copy())] = 3.0   # a view: NumPy's write
    want = x.copy().reshape(200, 60)
    want[:, :40][m.reshape(200, 60)[:, :40]] = 3.0
    np.testing.assert_array_equal(np.asarray(xl), want[:, :40])
    assert True not in fills                        # (NumPy's writes, into the views)


def test_a_mask_in_the_target_s_memory_is_numpy_s_write(masked_runs, fills):
    """A mask that is a view of the target's own memory, shifted: NumPy's write reads it as it
    writes (each lane written makes the next one True); here too NumPy's write, never the run
    on the True lanes. A fill's cascade is NumPy's exactly; an update's value has the count's
    length, and how far NumPy's cascade then runs depends on the order its write reads the
    mask in (NumPy writes lanes 1-6 of a run of one True lane, lazyarr's call of the same
    write lanes 1-5 on some builds): only what is order-free is compared
    (docs/views-and-writes.rst, "Masked updates")."""
    def fill(xp, b, m):
        x, mm = b[1:], b[:-1]
        x[mm] = True
        return b

    def update(xp, b, m):
        x, mm = b[1:], b[:-1]
        x[mm] = ~x[mm]
        return b
    b = np.zeros(9000, bool)
    b[0] = b[4000] = True
    _compare(fill, (b,), b)
    got = np.asarray(update(la, la.asarray(b.copy()), None))
    want = update(np, b.copy(), None)
    assert got.dtype == want.dtype and got.shape == want.shape
    for g in (got, want):       # the first lane of each run written, nothing before a run
        assert g[:2].all() and g[4000] and not g[3990:4000].any() and not g[-100:].any()
    assert True not in masked_runs and True not in fills
