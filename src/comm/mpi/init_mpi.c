/* The MPI transport's set-up and teardown: comm's own duplicates of the job's communicator (requests,
 * replies, data, barrier), so no message of Kyoyu's matches one of the program's, and the channel on them. */
#include "comm/mpi/bulk.h"
#include "comm/mpi/mpi.h"
#include "comm/transport.h"

kyi_mpi_t kyi_mpi;

void kyi_mpi_open(void)
{
    MPI_Comm *comms[] = {&kyi_mpi.req, &kyi_mpi.rep, &kyi_mpi.data, &kyi_mpi.bar};
    for (int i = 0; i < 4; i++) {
        MPI_Comm_dup(kyi_rt.world, comms[i]);
        MPI_Comm_set_errhandler(*comms[i], MPI_ERRORS_RETURN);
    }
    int *ub, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    kyi_mpi.tag_ub = flag ? *ub : 32767;
    atomic_store(&kyi_mpi.tag_next, 0);
    kyi_mpi_chan_init();
}

void kyi_mpi_close(void)
{
    kyi_bulk_pool_free();
    MPI_Comm *comms[] = {&kyi_mpi.req, &kyi_mpi.rep, &kyi_mpi.data, &kyi_mpi.bar};
    for (int i = 0; i < 4; i++) MPI_Comm_free(comms[i]);
}
