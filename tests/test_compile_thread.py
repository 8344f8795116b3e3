"""The option ``compile`` (``LAZYARR_COMPILE``) and the thread that compiles new GPU kernels
in the background (lazyarr/_compile_thread.py). The calls that run op by op meanwhile:
tests/test_first_calls.py (a cuda device)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import lazyarr as la


def test_the_option_and_its_variable():
    assert la._config.Config().compile == "background"
    with pytest.raises(ValueError, match="compile='later' is not valid"):
        with la.config(compile="later"):
            pass
    code = "import lazyarr as la; print(la.get_config().compile)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, LAZYARR_COMPILE="background"), check=True)
    assert out.stdout.strip() == "background"
    bad = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, LAZYARR_COMPILE="soon"))
    assert bad.returncode != 0 and "LAZYARR_COMPILE='soon' is not valid" in bad.stderr


def test_an_exit_does_not_wait_for_queued_compiles():
    """The compile under way may finish (up to EXIT_WAIT_S); the queued ones are dropped."""
    code = textwrap.dedent("""
        import time
        from lazyarr import _compile_thread as T
        T.EXIT_WAIT_S = 1.0
        for _ in range(5):
            T.submit(lambda: time.sleep(20))
        time.sleep(0.2)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=15)
    assert out.returncode == 0, out.stderr


def test_wait_compiles_counts_what_is_left_and_the_switch_interval_comes_back():
    import sys
    import threading

    from lazyarr import _compile_thread as T
    before = sys.getswitchinterval()
    gate = threading.Event()
    f = T.submit(gate.wait)
    try:
        assert la.wait_compiles(timeout=0.05) == 1
        assert sys.getswitchinterval() == pytest.approx(min(T.SWITCH_S, before))
    finally:
        gate.set()
    assert la.wait_compiles(timeout=30) == 0 and f.done()
    assert sys.getswitchinterval() == before


def test_a_failed_job_hands_its_exception_to_its_future():
    from lazyarr import _compile_thread as T

    def broken():
        raise ValueError("nope")
    f = T.submit(broken)
    assert la.wait_compiles(timeout=30) == 0
    with pytest.raises(ValueError, match="nope"):
        f.result()
