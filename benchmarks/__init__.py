"""lazyarr's airspeed-velocity suite: ``bench_*.py`` (benchmark classes), ``common.py`` (helpers).

asv imports every module of this package to discover benchmarks. The peer-comparison scripts
that also live here (``cpu_peers.py``, ``gpu_peers.py``) are standalone programs, run as
``python benchmarks/gpu_peers.py``; they import CuPy, torch or numexpr at the top, so importing
them during discovery would fail the whole suite on a machine without those. Under asv (when
``asv_runner`` is loaded) only ``bench_*`` and ``common`` are imported for real; any other
module of this package loads as an empty placeholder. Outside asv nothing changes.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types


class _StandaloneScripts(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: object, target: object = None):  # noqa: ANN201
        package, _, leaf = fullname.rpartition(".")
        if package != __name__ or leaf.startswith("bench_") or leaf == "common":
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        module.__doc__ = "a standalone script (run it with python), not part of the asv suite"


if "asv_runner" in sys.modules and not any(isinstance(f, _StandaloneScripts) for f in sys.meta_path):
    sys.meta_path.insert(0, _StandaloneScripts())
