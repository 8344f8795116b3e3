"""``lazyarr.fft``: the discrete Fourier transforms of ``numpy.fft``, lazyarr's own.

Every function of ``numpy.fft.__all__`` is native. The transforms (``fft``, ``ifft``,
``rfft``, ``irfft``, ``hfft``, ``ihfft`` and the 2-d and n-d ones) are one library call each,
pocketfft (NumPy's own ``numpy.fft``) on the CPU, cuFFT (CuPy's ``cupy.fft``) on cuda, on
the operand's memory:

* **Signatures**: NumPy 2.4's (``a, n, axis, norm, out`` and ``a, s, axes, norm, out``) and
  the array API 2024.12 fft extension's (``fft(x, /, *, n=None, axis=-1, norm="backward")``,
  ``fftn(x, /, *, s=None, axes=None, norm="backward")``) at once.
* **NumPy 2's rules on both devices**: result dtypes (float16/float32/complex64 give
  complex64, or float32 from ``irfft``/``hfft`` -- float16 from a float16 input, as NumPy's;
  integers and bools are transformed as float64), shapes of the cropped or zero-padded axes
  (``n``, ``s``), NumPy's exceptions and messages (``n`` < 1, ``norm``, axes, a complex
  input of ``rfft``), the 2.0 deprecation warnings of ``s`` without ``axes`` and of None in
  ``s``, and NumPy 2.4's ``out=`` (written where NumPy writes it; ``hfft``, ``ifft2`` and
  ``irfft2`` ignore it, as NumPy 2.4's do). On cuda the operand is given to cuFFT already in
  the dtype NumPy computes in, the norm always spelled out, ``hfft``/``ihfft`` are
  ``irfft``/``rfft`` with the conjugates taken here, and ``out=`` (which CuPy lacks) is
  NumPy's checks and a copy, so CuPy's own choices do not show.
* **A pending operand** (``la.fft.rfft(la.sqrt(la.abs(x)) * 2 - 1)``) is computed by its
  one fused kernel straight into the buffer the library transforms (``computed_into_new``),
  in the dtype the transform reads: float32 for ``rfft`` of a float32 chain, complex for
  ``fft`` of a real chain (the conversion NumPy and CuPy would copy the input for), the
  conjugate of ``hfft``'s input folded into that kernel; only the part of an axis the
  transform reads (``n`` smaller than the axis) is computed. A computed operand goes to the
  library as it is.
* The result is a computed LazyArray on the operand's device; elementwise work on it fuses
  into the kernel that reads it. ``la.explain`` lists the call (``fft.rfft``...) with its
  bytes and an estimate of its FLOPs (:func:`_flops`).

``fftshift``/``ifftshift`` are no library call: :func:`lazyarr.roll` along the axes (a
pending input is computed straight into the result along axis 0). ``fftfreq``/``rfftfreq``
take the array API's ``dtype=`` and ``device=`` too (NumPy 2.4's only ``device=``).
"""
from __future__ import annotations

import functools
import math
import operator
import warnings
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from . import _devices, _fallback, _node
from ._array import LazyArray
from ._dtypes import check_dtype
from ._plan import call_record
from ._stack import user_stacklevel


# ------------------------------------------------------------------------------ frequencies
def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: str | None = None) -> LazyArray:
    """The sample frequencies of an ``n``-point DFT with sample spacing ``d``
    (``numpy.fft.fftfreq``), float64 unless ``dtype`` (a real floating dtype) says otherwise,
    on ``device``."""
    return _frequencies("fftfreq", n, d, dtype, device)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: str | None = None) -> LazyArray:
    """The sample frequencies of ``rfft`` of ``n`` points (``numpy.fft.rfftfreq``), float64
    unless ``dtype`` says otherwise, on ``device``."""
    return _frequencies("rfftfreq", n, d, dtype, device)


def _frequencies(name: str, n: int, d: float, dtype: Any, device: str | None) -> LazyArray:
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise ValueError(f"{name}: dtype must be a real floating dtype, not {np.dtype(dtype)}")
    dev = _devices.resolve(device)
    1.0 / (n * d)   # NumPy's first step: its ZeroDivisionError for n * d == 0 (CuPy: inf, NaN)
    values = getattr(_devices.xp(dev).fft, name)(n, d)
    if dtype is not None:
        values = values.astype(check_dtype(dtype), copy=False)
    return LazyArray._from_node(_node.leaf(values, dev))


# ------------------------------------------------------------------------------ shifts
def fftshift(x: Any, axes: Any = None) -> LazyArray:
    """The zero-frequency term moved to the centre (``numpy.fft.fftshift``): ``x`` rolled by
    half of each axis in ``axes`` (all by default), by :func:`lazyarr.roll`; no library call."""
    return _shift(x, axes, 1)


def ifftshift(x: Any, axes: Any = None) -> LazyArray:
    """The inverse of :func:`fftshift` (``numpy.fft.ifftshift``; they differ for odd lengths)."""
    return _shift(x, axes, -1)


def _shift(x: Any, axes: Any, sign: int) -> LazyArray:
    from ._functions._creation import asarray
    from ._functions._repeating import roll
    x = asarray(x)
    # (NumPy's numpy/fft/_helper.py, its shifts and axes as it takes them)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift: Any = [sign * (dim // 2) for dim in x.shape]
    elif isinstance(axes, (int, np.integer)):
        shift = sign * (x.shape[axes] // 2)
    else:
        shift = [sign * (x.shape[ax] // 2) for ax in axes]
    return roll(x, shift, axes)


# ------------------------------------------------------------------------------ 1-d transforms
# What a call computes: the library transform (``fft``, ``ifft``, ``rfft``, ``irfft``) and
# ``hfft``/``ihfft`` as NumPy defines them (``irfft`` of the conjugate, the conjugate of
# ``rfft``, with the opposite normalization).
_SWAP = {"backward": "forward", None: "forward", "ortho": "ortho", "forward": "backward"}


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
        out: Any = None) -> LazyArray:
    """The 1-d discrete Fourier transform along ``axis`` (``numpy.fft.fft``), the axis cropped
    or zero-padded to ``n``; complex64 for float32/complex64 (and float16) input, else
    complex128. ``norm``: ``"backward"`` (None), ``"ortho"`` or ``"forward"``.

    >>> import lazyarr as la
    >>> la.fft.fft(la.asarray([1.0, 0.0, 0.0, 0.0]))
    LazyArray([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return _one_axis("fft", a, n, axis, norm, out)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
         out: Any = None) -> LazyArray:
    """The inverse of :func:`fft` (``numpy.fft.ifft``)."""
    return _one_axis("ifft", a, n, axis, norm, out)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
         out: Any = None) -> LazyArray:
    """The transform of real input (``numpy.fft.rfft``): the ``n // 2 + 1`` non-negative
    frequency terms along ``axis``. A complex input is NumPy's TypeError."""
    return _one_axis("rfft", a, n, axis, norm, out)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
          out: Any = None) -> LazyArray:
    """The inverse of :func:`rfft` (``numpy.fft.irfft``): ``n`` real points along ``axis``
    (``2 * (m - 1)`` by default for ``m`` input points)."""
    return _one_axis("irfft", a, n, axis, norm, out)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
         out: Any = None) -> LazyArray:
    """The transform of a Hermitian-symmetric signal (``numpy.fft.hfft``): ``irfft`` of the
    conjugate, with the opposite normalization. ``out`` is ignored, as NumPy 2.4 does."""
    return _one_axis("hfft", a, n, axis, norm, None)


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
          out: Any = None) -> LazyArray:
    """The inverse of :func:`hfft` (``numpy.fft.ihfft``): the conjugate of ``rfft``, with the
    opposite normalization."""
    return _one_axis("ihfft", a, n, axis, norm, out)


def _one_axis(name: str, a: Any, n: Any, axis: Any, norm: Any, out: Any) -> LazyArray:
    x = _operand(a)
    inverse_real = name in ("irfft", "hfft")
    if n is None:
        n = (x.shape[axis] - 1) * 2 if inverse_real else x.shape[axis]
    if name in ("hfft", "ihfft"):
        library_norm = _swapped(norm)           # (NumPy checks it before n here)
    _check_points(n)
    if name not in ("hfft", "ihfft"):
        library_norm = _checked_norm(norm, name in ("fft", "rfft"))
    n = _points(n, name in ("rfft", "ihfft"))
    axis = normalize_axis_index(axis, x.ndim)
    library = {"hfft": "irfft", "ihfft": "rfft"}.get(name, name)
    return _transform(name, x, library, (n,), (axis,), library_norm, out)


# ------------------------------------------------------------------------------ n-d transforms
def fftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None,
         out: Any = None) -> LazyArray:
    """The n-d transform over ``axes`` (all by default), each cropped or zero-padded to ``s``
    (``numpy.fft.fftn``)."""
    return _many_axes("fftn", a, s, axes, norm, out)


def ifftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None,
          out: Any = None) -> LazyArray:
    """The inverse of :func:`fftn` (``numpy.fft.ifftn``)."""
    return _many_axes("ifftn", a, s, axes, norm, out)


def rfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None,
          out: Any = None) -> LazyArray:
    """The n-d transform of real input (``numpy.fft.rfftn``): ``rfft`` over the last of
    ``axes``, ``fft`` over the others."""
    return _many_axes("rfftn", a, s, axes, norm, out)


def irfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None,
           out: Any = None) -> LazyArray:
    """The inverse of :func:`rfftn` (``numpy.fft.irfftn``)."""
    return _many_axes("irfftn", a, s, axes, norm, out)


def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None,
         out: Any = None) -> LazyArray:
    """:func:`fftn` over the last two axes by default (``numpy.fft.fft2``)."""
    return _many_axes("fftn", a, s, axes, norm, out, name="fft2")


def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None,
          out: Any = None) -> LazyArray:
    """:func:`ifftn` over the last two axes by default (``numpy.fft.ifft2``); ``out`` is
    ignored, as NumPy 2.4 does."""
    return _many_axes("ifftn", a, s, axes, norm, None, name="ifft2")


def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None,
          out: Any = None) -> LazyArray:
    """:func:`rfftn` over the last two axes by default (``numpy.fft.rfft2``)."""
    return _many_axes("rfftn", a, s, axes, norm, out, name="rfft2")


def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None,
           out: Any = None) -> LazyArray:
    """:func:`irfftn` over the last two axes by default (``numpy.fft.irfft2``); ``out`` is
    ignored, as NumPy 2.4 does."""
    return _many_axes("irfftn", a, s, axes, norm, None, name="irfft2")


def _many_axes(library: str, a: Any, s: Any, axes: Any, norm: Any, out: Any,
               name: str | None = None) -> LazyArray:
    x = _operand(a)
    s, axes = _cooked(x, s, axes, library == "irfftn")
    if not axes:
        return x                    # (NumPy returns its input as it is)
    # NumPy's order of the 1-d transforms: where it raises for n < 1 first
    order = {"fftn": range(len(axes) - 1, -1, -1), "ifftn": range(len(axes) - 1, -1, -1),
             "rfftn": [len(axes) - 1, *range(len(axes) - 2, -1, -1)],
             "irfftn": range(len(axes))}[library]
    full = []
    for i in order:
        n = s[i]
        if n is None:           # (deprecated: the 1-d transform's default)
            n = (x.shape[axes[i]] - 1) * 2 if library == "irfftn" and i == len(axes) - 1 \
                else x.shape[axes[i]]
        _check_points(n)
        _checked_norm(norm, library in ("fftn", "rfftn"))
        full.append((i, _points(n, library == "rfftn" and i == len(axes) - 1),
                     normalize_axis_index(axes[i], x.ndim)))
    full.sort()
    return _transform(name or library, x, library, tuple(n for _, n, _ in full),
                      tuple(ax for _, _, ax in full), norm, out)


def _cooked(x: LazyArray, s: Any, axes: Any, inverse_real: bool) -> tuple[list[Any], list[Any]]:
    """NumPy 2.4's ``_cook_nd_args``: the lengths and axes, with its errors and warnings."""
    shapeless = s is None
    if shapeless:
        s = list(x.shape) if axes is None else list(np.take(x.shape, axes))
    s = list(s)
    if axes is None:
        if not shapeless:
            warnings.warn("`axes` should not be `None` if `s` is not `None` (Deprecated in "
                          "NumPy 2.0). In a future version of NumPy, this will raise an error "
                          "and `s[i]` will correspond to the size along the transformed axis "
                          "specified by `axes[i]`. To retain current behaviour, pass a sequence "
                          "[0, ..., k-1] to `axes` for an array of dimension k.",
                          DeprecationWarning, stacklevel=user_stacklevel())
        axes = list(range(-len(s), 0))
    axes = list(axes)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if inverse_real and shapeless:
        s[-1] = (x.shape[axes[-1]] - 1) * 2
    if None in s:
        warnings.warn("Passing an array containing `None` values to `s` is deprecated in "
                      "NumPy 2.0 and will raise an error in a future version of NumPy. To use "
                      "the default behaviour of the corresponding 1-D transform, pass the value "
                      "matching the default for its `n` parameter. To use the default "
                      "behaviour for every axis, the `s` argument can be omitted.",
                      DeprecationWarning, stacklevel=user_stacklevel())
    s = [x.shape[ax] if n == -1 else n for n, ax in zip(s, axes)]
    return s, axes


# ------------------------------------------------------------------------------ checks
def _operand(a: Any) -> LazyArray:
    if isinstance(a, LazyArray):
        return a
    from ._functions._creation import asarray
    return asarray(a)


def _check_points(n: Any) -> None:
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")


def _points(n: Any, halved: bool) -> int:
    """``n`` as NumPy's ``_raw_fft`` takes it: the shape of its output is ``n`` (``n // 2 + 1``
    for ``rfft``, ``halved``), where a bool is no integer (``fft(x, n=True)``: TypeError) though
    ``True // 2 + 1`` is (``rfft(x, n=np.True_)`` is ``n=1``)."""
    if isinstance(n, (bool, np.bool_)):
        if not halved:
            raise TypeError("an integer is required")
        return int(n)
    return operator.index(n)


def _checked_norm(norm: Any, forward: bool) -> Any:
    """``norm`` checked as NumPy's ``_raw_fft`` does (an inverse transform swaps it first,
    with the other message); given back as it came (the library's normalization)."""
    if not forward:
        _swapped(norm)
    elif not (norm is None or norm == "backward" or norm == "ortho" or norm == "forward"):
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or '
                         '"forward".')
    return norm


def _swapped(norm: Any) -> Any:
    try:
        return _SWAP[norm]
    except KeyError:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".') from None


# ------------------------------------------------------------------------------ dtypes
def _dtypes(library: str, dtype: np.dtype, n: int, one_axis: bool) -> tuple[np.dtype, np.dtype]:
    """The dtype the library transforms (the operand's buffer) and the result's, NumPy 2's."""
    single = dtype.itemsize <= 4 if dtype.kind == "f" else dtype == np.complex64
    complex_ = np.dtype(np.complex64 if single else np.complex128)
    real = np.dtype(np.float32 if single else np.float64)
    if library in ("rfft", "rfftn"):
        if dtype.kind == "c":
            kind = "even" if n % 2 == 0 else "odd"
            raise TypeError(f"ufunc 'rfft_n_{kind}' not supported for the input types, and the "
                            "inputs could not be safely coerced to any supported types "
                            "according to the casting rule ''safe''")
        return real, complex_
    if library in ("irfft", "irfftn"):       # (NumPy: result_type(a.real.dtype, 1.0))
        # (irfftn's first steps are complex ifft: float16 comes back only from one axis)
        return complex_, np.dtype(np.float16) if dtype == np.float16 and one_axis else real
    return complex_, complex_


# ------------------------------------------------------------------------------ the call
def _transform(name: str, x: LazyArray, library: str, s: tuple[int, ...],
               axes: tuple[int, ...], norm: Any, out: Any) -> LazyArray:
    """``library`` (a 1-d or n-d transform of ``numpy.fft``) of ``x`` over ``axes`` with
    lengths ``s``: one library call on ``x``'s memory, or on the buffer a pending ``x``'s
    fused kernel writes; ``name`` is the public function (``hfft``: the conjugate of the input
    taken in that kernel; ``ihfft``: of the result, in place)."""
    device = x.device
    work, result_dtype = _dtypes(library, x.dtype, s[-1], len(axes) == 1)
    if x.dtype == np.float16:       # (NumPy's loops take it: its norm factor is float16's)
        work = x.dtype
    if out is not None and device != "cuda":        # NumPy's own call writes into out
        public_norm = _SWAP[norm] if name == "ihfft" else norm     # (swapped back)
        return _fallback.call(f"fft.{name}", getattr(np.fft, name), (x,),
                              _arguments(name, s, axes, public_norm, out))
    shape = list(x.shape)
    for n, ax in zip(s, axes):
        shape[ax] = n
    if library in ("rfft", "rfftn"):
        shape[axes[-1]] = s[-1] // 2 + 1
    if 0 in shape:      # (nothing to transform: cuFFT takes no empty batch, NumPy's is empty)
        result = LazyArray._from_node(_node.leaf(
            _devices.xp(device).empty(tuple(shape), result_dtype), device))
        return result if out is None else _written(result, out)
    operand = x.conj() if name == "hfft" else x
    pending = operand._node.data is None and operand._node.op != "scalar"
    path = f"fft.{name}"
    run = functools.partial(_library_transform, device, library, s, axes,
                            norm if device == "cpu" else norm or "backward",   # (CuPy's spelling)
                            name == "ihfft", result_dtype)
    memory = None
    if pending:     # its kernel writes the part the transform reads into the library's buffer
        key = _read_part(library, x.shape, s, axes)
        memory = _fallback.computed_into_new(operand if key is None else operand[key], work,
                                             cuda=True)
    if memory is not None:
        result = _fallback.wrapped(run(memory), path, device=device)
    else:           # (traced by la.jit or explained: the kernel is materialize's, a step)
        if operand is not x:
            operand = operand.astype(work, copy=False)
        result = _fallback.run(path, run, device, (operand,), {})
        memory = operand.data
    result._node.origin = call_record(path, int(memory.nbytes), int(result.nbytes),
                                      _flops(library, memory.shape, s, axes))
    return result if out is None else _written(result, out)


def _arguments(name: str, s: tuple[int, ...], axes: tuple[int, ...], norm: Any,
               out: Any) -> dict[str, Any]:
    if name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        return {"n": s[0], "axis": axes[0], "norm": norm, "out": out}
    return {"s": s, "axes": axes, "norm": norm, "out": out}


@functools.lru_cache(maxsize=256)
def _read_part(library: str, shape: tuple[int, ...], s: tuple[int, ...],
               axes: tuple[int, ...]) -> tuple[slice, ...] | None:
    """The part of the input the transforms read: each axis cropped to its length (``n //
    2 + 1`` for the last axis of an inverse real transform); all of an axis transformed
    twice (``axes`` with repeats). None: all of it."""
    key = [slice(None)] * len(shape)
    if len(set(axes)) < len(axes):
        return None
    for i, (n, ax) in enumerate(zip(s, axes)):
        if library in ("irfft", "irfftn") and i == len(axes) - 1:
            n = n // 2 + 1
        if n < shape[ax]:
            key[ax] = slice(0, n)
    return tuple(key) if any(k != slice(None) for k in key) else None


def _library_transform(device: str, library: str, s: tuple[int, ...], axes: tuple[int, ...],
                       norm: Any, conj_result: bool, result_dtype: np.dtype, memory: Any) -> Any:
    """The transform of ``memory`` (NumPy's or CuPy's array), NumPy's result."""
    xp = _devices.xp(device)
    if device == "cuda" and memory.dtype == np.float16:
        # NumPy scales a float16 input's transform by its factor rounded to float16
        # (``reciprocal(n, dtype=float16)``), CuPy by the exact one: the transform unscaled,
        # then NumPy's factor
        unscaled = "forward" if library.startswith("i") else "backward"
        result = _library_transform(device, library, s, axes, unscaled, conj_result,
                                    result_dtype, memory.astype(np.float32))
        # (only NumPy's first 1-d step reads float16; the later ones read its complex64 result)
        first = 0 if library == "irfftn" else len(s) - 1
        factor = math.prod(float(_factor(library, norm, n, np.float16 if i == first
                                         else np.float32)) for i, n in enumerate(s))
        return (result * np.float32(factor)).astype(result_dtype, copy=False)
    if len(axes) == 1:
        one = library[:-1] if library.endswith("n") else library     # (fftn -> fft ...)
        result = getattr(xp.fft, one)(memory, n=s[0], axis=axes[0], norm=norm)
    elif device == "cpu" or len(set(axes)) == len(axes):
        result = getattr(xp.fft, library)(memory, s=s, axes=axes, norm=norm)
    else:                   # (repeated axes: NumPy's loop of 1-d transforms, with CuPy's)
        result = _one_by_one(xp, library, memory, s, axes, norm)
    if conj_result:
        xp.conjugate(result, out=result)
    return result if result.dtype == result_dtype else result.astype(result_dtype)


def _factor(library: str, norm: str, n: int, dtype: type) -> Any:
    """NumPy's ``_raw_fft`` normalization of one axis of ``n`` points, in ``dtype`` (the
    norm of an inverse transform swapped: it scales by ``1/n`` when "backward")."""
    if library.startswith("i"):
        norm = _SWAP[norm]
    if norm == "ortho":
        return np.reciprocal(np.sqrt(n, dtype=dtype))
    return dtype(1) if norm == "backward" else np.reciprocal(n, dtype=dtype)


def _one_by_one(xp: Any, library: str, a: Any, s: tuple[int, ...], axes: tuple[int, ...],
                norm: Any) -> Any:
    """NumPy's n-d transforms (numpy/fft/_pocketfft.py) as its 1-d steps, in its order."""
    last = len(axes) - 1
    if library in ("fftn", "ifftn"):
        for i in range(last, -1, -1):
            a = getattr(xp.fft, library[:-1])(a, s[i], axes[i], norm)
    elif library == "rfftn":
        a = xp.fft.rfft(a, s[last], axes[last], norm)
        for i in range(last - 1, -1, -1):
            a = xp.fft.fft(a, s[i], axes[i], norm)
    else:
        for i in range(last):
            a = xp.fft.ifft(a, s[i], axes[i], norm)
        a = xp.fft.irfft(a, s[last], axes[last], norm)
    return a


@functools.lru_cache(maxsize=256)
def _flops(library: str, shape: tuple[int, ...], s: tuple[int, ...],
           axes: tuple[int, ...]) -> int:
    """An estimate of a transform's floating-point operations, the usual count of a radix-2
    FFT: ``5 n log2 n`` for each complex 1-d transform of ``n`` points, ``2.5 n log2 n`` for a
    real one (``rfft``/``irfft``), per transformed axis, times the number of 1-d transforms
    along it (the product of the other axes' lengths at that step, in NumPy's order)."""
    current = list(shape)
    last = len(axes) - 1
    steps = list(range(last, -1, -1))
    if library in ("irfft", "irfftn"):
        steps = list(range(last + 1))
    total = 0.0
    for i in steps:
        n, ax = s[i], axes[i]
        real = library in ("rfft", "rfftn", "irfft", "irfftn") and i == last
        current[ax] = n // 2 + 1 if real and library in ("rfft", "rfftn") else n
        lines = math.prod(current) // max(current[ax], 1)
        total += (2.5 if real else 5.0) * n * math.log2(n) * lines
    return int(total)


def _written(result: LazyArray, out: Any) -> Any:
    """``out=`` on cuda (CuPy's transforms take none): NumPy's checks, then ``result``
    copied into ``out`` (cast as NumPy's ufunc casts its output, ``same_kind``)."""
    if not isinstance(out, LazyArray):
        raise TypeError("out= of a cuda transform must be a LazyArray on cuda")
    if out.shape != result.shape:
        raise ValueError("output array has wrong shape.")
    if not np.can_cast(result.dtype, out.dtype, "same_kind"):
        raise TypeError(f"Cannot cast ufunc output from {result.dtype!r} to {out.dtype!r} "
                        "with casting rule 'same_kind'")
    out[...] = result
    return out


_NATIVE = {f.__name__: f for f in (fft, ifft, rfft, irfft, hfft, ihfft, fft2, ifft2, rfft2,
                                   irfft2, fftn, ifftn, rfftn, irfftn, fftshift, ifftshift,
                                   fftfreq, rfftfreq)}
for _fn in _NATIVE.values():
    _fn.__module__ = "lazyarr.fft"

#: ``lazyarr.fft``: every function of ``numpy.fft.__all__`` is lazyarr's.
namespace = _fallback.FallbackNamespace("fft", _NATIVE)
namespace.__doc__ = ("lazyarr's discrete Fourier transforms: every function of numpy.fft, "
                     "pocketfft (CPU) or cuFFT (cuda) on the operand's memory, a pending operand "
                     "computed by its fused kernel into the buffer the call transforms.")

#: ``numpy.fft.<name>(lazy)`` -> lazyarr's (``LazyArray.__array_function__``).
NUMPY_FUNCTIONS = {getattr(np.fft, name): fn for name, fn in _NATIVE.items()}
