/* kycc test: the serial code between regions, which every rank runs. On one node the run-time stays in the
 * parallel phase after a region until a serial store that may reach global data; these stretches store in
 * every way kycc must catch (read-modify-writes of globals, through pointers and parameters, in functions
 * of this unit, after a call that runs a region, through library calls, in an orphaned loop run outside a
 * region), and each must apply once, as with gcc. Others store only locals: there the phase change is skipped (phases.sh counts them). */
#include <stdio.h>
#include <string.h>

#define N 1000
double a[N], total;
int counter, hist[8];
static int *where;
struct {
    int n;
    double v[4];
} rec;

static void bump(int *p)
{
    *p += 1; /* a parameter: may point into the global space */
}

static double sum_region(void)
{
    double s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < N; i++) s += a[i];
    return s;
}

static int count_region(void)
{
    int k = 0;
#pragma omp parallel for reduction(+ : k)
    for (int i = 0; i < N; i++) k += a[i] > 0;
    return k;
}

/* an orphaned loop: run by one thread outside a region (by every rank alike under kycc), split inside one */
static void halve(void)
{
#pragma omp for
    for (int i = 0; i < N; i++) a[i] = a[i] * 0.5 + 1;
}

int main(void)
{
    int step, loc = 0, larr[4] = {0};
    double lsum = 0;
    where = &hist[3];
#pragma omp parallel for
    for (int i = 0; i < N; i++) a[i] = i;
    for (step = 0; step < 20; step++) {
        /* locals only: no store reaches the global space, the phase change is skipped */
        loc += step;
        larr[step % 4]++;
        bump(&loc); /* through a parameter, but into this frame: KYCC_STA sees the address, no phase change */
#pragma omp parallel for
        for (int i = 0; i < N; i++) a[i] += 1;
        lsum += a[step]; /* reads of global data are fine */
#pragma omp parallel for
        for (int i = 0; i < N; i++) a[i] *= 1.0;
    }
    for (step = 0; step < 5; step++) {
        counter += 1;           /* a global, read-modify-write */
        hist[step % 8]++;       /* a global array */
        (*where)++;             /* through a global pointer */
        bump(&counter);         /* through a parameter of a function of this unit */
        rec.v[step % 4] += 0.5; /* a member of a global struct */
#pragma omp parallel for
        for (int i = 0; i < N; i++) a[i] += 1;
        total += sum_region();  /* the right side runs a region: the store after it */
        rec.n += count_region();
        memset(&hist[7], 0, sizeof(int)); /* a library call storing into the global space */
        hist[7] += step;
        halve(); /* serial: its read-modify-writes apply once */
#pragma omp parallel
        halve();
    }
    int off = 0;
#pragma omp parallel if (off)
    {
        /* an if(false) region's body is serial code; a region it runs must not leave the serial phase off */
        rec.n += count_region();
        counter += 100;
    }
    printf("loc %d larr %d %d %d %d lsum %.1f\n", loc, larr[0], larr[1], larr[2], larr[3], lsum);
    printf("counter %d hist %d %d %d %d %d %d %d %d\n", counter, hist[0], hist[1], hist[2], hist[3], hist[4],
           hist[5], hist[6], hist[7]);
    printf("rec %d %.1f %.1f %.1f %.1f total %.1f a[7] %.1f\n", rec.n, rec.v[0], rec.v[1], rec.v[2], rec.v[3],
           total, a[7]);
    return 0;
}
