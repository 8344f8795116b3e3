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

# Philox4x32-10, the rounds of block ``block`` (see _philox below)
_PHILOX_ROUNDS = """\
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
"""
_PHILOX_LO = "({T}(c0) | ({T}(c1) << {T}(32)))"
_PHILOX_HI = "({T}(c2) | ({T}(c3) << {T}(32)))"
# the float of philox_random64/32: (bits >> 11) * 2**-53, (bits >> 40) * 2**-24, as _philox.h
_UNIT_F64 = "_C_float64(_C_int64(BITS >> {T}(11))) * 1.1102230246251565e-16"
_UNIT_F32 = "_C_float32(_C_int32(BITS >> {T}(40))) * _C_float32(5.960464477539063e-08)"


def _philox(unit: str) -> str:
    """The number of counter ``ctr``: half ``ctr & 1`` of block ``ctr >> 1``."""
    return ("def {name}(ctr, key, stream):\n    m = {T}(0xFFFFFFFF)\n    block = ctr >> {T}(1)\n"
            + _PHILOX_ROUNDS
            + f"    bits = {_PHILOX_HI} if (ctr & {{T}}(1)) != {{T}}(0) else {_PHILOX_LO}\n"
            + "    return " + unit.replace("BITS", "bits") + "\n")


def _philox_pair(unit: str) -> str:
    """The numbers of counters ``ctr`` and ``ctr + 1`` for an even ``ctr``: both halves of one
    block (a thread's two adjacent elements of a draw read in order; the kernel takes this
    path only when every paired draw starts at an even counter, render.py ``pairs``)."""
    return ("def {name}(ctr, key, stream):\n"
            "    m = {T}(0xFFFFFFFF)\n    block = ctr >> {T}(1)\n"
            + _PHILOX_ROUNDS
            + "    return " + unit.replace("BITS", _PHILOX_LO) + ", " + unit.replace("BITS", _PHILOX_HI)
            + "\n")


# Philox4x32-10: the bits of (counter, key, stream) exactly as lazyarr/_philox.h computes them
# on the CPU (counters 2j and 2j + 1 are the two halves of block j). 32-bit words: each product
# is a mul.lo.u32 and libdevice's umulhi (mul.hi.u32); written as a product of uint64 values
# it compiled to 64-bit multiplies (mul.lo.s64: several IMADs each).
_PHILOX_F64, _PHILOX_F32 = _philox(_UNIT_F64), _philox(_UNIT_F32)
_PHILOX_F64_PAIR, _PHILOX_F32_PAIR = _philox_pair(_UNIT_F64), _philox_pair(_UNIT_F32)


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
# NumPy's ldexp loops (loops_umath_fp / loops.c.src, ``ldexp_int64``): an exponent outside C's
# int range is clamped to it (the result is then inf, 0 or x as for a huge exponent)
_FLDEXP = """\
def {name}(x, n):
    if n > 2147483647:
        return {T}(F_ldexp(x, _C_int32(2147483647)))
    if n < -2147483648:
        return {T}(F_ldexp(x, _C_int32(-2147483648)))
    return {T}(F_ldexp(x, _C_int32(n)))
"""
# frexp (C's, as NumPy's loops call it): 0, inf and NaN are their own mantissa with exponent 0
# (libdevice leaves the exponent of inf and NaN unspecified, so they are answered here)
_FFREXP_MANTISSA = """\
def {name}(x):
    if x == 0 or x != x or x == math.inf or x == -math.inf:
        return {T}(x)
    m, e = F_frexp(x)
    return {T}(m)
"""
_FFREXP_EXPONENT = """\
def {name}(x):
    if x == 0 or x != x or x == math.inf or x == -math.inf:
        return _C_int32(0)
    m, e = F_frexp(x)
    return _C_int32(e)
"""
# modf's fractional part (C's): x - trunc(x) is exact; it has the sign of x (-0.0 for -3.0),
# and is a zero of that sign for ±inf
_FMODF_FRACTION = """\
def {name}(x):
    if x == math.inf or x == -math.inf:
        return {T}(F_copysign({T}(0), x))
    return {T}(F_copysign({T}(x - F_trunc(x)), x))
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
    h = H_cabs(a)        # (libdevice's hypot rounds hypot(DBL_MAX, 1) up to inf: _FHYPOT)
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


# ---------------------------------------------------------------- complex functions
# NumPy's complex exp, log, sqrt, power and the trigonometric and hyperbolic functions are
# npymath's (numpy/_core/src/npymath/npy_math_complex.c.src), which call the C library's
# cexp, clog, csqrt, cpow, csinh, ... (glibc on Linux), and NumPy's own formulas for exp2,
# expm1, log2, log10 and log1p (numpy/_core/src/umath/funcs.inc.src) and for small integer
# powers (npy_cpow). The helpers below port the algorithms NumPy vendors for C libraries that
# lack them: FreeBSD msun's s_csqrt.c, s_cexp.c (with __ldexp_cexp's scaling), s_csinh.c,
# s_ctanh.c, catrig.c (Hull et al.'s casinh/cacos/catanh) and CPython's clog, as
# npy_math_complex.c.src writes them. C99 Annex G's special values come out as glibc gives
# them (tests/test_gpu_native_ops.py checks every one of its grid against NumPy); finite values
# are within a few ulps of glibc's. complex64 computes in float32, as glibc's cexpf, ... do.
# ``{K_name}`` constants are the precision's (``_CX_CONSTANTS``).

# s_csqrt.c (Algorithm 312, CACM vol 10, Oct 1967), scaled by 1/4 above MAX / (1 + sqrt(2))
# (and the result by 2, both parts, as msun does: npy_csqrt's own copy doubles the real part),
# and scaled up by 2**54 (2**24) when both parts are below 2 MIN, as msun's later s_csqrt.c
# does (sqrt(a / 2) of the least subnormal would be 0)
_CSQRT = """\
def {name}(z):
    a = z.real
    b = z.imag
    if a == 0 and b == 0:
        return {T}(complex({R}(0), b))
    if F_fabs(b) == math.inf:
        return {T}(complex({R}(math.inf), b))
    if a != a:
        return {T}(complex(a, {R}(math.nan)))
    if F_fabs(a) == math.inf:
        if a < 0:
            return {T}(complex(F_fabs({R}(b - b)), F_copysign(a, b)))
        return {T}(complex(a, F_copysign({R}(b - b), b)))
    scale = F_fabs(a) >= {R}({K_SQRT_THRESH}) or F_fabs(b) >= {R}({K_SQRT_THRESH})
    if scale:
        a = {R}(a * {R}(0.25))
        b = {R}(b * {R}(0.25))
    tiny = F_fabs(a) < {R}({K_2_MIN}) and F_fabs(b) < {R}({K_2_MIN})
    if tiny:
        a = {R}(a * {R}({K_SQRT_UP}))
        b = {R}(b * {R}({K_SQRT_UP}))
    if a >= 0:
        t = F_sqrt({R}({R}(a + F_hypot(a, b)) * {R}(0.5)))
        re = t
        im = {R}(b / {R}({R}(2) * t))
    else:
        t = F_sqrt({R}({R}(-a + F_hypot(a, b)) * {R}(0.5)))
        re = {R}(F_fabs(b) / {R}({R}(2) * t))
        im = F_copysign(t, b)
    if scale:
        return {T}(complex({R}(re * {R}(2)), {R}(im * {R}(2))))
    if tiny:
        return {T}(complex({R}(re * {R}({K_SQRT_DOWN})), {R}(im * {R}({K_SQRT_DOWN}))))
    return {T}(complex(re, im))
"""
# exp(x) * (cos(y), sin(y)) * 2**expt (expt 0 or -1) for x in [K_EXP_LO, K_EXP_HI], where
# exp(x) overflows: msun's __ldexp_cexp (npy's _npy_scaled_cexp), exp(x - k ln 2) * 2**k with
# msun's k (whose k ln 2 is nearly exact in the precision), the mantissas multiplied and the
# exponents added (frexp / ldexp), so a result that is finite after all keeps its bits
_CEXP_SCALED = """\
def {name}(x, y, expt):
    mant, ex = F_frexp(F_exp({R}(x - {R}({K_EXP_KLN2}))))
    mc, exc = F_frexp(F_cos(y))
    ms, exs = F_frexp(F_sin(y))
    e = _C_int32(ex + expt + {K_EXP_K})
    return {T}(complex(F_ldexp({R}(mant * mc), _C_int32(e + exc)),
                       F_ldexp({R}(mant * ms), _C_int32(e + exs))))
"""
# s_cexp.c (npy_cexp); cexp(x + 0i) = exp(x) + 0i as msun and glibc give it (npy_cexp, which
# lacks that case, would make exp(1000 + 0i) inf + NaN i), and cexp(-inf + yi) = 0 + 0i with
# y's sign for infinite or NaN y, as glibc gives it
_CEXP = """\
def {name}(z):
    r = z.real
    i = z.imag
    if F_fabs(r) < math.inf:
        if i == 0:
            return {T}(complex(F_exp(r), i))
        if r >= {R}({K_EXP_LO}) and r <= {R}({K_EXP_HI}):
            return H_cexp_scaled(r, i, 0)
        if F_fabs(i) < math.inf:
            x = F_exp(r)
            return {T}(complex({R}(x * F_cos(i)), {R}(x * F_sin(i))))
        return {T}(complex({R}(math.nan), F_copysign({R}(math.nan), i)))
    if r != r:
        if i == 0:
            return z
        return {T}(complex(r, F_copysign({R}(math.nan), i)))
    if r > 0:
        if i == 0:
            return z
        if F_fabs(i) < math.inf:
            return {T}(complex({R}(r * F_cos(i)), {R}(r * F_sin(i))))
        return {T}(complex(r, {R}(math.nan)))
    if F_fabs(i) < math.inf:
        x = F_exp(r)
        return {T}(complex({R}(x * F_cos(i)), {R}(x * F_sin(i))))
    return {T}(complex({R}(0), F_copysign({R}(0), i)))
"""
# npy_clog (CPython's algorithm): rescaled where hypot would overflow or be subnormal, log1p
# near |z| = 1 of x**2 + y**2 - 1, here summed from the exact squares (hi + lo, by FMA), as
# glibc's clog does (__x2y2m1): npy_clog's (am - 1) * (am + 1) + an * an loses up to 8 ulps of
# float32 there to cancellation
_CLOG = """\
def {name}(z):
    ax = F_fabs(z.real)
    ay = F_fabs(z.imag)
    if ax > {R}({K_MAX_4}) or ay > {R}({K_MAX_4}):
        rr = {R}(F_log(F_hypot({R}(ax * {R}(0.5)), {R}(ay * {R}(0.5)))) + {R}({K_LN2}))
    elif ax < {R}({K_MIN}) and ay < {R}({K_MIN}):
        if ax > 0 or ay > 0:
            rr = {R}(F_log(F_hypot({R}(ax * {R}({K_2_MANT})), {R}(ay * {R}({K_2_MANT}))))
                     - {R}({K_MANT_LN2}))
        else:
            rr = {R}(-math.inf)
    else:
        h = F_hypot(ax, ay)
        if h >= {R}(0.71) and h <= {R}(1.73):
            am = ax if ax > ay else ay
            an = ay if ax > ay else ax
            h1 = {R}(am * am)
            h2 = {R}(an * an)
            l12 = {R}(F_fma(am, am, -h1) + F_fma(an, an, -h2))
            rr = {R}(F_log1p({R}({R}({R}(h1 - {R}(1)) + h2) + l12)) * {R}(0.5))
        else:
            rr = F_log(h)
    return {T}(complex(rr, F_arctan2(z.imag, z.real)))
"""
# funcs.inc.src nc_log2 / nc_log10: clog times NPY_LOG2E / NPY_LOG10E; nc_exp2: cexp of z
# times NPY_LOGE2; nc_log1p, nc_expm1: NumPy's formulas. log1p's hypot is H_cabs (libdevice's
# hypot rounds hypot(DBL_MAX, 1e-5) up to inf, _FHYPOT; H_cabs is NumPy's complex abs, bit for
# bit on the H200)
_CLOG_TIMES = """\
def {name}(z):
    w = H_clog(z)
    return {T}(complex({R}(w.real * {R}({K_LOG})), {R}(w.imag * {R}({K_LOG}))))
"""
_CEXP2 = """\
def {name}(z):
    return H_cexp({T}(complex({R}(z.real * {R}({K_LN2})), {R}(z.imag * {R}({K_LN2})))))
"""
_CLOG1P = """\
def {name}(z):
    xp1 = {R}(z.real + {R}(1))
    return {T}(complex(F_log(H_cabs({T}(complex(xp1, z.imag)))), F_arctan2(z.imag, xp1)))
"""
_CEXPM1 = """\
def {name}(z):
    x = z.real
    y = z.imag
    a = F_sin({R}(y * {R}(0.5)))
    return {T}(complex({R}({R}(F_expm1(x) * F_cos(y)) - {R}({R}({R}(2) * a) * a)),
                       {R}(F_exp(x) * F_sin(y))))
"""
# npy_cpow: 1 for a zero exponent, 0 or NaN for a zero base, repeated multiplication (the
# plain product, npymath's cmul) for a real integer exponent in (-100, 100), then the C
# library's cpow, which glibc computes as cexp(b * clog(a)) (the product: H_cmul_c99)
_CPOW = _PARTS + """\
    if br == 0 and bi == 0:
        return {T}(complex({R}(1), {R}(0)))
    if ar == 0 and ai == 0:
        if br > 0:
            return {T}(complex({R}(0), {R}(0)))
        return {T}(complex({R}(math.nan), {R}(math.nan)))
    if bi == 0 and br > -100 and br < 100 and F_trunc(br) == br:
        n = _C_int64(br)
        if n == 1:
            return a
        if n == 2:
            return H_cmul_plain(a, a)
        if n == 3:
            return H_cmul_plain(a, H_cmul_plain(a, a))
        if n < 0:
            n = -n
        aa = {T}(complex({R}(1), {R}(0)))
        p = a
        mask = 1
        while True:
            if (n & mask) != 0:
                aa = H_cmul_plain(aa, p)
            mask = mask << 1
            if n < mask:
                break
            p = H_cmul_plain(p, p)
        if br < 0:
            return H_cdiv({T}(complex({R}(1), {R}(0))), aa)
        return aa
    w = H_cmul_c99(b, H_clog(a))
    if {K_CPOWF_NAN} and w.imag != w.imag and ar == ar and ai == ai and br == br and bi == bi:
        # complex64: a NaN the product made (0 * inf) has its sign bit set on x86, not on the
        # GPU, and glibc's cexpf(-inf + NaN i) gives its zero that sign (NumPy: 0 - 0i; the
        # H200 gave 0 + 0i before this). complex128 matched NumPy without it, and with it
        # float_power gave 0 - 0i where NumPy has 0 + 0i (H200, 2026-12-03 calls #8, #11)
        w = {T}(complex(w.real, F_copysign(w.imag, {R}(-1))))
    return H_cexp(w)
"""
_CMUL_PLAIN = _PARTS + """\
    return {T}(complex({R}({R}(ar * br) - {R}(ai * bi)), {R}({R}(ar * bi) + {R}(ai * br))))
"""
# the C compiler's complex product (libgcc's __muldc3, C99 Annex G.5.1): the plain product,
# and where both parts are NaN, infinities recovered as the Annex's example does
_CMUL_C99 = _PARTS + """\
    ac = {R}(ar * br)
    bd = {R}(ai * bi)
    ad = {R}(ar * bi)
    bc = {R}(ai * br)
    x = {R}(ac - bd)
    y = {R}(ad + bc)
    if x != x and y != y:
        ainf = F_fabs(ar) == math.inf or F_fabs(ai) == math.inf
        binf = F_fabs(br) == math.inf or F_fabs(bi) == math.inf
        big = not (ainf or binf) and (F_fabs(ac) == math.inf or F_fabs(bd) == math.inf
                                      or F_fabs(ad) == math.inf or F_fabs(bc) == math.inf)
        if ainf:
            ar = H_cbox(ar)
            ai = H_cbox(ai)
        if binf:
            br = H_cbox(br)
            bi = H_cbox(bi)
        if binf or big:
            ar = H_cnan0(ar)
            ai = H_cnan0(ai)
        if ainf or big:
            br = H_cnan0(br)
            bi = H_cnan0(bi)
        if ainf or binf or big:
            x = {R}({R}(math.inf) * {R}({R}(ar * br) - {R}(ai * bi)))
            y = {R}({R}(math.inf) * {R}({R}(ar * bi) + {R}(ai * br)))
    return {T}(complex(x, y))
"""
# __muldc3's box (an infinite part to +-1, a finite or NaN one to +-0) and NaN to +-0
_CBOX = """\
def {name}(v):
    return F_copysign({R}(1 if F_fabs(v) == math.inf else 0), v)
"""
_CNAN0 = """\
def {name}(v):
    return F_copysign({R}(0), v) if v != v else v
"""
# s_csinh.c / s_ccosh.c (npy_csinh, npy_ccosh): exp(|x|) / 2 for |x| >= K_HYP_BIG, scaled
# (H_cexp_scaled) where that overflows. Infinite and NaN parts: the values glibc's csinh and
# ccosh give where C99 Annex G leaves a sign unspecified (csinh(+-0 + inf i) = +-0 + NaN i,
# ccosh(+-0 + inf i) = NaN + 0i, ...), not msun's, which takes the sign of a NaN (a NaN's sign
# differs between x86 and the GPU)
# their finite part (both files alike): sinh(x) cos(y) + cosh(x) sin(y) i or cosh(x) cos(y) +
# sinh(x) sin(y) i; from |x| = K_HYP_BIG on, exp(|x|) / 2 (cos(y) + sin(y) i), scaled where
# exp overflows, inf beyond, with x's sign on the part of sinh
_CHYP = """\
def {name}(x, y, sinh):
    if y == 0:
        if sinh:
            return {T}(complex(F_sinh(x), y))
        return {T}(complex(F_cosh(x), {R}(x * y)))
    absx = F_fabs(x)
    if absx < {R}({K_HYP_BIG}):
        sh = F_sinh(x)
        ch = F_cosh(x)
        if sinh:
            return {T}(complex({R}(sh * F_cos(y)), {R}(ch * F_sin(y))))
        return {T}(complex({R}(ch * F_cos(y)), {R}(sh * F_sin(y))))
    if absx < {R}({K_EXP_HI}) and absx >= {R}({K_EXP_LO}):
        w = H_cexp_scaled(absx, y, -1)
    else:
        h = {R}(F_exp(absx) * {R}(0.5)) if absx < {R}({K_EXP_LO}) else {R}({R}({K_HYP_HUGE}) * absx)
        w = {T}(complex({R}(h * F_cos(y)), {R}(h * F_sin(y))))
    if sinh:
        return {T}(complex({R}(w.real * F_copysign({R}(1), x)), w.imag))
    return {T}(complex(w.real, {R}(w.imag * F_copysign({R}(1), x))))
"""


def _hyperbolic_head(sinh: str) -> str:
    """csinh's and ccosh's first lines: finite parts to H_chyp."""
    return f"""\
def {{name}}(z):
    x = z.real
    y = z.imag
    xfinite = F_fabs(x) < math.inf
    if xfinite and F_fabs(y) < math.inf:
        return H_chyp(x, y, {sinh})
"""


_CSINH = _hyperbolic_head("True") + """\
    if xfinite:
        if x == 0:
            return {T}(complex(x, {R}(y - y)))
        return {T}(complex({R}(math.nan), {R}(math.nan)))
    if x != x:
        return {T}(complex(x, y if y == 0 else {R}(math.nan)))
    if y == 0:
        return z
    if not F_fabs(y) < math.inf:
        return {T}(complex({R}(math.inf), {R}(y - y)))
    return {T}(complex({R}(x * F_cos(y)), {R}({R}(math.inf) * F_sin(y))))
"""
_CCOSH = _hyperbolic_head("False") + """\
    if xfinite:
        return {T}(complex({R}(y - y), {R}(0) if x == 0 else {R}(math.nan)))
    if x != x:
        return {T}(complex(x, y if y == 0 else {R}(math.nan)))
    if y == 0:
        return {T}(complex({R}(math.inf), {R}(y * F_copysign({R}(1), x))))
    if not F_fabs(y) < math.inf:
        return {T}(complex({R}(math.inf), {R}(y - y)))
    return {T}(complex({R}({R}(x * x) * F_cos(y)), {R}(x * F_sin(y))))
"""
# s_ctanh.c (npy_ctanh): Kahan's algorithm, +-1 + 4 sin(y) cos(y) exp(-2|x|) i for large |x|;
# infinite and NaN parts as glibc's ctanh gives them (ctanh(+-0 + inf i) = +-0 + NaN i)
_CTANH = """\
def {name}(z):
    x = z.real
    y = z.imag
    if F_fabs(x) == math.inf:
        big = F_fabs(y) > 1 and F_fabs(y) < math.inf
        return {T}(complex(F_copysign({R}(1), x),
                           F_copysign({R}(0), {R}(F_sin(y) * F_cos(y)) if big else y)))
    if not (x == x and F_fabs(y) < math.inf):
        if y == 0:
            return z
        return {T}(complex(x if x == 0 else {R}(math.nan), {R}(math.nan)))
    if F_fabs(x) >= {R}({K_TANH_HUGE}):
        exp_mx = F_exp(-F_fabs(x))
        return {T}(complex(F_copysign({R}(1), x),
                           {R}({R}({R}({R}({R}(4) * F_sin(y)) * F_cos(y)) * exp_mx) * exp_mx)))
    t = F_tan(y)
    beta = {R}({R}(1) + {R}(t * t))
    s = F_sinh(x)
    rho = F_sqrt({R}({R}(1) + {R}(s * s)))
    denom = {R}({R}(1) + {R}({R}(beta * s) * s))
    return {T}(complex({R}({R}({R}(beta * rho) * s) / denom), {R}(t / denom)))
"""
# csin(z) = -i csinh(iz), ccos(z) = ccosh(iz), ctan(z) = -i ctanh(iz) (npy_csin, ...); glibc's
# ccos and ctan are exactly that, its csin has its own special values (H_csin)
_ROTATED = """\
def {name}(z):
    w = H_{fn}({T}(complex(-z.imag, z.real)))
    return {T}(complex({re}, {im}))
"""
_CSIN = """\
def {name}(z):
    x = z.real
    y = z.imag
    if F_fabs(x) < math.inf and F_fabs(y) < math.inf:
        w = H_csinh({T}(complex(-y, x)))
        return {T}(complex(w.imag, -w.real))
    if F_fabs(y) < math.inf:
        return {T}(complex({R}(math.nan), y if y == 0 else {R}(math.nan)))
    if y != y:
        return {T}(complex(x if x == 0 else {R}(math.nan), {R}(math.nan)))
    if x == 0:
        return z
    if F_fabs(x) < math.inf:
        return {T}(complex(F_copysign({R}(math.inf), F_sin(x)),
                           {R}(F_copysign({R}(math.inf), F_cos(x)) * F_copysign({R}(1), y))))
    return {T}(complex({R}(math.nan), {R}(math.inf)))
"""
# catrig.c (npy_math_complex.c.src): Hull et al., "Implementing the complex arcsine and
# arccosine functions using exception handling", ACM TOMS 23 (1997). H_chard is
# _do_hard_work (x, y >= 0): (the real part of casinh, B usable (1.0) or not (0.0), B,
# sqrt(A**2 - y**2), new_y); H_cf is its f(a, b, hypot(a, b)). With a NaN part, the values
# glibc gives where the Annex leaves a sign open: casinh(NaN +- inf i) = copysign(inf, NaN) +
# NaN i, cacos(+-inf + NaN i) = NaN - copysign(inf, NaN) i (the operand NaN's sign).
_CF = """\
def {name}(a, b, h):
    if b < 0:
        return {R}({R}(h - b) * {R}(0.5))
    if b == 0:
        return {R}(a * {R}(0.5))
    return {R}({R}({R}(a * a) / {R}(h + b)) * {R}(0.5))
"""
_CHARD = """\
def {name}(x, y):
    one = {R}(1)
    eps = {R}({K_EPS})
    r = F_hypot(x, {R}(y + one))
    s = F_hypot(x, {R}(y - one))
    a = {R}({R}(r + s) * {R}(0.5))
    if a < one:
        a = one
    if a < {R}(10):
        if y == one and x < {R}({K_EPS2_128}):
            rx = F_sqrt(x)
        elif x >= {R}(eps * F_fabs({R}(y - one))):
            am1 = {R}(H_cf(x, {R}(one + y), r) + H_cf(x, {R}(one - y), s))
            rx = F_log1p({R}(am1 + F_sqrt({R}(am1 * {R}(a + one)))))
        elif y < one:
            rx = {R}(x / F_sqrt({R}({R}(one - y) * {R}(one + y))))
        else:
            rx = F_log1p({R}({R}(y - one) + F_sqrt({R}({R}(y - one) * {R}(y + one)))))
    else:
        rx = F_log({R}(a + F_sqrt({R}({R}(a * a) - one))))
    if y < {R}({K_FOUR_SQRT_MIN}):
        return rx, {R}(0), {R}(0), {R}(a * {R}({K_2_EPS})), {R}(y * {R}({K_2_EPS}))
    b = {R}(y / a)
    if b <= {R}(0.6417):
        return rx, one, b, {R}(0), y
    new_y = y
    if y == one and x < {R}({K_EPS_128}):
        sq = {R}(F_sqrt(x) * F_sqrt({R}({R}(a + y) * {R}(0.5))))
    elif x >= {R}(eps * F_fabs({R}(y - one))):
        amy = {R}(H_cf(x, {R}(y + one), r) + H_cf(x, {R}(y - one), s))
        sq = F_sqrt({R}(amy * {R}(a + y)))
    elif y > one:
        sq = {R}({R}({R}(x * {R}({K_4_EPS2})) * y) / F_sqrt({R}({R}(y + one) * {R}(y - one))))
        new_y = {R}(y * {R}({K_4_EPS2}))
    else:
        sq = F_sqrt({R}({R}(one - y) * {R}(one + y)))
    return rx, {R}(0), b, sq, new_y
"""
# _clog_for_large_values: log|z| and arg z of a large z, as (real, imaginary) parts
_CLOG_LARGE = """\
def {name}(x, y):
    ax = F_fabs(x)
    ay = F_fabs(y)
    if ax < ay:
        t = ax
        ax = ay
        ay = t
    if ax > {R}({K_MAX_2}):
        rr = {R}(F_log(F_hypot({R}(x / {R}({K_E})), {R}(y / {R}({K_E})))) + {R}(1))
    elif ax > {R}({K_QUARTER_SQRT_MAX}) or ay < {R}({K_SQRT_MIN}):
        rr = F_log(F_hypot(x, y))
    else:
        rr = {R}(F_log({R}({R}(ax * ax) + {R}(ay * ay))) * {R}(0.5))
    return {T}(complex(rr, F_arctan2(y, x)))
"""
# (casinh, cacos, catanh: z's parts and their magnitudes)
_CATRIG_HEAD = """\
def {name}(z):
    x = z.real
    y = z.imag
    ax = F_fabs(x)
    ay = F_fabs(y)
    pio2 = {R}({K_PI_2})
"""
_CASINH = _CATRIG_HEAD + """\
    if x != x or y != y:
        if ax == math.inf:
            return {T}(complex(x, {R}(y + y)))
        if ay == math.inf:
            return {T}(complex(F_copysign({R}(math.inf), x), {R}(x + x)))
        if y == 0:
            return {T}(complex({R}(x + x), y))
        return {T}(complex({R}(math.nan), {R}(math.nan)))
    if ax > {R}({K_RECIP_EPS}) or ay > {R}({K_RECIP_EPS}):
        if F_copysign({R}(1), x) > 0:
            w = H_clog_large(x, y)
        else:
            w = H_clog_large(-x, -y)
        return {T}(complex(F_copysign({R}(w.real + {R}({K_LN2})), x), F_copysign(w.imag, y)))
    if x == 0 and y == 0:
        return z
    if ax < {R}({K_SQRT_6_EPS_4}) and ay < {R}({K_SQRT_6_EPS_4}):
        return z
    rx, usable, b, sq, new_y = H_chard(ax, ay)
    if usable != 0:
        ry = F_arcsin(b)
    else:
        ry = F_arctan2(new_y, sq)
    return {T}(complex(F_copysign(rx, x), F_copysign(ry, y)))
"""
_CACOS = _CATRIG_HEAD + """\
    if x != x or y != y:
        if ax == math.inf:
            return {T}(complex({R}(y + y), -F_copysign({R}(math.inf), y)))
        if ay == math.inf:
            return {T}(complex({R}(x + x), -y))
        if x == 0:
            return {T}(complex(pio2, {R}(y + y)))
        return {T}(complex({R}(math.nan), {R}(math.nan)))
    if ax > {R}({K_RECIP_EPS}) or ay > {R}({K_RECIP_EPS}):
        w = H_clog_large(x, y)
        ry = {R}(w.real + {R}({K_LN2}))
        return {T}(complex(F_fabs(w.imag), -ry if F_copysign({R}(1), y) > 0 else ry))
    if x == 1 and y == 0:
        return {T}(complex({R}(0), -y))
    if ax < {R}({K_SQRT_6_EPS_4}) and ay < {R}({K_SQRT_6_EPS_4}):
        return {T}(complex({R}(pio2 - {R}(x - {R}({K_PIO2_LO}))), -y))
    ry, usable, b, sq, new_x = H_chard(ay, ax)
    if usable != 0:
        rx = F_arccos(b if F_copysign({R}(1), x) > 0 else -b)
    else:
        rx = F_arctan2(sq, new_x if F_copysign({R}(1), x) > 0 else -new_x)
    return {T}(complex(rx, -ry if F_copysign({R}(1), y) > 0 else ry))
"""
# npy_cacosh: from cacos, with its special cases (and glibc's cacosh(+-0 + NaN i) = NaN + pi/2 i)
_CACOSH = """\
def {name}(z):
    if z.real == 0 and z.imag != z.imag:
        return {T}(complex({R}(math.nan), {R}({K_PI_2})))
    w = H_cacos(z)
    rx = w.real
    ry = w.imag
    if rx != rx and ry != ry:
        return {T}(complex(ry, rx))
    if rx != rx:
        return {T}(complex(F_fabs(ry), rx))
    if ry != ry:
        return {T}(complex(ry, ry))
    return {T}(complex(F_fabs(ry), F_copysign(rx, z.imag)))
"""
# catanh's _real_part_reciprocal: Re(1 / (x + yi)) = x / (x**2 + y**2) without overflow. msun
# compares exponent fields (a difference of K_CUTOFF binades) and scales by 2**(1 - ilogb(x));
# here the binades are compared by value and the scale is a fixed power of two that keeps the
# squares finite (x and y are then both above 2**K_RECIP_BIG_EXP): the same formulas, the
# same roundings except exactly at the boundaries, where both formulas agree within an ulp
_CREAL_RECIP = """\
def {name}(x, y):
    ax = F_fabs(x)
    ay = F_fabs(y)
    if ax == math.inf or ax >= {R}(ay * {R}({K_CUTOFF})):
        return {R}({R}(1) / x)
    if ay >= {R}(ax * {R}({K_CUTOFF})):
        return {R}({R}(x / y) / y)
    if ax < {R}({K_RECIP_BIG}):
        return {R}(x / {R}({R}(x * x) + {R}(y * y)))
    xs = {R}(x * {R}({K_RECIP_SCALE}))
    ys = {R}(y * {R}({K_RECIP_SCALE}))
    return {R}({R}(xs / {R}({R}(xs * xs) + {R}(ys * ys))) * {R}({K_RECIP_SCALE}))
"""
_CATANH = _CATRIG_HEAD + """\
    if y == 0 and ax <= 1:
        return {T}(complex(F_arctanh(x), y))
    if x == 0:
        return {T}(complex(x, F_arctan(y)))
    if x != x or y != y:
        if ax == math.inf:
            return {T}(complex(F_copysign({R}(0), x), {R}(y + y)))
        if ay == math.inf:
            return {T}(complex(F_copysign({R}(0), x), F_copysign(pio2, y)))
        return {T}(complex({R}(math.nan), {R}(math.nan)))
    if ax > {R}({K_RECIP_EPS}) or ay > {R}({K_RECIP_EPS}):
        return {T}(complex(H_creal_recip(x, y), F_copysign(pio2, y)))
    if ax < {R}({K_SQRT_3_EPS_2}) and ay < {R}({K_SQRT_3_EPS_2}):
        return z
    one = {R}(1)
    if ax == 1 and ay < {R}({K_EPS}):
        rx = {R}({R}({R}({K_LN2}) - F_log(ay)) * {R}(0.5))
    else:
        am1 = {R}(ax - one)
        ss = {R}(am1 * am1) if ay < {R}({K_SQRT_MIN}) else {R}({R}(am1 * am1) + {R}(ay * ay))
        rx = {R}(F_log1p({R}({R}({R}(4) * ax) / ss)) * {R}(0.25))
    if ax == 1:
        ry = {R}(F_arctan2({R}(2), -ay) * {R}(0.5))
    elif ay < {R}({K_EPS}):
        ry = {R}(F_arctan2({R}({R}(2) * ay), {R}({R}(one - ax) * {R}(one + ax))) * {R}(0.5))
    else:
        ry = {R}(F_arctan2({R}({R}(2) * ay), {R}({R}({R}(one - ax) * {R}(one + ax))
                                                 - {R}(ay * ay))) * {R}(0.5))
    return {T}(complex(F_copysign(rx, x), F_copysign(ry, y)))
"""
# casin(z) = i conj(casinh(i conj(z))), catan(z) = i conj(catanh(i conj(z))): swap the parts
_SWAPPED = """\
def {name}(z):
    w = H_{fn}({T}(complex(z.imag, z.real)))
    return {T}(complex(w.imag, w.real))
"""
# NumPy's complex clip (numpy/_core/src/umath/clip.cpp): _NPY_MIN(_NPY_MAX(x, lo), hi), where
# max/min keep their first operand if it has a NaN part or compares greater/less
# (PyArray_CGT/CLT: the imaginary parts decide when the real parts are equal)
_CCLIP = """\
def {name}(x, lo, hi):
    m = x
    if not (x.real != x.real or x.imag != x.imag or (x.imag > lo.imag if x.real == lo.real
                                                     else x.real > lo.real)):
        m = lo
    if m.real != m.real or m.imag != m.imag or (m.imag < hi.imag if m.real == hi.real
                                                else m.real < hi.real):
        return m
    return hi
"""


def _rotated(fn: str, re: str, im: str) -> str:
    return _ROTATED.replace("{fn}", fn).replace("{re}", re).replace("{im}", im)


def _f4(x: float) -> float:
    """``x`` rounded to float32 (C's float constants and float expressions of them)."""
    return float(np.float32(x))


_LN2_F4 = _f4(0.6931471805599453)
_EPS = (float(np.finfo(np.float32).eps), float(np.finfo(np.float64).eps))
#: the precision-dependent constants of the complex helpers ``{K_name}``: (float32, float64),
#: the values of npy_math_complex.c.src (msun's) for each precision
_CX_CONSTANTS: dict[str, tuple[float, float]] = {
    "K_EPS": _EPS,
    "K_EPS2_128": (_EPS[0] ** 2 / 128, _EPS[1] ** 2 / 128),
    "K_EPS_128": (_EPS[0] / 128, _EPS[1] / 128),
    "K_2_EPS": (2 / _EPS[0], 2 / _EPS[1]),
    "K_4_EPS2": (4 / _EPS[0] / _EPS[0], 4 / _EPS[1] / _EPS[1]),
    "K_RECIP_EPS": (1 / _EPS[0], 1 / _EPS[1]),
    "K_MAX_2": (_f4(3.4028234663852886e+38 / 2), 1.7976931348623157e+308 / 2),
    "K_MAX_4": (_f4(3.4028234663852886e+38 / 4), 1.7976931348623157e+308 / 4),
    "K_MIN": (1.1754943508222875e-38, 2.2250738585072014e-308),
    "K_2_MIN": (2 * 1.1754943508222875e-38, 2 * 2.2250738585072014e-308),
    "K_SQRT_UP": (2.0 ** 24, 2.0 ** 54),
    "K_SQRT_DOWN": (2.0 ** -12, 2.0 ** -27),
    "K_2_MANT": (2.0 ** 24, 2.0 ** 53),
    "K_MANT_LN2": (_f4(24 * _LN2_F4), 53 * 0.6931471805599453),
    "K_LN2": (_LN2_F4, 0.6931471805599453),
    "K_E": (_f4(2.718281828459045), 2.718281828459045),
    "K_PI_2": (_f4(1.5707963267948966), 1.5707963267948966),
    "K_PIO2_LO": (_f4(7.5497899549e-9), 6.1232339957367659e-17),
    "K_SQRT_THRESH": (_f4(3.4028234663852886e+38 / _f4(1 + _f4(1.4142135623730951))),
                      1.7976931348623157e+308 / (1 + 1.4142135623730951)),
    # cexp's scaled range [log(MAX), log(2 MAX / TRUE_MIN)], msun's k and k ln 2 (_CEXP_SCALED);
    # the lower bound is msun's (npy_math_complex.c.src's, log(2 MAX), overflows exp(710) + yi)
    "K_EXP_LO": (88.72283935546875, 709.7822265625),      # (msun's 0x42b17218, 0x40862e42)
    "K_EXP_HI": (_f4(192.69492), 1454.9159319953251),
    "K_EXP_KLN2": (_f4(235 * _LN2_F4), 1799 * 0.6931471805599453),
    "K_EXP_K": (235, 1799),
    "K_HYP_BIG": (9.0, 22.0),
    "K_HYP_HUGE": (_f4(1.70141183e+38), 8.9884656743115795e+307),
    "K_TANH_HUGE": (11.0, 22.0),
    "K_FOUR_SQRT_MIN": (_f4(4.3368086899420177e-19), 5.9666725849601654e-154),
    "K_QUARTER_SQRT_MAX": (_f4(4.611685743549481e+18), 3.3519519824856489e+153),
    "K_SQRT_MIN": (_f4(1.0842021724855044e-19), 1.4916681462400413e-154),
    "K_SQRT_6_EPS_4": (_f4(_f4(8.4572793338e-4) / 4), 3.65002414998885671e-08 / 4),
    "K_SQRT_3_EPS_2": (_f4(_f4(5.9801995673e-4) / 2), 2.5809568279517849e-8 / 2),
    # _CREAL_RECIP: 2**CUTOFF (CUTOFF = MANT_DIG / 2 + 1), 2**(MAX_EXP / 2 - CUTOFF + 1), the scale
    "K_CUTOFF": (2.0 ** 13, 2.0 ** 27),
    # H_cpow: give a NaN of the product x86's sign bit (complex64 only: its comment says why)
    "K_CPOWF_NAN": (True, False),
    "K_RECIP_BIG": (2.0 ** 52, 2.0 ** 486),
    "K_RECIP_SCALE": (2.0 ** -70, 2.0 ** -600),
}
_CX_LOG = {"H_clog2": (_f4(1.4426950408889634), 1.4426950408889634),
           "H_clog10": (_f4(0.4342944819032518), 0.4342944819032518)}
_COMPLEX_FUNCTIONS = {
    "H_csqrt": _CSQRT, "H_cexp": _CEXP, "H_cexp_scaled": _CEXP_SCALED, "H_clog": _CLOG,
    "H_clog2": _CLOG_TIMES, "H_clog10": _CLOG_TIMES, "H_cexp2": _CEXP2,
    "H_clog1p": _CLOG1P, "H_cexpm1": _CEXPM1, "H_cpow": _CPOW, "H_cmul_plain": _CMUL_PLAIN,
    "H_cmul_c99": _CMUL_C99, "H_cbox": _CBOX, "H_cnan0": _CNAN0,
    "H_chyp": _CHYP, "H_csinh": _CSINH, "H_ccosh": _CCOSH, "H_ctanh": _CTANH,
    "H_csin": _CSIN, "H_ccos": _rotated("ccosh", "w.real", "w.imag"),
    "H_ctan": _rotated("ctanh", "w.imag", "-w.real"),
    "H_cf": _CF, "H_chard": _CHARD, "H_clog_large": _CLOG_LARGE, "H_casinh": _CASINH,
    "H_cacos": _CACOS, "H_cacosh": _CACOSH, "H_creal_recip": _CREAL_RECIP, "H_catanh": _CATANH,
    "H_casin": _SWAPPED.replace("{fn}", "casinh"), "H_catan": _SWAPPED.replace("{fn}", "catanh"),
    "H_cclip": _CCLIP,
}

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
    "H_philox64x2": (_PHILOX_F64_PAIR, _PHILOX_F64_PAIR),
    "H_philox32x2": (_PHILOX_F32_PAIR, _PHILOX_F32_PAIR),
    "H_ifmod": (_SIGNED_FMOD, _UNSIGNED_REM),
    "H_fspacing": (_FSPACING, _FSPACING),
    "H_fheaviside": (_FHEAVISIDE, _FHEAVISIDE),
    "H_flogaddexp": (_FLOGADDEXP, _FLOGADDEXP),
    "H_fldexp": (_FLDEXP, _FLDEXP),
    "H_ffrexp_mantissa": (_FFREXP_MANTISSA, _FFREXP_MANTISSA),
    "H_ffrexp_exponent": (_FFREXP_EXPONENT, _FFREXP_EXPONENT),
    "H_fmodf_fraction": (_FMODF_FRACTION, _FMODF_FRACTION),
    "H_flogaddexp2": (_FLOGADDEXP2, _FLOGADDEXP2),
    "H_hnextafter": (_HNEXTAFTER, _HNEXTAFTER),
    "H_hspacing": (_HSPACING, _HSPACING),
    "H_cmul": (_CMUL, _CMUL),
    "H_csquare": (_CSQUARE, _CSQUARE),
    "H_cdiv": (_CDIV, _CDIV),
    "H_crecip": (_CRECIP, _CRECIP),
    "H_cabs": (_CABS, _CABS),
    "H_csign": (_CSIGN, _CSIGN),
    **{name: (template, template) for name, template in _COMPLEX_FUNCTIONS.items()},
}

#: the helpers' names (``H_name``)
HELPERS = frozenset(_TEMPLATES)
#: the float functions the helpers call
FLOAT_FUNCTIONS = frozenset(name for pair in _TEMPLATES.values() for template in pair
                            for name in FLOAT_CALL.findall(template))


#: helper -> the helpers it calls (rendered before it, for the same compute dtype)
CALLS: dict[str, tuple[str, ...]] = {
    name: tuple(sorted(set(HELPER_CALL.findall(pair[0])))) for name, pair in _TEMPLATES.items()}


def helper_source(helper: str, dtype: np.dtype, name: str, cast: str, fsuffix: str) -> str:
    """The source of ``helper`` for compute dtype ``dtype``, as function ``name``; a helper it
    calls, ``H_x(``, is called as ``H_x_<dtype name>(`` (``CALLS`` lists them)."""
    signed_or_float, unsigned = _TEMPLATES[helper]
    template = unsigned if dtype.kind == "u" else signed_or_float
    part = f"_C_{np.finfo(dtype).dtype.name}" if dtype.kind == "c" else cast  # {R}: a part's type
    wide = np.finfo(dtype).bits == 64 if dtype.kind in "fc" else True
    consts = {k: repr(v[wide]) for k, v in _CX_CONSTANTS.items()}
    if helper in _CX_LOG:
        consts["K_LOG"] = repr(_CX_LOG[helper][wide])
    template = HELPER_CALL.sub(lambda m: f"{m.group(1)}_{dtype.name}(", template)
    src = template.format(name=name, T=cast, R=part, **consts)
    return FLOAT_CALL.sub(lambda m: f"F_{m.group(1)}_{fsuffix}(", src)
