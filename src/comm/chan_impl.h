/* Internal to comm's channel (chan.c, which picks the transport, and its implementations mpi/chan_mpi.c,
 * ucx/chan_ucx.c): what a channel is, and the table of operations each implementation offers chan.c. The
 * channel runs on one transport for the whole job: MPI, or UCX's tag matching when the job's transport is
 * UCX (kyi_chan_impl, set at start-up before any channel exists). */
#ifndef KYI_COMM_CHAN_IMPL_H
#define KYI_COMM_CHAN_IMPL_H

#include <stdint.h>

#include "comm/chan.h"

struct kyi_chan_mpi; /* the MPI path's part: its communicator (mpi/chan_mpi.c) */

struct kyi_chan {
    struct kyi_chan_mpi *mpi;
    int owned; /* a group's own, freed with it */
    /* the UCX path: the channel's number in every tag, and its peers' world ranks */
    uint32_t ucx_id;
    int n;
    int *world; /* [n], NULL: peer i is world rank i */
};

/* What an implementation of the channel offers chan.c (chan.h describes each call). */
typedef struct kyi_chan_ops {
    int (*group)(const char *call, int n, const int *world, kyi_chan_t **out);
    void (*free)(kyi_chan_t *c);
    int (*irecv)(const char *call, kyi_chan_t *c, int peer, int tag, void *buf, size_t cap,
                 kyi_chan_req_t *r);
    int (*isend)(const char *call, kyi_chan_t *c, int peer, int tag, const void *buf, size_t n,
                 kyi_chan_req_t *r);
    /* after chan.c zeroed r (NULL: nothing more) */
    void (*req_init)(kyi_chan_req_t *r);
    int (*test)(const char *call, kyi_chan_req_t *r, int *done);
    void (*cancel)(kyi_chan_req_t *r);
    /* release (may be NULL) runs once buf may be reused */
    int (*reply)(int dest, int tag, const void *buf, size_t n, void (*release)(void *), void *ctx);
    /* sends still deferred: how many are pending */
    int (*flush)(void);
} kyi_chan_ops_t;

/* The job's channel implementation: the MPI one unless the UCX transport chose its own at start-up, before
 * any channel exists. */
extern const kyi_chan_ops_t *kyi_chan_impl;
extern const kyi_chan_ops_t kyi_chan_mpi_ops; /* mpi/chan_mpi.c */
extern const kyi_chan_ops_t kyi_chan_ucx_ops; /* ucx/chan_ucx.c (UCX builds only) */

/* chan.c: the job-wide channels, once the MPI transport's communicators exist (kyi_comm_init). */
void kyi_chan_init(void);

/* mpi/chan_mpi.c, beside its table: what chan.c takes from MPI whichever implementation carries the channel
 * (the job-wide channels' communicators, the tags, the MPI transport's own deferred sends). */
struct kyi_chan_mpi *kyi_mpi_chan_world(kyi_chan_world_t which);
int kyi_mpi_chan_tag(void);
int kyi_mpi_chan_tag_ub(void);
int kyi_mpi_chan_flush(void);

#endif
