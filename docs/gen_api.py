"""Write the op table, the API reference and a NumPy link inventory from lazyarr's registry
(run by conf.py before Sphinx reads anything).

Every public name must be documented: :func:`check_documented` raises (and the build stops) if
a name of ``lazyarr.__all__`` or a public attribute of ``LazyArray`` has no entry or no
docstring. Elementwise and reduction entries are written here from the registry, with
parameters, the result, and an example whose expected output is NumPy's own (the doctest
builder then checks lazyarr against it).
"""
from __future__ import annotations

import dataclasses
import os
import warnings
import zlib
from collections import defaultdict

import numpy as np

import lazyarr as la
from lazyarr._registry import OPS, OpDef

NUMPY_DOCS = "https://numpy.org/doc/stable/"

#: Python operator of each dunder stem of the registry (``OpDef.operator``).
_OPERATORS = {"add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "truediv": "{0} / {1}",
              "floordiv": "{0} // {1}", "mod": "{0} % {1}", "pow": "{0} ** {1}", "neg": "-{0}",
              "pos": "+{0}", "abs": "abs({0})", "eq": "{0} == {1}", "ne": "{0} != {1}",
              "lt": "{0} < {1}", "le": "{0} <= {1}", "gt": "{0} > {1}", "ge": "{0} >= {1}",
              "and": "{0} & {1}", "or": "{0} | {1}", "xor": "{0} ^ {1}", "invert": "~{0}",
              "lshift": "{0} << {1}", "rshift": "{0} >> {1}"}
#: Example inputs, tried in order: the first for which NumPy's result is finite and warning-free.
_SAMPLES = [([-1.5, 0.5, 2.0], [2.0, -0.5, 0.25]), ([0.25, 0.5, 0.75], [0.5, 0.25, 1.0]),
            ([1.5, 2.0, 4.0], [2.0, 3.0, 0.5]), ([5, -3, 12], [2, 7, 3]),
            ([True, False, True], [True, True, False])]
_ARG_NAMES = {1: ("x",), 2: ("x1", "x2")}
_SECTIONS = ("Elementwise functions", "Reductions")


def numpy_name(op: OpDef) -> str:
    """The NumPy object whose semantics ``op`` copies, as a dotted name."""
    if op.kind == "cast":
        return "numpy.ndarray.astype"
    return "numpy." + getattr(op.numpy, "__name__", op.name)


def _example(op: OpDef) -> list[str]:
    """A doctest: inputs, the call, the operator form; expected output computed by NumPy."""
    names = _ARG_NAMES[op.nin]
    for sample in _SAMPLES:
        arrays = [np.asarray(v) for v in sample[:op.nin]]
        try:
            with warnings.catch_warnings(), np.errstate(all="raise"):
                warnings.simplefilter("error")
                want = op.numpy(*arrays)
        except (TypeError, FloatingPointError, RuntimeWarning, ValueError):
            continue
        if want.dtype.kind == "f" and not np.isfinite(want).all():
            continue
        lines = [">>> import lazyarr as la"]
        lines += [f">>> {n} = la.asarray({list(v)!r})" for n, v in zip(names, sample)]
        lines += [f">>> print(la.{op.name}({', '.join(names)}))", str(want)]
        if op.operator:
            lines += [f">>> print({_OPERATORS[op.operator].format(*names)})", str(want)]
        return lines
    raise RuntimeError(f"gen_api: no example input works for {op.name}; add one to _SAMPLES")


def _elementwise_entry(op: OpDef) -> list[str]:
    names = _ARG_NAMES[op.nin]
    operator = f" Operator: ``{_OPERATORS[op.operator].format(*names)}``." if op.operator else ""
    what = "``x``" if op.nin == 1 else "``x1``, ``x2``"
    return [f".. function:: {op.name}({', '.join(names)}, /)", "",
            f"   {op.doc}", "",
            f"   NumPy semantics: :func:`{numpy_name(op)}` (result dtype, broadcasting, edge values,"
            f" errors).{operator}", "",
            f"   :param {', '.join(names)}: {'an array' if op.nin == 1 else 'arrays'}: a "
            ":class:`LazyArray`, or anything :func:`asarray` takes (NumPy or CuPy arrays, nested"
            f" lists), or Python scalars{'' if op.nin == 1 else '; broadcast together'}.",
            f"   :returns: a :class:`LazyArray` of NumPy's result dtype for {what}; pending (nothing"
            " runs) in lazy mode, computed in eager mode.", "",
            *[f"   {ln}" for ln in _example(op)], ""]


def _reduction_entry(op: OpDef) -> list[str]:
    params = ["x", "axis=None", "*", "keepdims=False"]
    params += ["dtype=None"] if op.takes_dtype else []
    params += ["ddof=0"] if op.takes_ddof else []
    axis = "an int or a tuple of ints" if op.takes_axis_tuple else "an int"
    m = np.array([[-1.5, 0.5, 2.0], [2.0, -0.5, 0.25]])
    if op.name in ("any", "all"):
        m = m > 0
    lines = [f".. function:: {op.name}({', '.join(params)})", "",
             f"   {op.doc}", "",
             f"   NumPy semantics: :func:`{numpy_name(op)}`. Also a method: ``x.{op.name}(...)``."
             " A reduction materializes: it runs the pending expression feeding it as one fused "
             "kernel.", "",
             "   :param x: a :class:`LazyArray` or anything :func:`asarray` takes.",
             f"   :param axis: None (all axes) or {axis}; negative counts from the end.",
             "   :param keepdims: keep the reduced axes with size 1."]
    if op.takes_dtype:
        lines.append("   :param dtype: the accumulator and result dtype, as NumPy's ``dtype=``.")
    if op.takes_ddof:
        lines.append("   :param ddof: delta degrees of freedom (divide by ``n - ddof``).")
    lines += ["   :returns: a materialized :class:`LazyArray` (0-d for a full reduction).", "",
              "   >>> import lazyarr as la",
              f"   >>> m = la.asarray({m.tolist()!r})",
              f"   >>> print(la.{op.name}(m, axis=0))", f"   {op.numpy(m, axis=0)}",
              *_full_reduction_example(op, m), ""]
    return lines


def _full_reduction_example(op: OpDef, m: np.ndarray) -> list[str]:
    want = op.numpy(m).item()
    if isinstance(want, float):   # a float reduction's last bits depend on the summation order
        return [f"   >>> round(la.{op.name}(m).item(), 6)", f"   {round(want, 6)!r}"]
    return [f"   >>> la.{op.name}(m).item()", f"   {want!r}"]


def _table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        lines.append("   * - " + row[0])
        lines += [f"     - {cell}" for cell in row[1:]]
    return "\n".join(lines) + "\n"


def _ops_page() -> str:
    by_category: dict[str, list[OpDef]] = defaultdict(list)
    for op in OPS.values():
        if op.kind != "generator":      # (internal: the numbers of fused random draws)
            by_category[op.category].append(op)
    operator_of = {op.name: op.operator for op in OPS.values() if op.operator}
    out = ["Operations", "==========", "",
           "Every operation lazyarr knows, generated from its op registry (``lazyarr._registry.OPS``).",
           "Elementwise operations are recorded in lazy mode; reductions materialize. "
           ":doc:`../not-supported` lists what NumPy has and lazyarr does not yet.", ""]
    for category, ops in by_category.items():
        out += [category.capitalize(), "-" * len(category), ""]
        rows = []
        for op in ops:
            dunder = f"``__{operator_of[op.name]}__``" if op.name in operator_of else ""
            ref = f":meth:`{numpy_name(op)}`" if op.kind == "cast" else f":func:`{numpy_name(op)}`"
            name = {"cast": "``x.astype(dtype)``", "output": f":func:`lazyarr.{numpy_name(op)[6:]}` "
                    f"``[{op.output}]``"}.get(op.kind, f":func:`lazyarr.{op.name}`")
            rows.append((name,
                         str(op.nin), ref, dunder, op.doc))
        out.append(_table(rows, ("lazyarr", "arrays in", "NumPy semantics of", "operator", "what")))
    return "\n".join(out)


#: LazyArray members autodoc documents (each needs a docstring).
ARRAY_MEMBERS = ("shape", "dtype", "ndim", "size", "nbytes", "device", "is_materialized", "compute",
                 "data", "to_numpy", "item", "tolist", "flat", "copy", "T", "mT", "transpose", "reshape",
                 "swapaxes", "squeeze", "ravel", "repeat", "argsort", "diagonal", "trace", "real", "imag",
                 "conj", "conjugate", "to_device", "partition", "argpartition", "searchsorted")
_FFT_NAMES = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
              "fftn", "ifftn", "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq")
SHAPE_FUNCTIONS = ("transpose", "permute_dims", "matrix_transpose", "swapaxes", "moveaxis",
                   "expand_dims", "squeeze", "flip", "fliplr", "flipud", "broadcast_to",
                   "broadcast_arrays", "reshape", "ravel")
#: lazyarr/_functions/_decompositions.py: ``la.linalg``'s decompositions and solvers
LINALG_DECOMPOSITIONS = ("inv", "solve", "det", "slogdet", "cholesky", "qr", "svd", "svdvals",
                         "eig", "eigvals", "eigh", "eigvalsh", "lstsq", "pinv", "matrix_rank",
                         "cond", "matrix_power", "multi_dot", "tensorinv", "tensorsolve")
JOINING = ("concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "tile", "repeat",
           "roll")
CREATION = ("asarray", "array", "copy", "zeros", "ones", "full", "empty", "arange", "linspace", "zeros_like",
            "ones_like", "full_like", "empty_like", "eye", "tri")
BUILDING = ("outer", "tril", "triu", "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d", "diff",
            "round")
LINALG = ("matmul", "dot", "vecdot")
PRODUCTS = ("diagonal", "trace", "diag", "diagflat", "kron", "cross", "inner", "vdot", "tensordot",
            "matvec", "vecmat", "einsum")
SEARCHING = ("searchsorted", "digitize", "bincount", "histogram", "histogram_bin_edges", "partition",
             "argpartition", "isin")
LOGIC = ("isclose", "allclose", "array_equal", "array_equiv")
STATISTICS = ("cumulative_sum", "cumulative_prod", "gradient", "cov", "corrcoef", "median",
              "percentile", "quantile", "convolve", "correlate")
NAN_REDUCTIONS = ("nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
                  "nanargmax", "nanargmin", "count_nonzero", "ptp", "average")
DTYPES = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")
CONSTANTS = ("pi", "e", "inf", "nan", "euler_gamma")
#: NumPy's own objects, re-exported as they are (``la.dtype is numpy.dtype``).
NUMPY_OBJECTS = ("newaxis", "dtype", "finfo", "iinfo")


def _aliases() -> dict[str, str]:
    """NumPy's other names for lazyarr functions (``absolute`` -> ``abs``), from the namespace."""
    out = {}
    for name in la.__all__:
        obj = getattr(la, name)
        if callable(obj) and getattr(obj, "__module__", "") == "lazyarr" and obj.__name__ != name:
            out[name] = obj.__name__
    return out


def _api_page() -> tuple[str, set[str]]:
    """The API page and the set of public names it documents."""
    documented: set[str] = set()
    elementwise = [op for op in OPS.values() if op.kind == "elementwise" and op.name not in ("where", "clip")]
    reductions = [op for op in OPS.values() if op.kind == "reduction"]
    methods = [op.name for op in reductions] + ["astype", "clip"]

    api = ["API reference", "=============", "", ".. currentmodule:: lazyarr", "",
           "Arrays", "------", "", ".. autoclass:: LazyArray", "   :members: " + ", ".join(ARRAY_MEMBERS), "",
           "   **Methods that are module functions.** ``x.name(...)`` is ``la.name(x, ...)``: "
           + ", ".join(f":func:`{m} <lazyarr.{m}>`" for m in methods) + ".", "",
           "   **Operators.** " + ", ".join(
               f"``{_OPERATORS[op.operator].format('x', 'y')}`` (:func:`{op.name}`)"
               for op in OPS.values() if op.operator)
           + ". Binary operators take arrays and Python scalars on either side; in-place forms "
           "(``x += y``) write into ``x``'s memory with NumPy's casting and shape checks, and "
           "``x[key] = v`` assigns, with NumPy's aliasing (:doc:`../guide`).", ""]
    documented.add("LazyArray")

    api += ["Creation", "--------", ""] + [f".. autofunction:: {n}" for n in CREATION] + [""]
    documented.update(CREATION)
    api += ["Building arrays from others", "---------------------------", "",
            "Natively, lazy and fused (``la.add.outer`` and the other binary ufuncs' ``outer`` "
            "too).", ""] + [f".. autofunction:: {n}" for n in BUILDING] + [""]
    documented.update(BUILDING)
    api += ["Matrix products", "---------------", "",
            "NumPy's (CuPy's) call on the operands' memory, views passed with their strides; "
            "a matrix-vector product with a pending float matrix is one fused kernel "
            "(``(alpha * A) @ x``: the matrix is never written), a stack times a matrix one "
            "library call. ``x @ y`` is :func:`matmul`.", ""] \
        + [f".. autofunction:: {n}" for n in LINALG] + [""]
    documented.update(LINALG)
    api += ["Diagonals and other products", "----------------------------", "",
            "Natively (lazyarr/_functions/_products.py): diagonals are views and ``diag``, ``kron``,",
            "``cross`` elementwise work, fused with no library call; ``inner``, ``vdot``,",
            "``tensordot``, ``matvec``, ``vecmat`` are views and reshapes around :func:`matmul` and",
            ":func:`vecdot`; ``einsum`` is NumPy's (CuPy's) call, with its FLOPs in ``la.explain``.", ""] \
        + [f".. autofunction:: {n}" for n in PRODUCTS] + [""]
    documented.update(PRODUCTS)
    api += ["Comparing arrays", "----------------", "",
            "Natively: the comparison of two pending expressions is one fused kernel.", ""] \
        + [f".. autofunction:: {n}" for n in LOGIC] + [""]
    documented.update(LOGIC)
    api += ["NaN-skipping and derived reductions", "-----------------------------------", "",
            "Natively: the NaN test fuses into the reduction's kernel.", ""] \
        + [f".. autofunction:: {n}" for n in NAN_REDUCTIONS] + [""]
    documented.update(NAN_REDUCTIONS)
    api += ["Dtypes and constants", "--------------------", "",
            ".. data:: " + "\n          ".join(DTYPES), "",
            "   The dtypes lazyarr supports: NumPy's scalar types (``la.float32 is numpy.float32``).",
            "   Any of them, a :class:`numpy.dtype` or a dtype string is accepted wherever a dtype is.",
            "   ``longdouble``, ``clongdouble``, string, datetime and object dtypes are not supported",
            "   (``TypeError``).", "",
            ".. data:: " + "\n          ".join(CONSTANTS), "",
            "   Python floats: :math:`\\pi`, :math:`e`, infinity and NaN (as ``numpy.pi`` ...).", ""]
    documented.update(DTYPES + CONSTANTS)
    scalar_aliases = tuple(n for n in la.__all__ if n not in DTYPES and isinstance(getattr(la, n), type)
                           and issubclass(getattr(la, n), np.generic))
    api += [".. data:: " + "\n          ".join(scalar_aliases), "",
            "   NumPy's other names for the dtypes above (``la.double is numpy.float64``).", "",
            ".. data:: " + "\n          ".join(NUMPY_OBJECTS), "",
            "   NumPy's own objects (``la.newaxis is None``, ``la.finfo is numpy.finfo``).", "",
            ".. data:: ndarray", "",
            "   :class:`LazyArray` itself: ``isinstance(x, la.ndarray)`` holds for lazyarr arrays and",
            "   ``la.ndarray(shape, dtype)`` makes an uninitialized one, as ``numpy.ndarray`` does.", ""]
    documented.update(scalar_aliases + NUMPY_OBJECTS + ("ndarray",))
    api += ["Configuration and devices", "-------------------------", ""]
    api += [f".. autofunction:: {n}" for n in ("config", "set_config", "get_config", "cuda_available",
                                              "wait_compiles")]
    api += ["", ".. autoclass:: Config", "   :members:", "", ".. autoclass:: FallbackWarning", "",
            ".. autoclass:: FallbackError", ""]
    documented.update(("config", "set_config", "get_config", "cuda_available", "wait_compiles",
                       "Config", "FallbackWarning", "FallbackError"))
    api += ["Plans", "-----", "", ".. autofunction:: explain", "", ".. autoclass:: Plan", "",
            ".. autoclass:: Kernel", ""]
    documented.update(("explain", "Plan", "Kernel"))
    api += ["Tracing", "-------", "", ".. autofunction:: jit", "", ".. autoclass:: JitWarning", ""]
    documented.update(("jit", "JitWarning"))

    api += [_SECTIONS[0], "-" * len(_SECTIONS[0]), "",
            "Generated from the registry: each follows the NumPy function it names. The examples'",
            "expected outputs are NumPy's results on the same inputs.", ""]
    for op in elementwise:
        api += _elementwise_entry(op)
        documented.add(op.name)
    api += ["Two outputs", "-----------", "",
            "NumPy's ufuncs with two outputs: each output is an op of its own, so each fuses.", "",
            ".. autofunction:: frexp", ".. autofunction:: modf", ""]
    documented.update(("frexp", "modf"))
    api += ["Selection and casting", "---------------------", "",
            ".. autofunction:: where", ".. autofunction:: clip", ".. autofunction:: astype",
            ".. autofunction:: angle", ""]
    documented.update(("where", "clip", "astype", "angle"))
    api += ["The array API standard", "----------------------", "",
            "lazyarr is an array API namespace (:doc:`../array-api`).", "",
            ".. data:: __array_api_version__", "", "   ``\"2024.12\"``.", "",
            ".. autofunction:: __array_namespace_info__", "",
            ".. autoclass:: lazyarr._functions._info.Info", "   :members:", "",
            ".. autofunction:: from_dlpack", ".. autofunction:: sort", ".. autofunction:: argsort",
            ".. autofunction:: cumsum", ".. autofunction:: cumprod", ".. autofunction:: unique",
            ".. autofunction:: unique_values", ".. autofunction:: unique_counts",
            ".. autofunction:: unique_inverse", ".. autofunction:: unique_all", ""]
    documented.update(("__array_api_version__", "__array_namespace_info__", "from_dlpack", "sort", "argsort",
                       "cumsum", "cumprod", "unique",
                       "unique_values", "unique_counts", "unique_inverse", "unique_all"))
    api += ["Searching, counting and partitioning", "------------------------------------", "",
            "NumPy's (CuPy's) call on the computed operands, with NumPy's semantics on both devices",
            "(:doc:`../guide`, \"Searching, counting and partitioning\").", ""]
    api += [f".. autofunction:: {name}" for name in SEARCHING] + [""]
    documented.update(SEARCHING)
    api += ["Random numbers", "--------------", "",
            "``la.random`` is NumPy's ``numpy.random`` (:doc:`../guide`, \"Random numbers\"): these",
            "three are lazyarr's, every other name goes through the fallback.", "",
            ".. autofunction:: lazyarr.random.default_rng", "",
            ".. autoclass:: lazyarr.random.Generator", "   :members: bit_generator", "",
            ".. autoclass:: lazyarr.random.FusedGenerator",
            "   :members: random, uniform, standard_normal, normal, exponential", "",
            "``la.fft``: every function of ``numpy.fft`` is lazyarr's (:doc:`../guide`, \"Fourier",
            "transforms\"): one pocketfft (CPU) or cuFFT (cuda) call each, a pending operand computed",
            "by its fused kernel into the buffer the call transforms; the shifts are ``roll``:", "",
            *[f".. autofunction:: lazyarr.fft.{n}" for n in _FFT_NAMES], "",
            "``la.linalg`` is NumPy's ``numpy.linalg`` (CuPy's on cuda) through the fallback, but",
            "for its norms, lazyarr's own and fused, and the main namespace's ``vecdot``,",
            "``matmul`` and ``matrix_transpose``:", "",
            ".. autofunction:: lazyarr.linalg.norm", ".. autofunction:: lazyarr.linalg.vector_norm",
            ".. autofunction:: lazyarr.linalg.matrix_norm", "",
            "and the array API's ``cross``, ``outer``, ``trace``, ``diagonal`` (the last two axes)",
            "and ``tensordot``, lazyarr's own (:func:`cross`, :func:`outer`, :func:`trace` ...):", "",
            ".. autofunction:: lazyarr.linalg.cross", ".. autofunction:: lazyarr.linalg.outer",
            ".. autofunction:: lazyarr.linalg.trace", ".. autofunction:: lazyarr.linalg.diagonal",
            ".. autofunction:: lazyarr.linalg.tensordot", ""]
    api += ["Statistics", "----------", "",
            "lazyarr's own (lazyarr/_functions/_statistics_library.py): elementwise work fused",
            "(``gradient``'s differences, ``cov``'s centering and scaling), the library's call",
            "(BLAS's product, NumPy's/CuPy's partition or correlation) on memory a pending input's",
            "kernel wrote straight into, listed by ``la.explain`` (:doc:`../guide`).", ""]
    api += [f".. autofunction:: {n}" for n in STATISTICS] + [""]
    documented.update(STATISTICS)
    api += ["Its decompositions and solvers are lazyarr's too (:doc:`../guide`, \"Porting from NumPy\"):",
            "NumPy's checks, results and errors on both devices, one library call each (LAPACK",
            "through NumPy, cuSOLVER through CuPy), recorded with its FLOPs for ``la.explain``:", ""]
    api += [f".. autofunction:: lazyarr.linalg.{n}" for n in LINALG_DECOMPOSITIONS] + [""]
    api += ["Shapes and views", "----------------", "",
            "Views as in NumPy (:doc:`../guide`, \"Views\"): of a computed array, a view of its memory;",
            "of a pending expression, pushed down to its inputs, so they fuse.", ""]
    api += [f".. autofunction:: {n}" for n in SHAPE_FUNCTIONS] + [""]
    documented.update(SHAPE_FUNCTIONS)
    api += ["Joining arrays", "--------------", "",
            "One new array, each operand written into its part of it: a pending operand whose part is",
            "contiguous (joining along axis 0) computed straight into it by its fused kernel on the CPU,",
            "the others copied in (``concat`` is the array API's name of :func:`concatenate`).",
            ":func:`tile` and :func:`repeat` (one count) are a broadcast of their input, reshaped:",
            "a pending input and its repetition are one kernel; :func:`roll` along one axis joins two",
            "slices with :func:`concatenate`. Each gives a new array, as NumPy's do.", ""]
    api += [f".. autofunction:: {n}" for n in JOINING] + [""]
    documented.update(JOINING)
    api += [_SECTIONS[1], "-" * len(_SECTIONS[1]), ""]
    for op in reductions:
        api += _reduction_entry(op)
        documented.add(op.name)

    aliases = _aliases()
    api += ["NumPy aliases", "-------------", "",
            "NumPy's other names for the same functions (``la.absolute is la.abs``):", ""]
    for alias, name in aliases.items():
        api += [f".. function:: {alias}", "", f"   Alias of :func:`{name}`.", ""]
    documented.update(aliases)

    api += ["The op registry", "---------------", "",
            ".. class:: OpDef", "",
            "   One operation (a frozen dataclass; ``lazyarr/_registry.py`` documents each field). Fields: "
            + ", ".join(f"``{f.name}``" for f in dataclasses.fields(OpDef)) + ".", "",
            ".. data:: OPS", "",
            "   ``dict[str, OpDef]``: every operation, by name, in registry order. The functions above,",
            "   the operators, the backends, :doc:`ops` and the tests are generated from it.", ""]
    documented.update(("OpDef", "OPS"))
    return "\n".join(api), documented


def check_documented(documented: set[str]) -> None:
    """Stop the build if a public name has no entry, or an autodoc'd object no docstring."""
    problems = [f"lazyarr.{n}: no entry in the API page" for n in la.__all__ if n not in documented]
    methods = {op.name for op in OPS.values() if op.kind == "reduction"} | {"astype", "clip"}
    for name in dir(la.LazyArray):
        if name.startswith("_"):
            continue
        if name not in ARRAY_MEMBERS and name not in methods:
            problems.append(f"LazyArray.{name}: not listed in gen_api.ARRAY_MEMBERS")
        elif name in ARRAY_MEMBERS and not (getattr(la.LazyArray, name).__doc__ or "").strip():
            problems.append(f"LazyArray.{name}: no docstring")
    autodoc = CREATION + BUILDING + LINALG + PRODUCTS + LOGIC + NAN_REDUCTIONS + SHAPE_FUNCTIONS + JOINING + ("config", "set_config", "get_config", "cuda_available", "wait_compiles", "explain", "where",
                          "clip", "astype", "angle", "Config", "Plan", "Kernel", "LazyArray", "frexp", "modf")
    problems += [f"lazyarr.{n}: no docstring" for n in autodoc if not (getattr(la, n).__doc__ or "").strip()]
    if problems:
        raise RuntimeError("undocumented public names (docs/gen_api.py):\n  " + "\n  ".join(problems))


def _numpy_inventory(path: str) -> None:
    """A Sphinx inventory of the NumPy names these pages cite, for intersphinx. CI reaches PyPI
    only, not numpy.org's ``objects.inv``, so the entries are written here; the addresses follow
    NumPy's stable docs (one page per function under ``reference/generated/``)."""
    entries: list[tuple[str, str, str]] = []
    for op in OPS.values():
        if op.kind == "generator":
            continue
        name = numpy_name(op)
        entries.append((name, "py:method" if op.kind == "cast" else "py:function",
                        f"reference/generated/{name}.html"))
    entries += [("numpy.dtype", "py:class", "reference/generated/numpy.dtype.html"),
                ("numpy.ndarray", "py:class", "reference/generated/numpy.ndarray.html"),
                ("numpy.asarray", "py:function", "reference/generated/numpy.asarray.html")]
    entries += [(f"numpy.{t}", "py:class", f"reference/arrays.scalars.html#numpy.{t}") for t in DTYPES]
    body = "".join(f"{name} {role} 1 {uri} -\n" for name, role, uri in dict.fromkeys(entries))
    header = (f"# Sphinx inventory version 2\n# Project: NumPy\n# Version: {np.__version__}\n"
              "# The remainder of this file is compressed using zlib.\n")
    with open(path, "wb") as f:
        f.write(header.encode() + zlib.compress(body.encode()))


def write(outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "ops.rst"), "w") as f:
        f.write(_ops_page())
    api, documented = _api_page()
    check_documented(documented)
    with open(os.path.join(outdir, "api.rst"), "w") as f:
        f.write(api)
    _numpy_inventory(os.path.join(outdir, "numpy-objects.inv"))

