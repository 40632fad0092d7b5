/* ky_cg: distributed conjugate gradient on Kyoyu's sparse layer (seed 001). Reads or generates a matrix,
 * solves A x = b with b = A * ones (so the exact solution is all ones) by each scheme asked for, and prints
 * time per iteration, GFLOP/s, the residual, the error against ones and every rank's breakdown into the
 * seed's Figs. 9-10 phases (SpMV, DOT, AXPY, allgather/halo, allreduce). npb:CLASS runs NPB CG's benchmark
 * and its verification instead. Public API only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kyoyu.h>

#ifdef KY_APP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

typedef struct {
    const char *matrix, *schemes, *json;
    int iters, part, memkind, algo, repeat, quiet;
    double rtol;
} args_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ky_cg --matrix FILE|poisson7:N|poisson27:N|npb:S|W|A|B|C|standin:NAME [options]\n"
            "  --scheme S     allgather, halo, pipelined, graph (GPU), comma list or all (default halo)\n"
            "  --iters N      iterations (fixed count when no --rtol; default 1000)\n"
            "  --rtol R       stop when ||r||/||r0|| < R (max --iters)\n"
            "  --algo A       allgather algorithm of the allgather scheme: auto, ring, neighbor, rd, bruck\n"
            "  --part P       rows or nnz: balance the row partition by rows or by nonzeros (default rows)\n"
            "  --mem M        host or gpu (default host)\n"
            "  --repeat K     solve K times, report the fastest (default 1)\n"
            "  --json FILE    also write the results as JSON (- for stdout)\n"
            "  --quiet        no per-rank breakdown\n"
            "stand-ins: nasa2910 s1rmq4m1 nd3k Pres_Poisson nd6k smt (the seed's N and nnz)\n"
            "example: kyrun -n 4 ky_cg --matrix poisson7:64 --scheme all --rtol 1e-8\n");
}

static int parse(int argc, char **argv, args_t *a)
{
    memset(a, 0, sizeof *a);
    a->schemes = "halo";
    a->iters = 1000;
    a->repeat = 1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(o, "--quiet")) {
            a->quiet = 1;
            continue;
        }
        static const char *const with_value[] = {"--matrix", "--scheme", "--iters", "--rtol", "--repeat",
                                                 "--json",   "--part",   "--mem",   "--algo"};
        int known = 0;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
            known |= !strcmp(o, with_value[k]);
        if (!known) {
            fprintf(stderr, "ky_cg: unknown option %s (--help)\n", o);
            return 2;
        }
        if (!v) {
            fprintf(stderr, "ky_cg: %s needs a value\n", o);
            return 2;
        }
        i++;
        if (!strcmp(o, "--matrix"))
            a->matrix = v;
        else if (!strcmp(o, "--scheme"))
            a->schemes = v;
        else if (!strcmp(o, "--iters"))
            a->iters = atoi(v);
        else if (!strcmp(o, "--rtol"))
            a->rtol = atof(v);
        else if (!strcmp(o, "--repeat"))
            a->repeat = atoi(v) > 0 ? atoi(v) : 1;
        else if (!strcmp(o, "--json"))
            a->json = v;
        else if (!strcmp(o, "--part")) {
            if (!strcmp(v, "rows"))
                a->part = KY_PART_ROWS;
            else if (!strcmp(v, "nnz"))
                a->part = KY_PART_NNZ;
            else {
                fprintf(stderr, "ky_cg: --part %s: rows or nnz\n", v);
                return 2;
            }
        } else if (!strcmp(o, "--mem")) {
            if (!strcmp(v, "host"))
                a->memkind = KY_MEM_HOST;
            else if (!strcmp(v, "gpu"))
                a->memkind = KY_MEM_GPU;
            else {
                fprintf(stderr, "ky_cg: --mem %s: host or gpu\n", v);
                return 2;
            }
        } else if (!strcmp(o, "--algo")) {
            const char *names[] = {"auto", "ring", "neighbor", "rd", "bruck"};
            a->algo = -1;
            for (int k = 0; k < 5; k++)
                if (!strcmp(v, names[k])) a->algo = k;
            if (a->algo < 0) {
                fprintf(stderr, "ky_cg: --algo %s: auto, ring, neighbor, rd or bruck\n", v);
                return 2;
            }
        } else {
            fprintf(stderr, "ky_cg: unknown option %s (--help)\n", o);
            return 2;
        }
    }
    if (!a->matrix) {
        fprintf(stderr, "ky_cg: --matrix is required (--help)\n");
        return 2;
    }
    if (a->iters < 1) {
        fprintf(stderr, "ky_cg: --iters must be >= 1\n");
        return 2;
    }
    return 0;
}

/* vectors in the matrix's placement */
static double *vec_new(int memkind, int64_t n)
{
    size_t bytes = sizeof(double) * (size_t)(n > 0 ? n : 1);
#ifdef KY_APP_HAVE_CUDA
    if (memkind == KY_MEM_GPU) {
        void *p = NULL;
        if (cudaMalloc(&p, bytes) != cudaSuccess) return NULL;
        cudaMemset(p, 0, bytes);
        return p;
    }
#endif
    (void)memkind;
    return calloc(1, bytes);
}
static void vec_free(int memkind, double *p)
{
#ifdef KY_APP_HAVE_CUDA
    if (memkind == KY_MEM_GPU) {
        cudaFree(p);
        return;
    }
#endif
    (void)memkind;
    free(p);
}
static void vec_to_host(int memkind, double *dst, const double *src, int64_t n)
{
#ifdef KY_APP_HAVE_CUDA
    if (memkind == KY_MEM_GPU) {
        cudaMemcpy(dst, src, sizeof(double) * (size_t)n, cudaMemcpyDeviceToHost);
        return;
    }
#endif
    (void)memkind;
    memcpy(dst, src, sizeof(double) * (size_t)n);
}
static void vec_from_host(int memkind, double *dst, const double *src, int64_t n)
{
#ifdef KY_APP_HAVE_CUDA
    if (memkind == KY_MEM_GPU) {
        cudaMemcpy(dst, src, sizeof(double) * (size_t)n, cudaMemcpyHostToDevice);
        return;
    }
#endif
    (void)memkind;
    memcpy(dst, src, sizeof(double) * (size_t)n);
}

#define NPH 6 /* per-rank record: total, spmv, dot, axpy, exchange, allreduce */

static void report_ranks(const ky_cg_result_t *r, int quiet)
{
    int p = ky_nranks(), me = ky_rank();
    double mine[NPH] = {r->t_total, r->t_spmv, r->t_dot, r->t_axpy, r->t_exchange, r->t_allreduce};
    double *all = malloc(sizeof(double) * NPH * (size_t)p);
    ky_allgather(mine, sizeof mine, all, KY_TEAM_WORLD);
    if (me == 0 && !quiet) {
        printf("    rank   total(ms)    spmv     dot    axpy  gather/halo allreduce   other\n");
        for (int q = 0; q < p; q++) {
            double *t = all + NPH * q, other = t[0] - t[1] - t[2] - t[3] - t[4] - t[5];
            printf("    %4d  %10.3f %7.3f %7.3f %7.3f %11.3f %9.3f %7.3f\n", q, 1e3 * t[0], 1e3 * t[1],
                   1e3 * t[2], 1e3 * t[3], 1e3 * t[4], 1e3 * t[5], 1e3 * other);
        }
    }
    free(all);
}

int main(int argc, char **argv)
{
    args_t a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc;
    if (ky_init(&argc, &argv) != KY_OK) {
        fprintf(stderr, "ky_cg: ky_init: %s\n", ky_last_error());
        return 1;
    }
    int me = ky_rank(), failed = 0;
    FILE *js = NULL;
    if (me == 0 && a.json) js = strcmp(a.json, "-") ? fopen(a.json, "w") : stdout;
    ky_csr_t A = NULL;
    ky_csr_opts_t co = {a.part, a.memkind};
    int st = strchr(a.matrix, ':') && strncmp(a.matrix, "/", 1) ? ky_csr_generate(a.matrix, &co, &A)
                                                                : ky_csr_read_mm(a.matrix, &co, &A);
    if (st != KY_OK) {
        fprintf(stderr, "ky_cg: %s\n", ky_last_error());
        ky_finalize();
        return 1;
    }
    ky_csr_info_t info;
    ky_csr_info(A, &info);
    int64_t nl = info.row_hi - info.row_lo;
    if (me == 0)
        printf("ky_cg: %s: N %lld, nnz %lld, %d ranks, %s memory, rows balanced by %s\n", a.matrix,
               (long long)info.n, (long long)info.nnz, ky_nranks(), a.memkind == KY_MEM_GPU ? "GPU" : "host",
               a.part ? "nnz" : "rows");
    if (js)
        fprintf(
            js,
            "{\"matrix\": \"%s\", \"n\": %lld, \"nnz\": %lld, \"ranks\": %d, \"mem\": \"%s\", \"results\": [",
            a.matrix, (long long)info.n, (long long)info.nnz, ky_nranks(),
            a.memkind == KY_MEM_GPU ? "gpu" : "host");
    int first = 1;
    char list[256];
    snprintf(list, sizeof list, "%s",
             strcmp(a.schemes, "all")
                 ? a.schemes
                 : (a.memkind == KY_MEM_GPU ? "allgather,halo,pipelined,graph" : "allgather,halo,pipelined"));
    if (!strncmp(a.matrix, "npb:", 4)) { /* NPB's benchmark: its own iteration counts and verification */
        char cls = a.matrix[4];
        for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
            ky_cg_opts_t o;
            ky_cg_opts_default(&o);
            o.scheme = ky_cg_scheme_parse(s);
            o.allgather_algo = a.algo;
            double zeta = 0, secs = 0;
            int ver = 0;
            ky_cg_result_t r;
            st = o.scheme < 0 ? KY_ERR_ARG : ky_npb_cg_run(A, cls, &o, &zeta, &ver, &secs, &r);
            if (st != KY_OK) {
                if (me == 0)
                    fprintf(stderr, "ky_cg: npb %s: %s\n", s,
                            o.scheme < 0 ? "unknown scheme" : ky_last_error());
                failed = 1;
                continue;
            }
            ky_npb_class_t c;
            ky_npb_class(cls, &c);
            double mflops =
                2.0 * c.niter * (double)c.na *
                (3.0 + c.nonzer * (c.nonzer + 1.0) + 25.0 * (5.0 + c.nonzer * (c.nonzer + 1.0)) + 3.0) /
                secs / 1e6;
            if (me == 0)
                printf(
                    "  npb %c %-10s zeta %.13f (ref %.13f) %s  time %.4f s  %.1f Mop/s (NPB's count)  %.2f "
                    "us/CG iteration\n",
                    c.cls, s, zeta, c.zeta_ref, ver ? "VERIFICATION SUCCESSFUL" : "VERIFICATION FAILED", secs,
                    mflops, 1e6 * secs / (c.niter * 25.0));
            if (js)
                fprintf(js,
                        "%s{\"scheme\": \"%s\", \"npb_class\": \"%c\", \"zeta\": %.15g, \"verified\": %d, "
                        "\"seconds\": %.6g, \"mops\": %.6g, \"active_ranks\": %d}",
                        first ? "" : ", ", s, c.cls, zeta, ver, secs, mflops, r.active_ranks);
            first = 0;
            if (!ver) failed = 1;
            report_ranks(&r, a.quiet);
        }
    } else {
        double *ones = vec_new(a.memkind, nl), *b = vec_new(a.memkind, nl), *x = vec_new(a.memkind, nl);
        double *h = malloc(sizeof(double) * (size_t)(nl + 1));
        for (int64_t i = 0; i < nl; i++) h[i] = 1.0;
        vec_from_host(a.memkind, ones, h, nl);
        st = ky_spmv(A, ones, b, NULL);
        if (st != KY_OK) {
            fprintf(stderr, "ky_cg: ky_spmv: %s\n", ky_last_error());
            failed = 1;
        }
        for (char *s = strtok(list, ","); s && !failed; s = strtok(NULL, ",")) {
            ky_cg_opts_t o;
            ky_cg_opts_default(&o);
            o.scheme = ky_cg_scheme_parse(s);
            o.allgather_algo = a.algo;
            o.max_iters = a.iters;
            o.rtol = a.rtol;
            o.timers = 1;
            if (o.scheme < 0) {
                if (me == 0) fprintf(stderr, "ky_cg: unknown scheme %s\n", s);
                failed = 1;
                break;
            }
            ky_cg_result_t best, r;
            double tbest = 1e30;
            for (int k = 0; k < a.repeat; k++) {
                /* timed without per-phase synchronisation first (GPU), then once with timers for the
                 * breakdown */
                o.timers = a.memkind == KY_MEM_GPU ? 0 : 1;
                st = ky_cg(A, b, x, &o, &r);
                if (st != KY_OK) break;
                double t = r.t_total;
                ky_allreduce(KY_IN_PLACE, &t, 1, KY_DOUBLE, KY_MAX, KY_TEAM_WORLD);
                if (t < tbest) {
                    tbest = t;
                    best = r;
                }
            }
            if (st != KY_OK) {
                if (me == 0) fprintf(stderr, "ky_cg: scheme %s: %s\n", s, ky_last_error());
                if (st == KY_ERR_UNSUPPORTED) continue;
                failed = 1;
                break;
            }
            vec_to_host(a.memkind, h, x, nl);
            double err = 0;
            for (int64_t i = 0; i < nl; i++) err = fmax(err, fabs(h[i] - 1.0));
            ky_allreduce(KY_IN_PLACE, &err, 1, KY_DOUBLE, KY_MAX, KY_TEAM_WORLD);
            int it = best.iterations > 0 ? best.iterations : 1;
            double flops = (2.0 * (double)info.nnz + 10.0 * (double)info.n) * it;
            if (me == 0)
                printf(
                    "  %-10s iters %5d  %9.2f us/iter  %7.2f GFLOP/s  rel.res %.3e  max|x-1| %.2e%s  "
                    "launches/iter %d syncs/iter %d  active ranks %d%s\n",
                    s, best.iterations, 1e6 * tbest / it, flops / tbest * 1e-9, best.rel_residual, err,
                    best.converged ? "  converged" : "", best.launches_per_iter, best.syncs_per_iter,
                    best.active_ranks, best.active_ranks < ky_nranks() ? " (agglomerated)" : "");
            if (js)
                fprintf(
                    js,
                    "%s{\"scheme\": \"%s\", \"iterations\": %d, \"seconds\": %.6g, \"us_per_iter\": %.6g, "
                    "\"gflops\": %.6g, \"rel_residual\": %.6g, \"max_err\": %.6g, \"converged\": %d, "
                    "\"active_ranks\": %d, \"setup_seconds\": %.6g}",
                    first ? "" : ", ", s, best.iterations, tbest, 1e6 * tbest / it, flops / tbest * 1e-9,
                    best.rel_residual, err, best.converged, best.active_ranks, best.t_setup);
            first = 0;
            if (a.memkind == KY_MEM_GPU && !a.quiet) { /* breakdown run: synchronised phases */
                o.timers = 1;
                if (ky_cg(A, b, x, &o, &best) != KY_OK) continue;
            }
            report_ranks(&best, a.quiet);
        }
        vec_free(a.memkind, ones);
        vec_free(a.memkind, b);
        vec_free(a.memkind, x);
        free(h);
    }
    if (js) {
        fprintf(js, "]}\n");
        if (js != stdout) fclose(js);
    }
    ky_csr_destroy(A);
    ky_finalize();
    return failed;
}
