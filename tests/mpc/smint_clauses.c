/* SMint's clauses against the same program run sequentially (gcc ignores #pragma smint): copyin of a 2-D
 * section with the loop variable in it, copy, copyout through a pointer with a step of 2 and <=, create with
 * a reduction, lastprivate, and smint barrier in the serial part (tests/kycc/check.sh compares the outputs). */
#include <stdio.h>
#define N 300
#define M 40
static double a[N][M], b[N][M], c[N][M], scratch[N][M];
static long hist[N];

int main(void)
{
    int i, j, last = -1;
    double (*p)[M] = c;
    long sum = 0;
    double cs = 0;
#pragma smint parallel for private(j)
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++) a[i][j] = i * 3 + j, b[i][j] = 1, c[i][j] = -1;
#pragma smint barrier
#pragma smint parallel for private(j) copyin(a[i - 1:3][1:M - 2]) copy(b[i][*])
    for (i = 1; i < N - 1; i++)
        for (j = 1; j < M - 1; j++) b[i][j] += 2 * a[i - 1][j] + a[i + 1][j] - a[i][j + 1];
#pragma smint parallel for private(j) copyout(p[i:2][*]) lastprivate(last)
    for (i = 0; i <= N - 2; i += 2) {
        for (j = 0; j < M; j++) p[i][j] = p[i + 1][j] = b[i][j] * 2;
        last = i;
    }
#pragma smint parallel for private(j) create(scratch[i][*]) copyin(c[i][*]) reduction(+ : sum)
    for (i = 0; i < N; i++) {
        for (j = 0; j < M; j++) scratch[i][j] = c[i][j] + j;
        for (j = 0; j < M; j++) sum += (long)scratch[i][j] * (i % 7 + 1);
    }
    for (i = 0; i < N; i++) hist[i] = (long)b[i][M / 2] + (long)c[i][1];
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++) cs += b[i][j] * (i % 5 + 1) + c[i][j] * (j % 3);
    printf("last %d sum %ld cs %.1f b %g c %g hist %ld %ld\n", last, sum, cs, b[N / 2][M / 2], c[N - 1][M - 1],
           hist[7], hist[N - 2]);
    return 0;
}
