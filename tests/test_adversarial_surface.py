"""Regressions from an adversarial round against NumPy 2 over the shape, indexing, joining,
creation and elementwise surface: each a case where lazyarr differed from NumPy (a wrong
alias, a keyword NumPy takes, NumPy's exception type)."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_same, pending



# np.asarray(x) of a pending x (or of a view of one) is x's memory: a later write into x or
# into the view shows in it, as in NumPy (it was a copy, or memory x got only later).
ASARRAY_WRITES = {
    "asarray x, write x": (lambda x, v: x, lambda x, v: x.__setitem__(5, 99.0)),
    "asarray x, write view": (lambda x, v: x, lambda x, v: v.__setitem__(0, 99.0)),
    "asarray view, write view": (lambda x, v: v, lambda x, v: v.__setitem__(0, 99.0)),
    "asarray view, write x": (lambda x, v: v, lambda x, v: x.__setitem__(5, 99.0)),
    "asarray view, write it": (lambda x, v: v, lambda x, v: None),
}


@pytest.mark.parametrize("case", ASARRAY_WRITES, ids=str)
def test_asarray_of_a_pending_array_aliases_it(case, mode):
    exported, write = ASARRAY_WRITES[case]
    a = np.arange(6.0)
    x = pending(a)
    v = x[::-1]
    n = np.asarray(exported(x, v))
    write(x, v)
    if case == "asarray view, write it":
        n[0] = 99.0
    want = a.copy()
    want[5] = 99.0
    assert_same(x, want)
    assert_same(v, want[::-1])
    assert_same(n, want if exported(x, v) is x else want[::-1])
