"""A sum of a broadcast product as one matrix product: ``(a[:, :, None] * b[None]).sum(1)``.

NumPy scripts write contractions this way (NPBench's ``conv2d``: a window of the image times
the weights, summed over three axes, once per output pixel). The fused kernel computes every
product of the broadcast shape, M x N x K of them, at the VM's pace; BLAS does the same
multiply-adds as a matrix product, blocked for the cache and in SIMD, several times faster
once both kept sides are a few wide. So :func:`sum_of_product` turns the sum into
``(M, K) @ (K, N)`` where the shapes say it is one:

* every summed axis is one both factors have (K), every kept axis one of them only (M from
  the first, N from the second), both (a stack of products: ``np.matmul``'s batch) or
  neither (size 1); an axis only one factor sums does not apply;
* both kept sides at least ``MIN_SIDE`` wide and each product at least ``MIN_WORK``
  multiply-adds: below that the copies into the matrices (and, in a stack, NumPy's BLAS call
  per product) cost more than they save;
* float32 or float64 factors of the product's dtype, summed to it, on the CPU, in lazy mode.

Values follow lazyarr's sums (docs/testing.rst, "Accumulation rule"): float32 factors are
multiplied and summed in float64 (their products are exact there) and the result rounded
once, as the VM's float32 sums are; float64 is BLAS's ``dgemm``, with the dot product's error
bound (``K eps`` times the sum of ``|x y|``: NumPy's own along a non-contiguous axis). Both are
NumPy's values to rounding. NumPy's warnings stay NumPy's: the product runs only where no
product and no partial sum can overflow (the largest magnitudes of the factors say so, and
they are finite, so there is no NaN and no invalid operation either); otherwise the fused
kernel runs, with its exact reports. The call shows in ``la.explain`` as a library step
(``matmul``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _node
from ._materialize import materialize
from ._node import Node
from ._plan import call_order
from .backends.reduction_rules import FLOAT_MAX, rounded_once

MIN_SIDE = 4          # each kept side (M, N) at least this wide
MIN_WORK = 4096       # M * N * K multiply-adds at least (each product of a stack)

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_F64 = np.dtype(np.float64)
_F64_MAX = float(np.finfo(np.float64).max)


def _factor(node: Node) -> np.ndarray | None:
    """The memory of one factor (computing it first where it is pending)."""
    if node.data is None:
        if node.op == "scalar":
            return None
        materialize(node)
    data = node.data
    return data if type(data) is np.ndarray else None


def _sides(xs: tuple[int, ...], ys: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """(batch axes, M axes, K axes, N axes) of a product of shapes ``xs`` and ``ys`` summed
    over ``axes``, or None where it is not a (stack of) matrix product(s)."""
    bt, m, k, n = [], [], [], []
    for i, (a, b) in enumerate(zip(xs, ys)):
        if i in axes:
            if a == b and a != 1:
                k.append(i)
            elif a != 1 or b != 1:
                return None          # summed on one side only
        elif a != 1 and b == 1:
            m.append(i)
        elif a == 1 and b != 1:
            n.append(i)
        elif a != 1:
            bt.append(i)             # kept on both sides: a stack of products
    return bt, m, k, n


def _fits(xm: np.ndarray, ym: np.ndarray, k: int, dtype: np.dtype) -> bool:
    """No product of the factors ``xm`` and ``ym`` and no partial sum of ``k`` products can
    overflow ``dtype``, and every factor is finite (a NaN makes the bound NaN)."""
    bound = max(float(xm.max()), -float(xm.min())) * max(float(ym.max()), -float(ym.min()))
    return bound * k <= FLOAT_MAX.get(dtype, _F64_MAX)     # (Python floats: no warning)


def _rule(product: Node, axes: tuple[int, ...] | None, result_dtype: np.dtype) -> Any:
    """The shapes and sides of ``sum(product, axes)`` as a (stack of) matrix product(s):
    ``(xs, ys, (batch, M, K, N axes), (batch, m, k, n))``, or None where the rule above does
    not apply (the factors' values are not looked at)."""
    if product.op != "multiply" or product.dtype not in _FLOATS or result_dtype != product.dtype \
            or axes is None or len(product.src) != 2:
        return None
    a, b = product.src
    if a.dtype != product.dtype or b.dtype != product.dtype or a.op == "scalar" or b.op == "scalar":
        return None
    nd = len(product.shape)
    xs = (1,) * (nd - len(a.shape)) + tuple(a.shape)
    ys = (1,) * (nd - len(b.shape)) + tuple(b.shape)
    sides = _sides(xs, ys, axes)
    if sides is None:
        return None
    b_ax, m_ax, k_ax, n_ax = sides
    bsz = math.prod(xs[i] for i in b_ax)
    m = math.prod(xs[i] for i in m_ax)
    k = math.prod(xs[i] for i in k_ax)
    n = math.prod(ys[i] for i in n_ax)
    if min(m, n) < MIN_SIDE or m * n * k < MIN_WORK or bsz == 0:  # (each product of a
        return None                            # stack: NumPy runs one BLAS call per product)
    return xs, ys, sides, (bsz, m, k, n)


def explain_note(reduction: Node) -> str | None:
    """``la.explain``'s note on a CPU ``sum`` node the rule takes (its plan shows the fused
    kernel, which runs where the factors' values refuse the product), else None."""
    if reduction.op != "sum" or len(reduction.src) != 1 \
            or _rule(reduction.src[0], reduction.arg[0], reduction.dtype) is None:
        return None
    return ("this sum of a broadcast product runs as one matrix product (numpy.matmul on "
            "float64 copies of the factors: lazyarr/_contract.py) where no factor is NaN or "
            "inf and no product or partial sum can overflow; otherwise as this kernel")


def sum_of_product(product: Node, axes: tuple[int, ...] | None, keepdims: bool,
                   result_dtype: np.dtype, shape: tuple[int, ...]) -> Node | None:
    """The computed sum of the pending ``product`` (a multiply node) over ``axes`` as one
    matrix product, or None where the rule above does not apply (nothing computed then,
    except pending factors, which the fused kernel would have read anyway)."""
    rule = _rule(product, axes, result_dtype)
    if rule is None:
        return None
    xs, ys, (b_ax, m_ax, k_ax, n_ax), (bsz, m, k, n) = rule
    a, b = product.src
    nd = len(product.shape)
    x, y = _factor(a), _factor(b)
    if x is None or y is None:
        return None
    x = x.reshape(xs) if x.ndim != nd else x      # (a view: only ones are added in front)
    y = y.reshape(ys) if y.ndim != nd else y
    rest = [i for i in range(nd) if i not in b_ax + m_ax + k_ax + n_ax]
    # the factors as C-ordered stacks of (M, K) and (K, N) matrices, in float64 (one copy each)
    xm = np.empty([xs[i] for i in b_ax + m_ax + k_ax], _F64)
    np.copyto(xm, x.transpose(b_ax + m_ax + k_ax + n_ax + rest).reshape(xm.shape))  # (1 on N)
    ym = np.empty([ys[i] for i in b_ax + k_ax + n_ax], _F64)
    np.copyto(ym, y.transpose(b_ax + k_ax + n_ax + m_ax + rest).reshape(ym.shape))  # (1 on M)
    if not _fits(xm, ym, k, product.dtype):
        return None
    prod = np.matmul(xm.reshape(bsz, m, k), ym.reshape(bsz, k, n))
    kept = b_ax + m_ax + n_ax
    order = [kept.index(i) for i in sorted(kept)]
    out = prod.reshape([xs[i] for i in b_ax + m_ax] + [ys[i] for i in n_ax]).transpose(order)
    out = np.ascontiguousarray(out).reshape(shape)
    if result_dtype != _F64:
        out = rounded_once(out, result_dtype)
    leaf = _node.leaf(out, "cpu")
    leaf.origin = ("matmul", xm.nbytes + ym.nbytes, out.nbytes, 2 * bsz * m * n * k,
                   next(call_order))
    return leaf
