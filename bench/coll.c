/* Kyoyu benchmark: collectives on host buffers (docs/benchmarks.md), any number of ranks.
 *
 * Part 1, the seed's tables (seed 001, tables 3 and 4): allgather with 16 B, 2 KiB and 128 KiB per rank and
 * allreduce of 8 B (one double, KY_SUM), for every algorithm (forced with ky_coll_set_algo) and auto, with
 * MPI_Allgather / MPI_Allreduce measured in the same run.
 * Part 2, curves -b .. -e (step -f): allreduce (doubles, sum; bytes = the vector), allgather (bytes = one
 * rank's block), bcast and reduce (doubles, sum; root 0; bytes = the buffer) with the automatic choice,
 * beside MPI; bandwidth is nccl-tests' bus bandwidth (allreduce: bytes/t * 2(p-1)/p; allgather:
 * p*bytes/t * (p-1)/p; bcast and reduce: bytes/t).
 * Time per call: the slowest rank's mean over -n back-to-back calls after -w warm-up calls (each set
 * entered after an MPI_Barrier). Data is checked against MPI's result once per point (-c 1).
 * Only the public API and MPI. --gpu (or --mem gpu): GPU buffers beside NCCL and staged MPI (coll_gpu.c). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

static int me, np;

#ifdef KY_BENCH_HAVE_CUDA
int coll_gpu_main(const bu_opts_t *o);
#endif

typedef enum { K_ALLREDUCE, K_ALLGATHER, K_BCAST, K_REDUCE } kind_t;
static const char *const kind_op[] = {"allreduce", "allgather", "bcast", "reduce"};
static const char *const kind_mpi[] = {"MPI_Allreduce", "MPI_Allgather", "MPI_Bcast", "MPI_Reduce"};

/* Mean seconds per call on the slowest rank. algo < 0: MPI. */
static double run(kind_t k, int algo, size_t bytes, void *s, void *r, int it, int warm)
{
    int forced = algo >= 0 && (k == K_ALLREDUCE || k == K_ALLGATHER); /* bcast and reduce: auto only */
    if (forced) BU_KY(ky_coll_set_algo(k == K_ALLREDUCE ? KY_COLL_ALLREDUCE : KY_COLL_ALLGATHER, algo));
    size_t n = bytes / 8;
    double t0 = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < warm + it; i++) {
        if (i == warm) t0 = bu_now();
        switch (k) {
            case K_ALLREDUCE:
                if (algo >= 0)
                    BU_KY(ky_allreduce(s, r, n, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
                else
                    BU_MPI(MPI_Allreduce(s, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
                break;
            case K_ALLGATHER:
                if (algo >= 0)
                    BU_KY(ky_allgather(s, bytes, r, KY_TEAM_WORLD));
                else
                    BU_MPI(MPI_Allgather(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, MPI_COMM_WORLD));
                break;
            case K_BCAST:
                if (algo >= 0)
                    BU_KY(ky_bcast(r, bytes, 0, KY_TEAM_WORLD));
                else
                    BU_MPI(MPI_Bcast(r, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD));
                break;
            case K_REDUCE:
                if (algo >= 0)
                    BU_KY(ky_reduce(s, r, n, KY_DOUBLE, KY_SUM, 0, KY_TEAM_WORLD));
                else
                    BU_MPI(MPI_Reduce(s, r, (int)n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
                break;
        }
    }
    double t = (bu_now() - t0) / it, worst = 0;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (forced)
        BU_KY(ky_coll_set_algo(k == K_ALLREDUCE ? KY_COLL_ALLREDUCE : KY_COLL_ALLGATHER, KY_ALGO_AUTO));
    return worst;
}

/* Kyoyu's result equals MPI's on every rank (exact: small integers). */
static int verify(kind_t k, int algo, size_t bytes, void *s, void *r, void *ref)
{
    size_t out = k == K_ALLGATHER ? bytes * (size_t)np : bytes;
    memset(r, 0xee, out);
    memset(ref, 0xdd, out);
    if (k == K_BCAST && me == 0) memcpy(r, s, bytes), memcpy(ref, s, bytes); /* the root's data */
    run(k, algo, bytes, s, r, 1, 0);
    run(k, -1, bytes, s, ref, 1, 0);
    int ok = (k == K_REDUCE && me != 0) || memcmp(r, ref, out) == 0, all = 0; /* reduce: the root's result */
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static double busbw(kind_t k, size_t bytes, double t)
{
    if (t <= 0) return -1;
    double f = (double)(np - 1) / np;
    if (k == K_BCAST || k == K_REDUCE) return bytes / t / 1e9;
    return k == K_ALLREDUCE ? bytes / t * 2 * f / 1e9 : (double)bytes * np / t * f / 1e9;
}

static void point(const bu_opts_t *o, const char *bench, kind_t k, int algo, size_t bytes, void *s, void *r,
                  void *ref)
{
    size_t eff = bytes * (size_t)np;
    int it = bu_iters_for(o, eff, 5);
    int warm = o->warmup < it ? o->warmup : it;
    double tk = run(k, algo, bytes, s, r, it, warm);
    double tm = run(k, -1, bytes, s, ref, it, warm);
    bu_point_t p;
    bu_point_init(&p);
    char kcase[64];
    const char *op = kind_op[k];
    snprintf(kcase, sizeof kcase, "%s_%s_host", op, ky_coll_algo_name((ky_coll_algo_t)algo));
    p.bench = bench;
    p.kcase = kcase;
    p.op = op;
    p.mem = "host";
    p.ranks = np;
    p.bytes = bytes;
    p.iters = it;
    p.lat_us = tk * 1e6;
    p.bw_GBs = busbw(k, bytes, tk);
    p.baseline = kind_mpi[k];
    p.base_lat_us = tm * 1e6;
    p.base_bw_GBs = busbw(k, bytes, tm);
    p.ratio = tm / tk;
    p.verified = o->check ? verify(k, algo, bytes, s, r, ref) : -1;
    bu_table_row(&p);
    bu_json_write(o, &p);
}

int main(int argc, char **argv)
{
    BU_KY(ky_init(&argc, &argv));
    me = ky_rank();
    np = ky_nranks();
    bu_opts_t o;
    /* --gpu is --mem gpu */
    int gpu = 0, k = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--gpu"))
            gpu = 1;
        else
            argv[k++] = argv[i];
    }
    argc = k;
    if (bu_parse(
            argc, argv, &o, "coll",
            "coll: -b/-e/-f set the curves (part 2); the seed tables always run; --gpu: GPU buffers, with "
            "NCCL and staged MPI\n")) {
        ky_finalize();
        return 2;
    }
    if (gpu) o.mem = KY_MEM_GPU;
    if (o.mem != KY_MEM_HOST) {
#ifdef KY_BENCH_HAVE_CUDA
        int rc = coll_gpu_main(&o);
        BU_KY(ky_finalize());
        return rc;
#else
        if (me == 0) printf("coll --gpu: built without CUDA: skipped\n");
        ky_finalize();
        return 0;
#endif
    }
    size_t maxb = o.maxbytes < (128u << 10) ? (128u << 10) : o.maxbytes;
    size_t cap = maxb * (size_t)np;
    double *s = malloc(maxb), *r = malloc(cap), *ref = malloc(cap);
    if (!s || !r || !ref) bu_die(__FILE__, __LINE__, "no memory for %zu-byte buffers", cap);
    for (size_t i = 0; i < maxb / 8; i++) s[i] = (double)((i * 7 + (size_t)me * 13) % 101);
    if (me == 0)
        printf("# Kyoyu %s coll: kind %s, date %s, %d ranks, host memory, KY_NODE_SPLIT=%s\n", ky_version(),
               bu_machine(), bu_date(), np, getenv("KY_NODE_SPLIT") ? getenv("KY_NODE_SPLIT") : "node");

    /* Part 1: the seed's tables. */
    /* shm: the shared-memory path where the team is on one node (elsewhere forcing it gives auto's choice) */
    static const ky_coll_algo_t ag_algos[] = {KY_ALGO_RING,  KY_ALGO_NEIGHBOR, KY_ALGO_RD,
                                              KY_ALGO_BRUCK, KY_ALGO_SHM,      KY_ALGO_AUTO};
    static const ky_coll_algo_t ar_algos[] = {KY_ALGO_RING,  KY_ALGO_NEIGHBOR,     KY_ALGO_RD,
                                              KY_ALGO_BRUCK, KY_ALGO_REDUCE_BCAST, KY_ALGO_SHM,
                                              KY_ALGO_AUTO};
    static const size_t seed_sizes[] = {16, 2048, 128u << 10};
    for (size_t a = 0; a < sizeof ag_algos / sizeof *ag_algos; a++) {
        char title[128];
        snprintf(title, sizeof title,
                 "seed table: allgather %s, bytes per rank (neighbor on odd p runs ring)",
                 ky_coll_algo_name(ag_algos[a]));
        bu_table_header(title, "MPI_Allgather", "none; GB/s = bus bandwidth");
        for (size_t i = 0; i < 3; i++)
            point(&o, "coll_seed", K_ALLGATHER, ag_algos[a], seed_sizes[i], s, r, ref);
    }
    bu_table_header(
        "seed table: allreduce of 8 B (one double, sum), one row per algorithm: ring, neighbor, rd, "
        "bruck, reduce_bcast, shm, auto",
        "MPI_Allreduce", "none");
    for (size_t a = 0; a < sizeof ar_algos / sizeof *ar_algos; a++)
        point(&o, "coll_seed", K_ALLREDUCE, ar_algos[a], 8, s, r, ref);

    /* Part 2: curves with the automatic choice. */
    bu_table_header("allreduce auto (doubles, sum), bytes = vector", "MPI_Allreduce",
                    "none; GB/s = bus bandwidth");
    for (size_t b = o.minbytes < 8 ? 8 : o.minbytes; b <= o.maxbytes; b = (size_t)(b * o.factor + 0.5))
        point(&o, "coll", K_ALLREDUCE, KY_ALGO_AUTO, b & ~(size_t)7, s, r, ref);
    bu_table_header("allgather auto, bytes = per rank", "MPI_Allgather", "none; GB/s = bus bandwidth");
    for (size_t b = o.minbytes; b <= o.maxbytes; b = (size_t)(b * o.factor + 0.5))
        point(&o, "coll", K_ALLGATHER, KY_ALGO_AUTO, b, s, r, ref);
    bu_table_header("bcast auto, root 0, bytes = buffer", "MPI_Bcast",
                    "none; GB/s = bus bandwidth (bytes/t)");
    for (size_t b = o.minbytes; b <= o.maxbytes; b = (size_t)(b * o.factor + 0.5))
        point(&o, "coll", K_BCAST, KY_ALGO_AUTO, b, s, r, ref);
    bu_table_header("reduce auto (doubles, sum), root 0, bytes = vector", "MPI_Reduce",
                    "none; GB/s = bus bandwidth (bytes/t)");
    for (size_t b = o.minbytes < 8 ? 8 : o.minbytes; b <= o.maxbytes; b = (size_t)(b * o.factor + 0.5))
        point(&o, "coll", K_REDUCE, KY_ALGO_AUTO, b & ~(size_t)7, s, r, ref);

    free(s);
    free(r);
    free(ref);
    BU_KY(ky_finalize());
    return 0;
}
