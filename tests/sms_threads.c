/* sms.h's start-up and OpenMP's thread count: prints each rank's team size after sms_startup, which
 * tests/sms_threads.sh checks against the host's cores (no more threads than cores over the host's ranks
 * without OMP_NUM_THREADS, exactly OMP_NUM_THREADS with it). */
#include <omp.h>
#include <stdio.h>

#include "sms.h"

int main(int argc, char **argv)
{
    sms_startup(&argc, &argv);
    int team = 0;
#pragma omp parallel
    {
#pragma omp single
        team = omp_get_num_threads();
    }
    printf("rank %d threads %d max %d\n", sms_rank, team, omp_get_max_threads());
    fflush(stdout);
    sms_shutdown();
    return 0;
}
