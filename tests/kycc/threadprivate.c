/* Scratch variables shared by mistake (NPB BT's tmp1-3): built with -fkycc-threadprivate=tmp1,tmp2,tmp3 every
 * thread of every rank has its own; without it the barrier below shows another thread's value. */
#include <omp.h>
#include <stdio.h>

static double tmp1, tmp2,
    tmp3;
int not_named = 0;

int main(void)
{
    int bad = 0;
    double sum = 0;
#pragma omp parallel reduction(+ : bad)
    {
        int id = omp_get_thread_num();
        tmp1 = id;
#pragma omp barrier
        if (tmp1 != id) bad++;
    }
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < 1000; i++) {
        tmp1 = i * 0.5;
        tmp2 = tmp1 * 2;
        tmp3 = tmp2 + 1;
        sum += tmp3;
    }
    printf("threads seeing another's tmp1: %d, sum %.1f\n", bad, sum);
    return bad != 0 || sum != 500500.0;
}
