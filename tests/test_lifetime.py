"""What a LazyArray keeps alive: a computed result holds its buffer and nothing else (not
the expression, not the inputs); a pending one holds what it will read. Pickling sends the
values only. And the repeated-expression machinery (structure ids) stays right when
computed nodes drop their sources. Run in eager mode and on every lazy CPU backend."""
from __future__ import annotations

import gc
import pickle
import tracemalloc
import weakref

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _program

from helpers import assert_same


def _input(n=10_000, dtype=np.float64):
    data = np.random.default_rng(1).standard_normal(n).astype(dtype)
    return data, weakref.ref(data)


def test_computed_reduction_releases_its_inputs(mode):
    data, alive = _input()
    want = np.sum(data * 2 + 1)
    s = la.sum(la.asarray(data) * 2 + 1)
    del data
    gc.collect()
    assert alive() is None, "the computed sum keeps its input buffer alive"
    assert_same(s, want, exact=False)


def test_computed_array_releases_its_inputs(mode):
    data, alive = _input()
    want = np.sqrt(abs(data)) - data
    x = la.asarray(data)
    y = la.sqrt(abs(x)) - x
    inner = y._node                 # the expression node, as a parent expression would hold it
    y.compute()
    del data, x
    gc.collect()
    assert alive() is None
    assert inner.data is not None and inner.src == ()
    assert_same(y, want)


def test_kept_results_hold_a_few_bytes_each(mode):
    """Results kept in a list cost their own bytes, not their inputs' (1,000,000 float64)."""
    la.sum(la.asarray(np.ones(1000)) * 2 + 1)          # compile outside the measurement
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = []
        for i in range(5):
            x = np.full(1_000_000, float(i))
            kept.append(la.sum(la.asarray(x) * 2 + 1))
        del x
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 1 << 20, f"5 kept sums hold {held:,} bytes"
    assert [float(k) for k in kept] == [2e6 * i + 1e6 for i in range(5)]


def test_pending_array_holds_what_it_reads(mode):
    data, alive = _input()
    want = data * 2 + 1
    y = la.asarray(data) * 2 + 1
    del data
    gc.collect()
    # pending (lazy): it will read the buffer when materialized; eager: already computed
    assert (alive() is None) == (mode == "eager")
    assert_same(y, want)
    gc.collect()
    assert alive() is None          # computed (by the comparison above): released


def test_pickled_result_is_its_values_only(mode):
    data = np.random.default_rng(2).standard_normal(4_000_000).astype(np.float32)  # 16 MB
    s = la.sum(la.asarray(data) * 2 + 1)
    blob = pickle.dumps(s)
    assert len(blob) < 400, f"a computed float32 sum pickles to {len(blob):,} bytes"
    back = pickle.loads(blob)
    assert isinstance(back, la.LazyArray) and back.is_materialized
    assert_same(back, s.to_numpy())


def test_pickled_pending_array_is_computed_values(mode):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    y = la.asarray(a) * 3 - 1
    back = pickle.loads(pickle.dumps(y))
    assert back.is_materialized and back.device == "cpu"
    assert_same(back, a * 3 - 1)
    assert len(pickle.dumps(y)) < 48 + 400


def test_expression_over_a_computed_intermediate(mode):
    """A pending expression built before its intermediate was computed: right values, and
    the structure machinery (lower_cached) gives what lowering gives, again and again."""
    a = np.linspace(-2, 2, 50, dtype=np.float32)
    b = np.linspace(3, 5, 50, dtype=np.float32)
    x, w = la.asarray(a), la.asarray(b)
    for _ in range(3):
        y = x * 2
        z = (y + w) * y
        y.compute()                      # z's child is now a computed node without sources
        got = la.sum(z)
        assert got.item() == pytest.approx(float(np.sum((a * 2 + b) * (a * 2), dtype=np.float64)),
                                           rel=1e-6)
        low = _program.lower_cached((la.asarray(a) * 2 + w)._node)
        assert low.program == _program.lower((la.asarray(a) * 2 + w)._node).program
