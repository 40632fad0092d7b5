/* Active messages over UCX: one ucp_am_send_nbx per message, the Kyoyu header as UCP's header and the
 * payload as its data. UCX sends small payloads eagerly and large ones by rendezvous. The receive callback
 * runs inside ucp_worker_progress with the lock held, so it only queues: an eager payload is copied, a
 * rendezvous one is received straight into its place (a long message's segment piece when it is host
 * memory, or GPU memory where this UCX moves CUDA memory, else a buffer) and its entry waits until the data
 * is in. A GPU payload goes to UCX as it is where UCX moves CUDA memory (no host copy on either side: a
 * 256 MiB long message to a GPU segment ran at 0.9 GB/s through two pageable copies on 2026-11-27). The
 * progress engine serves the queue in order outside UCX (kyi_ucx_am_progress), where handlers may send, reply
 * and wait. */
#include <stdlib.h>
#include <string.h>

#include "comm/ucx/ucx.h"

typedef struct {
    int32_t src, pad;
    kyi_hdr_t h;
} wire_t;

typedef struct arrived {
    struct arrived *next;
    wire_t w;
    int ready;  /* the payload is in (a rendezvous receive completes later) */
    char *heap; /* a rendezvous payload's buffer (NULL: in data[] or placed in its segment) */
    char data[];
} arrived_t;

/* Arrivals in order (under kyi_ucx.lock). */
static arrived_t *q_head, **q_tail = &q_head;

static void enqueue(arrived_t *a)
{
    a->next = NULL;
    *q_tail = a;
    q_tail = &a->next;
}

static void received(void *req, ucs_status_t st, size_t length, void *user)
{
    (void)length;
    arrived_t *a = user;
    if (st != UCS_OK) {
        KYI_WARN(KYI_SUB_COMM, "rank %d: the payload of an active message from rank %d was lost: %s",
                 kyi_rt.rank, a->w.src, ucs_status_string(st));
        a->w.h.flags &= (uint8_t) ~(KYI_F_PLACED | KYI_F_EAGER); /* am.c drops a long one without its data */
    }
    a->ready = 1;
    if (req) ucp_request_free(req);
}

/* Where a rendezvous payload goes: a long message's piece when it fits there and UCX can write it (host
 * memory, or GPU memory where UCX moves CUDA memory: *gpu set), marked placed; else a buffer the entry owns.
 */
static void *rndv_dest(arrived_t *a, size_t len, int *gpu)
{
    const kyi_hdr_t *h = &a->w.h;
    struct kyi_seg *s = (h->flags & KYI_F_LONG) ? kyi_seg_lookup(h->seg) : NULL;
    *gpu = 0;
    int reachable = s && (s->memkind == KY_MEM_HOST || (s->memkind == KY_MEM_GPU && kyi_ucx.cuda));
    if (reachable && h->off <= s->bytes && len <= s->bytes - h->off && len == h->n) {
        a->w.h.flags |= KYI_F_PLACED;
        *gpu = s->memkind == KY_MEM_GPU;
        return (char *)s->base + h->off;
    }
    a->heap = malloc(len ? len : 1);
    if (!a->heap) kyi_fatal("rank %d: no memory for a %zu-byte active message", kyi_rt.rank, len);
    return a->heap;
}

static ucs_status_t on_am(void *arg, const void *header, size_t hlen, void *data, size_t len,
                          const ucp_am_recv_param_t *param)
{
    (void)arg;
    if (hlen != sizeof(wire_t)) {
        KYI_WARN(KYI_SUB_COMM, "rank %d: dropping a UCX active message with a %zu-byte header", kyi_rt.rank,
                 hlen);
        return UCS_OK;
    }
    int rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    arrived_t *a = malloc(sizeof *a + (rndv || !len ? 1 : len));
    if (!a) kyi_fatal("rank %d: no memory for a %zu-byte active message", kyi_rt.rank, len);
    memcpy(&a->w, header, sizeof a->w);
    a->heap = NULL;
    a->ready = !rndv;
    enqueue(a);
    if (!rndv) {
        if (len) memcpy(a->data, data, len);
        return UCS_OK;
    }
    int gpu = 0;
    void *dest = rndv_dest(a, len, &gpu);
    /* the memory type said, not detected: this may run on the progress thread */
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                                               UCP_OP_ATTR_FIELD_MEMORY_TYPE,
                               .cb.recv_am = received,
                               .user_data = a,
                               .memory_type = gpu ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST};
    ucs_status_ptr_t p = ucp_am_recv_data_nbx(kyi_ucx.worker, data, dest, len, &prm);
    if (UCS_PTR_IS_ERR(p)) {
        received(NULL, UCS_PTR_STATUS(p), 0, a);
    } else if (!p) {
        a->ready = 1; /* done in place: no callback */
    }
    return UCS_OK;
}

int kyi_ucx_am_open(void)
{
    ucp_am_handler_param_t p = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                                              UCP_AM_HANDLER_PARAM_FIELD_ARG,
                                .id = KYI_UCX_AM_ID,
                                .cb = on_am,
                                .arg = NULL};
    ucs_status_t us = ucp_worker_set_am_recv_handler(kyi_ucx.worker, &p);
    if (us != UCS_OK)
        return kyi_fail(KY_ERR_SYSTEM, "ky_init", "rank %d: ucp_worker_set_am_recv_handler failed: %s",
                        kyi_rt.rank, ucs_status_string(us));
    return KY_OK;
}

static void drop(arrived_t *a)
{
    free(a->heap);
    free(a);
}

void kyi_ucx_am_close(void)
{
    while (q_head) {
        arrived_t *a = q_head;
        q_head = a->next;
        drop(a);
    }
    q_tail = &q_head;
}

/* Returns the messages served plus the worker's own events (a peer's flush, wire-up): the progress thread
 * backs off only while nothing at all happens, since a peer's flush may be waiting on this worker. */
int kyi_ucx_am_progress(void)
{
    int n = 0;
    pthread_mutex_lock(&kyi_ucx.lock);
    while (kyi_ucx_progress_worker()) n++;
    int answers; /* answers in flight keep the engine polling until UCX has sent them */
    struct kyi_ucx_answer *sent = kyi_ucx_chan_reap(&answers);
    n += answers;
    /* the ready entries at the head, in order; one still receiving holds back those behind it */
    arrived_t *a = NULL, **last = &a;
    while (q_head && q_head->ready) {
        *last = q_head;
        last = &q_head->next;
        q_head = q_head->next;
    }
    *last = NULL;
    if (!q_head) q_tail = &q_head;
    pthread_mutex_unlock(&kyi_ucx.lock);
    kyi_ucx_chan_done(sent);
    while (a) {
        arrived_t *next = a->next;
        kyi_hb_acquire(KYI_HB_BARRIER);
        kyi_am_deliver(&a->w.h, a->heap ? a->heap : a->data, a->w.src);
        kyi_hb_release(KYI_HB_BARRIER);
        drop(a);
        a = next;
        n++;
    }
    return n;
}

static void sent(void *req, ucs_status_t st, void *user)
{
    if (st != UCS_OK)
        KYI_WARN(KYI_SUB_COMM, "rank %d: a UCX active message was not sent: %s", kyi_rt.rank,
                 ucs_status_string(st));
    free(user);
    ucp_request_free(req);
}

/* From a handler: one copy of header and payload that UCX frees when done, so nothing waits. */
static int send_copy(const char *call, int rank, const wire_t *w, const void *payload, int pdev, size_t np)
{
    wire_t *buf = malloc(sizeof *buf + (np ? np : 1));
    if (!buf)
        return kyi_fail(KY_ERR_NOMEM, call, "rank %d: no memory for a %zu-byte message", kyi_rt.rank, np);
    *buf = *w;
    int st = np ? kyi_local_copy(call, buf + 1, -1, payload, pdev, np) : KY_OK;
    if (st) {
        free(buf);
        return st;
    }
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                               .cb.send = sent,
                               .user_data = buf};
    pthread_mutex_lock(&kyi_ucx.lock);
    ucs_status_ptr_t p =
        ucp_am_send_nbx(kyi_ucx.ep[rank], KYI_UCX_AM_ID, buf, sizeof *buf, buf + 1, np, &prm);
    pthread_mutex_unlock(&kyi_ucx.lock);
    if (UCS_PTR_IS_ERR(p)) {
        free(buf);
        return kyi_fail(KY_ERR_SYSTEM, call, "rank %d: ucp_am_send_nbx to rank %d failed: %s", kyi_rt.rank,
                        rank, ucs_status_string(UCS_PTR_STATUS(p)));
    }
    if (!p) free(buf); /* done already: no callback */
    return KY_OK;
}

/* Outside a handler: sent from the caller's buffer (GPU memory too, where UCX moves it: pdev >= 0), waited
 * for (the payload may be reused when the call returns, as on the MPI path). */
static int send_wait(const char *call, int rank, const wire_t *w, const void *payload, int pdev, size_t np)
{
    ucp_request_param_t prm = {.op_attr_mask = np ? UCP_OP_ATTR_FIELD_MEMORY_TYPE : 0,
                               .memory_type = pdev >= 0 ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST};
    void *req = NULL;
    pthread_mutex_lock(&kyi_ucx.lock);
    ucs_status_ptr_t p = ucp_am_send_nbx(kyi_ucx.ep[rank], KYI_UCX_AM_ID, w, sizeof *w, payload, np, &prm);
    pthread_mutex_unlock(&kyi_ucx.lock);
    KYI_CHECK(kyi_ucx_req(call, "ucp_am_send_nbx", rank, p, &req));
    return kyi_ucx_wait(call, rank, req);
}

/* A long message's payload from at least this size goes ahead as a put into the target's piece (the RMA
 * path, which UCX runs on cuda_ipc / GPUDirect / cma), then the header alone: UCX's active-message
 * rendezvous staged GPU payloads through host fragments (2 GB/s at 64 MiB on two H200s, put: 345 GB/s,
 * 2026-11-27) and fell to 2 GB/s on host payloads past 32 MiB. */
#define PUT_AHEAD_MIN (64 * 1024)

/* Put the payload into rank's piece of s at h->off and wait until it is there: a number in the RMA's shared
 * endpoint flushes (ucx_rma.c), like any put's. */
static int put_ahead(const char *call, int rank, kyi_hdr_t *h, const void *payload, int pdev,
                     struct kyi_seg *s)
{
    kyi_ucx_seg_t *x = s->xseg;
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE,
                               .memory_type = pdev >= 0 ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST};
    void *req = NULL;
    uint64_t seq = 0;
    pthread_mutex_lock(&kyi_ucx.lock);
    ucs_status_ptr_t p =
        ucp_put_nbx(kyi_ucx.ep[rank], payload, h->n, x->addr[rank] + h->off, x->rkey[rank], &prm);
    int st = kyi_ucx_req(call, "ucp_put_nbx", rank, p, &req);
    if (req) ucp_request_free(req); /* the flush completes it */
    if (!st) seq = kyi_ucx_rma_issued(rank);
    pthread_mutex_unlock(&kyi_ucx.lock);
    KYI_CHECK(st);
    return kyi_ucx_rma_wait(call, rank, seq);
}

int kyi_ucx_am_send(const char *call, int rank, kyi_hdr_t *h, const void *payload, int pdev,
                    struct kyi_seg *s, int reply)
{
    size_t np = 0;
    /* outside a handler (a handler must not wait), to a piece UCX registered, from memory UCX moves */
    int ahead = !reply && (h->flags & KYI_F_LONG) && !(h->flags & KYI_F_PLACED) && h->n >= PUT_AHEAD_MIN &&
                s && s->xseg && ((kyi_ucx_seg_t *)s->xseg)->rkey[rank] && (pdev < 0 || kyi_ucx.cuda);
    if (ahead) {
        KYI_CHECK(put_ahead(call, rank, h, payload, pdev, s));
        kyi_count(KY_PATH_UCX, h->n);
        h->flags |= KYI_F_PLACED;
    }
    if ((h->flags & KYI_F_MEDIUM) || ((h->flags & KYI_F_LONG) && !(h->flags & KYI_F_PLACED))) np = h->n;
    if ((h->flags & KYI_F_LONG) && !(h->flags & KYI_F_PLACED)) {
        kyi_count(KY_PATH_UCX, h->n);
        h->flags |= KYI_F_EAGER; /* the payload travels with the message */
    }
    wire_t w = {.src = kyi_rt.rank, .pad = 0, .h = *h};
    if (!reply && (pdev < 0 || kyi_ucx.cuda)) return send_wait(call, rank, &w, payload, pdev, np);
    return send_copy(call, rank, &w, payload, pdev, np);
}
