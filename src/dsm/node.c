/* Node-shared mode (ky_dsm_node_mode): where every rank runs on one node, the global space needs no page
 * protocol at all. Every page lives once, in rank 0's memfd (the "node copy"), and every rank maps it at the
 * page's global address, so loads and stores go straight to the one copy and the hardware keeps it coherent:
 * no faults, no fetches, no twins or diffs at a barrier, which becomes a barrier of the node's processes in
 * shared memory. NPB under kycc paid 0.3-3 ms of page protocol per OpenMP barrier on 16 ranks of one host.
 *
 * That is only right for data-race-free code, which OpenMP's parallel parts are. kycc also runs a program's
 * serial parts on every rank alike (each rank needs its own locals), and there the ranks write the same
 * variables: `x = x + 1` run by 16 ranks on one copy adds 16. So the mode has two phases (ky_dsm_phase):
 *  - parallel: a ky_barrier is a node barrier and nothing else; a store opens the run of pages around it
 *    read-write until the phase ends (open_run);
 *  - serial: the node copy mapped read-only. A rank's first store to a page makes it private to the rank
 *    (a copy in the rank's snapshot slot, mapped over the page, with a twin of the same snapshot:
 *    make_private); at the next synchronisation every rank writes the bytes it changed into the node copy,
 *    as diffs to homes do, and maps the page shared again.
 *    So every rank sees its own writes and the copy as of the last synchronisation, as in the page protocol.
 * Store allocations (array views homed in another layer's memory) keep the page protocol. A rank alone (solo)
 * maps the node copy read-write from the start: with nobody to race, its serial parts store straight into it.
 *
 * The node barrier is a counter and a generation in rank 0's meta part, which every rank maps (peer.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dsm/dsm.h"
#include "runtime/config.h"

/* the meta part holding the node barrier: rank 0's */
static kyi_meta_t *node_meta(void)
{
    return kyi_rt.rank == 0 ? kyi_dsm.meta : kyi_dsm.peer[0].meta;
}

/* A dissemination barrier (log2 P rounds; in round k rank r signals r + 2^k and waits for r - 2^k): each
 * round one cache line crosses between two cores, where a counter takes P atomic updates of one line in turn
 * (NPB SP class A on 16 ranks passes 9.7 million barriers). Flags hold the episode, which only grows, so a
 * fast rank's next signal never hides the one before. */
static int node_barrier(const char *call)
{
    kyi_meta_t *m = node_meta();
    int n = kyi_rt.nranks, me = kyi_rt.rank;
    static uint32_t episode; /* every rank passes the same barriers: the same count everywhere */
    uint32_t e = ++episode;
    kyi_waiter_t w;
    int waiting = 0;
    if (kyi_dsm.node_counter) {
        uint32_t gen = atomic_load_explicit(&m->node_gen, memory_order_acquire);
        if (atomic_fetch_add_explicit(&m->node_arrived, 1, memory_order_acq_rel) == (uint32_t)n - 1) {
            atomic_store_explicit(&m->node_arrived, 0, memory_order_relaxed);
            atomic_fetch_add_explicit(&m->node_gen, 1, memory_order_release);
            return KY_OK;
        }
        kyi_waiter_init_program(&w, call, "every rank of the node to arrive at the barrier");
        while (atomic_load_explicit(&m->node_gen, memory_order_acquire) == gen) kyi_waiter_pause(&w);
        return KY_OK;
    }
    for (int k = 0, d = 1; d < n; k++, d <<= 1) {
        atomic_store_explicit(&m->node_flags[(me + d) % n].round[k], e, memory_order_release);
        _Atomic uint32_t *f = &m->node_flags[me].round[k];
        while ((int32_t)(atomic_load_explicit(f, memory_order_acquire) - e) < 0) {
            if (!waiting)
                kyi_waiter_init_program(&w, call, "every rank of the node to arrive at the barrier");
            waiting = 1;
            kyi_waiter_pause(&w);
        }
    }
    return KY_OK;
}

/* Every page of the node copy is mapped read-only but for the runs stores opened in this parallel phase
 * (open_run) and the private pages of this serial phase. Opening everything at each parallel phase and
 * write-protecting it all again at the next serial one walked every page table entry twice a region: NPB CG
 * class A (50 MB, mostly the matrix, which the parallel parts only read) spent about 1 ms a region on it. */
#define NODE_RUN_BYTES ((size_t)1 << 20)

/* Map pages [pg, pg+n) of the node copy at their global address. */
static int map_node(size_t pg, size_t n, int prot)
{
    size_t off = pg << kyi_dsm.page_shift, len = n << kyi_dsm.page_shift;
    kyi_hb_ignore_begin(); /* page contents: the mapping resets the pages' shadow (make_private) */
    void *m = mmap(kyi_dsm.base + off, len, prot, MAP_SHARED | MAP_FIXED, kyi_dsm.tfd, (off_t)off);
    kyi_hb_ignore_end();
    if (m == MAP_FAILED)
        return kyi_fail(KY_ERR_SYSTEM, "dsm", "mapping %zu pages of the node copy failed: %s", n,
                        strerror(errno));
    return KY_OK;
}

/* One rank alone: its serial parts run once, so nothing needs a private copy, and no store needs a fault.
 * Pages are mapped read-write for good (NPB SP class W on one kycc rank: 3 million phase changes, each
 * serial part's stores privatised and merged again, 1.8x slower than the private-copy-free run). */
static int solo(void)
{
    return kyi_rt.nranks == 1;
}

int kyi_node_map_alloc(size_t pg, size_t n)
{
    KYI_CHECK(map_node(pg, n, solo() ? PROT_READ | PROT_WRITE : PROT_READ));
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(kyi_pg_lock(pg + i));
        kyi_dsm.state[pg + i] = KYI_PG_NODE;
        pthread_mutex_unlock(kyi_pg_lock(pg + i));
    }
    return KY_OK;
}

void kyi_node_release(size_t pg, size_t n)
{
    size_t off = pg << kyi_dsm.page_shift, len = n << kyi_dsm.page_shift;
    /* back to this rank's own memfd, inaccessible, and the node copy's memory returned (zeros for reuse) */
    mmap(kyi_dsm.base + off, len, PROT_NONE, MAP_SHARED | MAP_FIXED, kyi_dsm.memfd, (off_t)off);
    fallocate(kyi_dsm.tfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
    /* and the snapshot slots that held this rank's private copies (make_private) */
    fallocate(kyi_dsm.memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(kyi_dsm.size + off),
              (off_t)len);
}

/* Stripe lock of pg held, state NODE, serial phase: the page becomes this rank's private copy. */
static int make_private(size_t pg)
{
    size_t off = pg << kyi_dsm.page_shift;
    /* The private copy and the twin are one snapshot of the node copy. Mapping the file page privately would
     * take its copy at the first store instead, and an atomic on the node copy in between (another rank's, or
     * a sibling thread's) would differ from the twin and be merged back as this rank's store, undoing the
     * atomics after it (lost fetch_adds beside a locked update of the same page, 4 ranks under
     * ThreadSanitizer). So the copy is made first, in this rank's snapshot slot of the page (which the mode
     * does not use otherwise; on rank 0 the node copy is the data slots of the same memfd), and mapped over
     * the read-only page in one step: until then a sibling thread's store faults and waits for the stripe
     * lock, and none lands in a page about to be overwritten. (mremap of an anonymous page would do the same,
     * but returned EINVAL in Kyoyu's processes on the development machine, though not in a small program.)
     * Page contents (runtime/hb.h): ignored by ThreadSanitizer, which would take the mapping for a write of
     * the whole page. */
    kyi_hb_ignore_begin();
    kyi_page_copy(kyi_pg_snap(pg), kyi_dsm.truth + off, kyi_dsm.page);
    kyi_page_copy(kyi_pg_twin(pg), kyi_pg_snap(pg), kyi_dsm.page);
    void *m = mmap(kyi_dsm.base + off, kyi_dsm.page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                   kyi_dsm.memfd, (off_t)(kyi_dsm.size + off));
    kyi_hb_ignore_end();
    if (m == MAP_FAILED)
        return kyi_fail(KY_ERR_SYSTEM, "page fault", "a private copy of a page of the node copy failed: %s",
                        strerror(errno));
    kyi_dsm.state[pg] = KYI_PG_NODE_PRIV;
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_push(&kyi_dsm.priv, pg);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    KYI_DSM_COUNT(twins, 1);
    return KY_OK;
}

/* A store in a parallel phase: the aligned run of NODE_RUN_BYTES around pg, within its allocation, becomes
 * writable until the next serial phase (stripe lock of pg held; the others' states stay NODE). */
static int open_run(size_t pg)
{
    size_t run = NODE_RUN_BYTES >> kyi_dsm.page_shift, lo = pg, hi = pg + 1;
    if (!run) run = 1;
    pthread_rwlock_rdlock(&kyi_dsm.table_lock);
    const kyi_alloc_t *a = kyi_alloc_find(pg << kyi_dsm.page_shift);
    if (a) {
        size_t a0 = a->off >> kyi_dsm.page_shift, a1 = (a->off + a->bytes) >> kyi_dsm.page_shift;
        lo = pg / run * run;
        hi = lo + run;
        if (lo < a0) lo = a0;
        if (hi > a1) hi = a1;
        if (hi <= pg) hi = pg + 1; /* an allocation ending inside its last page */
    }
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    /* only pages mapped from the node copy: another rank's local allocation is mapped a run at a time
     * (map_foreign), and opening one of its pages not mapped yet would open this rank's own empty page */
    for (size_t i = pg + 1; i < hi; i++)
        if (__atomic_load_n(&kyi_dsm.state[i], __ATOMIC_ACQUIRE) != KYI_PG_NODE) {
            hi = i;
            break;
        }
    for (size_t i = pg; i > lo; i--)
        if (__atomic_load_n(&kyi_dsm.state[i - 1], __ATOMIC_ACQUIRE) != KYI_PG_NODE) {
            lo = i;
            break;
        }
    KYI_CHECK(kyi_protect(lo, hi - lo, PROT_READ | PROT_WRITE));
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_push(&kyi_dsm.opened, lo);
    kyi_vec_push(&kyi_dsm.opened, hi - lo);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    return KY_OK;
}

/* Another rank's local allocation, first touched here: map the run of its live pages around pg. */
static int map_foreign(const char *call, int home, size_t pg)
{
    kyi_peer_t *p = &kyi_dsm.peer[home];
    size_t end = kyi_dsm.coll_end + (size_t)(home + 1) * kyi_dsm.slice_size;
    end >>= kyi_dsm.page_shift;
    size_t n = 0;
    while (pg + n < end && n < 256 && __atomic_load_n(&p->state[pg + n], __ATOMIC_ACQUIRE) == KYI_PG_NODE)
        n++;
    if (!n)
        return kyi_fail(KY_ERR_RANGE, call, "address %p is in the global space but not in a live allocation",
                        (void *)kyi_pg_app(pg));
    /* pg's stripe is held; the others are NONE here, and only this path changes them: no lock needed to map
     */
    KYI_CHECK(map_node(pg, n, PROT_READ));
    for (size_t i = 0; i < n; i++) kyi_dsm.state[pg + i] = KYI_PG_NODE;
    return KY_OK;
}

int kyi_node_touch(const char *call, size_t pg, int write, int home)
{
    int s = kyi_dsm.state[pg];
    if (s == KYI_PG_NONE) {
        if (home < 0 || home == kyi_rt.rank || home >= kyi_rt.nranks)
            return kyi_fail(KY_ERR_RANGE, call,
                            "address %p is in the global space but not in a live allocation",
                            (void *)kyi_pg_app(pg));
        KYI_CHECK(map_foreign(call, home, pg));
        s = KYI_PG_NODE;
    }
    if (s == KYI_PG_NODE && write) return kyi_dsm.parallel ? open_run(pg) : make_private(pg);
    /* a sibling thread changed the protection meanwhile: make the mapping match */
    return kyi_protect(pg, 1, s == KYI_PG_NODE_PRIV ? PROT_READ | PROT_WRITE : PROT_READ);
}

/* The bytes of private page pg that differ from its twin go into the node copy. Ranks merging at once
 * write different bytes, or the same values (a serial part run by every rank alike). */
static void merge_page(size_t pg)
{
    size_t off = pg << kyi_dsm.page_shift;
    const unsigned char *a = (const unsigned char *)kyi_dsm.base + off,
                        *t = (const unsigned char *)kyi_pg_twin(pg);
    unsigned char *dst = (unsigned char *)kyi_dsm.truth + off;
    kyi_hb_ignore_begin();
    for (size_t i = 0; i < kyi_dsm.page; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, t + i, 8);
        if (x == y) continue;
        for (int b = 0; b < 8; b++)
            if (a[i + b] != t[i + b]) dst[i + b] = a[i + b];
    }
    kyi_hb_ignore_end();
    KYI_DSM_COUNT(diffs, 1);
}

/* A page list of this phase (priv or opened), emptied under lists_lock; the caller frees what it took. */
static kyi_vec_t take_list(kyi_vec_t *l)
{
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_t v = *l;
    memset(l, 0, sizeof v);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    return v;
}

/* Every private page: merged into the node copy and mapped shared again with the phase's protection. A
 * page at a time under its stripe lock, write-protected first: a sibling thread's store meanwhile faults,
 * waits for the lock and makes the page private again from the merged copy, instead of landing in the
 * private copy after its bytes were read (and being lost with it). */
static int merge_private(void)
{
    kyi_vec_t v = take_list(&kyi_dsm.priv);
    int st = KY_OK;
    for (size_t i = 0; i < v.len; i++) {
        size_t pg = v.v[i];
        pthread_mutex_lock(kyi_pg_lock(pg));
        if (kyi_dsm.state[pg] == KYI_PG_NODE_PRIV) {
            int s = kyi_protect(pg, 1, PROT_READ);
            merge_page(pg);
            if (!s) s = map_node(pg, 1, PROT_READ);
            kyi_dsm.state[pg] = KYI_PG_NODE;
            if (!st) st = s;
        }
        pthread_mutex_unlock(kyi_pg_lock(pg));
    }
    free(v.v);
    return st;
}

/* The runs opened in the parallel phase that ends: read-only again (collective: no thread stores now). */
static int close_opened(void)
{
    kyi_vec_t v = take_list(&kyi_dsm.opened);
    int st = KY_OK;
    for (size_t r = 0; r + 1 < v.len; r += 2) {
        int s = kyi_protect(v.v[r], v.v[r + 1], PROT_READ);
        if (!st) st = s;
    }
    free(v.v);
    return st;
}

int kyi_node_sync(const char *call, int phase)
{
    int from = kyi_dsm.parallel, to = phase < 0 ? from : phase;
    atomic_thread_fence(memory_order_seq_cst);
    int st = node_barrier(call); /* every rank's code before the call is done, reads of its serial part too */
    if (from) {
        /* a parallel phase's stores are in the node copy already: nothing to merge, nothing to wait for */
        if (!to) {
            kyi_dsm.parallel = 0;
            int s = close_opened();
            if (!st) st = s;
        }
    } else {
        /* the serial part's private pages go into the node copy; everybody's before anybody reads on */
        kyi_dsm.parallel = to;
        int s = merge_private(), s2 = node_barrier(call);
        if (!st) st = s ? s : s2;
    }
    atomic_thread_fence(memory_order_seq_cst);
    return st;
}

int kyi_node_flush(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    return kyi_dsm.node ? merge_private() : KY_OK;
}

char *kyi_node_word(size_t off)
{
    size_t pg = off >> kyi_dsm.page_shift;
    pthread_mutex_lock(kyi_pg_lock(pg));
    int s = kyi_dsm.state[pg];
    pthread_mutex_unlock(kyi_pg_lock(pg));
    if (s == KYI_PG_NODE_PRIV)
        kyi_node_flush(); /* the atomic acts on the node copy: this rank's writes first */
    return kyi_dsm.truth + off;
}

static int open_node_copy(void)
{
    if (kyi_rt.rank == 0) {
        kyi_dsm.tfd = kyi_dsm.memfd;
        kyi_dsm.truth = kyi_dsm.svc;
        return 0;
    }
    if (!kyi_dsm.peer || !kyi_dsm.peer[0].meta) return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", kyi_dsm.peer[0].pid, kyi_dsm.peer[0].memfd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    void *t = mmap(NULL, kyi_dsm.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (t == MAP_FAILED) {
        close(fd);
        return -1;
    }
    kyi_dsm.tfd = fd;
    kyi_dsm.truth = t;
    return 0;
}

static void close_node_copy(void)
{
    if (kyi_rt.rank != 0 && kyi_dsm.truth) {
        munmap(kyi_dsm.truth, kyi_dsm.size);
        close(kyi_dsm.tfd);
    }
    kyi_dsm.truth = NULL;
    kyi_dsm.tfd = -1;
}

int ky_dsm_node_mode(int on, int *active)
{
    static const char *call = "ky_dsm_node_mode";
    if (active) *active = 0;
    KYI_CHECK(kyi_require_dsm(call));
    int64_t v[3] = {on != 0, -(on != 0), (int64_t)kyi_dsm.nallocs};
    KYI_CHECK(kyi_rt_allreduce_i64(v, 3, KYI_RT_MAX));
    if (v[0] != -v[1]) return kyi_fail(KY_ERR_ARG, call, "ranks asked for different modes");
    if (v[2]) return kyi_fail(KY_ERR_STATE, call, "call it before any allocation in the global space");
    if (!on) {
        if (kyi_dsm.node) close_node_copy();
        kyi_dsm.node = 0;
        return KY_OK;
    }
    if (kyi_dsm.node) {
        if (active) *active = 1;
        return KY_OK;
    }
    const char *why = NULL;
    if (kyi_setting_long(KYI_SET_DSM_NODE_SHARED) == 0)
        why = "KY_DSM_NODE_SHARED=0";
    else if (kyi_rt.nnodes != 1)
        why = "the ranks are on several nodes (or KY_NODE_SPLIT makes them so)";
    int ok = !why && open_node_copy() == 0;
    if (!why && !ok) why = "rank 0's memory could not be mapped";
    int64_t all = ok;
    KYI_CHECK(kyi_rt_allreduce_i64(&all, 1, KYI_RT_MIN));
    if (!all) {
        if (ok) close_node_copy();
        KYI_INFO(KYI_SUB_DSM, "node-shared mode off: %s",
                 why ? why : "another rank could not map the node copy");
        return KY_OK;
    }
    kyi_dsm.node = 1;
    kyi_dsm.node_counter =
        kyi_rt.nranks > KYI_NODE_FLAG_RANKS || kyi_setting_is(KYI_SET_DSM_NODE_BARRIER, "counter");
    kyi_dsm.parallel = 0;
    kyi_dsm.snapshot = KYI_SNAP_OFF; /* no home page is ever fetched */
    kyi_dsm.notices = 0;
    KYI_INFO(KYI_SUB_DSM, "node-shared mode: every page mapped from rank 0's copy");
    if (active) *active = 1;
    return KY_OK;
}

void kyi_node_finalize(void)
{
    if (kyi_dsm.node) close_node_copy();
    free(kyi_dsm.priv.v);
    free(kyi_dsm.opened.v);
    kyi_dsm.node = 0;
}
