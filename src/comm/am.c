/* Active messages (GASNet style): short (arguments only), medium (payload delivered in a temporary
 * buffer) and long (payload written into a segment first). Messages travel on the transport kyi_tp_am()
 * names and run on the target's progress engine, which calls deliver(); handlers may reply, and replies
 * never block the engine. Long payloads to a mapped piece (same node) are written directly and only the
 * header travels. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "comm/proto.h"
#include "comm/transport.h"

struct kyi_am_token {
    int src;
    int in_handler;
};

static _Atomic(ky_am_handler_t) handlers[KY_AM_MAX_HANDLERS];
static atomic_ullong *sent_to;      /* [nranks] messages this rank sent to each rank */
static atomic_ullong *handled_from; /* [nranks] messages this rank handled from each rank */

int kyi_am_init(void)
{
    sent_to = calloc(kyi_rt.nranks, sizeof *sent_to);
    handled_from = calloc(kyi_rt.nranks, sizeof *handled_from);
    if (!sent_to || !handled_from) return kyi_fail(KY_ERR_NOMEM, "ky_init", "no memory for message counters");
    for (int i = 0; i < KY_AM_MAX_HANDLERS; i++) atomic_store(&handlers[i], NULL);
    return KY_OK;
}

/* Every message sent before the call has run its handler when this returns (collective; used by
 * ky_finalize). Replies sent meanwhile are waited for too: rounds repeat until nobody sent anything new. */
int kyi_am_drain(void)
{
    int n = kyi_rt.nranks;
    unsigned long long *snap = malloc(sizeof *snap * n), *expect = malloc(sizeof *expect * n);
    if (!snap || !expect) {
        free(snap);
        free(expect);
        return kyi_fail(KY_ERR_NOMEM, "ky_finalize", "no memory");
    }
    for (;;) {
        for (int r = 0; r < n; r++) snap[r] = atomic_load(&sent_to[r]);
        int st = kyi_rt_alltoall_u64((const uint64_t *)snap, (uint64_t *)expect);
        if (st) {
            free(snap);
            free(expect);
            return st;
        }
        kyi_waiter_t w;
        kyi_waiter_init(&w, "ky_finalize", "active messages still in flight", -1);
        for (int r = 0; r < n; r++)
            while (atomic_load(&handled_from[r]) < expect[r]) {
                if (!kyi_comm.progress_thread && kyi_progress_poll() > 0) continue;
                kyi_waiter_pause(&w);
            }
        int64_t news = 0;
        for (int r = 0; r < n; r++) news |= atomic_load(&sent_to[r]) != snap[r];
        st = kyi_rt_allreduce_i64(&news, 1, KYI_RT_MAX); /* anybody sent something new */
        if (st) {
            free(snap);
            free(expect);
            return st;
        }
        if (!news) break;
    }
    free(snap);
    free(expect);
    free(sent_to);
    free(handled_from);
    sent_to = handled_from = NULL;
    return KY_OK;
}

int ky_am_register(int idx, ky_am_handler_t handler)
{
    KYI_CHECK(kyi_require_init("ky_am_register"));
    if (idx < 0 || idx >= KY_AM_MAX_HANDLERS)
        return kyi_fail(KY_ERR_ARG, "ky_am_register", "handler index %d is not in 0..%d", idx,
                        KY_AM_MAX_HANDLERS - 1);
    atomic_store(&handlers[idx], handler);
    return KY_OK;
}

size_t ky_am_max_medium(void)
{
    return kyi_comm.am_medium_max;
}

int ky_am_source(ky_am_token_t t)
{
    if (!t) return kyi_fail(KY_ERR_ARG, "ky_am_source", "token is NULL");
    return t->src;
}

static int check_am(const char *call, int rank, int idx, const uint64_t *args, int nargs)
{
    KYI_CHECK(kyi_require_init(call));
    if (rank < 0 || rank >= kyi_rt.nranks)
        return kyi_fail(KY_ERR_ARG, call, "rank %d is not in 0..%d", rank, kyi_rt.nranks - 1);
    if (idx < 0 || idx >= KY_AM_MAX_HANDLERS)
        return kyi_fail(KY_ERR_ARG, call, "handler index %d is not in 0..%d", idx, KY_AM_MAX_HANDLERS - 1);
    if (!atomic_load(&handlers[idx]))
        return kyi_fail(KY_ERR_NO_HANDLER, call,
                        "no handler is registered at index %d (register it on every rank first)", idx);
    if (nargs < 0 || nargs > KY_AM_MAX_ARGS)
        return kyi_fail(KY_ERR_ARG, call, "%d arguments; at most %d", nargs, KY_AM_MAX_ARGS);
    if (nargs && !args) return kyi_fail(KY_ERR_ARG, call, "args is NULL with nargs %d", nargs);
    return KY_OK;
}

/* Send one message through the transport active messages take, and count it. */
static int send_msg(const char *call, int rank, kyi_hdr_t *hdr, const void *payload, int pdev,
                    struct kyi_seg *s, int reply)
{
    int st = kyi_tp_am()->am_send(call, rank, hdr, payload, pdev, s, reply);
    if (!st) {
        atomic_fetch_add(&sent_to[rank], 1);
        atomic_fetch_add_explicit(&kyi_stats.am_sent, 1, memory_order_relaxed);
    }
    return st;
}

static void fill(kyi_hdr_t *h, int idx, const uint64_t *args, int nargs, int flags)
{
    memset(h, 0, sizeof *h);
    h->op = KYI_OP_AM;
    h->handler = (uint16_t)idx;
    h->nargs = (uint8_t)nargs;
    h->flags = (uint8_t)flags;
    if (nargs) memcpy(h->args, args, sizeof(uint64_t) * nargs);
}

static int am_short(const char *call, int rank, int idx, const uint64_t *args, int nargs, int reply)
{
    KYI_CHECK(check_am(call, rank, idx, args, nargs));
    kyi_hdr_t h;
    fill(&h, idx, args, nargs, reply ? KYI_F_REPLY : 0);
    return send_msg(call, rank, &h, NULL, -1, NULL, reply);
}

static int am_medium(const char *call, int rank, int idx, const void *payload, size_t n, const uint64_t *args,
                     int nargs, int reply)
{
    KYI_CHECK(check_am(call, rank, idx, args, nargs));
    if (KYI_SIZE_LOOKS_NEGATIVE(n)) return kyi_fail(KY_ERR_ARG, call, "size %zu looks negative", n);
    if (n > kyi_comm.am_medium_max)
        return kyi_fail(KY_ERR_ARG, call, "medium payload of %zu bytes exceeds KY_AM_MEDIUM_MAX (%zu)", n,
                        kyi_comm.am_medium_max);
    if (n && !payload) return kyi_fail(KY_ERR_ARG, call, "payload is NULL");
    kyi_hdr_t h;
    fill(&h, idx, args, nargs, KYI_F_MEDIUM | KYI_F_EAGER | (reply ? KYI_F_REPLY : 0));
    h.n = n;
    return send_msg(call, rank, &h, payload, kyi_ptr_dev(payload), NULL, reply);
}

static int am_long(const char *call, int rank, int idx, const void *payload, size_t n, ky_seg_t s, size_t off,
                   const uint64_t *args, int nargs, int reply)
{
    KYI_CHECK(check_am(call, rank, idx, args, nargs));
    KYI_CHECK(kyi_check_range(call, rank, s, off, n));
    if (n && !payload) return kyi_fail(KY_ERR_ARG, call, "payload is NULL");
    int pdev = kyi_ptr_dev(payload);
    kyi_hdr_t h;
    fill(&h, idx, args, nargs, KYI_F_LONG | (reply ? KYI_F_REPLY : 0));
    h.seg = s->id;
    h.off = off;
    h.n = n;
    ky_path_t path = kyi_path(rank, s);
    if (kyi_path_direct(path)) {
        /* Write the payload straight into the target's piece, then send only the header. */
        kyi_count(path, n);
        KYI_CHECK(
            kyi_local_copy(call, (char *)s->mapped[rank] + off, kyi_mapped_dev(s, rank), payload, pdev, n));
        atomic_thread_fence(memory_order_seq_cst);
        h.flags |= KYI_F_PLACED;
        return send_msg(call, rank, &h, NULL, -1, s, reply);
    }
    return send_msg(call, rank, &h, payload, pdev, s, reply);
}

int ky_am_short(int rank, int idx, const uint64_t *args, int nargs)
{
    return am_short("ky_am_short", rank, idx, args, nargs, 0);
}
int ky_am_medium(int rank, int idx, const void *payload, size_t n, const uint64_t *args, int nargs)
{
    return am_medium("ky_am_medium", rank, idx, payload, n, args, nargs, 0);
}
int ky_am_long(int rank, int idx, const void *payload, size_t n, ky_seg_t seg, size_t off,
               const uint64_t *args, int nargs)
{
    return am_long("ky_am_long", rank, idx, payload, n, seg, off, args, nargs, 0);
}

static int reply_check(const char *call, ky_am_token_t t)
{
    if (!t) return kyi_fail(KY_ERR_ARG, call, "token is NULL");
    if (!t->in_handler) return kyi_fail(KY_ERR_STATE, call, "replies may only be sent from inside a handler");
    return KY_OK;
}

int ky_am_reply_short(ky_am_token_t t, int idx, const uint64_t *args, int nargs)
{
    KYI_CHECK(reply_check("ky_am_reply_short", t));
    return am_short("ky_am_reply_short", t->src, idx, args, nargs, 1);
}
int ky_am_reply_medium(ky_am_token_t t, int idx, const void *payload, size_t n, const uint64_t *args,
                       int nargs)
{
    KYI_CHECK(reply_check("ky_am_reply_medium", t));
    return am_medium("ky_am_reply_medium", t->src, idx, payload, n, args, nargs, 1);
}
int ky_am_reply_long(ky_am_token_t t, int idx, const void *payload, size_t n, ky_seg_t seg, size_t off,
                     const uint64_t *args, int nargs)
{
    KYI_CHECK(reply_check("ky_am_reply_long", t));
    return am_long("ky_am_reply_long", t->src, idx, payload, n, seg, off, args, nargs, 1);
}

/* Target side (kyi_am_deliver, called by the transports): a long message's payload is placed or follows the
 * header; anything else about it was the transport's to receive. */
static void deliver(const kyi_hdr_t *h, void *payload, int src)
{
    static const char *call = "active message";
    ky_am_handler_t fn = h->handler < KY_AM_MAX_HANDLERS ? atomic_load(&handlers[h->handler]) : NULL;
    void *data = (h->flags & KYI_F_MEDIUM) ? payload : NULL;
    int ok = 1;
    if (h->flags & KYI_F_LONG) {
        struct kyi_seg *s = kyi_seg_lookup(h->seg);
        if (!s || h->off > s->bytes || h->n > s->bytes - h->off) {
            KYI_WARN(KYI_SUB_COMM, "long active message from rank %d outside segment %u: dropped", src,
                     h->seg);
            ok = 0;
        }
        int dev = ok && s->memkind == KY_MEM_GPU ? s->device : -1;
        if (ok) data = (char *)s->base + h->off;
        if (h->flags & KYI_F_PLACED) {
            /* already written by the initiator or the transport */
        } else if (h->flags & KYI_F_EAGER) {
            if (ok) ok = kyi_local_copy(call, data, dev, payload, -1, h->n) == KY_OK;
        } else {
            ok = 0; /* the transport could not receive the payload (it said why) */
        }
    }
    if (!fn) {
        KYI_WARN(KYI_SUB_COMM,
                 "active message from rank %d for handler %u, which is not registered here: dropped", src,
                 h->handler);
    } else if (ok) {
        struct kyi_am_token tok = {src, 1};
        fn(&tok, data, (h->flags & (KYI_F_LONG | KYI_F_MEDIUM)) ? h->n : 0, h->args, h->nargs);
    }
    atomic_fetch_add_explicit(&kyi_stats.am_handled, 1, memory_order_relaxed);
    atomic_fetch_add(&handled_from[src], 1);
}

kyi_am_deliver_fn kyi_am_deliver = deliver;
