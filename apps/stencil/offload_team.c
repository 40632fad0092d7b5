/* ky_stencil_offload's device threads: host OpenMP behind three calls, compiled apart from the directive
 * code (offload_device.c). GCC offloads one directive family per program (mkoffload refuses -fopenacc with
 * -fopenmp), so the OpenACC builds compile offload_device.c with -fopenacc alone, and their threads,
 * barriers and thread numbers come from here (orphaned constructs bind to the team so_team_run starts). */
#ifdef _OPENMP
#include <omp.h>
#endif

#include "offload_stencil.h"

int so_team_max(void)
{
#ifdef _OPENMP
    return omp_get_thread_limit(); /* OMP_THREAD_LIMIT (make test-tsan sets 1) */
#else
    return 1; /* no threads: one device per rank */
#endif
}

int so_team_run(int n, void (*body)(void *), void *arg)
{
    int got = 1;
#pragma omp parallel num_threads(n)
    {
#ifdef _OPENMP
#pragma omp single
        got = omp_get_num_threads(); /* the single's barrier: every thread sees it */
#endif
        if (got == n) body(arg);
    }
    return got;
}

int so_team_me(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

void so_team_barrier(void)
{
#pragma omp barrier
}
