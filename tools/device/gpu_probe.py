"""Development probe for the GPU machine: where the host time of a small call goes, and how the
chain kernel's time depends on the PTX -> SASS route. Findings: docs/notes/gpu.rst.

    python tools/device/gpu_probe.py [--out DIR]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import cupy

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))  # the repository root
import lazyarr as la  # noqa: E402
from cuda_events import events_ms  # noqa: E402,F401  (beside; std_probe.py takes it from here)
from gpu_variants import capture  # noqa: E402  (beside this script)
from lazyarr._program import lower  # noqa: E402
from lazyarr.backends.cuda import BACKEND  # noqa: E402
from lazyarr.backends.cuda import backend as B  # noqa: E402
from lazyarr.backends.cuda import compile as C  # noqa: E402
from lazyarr.backends.cuda import render as R  # noqa: E402

sync = cupy.cuda.Device().synchronize


def wall_us(fn, reps=2000):
    for _ in range(50):
        fn()
    sync()
    best = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps // 5):
            fn()
            sync()
        best.append((time.perf_counter() - t0) / (reps // 5) * 1e6)
    return min(best)


def host(out):
    print("== host overhead (us per call, incl. sync; min of 5 batches)")
    rng = cupy.random.default_rng(0)
    rx, ry = (rng.standard_normal(1024, dtype=cupy.float32) for _ in range(2))
    sx, sy = la.asarray(rx), la.asarray(ry)
    chain = lambda: la.sqrt(abs(sx * sy + 1.5)) * la.tanh(sx) - sy  # noqa: E731
    with la.config(mode="lazy"):
        rows = {
            "cupy.abs(1024) floor": lambda: cupy.abs(rx),
            "cupy x.sum() 1024": lambda: rx.sum(),
            "build abs(x) only": lambda: abs(sx),
            "la.sum(abs(x)) 1024": lambda: la.sum(abs(sx)),
            "float(la.sum(abs(x)))": lambda: float(la.sum(abs(sx))),
            "build chain only": chain,
            "chain.compute()": lambda: chain().compute(),
            "la.sum(chain)": lambda: la.sum(chain()),
        }
        node = chain()._node
        low = lower(node)
        rows["lower(chain)"] = lambda: lower(node)
        rows["BACKEND.run(chain)"] = lambda: BACKEND.run(low)
        for name, fn in rows.items():
            try:
                print(f"  {name:28s} {wall_us(fn):8.1f}", flush=True)
            except Exception as exc:  # noqa: BLE001
                print(f"  {name:28s} failed: {exc!r}")
        for name, fn in (("sumabs", lambda: la.sum(abs(sx))), ("chain", lambda: la.sum(chain()))):
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(3000):
                fn()
            sync()
            pr.disable()
            s = io.StringIO()
            pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(30)
            with open(os.path.join(out, f"profile_{name}.txt"), "w") as f:
                f.write(s.getvalue())
            print(f"-- cProfile {name} (top by tottime; 3000 calls)")
            print("\n".join(s.getvalue().splitlines()[:45]))
        n = 1 << 28
        x = la.asarray(rng.standard_normal(n, dtype=cupy.float32))
        xr = x.compute()
        print("  type of compute():", type(xr))
        print(f"  per call 2^28: la.sum(abs(x)) {events_ms(lambda: la.sum(abs(x))):.4f} ms, "
              f"cupy x.sum() {events_ms(lambda: xr.sum()):.4f} ms")


def sass_stats(cubin_path, out, tag):
    if not shutil.which("cuobjdump"):
        return ""
    r = subprocess.run(["cuobjdump", "-sass", cubin_path], capture_output=True, text=True)
    with open(os.path.join(out, f"sass_{tag}.txt"), "w") as f:
        f.write(r.stdout)
    lines = [ln for ln in r.stdout.splitlines() if "/*0" in ln and ";" in ln]
    kinds = {}
    for ln in lines:
        op = ln.split("*/")[1].strip().split()[0] if "*/" in ln else "?"
        if op.startswith("@"):
            op = ln.split("*/")[1].strip().split()[1]
        op = op.split(".")[0]
        kinds[op] = kinds.get(op, 0) + 1
    top = sorted(kinds.items(), key=lambda kv: -kv[1])[:10]
    return f"{len(lines)} instrs " + " ".join(f"{k}:{v}" for k, v in top)


def routes(out):
    print("== chain kernel: PTX -> SASS route (kernel only, 20 back to back, median of 5)")
    rng = cupy.random.default_rng(1)
    n = 1 << 28
    x = la.asarray(rng.standard_normal(n, dtype=cupy.float32))
    y = la.asarray(rng.standard_normal(n, dtype=cupy.float32))
    sms, cc = B._current_device_info()
    print(f"  driver {cupy.cuda.runtime.driverGetVersion()} runtime {cupy.cuda.runtime.runtimeGetVersion()}"
          f" nvjitlink {_nvjitlink_version()}")
    if shutil.which("ptxas"):
        ver = subprocess.run(["ptxas", "--version"], capture_output=True, text=True).stdout
        print("  ptxas:", ver.strip().splitlines()[-1])
    works = {
        "chain": lambda: la.sum(la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y),
        "sumabs": lambda: la.sum(abs(x)),
        "map": lambda: (x * y + 1.5).compute(),
        "rows": lambda: la.sum(m * m, axis=1),
        "cols": lambda: la.sum(m * m, axis=0),
    }
    m = la.asarray(rng.standard_normal((1 << 14, 1 << 14), dtype=cupy.float32))
    tmp = tempfile.mkdtemp()
    for wname, fn in works.items():
        lowered = capture(fn)
        geo = R.analyze(lowered.program, lowered.inputs)
        for unroll in ((1, 2) if wname == "chain" else (geo.spec.unroll,)):
            import dataclasses
            g = dataclasses.replace(geo)
            g.spec = dataclasses.replace(geo.spec, unroll=unroll)
            rendered = R.render(lowered.program, g.spec)
            ptx, entry = C.compile_ptx(rendered, cc)
            payloads = {"driver-jit(ptx)": ptx.encode(), "nvjitlink": C.link_cubin(ptx, cc),
                        "cupy-linkstate": _driver_link(ptx)}
            if shutil.which("ptxas"):
                p = os.path.join(tmp, "k.ptx")
                open(p, "w").write(ptx)
                for opt in ("-O3",):
                    cb = os.path.join(tmp, f"k{opt}.cubin")
                    r = subprocess.run(["ptxas", opt, f"-arch=sm_{cc[0]}{cc[1]}", p, "-o", cb],
                                       capture_output=True, text=True)
                    if r.returncode == 0:
                        payloads[f"ptxas {opt}"] = open(cb, "rb").read()
            for route, payload in payloads.items():
                if payload is None:
                    continue
                mod = cupy.cuda.function.Module()
                mod.load(payload)
                kfn = mod.get_function(entry)
                e = B._Entry(kfn, g, rendered, sms)
                res = cupy.empty(lowered.shape, lowered.program.root.dtype)
                args = tuple(BACKEND.arguments(e, lowered.inputs, lowered.scalars, res))
                for _ in range(3):
                    kfn(e.grid, e.block, args)
                s, t = cupy.cuda.Event(), cupy.cuda.Event()
                ts = []
                for _ in range(5):
                    sync()
                    s.record()
                    for _ in range(20):
                        kfn(e.grid, e.block, args)
                    t.record()
                    t.synchronize()
                    ts.append(cupy.cuda.get_elapsed_time(s, t) / 20)
                info = ""
                if route != "driver-jit(ptx)":
                    cp = os.path.join(tmp, "x.cubin")
                    open(cp, "wb").write(payload)
                    info = sass_stats(cp, out, f"{wname}_u{unroll}_{route.split()[0]}")
                print(f"  {wname:7s} unroll {unroll} {route:16s} {statistics.median(ts):8.4f} ms  {info}",
                      flush=True)


def middle(out):
    """Middle-axis and column reductions: per call and back to back, lazyarr vs CuPy eager."""
    print("== axis reductions (ms per call / back to back)")
    rng = cupy.random.default_rng(2)
    m = rng.standard_normal((1 << 14, 1 << 14), dtype=cupy.float32)
    t3 = m.reshape(512, 32, 1 << 14)
    lm, lt3 = la.asarray(m), la.asarray(t3)
    with la.config(mode="lazy"):
        for name, lazy, eager in (
                ("sum(x*x, axis=1) (512,32,16384)", lambda: la.sum(lt3 * lt3, axis=1),
                 lambda: cupy.sum(t3 * t3, axis=1)),
                ("sum(x*x, axis=0) 16384^2", lambda: la.sum(lm * lm, axis=0),
                 lambda: cupy.sum(m * m, axis=0)),
                ("sum(x*x, axis=(0,1)) (512,32,16384)", lambda: la.sum(lt3 * lt3, axis=(0, 1)),
                 lambda: cupy.sum(t3 * t3, axis=(0, 1)))):
            ref = cupy.asnumpy(eager())
            got = cupy.asnumpy(lazy().data)
            ok = bool(abs(got - ref).max() <= 1e-3 * abs(ref).max())
            b2b = _b2b(lazy)
            print(f"  {name:36s} lazyarr {events_ms(lazy):.4f} / {b2b:.4f} ms "
                  f"({(1 << 30) / (b2b * 1e-3) / 1e9:.0f} GB/s)  eager {events_ms(eager):.4f} / "
                  f"{_b2b(eager):.4f} ms  same: {ok}", flush=True)


def _b2b(fn, reps=20):
    fn()
    s, e = cupy.cuda.Event(), cupy.cuda.Event()
    sync()
    s.record()
    for _ in range(reps):
        fn()
    e.record()
    e.synchronize()
    return cupy.cuda.get_elapsed_time(s, e) / reps


def _driver_link(ptx):
    try:
        ls = cupy.cuda.function.LinkState()
        ls.add_ptr_data(ptx, "k.ptx")
        return bytes(ls.complete())
    except Exception as exc:  # noqa: BLE001
        print("  driver link failed:", exc)
        return None


def _nvjitlink_version():
    try:
        from cuda.bindings import nvjitlink
        return nvjitlink.version()
    except Exception as exc:  # noqa: BLE001
        return repr(exc)[:60]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    ap.add_argument("--only", default="host,routes")
    a = ap.parse_args()
    for part in a.only.split(","):
        try:
            {"host": host, "routes": routes, "middle": middle}[part](a.out)
        except Exception as exc:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            print(part, "failed", exc)


if __name__ == "__main__":
    main()
