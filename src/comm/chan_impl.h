/* Internal to comm's channel (chan.c, which picks the transport, and its implementations mpi/chan_mpi.c,
 * ucx/chan_ucx.c): what a channel is, and what each implementation offers chan.c. The channel runs on one
 * transport for the whole job: MPI, or UCX's tag matching when the job's transport is UCX (kyi_chan_on_ucx,
 * set at start-up before any channel exists). */
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

extern int kyi_chan_on_ucx;

/* chan.c: the job-wide channels, once the MPI transport's communicators exist (kyi_comm_init). */
void kyi_chan_init(void);

/* mpi/chan_mpi.c */
/* The MPI part of a job-wide channel: its communicator. */
struct kyi_chan_mpi *kyi_mpi_chan_world(kyi_chan_world_t which);
int kyi_mpi_chan_tag(void);
int kyi_mpi_chan_tag_ub(void);
int kyi_mpi_chan_group(const char *call, int n, const int *world, kyi_chan_t **out);
void kyi_mpi_chan_free(kyi_chan_t *c);
int kyi_mpi_chan_irecv(const char *call, kyi_chan_t *c, int peer, int tag, void *buf, size_t cap,
                       kyi_chan_req_t *r);
int kyi_mpi_chan_isend(const char *call, kyi_chan_t *c, int peer, int tag, const void *buf, size_t n,
                       kyi_chan_req_t *r);
/* Called after chan.c zeroed r. */
void kyi_mpi_chan_req_init(kyi_chan_req_t *r);
int kyi_mpi_chan_test(const char *call, kyi_chan_req_t *r, int *done);
void kyi_mpi_chan_cancel(kyi_chan_req_t *r);
int kyi_mpi_chan_reply(int dest, int tag, const void *buf, size_t n);
int kyi_mpi_chan_reply_release(int dest, int tag, const void *buf, size_t n, void (*release)(void *),
                               void *ctx);
/* The MPI transport's deferred sends (answers among them): how many are pending. */
int kyi_mpi_chan_flush(void);

/* ucx/chan_ucx.c (stubs in ucx/ucx_none.c) */
int kyi_ucx_chan_group(const char *call, int n, const int *world, kyi_chan_t **out);
void kyi_ucx_chan_free(kyi_chan_t *c);
int kyi_ucx_chan_irecv(const char *call, kyi_chan_t *c, int peer, int tag, void *buf, size_t cap,
                       kyi_chan_req_t *r);
int kyi_ucx_chan_isend(const char *call, kyi_chan_t *c, int peer, int tag, const void *buf, size_t n,
                       kyi_chan_req_t *r);
int kyi_ucx_chan_test(const char *call, kyi_chan_req_t *r, int *done);
void kyi_ucx_chan_cancel(kyi_chan_req_t *r);
int kyi_ucx_chan_reply(int dest, int tag, const void *buf, size_t n, void (*release)(void *), void *ctx);
int kyi_ucx_chan_flush(void);

#endif
