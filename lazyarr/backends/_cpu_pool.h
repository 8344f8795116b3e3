/* The result pool: large result arrays' memory kept for the next result of the same size
 * (docs/cpu-backend.rst, "The result pool"; lazyarr/backends/cpu_fused.py, _new_result).
 *
 * A new result of >= 32 MiB is a fresh mmap in glibc (its mmap threshold stops growing at 32
 * MiB), and a fresh mapping is zeroed page by page at its first write: in this project's 2-core
 * VM that first touch cost as much as the kernel itself (a 2^24 float32 result 17 ms new, 7.7
 * ms into memory already touched). A script that makes a new result of the same size every
 * step (``u = f(u)``, NPBench's kernels, a benchmark's calls) frees one such block per step.
 *
 * This is a NumPy memory handler (NEP 49, PyDataMem_Handler), set by _cpu_vm.pool_empty only
 * around the allocation of a result: the array records its handler, so its memory comes back
 * here when it dies, whoever holds it last; nothing else in the process allocates through it.
 * Blocks of at least lz_pool_min bytes are kept, newest last, up to lz_pool_limit bytes and
 * LZ_POOL_SLOTS blocks (the oldest go first); an allocation of exactly a kept block's size
 * takes it back. Everything else is malloc's, with NumPy's own huge-page advice (alloc.c,
 * indicate_hugepages): the pool changes when memory is returned, not what it is. A failed
 * malloc returns every kept block and tries again.
 *
 * NumPy calls the handler with the GIL held; the lock is for lz_pool_release and the
 * statistics, read from any thread. */
#ifndef LZ_CPU_POOL_H
#define LZ_CPU_POOL_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#include <numpy/ndarraytypes.h>

#define LZ_POOL_SLOTS 32

typedef struct {
    void *p;
    size_t n;
} lz_pool_block;

static lz_pool_block lz_pool_kept[LZ_POOL_SLOTS];
static int lz_pool_count = 0;
static size_t lz_pool_bytes = 0;              /* in the kept blocks */
static size_t lz_pool_limit = 0;              /* 0: nothing is kept */
static size_t lz_pool_min = (size_t)1 << 22;  /* smaller blocks are malloc's business */
static int lz_pool_hugepages = 1;             /* NumPy's madvise_hugepage switch, as set */
static int lz_pool_reused = 0;                /* the last allocation took a kept block */
static unsigned long long lz_pool_hits = 0, lz_pool_misses = 0;
static pthread_mutex_t lz_pool_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t lz_pool_release(void);

/* NumPy's indicate_hugepages (numpy/_core/src/multiarray/alloc.c), for the blocks made here */
static void lz_pool_advise(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (n >= ((size_t)1 << 22) && lz_pool_hugepages) {
        uintptr_t offset = 4096u - (uintptr_t)p % 4096u;
        madvise((void *)((uintptr_t)p + offset), n - offset, MADV_HUGEPAGE);
    }
#else
    (void)p; (void)n;
#endif
}

/* Every kept block back to the system; the bytes returned. */

/* The newest kept block of exactly n bytes, taken out of the pool; NULL if none. */
static void *lz_pool_take(size_t n) {
    void *p = NULL;
    pthread_mutex_lock(&lz_pool_lock);
    for (int i = lz_pool_count - 1; i >= 0; i--) {
        if (lz_pool_kept[i].n == n) {
            p = lz_pool_kept[i].p;
            memmove(lz_pool_kept + i, lz_pool_kept + i + 1,
                    (size_t)(lz_pool_count - i - 1) * sizeof(lz_pool_block));
            lz_pool_count--;
            lz_pool_bytes -= n;
            break;
        }
    }
    if (n >= lz_pool_min) {
        if (p) lz_pool_hits++;
        else lz_pool_misses++;
    }
    pthread_mutex_unlock(&lz_pool_lock);
    return p;
}

static void *lz_pool_malloc(void *ctx, size_t n) {
    (void)ctx;
    void *p = n >= lz_pool_min ? lz_pool_take(n) : NULL;
    lz_pool_reused = p != NULL;
    if (p) return p;
    p = malloc(n ? n : 1);
    if (p == NULL && lz_pool_count) {
        lz_pool_release();
        p = malloc(n ? n : 1);
    }
    if (p) lz_pool_advise(p, n);
    return p;
}

static void *lz_pool_calloc(void *ctx, size_t nelem, size_t elsize) {
    (void)ctx;
    lz_pool_reused = 0;
    void *p = calloc(nelem ? nelem : 1, elsize ? elsize : 1);
    if (p == NULL && lz_pool_count) {
        lz_pool_release();
        p = calloc(nelem ? nelem : 1, elsize ? elsize : 1);
    }
    if (p) lz_pool_advise(p, nelem * elsize);
    return p;
}

static void *lz_pool_realloc(void *ctx, void *p, size_t n) {
    (void)ctx;
    void *q = realloc(p, n ? n : 1);
    if (q == NULL && lz_pool_count) {
        lz_pool_release();
        q = realloc(p, n ? n : 1);
    }
    return q;
}

/* With the lock held: drop the oldest kept blocks until at most `bytes` bytes in at most
 * `slots` blocks are kept. */
static void lz_pool_shrink_locked(size_t bytes, int slots) {
    int drop = 0;
    while (drop < lz_pool_count && (lz_pool_count - drop > slots || lz_pool_bytes > bytes)) {
        lz_pool_bytes -= lz_pool_kept[drop].n;
        free(lz_pool_kept[drop].p);
        drop++;
    }
    if (drop) {
        memmove(lz_pool_kept, lz_pool_kept + drop,
                (size_t)(lz_pool_count - drop) * sizeof(lz_pool_block));
        lz_pool_count -= drop;
    }
}

/* Every kept block back to the system; the bytes returned. */
static size_t lz_pool_release(void) {
    pthread_mutex_lock(&lz_pool_lock);
    size_t freed = lz_pool_bytes;
    lz_pool_shrink_locked(0, 0);
    pthread_mutex_unlock(&lz_pool_lock);
    return freed;
}

static void lz_pool_free(void *ctx, void *p, size_t n) {
    (void)ctx;
    if (p == NULL) return;
    pthread_mutex_lock(&lz_pool_lock);
    if (n >= lz_pool_min && n <= lz_pool_limit) {
        lz_pool_shrink_locked(lz_pool_limit - n, LZ_POOL_SLOTS - 1);   /* room for it */
        lz_pool_kept[lz_pool_count].p = p;
        lz_pool_kept[lz_pool_count].n = n;
        lz_pool_count++;
        lz_pool_bytes += n;
        pthread_mutex_unlock(&lz_pool_lock);
        return;
    }
    pthread_mutex_unlock(&lz_pool_lock);
    free(p);
}

/* Kept blocks over the new limit go, the oldest first. */
static void lz_pool_set_limit(size_t limit) {
    pthread_mutex_lock(&lz_pool_lock);
    lz_pool_limit = limit;
    lz_pool_shrink_locked(limit, LZ_POOL_SLOTS);
    pthread_mutex_unlock(&lz_pool_lock);
}

static PyDataMem_Handler lz_pool_handler = {
    "lazyarr_result_pool",
    1,
    {
        NULL,
        lz_pool_malloc,
        lz_pool_calloc,
        lz_pool_realloc,
        lz_pool_free,
    },
};

#endif
