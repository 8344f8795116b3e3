"""Statistics over arrays (issue 18): ``cumulative_sum``/``cumulative_prod``, ``gradient``,
``cov``/``corrcoef``, ``median``/``percentile``/``quantile`` and ``convolve``/``correlate``,
NumPy 2's semantics (dtypes, shapes, errors, warnings) on both devices.

* ``cumulative_sum``/``cumulative_prod`` (the array API's, NumPy 2.1's) are lazyarr's
  ``cumsum``/``cumprod`` (a pending input scanned in the memory its kernel writes,
  lazyarr/_functions/_sorting.py); with ``include_initial`` a pending input is computed
  straight into the result past its first slot, which holds the identity, and scanned there
  (NumPy scans into one array and concatenates it to the identity, a second copy).
* ``gradient`` is written with views of ``f``: each output array is assembled in new memory
  from two fused kernels over views of ``f``, its interior's central differences and its
  two edges together (strided views reach both: ``f[1::n-2] - f[0:n-1:n-2]``), each written
  straight into its part (no temporary, ``f`` never copied; NumPy's bits: the same
  operations in the same dtypes). (One kernel per output would need a shifted read the
  engine has no op for: a view cannot reach ``f[i+1]`` at the last index.)
* ``cov``/``corrcoef``: the mean is one reduction kernel over the (pending) input, the
  centering ``X - mean`` one fused kernel writing the product's operand
  (which is lazyarr's :func:`matmul`: BLAS's gemm on the CPU, cuBLAS on cuda); the scaling by
  ``1 / fact`` (and corrcoef's division by the standard deviations and clip) is elementwise
  on the product, left pending, so it fuses into the consumer's kernel.
* ``median``/``percentile``/``quantile``: NumPy's (CuPy's) partition-based algorithm, which
  copies its input and partitions the copy; a pending ``a`` is computed by its fused kernel
  straight into that copy's memory, then the call runs with ``overwrite_input=True`` on it.
  Every ``method`` is the library's own code. On cuda CuPy's runs the five classic methods
  (linear, lower, higher, midpoint, nearest: CuPy 14 lacks three of NumPy's thirteen and
  has no ``weights`` nor N-d ``q``; its other five are not checked against NumPy's here),
  with NumPy's NaN propagation and dtype; everything else is NumPy's on the host memory,
  the result moved back.
* ``convolve``/``correlate``: NumPy's (CuPy's) call on the computed operands (pending ones
  computed once), NumPy's checks first; ``la.explain`` lists it with its bytes and FLOPs
  (2 per multiply-add of the pairs the mode's outputs sum: ``2*len(a)*len(v)`` for ``'full'``).
"""
from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .. import _devices, _fallback, _node, _operands
from .._array import LazyArray
from .._materialize import materialize, materialize_into, tape
from .._plan import call_record
from .._stack import user_stacklevel
from ._creation import asarray
from ._elementwise import FUNCTIONS as _EW
from ._linalg import _pending, matmul
from ._sorting import cumprod, cumsum

_sqrt, _clip = _EW["sqrt"], _EW["clip"]


# ----------------------------------------------------------------------------- helpers
def _lazy(x: Any, device: str | None = None) -> LazyArray:
    return x if isinstance(x, LazyArray) else asarray(x, device=device)


def _write(region: Any, value: LazyArray) -> None:
    """``region[...] = value`` (a view of new memory): a pending ``value`` computed by its
    kernel straight into it where the backend can, else computed and copied."""
    if not _pending(value) or not materialize_into(_operands.cast(value._node, region.dtype),
                                                   region):
        region[...] = value.astype(region.dtype).data


def _leaf(memory: Any, device: str) -> LazyArray:
    """New memory this module filled with fused kernels: a computed array (no library call)."""
    return LazyArray._from_node(_node.leaf(memory, device))


def _step(name: str, fn: Any, operands: tuple[LazyArray, ...], device: str,
          flops: int | None = None) -> LazyArray:
    """``fn(*buffers)``, new memory made by the library from the operands' computed buffers
    (pending ones computed once), as a computed array with the call's record for la.explain;
    a step of la.jit's tape while it traces (its replays call ``fn`` again)."""
    _fallback.policy(name)
    buffers = tuple(materialize(x._node) for x in operands)
    memory = fn(*buffers)
    out = _leaf(memory, device)
    out._node.origin = call_record(name, sum(int(b.nbytes) for b in buffers),
                                   int(memory.nbytes), flops)
    t = tape()
    if t is not None:
        t.call(fn, buffers, {}, out, functools.partial(_leaf, device=device), name)
    return out


# ----------------------------------------------------------------------------- cumulative
def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None, out: Any = None,
                   include_initial: bool = False) -> Any:
    """``numpy.cumulative_sum`` (the array API's): :func:`cumsum` along ``axis`` (required
    for more than one dimension), with ``include_initial`` a 0 first."""
    return _cumulative("cumulative_sum", np.cumulative_sum, cumsum, np.cumsum, x, axis, dtype,
                       out, include_initial)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    out: Any = None, include_initial: bool = False) -> Any:
    """``numpy.cumulative_prod`` (the array API's): :func:`cumprod` along ``axis``, with
    ``include_initial`` a 1 first."""
    return _cumulative("cumulative_prod", np.cumulative_prod, cumprod, np.cumprod, x, axis,
                       dtype, out, include_initial)


def _cumulative(name: str, numpy_func: Any, scan: Any, numpy_scan: Any, x: Any, axis: Any,
                dtype: Any, out: Any, include_initial: bool) -> Any:
    if out is not None:
        return _fallback.call(name, numpy_func, (x,),
                              {"axis": axis, "dtype": dtype, "out": out,
                               "include_initial": include_initial})
    a = _lazy(x)
    if a.ndim == 0:
        a = a.reshape((1,))
    if axis is None:
        if a.ndim >= 2:
            raise ValueError("For arrays which have more than one dimension "
                             "``axis`` argument is required.")
        axis = 0
    if type(axis) is tuple:     # NumPy's accumulate takes one axis in a tuple, not more
        if len(axis) != 1:
            raise ValueError("accumulate does not allow multiple axes")
        axis = axis[0]
    if isinstance(axis, (bool, np.bool_)):      # (an int to normalize_axis_index, not to NumPy's)
        raise TypeError("an integer is required")
    axis = normalize_axis_index(axis, a.ndim)
    if not include_initial:
        return scan(a, axis=axis, dtype=dtype)
    result = numpy_scan(np.empty(0, a.dtype), dtype=dtype).dtype   # (NumPy's, or its error)
    identity = 0 if name == "cumulative_sum" else 1
    shape = list(a.shape)
    shape[axis] += 1
    if a.device == "cuda" or tape() is not None or not _pending(a):
        fn = functools.partial(_with_initial, _devices.xp(a.device), a.device == "cuda",
                               numpy_scan.__name__, axis, result, identity)
        return _step(name, fn, (a,), a.device)
    memory = np.empty(tuple(shape), result)
    lead = (slice(None),) * axis
    memory[lead + (slice(0, 1),)] = identity
    part = memory[lead + (slice(1, None),)]
    _write(part, a)                     # the pending input's kernel, straight into its place
    _fallback.policy(name)
    numpy_scan(part, axis=axis, out=part)
    return _fallback.wrapped(memory, name, (memory,))


def _with_initial(xp: Any, cuda: bool, scan: str, axis: int, dtype: np.dtype, identity: int,
                  buffer: Any) -> Any:
    """The scan of ``buffer`` along ``axis`` after the identity: on the CPU NumPy's scan
    writes into its place in the result; on cuda CuPy's scan, joined to the identity."""
    shape = list(buffer.shape)
    shape[axis] = 1
    if not cuda:
        shape[axis] += buffer.shape[axis]
        memory = np.empty(tuple(shape), dtype)
        lead = (slice(None),) * axis
        memory[lead + (slice(0, 1),)] = identity
        getattr(np, scan)(buffer, axis=axis, dtype=dtype, out=memory[lead + (slice(1, None),)])
        return memory
    first = xp.full(tuple(shape), identity, dtype=dtype)
    return xp.concatenate((first, getattr(xp, scan)(buffer, axis=axis, dtype=dtype)), axis=axis)


# ----------------------------------------------------------------------------- gradient
def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """``numpy.gradient``: second-order central differences in the interior, first- or
    second-order one-sided ones at the edges, along each of ``axis`` (all by default);
    ``varargs`` the spacing (one scalar, or one scalar or coordinate array per axis). Each
    output is new memory written by two fused kernels over views of ``f`` (the interior,
    and the two edges together). Integers give float64, as NumPy's (bool NumPy's
    TypeError). A tuple for several axes (NumPy 2's), an array for one."""
    f = _lazy(f)
    if tape() is not None:      # (la.jit traces: NumPy's (CuPy's) call, a step of its tape)
        return _fallback.call("gradient", np.gradient, (f, *varargs),
                              {"axis": axis, "edge_order": edge_order})
    n_dim = f.ndim
    axes = tuple(range(n_dim)) if axis is None else normalize_axis_tuple(axis, n_dim)
    spacing = _spacings(f, axes, varargs)
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    otype = f.dtype
    if otype.kind not in "fc":
        if otype.kind in "iu":
            f = f.astype(np.float64)
        otype = np.dtype(np.float64)
    outs = []
    for ax, dx in zip(axes, spacing):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        outs.append(_gradient_along(f, ax, dx, edge_order, otype))
    return outs[0] if len(axes) == 1 else tuple(outs)


def _spacings(f: LazyArray, axes: tuple[int, ...], varargs: tuple[Any, ...]) -> list[Any]:
    """NumPy's spacing per axis: a scalar, or the differences of a coordinate array (a
    NumPy array on the host; a scalar where they are all equal)."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(_host(varargs[0])) == 0:
        return [_host(varargs[0])] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    spacing = []
    for i, distances in enumerate(varargs):
        d = np.asanyarray(_host(distances))
        if d.ndim == 0:
            spacing.append(_host(distances))
            continue
        if d.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if len(d) != f.shape[axes[i]]:
            raise ValueError("when 1d, distances must match the length of the corresponding "
                             "dimension")
        if np.issubdtype(d.dtype, np.integer):
            d = d.astype(np.float64)
        diffx = np.diff(d)
        spacing.append(diffx[0] if (diffx == diffx[0]).all() else diffx)
    return spacing


def _host(x: Any) -> Any:
    """A spacing argument as NumPy takes it (a LazyArray's values on the host)."""
    return x.to_numpy() if isinstance(x, LazyArray) else x


def _gradient_along(f: LazyArray, axis: int, dx: Any, edge_order: int,
                    otype: np.dtype) -> LazyArray:
    n_dim = f.ndim

    def view(part: Any) -> LazyArray:
        return f[(slice(None),) * axis + (part,)]

    def coefficient(c: Any) -> Any:      # a coefficient array along the axis, broadcast
        shape = [1] * n_dim
        shape[axis] = -1
        return asarray(np.reshape(c, shape), device=f.device)

    uniform = np.ndim(dx) == 0
    if uniform:
        interior = (view(slice(2, None)) - view(slice(None, -2))) / (2. * dx)
    else:
        dx1, dx2 = dx[0:-1], dx[1:]
        a = coefficient(-(dx2) / (dx1 * (dx1 + dx2)))
        b = coefficient((dx2 - dx1) / (dx1 * dx2))
        c = coefficient(dx1 / (dx2 * (dx1 + dx2)))
        interior = a * view(slice(None, -2)) + b * view(slice(1, -1)) + c * view(slice(2, None))
    n, edges = f.shape[axis], None
    if edge_order == 1:
        # out[0] = (f[1] - f[0]) / dx_0 and out[-1] = (f[-1] - f[-2]) / dx_n
        dx_0, dx_n = (dx, dx) if uniform else (dx[0], dx[-1])
        if n >= 3:          # the two as one kernel: strided views [f[1], f[-1]] - [f[0], f[-2]]
            edges = (view(slice(1, n, n - 2)) - view(slice(0, n - 1, n - 2))) \
                / (dx_0 if uniform else _pair(dx_0, dx_n, f.dtype, coefficient))
        else:
            first = (view(slice(1, 2)) - view(slice(0, 1))) / dx_0
            last = (view(slice(-1, None)) - view(slice(-2, -1))) / dx_n
    else:
        if uniform:
            head, tail = (-1.5 / dx, 2. / dx, -0.5 / dx), (0.5 / dx, -2. / dx, 1.5 / dx)
        else:
            dx1, dx2 = dx[0], dx[1]
            head = (-(2. * dx1 + dx2) / (dx1 * (dx1 + dx2)), (dx1 + dx2) / (dx1 * dx2),
                    - dx1 / (dx2 * (dx1 + dx2)))
            dx1, dx2 = dx[-2], dx[-1]
            tail = ((dx2) / (dx1 * (dx1 + dx2)), - (dx2 + dx1) / (dx1 * dx2),
                    (2. * dx2 + dx1) / (dx2 * (dx1 + dx2)))
        if n >= 4:          # out[0] = a f[0] + b f[1] + c f[2], out[-1] from f[-3:]: one kernel
            a, b, c = (_pair(u, v, f.dtype, coefficient) for u, v in zip(head, tail))
            edges = a * view(slice(0, n - 2, n - 3)) + b * view(slice(1, n - 1, n - 3)) \
                + c * view(slice(2, n, n - 3))
        else:
            a, b, c = head
            first = a * view(slice(0, 1)) + b * view(slice(1, 2)) + c * view(slice(2, 3))
            a, b, c = tail
            last = a * view(slice(-3, -2)) + b * view(slice(-2, -1)) + c * view(slice(-1, None))
    memory = _devices.xp(f.device).empty(f.shape, otype)
    lead = (slice(None),) * axis
    parts = [(slice(1, -1), interior)]
    if edges is not None:
        parts.append((slice(0, n, n - 1), edges))       # (out[0] and out[-1])
    else:
        parts += [(slice(0, 1), first), (slice(-1, None), last)]
    for part, value in parts:
        _write(memory[lead + (part,)], value)
    return _leaf(memory, f.device)


def _pair(first: Any, last: Any, dtype: np.dtype, coefficient: Any) -> LazyArray:
    """The coefficients of the two edges, ``[first, last]`` along the axis, in the dtype
    NumPy multiplies ``f`` by each in (a Python float's weakly: ``f``'s; a NumPy scalar's
    strongly), so the one kernel over both edges rounds as NumPy's two expressions do."""
    return coefficient(np.array([first, last], dtype=np.result_type(first, dtype)))


# ----------------------------------------------------------------------------- cov, corrcoef
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> LazyArray:
    """``numpy.cov``: the covariance matrix of the variables (rows, or columns with
    ``rowvar=False``) of ``m`` (and ``y``). The centering is one fused kernel feeding
    :func:`matmul` (BLAS/cuBLAS); the scaling is left pending for the consumer to fuse.
    A single variable gives a 0-d result, as NumPy's ``squeeze``."""
    product, scale = _covariance(m, y, rowvar, bias, ddof, fweights, aweights, dtype)
    if scale is None:
        return product
    c = _scaled(product, scale)
    # (NumPy's ``squeeze``: a single variable's 0-d result; a view taken only then, since
    # a view of a computed product does not keep the call's record for la.explain)
    return c.squeeze() if 1 in c.shape else c


def _scaled(product: LazyArray, scale: Any) -> LazyArray:
    """NumPy's ``c *= scale`` (the product of its dtype times a float64 NumPy scalar)."""
    return (product * scale).astype(product.dtype)


def _covariance(m: Any, y: Any, rowvar: bool, bias: bool, ddof: Any, fweights: Any,
                aweights: Any, dtype: Any) -> tuple[LazyArray, Any]:
    """NumPy's ``cov`` up to its scaling: the product of the centered variables and the
    factor ``1 / fact`` that scales it; (the empty result, None) for no variables."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m = _lazy(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None:
        y = _lazy(y, m.device)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(m.dtype, np.float64) if y is None \
            else np.result_type(m.dtype, y.dtype, np.float64)
    X = _rows(m, dtype)
    if not rowvar and m.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return asarray(np.array([]).reshape(0, 0), device=m.device), None
    if y is not None:
        Y = _rows(y, dtype)
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        from ._joining import concatenate
        X = concatenate((X, Y), axis=0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w, aw = _weights(fweights, aweights, X.shape[1])
    if w is None:
        fact: Any = X.shape[1] - ddof
        centered = X - X.mean(axis=1, keepdims=True)
    else:
        w_sum = w.sum()
        if ddof == 0:
            fact = w_sum
        elif aw is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * sum(w * aw) / w_sum
        # (NumPy's average: in result_type(X, w, float64), X -= avg rounding to X's dtype)
        avg = (X * asarray(w, device=m.device)).sum(axis=1, keepdims=True) / w_sum
        centered = (X - avg).astype(X.dtype)
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning,
                      stacklevel=user_stacklevel())
        fact = 0.0
    centered = centered.compute()
    right = centered if w is None else centered * asarray(w, device=m.device)
    right = right.T.conj() if right.dtype.kind == "c" else right.T
    return matmul(centered, right), np.true_divide(1, fact)


def _rows(x: LazyArray, dtype: Any) -> LazyArray:
    """``np.array(x, ndmin=2, dtype=dtype)``: a 1-d ``x`` as one row (a view), cast."""
    x = x.reshape((1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x
    return x if x.dtype == np.dtype(dtype) else x.astype(dtype)


def _weights(fweights: Any, aweights: Any, n: int) -> tuple[Any, Any]:
    """NumPy's checks of ``cov``'s weights and their product (host arrays, float64)."""
    w = aw = None
    if fweights is not None:
        fw = np.asarray(_host(fweights), dtype=float)
        if not np.all(fw == np.around(fw)):
            raise TypeError("fweights must be integer")
        if fw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fw.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if any(fw < 0):
            raise ValueError("fweights cannot be negative")
        w = fw
    if aweights is not None:
        aw = np.asarray(_host(aweights), dtype=float)
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if any(aw < 0):
            raise ValueError("aweights cannot be negative")
        w = aw if w is None else w * aw
    return w, aw


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> LazyArray:
    """``numpy.corrcoef``: :func:`cov` divided by the outer product of the standard
    deviations (square roots of the product's diagonal, a view), the real part (and
    imaginary) clipped to [-1, 1]: for real data all of it elementwise on the product,
    pending (one kernel with its consumer)."""
    product, scale = _covariance(x, y, rowvar, False, None, None, None, dtype)
    if scale is None:
        return product
    c = _scaled(product, scale)
    if 1 in c.shape:
        c = c.squeeze()
        return c / c            # a single variable: nan where 0, nan or inf, else 1
    # the variances: the product's diagonal (a strided view of its memory), scaled
    d = _scaled(product.reshape((-1,))[::product.shape[0] + 1], scale)
    stddev = _sqrt(d.real)
    c = c / stddev[:, None]
    c = c / stddev[None, :]
    if c.dtype.kind != "c":
        return _clip(c, -1, 1)  # type: ignore[no-any-return]
    return _step("corrcoef", functools.partial(_clipped_parts, _devices.xp(c.device)), (c,),
                 c.device)


def _clipped_parts(xp: Any, c: Any) -> Any:
    """A copy of the complex ``c`` with its real and imaginary parts clipped to [-1, 1]."""
    memory = c.copy()
    xp.clip(memory.real, -1, 1, out=memory.real)
    xp.clip(memory.imag, -1, 1, out=memory.imag)
    return memory


# ----------------------------------------------------------------------------- quantiles
#: the ``method``s lazyarr runs CuPy's ``percentile``/``quantile`` for (CuPy 14's
#: ``_quantile_unchecked`` has these as NumPy's; the rest run NumPy's on the host)
_CUPY_METHODS = frozenset({"linear", "lower", "higher", "midpoint", "nearest"})


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """``numpy.median``: NumPy's (CuPy's) partition-based median; a pending ``a`` is computed
    by its fused kernel straight into the buffer the partition works in."""
    return _quantile_call("median", np.median, a, (), {"axis": axis, "keepdims": keepdims},
                          out, overwrite_input)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """``numpy.percentile``: NumPy's (CuPy's) algorithm for every ``method``; a pending ``a``
    is computed straight into the buffer it partitions."""
    return _quantile_call("percentile", np.percentile, a, (q,),
                          _quantile_keywords(axis, method, keepdims, weights),
                          out, overwrite_input)


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """``numpy.quantile``: as :func:`percentile`, ``q`` in [0, 1]."""
    return _quantile_call("quantile", np.quantile, a, (q,),
                          _quantile_keywords(axis, method, keepdims, weights),
                          out, overwrite_input)


def _quantile_keywords(axis: Any, method: str, keepdims: bool,
                       weights: Any) -> dict[str, Any]:
    kwargs = {"axis": axis, "method": method, "keepdims": keepdims}
    if weights is not None:
        kwargs["weights"] = weights
    return kwargs


def _quantile_call(name: str, func: Any, a: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                   out: Any, overwrite_input: bool) -> Any:
    x = a if isinstance(a, LazyArray) else None
    if x is None or out is not None:
        # (a computed ``a`` is not partitioned in place, even with ``overwrite_input``: its
        # memory may have views and pending readers; NumPy leaves the contents undefined then)
        return _fallback.call(name, func, (a, *args), {**kwargs, "out": out})
    q = tuple(_host(v) for v in args)
    weights = kwargs.get("weights")
    method = {k: v for k, v in kwargs.items() if k == "method"}
    # NumPy's checks of q and method, and its result dtype, from one element: before anything
    # is computed (with weights, NumPy's call checks them against the data)
    if weights is not None:
        dtype = None
    elif x.size == 0:       # (empty data: NumPy's call on it, cheap, gives its IndexError first)
        dtype = func(np.zeros(x.shape, x.dtype), *q, **kwargs).dtype
    else:
        dtype = func(np.zeros(1, x.dtype), *q, **method).dtype
    cuda = x.device == "cuda"
    if cuda and (weights is not None or method.get("method", "linear") not in _CUPY_METHODS
                 or any(np.ndim(v) > 1 for v in q) or x.size == 0 or x.ndim == 0):
        # what CuPy lacks (a method, weights, an N-d q) or does otherwise (empty, 0-d):
        # NumPy's call on the host memory, the result moved back
        extra = {k: _host(v) for k, v in kwargs.items()}
        return _step(name, functools.partial(_on_host, func, q, extra), (x,), "cuda")
    memory = _fallback.computed_into_new(x, cuda=True) if _pending(x) else None
    if memory is None and not cuda:
        return _fallback.call(name, func, (a, *args), kwargs)
    extra = {k: _fallback._buffers(v) for k, v in kwargs.items()}
    fn = functools.partial(_in_library, name, q, extra, dtype, _devices.xp(x.device), cuda)
    if memory is None:                  # (a computed input, or la.jit traces: a copy)
        return _step(name, lambda buffer: fn(buffer.copy()), (x,), "cuda")
    _fallback.policy(name)
    result = fn(memory)
    return _fallback.wrapped(result, name, (memory, q), device=x.device)


def _on_host(func: Any, q: tuple[Any, ...], kwargs: dict[str, Any], buffer: Any) -> Any:
    """NumPy's ``func`` (median, percentile, quantile) of a cuda ``buffer`` on the host,
    the result moved back."""
    result = func(_devices.to_host("cuda", buffer), *q, overwrite_input=True, **kwargs)
    return _devices.asarray("cuda", result)


def _in_library(name: str, q: tuple[Any, ...], kwargs: dict[str, Any], dtype: Any, xp: Any,
                cuda: bool, memory: Any) -> Any:
    """NumPy's (CuPy's) ``name`` working in ``memory`` (``overwrite_input``); on cuda with
    NumPy's NaN propagation (CuPy's sort-based quantiles interpolate past a NaN) and dtype
    (also on the simulated device, where NumPy stands in for CuPy: the same values)."""
    operands = tuple(xp.asarray(v) for v in q) if xp is not np else q
    has_nan = None
    if cuda and name != "median" and memory.dtype.kind == "f":
        has_nan = xp.isnan(memory).any(axis=kwargs.get("axis"), keepdims=kwargs["keepdims"])
    result = getattr(xp, name)(memory, *operands, overwrite_input=_overwritable(cuda, memory, kwargs),
                               **kwargs)
    if has_nan is not None:
        result = xp.where(has_nan, result.dtype.type(np.nan), result)
    if cuda and dtype is not None and result.dtype != dtype:
        result = result.astype(dtype)
    return result


def _overwritable(cuda: bool, memory: Any, kwargs: dict[str, Any]) -> bool:
    """Whether the call may work in ``memory`` (``overwrite_input``). On cuda only where the
    axes it reduces are the last ones (or all): CuPy's quantiles move the kept axes first
    and sort the reshaped memory in place, and ``ndarray.sort`` of what is then a strided
    view raises NotImplementedError (CuPy 14, ``_quantile_unchecked``; the H100, 2026-12-07);
    without ``overwrite_input`` CuPy sorts a contiguous copy."""
    axis = kwargs.get("axis")
    if not cuda or axis is None:
        return True
    axes = sorted(normalize_axis_tuple(axis, memory.ndim))
    return axes == list(range(memory.ndim - len(axes), memory.ndim))


# ----------------------------------------------------------------------------- convolve
def convolve(a: Any, v: Any, mode: str = "full") -> LazyArray:
    """``numpy.convolve``: the discrete linear convolution of two 1-d sequences, NumPy's
    (CuPy's) call on the computed operands; NumPy's checks (empty, N-d, ``mode``) first."""
    return _correlation("convolve", np.convolve, a, v, mode)


def correlate(a: Any, v: Any, mode: str = "valid") -> LazyArray:
    """``numpy.correlate``: the cross-correlation of two 1-d sequences (``v`` conjugated),
    NumPy's (CuPy's) call on the computed operands; NumPy's checks first."""
    return _correlation("correlate", np.correlate, a, v, mode)


def _correlation(name: str, func: Any, a: Any, v: Any, mode: Any) -> LazyArray:
    device = _fallback._device((a, v), {})        # (operands on two devices: its error)
    x, y = _lazy(a, device), _lazy(v, device)
    if x.ndim > 1 or y.ndim > 1:
        raise ValueError("object too deep for desired array")
    if name == "correlate" and (x.ndim == 0 or y.ndim == 0):
        raise ValueError("object of too small depth for desired array")
    x = x.reshape((1,)) if x.ndim == 0 else x       # (convolve's ``ndmin=1``)
    y = y.reshape((1,)) if y.ndim == 0 else y
    if name == "convolve":
        if not len(x):
            raise ValueError("a cannot be empty")
        if not len(y):
            raise ValueError("v cannot be empty")
    elif not len(x):
        raise ValueError("first array argument cannot be empty")
    elif not len(y):
        raise ValueError("second array argument cannot be empty")
    # NumPy's mode and dtype errors, and its result dtype, from one element each
    dtype = func(np.ones(1, x.dtype), np.ones(1, y.dtype), mode).dtype
    n, k = max(len(x), len(y)), min(len(x), len(y))
    size = {"full": n + k - 1, "valid": n - k + 1}.get(mode, n)
    fn = functools.partial(func, mode=mode) if x.device != "cuda" \
        else functools.partial(_on_cuda, name, mode, dtype)
    return _step(name, fn, (x, y), x.device, 2 * _pairs(n, k, size))


def _on_cuda(name: str, mode: Any, dtype: np.dtype, a: Any, v: Any) -> Any:
    """CuPy's ``convolve``/``correlate`` of the buffers, as NumPy's: a correlation with the
    longer sequence second is the conjugate of the swapped one, reversed (NumPy's
    ``correlate2``; CuPy's own call centres its ``'same'`` output otherwise); NumPy's dtype."""
    xp = _devices.xp("cuda")
    if dtype == np.bool_:       # (NumPy's bool result: any product of Trues; counted exactly)
        a, v = a.astype(np.int64), v.astype(np.int64)
    swap = name == "correlate" and len(v) > len(a)
    memory = getattr(xp, name)(v, a, mode) if swap else getattr(xp, name)(a, v, mode)
    if swap:
        memory = memory[::-1]
        memory = memory.conj() if memory.dtype.kind == "c" else memory.copy()
    if dtype == np.bool_:
        return memory != 0
    return memory if memory.dtype == dtype else memory.astype(dtype)


def _pairs(n: int, k: int, size: int) -> int:
    """The multiply-adds of a correlation of lengths ``n >= k`` whose ``size`` outputs are
    centred in the full one's ``n + k - 1`` (NumPy's modes): each output sums its overlap."""
    left = (n + k - 1 - size) // 2          # outputs of the full result left out at each end,
    right = n + k - 1 - size - left         # their overlaps 1, 2, ... (at most k - 1 each)
    return n * k - left * (left + 1) // 2 - right * (right + 1) // 2


FUNCTIONS = {f.__name__: f for f in (cumulative_sum, cumulative_prod, gradient, cov, corrcoef,
                                     median, percentile, quantile, convolve, correlate)}
NUMPY_FUNCTIONS = {getattr(np, name): f for name, f in FUNCTIONS.items()}
