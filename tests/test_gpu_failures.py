"""GPU failure modes (issue 6): out-of-memory and kernel compile errors.

The compile-error case runs everywhere (Numba's PTX compiler is replaced by one that fails;
CuPy's loader is faked as in test_cache.py); the others need the GPU machine
(``pytest -m gpu``).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from helpers import SIMULATED, needs_cupy

import lazyarr as la

pytest.importorskip("numba.cuda")

class NVVMError(Exception):
    pass


def _failing_compile(*args, **kw):
    raise NVVMError("libNVVM: error: invalid IR (simulated)")


def test_compile_error_leaves_no_cache_entry(tmp_path, monkeypatch):
    import test_cache as T

    ns = T._setup(tmp_path, monkeypatch)
    monkeypatch.setattr(T.C, "compile_ptx", _failing_compile)
    rendered = T._rendered("cosh")
    with pytest.raises(NVVMError):
        T.C.load_kernel(rendered, T.CC)
    assert not ns.dir.exists() or not list(ns.dir.iterdir())      # nothing half-written
    assert T.C.cache_key(rendered, T.CC) not in T.C._kernels.values
    monkeypatch.undo()                                             # the compiler works again
    ns = T._setup(tmp_path, monkeypatch)
    assert T.C.load_kernel(rendered, T.CC)[0] == "function" and len(ns.compiles) == 1


def _huge_expression():
    """An output of 2**41 float32 (8 TiB) from two small inputs, by broadcasting."""
    a = la.asarray(np.ones((1 << 21, 1), np.float32), device="cuda")
    b = la.asarray(np.ones((1, 1 << 20), np.float32), device="cuda")
    return a * b + 1


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy and numba-cuda")
@needs_cupy
def test_out_of_memory_is_a_memory_error_naming_the_size_and_the_process_continues():
    y = _huge_expression()
    with pytest.raises(MemoryError) as info:
        y.compute()
    nbytes = (1 << 41) * 4
    assert re.search(f"{nbytes}|{nbytes:,}", str(info.value)), str(info.value)
    z = la.asarray(np.arange(10.0), device="cuda") * 2          # the process carries on
    np.testing.assert_array_equal(np.asarray(z), np.arange(10.0) * 2)


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy and numba-cuda")
@needs_cupy
def test_out_of_memory_message_has_a_hint():
    with pytest.raises(MemoryError) as info:
        _huge_expression().compute()
    assert re.search(r"lazyarr|smaller|chunk|free", str(info.value), re.I), str(info.value)


@pytest.mark.gpu
@pytest.mark.skipif(not la.cuda_available(), reason="needs a CUDA GPU with CuPy and numba-cuda")
@pytest.mark.skipif(SIMULATED, reason="the simulator compiles no PTX (the message: "
                    "test_compile_error_names_the_expression_without_gpu)")
def test_compile_error_names_the_expression(monkeypatch):
    from lazyarr.backends.cuda import compile as C

    monkeypatch.setattr(C, "compile_ptx", _failing_compile)
    x = la.asarray(np.ones(7, np.float32), device="cuda")
    with pytest.raises(Exception) as info:
        (la.arcsinh(x) * 3.25 - x).compute()
    assert "arcsinh" in str(info.value), str(info.value)


def test_out_of_memory_on_the_cpu_names_size_and_hint_and_the_process_continues():
    # The same wrapper (lazyarr._materialize.materialize) serves every device: checked here for real
    # (an 8 TiB result from two small broadcast inputs), on the GPU by the tests above.
    a = la.asarray(np.ones((1 << 21, 1), np.float32), device="cpu")
    b = la.asarray(np.ones((1, 1 << 20), np.float32), device="cpu")
    with la.config(mode="lazy"), pytest.raises(MemoryError) as info:
        (a * b + 1).compute()
    text = str(info.value)
    assert f"{(1 << 41) * 4:,} bytes" in text and "lazyarr: out of cpu memory" in text, text
    assert "smaller pieces" in text
    np.testing.assert_array_equal(np.asarray(la.asarray(np.arange(3.0)) * 2), [0.0, 2.0, 4.0])


def test_compile_error_names_the_expression_without_gpu(monkeypatch):
    """The cuda backend's run(), with the GPU queries and the compiler replaced: a compile
    failure is a RuntimeError naming the expression, caused by the compiler's error."""
    import sys
    import types

    from test_cache import _lowered_for

    from lazyarr.backends.cuda import backend as B

    def failing_load(rendered, cc):
        raise NVVMError("libNVVM: error: invalid IR (simulated)")

    lowered = _lowered_for(lambda x: la.arcsinh(x) * 3.25 - x)
    monkeypatch.setitem(sys.modules, "cupy", types.ModuleType("cupy"))
    monkeypatch.setattr(B, "_current_device_info", lambda: (132, (9, 0)))
    monkeypatch.setattr(B, "load_kernel", failing_load)
    with pytest.raises(RuntimeError, match=r"arcsinh -> multiply -> subtract") as info:
        B.CudaBackend().run(lowered)
    assert isinstance(info.value.__cause__, NVVMError) and "invalid IR" in str(info.value)
