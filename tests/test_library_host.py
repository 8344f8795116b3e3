"""The pending operand of a library call on cuda computed into the library's new buffer
(``_fallback.computed_into_new``): a kernel already compiled launches at once from cuda's
``run_into(fresh=True)``, without the write-hazard test a write into existing memory needs
(tools/device/library_host.py, docs/notes/gpu.rst), and keeps every behaviour: the values,
the kernel's floating-point errors under each error state, and the full checks for writes."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazyarr as la

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(
    not la.cuda_available(), reason="needs a cuda device (a GPU, or LAZYARR_CUDA_SIM=1)")]


@pytest.fixture
def overlap_tests(monkeypatch):
    """The overlap tests cuda's ``run_into`` makes (its inputs against the memory written,
    ``_node.overlaps_any``: one per write)."""
    from lazyarr.backends.cuda import backend
    asked = []
    real = backend.overlaps_any

    def counting(buffers, memory, skip_type):
        asked.append(1)
        return real(buffers, memory, skip_type)
    monkeypatch.setattr(backend, "overlaps_any", counting)
    return asked


def test_pending_sort_on_cuda_launches_its_cached_kernel_without_the_write_checks(overlap_tests):
    a = np.linspace(-3, 5, 301, dtype=np.float32)
    with la.config(compile="wait"):
        x = la.asarray(a, device="cuda")
        for k in range(3):              # the first call makes the entry; the others find it
            got = la.sort(la.abs(x) * (k + 2) - 1)
            want = np.sort(np.abs(a) * np.float32(k + 2) - 1)
            assert got.device == "cuda" and got.dtype == want.dtype
            np.testing.assert_array_equal(got.to_numpy(), want)
            if k == 0:
                first = len(overlap_tests)
        assert first >= 1 and len(overlap_tests) == first     # (the cached kernel: none)
        # a write into memory an input reads still takes the full path: its overlap test
        y = la.asarray(a, device="cuda")
        y[1:] = y[:-1] * 2
        np.testing.assert_array_equal(y.to_numpy(), np.concatenate([a[:1], a[:-1] * 2]))
        assert len(overlap_tests) > first


def test_pending_sort_on_cuda_reports_floating_point_errors_at_every_call():
    a = np.array([4.0, -1.0, 9.0, 0.25], np.float32)
    with la.config(compile="wait"):
        x = la.asarray(a, device="cuda")
        for _ in range(3):              # (the second and third: the cached kernel, fresh)
            # under "warn" a GPU reports a kernel's flags at the next synchronization, here
            # the copy to the host (lazyarr/backends/cuda/flags.py; the simulator: at once)
            with pytest.warns(RuntimeWarning, match="invalid value"):
                got = la.sort(la.sqrt(x) * 2 - 1)
                values = got.to_numpy()
            with np.errstate(invalid="ignore"):
                np.testing.assert_array_equal(values, np.sort(np.sqrt(a) * 2 - 1))
        for _ in range(2):
            with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
                la.sort(la.sqrt(x) * 2 - 1)
        for _ in range(2):              # (the unchecked kernel: an entry of its own)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("error")
                got = la.sort(la.sqrt(x) * 2 - 1)
            with np.errstate(invalid="ignore"):
                np.testing.assert_array_equal(got.to_numpy(), np.sort(np.sqrt(a) * 2 - 1))
