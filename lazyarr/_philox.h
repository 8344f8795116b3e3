/* Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3",
 * SC'11; the Random123 reference): a counter-based generator, so draw i of a stream is a pure
 * function of (i, stream, key). lazyarr's fused draws (lazyarr/_random_fused.py) use it as
 *
 *     bits(counter, key, stream) = w[2h] | w[2h + 1] << 32,  h = counter & 1,
 *     w = philox4x32_10(ctr = (counter >> 1, stream) as four 32-bit words, low first,
 *                       key = key as two 32-bit words, low first)
 *
 * so counters 2j and 2j + 1 are the two halves of one block (no word of a block is wasted on
 * a draw read in order). The CUDA kernels compute the same function
 * (lazyarr/backends/cuda/helpers.py, H_philox). */
#ifndef LAZYARR_PHILOX_H
#define LAZYARR_PHILOX_H
#include <stdint.h>

#define LZ_PHILOX_M0 0xD2511F53ull
#define LZ_PHILOX_M1 0xCD9E8D57ull
#define LZ_PHILOX_W0 0x9E3779B9ull
#define LZ_PHILOX_W1 0xBB67AE85ull

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
    uint64_t block = counter >> 1;
    uint32_t c[4] = {(uint32_t)block, (uint32_t)(block >> 32),
                     (uint32_t)stream, (uint32_t)(stream >> 32)};
    lz_philox4x32_10(c, (uint32_t)key, (uint32_t)(key >> 32));
    return (counter & 1) ? (uint64_t)c[2] | ((uint64_t)c[3] << 32)
                         : (uint64_t)c[0] | ((uint64_t)c[1] << 32);
}

/* Uniform numbers in [0, 1) from 64 random bits, as NumPy turns them into floats: the top 53
 * (float64) or 24 (float32) bits times 2**-53 / 2**-24 (exact: the integers fit the mantissa;
 * converted as signed integers, which every SIMD unit has). */
static inline double lz_unit_f64(uint64_t b) { return (double)(int64_t)(b >> 11) * 0x1p-53; }
static inline float lz_unit_f32(uint64_t b) { return (float)(int32_t)(b >> 40) * 0x1p-24f; }
static inline uint64_t lz_unit_u64(uint64_t b) { return b; }

/* The numbers for the counters first, first + 1, ..., first + 2n - 1 (first even): n blocks,
 * both halves of each, with one key and stream: the fused kernels' common case (a draw read
 * in order). Every word in a 64-bit lane (high half zero): the 32x32->64 products are
 * vpmuludq on the lanes as they are, nothing is packed or unpacked between rounds, and the
 * compiler vectorizes the blocks (a clone per instruction set, picked at load time; x86-64-v4:
 * AVX-512 with DQ, which converts 64-bit integers to doubles). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define LZ_PHILOX_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define LZ_PHILOX_CLONES
#endif
#define LZ_PHILOX_PAIRS(NAME, T, CONVERT)                                                      \
LZ_PHILOX_CLONES                                                                               \
static void NAME(uint64_t first, uint64_t key, uint64_t stream, T *out, long n) {              \
    const uint64_t m = 0xFFFFFFFFu, s0 = stream & m, s1 = stream >> 32;                        \
    const uint64_t b0 = first >> 1;                                                            \
    for (long j = 0; j < n; j++) {                                                             \
        uint64_t block = b0 + (uint64_t)j;                                                     \
        uint64_t c0 = block & m, c1 = block >> 32, c2 = s0, c3 = s1;                           \
        uint64_t k0 = key & m, k1 = key >> 32;                                                 \
        _Pragma("GCC unroll 10")                                                               \
        for (int r = 0; r < 10; r++) {                                                         \
            uint64_t p0 = LZ_PHILOX_M0 * c0;                                                   \
            uint64_t p1 = LZ_PHILOX_M1 * c2;                                                   \
            uint64_t n0 = (p1 >> 32) ^ c1 ^ k0;                                                \
            uint64_t n2 = (p0 >> 32) ^ c3 ^ k1;                                                \
            c0 = n0; c1 = p1 & m; c2 = n2; c3 = p0 & m;                                        \
            k0 = (k0 + LZ_PHILOX_W0) & m; k1 = (k1 + LZ_PHILOX_W1) & m;                        \
        }                                                                                      \
        out[2 * j] = CONVERT(c0 | (c1 << 32));                                                 \
        out[2 * j + 1] = CONVERT(c2 | (c3 << 32));                                             \
    }                                                                                          \
}
LZ_PHILOX_PAIRS(lz_philox_pairs, uint64_t, lz_unit_u64)
LZ_PHILOX_PAIRS(lz_philox_pairs_f64, double, lz_unit_f64)
LZ_PHILOX_PAIRS(lz_philox_pairs_f32, float, lz_unit_f32)
#endif
