/* GPU collective contexts: a team's GPU context (path, blocking stream, shared NVLink context, staging)
 * and NVLink contexts (every member's registered buffer, allocated, zeroed, exported by CUDA IPC and opened
 * by every other member once). Set-up talks through small host collectives on the team's own
 * communicator, run by the coll executor (no blocking MPI call, KY_TIMEOUT applies). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coll/gpu/gctx.h"
#include "runtime/config.h"
#include "runtime/gpu.h"

/* ---- host collectives for set-up ------------------------------------------------------------------------
 */

int kyi_gx_allgather(struct kyi_team *t, const void *mine, size_t b, void *all, const char *call)
{
    memcpy((char *)all + (size_t)t->rank * b, mine, b);
    struct kyi_coll_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.team = t;
    pl.call = call;
    pl.buf[KYI_B_R] = all;
    pl.algo = kyi_sched_allgather(&pl.sched, KY_ALGO_BRUCK, t->size, t->rank, b, KYI_B_R, (size_t)t->rank * b,
                                  KYI_B_R, 0);
    return kyi_plan_run(&pl);
}

int kyi_gx_barrier(struct kyi_team *t, const char *call)
{
    struct kyi_coll_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.team = t;
    pl.call = call;
    kyi_sched_barrier(&pl.sched, t->size, t->rank);
    return kyi_plan_run(&pl);
}

/* ---- CUDA helpers ---------------------------------------------------------------------------------------
 */

static int *err_word;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;

static void err_init(void)
{
    void *p = NULL;
    if (kyi_gpu_host_alloc(sizeof(int), &p) == KY_OK) {
        *(volatile int *)p = 0;
        err_word = p;
    }
}

int *kyi_gx_err_word(void)
{
    pthread_once(&err_once, err_init);
    return err_word;
}

unsigned long long kyi_gx_timeout_ns(void)
{
    double s = kyi_setting_double(KYI_SET_TIMEOUT);
    if (!(s > 0) || s > 1e9) s = 1e9;
    return (unsigned long long)(s * 1e9);
}

int kyi_gx_cuda(cudaError_t e, const char *call, const char *what)
{
    int w = err_word ? *(volatile int *)err_word : 0;
    if (w > 0)
        kyi_fatal(
            "%s: GPU collective timed out after %g s waiting on the GPU for team member %d (KY_TIMEOUT); "
            "%s: %s",
            call, kyi_setting_double(KYI_SET_TIMEOUT), w - 1, what, cudaGetErrorString(e));
    if (e == cudaErrorLaunchFailure || e == cudaErrorIllegalAddress || e == cudaErrorIllegalInstruction ||
        e == cudaErrorMisalignedAddress || e == cudaErrorAssert)
        kyi_fatal("%s: %s failed: %s; the CUDA context is unusable", call, what, cudaGetErrorString(e));
    (void)cudaGetLastError();
    return kyi_fail(KY_ERR_CUDA, call, "%s: %s", what, cudaGetErrorString(e));
}

int kyi_gx_dev_enter(int dev, int *prev, const char *call)
{
    *prev = -1;
    int cur = -1;
    cudaError_t e = cudaGetDevice(&cur);
    if (e != cudaSuccess) return kyi_gx_cuda(e, call, "cudaGetDevice");
    if (cur == dev) return KY_OK;
    e = cudaSetDevice(dev);
    if (e != cudaSuccess) return kyi_gx_cuda(e, call, "cudaSetDevice");
    *prev = cur;
    return KY_OK;
}

void kyi_gx_dev_leave(int prev)
{
    if (prev >= 0 && cudaSetDevice(prev) != cudaSuccess) (void)cudaGetLastError();
}

/* ---- NVLink contexts ------------------------------------------------------------------------------------
 */

void kyi_nvl_destroy(kyi_nvl_t *c, const char *call)
{
    if (!c) return;
    struct kyi_team *t = c->team;
    kyi_gx_barrier(t, call); /* nobody reads or signals our buffers any more */
    for (int j = 0; j < t->size; j++)
        if (j != t->rank && c->buf[j]) kyi_gpu_ipc_close(c->buf[j]);
    kyi_gx_barrier(t, call); /* nobody maps ours any more */
    kyi_gpu_free(c->buf[t->rank]);
    free(c);
}

int kyi_nvl_create(struct kyi_team *t, int dev, size_t scratch, kyi_nvl_t **out, const char *call)
{
    *out = NULL;
    int p = t->size, me = t->rank;
    kyi_nvl_t *c = calloc(1, sizeof *c);
    kyi_gpu_ipc_t *all = calloc((size_t)p, sizeof *all);
    kyi_gpu_ipc_t mine;
    memset(&mine, 0, sizeof mine);
    int64_t ok = c && all && p <= KYI_NVL_MAXP;
    if (ok) {
        c->dev = dev;
        c->team = t;
        c->scratch = scratch;
        void *b = NULL;
        ok = kyi_gpu_malloc(dev, KYI_NVL_HDR + kyi_nvl_ll_area(p) + scratch, &b) == KY_OK;
        c->buf[me] = b;
    }
    if (ok) {
        int prev;
        ok = kyi_gx_dev_enter(dev, &prev, call) == KY_OK;
        /* zero flags, epochs and LL lines before anyone can open the buffer (the handles go out below) */
        if (ok)
            ok = cudaMemset(c->buf[me], 0, KYI_NVL_HDR + kyi_nvl_ll_area(p)) == cudaSuccess &&
                 cudaDeviceSynchronize() == cudaSuccess;
        if (ok) kyi_gx_dev_leave(prev);
        if (!ok) (void)cudaGetLastError();
    }
    if (ok) ok = kyi_gpu_ipc_export(c->buf[me], &mine) == KY_OK;
    int st = KY_OK;
    if (all)
        st = kyi_gx_allgather(t, &mine, sizeof mine, all, call);
    else {
        /* the others are in the allgather: take part with a dummy so nobody waits forever */
        kyi_gpu_ipc_t tmp[KYI_NVL_MAXP];
        if (p <= KYI_NVL_MAXP) st = kyi_gx_allgather(t, &mine, sizeof mine, tmp, call);
    }
    if (st) ok = 0;
    for (int j = 0; ok && j < p; j++) {
        if (j == me) continue;
        void *q = NULL;
        if (kyi_gpu_ipc_open(&all[j], dev, &q) == KY_OK)
            c->buf[j] = q;
        else
            ok = 0;
    }
    int64_t agreed = ok;
    if (!st) st = kyi_allreduce_min_i64(t, &agreed, 1, call);
    free(all);
    if (st || !agreed) {
        if (c) {
            for (int j = 0; j < p && j < KYI_NVL_MAXP; j++)
                if (j != me && c->buf[j]) kyi_gpu_ipc_close(c->buf[j]);
            if (st == KY_OK) kyi_gx_barrier(t, call);
            if (c->buf[me]) kyi_gpu_free(c->buf[me]);
            free(c);
        }
        if (!st)
            KYI_INFO(KYI_SUB_COLL,
                     "%s: NVLink context not available (%s); GPU collectives stage through host", call,
                     kyi_gpu_last_error());
        return st;
    }
    *out = c;
    KYI_INFO(KYI_SUB_COLL, "%s: NVLink context of %d members on GPU %d, %zu bytes of scratch", call, p, dev,
             scratch);
    return KY_OK;
}

/* ---- team contexts --------------------------------------------------------------------------------------
 */

/* Whether this member may take the NVLink path: the same logical node as every member, a GPU that reaches
 * every member's GPU, and no setting forcing the staged path. */
static int nvl_possible(struct kyi_team *t, int dev)
{
    if (t->size < 2 || t->size > KYI_NVL_MAXP || dev < 0 || dev != kyi_my_device()) return 0;
    if (kyi_setting_is(KYI_SET_COLL_GPU_PATH, "staged") || kyi_setting_is(KYI_SET_PATH_GPU, "mpi")) return 0;
    int node = kyi_rt.node_of[kyi_rt.rank];
    for (int j = 0; j < t->size; j++) {
        int w = t->world[j];
        int d = kyi_rt.gpu_of[w * KYI_MAX_GPUS_PER_RANK];
        if (kyi_rt.node_of[w] != node || kyi_rt.hw_node_of[w] != kyi_rt.hw_node_of[kyi_rt.rank] || d < 0)
            return 0;
        if (w != kyi_rt.rank && !kyi_gpu_can_access_peer(dev, d)) return 0;
    }
    return 1;
}

int kyi_gteam_get(const char *call, struct kyi_team *t, int dev, struct kyi_gteam **out)
{
    *out = t->gpu;
    if (t->gpu) {
        if (t->gpu->dev != dev)
            return kyi_fail(KY_ERR_ARG, call,
                            "GPU buffers on GPU %d, but this team's GPU collectives run on GPU %d", dev,
                            t->gpu->dev);
        return KY_OK;
    }
    struct kyi_gteam *g = calloc(1, sizeof *g);
    int64_t v = g && nvl_possible(t, dev);
    KYI_CHECK(kyi_allreduce_min_i64(t, &v, 1, call));
    if (!g) return kyi_fail(KY_ERR_NOMEM, call, "no memory");
    g->dev = dev;
    g->path = KYI_GPATH_STAGED;
    int prev;
    int st = kyi_gx_dev_enter(dev, &prev, call);
    if (st) {
        free(g);
        return st;
    }
    cudaError_t e = cudaStreamCreateWithFlags(&g->stream, cudaStreamDefault);
    kyi_gx_dev_leave(prev);
    if (e != cudaSuccess) {
        free(g);
        return kyi_gx_cuda(e, call, "cudaStreamCreateWithFlags");
    }
    if (v) {
        st = kyi_nvl_create(t, dev, 64 * 1024, &g->nvl, call);
        if (st) {
            cudaStreamDestroy(g->stream);
            free(g);
            return st;
        }
        if (g->nvl) g->path = KYI_GPATH_NVL;
    }
    (void)kyi_gx_err_word();
    KYI_INFO(KYI_SUB_COLL, "team of %d: GPU collectives on GPU %d take the %s path", t->size, dev,
             g->path == KYI_GPATH_NVL ? "NVLink" : "staged");
    t->gpu = g;
    *out = g;
    return KY_OK;
}

void kyi_gcoll_team_free(struct kyi_team *t)
{
    struct kyi_gteam *g = t->gpu;
    if (!g) return;
    t->gpu = NULL;
    if (cudaStreamSynchronize(g->stream) != cudaSuccess) (void)cudaGetLastError();
    kyi_nvl_destroy(g->nvl, "ky_team_free");
    if (g->pinned) kyi_gpu_host_free(g->pinned);
    cudaStreamDestroy(g->stream);
    free(g);
}
