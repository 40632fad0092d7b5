/* device_bench's NVSHMEM half (device_bench_nvshmem.cu, built only where NVSHMEM was found): the same
 * put_signal ping-pong as Kyoyu's, between the two ranks as NVSHMEM PEs. */
#ifndef KY_DEVICE_BENCH_H
#define KY_DEVICE_BENCH_H

#include <stddef.h>

/* Collective over the 2 ranks (MPI initialised, GPU set). NVSHMEM is initialised on MPI_COMM_WORLD, runs
 * every size, and is finalised. rtt_us[i]: round trip time for sizes[i]. Returns 0, or -1 with the reason in
 * why (every rank alike). */
int dbn_nvshmem_pingpong(const size_t *sizes, int nsizes, int iters, int warmup, double *rtt_us, char *why,
                         size_t why_len);

#endif
