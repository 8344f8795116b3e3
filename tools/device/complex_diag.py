"""Which inputs of complex ``log1p``, ``power`` and ``sign`` the GPU kernel gets wrong (issue 17;
the H200 failed them, the simulator passes). Run in a checkout whose templates fuse them (the
branch ``cx-diag``: main with ``H_cpow`` from 785adbd and the ``sign`` key back; or 48e9191),
from that checkout's root:

    python tools/device/complex_diag.py

Prints, per failing element: the input(s), the GPU's value, NumPy's, and for log1p libdevice's
``hypot``/``log``/``log1p``/``atan2`` of the parts next to NumPy's. Development tool.
"""
from __future__ import annotations

import math
import sys
import warnings

import numpy as np

sys.path.insert(0, "tests")
import test_gpu_native_ops as T  # noqa: E402  (785adbd's tests: the failing checks)

seen: list = []


def bad_mask(got, want, ulps, real_scale=None):
    part = np.finfo(want.dtype).dtype
    with np.errstate(all="ignore"):
        scale = np.abs(want.astype(np.complex128))
        tol = np.asarray(ulps) * np.maximum(np.spacing(np.minimum(scale, np.finfo(part).max).astype(part)),
                                            np.finfo(part).smallest_subnormal).astype(np.float64)
        real_tol = tol if real_scale is None else np.maximum(tol, np.asarray(ulps) * np.spacing(part.type(real_scale)))
        bad = np.zeros(want.shape, bool)
        for g, w, tol in ((got.real, want.real, real_tol), (got.imag, want.imag, tol)):
            bad |= np.isnan(g) != np.isnan(w)
            inf = np.isinf(w) | np.isinf(g)
            bad |= inf & (g != w)
            bad |= (w == 0) & (g == 0) & (np.signbit(g) != np.signbit(w))
            fin = np.isfinite(w) & np.isfinite(g)
            bad |= fin & (np.abs(g.astype(np.float64) - w.astype(np.float64)) > tol)
    return bad, tol


def check(op, *arrays, ulps=None, real_scale=None):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(getattr(np, op)(*arrays))
    got = T._lazy(lambda *xs: getattr(T.la, op)(*xs), *arrays)
    bad, tol = bad_mask(got, want, T.ULPS if ulps is None else ulps, real_scale)
    print(f"== {op} {[a.dtype.name for a in arrays]}: {int(bad.sum())} of {bad.size} bad", flush=True)
    for k in np.flatnonzero(bad)[:40]:
        ins = ", ".join(repr(complex(a.ravel()[k])) for a in arrays)
        t = np.broadcast_to(tol, bad.shape).ravel()[k]
        print(f"  {op}({ins}) gpu {complex(got.ravel()[k])!r} numpy {complex(want.ravel()[k])!r} tol {t:.3g}")
        seen.append((op, [a.ravel()[k] for a in arrays]))


def libdevice_parts(dtype):
    """libdevice's hypot/log/log1p/atan2 of the bad log1p inputs' parts, against NumPy's."""
    from numba import cuda
    zs = np.array([a[0] for op, a in seen if op == "log1p" and a[0].dtype == dtype], dtype)
    if not len(zs):
        return
    part = np.finfo(dtype).dtype
    x, y = np.ascontiguousarray(zs.real), np.ascontiguousarray(zs.imag)
    out = np.zeros((5, len(zs)), part)

    @cuda.jit
    def k(x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            xp1 = x[i] + part.type(1)
            out[0, i] = xp1
            out[1, i] = math.hypot(xp1, y[i])
            out[2, i] = math.log(out[1, i])
            out[3, i] = math.atan2(y[i], xp1)
            out[4, i] = math.log1p(x[i])
    k[1, 256](x, y, out)
    with np.errstate(all="ignore"):
        xp1 = (x + part.type(1)).astype(part)
        ref = [xp1, np.hypot(xp1, y), np.log(np.hypot(xp1, y)), np.arctan2(y, xp1), np.log1p(x)]
    for i in range(len(zs)):
        print(f"  {dtype.name} z={complex(zs[i])!r}")
        for name, g, w in zip(("x+1", "hypot", "log(hypot)", "atan2", "log1p(x)"), out[:, i], ref):
            print(f"     {name:10s} gpu {g!r:26s} numpy {w[i]!r}{'' if g == w[i] or (g != g and w[i] != w[i]) else '   <-- differs'}")


def main():
    for dt in T.COMPLEX:
        for op, scale in (("log1p", 1.0), ("sign", None)):
            try:
                check(op, np.concatenate([T._cx_grid(dt), T._cx_random(dt)]), real_scale=scale)
            except Exception as exc:   # noqa: BLE001 (a diagnostic: print and go on)
                print(op, dt, "raised", type(exc).__name__, exc)
    for dt in T.COMPLEX:
        try:
            power(np.dtype(dt))
        except Exception as exc:   # noqa: BLE001
            print("power", dt, "raised", type(exc).__name__, exc)
    for dt in T.COMPLEX:
        libdevice_parts(dt)


def power(dt):
    """As test_complex_power at 785adbd builds it."""
    z = T._cx_grid(dt)[::3]
    exps = np.array([0, 1, 2, 3, -1, -2, 5, -7, 99, 0.5, -0.5, 2.5, 1j, 1 + 1j, -2j, np.inf,
                     np.nan, complex(0, np.inf)], dt)
    a, b = np.repeat(z, len(exps)), np.tile(exps, len(z))
    integral = (b.imag == 0) & (np.trunc(b.real) == b.real) & (np.abs(b.real) < 100)
    check("power", a[integral], b[integral], ulps=0)
    a, b = np.concatenate([a[~integral], T._cx_random(dt)]), \
        np.concatenate([b[~integral], T._cx_random(dt, seed=5) / 1e3])
    with np.errstate(all="ignore"):
        growth = 1 + np.abs(b.astype(np.complex128) * np.log(a.astype(np.complex128)))
    check("power", a, b, ulps=T.ULPS * np.where(np.isfinite(growth), growth, 1))
    r = np.array([2.0, 0.5, -1.5, 3.0], np.finfo(dt).dtype)
    zr = T._cx_random(dt, 4)
    check("power", zr, r, ulps=T.ULPS * 64)
    check("float_power", zr, r, ulps=T.ULPS * 64)


if __name__ == "__main__":
    main()
