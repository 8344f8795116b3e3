"""Helper device functions for the CUDA templates (``H_name(`` in ``templates.TEMPLATES``).

Each helper is rendered per compute dtype: ``{T}`` becomes that dtype's cast and ``F_x(``
the float function of its width. They copy NumPy's C loops (``npy_divmod``, ``npy_lshift``, ...)
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
_PHILOX = """\
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
    if (ctr & {T}(1)) != {T}(0):
        return {T}(c2) | ({T}(c3) << {T}(32))
    return {T}(c0) | ({T}(c1) << {T}(32))
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
    "H_philox": (_PHILOX, _PHILOX),
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
    src = template.format(name=name, T=cast)
    return FLOAT_CALL.sub(lambda m: f"F_{m.group(1)}_{fsuffix}(", src)
