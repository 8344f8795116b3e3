"""Render a lowered program into the Python source of ONE Numba CUDA kernel.

Two steps, both pure Python (no GPU, no Numba import):

* :func:`analyze` looks at the input buffers (shapes, strides) and the root, and picks the
  kernel *kind* and its geometry: ``map`` (elementwise: write the materialized output),
  ``full`` (a reduction to one value: per-block partials, the last block to finish combines
  them in a fixed order, in the same launch), ``rows`` (the reduced axes are the innermost:
  a row of threads per output) or ``cols`` (the kept axes are the innermost: a thread per
  output column, the reduced axes split over the block's rows). Dimensions are collapsed
  first (adjacent dimensions that every input walks contiguously become one), so the common
  case is one dimension and every contiguous input is indexed by the flat index itself.
* :func:`render` writes the kernel source for a program and a :class:`Spec` (the structural
  part of the geometry). Equal programs over equally laid-out inputs render the same source,
  which is what the compile cache keys on; sizes and strides are kernel arguments.

Every input and the output are plain pointers (``CPointer``) with explicit element offsets;
scalars are kernel arguments, so new scalar values reuse the compiled kernel. The parameter
list is rendered as data too (:mod:`.params`): the launch reads it, never the names.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..._program import Instr, Program
from ..._registry import TRANSCENDENTAL
from ..._shapes import broadcast_shapes
from . import fp_checks, helpers, stencil
from .params import FAST_DIVIDEND_LIMIT, Param, Role
from .templates import select

BLOCK = 256          # threads per block for map / full / rows
UNROLL = 4           # independent elements (loads in flight) per thread per loop iteration
COLS_TX, COLS_TY = 32, 16
#: Column reductions with this many outputs or more give each thread a whole output (256
#: consecutive outputs per block, no tree): enough outputs to fill the GPU, and a few-row
#: reduction (a middle axis of 32) is not split into 16 lanes of 2 rows each. Measured on the
#: H200, sum(x*x, axis=1) of a (512, 32, 16384) view: see docs/notes/gpu.rst.
COLS_ONE_THREAD_MIN_OUTPUTS = 1 << 18
ROWS_TX = 32         # lanes per output row (a warp: reduced with shuffles, no barriers)
#: Threads per SM that a grid-stride kernel's grid asks for (2048 = one full wave). Measured on
#: the H200 (docs/notes/gpu.rst): elementwise kernels do best with no cap (one tile per thread),
#: full reductions with two waves.
GRID_THREADS_PER_SM = {"map": 1 << 40, "full": 4096, "rows": 2048, "cols": 2048}
#: Ops that make a chain compute-heavy (libdevice calls, IEEE sqrt/division sequences): fewer
#: elements in flight per thread then leave more registers and warps (measured: the demo chain
#: runs 1.6x faster unrolled by 2 than by 4).
HEAVY_OPS = TRANSCENDENTAL | {"sqrt", "divide", "floor_divide", "remainder", "reciprocal", "philox_random64",
                                  "philox_random32"}
UNROLL_BY_KIND = {"map": 4, "full": 8, "rows": 4, "cols": 8}
HEAVY_UNROLL = 2
#: a draw's helper giving the numbers of two adjacent counters (_Kernel._paired_draws)
_PAIR_HELPER = {"philox_random64": "H_philox64x2", "philox_random32": "H_philox32x2"}
#: Reductions rendered natively (one launch). The others run the fused chain into a temporary
#: and reduce it with CuPy (a second launch, shown by ``explain``).
NATIVE_REDUCTIONS = ("sum", "prod", "min", "max", "mean", "any", "all")
FALLBACK_REDUCTIONS = ("var", "std", "argmin", "argmax")

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
BOOL, U8, I32, I64 = np.dtype(bool), np.dtype(np.uint8), np.dtype(np.int32), np.dtype(np.int64)
C128 = np.dtype(np.complex128)


# ----------------------------------------------------------------------------- dtypes
def compute_dtype(dt: np.dtype) -> np.dtype:
    """float16 values live in float32 registers (rounded to float16 after every op)."""
    return F32 if dt == F16 else dt


def storage_dtype(dt: np.dtype) -> np.dtype:
    """The pointer element type of a buffer: bool is stored as uint8."""
    return U8 if dt == BOOL else dt


def scalar_param_dtype(dt: np.dtype) -> np.dtype:
    return U8 if dt == BOOL else F32 if dt == F16 else dt


def cast_name(dt: np.dtype) -> str:
    return f"_C_{dt.name}"


def fsuffix(dt: np.dtype) -> str:
    return "f8" if dt in (F64, C128) else "f4"


# ----------------------------------------------------------------------------- geometry
@dataclass(frozen=True)
class Spec:
    """The structural part of a launch: with the program, it determines the kernel source."""

    kind: str                    # "map", "full", "rows", "cols"
    nd: int                      # map/full: collapsed dims; rows/cols: collapsed kept dims
    nred: int                    # rows/cols: collapsed reduced dims
    classes: tuple[str, ...]     # per input: "c" flat-contiguous, "b" one element, "s" strided
    tx: int
    ty: int
    unroll: int = UNROLL
    threads_per_sm: int = 2048
    singles: tuple[int, ...] = ()  # inputs holding a single element (NumPy's clip ties differ)
    # map/full: strided coordinates carried forward from one division per thread, instead of
    # a division per element. Off: with shared offsets it measured 4 % slower on the H200
    # (docs/notes/gpu.rst, "Strided kernels"); kept as a variant (gpu_variants.py, tests).
    carry: bool = False
    # map/full: per input, the first input with the same strides (k itself if none before it):
    # they share one offset computation (views of one buffer, as a stencil's). () when none shares.
    offsets_of: tuple[int, ...] = ()
    out_class: str = "c"         # map: "c" a flat contiguous result, "s" written through strides
    # map/full over a strided n-d space of fewer than 2**31 elements: each coordinate is a
    # multiply-high and a shift by the dim's magic numbers (params.fast_divisor), not a
    # division; the layout parameters ``mg{j}``, ``sh{j}`` hold them
    fastdiv: bool = False
    # map/full over 2-d: a field of shifted views computed once per element (.stencil)
    stencil: stencil.Stencil | None = None

    @property
    def block(self) -> int:
        return self.tx * self.ty


@dataclass
class Geometry:
    spec: Spec
    sizes: list[int]             # map/full: [n, dims...]; rows/cols: [M, K, kept..., reduced...]
    strides: list[list[int]]     # per input element strides (only used for class "s")
    out_size: int                # elements written (1 for full reductions)
    work: int                    # elements of the iteration space (for grid sizing)

    def grid(self, sms: int) -> int:
        s = self.spec
        cap = sms * max(1, s.threads_per_sm // s.block)
        if s.stencil is not None:
            tiles = -(-self.sizes[1] // stencil.TILE_ROWS) * -(-self.sizes[2] // stencil.TILE_COLS)
        elif s.kind in ("map", "full"):
            tiles = -(-self.work // (s.block * s.unroll))
        elif s.kind == "rows":
            tiles = -(-self.sizes[0] // s.ty)
        else:
            tiles = -(-self.sizes[0] // s.tx)
        return max(1, min(tiles, cap))


def _element_strides(a: Any, shape: tuple[int, ...]) -> list[int]:
    """Element strides of ``a`` broadcast to ``shape`` (0 along broadcast dimensions)."""
    nd, lead = len(shape), len(shape) - a.ndim
    item = a.dtype.itemsize
    out = [0] * nd
    for j in range(a.ndim):
        if a.shape[j] != 1:
            out[lead + j] = a.strides[j] // item
    return out


def _collapse(sizes: list[int], strides: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dims; merge neighbours that every input walks contiguously."""
    dims = [(n, [s[j] for s in strides]) for j, n in enumerate(sizes) if n != 1]
    merged: list[tuple[int, list[int]]] = []
    for n, st in dims:
        if merged:
            pn, pst = merged[-1]
            if all(a == b * n for a, b in zip(pst, st)):
                merged[-1] = (pn * n, st)
                continue
        merged.append((n, st))
    out_sizes = [n for n, _ in merged]
    out_strides = [[st[k] for _, st in merged] for k in range(len(strides))]
    return out_sizes, out_strides


def _classes(sizes: list[int], strides: list[list[int]]) -> tuple[str, ...]:
    contig = [math.prod(sizes[j + 1:]) for j in range(len(sizes))]
    classes = []
    for st in strides:
        if all(s == c for s, c in zip(st, contig)):
            classes.append("c")
        elif all(s == 0 for s in st):
            classes.append("b")
        else:
            classes.append("s")
    return tuple(classes)


def analyze(program: Program, inputs: list[Any], out: Any = None,
            addresses: Callable[[list[Any]], list[tuple[int, Any] | None]] | None = None
            ) -> Geometry:
    """Pick the kernel kind and geometry for running ``program`` over ``inputs``; ``out``: a
    map's result memory when it is not a new contiguous array (an element-aligned view with
    non-negative strides, of the result's shape: ``Backend.run_into``); ``addresses``: the
    backend's ``addresses`` (per input, its first element's address and its allocation), for
    a stencil's shifts (:mod:`.stencil`), asked only where a stencil may be (a 2-d map)."""
    geo = _analyze(program, inputs, out, _is_heavy(program),
                   tuple(k for k, a in enumerate(inputs) if a.size == 1))
    kind = geo.spec.kind
    if addresses is not None and kind in ("map", "full") and geo.spec.nd == 2 \
            and geo.spec.out_class == "c" and geo.work > 0:
        chain, value = _chain_and_value(program, kind)
        found = stencil.find(chain, value, geo.spec.classes, geo.strides[:len(inputs)], inputs,
                             addresses(inputs), HEAVY_OPS)
        if found is not None:
            geo.spec = replace(geo.spec, stencil=found, fastdiv=False,
                               unroll=stencil.TILE_ROWS * stencil.TILE_COLS // BLOCK)
    return geo


def _chain_and_value(program: Program, kind: str) -> tuple[tuple[Instr, ...], int]:
    """The instructions computed per element (a reduction's own left out) and the value's."""
    instrs = program.instrs
    if kind == "map":
        return instrs, len(instrs) - 1
    return instrs[:-1], program.root.args[0]


@functools.lru_cache(maxsize=256)
def _is_heavy(program: Program) -> bool:
    """Whether ``program`` computes an op of ``HEAVY_OPS`` (fewer elements in flight then)."""
    return any(ins.op in HEAVY_OPS for ins in program.instrs)


def _unroll(kind: str, heavy: bool, work: int) -> int:
    """Elements in flight per thread (``Spec.unroll``)."""
    if kind in ("map", "full") and work <= BLOCK:
        # At most one element per thread: no unrolling, so one copy of the chain is rendered
        # instead of 2 x U (tile and tail), the same values in the same order, compiled ~5x
        # faster (a 0-d loop value ``s + a[i]*b[i]``: docs/notes/gpu.rst, 2026-12-03g)
        return 1
    return HEAVY_UNROLL if heavy else UNROLL_BY_KIND[kind]


@functools.lru_cache(maxsize=1024)
def _spec(kind: str, nd: int, nred: int, classes: tuple[str, ...], tx: int, ty: int,
          unroll: int, singles: tuple[int, ...], offsets_of: tuple[int, ...] = (),
          out_class: str = "c", fastdiv: bool = False) -> Spec:
    """The :class:`Spec` of these fields, one object for equal fields: a loop whose shapes
    change every step (a new geometry each step, the same spec) neither builds a frozen
    dataclass (~3 µs) nor hashes its fields for the backend's kernel lookup again."""
    return Spec(kind, nd, nred, classes, tx, ty, unroll, GRID_THREADS_PER_SM[kind], singles,
                offsets_of=offsets_of, out_class=out_class, fastdiv=fastdiv)


def _analyze(program: Program, inputs: list[Any], out: Any, heavy: bool,
             singles: tuple[int, ...]) -> Geometry:
    root = program.root
    shapes = [tuple(a.shape) for a in inputs]
    it_shape = broadcast_shapes(*shapes) if shapes else ()
    strides = [_element_strides(a, it_shape) for a in inputs]
    if out is not None:       # (collapsed with the inputs: dims merge only where it is contiguous)
        strides.append(_element_strides(out, it_shape))
    if root.op in NATIVE_REDUCTIONS:
        axes = root.arg[0]
        axes = tuple(range(len(it_shape))) if axes is None else axes
        kept = [j for j in range(len(it_shape)) if j not in axes]
        if math.prod(it_shape[j] for j in kept) != 1 or any(it_shape[j] == 0 for j in kept):
            return _analyze_axes(it_shape, strides, kept, list(axes), heavy, singles)
    sizes, cstrides = _collapse(list(it_shape), strides)
    n = math.prod(it_shape)
    kind = "full" if root.op in NATIVE_REDUCTIONS else "map"
    out_class = "c"
    if out is not None:
        assert kind == "map", "only a map kernel writes into given memory"
        out_class = _classes(sizes, cstrides[-1:])[0]
        if out_class == "c":
            cstrides.pop()
    # (a strided result's strides stay last, Geometry.strides[len(inputs)]: its STRIDE params)
    classes = _classes(sizes, cstrides[:len(inputs)])
    fastdiv = len(sizes) > 1 and ("s" in classes or out_class == "s") and n < FAST_DIVIDEND_LIMIT
    spec = _spec(kind, len(sizes), 0, classes, BLOCK, 1, _unroll(kind, heavy, n), singles,
                 _shared_offsets(classes, cstrides[:len(inputs)]), out_class, fastdiv)
    return Geometry(spec, [n, *sizes], cstrides, 1 if kind == "full" else n, n)


def _shared_offsets(classes: tuple[str, ...], strides: list[list[int]]) -> tuple[int, ...]:
    """``Spec.offsets_of``: strided inputs with equal strides (the five views of a 5-point
    stencil) index with one offset expression: one multiply-add chain per element, not five."""
    if classes.count("s") < 2:
        return ()
    first: dict[tuple[int, ...], int] = {}
    out = tuple(first.setdefault(tuple(st), k) if cls == "s" else k
                for k, (cls, st) in enumerate(zip(classes, strides)))
    return out if any(j != k for k, j in enumerate(out)) else ()


def _analyze_axes(shape: tuple[int, ...], strides: list[list[int]], kept: list[int],
                  red: list[int], heavy: bool, singles: tuple[int, ...]) -> Geometry:
    ksizes, kstrides = _collapse([shape[j] for j in kept], [[s[j] for j in kept] for s in strides])
    rsizes, rstrides = _collapse([shape[j] for j in red], [[s[j] for j in red] for s in strides])
    M, K = math.prod(ksizes), math.prod(rsizes)
    inner = next((j for j in reversed(range(len(shape))) if shape[j] != 1), None)
    rows = inner in red
    if rows:
        tx = ROWS_TX if K >= ROWS_TX else 4
        ty = BLOCK // tx
    elif M >= COLS_ONE_THREAD_MIN_OUTPUTS:
        tx, ty = BLOCK, 1
    else:
        tx, ty = COLS_TX, COLS_TY
    kind = "rows" if rows else "cols"
    spec = _spec(kind, len(ksizes), len(rsizes), ("s",) * len(strides), tx, ty,
                 _unroll(kind, heavy, M * K), singles)
    allst = [ks + rs for ks, rs in zip(kstrides, rstrides)]
    return Geometry(spec, [M, K, *ksizes, *rsizes], allst, M, M * K)


# ----------------------------------------------------------------------------- reductions
@dataclass(frozen=True)
class Reduction:
    op: str
    value_dtype: np.dtype        # the chain's dtype
    result: np.dtype             # the root's dtype
    acc: np.dtype                # accumulator dtype (never float16 / bool)
    #: the dtype each value is cast to before accumulating (NumPy's loop dtype), when it
    #: differs from the chain's: float sum/prod/mean accumulate in float64 (the accumulation
    #: rule of ``reduction_rules``), the values first rounded to the loop dtype
    loop: np.dtype | None = None

    @property
    def parts(self) -> tuple[str, ...]:
        """Name suffixes of the accumulator's parts. A complex accumulator is two float64
        values (real, imaginary) in registers, shared memory, warp shuffles and the per-block
        partials alike, combined with float arithmetic written out here: no complex value
        inside the reduction (the H200 gave NaN and -0 where NumPy gives +-inf and +0 with
        complex accumulators, docs/notes/gpu.rst). Two reductions carry a third part:

        * ``prod``: ``_has``, 1.0 once the accumulator holds an element. An empty one (a
          lane, a thread or a block with no element) is never multiplied in: ``1+0j`` times
          ``inf+0j`` is ``inf+nanj``. NumPy's own product starts from ``1+0j`` once, so the
          result is multiplied by it once (``finalize_parts``).
        * ``min``/``max``: ``_ix``, the element's position in the reduced C order (+inf when
          empty), so that the first NaN and the first of equal values win whatever the tree
          (NumPy 2's sequential ``CLE``/``CGE`` order)."""
        if self.acc.kind != "c":
            return ("",)
        if self.op == "prod":
            return ("_re", "_im", "_has")
        if self.op in ("min", "max"):
            return ("_re", "_im", "_ix")
        return ("_re", "_im")

    @property
    def part_dtype(self) -> np.dtype:
        return F64 if self.acc.kind == "c" else self.acc

    def identity_parts(self) -> list[str]:
        if self.acc.kind != "c":
            return [self.identity()]
        D = cast_name(F64)
        if self.op in ("min", "max"):       # empty: no position (loses every comparison)
            inf = "math.inf" if self.op == "min" else "-math.inf"
            return [f"{D}({inf})", f"{D}({inf})", f"{D}(math.inf)"]
        parts = [f"{D}({1 if self.op == 'prod' else 0})", f"{D}(0)"]
        return parts + [f"{D}(0)"] if self.op == "prod" else parts

    def prepare_parts(self, v: str, idx: str = "") -> list[str]:
        """A chain value as accumulator operands (one per part); ``idx``: its position in
        the reduced C order (complex min/max)."""
        if self.acc.kind != "c":
            return [self.prepare(v)]
        D = cast_name(F64)
        src = self.value_dtype
        if self.loop is not None:           # rounded to NumPy's loop dtype first
            v, src = _cast_expr(v, src, self.loop), self.loop
        if src.kind != "c":
            parts = [f"{D}({v})", f"{D}(0)"]
        else:
            parts = [f"{D}({v}.real)", f"{D}({v}.imag)"]
        if self.op == "prod":
            return parts + [f"{D}(1)"]
        if self.op in ("min", "max"):
            return parts + [f"{D}({idx})"]
        return parts

    def combine_statement(self, targets: list[str], a: list[str], b: list[str]) -> str:
        """One line setting ``targets`` (the parts) to the combination of ``a`` and ``b``;
        a complex product, min or max calls :attr:`combine_helper`'s function."""
        helper = self.combine_helper
        if helper is not None:
            return f"{', '.join(targets)} = {helper[0]}({', '.join(a + b)})"
        return f"{', '.join(targets)} = {', '.join(self.combine_parts(a, b))}"

    @functools.cached_property
    def combine_helper(self) -> tuple[str, str] | None:
        """(name, source) of the device function combining two complex accumulators of a
        product, min or max, or None. Their combines branch (which parts are empty or NaN,
        which value wins); written out at each of a kernel's ~40 combines, those branches made
        Numba's SSA and typing passes, which grow with the square of a function's blocks, take
        10-20 s per kernel (docs/notes/gpu.rst, 2026-12-03g). A device function is typed once
        and inlined by LLVM (``_devfn``: forceinline)."""
        if self.acc.kind != "c" or self.op not in ("prod", "min", "max"):
            return None
        a, b = ["ar", "ai", "ax"], ["br", "bi", "bx"]
        name = f"_combine_{self.op}"
        head = f"def {name}({', '.join(a + b)}):"
        if self.op == "prod":
            return name, f"{head}\n    return {', '.join(self.combine_parts(a, b))}\n"
        # min/max: whether ``a`` is kept
        return name, (f"{head}\n    if {self.combine_parts(a, b)[0]}:\n        return ar, ai, ax\n"
                      f"    return br, bi, bx\n")

    def combine_parts(self, a: list[str], b: list[str]) -> list[str]:
        """The combined parts, each an expression of the old ones (assign them together);
        complex min/max: one expression, whether ``a`` is kept (``combine_statement``)."""
        if self.acc.kind != "c":
            return [self.combine(a[0], b[0])]
        D = cast_name(F64)
        (ar, ai), (br, bi) = a[:2], b[:2]
        if self.op == "prod":       # NumPy's complex product loop: the plain formula (no FMA)
            ah, bh = a[2], b[2]
            both = f"(({ah} != 0) & ({bh} != 0))"
            return [f"({D}({D}({ar} * {br}) - {D}({ai} * {bi})) if {both} else ({ar} if {ah} != 0 else {br}))",
                    f"({D}({D}({ar} * {bi}) + {D}({ai} * {br})) if {both} else ({ai} if {ah} != 0 else {bi}))",
                    f"({ah} if {ah} != 0 else {bh})"]
        if self.op in ("min", "max"):
            # NumPy 2's lexicographic order; a NaN part wins, the first (smallest position)
            # of several NaNs or of equal values (+0 == -0) wins
            ax, bx = a[2], b[2]
            lt = "<" if self.op == "min" else ">"
            # (no ``~``: on a bool Numba's is Python's, ~True == -2)
            an = f"(({ar} != {ar}) | ({ai} != {ai}))"          # a has a NaN part
            bnum = f"(({br} == {br}) & ({bi} == {bi}))"        # b has none
            first = f"({ax} < {bx})"
            better = (f"(({ar} {lt} {br}) | (({ar} == {br}) & ({ai} {lt} {bi})) | "
                      f"(({ar} == {br}) & ({ai} == {bi}) & {first}))")
            return [f"(({an} & ({bnum} | {first})) | ({bnum} & {better}))"]
        return [f"{D}({ar} + {br})", f"{D}({ai} + {bi})"]

    def finalize_parts(self, a: list[str], count: str) -> str:
        if self.acc.kind != "c":
            return self.finalize(a[0], count)
        re, im = a[:2]
        D = cast_name(F64)
        if self.op == "mean":
            # NumPy's complex true_divide by (count + 0j): Smith's algorithm, a * (1 / count)
            # (NaN * 0 and -0.0 + 0.0 as NumPy's), not a / count
            scl = f"(1.0 / {D}({count}))"
            re, im = f"(({re} + {im} * 0.0) * {scl})", f"(({im} - {re} * 0.0) * {scl})"
        elif self.op == "prod":
            # NumPy's product starts from 1+0j: (1+0j) times the product, once
            re, im = (f"{D}({D}(1.0 * {re}) - {D}(0.0 * {im}))",
                      f"{D}({D}(1.0 * {im}) + {D}(0.0 * {re}))")
        return _cast_expr(f"{cast_name(C128)}(complex({re}, {im}))", C128, self.result)

    def identity(self) -> str:
        a = self.acc
        if self.op in ("sum", "mean", "any"):
            v: object = 0
        elif self.op in ("prod", "all"):
            v = 1
        elif a.kind == "f":
            v = "math.inf" if self.op == "min" else "-math.inf"
        else:
            info = np.iinfo(a)
            v = info.max if self.op == "min" else info.min
        return f"{cast_name(a)}({v})"

    def prepare(self, v: str) -> str:
        """A chain value as an accumulator operand."""
        if self.op in ("any", "all"):
            return f"{cast_name(U8)}({v} != 0)"
        if self.loop is not None:
            v = _cast_expr(v, self.value_dtype, self.loop)
        return f"{cast_name(self.acc)}({v})"

    def combine(self, a: str, b: str) -> str:
        op, A = self.op, cast_name(self.acc)
        if op in ("sum", "mean"):
            return f"{A}({a} + {b})"
        if op == "prod":
            return f"{A}({a} * {b})"
        if op == "any":
            return f"({a} | {b})"
        if op == "all":
            return f"({a} & {b})"
        if self.acc.kind == "f":
            # NaN wins; on a tie of zeros IEEE 754-2019: max prefers +0, min -0 (the sign-of-
            # zero rule of reduction_rules); equal non-zero values have the same bits
            # (| and &, not or/and: no short-circuit branches, one select; the operands are
            # plain names, so evaluating every test costs nothing)
            if op == "max":
                return (f"({a} if (({a} > {b}) | ({a} != {a}) | (({a} == {b}) & "
                        f"(math.copysign(1.0, {b}) < 0))) else {b})")
            return (f"({a} if (({a} < {b}) | ({a} != {a}) | (({a} == {b}) & "
                    f"(math.copysign(1.0, {a}) < 0))) else {b})")
        cmp = ">=" if op == "max" else "<="
        return f"({a} if {a} {cmp} {b} else {b})"

    def finalize(self, a: str, count: str) -> str:
        if self.op == "mean" and self.acc.kind not in "fc":
            # mean(dtype=<int or bool>), as NumPy's _mean: the sum wrapped in that dtype, then
            # true_divide in float64, cast back unsafely
            total = f"{cast_name(F64)}({_cast_expr(a, self.acc, self.result)})"
            return _cast_expr(f"({total} / {cast_name(F64)}({count}))", F64, self.result)
        if self.op == "mean":
            a = f"({a} / {cast_name(self.acc)}({count}))"
        return _cast_expr(a, self.acc, self.result)


def _shuffle_dtype(acc: np.dtype) -> np.dtype:
    """The type a warp shuffle carries an accumulator in (32/64-bit ints and floats only)."""
    if acc in (F32, F64, I32, I64):
        return acc
    return I64


def reduction_of(root: Instr, value_dtype: np.dtype) -> Reduction:
    R = root.dtype
    if root.op in ("any", "all"):
        acc = U8
    elif root.op in ("min", "max"):
        acc = U8 if value_dtype == BOOL else compute_dtype(value_dtype)
    elif R.kind in "fc":  # sum, prod, mean: the accumulation rule (float64, rounded once;
        # complex: complex128)
        return Reduction(root.op, value_dtype, R, C128 if R.kind == "c" else F64,
                         None if value_dtype == R else R)
    else:       # integer sum/prod, mean(dtype=<int>): wraps around as NumPy's
        acc = compute_dtype(R)
    return Reduction(root.op, value_dtype, R, acc)


# ----------------------------------------------------------------------------- expressions
def _cast_expr(e: str, src: np.dtype, dst: np.dtype) -> str:
    """``e`` (of compute dtype of ``src``) converted to ``dst`` as ``ndarray.astype`` does."""
    if dst == BOOL:
        return f"({e} != 0)"
    if src.kind == "c" and dst.kind != "c":     # NumPy casts the real part (ComplexWarning)
        return _cast_expr(f"{e}.real", np.finfo(src).dtype, dst)
    C = cast_name(dst)
    if src.kind == "f" and dst.kind in "iu":
        if dst.kind == "i" and dst.itemsize < 4:
            return f"{C}(_C_int32({e}))"
        if dst.kind == "u" and dst.itemsize < 8:
            return f"{C}(_C_int64({e}))"
        if dst.kind == "u":
            return f"({C}({e}) if {e} >= 9223372036854775808.0 else {C}(_C_int64({e})))"
    if compute_dtype(src) == compute_dtype(dst) and dst != F16 and src != F16:
        return e if src == dst else f"{C}({e})"
    return f"{C}({e})"


class _Source:
    """Accumulates a kernel module: helper functions first, then the kernel."""

    def __init__(self) -> None:
        self.helpers: dict[str, str] = {}

    def op_expr(self, ins: Instr, operands: list[str], operand_dtypes: list[np.dtype],
                variant: str | None = None) -> str:
        key_dt = operand_dtypes[1] if ins.op == "where" else operand_dtypes[0]
        template = select(ins.op, key_dt, variant)
        if template is None:
            raise NotImplementedError(f"no CUDA template for {ins.op} on {key_dt}")
        cdt = compute_dtype(key_dt)
        expr = template.format(*operands, T=cast_name(compute_dtype(ins.dtype)), W=key_dt.itemsize * 8)
        expr = helpers.FLOAT_CALL.sub(lambda m: f"F_{m.group(1)}_{fsuffix(cdt)}(", expr)

        expr = helpers.HELPER_CALL.sub(lambda m: self.helper(m.group(1), cdt) + "(", expr)
        return f"{cast_name(ins.dtype)}({expr})"

    def helper(self, helper: str, cdt: np.dtype) -> str:
        """The name of ``helper`` for compute dtype ``cdt``, its source added (and first the
        helpers it calls)."""
        name = f"{helper}_{cdt.name}"
        if name not in self.helpers:
            for called in helpers.CALLS[helper]:
                self.helper(called, cdt)
            self.helpers[name] = helpers.helper_source(helper, cdt, name, cast_name(cdt), fsuffix(cdt))
        return name


# ----------------------------------------------------------------------------- parameter names
def _input_name(k: int) -> str:
    return f"p{k}"


def _scalar_name(pos: int) -> str:
    return f"s{pos}"


def _stride_name(k: int, axis: int) -> str:
    return f"st{k}_{axis}"


def _out_stride_name(axis: int) -> str:
    return f"so_{axis}"


def _size_params(spec: Spec) -> list[Param]:
    """The sizes of the iteration space, one parameter per entry of ``Geometry.sizes``: map and
    full kernels ``n`` (elements) and ``d{j}`` (the collapsed dims), rows and cols kernels ``M``
    (outputs), ``K`` (elements reduced per output), ``dm{j}`` (kept dims) and ``dk{j}``
    (reduced dims). The kernel bodies index with these names."""
    if spec.kind in ("map", "full"):
        names = ["n"] + [f"d{j}" for j in range(spec.nd)]
    else:
        names = ["M", "K"] + [f"dm{j}" for j in range(spec.nd)] + [f"dk{j}" for j in range(spec.nred)]
    ps = [Param(name, Role.SIZE, I64, index=i) for i, name in enumerate(names)]
    if spec.fastdiv:     # (d{j} is Geometry.sizes[j + 1]; dim 0 is never a divisor)
        ps += [Param(f"{name}{j}", role, I64, index=j + 1) for j in range(1, spec.nd)
               for name, role in (("mg", Role.DIV_MAGIC), ("sh", Role.DIV_SHIFT))]
    return ps


def _load(k: int, dt: np.dtype, off: str) -> str:
    ref = f"{_input_name(k)}[{off}]"
    if dt == BOOL:
        return f"({ref} != 0)"
    if dt == F16:
        return f"_C_float32({ref})"
    return ref


def _store(dt: np.dtype, v: str) -> str:
    if dt == BOOL:
        return f"_S_uint8({v})"
    if dt == F16:
        return f"_S_float16({v})"
    return v


# ----------------------------------------------------------------------------- kernels
@dataclass
class Rendered:
    source: str
    name: str
    params: list[Param]                       # the kernel's parameters, in order
    block: int = BLOCK                        # threads per block (launch bounds)
    kind: str = "map"                         # Spec.kind: picks the PTX -> SASS route
    #: checked kernels: NumPy's name of each op site whose flags ``fpe[k]`` holds (fp_checks)
    fpe_sites: tuple[str, ...] = ()


class _Kernel:
    def __init__(self, program: Program, spec: Spec, shuffles: bool = True,
                 checked: bool = False) -> None:
        self.program, self.spec, self.shuffles = program, spec, shuffles
        self.src = _Source()
        instrs = program.instrs
        self.reduction: Reduction | None = None
        if spec.kind != "map":
            self.reduction = reduction_of(program.root, instrs[program.root.args[0]].dtype)
        self.chain, self.value_index = _chain_and_value(program, spec.kind)
        # (a random draw's counters are an input without memory: its value is computed)
        self.inputs = [(n, ins) for n, ins in enumerate(instrs) if ins.op in ("input", "counter")]
        self.input_dtypes = {ins.arg[0]: ins.dtype for _, ins in self.inputs}
        self.counters = frozenset(ins.arg[0] for _, ins in self.inputs if ins.op == "counter")
        self.n_inputs = len(self.input_dtypes)
        self.scalars = sorted({ins.arg: ins.dtype for ins in instrs if ins.op == "scalar"}.items())
        # per chain value: one element only (built from scalars and size-1 inputs alone)
        self.single: list[bool] = []
        for ins in self.chain:
            self.single.append(ins.arg[0] in spec.singles if ins.op in ("input", "counter") else
                               ins.op == "scalar" or all(self.single[a] for a in ins.args))
        self.paired_draws = self._paired_draws()
        self.sites: list[str] = []          # checked: the op sites' names (fp_checks)
        self.site_of: dict[int, int] = {}   # chain value -> its site
        self.implied: set[int] = set()      # sites whose test a later one implies
        if checked:
            self._find_sites()
            self.implied = fp_checks.implied_tests(self.chain, self.site_of)

    def _find_sites(self) -> None:
        """The sites whose floating-point flags a checked kernel records: each raising op of
        the chain, then the reduction's accumulation (NumPy's "reduce")."""
        for n, ins in enumerate(self.chain):
            if ins.op in ("input", "counter", "scalar"):
                continue
            name = fp_checks.site_name(ins, [self.chain[a].dtype for a in ins.args])
            if name is not None and len(self.sites) < fp_checks.MAX_SITES - 1:
                self.site_of[n] = len(self.sites)
                self.sites.append(name)
        red = self.reduction
        if red is not None and red.op in ("sum", "prod", "mean") and red.acc.kind == "f":
            self.reduce_site = len(self.sites)
            self.sites.append("reduce")

    def _paired_draws(self) -> list[int]:
        """The draws computed two elements at a time (``_PAIR_HELPER``): in a flat kernel whose
        thread takes adjacent elements, a draw read in order (its counter is ``offset + i``)
        with scalar key and stream gets the numbers of elements ``i`` and ``i + 1`` from one
        Philox block, where one element at a time uses half of each of two."""
        s = self.spec
        if s.kind not in ("map", "full") or s.unroll % 2:
            return []
        instrs = self.program.instrs
        return [n for n, ins in enumerate(self.chain) if ins.op in _PAIR_HELPER
                and instrs[ins.args[0]].op == "counter" and not self.single[ins.args[0]]
                and s.classes[instrs[ins.args[0]].arg[0]] == "c"
                and all(instrs[a].op == "scalar" for a in ins.args[1:])]

    # -- parameters
    def params(self) -> list[Param]:
        """The parameter recipe: output, (partials, counter), per input its pointer and strides,
        scalars, then the sizes of the iteration space."""
        s, root = self.spec, self.program.root
        ps = [Param("out", Role.OUTPUT, storage_dtype(root.dtype))]
        if s.out_class == "s":
            ps += [Param(_out_stride_name(j), Role.STRIDE, I64, input=self.n_inputs, index=j)
                   for j in range(s.nd)]
        if self.sites:
            ps.append(Param("fpe", Role.FPE, np.dtype(np.uint32)))
        if s.kind == "full":
            assert self.reduction is not None
            ps += [Param("partials", Role.PARTIALS, self.reduction.part_dtype,
                         index=len(self.reduction.parts) if self.reduction.acc.kind == "c" else -1),
                   Param("counter", Role.COUNTER, np.dtype(np.uint32))]
        nst = s.nd if s.kind in ("map", "full") else s.nd + s.nred
        for k in range(self.n_inputs):
            if k in self.counters:     # the counter of element 0 (a value: no memory)
                ps.append(Param(_input_name(k), Role.COUNTER_OFFSET, I64, input=k))
            else:
                ps.append(Param(_input_name(k), Role.INPUT, storage_dtype(self.input_dtypes[k]), input=k))
            if s.classes[k] == "s":
                ps += [Param(_stride_name(k, j), Role.STRIDE, I64, input=k, index=j) for j in range(nst)]
        for pos, dt in self.scalars:
            if dt.kind == "c":      # its parts, one float each (index 0, 1: the ABI takes no complex)
                ps += [Param(f"{_scalar_name(pos)}_{j}", Role.SCALAR, np.finfo(dt).dtype, input=pos,
                             index=j) for j in (0, 1)]
            else:
                ps.append(Param(_scalar_name(pos), Role.SCALAR, scalar_param_dtype(dt), input=pos))
        return ps + _size_params(s)

    # -- chain values
    def scalar_setup(self) -> list[str]:
        lines = []
        for pos, dt in self.scalars:
            name = _scalar_name(pos)
            if dt.kind == "c":
                lines.append(f"sv{pos} = {cast_name(dt)}(complex({name}_0, {name}_1))")
                continue
            lines.append(f"sv{pos} = ({name} != 0)" if dt == BOOL else f"sv{pos} = {name}")
        return lines

    def loads(self, u: str, offs: dict[int, str], only: Collection[int] | None = None) -> list[str]:
        return [f"v{n}{u} = " + (f"_C_uint64({_input_name(ins.arg[0])} + {offs[ins.arg[0]]})"
                                 if ins.op == "counter" else _load(ins.arg[0], ins.dtype, offs[ins.arg[0]]))
                for n, ins in self.inputs if n < len(self.chain) and (only is None or n in only)]

    def pairs(self, u: int) -> list[str]:
        """The paired draws of elements ``u`` and ``u + 1``: both halves of one Philox block
        (rendered in the loop that runs when every paired draw starts at an even counter)."""
        lines = []
        for n in self.paired_draws:
            ins = self.chain[n]
            name = self.src.helper(_PAIR_HELPER[ins.op], compute_dtype(self.chain[ins.args[0]].dtype))
            key, stream = (f"sv{self.chain[a].arg}" for a in ins.args[1:])
            lines.append(f"v{n}_{u}, v{n}_{u + 1} = {name}(v{ins.args[0]}_{u}, {key}, {stream})")
        return lines

    def computes(self, u: str, given: Collection[int] = (),
                 deferred: list[fp_checks.Check] | None = None,
                 only: Collection[int] | None = None,
                 implied: Collection[int] | None = None) -> list[str]:
        """The chain's values of element ``u`` (``given``: already computed, as ``v{n}{u}``;
        ``only``: these values alone), each checked op's test after them; with ``deferred``,
        the tests go there instead. ``implied``: the tests a later one implies (default: the
        whole chain's, ``self.implied``)."""
        implied = self.implied if implied is None else implied
        lines = []
        names: dict[int, str] = {}
        checks: list[fp_checks.Check] = []
        for n, ins in enumerate(self.chain):
            if only is not None and n not in only:
                continue
            if ins.op in ("input", "counter") or n in given:
                names[n] = f"v{n}{u}"
            elif ins.op == "scalar":
                names[n] = f"sv{ins.arg}"
            else:
                ops = [names[a] for a in ins.args]
                dts = [self.chain[a].dtype for a in ins.args]
                if ins.op == "astype":
                    expr = _cast_expr(ops[0], dts[0], ins.dtype)
                else:
                    variant = "single-bounds" if ins.op == "clip" and all(
                        self.single[a] for a in ins.args[1:]) else None
                    expr = self.src.op_expr(ins, ops, dts, variant)
                lines.append(f"v{n}{u} = {expr}")
                names[n] = f"v{n}{u}"
                if n in self.site_of:
                    checks.append(fp_checks.check(ins, self.site_of[n], names[n], ops, dts)
                                  ._replace(implied=n in implied))
        if deferred is not None:
            deferred += checks
        else:
            lines += fp_checks.merged(checks)
        self.value_name = names
        return lines

    def value(self, u: str) -> str:
        ins = self.program.instrs[self.value_index]
        return f"sv{ins.arg}" if ins.op == "scalar" else f"v{self.value_index}{u}"

    # -- flat (map / full) offsets
    def flat_offsets(self, idx: str, u: str) -> tuple[list[str], dict[int, str]]:
        s = self.spec
        lines: list[str] = []
        offs: dict[int, str] = {}
        strided = [k for k in range(self.n_inputs) if s.classes[k] == "s"] or s.out_class == "s"
        coords: list[str] = []
        if strided and self._carried():     # set at the loop's head (_flat_loop)
            coords = [f"c{j}{u}" for j in range(s.nd)]
        elif strided and s.nd > 1:
            lines.append(f"r{u} = {idx}")
            for j in reversed(range(1, s.nd)):
                if s.fastdiv:   # r // d{j} (r < 2**31): params.fast_divisor
                    lines.append(f"qd{u} = (_C_uint32(_umulhi(_C_uint32(r{u}), _C_uint32(mg{j}))) + r{u}) >> sh{j}")
                    lines.append(f"c{j}{u} = r{u} - qd{u} * d{j}")
                    lines.append(f"r{u} = qd{u}")
                else:
                    lines.append(f"c{j}{u} = r{u} % d{j}")
                    lines.append(f"r{u} = r{u} // d{j}")
            lines.append(f"c0{u} = r{u}")
            coords = [f"c{j}{u}" for j in range(s.nd)]
        elif strided:
            coords = [idx]
        for k in range(self.n_inputs):
            cls = s.classes[k]
            if cls == "c":
                offs[k] = idx
            elif cls == "b":
                offs[k] = "0"
            elif s.offsets_of and s.offsets_of[k] != k:
                offs[k] = offs[s.offsets_of[k]]
            else:
                offs[k] = " + ".join(f"{c} * {_stride_name(k, j)}" for j, c in enumerate(coords))
                if s.offsets_of and k in s.offsets_of[k + 1:]:
                    lines.append(f"o{k}{u} = {offs[k]}")
                    offs[k] = f"o{k}{u}"
        return lines, offs

    def unrolled(self, var: str, index: Callable[[int], str], limit: str,
                 offsets: Callable[[str, str], tuple[list[str], dict[int, str]]],
                 consume: Callable[[str, str], list[str]],
                 paired: bool = False) -> tuple[list[str], list[str]]:
        """The ``U`` elements ``{var}_u = index(u)`` of one tile, as (the tile when all are in
        range: every load before any compute, for loads in flight; the tail: each element
        guarded by ``if {var}_u < limit``). ``consume(u, idx)`` -> lines using the value.
        ``paired``: the tile of flat_tile's paired loop (elements ``u, u + 1`` adjacent)."""
        full = [f"{var}_{u} = {index(u)}" for u in range(self.spec.unroll)]
        offs_all = []
        for u in range(self.spec.unroll):
            lines, offs = offsets(f"{var}_{u}", f"_{u}")
            full += lines
            offs_all.append(offs)
        for u, offs in enumerate(offs_all):
            full += self.loads(f"_{u}", offs)
        if self.spec.unroll > 1 and self.shuffles:
            # pins the tile's loads ahead of its arithmetic: without it, NVVM sinks each
            # element's loads past the previous element's sqrt.rn/div.rn, whose slow paths are
            # branches, so a thread had one element's loads in flight instead of the tile's.
            # activemask(): the threads here now, so none waits on a lane that left the loop.
            # (The simulator has no warp primitives; ``shuffles`` is False there.)
            # H100, gpu_ab.py --large-only: the chain's sum 2^28 802 -> 738 us kernel-only,
            # the maps unchanged (docs/notes/gpu.rst, "2026-12-05e")
            full.append("cuda.syncwarp(cuda.activemask())")
        for u in range(0, self.spec.unroll, 2) if paired else ():
            full += self.pairs(u)
        # a checked kernel tests the whole tile's results at once, branch-free (``&``), after
        # the tile: one branch per tile, not one per element, which kept the loop's loads
        # and arithmetic from flowing (a column sum 54 % slower on the H200, 2026-12-03e).
        # Not past fp_checks.TILE_SITES sites: the values kept for the tile's test cost
        # registers (a 16-op chain, 12 sites: 30 -> 39, 16 % slower than per element)
        deferred = [] if self.site_of and len(self.site_of) <= fp_checks.TILE_SITES else None
        for u in range(self.spec.unroll):
            full += self.computes(f"_{u}", self.paired_draws if paired else (), deferred)
        for u in range(self.spec.unroll):
            full += consume(f"_{u}", f"{var}_{u}")
        if deferred is not None and self._recomputes_failed_tiles(offsets, paired):
            # A map's failed tile (an inf or NaN in it: rare) is computed again element by
            # element, each with its own checks, after the tile's stores: so the test keeps
            # only the results alive, not every intermediate value of the tile for the flags
            # (Jacobi: 52 -> 32 registers, as unchecked: docs/notes/gpu.rst 2026-12-04b).
            # The loads read the same values again: a map's result never shares memory with
            # its inputs (``run_into`` computes such a value into a temporary first).
            lines, offs = offsets(f"{var}_r", "_r")
            again = [f"{var}_r = {index('ur')}", *lines, *self.loads("_r", offs), *self.computes("_r")]
            full += [fp_checks.usual_test(deferred),
                     f"    for ur in range({self.spec.unroll}):", *("        " + ln for ln in again)]
        elif deferred is not None:
            full += fp_checks.merged(deferred)
        tail: list[str] = []
        for u in range(self.spec.unroll):
            tail += [f"{var}_{u} = {index(u)}", f"if {var}_{u} < {limit}:"]
            lines, offs = offsets(f"{var}_{u}", f"_{u}")
            tail += ["    " + ln for ln in lines + self.loads(f"_{u}", offs) + self.computes(f"_{u}")
                     + consume(f"_{u}", f"{var}_{u}")]
        return full, tail

    def tiles(self, consume: Any, indent: str) -> list[str]:
        """The loop over the iteration space; ``consume(u, idx)`` -> lines using the value."""
        if self.spec.stencil is not None:
            return [indent + ln for ln in self._stencil_tiles(consume)]
        return self.flat_tile(consume, indent)

    def _stencil_tiles(self, consume: Any) -> list[str]:
        """Grid-stride loop over 2-d tiles of ``TILE_ROWS x TILE_COLS`` outputs (a warp per
        tile row, ``U`` rows a thread). Per tile, each field (:mod:`.stencil`) is computed
        once per element of its region into shared memory, then each output reads its
        shifted values there and computes the rest of the chain.

        A region is the tile grown by the shifts' span: ``TILE_COLS`` columns that thread
        ``(tx, ty)`` covers at rows ``ty + 8k``, then the few columns past them (the halo),
        flattened over the block. What is fixed per thread (a slot's offset from the tile's
        first element, int32) is found once: LLVM hoists such values out of the loop
        anyway, one register each, and per-element coordinates took 180+ registers."""
        s, st = self.spec, self.spec.stencil
        assert st is not None
        TH, TW = stencil.TILE_ROWS, stencil.TILE_COLS
        BR = s.block // TW                         # thread rows: a thread's outputs are BR apart
        given = st.given
        deferred: list[fp_checks.Check] = []    # the fields' checks: tested once, after them
        mine = stencil.consumer(self.chain, self.value_index, given)
        # (tiles in row-major order, a block's next one gridDim.x later: its tile row and
        # column carried forward, not divided out per tile, an int64 division being a
        # subroutine call)
        out = [f"tx = cuda.threadIdx.x % {TW}",
               f"ty = cuda.threadIdx.x // {TW}",
               f"ntc = (d1 + {TW - 1}) // {TW}",
               f"ntr = (d0 + {TH - 1}) // {TH}",
               "gq = cuda.gridDim.x // ntc",
               "gr = cuda.gridDim.x - gq * ntc",
               "tr = cuda.blockIdx.x // ntc",
               "tc = cuda.blockIdx.x - tr * ntc"]
        per_tile: list[str] = []
        fill: list[str] = []
        computes: list[str] = []
        last: list[str] = []
        for g, f in enumerate(st.fields):
            rh, rw = f.region
            hx = rw - TW
            full_rows, part = divmod(rh, BR)       # slots k < full_rows: every thread's row
            halos = -(-rh * hx // s.block)         # halo slots of the block (0 without)
            s0, s1 = (_stride_name(f.base, j) for j in (0, 1))

            def at(di: Any, dj: Any, s0: str = s0, s1: str = s1) -> str:
                return f"({di}) * {s0} + ({dj}) * {s1}"

            shifts = sorted({(di, dj) for _, di, dj in f.tops})

            def needed(r: str, c: str) -> str:
                """Whether the element at base coordinates (r, c) is one that some output reads
                (in a shift's window; one unsigned compare per bound)."""
                return "(" + " | ".join(
                    f"((_C_uint64({r} - {di}) < _C_uint64(d0)) & (_C_uint64({c} - {dj}) < _C_uint64(d1)))"
                    for di, dj in shifts) + ")"
            # slots: (base row, base column (tile-variant: nothing of them is hoisted out of the
            # loop), offset from the tile's address (int32, fixed per thread), shared index)
            slots = [(f"rb{g} + {BR * k}", f"cb{g}", f"o{g}_{k}", f"sb{g} + _C_uint64({k * BR * rw})")
                     for k in range(full_rows + (part > 0))]
            slots += [(f"r0 + hr{g}_{h} + {f.di0}", f"c0 + {TW + f.dj0} + hc{g}_{h}", f"oh{g}_{h}", f"hs{g}_{h}")
                      for h in range(halos)]
            out += [f"sf{g} = cuda.shared.array({rh * rw}, _NT_{compute_dtype(f.dtype).name})",
                    # (shared indices unsigned: a signed one is wrapped like Python's, a select
                    # per index that LLVM hoisted out of the loop, one register each)
                    f"sb{g} = _C_uint64(ty * {rw} + tx)",
                    f"safe{g} = {at(*f.tops[0][1:])}"]   # (a needed element: the first top's at output 0)
            out += [f"o{g}_{k} = _C_int32({at(f'ty + {BR * k + f.di0}', f'tx + {f.dj0}')})"
                    for k in range(full_rows + (part > 0))]
            for h in range(halos):
                q = f"(cuda.threadIdx.x + {h * s.block})"
                out += [f"hv{g}_{h} = {q} < {rh * hx}",
                        f"hr{g}_{h} = min({q} // {hx}, {rh - 1})",
                        f"hc{g}_{h} = {q} % {hx}",
                        f"oh{g}_{h} = _C_int32({at(f'hr{g}_{h} + {f.di0}', f'{TW} + hc{g}_{h} + {f.dj0}')})",
                        f"hs{g}_{h} = _C_uint64(hr{g}_{h} * {rw} + {TW} + hc{g}_{h})"]
            # a tile whose region lies in every shift's window (four compares) reads only
            # elements that outputs read: the usual tile; one at the array's border tests
            # each element
            di1, dj1 = max(di for di, _ in shifts), max(dj for _, dj in shifts)
            per_tile += [f"ta{g} = {at('r0', 'c0')}",
                         f"rb{g} = r0 + ty + {f.di0}",
                         f"cb{g} = c0 + tx + {f.dj0}",
                         f"clear{g} = (r0 >= {di1 - f.di0}) & (r0 + {rh} <= d0) & "
                         f"(c0 >= {dj1 - f.dj0}) & (c0 + {rw} <= d1)"]
            sub = stencil.subtree(self.chain, f.rep)
            # (its own implications: the ops after it are not computed here)
            implied = fp_checks.implied_tests(list(self.chain), [n for n in self.site_of if n in sub])
            clear: list[str] = []
            border: list[str] = []
            for j, (r, c, addr, index) in enumerate(slots):
                loads = [f"v{n}_f{g}_{j} = " + (_load(self.chain[n].arg[0], self.chain[n].dtype, "0")
                                                if s.classes[self.chain[n].arg[0]] == "b" else
                                                _load(f.base, self.chain[n].dtype, f"a{g}_{j}"))
                         for n in sorted(sub) if self.chain[n].op == "input"]
                partial = full_rows <= j < full_rows + (part > 0)    # the last rows: some warps
                work = self.computes(f"_f{g}_{j}", only=sub, implied=implied,
                                     deferred=None if partial else deferred)
                store = f"sf{g}[{index}] = v{f.rep}_f{g}_{j}"
                in_clear = f"a{g}_{j} = ta{g} + {addr}"
                in_border = f"a{g}_{j} = ta{g} + {addr} if {needed(r, c)} else safe{g}"
                if partial:
                    address = [f"if clear{g}:", f"    {in_clear}", "else:", f"    {in_border}"]
                    last += [f"if ty < {part}:", *("    " + ln for ln in address + loads + work + [store])]
                    continue
                clear.append(in_clear)
                border.append(in_border)
                fill += loads
                if j >= full_rows:                                 # a halo slot
                    computes += work + [f"if hv{g}_{j - full_rows - (part > 0)}:", f"    {store}"]
                else:
                    computes += work + [store]
            per_tile += [f"if clear{g}:", *("    " + ln for ln in clear),
                         "else:", *("    " + ln for ln in border)]
        if self.shuffles:
            fill.append("cuda.syncwarp(cuda.activemask())")   # (the loads ahead: see unrolled)
        computes += fp_checks.merged(deferred)

        def output(i: int | str, u: str = "", deferred: list[fp_checks.Check] | None = None,
                   use: Any = consume) -> tuple[list[str], list[str], list[str]]:
            """Output ``i`` of the thread in the tile (a number, or a loop variable's name):
            (its coordinates and loads, its shared reads, the rest); ``u``: the names'
            suffix; ``use``: what consumes the value (None: nothing)."""
            u = u or f"_{i}"

            def step(k: int) -> str:                       # ``k * i``, folded for a number
                return str(k * i) if isinstance(i, int) else f"{k} * {i}"
            head = [f"cr{u} = r0 + ty + {step(BR)}", f"idx{u} = cr{u} * d1 + cc"]
            offs = {k: ("0" if cls == "b" else f"idx{u}" if cls == "c" else
                        f"cr{u} * {_stride_name(k, 0)} + cc * {_stride_name(k, 1)}")
                    for k, cls in enumerate(s.classes)}
            head += self.loads(u, offs, mine)
            reads = [f"v{n}{u} = sf{g}[sb{g} + _C_uint64({step(BR * f.region[1])} + "
                     f"{(di - f.di0) * f.region[1] + dj - f.dj0})]"
                     for g, f in enumerate(st.fields) for n, di, dj in f.tops if n in mine]
            rest = self.computes(u, given, deferred=deferred, only=mine)
            return head, reads, rest + (use(u, f"idx{u}") if use is not None else [])
        # A whole tile: every output's loads first, for loads in flight; its shared reads
        # beside its arithmetic, where they cost no registers across the others. A checked
        # kernel tests the tile's results once, after it; a failed tile (an inf or NaN: rare)
        # computes its outputs again, each with its own checks, from the same shared values:
        # so the test keeps only the results alive, as a flat map's (render.unrolled). The
        # rare paths (that one, a tile at the array's edge) are loops: one copy of the chain
        # each, not U (the kernel's source, and its compile, stay smaller).
        whole_tile: list[str] = []
        checks: list[fp_checks.Check] = []
        parts = [output(i, deferred=checks) for i in range(s.unroll)]
        for head, _, _ in parts:
            whole_tile += head
        for _, reads, rest in parts:
            whole_tile += reads + rest
        if checks:
            again = sum(output("ir", "_r", use=None), [])
            # (the barrier-like call keeps LLVM from reusing the values read before it)
            whole_tile += [fp_checks.usual_test(checks),
                           *(["    cuda.syncwarp(cuda.activemask())"] if self.shuffles else []),
                           f"    for ir in range({s.unroll}):", *("        " + ln for ln in again)]
        into_first = (lambda u, idx: self.acc_consume(u, idx, acc="_0")) if self.reduction else consume
        edge_tile = [f"for ie in range({s.unroll}):",
                     f"    if r0 + ty + {BR} * ie < d0 and cc < d1:",
                     *("        " + ln for ln in sum(output("ie", "_e", use=into_first), []))]
        out += ["while tr < ntr:",
                f"    r0 = tr * {TH}",
                f"    c0 = tc * {TW}",
                f"    whole = (r0 + {TH} <= d0) & (c0 + {TW} <= d1)",
                "    cc = c0 + tx",
                *("    " + ln for ln in per_tile + fill + computes + last),
                "    cuda.syncthreads()",
                "    if whole:",
                *("        " + ln for ln in whole_tile),
                "    else:",
                *("        " + ln for ln in edge_tile),
                "    cuda.syncthreads()",
                "    tc += gr",
                "    tr += gq",
                "    if tc >= ntc:",
                "        tc -= ntc",
                "        tr += 1"]
        return out

    def flat_tile(self, consume: Any, indent: str) -> list[str]:
        """Grid-stride loop over the flat index; ``consume(u, idx)`` -> lines using the value.
        A thread's ``U`` elements are ``BS`` apart (each warp load is contiguous). With paired
        draws (``_paired_draws``) the kernel has two loops: when every paired draw starts at
        an even counter (the same in every thread), a thread takes adjacent elements and one
        Philox block gives two numbers; else the plain loop, a block per number."""
        if not self.paired_draws:
            return self._flat_loop(consume, indent, paired=False)
        offsets = " | ".join(sorted({_input_name(self.chain[self.chain[n].args[0]].arg[0])
                                     for n in self.paired_draws}))
        return [f"{indent}if (({offsets}) & 1) == 0:",
                *self._flat_loop(consume, indent + "    ", paired=True),
                f"{indent}else:",
                *self._flat_loop(consume, indent + "    ", paired=False)]

    def _flat_loop(self, consume: Any, indent: str, paired: bool) -> list[str]:
        if paired:
            first, last, index = "(cuda.blockIdx.x * BS + cuda.threadIdx.x) * U", "base + (U - 1)", "base + {u}"
        else:
            first, last, index = "cuda.blockIdx.x * BS * U + cuda.threadIdx.x", "base + (U - 1) * BS", \
                "base + {u} * BS"
        out = [f"{indent}base = {first}",
               f"{indent}step = cuda.gridDim.x * BS * U"]
        head: list[str] = []
        advance: list[str] = []
        if self._carried():
            out += [indent + ln for ln in self._digits("base", "cb") + self._digits(
                "1" if paired else "BS", "cu") + self._digits("step", "cs")]
            head = [f"c{j}_0 = cb{j}" for j in range(self.spec.nd)]
            for u in range(1, self.spec.unroll):
                head += self._carry_add(f"_{u}", f"_{u - 1}", "cu")
            advance = self._carry_add("cb", "cb", "cs", prefix="")
        out.append(f"{indent}while base < n:")
        out += [f"{indent}    {ln}" for ln in head]
        body, tail = self.unrolled("i", lambda u: index.format(u=u), "n", self.flat_offsets, consume,
                                   paired)
        if self.spec.unroll == 1:      # (its one element is in range: base < n)
            out += [f"{indent}    {ln}" for ln in body]
        else:
            out.append(f"{indent}    if {last} < n:")
            out += [f"{indent}        {ln}" for ln in body]
            out.append(f"{indent}    else:")
            out += [f"{indent}        {ln}" for ln in tail]
        out.append(f"{indent}    base += step")
        out += [f"{indent}    {ln}" for ln in advance]
        return out

    def _recomputes_failed_tiles(self, offsets: Any, paired: bool) -> bool:
        """A checked map's flat tile with its coordinates found per element: its failed tile
        is computed again (``unrolled``). Not a reduction's tile (its loads would be the same
        values to the compiler, so the recomputation would fold into the kept values), nor
        paired draws or carried coordinates (an element's index is not its own there), nor a
        tile of one element (its own checks cost no more, and compile faster)."""
        return (self.spec.kind == "map" and self.spec.unroll > 1 and offsets == self.flat_offsets
                and not paired and not self._carried())

    # -- carried coordinates (Spec.carry): a flat kernel over a strided n-d space divides once
    # per thread (its first element, its step), then moves each element's coordinates by
    # adding digits with a carry, instead of an int64 ``%``/``//`` pair per element.
    def _carried(self) -> bool:
        s = self.spec
        return s.carry and s.nd > 1 and ("s" in s.classes or s.out_class == "s")

    def _digits(self, expr: str, name: str) -> list[str]:
        """``name{j}``: ``expr`` as coordinates of the collapsed dims (the leading one
        unbounded). ``max(d, 1)``: an empty space (a 0 dim) runs no iteration but still sets up."""
        nd = self.spec.nd
        lines = [f"r_{name} = {expr}"]
        for j in reversed(range(1, nd)):
            lines += [f"{name}{j} = r_{name} % max(d{j}, 1)", f"r_{name} = r_{name} // max(d{j}, 1)"]
        return lines + [f"{name}0 = r_{name}"]

    def _carry_add(self, target: str, a: str, b: str, prefix: str = "c") -> list[str]:
        """``{prefix}{j}{target}`` = ``{prefix}{j}{a}`` + ``{b}{j}`` with a carry: both
        digits are below ``d{j}``, so one subtraction brings the sum back into range."""
        nd = self.spec.nd

        def v(j: int, suffix: str) -> str:
            return f"{prefix}{j}{suffix}" if prefix else f"{suffix}{j}"
        lines = [f"{v(j, target)} = {v(j, a)} + {b}{j}" for j in range(nd)]
        for j in reversed(range(1, nd)):
            lines += [f"if {v(j, target)} >= d{j}:",
                      f"    {v(j, target)} -= d{j}",
                      f"    {v(j - 1, target)} += 1"]
        return lines

    # -- accumulators: each is one variable per part of the reduction (Reduction.parts)
    def part_names(self, name: str) -> list[str]:
        """``name``'s variables, one per part (``acc_0`` -> ``acc_0_re``, ``acc_0_im``); a
        subscripted name is an array per part (``sm[t]`` -> ``sm_re[t]``, ``sm_im[t]``)."""
        red = self.reduction
        assert red is not None
        base, sep, index = name.partition("[")
        return [f"{base}{p}{sep}{index}" for p in red.parts]

    @staticmethod
    def assign(targets: list[str], exprs: list[str]) -> str:
        """One statement giving each target its expression (evaluated before any is set)."""
        return f"{', '.join(targets)} = {', '.join(exprs)}"

    def combine_into(self, target: str, a: str, b: str) -> str:
        red = self.reduction
        assert red is not None
        if red.combine_helper is not None:
            self.src.helpers.setdefault(*red.combine_helper)
        return red.combine_statement(self.part_names(target), self.part_names(a), self.part_names(b))

    def shared_arrays(self, indent: str) -> list[str]:
        red = self.reduction
        assert red is not None
        return [f"{indent}{sm} = cuda.shared.array(BS, _NT_{red.part_dtype.name})"
                for sm in self.part_names("sm")]

    def block_tree(self, indent: str, lane: str, lanes: int, stride: str) -> list[str]:
        """Shared-memory tree over ``lanes`` lanes (fixed order: deterministic)."""
        out = [f"{indent}cuda.syncthreads()"]
        width = lanes // 2
        while width >= 1:
            out += [f"{indent}if {lane} < {width}:",
                    f"{indent}    {self.assign(self.part_names('ta'), self.part_names('sm[t]'))}",
                    f"{indent}    {self.assign(self.part_names('tb'), self.part_names(f'sm[t + {width} * {stride}]'))}",
                    *(f"{indent}    {ln}" for ln in self.checked_combine("sm[t]", "ta", "tb")),
                    f"{indent}cuda.syncthreads()"]
            width //= 2
        return out

    def checked_combine(self, target: str, a: str, b: str, guard: str | None = None) -> list[str]:
        """``target = a (op) b`` and, in a checked kernel, the flags of that combine of two
        partials (an overflow of two finite ones; each thread's own were flagged by its
        thread_check), tested only where ``guard`` holds when given. A ``target`` that is
        ``a`` keeps its old value in ``o`` for the test."""
        checked = self.checks_reduction
        old = "o" if checked and target == a else a
        lines = [f"o = {a}"] if old != a else []
        lines.append(self.combine_into(target, a, b))
        if checked:
            flags = fp_checks.combine_check(self.reduce_site, target, old, b)
            lines += [f"if {guard}:", *("    " + ln for ln in flags)] if guard else flags
        return lines

    def acc_init(self, indent: str) -> list[str]:
        red = self.reduction
        assert red is not None
        seen = [f"{indent}sn = si = False"] if self.checks_reduction else []
        return seen + [f"{indent}{self.assign(self.part_names(f'acc_{u}'), red.identity_parts())}"
                       for u in range(self.spec.unroll)]

    def acc_consume(self, u: str, idx: str, acc: str | None = None) -> list[str]:
        """Element ``u``'s value into accumulator ``acc{acc}`` (default: its own, ``acc{u}``)."""
        red = self.reduction
        assert red is not None
        acc = f"acc{u if acc is None else acc}"
        # the operand named once (combine may name it several times: min/max)
        prepare = self.assign(self.part_names(f"w{u}"), red.prepare_parts(self.value(u), idx))
        lines = [prepare, self.combine_into(acc, acc, f"w{u}")]
        if self.checks_reduction:
            # (no test per element: what the thread's inputs held, branch-free; its
            # accumulator tested once, after the fold: fp_checks.thread_check)
            lines += fp_checks.seen_update(f"w{u}")
        return lines

    @property
    def checks_reduction(self) -> bool:
        return self.reduction is not None and "reduce" in self.sites

    def store_result(self, indent: str, target: str, acc: str, count: str) -> list[str]:
        """``target = `` the reduction's result from ``acc``; checked: its flags too."""
        red = self.reduction
        assert red is not None
        value = red.finalize_parts(self.part_names(acc), count)
        if not self.checks_reduction:
            return [f"{indent}{target} = {_store(red.result, value)}"]
        lines = [f"rv = {value}", f"{target} = {_store(red.result, 'rv')}"]
        lines += fp_checks.result_check(self.reduce_site, "rv", acc)
        return [indent + ln for ln in lines]

    def acc_fold(self, indent: str) -> list[str]:
        """The unrolled accumulators combined pairwise in a fixed order, one statement per
        combine. (One nested expression repeats each operand's text: min/max's combine names
        each operand three or four times, so 8 accumulators became ~4^3 copies, 18 KB of
        source and ~10 s of NVVM per kernel.)"""
        red = self.reduction
        assert red is not None
        U = self.spec.unroll
        out: list[str] = []
        terms = [f"acc_{u}" for u in range(U)]
        while len(terms) > 1:      # pairwise, fixed order
            nxt = []
            for i in range(0, len(terms) - 1, 2):
                out.append(f"{indent}{self.combine_into(terms[i], terms[i], terms[i + 1])}")
                nxt.append(terms[i])
            if len(terms) % 2:
                nxt.append(terms[-1])
            terms = nxt
        out.append(f"{indent}{self.assign(self.part_names('acc'), self.part_names(terms[0]))}")
        if self.checks_reduction:
            out += [indent + ln for ln in fp_checks.thread_check(self.reduce_site, "acc")]
        return out

    # -- the kernels
    def render(self) -> Rendered:
        s = self.spec
        params = self.params()
        head = [f"def lazyarr_kernel({', '.join(p.name for p in params)}):"]
        body = ["    " + ln for ln in self.scalar_setup()]
        root = self.program.root
        if s.kind == "map":
            out_dt = root.dtype

            def store(u: str, idx: str) -> list[str]:
                # (a strided result: the element's coordinates, named by flat_offsets)
                at = idx if s.out_class == "c" else " + ".join(
                    f"{c} * {_out_stride_name(j)}"
                    for j, c in enumerate([f"c{j}{u}" for j in range(s.nd)] if s.nd > 1 else [idx]))
                return [f"out[{at}] = {_store(out_dt, self.value(u))}"]
            body += self.tiles(store, "    ")
        elif s.kind == "full":
            body += self._full()
        else:
            body += self._axes()
        consts = [f"BS = {s.block}", f"U = {s.unroll}"]
        helper_src = "\n\n".join([f"@_devfn\n{src}" for src in self.src.helpers.values()]
                                 + ([fp_checks.SET_SOURCE] if self.sites else []))
        source = "\n".join(consts) + "\n\n\n" + (helper_src + "\n\n" if helper_src else "") + \
            "\n".join(head + body) + "\n"
        return Rendered(source, "lazyarr_kernel", params, s.block, s.kind, tuple(self.sites))

    def _full(self) -> list[str]:
        red = self.reduction
        assert red is not None
        nparts = len(red.parts)
        out = self.shared_arrays("    ")
        out += ["    last = cuda.shared.array(1, _NT_int32)",
                "    t = cuda.threadIdx.x"]
        out += self.acc_init("    ")
        out += self.tiles(self.acc_consume, "    ")
        out += self.acc_fold("    ")
        out += [f"    {self.assign(self.part_names('sm[t]'), self.part_names('acc'))}"]
        out += self.block_tree("    ", "t", self.spec.block, "1")
        # (a complex accumulator's partial: its float64 parts, one after the other)
        out += ["    if t == 0:"]
        slot = "{}" if nparts == 1 else f"{{}} * {nparts} + {{}}"    # (real: one value a block)
        out += [f"        partials[{slot.format('cuda.blockIdx.x', k)}] = {sm}"
                for k, sm in enumerate(self.part_names("sm[0]"))]
        out += [
                "        cuda.threadfence()",
                "        ticket = _atomic_inc(counter)",
                "        last[0] = 1 if ticket == cuda.gridDim.x - 1 else 0",
                "    cuda.syncthreads()",
                "    if last[0] == 1:",
                "        cuda.threadfence()",
                f"        {self.assign(self.part_names('acc'), red.identity_parts())}",
                "        j = t",
                "        while j < cuda.gridDim.x:"]
        out += [f"            {tb} = partials[{slot.format('j', k)}]"
                for k, tb in enumerate(self.part_names("tb"))]
        out += [*(f"            {ln}" for ln in self.checked_combine("acc", "acc", "tb")),
                "            j += BS",
                f"        {self.assign(self.part_names('sm[t]'), self.part_names('acc'))}"]
        out += self.block_tree("        ", "t", self.spec.block, "1")
        out += ["        if t == 0:",
                *self.store_result("            ", "out[0]", "sm[0]", "n"),
                "            counter[0] = 0"]
        return out

    def _axes(self) -> list[str]:
        """rows: ``ty`` outputs per block, ``tx`` lanes along the reduced axes of each;
        cols: ``tx`` consecutive outputs per block, ``ty`` lanes along the reduced axes."""
        s, red = self.spec, self.reduction
        assert red is not None
        U = s.unroll
        rows = s.kind == "rows"
        # the lanes of a row are in one warp: shuffles, no barrier
        warp = rows and s.tx <= 32 and self.shuffles
        out = [] if warp else self.shared_arrays("    ")
        out += ["    t = cuda.threadIdx.x",
               f"    tx = t % {s.tx}",
               f"    ty = t // {s.tx}"]
        if rows:
            out += [f"    ngroups = (M + {s.ty - 1}) // {s.ty}", "    g = cuda.blockIdx.x",
                    "    while g < ngroups:", f"        m = g * {s.ty} + ty"]
            lane, nlanes = "tx", s.tx
        else:
            out += [f"    ngroups = (M + {s.tx - 1}) // {s.tx}", "    g = cuda.blockIdx.x",
                    "    while g < ngroups:", f"        m = g * {s.tx} + tx"]
            lane, nlanes = "ty", s.ty
        out += self.acc_init("        ")
        out += ["        if m < M:"]
        inner = self._coords("m", "dm", s.nd, "cm")
        for k in range(self.n_inputs):
            terms = [f"cm{j} * {_stride_name(k, j)}" for j in range(s.nd)]
            inner.append(f"om{k} = " + (" + ".join(terms) if terms else "0"))
        step = nlanes
        inner += [f"kb = {lane}",
                  "while kb < K:",
                  f"    if kb + {(U - 1) * step} < K:"]
        full, tail = self.unrolled("k", lambda u: f"kb + {u * step}", "K", self._red_offsets,
                                   self.acc_consume)
        inner += [f"        {ln}" for ln in full]
        inner.append("    else:")
        inner += [f"        {ln}" for ln in tail]
        inner.append(f"    kb += {U * step}")
        out += [f"            {ln}" for ln in inner]
        out += self.acc_fold("        ")
        if warp:
            part, sh = red.part_dtype, _shuffle_dtype(red.part_dtype)
            width = s.tx // 2
            while width >= 1:     # every lane shuffles (full mask) each part, then combines
                for acc, other in zip(self.part_names("acc"), self.part_names("other")):
                    out.append(f"        {other} = {cast_name(part)}(cuda.shfl_down_sync("
                               f"0xffffffff, {cast_name(sh)}({acc}), {width}))")
                # (tested on the lanes of the tree only: the others add a lane of the next
                # row, or their own value, which must not raise a flag)
                out += [f"        {ln}" for ln in self.checked_combine("acc", "acc", "other",
                                                                       guard=f"{lane} < {width}")]
                width //= 2
            out += [f"        if {lane} == 0 and m < M:",
                    *self.store_result("            ", "out[m]", "acc", "K"),
                    "        g += cuda.gridDim.x"]
            return out
        out += [f"        {self.assign(self.part_names('sm[t]'), self.part_names('acc'))}"]
        out += self.block_tree("        ", lane, nlanes, "1" if rows else str(s.tx))
        out += [f"        if {lane} == 0 and m < M:",
                *self.store_result("            ", "out[m]", "sm[t]", "K"),
                "        cuda.syncthreads()",
                "        g += cuda.gridDim.x"]
        return out

    def _coords(self, idx: str, dname: str, nd: int, cname: str) -> list[str]:
        if nd == 0:
            return []
        if nd == 1:
            return [f"{cname}0 = {idx}"]
        lines = [f"r_{cname} = {idx}"]
        for j in reversed(range(1, nd)):
            lines += [f"{cname}{j} = r_{cname} % {dname}{j}", f"r_{cname} = r_{cname} // {dname}{j}"]
        lines.append(f"{cname}0 = r_{cname}")
        return lines

    def _red_offsets(self, idx: str, u: str) -> tuple[list[str], dict[int, str]]:
        s = self.spec
        lines = self._coords(idx, "dk", s.nred, f"ck{u}_")
        offs = {}
        for k in range(self.n_inputs):
            terms = [f"ck{u}_{j} * {_stride_name(k, s.nd + j)}" for j in range(s.nred)]
            offs[k] = f"om{k}" + "".join(f" + {t}" for t in terms)
        return lines, offs


def render(program: Program, spec: Spec, shuffles: bool = True, checked: bool = False) -> Rendered:
    """The kernel module source for ``program`` launched as ``spec``.

    ``shuffles=False`` (the simulator, which has no warp primitives) reduces the lanes of a
    row through shared memory instead and leaves out the syncwarp that pins a tile's loads;
    everything else is the same source. ``checked``:
    the kernel records NumPy's floating-point errors (:mod:`.fp_checks`).
    """
    return _Kernel(program, spec, shuffles, checked).render()

