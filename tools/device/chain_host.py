"""The host time of the cached 1,024-element reduction chain on cuda (issue 13 item 1: a call
at most 30 µs; ~50 µs on an H100), step by step: ``la.sum(sqrt(abs(x*y + 1.5)) * tanh(x) -
y)`` built, reduced (``_build.reduce`` -> ``materialize`` -> ``CudaBackend.run``: the entry
lookup, the output, the arguments, the launch) and read back (``float()``), each step timed
alone on the objects the call makes, medians of alternated rounds (``host_steps.py``'s way).

Runs on a GPU (CuPy) and in the simulator (``LAZYARR_CUDA_SIM=1``: NumPy buffers, launches
stubbed, the host path only). The simulated device overrides the launch of a checked kernel
(its flags are read at once) and the full reductions' scratch (new NumPy arrays per call):
``--real-flags`` (simulator only) runs the cuda backend's own ``launch_checked`` (``flags.take``,
the ring's shared slot) and ``_stream_buffers`` instead, with a stand-in ``cupy`` module whose
calls (the current stream, the device, ``zeros``) cost a Python call, where CuPy's cost more:
a lower bound of those steps; its step ``_launch + to_host(0-d)`` reads a 0-d result back as
on a GPU (``_devices.to_host``'s wait, flags and copies over the stand-in: copies are memmoves,
an event is done at once, so the Python of the read back, not its synchronizations). ``--tree PATH`` imports lazyarr from another checkout (an A/B of
two trees in turn, in separate processes). Development tool; findings in docs/notes/gpu.rst.

    python tools/device/chain_host.py [--tree PATH] [--reps 2000] [--rounds 7] [--real-flags]
        [--only SUBSTRING] [--profile]
    python tools/device/chain_host.py --ab TREE_A TREE_B [--processes 6] [other options]

``--ab`` runs the steps in separate processes of the two trees in turn (A B, B A, ...) and
prints each step's median over the processes of each tree, and B/A.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import re
import statistics
import subprocess
import sys
import time
import types

import numpy as np

SIM = os.environ.get("LAZYARR_CUDA_SIM") == "1"


def stand_in_cupy() -> None:
    """A ``cupy`` module with what ``flags`` and ``CudaBackend._stream_buffers`` call on a
    launch's path, over NumPy (simulator only)."""
    class Stream:
        ptr = 0

    class Memory:
        """CuPy's ``MemoryPointer``, as ``flags.read_back`` uses it: its address."""
        device_id = 0

        def __init__(self, array):
            self.ptr = array.ctypes.data

    def memcpy_async(dst, src, size, kind, stream_ptr):
        """(``runtime.memcpyAsync``: the copy a memmove now)"""
        ctypes.memmove(dst, src, size)

    class Array(np.ndarray):
        """(the pointer object made once per array, as CuPy's ``data`` is an attribute)"""
        def get(self, stream=None):
            return np.array(self)

        @property
        def _c_contiguous(self):
            return self.flags.c_contiguous

        @property
        def data(self):
            d = self.__dict__.get("_data")
            if d is None:
                d = self.__dict__["_data"] = Memory(self)
            return d

    class Event:
        """(``_devices.wait``'s: recorded, then done at the first query)"""
        done = True

        def __init__(self, **kwargs):
            pass

        def record(self, stream=None):
            pass

    stream = Stream()
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(get_current_stream=lambda: stream, Event=Event,
                                      runtime=types.SimpleNamespace(getDevice=lambda: 0,
                                                                    memcpyAsync=memcpy_async,
                                                                    memcpyDeviceToHost=2),
                                      alloc_pinned_memory=bytearray)
    cupy.zeros = lambda shape, dtype=float: np.zeros(shape, dtype).view(Array)
    cupy.empty = lambda shape, dtype=float: np.empty(shape, dtype).view(Array)
    sys.modules["cupy"] = cupy


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--real-flags", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--profile", action="store_true",
                    help="cProfile float(la.sum(chain)) too (with --only: the last step selected)")
    ap.add_argument("--ab", nargs=2, metavar=("TREE_A", "TREE_B"))
    ap.add_argument("--processes", type=int, default=6, help="with --ab: processes per tree")
    opts, rest = ap.parse_known_args()
    if opts.ab:
        ab(opts.ab, opts.processes, sys.argv[1:])
        return
    if rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    sys.path.insert(0, os.path.abspath(opts.tree))
    # the steps below look up the compiled kernel's entry: the first call waits for its compile
    os.environ.setdefault("LAZYARR_COMPILE", "wait")
    import lazyarr as la
    from lazyarr._materialize import select
    from lazyarr.backends.cuda import flags
    from lazyarr.backends.cuda.backend import CudaBackend
    # (after the tree's lazyarr: host_steps imports it) the array module and its synchronization
    from host_steps import sync, xp

    backend = select("cuda", "lazy")
    from lazyarr import _devices
    simulated = _devices.cuda_simulated
    if SIM:
        backend.launch = lambda entry, args: None       # the host path only
        if opts.real_flags:
            stand_in_cupy()
            backend.launch_checked = CudaBackend.launch_checked.__get__(backend)
            backend._stream_buffers = CudaBackend._stream_buffers.__get__(backend)
    rng = np.random.default_rng(0)
    with la.config(device="cuda", mode="lazy"):
        x = la.asarray(xp.asarray(rng.standard_normal(1024).astype(np.float32)))
        y = la.asarray(xp.asarray(rng.standard_normal(1024).astype(np.float32)))

        def chain():
            return la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y

        seen = []
        run = backend.run
        backend.run = lambda lowered: (seen.append(lowered), run(lowered))[1]
        la.sum(chain())
        float(la.sum(abs(x)))
        del backend.run
        lowered = seen[0]
        inputs, scalars = lowered.inputs, lowered.scalars
        key = (lowered.program, tuple([(a.shape, a.strides) for a in inputs]), flags.checking())
        entry = backend._entries[key]
        done = la.sum(chain())
        out = done._node.data
        steps = {
            "chain built (6 nodes)": chain,
            "la.sum(chain)": lambda: la.sum(chain()),
            "la.sum(chain), run stubbed": lambda: la.sum(chain()),
            "float(la.sum(chain))": lambda: float(la.sum(chain())),
            "float(la.sum(abs(x)))": lambda: float(la.sum(abs(x))),
            "BACKEND.run(lowered)": lambda: backend.run(lowered),
            "  flags.checking()": flags.checking,
            "  entry key": lambda: (lowered.program, tuple([(a.shape, a.strides) for a in inputs]), True),
            "  entry lookup": lambda: backend._entries.get(key),
            "  xp.empty((), float64)": lambda: xp.empty((), np.float64),
            "  arguments": lambda: backend.arguments(entry, inputs, scalars, out),
            "  _launch(arguments)": lambda: backend._launch(entry, backend.arguments(entry, inputs, scalars, out)),
            "float(computed 0-d)": lambda: float(done),
        }
        if opts.real_flags or not SIM:
            # a read back after each launch: the ring's read, and the next launch's new slot
            steps["  _launch + flags.settle()"] = lambda: (backend._launch(
                entry, backend.arguments(entry, inputs, scalars, out)), flags.settle())
            # the same with the result's read back, as float() makes it (_devices.to_host: on
            # a GPU, and here with the stand-in CuPy, the path the simulator's to_host skips)
            device_out = out if not SIM else np.zeros((), np.float32).view(type(sys.modules["cupy"].zeros(1)))
            steps["  _launch + to_host(0-d)"] = lambda: (backend._launch(
                entry, backend.arguments(entry, inputs, scalars, out)),
                _devices.to_host("cuda", device_out))
        steps = {k: v for k, v in steps.items() if opts.only in k}
        print(f"{'step':34s} {'µs':>7s}  (medians of {opts.rounds} alternated rounds of "
              f"{opts.reps}; {'simulator' if SIM else 'GPU'}"
              f"{', real flags path' if opts.real_flags else ''}; {os.path.abspath(opts.tree)})")

        def measure(name):
            fn = steps[name]
            if "run stubbed" in name:       # (the front end alone: reduce, materialize, lower)
                backend.run = lambda lowered: out
            if "to_host" in name and SIM:   # (the GPU's read back, over the stand-in CuPy)
                _devices.cuda_simulated = lambda: False
            try:
                t0 = time.perf_counter()
                for _ in range(opts.reps):
                    fn()
                sync()
                return (time.perf_counter() - t0) / opts.reps * 1e6
            finally:
                backend.__dict__.pop("run", None)
                _devices.cuda_simulated = simulated
        times: dict = {k: [] for k in steps}
        names = list(steps)
        for name in names:
            measure(name)
        for r in range(opts.rounds):
            for name in (names if r % 2 == 0 else names[::-1]):
                times[name].append(measure(name))
        for name, t in times.items():
            print(f"{name:34s} {statistics.median(t):7.2f}")
        if opts.profile:
            import cProfile
            import io
            import pstats
            fn = steps[names[-1]] if opts.only else (lambda: float(la.sum(chain())))
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(opts.reps):
                fn()
            pr.disable()
            s = io.StringIO()
            pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(30)
            print(s.getvalue())


def ab(trees: list[str], processes: int, argv: list[str]) -> None:
    """The steps in separate processes of the two trees in turn; per step the median over each
    tree's processes (the rounds' medians), and their ratio."""
    args = []
    skip = 0
    for a in argv:              # (this call's options but --ab and --processes, for each process)
        if skip:
            skip -= 1
        elif a == "--ab":
            skip = 2
        elif a == "--processes":
            skip = 1
        elif not a.startswith(("--ab=", "--processes=")):
            args.append(a)
    times: dict = {t: {} for t in trees}
    for i in range(processes):
        for tree in (trees if i % 2 == 0 else trees[::-1]):
            out = subprocess.run([sys.executable, __file__, "--tree", tree, *args],
                                 capture_output=True, text=True, check=True).stdout
            for line in out.splitlines()[1:]:
                m = re.match(r"(.*?)\s+([0-9.]+)$", line)
                if m:
                    times[tree].setdefault(m.group(1), []).append(float(m.group(2)))
    a, b = trees
    print(f"{'step':34s} {'A':>7s} {'B':>7s}   B/A  (µs, medians over {processes} processes of each "
          f"tree, in turn; A {a}, B {b})")
    for step in times[a]:
        ta, tb = statistics.median(times[a][step]), statistics.median(times[b][step])
        print(f"{step:34s} {ta:7.2f} {tb:7.2f}  {tb / ta:5.2f}")


if __name__ == "__main__":
    main()
