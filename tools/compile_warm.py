"""A new expression's compile in a warm process (issue 13 item 3), without a GPU: the kernels of
the codegen battery (tests/test_cuda_codegen.py ``BATTERY``), checked as the default error
state renders them, each compiled to PTX once (``compile.compile_ptx``: Numba's frontend and
NVVM, what a new expression pays before the driver loads it) after a warm-up of a few others,
in one process. Prints the median, mean and maximum process time per kernel.

    python tools/compile_warm.py [--count 30] [--unroll 8] [--tree DIR]

``--unroll`` renders every kernel with that unroll (the size decides it on a GPU: 8 for large
arrays); ``--tree`` measures another checkout (its own renderer and battery), for before/after.
Complex and npymath kernels are left out (their own, slower paths). Development tool; results
in docs/notes/gpu.rst, "Compile time"."""
from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time

os.environ["LAZYARR_CUDA_SIM"] = "1"     # the battery's captures see the backend selection


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=30)
    ap.add_argument("--unroll", type=int, default=0)
    ap.add_argument("--tree", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = ap.parse_args()
    sys.path[:0] = [args.tree, os.path.join(args.tree, "tests")]
    import test_cuda_codegen as T
    from lazyarr.backends.cuda import render as R
    from lazyarr.backends.cuda.compile import compile_ptx

    data = T.data()

    def rendered(name: str) -> object:
        low = T.capture(lambda: T.BATTERY[name](data))
        spec = R.analyze(low.program, low.inputs).spec
        if args.unroll:
            spec = dataclasses.replace(spec, unroll=args.unroll)
        return R.render(low.program, spec, checked=True)

    names = list(T.BATTERY)
    timed = [n for n in names[6:] if not n.startswith(("complex", "npymath"))][:args.count]
    for name in names[:6]:
        compile_ptx(rendered(name))
    took = {}
    for name in timed:
        r = rendered(name)
        t0 = time.process_time()
        compile_ptx(r)
        took[name] = time.process_time() - t0
    vals = list(took.values())
    print(f"{args.tree}: {len(vals)} kernels, median {statistics.median(vals):.3f} s, "
          f"mean {statistics.mean(vals):.3f}, max {max(vals):.3f} ({max(took, key=took.get)})")


if __name__ == "__main__":
    main()
