/* Active messages over UCX: one ucp_am_send_nbx per message, the Kyoyu header as UCP's header and the
 * payload as its data. UCX sends small payloads eagerly and large ones by rendezvous. The receive callback
 * runs inside ucp_worker_progress with the lock held, so it only queues: an eager payload is copied, a
 * rendezvous one is received straight into its place (a long message's segment piece when it is host
 * memory, else a buffer) and its entry waits until the data is in. The progress engine serves the queue in
 * order outside UCX (kyi_ucx_am_progress), where handlers may send, reply and wait. */
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

/* Where a rendezvous payload goes: a long message's host piece when it fits there (marked placed), else a
 * buffer the entry owns. */
static void *rndv_dest(arrived_t *a, size_t len)
{
    const kyi_hdr_t *h = &a->w.h;
    struct kyi_seg *s = (h->flags & KYI_F_LONG) ? kyi_seg_lookup(h->seg) : NULL;
    if (s && s->memkind == KY_MEM_HOST && h->off <= s->bytes && len <= s->bytes - h->off && len == h->n) {
        a->w.h.flags |= KYI_F_PLACED;
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
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                               .cb.recv_am = received,
                               .user_data = a};
    ucs_status_ptr_t p = ucp_am_recv_data_nbx(kyi_ucx.worker, data, rndv_dest(a, len), len, &prm);
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

/* Outside a handler, host payload: sent from the caller's buffer, waited for (the payload may be reused
 * when the call returns, as on the MPI path). */
static int send_wait(const char *call, int rank, const wire_t *w, const void *payload, size_t np)
{
    ucp_request_param_t prm = {.op_attr_mask = 0};
    void *req = NULL;
    pthread_mutex_lock(&kyi_ucx.lock);
    ucs_status_ptr_t p = ucp_am_send_nbx(kyi_ucx.ep[rank], KYI_UCX_AM_ID, w, sizeof *w, payload, np, &prm);
    pthread_mutex_unlock(&kyi_ucx.lock);
    KYI_CHECK(kyi_ucx_req(call, "ucp_am_send_nbx", rank, p, &req));
    return kyi_ucx_wait(call, rank, req);
}

int kyi_ucx_am_send(const char *call, int rank, kyi_hdr_t *h, const void *payload, int pdev,
                    struct kyi_seg *s, int reply)
{
    (void)s;
    size_t np = 0;
    if ((h->flags & KYI_F_MEDIUM) || ((h->flags & KYI_F_LONG) && !(h->flags & KYI_F_PLACED))) np = h->n;
    if ((h->flags & KYI_F_LONG) && !(h->flags & KYI_F_PLACED)) {
        kyi_count(KY_PATH_UCX, h->n);
        h->flags |= KYI_F_EAGER; /* the payload travels with the message */
    }
    wire_t w = {.src = kyi_rt.rank, .pad = 0, .h = *h};
    if (!reply && pdev < 0) return send_wait(call, rank, &w, payload, np);
    return send_copy(call, rank, &w, payload, pdev, np);
}
