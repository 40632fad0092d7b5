/* Home side: answering fetches with the synchronised version of pages, applying diffs, installing pushed
 * pages, atomics; and the home's part of a synchronisation (kyi_publish). Handlers run on the progress
 * thread and take only stripe locks, briefly, so they never wait on a remote rank. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm/dsm.h"

/* A request from a rank already past a synchronisation this home has not finished (fetch, fetch_add,
 * compare_swap): answered when it has, so it sees every diff of that synchronisation. */
enum { DEFER_FETCH, DEFER_FADD, DEFER_CAS };
typedef struct deferred {
    int src, kind;
    uint64_t epoch;
    uint64_t a[5]; /* the request's arguments */
    struct deferred *next;
} deferred_t;

/* Every page of [pg, pg+n) homed here and live? */
static int homed_here(size_t pg, size_t n)
{
    if (pg >= kyi_dsm.npages || n > kyi_dsm.npages - pg) return 0;
    int ok = 1;
    pthread_rwlock_rdlock(&kyi_dsm.table_lock);
    for (size_t i = 0; i < n && ok; i++) ok = kyi_page_home(pg + i, NULL) == kyi_rt.rank;
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    return ok;
}

static void reply_status(int src, int tag, int64_t status)
{
    kyi_chan_reply(src, tag, &status, sizeof status);
}

/* A fetch of home page pg (stripe lock held): the page is guarded from the next interval on. A page written
 * without a snapshot (nobody had fetched it recently) may now carry writes of this interval: counted. */
static void note_fetch(size_t pg, uint32_t epoch)
{
    __atomic_store_n(&kyi_dsm.fetched_at[pg], kyi_fetch_mark(epoch), __ATOMIC_RELAXED);
    if (kyi_dsm.state[pg] == KYI_PG_HOME_FREE && !kyi_dsm.nostore_interval) KYI_DSM_COUNT(unguarded_reads, 1);
}

void kyi_serve_copy(char *dst, size_t pg, size_t n)
{
    uint32_t epoch = (uint32_t)kyi_home_epoch();
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_t *lk = kyi_pg_lock(pg + i);
        pthread_mutex_lock(lk);
        note_fetch(pg + i, epoch);
        int from_snap = kyi_dsm.snapshot && kyi_dsm.state[pg + i] == KYI_PG_HOME_RW;
        if (kyi_dsm.state[pg + i] == KYI_PG_HOME_OPEN && !kyi_dsm.nostore_interval) {
            static atomic_int warned;
            if (!atomic_exchange(&warned, 1))
                KYI_WARN(KYI_SUB_DSM,
                         "a page was fetched in an interval opened by ky_sync_nofetch; the reply may "
                         "contain writes made after the synchronisation (logged once)");
        }
        if (kyi_dsm.state[pg + i] == KYI_PG_HOME_FRESH) { /* written first since allocated: zeros */
            kyi_hb_ignore_begin();
            memset(dst + (i << kyi_dsm.page_shift), 0, kyi_dsm.page);
            kyi_hb_ignore_end();
        } else {
            kyi_page_copy(dst + (i << kyi_dsm.page_shift),
                          from_snap ? kyi_pg_snap(pg + i) : kyi_pg_data(pg + i), kyi_dsm.page);
        }
        pthread_mutex_unlock(lk);
    }
}

/* Reply buffers. A fresh malloc of a multi-page reply is an mmap, a page fault per 4 KiB on first touch
 * and an munmap after the send, which costs as much as the copy itself: keep a few per power-of-two
 * size class (a 64-byte header before the data records the class). */
enum { POOL_CLASSES = 16, POOL_KEEP = 8, POOL_HDR = 64 };
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static char *pool[POOL_CLASSES][POOL_KEEP];
static int pool_n[POOL_CLASSES];

static char *reply_buf(size_t bytes)
{
    int c = 0;
    while (c < POOL_CLASSES && ((size_t)kyi_dsm.page << c) < bytes) c++;
    char *b = NULL;
    if (c < POOL_CLASSES) {
        pthread_mutex_lock(&pool_lock);
        if (pool_n[c]) b = pool[c][--pool_n[c]];
        pthread_mutex_unlock(&pool_lock);
    }
    if (!b) b = malloc(POOL_HDR + (c < POOL_CLASSES ? (size_t)kyi_dsm.page << c : bytes));
    if (!b) return NULL;
    *(int *)b = c;
    return b + POOL_HDR;
}

static void reply_buf_release(void *p)
{
    atomic_fetch_sub(&kyi_dsm.replies, 1);
    char *b = (char *)p - POOL_HDR;
    int c = *(int *)b;
    if (c < POOL_CLASSES) {
        pthread_mutex_lock(&pool_lock);
        int kept = pool_n[c] < POOL_KEEP;
        if (kept) pool[c][pool_n[c]++] = b;
        pthread_mutex_unlock(&pool_lock);
        if (kept) return;
    }
    free(b);
}

void kyi_serve_pool_free(void)
{
    pthread_mutex_lock(&pool_lock);
    for (int c = 0; c < POOL_CLASSES; c++)
        while (pool_n[c]) free(pool[c][--pool_n[c]]);
    pthread_mutex_unlock(&pool_lock);
}

/* Zero-copy replies. Where the synchronised version of every page of a run sits in one place that nobody
 * may change now (the data of a write-protected home page or of an open page under ky_sync_nostore, or the
 * snapshot of a page the home wrote), the reply is sent straight from it. sending[] counts the replies in
 * flight per page; whatever changes a home page's data or snapshot first waits for it to be zero
 * (kyi_wait_unsent), so the bytes stay put until MPI has read them. */
typedef struct {
    size_t pg, n;
} inflight_t;

static void inflight_unclaim(inflight_t *f)
{
    for (size_t i = 0; i < f->n; i++) __atomic_fetch_sub(&kyi_dsm.sending[f->pg + i], 1, __ATOMIC_RELEASE);
    free(f);
}

/* The engine's release of a sent reply (ky_finalize waits until every one has come: kyi_dsm.replies). */
static void inflight_release(void *p)
{
    inflight_unclaim(p);
    atomic_fetch_sub(&kyi_dsm.replies, 1);
}

void kyi_wait_unsent(size_t pg)
{
    if (!__atomic_load_n(&kyi_dsm.sending[pg], __ATOMIC_ACQUIRE)) return;
    kyi_waiter_t w;
    kyi_waiter_init(&w, "dsm", "a reply to finish sending", -1);
    while (__atomic_load_n(&kyi_dsm.sending[pg], __ATOMIC_ACQUIRE)) {
        /* may run inside a handler, where the engine that completes the sends is this very thread */
        kyi_chan_flush();
        kyi_waiter_pause(&w);
    }
}

/* Where page pg's synchronised version may be sent from without a copy: 1 data, 2 snapshot, 0 nowhere
 * (stripe lock held). */
static int direct_source(size_t pg)
{
    int s = kyi_dsm.state[pg];
    if (!kyi_dsm.snapshot || __atomic_load_n(&kyi_dsm.sending[pg], __ATOMIC_RELAXED) >= 200) return 0;
    if (s == KYI_PG_HOME_RO || ((s == KYI_PG_HOME_OPEN || s == KYI_PG_HOME_FREE) && kyi_dsm.nostore_interval))
        return 1;
    return s == KYI_PG_HOME_RW ? 2 : 0;
}

static int serve_direct(int src, size_t pg, size_t n, int tag)
{
    inflight_t *f = malloc(sizeof *f);
    if (!f) return 0;
    size_t i = 0;
    int kind = 0;
    uint32_t epoch = (uint32_t)kyi_home_epoch();
    for (; i < n; i++) {
        pthread_mutex_lock(kyi_pg_lock(pg + i));
        int k = direct_source(pg + i);
        if (k) note_fetch(pg + i, epoch);
        if (k && (i == 0 || k == kind)) __atomic_fetch_add(&kyi_dsm.sending[pg + i], 1, __ATOMIC_ACQ_REL);
        pthread_mutex_unlock(kyi_pg_lock(pg + i));
        if (!k || (i && k != kind)) break;
        kind = k;
    }
    if (i < n) { /* not one place: give the claimed pages back, copy instead */
        f->pg = pg, f->n = i;
        inflight_unclaim(f);
        return 0;
    }
    f->pg = pg, f->n = n;
    size_t bytes = n << kyi_dsm.page_shift;
    KYI_DSM_COUNT(pages_served, n);
    KYI_DSM_COUNT(bytes_served, bytes);
    atomic_fetch_add(&kyi_dsm.replies, 1);
    kyi_chan_reply_release(src, tag, kind == 1 ? kyi_pg_data(pg) : kyi_pg_snap(pg), bytes, inflight_release,
                           f);
    return 1;
}

static void serve_now(int src, size_t pg, size_t n, int tag)
{
    if (!homed_here(pg, n)) {
        reply_status(src, tag, KY_ERR_RANGE);
        return;
    }
    if (serve_direct(src, pg, n, tag)) return;
    size_t bytes = n << kyi_dsm.page_shift;
    char *buf = reply_buf(bytes);
    if (!buf) {
        reply_status(src, tag, KY_ERR_NOMEM);
        return;
    }
    kyi_serve_copy(buf, pg, n);
    KYI_DSM_COUNT(pages_served, n);
    KYI_DSM_COUNT(bytes_served, bytes);
    atomic_fetch_add(&kyi_dsm.replies, 1);
    kyi_chan_reply_release(src, tag, buf, bytes, reply_buf_release, buf);
}

/* Queue the request if its sender is past this home's interval (returns 1); the publish that ends the
 * interval serves it. */
static int defer_if_ahead(int src, int kind, uint64_t epoch, const uint64_t *a, int na, int tag)
{
    pthread_mutex_lock(&kyi_dsm.epoch_lock);
    if (epoch <= kyi_dsm.epoch) {
        pthread_mutex_unlock(&kyi_dsm.epoch_lock);
        return 0;
    }
    deferred_t *d = malloc(sizeof *d);
    if (d) {
        *d = (deferred_t){src, kind, epoch, {0}, (deferred_t *)kyi_dsm.deferred};
        memcpy(d->a, a, (size_t)na * sizeof *a);
        kyi_dsm.deferred = d;
    }
    pthread_mutex_unlock(&kyi_dsm.epoch_lock);
    if (!d) {
        int64_t reply[2] = {KY_ERR_NOMEM, 0};
        kyi_chan_reply(src, tag, reply, kind == DEFER_FETCH ? 8 : sizeof reply);
    }
    return 1;
}

static void on_fetch(ky_am_token_t t, void *payload, size_t nb, const uint64_t *a, int na)
{
    (void)payload, (void)nb, (void)na;
    int src = ky_am_source(t);
    if (!defer_if_ahead(src, DEFER_FETCH, a[3], a, 3, (int)a[2])) serve_now(src, a[0], a[1], (int)a[2]);
}

/* Barrier diffs wait here until the home's own synchronisation applies them, so not even the home sees
 * another rank's writes before the barrier (and fetchers of the interval never do). Each carries the
 * interval it ends: a rank past the barrier may already be sending the next interval's changes while this
 * home has not published yet, and those must wait for the next publish (applied early, a neighbour's
 * owned halo of the next block landed in the home before the home computed with the old one: the seed's
 * preload stencil on slabs sharing pages was wrong in most 4-rank runs). */
typedef struct pending_diff {
    size_t n;
    uint64_t epoch;
    int release; /* a lock release's, from a rank already past the synchronisation being applied */
    struct pending_diff *next;
    char data[];
} pending_diff_t;
static pending_diff_t *pending_head, **pending_tail = &pending_head;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under pending_lock. A release's diff is applied at once if it belongs to an interval this home has
 * entered for the pending queue (open_epoch: one past the last synchronisation whose diffs it took) and no
 * taking is under way (draining). Otherwise the sender is a rank already past the synchronisation this
 * home is still applying, and the same bytes may sit in that synchronisation's diffs (its owned elements,
 * sent by ky_sync): applied at once, the release was overwritten by the older bytes a moment later (a lost
 * write in DsmStress.Mixed). So it queues behind them and kyi_publish applies it, before this home's
 * interval advances and the fetches that waited for it (the releaser's next holder among them) are served. */
static uint64_t open_epoch;
static int draining;

/* Check (apply = 0) or apply diff records {u64 page, u32 offset, u32 length, bytes}. */
static int64_t diff_records(const char *p, size_t nb, int apply, int to_snapshot)
{
    const char *end = p + nb;
    while (p + 16 <= end) {
        uint64_t pg;
        uint32_t off, len;
        memcpy(&pg, p, 8);
        memcpy(&off, p + 8, 4);
        memcpy(&len, p + 12, 4);
        p += 16;
        int bitmap = (len & KYI_DIFF_BITMAP) != 0;
        len &= ~KYI_DIFF_BITMAP;
        const unsigned char *bits = (const unsigned char *)p;
        size_t payload = len;
        if (bitmap) {
            if ((len & 7) || p + len / 8 > end) return KY_ERR_RANGE;
            size_t changed = 0;
            for (size_t i = 0; i < len / 8; i++) changed += (size_t)__builtin_popcount(bits[i]);
            payload = len / 8 + changed;
        }
        if (!apply && (p + payload > end || (size_t)off + len > kyi_dsm.page || !homed_here(pg, 1)))
            return KY_ERR_RANGE;
        if (apply) {
            pthread_mutex_lock(kyi_pg_lock(pg));
            kyi_wait_unsent(pg);
            /* a release's diff is seen at once: the snapshot of a page written first since its allocation
             * takes it too, so it is made now; a barrier's only changes the data (publish follows) */
            if (to_snapshot)
                kyi_pg_materialise(pg);
            else
                __atomic_store_n(&kyi_dsm.zero[pg], 0, __ATOMIC_RELAXED);
            int snap = to_snapshot && kyi_dsm.snapshot && kyi_dsm.state[pg] == KYI_PG_HOME_RW;
            char *dd = kyi_pg_data(pg) + off, *ds = kyi_pg_snap(pg) + off;
            kyi_hb_ignore_begin(); /* page contents (runtime/hb.h) */
            if (!bitmap) {
                if (snap) memcpy(ds, p, len);
                memcpy(dd, p, len);
            } else {
                const char *v = p + len / 8;
                for (size_t i = 0; i < len; i++)
                    if (bits[i >> 3] & (1u << (i & 7))) {
                        if (snap) ds[i] = *v;
                        dd[i] = *v++;
                    }
            }
            kyi_hb_ignore_end();
            pthread_mutex_unlock(kyi_pg_lock(pg));
        }
        p += payload;
    }
    return KY_OK;
}

/* args: reply tag, release (1: lock release, applied now and visible to fetchers at once, unless its sender
 * is past the synchronisation this home is applying: see open_epoch; 0: barrier, applied when this home's
 * synchronisation ends interval a[2]), the sender's interval. */
static void on_diff(ky_am_token_t t, void *payload, size_t nb, const uint64_t *a, int na)
{
    int src = ky_am_source(t), release = (int)a[1];
    uint64_t epoch = na > 2 ? a[2] : 0;
    int64_t st = diff_records(payload, nb, 0, 0);
    int now = 0;
    if (!st) {
        pthread_mutex_lock(&pending_lock);
        now = release && !draining && epoch <= open_epoch;
        pending_diff_t *d = now ? NULL : malloc(sizeof *d + nb);
        if (d) {
            *d = (pending_diff_t){nb, epoch, release, NULL};
            memcpy(d->data, payload, nb);
            *pending_tail = d;
            pending_tail = &d->next;
        } else if (!now) {
            st = KY_ERR_NOMEM;
        }
        pthread_mutex_unlock(&pending_lock);
    }
    /* applied outside the queue's lock: only a release of the home's open interval, which no queued diff
     * can overwrite (the sender has not reached the synchronisation that would send one) */
    if (now) diff_records(payload, nb, 1, 1);
    reply_status(src, (int)a[0], st);
}

/* Does apply_pending(epoch) take d: a diff of an interval up to epoch, or a release sent in the next one? */
static int takes(const pending_diff_t *d, uint64_t epoch)
{
    return d->epoch <= epoch || (d->release && d->epoch <= epoch + 1);
}

/* The diffs of intervals up to `epoch` (the one this home's synchronisation ends) and the releases sent
 * in the next one, in arrival order; later ones stay queued, in order. Releases that arrive meanwhile queue
 * too (draining) and are taken in the next pass. */
static void apply_pending(uint64_t epoch)
{
    pthread_mutex_lock(&pending_lock);
    open_epoch = epoch + 1;
    for (;;) {
        pending_diff_t *d = pending_head, *keep = NULL, **keep_tail = &keep;
        int any = 0;
        for (pending_diff_t *x = d; x && !any; x = x->next) any = takes(x, epoch);
        if (!any) break;
        pending_head = NULL;
        pending_tail = &pending_head;
        draining = 1;
        pthread_mutex_unlock(&pending_lock);
        while (d) {
            pending_diff_t *next = d->next;
            if (takes(d, epoch)) {
                diff_records(d->data, d->n, 1, d->release);
                free(d);
            } else {
                d->next = NULL;
                *keep_tail = d;
                keep_tail = &d->next;
            }
            d = next;
        }
        pthread_mutex_lock(&pending_lock);
        if (keep) { /* back in front of whatever arrived meanwhile (that can only be later still) */
            *keep_tail = pending_head;
            if (!pending_head) pending_tail = keep_tail;
            pending_head = keep;
        }
    }
    draining = 0;
    pthread_mutex_unlock(&pending_lock);
}

/* Pushed pages: args page, count, data tag, acknowledgement tag. Installed read-only where this rank holds
 * nothing; the pusher waits for the acknowledgement, so a later synchronisation finds them installed. */
static void install_pushed(size_t pg, size_t n, const char *buf)
{
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_t *lk = kyi_pg_lock(pg + i);
        pthread_mutex_lock(lk);
        if (kyi_dsm.state[pg + i] == KYI_PG_NONE) {
            kyi_page_copy(kyi_pg_data(pg + i), buf + (i << kyi_dsm.page_shift), kyi_dsm.page);
            kyi_install(pg + i, 0);
        }
        pthread_mutex_unlock(lk);
    }
}

/* Pushes from a rank that finished a synchronisation this rank is still in: installed when it ends (its
 * invalidation would otherwise throw them away). */
typedef struct pending_push {
    size_t pg, n;
    struct pending_push *next;
    char data[];
} pending_push_t;
static pending_push_t *pushes;
static pthread_mutex_t push_lock = PTHREAD_MUTEX_INITIALIZER;

void kyi_sync_done(void)
{
    pthread_mutex_lock(&push_lock);
    atomic_fetch_add(&kyi_dsm.synced, 1);
    pending_push_t *p = pushes;
    pushes = NULL;
    pthread_mutex_unlock(&push_lock);
    while (p) {
        pending_push_t *next = p->next;
        install_pushed(p->pg, p->n, p->data);
        free(p);
        p = next;
    }
}

static void on_push(ky_am_token_t t, void *payload, size_t nb, const uint64_t *a, int na)
{
    (void)payload, (void)nb, (void)na;
    int src = ky_am_source(t);
    size_t pg = a[0], n = a[1], bytes = n << kyi_dsm.page_shift;
    int64_t st = KY_OK;
    pending_push_t *p = malloc(sizeof *p + (bytes ? bytes : 1));
    kyi_chan_req_t r;
    static const char *call = "ky_push_array (receiving)";
    if (!p) st = KY_ERR_NOMEM;
    if (kyi_chan_irecv(call, kyi_chan_world(KYI_CHAN_DATA), src, (int)a[2], p ? p->data : (char *)&st,
                       p ? bytes : 0, &r) ||
        kyi_chan_wait(call, src, &r))
        st = KY_ERR_MPI;
    if (!st && (pg >= kyi_dsm.npages || n > kyi_dsm.npages - pg)) st = KY_ERR_RANGE;
    if (!st) {
        p->pg = pg, p->n = n;
        pthread_mutex_lock(&push_lock);
        int later = atomic_load(&kyi_dsm.synced) < a[4];
        if (later) {
            p->next = pushes;
            pushes = p;
            p = NULL;
        }
        pthread_mutex_unlock(&push_lock);
        if (p) install_pushed(pg, n, p->data);
    }
    free(p);
    reply_status(src, (int)a[3], st);
}

/* Atomic add at the home, visible to later fetches at once (it is a synchronising operation). */
int64_t kyi_fadd_local(size_t off, int64_t v)
{
    size_t pg = off >> kyi_dsm.page_shift;
    pthread_mutex_lock(kyi_pg_lock(pg));
    kyi_wait_unsent(pg);
    kyi_pg_materialise(pg); /* seen at once: no longer the allocation's zeros */
    int64_t old = __atomic_fetch_add((int64_t *)(kyi_dsm.svc + off), v, __ATOMIC_SEQ_CST);
    if (kyi_dsm.snapshot && kyi_dsm.state[pg] == KYI_PG_HOME_RW)
        __atomic_fetch_add((int64_t *)(kyi_pg_snap(pg) + (off & (kyi_dsm.page - 1))), v, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(kyi_pg_lock(pg));
    return old;
}

/* Compare-and-swap at the home, on the data and, where the home wrote the page since the synchronisation,
 * on its snapshot too (later fetches see the result at once, as with fetch-add). */
uint64_t kyi_cas_word(void *p, size_t bytes, uint64_t expected, uint64_t desired)
{
    if (bytes == 4) {
        uint32_t e = (uint32_t)expected;
        __atomic_compare_exchange_n((uint32_t *)p, &e, (uint32_t)desired, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
        return e;
    }
    uint64_t e = expected;
    __atomic_compare_exchange_n((uint64_t *)p, &e, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return e;
}

uint64_t kyi_cas_local(size_t off, size_t bytes, uint64_t expected, uint64_t desired)
{
    size_t pg = off >> kyi_dsm.page_shift;
    pthread_mutex_lock(kyi_pg_lock(pg));
    kyi_wait_unsent(pg);
    kyi_pg_materialise(pg);
    char *p = kyi_dsm.svc + off;
    uint64_t old = kyi_cas_word(p, bytes, expected, desired);
    if (old == (bytes == 4 ? (uint32_t)expected : expected) && kyi_dsm.snapshot &&
        kyi_dsm.state[pg] == KYI_PG_HOME_RW)
        kyi_page_copy(kyi_pg_snap(pg) + (off & (kyi_dsm.page - 1)), p, bytes);
    pthread_mutex_unlock(kyi_pg_lock(pg));
    return old;
}

/* args off, bytes, expected, desired, reply tag, the sender's interval */
static void serve_cas(int src, const uint64_t *a)
{
    size_t off = a[0], bytes = a[1];
    int64_t reply[2] = {KY_OK, 0};
    if ((bytes != 4 && bytes != 8) || off + bytes > kyi_dsm.size || (off & (bytes - 1)) ||
        !homed_here(off >> kyi_dsm.page_shift, 1))
        reply[0] = KY_ERR_RANGE;
    else
        reply[1] = (int64_t)kyi_cas_local(off, bytes, a[2], a[3]);
    kyi_chan_reply(src, (int)a[4], reply, sizeof reply);
}

static void on_cas(ky_am_token_t t, void *payload, size_t nb, const uint64_t *a, int na)
{
    (void)payload, (void)nb;
    int src = ky_am_source(t);
    if (na < 6 || !defer_if_ahead(src, DEFER_CAS, a[5], a, 5, (int)a[4])) serve_cas(src, a);
}

/* args off, value, reply tag, the sender's interval */
static void serve_fadd(int src, const uint64_t *a)
{
    size_t off = a[0];
    int64_t reply[2] = {KY_OK, 0};
    if (off + 8 > kyi_dsm.size || (off & 7) || !homed_here(off >> kyi_dsm.page_shift, 1))
        reply[0] = KY_ERR_RANGE;
    else
        reply[1] = kyi_fadd_local(off, (int64_t)a[1]);
    kyi_chan_reply(src, (int)a[2], reply, sizeof reply);
}

static void on_fadd(ky_am_token_t t, void *payload, size_t nb, const uint64_t *a, int na)
{
    (void)payload, (void)nb;
    int src = ky_am_source(t);
    if (na < 4 || !defer_if_ahead(src, DEFER_FADD, a[3], a, 3, (int)a[2])) serve_fadd(src, a);
}

static int revert_run(void *ctx, size_t off, size_t len, int owner)
{
    size_t pg = *(const size_t *)ctx;
    if (owner != kyi_rt.rank) kyi_page_copy(kyi_pg_data(pg) + off, kyi_pg_snap(pg) + off, len);
    return 0;
}

/* ky_sync_drop at a home: its writes of this interval to other owners' elements on mixed pages go back to
 * the synchronised version, as a cached copy's would (mixed pages are always guarded, so the written ones
 * have a snapshot). The owners' own writes arrive after this, in the pending diffs. */
static void revert_foreign(void)
{
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_t w = {0};
    for (size_t i = 0; i < kyi_dsm.written.len; i++)
        if (kyi_dsm.mixed[kyi_dsm.written.v[i]]) kyi_vec_push(&w, kyi_dsm.written.v[i]);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    for (size_t i = 0; i < w.len; i++) {
        pthread_mutex_lock(kyi_pg_lock(w.v[i]));
        kyi_revert_foreign(w.v[i]);
        pthread_mutex_unlock(kyi_pg_lock(w.v[i]));
    }
    free(w.v);
}

void kyi_revert_foreign(size_t pg)
{
    if (!kyi_dsm.snapshot || !kyi_dsm.mixed[pg]) return;
    kyi_wait_unsent(pg);
    if (kyi_dsm.state[pg] == KYI_PG_HOME_FRESH) kyi_pg_materialise(pg); /* the zeros to go back to */
    if (kyi_dsm.state[pg] != KYI_PG_HOME_RW) return;
    pthread_rwlock_rdlock(&kyi_dsm.table_lock);
    kyi_owner_runs(pg, revert_run, &pg);
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
}

void kyi_publish(int advance_epoch, int keep_open, int drop, int noticed)
{
    if (drop) revert_foreign();
    if (advance_epoch) {
        pthread_mutex_lock(&kyi_dsm.epoch_lock);
        uint64_t ending = kyi_dsm.epoch;
        pthread_mutex_unlock(&kyi_dsm.epoch_lock);
        apply_pending(ending);
    }
    if (advance_epoch && kyi_dsm.open_interval && !keep_open) {
        /* The promised interval is over: back to write-protected home pages. */
        kyi_home_pages_set(KYI_PG_HOME_OPEN, KYI_PG_HOME_RO, PROT_READ);
        kyi_dsm.open_interval = 0;
    }
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_t w = kyi_dsm.written, f = {0};
    memset(&kyi_dsm.written, 0, sizeof kyi_dsm.written);
    /* The pages this home wrote are the next barrier's write notices (a barrier gathers them itself). */
    if (kyi_dsm.notices && !noticed)
        for (size_t i = 0; i < w.len; i++) kyi_vec_push(&kyi_dsm.noticed, w.v[i]);
    kyi_notices_trim();
    if (advance_epoch) {
        f = kyi_dsm.freed;
        memset(&kyi_dsm.freed, 0, sizeof kyi_dsm.freed);
    }
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    if (!advance_epoch) { /* a lock release: the written pages' data is the version the next holder reads */
        for (size_t i = 0; i < w.len; i++) {
            pthread_mutex_lock(kyi_pg_lock(w.v[i]));
            int s = kyi_dsm.state[w.v[i]];
            if (s == KYI_PG_HOME_RW || s == KYI_PG_HOME_FRESH) {
                kyi_protect(w.v[i], 1, PROT_READ);
                kyi_dsm.state[w.v[i]] = KYI_PG_HOME_RO;
                __atomic_store_n(&kyi_dsm.zero[w.v[i]], 0, __ATOMIC_RELAXED);
            }
            pthread_mutex_unlock(kyi_pg_lock(w.v[i]));
        }
        free(w.v);
        return;
    }
    /* The next interval guards (write-protects) the written pages that some rank fetched recently; the
     * others stay open and are written without snapshots (KY_DSM_SNAPSHOT=2). Collective: the other threads
     * wait, so one protection call per run, before the states change. Pages already open that stay open
     * (most of a stencil's slab: nobody fetches them) cost a look at their fetch mark and nothing else: a
     * lock and a state store each made an empty barrier over a 32 MiB slab 15 us instead of 1. */
    uint64_t next = kyi_home_epoch() + 1;
    kyi_vec_t guard = {0}, open = {0}, still = {0};
    for (int l = 0; l < 2; l++) {
        const kyi_vec_t *v = l ? &f : &w;
        for (size_t i = 0; i < v->len; i++) {
            size_t pg = v->v[i];
            /* unlocked (one lock per page made an empty barrier over a 32 MiB slab 15x slower): a rank that
             * left the barrier already may have its CAS served here meanwhile, which turns FRESH into RW
             * under the page's lock (kyi_pg_materialise); both are classified alike */
            int s = __atomic_load_n(&kyi_dsm.state[pg], __ATOMIC_RELAXED);
            if (s != KYI_PG_HOME_RW && s != KYI_PG_HOME_FREE && s != KYI_PG_HOME_FRESH) continue;
            kyi_vec_push(kyi_pg_guarded(pg, next) ? &guard : s == KYI_PG_HOME_FREE ? &still : &open, pg);
        }
    }
    kyi_protect_runs(guard.v, guard.len, PROT_READ);
    for (int l = 0; l < 2; l++) {
        const kyi_vec_t *v = l ? &open : &guard;
        for (size_t i = 0; i < v->len; i++) {
            pthread_mutex_lock(kyi_pg_lock(v->v[i]));
            kyi_dsm.state[v->v[i]] = l ? KYI_PG_HOME_FREE : KYI_PG_HOME_RO;
            pthread_mutex_unlock(kyi_pg_lock(v->v[i]));
        }
    }
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    for (size_t i = 0; i < open.len; i++) kyi_vec_push(&kyi_dsm.freed, open.v[i]);
    for (size_t i = 0; i < still.len; i++) kyi_vec_push(&kyi_dsm.freed, still.v[i]);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    free(still.v);
    free(w.v), free(f.v), free(guard.v), free(open.v);
    if (!advance_epoch) return;
    pthread_mutex_lock(&kyi_dsm.epoch_lock);
    kyi_dsm.epoch++;
    atomic_store(&kyi_dsm.meta->epoch, kyi_dsm.epoch); /* same-node readers may come now (peer.c) */
    deferred_t *d = kyi_dsm.deferred, *keep = NULL;
    kyi_dsm.deferred = NULL;
    pthread_mutex_unlock(&kyi_dsm.epoch_lock);
    while (d) {
        deferred_t *next = d->next;
        if (d->epoch <= kyi_dsm.epoch) {
            if (d->kind == DEFER_FETCH)
                serve_now(d->src, d->a[0], d->a[1], (int)d->a[2]);
            else if (d->kind == DEFER_FADD)
                serve_fadd(d->src, d->a);
            else
                serve_cas(d->src, d->a);
            free(d);
        } else {
            d->next = keep;
            keep = d;
        }
        d = next;
    }
    if (keep) {
        pthread_mutex_lock(&kyi_dsm.epoch_lock);
        deferred_t **tail = &keep;
        while (*tail) tail = &(*tail)->next;
        *tail = kyi_dsm.deferred;
        kyi_dsm.deferred = keep;
        pthread_mutex_unlock(&kyi_dsm.epoch_lock);
    }
}

int kyi_serve_register(void)
{
    KYI_CHECK(ky_am_register(KYI_AM_DSM_FETCH, on_fetch));
    KYI_CHECK(ky_am_register(KYI_AM_DSM_DIFF, on_diff));
    KYI_CHECK(ky_am_register(KYI_AM_DSM_PUSH, on_push));
    KYI_CHECK(ky_am_register(KYI_AM_DSM_CAS, on_cas));
    return ky_am_register(KYI_AM_DSM_FADD, on_fadd);
}
