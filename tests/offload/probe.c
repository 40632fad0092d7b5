/* tests/offload: every macro of include/kyoyu/offload.h once, with every clause, and the table of what
 * each back end must make of it. ofl_probe_run uses the macros in the table's order, so that compiling
 * this file with -DKY_OFFLOAD_PRINT prints the table's column for the back end, row by row
 * (print_check.sh); offload_test.c compares the KY_OFFLOAD_TEXT column with it and runs ofl_probe_run.
 * Keep the table and the uses in the same order. */
#define KY_OFFLOAD_SHORT_NAMES
#include <kyoyu/offload.h>

#include <stdio.h>
#include <stdlib.h>

#include "probe.h"

/* T(NAME, args): the call as text and its KY_OFFLOAD_TEXT; NAME without KY_ so that object-like macros
 * (KY_ATOMIC) are pasted, not expanded, on their way to KY_OFFLOAD_TEXT */
#define T(name, ...) "KY_" #name "(" #__VA_ARGS__ ")", KY_OFFLOAD_TEXT(KY_##name, __VA_ARGS__)
#define AK "acc kernels loop"
#define AP "acc parallel loop"
#define OTL "omp target teams loop"
#define OTD "omp target teams distribute parallel for"
#define OH "omp parallel for"
/* KY_OFFLOAD_THREADS on OpenMP target: GCC's threads are warps, so it takes simd for the lanes too */
#if defined(__clang__)
#define OPF "omp parallel for"
#else
#define OPF "omp parallel for simd"
#endif

/* clang-format off */
const ofl_row_t ofl_rows[] = {
    {T(DATA_ENTER, KY_OPT_COPYIN(x[0:n]), KY_OPT_CREATE(y[0:n])),
     {"acc enter data copyin(x[0:n]) create(y[0:n])", "acc enter data copyin(x[0:n]) create(y[0:n])",
      "omp target enter data map(to: x[0:n]) map(alloc: y[0:n])",
      "omp target enter data map(to: x[0:n]) map(alloc: y[0:n])", "", ""}},
    {T(OFFLOAD, KY_OPT_COPY(z[0:n])),
     {AK " copy(z[0:n])", AP " copy(z[0:n])", OTL " map(tofrom: z[0:n])", OTD " map(tofrom: z[0:n])", OH, ""}},
    {T(OFFLOAD_INNER, ),
     {"acc loop independent vector", "acc loop independent vector", "omp simd", "omp simd", "omp simd", ""}},
    {T(OFFLOAD_INNER, KY_OPT_REDUCTION(+ : row)),
     {"acc loop independent vector reduction(+ : row)", "acc loop independent vector reduction(+ : row)",
      "omp simd reduction(+ : row)",
      "omp simd reduction(+ : row)", "omp simd reduction(+ : row)", ""}},
    /* the team shape: a block per outer iteration, the inner loop on its threads */
    {T(OFFLOAD_TEAMS, KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_REDUCTION(+ : q), KY_OPT_NUM(64),
       KY_OPT_COPY(g[0:n])),
     {"acc kernels loop gang independent collapse(2) reduction(+ : q) vector_length(64) copy(g[0:n])",
      "acc parallel loop gang independent collapse(2) reduction(+ : q) vector_length(64) copy(g[0:n])",
      "omp target teams distribute collapse(2) reduction(+ : q) thread_limit(64) map(tofrom: g[0:n])",
      "omp target teams distribute collapse(2) reduction(+ : q) thread_limit(64) map(tofrom: g[0:n])",
      OH " collapse(2) reduction(+ : q)", ""}},
    {T(OFFLOAD_THREADS, ),
     {"acc loop independent vector", "acc loop independent vector", OPF, OPF, "omp simd", ""}},
    {T(OFFLOAD_THREADS, KY_OPT_REDUCTION(+ : q)),
     {"acc loop independent vector reduction(+ : q)", "acc loop independent vector reduction(+ : q)",
      OPF " reduction(+ : q)", OPF " reduction(+ : q)", "omp simd reduction(+ : q)", ""}},
    {T(OFFLOAD, KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_REDUCTION(+ : s), KY_OPT_NUM(128)),
     {AK " independent collapse(2) reduction(+ : s) vector_length(128)",
      AP " independent collapse(2) reduction(+ : s) vector_length(128)",
      OTL " collapse(2) reduction(+ : s) thread_limit(128)",
      OTD " collapse(2) reduction(+ : s) thread_limit(128)",
      OH " collapse(2) reduction(+ : s)", ""}},
    {T(OFFLOAD, KY_OPT_GANG, KY_OPT_WORKER, KY_OPT_NUM(32), KY_OPT_NUM_WORKERS(8), KY_OPT_COPY(z[0:n])),
     {AK " gang worker vector_length(32) num_workers(8) copy(z[0:n])",
      AP " gang worker vector_length(32) num_workers(8) copy(z[0:n])",
      OTL " thread_limit(32) map(tofrom: z[0:n])", OTD " thread_limit(32) map(tofrom: z[0:n])", OH, ""}},
    {T(OFFLOAD, KY_OPT_PRIVATE(t), KY_OPT_FIRSTPRIVATE(f), KY_OPT_SIMD, KY_OPT_ASYNC(1)),
     {AK " private(t) async(1)", AP " private(t) firstprivate(f) async(1)",
      OTL " private(t) firstprivate(f) nowait", OTD " simd private(t) firstprivate(f) nowait",
      OH " simd private(t) firstprivate(f)", ""}},
    {T(OFFLOAD_WAIT, 1), {"acc wait (1)", "acc wait (1)", "omp taskwait", "omp taskwait", "", ""}},
    {T(OFFLOAD, KY_OPT_PRESENT(x[0:n]), KY_OPT_COPY(z[0:n]), KY_OPT_COPYIN(w[0:n]), KY_OPT_COPYOUT(v[0:n]),
       KY_OPT_CREATE(u[0:n])),
     {AK " present(x[0:n]) copy(z[0:n]) copyin(w[0:n]) copyout(v[0:n]) create(u[0:n])",
      AP " present(x[0:n]) copy(z[0:n]) copyin(w[0:n]) copyout(v[0:n]) create(u[0:n])",
      OTL " map(alloc: x[0:n]) map(tofrom: z[0:n]) map(to: w[0:n]) map(from: v[0:n]) map(alloc: u[0:n])",
      OTD " map(alloc: x[0:n]) map(tofrom: z[0:n]) map(to: w[0:n]) map(from: v[0:n]) map(alloc: u[0:n])",
      OH, ""}},
    /* the seed's spelling (KY_OFFLOAD_SHORT_NAMES) */
    {T(OFFLOAD, OPT_SIMD, OPT_NUM(256)),
     {AK " vector_length(256)", AP " vector_length(256)", OTL " thread_limit(256)",
      OTD " simd thread_limit(256)", OH " simd", ""}},
    {T(OFFLOAD_SERIAL, KY_OPT_PRESENT(y[0:n])),
     {"acc serial present(y[0:n])", "acc serial present(y[0:n])", "omp target map(alloc: y[0:n])",
      "omp target map(alloc: y[0:n])", "", ""}},
    {T(UPDATE_HOST, y[0:n]),
     {"acc update host(y[0:n])", "acc update host(y[0:n])", "omp target update from(y[0:n])",
      "omp target update from(y[0:n])", "", ""}},
    {T(UPDATE_DEVICE, x[0:n], y[0:n]),
     {"acc update device(x[0:n], y[0:n])", "acc update device(x[0:n], y[0:n])",
      "omp target update to(x[0:n], y[0:n])", "omp target update to(x[0:n], y[0:n])", "", ""}},
    {T(UPDATE, KY_OPT_HOST(x[0:n]), KY_OPT_ASYNC(2)),
     {"acc update host(x[0:n]) async(2)", "acc update host(x[0:n]) async(2)",
      "omp target update from(x[0:n]) nowait", "omp target update from(x[0:n]) nowait", "", ""}},
    {T(OFFLOAD_WAIT_ALL, ), {"acc wait", "acc wait", "omp taskwait", "omp taskwait", "", ""}},
    {T(DATA, KY_OPT_COPYIN(x[0:n]), KY_OPT_COPY(z[0:n])),
     {"acc data copyin(x[0:n]) copy(z[0:n])", "acc data copyin(x[0:n]) copy(z[0:n])",
      "omp target data map(to: x[0:n]) map(tofrom: z[0:n])",
      "omp target data map(to: x[0:n]) map(tofrom: z[0:n])", "", ""}},
    {T(USE_DEVICE_PTR, x),
     {"acc host_data use_device(x)", "acc host_data use_device(x)", "omp target data use_device_ptr(x)",
      "omp target data use_device_ptr(x)", "", ""}},
    /* the atomics in a serial region: GCC 12 refuses them inside OpenMP's loop (omp_target_loop; OpenMP
     * 5.0's rule); offload_test.c's histogram has them in a parallel loop on the other back ends */
    {T(OFFLOAD_SERIAL, KY_OPT_PRESENT(y[0:n])),
     {"acc serial present(y[0:n])", "acc serial present(y[0:n])", "omp target map(alloc: y[0:n])",
      "omp target map(alloc: y[0:n])", "", ""}},
    {T(ATOMIC, ), {"acc atomic update", "acc atomic update", "omp atomic update", "omp atomic update",
                   "omp atomic update", ""}},
    {T(ATOMIC_READ, ), {"acc atomic read", "acc atomic read", "omp atomic read", "omp atomic read",
                        "omp atomic read", ""}},
    {T(ATOMIC_CAPTURE, ), {"acc atomic capture", "acc atomic capture", "omp atomic capture",
                           "omp atomic capture", "omp atomic capture", ""}},
    {T(ATOMIC_WRITE, ), {"acc atomic write", "acc atomic write", "omp atomic write", "omp atomic write",
                         "omp atomic write", ""}},
    {T(DATA_EXIT, KY_OPT_COPYOUT(y[0:n]), KY_OPT_DELETE(x[0:n])),
     {"acc exit data copyout(y[0:n]) delete(x[0:n])", "acc exit data copyout(y[0:n]) delete(x[0:n])",
      "omp target exit data map(from: y[0:n]) map(delete: x[0:n])",
      "omp target exit data map(from: y[0:n]) map(delete: x[0:n])", "", ""}},
};
/* clang-format on */
const int ofl_nrows = (int)(sizeof ofl_rows / sizeof ofl_rows[0]);

#define CHECK(cond)                                                                                   \
    do {                                                                                              \
        if (!(cond)) {                                                                                \
            fprintf(stderr, "probe.c:%d: %s: wrong: %s\n", __LINE__, KY_OFFLOAD_BACKEND_NAME, #cond); \
            bad++;                                                                                    \
        }                                                                                             \
    } while (0)

/* clang-format would write the array sections a[0:n] as "a[0:n]" */
/* clang-format off */
int ofl_probe_run(int n)
{
    int bad = 0;
    double *m = (double *)calloc(7 * (size_t)n, sizeof(double));
    if (!m) return 1;
    double *x = m, *y = m + n, *z = m + 2 * n, *w = m + 3 * n, *v = m + 4 * n, *u = m + 5 * n;
    double s = 0.0, t = 0.0, f = 0.5, r = 0.0, q = 0.0;
    double *g = m + 6 * n; /* one value per team shape row (i, 0) */
    double *xp = NULL;
    for (int i = 0; i < n; i++) x[i] = i, y[i] = 10 + i, z[i] = 2 * i, w[i] = 3 * i, v[i] = -1, u[i] = -1;

    KY_DATA_ENTER(KY_OPT_COPYIN(x[0:n]), KY_OPT_CREATE(y[0:n]))
    KY_OFFLOAD(KY_OPT_COPY(z[0:n]))
    for (int i = 0; i < n; i++) {
        double row = 0.0; /* this row's sum, by the inner loop's lanes */
        KY_OFFLOAD_INNER()
        for (int j = 0; j < 4; j++) z[i] += 0.0 * j;
        KY_OFFLOAD_INNER(KY_OPT_REDUCTION(+ : row))
        for (int j = 0; j < 4; j++) row += (double)j;
        z[i] += row - 6.0; /* + 0: checked with the rest of z below */
    }
    KY_OFFLOAD_TEAMS(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_REDUCTION(+ : q), KY_OPT_NUM(64),
                     KY_OPT_COPY(g[0:n]))
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            KY_OFFLOAD_THREADS()
            for (int j = k; j < 1; j++) g[i] = 1.0 + i; /* row (i, 0) alone writes g[i] */
            KY_OFFLOAD_THREADS(KY_OPT_REDUCTION(+ : q))
            for (int j = 0; j < 5; j++) q += (double)(i + j + k);
        }
    KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_REDUCTION(+ : s), KY_OPT_NUM(128))
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 3; j++) s += (double)(i + j);
    KY_OFFLOAD(KY_OPT_GANG, KY_OPT_WORKER, KY_OPT_NUM(32), KY_OPT_NUM_WORKERS(8), KY_OPT_COPY(z[0:n]))
    for (int i = 0; i < n; i++) z[i] += 0.0;
    KY_OFFLOAD(KY_OPT_PRIVATE(t), KY_OPT_FIRSTPRIVATE(f), KY_OPT_SIMD, KY_OPT_ASYNC(1))
    for (int i = 0; i < n; i++) {
        t = f * i;
        (void)t;
    }
    KY_OFFLOAD_WAIT(1)
    KY_OFFLOAD(KY_OPT_PRESENT(x[0:n]), KY_OPT_COPY(z[0:n]), KY_OPT_COPYIN(w[0:n]), KY_OPT_COPYOUT(v[0:n]),
               KY_OPT_CREATE(u[0:n]))
    for (int i = 0; i < n; i++) {
        u[i] = w[i];
        v[i] = u[i] + x[i];
        z[i] += 1.0;
    }
    OFFLOAD(OPT_SIMD, OPT_NUM(256))
    for (int i = 0; i < n; i++) {
    }
    KY_OFFLOAD_SERIAL(KY_OPT_PRESENT(y[0:n]))
    {
        y[0] = 42.0;
    }
    KY_UPDATE_HOST(y[0:n])
    CHECK(y[0] == 42.0);
    y[1] = 100.0, y[2] = 200.0;
    KY_UPDATE_DEVICE(x[0:n], y[0:n])
    KY_UPDATE(KY_OPT_HOST(x[0:n]), KY_OPT_ASYNC(2))
    KY_OFFLOAD_WAIT_ALL
    KY_DATA(KY_OPT_COPYIN(x[0:n]), KY_OPT_COPY(z[0:n]))
    {
        r = z[0];
    }
    KY_USE_DEVICE_PTR(x)
    {
        xp = x; /* the device address where there is a device */
    }
    KY_OFFLOAD_SERIAL(KY_OPT_PRESENT(y[0:n]))
    for (int i = 0; i < n; i++) {
        double rd, cp;
        KY_ATOMIC
        y[1] += 1.0;
        KY_ATOMIC_READ
        rd = y[1];
        KY_ATOMIC_CAPTURE
        cp = y[2]++;
        KY_ATOMIC_WRITE
        y[3] = rd + cp;
    }
    KY_DATA_EXIT(KY_OPT_COPYOUT(y[0:n]), KY_OPT_DELETE(x[0:n]))

    CHECK(s == 3.0 * n * (n - 1) / 2.0 + 3.0 * n);
    CHECK(q == 5.0 * n * (n - 1) + 25.0 * n); /* each i 10 times, 2n rows of 0+1+2+3+4, k = 1 in 5n terms */
    for (int i = 0; i < n; i++)
        if (g[i] != 1.0 + i) {
            fprintf(stderr, "probe.c: %s: team shape: g[%d] = %g\n", KY_OFFLOAD_BACKEND_NAME, i, g[i]);
            bad++;
            break;
        }
    CHECK(y[0] == 42.0 && y[1] == 100.0 + n && y[2] == 200.0 + n);
    CHECK(r == 1.0); /* z[0] after its copy clause's round trip */
    CHECK(xp != NULL);
    for (int i = 0; i < n; i++) {
        if (z[i] != 2 * i + 1.0 || v[i] != 3 * i + i) {
            fprintf(stderr, "probe.c: %s: i=%d: z=%g v=%g\n", KY_OFFLOAD_BACKEND_NAME, i, z[i], v[i]);
            bad++;
            break;
        }
    }
    free(m);
    return bad;
}
/* clang-format on */
