/* kycc test: clause expressions naming global variables (if, num_threads, a schedule's chunk) and an
 * if(false) region, which runs as one thread (on every rank, like the serial part); compared with gcc. */
#include <stdio.h>
#include <omp.h>

int chunk = 3, nt = 2, big = 1;
double a[100];

int main(void)
{
    int i, count = 0, inside = -1;
#pragma omp parallel if(big) num_threads(nt + 0)
    {
#pragma omp for schedule(static, chunk)
        for (i = 0; i < 100; i++) a[i] = i * 2.0;
    }
#pragma omp parallel if(!big)
    {
#pragma omp atomic
        count++;
        inside = omp_get_num_threads();
    }
    double s = 0;
    for (i = 0; i < 100; i++) s += a[i];
    printf("sum %.1f count %d threads in the if(false) region %d\n", s, count, inside);
    return 0;
}
