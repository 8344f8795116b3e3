"""Helper device functions for the CUDA templates (``H_name(`` in ``templates.TEMPLATES``).

Each helper is rendered per compute dtype: ``{T}`` becomes that dtype's cast (``{R}``: of a
complex dtype's parts) and ``F_x(`` the float function of its width. They copy NumPy's C loops (``npy_divmod``, ``npy_lshift``, ...)
so that edge values (division by zero, shifts past the width, NaN) match NumPy.
"""
from __future__ import annotations

import re

import numpy as np

#: a float function call in a template or helper: ``F_name(``
FLOAT_CALL = re.compile(r"\bF_(\w+?)\(")
#: a helper call in a template: ``H_name(``
HELPER_CALL = re.compile(r"\b(H_\w+?)\(")

_SIGNED_DIV = """\
def {name}(a, b):
    if b == 0:
        return {T}(0)
    if b == -1:
        return {T}(-a)
    return {T}(a // b)
"""
_UNSIGNED_DIV = """\
def {name}(a, b):
    if b == 0:
        return {T}(0)
    return {T}(a // b)
"""
_SIGNED_REM = """\
def {name}(a, b):
    if b == 0 or b == -1:
        return {T}(0)
    return {T}(a % b)
"""
_UNSIGNED_REM = """\
def {name}(a, b):
    if b == 0:
        return {T}(0)
    return {T}(a % b)
"""
_IPOW = """\
def {name}(a, b):
    if b < 0:
        return {T}(0)
    r = {T}(1)
    base = {T}(a)
    e = {T}(b)
    while e > 0:
        if (e & {T}(1)) != 0:
            r = {T}(r * base)
        base = {T}(base * base)
        e = {T}(e >> {T}(1))
    return r
"""
_SIGNED_RECIP = """\
def {name}(a):
    if a == 1:
        return {T}(1)
    if a == -1:
        return {T}(-1)
    return {T}(0)
"""
_UNSIGNED_RECIP = """\
def {name}(a):
    if a == 1:
        return {T}(1)
    return {T}(0)
"""
_LSHIFT = """\
def {name}(a, b, w):
    if b < 0 or b >= w:
        return {T}(0)
    return {T}(a << b)
"""
_RSHIFT = """\
def {name}(a, b, w):
    if b < 0 or b >= w:
        if a < 0:
            return {T}(-1)
        return {T}(0)
    return {T}(a >> b)
"""
_ICLIP = """\
def {name}(x, lo, hi):
    m = x if x > lo else lo
    return m if m < hi else hi
"""
# npy_floor_divide / npy_remainder / npy_divmod (numpy/_core/src/npymath/npy_math_internal.h.src)
_FDIV = """\
def {name}(a, b):
    if b == 0:
        return {T}(a / b)
    mod = F_fmod(a, b)
    div = {T}((a - mod) / b)
    if mod != 0:
        if (b < 0) != (mod < 0):
            div = {T}(div - {T}(1))
    if div != 0:
        fl = F_floor(div)
        if div - fl > {T}(0.5):
            fl = {T}(fl + {T}(1))
        return fl
    return F_copysign({T}(0), {T}(a / b))
"""
_FREM = """\
def {name}(a, b):
    mod = F_fmod(a, b)
    if b == 0:
        return mod
    if mod != 0:
        if (b < 0) != (mod < 0):
            mod = {T}(mod + b)
        return mod
    return F_copysign({T}(0), b)
"""
_FSIGN = """\
def {name}(x):
    if x > 0:
        return {T}(1)
    if x < 0:
        return {T}(-1)
    if x == 0:
        return {T}(0)
    return x
"""
# numpy/_core/src/umath/clip.cpp: _NPY_MIN(_NPY_MAX(x, min), max), NaN-propagating. On a tie
# of zeros (clip(-0.0, 0.0, 1.0)) NumPy 2.4 returns the bound when a bound has several elements
# (float32/float64) and x when both bounds are single values, or for float16 (measured;
# tests/test_cuda_codegen.py pins it): H_fclip_keep is the second rule.
_FCLIP = """\
def {name}(x, lo, hi):
    m = x if (x != x or x > lo) else lo
    return m if (m != m or m < hi) else hi
"""
_FCLIP_KEEP = """\
def {name}(x, lo, hi):
    m = x if (x != x or x >= lo) else lo
    return m if (m != m or m <= hi) else hi
"""

# libdevice's hypot is within 2 ulp (CUDA Math API appendix), so a result at the largest finite
# value can round up to inf: hypot(DBL_MAX, 1.0) is inf on the H200, DBL_MAX in C and NumPy. An
# inf from two finite operands is recomputed scaled, max * sqrt(1 + (min/max)**2), which rounds
# to max whenever min/max < 2**-26. The branch is cold: the common path pays one compare.
_FHYPOT = """\
def {name}(a, b):
    r = F_hypot(a, b)
    if r == math.inf:
        x = F_fabs(a)
        y = F_fabs(b)
        if x < math.inf and y < math.inf:
            m = x if x > y else y
            q = {T}((y if x > y else x) / m)
            r = {T}(m * F_sqrt({T}({T}(1) + {T}(q * q))))
    return r
"""

# Philox4x32-10: the bits of (counter, key, stream) exactly as lazyarr/_philox.h computes them
# on the CPU (counters 2j and 2j + 1 are the two halves of block j). 32-bit words: each product
# is a mul.lo.u32 and libdevice's umulhi (mul.hi.u32); written as a product of uint64 values
# it compiled to 64-bit multiplies (mul.lo.s64: several IMADs each).
_PHILOX_BLOCK = """\
def {name}(ctr, key, stream):
    m = {T}(0xFFFFFFFF)
    block = ctr >> {T}(1)
    c0 = _C_uint32(block & m)
    c1 = _C_uint32(block >> {T}(32))
    c2 = _C_uint32(stream & m)
    c3 = _C_uint32(stream >> {T}(32))
    k0 = _C_uint32(key & m)
    k1 = _C_uint32(key >> {T}(32))
    m0 = _C_uint32(0xD2511F53)
    m1 = _C_uint32(0xCD9E8D57)
    for _ in range(10):
        c0, c1, c2, c3 = (_C_uint32(_umulhi(c2, m1) ^ c1 ^ k0), _C_uint32(c2 * m1),
                          _C_uint32(_umulhi(c0, m0) ^ c3 ^ k1), _C_uint32(c0 * m0))
        k0 = _C_uint32(k0 + _C_uint32(0x9E3779B9))
        k1 = _C_uint32(k1 + _C_uint32(0xBB67AE85))
    bits = ({T}(c2) | ({T}(c3) << {T}(32))) if (ctr & {T}(1)) != {T}(0) else \\
        ({T}(c0) | ({T}(c1) << {T}(32)))
"""
# the float of philox_random64/32: (bits >> 11) * 2**-53, (bits >> 40) * 2**-24, as _philox.h
_PHILOX_F64 = _PHILOX_BLOCK + "    return _C_float64(_C_int64(bits >> {T}(11))) * 1.1102230246251565e-16\n"
_PHILOX_F32 = _PHILOX_BLOCK + \
    "    return _C_float32(_C_int32(bits >> {T}(40))) * _C_float32(5.960464477539063e-08)\n"


# C's fmod of integers (NumPy's integer fmod loop): the sign of the dividend, 0 for a zero
# divisor (and for MIN % -1, which overflows in C); Numba's ``%`` is Python's (floored)
_SIGNED_FMOD = """\
def {name}(a, b):
    if b == 0 or b == -1:
        return {T}(0)
    r = {T}(a % b)
    if r != 0 and (r < 0) != (a < 0):
        r = {T}(r - b)
    return r
"""
# npy_spacing: nextafter(x, +-inf) - x (NaN for +-inf), the direction +inf for -0.0 too
_FSPACING = """\
def {name}(x):
    return {T}(F_nextafter(x, {T}(math.inf) if x >= 0 else {T}(-math.inf)) - x)
"""
# npy_heaviside (numpy/_core/src/npymath/npy_math_internal.h.src)
_FHEAVISIDE = """\
def {name}(x, h0):
    if x != x:
        return {T}(math.nan)
    if x == 0:
        return h0
    if x < 0:
        return {T}(0)
    return {T}(1)
"""
# npy_logaddexp / npy_logaddexp2 (npy_math_internal.h.src): x == y gives x + log(2) (x + 1),
# else the larger plus log1p of the exponential of minus the difference (times NPY_LOG2E);
# a NaN difference is returned. The constants are rounded to the compute type ({T}) as C
# rounds NPY_LOGE2f / NPY_LOG2Ef.


def _logaddexp(tie: str, term: str) -> str:
    """The helper template: ``tie`` is added to ``x`` when x == y, ``term`` (of ``t``) to the
    larger operand."""
    return f"""\
def {{name}}(x, y):
    if x == y:
        return {{T}}(x + {{T}}({tie}))
    tmp = {{T}}(x - y)
    if tmp > 0:
        return {{T}}(x + {term.format(t="-tmp")})
    if tmp <= 0:
        return {{T}}(y + {term.format(t="tmp")})
    return tmp
"""


_FLOGADDEXP = _logaddexp("0.6931471805599453", "F_log1p(F_exp({t}))")
_FLOGADDEXP2 = _logaddexp("1", "{{T}}({{T}}(1.4426950408889634) * F_log1p(F_exp2({t})))")
# float16 nextafter/spacing step by float16's bits (npy_half_nextafter, npy_half_spacing in
# numpy/_core/src/npymath/halffloat.cpp), here on the float16 value held in float32: the
# binade p = 2**e <= |x| (e >= -14), the step up (away from zero) p * 2**-10, the step down
# half that at a power of two (a normal one: subnormals step 2**-24 both ways)
_HSTEP = """\
    m = F_fabs(x)
    p = {T}(6.103515625e-05)
    while p * 2 <= m and p < 32768:
        p = {T}(p * 2)
    up = {T}(p * {T}(0.0009765625))
    down = up if (m != p or p == {T}(6.103515625e-05)) else {T}(up * {T}(0.5))
"""
_HNEXTAFTER = """\
def {name}(x, y):
    if x != x or y != y:
        return {T}(math.nan)
    if x == y:
        return x
    if x == 0:
        return F_copysign({T}(5.960464477539063e-08), y)
    if F_fabs(x) == math.inf:
        return F_copysign({T}(65504), x)
""" + _HSTEP + """\
    if (x > 0) == (y > x):
        return F_copysign({T}(m + up), x)
    return F_copysign({T}(m - down), x)
"""
# npy_half_spacing: the step to the next float16 towards +inf (positive for negative x too),
# NaN for +-inf and NaN
_HSPACING = """\
def {name}(x):
    if x != x or F_fabs(x) == math.inf:
        return {T}(math.nan)
    if x == 0:
        return {T}(5.960464477539063e-08)
    if x == 65504:
        return {T}(math.inf)
""" + _HSTEP + """\
    return up if x > 0 else down
"""

# Complex helpers: ``{T}`` is the complex compute type, ``{R}`` its part's float type. NumPy's
# loops (numpy/_core/src/umath/loops.c.src, loops_arithm_fp and loops_unary_complex dispatch
# sources), as they compute on x86-64: the SIMD multiply and square contract one product of
# each part into an FMA (measured: bit-identical to fma(ar, br, -(ai * bi)), fma(ar, bi,
# ai * br) for every layout), division and reciprocal are Smith's algorithm without FMA.
_PARTS = """\
def {name}(a, b):
    ar = a.real
    ai = a.imag
    br = b.real
    bi = b.imag
"""
_CMUL = _PARTS + """\
    return {T}(complex(F_fma(ar, br, {R}(-{R}(ai * bi))), F_fma(ar, bi, {R}(ai * br))))
"""
_CSQUARE = """\
def {name}(a):
    ar = a.real
    ai = a.imag
    return {T}(complex(F_fma(ar, ar, {R}(-{R}(ai * ai))), {R}({R}(ar * ai) + {R}(ai * ar))))
"""
_CDIV = _PARTS + """\
    abr = F_fabs(br)
    abi = F_fabs(bi)
    if abr >= abi:
        if abr == 0 and abi == 0:
            return {T}(complex({R}(ar / abr), {R}(ai / abr)))
        rat = {R}(bi / br)
        scl = {R}({R}(1) / {R}(br + {R}(bi * rat)))
        return {T}(complex({R}({R}(ar + {R}(ai * rat)) * scl), {R}({R}(ai - {R}(ar * rat)) * scl)))
    rat = {R}(br / bi)
    scl = {R}({R}(1) / {R}(bi + {R}(br * rat)))
    return {T}(complex({R}({R}({R}(ar * rat) + ai) * scl), {R}({R}({R}(ai * rat) - ar) * scl)))
"""
_CRECIP = """\
def {name}(a):
    ar = a.real
    ai = a.imag
    if F_fabs(ai) <= F_fabs(ar):
        r = {R}(ai / ar)
        d = {R}(ar + {R}(ai * r))
        return {T}(complex({R}({R}(1) / d), {R}(-r / d)))
    r = {R}(ar / ai)
    d = {R}({R}(ar * r) + ai)
    return {T}(complex({R}(r / d), {R}({R}(-1) / d)))
"""
# NumPy's SIMD complex absolute (loops_unary_complex.dispatch.c.src): an infinite part gives
# inf (also with a NaN), then NaN; larger * sqrt(fma(r, r, 1)) with r = smaller / larger
_CABS = """\
def {name}(a):
    re = F_fabs(a.real)
    im = F_fabs(a.imag)
    if re == math.inf or im == math.inf:
        return {R}(math.inf)
    if re != re or im != im:
        return {R}(math.nan)
    big = re if re > im else im
    small = im if re > im else re
    if big == 0:
        return {R}(0)
    r = {R}(small / big)
    return {R}(F_sqrt(F_fma(r, r, {R}(1))) * big)
"""
# NumPy 2's complex sign (loops.c.src): z / hypot(z), with its rules for infinite parts
_CSIGN = """\
def {name}(a):
    ar = a.real
    ai = a.imag
    h = F_hypot(ar, ai)
    if h != h:
        return {T}(complex(math.nan, math.nan))
    if h == math.inf:
        if F_fabs(ar) == math.inf:
            if F_fabs(ai) == math.inf:
                return {T}(complex(math.nan, math.nan))
            return {T}(complex(1.0 if ar > 0 else -1.0, 0.0))
        return {T}(complex(0.0, 1.0 if ai > 0 else -1.0))
    if h == 0:
        return {T}(complex(0.0, 0.0))
    return {T}(complex({R}(ar / h), {R}(ai / h)))
"""

_TEMPLATES: dict[str, tuple[str, str]] = {   # name -> (signed/float template, unsigned template)
    "H_idiv": (_SIGNED_DIV, _UNSIGNED_DIV),
    "H_irem": (_SIGNED_REM, _UNSIGNED_REM),
    "H_ipow": (_IPOW, _IPOW),
    "H_irecip": (_SIGNED_RECIP, _UNSIGNED_RECIP),
    "H_lshift": (_LSHIFT, _LSHIFT),
    "H_rshift": (_RSHIFT, _RSHIFT),
    "H_iclip": (_ICLIP, _ICLIP),
    "H_fdiv": (_FDIV, _FDIV),
    "H_frem": (_FREM, _FREM),
    "H_fsign": (_FSIGN, _FSIGN),
    "H_fclip": (_FCLIP, _FCLIP),
    "H_fclip_keep": (_FCLIP_KEEP, _FCLIP_KEEP),
    "H_fhypot": (_FHYPOT, _FHYPOT),
    "H_philox64": (_PHILOX_F64, _PHILOX_F64),
    "H_philox32": (_PHILOX_F32, _PHILOX_F32),
    "H_ifmod": (_SIGNED_FMOD, _UNSIGNED_REM),
    "H_fspacing": (_FSPACING, _FSPACING),
    "H_fheaviside": (_FHEAVISIDE, _FHEAVISIDE),
    "H_flogaddexp": (_FLOGADDEXP, _FLOGADDEXP),
    "H_flogaddexp2": (_FLOGADDEXP2, _FLOGADDEXP2),
    "H_hnextafter": (_HNEXTAFTER, _HNEXTAFTER),
    "H_hspacing": (_HSPACING, _HSPACING),
    "H_cmul": (_CMUL, _CMUL),
    "H_csquare": (_CSQUARE, _CSQUARE),
    "H_cdiv": (_CDIV, _CDIV),
    "H_crecip": (_CRECIP, _CRECIP),
    "H_cabs": (_CABS, _CABS),
    "H_csign": (_CSIGN, _CSIGN),
}

#: the helpers' names (``H_name``)
HELPERS = frozenset(_TEMPLATES)
#: the float functions the helpers call
FLOAT_FUNCTIONS = frozenset(name for pair in _TEMPLATES.values() for template in pair
                            for name in FLOAT_CALL.findall(template))


def helper_source(helper: str, dtype: np.dtype, name: str, cast: str, fsuffix: str) -> str:
    """The source of ``helper`` for compute dtype ``dtype``, as function ``name``."""
    signed_or_float, unsigned = _TEMPLATES[helper]
    template = unsigned if dtype.kind == "u" else signed_or_float
    part = f"_C_{np.finfo(dtype).dtype.name}" if dtype.kind == "c" else cast  # {R}: a part's type
    src = template.format(name=name, T=cast, R=part)
    return FLOAT_CALL.sub(lambda m: f"F_{m.group(1)}_{fsuffix}(", src)
