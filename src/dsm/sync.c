/* Synchronisation: diffs of written cached pages back to their homes, invalidation and dropping of cached
 * pages, and the three collective calls ky_barrier, ky_sync and ky_sync_drop.
 *
 * Order inside a synchronisation: (1) diffs are applied at their homes and acknowledged, (2) every rank
 * arrives (a barrier of the DSM's own team: execution only, nothing of the DSM is left in flight in the
 * comm layer), (3) each home publishes (write-protects what it wrote, drops snapshots, advances
 * its interval; fetches from ranks already past wait for this), (4) cached pages are invalidated (barrier)
 * or dropped (sync_drop). Diffs are byte-exact runs, so writes of different ranks to different bytes of one
 * page all survive. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm/dsm.h"
#include "runtime/trace.h"

typedef struct {
    char *buf;
    size_t len;
} outbuf_t;

typedef struct {
    outbuf_t *out; /* [nranks] message being filled */
    kyi_chan_req_t *acks;
    int64_t *ack_val;
    int nacks, cap;
    size_t max;
    int release;
    uint64_t epoch; /* the interval these changes belong to (the home applies them when it ends) */
    const char *call;
} diffset_t;

static int send_out(diffset_t *d, int home)
{
    outbuf_t *o = &d->out[home];
    if (!o->len) return KY_OK;
    if (d->nacks == d->cap) {
        int cap = d->cap ? 2 * d->cap : 64;
        kyi_chan_req_t *r = realloc(d->acks, cap * sizeof *r);
        int64_t *v = realloc(d->ack_val, cap * sizeof *v);
        if (!r || !v) kyi_fatal("rank %d: %s: out of memory for diff acknowledgements", kyi_rt.rank, d->call);
        d->acks = r, d->ack_val = v, d->cap = cap;
    }
    int tag = kyi_chan_tag();
    KYI_CHECK(kyi_chan_irecv(d->call, kyi_chan_world(KYI_CHAN_REPLY), home, tag, &d->ack_val[d->nacks], 8,
                             &d->acks[d->nacks]));
    d->nacks++;
    uint64_t args[3] = {(uint64_t)tag, (uint64_t)d->release, d->epoch};
    KYI_CHECK(ky_am_medium(home, KYI_AM_DSM_DIFF, o->buf, o->len, args, 3));
    KYI_DSM_COUNT(diff_bytes, o->len);
    o->len = 0;
    return KY_OK;
}

static int add_run(diffset_t *d, int home, size_t pg, size_t off, size_t len, const char *bytes)
{
    while (len) {
        outbuf_t *o = &d->out[home];
        if (!o->buf && !(o->buf = malloc(d->max)))
            return kyi_fail(KY_ERR_NOMEM, d->call, "no memory for diffs");
        if (o->len + 16 + 64 > d->max) KYI_CHECK(send_out(d, home));
        size_t room = d->max - o->len - 16, n = len < room ? len : room;
        uint64_t p = pg;
        uint32_t o32 = (uint32_t)off, n32 = (uint32_t)n;
        memcpy(o->buf + o->len, &p, 8);
        memcpy(o->buf + o->len + 8, &o32, 4);
        memcpy(o->buf + o->len + 12, &n32, 4);
        memcpy(o->buf + o->len + 16, bytes, n);
        o->len += 16 + n;
        off += n, bytes += n, len -= n;
    }
    return KY_OK;
}

/* A chunk of a page goes as byte-exact runs {page, offset, length, bytes} or, when a write changed most of
 * it (rewritten doubles keep equal sign and exponent bytes, so runs are short), as one bitmap record
 * {page, offset, length | KYI_DIFF_BITMAP, bitmap of changed bytes, the changed bytes packed}: never more
 * than 1/8 over the changed bytes themselves. Either way only changed bytes travel, so writes of other
 * ranks to other bytes of the page survive. */
#define CHUNK 16384

static int add_bitmap(diffset_t *d, int home, size_t pg, size_t off, size_t len, const unsigned char *bits,
                      const unsigned char *a, size_t changed)
{
    size_t rec = 16 + len / 8 + changed;
    outbuf_t *o = &d->out[home];
    if (!o->buf && !(o->buf = malloc(d->max))) return kyi_fail(KY_ERR_NOMEM, d->call, "no memory for diffs");
    if (o->len + rec > d->max) KYI_CHECK(send_out(d, home));
    char *w = o->buf + o->len;
    uint64_t p = pg;
    uint32_t o32 = (uint32_t)off, n32 = (uint32_t)len | KYI_DIFF_BITMAP;
    memcpy(w, &p, 8);
    memcpy(w + 8, &o32, 4);
    memcpy(w + 12, &n32, 4);
    memcpy(w + 16, bits, len / 8);
    char *out = w + 16 + len / 8;
    for (size_t i = 0; i < len; i++)
        if (bits[i >> 3] & (1u << (i & 7))) *out++ = (char)a[i];
    o->len += rec;
    return KY_OK;
}

static int diff_page_contents(diffset_t *d, int home, size_t pg);

/* The comparison reads page contents (runtime/hb.h: not checked by TSan). */
static int diff_page(diffset_t *d, int home, size_t pg)
{
    kyi_hb_ignore_begin();
    int st = diff_page_contents(d, home, pg);
    kyi_hb_ignore_end();
    return st;
}

static int diff_page_contents(diffset_t *d, int home, size_t pg)
{
    const unsigned char *a = (const unsigned char *)kyi_pg_data(pg),
                        *b = (const unsigned char *)kyi_pg_twin(pg);
    size_t chunk = kyi_dsm.page < CHUNK ? kyi_dsm.page : CHUNK;
    unsigned char bits[CHUNK / 8];
    int any = 0;
    for (size_t c0 = 0; c0 < kyi_dsm.page; c0 += chunk) {
        const unsigned char *ac = a + c0, *bc = b + c0;
        size_t changed = 0, runs = 0;
        int prev = 0;
        memset(bits, 0, chunk / 8);
        for (size_t i = 0; i < chunk; i += 8) {
            /* Most of a dirty page is usually unchanged: skip equal 256-byte blocks with the library's
             * vectorised compare; the runs below skip unchanged 64-byte stretches of the bitmap. (Walking
             * the bitmap bit by bit took a third of a barrier's time: 45 us per 64 KiB page.) */
            if ((i & 255) == 0 && memcmp(ac + i, bc + i, 256) == 0) {
                prev = 0;
                i += 248;
                continue;
            }
            uint64_t x, y;
            memcpy(&x, ac + i, 8);
            memcpy(&y, bc + i, 8);
            if (x == y) {
                prev = 0;
                continue;
            }
            for (int j = 0; j < 8; j++) {
                int diff = ac[i + j] != bc[i + j];
                if (diff) {
                    bits[(i + j) >> 3] |= (unsigned char)(1u << ((i + j) & 7));
                    changed++;
                    runs += !prev;
                }
                prev = diff;
            }
        }
        if (!changed) continue;
        any = 1;
        if (runs * 16 > 16 + chunk / 8 && 16 + chunk / 8 + changed <= d->max - 16) {
            KYI_CHECK(add_bitmap(d, home, pg, c0, chunk, bits, ac, changed));
            continue;
        }
        for (size_t i = 0; i < chunk;) {
            uint64_t w;
            if ((i & 63) == 0 && (memcpy(&w, bits + (i >> 3), 8), w == 0)) { /* 64 unchanged bytes */
                i += 64;
                continue;
            }
            if (!(bits[i >> 3] & (1u << (i & 7)))) {
                i++;
                continue;
            }
            size_t start = i;
            while (i < chunk && (bits[i >> 3] & (1u << (i & 7)))) i++;
            KYI_CHECK(add_run(d, home, pg, c0 + start, i - start, (const char *)ac + start));
        }
    }
    if (any) {
        KYI_DSM_COUNT(diffs, 1);
        kyi_notice(pg);
    }
    return KY_OK;
}

static int diffset_init(diffset_t *d, const char *call, int release)
{
    memset(d, 0, sizeof *d);
    d->out = calloc((size_t)kyi_rt.nranks, sizeof *d->out);
    d->max = ky_am_max_medium();
    d->release = release;
    pthread_mutex_lock(&kyi_dsm.epoch_lock);
    d->epoch = kyi_dsm.epoch;
    pthread_mutex_unlock(&kyi_dsm.epoch_lock);
    d->call = call;
    return d->out ? KY_OK : kyi_fail(KY_ERR_NOMEM, call, "no memory for diffs");
}

/* Send what is left, wait until every home applied (or queued) its diffs, free; st: the caller's status. */
static int diffset_finish(diffset_t *d, int st)
{
    for (int r = 0; r < kyi_rt.nranks && !st && d->out; r++) st = send_out(d, r);
    for (int i = 0; i < d->nacks; i++) {
        int s = kyi_chan_wait(d->call, -1, &d->acks[i]);
        if (!s && d->ack_val[i] < 0)
            s = kyi_fail((int)d->ack_val[i], d->call, "a home refused a diff (page freed?)");
        if (s && !st) st = s;
    }
    for (int r = 0; r < kyi_rt.nranks && d->out; r++) free(d->out[r].buf);
    free(d->out);
    free(d->acks);
    free(d->ack_val);
    return st;
}

static kyi_vec_t take_list(kyi_vec_t *v)
{
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_t out = *v;
    memset(v, 0, sizeof *v);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    return out;
}

/* The pages a barrier's flush found written (write notices: those kept must become read-only again). */
static kyi_vec_t flushed;

int kyi_flush_diffs(const char *call, int keep, kyi_store_runs_t **defer)
{
    kyi_vec_t dirty = take_list(&kyi_dsm.dirty);
    if (!dirty.len) {
        free(dirty.v);
        return KY_OK;
    }
    diffset_t d;
    kyi_store_runs_t *store_runs = NULL;
    int st = diffset_init(&d, call, keep);
    for (size_t i = 0; i < dirty.len && !st; i++) {
        size_t pg = dirty.v[i];
        pthread_mutex_lock(kyi_pg_lock(pg));
        if (kyi_dsm.state[pg] == KYI_PG_RW) {
            /* A lock release write-protects first: a thread storing meanwhile faults and waits for this
             * lock. A barrier need not: its other threads wait (collective), and the invalidation that
             * follows protects every held page, these included, in one call per run. */
            if (keep) kyi_protect(pg, 1, PROT_READ);
            pthread_rwlock_rdlock(&kyi_dsm.table_lock);
            int home = kyi_page_home(pg, NULL);
            pthread_rwlock_unlock(&kyi_dsm.table_lock);
            if (home == KYI_HOME_STORE)
                st = kyi_store_diff(call, &store_runs, pg); /* written below, unlocked */
            else
                st = home < 0 ? KY_OK : diff_page(&d, home, pg); /* freed meanwhile: nothing */
            kyi_dsm.state[pg] = KYI_PG_RO;
            if (!keep && kyi_dsm.notices) kyi_vec_push(&flushed, pg); /* barrier: its thread alone */
        }
        pthread_mutex_unlock(kyi_pg_lock(pg));
    }
    for (int r = 0; r < kyi_rt.nranks && !st; r++) st = send_out(&d, r);
    if (defer) *defer = store_runs; /* array views: the caller writes them into the blocks later */
    int sst = defer ? KY_OK : kyi_store_flush(call, &store_runs); /* or now, while the diffs travel */
    if (sst && !st) st = sst;
    st = diffset_finish(&d, st);
    free(dirty.v);
    return st;
}

/* ---- the owner's bytes of mixed pages --------------------------------------------------------------- */

typedef struct {
    diffset_t *d;
    int home, st;
    size_t pg, grain, phase; /* phase: the page's offset in its allocation, modulo the element size */
} owned_t;

/* Changed elements of a run this rank owns go whole (a byte-exact diff would merge with another rank's
 * writes to the same element, such as a neighbour's redundant halo computation); the twin follows them. */
static int owned_run(void *ctx, size_t off, size_t len, int owner)
{
    owned_t *o = ctx;
    char *a = kyi_pg_data(o->pg), *b = kyi_pg_twin(o->pg);
    if (owner != kyi_rt.rank || memcmp(a + off, b + off, len) == 0) return 0;
    kyi_notice(o->pg);
    size_t end = off + len, rs = off, re = off;
    for (size_t x = off; x < end;) {
        size_t next = x + (o->grain - (o->phase + x) % o->grain);
        if (next > end) next = end;
        if (memcmp(a + x, b + x, next - x) != 0) {
            if (re != x) {
                if (re > rs && (o->st = add_run(o->d, o->home, o->pg, rs, re - rs, a + rs))) return o->st;
                memcpy(b + rs, a + rs, re - rs);
                rs = x;
            }
            re = next;
        }
        x = next;
    }
    if (re > rs && (o->st = add_run(o->d, o->home, o->pg, rs, re - rs, a + rs))) return o->st;
    memcpy(b + rs, a + rs, re - rs);
    return 0;
}

int kyi_flush_owned(const char *call, kyi_store_runs_t **defer)
{
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_t dirty = {0};
    for (size_t i = 0; i < kyi_dsm.dirty.len; i++) kyi_vec_push(&dirty, kyi_dsm.dirty.v[i]);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    if (!dirty.len) return KY_OK;
    diffset_t d;
    int st = diffset_init(&d, call, 0); /* applied at the homes' publish, like a barrier's */
    for (size_t i = 0; i < dirty.len && !st; i++) {
        size_t pg = dirty.v[i];
        pthread_mutex_lock(kyi_pg_lock(pg));
        pthread_rwlock_rdlock(&kyi_dsm.table_lock);
        const kyi_alloc_t *a = NULL;
        int home = kyi_page_home(pg, &a), rw = kyi_dsm.state[pg] == KYI_PG_RW;
        if (rw && kyi_dsm.mixed[pg] && home >= 0 && a) {
            size_t g = kyi_owner_grain(pg);
            owned_t o = {&d, home, KY_OK, pg, g, ((pg << kyi_dsm.page_shift) - a->off) % g};
            kyi_hb_ignore_begin(); /* page contents (runtime/hb.h) */
            kyi_owner_runs(pg, owned_run, &o);
            kyi_hb_ignore_end();
            st = o.st;
        }
        pthread_rwlock_unlock(&kyi_dsm.table_lock);
        if (rw && home == KYI_HOME_STORE)
            st = kyi_store_diff_owned(call, defer, pg); /* written after arrival */
        pthread_mutex_unlock(kyi_pg_lock(pg));
    }
    free(dirty.v);
    return diffset_finish(&d, st);
}

/* ---- lock acquire ----------------------------------------------------------------------------------- */

int kyi_acquire_invalidate(const char *call)
{
    /* Fetches already under way may carry data older than the lock's previous holder's release: they see
     * this count change and fetch again (fault.c, region.c). */
    /* Counted, and both lists taken, in one step (kyi_install_checked). Every page dirty now is in the held
     * list taken here and is handled below; a page installed (and written) after this step belongs to the
     * new lists and must stay on them: taking the dirty list a moment later dropped such a page's entry,
     * and its writes never went home (the next release sent no diff, the next barrier invalidated them). */
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    atomic_fetch_add(&kyi_dsm.acquires, 1);
    kyi_vec_t held = kyi_dsm.held, gone = {0};
    memset(&kyi_dsm.held, 0, sizeof kyi_dsm.held);
    free(kyi_dsm.dirty.v);
    memset(&kyi_dsm.dirty, 0, sizeof kyi_dsm.dirty);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    diffset_t d;
    int st = diffset_init(&d, call, 1);
    kyi_store_runs_t *store_runs = NULL;
    uint64_t n = 0;
    for (size_t i = 0; i < held.len; i++) {
        size_t pg = held.v[i];
        pthread_mutex_lock(kyi_pg_lock(pg));
        int s = kyi_dsm.state[pg];
        if (s == KYI_PG_RO || s == KYI_PG_RW) {
            kyi_protect(pg, 1, PROT_NONE);
            if (s == KYI_PG_RW && !st) {
                /* Written by a sibling thread (under another lock, or none): its bytes go home first. Until
                 * they are applied the page stays FETCHING, so this rank's threads wait instead of fetching
                 * a version without their own writes. */
                pthread_rwlock_rdlock(&kyi_dsm.table_lock);
                int home = kyi_page_home(pg, NULL);
                pthread_rwlock_unlock(&kyi_dsm.table_lock);
                if (home == KYI_HOME_STORE)
                    st = kyi_store_diff(call, &store_runs, pg);
                else if (home >= 0)
                    st = diff_page(&d, home, pg);
                kyi_dsm.state[pg] = KYI_PG_FETCHING;
                kyi_vec_push(&gone, pg);
            } else {
                kyi_dsm.state[pg] = KYI_PG_NONE;
            }
            n++;
        }
        pthread_mutex_unlock(kyi_pg_lock(pg));
    }
    int sst = kyi_store_flush(call, &store_runs);
    st = diffset_finish(&d, st ? st : sst);
    for (size_t i = 0; i < gone.len; i++) {
        size_t pg = gone.v[i];
        pthread_mutex_lock(kyi_pg_lock(pg));
        kyi_dsm.state[pg] = KYI_PG_NONE;
        pthread_cond_broadcast(&kyi_dsm.fetched[pg % KYI_DSM_STRIPES]);
        pthread_mutex_unlock(kyi_pg_lock(pg));
    }
    free(held.v);
    free(gone.v);
    KYI_DSM_COUNT(invalidations, n);
    return st;
}

void kyi_invalidate_all(int dropped, int collective)
{
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_t held = kyi_dsm.held;
    memset(&kyi_dsm.held, 0, sizeof kyi_dsm.held);
    if (dropped) {
        free(kyi_dsm.dirty.v);
        memset(&kyi_dsm.dirty, 0, sizeof kyi_dsm.dirty);
    }
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    uint64_t n = 0;
    /* In a collective call the other threads wait (documented), so every held page goes, a run at a time. */
    if (collective) kyi_protect_runs(held.v, held.len, PROT_NONE);
    for (size_t i = 0; i < held.len; i++) {
        size_t pg = held.v[i];
        pthread_mutex_lock(kyi_pg_lock(pg));
        int s = kyi_dsm.state[pg];
        if (s == KYI_PG_RO || (dropped && s == KYI_PG_RW) || collective) {
            if (!collective) kyi_protect(pg, 1, PROT_NONE);
            kyi_dsm.state[pg] = KYI_PG_NONE;
            n++;
        } else if (s == KYI_PG_RW) {
            pthread_mutex_lock(&kyi_dsm.lists_lock); /* written after a flush: still ours */
            kyi_vec_push(&kyi_dsm.held, pg);
            pthread_mutex_unlock(&kyi_dsm.lists_lock);
        }
        pthread_mutex_unlock(kyi_pg_lock(pg));
    }
    free(held.v);
    if (dropped)
        KYI_DSM_COUNT(drops, n);
    else
        KYI_DSM_COUNT(invalidations, n);
}

/* ---- write notices ----------------------------------------------------------------------------------- */

/* A barrier used to drop every cached page, and a program that reads a neighbour's block once per interval
 * fetched all of it again after each barrier although only a few pages had changed (NPB under kycc: about
 * 48 pages per barrier on 2 ranks). With snapshots on every home page (KY_DSM_SNAPSHOT=1) a rank knows
 * every page it changed in an interval: as a home, its first store faults; elsewhere, the page's diff. At
 * the barrier the ranks exchange those lists (the write notices of home-based LRC) and drop only the cached
 * pages that another rank changed. A page changed by this rank alone stays: its copy is the new version. */

/* Notices per rank and barrier beyond which the barrier drops everything (the exchange stays small). */
#define NOTICES_MAX 65536

void kyi_notice(size_t pg)
{
    if (!kyi_dsm.notices) return;
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_push(&kyi_dsm.noticed, pg);
    kyi_notices_trim();
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
}

void kyi_notices_trim(void)
{
    /* A program that synchronises without barriers for long would grow the list without end: past a
     * bound the next barrier drops everything instead. */
    if (kyi_dsm.noticed.len > 4 * NOTICES_MAX) {
        kyi_dsm.notices_all = 1;
        kyi_dsm.noticed.len = 0;
    }
}

typedef struct {
    int64_t *count;  /* [nranks]: pages each rank changed, -1 if it cannot name them */
    uint64_t *pages; /* [nranks][max] */
    int64_t max;
    int all; /* drop every cached page */
} notices_t;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The barrier's arrival: each rank's changed pages since the last barrier (the list, and the home pages it
 * wrote in this interval, which its publish has not taken yet) to every rank. Two allgathers on the DSM's
 * team; the first is also the arrival barrier (nobody leaves it before everybody came). */
static int gather_notices(const char *call, notices_t *n)
{
    memset(n, 0, sizeof *n);
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_t v = kyi_dsm.noticed;
    memset(&kyi_dsm.noticed, 0, sizeof v);
    for (size_t i = 0; i < kyi_dsm.written.len; i++) kyi_vec_push(&v, kyi_dsm.written.v[i]);
    /* open intervals (ky_sync_nofetch/nostore) and array views write home data with no fault */
    int full = kyi_dsm.notices_all || kyi_dsm.open_interval || kyi_dsm.nstores;
    kyi_dsm.notices_all = 0;
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    size_t len = 0;
    if (v.len) {
        qsort(v.v, v.len, sizeof *v.v, cmp_u64);
        for (size_t i = 0; i < v.len; i++)
            if (!len || v.v[len - 1] != v.v[i]) v.v[len++] = v.v[i];
    }
    int64_t mine = full || len > NOTICES_MAX ? -1 : (int64_t)len;
    int nr = kyi_rt.nranks;
    n->count = malloc((size_t)nr * sizeof *n->count);
    if (!n->count) {
        free(v.v);
        return kyi_fail(KY_ERR_NOMEM, call, "no memory for write notices");
    }
    int st = ky_allgather(&mine, sizeof mine, n->count, kyi_dsm.team);
    if (st) n->all = 1;
    for (int r = 0; r < nr && !st; r++) {
        if (n->count[r] < 0)
            n->all = 1;
        else if (n->count[r] > n->max)
            n->max = n->count[r];
    }
    if (!st && !n->all && n->max > 0) {
        uint64_t *out = calloc((size_t)n->max, sizeof *out);
        n->pages = malloc((size_t)nr * (size_t)n->max * sizeof *n->pages);
        if (!out || !n->pages) st = kyi_fail(KY_ERR_NOMEM, call, "no memory for write notices");
        /* every rank takes part even so (a collective): the barrier then drops everything */
        if (out)
            for (size_t i = 0; i < len; i++) out[i] = v.v[i];
        int s2 = ky_allgather(out ? out : (void *)n->count, out ? (size_t)n->max * sizeof *out : 0,
                              n->pages ? (void *)n->pages : (void *)n->count, kyi_dsm.team);
        if (!st) st = s2;
        if (st) n->all = 1;
        free(out);
    }
    free(v.v);
    return st;
}

/* After the publish: drop the cached pages another rank changed, keep the others (read-only again). */
static int invalidate_noticed(const char *call, notices_t *n)
{
    if (!kyi_dsm.notice_mark) {
        void *m = mmap(NULL, kyi_dsm.npages, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) return kyi_fail(KY_ERR_NOMEM, call, "no memory for the write notices' marks");
        kyi_dsm.notice_mark = m;
    }
    uint8_t *mark = kyi_dsm.notice_mark;
    for (int r = 0; r < kyi_rt.nranks; r++)
        if (r != kyi_rt.rank)
            for (int64_t i = 0; i < n->count[r]; i++) {
                uint64_t pg = n->pages[(size_t)r * (size_t)n->max + (size_t)i];
                if (pg < kyi_dsm.npages) mark[pg] = 1;
            }
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_t held = kyi_dsm.held;
    memset(&kyi_dsm.held, 0, sizeof kyi_dsm.held);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    kyi_vec_t go = {0}, keep = {0}, ro = {0};
    for (size_t i = 0; i < held.len; i++) kyi_vec_push(mark[held.v[i]] ? &go : &keep, held.v[i]);
    for (size_t i = 0; i < flushed.len; i++)
        if (!mark[flushed.v[i]]) kyi_vec_push(&ro, flushed.v[i]);
    /* The other threads wait (collective): protection first, a run at a time, then the states. */
    kyi_protect_runs(go.v, go.len, PROT_NONE);
    kyi_protect_runs(ro.v, ro.len, PROT_READ);
    for (size_t i = 0; i < go.len; i++) {
        pthread_mutex_lock(kyi_pg_lock(go.v[i]));
        kyi_dsm.state[go.v[i]] = KYI_PG_NONE;
        pthread_mutex_unlock(kyi_pg_lock(go.v[i]));
    }
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    for (size_t i = 0; i < keep.len; i++) kyi_vec_push(&kyi_dsm.held, keep.v[i]);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    for (int r = 0; r < kyi_rt.nranks; r++)
        for (int64_t i = 0; i < n->count[r]; i++) {
            uint64_t pg = n->pages[(size_t)r * (size_t)n->max + (size_t)i];
            if (pg < kyi_dsm.npages) mark[pg] = 0;
        }
    KYI_DSM_COUNT(invalidations, go.len);
    free(held.v), free(go.v), free(keep.v), free(ro.v);
    return KY_OK;
}

enum { MODE_BARRIER, MODE_SYNC, MODE_DROP, MODE_NOFETCH, MODE_NOSTORE };

/* phase: node-shared mode's phase from here on (-1: unchanged; node.c) */
static int synchronise(const char *call, int mode, int phase)
{
    KYI_CHECK(kyi_require_dsm(call));
    uint64_t t0 = kyi_now_ns();
    if (kyi_dsm.node) {
        /* one copy for every page but the stores': a node barrier; the protocol only for store pages */
        kyi_hb_release(&kyi_dsm.team);
        int nst = kyi_node_sync(call, phase);
        kyi_hb_acquire(&kyi_dsm.team);
        if (!kyi_dsm.nstores) {
            KYI_DSM_COUNT(barriers, mode == MODE_BARRIER);
            KYI_DSM_COUNT(syncs, mode != MODE_BARRIER);
            KYI_DSM_COUNT(coherence_ns, kyi_now_ns() - t0);
            return nst;
        }
        if (nst) return nst;
    }
    kyi_store_runs_t *late = NULL;
    /* A barrier sends every change home; the others send the bytes a rank owns on pages homed elsewhere
     * (mixed pages: a block that does not end on a page boundary), which fetchers must see after any
     * synchronisation, as they see a home's own writes. */
    int st = mode == MODE_BARRIER ? kyi_flush_diffs(call, 0, &late) : kyi_flush_owned(call, &late);
    kyi_hb_release(&kyi_dsm.team); /* what the threads did before precedes what any does after (hb.h) */
    notices_t nt;
    int notices = mode == MODE_BARRIER && kyi_dsm.notices;
    /* arrival only (diffs were acked): no ky_quiet */
    int st2 = notices ? gather_notices(call, &nt) : ky_team_barrier(kyi_dsm.team);
    kyi_hb_acquire(&kyi_dsm.team);
    if (mode == MODE_NOFETCH || mode == MODE_NOSTORE) kyi_dsm.notices_all = 1; /* home stores unseen */
    if (kyi_dsm.nstores) {
        /* Array views (store.h): their homes, the blocks, keep no synchronised version, so a rank's changes
         * may land only once every rank has arrived (nobody reads the view of this interval any more), and
         * must be complete before anybody reads again. Every rank knows whether views exist (collective). */
        int s = kyi_store_flush(call, &late),
            s2 = ky_team_barrier(kyi_dsm.team); /* the puts were waited for */
        if (!st) st = s;
        if (!st2) st2 = s2;
    }
    /* Pages opened for a promised interval stay open while the promises go on: write-protecting a whole
     * home and opening it again costs about 0.2 us per 4 KiB page, per synchronisation. */
    /* The new interval's promise is in force before publish advances the interval and answers the
     * fetches that were waiting for it. */
    kyi_dsm.nostore_interval = mode == MODE_NOSTORE;
    kyi_publish(1, mode == MODE_NOFETCH || mode == MODE_NOSTORE, mode == MODE_DROP, mode == MODE_BARRIER);
    if (mode == MODE_NOFETCH && kyi_dsm.snapshot) {
        /* Nobody will fetch until the next synchronisation: open every home page, no snapshots. */
        kyi_home_pages_set(KYI_PG_HOME_RO, KYI_PG_HOME_OPEN, PROT_READ | PROT_WRITE);
        kyi_dsm.open_interval = 1;
    }
    if (notices) {
        int s = nt.all ? (kyi_invalidate_all(0, 1), KY_OK) : invalidate_noticed(call, &nt);
        if (!st) st = s;
        free(nt.count);
        free(nt.pages);
        flushed.len = 0;
    } else if (mode == MODE_BARRIER) {
        kyi_invalidate_all(0, 1);
    }
    if (mode == MODE_DROP) {
        kyi_invalidate_all(1, 1);
        /* every rank dropped every cached page: what was noticed before concerns no copy any more */
        pthread_mutex_lock(&kyi_dsm.lists_lock);
        kyi_dsm.noticed.len = 0;
        kyi_dsm.notices_all = 0;
        pthread_mutex_unlock(&kyi_dsm.lists_lock);
    }
    kyi_sync_done();
    if (mode == MODE_BARRIER)
        KYI_DSM_COUNT(barriers, 1);
    else
        KYI_DSM_COUNT(syncs, 1);
    KYI_DSM_COUNT(coherence_ns, kyi_now_ns() - t0);
    return st ? st : st2;
}

/* every synchronisation a span on the timeline (KY_TRACE); call is a string literal */
static int traced(const char *call, int mode, int phase)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = synchronise(call, mode, phase);
    KYI_TRACE_SPAN("dsm", call, t0, -1, -1);
    return st;
}

int ky_barrier(void)
{
    return traced("ky_barrier", MODE_BARRIER, -1);
}
int ky_sync(void)
{
    return traced("ky_sync", MODE_SYNC, -1);
}
int ky_sync_drop(void)
{
    return traced("ky_sync_drop", MODE_DROP, -1);
}
int ky_sync_nofetch(void)
{
    return traced("ky_sync_nofetch", MODE_NOFETCH, -1);
}
int ky_sync_nostore(void)
{
    return traced("ky_sync_nostore", MODE_NOSTORE, -1);
}

int ky_dsm_phase(int parallel)
{
    if (parallel != 0 && parallel != 1)
        return kyi_fail(KY_ERR_ARG, "ky_dsm_phase", "parallel is %d: 1 (parallel) or 0 (serial)", parallel);
    return traced("ky_dsm_phase", MODE_BARRIER, parallel);
}
