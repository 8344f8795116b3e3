"""Building arrays from others: ``outer`` (and ``ufunc.outer``), ``tri``/``tril``/``triu``,
``eye``, ``meshgrid``, ``atleast_1d/2d/3d``, ``diff``, ``round``/``around``. Each is NumPy's own definition written with
lazyarr's views (lazyarr/_views.py) and elementwise ops, so it stays lazy and fuses with what
reads it (``la.sum(la.triu(a * 2))`` is one kernel) and runs on either device; the values,
dtypes and shapes are NumPy's by construction (``tests/test_building.py``)."""
from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _fallback, _node
from .._array import LazyArray
from .._materialize import small_computed, small_now
from .._shapes import order_of
from ._creation import _made, asarray, zeros
from ._elementwise import FUNCTIONS as _ELEMENTWISE
from ._manipulation import broadcast_arrays, expand_dims, ravel

_where, _multiply, _greater_equal, _subtract, _not_equal, _rint = (
    _ELEMENTWISE[n] for n in ("where", "multiply", "greater_equal", "subtract", "not_equal", "rint"))


def _flat(x: LazyArray) -> LazyArray:
    return x if x.ndim == 1 else ravel(x)


def outer(a: Any, b: Any, out: Any = None) -> LazyArray:
    """The outer product ``a.ravel()[:, None] * b.ravel()[None, :]``, as ``numpy.outer``."""
    if out is not None:
        return _fallback.call("outer", np.outer, (a, b), {"out": out})  # type: ignore[no-any-return]
    if type(a) is LazyArray and type(b) is LazyArray:
        da, db = small_computed(a._node), small_computed(b._node)
        # (small computed operands and result, as the small multiply's: NumPy's own outer,
        # this same multiply, at once)
        if da is not None and db is not None and small_now(da.size * db.size):
            return LazyArray._from_node(_node.leaf(np.outer(da, db), "cpu"))
    return _multiply(expand_dims(_flat(asarray(a)), 1), expand_dims(_flat(asarray(b)), 0))


def ufunc_outer(fn: Callable[..., Any], a: Any, b: Any) -> LazyArray:
    """``ufunc.outer(a, b)`` of a native elementwise function ``fn``: ``fn`` of ``a`` with
    ``b.ndim`` new trailing axes and ``b`` (every pair of elements), as NumPy's."""
    a, b = asarray(a), asarray(b)
    return fn(a[(Ellipsis,) + (None,) * b.ndim], b)   # type: ignore[no-any-return]


def native_ufunc_outer(fn: Callable[..., Any], ufunc: np.ufunc) -> Callable[..., Any]:
    """``la.<op>.outer`` of a native binary elementwise function: :func:`ufunc_outer`, or
    NumPy's through the fallback when given keywords (``out=``, ``dtype=``...)."""
    fallback = _fallback.FallbackFunction(f"{ufunc.__name__}.outer", ufunc.outer)

    def outer(a: Any, b: Any, /, **kwargs: Any) -> Any:
        return fallback(a, b, **kwargs) if kwargs else ufunc_outer(fn, a, b)
    outer.__name__ = outer.__qualname__ = "outer"
    outer.__doc__ = f"``numpy.{ufunc.__name__}.outer``: natively, fused (with keywords: NumPy's)."
    return outer


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = float, *,
        device: str | None = None, like: Any = None) -> LazyArray:
    """Ones at and below the ``k``-th diagonal, as ``numpy.tri``: ``arange(N)[:, None] >=
    arange(-k, M - k)`` (lazy)."""
    if like is not None:
        raise TypeError("lazyarr.tri does not take like=")
    M = N if M is None else M
    if _plain_tri(N, M, k):
        rows = _made(device, "arange", N)
        cols = _made(device, "arange", -k, M - k)
    else:
        # NumPy's tri takes whatever its two aranges take, of its small int dtypes: a float
        # N, M or k (arange's values cast to the int dtype: ``tri(3, k=0.5)`` is all ones),
        # with arange's errors (an OverflowError for ``k=2**70`` or ``-2**63``). Its own
        # aranges then, on the host (N + M values).
        rows = asarray(np.arange(N, dtype=_min_int(0, N)), device=device)
        cols = asarray(np.arange(-k, M - k, dtype=_min_int(-k, M - k)), device=device)
    mask = _greater_equal(expand_dims(rows, 1), expand_dims(cols, 0))
    return mask if np.dtype(dtype) == np.bool_ else mask.astype(dtype)


def _plain_tri(N: Any, M: Any, k: Any) -> bool:
    """Whether ``tri``'s arguments are ints whose aranges hold in int64 (its own aranges then
    give NumPy's values)."""
    if not all(type(v) is int for v in (N, M, k)):
        return False
    return all(-2**63 <= v < 2**63 for v in (N, -k, M - k))


def _min_int(low: Any, high: Any) -> type:
    """NumPy's int dtype of tri's aranges (``numpy.lib._twodim_base_impl._min_int``)."""
    for t in (np.int8, np.int16, np.int32):
        info = np.iinfo(t)
        if high <= info.max and low >= info.min:
            return t
    return np.int64


def _tri_of(m: LazyArray, k: int) -> LazyArray:
    return tri(*m.shape[-2:], k=k, dtype=bool, device=m.device)


def tril(m: Any, k: int = 0) -> LazyArray:
    """Zeros above the ``k``-th diagonal of the last two axes, as ``numpy.tril``."""
    if type(m) is LazyArray and type(k) is int:
        data = small_computed(m._node)
        if data is not None:        # (NumPy's tril is this where, on the memory: at once)
            return LazyArray._from_node(_node.leaf(np.tril(data, k), "cpu"))
    m = asarray(m)
    return _where(_tri_of(m, k), m, zeros(1, m.dtype, device=m.device))  # type: ignore[no-any-return]


def triu(m: Any, k: int = 0) -> LazyArray:
    """Zeros below the ``k``-th diagonal of the last two axes, as ``numpy.triu``."""
    if type(m) is LazyArray and type(k) is int:
        data = small_computed(m._node)
        if data is not None:        # (NumPy's triu is this where, on the memory: at once)
            return LazyArray._from_node(_node.leaf(np.triu(data, k), "cpu"))
    m = asarray(m)
    return _where(_tri_of(m, k - 1), zeros(1, m.dtype, device=m.device), m)  # type: ignore[no-any-return]


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = float, order: str = "C", *,
        device: str | None = None, like: Any = None) -> LazyArray:
    """Ones on the ``k``-th diagonal, as ``numpy.eye`` (and the array API's
    ``eye(n_rows, n_cols, k=, dtype=, device=)``), made by the device's array library."""
    if like is not None:
        raise TypeError("lazyarr.eye does not take like=")
    order = order_of(order, "C")
    if order not in ("C", "F"):
        raise ValueError(f"order must be one of 'C' or 'F' (got {order!r})")
    return _made(device, "eye", N, M, k, dtype=np.float64 if dtype is None else dtype, order=order)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> tuple[LazyArray, ...]:
    """Coordinate grids from coordinate vectors, as ``numpy.meshgrid`` (a tuple): each vector
    as a view along its own axis, broadcast against the others unless ``sparse``; ``copy``
    gives each grid memory of its own, as NumPy's."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    axes = list(range(ndim))
    if indexing == "xy" and ndim > 1:
        axes[0], axes[1] = 1, 0
    output = [expand_dims(_flat(asarray(x)), tuple(d for d in range(ndim) if d != axis))
              if ndim > 1 else _flat(asarray(x)) for x, axis in zip(xi, axes)]
    if not sparse:
        output = list(broadcast_arrays(*output))
    if copy:
        output = [x.copy() for x in output]
    return tuple(output)


def _atleast(views: dict[int, Callable[[LazyArray], LazyArray]], arys: tuple[Any, ...]) -> Any:
    out = []
    for a in arys:
        x = asarray(a)
        out.append(views[x.ndim](x) if x.ndim in views else x)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys: Any) -> Any:
    """Each array with at least one axis (a view), as ``numpy.atleast_1d``."""
    return _atleast({0: lambda x: x[None]}, arys)


def atleast_2d(*arys: Any) -> Any:
    """Each array with at least two axes (a view), as ``numpy.atleast_2d``."""
    return _atleast({0: lambda x: x[None, None], 1: lambda x: x[None, :]}, arys)


def atleast_3d(*arys: Any) -> Any:
    """Each array with at least three axes (a view), as ``numpy.atleast_3d``: a vector of
    length N becomes (1, N, 1), a matrix (M, N) becomes (M, N, 1)."""
    return _atleast({0: lambda x: x[None, None, None], 1: lambda x: x[None, :, None],
                     2: lambda x: x[:, :, None]}, arys)


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = np._NoValue,
         append: Any = np._NoValue) -> Any:
    """The ``n``-th difference along ``axis``, ``a[1:] - a[:-1]`` (``!=`` for bool), as
    ``numpy.diff``: views of ``a``, so the differences fuse with ``a``'s expression and what
    reads them. ``prepend=``/``append=`` run NumPy's own (the fallback)."""
    if prepend is not np._NoValue or append is not np._NoValue:
        kwargs = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not np._NoValue}
        return _fallback.call("diff", np.diff, (a, n, axis), kwargs)
    n = operator.index(n)
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    x = asarray(a)
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = np.lib.array_utils.normalize_axis_index(axis, x.ndim)
    later = tuple(slice(1, None) if d == axis else slice(None) for d in range(x.ndim))
    earlier = tuple(slice(None, -1) if d == axis else slice(None) for d in range(x.ndim))
    op = _not_equal if x.dtype == np.bool_ else _subtract
    for _ in range(n):
        x = op(x[later], x[earlier])
    return x


def _power_of_ten(n: int) -> float:
    """NumPy's ``power_of_ten`` (numpy/_core/src/multiarray/calculation.c): 1e9 multiplied by
    10 ``n - 9`` times past 1e8. Not ``10.0 ** n``, which differs from it in the last bit from
    ``n = 23`` on (so did the rounded values) and raises past 308 where NumPy's is inf."""
    if n < 9:
        return 10.0 ** n        # (exact)
    scale = 1e9
    for _ in range(n - 9):
        scale *= 10.0
        if scale == math.inf:   # (it stays inf)
            break
    return scale


def round(a: Any, decimals: int = 0, out: Any = None) -> Any:  # noqa: A001 - NumPy's name
    """Round half to even to ``decimals`` places, as ``numpy.round``: for floats NumPy's own
    steps, ``rint(a * 10**decimals) / 10**decimals`` (``rint`` for 0 places; NumPy's power of
    ten, :func:`_power_of_ten`), fused; integers
    keep their values (a copy). Complex, bool, integers to negative places and ``out=`` run
    NumPy's own (the fallback)."""
    decimals = operator.index(decimals)
    if not -2**31 <= decimals < 2**31:      # (NumPy's C int)
        raise OverflowError("Python int too large to convert to C long" if abs(decimals) >= 2**63
                            else f"signed integer is {'greater' if decimals > 0 else 'less'} "
                            f"than {'maximum' if decimals > 0 else 'minimum'}")
    x = asarray(a)
    kind = x.dtype.kind
    if out is not None or kind in "cb" or kind in "iu" and decimals < 0:
        return _fallback.call("round", np.round, (a, decimals), {} if out is None else {"out": out})
    if kind in "iu":
        return x.copy()
    if decimals == 0:
        return _rint(x)
    scale = _power_of_ten(abs(decimals))
    return _rint(x * scale) / scale if decimals > 0 else _rint(x / scale) * scale


FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (outer, tri, tril, triu, eye, meshgrid, atleast_1d, atleast_2d,
                            atleast_3d, diff, round)
}
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {getattr(np, name): fn for name, fn in FUNCTIONS.items()}
NUMPY_FUNCTIONS[np.around] = round
