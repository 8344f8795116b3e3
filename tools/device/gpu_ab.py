"""A/B of lazyarr at two or more commits on one GPU, in one device call (tools/device/README.md).

Here:   rm -rf .ab/old && mkdir -p .ab/old && git archive <commit> lazyarr benchmarks setup.py pyproject.toml | tar x -C .ab/old
        (``.ab/`` in .git/info/exclude; carry [".whl", ".ab"])
There:  python3 tools/device/gpu_ab.py [--hot-only | --large-only] $PWD/.ab/old [$PWD/.ab/mid ...] $PWD
        (after the wheel install line; gpu_session.sh's script step does that)

Each tree runs in its own process, the trees in turn, twice (drift shows), with the same data:
hot small calls (median wall µs with sync; the chain's also under ``errstate(all="ignore")``,
its host time without the sync, and its GPU span by CUDA events) and, without ``--hot-only``,
large kernels (CUDA-event medians: each call alone, host launch work included, and ``_b2b``
rows: 20 calls back to back between the events, the kernel time). asv numbers of
two device calls come from two machines; this compares on one. A tree without built Cython
extensions for this interpreter is built first (``setup.py build_ext --inplace``).
"""
import json, subprocess, sys
SNIP = r'''
import sys, json, time, numpy as np
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + "/benchmarks")
import cupy as cp, lazyarr as la
HOT_ONLY, LARGE_ONLY = sys.argv[2] == "1", sys.argv[2] == "large"
from common import elementwise_chain
out = {}
def events(fn, reps=30):
    fn(); fn(); cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(); fn(); b.record(); b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b))
    ts.sort(); return round(ts[len(ts)//2] * 1000, 1)
def b2b(fn, calls=20, reps=7):
    # kernel time: calls back to back between two events (the host's launch work overlaps the
    # previous kernel), per call; the median of reps such spans
    fn(); fn(); cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        for _ in range(calls): fn()
        b.record(); b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b) / calls)
    ts.sort(); return round(ts[len(ts)//2] * 1000, 1)
def hot(fn, reps=300):
    for _ in range(min(30, reps)): fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); fn(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t0)
    ts.sort(); return round(ts[len(ts)//2] * 1e6, 1)
with la.config(device="cuda"):
    g = cp.random.default_rng(0)
    def jac(v):
        return 0.2 * (v[1:-1, 1:-1] + v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:])
    if not LARGE_ONLY:
      xs = la.asarray(g.random(1024, dtype=cp.float32)); ys = la.asarray(g.random(1024, dtype=cp.float32))
      out["sumabs_1024_hot_us"] = hot(lambda: la.sum(abs(xs)).compute())
      out["chain_1024_hot_us"] = hot(lambda: la.sum(la.sqrt(abs(xs*ys+1.5))*la.tanh(xs)-ys).compute())
      # (asv's data: uniform in [-1, 1), benchmarks/common.py)
      xn = la.asarray(g.uniform(-1, 1, 1024, dtype=cp.float32)); yn = la.asarray(g.uniform(-1, 1, 1024, dtype=cp.float32))
      out["chain_1024_hot_asvdata_us"] = hot(lambda: la.sum(la.sqrt(abs(xn*yn+1.5))*la.tanh(xn)-yn).compute())
      out["axpy_1024_hot_us"] = hot(lambda: (xs*ys+1.5).compute())
      with np.errstate(all="ignore"):
          out["chain_1024_hot_unchecked_us"] = hot(lambda: la.sum(la.sqrt(abs(xs*ys+1.5))*la.tanh(xs)-ys).compute())
      def issue(fn, reps=300):   # host time of a call, no synchronization (the launches queue)
          for _ in range(30): fn()
          cp.cuda.Device().synchronize(); t0 = time.perf_counter()
          for _ in range(reps): fn()
          t = time.perf_counter() - t0; cp.cuda.Device().synchronize(); return round(t / reps * 1e6, 1)
      out["chain_1024_issue_us"] = issue(lambda: la.sum(la.sqrt(abs(xs*ys+1.5))*la.tanh(xs)-ys).compute())
      out["chain_1024_gpu_span_us"] = events(lambda: la.sum(la.sqrt(abs(xs*ys+1.5))*la.tanh(xs)-ys).compute(), reps=300)
      for side in (1024, 4096):       # asv InPlaceStencil (2^20, 2^24): 10 in-place steps, wall
          w = la.asarray(g.random((side, side), dtype=cp.float32))
          def steps(w=w):
              u = w.copy()
              for _ in range(10):
                  u[1:-1, 1:-1] = jac(u)
              u.compute()
          out[f"inplace10_{side}_us"] = hot(steps, reps=60)
          out[f"jacobi_{side}_compute_us"] = hot(lambda w=w: jac(w).compute(), reps=200)
      e = la.asarray(g.random(2000)); f = la.asarray(g.random(2000))
      def loop():                     # asv ElementLoop
          s = 0.0
          for i in range(2000):
              s = s + e[i] * f[i]
          float(s)
      out["element_loop_us"] = hot(loop, reps=15)
    if HOT_ONLY:
        print("RESULT", json.dumps(out)); sys.exit(0)
    x = la.asarray(g.random(1 << 28, dtype=cp.float32)); y = la.asarray(g.random(1 << 28, dtype=cp.float32))
    out["sumabs_2^28_us"] = events(lambda: la.sum(abs(x)).compute())
    out["chain_2^28_us"] = events(lambda: la.sum(la.sqrt(abs(x*y+1.5))*la.tanh(x)-y).compute())
    out["axpy_2^28_us"] = events(lambda: (x*y+1.5).compute())
    x26 = la.asarray(g.random(1 << 26, dtype=cp.float32))
    out["chain16_2^26_us"] = events(lambda: elementwise_chain(x26, 16).compute())
    m = la.asarray(g.random((16384, 16384), dtype=cp.float32))
    out["sumsq_axis0_us"] = events(lambda: la.sum(m*m, axis=0).compute())
    # the same kernels back to back (kernel time without the host's launch work)
    out["sumabs_2^28_b2b_us"] = b2b(lambda: la.sum(abs(x)).compute())
    out["chain_2^28_b2b_us"] = b2b(lambda: la.sum(la.sqrt(abs(x*y+1.5))*la.tanh(x)-y).compute())
    out["axpy_2^28_b2b_us"] = b2b(lambda: (x*y+1.5).compute())
    out["chain16_2^26_b2b_us"] = b2b(lambda: elementwise_chain(x26, 16).compute())
    out["jacobi_16384_b2b_us"] = b2b(lambda: jac(m).compute())
    xc = x._node.data if hasattr(x, "_node") else None
    out["cupy_sum_2^28_us"] = events(lambda: cp.sum(xc))
print("RESULT", json.dumps(out))
'''
args = sys.argv[1:]
hot_only = "--hot-only" in args
large_only = "--large-only" in args     # the large kernels alone (a short call)
trees = [a for a in args if a not in ("--hot-only", "--large-only")]
for root in dict.fromkeys(trees):
    # (a tree from git archive has the Cython sources only: build them for this interpreter)
    import glob, os, sysconfig
    if os.path.exists(os.path.join(root, "setup.py")) and not glob.glob(
            os.path.join(root, "lazyarr", "*" + sysconfig.get_config_var("EXT_SUFFIX"))):
        b = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=root,
                           capture_output=True, text=True, timeout=300)
        print("built", root, b.returncode, b.stderr[-500:], flush=True)
rows = {}
runs = [(rnd, i, root) for rnd in (1, 2) for i, root in enumerate(trees)]
for rnd, i, root in runs:
    tag = f"{i}:{os.path.basename(root.rstrip('/'))}#{rnd}"
    p = subprocess.run([sys.executable, "-c", SNIP, root,
                        "1" if hot_only else "large" if large_only else "0"],
                       capture_output=True, text=True, timeout=150)
    line = [l for l in p.stdout.splitlines() if l.startswith("RESULT")]
    rows[tag] = json.loads(line[0][7:]) if line else {"error": (p.stderr or p.stdout)[-800:]}
    print(tag, rows[tag], flush=True)
keys = list(dict.fromkeys(k for r in rows.values() for k in r if k != "error"))
print("| metric | " + " | ".join(rows) + " |")
for k in keys:
    print(f"| {k} | " + " | ".join(str(rows[t].get(k)) for t in rows) + " |")
