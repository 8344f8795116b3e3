"""A cached cuda kernel's 0-d output (a full reduction's) kept on its entry and reused by the
next call while nothing else refers to it (``CudaBackend._output_0d``, ``backend._sole``): a
result dropped is reused (``float(la.sum(...))`` in a loop allocates once), a result, view,
buffer, export or pending expression held never changes. On the simulated device (NumPy
buffers: a view or an export holds the array) and on the GPU (CuPy: the array, its
``MemoryPointer`` and its memory counted)."""
from __future__ import annotations

import types

import numpy as np
import pytest
from helpers import SIMULATED

import lazyarr as la
from lazyarr import _devices, _views
from lazyarr.backends.cuda import backend as cuda_backend

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy"),
              pytest.mark.skipif(not _views.EXACT_REFCOUNTS,
                                 reason="reused only where reference counts are exact")]


@pytest.fixture
def xy():
    rng = np.random.default_rng(3)
    hx, hy = rng.standard_normal(64), rng.standard_normal(64)
    with la.config(device="cuda", mode="lazy", compile="wait"):
        x, y = la.asarray(hx), la.asarray(hy)
        la.sum(abs(x) * y).compute()            # (the kernel compiled and its entry made)
        yield x, y, hx, hy


def _buffer(r):
    return r._node.data


def test_a_dropped_result_is_reused(xy, monkeypatch):
    """``float(la.sum(...))`` in a loop: the cached entry's hot path allocates one output (the
    first), then reuses it."""
    x, y, hx, hy = xy
    float(la.sum(abs(x) * (y + 7)))         # (the entry's miss: not its hot path)
    from lazyarr._materialize import select
    backend = select("cuda", "lazy")
    xp = backend.xp()
    made = []
    monkeypatch.setattr(backend, "_xp", types.SimpleNamespace(
        ndarray=lambda *a: made.append(a) or xp.ndarray(*a)))
    seen = set()
    for k in range(5):
        r = la.sum(abs(x) * (y + k))
        seen.add(id(_buffer(r)))
        assert float(r) == pytest.approx(np.sum(np.abs(hx) * (hy + k)))
        del r
    assert len(made) == 1 and len(seen) == 1


def test_a_held_result_never_changes(xy):
    x, y, hx, hy = xy
    held = []
    for k in range(4):
        held.append(la.sum(abs(x) * (y + k)).compute())
    assert len({id(_buffer(r)) for r in held}) == 4
    for k, r in enumerate(held):
        assert float(r) == pytest.approx(np.sum(np.abs(hx) * (hy + k)))


@pytest.mark.parametrize("hold", ["buffer", "view", "pending", "read_only", "export"])
def test_what_refers_to_the_memory_keeps_it(xy, hold):
    """The result dropped, its buffer (``.data``), a view of the buffer, a pending expression
    reading it, a read-only mark (a weak reference) or an export kept: the next call's output
    is other memory, and what was kept still reads the first value."""
    x, y, hx, hy = xy
    r = la.sum(abs(x) * y).compute()
    first = float(r)
    buf = _buffer(r)
    if hold == "buffer":
        kept = buf
    elif hold == "view":
        kept = buf[...]
    elif hold == "pending":
        kept = r * 2
    elif hold == "read_only":
        _devices.mark_read_only(buf)
        kept = None
    else:
        kept = memoryview(buf) if SIMULATED else buf.__dlpack__()
    ident = id(buf)
    if hold != "buffer":
        del buf
    del r
    s = la.sum(abs(x) * (y + 1)).compute()
    assert id(_buffer(s)) != ident
    assert float(s) == pytest.approx(np.sum(np.abs(hx) * (hy + 1)))
    if hold == "pending":
        assert float(kept) == pytest.approx(2 * first)
    elif hold in ("buffer", "view"):
        assert float(_devices.to_host("cuda", kept)) == first
    del kept


def test_another_stream_gets_its_own_output(xy, monkeypatch):
    """A kept output is reused on the device and stream it was made on only (kernels there
    that read it ran before)."""
    x, y, hx, hy = xy
    r = la.sum(abs(x) * y)
    first = id(_buffer(r))
    float(r)
    del r
    from lazyarr._materialize import select
    backend = select("cuda", "lazy")
    monkeypatch.setattr(backend, "place", lambda: ("another", "stream"))
    r = la.sum(abs(x) * y)
    assert id(_buffer(r)) != first and float(r) == pytest.approx(np.sum(np.abs(hx) * hy))


def test_sole_counts_every_holder_of_a_cupy_like_chain():
    """``_sole`` on a stand-in of CuPy's array -> MemoryPointer -> memory chain: any holder of
    any link (a view holds the array, ``ndarray(memptr=...)`` the pointer, a pointer offset
    the memory) or a weak reference makes it not sole."""
    import weakref
    a = cuda_backend._stand_in()
    kept = (None, a)
    del a
    assert cuda_backend._sole(kept) is kept[1]
    for hold in (lambda a: a, lambda a: a.data, lambda a: a.data.mem, lambda a: weakref.ref(a)):
        h = hold(kept[1])
        assert cuda_backend._sole(kept) is None
        del h
        assert cuda_backend._sole(kept) is kept[1]
