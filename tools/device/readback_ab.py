"""A/B of the read back of a small cuda result (``float()`` of a full reduction: issue 13 item
1, ``float(la.sum(sqrt(abs(x*y + 1.5)) * tanh(x) - y))`` of 1,024 float32 at most 30 µs) at two
or more trees, on one GPU, in one device call.

Here:   rm -rf .ab/main && mkdir -p .ab/main && git archive <commit> lazyarr setup.py pyproject.toml | tar x -C .ab/main
There:  python3 tools/device/readback_ab.py [--reps 2000] [--rounds 2] $PWD/.ab/main $PWD

Each tree runs in its own process (its path first on ``sys.path``, as gpu_ab.py does), the
trees in turn, ``--rounds`` times (drift shows), with the same data. Per row, the median µs of
``--reps`` calls, each call timed alone (``perf_counter`` around it; ``float()`` waits for the
GPU itself, the ``.compute()`` rows end with a device synchronization):

* ``float_chain``: ``float(la.sum(chain))``, the whole call (the issue's row);
* ``float_chain_unchecked``: the same under ``np.errstate(all="ignore")`` (no flags to read);
* ``float_sum_abs``: ``float(la.sum(abs(x)))``;
* ``readback_checked``: ``float(r)`` alone, ``r = la.sum(chain).compute()`` made untimed before
  (the read back of a checked launch's result: its flags and its value);
* ``readback_done``: ``float(r)`` of a result read before (nothing pending: the value only);
* ``compute_chain``: ``la.sum(chain).compute()`` and a synchronization (no read back);
* ``hot_allocs_of_10``: outputs the cached entry's hot path allocated in 10 calls of
  ``float(la.sum(chain))`` (10 on main; 0 where the kept 0-d output is reused).

Then a check each tree must pass: the values equal NumPy's (float32 sums to 1e-5 relative), and
``float(la.sum(la.log(x - 10)))`` warns "invalid value encountered in log" once per call, before
the value is returned (a warnings filter "error" raises instead of returning). Development tool;
findings in docs/notes/gpu.rst (2026-12-07h).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

SNIP = r'''
import json, os, statistics, sys, time, warnings
sys.path.insert(0, sys.argv[1])
os.environ.setdefault("LAZYARR_COMPILE", "wait")    # (the first call waits for the kernel)
import numpy as np
import lazyarr as la
REPS = int(sys.argv[2])
SIM = os.environ.get("LAZYARR_CUDA_SIM") == "1"
if SIM:
    xp, sync = np, (lambda: None)
else:
    import cupy as xp
    sync = xp.cuda.Device().synchronize
out = {}
def per_call(fn, before=None, reps=REPS):
    for _ in range(min(50, reps)):
        fn() if before is None else fn(before())
    ts = []
    for _ in range(reps):
        arg = before() if before is not None else None
        t0 = time.perf_counter()
        fn() if before is None else fn(arg)
        ts.append(time.perf_counter() - t0)
    return round(statistics.median(ts) * 1e6, 2)
rng = np.random.default_rng(0)
N = 64 if SIM else 1024     # (the simulator runs each kernel in Python: a smoke test there)
hx, hy = (rng.standard_normal(N).astype(np.float32) for _ in range(2))
with la.config(device="cuda", mode="lazy"):
    x, y = la.asarray(xp.asarray(hx)), la.asarray(xp.asarray(hy))
    chain = lambda: la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y
    out["float_chain"] = per_call(lambda: float(la.sum(chain())))
    with np.errstate(all="ignore"):
        out["float_chain_unchecked"] = per_call(lambda: float(la.sum(chain())))
    out["float_sum_abs"] = per_call(lambda: float(la.sum(abs(x))))
    out["readback_checked"] = per_call(lambda r: float(r), before=lambda: (la.sum(chain()).compute(), sync())[0])
    done = la.sum(chain()); float(done)
    out["readback_done"] = per_call(lambda: float(done))
    out["compute_chain"] = per_call(lambda: (la.sum(chain()).compute(), sync()))
    # the checks
    want = float(np.sum(np.sqrt(np.abs(hx * hy + np.float32(1.5))) * np.tanh(hx) - hy))
    got = float(la.sum(chain()))
    ok = abs(got - want) <= 1e-5 * max(1.0, abs(want))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            v = float(la.sum(la.log(x - 10)))
    ok = ok and np.isnan(v) and [str(w.message) for w in caught] == ["invalid value encountered in log"] * 3
    returned = "no"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            returned = float(la.sum(la.log(x - 10)))
        except RuntimeWarning as e:
            ok = ok and "invalid value encountered in log" in str(e)
        else:
            ok = False
    s = la.sum(abs(x)); first = float(s); kept = s.to_numpy()
    for _ in range(3):
        float(la.sum(abs(y)))          # later results must not change one held
    ok = ok and float(s) == first and float(kept) == first
    out["checks_ok"] = bool(ok)
    # outputs the cached entry's hot path allocated in 10 calls (the kept 0-d output: 0 or 1)
    from lazyarr._materialize import select
    backend = select("cuda", "lazy")
    real = backend.xp()
    made = []
    class Counting:
        @staticmethod
        def ndarray(*a):
            made.append(a)
            return real.ndarray(*a)
    backend._xp = Counting
    for _ in range(10):
        float(la.sum(chain()))
    backend._xp = real
    out["hot_allocs_of_10"] = len(made)
print("RESULT", json.dumps(out))
'''


def main() -> None:
    args = sys.argv[1:]
    reps, rounds = 2000, 2
    if "--reps" in args:
        i = args.index("--reps")
        reps = int(args[i + 1])
        del args[i:i + 2]
    if "--rounds" in args:
        i = args.index("--rounds")
        rounds = int(args[i + 1])
        del args[i:i + 2]
    trees = args
    import glob
    import sysconfig
    for root in dict.fromkeys(trees):
        # (a tree from git archive has the Cython sources only: build them for this interpreter)
        if os.path.exists(os.path.join(root, "setup.py")) and not glob.glob(
                os.path.join(root, "lazyarr", "*" + sysconfig.get_config_var("EXT_SUFFIX"))):
            b = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"],
                               cwd=root, capture_output=True, text=True, timeout=300)
            print("built", root, b.returncode, b.stderr[-500:], flush=True)
    rows = {}
    for rnd in range(1, rounds + 1):
        order = list(enumerate(trees))
        for i, root in (order if rnd % 2 else order[::-1]):
            tag = f"{i}:{os.path.basename(root.rstrip('/'))}#{rnd}"
            p = subprocess.run([sys.executable, "-c", SNIP, root, str(reps)],
                               capture_output=True, text=True, timeout=300)
            line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT")]
            rows[tag] = json.loads(line[0][7:]) if line else {"error": (p.stderr or p.stdout)[-800:]}
            print(tag, rows[tag], flush=True)
    keys = list(dict.fromkeys(k for r in rows.values() for k in r if k != "error"))
    print("| µs, median of %d | " % reps + " | ".join(rows) + " |")
    for k in keys:
        print(f"| {k} | " + " | ".join(str(rows[t].get(k)) for t in rows) + " |")


if __name__ == "__main__":
    main()
