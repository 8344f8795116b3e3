"""The drop-in corpus: real NumPy scripts run unchanged with `import lazyarr as np`.

Two sets, each script in a fresh process, compared with NumPy (see docs/testing.rst):

* corpus/scripts/ (this repo), by corpus/run.py at preset S;
* the 40 NPBench kernels of ../shared/npbench (``$LAZYARR_NPBENCH``), by its run.py at preset S.
  Under ``CI=true`` a missing folder fails; elsewhere the kernels are skipped with that reason.

What fails today is listed, with the first line of its error, in tests/corpus_xfail.txt and
tests/npbench_xfail.txt. A listed script that fails is reported as xfail; a failure not in the
list fails the test, and so does a listed script that passes: the lists can only shrink.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
NPBENCH = Path(os.environ.get("LAZYARR_NPBENCH", REPO.parent / "shared" / "npbench"))
CORPUS_XFAIL = HERE / "corpus_xfail.txt"
NPBENCH_XFAIL = HERE / "npbench_xfail.txt"

pytestmark = pytest.mark.corpus


def read_xfail(path: Path) -> dict[str, str]:
    """``name: reason`` per line; blank lines and ``#`` comments ignored."""
    entries = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, reason = line.partition(":")
            entries[name.strip()] = reason.strip()
    return entries


def corpus_names() -> list[str]:
    return sorted(p.stem for p in (REPO / "corpus" / "scripts").glob("*.py"))


def npbench_names() -> list[str]:
    return sorted(p.stem for p in (NPBENCH / "bench_info").glob("*.json"))


def run_one(runner: Path, name: str, tmp_path: Path) -> str | None:
    """Run `name` with `runner` (preset S); the problem it reports, or None if correct."""
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, str(runner), "--preset", "S", "--json", str(out), name],
                          capture_output=True, text=True, timeout=600)
    assert out.exists(), f"{runner} wrote no result:\n{proc.stdout}\n{proc.stderr}"
    (row,) = json.loads(out.read_text())
    return row["problem"]


def verdict(name: str, problem: str | None, xfail_file: Path) -> None:
    expected = read_xfail(xfail_file)
    if name in expected:
        if problem is None:
            pytest.fail(f"{name} now passes: remove its entry from {xfail_file.relative_to(REPO)}")
        pytest.xfail(problem)
    if problem is not None:
        pytest.fail(f"{name}: {problem}")


@pytest.mark.parametrize("name", corpus_names())
def test_corpus_script(name, tmp_path):
    verdict(name, run_one(REPO / "corpus" / "run.py", name, tmp_path), CORPUS_XFAIL)


def test_npbench_present():
    if not (NPBENCH / "run.py").exists():
        reason = f"NPBench not found at {NPBENCH} (set LAZYARR_NPBENCH)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    assert len(npbench_names()) == 40


@pytest.mark.parametrize("name", npbench_names())
def test_npbench_kernel(name, tmp_path):
    verdict(name, run_one(NPBENCH / "run.py", name, tmp_path), NPBENCH_XFAIL)


@pytest.mark.parametrize("xfail_file, known", [(CORPUS_XFAIL, corpus_names), (NPBENCH_XFAIL, npbench_names)])
def test_xfail_lists_name_real_scripts(xfail_file, known):
    names = known()
    if not names:
        pytest.skip(f"no scripts found for {xfail_file.name}")
    stale = sorted(set(read_xfail(xfail_file)) - set(names))
    assert not stale, f"{xfail_file.name} lists scripts that do not exist: {stale}"
