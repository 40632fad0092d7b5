/* The 5-point 2-D stencil of seed 000 Table 1 in MpC (seed 000 Fig. 6's style): shared arrays cut into
 * row blocks, one per rank; each rank updates its rows with OpenMP and reads its neighbours' edge rows through
 * the global space; every step ends with a barrier (its rows are then read by the neighbours); the checksum
 * reads the whole grid (every rank, after the step loop, untimed). */
#include <stdio.h>
#include <omp.h>
#include <mpc.h>
#ifndef N
#define N 4096
#endif
#ifndef NT
#define NT 100
#endif
shared double a[N][N]::[NPROCS][1](0, NPROCS), b[N][N]::[NPROCS][1](0, NPROCS);

int main(int argc, char **argv)
{
    mpc_init(&argc, &argv);
    double (*src)[N] = a, (*dst)[N] = b, (*tmp)[N], s = 0, w = 0, t0;
    int i, j, t, lo = (N + NPROCS - 1) / NPROCS * MYPID, hi = MIN(N, lo + (N + NPROCS - 1) / NPROCS);
#pragma omp parallel for private(j)
    for (i = lo; i < hi; i++)
        for (j = 0; j < N; j++)
            a[i][j] = b[i][j] = (i * 7 + j * 13) % 17 * 0.1;
    mpc_barrier();
    t0 = omp_get_wtime();
    for (t = 0; t < NT; t++, mpc_barrier()) {
#pragma omp parallel for private(j)
        for (i = MAX(lo, 1); i < MIN(hi, N - 1); i++)
            for (j = 1; j < N - 1; j++)
                dst[i][j] = 0.2 * (src[i][j] + src[i - 1][j] + src[i + 1][j] + src[i][j - 1] + src[i][j + 1]);
        tmp = src, src = dst, dst = tmp;
    }
    t0 = omp_get_wtime() - t0;
#pragma omp parallel for private(j) reduction(+ : s, w)
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            s += src[i][j], w += src[i][j] * (i % 13 + j % 7);
    if (MYPID == 0) printf("checksum %.15e %.15e time %.6f\n", s, w, t0);
    mpc_exit();
    return 0;
}
