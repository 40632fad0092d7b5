/* Allocations in the global space: the table (which pages belong to which allocation, and their homes),
 * the collective allocators (ky_alloc, ky_mapalloc: the same first-fit on every rank in the same order, so
 * every rank gets the same address without talking), ky_alloc_local (from the caller's own slice of the
 * space) and ky_free. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm/dsm.h"

const kyi_alloc_t *kyi_alloc_find(size_t off)
{
    size_t lo = 0, hi = kyi_dsm.nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const kyi_alloc_t *a = &kyi_dsm.allocs[mid];
        if (off < a->off)
            hi = mid;
        else if (off >= a->off + a->bytes)
            lo = mid + 1;
        else
            return a;
    }
    return NULL;
}

int kyi_page_home(size_t pg, const kyi_alloc_t **out)
{
    size_t off = pg << kyi_dsm.page_shift;
    const kyi_alloc_t *a = kyi_alloc_find(off);
    if (out) *out = a;
    if (a && a->store.read) return KYI_HOME_STORE;
    if (a) return a->home >= 0 ? a->home : a->page_home[(off - a->off) >> kyi_dsm.page_shift];
    if (off >= kyi_dsm.coll_end) {
        int r = (int)((off - kyi_dsm.coll_end) / kyi_dsm.slice_size);
        if (r < kyi_rt.nranks && r != kyi_rt.rank) return r; /* another rank's local slice: it knows */
    }
    return -1;
}

/* First fit in [lo, hi) among the allocations already there. */
static size_t find_gap(size_t lo, size_t hi, size_t bytes)
{
    size_t at = lo;
    for (size_t i = 0; i < kyi_dsm.nallocs; i++) {
        const kyi_alloc_t *a = &kyi_dsm.allocs[i];
        if (a->off + a->bytes <= lo || a->off >= hi) continue;
        if (a->off >= at + bytes) break;
        at = a->off + a->bytes;
    }
    return at + bytes <= hi ? at : (size_t)-1;
}

static int insert_alloc(const kyi_alloc_t *na)
{
    if (kyi_dsm.nallocs == kyi_dsm.cap_allocs) {
        size_t cap = kyi_dsm.cap_allocs ? 2 * kyi_dsm.cap_allocs : 64;
        kyi_alloc_t *v = realloc(kyi_dsm.allocs, cap * sizeof *v);
        if (!v) return -1;
        kyi_dsm.allocs = v;
        kyi_dsm.cap_allocs = cap;
    }
    size_t i = kyi_dsm.nallocs;
    while (i > 0 && kyi_dsm.allocs[i - 1].off > na->off) {
        kyi_dsm.allocs[i] = kyi_dsm.allocs[i - 1];
        i--;
    }
    kyi_dsm.allocs[i] = *na;
    kyi_dsm.nallocs++;
    return 0;
}

/* Pages this rank is home of start write-protected (snapshot on the first write) or open. They count as
 * fetched now: nobody has a history yet, so every page is guarded for the first intervals. The protection
 * comes first and each state is set under its stripe lock: a sibling's open_home_run may look at the first
 * page of this allocation right now (it follows the page before), and must find either nothing (NONE: it
 * stops) or a page whose mapping already matches the state it then changes (ThreadSanitizer found the
 * unlocked writes). */
static void set_home_states(size_t pg, size_t n, int state, uint32_t now)
{
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(kyi_pg_lock(pg + i));
        kyi_dsm.state[pg + i] = (uint8_t)state;
        /* zero-filled (a new memfd range, or punched by release_pages): its first guarded write copies
         * nothing */
        __atomic_store_n(&kyi_dsm.zero[pg + i], state == KYI_PG_HOME_RO, __ATOMIC_RELAXED);
        __atomic_store_n(&kyi_dsm.fetched_at[pg + i], now & ~KYI_FETCHED, __ATOMIC_RELAXED);
        pthread_mutex_unlock(kyi_pg_lock(pg + i));
    }
}

static int open_home_pages(const kyi_alloc_t *a)
{
    size_t pg0 = a->off >> kyi_dsm.page_shift, n = a->bytes >> kyi_dsm.page_shift;
    if (kyi_dsm.node && !a->store.read) return kyi_node_map_alloc(pg0, n); /* one copy for all (node.c) */
    uint32_t now = (uint32_t)atomic_load(&kyi_dsm.meta->epoch);
    int home_state = kyi_dsm.snapshot ? KYI_PG_HOME_RO : KYI_PG_HOME_RW;
    int prot = kyi_dsm.snapshot ? PROT_READ : PROT_READ | PROT_WRITE;
    size_t run = 0;
    for (size_t i = 0; i <= n; i++) {
        int mine = i < n && !a->store.read && (a->home >= 0 ? a->home : a->page_home[i]) == kyi_rt.rank;
        if (mine) {
            run++;
            continue;
        }
        if (run) {
            KYI_CHECK(kyi_protect(pg0 + i - run, run, prot));
            set_home_states(pg0 + i - run, run, home_state, now);
            run = 0;
        }
        if (i < n) {
            pthread_mutex_lock(kyi_pg_lock(pg0 + i));
            kyi_dsm.state[pg0 + i] = KYI_PG_NONE;
            pthread_mutex_unlock(kyi_pg_lock(pg0 + i));
        }
    }
    return KY_OK;
}

/* Allocate [off, off+bytes) in the table (table_lock held for writing by the caller); *made receives a copy
 * for open_home_pages, which the caller runs once it has released table_lock (it takes stripe locks, which
 * are taken before table_lock everywhere else). */
static void *add_alloc(const char *call, size_t off, size_t bytes, size_t user_bytes, int collective,
                       int home, int *page_home, kyi_map_t *map, const kyi_dsm_store_t *store,
                       kyi_alloc_t *made)
{
    kyi_alloc_t a = {off, bytes, user_bytes, collective, home, page_home, map, {0}};
    if (store) a.store = *store;
    if (insert_alloc(&a)) {
        free(page_home);
        free(map);
        kyi_fail(KY_ERR_NOMEM, call, "no memory for the allocation table");
        return NULL;
    }
    if (map) kyi_map_mark_mixed(map, off >> kyi_dsm.page_shift, user_bytes);
    *made = a;
    return kyi_dsm.base + off;
}

/* Collective argument agreement: every rank must pass the same values, else all fail. */
static int agree(const char *call, const long *vals, int n)
{
    int64_t mx[8], mn[8];
    for (int i = 0; i < n; i++) mx[i] = mn[i] = vals[i];
    KYI_CHECK(kyi_rt_allreduce_i64(mx, n, KYI_RT_MAX));
    KYI_CHECK(kyi_rt_allreduce_i64(mn, n, KYI_RT_MIN));
    for (int i = 0; i < n; i++)
        if (mx[i] != mn[i])
            return kyi_fail(KY_ERR_ARG, call,
                            "ranks passed different arguments (argument %d ranges %lld..%lld)", i + 1,
                            (long long)mn[i], (long long)mx[i]);
    return KY_OK;
}

static void *coll_alloc(const char *call, size_t bytes, int home, int *page_home, kyi_map_t *map,
                        const kyi_dsm_store_t *store)
{
    size_t rounded = (bytes + kyi_dsm.page - 1) & ~(kyi_dsm.page - 1);
    if (!rounded) rounded = kyi_dsm.page;
    pthread_rwlock_wrlock(&kyi_dsm.table_lock);
    size_t off = find_gap(0, kyi_dsm.coll_end, rounded);
    void *p = NULL;
    kyi_alloc_t made;
    if (off == (size_t)-1)
        kyi_fail(KY_ERR_NOMEM, call,
                 "%zu bytes do not fit in the global space's collective half (KY_GAS_SIZE=%zu)", bytes,
                 kyi_dsm.size);
    else
        p = add_alloc(call, off, rounded, bytes, 1, home, page_home, map, store, &made);
    if (!p && off == (size_t)-1) free(page_home), free(map);
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    if (p && open_home_pages(&made) < 0) p = NULL;
    /* Every home knows the allocation before anybody's first fault on it reaches it. */
    if (p && ky_comm_barrier() != KY_OK) return NULL;
    return p;
}

int ky_alloc(size_t bytes, int home, void **out)
{
    static const char *call = "ky_alloc";
    if (out) *out = NULL;
    KYI_CHECK(kyi_require_dsm(call));
    /* out is agreed on too: a rank that passed NULL must not leave the others in the allocation */
    long v[3] = {(long)bytes, home, out != NULL};
    KYI_CHECK(agree(call, v, 3));
    if (!out) return kyi_fail(KY_ERR_ARG, call, "out is NULL");
    if (KYI_SIZE_LOOKS_NEGATIVE(bytes))
        return kyi_fail(KY_ERR_ARG, call, "size %zu looks like a negative number", bytes);
    if (home < 0 || home >= kyi_rt.nranks)
        return kyi_fail(KY_ERR_ARG, call, "home %d is not a rank (0..%d)", home, kyi_rt.nranks - 1);
    *out = coll_alloc(call, bytes, home, NULL, NULL, NULL);
    /* coll_alloc recorded why; every rank made the same first-fit choice, so all fail alike */
    return *out ? KY_OK : KY_ERR_NOMEM;
}

void *kyi_dsm_alloc_store(const char *call, size_t bytes, const kyi_dsm_store_t *store)
{
    if (kyi_require_dsm(call)) return NULL;
    long v[2] = {(long)bytes, store ? (long)store->grain : 0};
    if (agree(call, v, 2)) return NULL;
    if (!store || !store->read || !store->write || !store->home_of || !store->grain) {
        kyi_fail(KY_ERR_INTERNAL, call, "a store allocation needs read, write, home_of and a grain");
        return NULL;
    }
    void *p = coll_alloc(call, bytes, -1, NULL, NULL, store);
    if (p) kyi_dsm.nstores++;
    return p;
}

/* mSMS mapping: block index per dimension, blocks numbered row-major, dealt cyclically over the ranks. */
static int map_home(const int *dims, const int *divs, int nd, size_t elem_index, int first, int count)
{
    size_t rest = elem_index, linear = 0, scale = 1;
    for (int d = nd - 1; d >= 0; d--) {
        size_t idx = rest % (size_t)dims[d];
        rest /= (size_t)dims[d];
        size_t bs = ((size_t)dims[d] + (size_t)divs[d] - 1) / (size_t)divs[d];
        linear += (idx / bs) * scale;
        scale *= (size_t)divs[d];
    }
    return first + (int)(linear % (size_t)count);
}

void *ky_mapalloc(const int dims[], const int divs[], size_t elem, int first, int count)
{
    static const char *call = "ky_mapalloc";
    if (kyi_require_dsm(call)) return NULL;
    if (!dims || !divs) {
        kyi_fail(KY_ERR_ARG, call, "dims or divs is NULL");
        return NULL;
    }
    int nd = 0;
    size_t total = 1;
    while (nd < 16 && dims[nd] != -1) nd++;
    if (nd == 0 || nd == 16) {
        kyi_fail(KY_ERR_ARG, call, "dims must list 1..15 extents ended by -1");
        return NULL;
    }
    for (int d = 0; d < nd; d++) {
        if (dims[d] <= 0 || divs[d] <= 0) {
            kyi_fail(KY_ERR_ARG, call,
                     "dimension %d: extent %d and divisions %d must be positive (divs ends with -1 "
                     "after as many entries as dims)",
                     d, dims[d], divs[d]);
            return NULL;
        }
        total *= (size_t)dims[d];
    }
    if (divs[nd] != -1) {
        kyi_fail(KY_ERR_ARG, call, "divs must have %d entries ended by -1, like dims", nd);
        return NULL;
    }
    if (!elem || first < 0 || count <= 0 || first + count > kyi_rt.nranks) {
        kyi_fail(KY_ERR_ARG, call, "element size %zu, ranks %d..%d: need elem > 0 and ranks within 0..%d",
                 elem, first, first + count - 1, kyi_rt.nranks - 1);
        return NULL;
    }
    size_t bytes = total * elem;
    long v[3 + 2 * 15] = {(long)bytes, first, count};
    int nv = 3;
    for (int d = 0; d < nd && nv + 2 <= 8; d++) {
        v[nv++] = dims[d];
        v[nv++] = divs[d];
    }
    if (agree(call, v, nv)) return NULL;
    size_t npg = (bytes + kyi_dsm.page - 1) >> kyi_dsm.page_shift;
    int *ph = malloc((npg ? npg : 1) * sizeof *ph);
    if (!ph) {
        kyi_fail(KY_ERR_NOMEM, call, "no memory for the page-home table");
        return NULL;
    }
    for (size_t i = 0; i < npg; i++) {
        size_t e = (i << kyi_dsm.page_shift) / elem;
        ph[i] = map_home(dims, divs, nd, e < total ? e : total - 1, first, count);
    }
    if (!npg) ph[0] = first;
    kyi_map_t *map = kyi_map_new(dims, divs, nd, elem, first, count);
    if (!map) {
        free(ph);
        kyi_fail(KY_ERR_NOMEM, call, "no memory for the element mapping");
        return NULL;
    }
    return coll_alloc(call, bytes, -1, ph, map, NULL);
}

void *ky_alloc_local(size_t bytes)
{
    static const char *call = "ky_alloc_local";
    if (kyi_require_dsm(call)) return NULL;
    if (KYI_SIZE_LOOKS_NEGATIVE(bytes)) {
        kyi_fail(KY_ERR_ARG, call, "size %zu looks like a negative number", bytes);
        return NULL;
    }
    size_t rounded = (bytes + kyi_dsm.page - 1) & ~(kyi_dsm.page - 1);
    if (!rounded) rounded = kyi_dsm.page;
    size_t lo = kyi_dsm.coll_end + (size_t)kyi_rt.rank * kyi_dsm.slice_size;
    pthread_rwlock_wrlock(&kyi_dsm.table_lock);
    size_t off = find_gap(lo, lo + kyi_dsm.slice_size, rounded);
    void *p = NULL;
    kyi_alloc_t made;
    if (off == (size_t)-1)
        kyi_fail(KY_ERR_NOMEM, call,
                 "%zu bytes do not fit in this rank's local slice (%zu bytes; raise KY_GAS_SIZE)", bytes,
                 kyi_dsm.slice_size);
    else
        p = add_alloc(call, off, rounded, bytes, 0, kyi_rt.rank, NULL, NULL, NULL, &made);
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    if (p && open_home_pages(&made) < 0) p = NULL;
    return p;
}

/* Forget pages of [pg, pg+n): no access, memory returned, out of every list. */
static void release_pages(size_t pg, size_t n)
{
    for (size_t i = 0; i < n; i++) kyi_wait_unsent(pg + i);
    if (kyi_dsm.node && kyi_dsm.state[pg] >= KYI_PG_NODE)
        kyi_node_release(pg, n);
    else
        kyi_protect(pg, n, PROT_NONE);
    memset(kyi_dsm.state + pg, KYI_PG_NONE, n);
    memset(kyi_dsm.mixed + pg, 0, n);
    memset(kyi_dsm.zero + pg, 0, n);
    size_t off = pg << kyi_dsm.page_shift, len = n << kyi_dsm.page_shift;
    for (int v = 0; v < 3; v++)
        fallocate(kyi_dsm.memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(v * kyi_dsm.size + off),
                  (off_t)len);
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_t *lists[] = {&kyi_dsm.held, &kyi_dsm.dirty, &kyi_dsm.written, &kyi_dsm.freed, &kyi_dsm.priv};
    for (int l = 0; l < 5; l++) {
        size_t k = 0;
        for (size_t i = 0; i < lists[l]->len; i++)
            if (lists[l]->v[i] < pg || lists[l]->v[i] >= pg + n) lists[l]->v[k++] = lists[l]->v[i];
        lists[l]->len = k;
    }
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
}

int ky_free(void *p)
{
    static const char *call = "ky_free";
    if (!p) return KY_OK;
    KYI_CHECK(kyi_require_dsm(call));
    if (!kyi_in_gas(p)) return kyi_fail(KY_ERR_ARG, call, "%p is not in the global address space", p);
    size_t off = (size_t)((char *)p - kyi_dsm.base);
    pthread_rwlock_rdlock(&kyi_dsm.table_lock);
    const kyi_alloc_t *a = kyi_alloc_find(off);
    int ok = a && a->off == off, coll = ok && a->collective;
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    if (!ok) return kyi_fail(KY_ERR_ARG, call, "%p is not the start of a live allocation of this rank", p);
    /* Collective memory: nobody may still be fetching from or writing back to it. */
    if (coll) KYI_CHECK(ky_comm_barrier());
    pthread_rwlock_wrlock(&kyi_dsm.table_lock);
    a = kyi_alloc_find(off);
    size_t i = (size_t)(a - kyi_dsm.allocs);
    release_pages(off >> kyi_dsm.page_shift, a->bytes >> kyi_dsm.page_shift);
    free(a->page_home);
    free(a->map);
    if (a->store.read) kyi_dsm.nstores--;
    /* Local memory is freed by its home alone; others may still cache its pages, which a later local
     * allocation reuses: the next barrier drops every cached page (write notices cannot name them). */
    if (!coll) kyi_dsm.notices_all = 1;
    memmove(&kyi_dsm.allocs[i], &kyi_dsm.allocs[i + 1], (kyi_dsm.nallocs - i - 1) * sizeof *kyi_dsm.allocs);
    kyi_dsm.nallocs--;
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    return KY_OK;
}

int ky_home_of(const void *p)
{
    static const char *call = "ky_home_of";
    KYI_CHECK(kyi_require_dsm(call));
    if (!kyi_in_gas(p)) return kyi_fail(KY_ERR_ARG, call, "%p is not in the global address space", p);
    pthread_rwlock_rdlock(&kyi_dsm.table_lock);
    int h = kyi_page_home(kyi_pg(p), NULL);
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    if (h == KYI_HOME_STORE) return kyi_store_home(call, (size_t)((const char *)p - kyi_dsm.base));
    if (h < 0) return kyi_fail(KY_ERR_RANGE, call, "%p is not in a live allocation", p);
    return h;
}
