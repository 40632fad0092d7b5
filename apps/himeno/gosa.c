/* ky_himeno's residual: every iteration each rank's gosa (sum of ss^2 over its points) is summed over all
 * ranks, two ways. The seed's: an active message (medium, 8 bytes) from every rank to rank 0, which adds the
 * values in rank order once all have come and answers each rank with an active message carrying the sum.
 * Or ky_allreduce on the GPU (or host) buffer the kernel wrote. "both" runs the two and insists they agree.
 * Handlers run on the progress thread (or in ky_poll): they only store and count, with atomics. */
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <kyoyu.h>
#include <mpi.h>

#include "himeno.h"

#define HG_AM_UP 17   /* rank -> 0: payload = local gosa, args[0] = iteration */
#define HG_AM_DOWN 18 /* 0 -> rank: payload = the sum, args[0] = iteration */
#define HG_AM_TIMEOUT 300.0

static double *g_vals[2];  /* rank 0: each rank's value, by iteration parity */
static int g_count[2];     /* rank 0: values received for that parity */
static double g_result[2]; /* every rank: the sum, by parity */
static uint64_t g_done;    /* every rank: iterations whose sum has arrived (iteration + 1) */
static int g_poll;         /* no progress thread: every wait runs the handlers */

static void am_up(ky_am_token_t t, void *payload, size_t n, const uint64_t *args, int nargs)
{
    int src = ky_am_source(t), par = (int)(args[0] & 1);
    if (n != sizeof(double) || nargs != 1 || src <= 0) return;
    memcpy(&g_vals[par][src], payload, sizeof(double));
    __atomic_fetch_add(&g_count[par], 1, __ATOMIC_RELEASE);
}

static void am_down(ky_am_token_t t, void *payload, size_t n, const uint64_t *args, int nargs)
{
    (void)t;
    if (n != sizeof(double) || nargs != 1) return;
    memcpy(&g_result[args[0] & 1], payload, sizeof(double));
    __atomic_store_n(&g_done, args[0] + 1, __ATOMIC_RELEASE);
}

int hg_gosa_setup(const hg_opts_t *o)
{
    (void)o;
    int rc, n = ky_nranks();
    for (int p = 0; p < 2; p++)
        if (!(g_vals[p] = calloc((size_t)n, sizeof(double)))) return KY_ERR_NOMEM;
    const char *pt = NULL;
    g_poll = ky_config_get("KY_PROGRESS_THREAD", &pt) == KY_OK && pt && !strcmp(pt, "0");
    if ((rc = ky_am_register(HG_AM_UP, am_up)) != KY_OK) return rc;
    if ((rc = ky_am_register(HG_AM_DOWN, am_down)) != KY_OK) return rc;
    return ky_comm_barrier(); /* handlers registered everywhere before the first message */
}

/* The waiting rank runs the handlers itself (ky_poll): always without a progress thread, and every 64th turn
 * with one, because where ranks fill the cores the idle progress thread sleeps between polls: on 16 CPU
 * ranks on 16 cores each gosa round trip then took 0.8-1.0 ms (1.09x the original C+MPI with
 * KY_PROGRESS_THREAD=0, 0.73x without). ky_poll only tries the engine's lock; the 64 keep the waiting rank
 * off that lock while a spinning progress thread serves it. */
static int spin(const char *what, int (*ready)(uint64_t), uint64_t arg)
{
    double t0 = hg_now();
    unsigned spins = 0;
    while (!ready(arg)) {
        if (g_poll || spins % 64 == 63) {
            int r = ky_poll();
            if (r < 0) return r;
        }
        if (++spins % 64 == 0) sched_yield(); /* ranks may outnumber cores: let the handlers run */
        if (spins % 4096 == 0 && hg_now() - t0 > HG_AM_TIMEOUT)
            hg_fail("rank %d: gosa: %s of iteration %llu did not come in %.0f s", ky_rank(), what,
                    (unsigned long long)arg, HG_AM_TIMEOUT);
    }
    return KY_OK;
}
static int all_in(uint64_t it)
{
    return __atomic_load_n(&g_count[it & 1], __ATOMIC_ACQUIRE) >= ky_nranks() - 1;
}
static int sum_in(uint64_t it)
{
    return __atomic_load_n(&g_done, __ATOMIC_ACQUIRE) >= it + 1;
}

static int gosa_am(double local, uint64_t it, double *out)
{
    int rc, n = ky_nranks(), par = (int)(it & 1);
    if (ky_rank() != 0) {
        if ((rc = ky_am_medium(0, HG_AM_UP, &local, sizeof local, &it, 1)) != KY_OK) return rc;
        if ((rc = spin("the sum from rank 0", sum_in, it)) != KY_OK) return rc;
        *out = g_result[par];
        return KY_OK;
    }
    if ((rc = spin("the values of every rank", all_in, it)) != KY_OK) return rc;
    double s = local;
    for (int r = 1; r < n; r++) s += g_vals[par][r];
    /* this parity's next use is two iterations on, after every rank has had this answer */
    __atomic_store_n(&g_count[par], 0, __ATOMIC_RELAXED);
    for (int r = 1; r < n; r++)
        if ((rc = ky_am_medium(r, HG_AM_DOWN, &s, sizeof s, &it, 1)) != KY_OK) return rc;
    *out = s;
    return KY_OK;
}

int hg_gosa_sum(const hg_opts_t *o, int mode, const double *h_local, double *d_local, double *d_sum,
                uint64_t it, double *out)
{
    char err[256];
    double local = h_local ? *h_local : 0.0, am = 0.0, ar = 0.0;
    int rc;
    if (!h_local && o->gpu && (mode & HG_GOSA_AM) &&
        hg_gpu_copy(&local, d_local, sizeof local, err, sizeof err))
        hg_fail("rank %d: gosa: reading the kernel's sum: %s", ky_rank(), err);
    if ((mode & HG_GOSA_AM) && (rc = gosa_am(local, it, &am)) != KY_OK) return rc;
    if (mode & HG_GOSA_ALLREDUCE) {
        if (o->gpu) {
            if ((rc = ky_allreduce(d_local, d_sum, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD)) != KY_OK) return rc;
            if (hg_gpu_copy(&ar, d_sum, sizeof ar, err, sizeof err))
                hg_fail("rank %d: gosa: reading the allreduce's sum: %s", ky_rank(), err);
        } else if ((rc = ky_allreduce(&local, &ar, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD)) != KY_OK) {
            return rc;
        }
    }
    if (mode == HG_GOSA_BOTH && !(fabs(am - ar) <= 1e-12 * fabs(am)))
        hg_fail("rank %d: gosa of iteration %llu: active messages give %.17g, ky_allreduce %.17g", ky_rank(),
                (unsigned long long)it, am, ar);
    *out = (mode & HG_GOSA_AM) ? am : ar;
    return KY_OK;
}

int hg_gosa_mpi(const hg_opts_t *o, const double *h_local, double *d_local, double *out)
{
    char err[256];
    double local = h_local ? *h_local : 0.0;
    if (!h_local && o->gpu && hg_gpu_copy(&local, d_local, sizeof local, err, sizeof err))
        hg_fail("rank %d: gosa (MPI): %s", ky_rank(), err);
    if (MPI_Allreduce(&local, out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        hg_fail("rank %d: gosa: MPI_Allreduce failed", ky_rank());
    return 0;
}

int hg_gosa_sum_all(const hg_opts_t *o, int mode, const double *local, size_t n, double *out)
{
    (void)o;
    int rc = KY_OK, nr = ky_nranks();
    double *all = NULL, *ar = NULL, *mine;
    if (n == 0) return KY_OK;
    if (!(mine = malloc(n * sizeof(double)))) return KY_ERR_NOMEM;
    memcpy(mine, local, n * sizeof(double)); /* out may be local */
    local = mine;
    if (mode & HG_GOSA_AM) {
        if (!(all = malloc((size_t)nr * n * sizeof(double)))) {
            rc = KY_ERR_NOMEM;
            goto out;
        }
        if ((rc = ky_allgather(local, n * sizeof(double), all, KY_TEAM_WORLD)) != KY_OK) goto out;
        /* gosa_am's additions: rank 0's value, then ranks 1 .. in order */
        for (size_t m = 0; m < n; m++) {
            double s = all[m];
            for (int r = 1; r < nr; r++) s += all[(size_t)r * n + m];
            out[m] = s;
        }
    }
    if (mode & HG_GOSA_ALLREDUCE) {
        double *dst = out;
        if (mode == HG_GOSA_BOTH && !(dst = ar = malloc(n * sizeof(double)))) {
            rc = KY_ERR_NOMEM;
            goto out;
        }
        if ((rc = ky_allreduce(local, dst, n, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD)) != KY_OK) goto out;
    }
    if (mode == HG_GOSA_BOTH)
        for (size_t m = 0; m < n; m++)
            if (!(fabs(out[m] - ar[m]) <= 1e-12 * fabs(out[m])))
                hg_fail(
                    "rank %d: gosa of iteration %zu: active messages' sums give %.17g, ky_allreduce %.17g",
                    ky_rank(), m, out[m], ar[m]);
out:
    free(mine);
    free(all);
    free(ar);
    return rc;
}
