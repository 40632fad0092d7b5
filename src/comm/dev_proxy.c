/* The device API's host proxy (NVSHMEM's design, on comm's calls): kernels reach peers they cannot address
 * (other nodes, KY_NODE_SPLIT=rank) by queueing requests on a ring in pinned host memory mapped into their
 * GPU (include/kyoyu/device.cuh: ticket, fields, fence, seq). One thread per segment serves the ring in
 * ticket order through ky_put / ky_get on the same GPU segment (comm stages GPU memory on the MPI path),
 * then publishes done = ticket + 1, which the kernels poll. A signal goes after its data as an active
 * message that the target serves with an 8-byte atomic on its GPU (kyi_gpu_atomic_u64), so it stays atomic
 * against same-node peers' GPU atomics on the same word; its reply is the proxy's cue to complete the
 * request. Proxied requests therefore need the kernels on a stream that does not block comm's copy streams
 * (a cudaStreamNonBlocking stream, not the legacy default stream): see docs/shmem.md. */
#include <stdlib.h>
#include <string.h>

#include "comm/dev_proxy.h"
#include "runtime/config.h"

/* Active-message indices of comm's device proxy (200..255 belong to Kyoyu's own layers; dsm uses
 * 200..207, shmem 240..241). */
enum { KYI_AM_DEV_SIGNAL = 248, KYI_AM_DEV_SIGNAL_ACK = 249 };

/* Host-side control words, at the start of the mapped block; the slots follow at offset 64. */
typedef struct {
    volatile unsigned long long done;
    volatile int status;
} ring_ctl_t;

typedef struct kyi_dev_ring {
    struct kyi_seg *seg;
    int dev;
    unsigned long long *head; /* GPU memory */
    void *host;               /* ring_ctl_t, then cap slots */
    ring_ctl_t *ctl;
    ky_dev_req_t *req;
    unsigned long long cap, timeout_ns;
    pthread_t thr;
    atomic_int stop;
    atomic_int acked; /* signal replies received for the request being served */
    atomic_int ack_status;
} ring_t;

_Static_assert(sizeof(ky_dev_req_t) == 64, "a request is one 64-byte slot, as device.cuh says");

static pthread_mutex_t rings_lock = PTHREAD_MUTEX_INITIALIZER;
static ring_t *rings[KYI_MAX_SEGS];

/* ---- signals: the target's side and the reply ---------------------------------------------------- */

/* args: segment, offset, value, add, the initiator's ring. */
static void on_signal(ky_am_token_t tok, void *payload, size_t n, const uint64_t *a, int nargs)
{
    (void)payload;
    (void)n;
    int st = KY_OK;
    struct kyi_seg *s = nargs == 5 ? kyi_seg_lookup((uint32_t)a[0]) : NULL;
    if (!s || s->memkind != KY_MEM_GPU)
        st = kyi_fail(KY_ERR_ARG, "ky_dev_put_signal", "no GPU segment %u at rank %d", (unsigned)a[0],
                      kyi_rt.rank);
    else if ((a[1] & 7) || a[1] > s->bytes || s->bytes - a[1] < 8)
        st = kyi_fail(KY_ERR_RANGE, "ky_dev_put_signal", "signal offset %llu outside rank %d's %zu bytes",
                      (unsigned long long)a[1], kyi_rt.rank, s->bytes);
    else
        st = kyi_gpu_atomic_u64(s->device, (char *)s->base + a[1], a[2], (int)a[3]);
    uint64_t r[2] = {a[4], (uint64_t)(int64_t)st};
    ky_am_reply_short(tok, KYI_AM_DEV_SIGNAL_ACK, r, 2);
}

static void on_signal_ack(ky_am_token_t tok, void *payload, size_t n, const uint64_t *a, int nargs)
{
    (void)tok;
    (void)payload;
    (void)n;
    (void)nargs;
    ring_t *q = (ring_t *)(uintptr_t)a[0];
    int st = (int)(int64_t)a[1];
    if (st) atomic_store(&q->ack_status, st);
    atomic_store(&q->acked, 1);
}

int kyi_dev_proxy_register(void)
{
    KYI_CHECK(ky_am_register(KYI_AM_DEV_SIGNAL, on_signal));
    return ky_am_register(KYI_AM_DEV_SIGNAL_ACK, on_signal_ack);
}

/* ---- serving a request ---------------------------------------------------------------------------- */

static int deliver_signal(ring_t *q, const ky_dev_req_t *r)
{
    static const char *call = "ky_dev_put_signal";
    atomic_store(&q->acked, 0);
    atomic_store(&q->ack_status, KY_OK);
    uint64_t a[5] = {q->seg->id, r->sig_off, r->value, r->add, (uint64_t)(uintptr_t)q};
    KYI_CHECK(ky_am_short(r->rank, KYI_AM_DEV_SIGNAL, a, 5));
    kyi_waiter_t w;
    kyi_waiter_init(&w, call, "the signal's delivery", r->rank);
    while (!atomic_load(&q->acked)) {
        if (!kyi_comm.progress_thread && kyi_progress_poll() > 0) continue;
        kyi_waiter_pause(&w);
    }
    int st = atomic_load(&q->ack_status);
    return st ? kyi_fail(st, call, "rank %d could not set its signal word at %llu", r->rank,
                         (unsigned long long)r->sig_off)
              : KY_OK;
}

static int serve(ring_t *q, const ky_dev_req_t *r)
{
    void *local = (void *)(uintptr_t)r->local;
    switch (r->op) {
        case KY_DEV_OP_PUT:
            return ky_put(r->rank, q->seg, r->off, local, r->n);
        case KY_DEV_OP_GET:
            return ky_get(local, r->rank, q->seg, r->off, r->n);
        case KY_DEV_OP_PUT_SIGNAL:
            KYI_CHECK(ky_put(r->rank, q->seg, r->off, local, r->n)); /* blocking: the data has landed */
            return deliver_signal(q, r);
        default:
            return kyi_fail(KY_ERR_INTERNAL, "ky_dev proxy", "request with operation %u", r->op);
    }
}

/* Serve ticket t if its request is there; 1 if served. */
static int serve_next(ring_t *q, unsigned long long t)
{
    ky_dev_req_t *slot = &q->req[t % q->cap];
    if (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) != t + 1) return 0;
    ky_dev_req_t r;
    memcpy(&r, (const void *)slot, sizeof r);
    int st = serve(q, &r);
    if (st && q->ctl->status == KY_OK) q->ctl->status = st;
    __atomic_store_n(&q->ctl->done, t + 1, __ATOMIC_SEQ_CST); /* the kernel polls this over the bus */
    return 1;
}

static void *proxy_main(void *arg)
{
    ring_t *q = arg;
    kyi_waiter_t w;
    kyi_waiter_init(&w, NULL, "device requests", -1);
    unsigned long long t = 0;
    for (;;) {
        if (serve_next(q, t)) {
            t++;
            kyi_waiter_progress(&w);
            continue;
        }
        if (atomic_load(&q->stop)) break;
        /* Without a progress thread nobody else serves this rank's requests while its kernels run (its
         * host thread waits on them): the proxy does, so peers' proxied puts and signals land. */
        if (!kyi_comm.progress_thread && kyi_progress_poll() > 0) {
            kyi_waiter_progress(&w);
            continue;
        }
        kyi_waiter_pause(&w);
    }
    return NULL;
}

/* ---- life of a ring ------------------------------------------------------------------------------ */

static void ring_free(ring_t *q)
{
    if (q->head) kyi_gpu_free(q->head);
    if (q->host) kyi_gpu_host_free(q->host);
    free(q);
}

static int ring_new(struct kyi_seg *s, ring_t **out)
{
    static const char *call = "ky_dev_seg";
    ring_t *q = calloc(1, sizeof *q);
    if (!q) return kyi_fail(KY_ERR_NOMEM, call, "no memory for the proxy");
    q->seg = s;
    q->dev = s->device;
    q->cap = (unsigned long long)kyi_setting_long(KYI_SET_DEV_PROXY_RING);
    double to = kyi_setting_double(KYI_SET_TIMEOUT);
    q->timeout_ns = to > 0 ? (unsigned long long)(to * 1e9) : ~0ull;
    int st = kyi_gpu_host_alloc(64 + q->cap * sizeof(ky_dev_req_t), &q->host);
    if (!st) st = kyi_gpu_malloc(q->dev, sizeof *q->head, (void **)&q->head);
    if (!st) st = kyi_gpu_copy(q->dev, q->head, &(unsigned long long){0}, sizeof *q->head);
    if (st) {
        ring_free(q);
        return kyi_fail(st, call, "cannot set up the device proxy of segment %u: %s", s->id,
                        kyi_gpu_last_error());
    }
    memset(q->host, 0, 64 + q->cap * sizeof(ky_dev_req_t));
    q->ctl = q->host;
    q->req = (ky_dev_req_t *)((char *)q->host + 64);
    if (pthread_create(&q->thr, NULL, proxy_main, q)) {
        ring_free(q);
        return kyi_fail(KY_ERR_SYSTEM, call, "cannot start the device proxy thread");
    }
    KYI_INFO(KYI_SUB_COMM, "segment %u: device proxy with %llu slots", s->id, q->cap);
    *out = q;
    return KY_OK;
}

int kyi_dev_proxy_ring(struct kyi_seg *s, ky_dev_ring_t *out)
{
    int st = KY_OK;
    pthread_mutex_lock(&rings_lock);
    if (!rings[s->id]) st = ring_new(s, &rings[s->id]);
    ring_t *q = rings[s->id];
    pthread_mutex_unlock(&rings_lock);
    if (st) return st;
    /* Pinned host memory is addressed alike by the host and the GPU (unified addressing). */
    out->head = q->head;
    out->req = q->req;
    out->done = &q->ctl->done;
    out->status = &q->ctl->status;
    out->cap = q->cap;
    out->timeout_ns = q->timeout_ns;
    return KY_OK;
}

void kyi_dev_proxy_stop(struct kyi_seg *s)
{
    pthread_mutex_lock(&rings_lock);
    ring_t *q = rings[s->id];
    rings[s->id] = NULL;
    pthread_mutex_unlock(&rings_lock);
    if (!q) return;
    /* The segment's kernels have ended (the caller synchronised before ky_seg_destroy): the thread serves
     * what they queued, sees stop, and leaves. */
    atomic_store(&q->stop, 1);
    pthread_join(q->thr, NULL);
    unsigned long long h = 0;
    if (kyi_gpu_copy(q->dev, &h, q->head, sizeof h) == KY_OK && h != q->ctl->done)
        KYI_WARN(KYI_SUB_COMM, "segment %u: %llu device requests were still being queued at ky_seg_destroy",
                 s->id, h - q->ctl->done);
    ring_free(q);
}
