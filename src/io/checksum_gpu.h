/* Internal: the io checksum computed on the GPU (checksum_gpu.cu in CUDA builds, checksum_gpu_none.c
 * otherwise), for the cuFile path and the bounce path's GPU pieces. Kept free of HDF5 and MPI so nvcc
 * compiles the kernel file with the CUDA toolkit's headers only. */
#ifndef KYI_IO_CHECKSUM_GPU_H
#define KYI_IO_CHECKSUM_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A run of n elements contiguous in GPU memory at `mem` whose first has global row-major index g. */
typedef struct {
    const char *mem;
    uint64_t g, n;
} kyi_io_run_t;

/* The io checksum (checksum.c's formula) of the elements of runs[0..nruns) of `elem` bytes each, on device
 * `dev` (on a blocking stream: after the work the program queued on the legacy default stream, as the
 * runtime's copies); added to *sum. Returns 0, or -1 with the CUDA error's text in err. */
int kyi_io_gpu_checksum(int dev, const kyi_io_run_t *runs, size_t nruns, size_t elem, uint64_t *sum,
                        char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
