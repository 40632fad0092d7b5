/* Requester side of page transfers: a fetch is an active message to the home naming the pages, the
 * requester's interval and a reply tag, answered by one message on comm's reply channel received straight
 * into the pages' data slots (service view), so nothing is copied on this side. An 8-byte answer is the
 * home's error status. */
#include <string.h>

#include "dsm/dsm.h"

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
        return kyi_store_fetch(call, pg, n, scratch);
    }
    if (kyi_peer_read(home, pg, n, scratch) == KY_OK) { /* same node: copied from the home's memory already */
        f->direct = 1;
        return KY_OK;
    }
    int tag = kyi_chan_tag();
    KYI_CHECK(kyi_chan_irecv(call, kyi_chan_world(KYI_CHAN_REPLY), home, tag, kyi_pg_dst(pg, scratch), bytes,
                             &f->req));
    pthread_mutex_lock(&kyi_dsm.epoch_lock);
    uint64_t epoch = kyi_dsm.epoch;
    pthread_mutex_unlock(&kyi_dsm.epoch_lock);
    uint64_t args[4] = {pg, n, (uint64_t)tag, epoch};
    int st = ky_am_short(home, KYI_AM_DSM_FETCH, args, 4);
    if (st) kyi_chan_cancel(&f->req);
    return st;
}

int kyi_fetch_wait(const char *call, kyi_fetch_t *f, int nf)
{
    int first = KY_OK;
    for (int i = 0; i < nf; i++) {
        size_t bytes = f[i].n << kyi_dsm.page_shift, count = bytes;
        int st = KY_OK;
        if (!f[i].direct) {
            st = kyi_chan_wait(call, f[i].home, &f[i].req);
            count = f[i].req.got;
        }
        if (!st && count != bytes) {
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
