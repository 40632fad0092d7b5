/* Same-node homes read directly. A rank's memfd ends with a meta part: its interval number, the stripe locks
 * (process-shared) and the page states. Ranks of one node map each other's memfds (data and snapshots
 * read-only, meta read-write) and a fault on a page homed next door copies it straight from there, under the
 * home's stripe lock. That is the lock the home takes to change a page's state, its data through diffs,
 * or its snapshot. This is the same rule the home's own reply path follows (serve.c), so no home thread is
 * involved: `MPI_Get` through a shared window is the floor this path aims at.
 *
 * When it does not apply (the peer could not be mapped, KY_NODE_SPLIT=rank makes it another node, a page is
 * not live there) the fetch goes as a message, as across nodes. A home that has not finished the
 * synchronisation the reader already passed is waited for. KY_DSM_DIRECT=0 turns it off. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dsm/dsm.h"
#include "runtime/config.h"

size_t kyi_meta_size(size_t npages)
{
    size_t os = (size_t)sysconf(_SC_PAGESIZE);
    return (sizeof(kyi_meta_t) + ((2 * npages + 7) & ~(size_t)7) + 4 * npages + os - 1) & ~(os - 1);
}

void kyi_meta_init(void)
{
    kyi_meta_t *m = (kyi_meta_t *)(kyi_dsm.svc + 3 * kyi_dsm.size);
    pthread_mutexattr_t ma;
    pthread_condattr_t ca;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_condattr_init(&ca);
    pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    for (int i = 0; i < KYI_DSM_STRIPES; i++) {
        pthread_mutex_init(&m->stripe[i], &ma);
        pthread_cond_init(&m->fetched[i], &ca);
    }
    atomic_store(&m->epoch, 0);
    kyi_dsm.meta = m;
    kyi_dsm.stripe = m->stripe;
    kyi_dsm.fetched = m->fetched;
    kyi_dsm.state = (uint8_t *)(m + 1);
    kyi_dsm.sending = kyi_dsm.state + kyi_dsm.npages;
    kyi_dsm.fetched_at = (uint32_t *)(kyi_dsm.state + ((2 * kyi_dsm.npages + 7) & ~(size_t)7));
}

void kyi_peers_open(void)
{
    kyi_dsm.direct = kyi_setting_long(KYI_SET_DSM_DIRECT) != 0;
    int mine[2] = {(int)getpid(), kyi_dsm.memfd}, *all = malloc(sizeof(int) * 2 * (size_t)kyi_rt.nranks);
    kyi_dsm.peer = calloc((size_t)kyi_rt.nranks, sizeof *kyi_dsm.peer);
    if (!all || !kyi_dsm.peer || kyi_rt_allgather(mine, sizeof mine, all)) {
        free(all);
        free(kyi_dsm.peer);
        kyi_dsm.peer = NULL;
        return;
    }
    for (int r = 0; r < kyi_rt.nranks; r++)
        kyi_dsm.peer[r].pid = all[2 * r], kyi_dsm.peer[r].memfd = all[2 * r + 1];
    int opened = 0;
    for (int r = 0; r < kyi_rt.nranks && kyi_dsm.direct; r++) {
        if (r == kyi_rt.rank || kyi_rt.node_of[r] != kyi_rt.node) continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", all[2 * r], all[2 * r + 1]);
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            KYI_INFO(KYI_SUB_DSM, "cannot open rank %d's memory (%s): its pages come by message", r, path);
            continue;
        }
        void *map = mmap(NULL, 2 * kyi_dsm.size, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd, 0);
        void *meta =
            mmap(NULL, kyi_dsm.meta_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)(3 * kyi_dsm.size));
        close(fd);
        if (map == MAP_FAILED || meta == MAP_FAILED) {
            if (map != MAP_FAILED) munmap(map, 2 * kyi_dsm.size);
            if (meta != MAP_FAILED) munmap(meta, kyi_dsm.meta_bytes);
            continue;
        }
        kyi_dsm.peer[r].map = map;
        kyi_dsm.peer[r].meta = meta;
        kyi_dsm.peer[r].state = (uint8_t *)((kyi_meta_t *)meta + 1);
        kyi_dsm.peer[r].fetched_at =
            (uint32_t *)(kyi_dsm.peer[r].state + ((2 * kyi_dsm.npages + 7) & ~(size_t)7));
        opened++;
    }
    free(all);
    KYI_INFO(KYI_SUB_DSM, "same-node homes read directly: %d", opened);
}

void kyi_peers_close(void)
{
    for (int r = 0; kyi_dsm.peer && r < kyi_rt.nranks; r++)
        if (kyi_dsm.peer[r].map) {
            munmap(kyi_dsm.peer[r].map, 2 * kyi_dsm.size);
            munmap(kyi_dsm.peer[r].meta, kyi_dsm.meta_bytes);
        }
    free(kyi_dsm.peer);
    kyi_dsm.peer = NULL;
}

int kyi_peer_read(int home, size_t pg, size_t n, int scratch)
{
    if (!kyi_dsm.peer || home < 0 || home >= kyi_rt.nranks) return KY_PENDING;
    kyi_peer_t *p = &kyi_dsm.peer[home];
    if (!p->map) return KY_PENDING;
    pthread_mutex_lock(&kyi_dsm.epoch_lock);
    uint64_t mine = kyi_dsm.epoch;
    pthread_mutex_unlock(&kyi_dsm.epoch_lock);
    uint64_t theirs = atomic_load(&p->meta->epoch);
    if (theirs < mine) {
        /* The home passed the same barrier and is publishing now (it waits for nobody). Waiting for it here
         * costs microseconds; the message path would queue the request behind its publish and then need its
         * progress thread, which on a full node is the slow part (a fault right after a sync took 10x). */
        kyi_waiter_t w;
        kyi_waiter_init(&w, "page fault", "a same-node home to finish its synchronisation", home);
        while ((theirs = atomic_load(&p->meta->epoch)) < mine) kyi_waiter_pause(&w);
    }
    for (size_t i = 0; i < n; i++) {
        size_t q = pg + i;
        pthread_mutex_t *lk = &p->meta->stripe[q % KYI_DSM_STRIPES];
        pthread_mutex_lock(lk);
        int s = p->state[q];
        if (!kyi_pg_is_home(s)) {
            pthread_mutex_unlock(lk);
            return KY_PENDING; /* not live there (the message path reports it) */
        }
        /* the home guards the page from its next interval on (serve.c does the same) */
        __atomic_store_n(&p->fetched_at[q], kyi_fetch_mark(theirs), __ATOMIC_RELAXED);
        if (s == KYI_PG_HOME_FREE) KYI_DSM_COUNT(unguarded_reads, 1);
        /* the synchronised version: the snapshot of a page the home wrote since, zeros for one it wrote
         * first since its allocation (no snapshot was needed), else its data */
        const char *src =
            p->map + (s == KYI_PG_HOME_RW && kyi_dsm.snapshot ? kyi_dsm.size : 0) + (q << kyi_dsm.page_shift);
        if (s == KYI_PG_HOME_FRESH) {
            kyi_hb_ignore_begin();
            memset(kyi_pg_dst(q, scratch), 0, kyi_dsm.page);
            kyi_hb_ignore_end();
        } else {
            kyi_page_copy(kyi_pg_dst(q, scratch), src, kyi_dsm.page);
        }
        pthread_mutex_unlock(lk);
    }
    return KY_OK;
}
