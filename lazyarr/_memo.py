"""A per-process memo of built things (compiled programs, loaded kernels) by key.

Threads that miss the same key together build it once: the first builds under that key's
lock, the others wait on the lock and then take its result.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class BuildOnce(Generic[V]):
    def __init__(self, max_size: int | None = None) -> None:
        self.values: dict[Hashable, V] = {}
        self.max_size = max_size            # when full, the memo starts over (rare: big programs)
        self.hits = 0
        self.misses = 0
        self._guard = threading.Lock()
        self._building: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, build: Callable[[], V]) -> V:
        value = self.values.get(key)
        if value is not None:
            self.hits += 1
            return value
        with self._guard:
            lock = self._building.setdefault(key, threading.Lock())
        with lock:
            value = self.values.get(key)
            if value is not None:
                self.hits += 1
                return value
            self.misses += 1
            value = build()
            with self._guard:
                if self.max_size is not None and len(self.values) >= self.max_size:
                    self.values.clear()
                self.values[key] = value
                self._building.pop(key, None)
        return value


def bounded_insert(table: dict, key: Hashable, value: object, limit: int) -> None:
    """``table[key] = value``, the oldest entry (a dict keeps insertion order) dropped first
    when ``table`` already holds ``limit``: a table keyed by shapes (kernel entries, dtype
    rules) otherwise grows by one entry per shape in a loop over ever-new shapes (variable
    batch lengths, shrinking slices: ~1.7 KB per shape on cuda, 2026-12-07)."""
    if len(table) >= limit:
        try:
            table.pop(next(iter(table)), None)
        except (StopIteration, RuntimeError):    # (another thread changed it meanwhile)
            pass
    table[key] = value
