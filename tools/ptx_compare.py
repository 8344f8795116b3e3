"""Prove "kernels unchanged": the PTX of the whole CUDA codegen battery, this tree against another
git revision. No GPU needed (``numba.cuda.compile_ptx`` only).

    python tools/ptx_compare.py --against main          # compare this tree with main
    python tools/ptx_compare.py --against HEAD~3 --unrolls 1,2,4,8 --keep /tmp/ptx
    python tools/ptx_compare.py --dump DIR              # only write this tree's PTX to DIR

The battery is ``BATTERY`` of ``tests/test_cuda_codegen.py``: every expression there is captured
(lowered, nothing runs) and rendered once with the unroll the backend chooses and once per
``--unrolls`` value, then compiled to PTX for sm_90. Each revision runs its own test module (its
battery, its ``capture``) against its own lazyarr, in a fresh process: the other revision is
checked out into a temporary ``git worktree`` (its Cython extension built only if ``import
lazyarr`` needs it). Kernels present on one side only are listed, not counted as changes.

Exit status: 0 when every common kernel's PTX is identical, 1 otherwise (a unified diff of the
first differing kernels is printed; ``--keep DIR`` leaves both sides' PTX files there).

If a refactor renames the renderer's entry points, give ``tests/test_cuda_codegen.py`` a
``ptx_for(lowered, unroll) -> str`` and this tool uses it instead of its fallback below.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Runs inside the tree being measured (cwd = that tree), so it must use only that tree's code.
WORKER = r'''
import dataclasses, json, os, sys
sys.path[:0] = [os.getcwd(), os.path.join(os.getcwd(), "tests")]
import test_cuda_codegen as T
import lazyarr
assert os.path.dirname(os.path.dirname(os.path.abspath(lazyarr.__file__))) == os.getcwd(), lazyarr.__file__
from lazyarr.backends.cuda import render as R

out, unrolls = sys.argv[1], [None] + [int(u) for u in sys.argv[2].split(",") if u]
part, parts = int(sys.argv[3]), int(sys.argv[4])   # this worker's share of the battery
only = set(filter(None, sys.argv[5].split(",")))

def ptx_for(low, unroll):
    if hasattr(T, "ptx_for"):
        return T.ptx_for(low, unroll)
    from lazyarr.backends.cuda.compile import compile_ptx
    spec = R.analyze(low.program, low.inputs).spec
    if unroll is not None:
        spec = dataclasses.replace(spec, unroll=unroll)
    return compile_ptx(R.render(low.program, spec), cc=(9, 0))[0]

d = T.data()
names = {}
for i, (name, fn) in enumerate(T.BATTERY.items()):
    if i % parts != part or (only and name not in only):
        continue
    saved = R.COLS_ONE_THREAD_MIN_OUTPUTS
    if name.startswith("wide_"):   # as the battery says: run with a thread per output
        R.COLS_ONE_THREAD_MIN_OUTPUTS = 600
    try:
        low = T.capture(lambda fn=fn: fn(d))
        for u in unrolls:
            key = f"{name}-u{'default' if u is None else u}"
            with open(os.path.join(out, key + ".ptx"), "w") as f:
                f.write(ptx_for(low, u))
            names[key] = True
    finally:
        R.COLS_ONE_THREAD_MIN_OUTPUTS = saved
json.dump(sorted(names), open(os.path.join(out, f"index-{part}.json"), "w"))
'''


def generate(tree: str, out: str, unrolls: str, jobs: int, only: str = "") -> list[str]:
    """Write the PTX of ``tree``'s battery into ``out`` (``jobs`` worker processes, each a share
    of the battery); return the kernel names."""
    os.makedirs(out, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_ENABLE_CUDASIM")}
    env["LAZYARR_CACHE_DIR"] = cache = tempfile.mkdtemp(prefix="ptx-compare-cache-")
    # the battery's captures go through the backend selection as the codegen tests see it
    # (with the simulated device: without it, small computed CPU arrays take the compiled
    # small path and nothing reaches ``select``)
    env["LAZYARR_CUDA_SIM"] = "1"
    try:
        workers = [subprocess.Popen([sys.executable, "-c", WORKER, out, unrolls, str(k), str(jobs), only],
                                    cwd=tree, env=env) for k in range(jobs)]
        if any(w.wait() != 0 for w in workers):
            raise RuntimeError(f"PTX generation failed in {tree} (output above)")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    names: list[str] = []
    for k in range(jobs):
        with open(os.path.join(out, f"index-{k}.json")) as f:
            names += json.load(f)
    print(f"{tree}: {len(names)} kernels", file=sys.stderr)
    return sorted(names)


def checkout(rev: str, where: str) -> str:
    """A temporary worktree of ``rev`` under ``where``, importable (extension built if needed)."""
    path = os.path.join(where, "tree")
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "-q", "--detach", path, rev], check=True)
    ext = os.path.join("lazyarr", "backends")

    def importable() -> bool:
        return subprocess.run([sys.executable, "-c", "import lazyarr.backends.cpu_fused"], cwd=path,
                              capture_output=True).returncode == 0

    if importable():
        return path
    # PTX generation only imports the CPU extension, never runs it: this tree's build will do
    # unless its interface changed; else build the revision's own (needs Cython).
    for f in os.listdir(os.path.join(ROOT, ext)):
        if f.startswith("_cpu_vm.") and f.endswith((".so", ".pyd")):
            shutil.copy(os.path.join(ROOT, ext, f), os.path.join(path, ext, f))
    if not importable():
        print(f"building {rev}'s CPU extension ...", file=sys.stderr)
        subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=path, check=True)
    return path


def compare(ours: str, theirs: str, our_names: list[str], their_names: list[str],
            label: str, max_diffs: int) -> bool:
    common = [n for n in our_names if n in set(their_names)]
    changed = []
    for name in common:
        with open(os.path.join(ours, name + ".ptx")) as a, open(os.path.join(theirs, name + ".ptx")) as b:
            new, old = a.read(), b.read()
        if new != old:
            changed.append((name, old, new))
    only_ours = sorted(set(our_names) - set(their_names))
    only_theirs = sorted(set(their_names) - set(our_names))
    print(f"{len(common)} kernels compared against {label}: "
          f"{len(common) - len(changed)} identical, {len(changed)} changed")
    if only_ours:
        print(f"only in this tree ({len(only_ours)}): {', '.join(only_ours)}")
    if only_theirs:
        print(f"only in {label} ({len(only_theirs)}): {', '.join(only_theirs)}")
    for name, old, new in changed[:max_diffs]:
        diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"{label}/{name}",
                                         f"this tree/{name}", n=1, lineterm=""))
        print("\n".join(diff[:80] + ([f"... {len(diff) - 80} more diff lines"] if len(diff) > 80 else [])))
    if len(changed) > max_diffs:
        print(f"... and {len(changed) - max_diffs} more changed: "
              + ", ".join(n for n, _, _ in changed[max_diffs:]))
    return not changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", metavar="REV", help="git revision to compare this tree with")
    ap.add_argument("--dump", metavar="DIR", help="only write this tree's PTX to DIR")
    ap.add_argument("--unrolls", default="1,2,4,8",
                    help="unroll factors besides the backend's own choice (default 1,2,4,8)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="worker processes per tree (default: the CPU count)")
    ap.add_argument("--only", default="", metavar="NAME,...", help="only these battery entries")
    ap.add_argument("--keep", metavar="DIR", help="keep both sides' PTX in DIR/{this,REV}")
    ap.add_argument("--max-diffs", type=int, default=3, help="diffs to print (default 3)")
    args = ap.parse_args(argv)
    if bool(args.against) == bool(args.dump):
        ap.error("give exactly one of --against REV and --dump DIR")
    if args.dump:
        print(f"{len(generate(ROOT, args.dump, args.unrolls, args.jobs, args.only))} kernels written to {args.dump}")
        return 0
    work = tempfile.mkdtemp(prefix="ptx-compare-")
    keep = args.keep or work
    try:
        tree = checkout(args.against, work)
        sha = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        label = f"{args.against} ({sha})"
        theirs = generate(tree, os.path.join(keep, "ref"), args.unrolls, args.jobs, args.only)
        ours = generate(ROOT, os.path.join(keep, "this"), args.unrolls, args.jobs, args.only)
        same = compare(os.path.join(keep, "this"), os.path.join(keep, "ref"), ours, theirs, label,
                       args.max_diffs)
    finally:
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", os.path.join(work, "tree")],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print("PTX identical" if same else "PTX CHANGED")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
