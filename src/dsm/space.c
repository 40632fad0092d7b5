/* The global address space: reserving the same range in every rank and the memfd behind it (dsm.h says
 * how its three parts are used), page protections, and the layer's set-up and teardown.
 *
 * Layout of the range (KY_GAS_SIZE bytes): the first half for collective allocations, the second half cut
 * into one slice per rank for ky_alloc_local, so a local allocation needs no communication and any rank
 * knows its home from its address alone (alloc.c). */
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

kyi_dsm_t kyi_dsm;
kyi_dsm_stats_t kyi_dsm_stats;

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

void kyi_vec_push(kyi_vec_t *v, size_t x)
{
    if (v->len == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 1024;
        size_t *nv = realloc(v->v, cap * sizeof *nv);
        if (!nv) kyi_fatal("rank %d: dsm: out of memory for page lists", kyi_rt.rank);
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->len++] = x;
}

static char unavailable[200] = "see the warning at ky_init";

int kyi_require_dsm(const char *call)
{
    KYI_CHECK(kyi_require_init(call));
    if (!kyi_dsm.ready)
        return kyi_fail(KY_ERR_UNSUPPORTED, call, "the global address space is not available: %s",
                        unavailable);
    return KY_OK;
}

int kyi_protect(size_t pg, size_t n, int prot)
{
    if (!n) return KY_OK;
    if (mprotect(kyi_pg_app(pg), n << kyi_dsm.page_shift, prot))
        return kyi_fail(KY_ERR_SYSTEM, "dsm", "mprotect of %zu pages failed: %s", n, strerror(errno));
    return KY_OK;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

void kyi_protect_runs(size_t *pages, size_t n, int prot)
{
    qsort(pages, n, sizeof *pages, cmp_size);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && pages[j] <= pages[j - 1] + 1) j++;
        kyi_protect(pages[i], pages[j - 1] - pages[i] + 1, prot);
        i = j;
    }
}

void kyi_home_pages_set(int from, int to, int prot)
{
    /* The runs of matching pages are listed under the table lock and changed after it: the states change
     * under their stripe locks (the progress thread reads them while it serves), and stripe locks come before
     * the table lock everywhere else. Collective: the program's threads wait meanwhile. */
    kyi_vec_t runs = {0}; /* pairs: first page, count */
    pthread_rwlock_rdlock(&kyi_dsm.table_lock);
    for (size_t k = 0; k < kyi_dsm.nallocs; k++) {
        const kyi_alloc_t *a = &kyi_dsm.allocs[k];
        size_t pg0 = a->off >> kyi_dsm.page_shift, n = a->bytes >> kyi_dsm.page_shift, run = 0;
        for (size_t i = 0; i <= n; i++) {
            int s = i < n ? kyi_dsm.state[pg0 + i] : -1;
            if (s >= 0 && kyi_pg_is_home(s) && (from < 0 || s == from)) {
                run++;
            } else if (run) {
                kyi_vec_push(&runs, pg0 + i - run);
                kyi_vec_push(&runs, run);
                run = 0;
            }
        }
    }
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    for (size_t r = 0; r + 1 < runs.len; r += 2) {
        size_t pg0 = runs.v[r], n = runs.v[r + 1];
        for (size_t i = 0; i < n; i++) {
            pthread_mutex_lock(kyi_pg_lock(pg0 + i));
            kyi_dsm.state[pg0 + i] = (uint8_t)to;
            /* written unseen while open: no longer known to be the allocation's zeros */
            if (to == KYI_PG_HOME_OPEN) __atomic_store_n(&kyi_dsm.zero[pg0 + i], 0, __ATOMIC_RELAXED);
            pthread_mutex_unlock(kyi_pg_lock(pg0 + i));
        }
        kyi_protect(pg0, n, prot);
    }
    free(runs.v);
}

/* Same address in every rank: try the preferred one, then others further up, until every rank got it. */
static char *reserve(size_t size, uintptr_t hint)
{
    for (int t = 0; t < 32; t++) {
        uintptr_t want = hint + (uintptr_t)t * 2 * size;
        void *p = mmap((void *)want, size, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        int ok = p == (void *)want;
        if (p != MAP_FAILED && !ok) munmap(p, size); /* old kernels treat the address as a hint */
        int64_t all = ok;
        if (kyi_rt_allreduce_i64(&all, 1, KYI_RT_MIN)) all = 0;
        if (all) return (char *)want;
        if (ok) munmap(p, size);
    }
    return NULL;
}

int kyi_dsm_init(void)
{
    memset(&kyi_dsm_stats, 0, sizeof kyi_dsm_stats);
    if (!kyi_progress_threaded()) {
        /* A home computing outside Kyoyu calls would never answer a fault. */
        snprintf(unavailable, sizeof unavailable,
                 "it needs the progress thread (KY_PROGRESS_THREAD=0 is set)");
        return KY_OK;
    }
    size_t os = (size_t)sysconf(_SC_PAGESIZE);
    size_t page = kyi_setting_size(KYI_SET_PAGE_SIZE);
    if (page < os || (page & (page - 1))) {
        KYI_WARN(KYI_SUB_DSM, "KY_PAGE_SIZE=%zu is not a power of two >= the OS page (%zu); using 64K", page,
                 os);
        page = 65536 < os ? os : 65536;
    }
    size_t size = kyi_setting_size(KYI_SET_GAS_SIZE);
    size_t min = 2 * page * (size_t)kyi_rt.nranks * 16;
    if (size < min) size = min;
    size = (size + 2 * page - 1) & ~(2 * page - 1);
    uintptr_t hint = (uintptr_t)kyi_setting_size(KYI_SET_GAS_BASE) & ~(uintptr_t)(page - 1);
    kyi_dsm.page = page;
    kyi_dsm.page_shift = (size_t)__builtin_ctzl(page);
    kyi_dsm.size = size;
    kyi_dsm.npages = size / page;
    long snap = kyi_setting_long(KYI_SET_DSM_SNAPSHOT);
    kyi_dsm.snapshot = kyi_rt.nranks < 2 ? KYI_SNAP_OFF
                       : snap <= 0       ? KYI_SNAP_OFF
                       : snap == 1       ? KYI_SNAP_ALL
                                         : KYI_SNAP_SHARED;
    long win = kyi_setting_long(KYI_SET_DSM_SHARED_WINDOW);
    kyi_dsm.sticky = win < 0;
    /* Write notices need every home write seen: under KY_DSM_SNAPSHOT=2 pages nobody fetched are written
     * with no fault, so a barrier could not name them. */
    kyi_dsm.notices = kyi_dsm.snapshot == KYI_SNAP_ALL;
    kyi_dsm.shared_window = win < 0 ? 2 : (uint32_t)win;
    kyi_dsm.coll_end = size / 2;
    kyi_dsm.slice_size = (size / 2 / (size_t)kyi_rt.nranks) & ~(page - 1);

    char *base = reserve(size, hint);
    const char *why = NULL;
    if (!base) why = "no address range was free in every rank";
    int fd = -1;
    if (!why) {
        fd = (int)memfd_create("kyoyu-gas", MFD_CLOEXEC);
        kyi_dsm.npages = size / page;
        kyi_dsm.meta_bytes = kyi_meta_size(kyi_dsm.npages);
        if (fd < 0 || ftruncate(fd, (off_t)(3 * size + kyi_dsm.meta_bytes)))
            why = "memfd_create/ftruncate failed";
    }
    if (!why && mmap(base, size, PROT_NONE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, 0) != base)
        why = "mapping the global range failed";
    void *svc = MAP_FAILED;
    if (!why) {
        svc = mmap(NULL, 3 * size + kyi_dsm.meta_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
                   fd, 0);
        if (svc == MAP_FAILED) why = "mapping the service view failed";
    }
    int64_t all = !why;
    if (kyi_rt_allreduce_i64(&all, 1, KYI_RT_MIN)) all = 0;
    if (!all) {
        snprintf(unavailable, sizeof unavailable, "%s (KY_GAS_SIZE=%zu)", why ? why : "another rank failed",
                 size);
        KYI_WARN(KYI_SUB_DSM, "the global address space is not available: %s; ky_alloc and friends will fail",
                 unavailable);
        if (svc != MAP_FAILED) munmap(svc, 3 * size + kyi_dsm.meta_bytes);
        if (base) munmap(base, size);
        if (fd >= 0) close(fd);
        return KY_OK; /* the lower layers still work */
    }
    /* two bytes a page (mixed, zero), touched only where allocations are */
    void *mixed = mmap(NULL, 2 * kyi_dsm.npages, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mixed == MAP_FAILED)
        return kyi_fail(KY_ERR_SYSTEM, "ky_init", "no memory for the page table of the global space");
    kyi_dsm.mixed = mixed;
    kyi_dsm.zero = kyi_dsm.mixed + kyi_dsm.npages;
    kyi_dsm.base = base;
    kyi_dsm.svc = svc;
    kyi_dsm.memfd = fd;
    kyi_dsm.tfd = -1;
    kyi_meta_init();
    pthread_rwlock_init(&kyi_dsm.table_lock, NULL);
    pthread_mutex_init(&kyi_dsm.lists_lock, NULL);
    pthread_mutex_init(&kyi_dsm.epoch_lock, NULL);
    pthread_mutex_init(&kyi_dsm.release_lock, NULL);
    KYI_CHECK(kyi_serve_register());
    KYI_CHECK(kyi_locks_register());
    KYI_CHECK(kyi_fault_install());
    kyi_dsm.ready = 1;
    kyi_peers_open();
    /* The synchronisations' own team (sync.c): their barriers never mix with the program's collectives on
     * KY_TEAM_WORLD, which another thread of a rank may be running meanwhile. */
    KYI_CHECK(ky_team_split(KY_TEAM_WORLD, 0, kyi_rt.rank, &kyi_dsm.team));
    KYI_INFO(KYI_SUB_DSM, "global space at %p, %zu bytes, pages of %zu bytes, snapshots %s", (void *)base,
             size, page,
             kyi_dsm.snapshot == KYI_SNAP_ALL ? "on every home page"
             : kyi_dsm.snapshot               ? "on shared home pages"
                                              : "off");
    return KY_OK;
}

int kyi_dsm_finalize(void)
{
    if (!kyi_dsm.ready) return KY_OK;
    if (kyi_setting_long(KYI_SET_STATS)) ky_dsm_stats_print();
    ky_comm_barrier(); /* nobody fetches from or writes back to this rank any more */
    /* Replies already received may not be released yet: the engine releases them (and touches the page
     * table) when it next tests them, which must happen before the memory goes. */
    kyi_waiter_t w;
    kyi_waiter_init(&w, "ky_finalize", "the global space's replies to be released", -1);
    while (atomic_load(&kyi_dsm.replies) > 0) {
        kyi_chan_flush();
        kyi_waiter_pause(&w);
    }
    ky_team_free(kyi_dsm.team);
    kyi_dsm.ready = 0;
    kyi_node_finalize();
    kyi_fault_uninstall();
    kyi_peers_close();
    munmap(kyi_dsm.svc, 3 * kyi_dsm.size + kyi_dsm.meta_bytes);
    munmap(kyi_dsm.base, kyi_dsm.size);
    munmap(kyi_dsm.mixed, 2 * kyi_dsm.npages);
    for (size_t i = 0; i < kyi_dsm.nallocs; i++) free(kyi_dsm.allocs[i].map);
    close(kyi_dsm.memfd);
    for (size_t i = 0; i < kyi_dsm.nallocs; i++) free(kyi_dsm.allocs[i].page_home);
    free(kyi_dsm.allocs);
    free(kyi_dsm.held.v);
    free(kyi_dsm.dirty.v);
    free(kyi_dsm.written.v);
    free(kyi_dsm.freed.v);
    free(kyi_dsm.noticed.v);
    if (kyi_dsm.notice_mark) munmap(kyi_dsm.notice_mark, kyi_dsm.npages);
    kyi_serve_pool_free();
    memset(&kyi_dsm, 0, sizeof kyi_dsm);
    return KY_OK;
}

int ky_is_global(const void *p)
{
    return kyi_in_gas(p);
}

size_t ky_page_size(void)
{
    return kyi_dsm.ready ? kyi_dsm.page : 0;
}

int ky_gas_range(void **base, size_t *bytes)
{
    KYI_CHECK(kyi_require_dsm("ky_gas_range"));
    if (base) *base = kyi_dsm.base;
    if (bytes) *bytes = kyi_dsm.size;
    return KY_OK;
}
