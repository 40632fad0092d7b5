/* Pages of store allocations (store.h): filled from the store on a fault or preload, their diffs written
 * to the store as whole changed elements at a barrier or lock release. The page states and lists are the
 * cached pages' own (NONE -> FETCHING -> RO -> RW with a twin); only where the bytes come from and go to
 * differs, so fault.c, region.c and sync.c reach this file through kyi_fetch_start and kyi_flush_diffs. */
#include <stdlib.h>
#include <string.h>

#include "dsm/dsm.h"

/* The allocation holding byte `off` of the space, copied out of the table (the store functions run
 * without the table lock: they use the comm layer and may wait). */
typedef struct {
    kyi_dsm_store_t store;
    size_t off, bytes, user;
} store_alloc_t;

static int find_store(const char *call, size_t off, store_alloc_t *out)
{
    pthread_rwlock_rdlock(&kyi_dsm.table_lock);
    const kyi_alloc_t *a = kyi_alloc_find(off);
    int ok = a && a->store.read;
    if (ok) *out = (store_alloc_t){a->store, a->off, a->bytes, a->user_bytes};
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    if (!ok)
        return kyi_fail(KY_ERR_RANGE, call, "address %p is not in a live array view",
                        (void *)(kyi_dsm.base + off));
    return KY_OK;
}

int kyi_store_home(const char *call, size_t off)
{
    store_alloc_t a = {0};
    KYI_CHECK(find_store(call, off, &a));
    if (off - a.off >= a.user)
        return kyi_fail(KY_ERR_RANGE, call, "%p is not in a live allocation", (void *)(kyi_dsm.base + off));
    return a.store.home_of(a.store.ctx, off - a.off);
}

int kyi_store_fetch(const char *call, size_t pg, size_t n, int scratch)
{
    for (size_t i = 0; i < n;) {
        size_t off = (pg + i) << kyi_dsm.page_shift;
        store_alloc_t a = {0};
        KYI_CHECK(find_store(call, off, &a));
        /* the pages of this allocation; a run may go on into the next one */
        size_t end = (a.off + a.bytes) >> kyi_dsm.page_shift;
        if (end > pg + n) end = pg + n;
        size_t lo = off - a.off, hi = (end << kyi_dsm.page_shift) - a.off, rd = hi < a.user ? hi : a.user;
        char *dst = kyi_pg_dst(pg + i, scratch);
        if (rd > lo) KYI_CHECK(a.store.read(a.store.ctx, lo, rd - lo, dst));
        if (rd < lo) rd = lo;
        if (hi > rd) memset(dst + (rd - lo), 0, hi - rd); /* the rounding past the caller's size */
        i = end - pg;
    }
    return KY_OK;
}

/* Changed elements of dirty pages, copied with their place: {store, off, len} then len bytes, each record
 * padded to 8 bytes. */
struct kyi_store_runs {
    size_t len, cap;
    char buf[];
};
typedef struct {
    kyi_dsm_store_t store;
    size_t off, len;
} rec_t;

static int add_rec(const char *call, kyi_store_runs_t **runs, const kyi_dsm_store_t *store, size_t off,
                   size_t len, const char *bytes)
{
    size_t need = sizeof(rec_t) + ((len + 7) & ~(size_t)7);
    kyi_store_runs_t *r = *runs;
    if (!r || r->len + need > r->cap) {
        size_t cap = r ? 2 * r->cap : 1 << 16;
        while (cap < (r ? r->len : 0) + need) cap *= 2;
        kyi_store_runs_t *nr = realloc(r, sizeof *nr + cap);
        if (!nr) return kyi_fail(KY_ERR_NOMEM, call, "no memory for %zu bytes of diffs", cap);
        if (!r) nr->len = 0;
        nr->cap = cap;
        *runs = r = nr;
    }
    rec_t h = {*store, off, len};
    memcpy(r->buf + r->len, &h, sizeof h);
    memcpy(r->buf + r->len + sizeof h, bytes, len);
    r->len += need;
    KYI_DSM_COUNT(diff_bytes, len);
    return KY_OK;
}

/* owned: only the elements this rank holds (store.home_of), whose twin then follows the data. */
static int store_diff(const char *call, kyi_store_runs_t **out, size_t pg, int owned)
{
    store_alloc_t a = {0};
    KYI_CHECK(find_store(call, pg << kyi_dsm.page_shift, &a));
    size_t ps = (pg << kyi_dsm.page_shift) - a.off, pe = ps + kyi_dsm.page, g = a.store.grain;
    if (pe > a.user) pe = a.user;
    const char *d = kyi_pg_data(pg), *t = kyi_pg_twin(pg);
    size_t rs = 0, re = 0; /* the run of changed elements being gathered, [rs, re) in allocation bytes */
    int any = 0;
    for (size_t k = ps / g; k * g < pe;) {
        size_t s = k * g > ps ? k * g : ps, e = (k + 1) * g < pe ? (k + 1) * g : pe;
        /* Most of a page is usually unchanged: skip equal 256-byte stretches with the library's compare. */
        if (s + 256 <= pe && memcmp(d + (s - ps), t + (s - ps), 256) == 0 && (s + 256) / g > k) {
            k = (s + 256) / g;
            continue;
        }
        if (memcmp(d + (s - ps), t + (s - ps), e - s) != 0 &&
            (!owned || a.store.home_of(a.store.ctx, k * g) == kyi_rt.rank)) {
            if (re != s) {
                if (re > rs) KYI_CHECK(add_rec(call, out, &a.store, rs, re - rs, d + (rs - ps)));
                if (re > rs && owned) memcpy((char *)t + (rs - ps), d + (rs - ps), re - rs);
                rs = s;
            }
            re = e;
            any = 1;
        }
        k++;
    }
    if (re > rs) KYI_CHECK(add_rec(call, out, &a.store, rs, re - rs, d + (rs - ps)));
    if (re > rs && owned) memcpy((char *)t + (rs - ps), d + (rs - ps), re - rs);
    if (any) KYI_DSM_COUNT(diffs, 1);
    return KY_OK;
}

int kyi_store_diff(const char *call, kyi_store_runs_t **out, size_t pg)
{
    return store_diff(call, out, pg, 0);
}
int kyi_store_diff_owned(const char *call, kyi_store_runs_t **out, size_t pg)
{
    return store_diff(call, out, pg, 1);
}

int kyi_store_flush(const char *call, kyi_store_runs_t **runs)
{
    (void)call;
    kyi_store_runs_t *r = *runs;
    int st = KY_OK;
    for (size_t at = 0; r && at < r->len;) {
        rec_t h;
        memcpy(&h, r->buf + at, sizeof h);
        int s = h.store.write(h.store.ctx, h.off, h.len, r->buf + at + sizeof h);
        if (s && !st) st = s;
        at += sizeof h + ((h.len + 7) & ~(size_t)7);
    }
    free(r);
    *runs = NULL;
    return st;
}
