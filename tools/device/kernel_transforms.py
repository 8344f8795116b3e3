"""Experiments for issue 13 item 5, run by gpu_variants.py (``apply``): source transforms of a
rendered map or full-reduction kernel. ``vec4`` (``"vec4"``): an unroll-4 tile where each thread
takes 4 consecutive elements and loads each contiguous 4-byte input with one 16-byte load
(``ld.global.v4``); it assumes every input 16-byte aligned (CuPy's allocations are).
``int32`` (``"i32"``): the grid-stride loop's indices in 32 bits (the chain's sum at unroll 4:
43 -> 32 registers on sm_90, ``ptxas -v``); it assumes n < 2^31. Measurements, not kernels
lazyarr renders."""
import re


def apply(name: str, source: str, namespace: dict) -> str:
    """``source`` transformed by the experiment ``name`` (``"vec4"``, ``"i32"``); ``namespace``:
    the kernels' globals, given what the transformed source calls."""
    if name == "vec4":
        _install(namespace)
        return vec4(source)
    return {"i32": int32}[name](source)


def _install(namespace):
    """``_ld4(ptr, i)``: the four 4-byte elements from ``ptr[i]`` as one 16-byte load."""
    from llvmlite import ir
    from numba import types
    from numba.core.extending import intrinsic

    @intrinsic
    def _ld4(typingctx, ptr, idx):
        if not isinstance(ptr, types.CPointer):
            return None
        elt = ptr.dtype
        ret = types.UniTuple(elt, 4)

        def codegen(context, builder, sig, args):
            p, i = args
            addr = builder.gep(p, [i])
            vty = ir.VectorType(context.get_value_type(elt), 4)
            v = builder.load(builder.bitcast(addr, vty.as_pointer()), align=16)
            vals = [builder.extract_element(v, ir.Constant(ir.IntType(32), k)) for k in range(4)]
            return context.make_tuple(builder, ret, vals)
        return ret(ptr, idx), codegen
    namespace["_ld4"] = _ld4


def vec4(src: str) -> str:
    """Each thread's 4 consecutive elements, each input's loaded by one ``_ld4``."""
    assert "U = 4" in src
    src = src.replace("base = cuda.blockIdx.x * BS * U + cuda.threadIdx.x",
                      "base = (cuda.blockIdx.x * BS + cuda.threadIdx.x) * U")
    src = src.replace("if base + (U - 1) * BS < n:", "if base + (U - 1) < n:")
    src = re.sub(r"i_(\d) = base \+ (\d) \* BS", r"i_\1 = base + \2", src)
    out, loads, tile = [], set(), True
    for ln in src.splitlines():
        if "cuda.syncwarp(cuda.activemask())" in ln:
            tile = False
        m = re.match(r"(\s+)v(\d+)_(\d) = (p\d+)\[i_\3\]$", ln) if tile else None
        if m:
            ind, v, k, p = m.groups()
            if v not in loads:
                loads.add(v)
                out.append(f"{ind}v{v}_0, v{v}_1, v{v}_2, v{v}_3 = _ld4({p}, base)")
            continue
        out.append(ln)
    return "\n".join(out) + "\n"


def int32(src: str) -> str:
    """The loop's index, step, tile test and element indices as int32 (Numba computes integer
    arithmetic in 64 bits; the truncations let LLVM narrow it)."""
    src = src.replace("base = cuda.blockIdx.x * BS * U + cuda.threadIdx.x",
                      "n32 = _C_int32(n)\n    base = _C_int32(cuda.blockIdx.x * BS * U + cuda.threadIdx.x)")
    src = src.replace("step = cuda.gridDim.x * BS * U", "step = _C_int32(cuda.gridDim.x * BS * U)")
    src = src.replace("base += step", "base = _C_int32(base + step)")
    src = src.replace("while base < n:", "while base < n32:")
    src = src.replace("if base + (U - 1) * BS < n:", "if _C_int32(base + (U - 1) * BS) < n32:")
    src = re.sub(r"i_(\d) = base \+ (\d) \* BS", r"i_\1 = _C_int32(base + \2 * BS)", src)
    return re.sub(r"if i_(\d) < n:", r"if i_\1 < n32:", src)
