"""``x op= y`` computed straight into ``x``'s memory (lazyarr/_writes.py ``assign``, the CPU
backend's ``run_into``): one pass and no temporary where that is safe, the old copy path where
an input overlaps the target other than element for element. Values, dtypes and aliasing are
NumPy's either way."""
from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr.backends import cpu_fused

RNG = np.random.default_rng(5)


@pytest.fixture
def direct(monkeypatch):
    """Whether each ``run_into`` call wrote into the target (True) or declined (False)."""
    calls = []
    real = cpu_fused.CpuFusedBackend.run_into
    monkeypatch.setattr(cpu_fused.CpuFusedBackend, "run_into",
                        lambda self, lowered, out, **kw: calls.append(real(self, lowered, out, **kw))
                        or calls[-1])
    with la.config(mode="lazy", device="cpu"):
        yield calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=str)
def test_rank_one_updates_in_place(direct, dtype):
    A = (RNG.standard_normal((33, 21)) * 10).astype(dtype)
    u1, v1, u2, v2 = ((RNG.standard_normal(n) * 10).astype(dtype) for n in (33, 21, 33, 21))
    a = la.asarray(A.copy())
    view = np.asarray(a)                           # NumPy's view of a's memory
    a += la.outer(la.asarray(u1), la.asarray(v1)) + la.outer(la.asarray(u2), la.asarray(v2))
    want = A.copy()
    want += np.outer(u1, v1) + np.outer(u2, v2)
    assert direct == [True]
    np.testing.assert_array_equal(view, want)      # the same memory, NumPy's bits
    np.testing.assert_array_equal(np.asarray(a), want)
    assert np.asarray(a).dtype == want.dtype


def test_pending_readers_keep_their_values(direct):
    X = RNG.standard_normal((8, 9))
    a = la.asarray(X.copy())
    b = a * 2
    a += 1
    np.testing.assert_array_equal(np.asarray(b), X * 2)
    np.testing.assert_array_equal(np.asarray(a), X + 1)


@pytest.mark.parametrize("case", ["reversed", "shifted view target", "transposed target",
                                  "transposed input", "broadcast row of itself"])
def test_overlapping_operands_take_the_copy_path(direct, case):
    X = RNG.standard_normal((6, 6))
    want, a = X.copy(), la.asarray(X.copy())
    if case == "reversed":
        want += want[::-1]
        a += a[::-1]
    elif case == "shifted view target":
        w, t = want[1:], a[1:]
        w += want[:-1] * 2
        t += a[:-1] * 2
    elif case == "transposed target":
        w, t = want.T, a.T
        w += 1
        t += 1
    elif case == "transposed input":
        want += want.T * 1
        a += a.T * 1
    else:
        want *= want[2]
        a *= a[2]
    np.testing.assert_array_equal(np.asarray(a), want)
    if case in ("reversed", "broadcast row of itself"):
        # a view of the target read with another row stride: a 6x6 target is one chunk of the
        # write-back, computed whole before it is written (one pass); a bigger one declines,
        # unless the view is small enough to be copied first (the broadcast row: 600 elements)
        assert direct == [True]
        big, b = RNG.standard_normal((600, 600)), la.asarray(np.zeros((600, 600)))
        b[...] = big
        want, direct[:] = big + (big[::-1] if case == "reversed" else big[2]), []
        b += b[::-1] if case == "reversed" else b[2]
        np.testing.assert_array_equal(np.asarray(b), want)
        assert direct == [case != "reversed"]
    if case == "transposed target":
        assert direct == [True]        # read only as itself: written in place, row by row
    # (a pending `a[:-1] * 2` is computed by the write barrier first: then nothing overlaps)


def test_cast_back_and_errors_leave_the_target_as_numpy():
    f32 = la.asarray(np.arange(6, dtype=np.float32))
    f32 += la.asarray(np.full(6, 0.1)) * 3                 # float64 result cast back
    want = np.arange(6, dtype=np.float32)
    want += np.full(6, 0.1) * 3
    np.testing.assert_array_equal(np.asarray(f32), want)
    assert np.asarray(f32).dtype == np.float32
    i = la.asarray(np.arange(1, 7))
    with pytest.raises(ValueError, match="negative"):
        i **= la.asarray(np.array([1, 2, 3, -1, 2, 2])) * 1
    np.testing.assert_array_equal(np.asarray(i), np.arange(1, 7))   # nothing written


# ----------------------------------------------------------------------------- x[key] = value
# A pending temporary value of the target's dtype, written through a basic index, is computed
# straight into the target (cpu_fused's chunked write-back: every read still sees the old
# values, as NumPy's temporary would). Chunks are made a few rows small here (CHUNK_BYTES), so
# that edges between chunks are exercised on small arrays.

def jacobi(u):
    return 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


@pytest.fixture(params=[1 << 19, 2048], ids=["chunk 512K", "chunk 2K"])
def chunk_bytes(request, monkeypatch):
    monkeypatch.setattr(cpu_fused, "CHUNK_BYTES", request.param)
    return request.param


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads, every run"])
def pool(request, monkeypatch):
    """Runs on one thread, or on two with every elementwise run taking the pool (then a target
    that fits one chunk is cut into chunks per thread: _write_back_plan's ``threads``)."""
    if request.param > 1:
        monkeypatch.setattr(cpu_fused, "PARALLEL_WORK", 1)
    old = cpu_fused.set_num_threads(request.param)
    yield request.param
    cpu_fused.set_num_threads(old)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(300, 70), (120, 600)], ids=str)   # (rows of 600: by row)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_inplace_stencil_steps_as_numpy(direct, chunk_bytes, threads, shape, dtype):
    old = cpu_fused.set_num_threads(threads)
    try:
        W = RNG.random(shape).astype(dtype)
        want, u = W.copy(), la.asarray(W.copy())
        for _ in range(3):
            want[1:-1, 1:-1] = jacobi(want)
            u[1:-1, 1:-1] = jacobi(u)
        np.testing.assert_array_equal(np.asarray(u), want)
        assert direct == [True] * 3
    finally:
        cpu_fused.set_num_threads(old)


SHIFTS = [(dr, dc) for dr in (-3, -1, 0, 1, 2) for dc in (-2, 0, 1)]


@pytest.mark.parametrize("target_step", [1, -1], ids=["rows up", "rows down"])
@pytest.mark.parametrize("shift", SHIFTS, ids=str)
def test_writes_read_rows_above_and_below_as_numpy(direct, chunk_bytes, pool, shift,
                                                   target_step):
    """``u[k] = u[k shifted by (dr, dc)] * 2 + u[k]``, the target's rows in either order: the
    reads of the old rows next to every chunk's edges are kept."""
    dr, dc = shift
    W = RNG.standard_normal((64, 40))
    want, u = W.copy(), la.asarray(W.copy())
    key = (slice(3, -3) if target_step == 1 else slice(60, 2, -1), slice(2, -2))
    shifted = (slice(3 + dr, 61 + dr) if target_step == 1
               else slice(60 + dr, 2 + dr if dr > -3 else None, -1),
               slice(2 + dc, 38 + dc))
    want[key] = want[shifted] * 2 + want[key]
    u[key] = u[shifted] * 2 + u[key]
    np.testing.assert_array_equal(np.asarray(u), want)
    assert direct == [True]


@pytest.mark.parametrize("case", ["1-d both ways", "3-d rows", "reversed rows", "transposed",
                                  "a column", "another dtype"])
def test_other_overlaps_as_numpy(direct, chunk_bytes, pool, case):
    W = RNG.standard_normal((40, 30))
    want, u = W.copy(), la.asarray(W.copy())
    if case == "1-d both ways":
        want, u = W.ravel().copy(), la.asarray(W.ravel().copy())
        want[1:-1] = 0.5 * (want[:-2] + want[2:])
        u[1:-1] = 0.5 * (u[:-2] + u[2:])
        want[::-2][1:] = want[::-2][:-1] * 2 + 1          # a target of negative stride
        u[::-2][1:] = u[::-2][:-1] * 2 + 1
        expect = [True, True]
    elif case == "3-d rows":
        want, u = W.reshape(4, 10, 30).copy(), la.asarray(W.reshape(4, 10, 30).copy())
        want[1:, :, 1:] = want[:-1, :, :-1] + want[1:, :, 1:] * 3
        u[1:, :, 1:] = u[:-1, :, :-1] + u[1:, :, 1:] * 3
        expect = [True]
    elif case == "reversed rows":      # another row stride: the copy path, unless the target
        want[1:-1] = want[-2:0:-1] * 2  # is one chunk (computed whole before it is written)
        u[1:-1] = u[-2:0:-1] * 2
        expect = [38 * 30 * 8 <= chunk_bytes]
    elif case == "transposed":
        want[:30, :30] = want[:30, :30].T + 1
        u[:30, :30] = u[:30, :30].T + 1
        expect = [30 * 30 * 8 <= chunk_bytes]
    elif case == "a column":                       # ``a[:, j] += b``: the column in place
        column = want[:, 3]
        column += np.arange(40.0)
        view = u[:, 3]
        view += la.asarray(np.arange(40.0)) * 1
        u[:, 3] = view
        expect = [True]
    else:                                          # float32 value into float64: NumPy's cast
        want[1:] = want[:-1].astype(np.float32) * np.float32(2)
        u[1:] = u[:-1].astype(np.float32) * np.float32(2)
        expect = []
    np.testing.assert_array_equal(np.asarray(u), want)
    assert direct == expect


@pytest.mark.parametrize("case", ["floyd-warshall", "a row as a column", "too big to copy"])
def test_small_reads_of_the_target_without_a_row_bound_are_copied_first(direct, chunk_bytes,
                                                                          pool, case):
    """An input that reads the target with no row bound (a broadcast row of it, its row read
    as a column) and holds at most 1/8 of the target's elements is copied first, as NumPy
    copies an input that overlaps a ufunc's output, and the value is written in place; a
    bigger one (a transpose) keeps the temporary, unless the target is one chunk."""
    if case == "floyd-warshall":     # path[:] = minimum(path, add.outer(path[:, k], path[k]))
        P = RNG.integers(0, 50, (60, 60)).astype(np.int32)
        want, path = P.copy(), la.asarray(P.copy())
        for k in (0, 7, 59):
            want[:] = np.minimum(want, np.add.outer(want[:, k], want[k]) - 3)   # (row k changes)
            path[:] = la.minimum(path, la.add.outer(path[:, k], path[k]) - 3)
        got, expect = path, [True] * 3
    elif case == "a row as a column":    # row i adds old u[0, i]: row 0 is written first
        want, u = RNG.standard_normal((40, 30)), None
        u = la.asarray(want.copy())
        want[:30] = want[:30] + want[0, :30][:, None] * 2
        u[:30] = u[:30] + u[0, :30][:, None] * 2
        got, expect = u, [True]
    else:
        want = RNG.standard_normal((30, 30))
        u = la.asarray(want.copy())
        want[:] = want + want.T * 2
        u[:] = u + u.T * 2
        got, expect = u, [30 * 30 * 8 <= chunk_bytes]
    np.testing.assert_array_equal(np.asarray(got), want)
    assert direct == expect


STRIDED_TARGETS = {
    "interior of a 2-d grid": ((201, 201), (slice(1, -1), slice(1, -1)), 1608),
    "rows down": ((90, 301), (slice(None, None, -1), slice(1, None)), -2408),
    "every other row": ((80, 300), (slice(None, None, 2), slice(0, -1)), 4800),
    "3-d, whole last two dims": ((50, 40, 300), (slice(2, -2), slice(None), slice(3, -3)), 2400),
    "3-d, rows apart in two dims": ((7, 30, 301), (slice(None), slice(1, -1), slice(1, -1)), 0),
}


@pytest.mark.parametrize("case", list(STRIDED_TARGETS), ids=str)
@pytest.mark.parametrize("loops", ["off", "wait"])
def test_a_strided_target_that_no_input_reads_is_written_in_place(direct, pool, monkeypatch,
                                                                 case, loops):
    """``p[1:-1, 1:-1] = f(pn, b)`` with ``pn`` other memory: the kernel writes the view's rows
    where they lie (``out_ostride``: the outer index's byte step), without the write-back's
    stage; a target whose outer dims are not one step apart takes the write-back. NumPy's
    bits either way, with the compiled loop or the VM's instructions."""
    shape, key, ostride = STRIDED_TARGETS[case]
    steps = []
    real = cpu_fused._execute
    monkeypatch.setattr(cpu_fused, "_execute", lambda *a, **kw: steps.append(
        (kw.get("out_ostride", 0), kw.get("writeback") is not None)) or real(*a, **kw))
    P, Q = RNG.standard_normal(shape), RNG.standard_normal(shape)
    want, p, q = P.copy(), la.asarray(P.copy()), la.asarray(Q)
    sub = tuple(slice(0, n) for n in want[key].shape)
    with la.config(cpu_loops=loops):
        for _ in range(3):
            want[key] = (Q[sub] * 2.5 + Q[sub] ** 2) / 3.0 - Q[sub]
            p[key] = (q[sub] * 2.5 + q[sub] ** 2) / 3.0 - q[sub]
    np.testing.assert_array_equal(np.asarray(p), want)
    assert direct == [True] * 3
    assert steps == [(ostride, not ostride)] * 3


def test_a_strided_target_written_in_place_reports_numpy_warnings(direct):
    P = RNG.standard_normal((120, 130))
    want, p, q = P.copy(), la.asarray(P.copy()), la.asarray(np.zeros((118, 128)))
    with np.errstate(divide="warn"):
        with pytest.warns(RuntimeWarning, match="divide by zero"):
            p[1:-1, 1:-1] = 1.0 / (q * 2.0)
    want[1:-1, 1:-1] = np.inf
    np.testing.assert_array_equal(np.asarray(p), want)
    assert direct == [True]


def test_a_target_that_fits_one_chunk_is_cut_for_every_thread():
    """A write of a 201² grid (317 KB, one chunk of CHUNK_BYTES) ran as one work item, on one
    thread: with the pool it is cut into WRITE_BACK_ITEMS chunks per thread, each at least 4x
    its edge rows; an overlap without a bound keeps the one chunk (computed whole first)."""
    u = np.zeros((201, 201))
    t, v = u[1:-1, 1:-1], u.copy()
    views = [v[1:-1, 2:], v[1:-1, :-2], v[2:, 1:-1], v[:-2, 1:-1]]
    plan = cpu_fused._write_back_plan
    assert plan(views, t, [False] * 4, threads=1) == (199, 0, 0)
    assert plan(views, t, [False] * 4, threads=2) == (25, 0, 0)          # 8 chunks
    stencil = [u[1:-1, 2:], u[1:-1, :-2], u[2:, 1:-1], u[:-2, 1:-1]]
    assert plan(stencil, t, [True] * 4, threads=2) == (25, 1, 1)
    assert plan([u[-2:0:-1, 1:-1]], t, [True], threads=2) == (199, 0, 0)  # no bound
    assert plan([u[2:5, 1:-1]], u[1:4, 1:-1], [True], threads=2) == (3, 0, 0)  # 4x the edges


def test_a_value_held_elsewhere_keeps_its_values(direct):
    W = RNG.standard_normal((50, 60))
    u = la.asarray(W.copy())
    v = u[:-2] * 2                      # a variable: written through the temporary and copy
    w = v + 1                           # a pending reader of it
    u[1:-1] = v
    np.testing.assert_array_equal(np.asarray(v), W[:-2] * 2)
    np.testing.assert_array_equal(np.asarray(w), W[:-2] * 2 + 1)
    a = la.asarray(W.copy())
    b = a + 1                           # the node that ``a += 1`` builds again (interned)
    a += 1
    np.testing.assert_array_equal(np.asarray(b), W + 1)
    np.testing.assert_array_equal(np.asarray(a), W + 1)
    assert True not in direct


def test_without_exact_reference_counts_every_write_takes_the_safe_side(direct, monkeypatch):
    """Where ``sys.getrefcount`` may undercount (CPython 3.14 borrows stack references:
    ``_views.EXACT_REFCOUNTS``), no write goes straight into the target on a reference count's
    word, and the values stay NumPy's: the temporary-and-copy path, every pending reader
    computed before the write."""
    from lazyarr import _views
    monkeypatch.setattr(_views, "EXACT_REFCOUNTS", False)
    W = RNG.standard_normal((40, 30))
    u, want = la.asarray(W.copy()), W.copy()
    for _ in range(3):
        u[1:-1, 1:-1] = 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        want[1:-1, 1:-1] = 0.2 * (want[1:-1, 1:-1] + want[:-2, 1:-1] + want[2:, 1:-1]
                                  + want[1:-1, :-2] + want[1:-1, 2:])
    np.testing.assert_array_equal(np.asarray(u), want)
    a = la.asarray(W.copy())
    b = a + 1
    a += 1
    r = a * 3                           # a pending reader, then a write into a
    a[:5] = 0
    np.testing.assert_array_equal(np.asarray(b), W + 1)
    np.testing.assert_array_equal(np.asarray(r), (W + 1) * 3)
    assert True not in direct


def test_a_floating_point_error_that_raises_writes_nothing(direct):
    W = RNG.standard_normal((50, 60))
    u = la.asarray(W.copy())
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        u[1:] = 1 / (u[:-1] - u[:-1])
    np.testing.assert_array_equal(np.asarray(u), W)
    with np.errstate(divide="ignore"):
        u[1:] = 1 / (u[:-1] - u[:-1])
    assert np.isinf(np.asarray(u)[1:]).all() and direct == [True]


def _peak(fn):
    import tracemalloc
    fn()                                # warm the caches
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_writes_into_a_computed_array_allocate_no_array_of_its_size():
    """Issue 15: ``u[1:-1, 1:-1] = f(u)``, ``x[mask] = 0``, ``a[:, j] += b`` and ``x[1:-1] = y``
    allocate nothing the size of the target (tracemalloc sees NumPy's allocations); the
    mask is the one allocation NumPy makes too."""
    W = RNG.random((512, 512)).astype(np.float32)
    u = la.asarray(W.copy())

    def stencil():
        u[1:-1, 1:-1] = jacobi(u)

    assert _peak(stencil) < W.nbytes // 8
    x = la.asarray(W.copy())

    def masked():
        x[x > 0.5] = 0

    assert _peak(masked) < W.size + W.nbytes // 8          # the bool mask, as NumPy's
    b = la.asarray(RNG.random(512).astype(np.float32))

    def column():
        x[:, 7] += b * 2

    assert _peak(column) < W.nbytes // 8
    y = la.asarray(RNG.random((510, 512)).astype(np.float32))

    def rows():
        x[1:-1] = y
        x[1:-1] = y * 2 + 1

    assert _peak(rows) < W.nbytes // 8
    path = la.asarray((W * 100).astype(np.int32))

    def floyd_warshall_step():       # the row it reads in every row: a copy of 512 elements
        path[:] = la.minimum(path, la.add.outer(path[:, 5], path[5]))

    assert _peak(floyd_warshall_step) < W.nbytes // 8


def test_the_write_back_plan_reads_row_extents_and_views_as_numpy_lays_them_out():
    """cpu_fused._write_back_plan's compiled helpers (_cpu_vm.row_extent, data_address) against
    NumPy's own layout: the first and last byte row 0 of a view touches (negative and zero
    strides, 1-d), and "the same view" only for the same elements."""
    base = np.arange(7 * 9 * 5, dtype=np.float32).reshape(7, 9, 5)
    views = [base, base[1:-1, 2:], base[::-1], base[:, ::-2, 1:], base[2:3, :0], base[0, 0],
             base[:, 3], np.broadcast_to(base[:1, :1, :], (4, 9, 5)), base.T]
    for v in views:
        assert cpu_fused._cpu_vm.data_address(v) == v.ctypes.data
        if v.size:
            row = v[0, ...]                         # (of a 1-d array: a 0-d view)
            lo, hi = np.lib.array_utils.byte_bounds(row)
            assert cpu_fused._row_extent(v) == (lo, hi - 1), v.strides
    assert cpu_fused._same_view(base[1:], base[1:])
    assert not cpu_fused._same_view(base[1:], base[:-1])
    assert not cpu_fused._same_view(base[1:].view(np.int32), base[1:])
