/* Internal: the MPI transport (this folder). Its communicators in init_mpi.c, initiator side in mpi_ops.c
 * and am_mpi.c, target side in serve.c, bulk data in bulk.c, the engine's MPI loop, deferred sends and
 * waits in progress_mpi.c, the barrier in barrier_mpi.c, the channel in chan_mpi.c. Only files of this
 * folder and progress.c (which stops the MPI loop and drains deferred sends) include it; comm's handles
 * keep this transport's requests in opaque slots (kyi_mpi_hreqs). */
#ifndef KYI_COMM_MPI_MPI_H
#define KYI_COMM_MPI_MPI_H

#include <mpi.h>
#include <stddef.h>

#include "comm/comm.h"
#include "comm/proto.h"

/* The transport's communicators (duplicates of the job's, init_mpi.c) and its tags. */
typedef struct {
    MPI_Comm req;  /* requests and active messages, served by the target's progress engine */
    MPI_Comm rep;  /* replies and bulk data, target -> initiator, tag per operation */
    MPI_Comm data; /* bulk data initiator -> target, tag per operation */
    MPI_Comm bar;  /* split-phase barrier */
    int tag_ub;
    atomic_uint tag_next;
} kyi_mpi_t;
extern kyi_mpi_t kyi_mpi;

_Static_assert(sizeof(MPI_Request) <= sizeof(uint64_t), "an MPI_Request does not fit a handle's slot");
/* A handle's MPI requests: its inline slots, or the array mpi_ops.c allocated for many chunks. */
static inline MPI_Request *kyi_mpi_hreqs(kyi_handle_t *h)
{
    return h->req ? (MPI_Request *)h->req : (MPI_Request *)(void *)h->req_inline;
}

/* A request to rank's progress engine: MPI_Isend of n bytes on kyi_mpi.req, then rank's doorbell (bell.c),
 * which wakes its engine if it sleeps long. Every message on kyi_mpi.req goes through here, or rings after
 * its send (a handler's deferred active message, the engine's STOP). This rank's own engine is rung too: it
 * moves the reply's bytes (a large get's rendezvous) while the program computes, as it did before it slept
 * long. Returns MPI's code. */
static inline int kyi_req_isend(const void *buf, int n, int rank, MPI_Request *r)
{
    /* what this thread did before the request precedes its serving (the engine acquires the token before
     * it serves): a long active message to this rank itself places its payload with a store before the
     * header goes, and MPI's ordering is invisible to ThreadSanitizer (comm.h) */
    kyi_hb_release(KYI_HB_BARRIER);
    int rc = MPI_Isend(buf, n, MPI_BYTE, rank, 0, kyi_mpi.req, r);
    if (rc == MPI_SUCCESS) {
        kyi_bell_ring(rank);
        if (rank != kyi_rt.rank) kyi_bell_ring(kyi_rt.rank);
    }
    return rc;
}

/* progress_mpi.c */
/* Requests that arrived on kyi_mpi.req, each served: how many, or -1 when a STOP arrived. */
int kyi_mpi_poll(void);
/* Ask this rank's progress thread to leave (it reads a STOP). */
void kyi_mpi_stop_thread(void);
/* Free the loop's receive buffer (after the engine stopped). */
void kyi_mpi_poll_free(void);
/* Wait for MPI requests with backoff and timeout; serves requests meanwhile when there is no progress
 * thread. */
int kyi_wait_reqs(const char *call, int peer, int n, MPI_Request *reqs);
int kyi_test_reqs(int n, MPI_Request *reqs, int *done);
/* Send from a handler context without blocking the progress engine (buffer is copied and owned). */
int kyi_send_deferred(const void *buf, size_t n, int dest, int tag, MPI_Comm comm);
/* The same for a malloc'ed buffer the engine takes over and frees (no copy). */
int kyi_send_deferred_owned(void *buf, size_t n, int dest, int tag, MPI_Comm comm);
/* Test the deferred sends, releasing those done; returns how many are pending. Callable from any thread
 * (a handler waiting for one of them must call it: the engine is busy running the handler). */
int kyi_progress_deferred(void);
/* Send buf (not copied) from a handler; once sent the engine calls release(ctx) (buffer pools, memory that
 * must not change while it is read). */
int kyi_send_deferred_release(const void *buf, size_t n, int dest, int tag, MPI_Comm comm,
                              void (*release)(void *), void *ctx);
unsigned kyi_new_tag(void);

/* chan_mpi.c: the job-wide channels' communicators, once they exist. */
void kyi_mpi_chan_init(void);

/* serve.c: handle one request from `src`; payload/np is what followed the header in its message. */
void kyi_serve(const kyi_hdr_t *h, void *payload, size_t np, int src);

#endif
