/* The sparse layer's GPU back end, part 2: CG on device vectors. Three kernels per iteration, no host
 * synchronisation in the loop:
 *   K1  q = A p and p'q (fused; block 0 also moves last iteration's r'r into rho)
 *   K2  alpha = rho / p'q on the device; x += alpha p, r -= alpha q and r'r (fused); breakdown check
 *   K3  beta = r'r / rho; p = r + beta p; convergence check against rtol
 * With several ranks the two dots are summed by stream-ordered allreduce plans (coll's GPU path) and p is
 * exchanged between K3 and K1: allgather plan on the stream, or the halo (pack kernel, one stream
 * synchronisation, one-sided puts). Scheme "graph" captures one iteration (kernels and collectives) in a
 * CUDA graph and replays it; with rtol the host looks at the state every check_every iterations. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/log.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"
#include "sparse/sparse.h"
#include "sparse/gpu/sp_kernels.cuh"

#define CU(expr)                                                                            \
    do {                                                                                    \
        cudaError_t e_ = (expr);                                                            \
        if (e_ != cudaSuccess)                                                              \
            return kyi_fail(KY_ERR_CUDA, "ky_cg", "%s: %s", #expr, cudaGetErrorString(e_)); \
    } while (0)

typedef struct {
    cudaStream_t s;
    int64_t n;
    int multi; /* several ranks work on the solve (kyi_sp_multi): the dots are allreduced, p exchanged */
    double *r, *q;
    double *S, *L; /* device scalars: S as in sp_kernels.cuh (+ [1] p'q, [2] r'r summed), L local sums */
    double *h;     /* pinned host copy of S; h[12..15]: staged reductions */
    ky_coll_plan_t ar_pq, ar_rr;
    /* pipelined CG: m = A w, the vectors z, s, the fused allreduce of (r'r, w'r) on a side stream s2 (events
     * fork and join it around the SpMV) */
    double *m, *z, *sv;
    cudaStream_t s2;
    cudaEvent_t ev_fork, ev_join;
    ky_coll_plan_t ar_pipe;
    /* staged: ranks share a GPU. coll's GPU collectives wait on the GPU for the other members, and kernels of
     * processes sharing one GPU are time-sliced, so each wait costs a scheduling quantum; the seed's host
     * path (copy to the host, host collective, copy back) is used instead. Agreed by every rank. */
    int staged;
    double *hvec; /* pinned host copy of the gathered vector */
    ky_coll_plan_t ag_host;
    int ag_algo;
    /* KY_TRACE: CUDA events around every kernel or collective of the solve (pairs, kept between solves) */
    cudaEvent_t tref, *tev;
    const char **tname;
    int tcap, tn, capturing;
    uint64_t tref_ns;
} gws_t;

#define TRACE_PAIRS 4096

/* Begin a GPU span on the solve's stream; returns its slot, or -1 (tracing off, events used up). */
static int gspan_begin(gws_t *w, const char *name)
{
    if (!KYI_TRACE_ON || !w->tev || w->tn >= w->tcap || w->capturing) return -1;
    int k = w->tn++;
    if (cudaEventRecord(w->tev[2 * k], w->s) != cudaSuccess) return -1;
    w->tname[k] = name;
    return k;
}
static void gspan_end(gws_t *w, int k)
{
    if (k >= 0) cudaEventRecord(w->tev[2 * k + 1], w->s);
}
/* Start of a traced solve: the stream is idle, so the reference event's GPU time is now on the host. */
static void gtrace_start(gws_t *w)
{
    w->tn = 0;
    if (!KYI_TRACE_ON) return;
    if (!w->tev) {
        w->tev = (cudaEvent_t *)calloc(2 * TRACE_PAIRS, sizeof(cudaEvent_t));
        w->tname = (const char **)calloc(TRACE_PAIRS, sizeof(char *));
        if (!w->tev || !w->tname || cudaEventCreate(&w->tref) != cudaSuccess) {
            free(w->tev);
            w->tev = NULL;
            return;
        }
        for (w->tcap = 0; w->tcap < TRACE_PAIRS; w->tcap++)
            if (cudaEventCreate(&w->tev[2 * w->tcap]) != cudaSuccess ||
                cudaEventCreate(&w->tev[2 * w->tcap + 1]) != cudaSuccess)
                break;
        kyi_trace_track_name(KYI_TRACK_GPU, "GPU stream (CG kernels and collectives)");
    }
    cudaStreamSynchronize(w->s);
    w->tref_ns = kyi_trace_now();
    cudaEventRecord(w->tref, w->s);
}
/* End of a traced solve (stream synchronised): the spans onto the rank's GPU track. */
static void gtrace_flush(gws_t *w)
{
    if (!KYI_TRACE_ON || !w->tev) return;
    for (int k = 0; k < w->tn; k++) {
        float a = 0, b = 0;
        if (cudaEventElapsedTime(&a, w->tref, w->tev[2 * k]) != cudaSuccess ||
            cudaEventElapsedTime(&b, w->tref, w->tev[2 * k + 1]) != cudaSuccess)
            continue;
        kyi_trace_event("gpu", w->tname[k], w->tref_ns + (uint64_t)(a * 1e6),
                        w->tref_ns + (uint64_t)(b * 1e6), KYI_TRACK_GPU, -1, -1);
    }
    w->tn = 0;
}

extern "C" void kyi_sp_gpu_ws_free(kyi_csr_t *A)
{
    gws_t *w = (gws_t *)A->gws;
    if (!w) return;
    if (w->ar_pq) ky_coll_free(w->ar_pq);
    if (w->ar_rr) ky_coll_free(w->ar_rr);
    if (w->ag_host) ky_coll_free(w->ag_host);
    if (w->ar_pipe) ky_coll_free(w->ar_pipe);
    if (w->hvec) cudaFreeHost(w->hvec);
    cudaFree(w->m);
    cudaFree(w->z);
    cudaFree(w->sv);
    if (w->ev_fork) cudaEventDestroy(w->ev_fork);
    if (w->ev_join) cudaEventDestroy(w->ev_join);
    if (w->s2) cudaStreamDestroy(w->s2);
    cudaFree(w->r);
    cudaFree(w->q);
    cudaFree(w->S);
    cudaFreeHost(w->h);
    if (w->tev) {
        for (int k = 0; k < 2 * w->tcap; k++) cudaEventDestroy(w->tev[k]);
        cudaEventDestroy(w->tref);
    }
    free(w->tev);
    free(w->tname);
    if (w->s) cudaStreamDestroy(w->s);
    free(w);
    A->gws = NULL;
}

static int ws_get(kyi_csr_t *A, gws_t **out)
{
    if (A->gws) {
        *out = (gws_t *)A->gws;
        return KY_OK;
    }
    gws_t *w = (gws_t *)calloc(1, sizeof *w);
    if (!w) return kyi_fail(KY_ERR_NOMEM, "ky_cg", "GPU workspace");
    A->gws = w;
    CU(cudaSetDevice(A->device));
    CU(cudaStreamCreateWithFlags(&w->s, cudaStreamNonBlocking));
    size_t b = sizeof(double) * (size_t)(A->nloc + 1);
    CU(cudaMalloc(&w->r, b));
    CU(cudaMalloc(&w->q, b));
    CU(cudaMalloc(&w->S, 16 * sizeof(double)));
    CU(cudaMemset(w->S, 0, 16 * sizeof(double)));
    CU(cudaMallocHost(&w->h, 16 * sizeof(double)));
    w->L = w->S + 8;
    w->n = A->nloc;
    w->multi = kyi_sp_multi(A);
    if (w->multi) {
        int me = kyi_rt.rank, shared = 0;
        for (int r = 0; r < kyi_rt.nranks; r++)
            if (r != me && kyi_rt.hw_node_of[r] == kyi_rt.hw_node_of[me] &&
                kyi_rt.gpu_of[r * KYI_MAX_GPUS_PER_RANK] == kyi_rt.gpu_of[me * KYI_MAX_GPUS_PER_RANK])
                shared = 1;
        KYI_CHECK(ky_allreduce(&shared, &w->staged, 1, KY_INT32, KY_MAX, KY_TEAM_WORLD));
        if (!w->staged) {
            KYI_CHECK(ky_allreduce_init(w->L + 0, w->S + 1, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &w->ar_pq));
            KYI_CHECK(ky_allreduce_init(w->L + 1, w->S + 2, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &w->ar_rr));
        }
    }
    *out = w;
    return KY_OK;
}

__global__ void k2_update(int n, double *x, double *r, const double *p, const double *q, double *S,
                          const double *pq_glob, double *rr_acc, int allow_indef)
{
    if (kyi_sp_stopped(S)) return;
    double pq = *pq_glob, rho = S[0];
    bool bad = !isfinite(pq) || (allow_indef ? pq == 0.0 : !(pq > 0.0));
    if (bad) { /* at round-off (||r|| < 1e-14 ||r0||) p'Ap is noise: converged, not broken down */
        bool noise = isfinite(pq) && rho < 1e-28 * S[3];
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            S[6] = pq;
            S[4] = noise ? 1.0 : 2.0;
        }
        return;
    }
    double alpha = rho / pq, acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        x[i] += alpha * p[i];
        double ri = r[i] - alpha * q[i];
        r[i] = ri;
        acc += ri * ri;
    }
    kyi_sp_block_add(acc, rr_acc);
    if (blockIdx.x == 0 && threadIdx.x == 0) S[5] += 1.0;
}

__global__ void k3_direction(int n, const double *r, double *p, double *S, const double *rr_glob,
                             double *pq_acc, double rtol2)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) *pq_acc = 0.0; /* nobody reads p'q in this kernel */
    if (kyi_sp_stopped(S)) return;
    double rr = *rr_glob, rho = S[0];
    if (!isfinite(rr)) {
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            S[6] = rr;
            S[4] = 2.0;
        }
        return;
    }
    if (rtol2 > 0 && (rr < rtol2 * S[3] || rr <= 1e-30 * S[3])) { /* reached, or at round-off (1e-15) */
        if (blockIdx.x == 0 && threadIdx.x == 0) S[4] = 1.0;
        return;
    }
    double beta = rr / rho;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        p[i] = r[i] + beta * p[i];
}

__global__ void k_init(int n, const double *b, const double *ax, double *r, double *p, double *rr_acc)
{
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double ri = ax ? b[i] - ax[i] : b[i];
        r[i] = ri;
        p[i] = ri;
        acc += ri * ri;
    }
    kyi_sp_block_add(acc, rr_acc);
}

__global__ void k_start(double *S, const double *rr_glob)
{
    S[3] = *rr_glob;
    S[4] = 0.0;
    S[5] = 0.0;
    S[6] = 0.0;
}

typedef struct {
    kyi_csr_t *A;
    kyi_sp_plan_t *P;
    gws_t *w;
    double *x, *p, *pe;
    const ky_cg_opts_t *o;
    unsigned gridv;
    ky_cg_result_t *res;
    int timers;
} iter_t;

#define PHASE(acc, name, stmt)                      \
    do {                                            \
        double t0_ = it->timers ? kyi_sp_now() : 0; \
        int k_ = gspan_begin(it->w, name);          \
        int st_ = (stmt);                           \
        gspan_end(it->w, k_);                       \
        if (st_ != KY_OK) return st_;               \
        if (it->timers) {                           \
            CU(cudaStreamSynchronize(it->w->s));    \
            it->res->acc += kyi_sp_now() - t0_;     \
        }                                           \
    } while (0)

static int launch_k1(iter_t *it)
{
    gws_t *w = it->w;
    int multi = it->w->multi;
    kyi_sp_fuse_t f;
    f.p = it->p;
    f.S = w->S;
    f.pq_acc = w->L;
    f.rr_acc = w->L + 1;
    f.rr_glob = multi ? w->S + 2 : w->L + 1;
    CU(kyi_sp_gpu_spmv_launch(it->A, it->P, it->pe, w->q, &f, w->s));
    return KY_OK;
}

static int launch_k2(iter_t *it)
{
    gws_t *w = it->w;
    int multi = it->w->multi;
    k2_update<<<it->gridv, KYI_SP_BLOCK, 0, w->s>>>((int)it->A->nloc, it->x, w->r, it->p, w->q, w->S,
                                                    multi ? w->S + 1 : w->L, w->L + 1,
                                                    it->o->allow_indefinite);
    CU(cudaGetLastError());
    return KY_OK;
}

static int launch_k3(iter_t *it)
{
    gws_t *w = it->w;
    int multi = it->w->multi;
    k3_direction<<<it->gridv, KYI_SP_BLOCK, 0, w->s>>>(
        (int)it->A->nloc, w->r, it->p, w->S, multi ? w->S + 2 : w->L + 1, w->L, it->o->rtol * it->o->rtol);
    CU(cudaGetLastError());
    return KY_OK;
}

/* Sum local slot k (0: p'q, 1: r'r) over the ranks into S[1 + k]. */
static int allreduce(gws_t *w, int k)
{
    if (!w->multi) return KY_OK;
    if (!w->staged) return ky_coll_start(k == 0 ? w->ar_pq : w->ar_rr, (void *)w->s);
    double *h = w->h + 12 + k;
    CU(cudaMemcpyAsync(h, w->L + k, sizeof(double), cudaMemcpyDeviceToHost, w->s));
    CU(cudaStreamSynchronize(w->s));
    KYI_CHECK(ky_allreduce(KY_IN_PLACE, h, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
    CU(cudaMemcpyAsync(w->S + 1 + k, h, sizeof(double), cudaMemcpyHostToDevice, w->s));
    return KY_OK;
}

/* p's exchange: the plan's (stream-ordered allgather or halo puts), or the seed's host path when staged. */
static int exchange(kyi_csr_t *A, kyi_sp_plan_t *P, gws_t *w)
{
    if (!w->multi) return KY_OK;
    if (!w->staged || P->kind != KYI_XCH_ALLGATHER) return kyi_sp_exchange(A, P, 0, w->s);
    if (!w->ag_host || w->ag_algo != P->algo) {
        if (w->ag_host) ky_coll_free(w->ag_host);
        w->ag_host = NULL;
        if (!w->hvec) CU(cudaMallocHost(&w->hvec, sizeof(double) * (size_t)P->next));
        KYI_CHECK(ky_coll_set_algo(KY_COLL_ALLGATHER, (ky_coll_algo_t)P->algo));
        int st = ky_allgather_init(KY_IN_PLACE, sizeof(double) * (size_t)P->maxloc, w->hvec, KY_TEAM_WORLD,
                                   &w->ag_host);
        ky_coll_set_algo(KY_COLL_ALLGATHER, KY_ALGO_AUTO);
        KYI_CHECK(st);
        w->ag_algo = P->algo;
    }
    CU(cudaMemcpyAsync(w->hvec + P->loc_off, P->ext[0] + P->loc_off, sizeof(double) * (size_t)A->nloc,
                       cudaMemcpyDeviceToHost, w->s));
    CU(cudaStreamSynchronize(w->s));
    KYI_CHECK(ky_coll_start(w->ag_host, NULL));
    KYI_CHECK(ky_coll_wait(w->ag_host));
    CU(cudaMemcpyAsync(P->ext[0], w->hvec, sizeof(double) * (size_t)P->next, cudaMemcpyHostToDevice, w->s));
    return KY_OK;
}

/* One iteration, enqueued (and, for the halo, partly run from the host). */
static int iteration(iter_t *it)
{
    gws_t *w = it->w;
    PHASE(t_exchange, "exchange", exchange(it->A, it->P, w));
    PHASE(t_spmv, "K1 q=Ap, p'q", launch_k1(it));
    PHASE(t_allreduce, "allreduce p'q", allreduce(w, 0));
    PHASE(t_axpy, "K2 x, r, r'r", launch_k2(it));
    PHASE(t_allreduce, "allreduce r'r", allreduce(w, 1));
    PHASE(t_axpy, "K3 p = r + beta p", launch_k3(it));
    return KY_OK;
}

static int read_state(gws_t *w)
{
    CU(cudaMemcpyAsync(w->h, w->S, 16 * sizeof(double), cudaMemcpyDeviceToHost, w->s));
    CU(cudaStreamSynchronize(w->s));
    return KY_OK;
}

/* ---- pipelined CG (Ghysels and Vanroose 2014), as cg_cpu.c's, on device vectors
 * ---------------------------- Per iteration: the allreduce of (r'r, w'r) starts (side stream, or the host
 * while the GPU works when ranks share a GPU), w is exchanged and m = A w runs meanwhile; then KP (one
 * thread: alpha, beta, the checks) and KC (every vector update, and the next local r'r, w'r fused). w
 * alternates between the plan's two extended vectors, so a neighbour's puts of the next w never meet this
 * rank's SpMV still reading the last. Scalars: S[0] gamma_old, S[1] alpha_old, S[3] gamma_0, S[4] state, S[5]
 * iterations, S[6] bad value, S[7] gamma (last), S[12] alpha, S[13] beta; L = S + 8 local sums, G = S + 10
 * reduced (L itself on one rank). State 3: stopped at the attainable accuracy (converged when no rtol was
 * asked for). */
__global__ void kp_scalars(double *S, const double *G, double *L, double rtol2, int allow_indef, int first)
{
    if (S[4] != 0.0) return;
    double gamma = G[0], delta = G[1];
    L[0] = 0.0; /* consumed: KC sums the next ones */
    L[1] = 0.0;
    if (first) S[3] = gamma;
    S[7] = gamma;
    if (!isfinite(gamma) || !isfinite(delta)) {
        S[6] = isfinite(gamma) ? delta : gamma;
        S[4] = 2.0;
        return;
    }
    if (gamma == 0.0 || (rtol2 > 0 && gamma < rtol2 * S[3])) {
        S[4] = 1.0;
        return;
    }
    double beta = first ? 0.0 : gamma / S[0];
    double denom = first ? delta : delta - beta * gamma / S[1];
    bool bad = allow_indef ? denom == 0.0 : !(denom > 0.0);
    if (bad && !first) { /* the recurrences drifted: restart the directions from the residual (beta = 0) */
        beta = 0.0;
        denom = delta;
        bad = allow_indef ? denom == 0.0 : !(denom > 0.0);
    }
    if (bad) { /* the denominator is a difference of recurrences: noise near pipelined CG's attainable
                * accuracy (1e-6 relative: seen from 1e-7 on the seed's stand-ins), a breakdown above it */
        S[6] = denom;
        S[4] = gamma < 1e-12 * S[3] ? 3.0 : 2.0;
        return;
    }
    S[12] = gamma / denom;
    S[13] = beta;
    S[0] = gamma;
    S[1] = S[12];
}

__global__ void kc_update(int n, double *x, double *r, const double *wold, double *wnew, const double *m,
                          double *z, double *sv, double *p, double *S, double *L)
{
    if (kyi_sp_stopped(S)) return;
    double alpha = S[12], beta = S[13], rr = 0.0, wr = 0.0;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
        double zk = m[k] + beta * z[k], wk = wold[k];
        double sk = wk + beta * sv[k];
        double pk = r[k] + beta * p[k];
        z[k] = zk;
        sv[k] = sk;
        p[k] = pk;
        x[k] += alpha * pk;
        double rk = r[k] - alpha * sk;
        r[k] = rk;
        wk -= alpha * zk;
        wnew[k] = wk;
        rr += rk * rk;
        wr += wk * rk;
    }
    kyi_sp_block_add(rr, L);
    __syncthreads();
    kyi_sp_block_add(wr, L + 1);
    if (blockIdx.x == 0 && threadIdx.x == 0) S[5] += 1.0;
}

__global__ void k_dots_rw(int n, const double *r, const double *w, double *L)
{
    double rr = 0.0, wr = 0.0;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
        rr += r[k] * r[k];
        wr += w[k] * r[k];
    }
    kyi_sp_block_add(rr, L);
    __syncthreads();
    kyi_sp_block_add(wr, L + 1);
}

/* The fused allreduce of L into G, started: on the side stream (forked from w->s), or staged through the
 * host: the copy is enqueued now, the host allreduce runs in pipe_finish while the GPU does the SpMV. */
static int pipe_start(gws_t *w)
{
    if (!w->multi) return KY_OK;
    if (w->staged) {
        CU(cudaMemcpyAsync(w->h + 12, w->L, 2 * sizeof(double), cudaMemcpyDeviceToHost, w->s));
        CU(cudaEventRecord(w->ev_fork, w->s));
        return KY_OK;
    }
    CU(cudaEventRecord(w->ev_fork, w->s));
    CU(cudaStreamWaitEvent(w->s2, w->ev_fork, 0));
    KYI_CHECK(ky_coll_start(w->ar_pipe, (void *)w->s2));
    CU(cudaEventRecord(w->ev_join, w->s2));
    return KY_OK;
}

static int pipe_finish(gws_t *w)
{
    if (!w->multi) return KY_OK;
    if (w->staged) {
        CU(cudaEventSynchronize(w->ev_fork)); /* the local sums are on the host; the SpMV may still run */
        KYI_CHECK(ky_allreduce(KY_IN_PLACE, w->h + 12, 2, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
        CU(cudaMemcpyAsync(w->S + 10, w->h + 12, 2 * sizeof(double), cudaMemcpyHostToDevice, w->s));
        return KY_OK;
    }
    CU(cudaStreamWaitEvent(w->s, w->ev_join, 0));
    return KY_OK;
}

static int pipelined_gpu(kyi_csr_t *A, kyi_sp_plan_t *P, gws_t *w, const double *b, double *x,
                         const ky_cg_opts_t *o, ky_cg_result_t *res)
{
    const char *call = "ky_cg";
    int n = (int)A->nloc, multi = w->multi;
    size_t nb = sizeof(double) * (size_t)(n + 1);
    if (!w->m) {
        CU(cudaMalloc(&w->m, nb));
        CU(cudaMalloc(&w->z, nb));
        CU(cudaMalloc(&w->sv, nb));
        CU(cudaStreamCreateWithFlags(&w->s2, cudaStreamNonBlocking));
        CU(cudaEventCreateWithFlags(&w->ev_fork, cudaEventDisableTiming));
        CU(cudaEventCreateWithFlags(&w->ev_join, cudaEventDisableTiming));
        if (multi && !w->staged)
            KYI_CHECK(ky_allreduce_init(w->L, w->S + 10, 2, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &w->ar_pipe));
    }
    double *G = multi ? w->S + 10 : w->L, *p = w->q; /* q is free in this scheme: it holds p */
    int sms = 132;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, A->device);
    unsigned gv = (unsigned)((n + KYI_SP_BLOCK - 1) / KYI_SP_BLOCK);
    if (gv > (unsigned)(8 * sms)) gv = (unsigned)(8 * sms);
    if (gv == 0) gv = 1;
    double t0 = kyi_sp_now();
    /* r goes through buffer 1, x (when given) and w_0 through buffer 0: consecutive exchanges must use
     * different buffers, since a neighbour's puts of the next vector may arrive while this rank's SpMV of the
     * last still reads it (an exchange waits for the neighbours' flags only after its own puts) */
    int cur = 0;
    double *wv = P->ext[cur] + P->loc_off;
    /* r = b - A x into r; w = A r; (r'r, w'r) */
    CU(cudaMemsetAsync(w->S, 0, 16 * sizeof(double), w->s));
    CU(cudaMemsetAsync(w->z, 0, nb, w->s));
    CU(cudaMemsetAsync(w->sv, 0, nb, w->s));
    CU(cudaMemsetAsync(p, 0, nb, w->s));
    if (o->x0_zero) {
        CU(cudaMemsetAsync(x, 0, sizeof(double) * (size_t)n, w->s));
        CU(cudaMemcpyAsync(w->r, b, sizeof(double) * (size_t)n, cudaMemcpyDeviceToDevice, w->s));
    } else {
        CU(cudaMemcpyAsync(wv, x, sizeof(double) * (size_t)n, cudaMemcpyDeviceToDevice, w->s));
        KYI_CHECK(kyi_sp_exchange(A, P, cur, w->s));
        KYI_CHECK(kyi_sp_gpu_spmv(A, P, P->ext[cur], w->m, w->s));
        k_init<<<gv, KYI_SP_BLOCK, 0, w->s>>>(n, b, w->m, w->r, w->m, w->L + 7); /* r = b - Ax (m: scratch) */
        CU(cudaGetLastError());
    }
    cur = 1;
    wv = P->ext[cur] + P->loc_off;
    CU(cudaMemcpyAsync(wv, w->r, sizeof(double) * (size_t)n, cudaMemcpyDeviceToDevice, w->s));
    KYI_CHECK(kyi_sp_exchange(A, P, cur, w->s));
    KYI_CHECK(
        kyi_sp_gpu_spmv(A, P, P->ext[cur], w->m, w->s)); /* w = A r (not in place: rows read others' r) */
    cur = 0;
    CU(cudaMemcpyAsync(P->ext[cur] + P->loc_off, w->m, sizeof(double) * (size_t)n, cudaMemcpyDeviceToDevice,
                       w->s));
    wv = P->ext[cur] + P->loc_off;
    k_dots_rw<<<gv, KYI_SP_BLOCK, 0, w->s>>>(n, w->r, wv, w->L);
    CU(cudaGetLastError());
    res->launches_per_iter = 3 + (multi ? 2 : 0);
    res->syncs_per_iter = multi ? 1 + (w->staged ? 1 : 0) : 0;
    double tl = kyi_sp_now();
    res->t_setup = tl - t0;
    gtrace_start(w);
    iter_t it;
    memset(&it, 0, sizeof it);
    it.w = w;
    it.res = res;
    it.timers = o->timers;
    int check = o->rtol > 0 ? (o->check_every > 0 ? o->check_every : 10) : o->max_iters + 1;
    int st = KY_OK, done = 0;
    iter_t *itp = &it;
    for (int i = 0; i <= o->max_iters && !done && st == KY_OK; i++) {
        int last = i == o->max_iters; /* only the final residual's allreduce */
        wv = P->ext[cur] + P->loc_off;
        st = [&]() -> int {
            iter_t *it = itp;
            PHASE(t_allreduce, "allreduce (r'r, w'r) start", pipe_start(w));
            if (!last) {
                PHASE(t_exchange, "exchange w", kyi_sp_exchange(A, P, cur, w->s));
                PHASE(t_spmv, "m = A w", kyi_sp_gpu_spmv(A, P, P->ext[cur], w->m, w->s));
            }
            PHASE(t_allreduce, "allreduce (r'r, w'r) wait", pipe_finish(w));
            PHASE(
                t_dot, "KP alpha, beta",
                (kp_scalars<<<1, 1, 0, w->s>>>(w->S, G, w->L, o->rtol * o->rtol, o->allow_indefinite, i == 0),
                 cudaGetLastError() == cudaSuccess ? KY_OK
                                                   : kyi_fail(KY_ERR_CUDA, call, "kp_scalars launch")));
            if (!last)
                PHASE(t_axpy, "KC x, r, w, z, s, p; r'r, w'r",
                      (kc_update<<<gv, KYI_SP_BLOCK, 0, w->s>>>(n, x, w->r, wv, P->ext[cur ^ 1] + P->loc_off,
                                                                w->m, w->z, w->sv, p, w->S, w->L),
                       cudaGetLastError() == cudaSuccess ? KY_OK
                                                         : kyi_fail(KY_ERR_CUDA, call, "kc_update launch")));
            return KY_OK;
        }();
        cur ^= 1;
        if (st == KY_OK && ((i + 1) % check == 0 || last)) {
            st = read_state(w);
            if (st == KY_OK && w->h[4] != 0.0) done = 1;
        }
    }
    if (st == KY_OK) st = read_state(w);
    if (st == KY_OK) gtrace_flush(w);
    if (st != KY_OK) return st;
    res->t_total = kyi_sp_now() - tl;
    res->iterations = (int)w->h[5];
    res->norm0 = sqrt(w->h[3]);
    res->rel_residual = w->h[3] > 0 ? sqrt(w->h[7] / w->h[3]) : 0.0;
    res->converged = w->h[4] == 1.0 || w->h[3] == 0.0 || (w->h[4] == 3.0 && o->rtol == 0);
    if (w->h[4] == 2.0) {
        res->breakdown = 1;
        return kyi_fail(KY_ERR_ARG, call,
                        "CG breakdown at iteration %d: %s = %g (the matrix is not positive definite)",
                        res->iterations + 1, isfinite(w->h[6]) ? "p'Ap" : "a value", w->h[6]);
    }
    return KY_OK;
}

extern "C" int kyi_sp_cg_gpu(kyi_csr_t *A, const double *b, double *x, const ky_cg_opts_t *o,
                             ky_cg_result_t *res)
{
    const char *call = "ky_cg";
    int multi = kyi_sp_multi(A);
    int kind = o->scheme == KY_CG_HALO || o->scheme == KY_CG_PIPELINED ? KYI_XCH_HALO : KYI_XCH_ALLGATHER;
    if (o->scheme == KY_CG_GRAPH && !multi) kind = KYI_XCH_ALLGATHER; /* one rank: nothing to exchange */
    kyi_sp_plan_t *P;
    gws_t *w;
    A->ag_algo = o->allgather_algo;
    KYI_CHECK(kyi_sp_plan_get(A, kind, &P));
    KYI_CHECK(kyi_sp_plan_set_algo(A, P, o->allgather_algo));
    KYI_CHECK(ws_get(A, &w));
    CU(cudaSetDevice(A->device));
    CU(cudaDeviceSynchronize()); /* the caller's b and x, written on any stream, are complete */
    if (o->scheme == KY_CG_PIPELINED) return pipelined_gpu(A, P, w, b, x, o, res);
    int n = (int)A->nloc;
    iter_t it;
    memset(&it, 0, sizeof it);
    it.A = A;
    it.P = P;
    it.w = w;
    it.x = x;
    it.pe = P->ext[0];
    it.p = P->ext[0] + P->loc_off;
    it.o = o;
    it.res = res;
    it.timers = o->timers && o->scheme != KY_CG_GRAPH;
    int sms = 132;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, A->device);
    it.gridv = (unsigned)((n + KYI_SP_BLOCK - 1) / KYI_SP_BLOCK);
    if (it.gridv > (unsigned)(8 * sms)) it.gridv = (unsigned)(8 * sms);
    if (it.gridv == 0) it.gridv = 1;
    double t0 = kyi_sp_now();

    /* r = b - A x, p = r, r'r */
    CU(cudaMemsetAsync(w->L, 0, 2 * sizeof(double), w->s));
    if (o->x0_zero) {
        CU(cudaMemsetAsync(x, 0, sizeof(double) * (size_t)(n > 0 ? n : 0), w->s));
        k_init<<<it.gridv, KYI_SP_BLOCK, 0, w->s>>>(n, b, NULL, w->r, it.p, w->L + 1);
    } else {
        CU(cudaMemcpyAsync(it.p, x, sizeof(double) * (size_t)n, cudaMemcpyDeviceToDevice, w->s));
        KYI_CHECK(exchange(A, P, w));
        KYI_CHECK(kyi_sp_gpu_spmv(A, P, it.pe, w->q, w->s));
        k_init<<<it.gridv, KYI_SP_BLOCK, 0, w->s>>>(n, b, w->q, w->r, it.p, w->L + 1);
    }
    CU(cudaGetLastError());
    KYI_CHECK(allreduce(w, 1));
    k_start<<<1, 1, 0, w->s>>>(w->S, multi ? w->S + 2 : w->L + 1);
    KYI_CHECK(read_state(w));
    res->norm0 = sqrt(w->h[3]);
    if (w->h[3] == 0.0 || !isfinite(w->h[3])) {
        res->t_total = kyi_sp_now() - t0;
        if (!isfinite(w->h[3])) {
            res->breakdown = 1;
            return kyi_fail(KY_ERR_ARG, call, "initial residual is not finite");
        }
        res->converged = 1;
        return KY_OK;
    }
    int check = o->rtol > 0 ? (o->check_every > 0 ? o->check_every : 10) : o->max_iters;
    res->launches_per_iter = 3 + (multi ? 2 : 0) + (multi && kind == KYI_XCH_ALLGATHER ? 1 : 0) +
                             (multi && kind == KYI_XCH_HALO ? 1 : 0);
    res->syncs_per_iter = multi && kind == KYI_XCH_HALO ? 1 : 0;
    if (w->staged) { /* device-to-host copies and synchronisations around every collective */
        res->launches_per_iter = 3 + (kind == KYI_XCH_HALO ? 1 : 0);
        res->syncs_per_iter = 3;
    }
    cudaGraphExec_t exec = NULL;
    if (o->scheme == KY_CG_GRAPH) {
        if (w->staged)
            return kyi_fail(KY_ERR_UNSUPPORTED, call,
                            "scheme 'graph': ranks share a GPU, so collectives go through the host and "
                            "cannot be captured");
        cudaGraph_t g = NULL;
        CU(cudaStreamBeginCapture(w->s, cudaStreamCaptureModeThreadLocal));
        w->capturing = 1; /* no trace events inside the graph: they are recorded around each launch */
        int st = iteration(&it);
        w->capturing = 0;
        cudaError_t e =
            cudaStreamEndCapture(w->s, &g); /* always: a failed start must not leave it capturing */
        if (st != KY_OK) {
            cudaGetLastError();
            if (e == cudaSuccess && g) cudaGraphDestroy(g);
            return st;
        }
        if (e != cudaSuccess) cudaGetLastError(); /* a failed capture must not fail the next call */
        if (e != cudaSuccess)
            return kyi_fail(KY_ERR_UNSUPPORTED, call,
                            "the iteration could not be captured in a CUDA graph (%s): the "
                            "collectives must run on the NVLink path",
                            cudaGetErrorString(e));
        CU(cudaGraphInstantiate(&exec, g, 0));
        cudaGraphDestroy(g);
        res->launches_per_iter = 1;
        res->syncs_per_iter = 0;
    }
    /* the iterations alone are timed, as the baselines time theirs; planning, the workspace, r0 and the
     * graph's capture are the set-up */
    double tl = kyi_sp_now();
    res->t_setup = tl - t0;
    gtrace_start(w);
    int done = 0, st = KY_OK;
    for (int k = 0; k < o->max_iters && !done && st == KY_OK;) {
        int chunk = o->max_iters - k < check ? o->max_iters - k : check;
        for (int j = 0; j < chunk && st == KY_OK; j++) {
            if (exec) {
                int ks = gspan_begin(w, "iteration (graph of K1, K2, K3)");
                cudaError_t e = cudaGraphLaunch(exec, w->s);
                gspan_end(w, ks);
                if (e != cudaSuccess)
                    st = kyi_fail(KY_ERR_CUDA, call, "cudaGraphLaunch: %s", cudaGetErrorString(e));
            } else {
                st = iteration(&it);
            }
        }
        k += chunk;
        if (st == KY_OK) st = read_state(w);
        if (st == KY_OK && w->h[4] != 0.0) done = 1;
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (st == KY_OK) gtrace_flush(w); /* read_state synchronised the stream */
    if (st != KY_OK) return st;
    res->t_total = kyi_sp_now() - tl;
    res->iterations = (int)w->h[5];
    double rr = multi ? w->h[2] : w->h[9];
    res->rel_residual = sqrt(rr / w->h[3]);
    res->converged = w->h[4] == 1.0;
    if (w->h[4] == 2.0) {
        res->breakdown = 1;
        return kyi_fail(KY_ERR_ARG, call,
                        "CG breakdown at iteration %d: %s = %g (the matrix is not positive definite)",
                        res->iterations + 1, isfinite(w->h[6]) ? "p'Ap" : "a value", w->h[6]);
    }
    return KY_OK;
}
