"""Does CuPy's cuFFT load callback (JIT LTO, ``cupy.fft.config.set_cufft_callbacks(...,
cb_ver="jit")``) work on the GPU machine, and what does it cost? Issue 18 asks
``la.fft.rfft(la.sqrt(la.abs(x))*2-1)`` at 2^24 float32 within 1.3x of the rfft alone; lazyarr
computes the chain into the FFT's input first (a kernel writing 64 MB: 1.43-1.46x). A load
callback would apply the chain as cuFFT reads its input: no intermediate at all. This probe
times, with CUDA events (medians of 15 calls): the rfft of a computed ``f(x)`` (the target's
denominator), the rfft of ``x`` with ``f`` as a load callback (the callback context entered per
call, as a library call would, and once around all calls), the callback's first call (NVRTC,
link, plan), and whether its values equal the rfft of the computed ``f(x)``. CuPy only.
Development tool; findings in docs/notes/gpu.rst.

    python tools/device/cufft_callback_probe.py [--log2n 24 20]
"""
from __future__ import annotations

import argparse
import time

import cupy as cp
from cuda_events import events_ms  # (beside this script)

#: f(x) = sqrt(abs(x)) * 2 - 1 with NumPy's rounding: each op rounded once, no FMA contraction
F_BODY = "__fsub_rn(__fmul_rn(__fsqrt_rn(fabsf(x)), 2.0f), 1.0f)"

CALLBACK = r"""
#include <cufftXt.h>

__device__ cufftReal lazyarr_rfft_load(void *dataIn, unsigned long long offset,
                                       void *callerInfo, void *sharedPtr)
{
    float x = ((const float *)dataIn)[offset];
    return %s;
}
""" % F_BODY

F_KERNEL = cp.ElementwiseKernel("float32 x", "float32 y", f"y = {F_BODY}", "lazyarr_probe_f")


def timed(fn) -> float:
    """Median ms of 15 calls, each between two CUDA events (an idle GPU before each)."""
    return events_ms(fn, reps=15)


def with_callback():
    return cp.fft.config.set_cufft_callbacks(cb_load=CALLBACK, cb_load_name="lazyarr_rfft_load",
                                             cb_ver="jit")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, nargs="*", default=[24, 20])
    args = ap.parse_args()
    from cupy.cuda import cufft
    version = getattr(cufft, "getVersion", lambda: "?")()
    print(f"CuPy {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, "
          f"cuFFT {version}, {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    for k in args.log2n:
        n = 2 ** k
        x = cp.random.default_rng(0).standard_normal(n, dtype=cp.float32)
        fx = F_KERNEL(x)
        ref = cp.fft.rfft(fx)
        t0 = time.perf_counter()
        try:
            with with_callback():
                got = cp.fft.rfft(x)
            cp.cuda.runtime.deviceSynchronize()
        except Exception as exc:       # (the probe's answer: what failed, as it failed)
            print(f"2^{k}: the callback rfft failed: {type(exc).__name__}: {exc}")
            continue
        first = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        with with_callback():
            cp.fft.rfft(x)
        cp.cuda.runtime.deviceSynchronize()
        second = (time.perf_counter() - t0) * 1e3
        same = bool(cp.all(got == ref))
        rel = float(cp.max(cp.abs(got - ref)) / cp.max(cp.abs(ref)))
        print(f"2^{k}: first callback call {first:.1f} ms, second {second:.2f} ms; "
              f"equal to rfft(f(x)): {same} (max |diff| / max |ref| {rel:.2e})")

        def chain_then_rfft():
            return cp.fft.rfft(F_KERNEL(x))

        def callback_rfft():
            with with_callback():
                return cp.fft.rfft(x)
        alone = timed(lambda: cp.fft.rfft(fx))
        rows = {"rfft alone (f(x) computed)": alone,
                "f(x) kernel, then rfft (CuPy, 2 kernels)": timed(chain_then_rfft),
                "rfft with f as a load callback (context per call)": timed(callback_rfft)}
        with with_callback():
            rows["rfft with f as a load callback (context once)"] = timed(lambda: cp.fft.rfft(x))
        for name, ms in rows.items():
            print(f"  {name:52s} {ms:8.3f} ms  {ms / alone:5.2f}x the rfft alone")


if __name__ == "__main__":
    main()
