/* Kyoyu benchmark, GPU half of bench/coll (`coll --gpu`): collectives on GPU buffers of every rank's GPU,
 * beside NCCL (ncclAllReduce / ncclAllGather on the same buffers, same run; compiled in when the build found
 * nccl.h and libnccl: KY_BENCH_HAVE_NCCL) and MPI (MPI_Allreduce / MPI_Allgather on host buffers, and the
 * hand-staged user's path: cudaMemcpy to host, MPI on host, cudaMemcpy back; Open MPI need not be
 * CUDA-aware). Never creates NVLink multicast objects; run with NCCL_NVLS_ENABLE=0 (docs/benchmarks.md).
 *
 *   latency    8 B allreduce (one double) and 8 B-per-rank allgather, three ways per call: `sync` (start,
 * then cudaStreamSynchronize), `b2b` (back to back on one stream, one synchronisation at the end), `graph`
 * (the same starts captured in a CUDA graph, replayed); Kyoyu per algorithm through a plan, plus `blocking`
 * (ky_allreduce on GPU buffers). NCCL the same three ways. seed       seed 001's tables on GPU buffers:
 * allgather 16 B, 2 KiB, 128 KiB per rank, allreduce 8 B, every algorithm (host algorithms run staged through
 * pinned memory), blocking calls. sweep      -b .. -e: allreduce (doubles, sum) auto/oneshot/twoshot and
 * allgather (bytes per rank) auto, plans back to back, bus bandwidth (nccl-tests' formula) and the ratio to
 * NCCL. Time per call: the slowest rank's mean. Results checked once per point against NCCL (or MPI on host).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#ifdef KY_BENCH_HAVE_NCCL
#include <nccl.h>
static ncclComm_t nccl;
#endif

static int me, np;
static cudaStream_t st;
static FILE *json;

typedef enum { AR, AG } kind_t;
enum { M_SYNC, M_B2B, M_GRAPH, M_BLOCKING };
static const char *mode_name[] = {"sync", "b2b", "graph", "blocking"};

static double slowest(double t)
{
    double w = 0;
    MPI_Allreduce(&t, &w, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return w;
}

static double busbw(kind_t k, size_t bytes, double t)
{
    double f = (double)(np - 1) / np;
    return t > 0 ? (k == AR ? bytes / t * 2 * f : (double)bytes * np / t * f) / 1e9 : -1;
}

/* ---- one call of each contender -------------------------------------------------------------------------
 */

typedef struct {
    int who; /* 0 Kyoyu plan, 1 Kyoyu blocking, 2 NCCL, 3 MPI host, 4 MPI staged,
                5 the floor: an 8-byte cudaMemsetAsync, the cheapest operation on a stream */
    kind_t k;
    size_t bytes;
    void *s, *r;   /* GPU buffers */
    void *hs, *hr; /* host buffers (MPI) */
    ky_coll_plan_t plan;
} call_t;

static void one(call_t *c)
{
    size_t n = c->bytes / 8;
    switch (c->who) {
        case 0:
            BU_KY(ky_coll_start(c->plan, st));
            break;
        case 1:
            if (c->k == AR)
                BU_KY(ky_allreduce(c->s, c->r, n, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
            else
                BU_KY(ky_allgather(c->s, c->bytes, c->r, KY_TEAM_WORLD));
            break;
#ifdef KY_BENCH_HAVE_NCCL
        case 2:
            if (c->k == AR)
                ncclAllReduce(c->s, c->r, n, ncclDouble, ncclSum, nccl, st);
            else
                ncclAllGather(c->s, c->r, c->bytes, ncclInt8, nccl, st);
            break;
#endif
        case 3:
            if (c->k == AR)
                BU_MPI(MPI_Allreduce(c->hs, c->hr, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
            else
                BU_MPI(MPI_Allgather(c->hs, (int)c->bytes, MPI_BYTE, c->hr, (int)c->bytes, MPI_BYTE,
                                     MPI_COMM_WORLD));
            break;
        case 5:
            BU_CUDA(cudaMemsetAsync(c->r, 0, 8, st));
            break;
        default: /* the user without CUDA-aware MPI */
            BU_CUDA(cudaMemcpy(c->hs, c->s, c->bytes, cudaMemcpyDeviceToHost));
            if (c->k == AR)
                BU_MPI(MPI_Allreduce(c->hs, c->hr, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
            else
                BU_MPI(MPI_Allgather(c->hs, (int)c->bytes, MPI_BYTE, c->hr, (int)c->bytes, MPI_BYTE,
                                     MPI_COMM_WORLD));
            BU_CUDA(cudaMemcpy(c->r, c->hr, c->k == AR ? c->bytes : c->bytes * np, cudaMemcpyHostToDevice));
            break;
    }
}

/* Mean seconds per call on the slowest rank. Host-side contenders (3, 4) and blocking calls are complete
 * on return, so every mode is `sync` for them. */
static double timed(call_t *c, int mode, int it, int warm)
{
    if (c->who == 1 || c->who == 3 || c->who == 4) mode = M_SYNC;
    if (c->who == 0 && mode == M_GRAPH) {
        ky_coll_algo_t a = KY_ALGO_AUTO;
        ky_coll_plan_algo(c->plan, &a);
        if (a != KY_ALGO_ONESHOT && a != KY_ALGO_TWOSHOT) return -1; /* staged: needs the host, no graph */
    }
    for (int i = 0; i < warm; i++) one(c);
    BU_CUDA(cudaStreamSynchronize(st));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bu_now();
    if (mode == M_SYNC) {
        for (int i = 0; i < it; i++) {
            one(c);
            BU_CUDA(cudaStreamSynchronize(st));
        }
    } else if (mode == M_B2B) {
        for (int i = 0; i < it; i++) one(c);
        BU_CUDA(cudaStreamSynchronize(st));
    } else {
        int per = it < 100 ? it : 100, reps = (it + per - 1) / per;
        cudaGraph_t g;
        cudaGraphExec_t ex;
        BU_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < per; i++) one(c);
        BU_CUDA(cudaStreamEndCapture(st, &g));
        BU_CUDA(cudaGraphInstantiate(&ex, g, 0));
        BU_CUDA(cudaGraphLaunch(ex, st)); /* upload */
        BU_CUDA(cudaStreamSynchronize(st));
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = bu_now();
        for (int r = 0; r < reps; r++) BU_CUDA(cudaGraphLaunch(ex, st));
        BU_CUDA(cudaStreamSynchronize(st));
        double t = (bu_now() - t0) / ((double)reps * per);
        cudaGraphExecDestroy(ex);
        cudaGraphDestroy(g);
        return slowest(t);
    }
    return slowest((bu_now() - t0) / it);
}

/* ---- records ------------------------------------------------------------------------------------------- */

typedef struct {
    const char *bench, *op, *algo, *mode;
    size_t bytes;
    int iters;
    double ky, nccl, mpi_host, mpi_staged; /* seconds per call; < 0: not measured */
    double floor;                          /* the stream-operation floor of this mode (s); <= 0: none */
    int verified;
    kind_t k;
} rec_t;

/* Bandwidth floor of the sweep: one GPU-to-GPU copy engine transfer (cudaMemcpyPeerAsync, 64 MiB) from
 * rank 0's GPU to the next GPU, GB/s; a collective's bus bandwidth cannot exceed one link direction. 0:
 * not measured (one GPU visible). */
static double link_GBs;

static void measure_link(void)
{
    double v = 0;
    int ndev = 0, dev = -1;
    if (me == 0 && cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 1 &&
        cudaGetDevice(&dev) == cudaSuccess) {
        int peer = (dev + 1) % ndev, ok = 0;
        size_t n = (size_t)64 << 20;
        void *a = NULL, *b = NULL;
        cudaEvent_t e0, e1;
        if (cudaMalloc(&a, n) == cudaSuccess && cudaSetDevice(peer) == cudaSuccess &&
            cudaMalloc(&b, n) == cudaSuccess && cudaSetDevice(dev) == cudaSuccess &&
            cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess) {
            cudaDeviceEnablePeerAccess(peer, 0);
            (void)cudaGetLastError();
            for (int i = 0; i < 3; i++) cudaMemcpyPeerAsync(b, peer, a, dev, n, st);
            cudaEventRecord(e0, st);
            for (int i = 0; i < 10; i++) cudaMemcpyPeerAsync(b, peer, a, dev, n, st);
            cudaEventRecord(e1, st);
            float ms = 0;
            if (cudaEventSynchronize(e1) == cudaSuccess && cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess &&
                ms > 0)
                v = 10.0 * n / (ms * 1e-3) / 1e9, ok = 1;
            cudaEventDestroy(e0);
            cudaEventDestroy(e1);
        }
        if (a) cudaFree(a);
        if (b) {
            cudaSetDevice(peer);
            cudaFree(b);
            cudaSetDevice(dev);
        }
        (void)cudaGetLastError();
        if (ok)
            printf("# floor (bandwidth): cudaMemcpyPeerAsync GPU %d -> GPU %d, 64 MiB: %.1f GB/s\n", dev,
                   peer, v);
    }
    MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    link_GBs = v;
}

static void emit(const rec_t *r)
{
    double base = r->nccl > 0 ? r->nccl : r->mpi_staged;
    const char *bname = r->nccl > 0 ? (r->k == AR ? "ncclAllReduce" : "ncclAllGather") : "MPI_staged";
    if (me == 0) {
        printf("%10zu %-9s %-8s %6d %10.2f %9.2f %10.2f %9.2f %9.2f %10.2f %6.2f%s\n", r->bytes, r->algo,
               r->mode ? r->mode : "-", r->iters, r->ky * 1e6, busbw(r->k, r->bytes, r->ky),
               r->nccl > 0 ? r->nccl * 1e6 : -1, r->nccl > 0 ? busbw(r->k, r->bytes, r->nccl) : -1,
               r->mpi_host > 0 ? r->mpi_host * 1e6 : -1, r->mpi_staged > 0 ? r->mpi_staged * 1e6 : -1,
               base > 0 ? base / r->ky : -1, r->verified == 0 ? "  VERIFY FAILED" : "");
        fflush(stdout);
    }
    if (me != 0 || !json) return;
    char kcase[96];
    snprintf(kcase, sizeof kcase, "%s_%s_gpu%s%s", r->op, r->algo, r->mode ? "_" : "",
             r->mode ? r->mode : "");
    fprintf(json, "{\"bench\":\"%s\",\"case\":\"%s\",\"op\":\"%s\",\"mem\":\"gpu\",\"algo\":\"%s\",",
            r->bench, kcase, r->op, r->algo);
    if (r->mode) fprintf(json, "\"mode\":\"%s\",", r->mode);
    fprintf(json,
            "\"kind\":\"%s\",\"date\":\"%s\",\"version\":\"%s\",\"ranks\":%d,\"bytes\":%zu,\"iters\":%d,"
            "\"lat_us\":%.6g,\"bw_GBs\":%.6g,\"busbw_GBs\":%.6g",
            bu_machine(), bu_date(), ky_version(), np, r->bytes, r->iters, r->ky * 1e6,
            (r->k == AR ? r->bytes : r->bytes * np) / r->ky / 1e9, busbw(r->k, r->bytes, r->ky));
    if (base > 0)
        fprintf(json, ",\"baseline\":\"%s\",\"base_lat_us\":%.6g,\"base_bw_GBs\":%.6g,\"ratio\":%.6g", bname,
                base * 1e6, busbw(r->k, r->bytes, base), base / r->ky);
    fprintf(json, ",\"baselines\":{");
    int first = 1;
    if (r->nccl > 0) fprintf(json, "\"%s\":%.6g", bname, r->nccl * 1e6), first = 0;
    if (r->mpi_host > 0)
        fprintf(json, "%s\"%s\":%.6g", first ? "" : ",",
                r->k == AR ? "MPI_Allreduce_host" : "MPI_Allgather_host", r->mpi_host * 1e6),
            first = 0;
    if (r->mpi_staged > 0) fprintf(json, "%s\"MPI_staged\":%.6g", first ? "" : ",", r->mpi_staged * 1e6);
    fprintf(json, "}");
    if (r->floor > 0) fprintf(json, ",\"floor_us\":%.6g", r->floor * 1e6);
    if (!r->mode && link_GBs > 0 && r->bytes >= (1u << 20)) fprintf(json, ",\"floor_GBs\":%.6g", link_GBs);
    if (r->verified >= 0) fprintf(json, ",\"verified\":%s", r->verified ? "true" : "false");
    fprintf(json, "}\n");
    fflush(json);
}

static void header(const char *title)
{
    if (me != 0) return;
    printf(
        "\n# %s\n#   busbw: nccl-tests' bus bandwidth (GB/s); ratio = baseline time / Kyoyu time (> 1: Kyoyu "
        "faster), baseline = NCCL if built in, else MPI staged\n",
        title);
    printf("%10s %-9s %-8s %6s %10s %9s %10s %9s %9s %10s %6s\n", "bytes", "algo", "mode", "iters", "ky_us",
           "ky_busbw", "nccl_us", "nccl_bbw", "mpi_us", "staged_us", "ratio");
}

/* ---- the benchmark ------------------------------------------------------------------------------------- */

static void *g_s, *g_r, *g_ref, *h_s, *h_r;

/* Kyoyu's output equals the reference (NCCL on the same input, else MPI on the host copy). */
static int verify(kind_t k, size_t bytes)
{
    size_t out = k == AR ? bytes : bytes * np;
    call_t ref = {2, k, bytes, g_s, g_ref, h_s, h_r, NULL};
#ifndef KY_BENCH_HAVE_NCCL
    ref.who = 4;
#endif
    one(&ref);
    BU_CUDA(cudaStreamSynchronize(st));
    char *a = malloc(out), *b = malloc(out);
    BU_CUDA(cudaMemcpy(a, g_r, out, cudaMemcpyDeviceToHost));
    BU_CUDA(cudaMemcpy(b, g_ref, out, cudaMemcpyDeviceToHost));
    int ok = memcmp(a, b, out) == 0, all = 0;
    free(a);
    free(b);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* Latency floor per mode: what the cheapest stream operation costs the same way (launch, and for `sync`
 * the synchronisation): no collective on a stream can take less. */
static double lat_floor[M_BLOCKING + 1];

static void floors(const bu_opts_t *o)
{
    call_t f = {5, AR, 8, g_s, g_r, h_s, h_r, NULL};
    int it = bu_iters_for(o, 8, 5), warm = o->warmup < it ? o->warmup : it;
    for (int m = M_SYNC; m <= M_GRAPH; m++) lat_floor[m] = timed(&f, m, it, warm);
    lat_floor[M_BLOCKING] = lat_floor[M_SYNC];
    if (me == 0)
        printf("# floor (8-byte cudaMemsetAsync on the stream): sync %.2f us, b2b %.2f us, graph %.2f us\n",
               lat_floor[M_SYNC] * 1e6, lat_floor[M_B2B] * 1e6, lat_floor[M_GRAPH] * 1e6);
}

static void point(const bu_opts_t *o, const char *bench, kind_t k, int algo, int mode, size_t bytes,
                  int baselines)
{
    ky_coll_kind_t kk = k == AR ? KY_COLL_ALLREDUCE : KY_COLL_ALLGATHER;
    int it = bu_iters_for(o, k == AR ? bytes : bytes * np, 5), warm = o->warmup < it ? o->warmup : it;
    BU_KY(ky_coll_set_algo(kk, algo));
    call_t c = {mode == M_BLOCKING ? 1 : 0, k, bytes, g_s, g_r, h_s, h_r, NULL};
    if (c.who == 0) {
        if (k == AR)
            BU_KY(ky_allreduce_init(g_s, g_r, bytes / 8, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &c.plan));
        else
            BU_KY(ky_allgather_init(g_s, bytes, g_r, KY_TEAM_WORLD, &c.plan));
    }
    rec_t r = {bench,
               k == AR ? "allreduce" : "allgather",
               ky_coll_algo_name((ky_coll_algo_t)algo),
               strcmp(bench, "coll_lat") ? NULL : mode_name[mode],
               bytes,
               it,
               0,
               -1,
               -1,
               -1,
               strcmp(bench, "coll_lat") ? 0 : lat_floor[mode],
               -1,
               k};
    BU_CUDA(cudaMemset(g_r, 0, k == AR ? bytes : bytes * np));
    r.ky = timed(&c, mode, it, warm);
    if (r.ky < 0) {
        if (me == 0)
            printf("%10zu %-9s %-8s   (staged path: cannot be captured in a graph, skipped)\n", bytes, r.algo,
                   r.mode);
        BU_KY(ky_coll_free(c.plan));
        BU_KY(ky_coll_set_algo(kk, KY_ALGO_AUTO));
        return;
    }
    r.verified = o->check ? verify(k, bytes) : -1;
    if (c.plan) {
        ky_coll_algo_t got;
        ky_coll_plan_algo(c.plan, &got);
        if (algo != KY_ALGO_AUTO && (int)got != algo) r.algo = ky_coll_algo_name(got);
        BU_KY(ky_coll_free(c.plan));
    }
    BU_KY(ky_coll_set_algo(kk, KY_ALGO_AUTO));
#ifdef KY_BENCH_HAVE_NCCL
    call_t n = {2, k, bytes, g_s, g_ref, h_s, h_r, NULL};
    r.nccl = timed(&n, mode == M_BLOCKING ? M_SYNC : mode, it, warm);
#endif
    if (baselines) {
        call_t m = {3, k, bytes, g_s, g_ref, h_s, h_r, NULL}, sg = {4, k, bytes, g_s, g_ref, h_s, h_r, NULL};
        r.mpi_host = timed(&m, M_SYNC, it, warm);
        r.mpi_staged = timed(&sg, M_SYNC, it, warm);
    }
    emit(&r);
}

int coll_gpu_main(const bu_opts_t *o)
{
    me = ky_rank();
    np = ky_nranks();
    int dev = -1, have = ky_ngpus() > 0 && ky_gpu_device(0, &dev) == KY_OK, all = 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (me == 0) printf("coll --gpu: no GPU for every rank (or built without CUDA): skipped\n");
        return 0;
    }
    BU_CUDA(cudaSetDevice(dev));
    BU_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    if (o->json && me == 0) json = fopen(o->json, "a");
    size_t maxb = o->maxbytes < (128u << 10) ? (128u << 10) : o->maxbytes;
    size_t cap = maxb * (size_t)np;
    BU_CUDA(cudaMalloc(&g_s, maxb));
    BU_CUDA(cudaMalloc(&g_r, cap));
    BU_CUDA(cudaMalloc(&g_ref, cap));
    BU_CUDA(cudaMallocHost(&h_s, maxb));
    BU_CUDA(cudaMallocHost(&h_r, cap));
    double *init = malloc(maxb);
    for (size_t i = 0; i < maxb / 8; i++) init[i] = (double)((i * 7 + (size_t)me * 13) % 101);
    BU_CUDA(cudaMemcpy(g_s, init, maxb, cudaMemcpyHostToDevice));
    memcpy(h_s, init, maxb);
    free(init);
#ifdef KY_BENCH_HAVE_NCCL
    ncclUniqueId id;
    if (me == 0) ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (ncclCommInitRank(&nccl, np, id, me) != ncclSuccess)
        bu_die(__FILE__, __LINE__, "ncclCommInitRank failed");
    const char *nccl_note = "NCCL: built in";
#else
    const char *nccl_note = "NCCL: absent (nccl.h/libnccl not found at build time): baseline = MPI staged";
#endif
    if (me == 0)
        printf(
            "# Kyoyu %s coll --gpu: kind %s, date %s, %d ranks, GPU %d each, KY_NODE_SPLIT=%s, "
            "NCCL_NVLS_ENABLE=%s; %s\n",
            ky_version(), bu_machine(), bu_date(), np, dev,
            getenv("KY_NODE_SPLIT") ? getenv("KY_NODE_SPLIT") : "node",
            getenv("NCCL_NVLS_ENABLE") ? getenv("NCCL_NVLS_ENABLE") : "(unset: set it to 0)", nccl_note);

    /* latency: 8 B, per algorithm and mode */
    static const int ar_lat[] = {KY_ALGO_ONESHOT, KY_ALGO_TWOSHOT, KY_ALGO_AUTO};
    header("latency: allreduce of 8 B (one double, sum) and allgather of 8 B per rank");
    floors(o);
    for (int m = M_SYNC; m <= M_BLOCKING; m++)
        for (size_t a = 0; a < 3; a++) point(o, "coll_lat", AR, ar_lat[a], m, 8, m == M_SYNC && a == 2);
    for (int m = M_SYNC; m <= M_BLOCKING; m++)
        for (size_t a = 0; a < 3; a += 2) point(o, "coll_lat", AG, ar_lat[a], m, 8, m == M_SYNC && a == 2);

    /* seed tables: every algorithm, blocking calls */
    static const int ag_algos[] = {KY_ALGO_ONESHOT, KY_ALGO_RING,  KY_ALGO_NEIGHBOR,
                                   KY_ALGO_RD,      KY_ALGO_BRUCK, KY_ALGO_AUTO};
    static const int ar_algos[] = {KY_ALGO_ONESHOT, KY_ALGO_TWOSHOT, KY_ALGO_RING,         KY_ALGO_NEIGHBOR,
                                   KY_ALGO_RD,      KY_ALGO_BRUCK,   KY_ALGO_REDUCE_BCAST, KY_ALGO_AUTO};
    static const size_t seed_sizes[] = {16, 2048, 128u << 10};
    header(
        "seed table: allgather 16 B, 2 KiB, 128 KiB per rank, every algorithm (blocking ky_allgather; host "
        "algorithms are staged through pinned memory)");
    for (size_t i = 0; i < 3; i++)
        for (size_t a = 0; a < sizeof ag_algos / sizeof *ag_algos; a++)
            point(o, "coll_seed", AG, ag_algos[a], M_BLOCKING, seed_sizes[i], a == 0);
    header("seed table: allreduce of 8 B, every algorithm (blocking ky_allreduce)");
    for (size_t a = 0; a < sizeof ar_algos / sizeof *ar_algos; a++)
        point(o, "coll_seed", AR, ar_algos[a], M_BLOCKING, 8, a == 0);

    /* bandwidth sweep: plans back to back */
    measure_link();
    static const int sw_ar[] = {KY_ALGO_AUTO, KY_ALGO_ONESHOT, KY_ALGO_TWOSHOT};
    header("sweep: allreduce (doubles, sum), bytes = vector; Kyoyu plans back to back, NCCL the same");
    for (size_t b = o->minbytes < 8 ? 8 : o->minbytes; b <= o->maxbytes; b = (size_t)(b * o->factor + 0.5))
        for (size_t a = 0; a < 3; a++)
            if (!(sw_ar[a] == KY_ALGO_ONESHOT && b > (64u << 20)))
                point(o, "coll", AR, sw_ar[a], M_B2B, b & ~(size_t)7, a == 0 && b <= (64u << 20));
    header("sweep: allgather, bytes = per rank; Kyoyu plans back to back, NCCL the same");
    for (size_t b = o->minbytes < 8 ? 8 : o->minbytes; b <= o->maxbytes; b = (size_t)(b * o->factor + 0.5))
        point(o, "coll", AG, KY_ALGO_AUTO, M_B2B, b, b <= (64u << 20));

#ifdef KY_BENCH_HAVE_NCCL
    ncclCommDestroy(nccl);
#endif
    if (json) fclose(json);
    cudaFree(g_s);
    cudaFree(g_r);
    cudaFree(g_ref);
    cudaFreeHost(h_s);
    cudaFreeHost(h_r);
    cudaStreamDestroy(st);
    return 0;
}
