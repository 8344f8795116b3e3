"""Whether CuPy's float32 kernels (compiled with ``-ftz=true``) give lazyarr's kernel values
wherever ``first_calls``' flush tests pass: every float32 bit pattern through each unary op
that float32 programs run op by op, and random and cancelling pairs through the binary ones.
Counts, per op, the elements whose bits differ (NaN against NaN aside) among those the tests
let through; the tests' own count beside it. Development tool; findings in docs/notes/gpu.rst
(2026-12-06d).

    python tools/device/ftz_probe.py [--log2chunk 28] [--pairs-log2 28]
"""
from __future__ import annotations

import argparse
import time

import cupy
import numpy as np

import lazyarr as la
from lazyarr.backends.cuda import first_calls
from lazyarr.backends.reference import _apply

F32 = np.dtype(np.float32)
UNARY = sorted(op for op in (first_calls.FLUSH_TESTS.keys() | first_calls.NO_FLUSH
                             | first_calls.FLOAT32_NOT_THE_KERNELS)
               if op in first_calls.SAME_ON_CUPY_FLOAT | first_calls.SAME_ON_CUPY
               and op not in ("add", "subtract", "multiply", "divide", "arctan2", "power", "where"))
BINARY = ("add", "subtract", "multiply", "divide", "arctan2", "power")


def kernel_value(op: str, *xs: cupy.ndarray) -> cupy.ndarray:
    """lazyarr's fused kernel of the one op (compile="wait")."""
    with la.config(device="cuda", mode="lazy", compile="wait"), np.errstate(all="ignore"):
        return cupy.asarray(getattr(la, op)(*(la.asarray(x) for x in xs)))


def _host(a: cupy.ndarray) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.asarray(a)    # (a NumPy shim: tried on a CPU)


def compare(op: str, xs: tuple[cupy.ndarray, ...]) -> tuple[int, int, int, list[str]]:
    """(differing elements the tests let through, elements the tests flag, subnormal-input
    elements, a few examples)."""
    want = kernel_value(op, *xs)
    got = _apply(cupy, op, None, list(xs), F32)
    flagged = cupy.zeros(want.shape, bool)
    for x in xs:
        m = x.view(cupy.uint32) & np.uint32(0x7FFFFFFF)
        flagged |= (m != 0) & (m < np.uint32(0x00800000))
    subnormal_in = int(flagged.sum())
    test = first_calls.FLUSH_TESTS.get(op)
    if test is not None:
        flagged |= test(cupy, got, *xs)
    differ = (want.view(cupy.uint32) != got.view(cupy.uint32)) & ~(cupy.isnan(want) & cupy.isnan(got))
    bad = differ & ~flagged
    n_bad = int(bad.sum())
    examples = []
    if n_bad:
        idx = _host(cupy.nonzero(bad)[0][:4])
        for i in idx:
            args = ", ".join(f"{float(_host(x[i]))!r}" for x in xs)
            examples.append(f"{op}({args}) kernel {float(_host(want[i]))!r} cupy {float(_host(got[i]))!r}")
    return n_bad, int(flagged.sum()) - subnormal_in, subnormal_in, examples


def cases() -> None:
    """A few flushes by hand, and where CuPy asks for them."""
    import inspect

    from cupy._core import _accelerator
    tiny = np.finfo(np.float32).tiny
    for name, fn, xs in [
            ("multiply", cupy.multiply, ([1e-20, 1e-20, 3e-20], [0.5, 1.0, 1e-20])),
            ("subtract", cupy.subtract, ([tiny * 1.5], [tiny * 1.25])),
            ("square", cupy.square, ([1e-20],)),
            ("divide", cupy.divide, ([1e-20], [1e20]))]:
        for size in (1, 64, 1 << 20):
            arrays = [cupy.asarray(np.resize(np.asarray(x, np.float32), size)) for x in xs]
            got = fn(*arrays)[:3].get()
            print(f"  {name}({', '.join(str(a[:3].get()) for a in arrays)}) size {size}: {got}")
    src = inspect.getsource(cupy.cuda.compiler)
    print("  cupy/cuda/compiler.py lines with ftz:", [ln.strip() for ln in src.splitlines() if "ftz" in ln])
    print("  accelerators (routine, reduction):", _accelerator.get_routine_accelerators(),
          _accelerator.get_reduction_accelerators())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2chunk", type=int, default=28)
    ap.add_argument("--pairs-log2", type=int, default=26)
    ap.add_argument("--cases-only", action="store_true")
    ap.add_argument("--span-log2", type=int, default=32, help="unary ops: the first 2^N patterns")
    args = ap.parse_args()
    np.seterr(all="ignore")     # (a NumPy shim: every bit pattern, signalling NaNs too)
    chunk = 1 << args.log2chunk
    print(f"CuPy {cupy.__version__}; {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    if args.cases_only:
        cases()
        return
    span = 1 << args.span_log2
    print(f"unary ops over the first 2^{args.span_log2} float32 bit patterns "
          f"(2^32: all of them) in {max(1, span // chunk)} chunks:")
    for op in UNARY:
        t0, bad, flagged, sub, examples = time.perf_counter(), 0, 0, 0, []
        for start in range(0, span, chunk):
            x = cupy.arange(start, min(start + chunk, span), dtype=cupy.uint64).astype(cupy.uint32).view(cupy.float32)
            b, f, s, e = compare(op, (x,))
            bad, flagged, sub, examples = bad + b, flagged + f, sub + s, examples + e
        print(f"  {op:9s} differing where the tests pass: {bad:>10,}   flagged by the op's test: "
              f"{flagged:>12,}   subnormal inputs: {sub:,}   ({time.perf_counter() - t0:.1f} s)")
        for line in examples[:4]:
            print(f"      {line}")
    cases()
    rng = cupy.random.default_rng(0)
    n = 1 << args.pairs_log2
    print(f"binary ops over 2^{args.pairs_log2} random bit pairs and 2^{args.pairs_log2} cancelling pairs:")
    for op in BINARY:
        bad, flagged, sub, examples = 0, 0, 0, []
        a = rng.integers(0, 1 << 32, n, dtype=cupy.uint64).astype(cupy.uint32).view(cupy.float32)
        b = rng.integers(0, 1 << 32, n, dtype=cupy.uint64).astype(cupy.uint32).view(cupy.float32)
        # b near -a (add), near a (subtract, divide): results down to a's last bits, subnormal
        # where a is near the smallest normal
        offset = rng.integers(-3, 4, n, dtype=cupy.int64).astype(cupy.int32)
        near = (a.view(cupy.int32) + offset).view(cupy.float32)
        cancel = -near if op == "add" else near
        small = (rng.integers(0x00800000, 0x0A000000, n, dtype=cupy.uint64).astype(cupy.uint32)
                 ^ (rng.integers(0, 2, n, dtype=cupy.uint64).astype(cupy.uint32) << 31)).view(cupy.float32)
        for xs in ((a, b), (a, cancel), (small, near), (small, b)):
            bb, f, s, e = compare(op, xs)
            bad, flagged, sub, examples = bad + bb, flagged + f, sub + s, examples + e
        print(f"  {op:9s} differing where the tests pass: {bad:>10,}   flagged by the op's test: "
              f"{flagged:>12,}   subnormal inputs: {sub:,}")
        for line in examples[:4]:
            print(f"      {line}")


if __name__ == "__main__":
    main()
