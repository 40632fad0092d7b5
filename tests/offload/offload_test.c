/* tests/offload: include/kyoyu/offload.h under the one back end this program was compiled for
 * (KY_OFFLOAD_BACKEND, tests/offload/CMakeLists.txt), on the CPU (host OpenMP, serial, or the OpenACC and
 * OpenMP target host fallbacks). Checks that every macro's directive text is the table's (probe.c), that
 * every macro runs (ofl_probe_run), and that kernels written with the macros give what plain loops give:
 * saxpy in a data region, reductions, a 2-D 5-point stencil with collapse and updates, the 7- and
 * 27-point stencils and the Himeno kernel of examples/offload. Sizes are odd on purpose.
 *     offload_test            run the checks; 0 when all hold
 *     offload_test --device   the same, and fail unless the regions run on a device (tools/offload-check)
 *     offload_test --table    print this back end's column of the table, one directive per line */
#include <kyoyu/offload.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offload_kernels.h"
#include "probe.h"

#if defined(_OPENACC)
#include <openacc.h>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

static int failures;

#define FAIL(...)                                                        \
    do {                                                                 \
        fprintf(stderr, "offload_test [%s]: ", KY_OFFLOAD_BACKEND_NAME); \
        fprintf(stderr, __VA_ARGS__);                                    \
        fputc('\n', stderr);                                             \
        failures++;                                                      \
    } while (0)

static int check_table(void)
{
    int be = KY_OFFLOAD_BACKEND_ID - 1, bad = 0;
    for (int r = 0; r < ofl_nrows; r++) {
        const ofl_row_t *row = &ofl_rows[r];
        if (strcmp(row->got, row->want[be]) != 0) {
            FAIL("%s\n    expands to  \"%s\"\n    table says  \"%s\"", row->call, row->got, row->want[be]);
            bad++;
        }
    }
    return bad;
}

static double *alloc_doubles(size_t n)
{
    double *p = (double *)malloc(n * sizeof(double));
    if (!p) {
        fprintf(stderr, "offload_test: out of memory\n");
        exit(1);
    }
    return p;
}

/* clang-format would write the array sections a[0:n] as "a[0:n]" */
/* clang-format off */
/* y = a x + y inside a structured data region */
static void test_saxpy(int n)
{
    double *x = alloc_doubles((size_t)n), *y = alloc_doubles((size_t)n), *ref = alloc_doubles((size_t)n);
    const double a = 1.5;
    for (int i = 0; i < n; i++) x[i] = 0.25 * i, y[i] = ref[i] = 1.0 - i;
    for (int i = 0; i < n; i++) ref[i] = a * x[i] + ref[i];
    KY_DATA(KY_OPT_COPYIN(x[0:n]), KY_OPT_COPY(y[0:n]))
    {
        KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_SIMD, KY_OPT_NUM(128), KY_OPT_PRESENT(x[0:n], y[0:n]))
        for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
    }
    for (int i = 0; i < n; i++)
        if (y[i] != ref[i]) {
            FAIL("saxpy n=%d: y[%d] = %.17g, plain loop %.17g", n, i, y[i], ref[i]);
            break;
        }
    free(x), free(y), free(ref);
}

/* sum and max reductions, data copied in by the loop's own clause */
static void test_reduction(int n)
{
    double *x = alloc_doubles((size_t)n), sum = 0.0, mx = -1e300, rsum = 0.0, rmx = -1e300;
    for (int i = 0; i < n; i++) x[i] = sin(0.1 * i) + 0.001 * (i % 7);
    for (int i = 0; i < n; i++) rsum += x[i], rmx = x[i] > rmx ? x[i] : rmx;
    KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_REDUCTION(+ : sum), KY_OPT_REDUCTION(max : mx), KY_OPT_COPYIN(x[0:n]))
    for (int i = 0; i < n; i++) {
        sum += x[i];
        mx = x[i] > mx ? x[i] : mx;
    }
    if (fabs(sum - rsum) > 1e-12 * (1.0 + fabs(rsum)) || mx != rmx)
        FAIL("reduction n=%d: sum %.17g max %.17g, plain loop %.17g %.17g", n, sum, mx, rsum, rmx);
    free(x);
}

/* 2-D 5-point Jacobi, collapse(2), arrays entered once; every 3 steps the host reads the field back
 * (update host), changes one corner value and sends it again (update device) */
static void test_stencil2d(int ny, int nx, int steps)
{
    size_t n = (size_t)ny * nx;
    double *a = alloc_doubles(n), *b = alloc_doubles(n), *ra = alloc_doubles(n), *rb = alloc_doubles(n);
    for (size_t i = 0; i < n; i++) a[i] = b[i] = ra[i] = rb[i] = (double)((i * 7919) % 101) / 101.0;
    /* plain */
    for (int s = 0; s < steps; s++) {
        for (int y = 1; y < ny - 1; y++)
            for (int x = 1; x < nx - 1; x++)
                rb[(size_t)y * nx + x] = 0.2 * (ra[(size_t)y * nx + x] + ra[(size_t)(y - 1) * nx + x] +
                                                ra[(size_t)(y + 1) * nx + x] + ra[(size_t)y * nx + x - 1] +
                                                ra[(size_t)y * nx + x + 1]);
        double *t = ra;
        ra = rb, rb = t;
        if (s % 3 == 2) ra[(size_t)nx + 1] += 1.0;
    }
    /* directives */
    KY_DATA_ENTER(KY_OPT_COPYIN(a[0:n], b[0:n]))
    for (int s = 0; s < steps; s++) {
        KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_PRESENT(a[0:n], b[0:n]), KY_OPT_NUM(64))
        for (int y = 1; y < ny - 1; y++)
            for (int x = 1; x < nx - 1; x++)
                b[(size_t)y * nx + x] =
                    0.2 * (a[(size_t)y * nx + x] + a[(size_t)(y - 1) * nx + x] + a[(size_t)(y + 1) * nx + x] +
                           a[(size_t)y * nx + x - 1] + a[(size_t)y * nx + x + 1]);
        double *t = a;
        a = b, b = t;
        if (s % 3 == 2) {
            KY_UPDATE_HOST(a[0:n])
            a[(size_t)nx + 1] += 1.0;
            KY_UPDATE_DEVICE(a[0:n])
        }
    }
    KY_DATA_EXIT(KY_OPT_COPYOUT(a[0:n]), KY_OPT_DELETE(b[0:n]))
    for (size_t i = 0; i < n; i++)
        if (a[i] != ra[i]) {
            FAIL("stencil2d %dx%d, %d steps: [%zu] = %.17g, plain loop %.17g", ny, nx, steps, i, a[i], ra[i]);
            break;
        }
    /* after an odd number of swaps a and b are each other's buffers; free both pairs either way */
    free(a), free(b), free(ra), free(rb);
}

/* clang-format on */
/* examples/offload/stencil7.c against its plain loop */
static void test_stencil7(int nz, int ny, int nx, int steps)
{
    size_t n = (size_t)nz * ny * nx;
    double *a = alloc_doubles(n), *b = alloc_doubles(n), *ra = alloc_doubles(n), *rb = alloc_doubles(n);
    for (size_t i = 0; i < n; i++) a[i] = b[i] = ra[i] = rb[i] = (double)((i * 104729) % 997) / 997.0;
    const double c0 = 0.4, c1 = 0.1;
    for (int s = 0; s < steps; s++) {
        ofl_stencil7_step_plain(nz, ny, nx, ra, rb, c0, c1);
        double *t = ra;
        ra = rb, rb = t;
    }
    double *a0 = a, *b0 = b;
    ofl_stencil_enter(nz, ny, nx, a0, b0);
    double *out = ofl_stencil7_run(nz, ny, nx, a0, b0, c0, c1, steps);
    ofl_stencil_exit(nz, ny, nx, a0, b0);
    for (size_t i = 0; i < n; i++)
        if (out[i] != ra[i]) {
            FAIL("stencil7 %dx%dx%d, %d steps, shape %d: [%zu] = %.17g, plain loop %.17g", nz, ny, nx, steps,
                 ofl_loop_shape, i, out[i], ra[i]);
            break;
        }
    free(a0), free(b0), free(ra), free(rb);
}

/* examples/offload/stencil27.c against its plain loop */
static void test_stencil27(int nz, int ny, int nx, int steps)
{
    size_t n = (size_t)nz * ny * nx;
    double *a = alloc_doubles(n), *b = alloc_doubles(n), *ra = alloc_doubles(n), *rb = alloc_doubles(n);
    for (size_t i = 0; i < n; i++) a[i] = b[i] = ra[i] = rb[i] = (double)((i * 7877) % 991) / 991.0;
    for (int s = 0; s < steps; s++) {
        ofl_stencil27_step_plain(nz, ny, nx, ra, rb);
        double *t = ra;
        ra = rb, rb = t;
    }
    ofl_stencil_enter(nz, ny, nx, a, b);
    for (int s = 0; s < steps; s++) ofl_stencil27_step(nz, ny, nx, s % 2 ? b : a, s % 2 ? a : b);
    ofl_stencil_exit(nz, ny, nx, a, b);
    const double *out = steps % 2 ? b : a;
    for (size_t i = 0; i < n; i++)
        if (out[i] != ra[i]) {
            FAIL("stencil27 %dx%dx%d, %d steps, shape %d: [%zu] = %.17g, plain loop %.17g", nz, ny, nx, steps,
                 ofl_loop_shape, i, out[i], ra[i]);
            break;
        }
    free(a), free(b), free(ra), free(rb);
}

/* examples/offload/himeno_kernel.c against its plain loop; b nonzero so that every term counts */
static void test_himeno(int I, int J, int K, int iters)
{
    ofl_himeno_t h, r;
    if (ofl_himeno_alloc(&h, I, J, K) || ofl_himeno_alloc(&r, I, J, K)) {
        fprintf(stderr, "offload_test: out of memory\n");
        exit(1);
    }
    size_t n = (size_t)I * J * K;
    for (size_t i = 0; i < 3 * n; i++) h.b[i] = r.b[i] = 0.01f * (float)(i % 5);
    double rg = ofl_himeno_jacobi_plain(&r, iters, 0.8f);
    ofl_himeno_enter(&h);
    double g = ofl_himeno_jacobi(&h, iters, 0.8f);
    ofl_himeno_exit(&h);
    if (fabs(g - rg) > 1e-9 * (1.0 + fabs(rg)) || !(g > 0.0))
        FAIL("himeno %dx%dx%d, %d iterations, shape %d: gosa %.17g, plain loop %.17g", I, J, K, iters,
             ofl_loop_shape, g, rg);
    for (size_t i = 0; i < n; i++)
        if (h.p[i] != r.p[i]) {
            FAIL("himeno %dx%dx%d, %d iterations, shape %d: p[%zu] = %.9g, plain loop %.9g", I, J, K, iters,
                 ofl_loop_shape, i, h.p[i], r.p[i]);
            break;
        }
    ofl_himeno_free(&h), ofl_himeno_free(&r);
}

/* clang-format off */
/* a histogram: KY_ATOMIC in a parallel loop. Not on omp_target_loop with GCC 12 and 13 (13.2 on the GPU
 * machine rejects it as 12 does), which keep OpenMP 5.0's rule that only parallel, loop and simd may be met
 * inside a loop region (5.1 allows atomic; not known to be lifted before GCC 15), nor with
 * Clang before 16, which has no teams loop (and so sees the atomic right inside target teams) */
#if KY_OFFLOAD_BACKEND_ID == 3 && \
    ((defined(__clang__) && __clang_major__ < 16) || (!defined(__clang__) && defined(__GNUC__) && __GNUC__ < 15))
#define OFL_NO_HISTOGRAM 1
#endif
static void test_histogram(int n, int nbins)
{
#ifdef OFL_NO_HISTOGRAM
    printf("histogram: not built on omp_target_loop with this compiler (atomic inside loop)\n");
    (void)n, (void)nbins;
#else
    int *h = (int *)calloc((size_t)nbins, sizeof(int)), *ref = (int *)calloc((size_t)nbins, sizeof(int));
    if (!h || !ref) exit(1);
    for (int i = 0; i < n; i++) ref[(i * 31) % nbins]++;
    KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COPY(h[0:nbins]))
    for (int i = 0; i < n; i++) {
        KY_ATOMIC
        h[(i * 31) % nbins] += 1;
    }
    for (int b = 0; b < nbins; b++)
        if (h[b] != ref[b]) {
            FAIL("histogram n=%d: bin %d = %d, plain loop %d", n, b, h[b], ref[b]);
            break;
        }
    free(h), free(ref);
#endif
}

/* clang-format on */
/* 1 when a KY_OFFLOAD_SERIAL region ran on a device, not on the host (the fallback) */
static int ran_on_device(void)
{
    int on = 0;
#if KY_OFFLOAD_BACKEND_ID <= 2
    KY_OFFLOAD_SERIAL(KY_OPT_COPY(on))
    {
        on = !acc_on_device(acc_device_host);
    }
#elif KY_OFFLOAD_BACKEND_ID <= 4
    KY_OFFLOAD_SERIAL(KY_OPT_COPY(on))
    {
        on = !omp_is_initial_device();
    }
#endif
    return on;
}

static void print_devices(void)
{
    printf("offload_test [%s]:", KY_OFFLOAD_BACKEND_NAME);
#if defined(_OPENACC)
    printf(" _OPENACC=%d, %d non-host OpenACC devices", _OPENACC, acc_get_num_devices(acc_device_not_host));
#endif
#if defined(_OPENMP)
    printf(" _OPENMP=%d, %d OpenMP target devices", _OPENMP, omp_get_num_devices());
#endif
    printf("; regions run on the %s\n", ran_on_device() ? "device" : "host");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--table") == 0) {
        for (int r = 0; r < ofl_nrows; r++) {
            const char *w = ofl_rows[r].want[KY_OFFLOAD_BACKEND_ID - 1];
            printf("%s\n", w[0] ? w : "(none)");
        }
        return 0;
    }
    print_devices();
    /* --device: the device back ends must really offload (OpenMP's MANDATORY does not catch a plugin that
     * never loaded: there is then no device at all, and GCC runs the regions on the host) */
    if (argc > 1 && strcmp(argv[1], "--device") == 0 && !ran_on_device()) {
        FAIL("--device: the regions ran on the host");
        return 1;
    }
    int t = check_table();
    printf("directive table: %d rows, %d differ\n", ofl_nrows, t);
    failures += ofl_probe_run(37);
    test_saxpy(1001);
    test_saxpy(1);
    test_reduction(999);
    test_histogram(1003, 17);
    test_stencil2d(23, 37, 7);
    test_stencil2d(5, 3, 4);
    /* every loop shape (offload_kernels.h): one collapsed loop, and the rows with KY_OFFLOAD_INNER over x
     * under each clause set */
    for (ofl_loop_shape = 0; ofl_loop_shape < OFL_NSHAPES; ofl_loop_shape++) {
        test_stencil7(13, 11, 9, 5);
        test_stencil7(7, 5, 17, 4);
        test_stencil27(11, 9, 13, 3);
        test_stencil27(5, 7, 3, 2);
        test_himeno(9, 7, 11, 3);
        test_himeno(17, 9, 13, 2);
    }
    ofl_loop_shape = OFL_SHAPE_WARPS;
    printf("%s: %s\n", KY_OFFLOAD_BACKEND_NAME, failures ? "FAILED" : "all checks hold");
    return failures ? 1 : 0;
}
