/* Non-blocking operations: a handle owns the MPI or other transport requests and/or GPU op of one transfer,
 * an optional finishing step (unpack, status check), and sits on the rank's outstanding list until completed,
 * so ky_quiet and ky_fence can complete operations whose handles the user still holds. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "comm/transport.h"

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static kyi_handle_t *out_head;
/* One lock for completing handles: ky_wait on one thread and ky_quiet on another must not both finish it. */
static pthread_mutex_t complete_lock = PTHREAD_MUTEX_INITIALIZER;

kyi_handle_t *kyi_handle_init(kyi_handle_t *h, const char *call, int rank)
{
    memset(h, 0, sizeof *h);
    h->call = call;
    h->rank = rank;
    atomic_init(&h->refs, 1);
    return h;
}

kyi_handle_t *kyi_handle_new(const char *call, int rank)
{
    kyi_handle_t *h = malloc(sizeof *h);
    if (!h) {
        kyi_fail(KY_ERR_NOMEM, call, "no memory for a handle");
        return NULL;
    }
    return kyi_handle_init(h, call, rank);
}

int kyi_handle_done(kyi_handle_t *h, int status, ky_handle_t *out)
{
    h->done = 1;
    h->status = status;
    if (out)
        *out = (ky_handle_t)h;
    else
        free(h);
    return status;
}

static void release(kyi_handle_t *h)
{
    if (atomic_fetch_sub(&h->refs, 1) == 1) free(h);
}

static void unlink_handle(kyi_handle_t *h)
{
    pthread_mutex_lock(&out_lock);
    if (!h->linked) {
        pthread_mutex_unlock(&out_lock);
        return;
    } /* never started, or already unlinked */
    h->linked = 0;
    if (h->prev)
        h->prev->next = h->next;
    else if (out_head == h)
        out_head = h->next;
    if (h->next) h->next->prev = h->prev;
    h->prev = h->next = NULL;
    pthread_mutex_unlock(&out_lock);
    release(h); /* the list's reference; the caller still holds one */
}

int kyi_handle_start(kyi_handle_t *h, ky_handle_t *out)
{
    atomic_fetch_add(&h->refs, 1);
    pthread_mutex_lock(&out_lock);
    h->linked = 1;
    h->next = out_head;
    if (out_head) out_head->prev = h;
    out_head = h;
    pthread_mutex_unlock(&out_lock);
    *out = (ky_handle_t)h;
    return KY_OK;
}

static int finish(kyi_handle_t *h)
{
    int st = KY_OK;
    if (h->gop) {
        st = kyi_gpu_op_wait(h->gop);
        kyi_gpu_op_free(h->gop);
        h->gop = NULL;
        if (st) st = kyi_fail(st, h->call, "GPU copy failed: %s", kyi_gpu_last_error());
    }
    if (!st && h->finish)
        st = h->finish(h);
    else if (!st && h->rstatus)
        st = kyi_fail((int)h->rstatus, h->call, "rank %d refused the request", h->rank);
    free(h->tmp);
    free(h->tmp2);
    h->tmp = h->tmp2 = NULL;
    h->done = 1;
    h->status = st;
    unlink_handle(h);
    return st;
}

/* Non-blocking progress of one handle: 1 if complete now. */
static int poll_handle(kyi_handle_t *h, int *status)
{
    pthread_mutex_lock(&complete_lock);
    if (h->done) {
        *status = h->status;
        pthread_mutex_unlock(&complete_lock);
        return 1;
    }
    int done = 1;
    if (h->nreq) kyi_tp_mpi.test(h, &done); /* the MPI transport's requests (an error ends them too) */
    if (done && h->tp && h->tp->test(h, &done)) done = 1;
    if (done && h->gop) done = kyi_gpu_op_test(h->gop) != 1;
    if (done) *status = finish(h);
    pthread_mutex_unlock(&complete_lock);
    return done;
}

int kyi_handle_launch(kyi_handle_t *h, int st, ky_handle_t *out)
{
    if (st) {
        /* Requests already posted still complete before the handle goes away. */
        kyi_handle_complete(h);
        free(h);
        return st;
    }
    if (out) return kyi_handle_start(h, out);
    st = kyi_handle_complete(h);
    free(h);
    return st;
}

int kyi_handle_wait_local(kyi_handle_t *h, int st)
{
    int cst = kyi_handle_complete(h); /* requests already posted complete even after an error */
    return st ? st : cst;
}

int kyi_handle_complete(kyi_handle_t *h)
{
    int st = KY_OK; /* set by poll_handle when it returns 1 (initialised for the compiler's sake) */
    /* an operation complete at issue (UCX's shared memory) needs no waiter, nor its clock reading */
    if (poll_handle(h, &st)) return st;
    kyi_waiter_t w;
    kyi_waiter_init(&w, h->call, "completion", h->rank);
    while (!poll_handle(h, &st)) {
        if (!kyi_comm.progress_thread && kyi_progress_poll() > 0) continue;
        kyi_waiter_pause(&w);
    }
    return st;
}

int ky_wait(ky_handle_t hh)
{
    if (!hh) return KY_OK;
    KYI_CHECK(kyi_require_init("ky_wait"));
    kyi_handle_t *h = (kyi_handle_t *)hh;
    int st = kyi_handle_complete(h);
    release(h);
    return st;
}

int ky_test(ky_handle_t hh)
{
    if (!hh) return KY_OK;
    KYI_CHECK(kyi_require_init("ky_test"));
    kyi_handle_t *h = (kyi_handle_t *)hh;
    if (!kyi_comm.progress_thread) kyi_progress_poll();
    int st = KY_OK;
    if (!poll_handle(h, &st)) return KY_PENDING;
    release(h);
    return st;
}

int ky_wait_all(ky_handle_t *hs, size_t n)
{
    if (n && !hs) return kyi_fail(KY_ERR_ARG, "ky_wait_all", "handles is NULL");
    int first = KY_OK;
    for (size_t i = 0; i < n; i++) {
        int st = ky_wait(hs[i]);
        hs[i] = NULL;
        if (st && !first) first = st;
    }
    return first;
}

/* Complete every outstanding handle to `rank` (-1: all). Handles stay allocated for their owners. */
static int complete_outstanding(const char *call, int rank)
{
    KYI_CHECK(kyi_require_init(call));
    int first = KY_OK;
    for (;;) {
        pthread_mutex_lock(&out_lock);
        kyi_handle_t *h = out_head;
        while (h && rank >= 0 && h->rank != rank) h = h->next;
        if (h) atomic_fetch_add(&h->refs, 1);
        pthread_mutex_unlock(&out_lock);
        if (!h) return first;
        /* finish() unlinks it, so the loop advances. Another thread may finish it first: also fine. */
        int st = kyi_handle_complete(h);
        release(h);
        if (st && !first) first = st;
    }
}

int ky_quiet(void)
{
    return complete_outstanding("ky_quiet", -1);
}

int ky_fence(int rank)
{
    KYI_CHECK(kyi_require_init("ky_fence"));
    if (rank < -1 || rank >= kyi_rt.nranks)
        return kyi_fail(KY_ERR_ARG, "ky_fence", "rank %d is not -1 or in 0..%d", rank, kyi_rt.nranks - 1);
    return complete_outstanding("ky_fence", rank);
}
