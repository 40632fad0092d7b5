/* Rectangular regions of global arrays (seed 000 Appendix 1, SCASH's update): the pages a region touches,
 * fetched in bulk (preload), refreshed in place (overload) or sent by their home (push). Pages of one home
 * that are contiguous travel in one message; all messages of a call are in flight together. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm/dsm.h"

#define KYI_RUN_MAX_PAGES(page) (((size_t)64 << 20) / (page)) /* one message at most 64 MiB */

/* The sorted, distinct pages of the region (rows of region[ndim-1] elements). */
static int region_pages(const char *call, const void *base, const size_t glb[], const size_t region[],
                        int ndim, size_t elem, kyi_vec_t *out)
{
    memset(out, 0, sizeof *out);
    if (!base || !glb || !region || ndim < 1 || ndim > 8 || !elem)
        return kyi_fail(KY_ERR_ARG, call,
                        "need base, glb and region arrays, 1 <= ndim <= 8 (got %d), elem > 0", ndim);
    size_t stride[8], rows = 1;
    stride[ndim - 1] = elem;
    for (int d = ndim - 1; d >= 0; d--) {
        if (region[d] > glb[d])
            return kyi_fail(KY_ERR_ARG, call, "region[%d] = %zu exceeds glb[%d] = %zu", d, region[d], d,
                            glb[d]);
        if (d > 0) stride[d - 1] = stride[d] * glb[d];
        if (d < ndim - 1) rows *= region[d];
        if (!region[d]) return KY_OK;
    }
    size_t row_bytes = region[ndim - 1] * elem;
    const char *first = base, *last = first;
    for (int d = 0; d < ndim; d++) last += (region[d] - 1) * stride[d];
    last += elem - 1;
    if (!kyi_in_gas(first) || !kyi_in_gas(last))
        return kyi_fail(KY_ERR_RANGE, call, "region %p .. %p is not inside the global address space",
                        (const void *)first, (const void *)last);
    size_t idx[8] = {0};
    for (size_t r = 0; r < rows; r++) {
        const char *p = first;
        for (int d = 0; d < ndim - 1; d++) p += idx[d] * stride[d];
        size_t a = kyi_pg(p), b = kyi_pg(p + row_bytes - 1);
        for (size_t pg = a; pg <= b; pg++)
            if (!out->len || out->v[out->len - 1] < pg) kyi_vec_push(out, pg);
        for (int d = ndim - 2; d >= 0; d--) {
            if (++idx[d] < region[d]) break;
            idx[d] = 0;
        }
    }
    return KY_OK;
}

/* Homes of the pages; every page must be in a live allocation this rank knows or another rank's slice. */
static int page_homes(const char *call, const kyi_vec_t *pages, int *home)
{
    pthread_rwlock_rdlock(&kyi_dsm.table_lock);
    int bad = -1;
    for (size_t i = 0; i < pages->len && bad < 0; i++) {
        home[i] = kyi_page_home(pages->v[i], NULL);
        if (home[i] == -1) bad = (int)i;
    }
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    if (bad >= 0)
        return kyi_fail(KY_ERR_RANGE, call, "page at %p is not in a live allocation",
                        (void *)kyi_pg_app(pages->v[bad]));
    return KY_OK;
}

/* Fetch the marked pages (want[i]) in runs of one home, all in flight at once. */
static int fetch_marked(const char *call, const kyi_vec_t *pages, const int *home, const char *want)
{
    size_t max = KYI_RUN_MAX_PAGES(kyi_dsm.page), nf = 0;
    kyi_fetch_t *f = malloc((pages->len ? pages->len : 1) * sizeof *f);
    if (!f) return kyi_fail(KY_ERR_NOMEM, call, "no memory for %zu fetches", pages->len);
    int st = KY_OK;
    for (size_t i = 0; i < pages->len && !st;) {
        if (!want[i]) {
            i++;
            continue;
        }
        size_t j = i + 1;
        /* new (1) and refreshed (2) pages land in their data slots, refreshed dirty pages holding this rank's
         * own elements (3) in their scratch slots: one kind a run */
        while (j < pages->len && want[j] == want[i] && home[j] == home[i] &&
               pages->v[j] == pages->v[j - 1] + 1 && j - i < max)
            j++;
        st = kyi_fetch_start(call, &f[nf], home[i], pages->v[i], j - i, want[i] == 3);
        if (!st) nf++;
        i = j;
    }
    int st2 = kyi_fetch_wait(call, f, (int)nf);
    free(f);
    return st ? st : st2;
}

/* Overload of a dirty page that holds elements of this rank: the refresh (in the scratch slot) replaces the
 * others' elements, data and twin; this rank's own keep their writes and stay dirty. */
static int refresh_run(void *ctx, size_t off, size_t len, int owner)
{
    size_t pg = *(const size_t *)ctx;
    if (owner == kyi_rt.rank) return 0;
    kyi_page_copy(kyi_pg_data(pg) + off, kyi_pg_snap(pg) + off, len);
    kyi_page_copy(kyi_pg_twin(pg) + off, kyi_pg_snap(pg) + off, len);
    return 0;
}

/* Install a refreshed page (stripe lock held; the rank's acquires and releases are held off, so the page
 * is still in the state it was claimed in). */
static void refresh_page(size_t pg, int scratch)
{
    int s = kyi_dsm.state[pg];
    if (s == KYI_PG_RW && scratch) {
        pthread_rwlock_rdlock(&kyi_dsm.table_lock);
        kyi_owner_runs(pg, refresh_run, &pg);
        pthread_rwlock_unlock(&kyi_dsm.table_lock);
    } else if (s == KYI_PG_RW) {
        /* refreshed data is the home's, not a local write: the twin follows it */
        kyi_page_copy(kyi_pg_twin(pg), kyi_pg_data(pg), kyi_dsm.page);
    }
}

static int load(const char *call, void *base, const size_t glb[], const size_t region[], int ndim,
                size_t elem, int rw, int refresh)
{
    KYI_CHECK(kyi_require_dsm(call));
    uint64_t t0 = kyi_now_ns();
    kyi_vec_t pages;
    KYI_CHECK(region_pages(call, base, glb, region, ndim, elem, &pages));
    int *home = malloc((pages.len ? pages.len : 1) * sizeof *home);
    char *want = calloc(pages.len ? pages.len : 1, 1);
    int st = home && want ? page_homes(call, &pages, home) : kyi_fail(KY_ERR_NOMEM, call, "no memory");
    /* An overload replaces data of pages this rank holds. A sibling thread's lock release may be sending
     * the same page's diff home right now (the page already read-only again): a refresh fetched before the
     * home applied it would wipe this rank's own writes. So overloads, releases and acquires of a rank go
     * one at a time. */
    pthread_mutex_lock(&kyi_dsm.release_lock); /* and preloads too: no acquire meanwhile (fault.c says why) */
    size_t nnew = 0, nref = 0;
    /* Claim the pages: NONE -> FETCHING (new); held pages are refreshed by overload, left by preload. */
    for (size_t i = 0; i < pages.len && !st; i++) {
        size_t pg = pages.v[i];
        if (kyi_dsm.node && home[i] != KYI_HOME_STORE) {
            /* node-shared mode: nothing to load; another rank's local page is mapped here now */
            if (kyi_dsm.state[pg] == KYI_PG_NONE) st = kyi_touch_page(call, pg, 0);
            continue;
        }
        if (home[i] == kyi_rt.rank) {
            /* the home's own copy: an overload drops its writes to other owners' elements, like anyone's */
            if (refresh && kyi_dsm.mixed[pg]) {
                pthread_mutex_lock(kyi_pg_lock(pg));
                kyi_revert_foreign(pg);
                pthread_mutex_unlock(kyi_pg_lock(pg));
            }
            continue;
        }
        pthread_mutex_lock(kyi_pg_lock(pg));
        int s = kyi_dsm.state[pg];
        if (s == KYI_PG_NONE) {
            kyi_dsm.state[pg] = KYI_PG_FETCHING;
            want[i] = 1, nnew++;
        } else if (refresh && (s == KYI_PG_RO || s == KYI_PG_RW)) {
            want[i] = s == KYI_PG_RW && kyi_dsm.mixed[pg] ? 3 : 2, nref++;
        } else if (!refresh && rw && s == KYI_PG_RO) {
            st = kyi_open_for_write(pg);
        }
        pthread_mutex_unlock(kyi_pg_lock(pg));
    }
    if (!st && (nnew || nref)) st = fetch_marked(call, &pages, home, want);
    /* New read-only pages: one protection change per run of pages (a call per page was a third of a
     * same-node preload), before the states change, so a thread that finds a page RO can read it. */
    kyi_vec_t fresh = {0};
    if (!st && !rw && nnew) {
        for (size_t i = 0; i < pages.len; i++)
            if (want[i] == 1) kyi_vec_push(&fresh, pages.v[i]);
        kyi_protect_runs(fresh.v, fresh.len, PROT_READ);
    }
    for (size_t i = 0; i < pages.len && want; i++) {
        if (!want[i]) continue;
        size_t pg = pages.v[i];
        pthread_mutex_lock(kyi_pg_lock(pg));
        if (want[i] == 1) {
            if (st)
                kyi_dsm.state[pg] = KYI_PG_NONE;
            else if (fresh.len)
                kyi_dsm.state[pg] = KYI_PG_RO;
            else
                st = kyi_install(pg, rw);
            pthread_cond_broadcast(&kyi_dsm.fetched[pg % KYI_DSM_STRIPES]);
        } else if (!st) {
            refresh_page(pg, want[i] == 3);
        }
        pthread_mutex_unlock(kyi_pg_lock(pg));
    }
    if (fresh.len) {
        pthread_mutex_lock(&kyi_dsm.lists_lock);
        for (size_t i = 0; i < fresh.len; i++) kyi_vec_push(&kyi_dsm.held, fresh.v[i]);
        pthread_mutex_unlock(&kyi_dsm.lists_lock);
        free(fresh.v);
    }
    if (!st) {
        if (refresh)
            KYI_DSM_COUNT(pages_overloaded, nref + nnew);
        else
            KYI_DSM_COUNT(pages_preloaded, nnew);
    }
    free(home);
    pthread_mutex_unlock(&kyi_dsm.release_lock);
    free(want);
    free(pages.v);
    KYI_DSM_COUNT(coherence_ns, kyi_now_ns() - t0);
    return st;
}

int ky_preload_array(void *base, const size_t glb[], const size_t region[], int ndim, size_t elem, int rw)
{
    return load("ky_preload_array", base, glb, region, ndim, elem, rw, 0);
}

int ky_overload_array(void *base, const size_t glb[], const size_t region[], int ndim, size_t elem, int rw)
{
    return load("ky_overload_array", base, glb, region, ndim, elem, rw, 1);
}

int ky_push_array(void *base, const size_t glb[], const size_t region[], int ndim, size_t elem, int to_rank)
{
    static const char *call = "ky_push_array";
    KYI_CHECK(kyi_require_dsm(call));
    if (to_rank < 0 || to_rank >= kyi_rt.nranks)
        return kyi_fail(KY_ERR_ARG, call, "to_rank %d is not a rank (0..%d)", to_rank, kyi_rt.nranks - 1);
    kyi_vec_t pages;
    KYI_CHECK(region_pages(call, base, glb, region, ndim, elem, &pages));
    int *home = malloc((pages.len ? pages.len : 1) * sizeof *home);
    int st = home ? page_homes(call, &pages, home) : kyi_fail(KY_ERR_NOMEM, call, "no memory");
    for (size_t i = 0; i < pages.len && !st; i++)
        if (home[i] == KYI_HOME_STORE)
            st = kyi_fail(KY_ERR_UNSUPPORTED, call,
                          "%p is in an array's DSM view, whose homes are the blocks: "
                          "nothing to push (ky_array_put moves data into blocks)",
                          (void *)kyi_pg_app(pages.v[i]));
    size_t max = KYI_RUN_MAX_PAGES(kyi_dsm.page);
    /* node-shared mode: the rank reads the one copy already */
    for (size_t i = 0; i < pages.len && !st && to_rank != kyi_rt.rank && !kyi_dsm.node;) {
        if (home[i] != kyi_rt.rank) {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < pages.len && home[j] == kyi_rt.rank && pages.v[j] == pages.v[j - 1] + 1 && j - i < max)
            j++;
        size_t n = j - i, bytes = n << kyi_dsm.page_shift;
        char *buf = malloc(bytes);
        if (!buf) {
            st = kyi_fail(KY_ERR_NOMEM, call, "no memory for %zu bytes", bytes);
            break;
        }
        kyi_serve_copy(buf, pages.v[i], n);
        int tag = kyi_chan_tag();
        kyi_chan_req_t r, ra;
        if ((st = kyi_chan_isend(call, kyi_chan_world(KYI_CHAN_DATA), to_rank, tag, buf, bytes, &r))) {
            free(buf);
            break;
        }
        int atag = kyi_chan_tag();
        int64_t ack = KY_ERR_INTERNAL;
        int st3 = kyi_chan_irecv(call, kyi_chan_world(KYI_CHAN_REPLY), to_rank, atag, &ack, 8, &ra);
        uint64_t args[5] = {pages.v[i], n, (uint64_t)tag, (uint64_t)atag, atomic_load(&kyi_dsm.synced)};
        st = st3 ? st3 : ky_am_short(to_rank, KYI_AM_DSM_PUSH, args, 5);
        if (st) { /* no request went out: nothing will receive the data or answer */
            if (!st3) kyi_chan_cancel(&ra);
            kyi_chan_cancel(&r);
        }
        int st2 = st ? st : kyi_chan_wait(call, to_rank, &r);
        st3 = st ? st : kyi_chan_wait(call, to_rank, &ra);
        free(buf);
        if (!st) st = st2 ? st2 : st3;
        if (!st && ack < 0)
            st = kyi_fail((int)ack, call, "rank %d could not install the pushed pages", to_rank);
        if (!st) KYI_DSM_COUNT(pages_pushed, n);
        i = j;
    }
    free(home);
    free(pages.v);
    return st;
}
