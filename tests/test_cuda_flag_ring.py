"""The way a GPU kernel's floating-point flags reach ``fp_errors.report`` (lazyarr/backends/
cuda/flags.py), without a GPU: CuPy's few calls it makes are stood in for by NumPy (device
words are host memory, the copy a memmove, events done when the test says so). The simulated
device reports at launch and never runs this path; tests/test_gpu_fp_errors.py runs it on the
GPU."""
from __future__ import annotations

import ctypes
import sys
import types
import warnings

import numpy as np
import pytest

from lazyarr.backends.cuda import flags


class _DeviceArray(np.ndarray):
    @property
    def data(self):          # CuPy's MemoryPointer: .ptr
        return types.SimpleNamespace(ptr=self.ctypes.data)


class _Event:
    done_now = True

    def __init__(self, disable_timing=True):
        self.recorded = False

    def record(self, stream=None):
        self.recorded = True

    @property
    def done(self):
        return _Event.done_now

    def synchronize(self):
        pass


@pytest.fixture
def ring(monkeypatch):
    runtime = types.SimpleNamespace(memcpyDeviceToHost=2, getDevice=lambda: 0,
                                    memcpyAsync=lambda dst, src, n, kind, stream: ctypes.memmove(dst, src, n))
    cuda = types.SimpleNamespace(Event=_Event, runtime=runtime,
                                 alloc_pinned_memory=lambda n: bytearray(n),
                                 get_current_stream=lambda: types.SimpleNamespace(ptr=0))
    fake = types.SimpleNamespace(cuda=cuda, zeros=lambda *a, **k: np.zeros(*a, **k).view(_DeviceArray))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    r = flags._Ring()
    monkeypatch.setattr(flags, "_rings", {(0, 0): r})
    _Event.done_now = True
    yield r


def _launch(r, word, sites=("log",)):
    slot, words = r.take()
    words[0] = word                       # what the kernel ORed in
    r.queue(slot, sites, flags.report_now())
    return slot


def test_a_warning_waits_for_the_next_synchronization_and_names_the_line(ring):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _Event.done_now = False
        _launch(ring, 1 | 8)
        flags.settle()                    # the kernel is still running: nothing yet
        assert caught == []
        _Event.done_now = True
        flags.settle()
    assert sorted(str(w.message) for w in caught) == ["divide by zero encountered in log",
                                                      "invalid value encountered in log"]
    assert all(w.filename == __file__ for w in caught)
    assert not ring.pending and not ring.host.any() and not np.asarray(ring.device).any()


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


def test_a_full_ring_reports_its_oldest_launch_to_reuse_its_slot(ring):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = _launch(ring, 2, ("exp",))
        for _ in range(flags.SLOTS - 1):
            _launch(ring, 0)
        assert caught == [] and len(ring.pending) == flags.SLOTS
        assert _launch(ring, 0) == first                   # the slot is reused, once reported
    assert [str(w.message) for w in caught] == ["overflow encountered in exp"]
    assert len(ring.pending) == flags.SLOTS


def test_reduction_seen_bits_are_not_reported(ring):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _launch(ring, 16 | 32, ("reduce",))
        flags.settle()
    assert caught == []
