/* The 5-point 2-D stencil of seed 000 Table 1, sequential with OpenMP (the table's baseline). */
#include <stdio.h>
#include <omp.h>
#ifndef N
#define N 4096
#endif
#ifndef NT
#define NT 100
#endif
static double a[N][N], b[N][N];

int main(void)
{
    double (*src)[N] = a, (*dst)[N] = b, (*tmp)[N], s = 0, w = 0, t0;
    int i, j, t;
#pragma omp parallel for private(j)
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            a[i][j] = b[i][j] = (i * 7 + j * 13) % 17 * 0.1;
    t0 = omp_get_wtime();
    for (t = 0; t < NT; t++) {
#pragma omp parallel for private(j)
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                dst[i][j] = 0.2 * (src[i][j] + src[i - 1][j] + src[i + 1][j] + src[i][j - 1] + src[i][j + 1]);
        tmp = src, src = dst, dst = tmp;
    }
    t0 = omp_get_wtime() - t0;
#pragma omp parallel for private(j) reduction(+ : s, w)
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            s += src[i][j], w += src[i][j] * (i % 13 + j % 7);
    printf("checksum %.15e %.15e time %.6f\n", s, w, t0);
    return 0;
}
