"""Compile every cuda kernel some tests render, without a GPU, and say how long each took.

    python tools/kernel_compile_times.py tests/test_element_indexing.py -k loop_carried_cuda

runs the tests (pytest arguments, ``-m gpu`` added) on the simulated device
(``LAZYARR_CUDA_SIM=1``), keeps each distinct kernel rendered, then compiles each to PTX for
sm_90 (``compile.compile_ptx``: Numba's frontend and NVVM, what a fresh GPU pays before the
driver loads it) and prints them slowest first with the test that rendered them. The kernels
of the GPU suite's slowest tests were found this way (docs/notes/gpu.rst, 2026-12-03g).
``--dump DIR`` (first) also writes each kernel's source to ``DIR/<key>.py``. Development tool."""
from __future__ import annotations

import os
import sys
import time

os.environ["LAZYARR_CUDA_SIM"] = "1"


def main(argv: list[str]) -> int:
    import pytest

    dump = None
    if argv[:1] == ["--dump"]:
        dump, argv = argv[1], argv[2:]
        os.makedirs(dump, exist_ok=True)

    from lazyarr.backends.cuda import compile as C
    from lazyarr.backends.cuda.simulate import SimulatedCudaBackend

    seen: dict[str, tuple[str, object]] = {}
    load = SimulatedCudaBackend.load

    def recording_load(self: SimulatedCudaBackend, rendered: object, cc: tuple[int, int]) -> object:
        test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" ", 1)[0]
        seen.setdefault(C.cache_key(rendered, (9, 0)), (test, rendered))
        return load(self, rendered, cc)

    SimulatedCudaBackend.load = recording_load  # type: ignore[method-assign]
    code = pytest.main(["-m", "gpu", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *argv])
    rows = []
    for key, (test, rendered) in seen.items():
        t0 = time.perf_counter()
        C.compile_ptx(rendered)
        rows.append((time.perf_counter() - t0, len(rendered.source), key[:12], test))
        if dump:
            with open(os.path.join(dump, f"{key[:12]}.py"), "w") as f:
                f.write(rendered.source)
    rows.sort(reverse=True)
    print(f"\n{len(rows)} distinct kernels, {sum(r[0] for r in rows):.1f} s to compile")
    print(f"{'compile_s':>9} {'source':>7}  {'key':12}  test")
    for seconds, size, key, test in rows[:40]:
        print(f"{seconds:9.2f} {size:7d}  {key:12}  {test}")
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
