"""Write docs/generated/numpy-names.rst: every public NumPy name and how lazyarr serves it
(run by conf.py; tests/test_fallback.py checks the same table against NumPy's namespace)."""
from __future__ import annotations

import os
from collections import Counter

import numpy as np

from lazyarr._numpy_names import numpy_names, status

_MARK = {"native": "native", "fallback": "fallback", "unsupported": "—"}


def page() -> str:
    rows = [(path, *status(path)) for path in numpy_names()]
    counts = Counter(kind for _, kind, _ in rows)
    out = ["NumPy names in lazyarr", "======================", "",
           f"Every public name of NumPy {np.__version__} (its main namespace and ``numpy.linalg``, "
           "``numpy.fft``, ``numpy.random``) and how ``lazyarr.<name>`` serves it. Generated when "
           "the docs are built (docs/gen_numpy_names.py); a test checks the table against NumPy's "
           "namespace.", "",
           "* **native**: lazyarr's own; elementwise operations and reductions are fused "
           "(:doc:`ops`).",
           "* **fallback**: NumPy (cpu) or CuPy (cuda) runs it on the computed operands, and array "
           "results come back as computed LazyArrays on the same device: it works, it is not "
           "fused (see :doc:`../guide`, *Porting from NumPy*). Types and constants are NumPy's own "
           "objects.",
           "* **—**: not provided, with the reason.", "",
           f"Totals: {len(rows)} names; {counts['native']} native, {counts['fallback']} through "
           f"the fallback, {counts['unsupported']} unsupported.", "",
           ".. list-table::", "   :header-rows: 1", "   :widths: 30 12 58", "",
           "   * - NumPy", "     - lazyarr", "     - note"]
    for path, kind, note in rows:
        out += [f"   * - ``numpy.{path}``", f"     - {_MARK[kind]}", f"     - {note}"]
    return "\n".join(out) + "\n"


def write(outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "numpy-names.rst"), "w") as f:
        f.write(page())
