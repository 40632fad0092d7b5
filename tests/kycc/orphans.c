/* kycc test: orphaned `omp for` loops met in the serial part. OpenMP runs them on one thread; kycc runs the
 * ones that store only global data and the function's locals on rank 0 alone and hands the locals to the
 * other ranks (kycc_rt.h, "Orphaned loops outside a region"), and the others on every rank as before.
 * Every local a loop leaves behind is read afterwards and stored into global data by the serial part, which
 * every rank runs: a rank without rank 0's values would merge different bytes there. orphans.sh counts the
 * loops run once (KYCC_STATS=1): scale (x4), scale_nowait (x4) and the outside calls of scale from
 * both_ways (x4); fill_local_array's loop stores only locals, so every rank runs it (no serial store). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1003 /* not a multiple of any team */
double a[N], b[N], out[8];
int lp_k;       /* lastprivate and reduction targets: shared, so globals (a local is private in a region) */
double red_s;

/* locals j and t written by the loop and read by the caller's serial code afterwards */
static double scale(double f, int *jlast)
{
    int i, j = -1;
    double t = 0;
#pragma omp for
    for (i = 0; i < N; i++) {
        t = sqrt((double)i) * f;
        for (j = 0; j < 3; j++) a[i] += t * 0.25 + b[i];
    }
    *jlast = j;
    return t;
}

static void scale_nowait(void)
{
    int i;
#pragma omp for nowait
    for (i = 0; i < N; i++) b[i] = b[i] * 0.5 + a[N - 1 - i] * 1e-3;
}

/* an array local written by the loop */
static double fill_local_array(void)
{
    double acc[3] = {0, 0, 0};
    int i;
#pragma omp for
    for (i = 0; i < N; i++) acc[i % 3] = a[i] + (double)i;
    return acc[0] + 2 * acc[1] + 3 * acc[2];
}

/* not for rank 0 alone: rand's state must advance on every rank */
static int with_rand(void)
{
    int i, last = 0;
#pragma omp for
    for (i = 0; i < 10; i++) last = rand() % 1000;
    return last;
}

/* not for rank 0 alone: p may be a rank's own stack */
static void through_pointer(double *p, int n)
{
    int i;
#pragma omp for
    for (i = 0; i < n; i++) p[i] = a[i] * 2;
}

/* not for rank 0 alone: a local's address taken in the loop */
static double address_taken(void)
{
    int i;
    double s = 0, *ps = &s;
#pragma omp for
    for (i = 0; i < N; i++) *(&s) = a[i];
    return *ps;
}

/* not for rank 0 alone: lastprivate and reduction */
static int with_lastprivate(void)
{
    int i;
#pragma omp for lastprivate(lp_k)
    for (i = 0; i < N; i++) lp_k = i * 2;
    return lp_k;
}
static double with_reduction(void)
{
    int i;
    red_s = 0;
#pragma omp for reduction(+ : red_s)
    for (i = 0; i < N; i++) red_s += a[i];
    return red_s;
}

/* the same loop inside a region (shared out over the team) and outside one (rank 0 alone) */
static void both_ways(void)
{
    int jl;
#pragma omp parallel
    scale(0.5, &jl);
    out[7] += scale(0.25, &jl) + jl;
}

int main(void)
{
    int step, jl = 0;
    double local[16];
    srand(7);
#pragma omp parallel for
    for (int i = 0; i < N; i++) {
        a[i] = i % 17;
        b[i] = i % 5;
    }
    for (step = 0; step < 4; step++) {
        double t = scale(1.0 + step, &jl);
        out[0] += t + jl; /* rank 0's t and j, on every rank */
        scale_nowait();
        out[1] += b[step * 7];
        out[2] += fill_local_array();
        int r = with_rand();
        out[3] += r;
        through_pointer(local, 16);
        out[4] += local[15];
        out[5] += address_taken() + with_lastprivate();
        out[6] += with_reduction();
        both_ways();
    }
    for (int k = 0; k < 8; k++) printf("out[%d] %.6f\n", k, out[k]);
    printf("a[5] %.6f b[1000] %.6f rand %d\n", a[5], b[1000], rand() % 1000);
    return 0;
}
