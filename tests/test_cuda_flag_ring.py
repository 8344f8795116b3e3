"""The way a GPU kernel's floating-point flags reach ``fp_errors.report`` (lazyarr/backends/
cuda/flags.py), without a GPU: CuPy's few calls it makes are stood in for by NumPy (device
words are host memory, a synchronizing copy a memmove, an asynchronous copy a memmove queued
until the next wait, pinned memory a bytearray). The simulated device reports at launch and
never runs this path; tests/test_gpu_fp_errors.py runs it on the GPU."""
from __future__ import annotations

import ctypes
import sys
import threading
import types
import warnings

import numpy as np
import pytest

from lazyarr.backends.cuda import flags


class _DeviceArray(np.ndarray):
    """Host memory standing in for a CuPy array: ``.get()`` counts the copies (each one a
    synchronization on a GPU); ``.data.ptr`` (CuPy's ``MemoryPointer``) is its address for the
    stand-in ``runtime.memcpyAsync``, which queues the copy on the stand-in stream, done at
    the next :func:`_wait`."""
    copies = 0
    shapes: list = []           # of each copy
    queued: list = []           # the stream's asynchronous copies not done yet
    async_bytes: list = []      # of each asynchronous copy
    waits = 0                   # synchronizations (_devices.wait)

    def get(self, stream=None):
        _DeviceArray.copies += 1
        _DeviceArray.shapes.append(self.shape)
        return np.array(self)

    @property
    def _c_contiguous(self):
        return self.flags.c_contiguous

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data, device_id=0)


def _memcpy_async(dst, src, size, kind, stream_ptr):
    """CuPy's ``runtime.memcpyAsync`` (integer addresses): queued on the stand-in stream."""
    assert kind == _D2H and stream_ptr == sys.modules["cupy"].cuda.get_current_stream().ptr
    _DeviceArray.async_bytes.append(size)
    _DeviceArray.queued.append(lambda: ctypes.memmove(dst, src, size))


_D2H = 2


def _wait(data):
    """``_devices.wait``: the stream's work done (its queued copies too)."""
    _DeviceArray.waits += 1
    for copy in _DeviceArray.queued:
        copy()
    _DeviceArray.queued = []


@pytest.fixture
def ring(monkeypatch):
    stream = types.SimpleNamespace(ptr=0)
    cuda = types.SimpleNamespace(get_current_stream=lambda: stream,
                                 runtime=types.SimpleNamespace(getDevice=lambda: 0,
                                                               memcpyAsync=_memcpy_async,
                                                               memcpyDeviceToHost=_D2H),
                                 alloc_pinned_memory=bytearray)
    fake = types.SimpleNamespace(cuda=cuda, zeros=lambda *a, **k: np.zeros(*a, **k).view(_DeviceArray))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    r = flags._Ring()
    monkeypatch.setattr(flags, "_rings", {(0, 0): r})
    monkeypatch.setattr(flags, "_local", threading.local(), raising=False)   # (new staging)
    _DeviceArray.copies = _DeviceArray.waits = 0
    _DeviceArray.shapes, _DeviceArray.queued, _DeviceArray.async_bytes = [], [], []
    yield r


def _launch(r, word, sites=("log",), kernel=None):
    """A launch of ``kernel`` (a new one each time by default) that ORs ``word`` in."""
    words, now = r.take(object() if kernel is None else kernel, sites)
    words[0] |= word
    if now is not None:
        r.read(now)
    return words.ctypes.data


def test_a_warning_waits_for_the_next_synchronization_and_names_the_line(ring):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _launch(ring, 1 | 8)
        _launch(ring, 0)
        assert caught == [] and _DeviceArray.copies == 0     # no copy, no wait per launch
        flags.settle()                                       # (a copy to the host: one read)
    assert sorted(str(w.message) for w in caught) == ["divide by zero encountered in log",
                                                      "invalid value encountered in log"]
    assert all(w.filename == __file__ for w in caught)
    assert _DeviceArray.copies == 1 and not ring.pending and not np.asarray(ring.device).any()
    flags.settle()
    assert _DeviceArray.copies == 1                           # nothing pending: no copy


def test_raise_is_handled_before_the_launch_returns(ring):
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError, match="divide by zero"):
        _launch(ring, 1)
    assert not ring.pending


def test_the_error_state_of_the_materialization_decides(ring):
    with np.errstate(all="ignore", divide="warn"):
        _launch(ring, 1 | 8)              # divide warns, invalid is ignored: as it was then
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        flags.settle()
    assert [str(w.message) for w in caught] == ["divide by zero encountered in log"]


def test_a_full_ring_is_read_once_to_reuse_its_slots(ring):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = _launch(ring, 2, ("exp",))
        for _ in range(flags.SLOTS - 1):
            _launch(ring, 0)
        assert caught == [] and len(ring.pending) == flags.SLOTS
        assert _launch(ring, 0) == first                   # the slot is reused, once read
    assert [str(w.message) for w in caught] == ["overflow encountered in exp"]
    assert len(ring.pending) == 1 and _DeviceArray.copies == 1


def test_a_kernel_launched_again_shares_its_slot_until_it_is_read(ring):
    kernel = object()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = _launch(ring, 1, kernel=kernel)
        assert all(_launch(ring, w, kernel=kernel) == first for w in (0, 8, 0))
        assert len(ring.pending) == 1
        with np.errstate(all="warn"):                 # another error state: its own slot
            assert _launch(ring, 0, kernel=kernel) != first
        flags.settle()
        assert not ring.pending and not ring.active
        _launch(ring, 0, kernel=kernel)               # read: the next launch is recorded anew
        assert len(ring.pending) == 1
    assert sorted(str(w.message) for w in caught) == ["divide by zero encountered in log",
                                                      "invalid value encountered in log"]


def test_a_reduction_shares_its_slot_as_an_elementwise_kernel_does(ring):
    """A reduction's word holds only raised flags (every combine is checked in the kernel,
    fp_checks.combine_check): its launches share a slot until it is read."""
    kernel = object()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = _launch(ring, 0, ("log", "reduce"), kernel=kernel)
        assert _launch(ring, 8, ("log", "reduce"), kernel=kernel) == first
        assert len(ring.pending) == 1
        flags.settle()
    assert [str(w.message) for w in caught] == ["invalid value encountered in log"]


def test_a_held_slot_skips_the_ring_until_it_is_stale(ring, monkeypatch):
    """``flags.take`` with what a kernel's last launch held: the same slot without looking
    up the ring, until the ring is read (its epoch), the error state or the stream changes;
    an immediate mode holds nothing. Flags written through a held slot are reported."""
    lookups = []
    real_ring = flags.ring
    monkeypatch.setattr(flags, "ring", lambda: lookups.append(1) or real_ring())
    kernel, sites = object(), ("log",)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        words, now, held = flags.take(kernel, sites, None)
        assert now is None and held is not None and len(lookups) == 1
        again, now, held2 = flags.take(kernel, sites, held)
        assert again is words and held2 is held and len(lookups) == 1    # no lookup
        again[0] |= 1
        with np.errstate(all="warn"):                 # another error state: the ring again
            other, _, held3 = flags.take(kernel, sites, held)
            assert other is not words and len(lookups) == 2 and held3.ext is not held.ext
        flags.settle()                                # read: what was held is stale
        fresh, _, held4 = flags.take(kernel, sites, held)
        assert len(lookups) == 3 and held4.epoch != held.epoch
        assert len(ring.pending) == 1
        with np.errstate(divide="raise"):             # reported at once: nothing held
            assert flags.take(kernel, sites, held4)[1:] != (None, held4)
            assert flags.take(kernel, sites, None)[2] is None
        monkeypatch.setattr(sys.modules["cupy"].cuda, "get_current_stream",
                            lambda: types.SimpleNamespace(ptr=0))
        flags.take(kernel, sites, held4)              # another stream object: the ring again
        assert len(lookups) == 6
    assert [str(w.message) for w in caught] == ["divide by zero encountered in log"]


def test_a_read_of_one_pending_launch_copies_its_words_only(ring):
    """A result read back after each launch (``float(la.sum(...))`` in a loop) leaves one
    launch pending: the read copies that slot's words, not the ring, and reports and clears
    them as a read of the ring does; two pending launches copy the ring once."""
    kernel = object()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _launch(ring, 0, kernel=kernel)
        flags.settle()
        assert _DeviceArray.shapes == [(flags.WORDS,)] and not ring.pending and not caught
        _launch(ring, 8, kernel=kernel)                  # recorded anew: pending again
        assert len(ring.pending) == 1
        flags.settle()
        assert _DeviceArray.shapes == [(flags.WORDS,)] * 2 and not ring.pending
        assert not np.asarray(ring.device).any()         # the raised word cleared for reuse
        _launch(ring, 0)
        _launch(ring, 0)
        flags.settle()
        assert _DeviceArray.shapes[-1] == (flags.SLOTS, flags.WORDS)
    assert [str(w.message) for w in caught] == ["invalid value encountered in log"]


def test_a_read_back_reports_the_pending_flags_first(ring, monkeypatch):
    """``_devices.to_host`` (a GPU result read into NumPy: ``float()``, ``np.asarray``) reads
    the pending flags before it returns the result, at every read (``flags.read_back`` is kept
    after the first: an import per read cost ~0.8 µs): one synchronization per read, the
    slot's words and the small result copied asynchronously into pinned memory before it."""
    from lazyarr import _devices
    monkeypatch.setattr(_devices, "cuda_simulated", lambda: False)
    monkeypatch.setattr(_devices, "wait", _wait)
    result = np.arange(3.0).view(_DeviceArray)
    kernel = object()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for word in (1, 0, 8):
            _launch(ring, word, kernel=kernel)
            got = _devices.to_host("cuda", result)
            assert type(got) is np.ndarray and got.tolist() == [0.0, 1.0, 2.0]
            assert not ring.pending
    assert [str(w.message) for w in caught] == ["divide by zero encountered in log",
                                                "invalid value encountered in log"]
    assert _DeviceArray.waits == 3 and _DeviceArray.copies == 0     # one synchronization a read
    assert _DeviceArray.async_bytes == [4 * flags.WORDS, result.nbytes] * 3
    assert not np.asarray(ring.device).any()        # the raised words cleared for reuse


def test_a_read_back_is_one_synchronization_and_the_value_is_copied_after_it(ring, monkeypatch):
    """The result's copy and the flags' are asynchronous: neither is read before the wait (a
    value written by the kernel after the copies were queued, as a GPU's would be, is the one
    returned); the value returned is a new array, which the next read does not change; the
    pinned staging memory is made once per thread."""
    from lazyarr import _devices
    monkeypatch.setattr(_devices, "cuda_simulated", lambda: False)
    monkeypatch.setattr(_devices, "wait", lambda data: (data.fill(7.5), _wait(data)))
    allocations = []
    cuda = sys.modules["cupy"].cuda
    monkeypatch.setattr(cuda, "alloc_pinned_memory", lambda n: allocations.append(n) or bytearray(n))
    result = np.zeros((), np.float32).view(_DeviceArray)
    _launch(ring, 0, kernel=object())
    first = _devices.to_host("cuda", result)
    assert first.shape == () and first.dtype == np.float32 and float(first) == 7.5
    monkeypatch.setattr(_devices, "wait", lambda data: (data.fill(-2.0), _wait(data)))
    second = _devices.to_host("cuda", result)                 # nothing pending: the result only
    assert float(second) == -2.0 and float(first) == 7.5
    assert _DeviceArray.waits == 2 and _DeviceArray.copies == 0 and len(allocations) == 1
    assert _DeviceArray.async_bytes == [4 * flags.WORDS, 4, 4]


def test_a_read_back_raises_before_it_returns_the_value(ring, monkeypatch):
    """A warning that a filter turns into an error (or any flag the error state raises when
    reported) leaves ``to_host`` by the exception: the value is not returned, the slot is read
    (not reported again) and cleared."""
    from lazyarr import _devices
    monkeypatch.setattr(_devices, "cuda_simulated", lambda: False)
    monkeypatch.setattr(_devices, "wait", _wait)
    result = np.ones(4, np.float64).view(_DeviceArray)
    _launch(ring, 1, kernel=object())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="divide by zero encountered in log"):
            _devices.to_host("cuda", result)
    assert not ring.pending and not np.asarray(ring.device).any() and _DeviceArray.waits == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _devices.to_host("cuda", result).tolist() == [1.0] * 4


def test_a_read_back_of_several_pending_launches_copies_the_ring_with_the_result(ring, monkeypatch):
    from lazyarr import _devices
    monkeypatch.setattr(_devices, "cuda_simulated", lambda: False)
    monkeypatch.setattr(_devices, "wait", _wait)
    result = np.arange(6, dtype=np.int64).reshape(2, 3).view(_DeviceArray)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _launch(ring, 2, ("exp",))
        _launch(ring, 0)
        _launch(ring, 8, ("sqrt",))
        got = _devices.to_host("cuda", result)
    assert got.tolist() == [[0, 1, 2], [3, 4, 5]] and got.dtype == np.int64
    assert [str(w.message) for w in caught] == ["overflow encountered in exp",
                                                "invalid value encountered in sqrt"]
    assert _DeviceArray.waits == 1 and _DeviceArray.copies == 0
    assert _DeviceArray.async_bytes == [4 * flags.WORDS * flags.SLOTS, result.nbytes]
    assert not ring.pending and not np.asarray(ring.device).any()


@pytest.mark.parametrize("result", [np.zeros(flags.READ_BYTES // 8 + 1),      # too large
                                    np.zeros((4, 4))[:, ::2]],                 # not contiguous
                         ids=["large", "strided"])
def test_a_large_or_strided_result_is_read_as_before(ring, monkeypatch, result):
    """Beyond the staging memory (or not one block of bytes): wait, the flags' copy, the
    result's own copy, flags still first."""
    from lazyarr import _devices
    monkeypatch.setattr(_devices, "cuda_simulated", lambda: False)
    monkeypatch.setattr(_devices, "wait", _wait)
    order = []
    monkeypatch.setattr(_DeviceArray, "get", lambda self, stream=None: order.append(self.shape)
                        or np.array(self))
    result = result.view(_DeviceArray)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _launch(ring, 8, kernel=object())
        got = _devices.to_host("cuda", result)
    assert got.shape == result.shape and not got.any()
    assert order == [(flags.WORDS,), result.shape] and _DeviceArray.waits == 1
    assert [str(w.message) for w in caught] == ["invalid value encountered in log"]


def test_an_interrupted_read_back_forgets_nothing_and_leaves_its_staging(ring, monkeypatch):
    """Ctrl-C in the wait: the flags stay pending (the next read reports them) and the next
    read copies into new staging memory (the interrupted copies may still land in the old)."""
    from lazyarr import _devices
    monkeypatch.setattr(_devices, "cuda_simulated", lambda: False)

    def interrupted(data):
        raise KeyboardInterrupt
    monkeypatch.setattr(_devices, "wait", interrupted)
    monkeypatch.setattr(flags, "_abandoned", [])
    result = np.full((), 3.0).view(_DeviceArray)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _launch(ring, 1, kernel=object())
        with pytest.raises(KeyboardInterrupt):
            _devices.to_host("cuda", result)
        assert len(ring.pending) == 1 and caught == []
        old = flags._abandoned[0]
        monkeypatch.setattr(_devices, "wait", _wait)
        assert float(_devices.to_host("cuda", result)) == 3.0
    assert [str(w.message) for w in caught] == ["divide by zero encountered in log"]
    assert flags._local.staging[0] is not old and not ring.pending


def test_another_streams_pending_launches_are_read_as_before(ring, monkeypatch):
    """Launches pending on another stream's ring (the current stream has none): the read
    waits, copies that ring's words (their own synchronization) and reports them first, then
    copies the result: every kernel's flags before any value, as ``settle`` does."""
    from lazyarr import _devices
    monkeypatch.setattr(_devices, "cuda_simulated", lambda: False)
    monkeypatch.setattr(_devices, "wait", _wait)
    monkeypatch.setattr(flags, "_rings", {(0, 1): ring})           # (not the current stream's)
    result = np.full((), 2.0).view(_DeviceArray)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _launch(ring, 8, kernel=object())
        assert float(_devices.to_host("cuda", result)) == 2.0
    assert [str(w.message) for w in caught] == ["invalid value encountered in log"]
    assert not ring.pending and _DeviceArray.shapes == [(flags.WORDS,), ()]
