/* Kyoyu device API: put, get and signals from inside CUDA kernels, on Kyoyu GPU segments (NVSHMEM's device
 * calls, on comm's segments).
 *
 * A kernel gets a ky_dev_seg_t (by value, as a kernel argument) that ky_dev_seg fills on the host from a GPU
 * segment: for every rank, the address at which this GPU reaches that rank's piece (its own piece; same-node
 * peers' pieces that comm mapped by CUDA IPC, over NVLink or PCIe peer access; ranks sharing this GPU), or
 * NULL. The device calls are loads and stores through those addresses, run by the calling thread.
 *
 * Peers this GPU cannot address (other nodes, KY_NODE_SPLIT=rank; all peers with ky_dev_seg_proxied) go
 * through the segment's host proxy (src/comm/dev_proxy.c, NVSHMEM's design): the kernel queues a request on
 * a ring in pinned host memory mapped into the GPU, a host thread serves it with comm's ky_put / ky_get and
 * delivers a signal as an atomic on the target's GPU, then publishes its completion, which the kernel polls.
 * Kernels whose requests go through the proxy must run on a non-blocking stream (cudaStreamNonBlocking):
 * comm's copies wait for the legacy default stream, so a kernel there waiting for them never ends.
 *
 * STATUS: tests/device/test_device.cu passes on one H200 (ranks sharing it, with and without CUDA MPS), on 4
 * H200s and on 4 H100s (2-4 ranks, direct, proxy over MPI and over IPC). bench/device_bench.cu's 8-byte
 * put_signal round trip: 2.19 us between two ranks on one H200 under MPS (NVSHMEM 2.58), 4.45 us between
 * NVLink peers (NVSHMEM 4.30); ranks sharing a GPU without MPS take turns on it in time slices
 * (docs/shmem.md, "Device API").
 *
 * Ordering: ky_dev_put is visible at the target after ky_dev_quiet (a system-scope fence) or through a
 * signal; ky_dev_put_signal writes the data, fences, then stores the 8-byte signal, so a target that sees the
 * signal (ky_dev_wait_until) sees the data. Through the proxy the data put completes before the signal is
 * sent, and the blocking calls return once their request is complete; the _nbi calls only queue it, and
 * ky_dev_quiet(seg) waits for every request this rank's kernels queued on the segment. */
#ifndef KYOYU_DEVICE_CUH
#define KYOYU_DEVICE_CUH

#include <stddef.h>
#include <stdint.h>

#include "kyoyu/comm.h"
#include "kyoyu/export.h"
#include "kyoyu/status.h"

KY_EXTERN_C_BEGIN

#define KY_DEV_MAX_RANKS 64

enum { KY_DEV_OP_PUT = 1, KY_DEV_OP_GET = 2, KY_DEV_OP_PUT_SIGNAL = 3 };

/* One request to the host proxy (64 bytes, in pinned host memory mapped into the GPU). A kernel fills the
 * fields, fences, then stores seq = its ticket + 1; the proxy serves the slot once it sees that seq. */
typedef struct {
    volatile uint64_t seq;
    uint32_t op;    /* KY_DEV_OP_* */
    int32_t rank;   /* target */
    uint64_t off;   /* in the target's piece */
    uint64_t n;     /* bytes */
    uint64_t local; /* the caller's GPU address: source of a put, destination of a get */
    uint64_t sig_off, value;
    uint32_t add, pad;
} ky_dev_req_t;

/* What a kernel needs of the proxy of one segment. head: tickets taken (GPU memory, kernels' atomics);
 * done: requests the proxy has completed, in ticket order (host memory; slot t % cap is free again once
 * done > t); status: the first error of a proxied request (KY_OK while none). head == NULL: no proxy (every
 * peer is reachable by loads and stores). */
typedef struct {
    unsigned long long *head;
    ky_dev_req_t *req;
    volatile unsigned long long *done;
    volatile int *status;
    unsigned long long cap;
    unsigned long long timeout_ns; /* KY_TIMEOUT: longest wait for a free slot or a completion */
} ky_dev_ring_t;

typedef struct {
    void *base[KY_DEV_MAX_RANKS];  /* rank r's piece as this GPU addresses it, NULL: not reachable here */
    size_t size[KY_DEV_MAX_RANKS]; /* rank r's piece size */
    /* 1: rank r's piece is on this rank's own physical GPU (the caller's, and ranks sharing the GPU), so a
     * signal to it needs only GPU-scope ordering (ky_dev_signal_release) */
    unsigned char same_gpu[KY_DEV_MAX_RANKS];
    int rank, nranks;
    ky_dev_ring_t ring; /* the host proxy that serves the ranks with base[r] == NULL */
} ky_dev_seg_t;

/* Host: the device view of a GPU segment for kernels of this rank. KY_ERR_ARG for a host segment, or more
 * than KY_DEV_MAX_RANKS ranks. Where some peer is not reachable from this GPU, the first call starts the
 * segment's host proxy (its ring lives until ky_seg_destroy). */
KY_API int ky_dev_seg(ky_seg_t seg, ky_dev_seg_t *out);
/* The same view with every peer served by the host proxy, same-node ones too (the caller's own piece stays
 * direct): to measure the proxy, or test it, on one node. */
KY_API int ky_dev_seg_proxied(ky_seg_t seg, ky_dev_seg_t *out);

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
    if (off > s.size[rank] || n > s.size[rank] - off) return KY_ERR_RANGE;
    return KY_ERR_UNSUPPORTED; /* (in range, not mapped, and no proxy) */
}

/* Copy n bytes by the calling thread (the ranges do not overlap, as for memcpy): in the widest accesses both
 * addresses allow (16, 8, 4, 2 bytes), so an aligned 8-byte put is one load and one store (a byte loop made
 * it eight of each). The 16-byte accesses go 8 loads before their 8 stores: the compiler cannot tell the
 * ranges apart, so load by load each store would wait for its load's latency before the next load issues. */
__device__ inline void ky_dev_copy(char *dst, const char *src, size_t n)
{
    size_t i = 0;
    unsigned a = (unsigned)(((uintptr_t)dst | (uintptr_t)src) & 15);
    if (a == 0) {
        for (; i + 128 <= n; i += 128) {
            uint4 v[8];
#pragma unroll
            for (int k = 0; k < 8; k++) v[k] = ((const uint4 *)(src + i))[k];
#pragma unroll
            for (int k = 0; k < 8; k++) ((uint4 *)(dst + i))[k] = v[k];
        }
        for (; i + 16 <= n; i += 16) *(uint4 *)(dst + i) = *(const uint4 *)(src + i);
    }
    if ((a & 7) == 0)
        for (; i + 8 <= n; i += 8) *(unsigned long long *)(dst + i) = *(const unsigned long long *)(src + i);
    if ((a & 3) == 0)
        for (; i + 4 <= n; i += 4) *(uint32_t *)(dst + i) = *(const uint32_t *)(src + i);
    if ((a & 1) == 0)
        for (; i + 2 <= n; i += 2) *(uint16_t *)(dst + i) = *(const uint16_t *)(src + i);
    for (; i < n; i++) dst[i] = src[i];
}

/* ---- the host proxy (peers with base[rank] == NULL) ---------------------------------------------- */

__device__ inline unsigned long long ky_dev_now_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* A ticket whose slot is free; KY_ERR_TIMEOUT when the ring stays full for KY_TIMEOUT. A ticket is taken
 * only once its slot is free (compare and swap), so a caller that gives up leaves no hole the proxy would
 * wait on for ever. */
__device__ inline int ky_dev_ring_take(const ky_dev_ring_t &q, unsigned long long *ticket)
{
    unsigned long long t0 = 0;
    for (;;) {
        unsigned long long h = *(volatile unsigned long long *)q.head, d = *q.done;
        if ((long long)(h - d) < (long long)q.cap) {
            if (atomicCAS(q.head, h, h + 1) == h) {
                *ticket = h;
                return KY_OK;
            }
            continue;
        }
        unsigned long long now = ky_dev_now_ns();
        if (!t0)
            t0 = now;
        else if (now - t0 > q.timeout_ns)
            return KY_ERR_TIMEOUT;
    }
}

/* Wait until the proxy has completed every ticket below `upto`; its first error, or KY_ERR_TIMEOUT. */
__device__ inline int ky_dev_ring_wait(const ky_dev_ring_t &q, unsigned long long upto)
{
    unsigned long long t0 = 0;
    while (*q.done < upto) {
        unsigned long long now = ky_dev_now_ns();
        if (!t0)
            t0 = now;
        else if (now - t0 > q.timeout_ns)
            return KY_ERR_TIMEOUT;
    }
    __threadfence_system(); /* what the proxy wrote (a get's data) is read after its completion */
    return *q.status;
}

/* Queue one request; *ticket gets its ticket. KY_ERR_UNSUPPORTED without a proxy. */
__device__ inline int ky_dev_ring_post(const ky_dev_seg_t &s, uint32_t op, int rank, size_t off,
                                       const void *local, size_t n, size_t sig_off, uint64_t value, int add,
                                       unsigned long long *ticket)
{
    const ky_dev_ring_t &q = s.ring;
    if (!q.head) return KY_ERR_UNSUPPORTED;
    int st = ky_dev_ring_take(q, ticket);
    if (st != KY_OK) return st;
    volatile ky_dev_req_t *r = q.req + *ticket % q.cap;
    r->op = op;
    r->rank = rank;
    r->off = off;
    r->n = n;
    r->local = (uint64_t)(uintptr_t)local;
    r->sig_off = sig_off;
    r->value = value;
    r->add = (uint32_t)add;
    __threadfence_system(); /* the fields, and the data of a put, before the proxy may see seq */
    r->seq = *ticket + 1;
    return KY_OK;
}

/* Checks shared by the paths: rank and range, then whether the proxy must carry it. */
__device__ inline int ky_dev_route(const ky_dev_seg_t &s, int rank, size_t off, size_t n, char **addr)
{
    *addr = ky_dev_addr(s, rank, off, n);
    if (*addr) return KY_OK;
    int st = ky_dev_status(s, rank, off, n);
    if (st == KY_ERR_UNSUPPORTED && s.ring.head) return 1; /* proxied */
    return st;
}

/* ---- the calls ---------------------------------------------------------------------------------- */

/* A direct peer is written now (KY_OK); otherwise the put is posted to the proxy as ticket *t (KY_OK too,
 * *t set) or fails. *t stays ~0 for a direct write. */
__device__ inline int ky_dev_put_posted(const ky_dev_seg_t &s, int rank, size_t off, const void *src,
                                        size_t n, unsigned long long *t)
{
    char *d;
    *t = ~0ull;
    int st = ky_dev_route(s, rank, off, n, &d);
    if (st == KY_OK) {
        ky_dev_copy(d, (const char *)src, n);
        return KY_OK;
    }
    if (st != 1) return st;
    return ky_dev_ring_post(s, KY_DEV_OP_PUT, rank, off, src, n, 0, 0, 0, t);
}

/* n bytes of the caller's (GPU) memory to (rank, off). src may be reused on return. Through the proxy the
 * call waits until the data is in the target's memory. */
__device__ inline int ky_dev_put(const ky_dev_seg_t &s, int rank, size_t off, const void *src, size_t n)
{
    unsigned long long t;
    int st = ky_dev_put_posted(s, rank, off, src, n, &t);
    return st != KY_OK || t == ~0ull ? st : ky_dev_ring_wait(s.ring, t + 1);
}

/* The same without waiting for the proxy: src must stay unchanged until ky_dev_quiet(s). Direct peers are
 * written before the call returns, as by ky_dev_put. */
__device__ inline int ky_dev_put_nbi(const ky_dev_seg_t &s, int rank, size_t off, const void *src, size_t n)
{
    unsigned long long t;
    return ky_dev_put_posted(s, rank, off, src, n, &t);
}

/* n bytes of (rank, off) to the caller's memory (GPU memory when the proxy carries it). Through the proxy
 * the call waits for the data; read dst with fresh loads (it was written by a copy engine). */
__device__ inline int ky_dev_get(void *dst, const ky_dev_seg_t &s, int rank, size_t off, size_t n)
{
    char *p;
    int st = ky_dev_route(s, rank, off, n, &p);
    if (st == KY_OK) {
        ky_dev_copy((char *)dst, p, n);
        return KY_OK;
    }
    if (st != 1) return st;
    unsigned long long t;
    st = ky_dev_ring_post(s, KY_DEV_OP_GET, rank, off, dst, n, 0, 0, 0, &t);
    return st != KY_OK ? st : ky_dev_ring_wait(s.ring, t + 1);
}

/* Every put of this thread to a directly reached peer is visible (to every GPU and the host) before any
 * later store. */
__device__ inline void ky_dev_quiet(void)
{
    __threadfence_system();
}

/* The same, and every request this rank's kernels have queued on s's proxy so far is complete (puts in the
 * target's memory, signals delivered). Returns the first error of a proxied request, or KY_ERR_TIMEOUT. */
__device__ inline int ky_dev_quiet(const ky_dev_seg_t &s)
{
    __threadfence_system();
    if (!s.ring.head) return KY_OK;
    return ky_dev_ring_wait(s.ring, *(volatile unsigned long long *)s.ring.head);
}

/* The signal after the data: a store (set) or reduction (add) with release semantics, which orders this
 * thread's earlier stores (the data, in any GPU's memory) before it: what a full system fence followed by an
 * atomic (whose answer has to come back over NVLink) did, without waiting for either.
 *
 * The scope is the narrowest that holds the reader. In the PTX memory model a release synchronizes with an
 * acquire that reads its value only if the two are morally strong: each strong, with a scope that includes
 * the other's thread. A reader on another GPU is outside the writer's .gpu scope, so there the release is
 * .sys: a .gpu release (MEMBAR.GPU, which does not wait for writes to a peer's memory to be acknowledged)
 * would be a data race by the model, and in practice lets the signal overtake the data on another NVLink.
 * st.release.sys and fence.release.sys (PTX 8.6) + st.relaxed.sys both compile to MEMBAR.ALL.SYS + a strong
 * store on sm_90 (nvcc 13.0; fence.acq_rel.sys adds an L1 invalidation), which waits for every outstanding
 * store's acknowledgement (~1.8 us on H100 even with none outstanding); device_bench's raw_data_flag_pp and
 * raw_data_fence_pp time the two spellings with no library around them. Where the signal's word is on the
 * writer's own GPU (gpu_scope: the caller's piece, or a rank sharing this GPU, under MPS or not) every reader
 * of it is a thread of this GPU: the .gpu release (MEMBAR.GPU) and the reader's .sys acquire are morally
 * strong, and the model then orders every earlier store of the writer, to whatever memory, before what the
 * reader does after its acquire (raw_data_flag_gpu_pp times it). */
__device__ inline void ky_dev_signal_release(unsigned long long *sig, unsigned long long v, int add,
                                             int gpu_scope = 0)
{
#if __CUDA_ARCH__ >= 700
    if (gpu_scope) {
        if (add)
            asm volatile("red.release.gpu.add.u64 [%0], %1;" ::"l"(sig), "l"(v) : "memory");
        else
            asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(sig), "l"(v) : "memory");
    } else if (add)
        asm volatile("red.release.sys.add.u64 [%0], %1;" ::"l"(sig), "l"(v) : "memory");
    else
        asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(sig), "l"(v) : "memory");
#else
    (void)gpu_scope;
    __threadfence_system();
    if (add)
        atomicAdd(sig, v);
    else
        atomicExch(sig, v);
#endif
}

/* A load with acquire semantics at system scope: what was stored before the matching release reads after. */
__device__ inline unsigned long long ky_dev_load_acquire(const volatile unsigned long long *p)
{
#if __CUDA_ARCH__ >= 700
    unsigned long long v;
    asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#else
    unsigned long long v = *p;
    __threadfence_system();
    return v;
#endif
}

/* Put, fence, then the 8-byte signal at (rank, sig_off): set (add = 0) or add. Through the proxy: the data
 * put, then the signal as an atomic on the target's GPU, and the call returns once both are done. */
__device__ inline int ky_dev_put_signal_impl(const ky_dev_seg_t &s, int rank, size_t off, const void *src,
                                             size_t n, size_t sig_off, uint64_t value, int add, int wait)
{
    if (sig_off & 7) return KY_ERR_RANGE;
    char *d, *sigp;
    int st = ky_dev_route(s, rank, off, n, &d);
    if (st == KY_OK) {
        if (ky_dev_route(s, rank, sig_off, 8, &sigp) != KY_OK) return KY_ERR_RANGE;
        ky_dev_copy(d, (const char *)src, n);
        ky_dev_signal_release((unsigned long long *)sigp, (unsigned long long)value, add, s.same_gpu[rank]);
        return KY_OK;
    }
    if (st != 1) return st;
    if (ky_dev_route(s, rank, sig_off, 8, &sigp) != 1) return KY_ERR_RANGE;
    unsigned long long t;
    st = ky_dev_ring_post(s, KY_DEV_OP_PUT_SIGNAL, rank, off, src, n, sig_off, value, add, &t);
    if (st != KY_OK || !wait) return st;
    return ky_dev_ring_wait(s.ring, t + 1);
}

__device__ inline int ky_dev_put_signal(const ky_dev_seg_t &s, int rank, size_t off, const void *src,
                                        size_t n, size_t sig_off, uint64_t value, int add)
{
    return ky_dev_put_signal_impl(s, rank, off, src, n, sig_off, value, add, 1);
}

/* Without waiting for the proxy (src unchanged until ky_dev_quiet(s)); NVSHMEM's putmem_signal_nbi. */
__device__ inline int ky_dev_put_signal_nbi(const ky_dev_seg_t &s, int rank, size_t off, const void *src,
                                            size_t n, size_t sig_off, uint64_t value, int add)
{
    return ky_dev_put_signal_impl(s, rank, off, src, n, sig_off, value, add, 0);
}

/* Spin until the 8-byte word at sig_off of this rank's own piece compares with value; returns it. */
__device__ inline uint64_t ky_dev_wait_until(const ky_dev_seg_t &s, size_t sig_off, int cmp, uint64_t value)
{
    volatile unsigned long long *w = (volatile unsigned long long *)ky_dev_addr(s, s.rank, sig_off, 8);
    if (!w) return 0;
    for (;;) {
        uint64_t v = ky_dev_load_acquire(w);
        bool ok = cmp == KY_DEV_CMP_EQ   ? v == value
                  : cmp == KY_DEV_CMP_NE ? v != value
                  : cmp == KY_DEV_CMP_GT ? v > value
                  : cmp == KY_DEV_CMP_LE ? v <= value
                  : cmp == KY_DEV_CMP_LT ? v < value
                                         : v >= value;
        if (ok) return v; /* acquire: the data the signal stands for is read after it */
    }
}

#endif /* __CUDACC__ */

#endif
