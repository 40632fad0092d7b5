/* omp_barrier: what one `#pragma omp barrier` costs back to back on OMP_NUM_THREADS threads (the floor kycc's
 * team barrier is measured against: NPB SP class A passes 9.7 million per thread), median of 5 rounds.
 *   cc -O2 -fopenmp bench/npb/omp_barrier.c -o omp_barrier && OMP_NUM_THREADS=16 ./omp_barrier [N] */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    if (n < 1) {
        fprintf(stderr, "omp_barrier: N must be a positive count of barriers, not %s\n", argv[1]);
        return 2;
    }
    double t[5];
    int nt = 0;
    for (int r = 0; r < 5; r++) {
        double t0 = 0;
#pragma omp parallel
        {
#pragma omp single
            nt = omp_get_num_threads();
#pragma omp barrier
#pragma omp master
            t0 = omp_get_wtime();
            for (long i = 0; i < n; i++) {
#pragma omp barrier
            }
#pragma omp master
            t[r] = (omp_get_wtime() - t0) / n;
        }
    }
    qsort(t, 5, sizeof t[0], cmp);
    printf(
        "omp_barrier: %d threads, %ld barriers x 5 rounds: %.3f us per barrier (median; min %.3f, max "
        "%.3f)\n",
        nt, n, t[2] * 1e6, t[0] * 1e6, t[4] * 1e6);
    return 0;
}
