"""The way a GPU kernel's floating-point flags reach ``fp_errors.report`` (lazyarr/backends/
cuda/flags.py), without a GPU: CuPy's few calls it makes are stood in for by NumPy (device
words are host memory, the copy a memmove, events done when the test says so). The simulated
device reports at launch and never runs this path; tests/test_gpu_fp_errors.py runs it on the
GPU."""
from __future__ import annotations

import sys
import types
import warnings

import numpy as np
import pytest

from lazyarr.backends.cuda import flags


class _DeviceArray(np.ndarray):
    """Host memory standing in for a CuPy array: ``.get()`` counts the copies (each one a
    synchronization on a GPU)."""
    copies = 0
    shapes: list = []           # of each copy

    def get(self, stream=None):
        _DeviceArray.copies += 1
        _DeviceArray.shapes.append(self.shape)
        return np.array(self)


@pytest.fixture
def ring(monkeypatch):
    stream = types.SimpleNamespace(ptr=0)
    cuda = types.SimpleNamespace(get_current_stream=lambda: stream,
                                 runtime=types.SimpleNamespace(getDevice=lambda: 0))
    fake = types.SimpleNamespace(cuda=cuda, zeros=lambda *a, **k: np.zeros(*a, **k).view(_DeviceArray))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    r = flags._Ring()
    monkeypatch.setattr(flags, "_rings", {(0, 0): r})
    _DeviceArray.copies = 0
    _DeviceArray.shapes = []
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
    the ring before it copies the result, at every read (``flags.settle`` is kept after the
    first: an import per read cost ~0.8 µs)."""
    from lazyarr import _devices
    monkeypatch.setattr(_devices, "cuda_simulated", lambda: False)
    monkeypatch.setattr(_devices, "wait", lambda data: None)      # (the kernels are done)
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
    assert _DeviceArray.copies == 6                 # a slot's words and the result, per read
