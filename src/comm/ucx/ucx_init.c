/* The UCX transport's set-up and teardown, its waits and request tests, background progress. UCX
 * reads its own UCX_* variables (UCX_TLS picks the transports: self,sm,tcp on one machine, rc/dc/ud with
 * InfiniBand); Kyoyu logs what was chosen at KY_DEBUG=info. Worker addresses travel through the runtime's
 * MPI bootstrap (kyi_rt_allgather). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/chan_impl.h"
#include "comm/ucx/ucx.h"

kyi_ucx_t kyi_ucx = {.lock = PTHREAD_MUTEX_INITIALIZER};

int kyi_ucx_built(void)
{
    return 1;
}

int kyi_ucx_req(const char *call, const char *what, int peer, ucs_status_ptr_t p, void **req)
{
    *req = NULL;
    if (UCS_PTR_IS_ERR(p))
        return kyi_fail(KY_ERR_SYSTEM, call, "rank %d: %s to rank %d failed: UCX: %s", kyi_rt.rank, what,
                        peer, ucs_status_string(UCS_PTR_STATUS(p)));
    *req = p;
    return KY_OK;
}

unsigned kyi_ucx_progress_worker(void)
{
    kyi_hb_acquire(KYI_HB_BARRIER);
    unsigned n = ucp_worker_progress(kyi_ucx.worker);
    kyi_hb_release(KYI_HB_BARRIER);
    kyi_hb_release(KYI_HB_REPLY);
    return n;
}

/* Progress the worker and say whether req completed (freeing it; *st its status). Lock held. */
static int req_done(void *req, ucs_status_t *st)
{
    kyi_ucx_progress_worker();
    *st = ucp_request_check_status(req);
    if (*st == UCS_INPROGRESS) return 0;
    ucp_request_free(req);
    return 1;
}

int kyi_ucx_wait(const char *call, int peer, void *req)
{
    if (!req) return KY_OK;
    kyi_waiter_t w;
    kyi_waiter_init(&w, call, "a UCX request", peer);
    for (;;) {
        ucs_status_t st;
        pthread_mutex_lock(&kyi_ucx.lock);
        int done = req_done(req, &st);
        pthread_mutex_unlock(&kyi_ucx.lock);
        if (done) {
            kyi_hb_acquire(KYI_HB_REPLY);
            if (st == UCS_OK) return KY_OK;
            return kyi_fail(KY_ERR_SYSTEM, call, "rank %d: UCX request with rank %d failed: %s", kyi_rt.rank,
                            peer, ucs_status_string(st));
        }
        if (!kyi_comm.progress_thread && kyi_progress_poll() > 0) continue;
        kyi_waiter_pause(&w);
    }
}

int kyi_ucx_rma_wait(const char *call, int peer, uint64_t seq)
{
    kyi_waiter_t w;
    kyi_waiter_init(&w, call, "UCX to complete a transfer (endpoint flush)", peer);
    for (;;) {
        ucs_status_t st = UCS_OK;
        pthread_mutex_lock(&kyi_ucx.lock);
        int r = kyi_ucx_rma_done(peer, seq, &st);
        pthread_mutex_unlock(&kyi_ucx.lock);
        if (r > 0) {
            kyi_hb_acquire(KYI_HB_REPLY);
            return KY_OK;
        }
        if (r < 0)
            return kyi_fail(KY_ERR_SYSTEM, call, "rank %d: UCX transfer with rank %d failed: %s", kyi_rt.rank,
                            peer, ucs_status_string(st));
        if (!kyi_comm.progress_thread && kyi_progress_poll() > 0) continue;
        kyi_waiter_pause(&w);
    }
}

int kyi_ucx_test(kyi_handle_t *h, int *done)
{
    int err = KY_OK;
    *done = 1;
    if (!h->xseq && !h->xreq[0] && !h->xreq[1]) { /* complete at issue: nothing of UCX's to look at */
        kyi_hb_acquire(KYI_HB_REPLY);
        return KY_OK;
    }
    pthread_mutex_lock(&kyi_ucx.lock);
    if (h->xseq) { /* RMA: complete once a flush issued after it has */
        ucs_status_t st = UCS_OK;
        int r = kyi_ucx_rma_done(h->rank, h->xseq, &st);
        if (r < 0)
            err = kyi_fail(KY_ERR_SYSTEM, h->call, "rank %d: UCX transfer with rank %d failed: %s",
                           kyi_rt.rank, h->rank, ucs_status_string(st));
        if (r)
            h->xseq = 0;
        else
            *done = 0;
    }
    for (int i = 0; i < 2; i++) {
        ucs_status_t st;
        if (!h->xreq[i]) continue;
        if (!req_done(h->xreq[i], &st)) {
            *done = 0;
            continue;
        }
        h->xreq[i] = NULL;
        if (st != UCS_OK && !err)
            err = kyi_fail(KY_ERR_SYSTEM, h->call, "rank %d: UCX transfer with rank %d failed: %s",
                           kyi_rt.rank, h->rank, ucs_status_string(st));
    }
    pthread_mutex_unlock(&kyi_ucx.lock);
    if (*done) kyi_hb_acquire(KYI_HB_REPLY);
    if (err && !h->rstatus) h->rstatus = err;
    return KY_OK;
}

void kyi_ucx_background(void)
{
    if (pthread_mutex_trylock(&kyi_ucx.lock)) return; /* someone else is progressing it */
    kyi_ucx_progress_worker();
    pthread_mutex_unlock(&kyi_ucx.lock);
}

/* Every rank's worker address, then an endpoint to each. */
static int connect_all(void)
{
    static const char *call = "ky_init";
    ucp_address_t *addr = NULL;
    size_t len = 0;
    ucs_status_t us = ucp_worker_get_address(kyi_ucx.worker, &addr, &len);
    if (us != UCS_OK)
        return kyi_fail(KY_ERR_SYSTEM, call, "rank %d: ucp_worker_get_address failed: %s", kyi_rt.rank,
                        ucs_status_string(us));
    int64_t max = (int64_t)len;
    int st = kyi_rt_allreduce_i64(&max, 1, KYI_RT_MAX);
    int n = kyi_rt.nranks;
    char *mine = calloc(1, (size_t)max + sizeof(uint64_t)), *all = calloc(n, (size_t)max + sizeof(uint64_t));
    kyi_ucx.ep = calloc(n, sizeof *kyi_ucx.ep);
    kyi_ucx.fl = calloc(n, sizeof *kyi_ucx.fl); /* UCS_OK is 0: no failure yet */
    if (!st && (!mine || !all || !kyi_ucx.ep || !kyi_ucx.fl))
        st = kyi_fail(KY_ERR_NOMEM, call, "rank %d: no memory for %d UCX addresses", kyi_rt.rank, n);
    size_t slot = (size_t)max + sizeof(uint64_t);
    if (!st) {
        uint64_t l = len;
        memcpy(mine, &l, sizeof l);
        memcpy(mine + sizeof l, addr, len);
        st = kyi_rt_allgather(mine, slot, all);
    }
    for (int r = 0; r < n && !st; r++) {
        ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                              .address = (const ucp_address_t *)(all + (size_t)r * slot + sizeof(uint64_t))};
        us = ucp_ep_create(kyi_ucx.worker, &ep, &kyi_ucx.ep[r]);
        if (us != UCS_OK)
            st = kyi_fail(KY_ERR_SYSTEM, call, "rank %d: ucp_ep_create to rank %d failed: %s", kyi_rt.rank, r,
                          ucs_status_string(us));
    }
    ucp_worker_release_address(kyi_ucx.worker, addr);
    free(mine);
    free(all);
    return st;
}

/* Whether the context has a memory domain of this name (UCP's API lists them only in its printout). */
static int has_md(const char *name)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return 0;
    ucp_context_print_info(kyi_ucx.ctx, f);
    fclose(f);
    int found = 0;
    for (char *line = strtok(text, "\n"); line && !found; line = strtok(NULL, "\n")) {
        char *md = strstr(line, "md ");
        char *comp = md ? strstr(md, "component") : NULL;
        found = md && comp && !strstr(line, "resource") && strstr(comp, name) != NULL;
    }
    free(text);
    return found;
}

static int open_worker(void)
{
    static const char *call = "ky_init";
    ucp_config_t *cfg = NULL;
    ucs_status_t us = ucp_config_read(NULL, NULL, &cfg);
    if (us != UCS_OK)
        return kyi_fail(KY_ERR_SYSTEM, call, "rank %d: ucp_config_read failed: %s", kyi_rt.rank,
                        ucs_status_string(us));
    ucp_params_t p = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                      .features = UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_TAG};
    us = ucp_init(&p, cfg, &kyi_ucx.ctx);
    ucp_config_release(cfg);
    if (us != UCS_OK)
        return kyi_fail(KY_ERR_SYSTEM, call, "rank %d: ucp_init failed: %s", kyi_rt.rank,
                        ucs_status_string(us));
    /* GPU segments go to UCX only where this UCX moves CUDA memory (the CUDA-enabled build, e.g. the
     * libucx-cu13 wheel); Debian's and Ubuntu's packages register host memory only */
    ucp_context_attr_t ca = {.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES};
    kyi_ucx.cuda =
        ucp_context_query(kyi_ucx.ctx, &ca) == UCS_OK && (ca.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA));
    kyi_ucx.xpmem = has_md("xpmem");
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SERIALIZED};
    us = ucp_worker_create(kyi_ucx.ctx, &wp, &kyi_ucx.worker);
    if (us != UCS_OK)
        return kyi_fail(KY_ERR_SYSTEM, call, "rank %d: ucp_worker_create failed: %s", kyi_rt.rank,
                        ucs_status_string(us));
    return KY_OK;
}

/* A barrier that keeps progressing the worker: a peer's flush or close may need this rank's progress. */
static void progressing_barrier(const char *what)
{
    MPI_Request bar;
    int done = 0;
    kyi_waiter_t w;
    kyi_waiter_init(&w, "ky_finalize", what, -1);
    MPI_Ibarrier(kyi_rt.world, &bar);
    for (;;) {
        kyi_ucx_background();
        MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
        if (done) break;
        kyi_waiter_pause(&w);
    }
}

/* Endpoints close in UCX's flush mode: UCP_EP_CLOSE_FLAG_FORCE is refused (UCS_ERR_INVALID_PARAM) for
 * endpoints without peer error handling, which ours are. Every rank closes at the same point (after the
 * barrier of kyi_ucx_fini) and waits for its closes while progressing, then a second barrier keeps each
 * worker alive until no peer's close can need it. */
static void close_all(void)
{
    for (int r = 0; kyi_ucx.ep && r < kyi_rt.nranks; r++) {
        if (!kyi_ucx.ep[r]) continue;
        if (kyi_ucx.fl && kyi_ucx.fl[r].req) { /* a shared flush no handle waited for to the end */
            kyi_ucx_wait("ky_finalize", r, kyi_ucx.fl[r].req);
            kyi_ucx.fl[r].req = NULL;
        }
        ucp_request_param_t prm = {.op_attr_mask = 0};
        void *req = NULL;
        pthread_mutex_lock(&kyi_ucx.lock);
        ucs_status_ptr_t p = ucp_ep_close_nbx(kyi_ucx.ep[r], &prm);
        pthread_mutex_unlock(&kyi_ucx.lock);
        if (kyi_ucx_req("ky_finalize", "ucp_ep_close_nbx", r, p, &req) == KY_OK)
            kyi_ucx_wait("ky_finalize", r, req);
        kyi_ucx.ep[r] = NULL;
    }
    if (kyi_ucx.ep) progressing_barrier("every rank to close its UCX endpoints");
    free(kyi_ucx.ep);
    kyi_ucx.ep = NULL;
    free(kyi_ucx.fl);
    kyi_ucx.fl = NULL;
    kyi_ucx_am_close();
    if (kyi_ucx.worker) ucp_worker_destroy(kyi_ucx.worker);
    if (kyi_ucx.ctx) ucp_cleanup(kyi_ucx.ctx);
    kyi_ucx.worker = NULL;
    kyi_ucx.ctx = NULL;
}

void kyi_ucx_fini(void)
{
    /* Everything this rank issued has completed (ky_quiet ran); the barrier keeps every endpoint open
     * until no rank needs its peers' progress any more. */
    /* answers still on their way out go first */
    kyi_waiter_t wf;
    kyi_waiter_init(&wf, "ky_finalize", "UCX answers to be sent", -1);
    while (kyi_chan_impl != &kyi_chan_mpi_ops && kyi_chan_impl->flush() > 0) kyi_waiter_pause(&wf);
    void *req = NULL;
    ucp_request_param_t prm = {.op_attr_mask = 0};
    pthread_mutex_lock(&kyi_ucx.lock);
    ucs_status_ptr_t p = ucp_worker_flush_nbx(kyi_ucx.worker, &prm);
    pthread_mutex_unlock(&kyi_ucx.lock);
    if (kyi_ucx_req("ky_finalize", "ucp_worker_flush_nbx", -1, p, &req) == KY_OK)
        kyi_ucx_wait("ky_finalize", -1, req);
    progressing_barrier("every rank to finish with UCX");
    close_all();
}

/* KY_DEBUG=info: UCX's version and the transports (lanes) of rank 0's endpoint to its neighbour, which
 * UCX chose from UCX_TLS and the hardware: what a run measured. */
static void log_lanes(void)
{
    if (!kyi_log_enabled(KYI_LOG_INFO, KYI_SUB_COMM)) return;
    KYI_INFO(KYI_SUB_COMM, "transport ucx: UCX %s, CUDA memory %s", ucp_get_version_string(),
             kyi_ucx.cuda ? "yes (GPU segments on UCX)" : "no (GPU segments on the MPI path)");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return;
    ucp_ep_print_info(kyi_ucx.ep[kyi_rt.nranks > 1 ? 1 : 0], f);
    fclose(f);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        while (*line == ' ' || *line == '#') line++;
        if (!strncmp(line, "lane[", 5))
            KYI_INFO(KYI_SUB_COMM, "transport ucx, rank 0 -> %d: %s", kyi_rt.nranks > 1, line);
    }
    free(text);
}

int kyi_ucx_open(const kyi_transport_t **out)
{
    *out = NULL;
    int st = open_worker();
    if (!st) st = kyi_ucx_am_open();
    if (!st) st = connect_all();
    /* One rank's failure is every rank's: nobody may go on talking to a rank without UCX. */
    int64_t worst = st;
    kyi_rt_allreduce_i64(&worst, 1, KYI_RT_MIN);
    if (worst) {
        close_all();
        if (st) return st;
        return kyi_fail((int)worst, "ky_init", "rank %d: another rank could not start UCX", kyi_rt.rank);
    }
    if (kyi_rt.rank == 0) log_lanes();
    /* the channel follows the transport (no channel exists yet: comm opens before the layers above) */
    if (kyi_rt.nranks <= 65536) kyi_chan_impl = &kyi_chan_ucx_ops;
    KYI_INFO(KYI_SUB_COMM, "transport ucx: the channel (replies, data, groups) on %s",
             kyi_chan_impl == &kyi_chan_ucx_ops ? "UCX tag matching" : "MPI (more than 65536 ranks)");
    *out = &kyi_tp_ucx;
    return KY_OK;
}
