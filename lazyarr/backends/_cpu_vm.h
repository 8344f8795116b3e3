/*
 * The block virtual machine of lazyarr's fused CPU backend (included by _cpu_vm.pyx).
 *
 * A program is a list of VM instructions over *values* (one per program instruction).
 * It runs over the iteration space block by block (<= B elements); every value of a
 * block lives in a small per-thread register (L1/L2 resident), inputs are read in
 * place where their layout allows it (one stride over the block) or gathered.
 * Elementwise instructions call NumPy's own strided inner loops (fetched once per
 * program through ufunc._get_strided_loop), so results are bit-identical to NumPy.
 * Casts and `where` are plain C loops here; reductions are fused into the same pass.
 *
 * Iteration space: (outer O, inner I); a block is a run of the inner index for one
 * outer index. Modes:
 *   MODE_EW     elementwise root: O = () and I = all dims, or O = all dims but the last
 *               (rows that the inputs cannot read as one run), the root writes the
 *               output; with a write-back target, items are chunks of rows written
 *               into it (lz_do_chunk).
 *   MODE_RED_A  reduction, slot-major: O = kept dims (output slot = o), I = reduced
 *               dims; each block is reduced to a partial, partials combined per slot
 *               in a fixed (pairwise) order.
 *   MODE_RED_B  reduction, reduce-major: O = reduced dims, I = kept dims (slot = i);
 *               blocks accumulate elementwise into per-slot accumulators.
 *   MODE_RED_ROWS  reduction over rows much shorter than a block: O = (), I = kept dims
 *               then reduced dims; a block holds whole rows, each reduced to its slot
 *               (lz_do_rows).
 * Work is split into items that never share an output slot, and every item's
 * arithmetic is independent of the thread running it: any thread count gives the
 * same bits.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <fenv.h>
#include <time.h>
#include "numpy/halffloat.h"
#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

/* ---------------------------------------------------------------- the enums Python uses
 * Each enum the Python side needs is ONE X-macro table (numexpr's opcodes.hpp is the model):
 * X(C name, name Python uses). The table makes the C enum and a {name, value} list that
 * _cpu_vm.pyx exports as a dict, so cpu_fused.py reads the numbers from here and never
 * restates them. */
typedef struct { const char *name; int value; } lz_enum_entry;
#define LZ_ENUM_VALUE(CODE, NAME) CODE,
#define LZ_ENUM_ENTRY(CODE, NAME) {NAME, CODE},
#define LZ_DEF_ENUM(TABLE, LIST) enum { LIST(LZ_ENUM_VALUE) };                               \
    static const lz_enum_entry TABLE[] = {LIST(LZ_ENUM_ENTRY) {NULL, 0}};

/* dtype type codes, named by NumPy's dtype name. The order is lazyarr._dtypes.SUPPORTED_DTYPES
 * (cpu_fused checks it at import); the cast tables below list their rows in this order. */
#define LZ_DTYPES(X)                                                                         \
    X(LZ_B, "bool") X(LZ_I8, "int8") X(LZ_I16, "int16") X(LZ_I32, "int32")                   \
    X(LZ_I64, "int64") X(LZ_U8, "uint8") X(LZ_U16, "uint16") X(LZ_U32, "uint32")             \
    X(LZ_U64, "uint64") X(LZ_F16, "float16") X(LZ_F32, "float32")                            \
    X(LZ_F64, "float64") X(LZ_C64, "complex64") X(LZ_C128, "complex128")
LZ_DEF_ENUM(lz_dtype_codes, LZ_DTYPES)
enum { LZ_NTYPES = sizeof(lz_dtype_codes) / sizeof(lz_dtype_codes[0]) - 1 };

/* execution modes of a call (see the top of this file) */
#define LZ_MODES(X) X(MODE_EW, "elementwise") X(MODE_RED_A, "slot_major")                    \
    X(MODE_RED_B, "reduce_major") X(MODE_RED_ROWS, "row_blocks")
LZ_DEF_ENUM(lz_modes, LZ_MODES)

/* reduction kinds of the sink (RK_NONE: an elementwise root), named by the reduction op
 * that is computed (mean is a sum and std a var, finished in Python) */
#define LZ_RED_KINDS(X) X(RK_NONE, "none") X(RK_SUM, "sum") X(RK_PROD, "prod")               \
    X(RK_MIN, "min") X(RK_MAX, "max") X(RK_ANY, "any") X(RK_ALL, "all")                      \
    X(RK_ARGMIN, "argmin") X(RK_ARGMAX, "argmax") X(RK_VAR, "var")
LZ_DEF_ENUM(lz_red_kinds, LZ_RED_KINDS)

/* the value type a reduction kernel reads, named by its (canonical) dtype */
#define LZ_RED_TYPES(X) X(RT_F32, "float32") X(RT_F64, "float64")                            \
    X(RT_I64, "int64") X(RT_U64, "uint64") X(RT_U8, "bool") X(RT_C64, "complex64")          \
    X(RT_C128, "complex128")
LZ_DEF_ENUM(lz_red_types, LZ_RED_TYPES)

/* the elementwise op a reduction may fold in (sum(abs(x)), max(abs(x)), sum(x*x)): exact
 * as NumPy's abs/square loops (abs is exact; a product is rounded once in T) */
#define LZ_FOLDS(X) X(PRE_NONE, "none") X(PRE_ABS, "abs") X(PRE_SQUARE, "square")
LZ_DEF_ENUM(lz_folds, LZ_FOLDS)

/* complex64 / complex128 elements: NumPy's layout (real part first) */
typedef struct { npy_float re, im; } lz_c64;
typedef struct { npy_double re, im; } lz_c128;

typedef void (*lz_cast_t)(const char *s, npy_intp ss, char *d, npy_intp n);
typedef int (*lz_loop_t)(void *ctx, char *const *data, const npy_intp *dims, const npy_intp *strides,
                         void *aux);

/* the layout of NumPy's "numpy_1.24_ufunc_call_info" capsule (ufunc._get_strided_loop) */
typedef struct {
    void *strided_loop;
    void *context;
    void *auxdata;
    npy_bool requires_pyapi;
    npy_bool no_floatingpoint_errors;
} lz_call_info;

/* ---------------------------------------------------------------- casts (as ndarray.astype) */
#define LZ_TO_HALF(x) _Generic((x), double: npy_double_to_half((double)(x)), \
                                    default: npy_float_to_half((float)(x)))
#define LD_N(v) (v)
#define LD_H(v) npy_half_to_float(v)
#define ST_N(T, x) ((T)(x))
#define ST_B(T, x) ((T)((x) != 0))
#define ST_H(T, x) LZ_TO_HALF(x)

/* AVX-512 (x86-64-v4), AVX2 and baseline versions of the hot loops, picked at load time
 * (the same bits: -ffp-contract=off, and no reassociation, so a wider vector changes only
 * how many lanes run at once; v4 added 2026-12-05: sum(abs(x)) of 2^24 float32 1.9-2.3 ->
 * 1.2 ms on an AVX-512 EPYC, docs/notes/cpu.rst "AVX-512 clones") */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    defined(__GLIBC__)   /* target_clones needs ifunc (glibc) */
#define LZ_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
/* the casts: no AVX-512 clone. A float out of an unsigned type's range converts differently
 * there (vcvttps2udq saturates: complex64(-5) -> uint32 4294967295, where NumPy's and the
 * AVX2 code wrap to 4294967291: tests/test_cpu_fused.py test_astype_bit_identical) */
#define LZ_CAST_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LZ_CLONES
#define LZ_CAST_CLONES
#endif

#define LZ_DEF_CAST(NAME, ST, DT, LD, STO)                                                   \
    LZ_CAST_CLONES static void NAME(const char *s, npy_intp ss, char *d, npy_intp n) {       \
        DT *o = (DT *)d;                                                                     \
        if (ss == (npy_intp)sizeof(ST)) {                                                    \
            const ST *a = (const ST *)s;                                                     \
            for (npy_intp i = 0; i < n; i++) o[i] = STO(DT, LD(a[i]));                       \
        } else {                                                                             \
            for (npy_intp i = 0; i < n; i++) o[i] = STO(DT, LD(*(const ST *)(s + i * ss)));  \
        }                                                                                    \
    }

/* source types: (suffix, C type, loader). A complex source gives its real part (as
 * ndarray.astype; lazyarr warns at the line, as NumPy does), or "nonzero" for bool. */
#define LD_CRE(v) ((v).re)
#define LD_CNZ(v) ((v).re != 0 || (v).im != 0)
#define LZ_SRC(X, DS, DT, STO, LDC)                                                          \
    X(b_##DS, npy_bool, DT, LD_N, STO) X(i8_##DS, npy_int8, DT, LD_N, STO)                   \
    X(i16_##DS, npy_int16, DT, LD_N, STO) X(i32_##DS, npy_int32, DT, LD_N, STO)              \
    X(i64_##DS, npy_int64, DT, LD_N, STO) X(u8_##DS, npy_uint8, DT, LD_N, STO)               \
    X(u16_##DS, npy_uint16, DT, LD_N, STO) X(u32_##DS, npy_uint32, DT, LD_N, STO)            \
    X(u64_##DS, npy_uint64, DT, LD_N, STO) X(f16_##DS, npy_half, DT, LD_H, STO)              \
    X(f32_##DS, npy_float, DT, LD_N, STO) X(f64_##DS, npy_double, DT, LD_N, STO)             \
    X(c64_##DS, lz_c64, DT, LDC, STO) X(c128_##DS, lz_c128, DT, LDC, STO)
#define LZ_CAST_X(SUF, ST, DT, LD, STO) LZ_DEF_CAST(lz_cast_##SUF, ST, DT, LD, STO)
LZ_SRC(LZ_CAST_X, b, npy_bool, ST_B, LD_CNZ)
LZ_SRC(LZ_CAST_X, i8, npy_int8, ST_N, LD_CRE)
LZ_SRC(LZ_CAST_X, i16, npy_int16, ST_N, LD_CRE)
LZ_SRC(LZ_CAST_X, i32, npy_int32, ST_N, LD_CRE)
LZ_SRC(LZ_CAST_X, i64, npy_int64, ST_N, LD_CRE)
LZ_SRC(LZ_CAST_X, u8, npy_uint8, ST_N, LD_CRE)
LZ_SRC(LZ_CAST_X, u16, npy_uint16, ST_N, LD_CRE)
LZ_SRC(LZ_CAST_X, u32, npy_uint32, ST_N, LD_CRE)
LZ_SRC(LZ_CAST_X, u64, npy_uint64, ST_N, LD_CRE)
LZ_SRC(LZ_CAST_X, f16, npy_half, ST_H, LD_CRE)
LZ_SRC(LZ_CAST_X, f32, npy_float, ST_N, LD_CRE)
LZ_SRC(LZ_CAST_X, f64, npy_double, ST_N, LD_CRE)

/* to complex: a real source is (x, 0); a complex one converts part by part */
#define LZ_DEF_TO_C(NAME, ST, CT, FT, LD)                                                    \
    static void NAME(const char *s, npy_intp ss, char *d, npy_intp n) {                      \
        CT *o = (CT *)d;                                                                     \
        for (npy_intp i = 0; i < n; i++) {                                                   \
            o[i].re = (FT)LD(*(const ST *)(s + i * ss));                                     \
            o[i].im = 0;                                                                     \
        }                                                                                    \
    }
#define LZ_DEF_C_TO_C(NAME, ST, CT, FT)                                                      \
    static void NAME(const char *s, npy_intp ss, char *d, npy_intp n) {                      \
        CT *o = (CT *)d;                                                                     \
        for (npy_intp i = 0; i < n; i++) {                                                   \
            const ST *a = (const ST *)(s + i * ss);                                          \
            o[i].re = (FT)a->re;                                                             \
            o[i].im = (FT)a->im;                                                             \
        }                                                                                    \
    }
#define LZ_TO_C(DS, CT, FT)                                                                  \
    LZ_DEF_TO_C(lz_cast_b_##DS, npy_bool, CT, FT, LD_N)                                      \
    LZ_DEF_TO_C(lz_cast_i8_##DS, npy_int8, CT, FT, LD_N)                                     \
    LZ_DEF_TO_C(lz_cast_i16_##DS, npy_int16, CT, FT, LD_N)                                   \
    LZ_DEF_TO_C(lz_cast_i32_##DS, npy_int32, CT, FT, LD_N)                                   \
    LZ_DEF_TO_C(lz_cast_i64_##DS, npy_int64, CT, FT, LD_N)                                   \
    LZ_DEF_TO_C(lz_cast_u8_##DS, npy_uint8, CT, FT, LD_N)                                    \
    LZ_DEF_TO_C(lz_cast_u16_##DS, npy_uint16, CT, FT, LD_N)                                  \
    LZ_DEF_TO_C(lz_cast_u32_##DS, npy_uint32, CT, FT, LD_N)                                  \
    LZ_DEF_TO_C(lz_cast_u64_##DS, npy_uint64, CT, FT, LD_N)                                  \
    LZ_DEF_TO_C(lz_cast_f16_##DS, npy_half, CT, FT, LD_H)                                    \
    LZ_DEF_TO_C(lz_cast_f32_##DS, npy_float, CT, FT, LD_N)                                   \
    LZ_DEF_TO_C(lz_cast_f64_##DS, npy_double, CT, FT, LD_N)                                  \
    LZ_DEF_C_TO_C(lz_cast_c64_##DS, lz_c64, CT, FT)                                          \
    LZ_DEF_C_TO_C(lz_cast_c128_##DS, lz_c128, CT, FT)
LZ_TO_C(c64, lz_c64, npy_float)
LZ_TO_C(c128, lz_c128, npy_double)

#define LZ_ROW(DS) {lz_cast_b_##DS, lz_cast_i8_##DS, lz_cast_i16_##DS, lz_cast_i32_##DS,          \
    lz_cast_i64_##DS, lz_cast_u8_##DS, lz_cast_u16_##DS, lz_cast_u32_##DS, lz_cast_u64_##DS,       \
    lz_cast_f16_##DS, lz_cast_f32_##DS, lz_cast_f64_##DS, lz_cast_c64_##DS, lz_cast_c128_##DS}
/* lz_casts[dst][src], rows and columns in LZ_DTYPES order. (The C preprocessor cannot expand
 * LZ_DTYPES inside itself, so the rows are spelled out; lz_casts_complete checks them.) */
static const lz_cast_t lz_casts[LZ_NTYPES][LZ_NTYPES] = {
    LZ_ROW(b), LZ_ROW(i8), LZ_ROW(i16), LZ_ROW(i32), LZ_ROW(i64), LZ_ROW(u8), LZ_ROW(u16),
    LZ_ROW(u32), LZ_ROW(u64), LZ_ROW(f16), LZ_ROW(f32), LZ_ROW(f64), LZ_ROW(c64), LZ_ROW(c128)};

/* 1 if every (dst, src) pair has a cast: a dtype added to LZ_DTYPES without its row is 0 */
static int lz_casts_complete(void) {
    for (int d = 0; d < LZ_NTYPES; d++)
        for (int s = 0; s < LZ_NTYPES; s++)
            if (!lz_casts[d][s]) return 0;
    return 1;
}

/* the imaginary part of a complex value (its real part is the cast to the real type) */
#define LZ_DEF_IMAG(NAME, ST, FT)                                                            \
    static void NAME(const char *s, npy_intp ss, char *d, npy_intp n) {                      \
        FT *o = (FT *)d;                                                                     \
        for (npy_intp i = 0; i < n; i++) o[i] = ((const ST *)(s + i * ss))->im;              \
    }
LZ_DEF_IMAG(lz_imag_c64, lz_c64, npy_float)
LZ_DEF_IMAG(lz_imag_c128, lz_c128, npy_double)
static lz_cast_t lz_get_imag(int src) { return src == LZ_C64 ? lz_imag_c64 : lz_imag_c128; }

static lz_cast_t lz_get_cast(int dst, int src) { return lz_casts[dst][src]; }

/* lazyarr's own sqrt loop (an instruction of kind "sqrt", the casts' signature: a strided
 * source, a contiguous destination). NumPy 2.4 compiles its float sqrt loops for its
 * baseline only (SSE: 4 float32 lanes); this one has an AVX2 clone, twice as fast
 * (docs/notes/cpu.rst, "Own sqrt loop"). IEEE 754 rounds sqrt exactly, and both are the
 * same sqrtps/sqrtpd instruction, so the bits are NumPy's, NaNs and flags included
 * (-fno-math-errno lets sqrtf/sqrt compile to that instruction). */
#define LZ_DEF_SQRT(NAME, T, F)                                                              \
    LZ_CLONES static void NAME(const char *s, npy_intp ss, char *d, npy_intp n) {            \
        T *o = (T *)d;                                                                       \
        if (ss == (npy_intp)sizeof(T))                                                       \
            for (npy_intp i = 0; i < n; i++) o[i] = F(((const T *)s)[i]);                    \
        else                                                                                 \
            for (npy_intp i = 0; i < n; i++) o[i] = F(*(const T *)(s + i * ss));             \
    }
LZ_DEF_SQRT(lz_sqrt_f32, npy_float, sqrtf)
LZ_DEF_SQRT(lz_sqrt_f64, npy_double, sqrt)
static lz_cast_t lz_get_sqrt(int type) {
    return type == LZ_F32 ? lz_sqrt_f32 : type == LZ_F64 ? lz_sqrt_f64 : NULL;
}
/* sqrt(abs(x)) in one pass (an instruction of kind "sqrt_abs", cpu_fused._sqrt_of_abs):
 * NumPy's absolute clears the sign bit and raises nothing, NaNs included, as fabs does, so
 * the bits and the flags are those of NumPy's two loops. The sqrt loop above, of these: */
static inline npy_float lz_sqrtf_of_abs(npy_float v) { return sqrtf(fabsf(v)); }
static inline npy_double lz_sqrt_of_abs(npy_double v) { return sqrt(fabs(v)); }
LZ_DEF_SQRT(lz_sqrt_abs_f32, npy_float, lz_sqrtf_of_abs)
LZ_DEF_SQRT(lz_sqrt_abs_f64, npy_double, lz_sqrt_of_abs)
static lz_cast_t lz_get_sqrt_abs(int type) {
    return type == LZ_F32 ? lz_sqrt_abs_f32 : type == LZ_F64 ? lz_sqrt_abs_f64 : NULL;
}

/* ---------------------------------------------------------------- where, copies */
#define LZ_WHERE(T)                                                                          \
    for (npy_intp i = 0; i < n; i++)                                                         \
        ((T *)o)[i] = c[i * cs] ? *(const T *)(a + i * as) : *(const T *)(b + i * bs);

static void lz_where(const char *c, npy_intp cs, const char *a, npy_intp as, const char *b,
                     npy_intp bs, char *o, npy_intp isz, npy_intp n) {
    switch (isz) {
    case 1: LZ_WHERE(npy_uint8) break;
    case 2: LZ_WHERE(npy_uint16) break;
    case 4: LZ_WHERE(npy_uint32) break;
    case 8: LZ_WHERE(npy_uint64) break;
    default: LZ_WHERE(lz_c128) break;
    }
}

#define LZ_COPY(T)                                                                           \
    if (ss == (npy_intp)sizeof(T) && ds == (npy_intp)sizeof(T)) memcpy(d, s, n * sizeof(T)); \
    else for (npy_intp i = 0; i < n; i++) *(T *)(d + i * ds) = *(const T *)(s + i * ss);

/* n elements of isz bytes from s (in steps of ss bytes) to d (in steps of ds bytes) */
static void lz_copy_strided(char *d, npy_intp ds, const char *s, npy_intp ss, npy_intp n,
                            npy_intp isz) {
    switch (isz) {
    case 1: LZ_COPY(npy_uint8) break;
    case 2: LZ_COPY(npy_uint16) break;
    case 4: LZ_COPY(npy_uint32) break;
    case 8: LZ_COPY(npy_uint64) break;
    default: LZ_COPY(lz_c128) break;
    }
}

static void lz_copy(char *d, const char *s, npy_intp ss, npy_intp n, npy_intp isz) {
    lz_copy_strided(d, isz, s, ss, n, isz);
}

/* n counters of a fused random draw, from "address" p in steps of s (lazyarr/_counters.py:
 * the input has no memory; its base and byte strides are those of a uint64 array at address
 * 8 * offset, so each element's "address", divided by 8, is its counter). */
static inline void lz_count_run(npy_uint64 *d, npy_intp p, npy_intp s, npy_intp n) {
    for (npy_intp t = 0; t < n; t++) d[t] = (npy_uint64)((p + t * s) / 8);
}

/* Elements [start, start+n) (C order over `shape`) of a strided nd view, and n contiguous
 * elements at c: copied from the view into c (lz_gather), or from c into the view
 * (lz_scatter). With isz 0 (a gather only) the view is a random draw's counters (an input of
 * itemsize 0 in lz_prog.input_isz): c gets each element's counter (lz_count_run). */
static void lz_walk(char *c, char *base, npy_intp isz, int nd, const npy_intp *shape,
                    const npy_intp *str, npy_intp start, npy_intp n, int into_view) {
    npy_intp idx[NPY_MAXDIMS];
    npy_intp rem = start, off = 0;    /* (a byte offset: the counters' base is no pointer) */
    for (int k = nd - 1; k >= 0; k--) {
        idx[k] = rem % shape[k];
        rem /= shape[k];
        off += idx[k] * str[k];
    }
    const int last = nd - 1;
    while (n > 0) {
        npy_intp run = shape[last] - idx[last];
        if (run > n) run = n;
        if (into_view) {
            lz_copy_strided(base + off, str[last], c, isz, run, isz);
            c += run * isz;
        } else if (isz) {
            lz_copy(c, base + off, str[last], run, isz);
            c += run * isz;
        } else {
            lz_count_run((npy_uint64 *)c, (npy_intp)base + off, str[last], run);
            c += run * (npy_intp)sizeof(npy_uint64);
        }
        n -= run;
        idx[last] += run;
        off += run * str[last];
        int k = last;
        while (k > 0 && idx[k] == shape[k]) {
            off -= shape[k] * str[k];
            idx[k] = 0;
            k--;
            idx[k]++;
            off += str[k];
        }
    }
}

static void lz_gather(char *d, const char *base, npy_intp isz, int nd, const npy_intp *shape,
                      const npy_intp *str, npy_intp start, npy_intp n) {
    lz_walk(d, (char *)base, isz, nd, shape, str, start, n, 0);
}

static void lz_scatter(char *base, const char *s, npy_intp isz, int nd, const npy_intp *shape,
                       const npy_intp *str, npy_intp start, npy_intp n) {
    lz_walk((char *)s, base, isz, nd, shape, str, start, n, 1);
}

/* ---------------------------------------------------------------- the program */
/* VM instruction kinds (internal: _cpu_vm.pyx maps its spec kinds to these);
 * MODE_*, RK_*, RT_*, PRE_*: the tables at the top of this file */
enum { VK_UFUNC = 0, VK_CAST, VK_WHERE, VK_CABS_CMP };

typedef struct {
    int kind, nin;
    int in[3];
    int out;          /* value index written */
    int reg;          /* register, or -1: the output array */
    npy_intp osize;   /* itemsize of the result */
    lz_loop_t loop;   /* VK_UFUNC */
    void *ctx, *aux;
    lz_cast_t cast;   /* VK_CAST */
    /* VK_UFUNC of a two-output loop (frexp, modf): the output this instruction keeps (0 or
     * 1; -1: a one-output loop); the other goes to register spare_reg (elements of
     * spare_size bytes), which nothing reads */
    int which, spare_reg;
    npy_intp spare_size;
    /* VK_UFUNC: NumPy's loop clears the floating-point status when it ends (min/max,
     * comparisons, abs, negative, isnan...: npy_clear_floatstatus_barrier), so a flag raised
     * by an earlier instruction of the block would be lost: lz_run_instrs tests before it */
    int clears_fpe;
    /* VK_CABS_CMP: ``less`` (0), ``less_equal`` (1), ``greater`` (2), ``greater_equal`` (3) of
     * ``absolute`` of a complex128 operand against a float64 one (lz_cabs_cmp); ``loop``:
     * NumPy's absolute loop complex128 -> float64 */
    int cmp;
} lz_instr;

/* Whether NumPy's strided loop ``loop`` clears the floating-point status: FE_INVALID raised,
 * the loop run over n elements of its operands (``data``, ``strides``: inputs then outputs,
 * values that raise nothing: ones), the flag tested after. The status is left clear. */
static inline int lz_loop_clears_fpe(lz_loop_t loop, void *ctx, void *aux, char *const *data,
                                     const npy_intp *strides, npy_intp n) {
    feclearexcept(FE_ALL_EXCEPT);
    feraiseexcept(FE_INVALID);
    int rc = loop(ctx, data, &n, strides, aux);
    int cleared = !fetestexcept(FE_INVALID);
    feclearexcept(FE_ALL_EXCEPT);
    return rc < 0 ? -1 : cleared;
}

/* A compiled loop of a run of instructions (backends/cpu_loops.py): one pass over the block
 * computing the run's last value from its operands, its intermediates in registers, where the
 * instructions make one pass each. args[k]/strides[k] (bytes): the operands, then the result;
 * n elements. Only the run's last value is read after it (cpu_loops.plan checks). */
typedef void (*lz_loop_fn)(char **args, const npy_intp *strides, npy_intp n);
#define LZ_LOOP_MAX_IN 32
#define LZ_MAX_RUNS 8
/* an operand stride (bytes) from which a block runs the instructions, not the loop */
#define LZ_LOOP_SPARSE_STRIDE 64
typedef struct {
    lz_loop_fn fn;          /* NULL until published (set once, release; read with acquire) */
    int first, end;         /* the run: instr[first..end) */
    int nin;
    int in[LZ_LOOP_MAX_IN]; /* its operands' values, and their itemsizes */
    npy_intp isz[LZ_LOOP_MAX_IN];
} lz_loop_run;

typedef struct {
    int ninstr;
    lz_instr *instr;
    /* the runs of instructions that compiled loops may take, in order (cpu_loops.py) */
    int nruns;
    lz_loop_run runs[LZ_MAX_RUNS];
    int ninputs, nscalars, nvals, nregs;
    int *input_val;     /* input position -> value index */
    npy_intp *input_isz;
    int *scalar_val;    /* scalar position -> value index */
    int result_val;     /* the value the sink consumes (elementwise root / reduction operand) */
    int red_kind, red_type;
    int red_pre;        /* elementwise op folded into the reduction kernel: 0, PRE_ABS, PRE_SQUARE */
    npy_intp B;         /* block length */
    npy_intp esz;       /* the largest itemsize of a value: 8, or 16 with a complex128 value */
    int prefetch;       /* prefetch each input's next block while computing (lz_exec_block) */
} lz_prog;

/* bytes of one scalar operand's slot in lz_run.scalars (the largest dtype: complex128) */
#define LZ_SCALAR_BYTES 16

/* bytes of one block register (or gather buffer) */
#define LZ_RB(P) ((P)->B * (P)->esz + 64)
/* MODE_RED_B float sums: rows accumulated per pass over the partials (lz_accsum8) */
#define LZ_ACC_ROWS 8

/* A stencil's field (cpu_stencil.py): one subexpression of a family of views of one buffer
 * (``sqrt(u)`` read as ``u[1:-1, 1:-1]``, ``u[:-2, 1:-1]``, ...), computed once per element
 * of the 2-d space's rows into a per-thread ring of rows and read from there at each view's
 * shift, instead of once per view. Its program F has one input, the base (the family's
 * lowest-addressed view) read at the element; its root is the field's value, written into
 * the ring. The main program reads each shifted value as an input (top_input) that the VM
 * points into the ring, block by block (lz_fields_prepare). */
#define LZ_FIELD_TOPS 16
typedef struct lz_run lz_run;
typedef struct {
    const lz_prog *F;
    lz_run *Rf;                   /* F's run: its scalar operands and floating-point flags */
    char *base;                   /* the base's first element */
    npy_intp s0, s1;              /* its byte strides over the space's rows and columns */
    npy_intp osize;               /* the field value's itemsize */
    int ntops;
    int top_input[LZ_FIELD_TOPS]; /* the main program's input that reads the field at ... */
    int di[LZ_FIELD_TOPS], dj[LZ_FIELD_TOPS];   /* ... this shift from the base (di >= 0) */
    int di0, di1, dj0, dj1;       /* the shifts' span */
} lz_field;

struct lz_run {
    int mode, nO, nI;
    npy_intp Oshape[NPY_MAXDIMS], Ishape[NPY_MAXDIMS];
    npy_intp Osz, Isz;
    char **base;        /* per input */
    npy_intp *Ostr;     /* [ninputs * nO] */
    npy_intp *Istr;     /* [ninputs * nI] */
    npy_intp *dstride;  /* per input: the one stride over the inner index, or LZ_GATHER */
    char *scalars;      /* LZ_SCALAR_BYTES per scalar */
    char *out;          /* MODE_EW output (C order, but see out_ostride) */
    /* MODE_EW into ``out``: the bytes from one outer index's outputs to the next's, where
     * ``out`` is a view whose inner dims are C-contiguous but whose rows are not adjacent
     * (``p[1:-1, 1:-1] = ...``: written in place of a stage and a scatter); 0: C order */
    npy_intp out_ostride;
    npy_intp nb;        /* MODE_RED_A: blocks per slot; MODE_RED_B: slots per item */
    /* MODE_RED_A: 0 (a slot's blocks are B elements each over its whole inner index), or the
     * length of the runs that its blocks end with (ceil(cut / B) blocks per run): a block then
     * stays inside one run of the last inner dim, where a view is read in place instead of
     * gathered (cpu_fused._block_cut) */
    npy_intp cut;
    npy_intp nchunk, chunk_rows;  /* MODE_RED_B: the reduce rows in fixed chunks, one partial each */
    /* MODE_RED_ROWS: nrows slots of row_len elements each, consecutive in the (all inner)
     * iteration order; a work item runs rows_per_item rows (lz_do_rows) */
    npy_intp nrows, row_len, rows_per_item;
    /* reduction partials (A: nslots*nb) and results (nslots) */
    double *pd, *pm2;
    npy_int64 *pi, *pidx;
    npy_uint64 *pu;
    double *rd, *rm2;
    npy_int64 *ri, *ridx;
    npy_uint64 *ru;
    int error;
    int check_signals;          /* the caller may run Python signal handlers (main thread) */
    /* floating-point exceptions raised, NumPy's NPY_FPE_* bits: [j] by instruction j, [ninstr]
     * by the reduction's own arithmetic (NULL: not recorded). See lz_fpe_take. */
    unsigned char *fpe;
    int out_read;       /* MODE_EW into ``out`` (set only then): an input may read its memory */
    /* MODE_EW with a write-back target (wb != NULL; see lz_do_chunk): the root's values go
     * into the strided view wb of the iteration shape, a chunk of wb_chunk rows of dim 0 per
     * work item, through each thread's stage; the first wb_back and last wb_fwd rows of a
     * chunk wait in wb_side ((wb_back + wb_fwd) rows per chunk) until every chunk is done */
    char *wb;
    int wb_nd;
    npy_intp wb_shape[NPY_MAXDIMS], wb_str[NPY_MAXDIMS];
    npy_intp wb_rows, wb_rowsize, wb_chunk, wb_back, wb_fwd;
    char *wb_side;
    /* MODE_EW on one thread, not NULL (a pipelined run, cpu_fused._run_pipelined): after each
     * work item, [0] = how many elements of the output (C order) are written, stored with
     * release order; the whole count only at the very end, once the run's floating-point
     * flags are noted too. The run stops after the item in which [1] becomes nonzero (the
     * reader gave up: what is written is then not the whole value) */
    npy_int64 *progress;
    /* the stencil fields (lz_field; nfields 0: none) of a 2-d space of rows x cols, whose
     * blocks each lie in one row (MODE_EW by rows, or MODE_RED_A cut at the rows) */
    int nfields;
    lz_field *fields;
    npy_intp rows, cols;
    /* MODE_EW into a C-ordered ``out``, not NULL: a masked update (lz_exec_masked), one bool
     * per element of the space in C order; only the True lanes are computed and written */
    const npy_bool *mask;
};

/* progress[0] of a pipelined run, read with acquire order (what it counts is written) */
static inline npy_int64 lz_progress(npy_int64 *progress) {
    return __atomic_load_n(progress, __ATOMIC_ACQUIRE);
}

/* ---------------------------------------------------------------- floating-point status
 * NumPy reports the floating-point exceptions each ufunc call raised, as np.errstate says
 * (a RuntimeWarning by default). The VM calls NumPy's loops inside a block loop, so it tests
 * the status after each instruction of each block and ORs what it finds into R->fpe;
 * cpu_fused then reports it as NumPy would. fetestexcept reads the SSE and the x87 status
 * (NumPy's SIMD loops raise some flags through feraiseexcept, which uses the x87 unit): a few
 * cycles; the costly feclearexcept runs only when a flag is up. */
#define LZ_FPE_DIVIDE 1         /* NPY_FPE_DIVIDEBYZERO */
#define LZ_FPE_OVERFLOW 2
#define LZ_FPE_UNDERFLOW 4
#define LZ_FPE_INVALID 8
static inline unsigned lz_fpe_take(void) {
    int f = fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID);
    if (!f) return 0;
    feclearexcept(FE_ALL_EXCEPT);
    return ((f & FE_DIVBYZERO) ? LZ_FPE_DIVIDE : 0) | ((f & FE_OVERFLOW) ? LZ_FPE_OVERFLOW : 0) |
           ((f & FE_UNDERFLOW) ? LZ_FPE_UNDERFLOW : 0) | ((f & FE_INVALID) ? LZ_FPE_INVALID : 0);
}

/* Whether a flag is up (none is cleared). */
static inline int lz_fpe_raised(void) {
    return fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID) != 0;
}

/* Record the flags raised since the last take as slot k's (k = ninstr: the reduction's). */
static inline void lz_fpe_note(const lz_run *R, int k) {
    unsigned f = lz_fpe_take();
    if (f && R->fpe) __atomic_fetch_or(&R->fpe[k], (unsigned char)f, __ATOMIC_RELAXED);
}

#define LZ_GATHER NPY_MIN_INTP

typedef struct {
    char **vptr;
    npy_intp *vstr;
    char *regs, *gbuf, *stage, *end;
    char *wbuf;                 /* a write-back's chunk of results (lz_do_chunk), or NULL */
    char *fields;               /* the stencil fields' rings and F's scratch (lz_field_area) */
    npy_intp *ooff;
    /* interruption (see lz_poll) */
    int check_signals;          /* this thread runs Python's signal handlers */
    int *abort;                 /* set (atomically) when the call is abandoned; or NULL */
    npy_intp budget;            /* elements until the next poll */
    double next_check;          /* monotonic time of the next signal check */
} lz_scratch;

/* Per-thread scratch, kept between calls (pool threads persist): a call pays no malloc
 * and no page faults for its block registers. */
#if defined(_MSC_VER)
#define LZ_TLS __declspec(thread)
#else
#define LZ_TLS __thread
#endif
static LZ_TLS char *lz_tls_buf = NULL;
static LZ_TLS size_t lz_tls_size = 0;

#ifndef _WIN32
/* The buffer is also registered under a pthread key whose destructor frees it when the
 * thread exits: a program that runs lazyarr in many short-lived threads must not leak one
 * buffer per thread. (The key's value is only written when the buffer changes.) */
#include <pthread.h>
static pthread_key_t lz_tls_key;
static pthread_once_t lz_tls_once = PTHREAD_ONCE_INIT;
static int lz_tls_key_ok = 0;
static void lz_tls_make_key(void) { lz_tls_key_ok = pthread_key_create(&lz_tls_key, free) == 0; }
static void lz_tls_register(char *buf) {
    pthread_once(&lz_tls_once, lz_tls_make_key);
    if (lz_tls_key_ok) pthread_setspecific(lz_tls_key, buf);
}
#else
static void lz_tls_register(char *buf) { (void)buf; }
#endif

#define LZ_ALIGN(x) (((x) + 63) & ~(size_t)63)

/* the bytes of one chunk of a write-back's results (lz_do_chunk) */
static size_t lz_chunk_bytes(const lz_prog *P, const lz_run *R) {
    return R->wb ? (size_t)(R->wb_chunk * R->wb_rowsize * P->instr[P->ninstr - 1].osize) : 0;
}

/* A field's per-thread area: the ring (D rows of up to B + span values, each with its key:
 * the field row, the block's first column and length it holds), then F's value pointers,
 * strides and registers. */
typedef struct { npy_intp p, j, n; } lz_ring_key;
static size_t lz_ring_row_bytes(const lz_prog *P, const lz_field *f) {
    return LZ_ALIGN((size_t)(P->B + f->dj1 - f->dj0 + 8) * (size_t)f->osize + 64);
}
/* a ring row per field row and per block of a row (rows longer than B: the blocks of one
 * row run one after another, each reading its own columns of the same field rows) */
static size_t lz_ring_rows(const lz_prog *P, const lz_run *R, const lz_field *f) {
    return (size_t)(f->di1 - f->di0 + 1) * (size_t)((R->cols + P->B - 1) / P->B);
}
static size_t lz_field_bytes(const lz_prog *P, const lz_run *R, const lz_field *f) {
    const size_t D = lz_ring_rows(P, R, f);
    return LZ_ALIGN(D * sizeof(lz_ring_key)) + D * lz_ring_row_bytes(P, f)
        + 2 * LZ_ALIGN(sizeof(char *) * (f->F->nvals + 1)) + (size_t)LZ_RB(f->F) * (f->F->nregs + 1);
}
static size_t lz_field_area(const lz_prog *P, const lz_run *R) {
    size_t need = 0;
    for (int k = 0; k < R->nfields; k++) need += lz_field_bytes(P, R, &R->fields[k]);
    return need;
}

static int lz_scratch_init(const lz_prog *P, const lz_run *R, lz_scratch *S) {
    size_t rb = (size_t)LZ_RB(P);
    size_t a = LZ_ALIGN(sizeof(char *) * (P->nvals + 1));
    size_t b = LZ_ALIGN(sizeof(npy_intp) * (P->nvals + 1));
    size_t c = LZ_ALIGN(sizeof(npy_intp) * (P->ninputs + 1));
    size_t w = LZ_ALIGN(lz_chunk_bytes(P, R));
    size_t fa = lz_field_area(P, R);
    size_t need = a + b + c + rb * (P->nregs + 1) + rb * (P->ninputs + 1) + LZ_ACC_ROWS * rb + w + fa + 64;
    if (need > lz_tls_size) {
        free(lz_tls_buf);
        lz_tls_buf = (char *)malloc(need);
        lz_tls_size = lz_tls_buf ? need : 0;
        lz_tls_register(lz_tls_buf);
        if (!lz_tls_buf) return -1;
    }
    char *base = (char *)LZ_ALIGN((size_t)lz_tls_buf);
    S->vptr = (char **)base;
    S->vstr = (npy_intp *)(base + a);
    S->ooff = (npy_intp *)(base + a + b);
    S->regs = base + a + b + c;
    S->gbuf = S->regs + rb * (P->nregs + 1);
    S->stage = S->gbuf + rb * (P->ninputs + 1);
    S->end = S->stage + LZ_ACC_ROWS * rb;
    S->wbuf = w ? S->end : NULL;
    S->fields = fa ? S->end + w : NULL;
    size_t at = 0;
    for (int k = 0; k < R->nfields; k++) {   /* empty rings: this call's data is new */
        lz_ring_key *key = (lz_ring_key *)(S->fields + at);
        for (size_t d = 0; d < lz_ring_rows(P, R, &R->fields[k]); d++) key[d].p = -1;
        at += lz_field_bytes(P, R, &R->fields[k]);
    }
    return 0;
}

static void lz_scratch_free(lz_scratch *S) { (void)S; }

/* ---------------------------------------------------------------- interruption
 * A fused kernel can run for minutes (a lazy broadcast of 2^36 elements). Every
 * LZ_POLL_ELEMS elements a thread looks whether the call was abandoned; the thread that
 * called from Python's main thread also, at most every LZ_SIGNAL_PERIOD seconds, takes the
 * GIL and runs Python's signal handlers (Ctrl-C: KeyboardInterrupt). An exception there
 * abandons the call: -3, with the exception set for execute() to raise. */
#define LZ_POLL_ELEMS ((npy_intp)1 << 16)
#define LZ_SIGNAL_PERIOD 0.05
#define LZ_INTERRUPTED (-3)

static double lz_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void lz_poll_init(lz_scratch *S, int check_signals, int *abort) {
    S->check_signals = check_signals;
    S->abort = abort;
    S->budget = LZ_POLL_ELEMS;
    S->next_check = check_signals ? lz_now() + LZ_SIGNAL_PERIOD : 0.0;
}

static int lz_poll_slow(lz_scratch *S) {
    S->budget = LZ_POLL_ELEMS;
    if (S->abort && __atomic_load_n(S->abort, __ATOMIC_RELAXED)) return LZ_INTERRUPTED;
    if (!S->check_signals) return 0;
    double now = lz_now();
    if (now < S->next_check) return 0;
    S->next_check = now + LZ_SIGNAL_PERIOD;
    PyGILState_STATE g = PyGILState_Ensure();
    int r = PyErr_CheckSignals();
    PyGILState_Release(g);
    return r < 0 ? LZ_INTERRUPTED : 0;
}

/* Count n elements done; 0, or LZ_INTERRUPTED when the call must stop. */
static inline int lz_poll(lz_scratch *S, npy_intp n) {
    if ((S->budget -= n) > 0) return 0;
    return lz_poll_slow(S);
}

/* Set run k's compiled loop (release: a thread that reads the pointer with acquire sees the
 * operand fields written before it). */
static void lz_publish_loop(lz_prog *P, int k, lz_loop_fn fn) {
    __atomic_store_n(&P->runs[k].fn, fn, __ATOMIC_RELEASE);
}

/* Run L's compiled loop over the block, where it applies: 1 when it ran, 0 when its
 * instructions must (no loop yet; an operand read backwards or at a stride that is not a
 * whole number of elements). The caller keeps the instructions where flags are noted per
 * instruction and where ``out`` may be an input's memory. */
static int lz_run_loop(const lz_prog *P, const lz_loop_run *L, lz_scratch *S, npy_intp n,
                       char *out) {
    lz_loop_fn fn = __atomic_load_n(&L->fn, __ATOMIC_ACQUIRE);
    if (fn == NULL) return 0;
    char *args[LZ_LOOP_MAX_IN + 1];
    npy_intp strides[LZ_LOOP_MAX_IN + 1];
    const lz_instr *last = &P->instr[L->end - 1];
    char *op = last->reg < 0 ? out : S->regs + last->reg * LZ_RB(P);
    int uniform = last->reg >= 0;
    for (int k = 0; k < L->nin; k++) {
        npy_intp st = S->vstr[L->in[k]];
        /* (an operand with an element per cache line or sparser, a ``[:, :, k]`` slice read
         * in place: NumPy's tight loops keep more of its misses in flight than the loop's
         * strided body, which ran such blocks up to 2x slower: docs/notes/cpu.rst, 2026-12-07h) */
        if (st < 0 || st % L->isz[k] || st >= LZ_LOOP_SPARSE_STRIDE) return 0;
        args[k] = S->vptr[L->in[k]];
        strides[k] = st;
        uniform = uniform && st == 0;
    }
    args[L->nin] = op;
    strides[L->nin] = last->osize;
    fn(args, strides, uniform ? 1 : n);
    S->vptr[last->out] = op;
    S->vstr[last->out] = uniform ? 0 : last->osize;
    return 1;
}

/* ``cmp(absolute(z), c)`` over n elements (VK_CABS_CMP: ``abs(z) < r``, a fractal's escape
 * test), bool results into d: NumPy's values and flags without NumPy's hypot where the answer
 * is sure. s = re*re + im*im against c*c decides where s lies outside a relative band of 1e-12
 * about c*c (the rounding of s, of c*c and of any hypot within a few ulps is ~1e-15) and s is
 * a normal number at least 1e-290 (so NumPy's hypot of the element raises nothing: no overflow,
 * no subnormal result), c > 0; z = 0 gives +0 exactly. Every other element (NaN, inf, huge or
 * tiny values, c <= 0 or NaN, the band) takes NumPy's absolute loop and a quiet comparison
 * (NumPy's ``less`` raises nothing). The sure pass's own flags (its squares' overflow, its
 * comparisons of NaN) are dropped: only the loop's are left, as NumPy's ``absolute`` raises
 * them. */
/* The common case, vectorized: contiguous z, one bound c in [1e-140, 1e150] (c*c and the band
 * normal numbers); z = 0 is sure too there (+0 is below c). Four elements a step, in GCC's
 * vector types (the scalar form's branches mispredicted on mandelbrot1's boundaries: 3.5 ns
 * an element). Returns whether any element is left unsure (2). */
typedef double lz_v4d_t __attribute__((vector_size(32)));
typedef npy_int64 lz_v4l_t __attribute__((vector_size(32)));
LZ_CLONES static int lz_cabs_cmp_bound(const double *restrict z, double cv, npy_bool below,
                                       npy_bool *restrict d, npy_intp n) {
    const double tlo = cv * cv * (1 - 1e-12), thi = cv * cv * (1 + 1e-12);
    const lz_v4l_t even = {0, 2, 4, 6}, odd = {1, 3, 5, 7};
    const lz_v4l_t vb = (lz_v4l_t){0, 0, 0, 0} + (npy_int64)below;
    const lz_v4l_t va = (lz_v4l_t){0, 0, 0, 0} + (npy_int64)!below;
    const lz_v4d_t vlo = (lz_v4d_t){0, 0, 0, 0} + tlo, vhi = (lz_v4d_t){0, 0, 0, 0} + thi;
    const lz_v4d_t tiny = (lz_v4d_t){0, 0, 0, 0} + 1e-290, big = (lz_v4d_t){0, 0, 0, 0} + DBL_MAX;
    const lz_v4d_t zero = {0, 0, 0, 0};
    lz_v4l_t unsure = {0, 0, 0, 0};
    npy_intp i = 0;
    for (; i + 4 <= n; i += 4) {
        lz_v4d_t a, b;
        memcpy(&a, z + 2 * i, sizeof a);
        memcpy(&b, z + 2 * i + 4, sizeof b);
        const lz_v4d_t sa = a * a, sb = b * b;
        const lz_v4d_t s = __builtin_shuffle(sa, sb, even) + __builtin_shuffle(sa, sb, odd);
        const lz_v4l_t za = (lz_v4l_t)(a == zero), zb = (lz_v4l_t)(b == zero);
        const lz_v4l_t z0 = __builtin_shuffle(za, zb, even) & __builtin_shuffle(za, zb, odd);
        const lz_v4l_t lo = ((lz_v4l_t)(s < vlo) & (lz_v4l_t)(s >= tiny)) | z0;
        const lz_v4l_t hi = (lz_v4l_t)(s > vhi) & (lz_v4l_t)(s <= big);
        const lz_v4l_t no = ~(lo | hi);
        const lz_v4l_t r = (lo & vb) | (hi & va) | (no & 2);
        unsure |= no;
        d[i] = (npy_bool)r[0];
        d[i + 1] = (npy_bool)r[1];
        d[i + 2] = (npy_bool)r[2];
        d[i + 3] = (npy_bool)r[3];
    }
    int any = (unsure[0] | unsure[1] | unsure[2] | unsure[3]) != 0;
    for (; i < n; i++) {
        const double re = z[2 * i], im = z[2 * i + 1];
        const double s = re * re + im * im;
        const int lo = ((s < tlo) & (s >= 1e-290)) | ((re == 0) & (im == 0));
        const int hi = (s > thi) & (s <= DBL_MAX);
        const npy_bool r = lo ? below : hi ? (npy_bool)!below : 2;
        any |= r == 2;
        d[i] = r;
    }
    return any;
}

static int lz_cabs_cmp(const lz_instr *ins, const char *z, npy_intp zs, const char *c,
                       npy_intp cs, npy_bool *d, npy_intp n) {
    const int below = ins->cmp <= 1;            /* less, less_equal: True below c */
    const int before = fetestexcept(FE_ALL_EXCEPT);
    const double c0 = *(const double *)c;
    int any = 0;
    if (cs == 0 && zs == 16 && c0 >= 1e-140 && c0 <= 1e150) {
        any = lz_cabs_cmp_bound((const double *)z, c0, (npy_bool)below, d, n);
    } else {
        for (npy_intp i = 0; i < n; i++) {
            const double re = ((const double *)(z + i * zs))[0];
            const double im = ((const double *)(z + i * zs))[1];
            const double cv = *(const double *)(c + i * cs);
            const double s = re * re + im * im, t = cv * cv;
            npy_bool r;
            if (re == 0 && im == 0 && cv == cv) {   /* hypot(0, 0): +0, exactly */
                r = ins->cmp == 0 ? 0 < cv : ins->cmp == 1 ? 0 <= cv : ins->cmp == 2 ? 0 > cv
                    : 0 >= cv;
            } else if (cv > 0 && s >= 1e-290 && s <= DBL_MAX && s < t * (1 - 1e-12)) {
                r = (npy_bool)below;
            } else if (cv > 0 && s >= 1e-290 && s <= DBL_MAX && s > t * (1 + 1e-12)) {
                r = (npy_bool)!below;
            } else {
                r = 2;                           /* NumPy's loop, below */
                any = 1;
            }
            d[i] = r;
        }
    }
    feclearexcept(FE_ALL_EXCEPT & ~before);
    if (!any) return 0;
    for (npy_intp i = 0; i < n; i++) {
        if (d[i] != 2) continue;
        double h;
        char *args[2] = {(char *)(z + i * zs), (char *)&h};
        npy_intp one = 1, st[2] = {16, 8};
        if (ins->loop(ins->ctx, args, &one, st, ins->aux) < 0) return -1;
        const double cv = *(const double *)(c + i * cs);
        d[i] = (npy_bool)(ins->cmp == 0 ? isless(h, cv) : ins->cmp == 1 ? islessequal(h, cv)
                          : ins->cmp == 2 ? isgreater(h, cv) : isgreaterequal(h, cv));
    }
    return 0;
}

/* The block's instructions, in order, on the values lz_exec_block set up (or their compiled
 * loop, lz_run_loop); ``note``: the floating-point flags noted after each one
 * (lz_exec_block). */
static int lz_run_instrs(const lz_prog *P, const lz_run *R, lz_scratch *S, npy_intp n, char *out,
                         const char *const *pf, const npy_intp *pflen, int npf, int note) {
    const npy_intp rb = LZ_RB(P);
    char **vptr = S->vptr;
    npy_intp *vstr = S->vstr;
    const int loops = P->nruns && !note && !(R != NULL && R->out_read);
    int next_run = 0;
    int raised_before_clear = 0;   /* see lz_instr.clears_fpe; returned as 1 */
    for (int j = 0; j < P->ninstr; j++) {
        if (loops && next_run < P->nruns && P->runs[next_run].first == j) {
            const lz_loop_run *L = &P->runs[next_run++];
            if (lz_run_loop(P, L, S, n, out)) {
                j = L->end - 1;
                continue;
            }
        }
        const lz_instr *ins = &P->instr[j];
        for (int q = 0; q < npf; q++) {
            npy_intp a0 = pflen[q] * j / P->ninstr, a1 = pflen[q] * (j + 1) / P->ninstr;
            for (npy_intp a = a0 & ~(npy_intp)63; a < a1; a += 64) __builtin_prefetch(pf[q] + a, 0, 2);
        }
        char *op = ins->reg < 0 ? out : S->regs + ins->reg * rb;
        /* A value whose operands are all uniform (stride 0: scalars, one-element inputs and
         * what is computed from them alone) is uniform too: computed once, kept at stride 0.
         * NumPy's loops see such operands at stride 0 as well (a broadcast 0-d array), and
         * some answer by stride: clip with two stride-0 bounds keeps -0.0, with an array
         * bound it gives +0.0. The output itself is always written in full. */
        int uniform = ins->reg >= 0;
        for (int a = 0; a < ins->nin && uniform; a++) uniform = vstr[ins->in[a]] == 0;
        npy_intp m = uniform ? 1 : n;
        if (ins->kind == VK_UFUNC) {
            if (ins->clears_fpe && !note && !raised_before_clear && R != NULL && R->fpe
                && lz_fpe_raised())
                raised_before_clear = 1;
            char *args[4];
            npy_intp strides[4];
            for (int a = 0; a < ins->nin; a++) {
                args[a] = vptr[ins->in[a]];
                strides[a] = vstr[ins->in[a]];
            }
            args[ins->nin] = op;
            strides[ins->nin] = ins->osize;
            if (ins->which >= 0) {
                args[ins->nin + ins->which] = op;
                strides[ins->nin + ins->which] = ins->osize;
                args[ins->nin + 1 - ins->which] = S->regs + ins->spare_reg * rb;
                strides[ins->nin + 1 - ins->which] = ins->spare_size;
            }
            if (ins->loop(ins->ctx, args, &m, strides, ins->aux) < 0) return -1;
        } else if (ins->kind == VK_CAST) {
            ins->cast(vptr[ins->in[0]], vstr[ins->in[0]], op, m);
        } else if (ins->kind == VK_CABS_CMP) {
            if (lz_cabs_cmp(ins, vptr[ins->in[0]], vstr[ins->in[0]], vptr[ins->in[1]],
                            vstr[ins->in[1]], (npy_bool *)op, m) < 0)
                return -1;
        } else {
            lz_where(vptr[ins->in[0]], vstr[ins->in[0]], vptr[ins->in[1]], vstr[ins->in[1]],
                     vptr[ins->in[2]], vstr[ins->in[2]], op, ins->osize, m);
        }
        vptr[ins->out] = op;
        vstr[ins->out] = uniform ? 0 : ins->osize;
        if (note) lz_fpe_note(R, j);
    }
    return raised_before_clear;
}

/* F over m elements of the base from src (stride f->s1) into dst: blocks of F's B, the flags
 * noted per instruction where a block raised one (F reads only its input: a block runs
 * again alike, as lz_exec_block does) */
static int lz_field_run(const lz_field *f, lz_scratch *FS, const char *src, npy_intp m, char *dst) {
    const lz_prog *F = f->F;
    const int iv = F->input_val[0];
    for (int k = 0; k < F->nscalars; k++) {
        FS->vptr[F->scalar_val[k]] = f->Rf->scalars + LZ_SCALAR_BYTES * k;
        FS->vstr[F->scalar_val[k]] = 0;
    }
    for (npy_intp a = 0; a < m; a += F->B) {
        const npy_intp n = m - a < F->B ? m - a : F->B;
        FS->vptr[iv] = (char *)src + a * f->s1;
        FS->vstr[iv] = f->s1;
        char *out = dst + a * f->osize;
        const int r = lz_run_instrs(F, f->Rf, FS, n, out, NULL, NULL, 0, 0);
        if (r < 0) return -1;
        if (f->Rf->fpe && (r || lz_fpe_raised())) {
            lz_fpe_take();
            if (lz_run_instrs(F, f->Rf, FS, n, out, NULL, NULL, 0, 1) < 0) return -1;
        }
    }
    return 0;
}

/* For the block of row i, columns [j, j+n): each field's rows i+di0 .. i+di1 in the thread's
 * ring (computed where the ring does not hold them for this block's columns), and each top
 * input pointed at its row and shift. A field row p holds the columns that the views whose
 * output row p - di exists read, so no element outside the views is computed. */
static int lz_fields_prepare(const lz_prog *P, const lz_run *R, lz_scratch *S, npy_intp o,
                             npy_intp start, npy_intp n) {
    const npy_intp flat = o * R->Isz + start, i = flat / R->cols, j = flat % R->cols;
    size_t at = 0;
    for (int k = 0; k < R->nfields; k++) {
        const lz_field *f = &R->fields[k];
        const lz_prog *F = f->F;
        const npy_intp D = f->di1 - f->di0 + 1, seg = (j / P->B) * D;
        const size_t nring = lz_ring_rows(P, R, f);
        lz_ring_key *key = (lz_ring_key *)(S->fields + at);
        const size_t rowb = lz_ring_row_bytes(P, f);
        char *ring = S->fields + at + LZ_ALIGN(nring * sizeof(lz_ring_key));
        lz_scratch FS;
        FS.vptr = (char **)(ring + nring * rowb);
        FS.vstr = (npy_intp *)((char *)FS.vptr + LZ_ALIGN(sizeof(char *) * (F->nvals + 1)));
        FS.regs = (char *)FS.vstr + LZ_ALIGN(sizeof(char *) * (F->nvals + 1));
        at += lz_field_bytes(P, R, f);
        for (npy_intp p = i + f->di0; p <= i + f->di1; p++) {
            const npy_intp d = seg + p % D;
            if (key[d].p == p && key[d].j == j && key[d].n == n) continue;
            int lo = f->dj1, hi = f->dj0;
            for (int t = 0; t < f->ntops; t++)
                if (p - f->di[t] >= 0 && p - f->di[t] < R->rows) {
                    if (f->dj[t] < lo) lo = f->dj[t];
                    if (f->dj[t] > hi) hi = f->dj[t];
                }
            if (lo <= hi &&
                lz_field_run(f, &FS, f->base + p * f->s0 + (j + lo) * f->s1, n + hi - lo,
                             ring + d * rowb + (lo - f->dj0) * f->osize) < 0)
                return -1;
            key[d].p = p;
            key[d].j = j;
            key[d].n = n;
        }
        for (int t = 0; t < f->ntops; t++) {
            const int v = P->input_val[f->top_input[t]];
            if (v < 0) continue;
            S->vptr[v] = ring + (seg + (i + f->di[t]) % D) * rowb + (f->dj[t] - f->dj0) * f->osize;
            S->vstr[v] = f->osize;
        }
    }
    return 0;
}

/* Run the program over block (o, [start, start+n)); `out` receives the root if it writes
 * to the output array. Returns 0, or -1 if a NumPy loop reported an error. */
static int lz_exec_block(const lz_prog *P, const lz_run *R, lz_scratch *S, npy_intp o,
                         npy_intp start, npy_intp n, char *out) {
    const npy_intp rb = LZ_RB(P);
    char **vptr = S->vptr;
    npy_intp *vstr = S->vstr;
    for (int k = 0; k < P->ninputs; k++) S->ooff[k] = 0;
    if (R->nO) {
        npy_intp rem = o;
        for (int d = R->nO - 1; d >= 0; d--) {
            npy_intp i = rem % R->Oshape[d];
            rem /= R->Oshape[d];
            if (i)
                for (int k = 0; k < P->ninputs; k++) S->ooff[k] += i * R->Ostr[k * R->nO + d];
        }
    }
    for (int k = 0; k < P->ninputs; k++) {
        int v = P->input_val[k];
        if (v < 0) continue;
        npy_intp ds = R->dstride[k];
        if (P->input_isz[k] == 0) {         /* a random draw's counters (lz_count_run) */
            char *g = S->gbuf + k * rb;
            npy_intp at = (npy_intp)R->base[k] + S->ooff[k];
            if (ds != LZ_GATHER)
                lz_count_run((npy_uint64 *)g, at + start * ds, ds, n);
            else
                lz_gather(g, (const char *)at, 0, R->nI, R->Ishape, R->Istr + k * R->nI, start, n);
            vptr[v] = g;
            vstr[v] = 8;
            continue;
        }
        char *b = R->base[k] + S->ooff[k];
        const npy_intp *str = R->Istr + k * R->nI;
        if (ds != LZ_GATHER) {
            vptr[v] = b + start * ds;
            vstr[v] = ds;
        } else if (str[R->nI - 1] != 0 && start / R->Ishape[R->nI - 1] ==
                   (start + n - 1) / R->Ishape[R->nI - 1]) {
            /* a block inside one run of the last inner dim: read in place at that dim's
             * stride (lz_run_cut cuts MODE_RED_B's blocks so; a stride of 0 is gathered,
             * so that a uniform value stays one that NumPy's loops see at stride 0 only
             * where the whole input is) */
            npy_intp rem = start, off = 0;
            for (int d = R->nI - 1; d >= 0; d--) {
                off += (rem % R->Ishape[d]) * str[d];
                rem /= R->Ishape[d];
            }
            vptr[v] = b + off;
            vstr[v] = str[R->nI - 1];
        } else {
            char *g = S->gbuf + k * rb;
            lz_gather(g, b, P->input_isz[k], R->nI, R->Ishape, str, start, n);
            vptr[v] = g;
            vstr[v] = P->input_isz[k];
        }
    }
    for (int k = 0; k < P->nscalars; k++) {
        vptr[P->scalar_val[k]] = R->scalars + LZ_SCALAR_BYTES * k;
        vstr[P->scalar_val[k]] = 0;
    }
    /* (what the reduction kernel raised since the last block; a program without
     * instructions, a leaf's reduction, leaves its flags to the note after each claim of
     * items: two status reads per block were ~2 % of a leaf's column sums) */
    if (P->ninstr) lz_fpe_note(R, P->ninstr);
    if (R->nfields && lz_fields_prepare(P, R, S, o, start, n) < 0) return -1;
    /* A program with much arithmetic per input byte (P->prefetch) asks for the next block of
     * each contiguous input while it computes this one, a share after each instruction: its
     * loads then overlap the arithmetic, where the hardware prefetcher waits for the next
     * block's first loads. Memory-bound programs go without (it slowed them: docs/notes/cpu.rst,
     * "Prefetching the next block"). */
    const char *pf[8];
    npy_intp pflen[8];
    int npf = 0;
    if (P->prefetch && start + n < R->Isz) {
        npy_intp nn = R->Isz - start - n < n ? R->Isz - start - n : n;
        for (int k = 0; k < P->ninputs && npf < 8; k++) {
            int v = P->input_val[k];
            if (v < 0 || P->input_isz[k] == 0 || R->dstride[k] != P->input_isz[k]) continue;
            pf[npf] = vptr[v] + n * R->dstride[k];
            pflen[npf++] = nn * R->dstride[k];
        }
    }
    /* The flags are noted per instruction only where a block raised one: the block's
     * instructions run, one test of the status follows, and a block that raised a flag runs
     * again noting after each instruction (the same values and flags: the block's reads are
     * unchanged, except where ``out`` may be an input's memory, R->out_read: then every
     * instruction is noted on the first run). The tests after each instruction were 8 % of
     * the samples of a 40,000-element stencil statement (docs/notes/cpu.rst, "One flag test
     * per block"). A loop that clears the status when it ends (NumPy's min/max, comparisons,
     * abs...) would hide an earlier instruction's flag from that one test: the status is
     * tested before such a loop too (lz_instr.clears_fpe). */
    if (!R->fpe || !P->ninstr) return lz_run_instrs(P, R, S, n, out, pf, pflen, npf, 0) < 0 ? -1 : 0;
    if (R->out_read) return lz_run_instrs(P, R, S, n, out, pf, pflen, npf, 1);
    /* (1: a flag was up before an instruction whose loop clears the status) */
    const int r = lz_run_instrs(P, R, S, n, out, pf, pflen, npf, 0);
    if (r < 0) return -1;
    if (!r && !lz_fpe_raised()) return 0;
    lz_fpe_take();
    return lz_run_instrs(P, R, S, n, out, pf, pflen, npf, 1);
}

/* ---------------------------------------------------------------- masked updates
 * ``x[m] = f(x[m], y[m], s)`` (lazyarr/_masked.py): per block, the positions of the mask's
 * True lanes, each input taken at them into a compact run, the instructions (NumPy's loops,
 * or their compiled run) over those lanes only, and the result put back at them in ``out``.
 * NumPy computes f on the compressed arrays: the same values, in the same loops, so its
 * floating-point flags exactly, and no lane it leaves alone is computed. */

/* The runs of True lanes of m[0, n): run r is [at[2r], at[2r] + at[2r+1]); their count.
 * The lanes are copied by runs (NumPy's boolean index copies its runs too): a lane at a time
 * through a list of positions ran the gathers ~2x slower on mandelbrot1's masks. */
static npy_intp lz_true_runs(const npy_bool *m, npy_intp n, npy_int32 *at) {
    npy_intp r = 0, j = 0;
    while (j < n) {
        while (j + 8 <= n) {                   /* skip False lanes a word at a time */
            npy_uint64 w;
            memcpy(&w, m + j, 8);
            if (w) break;
            j += 8;
        }
        while (j < n && !m[j]) j++;
        if (j >= n) break;
        const npy_intp a = j;
        while (j + 8 <= n) {                   /* True lanes a word at a time */
            npy_uint64 w;
            memcpy(&w, m + j, 8);
            if (w != 0x0101010101010101ULL) break;
            j += 8;
        }
        while (j < n && m[j]) j++;
        at[2 * r] = (npy_int32)a;
        at[2 * r + 1] = (npy_int32)(j - a);
        r++;
    }
    return r;
}

#define LZ_TAKE(T)                                                                           \
    for (npy_intp r = 0; r < nr; r++) {                                                      \
        const char *p = s + at[2 * r] * ss;                                                  \
        const npy_intp len = at[2 * r + 1];                                                  \
        if (ss == (npy_intp)sizeof(T) && len >= 8) memcpy(d, p, (size_t)len * sizeof(T));    \
        else for (npy_intp i = 0; i < len; i++) ((T *)d)[i] = *(const T *)(p + i * ss);    \
        d += len * sizeof(T);                                                                \
    }
/* the lanes of the nr runs at ``at`` of the elements at s (in steps of ss bytes), one after
 * another into d (isz bytes each) */
static void lz_take(char *d, const char *s, npy_intp ss, npy_intp isz, const npy_int32 *at,
                    npy_intp nr) {
    switch (isz) {
    case 1: LZ_TAKE(npy_uint8) break;
    case 2: LZ_TAKE(npy_uint16) break;
    case 4: LZ_TAKE(npy_uint32) break;
    case 8: LZ_TAKE(npy_uint64) break;
    default: LZ_TAKE(lz_c128) break;
    }
}
#undef LZ_TAKE

#define LZ_PUT(T)                                                                            \
    for (npy_intp r = 0; r < nr; r++) {                                                      \
        T *p = (T *)d + at[2 * r];                                                           \
        const npy_intp len = at[2 * r + 1];                                                  \
        if (ss == (npy_intp)sizeof(T) && len >= 8) memcpy(p, s, (size_t)len * sizeof(T));    \
        else for (npy_intp i = 0; i < len; i++) p[i] = *(const T *)(s + i * ss);            \
        s += len * ss;                                                                       \
    }
/* the inverse: s's lanes (in steps of ss bytes) into the nr runs at ``at`` of the C-ordered
 * elements at d (isz bytes each) */
static void lz_put(char *d, const char *s, npy_intp ss, npy_intp isz, const npy_int32 *at,
                   npy_intp nr) {
    switch (isz) {
    case 1: LZ_PUT(npy_uint8) break;
    case 2: LZ_PUT(npy_uint16) break;
    case 4: LZ_PUT(npy_uint32) break;
    case 8: LZ_PUT(npy_uint64) break;
    default: LZ_PUT(lz_c128) break;
    }
}
#undef LZ_PUT

#define LZ_FILL(T)                                                                           \
    {                                                                                        \
        const T v = *(const T *)s;                                                           \
        for (npy_intp r = 0; r < nr; r++) {                                                  \
            T *p = (T *)d + at[2 * r];                                                       \
            for (npy_intp i = 0, len = at[2 * r + 1]; i < len; i++) p[i] = v;                \
        }                                                                                    \
    }
/* the element at s (isz bytes) into every lane of the nr runs at ``at`` of d */
static void lz_fill_runs(char *d, const char *s, npy_intp isz, const npy_int32 *at, npy_intp nr) {
    switch (isz) {
    case 1: LZ_FILL(npy_uint8) break;
    case 2: LZ_FILL(npy_uint16) break;
    case 4: LZ_FILL(npy_uint32) break;
    case 8: LZ_FILL(npy_uint64) break;
    default: LZ_FILL(lz_c128) break;
    }
}
#undef LZ_FILL

/* The block [start, start+n) of a masked run (R->mask; one inner index over the whole space,
 * every input read with one stride, R->dstride, or uniform). The result is computed into the
 * thread's stage and only then written: an input may read ``out`` (``x`` itself), and a block
 * that raised a flag runs again on unchanged operands to tell which instruction did. A block
 * all True reads its inputs in place; one all False does nothing. */
static int lz_exec_masked(const lz_prog *P, const lz_run *R, lz_scratch *S, npy_intp start,
                          npy_intp n) {
    const npy_intp rb = LZ_RB(P);
    npy_int32 *at = (npy_int32 *)(S->stage + rb);      /* (at most n/2 + 1 runs: 4n bytes) */
    const npy_intp nr = lz_true_runs(R->mask + start, n, at);
    if (nr == 0) return 0;
    npy_intp c = 0;
    for (npy_intp r = 0; r < nr; r++) c += at[2 * r + 1];
    const int dense = c == n;
    char **vptr = S->vptr;
    npy_intp *vstr = S->vstr;
    for (int k = 0; k < P->ninputs; k++) {
        const int v = P->input_val[k];
        if (v < 0) continue;
        const npy_intp ds = R->dstride[k];
        char *b = R->base[k];
        if (ds == 0) {
            vptr[v] = b;
            vstr[v] = 0;
        } else if (dense) {
            vptr[v] = b + start * ds;
            vstr[v] = ds;
        } else {
            char *g = S->gbuf + k * rb;
            lz_take(g, b + start * ds, ds, P->input_isz[k], at, nr);
            vptr[v] = g;
            vstr[v] = P->input_isz[k];
        }
    }
    for (int k = 0; k < P->nscalars; k++) {
        vptr[P->scalar_val[k]] = R->scalars + LZ_SCALAR_BYTES * k;
        vstr[P->scalar_val[k]] = 0;
    }
    char *stage = S->stage;
    if (P->ninstr) lz_fpe_note(R, P->ninstr);
    if (P->ninputs == 0) {
        /* a value of scalars alone (``x[m] = scalar``'s fill): the same on every lane, computed
         * once (the same flags too) and stored straight into the runs */
        if (lz_run_instrs(P, R, S, 1, stage, NULL, NULL, 0, R->fpe != NULL) < 0) return -1;
        const npy_intp osz = P->instr[P->ninstr - 1].osize;
        lz_fill_runs(R->out + start * osz, vptr[P->result_val], osz, at, nr);
        return 0;
    }
    if (!R->fpe || !P->ninstr) {
        if (lz_run_instrs(P, R, S, c, stage, NULL, NULL, 0, 0) < 0) return -1;
    } else {
        const int r = lz_run_instrs(P, R, S, c, stage, NULL, NULL, 0, 0);
        if (r < 0) return -1;
        if (r || lz_fpe_raised()) {
            lz_fpe_take();
            if (lz_run_instrs(P, R, S, c, stage, NULL, NULL, 0, 1) < 0) return -1;
        }
    }
    const npy_intp osz = P->instr[P->ninstr - 1].osize;
    const char *q = vptr[P->result_val];
    const npy_intp qs = vstr[P->result_val];
    if (dense) lz_copy(R->out + start * osz, q, qs, c, osz);
    else lz_put(R->out + start * osz, q, qs, osz, at, nr);
    return 0;
}

/* ---------------------------------------------------------------- reduction kernels */
#define LZ_AT(T, p, s, i) (*(const T *)((p) + (i) * (s)))

/* NumPy-style pairwise summation in double: blocks of <= 128 elements summed with
 * independent accumulators (8 like NumPy, 16 on contiguous data so that the adds
 * pipeline and vectorize), halves combined recursively. For float32 input every
 * partial is exact to ~2^-53: far more accurate than NumPy's float32 pairwise sum. */

#define LZ_DEF_PW(NAME, T, EXPR)                                                             \
    LZ_CLONES static double NAME##_leaf16(const T *a, npy_intp n, double m) {                \
        double r[16];                                                                        \
        npy_intp i, nn = n - (n % 16);                                                       \
        for (int k = 0; k < 16; k++) { double x = (double)a[k]; r[k] = EXPR; }               \
        for (i = 16; i < nn; i += 16)                                                        \
            for (int k = 0; k < 16; k++) { double x = (double)a[i + k]; r[k] += EXPR; }      \
        for (int k = 0; k < 8; k++) r[k] += r[k + 8];                                        \
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));     \
        for (i = nn; i < n; i++) { double x = (double)a[i]; res += EXPR; }                   \
        return res;                                                                          \
    }                                                                                        \
    static double NAME(const char *p, npy_intp n, npy_intp s, double m) {                    \
        if (n < 8) {                                                                         \
            double r = 0.;                                                                   \
            for (npy_intp i = 0; i < n; i++) { double x = (double)LZ_AT(T, p, s, i); r += EXPR; } \
            return r;                                                                        \
        } else if (n <= 256 && n >= 16 && s == (npy_intp)sizeof(T)) {                        \
            return NAME##_leaf16((const T *)p, n, m);                                        \
        } else if (n <= 128) {                                                               \
            double r[8];                                                                     \
            npy_intp i, nn = n - (n % 8);                                                    \
            for (int k = 0; k < 8; k++) { double x = (double)LZ_AT(T, p, s, k); r[k] = EXPR; } \
            for (i = 8; i < nn; i += 8)                                                      \
                for (int k = 0; k < 8; k++) { double x = (double)LZ_AT(T, p, s, i + k); r[k] += EXPR; } \
            double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])); \
            for (i = nn; i < n; i++) { double x = (double)LZ_AT(T, p, s, i); res += EXPR; }  \
            return res;                                                                      \
        } else {                                                                             \
            npy_intp n2 = n / 2;                                                             \
            n2 -= n2 % 8;                                                                    \
            return NAME(p, n2, s, m) + NAME(p + n2 * s, n - n2, s, m);                       \
        }                                                                                    \
    }
LZ_DEF_PW(lz_pw_f32, npy_float, x)
LZ_DEF_PW(lz_pw_f64, npy_double, x)
LZ_DEF_PW(lz_pwsq_f32, npy_float, (x - m) * (x - m))
LZ_DEF_PW(lz_pwsq_f64, npy_double, (x - m) * (x - m))
LZ_DEF_PW(lz_pw_f32_abs, npy_float, fabs(x))
LZ_DEF_PW(lz_pw_f64_abs, npy_double, fabs(x))
LZ_DEF_PW(lz_pw_f32_sq, npy_float, (double)(npy_float)(x * x))   /* float32 product, then widened */
LZ_DEF_PW(lz_pw_f64_sq, npy_double, x * x)

/* the folded elementwise op (PRE_*, LZ_FOLDS at the top of this file), on one value */
#define LZ_PRE_ID(T, v) (v)
#define LZ_PRE_ABS(T, v) ((T)fabs((double)(v)))
#define LZ_PRE_SQ(T, v) ((T)((v) * (v)))

static double lz_pw_d(const double *a, npy_intp n, npy_intp s) {
    return lz_pw_f64((const char *)a, n, s * (npy_intp)sizeof(double), 0.);
}

/* The sign-of-zero rule of min/max (docs/testing.rst, "Signed zeros"): IEEE 754-2019
 * maximum/minimum, +0 > -0, whatever the order of the elements (NaN is handled apart by
 * every kernel: any NaN makes the result NaN). LZ_MAXOF(x, m): x replaces the running
 * maximum m (x > m, or the zeros' tie +0 over -0); LZ_MINOF likewise (-0 under +0). Ties
 * between equal non-zero values keep m: the bits are the same. */
#define LZ_MAXOF(x, m) ((x) > (m) || ((x) == (m) && signbit(m) && !signbit(x)))
#define LZ_MINOF(x, m) ((x) < (m) || ((x) == (m) && !signbit(m) && signbit(x)))
#define LZ_BETTER(MX, x, m) ((MX) ? LZ_MAXOF(x, m) : LZ_MINOF(x, m))
/* the same on vectors (VI: the integer vector of the same width): where x == m the result
 * is m & x for max (+0 if either is +0), m | x for min (-0 if either is -0) */
#define LZ_VBEST(MX, VT, VI, x, m) ({                                                        \
        VI x_ = (VI)(x), m_ = (VI)(m), e_ = (VI)((x) == (m));                               \
        VI k_ = (MX) ? (VI)((x) > (m)) : (VI)((x) < (m));                                   \
        (VT)((k_ & x_) | (~k_ & ((MX) ? (m_ & (x_ | ~e_)) : (m_ | (x_ & e_))))); })

/* min/max of a contiguous block with GCC/Clang vector extensions (SSE2 by default, AVX2 in
 * the clone): two accumulators of W lanes, compare + bitwise select, a NaN mask on the side. */
/* 16-byte vectors: native everywhere SSE2/NEON exist (32-byte ones made gcc 12 ICE in the
 * default, non-AVX clone) */
typedef float lz_v4f __attribute__((vector_size(16)));
typedef npy_int32 lz_v4i __attribute__((vector_size(16)));
typedef double lz_v2d __attribute__((vector_size(16)));
typedef npy_int64 lz_v2l __attribute__((vector_size(16)));
#define LZ_VPRE_ID(VI, v) (v)
#define LZ_VPRE_ABS(VI, v) ((__typeof__(v))((VI)(v) & ((VI){0} + ~lz_signmask_##VI)))  /* clear sign */
#define LZ_VPRE_SQ(VI, v) ((v) * (v))
#define lz_signmask_lz_v4i ((npy_int32)0x80000000)
#define lz_signmask_lz_v2l ((npy_int64)0x8000000000000000LL)

/* Four accumulators of W lanes, a plain select (x > m ? x : m, which never picks a NaN: a NaN
 * mask on the side) and no zero rule in the loop: a zero result is rare, and then one more
 * pass over the block decides its sign (any +0 makes a maximum +0, any -0 a minimum -0).
 * 2.5x faster than the select with the zero rule in the loop (0.21 vs 0.53 ns per float64
 * element on a 4,096-element block in L1; docs/notes/cpu.rst). */
#define LZ_VSEL(MX, VT, VI, x, m) ({                                                        \
        VI k_ = (MX) ? (VI)((x) > (m)) : (VI)((x) < (m));                                   \
        (VT)((k_ & (VI)(x)) | (~k_ & (VI)(m))); })
#define LZ_DEF_MINMAX(NAME, T, VT, VI, W, LD, VLD, MX)                                       \
    LZ_CLONES static double NAME(const T *restrict a, npy_intp n) {                          \
        npy_intp i = 0;                                                                      \
        T r = LD(T, a[0]);                                                                   \
        int nan = 0;                                                                         \
        if (n >= 8 * W) {                                                                    \
            VT m[4], x;                                                                      \
            VI nn = (VI){0};                                                                 \
            for (int k = 0; k < 4; k++) {                                                    \
                memcpy(&m[k], a + k * W, sizeof x); m[k] = VLD(VI, m[k]);                    \
                nn |= (VI)(m[k] != m[k]);                                                    \
            }                                                                                \
            for (i = 4 * W; i + 4 * W <= n; i += 4 * W)                                      \
                for (int k = 0; k < 4; k++) {                                                \
                    memcpy(&x, a + i + k * W, sizeof x); x = VLD(VI, x);                     \
                    m[k] = LZ_VSEL(MX, VT, VI, x, m[k]);                                     \
                    nn |= (VI)(x != x);                                                      \
                }                                                                            \
            r = m[0][0];                                                                     \
            for (int k = 0; k < 4; k++)                                                      \
                for (int j = 0; j < W; j++)                                                  \
                    r = ((MX) ? m[k][j] > r : m[k][j] < r) ? m[k][j] : r;                    \
            for (int j = 0; j < W; j++) nan |= nn[j] != 0;                                   \
        }                                                                                    \
        for (; i < n; i++) { T x = LD(T, a[i]); r = ((MX) ? x > r : x < r) ? x : r; nan |= x != x; } \
        if (nan) return (double)NAN;                                                         \
        if (r == 0) {    /* the sign of a zero result: IEEE maximum/minimum */               \
            for (i = 0; i < n; i++) {                                                        \
                T x = LD(T, a[i]);                                                           \
                if (x == 0 && (!signbit(x)) == (MX)) return (double)x;                       \
            }                                                                                \
            return (MX) ? -0.0 : 0.0;                                                        \
        }                                                                                    \
        return (double)r;                                                                    \
    }
#define LZ_DEF_MINMAX_ALL(T, SUF, VT, VI, W)                                                 \
    LZ_DEF_MINMAX(lz_min_##SUF, T, VT, VI, W, LZ_PRE_ID, LZ_VPRE_ID, 0)                      \
    LZ_DEF_MINMAX(lz_max_##SUF, T, VT, VI, W, LZ_PRE_ID, LZ_VPRE_ID, 1)                      \
    LZ_DEF_MINMAX(lz_min_##SUF##_abs, T, VT, VI, W, LZ_PRE_ABS, LZ_VPRE_ABS, 0)              \
    LZ_DEF_MINMAX(lz_max_##SUF##_abs, T, VT, VI, W, LZ_PRE_ABS, LZ_VPRE_ABS, 1)              \
    LZ_DEF_MINMAX(lz_min_##SUF##_sq, T, VT, VI, W, LZ_PRE_SQ, LZ_VPRE_SQ, 0)                 \
    LZ_DEF_MINMAX(lz_max_##SUF##_sq, T, VT, VI, W, LZ_PRE_SQ, LZ_VPRE_SQ, 1)
LZ_DEF_MINMAX_ALL(npy_float, f32, lz_v4f, lz_v4i, 4)
LZ_DEF_MINMAX_ALL(npy_double, f64, lz_v2d, lz_v2l, 2)

static int lz_minmax_contig(const lz_prog *P, const char *p, npy_intp s, npy_intp n, double *out) {
    const int mx = P->red_kind == RK_MAX, pre = P->red_pre;
    if (P->red_type == RT_F32 && s == 4) {
        const npy_float *a = (const npy_float *)p;
        *out = pre == PRE_ABS ? (mx ? lz_max_f32_abs(a, n) : lz_min_f32_abs(a, n))
             : pre == PRE_SQUARE ? (mx ? lz_max_f32_sq(a, n) : lz_min_f32_sq(a, n))
             : (mx ? lz_max_f32(a, n) : lz_min_f32(a, n));
        return 1;
    }
    if (P->red_type == RT_F64 && s == 8) {
        const npy_double *a = (const npy_double *)p;
        *out = pre == PRE_ABS ? (mx ? lz_max_f64_abs(a, n) : lz_min_f64_abs(a, n))
             : pre == PRE_SQUARE ? (mx ? lz_max_f64_sq(a, n) : lz_min_f64_sq(a, n))
             : (mx ? lz_max_f64(a, n) : lz_min_f64(a, n));
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- complex reductions
 * complex64/complex128 sum, prod, min, max, argmin and argmax (mean is a sum): the parts are accumulated in
 * float64 (lazy mode's accumulation rule, complex128 arithmetic), the real parts in the
 * float partials R->pd / results R->rd, the imaginary parts in R->pm2 / R->rm2.
 *   sum   NumPy-style pairwise summation of each part (as lz_pw_*), pairwise over blocks;
 *   prod  NumPy's complex product loop (numpy/_core/src/umath/loops.c.src: the plain formula,
 *         no FMA), from its identity 1 + 0i times the first element (1 * (inf + 0i) is
 *         inf + NaN i, as NumPy's), in order within a block, then over the blocks' partials
 *         in order: one block gives NumPy's full-reduction bits;
 *   min/max  NumPy 2's order (loops.c.src CGE/CLE): lexicographic, real part first; the
 *         first element with a NaN part wins (its bits), and of equal values the first. */
static inline void lz_cmul(double *ar, double *ai, double br, double bi) {
    const double r = *ar * br - *ai * bi, i = *ar * bi + *ai * br;
    *ar = r;
    *ai = i;
}

/* whether x replaces the running extremum m (MX: maximum) */
static inline int lz_cbetter(int mx, double xr, double xi, double mr, double mi) {
    if (mr != mr || mi != mi) return 0;          /* a NaN stays (never an ordered compare) */
    if (xr != xr || xi != xi) return 1;
    return mx ? (xr > mr || (xr == mr && xi > mi)) : (xr < mr || (xr == mr && xi < mi));
}

/* Pairwise sums of the two parts of n complex values at p (byte stride s): contiguous runs
 * of 8..128 values sum all 2n floats with 16 accumulators (even ones: real parts, odd ones:
 * imaginary parts), which vectorizes; other strides sum each part with lz_pw_*. */
#define LZ_DEF_PWC(NAME, FT, PW)                                                             \
    LZ_CLONES static void NAME##_leaf(const FT *a, npy_intp n, double *re, double *im) {     \
        double r[16];                                                                        \
        npy_intp i, nn = n - (n % 8);                                                        \
        for (int k = 0; k < 16; k++) r[k] = (double)a[k];                                    \
        for (i = 8; i < nn; i += 8)                                                          \
            for (int k = 0; k < 16; k++) r[k] += (double)a[2 * i + k];                       \
        double x = ((r[0] + r[2]) + (r[4] + r[6])) + ((r[8] + r[10]) + (r[12] + r[14]));   \
        double y = ((r[1] + r[3]) + (r[5] + r[7])) + ((r[9] + r[11]) + (r[13] + r[15]));   \
        for (i = nn; i < n; i++) { x += (double)a[2 * i]; y += (double)a[2 * i + 1]; }       \
        *re = x;                                                                             \
        *im = y;                                                                             \
    }                                                                                        \
    static void NAME(const char *p, npy_intp n, npy_intp s, double *re, double *im) {        \
        if (s != 2 * (npy_intp)sizeof(FT) || n < 8) {                                        \
            *re = PW(p, n, s, 0.);                                                           \
            *im = PW(p + sizeof(FT), n, s, 0.);                                              \
        } else if (n <= 128) {                                                               \
            NAME##_leaf((const FT *)p, n, re, im);                                           \
        } else {                                                                             \
            npy_intp n2 = n / 2;                                                             \
            n2 -= n2 % 8;                                                                    \
            double r1, i1, r2, i2;                                                           \
            NAME(p, n2, s, &r1, &i1);                                                        \
            NAME(p + n2 * s, n - n2, s, &r2, &i2);                                           \
            *re = r1 + r2;                                                                   \
            *im = i1 + i2;                                                                   \
        }                                                                                    \
    }
LZ_DEF_PWC(lz_pwc_c64, npy_float, lz_pw_f32)
LZ_DEF_PWC(lz_pwc_c128, npy_double, lz_pw_f64)

#define LZ_CRE(FT, p, s, i) ((double)((const FT *)((p) + (i) * (s)))[0])
#define LZ_CIM(FT, p, s, i) ((double)((const FT *)((p) + (i) * (s)))[1])

/* Complex var: var(z) = mean |z - mean z|^2 is the real parts' var plus the imaginary parts'
 * (NumPy's definition, each part's two-pass (mean, M2) in float64, Chan-merged as the float
 * var's). The real part's (mean, M2) are in pd/pm2 (rd/rm2), the imaginary part's in the
 * int64/uint64 partial arrays pi/pu (ri/ru), which cpu_fused allocates as float64 for it and
 * which C reads only as double; the counts in pidx. */
#define LZ_CVAR_D(a) ((double *)(a))

/* MODE_RED_A: one block (n >= 1 complex values at p, stride s) into partial t */
#define LZ_RED_BLOCK_C(FT, PWC, PW, PWSQ)                                                    \
    switch (P->red_kind) {                                                                   \
    case RK_SUM: PWC(p, n, s, &R->pd[t], &R->pm2[t]); break;                                 \
    case RK_PROD: {                                                                          \
        double ar = 1., ai = 0.;                                                             \
        for (npy_intp i = 0; i < n; i++) lz_cmul(&ar, &ai, LZ_CRE(FT, p, s, i), LZ_CIM(FT, p, s, i)); \
        R->pd[t] = ar; R->pm2[t] = ai; break; }                                              \
    case RK_MIN: case RK_MAX: {                                                              \
        const int mx = P->red_kind == RK_MAX;                                                \
        double mr = LZ_CRE(FT, p, s, 0), mi = LZ_CIM(FT, p, s, 0);                           \
        for (npy_intp i = 1; i < n && mr == mr && mi == mi; i++) {                           \
            const double xr = LZ_CRE(FT, p, s, i), xi = LZ_CIM(FT, p, s, i);                 \
            if (lz_cbetter(mx, xr, xi, mr, mi)) { mr = xr; mi = xi; }                        \
        }                                                                                    \
        R->pd[t] = mr; R->pm2[t] = mi; break; }                                              \
    case RK_ARGMIN: case RK_ARGMAX: {          /* min/max's order, and the winner's index */ \
        const int mx = P->red_kind == RK_ARGMAX;                                             \
        double mr = LZ_CRE(FT, p, s, 0), mi = LZ_CIM(FT, p, s, 0);                           \
        npy_intp best = 0;                                                                   \
        for (npy_intp i = 1; i < n && mr == mr && mi == mi; i++) {                           \
            const double xr = LZ_CRE(FT, p, s, i), xi = LZ_CIM(FT, p, s, i);                 \
            if (lz_cbetter(mx, xr, xi, mr, mi)) { mr = xr; mi = xi; best = i; }              \
        }                                                                                    \
        R->pd[t] = mr; R->pm2[t] = mi; R->pidx[t] = idx0 + best; break; }                    \
    case RK_VAR: {          /* each part's (mean, M2) as the float var's; see LZ_CVAR_D */   \
        const double mr = PW(p, n, s, 0.) / (double)n;                                       \
        const double mi = PW(p + sizeof(FT), n, s, 0.) / (double)n;                          \
        R->pd[t] = mr; R->pm2[t] = PWSQ(p, n, s, mr);                                        \
        LZ_CVAR_D(R->pi)[t] = mi; LZ_CVAR_D(R->pu)[t] = PWSQ(p + sizeof(FT), n, s, mi);      \
        R->pidx[t] = n; break; }                                                             \
    default: break;                                                                          \
    }

static void lz_red_block_c(const lz_prog *P, lz_run *R, npy_intp t, const char *p, npy_intp s,
                           npy_intp n, npy_intp idx0) {
    if (P->red_type == RT_C64) { LZ_RED_BLOCK_C(npy_float, lz_pwc_c64, lz_pw_f32, lz_pwsq_f32) }
    else { LZ_RED_BLOCK_C(npy_double, lz_pwc_c128, lz_pw_f64, lz_pwsq_f64) }
}

/* MODE_RED_B: accumulate row o (n complex values at p, stride s) into the slots' partials
 * (real parts at ad, imaginary parts at am); `first`: the chunk's first row */
#define LZ_ACC_C(FT)                                                                         \
    for (npy_intp i = 0; i < n; i++) {                                                       \
        const double xr = LZ_CRE(FT, p, s, i), xi = LZ_CIM(FT, p, s, i);                     \
        if (first && kind == RK_PROD) {              /* 1 + 0i times the first (see above) */ \
            ad[i] = 1.;                                                                      \
            am[i] = 0.;                                                                      \
            lz_cmul(&ad[i], &am[i], xr, xi);                                                 \
        } else if (first) {                                                                  \
            ad[i] = kind == RK_SUM ? 0. + xr : xr;   /* (sums start from +0.0) */            \
            am[i] = kind == RK_SUM ? 0. + xi : xi;                                           \
            if (arg) ax[i] = o;                                                              \
        } else if (kind == RK_SUM) {                                                         \
            ad[i] += xr;                                                                     \
            am[i] += xi;                                                                     \
        } else if (kind == RK_PROD) {                                                        \
            lz_cmul(&ad[i], &am[i], xr, xi);                                                 \
        } else if (lz_cbetter(kind == RK_MAX || kind == RK_ARGMAX, xr, xi, ad[i], am[i])) {  \
            ad[i] = xr;                                                                      \
            am[i] = xi;                                                                      \
            if (arg) ax[i] = o;                                                              \
        }                                                                                    \
    }

/* (argmin/argmax: min/max's order, and the winner's reduce index o in ax) */
static void lz_acc_c(const lz_prog *P, double *restrict ad, double *restrict am,
                     npy_int64 *restrict ax, const char *p, npy_intp s, npy_intp n, int first,
                     npy_intp o) {
    const int kind = P->red_kind, arg = kind == RK_ARGMIN || kind == RK_ARGMAX;
    if (P->red_type == RT_C64) { LZ_ACC_C(npy_float) } else { LZ_ACC_C(npy_double) }
}

/* Combine partial b into partial a (a: the earlier elements), for the complex kinds; returns
 * whether b's value replaced a's (min/max/argmin/argmax: the caller moves the index too) */
static inline int lz_merge_c(int kind, double *ar, double *ai, double br, double bi) {
    if (kind == RK_SUM) { *ar += br; *ai += bi; }
    else if (kind == RK_PROD) lz_cmul(ar, ai, br, bi);
    else if (lz_cbetter(kind == RK_MAX || kind == RK_ARGMAX, br, bi, *ar, *ai)) {
        *ar = br; *ai = bi;
        return 1;
    }
    return 0;
}

#define LZ_IS_COMPLEX(rt) ((rt) == RT_C64 || (rt) == RT_C128)

/* Reduce one block (n values at p, stride s) into partial t; idx0 = the index of p[0]. */
#define LZ_RED_BLOCK_FLOAT(T, PW, PWSQ, LD)                                                  \
    switch (kind) {                                                                          \
    case RK_SUM: R->pd[t] = PW(p, n, s, 0.); break;                                          \
    case RK_PROD: { double r = 1.; for (npy_intp i = 0; i < n; i++)                          \
                        r *= (double)LZ_AT(T, p, s, i);                                      \
                    R->pd[t] = r; break; }           /* in float64: the accumulation rule */ \
    case RK_MIN: case RK_MAX: {                                                              \
        T m = LD(T, LZ_AT(T, p, s, 0)); int nan = 0;                                         \
        if (kind == RK_MIN) for (npy_intp i = 0; i < n; i++) { T x = LD(T, LZ_AT(T, p, s, i)); \
                m = LZ_MINOF(x, m) ? x : m; nan |= x != x; }                                 \
        else for (npy_intp i = 0; i < n; i++) { T x = LD(T, LZ_AT(T, p, s, i));              \
                m = LZ_MAXOF(x, m) ? x : m; nan |= x != x; }                                 \
        R->pd[t] = nan ? (double)NAN : (double)m; break; }                                   \
    case RK_ARGMIN: case RK_ARGMAX: {                                                        \
        T m = LZ_AT(T, p, s, 0); npy_intp best = 0;                                          \
        if (m == m) for (npy_intp i = 1; i < n; i++) { T x = LZ_AT(T, p, s, i);              \
            if (x != x) { m = x; best = i; break; }                                          \
            if (kind == RK_ARGMIN ? x < m : x > m) { m = x; best = i; } }                    \
        R->pd[t] = (double)m; R->pidx[t] = idx0 + best; break; }                             \
    case RK_VAR: { double mean = PW(p, n, s, 0.) / (double)n;                                \
        R->pd[t] = mean; R->pm2[t] = PWSQ(p, n, s, mean); R->pidx[t] = n; break; }            \
    default: break;                                                                          \
    }

#define LZ_RED_BLOCK_INT(T, ACC, FIELD)                                                      \
    switch (kind) {                                                                          \
    case RK_SUM: { npy_uint64 r = 0; for (npy_intp i = 0; i < n; i++)                        \
        r += (npy_uint64)LZ_AT(T, p, s, i); R->pu[t] = r; break; }                           \
    case RK_PROD: { npy_uint64 r = 1; for (npy_intp i = 0; i < n; i++)                       \
        r *= (npy_uint64)LZ_AT(T, p, s, i); R->pu[t] = r; break; }                           \
    case RK_MIN: { T m = LZ_AT(T, p, s, 0); for (npy_intp i = 0; i < n; i++) {               \
        T x = LZ_AT(T, p, s, i); m = x < m ? x : m; } R->FIELD[t] = (ACC)m; break; }         \
    case RK_MAX: { T m = LZ_AT(T, p, s, 0); for (npy_intp i = 0; i < n; i++) {               \
        T x = LZ_AT(T, p, s, i); m = x > m ? x : m; } R->FIELD[t] = (ACC)m; break; }         \
    case RK_ANY: { npy_uint64 r = 0; for (npy_intp i = 0; i < n; i++)                        \
        r |= LZ_AT(T, p, s, i) != 0; R->pu[t] = r; break; }                                  \
    case RK_ALL: { npy_uint64 r = 1; for (npy_intp i = 0; i < n; i++)                        \
        r &= LZ_AT(T, p, s, i) != 0; R->pu[t] = r; break; }                                  \
    case RK_ARGMIN: case RK_ARGMAX: {                                                        \
        T m = LZ_AT(T, p, s, 0); npy_intp best = 0;                                          \
        for (npy_intp i = 1; i < n; i++) { T x = LZ_AT(T, p, s, i);                          \
            if (kind == RK_ARGMIN ? x < m : x > m) { m = x; best = i; } }                    \
        R->FIELD[t] = (ACC)m; R->pidx[t] = idx0 + best; break; }                             \
    default: break;                                                                          \
    }

static void lz_red_block(const lz_prog *P, lz_run *R, npy_intp t, const char *p, npy_intp s,
                         npy_intp n, npy_intp idx0) {
    const int kind = P->red_kind;
    if (LZ_IS_COMPLEX(P->red_type)) {
        lz_red_block_c(P, R, t, p, s, n, idx0);
        return;
    }
    if ((kind == RK_MIN || kind == RK_MAX) && lz_minmax_contig(P, p, s, n, &R->pd[t])) return;
    if ((kind == RK_ARGMIN || kind == RK_ARGMAX) && P->red_pre == PRE_NONE) {
        /* vectorized min/max first, then the first element equal to it (or the first NaN) */
        double m;
        lz_prog Q = *P;
        Q.red_kind = kind == RK_ARGMIN ? RK_MIN : RK_MAX;
        if (lz_minmax_contig(&Q, p, s, n, &m)) {
            npy_intp i = 0;
            if (P->red_type == RT_F32) {
                const npy_float *a = (const npy_float *)p;
                if (m != m) while (a[i] == a[i]) i++;
                else while ((double)a[i] != m) i++;
            } else {
                const npy_double *a = (const npy_double *)p;
                if (m != m) while (a[i] == a[i]) i++;
                else while (a[i] != m) i++;
            }
            R->pd[t] = m;
            R->pidx[t] = idx0 + i;
            return;
        }
    }
    /* each kernel twice: with the stride a compile-time constant (contiguous data, so the
     * compiler vectorizes) and general */
#define LZ_CONTIG(T, BODY) if (s == (npy_intp)sizeof(T)) { const npy_intp s = sizeof(T); BODY } else { BODY }
    switch (P->red_type) {
#define LZ_RB_F(T, PW, PWSQ, LD) LZ_CONTIG(T, LZ_RED_BLOCK_FLOAT(T, PW, PWSQ, LD))
    case RT_F32:
        if (P->red_pre == PRE_ABS) { LZ_RB_F(npy_float, lz_pw_f32_abs, lz_pwsq_f32, LZ_PRE_ABS) }
        else if (P->red_pre == PRE_SQUARE) { LZ_RB_F(npy_float, lz_pw_f32_sq, lz_pwsq_f32, LZ_PRE_SQ) }
        else { LZ_RB_F(npy_float, lz_pw_f32, lz_pwsq_f32, LZ_PRE_ID) }
        break;
    case RT_F64:
        if (P->red_pre == PRE_ABS) { LZ_RB_F(npy_double, lz_pw_f64_abs, lz_pwsq_f64, LZ_PRE_ABS) }
        else if (P->red_pre == PRE_SQUARE) { LZ_RB_F(npy_double, lz_pw_f64_sq, lz_pwsq_f64, LZ_PRE_SQ) }
        else { LZ_RB_F(npy_double, lz_pw_f64, lz_pwsq_f64, LZ_PRE_ID) }
        break;
    case RT_I64: LZ_CONTIG(npy_int64, LZ_RED_BLOCK_INT(npy_int64, npy_int64, pi)) break;
    case RT_U64: LZ_CONTIG(npy_uint64, LZ_RED_BLOCK_INT(npy_uint64, npy_uint64, pu)) break;
    default: LZ_CONTIG(npy_uint8, LZ_RED_BLOCK_INT(npy_uint8, npy_uint64, pu)) break;
    }
}

/* Chan et al.'s pairwise combination of (count, mean, M2) partials (stride sb) */
static void lz_var_combine(const double *mean, const double *m2, const npy_int64 *cnt, npy_intp n,
                           npy_intp sb, double *omean, double *om2, double *ocnt) {
    if (n == 1) {
        *omean = mean[0]; *om2 = m2[0]; *ocnt = (double)cnt[0];
        return;
    }
    npy_intp h = n / 2;
    double ma, mb, qa, qb, na, nb;
    lz_var_combine(mean, m2, cnt, h, sb, &ma, &qa, &na);
    lz_var_combine(mean + h * sb, m2 + h * sb, cnt + h * sb, n - h, sb, &mb, &qb, &nb);
    double nn = na + nb, delta = mb - ma;
    *ocnt = nn;
    *omean = ma + delta * (nb / nn);
    *om2 = qa + qb + delta * delta * (na * nb / nn);
}

/* Combine the np partials of slot o (at b0, b0 + sb, ...) into result o, in order. */
static void lz_combine_slot(const lz_prog *P, lz_run *R, npy_intp o, npy_intp b0, npy_intp np_,
                            npy_intp sb) {
    const int kind = P->red_kind, rt = P->red_type;
    const int fl = rt == RT_F32 || rt == RT_F64;
    const npy_intp end = b0 + np_ * sb;
    if (LZ_IS_COMPLEX(rt)) {
        if (kind == RK_VAR) {       /* each part as the float var's */
            double cnt;
            lz_var_combine(R->pd + b0, R->pm2 + b0, R->pidx + b0, np_, sb, &R->rd[o], &R->rm2[o], &cnt);
            lz_var_combine(LZ_CVAR_D(R->pi) + b0, LZ_CVAR_D(R->pu) + b0, R->pidx + b0, np_, sb,
                           &LZ_CVAR_D(R->ri)[o], &LZ_CVAR_D(R->ru)[o], &cnt);
            return;
        }
        if (kind == RK_SUM) {       /* pairwise over the blocks, as the float sums */
            R->rd[o] = lz_pw_d(R->pd + b0, np_, sb);
            R->rm2[o] = lz_pw_d(R->pm2 + b0, np_, sb);
            return;
        }
        double ar = R->pd[b0], ai = R->pm2[b0];
        npy_intp best = b0;
        for (npy_intp b = b0 + sb; b < end; b += sb)
            if (lz_merge_c(kind, &ar, &ai, R->pd[b], R->pm2[b])) best = b;
        R->rd[o] = ar;
        R->rm2[o] = ai;
        if (kind == RK_ARGMIN || kind == RK_ARGMAX) R->ridx[o] = R->pidx[best];
        return;
    }
    switch (kind) {
    case RK_SUM:
        if (fl) R->rd[o] = lz_pw_d(R->pd + b0, np_, sb);
        else { npy_uint64 r = 0; for (npy_intp b = b0; b < end; b += sb) r += R->pu[b]; R->ru[o] = r; }
        break;
    case RK_PROD:
        if (fl) { double r = 1.; for (npy_intp b = b0; b < end; b += sb) r *= R->pd[b]; R->rd[o] = r; }
        else { npy_uint64 r = 1; for (npy_intp b = b0; b < end; b += sb) r *= R->pu[b]; R->ru[o] = r; }
        break;
    case RK_ANY: { npy_uint64 r = 0; for (npy_intp b = b0; b < end; b += sb) r |= R->pu[b];
                   R->ru[o] = r; break; }
    case RK_ALL: { npy_uint64 r = 1; for (npy_intp b = b0; b < end; b += sb) r &= R->pu[b];
                   R->ru[o] = r; break; }
    case RK_MIN: case RK_MAX: {
        const int mn = kind == RK_MIN;
        if (fl) {
            double m = R->pd[b0];
            for (npy_intp b = b0 + sb; b < end && m == m; b += sb) {
                double x = R->pd[b];
                if (x != x || (mn ? LZ_MINOF(x, m) : LZ_MAXOF(x, m))) m = x;
            }
            R->rd[o] = m;
        } else if (rt == RT_I64) {
            npy_int64 m = R->pi[b0];
            for (npy_intp b = b0 + sb; b < end; b += sb) { npy_int64 x = R->pi[b]; if (mn ? x < m : x > m) m = x; }
            R->ri[o] = m;
        } else {
            npy_uint64 m = R->pu[b0];
            for (npy_intp b = b0 + sb; b < end; b += sb) { npy_uint64 x = R->pu[b]; if (mn ? x < m : x > m) m = x; }
            R->ru[o] = m;
        }
        break; }
    case RK_ARGMIN: case RK_ARGMAX: {
        const int mn = kind == RK_ARGMIN;
        npy_intp best = b0;
        for (npy_intp b = b0 + sb; b < end; b += sb) {
            int better;
            if (fl) {
                double m = R->pd[best], x = R->pd[b];
                if (m != m) break;
                better = x != x || (mn ? x < m : x > m);
            } else if (rt == RT_I64) {
                better = mn ? R->pi[b] < R->pi[best] : R->pi[b] > R->pi[best];
            } else {
                better = mn ? R->pu[b] < R->pu[best] : R->pu[b] > R->pu[best];
            }
            if (better) best = b;
        }
        R->ridx[o] = R->pidx[best];
        break; }
    case RK_VAR: {
        double mean, m2, cnt;
        lz_var_combine(R->pd + b0, R->pm2 + b0, R->pidx + b0, np_, sb, &mean, &m2, &cnt);
        R->rd[o] = mean;
        R->rm2[o] = m2;
        break; }
    default: break;
    }
}

/* MODE_RED_B: merge partial row b (later rows) into row a (earlier rows), elementwise. */
static void lz_merge_row(const lz_prog *P, lz_run *R, npy_intp a, npy_intp b, npy_intp M) {
    const int kind = P->red_kind, rt = P->red_type;
    const int fl = rt == RT_F32 || rt == RT_F64;
    double *d = R->pd;
    npy_int64 *si = R->pi, *ix = R->pidx;
    npy_uint64 *u = R->pu;
    if (LZ_IS_COMPLEX(rt)) {
        const int arg = kind == RK_ARGMIN || kind == RK_ARGMAX;
        if (kind == RK_VAR) {       /* each part as the float var's, one count */
            double *di = LZ_CVAR_D(R->pi), *qi = LZ_CVAR_D(R->pu);
            for (npy_intp i = 0; i < M; i++) {
                double na = (double)ix[a + i], nb = (double)ix[b + i], nn = na + nb, f = nb / nn;
                double dr = d[b + i] - d[a + i], dq = di[b + i] - di[a + i];
                d[a + i] += dr * f;
                R->pm2[a + i] += R->pm2[b + i] + dr * dr * (na * nb / nn);
                di[a + i] += dq * f;
                qi[a + i] += qi[b + i] + dq * dq * (na * nb / nn);
                ix[a + i] += ix[b + i];
            }
            return;
        }
        for (npy_intp i = 0; i < M; i++)
            if (lz_merge_c(kind, &d[a + i], &R->pm2[a + i], d[b + i], R->pm2[b + i]) && arg)
                ix[a + i] = ix[b + i];
        return;
    }
    switch (kind) {
    case RK_SUM:
        if (fl) for (npy_intp i = 0; i < M; i++) d[a + i] += d[b + i];
        else for (npy_intp i = 0; i < M; i++) u[a + i] += u[b + i];
        break;
    case RK_PROD:
        if (fl) for (npy_intp i = 0; i < M; i++) d[a + i] *= d[b + i];
        else for (npy_intp i = 0; i < M; i++) u[a + i] *= u[b + i];
        break;
    case RK_ANY: for (npy_intp i = 0; i < M; i++) u[a + i] |= u[b + i]; break;
    case RK_ALL: for (npy_intp i = 0; i < M; i++) u[a + i] &= u[b + i]; break;
    case RK_MIN: case RK_MAX: {
        const int mn = kind == RK_MIN;
        if (fl) for (npy_intp i = 0; i < M; i++) {
            double m = d[a + i], x = d[b + i];
            if (m == m && (x != x || (mn ? LZ_MINOF(x, m) : LZ_MAXOF(x, m)))) d[a + i] = x;
        } else if (rt == RT_I64) for (npy_intp i = 0; i < M; i++) {
            npy_int64 x = si[b + i];
            if (mn ? x < si[a + i] : x > si[a + i]) si[a + i] = x;
        } else for (npy_intp i = 0; i < M; i++) {
            npy_uint64 x = u[b + i];
            if (mn ? x < u[a + i] : x > u[a + i]) u[a + i] = x;
        }
        break; }
    case RK_ARGMIN: case RK_ARGMAX: {
        const int mn = kind == RK_ARGMIN;
        for (npy_intp i = 0; i < M; i++) {
            int better;
            if (fl) {
                double m = d[a + i], x = d[b + i];
                better = m == m && (x != x || (mn ? x < m : x > m));
                if (better) d[a + i] = x;
            } else if (rt == RT_I64) {
                better = mn ? si[b + i] < si[a + i] : si[b + i] > si[a + i];
                if (better) si[a + i] = si[b + i];
            } else {
                better = mn ? u[b + i] < u[a + i] : u[b + i] > u[a + i];
                if (better) u[a + i] = u[b + i];
            }
            if (better) ix[a + i] = ix[b + i];
        }
        break; }
    case RK_VAR:
        for (npy_intp i = 0; i < M; i++) {
            double na = (double)ix[a + i], nb = (double)ix[b + i], nn = na + nb;
            double delta = d[b + i] - d[a + i];
            d[a + i] += delta * (nb / nn);
            R->pm2[a + i] += R->pm2[b + i] + delta * delta * (na * nb / nn);
            ix[a + i] += ix[b + i];
        }
        break;
    default: break;
    }
}

/* MODE_RED_B: combine the chunk rows pairwise (a fixed tree), then row 0 -> results. */
static void lz_combine_rows(const lz_prog *P, lz_run *R) {
    const npy_intp M = R->Isz, nc = R->nchunk;
    for (npy_intp h = 1; h < nc; h *= 2)
        for (npy_intp c = 0; c + h < nc; c += 2 * h) lz_merge_row(P, R, c * M, (c + h) * M, M);
    if (R->rd) memcpy(R->rd, R->pd, M * sizeof(double));
    if (R->rm2) memcpy(R->rm2, R->pm2, M * sizeof(double));
    if (R->ri) memcpy(R->ri, R->pi, M * sizeof(npy_int64));
    if (R->ridx) memcpy(R->ridx, R->pidx, M * sizeof(npy_int64));
    if (R->ru) memcpy(R->ru, R->pu, M * sizeof(npy_uint64));
}

/* MODE_RED_B: accumulate the block (slots j0..j0+n) of reduce index o. */
#define LZ_ACC_FLOAT(T, LD)                                                                  \
    switch (kind) {                                                                          \
    case RK_SUM: if (first) for (npy_intp i = 0; i < n; i++) ad[i] = 0. + LD(T, LZ_AT(T, p, s, i)); \
                 else for (npy_intp i = 0; i < n; i++) ad[i] += LD(T, LZ_AT(T, p, s, i)); break; \
    case RK_PROD: if (first) for (npy_intp i = 0; i < n; i++) ad[i] = LZ_AT(T, p, s, i);      \
                  else for (npy_intp i = 0; i < n; i++) ad[i] *= (double)LZ_AT(T, p, s, i); break; \
    case RK_MIN: if (first) for (npy_intp i = 0; i < n; i++) ad[i] = LD(T, LZ_AT(T, p, s, i)); \
        else for (npy_intp i = 0; i < n; i++) { double x = LD(T, LZ_AT(T, p, s, i)), a = ad[i]; \
            ad[i] = (LZ_MINOF(x, a) || x != x) ? x : a; } break;                             \
    case RK_MAX: if (first) for (npy_intp i = 0; i < n; i++) ad[i] = LD(T, LZ_AT(T, p, s, i)); \
        else for (npy_intp i = 0; i < n; i++) { double x = LD(T, LZ_AT(T, p, s, i)), a = ad[i]; \
            ad[i] = (LZ_MAXOF(x, a) || x != x) ? x : a; } break;                             \
    case RK_ARGMIN: case RK_ARGMAX: {                                                        \
        const int mn = kind == RK_ARGMIN;                                                    \
        if (first) for (npy_intp i = 0; i < n; i++) { ad[i] = LZ_AT(T, p, s, i); ax[i] = o; } \
        else for (npy_intp i = 0; i < n; i++) { double x = LZ_AT(T, p, s, i), a = ad[i];      \
            if (a == a && (x != x || (mn ? x < a : x > a))) { ad[i] = x; ax[i] = o; } }       \
        break; }                                                                             \
    default: break;  /* RK_VAR: lz_var_rows */                                               \
    }

#define LZ_ACC_INT(T, ACC, A)                                                                \
    switch (kind) {                                                                          \
    case RK_SUM: if (first) for (npy_intp i = 0; i < n; i++) au[i] = (npy_uint64)LZ_AT(T, p, s, i); \
        else for (npy_intp i = 0; i < n; i++) au[i] += (npy_uint64)LZ_AT(T, p, s, i); break;  \
    case RK_PROD: if (first) for (npy_intp i = 0; i < n; i++) au[i] = (npy_uint64)LZ_AT(T, p, s, i); \
        else for (npy_intp i = 0; i < n; i++) au[i] *= (npy_uint64)LZ_AT(T, p, s, i); break;  \
    case RK_ANY: if (first) for (npy_intp i = 0; i < n; i++) au[i] = LZ_AT(T, p, s, i) != 0; \
        else for (npy_intp i = 0; i < n; i++) au[i] |= LZ_AT(T, p, s, i) != 0; break;         \
    case RK_ALL: if (first) for (npy_intp i = 0; i < n; i++) au[i] = LZ_AT(T, p, s, i) != 0; \
        else for (npy_intp i = 0; i < n; i++) au[i] &= LZ_AT(T, p, s, i) != 0; break;         \
    case RK_MIN: if (first) for (npy_intp i = 0; i < n; i++) A[i] = (ACC)LZ_AT(T, p, s, i);   \
        else for (npy_intp i = 0; i < n; i++) { ACC x = (ACC)LZ_AT(T, p, s, i);               \
            A[i] = x < A[i] ? x : A[i]; } break;                                             \
    case RK_MAX: if (first) for (npy_intp i = 0; i < n; i++) A[i] = (ACC)LZ_AT(T, p, s, i);   \
        else for (npy_intp i = 0; i < n; i++) { ACC x = (ACC)LZ_AT(T, p, s, i);               \
            A[i] = x > A[i] ? x : A[i]; } break;                                             \
    case RK_ARGMIN: case RK_ARGMAX: {                                                        \
        const int mn = kind == RK_ARGMIN;                                                    \
        if (first) for (npy_intp i = 0; i < n; i++) { A[i] = (ACC)LZ_AT(T, p, s, i); ax[i] = o; } \
        else for (npy_intp i = 0; i < n; i++) { ACC x = (ACC)LZ_AT(T, p, s, i);               \
            if (mn ? x < A[i] : x > A[i]) { A[i] = x; ax[i] = o; } }                          \
        break; }                                                                             \
    default: break;                                                                          \
    }

/* Row accumulation for sums on contiguous blocks, separately compiled for AVX2 */
#define LZ_DEF_ACCSUM(NAME, T, LD)                                                           \
    LZ_CLONES static void NAME(double *restrict ad, const T *restrict x, npy_intp n, int first) { \
        if (first) for (npy_intp i = 0; i < n; i++) ad[i] = 0. + (double)LD(T, x[i]);        \
        else for (npy_intp i = 0; i < n; i++) ad[i] += (double)LD(T, x[i]);                  \
    }
/* DEF(STEM_<type>[_abs|_sq], T, folded op) for the two float types and the three folds */
#define LZ_DEF_FLOAT_FOLDS(DEF, STEM)                                                        \
    DEF(STEM##_f32, npy_float, LZ_PRE_ID) DEF(STEM##_f32_abs, npy_float, LZ_PRE_ABS)          \
    DEF(STEM##_f32_sq, npy_float, LZ_PRE_SQ) DEF(STEM##_f64, npy_double, LZ_PRE_ID)          \
    DEF(STEM##_f64_abs, npy_double, LZ_PRE_ABS) DEF(STEM##_f64_sq, npy_double, LZ_PRE_SQ)
LZ_DEF_FLOAT_FOLDS(LZ_DEF_ACCSUM, lz_accsum)

/* Row accumulation for min/max on contiguous blocks (vector compare + select, NaN sticks). */
#define LZ_DEF_ACCMM(NAME, T, LD, MX)                                                        \
    LZ_CLONES static void NAME(double *restrict ad, const T *restrict x, npy_intp n, int first) { \
        npy_intp i = 0;                                                                      \
        if (first) { for (; i < n; i++) ad[i] = (double)LD(T, x[i]); return; }               \
        for (; i + 2 <= n; i += 2) {                                                         \
            lz_v2d a, v = {(double)LD(T, x[i]), (double)LD(T, x[i + 1])};                    \
            memcpy(&a, ad + i, sizeof a);                                                    \
            lz_v2l k = (lz_v2l)(v != v);                  /* a NaN sticks */                 \
            a = LZ_VBEST(MX, lz_v2d, lz_v2l, v, a);                                          \
            a = (lz_v2d)((k & (lz_v2l)v) | (~k & (lz_v2l)a));                                \
            memcpy(ad + i, &a, sizeof a);                                                    \
        }                                                                                    \
        for (; i < n; i++) { double v = (double)LD(T, x[i]), a = ad[i];                      \
                             ad[i] = (LZ_BETTER(MX, v, a) || v != v) ? v : a; }              \
    }
#define LZ_DEF_ACCMM_ALL(T, SUF)                                                             \
    LZ_DEF_ACCMM(lz_accmin_##SUF, T, LZ_PRE_ID, 0) LZ_DEF_ACCMM(lz_accmax_##SUF, T, LZ_PRE_ID, 1) \
    LZ_DEF_ACCMM(lz_accmin_##SUF##_abs, T, LZ_PRE_ABS, 0)                                    \
    LZ_DEF_ACCMM(lz_accmax_##SUF##_abs, T, LZ_PRE_ABS, 1)                                    \
    LZ_DEF_ACCMM(lz_accmin_##SUF##_sq, T, LZ_PRE_SQ, 0)                                      \
    LZ_DEF_ACCMM(lz_accmax_##SUF##_sq, T, LZ_PRE_SQ, 1)
LZ_DEF_ACCMM_ALL(npy_float, f32)
LZ_DEF_ACCMM_ALL(npy_double, f64)

/* Eight rows at once: one read-modify-write of the partials per eight rows (the partials'
 * traffic, not the input's, bounded the four-row pass: docs/notes/cpu.rst, "Column sums at
 * the read ceiling"). Each slot adds ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)). */
#define LZ_DEF_ACCSUM8(NAME, T, LD)                                                          \
    LZ_CLONES static void NAME(double *restrict ad, char *const *x, npy_intp n, int first) { \
        const T *restrict x0 = (const T *)x[0], *restrict x1 = (const T *)x[1];              \
        const T *restrict x2 = (const T *)x[2], *restrict x3 = (const T *)x[3];              \
        const T *restrict x4 = (const T *)x[4], *restrict x5 = (const T *)x[5];              \
        const T *restrict x6 = (const T *)x[6], *restrict x7 = (const T *)x[7];              \
        if (first) for (npy_intp i = 0; i < n; i++)                                          \
            ad[i] = 0. + ((((double)LD(T, x0[i]) + (double)LD(T, x1[i])) +                   \
                           ((double)LD(T, x2[i]) + (double)LD(T, x3[i]))) +                  \
                          (((double)LD(T, x4[i]) + (double)LD(T, x5[i])) +                   \
                           ((double)LD(T, x6[i]) + (double)LD(T, x7[i]))));                  \
        else for (npy_intp i = 0; i < n; i++)                                                \
            ad[i] += (((double)LD(T, x0[i]) + (double)LD(T, x1[i])) +                        \
                      ((double)LD(T, x2[i]) + (double)LD(T, x3[i]))) +                       \
                     (((double)LD(T, x4[i]) + (double)LD(T, x5[i])) +                        \
                      ((double)LD(T, x6[i]) + (double)LD(T, x7[i])));                        \
    }
LZ_DEF_FLOAT_FOLDS(LZ_DEF_ACCSUM8, lz_accsum8)

/* Products the same way: each slot multiplied by x0, ..., x7 in turn, the order of eight
 * passes of lz_red_acc (the same bits), in one read-modify-write of the partials (a column
 * product of 4096² float32 ran at 0.6x NumPy's one row at a time: docs/notes/cpu.rst) */
#define LZ_DEF_ACCPROD8(NAME, T)                                                             \
    LZ_CLONES static void NAME(double *restrict ad, char *const *x, npy_intp n, int first) { \
        const T *restrict x0 = (const T *)x[0], *restrict x1 = (const T *)x[1];              \
        const T *restrict x2 = (const T *)x[2], *restrict x3 = (const T *)x[3];              \
        const T *restrict x4 = (const T *)x[4], *restrict x5 = (const T *)x[5];              \
        const T *restrict x6 = (const T *)x[6], *restrict x7 = (const T *)x[7];              \
        for (npy_intp i = 0; i < n; i++) {                                                   \
            double a = first ? (double)x0[i] : ad[i] * (double)x0[i];                        \
            a *= (double)x1[i]; a *= (double)x2[i]; a *= (double)x3[i];                      \
            a *= (double)x4[i]; a *= (double)x5[i]; a *= (double)x6[i]; a *= (double)x7[i];  \
            ad[i] = a;                                                                       \
        }                                                                                    \
    }
LZ_DEF_ACCPROD8(lz_accprod8_f32, npy_float)
LZ_DEF_ACCPROD8(lz_accprod8_f64, npy_double)

static void lz_acc8(const lz_prog *P, double *ad, char *const *x, npy_intp n, int first) {
    if (P->red_kind == RK_PROD) {
        if (P->red_type == RT_F32) lz_accprod8_f32(ad, x, n, first);
        else lz_accprod8_f64(ad, x, n, first);
        return;
    }
    if (P->red_type == RT_F32) {
        if (P->red_pre == PRE_ABS) lz_accsum8_f32_abs(ad, x, n, first);
        else if (P->red_pre == PRE_SQUARE) lz_accsum8_f32_sq(ad, x, n, first);
        else lz_accsum8_f32(ad, x, n, first);
    } else {
        if (P->red_pre == PRE_ABS) lz_accsum8_f64_abs(ad, x, n, first);
        else if (P->red_pre == PRE_SQUARE) lz_accsum8_f64_sq(ad, x, n, first);
        else lz_accsum8_f64(ad, x, n, first);
    }
}

/* Accumulate row o of a chunk whose first row is o0 into the partials at j0. */
static void lz_red_acc(const lz_prog *P, lz_run *R, npy_intp j0, const char *restrict p, npy_intp s,
                       npy_intp n, npy_intp o, npy_intp o0) {
    const int kind = P->red_kind, first = o == o0;
    /* restrict: the partials never alias the block (lets the compiler vectorize) */
    double *restrict ad = R->pd + j0;
    npy_int64 *restrict ai = R->pi + j0;
    npy_int64 *restrict ax = R->pidx + j0;
    npy_uint64 *restrict au = R->pu + j0;
    if (LZ_IS_COMPLEX(P->red_type)) {
        lz_acc_c(P, ad, R->pm2 + j0, ax, p, s, n, first, o);
        return;
    }
    if (kind == RK_SUM && P->red_type == RT_F32 && s == 4) {
        const npy_float *x = (const npy_float *)p;
        if (P->red_pre == PRE_ABS) lz_accsum_f32_abs(ad, x, n, first);
        else if (P->red_pre == PRE_SQUARE) lz_accsum_f32_sq(ad, x, n, first);
        else lz_accsum_f32(ad, x, n, first);
        return;
    }
    if ((kind == RK_MIN || kind == RK_MAX) && P->red_type == RT_F32 && s == 4) {
        const npy_float *x = (const npy_float *)p;
        const int mx = kind == RK_MAX, pre = P->red_pre;
        if (pre == PRE_ABS) (mx ? lz_accmax_f32_abs : lz_accmin_f32_abs)(ad, x, n, first);
        else if (pre == PRE_SQUARE) (mx ? lz_accmax_f32_sq : lz_accmin_f32_sq)(ad, x, n, first);
        else (mx ? lz_accmax_f32 : lz_accmin_f32)(ad, x, n, first);
        return;
    }
    if ((kind == RK_MIN || kind == RK_MAX) && P->red_type == RT_F64 && s == 8) {
        const npy_double *x = (const npy_double *)p;
        const int mx = kind == RK_MAX, pre = P->red_pre;
        if (pre == PRE_ABS) (mx ? lz_accmax_f64_abs : lz_accmin_f64_abs)(ad, x, n, first);
        else if (pre == PRE_SQUARE) (mx ? lz_accmax_f64_sq : lz_accmin_f64_sq)(ad, x, n, first);
        else (mx ? lz_accmax_f64 : lz_accmin_f64)(ad, x, n, first);
        return;
    }
    if (kind == RK_SUM && P->red_type == RT_F64 && s == 8) {
        const npy_double *x = (const npy_double *)p;
        if (P->red_pre == PRE_ABS) lz_accsum_f64_abs(ad, x, n, first);
        else if (P->red_pre == PRE_SQUARE) lz_accsum_f64_sq(ad, x, n, first);
        else lz_accsum_f64(ad, x, n, first);
        return;
    }
    switch (P->red_type) {
    case RT_F32:
        if (P->red_pre == PRE_ABS) { LZ_CONTIG(npy_float, LZ_ACC_FLOAT(npy_float, LZ_PRE_ABS)) }
        else if (P->red_pre == PRE_SQUARE) { LZ_CONTIG(npy_float, LZ_ACC_FLOAT(npy_float, LZ_PRE_SQ)) }
        else { LZ_CONTIG(npy_float, LZ_ACC_FLOAT(npy_float, LZ_PRE_ID)) }
        break;
    case RT_F64:
        if (P->red_pre == PRE_ABS) { LZ_CONTIG(npy_double, LZ_ACC_FLOAT(npy_double, LZ_PRE_ABS)) }
        else if (P->red_pre == PRE_SQUARE) { LZ_CONTIG(npy_double, LZ_ACC_FLOAT(npy_double, LZ_PRE_SQ)) }
        else { LZ_CONTIG(npy_double, LZ_ACC_FLOAT(npy_double, LZ_PRE_ID)) }
        break;
    case RT_I64: LZ_CONTIG(npy_int64, LZ_ACC_INT(npy_int64, npy_int64, ai)) break;
    case RT_U64: LZ_CONTIG(npy_uint64, LZ_ACC_INT(npy_uint64, npy_uint64, au)) break;
    default: LZ_CONTIG(npy_uint8, LZ_ACC_INT(npy_uint8, npy_uint64, au)) break;
    }
}

/* MODE_RED_B var/std of the chunk's rows o0..o1 (slots j0..j0+n): two passes, the program
 * runs twice over the rows. Pass 0 sums each slot (float64) into its mean, pass 1 sums the
 * squared deviations from that mean: NumPy's two-pass method. (A one-pass Welford update
 * loses digits when the mean is large next to the spread: var of 1e9 + {-2, -1, -1} was
 * 3e-8 off.) The chunks' (mean, M2) pairs are merged with Chan's formula, as the blocks'
 * of MODE_RED_A. */
#define LZ_VAR_PASS(T)                                                                       \
    for (npy_intp i = 0; i < m; i++) {                                                       \
        const double x = (double)LZ_AT(T, p, s, i);                                          \
        if (pass == 0) d[i] = first ? x : d[i] + x;                                          \
        else { const double e = x - d[i]; q[i] = first ? e * e : q[i] + e * e; }             \
    }

static int lz_var_rows(const lz_prog *P, lz_run *R, lz_scratch *S, npy_intp c, npy_intp j0,
                       npy_intp n, npy_intp o0, npy_intp o1) {
    const npy_intp B = P->B, base = c * R->Isz;
    const int rv = P->result_val;
    for (int pass = 0; pass < 2; pass++) {
        for (npy_intp o = o0; o < o1; o++) {
            const int first = o == o0;
            for (npy_intp j = j0; j < j0 + n; j += B) {
                const npy_intp m = j0 + n - j < B ? j0 + n - j : B;
                if (lz_exec_block(P, R, S, o, j, m, NULL) < 0) return -1;
                const char *p = S->vptr[rv];
                const npy_intp s = S->vstr[rv];
                double *restrict d = R->pd + base + j, *restrict q = R->pm2 + base + j;
                if (P->red_type == RT_F32) { LZ_VAR_PASS(npy_float) }
                else if (P->red_type == RT_F64) { LZ_VAR_PASS(npy_double) }
                else {              /* complex: each part (LZ_CVAR_D) */
                    const int c64 = P->red_type == RT_C64;
                    if (c64) { LZ_VAR_PASS(npy_float) } else { LZ_VAR_PASS(npy_double) }
                    p += c64 ? sizeof(npy_float) : sizeof(npy_double);
                    d = LZ_CVAR_D(R->pi) + base + j;
                    q = LZ_CVAR_D(R->pu) + base + j;
                    if (c64) { LZ_VAR_PASS(npy_float) } else { LZ_VAR_PASS(npy_double) }
                }
            }
        }
        if (pass == 0)
            for (npy_intp i = base + j0; i < base + j0 + n; i++) {
                R->pd[i] /= (double)(o1 - o0);
                if (LZ_IS_COMPLEX(P->red_type)) LZ_CVAR_D(R->pi)[i] /= (double)(o1 - o0);
                R->pidx[i] = o1 - o0;
            }
    }
    return 0;
}

/* ---------------------------------------------------------------- the driver */
/* ---------------------------------------------------------------- write-back
 * ``x[key] = value`` where the value reads x's memory (u[1:-1, 1:-1] = f(u[:-2, 1:-1], ...)):
 * the kernel writes the target itself, in one pass, and every read still sees the old values
 * (NumPy computes the whole value first). Work item t is the chunk of rows [a, b) of dim 0:
 * its values are computed whole into the thread's stage, then copied into the target. A row's
 * write may be read only by the rows up to wb_back before it and wb_fwd after it (cpu_fused
 * proves these bounds from the rows' byte extents), so the rows [a + wb_back, b - wb_fwd) are
 * read by this chunk alone, which is done reading: they are written at once. The edge rows,
 * which a neighbouring chunk may still read, wait in wb_side until every chunk is done
 * (lz_write_edges). */
static void lz_chunk_rows(const lz_run *R, npy_intp t, npy_intp *a, npy_intp *b, npy_intp *lo,
                          npy_intp *hi) {
    *a = t * R->wb_chunk;
    *b = *a + R->wb_chunk < R->wb_rows ? *a + R->wb_chunk : R->wb_rows;
    *lo = *a + R->wb_back < *b ? *a + R->wb_back : *b;
    *hi = *b - R->wb_fwd > *lo ? *b - R->wb_fwd : *lo;
}

static int lz_do_chunk(const lz_prog *P, lz_run *R, lz_scratch *S, npy_intp t) {
    const npy_intp B = P->B, osz = P->instr[P->ninstr - 1].osize, rs = R->wb_rowsize;
    const npy_intp rb = rs * osz, nedge = R->wb_back + R->wb_fwd;
    npy_intp a, b, lo, hi;
    lz_chunk_rows(R, t, &a, &b, &lo, &hi);
    char *stage = S->wbuf;
    if (R->Osz > 1) {
        /* the rows are outer indices (cpu_fused made dim 0 and up outer): each of a row's
         * outer indices runs the inner dims in blocks */
        const npy_intp per = R->Osz / R->wb_rows;
        for (npy_intp o = a * per; o < b * per; o++)
            for (npy_intp j = 0; j < R->Isz; j += B) {
                npy_intp n = R->Isz - j < B ? R->Isz - j : B;
                if (lz_exec_block(P, R, S, o, j, n, stage + ((o - a * per) * R->Isz + j) * osz) < 0)
                    return -1;
                if (lz_poll(S, n)) return LZ_INTERRUPTED;
            }
    } else {
        for (npy_intp j = a * rs; j < b * rs; j += B) {
            npy_intp n = b * rs - j < B ? b * rs - j : B;
            if (lz_exec_block(P, R, S, 0, j, n, stage + (j - a * rs) * osz) < 0) return -1;
            if (lz_poll(S, n)) return LZ_INTERRUPTED;
        }
    }
    if (nedge) {
        char *side = R->wb_side + t * nedge * rb;
        memcpy(side, stage, (size_t)((lo - a) * rb));
        memcpy(side + (lo - a) * rb, stage + (hi - a) * rb, (size_t)((b - hi) * rb));
    }
    lz_scatter(R->wb, stage + (lo - a) * rb, osz, R->wb_nd, R->wb_shape, R->wb_str, lo * rs,
               (hi - lo) * rs);
    return 0;
}

/* the chunks' edge rows, from wb_side into the target (every chunk has read all it reads) */
static void lz_write_edges(const lz_prog *P, const lz_run *R, npy_intp nitems) {
    const npy_intp osz = P->instr[P->ninstr - 1].osize, rs = R->wb_rowsize;
    const npy_intp rb = rs * osz, nedge = R->wb_back + R->wb_fwd;
    if (!nedge) return;
    for (npy_intp t = 0; t < nitems; t++) {
        npy_intp a, b, lo, hi;
        lz_chunk_rows(R, t, &a, &b, &lo, &hi);
        const char *side = R->wb_side + t * nedge * rb;
        lz_scatter(R->wb, side, osz, R->wb_nd, R->wb_shape, R->wb_str, a * rs, (lo - a) * rs);
        lz_scatter(R->wb, side + (lo - a) * rb, osz, R->wb_nd, R->wb_shape, R->wb_str, hi * rs,
                   (b - hi) * rs);
    }
}

/* MODE_RED_ROWS (cpu_fused: rows much shorter than a block): item t runs the program once
 * over rows_per_item whole rows, one block, then reduces each row into its slot and finishes
 * the slot (its one partial). Per row this costs the reduction kernel alone, where a slot of
 * mode A costs a block's set-up too (~60 ns; docs/notes/cpu.rst, "Short rows"). */
static int lz_do_rows(const lz_prog *P, lz_run *R, lz_scratch *S, npy_intp t) {
    const npy_intp L = R->row_len, r0 = t * R->rows_per_item;
    const npy_intp r1 = r0 + R->rows_per_item < R->nrows ? r0 + R->rows_per_item : R->nrows;
    if (lz_exec_block(P, R, S, 0, r0 * L, (r1 - r0) * L, NULL) < 0) return -1;
    const char *q = S->vptr[P->result_val];
    const npy_intp qs = S->vstr[P->result_val], rs = L * qs;
    const int kind = P->red_kind;
    /* float sums, minima and maxima straight into the results (what lz_red_block and
     * lz_combine_slot of one partial give, bit for bit), without their dispatch per row:
     * rows of a few elements cost a few ns each instead of ~12 */
    const int isf = P->red_type == RT_F32 || P->red_type == RT_F64;
    if (isf && kind == RK_SUM) {
#define LZ_ROWS_SUM(PW) for (npy_intp r = r0; r < r1; r++) R->rd[r] = PW(q + (r - r0) * rs, L, qs, 0.);
        if (P->red_type == RT_F32) {
            if (P->red_pre == PRE_ABS) { LZ_ROWS_SUM(lz_pw_f32_abs) }
            else if (P->red_pre == PRE_SQUARE) { LZ_ROWS_SUM(lz_pw_f32_sq) }
            else { LZ_ROWS_SUM(lz_pw_f32) }
        } else {
            if (P->red_pre == PRE_ABS) { LZ_ROWS_SUM(lz_pw_f64_abs) }
            else if (P->red_pre == PRE_SQUARE) { LZ_ROWS_SUM(lz_pw_f64_sq) }
            else { LZ_ROWS_SUM(lz_pw_f64) }
        }
#undef LZ_ROWS_SUM
        return lz_poll(S, (r1 - r0) * L);
    }
    if (isf && (kind == RK_MIN || kind == RK_MAX) && qs == (P->red_type == RT_F32 ? 4 : 8)) {
        for (npy_intp r = r0; r < r1; r++) lz_minmax_contig(P, q + (r - r0) * rs, qs, L, &R->rd[r]);
        return lz_poll(S, (r1 - r0) * L);
    }
    for (npy_intp r = r0; r < r1; r++) {
        lz_red_block(P, R, r, q + (r - r0) * rs, qs, L, 0);
        lz_combine_slot(P, R, r, r, 1, 1);
    }
    return lz_poll(S, (r1 - r0) * L);
}

/* MODE_RED_B over an inner space that no single stride walks (a middle axis reduced:
 * (512, 32, 1024) over axis 1 keeps (512, 1024)): blocks end where a run of the last inner
 * dim does, so that lz_exec_block reads each input in place instead of gathering a copy
 * (docs/notes/cpu.rst, "Middle axes"). 0: blocks of B (runs shorter than LZ_CUT_MIN, no float
 * reduction, or nothing to gather). */
#define LZ_CUT_MIN 256
static npy_intp lz_run_cut(const lz_prog *P, const lz_run *R) {
    /* float reductions only: integer and bool ones (sums into uint64, any/all) ran 8-13 %
     * slower in the shorter blocks than with the gathered copy */
    if (P->red_type != RT_F32 && P->red_type != RT_F64) return 0;
    if (R->nI < 2 || R->Ishape[R->nI - 1] < LZ_CUT_MIN) return 0;
    for (int k = 0; k < P->ninputs; k++)
        if (P->input_val[k] >= 0 && P->input_isz[k] && R->dstride[k] == LZ_GATHER) return R->Ishape[R->nI - 1];
    return 0;
}

/* the elements of the block at j: at most B, to the item's end j1, within a run of cut */
static inline npy_intp lz_block_len(npy_intp B, npy_intp j, npy_intp j1, npy_intp cut) {
    npy_intp m = j1 - j < B ? j1 - j : B;
    if (cut && cut - j % cut < m) m = cut - j % cut;
    return m;
}

static int lz_do_item(const lz_prog *P, lz_run *R, lz_scratch *S, npy_intp t) {
    const npy_intp B = P->B;
    const int rv = P->result_val;
    if (R->mode == MODE_RED_B) {
        const npy_intp nsb = (R->Isz + R->nb - 1) / R->nb;
        const npy_intp c = t / nsb, j0 = (t % nsb) * R->nb;
        npy_intp n = R->Isz - j0;
        if (n > R->nb) n = R->nb;
        const npy_intp o0 = c * R->chunk_rows;
        npy_intp o1 = o0 + R->chunk_rows;
        if (o1 > R->Osz) o1 = R->Osz;
        npy_intp o = o0;
        const int rt = P->red_type;
        const npy_intp cut = lz_run_cut(P, R);
        if (P->red_kind == RK_VAR) return lz_var_rows(P, R, S, c, j0, n, o0, o1);
        if ((P->red_kind == RK_SUM || P->red_kind == RK_PROD) && (rt == RT_F32 || rt == RT_F64)) {
            /* float sums: LZ_ACC_ROWS rows per pass over the partials (the sum of each slot
             * is then a sum of lz_acc8's sums: fixed by the chunking, not the threads);
             * float products the same, multiplied in row order (lz_accprod8) */
            const npy_intp isz = rt == RT_F32 ? 4 : 8, rb = LZ_RB(P);
            for (; o + LZ_ACC_ROWS <= o1; o += LZ_ACC_ROWS) {
                for (npy_intp j = j0, m; j < j0 + n; j += m) {
                    m = lz_block_len(B, j, j0 + n, cut);
                    char *x[LZ_ACC_ROWS];
                    for (int r = 0; r < LZ_ACC_ROWS; r++) {
                        if (lz_exec_block(P, R, S, o + r, j, m, NULL) < 0) return -1;
                        char *q = S->vptr[rv];
                        npy_intp qs = S->vstr[rv];
                        if (qs == isz && !(q >= S->regs && q < S->end)) {
                            x[r] = q;            /* read in place from the input */
                        } else {                 /* in a register: keep a copy */
                            x[r] = S->stage + r * rb;
                            lz_copy(x[r], q, qs, m, isz);
                        }
                    }
                    lz_acc8(P, R->pd + c * R->Isz + j, x, m, o == o0);
                    if (lz_poll(S, LZ_ACC_ROWS * m)) return LZ_INTERRUPTED;
                }
            }
        }
        for (; o < o1; o++) {
            for (npy_intp j = j0, m; j < j0 + n; j += m) {
                m = lz_block_len(B, j, j0 + n, cut);
                if (lz_exec_block(P, R, S, o, j, m, NULL) < 0) return -1;
                lz_red_acc(P, R, c * R->Isz + j, S->vptr[rv], S->vstr[rv], m, o, o0);
                if (lz_poll(S, m)) return LZ_INTERRUPTED;
            }
        }
        return 0;
    }
    if (R->mode == MODE_RED_ROWS) return lz_do_rows(P, R, S, t);
    npy_intp o = t / R->nb, b = t % R->nb;
    npy_intp start = b * B, n = R->Isz - start;
    if (R->cut) {                     /* MODE_RED_A's blocks within runs of cut elements */
        const npy_intp per = (R->cut + B - 1) / B;
        start = (b / per) * R->cut + (b % per) * B;
        n = R->cut - (b % per) * B;
    }
    if (n > B) n = B;
    if (R->mode == MODE_EW && R->wb) return lz_do_chunk(P, R, S, t);
    if (R->mode == MODE_EW && R->mask) {
        if (lz_exec_masked(P, R, S, start, n) < 0) return -1;
        return lz_poll(S, n);
    }
    if (R->mode == MODE_EW) {
        const npy_intp osz = P->instr[P->ninstr - 1].osize;
        char *out = R->out + (R->out_ostride ? o * R->out_ostride : o * R->Isz * osz) + start * osz;
        if (lz_exec_block(P, R, S, o, start, n, out) < 0) return -1;
        return lz_poll(S, n);
    }
    if (lz_exec_block(P, R, S, o, start, n, NULL) < 0) return -1;
    lz_red_block(P, R, t, S->vptr[rv], S->vstr[rv], n, start);
    return lz_poll(S, n);
}

/* ---------------------------------------------------------------- the thread pool
 * A small pthread pool with "optional helpers" semantics: the calling thread claims work
 * items from an atomic counter itself; helpers that wake up in time claim items too.
 * The caller waits only for items a helper has actually claimed, never for a helper to
 * be scheduled: on a loaded machine (more runnable threads than cores) a sleeping helper
 * costs nothing, where an OpenMP barrier would wait a whole scheduler time slice. */
#ifndef _WIN32
#include <pthread.h>
#define LZ_HAVE_POOL 1
#define LZ_MAX_THREADS 256
#define LZ_RUNS_PER_THREAD 32
#ifndef LZ_SPIN_NS
#define LZ_SPIN_NS 100000       /* a helper's awake wait for the next job (lz_spin_for_job) */
#endif

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done;
    int started;                 /* helper threads running */
    unsigned long gen;           /* job generation */
    int joined, max_helpers, active;
    const lz_prog *P;
    lz_run *R;
    npy_intp grain;              /* items claimed at a time (see lz_pool_run) */
    npy_int64 next;              /* atomic: the unclaimed items [front, back), packed as
                                    front | back << 32 (lz_claim) */
    npy_intp done;               /* atomic */
    int err;                     /* atomic */
} lz_pool_t;

static lz_pool_t lz_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                            PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, NULL, NULL, 1, 0, 0, 0};
static pthread_mutex_t lz_pool_busy = PTHREAD_MUTEX_INITIALIZER;

/* Claim up to ``grain`` unclaimed items: the caller from the front, helpers from the back
 * (``back``). Returns the count claimed (0: none left), the first at *t0. Each thread then
 * keeps to its end of the items from one call to the next: the caller the first rows, the
 * helper the last ones, so a loop of statements over the same arrays reads on each core the
 * rows that core wrote the step before. With one counter from the front, which thread took
 * which rows changed at every call, and half of each call's reads came from the other core's
 * cache (a 300² stencil's steps into two arrays by turns: 220-229 -> 184-210 µs,
 * docs/notes/cpu.rst 2026-12-06f). */
static npy_intp lz_claim(npy_intp grain, int back, npy_intp *t0) {
    npy_int64 word = __atomic_load_n(&lz_pool.next, __ATOMIC_ACQUIRE);
    for (;;) {
        npy_intp front = (npy_intp)(word & 0xffffffffL), end = (npy_intp)(word >> 32);
        if (front >= end) return 0;
        npy_intp n = end - front < grain ? end - front : grain;
        npy_int64 want = back ? (npy_int64)front | ((npy_int64)(end - n) << 32)
                              : (npy_int64)(front + n) | ((npy_int64)end << 32);
        if (__atomic_compare_exchange_n(&lz_pool.next, &word, want, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            *t0 = back ? end - n : front;
            return n;
        }
    }
}

static void lz_run_items(const lz_prog *P, lz_run *R, int check_signals, int back) {
    lz_scratch S;
    int err = lz_scratch_init(P, R, &S) < 0 ? -2 : 0;
    lz_poll_init(&S, check_signals, &lz_pool.err);
    npy_intp t0, n, grain = lz_pool.grain;
    lz_fpe_take();              /* (this thread's flags from before: not this run's) */
    while ((n = lz_claim(grain, back, &t0)) > 0) {
        npy_intp t1 = t0 + n;
        for (npy_intp t = t0; t < t1; t++)
            if (!err && !__atomic_load_n(&lz_pool.err, __ATOMIC_RELAXED)) err = lz_do_item(P, R, &S, t);
        if (err) __atomic_store_n(&lz_pool.err, err, __ATOMIC_RELAXED);
        lz_fpe_note(R, P->ninstr);   /* the reduction kernel's, after the run's last block */
        __atomic_fetch_add(&lz_pool.done, t1 - t0, __ATOMIC_ACQ_REL);
    }
    lz_scratch_free(&S);
}

/* Wait up to LZ_SPIN_NS for a job after generation ``seen`` without sleeping (the caller does
 * not hold lz_pool.mu): a helper that went to sleep after each job joined the next one ~50-100
 * µs after its call began, so two threads gained nothing on calls of ~100 µs (a loop of
 * statements on 40,000-element grids: docs/notes/cpu.rst, "A helper that waits awake"). */
static void lz_spin_for_job(unsigned long seen) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        for (int k = 0; k < 64; k++) {
            if (__atomic_load_n(&lz_pool.gen, __ATOMIC_ACQUIRE) != seen) return;
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > LZ_SPIN_NS) return;
    }
}

static void *lz_helper(void *arg) {
    (void)arg;
    unsigned long seen;
    pthread_mutex_lock(&lz_pool.mu);
    seen = lz_pool.gen;
    for (;;) {
        if (LZ_SPIN_NS > 0 && lz_pool.gen == seen) {
            pthread_mutex_unlock(&lz_pool.mu);
            lz_spin_for_job(seen);
            pthread_mutex_lock(&lz_pool.mu);
        }
        while (lz_pool.gen == seen) pthread_cond_wait(&lz_pool.cv_work, &lz_pool.mu);
        seen = lz_pool.gen;
        npy_int64 left = __atomic_load_n(&lz_pool.next, __ATOMIC_ACQUIRE);
        if (lz_pool.joined >= lz_pool.max_helpers || (left & 0xffffffffL) >= (left >> 32))
            continue;                        /* late, or not needed: back to sleep */
        lz_pool.joined++;
        lz_pool.active++;
        const lz_prog *P = lz_pool.P;
        lz_run *R = lz_pool.R;
        pthread_mutex_unlock(&lz_pool.mu);
        lz_run_items(P, R, 0, 1);
        pthread_mutex_lock(&lz_pool.mu);
        if (--lz_pool.active == 0) pthread_cond_broadcast(&lz_pool.cv_done);
    }
    return NULL;
}

static void lz_pool_atfork_child(void) {
    /* the helpers do not exist in a forked child: start afresh */
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    lz_pool.mu = mu;
    lz_pool.cv_work = cv;
    lz_pool.cv_done = cv;
    lz_pool.started = lz_pool.joined = lz_pool.active = 0;
    lz_pool_busy = mu;
}

/* Start helpers up to n (under lz_pool.mu). */
static void lz_pool_grow(int n) {
    static int atfork_done = 0;
    if (!atfork_done) {
        pthread_atfork(NULL, NULL, lz_pool_atfork_child);
        atfork_done = 1;
    }
    if (n > LZ_MAX_THREADS) n = LZ_MAX_THREADS;
    while (lz_pool.started < n) {
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&th, &attr, lz_helper, NULL);
        pthread_attr_destroy(&attr);
        if (rc) break;
        lz_pool.started++;
    }
}

/* Returns 0 or an error; runs everything on the caller if the pool is in use. */
static int lz_pool_run(const lz_prog *P, lz_run *R, npy_intp nitems, int nthreads) {
    if (nitems > 0x7fffffffL) return 1;     /* (the packed claim counter's range: serially) */
    if (pthread_mutex_trylock(&lz_pool_busy) != 0) return 1;   /* busy: caller runs serially */
    pthread_mutex_lock(&lz_pool.mu);
    lz_pool_grow(nthreads - 1);
    lz_pool.P = P;
    lz_pool.R = R;
    /* Items are claimed in runs of consecutive ones, about LZ_RUNS_PER_THREAD per thread:
     * one claim per item (4,096 of them for a sum of 2^24 elements) made the two cores
     * pass the counters' cache line back and forth, and interleaved their reads, so two
     * threads were slower than one (docs/notes/cpu.rst, "Claiming work in runs"). */
    lz_pool.grain = nitems / ((npy_intp)nthreads * LZ_RUNS_PER_THREAD);
    if (lz_pool.grain < 1) lz_pool.grain = 1;
    __atomic_store_n(&lz_pool.next, (npy_int64)nitems << 32, __ATOMIC_RELEASE);   /* [0, nitems) */
    __atomic_store_n(&lz_pool.done, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&lz_pool.err, 0, __ATOMIC_RELEASE);
    lz_pool.joined = 0;
    lz_pool.max_helpers = nthreads - 1;
    __atomic_store_n(&lz_pool.gen, lz_pool.gen + 1, __ATOMIC_RELEASE);   /* (read by spinning helpers) */
    pthread_cond_broadcast(&lz_pool.cv_work);
    pthread_mutex_unlock(&lz_pool.mu);
    lz_run_items(P, R, R->check_signals, 0);
    pthread_mutex_lock(&lz_pool.mu);
    while (lz_pool.active > 0 || __atomic_load_n(&lz_pool.done, __ATOMIC_ACQUIRE) < nitems)
        pthread_cond_wait(&lz_pool.cv_done, &lz_pool.mu);
    int err = __atomic_load_n(&lz_pool.err, __ATOMIC_ACQUIRE);
    pthread_mutex_unlock(&lz_pool.mu);
    pthread_mutex_unlock(&lz_pool_busy);
    return err ? err : 0;
}
#endif

/* How many helper threads the pool has started (tests: a thread count set after a runner
 * was bound reaches its calls). */
static int lz_pool_started(void) {
#ifdef LZ_HAVE_POOL
    return __atomic_load_n(&lz_pool.started, __ATOMIC_RELAXED);
#else
    return 0;
#endif
}

/* Run all items on up to nthreads threads. Returns 0, -1 (loop error), -2 (no memory) or
 * LZ_INTERRUPTED (a Python signal handler raised: the exception is set). */
static int lz_execute(const lz_prog *P, lz_run *R, int nthreads) {
    npy_intp nitems;
    if (R->mode == MODE_RED_B) nitems = R->nchunk * ((R->Isz + R->nb - 1) / R->nb);
    else if (R->mode == MODE_RED_ROWS) nitems = (R->nrows + R->rows_per_item - 1) / R->rows_per_item;
    else if (R->wb) nitems = (R->wb_rows + R->wb_chunk - 1) / R->wb_chunk;
    else nitems = R->Osz * R->nb;
    int err = 0, done = 0, stopped = 0;
    if (nthreads > nitems) nthreads = (int)nitems;
#ifdef LZ_HAVE_POOL
    if (nthreads > 1) {
        err = lz_pool_run(P, R, nitems, nthreads);
        done = err != 1;
        if (err == 1) err = 0;
    }
#endif
    if (!done) {
        lz_scratch S;
        if (lz_scratch_init(P, R, &S) < 0) err = -2;
        lz_poll_init(&S, R->check_signals, NULL);
        lz_fpe_take();
        for (npy_intp t = 0; t < nitems && !err; t++) {
            err = lz_do_item(P, R, &S, t);
            if (R->progress && !err && t + 1 < nitems) {   /* items run in C order: item t */
                npy_intp end = (t % R->nb + 1) * P->B;        /* ends a block (the last one: */
                if (end > R->Isz) end = R->Isz;               /* below, after the flags) */
                __atomic_store_n(R->progress, (npy_int64)((t / R->nb) * R->Isz + end),
                                 __ATOMIC_RELEASE);
                if (__atomic_load_n(R->progress + 1, __ATOMIC_ACQUIRE)) {
                    stopped = 1;
                    break;
                }
            }
        }
        lz_scratch_free(&S);
    }
    lz_fpe_note(R, P->ninstr);
    if (err) return err;
    if (R->wb) {
        lz_write_edges(P, R, nitems);
    } else if (R->mode == MODE_RED_A) {
        for (npy_intp o = 0; o < R->Osz; o++) lz_combine_slot(P, R, o, o * R->nb, R->nb, 1);
    } else if (R->mode == MODE_RED_B) {
        lz_combine_rows(P, R);
    }
    lz_fpe_note(R, P->ninstr);
    feclearexcept(FE_ALL_EXCEPT);
    if (R->progress && !stopped)    /* all written, and every flag noted: the reader may go on */
        __atomic_store_n(R->progress, (npy_int64)(R->Osz * R->Isz), __ATOMIC_RELEASE);
    return 0;
}

/* A new result's memory made resident before a parallel run writes it: the kernel's threads
 * first-touching the same fresh pages fault them concurrently, and with transparent huge
 * pages (NumPy madvises them for arrays of 4 MiB and more) that ran ~3x slower than one
 * thread faulting them all: 2*(b+3) into fresh memory, 2^22 float32, 5.9 ms on two threads
 * against 2.1 on one (docs/notes/cpu.rst, "Fresh output pages"). Three pages are probed
 * with mincore (~1 µs); if one is not resident the whole range is populated at once by the
 * kernel (MADV_POPULATE_WRITE, Linux 5.14+; older kernels refuse it: nothing is done).
 * Returns 1 if it populated, 0 if not (resident, too small, or not Linux). */
static int lz_prefault(char *p, npy_intp nbytes) {
#ifdef __linux__
    static long page = 0;
    if (!page) page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
    const uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(page - 1);
    const uintptr_t hi = ((uintptr_t)p + (uintptr_t)nbytes + page - 1) & ~(uintptr_t)(page - 1);
    if (nbytes <= 0 || hi <= lo) return 0;
    const uintptr_t probe[3] = {lo, lo + (((hi - lo) / 2) & ~(uintptr_t)(page - 1)), hi - page};
    for (int k = 0; k < 3; k++) {
        unsigned char v = 1;
        if (mincore((void *)probe[k], (size_t)page, &v) == 0 && !(v & 1))
            return madvise((void *)lo, hi - lo, 23 /* MADV_POPULATE_WRITE */) == 0;
    }
#else
    (void)p; (void)nbytes;
#endif
    return 0;
}
