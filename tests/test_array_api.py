"""The Python array API standard's conformance suite against lazyarr (issue 19).

Runs ``../shared/array-api-tests`` (or ``$LAZYARR_ARRAY_API_TESTS``), unmodified, with
``ARRAY_API_TESTS_MODULE=lazyarr`` in lazy and in eager mode on the CPU, at a fixed seed and
example budget, with ``tests/array_api_xfails.txt`` (only tests NumPy 2 fails too, each with
its reason). A failure outside that file fails here, with the test ids. Under ``CI=true`` a
missing suite fails; elsewhere it is skipped with that reason. The suite runs from its own
folder (its test ids, and so Hypothesis's per-test seeds, are the documented command's) with
Hypothesis's example database in a temporary folder, so nothing is written into the suite.
The namespace hooks themselves are tested directly below it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from helpers import SIMULATED

import lazyarr as la

HERE = Path(__file__).parent
SUITE = Path(os.environ.get("LAZYARR_ARRAY_API_TESTS", HERE.parent.parent / "shared" / "array-api-tests"))
XFAILS = HERE / "array_api_xfails.txt"
SETTINGS = ["--max-examples=20", "--disable-deadline", "--hypothesis-seed=0"]


def _suite_or_skip() -> None:
    if not (SUITE / "array_api_tests").is_dir():
        reason = f"the array API conformance suite was not found at {SUITE} (set LAZYARR_ARRAY_API_TESTS)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    pytest.importorskip("ndindex", reason="the conformance suite needs ndindex (the test extra)")


@pytest.mark.parametrize("mode", ["lazy", "eager"])
def test_conformance_suite_has_no_failure_outside_the_xfails_file(mode, tmp_path):
    _run_suite(mode, "cpu", tmp_path, workers=2)


@pytest.mark.gpu
@pytest.mark.skipif(SIMULATED or not la.cuda_available(),
                    reason="needs a GPU: the suite's ~1,300 tests compile too many kernels for "
                           "the simulated device")
@pytest.mark.parametrize("mode", ["lazy", "eager"])
def test_conformance_suite_on_cuda(mode, tmp_path):
    """The same suite with ``device="cuda"`` as the default (issue 19, item 3)."""
    _run_suite(mode, "cuda", tmp_path, workers=int(os.environ.get("LAZYARR_ARRAY_API_WORKERS", "4")))


def _run_suite(mode: str, device: str, tmp_path: Path, workers: int) -> None:
    _suite_or_skip()
    junit = tmp_path / "junit.xml"
    xdist = ["-n", str(workers)] if _has_xdist() else []
    env = dict(os.environ, ARRAY_API_TESTS_MODULE="lazyarr", LAZYARR_MODE=mode, LAZYARR_DEVICE=device,
               HYPOTHESIS_STORAGE_DIRECTORY=str(tmp_path / "hypothesis"), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "array_api_tests", "-q", "-p", "no:cacheprovider",
         *SETTINGS, f"--xfails-file={XFAILS}", f"--junitxml={junit}", "--tb=line", *xdist],
        cwd=SUITE, env=env, capture_output=True, text=True, timeout=900)
    assert junit.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    suite = ET.parse(junit).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    failed = [f"{case.get('classname')}::{case.get('name')}" for case in suite.iter("testcase")
              if case.find("failure") is not None or case.find("error") is not None]
    ran = int(suite.get("tests")) - int(suite.get("skipped"))
    assert ran > 1000, f"only {ran} tests ran:\n{proc.stdout[-3000:]}"
    assert not failed, (f"{len(failed)} conformance failures outside {XFAILS.name} ({mode} mode, "
                        f"{device}):\n  " + "\n  ".join(failed[:60]) + "\n" + proc.stdout[-2000:])


def _has_xdist() -> bool:
    try:
        import xdist  # noqa: F401
    except ImportError:
        return False
    return True


def test_xfails_file_lists_tests_with_reasons():
    lines = [line for line in XFAILS.read_text().splitlines() if line.strip()]
    ids = [line for line in lines if not line.startswith("#")]
    assert ids and all(line.startswith("array_api_tests/") for line in ids)
    assert len(ids) == len(set(ids))
    # every group of ids follows a comment giving its reason
    blocks = XFAILS.read_text().split("\n\n")
    for block in blocks[1:]:
        rows = [r for r in block.splitlines() if r.strip()]
        if rows:
            assert rows[0].startswith("#"), rows[0]


def test_spec_names_of_elementwise_functions_are_lazyarrs_own():
    """``la.acos`` is ``la.arccos`` (as ``np.acos is np.arccos``): native and fused, not the
    fallback (which on cuda called CuPy's ``acosh``, off at ``0+nanj`` on the H200)."""
    pairs = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
             "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh", "pow": "power",
             "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
             "bitwise_right_shift": "right_shift"}
    for spec, numpy_name in pairs.items():
        assert getattr(la, spec) is getattr(la, numpy_name), spec
        assert getattr(np, spec) is getattr(np, numpy_name)
    x = la.asarray([0.25, 0.5])
    assert len(la.explain(la.acos(x) * la.pow(x, 2)).kernels) == 1


# --------------------------------------------------------------------------- the hooks
def test_namespace_hooks():
    x = la.arange(3.0)
    assert x.__array_namespace__() is la and la.__array_api_version__ == "2024.12"
    with pytest.raises(ValueError, match="2024.12"):
        x.__array_namespace__(api_version="2099.01")
    info = la.__array_namespace_info__()
    assert info.default_device() == "cpu" and "cpu" in info.devices()
    assert info.capabilities()["boolean indexing"] is True
    assert info.default_dtypes()["real floating"] == np.float64
    assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"}
    assert set(info.dtypes(kind=("bool", "unsigned integer"))) == {"bool", "uint8", "uint16", "uint32", "uint64"}
    with pytest.raises(ValueError, match="unknown dtype kind"):
        info.dtypes(kind="floats")
    with pytest.raises(ValueError, match="is not one of"):
        info.dtypes(device="tpu")
    assert x.to_device("cpu") is x


def test_asarray_copy_keyword_as_numpy():
    a = np.arange(4.0)
    x = la.asarray(a)
    assert np.shares_memory(np.asarray(la.asarray(a, copy=False)), a)
    assert not np.shares_memory(np.asarray(la.asarray(a, copy=True)), a)
    assert la.asarray(x, copy=False) is x and la.asarray(x) is x
    y = la.asarray(x, copy=True)
    y[0] = 7
    assert float(x[0]) == 0.0
    pending = x * 2
    assert la.asarray(pending, copy=False) is pending
    for bad in (lambda: la.asarray(x, dtype=np.float32, copy=False),
                lambda: la.asarray([1, 2], copy=False)):
        with pytest.raises(ValueError, match="avoid copy"):
            bad()
    with pytest.raises(ValueError):
        np.asarray([1, 2], copy=False)           # NumPy's own rule, the same
    assert la.asarray(x, dtype=np.float32).dtype == np.float32


def test_astype_copy_and_device_keywords():
    x = la.arange(3.0)
    assert x.astype(np.float64, copy=False) is x
    assert x.astype(np.float64) is not x
    assert la.astype(x, np.int8, copy=False).dtype == np.int8
    assert la.astype(x, np.float32, device="cpu").dtype == np.float32


def test_correction_is_ddof():
    a = np.arange(10.0)
    x = la.asarray(a)
    assert float(la.std(x, correction=1)) == float(np.std(a, ddof=1))
    assert float(x.var(correction=2)) == float(np.var(a, correction=2))
    with pytest.raises(ValueError, match="simultaneously"):
        la.var(x, ddof=1, correction=1)


def test_sort_and_argsort_with_the_standards_keywords():
    a = np.array([[3, 1, 3, 2, 1], [0, 5, 5, 0, 2]])
    x = la.asarray(a)
    np.testing.assert_array_equal(np.asarray(la.sort(x, descending=True)), -np.sort(-a))
    # stable, also descending: equal elements keep their order
    np.testing.assert_array_equal(np.asarray(la.argsort(x, descending=True)), [[0, 2, 3, 1, 4], [1, 2, 4, 0, 3]])
    np.testing.assert_array_equal(np.asarray(la.argsort(x)), np.argsort(a, stable=True))
    np.testing.assert_array_equal(np.asarray(la.argsort(x, axis=0)), np.argsort(a, axis=0, stable=True))
    np.testing.assert_array_equal(np.asarray(la.sort(x, axis=None)), np.sort(a, axis=None))


def test_from_dlpack():
    a = np.arange(5, dtype=np.int32)
    x = la.from_dlpack(a)
    assert isinstance(x, la.LazyArray) and np.shares_memory(np.asarray(x), a)
    assert not np.shares_memory(np.asarray(la.from_dlpack(a, copy=True)), a)
    np.testing.assert_array_equal(np.from_dlpack(x * 2), a * 2)


def test_fftfreq_takes_the_standards_dtype_and_device():
    got = la.fft.fftfreq(8, 0.5, dtype=np.float32, device="cpu")
    assert got.dtype == np.float32 and got.device == "cpu"
    np.testing.assert_array_equal(np.asarray(got), np.fft.fftfreq(8, 0.5).astype(np.float32))
    np.testing.assert_array_equal(np.asarray(la.fft.rfftfreq(9, d=2.0)), np.fft.rfftfreq(9, d=2.0))
    with pytest.raises(ValueError, match="real floating"):
        la.fft.fftfreq(4, dtype=np.int32)
    assert isinstance(la.fft.fft(la.arange(4.0)), la.LazyArray)     # (lazyarr/_fft.py)
