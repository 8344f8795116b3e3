"""Modes and devices: config(), set_config(), get_config(), environment variables, threads."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import lazyarr as la


def test_defaults_and_context_manager():
    base = la.get_config()
    with la.config(mode="eager") as cfg:
        assert cfg.mode == "eager" and la.get_config().mode == "eager"
        with la.config(mode="lazy", device="cpu"):
            assert la.get_config() == la.Config(mode="lazy", device="cpu",       # (the suite's
                                                eager_max_size=base.eager_max_size,  # settings:
                                                compile=base.compile,                # conftest.py)
                                                cpu_loops=base.cpu_loops)
        assert la.get_config().mode == "eager"
    assert la.get_config() == base


def test_mode_changes_evaluation():
    x = la.asarray(np.arange(4.0))
    with la.config(mode="eager"):
        assert (x * 2).is_materialized
    with la.config(mode="lazy"):
        y = x * 2
        assert not y.is_materialized
    with la.config(mode="eager"):       # a pending array materialized in eager mode: op by op
        np.testing.assert_array_equal(np.asarray(y), [0, 2, 4, 6])


def test_set_config_is_process_wide_and_overridable():
    old = la.get_config()
    try:
        assert la.set_config(mode="eager").mode == "eager"
        seen = []
        t = threading.Thread(target=lambda: seen.append(la.get_config().mode))
        t.start()
        t.join()
        assert seen == ["eager"]
        with la.config(mode="lazy"):
            assert la.get_config().mode == "lazy"
    finally:
        la.set_config(mode=old.mode, device=old.device)


@pytest.mark.parametrize("kwargs, exc", [({"mode": "fast"}, ValueError), ({"device": "tpu"}, ValueError),
                                         ({"mode": 3}, ValueError), ({"colour": "red"}, TypeError)])
def test_bad_values_are_clear_errors(kwargs, exc):
    with pytest.raises(exc, match="mode|device|colour"):
        la.set_config(**kwargs)
    with pytest.raises(exc), la.config(**kwargs):
        pass


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **env}, check=False)


def test_environment_variables():
    out = _run("import lazyarr as la; c = la.get_config(); print(c.mode, c.device)",
               LAZYARR_MODE="eager", LAZYARR_DEVICE="cpu")
    assert out.stdout.split() == ["eager", "cpu"], out.stderr
    bad = _run("import lazyarr", LAZYARR_MODE="turbo")
    assert bad.returncode != 0 and "LAZYARR_MODE='turbo' is not valid" in bad.stderr


def test_threads_use_their_own_mode():
    """Eight threads, alternating modes inside `with la.config`, never see each other's."""
    errors: list[str] = []
    barrier = threading.Barrier(8)

    def work(i: int) -> None:
        mode = "eager" if i % 2 else "lazy"
        with la.config(mode=mode, device="cpu"):
            barrier.wait()
            for _ in range(50):
                y = la.asarray(np.arange(10.0)) + i
                if y.is_materialized != (mode == "eager") or la.get_config().mode != mode:
                    errors.append(f"thread {i} saw the wrong mode")
                if float(y.sum()) != 45.0 + 10 * i:
                    errors.append(f"thread {i} got a wrong sum")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_asyncio_tasks_use_their_own_mode():
    async def task(mode: str) -> str:
        with la.config(mode=mode):
            await asyncio.sleep(0)
            return la.get_config().mode

    async def main() -> list[str]:
        return await asyncio.gather(task("eager"), task("lazy"), task("eager"))

    assert asyncio.run(main()) == ["eager", "lazy", "eager"]


def test_device_resolution_without_gpu():
    if la.cuda_available():
        pytest.skip("this checks the no-GPU behaviour")
    assert la.asarray([1.0]).device == "cpu"
    with la.config(device="auto"):
        assert la.zeros(3).device == "cpu"
    with pytest.raises(RuntimeError, match="no usable GPU"):
        la.zeros(3, device="cuda")
