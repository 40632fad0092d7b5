/* The io checksum on the GPU in a build without CUDA: never called for GPU memory there (there is none), and
 * says so if it is. */
#include <stdio.h>

#include "io/checksum_gpu.h"

int kyi_io_gpu_checksum(int dev, const kyi_io_run_t *runs, size_t nruns, size_t elem, uint64_t *sum,
                        char *err, size_t errlen)
{
    (void)dev, (void)runs, (void)nruns, (void)elem, (void)sum;
    snprintf(err, errlen, "this build has no CUDA");
    return -1;
}
