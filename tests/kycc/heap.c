/* kycc test: arrays from malloc/calloc/realloc in the serial part, filled by parallel loops on every rank and
 * read back by the serial part; small and in-region allocations stay the rank's own. Compared with gcc. */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

int main(void)
{
    int n = 100000, i;
    double *a = malloc(n * sizeof *a);
    long *c = calloc(n, sizeof *c);
    int *small = malloc(4 * sizeof *small);
#pragma omp parallel for
    for (i = 0; i < n; i++) { a[i] = i * 0.5; c[i] += i % 7; }
    a = realloc(a, 2 * n * sizeof *a);
#pragma omp parallel
    {
        double *scratch = malloc(16 * sizeof *scratch);   /* a thread's own */
#pragma omp for
        for (i = n; i < 2 * n; i++) { scratch[i % 16] = i; a[i] = a[i - n] + scratch[i % 16]; }
        free(scratch);
    }
    double s = 0;
    long t = 0;
    for (i = 0; i < 2 * n; i++) s += a[i];
    for (i = 0; i < n; i++) t += c[i];
    small[0] = 1;
    printf("sum %.1f count %ld small %d\n", s, t, small[0]);
    free(a);
    free(c);
    free(small);
    return 0;
}
