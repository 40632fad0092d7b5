/* The public collectives: argument checks (and, with KY_CHECK=1, their agreement across the team),
 * algorithm choice, then a schedule run at once (blocking calls) or kept in a plan (ky_*_init). */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/gpu/gcoll.h"
#include "coll/hier.h"
#include "coll/shm.h"
#include "runtime/trace.h"

enum { K_ALLREDUCE = 1, K_ALLGATHER, K_BCAST, K_REDUCE, K_BARRIER, K_ALLREDUCE_PLAN, K_ALLGATHER_PLAN };

static int team_of(const char *call, ky_team_t team, struct kyi_team **t)
{
    KYI_CHECK(kyi_require_init(call));
    *t = kyi_team_get(call, team);
    return *t ? KY_OK : KY_ERR_ARG;
}

/* *gpu = 1 when the buffers are GPU memory (then gpu/gcoll.c runs the collective); one of each kind is an
 * error. Every member must pass the same kind (KY_CHECK=1 verifies). */
static int memkind(const char *call, const void *a, const void *b, int *gpu)
{
    int ga = kyi_gcoll_is_gpu(a), gb = kyi_gcoll_is_gpu(b);
    int ha = a && a != KY_IN_PLACE && !ga, hb = b && b != KY_IN_PLACE && !gb;
    *gpu = ga || gb;
    if (*gpu && (ha || hb))
        return kyi_fail(KY_ERR_ARG, call,
                        "one buffer is GPU memory and the other host memory: pass two of one kind");
    return KY_OK;
}

/* The signature's "collective" field also carries the memory kind, so KY_CHECK catches a member passing
 * host buffers where the others pass GPU buffers. */
#define SIG_KIND(kind, gpu) ((int64_t)(kind) + 16 * (int64_t)(gpu))

/* Local problems were recorded (kyi_fail) into *bad as a status. Without KY_CHECK the caller returns it
 * (the other members are not told); with it every member learns and returns an error. */
static int agree(const char *call, struct kyi_team *t, int bad, int64_t kind, int64_t count, int64_t dtype,
                 int64_t op, int64_t root, int64_t algo)
{
    if (!kyi_check_enabled()) return bad;
    int64_t sig[KYI_CK_N] = {kind, count, dtype, op, root, algo, bad ? 1 : 0};
    int st = kyi_check_agree(call, t, sig);
    return bad ? bad : st;
}

/* Whether a host collective of `kind` (-1: bcast, reduce, barrier: no forced algorithm) takes the team's
 * shared-memory segment: when the team can (shm.c: one node, KY_COLL_SHM) and no MPI algorithm is forced. */
static int use_shm(const char *call, struct kyi_team *t, int kind, int *yes)
{
    *yes = 0;
    if (kind >= 0) {
        int a = kyi_coll_forced((ky_coll_kind_t)kind);
        if (a != KY_ALGO_AUTO && a != KY_ALGO_SHM && a != KY_ALGO_ONESHOT && a != KY_ALGO_TWOSHOT)
            return KY_OK;
    }
    return kyi_shm_usable(call, t, yes);
}

void kyi_shm_op(struct kyi_coll_plan *pl, int kind, const void *s, void *r, size_t n, int root)
{
    pl->shm_kind = kind;
    pl->shm_s = s;
    pl->shm_r = r;
    pl->shm_n = n;
    pl->shm_root = root;
    pl->algo = KY_ALGO_SHM;
}

/* Whether a blocking collective of kind k takes the hierarchical stages (hier.c: a team on several nodes,
 * no algorithm forced). If so pl carries its buffers (s NULL: in place) and ky_allreduce / ky_allgather /
 * the GPU path run it instead of a schedule. */
static int hier_op(const char *call, struct kyi_team *t, ky_coll_kind_t k, const void *s, void *r, size_t n,
                   struct kyi_coll_plan *pl, int *yes)
{
    *yes = 0;
    if (kyi_coll_forced(k) != KY_ALGO_AUTO) return KY_OK;
    KYI_CHECK(kyi_hier_usable(call, t, yes));
    if (*yes) {
        pl->hier = 1;
        pl->shm_s = s;
        pl->shm_r = r;
        pl->shm_n = n;
    }
    return KY_OK;
}

/* Run a plan built on the stack, then release it. GPU: on the team's blocking stream, returning when done. */
static int run_now(struct kyi_coll_plan *pl)
{
    if (pl->gpu) {
        int st = kyi_gcoll_start(pl, NULL);
        if (!st) st = kyi_gcoll_wait(pl);
        kyi_gcoll_release(pl);
        return st;
    }
    int st = kyi_plan_scratch(pl);
    if (!st) st = kyi_plan_start(pl);
    if (!st) st = kyi_plan_wait(pl);
    kyi_plan_release(pl);
    return st;
}

static int check_reduce_args(const char *call, const void *s, void *r, size_t n, ky_dtype_t t, ky_op_t op,
                             int need_r, int *gpu)
{
    *gpu = 0;
    if (KYI_SIZE_LOOKS_NEGATIVE(n)) return kyi_fail(KY_ERR_ARG, call, "count %zu looks negative", n);
    if (!kyi_dtype_size(t)) return kyi_fail(KY_ERR_ARG, call, "data type %d is not a ky_dtype_t", (int)t);
    if ((int)op < 0 || op >= KY_OP_COUNT)
        return kyi_fail(KY_ERR_ARG, call, "operation %d is not a ky_op_t", (int)op);
    if (n && !s) return kyi_fail(KY_ERR_ARG, call, "send buffer is NULL (use KY_IN_PLACE for in place)");
    if (n && need_r && !r) return kyi_fail(KY_ERR_ARG, call, "receive buffer is NULL");
    return memkind(call, s, r, gpu);
}

/* A GPU part that failed to build is released here (its NVLink context, if any, is not made yet). */
static int gpu_built(struct kyi_coll_plan *pl, int st)
{
    if (st) kyi_gcoll_release(pl);
    return st;
}

/* ---- allreduce ------------------------------------------------------------------------------------------
 */

static int allreduce_setup(const char *call, int kind, const void *s, void *r, size_t n, ky_dtype_t t,
                           ky_op_t op, ky_team_t team, struct kyi_coll_plan *pl)
{
    struct kyi_team *tm;
    KYI_CHECK(team_of(call, team, &tm));
    int gpu;
    int bad = check_reduce_args(call, s, r, n, t, op, 1, &gpu);
    if (bad && !kyi_check_enabled()) return bad;
    size_t es = kyi_dtype_size(t);
    KYI_CHECK(
        agree(call, tm, bad, SIG_KIND(kind, gpu), (int64_t)n, t, op, -1, kyi_coll_forced(KY_COLL_ALLREDUCE)));
    memset(pl, 0, sizeof *pl);
    pl->team = tm;
    pl->call = call;
    pl->dtype = t;
    pl->op = op;
    int in_place = s == KY_IN_PLACE || s == r;
    if (gpu) {
        int path;
        KYI_CHECK(kyi_gcoll_path(call, tm, &path));
        if (path != KYI_GPATH_NVL && kind == K_ALLREDUCE) {
            /* across nodes: NVLink inside each node, staged across the leaders only (hier.c) */
            int hier;
            KYI_CHECK(hier_op(call, tm, KY_COLL_ALLREDUCE, in_place ? NULL : s, r, n, pl, &hier));
            if (hier) return KY_OK;
        }
        pl->algo = kyi_coll_algo_gpu(KY_COLL_ALLREDUCE, tm->size, n * es, path == KYI_GPATH_NVL);
        return gpu_built(pl, kyi_gcoll_allreduce(pl, s, r, n, in_place, -1, kind == K_ALLREDUCE_PLAN));
    }
    int shm;
    KYI_CHECK(use_shm(call, tm, KY_COLL_ALLREDUCE, &shm));
    if (shm) {
        kyi_shm_op(pl, KYI_SHM_ALLREDUCE, in_place ? NULL : s, r, n, -1);
        return KY_OK;
    }
    int hier;
    KYI_CHECK(hier_op(call, tm, KY_COLL_ALLREDUCE, in_place ? NULL : s, r, n, pl, &hier));
    if (hier && kind == K_ALLREDUCE) return KY_OK;
    if (hier) { /* a plan: the stages built once, or a flat plan where some member cannot */
        pl->hier = 0;
        KYI_CHECK(kyi_hplan_allreduce(call, tm, in_place ? NULL : s, r, n, t, op, &pl->hp));
        if (pl->hp) {
            pl->algo = kyi_hplan_algo(pl->hp);
            return KY_OK;
        }
    }
    int algo = kyi_coll_algo(KY_COLL_ALLREDUCE, tm->size, n * es);
    pl->buf[KYI_B_S] = in_place ? NULL : (void *)s;
    pl->buf[KYI_B_R] = r;
    pl->algo = kyi_sched_allreduce(&pl->sched, algo, tm->size, tm->rank, n, es, in_place);
    return KY_OK;
}

static int allreduce_now(const void *s, void *r, size_t n, ky_dtype_t t, ky_op_t op, ky_team_t team)
{
    struct kyi_coll_plan pl;
    KYI_CHECK(allreduce_setup("ky_allreduce", K_ALLREDUCE, s, r, n, t, op, team, &pl));
    if (pl.hier) return kyi_hier_allreduce(pl.team, pl.shm_s, pl.shm_r, pl.shm_n, t, op);
    return run_now(&pl);
}

/* ---- allgather ------------------------------------------------------------------------------------------
 */

static int allgather_setup(const char *call, int kind, const void *s, size_t b, void *r, ky_team_t team,
                           struct kyi_coll_plan *pl)
{
    struct kyi_team *tm;
    KYI_CHECK(team_of(call, team, &tm));
    int bad = KY_OK, gpu = 0;
    if (KYI_SIZE_LOOKS_NEGATIVE(b) || KYI_SIZE_LOOKS_NEGATIVE(b * (size_t)tm->size))
        bad = kyi_fail(KY_ERR_ARG, call, "bytes_each %zu looks negative", b);
    else if (b && !s)
        bad = kyi_fail(KY_ERR_ARG, call, "send buffer is NULL (use KY_IN_PLACE for in place)");
    else if (b && !r)
        bad = kyi_fail(KY_ERR_ARG, call, "receive buffer is NULL");
    else
        bad = memkind(call, s, r, &gpu);
    if (bad && !kyi_check_enabled()) return bad;
    KYI_CHECK(agree(call, tm, bad, SIG_KIND(kind, gpu), (int64_t)b, -1, -1, -1,
                    kyi_coll_forced(KY_COLL_ALLGATHER)));
    memset(pl, 0, sizeof *pl);
    pl->team = tm;
    pl->call = call;
    pl->dtype = KY_INT32; /* unused: allgather never reduces */
    int in_place = s == KY_IN_PLACE;
    if (gpu) {
        int path;
        KYI_CHECK(kyi_gcoll_path(call, tm, &path));
        if (path != KYI_GPATH_NVL && kind == K_ALLGATHER) {
            /* across nodes: NVLink inside each node, staged across the leaders only (hier.c) */
            int hier;
            KYI_CHECK(hier_op(call, tm, KY_COLL_ALLGATHER, in_place ? NULL : s, r, b, pl, &hier));
            if (hier) {
                pl->gpu_hier = 1;
                return KY_OK;
            }
        }
        pl->algo = kyi_coll_algo_gpu(KY_COLL_ALLGATHER, tm->size, b, path == KYI_GPATH_NVL);
        return gpu_built(pl, kyi_gcoll_allgather(pl, s, b, r, in_place, kind == K_ALLGATHER_PLAN));
    }
    int shm;
    KYI_CHECK(use_shm(call, tm, KY_COLL_ALLGATHER, &shm));
    if (shm) {
        kyi_shm_op(pl, KYI_SHM_ALLGATHER, in_place ? NULL : s, r, b, -1);
        return KY_OK;
    }
    int hier;
    KYI_CHECK(hier_op(call, tm, KY_COLL_ALLGATHER, in_place ? NULL : s, r, b, pl, &hier));
    if (hier && kind == K_ALLGATHER) return KY_OK;
    if (hier) { /* a plan: as for allreduce */
        pl->hier = 0;
        KYI_CHECK(kyi_hplan_allgather(call, tm, in_place ? NULL : s, b, r, &pl->hp));
        if (pl->hp) {
            pl->algo = kyi_hplan_algo(pl->hp);
            return KY_OK;
        }
    }
    int algo = kyi_coll_algo(KY_COLL_ALLGATHER, tm->size, b);
    pl->buf[KYI_B_S] = in_place ? NULL : (void *)s;
    pl->buf[KYI_B_R] = r;
    int sb = in_place ? KYI_B_R : KYI_B_S;
    size_t so = in_place ? (size_t)tm->rank * b : 0;
    pl->algo = kyi_sched_allgather(&pl->sched, algo, tm->size, tm->rank, b, sb, so, KYI_B_R, 0);
    return KY_OK;
}

static int allgather_now(const void *s, size_t bytes_each, void *r, ky_team_t team)
{
    struct kyi_coll_plan pl;
    KYI_CHECK(allgather_setup("ky_allgather", K_ALLGATHER, s, bytes_each, r, team, &pl));
    if (pl.hier) return kyi_hier_allgather(pl.team, pl.shm_s, pl.shm_n, pl.shm_r, pl.gpu_hier);
    return run_now(&pl);
}

/* ---- bcast, reduce, barrier -----------------------------------------------------------------------------
 */

static int bcast_now(void *buf, size_t bytes, int root, ky_team_t team)
{
    static const char *call = "ky_bcast";
    struct kyi_team *tm;
    KYI_CHECK(team_of(call, team, &tm));
    int bad = KY_OK, gpu = 0;
    if (KYI_SIZE_LOOKS_NEGATIVE(bytes))
        bad = kyi_fail(KY_ERR_ARG, call, "bytes %zu looks negative", bytes);
    else if (root < 0 || root >= tm->size)
        bad = kyi_fail(KY_ERR_ARG, call, "root %d outside the team (size %d)", root, tm->size);
    else if (bytes && !buf)
        bad = kyi_fail(KY_ERR_ARG, call, "buffer is NULL");
    else
        bad = memkind(call, buf, NULL, &gpu);
    if (bad && !kyi_check_enabled()) return bad;
    KYI_CHECK(agree(call, tm, bad, SIG_KIND(K_BCAST, gpu), (int64_t)bytes, -1, -1, root, -1));
    struct kyi_coll_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.team = tm;
    pl.call = call;
    if (gpu) {
        int path, hier = 0;
        KYI_CHECK(kyi_gcoll_path(call, tm, &path));
        if (path != KYI_GPATH_NVL) KYI_CHECK(kyi_hier_usable(call, tm, &hier));
        if (hier) return kyi_hier_bcast(tm, buf, bytes, root); /* NVLink inside nodes, staged across */
        KYI_CHECK(gpu_built(&pl, kyi_gcoll_bcast(&pl, buf, bytes, root)));
        return run_now(&pl);
    }
    int shm, hier;
    KYI_CHECK(use_shm(call, tm, -1, &shm));
    if (shm) {
        kyi_shm_op(&pl, KYI_SHM_BCAST, NULL, buf, bytes, root);
        return run_now(&pl);
    }
    KYI_CHECK(kyi_hier_usable(call, tm, &hier));
    if (hier) return kyi_hier_bcast(tm, buf, bytes, root);
    pl.buf[KYI_B_R] = buf;
    kyi_sched_bcast(&pl.sched, tm->size, tm->rank, root, KYI_B_R, bytes);
    return run_now(&pl);
}

static int reduce_now(const void *s, void *r, size_t n, ky_dtype_t t, ky_op_t op, int root, ky_team_t team)
{
    static const char *call = "ky_reduce";
    struct kyi_team *tm;
    KYI_CHECK(team_of(call, team, &tm));
    int bad = KY_OK, gpu = 0;
    if (root < 0 || root >= tm->size)
        bad = kyi_fail(KY_ERR_ARG, call, "root %d outside the team (size %d)", root, tm->size);
    else if (s == KY_IN_PLACE && tm->rank != root)
        bad = kyi_fail(KY_ERR_ARG, call, "KY_IN_PLACE is only for the root (this is team rank %d)", tm->rank);
    else
        bad = check_reduce_args(call, s, r, n, t, op, tm->rank == root, &gpu);
    if (bad && !kyi_check_enabled()) return bad;
    KYI_CHECK(agree(call, tm, bad, SIG_KIND(K_REDUCE, gpu), (int64_t)n, t, op, root, -1));
    size_t es = kyi_dtype_size(t), bytes = n * es;
    struct kyi_coll_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.team = tm;
    pl.call = call;
    pl.dtype = t;
    pl.op = op;
    int in_place = s == KY_IN_PLACE || s == r;
    if (gpu) {
        int path, hier = 0;
        KYI_CHECK(kyi_gcoll_path(call, tm, &path));
        if (path != KYI_GPATH_NVL) KYI_CHECK(hier_op(call, tm, KY_COLL_ALLREDUCE, NULL, NULL, 0, &pl, &hier));
        if (hier) /* NVLink inside nodes, staged across the leaders */
            return kyi_hier_reduce(tm, in_place ? NULL : s, tm->rank == root ? r : NULL, n, t, op, root, 1);
        pl.algo = kyi_coll_algo_gpu(KY_COLL_ALLREDUCE, tm->size, bytes, path == KYI_GPATH_NVL);
        KYI_CHECK(gpu_built(&pl, kyi_gcoll_allreduce(&pl, s, r, n, in_place, root, 0)));
        return run_now(&pl);
    }
    int shm, hier;
    KYI_CHECK(use_shm(call, tm, -1, &shm));
    if (shm) {
        kyi_shm_op(&pl, KYI_SHM_REDUCE, in_place ? NULL : s, tm->rank == root ? r : NULL, n, root);
        return run_now(&pl);
    }
    KYI_CHECK(hier_op(call, tm, KY_COLL_ALLREDUCE, NULL, NULL, 0, &pl, &hier));
    if (hier) return kyi_hier_reduce(tm, in_place ? NULL : s, tm->rank == root ? r : NULL, n, t, op, root, 0);
    pl.buf[KYI_B_S] = in_place ? NULL : (void *)s;
    pl.buf[KYI_B_R] = r;
    /* The root accumulates in r; the others in scratch U (r is not theirs to write). */
    int acc = tm->rank == root ? KYI_B_R : KYI_B_U;
    if (!in_place) kyi_sched_copy(&pl.sched, KYI_B_S, 0, acc, 0, bytes);
    kyi_sched_need(&pl.sched, acc, bytes);
    if (n) kyi_sched_reduce_tree(&pl.sched, tm->size, tm->rank, root, acc, bytes);
    return run_now(&pl);
}

static int team_barrier_now(ky_team_t team)
{
    static const char *call = "ky_team_barrier";
    struct kyi_team *tm;
    KYI_CHECK(team_of(call, team, &tm));
    KYI_CHECK(agree(call, tm, KY_OK, K_BARRIER, 0, -1, -1, -1, -1));
    struct kyi_coll_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.team = tm;
    pl.call = call;
    int shm, hier;
    KYI_CHECK(use_shm(call, tm, -1, &shm));
    if (shm) {
        kyi_shm_op(&pl, KYI_SHM_BARRIER, NULL, NULL, 0, -1);
        return run_now(&pl);
    }
    KYI_CHECK(kyi_hier_usable(call, tm, &hier));
    if (hier) return kyi_hier_barrier(tm);
    kyi_sched_barrier(&pl.sched, tm->size, tm->rank);
    return run_now(&pl);
}

/* ---- persistent plans -----------------------------------------------------------------------------------
 */

static int plan_finish(struct kyi_coll_plan *pl, ky_coll_plan_t *out)
{
    int st = kyi_plan_scratch(pl);
    if (st) {
        kyi_plan_release(pl);
        free(pl);
        return st;
    }
    *out = pl;
    return KY_OK;
}

int ky_allreduce_init(const void *s, void *r, size_t n, ky_dtype_t t, ky_op_t op, ky_team_t team,
                      ky_coll_plan_t *plan)
{
    static const char *call = "ky_allreduce_init";
    if (!plan) return kyi_fail(KY_ERR_ARG, call, "plan is NULL");
    *plan = NULL;
    struct kyi_coll_plan *pl = malloc(sizeof *pl);
    if (!pl) return kyi_fail(KY_ERR_NOMEM, call, "no memory");
    int st = allreduce_setup(call, K_ALLREDUCE_PLAN, s, r, n, t, op, team, pl);
    if (st) {
        free(pl);
        return st;
    }
    pl->call = "ky_coll_start (allreduce plan)";
    return plan_finish(pl, plan);
}

int ky_allgather_init(const void *s, size_t bytes_each, void *r, ky_team_t team, ky_coll_plan_t *plan)
{
    static const char *call = "ky_allgather_init";
    if (!plan) return kyi_fail(KY_ERR_ARG, call, "plan is NULL");
    *plan = NULL;
    struct kyi_coll_plan *pl = malloc(sizeof *pl);
    if (!pl) return kyi_fail(KY_ERR_NOMEM, call, "no memory");
    int st = allgather_setup(call, K_ALLGATHER_PLAN, s, bytes_each, r, team, pl);
    if (st) {
        free(pl);
        return st;
    }
    pl->call = "ky_coll_start (allgather plan)";
    return plan_finish(pl, plan);
}

static int coll_start_now(ky_coll_plan_t plan, void *stream)
{
    static const char *call = "ky_coll_start";
    KYI_CHECK(kyi_require_init(call));
    if (!plan) return kyi_fail(KY_ERR_ARG, call, "plan is NULL");
    if (plan->gpu) return kyi_gcoll_start(plan, stream);
    if (stream) return kyi_fail(KY_ERR_ARG, call, "stream must be NULL for a plan on host buffers");
    if (plan->hp) return kyi_hplan_start(plan->hp);
    return kyi_plan_start(plan);
}

static int coll_wait_now(ky_coll_plan_t plan)
{
    KYI_CHECK(kyi_require_init("ky_coll_wait"));
    if (!plan) return kyi_fail(KY_ERR_ARG, "ky_coll_wait", "plan is NULL");
    if (plan->gpu) return kyi_gcoll_wait(plan);
    if (plan->hp) return kyi_hplan_wait(plan->hp);
    return kyi_plan_wait(plan);
}

int ky_coll_plan_algo(ky_coll_plan_t plan, ky_coll_algo_t *algo)
{
    if (!plan || !algo) return kyi_fail(KY_ERR_ARG, "ky_coll_plan_algo", "plan or algo is NULL");
    *algo = (ky_coll_algo_t)plan->algo;
    return KY_OK;
}

int ky_coll_free(ky_coll_plan_t plan)
{
    if (!plan) return KY_OK;
    if (plan->active == 1 || kyi_hplan_active(plan->hp))
        return kyi_fail(KY_ERR_STATE, "ky_coll_free", "the plan is in flight: ky_coll_wait first");
    plan->call = "ky_coll_free";
    kyi_hplan_free(plan->hp);
    kyi_gcoll_release(plan);
    kyi_plan_release(plan);
    free(plan);
    return KY_OK;
}

/* ---- KY_TRACE: every public collective as a span on the calling thread's track ------------------------ */

int ky_allreduce(const void *s, void *r, size_t n, ky_dtype_t t, ky_op_t op, ky_team_t team)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = allreduce_now(s, r, n, t, op, team);
    KYI_TRACE_SPAN("coll", "ky_allreduce", t0, (int64_t)n, -1);
    return st;
}

int ky_allgather(const void *s, size_t bytes_each, void *r, ky_team_t team)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = allgather_now(s, bytes_each, r, team);
    KYI_TRACE_SPAN("coll", "ky_allgather", t0, (int64_t)bytes_each, -1);
    return st;
}

int ky_bcast(void *buf, size_t bytes, int root, ky_team_t team)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = bcast_now(buf, bytes, root, team);
    KYI_TRACE_SPAN("coll", "ky_bcast", t0, (int64_t)bytes, -1);
    return st;
}

int ky_reduce(const void *s, void *r, size_t n, ky_dtype_t t, ky_op_t op, int root, ky_team_t team)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = reduce_now(s, r, n, t, op, root, team);
    KYI_TRACE_SPAN("coll", "ky_reduce", t0, (int64_t)n, -1);
    return st;
}

int ky_team_barrier(ky_team_t team)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = team_barrier_now(team);
    KYI_TRACE_SPAN("coll", "ky_team_barrier", t0, -1, -1);
    return st;
}

int ky_coll_start(ky_coll_plan_t plan, void *stream)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = coll_start_now(plan, stream);
    KYI_TRACE_SPAN("coll", "ky_coll_start", t0, -1, -1);
    return st;
}

int ky_coll_wait(ky_coll_plan_t plan)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = coll_wait_now(plan);
    KYI_TRACE_SPAN("coll", "ky_coll_wait", t0, -1, -1);
    return st;
}
