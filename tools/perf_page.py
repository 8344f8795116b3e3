"""Build the docs' performance page from the committed asv results and the peer scripts' output.

    python tools/perf_page.py

reads ``.asv/results/<machine>/*.json`` (every machine: ``cpu-2core``, ``h200``, ...) and the
peer-comparison output, if present (``docs/_static/perf/cpu_peers.json`` written by
``python tools/peers/cpu_peers.py --json ...``, ``docs/_static/perf/gpu_peers.json`` by
``python tools/peers/gpu_peers.py --json ...``), and writes PNG plots to ``docs/_static/perf/``
and the page ``docs/performance.rst``. Nothing is measured here: rerun asv (or the peer
scripts) first, then this. Needs asv and matplotlib (``pip install -e .[bench]``).
"""
from __future__ import annotations

import argparse
import ast
import csv
import datetime
import json
import math
import os
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from asv.results import iter_results_for_machine  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADLINE = {"sum_abs": "sum(abs(x))", "axpy": "x * y + 1.5  (materialized)",
            "chain": "sum(sqrt(abs(x*y + 1.5)) * tanh(x) - y)"}
DEVICE_NAMES = {"cpu": "CPU", "cuda": "GPU"}
COLORS = {"eager": "#d62728", "lazy": "#1f77b4"}
PEER_MARKERS = "osD^vP*Xh"


# ------------------------------------------------------------------------------ loading
@dataclass(frozen=True)
class Row:
    machine: str
    commit: str
    date: int
    env: str
    bench: str
    params: tuple[tuple[str, Any], ...]
    value: float

    def p(self, name: str) -> Any:
        return dict(self.params).get(name)


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def load_rows(results_dir: str) -> tuple[list[Row], dict[str, dict]]:
    """Every (machine, commit, env, benchmark, parameter combination) value in the results."""
    with open(os.path.join(results_dir, "benchmarks.json")) as f:
        meta = {k: v for k, v in json.load(f).items() if isinstance(v, dict)}
    rows: list[Row] = []
    for machine in sorted(os.listdir(results_dir)):
        if not os.path.isdir(os.path.join(results_dir, machine)):
            continue
        for res in iter_results_for_machine(results_dir, machine):
            for key in res.get_all_result_keys():
                names = meta.get(key, {}).get("param_names", [])
                param_lists = [[_literal(v) for v in vs] for vs in res.get_result_params(key)]
                values = res.get_result_value(key, res.get_result_params(key))
                combos = _product(param_lists)
                for combo, value in zip(combos, values):
                    if value is None or (isinstance(value, float) and math.isnan(value)):
                        continue
                    rows.append(Row(machine, res.commit_hash, res.date or 0, res.env_name, key,
                                    tuple(zip(names, combo)), float(value)))
    return rows, meta


def _product(lists: list[list[Any]]) -> list[tuple]:
    out: list[tuple] = [()]
    for values in lists:
        out = [prefix + (v,) for prefix in out for v in values]
    return out


def commit_order() -> dict[str, int]:
    """Commit hash -> position in ``git rev-list`` (0 = oldest); empty if git is unavailable."""
    try:
        out = subprocess.run(["git", "rev-list", "--reverse", "--all"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {h: i for i, h in enumerate(out)}


class Snapshot:
    """One machine's newest values: for each benchmark, the newest commit that has it (all envs
    of that commit merged), so a partial run of a later commit does not hide the rest."""

    def __init__(self, rows: list[Row], machine: str, order: dict[str, int]):
        self.rows = [r for r in rows if r.machine == machine]
        self.order = order
        self.commit = self._newest(self.rows)
        self.date = _date(self.rows, self.commit)

    def _newest(self, rows: list[Row]) -> str:
        return max({r.commit for r in rows}, key=lambda c: (self.order.get(c, -1), _date(rows, c)))

    def get(self, bench: str, **fixed: Any) -> list[Row]:
        suffix = "." + bench
        out = [r for r in self.rows if (r.bench == bench or r.bench.endswith(suffix))
               and all(r.p(k) == v for k, v in fixed.items())]
        if not out:
            return []
        newest = self._newest(out)
        best: dict[tuple, Row] = {}
        for r in out:
            if r.commit == newest:
                best.setdefault(r.params, r)   # one value per parameter combination
        return list(best.values())

    def value(self, bench: str, **fixed: Any) -> float | None:
        got = self.get(bench, **fixed)
        return got[0].value if got else None


def _date(rows: list[Row], commit: str) -> int:
    return max((r.date for r in rows if r.commit == commit), default=0)


def load_peers(path: str | None) -> list[dict]:
    """Peer-script output: JSON (a list of {"work", "impl", "ms", ...}, as ``gpu_peers.py --json``
    writes) or the markdown table a script prints (``cpu_peers.py > cpu_peers.md``)."""
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        text = f.read()
    if path.endswith(".json"):
        data = json.loads(text)
        if isinstance(data, dict):
            data = data.get("rows") or data.get("results") or []
    elif path.endswith(".rst"):
        data = _rst_csv_records(text)
    else:
        data = _markdown_records(text)
    out = []
    for rec in data:
        impl = rec.get("impl") or rec.get("implementation") or rec.get("name")
        ms = next((rec[k] for k in ("ms", "median_ms", "time_ms") if k in rec), None)
        if rec.get("work") and impl and isinstance(ms, (int, float)) and ms == ms:
            out.append({**rec, "impl": impl, "ms": float(ms), "n": rec.get("n") or _n_of(rec["work"])})
    return out


_TIME_UNITS = {"s": 1e3, "ms": 1.0, "µs": 1e-3, "us": 1e-3, "ns": 1e-6}


def _ms(cell: str) -> float | None:
    parts = cell.replace("\u202f", " ").split()
    if len(parts) == 2 and parts[1] in _TIME_UNITS:
        try:
            return float(parts[0]) * _TIME_UNITS[parts[1]]
        except ValueError:
            return None
    return None


def _markdown_records(text: str) -> list[dict]:
    """Rows of the markdown tables in ``text``: long form (work | implementation | per call (ms)
    | ...) or wide form (case | impl A | impl B | ..., cells like "12.3 ms")."""
    records: list[dict] = []
    header: list[str] | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            names = cells
            header = [c.lower() for c in cells]
            continue
        if set(line) <= set("|-: "):
            continue
        if "implementation" in header:
            rec = dict(zip(header, cells))
            try:
                ms = float(rec.get("per call (ms)", "nan"))
            except ValueError:
                continue
            records.append({"work": rec.get("work", cells[0]), "impl": rec["implementation"], "ms": ms,
                            "extra": rec.get("note", "")})
        else:
            for name, cell in zip(names[1:], cells[1:]):
                ms = _ms(cell)
                if ms is not None:
                    records.append({"work": cells[0], "impl": name, "ms": ms})
    return records


def _rst_csv_records(text: str) -> list[dict]:
    """Rows of the first ``.. csv-table::`` with a work/implementation header (the table the GPU
    engineer pasted from ``gpu_peers.py`` into docs/gpu-backend.rst)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith(".. csv-table::"):
            continue
        header: list[str] = []
        body: list[str] = []
        for ln in lines[i + 1:]:
            if ln.strip().startswith(":header:"):
                header = next(csv.reader([ln.split(":header:", 1)[1].strip()], skipinitialspace=True))
            elif ln.strip().startswith(":"):
                continue
            elif ln.startswith("   ") and ln.strip():
                body.append(ln.strip())
            elif body:
                break
        header = [h.lower() for h in header]
        if "work" not in header or "implementation" not in header:
            continue
        out = []
        for row in csv.reader(body, skipinitialspace=True):
            rec = dict(zip(header, row))
            try:
                ms = float(rec.get("per call (ms)", ""))
            except ValueError:
                continue
            b2b = rec.get("back to back (ms)", "")
            out.append({"work": rec["work"], "impl": rec["implementation"], "ms": ms,
                        "b2b": float(b2b) if b2b else float("nan"), "extra": rec.get("note", "")})
        return out
    return []


def _markdown_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """(header, rows) of each markdown table in ``text``."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    current: tuple[list[str], list[list[str]]] | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            current = None
            continue
        if set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if current is None:
            current = (cells, [])
            tables.append(current)
        else:
            current[1].append(cells)
    return [table for table in tables if table[1]]


def _rst(text: str) -> str:
    return text.replace("*", r"\*")


def _n_of(work: str) -> int | None:
    m = (re.search(r"N\s*=\s*2\^(\d+)", work) or re.search(r"N\s*=\s*(\d+)", work)
         or re.search(r"(\d+)\s*elem", work))
    if not m:
        return None
    return 1 << int(m.group(1)) if "^" in m.group(0) else int(m.group(1))


def _headline_of(work: str) -> str | None:
    w = work.replace(" ", "")
    if "tanh" in w or w.startswith("chain,"):
        return "chain"
    if w.startswith("sum(abs(x))"):
        return "sum_abs"
    if w.startswith("x*y+1.5"):
        return "axpy"
    return None


# ------------------------------------------------------------------------------ plots
def _fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _log2(n: int) -> str:
    return f"$2^{{{int(n).bit_length() - 1}}}$"


def plot_chain_length(snap: Snapshot, device: str, label: str, path: str) -> bool:
    rows = snap.get("ChainLength.time_materialize", device=device)
    if not rows:
        return False
    n = max(r.p("n") for r in rows)
    fig, axes = plt.subplots(2, 1, figsize=(7, 7), sharey=False)   # stacked: readable at page width
    for ax, (method, title) in zip(axes, (("time_materialize", "materialized"), ("time_sum", "summed"))):
        for mode in ("eager", "lazy"):
            pts = sorted((r.p("length"), r.value) for r in snap.get(f"ChainLength.{method}",
                                                                     device=device, mode=mode, n=n))
            if pts:
                ax.plot(*zip(*[(x, y * 1e3) for x, y in pts]), "o-", color=COLORS[mode], label=mode)
        e = snap.value(f"ChainLength.{method}", device=device, mode="eager", n=n, length=16)
        lz = snap.value(f"ChainLength.{method}", device=device, mode="lazy", n=n, length=16)
        extra = f": lazy {e / lz:.1f}x faster at 16 ops" if e and lz else ""
        ax.set_title(f"chain of L ops, {title}{extra}", fontsize=10)
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 2, 4, 8, 16], ["1", "2", "4", "8", "16"])
        ax.set_xlabel("chain length L (elementwise ops)")
        ax.set_ylabel("time per call (ms)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(f"{label}: float32, n = 2^{n.bit_length() - 1}, lower is better", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_sizes(snap: Snapshot, device: str, label: str, peers: list[dict], path: str) -> bool:
    if not snap.get("Headline.time_expr", device=device):
        return False
    fig, axes = plt.subplots(3, 1, figsize=(7, 11))   # stacked: readable at page width
    for ax, (expr, title) in zip(axes, HEADLINE.items()):
        for mode in ("eager", "lazy"):
            pts = sorted((r.p("n"), r.value) for r in snap.get("Headline.time_expr", device=device,
                                                               mode=mode, expr=expr))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] * 1e3 for p in pts], "o-", color=COLORS[mode],
                        label=f"lazyarr {mode}", zorder=3)
        impls = list(dict.fromkeys(p["impl"] for p in peers))   # one marker and colour per peer
        labelled = set()
        for p in peers:
            if _headline_of(p["work"]) != expr or p["impl"] == "lazyarr":
                continue
            i = impls.index(p["impl"])
            n = p.get("n") or (2**28 if device == "cuda" else 2**25)
            legend = None if p["impl"] in labelled else f"{p['impl']} (peer run)"
            labelled.add(p["impl"])
            ax.plot([n], [p["ms"]], PEER_MARKERS[i % len(PEER_MARKERS)], color=f"C{i + 2}",
                    label=legend, markersize=7, alpha=0.85)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("elements n (float32)")
        ax.set_ylabel("time per call (ms)")
        e = [r for r in snap.get("Headline.time_expr", device=device, mode="eager", expr=expr)]
        if e:
            nmax = max(r.p("n") for r in e)
            ev = snap.value("Headline.time_expr", device=device, mode="eager", expr=expr, n=nmax)
            lv = snap.value("Headline.time_expr", device=device, mode="lazy", expr=expr, n=nmax)
            if ev and lv:
                title += f"\nlazy {ev / lv:.1f}x vs eager at n = 2^{nmax.bit_length() - 1}"
        ax.set_title(title, fontsize=9.5)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7.5)
    fig.suptitle(f"{label}: the headline expressions across sizes\n(log-log, lower is better)",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def speedup_rows(snap: Snapshot, device: str) -> list[tuple[str, float, float, float]]:
    """(label, eager seconds, lazy seconds, eager/lazy) for the benchmarks with both modes."""
    out = []

    def add(label: str, bench: str, size_key: str | None = None, scale: float = 1.0,
            **fixed: Any) -> None:
        rows = snap.get(bench, device=device, mode="lazy", **fixed)
        if not rows:
            return
        if size_key:
            big = max(r.p(size_key) for r in rows)
            fixed = {**fixed, size_key: big}
            label = label.format(size=_size_text(big))
        e = snap.value(bench, device=device, mode="eager", **fixed)
        lz = snap.value(bench, device=device, mode="lazy", **fixed)
        if e and lz:
            out.append((label, e * scale, lz * scale, e / lz))

    for expr, text in HEADLINE.items():
        add(f"{text}, n={{size}}", "Headline.time_expr", "n", expr=expr)
    add("16-op chain, materialized, n={size}", "ChainLength.time_materialize", "n", length=16)
    add("16-op chain, summed, n={size}", "ChainLength.time_sum", "n", length=16)
    add("broadcast exp(-(a-b)**2*c), n={size}", "Broadcast.time_materialize", "n")
    add("broadcast, summed along rows, n={size}", "Broadcast.time_sum_axis1", "n")
    shape = "16384x16384" if device == "cuda" else "4096x8192"
    for axis in ("none", "0", "1"):
        add(f"sum(x*x, axis={axis}), {shape}", "SumSquares.time_sum_squares", shape=shape, axis=axis)
    for w in ("softmax", "standardize", "polynomial", "lennard_jones"):
        add(f"{w}, n={{size}}", "Workloads.time_workload", "n", workload=w)
    for expr in ("sum_abs", "chain"):
        add(f"cached call, {expr}, 1024 elements (idle before)", "CachedCall.time_call", expr=expr)
        add(f"cached call, {expr}, 1024 elements (hot loop)", "CachedCall.track_hot_call_us",
            scale=1e-6, expr=expr)
    add("first call in a new process, empty caches", "ColdStart.timeraw_first_call_no_cache")
    add("first call in a new process, disk cache", "ColdStart.timeraw_first_call_disk_cache")
    return out


def _size_text(n: Any) -> str:
    return f"2^{int(n).bit_length() - 1}" if isinstance(n, int) else str(n)


def plot_speedup(rows: list[tuple[str, float, float, float]], label: str, path: str) -> bool:
    if not rows:
        return False
    fig, ax = plt.subplots(figsize=(7.5, 0.38 * len(rows) + 1.4))
    labels = [r[0] for r in rows][::-1]
    ratios = [r[3] for r in rows][::-1]
    colors = ["#2ca02c" if x >= 1 else "#d62728" for x in ratios]
    ax.barh(labels, ratios, color=colors)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    lo, hi = min(ratios), max(ratios)
    ticks = [v for v in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100)
             if lo / 2.5 <= v <= hi * 2.5]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([f"{v:g}x" for v in ticks])
    ax.set_xlim(min(lo, 1.0) / 1.3, max(hi, 1.0) * 1.5)
    for y, x in enumerate(ratios):
        ax.text(x, y, f" {x:.2f}x", va="center", fontsize=8)
    ax.set_xlabel("speedup of lazy over eager (eager time / lazy time; > 1: fusion wins)")
    ax.set_title(f"{label}: lazy (fused) vs eager (op by op),\nlargest size benchmarked", fontsize=10)
    ax.tick_params(axis="y", labelsize=8)
    ax.grid(alpha=0.3, axis="x", which="both")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_memory(snap: Snapshot, device: str, label: str, path: str) -> bool:
    bench, unit, scale = (("PeakMemory.peakmem_expr", "peak RSS of the process (MiB)", 2**20)
                          if device == "cpu" else ("GpuPool.track_pool_growth",
                                                   "CuPy pool growth during the call (MiB)", 1))
    rows = snap.get(bench, device=device)
    if not rows:
        return False
    n = max(r.p("n") for r in rows)
    fig, ax = plt.subplots(figsize=(7, 3.4))
    width = 0.38
    for i, mode in enumerate(("eager", "lazy")):
        vals = [snap.value(bench, device=device, mode=mode, expr=e, n=n) or 0.0 for e in HEADLINE]
        xs = [j + (i - 0.5) * width for j in range(len(HEADLINE))]
        ax.bar(xs, [v / scale for v in vals], width, color=COLORS[mode], label=mode)
        for x, v in zip(xs, vals):
            ax.text(x, v / scale, f"{v / scale:.0f}", ha="center", va="bottom", fontsize=8)
    if device == "cpu":
        ax.axhline(2 * n * 4 / scale, linestyle="--", color="gray", label="the inputs x, y")
    ax.set_xticks(range(len(HEADLINE)), list(HEADLINE))
    ax.set_ylabel(unit)
    note = " (inputs included)" if device == "cpu" else ""
    ax.set_title(f"{label}: memory at n = 2^{n.bit_length() - 1}{note}", fontsize=10)
    ax.legend()
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_history(rows: list[Row], machine: str, device: str, order: dict[str, int], label: str,
                 path: str) -> tuple[bool, int]:
    mine = [r for r in rows if r.machine == machine and r.bench.endswith("Headline.time_expr")
            and r.p("device") == device]
    commits = sorted({r.commit for r in mine}, key=lambda c: (order.get(c, -1), _date(mine, c)))
    if len(commits) < 2:
        return False, len(commits)
    # the largest size measured at (nearly) every commit
    counts: dict[int, set] = defaultdict(set)
    for r in mine:
        counts[r.p("n")].add(r.commit)
    n = max(counts, key=lambda k: (len(counts[k]), k))
    fig, ax = plt.subplots(figsize=(7.5, 5))
    index = {c: i for i, c in enumerate(commits)}
    for j, (expr, mode) in enumerate([(e, m) for e in ("sum_abs", "chain", "axpy") for m in ("eager", "lazy")]):
        by_commit: dict[str, list[float]] = defaultdict(list)
        for r in mine:
            if r.p("n") == n and r.p("expr") == expr and r.p("mode") == mode:
                by_commit[r.commit].append(r.value)
        pts = sorted((index[c], min(v) * 1e3) for c, v in by_commit.items())
        if pts:
            ax.plot(*zip(*pts), "o-" if mode == "lazy" else "s--", color=f"C{j // 2}",
                    alpha=1.0 if mode == "lazy" else 0.6, label=f"{expr} {mode}")
    ax.set_xticks(range(len(commits)), [c[:7] for c in commits], rotation=45, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("time per call (ms)")
    ax.set_xlabel("commit (oldest to newest)")
    ax.set_title(f"{label}: history of the headline benchmarks, n = 2^{n.bit_length() - 1}\n"
                 f"(solid: lazy, dashed: eager)", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True, len(commits)


def plot_peers(peers: list[dict], label: str, path: str) -> bool:
    works = [w for w in dict.fromkeys(p["work"] for p in peers) if not w.startswith("first")]
    works = [w for w in works if len([p for p in peers if p["work"] == w]) >= 2]
    if not works:
        return False
    counts = [len([p for p in peers if p["work"] == w]) for w in works]
    fig, axes = plt.subplots(len(works), 1, figsize=(7.5, 0.8 + sum(0.62 + 0.27 * c for c in counts)),
                             gridspec_kw={"height_ratios": counts})
    axes = [axes] if len(works) == 1 else list(axes)
    for ax, w in zip(axes, works):
        mine = [p for p in peers if p["work"] == w]
        names = [p["impl"] for p in mine][::-1]
        vals = [p["ms"] for p in mine][::-1]
        colors = ["#1f77b4" if "lazyarr" in n and "eager" not in n else "#999999" for n in names]
        ax.barh(names, vals, color=colors)
        for y, v in enumerate(vals):
            ax.text(v, y, f" {v:.3g} ms", va="center", fontsize=7.5)
        if max(vals) / max(min(vals), 1e-12) > 30:     # e.g. cupy.fuse's 250 ms next to 0.6 ms
            ax.set_xscale("log")
            ax.set_xlim(min(vals) / 2, max(vals) * 4)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_formatter(NullFormatter())
        else:
            ax.set_xlim(0, max(vals) * 1.18)
        ax.set_title(w, fontsize=9)
        ax.tick_params(axis="y", labelsize=8)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(alpha=0.3, axis="x")
    axes[-1].set_xlabel("time per call (ms; blue: lazyarr lazy)")
    fig.suptitle(f"{label}: lazyarr vs its peers, one run (lower is better)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ------------------------------------------------------------------------------ page
def rst_table(header: list[str], rows: list[list[str]]) -> str:
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        lines.append("   * - " + (row[0] or " "))
        lines += [f"     - {c or ' '}" for c in row[1:]]
    return "\n".join(lines) + "\n"


def _machine_label(machine: str, devices: list[str]) -> str:
    return machine


PAGE_HEAD = """\
Performance
===========

lazyarr is benchmarked continuously with `airspeed velocity <https://asv.readthedocs.io>`_
(asv), as NumPy and SciPy are. The suite (``benchmarks/bench_*.py``) is parametrized over
device (``cpu``, ``cuda``), mode (``eager``, ``lazy``) and size; GPU timings include kernel
completion (every timed call ends with a device synchronize). Results are committed in
``.asv/results`` so the graphs can be rebuilt anywhere.

The benchmark site (asv's HTML: one graph per benchmark and parameter, each machine's history
apart) is not published online; build it from the committed results with
``asv publish && python tools/asv_site.py && asv preview``. ``tools/asv_site.py`` makes each
graph show one machine (the CPU machine's and the H200's histories apart, without the other
device's empty series) and drops the parameter rows a machine has no result for from the
benchmark list; on a machine without access to asv's script CDNs, also run
``python tools/asv_html_offline.py`` before ``asv preview``. Sizes are listed largest first, so
a graph opens at the largest size. The repository has no public address yet, so commit links
stay on the page (``show_commit_url`` in asv.conf.json).

This page is generated by ``python tools/perf_page.py`` from those results and the
peer-comparison scripts' output; do not edit it by hand. The CPU machine (``cpu-2core``) is a
shared 2-core virtual machine: other work runs beside the benchmarks, so single points are
noisy (often +-30 %); read steps that persist over several commits, not one point.

Running the benchmarks
----------------------

.. code-block:: bash

   pip install -e ".[bench]"              # asv, virtualenv, matplotlib, numexpr, psutil
   asv machine --yes --machine cpu-2core  # once per machine: a fixed name keeps one history
   asv run --machine cpu-2core            # builds HEAD's wheel (Cython included) in .asv/env, runs it
   asv run --machine cpu-2core HEAD~10..HEAD --quick -b Headline   # history of a subset
   asv publish && python tools/asv_site.py && asv preview   # the site, in .asv/html

Without a build (machines with no internet, such as the GPU machine, or CI), benchmark the
lazyarr the running Python imports with the existing-environment configuration:

.. code-block:: bash

   asv run --config asv.existing.conf.json --set-commit-hash $(git rev-parse HEAD) --machine h200
   bash benchmarks/run_asv_gpu.sh         # on the GPU machine: wheels, build_ext, asv, results
   bash benchmarks/ci_check.sh            # CI: asv check + a quick smoke run (< 3 minutes)

``-b REGEX`` selects benchmarks; ``LAZYARR_BENCH_DEVICES=cuda`` skips the CPU rows and
``LAZYARR_BENCH_MAX_SIZE=1048576`` skips big arrays without changing the suite. Then rebuild
this page:

.. code-block:: bash

   python tools/perf_page.py              # plots in docs/_static/perf/, this page

What the suite measures
-----------------------

* ``bench_elementwise``: chains of 1-16 ops materialized and summed (``ChainLength``); the
  three headline expressions over sizes 2^10 ... 2^25 (CPU) / 2^28 (GPU) (``Headline``);
  a broadcasting expression (``Broadcast``).
* ``bench_reductions``: every reduction, full and along each axis of a 2-D array, fed by a fused
  op (``Reductions``); ``sum(x * x, axis)`` at the issue's sizes (``SumSquares``).
* ``bench_workloads``: softmax row normalization, standardization ``(x - x.mean()) / x.std()``,
  a degree-8 polynomial, a Lennard-Jones energy.
* ``bench_corpus``: each script of the drop-in corpus (``corpus/scripts/``, docs/testing.rst)
  that runs correctly, at its preset L: NumPy vs lazyarr on the CPU, CuPy vs lazyarr on cuda.
* ``bench_overhead``: a cached call on 1024 elements, graph building, the cold first call in a
  fresh process with and without the disk cache (``timeraw_``; on cuda waiting for the
  compile, ``ColdStart``), a new expression's first result under the default background
  compile (``FirstResult``, cuda), ``import lazyarr``.
* ``bench_library``: ``sort``/``argsort``/``cumsum``/``unique`` of a pending chain against the
  computed input, ``sum(maximum(A @ B + bias, 0))`` against ``A @ B`` alone (issue 18), and
  a sum of a broadcast product (``conv2d``'s statement, a stack of products: one matrix
  product on the CPU).
* ``bench_memory``: peak RSS on the CPU (``peakmem_``), CuPy pool growth and CUDA-event
  milliseconds on the GPU (``track_``).
"""


def _peer_tables(stem: str, title: str, intro: str, script: str,
                 devices: tuple[str, ...] = ("cpu", "cuda")) -> list[str]:
    """A section per device from a peer script's ``--md`` tables
    (``docs/_static/perf/<stem>_<device>.md``), where present: its ``(...)`` notes, then each
    ``# heading`` with its table."""
    parts = []
    for device in devices:
        source = os.path.join(ROOT, "docs", "_static", "perf", f"{stem}_{device}.md")
        if not os.path.exists(source):
            continue
        heading = f"{DEVICE_NAMES[device]}: {title}"
        parts.append(f"{heading}\n{'-' * len(heading)}\n")
        parts.append(f"{intro} From ``python {script} --device {device} --md ...`` (each table "
                     f"one run; ``{os.path.relpath(source, ROOT)}``).\n")
        text = open(source).read()
        parts += [f"{_rst(ln.strip())}\n" for ln in text.splitlines() if ln.startswith("(")]  # notes
        headings = [ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")]
        for table_heading, (header, body) in zip(headings, _markdown_tables(text)):
            parts.append(f"{_rst(table_heading)}:\n")
            parts.append(rst_table([_rst(c) for c in header], [[_rst(c) for c in r] for r in body]))
    return parts


def monte_carlo_sections() -> list[str]:
    """The fused random draws against NumPy / CuPy eager (``tools/peers/monte_carlo.py``)."""
    return _peer_tables(
        "monte_carlo", "Monte Carlo pi with fused random draws",
        "``4 * mean(u**2 + v**2 < 1)`` over two uniform float64 draws: lazyarr's fused "
        "generator (``default_rng(0, fused=True)``: the draws generated inside the one kernel), "
        "the library's own (NumPy on the CPU, CuPy eager on the GPU), and lazyarr with the "
        "library's generator (draws in memory, the rest fused).", "tools/peers/monte_carlo.py")


def npbench_sections() -> list[str]:
    """The NPBench kernels (issue 19's corpus) against NumPy on the CPU
    (``tools/peers/npbench_ab.py``) and CuPy eager on the GPU (``tools/peers/npbench_gpu.py``)."""
    return _peer_tables(
        "npbench", "the NPBench kernels against NumPy",
        "The NPBench kernels of ``../shared/npbench`` as published (``import numpy as np``) "
        "against the same file with ``import lazyarr as np``, each library in processes of its "
        "own (two libraries in one process share glibc's heap thresholds: docs/notes/cpu.rst, "
        "2026-12-06e); every output checked against NumPy by the runner's tests (tests/test_corpus.py).",
        "tools/peers/npbench_ab.py", devices=("cpu",)) + _peer_tables(
        "npbench", "the NPBench kernels against CuPy eager",
        "The same kernels with ``import cupy as np`` against ``import lazyarr as np`` on cuda, "
        "in one process, alternated, after a warm-up call each (kernel compiles).",
        "tools/peers/npbench_gpu.py", devices=("cuda",))


def complex_ceiling_sections() -> list[str]:
    """Complex chains against real ones of the same byte width (``tools/peers/complex_ceiling.py``)."""
    return _peer_tables(
        "complex_ceiling", "complex chains against real ones of the same byte width",
        "lazyarr's fused kernels in lazy mode: complex64 against float64 (8 bytes an element), "
        "complex128 against a pair of float64 arrays (16 bytes read); the fraction is the rate "
        "in bytes moved over that of a copy (``la.copy``, read + write) in the same run.",
        "tools/peers/complex_ceiling.py")


def complex_reductions_sections() -> list[str]:
    """Complex reductions of a chain against NumPy (``tools/peers/complex_reductions.py``)."""
    return _peer_tables(
        "complex_reductions", "complex reductions against NumPy",
        "``sum``, ``prod``, ``argmax`` and ``var`` of a complex chain, 2^22 values with parts "
        "uniform in [-1, 1) (``prod`` of ``z/|z| * z/|z|``: unit moduli). NumPy writes the chain "
        "and reduces it; lazyarr runs one fused kernel (the VM's complex reduction kernels). "
        "NumPy and lazyarr alternated call by call.", "tools/peers/complex_reductions.py")


def inplace_stencil_sections() -> list[str]:
    """Issue 15's in-place stencil steps against NumPy (``tools/peers/inplace_stencil.py``)."""
    return _peer_tables(
        "inplace_stencil", "in-place stencil steps",
        "``u[1:-1, 1:-1] = 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + "
        "u[1:-1, 2:])`` on 4096² float32, 100 steps. On the CPU: NumPy (a temporary per op and "
        "one for the value, then the copy), lazyarr (one kernel per step writing ``u`` itself: "
        "the chunked write-back of docs/design.rst), and lazyarr with the value held by a "
        "variable first (computed into a temporary, then copied in, as NumPy does). On the GPU: "
        "CuPy eager as the base, lazyarr (the value into a temporary, then a copy kernel: two "
        "launches a step, kept from step to step), the same with the value in a variable, and "
        "torch.compile (issue 15: lazyarr within 1.5x of it).", "tools/peers/inplace_stencil.py")


def small_calls_sections() -> list[str]:
    """Issue 13's small calls (``tools/peers/small_calls.py``)."""
    return _peer_tables(
        "small_calls", "small calls",
        "asv's ``CachedCall.track_hot_call_us`` body: the median of 2,000 calls back to back on "
        "1,024 float32 elements, each computed (the chain is ``sum(sqrt(abs(x*y + 1.5)) * "
        "tanh(x) - y)``; issue 13: ≤ 10 µs a plain call, ≤ 5 µs under ``la.jit`` on the CPU, "
        "≤ 30 and ≤ 20 µs on the H200), beside NumPy's own forms (on the GPU: CuPy's, "
        "``cupy.fuse``'s and an empty launch with a synchronization, each call synchronized); "
        "and on the CPU two loops of small statements. Machines run at different speeds: "
        "compare within a table.", "tools/peers/small_calls.py")


def first_result_sections() -> list[str]:
    """Issue 13, item 3: a new expression's first result on the GPU
    (``tools/device/first_result.py``)."""
    return _peer_tables(
        "first_result", "a new expression's first result",
        "Issue 13 item 3: a new expression's first result in a warm process (≤ 150 ms asked) "
        "and a fresh process's first call against the floor of importing CuPy and numba-cuda "
        "and creating the context (≤ 0.2 s above it asked). New three-step chains of 2^20 "
        "values (the dtype in the table's heading; half of them summed), each new to the "
        "process and to a fresh kernel cache, "
        "under ``compile=\"background\"`` (the default: docs/gpu-backend.rst, \"A new kernel's "
        "first calls\") and ``compile=\"wait\"``; the last row imports ``numba.cuda`` before "
        "lazyarr, as the first result did until 2026-12-06c.", "tools/device/first_result.py")


def cpu_compilers_sections() -> list[str]:
    """Issue 13, item 4: CPU throughput against jax.jit and torch.compile
    (``tools/peers/cpu_compilers.py``)."""
    return _peer_tables(
        "cpu_compilers", "against the compilers",
        "Issue 13, item 4: ``sum(abs(x))``, the chain ``sum(sqrt(abs(x*y + 1.5)) * tanh(x) - y)`` "
        "and row and column sums in lazyarr, ``jax.jit`` and ``torch.compile``, two threads each, "
        "each library in its own process (alternated over rounds), beside NumPy and the read "
        "ceiling (NumPy's max over each half of the input in its own thread; the target is ≤ 1.1x "
        "it for the sums). jax and torch run from a separate environment (the script's "
        "docstring says how), with this tree on ``PYTHONPATH``.", "tools/peers/cpu_compilers.py")


def library_calls_sections() -> list[str]:
    """Issue 18's library calls fed by a pending chain (``tools/peers/library_calls.py``)."""
    return _peer_tables(
        "library_calls", "library calls fed by a pending chain",
        "``sort``, ``argsort``, ``cumsum``, ``unique`` of ``f(x) = sqrt(abs(x)) * 2 - 1`` "
        "(float32): NumPy on ``f(x)`` computed, lazyarr on the pending chain (``sort``, "
        "``cumsum`` and ``unique``: its kernel writes the result's memory, for ``unique`` the "
        "copy NumPy sorts, sorted or scanned there in place; ``cumsum`` scans the rows as the "
        "kernel, on another core, writes them), "
        "lazyarr on ``f(x)`` computed; and ``sum(maximum(A @ B + bias, 0))`` (NumPy's matmul, "
        "then one fused kernel for the epilogue) against NumPy's ``A @ B`` alone.",
        "tools/peers/library_calls.py")


def build(args: argparse.Namespace) -> str:
    rows, _meta = load_rows(args.results)
    order = commit_order()
    os.makedirs(args.out, exist_ok=True)
    rel = os.path.relpath(args.out, os.path.dirname(args.page)).replace(os.sep, "/")
    peers = {"cpu": load_peers(args.cpu_peers), "cuda": load_peers(args.gpu_peers)}
    parts = [PAGE_HEAD]
    written = []

    def fig(name: str, alt: str) -> str:
        written.append(name)
        return f".. image:: {rel}/{name}\n   :alt: {alt}\n   :width: 100%\n"

    machines = sorted({r.machine for r in rows})
    for machine in machines:
        snap = Snapshot(rows, machine, order)
        devices = [d for d in ("cpu", "cuda") if any(r.p("device") == d for r in snap.rows)]
        when = datetime.datetime.fromtimestamp(snap.date / 1000, datetime.timezone.utc)
        for device in devices:
            label = f"{DEVICE_NAMES[device]} ({machine})"
            title = f"{DEVICE_NAMES[device]}: machine ``{machine}``"
            parts.append(f"{title}\n{'-' * len(title)}\n")
            parts.append(f"Latest results: commit ``{snap.commit[:8]}`` "
                         f"({when:%Y-%m-%d %H:%M} UTC commit date).\n")
            stem = f"{machine}-{device}"
            rows_s = speedup_rows(snap, device)
            if plot_speedup(rows_s, label, os.path.join(args.out, f"{stem}-speedup.png")):
                parts.append("The fusion win at a glance: eager time divided by lazy time for each "
                             "benchmark at its largest size (green: lazy is faster).\n")
                parts.append(fig(f"{stem}-speedup.png", "lazy vs eager speedups"))
            if plot_chain_length(snap, device, label, os.path.join(args.out, f"{stem}-chains.png")):
                parts.append("Eager mode makes one pass over memory per op; lazy mode runs the whole "
                             "chain in one pass, so its time barely grows with the chain length.\n")
                parts.append(fig(f"{stem}-chains.png", "time vs chain length"))
            if plot_sizes(snap, device, label, peers[device], os.path.join(args.out, f"{stem}-sizes.png")):
                peer_note = (" Single markers are the peers from the peer-comparison script's run "
                             "(a separate run; same expression and size)." if peers[device] else "")
                parts.append("Across sizes: at small n fixed costs (Python, launch) dominate; "
                             f"at large n memory traffic does.{peer_note}\n")
                parts.append(fig(f"{stem}-sizes.png", "time vs size"))
            if plot_memory(snap, device, label, os.path.join(args.out, f"{stem}-memory.png")):
                parts.append(fig(f"{stem}-memory.png", "memory"))
            ok, ncommits = plot_history(rows, machine, device, order, label,
                                        os.path.join(args.out, f"{stem}-history.png"))
            if ok:
                parts.append(f"History over the {ncommits} commits benchmarked on ``{machine}``:\n")
                parts.append(fig(f"{stem}-history.png", "history"))
            if rows_s:
                parts.append("The numbers behind the bars (asv medians, newest commit with each "
                             "benchmark):\n")
                parts.append(rst_table(["benchmark", "eager", "lazy", "lazy speedup"],
                                       [[r[0].replace("*", r"\*"), _fmt_time(r[1]), _fmt_time(r[2]),
                                         f"{r[3]:.2f}x"] for r in rows_s]))
    parts += monte_carlo_sections()
    parts += npbench_sections()
    parts += complex_ceiling_sections()
    parts += complex_reductions_sections()
    parts += inplace_stencil_sections()
    parts += small_calls_sections()
    parts += cpu_compilers_sections()
    parts += first_result_sections()
    parts += library_calls_sections()
    for device, source in (("cpu", args.cpu_peers), ("cuda", args.gpu_peers)):
        title = f"{DEVICE_NAMES[device]}: lazyarr and its peers"
        parts.append(f"{title}\n{'-' * len(title)}\n")
        script = "cpu_peers.py" if device == "cpu" else "gpu_peers.py"
        if not peers[device]:
            how = ("python tools/peers/cpu_peers.py > docs/_static/perf/cpu_peers.md" if device == "cpu"
                   else "python tools/peers/gpu_peers.py --json docs/_static/perf/gpu_peers.json")
            where = " on the GPU machine (or ``WITH_PEERS=1 bash benchmarks/run_asv_gpu.sh``)" \
                if device == "cuda" else ""
            parts.append(f"No output of ``tools/peers/{script}`` was found (looked for "
                         f"``{os.path.relpath(source, ROOT)}``). Run ``{how}``{where}, then "
                         "``python tools/perf_page.py``.\n")
            continue
        stem = f"peers-{device}"
        parts.append(f"From ``python tools/peers/{script}`` (all rows measured in one run; read from "
                     f"``{os.path.relpath(source, ROOT)}``).\n")
        with open(source) as f:
            heading = next((ln[2:].strip() for ln in f if ln.startswith("# ")), "")
        if heading:
            parts.append(f"Run: {heading.replace('*', chr(92) + '*')}\n")
        if plot_peers(peers[device], f"{DEVICE_NAMES[device]}", os.path.join(args.out, f"{stem}.png")):
            parts.append(fig(f"{stem}.png", "peers"))
        if source.endswith(".md"):     # the script's own table(s), column for column
            for header, body in _markdown_tables(open(source).read()):
                parts.append(rst_table([_rst(c) for c in header], [[_rst(c) for c in r] for r in body]))
            continue
        extra_cols = any(p.get("b2b") == p.get("b2b") and p.get("b2b") is not None for p in peers[device])
        header = ["work", "implementation", "per call (ms)"] + (["back to back (ms)"] if extra_cols else []) + ["note"]
        body = []
        for p in peers[device]:
            row = [_rst(p["work"]), p["impl"], f"{p['ms']:.4g}"]
            if extra_cols:
                b = p.get("b2b")
                row.append(f"{b:.4g}" if isinstance(b, (int, float)) and b == b else "")
            row.append(_rst(str(p.get("extra", "") or p.get("note", ""))))
            body.append(row)
        parts.append(rst_table(header, body))
    page = "\n".join(parts)
    with open(args.page, "w") as f:
        f.write(page)
    # drop stale images of machines/devices that no longer have results
    for name in os.listdir(args.out):
        if name.endswith(".png") and name not in written:
            os.remove(os.path.join(args.out, name))
    return f"wrote {os.path.relpath(args.page, ROOT)} and {len(written)} plots in {os.path.relpath(args.out, ROOT)}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(ROOT, ".asv", "results"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "_static", "perf"))
    ap.add_argument("--page", default=os.path.join(ROOT, "docs", "performance.rst"))
    ap.add_argument("--cpu-peers", default=None,
                    help="default: docs/_static/perf/cpu_peers.{json,md}, else docs/cpu-backend.rst's csv-table")
    ap.add_argument("--gpu-peers", default=None,
                    help="default: docs/_static/perf/gpu_peers.{json,md}, else docs/gpu-backend.rst's csv-table")
    args = ap.parse_args(argv)
    for dev in ("cpu", "gpu"):
        if getattr(args, f"{dev}_peers") is None:
            stem = os.path.join(args.out, f"{dev}_peers")
            found = [stem + ext for ext in (".json", ".md") if os.path.exists(stem + ext)]
            backend_page = os.path.join(os.path.dirname(args.page), f"{dev}-backend.rst")
            if not found and os.path.exists(backend_page) and load_peers(backend_page):
                found = [backend_page]   # the table the backend engineer pasted there
            setattr(args, f"{dev}_peers", found[0] if found else stem + ".json")
    print(build(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
