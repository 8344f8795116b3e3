/* Issue 14's CPU Jacobi sum written by hand in C, five ways, to see what the pass structure
 * itself costs on this machine (docs/notes/cpu.rst, 2026-12-07g). The expression is
 * sum(jacobi(sqrt(w))), w 4096 x 4096 float32, jacobi(u) = 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1]
 * + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]); each output row is one block summed as
 * lazyarr's VM sums a block (lz_pw_f32 in lazyarr/backends/_cpu_vm.h, copied below: 16
 * float64 lanes per leaf of 128-256 elements, the leaves joined in the recursion's tree), the
 * rows' partials then added in row order (the same in every mode: only the blocks matter here).
 *
 *   passes     lazyarr's structure today: the newest sqrt row into a 3-row ring, the stencil
 *              of the row into a buffer, the buffer's pairwise sum (three passes a row)
 *   fused      sqrt and stencil in one loop into the row's buffer, then its pairwise sum
 *   chunks     per leaf of the row's pairwise sum (128-256 elements): the three passes over
 *              the leaf's columns only, the leaf summed at once (the same bits as "passes")
 *   leaves     per leaf of the row's pairwise sum: sqrt and stencil in one loop into a
 *              256-element buffer (it stays in L1), summed at once by the leaf kernel (the
 *              same bits as "passes": checked)
 *   registers  sqrt, stencil and 16 float64 lanes in one loop per 256 elements (NOT lz_pw's
 *              leaves: a bound on a kernel with the sum in registers)
 *
 * The rows are split between the threads, each with a ring of its own. Prints the median of
 * 11 runs per mode, ms, and of the threads' CPU time together (the steadier number on a
 * shared machine); a second argument sums nodes of the recursion of at most that many
 * elements per chunk instead of its leaves (256). Build and run (gcc; -ffp-contract=off as the VM is built):
 *   gcc -O3 -march=native -ffp-contract=off -fno-math-errno -pthread \
 *       -o /tmp/jacobi_passes tools/peers/jacobi_passes.c -lm && /tmp/jacobi_passes [threads [node]]
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIDE 4096
#define COLS (SIDE - 2)              /* output columns: one block each row */
#define RW (SIDE + 16)              /* a ring row, padded */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* ---- lz_pw_f32 (lazyarr/backends/_cpu_vm.h), contiguous float32, plain sum */
static double leaf16(const float *a, long n) {
    double r[16];
    long i, nn = n - (n % 16);
    for (int k = 0; k < 16; k++) r[k] = (double)a[k];
    for (i = 16; i < nn; i += 16)
        for (int k = 0; k < 16; k++) r[k] += (double)a[i + k];
    for (int k = 0; k < 8; k++) r[k] += r[k + 8];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (i = nn; i < n; i++) res += (double)a[i];
    return res;
}
static double pw(const float *a, long n) {        /* n >= 16 here */
    if (n <= 256) return leaf16(a, n);
    long n2 = n / 2;
    n2 -= n2 % 8;
    return pw(a, n2) + pw(a + n2, n - n2);
}
/* the recursion's leaves of n > 256 elements, and its tree over their sums */
static long LIM = 256;     /* the nodes of at most LIM elements: 256, the leaves */
static void spans(long off, long n, long *lo, long *len, int *k) {
    if (n <= LIM) { lo[*k] = off; len[*k] = n; (*k)++; return; }
    long n2 = n / 2;
    n2 -= n2 % 8;
    spans(off, n2, lo, len, k);
    spans(off + n2, n - n2, lo, len, k);
}
static double join(long n, const double *leaf, int *k) {
    if (n <= LIM) return leaf[(*k)++];
    long n2 = n / 2;
    n2 -= n2 % 8;
    double left = join(n2, leaf, k);
    return left + join(n - n2, leaf, k);
}

/* ---- the pieces: ring rows f0 (row i), f1 (i + 1), f2 (i + 2, the newest); output column j
 * reads f1[j + 1], f0[j + 1], f2[j + 1], f1[j], f1[j + 2] in the program's order */
__attribute__((noinline)) static void sqrt_row(const float *restrict w, float *restrict f, long n) {
    for (long j = 0; j < n; j++) f[j] = sqrtf(w[j]);
}
__attribute__((noinline)) static void stencil(const float *restrict f0, const float *restrict f1,
                                              const float *restrict f2, float *restrict out, long n) {
    for (long j = 0; j < n; j++)
        out[j] = 0.2f * ((((f1[j + 1] + f0[j + 1]) + f2[j + 1]) + f1[j]) + f1[j + 2]);
}
/* columns [0, n) of the output; the newest row's columns 1 .. n computed on the way */
__attribute__((noinline)) static void fused(const float *restrict w, const float *restrict f0,
                                            const float *restrict f1, float *restrict f2,
                                            float *restrict out, long n) {
    for (long j = 0; j < n; j++) {
        float f = sqrtf(w[j + 1]);
        f2[j + 1] = f;
        out[j] = 0.2f * ((((f1[j + 1] + f0[j + 1]) + f) + f1[j]) + f1[j + 2]);
    }
}
__attribute__((noinline)) static double registers(const float *restrict w, const float *restrict f0,
                                                  const float *restrict f1, float *restrict f2, long n) {
    double tot = 0;
    long i = 0;
    for (; i + 256 <= n; i += 256) {
        double r[16] = {0};
        for (long b = i; b < i + 256; b += 16)
            for (int k = 0; k < 16; k++) {
                long j = b + k;
                float f = sqrtf(w[j + 1]);
                f2[j + 1] = f;
                r[k] += (double)(0.2f * ((((f1[j + 1] + f0[j + 1]) + f) + f1[j]) + f1[j + 2]));
            }
        for (int k = 0; k < 8; k++) r[k] += r[k + 8];
        tot += ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    }
    for (; i < n; i++) {
        float f = sqrtf(w[i + 1]);
        f2[i + 1] = f;
        tot += (double)(0.2f * ((((f1[i + 1] + f0[i + 1]) + f) + f1[i]) + f1[i + 2]));
    }
    return tot;
}

enum { PASSES, FUSED, CHUNKS, LEAVES, REGISTERS, NMODES };
static const char *NAMES[NMODES] = {"passes", "fused", "chunks", "leaves", "registers"};

typedef struct {
    const float *w;
    double *partial;
    long r0, r1;
    int mode;
    double cpu;                    /* the thread's CPU time, s */
} job;

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void *run_rows(void *arg) {
    job *J = arg;
    const double c0 = cpu_now();
    float *ring = aligned_alloc(64, 3 * RW * sizeof(float));
    float *out = aligned_alloc(64, RW * sizeof(float));
    long lo[64], len[64];
    int nl = 0;
    spans(0, COLS, lo, len, &nl);
    for (long p = J->r0; p < J->r0 + 2; p++) sqrt_row(J->w + p * SIDE, ring + (p % 3) * RW, SIDE);
    for (long i = J->r0; i < J->r1; i++) {
        const float *f0 = ring + (i % 3) * RW, *f1 = ring + ((i + 1) % 3) * RW;
        float *f2 = ring + ((i + 2) % 3) * RW;
        const float *w2 = J->w + (i + 2) * SIDE;
        switch (J->mode) {
        case PASSES:
            sqrt_row(w2, f2, SIDE);
            stencil(f0, f1, f2, out, COLS);
            J->partial[i] = pw(out, COLS);
            break;
        case FUSED:
            f2[0] = sqrtf(w2[0]);
            fused(w2, f0, f1, f2, out, COLS);
            f2[COLS + 1] = sqrtf(w2[COLS + 1]);
            J->partial[i] = pw(out, COLS);
            break;
        case CHUNKS: {
            double leaf[64];
            sqrt_row(w2, f2, 1);
            for (int q = 0; q < nl; q++) {
                sqrt_row(w2 + lo[q] + 1, f2 + lo[q] + 1, len[q]);
                stencil(f0 + lo[q], f1 + lo[q], f2 + lo[q], out, len[q]);
                leaf[q] = pw(out, len[q]);
            }
            sqrt_row(w2 + COLS + 1, f2 + COLS + 1, 1);
            int k = 0;
            J->partial[i] = join(COLS, leaf, &k);
            break;
        }
        case LEAVES: {
            double leaf[64];
            f2[0] = sqrtf(w2[0]);
            for (int q = 0; q < nl; q++) {
                fused(w2 + lo[q], f0 + lo[q], f1 + lo[q], f2 + lo[q], out, len[q]);
                leaf[q] = pw(out, len[q]);
            }
            f2[COLS + 1] = sqrtf(w2[COLS + 1]);
            int k = 0;
            J->partial[i] = join(COLS, leaf, &k);
            break;
        }
        default:
            f2[0] = sqrtf(w2[0]);
            J->partial[i] = registers(w2, f0, f1, f2, COLS);
            f2[COLS + 1] = sqrtf(w2[COLS + 1]);
        }
    }
    free(ring);
    free(out);
    J->cpu = cpu_now() - c0;
    return NULL;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    if (argc > 2) LIM = atol(argv[2]);
    if (threads < 1 || threads > 16) threads = 2;
    float *w = aligned_alloc(64, (size_t)SIDE * SIDE * sizeof(float));
    srand(0);
    for (long k = 0; k < (long)SIDE * SIDE; k++) w[k] = (float)rand() / (float)RAND_MAX;
    double *partial = malloc(SIDE * sizeof(double));
    double sums[NMODES];
    printf("%d x %d float32, %d thread(s): median of 11 runs, ms (and the sum)\n", SIDE, SIDE, threads);
    for (int mode = 0; mode < NMODES; mode++) {
        double t[11], c[11];
        for (int rep = 0; rep < 11; rep++) {
            pthread_t th[16];
            job J[16];
            double t0 = now();
            for (int k = 0; k < threads; k++) {
                J[k] = (job){w, partial, (long)(SIDE - 2) * k / threads, (long)(SIDE - 2) * (k + 1) / threads, mode};
                pthread_create(&th[k], NULL, run_rows, &J[k]);
            }
            for (int k = 0; k < threads; k++) pthread_join(th[k], NULL);
            t[rep] = now() - t0;
            c[rep] = 0;
            for (int k = 0; k < threads; k++) c[rep] += J[k].cpu;
        }
        double s = 0;
        for (long i = 0; i < SIDE - 2; i++) s += partial[i];
        sums[mode] = s;
        qsort(t, 11, sizeof(double), cmp);
        qsort(c, 11, sizeof(double), cmp);
        printf("%-10s %7.2f ms  (CPU %7.2f ms)  %.17g%s\n", NAMES[mode], t[5] * 1e3, c[5] * 1e3, s,
               mode == CHUNKS || mode == LEAVES ? (s == sums[PASSES] ? "  (= passes)" : "  (DIFFERENT)") : "");
    }
    return 0;
}
