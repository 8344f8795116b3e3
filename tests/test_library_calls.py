"""Library calls fed by a pending chain (issue 18): ``sort``, ``cumsum``, ``cumprod`` and
``unique`` of a pending CPU array compute its kernel straight into the result's memory (for
``unique``, the copy NumPy sorts), then sort or scan it in place: NumPy's values, dtypes, axes and errors; and ``la.explain`` lists library calls as
steps with their bytes and FLOPs. On cuda (gpu-marked, simulator-checked): ``sort`` of a
pending array the same way (CuPy's in-place sort), and issue 18's GPU rows' kernel and library
call counts (tools/peers/library_calls.py --device cuda)."""
from __future__ import annotations

import threading
import tracemalloc
import warnings

import numpy as np
import pytest
from helpers import SIMULATED, each_same

import lazyarr as la
from lazyarr.backends import cpu_fused

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64, np.float16,
          np.float32, np.float64, np.complex64, np.complex128]


def _data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 5
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.fixture
def into(monkeypatch):
    """Lazy mode on the CPU, counting the kernels run into memory given to them (run_into)
    and those run into new memory (run)."""
    counts = {"into": 0, "run": 0}
    real_into, real_run = cpu_fused.CpuFusedBackend.run_into, cpu_fused.CpuFusedBackend.run

    def run_into(self, lowered, out, **kw):
        counts["into"] += 1
        return real_into(self, lowered, out, **kw)

    def run(self, lowered):
        counts["run"] += 1
        return real_run(self, lowered)

    monkeypatch.setattr(cpu_fused.CpuFusedBackend, "run_into", run_into)
    monkeypatch.setattr(cpu_fused.CpuFusedBackend, "run", run)
    with la.config(mode="lazy", device="cpu"):
        yield counts


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_sort_of_a_pending_array(into, dtype, axis):
    a = _data(dtype, (37, 29))
    x = la.asarray(a)
    want = np.sort(a + a[::-1], axis=axis)
    _same(la.sort(x + x[::-1], axis=axis), want)
    _same(la.sort(la.asarray(want), axis=axis), np.sort(want, axis=axis))     # computed
    assert into == {"into": 1, "run": 0}          # the chain, into the result's memory


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumulative_of_a_pending_array(into, name, dtype, axis):
    a = _data(dtype, (37, 29))
    x = la.asarray(a)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a * a[::-1], axis=axis)       # int8 -> int64, bool -> int64
        got = getattr(la, name)(x * x[::-1], axis=axis)
        _same(getattr(np, name)(la.asarray(a), axis=axis), getattr(np, name)(a, axis=axis))
    _same(got, want)
    assert into == {"into": 1, "run": 0}


@pytest.fixture
def pipelined(monkeypatch):
    """Two threads, no size threshold and at most 64 bytes of rows per scan: the scans
    overlap the kernel on small arrays too, with many carries. Counts the pipelined runs."""
    runs = []
    real = cpu_fused._run_pipelined
    monkeypatch.setattr(cpu_fused, "PIPE_MIN_BYTES", 0)
    monkeypatch.setattr(cpu_fused, "PIPE_CHUNK_BYTES", 64)
    monkeypatch.setattr(cpu_fused, "_run_pipelined", lambda *a: runs.append(1) or real(*a))
    old = cpu_fused.set_num_threads(2)
    try:
        with la.config(mode="lazy", device="cpu"):
            yield runs
    finally:
        cpu_fused.set_num_threads(old)


def _outcome(fn):
    """(the value's bytes or None, the exception's repr or None, the warnings' messages)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            value, error = np.asarray(fn()), None
        except Exception as exc:
            value, error = None, repr(exc)
    return (None if value is None else (value.dtype, value.shape, value.tobytes()), error,
            [str(w.message) for w in record])


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, axis", [((1000,), None), ((1000,), 0), ((37, 13), None),
                                         ((37, 13), 0), ((37, 13), 1), ((37, 13), -1),
                                         ((5, 4, 3), None), ((5, 4, 3), 0), ((5, 4, 3), 1)])
def test_cumulative_scans_chunks_as_the_kernel_writes_them(pipelined, name, dtype, shape, axis):
    """Chunks of the result scanned as the kernel (on a worker thread) writes the next ones:
    NumPy's bits (its accumulate is one sequential pass; a chunk first takes the previous
    one's last element or row), dtypes and warnings (float16 and float32 products overflow).
    Complex products along an axis of an n-d array are scanned whole, after the kernel."""
    a = _data(dtype, shape)
    x = la.asarray(a)
    want = _outcome(lambda: getattr(np, name)(a * a[::-1], axis=axis))
    assert _outcome(lambda: getattr(la, name)(x * x[::-1], axis=axis)) == want
    whole = name == "cumprod" and np.dtype(dtype).kind == "c" and axis is not None and len(shape) > 1
    assert pipelined == ([] if whole else [1])


def test_the_chains_errors_come_before_the_scans(pipelined):
    """NumPy reports the chain's errors (its ops run first), then the scan's; the kernel's
    come after the last chunk here, so the scan's are recorded and raised after them, as
    NumPy's accumulate raises them, in every error state."""
    a = np.full(999, 3e38, np.float32)
    a[-3:] = -1                       # sqrt: invalid (late); the sum: overflow (early)
    x = la.asarray(a)
    cases = [(lambda: np.cumsum(np.sqrt(a) + a), lambda: la.cumsum(la.sqrt(x) + x))]
    b = np.array([np.inf] * 500 + [-np.inf] * 499, np.float32)   # the scan: invalid
    y = la.asarray(b)
    cases.append((lambda: np.cumsum(b * 2), lambda: la.cumsum(y * 2)))
    c = np.full(999, 1e-20, np.float32)                            # the product: underflow
    z = la.asarray(c)
    cases.append((lambda: np.cumprod(c + 0), lambda: la.cumprod(z + 0)))
    for state in ({}, {"over": "raise"}, {"invalid": "raise"}, {"all": "raise"},
                  {"all": "ignore"}, {"under": "warn"}, {"under": "raise", "over": "ignore"}):
        for numpy_fn, lazy_fn in cases:
            with np.errstate(**state):
                assert _outcome(lazy_fn) == _outcome(numpy_fn), state
    assert len(pipelined) == 7 * 3


def test_a_failing_side_stops_the_other(pipelined, monkeypatch):
    """An error in the consumer (Ctrl-C in a scan) or in the kernel's thread is raised on the
    calling thread, once the kernel has stopped; the one worker thread serves the next run."""
    from lazyarr._materialize import materialize_into
    x = la.asarray(_data(np.float32, (100_000,)))
    seen = []

    def consume(out, r0, r1):
        assert r0 == (seen[-1][1] if seen else 0) and r1 > r0
        seen.append((r0, r1))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        materialize_into((x * 2)._node, np.empty(100_000, np.float32), consume)
    assert len(seen) == 1 and 1 <= seen[0][1] <= 16
    assert len([t for t in threading.enumerate() if t.name == "lazyarr-pipeline"]) == 1

    def failing(*args, **kwargs):
        raise MemoryError("in the worker")

    monkeypatch.setattr(cpu_fused, "_execute_into", failing)
    seen.clear()
    with pytest.raises(MemoryError, match="in the worker"):
        materialize_into((x * 3)._node, np.empty(100_000, np.float32), consume)
    assert seen == []
    assert len([t for t in threading.enumerate() if t.name == "lazyarr-pipeline"]) == 1
    monkeypatch.undo()
    with la.config(mode="lazy", device="cpu"):
        _same(la.cumsum(x * 3), np.cumsum(np.asarray(x) * np.float32(3)))


@pytest.mark.parametrize("shape", [(100_000,), (30, 3333)])
def test_the_kernel_counts_what_it_wrote_and_stops_when_asked(shape):
    """The VM's pipelined run: ``progress[0]`` counts the elements written in C order (rows
    of a strided input go one row at a time), and a set ``progress[1]`` stops it after its
    first block."""
    from lazyarr._materialize import lower_cached
    base = _data(np.float32, (shape[0], shape[-1] + 7) if len(shape) > 1 else shape)
    x = la.asarray(base)[:, 3:-4] if len(shape) > 1 else la.asarray(base)     # a strided view
    lowered = lower_cached((x * 2 + 1)._node)
    c = cpu_fused.get_compiled(lowered.program)
    inputs = [cpu_fused._prepare(b, dt) for b, dt in zip(lowered.inputs, c.input_dtypes)]
    launch = cpu_fused._launch(c, lowered, inputs)._replace(threads=1)
    assert bool(launch.outer) == (len(shape) > 1)
    out, progress = np.zeros(shape, np.float32), np.zeros(2, np.int64)
    cpu_fused._execute_into(launch, inputs, out, bytearray(len(c.fpe)), progress)
    assert cpu_fused._cpu_vm.progress_of(progress) == out.size
    np.testing.assert_array_equal(out, np.asarray(x) * np.float32(2) + np.float32(1))
    out[...] = 0
    progress[:] = (0, 1)
    cpu_fused._execute_into(launch, inputs, out, bytearray(len(c.fpe)), progress)
    first = min(c.vm.block, shape[-1])    # (a row's blocks: the first one)
    assert progress[0] == first and np.count_nonzero(out.reshape(-1)[first:]) == 0
    with pytest.raises(ValueError, match="progress"):
        cpu_fused._execute_into(launch._replace(threads=2), inputs, out, bytearray(len(c.fpe)),
                                progress)


def test_one_thread_or_a_small_result_scans_after_the_kernel(into, monkeypatch):
    """Nothing to overlap: the kernel runs into the memory (run_into), then one scan; the
    same below PIPE_MIN_BYTES and for one row."""
    a = _data(np.float64, (400,))
    x = la.asarray(a)
    old = cpu_fused.set_num_threads(1)
    try:
        monkeypatch.setattr(cpu_fused, "PIPE_MIN_BYTES", 0)
        _same(la.cumsum(x + 1), np.cumsum(a + 1))
    finally:
        cpu_fused.set_num_threads(old)
    row = la.asarray(a.reshape(1, 400))
    _same(la.cumsum(row + 1, axis=1), np.cumsum(a.reshape(1, 400) + 1, axis=1))   # one row
    monkeypatch.setattr(cpu_fused, "PIPE_MIN_BYTES", 1 << 20)
    _same(la.cumsum(x + 1), np.cumsum(a + 1))           # below the threshold
    assert into == {"into": 3, "run": 0}


def _repeats(dtype, shape, seed=0):
    """Values with many repeats; floats with NaNs, -0.0 and 0.0, infinities; complex with NaNs
    in either part (NumPy's unique treats those in its own ways)."""
    rng = np.random.default_rng(seed)
    a = np.round(rng.standard_normal(shape) * 3)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * np.round(rng.standard_normal(shape))
    a = a.astype(dtype)
    flat = a.reshape(-1)
    if flat.size > 8 and np.issubdtype(dtype, np.inexact):
        flat[:8] = [np.nan, -0.0, 0.0, np.inf, -np.inf, np.nan, -0.0, 0.0]
        if np.issubdtype(dtype, np.complexfloating):
            flat[8:11] = [complex(np.nan, 1), complex(1, np.nan), complex(-0.0, 0.0)]
        rng.shuffle(flat)
    return a


def _same_unique(got, want):
    each_same(got, want, _same)


_UNIQUE_FORMS = [{}, {"equal_nan": False}, {"return_counts": True},
                 {"return_counts": True, "equal_nan": False}, {"return_index": True},
                 {"return_inverse": True}, {"return_index": True, "return_inverse": True,
                                            "return_counts": True, "equal_nan": False}]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1000,), (37, 29), (3, 5, 7)])
def test_unique_of_a_pending_array(into, dtype, shape):
    a = _repeats(dtype, shape)
    x = la.asarray(a)
    with np.errstate(all="ignore"):
        chain = a * np.ones((), dtype) if dtype is not np.bool_ else a & True
        for kw in _UNIQUE_FORMS:
            got = la.unique(x * np.ones((), dtype) if dtype is not np.bool_ else x & True, **kw)
            _same_unique(got, np.unique(chain, **kw))
            _same_unique(np.unique(la.asarray(chain), **kw), np.unique(chain, **kw))   # computed
    # values only: the chain into the memory NumPy sorts where NumPy's unique sorts (floats,
    # bool: no hash table), counts: always; the index forms through NumPy's own call
    sorted_values = np.dtype(dtype).kind in "fb"
    assert into == {"into": 2 * sorted_values + 2, "run": 5 - 2 * sorted_values}, into


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_array_api_forms_of_a_pending_array(into, dtype):
    # lazyarr's unique_* give NumPy's np.unique (sorted values, every NaN distinct): NumPy
    # 2.3+'s own unique_values gives its hash order (lazyarr/_functions/_set.py)
    a = _repeats(dtype, (11, 13), seed=1)
    x = la.asarray(a)
    y = x + np.zeros((), dtype) if dtype is not np.bool_ else x | False
    b = a + np.zeros((), dtype) if dtype is not np.bool_ else a | False
    _same(la.unique_values(y), np.unique(b, equal_nan=False))
    got, want = la.unique_counts(y), np.unique_counts(b)
    assert type(got).__name__ == type(want).__name__
    _same(got.values, np.unique(b, equal_nan=False))
    _same(got.counts, np.unique(b, equal_nan=False, return_counts=True)[1])
    got, want = la.unique_inverse(y), np.unique_inverse(b)
    assert type(got).__name__ == type(want).__name__
    values, inverse = np.unique(b, equal_nan=False, return_inverse=True)
    _same(got.values, values)
    _same(got.inverse_indices, inverse)
    got, want = la.unique_all(y), np.unique_all(b)
    assert type(got).__name__ == type(want).__name__
    for g, w in zip(got, np.unique(b, return_index=True, return_inverse=True,
                                   return_counts=True, equal_nan=False)):
        _same(g, w)


@pytest.mark.parametrize("dtype, bits", [(np.float16, np.uint16), (np.float32, np.uint32),
                                         (np.float64, np.uint64)])
def test_unique_keeps_numpys_signed_zeros(into, dtype, bits):
    # -0.0 == 0.0: which one a run keeps is the sort's order of equal values, NumPy's own sort
    # on the same values (sizes past NumPy's small-array and SIMD cut-offs)
    rng = np.random.default_rng(2)
    for n in (17, 1000, 1 << 17):
        a = np.round(rng.standard_normal(n) * 2).astype(dtype)
        a[rng.random(n) < 0.3] = -0.0
        a[rng.random(n) < 0.01] = np.nan
        x = la.asarray(a)
        for kw in ({}, {"equal_nan": False}, {"return_counts": True}):
            got, want = la.unique(x * 1, **kw), np.unique(a * 1, **kw)
            got, want = (got[0], want[0]) if kw.get("return_counts") else (got, want)
            assert np.asarray(got).view(bits).tobytes() == want.view(bits).tobytes(), (n, kw)


def test_unique_empty_zero_d_axis_and_numpy_call(into):
    for shape in [(0,), (3, 0), (0, 4)]:
        a = np.zeros(shape, np.float32)
        for kw in _UNIQUE_FORMS:
            _same_unique(la.unique(la.asarray(a) + 1, **kw), np.unique(a + 1, **kw))
    z = np.float32(2.5)
    for kw in _UNIQUE_FORMS:        # 0-d: NumPy's call (it flattens to one element)
        _same_unique(la.unique(la.asarray(z) + 1, **kw), np.unique(z + 1, **kw))
    a = _repeats(np.float64, (6, 4))
    a[::2] = a[1::2]                 # repeated rows
    x = la.asarray(a)
    for axis in (0, 1, -1):
        for kw in _UNIQUE_FORMS:
            _same_unique(la.unique(x * 1, axis=axis, **kw), np.unique(a * 1, axis=axis, **kw))
    _same_unique(np.unique(x * 2, return_counts=True), np.unique(a * 2, return_counts=True))
    _same(la.unique(x * 2, sorted=False), np.unique(a * 2, sorted=False))
    with pytest.raises(np.exceptions.AxisError):
        la.unique(x * 1, axis=2)
    with la.config(fallback="warn"), pytest.warns(la.FallbackWarning, match="unique"):
        la.unique(x * 3)


@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.float64])
def test_cumsum_dtype_argument(into, dtype):
    a = _data(dtype, (100,))
    x = la.asarray(a)
    for to in (np.float64, np.int64, np.complex128, np.float32):
        _same(la.cumsum(x * 2, dtype=to), np.cumsum(a * np.asarray(2, dtype), dtype=to))


def test_sort_nan_and_kinds(into):
    a = np.array([3.0, np.nan, -np.inf, 1.0, np.nan, -0.0, 0.0, np.inf, -2.0], np.float32)
    x = la.asarray(a)
    for kind in (None, "quicksort", "mergesort", "heapsort", "stable"):
        _same(la.sort(x + 1, kind=kind), np.sort(a + 1, kind=kind))      # NaNs last
    _same(la.sort(x * 1, stable=True), np.sort(a, stable=True))
    with np.errstate(invalid="ignore"):
        c = (a + 1j * a[::-1]).astype(np.complex64)
    _same(la.sort(la.asarray(c) + 0), np.sort(c + 0))


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4)])
def test_empty(into, shape):
    a = np.zeros(shape, np.float32)
    x = la.asarray(a)
    for axis in (None, 0, -1):
        _same(la.sort(x + 1, axis=axis), np.sort(a + 1, axis=axis))
        _same(la.cumsum(x + 1, axis=axis), np.cumsum(a + 1, axis=axis))


def test_zero_d_and_errors(into):
    x = la.asarray(np.float32(2.5))
    _same(la.cumsum(x + 1), np.cumsum(np.float32(3.5)))
    _same(la.sort(x + 1, axis=None), np.sort(np.float32(3.5), axis=None))
    with pytest.raises(np.exceptions.AxisError):
        la.sort(x + 1)
    y = la.asarray(np.ones((3, 4), np.float32))
    with pytest.raises(np.exceptions.AxisError):
        la.sort(y + 1, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        la.cumsum(y + 1, axis=-3)
    with pytest.raises(ValueError):
        la.sort(y + 1, kind="nonsense")


def test_numpy_functions_reach_them(into):
    a = _data(np.float32, (50,))
    x = la.asarray(a)
    _same(np.cumsum(x * 3), np.cumsum(a * np.float32(3)))
    _same(np.cumprod(x * 3, axis=0), np.cumprod(a * np.float32(3), axis=0))
    assert into["into"] == 2


def test_pending_input_stays_pending_and_correct(into):
    a = _data(np.float32, (1000,))
    x = la.asarray(a)
    y = la.sqrt(la.abs(x)) * 2 - 1
    s = la.sort(y)
    _same(s, np.sort(np.sqrt(np.abs(a)) * 2 - 1))
    _same(y, np.sqrt(np.abs(a)) * 2 - 1)          # the chain's own value, not the sorted one


def test_no_temporary_for_the_chain():
    n = 1 << 20
    x = la.asarray(np.random.default_rng(0).standard_normal(n, dtype=np.float32))
    with la.config(mode="lazy", device="cpu"):
        for fn in (la.sort, la.cumsum):
            fn(la.sqrt(la.abs(x)) * 2 - 1)
            tracemalloc.start()
            r = fn(la.sqrt(la.abs(x)) * 2 - 1)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            del r
            assert peak < 4 * n * 1.1, (fn, peak)      # the result's memory only
        la.unique(la.sqrt(la.abs(x)) * 2 - 1)
        tracemalloc.start()
        r = la.unique(la.sqrt(la.abs(x)) * 2 - 1)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        del r
        # the chain's memory, sorted (NumPy's copy of its input), the mask, the values:
        # NumPy's own peak on a computed input; no temporary for the chain besides
        assert peak < (4 + 1 + 1 + 4) * n * 1.1, peak


def test_explain_lists_library_calls():
    a = la.asarray(np.ones((64, 32), np.float32))
    bias = la.asarray(np.ones(64, np.float32))
    with la.config(mode="lazy", device="cpu"):
        plan = la.explain(lambda: la.sum(la.maximum(a @ a.T + bias, 0)))
    assert len(plan.kernels) == 1
    (call,) = plan.library_calls
    assert (call.name, call.bytes_read, call.bytes_written, call.flops) == \
        ("matmul", 2 * 64 * 32 * 4, 64 * 64 * 4, 2 * 64 * 64 * 32)
    assert "step 0: library call numpy.matmul" in str(plan) and "GFLOP" in str(plan)
    big = la.asarray(np.ones(1 << 16, np.float32))
    with la.config(mode="lazy", device="cpu"):
        plan = la.explain(la.sort(big + 1) * 2)
    assert [c.name for c in plan.library_calls] == ["sort"]
    assert plan.library_calls[0].flops is None and plan.library_calls[0].bytes_written == 4 << 16


def test_products_of_computed_arrays_keep_their_record():
    """A loop's ``a @ b`` / ``np.dot(a, b)`` of computed CPU arrays (NumPy's call at once,
    ``_value_ops.computed_product``) keeps the call's record on its result's node (the
    function, bytes read and written, flops), which ``la.explain`` of a later expression
    lists."""
    a = la.asarray(np.ones((64, 32)))
    v = la.asarray(np.ones(32))
    for product, record in [(lambda: a @ v, ("matmul", a.nbytes + v.nbytes, 64 * 8, 2 * 64 * 32)),
                            (lambda: la.dot(a, v), ("dot", a.nbytes + v.nbytes, 64 * 8, 2 * 64 * 32)),
                            (lambda: np.dot(v, v), ("dot", 2 * v.nbytes, 8, 2 * 32))]:
        out = product()
        assert out.is_materialized and out._node.origin[:4] == record
        if out.ndim:
            (call,) = la.explain(out * 2 + 1).library_calls
            assert (call.name, call.bytes_read, call.bytes_written, call.flops) == record


def test_matmul_epilogue_is_one_call_and_one_kernel(kernels):
    rng = np.random.default_rng(0)
    a_np, b_np = (rng.standard_normal((256, 256), dtype=np.float32) for _ in range(2))
    bias_np = rng.standard_normal(256, dtype=np.float32)
    a, b, bias = la.asarray(a_np), la.asarray(b_np), la.asarray(bias_np)
    got = la.sum(la.maximum(a @ b + bias, 0))
    want = np.sum(np.maximum(a_np @ b_np + bias_np, 0), dtype=np.float64)
    assert np.isclose(float(got), want, rtol=1e-5)
    assert len(kernels) == 1


# ----------------------------------------------------------------------------- cuda
_NEEDS_CUDA = pytest.mark.skipif(not la.cuda_available(),
                                 reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")


@pytest.fixture
def cuda_into(monkeypatch):
    """Lazy mode on cuda, counting the kernels run into memory given to them (run_into) and
    those run into new memory (run), and the library calls made (la.explain's steps)."""
    from lazyarr import _fallback
    from lazyarr.backends.cuda import backend as cuda_backend
    counts = {"into": 0, "run": 0, "calls": []}
    cls = cuda_backend.CudaBackend
    real_into, real_run, real_call = cls.run_into, cls.run, _fallback._library_call

    def run_into(self, lowered, out, **kw):
        done = real_into(self, lowered, out, **kw)
        counts["into"] += bool(done)
        return done

    def run(self, lowered):
        counts["run"] += 1
        return real_run(self, lowered)

    def library_call(path, operands, result):
        counts["calls"].append(path)
        return real_call(path, operands, result)

    real_on_cuda = _fallback.wrapped_on_cuda

    def wrapped_on_cuda(result, path, bytes_read=0):     # (a cuda call's record made at once)
        counts["calls"].append(path)
        return real_on_cuda(result, path, bytes_read)

    real_product = _fallback._computed_product_cuda

    def computed_product(path, a, b):      # (a product of computed cuda arrays: CuPy's at once)
        out = real_product(path, a, b)
        if out is not None:
            counts["calls"].append(path)
        return out

    monkeypatch.setattr(cls, "run_into", run_into)
    monkeypatch.setattr(cls, "run", run)
    monkeypatch.setattr(_fallback, "_library_call", library_call)
    monkeypatch.setattr(_fallback, "wrapped_on_cuda", wrapped_on_cuda)
    monkeypatch.setattr(_fallback, "_computed_product_cuda", computed_product)
    with la.config(mode="lazy", device="cuda"):
        yield counts


def _reset(counts):
    counts.update(into=0, run=0, calls=[])


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64], ids=str)
def test_products_of_computed_cuda_arrays_keep_their_record(dtype):
    """A loop's ``a @ b`` of computed cuda arrays (views included: covariance's
    ``data[:, i] @ data[:, i:M]``) is CuPy's call at once (``_fallback._computed_product_cuda``
    on a GPU; the general call on the simulated device), NumPy's values, and the result keeps
    the call's record; under ``fallback="error"`` it raises as every fallback call does."""
    rng = np.random.default_rng(3)
    m = (rng.random((40, 24)) * 8).astype(dtype)
    with la.config(mode="lazy", device="cuda"):
        data = la.asarray(m)
        for i in (0, 5, 23):
            out = data[:, i] @ data[:, i:]
            assert out.is_materialized
            assert out._node.origin[:4] == ("matmul", m[:, i].nbytes + m[:, i:].nbytes,
                                            m[:, i:].shape[1] * m.itemsize, 2 * (24 - i) * 40)
            np.testing.assert_allclose(out.to_numpy(), m[:, i] @ m[:, i:], rtol=1e-6)
        v = la.dot(data[0], data[1])
        assert v.shape == () and v.dtype == np.dtype(dtype)
        np.testing.assert_allclose(float(v), float(np.dot(m[0], m[1])), rtol=1e-6)
        sq = data.T @ data
        np.testing.assert_allclose(sq.to_numpy(), m.T @ m, rtol=1e-5)
        with la.config(fallback="error"), pytest.raises(la.FallbackError):
            data @ data.T


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.float32, np.float64], ids=str)
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_sort_of_a_pending_cuda_array(cuda_into, dtype, axis):
    """On cuda too the chain's kernel writes the sorted result's memory, which CuPy's
    ``ndarray.sort`` sorts in place (``cupy.sort`` copies its input first): one kernel, one
    library call, NumPy's values; the pending chain keeps its own value."""
    a = _data(dtype, (37, 29))
    x = la.asarray(a, device="cuda")
    y = (x - 1) * x          # (the simulator copies a reversed input first: no reversal here)
    want = np.sort((a - 1) * a, axis=axis)
    _same(la.sort(y, axis=axis), want)
    assert (cuda_into["into"], cuda_into["run"], cuda_into["calls"]) == (1, 0, ["sort"])
    assert not y.is_materialized
    _same(y, (a - 1) * a)
    _reset(cuda_into)
    _same(la.sort(la.asarray(want, device="cuda"), axis=axis), np.sort(want, axis=axis))
    assert (cuda_into["into"], cuda_into["run"], cuda_into["calls"]) == (0, 0, ["sort"])


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.float32, np.float64], ids=str)
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_scan_of_a_pending_cuda_array(cuda_into, name, dtype, axis):
    """cumsum/cumprod of a pending cuda array: its kernel writes the result's memory (of
    NumPy's result dtype: int64 for int8), which CuPy scans in place (CUB's scan for the
    flattened array, on a GPU; ``cupy.cumsum`` copies its input first): one kernel into
    memory, one library call; NumPy's values (integers exactly, floats within the scan's
    rounding, CUB adding in its own order); the chain stays pending."""
    a = _data(dtype, (37, 29))
    if name == "cumprod":
        a = (a % 3 + 1 if a.dtype.kind in "iu" else 1 + a / 64).astype(dtype)
    x = la.asarray(a, device="cuda")
    y, values = (x - 1, a - dtype(1)) if name == "cumsum" else (x * 1, a * dtype(1))
    want = getattr(np, name)(values, axis=axis)
    _reset(cuda_into)
    got = getattr(la, name)(y, axis=axis)
    assert (cuda_into["into"], cuda_into["run"], cuda_into["calls"]) == (1, 0, [name])
    assert got.dtype == want.dtype and got.shape == want.shape and got.device == "cuda"
    if want.dtype.kind in "iu":
        np.testing.assert_array_equal(got.to_numpy(), want)
    elif name == "cumsum":           # (the bound of test_library_calls_of_a_pending_cuda_chain)
        bound = 4 * (1 + np.log2(a.size)) * np.finfo(dtype).eps * np.abs(values).sum()
        np.testing.assert_allclose(got.to_numpy(), want, rtol=0, atol=bound)
    else:
        np.testing.assert_allclose(got.to_numpy(), want, rtol=4 * a.size * np.finfo(dtype).eps)
    assert not y.is_materialized


@pytest.mark.gpu
@_NEEDS_CUDA
def test_library_calls_of_a_pending_cuda_chain(cuda_into):
    """Issue 18's GPU rows (tools/peers/library_calls.py --device cuda): the chain
    ``sqrt(abs(x)) * 2 - 1`` is one kernel, writing new memory the library call reads
    (``argsort``, ``unique``, ``fft.rfft``: CuPy's call on it) or works in (``sort``,
    ``cumsum``); ``sum(maximum(A @ B + bias, 0))`` is the matmul and one fused kernel."""
    a = np.random.default_rng(3).standard_normal(1000).astype(np.float32)
    x = la.asarray(a, device="cuda")
    fa = np.sqrt(np.abs(a)) * np.float32(2) - np.float32(1)
    for name, into, run in (("sort", 1, 0), ("argsort", 1, 0), ("cumsum", 1, 0),
                            ("unique", 1, 0)):
        _reset(cuda_into)
        got = getattr(la, name)(la.sqrt(la.abs(x)) * 2 - 1)
        want = getattr(np, name)(fa, **({"stable": True} if name == "argsort" else {}))
        if name == "cumsum":
            # CuPy's float scan (CUB's) adds in a tree order, NumPy's left to right: the
            # partial sums differ in rounding (H200: 744 of 1,000 in the last bits), within
            # the sum's error bound (the scan is the library's: docs/testing.rst)
            assert got.dtype == want.dtype and got.shape == want.shape
            bound = 4 * (1 + np.log2(fa.size)) * np.finfo(np.float32).eps * np.abs(fa).sum()
            np.testing.assert_allclose(got.to_numpy(), want, rtol=0, atol=bound)
        else:
            _same(got, want)
        assert (cuda_into["into"], cuda_into["run"], cuda_into["calls"]) == (into, run, [name])
    _reset(cuda_into)
    got = la.fft.rfft(la.sqrt(la.abs(x)) * 2 - 1)
    assert got.device == "cuda" and got.dtype == np.fft.rfft(fa).dtype
    np.testing.assert_allclose(got.to_numpy(), np.fft.rfft(fa), rtol=1e-4, atol=1e-3)
    assert (cuda_into["into"], cuda_into["run"], cuda_into["calls"]) == (1, 0, ["fft.rfft"])
    rng = np.random.default_rng(4)
    a_np, b_np = (rng.standard_normal((48, 48), dtype=np.float32) for _ in range(2))
    bias_np = rng.standard_normal(48, dtype=np.float32)
    a_, b_, bias = (la.asarray(v, device="cuda") for v in (a_np, b_np, bias_np))
    _reset(cuda_into)
    got = la.sum(la.maximum(a_ @ b_ + bias, 0))
    want = np.sum(np.maximum(a_np @ b_np + bias_np, 0), dtype=np.float64)
    assert np.isclose(float(got), want, rtol=1e-5)
    assert (cuda_into["into"], cuda_into["run"], cuda_into["calls"]) == (0, 1, ["matmul"])
    plan = la.explain(lambda: la.sum(la.maximum(a_ @ b_ + bias, 0)))
    assert len(plan.kernels) == 1 and [c.name for c in plan.library_calls] == ["matmul"]


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float32, np.float64,
                                   np.complex64, np.bool_], ids=str)
def test_library_calls_of_computed_cuda_arrays(cuda_into, dtype):
    """sort/argsort/cumsum/unique of a computed cuda array: CuPy's call at once
    (``_fallback.computed_on_cuda``), no kernel of lazyarr's, one record each (bytes read:
    the operand's; written: the result's) as the general call made; NumPy's values; under
    ``fallback="error"`` each raises and under "warn" each warns, as every fallback call."""
    a = _data(dtype, (37, 29)) if dtype != np.bool_ else _data(np.float32, (37, 29)) > 0
    if a.dtype.kind in "fc":
        a.reshape(-1)[:4] = [np.nan, -0.0, 0.0, np.inf]
    x = la.asarray(a, device="cuda")
    assert x.is_materialized
    for name, kwargs in (("sort", {"axis": -1}), ("sort", {"axis": None}), ("sort", {"axis": 0}),
                         ("argsort", {"axis": None}), ("argsort", {"axis": 0}),
                         ("cumsum", {"axis": None}), ("cumsum", {"axis": 1}),
                         ("cumsum", {"axis": 0, "dtype": np.float64}), ("unique", {}),
                         ("unique", {"return_counts": True}), ("unique", {"equal_nan": False})):
        _reset(cuda_into)
        got = getattr(la, name)(x, **kwargs)
        assert (cuda_into["into"], cuda_into["run"], cuda_into["calls"]) == (0, 0, [name])
        want = getattr(np, name)(a, **kwargs, **({"stable": True} if name == "argsort" else {}))
        first = got[0] if isinstance(got, tuple) else got
        assert first.is_materialized and first.device == "cuda"
        assert first._node.origin[:4] == (name, a.nbytes, sum(
            w.nbytes for w in (want if isinstance(want, tuple) else (want,))), None)
        if name == "cumsum" and a.dtype.kind in "fc":
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-5, atol=1e-3)
        elif name == "argsort":     # (the simulated device's NumPy argsort is not stable)
            flat = a.reshape(-1) if kwargs["axis"] is None else a
            axis = -1 if kwargs["axis"] is None else kwargs["axis"]
            _same(np.take_along_axis(flat, got.to_numpy(), axis),
                  np.take_along_axis(flat, want, axis))
            if not SIMULATED:
                _same(got.to_numpy(), want)
        else:
            each_same(got, want, _same)
    assert x.is_materialized and np.array_equal(x.to_numpy(), a, equal_nan=True)
    for name in ("sort", "argsort", "cumsum", "unique"):
        with la.config(fallback="error"), pytest.raises(la.FallbackError):
            getattr(la, name)(x)
        with la.config(fallback="warn"), pytest.warns(la.FallbackWarning):
            getattr(la, name)(x)
    with pytest.raises(np.exceptions.AxisError):
        la.sort(x, axis=2)
    (call,) = la.explain(la.sort(x) * 2 + 1).library_calls
    assert (call.name, call.bytes_read, call.bytes_written) == ("sort", a.nbytes, a.nbytes)


@pytest.mark.gpu
@_NEEDS_CUDA
@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.float32, np.float64, np.complex128],
                         ids=str)
@pytest.mark.parametrize("shape", [(1000,), (23, 31), (0,), (4, 0), (1,)])
def test_argsort_and_unique_of_a_pending_cuda_array_in_its_memory(cuda_into, dtype, shape):
    """argsort and unique of a pending cuda array work in the memory its kernel writes (on a
    GPU: Thrust's argsort on it, CuPy's unique steps on it, no copy of it by CuPy; checked
    below with CuPy's own calls made to fail): NumPy's values, NaNs, signed zeros, empty
    arrays, every axis; the chain stays pending."""
    a = _data(dtype, shape)
    if a.dtype.kind in "fc" and a.size > 6:
        a.reshape(-1)[:6] = [np.nan, -0.0, 0.0, np.nan, np.inf, -np.inf]
    x = la.asarray(a, device="cuda")
    y, values = x * 1, a * dtype(1)
    # (an empty one: the general path, which computes y once)
    kernels = (lambda: (1, 0)) if a.size else (lambda: (cuda_into["into"], cuda_into["run"]))
    for axis in (-1, None, 0):
        _reset(cuda_into)
        got = la.argsort(y, axis=axis).to_numpy()
        assert (cuda_into["into"], cuda_into["run"], cuda_into["calls"]) == (*kernels(), ["argsort"])
        want = np.argsort(values, axis=axis, stable=True)
        assert got.dtype == want.dtype and got.shape == want.shape
        flat, ax = (values.reshape(-1), -1) if axis is None else (values, axis)
        _same(np.take_along_axis(flat, got, ax), np.take_along_axis(flat, want, ax))
        if not SIMULATED:     # (Thrust's argsort is stable: NumPy's stable indices)
            _same(got, want)
    for equal_nan in (True, False):
        _reset(cuda_into)
        got = la.unique(y, equal_nan=equal_nan)
        assert (cuda_into["into"], cuda_into["run"], cuda_into["calls"]) == (*kernels(), ["unique"])
        want = np.unique(values, equal_nan=equal_nan)
        assert got.dtype == want.dtype and got.shape == want.shape and got.device == "cuda"
        np.testing.assert_array_equal(got.to_numpy(), want)
        if a.dtype.kind == "f":         # (the first of a run of equal values: -0.0 here)
            _same(np.signbit(got.to_numpy()), np.signbit(want))
    assert not y.is_materialized or not a.size


@pytest.mark.gpu
@pytest.mark.skipif(SIMULATED or not la.cuda_available(), reason="needs CuPy: a GPU")
def test_argsort_and_unique_of_a_pending_cuda_array_copy_nothing(monkeypatch):
    """On a GPU the pending operand's memory is argsorted by Thrust, made unique by CuPy's
    steps and scanned by CUB where it is: ``cupy.argsort``, ``cupy.unique`` and
    ``cupy.cumsum`` (which copy their input first) are not called for the flattened array or
    the last axis (a change of CuPy's private API makes them called again: this test then
    fails, the values stay right)."""
    import cupy

    def refused(*args, **kwargs):
        raise AssertionError("CuPy's copying call was made")
    a = _data(np.float32, (64, 48))
    with la.config(mode="lazy", device="cuda"):
        x = la.asarray(a)
        monkeypatch.setattr(cupy, "argsort", refused)
        monkeypatch.setattr(cupy, "unique", refused)
        for axis in (-1, None, 1):
            want = np.argsort(a * 2, axis=axis, stable=True)
            _same(la.argsort(x * 2, axis=axis).to_numpy(), want)
        _same(la.unique(x * 2).to_numpy(), np.unique(a * 2))
        from cupy._core import _accelerator
        if _accelerator.ACCELERATOR_CUB in _accelerator.get_routine_accelerators():
            monkeypatch.setattr(cupy, "cumsum", refused)    # (CUB's scan in place: no copy)
            got = la.cumsum(x * 2)
            np.testing.assert_allclose(got.to_numpy(), np.cumsum(a * 2), rtol=1e-4, atol=1e-2)
