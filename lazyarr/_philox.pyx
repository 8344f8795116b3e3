# cython: language_level=3, boundscheck=False, wraparound=False
"""Philox4x32-10 as NumPy ufuncs of (counter, key, stream), all uint64 operands, as
``_philox.h`` defines them: ``philox_bits`` -> uint64 (the random bits), ``philox_random64`` ->
float64 and ``philox_random32`` -> float32 (uniform in [0, 1) from those bits, as NumPy makes
floats). The fused CPU kernels call their loops like any ufunc's (``ufunc._get_strided_loop``);
``philox4x32`` exposes the raw block for tests."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint32_t, uint64_t

cnp.import_array()
cnp.import_ufunc()

cdef extern from "_philox.h":
    void lz_philox4x32_10(uint32_t c[4], uint32_t k0, uint32_t k1) nogil
    uint64_t lz_philox_bits(uint64_t counter, uint64_t key, uint64_t stream) nogil
    void lz_philox_pairs(uint64_t first, uint64_t key, uint64_t stream, uint64_t *out,
                         long n) nogil
    void lz_philox_pairs_f64(uint64_t first, uint64_t key, uint64_t stream, double *out,
                             long n) nogil
    void lz_philox_pairs_f32(uint64_t first, uint64_t key, uint64_t stream, float *out,
                             long n) nogil
    double lz_unit_f64(uint64_t b) nogil
    float lz_unit_f32(uint64_t b) nogil


cdef enum:
    BITS = 0
    F64 = 1
    F32 = 2


cdef inline void _store(int kind, char *o, uint64_t bits) noexcept nogil:
    if kind == F64:
        (<double *>o)[0] = lz_unit_f64(bits)
    elif kind == F32:
        (<float *>o)[0] = lz_unit_f32(bits)
    else:
        (<uint64_t *>o)[0] = bits


cdef void _loop(char **args, const cnp.npy_intp *dims, const cnp.npy_intp *steps,
                void *data) noexcept nogil:
    """The loop of the three ufuncs (``data``: what it writes, BITS, F64 or F32)."""
    cdef int kind = <int><size_t>data
    cdef cnp.npy_intp i, n = dims[0], osz = 4 if kind == F32 else 8, pairs
    cdef char *c = args[0]
    cdef char *k = args[1]
    cdef char *s = args[2]
    cdef char *o = args[3]
    cdef const uint64_t *cv = <const uint64_t *>c
    cdef uint64_t key, stream
    cdef cnp.npy_intp start = 0
    if n >= 8 and steps[0] == 8 and steps[1] == 0 and steps[2] == 0 and steps[3] == osz \
            and cv[n - 1] - cv[0] == <uint64_t>(n - 1):
        # consecutive counters (a draw read in order): whole blocks at once
        for i in range(1, n):
            if cv[i] != cv[0] + <uint64_t>i:
                break
        else:
            key, stream = (<uint64_t *>k)[0], (<uint64_t *>s)[0]
            if cv[0] & 1:               # an odd first counter: the second half of its block
                _store(kind, o, lz_philox_bits(cv[0], key, stream))
                start = 1
            pairs = (n - start) // 2
            if kind == F64:
                lz_philox_pairs_f64(cv[start], key, stream, <double *>(o + start * osz), pairs)
            elif kind == F32:
                lz_philox_pairs_f32(cv[start], key, stream, <float *>(o + start * osz), pairs)
            else:
                lz_philox_pairs(cv[start], key, stream, <uint64_t *>(o + start * osz), pairs)
            start += 2 * pairs
            c += start * 8; o += start * osz
    for i in range(start, n):
        _store(kind, o, lz_philox_bits((<uint64_t *>c)[0], (<uint64_t *>k)[0], (<uint64_t *>s)[0]))
        c += steps[0]; k += steps[1]; s += steps[2]; o += steps[3]


cdef cnp.PyUFuncGenericFunction _loops[1]
_loops[0] = <cnp.PyUFuncGenericFunction>_loop
cdef char _types_bits[4]
cdef char _types_f64[4]
cdef char _types_f32[4]
for _i in range(3):
    _types_bits[_i] = _types_f64[_i] = _types_f32[_i] = cnp.NPY_UINT64
_types_bits[3], _types_f64[3], _types_f32[3] = cnp.NPY_UINT64, cnp.NPY_FLOAT64, cnp.NPY_FLOAT32
cdef void *_data_bits[1]
cdef void *_data_f64[1]
cdef void *_data_f32[1]
_data_bits[0], _data_f64[0], _data_f32[0] = <void *>BITS, <void *>F64, <void *>F32

philox_bits = cnp.PyUFunc_FromFuncAndData(
    _loops, _data_bits, _types_bits, 1, 3, 1, cnp.PyUFunc_None, "philox_bits",
    "philox_bits(counter, key, stream): 64 random bits, half of the Philox4x32-10 block "
    "(counter >> 1, stream) under key (lazyarr/_philox.h).", 0)
philox_random64 = cnp.PyUFunc_FromFuncAndData(
    _loops, _data_f64, _types_f64, 1, 3, 1, cnp.PyUFunc_None, "philox_random64",
    "philox_random64(counter, key, stream): a float64 in [0, 1), (bits >> 11) * 2**-53 of "
    "philox_bits.", 0)
philox_random32 = cnp.PyUFunc_FromFuncAndData(
    _loops, _data_f32, _types_f32, 1, 3, 1, cnp.PyUFunc_None, "philox_random32",
    "philox_random32(counter, key, stream): a float32 in [0, 1), (bits >> 40) * 2**-24 of "
    "philox_bits.", 0)


def philox4x32(counter, key):
    """The four 32-bit words of Philox4x32-10 for four counter words and two key words."""
    cdef uint32_t c[4]
    for i in range(4):
        c[i] = <uint32_t>counter[i]
    lz_philox4x32_10(c, <uint32_t>key[0], <uint32_t>key[1])
    return tuple(int(c[i]) for i in range(4))
