/* Internal: the UCX transport (this folder): one UCP context and worker per rank, an endpoint to every
 * rank, bootstrapped through the runtime's MPI (ucx_init.c); segments' host pieces allocated by UCX where
 * seg.c lets it, the others registered with ucp_mem_map (GPU ones where UCX has its CUDA transports), and
 * their rkeys exchanged at creation, put/get/strided/memset as one-sided RMA completed by an endpoint
 * flush (ucx_rma.c); active messages with ucp_am_send_nbx, queued by the receive callback and served by
 * the progress engine outside UCX (ucx_am.c). Every UCP call holds kyi_ucx.lock: the worker is
 * serialized, and the progress thread and the application's threads share it. */
#ifndef KYI_COMM_UCX_UCX_H
#define KYI_COMM_UCX_UCX_H

#include <pthread.h>
#include <ucp/api/ucp.h>

#include "comm/transport.h"

#define KYI_UCX_AM_ID 7 /* the one UCP active-message id Kyoyu registers */

/* Completion of RMA to one peer by endpoint flushes shared between operations (ucx_rma.c): the operations
 * issued (each handle keeps its number), those a completed flush covers, the in-flight flush and what it
 * covers, and the first failure of a flush (the endpoint is broken from then on). */
typedef struct {
    uint64_t issued, flushed, cover;
    void *req;
    ucs_status_t err;
} kyi_ucx_flush_t;

typedef struct {
    ucp_context_h ctx;
    ucp_worker_h worker;
    ucp_ep_h *ep; /* [nranks] */
    pthread_mutex_t lock;
    int cuda;            /* this UCX registers and moves CUDA memory (built with its CUDA transports) */
    kyi_ucx_flush_t *fl; /* [nranks] */
    /* this UCX has the xpmem memory domain: a peer of the same host maps memory UCX only registered as well,
     * so allocating segments buys nothing there (ucx_rma.c) */
    int xpmem;
} kyi_ucx_t;
extern kyi_ucx_t kyi_ucx;

/* A segment's registration: this rank's memory handle, every rank's piece address and rkey, and where UCX
 * maps a peer's piece into this process (ucp_rkey_ptr: UCX's shared memory), that mapping. */
typedef struct {
    ucp_mem_h memh; /* NULL when this rank's piece is empty */
    uint64_t *addr; /* [nranks] */
    ucp_rkey_h *rkey;
    void **ptr; /* [nranks] NULL: not mapped, reached by ucp_put_nbx / ucp_get_nbx */
} kyi_ucx_seg_t;

extern const kyi_transport_t kyi_tp_ucx;

/* ucp_worker_progress, stating for ThreadSanitizer (runtime/hb.h) what it may have done: served a peer's
 * put into this rank's memory (UCX emulates RMA over shared memory or TCP on this thread; the barrier's
 * token, as the MPI engine's serving) or landed a get's data (the reply token). Lock held. */
unsigned kyi_ucx_progress_worker(void);
/* A non-blocking call's result: KY_OK with *req the request to complete (NULL: done already), or an
 * error recorded under call naming the peer and UCX's reason. */
int kyi_ucx_req(const char *call, const char *what, int peer, ucs_status_ptr_t p, void **req);
/* Wait for a request (from kyi_ucx_req) with the runtime's waiter, progressing the worker. */
int kyi_ucx_wait(const char *call, int peer, void *req);
/* ucx_rma.c: the number of an RMA operation just issued to peer (its shared flush covers it). Lock held. */
uint64_t kyi_ucx_rma_issued(int peer);
/* ucx_rma.c: whether the operations to peer up to number seq have completed remotely (1), or not yet (0,
 * a flush covering them started or progressed), or failed (-1, *st UCX's reason). Lock held. */
int kyi_ucx_rma_done(int peer, uint64_t seq, ucs_status_t *st);
/* Wait with the runtime's waiter until the operations to peer up to number seq have completed remotely. */
int kyi_ucx_rma_wait(const char *call, int peer, uint64_t seq);

/* ucx_init.c: the table's background and fini */
void kyi_ucx_background(void);
void kyi_ucx_fini(void);

/* ucx_am.c */
int kyi_ucx_am_send(const char *call, int rank, kyi_hdr_t *h, const void *payload, int pdev,
                    struct kyi_seg *s, int reply);
int kyi_ucx_am_open(void);
int kyi_ucx_am_progress(void);
void kyi_ucx_am_close(void);

/* chan_ucx.c: the channel's answers from handlers. Lock held: those UCX has sent leave the list and come
 * back (*left: those still in flight); kyi_ucx_chan_done frees or releases them, outside the lock. */
struct kyi_ucx_answer *kyi_ucx_chan_reap(int *left);
void kyi_ucx_chan_done(struct kyi_ucx_answer *done);

/* ucx_rma.c */
int kyi_ucx_seg_alloc(struct kyi_seg *s);
void kyi_ucx_seg_free(struct kyi_seg *s);
int kyi_ucx_seg_attach(struct kyi_seg *s);
void kyi_ucx_seg_detach(struct kyi_seg *s);
int kyi_ucx_test(kyi_handle_t *h, int *done);

#endif
