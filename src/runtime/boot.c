/* The bootstrap collectives (runtime.h): blocking MPI collectives on the runtime's duplicate of the job's
 * communicator. Layers above comm use these, not MPI, for their set-up agreements, so that a transport other
 * than MPI changes nothing above comm; they stay on MPI, which starts the job whatever the transport. */
#include <stdlib.h>

#include "kyoyu/status.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

int kyi_rt_allreduce_i64(int64_t *v, int n, kyi_rt_op_t op)
{
    if (MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, op == KYI_RT_MIN ? MPI_MIN : MPI_MAX, kyi_rt.world) !=
        MPI_SUCCESS)
        return kyi_fail(KY_ERR_MPI, "kyi_rt_allreduce_i64", "MPI_Allreduce failed");
    return KY_OK;
}

/* The job's and the node's allgather and barrier: one body each, the communicator and the message's place
 * ("", " on the node") passed in. */
static int allgather_on(MPI_Comm c, const char *call, const char *where, const void *mine, size_t bytes,
                        void *all)
{
    if (bytes > INT32_MAX ||
        MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, c) != MPI_SUCCESS)
        return kyi_fail(KY_ERR_MPI, call, "MPI_Allgather of %zu bytes%s failed", bytes, where);
    return KY_OK;
}

static int barrier_on(MPI_Comm c, const char *call, const char *where)
{
    if (MPI_Barrier(c) != MPI_SUCCESS) return kyi_fail(KY_ERR_MPI, call, "MPI_Barrier%s failed", where);
    return KY_OK;
}

int kyi_rt_allgather(const void *mine, size_t bytes, void *all)
{
    return allgather_on(kyi_rt.world, "kyi_rt_allgather", "", mine, bytes, all);
}

int kyi_rt_alltoall_u64(const uint64_t *mine, uint64_t *theirs)
{
    if (MPI_Alltoall(mine, 1, MPI_UINT64_T, theirs, 1, MPI_UINT64_T, kyi_rt.world) != MPI_SUCCESS)
        return kyi_fail(KY_ERR_MPI, "kyi_rt_alltoall_u64", "MPI_Alltoall failed");
    return KY_OK;
}

int kyi_rt_bcast(void *buf, size_t bytes, int root)
{
    if (bytes > INT32_MAX || MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, kyi_rt.world) != MPI_SUCCESS)
        return kyi_fail(KY_ERR_MPI, "kyi_rt_bcast", "MPI_Bcast of %zu bytes from rank %d failed", bytes,
                        root);
    return KY_OK;
}

int kyi_rt_barrier(void)
{
    return barrier_on(kyi_rt.world, "kyi_rt_barrier", "");
}

int kyi_rt_node_allgather(const void *mine, size_t bytes, void *all)
{
    return allgather_on(kyi_rt.node_comm, "kyi_rt_node_allgather", " on the node", mine, bytes, all);
}

int kyi_rt_node_barrier(void)
{
    return barrier_on(kyi_rt.node_comm, "kyi_rt_node_barrier", " on the node");
}

void kyi_rt_abort(int status)
{
    MPI_Abort(MPI_COMM_WORLD, status);
    abort(); /* MPI_Abort returned: still end this process */
}
