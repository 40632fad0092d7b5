/* The UCX transport when Kyoyu is built without UCX (CMake builds this file instead of the rest of ucx/):
 * KY_TRANSPORT=ucx is refused at ky_init, auto means MPI. */
#include "comm/transport.h"

int kyi_ucx_built(void)
{
    return 0;
}

int kyi_ucx_open(const kyi_transport_t **out)
{
    *out = NULL;
    return kyi_fail(KY_ERR_UNSUPPORTED, "ky_init", "rank %d: Kyoyu was built without UCX", kyi_rt.rank);
}
