"""Repeated expressions skip lowering: a structure id computed when each node is built
picks the program lowered for the first expression of that structure (see ``lazyarr._node``).
The reused program must be exactly what lowering would give, and every result NumPy's."""
from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _node, _program
from lazyarr._program import lower, lower_cached


def _sum_counting(fn):
    """``la.sum(fn())`` and how many lowerings (not reuses) its materialization took."""
    before = _program.stats["lowered"]
    return la.sum(fn()), _program.stats["lowered"] - before


def _close(s, want):
    """A float32 sum: lazyarr accumulates in float64, NumPy pairwise in float32."""
    return s.item() == pytest.approx(float(want), rel=1e-5)


def _same_as_lower(y):
    """lower_cached gives lower's program, inputs and scalars (same objects, same order)."""
    want, got = lower(y._node), lower_cached(y._node)
    assert got.program == want.program
    assert [id(a) for a in got.inputs] == [id(a) for a in want.inputs]
    assert [id(s) for s in got.scalars] == [id(s) for s in want.scalars]
    assert (got.shape, got.device) == (want.shape, want.device)


@pytest.fixture(autouse=True)
def empty_structure_memo(monkeypatch):
    """An empty structure memo (and structure table) for every test here, as they count
    reuses: each starts over when full (4,096 programs; 65,536 structures), so a test run after
    many others in one process could see one cleared between two calls (the full suite, -n 2,
    failed two of these tests, one at a time, in two runs)."""
    monkeypatch.setattr(_program, "_by_structure", {})
    monkeypatch.setattr(_node, "_structures", {})


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(100).astype(np.float32), rng.standard_normal(100).astype(np.float32)
    return a, b, la.asarray(a), la.asarray(b)


def test_repeated_expression_reuses_the_program(xy):
    # (an empty program table, empty_structure_memo: an earlier test may have lowered the chain)
    a, b, x, y = xy
    chain = lambda: la.sqrt(abs(x * y + 1.5)) * la.tanh(x) - y  # noqa: E731
    want = np.sum(np.sqrt(abs(a * b + np.float32(1.5))) * np.tanh(a) - b)
    first, n_first = _sum_counting(chain)
    assert n_first == 1 and _close(first, want)
    for _ in range(3):
        again, n = _sum_counting(chain)
        assert n == 0 and _close(again, want)


def test_same_leaf_twice_is_another_structure(xy):
    a, b, x, y = xy
    assert (x * x)._node.sid != (x * y)._node.sid
    assert (x * y + x)._node.sid != (x * y + y)._node.sid
    la.sum(x * y)
    s, n = _sum_counting(lambda: x * x)
    assert n == 1 and _close(s, np.sum(a * a))
    s, n = _sum_counting(lambda: x * y + x)
    assert n == 1 and _close(s, np.sum(a * b + a))
    s, n = _sum_counting(lambda: x * y + y)
    assert n == 1 and _close(s, np.sum(a * b + b))
    s, n = _sum_counting(lambda: y * x + y)        # the same structure as x * y + x
    assert n == 0 and _close(s, np.sum(b * a + b))


def test_new_constants_reuse_the_program(xy):
    a, _, x, _ = xy
    _sum_counting(lambda: x * 2.25 + 3.5)
    s, n = _sum_counting(lambda: x * 5.5 + 6.25)
    assert n == 0 and _close(s, np.sum(a * np.float32(5.5) + np.float32(6.25)))
    s, n = _sum_counting(lambda: x * 7.5 + 7.5)    # one scalar used twice: another program
    assert n == 1 and _close(s, np.sum(a * np.float32(7.5) + np.float32(7.5)))


@pytest.mark.parametrize("other", [np.ones(7, np.float32), np.ones((3, 4), np.float32),
                                   np.ones(5, np.float64), np.ones(5, np.int32),
                                   np.ones((4, 6), np.float32)[:, ::2]])
def test_inputs_of_other_shapes_and_dtypes(other):
    base = np.linspace(-1, 1, 5, dtype=np.float32)
    for data in (base, other, base[::-1], other):
        x = la.asarray(data)
        y = la.sqrt(abs(x * 3 - 1)) + x
        _same_as_lower(la.sqrt(abs(x * 3 - 1)) + x)
        np.testing.assert_array_equal(np.asarray(y), np.sqrt(abs(data * 3 - 1)) + data)
        assert la.sum(y).item() == pytest.approx(np.sum(np.sqrt(abs(data * 3 - 1)) + data), rel=1e-6)


def test_leaf_order_matches_lowering(xy):
    a, b, x, y = xy
    z = la.asarray(a[::-1].copy())
    for expr in (lambda: (x * y) + (y * z), lambda: (z * 2.0) * (x + 2.0) - z,
                 lambda: la.where(x > y, z, x) * 0.5, lambda: (x + y) * (x + y) + x,
                 lambda: ((y + x) - (z * 1.5)) / (x - 1.5)):
        _same_as_lower(expr())
        s, _ = _sum_counting(expr)
        s2, n = _sum_counting(expr)
        assert n == 0 and s.item() == s2.item()


def test_materialized_interior_node_is_not_read_from_a_stale_structure(xy):
    a, b, x, y = xy
    t = x * y
    u = t + 1.0
    assert _close(la.sum(u), np.sum(a * b + np.float32(1)))
    node_t = t._node
    t.compute()                                   # node_t now holds its buffer: an input
    assert node_t.data is not None
    _same_as_lower(u)
    s, n = _sum_counting(lambda: u)
    assert n == 1 and _close(s, np.sum(a * b + np.float32(1)))


def test_kept_results_do_not_defeat_the_reuse(xy):
    """Interning hands back the nodes of a kept result (built in an older epoch); they are
    re-checked, not lowered again."""
    a, b, x, y = xy
    kept = [_sum_counting(lambda: abs(x * y) - 0.5) for _ in range(4)]
    assert [n for _, n in kept][1:] == [0, 0, 0]
    assert all(_close(s, np.sum(abs(a * b) - np.float32(0.5))) for s, _ in kept)


def test_dags_with_many_leaves_are_lowered_every_time():
    """(It counted the lowerings of ``la.sum(y)``: the store rule lowers ``y`` first, and the
    sum was lowered again or not depending on which test had lowered a sum before.)"""
    arrays = [np.full(3, float(i)) for i in range(_node.MAX_LEAVES + 4)]
    leaves = [la.asarray(v) for v in arrays]

    def chain():
        y = leaves[0]
        for v in leaves[1:]:
            y = y + v
        return y
    assert chain()._node.sid is None
    for _ in range(2):
        before = _program.stats["lowered"]
        np.testing.assert_array_equal(np.asarray(chain()), sum(arrays))
        assert _program.stats["lowered"] - before == 1


def test_memoized_constants_keep_zero_signs_and_nan():
    a = np.array([1.0, -2.0, 0.5], np.float32)
    x = la.asarray(a)
    for c in (0.0, -0.0, 0, 0.0, -0.0, float("nan"), float("nan")):
        got, want = np.asarray(x * c), a * np.float32(c)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("mode", ["lazy", "eager"])
def test_memoized_rules_still_check_python_int_values(mode):
    """The rule for (int8 array, Python int) is memoized after the first op; each later op
    still checks the int's value, as NumPy does."""
    x = la.asarray(np.array([1, 2, 3], np.int8))
    with la.config(mode=mode):
        for _ in range(2):
            np.testing.assert_array_equal(np.asarray(x + 1), np.array([2, 3, 4], np.int8))
            with pytest.raises(OverflowError):
                x + 300
            with pytest.raises(ValueError, match="negative integer powers"):
                x ** -1
            np.testing.assert_array_equal(np.asarray(x < 300), [True] * 3)


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8, np.bool_], ids=str)
def test_unary_operators_take_the_memoized_rule_after_the_first(dtype, monkeypatch):
    """``-x``, ``+x``, ``abs(x)``, ``~x`` of a pending array build their node from the rule
    the first call memoized (compiled, lazyarr/_value_ops.pyx), as the binary operators do:
    the Python builder is not called again, and the values are NumPy's."""
    from lazyarr import _array_methods

    a = np.array([0, 1, 5, 2], dtype)
    x = la.asarray(a) + 0 if dtype is not np.bool_ else la.asarray(a) & True
    assert x._node.data is None
    ops = [(abs, abs)] + ([(lambda v: ~v, np.invert)] if dtype in (np.int16, np.uint8, np.bool_)
                          else []) + ([(lambda v: -v, np.negative), (lambda v: +v, np.positive)]
                                      if dtype is not np.bool_ else [])
    with la.config(mode="lazy"):
        for op, ref in ops:
            np.testing.assert_array_equal(np.asarray(op(x)), ref(a))
            calls = []
            real = _array_methods._elementwise           # the operators' Python builder
            monkeypatch.setattr(_array_methods, "_elementwise",
                                lambda *args: calls.append(1) or real(*args))
            y = op(x)
            monkeypatch.setattr(_array_methods, "_elementwise", real)
            assert calls == [] and y._node.data is None
            np.testing.assert_array_equal(np.asarray(y), ref(a))


def _entries_of(node):
    """The intern table's keys whose entry names ``node`` (an entry reads as a weak reference)."""
    return [k for k, r in list(_node._interned.items()) if r() is node]


def test_an_interned_nodes_entry_goes_with_it_and_a_newer_nodes_stays(xy):
    # (the entry's weak reference has no callback: Node.__dealloc__ removes it, 2026-12-07h)
    a, b, x, y = xy
    p = x * y
    first = p._node
    (key,) = _entries_of(first)
    assert (x * y)._node is first                       # interned: the same node again
    p.compute()                                         # materialized: not reused from now on
    q = x * y
    newer = q._node
    assert newer is not first and newer.data is None
    assert _entries_of(newer) == [key] and _entries_of(first) == []
    del p, first                                        # the old node's death keeps the new entry
    assert _node._interned[key]() is newer
    np.testing.assert_array_equal(np.asarray(q), a * b)
    del q, newer
    assert key not in _node._interned                   # the new node's death takes its entry


def test_intern_keys_tell_ops_dtypes_args_and_children_apart(xy):
    # (the keys are _node._Key, their hash computed once, 2026-12-07i: equal only for the same
    # op, dtype, arg and children, three children or more too)
    a, b, x, y = xy
    c = x > 0
    w = la.where(c, x, y)
    assert la.where(c, x, y)._node is w._node                # three children: interned
    assert la.where(c, y, x)._node is not w._node            # the children's order counts
    assert x.astype(np.float64)._node is not x.astype(np.float16)._node     # the dtype
    assert (x * y)._node is not (y * x)._node and (x * y)._node is not (x - y)._node
    (key,) = _entries_of(w._node)
    assert hash(key) == hash(key) and key == key and key != object()
    np.testing.assert_array_equal(np.asarray(w), np.where(a > 0, a, b))
    w = None
    assert key not in _node._interned                        # its death takes its entry


def test_a_program_hashes_by_its_compiled_slot_and_equal_programs_meet(xy):
    # (Program's hash is _node.Hashed's C slot, not a Python frame per cache lookup)
    a, b, x, y = xy
    first, second = lower((x * y + 1.5)._node).program, lower((y * x + 2.5)._node).program
    assert first is not second and first == second and hash(first) == hash(second)
    assert {first: 1}[second] == 1
    assert _program.Program.__hash__ is _node.Hashed.__hash__
    assert lower((x - y)._node).program != first


def test_a_node_the_cycle_collector_frees_leaves_no_entry(xy):
    # (the collector clears a node's fields before its __dealloc__, but not its intern key,
    # a pointer out of tp_clear: the node's death removes its entry, 2026-12-07i; the write
    # barrier's walk of the table, _node.held_pending, finds nothing to remove after it)
    import gc
    a, b, x, y = xy
    p = x * y + 2.5
    node = p._node
    (key,) = _entries_of(node)
    node.views = [node]                                 # a reference cycle through the node
    del p, node
    gc.collect()
    assert key not in _node._interned
    _node.held_pending(None, False)
    q = x * y + 2.5                                     # built again: a new node, right values
    np.testing.assert_allclose(np.asarray(q), a * b + np.float32(2.5), rtol=1e-6)


def test_an_expression_built_again_while_the_collector_frees_its_node(xy):
    # (a finalizer in the cycle runs before the collector clears anything: the lookup may find
    # the node, which the collector then keeps; the values are right either way, and the node's
    # later death removes its entry)
    import gc
    a, b, x, y = xy
    built = []

    class Rebuild:
        def __del__(self):
            built.append(x * y + 2.5)

    p = x * y + 2.5
    node = p._node
    (key,) = _entries_of(node)
    node.views = [node, Rebuild()]                      # a cycle with a finalizer in it
    del p, node
    gc.collect()
    (q,) = built
    np.testing.assert_allclose(np.asarray(q), a * b + np.float32(2.5), rtol=1e-6)
    del built[:], q
    gc.collect()
    assert key not in _node._interned


def test_an_expression_built_again_by_a_callback_of_its_dying_node(xy):
    # (a weak reference's callback runs while the node is freed, its reference count 0 and its
    # entry still filed: the lookup must not hand it out, which would free it twice)
    import weakref
    a, b, x, y = xy
    built = []
    p = x * y + 2.5
    node = p._node
    (key,) = _entries_of(node)
    ref = weakref.ref(node, lambda _: built.append(x * y + 2.5))
    del p, node
    (q,) = built
    assert ref() is None and q._node.data is None
    assert _entries_of(q._node) == [key]                # the new node's entry stayed
    np.testing.assert_allclose(np.asarray(q), a * b + np.float32(2.5), rtol=1e-6)
    del built[:], q
    assert key not in _node._interned
