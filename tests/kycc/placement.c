/* kycc test: where an array without a mapping directive is homed. a[3][1024] on 2 ranks: kycc's default cuts
 * the first dimension (blocks of ceil(3/2) = 2 rows), KYCC_PLACEMENT=whole the whole array (blocks of 1536
 * elements, Omni/SCASH's default in seed 003). Rank 0 prints the home of every 4 KiB page's first element;
 * placement.sh computes the expected homes itself. The sum checks the data stayed where the program put it. */
#include <stdio.h>

int ky_home_of(const void *p);

double a[3][1024];

int main(void)
{
    int i, j;
    double sum = 0;
#pragma omp parallel for private(j)
    for (i = 0; i < 3; i++)
        for (j = 0; j < 1024; j++) a[i][j] = i * 1024 + j;
    for (i = 0; i < 3; i++)
        for (j = 0; j < 1024; j++) sum += a[i][j];
    printf("sum %.1f\n", sum);
    for (i = 0; i < 3 * 1024; i += 512) printf("element %d home %d\n", i, ky_home_of(&a[i / 1024][i % 1024]));
    return 0;
}
