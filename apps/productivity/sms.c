/* The 5-point 2-D stencil of seed 000 Table 1 with the SMS library (sms.h on Kyoyu's DSM, seed 000 Fig. 7's
 * style): sms_mapalloc'd arrays cut into row blocks, one per rank, halos read through the global space; the
 * checksum reads the whole grid (every rank, after the step loop, untimed). */
#include <stdio.h>
#include <omp.h>
#include <sms.h>
#ifndef N
#define N 4096
#endif
#ifndef NT
#define NT 100
#endif
double (*a)[N], (*b)[N];

int main(int argc, char **argv)
{
    sms_startup(&argc, &argv);
    int dim[3] = {N, N, -1}, div[3] = {sms_nprocs, 1, -1};
    a = (double (*)[N])sms_mapalloc(dim, div, sizeof(double), 0, sms_nprocs);
    b = (double (*)[N])sms_mapalloc(dim, div, sizeof(double), 0, sms_nprocs);
    double (*src)[N] = a, (*dst)[N] = b, (*tmp)[N], s = 0, w = 0, t0;
    int i, j, t, lo = (N + sms_nprocs - 1) / sms_nprocs * sms_rank, hi = lo + (N + sms_nprocs - 1) / sms_nprocs;
    hi = hi < N ? hi : N;
#pragma omp parallel for private(j)
    for (i = lo; i < hi; i++)
        for (j = 0; j < N; j++)
            a[i][j] = b[i][j] = (i * 7 + j * 13) % 17 * 0.1;
    sms_barrier();
    t0 = omp_get_wtime();
    for (t = 0; t < NT; t++) {
        sms_barrier();
#pragma omp parallel for private(j)
        for (i = lo > 1 ? lo : 1; i < (hi < N - 1 ? hi : N - 1); i++)
            for (j = 1; j < N - 1; j++)
                dst[i][j] = 0.2 * (src[i][j] + src[i - 1][j] + src[i + 1][j] + src[i][j - 1] + src[i][j + 1]);
        tmp = src, src = dst, dst = tmp;
    }
    t0 = omp_get_wtime() - t0;
    sms_barrier();
#pragma omp parallel for private(j) reduction(+ : s, w)
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            s += src[i][j], w += src[i][j] * (i % 13 + j % 7);
    if (sms_rank == 0) printf("checksum %.15e %.15e time %.6f\n", s, w, t0);
    sms_shutdown();
    return 0;
}
