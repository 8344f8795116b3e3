"""Compile a rendered kernel: Numba -> PTX (-> cubin), with a disk cache; and the simulator path.

Numba is imported only on a cache miss: a process that finds its kernels in the disk cache
loads the cubin with CuPy and never imports Numba. The cache key is the SHA-256 of the kernel
source, its parameter types, the compute capability and the toolchain versions, so a change to
any of them is a different file. Files are written atomically (temporary file + ``os.replace``)
with a header holding the key and the payload's SHA-256; a corrupt, truncated or foreign file
is detected on load and rebuilt. A read-only or missing cache directory only costs speed.

The same rendered source also runs in Numba's CUDA simulator (:func:`simulator_kernel`, the
simulated cuda device): there, pointers are 1-D NumPy arrays, casts are ``ndarray.astype`` and
float functions are NumPy's, so CI can check the generated code against NumPy without a GPU.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import re
import stat
import tempfile
import time as _time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..._memo import BuildOnce
from .render import Rendered
from .templates import FLOAT_FUNCTIONS

CACHE_FORMAT = 1
_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(")
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")


# ----------------------------------------------------------------------------- namespaces
@functools.cache
def gpu_namespace() -> dict[str, Any]:
    """Globals for a kernel compiled by Numba for the GPU."""
    from llvmlite import ir
    from numba import cuda, types
    from numba.core.extending import intrinsic
    from numba.cuda import libdevice

    @intrinsic
    def _atomic_inc(typingctx: Any, ptr: Any) -> Any:
        # cuda.atomic.* wants an array; the counter is a plain pointer.
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            return builder.atomic_rmw("add", args[0], ir.Constant(ir.IntType(32), 1), "monotonic")
        return types.uint32(ptr), codegen

    @intrinsic
    def _atomic_or(typingctx: Any, ptr: Any, index: Any, bits: Any) -> Any:
        # OR ``bits`` (uint32) into ``ptr[index]``, giving the old word (fp_checks)
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            word = builder.gep(args[0], [args[1]])
            return builder.atomic_rmw("or", word, args[2], "monotonic")
        return types.uint32(ptr, index, bits), codegen

    @cuda.jit(device=True, inline="always")
    def _round16(x: Any) -> Any:
        return types.float32(types.float16(types.float32(x)))

    ns: dict[str, Any] = {"cuda": cuda, "math": math, "_atomic_inc": _atomic_inc,
                          "_atomic_or": _atomic_or, "_devfn": cuda.jit(device=True, forceinline=True)}
    for name in DTYPES:
        t = types.boolean if name == "bool" else getattr(types, name)
        ns[f"_C_{name}"] = t
        ns[f"_NT_{name}"] = t
    ns["_C_float16"] = _round16
    ns["_S_uint8"], ns["_S_float16"] = types.uint8, types.float16
    ns["_umulhi"] = libdevice.umulhi     # the high word of a 32x32-bit product (Philox)
    for fn in FLOAT_FUNCTIONS:
        base = _libdevice_name(fn)
        ns[f"F_{fn}_f8"] = getattr(libdevice, base)
        ns[f"F_{fn}_f4"] = getattr(libdevice, base + "f")
    return ns


def _libdevice_name(fn: str) -> str:
    """libdevice's name of a float function (its float32 one: + ``"f"``): C's names, so NumPy's
    ``arcsin`` is ``asin``."""
    return "a" + fn[len("arc"):] if fn.startswith("arc") else fn


def simulator_namespace() -> dict[str, Any]:
    """Globals for the same kernel run by Numba's CUDA simulator on NumPy arrays."""
    from numba import cuda

    def caster(dt: np.dtype) -> Any:
        return lambda x: np.asarray(x).astype(dt)[()]

    def atomic_inc(p: Any) -> Any:   # the simulator runs blocks one after another
        old = p[0]
        p[0] = old + 1
        return old

    def atomic_or(p: Any, i: Any, bits: Any) -> Any:
        old = p[i]
        p[i] = old | bits
        return old

    ns: dict[str, Any] = {"cuda": cuda, "math": math, "_devfn": lambda f: f,
                          "_atomic_inc": atomic_inc, "_atomic_or": atomic_or}
    for name in DTYPES:
        ns[f"_C_{name}"] = caster(np.dtype(name))
        ns[f"_NT_{name}"] = np.dtype(name)
    ns["_C_float16"] = lambda x: np.float32(np.asarray(x).astype(np.float16))
    ns["_S_uint8"], ns["_S_float16"] = np.uint8, np.float16
    ns["_umulhi"] = lambda a, b: np.uint32((int(a) * int(b)) >> 32)
    for fn in FLOAT_FUNCTIONS:
        if fn in _FROM_LIBM or fn in ("frexp", "ldexp"):
            continue
        f: Any = getattr(np, fn)
        ns[f"F_{fn}_f8"] = f
        ns[f"F_{fn}_f4"] = (lambda g: lambda *a: np.float32(g(*[np.float32(x) for x in a])))(f)
    for fn, nargs in _FROM_LIBM.items():
        ns[f"F_{fn}_f8"], ns[f"F_{fn}_f4"] = _libm(fn, nargs)
    # (mantissa, int32 exponent) and x * 2**n of the part's type, as libdevice's
    for suffix, t in (("f8", np.float64), ("f4", np.float32)):
        ns[f"F_frexp_{suffix}"] = (lambda t: lambda x: np.frexp(t(x)))(t)
        ns[f"F_ldexp_{suffix}"] = (lambda t: lambda x, n: np.ldexp(t(x), int(n)))(t)
    return ns


#: float functions the simulator takes from the C library (name -> number of arguments):
#: ``pow`` follows C99 Annex F as libdevice's does (NumPy's scalar ``power`` takes ``x**0.5``
#: as ``sqrt(x)``, so ``(-inf)**0.5`` is NaN there and +inf in C and on the GPU); ``fma``
#: (rounded once), which NumPy has no function for
_FROM_LIBM = {"pow": 2, "fma": 3}


def _libm(name: str, nargs: int) -> tuple[Any, Any]:
    """The C library's ``name`` and ``name + "f"`` as (float64, float32) functions."""
    import ctypes
    import ctypes.util
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    f8, f4 = getattr(libm, name), getattr(libm, name + "f")
    f8.restype, f8.argtypes = ctypes.c_double, (ctypes.c_double,) * nargs
    f4.restype, f4.argtypes = ctypes.c_float, (ctypes.c_float,) * nargs
    return (lambda *a: np.float64(f8(*(float(x) for x in a))),
            lambda *a: np.float32(f4(*(float(np.float32(x)) for x in a))))


def _python_function(rendered: Rendered, ns: dict[str, Any]) -> Any:
    glb = dict(ns)
    exec(compile(rendered.source, "<lazyarr-cuda-kernel>", "exec"), glb)  # noqa: S102
    return glb[rendered.name]


def simulator_kernel(rendered: Rendered) -> Any:
    """The kernel as a Numba CUDA simulator kernel. The simulator's ``jit`` is used directly,
    so ``NUMBA_ENABLE_CUDASIM`` need not be set and the GPU compiler stays usable in the same
    process: at launch the simulator swaps the kernel's ``cuda`` global for its fake module."""
    from numba.cuda.simulator.api import jit
    return jit(_python_function(rendered, simulator_namespace()))


# ----------------------------------------------------------------------------- PTX
def numba_signature(rendered: Rendered) -> tuple[Any, ...]:
    from numba import types

    def t(dt: np.dtype) -> Any:
        return types.boolean if dt == np.dtype(bool) else getattr(types, dt.name)
    return tuple(types.CPointer(t(p.dtype)) if p.is_pointer else t(p.dtype) for p in rendered.params)


def compile_ptx(rendered: Rendered, cc: tuple[int, int] = (9, 0),
                nvvm_options: dict[str, Any] | None = None) -> tuple[str, str]:
    """(PTX, entry name) for the rendered kernel; needs no GPU (NVVM from numba-cuda[cu13]).

    Compiled with FMA contraction off (NVVM ``-fma=0``): NumPy rounds ``x * y`` before adding,
    so must we to give NumPy's bits; memory-bound kernels lose nothing by it. That option is
    not exposed by ``compile_ptx``, so this uses numba-cuda's ``compile_cuda`` (pinned <0.31),
    falling back to ``compile_ptx`` (with contraction) if that internal API moves.
    """
    fn = _python_function(rendered, gpu_namespace())
    sig = numba_signature(rendered)
    with _helpers_target(cc):
        try:
            ptx = _compile_no_fma(fn, sig, cc, rendered.block, nvvm_options)
        except (ImportError, AttributeError, TypeError):
            from numba import cuda
            ptx, _ = cuda.compile_ptx(fn, sig, cc=cc)
    entries = _ENTRY.findall(ptx)
    if len(entries) != 1:
        raise RuntimeError(f"expected one .entry in the PTX, found {len(entries)}")
    return ptx, entries[0]


@contextlib.contextmanager
def _helpers_target(cc: tuple[int, int]) -> Iterator[None]:
    """Compile the kernel's helper device functions for ``cc`` too.

    numba-cuda compiles a called device function for the *current device's* compute capability
    (``dispatcher.get_current_device``, pinned <0.31), which needs a GPU: without one (CI,
    ``compile_ptx`` here) it raises. The helpers' IR is linked into the kernel and compiled by
    NVVM with the kernel's ``cc`` and options anyway, so the kernel's ``cc`` is the right one on
    any machine. Held under Numba's compiler lock, so no other compile sees the substitute.
    """
    from numba.core.compiler_lock import global_compiler_lock
    from numba.cuda import dispatcher

    class _Target:
        compute_capability = cc

    with global_compiler_lock:
        current = dispatcher.get_current_device
        dispatcher.get_current_device = lambda: _Target()
        try:
            yield
        finally:
            dispatcher.get_current_device = current


def _compile_no_fma(fn: Any, sig: tuple[Any, ...], cc: tuple[int, int], block: int,
                    extra: dict[str, Any] | None = None) -> str:
    from numba.cuda import compiler
    from numba.cuda.cudadrv import nvvm

    options: dict[str, Any] = {"fastmath": False, "opt": 3, "fma": False, **(extra or {})}
    # numba-cuda's internal compile API (pinned <0.31 in pyproject; test_cuda_codegen uses it)
    cres = compiler.compile_cuda(fn, None, sig, debug=False, lineinfo=False,  # type: ignore[attr-defined]
                                 fastmath=bool(options["fastmath"]), nvvm_options=options, cc=cc,
                                 abi="numba", abi_info={})
    lib = cres.library
    kernel = lib.get_function(cres.fndesc.llvm_func_name)
    lib._entry_name = cres.fndesc.llvm_func_name
    compiler.kernel_fixup(kernel, False)  # type: ignore[attr-defined]
    nvvm.set_launch_bounds(kernel, block)  # type: ignore[attr-defined]
    return str(lib.get_asm_str(cc=cc))


# ----------------------------------------------------------------------------- disk cache
@functools.cache
def toolchain() -> str:
    """Identifies the compiler stack, cheaply (a disk-cache hit must stay in milliseconds:
    ``importlib.metadata`` took tens of ms, importing Numba half a second): each package's
    location, the size of its ``__init__`` and the text of its version files (``_version.py``,
    numba-cuda's ``VERSION``). An upgrade changes the stamp; a reinstall of the same version
    does not. (Not the files' mtimes: a wheel installed afresh, as on every call to the GPU
    machine, has new ones, and every kernel of the carried cache missed: docs/notes/gpu.rst,
    2026-12-03g.)"""
    import importlib.util

    parts = []
    for pkg in ("numba_cuda", "numba", "llvmlite"):
        try:
            spec = importlib.util.find_spec(pkg)
            if spec is None or spec.origin is None:
                continue
            where = os.path.dirname(spec.origin)
            stamp = f"{pkg}@{where}:{os.stat(spec.origin).st_size}"
            for name in ("_version.py", "VERSION"):
                version = Path(where, name)
                if version.exists():
                    stamp += ":" + hashlib.sha256(version.read_bytes()).hexdigest()[:16]
            parts.append(stamp)
        except (ImportError, OSError, ValueError):
            continue
    return ";".join(parts)


def cache_dir() -> Path:
    env = os.environ.get("LAZYARR_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lazyarr" / "cuda"


# ----------------------------------------------------------------------------- trusting the cache
# A cache entry is machine code that runs in this process: only files that no other local user
# could have written are loaded. The folder is created private (0700); a folder or entry owned
# by another user, or writable by group or others, is refused (as ccache and pip refuse theirs)
# with one RuntimeWarning, and kernels are then compiled without the disk cache.
_refused: set[str] = set()   # folders and entries already warned about (one warning each)


def _untrusted(st: os.stat_result) -> str | None:
    """Why a file or folder with this stat could have been written by another user, or None."""
    if not hasattr(os, "geteuid"):      # pragma: no cover - Windows: per-user profile folders
        return None
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _refuse(path: Path, why: str) -> None:
    if str(path) not in _refused:
        _refused.add(str(path))
        warnings.warn(f"lazyarr: not using the CUDA kernel cache {path}: it is {why}; kernels "
                      "are compiled without the disk cache (fix: chmod go-w it, or point "
                      "LAZYARR_CACHE_DIR at a folder of your own)", RuntimeWarning, stacklevel=5)


def trusted_cache_dir(create: bool) -> Path | None:
    """The cache folder if it may be used (created 0700 when ``create``), else None: missing
    or unusable (silently), or untrusted (one warning)."""
    d = cache_dir()
    try:
        if create:
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(d)
    except OSError:
        return None
    why = _untrusted(st)
    if why is not None:
        _refuse(d, why)
        return None
    return d


def link_route(rendered: Rendered) -> str:
    """How PTX becomes SASS: ``"ptx"`` (cache the PTX; the driver compiles it at load, as
    ``ptxas -O3`` does) or ``"cubin"`` (nvJitLink links a cubin here, no GPU needed).

    Measured on the H200 (tools/device/gpu_probe.py, same PTX, kernel time): the two routes give
    different SASS. The chain kernel: 0.625 ms by the driver vs 0.804 ms by nvJitLink; column
    reductions: 0.310 vs 0.262 ms; rows 0.297 vs 0.289; full sums and maps equal. So row and
    column reductions take nvJitLink's cubin, the rest the driver's. ``LAZYARR_CUDA_LINK``
    (``ptx`` or ``cubin``) overrides this for every kernel.
    """
    return os.environ.get("LAZYARR_CUDA_LINK") or ("cubin" if rendered.kind in ("rows", "cols")
                                                   else "ptx")


def cache_key(rendered: Rendered, cc: tuple[int, int]) -> str:
    sig = ",".join(f"{p.kind}:{p.dtype.str}" for p in rendered.params)
    link = link_route(rendered)
    text = "\n".join([f"format={CACHE_FORMAT}", f"cc={cc}", f"link={link}", toolchain(), sig,
                      rendered.source])
    return hashlib.sha256(text.encode()).hexdigest()


def read_cache(key: str) -> tuple[str, str, bytes] | None:
    """(kind, entry, payload) from the cache file, or None if it is missing or unreadable
    (silently) or damaged: truncated, corrupt or another key's (one ``RuntimeWarning`` naming
    the file; the caller rebuilds the kernel and rewrites the entry)."""
    d = trusted_cache_dir(create=False)
    if d is None:
        return None
    path = d / f"{key}.bin"
    try:
        with open(path, "rb", opener=_open_no_follow) as f:
            why = _untrusted(os.fstat(f.fileno()))
            if why is not None:
                _refuse(path, why)
                return None
            raw = f.read()
            try:     # the entry's mtime says when a kernel was last used (what to keep)
                os.utime(f.fileno())
            except OSError:
                pass
    except OSError:
        return None
    try:
        head, payload = raw.split(b"\n", 1)
        meta = json.loads(head)
        if meta.get("key") != key:
            raise ValueError("written for another kernel")
        if meta.get("sha256") != hashlib.sha256(payload).hexdigest():
            raise ValueError("checksum mismatch: truncated or corrupted")
        return str(meta["kind"]), str(meta["entry"]), payload
    except Exception as exc:
        _warn_damaged(path, exc)
        return None


def _open_no_follow(path: str, flags: int) -> int:
    """Open without following a symbolic link (one in the cache could point anywhere)."""
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))


def _warn_damaged(path: Path, why: object) -> None:
    warnings.warn(f"lazyarr: damaged CUDA kernel cache entry {path} ({why}); rebuilding it",
                  RuntimeWarning, stacklevel=4)


def write_cache(key: str, kind: str, entry: str, payload: bytes) -> bool:
    meta = {"key": key, "kind": kind, "entry": entry, "sha256": hashlib.sha256(payload).hexdigest()}
    try:
        d = trusted_cache_dir(create=True)
        if d is None:
            return False
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{key[:16]}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(json.dumps(meta).encode() + b"\n" + payload)
            os.replace(tmp, d / f"{key}.bin")
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return True
    except Exception:
        return False     # read-only / missing cache dir: only speed is lost


def link_cubin(ptx: str, cc: tuple[int, int]) -> bytes | None:
    """PTX -> cubin (nvJitLink through cuda.core, no GPU needed; else the driver's linker
    through CuPy); None if neither route works (the PTX is then cached and JIT-compiled by
    the driver at load)."""
    try:
        try:
            from cuda.core import Linker, LinkerOptions, ObjectCode
        except ImportError:
            from cuda.core.experimental import Linker, LinkerOptions, ObjectCode
        linked = Linker(ObjectCode.from_ptx(ptx.encode()),
                        options=LinkerOptions(arch=f"sm_{cc[0]}{cc[1]}")).link("cubin")
        return bytes(linked.code)
    except Exception:
        pass
    try:
        from cupy.cuda import driver, function
        ls = function.LinkState()
        try:
            ls.add_ptr_data(ptx, "lazyarr.ptx")
        except TypeError:
            ls.add_ptr_data(ptx.encode(), "lazyarr.ptx", driver.CU_JIT_INPUT_PTX)
        return bytes(ls.complete())
    except Exception:
        return None


#: cache key -> the loaded CuPy Function; each kernel compiled (and written to disk) once
_kernels: BuildOnce[Any] = BuildOnce()
_modules: list[Any] = []
stats: dict[str, float] = {"compiled": 0, "disk_hits": 0, "compile_s": 0.0, "link_s": 0.0,
                           "load_s": 0.0}


def load_kernel(rendered: Rendered, cc: tuple[int, int]) -> Any:
    """A launchable CuPy ``Function`` for the rendered kernel (memory cache, disk cache, build).
    Threads that miss the memory cache together build it once (``_memo.BuildOnce``)."""
    key = cache_key(rendered, cc)
    return _kernels.get(key, lambda: _load_or_build(rendered, cc, key))


def load_cached(rendered: Rendered, cc: tuple[int, int]) -> Any:
    """:func:`load_kernel`'s kernel if it needs no build (in memory, or loaded from the disk
    cache now), else None."""
    key = cache_key(rendered, cc)
    fn = _kernels.values.get(key)
    if fn is None:
        fn = _load_from_disk(key)
        if fn is not None:
            fn = _kernels.get(key, lambda: fn)
    return fn


def _load_from_disk(key: str) -> Any:
    """The kernel of the disk cache's entry ``key``, or None (no entry, or a damaged one)."""
    from cupy.cuda import function

    hit = read_cache(key)
    if hit is None:
        return None
    kind, entry, payload = hit
    module = function.Module()
    try:
        module.load(payload)
    except Exception as exc:
        _warn_damaged(cache_dir() / f"{key}.bin", f"the driver rejected it: {exc}")
        return None
    stats["disk_hits"] += 1
    fn = module.get_function(entry)
    _modules.append(module)      # keep every loaded module alive with its functions
    return fn


def _load_or_build(rendered: Rendered, cc: tuple[int, int], key: str) -> Any:
    from cupy.cuda import function

    fn = _load_from_disk(key)
    if fn is None:
        t0 = _time.perf_counter()
        ptx, entry = compile_ptx(rendered, cc)
        t1 = _time.perf_counter()
        cubin = link_cubin(ptx, cc) if link_route(rendered) == "cubin" else None
        t2 = _time.perf_counter()
        kind, payload = ("cubin", cubin) if cubin is not None else ("ptx", ptx.encode())
        module = function.Module()
        try:
            module.load(payload)
        except Exception:       # a cubin this driver cannot load: let the driver JIT the PTX
            kind, payload = "ptx", ptx.encode()
            module = function.Module()
            module.load(payload)
        stats["compile_s"] += t1 - t0
        stats["link_s"] += t2 - t1
        stats["load_s"] += _time.perf_counter() - t2
        stats["format"] = kind  # type: ignore[assignment]
        write_cache(key, kind, entry, payload)
        stats["compiled"] += 1
        fn = module.get_function(entry)
        _modules.append(module)      # keep every loaded module alive with its functions
    return fn
