"""Assignment into arrays with NumPy's aliasing (lazyarr/_writes.py, docs/views-and-writes.rst).

Every case runs the same steps on NumPy arrays and on LazyArrays and compares every array a
script could still look at, after every step: the target, its views, earlier pending
expressions, and the user's NumPy memory.
"""
from __future__ import annotations

import gc

import numpy as np
import pytest
from helpers import DTYPES, GPU_DTYPES, assert_same, pending, random_array
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import lazyarr as la

BASIC_KEYS = [0, -1, slice(None), slice(1, None), slice(None, None, -1), slice(4, 0, -2),
              (Ellipsis, 1), (1, slice(None, None, 2)), (slice(None), None, 0), ()]
ADVANCED_KEYS = [[0, 2, -1], (np.array([1, 0]), np.array([2, 3])), "mask"]


def _key(key, base):
    return base > np.median(base) if isinstance(key, str) else key


def _lazy_key(key):
    return tuple(la.asarray(k) if isinstance(k, np.ndarray) else k for k in key) \
        if isinstance(key, tuple) else key


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("key", BASIC_KEYS + ADVANCED_KEYS, ids=repr)
def test_setitem_matches_numpy_on_every_dtype(dtype, key, mode, rng):
    base = random_array(rng, dtype, (5, 4))
    value = random_array(rng, dtype, ())
    want = base.copy()
    k = _key(key, base)
    want[k] = value
    for make in (lambda: la.asarray(base.copy()), lambda: pending(base.copy())):
        x = make()                                   # computed, then pending
        lk = la.asarray(k) if isinstance(k, np.ndarray) else _lazy_key(k)
        x[lk] = value
        assert_same(np.asarray(x), want)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_values_broadcast_and_cast_unsafely_as_numpy(dtype, mode, rng):
    base = random_array(rng, dtype, (3, 4))
    row = random_array(rng, np.dtype(np.float64), (4,))
    want, x = base.copy(), la.asarray(base.copy())
    with np.errstate(all="ignore"):
        want[1:] = row                                 # float64 row into any dtype: unsafe
        x[1:] = la.asarray(row) * 1                    # a pending value: computed first
    assert_same(np.asarray(x), want)


def test_negative_stride_views_empty_and_0d(mode):
    a = np.arange(12.0).reshape(3, 4)
    x = la.asarray(a.copy())
    v = x[::-1, ::-2]                                  # a view with negative strides
    v[0] = -1.0
    want = a.copy()
    want[::-1, ::-2][0] = -1.0
    assert_same(np.asarray(x), want)
    x[:0] = 5.0                                        # an empty region: nothing changes
    assert_same(np.asarray(x), want)
    z = la.asarray(np.array(2.5))
    z[()] = 7.0
    z[...] += 1.0
    assert float(z) == 8.0 and z.shape == ()


# ----------------------------------------------------------------------------- aliasing
def test_views_see_writes_and_pending_readers_keep_old_values(mode):
    a = la.asarray(np.arange(6.0))
    before = a + 1                                     # pending, reads a's memory
    held = a * 2                                       # pending, held by a variable ...
    above = held + 1                                   # ... and read by another pending one
    view = a[1:4]
    a[0] = 50.0
    a[1:3] += 10.0
    assert_same(np.asarray(a), np.array([50.0, 11, 12, 3, 4, 5]))
    assert_same(np.asarray(view), np.array([11.0, 12, 3]))
    assert_same(np.asarray(before), np.arange(6.0) + 1)
    assert_same(np.asarray(held), np.arange(6.0) * 2)
    assert_same(np.asarray(above), np.arange(6.0) * 2 + 1)


def test_the_barrier_computes_only_the_pending_expressions_held_from_outside():
    """The write barrier's candidates (``_node.held_pending``, compiled): the pending nodes
    something besides pending parents holds, in build order, never the value being written;
    a part held only by its parent's kernel is left to that kernel."""
    from lazyarr import _node
    gc.collect()    # pending nodes an earlier test left in a reference cycle (a traceback's frame)
    # (and any an earlier test in this process still holds: not this test's to count; seen
    # under xdist, a 0-d std and signbit of another module's)
    before = {id(n) for n in _node.held_pending(None, False)}

    def held_here(node, exact):
        return [n for n in _node.held_pending(node, exact) if id(n) not in before]

    x = la.asarray(np.arange(6.0))
    with la.config(eager_max_size=0):
        part = x - 1                            # held by a variable and by ``outer``
        outer = part * 3
        inner = (x + 2) * 4                     # its (x + 2) is held by ``inner`` alone
        held = held_here(None, True)
        assert held == [part._node, outer._node, inner._node]
        assert held_here(outer._node, True) == [part._node, inner._node]
        assert len(held_here(None, False)) == 4      # (inexact counts: every one)
        x[0] = 100.0                            # all three read x: computed first ...
        assert part.is_materialized and inner.is_materialized
        assert not outer.is_materialized        # ... but outer, which reads part's memory now
        assert_same(np.asarray(outer), (np.arange(6.0) - 1) * 3)
        assert_same(np.asarray(inner), (np.arange(6.0) + 2) * 4)


class _PointerArray:
    """An array known by its pointer only, as a CuPy array is to the barrier: ``data.ptr``,
    ``shape``, ``strides``, ``itemsize``, ``dtype`` (here a NumPy array's, so that the test
    runs without a GPU: CUDA's unified addresses keep host and device pointers apart)."""

    def __init__(self, a):
        self.a = a
        self.data = type("Pointer", (), {"ptr": a.ctypes.data})()
        self.shape, self.strides, self.itemsize, self.dtype = a.shape, a.strides, a.itemsize, a.dtype
        self.size = a.size


def test_the_barrier_filters_gpu_memory_by_its_pointers():
    """A write into GPU memory asks ``held_pending`` with a CuPy array: its byte extent comes
    from its pointer, shape and strides, so the held pending nodes that read elsewhere are left
    out in C as for NumPy memory (before 2026-12-06f every one went to Python's ``_reads``:
    half of vadv's host time on an H100), and leaves that are GPU arrays are tested the same
    way. Anything without a pointer keeps every candidate (the safe side)."""
    from lazyarr import _node
    gc.collect()
    base = np.arange(40.0)
    x, other = la.asarray(base), la.asarray(np.ones(40))
    with la.config(eager_max_size=0):
        unrelated = [other * k for k in range(5)]
        through_view = x[::-2] * 2
        deep = ((x[10:20] + 1) * 3 - other[:10]) / 2
        for memory, readers in ((base[:5], [through_view]), (base[12:13], [deep, through_view]),
                                (base[:0], [])):
            held = _node.held_pending(None, True, _PointerArray(memory))
            assert held == _node.held_pending(None, True, memory)
            assert {id(r._node) for r in readers} <= {id(n) for n in held}
            assert not any(u._node in held for u in unrelated)
        everything = _node.held_pending(None, True, object())
        assert all(u._node in everything for u in unrelated)
        # a pending node whose leaf is a pointer array: read where the extents overlap
        gpu_leaf = _node.leaf(_PointerArray(base[20:30]), "cpu")
        reader = _node.op_node("negative", gpu_leaf.dtype, gpu_leaf.shape, "cpu", (gpu_leaf,))
        keep = [reader]   # (held from outside: a candidate)
        assert reader in _node.held_pending(None, False, _PointerArray(base[25:26]))
        assert reader not in _node.held_pending(None, False, _PointerArray(base[30:]))
        del keep


def test_the_barrier_looks_only_at_pending_expressions_that_may_read_the_target():
    """A write's barrier asks ``held_pending`` for the held pending nodes whose inputs' bytes
    may overlap the target's (np.may_share_memory's answer, in C), so thousands of unrelated
    live arrays cost a write little (a bug hunt measured 1.5 ms a write with 1,000 alive):
    materialized nodes leave the intern table as the walk meets them, constants have a table
    of their own. Readers through views, reversed strides and deep expressions are found."""
    from lazyarr import _node
    gc.collect()
    base = np.arange(40.0)
    x, other = la.asarray(base), la.asarray(np.ones(40))
    with la.config(eager_max_size=0):
        unrelated = [other * k for k in range(50)]
        through_view = x[::-2] * 2                       # reads x backwards
        deep = ((x[10:20] + 1) * 3 - other[:10]) / 2     # x two levels down
        apart = la.asarray(base[30:]) + 1                # another wrapper of x's memory
        held = _node.held_pending(None, True, base[:5])
        assert through_view._node in held and deep._node not in held and apart._node not in held
        assert not any(u._node in held for u in unrelated)
        assert apart._node in _node.held_pending(None, True, base[35:])
        assert deep._node in _node.held_pending(None, True, base[12:13])
        assert _node.held_pending(None, True, base[:0]) == []        # nothing written
        for u in unrelated[:10]:
            u.to_numpy()
        _node.held_pending(None, True, base)
        assert not any(r() is not None and r().data is not None for r in _node._interned.values())
        assert not any(r() is not None and r().op == "scalar" for r in _node._interned.values())
        x[::2] = -1.0                                    # the barrier computes the readers first
        assert_same(np.asarray(through_view), np.arange(40.0)[::-2] * 2)
        assert_same(np.asarray(deep), ((np.arange(40.0)[10:20] + 1) * 3 - 1) / 2)
        assert all(u._node.data is None for u in unrelated[10:])   # left pending


def test_inplace_operator_on_a_name_and_its_view_as_numpy(mode):
    x = la.asarray(np.arange(4.0))
    y, v = x, x[::2]
    x += 1
    assert y is x
    assert_same(np.asarray(v), np.array([1.0, 3.0]))
    v *= 10                                            # through the view into x
    assert_same(np.asarray(x), np.array([10.0, 2.0, 30.0, 4.0]))


def test_the_users_numpy_memory_is_written_and_exports_see_writes(mode):
    user = np.zeros(3)
    x = la.asarray(user)
    x[1] = 4.0
    assert user[1] == 4.0                              # la.asarray wraps, as np.asarray
    exported = np.asarray(x)
    x += 1
    assert_same(exported, np.array([1.0, 5.0, 1.0]))


def test_equal_expressions_built_twice_are_not_aliases(mode):
    x = la.asarray(np.arange(3.0))
    p, q = x + 1, x + 1                                # one interned node, two arrays
    p[0] = 100.0
    assert_same(np.asarray(p), np.array([100.0, 2.0, 3.0]))
    assert_same(np.asarray(q), np.array([1.0, 2.0, 3.0]))
    r = x.astype(x.dtype)
    r[1] = -1.0
    assert_same(np.asarray(x), np.arange(3.0))


def test_a_pending_inplace_target_stays_pending():
    x = la.asarray(np.arange(3.0)) * 2
    x += 1
    x *= 3
    assert not x.is_materialized
    assert_same(np.asarray(x), (np.arange(3.0) * 2 + 1) * 3)


# ----------------------------------------------------------------------------- bad input
BAD_WRITES = [
    ("index out of bounds", lambda x: x.__setitem__(7, 1.0), IndexError),
    ("too many indices", lambda x: x.__setitem__((0, 0, 0), 1.0), IndexError),
    ("float index", lambda x: x.__setitem__(1.5, 1.0), IndexError),
    ("shape mismatch", lambda x: x.__setitem__(slice(None), np.ones((2, 3))), ValueError),
    ("mask of the wrong shape", lambda x: x.__setitem__(np.ones(4, bool), 1.0), IndexError),
]


@pytest.mark.parametrize("what, write, exc", BAD_WRITES, ids=[b[0] for b in BAD_WRITES])
def test_bad_writes_raise_numpys_exception_and_write_nothing(what, write, exc, mode):
    a = np.arange(6.0).reshape(3, 2)
    with pytest.raises(exc):
        write(a.copy())
    x = la.asarray(a.copy())
    with pytest.raises(exc):
        write(x)
    assert_same(np.asarray(x), a)


def test_casting_errors_as_numpy(mode):
    i = la.asarray(np.arange(3, dtype=np.int8))
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        i[0] = 300
    with pytest.raises(TypeError, match="same_kind"):        # NumPy's UFuncTypeError
        i += 1.5
    assert_same(np.asarray(i), np.arange(3, dtype=np.int8))
    ro = la.asarray(np.broadcast_to(np.arange(3.0), (2, 3)))
    with pytest.raises(ValueError, match="read-only"):
        ro[0, 0] = 1.0


def test_a_write_of_a_view_into_itself_is_skipped():
    """``x[key] = v`` where ``v`` is the very view ``x[key]`` of ``x``'s memory (the write that
    ends ``x[1:, :] -= d``) changes nothing and is skipped (``_writes._writes_itself``), as
    NumPy's assignment skips it; another view of the same bytes (other strides, a reversed
    one, another dtype) is written, and a read-only target still raises NumPy's error."""
    from lazyarr import _writes
    base = np.arange(24.0).reshape(4, 6)
    x = la.asarray(base.copy())
    memory = np.asarray(x)
    assert _writes._writes_itself(x, (slice(1, None), slice(None)), memory[1:, :])
    assert _writes._writes_itself(x, 2, memory[2])
    assert not _writes._writes_itself(x, (2, 3), memory[2:3, 3:4].reshape(()))   # (an element)
    x[2, 3] = x[2, 3]
    assert not _writes._writes_itself(x, (slice(1, None), slice(None)), memory[:-1, :])
    assert not _writes._writes_itself(x, (slice(None), slice(None, None, -1)), memory[:, ::1])
    assert not _writes._writes_itself(x, (slice(None), slice(None, 3)), memory.view(np.int64)[:, :3])
    assert not _writes._writes_itself(x, ([0, 1],), memory[[0, 1]])       # not a basic index
    assert not _writes._writes_itself(x, (slice(None), 9), memory[:, 0])  # NumPy's IndexError later
    with pytest.raises(IndexError):
        x[:, 9] = 1.0
    # augmented assignments through a view that does not own its memory take the Python path
    want = base.copy()
    view, want_view = x[1:], want[1:]
    for _ in range(3):
        view[1:, :] -= 0.5 * (view[1:, :] - view[:-1, :])
        want_view[1:, :] -= 0.5 * (want_view[1:, :] - want_view[:-1, :])
    assert_same(np.asarray(x), want)
    assert_same(np.asarray(view), want_view)
    ro = la.broadcast_to(la.asarray(np.arange(3.0)), (2, 3))
    with pytest.raises(ValueError, match="read-only"):
        ro[0] = ro[0]
    with pytest.raises(ValueError, match="read-only"):
        np.broadcast_to(np.arange(3.0), (2, 3))[0] = np.broadcast_to(np.arange(3.0), (2, 3))[0]


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
def test_augmented_writes_on_cuda_skip_the_write_into_itself(monkeypatch, rng):
    """On cuda the write that ends ``x[1:, :] -= d`` is the Python path's: it is recognised as a
    write of ``x[1:, :]`` into itself and skipped (no barrier, no CuPy ``__setitem__``), with
    NumPy's values, also with a pending reader of ``x`` alive (it keeps the old values: the
    subtraction's own write ran the barrier)."""
    from lazyarr import _writes
    skipped = []
    real = _writes._writes_itself

    def spy(*args):
        out = real(*args)
        skipped.append(out)
        return out
    monkeypatch.setattr(_writes, "_writes_itself", spy)
    base, d = rng.random((6, 5)), rng.random((5, 5))
    want = base.copy()
    with la.config(device="cuda"):
        x, dd = la.asarray(base.copy()), la.asarray(d)
        reader = pending(x)
        for _ in range(2):
            x[1:, :] -= 0.5 * (dd - x[:-1, :])
            want[1:, :] -= 0.5 * (d - want[:-1, :])
        assert_same(np.asarray(x), want)
        assert_same(np.asarray(reader), base)
    assert True in skipped


# ----------------------------------------------------------------------------- cuda
@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
@pytest.mark.parametrize("dtype", GPU_DTYPES, ids=str)
def test_writes_on_cuda_match_numpy(dtype, rng):
    base = random_array(rng, dtype, (5, 4))
    want = base.copy()
    with la.config(device="cuda"):
        x = la.asarray(base.copy())
        reader = pending(x)                           # reads x's memory
        view = x[1:, ::-1]
        mask = base > np.median(base)
        for key in (0, (slice(1, None), slice(None, None, -1)), mask):
            want[key] = base[0, 0]
            x[la.asarray(key) if isinstance(key, np.ndarray) else key] = base[0, 0]
        assert x.device == "cuda"
        assert_same(np.asarray(x), want)
        assert_same(np.asarray(view), want[1:, ::-1])
        assert_same(np.asarray(reader), base)


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
@pytest.mark.parametrize("dtype", GPU_DTYPES, ids=str)
def test_pending_values_are_computed_into_their_target_on_cuda(dtype, rng, monkeypatch):
    """A pending value is computed straight into the memory a basic index selects, through its
    strides (CudaBackend.run_into); one that reads that memory (a stencil written into its own
    array) goes through a temporary and a copy kernel; a negative stride falls back to CuPy's
    copy. Every case against NumPy, with a view of the target alive."""
    from lazyarr import _views
    from lazyarr.backends.cuda.backend import CudaBackend

    written = []
    run_into = CudaBackend.run_into

    def recording(self, lowered, out, **kw):
        written.append(run_into(self, lowered, out, **kw))
        return written[-1]
    monkeypatch.setattr(CudaBackend, "run_into", recording)
    base, other = random_array(rng, dtype, (9, 12)), random_array(rng, dtype, (9, 6))
    want = base.copy()
    with la.config(device="cuda"), np.errstate(all="ignore"):
        x, y = la.asarray(base.copy()), la.asarray(other)
        view = x[::2]
        x[:, ::2] = y * y                                   # strided, reads other memory
        want[:, ::2] = other * other
        x[1:-1, 1:] = x[:-2, :-1] + x[2:, 1:]               # reads the memory it writes
        want[1:-1, 1:] = want[:-2, :-1] + want[2:, 1:]
        x[::-1, 0] = y[:, 0] * y[:, 1]                      # a negative stride: CuPy copies
        want[::-1, 0] = other[:, 0] * other[:, 1]
        x[2] = y[2, 0] * y[3, 1]                            # a 0-d value broadcast into a row
        want[2] = other[2, 0] * other[3, 1]
        assert_same(np.asarray(x), want)
        assert_same(np.asarray(view), want[::2])
    if _views.EXACT_REFCOUNTS:
        assert written[:3] == [True, True, False]


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
def test_a_repeated_write_through_a_temporary_replays_its_launches(rng, monkeypatch):
    """A stencil step written into its own array (a temporary, then a copy kernel) is kept
    for the next step (CudaBackend._through_temporary): a step of the same expression from
    the same kept views into the same kept view launches both kernels again, with no
    allocation. Every step against NumPy; a step with another constant, under another
    error state, or into another array is no replay of the kept one, and right too."""
    from lazyarr import _views
    from lazyarr.backends.cuda.backend import _Through

    hits = []
    replays = _Through.replays

    def counting(self, *args):
        hits.append(replays(self, *args))
        return hits[-1]
    monkeypatch.setattr(_Through, "replays", counting)
    base = random_array(rng, np.float32, (12, 10))
    want = base.copy()

    def step(a, c):
        a[1:-1, 1:-1] = c * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, 2:])

    with la.config(device="cuda"):
        u = la.asarray(base.copy())
        for c in (0.25, 0.25, 0.25, 0.5, 0.5):
            step(u, c)
            step(want, c)
            assert_same(np.asarray(u), want)
        with np.errstate(all="ignore"):             # unchecked kernels: not the kept ones
            step(u, 0.5)
            step(want, 0.5)
        other, other_want = la.asarray(base.copy()), base.copy()
        step(other, 0.5)
        step(other_want, 0.5)
        assert_same(np.asarray(u), want)
        assert_same(np.asarray(other), other_want)
    if _views.EXACT_REFCOUNTS:       # (steps 1-2 read views made by the Python path, then kept)
        assert sum(hits) == 2


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
def test_a_kept_write_replays_for_other_buffers_of_its_layouts(rng, monkeypatch):
    """floyd_warshall's step reads another column and row of the array it writes at each
    step: buffers of the kept write's layouts, one overlapping the memory written, so the
    kept temporary and kernels replay with them (``_Through.replays_like``). Each step against
    NumPy; a value of those layouts reading nothing of the memory written is computed straight
    into it, as before; another constant is no replay."""
    from lazyarr._materialize import select
    from lazyarr.backends.cuda.backend import _Through

    backend = select("cuda", "lazy")
    hits = []
    like = _Through.replays_like

    def counting(self, *args):
        hits.append(like(self, *args))
        return hits[-1]
    monkeypatch.setattr(_Through, "replays_like", counting)
    n = 9
    base = rng.integers(0, 50, (n, n)).astype(np.int32)
    want = base.copy()
    with la.config(device="cuda"):
        path = la.asarray(base.copy())
        temps = set()
        for k in range(n):
            path[:] = la.minimum(path[:], la.add.outer(path[:, k], path[k, :]))
            want[:] = np.minimum(want[:], np.add.outer(want[:, k], want[k, :]))
            assert_same(np.asarray(path), want)
            temps.update(id(t.temp) for t in backend._through.values()
                         if t.temp.shape == (n, n) and t.temp.dtype == np.int32)
        other = la.asarray(base.copy())
        path[:] = la.minimum(other[:], la.add.outer(other[:, 0], other[0, :]))   # apart
        want[:] = np.minimum(base, np.add.outer(base[:, 0], base[0, :]))
        assert_same(np.asarray(path), want)
        path[:] = la.minimum(path[:], la.add.outer(path[:, 1], path[1, :]) + 1)  # a constant
        want[:] = np.minimum(want[:], np.add.outer(want[:, 1], want[1, :]) + 1)
        assert_same(np.asarray(path), want)
    assert len(temps) == 1              # one temporary, kept from the first step
    assert hits[:n - 1] == [True] * (n - 1) and hits[-1] is False


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
def test_an_element_written_into_a_row_on_cuda(rng, monkeypatch):
    """``ey[0, :] = fict[t]`` (fdtd_2d): the element's pending copy is written as its 0-d
    view, no kernel first (``_writes._element_view``). Its value is the element's at the line
    that read it: an element of the memory written (``x[0, :] = x[0, 5]``), and one a later
    write changed before it was written (computed by the barrier) keep NumPy's values."""
    from lazyarr._materialize import select

    backend = select("cuda", "lazy")
    runs = []
    run = type(backend).run

    def counting(self, lowered):
        runs.append(lowered.program.root.op)
        return run(self, lowered)
    monkeypatch.setattr(type(backend), "run", counting)
    base, fict = rng.random((4, 6)), rng.random(5)
    want, want_fict = base.copy(), fict.copy()
    with la.config(device="cuda"):
        ey, f = la.asarray(base.copy()), la.asarray(fict.copy())
        for t in range(3):
            ey[t, :] = f[t]
            want[t, :] = want_fict[t]
        assert runs == []                       # no kernel: the views written
        assert_same(np.asarray(ey), want)
        ey[1, :] = ey[1, 5]                     # the element lies in the row written
        want[1, :] = want[1, 5]
        ey[2:, 1] = ey[3, 1]
        want[2:, 1] = want[3, 1]
        v = f[4]
        f[4] = -1.0                             # the barrier computes v first
        want_v = want_fict[4]
        want_fict[4] = -1.0
        ey[0, :] = v
        want[0, :] = want_v
        assert_same(np.asarray(ey), want)
        assert_same(np.asarray(f), want_fict)
        i32 = la.asarray(np.arange(6, dtype=np.int32))
        ey[3, :] = i32[5]                       # another dtype: NumPy's cast on the write
        want[3, :] = np.int32(5)
        assert_same(np.asarray(ey), want)


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
def test_the_write_ending_an_augmented_assignment_on_cuda(rng, monkeypatch):
    """``ey[1:, :] -= d`` ends with ``ey.__setitem__(key, <ey's view, written>)``: the compiled
    ``__setitem__`` sees the view kept on ``ey``'s leaf for that key and writes nothing (the
    Python method is not called, after the first step's claim); values as NumPy's. A
    read-only array written with its own view still raises NumPy's error."""
    from lazyarr import _writes

    calls = []
    setitem = _writes.setitem

    def counting(*args):
        calls.append(args[1])
        return setitem(*args)
    monkeypatch.setattr(_writes, "setitem", counting)
    base, h = rng.random((6, 5)), rng.random((6, 5))
    want = base.copy()
    with la.config(device="cuda"):
        ey, hz = la.asarray(base.copy()), la.asarray(h)
        for _ in range(4):
            ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
            want[1:, :] -= 0.5 * (h[1:, :] - h[:-1, :])
            assert_same(np.asarray(ey), want)
        assert len(calls) <= 1
        ro = la.broadcast_to(la.asarray(np.arange(5.0)), (3, 5))
        view = ro[1:]
        with pytest.raises(ValueError, match="read-only"):
            ro[1:] = view


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
def test_a_kept_write_goes_with_the_array_written(rng):
    """The kept write (and its temporary) holds neither the array written nor the arrays
    read: when the script drops the array, the entry goes too, also for a value that reads
    the very view it writes (``u[1:-1] = u[1:-1] * 2``: one kept view, read and written)."""
    import gc

    from lazyarr._materialize import select
    backend = select("cuda", "lazy")
    base = rng.random((10, 8)).astype(np.float32)
    with la.config(device="cuda"):
        u = la.asarray(base.copy())
        for _ in range(3):
            u[1:-1] = u[1:-1] * 2 + u[:-2]
        assert len(backend._through) >= 1
        want = base.copy()
        for _ in range(3):
            want[1:-1] = want[1:-1] * 2 + want[:-2]
        assert_same(np.asarray(u), want)
        del u
        gc.collect()
    assert len(backend._through) == 0


# ----------------------------------------------------------------------------- stateful
class WritesAgainstNumPy(RuleBasedStateMachine):
    """Random views, writes, in-place operators, pending expressions and reads, each step
    mirrored on NumPy; every array still reachable is compared after every step."""

    @initialize(n=st.integers(0, 6), m=st.integers(1, 5))
    def start(self, n, m):
        base = np.arange(n * m, dtype=np.float64).reshape(n, m)
        self.pairs = [(base, la.asarray(base.copy()))]     # (NumPy array, LazyArray)

    def _pick(self, i):
        return self.pairs[i % len(self.pairs)]

    @rule(i=st.integers(0, 20), start=st.integers(-4, 4), step=st.sampled_from([1, 2, -1, -2]))
    def view(self, i, start, step):
        a, x = self._pick(i)
        if a.ndim:
            key = (slice(start, None, step),) + (slice(None),) * (a.ndim - 1)
            self.pairs.append((a[key], x[key]))

    @rule(i=st.integers(0, 20), j=st.integers(-3, 3), value=st.floats(-9, 9, width=16))
    def write(self, i, j, value):
        a, x = self._pick(i)
        if a.ndim and -a.shape[0] <= j < a.shape[0]:
            a[j] = value
            x[j] = value

    @rule(i=st.integers(0, 20), value=st.floats(-9, 9, width=16))
    def add_in_place(self, i, value):
        a, x = self._pick(i)
        a += value
        x += value

    @rule(i=st.integers(0, 20))
    def pending(self, i):
        a, x = self._pick(i)
        self.pairs.append((a * 2 + 1, x * 2 + 1))

    @precondition(lambda self: len(self.pairs) > 1)
    @rule(i=st.integers(0, 20), j=st.integers(0, 20))
    def write_one_into_another(self, i, j):
        a, x = self._pick(i)
        b, y = self._pick(j)
        if a.shape == b.shape and a.ndim:
            a[...] = b[::-1] if a.ndim == 1 else b
            x[...] = y[::-1] if x.ndim == 1 else y

    @rule(i=st.integers(0, 20))
    def read(self, i):
        a, x = self._pick(i)
        np.testing.assert_array_equal(np.asarray(x), a)

    @invariant()
    def computed_arrays_same_as_numpy(self):
        """(Pending ones are left pending, so that later writes meet pending readers.)"""
        for a, x in self.pairs:
            if x.is_materialized:
                np.testing.assert_array_equal(np.asarray(x), a)

    def teardown(self):
        for a, x in getattr(self, "pairs", ()):
            np.testing.assert_array_equal(np.asarray(x), a)


@pytest.mark.parametrize("backend_mode", ["eager", "lazy"])
def test_stateful_writes_against_numpy(backend_mode):
    with la.config(mode=backend_mode, device="cpu"):
        WritesAgainstNumPy.TestCase().runTest()


WritesAgainstNumPy.TestCase.settings = settings(max_examples=60, stateful_step_count=25,
                                                deadline=None,
                                                suppress_health_check=list(HealthCheck))


class WritesAgainstNumPyOnCuda(WritesAgainstNumPy):
    """The same machine on cuda (lazy mode: eager mode there is CuPy's): views kept on GPU
    leaves, writes through them, kept writes through temporaries, reads after every step.
    Fewer examples: the simulated device runs each kernel in Python."""

    @invariant()
    def on_cuda(self):
        for _, x in getattr(self, "pairs", ()):
            assert x.device == "cuda"


WritesAgainstNumPyOnCuda.TestCase.settings = settings(max_examples=20, stateful_step_count=20,
                                                      deadline=None,
                                                      suppress_health_check=list(HealthCheck))


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a cuda device")
def test_stateful_writes_against_numpy_on_cuda():
    with la.config(mode="lazy", device="cuda"):
        WritesAgainstNumPyOnCuda.TestCase().runTest()


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.bool_, np.complex128], ids=str)
def test_a_copy_is_independent_and_a_pending_copy_fuses(dtype, mode, rng):
    """``la.copy``/``x.copy()`` as NumPy's: the values of the line, and no aliasing either way
    (a write into the original, into the copy, or into an input the pending original reads).
    A pending copy stays pending (one kernel with what reads it)."""
    for order in ("K", "C", "F"):
        base = random_array(rng, dtype, (4, 3))
        for make in (lambda: la.asarray(base.copy()), lambda: pending(base.copy())):
            x = make()
            y, z = la.copy(x, order=order), x.copy(order)
            if mode == "lazy" and order != "F" and not x.is_materialized:
                assert not y.is_materialized and not z.is_materialized
            x[0] = base[1]
            y[1] = base[2]
            want_x, want_y = base.copy(), base.copy()
            want_x[0], want_y[1] = base[1], base[2]
            assert_same(np.asarray(x), want_x)
            assert_same(np.asarray(y), want_y)
            assert_same(np.asarray(z), base)
            if order == "F":
                assert np.asarray(la.copy(la.asarray(base), order="F")).flags.f_contiguous
    src = la.asarray(base.copy())
    expression = src * 1
    copied = la.copy(expression)
    src[0] = base[3]
    assert_same(np.asarray(copied), base * 1)                      # the values of its line
    plan = str(la.explain(src + la.copy(src * 2)))
    assert "fallback" not in plan and plan.count("kernel cpu-fused") + plan.count("kernel cuda") <= 1
    assert_same(np.asarray(la.copy([[1, 2]])), np.copy([[1, 2]]))
    with pytest.raises(ValueError):
        x.copy("Q")


def test_memory_overlap_of_gpu_arrays_is_numpys_bounds_check():
    """``_devices.may_share_memory`` on arrays known by pointer, shape and strides (as CuPy's
    are) answers as ``np.may_share_memory`` (bounds only) on every pair of these views."""
    import types

    from lazyarr import _devices

    class ByPointer:                       # a GPU array's attributes, over host memory
        def __init__(self, a):
            self.data = types.SimpleNamespace(ptr=a.__array_interface__["data"][0])
            self.shape, self.strides, self.size, self.itemsize = a.shape, a.strides, a.size, a.itemsize

    base = np.zeros((6, 8), np.float32)
    other = np.zeros(10, np.float64)
    views = [base, base[1:-1, 1:-1], base[:, ::-2], base[::-1], base[2:3, 5:], base[:0], base.T,
             base[0], base[-1, ::-1], base.reshape(-1)[7:9], base[:, 0], other, other[::3]]
    for a in views:
        for b in views:
            assert _devices.may_share_memory(ByPointer(a), ByPointer(b)) == np.may_share_memory(a, b), \
                (a.shape, a.strides, b.shape, b.strides)
    # memory of two kinds (a GPU array and a host one, a NumPy scalar) is never shared
    assert not _devices.may_share_memory(ByPointer(base), base)
    assert not _devices.may_share_memory(np.float32(1), ByPointer(base))


def test_an_in_place_op_keeps_the_arrays_layout():
    """``e -= e[..., ::-1]`` (the value reads the target) gave ``e`` a C-ordered copy of its
    F-ordered memory (``_views.claim``), so ``e.ravel()`` was a view where NumPy's is a copy
    and a later write showed through it (found by tools/fuzz/stateful.py, seed 8800074)."""
    u = np.array([3, 6, -2, 6, 4, 4, 0, -5, -2, 6, 1, -1, -1, -3, 1, 6, 2, -1, 6, -1, 2, 2, 5, 1,
                  3, 6, 0, 2, -1, 0, 2, 6, 1, -5, -5, -2, 1, -3, -5, 3, 1, 4, 1, -2, -4, -5, -5,
                  5, 6], np.int16).reshape(7, 7)
    got = {}
    for xp in (np, la):
        with la.config(mode="lazy", eager_max_size=0), np.errstate(all="ignore"):
            e = xp.asarray(u)[::-1].T * 2
            e -= e[..., ::-1]
            strides = np.asarray(e).strides
            r = e.ravel()
            e %= e.T
            got[xp.__name__] = (strides, np.asarray(r).copy(), np.asarray(e).copy())
    assert got["lazyarr"][0] == got["numpy"][0]
    np.testing.assert_array_equal(got["lazyarr"][1], got["numpy"][1])
    np.testing.assert_array_equal(got["lazyarr"][2], got["numpy"][2])
