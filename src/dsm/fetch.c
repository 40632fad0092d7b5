/* Requester side of page transfers: a fetch is an active message to the home naming the pages, the
 * requester's interval and a reply tag, answered by one MPI message received straight into the pages' data
 * slots (service view), so nothing is copied on this side. An 8-byte answer is the home's error status. */
#include <string.h>

#include "dsm/dsm.h"

int kyi_dsm_wait(const char *call, int peer, MPI_Request *r, int *count)
{
    kyi_waiter_t w;
    kyi_waiter_init(&w, call, "a reply", peer);
    for (;;) {
        MPI_Status s;
        int done = 0;
        if (MPI_Test(r, &done, &s) != MPI_SUCCESS)
            return kyi_fail(KY_ERR_MPI, call, "MPI_Test failed waiting on rank %d", peer);
        if (done) {
            if (count) MPI_Get_count(&s, MPI_BYTE, count);
            return KY_OK;
        }
        if (!kyi_comm.progress_thread && kyi_progress_poll() > 0) continue;
        kyi_waiter_pause(&w);
    }
}

int kyi_fetch_start(const char *call, kyi_fetch_t *f, int home, size_t pg, size_t n, int scratch)
{
    size_t bytes = n << kyi_dsm.page_shift;
    if (bytes > (size_t)1 << 30)
        return kyi_fail(KY_ERR_INTERNAL, call, "fetch of %zu bytes in one message", bytes);
    f->home = home;
    f->pg = pg;
    f->n = n;
    f->direct = 0;
    f->scratch = scratch;
    if (home == KYI_HOME_STORE) { /* an array view's page: read from the blocks, in this thread */
        f->direct = 1;
        f->req = MPI_REQUEST_NULL;
        return kyi_store_fetch(call, pg, n, scratch);
    }
    if (kyi_peer_read(home, pg, n, scratch) == KY_OK) { /* same node: copied from the home's memory already */
        f->direct = 1;
        f->req = MPI_REQUEST_NULL;
        return KY_OK;
    }
    int tag = (int)kyi_new_tag();
    if (MPI_Irecv(kyi_pg_dst(pg, scratch), (int)bytes, MPI_BYTE, home, tag, kyi_comm.rep, &f->req) !=
        MPI_SUCCESS)
        return kyi_fail(KY_ERR_MPI, call, "MPI_Irecv for pages from rank %d failed", home);
    pthread_mutex_lock(&kyi_dsm.epoch_lock);
    uint64_t epoch = kyi_dsm.epoch;
    pthread_mutex_unlock(&kyi_dsm.epoch_lock);
    uint64_t args[4] = {pg, n, (uint64_t)tag, epoch};
    int st = ky_am_short(home, KYI_AM_DSM_FETCH, args, 4);
    if (st) {
        MPI_Cancel(&f->req);
        MPI_Wait(&f->req, MPI_STATUS_IGNORE);
    }
    return st;
}

int kyi_fetch_wait(const char *call, kyi_fetch_t *f, int nf)
{
    int first = KY_OK;
    for (int i = 0; i < nf; i++) {
        int count = 0;
        size_t bytes = f[i].n << kyi_dsm.page_shift;
        int st = KY_OK;
        if (f[i].direct)
            count = (int)bytes;
        else
            st = kyi_dsm_wait(call, f[i].home, &f[i].req, &count);
        if (!st && (size_t)count != bytes) {
            int64_t remote = 0;
            if (count == 8) memcpy(&remote, kyi_pg_dst(f[i].pg, f[i].scratch), 8);
            st = kyi_fail(count == 8 ? (int)remote : KY_ERR_INTERNAL, call,
                          "rank %d refused pages at %p (+%zu bytes): %s", f[i].home,
                          (void *)kyi_pg_app(f[i].pg), bytes,
                          count == 8 ? "not in a live allocation homed there" : "short reply");
        }
        if (!st) {
            KYI_DSM_COUNT(pages_fetched, f[i].n);
            KYI_DSM_COUNT(bytes_fetched, bytes);
        }
        if (st && !first) first = st;
    }
    return first;
}

int kyi_fetch_run(const char *call, int home, size_t pg, size_t n)
{
    kyi_fetch_t f;
    KYI_CHECK(kyi_fetch_start(call, &f, home, pg, n, 0));
    return kyi_fetch_wait(call, &f, 1);
}
