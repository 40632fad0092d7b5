/* ky_himeno: the Himeno benchmark on Kyoyu (apps/himeno/README.md). One launch runs the chosen variants on
 * the same grid and decomposition: Kyoyu's one-sided halos with gosa by active messages or ky_allreduce, and
 * the hand-written MPI baseline; prints what the original prints (grid, iterations, gosa, MFLOPS), a table
 * of the phases per rank, the ratio to the baseline, and with --check the serial original's gosa.
 *
 *   kyrun -n 4 ky_himeno M --mem gpu --decomp ij --iters 200 --variant ky,mpi --json himeno.jsonl
 *
 * Exit status: 0; 1 if a check failed; 2 on bad arguments; 77 with --mem gpu where a rank has no GPU. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kyoyu.h>
#include <mpi.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "himeno.h"

static const float g_omega = 0.8f;
static const char *g_tb_tiles[] = {"32x16", "64x16", "32x16x2"};
static const char *g_chain_names[] = {"sync", "plain", "pdl", "graph", "graph-pdl"};

/* MPI calls of the driver (timings, the phase table, the check): an error names the rank, call and code. */
#define HG_MPI(call)                                                                               \
    do {                                                                                           \
        int m_ = (call);                                                                           \
        if (m_ != MPI_SUCCESS)                                                                     \
            hg_fail("rank %d: %s:%d: %s: MPI error %d", ky_rank(), __FILE__, __LINE__, #call, m_); \
    } while (0)

void hg_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ky_himeno: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

double hg_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Everything one variant's run needs: the block, the two p buffers, the coefficients, the exchange. */
typedef struct {
    const hg_opts_t *o;
    hg_block_t b;
    int variant;
    float *f[2];     /* p and wrk2 (Kyoyu segment for the ky variant) */
    const float *p0; /* host copy of the initial p (ghosts included) */
    hg_coef_t cf;    /* host or GPU */
    double *d_gosa;  /* GPU: [0], [1] the kernels' ring of this rank's gosa, [2] the sum */
    double *h_gosa;  /* GPU: pinned copy of the ring's slot, queued behind the kernel (one synchronisation) */
    int chain;       /* HG_CHAIN_* of this run: sync unless one rank on a GPU */
    uint64_t it;     /* kernels since the fields were reset (the ring's slot is it & 1) */
    int overlap, defer; /* --overlap, --gosa-defer for this run (Kyoyu variant, several kernels a loop) */
    double *d_vec;      /* both or either: every iteration's local gosa, [it] (GPU memory on GPU runs) */
    double *h_vec;      /* host copy of it (the values themselves on CPU runs), then the sums */
    size_t cap;         /* doubles in each vector */
    hg_ky_halo_t *ky;
    hg_mpi_halo_t *mpi;
    uint64_t seq; /* exchanges so far (the flag value of the next) */
    int cur;      /* which f holds p */
    char err[256];
} hg_run_t;

static void reset_fields(hg_run_t *r)
{
    size_t bytes = r->b.vol * sizeof(float);
    for (int x = 0; x < 2; x++) {
        if (!r->o->gpu)
            memcpy(r->f[x], r->p0, bytes);
        else if (hg_gpu_copy(r->f[x], r->p0, bytes, r->err, sizeof r->err))
            hg_fail("rank %d: initial p: %s", r->b.rank, r->err);
    }
    if (r->o->gpu &&
        (hg_gpu_gosa_reset(r->d_gosa, r->err, sizeof r->err) || hg_gpu_sync(r->err, sizeof r->err)))
        hg_fail("rank %d: gosa ring: %s", r->b.rank, r->err);
    if (r->cap && r->o->gpu &&
        (hg_gpu_zero(r->d_vec, r->cap * sizeof(double), r->err, sizeof r->err) ||
         hg_gpu_sync(r->err, sizeof r->err)))
        hg_fail("rank %d: gosa vector: %s", r->b.rank, r->err);
    r->cur = 0, r->it = 0;
}

/* The per-iteration gosa vector for a loop of n iterations from reset_fields (one more slot: a kernel zeroes
 * the next iteration's, as in the ring). */
static void vec_need(hg_run_t *r, int n)
{
    if (!(r->overlap || r->defer) || (size_t)n + 1 <= r->cap) return;
    size_t cap = (size_t)n + 1;
    free(r->h_vec);
    if (r->o->gpu) hg_gpu_free(r->d_vec);
    r->d_vec = NULL;
    if (!(r->h_vec = calloc(cap, sizeof(double))) ||
        (r->o->gpu && hg_gpu_alloc((void **)&r->d_vec, cap * sizeof(double), r->err, sizeof r->err)))
        hg_fail("rank %d: gosa vector of %zu iterations: %s", r->b.rank, cap,
                r->o->gpu ? r->err : "out of memory");
    r->cap = cap;
}

static void vec_free(hg_run_t *r)
{
    free(r->h_vec);
    if (r->o->gpu) hg_gpu_free(r->d_vec);
    r->h_vec = NULL, r->d_vec = NULL, r->cap = 0;
}

/* One iteration with --overlap and/or --gosa-defer. Overlapped: the face slabs (hg_split_update) first; on a
 * GPU the interior is queued behind them and computed while the host, once the slabs are done, exchanges the
 * halos; on a CPU the interior follows the exchange. Otherwise the whole kernel, then the exchange. This
 * rank's gosa goes into the vector's slot of the iteration; deferred, nothing waits for it (the next
 * iteration's kernels follow the interior on the stream; finish() sums the vector after the loop), else it is
 * summed over the ranks now, after the interior, as iterate() does. */
static double iterate_parts(hg_run_t *r, hg_phase_t *ph)
{
    const hg_opts_t *o = r->o;
    float *p = r->f[r->cur], *q = r->f[1 - r->cur];
    uint64_t n = r->it++;
    double t0 = hg_now(), local = 0.0, gosa = 0.0;
    hg_box_t slab[6], in;
    int thin[6], ns = 0;
    if (r->overlap)
        ns = hg_split_update(&r->b, slab, thin, &in);
    else
        for (int d = 0; d < 3; d++) in.lo[d] = r->b.ub[d], in.hi[d] = r->b.ue[d];
    hg_block_t part;
    /* GPU: --chain pdl (the default) links the kernels by Programmatic Dependent Launch as in one rank's
     * chain, and --sweep alternate reverses the interior's i planes every other iteration */
    int pdl = o->chain == HG_CHAIN_PDL || o->chain == HG_CHAIN_GRAPH_PDL, rev = o->sweep && (n & 1);
    for (int x = 0; x < ns; x++) {
        hg_block_part(&r->b, &slab[x], &part);
        if (!o->gpu)
            local += hg_cpu_jacobi(&part, &r->cf, p, q, g_omega);
        else if (hg_gpu_jacobi_part(&part, thin[x], &r->cf, p, q, g_omega, r->d_vec + n, 0, 0, pdl, r->err,
                                    sizeof r->err))
            hg_fail("rank %d: face slab kernel: %s", r->b.rank, r->err);
    }
    hg_block_part(&r->b, &in, &part);
    if (o->gpu) {
        int e = r->overlap ? hg_gpu_mark(r->err, sizeof r->err) : 0;
        e = e || hg_gpu_jacobi_part(&part, -1, &r->cf, p, q, g_omega, r->d_vec + n, 0, rev, pdl, r->err,
                                    sizeof r->err);
        /* the faces are computed (overlapped: the interior goes on; else the kernel is done) */
        e = e || (r->overlap ? hg_gpu_wait_mark(r->err, sizeof r->err) : hg_gpu_sync(r->err, sizeof r->err));
        if (e) hg_fail("rank %d: kernel: %s", r->b.rank, r->err);
    } else if (!r->overlap) {
        local += hg_cpu_jacobi(&part, &r->cf, p, q, g_omega);
    }
    double t1 = hg_now();
    HG_KY(hg_ky_halo_exchange(r->ky, 1 - r->cur, ++r->seq));
    double t2 = hg_now(), t3 = t2;
    if (!o->gpu && r->overlap) local += hg_cpu_jacobi(&part, &r->cf, p, q, g_omega);
    if (!o->gpu) r->h_vec[n] = local;
    if (!r->defer) {
        if (o->gpu) {
            if (hg_gpu_copy_async(r->h_gosa, r->d_vec + n, sizeof(double), r->err, sizeof r->err) ||
                hg_gpu_sync(r->err, sizeof r->err))
                hg_fail("rank %d: kernel: %s", r->b.rank, r->err);
            local = *r->h_gosa;
        }
        t3 = hg_now();
        HG_KY(hg_gosa_sum(o, o->gosa, &local, r->d_vec + n, r->d_gosa + 2, r->seq, &gosa));
    }
    double t4 = hg_now();
    r->cur = 1 - r->cur;
    if (ph) {
        ph->kernel += (t1 - t0) + (t3 - t2);
        ph->halo += t2 - t1, ph->reduce += t4 - t3, ph->total += t4 - t0;
    }
    return gosa;
}

/* After a loop of deferred iterations: the last interior, then every iteration's sum over the ranks (the
 * values the per-iteration reduction gives); returns the last. The interior's wait counts as kernel time,
 * the sums as the reduction's. */
static double finish(hg_run_t *r, double gosa, hg_phase_t *ph)
{
    if (!r->defer || r->it == 0) return gosa;
    const hg_opts_t *o = r->o;
    double t0 = hg_now();
    if (o->gpu && hg_gpu_sync(r->err, sizeof r->err)) hg_fail("rank %d: kernel: %s", r->b.rank, r->err);
    double t1 = hg_now();
    if (o->gpu && hg_gpu_copy(r->h_vec, r->d_vec, r->it * sizeof(double), r->err, sizeof r->err))
        hg_fail("rank %d: gosa vector: %s", r->b.rank, r->err);
    HG_KY(hg_gosa_sum_all(o, o->gosa, r->h_vec, r->it, r->h_vec));
    double t2 = hg_now();
    if (ph) ph->kernel += t1 - t0, ph->reduce += t2 - t1, ph->total += t2 - t0;
    return r->h_vec[r->it - 1];
}

/* One iteration: kernel (p -> wrk2), halos of wrk2, gosa over all ranks, swap. Adds to ph. */
static double iterate(hg_run_t *r, hg_phase_t *ph)
{
    if (r->overlap || r->defer) return iterate_parts(r, ph);
    const hg_opts_t *o = r->o;
    float *p = r->f[r->cur], *q = r->f[1 - r->cur];
    double t0 = hg_now(), local = 0.0, gosa = 0.0;
    double *slot = r->d_gosa + (r->it & 1);
    if (o->gpu) {
        if (hg_gpu_jacobi(&r->b, &r->cf, p, q, g_omega, r->d_gosa, (int)(r->it & 1), r->err, sizeof r->err) ||
            hg_gpu_copy_async(r->h_gosa, slot, sizeof(double), r->err, sizeof r->err) ||
            hg_gpu_sync(r->err, sizeof r->err))
            hg_fail("rank %d: kernel: %s", r->b.rank, r->err);
        local = *r->h_gosa;
        r->it++;
    } else {
        local = hg_cpu_jacobi(&r->b, &r->cf, p, q, g_omega);
    }
    double t1 = hg_now();
    if (r->variant == HG_VAR_KY)
        HG_KY(hg_ky_halo_exchange(r->ky, 1 - r->cur, ++r->seq));
    else
        hg_mpi_halo_exchange(r->mpi, q);
    double t2 = hg_now();
    if (r->variant == HG_VAR_KY)
        HG_KY(hg_gosa_sum(o, o->gosa, &local, slot, r->d_gosa + 2, r->seq, &gosa));
    else
        hg_gosa_mpi(o, &local, slot, &gosa);
    double t3 = hg_now();
    r->cur = 1 - r->cur;
    if (ph) ph->kernel += t1 - t0, ph->halo += t2 - t1, ph->reduce += t3 - t2, ph->total += t3 - t0;
    return gosa;
}

typedef struct {
    int ran, iters, chain;   /* chain: HG_CHAIN_* the loop ran with */
    int overlap, defer;      /* the loop's --overlap, --gosa-defer */
    double gosa, time, psum; /* time: slowest rank's loop; psum: sum of the interior of p after the loop */
    hg_phase_t ph_max, ph_avg;
    ky_comm_stats_t st; /* rank 0's, for the loop */
} hg_result_t;

/* One rank on a GPU: n iterations as one chain of kernels (no halo; the sum of one rank's gosa is its own,
 * read from the ring after the chain: what the per-iteration reduction does for one rank). The field ends in
 * f[n & 1]; returns the last gosa. */
static double chain(hg_run_t *r, int n, hg_phase_t *ph)
{
    double t0 = hg_now(), g = 0.0;
    if (n <= 0) return 0.0;
    const hg_opts_t *o = r->o;
    int cur = n & 1, e;
    if (o->tb > 1) /* the blocked kernel's ring follows the single-step kernels' 3 doubles */
        e = hg_gpu_chain_tb(&r->b, &r->cf, r->f[0], r->f[1], n, g_omega, r->d_gosa + 3, o->tb, o->tb_tile,
                            o->tb_chunk, &cur, r->err, sizeof r->err) ||
            hg_gpu_copy_async(r->h_gosa, r->d_gosa + 3 + (n - 1) % HG_TB_RING_SLOTS, sizeof(double), r->err,
                              sizeof r->err);
    else
        e = hg_gpu_chain(&r->b, &r->cf, r->f[0], r->f[1], n, g_omega, r->d_gosa, r->chain, o->sweep, r->err,
                         sizeof r->err) ||
            hg_gpu_copy_async(r->h_gosa, r->d_gosa + ((n - 1) & 1), sizeof(double), r->err, sizeof r->err);
    if (e || hg_gpu_sync(r->err, sizeof r->err))
        hg_fail("rank %d: kernel chain (%d iterations): %s", r->b.rank, n, r->err);
    g = *r->h_gosa;
    r->cur = cur;
    if (ph) {
        double t = hg_now() - t0;
        ph->kernel += t, ph->total += t;
    }
    return g;
}

static void run_variant(const hg_opts_t *o, hg_run_t *r, hg_result_t *res)
{
    memset(res, 0, sizeof *res);
    vec_need(r, o->warmup > 3 ? o->warmup : 3);
    reset_fields(r);
    if (r->chain != HG_CHAIN_SYNC)
        chain(r, o->warmup, NULL);
    else
        for (int w = 0; w < o->warmup; w++) iterate(r, NULL);
    finish(r, 0.0, NULL);
    reset_fields(r);
    int nn = o->iters;
    if (o->target > 0) { /* the original: 3 rehearsal iterations, then nn = target / (cpu / 3) */
        HG_MPI(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = hg_now(), cpu;
        if (r->chain != HG_CHAIN_SYNC)
            chain(r, 3, NULL);
        else
            for (int i = 0; i < 3; i++) iterate(r, NULL);
        finish(r, 0.0, NULL);
        double t = hg_now() - t0;
        HG_MPI(MPI_Allreduce(&t, &cpu, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        nn = (int)(o->target / (cpu / 3.0));
        if (nn < 1) nn = 1;
        if (r->b.rank == 0)
            printf(" Rehearsal: 3 iterations in %f s; the loop will be executed %d times\n", cpu, nn);
        vec_need(r, nn);
        reset_fields(r);
    }
    vec_need(r, nn); /* a new vector starts zeroed */
    hg_phase_t ph = {0, 0, 0, 0};
    double gosa = 0.0;
    HG_KY(ky_comm_stats_reset());
    HG_MPI(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = hg_now();
    if (r->chain != HG_CHAIN_SYNC)
        gosa = chain(r, nn, &ph);
    else
        for (int n = 0; n < nn; n++) gosa = iterate(r, &ph);
    gosa = finish(r, gosa, &ph);
    double t = hg_now() - t0;
    HG_KY(ky_comm_stats(&res->st));
    HG_MPI(MPI_Allreduce(&t, &res->time, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    HG_MPI(MPI_Allreduce(&ph, &res->ph_max, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    HG_MPI(MPI_Allreduce(&ph, &res->ph_avg, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    double *a = &res->ph_avg.total;
    for (int x = 0; x < 4; x++) a[x] /= ky_nranks();
    /* the field after the loop, for --check */
    size_t bytes = r->b.vol * sizeof(float);
    float *host = malloc(bytes);
    if (!host) hg_fail("rank %d: out of memory", r->b.rank);
    if (!o->gpu)
        memcpy(host, r->f[r->cur], bytes);
    else if (hg_gpu_copy(host, r->f[r->cur], bytes, r->err, sizeof r->err))
        hg_fail("rank %d: %s", r->b.rank, r->err);
    double mine = hg_block_sum(&r->b, host);
    free(host);
    HG_MPI(MPI_Allreduce(&mine, &res->psum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    if (!o->quiet) { /* the per-rank table, in rank order */
        double row[4] = {ph.kernel, ph.halo, ph.reduce, ph.total}, *all = NULL;
        if (r->b.rank == 0) all = malloc(sizeof row * (size_t)ky_nranks());
        HG_MPI(MPI_Gather(row, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        if (r->b.rank == 0 && all) {
            printf(
                "  rank  coords     block (IxJxK)        kernel_s    halo_s  reduce_s   total_s  halo "
                "ms/it\n");
            for (int q = 0; q < ky_nranks(); q++) {
                hg_block_t qb;
                hg_block_of(o, q, &qb);
                char c[32], bl[32];
                snprintf(c, sizeof c, "%d,%d,%d", qb.coord[0], qb.coord[1], qb.coord[2]);
                snprintf(bl, sizeof bl, "%dx%dx%d", qb.n[0], qb.n[1], qb.n[2]);
                printf("  %4d  %-9s  %-18s  %9.4f %9.4f %9.4f %9.4f  %9.4f\n", q, c, bl, all[4 * q],
                       all[4 * q + 1], all[4 * q + 2], all[4 * q + 3], 1e3 * all[4 * q + 1] / nn);
            }
            free(all);
        }
    }
    res->ran = 1, res->iters = nn, res->gosa = gosa, res->chain = r->chain;
    res->overlap = r->overlap, res->defer = r->defer;
}

/* --tb K --check (one rank): the blocked chain against the single-step chain (the tuned kernel, plain
 * launches) from the initial field, for every length m = 1 .. 2K + 2 (each stage of a pass last, the short
 * last passes): the field bit for bit (ghosts and padding included), and the last iteration's gosa, which
 * sums the same floats ss * ss in double in another order (blocks of other shapes, atomics in another
 * order): equal within 1e-12 relative. Returns 1 if anything differs. */
static int verify_tb(const hg_opts_t *o, const hg_block_t *b, const float *p0, const hg_coef_t *cf,
                     double *d_gosa)
{
    size_t bytes = b->vol * sizeof(float);
    float *f[4] = {NULL, NULL, NULL, NULL}, *h1 = malloc(bytes), *h2 = malloc(bytes);
    double *hg = NULL;
    char err[256];
    if (!h1 || !h2) hg_fail("rank 0: out of memory");
    for (int x = 0; x < 4; x++)
        if (hg_gpu_alloc((void **)&f[x], bytes, err, sizeof err)) hg_fail("rank 0: --tb check: %s", err);
    if (hg_gpu_host_alloc((void **)&hg, 2 * sizeof(double), err, sizeof err)) hg_fail("rank 0: %s", err);
    int bad = 0, mmax = 2 * o->tb + 2;
    double worst = 0.0;
    for (int m = 1; m <= mmax; m++) {
        int cur = 0;
        for (int x = 0; x < 4; x++)
            if (hg_gpu_copy(f[x], p0, bytes, err, sizeof err)) hg_fail("rank 0: %s", err);
        if (hg_gpu_chain(b, cf, f[0], f[1], m, g_omega, d_gosa, HG_CHAIN_PLAIN, 0, err, sizeof err) ||
            hg_gpu_copy_async(hg, d_gosa + ((m - 1) & 1), sizeof(double), err, sizeof err) ||
            hg_gpu_chain_tb(b, cf, f[2], f[3], m, g_omega, d_gosa + 3, o->tb, o->tb_tile, o->tb_chunk, &cur,
                            err, sizeof err) ||
            hg_gpu_copy_async(hg + 1, d_gosa + 3 + (m - 1) % HG_TB_RING_SLOTS, sizeof(double), err,
                              sizeof err) ||
            hg_gpu_sync(err, sizeof err) || hg_gpu_copy(h1, f[m & 1], bytes, err, sizeof err) ||
            hg_gpu_copy(h2, f[2 + cur], bytes, err, sizeof err))
            hg_fail("rank 0: --tb check, %d iterations: %s", m, err);
        double rel = hg[0] == hg[1] ? 0.0 : fabs(hg[1] - hg[0]) / fabs(hg[0]);
        int same = !memcmp(h1, h2, bytes);
        if (rel > worst) worst = rel;
        if (!same || !(rel <= 1e-12)) {
            bad = 1;
            printf(" --tb %d check, %d iterations: field %s, gosa %.17g vs single-step %.17g\n", o->tb, m,
                   same ? "bitwise equal" : "DIFFERENT", hg[1], hg[0]);
        }
    }
    printf(
        " --tb %d check against the single-step kernel, %d..%d iterations: field bitwise equal, gosa of "
        "every iteration within 1e-12 relative (largest %.2e): %s\n",
        o->tb, 1, mmax, worst, bad ? "FAIL" : "OK");
    for (int x = 0; x < 4; x++) hg_gpu_free(f[x]);
    hg_gpu_host_free(hg);
    free(h1), free(h2);
    return bad;
}

/* GPU: the kernel's shape, given or measured: each candidate runs chains of a few iterations on this rank's
 * block (from p0, in scratch buffers; kernels back to back, as the loop runs them, so that small grids are
 * not timed by the launch and synchronisation around one kernel), every rank takes the slowest rank's time
 * per kernel, the fastest shape wins on every rank. A candidate whose field or gosa differs from the first's
 * (scalar, one point per thread) by a single bit is dropped with a warning: the choice can change the speed,
 * never the answer. */
static void tune_kernel(hg_opts_t *o, const hg_block_t *b, const float *p0, const hg_coef_t *cf,
                        double *d_gosa, int mode)
{
    static const int cand[][5] = {{64, 4, 2, 1, 0},  {128, 4, 1, 1, 0}, {256, 2, 1, 1, 0}, {64, 4, 1, 4, 0},
                                  {64, 4, 1, 8, 0},  {64, 4, 1, 16, 0}, {128, 2, 1, 4, 0}, {128, 2, 1, 8, 0},
                                  {32, 8, 1, 8, 0},  {128, 1, 1, 8, 0}, {32, 4, 2, 1, 1},  {64, 4, 1, 1, 1},
                                  {32, 4, 1, 4, 1},  {32, 4, 1, 8, 1},  {64, 2, 1, 8, 1},  {32, 8, 1, 8, 1},
                                  {32, 2, 1, 16, 1}, {64, 2, 1, 4, 1},  {128, 1, 1, 4, 1}, {32, 4, 1, 2, 1}};
    enum { NC = sizeof cand / sizeof cand[0] };
    char err[256];
    if (!o->tune) {
        if (hg_gpu_set_shape(o->block[0], o->block[1], o->block[2], o->block[3], o->block[4]))
            hg_fail("rank %d: --block %dx%dx%dx%d: not a valid shape", b->rank, o->block[0], o->block[1],
                    o->block[2], o->block[3]);
        return;
    }
    size_t bytes = b->vol * sizeof(float);
    /* kernels per timed chain: about 64 M points (M: 16 kernels, L and XL: 2) */
    double pts = (double)(b->ue[0] - b->ub[0]) * (b->ue[1] - b->ub[1]) * (b->ue[2] - b->ub[2]);
    int len = pts > 0 ? (int)(64e6 / pts) : 16;
    len = len < 2 ? 2 : len > 16 ? 16 : len;
    len &= ~1; /* even: the field ends in f[0] */
    if (mode == HG_CHAIN_SYNC) mode = HG_CHAIN_PLAIN;
    /* f[2]: p0 on the GPU; every candidate starts from it and runs the same 4 chains, so that all end on the
     * same field */
    float *f[3], *ref = malloc(bytes), *out = malloc(bytes);
    if (!ref || !out) hg_fail("rank %d: tuning: out of memory", b->rank);
    for (int x = 0; x < 3; x++)
        if (hg_gpu_alloc((void **)&f[x], bytes, err, sizeof err))
            hg_fail("rank %d: tuning buffers: %s", b->rank, err);
    if (hg_gpu_copy(f[2], p0, bytes, err, sizeof err)) hg_fail("rank %d: tuning: %s", b->rank, err);
    double t[NC], tmax[NC], g0 = 0.0;
    for (int c = 0; c < NC; c++) {
        hg_gpu_set_shape(cand[c][0], cand[c][1], cand[c][2], cand[c][3], cand[c][4]);
        double best = 1e30, g = 0.0;
        for (int x = 0; x < 2; x++)
            if (hg_gpu_copy(f[x], f[2], bytes, err, sizeof err)) hg_fail("rank %d: tuning: %s", b->rank, err);
        for (int r = 0; r < 4; r++) {
            double t0 = hg_now();
            if (hg_gpu_chain(b, cf, f[0], f[1], len, g_omega, d_gosa, mode, o->sweep, err, sizeof err) ||
                hg_gpu_sync(err, sizeof err))
                hg_fail("rank %d: tuning the kernel: %s", b->rank, err);
            double dt = (hg_now() - t0) / len;
            if (r > 0 && dt < best) best = dt;
        }
        if (hg_gpu_copy(c ? out : ref, f[0], bytes, err, sizeof err) ||
            hg_gpu_copy(&g, d_gosa + ((len - 1) & 1), sizeof g, err, sizeof err))
            hg_fail("rank %d: tuning: %s", b->rank, err);
        if (c == 0) g0 = g;
        t[c] = best;
        if (c && (memcmp(out, ref, bytes) || fabs(g - g0) > 1e-12 * fabs(g0))) {
            fprintf(stderr,
                    "ky_himeno: rank %d: kernel shape %dx%dx%dx%d%s computes another field or gosa (%.17g vs "
                    "%.17g): not used\n",
                    b->rank, cand[c][0], cand[c][1], cand[c][2], cand[c][3], cand[c][4] ? "v" : "", g, g0);
            t[c] = 1e30;
        }
    }
    HG_MPI(MPI_Allreduce(t, tmax, NC, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    int w = 0;
    for (int c = 1; c < NC; c++)
        if (tmax[c] < tmax[w]) w = c;
    memcpy(o->block, cand[w], sizeof o->block);
    hg_gpu_set_shape(cand[w][0], cand[w][1], cand[w][2], cand[w][3], cand[w][4]);
    if (b->rank == 0) {
        printf("kernel shape (tuned over %d shapes, chains of %d kernels, ms per kernel):", NC, len);
        for (int c = 0; c < NC; c++)
            printf(" %dx%dx%dx%d%s %.4f%s", cand[c][0], cand[c][1], cand[c][2], cand[c][3],
                   cand[c][4] ? "v" : "", tmax[c] > 1e29 ? -1.0 : 1e3 * tmax[c], c == w ? "*" : "");
        printf("\n");
    }
    hg_gpu_free(f[0]), hg_gpu_free(f[1]), hg_gpu_free(f[2]);
    free(ref), free(out);
}

static const char *machine(void)
{
    static char host[256];
    const char *m = getenv("KY_BENCH_MACHINE");
    if (m && *m) return m;
    return gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
}

static double mflops(const hg_opts_t *o, int nn, double t)
{
    return (double)(o->grid[0] - 2) * (o->grid[1] - 2) * (o->grid[2] - 2) * HG_FLOPS_PER_POINT * nn / t *
           1e-6;
}

static void print_result(const hg_opts_t *o, int v, const hg_result_t *r, const hg_result_t *base,
                         double floor_GBs)
{
    static const char *gm[] = {"", "active messages", "ky_allreduce", "active messages + ky_allreduce"};
    printf("\n[%s] %s, gosa by %s, %s memory\n", hg_variant_name(v),
           v == HG_VAR_KY ? "Kyoyu one-sided halos (ky_put_strided / ky_put + flags)"
                          : (o->gpu ? "hand-written MPI + CUDA, faces staged through pinned host memory"
                                    : "hand-written MPI, packed faces"),
           v == HG_VAR_KY ? gm[o->gosa] : "MPI_Allreduce", o->gpu ? "GPU" : "host");
    if (o->gpu)
        printf(" kernel %dx%dx%dx%d%s, iterations %s%s, i sweep %s\n", o->block[0], o->block[1], o->block[2],
               o->block[3], o->block[4] ? "v" : "",
               r->chain == HG_CHAIN_SYNC ? "synchronised (gosa read after every kernel)"
                                         : "chained on the GPU: ",
               r->chain == HG_CHAIN_SYNC ? "" : g_chain_names[r->chain], o->sweep ? "alternating" : "fixed");
    if (v == HG_VAR_KY && (r->overlap || r->defer))
        printf(" %s%s%s\n",
               r->overlap
                   ? "overlapped: the face slabs first, their halos sent while the interior is computed"
                   : "",
               r->overlap && r->defer ? "; " : "",
               r->defer
                   ? "gosa of every iteration kept and summed over the ranks after the loop (no wait for it "
                     "between iterations)"
                   : "");
    if (o->gpu && o->tb > 1)
        printf(
            " temporally blocked kernel: %d iterations per pass, tile %s, %d i planes per block (passes "
            "launched plainly; the kernel shape, --chain and --sweep above are the single-step kernel's)\n",
            o->tb, g_tb_tiles[o->tb_tile], o->tb_chunk);
    printf(" Loop executed for %d times\n", r->iters);
    printf(" Gosa : %e \n", r->gosa);
    printf(" MFLOPS measured : %f\tcpu : %f\n", mflops(o, r->iters, r->time), r->time);
    printf(" Score based on Pentium III 600MHz : %f\n", mflops(o, r->iters, r->time) / 82.84);
    double it = r->time / r->iters;
    printf(
        " per iteration (slowest rank): %.3f ms; phases max/avg over ranks, ms: kernel %.3f/%.3f halo "
        "%.3f/%.3f "
        "reduce %.3f/%.3f\n",
        1e3 * it, 1e3 * r->ph_max.kernel / r->iters, 1e3 * r->ph_avg.kernel / r->iters,
        1e3 * r->ph_max.halo / r->iters, 1e3 * r->ph_avg.halo / r->iters, 1e3 * r->ph_max.reduce / r->iters,
        1e3 * r->ph_avg.reduce / r->iters);
    if (floor_GBs > 0) {
        hg_block_t b0;
        hg_block_of(o, 0, &b0);
        double pts = (double)(b0.ue[0] - b0.ub[0]) * (b0.ue[1] - b0.ub[1]) * (b0.ue[2] - b0.ub[2]);
        double fl = pts * HG_BYTES_PER_POINT / (floor_GBs * 1e9);
        printf(
            " HBM roofline (rank 0's %.0f points x %.0f B at the %.0f GB/s copy floor): %.3f ms; kernel at "
            "%.0f%%, "
            "whole iteration at %.0f%%\n",
            pts, HG_BYTES_PER_POINT, floor_GBs, 1e3 * fl, 100 * fl / (r->ph_max.kernel / r->iters),
            100 * fl / it);
    }
    if (base && base->ran && v != HG_VAR_MPI)
        printf(
            " vs MPI baseline: %.3fx the speed (%.4f s vs %.4f s); halo per iteration %.3f ms vs %.3f ms "
            "(%.2fx)\n",
            base->time / r->time, r->time, base->time, 1e3 * r->ph_max.halo / r->iters,
            1e3 * base->ph_max.halo / base->iters,
            base->ph_max.halo > 0 ? (r->ph_max.halo / r->iters) / (base->ph_max.halo / base->iters) : 0.0);
    if (v == HG_VAR_KY)
        printf(" comm (rank 0): plan hits %llu, misses %llu; active messages sent %llu, handled %llu\n",
               (unsigned long long)r->st.plan_hits, (unsigned long long)r->st.plan_misses,
               (unsigned long long)r->st.am_sent, (unsigned long long)r->st.am_handled);
}

static void json_write(const hg_opts_t *o, int v, const hg_result_t *r, const hg_result_t *base,
                       double floor_GBs, int verified)
{
    FILE *f = fopen(o->json, "a");
    if (!f) {
        fprintf(stderr, "ky_himeno: rank 0: --json %s: cannot open\n", o->json);
        return;
    }
    char date[16];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    int split = ky_nnodes() > 1;
    double it = r->time / r->iters;
    hg_block_t b0;
    hg_block_of(o, 0, &b0);
    double pts = (double)(b0.ue[0] - b0.ub[0]) * (b0.ue[1] - b0.ub[1]) * (b0.ue[2] - b0.ub[2]);
    static const char *gm[] = {"", "am", "allreduce", "both"};
    /* blocked runs are cases of their own: kybench groups records by case */
    char tbcase[16] = "";
    if (o->gpu && o->tb > 1) snprintf(tbcase, sizeof tbcase, "_tb%d", o->tb);
    fprintf(
        f,
        "{\"bench\":\"himeno\",\"case\":\"himeno_%s_%s_%s%s_%s%s%s_n%d\",\"weak\":%s,\"kind\":\"%s\","
        "\"date\":"
        "\"%s\","
        "\"version\":\"%s\",\"ranks\":%d,\"size\":\"%s\",\"grid\":\"%dx%dx%d\",\"dims\":\"%dx%dx%d\","
        "\"decomp\":\"%s\",\"mem\":\"%s\",\"variant\":\"%s\",\"gosa_by\":\"%s\",\"pack\":%d,\"path\":\"%s\","
        "\"iters\":%d,\"time_s\":%.6g,\"ms_per_iter\":%.6g,\"mflops\":%.6g,\"gosa\":%.9g,"
        "\"phases\":{\"kernel\":%.6g,\"halo\":%.6g,\"reduce\":%.6g},"
        "\"phases_avg\":{\"kernel\":%.6g,\"halo\":%.6g,\"reduce\":%.6g},\"bytes_per_point\":%.0f",
        o->gpu ? "gpu" : "host", hg_variant_name(v), o->size, o->weak ? "_weak" : "", o->decomp,
        split ? "_split" : "", tbcase, ky_nranks(), o->weak ? "true" : "false", machine(), date, ky_version(),
        ky_nranks(), o->size, o->grid[0], o->grid[1], o->grid[2], o->dims[0], o->dims[1], o->dims[2],
        o->decomp, o->gpu ? "gpu" : "host", hg_variant_name(v),
        v == HG_VAR_KY ? gm[o->gosa] : "mpi_allreduce", o->pack, split ? "split" : "node", r->iters, r->time,
        1e3 * it, mflops(o, r->iters, r->time), r->gosa, r->ph_max.kernel, r->ph_max.halo, r->ph_max.reduce,
        r->ph_avg.kernel, r->ph_avg.halo, r->ph_avg.reduce, HG_BYTES_PER_POINT);
    if (o->gpu) fprintf(f, ",\"tb\":%d", o->tb);
    if (o->gpu && o->tb > 1) fprintf(f, ",\"tb_tile\":\"%s/%d\"", g_tb_tiles[o->tb_tile], o->tb_chunk);
    if (floor_GBs > 0) {
        double fl = pts * HG_BYTES_PER_POINT / (floor_GBs * 1e9);
        fprintf(f,
                ",\"floor_GBs\":%.6g,\"bw_GBs\":%.6g,\"kernel_bw_GBs\":%.6g,\"roofline_pct\":%.4g,"
                "\"kernel_roofline_pct\":%.4g",
                floor_GBs, pts * HG_BYTES_PER_POINT / it / 1e9,
                pts * HG_BYTES_PER_POINT / (r->ph_max.kernel / r->iters) / 1e9, 100 * fl / it,
                100 * fl / (r->ph_max.kernel / r->iters));
    }
    if (o->gpu)
        fprintf(f, ",\"block\":\"%dx%dx%dx%d%s\",\"chain\":\"%s\",\"sweep\":\"%s\"", o->block[0], o->block[1],
                o->block[2], o->block[3], o->block[4] ? "v" : "", g_chain_names[r->chain],
                o->sweep ? "alternate" : "fixed");
    if (v == HG_VAR_KY) fprintf(f, ",\"overlap\":%d,\"gosa_defer\":%d", r->overlap, r->defer);
    if (v == HG_VAR_KY)
        fprintf(f, ",\"plan_hits\":%llu,\"plan_misses\":%llu", (unsigned long long)r->st.plan_hits,
                (unsigned long long)r->st.plan_misses);
    if (base && base->ran && v != HG_VAR_MPI)
        fprintf(
            f, ",\"baseline\":\"%s\",\"base_time_s\":%.6g,\"ratio\":%.6g,\"halo_ratio\":%.6g",
            o->gpu ? "mpi_cuda_staged" : "mpi", base->time, base->time / r->time,
            base->ph_max.halo > 0 ? (r->ph_max.halo / r->iters) / (base->ph_max.halo / base->iters) : 0.0);
    if (verified >= 0) fprintf(f, ",\"verified\":%s", verified ? "true" : "false");
    fprintf(f, "}\n");
    fclose(f);
}

/* |a - ref| / |ref|, and 0 where both are the same value: a run converged to gosa = 0 matches a reference at
 * 0 (0 / 0 would be NaN, which compares false and failed the check) */
static double rel_error(double a, double ref)
{
    return a == ref ? 0.0 : fabs(a - ref) / fabs(ref);
}

int main(int argc, char **argv)
{
    if (ky_init(&argc, &argv) != KY_OK) {
        fprintf(stderr, "ky_himeno: ky_init: %s\n", ky_last_error());
        return 3;
    }
    int me = ky_rank(), nr = ky_nranks();
    hg_opts_t o;
    char err[512];
    int pr = hg_parse(argc, argv, nr, &o, err, sizeof err);
    if (pr != 0) {
        if (me == 0) {
            if (pr > 0)
                hg_usage(stdout);
            else
                fprintf(stderr, "ky_himeno: %s\n", err);
        }
        HG_KY(ky_finalize());
        return pr > 0 ? 0 : 2;
    }
#ifdef _OPENMP
    if (o.threads > 0) omp_set_num_threads(o.threads);
#endif
    if (o.gpu) { /* every rank needs a GPU, or none runs: exit 77 (CTest's skip) */
        int have = ky_ngpus() > 0 && hg_gpu_count() > 0, all = 0;
        HG_MPI(MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        if (!all) {
            if (me == 0) printf("ky_himeno: --mem gpu: no GPU found on every rank, skipping\n");
            HG_KY(ky_finalize());
            return 77;
        }
        int dev = 0;
        HG_KY(ky_gpu_device(0, &dev));
        if (hg_gpu_select(dev, err, sizeof err)) hg_fail("rank %d: GPU %d: %s", me, dev, err);
    }
    hg_block_t b;
    hg_block_of(&o, me, &b);
    /* initial values on the host, then (GPU runs) copied once */
    size_t v = b.vol;
    float *p0 = malloc(v * sizeof(float)), *hc = malloc(12 * v * sizeof(float));
    if (!p0 || !hc) hg_fail("rank %d: out of memory for a %zu-point block", me, v);
    hg_coef_t hcf = {hc, hc + 4 * v, hc + 7 * v, hc + 10 * v, hc + 11 * v}, cf = hcf;
    hg_init_values(&o, &b, p0, &hcf);
    double *d_gosa = NULL, *h_gosa = NULL;
    if (o.gpu) {
        float *dc;
        if (hg_gpu_alloc((void **)&dc, 12 * v * sizeof(float), err, sizeof err) ||
            hg_gpu_copy(dc, hc, 12 * v * sizeof(float), err, sizeof err) ||
            hg_gpu_alloc((void **)&d_gosa, (3 + HG_TB_RING_SLOTS) * sizeof(double), err, sizeof err) ||
            hg_gpu_host_alloc((void **)&h_gosa, sizeof(double), err, sizeof err))
            hg_fail("rank %d: GPU arrays (%zu MB): %s", me, 13 * v * sizeof(float) >> 20, err);
        cf = (hg_coef_t){dc, dc + 4 * v, dc + 7 * v, dc + 10 * v, dc + 11 * v};
    }
    /* one rank on a GPU: the iterations chained (several ranks exchange halos and gosa between kernels) */
    int chain_mode = o.gpu && nr == 1 ? o.chain : HG_CHAIN_SYNC;
    if (o.gpu) tune_kernel(&o, &b, p0, &cf, d_gosa, chain_mode);
    int tb_failed = o.gpu && o.tb > 1 && o.check && verify_tb(&o, &b, p0, &cf, d_gosa);
    if (o.nogosa) {
        if (!o.gpu || o.check)
            hg_fail("rank %d: --diag-nogosa is a GPU measurement and cannot be checked", me);
        hg_gpu_set_gosa(0);
        if (me == 0) printf("ky_himeno: --diag-nogosa: the kernel computes no gosa (a measurement only)\n");
    }
    HG_KY(hg_gosa_setup(&o));
    double floor_GBs = 0.0;
    if (o.gpu) { /* rank 0 alone, so that ranks sharing its GPU do not disturb the measurement */
        if (me == 0) floor_GBs = hg_gpu_copy_bw();
        HG_MPI(MPI_Bcast(&floor_GBs, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    }
    if (me == 0) {
        printf("ky_himeno: %d rank(s), %s kernels, %s\n", nr, o.gpu ? "CUDA" : "OpenMP",
               o.gpu ? "GPU segments" : "host segments");
        printf("mimax = %d mjmax = %d mkmax = %d\n", o.grid[0], o.grid[1], o.grid[2]);
        printf("imax = %d jmax = %d kmax =%d\n", o.grid[0] - 1, o.grid[1] - 1, o.grid[2] - 1);
        printf("I-decomp = %d J-decomp = %d K-decomp =%d   (%s)\n", o.dims[0], o.dims[1], o.dims[2],
               o.decomp);
    }
    hg_result_t res[3];
    memset(res, 0, sizeof res);
    for (int var = HG_VAR_KY; var <= HG_VAR_MPI; var++) {
        if (!(o.variants & var)) continue;
        hg_run_t r;
        memset(&r, 0, sizeof r);
        r.o = &o, r.b = b, r.variant = var, r.p0 = p0, r.cf = cf, r.d_gosa = d_gosa, r.h_gosa = h_gosa;
        /* --gosa allreduce / both on one rank: the collective runs every iteration, so no chain */
        r.chain = var == HG_VAR_KY && o.gosa != HG_GOSA_AM ? HG_CHAIN_SYNC : chain_mode;
        /* the hand-written baseline keeps its loop; one rank's chain has no halo and sums nothing */
        r.overlap = var == HG_VAR_KY && r.chain == HG_CHAIN_SYNC && o.overlap;
        r.defer = var == HG_VAR_KY && r.chain == HG_CHAIN_SYNC && o.defer;
        if (var == HG_VAR_KY) {
            HG_KY(hg_ky_halo_create(&o, &b, &r.ky, &r.f[0], &r.f[1]));
        } else {
            for (int x = 0; x < 2; x++)
                if (o.gpu ? hg_gpu_alloc((void **)&r.f[x], v * sizeof(float), err, sizeof err)
                          : !(r.f[x] = malloc(v * sizeof(float))))
                    hg_fail("rank %d: MPI variant's fields: %s", me, o.gpu ? err : "out of memory");
            if (hg_mpi_halo_create(&o, &b, &r.mpi)) hg_fail("rank %d: MPI baseline set-up failed", me);
        }
        reset_fields(&r);
        run_variant(&o, &r, &res[var]);
        vec_free(&r);
        if (var == HG_VAR_KY) {
            hg_ky_halo_destroy(r.ky);
        } else {
            hg_mpi_halo_destroy(r.mpi);
            for (int x = 0; x < 2; x++) o.gpu ? hg_gpu_free(r.f[x]) : free(r.f[x]);
        }
    }
    int failed = 0, verified = -1;
    double ref_d = 0, ref_ps = 0;
    float ref_f = 0;
    if (o.check && me == 0) {
        int nn = res[HG_VAR_KY].ran ? res[HG_VAR_KY].iters : res[HG_VAR_MPI].iters;
        if (hg_reference(o.grid, nn, o.bcoef, &ref_d, &ref_f, &ref_ps))
            hg_fail("rank 0: the serial reference needs %zu MB",
                    (size_t)16 * o.grid[0] * o.grid[1] * o.grid[2] * 4 >> 20);
        verified = 1;
    }
    if (me == 0) {
        for (int var = HG_VAR_KY; var <= HG_VAR_MPI; var++) {
            if (!res[var].ran) continue;
            print_result(&o, var, &res[var], var == HG_VAR_KY ? &res[HG_VAR_MPI] : NULL, floor_GBs);
            if (o.check) {
                double eg = rel_error(res[var].gosa, ref_d), ep = rel_error(res[var].psum, ref_ps);
                int ok = eg <= 1e-6 && ep <= 1e-6 &&
                         res[var].iters == (res[HG_VAR_KY].ran ? res[HG_VAR_KY].iters : res[var].iters);
                printf(
                    " check against the serial original (%d iterations): gosa %.9e vs %.9e (float sum in the "
                    "original's order: %.6e), rel. error %.2e; sum of p %.12e vs %.12e, rel. error %.2e: "
                    "%s\n",
                    res[var].iters, res[var].gosa, ref_d, (double)ref_f, eg, res[var].psum, ref_ps, ep,
                    ok ? "OK" : "FAIL");
                if (!ok) failed = 1, verified = 0;
            }
        }
        if (o.json)
            for (int var = HG_VAR_KY; var <= HG_VAR_MPI; var++)
                if (res[var].ran)
                    json_write(&o, var, &res[var], var == HG_VAR_KY ? &res[HG_VAR_MPI] : NULL, floor_GBs,
                               verified);
        fflush(stdout);
    }
    if (tb_failed) failed = 1;
    HG_MPI(MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (o.gpu) {
        hg_gpu_free(cf.a);
        hg_gpu_free(d_gosa);
        hg_gpu_host_free(h_gosa);
    }
    free(p0);
    free(hc);
    HG_KY(ky_finalize());
    return failed ? 1 : 0;
}
