/* Kyoyu dsm: the global address space (docs/architecture.md; seeds 000 mSMS and 003 Omni/SCASH).
 *
 * Every rank reserves the same virtual range at ky_init (KY_GAS_SIZE bytes), so a pointer into the global
 * space is valid on every rank and any thread may read or write any byte of it with plain loads and
 * stores. Memory is managed in pages of KY_PAGE_SIZE bytes; every page has a home rank that holds its
 * master copy. A rank touching a page it does not hold takes a fault, fetches the page from its home and
 * caches it (read-only; a write makes a twin so only the changed bytes go back).
 *
 * Consistency (home-based release consistency):
 *  - ky_barrier: execution synchronisation; every write made before it by any rank is visible after it on
 *    every rank (changed bytes go back to their homes, cached copies are invalidated). Writes of different
 *    ranks to different bytes of one page all survive.
 *  - Every byte has an owner (ky_mapalloc: its element's rank in the mapping; else the page's home). Every
 *    synchronisation publishes each rank's writes to its own elements, even on a page homed at a neighbour
 *    (a block that does not end on a page boundary): ranks fetching the page afterwards see them.
 *  - ky_sync: execution synchronisation; cached copies (and local writes to them) stay.
 *  - ky_sync_drop: execution synchronisation; cached copies of pages homed elsewhere are discarded, and with
 *    them every rank's writes to other owners' elements (a home's too); writes to one's own elements are
 *    always kept (redundant halo computation, seed 000 Fig. 7, at any block size).
 *  - Between two synchronisations a rank reading a page homed elsewhere sees it as it was at the last
 *    synchronisation plus its own writes, never a later write of another rank (the home included).
 *  - ky_lock/ky_unlock: acquire/release; writes made before ky_unlock are seen by the next holder.
 * Collective calls (alloc, mapalloc, free of collective memory, barrier, sync, sync_drop) are made by one
 * thread per rank, all ranks in the same order (the syncs' barriers use the DSM's own team, so other
 * threads may run collectives of KY_TEAM_WORLD meanwhile). With OpenMP use the seed's pattern
 *     #pragma omp barrier / #pragma omp master / ky_sync(); / #pragma omp barrier
 * Every other call, and every fault, may come from any thread.
 *
 * Pointer-returning calls return NULL on failure with the reason in ky_last_error(). */
#ifndef KYOYU_DSM_H
#define KYOYU_DSM_H

#include <stddef.h>
#include <stdint.h>
#include "kyoyu/export.h"
#include "kyoyu/status.h"

KY_EXTERN_C_BEGIN

/* Collective: `bytes` of global memory whose every page has home `home` (0 .. nranks-1), zero-filled, in
 * *out (the same pointer on every rank; NULL on failure, which every rank reports alike). */
KY_API int ky_alloc(size_t bytes, int home, void **out);

/* Collective, mSMS's sms_mapalloc: an array of dims[0] x dims[1] x ... elements of `elem` bytes (row-major,
 * dims ends with -1), cut into divs[d] blocks along dimension d (divs ends with -1; block length
 * ceil(dims[d] / divs[d])), blocks numbered row-major and dealt cyclically to ranks first .. first+count-1.
 * A page's home is the home of its first byte (docs/api.md: "pages and homes"). */
KY_API void *ky_mapalloc(const int dims[], const int divs[], size_t elem, int first, int count);

/* Not collective: `bytes` homed at the caller; other ranks may use the pointer after a synchronisation
 * (barrier, sync, or a lock handed over) that follows this call. For global lists and trees. */
KY_API void *ky_alloc_local(size_t bytes);

/* Frees memory from ky_alloc/ky_mapalloc (collective) or ky_alloc_local (only by the rank that allocated
 * it; nobody may touch it afterwards). NULL is ignored. */
KY_API int ky_free(void *p);

/* Home rank of the page holding byte p, or a negative status if p is not in a live allocation. */
KY_API int ky_home_of(const void *p);

/* 1 if p lies inside the reserved global address space (allocated or not), else 0. */
KY_API int ky_is_global(const void *p);

KY_API int ky_barrier(void);
KY_API int ky_sync(void);
KY_API int ky_sync_drop(void);
/* ky_sync plus a promise, made by every rank, that until the next synchronisation no rank reads a page
 * homed elsewhere that it does not already hold (no faults on such pages, no preload/overload/push). Homes
 * then skip the write-protection that keeps the synchronised version for late fetchers, so computing on
 * home pages costs nothing extra (seed 000 Appendix 1: compute between two syncs, halos refreshed by
 * overload in an interval of their own). A fetch that breaks the promise is answered with the home's
 * current data and logged once. Like MPI's fence assertions, it changes cost, not results, of programs that
 * keep it. */
KY_API int ky_sync_nofetch(void);
/* ky_sync plus a promise, made by every rank, that until the next synchronisation no rank stores to pages
 * it is the home of (fetching is fine). Home pages opened by ky_sync_nofetch then stay open instead of
 * being write-protected again, and fetches are answered from them: the seed's preload pattern alternates
 * ky_sync_nostore (halo refresh by overload) and ky_sync_nofetch (compute) and never pays for protection.
 * A store that breaks the promise to a page left open goes unnoticed (a late fetch may see it); home pages
 * that were protected stay protected and keep their snapshot on a store, as after ky_sync. */
KY_API int ky_sync_nostore(void);

/* Node-shared mode, for programs whose parallel parts are free of data races and whose serial parts every
 * rank runs alike (OpenMP programs under kycc, whose run-time asks for it). Collective, before any
 * allocation: on = 1 asks for it, *active (may be NULL) says whether it is on. It is on only where every rank
 * runs on one node (not under KY_NODE_SPLIT=rank) and KY_DSM_NODE_SHARED is not 0; otherwise nothing changes.
 * Then every page (array views excepted) exists once on the node and every rank maps it: no faults, no page
 * transfers, and a synchronisation is a barrier of the node's processes. The program is in one of two phases:
 *  - serial (at the start): a rank's stores stay its own until the next synchronisation, which merges every
 *    rank's changed bytes into the one copy (as ky_barrier does with diffs): each rank sees its own writes
 *    and what was there at the last synchronisation;
 *  - parallel: stores go straight to the one copy; ranks see each other's stores at once (no isolation:
 *    concurrent writes to the same bytes are the program's race) and certainly after a synchronisation.
 * ky_dsm_phase(1) and ky_dsm_phase(0) are ky_barrier that begin a parallel and a serial phase (just
 * ky_barrier outside the mode). Locks merge the caller's serial writes at acquire and release; ky_fetch_add
 * and ky_compare_swap act on the one copy; preload, overload and push have nothing to do. ky_sync_drop
 * merges a serial phase's stores as ky_barrier does (outside the mode it drops writes to other owners'
 * elements): there is no cached copy to discard. */
KY_API int ky_dsm_node_mode(int on, int *active);
KY_API int ky_dsm_phase(int parallel);

/* Rectangular regions of a row-major global array at `base` with extents glb[0..ndim-1] (elements of
 * `elem` bytes). The region starts at base (pass &A[z0][y0][x0]) and spans region[d] elements along d.
 *  - preload: every page the region touches is fetched now in bulk (contiguous pages of one home in one
 *    transfer) and cached read-only (rw = 0) or read-write (rw = 1: no fault on the first write).
 *  - overload: the same region, already preloaded, is refreshed from the homes into the cached pages
 *    without page-state changes and without faults (use ky_sync, not sync_drop/barrier, in between). The
 *    caller's writes to its own elements stay; its writes to other owners' elements are replaced.
 *  - push: called by the home; the region's pages homed at the caller are sent to `to_rank`, which caches
 *    them read-only ahead of need (SCASH's update). Pages not homed at the caller are skipped. */
KY_API int ky_preload_array(void *base, const size_t glb[], const size_t region[], int ndim, size_t elem,
                            int rw);
KY_API int ky_overload_array(void *base, const size_t glb[], const size_t region[], int ndim, size_t elem,
                             int rw);
KY_API int ky_push_array(void *base, const size_t glb[], const size_t region[], int ndim, size_t elem,
                         int to_rank);

/* Global locks 0 .. KY_DSM_LOCKS-1 with acquire (ky_lock) and release (ky_unlock) semantics. */
#define KY_DSM_LOCKS 65536
KY_API int ky_lock(int id);
KY_API int ky_unlock(int id);
/* Acquire lock id only if no rank (no thread of this rank either) holds it now: KY_OK acquired (release with
 * ky_unlock), KY_PENDING held elsewhere (nothing changed), or an error. */
KY_API int ky_trylock(int id);

/* Atomically adds v to the long at global address p (8-byte aligned) at its home; *old (may be NULL)
 * receives the value before the add. */
KY_API int ky_fetch_add(long *p, long v, long *old);

/* Atomic compare-and-swap at the home of the `bytes`-wide word at global address p (bytes 4 or 8, p aligned
 * to it): if it equals `expected` it becomes `desired`. *old (may be NULL) receives the value found, so the
 * swap happened iff *old == expected. 4-byte words are compared and stored as uint32_t (pass the value in
 * the low 32 bits). Like ky_fetch_add, visible to later fetches at once; read such words with it, not with
 * plain loads of a cached copy. */
KY_API int ky_compare_swap(void *p, size_t bytes, uint64_t expected, uint64_t desired, uint64_t *old);

/* Per-rank statistics since ky_init (or the last ky_dsm_stats_reset). */
typedef struct {
    uint64_t read_faults, write_faults;    /* faults taken on pages not held / held read-only */
    uint64_t pages_fetched, bytes_fetched; /* by faults, preload, overload */
    uint64_t pages_preloaded, pages_overloaded, pages_pushed;
    uint64_t twins;                      /* twins made (first write to a cached page) */
    uint64_t diffs, diff_bytes;          /* pages written back as diffs, changed bytes sent */
    uint64_t home_snapshots;             /* home pages copied before the home's first write after a sync */
    uint64_t pages_served, bytes_served; /* fetches this rank answered as a home */
    uint64_t invalidations, drops;       /* cached pages invalidated (barrier) / dropped (sync_drop) */
    uint64_t barriers, syncs, lock_acquires;
    uint64_t unguarded_reads; /* pages fetched that their home wrote without a snapshot because
                               * nobody had fetched them recently (KY_DSM_SNAPSHOT=2): such a
                               * read may see the home's writes of the current interval */
    double coherence_s;       /* time in faults and synchronisation calls */
} ky_dsm_stats_t;
KY_API int ky_dsm_stats(ky_dsm_stats_t *out);
KY_API int ky_dsm_stats_reset(void);
/* Print this rank's statistics on one line to stderr (what KY_STATS=1 does at ky_finalize). */
KY_API int ky_dsm_stats_print(void);

/* Page size (KY_PAGE_SIZE) and the reserved range. */
KY_API size_t ky_page_size(void);
KY_API int ky_gas_range(void **base, size_t *bytes);

KY_EXTERN_C_END

#endif
