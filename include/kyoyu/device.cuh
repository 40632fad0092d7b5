/* Kyoyu device API: put, get and signals from inside CUDA kernels, on Kyoyu GPU segments (NVSHMEM's device
 * calls, on comm's segments).
 *
 * A kernel gets a ky_dev_seg_t (by value, as a kernel argument) that ky_dev_seg fills on the host from a GPU
 * segment: for every rank, the address at which this GPU reaches that rank's piece (its own piece; same-node
 * peers' pieces that comm mapped by CUDA IPC, over NVLink or PCIe peer access; ranks sharing this GPU), or
 * NULL. The device calls are loads and stores through those addresses, run by the calling thread.
 *
 * STATUS: written and compiled with nvcc; NOT YET RUN ON A GPU (this session had no GPU time): do not rely
 * on it until its GPU tests (tests/gpu/test_device.cu) have passed on the GPU machine. Peers this GPU cannot
 * reach (other nodes, KY_NODE_SPLIT=rank) are not served yet: the calls return KY_ERR_UNSUPPORTED for them
 * (the host proxy thread that would carry them through comm, NVSHMEM's design, is not written).
 *
 * Ordering: ky_dev_put is visible at the target after ky_dev_quiet (a system-scope fence) or through a
 * signal; ky_dev_put_signal writes the data, fences, then stores the 8-byte signal, so a target that sees the
 * signal (ky_dev_wait_until) sees the data. */
#ifndef KYOYU_DEVICE_CUH
#define KYOYU_DEVICE_CUH

#include <stddef.h>
#include <stdint.h>

#include "kyoyu/comm.h"
#include "kyoyu/export.h"
#include "kyoyu/status.h"

KY_EXTERN_C_BEGIN

#define KY_DEV_MAX_RANKS 64

typedef struct {
    void *base[KY_DEV_MAX_RANKS];  /* rank r's piece as this GPU addresses it, NULL: not reachable here */
    size_t size[KY_DEV_MAX_RANKS]; /* rank r's piece size */
    int rank, nranks;
} ky_dev_seg_t;

/* Host: the device view of a GPU segment for kernels of this rank. KY_ERR_ARG for a host segment, or more
 * than KY_DEV_MAX_RANKS ranks. */
KY_API int ky_dev_seg(ky_seg_t seg, ky_dev_seg_t *out);

KY_EXTERN_C_END

#ifdef __CUDACC__

enum {
    KY_DEV_CMP_EQ = 0,
    KY_DEV_CMP_NE = 1,
    KY_DEV_CMP_GT = 2,
    KY_DEV_CMP_LE = 3,
    KY_DEV_CMP_LT = 4,
    KY_DEV_CMP_GE = 5
};

/* The address of [off, off + n) of rank's piece, or NULL (not reachable, or out of range). */
__device__ inline char *ky_dev_addr(const ky_dev_seg_t &s, int rank, size_t off, size_t n)
{
    if (rank < 0 || rank >= s.nranks || rank >= KY_DEV_MAX_RANKS || !s.base[rank]) return NULL;
    if (off > s.size[rank] || n > s.size[rank] - off) return NULL;
    return (char *)s.base[rank] + off;
}

__device__ inline int ky_dev_status(const ky_dev_seg_t &s, int rank, size_t off, size_t n)
{
    if (rank < 0 || rank >= s.nranks || rank >= KY_DEV_MAX_RANKS) return KY_ERR_ARG;
    if (!s.base[rank]) return KY_ERR_UNSUPPORTED;
    return KY_ERR_RANGE; /* (called only when ky_dev_addr gave NULL) */
}

/* Copy n bytes by the calling thread: 16 bytes at a time where both sides allow it. */
__device__ inline void ky_dev_copy(char *dst, const char *src, size_t n)
{
    size_t i = 0;
    if ((((uintptr_t)dst | (uintptr_t)src) & 15) == 0)
        for (; i + 16 <= n; i += 16) *(uint4 *)(dst + i) = *(const uint4 *)(src + i);
    for (; i < n; i++) dst[i] = src[i];
}

/* n bytes of the caller's (GPU) memory to (rank, off). */
__device__ inline int ky_dev_put(const ky_dev_seg_t &s, int rank, size_t off, const void *src, size_t n)
{
    char *d = ky_dev_addr(s, rank, off, n);
    if (!d) return ky_dev_status(s, rank, off, n);
    ky_dev_copy(d, (const char *)src, n);
    return KY_OK;
}

/* n bytes of (rank, off) to the caller's memory. */
__device__ inline int ky_dev_get(void *dst, const ky_dev_seg_t &s, int rank, size_t off, size_t n)
{
    const char *p = ky_dev_addr(s, rank, off, n);
    if (!p) return ky_dev_status(s, rank, off, n);
    ky_dev_copy((char *)dst, p, n);
    return KY_OK;
}

/* Every put of this thread is visible (to every GPU and the host) before any later store. */
__device__ inline void ky_dev_quiet(void)
{
    __threadfence_system();
}

/* Put, fence, then the 8-byte signal at (rank, sig_off): set (add = 0) or add. */
__device__ inline int ky_dev_put_signal(const ky_dev_seg_t &s, int rank, size_t off, const void *src,
                                        size_t n, size_t sig_off, uint64_t value, int add)
{
    int st = ky_dev_put(s, rank, off, src, n);
    if (st != KY_OK) return st;
    unsigned long long *sig = (unsigned long long *)ky_dev_addr(s, rank, sig_off, 8);
    if (!sig || (sig_off & 7)) return KY_ERR_RANGE;
    __threadfence_system();
    if (add)
        atomicAdd(sig, (unsigned long long)value);
    else
        atomicExch(sig, (unsigned long long)value);
    return KY_OK;
}

/* Spin until the 8-byte word at sig_off of this rank's own piece compares with value; returns it. */
__device__ inline uint64_t ky_dev_wait_until(const ky_dev_seg_t &s, size_t sig_off, int cmp, uint64_t value)
{
    volatile unsigned long long *w = (volatile unsigned long long *)ky_dev_addr(s, s.rank, sig_off, 8);
    if (!w) return 0;
    for (;;) {
        uint64_t v = *w;
        bool ok = cmp == KY_DEV_CMP_EQ   ? v == value
                  : cmp == KY_DEV_CMP_NE ? v != value
                  : cmp == KY_DEV_CMP_GT ? v > value
                  : cmp == KY_DEV_CMP_LE ? v <= value
                  : cmp == KY_DEV_CMP_LT ? v < value
                                         : v >= value;
        if (ok) {
            __threadfence_system(); /* the data the signal stands for is read after it */
            return v;
        }
    }
}

#endif /* __CUDACC__ */

#endif
