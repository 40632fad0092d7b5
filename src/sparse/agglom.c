/* The agglomerated CG solve: how many ranks work on a solve, and the solve on one of them.
 *
 * On several GPUs every CG iteration waits three times for the other GPUs (the exchange of p and the
 * allreduces of two dot products, 2.5-3 µs each in a CUDA graph on NVLink: docs/performance.md, "Distributed
 * CG"), which one GPU never pays. Below some size one GPU is faster than all of them: rank 0 then gathers the
 * whole matrix once (kept with the matrix), every solve gathers b (and x when it is the start) onto it, rank
 * 0 solves alone with the kernels of a one-rank run on a matrix marked solo (no exchange, no collective), and
 * every rank gets its piece of x and rank 0's result and status. Same API, same arguments, one solution for
 * every rank; the gathers and the scatter are set-up (t_setup), not iterations (t_total).
 *
 * Cost model (KY_CG_AGGLOMERATE=auto, GPU matrices): an iteration of p ranks on k GPUs takes about
 *     t(k, p) = bytes / (k B) + (p > 1 ? 3 s : 0)
 * bytes = 12 nnz + 80 n: the SpMV's values and 32-bit columns, and per row its pointer, the entries of p
 * and q and the vector updates of x, r and p; B = KY_CG_GPU_GBS, s = KY_CG_SYNC_US. Launches cost the same
 * on one GPU and on k and are left out. One GPU is chosen where t(1, 1) <= t(k, p), k the GPUs the p ranks
 * drive (ranks sharing a GPU count it once, so ranks sharing one GPU always agglomerate): with the defaults
 * (4000 GB/s, 3 µs) on 4 GPUs below about 48 MB moved per iteration (the seed's five smaller matrices; nd6k's
 * 84 MB runs on all four), on 2 GPUs below about 72 MB. A subset of 1 < k < p ranks is not offered: the
 * exchange plans and collectives are built over every rank. Host matrices: every rank works unless
 * KY_CG_AGGLOMERATE=1 (the forced path; it is how the tests check this file without a GPU). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/runtime.h"
#include "sparse/sparse.h"

#define ROOT 0

struct kyi_sp_agg {
    kyi_csr_t *whole; /* rank 0: every row, solo, in the matrix's placement */
    ky_seg_t vseg;    /* rank 0: [b | x], 2 n doubles; other ranks: none of it */
    double *hv;       /* rank 0: its base */
    double *wv;       /* rank 0, GPU matrices: [b | x] on its GPU */
    double *stage;    /* GPU matrices: this rank's piece of b or x on the host */
};
typedef struct kyi_sp_agg kyi_sp_agg_t;

double kyi_sp_agg_model_us(int64_t n, int64_t nnz, int gpus, int ranks, double gbs, double sync_us)
{
    double bytes = 12.0 * (double)nnz + 80.0 * (double)n;
    return bytes / ((double)gpus * gbs * 1e3) + (ranks > 1 ? 3.0 * sync_us : 0.0); /* GB/s = 1e3 B/µs */
}

/* GPUs the ranks drive between them (ranks sharing one count it once) */
static int distinct_gpus(void)
{
    int k = 0;
    for (int r = 0; r < kyi_rt.nranks; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = kyi_rt.hw_node_of[q] == kyi_rt.hw_node_of[r] &&
                   kyi_rt.gpu_of[q * KYI_MAX_GPUS_PER_RANK] == kyi_rt.gpu_of[r * KYI_MAX_GPUS_PER_RANK];
        k += !seen;
    }
    return k > 0 ? k : 1;
}

int kyi_sp_agg_choose(kyi_csr_t *A)
{
    if (A->agg_choice >= 0) return A->agg_choice;
    int c = 0, p = kyi_rt.nranks;
    if (p > 1 && kyi_setting_is(KYI_SET_CG_AGGLOMERATE, "1"))
        c = 1;
    else if (p > 1 && kyi_setting_is(KYI_SET_CG_AGGLOMERATE, "auto") && A->memkind == KY_MEM_GPU) {
        double gbs = kyi_setting_double(KYI_SET_CG_GPU_GBS), s = kyi_setting_double(KYI_SET_CG_SYNC_US);
        if (!(gbs > 0)) gbs = 4000;
        if (!(s >= 0)) s = 3.0;
        int g = distinct_gpus();
        double t1 = kyi_sp_agg_model_us(A->n, A->nnz, 1, 1, gbs, s),
               tp = kyi_sp_agg_model_us(A->n, A->nnz, g, p, gbs, s);
        c = t1 <= tp;
        KYI_INFO(KYI_SUB_RUNTIME,
                 "ky_cg: %lld rows, %lld nonzeros: model %.1f us per iteration on 1 GPU, %.1f on %d (%d "
                 "ranks): %s",
                 (long long)A->n, (long long)A->nnz, t1, tp, g, p,
                 c ? "agglomerated on rank 0" : "distributed");
    }
    /* one answer everywhere, rank 0's (the environment may differ between ranks) */
    if (p > 1) KYI_CHECK(ky_bcast(&c, sizeof c, ROOT, KY_TEAM_WORLD));
    A->agg_choice = c;
    return c;
}

void kyi_sp_agg_free(kyi_csr_t *A)
{
    kyi_sp_agg_t *g = A->agg;
    A->agg = NULL;
    if (!g) return;
    if (g->whole) kyi_sp_csr_free_local(g->whole);
    if (g->vseg) ky_seg_destroy(g->vseg); /* collective: every rank made it */
    kyi_sp_gpu_free(g->wv);
    free(g->stage);
    free(g);
}

/* Rank 0's whole matrix from its segments of row lengths, columns and values. */
static int build_whole(kyi_csr_t *A, kyi_sp_agg_t *g, const int64_t *len, const int64_t *col,
                       const double *val)
{
    const char *call = "ky_cg";
    int64_t n = A->n, nnz = A->nnz;
    if (nnz > INT32_MAX || n > INT32_MAX)
        return kyi_fail(KY_ERR_ARG, call, "agglomerated matrix: %lld rows / %lld nonzeros exceed 2^31",
                        (long long)n, (long long)nnz);
    kyi_csr_t *W = calloc(1, sizeof *W);
    if (!W) return kyi_fail(KY_ERR_NOMEM, call, "agglomerated matrix");
    g->whole = W;
    W->n = W->nloc = W->row_hi = n;
    W->nnz = W->lnnz = nnz;
    W->memkind = A->memkind;
    W->device = A->device;
    W->ag_algo = A->ag_algo;
    W->solo = 1;
    W->agg_choice = 0;
    W->starts = malloc(2 * sizeof(int64_t));
    W->rowptr = malloc(sizeof(int64_t) * (size_t)(n + 1));
    W->rp32 = malloc(sizeof(int) * (size_t)(n + 1));
    W->gcol = malloc(sizeof(int64_t) * (size_t)(nnz > 0 ? nnz : 1));
    W->val = malloc(sizeof(double) * (size_t)(nnz > 0 ? nnz : 1));
    if (!W->starts || !W->rowptr || !W->rp32 || !W->gcol || !W->val)
        return kyi_fail(KY_ERR_NOMEM, call, "agglomerated matrix of %lld nonzeros", (long long)nnz);
    W->starts[0] = 0;
    W->starts[1] = n;
    W->rowptr[0] = 0;
    for (int64_t i = 0; i < n; i++) W->rowptr[i + 1] = W->rowptr[i] + len[i];
    if (W->rowptr[n] != nnz)
        return kyi_fail(KY_ERR_INTERNAL, call, "agglomerated matrix: %lld nonzeros gathered, %lld expected",
                        (long long)W->rowptr[n], (long long)nnz);
    for (int64_t i = 0; i <= n; i++) W->rp32[i] = (int)W->rowptr[i];
    if (nnz > 0) {
        memcpy(W->gcol, col, sizeof(int64_t) * (size_t)nnz);
        memcpy(W->val, val, sizeof(double) * (size_t)nnz);
    }
    if (A->memkind == KY_MEM_GPU) {
        KYI_CHECK(kyi_sp_gpu_upload(W));
        KYI_CHECK(kyi_sp_gpu_alloc(W, sizeof(double) * (size_t)(2 * n + 1), (void **)&g->wv));
    }
    return KY_OK;
}

/* Collective, once per matrix: rank 0 gathers every rank's rows (one-sided puts into its segments). */
static int agg_setup(kyi_csr_t *A)
{
    const char *call = "ky_cg";
    int p = kyi_rt.nranks, me = kyi_rt.rank, st = KY_OK;
    int64_t n = A->n, nl = A->nloc;
    kyi_sp_agg_t *g = calloc(1, sizeof *g);
    int64_t *nz = malloc(sizeof(int64_t) * (size_t)(p + 1)),
            *len = malloc(sizeof(int64_t) * (size_t)(nl + 1));
    ky_seg_t sl = NULL, sc = NULL, sv = NULL;
    if (!g || !nz || !len) st = kyi_fail(KY_ERR_NOMEM, call, "agglomerated solve");
    if (st == KY_OK && A->memkind == KY_MEM_GPU && !(g->stage = malloc(sizeof(double) * (size_t)(nl + 1))))
        st = kyi_fail(KY_ERR_NOMEM, call, "agglomerated solve: staging of %lld entries", (long long)nl);
    st = kyi_sp_agree(call, st);
    if (st != KY_OK) {
        if (g) free(g->stage);
        free(g);
        free(nz);
        free(len);
        return st;
    }
    A->agg = g; /* from here ky_csr_destroy frees it, collectively */
    st = ky_allgather(&A->lnnz, sizeof(int64_t), nz, KY_TEAM_WORLD);
    int64_t off = 0;
    for (int r = 0; st == KY_OK && r < me; r++) off += nz[r];
    for (int64_t i = 0; i < nl; i++) len[i] = A->rowptr[i + 1] - A->rowptr[i];
    size_t root_nz = me == ROOT ? (size_t)A->nnz : 0, root_n = me == ROOT ? (size_t)n : 0;
    if (st == KY_OK) st = ky_seg_create(NULL, sizeof(int64_t) * root_n, KY_MEM_HOST, 0, &sl);
    if (st == KY_OK) st = ky_seg_create(NULL, sizeof(int64_t) * root_nz, KY_MEM_HOST, 0, &sc);
    if (st == KY_OK) st = ky_seg_create(NULL, sizeof(double) * root_nz, KY_MEM_HOST, 0, &sv);
    if (st == KY_OK) st = ky_seg_create(NULL, sizeof(double) * 2 * root_n, KY_MEM_HOST, 0, &g->vseg);
    st = kyi_sp_agree(call, st);
    if (st == KY_OK && nl > 0)
        st = ky_put(ROOT, sl, sizeof(int64_t) * (size_t)A->row_lo, len, sizeof(int64_t) * (size_t)nl);
    if (st == KY_OK && A->lnnz > 0) {
        st = ky_put(ROOT, sc, sizeof(int64_t) * (size_t)off, A->gcol, sizeof(int64_t) * (size_t)A->lnnz);
        if (st == KY_OK)
            st = ky_put(ROOT, sv, sizeof(double) * (size_t)off, A->val, sizeof(double) * (size_t)A->lnnz);
    }
    if (st == KY_OK) st = ky_quiet();
    int st2 = ky_comm_barrier();
    if (st == KY_OK) st = st2;
    st = kyi_sp_agree(call, st);
    if (st == KY_OK && me == ROOT) {
        void *bl, *bc, *bv, *hv;
        st = ky_seg_local(sl, &bl, NULL);
        if (st == KY_OK) st = ky_seg_local(sc, &bc, NULL);
        if (st == KY_OK) st = ky_seg_local(sv, &bv, NULL);
        if (st == KY_OK) st = ky_seg_local(g->vseg, &hv, NULL);
        if (st == KY_OK) {
            g->hv = hv;
            st = build_whole(A, g, bl, bc, bv);
        }
    }
    st = kyi_sp_agree(call, st);
    /* the gathered rows are in rank 0's matrix now (or the set-up failed): their segments go */
    if (sl) ky_seg_destroy(sl);
    if (sc) ky_seg_destroy(sc);
    if (sv) ky_seg_destroy(sv);
    free(nz);
    free(len);
    return st;
}

/* This rank's piece of v (the matrix's placement) into rank 0's [b | x] at entry base + row_lo. */
static int put_piece(kyi_csr_t *A, kyi_sp_agg_t *g, const double *v, int64_t base)
{
    int64_t nl = A->nloc;
    if (nl == 0) return KY_OK;
    const double *src = v;
    if (A->memkind == KY_MEM_GPU) {
        KYI_CHECK(kyi_sp_gpu_copy(g->stage, v, nl, NULL));
        KYI_CHECK(kyi_sp_gpu_sync(NULL));
        src = g->stage;
    }
    return ky_put(ROOT, g->vseg, sizeof(double) * (size_t)(base + A->row_lo), src,
                  sizeof(double) * (size_t)nl);
}

/* What rank 0 tells every rank after its solve. */
typedef struct {
    int st;
    ky_cg_result_t res;
    double solve_s; /* rank 0's time in the solve itself */
    char msg[512];
} agg_out_t;

int kyi_sp_cg_agglomerated(kyi_csr_t *A, const double *b, double *x, const ky_cg_opts_t *o,
                           ky_cg_result_t *res)
{
    const char *call = "ky_cg";
    int me = kyi_rt.rank, gpu = A->memkind == KY_MEM_GPU, st = KY_OK;
    int64_t n = A->n, nl = A->nloc;
    double t0 = kyi_sp_now();
    if (!A->agg) KYI_CHECK(agg_setup(A));
    kyi_sp_agg_t *g = A->agg;
    /* b, and x when the solve starts from it, onto rank 0 */
    st = put_piece(A, g, b, 0);
    if (st == KY_OK && !o->x0_zero) st = put_piece(A, g, x, n);
    if (st == KY_OK) st = ky_quiet();
    int st2 = ky_comm_barrier();
    if (st == KY_OK) st = st2;
    KYI_CHECK(kyi_sp_agree(call, st));
    agg_out_t out;
    memset(&out, 0, sizeof out);
    if (me == ROOT) {
        kyi_csr_t *W = g->whole;
        double *wb = g->hv, *wx = g->hv + n;
        if (gpu) {
            out.st = kyi_sp_gpu_copy(g->wv, g->hv, 2 * n, NULL);
            if (out.st == KY_OK) out.st = kyi_sp_gpu_sync(NULL);
            wb = g->wv;
            wx = g->wv + n;
        }
        double ts = kyi_sp_now();
        if (out.st == KY_OK)
            out.st = gpu ? kyi_sp_cg_gpu(W, wb, wx, o, &out.res) : kyi_sp_cg_cpu(W, wb, wx, o, &out.res);
        out.solve_s = kyi_sp_now() - ts;
        if (out.st != KY_OK) snprintf(out.msg, sizeof out.msg, "%s", ky_last_error());
        if (gpu) { /* x as it is, also after a breakdown (the last finite iterate) */
            int sc = kyi_sp_gpu_copy(g->hv + n, wx, n, NULL);
            if (sc == KY_OK) sc = kyi_sp_gpu_sync(NULL);
            if (sc != KY_OK && out.st == KY_OK) {
                out.st = sc;
                snprintf(out.msg, sizeof out.msg, "%s", ky_last_error());
            }
        }
    }
    KYI_CHECK(ky_bcast(&out, sizeof out, ROOT, KY_TEAM_WORLD));
    /* every rank's piece of x from rank 0 */
    st = KY_OK;
    if (nl > 0) {
        double *dst = gpu ? g->stage : x;
        st =
            ky_get(dst, ROOT, g->vseg, sizeof(double) * (size_t)(n + A->row_lo), sizeof(double) * (size_t)nl);
        if (st == KY_OK && gpu) st = kyi_sp_gpu_copy(x, g->stage, nl, NULL);
        if (st == KY_OK && gpu) st = kyi_sp_gpu_sync(NULL);
    }
    st2 = ky_comm_barrier(); /* rank 0's [b | x] is free for the next solve once every rank has its piece */
    if (st == KY_OK) st = st2;
    KYI_CHECK(kyi_sp_agree(call, st));
    *res = out.res;
    /* rank 0's set-up plus this rank's gathers and scatter around the solve */
    res->t_setup += kyi_sp_now() - t0 - out.solve_s;
    if (out.st != KY_OK && me != ROOT)
        return kyi_fail(out.st, call, "in rank 0's agglomerated solve: %s", out.msg);
    return out.st;
}
