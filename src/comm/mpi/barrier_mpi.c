/* The split-phase barrier's MPI side: one non-blocking MPI barrier on comm's own communicator. barrier.c
 * keeps the state machine (one barrier in flight per rank); whatever transport carried the transfers, they
 * were complete (ky_quiet) before the barrier started. */
#include "comm/mpi/mpi.h"

static MPI_Request bar_req = MPI_REQUEST_NULL;

int kyi_mpi_barrier_start(const char *call)
{
    if (MPI_Ibarrier(kyi_mpi.bar, &bar_req) != MPI_SUCCESS)
        return kyi_fail(KY_ERR_MPI, call, "rank %d: MPI_Ibarrier failed", kyi_rt.rank);
    return KY_OK;
}

int kyi_mpi_barrier_test(const char *call, int *done)
{
    if (MPI_Test(&bar_req, done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return kyi_fail(KY_ERR_MPI, call, "rank %d: MPI_Test of the barrier failed", kyi_rt.rank);
    return KY_OK;
}
