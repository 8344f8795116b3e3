"""NPBench kernels on a GPU: each kernel as published with ``import cupy as np`` (CuPy eager,
issue 19's baseline) against the same kernel with ``import lazyarr as np`` on the cuda device,
in one process, alternated, medians of ``--reps`` calls after one warm-up call each (kernel
compiles); a call's time runs from the arguments on the GPU to its outputs computed there
(``cupy.cuda.Device().synchronize()``; the copies back to the host are not timed). Each
output is then checked against NumPy's (the runner's tolerance). A kernel CuPy cannot run
(a NumPy name it lacks, a Python loop past ``--budget`` seconds) is reported, not hidden.

    python tools/peers/npbench_gpu.py --preset L --md $OUT/npbench_cuda.md [kernels]

``LAZYARR_TREE=dir`` imports lazyarr from ``dir`` (an archived, built tree: an A/B in one
device call). ``--ref numpy --device cpu`` runs the same code with NumPy as the baseline (a check of the
script on a machine without a GPU). The runner is ``$LAZYARR_NPBENCH`` (default
the repository's ``.npb``, a copy carried to the device machine, else ``../shared/npbench``).
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import signal
import statistics
import sys
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_CARRIED = os.path.join(_HERE, "../../.npb")     # (tools/device/fetch_wheels.sh makes it)
sys.path.insert(0, os.environ.get("LAZYARR_NPBENCH", _CARRIED if os.path.isdir(_CARRIED)
                                  else os.path.join(_HERE, "../../../shared/npbench")))
import run as R  # noqa: E402  (the NPBench runner)

if os.environ.get("LAZYARR_TREE"):  # an A/B of two trees (an archived commit: tools/device/gpu_ab.py)
    sys.path.insert(0, os.environ["LAZYARR_TREE"])

import lazyarr as la  # noqa: E402

#: issue 19's categories (docs/notes/cpu.rst, "The NPBench corpus at preset L")
EXPRESSIONS = ["arc_distance", "azimint_naive", "compute", "hdiff", "channel_flow", "softmax",
               "jacobi_2d", "fdtd_2d", "covariance2", "floyd_warshall", "mandelbrot1",
               "conv2d_bias", "vadv"]
LIBRARY = ["atax", "bicg", "gemm", "k2mm", "mvt", "gemver", "gesummv", "doitgen",
           "correlation", "covariance", "stockham_fft"]


def finish_table(lines: list[str], ratios: list[tuple[str, float]], md: str | None,
                 what: str = "kernels") -> None:
    """End a table with each category's geomean (``(category, ratio)`` pairs) as notes; print
    it, and write it to ``md`` when given (the performance page reads it: tools/perf_page.py)."""
    lines.append("")
    for cat in ("expressions", "library"):
        ok = [x for c, x in ratios if c == cat]
        if ok:
            geo = math.exp(sum(math.log(x) for x in ok) / len(ok))
            lines.append(f"({cat}: geomean {geo:.2f}x over {len(ok)} {what})")
    text = "\n".join(lines)
    print(text)
    if md:
        with open(md, "w") as fh:
            fh.write(text + "\n")


class OverBudget(Exception):
    pass


def _alarm(signum, frame):
    raise OverBudget


def _timed(fn, inf, data, wrap, sync, finish):
    ctx = dict(data)
    for a in inf["array_args"]:
        ctx[a] = wrap(np.copy(data[a]))
    sync()
    t = time.perf_counter()
    ret = fn(*[ctx[a] for a in inf["input_args"]])
    outs = list(ret) if isinstance(ret, (tuple, list)) else ([] if ret is None else [ret])
    outs += [ctx[a] for a in inf["output_args"]]
    outs = [finish(o) for o in outs]
    sync()
    return outs, time.perf_counter() - t


def _profile(fn_wrap_finish_host, inf, data, sync, path: str) -> None:
    """One more call under cProfile (host time: where a host-bound kernel's calls go)."""
    import cProfile
    import pstats
    fn, wrap, finish, _ = fn_wrap_finish_host
    os.makedirs(os.path.dirname(path), exist_ok=True)
    prof = cProfile.Profile()
    prof.enable()
    _timed(fn, inf, data, wrap, sync, finish)
    prof.disable()
    prof.dump_stats(path)
    st = pstats.Stats(path)
    for key in ("tottime", "cumulative"):
        st.sort_stats(key).print_stats(22)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("names", nargs="*")
    p.add_argument("--preset", default="L")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--budget", type=float, default=30.0, help="seconds per timed call at most")
    p.add_argument("--first-budget", type=float, default=60.0,
                   help="seconds for the warm-up call at most (it compiles the kernels)")
    p.add_argument("--ref", default="cupy", choices=["cupy", "numpy"])
    p.add_argument("--device", default="cuda")
    p.add_argument("--md", default=None)
    p.add_argument("--profile", default=None, metavar="DIR",
                   help="after the timed calls, one more lazyarr call under cProfile: "
                        "DIR/<kernel>.prof, and its top functions printed")
    args = p.parse_args()
    names = args.names or EXPRESSIONS + LIBRARY
    la.set_config(device=args.device)
    if args.ref == "cupy":
        import cupy
        ref_import, ref_wrap = "import cupy as np", cupy.asarray
        to_host = cupy.asnumpy

        def sync() -> None:
            cupy.cuda.Device().synchronize()
    else:
        ref_import, ref_wrap, to_host = None, (lambda a: a), np.asarray

        def sync() -> None:
            pass

    def la_finish(o):
        return o.compute() if isinstance(o, la.LazyArray) else o

    def la_host(o):
        return o.to_numpy() if isinstance(o, la.LazyArray) else np.asarray(o)

    signal.signal(signal.SIGALRM, _alarm)
    rows = []
    for name in names:
        inf = R.info(name)
        kernel = f"{inf['module_name']}_numpy.py"
        data = R.inputs(inf, args.preset)
        want, _ = R.run(getattr(R.load(inf, kernel), inf["func_name"]), inf, data, lambda a: a)
        want = want[:len(want) - len([a for a in inf["array_args"] if a not in inf["output_args"]])]
        fns = {"ref": (getattr(R.load(inf, kernel, ref_import), inf["func_name"]), ref_wrap,
                       lambda o: o, to_host),
               "lazyarr": (getattr(R.load(inf, kernel, "import lazyarr as np"), inf["func_name"]),
                           la.asarray, la_finish, la_host)}
        times: dict[str, list[float]] = {"ref": [], "lazyarr": []}
        first: dict[str, float] = {}
        problem = {}
        for rep in range(args.reps + 1):
            for who, (fn, wrap, finish, host) in fns.items():
                if who in problem:
                    continue
                budget = args.first_budget if rep == 0 else args.budget
                signal.setitimer(signal.ITIMER_REAL, budget)
                try:
                    outs, t = _timed(fn, inf, data, wrap, sync, finish)
                    signal.setitimer(signal.ITIMER_REAL, 0)
                except OverBudget:
                    problem[who] = f"{'first call' if rep == 0 else 'a call'} over {budget:g} s"
                    continue
                except Exception as e:  # noqa: BLE001 - reported, not hidden
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    problem[who] = f"{type(e).__name__}: {str(e)[:100]}"
                    continue
                if rep == 0:
                    first[who] = t
                    bad = R.mismatch(want, [np.asarray(host(o)) for o in outs])
                    if bad:
                        problem[who] = "wrong: " + bad
                else:
                    times[who].append(t)
                del outs
                gc.collect()
        if args.profile and "lazyarr" not in problem:
            _profile(fns["lazyarr"], inf, data, sync, os.path.join(args.profile, name + ".prof"))
        med = {w: statistics.median(v) * 1e3 if v else math.nan for w, v in times.items()}
        ratio = med["ref"] / med["lazyarr"]
        cat = "expressions" if name in EXPRESSIONS else "library" if name in LIBRARY else "other"
        rows.append((name, cat, med["ref"], med["lazyarr"], first.get("lazyarr", math.nan) * 1e3,
                     ratio, "; ".join(f"{w}: {m}" for w, m in problem.items())))
        print(f"{name:14s} {args.ref} {med['ref']:9.2f} ms  lazyarr {med['lazyarr']:9.2f} ms "
              f"(first {rows[-1][4]:9.1f})  ratio {ratio:6.2f}  {rows[-1][6]}", flush=True)
    lines = [f"# NPBench at preset {args.preset}, {args.ref} eager against lazyarr on {args.device} "
             f"(tools/peers/npbench_gpu.py; medians of {args.reps} calls after a warm-up, ms)", "",
             f"| kernel | category | {args.ref} | lazyarr | lazyarr first call | {args.ref} / lazyarr | problem |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]:.2f} | {r[3]:.2f} | {r[4]:.1f} | {r[5]:.2f} | {r[6]} |")
    finish_table(lines, [(r[1], r[5]) for r in rows if not r[6] and r[5] > 0], args.md,
                 "kernels without a problem")


if __name__ == "__main__":
    main()
