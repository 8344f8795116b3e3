"""NPBench kernels on the CPU, NumPy against lazyarr, each library in processes of its own.

Each round starts one process for NumPy and one for lazyarr (alternated); a process makes the
kernel's data (the runner's ``inputs``), makes ``--warmup`` calls (lazyarr compiles its
kernels there: shown apart as the first call) and then times ``--reps`` calls, each from fresh
copies of the array arguments to every output materialized (the runner's ``run``). The table
gives the median over all timed calls of all rounds, and the geomean of each of issue 19's
categories (``npbench_gpu.EXPRESSIONS`` and ``LIBRARY``).

Why processes of their own: the two libraries in one process share glibc's heap, and its
dynamic thresholds (``M_MMAP_THRESHOLD``, ``M_TRIM_THRESHOLD``) move up with the largest
block freed. After lazyarr has freed a large buffer, NumPy's temporaries of 128 KiB to 32 MiB
stop being fresh mappings returned at every free: ``channel_flow`` at L took NumPy 9.1 s in
a process of its own and 5.5 s after a lazyarr call in the same process (docs/notes/cpu.rst,
2026-12-06e). A user's NumPy script runs in a process where lazyarr never ran.

    cd /tmp && PYTHONPATH=<tree> python <repo>/tools/peers/npbench_ab.py L 3 jacobi_2d hdiff
    python tools/peers/npbench_ab.py --preset L --rounds 2 --reps 2 --md out.md [kernels]

(The first form, ``PRESET REPS NAMES``, is the old call: ``--rounds 1 --reps REPS``.)
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
_NPBENCH = os.environ.get("LAZYARR_NPBENCH", os.path.join(_HERE, "../../../shared/npbench"))


def child(library: str, name: str, preset: str, warmup: int, reps: int) -> dict:
    """One process's calls of one kernel with one library: {"first": s, "times": [s, ...]}."""
    sys.path.insert(0, _NPBENCH)
    import run as R  # the NPBench runner
    inf = R.info(name)
    data = R.inputs(inf, preset)
    kernel = f"{inf['module_name']}_numpy.py"
    if library == "numpy":
        fn, wrap = getattr(R.load(inf, kernel), inf["func_name"]), (lambda a: a)
    else:
        import lazyarr as la
        fn = getattr(R.load(inf, kernel, "import lazyarr as np"), inf["func_name"])
        wrap = la.asarray
    times = []
    for i in range(warmup + reps):
        outs, t = R.run(fn, inf, data, wrap)
        del outs
        gc.collect()
        times.append(t)
    return {"first": times[0], "times": times[warmup:]}


def measure(library: str, name: str, preset: str, warmup: int, reps: int) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", library, name, preset,
           str(warmup), str(reps)]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd="/tmp")
    if out.returncode != 0:
        raise RuntimeError(f"{library} {name}: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        library, name, preset, warmup, reps = sys.argv[2:7]
        print(json.dumps(child(library, name, preset, int(warmup), int(reps))))
        return
    if len(sys.argv) > 2 and sys.argv[1] in ("S", "M", "L", "paper") and sys.argv[2].isdigit():
        sys.argv[1:3] = ["--preset", sys.argv[1], "--rounds", "1", "--reps", sys.argv[2]]
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("names", nargs="*")
    p.add_argument("--preset", default="L")
    p.add_argument("--rounds", type=int, default=2, help="processes per library, alternated")
    p.add_argument("--reps", type=int, default=2, help="timed calls per process")
    p.add_argument("--warmup", type=int, default=1, help="untimed calls per process first")
    p.add_argument("--device", default="cpu", choices=["cpu"], help="(cuda: npbench_gpu.py)")
    p.add_argument("--md", default=None)
    args = p.parse_args()
    sys.path.insert(0, _HERE)
    from npbench_gpu import EXPRESSIONS, LIBRARY, finish_table
    names = args.names or EXPRESSIONS + LIBRARY
    rows = []
    for name in names:
        got: dict[str, list[float]] = {"numpy": [], "lazyarr": []}
        first = []
        try:
            for _ in range(args.rounds):
                for library in got:
                    r = measure(library, name, args.preset, args.warmup, args.reps)
                    got[library] += r["times"]
                    if library == "lazyarr":
                        first.append(r["first"])
        except RuntimeError as e:
            print(f"{name:14s} failed: {e}", flush=True)
            continue
        mn, ml = (1e3 * statistics.median(got[k]) for k in ("numpy", "lazyarr"))
        cat = "expressions" if name in EXPRESSIONS else "library" if name in LIBRARY else "other"
        rows.append((name, cat, mn, ml, 1e3 * statistics.median(first), mn / ml))
        print(f"{name:14s} numpy {mn:9.1f} ms  lazy {ml:9.1f} ms (first {rows[-1][4]:9.1f})"
              f"  ratio {mn / ml:5.2f}", flush=True)
    lines = [f"# NPBench at preset {args.preset} on the CPU, NumPy against lazyarr, each in processes of "
             f"its own (`tools/peers/npbench_ab.py --rounds {args.rounds} --reps {args.reps}`: medians "
             f"of {args.rounds * args.reps} calls, ms; cpu_loops={os.environ.get('LAZYARR_CPU_LOOPS', 'background')}; "
             f"{time.strftime('%Y-%m-%d')})", "",
             "| kernel | category | NumPy | lazyarr | lazyarr first call | NumPy / lazyarr |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r[0]} | {r[1]} | {r[2]:,.1f} | {r[3]:,.1f} | {r[4]:,.1f} | {r[5]:.2f} |" for r in rows]
    finish_table(lines, [(r[1], r[5]) for r in rows], args.md)


if __name__ == "__main__":
    main()
