"""Concurrency (issue 6): 8 threads materializing different and identical expressions at
once give correct results, compile each new program once, and never deadlock.

Every wait has a timeout, so a deadlock fails the test instead of hanging CI.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest
import strategies as S

import lazyarr as la
from lazyarr import backends

N_THREADS = 8
TIMEOUT = 120
TARGETS = [t for t in S.targets() if t != "lazy-cuda"]


def _in_threads(work, n=N_THREADS):
    """Run ``work(i)`` in ``n`` threads released together; the results, re-raising errors."""
    barrier = threading.Barrier(n, timeout=TIMEOUT)
    results: list = [None] * n
    errors: list = []

    def body(i):
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads), "deadlock: threads still running after timeout"
    if errors:
        raise errors[0]
    return results


def _expr(x, k):
    return la.sqrt(abs(x * (k + 1) - 0.5)) + la.where(x > 0, x, -x) * 2


def _expr_np(a, k):
    return np.sqrt(abs(a * (k + 1) - 0.5)) + np.where(a > 0, a, -a) * 2


@pytest.mark.parametrize("target", TARGETS)
def test_different_expressions_in_8_threads(target):
    rng = np.random.default_rng(1)
    data = [rng.standard_normal(5000 + 7 * i) for i in range(N_THREADS)]

    def work(i):
        out = []
        with S.target(target):
            for rep in range(20):
                x = la.asarray(data[i])
                y = _expr(x, i) - rep
                out.append((np.asarray(y), float(y.sum()), int(la.argmax(y))))
        return out

    for i, out in enumerate(_in_threads(work)):
        for rep, (y, s, am) in enumerate(out):
            want = _expr_np(data[i], i) - rep
            np.testing.assert_array_equal(y, want)
            assert s == pytest.approx(want.sum(), rel=1e-12) and am == int(np.argmax(want))


@pytest.mark.parametrize("target", TARGETS)
def test_identical_expressions_in_8_threads(target):
    """The same program (new to every cache) over each thread's data, started together."""
    rng = np.random.default_rng(2)
    data = [rng.standard_normal(3000).astype(np.float32) for _ in range(N_THREADS)]
    salt = float(rng.integers(1, 10**6))     # a constant no other test uses: a new program key

    def work(i):
        with S.target(target):
            return np.asarray(la.tanh(la.asarray(data[i]) * 3 + salt) * salt)

    for i, got in enumerate(_in_threads(work)):
        np.testing.assert_array_equal(got, np.tanh(data[i] * 3 + np.float32(salt)) * np.float32(salt))


@pytest.mark.parametrize("target", TARGETS)
def test_one_pending_array_materialized_by_8_threads(target):
    """Eight threads call ``np.asarray`` on the same pending LazyArray at once."""
    a = np.linspace(-4, 4, 100_001)
    with S.target(target):
        y = la.exp(la.asarray(a) / 4) - 1

    def work(i):
        with S.target(target):
            return np.asarray(y)

    want = np.exp(a / 4) - 1
    for got in _in_threads(work):
        np.testing.assert_array_equal(got, want)


def test_modes_differ_per_thread():
    """Half the threads eager, half lazy, all building the same expression."""
    a = np.arange(1000.0)

    def work(i):
        mode = "eager" if i % 2 else "lazy"
        with la.config(mode=mode, device="cpu"):
            y = la.asarray(a) * 2 + 1
            pending = not y.is_materialized
            return la.get_config().mode, pending, np.asarray(y)

    for i, (mode, pending, got) in enumerate(_in_threads(work)):
        assert mode == ("eager" if i % 2 else "lazy")
        assert pending == (mode == "lazy")
        np.testing.assert_array_equal(got, a * 2 + 1)


def _count_compiles(monkeypatch, delay=0.0):
    """Patch cpu-fused's compiler to count calls per program key (and to take ``delay``
    seconds longer, so that threads missing the cache together reliably overlap)."""
    import time

    from lazyarr.backends import cpu_fused

    counts: dict = {}
    lock = threading.Lock()
    real = cpu_fused.compile_program

    def counting(program):
        with lock:
            counts[program] = counts.get(program, 0) + 1
        time.sleep(delay)
        return real(program)

    monkeypatch.setattr(cpu_fused, "compile_program", counting)
    return counts


@pytest.mark.skipif("cpu-fused" not in backends.available(), reason="cpu-fused not built")
def test_cpu_fused_compiles_each_program_once_sequentially(monkeypatch):
    counts = _count_compiles(monkeypatch)
    x = la.asarray(np.ones(10))
    with backends.use_backend("cpu-fused"):
        for _ in range(5):
            np.asarray(la.cosh(x * 7.25) - 3.5)
    assert list(counts.values()) == [1]


@pytest.mark.skipif("cpu-fused" not in backends.available(), reason="cpu-fused not built")
def test_cpu_fused_compiles_each_program_once_in_8_threads(monkeypatch):
    counts = _count_compiles(monkeypatch, delay=0.2)
    data = [np.full(1000, float(i)) for i in range(N_THREADS)]

    def work(i):
        with backends.use_backend("cpu-fused"):
            # a long program makes the compile window wide enough to overlap
            y = la.asarray(data[i])
            for _ in range(200):
                y = la.sin(y) * 0.5 + 0.125
            return np.asarray(y)

    results = _in_threads(work)
    assert all(r.shape == (1000,) for r in results)
    assert sum(counts.values()) == 1, f"compiled {sum(counts.values())} times for one program"


def test_cuda_compiles_each_kernel_once_in_8_threads(tmp_path, monkeypatch):
    """With CuPy's module loader faked (see test_cache.py) and Numba's PTX compile slowed
    down so that the threads overlap."""
    pytest.importorskip("numba.cuda")
    import time

    import test_cache as T

    ns = T._setup(tmp_path, monkeypatch)
    counting = T.C.compile_ptx

    def slow(*args, **kw):
        time.sleep(0.2)
        return counting(*args, **kw)

    monkeypatch.setattr(T.C, "compile_ptx", slow)
    rendered = T._rendered("tanh")
    fns = _in_threads(lambda i: T.C.load_kernel(rendered, T.CC))
    assert all(f[0] == "function" for f in fns)
    assert len(ns.compiles) == 1, f"compiled {len(ns.compiles)} times for one kernel"
