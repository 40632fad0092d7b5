/* kycc test: initialised globals, a struct, threadprivate with copyin, globals of another file (data2.c),
 * orphaned work-sharing in a function called from a region and from serial code; compared with gcc. */
#include <stdio.h>
#include <omp.h>

struct grid { int n; double h; double v[40]; };
struct grid g = {40, 0.25, {1, 2, 3}};
int table[5] = {3, 1, 4, 1, 5};
int tp = 0;
#pragma omp threadprivate(tp)
extern double other[100];
extern int other_count;
void fill_other(double v);

static void scale_all(double f)
{
    int i;
#pragma omp for
    for (i = 0; i < g.n; i++) g.v[i] = g.v[i] * f + table[i % 5];
}

int main(void)
{
    int i, bad = 0;
    tp = 42;
#pragma omp parallel copyin(tp)
    {
        if (tp != 42) {
#pragma omp atomic
            bad++;
        }
        scale_all(2.0);
    }
    scale_all(1.0);   /* orphaned loop outside a region: the whole range */
    fill_other(1.5);
    double s = 0, t = 0;
    for (i = 0; i < g.n; i++) s += g.v[i];
    for (i = 0; i < 100; i++) t += other[i];
    printf("bad %d h %.2f sum %.2f other %.2f count %d\n", bad, g.h, s, t, other_count);
    return 0;
}
