/* kycc test: odd corners: initialised struct arrays, extern arrays of unknown size, several function statics
 * in one declaration, schedule(dynamic) (run as static), descending chunked loops, reduction on a region,
 * max reductions on a combined parallel for; compared with plain gcc -fopenmp. */
#include <stdio.h>
#include <omp.h>
typedef struct { int k; double v; } item_t;
item_t items[8] = {{1, 0.5}, {2, 1.5}};
extern double vec[];
double vec[64];
static int counts[3] = {7, 8, 9};
int nthr;

static int next_id(void)
{
    static int a = 100, b = 5;
    static double hist[4] = {1, 2, 3, 4};
    hist[a % 4] += 1;
    return a++ + b;
}

int main(void)
{
    int i, id = 0;
    double total = 0;
#pragma omp parallel private(i) reduction(+:total)
    {
#pragma omp for schedule(dynamic, 4)
        for (i = 0; i < 64; i++) vec[i] = items[i % 2].v * i;
#pragma omp single
        { id = next_id(); nthr = omp_get_num_threads(); }
#pragma omp for
        for (i = 0; i < 64; i++) total += vec[i];
#pragma omp for schedule(static, 5) nowait
        for (i = 63; i > 0; i -= 2) vec[i] = -vec[i];
    }
    int mx = 0;
#pragma omp parallel for reduction(max:mx)
    for (i = 0; i < 3; ++i) mx = counts[i] > mx ? counts[i] : mx;
    double s = 0;
    for (i = 0; i < 64; i++) s += vec[i];
    printf("id %d total %.1f (x%d threads) mx %d s %.1f next %d\n", id, total / nthr, nthr, mx, s, next_id());
    return 0;
}
