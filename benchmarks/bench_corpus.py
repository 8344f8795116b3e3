"""The drop-in corpus (corpus/scripts/) at preset L: each script's kernel as written, against
the same file with its one `import numpy as np` line replaced.

``library`` is the namespace the script runs on: ``numpy`` (the script as written, CPU),
``cupy`` (`import cupy as np`, cuda) or ``lazyarr`` (`import lazyarr as np`, lazy mode, on
the benchmark's device). The data is made once per process by the script's ``init`` with
NumPy (seeded) and copied to the device; each timed call gets fresh copies (the scripts may
write into their arguments), and ends when every result is materialized and the device is idle.

Only the scripts that run correctly today are benchmarked: those not listed in
tests/corpus_xfail.txt (as that list shrinks, scripts join the suite).
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np

import lazyarr as la

from .common import DEVICES, Benchmark, prepare, sync

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWAP = {"numpy": None, "cupy": "import cupy as np", "lazyarr": "import lazyarr as np"}
HOME = {"numpy": "cpu", "cupy": "cuda"}  # where the peer libraries run


def _runner():
    """corpus/run.py, imported by path (it is a script folder, not a package)."""
    spec = importlib.util.spec_from_file_location("corpus_run", os.path.join(ROOT, "corpus", "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def correct_scripts() -> list[str]:
    """The corpus scripts not in tests/corpus_xfail.txt."""
    with open(os.path.join(ROOT, "tests", "corpus_xfail.txt")) as fh:
        listed = {line.partition(":")[0].strip() for line in fh if line.strip() and not line.startswith("#")}
    return [n for n in _runner().names() if n not in listed]


class Corpus(Benchmark):
    """One corpus script at preset L (NumPy takes 30-300 ms on the 2-core CPU machine)."""

    params = [DEVICES, list(SWAP), correct_scripts()]
    param_names = ["device", "library", "script"]
    number = 1      # one call per sample, so that setup's fresh copies are never written twice
    repeat = (3, 10, 5.0)
    timeout = 600.0

    _args: dict[str, tuple] = {}

    def setup(self, device, library, script):
        if HOME.get(library, device) != device:
            raise NotImplementedError(f"{library} does not run on {device}")
        prepare(device, "lazy")
        run = _runner()
        if script not in self._args:
            self._args[script] = run.arguments(script, "L")
        self.kernel = run.load(script, SWAP[library]).kernel
        if device == "cuda":
            import cupy

            to_device = cupy.asarray
        else:
            to_device = np.copy
        wrap = la.asarray if library == "lazyarr" else (lambda a: a)
        self.args = [wrap(to_device(a)) if isinstance(a, np.ndarray) else a for a in self._args[script]]
        sync(device)

    def time_script(self, device, library, script):
        ret = self.kernel(*self.args)
        for out in (ret if isinstance(ret, tuple) else (ret,)) + tuple(self.args):
            if isinstance(out, la.LazyArray):
                out.compute()
        sync(device)
