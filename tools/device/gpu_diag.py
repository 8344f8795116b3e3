"""Development probe: signs of zero through lazyarr's CUDA kernels vs NumPy (GPU machine)."""
from __future__ import annotations

import numpy as np

import lazyarr as la
from lazyarr._program import lower
from lazyarr.backends.cuda import render as R

vals = {"f16": np.array([-0.0, 0.0, -1.0, 2.0], np.float16), "f32": np.array([-0.0, 0.0, -1.0, 2.0], np.float32),
        "f64": np.array([-0.0, 0.0, -1.0, 2.0], np.float64)}
def _zero_d_add(a0):
    """x + x for a 0-d x (the same LazyArray twice), and NumPy's answer."""
    return lambda m, _: np.add(a0, a0) if m is np else (lambda t: la.add(t, t))(la.asarray(a0))


DEVICE = __import__("os").environ.get("DIAG_DEVICE", "cuda")
cond = np.array([True, False, True, False])
cases = {
    "add(x,x) 0-d": ("zero-d", True),
    "add(x,x)": (lambda m, a: m.add(a, a), False),
    "where(c,a,b)": (lambda m, a: m.where(cond if m is np else la.asarray(cond), a, a[::-1]), False),
    "where(a,a,0)": (lambda m, a: m.where(a, a, 0), False),
    "clip(a,0,5)": (lambda m, a: m.clip(a, 0, 5), False),
    "clip(a,-1.5,2.5)": (lambda m, a: m.clip(a, -1.5, 2.5), False),
    "clip(a,None,3)": (lambda m, a: m.clip(a, None, 3), False),
    "clip(a,0,300)": (lambda m, a: m.clip(a, 0, 300), False),
    "clip(a,nan,1)": (lambda m, a: m.clip(a, float("nan"), 1.0), False),
}
with la.config(mode="lazy", device=DEVICE), np.errstate(all="ignore"):
    for dname, a in vals.items():
        for cname, (fn, show) in cases.items():
            if fn == "zero-d":
                fn = _zero_d_add(a[:1].reshape(()))
            want = np.asarray(fn(np, a))
            try:
                r = fn(la, la.asarray(a))
                got = np.asarray(r)
            except Exception as exc:  # noqa: BLE001
                print(f"{dname} {cname}: raised {exc!r}")
                continue
            ok = (got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)
                  and np.array_equal(np.signbit(got), np.signbit(want)))
            print(f"{dname} {cname:18s} {'ok ' if ok else 'BAD'} got {got!r} want {want!r}")
            if not ok or show:
                node = fn(la, la.asarray(a))._node
                low = lower(node)
                print("   program:", [(i.op, str(i.dtype), i.args, i.arg) for i in low.program.instrs],
                      "scalars", low.scalars, "inputs", [(x.shape, x.strides) for x in low.inputs])
                if not ok:
                    geo = R.analyze(low.program, low.inputs)
                    src = R.render(low.program, geo.spec).source
                    print("\n".join("   | " + ln for ln in src.splitlines() if "v" in ln and "=" in ln)[:1500])

    # the fuzz case, through the test harness
    import sys
    sys.path.insert(0, "tests")
    import strategies as S
    e = S.Expr(leaves=(S.Leaf(np.dtype("float16"), (), "C", 0),),
               steps=(S.Step("add", (0, 0), (), "function"),), outputs=(1,))
    leaf = e.leaves[0].make()
    print("fuzz leaf:", type(leaf), repr(leaf), np.signbit(leaf))
    print("fuzz check:", S.check(e, ["lazy-cuda" if DEVICE == "cuda" else "lazy-reference", "eager"]))
    with la.config(mode="lazy", device=DEVICE):
        r = la.add(leaf, leaf)
        print("la.add(leaf, leaf):", repr(r), r.device if hasattr(r, "device") else "")
        print("  explain:", str(la.explain(lambda: la.add(leaf, leaf).compute()))[:1500])
