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
 * NumPy calls the handler with the GIL held; the lock is for lz_rpool_release and the
 * statistics, read from any thread. (lz_rpool: the result pool; lz_pool in _cpu_vm.h is the
 * thread pool.) */
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

#define LZ_RPOOL_SLOTS 32

typedef struct {
    void *p;
    size_t n;
} lz_rpool_block;

static lz_rpool_block lz_rpool_kept[LZ_RPOOL_SLOTS];
static int lz_rpool_count = 0;
static size_t lz_rpool_bytes = 0;              /* in the kept blocks */
static size_t lz_rpool_limit = 0;              /* 0: nothing is kept */
static size_t lz_rpool_min = (size_t)1 << 22;  /* smaller blocks are malloc's business */
static int lz_rpool_hugepages = 1;             /* NumPy's madvise_hugepage switch, as set */
static int lz_rpool_reused = 0;                /* the last allocation took a kept block */
static unsigned long long lz_rpool_hits = 0, lz_rpool_misses = 0;
static pthread_mutex_t lz_rpool_lock = PTHREAD_MUTEX_INITIALIZER;

/* NumPy's indicate_hugepages (numpy/_core/src/multiarray/alloc.c: from 4 MiB), for the
 * blocks made here */
static void lz_rpool_advise(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (n >= ((size_t)1 << 22) && lz_rpool_hugepages) {
        uintptr_t offset = 4096u - (uintptr_t)p % 4096u;
        madvise((void *)((uintptr_t)p + offset), n - offset, MADV_HUGEPAGE);
    }
#else
    (void)p; (void)n;
#endif
}

/* With the lock held: drop the oldest kept blocks until at most `bytes` bytes in at most
 * `slots` blocks are kept. */
static void lz_rpool_shrink_locked(size_t bytes, int slots) {
    int drop = 0;
    while (drop < lz_rpool_count && (lz_rpool_count - drop > slots || lz_rpool_bytes > bytes)) {
        lz_rpool_bytes -= lz_rpool_kept[drop].n;
        free(lz_rpool_kept[drop].p);
        drop++;
    }
    if (drop) {
        memmove(lz_rpool_kept, lz_rpool_kept + drop,
                (size_t)(lz_rpool_count - drop) * sizeof(lz_rpool_block));
        lz_rpool_count -= drop;
    }
}

/* Every kept block back to the system; the bytes returned. */
static size_t lz_rpool_release(void) {
    pthread_mutex_lock(&lz_rpool_lock);
    size_t freed = lz_rpool_bytes;
    lz_rpool_shrink_locked(0, 0);
    pthread_mutex_unlock(&lz_rpool_lock);
    return freed;
}

/* After a failed allocation: whether kept blocks were returned, so that trying again may
 * succeed. */
static int lz_rpool_retry(void) {
    return lz_rpool_count && lz_rpool_release();
}

/* The newest kept block of exactly n bytes, taken out of the pool; NULL if none. */
static void *lz_rpool_take(size_t n) {
    void *p = NULL;
    pthread_mutex_lock(&lz_rpool_lock);
    for (int i = lz_rpool_count - 1; i >= 0; i--) {
        if (lz_rpool_kept[i].n == n) {
            p = lz_rpool_kept[i].p;
            memmove(lz_rpool_kept + i, lz_rpool_kept + i + 1,
                    (size_t)(lz_rpool_count - i - 1) * sizeof(lz_rpool_block));
            lz_rpool_count--;
            lz_rpool_bytes -= n;
            break;
        }
    }
    if (p) lz_rpool_hits++;
    else lz_rpool_misses++;
    pthread_mutex_unlock(&lz_rpool_lock);
    return p;
}

static void *lz_rpool_malloc(void *ctx, size_t n) {
    (void)ctx;
    void *p = n >= lz_rpool_min ? lz_rpool_take(n) : NULL;
    lz_rpool_reused = p != NULL;
    if (p) return p;
    p = malloc(n ? n : 1);
    if (p == NULL && lz_rpool_retry()) p = malloc(n ? n : 1);
    if (p) lz_rpool_advise(p, n);
    return p;
}

static void *lz_rpool_calloc(void *ctx, size_t nelem, size_t elsize) {
    (void)ctx;
    lz_rpool_reused = 0;
    void *p = calloc(nelem ? nelem : 1, elsize ? elsize : 1);
    if (p == NULL && lz_rpool_retry()) p = calloc(nelem ? nelem : 1, elsize ? elsize : 1);
    if (p) lz_rpool_advise(p, nelem * elsize);
    return p;
}

static void *lz_rpool_realloc(void *ctx, void *p, size_t n) {
    (void)ctx;
    void *q = realloc(p, n ? n : 1);
    if (q == NULL && lz_rpool_retry()) q = realloc(p, n ? n : 1);
    return q;
}

static void lz_rpool_free(void *ctx, void *p, size_t n) {
    (void)ctx;
    if (p == NULL) return;
    pthread_mutex_lock(&lz_rpool_lock);
    if (n >= lz_rpool_min && n <= lz_rpool_limit) {
        lz_rpool_shrink_locked(lz_rpool_limit - n, LZ_RPOOL_SLOTS - 1);   /* room for it */
        lz_rpool_kept[lz_rpool_count].p = p;
        lz_rpool_kept[lz_rpool_count].n = n;
        lz_rpool_count++;
        lz_rpool_bytes += n;
        pthread_mutex_unlock(&lz_rpool_lock);
        return;
    }
    pthread_mutex_unlock(&lz_rpool_lock);
    free(p);
}

/* The new limit; kept blocks over it go, the oldest first. The old limit returned. */
static size_t lz_rpool_set_limit(size_t limit) {
    pthread_mutex_lock(&lz_rpool_lock);
    size_t old = lz_rpool_limit;
    lz_rpool_limit = limit;
    lz_rpool_shrink_locked(limit, LZ_RPOOL_SLOTS);
    pthread_mutex_unlock(&lz_rpool_lock);
    return old;
}

static PyDataMem_Handler lz_rpool_handler = {
    "lazyarr_result_pool",
    1,
    {
        NULL,
        lz_rpool_malloc,
        lz_rpool_calloc,
        lz_rpool_realloc,
        lz_rpool_free,
    },
};

#endif
