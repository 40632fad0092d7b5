/* The channel (comm/chan.h) on UCX's tag matching, for jobs whose transport is UCX: DSM replies and data,
 * halo and collective messages then travel where the puts and active messages do. A 64-bit UCP tag holds
 * the channel's number (16 bits: 0 replies, 1 data, then one per group), the sender's world rank (16 bits)
 * and the caller's tag (32 bits); receives match all of it, so every (channel, peer, tag) is its own
 * ordered stream, as an MPI communicator gives. Every UCP call holds kyi_ucx.lock. Answers sent from
 * handlers are kept in a list until UCX has sent them (their copies freed, or release called then), which
 * the transport's progress completes. */
#include <stdlib.h>
#include <string.h>

#include "comm/chan_impl.h"
#include "comm/ucx/ucx.h"

#define CHAN_BITS 16
#define RANK_BITS 16
#define FULL_MASK UINT64_MAX

static uint32_t next_id = 2; /* 0 and 1: the job-wide channels */

typedef struct kyi_ucx_answer {
    void *req;
    void *copy; /* freed once sent (NULL with release) */
    void (*release)(void *);
    void *ctx;
    struct kyi_ucx_answer *next;
} pending_t;
static pending_t *pend; /* under kyi_ucx.lock */

static ucp_tag_t make_tag(uint32_t chan, int world_rank, int tag)
{
    return ((uint64_t)(chan & 0xffff) << (64 - CHAN_BITS)) | ((uint64_t)(world_rank & 0xffff) << 32) |
           (uint32_t)tag;
}

static int world_of(const kyi_chan_t *c, int peer)
{
    return c->world ? c->world[peer] : peer;
}

static int chan_group(const char *call, int n, const int *world, kyi_chan_t **out)
{
    *out = NULL;
    if (kyi_rt.nranks > (1 << RANK_BITS))
        return kyi_fail(KY_ERR_UNSUPPORTED, call, "the UCX channel numbers at most %d ranks", 1 << RANK_BITS);
    struct kyi_chan *c = calloc(1, sizeof *c);
    int *w = world ? malloc(sizeof(int) * (size_t)n) : NULL;
    if (!c || (world && !w)) {
        free(c);
        free(w);
        return kyi_fail(KY_ERR_NOMEM, call, "no memory for a channel");
    }
    if (w) memcpy(w, world, sizeof(int) * (size_t)n);
    /* the members agree on the channel's number: the largest next number any of them has, over a
     * communicator of the members only (the runtime's MPI: set-up, as UCX's own bootstrap) */
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Group all, grp;
    MPI_Comm_group(kyi_rt.world, &all);
    int bad = world ? MPI_Group_incl(all, n, world, &grp) != MPI_SUCCESS : MPI_Comm_group(kyi_rt.world, &grp);
    MPI_Group_free(&all);
    if (!bad) bad = MPI_Comm_create_group(kyi_rt.world, grp, 0, &sub) != MPI_SUCCESS;
    MPI_Group_free(&grp);
    unsigned long mine = next_id, id = 0;
    if (!bad) bad = MPI_Allreduce(&mine, &id, 1, MPI_UNSIGNED_LONG, MPI_MAX, sub) != MPI_SUCCESS;
    if (sub != MPI_COMM_NULL) MPI_Comm_free(&sub);
    if (bad || id >= (1u << CHAN_BITS)) {
        free(c);
        free(w);
        return bad ? kyi_fail(KY_ERR_MPI, call, "the %d ranks of a channel could not agree on its number", n)
                   : kyi_fail(KY_ERR_NOMEM, call, "more than %d UCX channels were created", 1 << CHAN_BITS);
    }
    next_id = (uint32_t)id + 1;
    c->ucx_id = (uint32_t)id;
    c->n = n;
    c->world = w;
    c->owned = 1;
    *out = c;
    return KY_OK;
}

static void chan_free(kyi_chan_t *c)
{
    if (!c || !c->owned) return;
    free(c->world);
    free(c);
}

static int posted(const char *call, const char *what, int peer, ucs_status_ptr_t p, kyi_chan_req_t *r,
                  int recv)
{
    void *req = NULL;
    int st = kyi_ucx_req(call, what, peer, p, &req);
    r->impl[0] = (uint64_t)(uintptr_t)req;
    r->impl[1] = (uint64_t)recv;
    return st;
}

static int chan_irecv(const char *call, kyi_chan_t *c, int peer, int tag, void *buf, size_t cap,
                      kyi_chan_req_t *r)
{
    r->got = 0;
    /* always a request, so that its size can be read once it completes */
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL};
    pthread_mutex_lock(&kyi_ucx.lock);
    ucs_status_ptr_t p = ucp_tag_recv_nbx(kyi_ucx.worker, buf, cap,
                                          make_tag(c->ucx_id, world_of(c, peer), tag), FULL_MASK, &prm);
    pthread_mutex_unlock(&kyi_ucx.lock);
    return posted(call, "ucp_tag_recv_nbx", world_of(c, peer), p, r, 1);
}

static int chan_isend(const char *call, kyi_chan_t *c, int peer, int tag, const void *buf, size_t n,
                      kyi_chan_req_t *r)
{
    r->got = 0;
    int w = world_of(c, peer);
    ucp_request_param_t prm = {.op_attr_mask = 0};
    pthread_mutex_lock(&kyi_ucx.lock);
    ucs_status_ptr_t p = ucp_tag_send_nbx(kyi_ucx.ep[w], buf, n, make_tag(c->ucx_id, kyi_rt.rank, tag), &prm);
    pthread_mutex_unlock(&kyi_ucx.lock);
    return posted(call, "ucp_tag_send_nbx", w, p, r, 0);
}

static int chan_test(const char *call, kyi_chan_req_t *r, int *done)
{
    void *req = (void *)(uintptr_t)r->impl[0];
    *done = 1;
    if (!req) return KY_OK;
    ucs_status_t st;
    ucp_tag_recv_info_t info = {0};
    pthread_mutex_lock(&kyi_ucx.lock);
    kyi_ucx_progress_worker();
    if (r->impl[1])
        st = ucp_tag_recv_request_test(req, &info);
    else
        st = ucp_request_check_status(req);
    if (st != UCS_INPROGRESS) ucp_request_free(req);
    pthread_mutex_unlock(&kyi_ucx.lock);
    if (st == UCS_INPROGRESS) {
        *done = 0;
        return KY_OK;
    }
    r->impl[0] = 0;
    if (st != UCS_OK)
        return kyi_fail(KY_ERR_SYSTEM, call, "rank %d: a UCX %s failed: %s", kyi_rt.rank,
                        r->impl[1] ? "receive" : "send", ucs_status_string(st));
    if (r->impl[1]) r->got = info.length;
    kyi_hb_acquire(KYI_HB_REPLY); /* what the handler did before answering precedes the return */
    return KY_OK;
}

static void chan_cancel(kyi_chan_req_t *r)
{
    void *req = (void *)(uintptr_t)r->impl[0];
    if (!req) return;
    pthread_mutex_lock(&kyi_ucx.lock);
    ucp_request_cancel(kyi_ucx.worker, req);
    while (ucp_request_check_status(req) == UCS_INPROGRESS) kyi_ucx_progress_worker();
    ucp_request_free(req);
    pthread_mutex_unlock(&kyi_ucx.lock);
    r->impl[0] = 0;
}

static int chan_reply(int dest, int tag, const void *buf, size_t n, void (*release)(void *), void *ctx)
{
    static const char *call = "kyi_chan_reply";
    void *copy = NULL;
    if (!release && n) {
        if (!(copy = malloc(n))) return kyi_fail(KY_ERR_NOMEM, call, "no memory for a %zu-byte answer", n);
        memcpy(copy, buf, n);
    }
    pending_t *e = malloc(sizeof *e);
    if (!e) {
        free(copy);
        return kyi_fail(KY_ERR_NOMEM, call, "no memory");
    }
    ucp_request_param_t prm = {.op_attr_mask = 0};
    pthread_mutex_lock(&kyi_ucx.lock);
    ucs_status_ptr_t p =
        ucp_tag_send_nbx(kyi_ucx.ep[dest], copy ? copy : buf, n, make_tag(0, kyi_rt.rank, tag), &prm);
    if (UCS_PTR_IS_PTR(p)) {
        *e = (pending_t){p, copy, release, ctx, pend};
        pend = e;
        pthread_mutex_unlock(&kyi_ucx.lock);
        return KY_OK;
    }
    pthread_mutex_unlock(&kyi_ucx.lock);
    free(e);
    free(copy);
    if (release) release(ctx);
    if (UCS_PTR_IS_ERR(p))
        return kyi_fail(KY_ERR_SYSTEM, call, "rank %d: answer to rank %d: UCX: %s", kyi_rt.rank, dest,
                        ucs_status_string(UCS_PTR_STATUS(p)));
    return KY_OK;
}

pending_t *kyi_ucx_chan_reap(int *left)
{
    pending_t *done = NULL, **pp;
    *left = 0;
    for (pp = &pend; *pp;) {
        pending_t *e = *pp;
        if (ucp_request_check_status(e->req) == UCS_INPROGRESS) {
            ++*left;
            pp = &e->next;
            continue;
        }
        ucp_request_free(e->req);
        *pp = e->next;
        e->next = done;
        done = e;
    }
    return done;
}

void kyi_ucx_chan_done(pending_t *done)
{
    while (done) { /* outside the lock: a release may take others */
        pending_t *next = done->next;
        free(done->copy);
        if (done->release) done->release(done->ctx);
        free(done);
        done = next;
    }
}

static int chan_flush(void)
{
    int left;
    pthread_mutex_lock(&kyi_ucx.lock);
    if (pend) kyi_ucx_progress_worker();
    pending_t *done = kyi_ucx_chan_reap(&left);
    pthread_mutex_unlock(&kyi_ucx.lock);
    kyi_ucx_chan_done(done);
    return left;
}

const kyi_chan_ops_t kyi_chan_ucx_ops = {
    .group = chan_group,
    .free = chan_free,
    .irecv = chan_irecv,
    .isend = chan_isend,
    .req_init = NULL, /* zeroed by chan.c: no request, complete */
    .test = chan_test,
    .cancel = chan_cancel,
    .reply = chan_reply,
    .flush = chan_flush,
};
