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
* float32 or float64 factors of the product's dtype, summed to it, on the CPU, in lazy mode,
  outside ``la.jit``'s traces (a trace records kernels; its replays run the fused kernel).

Values follow lazyarr's sums (docs/testing.rst, "Accumulation rule"): float32 factors are
multiplied and summed in float64 (their products are exact there) and the result rounded
once, as the VM's float32 sums are; float64 is BLAS's ``dgemm``, with the dot product's error
bound (``K eps`` times the sum of ``|x y|``: NumPy's own along a non-contiguous axis). Both are
NumPy's values to rounding. NumPy's warnings stay NumPy's: the product runs only where no
product and no partial sum can overflow (the largest magnitude among both factors' values,
squared, times K, says so; and they are finite, so there is no NaN and no invalid operation
either); otherwise the fused kernel runs, with its exact reports. The call shows in
``la.explain`` as a library step (``matmul``).
"""
from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np

from . import _node
from ._materialize import materialize
from ._node import Node
from ._plan import call_record
from .backends.reduction_rules import FLOAT_MAX

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


def _fits(both: np.ndarray, k: int, dtype: np.dtype) -> bool:
    """No product of two of the factors' values ``both`` (the two matrices' memory) and no
    partial sum of ``k`` products can overflow ``dtype``, and every value is finite (a NaN
    makes the bound NaN). One largest magnitude for both factors: a bound at least the true
    one (a refusal runs the kernel)."""
    big = max(float(both.max()), -float(both.min()))
    return big * big * k <= FLOAT_MAX.get(dtype, _F64_MAX)     # (Python floats: no warning)


class _Layout(NamedTuple):
    """How the factors of one shape of product become matrices, and the result comes back."""
    bsz: int
    m: int
    k: int
    n: int
    x_order: tuple[int, ...]        # x transposed to (batch, M, K, then its size-1 axes)
    x_shape: tuple[int, ...]        # ... and those dropped: its (batch..., M..., K...) copy
    y_order: tuple[int, ...]
    y_shape: tuple[int, ...]
    out_shape: tuple[int, ...]      # the product's (batch..., M..., N...) before the order
    out_order: tuple[int, ...]      # the result's kept axes in their own order


@functools.lru_cache(maxsize=1024)
def _layout(xs: tuple[int, ...], ys: tuple[int, ...], axes: tuple[int, ...]) -> _Layout | None:
    """The :class:`_Layout` of a product of shapes ``xs`` and ``ys`` (of one length) summed
    over ``axes``, or None where it is not a (stack of) matrix product(s)."""
    sides = _sides(xs, ys, axes)
    if sides is None:
        return None
    b_ax, m_ax, k_ax, n_ax = sides
    rest = [i for i in range(len(xs)) if i not in b_ax + m_ax + k_ax + n_ax]
    kept = b_ax + m_ax + n_ax
    return _Layout(math.prod(xs[i] for i in b_ax), math.prod(xs[i] for i in m_ax),
                   math.prod(xs[i] for i in k_ax), math.prod(ys[i] for i in n_ax),
                   tuple(b_ax + m_ax + k_ax + n_ax + rest), tuple(xs[i] for i in b_ax + m_ax + k_ax),
                   tuple(b_ax + k_ax + n_ax + m_ax + rest), tuple(ys[i] for i in b_ax + k_ax + n_ax),
                   tuple([xs[i] for i in b_ax + m_ax] + [ys[i] for i in n_ax]),
                   tuple(kept.index(i) for i in sorted(kept)))


def _rule(product: Node, axes: tuple[int, ...] | None, result_dtype: np.dtype) -> Any:
    """``(xs, ys, layout)`` of ``sum(product, axes)`` as a (stack of) matrix product(s): the
    factors' shapes at the product's length and the :class:`_Layout`, or None where the rule
    above does not apply (the factors' values are not looked at)."""
    if product.op != "multiply" or product.dtype not in _FLOATS or result_dtype != product.dtype \
            or axes is None or len(product.src) != 2:
        return None
    a, b = product.src
    if a.dtype != product.dtype or b.dtype != product.dtype or a.op == "scalar" or b.op == "scalar":
        return None
    nd = len(product.shape)
    xs = (1,) * (nd - len(a.shape)) + tuple(a.shape)
    ys = (1,) * (nd - len(b.shape)) + tuple(b.shape)
    lay = _layout(xs, ys, tuple(axes))
    if lay is None or min(lay.m, lay.n) < MIN_SIDE or lay.m * lay.n * lay.k < MIN_WORK \
            or lay.bsz == 0:          # (each product of a stack: NumPy makes a BLAS call each)
        return None
    return xs, ys, lay


def explain_note(reduction: Node) -> str | None:
    """``la.explain``'s note on a CPU ``sum`` node the rule takes (its plan shows the fused
    kernel, which runs where the factors' values refuse the product), else None."""
    if reduction.op != "sum" or len(reduction.src) != 1 \
            or _rule(reduction.src[0], reduction.arg[0], reduction.dtype) is None:
        return None
    return ("this sum of a broadcast product runs as one matrix product (numpy.matmul on "
            "float64 copies of the factors: lazyarr/_contract.py) where no factor is NaN or "
            "inf and no product or partial sum can overflow; otherwise as this kernel")


def sum_of_product(product: Node, axes: tuple[int, ...] | None, result_dtype: np.dtype,
                   shape: tuple[int, ...]) -> Node | None:
    """The computed sum of the pending ``product`` (a multiply node) over ``axes`` as one
    matrix product, of the reduction's ``shape`` (keepdims' ones included), or None where the
    rule above does not apply (nothing computed then, except pending factors, which the fused
    kernel would have read anyway)."""
    rule = _rule(product, axes, result_dtype)
    if rule is None:
        return None
    xs, ys, lay = rule
    a, b = product.src
    nd = len(product.shape)
    x, y = _factor(a), _factor(b)
    if x is None or y is None:
        return None
    x = x.reshape(xs) if x.ndim != nd else x      # (a view: only ones are added in front)
    y = y.reshape(ys) if y.ndim != nd else y
    # the factors as C-ordered stacks of (M, K) and (K, N) matrices, in float64 (one copy
    # each, into one buffer: the bound reads both at once)
    size_x = lay.bsz * lay.m * lay.k
    both = np.empty(size_x + lay.bsz * lay.k * lay.n, _F64)
    xm, ym = both[:size_x].reshape(lay.x_shape), both[size_x:].reshape(lay.y_shape)
    np.copyto(xm, x.transpose(lay.x_order).reshape(lay.x_shape))   # (x is 1 on N)
    np.copyto(ym, y.transpose(lay.y_order).reshape(lay.y_shape))   # (y is 1 on M)
    if not _fits(both, lay.k, product.dtype):
        return None
    prod = np.matmul(xm.reshape(lay.bsz, lay.m, lay.k), ym.reshape(lay.bsz, lay.k, lay.n))
    out = np.ascontiguousarray(prod.reshape(lay.out_shape).transpose(lay.out_order)).reshape(shape)
    if result_dtype != _F64:     # (the bound keeps every value within the dtype's range,
        out = out.astype(result_dtype)   # so the rounding cannot overflow: rounded_once's check)
    leaf = _node.leaf(out, "cpu")
    leaf.origin = call_record("matmul", both.nbytes, out.nbytes,
                              2 * lay.bsz * lay.m * lay.n * lay.k)
    return leaf
