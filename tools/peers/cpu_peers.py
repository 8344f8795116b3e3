"""CPU peers: NumPy eager vs lazyarr lazy (cpu-fused) vs numexpr, in one run.

    python tools/peers/cpu_peers.py            # full sizes (issue 4): about a minute
    python tools/peers/cpu_peers.py --quick    # small sizes, smoke test
    python tools/peers/cpu_peers.py --rst docs/cpu-peers-table.inc   # also write the docs table

Prints a markdown table of medians (and speed-ups over NumPy eager), then the
peak-memory rows, each measured in a fresh process (Linux: /proc/self/status VmHWM). numexpr runs with as many
threads as lazyarr (``LAZYARR_NUM_THREADS`` or all cores).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

import lazyarr as la
from lazyarr.backends import cpu_fused

try:
    import numexpr as ne
except ImportError:  # pragma: no cover
    ne = None


def median_time(fn: Callable[[], object], repeat: int, number: int = 1) -> float:
    fn()  # warm-up (compiles/caches; faults in pages of the inputs)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def cases(n: int, rows: int, cols: int, small: int) -> list[tuple[str, dict[str, Callable[[], object]], int, int]]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    m = rng.standard_normal((rows, cols), dtype=np.float32)
    xs, ys = x[:small].copy(), y[:small].copy()
    lx, ly, lm, lxs, lys = (la.asarray(a) for a in (x, y, m, xs, ys))

    def lazy(fn):   # the mode is set once (la.set_config in main), as a script would
        def run():
            return np.asarray(fn())
        return run

    out: list[tuple[str, dict[str, Callable[[], object]], int, int]] = []
    out.append((f"sum(abs(x)), N=2^{n.bit_length() - 1}", {
        "numpy": lambda: np.sum(np.abs(x)),
        "lazyarr": lazy(lambda: la.sum(abs(lx))),
        "numexpr": lambda: ne.evaluate("sum(abs(x))", local_dict={"x": x}),
    }, 7, 1))
    out.append((f"sum(sqrt(abs(x*y + 1.5)) * tanh(x) - y), N=2^{n.bit_length() - 1}", {
        "numpy": lambda: np.sum(np.sqrt(np.abs(x * y + 1.5)) * np.tanh(x) - y),
        "lazyarr": lazy(lambda: la.sum(la.sqrt(abs(lx * ly + 1.5)) * la.tanh(lx) - ly)),
        "numexpr": lambda: ne.evaluate("sum(sqrt(abs(x*y + 1.5)) * tanh(x) - y)", local_dict={"x": x, "y": y}),
    }, 5, 1))
    out.append((f"x*y + 1.5 materialized, N=2^{n.bit_length() - 1}", {
        "numpy": lambda: x * y + 1.5,
        "lazyarr": lazy(lambda: (lx * ly + 1.5).compute()),
        "numexpr": lambda: ne.evaluate("x*y + 1.5", local_dict={"x": x, "y": y}),
    }, 7, 1))
    for axis in (1, 0):
        out.append((f"sum(x*x, axis={axis}), {rows}x{cols}", {
            "numpy": lambda axis=axis: np.sum(m * m, axis=axis),
            "lazyarr": lazy(lambda axis=axis: la.sum(lm * lm, axis=axis)),
            "numexpr": lambda axis=axis: ne.evaluate(f"sum(m*m, axis={axis})", local_dict={"m": m}),
        }, 7, 1))
    out.append((f"chain, cached, N={small} (per call)", {
        "numpy": lambda: np.sum(np.sqrt(np.abs(xs * ys + 1.5)) * np.tanh(xs) - ys),
        "lazyarr": lazy(lambda: la.sum(la.sqrt(abs(lxs * lys + 1.5)) * la.tanh(lxs) - lys)),
        "numexpr": lambda: ne.evaluate("sum(sqrt(abs(xs*ys + 1.5)) * tanh(xs) - ys)",
                                       local_dict={"xs": xs, "ys": ys}),
    }, 7, 2000))
    jitted = la.jit(lambda a, b: la.sum(la.sqrt(abs(a * b + 1.5)) * la.tanh(a) - b))
    out.append((f"same in a la.jit function (replayed), N={small}", {
        "numpy": out[-1][1]["numpy"],
        "lazyarr": lazy(lambda: jitted(lxs, lys)),
        "numexpr": out[-1][1]["numexpr"],
    }, 7, 2000))
    # the backend alone: the lowered program of the same expression, run again (what the
    # cpu-fused backend costs per call; the rest of the row above is node building in Python)
    from lazyarr import _node
    from lazyarr._program import lower
    from lazyarr.backends import cpu_fused as cf
    with la.config(mode="lazy", device="cpu"):
        expr = la.sqrt(abs(lxs * lys + 1.5)) * la.tanh(lxs) - lys
    root = _node.op_node("sum", np.dtype(np.float32), (), "cpu", (expr._node,), (None, False, None, 0))
    lowered = lower(root)
    out.append((f"same, cpu-fused backend.run only (lowered program), N={small}", {
        "numpy": out[-2][1]["numpy"],
        "lazyarr": lambda: cf.BACKEND.run(lowered),
        "numexpr": out[-2][1]["numexpr"],
    }, 7, 2000))
    return out


_MEM_CHILD = r"""
import json, sys
import numpy as np
import lazyarr as la
which, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
x = np.empty(n, np.float32); y = np.empty(n, np.float32)
for a in (x, y):   # filled in chunks: no N-sized temporary raises the baseline peak
    for i in range(0, n, 1 << 20):
        rng.standard_normal(min(1 << 20, n - i), dtype=np.float32, out=a[i:i + (1 << 20)])
lx, ly = la.asarray(x), la.asarray(y)
small = la.asarray(x[:4096]), la.asarray(y[:4096])
with la.config(mode="lazy", device="cpu"):   # warm up imports, the cache and the thread pool
    float(la.sum(la.sqrt(abs(small[0] * small[1] + 1.5)) * la.tanh(small[0]) - small[1]))
np.sum(np.sqrt(np.abs(x[:4096] * y[:4096] + 1.5)) * np.tanh(x[:4096]) - y[:4096])
import numexpr as ne
ne.evaluate("sum(x)", local_dict={"x": x[:4096]})
def status_kib(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
# VmHWM is this process's own peak (ru_maxrss would inherit the parent's peak across fork+exec)
base = status_kib("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")            # reset VmHWM to the current RSS
if which == "numpy":
    r = float(np.sum(np.sqrt(np.abs(x * y + 1.5)) * np.tanh(x) - y))
elif which == "numexpr":
    r = float(ne.evaluate("sum(sqrt(abs(x*y + 1.5)) * tanh(x) - y)", local_dict={"x": x, "y": y}))
else:
    with la.config(mode="lazy", device="cpu"):
        r = float(la.sum(la.sqrt(abs(lx * ly + 1.5)) * la.tanh(lx) - ly))
peak = status_kib("VmHWM")
print(json.dumps({"extra_mib": (peak - base) / 1024, "result": r}))
"""


def peak_memory(which: str, n: int) -> float:
    out = subprocess.run([sys.executable, "-c", _MEM_CHILD, which, str(n)], capture_output=True, text=True,
                         check=True, env=dict(os.environ))
    return float(json.loads(out.stdout.strip().splitlines()[-1])["extra_mib"])


def fmt_time(t: float) -> str:
    if t < 1e-3:
        return f"{t * 1e6:.1f} µs"
    return f"{t * 1e3:.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--rst", metavar="FILE", help="also write the table as an RST list-table")
    args = ap.parse_args()
    table: list[list[str]] = []
    n, rows, cols = (1 << 20, 512, 1024) if args.quick else (1 << 25, 4096, 8192)
    la.set_config(mode="lazy", device="cpu")
    threads = cpu_fused.get_num_threads()
    if ne is not None:
        ne.set_num_threads(threads)
    print(f"# lazyarr CPU peers — {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"{threads} thread(s); numpy {np.__version__}, numexpr {ne.__version__ if ne else '-'}; "
          f"medians, float32; load average {os.getloadavg()[0]:.1f}\n")
    print("| case | NumPy eager | lazyarr lazy (cpu-fused) | numexpr | lazyarr vs NumPy | numexpr vs NumPy |")
    print("|---|---|---|---|---|---|")
    for name, fns, repeat, number in cases(n, rows, cols, 1024):
        t = {k: (median_time(f, repeat, number) if (k != "numexpr" or ne) else float("nan"))
             for k, f in fns.items()}
        table.append([name, fmt_time(t["numpy"]), fmt_time(t["lazyarr"]), fmt_time(t["numexpr"]),
                     f"{t['numpy'] / t['lazyarr']:.2f}×", f"{t['numpy'] / t['numexpr']:.2f}×"])
        print("| " + " | ".join(table[-1]) + " |", flush=True)
    mem = {k: peak_memory(k, n) for k in ("numpy", "lazyarr", "numexpr")}
    table.append([f"extra peak RSS of the chain reduction, N=2^{n.bit_length() - 1} (fresh process)",
                 f"{mem['numpy']:.1f} MiB", f"{mem['lazyarr']:.1f} MiB", f"{mem['numexpr']:.1f} MiB", "", ""])
    print("| " + " | ".join(table[-1]) + " |")
    if args.rst:
        head = ["case", "NumPy eager", "lazyarr lazy (cpu-fused)", "numexpr", "lazyarr vs NumPy",
                "numexpr vs NumPy"]
        lines = [f".. list-table:: ``python tools/peers/cpu_peers.py`` ({threads} threads)",
                 "   :header-rows: 1", ""]
        for row in [head, *table]:
            lines.append("   * - " + (row[0].replace("*", "\\*") or " "))
            lines += ["     - " + (c.replace("*", "\\*") or " ") for c in row[1:]]
        with open(args.rst, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
