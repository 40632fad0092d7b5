/* GPU collectives (gcoll.h): building the GPU part of a plan, starting it on a stream, waiting.
 *   nvl     one kernel launch (nvl_kernels.cu): stream-ordered, no host synchronisation, capturable
 *   staged  copy to pinned host memory on the stream, synchronise it, run the host schedule, copy back on
 *           the stream; needs the host in the middle, so it cannot be captured in a CUDA graph. Persistent
 *           allreduce and allgather plans of teams on several nodes run the host part in hierarchical
 *           stages (hier.c: the node's shared memory, then the leaders, then the node)
 *   self    a team of one: a device-to-device copy on the stream
 * Blocking calls use the team's context (its stream, its shared NVLink context with closing barriers, its
 * staging buffer); plans own theirs, made at init. */
#include <stdlib.h>
#include <string.h>

#include "coll/gpu/gctx.h"
#include "coll/hier.h"
#include "runtime/gpu.h"

enum { PATH_SELF = 3 };

struct kyi_gplan {
    int path;
    int dev;
    struct kyi_gteam *gt;
    kyi_nvl_t *nvl; /* the context the kernel runs in */
    int own_nvl;
    kyi_nvl_args_t args;
    /* staged: src+0 -> pinned+d2h_off (d2h_len bytes), host schedule, pinned+h2d_off -> dst+h2d_off */
    struct kyi_coll_plan host;
    char *pinned;
    int own_pinned;
    const char *src;
    char *dst;
    size_t d2h_off, d2h_len, h2d_off, h2d_len;
    size_t self_len;      /* self: bytes copied src -> dst */
    struct kyi_hplan *hp; /* staged persistent plans across nodes: the host part in hierarchical stages */
    cudaStream_t last;
    int started;
};

int kyi_gcoll_is_gpu(const void *p)
{
    return p && p != KY_IN_PLACE && kyi_gpu_ptr_device(p) >= 0;
}

static int dev_of(const void *a, const void *b)
{
    int d = (a && a != KY_IN_PLACE) ? kyi_gpu_ptr_device(a) : -1;
    return d >= 0 ? d : ((b && b != KY_IN_PLACE) ? kyi_gpu_ptr_device(b) : -1);
}

int kyi_gcoll_path(const char *call, struct kyi_team *t, int *path)
{
    struct kyi_gteam *g;
    int dev = kyi_my_device();
    KYI_CHECK(kyi_gteam_get(call, t, dev >= 0 ? dev : 0, &g));
    *path = t->size == 1 ? PATH_SELF : g->path;
    return KY_OK;
}

static struct kyi_gplan *gnew(struct kyi_coll_plan *pl, int dev, int *st)
{
    struct kyi_gteam *g;
    *st = kyi_gteam_get(pl->call, pl->team, dev, &g);
    if (*st) return NULL;
    struct kyi_gplan *gp = calloc(1, sizeof *gp);
    if (!gp) {
        *st = kyi_fail(KY_ERR_NOMEM, pl->call, "no memory");
        return NULL;
    }
    gp->dev = dev;
    gp->gt = g;
    gp->path = pl->team->size == 1 ? PATH_SELF : g->path;
    pl->gpu = gp;
    return gp;
}

/* The NVLink context for a launch of `kind`: the plan's own, or the team's grown to fit. */
static int nvl_for(struct kyi_coll_plan *pl, struct kyi_gplan *gp, int kind, size_t bytes, int persistent)
{
    size_t need = kyi_nvl_scratch(kind, bytes, pl->team->size);
    if (persistent) {
        KYI_CHECK(kyi_nvl_create(pl->team, gp->dev, need, &gp->nvl, pl->call));
        if (!gp->nvl) return kyi_fail(KY_ERR_CUDA, pl->call, "could not set up the plan's NVLink buffers");
        gp->own_nvl = 1;
        gp->args.end = kind == KYI_NVL_TWOSHOT;
    } else {
        struct kyi_gteam *g = gp->gt;
        if (g->nvl->scratch < need) {
            /* every member grows at the same call (same sizes everywhere) */
            size_t grow = g->nvl->scratch * 2 > need ? g->nvl->scratch * 2 : need;
            if (cudaStreamSynchronize(g->stream) != cudaSuccess) (void)cudaGetLastError();
            kyi_nvl_destroy(g->nvl, pl->call);
            g->nvl = NULL;
            KYI_CHECK(kyi_nvl_create(pl->team, gp->dev, grow, &g->nvl, pl->call));
            if (!g->nvl)
                kyi_fatal("%s: could not grow the team's NVLink buffers to %zu bytes", pl->call, grow);
        }
        gp->nvl = g->nvl;
        gp->args.end = 1; /* sizes vary between calls: close every kernel with a barrier (nvl.h) */
    }
    kyi_nvl_args_t *a = &gp->args;
    for (int j = 0; j < pl->team->size; j++) a->buf[j] = gp->nvl->buf[j];
    a->kind = kind;
    a->bytes = bytes;
    a->p = pl->team->size;
    a->me = pl->team->rank;
    a->dtype = pl->dtype;
    a->op = pl->op;
    a->timeout_ns = kyi_gx_timeout_ns();
    a->err = kyi_gx_err_word();
    kyi_nvl_shape(a);
    return KY_OK;
}

/* Staging buffer of `bytes`: the plan's own or the team's grown to fit. */
static int pinned_for(struct kyi_coll_plan *pl, struct kyi_gplan *gp, size_t bytes, int persistent)
{
    if (persistent) {
        void *p = NULL;
        int st = kyi_gpu_host_alloc(bytes ? bytes : 1, &p);
        if (st) return kyi_fail(st, pl->call, "no pinned host memory for %zu bytes of staging", bytes);
        gp->pinned = p;
        gp->own_pinned = 1;
        return KY_OK;
    }
    struct kyi_gteam *g = gp->gt;
    if (g->pinned_bytes < bytes || !g->pinned) {
        if (g->pinned) kyi_gpu_host_free(g->pinned);
        g->pinned = NULL;
        g->pinned_bytes = 0;
        void *p = NULL;
        int st = kyi_gpu_host_alloc(bytes ? bytes : 1, &p);
        if (st) return kyi_fail(st, pl->call, "no pinned host memory for %zu bytes of staging", bytes);
        g->pinned = p;
        g->pinned_bytes = bytes;
    }
    gp->pinned = g->pinned;
    return KY_OK;
}

/* The host plan of the staged path over the pinned buffer; pl's schedule was built by the caller into
 * gp->host.sched. */
static int host_part(struct kyi_coll_plan *pl, struct kyi_gplan *gp)
{
    gp->host.team = pl->team;
    gp->host.call = pl->call;
    gp->host.dtype = pl->dtype;
    gp->host.op = pl->op;
    gp->host.buf[KYI_B_R] = gp->pinned;
    return kyi_plan_scratch(&gp->host);
}

/* A persistent staged plan of a team on several nodes (no algorithm forced): its host part in hierarchical
 * stages (hier.c) over the pinned buffer, in place. *yes 0: the caller builds the flat schedule. */
static int host_hier(struct kyi_coll_plan *pl, struct kyi_gplan *gp, int allgather, size_t n, int *yes)
{
    *yes = 0;
    if (kyi_coll_forced(allgather ? KY_COLL_ALLGATHER : KY_COLL_ALLREDUCE) != KY_ALGO_AUTO) return KY_OK;
    int hier;
    KYI_CHECK(kyi_hier_usable(pl->call, pl->team, &hier));
    if (!hier) return KY_OK;
    if (allgather)
        KYI_CHECK(kyi_hplan_allgather(pl->call, pl->team, NULL, n, gp->pinned, &gp->hp));
    else
        KYI_CHECK(kyi_hplan_allreduce(pl->call, pl->team, NULL, gp->pinned, n, pl->dtype, pl->op, &gp->hp));
    if (gp->hp) pl->algo = kyi_hplan_algo(gp->hp);
    *yes = gp->hp != NULL;
    return KY_OK;
}

int kyi_gcoll_allreduce(struct kyi_coll_plan *pl, const void *s, void *r, size_t n, int in_place, int root,
                        int persistent)
{
    int st;
    struct kyi_team *t = pl->team;
    struct kyi_gplan *gp = gnew(pl, dev_of(in_place ? r : s, r), &st);
    if (!gp) return st;
    size_t es = kyi_dtype_size(pl->dtype), bytes = n * es;
    int is_root = root < 0 || t->rank == root;
    gp->src = in_place ? r : s;
    gp->dst = is_root ? r : NULL;
    gp->self_len = bytes;
    if (n == 0) {
        gp->path = 0;
        return KY_OK;
    }
    if (gp->path == PATH_SELF) return KY_OK;
    if (gp->path == KYI_GPATH_NVL && (pl->algo == KY_ALGO_ONESHOT || pl->algo == KY_ALGO_TWOSHOT)) {
        KYI_CHECK(nvl_for(pl, gp, pl->algo == KY_ALGO_ONESHOT ? KYI_NVL_ONESHOT : KYI_NVL_TWOSHOT, bytes,
                          persistent));
        gp->args.src = gp->src;
        gp->args.dst = gp->dst;
        return KY_OK;
    }
    gp->path = KYI_GPATH_STAGED;
    KYI_CHECK(pinned_for(pl, gp, bytes, persistent));
    gp->d2h_len = bytes;
    gp->h2d_len = is_root ? bytes : 0;
    int hier = 0;
    if (persistent && root < 0) KYI_CHECK(host_hier(pl, gp, 0, n, &hier));
    if (hier) return KY_OK;
    if (root < 0)
        pl->algo = kyi_sched_allreduce(&gp->host.sched, pl->algo, t->size, t->rank, n, es, 1);
    else
        kyi_sched_reduce_tree(&gp->host.sched, t->size, t->rank, root, KYI_B_R, bytes);
    return host_part(pl, gp);
}

int kyi_gcoll_allgather(struct kyi_coll_plan *pl, const void *s, size_t b, void *r, int in_place,
                        int persistent)
{
    int st;
    struct kyi_team *t = pl->team;
    struct kyi_gplan *gp = gnew(pl, dev_of(s, r), &st);
    if (!gp) return st;
    gp->src = in_place ? (char *)r + (size_t)t->rank * b : s;
    gp->dst = r;
    gp->self_len = b;
    if (b == 0) {
        gp->path = 0;
        return KY_OK;
    }
    if (gp->path == PATH_SELF) return KY_OK;
    if (gp->path == KYI_GPATH_NVL && pl->algo == KY_ALGO_ONESHOT) {
        KYI_CHECK(nvl_for(pl, gp, KYI_NVL_ALLGATHER, b, persistent));
        gp->args.src = gp->src;
        gp->args.dst = gp->dst;
        return KY_OK;
    }
    gp->path = KYI_GPATH_STAGED;
    size_t all = b * (size_t)t->size;
    KYI_CHECK(pinned_for(pl, gp, all, persistent));
    gp->d2h_off = (size_t)t->rank * b;
    gp->d2h_len = b;
    gp->h2d_len = all;
    int hier = 0;
    if (persistent) KYI_CHECK(host_hier(pl, gp, 1, b, &hier));
    if (hier) return KY_OK;
    pl->algo =
        kyi_sched_allgather(&gp->host.sched, pl->algo, t->size, t->rank, b, KYI_B_R, gp->d2h_off, KYI_B_R, 0);
    return host_part(pl, gp);
}

int kyi_gcoll_bcast(struct kyi_coll_plan *pl, void *buf, size_t bytes, int root)
{
    int st;
    struct kyi_team *t = pl->team;
    struct kyi_gplan *gp = gnew(pl, dev_of(buf, NULL), &st);
    if (!gp) return st;
    int me_root = t->rank == root;
    gp->src = buf;
    gp->dst = me_root ? NULL : buf;
    if (bytes == 0 || gp->path == PATH_SELF) {
        gp->path = 0;
        return KY_OK;
    }
    if (gp->path == KYI_GPATH_NVL) {
        KYI_CHECK(nvl_for(pl, gp, KYI_NVL_BCAST, bytes, 0));
        gp->args.src = gp->src;
        gp->args.dst = gp->dst;
        gp->args.root = root;
        return KY_OK;
    }
    KYI_CHECK(pinned_for(pl, gp, bytes, 0));
    gp->d2h_len = me_root ? bytes : 0;
    gp->h2d_len = me_root ? 0 : bytes;
    kyi_sched_bcast(&gp->host.sched, t->size, t->rank, root, KYI_B_R, bytes);
    return host_part(pl, gp);
}

static int staged_run(struct kyi_coll_plan *pl, struct kyi_gplan *gp, cudaStream_t s)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &cs) == cudaSuccess && cs != cudaStreamCaptureStatusNone)
        return kyi_fail(
            KY_ERR_UNSUPPORTED, pl->call,
            "this GPU collective stages through host memory (no NVLink path for the team) and cannot "
            "be captured in a CUDA graph");
    cudaError_t e;
    if (gp->d2h_len) {
        e = cudaMemcpyAsync(gp->pinned + gp->d2h_off, gp->src, gp->d2h_len, cudaMemcpyDefault, s);
        if (e != cudaSuccess) return kyi_gx_cuda(e, pl->call, "cudaMemcpyAsync to the staging buffer");
    }
    e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return kyi_gx_cuda(e, pl->call, "cudaStreamSynchronize before staging");
    if (gp->hp) {
        KYI_CHECK(kyi_hplan_start(gp->hp));
        KYI_CHECK(kyi_hplan_wait(gp->hp));
    } else {
        KYI_CHECK(kyi_plan_start(&gp->host));
        KYI_CHECK(kyi_plan_wait(&gp->host));
    }
    if (gp->h2d_len) {
        e = cudaMemcpyAsync(gp->dst + gp->h2d_off, gp->pinned + gp->h2d_off, gp->h2d_len, cudaMemcpyDefault,
                            s);
        if (e != cudaSuccess) return kyi_gx_cuda(e, pl->call, "cudaMemcpyAsync from the staging buffer");
    }
    return KY_OK;
}

int kyi_gcoll_start(struct kyi_coll_plan *pl, void *stream)
{
    struct kyi_gplan *gp = pl->gpu;
    cudaStream_t s = stream ? (cudaStream_t)stream : gp->gt->stream;
    int prev;
    KYI_CHECK(kyi_gx_dev_enter(gp->dev, &prev, pl->call));
    int st = KY_OK;
    switch (gp->path) {
        case 0:
            break; /* nothing to move */
        case PATH_SELF:
            if (gp->dst && gp->dst != gp->src) {
                cudaError_t e = cudaMemcpyAsync(gp->dst, gp->src, gp->self_len, cudaMemcpyDefault, s);
                if (e != cudaSuccess) st = kyi_gx_cuda(e, pl->call, "cudaMemcpyAsync");
            }
            break;
        case KYI_GPATH_NVL:
            st = kyi_nvl_launch(&gp->args, s, pl->call);
            break;
        default:
            st = staged_run(pl, gp, s);
            break;
    }
    kyi_gx_dev_leave(prev);
    gp->last = s;
    gp->started = st == KY_OK;
    return st;
}

int kyi_gcoll_wait(struct kyi_coll_plan *pl)
{
    struct kyi_gplan *gp = pl->gpu;
    if (!gp->started) return KY_OK;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(gp->last, &cs) == cudaSuccess && cs != cudaStreamCaptureStatusNone)
        return KY_OK;
    (void)cudaGetLastError();
    gp->started = 0;
    int prev;
    KYI_CHECK(kyi_gx_dev_enter(gp->dev, &prev, pl->call));
    cudaError_t e = cudaStreamSynchronize(gp->last);
    kyi_gx_dev_leave(prev);
    if (e != cudaSuccess) return kyi_gx_cuda(e, pl->call, "cudaStreamSynchronize");
    return KY_OK;
}

int kyi_gcoll_release(struct kyi_coll_plan *pl)
{
    struct kyi_gplan *gp = pl->gpu;
    if (!gp) return KY_OK;
    if (gp->started) kyi_gcoll_wait(pl);
    pl->gpu = NULL;
    if (gp->own_nvl) kyi_nvl_destroy(gp->nvl, pl->call);
    if (gp->own_pinned) kyi_gpu_host_free(gp->pinned);
    kyi_hplan_free(gp->hp);
    kyi_plan_release(&gp->host);
    free(gp);
    return KY_OK;
}
