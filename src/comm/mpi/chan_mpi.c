/* The channel (comm/chan.h) on MPI, for chan.c: the job-wide channels are comm's reply and data
 * communicators, a group is a communicator of its own; requests are MPI requests kept in the caller's
 * kyi_chan_req_t, so a send or receive costs what the MPI call it wraps costs (no copy, no allocation). */
#include <stdlib.h>

#include "comm/chan_impl.h"
#include "comm/comm.h"
#include "comm/mpi/mpi.h"

struct kyi_chan_mpi {
    MPI_Comm comm;
};

static struct kyi_chan_mpi world_mpi[2];

_Static_assert(sizeof(MPI_Request) <= sizeof(((kyi_chan_req_t *)0)->impl), "kyi_chan_req_t too small");

static MPI_Request *mreq(kyi_chan_req_t *r)
{
    return (MPI_Request *)(void *)r->impl;
}

void kyi_mpi_chan_init(void)
{
    world_mpi[KYI_CHAN_REPLY].comm = kyi_mpi.rep;
    world_mpi[KYI_CHAN_DATA].comm = kyi_mpi.data;
}

struct kyi_chan_mpi *kyi_mpi_chan_world(kyi_chan_world_t which)
{
    return &world_mpi[which == KYI_CHAN_DATA];
}

int kyi_mpi_chan_tag(void)
{
    return (int)kyi_new_tag();
}

int kyi_mpi_chan_tag_ub(void)
{
    return kyi_mpi.tag_ub;
}

static int chan_group(const char *call, int n, const int *world, kyi_chan_t **out)
{
    *out = NULL;
    struct kyi_chan *c = calloc(1, sizeof *c);
    if (c && !(c->mpi = calloc(1, sizeof *c->mpi))) {
        free(c);
        c = NULL;
    }
    if (!c) return kyi_fail(KY_ERR_NOMEM, call, "no memory for a channel");
    c->owned = 1;
    int every = n == kyi_rt.nranks; /* every rank in world order: the non-blocking way */
    for (int i = 0; world && every && i < n; i++) every = world[i] == i;
    if (!world || every) {
        /* every rank: a non-blocking duplicate, waited for while serving requests (no progress thread) */
        MPI_Request rq;
        if (MPI_Comm_idup(kyi_rt.world, &c->mpi->comm, &rq) != MPI_SUCCESS) {
            free(c->mpi), free(c);
            return kyi_fail(KY_ERR_MPI, call, "MPI_Comm_idup failed");
        }
        int st = kyi_wait_reqs(call, -1, 1, &rq);
        if (st) {
            free(c->mpi), free(c);
            return st;
        }
    } else {
        /* collective over the members only */
        MPI_Group all, sub;
        MPI_Comm_group(kyi_rt.world, &all);
        int bad = MPI_Group_incl(all, n, world, &sub) != MPI_SUCCESS;
        MPI_Group_free(&all);
        if (bad) {
            free(c->mpi), free(c);
            return kyi_fail(KY_ERR_MPI, call, "MPI_Group_incl of %d ranks failed", n);
        }
        bad = MPI_Comm_create_group(kyi_rt.world, sub, 0, &c->mpi->comm) != MPI_SUCCESS;
        MPI_Group_free(&sub);
        if (bad) {
            free(c->mpi), free(c);
            return kyi_fail(KY_ERR_MPI, call, "MPI_Comm_create_group of %d ranks failed", n);
        }
    }
    MPI_Comm_set_errhandler(c->mpi->comm, MPI_ERRORS_RETURN);
    *out = c;
    return KY_OK;
}

static void chan_free(kyi_chan_t *c)
{
    if (!c || !c->owned) return;
    MPI_Comm_free(&c->mpi->comm);
    free(c->mpi);
    free(c);
}

static int chan_irecv(const char *call, kyi_chan_t *c, int peer, int tag, void *buf, size_t cap,
                      kyi_chan_req_t *r)
{
    if (cap > INT32_MAX) return kyi_fail(KY_ERR_INTERNAL, call, "a %zu-byte message", cap);
    r->got = 0;
    if (MPI_Irecv(buf, (int)cap, MPI_BYTE, peer, tag, c->mpi->comm, mreq(r)) != MPI_SUCCESS)
        return kyi_fail(KY_ERR_MPI, call, "MPI_Irecv from rank %d failed", peer);
    return KY_OK;
}

static int chan_isend(const char *call, kyi_chan_t *c, int peer, int tag, const void *buf, size_t n,
                      kyi_chan_req_t *r)
{
    if (n > INT32_MAX) return kyi_fail(KY_ERR_INTERNAL, call, "a %zu-byte message", n);
    r->got = 0;
    if (MPI_Isend(buf, (int)n, MPI_BYTE, peer, tag, c->mpi->comm, mreq(r)) != MPI_SUCCESS)
        return kyi_fail(KY_ERR_MPI, call, "MPI_Isend to rank %d failed", peer);
    return KY_OK;
}

static void chan_req_init(kyi_chan_req_t *r)
{
    *mreq(r) = MPI_REQUEST_NULL;
}

static int chan_test(const char *call, kyi_chan_req_t *r, int *done)
{
    MPI_Status s;
    *done = 0;
    if (MPI_Test(mreq(r), done, &s) != MPI_SUCCESS) return kyi_fail(KY_ERR_MPI, call, "MPI_Test failed");
    if (*done) {
        int count = 0;
        MPI_Get_count(&s, MPI_BYTE, &count);
        r->got = count > 0 ? (size_t)count : 0;
        kyi_hb_acquire(KYI_HB_REPLY); /* what the handler did before answering precedes the return */
    }
    return KY_OK;
}

static void chan_cancel(kyi_chan_req_t *r)
{
    MPI_Cancel(mreq(r));
    MPI_Wait(mreq(r), MPI_STATUS_IGNORE);
}

static int chan_reply(int dest, int tag, const void *buf, size_t n, void (*release)(void *), void *ctx)
{
    if (!release) return kyi_send_deferred(buf, n, dest, tag, kyi_mpi.rep);
    return kyi_send_deferred_release(buf, n, dest, tag, kyi_mpi.rep, release, ctx);
}

int kyi_mpi_chan_flush(void)
{
    return kyi_progress_deferred();
}

const kyi_chan_ops_t kyi_chan_mpi_ops = {
    .group = chan_group,
    .free = chan_free,
    .irecv = chan_irecv,
    .isend = chan_isend,
    .req_init = chan_req_init,
    .test = chan_test,
    .cancel = chan_cancel,
    .reply = chan_reply,
    .flush = kyi_mpi_chan_flush,
};
