/* Internal: state shared by the files of the DSM layer.
 *
 * Memory. One memfd per rank, three times KY_GAS_SIZE long and sparse: [0, G) holds the data of every page
 * this rank has (home pages and cached copies), [G, 2G) the homes' snapshots, [2G, 3G) the twins. The
 * application sees [0, G) at the global address (the "app view", whose protection encodes page states and
 * makes faults); the runtime reaches all three through one private read-write mapping (the "service
 * view"), so fetched data is written in before a page is opened to the application, and the progress
 * thread can serve and apply diffs without touching protections.
 *
 * Page states (one byte per page, under the page's stripe lock):
 *   cached pages (homed elsewhere)   NONE (no access) -> RO (fetched) -> RW (twin made, dirty)
 *   home pages                       HOME_RO (write-protected: the synchronised version is the data)
 *                                    -> HOME_RW (snapshot taken, the home writes freely)
 *                                    -> HOME_FREE (written without a snapshot: no rank ever fetched the page
 *                                       (or, with KY_DSM_SHARED_WINDOW >= 0, none in that many intervals);
 *                                       stays open until some rank fetches it, then is guarded from the
 *                                       next interval on)
 *                                    -> HOME_FRESH (guarded, but all zeros at the last synchronisation, as
 *                                       allocated: the snapshot is implied, nothing is copied; fetches get
 *                                       zeros; kyi_pg_materialise writes the zeros out where something must
 *                                       change the snapshot)
 * A thread fetching a page marks it FETCHING and drops the lock while it waits, so no lock is ever held
 * across a remote wait (the progress thread, which serves other ranks, only takes stripe locks briefly).
 *
 * Versions. Every synchronisation (barrier, sync, sync_drop) ends an interval. A home answers fetches of
 * interval k from the snapshot of pages it wrote in k (or the data of pages it did not), so a late fetcher
 * never sees the home's newer writes. Requests carry the requester's interval number; a request from an
 * interval the home has not reached yet waits in a queue until the home's own synchronisation publishes. */
#ifndef KYI_DSM_DSM_H
#define KYI_DSM_DSM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "comm/chan.h"
#include "dsm/store.h"
#include "kyoyu.h"
#include "kyoyu/dsm.h"
#include "runtime/hb.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

/* HOME_OPEN: writable without a snapshot, in an interval opened by ky_sync_nofetch. HOME_FRESH: HOME_RW
 * whose snapshot is all zeros and was never written (see above). */
enum {
    KYI_PG_NONE = 0,
    KYI_PG_RO,
    KYI_PG_RW,
    KYI_PG_FETCHING,
    KYI_PG_HOME_RO,
    KYI_PG_HOME_RW,
    KYI_PG_HOME_OPEN,
    KYI_PG_HOME_FREE,
    KYI_PG_HOME_FRESH,
    KYI_PG_NODE,     /* node-shared mode (node.c): mapped from the node copy, protection by the phase */
    KYI_PG_NODE_PRIV /* node-shared mode, serial phase: this rank's private copy, twin kept */
};
static inline int kyi_pg_is_home(int s)
{
    return s >= KYI_PG_HOME_RO && s <= KYI_PG_HOME_FRESH;
}
/* KY_DSM_SNAPSHOT: which home pages keep the synchronised version while the home writes them. */
enum { KYI_SNAP_OFF = 0, KYI_SNAP_ALL = 1, KYI_SNAP_SHARED = 2 };

/* Active-message indices of the DSM (the range reserved for upper layers). */
enum {
    KYI_AM_DSM_FETCH = 200,
    KYI_AM_DSM_DIFF,
    KYI_AM_DSM_PUSH,
    KYI_AM_DSM_FADD,
    KYI_AM_DSM_LOCK,
    KYI_AM_DSM_UNLOCK,
    KYI_AM_DSM_GRANT,
    KYI_AM_DSM_CAS
};

/* The element mapping of a ky_mapalloc allocation (mSMS): who owns each element, whatever page it is on. */
typedef struct {
    int nd, dims[15], divs[15];
    size_t elem;
    int first, count;
    int inner_dim; /* the innermost dimension cut into several blocks (-1: none, one owner) */
    size_t inner;  /* elements per index of inner_dim (product of the extents inside it) */
} kyi_map_t;

/* One allocation. Collective ones are known to every rank; local ones only to their home. */
typedef struct {
    size_t off, bytes; /* byte offset in the global space; bytes rounded up to pages */
    size_t user_bytes; /* what the caller asked for: faults past it are reported */
    int collective;
    int home;              /* single home, or -1: per-page table */
    int *page_home;        /* [bytes / page] for ky_mapalloc */
    kyi_map_t *map;        /* ky_mapalloc: the element owners (owner.c) */
    kyi_dsm_store_t store; /* store.read != NULL: homed in another layer's memory (store.h) */
} kyi_alloc_t;

/* kyi_page_home of a page of a store allocation: no rank is its home in the DSM's sense. */
#define KYI_HOME_STORE (-2)

typedef struct {
    size_t len, cap;
    size_t *v;
} kyi_vec_t;

#define KYI_DSM_STRIPES 1024
#define KYI_DIFF_BITMAP 0x80000000u /* diff record flag: bitmap + packed bytes instead of one run */

typedef struct {
    int ready;
    char *base; /* app view */
    char *svc;  /* service view: data | snapshots | twins */
    size_t size, page, page_shift, npages;
    int memfd;
    int snapshot;           /* KY_DSM_SNAPSHOT (KYI_SNAP_*): 0 when off */
    uint32_t shared_window; /* KY_DSM_SHARED_WINDOW (sticky: 2, the allocation's grace) */
    int sticky;             /* KY_DSM_SHARED_WINDOW < 0: a page once fetched stays guarded until freed */
    uint32_t *fetched_at;   /* [npages] in the meta part: interval of the last fetch of a home page (or of
                             * its allocation); same-node readers write it under the home's stripe lock */
    uint8_t *state;         /* [npages], in the shared meta part (peer.c) */
    uint8_t *sending;       /* [npages] zero-copy replies in flight from a home page (serve.c) */
    _Atomic long replies;   /* zero-copy and pooled replies not yet released (finalize waits for them) */
    uint8_t *mixed;         /* [npages] 1: the page holds elements of several owners (ky_mapalloc, owner.c) */
    uint8_t *zero; /* [npages] 1: a home page still as allocated (all zeros) at the last synchronisation, so
                    * its synchronised version needs no copy (HOME_FRESH); cleared by any change that
                    * others may see: a publish of the home's writes, a diff, an atomic, an open interval */
    _Atomic uint64_t
        acquires; /* lock acquisitions begun: a fetch that overlaps one is done again (locks.c) */
    pthread_mutex_t release_lock; /* lock acquire/release flushes and publishes, one at a time (locks.c) */
    pthread_mutex_t *stripe;      /* [KYI_DSM_STRIPES] process-shared: same-node ranks take them too */
    pthread_cond_t *fetched;      /* [KYI_DSM_STRIPES] */
    struct kyi_meta *meta;        /* this rank's meta part (epoch, stripes, states) */
    size_t meta_bytes;
    struct kyi_peer *peer; /* [nranks] same-node homes mapped here for direct reads (peer.c), or NULL */
    int direct;            /* KY_DSM_DIRECT */
    /* allocations: collective ones from the bottom half, local ones from this rank's slice */
    pthread_rwlock_t table_lock;
    kyi_alloc_t *allocs; /* sorted by off */
    size_t nallocs, cap_allocs;
    size_t coll_end, slice_size;
    int nstores;    /* live store allocations (collective, so every rank has the same number) */
    ky_team_t team; /* a copy of the world team for the synchronisations' barriers (sync.c) */
    /* page lists (under lists_lock) */
    pthread_mutex_t lists_lock;
    kyi_vec_t held;    /* cached pages homed elsewhere (RO or RW) */
    kyi_vec_t dirty;   /* cached pages in RW with a twin */
    kyi_vec_t written; /* home pages in HOME_RW */
    kyi_vec_t freed;   /* home pages in HOME_FREE */
    /* write notices (sync.c): pages this rank changed since the last barrier, as a home or by a diff */
    int notices;          /* snapshots on every home page (KY_DSM_SNAPSHOT=1): barriers use notices */
    int notices_all;      /* something changed that the list cannot name: the next barrier drops all */
    kyi_vec_t noticed;    /* (under lists_lock) */
    uint8_t *notice_mark; /* [npages] scratch of a barrier: pages some other rank changed */
    /* intervals */
    pthread_mutex_t epoch_lock;
    uint64_t epoch;               /* synchronisations this rank completed */
    void *deferred;               /* fetch requests from a later interval (serve.c) */
    _Atomic uint64_t synced;      /* synchronisations this rank finished (the last step included) */
    int open_interval;            /* some home pages are HOME_OPEN (ky_sync_nofetch) */
    _Atomic int nostore_interval; /* ky_sync_nostore: no home stores until the next synchronisation (the
                                   * progress thread reads it while serving) */
    /* node-shared mode (node.c) */
    int node;         /* on: every non-store page is mapped from the node copy */
    int node_counter; /* the node barrier on one counter (KY_DSM_NODE_BARRIER=counter, or > 256 ranks) */
    int parallel;     /* the phase: 1 parallel (read-write, no isolation), 0 serial (private on write) */
    int tfd;          /* the node copy: rank 0's memfd (its data part) */
    char *truth;      /* the node copy's data part, read-write (rank 0: svc) */
    kyi_vec_t priv;   /* (under lists_lock) pages made private in this serial phase */
    kyi_vec_t opened; /* (under lists_lock) pairs first page, count: made writable in this parallel phase */
} kyi_dsm_t;

extern kyi_dsm_t kyi_dsm;

/* Statistics: atomics mirroring ky_dsm_stats_t (coherence time in ns). */
typedef struct {
    atomic_ullong read_faults, write_faults, pages_fetched, bytes_fetched, pages_preloaded, pages_overloaded,
        pages_pushed, twins, diffs, diff_bytes, home_snapshots, unguarded_reads, pages_served, bytes_served,
        invalidations, drops, barriers, syncs, lock_acquires, coherence_ns;
} kyi_dsm_stats_t;
extern kyi_dsm_stats_t kyi_dsm_stats;
#define KYI_DSM_COUNT(field, n) atomic_fetch_add_explicit(&kyi_dsm_stats.field, (n), memory_order_relaxed)

static inline size_t kyi_pg(const void *p)
{
    return (size_t)((const char *)p - kyi_dsm.base) >> kyi_dsm.page_shift;
}
static inline char *kyi_pg_data(size_t pg)
{
    return kyi_dsm.svc + (pg << kyi_dsm.page_shift);
}
static inline char *kyi_pg_snap(size_t pg)
{
    return kyi_dsm.svc + kyi_dsm.size + (pg << kyi_dsm.page_shift);
}
static inline char *kyi_pg_twin(size_t pg)
{
    return kyi_dsm.svc + 2 * kyi_dsm.size + (pg << kyi_dsm.page_shift);
}
/* Where a fetch lands: the data slot, or (scratch) the snapshot slot, which a cached page does not use. */
static inline char *kyi_pg_dst(size_t pg, int scratch)
{
    return scratch ? kyi_pg_snap(pg) : kyi_pg_data(pg);
}
static inline char *kyi_pg_app(size_t pg)
{
    return kyi_dsm.base + (pg << kyi_dsm.page_shift);
}
static inline pthread_mutex_t *kyi_pg_lock(size_t pg)
{
    return &kyi_dsm.stripe[pg % KYI_DSM_STRIPES];
}
static inline int kyi_in_gas(const void *p)
{
    return kyi_dsm.ready && (const char *)p >= kyi_dsm.base && (const char *)p < kyi_dsm.base + kyi_dsm.size;
}

/* Copy page contents (data, twins, snapshots): see runtime/hb.h for why TSan builds do not check them. */
static inline void kyi_page_copy(void *dst, const void *src, size_t n)
{
    kyi_hb_ignore_begin();
    memcpy(dst, src, n);
    kyi_hb_ignore_end();
}

/* Home page pg (stripe lock held) no longer equals its allocation's zeros once others may see the change:
 * a HOME_FRESH page gets its implied snapshot written out (zeros) and becomes HOME_RW, so whatever follows
 * can update or read the snapshot as on any guarded page. */
static inline void kyi_pg_materialise(size_t pg)
{
    if (kyi_dsm.state[pg] == KYI_PG_HOME_FRESH) {
        kyi_hb_ignore_begin();
        memset(kyi_pg_snap(pg), 0, kyi_dsm.page);
        kyi_hb_ignore_end();
        /* atomic: kyi_publish reads home pages' states without their locks while the engine may serve a
         * CAS or fetch-add from a rank that already left the barrier (FRESH and RW are alike to it) */
        __atomic_store_n(&kyi_dsm.state[pg], KYI_PG_HOME_RW, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&kyi_dsm.zero[pg], 0, __ATOMIC_RELAXED);
}

/* space.c */
int kyi_dsm_init(void);
int kyi_dsm_finalize(void);
/* Home of page pg (-1: not in an allocation this rank knows; for another rank's local slice the slice's
 * rank; KYI_HOME_STORE for a store allocation). *a receives the allocation when known. Caller holds
 * table_lock for reading. */
int kyi_page_home(size_t pg, const kyi_alloc_t **a);
const kyi_alloc_t *kyi_alloc_find(size_t off);
int kyi_require_dsm(const char *call);
void kyi_vec_push(kyi_vec_t *v, size_t x);
/* Set the application's access to pages [pg, pg+n): PROT_NONE / READ / READ|WRITE. */
int kyi_protect(size_t pg, size_t n, int prot);
/* Sort pages[0..n) and set the application's access to each run of consecutive ones with one call. Used
 * inside collective synchronisations, where it must come before the page states change: a thread touching
 * a page in between faults, finds the old state, and retries until the new one is set. */
void kyi_protect_runs(size_t *pages, size_t n, int prot);
/* Set every page this rank is home of that is in state `from` (any home state if from < 0) to `to`, with
 * protection prot, a run at a time. */
void kyi_home_pages_set(int from, int to, int prot);

/* fault.c */
int kyi_fault_install(void);
void kyi_fault_uninstall(void);
/* Stripe lock held. RO -> RW with a twin (dirty), HOME_RO -> HOME_RW with a snapshot (written). */
int kyi_open_for_write(size_t pg);
/* Stripe lock held. A cached page whose data just arrived becomes RO (held), then RW when `write`. */
int kyi_install(size_t pg, int write);
/* The same after a fetch begun when kyi_dsm.acquires was *acq: KY_PENDING (nothing changed) if a lock
 * acquire has begun since, so the caller fetches again. */
int kyi_install_checked(size_t pg, int write, const uint64_t *acq);
/* Make page pg present for the application (read, or write when `write`), as a fault would. */
int kyi_touch_page(const char *call, size_t pg, int write);

/* peer.c: the meta part of the memfd and same-node homes read directly */
#define KYI_NODE_FLAG_RANKS 256 /* ranks the node barrier's flags serve; more fall back to a counter */
typedef struct kyi_meta {
    _Atomic uint64_t epoch;        /* mirror of kyi_dsm.epoch for same-node readers */
    _Atomic uint32_t node_arrived; /* rank 0's: the node barrier of node-shared mode (node.c) */
    /* the generation the waiters poll on a line of its own, away from the arrivals' fetch_add (16 ranks) */
    char pad0[52];
    _Atomic uint32_t node_gen;
    char pad[60];
    /* rank 0's: the dissemination barrier of node-shared mode (node.c), a line per rank: round k's flag of
     * rank r, written by rank r - 2^k, holds the barrier's episode */
    struct {
        _Atomic uint32_t round[16];
    } node_flags[KYI_NODE_FLAG_RANKS];
    pthread_mutex_t stripe[KYI_DSM_STRIPES];
    pthread_cond_t fetched[KYI_DSM_STRIPES];
} kyi_meta_t;
typedef struct kyi_peer {
    char *map;        /* data | snapshots of the peer, read-only */
    kyi_meta_t *meta; /* the peer's meta part, read-write (its stripe locks) */
    uint8_t *state;
    uint32_t *fetched_at;
    int pid, memfd; /* the peer's process and memfd number (node.c opens rank 0's through /proc) */
} kyi_peer_t;
/* This rank's interval as a home (what same-node readers see). */
static inline uint64_t kyi_home_epoch(void)
{
    return atomic_load_explicit(&kyi_dsm.meta->epoch, memory_order_relaxed);
}

/* fetched_at: bit 31 set when a rank fetched the page (not only allocated it); the rest is the interval. */
#define KYI_FETCHED 0x80000000u

/* Does home page pg keep its synchronised version in the home's interval `epoch`? Under KYI_SNAP_SHARED:
 * only if some rank fetched it (or it was allocated) within the last shared_window intervals. */
static inline int kyi_pg_guarded(size_t pg, uint64_t epoch)
{
    if (kyi_dsm.snapshot != KYI_SNAP_SHARED || kyi_dsm.mixed[pg]) return kyi_dsm.snapshot != KYI_SNAP_OFF;
    uint32_t f = __atomic_load_n(&kyi_dsm.fetched_at[pg], __ATOMIC_RELAXED); /* a server may mark it now */
    if ((f & KYI_FETCHED) && kyi_dsm.sticky) return 1;
    return (((uint32_t)epoch - f) & ~KYI_FETCHED) <= kyi_dsm.shared_window;
}
/* The fetched_at entry of a fetch in interval epoch (an allocation stores the bare interval). */
static inline uint32_t kyi_fetch_mark(uint64_t epoch)
{
    return ((uint32_t)epoch & ~KYI_FETCHED) | KYI_FETCHED;
}

/* Size of the meta part for npages pages. */
size_t kyi_meta_size(size_t npages);
/* Initialise this rank's meta part (at svc + 3 * size) and point kyi_dsm at it. */
void kyi_meta_init(void);
/* Collective: map the memfds of same-node ranks (KY_DSM_DIRECT=1); a rank that cannot be mapped is left to
 * the message path. */
void kyi_peers_open(void);
void kyi_peers_close(void);
/* Copy pages [pg, pg+n) of same-node home `home` straight from its memory: KY_OK, or KY_PENDING when the
 * message path must do it (not mapped, the home not yet in the requester's interval, a page not live). */
int kyi_peer_read(int home, size_t pg, size_t n, int scratch);

/* fetch.c: requester side */
/* Fetch pages [pg, pg+n) (one home) into their data slots; the pages must be FETCHING or held by the
 * caller's protocol. Returns KY_OK or an error naming the call. */
int kyi_fetch_run(const char *call, int home, size_t pg, size_t n);
/* Start a fetch of [pg, pg+n) from home; complete with kyi_fetch_wait. */
typedef struct {
    kyi_chan_req_t req; /* the pages' reply (not direct) */
    int home;
    size_t pg, n;
    int direct;  /* already copied by kyi_peer_read */
    int scratch; /* into the pages' snapshot slots (an overload merges them under the page locks) */
} kyi_fetch_t;
int kyi_fetch_start(const char *call, kyi_fetch_t *f, int home, size_t pg, size_t n, int scratch);
int kyi_fetch_wait(const char *call, kyi_fetch_t *f, int nf);

/* serve.c: home side and handlers */
int kyi_serve_register(void);
void kyi_serve_pool_free(void);
/* The atomics at their home (locks.c calls them directly when the home is the caller). */
int64_t kyi_fadd_local(size_t off, int64_t v);
uint64_t kyi_cas_local(size_t off, size_t bytes, uint64_t expected, uint64_t desired);
/* Compare-and-swap of the 4- or 8-byte word at p; returns the value found. */
uint64_t kyi_cas_word(void *p, size_t bytes, uint64_t expected, uint64_t desired);
/* Wait until no reply is being sent from home page pg's data or snapshot (before changing them). */
void kyi_wait_unsent(size_t pg);
/* Copy the synchronised version of home pages [pg, pg+n) into dst. */
void kyi_serve_copy(char *dst, size_t pg, size_t n);
/* Home page pg (stripe lock held), mixed and written since the synchronisation: the bytes of other owners go
 * back to the synchronised version (the snapshot), as a cached copy's writes to them would be dropped
 * (ky_sync_drop, ky_overload_array). Nothing to do on other pages. */
void kyi_revert_foreign(size_t pg);
/* The home's synchronisation: write-protect the pages it wrote, drop their snapshots, advance the
 * interval and answer requests that were waiting for it. keep_open: pages opened by ky_sync_nofetch stay
 * open (the next interval is another promised one). */
void kyi_publish(int advance_epoch, int keep_open, int drop, int noticed);
/* sync.c: note a page this rank changed (as its home, or by a diff): the next barrier's write notice. Takes
 * lists_lock (a stripe lock may be held). */
void kyi_notice(size_t pg);
/* lists_lock held: past a bound, the list goes and the next barrier drops every cached page. */
void kyi_notices_trim(void);
/* The last step of a synchronisation: count it and install pushes that waited for it. */
void kyi_sync_done(void);

/* owner.c: which rank owns which bytes of a page (not the same as the page's home: a page straddling two
 * ky_mapalloc blocks is homed at the owner of its first byte) */
/* Call fn(ctx, offset in page, length, owner) for each maximal run of page pg's bytes with one owner, in
 * order; bytes past the allocation's size belong to the page's home. Stops at and returns fn's first
 * nonzero result. Caller holds table_lock for reading. */
typedef int (*kyi_owner_fn)(void *ctx, size_t off, size_t len, int owner);
int kyi_owner_runs(size_t pg, kyi_owner_fn fn, void *ctx);
/* Element size of page pg's allocation for element-wise writes back (1 where there are no elements). */
size_t kyi_owner_grain(size_t pg);
/* Build a ky_mapalloc allocation's mapping and mark its pages mixed; NULL when out of memory. */
kyi_map_t *kyi_map_new(const int *dims, const int *divs, int nd, size_t elem, int first, int count);
void kyi_map_mark_mixed(const kyi_map_t *m, size_t pg0, size_t user_bytes);
/* Owner of element e of a mapping. */
int kyi_map_owner(const kyi_map_t *m, size_t e);

/* store.c: pages of store allocations (store.h) */
/* Fill the data slots of pages [pg, pg+n) (store pages, possibly of several allocations) from their stores.
 */
int kyi_store_fetch(const char *call, size_t pg, size_t n, int scratch);
/* ky_home_of of byte `off` of the space, in a store allocation: the store's answer. */
int kyi_store_home(const char *call, size_t off);
/* Diff of dirty store page pg against its twin, as whole changed elements copied into `out` (stripe lock
 * held); kyi_store_flush writes them and empties it (no lock held). */
typedef struct kyi_store_runs kyi_store_runs_t;
int kyi_store_diff(const char *call, kyi_store_runs_t **out, size_t pg);
/* The same for the elements this rank owns only (store.home_of), which then count as written back (their
 * twin follows the data). */
int kyi_store_diff_owned(const char *call, kyi_store_runs_t **out, size_t pg);
int kyi_store_flush(const char *call, kyi_store_runs_t **runs);

/* sync.c */
/* Send the diffs of every dirty cached page to their homes and wait until applied; the changes of store
 * pages are written too, or, with `defer`, handed back for the caller to write (kyi_store_flush). keep: the
 * pages stay cached read-only with the written data (lock release); else (ky_barrier, collective) they are
 * left mapped writable in state RO for the caller's invalidation, which must follow before any thread runs.
 */
int kyi_flush_diffs(const char *call, int keep, kyi_store_runs_t **defer);
/* Cached pages of other homes: NONE (invalidate). */
void kyi_invalidate_all(int dropped, int collective);
/* A synchronisation other than ky_barrier: the bytes of dirty cached pages that this rank owns go to their
 * homes (applied at the homes' publish, as a home's own writes would be seen), changed elements whole; the
 * pages stay dirty for the rest. Store pages' owned elements are handed back in *defer. */
int kyi_flush_owned(const char *call, kyi_store_runs_t **defer);
/* Lock acquire: every cached page goes (dirty ones after their diffs are applied at home). */
int kyi_acquire_invalidate(const char *call);

/* locks.c */
int kyi_locks_register(void);

/* node.c: node-shared mode (ky_dsm_node_mode) */
/* Map a new allocation's pages [pg, pg+n) from the node copy with the phase's protection (state NODE). */
int kyi_node_map_alloc(size_t pg, size_t n);
/* A freed range: this rank's own memfd mapped back, inaccessible; the node copy's pages returned. */
void kyi_node_release(size_t pg, size_t n);
/* A fault (or touch) on page pg in node-shared mode, stripe lock held: another rank's local page mapped, a
 * store in a serial phase made private, or the mapping brought in line with the phase. home: pg's home. */
int kyi_node_touch(const char *call, size_t pg, int write, int home);
/* A synchronisation of node-shared mode: the node barrier, private pages merged, and the phase changed to
 * `phase` (0 serial, 1 parallel, -1 unchanged). */
int kyi_node_sync(const char *call, int phase);
/* Lock acquire and release: this rank's private pages go into the node copy (nothing outside the mode). */
int kyi_node_flush(void);
/* The node copy's word at byte `off` (atomics act on it directly), this rank's private pages merged first. */
char *kyi_node_word(size_t off);
void kyi_node_finalize(void);

#endif
