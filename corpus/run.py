"""Run the drop-in corpus unchanged with `import lazyarr as np` and compare with NumPy.

    python corpus/run.py [--preset S|L] [--device cpu|cuda] [--timeout 120] [--json out.json] [NAME ...]

Each script in corpus/scripts/ is plain NumPy: one `import numpy as np` line, a dict PRESETS of
sizes, `init(**PRESETS[preset])` that makes the data (always run with NumPy, seeded) and
`kernel(*data)`. Each script runs in its own process: first as written (the reference), then
with its `import numpy as np` line replaced by `import lazyarr as np`, its array arguments
handed in as `lazyarr.asarray(...)`. Every returned value and every array argument (the kernel
may write into them) must match NumPy by the rules of ../shared/npbench/run.py: same shape,
same dtype, values within rtol 1e-5 (float32) or 1e-10 (float64) scaled by the largest
magnitude, integers and booleans exactly. The last line is 'K / N scripts correct'; the exit
status is 0 only if all are.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "scripts")
IMPORT = "import numpy as np"


def names() -> list[str]:
    """Every script of the corpus, by name (its file name without .py)."""
    return sorted(os.path.basename(f)[:-3] for f in glob.glob(f"{SCRIPTS}/*.py"))


def load(name: str, swap: str | None = None) -> types.ModuleType:
    """The script as a module; with `swap`, its one `import numpy as np` line replaced by it."""
    path = f"{SCRIPTS}/{name}.py"
    with open(path) as fh:
        src = fh.read()
    if swap:
        assert src.count(IMPORT) == 1, f"{path}: needs exactly one '{IMPORT}' line"
        src = src.replace(IMPORT, swap, 1)
    mod = types.ModuleType(name)
    mod.__file__ = path
    exec(compile(src, path, "exec"), mod.__dict__)
    return mod


def arguments(name: str, preset: str) -> tuple:
    """The kernel's arguments at `preset`, made by the script's `init` run with NumPy."""
    mod = load(name)
    args = mod.init(**mod.PRESETS[preset])
    return args if isinstance(args, tuple) else (args,)


def call(fn, args: tuple, wrap) -> tuple[list, float]:
    """Run `fn` on copies of `args` (arrays passed through `wrap`); its results and array
    arguments afterwards as NumPy arrays, and the seconds taken (materialization included)."""
    import numpy as np

    ctx = [wrap(np.copy(a)) if isinstance(a, np.ndarray) else a for a in args]
    t = time.perf_counter()
    ret = fn(*ctx)
    outs = list(ret) if isinstance(ret, tuple) else [ret]
    outs += [c for a, c in zip(args, ctx) if isinstance(a, np.ndarray)]
    outs = [np.asarray(o) for o in outs]           # materializes lazy results
    return outs, time.perf_counter() - t


def mismatch(ref: list, got: list) -> str | None:
    """Why `got` differs from NumPy's `ref` (../shared/npbench/run.py's rules), or None."""
    import numpy as np

    if len(ref) != len(got):
        return f"{len(got)} outputs, NumPy has {len(ref)}"
    for i, (r, g) in enumerate(zip(ref, got)):
        if r.shape != g.shape or r.dtype != g.dtype:
            return f"output {i}: {g.dtype}{list(g.shape)}, NumPy {r.dtype}{list(r.shape)}"
        if r.dtype.kind in "fc":
            rtol = 1e-5 if r.dtype.itemsize <= (4 if r.dtype.kind == "f" else 8) else 1e-10
            scale = float(np.max(np.abs(r))) if r.size else 0.0
            if not np.allclose(g, r, rtol=rtol, atol=rtol * scale, equal_nan=True):
                return f"output {i}: values differ (rtol {rtol:g})"
        elif not np.array_equal(g, r):
            return f"output {i}: values differ"
    return None


def one(name: str, preset: str, out: str) -> None:
    """In a child process: run one script both ways, write the verdict to `out`."""
    res: dict = {"name": name}
    args = arguments(name, preset)
    ref, res["t_numpy"] = call(load(name).kernel, args, lambda a: a)
    try:
        import lazyarr as la

        fn = load(name, "import lazyarr as np").kernel
        got, res["t_lazyarr"] = call(fn, args, la.asarray)
        res["problem"] = mismatch(ref, got)
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        script = f"{name}.py"
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.endswith(script)]
        where = f" at {script}:{frames[-1].lineno} `{frames[-1].line}`" if frames else ""
        res["problem"] = f"{type(e).__name__}: {str(e)[:160]}{where}".replace("\n", " ")
    with open(out, "w") as fh:
        json.dump(res, fh)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("names", nargs="*")
    p.add_argument("--preset", default="S", choices=["S", "L"])
    p.add_argument("--device", default=None, help="sets LAZYARR_DEVICE for the scripts")
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--json")
    a = p.parse_args()
    env = dict(os.environ, **({"LAZYARR_DEVICE": a.device} if a.device else {}))
    rows, tmp = [], tempfile.mkdtemp(prefix="corpus-")
    for name in a.names or names():
        out = f"{tmp}/{name}.json"
        try:
            proc = subprocess.run([sys.executable, __file__, "--one", name, a.preset, out], env=env,
                                  timeout=a.timeout, capture_output=True, text=True, cwd=tmp)
            if os.path.exists(out):
                with open(out) as fh:
                    r = json.load(fh)
            else:
                last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
                r = {"name": name, "problem": f"crashed: {last[:160]}"}
        except subprocess.TimeoutExpired:
            r = {"name": name, "problem": f"timed out after {a.timeout:g} s"}
        rows.append(r)
        speed = f"{r['t_numpy'] / r['t_lazyarr']:6.2f}x NumPy" if r.get("t_lazyarr") and not r["problem"] else ""
        print(f"{name:26s} {'ok' if not r['problem'] else 'FAIL':4s} {speed:14s} {r['problem'] or ''}", flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    ok = sum(not r["problem"] for r in rows)
    print(f"{ok} / {len(rows)} scripts correct")
    return 0 if ok == len(rows) else 1


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        one(*sys.argv[2:])
    else:
        sys.exit(main())
