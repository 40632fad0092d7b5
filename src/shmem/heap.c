/* shmem layer: the symmetric heap. One comm segment per PE (KY_SHMEM_HEAP_SIZE bytes, shared memory that
 * same-node PEs map), carved by the same first-fit allocator on every PE. The calls are collective and in
 * the same order everywhere, so every PE makes the same choices and a block has the same offset on all of
 * them, without talking. The one message each call sends is an allreduce that checks that claim (every PE
 * asked for the same size, freed the same block) and doubles as the barrier the standard asks for. */
#include <stdlib.h>
#include <string.h>

#include "shmem/internal.h"

#define HEAP_ALIGN 64 /* a cache line: blocks of different PEs' writers never share one */

typedef struct {
    size_t off, size;
    int used;
} block_t;

static size_t carve(size_t size, size_t align);
static block_t *blocks;
static size_t nblocks, cap;
static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;

int kyi_shmem_heap_init(void)
{
    cap = 64;
    blocks = malloc(cap * sizeof *blocks);
    if (!blocks) return kyi_fail(KY_ERR_NOMEM, "shmem_init", "no memory for the heap's block list");
    nblocks = 1;
    blocks[0] = (block_t){0, kyi_shmem.size[KYI_SHM_HEAP], 0};
    return KY_OK;
}

void *kyi_shmem_heap_reserve(size_t bytes)
{
    size_t off = carve(bytes, HEAP_ALIGN);
    return off == SIZE_MAX ? NULL : kyi_shmem.base[KYI_SHM_HEAP] + off;
}

void kyi_shmem_heap_finalize(void)
{
    free(blocks);
    blocks = NULL;
    nblocks = cap = 0;
}

static int insert_at(size_t i, block_t b)
{
    if (nblocks == cap) {
        block_t *nb = realloc(blocks, 2 * cap * sizeof *blocks);
        if (!nb) return KY_ERR_NOMEM;
        blocks = nb;
        cap *= 2;
    }
    memmove(&blocks[i + 1], &blocks[i], (nblocks - i) * sizeof *blocks);
    blocks[i] = b;
    nblocks++;
    return KY_OK;
}

static void merge_free(void)
{
    for (size_t i = 0; i + 1 < nblocks;) {
        if (!blocks[i].used && !blocks[i + 1].used) {
            blocks[i].size += blocks[i + 1].size;
            memmove(&blocks[i + 1], &blocks[i + 2], (nblocks - i - 2) * sizeof *blocks);
            nblocks--;
        } else {
            i++;
        }
    }
}

/* First fit with alignment; returns the offset or SIZE_MAX. */
static size_t carve(size_t size, size_t align)
{
    size = (size + HEAP_ALIGN - 1) / HEAP_ALIGN * HEAP_ALIGN;
    for (size_t i = 0; i < nblocks; i++) {
        block_t b = blocks[i];
        if (b.used) continue;
        size_t start = (b.off + align - 1) / align * align, pad = start - b.off;
        if (pad > b.size || b.size - pad < size) continue;
        if (pad) { /* the gap before the aligned start stays a free block of its own */
            blocks[i].size = pad;
            if (insert_at(++i, (block_t){start, b.size - pad, 0})) return SIZE_MAX;
            b = blocks[i];
        }
        if (b.size > size && insert_at(i + 1, (block_t){start + size, b.size - size, 0})) return SIZE_MAX;
        blocks[i] = (block_t){start, size, 1};
        return start;
    }
    return SIZE_MAX;
}

static long find_used(size_t off)
{
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].used && blocks[i].off == off) return (long)i;
    return -1;
}

/* Entry of every heap call: complete this PE's puts, then one allreduce that is both the barrier and the
 * check that every PE passed the same (a, b). */
static int agree(const char *call, const char *what, uint64_t a, uint64_t b)
{
    KYI_CHECK(kyi_shmem_ready(call));
    KYI_CHECK(kyi_shmem_quiet(call));
    int64_t v[4] = {(int64_t)a, -(int64_t)a, (int64_t)b, -(int64_t)b}, r[4];
    int st = ky_allreduce(v, r, 4, KY_INT64, KY_MAX, KY_TEAM_WORLD);
    if (st) return kyi_shmem_failed(st, call);
    if (r[0] != -r[1] || r[2] != -r[3])
        return kyi_shmem_fail(
            KY_ERR_ARG, call,
            "PEs passed different %s (this PE: %llu, %llu; largest %lld, %lld; smallest %lld, "
            "%lld): heap calls must be symmetric",
            what, (unsigned long long)a, (unsigned long long)b, (long long)r[0], (long long)r[2],
            (long long)-r[1], (long long)-r[3]);
    return KY_OK;
}

static void *alloc(const char *call, size_t size, size_t align, int zero)
{
    if (align == 0 || (align & (align - 1))) {
        kyi_shmem_fail(KY_ERR_ARG, call, "alignment %zu is not a power of two", align);
        return NULL;
    }
    if (agree(call, "sizes or alignments", size, align)) return NULL;
    if (size == 0) return NULL;
    if (align < HEAP_ALIGN) align = HEAP_ALIGN;
    pthread_mutex_lock(&heap_lock);
    size_t off = KYI_SIZE_LOOKS_NEGATIVE(size) ? SIZE_MAX : carve(size, align);
    pthread_mutex_unlock(&heap_lock);
    if (off == SIZE_MAX) {
        /* The standard's answer is NULL; every PE gets it alike, since every PE ran the same first fit. */
        kyi_fail(KY_ERR_NOMEM, call, "%zu bytes do not fit in the symmetric heap (KY_SHMEM_HEAP_SIZE = %zu)",
                 size, kyi_shmem.size[KYI_SHM_HEAP]);
        KYI_WARN(KYI_SUB_COMM, "%s", ky_last_error());
        return NULL;
    }
    char *p = kyi_shmem.base[KYI_SHM_HEAP] + off;
    if (zero) {
        memset(p, 0, size);
        /* Nobody writes into the block before every PE has cleared its own. */
        int st = ky_team_barrier(KY_TEAM_WORLD);
        if (st) kyi_shmem_failed(st, call);
    }
    return p;
}

void *shmem_malloc(size_t size)
{
    return alloc("shmem_malloc", size, HEAP_ALIGN, 0);
}
void *shmem_malloc_with_hints(size_t size, long hints)
{
    (void)hints; /* every block already serves atomics and signals alike */
    return alloc("shmem_malloc_with_hints", size, HEAP_ALIGN, 0);
}
void *shmem_align(size_t alignment, size_t size)
{
    return alloc("shmem_align", size, alignment, 0);
}
void *shmem_calloc(size_t count, size_t size)
{
    size_t bytes;
    if (kyi_shmem_ready("shmem_calloc") || kyi_shmem_bytes("shmem_calloc", count, size, &bytes)) return NULL;
    return alloc("shmem_calloc", bytes, HEAP_ALIGN, 1);
}
void *shmalloc(size_t size)
{
    return alloc("shmalloc", size, HEAP_ALIGN, 0);
}
void *shmemalign(size_t alignment, size_t size)
{
    return alloc("shmemalign", size, alignment, 0);
}

/* Offset of a heap block's start, or an error naming the call. */
static int block_of(const char *call, void *ptr, size_t *off, long *idx)
{
    char *b = kyi_shmem.base[KYI_SHM_HEAP];
    if ((char *)ptr < b || (char *)ptr >= b + kyi_shmem.size[KYI_SHM_HEAP])
        return kyi_shmem_fail(KY_ERR_ARG, call, "%p is not in the symmetric heap", ptr);
    *off = (size_t)((char *)ptr - b);
    *idx = find_used(*off);
    if (*idx < 0) return kyi_shmem_fail(KY_ERR_ARG, call, "%p is not the start of a live heap block", ptr);
    return KY_OK;
}

static void release(const char *call, void *ptr)
{
    size_t off = ptr ? (size_t)((char *)ptr - kyi_shmem.base[KYI_SHM_HEAP]) : SIZE_MAX;
    if (agree(call, "blocks", off, 0) || !ptr) return;
    pthread_mutex_lock(&heap_lock);
    long i;
    if (!block_of(call, ptr, &off, &i)) {
        blocks[i].used = 0;
        merge_free();
    }
    pthread_mutex_unlock(&heap_lock);
}

void shmem_free(void *ptr)
{
    release("shmem_free", ptr);
}
void shfree(void *ptr)
{
    release("shfree", ptr);
}

static void *resize(const char *call, void *ptr, size_t size)
{
    if (!ptr) return alloc(call, size, HEAP_ALIGN, 0);
    if (size == 0) {
        release(call, ptr);
        return NULL;
    }
    size_t off = (size_t)((char *)ptr - kyi_shmem.base[KYI_SHM_HEAP]);
    if (agree(call, "blocks or sizes", off, size)) return NULL;
    pthread_mutex_lock(&heap_lock);
    long i;
    void *out = NULL;
    if (!block_of(call, ptr, &off, &i)) {
        size_t old = blocks[i].size, want = (size + HEAP_ALIGN - 1) / HEAP_ALIGN * HEAP_ALIGN;
        if (want <= old) {
            out = ptr; /* shrinking keeps the block */
        } else if ((size_t)i + 1 < nblocks && !blocks[i + 1].used && blocks[i + 1].size >= want - old) {
            blocks[i + 1].off += want - old; /* grow in place into the free neighbour */
            blocks[i + 1].size -= want - old;
            blocks[i].size = want;
            if (!blocks[i + 1].size) {
                memmove(&blocks[i + 1], &blocks[i + 2], (nblocks - i - 2) * sizeof *blocks);
                nblocks--;
            }
            out = ptr;
        } else {
            size_t noff = carve(size, HEAP_ALIGN);
            if (noff != SIZE_MAX) {
                out = kyi_shmem.base[KYI_SHM_HEAP] + noff;
                memcpy(out, ptr, old < size ? old : size);
                i = find_used(off);
                blocks[i].used = 0;
                merge_free();
            } else {
                kyi_fail(KY_ERR_NOMEM, call, "%zu bytes do not fit in the symmetric heap", size);
            }
        }
    }
    pthread_mutex_unlock(&heap_lock);
    /* The copy is in place on every PE before anyone writes into the new block. */
    int st = ky_team_barrier(KY_TEAM_WORLD);
    if (st) kyi_shmem_failed(st, call);
    return out;
}

void *shmem_realloc(void *ptr, size_t size)
{
    return resize("shmem_realloc", ptr, size);
}
void *shrealloc(void *ptr, size_t size)
{
    return resize("shrealloc", ptr, size);
}
