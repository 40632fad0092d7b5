/* Halo exchange. Planned at the first call: for every local block and every direction in {-1,0,1}^ndim
 * (faces, edges, corners) that has a neighbour part, one strided put of the block's boundary cells into
 * the neighbour's halo. Every later call replays the list; the comm layer's plan cache holds the route of
 * each put (path, devices), so a replay does no lookups beyond the cache.
 *
 * Synchronisation (why two team barriers): the puts write into neighbours' halos, which the neighbours'
 * previous step may still read, so everybody first finishes its prior work (GPU: the host waits for an
 * event recorded on the given stream) and enters barrier 1; after the puts complete (data in the target's
 * memory) barrier 2 tells every rank that its halos are full. The exchange has thus completed when the
 * call returns, and any work queued afterwards on any stream sees it.
 *
 * Neighbours on other nodes (the comm layer's MPI path) get matched messages instead (halo_mpi.c): they
 * need no barrier, and where no member of the team has a put left both barriers are skipped. */
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "coll/coll.h"
#include "runtime/gpu.h"
#include "runtime/log.h"
#include "runtime/trace.h"

int kyi_halo_part(const struct kyi_array *a, int k, const int dir[])
{
    const kyi_ablock_t *b = &a->blk[k];
    int c[KY_ARRAY_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) {
        if (dir[d] == 0) {
            c[d] = b->coord[d];
            continue;
        }
        if (a->halo[d] == 0 || a->kind[d] != KY_DIST_BLOCK) return -1;
        c[d] = b->coord[d] + dir[d];
        if (c[d] < 0 || c[d] >= a->parts[d]) return -1; /* global boundary: not periodic */
    }
    return kyi_adist_part_of(a, c);
}

/* Add the put of block k in direction dir (entries -1, 0, 1) to the plan, if it has a neighbour that is
 * not served by messages (halo_mpi.c). */
static int plan_dir(struct kyi_array *a, int k, const int dir[], kyi_halo_op_t *op)
{
    const kyi_ablock_t *b = &a->blk[k];
    int q = kyi_halo_part(a, k, dir), rank, kk;
    if (q < 0) return 0;
    kyi_adist_home(a, q, &rank, &kk);
    if (kyi_halo_by_msg(a, rank, a->seg[kk])) return 0;
    size_t nq[KY_ARRAY_MAX_DIMS], Eq[KY_ARRAY_MAX_DIMS], Sq[KY_ARRAY_MAX_DIMS];
    kyi_adist_geom(a, q, nq, Eq, Sq);
    size_t cnt[KY_ARRAY_MAX_DIMS], soff = 0, doff = 0;
    for (int d = 0; d < a->ndim; d++) {
        size_t h = (size_t)a->halo[d], from, to;
        if (dir[d] == 0) {
            cnt[d] = b->n[d];
            from = h;
            to = h;
        } else if (dir[d] > 0) {
            cnt[d] = h;
            from = b->n[d];
            to = 0;
        } /* my top cells -> its low halo */
        else {
            cnt[d] = h;
            from = h;
            to = h + nq[d];
        } /* my bottom cells -> its high halo */
        soff += from * b->S[d];
        doff += to * Sq[d];
    }
    op->levels = kyi_abox_strided(a->ndim, cnt, b->S, Sq, a->elem, op->count, op->ss, op->ds);
    if (op->levels < 0) return -1;
    op->rank = rank;
    op->seg = a->seg[kk];
    op->off = doff * a->elem;
    op->src = b->base + soff * a->elem;
    return 1;
}

static int plan(const char *call, struct kyi_array *a)
{
    /* a plan that failed half-way on an earlier call is dropped first */
    kyi_halo_mpi_free(a);
    free(a->ops);
    a->ops = NULL;
    KYI_CHECK(kyi_halo_mpi_plan(call, a));
    int ndir = 1;
    for (int d = 0; d < a->ndim; d++) ndir *= 3;
    a->ops = calloc((size_t)(ndir * (a->nlocal ? a->nlocal : 1)), sizeof *a->ops);
    if (!a->ops) return kyi_fail(KY_ERR_NOMEM, call, "no memory for the halo plan");
    a->nops = 0;
    for (int k = 0; k < a->nlocal; k++)
        for (int i = 0; i < ndir; i++) {
            int dir[KY_ARRAY_MAX_DIMS], t = i, zero = 1;
            for (int d = a->ndim - 1; d >= 0; d--) {
                dir[d] = t % 3 - 1;
                t /= 3;
                zero &= dir[d] == 0;
            }
            if (zero) continue;
            int r = plan_dir(a, k, dir, &a->ops[a->nops]);
            if (r < 0) return kyi_fail(KY_ERR_INTERNAL, call, "halo box needs more than 3 strided levels");
            a->nops += r;
        }
    /* The barriers order puts only; skip them where no member of the team has any. */
    struct kyi_team *t = kyi_team_get(call, a->team);
    if (!t) return KY_ERR_ARG;
    int64_t none = a->nops > 0 ? -1 : 0; /* the maximum as the minimum of the negation */
    KYI_CHECK(kyi_allreduce_min_i64(t, &none, 1, call));
    a->puts_anywhere = none < 0;
    a->planned = 1;
    KYI_INFO(KYI_SUB_ARRAY, "halo plan: %d put(s) for %d local block(s)%s", a->nops, a->nlocal,
             a->puts_anywhere ? "" : ", no barriers");
    return KY_OK;
}

/* First half: wait for the streams, start the messages, barrier 1, start the puts. The handles and the
 * status so far stay in `a` until end(). */
static int begin(const char *call, ky_array_t a, void *const streams[])
{
    uint64_t t0 = KYI_TRACE_T0();
    KYI_CHECK(kyi_array_check(call, a));
    if (a->nlocal == 0) return KY_OK; /* not one of the array's ranks: nothing to exchange */
    if (a->inflight)
        return kyi_fail(
            KY_ERR_ARG, call,
            "a halo exchange of this array is already in flight: call ky_array_halo_exchange_end first");
    if (a->place == KY_PLACE_GPU)
        for (int k = 0; k < a->nlocal; k++) {
            int st = kyi_gpu_stream_sync(a->blk[k].dev, streams ? streams[k] : NULL);
            if (st)
                return kyi_fail(st, call, "waiting for stream of block %d on GPU %d: %s", k, a->blk[k].dev,
                                kyi_gpu_last_error());
        }
    if (!a->planned) KYI_CHECK(plan(call, a));
    if (!a->hs && !(a->hs = malloc(sizeof *a->hs * (size_t)(a->nops ? a->nops : 1))))
        return kyi_fail(KY_ERR_NOMEM, call, "no memory");
    a->inflight = 1;
    int st = kyi_halo_mpi_start(call, a); /* messages to other nodes first: they need no barrier */
    if (a->puts_anywhere) {
        int b = ky_team_barrier(a->team);
        if (!st) st = b;
    }
    int n = 0;
    for (; n < a->nops && !st; n++) {
        const kyi_halo_op_t *o = &a->ops[n];
        st = ky_put_strided_nb(o->rank, o->seg, o->off, o->ds, o->src, o->ss, o->count, o->levels, &a->hs[n]);
        if (st) a->hs[n] = NULL;
    }
    a->nhs = n;
    a->st = st;
    KYI_TRACE_SPAN("array", "halo exchange: wait, barrier, start puts", t0, n, -1);
    return st;
}

/* Second half: every message and put complete, barrier 2. Always run after begin(), even after a failure,
 * so that nothing is left posted and nobody is left waiting. */
static int end(const char *call, ky_array_t a)
{
    uint64_t t0 = KYI_TRACE_T0();
    KYI_CHECK(kyi_array_check(call, a));
    if (a->nlocal == 0) return KY_OK;
    if (!a->inflight)
        return kyi_fail(
            KY_ERR_ARG, call,
            "no halo exchange of this array is in flight: call ky_array_halo_exchange_begin first");
    int st = kyi_halo_mpi_finish(call, a, a->st);
    int w = ky_wait_all(a->hs, (size_t)a->nhs);
    if (!st) st = w;
    a->inflight = 0;
    /* Enter barrier 2 even after a failure so that the others are not left waiting. */
    int b = a->puts_anywhere ? ky_team_barrier(a->team) : KY_OK;
    KYI_TRACE_SPAN("array", "halo exchange: complete, barrier", t0, a->nhs, -1);
    return st ? st : b;
}

static int exchange(const char *call, ky_array_t a, void *const streams[])
{
    int st = begin(call, a, streams);
    if (!a || !a->inflight) return st; /* failed before anything was started */
    int e = end(call, a);
    return st ? st : e;
}

static int one_stream(const char *call, ky_array_t a, void *stream, void *s[])
{
    KYI_CHECK(kyi_array_check(call, a));
    if (a->nlocal > 1 && stream)
        return kyi_fail(KY_ERR_ARG, call,
                        "this rank has %d blocks: pass one stream per block to the _n form of the call",
                        a->nlocal);
    s[0] = stream;
    return KY_OK;
}

int ky_array_halo_exchange(ky_array_t a, void *stream)
{
    static const char *call = "ky_array_halo_exchange";
    void *s[KYI_ARRAY_MAX_BLOCKS] = {NULL};
    KYI_CHECK(one_stream(call, a, stream, s));
    return exchange(call, a, s);
}

int ky_array_halo_exchange_n(ky_array_t a, void *const streams[])
{
    return exchange("ky_array_halo_exchange_n", a, streams);
}

int ky_array_halo_exchange_begin(ky_array_t a, void *stream)
{
    static const char *call = "ky_array_halo_exchange_begin";
    void *s[KYI_ARRAY_MAX_BLOCKS] = {NULL};
    KYI_CHECK(one_stream(call, a, stream, s));
    return begin(call, a, s);
}

int ky_array_halo_exchange_begin_n(ky_array_t a, void *const streams[])
{
    return begin("ky_array_halo_exchange_begin_n", a, streams);
}

int ky_array_halo_exchange_end(ky_array_t a)
{
    return end("ky_array_halo_exchange_end", a);
}
