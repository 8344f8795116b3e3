# cython: language_level=3, boundscheck=False, wraparound=False
"""``philox_bits``: a NumPy ufunc (uint64, uint64, uint64) -> uint64, Philox4x32-10 of
(counter, key, stream) as ``_philox.h`` defines it. The fused CPU kernels call its loop like
any ufunc's (``ufunc._get_strided_loop``); ``philox4x32`` exposes the raw block for tests."""
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


cdef void _bits_loop(char **args, const cnp.npy_intp *dims, const cnp.npy_intp *steps,
                     void *data) noexcept nogil:
    cdef cnp.npy_intp i, n = dims[0]
    cdef char *c = args[0]
    cdef char *k = args[1]
    cdef char *s = args[2]
    cdef char *o = args[3]
    cdef const uint64_t *cv = <const uint64_t *>c
    cdef uint64_t *ov = <uint64_t *>o
    cdef uint64_t key, stream
    cdef cnp.npy_intp start = 0, end = n
    if n >= 8 and steps[0] == 8 and steps[1] == 0 and steps[2] == 0 and steps[3] == 8 \
            and cv[n - 1] - cv[0] == <uint64_t>(n - 1):
        # consecutive counters (a draw read in order): whole blocks at once
        for i in range(1, n):
            if cv[i] != cv[0] + <uint64_t>i:
                break
        else:
            key, stream = (<uint64_t *>k)[0], (<uint64_t *>s)[0]
            if cv[0] & 1:               # an odd first counter: the second half of its block
                ov[0] = lz_philox_bits(cv[0], key, stream)
                start = 1
            lz_philox_pairs(cv[start], key, stream, ov + start, (n - start) // 2)
            start += 2 * ((n - start) // 2)
            c += start * 8; k += start * steps[1]; s += start * steps[2]; o += start * 8
    for i in range(start, end):
        (<uint64_t *>o)[0] = lz_philox_bits((<uint64_t *>c)[0], (<uint64_t *>k)[0],
                                            (<uint64_t *>s)[0])
        c += steps[0]; k += steps[1]; s += steps[2]; o += steps[3]


cdef cnp.PyUFuncGenericFunction _loops[1]
cdef char _types[4]
cdef void *_data[1]
_loops[0] = <cnp.PyUFuncGenericFunction>_bits_loop
_types[0] = cnp.NPY_UINT64
_types[1] = cnp.NPY_UINT64
_types[2] = cnp.NPY_UINT64
_types[3] = cnp.NPY_UINT64
_data[0] = NULL

philox_bits = cnp.PyUFunc_FromFuncAndData(
    _loops, _data, _types, 1, 3, 1, cnp.PyUFunc_None, "philox_bits",
    "philox_bits(counter, key, stream): the low 64 bits of Philox4x32-10's block for the "
    "counter words (counter, stream) and key (uint64 operands and result).", 0)


def philox4x32(counter, key):
    """The four 32-bit words of Philox4x32-10 for four counter words and two key words."""
    cdef uint32_t c[4]
    for i in range(4):
        c[i] = <uint32_t>counter[i]
    lz_philox4x32_10(c, <uint32_t>key[0], <uint32_t>key[1])
    return tuple(int(c[i]) for i in range(4))
