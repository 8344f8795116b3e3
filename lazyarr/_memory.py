"""The result pool's limit (lazyarr/backends/_cpu_pool.h; docs/cpu-backend.rst, "The result
pool"): how much memory of dead CPU results lazyarr keeps for later results of their size.

Set at ``import lazyarr`` from ``LAZYARR_RESULT_POOL_BYTES`` (default: an eighth of the
machine's memory), before anything allocates through the pool: the fused kernels' results,
``la.empty``/``ones``/``full`` and the NumPy calls lazyarr makes for the user (random draws,
fallback functions). The functions are public as ``lazyarr.backends.cpu_fused``'s.
"""
from __future__ import annotations

import os

from .backends import _cpu_vm  # type: ignore[attr-defined]

#: results of at least this many bytes are kept (below, glibc's heap reuses memory itself)
MIN_BYTES: int = _cpu_vm.result_pool_info()["min_bytes"]


def _default_bytes() -> int:
    """``LAZYARR_RESULT_POOL_BYTES`` if set, else an eighth of the machine's memory."""
    env = os.environ.get("LAZYARR_RESULT_POOL_BYTES", "").strip()
    if env:
        try:
            n = int(env)
        except ValueError as exc:
            raise ValueError(f"LAZYARR_RESULT_POOL_BYTES={env!r} is not an integer") from exc
        if n < 0:
            raise ValueError(f"LAZYARR_RESULT_POOL_BYTES={env!r} must be at least 0")
        return n
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 8
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return 1 << 30


_cpu_vm.result_pool_limit(_default_bytes())


def set_result_pool_bytes(nbytes: int) -> int:
    """Keep at most ``nbytes`` of freed results' memory for later results (0: keep none;
    kept blocks over the new limit go back to the system at once); returns the previous
    limit."""
    if int(nbytes) < 0:
        raise ValueError(f"the result pool's size must be at least 0, got {nbytes}")
    return int(_cpu_vm.result_pool_limit(int(nbytes)))


def release_result_pool() -> int:
    """Give every freed result's memory the pool keeps back to the system; the bytes freed."""
    return int(_cpu_vm.result_pool_release())


def result_pool_info() -> dict[str, int]:
    """The result pool's blocks and bytes kept, its limit, the smallest block it keeps, and
    how many results of that size took a kept block (``hits``) or new memory (``misses``)."""
    return dict(_cpu_vm.result_pool_info())
