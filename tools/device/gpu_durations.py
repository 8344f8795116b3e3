"""The GPU suite's slow tests, from the junit xml of a device run (development tool).

    python tools/device/gpu_durations.py RUN.xml [RUN2.xml ...] [--min 3] [--write]
    python tools/device/gpu_durations.py --stats DIR

The first form prints the tests that took at least ``--min`` seconds (the longest of the
runs given) and with ``--write`` stores them in tests/gpu_durations.txt, which
tests/conftest.py reads to collect them first (so that they start at once on the 15 workers
and the short tests fill the end). The second sums up what ``LAZYARR_TEST_STATS=DIR`` wrote
(tests/conftest.py): per test, the seconds spent getting CUDA kernels (``get_s``: disk-cache
loads, where the driver compiles a cached PTX, plus builds), Numba's ``compile_s``, the
``link_s`` and ``load_s`` of builds, and how many kernels were built (``compiled``) or read
from disk (``disk_hits``).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DURATIONS = os.path.join(ROOT, "tests", "gpu_durations.txt")


def durations(paths: list[str]) -> dict[str, float]:
    """nodeid -> the longest time a run gave it (junit xml, xunit1 or xunit2 names)."""
    out: dict[str, float] = {}
    for path in paths:
        for case in ET.parse(path).getroot().iter("testcase"):
            cls, name = case.get("classname") or "", case.get("name") or ""
            if not cls or any(child.tag == "skipped" for child in case):
                continue
            nodeid = cls.replace(".", "/") + ".py::" + name
            out[nodeid] = max(out.get(nodeid, 0.0), float(case.get("time") or 0.0))
    return out


def stats(folder: str, top: int) -> None:
    rows: dict[str, dict[str, float]] = {}
    for path in glob.glob(os.path.join(folder, "*.json")):
        with open(path) as f:
            rows.update(json.load(f))
    keys = ("test_s", "get_s", "gets", "compiled", "disk_hits", "compile_s", "link_s", "load_s")
    total = {k: sum(r.get(k, 0) for r in rows.values()) for k in keys}
    print(f"{len(rows)} tests got kernels; totals: "
          + ", ".join(f"{k} {total[k]:.1f}" for k in keys))
    print("test".ljust(90) + "".join(k.rjust(10) for k in keys))
    for nodeid, r in sorted(rows.items(), key=lambda kv: -kv[1].get("test_s", 0))[:top]:
        print(nodeid[:89].ljust(90) + "".join(f"{r.get(k, 0):10.2f}" for k in keys))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("xml", nargs="*")
    ap.add_argument("--min", type=float, default=3.0)
    ap.add_argument("--write", action="store_true", help=f"write {DURATIONS}")
    ap.add_argument("--stats", metavar="DIR")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    if args.stats:
        stats(args.stats, args.top)
        return
    slow = sorted(((s, n) for n, s in durations(args.xml).items() if s >= args.min), reverse=True)
    lines = [f"{s:.1f} {n}" for s, n in slow]
    print("\n".join(lines))
    if args.write:
        with open(DURATIONS, "w") as f:
            f.write("# seconds nodeid: the GPU suite's slow tests on the H200, collected first "
                    "(tests/conftest.py)\n# written by tools/device/gpu_durations.py from "
                    + ", ".join(os.path.basename(p) for p in args.xml) + "\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
