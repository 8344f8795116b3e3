"""The long differential-fuzzing campaign (issue 6): many random expressions, every target.

    python tools/fuzz_campaign.py                       # 100,000 expressions, 2 processes
    python tools/fuzz_campaign.py --examples 20000 --jobs 4 --out fuzz-report.json

Each worker draws expressions with ``tests/strategies.py`` (the same strategy as the CI
suite, ``tests/test_fuzz.py``) under its own seeds, in chunks, and runs each on NumPy and on
every lazyarr target available (eager; lazy on reference, cpu-fused, cuda on a GPU machine).
Mismatches do not stop the campaign: they are grouped by a signature (target and the kind of
problem), and the first example of each group is then shrunk by Hypothesis to a minimal
expression. The report (stdout, and JSON with ``--out``) gives the count, the time, and per
group the number of hits and the shrunk reproduction to paste into tests/test_regressions.py.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, ".."))

CHUNK = 2000


def _signature(target: str, problem: str) -> str:
    """Group mismatches: the target and the first line of the problem, numbers removed."""
    first = problem.splitlines()[0]
    first = re.sub(r"\bv\d+\b", "v#", first)
    first = re.sub(r"0x[0-9a-f]+|\d+", "#", first)
    return f"{target}: {first[:160]}"


def _settings(n: int, seed: int, shrink: bool = False) -> Any:
    from hypothesis import HealthCheck, Phase, settings

    phases = [Phase.generate] + ([Phase.shrink] if shrink else [])
    return settings(max_examples=n, deadline=None, database=None, derandomize=False,
                    phases=phases, suppress_health_check=list(HealthCheck))


def _worker(args: tuple[int, int, int]) -> dict[str, Any]:
    """Run ``n`` expressions from ``seed``; the count and the groups of mismatches."""
    n, seed, max_steps = args
    import strategies as S
    from hypothesis import given
    from hypothesis import seed as hseed

    targets = S.targets()
    count = [0]
    groups: dict[str, dict[str, Any]] = {}

    @hseed(seed)
    @_settings(n, seed)
    @given(S.expressions(max_steps=max_steps))
    def run(expr: Any) -> None:
        count[0] += 1
        for target, problem in S.check(expr, targets).items():
            sig = _signature(target, problem)
            g = groups.setdefault(sig, {"hits": 0, "seed": seed, "first": repr(expr),
                                        "problem": problem[:2000]})
            g["hits"] += 1

    run()
    return {"count": count[0], "groups": groups, "targets": targets}


def _shrink(sig: str, seed: int, n: int, max_steps: int) -> str | None:
    """Re-run the chunk that found ``sig`` and let Hypothesis shrink its first example."""
    import strategies as S
    from hypothesis import given
    from hypothesis import seed as hseed

    targets = S.targets()

    @hseed(seed)
    @_settings(n, seed, shrink=True)
    @given(S.expressions(max_steps=max_steps))
    def run(expr: Any) -> None:
        for target, problem in S.check(expr, targets).items():
            if _signature(target, problem) == sig:
                raise AssertionError(f"{problem}\n\n{expr!r}")

    try:
        run()
    except AssertionError as exc:
        return str(exc)
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--examples", type=int, default=100_000)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=20261130)
    p.add_argument("--max-steps", type=int, default=20)
    p.add_argument("--shrink", type=int, default=10, help="shrink at most this many groups")
    p.add_argument("--out", help="write the report as JSON here")
    a = p.parse_args(argv)

    chunks = [(min(CHUNK, a.examples - i), a.seed + i, a.max_steps) for i in range(0, a.examples, CHUNK)]
    t0 = time.perf_counter()
    total, groups = 0, {}
    targets: list[str] = []
    with mp.get_context("spawn").Pool(a.jobs) as pool:
        for res in pool.imap_unordered(_worker, chunks):
            total += res["count"]
            targets = res["targets"]
            for sig, g in res["groups"].items():
                if sig in groups:
                    groups[sig]["hits"] += g["hits"]
                else:
                    groups[sig] = g
            print(f"[{time.perf_counter() - t0:7.0f}s] {total:>7} expressions, {len(groups)} "
                  f"mismatch group(s)", flush=True)
    elapsed = time.perf_counter() - t0
    for sig, g in list(groups.items())[: a.shrink]:
        g["shrunk"] = _shrink(sig, g["seed"], CHUNK, a.max_steps)
    report = {"expressions": total, "seconds": round(elapsed, 1), "targets": targets,
              "seed": a.seed, "mismatch_groups": groups}
    print(f"\n{total} expressions x {len(targets)} targets ({', '.join(targets)}) in {elapsed:.0f}s: "
          f"{len(groups)} mismatch group(s)")
    for sig, g in groups.items():
        print(f"\n--- {g['hits']} x {sig}\n{g.get('shrunk') or g['first']}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main())
