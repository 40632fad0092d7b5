/* ky_stencil_gpu: options, the Kyoyu-array variant (c), runs, checks and output (table + JSON lines).
 *
 *   ky_stencil_gpu [--nx N] [--ny N] [--nz N] [--pts 7|27|both] [--bt K] [--steps T] [--variants adbc]
 *                  [--weak] [--check] [--small] [--phases 0|1] [--blocks-per-rank K] [--roofline GBs]
 *                  [--json FILE] [--overlap 0|1] [--tb K] [--tb-tile 8x4|8x2|4x4|16x2|16x1|32x1|12x2]
 *
 * --weak: --nz is per GPU (NZ = nz * GPUs) and rank 0 also runs the per-GPU problem alone, giving the
 * weak-scaling efficiency t(1 GPU) / t(variant). --check: every variant's result is compared with a
 * single-GPU run of the whole grid (identical bits) and, up to 4M points, with the CPU version. --small:
 * 64 x 48 x (12 per GPU), 8 steps, checked (the ctest case). --blocks-per-rank K: variant (c) only, one
 * rank driving K GPUs from OpenMP threads (run with KY_GPUS_PER_RANK=K). --overlap 1: variant (c)
 * computes the interior while ky_array_halo_exchange_begin/_end move the halos (overlap.cu; its phase
 * columns come from a run without overlap, where the phases can be told apart); default: where the job
 * spans several (logical) nodes. --tb K: K steps per pass through memory (tblock.cu; bt a multiple of K, the
 * checked reference stays the single-step kernel; --zchunk -1: persistent blocks, see tblock_kernels.cuh;
 * --tb-unroll 0: the first blocked kernels, k_tb7 and k_tb27, instead of k_tb7u and k_tb27u; --tb-kernel
 * staged: the 27-point stencil by k_tb27s, tblock27s.cuh, tb 1..3 with its own tiles 8x2, 10x2, 12x2, 6x3,
 * 8x3, 6x4 (tblock.cu says which at which tb); tb 1 then runs k_tb27s as a single-step kernel).
 * --roofline 0: measure the device copy bandwidth first.
 * Exit status 77 without a GPU. */
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <kyoyu.h>

#include "stencil_gpu.h"

typedef struct {
    sg_prob_t p;
    int pts_both, weak, check, phases, bpr, overlap;
    double roofline;
    const char *variants, *json;
} opts_t;

static int me, nr;
static int wrong; /* rank 0: a variant's result differed */

static void usage_text(FILE *out)
{
    fprintf(out,
            "usage: ky_stencil_gpu [--nx N] [--ny N] [--nz N] [--pts 7|27|both] [--bt K] [--steps T]\n"
            "       [--variants abcd] [--weak] [--check] [--small] [--phases 0|1] [--blocks-per-rank K]\n"
            "       [--roofline GBs] [--json FILE] [--zchunk PLANES] [--block-y 2|4|8]\n"
            "       [--rows 0|1|2|4] [--smem 0|1|4|8] [--overlap 0|1] [--tb 1|2|3|4]\n"
            "       [--tb-tile 8x4|8x2|4x4|16x2|16x1|32x1|12x2] [--tb-unroll 0|1]\n"
            "       [--tb-kernel unrolled|first|staged]\n");
}

static void usage(void)
{
    if (me == 0) usage_text(stderr);
}

/* --tb-tile: the blocked kernels' shapes (tblock.cu) */
static int tile_ok(int by, int rows, int staged)
{
    if (staged) /* k_tb27s (tblock.cu: which tile at which tb) */
        return (by == 0 && rows == 0) || (rows == 2 && (by == 8 || by == 10 || by == 12)) ||
               (by == 6 && (rows == 3 || rows == 4)) || (by == 8 && rows == 3);
    return (by == 0 && rows == 0) || (by == 8 && (rows == 4 || rows == 2)) || (by == 4 && rows == 4) ||
           (by == 16 && (rows == 2 || rows == 1)) || (by == 32 && rows == 1) || (by == 12 && rows == 2);
}

static int parse(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->p = (sg_prob_t){256, 256, 256, 7, 4, 32, 0, 0, -1, -1, 1, 0, 0}; /* 0/-1: tuned per stencil */
    o->pts_both = 1;
    o->phases = 1;
    o->bpr = 1;
    o->overlap = -1;
    o->roofline = 4300.0; /* H200 device-to-device copy, read + write, GB/s */
    o->variants = "adbc"; /* kyoyu last: its ratios to (a) and (d) come from the same launch */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEXT() (v ? (i++, v) : (usage(), (const char *)NULL))
        if (!strcmp(a, "--weak"))
            o->weak = 1;
        else if (!strcmp(a, "--check"))
            o->check = 1;
        else if (!strcmp(a, "--small")) {
            o->p.nx = 64;
            o->p.ny = 48;
            o->p.nz = 12;
            o->p.steps = 8;
            o->weak = 1;
            o->check = 1;
        } else if (!strcmp(a, "--nx") && NEXT())
            o->p.nx = atoi(v);
        else if (!strcmp(a, "--ny") && NEXT())
            o->p.ny = atoi(v);
        else if (!strcmp(a, "--nz") && NEXT())
            o->p.nz = atoi(v);
        else if (!strcmp(a, "--overlap") && NEXT())
            o->overlap = atoi(v);
        else if (!strcmp(a, "--bt") && NEXT())
            o->p.bt = atoi(v);
        else if (!strcmp(a, "--steps") && NEXT())
            o->p.steps = atoi(v);
        else if (!strcmp(a, "--pts") && NEXT()) {
            o->pts_both = !strcmp(v, "both");
            o->p.pts = atoi(v) == 27 ? 27 : 7;
        } else if (!strcmp(a, "--variants") && NEXT())
            o->variants = v;
        else if (!strcmp(a, "--phases") && NEXT())
            o->phases = atoi(v);
        else if (!strcmp(a, "--blocks-per-rank") && NEXT())
            o->bpr = atoi(v);
        else if (!strcmp(a, "--roofline") && NEXT())
            o->roofline = atof(v);
        else if (!strcmp(a, "--zchunk") && NEXT())
            o->p.zchunk = atoi(v);
        else if (!strcmp(a, "--block-y") && NEXT())
            o->p.block_y = atoi(v);
        else if (!strcmp(a, "--rows") && NEXT())
            o->p.rows = atoi(v);
        else if (!strcmp(a, "--smem") && NEXT())
            o->p.smem = atoi(v);
        else if (!strcmp(a, "--tb") && NEXT())
            o->p.tb = atoi(v);
        else if (!strcmp(a, "--tb-unroll") && NEXT())
            o->p.tb_rolled = atoi(v) == 0;
        else if (!strcmp(a, "--tb-kernel") &&
                 NEXT()) { /* unrolled (default), first (= --tb-unroll 0), staged */
            o->p.tb_rolled = !strcmp(v, "first");
            o->p.tb_staged = !strcmp(v, "staged");
            if (!o->p.tb_rolled && !o->p.tb_staged && strcmp(v, "unrolled")) o->p.tb_by = -1; /* usage */
        } else if (!strcmp(a, "--tb-tile") && NEXT()) {
            if (sscanf(v, "%dx%d", &o->p.tb_by, &o->p.tb_rows) != 2) o->p.tb_by = -1;
        } else if (!strcmp(a, "--json") && NEXT())
            o->json = v;
        else {
            usage();
            return 1;
        }
#undef NEXT
    }
    if (o->p.bt < 1 || o->p.steps < 1 || o->p.nx < 3 || o->p.ny < 3 || o->bpr < 1 || o->p.zchunk < -1 ||
        (o->p.block_y != 0 && o->p.block_y != 2 && o->p.block_y != 4 && o->p.block_y != 8) ||
        (o->p.rows != -1 && o->p.rows != 0 && o->p.rows != 1 && o->p.rows != 2 && o->p.rows != 4) ||
        (o->p.smem < -1 || o->p.smem > 8 || (o->p.smem > 1 && o->p.smem != 4 && o->p.smem != 8)) ||
        o->p.tb < 1 || o->p.tb > 4 || !tile_ok(o->p.tb_by, o->p.tb_rows, o->p.tb_staged) || o->roofline < 0 ||
        (o->p.tb_staged && o->p.tb > 3)) {
        usage();
        return 1;
    }
    if (o->p.smem > 0 && (o->p.nx % 2 || o->p.block_y == 2 || o->p.rows == 0 || o->p.rows == 1)) {
        fprintf(stderr, "ky_stencil_gpu: --smem needs an even --nx, --block-y 4 or 8 and --rows 2 or 4\n");
        return 1;
    }
    if (o->p.bt % o->p.tb) {
        fprintf(
            stderr,
            "ky_stencil_gpu: --bt %d is not a multiple of --tb %d (one exchange of bt halo planes feeds bt "
            "steps in bt / tb passes)\n",
            o->p.bt, o->p.tb);
        return 1;
    }
    o->p.steps = (o->p.steps + o->p.bt - 1) / o->p.bt * o->p.bt; /* whole bt blocks */
    if (o->bpr > 1) o->variants = "c";
    return 0;
}

static void sub_alloc(const sg_prob_t *p, sg_sub_t *d, int z0, int nz, int has_lo, int has_hi, int dev)
{
    memset(d, 0, sizeof *d);
    d->z0 = z0;
    d->nz = nz;
    d->h = p->bt;
    d->dev = dev;
    d->has_lo = has_lo;
    d->has_hi = has_hi;
    size_t n = (size_t)(nz + 2 * p->bt) * sg_plane(p);
    SG_CUDA(cudaSetDevice(dev));
    SG_CUDA(cudaMalloc((void **)&d->src, n * sizeof(double)));
    SG_CUDA(cudaMalloc((void **)&d->dst, n * sizeof(double)));
    SG_CUDA(cudaStreamCreateWithFlags(&d->s, cudaStreamNonBlocking));
}

static void sub_free(sg_sub_t *d)
{
    cudaFree(d->src);
    cudaFree(d->dst);
    cudaStreamDestroy(d->s);
}

/* Owned planes of d, current src, into host a (nz planes). */
static void sub_read(const sg_prob_t *p, const sg_sub_t *d, double *a)
{
    SG_CUDA(cudaSetDevice(d->dev));
    SG_CUDA(cudaMemcpy(a, d->src + (size_t)d->h * sg_plane(p), (size_t)d->nz * sg_plane(p) * sizeof(double),
                       cudaMemcpyDeviceToHost));
}

/* ---- variant (c): Kyoyu GPU arrays ------------------------------------------------------------------ */
static ky_array_t kyA, kyB;

/* gather: every rank takes part in collecting the grid into result (significant on rank 0 only; the other
 * ranks pass NULL, so the decision cannot be `result != NULL`: that left rank 0 alone in the collective). */
static double run_kyoyu(const opts_t *o, const sg_prob_t *p, int phased, sg_phase_t *ph, int gather,
                        double *result)
{
    size_t dims[3] = {(size_t)p->nz, (size_t)p->ny, (size_t)p->nx};
    int halo[3] = {p->bt, 0, 0};
    ky_dist_t dist = ky_dist_block1();
    dist.blocks_per_rank = o->bpr;
    /* The arrays are created at the first run of a problem and reused, so the timed runs replay the halo
     * plan the warm-up made (kyoyu_release frees them). */
    if (!kyA) {
        SG_KY(ky_array_create(3, dims, sizeof(double), &dist, KY_PLACE_GPU, halo, &kyA));
        SG_KY(ky_array_create(3, dims, sizeof(double), &dist, KY_PLACE_GPU, halo, &kyB));
    }
    ky_array_t A_ = kyA, B_ = kyB;
    int nl = ky_array_nlocal(A_);
    sg_sub_t d[16];
    void *streams[16];
    size_t P = sg_plane(p);
    for (int k = 0; k < nl; k++) {
        void *a, *b;
        size_t lo[3], hi[3];
        SG_KY(ky_array_local_n(A_, k, &a, lo, hi));
        SG_KY(ky_array_local_n(B_, k, &b, NULL, NULL));
        memset(&d[k], 0, sizeof d[k]);
        d[k].src = (double *)a - (size_t)p->bt * P; /* allocation start: the halo planes come first */
        d[k].dst = (double *)b - (size_t)p->bt * P;
        d[k].z0 = (int)lo[0];
        d[k].nz = (int)(hi[0] - lo[0]);
        d[k].h = p->bt;
        d[k].has_lo = lo[0] > 0;
        d[k].has_hi = hi[0] < dims[0];
        SG_KY(ky_array_device(A_, k, &d[k].dev));
        SG_CUDA(cudaSetDevice(d[k].dev));
        SG_CUDA(cudaStreamCreateWithFlags(&d[k].s, cudaStreamNonBlocking));
        streams[k] = d[k].s;
        sg_init_sub(p, &d[k]);
        SG_CUDA(cudaStreamSynchronize(d[k].s));
    }
    double *baseA = d[0].src;
    /* overlap: every rank decides the same (the exchange's halves are collective) */
    /* auto: where some neighbour is on another node; inside a node the exchange (NVLink) costs less than
     * the edges' extra copies and recomputation (97% against 100% on one H200, 7-point) */
    int want = o->overlap < 0 ? ky_nnodes() > 1 : o->overlap;
    int ov = want && !phased, all_ok = 1;
    for (int k = 0; k < nl; k++) all_ok &= sg_overlap_ok(p, &d[k]);
    MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ov &= all_ok;
    sg_edges_t e[16];
    if (ov)
        for (int k = 0; k < nl; k++) sg_edges_alloc(p, &d[k], &e[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = sg_now();
    for (int t = 0; t < p->steps && ov; t += p->bt) {
        double *A[16];
        ky_array_t cur = d[0].src == baseA ? A_ : B_;
        for (int k = 0; k < nl; k++) {
            A[k] = d[k].src;
            sg_inner_steps(p, &d[k], &e[k]);
        }
        SG_KY(ky_array_halo_exchange_begin_n(cur, streams)); /* waits for the previous block's edges */
        SG_KY(ky_array_halo_exchange_end(cur));
        for (int k = 0; k < nl; k++) sg_edge_steps(p, &d[k], &e[k], A[k]);
    }
    for (int t = 0; t < p->steps && !ov; t += p->bt) {
        double c0 = sg_now();
#pragma omp parallel for num_threads(nl) if (nl > 1)
        for (int k = 0; k < nl; k++) { /* the seed's model: one thread drives each GPU */
            sg_block_steps(p, &d[k]);
            if (phased) SG_CUDA(cudaStreamSynchronize(d[k].s));
        }
        double c1 = sg_now();
        if (phased) ph->compute += c1 - c0;
        ky_array_t cur = d[0].src == baseA ? A_ : B_;
        SG_KY(ky_array_halo_exchange_n(cur, streams)); /* waits for each stream's kernels first */
        ph->gpu_halo += sg_now() - c1;
    }
    for (int k = 0; k < nl; k++) SG_CUDA(cudaStreamSynchronize(d[k].s));
    double el = sg_now() - t0;
    if (gather) { /* the whole grid through region get: rank 0 reads every owner's block */
        ky_array_t cur = d[0].src == baseA ? A_ : B_;
        SG_KY(ky_comm_barrier());
        size_t lo[3] = {0, 0, 0};
        if (me == 0) SG_KY(ky_array_get(cur, lo, dims, result));
        SG_KY(ky_comm_barrier());
    }
    for (int k = 0; k < nl; k++) {
        if (ov) sg_edges_free(&e[k]);
        cudaStreamDestroy(d[k].s);
    }
    return el;
}

static void kyoyu_release(void)
{
    if (!kyA) return;
    SG_KY(ky_array_free(kyA));
    SG_KY(ky_array_free(kyB));
    kyA = kyB = NULL;
}

/* ---- hand-written variants ------------------------------------------------------------------------ */
typedef void (*run_fn)(const sg_prob_t *, sg_sub_t *, int, sg_phase_t *);

static double run_hand(run_fn fn, const sg_prob_t *p, sg_sub_t *d, int phased, sg_phase_t *ph, int gather,
                       double *result)
{
    double *A = d->src, *B = d->dst;
    sg_init_sub(p, d);
    SG_CUDA(cudaStreamSynchronize(d->s));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = sg_now();
    fn(p, d, phased, ph);
    SG_CUDA(cudaStreamSynchronize(d->s));
    double el = sg_now() - t0;
    if (gather) { /* gather the owned planes on rank 0 */
        size_t P = sg_plane(p);
        double *mine = (double *)malloc((size_t)d->nz * P * sizeof(double));
        sub_read(p, d, mine);
        int *cnt = (int *)malloc(sizeof(int) * nr), *dis = (int *)malloc(sizeof(int) * nr);
        for (int r = 0; r < nr; r++) {
            long z0 = (long)r * p->nz / nr, z1 = (long)(r + 1) * p->nz / nr;
            cnt[r] = (int)((z1 - z0) * (long)P);
            dis[r] = (int)(z0 * (long)P);
        }
        MPI_Gatherv(mine, cnt[me], MPI_DOUBLE, result, cnt, dis, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        free(mine);
        free(cnt);
        free(dis);
    }
    d->src = A;
    d->dst = B; /* the next run starts from the same buffers (IPC handles name them) */
    return el;
}

/* Single GPU, whole grid p (rank 0 only): the reference result and the 1-GPU time. */
static double run_single(const sg_prob_t *p, int dev, double *result)
{
    sg_sub_t d;
    sub_alloc(p, &d, 0, p->nz, 0, 0, dev);
    sg_init_sub(p, &d);
    SG_CUDA(cudaStreamSynchronize(d.s));
    double t0 = sg_now();
    for (int t = 0; t < p->steps; t += p->bt) sg_block_steps(p, &d);
    SG_CUDA(cudaStreamSynchronize(d.s));
    double el = sg_now() - t0;
    if (result) sub_read(p, &d, result);
    sub_free(&d);
    return el;
}

/* The device copy bandwidth, read + write, GB/s: the single-step roofline's denominator (--roofline 0). */
static double copy_bandwidth(int dev)
{
    size_t n = (size_t)512 << 20;
    void *a, *b;
    cudaEvent_t e0, e1;
    SG_CUDA(cudaSetDevice(dev));
    SG_CUDA(cudaMalloc(&a, n));
    SG_CUDA(cudaMalloc(&b, n));
    SG_CUDA(cudaMemset(a, 0, n));
    SG_CUDA(cudaEventCreate(&e0));
    SG_CUDA(cudaEventCreate(&e1));
    SG_CUDA(cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice)); /* warm-up */
    float best = 1e30f;
    for (int r = 0; r < 3; r++) {
        SG_CUDA(cudaEventRecord(e0, 0));
        for (int i = 0; i < 5; i++)
            SG_CUDA(cudaMemcpyAsync(i & 1 ? a : b, i & 1 ? b : a, n, cudaMemcpyDeviceToDevice, 0));
        SG_CUDA(cudaEventRecord(e1, 0));
        SG_CUDA(cudaEventSynchronize(e1));
        float ms;
        SG_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < best) best = ms;
    }
    SG_CUDA(cudaEventDestroy(e0));
    SG_CUDA(cudaEventDestroy(e1));
    SG_CUDA(cudaFree(a));
    SG_CUDA(cudaFree(b));
    return 2.0 * 5.0 * (double)n / (best * 1e-3) * 1e-9;
}

static const char *variant_name(char v)
{
    switch (v) {
        case 'a':
            return "staged";
        case 'b':
            return "p2p";
        case 'c':
            return "kyoyu";
        default:
            return "baseline";
    }
}

static const char *today(void)
{
    static char buf[16];
    time_t t = time(NULL);
    strftime(buf, sizeof buf, "%Y-%m-%d", gmtime(&t));
    return buf;
}

static const char *machine(void)
{
    static char host[64];
    const char *k = getenv("KY_BENCH_MACHINE");
    if (k && *k) return k;
    gethostname(host, sizeof host - 1);
    return host;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* every row as it is measured, also into a pipe (ctest, kybench) */
    /* --help needs no job (nor a GPU): answered before ky_init */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage_text(stdout);
            return 0;
        }
    SG_KY(ky_init(&argc, &argv));
    me = ky_rank();
    nr = ky_nranks();
    opts_t o;
    if (parse(argc, argv, &o)) {
        ky_finalize();
        return 2;
    }
    int ngpu = 0;
    if (cudaGetDeviceCount(&ngpu) != cudaSuccess) ngpu = 0;
    int ok_gpu = ngpu > 0 && ky_ngpus() >= o.bpr, all_gpu = 0;
    MPI_Allreduce(&ok_gpu, &all_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_gpu) {
        if (me == 0) printf("ky_stencil_gpu: no GPU (or fewer than --blocks-per-rank per rank), skipping\n");
        ky_finalize();
        return 77;
    }
    int dev = 0;
    ky_gpu_device(0, &dev);
    SG_CUDA(cudaSetDevice(dev));
    if (o.roofline == 0) { /* measured on rank 0's GPU, the same for every rank */
        if (me == 0) o.roofline = copy_bandwidth(dev);
        MPI_Bcast(&o.roofline, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (me == 0) printf("# device copy: %.0f GB/s (read + write), the roofline\n", o.roofline);
    }
    int ngpus_total = nr * o.bpr;
    sg_prob_t base = o.p;
    if (o.weak) base.nz = o.p.nz * ngpus_total;
    int split = ky_nnodes() == nr && nr > 1;
    if (me == 0)
        printf(
            "# ky_stencil_gpu: %d x %d x %d doubles (z x y x x), %d GPU(s) on %d rank(s), bt %d, tb %d, %d "
            "steps, %s%s, baseline %s\n",
            base.nz, base.ny, base.nx, ngpus_total, nr, base.bt, base.tb, base.steps,
            o.weak ? "weak scaling" : "fixed size", split ? ", every rank its own node" : "",
            sg_baseline_name());
    if (base.nz / ngpus_total < base.bt)
        sg_die("every GPU needs at least bt = %d planes (nz %d over %d GPUs)", base.bt, base.nz, ngpus_total);

    int npts = o.pts_both ? 2 : 1;
    for (int ip = 0; ip < npts; ip++) {
        sg_prob_t p = base;
        p.pts = o.pts_both ? (ip == 0 ? 7 : 27) : o.p.pts;
        size_t P = sg_plane(&p), N = P * (size_t)p.nz;
        double *ref = NULL, *cpu = NULL, *res = NULL;
        double t_one = -1; /* weak scaling: the per-GPU problem on one GPU */
        if (me == 0) {
            if (o.check) { /* the reference: single-step kernels (a --tb run is checked against them) */
                sg_prob_t one = p;
                one.tb = 1;
                one.tb_staged = 0;
                ref = (double *)malloc(N * sizeof(double));
                res = (double *)malloc(N * sizeof(double));
                run_single(&one, dev, ref);
            }
            if (o.check && N <= ((size_t)4 << 20)) {
                cpu = (double *)malloc(N * sizeof(double));
                sg_cpu_run(&p, cpu);
            }
            if (o.weak) {
                sg_prob_t q = p;
                q.nz = o.p.nz;
                run_single(&q, dev, NULL);
                t_one = run_single(&q, dev, NULL);
            }
        }
        int cpu_ok = 1;
        if (me == 0 && cpu && ref) cpu_ok = !memcmp(cpu, ref, N * sizeof(double));
        if (me == 0 && cpu)
            printf("# %d-point: single GPU vs CPU: %s\n", p.pts, cpu_ok ? "identical" : "DIFFERENT");
        sg_sub_t d;
        int hand = o.bpr == 1 && strpbrk(o.variants, "abd");
        if (hand) {
            int z0 = (int)((long)me * p.nz / nr), z1 = (int)((long)(me + 1) * p.nz / nr);
            sub_alloc(&p, &d, z0, z1 - z0, me > 0, me < nr - 1, dev);
            sg_variants_setup(&p, &d);
        }
        if (me == 0)
            printf("%-9s %3s %3s %2s %5s %10s %8s %9s %9s %9s %7s %8s %8s %8s %8s %8s %7s %s\n", "variant",
                   "pts", "bt", "tb", "ranks", "ms/step", "Gpt/s", "GFLOP/s", "GF/s/GPU", "GB/s/GPU", "%HBM",
                   "comp_ms", "gpu_ms", "host_ms", "mpi_ms", "sync_ms", "weak%", "check");
        double t_staged = -1, t_base = -1;
        for (const char *v = o.variants; *v; v++) {
            if (!strchr("abcd", *v)) continue;
            sg_phase_t ph, dummy;
            memset(&ph, 0, sizeof ph);
            memset(&dummy, 0, sizeof dummy);
            double el;
            run_fn fn = *v == 'a' ? sg_run_staged : *v == 'b' ? sg_run_p2p : sg_run_baseline;
            /* warm-up (plans, IPC mappings, NCCL channels), timed run, phased run, checked run */
            if (*v == 'c') {
                sg_prob_t w = p;
                w.steps = p.bt;
                run_kyoyu(&o, &w, 0, &dummy, 0, NULL);
                el = run_kyoyu(&o, &p, 0, &dummy, 0, NULL);
                if (o.phases) run_kyoyu(&o, &p, 1, &ph, 0, NULL);
                if (o.check) run_kyoyu(&o, &p, 0, &dummy, 1, res);
            } else {
                sg_prob_t w = p;
                w.steps = p.bt;
                run_hand(fn, &w, &d, 0, &dummy, 0, NULL);
                el = run_hand(fn, &p, &d, 0, &dummy, 0, NULL);
                if (o.phases) run_hand(fn, &p, &d, 1, &ph, 0, NULL);
                if (o.check) run_hand(fn, &p, &d, 0, &dummy, 1, res);
            }
            double tmax = 0, phs[5] = {ph.compute, ph.gpu_halo, ph.host_xfer, ph.mpi, ph.sync}, phm[5];
            MPI_Allreduce(&el, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(phs, phm, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            if (*v == 'a') t_staged = tmax;
            if (*v == 'd') t_base = tmax;
            if (me != 0) continue;
            int verified = -1;
            if (o.check) verified = !memcmp(res, ref, N * sizeof(double)) && cpu_ok;
            double pts_upd = (double)(p.nz - 2) * (p.ny - 2) * (p.nx - 2) * p.steps;
            double gpts = pts_upd / tmax * 1e-9; /* effective: points x steps per second, all GPUs */
            double gflops = pts_upd * sg_flops_per_point(p.pts) / tmax * 1e-9;
            double bpp = 2.0 * sizeof(double); /* one read, one write per point and step at best */
            double gbs_gpu = pts_upd * bpp / tmax * 1e-9 / ngpus_total;
            double roof = 100.0 * gbs_gpu / o.roofline;
            double ms = 1e3 * tmax / p.steps, f = 1e3 / p.steps / nr;
            double weff = t_one > 0 ? 100.0 * t_one / tmax : -1;
            printf(
                "%-9s %3d %3d %2d %5d %10.4f %8.1f %9.1f %9.1f %9.1f %6.1f%% %8.4f %8.4f %8.4f %8.4f %8.4f "
                "%7.1f"
                " %s\n",
                variant_name(*v), p.pts, p.bt, p.tb, nr, ms, gpts, gflops, gflops / ngpus_total, gbs_gpu,
                roof, phm[0] * f, phm[1] * f, phm[2] * f, phm[3] * f, phm[4] * f, weff,
                verified < 0 ? "-"
                : verified   ? "identical"
                             : "WRONG");
            if (o.json) {
                /* the case of a blocked run names its tb; single-step cases keep their name */
                char tbs[16] = "";
                if (p.tb > 1 || sg_tb_staged(&p))
                    snprintf(tbs, sizeof tbs, "_tb%d%s", p.tb, sg_tb_staged(&p) ? "s" : "");
                FILE *js = fopen(o.json, "a");
                if (!js) sg_die("cannot open %s", o.json);
                fprintf(
                    js,
                    "{\"bench\":\"stencil_gpu\",\"case\":\"%s_%dpt_bt%d%s%s\",\"kind\":\"%s\",\"date\":\"%"
                    "s\",\"version\":\"%s\","
                    "\"ranks\":%d,\"gpus\":%d,\"variant\":\"%s\",\"pts\":%d,\"bt\":%d,\"nx\":%d,\"ny\":%"
                    "d,\"nz\":%d,"
                    "\"steps\":%d,\"weak\":%s,\"node_split\":%s,\"time_s\":%.6g,\"step_ms\":%.6g,"
                    "\"gflops\":%.6g,"
                    "\"gflops_per_gpu\":%.6g,\"bytes_per_point\":%.6g,\"GBs_per_gpu\":%.6g,\"roofline_"
                    "GBs\":%.6g,"
                    "\"roofline_pct\":%.6g,\"phase_ms\":{\"compute\":%.6g,\"gpu_halo\":%.6g,\"host_"
                    "xfer\":%.6g,"
                    "\"mpi\":%.6g,\"sync\":%.6g},\"baseline\":\"%s\"",
                    variant_name(*v), p.pts, p.bt, tbs, split ? "_split" : "", machine(), today(),
                    ky_version(), nr, ngpus_total, variant_name(*v), p.pts, p.bt, p.nx, p.ny, p.nz, p.steps,
                    o.weak ? "true" : "false", split ? "true" : "false", tmax, ms, gflops,
                    gflops / ngpus_total, bpp, gbs_gpu, o.roofline, roof, phm[0] * f, phm[1] * f, phm[2] * f,
                    phm[3] * f, phm[4] * f, sg_baseline_name());
                fprintf(js, ",\"tb\":%d,\"gpoints_per_s\":%.6g", p.tb, gpts);
                if (p.tb > 1 || sg_tb_staged(&p)) { /* the tile: 64 columns x tb_by * tb_rows rows */
                    int by, rows;
                    sg_tb_shape(&p, &by, &rows);
                    fprintf(js,
                            ",\"tb_by\":%d,\"tb_rows\":%d,\"zchunk\":%d,\"tb_unroll\":%d,\"tb_staged\":%d",
                            by, rows, p.zchunk ? p.zchunk : 64, !p.tb_rolled, sg_tb_staged(&p));
                }
                if (weff >= 0) fprintf(js, ",\"weak_eff\":%.6g,\"single_time_s\":%.6g", weff / 100.0, t_one);
                if (t_staged > 0) fprintf(js, ",\"ratio_vs_staged\":%.6g", t_staged / tmax);
                if (t_base > 0) fprintf(js, ",\"ratio_vs_baseline\":%.6g", t_base / tmax);
                if (verified >= 0) fprintf(js, ",\"verified\":%s", verified ? "true" : "false");
                fprintf(js, "}\n");
                fclose(js);
            }
            if (*v == 'c' && me == 0 && (t_staged > 0 || t_base > 0))
                printf("# kyoyu %d-point: %.2fx the seed's staged variant, %.2fx the %s baseline\n", p.pts,
                       t_staged > 0 ? t_staged / tmax : 0.0, t_base > 0 ? t_base / tmax : 0.0,
                       sg_baseline_name());
            if (verified == 0) wrong = 1;
            if (verified == 0)
                fprintf(stderr, "ky_stencil_gpu: %s %d-point result differs from the single-GPU run\n",
                        variant_name(*v), p.pts);
        }
        kyoyu_release();
        if (hand) {
            sg_variants_teardown();
            sub_free(&d);
        }
        int bad = 0;
        if (me == 0 && o.check) { /* any WRONG above makes the exit status 1 */
            bad = !cpu_ok || wrong;
        }
        MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
        free(ref);
        free(cpu);
        free(res);
        if (bad) {
            ky_finalize();
            return 1;
        }
    }
    ky_finalize();
    return 0;
}
