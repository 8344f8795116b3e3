"""Differential stateful fuzzer: NumPy vs lazyarr (a development tool, not run by CI).

Written in the bug hunts of 2026-12-05 (docs/notes/core.rst, "Differential bug hunts"),
which found the wrong answers and aliasing differences fixed in 949efb1, 26fafb2, 790455c and
3682f3e. Run it against a snapshot of a tree (``PYTHONPATH=<tree>``) on fresh seeds after
changes to views, writes or the fallback; FUZZ_AVOID (below) steers around the differences
that remain, each documented.

A program is a list of Python source lines (prologue: user buffers U0.. built with np; then
init lines with ``xp``; then steps).  It is run once with ``xp = numpy`` and once per
lazyarr configuration with ``xp = lazyarr``; after every CHECK line every live name
(arrays, views, pending expressions, scalars, tuples, the user's buffers U*) is compared.

Usage:
  python stateful.py run START COUNT [OUT.jsonl [CONFIG,...]]  # fuzz seeds START..START+COUNT-1
  python stateful.py one SEED [CONFIG]                     # run one seed verbosely
  python stateful.py min SEED CONFIG                       # minimise a failing seed
  python stateful.py show SEED                             # print the program
"""
from __future__ import annotations

import json
import math
import os
import random
import signal
import sys
import traceback
import warnings

os.environ.setdefault("LAZYARR_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import lazyarr as la  # noqa: E402


DTYPES = ["float64", "float32", "int64", "int32", "uint8", "bool", "complex128", "int8", "float16",
          "uint8", "int8", "int16", "complex64"]
FLOATISH = ("f", "c")
CONFIGS = {
    "lazy": dict(mode="lazy", eager_max_size=32768),
    "lazy0": dict(mode="lazy", eager_max_size=0),
    "eager": dict(mode="eager", eager_max_size=32768),
    "eager0": dict(mode="eager", eager_max_size=0),
}
FIXED = {"np", "xp", "cfg", "cfgc", "nan", "inf", "__builtins__", "la"}
CHECK = "#CHECK"
# known bugs / by-design differences to steer around (FUZZ_AVOID, comma list).
#   round 1: ravel, elem, laat, realscalar, wherescalar, reshapeF, bcastsame, scalarwhere, copyorder,
#            imag, absred (all fixed in 26fafb2 except wherescalar = by design, 0-d x[i])
#   round 2: layoutK (5b: skip reshape/ravel of memory NumPy laid out in K order), prec11 (11:
#            broadcast error vs NumPy's TypeError/OverflowError), precRO (B: cast error vs NumPy's
#            read-only error), imatmul (A: x @= y), lazyerr (integer-power errors deferred /
#            x **= y not half-written, documented), emptypow (C), flat (D: x.flat writes),
#            fbview (D: fallback views of pending arrays: only U-rooted sources), npimag (H)
#   FUZZ_KINDS=k1,k2 restricts the step kinds; FUZZ_MAXSTEPS (16) the program length.
AVOID = set(filter(None, os.environ.get("FUZZ_AVOID", "").split(",")))


def _noop(**k):
    return None


import contextlib


@contextlib.contextmanager
def _noctx(**k):
    yield None


def make_ns(side):
    ns = {"np": np, "nan": float("nan"), "inf": float("inf")}
    if side == "np":
        ns["xp"] = np
        ns["cfg"] = _noop
        ns["cfgc"] = _noctx
    else:
        ns["xp"] = la
        ns["cfg"] = la.set_config
        ns["cfgc"] = la.config
    return ns


# ----------------------------------------------------------------------------- values
class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def canon(v, side):
    """A comparable copy of a value: ('arr', dtype, shape, ndarray) | ('py', type, value) |
    ('tuple', [...]) | ('other', repr)."""
    if isinstance(v, tuple) or isinstance(v, list):
        return ("seq", type(v).__name__, [canon(x, side) for x in v])
    if isinstance(v, (np.ndarray, np.generic)) or (side == "la" and isinstance(v, la.LazyArray)):
        a = np.array(v, copy=True)
        return ("arr", str(a.dtype), tuple(a.shape), a)
    if isinstance(v, np.dtype):
        return ("py", "dtype", str(v))
    if isinstance(v, (bool, int, float, complex)):
        return ("py", type(v).__name__, v)
    return ("other", type(v).__name__, None)


def _bits_equal(x, y):
    if x.dtype.kind == "c":
        return _bits_equal(x.real.copy(), y.real.copy()) and _bits_equal(x.imag.copy(), y.imag.copy())
    if x.dtype.kind == "f":
        if not np.array_equal(x, y, equal_nan=True):
            return False
        z = (x == 0)
        return bool(np.all(np.signbit(x[z]) == np.signbit(y[z])))
    return bool(np.array_equal(x, y))


def _close(x, y, dtype):
    rtol = {"float32": 1e-5, "complex64": 1e-5, "float16": 2e-3}.get(dtype, 1e-12)
    if x.dtype.kind not in FLOATISH:
        return bool(np.array_equal(x, y))
    rtol = max(rtol, 1e-5)   # approx: reductions may accumulate float32 in float64 (by design)
    scale = np.max(np.abs(x[np.isfinite(x)]), initial=1.0)
    if x.dtype.kind == "f" and x.shape == y.shape:
        # float32 sums of squares overflow in NumPy but not in float64 accumulation (by design)
        y64 = y.astype(np.float64)
        big = np.isinf(x) & (np.isinf(y64) | (np.abs(y64) > 1e30) | (x.dtype.itemsize <= 4))
        x, y = np.where(big, 0, x), np.where(big, 0, y)
    return bool(np.allclose(x, y, rtol=rtol, atol=rtol * scale, equal_nan=True))


def compare(cn, cl, approx):
    """None when equal, else a (category, detail) pair."""
    if cn[0] != cl[0] or (cn[0] == "seq" and (cn[1] != cl[1] or len(cn[2]) != len(cl[2]))):
        # a numpy scalar vs a 0-d LazyArray is fine (both 'arr')
        return ("type", f"np {cn[:2]} vs la {cl[:2]}")
    if cn[0] == "seq":
        for x, y in zip(cn[2], cl[2]):
            r = compare(x, y, approx)
            if r:
                return r
        return None
    if cn[0] == "arr":
        _, dn, sn, an = cn
        _, dl, sl, al = cl
        if dn != dl:
            return ("dtype", f"np {dn} vs la {dl}")
        if sn != sl:
            return ("shape", f"np {sn} vs la {sl}")
        ok = _close(an, al, dn) if approx else _bits_equal(an, al)
        if not ok:
            return ("value", f"np {an.tolist()!r} vs la {al.tolist()!r}")
        return None
    if cn[0] == "py":
        if cn[1] != cl[1]:
            return ("type", f"np {cn[1]} vs la {cl[1]}")
        a, b = cn[2], cl[2]
        if a == b or (isinstance(a, (float, complex)) and str(a) == str(b)):
            if isinstance(a, float) and a == 0 and math.copysign(1, a) != math.copysign(1, b):
                return ("value", f"np {a!r} vs la {b!r}")
            return None
        if approx and isinstance(a, (float, complex)) and abs(a - b) <= 1e-9 * max(1, abs(a)):
            return None
        return ("value", f"np {a!r} vs la {b!r}")
    if cn[1] != cl[1]:
        return ("type", f"np {cn[1]} vs la {cl[1]}")
    return None


def user_names(ns):
    return [k for k in ns if k not in FIXED and not k.startswith("_")]


def run_side(prog, side, config=None, timeout=30):
    """Run a program; return a list of events, one per line:
    ('ok',) | ('exc', typename, excobj-class-mro-names, msg) | ('check', {name: canon})."""
    ns = make_ns(side)
    events = []
    if side == "la":
        la.set_config(mode="lazy", eager_max_size=32768, fallback="allow")
        if config:
            la.set_config(**CONFIGS[config])
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                for line in prog["lines"]:
                    if line == CHECK:
                        snap = {}
                        for k in user_names(ns):
                            try:
                                snap[k] = canon(ns[k], side)
                            except Timeout:
                                raise
                            except Exception as e:  # reading a value raised
                                snap[k] = ("readexc", type(e).__name__, str(e)[:200])
                        events.append(("check", snap))
                        continue
                    try:
                        exec(line, ns)
                        events.append(("ok",))
                    except Timeout:
                        raise
                    except Exception as e:
                        events.append(("exc", type(e).__name__,
                                       [c.__name__ for c in type(e).__mro__], str(e)[:300]))
    except Timeout:
        events.append(("hang",))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        if side == "la":
            la.set_config(mode="lazy", eager_max_size=32768, fallback="allow")
    return events, ns


INTERNAL = {"AttributeError", "AssertionError", "KeyError", "NameError", "UnboundLocalError",
            "RecursionError", "SystemError", "NotImplementedError", "ZeroDivisionError",
            "RuntimeError", "ReferenceError", "MemoryError", "SystemExit"}


def diff(prog, config):
    """Run prog on both sides; return None or a dict describing the first mismatch."""
    en, _ = run_side(prog, "np")
    el, _ = run_side(prog, "la", config)
    lines = prog["lines"]
    approx = set(prog.get("approx", ()))
    for i, (a, b) in enumerate(zip(en, el)):
        if b[0] == "hang":
            return dict(step=i, line=lines[i] if i < len(lines) else None, cat="hang", name=None,
                        detail="timeout")
        if a[0] == "check":
            if b[0] != "check":
                return dict(step=i, line=CHECK, cat="crash", name=None, detail=str(b))
            for k, cn in a[1].items():
                if k not in b[1]:
                    return dict(step=i, line=CHECK, cat="missing", name=k, detail="name missing")
                cl = b[1][k]
                if cl[0] == "readexc":
                    return dict(step=i, line=CHECK, cat="crash", name=k,
                                detail=f"reading value raised {cl[1]}: {cl[2]}")
                r = compare(cn, cl, k in approx)
                if r:
                    return dict(step=i, line=CHECK, cat=r[0], name=k, detail=r[1][:1500])
            continue
        if "wherescalar" in AVOID and a[0] == "ok" and b[0] == "exc" and "Cannot cast scalar from" in b[3]:
            return None   # by design: x[i] / a full reduction is a 0-d array, not a NumPy scalar
        if "wherescalar" in AVOID and a[0] == "exc" and b[0] == "ok" and "cannot convert float NaN" in a[3]:
            return None   # by design: the same (NumPy scalar -> int conversion raises; 0-d casts)
        if "lazyerr" in AVOID and a[0] == "exc" and "negative integer powers" in a[3]:
            # lazy: an array exponent's error comes at materialization; and lazyarr's x **= y
            # that raises leaves x as it was (documented) where NumPy's has written part of it
            return None   # lazy mode: an array exponent's error comes at materialization
        if "emptypow" in AVOID and a[0] == "ok" and b[0] == "exc" and "negative integer powers" in b[3]:
            return None   # new bug C: negative constant exponent on an empty integer array
        if a[0] == "ok" and b[0] == "exc":
            cat = "crash" if b[1] in INTERNAL else "exception"
            return dict(step=i, line=lines[i], cat=cat, name=None,
                        detail=f"np ok, la raised {b[1]}: {b[3]}")
        if a[0] == "exc" and b[0] == "ok":
            return dict(step=i, line=lines[i], cat="exception", name=None,
                        detail=f"np raised {a[1]}: {a[3]}, la ok")
        if a[0] == "exc" and b[0] == "exc":
            if "prec11" in AVOID and "TypeError" in a[1] and b[1] == "ValueError" and \
                    ("broadcast" in b[3] or "shape mismatch" in b[3]):
                continue   # known bug 11: shape error reported before NumPy's dtype error
            if "prec11" in AVOID and a[1] == "OverflowError" and b[1] == "ValueError" and \
                    ("broadcast" in b[3] or "shape mismatch" in b[3]):
                continue   # known bug 11 (OverflowError of a Python int vs the shape error)
            if "precRO" in AVOID and a[1] == "ValueError" and "read-only" in a[3] and ("TypeError" in b[1] or b[1] == "OverflowError"):
                continue   # new bug B: casting error reported before NumPy's read-only error
            if a[1] not in b[2]:   # la's exception must be (a subclass of) numpy's
                cat = "crash" if b[1] in INTERNAL else "exception"
                return dict(step=i, line=lines[i], cat=cat, name=None,
                            detail=f"np raised {a[1]}: {a[3]} ; la raised {b[1]}: {b[3]}")
    if len(el) < len(en):
        return dict(step=len(el), line=None, cat="crash", name=None, detail="la stopped early")
    return None


# ----------------------------------------------------------------------------- generation
def fmt_slice(start, stop, step):
    s = "" if start is None else str(start)
    s += ":" + ("" if stop is None else str(stop))
    if step is not None:
        s += ":" + str(step)
    return s


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.seed = seed
        self.lines = []
        self.approx = set()
        self.counter = 0
        self.ns = None
        self.kinds_used = []

    # --- state
    def replay(self, lines):
        ns = make_ns("np")
        ok = True
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                for ln in lines:
                    if ln == CHECK:
                        continue
                    try:
                        exec(ln, ns)
                        ok = True
                    except Exception:
                        ok = False
        return ns, ok

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def arrays(self, writable=None, exact=True, ndarray_only=False, min_ndim=0):
        out = []
        for k in user_names(self.ns):
            v = self.ns[k]
            if exact and k in self.approx:
                continue
            if k.startswith("U"):
                continue
            if isinstance(v, np.ndarray):
                if writable is not None and v.flags.writeable != writable:
                    continue
                if v.ndim < min_ndim:
                    continue
                out.append(k)
            elif isinstance(v, np.generic) and not ndarray_only and min_ndim == 0:
                out.append(k)
        return out

    def _base_root(self, nm):
        """The end of the NumPy array `nm`'s base chain and whether it is a user buffer U*
        (the walk stops there); None when `nm` is not a NumPy array."""
        v = self.ns.get(nm)
        if not isinstance(v, np.ndarray):
            return None
        us = [self.ns[k] for k in self.ns if k.startswith("U") and isinstance(self.ns[k], np.ndarray)]
        x = v
        while True:
            if any(x is u for u in us):
                return x, True
            if not isinstance(x.base, np.ndarray):
                return x, False
            x = x.base

    def layout_risky(self, nm):
        """True when NumPy's array `nm` lives in memory that NumPy laid out in K order (a
        computed result / copy that is not C-ordered): lazyarr's is C-ordered (known bug 5b),
        so reshape/ravel could be a view on one side and a copy on the other."""
        found = self._base_root(nm)
        return found is not None and not found[1] and not found[0].flags.c_contiguous

    # --- literals
    def scalar(self, dtype=None):
        r = self.r
        c = r.random()
        if c < 0.35:
            return str(r.randint(-3, 5))
        if c < 0.55:
            return r.choice(["0.5", "-1.5", "2.0", "-0.0", "0.25"])
        if c < 0.62:
            return r.choice(["True", "False"])
        if c < 0.68:
            return r.choice(["nan", "inf", "-inf"])
        if c < 0.74:
            return r.choice(["300", "-1", "256", "2**40", "-129"])
        if c < 0.80:
            return r.choice(["1j", "(1-2j)"])
        if c < 0.9:
            return r.choice(["np.float32(1.5)", "np.int8(3)", "np.uint8(200)", "np.float64(-2.5)",
                             "np.int64(-4)", "np.bool_(True)"])
        return str(r.randint(0, 3))

    # --- keys
    def basic_key(self, shape, allow_int=True, allow_newaxis=True):
        r = self.r
        parts = []
        for n in shape:
            c = r.random()
            if c < 0.25 and allow_int and n > 0:
                parts.append(str(r.randint(-n, n - 1)))
            elif c < 0.27 and allow_int:
                parts.append(str(r.choice([n, -n - 1, n + 2])))   # out of bounds
            elif c < 0.45:
                parts.append(":")
            else:
                start = r.choice([None, None, r.randint(-n - 1, n + 1)])
                stop = r.choice([None, None, r.randint(-n - 1, n + 1)])
                step = r.choice([None, 1, 2, -1, -1, -2, 3])
                parts.append(fmt_slice(start, stop, step))
        if parts and r.random() < 0.3:
            k = r.randint(0, len(parts))
            parts = parts[:k] + ["..."] + parts[k + r.randint(0, len(parts) - k):]
        elif parts and r.random() < 0.3:
            parts = parts[: r.randint(1, len(parts))]
        if allow_newaxis and r.random() < 0.2:
            parts.insert(r.randint(0, len(parts)), "None")
        if not parts:
            parts = [r.choice([":", "...", "()"])]
        if parts == ["()"]:
            return "()"
        return ", ".join(parts)

    def adv_key(self, name, shape):
        r = self.r
        c = r.random()
        n0 = shape[0] if shape else 0
        if not shape:
            return r.choice(["...", "()", "None"])
        if c < 0.35:
            k = r.randint(0, 4)
            idx = [r.randint(-n0, n0 - 1) if n0 else 0 for _ in range(k)]
            if r.random() < 0.1:
                idx.append(n0 + 1)
            s = repr(idx)
            if len(shape) > 1 and r.random() < 0.4:
                s += ", " + self.basic_key(shape[1:2], allow_newaxis=False)
            if r.random() < 0.2:
                s = f"xp.asarray({s})" if ", " not in s.split("]")[-1] else s
            return s
        if c < 0.65:
            # boolean mask of the full shape
            cands = [k for k in self.arrays(ndarray_only=True) if self.ns[k].shape == shape]
            other = r.choice(cands) if cands else name
            op = r.choice([">", "<", "==", "!="])
            return f"{other} {op} {self.scalar_small()}"
        if c < 0.8:
            mask = [r.random() < 0.5 for _ in range(n0)]
            return repr(mask)
        if c < 0.9 and len(shape) >= 2:
            k = r.randint(1, 3)
            i0 = [r.randint(-shape[0], shape[0] - 1) if shape[0] else 0 for _ in range(k)]
            i1 = [r.randint(-shape[1], shape[1] - 1) if shape[1] else 0 for _ in range(k)]
            return f"{i0!r}, {i1!r}"
        # a 0-d / bool scalar index, or an integer array name
        ints = [k for k in self.arrays(ndarray_only=True) if self.ns[k].dtype.kind in "iub"
                and self.ns[k].ndim == 1]
        if ints and r.random() < 0.5:
            return r.choice(ints)
        return r.choice(["True", "False", "[]", "..., [0]", "[-1, 0]"])

    def scalar_small(self):
        return self.r.choice(["0", "1", "2", "-1", "0.5"])

    # --- expressions
    def operand(self, depth=0):
        r = self.r
        names = self.arrays()
        c = r.random()
        if not names or c < 0.12:
            return self.scalar()
        us = [k for k in self.ns if k.startswith("U") and isinstance(self.ns[k], np.ndarray)]
        if us and not os.environ.get("FUZZ_NOU") and r.random() < 0.06:
            f = r.choice(["xp.imag", "xp.real", "xp.conj", "xp.negative", "xp.abs", "xp.sqrt", "xp.square",
                          "xp.sign", "xp.isnan", "xp.floor", "xp.positive", "xp.asarray", "xp.angle",
                          "xp.iscomplex", "xp.isreal", "xp.real_if_close", "xp.nan_to_num"])
            if "npimag" in AVOID and f in ("xp.imag", "xp.real"):
                f = "xp.conj"     # new bug H: la.imag/la.real of a NumPy complex input
            return f"{f}({r.choice(us)})"   # a NumPy array as an operand of lazyarr's functions
        nm = r.choice(names)
        v = self.ns[nm]
        if c < 0.3 and isinstance(v, np.ndarray) and v.ndim:
            return f"{nm}[{self.basic_key(v.shape)}]"
        if c < 0.34 and isinstance(v, np.ndarray) and v.ndim >= 2:
            return f"{nm}.T"
        if depth < 2 and c < 0.55:
            return self.expr(depth + 1)
        return nm

    def expr(self, depth=0):
        r = self.r
        c = r.random()
        a = self.operand(depth)
        if c < 0.45:
            op = r.choice(["+", "-", "*", "/", "//", "%", "&", "|", "^", "**", "+", "*", "-"])
            b = self.operand(depth)
            if op == "**":
                b = r.choice(["2", "0.5", "3", "2.0"])
            return f"({a} {op} {b})"
        if c < 0.6:
            op = r.choice(["<", "<=", "==", "!=", ">", ">="])
            return f"({a} {op} {self.operand(depth)})"
        if c < 0.67:
            cond = self.operand(depth)
            if "scalarwhere" in AVOID and self.arrays(ndarray_only=True):
                cond = self.r.choice(self.arrays(ndarray_only=True))
            return f"xp.where({cond}, {a}, {self.operand(depth)})"
        if c < 0.74:
            return f"{r.choice(['-', '~', 'abs'])}({a})" if r.random() < 0.8 else f"+{a}"
        if c < 0.8:
            return f"({a}).astype({r.choice(DTYPES)!r})"
        if c < 0.85:
            f = r.choice(["xp.maximum", "xp.minimum", "xp.fmax", "xp.add", "xp.multiply",
                          "np.subtract", "np.maximum"])
            return f"{f}({a}, {self.operand(depth)})"
        if c < 0.9:
            return f"xp.clip({a}, {r.choice(['0', '-1', 'None'])}, {r.choice(['2', '1.5', '3'])})"
        if c < 0.94:
            f = r.choice(["xp.sqrt", "xp.square", "xp.negative", "xp.sign", "xp.isnan",
                          "xp.floor", "xp.logical_not", "xp.conj", "xp.real", "xp.imag"])
            if "realscalar" in AVOID and f in ("xp.real", "xp.imag") and not a.isidentifier() or \
                    "imag" in AVOID and f == "xp.imag":
                f = "xp.conj"
            return f"{f}({a})"
        return a

    def reduction(self):
        r = self.r
        names = self.arrays(ndarray_only=True)
        if not names:
            return None, False
        nm = r.choice(names)
        v = self.ns[nm]
        src = nm if r.random() < 0.6 else self.expr(1)
        f = r.choice(["sum", "max", "min", "any", "all", "argmax", "argmin", "mean", "prod",
                      "sum", "max", "cumsum", "count_nonzero", "std"])
        axis = ""
        if v.ndim and r.random() < 0.6:
            ax = r.randint(-v.ndim, v.ndim - 1)
            if r.random() < 0.1 and v.ndim >= 2:
                axis = f"axis=(0, {v.ndim - 1})"
            else:
                axis = f"axis={ax}"
            if r.random() < 0.3 and f not in ("cumsum", "argmax", "argmin"):
                axis += ", keepdims=True"
        if f == "count_nonzero":
            s = f"xp.count_nonzero({src}{', ' + axis if axis else ''})"
        elif r.random() < 0.3 and f != "cumsum":
            s = f"xp.{f}({src}{', ' + axis if axis else ''})"
        else:
            s = f"({src}).{f}({axis})"
        if "absred" in AVOID:
            src = src.replace("abs(", "xp.negative(")
        approx = f in ("sum", "mean", "prod", "std", "cumsum", "max", "min")  # max/min: IEEE zero sign (documented)
        return s, approx

    # --- step kinds
    def step_view(self):
        r = self.r
        names = self.arrays(ndarray_only=True)
        if not names:
            return None
        nm = r.choice(names)
        v = self.ns[nm]
        dst = self.fresh("v")
        c = r.random()
        if c < 0.35 and v.ndim:
            return f"{dst} = {nm}[{self.basic_key(v.shape)}]"
        if c < 0.42:
            return f"{dst} = {nm}.T"
        if c < 0.62 and "layoutK" in AVOID and self.layout_risky(nm):
            return None
        if c < 0.55:
            # a valid reshape
            n = v.size
            opts = [(n,), (-1,)]
            for a in range(1, 8):
                if n % a == 0:
                    opts.append((a, n // a))
                    opts.append((a, -1))
                    for b in range(1, 8):
                        if n % (a * b) == 0:
                            opts.append((a, b, n // (a * b)))
            if n == 0:
                opts += [(0, 3), (2, 0, 1), (0,)]
            shp = r.choice(opts)
            order = ", order='F'" if r.random() < 0.1 and "reshapeF" not in AVOID else ""
            return f"{dst} = {nm}.reshape({shp!r}{order})"
        if c < 0.62:
            if "ravel" in AVOID:
                return f"{dst} = {nm}.reshape(-1)"
            return f"{dst} = {nm}.ravel()"
        if c < 0.67:
            return f"{dst} = {nm}[::-1]"
        if c < 0.74:
            shp = list(v.shape)
            if r.random() < 0.5:
                shp = [r.randint(1, 3)] + shp
            shp = [x if x != 1 or r.random() < 0.5 else r.randint(0, 3) for x in shp]
            if "bcastsame" in AVOID and tuple(shp) == v.shape:
                shp = [2] + shp
            return f"{dst} = xp.broadcast_to({nm}, {tuple(shp)!r})"
        if c < 0.78 and v.ndim >= 2:
            return f"{dst} = {nm}.swapaxes(0, -1)"
        if c < 0.82 and v.ndim:
            return f"{dst} = xp.flip({nm}, {r.randint(0, v.ndim - 1)})"
        if c < 0.86:
            return f"{dst} = {nm}[..., None]"
        if c < 0.89:
            return f"{dst} = xp.squeeze({nm})"
        if c < 0.92 and v.ndim == 3:
            return f"{dst} = {nm}.transpose(1, 2, 0)"
        if c < 0.95:
            part = r.choice(['real', 'imag'])
            if "imag" in AVOID and v.dtype.kind != "c":
                part = "real"
            return f"{dst} = {nm}.{part}"
        if c < 0.97:
            return f"{dst} = xp.asarray({nm})"
        return f"{dst} = {nm}"   # alias

    def step_expr(self):
        r = self.r
        dst = self.fresh("e")
        c = r.random()
        if c < 0.6:
            return f"{dst} = {self.expr()}", False
        if c < 0.85:
            s, approx = self.reduction()
            if s is None:
                return None, False
            return f"{dst} = {s}", approx
        names = self.arrays(ndarray_only=True)
        if not names:
            return None, False
        nm = r.choice(names)
        v = self.ns[nm]
        if c < 0.9:
            return f"{dst} = {nm}[{self.adv_key(nm, v.shape)}]", False
        if c < 0.95:
            o = r.choice(names)
            f = r.choice(["concatenate", "stack"])
            return f"{dst} = xp.{f}([{nm}, {o}])", False
        return f"{dst} = {nm}[{self.basic_key(v.shape)}] * 1", False

    def step_scalar(self):
        r = self.r
        names = self.arrays(ndarray_only=True)
        names = [n for n in names if self.ns[n].size]
        if not names:
            return None
        nm = r.choice(names)
        v = self.ns[nm]
        idx = ", ".join(str(r.randint(-n, n - 1)) for n in v.shape)
        dst = self.fresh("s")
        if "elem" in AVOID:
            return f"{dst} = {nm}[{idx}] + 0" if idx else f"{dst} = {nm}[()] + 0"
        return f"{dst} = {nm}[{idx}]" if idx else f"{dst} = {nm}[()]"

    def step_read(self):
        r = self.r
        names = self.arrays(ndarray_only=True)
        if not names:
            return None
        nm = r.choice(names)
        v = self.ns[nm]
        dst = self.fresh("r")
        idx = ", ".join(str(r.randint(-n, n - 1)) if n else "0" for n in v.shape)
        conv = r.choice(["float", "int", "complex", "bool"])
        if v.dtype.kind == "c" and conv in ("float", "int"):
            conv = "complex"
        c = r.random()
        if c < 0.6:
            return f"{dst} = {conv}({nm}[{idx}])"
        if c < 0.7:
            return f"{dst} = {nm}[{idx}].item()"
        if c < 0.8:
            return f"{dst} = bool(({nm} > 0).any())"
        if c < 0.9:
            return f"{dst} = {nm}.tolist()"
        return f"{dst} = {conv}(({nm}.max()) + 0.0)" if v.size else f"{dst} = {nm}.shape"

    def value_for(self, target_shape):
        r = self.r
        c = r.random()
        if c < 0.3:
            return self.scalar()
        if c < 0.45:
            return self.expr()
        names = [k for k in self.arrays() if np.shape(self.ns[k])[-len(target_shape):] == target_shape
                 or np.shape(self.ns[k]) in ((), (1,))] if target_shape else self.arrays()
        if names:
            nm = r.choice(names)
            if r.random() < 0.3:
                return f"{nm} * 2"
            return nm
        return self.operand()

    def step_write(self):
        r = self.r
        names = self.arrays(ndarray_only=True, writable=None if r.random() < 0.05 else True)
        if not names:
            return None
        nm = r.choice(names)
        v = self.ns[nm]
        c = r.random()
        if c < 0.3 and v.ndim:
            key = self.basic_key(v.shape)
            try:
                sub = np.shape(v[eval(key, {"np": np, "xp": np})] if False else
                               eval(f"_v[{key}]", {"_v": v, "np": np, "xp": np}))
            except Exception:
                sub = v.shape
            return f"{nm}[{key}] = {self.value_for(sub)}"
        if c < 0.42:
            return f"{nm}[{self.adv_key(nm, v.shape)}] = {self.value_for(())}"
        if c < 0.62:
            op = r.choice(["+=", "-=", "*=", "/=", "//=", "|=", "&=", "+=", "*=", "%=", "**="])
            val = self.value_for(v.shape) if op != "**=" else r.choice(["2", "1"])
            return f"{nm} {op} {val}"
        if c < 0.66:
            return f"{nm}[...] = {self.value_for(v.shape)}"
        if c < 0.74 and v.ndim:
            form = r.choice(["{n}[1:] = {n}[:-1]", "{n}[:-1] = {n}[1:]", "{n}[::-1] = {n}",
                             "{n}[...] = {n}.T", "{n}[1:] += {n}[:-1]", "{n} += {n}[::-1]",
                             "{n}[::2] = {n}[1::2]", "{n} -= {n}.T", "{n}[..., 1:] = {n}[..., :-1]",
                             "{n}[:] = {n}[::-1] * 2", "{n}[1:] = {n}[:-1] + {n}[1:]"])
            return form.format(n=nm)
        if c < 0.80:
            f = r.choice(["np.add.at", "xp.add.at", "np.multiply.at", "xp.subtract.at"])
            if "laat" in AVOID:
                f = f.replace("xp.", "np.")
            idx = self.adv_key(nm, v.shape) if r.random() < 0.5 else \
                repr([r.randint(0, max(v.shape[0] - 1, 0)) for _ in range(3)]) if v.ndim else "()"
            val = r.choice(["1", "2", "-1", "0.5", self.operand()])
            return f"{f}({nm}, ({idx}), {val})" if "," not in idx or idx.startswith("[") and "]," not in idx \
                else f"{f}({nm}, ({idx},), {val})"
        if c < 0.86:
            f = r.choice(["np.copyto", "xp.copyto"])
            extra = ""
            if r.random() < 0.25:
                extra = f", where={self.operand()}"
                if "wherescalar" in AVOID and extra[8:].startswith("s"):
                    extra = ""
            elif r.random() < 0.2:
                extra = ", casting='unsafe'"
            return f"{f}({nm}, {self.value_for(v.shape)}{extra})"
        if c < 0.94:
            f = r.choice(["xp.add", "xp.multiply", "np.add", "xp.subtract", "xp.negative",
                          "xp.maximum"])
            out = nm
            if v.ndim and r.random() < 0.4:
                out = f"{nm}[{self.basic_key(v.shape, allow_int=False, allow_newaxis=False)}]"
            if f == "xp.negative":
                return f"{f}({self.operand()}, out={out})"
            return f"{f}({self.operand()}, {self.operand()}, out={out})"
        if c < 0.97:
            return f"{nm}.fill({self.scalar()})"
        return f"{nm}.sort(axis=-1)" if v.ndim else f"{nm}.fill(1)"

    def step_copy(self):
        names = self.arrays()
        if not names:
            return None
        nm = self.r.choice(names)
        dst = self.fresh("c")
        if "copyorder" in AVOID:
            return self.r.choice([f"{dst} = {nm}.copy(order='K')", f"{dst} = xp.array({nm})"])
        return self.r.choice([f"{dst} = {nm}.copy()", f"{dst} = xp.array({nm})",
                              f"{dst} = xp.copy({nm})", f"{dst} = {nm}.copy()"])

    def step_misc(self):
        r = self.r
        c = r.random()
        if c < 0.35:
            return r.choice(["cfg(mode='eager')", "cfg(mode='lazy')", "cfg(eager_max_size=0)",
                             "cfg(eager_max_size=32768)"])
        names = [k for k in user_names(self.ns) if not k.startswith("U")]
        if not names:
            return None
        nm = r.choice(names)
        if c < 0.6:
            return f"del {nm}"
        if c < 0.8:
            # rebind an existing name to an expression (drops the old reference)
            arrs = self.arrays()
            if nm in arrs:
                return f"{nm} = {self.expr()}"
            return None
        if c < 0.9:
            dst = self.fresh("t")
            return f"{dst} = ({self.expr()}, {self.expr()})"
        dst = self.fresh("w")
        return f"{dst} = {nm}"

    # ======================================================================= round-2 step kinds
    def _nd(self, min_ndim=1, writable=None, kinds=None):
        out = []
        for k in self.arrays(ndarray_only=True, writable=writable, min_ndim=min_ndim):
            if kinds and self.ns[k].dtype.kind not in kinds:
                continue
            out.append(k)
        return out

    def _il(self, n, k=None):
        """An index list over an axis of length n: negatives, repeats (also i and i-n)."""
        r = self.r
        k = k if k is not None else r.randint(1, 5)
        if n == 0:
            return [] if r.random() < 0.7 else [0]
        idx = [r.randint(-n, n - 1) for _ in range(k)]
        if r.random() < 0.7 and idx:
            i = idx[r.randrange(len(idx))]
            alias = i - n if i >= 0 else i + n
            idx.insert(r.randrange(len(idx) + 1), r.choice([i, alias]))
            if len(idx) > k:
                idx.pop(r.randrange(len(idx))) if r.random() < 0.3 else None
        if r.random() < 0.05:
            idx.append(r.choice([n, -n - 1]))    # out of bounds
        return idx

    def _sub_shape(self, nm, key):
        try:
            return np.shape(eval(f"_v[{key}]", {"_v": self.ns[nm], "np": np, "xp": np}))
        except Exception:
            return None

    def step_fancy(self):
        r = self.r
        names = self._nd(1)
        if not names:
            return None
        nm = r.choice(names)
        v = self.ns[nm]
        shp = v.shape
        kc = r.random()
        if kc < 0.4 or v.ndim == 1:
            key = repr(self._il(shp[0]))
        elif kc < 0.6:
            k = r.randint(1, 4)
            key = f"{self._il(shp[0], k)!r}, {self._il(shp[1], k)!r}"
        elif kc < 0.75:
            key = f":, {self._il(shp[1])!r}"
        elif kc < 0.85:
            key = f"..., {self._il(shp[-1])!r}"
        else:
            key = f"{self._il(shp[0])!r}, ::-1"
        if key.startswith("[") and r.random() < 0.3:
            first = key.split("]")[0] + "]"
            if first != "[]":
                wrap = r.choice(["xp.asarray({})", "(xp.asarray({}) * 1)", "np.array({})",
                                 "(xp.asarray({})[::-1] + 0)[::-1]", "xp.asarray({}, dtype='int8')",
                                 "xp.asarray({}, dtype='uint8') % 1 + xp.asarray({})"])
                key = wrap.format(first, first) + key[len(first):]
        if r.random() < 0.35:
            dst = self.fresh("e")
            tail = ""
            if r.random() < 0.4:   # then write the source: the gathered result must not change
                tail = "; " + r.choice([f"{nm}[...] = -1", f"{nm} += 1", f"{nm}[::-1] = {nm}"])
            return f"{dst} = {nm}[{key}]{tail}"
        sub = self._sub_shape(nm, key)
        if sub is None and r.random() < 0.8:
            return None
        c2 = r.random()
        if c2 < 0.25:
            val = self.scalar()
        elif c2 < 0.4:
            val = f"{nm}[{key}] * 2"
        elif c2 < 0.55:
            val = f"{nm}[::-1][{key}]"
        elif c2 < 0.75:
            val = self.value_for(sub or ())
        else:
            n = (sub or (1,))[0] if sub else 1
            val = repr([self.rand_value("int64") for _ in range(n)])
        op = r.choice(["=", "=", "=", "+=", "-=", "*="])
        return f"{nm}[{key}] {op} {val}"

    def step_maskw(self):
        r = self.r
        names = self._nd(0, writable=True if r.random() < 0.95 else None)
        if not names:
            return None
        nm = r.choice(names)
        v = self.ns[nm]
        cands = [k for k in self.arrays(ndarray_only=True) if self.ns[k].shape == v.shape]
        bools = [k for k in cands if self.ns[k].dtype == bool and k != nm]
        other = r.choice(cands)
        sm = self.scalar_small()
        if bools and r.random() < 0.3:
            mexpr = r.choice(bools)
            if r.random() < 0.5:
                mexpr = f"~{mexpr}"
        else:
            forms = [f"{other} > {sm}", f"~({other} < {sm})", f"({other} != {sm}) & ({nm} > {sm})",
                     f"{other}.astype(bool)", f"({other} == {other}[::-1])" if v.ndim else f"{other} > 0",
                     f"xp.logical_not({other} <= {sm})"]
            if v.dtype.kind in "fc":
                forms.append(f"xp.isnan({other})")
            mexpr = r.choice(forms)
        m = self.fresh("m")
        if r.random() < 0.25:
            return f"{m} = {mexpr}"
        mid = ""
        if r.random() < 0.6:
            mid = r.choice([f"{other} *= -1", f"{other}[...] = {sm}", f"{nm} += 1",
                            f"{other}[::-1] = {other}" if v.ndim else f"{other} -= 1",
                            f"{nm}[...] = 0"]) + "; "
        val = r.choice([self.scalar(), f"{nm}[{m}] * 2", f"{nm}[::-1][{m}]" if v.ndim else "1",
                        f"{other}[{m}]", f"{nm}[{m}][::-1]", self.scalar_small()])
        use = r.choice([
            f"{nm}[{m}] = {val}", f"{nm}[{m}] += 1", f"{nm}[~{m}] -= {other}[~{m}]",
            f"{nm}[{m}] = {val}", f"xp.copyto({nm}, {self.value_for(v.shape)}, where={m})",
            f"xp.putmask({nm}, {m}, {self.value_for(v.shape)})",
            f"{nm}[{m}.any(axis=-1)] = {self.scalar_small()}" if v.ndim >= 2 else f"{nm}[{m}] *= 2",
            f"{nm}[xp.nonzero({m})] = {self.scalar_small()}",
        ])
        return f"{m} = {mexpr}; {mid}{use}"

    def step_concat(self):
        r = self.r
        names = self._nd(1)
        if not names:
            return None
        nm = r.choice(names)
        v = self.ns[nm]
        same = [k for k in self._nd(1) if self.ns[k].shape == v.shape]
        vforms = ["{n}", "{n}[::-1]", "{n}.T", "{n}[..., ::-1]", "xp.flip({n}, 0)", "{n}[:]", "{n} * 1",
                  "{n}[1:]", "{n}[:1]"]
        ops = [r.choice(vforms).format(n=r.choice(same + [nm, nm])) for _ in range(r.randint(1, 3))]
        f = r.choice(["concatenate", "concatenate", "stack", "hstack", "vstack", "concatenate",
                      "stack", "column_stack", "dstack"])
        ax = ""
        if f in ("concatenate", "stack") and r.random() < 0.5:
            ax = r.choice([", axis=-1", ", axis=0", ", axis=None" if f == "concatenate" else ", axis=1",
                           ", axis=1"])
        dst = self.fresh("e")
        lst = r.choice(["[{}]", "({},)" if len(ops) == 1 else "({})"]).format(", ".join(ops))
        if f == "concatenate" and r.random() < 0.1:
            lst = f"[{nm}[:1], {nm}[:1]]"
            return f"xp.concatenate({lst}, out={nm}[{r.choice(['1:3', ':2', '-2:'])}])"
        if r.random() < 0.15:
            ax += r.choice([", dtype='float32'", ", dtype='int8'", ", casting='unsafe', dtype='uint8'"]) \
                if f in ("concatenate", "stack") else ""
        line = f"{dst} = xp.{f}({lst}{ax})"
        if r.random() < 0.7:
            line += "; " + r.choice([f"{nm} += 1", f"{nm}[...] = {self.scalar_small()}",
                                     f"{nm}[::-1] = {nm}", f"{nm}[0] = 9", f"{dst}[...] = -2",
                                     f"{dst}[:1] *= 3", f"{dst} += {dst}[::-1]"])
        return line

    SELF2 = ["{n}[...] = {n}.T", "{n}[:] = {n}.T[::-1]", "{n} += {n}.T", "{n} -= {n}.T * 2",
             "{n}[::-1] = {n}.T", "{n}[1:, 1:] = {n}.T[:-1, :-1]", "xp.copyto({n}, {n}.T)",
             "{n}[...] = {n}.T + {n}", "{n}[:, ::-1] = {n}.T", "{n}.T[...] = {n}", "{n}.T[::-1] += {n}",
             "{n}[...] = xp.swapaxes({n}, 0, 1)", "{n}[...] = {n}[::-1].T", "{n}[:1] = {n}.T[-1:]",
             "{n}[...] = {n}.T[:, ::-1] * {n}", "{n}[0] = {n}[:, 0]", "{n}[:, 0] = {n}[0]",
             "{n}[:, 0] += {n}[0][::-1]", "{n}[...] = xp.where({n} > 0, {n}.T, {n})",
             "xp.copyto({n}.T, {n}, where={n} > 1)", "{n}[...] = xp.maximum({n}, {n}.T)",
             "{n} *= {n}.T[::-1, ::-1]", "{n}[1:] = {n}.T[1:]", "{n}[..., ::-1] -= {n}.T",
             "{n}[...] = {n}.T.copy()", "{n}[xp.arange({n}.shape[0])] = {n}.T",
             "{n}[[0, -1]] = {n}.T[[-1, 0]]", "{n}.T[{n}.T > 0] = {n}[{n}.T > 0]"]
    SELF3 = ["{n}[...] = {n}.transpose(1, 2, 0)", "{n} += {n}.transpose(2, 0, 1)",
             "{n}[...] = {n}.swapaxes(0, 2)", "{n}[::-1] = {n}.transpose(2, 1, 0)",
             "{n}[...] = {n}.T"]
    SELF1 = ["{n}[1:] = {n}[:-1]", "{n}[:-1] = {n}[1:]", "{n}[::-1] = {n}", "{n}[::2] = {n}[::-2]",
             "{n}[1:] += {n}[:-1]", "{n}[::-1] += {n}", "{n}[:] = {n}[::-1] + {n}",
             "{n}[2:] = {n}[:-2] * 2", "{n}[:-1] -= {n}[1:]", "{n}[[0, 1]] = {n}[[1, 0]]"]

    def step_selfov(self):
        r = self.r
        sq = [k for k in self._nd(2) if self.ns[k].shape[0] == self.ns[k].shape[1]]
        if sq and r.random() < 0.8:
            nm = r.choice(sq)
            v = self.ns[nm]
            forms = self.SELF2
            if v.ndim == 3 and len(set(v.shape)) == 1 and r.random() < 0.5:
                forms = self.SELF3
            return r.choice(forms).format(n=nm)
        names = self._nd(1)
        if not names:
            return None
        nm = r.choice(names)
        return r.choice(self.SELF1 + self.SELF2[:4]).format(n=nm)

    def step_outov(self):
        r = self.r
        names = self._nd(1)
        if not names:
            return None
        nm = r.choice(names)
        v = self.ns[nm]
        same = [k for k in self._nd(0) if self.ns[k].shape == v.shape]
        o = r.choice(same + [nm, self.scalar(), self.scalar_small()])
        f = r.choice(["xp.add", "np.add", "xp.multiply", "xp.subtract", "xp.maximum", "xp.minimum",
                      "np.multiply", "xp.true_divide", "xp.floor_divide", "xp.fmax", "xp.hypot",
                      "xp.bitwise_xor", "xp.copysign", "np.subtract"])
        u = r.choice(["xp.negative", "xp.sqrt", "xp.absolute", "xp.square", "np.negative",
                      "xp.floor", "xp.exp", "xp.positive", "xp.logical_not", "xp.conjugate"])
        forms = ["{f}({n}, {o}, out={n}[::-1])", "{f}({n}[::-1], {n}, out={n})",
                 "{f}({n}, {n}[::-1], out={n}[::-1])", "{f}({n}[1:], {n}[:-1], out={n}[:-1])",
                 "{f}({n}[:-1], {n}[1:], out={n}[1:])", "{f}({o}, {n}, out={n}[..., ::-1])",
                 "{u}({n}, out={n}[::-1])", "{u}({n}[::-1], out={n})",
                 "{f}({n}, {o}, out={n}[::-1], where={n} > 0)", "{f}({n}, {o}, out=({n}[::-1],))",
                 "{f}({n}, {o}, out={n}, where={n}[::-1] > 1)", "{u}({n}, out={n}, where={n} < 1)",
                 "{f}({n}[::2], {n}[1::2], out={n}[::2])", "{f}({n}, {o}, out={n}[:, None][::-1, 0])",
                 "{f}({n}, {n}, out={n}.T)", "{f}({n}.T, {o}, out={n})", "{f}({n}, 1, out={n}[::-1], dtype='float64')",
                 "{f}({n}, {o}, out={n}[::-1], casting='unsafe')"]
        line = r.choice(forms).format(f=f, u=u, n=nm, o=o)
        if r.random() < 0.3:
            line = f"{self.fresh('e')} = {line}"
        return line

    def _axes(self, nd):
        r = self.r
        if nd == 0:
            return r.choice(["None", "()"])
        c = r.random()
        if c < 0.35:
            return str(r.randint(-nd, nd - 1))
        if c < 0.9:
            k = r.randint(1, nd)
            ax = r.sample(range(nd), k)
            ax = [a - nd if r.random() < 0.4 else a for a in ax]
            if r.random() < 0.04:
                ax.append(ax[0] - nd if ax[0] >= 0 else ax[0] + nd)   # duplicate axis
            return "(" + ", ".join(map(str, ax)) + ("," if len(ax) == 1 else "") + ")"
        return r.choice(["None", "()"])

    def step_keepred(self):
        r = self.r
        names = self._nd(0)
        if not names:
            return None
        nm = r.choice(names)
        v = self.ns[nm]
        ax = self._axes(v.ndim)
        f = r.choice(["sum", "mean", "max", "min", "prod", "any", "all", "std", "var", "max", "sum"])
        kd = ", keepdims=True" if r.random() < 0.75 else ""
        red = f"{nm}.{f}(axis={ax}{kd})" if r.random() < 0.6 else f"xp.{f}({nm}, axis={ax}{kd})"
        same = [k for k in self._nd(0) if self.ns[k].shape == v.shape] or [nm]
        o = r.choice(same)
        dst = self.fresh("e")
        k = r.randint(-v.ndim, v.ndim - 1) if v.ndim else 0
        forms = [f"{dst} = {nm} - {red}", f"{dst} = {nm} / {red}", f"{dst} = {red} * {o}",
                 f"{dst} = xp.where({nm} > {red}, {nm}, {red})", f"{nm} -= {red}", f"{nm}[...] = {red}",
                 f"{dst} = ({red} + 1).sum(axis={self._axes(v.ndim)})", f"{dst} = {red}[..., 0]",
                 f"{dst} = {red} == {o}", f"{dst} = {red}.T + {o}.T", f"{dst} = xp.maximum({red}, {o})[::-1]",
                 f"{dst} = {nm}.argmax(axis={k}, keepdims=True)",
                 f"{dst} = xp.take_along_axis({nm}, {nm}.argmin(axis={k}, keepdims=True), axis={k})",
                 f"{dst} = xp.count_nonzero({nm}, axis={ax}, keepdims=True) + {o}",
                 f"{dst} = {red}; {nm}[...] = 7", f"{dst} = {nm} - {red}; {nm} += 1",
                 f"{dst} = xp.cumsum({nm}, axis={k}) - {nm}.sum(axis={k}, keepdims=True)"]
        line = r.choice(forms)
        approx = f in ("sum", "mean", "prod", "std", "var", "max", "min") or "cumsum" in line
        return line, approx

    PEND = ["{e} += {e}[::-1]", "{e} *= {e}.T", "{e}[1:] -= {e}[:-1]", "{e}[::-1] += {e}",
            "{e}[...] = {e}[::-1] + {e}", "{e} -= {e}[..., ::-1]", "{e}[:-1] += {e}[1:]", "{e} += {e}[:1]",
            "{e} *= {e}[..., -1:]", "{e} //= {e}[::-1]", "{e} %= {e}.T", "{v} = {e}[::-1]; {e} += {v}",
            "{v} = {e}.T; {e} *= 2; {v} += {e}", "{e}[{e} > 0] += {e}[::-1][{e} > 0]",
            "{e}[...] = {e}.T", "{e} += {e}.T[::-1]", "{e}[::2] += {e}[1::2]", "{e} **= {e}[::-1]",
            "{e}[[0, -1, 0]] += {e}[[-1, 0, -1]]", "{e} -= {e}.max(axis=0, keepdims=True)",
            "{e} |= {e}[::-1]", "{e} ^= {e}.T", "xp.add({e}, {e}[::-1], out={e})"]

    def step_pendself(self):
        r = self.r
        names = self._nd(1)
        if not names:
            return None
        nm = r.choice(names)
        v = self.ns[nm]
        owned = [k for k in self._nd(1) if not k.startswith("U") and self.ns[k].base is None
                 and not any(self.ns[k] is self.ns[u] for u in self.ns if u.startswith("U"))]
        form = r.choice(self.PEND)
        vv = self.fresh("v")
        if owned and r.random() < 0.35:
            e = r.choice(owned)
            return form.format(e=e, v=vv)
        e = self.fresh("e")
        pre = r.choice([f"{e} = {nm} * 1", f"{e} = {nm} + {nm}[::-1]" if v.ndim else f"{e} = {nm} + 1",
                        f"{e} = -{nm}", f"{e} = ({self.expr()})", f"{e} = {nm}.astype('float64')",
                        f"{e} = xp.where({nm} > 0, {nm}, 0)", f"{e} = {nm}.T * 2"])
        return pre + "; " + form.format(e=e, v=vv)

    def step_copytob(self):
        r = self.r
        names = self._nd(1, writable=True if r.random() < 0.95 else None)
        if not names:
            return None
        nm = r.choice(names)
        v = self.ns[nm]
        bc = []
        for k in self.arrays(ndarray_only=True):
            try:
                if np.broadcast_shapes(self.ns[k].shape, v.shape) == v.shape:
                    bc.append(k)
            except ValueError:
                pass
        srcs = [f"{nm}[:1]", f"{nm}[-1:]", f"{nm}[0]", f"{nm}[..., :1]", f"{nm}[..., -1]", f"{nm}[::-1]",
                self.scalar(), f"{nm}.max(axis=0)", f"{nm}[:1] * 2"] + bc
        if v.ndim >= 2 and v.shape[0] == v.shape[1]:
            srcs.append(f"{nm}.T")
        src = r.choice(srcs)
        if bc and r.random() < 0.3:
            o = r.choice(bc)
            src = r.choice([f"{o}[:1]" if self.ns[o].ndim else o, f"{o}[..., -1:]" if self.ns[o].ndim else o, o])
        where = ""
        c = r.random()
        if c < 0.4:
            bm = [k for k in bc if self.ns[k].dtype == bool and self.ns[k].ndim]
            where = ", where=" + r.choice([f"{nm} > {self.scalar_small()}", f"{nm}[:1] > 0", "True", "False",
                                            f"{nm}[..., :1] != 0"] + bm)
        cast = ""
        if r.random() < 0.3:
            cast = f", casting={r.choice(['unsafe', 'same_kind', 'no', 'safe', 'equiv'])!r}"
        f = r.choice(["xp.copyto", "np.copyto", "xp.copyto"])
        return f"{f}({nm}, {src}{where}{cast})"

    def step_overflow(self):
        r = self.r
        ints = self._nd(0, kinds="iu")
        if not ints or r.random() < 0.2:
            dt = r.choice(["int8", "uint8", "int16", "uint8", "int8"])
            vals = [self.rand_value("int8" if dt == "int8" else "uint8" if dt == "uint8" else "int64")
                    for _ in range(r.randint(1, 6))]
            if dt == "int16":
                vals = [x * 6000 for x in vals]
            e = self.fresh("e")
            wrap = r.choice(["xp.asarray({})", "xp.asarray({}) * 1", "xp.asarray({})[::-1]"])
            return f"{e} = " + wrap.format(f"np.array({vals!r}, dtype={dt!r})")
        nm = r.choice(ints)
        c = r.choice(["100", "127", "200", "255", "-100", "3", "64", "-1", "2", "128", "-128", "1000"])
        t = r.choice(["int8", "uint8", "int16", "int8"])
        k = r.choice(["1", "4", "7", "8", "9", "63"])
        forms = [f"({nm} * {c})", f"({nm} + {nm})", f"-{nm}", f"({nm} - {c})", f"({nm} * np.{t}({c}))",
                 f"({nm}.astype('{t}') * {c})", f"(({nm} + 1) // 2)", f"({nm} << {k})", f"abs({nm})",
                 f"({nm} * {nm}).sum()", f"({nm} + {nm}).max()", f"xp.cumsum({nm} * {nm})", f"({nm} // 0)",
                 f"({nm} % 0)", f"xp.prod({nm} + {nm})", f"({nm} * 2).mean()", f"({nm} - {nm}[::-1]).min()",
                 f"xp.sum({nm} * 3, dtype='int8')", f"({nm} * {nm}).astype('float16')", f"({nm} ** 3)",
                 f"xp.negative({nm}) // 3", f"({nm} * {nm}).argmax()", f"({nm} >> {k})", f"~{nm}",
                 f"({nm} - {nm}.max())", f"xp.abs({nm}.astype('{t}'))", f"({nm}.astype('{t}') // -1)",
                 f"({nm} * {nm}).cumsum(dtype='{t}')", f"xp.add({nm}, {nm}, dtype='{t}')",
                 f"({nm}.astype('{t}') + {nm}.astype('{t}')).sum()", f"xp.square({nm}.astype('{t}'))",
                 f"({nm}.astype('{t}') * {nm}.astype('{t}')) // 3"]
        if r.random() < 0.25:
            op = r.choice(["*=", "+=", "-=", "<<=", "//="])
            return f"{nm} {op} {r.choice([c, nm, nm + '[::-1]' if self.ns[nm].ndim else nm])}"
        return f"{self.fresh('e')} = {r.choice(forms)}"

    PYS = ["300", "-1", "2**40", "1.5", "1j", "True", "-129", "255", "256", "1e300", "-0.0", "nan", "2",
           "-2**63", "2**63", "0.1"]
    NPS = ["np.float16(1.5)", "np.float32(1.5)", "np.int8(-3)", "np.uint8(200)", "np.int16(300)",
           "np.int64(-4)", "np.float64(2.5)", "np.complex64(1j)", "np.bool_(True)", "np.uint64(5)",
           "np.int32(-7)", "np.uint16(7)", "np.float16(70000)", "np.intp(3)"]
    ZDS = ["np.array(3, 'int8')", "np.array(2.5, 'float32')", "xp.asarray(np.array(3, 'int8'))",
           "xp.asarray(np.array(2.5, 'float16'))", "xp.asarray(7)", "xp.asarray(2.5)",
           "xp.asarray(np.array(200, 'uint8')) * 1", "np.array(True)", "xp.asarray(np.array(-1, 'int64'))"]

    def _nep_scalar(self):
        r = self.r
        c = r.random()
        names = self._nd(1)
        if c < 0.35:
            return r.choice(self.PYS)
        if c < 0.7:
            return r.choice(self.NPS)
        if c < 0.85 or not names:
            return r.choice(self.ZDS)
        nm = r.choice(names)
        return r.choice([f"{nm}[{'0, ' * (self.ns[nm].ndim - 1)}0]" if self.ns[nm].size else f"{nm}.sum()",
                         f"{nm}.sum()", f"{nm}.max()" if self.ns[nm].size else f"{nm}.sum()",
                         f"{nm}[{'0, ' * (self.ns[nm].ndim - 1)}-1] * 1" if self.ns[nm].size else f"{nm}.sum()"])

    def step_nep50(self):
        r = self.r
        names = self._nd(0)
        if not names:
            return None
        nm = r.choice(names)
        s, s2 = self._nep_scalar(), self._nep_scalar()
        op = r.choice(["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<", "==", ">=", "+", "*"])
        fn = r.choice(["maximum", "minimum", "add", "multiply", "subtract", "fmax", "true_divide",
                       "power", "copysign", "bitwise_and", "left_shift", "nextafter"])
        if s in ("2**64", "-2**63") and r.random() < 0.8:
            s = "2**40"
        forms = [f"({nm} {op} {s})", f"({s} {op} {nm})", f"xp.{fn}({nm}, {s})", f"xp.{fn}({s}, {nm})",
                 f"xp.where({nm} > 0, {nm}, {s})", f"xp.where({nm} > 0, {s}, {s2})", f"xp.clip({nm}, {s}, {s2})",
                 f"({s} {op} {s2} {op} {nm})", f"xp.{fn}({s}, {s2})", f"({nm} {op} {s}).dtype",
                 f"xp.asarray({s}) {op} {nm}" if s != "2**64" else f"({nm} {op} {s})", f"({nm} + {s}) * {s2}", f"xp.result_type({nm}, {s})",
                 f"xp.full_like({nm}, {s})", f"xp.full({self.ns[nm].shape!r}, {s}) {op} {nm}",
                 f"xp.arange(3, dtype={nm}.dtype) + {s}"]
        if r.random() < 0.2:
            op2 = r.choice(["+=", "-=", "*=", "/=", "//=", "|=", "**="])
            return f"{nm} {op2} {s}"
        if r.random() < 0.1:
            return f"{nm}[...] = {s}"
        return f"{self.fresh('e')} = {r.choice(forms)}"

    def step_cfgctx(self):
        r = self.r
        ctx = r.choice(["cfgc(mode='eager')", "cfgc(mode='lazy')", "cfgc(eager_max_size=0)",
                        "cfgc(mode='lazy', eager_max_size=0)", "cfgc(mode='eager', eager_max_size=0)"])
        kind = r.choice(["write", "expr", "pendself", "fancy", "selfov", "outov", "maskw", "view"])
        if kind == "expr":
            line, approx = self.step_expr()
        else:
            line, approx = getattr(self, "step_" + kind)(), False
        if line is None:
            return None
        if r.random() < 0.3:
            # a switch that stays (set_config), then the line
            return f"cfg({ctx[5:-1]}); {line}", approx
        return f"with {ctx}: {line}", approx

    def step_fbwrite(self):
        r = self.r
        names = self._nd(1, writable=True if r.random() < 0.95 else None)
        if not names:
            return None
        nm = r.choice(names)
        v = self.ns[nm]
        n0 = v.shape[0]
        vals = repr([self.rand_value("int64") for _ in range(r.randint(1, 3))])
        idx = repr(self._il(v.size)) if v.size else "[]"
        forms = [f"xp.put({nm}, {idx}, {vals})", f"np.put({nm}, {idx}, {vals})", f"{nm}.put({idx}, {vals})",
                 f"xp.putmask({nm}, {nm} > {self.scalar_small()}, {vals})",
                 f"xp.place({nm}, {nm} > {self.scalar_small()}, {vals})",
                 f"{nm}.sort(axis={r.randint(-v.ndim, v.ndim - 1)})", f"xp.clip({nm}, 0, 2, out={nm}[::-1])",
                 f"xp.round({nm}, 0, out={nm}[::-1])", f"xp.cumsum({nm}, axis=0, out={nm}[::-1])",
                 f"{nm}.clip(0, 1, out={nm})", f"xp.copyto({nm}[::-1], {nm})", f"xp.fill_diagonal({nm}, 5)",
                 f"xp.take({nm}, {idx}, axis=0, out={nm}[:{len(eval(idx))}])" if v.ndim == 1 else f"{nm}.fill(2)",
                 f"xp.sort({nm})", f"{self.fresh('e')} = xp.sort({nm}); {nm}[...] = 0",
                 f"{self.fresh('e')} = xp.argsort({nm}, axis=-1, kind='stable'); {nm} *= -1",
                 f"{nm}.flat[{idx}] = 3" if "flat" not in AVOID else f"{nm}.fill(3)"]
        if v.ndim == 2 and v.shape[0] == v.shape[1] and v.dtype.kind in "fc" and "imatmul" not in AVOID:
            forms += [f"{nm} @= {nm}", f"{nm} @= {nm}[::-1]", f"{nm} @= xp.eye({n0})"]
        return r.choice(forms)


    def u_rooted(self, nm):
        found = self._base_root(nm)
        return found is not None and found[1]

    FBVIEWS = ["{n}.view()", "xp.split({n}, 1)[0]", "xp.array_split({n}, 2)[0]",  
               "xp.asanyarray({n})", "xp.ascontiguousarray({n})", "xp.unstack({n}[None])[0]", "xp.require({n})", "xp.rollaxis({n}, -1)",
               "xp.rot90({n}, axes=(0, -1))", "xp.moveaxis({n}, 0, -1)", "xp.atleast_2d({n})", "xp.squeeze({n})",
               "xp.matrix_transpose({n})", "xp.permute_dims({n}, tuple(range({n}.ndim))[::-1])", "xp.flipud({n})",
               "xp.asarray({n}, dtype={n}.dtype)", "{n}.astype({n}.dtype, copy=False)", "xp.array({n}, copy=False)",
               "xp.expand_dims({n}, -1)", "xp.atleast_3d({n})", "{n}[...]", "xp.fliplr({n})", "{n}.mT",
               "xp.real({n})", "xp.diagonal({n}, axis1=0, axis2=-1)"]

    def step_fbview(self):
        r = self.r
        names = self._nd(1)
        if "fbview" in AVOID:
            names = [k for k in names if self.u_rooted(k)]
        if not names:
            return None
        nm = r.choice(names)
        w = self.fresh("v")
        fn = r.choice(self.FBVIEWS)
        line = f"{w} = {fn.format(n=nm)}"
        if r.random() < 0.7:
            line += "; " + r.choice([f"{w}[...] = {self.scalar_small()}", f"{w} += 1", f"{w}[:1] = -3",
                                     f"{w} *= {w}", f"xp.copyto({w}, {self.scalar_small()})"])
        return line


    # --- program
    def init(self):
        r = self.r
        nd = r.choice([1, 1, 2, 2, 2, 3])
        base = [r.choice([0, 1, 1, 2, 3, 3, 4, 5, 7]) if r.random() < 0.15 else r.randint(1, 5)
                for _ in range(nd)]
        if nd >= 2 and r.random() < 0.4:
            base[1] = base[0]
            if nd == 3 and r.random() < 0.5:
                base[2] = base[0]
        prologue, inits = [], []
        n = r.randint(1, 3)
        for i in range(n):
            c = r.random()
            if c < 0.5:
                shp = list(base)
            elif c < 0.7:
                shp = base[r.randint(0, len(base) - 1):]
            elif c < 0.85:
                shp = [x if r.random() < 0.6 else 1 for x in base]
            else:
                shp = [r.randint(0, 7) for _ in range(r.randint(1, 3))]
            shp = tuple(shp)
            dt = r.choice(DTYPES)
            size = int(np.prod(shp))
            vals = [self.rand_value(dt) for _ in range(size)]
            lit = f"np.array({vals!r}, dtype={dt!r}).reshape({shp!r})"
            lay = r.random()
            if lay < 0.12 and len(shp) >= 2:
                lit = f"np.asfortranarray({lit})"
            elif lay < 0.22 and len(shp) >= 1:
                lit = f"np.repeat({lit}, 2, axis=-1)[..., ::2]"
            elif lay < 0.28 and len(shp) >= 1:
                lit = f"np.ascontiguousarray({lit}[::-1])[::-1]"
            prologue.append(f"U{i} = {lit}")
            name = "abc"[i]
            c = r.random()
            if c < 0.65:
                inits.append(f"{name} = xp.asarray(U{i})")
            elif c < 0.8:
                inits.append(f"{name} = xp.array(U{i})")
            elif c < 0.9:
                inits.append(f"{name} = xp.asarray(U{i}) * 1")
            else:
                inits.append(f"{name} = xp.asarray(U{i})[::-1]")
        return prologue + inits

    def rand_value(self, dt):
        r = self.r
        if dt == "bool":
            return r.random() < 0.5
        if dt in ("int64", "int32", "int16"):
            return r.randint(-5, 6)
        if dt == "uint8":
            return r.choice([r.randint(0, 6), r.randint(250, 255)])
        if dt == "int8":
            return r.choice([r.randint(-5, 6), r.randint(120, 127), r.randint(-128, -120)])
        def f():
            c = r.random()
            if c < 0.04:
                return float("nan")
            if c < 0.06:
                return float("inf") * r.choice([1, -1])
            if c < 0.1:
                return -0.0
            return r.randint(-8, 8) / 2
        if dt in ("complex128", "complex64"):
            return complex(f(), f())
        return f()

    def generate(self):
        r = self.r
        self.lines = self.init()
        self.ns, _ = self.replay(self.lines)
        check_policy = r.choices(["every", "end", "random"], [0.6, 0.2, 0.2])[0]
        nsteps = r.randint(3, int(os.environ.get('FUZZ_MAXSTEPS', '16')))
        kinds = ["view", "expr", "write", "copy", "read", "scalar", "misc",
                 "fancy", "maskw", "concat", "selfov", "outov", "keepred", "pendself", "copytob",
                 "overflow", "nep50", "cfgctx", "fbwrite", "fbview"]
        weights = [3, 3, 4, 1, 1, 1, 1.5,
                   2, 1.5, 1, 1.5, 1.5, 1.5, 1.5, 1.2,
                   1.2, 1.5, 1, 1, 1]
        only = os.environ.get("FUZZ_KINDS")
        if only:
            weights = [w if k in only.split(",") else 0 for k, w in zip(kinds, weights)]
        for _ in range(nsteps):
            for attempt in range(12):
                kind = r.choices(kinds, weights)[0]
                approx = False
                try:
                    line = getattr(self, "step_" + kind)()
                    if isinstance(line, tuple):
                        line, approx = line
                except (IndexError, ValueError):
                    line = None
                if line is None:
                    continue
                ns, ok = self.replay(self.lines + [line])
                if not ok and r.random() > 0.12:
                    continue
                break
            else:
                continue
            self.lines.append(line)
            self.kinds_used.append((kind, ok))
            if any(t in line for t in ("**", "exp(", "power", "hypot", ".std(", ".var(", "xp.std", "xp.var",
                                       "sqrt", "mean", ".max()", ".min()")):
                approx = True    # transcendentals: NumPy's SIMD/scalar loops differ by an ulp (documented)
            if approx or any(a in line.replace("(", " ").replace(")", " ").replace(",", " ")
                             .replace("[", " ").replace("]", " ").replace(".", " ").split()
                             for a in self.approx):
                lhs = line.split("=")[0].strip()
                if lhs.isidentifier() and "=" in line and not line.split("=")[1].startswith("="):
                    self.approx.add(lhs)
                else:
                    # a write whose value is approximate: mark the target and everything
                    self.approx.update(k for k in user_names(ns))
            self.ns = ns
            if check_policy == "every" or (check_policy == "random" and r.random() < 0.3):
                self.lines.append(CHECK)
        if self.lines[-1] != CHECK:
            self.lines.append(CHECK)
        return dict(seed=self.seed, lines=self.lines, approx=sorted(self.approx))


def gen_program(seed):
    return Gen(seed).generate()


# ----------------------------------------------------------------------------- minimise
def defined_names(line):
    return None


def minimise(prog, config, sig, budget=400):
    """Greedy line removal (one line at a time, then chunks) keeping the same category."""
    lines = list(prog["lines"])
    approx = prog.get("approx", [])

    def fails(ls):
        if CHECK not in ls:
            return False
        p = dict(prog, lines=ls, approx=approx)
        d = diff(p, config)
        return d is not None and d["cat"] == sig["cat"] and (sig["name"] is None or d["name"] == sig["name"]
                                                             or sig["cat"] in ("exception", "crash", "hang"))

    n = 0
    changed = True
    while changed and n < budget:
        changed = False
        # chunks first
        for size in (8, 4, 2, 1):
            i = 0
            while i < len(lines) and n < budget:
                cand = lines[:i] + lines[i + size:]
                if cand and cand[-1] != CHECK:
                    cand = cand + [CHECK]
                if cand == lines:
                    i += 1
                    continue
                n += 1
                if fails(cand):
                    lines = cand
                    changed = True
                else:
                    i += 1
    # drop checks that are not the failing one
    return dict(prog, lines=lines, approx=approx)


def as_script(prog, config):
    cfgd = CONFIGS[config]
    out = ["import numpy as np, lazyarr as la",
           "nan, inf = float('nan'), float('inf')",
           f"la.set_config(mode={cfgd['mode']!r}, eager_max_size={cfgd['eager_max_size']})",
           "for xp in (np, la):",
           "    cfg = la.set_config if xp is la else (lambda **k: None)"]
    for ln in prog["lines"]:
        if ln == CHECK:
            out.append("    print(xp.__name__, {k: v for k, v in dict(locals()).items() "
                       "if k[0] in 'abcUvesrctw' and len(k) <= 3 and k not in ('xp', 'cfg')})")
        else:
            out.append("    " + ln)
    return "\n".join(out)


# ----------------------------------------------------------------------------- main
def run_range(start, count, out_path, configs):
    with open(out_path, "a") as f:
        for seed in range(start, start + count):
            prog = gen_program(seed)
            for config in configs:
                f.write(json.dumps({"start": seed, "config": config}) + "\n")
                f.flush()
                try:
                    d = diff(prog, config)
                except Exception:
                    d = dict(step=-1, line=None, cat="fuzzer-error", name=None,
                             detail=traceback.format_exc()[-800:])
                f.write(json.dumps({"seed": seed, "config": config, "result": d,
                                    "nlines": len(prog["lines"])}) + "\n")
                f.flush()


def main():
    cmd = sys.argv[1]
    if cmd == "run":
        start, count = int(sys.argv[2]), int(sys.argv[3])
        out = sys.argv[4] if len(sys.argv) > 4 else f"fuzz_{start}.jsonl"
        configs = sys.argv[5].split(",") if len(sys.argv) > 5 else ["lazy", "lazy0", "eager"]
        run_range(start, count, out, configs)
    elif cmd == "show":
        prog = gen_program(int(sys.argv[2]))
        print("\n".join(prog["lines"]))
        print("approx:", prog["approx"])
    elif cmd == "one":
        prog = gen_program(int(sys.argv[2]))
        configs = [sys.argv[3]] if len(sys.argv) > 3 else list(CONFIGS)
        print("\n".join(prog["lines"]))
        for c in configs:
            print(c, diff(prog, c))
    elif cmd == "file":
        lines = [l.rstrip("\n") for l in open(sys.argv[2]) if l.strip()]
        prog = dict(seed=-1, lines=lines, approx=[])
        for c in (sys.argv[3].split(",") if len(sys.argv) > 3 else list(CONFIGS)):
            print(c, diff(prog, c))
    elif cmd == "min":
        seed, config = int(sys.argv[2]), sys.argv[3]
        prog = gen_program(seed)
        d = diff(prog, config)
        print("original:", d)
        if d is None:
            return
        m = minimise(prog, config, d)
        print("\n".join(m["lines"]))
        print("minimised:", diff(m, config))
        print("---- script ----")
        print(as_script(m, config))


if __name__ == "__main__":
    main()
