/* Internal: allocations of the global space whose homes are another layer's memory (a "store"), for the
 * DSM view of distributed arrays (src/array/dsm_view.c), whose homes are the array's own blocks in host or
 * GPU memory.
 *
 * No rank is home of a store page in the DSM's sense: every rank, the block's owner included, holds such
 * pages as cached copies. A fault (or a preload) fills the page by calling store.read in the faulting
 * thread; the synchronisations that write diffs back (ky_barrier, ky_unlock) call store.write with the
 * changed elements, after the page locks are released, and wait for it. Both may use the comm layer (they
 * run in application threads, never in the progress thread). Diffs are kept element-exact (store.grain
 * bytes): an element changed anywhere is written whole (only the part inside the page when it straddles
 * two), so writes of different ranks to different elements of one page all survive.
 *
 * What a store page does not have: the synchronised-version rule (a fetch returns the store's bytes as they
 * are at the time of the fetch; the owner of a block must not change, in an interval, elements that other
 * ranks read through the view in it), fetch_add and push. */
#ifndef KYI_DSM_STORE_H
#define KYI_DSM_STORE_H

#include <stddef.h>

typedef struct kyi_dsm_store {
    /* Copy bytes [off, off+len) of the allocation into dst. */
    int (*read)(void *ctx, size_t off, size_t len, void *dst);
    /* Write bytes [off, off+len) of the allocation from src; complete (at the home) on return. */
    int (*write)(void *ctx, size_t off, size_t len, const void *src);
    /* The rank that holds byte off (ky_home_of). */
    int (*home_of)(void *ctx, size_t off);
    void *ctx;
    size_t grain; /* element size: diffs are whole elements */
} kyi_dsm_store_t;

/* Collective over all ranks (like ky_alloc): `bytes` of the global space backed by `store`, the same
 * address on every rank, or NULL with the error set. Freed with ky_free (collective). */
void *kyi_dsm_alloc_store(const char *call, size_t bytes, const kyi_dsm_store_t *store);

#endif
