/* Active messages over UCX: one ucp_am_send_nbx per message, the Kyoyu header as UCP's header and the
 * payload as its data, sent eagerly (so the receive callback always has the bytes). The callback runs
 * inside ucp_worker_progress with the lock held, so it only queues a copy; the progress engine serves the
 * queue outside UCX (kyi_ucx_am_progress), where handlers may send, reply and wait. A long payload larger
 * than KY_EAGER_SIZE from outside a handler is put into the target's segment first and only the header
 * follows, once the put is complete at the target. */
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
    size_t n;
    char data[];
} arrived_t;

/* Arrivals in order (under kyi_ucx.lock). */
static arrived_t *q_head, **q_tail = &q_head;

static ucs_status_t on_am(void *arg, const void *header, size_t hlen, void *data, size_t len,
                          const ucp_am_recv_param_t *param)
{
    (void)arg;
    if (hlen != sizeof(wire_t) || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        KYI_WARN(KYI_SUB_COMM, "rank %d: dropping a UCX active message of %zu header bytes%s", kyi_rt.rank,
                 hlen, (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ? " sent by rendezvous" : "");
        return UCS_OK;
    }
    arrived_t *a = malloc(sizeof *a + (len ? len : 1));
    if (!a) kyi_fatal("rank %d: no memory for a %zu-byte active message", kyi_rt.rank, len);
    memcpy(&a->w, header, sizeof a->w);
    a->n = len;
    if (len) memcpy(a->data, data, len);
    a->next = NULL;
    *q_tail = a;
    q_tail = &a->next;
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

void kyi_ucx_am_close(void)
{
    while (q_head) {
        arrived_t *a = q_head;
        q_head = a->next;
        free(a);
    }
    q_tail = &q_head;
}

/* Returns the messages served plus the worker's own events (a peer's flush, wire-up): the progress thread
 * backs off only while nothing at all happens, since a peer's flush may be waiting on this worker. */
int kyi_ucx_am_progress(void)
{
    int n = 0;
    pthread_mutex_lock(&kyi_ucx.lock);
    while (ucp_worker_progress(kyi_ucx.worker)) n++;
    arrived_t *a = q_head;
    q_head = NULL;
    q_tail = &q_head;
    pthread_mutex_unlock(&kyi_ucx.lock);
    while (a) {
        arrived_t *next = a->next;
        kyi_hb_acquire(KYI_HB_BARRIER);
        kyi_am_deliver(&a->w.h, a->data, a->w.src);
        kyi_hb_release(KYI_HB_BARRIER);
        free(a);
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

/* Send header + np payload bytes; the copy is freed once UCX is done with it, so nothing waits. */
static int send_msg(const char *call, int rank, const kyi_hdr_t *h, const void *payload, int pdev, size_t np)
{
    wire_t *buf = malloc(sizeof *buf + (np ? np : 1));
    if (!buf)
        return kyi_fail(KY_ERR_NOMEM, call, "rank %d: no memory for a %zu-byte message", kyi_rt.rank, np);
    buf->src = kyi_rt.rank;
    buf->pad = 0;
    buf->h = *h;
    int st = np ? kyi_local_copy(call, buf + 1, -1, payload, pdev, np) : KY_OK;
    if (st) {
        free(buf);
        return st;
    }
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
        .flags = UCP_AM_SEND_FLAG_EAGER,
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

/* A large long payload: put it into the segment, flush, then send the header marked placed. */
static int send_placed(const char *call, int rank, kyi_hdr_t *h, const void *payload, struct kyi_seg *s)
{
    kyi_ucx_seg_t *x = s->xseg;
    ucp_request_param_t prm = {.op_attr_mask = 0};
    void *req = NULL;
    pthread_mutex_lock(&kyi_ucx.lock);
    ucs_status_ptr_t p =
        ucp_put_nbx(kyi_ucx.ep[rank], payload, h->n, x->addr[rank] + h->off, x->rkey[rank], &prm);
    int st = kyi_ucx_req(call, "ucp_put_nbx", rank, p, &req);
    if (req) ucp_request_free(req);
    if (!st) st = kyi_ucx_flush(call, rank, &req);
    pthread_mutex_unlock(&kyi_ucx.lock);
    if (!st) st = kyi_ucx_wait(call, rank, req);
    if (st) return st;
    h->flags |= KYI_F_PLACED;
    return send_msg(call, rank, h, NULL, -1, 0);
}

int kyi_ucx_am_send(const char *call, int rank, kyi_hdr_t *h, const void *payload, int pdev,
                    struct kyi_seg *s, int reply)
{
    if (!(h->flags & KYI_F_LONG) || (h->flags & KYI_F_PLACED))
        return send_msg(call, rank, h, payload, pdev, (h->flags & KYI_F_MEDIUM) ? h->n : 0);
    kyi_count(KY_PATH_UCX, h->n);
    if (!reply && pdev < 0 && s->xseg && h->n > kyi_comm.eager) return send_placed(call, rank, h, payload, s);
    h->flags |= KYI_F_EAGER;
    return send_msg(call, rank, h, payload, pdev, h->n);
}
