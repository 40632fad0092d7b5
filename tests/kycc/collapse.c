/* kycc test: collapse(2) and collapse(3) over perfectly nested loops (braces between them, descending and
 * strided inner loops, lastprivate of the flattened nest); compared with plain gcc -fopenmp. */
#include <stdio.h>

double g[7][9][5];
int hits[7][9];

int main(void)
{
    int i, j, k, li = -1, lj = -1;
#pragma omp parallel for collapse(2) lastprivate(li, lj)
    for (i = 0; i < 7; i++) {
        for (j = 8; j >= 0; j -= 1) {
            hits[i][j] += i * 10 + j;
            li = i;
            lj = j;
        }
    }
#pragma omp parallel
    {
#pragma omp for collapse(3) private(k)
        for (i = 0; i < 7; i++)
            for (j = 0; j < 9; j++)
                for (k = 0; k < 5; k += 2)
                    g[i][j][k] = i + 0.5 * j + 0.25 * k;
    }
    double s = 0;
    long h = 0;
    for (i = 0; i < 7; i++)
        for (j = 0; j < 9; j++) {
            h += hits[i][j] * (i + 1);
            for (k = 0; k < 5; k++) s += g[i][j][k];
        }
    printf("hits %ld sum %.2f last %d %d\n", h, s, li, lj);
    return 0;
}
