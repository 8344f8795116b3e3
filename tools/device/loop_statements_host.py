"""Host time per statement of NPBench's loop kernels on cuda (fdtd_2d, floyd_warshall,
conv2d_bias, vadv: 0.5-0.7x CuPy eager on the H100/H200, docs/notes/gpu.rst 2026-12-06f).
Their GPU work per statement is a few µs; what bounds them is lazyarr's Python per
statement (views, the expression, the reduction, the write barrier, the entry lookup, the
launch). Each statement below is the kernel's own (``import lazyarr as np``), run in a loop on
arrays of the kernel's preset L shapes, timed alone; medians of alternated rounds (the
statements interleaved round by round, so a slow spell of this shared machine falls on all).
Runs in the simulator (``LAZYARR_CUDA_SIM=1``: NumPy buffers, launches stubbed, the host path
only; NumPy stands in for CuPy) and on a GPU (CuPy, launches real and synchronized once per
round). In the simulator a write CuPy would do with its own copy kernel (``memory[key] =
value``: a value something else holds, a broadcast) is NumPy's copy on the host, which the
stubbed launches leave in: vadv's ``ccol[:, :, k] = gcv * BET_P`` (its value is ``cs``'s
interned node, held) is ~230 µs of the step's ~500 for that alone, not host time of lazyarr's.
Development tool; findings in docs/notes/gpu.rst.

    LAZYARR_CUDA_SIM=1 python tools/device/loop_statements_host.py [--reps 2000] [--rounds 7]
        [--only conv2d] [--profile tottime|cumulative]
    python tools/device/loop_statements_host.py --cupy [...]   # a GPU: CuPy eager beside
    LAZYARR_CUDA_SIM=1 python tools/device/loop_statements_host.py --new-shapes [--block 100]
        [--profile tottime] [--device cpu] [--cpu-time]

``--new-shapes``: covariance's and correlation's statements as a real script runs them, once
per ``i``: their slices have a new shape at every step (M=3200 columns as in preset L, N=64
rows: the product is not what is measured). Blocks of ``--block`` consecutive indices, each
run twice in a row: first with shapes never run before, then again with those shapes seen;
the medians over the blocks of each's µs per step (docs/notes/gpu.rst, 2026-12-07e). ``--device cpu`` (with
``LAZYARR_CUDA_SIM=1``, for NumPy buffers): the same on lazyarr's CPU backend.
"""
from __future__ import annotations

import argparse
import statistics
import os
import sys
import time

import numpy as np

# the statements below look up their compiled kernels' entries: the first call waits for them
os.environ.setdefault("LAZYARR_COMPILE", "wait")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lazyarr as la  # noqa: E402
from lazyarr._materialize import select  # noqa: E402

# (the simulator or the GPU, NumPy or CuPy buffers, and a synchronization: as host_steps.py)
from host_steps import SIM, alternated_medians, sync, xp  # noqa: E402


#: what ``mean_us`` reads (``--cpu-time``: ``time.process_time``)
clock = time.perf_counter


def mean_us(fn, reps: int) -> float:
    t0 = clock()
    for i in range(reps):
        fn(i)
    sync()
    return (clock() - t0) / reps * 1e6


def statements(rng, ns=la, loop_sizes=None) -> dict:
    """name -> a function of the loop index ``i`` running one statement (or one step, where
    the name says how many statements it is), as the kernel writes it, with ``ns`` as the
    kernel's ``np``: lazyarr, or CuPy itself (``--cupy``: CuPy eager, the peer).
    ``loop_sizes``: covariance's and correlation's (M, N) instead of the preset's."""
    f32, f64 = np.float32, np.float64
    wrap = la.asarray if ns is la else (lambda a: a)

    def arr(shape, dtype=f64):
        return wrap(xp.asarray(rng.random(shape).astype(dtype)))

    out = {}
    # conv2d_bias, preset L: N=8, H=W=128, C_in=3, C_out=8, K=10, float32
    N, H, C_in, C_out, K = 8, 128, 3, 8, 10
    inp, weights = arr((N, H, H, C_in), f32), arr((K, K, C_in, C_out), f32)
    output = wrap(xp.empty((N, H - K + 1, H - K + 1, C_out), f32))
    W_out = H - K + 1

    def conv2d(n):
        i, j = divmod(n % (W_out * W_out), W_out)
        output[:, i, j, :] = ns.sum(inp[:, i:i + K, j:j + K, :, ns.newaxis] *
                                    weights[ns.newaxis, :, :, :], axis=(1, 2, 3))
    out["conv2d: output[:, i, j, :] = sum(...)"] = conv2d

    # fdtd_2d, preset L: NX=800, NY=900, float64
    NX, NY, TMAX = 800, 900, 150
    ex, ey, hz, fict = arr((NX, NY)), arr((NX, NY)), arr((NX, NY)), arr((TMAX,))

    def fdtd_1(t):
        ey[0, :] = fict[t % TMAX]

    def fdtd_2(t):
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])

    def fdtd_3(t):
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])

    def fdtd_4(t):
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])

    def fdtd_step(t):
        fdtd_1(t)
        fdtd_2(t)
        fdtd_3(t)
        fdtd_4(t)
    out["fdtd_2d: ey[0, :] = _fict_[t]"] = fdtd_1
    out["fdtd_2d: ey[1:, :] -= 0.5 * (...)"] = fdtd_2
    out["fdtd_2d: ex[:, 1:] -= 0.5 * (...)"] = fdtd_3
    out["fdtd_2d: hz[:-1, :-1] -= 0.7 * (...)"] = fdtd_4
    out["fdtd_2d: a step (4 statements)"] = fdtd_step

    # floyd_warshall, preset L: N=850 (NPBench's int32 path lengths)
    P = 850
    path = wrap(xp.asarray(rng.integers(0, 100, (P, P), dtype=np.int32)))

    def floyd(k):
        k %= P
        path[:] = ns.minimum(path[:], ns.add.outer(path[:, k], path[k, :]))
    out["floyd_warshall: path[:] = minimum(...)"] = floyd

    # vadv, preset L: I=J=180, K=160, float64; the middle loop's step (11 statements), and
    # two of its statements alone
    I, J, KV = 180, 180, 160
    wcon, u_stage, u_pos, utens = (arr((I + 1, J, KV)), arr((I, J, KV)), arr((I, J, KV)),
                                   arr((I, J, KV)))
    utens_stage, dtr_stage = arr((I, J, KV)), arr((I, J))
    ccol, dcol = wrap(xp.zeros((I, J, KV))), wrap(xp.zeros((I, J, KV)))
    BET_M = BET_P = 0.5

    def vadv_gav(n):
        k = 1 + n % (KV - 2)
        return -0.25 * (wcon[1:, :, k] + wcon[:-1, :, k])

    def vadv_write(n):
        k = 1 + n % (KV - 2)
        dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] + utens_stage[:, :, k])

    def vadv_step(n):
        k = 1 + n % (KV - 2)
        gav = -0.25 * (wcon[1:, :, k] + wcon[:-1, :, k])
        gcv = 0.25 * (wcon[1:, :, k + 1] + wcon[:-1, :, k + 1])
        as_ = gav * BET_M
        cs = gcv * BET_M
        acol = gav * BET_P
        ccol[:, :, k] = gcv * BET_P
        bcol = dtr_stage - acol - ccol[:, :, k]
        correction_term = -as_ * (u_stage[:, :, k - 1] - u_stage[:, :, k]) - cs * (
            u_stage[:, :, k + 1] - u_stage[:, :, k])
        dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] +
                         utens_stage[:, :, k] + correction_term)
        divided = 1.0 / (bcol - ccol[:, :, k - 1] * acol)
        ccol[:, :, k] = ccol[:, :, k] * divided
        dcol[:, :, k] = (dcol[:, :, k] - (dcol[:, :, k - 1]) * acol) * divided
    # covariance, correlation (NPBench's library kernels with a loop): preset L is M=3200,
    # N=4000 float64; a tenth of that in the simulator, where the product runs in NumPy on
    # the host (its host path does not depend on the size)
    M, NC = loop_sizes or ((320, 400) if SIM else (3200, 4000))
    data, cov = arr((NC, M)), wrap(xp.zeros((M, M)))
    float_n = float(NC)

    def covariance(i):
        i %= M
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)

    def correlation(i):
        i %= M - 1
        cov[i + 1:M, i] = cov[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    out["covariance: cov[i:M, i] = cov[i, i:M] = ..."] = covariance
    out["correlation: corr[i+1:M, i] = ... = d @ d"] = correlation
    out["vadv: gav = -0.25 * (...) (built)"] = vadv_gav
    out["vadv: dcol[:, :, k] = (...)"] = vadv_write
    out["vadv: a middle step (11 statements)"] = vadv_step
    return out


def new_shape_medians(steps: dict, first: int, block: int) -> dict:
    """name -> (new, seen): medians over blocks of ``block`` consecutive indices of the µs per
    step, each block run first with shapes never run before (``first`` on, each statement its
    own share of the indices, so no two share a shape), then again. A block and its rerun
    are adjacent: a slow spell of this shared machine falls on both."""
    share = (NEW_SHAPES_M - first) // len(steps) // block * block
    times: dict = {name: ([], []) for name in steps}
    for b in range(0, share, block):
        for s, (name, fn) in enumerate(steps.items()):
            start = first + s * share + b
            new = mean_us(lambda i: fn(start + i), block)
            seen = mean_us(lambda i: fn(start + i), block)
            times[name][0].append(new)
            times[name][1].append(seen)
    return {k: (statistics.median(n), statistics.median(v)) for k, (n, v) in times.items()}


#: ``--new-shapes``: covariance's M (the preset L's) and N (few rows: in the simulator the
#: product runs in NumPy on the host, the same work for a new shape and a seen one)
NEW_SHAPES_M, NEW_SHAPES_N = 3200, 64


def warm(steps: dict) -> None:
    """Each step's first calls (its compiles waited for), then a synchronization."""
    for fn in steps.values():
        for i in range(3):
            fn(i)
    sync()


def profile(run, sort: str) -> None:
    """cProfile's view of ``run()``: its top 40 functions by ``sort``."""
    import cProfile
    import pstats
    prof = cProfile.Profile()
    prof.enable()
    run()
    prof.disable()
    pstats.Stats(prof).sort_stats(sort).print_stats(40)


def run_new_shapes(opts, rng, where: str) -> None:
    """``--new-shapes``: the loop statements whose slices change every step, new vs seen."""
    steps = {k: v for k, v in statements(rng, loop_sizes=(NEW_SHAPES_M, NEW_SHAPES_N)).items()
             if k.startswith(("covariance", "correlation")) and opts.only in k}
    warm(steps)
    if opts.profile:                    # the new-shape steps only
        def run():
            for s, fn in enumerate(steps.values()):
                for i in range(3 + s * 1000, 3 + s * 1000 + min(1000, opts.reps)):
                    fn(i)
        profile(run, opts.profile)
        return
    medians = new_shape_medians(steps, 3, opts.block)
    print(f"{'statement':44s} {'new µs':>8s} {'seen µs':>8s}  (per step, medians over blocks "
          f"of {opts.block}; {where})")
    for name, (new, seen) in medians.items():
        print(f"{name:44s} {new:8.1f} {seen:8.1f}")


def run_statements(opts, rng, where: str) -> None:
    """Each statement's µs per call, alone (``--cupy``: beside CuPy eager's), or its profile."""
    steps = {k: v for k, v in statements(rng).items() if opts.only in k}
    warm(steps)
    if opts.profile:
        def run():
            for fn in steps.values():
                for i in range(opts.reps):
                    fn(i)
        profile(run, opts.profile)
        return
    if not opts.cupy:
        medians = alternated_medians(steps, opts.rounds, lambda fn: mean_us(fn, opts.reps))
        print(f"{'statement':44s} {'µs':>8s}  (per call, medians of {opts.rounds} alternated "
              f"rounds of {opts.reps}; {where})")
        for name, us in medians.items():
            print(f"{name:44s} {us:8.2f}")
        return
    # CuPy eager beside lazyarr: the same statements on CuPy's own arrays, each pair
    # alternated, synchronized once per timed run of ``reps`` (their GPU work overlaps
    # the host's between statements, as in the kernels)
    peer = {k: v for k, v in statements(np.random.default_rng(0), xp).items() if opts.only in k}
    warm(peer)
    both = {**{("lazyarr", k): v for k, v in steps.items()},
            **{("cupy", k): v for k, v in peer.items()}}
    medians = alternated_medians(both, opts.rounds, lambda fn: mean_us(fn, opts.reps))
    peer_name = "NumPy (the simulator's CuPy)" if SIM else "CuPy eager"
    print(f"| statement | {peer_name} (µs) | lazyarr (µs) | peer / lazyarr |  (medians of "
          f"{opts.rounds} alternated rounds of {opts.reps} calls, {where})")
    print("|---|---|---|---|")
    for name in steps:
        c, z = medians[("cupy", name)], medians[("lazyarr", name)]
        print(f"| {name} | {c:.1f} | {z:.1f} | {c / z:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", default="", help="statements whose name contains this")
    ap.add_argument("--profile", choices=("tottime", "cumulative"),
                    help="instead of timing, profile the chosen statements (cProfile)")
    ap.add_argument("--cupy", action="store_true",
                    help="CuPy eager's time of each statement beside lazyarr's (the simulator: NumPy's)")
    ap.add_argument("--new-shapes", action="store_true",
                    help="covariance's and correlation's steps with shapes new vs seen")
    ap.add_argument("--block", type=int, default=100, help="--new-shapes: steps per block")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="--new-shapes: the device (cpu: NumPy arrays, lazyarr's CPU backend)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="this process's CPU time, not the wall clock's: steadier while other "
                         "processes load the machine (the simulator or the CPU; with "
                         "OPENBLAS_NUM_THREADS=1, or a BLAS thread's time counts too)")
    opts = ap.parse_args()
    if opts.cpu_time:
        global clock
        clock = time.process_time
    backend = select("cuda", "lazy")
    rng = np.random.default_rng(0)
    device = opts.device if opts.new_shapes else "cuda"
    with la.config(device=device, mode="lazy"):
        if SIM:     # the host path only (the simulator's launch runs each GPU thread in
            # Python: minutes for one of these statements at their sizes)
            backend.launch = lambda entry, args: None
        where = "cpu" if device == "cpu" else ("simulator, launches stubbed" if SIM else "GPU")
        (run_new_shapes if opts.new_shapes else run_statements)(opts, rng, where)


if __name__ == "__main__":
    main()
