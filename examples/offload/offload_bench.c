/* Times examples/offload's kernels under the back end this program was compiled for: the 7- and 27-point
 * stencils (stencil7.c, stencil27.c) and the Himeno jacobi iteration (himeno_kernel.c), arrays on the
 * device for the whole run, as the directives-against-CUDA table of docs/offload.md needs.
 * Library-independent:
 *
 *   gcc -O3 -fopenacc -DKY_OFFLOAD_BACKEND=acc_parallel -I<kyoyu>/include offload_bench.c stencil7.c \
 *       stencil27.c himeno_kernel.c -lm -o offload_bench        (tools/offload-check --bench builds it so)
 *   offload_bench [--kernel stencil7|stencil27|himeno|all] [--n NZ,NY,NX] [--size S|M|L|XL] [--steps N]
 *                 [--reps R] [--shape flat,rows,warps,gang,team,zstream|all|both] [--check]
 *
 * Stencils: --n points (default 256^3), --steps steps per repetition, --shape the loop nests (a list of
 * offload_kernels.h's shapes, all of them, or both = flat,rows; default warps), Himeno's too; per step, in
 * GFLOP/s as ky_stencil counts them (8 and 30 flops per point), and as the bandwidth of the minimum traffic
 * (read one array, write the other: 16 bytes per point). Himeno: the original's grid sizes (default M: 129 x
 * 129 x 257 with the boundary), --steps iterations; per iteration and in GFLOP/s of the benchmark's count (34
 * flops per interior point). The best of --reps (default 3) repetitions after one untimed. --check: the same
 * steps on the host without directives, and the largest difference (exit 1 above 1e-9 for the stencils'
 * doubles, 1e-4 for Himeno's floats and gosa's relative difference: a GPU may contract a * b + c into one
 * rounding where the host does not). One line per kernel, then the same as JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "offload_kernels.h"

#include <kyoyu/offload.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "offload_bench: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

typedef struct {
    const char *kernel, *shape;
    int n[3], steps;
    double best_s, gbps, gflops,
        diff; /* gbps: the stencils' minimum traffic (0: himeno); diff < 0: not checked */
} result_t;

static void print_result(const result_t *r)
{
    printf("%-22s %-9s %-5s %4dx%4dx%4d  %8.3f ms/step  %7.1f GFLOP/s", KY_OFFLOAD_BACKEND_NAME, r->kernel,
           r->shape, r->n[0], r->n[1], r->n[2], 1e3 * r->best_s / r->steps, r->gflops);
    if (r->gbps > 0.0) printf("  %7.1f GB/s", r->gbps);
    if (r->diff >= 0.0) printf("  max diff %.3g", r->diff);
    printf("\n");
}

static void print_json(const result_t *r)
{
    printf(
        "{\"backend\": \"%s\", \"kernel\": \"%s\", \"shape\": \"%s\", \"n\": [%d, %d, %d], \"steps\": %d, "
        "\"seconds_per_step\": %.9g, \"gflops\": %.6g, \"gbps\": %.6g, \"max_diff\": %.6g}\n",
        KY_OFFLOAD_BACKEND_NAME, r->kernel, r->shape, r->n[0], r->n[1], r->n[2], r->steps,
        r->best_s / r->steps, r->gflops, r->gbps, r->diff);
}

/* one step of the 7- or 27-point stencil, with directives or without */
static void stencil_step(int points, int plain, const int n[3], const double *in, double *out)
{
    if (points == 27 && plain)
        ofl_stencil27_step_plain(n[0], n[1], n[2], in, out);
    else if (points == 27)
        ofl_stencil27_step(n[0], n[1], n[2], in, out);
    else if (plain)
        ofl_stencil7_step_plain(n[0], n[1], n[2], in, out, 0.4, 0.1);
    else
        ofl_stencil7_step(n[0], n[1], n[2], in, out, 0.4, 0.1);
}

/* ky_stencil's counts: 8 flops per point (7-point), 30 (27-point); traffic at least one read and one write
 * of a double per point */
static result_t bench_stencil(int points, const int n[3], int steps, int reps, int check)
{
    const size_t pts = (size_t)n[0] * n[1] * n[2];
    double *a = (double *)xmalloc(pts * sizeof(double)), *b = (double *)xmalloc(pts * sizeof(double));
    for (size_t i = 0; i < pts; i++) a[i] = b[i] = (double)((i * 104729) % 997) / 997.0;
    result_t r = {points == 27 ? "stencil27" : "stencil7",
                  ofl_shape_name(ofl_loop_shape),
                  {n[0], n[1], n[2]},
                  steps,
                  1e30,
                  0.0,
                  0.0,
                  -1.0};
    ofl_stencil_enter(n[0], n[1], n[2], a, b);
    int total = 0; /* steps so far: even, the field is in a */
    for (int rep = 0; rep <= reps; rep++) {
        double t0 = now();
        for (int s = 0; s < steps; s++, total++)
            stencil_step(points, 0, n, total % 2 ? b : a, total % 2 ? a : b);
        double t = now() - t0;
        if (rep > 0 && t < r.best_s) r.best_s = t; /* repetition 0 warms up */
    }
    double *last = total % 2 == 0 ? a : b;
    /* clang-format off */
    KY_UPDATE_HOST(last[0:pts])
    /* clang-format on */
    const double interior = (double)(n[0] - 2) * (n[1] - 2) * (n[2] - 2) * steps;
    r.gbps = 16.0 * interior / r.best_s / 1e9;
    r.gflops = (points == 27 ? 30.0 : 8.0) * interior / r.best_s / 1e9;
    if (check) {
        double *ra = (double *)xmalloc(pts * sizeof(double)), *rb = (double *)xmalloc(pts * sizeof(double));
        for (size_t i = 0; i < pts; i++) ra[i] = rb[i] = (double)((i * 104729) % 997) / 997.0;
        for (int s = 0; s < total; s++) {
            stencil_step(points, 1, n, ra, rb);
            double *t = ra;
            ra = rb, rb = t;
        }
        r.diff = 0.0;
        for (size_t i = 0; i < pts; i++) r.diff = fmax(r.diff, fabs(last[i] - ra[i]));
        free(ra), free(rb);
    }
    ofl_stencil_exit(n[0], n[1], n[2], a, b);
    free(a), free(b);
    return r;
}

static result_t bench_himeno(const int n[3], int steps, int reps, int check)
{
    ofl_himeno_t h;
    if (ofl_himeno_alloc(&h, n[0], n[1], n[2])) exit(1);
    result_t r = {"himeno", ofl_shape_name(ofl_loop_shape), {n[0], n[1], n[2]}, steps, 1e30, 0.0, 0.0, -1.0};
    double gosa = 0.0;
    ofl_himeno_enter(&h);
    for (int rep = 0; rep <= reps; rep++) {
        double t0 = now();
        gosa = ofl_himeno_jacobi(&h, steps, 0.8f);
        double t = now() - t0;
        if (rep > 0 && t < r.best_s) r.best_s = t;
    }
    ofl_himeno_exit(&h);
    r.gflops = 34.0 * (double)(n[0] - 2) * (n[1] - 2) * (n[2] - 2) * steps / r.best_s / 1e9;
    if (check) {
        ofl_himeno_t ref;
        if (ofl_himeno_alloc(&ref, n[0], n[1], n[2])) exit(1);
        double rg = 0.0;
        for (int rep = 0; rep <= reps; rep++) rg = ofl_himeno_jacobi_plain(&ref, steps, 0.8f);
        size_t pts = (size_t)n[0] * n[1] * n[2];
        r.diff = fabs(gosa - rg) / (fabs(rg) + 1e-300); /* gosa's relative difference ... */
        for (size_t i = 0; i < pts; i++)
            r.diff = fmax(r.diff, fabs((double)h.p[i] - ref.p[i])); /* ... and p's */
        ofl_himeno_free(&ref);
    }
    printf("himeno gosa %.9g\n", gosa);
    ofl_himeno_free(&h);
    return r;
}

/* --shape: names separated by commas, "all", or "both" (flat and rows, as before the other shapes) */
static int parse_shapes(const char *list, int shapes[OFL_NSHAPES])
{
    char buf[256];
    memset(shapes, 0, OFL_NSHAPES * sizeof(int));
    if (!strcmp(list, "all") || !strcmp(list, "both")) {
        for (int s = 0; s < OFL_NSHAPES; s++) shapes[s] = !strcmp(list, "all") || s <= OFL_SHAPE_ROWS;
        return 0;
    }
    if (strlen(list) >= sizeof buf) return -1;
    strcpy(buf, list);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        int s = ofl_shape_parse(t);
        if (s < 0) return -1;
        shapes[s] = 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *kernel = "all", *shape = "warps";
    int shapes[OFL_NSHAPES] = {0};
    shapes[OFL_SHAPE_WARPS] = 1;
    int n7[3] = {256, 256, 256}, nh[3] = {129, 129, 257}, steps = 20, reps = 3, check = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--check")) {
            check = 1;
        } else if (!v) {
            fprintf(stderr, "offload_bench: %s: unknown, or its value is missing\n", a);
            return 2;
        } else if (!strcmp(a, "--kernel")) {
            kernel = v, i++;
        } else if (!strcmp(a, "--n")) {
            if (sscanf(v, "%d,%d,%d", &n7[0], &n7[1], &n7[2]) != 3) return 2;
            i++;
        } else if (!strcmp(a, "--size")) {
            static const struct {
                const char *name;
                int n[3];
            } sizes[] = {{"S", {65, 65, 129}},
                         {"M", {129, 129, 257}},
                         {"L", {257, 257, 513}},
                         {"XL", {513, 513, 1025}}};
            int found = 0;
            for (int s = 0; s < 4; s++)
                if (!strcmp(v, sizes[s].name)) memcpy(nh, sizes[s].n, sizeof nh), found = 1;
            if (!found) return 2;
            i++;
        } else if (!strcmp(a, "--shape")) {
            shape = v, i++;
            if (parse_shapes(shape, shapes)) {
                fprintf(stderr,
                        "offload_bench: --shape %s: a comma-separated list of flat, rows, warps, gang, team, "
                        "zstream; "
                        "all; or both (flat,rows)\n",
                        shape);
                return 2;
            }
        } else if (!strcmp(a, "--steps")) {
            steps = atoi(v), i++;
        } else if (!strcmp(a, "--reps")) {
            reps = atoi(v), i++;
        } else {
            fprintf(stderr, "offload_bench: %s: unknown\n", a);
            return 2;
        }
    }
    if (steps < 1 || reps < 1) return 2;
    result_t res[3 * OFL_NSHAPES];
    int nres = 0, all = !strcmp(kernel, "all");
    for (int sh = 0; sh < OFL_NSHAPES; sh++) {
        if (!shapes[sh]) continue;
        ofl_loop_shape = sh;
        if (all || !strcmp(kernel, "stencil7")) res[nres++] = bench_stencil(7, n7, steps, reps, check);
        if (all || !strcmp(kernel, "stencil27")) res[nres++] = bench_stencil(27, n7, steps, reps, check);
        if (all || !strcmp(kernel, "himeno")) res[nres++] = bench_himeno(nh, steps, reps, check);
    }
    if (nres == 0) {
        fprintf(stderr, "offload_bench: --kernel %s: stencil7, stencil27, himeno or all\n", kernel);
        return 2;
    }
    for (int i = 0; i < nres; i++) print_result(&res[i]);
    for (int i = 0; i < nres; i++) print_json(&res[i]);
    int bad = 0;
    for (int i = 0; i < nres; i++)
        if (res[i].diff > (strcmp(res[i].kernel, "himeno") == 0 ? 1e-4 : 1e-9)) {
            fprintf(stderr, "offload_bench: %s differs from the loop without directives by %g\n",
                    res[i].kernel, res[i].diff);
            bad = 1;
        }
    return bad;
}
