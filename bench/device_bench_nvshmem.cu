/* device_bench's NVSHMEM column (device_bench.h): the same put_signal ping-pong in a kernel, with
 * nvshmem_putmem_signal_nbi and nvshmem_signal_wait_until on symmetric memory. Built only where CMake found
 * NVSHMEM (bench/CMakeLists.txt), with relocatable device code as NVSHMEM's device library requires.
 * NVSHMEM is initialised on MPI_COMM_WORLD (NVSHMEMX_INIT_WITH_MPI_COMM); the caller has set
 * NVSHMEM_DISABLE_NVLS=1 (no NVLink multicast objects). NVSHMEM ends the process itself if its
 * initialisation fails, which is why device_bench runs this last. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "device_bench.h"

namespace {

__device__ inline unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void nv_pingpong(char *dst, const char *src, uint64_t *sig, size_t bytes, int iters, int warmup,
                            int me, long long *ns)
{
    if (blockIdx.x || threadIdx.x) return;
    int peer = 1 - me;
    unsigned long long t0 = now_ns();
    for (int i = 1; i <= warmup + iters; i++) {
        if (i == warmup + 1) t0 = now_ns();
        if (me == 0) {
            nvshmem_putmem_signal_nbi(dst, src, bytes, sig, (uint64_t)i, NVSHMEM_SIGNAL_SET, peer);
            nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, (uint64_t)i);
        } else {
            nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, (uint64_t)i);
            nvshmem_putmem_signal_nbi(dst, src, bytes, sig, (uint64_t)i, NVSHMEM_SIGNAL_SET, peer);
        }
    }
    *ns = (long long)(now_ns() - t0);
    nvshmem_quiet();
}

int fail(char *why, size_t len, const char *what, cudaError_t e)
{
    snprintf(why, len, "NVSHMEM: %s: %s", what, cudaGetErrorString(e));
    return -1;
}

}  // namespace

int dbn_nvshmem_pingpong(const size_t *sizes, int nsizes, int iters, int warmup, double *rtt_us, char *why,
                         size_t why_len)
{
    MPI_Comm comm = MPI_COMM_WORLD;
#ifdef NVSHMEMX_INIT_ATTR_INITIALIZER
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
#else
    nvshmemx_init_attr_t attr;
    memset(&attr, 0, sizeof attr);
#endif
    attr.mpi_comm = &comm;
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr) != 0) {
        snprintf(why, why_len, "NVSHMEM: nvshmemx_init_attr (MPI bootstrap) failed");
        return -1;
    }
    int me = nvshmem_my_pe(), st = 0;
    if (nvshmem_n_pes() != 2) {
        snprintf(why, why_len, "NVSHMEM: %d PEs, not 2", nvshmem_n_pes());
        nvshmem_finalize();
        return -1;
    }
    size_t maxb = 8;
    for (int i = 0; i < nsizes; i++) maxb = sizes[i] > maxb ? sizes[i] : maxb;
    char *dst = (char *)nvshmem_malloc(maxb), *src = (char *)nvshmem_malloc(maxb);
    uint64_t *sig = (uint64_t *)nvshmem_malloc(sizeof(uint64_t));
    long long *ns = NULL;
    cudaStream_t stream = NULL;
    cudaError_t e = cudaSuccess;
    if (!dst || !src || !sig) {
        snprintf(why, why_len, "NVSHMEM: nvshmem_malloc of %zu bytes failed", maxb);
        st = -1;
    } else if ((e = cudaMalloc(&ns, sizeof *ns)) != cudaSuccess ||
               (e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) {
        st = fail(why, why_len, "setup", e);
    }
    for (int i = 0; !st && i < nsizes; i++) {
        if ((e = cudaMemset(sig, 0, sizeof *sig)) != cudaSuccess ||
            (e = cudaMemset(src, 1 + me, sizes[i])) != cudaSuccess ||
            (e = cudaDeviceSynchronize()) != cudaSuccess) {
            st = fail(why, why_len, "cudaMemset", e);
            break;
        }
        nvshmem_barrier_all();
        nv_pingpong<<<1, 1, 0, stream>>>(dst, src, sig, sizes[i], iters, warmup, me, ns);
        if ((e = cudaStreamSynchronize(stream)) != cudaSuccess) {
            st = fail(why, why_len, "the ping-pong kernel", e);
            break;
        }
        nvshmem_barrier_all();
        long long h = 0;
        cudaMemcpy(&h, ns, sizeof h, cudaMemcpyDeviceToHost);
        double us = (double)h / 1e3 / iters;
        MPI_Bcast(&us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); /* rank 0 times the round trips it starts */
        rtt_us[i] = us;
    }
    MPI_Allreduce(MPI_IN_PLACE, &st, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (st && !why[0]) snprintf(why, why_len, "NVSHMEM: failed on the other rank");
    if (stream) cudaStreamDestroy(stream);
    if (ns) cudaFree(ns);
    if (sig) nvshmem_free(sig);
    if (src) nvshmem_free(src);
    if (dst) nvshmem_free(dst);
    nvshmem_finalize();
    return st;
}
