/* Internal, for the layers above comm: the channel, comm's small two-sided interface. With puts, gets and
 * active messages (kyoyu/comm.h) it is all that coll, dsm, array and later layers may use of comm: none of
 * them names an MPI communicator, reads kyi_comm or includes another comm header. The transport behind it
 * (today MPI, mpi/chan_mpi.c) can change without touching them.
 *
 * A request to another rank is an active message (ky_am_short/ky_am_medium to a handler the upper layer
 * registered with ky_am_register: the callback comm's progress engine runs at the target). What comes
 * back, or what travels beside a request, goes through a channel:
 *   - KYI_CHAN_REPLY: answers, target -> initiator. The initiator takes a tag (kyi_chan_tag), posts the
 *     receive into the final buffer (no copy on arrival: a DSM page lands in its slot), then sends the
 *     request naming the tag; the handler answers with kyi_chan_reply or, without a copy, with
 *     kyi_chan_reply_release. One message each way, as before the channel existed.
 *   - KYI_CHAN_DATA: bulk data initiator -> target beside a request (the handler receives it by tag).
 *   - groups: matched messages among a set of ranks (a team), each group its own matching space, for
 *     exchanges both sides know in advance (the halo exchange).
 * Tags of the two job-wide channels come from kyi_chan_tag only, so concurrent requests never match each
 * other's messages. */
#ifndef KYI_COMM_CHAN_H
#define KYI_COMM_CHAN_H

#include <stddef.h>
#include <stdint.h>

typedef struct kyi_chan kyi_chan_t;

/* A send or receive in flight. Plain storage the transport fills; complete it with kyi_chan_test,
 * kyi_chan_wait or kyi_chan_cancel before it goes out of scope. */
typedef struct {
    uint64_t impl[2]; /* the transport's request (an MPI request today) */
    size_t got;       /* bytes received, once a receive completed */
} kyi_chan_req_t;

typedef enum {
    KYI_CHAN_REPLY = 0, /* answers to requests, over every rank of the job (world ranks) */
    KYI_CHAN_DATA = 1   /* data sent beside a request, initiator -> target (world ranks) */
} kyi_chan_world_t;

/* The job-wide channels (valid between ky_init and ky_finalize). */
kyi_chan_t *kyi_chan_world(kyi_chan_world_t which);
/* A fresh tag for a request and its answer or data on the job-wide channels. */
int kyi_chan_tag(void);

/* The largest tag a group's messages may carry (tags of groups are the caller's to choose). */
int kyi_chan_tag_ub(void);

/* Collective over the n ranks world[0..n) (NULL: every rank, in order), called by exactly those: a
 * channel whose peers are numbered 0..n-1 as in world[]. */
int kyi_chan_group(const char *call, int n, const int *world, kyi_chan_t **out);
void kyi_chan_free(kyi_chan_t *c);

/* Post a receive of at most cap bytes from peer with tag into buf / a send of n bytes from buf (which
 * must stay unchanged until it completes). Errors are recorded under call. */
int kyi_chan_irecv(const char *call, kyi_chan_t *c, int peer, int tag, void *buf, size_t cap,
                   kyi_chan_req_t *r);
int kyi_chan_isend(const char *call, kyi_chan_t *c, int peer, int tag, const void *buf, size_t n,
                   kyi_chan_req_t *r);
/* An empty request, complete at once (a step that posts only one of its send and receive). */
void kyi_chan_req_init(kyi_chan_req_t *r);
/* *done = 1 once r completed (r->got then holds a receive's size). */
int kyi_chan_test(const char *call, kyi_chan_req_t *r, int *done);
/* Wait for r through the runtime's waiters (KY_TIMEOUT names call and peer); serves requests meanwhile
 * when there is no progress thread. */
int kyi_chan_wait(const char *call, int peer, kyi_chan_req_t *r);
/* Withdraw a receive whose request could not be sent. */
void kyi_chan_cancel(kyi_chan_req_t *r);

/* From a handler (never blocks the progress engine): answer on KYI_CHAN_REPLY. kyi_chan_reply copies buf
 * (statuses, a few words); kyi_chan_reply_release sends buf itself and calls release(ctx) once it is sent
 * (a page that must not change until then, a buffer from a pool). */
int kyi_chan_reply(int dest, int tag, const void *buf, size_t n);
int kyi_chan_reply_release(int dest, int tag, const void *buf, size_t n, void (*release)(void *), void *ctx);
/* Complete the answers in flight, releasing those sent; returns how many are pending. A handler that waits
 * for one of them must call it: the engine that would is busy running the handler. */
int kyi_chan_flush(void);

/* The progress engine, for waits in other layers: whether a thread serves requests (else a wait must
 * serve them itself, kyi_progress_poll, which returns how many it handled). */
int kyi_progress_threaded(void);
int kyi_progress_poll(void);
/* ThreadSanitizer builds only (nothing otherwise): order the caller after the engine's last pass, before it
 * relies on a receive MPI completed (runtime/hb.h). MPI may land a get's bytes on the engine's thread and
 * complete the request before that pass releases KYI_HB_REPLY; the waiter's MPI_Test can see it done in
 * between (rma.n2.split: a 64 MiB get reported as a race). Waiting for the engine's lock closes the gap. */
void kyi_progress_hb_sync(void);

#endif
