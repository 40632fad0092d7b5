/* kycc test: Kyoyu's extensions (#pragma kyoyu mapping, schedule(affinity(...)), #pragma kyoyu
 * update/push); plain gcc builds the same program without them (__KYCC__ undefined) and must agree. */
#include <stdio.h>
#include <omp.h>

#define NZ 24
#define NY 64
#define NX 64
double u[NZ][NY][NX], w[NZ][NY][NX];
#pragma kyoyu mapping(u[block][*][*])
#pragma kyoyu mapping(w[block][*][*])

int main(void)
{
    int z, y, x;
#pragma omp parallel private(y, x)
    {
#ifdef __KYCC__
#pragma omp for schedule(affinity(u[z][*][*]))
#else
#pragma omp for
#endif
        for (z = 0; z < NZ; z++)
            for (y = 0; y < NY; y++)
                for (x = 0; x < NX; x++) u[z][y][x] = z * 0.5 + y * 0.25 + x;
#ifdef __KYCC__
#pragma kyoyu update(u[0:1][*][*])
#pragma kyoyu push(u[NZ-1:1][*][*], 0)
#endif
#ifdef __KYCC__
#pragma omp for schedule(affinity(w[z][*][*]))
#else
#pragma omp for
#endif
        for (z = 1; z < NZ - 1; z++)
            for (y = 0; y < NY; y++)
                for (x = 0; x < NX; x++) w[z][y][x] = u[z - 1][y][x] + u[z + 1][y][x] + u[0][y][x];
    }
    double s = 0;
    for (z = 0; z < NZ; z++)
        for (y = 0; y < NY; y++)
            for (x = 0; x < NX; x++) s += w[z][y][x];
    printf("sum %.3f\n", s);
    return 0;
}
