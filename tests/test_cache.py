"""The CUDA backend's disk cache of compiled kernels: its failure modes (issue 6).

``compile.load_kernel`` is exercised for real (rendering and Numba's PTX compiler run here,
without a GPU) with a stand-in for CuPy's module loader, so every path — memory hit, disk
hit, damaged file, unwritable or full directory, two processes at once — runs in CI.

What the issue asks and where it stands:

* truncated, corrupted, wrong-version and foreign files are detected and rebuilt with one
  warning naming the file: tested;
* a read-only or full cache directory works without caching: tested;
* two processes compiling the same key at once both succeed, writes are atomic: tested.
"""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
import types
import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr._memo import BuildOnce

pytest.importorskip("numba.cuda")
C = pytest.importorskip("lazyarr.backends.cuda.compile")
R = pytest.importorskip("lazyarr.backends.cuda.render")

CC = (9, 0)


# --------------------------------------------------------------------------- helpers
class FakeModule:
    """Stands in for ``cupy.cuda.function.Module``: ``load`` accepts PTX text or a cubin."""

    loads: list[bytes] = []

    def load(self, payload: bytes) -> None:
        FakeModule.loads.append(payload)
        if not payload.lstrip().startswith((b"//", b".version", b"\x7fELF")):
            raise RuntimeError("CUDA_ERROR_INVALID_IMAGE")   # what the driver says about junk

    def get_function(self, entry: str) -> tuple[str, str]:
        return ("function", entry)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache directory, an empty memory cache, fake CuPy, counted compiles."""
    return _setup(tmp_path, monkeypatch)


def _setup(tmp_path, monkeypatch):
    function = types.ModuleType("cupy.cuda.function")
    function.Module = FakeModule  # type: ignore[attr-defined]
    cuda = types.ModuleType("cupy.cuda")
    cuda.function = function  # type: ignore[attr-defined]
    cupy = types.ModuleType("cupy")
    cupy.cuda = cuda  # type: ignore[attr-defined]
    for name, mod in (("cupy", cupy), ("cupy.cuda", cuda), ("cupy.cuda.function", function)):
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setenv("LAZYARR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(C, "_kernels", BuildOnce())
    compiles: list[str] = []
    real = C.compile_ptx

    def counting(rendered, cc=CC, *args, **kw):
        compiles.append(rendered.source)
        return real(rendered, cc, *args, **kw)

    monkeypatch.setattr(C, "compile_ptx", counting)
    FakeModule.loads = []
    return types.SimpleNamespace(dir=tmp_path / "cache", compiles=compiles)


def _lowered_for(build):
    """The lowered program of ``build(x)`` for a float32 vector ``x`` on the cpu, captured
    at materialization instead of run (only rendering follows: no GPU, no CuPy)."""
    from lazyarr import _materialize

    captured = {}

    class Capture:
        name = "capture"

        def run(self, lowered):
            captured["lowered"] = lowered
            return np.zeros(lowered.shape, lowered.program.root.dtype)

    x = la.asarray(np.ones(100, np.float32), device="cpu")
    orig = _materialize.select
    _materialize.select = lambda device, mode: Capture()
    try:
        with la.config(mode="lazy", device="cpu", eager_max_size=0):   # a kernel, never at once
            build(x).compute()
    finally:
        _materialize.select = orig
    return captured["lowered"]


def _rendered(fn: str = "sqrt"):
    """A real rendered kernel (``fn(|x * 1.5|) + 1`` over a float32 vector)."""
    low = _lowered_for(lambda x: getattr(la, fn)(abs(x * 1.5)) + 1)
    geo = R.analyze(low.program, low.inputs)
    return R.render(low.program, geo.spec)


def _file(cache, rendered):
    return cache.dir / f"{C.cache_key(rendered, CC)}.bin"


def _drop_memory_cache():
    C._kernels.values.clear()


# --------------------------------------------------------------------------- the good path
def test_compile_once_then_memory_then_disk(cache):
    r = _rendered()
    fn = C.load_kernel(r, CC)
    assert fn[0] == "function" and len(cache.compiles) == 1
    path = _file(cache, r)
    assert path.exists() and C.read_cache(path.stem) is not None
    assert C.load_kernel(r, CC) is fn and len(cache.compiles) == 1         # memory hit
    _drop_memory_cache()
    assert C.load_kernel(r, CC) == fn and len(cache.compiles) == 1         # disk hit, no compile
    assert not list(cache.dir.glob("*.tmp"))


def test_a_read_marks_the_entry_used(cache):
    """Reading an entry sets its mtime to now: the time says when the kernel was last used
    (docs/gpu-backend.rst: prune by age; the GPU scripts carry only the kernels a run used)."""
    r = _rendered()
    C.load_kernel(r, CC)
    path = _file(cache, r)
    os.utime(path, (1_000_000, 1_000_000))
    assert C.read_cache(path.stem) is not None
    assert path.stat().st_mtime > 1_000_000 + 86400


def test_key_changes_with_the_kernel_and_the_device():
    a, b = _rendered("sqrt"), _rendered("exp")
    assert C.cache_key(a, CC) == C.cache_key(_rendered("sqrt"), CC)
    assert C.cache_key(a, CC) != C.cache_key(b, CC)
    assert C.cache_key(a, (9, 0)) != C.cache_key(a, (8, 0))


# --------------------------------------------------------------------------- damaged files
def _damage(path, how, other_key_file=None):
    raw = path.read_bytes()
    head, payload = raw.split(b"\n", 1)
    meta = json.loads(head)
    if how == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif how == "corrupted":
        path.write_bytes(head + b"\n" + payload[:-10] + b"0123456789")
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(os.urandom(4096))
    elif how == "wrong-version":      # an older layout: no checksum, a version field
        old = {"version": 0, "kind": meta["kind"], "entry": meta["entry"]}
        path.write_bytes(json.dumps(old).encode() + b"\n" + payload)
    elif how == "foreign":            # a valid entry of another kernel under this name
        path.write_bytes(other_key_file.read_bytes())
    elif how == "bad-image":          # checksum fine, but the driver rejects the payload
        junk = b"not a module"
        meta["sha256"] = __import__("hashlib").sha256(junk).hexdigest()
        path.write_bytes(json.dumps(meta).encode() + b"\n" + junk)
    else:
        raise AssertionError(how)


DAMAGE = ["truncated", "corrupted", "empty", "garbage", "wrong-version", "foreign", "bad-image"]


@pytest.mark.parametrize("how", DAMAGE)
def test_damaged_entry_is_detected_and_rebuilt(cache, how):
    r, other = _rendered("sqrt"), _rendered("exp")
    C.load_kernel(other, CC)
    C.load_kernel(r, CC)
    assert len(cache.compiles) == 2
    path = _file(cache, r)
    _damage(path, how, other_key_file=_file(cache, other))
    if how != "bad-image":                              # detected before it reaches the driver
        with pytest.warns(RuntimeWarning, match="damaged CUDA kernel cache entry"):
            assert C.read_cache(path.stem) is None
    _drop_memory_cache()
    with pytest.warns(RuntimeWarning, match="damaged CUDA kernel cache entry"):
        fn = C.load_kernel(r, CC)
    assert fn[0] == "function" and len(cache.compiles) == 3    # rebuilt
    assert C.read_cache(path.stem) is not None                 # and the entry repaired
    _drop_memory_cache()
    C.load_kernel(r, CC)
    assert len(cache.compiles) == 3                           # the repaired entry is used


@pytest.mark.parametrize("how", ["truncated", "foreign"])
def test_damaged_entry_warns_once(cache, how):
    r, other = _rendered("sqrt"), _rendered("exp")
    C.load_kernel(other, CC)
    C.load_kernel(r, CC)
    _damage(_file(cache, r), how, other_key_file=_file(cache, other))
    _drop_memory_cache()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        C.load_kernel(r, CC)
        _drop_memory_cache()
        C.load_kernel(r, CC)
    assert len(caught) == 1 and _file(cache, r).name in str(caught[0].message)


# --------------------------------------------------------------------------- unusable directories
def test_unwritable_cache_dir_works_without_caching(cache, monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("LAZYARR_CACHE_DIR", str(blocker / "cache"))    # cannot be created
    r = _rendered()
    assert C.load_kernel(r, CC)[0] == "function"
    _drop_memory_cache()
    assert C.load_kernel(r, CC)[0] == "function"
    assert len(cache.compiles) == 2                                    # no caching, no error


def test_read_only_cache_dir_is_read_but_not_written(cache, monkeypatch):
    """A read-only file system (EROFS; simulated, as root ignores directory permissions):
    existing entries are used, new kernels compile and run without being cached."""
    old = _rendered("sqrt")
    C.load_kernel(old, CC)                                     # cached while still writable

    def read_only(*args, **kw):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(C.tempfile, "mkstemp", read_only)
    _drop_memory_cache()
    assert C.load_kernel(old, CC)[0] == "function" and len(cache.compiles) == 1   # disk hit
    new = _rendered("exp")
    assert C.load_kernel(new, CC)[0] == "function" and len(cache.compiles) == 2
    assert not _file(cache, new).exists()


def test_full_disk_works_without_caching_and_leaves_no_temp_file(cache, monkeypatch):
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(C.os, "fdopen", lambda fd, mode="r", *a, **k: Full(real_fdopen(fd, mode, *a, **k)))
    r = _rendered()
    assert C.load_kernel(r, CC)[0] == "function"
    assert not _file(cache, r).exists()
    assert not list(cache.dir.iterdir())           # the temp file was removed


# --------------------------------------------------------------------------- two processes
_WRITER = textwrap.dedent("""
    import hashlib, os, sys, time
    sys.path.insert(0, {tests!r})
    import lazyarr.backends.cuda.compile as C
    key, payload = "k" * 64, hashlib.sha512(b"x").digest() * 40000       # 2.5 MB
    while not os.path.exists({go!r}):
        time.sleep(0.001)
    bad = 0
    for i in range(40):
        assert C.write_cache(key, "ptx", "entry", payload)
        hit = C.read_cache(key)
        bad += hit is None or hit[2] != payload
    print(bad)
""")


def test_two_processes_writing_one_key_never_expose_a_torn_file(tmp_path):
    go = tmp_path / "go"
    env = dict(os.environ, LAZYARR_CACHE_DIR=str(tmp_path / "cache"))
    code = _WRITER.format(tests=os.path.dirname(__file__), go=str(go))
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    go.write_text("go")
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
        assert out.strip() == "0"                     # every read saw a complete entry
    assert [f.name for f in (tmp_path / "cache").iterdir()] == ["k" * 64 + ".bin"]


_COMPILER = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {tests!r})
    import test_cache as T

    class MP:
        def setitem(self, d, k, v): d[k] = v
        def setenv(self, k, v): os.environ[k] = v
        def setattr(self, o, n, v): setattr(o, n, v)

    import pathlib
    ns = T._setup(pathlib.Path({tmp!r}), MP())
    r = T._rendered()
    while not os.path.exists({go!r}):
        time.sleep(0.001)
    fn = T.C.load_kernel(r, T.CC)
    print(fn[0], len(ns.compiles))
""")


def test_two_processes_compiling_the_same_kernel_both_succeed(tmp_path, monkeypatch):
    go = tmp_path / "go"
    code = _COMPILER.format(tests=os.path.dirname(__file__), go=str(go), tmp=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    go.write_text("go")
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
        assert out.split()[0] == "function"
    files = list((tmp_path / "cache").iterdir())
    assert len(files) == 1 and files[0].suffix == ".bin"        # one entry, no temp files
    monkeypatch.setenv("LAZYARR_CACHE_DIR", str(tmp_path / "cache"))
    assert C.read_cache(files[0].stem) is not None              # and it is complete


# --------------------------------------------------------------------------- trust (issue 11, finding 9)
# A cache entry is machine code run in this process: the folder is private, and a folder or
# entry another local user could have written is refused (one warning), never loaded.
@pytest.fixture
def trust(cache, monkeypatch):
    monkeypatch.setattr(C, "_refused", set(), raising=False)
    return cache


def _planted(trust, rendered):
    """A well-formed entry (right key, right checksum) with an attacker's payload."""
    key = C.cache_key(rendered, CC)
    payload = b"// planted kernel\n"
    assert C.write_cache(key, "ptx", "lazyarr_kernel", payload)
    return _file(trust, rendered), payload


def _loads_without_the_plant(trust, rendered, payload, match):
    with pytest.warns(RuntimeWarning, match=match) as record:
        assert C.load_kernel(rendered, CC)[0] == "function"
        _drop_memory_cache()
        assert C.load_kernel(rendered, CC)[0] == "function"
    assert len([w for w in record if "not using the CUDA kernel cache" in str(w.message)]) == 1
    assert payload not in FakeModule.loads
    assert len(trust.compiles) == 2


def test_cache_folder_and_entries_are_private(trust):
    r = _rendered()
    C.load_kernel(r, CC)
    assert os.stat(trust.dir).st_mode & 0o777 == 0o700
    assert os.stat(_file(trust, r)).st_mode & 0o077 == 0
    _drop_memory_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C.load_kernel(r, CC)                                  # trusted: a disk hit, no warning
    assert len(trust.compiles) == 1


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
def test_cache_folder_writable_by_others_is_refused(trust, mode):
    r = _rendered()
    path, payload = _planted(trust, r)
    os.chmod(trust.dir, mode)
    _loads_without_the_plant(trust, r, payload, "writable by group or others")
    assert path.read_bytes().endswith(payload)               # nothing written there either


def test_cache_folder_of_another_user_is_refused(trust, monkeypatch):
    r = _rendered()
    _, payload = _planted(trust, r)
    me = os.geteuid()
    monkeypatch.setattr(C.os, "geteuid", lambda: me + 1)
    _loads_without_the_plant(trust, r, payload, "owned by uid")


def test_cache_entry_writable_by_others_is_refused(trust):
    r = _rendered()
    path, payload = _planted(trust, r)
    os.chmod(path, 0o666)
    with pytest.warns(RuntimeWarning, match="writable by group or others"):
        assert C.load_kernel(r, CC)[0] == "function"
    assert payload not in FakeModule.loads and len(trust.compiles) == 1
    assert os.stat(path).st_mode & 0o077 == 0                # replaced by this user's own entry


def test_cache_entry_that_is_a_symlink_is_not_followed(trust, tmp_path):
    r = _rendered()
    outside, payload = _planted(trust, r)
    target = tmp_path / "elsewhere.bin"
    outside.rename(target)
    outside.symlink_to(target)
    assert C.load_kernel(r, CC)[0] == "function"
    assert payload not in FakeModule.loads and len(trust.compiles) == 1
