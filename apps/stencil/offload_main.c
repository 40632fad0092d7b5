/* ky_stencil_offload: seed 000's GPU stencil (Figs. 8-11) on the global space with the directive macros
 * (offload_device.c), checked against ky_stencil's serial run (kernel.c). Built once per back end:
 * ky_stencil_offload is host OpenMP; the tests build every back end (apps/stencil/CMakeLists.txt).
 *
 *   kyrun -n 2 ky_stencil_offload [--nx 128] [--ny 64] [--nz 64] [--nt 8] [--bt 4] [--points 7|27|7,27]
 *         [--variant host|p2p|all] [--devices N] [--reps R] [--check] [--require-device] [--shape
 * flat|rows|warps|gang|team]
 *         [--json FILE]
 *
 * --devices: device threads per rank (default: the devices found, shared by the node's ranks; 1 on the host
 * back ends). --require-device: fail unless the back end found a device. Exit status: 0; 1 if a check
 * failed; 2 on a usage problem or an error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "offload_stencil.h"

static const char *vnames[SO_NVARIANTS] = {"host", "p2p"};

static int usage(int rank, const char *msg)
{
    if (rank == 0)
        fprintf(stderr,
                "ky_stencil_offload: %s\nusage: ky_stencil_offload [--nx N] [--ny N] [--nz N] [--nt STEPS] "
                "[--bt WIDTH]\n       [--points 7|27|7,27] [--variant host|p2p|all] [--devices N] [--reps R] "
                "[--check]\n       [--require-device] [--shape flat|rows|warps|gang|team] [--json FILE]\n",
                msg);
    return 2;
}

/* points of this rank's slab that differ from the reference by more than 1e-12 (relative), over ranks */
static long check_slab(const st_params_t *p, const double *mine, const double *ref)
{
    long wrong = 0, all = 0;
    for (size_t i = 0; i < (size_t)(p->ed - p->st) * p->plane; i++)
        if (!(fabs(mine[i] - ref[i]) <= 1e-12 * ST_MAX(fabs(ref[i]), 1e-300))) wrong++;
    MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

static void json_line(const st_params_t *p, const so_devs_t *dv, int v, double t, double gf, int ok)
{
    char date[16];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    const char *kind = getenv("KY_BENCH_MACHINE");
    FILE *f = fopen(p->json, "a");
    if (f == NULL) {
        perror(p->json);
        return;
    }
    fprintf(
        f,
        "{\"bench\":\"stencil\",\"case\":\"%dpt_offload_%s_%s\",\"variant\":\"offload_%s\","
        "\"backend\":\"%s\",\"stencil\":\"%dpt\",\"mem\":\"%s\",\"N\":%d,\"nz\":%d,\"ny\":%d,\"nx\":%d,"
        "\"steps\":%d,\"bt\":%d,\"gpus\":%d,\"devices\":%d,\"step_ms\":%.6g,\"time_s\":%.6g,\"gflops\":%.6g,"
        "\"kind\":\"%s\",\"date\":\"%s\",\"version\":\"%s\",\"ranks\":%d",
        p->points, vnames[v], so_backend(), vnames[v], so_backend(), p->points, dv->ndev > 0 ? "gpu" : "host",
        p->nx, p->nz, p->ny, p->nx, p->nt, p->bt,
        dv->ndev > 0 ? ST_MIN(dv->ndev, dv->devices * ky_local_nranks()) : 0, dv->devices, t * 1e3 / p->nt, t,
        gf, kind && *kind ? kind : "unknown", date, ky_version(), p->nranks);
    if (ok >= 0) fprintf(f, ",\"verified\":%s", ok ? "true" : "false");
    fprintf(f, ",\"shape\":\"%s\"}\n", so_shape());
    fclose(f);
}

/* every wanted variant at p->points; returns 0, 1 (a check failed) or 2 (an error) */
static int run_points(const st_params_t *p, const so_devs_t *dv, const int want[SO_NVARIANTS], double *A,
                      double *B)
{
    double *ref = p->check ? st_reference(p) : NULL; /* every rank: the tests' grids are small */
    if (p->check && ref == NULL) return 2;
    int rc = 0;
    for (int v = 0; v < SO_NVARIANTS && rc < 2; v++) {
        if (!want[v]) continue;
        double best = -1, *result = NULL;
        for (int r = 0; r < p->reps && rc < 2; r++) {
#pragma omp parallel
            {
                st_fill(A, 0, p, p->st, p->ed);
                st_fill(B, 0, p, p->st, p->ed);
            }
            double t = 0, mx;
            int s = ky_barrier();
            ky_dsm_stats_reset(); /* KY_STATS=1 then shows the last run's */
            if (s == KY_OK) s = so_run(v, p, dv, A, B, &t, &result);
            if (s != KY_OK) {
                fprintf(stderr, "ky_stencil_offload: rank %d: %s: %s\n", p->rank, vnames[v], ky_last_error());
                rc = 2;
            }
            MPI_Allreduce(&t, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (best < 0 || mx < best) best = mx;
        }
        if (rc == 2) break;
        long wrong =
            ref ? check_slab(p, result + (size_t)p->st * p->plane, ref + (size_t)p->st * p->plane) : 0;
        double pts = (double)(p->nz - 2) * (p->ny - 2) * (p->nx - 2);
        double gf = best > 0 ? pts * p->nt * st_flops_per_point(p->points) / best * 1e-9 : 0;
        if (p->rank == 0) {
            printf("%-8s %-22s %7d %10.4f %10.3f %9.2f %6s\n", vnames[v], so_backend(), dv->devices, best,
                   best * 1e3 / p->nt, gf, ref ? (wrong ? "FAIL" : "OK") : "-");
            if (wrong) printf("#   %s: %ld points differ from the serial run\n", vnames[v], wrong);
            if (p->json) json_line(p, dv, v, best, gf, ref ? wrong == 0 : -1);
            fflush(stdout);
        }
        if (wrong) rc = 1;
    }
    free(ref);
    return rc;
}

int main(int argc, char **argv)
{
    st_params_t p;
    memset(&p, 0, sizeof p);
    p.nx = 128, p.ny = 64, p.nz = 64, p.nt = 8, p.bt = 4, p.reps = 1;
    const char *points = "7", *variants = "all";
    int devices = 0, require = 0, rc = 0, want[SO_NVARIANTS] = {0};
    if (ky_init(&argc, &argv) != KY_OK) {
        fprintf(stderr, "ky_stencil_offload: ky_init: %s\n", ky_last_error());
        return 2;
    }
    p.rank = ky_rank(), p.nranks = ky_nranks();
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int *iv = !strcmp(a, "--nx")        ? &p.nx
                  : !strcmp(a, "--ny")      ? &p.ny
                  : !strcmp(a, "--nz")      ? &p.nz
                  : !strcmp(a, "--nt")      ? &p.nt
                  : !strcmp(a, "--bt")      ? &p.bt
                  : !strcmp(a, "--reps")    ? &p.reps
                  : !strcmp(a, "--devices") ? &devices
                                            : NULL;
        if (iv && val)
            *iv = atoi(val), i++;
        else if (!strcmp(a, "--points") && val)
            points = val, i++;
        else if (!strcmp(a, "--variant") && val)
            variants = val, i++;
        else if (!strcmp(a, "--json") && val)
            p.json = val, i++;
        else if (!strcmp(a, "--shape") && val && so_set_shape(val) == 0)
            i++;
        else if (!strcmp(a, "--check"))
            p.check = 1;
        else if (!strcmp(a, "--require-device"))
            require = 1;
        else
            rc = usage(p.rank, "unknown argument or missing value");
    }
    for (int v = 0; v < SO_NVARIANTS; v++)
        want[v] = strcmp(variants, "all") == 0 || strstr(variants, vnames[v]) != NULL;
    if (rc == 0 && !want[SO_HOST] && !want[SO_P2P]) rc = usage(p.rank, "--variant host, p2p or all");
    if (rc == 0 && (p.nx < 3 || p.ny < 3 || p.nz < 3 || p.nt < 1 || p.bt < 1 || p.reps < 1 || devices < 0))
        rc = usage(p.rank, "sizes must be >= 3, nt, bt and reps >= 1");
    so_devs_t dv;
    so_devices(devices, &dv);
    if (rc == 0 && require && dv.ndev == 0) {
        if (p.rank == 0)
            fprintf(stderr, "ky_stencil_offload: --require-device: %s found none\n", so_backend());
        rc = 2;
    }
    p.threads = dv.devices;
    p.plane = (size_t)p.ny * p.nx;
    p.block = (p.nz + p.nranks - 1) / p.nranks;
    p.st = ST_MIN(p.rank * p.block, p.nz);
    p.ed = ST_MIN(p.st + p.block, p.nz);
    int dims[4] = {p.nz, p.ny, p.nx, -1}, divs[4] = {p.nranks, 1, 1, -1};
    double *A = rc ? NULL : ky_mapalloc(dims, divs, sizeof(double), 0, p.nranks);
    double *B = A ? ky_mapalloc(dims, divs, sizeof(double), 0, p.nranks) : NULL;
    if (rc == 0 && B == NULL) {
        fprintf(stderr, "ky_stencil_offload: ky_mapalloc: %s\n", ky_last_error());
        rc = 2;
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%s", points);
    for (char *tok = strtok(buf, ","); tok && rc < 2; tok = strtok(NULL, ",")) {
        p.points = atoi(tok);
        if (p.points != 7 && p.points != 27) {
            rc = usage(p.rank, "--points 7, 27 or 7,27");
            break;
        }
        if (p.rank == 0)
            printf(
                "# ky_stencil_offload %d-point, grid %d x %d x %d (z y x), %d steps, bt %d, %d ranks x %d "
                "device threads, back end %s, %d devices found%s\n%-8s %-22s %7s %10s %10s %9s %6s\n",
                p.points, p.nz, p.ny, p.nx, p.nt, p.bt, p.nranks, dv.devices, so_backend(), dv.ndev,
                dv.shared ? " (shared: private copies per thread)" : "", "variant", "backend", "devices",
                "time_s", "ms/step", "GFLOP/s", "check");
        int r = run_points(&p, &dv, want, A, B); /* not inside ST_MAX: it evaluates twice */
        rc = ST_MAX(rc, r);
    }
    if (p.rank == 0 && p.check)
        printf("ky_stencil_offload: check against the serial run: %s\n", rc == 1 ? "FAIL"
                                                                         : rc    ? "ERROR"
                                                                                 : "OK");
    if (B) ky_free(B);
    if (A) ky_free(A);
    ky_finalize();
    return rc;
}
