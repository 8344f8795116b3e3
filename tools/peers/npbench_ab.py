"""NPBench kernels, NumPy against lazyarr, in one process: each kernel's ``run`` (the runner's,
``../shared/npbench/run.py``) alternated NumPy / lazyarr ``REPS`` times, medians; the first
lazyarr call (compiles) is shown apart. The runner itself times one call per kernel in a
fresh process, which is noisy on a shared machine; this is for before/after comparisons.

    cd /tmp && PYTHONPATH=<tree> python <repo>/tools/peers/npbench_ab.py L 3 gesummv gemver doitgen
"""
from __future__ import annotations

import gc
import os
import statistics
import sys

sys.path.insert(0, os.environ.get("LAZYARR_NPBENCH",
                                  os.path.join(os.path.dirname(__file__), "../../../shared/npbench")))
import run as R  # noqa: E402  (the NPBench runner)

import lazyarr as la  # noqa: E402


def main() -> None:
    preset, reps = sys.argv[1], int(sys.argv[2])
    for name in sys.argv[3:]:
        inf = R.info(name)
        kernel = f"{inf['module_name']}_numpy.py"
        data = R.inputs(inf, preset)
        fn_np = getattr(R.load(inf, kernel), inf["func_name"])
        fn_la = getattr(R.load(inf, kernel, "import lazyarr as np"), inf["func_name"])
        tn, tl = [], []
        for _ in range(reps):
            ref, t = R.run(fn_np, inf, data, lambda a: a)
            tn.append(t)
            del ref
            gc.collect()
            got, t = R.run(fn_la, inf, data, la.asarray)
            tl.append(t)
            del got
            gc.collect()
        mn, ml = statistics.median(tn), statistics.median(tl)
        print(f"{name:12s} numpy {mn * 1e3:9.1f} ms  lazy {ml * 1e3:9.1f} ms (first {tl[0] * 1e3:9.1f})"
              f"  ratio {mn / ml:5.2f}", flush=True)


if __name__ == "__main__":
    main()
