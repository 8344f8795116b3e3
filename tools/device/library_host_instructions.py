"""Instructions per call of issue 18's library calls on cuda, in the simulator, under
callgrind: steadier than time on a shared machine (an unchanged step moved 1.5x between
processes there; its instruction count moves < 1 %). For each tree and case, one valgrind run
counts only the measured loop (a small C helper, compiled here with ``gcc``, starts and stops
callgrind's instrumentation around it); the count divided by the calls. Cases:
``NAME:p`` ``la.NAME(f(x))`` of the pending ``f(x) = sqrt(abs(x))*2-1``, ``NAME:c`` of the
computed values, ``NAME:n`` NumPy's own call on them (the simulated device's library work),
``f`` building ``f(x)``; NAME one of sort, argsort, cumsum, unique. Launches are stubbed as in
library_host.py. ``--device cpu`` runs the same calls on the CPU (no launch stub). Needs
valgrind and gcc; ~30 s a case. Development tool; findings in docs/notes/gpu.rst (2026-12-08).

    python tools/device/library_host_instructions.py TREE [TREE ...] [--n 1024] [--reps 200]
        [--device cuda] [--cases sort:p sort:c ...]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

_HELPER = r"""
#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT; }
void cg_stop(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_STOP_INSTRUMENTATION; }
"""

CASES = [f"{name}:{kind}" for name in ("sort", "argsort", "cumsum", "unique")
         for kind in ("p", "c")]


def child(case: str, n: int, reps: int, device: str, helper: str) -> None:
    """The measured loop (run under valgrind)."""
    import ctypes

    import numpy as np
    os.environ.setdefault("LAZYARR_COMPILE", "wait")
    import lazyarr as la
    from lazyarr._materialize import select

    def f(x):
        return la.sqrt(la.abs(x)) * 2 - 1

    rng = np.random.default_rng(0)
    with la.config(device=device, mode="lazy"):
        x = la.asarray(rng.standard_normal(n, dtype=np.float32))
        done = f(x).compute()
        values = done.data
        name, _, kind = case.partition(":")
        call = getattr(la, name, None)
        numpy_call = getattr(np, name, None)
        fn = {"p": lambda: call(f(x)), "c": lambda: call(done),
              "n": lambda: numpy_call(values), "": lambda: f(x)}[kind if name != "f" else ""]
        for _ in range(30):         # compiles (waited for) and first calls
            fn()
        if device == "cuda":        # (the host path only: as library_host.py)
            def launch(entry, args) -> None:
                out = args[entry.out_slot]
                if out.shape == values.shape and out.dtype == values.dtype:
                    out[...] = values
            select("cuda", "lazy").launch = launch
        for _ in range(30):
            fn()
        lib = ctypes.CDLL(helper)
        lib.cg_start()
        for _ in range(reps):
            fn()
        lib.cg_stop()


def count(tree: str, case: str, opts: argparse.Namespace, helper: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        env = dict(os.environ, LAZYARR_CUDA_SIM="1", PYTHONPATH=tree)
        subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                        "--collect-atstart=no", f"--callgrind-out-file={out}", sys.executable,
                        os.path.abspath(__file__), "--child", case, "--n", str(opts.n),
                        "--reps", str(opts.reps), "--device", opts.device, "--helper", helper],
                       env=env, cwd=tmp, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        with open(out) as fh:
            total = next(int(line.split()[1]) for line in fh if line.startswith("totals:"))
    return total // opts.reps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="*")
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--cases", nargs="+", default=CASES)
    ap.add_argument("--child")
    ap.add_argument("--helper")
    opts = ap.parse_args()
    if opts.child:
        child(opts.child, opts.n, opts.reps, opts.device, opts.helper)
        return
    with tempfile.TemporaryDirectory() as tmp:
        src, helper = os.path.join(tmp, "cg.c"), os.path.join(tmp, "cg.so")
        with open(src, "w") as fh:
            fh.write(_HELPER)
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", helper, src], check=True)
        trees = [os.path.abspath(t) for t in opts.trees or ["."]]
        print(f"{'case':12s}" + "".join(f" {os.path.basename(t)[-14:]:>14s}" for t in trees)
              + f"   (instructions a call, {opts.device}, {opts.n} float32)")
        for case in opts.cases:
            print(f"{case:12s}" + "".join(f" {count(t, case, opts, helper):14,d}" for t in trees),
                  flush=True)


if __name__ == "__main__":
    main()
