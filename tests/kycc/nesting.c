/* kycc test: constructs directly inside constructs (a critical as a loop's body, a region of one
 * statement, parallel sections with an implicit first section); compared with plain gcc -fopenmp. */
#include <stdio.h>
int x, y[8];
int main(void)
{
    int i;
#pragma omp parallel
#pragma omp for
    for (i = 0; i < 8; i++)
#pragma omp critical
        x += i;
#pragma omp parallel
#pragma omp atomic
    x += 1;
#pragma omp parallel sections
    {
        y[0] = 1; y[1] = 2;
#pragma omp section
        y[2] = 3;
    }
    printf("%d %d %d %d\n", x, y[0], y[1], y[2]);
    return 0;
}
