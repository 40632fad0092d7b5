/* The 5-point 2-D stencil of seed 000 Table 1 with MPI: each rank keeps its block of rows plus one halo row
 * on each side and swaps its edge rows with its neighbours every step (the table's reference for speed). */
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include <omp.h>
#ifndef N
#define N 4096
#endif
#ifndef NT
#define NT 100
#endif

int main(int argc, char **argv)
{
    int rank, np, i, j, t;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int rows = (N + np - 1) / np, lo = rows * rank, hi = lo + rows < N ? lo + rows : N, n = hi - lo;
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < np - 1 ? rank + 1 : MPI_PROC_NULL;
    double (*src)[N] = malloc(sizeof(double[N]) * (n + 2)), (*dst)[N] = malloc(sizeof(double[N]) * (n + 2));
    double (*tmp)[N], s = 0, w = 0, t0, v[2], r[2];
#pragma omp parallel for private(j)
    for (i = 0; i < n; i++)
        for (j = 0; j < N; j++)
            src[i + 1][j] = dst[i + 1][j] = ((lo + i) * 7 + j * 13) % 17 * 0.1;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (t = 0; t < NT; t++) {
        MPI_Sendrecv(src[1], N, MPI_DOUBLE, up, 0, src[n + 1], N, MPI_DOUBLE, down, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(src[n], N, MPI_DOUBLE, down, 1, src[0], N, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
#pragma omp parallel for private(j)
        for (i = lo == 0 ? 2 : 1; i <= (hi == N ? n - 1 : n); i++)
            for (j = 1; j < N - 1; j++)
                dst[i][j] = 0.2 * (src[i][j] + src[i - 1][j] + src[i + 1][j] + src[i][j - 1] + src[i][j + 1]);
        tmp = src, src = dst, dst = tmp;
    }
    t0 = MPI_Wtime() - t0;
#pragma omp parallel for private(j) reduction(+ : s, w)
    for (i = 1; i <= n; i++)
        for (j = 0; j < N; j++)
            s += src[i][j], w += src[i][j] * ((lo + i - 1) % 13 + j % 7);
    v[0] = s, v[1] = w;
    MPI_Reduce(v, r, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("checksum %.15e %.15e time %.6f\n", r[0], r[1], t0);
    free(src);
    free(dst);
    MPI_Finalize();
    return 0;
}
