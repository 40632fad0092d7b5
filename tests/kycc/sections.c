/* kycc test: sections (with and without a leading section pragma, nowait, a reduction) and parallel
 * sections; each section writes its own global, read back after the barrier; compared with gcc. */
#include <stdio.h>
#include <omp.h>

double part[5];
int runs;

int main(void)
{
    int total = 0;
#pragma omp parallel
    {
#pragma omp sections reduction(+:total)
        {
            part[0] = 1.5; total += 1;
#pragma omp section
            { part[1] = 2.5; total += 10; }
#pragma omp section
            part[2] = 3.5;
        }
#pragma omp sections nowait
        {
#pragma omp section
            part[3] = part[0] + part[1];
#pragma omp section
            {
#pragma omp atomic
                runs++;
            }
        }
    }
#pragma omp parallel sections
    {
#pragma omp section
        part[4] = 7;
#pragma omp section
        {
#pragma omp atomic
            runs++;
        }
    }
    printf("%.1f %.1f %.1f %.1f %.1f total %d runs %d\n", part[0], part[1], part[2], part[3], part[4], total, runs);
    return 0;
}
