/* Global locks with acquire/release semantics, ky_fetch_add, and the statistics calls.
 *
 * Lock id is managed by rank id % nranks: a queue of waiting ranks, granted in arrival order. A rank's
 * threads share its locks (a second thread asking for a lock its rank holds queues behind it, so locks also
 * exclude threads of one rank). Release: the holder's diffs are applied at their homes and the pages it
 * wrote as a home are published before the manager hears of the unlock. Acquire: after the grant, cached
 * pages are invalidated so reads see what earlier holders wrote. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsm/dsm.h"
#include "runtime/trace.h"

typedef struct waiter {
    int rank, tag;
    struct waiter *next;
} waiter_t;

typedef struct {
    int holder; /* -1 free */
    waiter_t *head, *tail;
} lockq_t;

static pthread_mutex_t mgr_lock = PTHREAD_MUTEX_INITIALIZER;
static lockq_t *mgr;                       /* [KY_DSM_LOCKS / nranks + 1] locks this rank manages */
static atomic_int held_here[KY_DSM_LOCKS]; /* acquisitions by this rank not yet released */

static lockq_t *managed(int id)
{
    return &mgr[id / kyi_rt.nranks];
}

static void grant(int rank, int tag)
{
    int64_t ok = KY_OK;
    kyi_chan_reply(rank, tag, &ok, sizeof ok);
}

/* args: lock id, reply tag, try (1: answer KY_PENDING at once instead of queueing) */
static void on_lock(ky_am_token_t t, void *payload, size_t nb, const uint64_t *a, int na)
{
    (void)payload, (void)nb;
    int src = ky_am_source(t), id = (int)a[0], tag = (int)a[1], try_only = na > 2 && a[2];
    pthread_mutex_lock(&mgr_lock);
    lockq_t *q = managed(id);
    if (q->holder < 0) {
        q->holder = src;
        pthread_mutex_unlock(&mgr_lock);
        grant(src, tag);
        return;
    }
    if (try_only) {
        pthread_mutex_unlock(&mgr_lock);
        int64_t busy = KY_PENDING;
        kyi_chan_reply(src, tag, &busy, sizeof busy);
        return;
    }
    waiter_t *w = malloc(sizeof *w);
    if (w) {
        *w = (waiter_t){src, tag, NULL};
        if (q->tail)
            q->tail->next = w;
        else
            q->head = w;
        q->tail = w;
    }
    pthread_mutex_unlock(&mgr_lock);
    if (!w) kyi_fatal("rank %d: ky_lock: out of memory queueing rank %d for lock %d", kyi_rt.rank, src, id);
}

static void on_unlock(ky_am_token_t t, void *payload, size_t nb, const uint64_t *a, int na)
{
    (void)t, (void)payload, (void)nb, (void)na;
    int id = (int)a[0];
    pthread_mutex_lock(&mgr_lock);
    lockq_t *q = managed(id);
    waiter_t *w = q->head;
    if (w) {
        q->head = w->next;
        if (!q->head) q->tail = NULL;
        q->holder = w->rank;
    } else {
        q->holder = -1;
    }
    pthread_mutex_unlock(&mgr_lock);
    if (w) {
        grant(w->rank, w->tag);
        free(w);
    }
}

int kyi_locks_register(void)
{
    size_t n = KY_DSM_LOCKS / (size_t)kyi_rt.nranks + 1;
    mgr = malloc(n * sizeof *mgr);
    if (!mgr) return kyi_fail(KY_ERR_NOMEM, "ky_init", "no memory for the lock table");
    for (size_t i = 0; i < n; i++) mgr[i] = (lockq_t){-1, NULL, NULL};
    for (int i = 0; i < KY_DSM_LOCKS; i++) atomic_store(&held_here[i], 0);
    KYI_CHECK(ky_am_register(KYI_AM_DSM_LOCK, on_lock));
    return ky_am_register(KYI_AM_DSM_UNLOCK, on_unlock);
}

/* Send a request whose answer r is posted for, and wait for the answer (withdrawn if the request failed). */
static int request(const char *call, int rank, int handler, const uint64_t *args, int nargs,
                   kyi_chan_req_t *r)
{
    int st = ky_am_short(rank, handler, args, nargs);
    if (st) {
        kyi_chan_cancel(r);
        return st;
    }
    return kyi_chan_wait(call, rank, r);
}

static int check_id(const char *call, int id)
{
    KYI_CHECK(kyi_require_dsm(call));
    if (id < 0 || id >= KY_DSM_LOCKS)
        return kyi_fail(KY_ERR_ARG, call, "lock id %d is not in 0..%d", id, KY_DSM_LOCKS - 1);
    return KY_OK;
}

/* Ask the manager of lock id for it (try: do not queue); KY_OK granted, KY_PENDING busy (try only). */
static int acquire(const char *call, int id, int try_only)
{
    KYI_CHECK(check_id(call, id));
    uint64_t t0 = kyi_now_ns();
    int mgr_rank = id % kyi_rt.nranks, tag = kyi_chan_tag();
    int64_t ok = KY_ERR_INTERNAL;
    kyi_chan_req_t r;
    KYI_CHECK(kyi_chan_irecv(call, kyi_chan_world(KYI_CHAN_REPLY), mgr_rank, tag, &ok, 8, &r));
    uint64_t args[3] = {(uint64_t)id, (uint64_t)tag, (uint64_t)try_only};
    KYI_CHECK(request(call, mgr_rank, KYI_AM_DSM_LOCK, args, 3, &r));
    if (ok == KY_PENDING) return KY_PENDING;
    if (ok != KY_OK) return kyi_fail((int)ok, call, "rank %d refused lock %d", mgr_rank, id);
    kyi_hb_acquire(&held_here[id]); /* the previous holder's release, for ThreadSanitizer (runtime/hb.h) */
    atomic_fetch_add(&held_here[id], 1);
    /* Acquire: cached pages go, so reads see what earlier holders wrote; this rank's own writes (any
     * thread's) go home first. One acquire or release of this rank at a time: a release must not return
     * while another thread still has its diffs in flight (they would reach the home after the next holder
     * read it). */
    pthread_mutex_lock(&kyi_dsm.release_lock);
    int st = kyi_node_flush(); /* node-shared mode: private pages would hide the previous holder's writes */
    int st2 = kyi_acquire_invalidate(call);
    pthread_mutex_unlock(&kyi_dsm.release_lock);
    if (!st) st = st2;
    KYI_DSM_COUNT(lock_acquires, 1);
    KYI_DSM_COUNT(coherence_ns, kyi_now_ns() - t0);
    return st;
}

/* KY_TRACE: acquires and releases are spans (the lock's id as the count, its manager as the peer) */
static int acquire_traced(const char *call, int id, int try_only)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = acquire(call, id, try_only);
    KYI_TRACE_SPAN("dsm", call, t0, id, kyi_rt.nranks > 0 && id >= 0 ? id % kyi_rt.nranks : -1);
    return st;
}

static int release(int id);

int ky_lock(int id)
{
    return acquire_traced("ky_lock", id, 0);
}
int ky_trylock(int id)
{
    return acquire_traced("ky_trylock", id, 1);
}

int ky_unlock(int id)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = release(id);
    KYI_TRACE_SPAN("dsm", "ky_unlock", t0, id, kyi_rt.nranks > 0 && id >= 0 ? id % kyi_rt.nranks : -1);
    return st;
}

static int release(int id)
{
    static const char *call = "ky_unlock";
    KYI_CHECK(check_id(call, id));
    int h = atomic_load(&held_here[id]);
    while (h > 0 && !atomic_compare_exchange_weak(&held_here[id], &h, h - 1)) {
    }
    if (h <= 0) return kyi_fail(KY_ERR_STATE, call, "lock %d is not held by this rank", id);
    uint64_t t0 = kyi_now_ns();
    /* Every write of this rank so far, whoever's thread made it, is at its home and published before the
     * manager hears of the release. */
    pthread_mutex_lock(&kyi_dsm.release_lock);
    int st = kyi_node_flush();
    int sd = kyi_flush_diffs(call, 1, NULL);
    if (!st) st = sd;
    kyi_publish(0, 0, 0, 0);
    pthread_mutex_unlock(&kyi_dsm.release_lock);
    uint64_t args[1] = {(uint64_t)id};
    kyi_hb_release(&held_here[id]);
    int st2 = ky_am_short(id % kyi_rt.nranks, KYI_AM_DSM_UNLOCK, args, 1);
    KYI_DSM_COUNT(coherence_ns, kyi_now_ns() - t0);
    return st ? st : st2;
}

int ky_fetch_add(long *p, long v, long *old)
{
    static const char *call = "ky_fetch_add";
    KYI_CHECK(kyi_require_dsm(call));
    if (!kyi_in_gas(p) || ((uintptr_t)p & 7))
        return kyi_fail(KY_ERR_ARG, call, "%p is not an 8-byte aligned address in the global space",
                        (void *)p);
    size_t off = (size_t)((char *)p - kyi_dsm.base);
    pthread_rwlock_rdlock(&kyi_dsm.table_lock);
    int home = kyi_page_home(off >> kyi_dsm.page_shift, NULL);
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    if (home == KYI_HOME_STORE)
        return kyi_fail(KY_ERR_UNSUPPORTED, call,
                        "%p is in an array's DSM view: fetch_add needs a DSM home (ky_alloc)", (void *)p);
    if (home < 0) return kyi_fail(KY_ERR_RANGE, call, "%p is not in a live allocation", (void *)p);
    long was;
    if (kyi_dsm.node) {
        was = __atomic_fetch_add((long *)kyi_node_word(off), v, __ATOMIC_SEQ_CST);
    } else if (home == kyi_rt.rank) {
        was = (long)kyi_fadd_local(off, v);
    } else {
        int tag = kyi_chan_tag();
        int64_t reply[2] = {KY_ERR_INTERNAL, 0};
        kyi_chan_req_t r;
        KYI_CHECK(kyi_chan_irecv(call, kyi_chan_world(KYI_CHAN_REPLY), home, tag, reply, 16, &r));
        /* with this rank's interval: a home still finishing the last synchronisation answers after it */
        uint64_t args[4] = {off, (uint64_t)v, (uint64_t)tag, kyi_home_epoch()};
        KYI_CHECK(request(call, home, KYI_AM_DSM_FADD, args, 4, &r));
        if (reply[0] < 0)
            return kyi_fail((int)reply[0], call, "rank %d refused the atomic at %p", home, (void *)p);
        was = (long)reply[1];
    }
    /* A changed word is this rank's write notice (the home could note it only after its own barrier's
     * arrival, too late when it had arrived first), even if the value stays: a notice too many is harmless */
    if (v) kyi_notice(off >> kyi_dsm.page_shift);
    if (old) *old = was;
    return KY_OK;
}

int ky_compare_swap(void *p, size_t bytes, uint64_t expected, uint64_t desired, uint64_t *old)
{
    static const char *call = "ky_compare_swap";
    KYI_CHECK(kyi_require_dsm(call));
    if (bytes != 4 && bytes != 8) return kyi_fail(KY_ERR_ARG, call, "word size %zu: 4 or 8 bytes", bytes);
    if (!kyi_in_gas(p) || ((uintptr_t)p & (bytes - 1)))
        return kyi_fail(KY_ERR_ARG, call, "%p is not a %zu-byte aligned address in the global space", p,
                        bytes);
    if (bytes == 4 && (expected >> 32 || desired >> 32))
        return kyi_fail(KY_ERR_ARG, call,
                        "4-byte compare-and-swap of values wider than 32 bits (%#llx, %#llx)",
                        (unsigned long long)expected, (unsigned long long)desired);
    size_t off = (size_t)((char *)p - kyi_dsm.base);
    pthread_rwlock_rdlock(&kyi_dsm.table_lock);
    int home = kyi_page_home(off >> kyi_dsm.page_shift, NULL);
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    if (home == KYI_HOME_STORE)
        return kyi_fail(KY_ERR_UNSUPPORTED, call,
                        "%p is in an array's DSM view: atomics need a DSM home (ky_alloc)", p);
    if (home < 0) return kyi_fail(KY_ERR_RANGE, call, "%p is not in a live allocation", p);
    uint64_t found;
    if (kyi_dsm.node) {
        found = kyi_cas_word(kyi_node_word(off), bytes, expected, desired);
    } else if (home == kyi_rt.rank) {
        found = kyi_cas_local(off, bytes, expected, desired);
    } else {
        int tag = kyi_chan_tag();
        int64_t reply[2] = {KY_ERR_INTERNAL, 0};
        kyi_chan_req_t r;
        KYI_CHECK(kyi_chan_irecv(call, kyi_chan_world(KYI_CHAN_REPLY), home, tag, reply, 16, &r));
        uint64_t args[6] = {off, bytes, expected, desired, (uint64_t)tag, kyi_home_epoch()};
        KYI_CHECK(request(call, home, KYI_AM_DSM_CAS, args, 6, &r));
        if (reply[0] < 0)
            return kyi_fail((int)reply[0], call, "rank %d refused the compare-and-swap at %p", home, p);
        found = (uint64_t)reply[1];
    }
    if (found == expected) kyi_notice(off >> kyi_dsm.page_shift); /* swapped: as for fetch-add */
    if (old) *old = found;
    return KY_OK;
}

/* ---- statistics ------------------------------------------------------------------------------------- */

int ky_dsm_stats(ky_dsm_stats_t *o)
{
    KYI_CHECK(kyi_require_init("ky_dsm_stats"));
    if (!o) return kyi_fail(KY_ERR_ARG, "ky_dsm_stats", "out is NULL");
    kyi_dsm_stats_t *s = &kyi_dsm_stats;
    o->read_faults = s->read_faults, o->write_faults = s->write_faults;
    o->pages_fetched = s->pages_fetched, o->bytes_fetched = s->bytes_fetched;
    o->pages_preloaded = s->pages_preloaded, o->pages_overloaded = s->pages_overloaded;
    o->pages_pushed = s->pages_pushed, o->twins = s->twins, o->diffs = s->diffs,
    o->diff_bytes = s->diff_bytes;
    o->home_snapshots = s->home_snapshots, o->pages_served = s->pages_served,
    o->bytes_served = s->bytes_served;
    o->invalidations = s->invalidations, o->drops = s->drops, o->barriers = s->barriers, o->syncs = s->syncs;
    o->lock_acquires = s->lock_acquires, o->unguarded_reads = s->unguarded_reads;
    o->coherence_s = (double)s->coherence_ns * 1e-9;
    return KY_OK;
}

int ky_dsm_stats_reset(void)
{
    KYI_CHECK(kyi_require_init("ky_dsm_stats_reset"));
    memset(&kyi_dsm_stats, 0, sizeof kyi_dsm_stats);
    return KY_OK;
}

int ky_dsm_stats_print(void)
{
    ky_dsm_stats_t s;
    KYI_CHECK(ky_dsm_stats(&s));
    fprintf(stderr,
            "kyoyu dsm rank %d: faults r %llu w %llu | fetched %llu pages %.3f MB | preloaded %llu "
            "overloaded %llu "
            "pushed %llu | twins %llu diffs %llu (%.3f MB) | home snapshots %llu unguarded reads %llu | "
            "served %llu pages | invalidated %llu "
            "dropped %llu | barriers %llu syncs %llu locks %llu | coherence %.3f s\n",
            kyi_rt.rank, (unsigned long long)s.read_faults, (unsigned long long)s.write_faults,
            (unsigned long long)s.pages_fetched, s.bytes_fetched / 1e6, (unsigned long long)s.pages_preloaded,
            (unsigned long long)s.pages_overloaded, (unsigned long long)s.pages_pushed,
            (unsigned long long)s.twins, (unsigned long long)s.diffs, s.diff_bytes / 1e6,
            (unsigned long long)s.home_snapshots, (unsigned long long)s.unguarded_reads,
            (unsigned long long)s.pages_served, (unsigned long long)s.invalidations,
            (unsigned long long)s.drops, (unsigned long long)s.barriers, (unsigned long long)s.syncs,
            (unsigned long long)s.lock_acquires, s.coherence_s);
    return KY_OK;
}
