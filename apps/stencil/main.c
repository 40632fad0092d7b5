/* ky_stencil: 3-D 7- and 27-point stencils with temporal blocking on Kyoyu's DSM against hand-written MPI
 * (the DSM's application; docs/api.md "The stencil application"). One job runs the chosen variants one
 * after another on the same grid, checks each against a serial run and prints time, GFLOP/s and the DSM
 * statistics; --json appends JSON lines (docs/benchmarks.md).
 *
 *   kyrun -n 4 ky_stencil [--nx 128] [--ny 64] [--nz 64] [--nt 8] [--bt 4] [--points 7|27|7,27]
 *         [--variant all|mpi,faults,preload,barrier] [--threads N|auto] [--reps R] [--check] [--weak N]
 *         [--json FILE] [--record dsm|stencil] [-v]
 *
 * Exit status: 0; 1 if a check failed; 2 on a usage problem or a variant that cannot run (named
 * explicitly; with --variant all such a variant is skipped with the reason). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "stencil.h"

void st_check_slab(const st_params_t *p, const double *mine, const double *ref, st_result_t *r)
{
    long wrong = 0;
    double worst = 0.0;
    size_t n = (size_t)(p->ed - p->st) * p->plane;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(mine[i] - ref[i]) / ST_MAX(fabs(ref[i]), 1e-300);
        if (!(e <= 1e-12)) { /* NaN counts as wrong */
            if (wrong < 3 && p->verbose)
                fprintf(stderr, "ky_stencil: rank %d: z %zu y %zu x %zu: %.17g, serial %.17g\n", p->rank,
                        p->st + i / p->plane, i % p->plane / p->nx, i % p->nx, mine[i], ref[i]);
            wrong++;
            e = isnan(e) ? 1e300 : e;
        }
        worst = ST_MAX(worst, e);
    }
    MPI_Allreduce(&wrong, &r->wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&worst, &r->max_err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    r->verified = r->wrong == 0;
}

static void usage_text(FILE *out)
{
    fprintf(
        out,
        "usage: ky_stencil [--nx N] [--ny N] [--nz N] [--nt STEPS] [--bt WIDTH] [--points 7|27|7,27]\n"
        "       [--variant all|mpi,faults,preload,barrier] [--threads N|auto] [--reps R] [--check]\n"
        "       [--weak N (per-rank N^3: nx = ny = N, nz = N*ranks)] [--json FILE] [--record dsm|stencil] "
        "[-v]\n");
}

static int usage(int rank, const char *msg)
{
    if (rank == 0) {
        if (msg) fprintf(stderr, "ky_stencil: %s\n", msg);
        usage_text(stderr);
    }
    return 2;
}

/* "mpi,faults" or "all" into want[]; 0 or -1 on an unknown name. */
static int parse_variants(const char *s, int want[ST_NVARIANTS], int *all)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (strcmp(tok, "all") == 0) {
            *all = 1;
            for (int v = 0; v < ST_NVARIANTS; v++) want[v] = 1;
            continue;
        }
        int v = 0;
        while (v < ST_NVARIANTS && strcmp(tok, st_variant_name(v)) != 0) v++;
        if (v == ST_NVARIANTS) return -1;
        want[v] = 1;
    }
    return 0;
}

/* Rank 0 computes the whole grid serially and hands every rank its slab (MPI_Scatterv of planes). */
static double *reference_slab(const st_params_t *p)
{
    double *full = NULL, *mine = malloc(((size_t)(p->ed - p->st) * p->plane + 1) * sizeof(double));
    int ok = mine != NULL;
    if (p->rank == 0) {
        full = st_reference(p);
        ok = ok && full != NULL;
    }
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (p->rank == 0) fprintf(stderr, "ky_stencil: not enough memory for the serial check\n");
        free(full);
        free(mine);
        return NULL;
    }
    MPI_Datatype plane;
    MPI_Type_contiguous((int)p->plane, MPI_DOUBLE, &plane);
    MPI_Type_commit(&plane);
    int *counts = malloc(sizeof(int) * p->nranks), *displs = malloc(sizeof(int) * p->nranks);
    for (int r = 0; r < p->nranks; r++) {
        int st = ST_MIN(r * p->block, p->nz), ed = ST_MIN(st + p->block, p->nz);
        counts[r] = ed - st;
        displs[r] = st;
    }
    MPI_Scatterv(full, counts, displs, plane, mine, p->ed - p->st, plane, 0, MPI_COMM_WORLD);
    MPI_Type_free(&plane);
    free(counts);
    free(displs);
    free(full);
    return mine;
}

static int run_points(st_params_t *p, const int want[ST_NVARIANTS], int all)
{
    double *ref = NULL;
    if (p->check) {
        ref = reference_slab(p);
        if (ref == NULL) return 2;
    }
    st_print_header(p);
    st_result_t res[ST_NVARIANTS];
    st_arrays_t arr[ST_NVARIANTS];
    int rc = 0, live[ST_NVARIANTS] = {0};
    for (int v = 0; v < ST_NVARIANTS; v++) {
        memset(&res[v], 0, sizeof res[v]);
        memset(&arr[v], 0, sizeof arr[v]);
        if (!want[v]) continue;
        int s = v == ST_MPI ? st_mpi_open(p, &arr[v], &res[v]) : st_dsm_open(v, p, &arr[v], &res[v]);
        if (s == 0)
            live[v] = 1;
        else if (!all) {
            if (p->rank == 0)
                fprintf(stderr, "ky_stencil: %s cannot run: %s\n", st_variant_name(v), res[v].note);
            rc = 2;
        }
    }
    /* Repetitions outside, variants inside: on a shared machine the speed drifts over a job by more than the
     * differences measured (H200 VM, 2026-11-24: the same MPI run 0.24-0.32 s), so each round runs every
     * variant once and each keeps its best. */
    for (int rep = 0; rep < p->reps; rep++)
        for (int v = 0; v < ST_NVARIANTS; v++) {
            if (!live[v]) continue;
            int s = v == ST_MPI ? st_mpi_rep(p, &arr[v], &res[v]) : st_dsm_rep(v, p, &arr[v], &res[v]);
            if (s != 0) {
                live[v] = 0;
                rc = 2;
            }
        }
    for (int v = 0; v < ST_NVARIANTS; v++) {
        st_result_t *r = &res[v];
        if (!want[v]) continue;
        if (v == ST_MPI)
            st_mpi_close(p, &arr[v], ref, r);
        else
            st_dsm_close(p, &arr[v], ref, r);
        st_print_row(p, v, r, v == ST_MPI ? NULL : &res[ST_MPI]);
        st_json_write(p, v, r, v == ST_MPI ? NULL : &res[ST_MPI]);
        if (r->ran && r->verified == 0) rc = rc ? rc : 1;
    }
    if (p->rank == 0 && p->check)
        printf("ky_stencil: %d-point check against the serial run: %s\n", p->points,
               rc == 1 ? "FAIL"
               : rc    ? "ERROR"
                       : "OK");
    free(ref);
    return rc;
}

int main(int argc, char **argv)
{
    st_params_t p;
    memset(&p, 0, sizeof p);
    p.nx = 128, p.ny = 64, p.nz = 64, p.nt = 8, p.bt = 4, p.reps = 1, p.record = "dsm";
    const char *points = "7", *variants = "all";
    /* --help needs no job: answered before ky_init, so it works without a launcher */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage_text(stdout);
            return 0;
        }
    if (ky_init(&argc, &argv) != KY_OK) {
        fprintf(stderr, "ky_stencil: ky_init: %s\n", ky_last_error());
        return 2;
    }
    p.rank = ky_rank(), p.nranks = ky_nranks();
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int *iv = !strcmp(a, "--nx")        ? &p.nx
                  : !strcmp(a, "--ny")      ? &p.ny
                  : !strcmp(a, "--nz")      ? &p.nz
                  : !strcmp(a, "--nt")      ? &p.nt
                  : !strcmp(a, "--bt")      ? &p.bt
                  : !strcmp(a, "--threads") ? &p.threads
                  : !strcmp(a, "--reps")    ? &p.reps
                  : !strcmp(a, "--weak")    ? &p.weak
                                            : NULL;
        if (!strcmp(a, "--threads") && val && !strcmp(val, "auto")) {
            p.threads = -1, i++; /* the node's cores shared by its ranks (less the progress threads) */
        } else if (iv && val) {
            *iv = atoi(val), i++;
        } else if (!strcmp(a, "--points") && val) {
            points = val, i++;
        } else if (!strcmp(a, "--variant") && val) {
            variants = val, i++;
        } else if (!strcmp(a, "--json") && val) {
            p.json = val, i++;
        } else if (!strcmp(a, "--record") && val) {
            p.record = val, i++;
        } else if (!strcmp(a, "--check")) {
            p.check = 1;
        } else if (!strcmp(a, "-v")) {
            p.verbose = 1;
        } else {
            rc = usage(p.rank, "unknown argument or missing value");
            if (p.rank == 0) fprintf(stderr, "  (at '%s')\n", a);
        }
    }
    int want[ST_NVARIANTS] = {0}, all = 0;
    if (rc == 0 && parse_variants(variants, want, &all) != 0) rc = usage(p.rank, "unknown variant");
    if (rc == 0 && p.weak > 0) p.nx = p.ny = p.weak, p.nz = p.weak * p.nranks;
    if (rc == 0 && (p.nx < 3 || p.ny < 3 || p.nz < 3 || p.nt < 1 || p.bt < 1 || p.reps < 1))
        rc = usage(p.rank, "sizes must be >= 3, nt, bt and reps >= 1");
    if (rc == 0 && strcmp(p.record, "dsm") && strcmp(p.record, "stencil"))
        rc = usage(p.rank, "--record dsm|stencil");
    if (rc == 0) {
#ifdef _OPENMP
        if (p.threads < 0) {
            /* the node's cores shared by its ranks, less one per rank (where it has two or more) for Kyoyu's
             * progress thread, which spins while idle: a team thread sharing its core runs at half speed and
             * holds up every loop (8 ranks x 2 threads on 16 cores ran the MPI variant 2x slower) */
            int per = omp_get_num_procs() / ST_MAX(ky_local_nranks(), 1);
            if (per >= 2) per--;
            omp_set_num_threads(ST_MAX(per, 1));
        } else if (p.threads > 0)
            omp_set_num_threads(p.threads);
        else if (getenv("OMP_NUM_THREADS") == NULL)
            omp_set_num_threads(1); /* not every core per rank */
        p.threads = omp_get_max_threads();
#else
        p.threads = 1;
#endif
        p.plane = (size_t)p.ny * p.nx;
        p.block = (p.nz + p.nranks - 1) / p.nranks;
        p.st = ST_MIN(p.rank * p.block, p.nz);
        p.ed = ST_MIN(p.st + p.block, p.nz);
        char buf[32];
        snprintf(buf, sizeof buf, "%s", points);
        for (char *tok = strtok(buf, ","); tok && rc != 2; tok = strtok(NULL, ",")) {
            p.points = atoi(tok);
            if (p.points != 7 && p.points != 27) {
                rc = usage(p.rank, "--points 7, 27 or 7,27");
                break;
            }
            int r = run_points(&p, want, all);
            rc = ST_MAX(rc, r);
        }
    }
    ky_finalize();
    return rc;
}
