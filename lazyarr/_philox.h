/* Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3",
 * SC'11; the Random123 reference): a counter-based generator, so draw i of a stream is a pure
 * function of (i, stream, key). lazyarr's fused draws (lazyarr/_random_fused.py) use it as
 *
 *     bits(counter, key, stream) = w0 | w1 << 32,
 *     (w0, w1, w2, w3) = philox4x32_10(ctr = (counter, stream) as four 32-bit words, low first,
 *                                      key = key as two 32-bit words, low first)
 *
 * The CUDA kernels compute the same function (lazyarr/backends/cuda/helpers.py, H_philox). */
#ifndef LAZYARR_PHILOX_H
#define LAZYARR_PHILOX_H
#include <stdint.h>

#define LZ_PHILOX_M0 0xD2511F53u
#define LZ_PHILOX_M1 0xCD9E8D57u
#define LZ_PHILOX_W0 0x9E3779B9u
#define LZ_PHILOX_W1 0xBB67AE85u

static inline void lz_philox4x32_10(uint32_t c[4], uint32_t k0, uint32_t k1) {
    for (int r = 0; r < 10; r++) {
        if (r) { k0 += LZ_PHILOX_W0; k1 += LZ_PHILOX_W1; }
        uint64_t p0 = (uint64_t)LZ_PHILOX_M0 * c[0];
        uint64_t p1 = (uint64_t)LZ_PHILOX_M1 * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
        c[0] = n0; c[1] = (uint32_t)p1; c[2] = n2; c[3] = (uint32_t)p0;
    }
}

static inline uint64_t lz_philox_bits(uint64_t counter, uint64_t key, uint64_t stream) {
    uint32_t c[4] = {(uint32_t)counter, (uint32_t)(counter >> 32),
                     (uint32_t)stream, (uint32_t)(stream >> 32)};
    lz_philox4x32_10(c, (uint32_t)key, (uint32_t)(key >> 32));
    return (uint64_t)c[0] | ((uint64_t)c[1] << 32);
}
#endif
