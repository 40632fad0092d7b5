/* The channel (comm/chan.h): the one place that dispatches to its implementation. The whole job uses one,
 * kyi_chan_impl (set at start-up before any channel exists): MPI (mpi/chan_mpi.c), or UCX's tag matching
 * when the job's transport is UCX (ucx/chan_ucx.c). What does not depend on the transport (the job-wide
 * channels, tags, waits) is here. */
#include "comm/chan_impl.h"
#include "comm/comm.h"

const kyi_chan_ops_t *kyi_chan_impl = &kyi_chan_mpi_ops;

static struct kyi_chan world_chan[2];

void kyi_chan_init(void)
{
    for (int i = 0; i < 2; i++)
        world_chan[i] = (struct kyi_chan){
            .mpi = kyi_mpi_chan_world((kyi_chan_world_t)i), .ucx_id = (uint32_t)i, .n = kyi_rt.nranks};
}

kyi_chan_t *kyi_chan_world(kyi_chan_world_t which)
{
    return &world_chan[which == KYI_CHAN_DATA];
}

/* Tags and their bound come from the MPI transport whichever carries the channel: it is up in every job. */
int kyi_chan_tag(void)
{
    return kyi_mpi_chan_tag();
}

int kyi_chan_tag_ub(void)
{
    return kyi_mpi_chan_tag_ub();
}

int kyi_chan_group(const char *call, int n, const int *world, kyi_chan_t **out)
{
    return kyi_chan_impl->group(call, n, world, out);
}

void kyi_chan_free(kyi_chan_t *c)
{
    kyi_chan_impl->free(c);
}

int kyi_chan_irecv(const char *call, kyi_chan_t *c, int peer, int tag, void *buf, size_t cap,
                   kyi_chan_req_t *r)
{
    return kyi_chan_impl->irecv(call, c, peer, tag, buf, cap, r);
}

int kyi_chan_isend(const char *call, kyi_chan_t *c, int peer, int tag, const void *buf, size_t n,
                   kyi_chan_req_t *r)
{
    return kyi_chan_impl->isend(call, c, peer, tag, buf, n, r);
}

void kyi_chan_req_init(kyi_chan_req_t *r)
{
    r->impl[0] = r->impl[1] = 0; /* the UCX path: no request, complete */
    r->got = 0;
    if (kyi_chan_impl->req_init) kyi_chan_impl->req_init(r);
}

int kyi_chan_test(const char *call, kyi_chan_req_t *r, int *done)
{
    return kyi_chan_impl->test(call, r, done);
}

int kyi_chan_wait(const char *call, int peer, kyi_chan_req_t *r)
{
    kyi_waiter_t w;
    kyi_waiter_init(&w, call, "a reply", peer);
    for (;;) {
        int done = 0;
        KYI_CHECK(kyi_chan_test(call, r, &done));
        if (done) return KY_OK;
        if (!kyi_comm.progress_thread && kyi_progress_poll() > 0) continue;
        kyi_waiter_pause(&w);
    }
}

void kyi_chan_cancel(kyi_chan_req_t *r)
{
    kyi_chan_impl->cancel(r);
}

int kyi_chan_reply(int dest, int tag, const void *buf, size_t n)
{
    return kyi_chan_impl->reply(dest, tag, buf, n, NULL, NULL);
}

int kyi_chan_reply_release(int dest, int tag, const void *buf, size_t n, void (*release)(void *), void *ctx)
{
    return kyi_chan_impl->reply(dest, tag, buf, n, release, ctx);
}

int kyi_chan_flush(void)
{
    /* the MPI transport's deferred sends too in a UCX job: it is up in every job and may have some pending */
    int pending = kyi_chan_impl != &kyi_chan_mpi_ops ? kyi_chan_impl->flush() : 0;
    return pending + kyi_mpi_chan_flush();
}

int kyi_progress_threaded(void)
{
    return kyi_comm.progress_thread;
}
