"""Regression tests: each one a bug found by fuzzing or by the trust tests (issue 6).

Every test names the bug it pins; shrunk fuzz failures are kept in the form hypothesis
reduced them to, so a reader sees the minimal expression.
"""
from __future__ import annotations

import numpy as np

import lazyarr as la


def test_reduction_rebuilt_after_buffer_write_reads_new_values():
    # Bug: nodes are interned by (op, children); a materialized node memoizes its value, so
    # ``x.sum()`` built again after the input buffer was written returned the old sum.
    a = np.ones(3)
    x = la.asarray(a)
    first = x.sum()
    a[:] = 2
    assert float(first) == 3.0
    assert float(x.sum()) == 6.0


def test_expression_rebuilt_after_buffer_write_reads_new_values():
    # Same bug for an elementwise node shared by two pending arrays: ``y`` computed, buffer
    # written, ``x + 1`` built again must read the buffer now; ``z`` (the memoized node) keeps
    # the value it had when ``y`` materialized it (documented: a materialized node memoizes).
    a = np.zeros(3)
    x = la.asarray(a)
    y, z = x + 1, x + 1
    y.compute()
    a[:] = 5
    np.testing.assert_array_equal(np.asarray(x + 1), [6, 6, 6])
    np.testing.assert_array_equal(np.asarray(z), [1, 1, 1])
