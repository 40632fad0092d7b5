/* NVLink collective kernels (nvl.h explains flags, epochs, slots and the LL protocol). Six kernels:
 *   LL allreduce        (small) store my vector into every member's LL area, reduce what arrives locally
 *   LL allgather        (small) store my block into every member's LL area, copy what arrives to dst
 *   one-shot allreduce  copy my range into my slot, barrier, reduce every member's slot in member order
 *   two-shot allreduce  push chunk c of my input into member c's scratch, barrier, reduce the p copies of
 *                       chunk `me` in my scratch (reduce-scatter), barrier, pull chunk c from member c
 *                       (allgather), closing barrier
 *   allgather           copy my block's range into my slot, barrier, pull every member's range
 *   bcast               the root copies into its slot, barrier, the others pull it
 * Loads and stores are 16-byte vectors where both sides are 16-byte aligned (block ranges start at
 * multiples of 16, scratch at 256), bytes at the unaligned tails; each thread keeps U vectors in flight
 * per pass, because NVLink loads are latency bound (bytes in flight = bandwidth x ~2 us). Every member
 * reduces in member order 0..p-1, so all members get bitwise the same result. */
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "coll/gpu/nvl.h"
#include "kyoyu/coll.h"
#include "kyoyu/status.h"
#include "runtime/config.h"
#include "runtime/log.h"
}

namespace {

__device__ __forceinline__ uint32_t ld_acquire(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_release(uint32_t *p, uint32_t v)
{
    asm volatile("st.release.sys.global.u32 [%1], %0;" ::"r"(v), "l"(p) : "memory");
}

__device__ __forceinline__ unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ uint32_t *flags_of(char *buf)
{
    return reinterpret_cast<uint32_t *>(buf);
}
__device__ __forceinline__ uint32_t *epoch_of(const kyi_nvl_args_t &a)
{
    return reinterpret_cast<uint32_t *>(a.buf[a.me] + KYI_NVL_EPOCHS) + blockIdx.x;
}

/* Block-wide barrier among the members for this block index: thread t < p stores e into member t's
 * flags[b][me] and waits until its own flags[b][t] reached e. A wait past the timeout names the member
 * in the host-mapped error word and traps (the host reports it and ends the job). */
__device__ void barrier(const kyi_nvl_args_t &a, uint32_t e)
{
    __syncthreads();
    int t = threadIdx.x;
    if (t < a.p) {
        st_release(flags_of(a.buf[t]) + blockIdx.x * KYI_NVL_MAXP + a.me, e);
        const uint32_t *mine = flags_of(a.buf[a.me]) + blockIdx.x * KYI_NVL_MAXP + t;
        if ((int32_t)(ld_acquire(mine) - e) < 0) {
            unsigned long long t0 = now_ns();
            unsigned spins = 0;
            while ((int32_t)(ld_acquire(mine) - e) < 0) {
                if ((++spins & 1023u) == 0 && now_ns() - t0 > a.timeout_ns) {
                    if (a.err) *(volatile int *)a.err = t + 1;
                    __threadfence_system();
                    __trap();
                }
            }
        }
    }
    __syncthreads();
}

/* [lo, hi) of `total` bytes for this block: ranges are multiples of 16 bytes. */
__device__ __forceinline__ void block_range(size_t total, int nb, size_t *lo, size_t *hi)
{
    size_t per = (total + nb - 1) / nb;
    per = (per + 15) & ~(size_t)15;
    size_t l = per * blockIdx.x, h = l + per;
    *lo = l < total ? l : total;
    *hi = h < total ? h : total;
}

constexpr int U = 8; /* 16-byte vectors in flight per thread and pass */

__device__ void copy_range(char *dst, const char *src, size_t len)
{
    size_t i = 0;
    if (((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 15) == 0) {
        size_t nv = len / 16;
        const uint4 *s = reinterpret_cast<const uint4 *>(src);
        uint4 *d = reinterpret_cast<uint4 *>(dst);
        size_t step = (size_t)blockDim.x * U, k = threadIdx.x;
        for (; k + (U - 1) * blockDim.x < nv; k += step) {
            uint4 v[U];
#pragma unroll
            for (int q = 0; q < U; q++) v[q] = s[k + q * blockDim.x];
#pragma unroll
            for (int q = 0; q < U; q++) d[k + q * blockDim.x] = v[q];
        }
        for (; k < nv; k += blockDim.x) d[k] = s[k];
        i = nv * 16;
    } else if (((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 3) == 0) {
        size_t nw = len / 4;
        const uint32_t *s = reinterpret_cast<const uint32_t *>(src);
        uint32_t *d = reinterpret_cast<uint32_t *>(dst);
        for (size_t k = threadIdx.x; k < nw; k += blockDim.x) d[k] = s[k];
        i = nw * 4;
    }
    for (size_t k = i + threadIdx.x; k < len; k += blockDim.x) dst[k] = src[k];
}

template <typename T, int OP>
__device__ __forceinline__ T rop(T acc, T x)
{
    if (OP == KY_SUM) return acc + x;
    if (OP == KY_PROD) return acc * x;
    if (OP == KY_MIN) return x < acc ? x : acc;
    return x > acc ? x : acc;
}

/* out1 (and out2 if not NULL)[lo, hi) = in[0] op in[1] op ... op in[p-1], each in[j] at offset lo. */
template <typename T, int OP>
__device__ void reduce_range(const char *const *in, int p, char *out1, char *out2, size_t lo, size_t hi)
{
    size_t len = hi - lo;
    uintptr_t al =
        reinterpret_cast<uintptr_t>(out1 + lo) | (out2 ? reinterpret_cast<uintptr_t>(out2 + lo) : 0);
    for (int j = 0; j < p; j++) al |= reinterpret_cast<uintptr_t>(in[j] + lo);
    size_t done = 0;
    if ((al & 15) == 0) {
        constexpr int V = 16 / sizeof(T);
        size_t nv = len / 16;
        union vec {
            uint4 u;
            T v[V];
        };
        size_t step = (size_t)blockDim.x * U, k = threadIdx.x;
        for (; k < nv; k += step) {
            /* U vectors of member j in flight at once (the last pass may hold fewer) */
            int nq = k + (U - 1) * blockDim.x < nv ? U : (int)((nv - k + blockDim.x - 1) / blockDim.x);
            vec acc[U], x[U];
#pragma unroll
            for (int q = 0; q < U; q++)
                if (q < nq) acc[q].u = reinterpret_cast<const uint4 *>(in[0] + lo)[k + q * blockDim.x];
            for (int j = 1; j < p; j++) {
#pragma unroll
                for (int q = 0; q < U; q++)
                    if (q < nq) x[q].u = reinterpret_cast<const uint4 *>(in[j] + lo)[k + q * blockDim.x];
#pragma unroll
                for (int q = 0; q < U; q++)
#pragma unroll
                    for (int w = 0; w < V; w++) acc[q].v[w] = rop<T, OP>(acc[q].v[w], x[q].v[w]);
            }
#pragma unroll
            for (int q = 0; q < U; q++)
                if (q < nq) {
                    reinterpret_cast<uint4 *>(out1 + lo)[k + q * blockDim.x] = acc[q].u;
                    if (out2) reinterpret_cast<uint4 *>(out2 + lo)[k + q * blockDim.x] = acc[q].u;
                }
        }
        done = nv * 16;
    }
    size_t ne = (len - done) / sizeof(T);
    for (size_t k = threadIdx.x; k < ne; k += blockDim.x) {
        size_t o = lo + done + k * sizeof(T);
        T acc = *reinterpret_cast<const T *>(in[0] + o);
        for (int j = 1; j < p; j++) acc = rop<T, OP>(acc, *reinterpret_cast<const T *>(in[j] + o));
        *reinterpret_cast<T *>(out1 + o) = acc;
        if (out2) *reinterpret_cast<T *>(out2 + o) = acc;
    }
}

template <typename T, int OP>
__global__ void __launch_bounds__(KYI_NVL_MAXT) k_oneshot(kyi_nvl_args_t a)
{
    uint32_t *ep = epoch_of(a);
    uint32_t e = *reinterpret_cast<volatile uint32_t *>(ep) + 1;
    size_t so = a.scr + (size_t)(e & 1) * a.slot, lo, hi;
    block_range(a.bytes, a.nblocks, &lo, &hi);
    if (lo < hi) copy_range(a.buf[a.me] + so + lo, a.src + lo, hi - lo);
    barrier(a, e);
    if (a.dst && lo < hi) {
        const char *in[KYI_NVL_MAXP];
        for (int j = 0; j < a.p; j++) in[j] = a.buf[j] + so;
        reduce_range<T, OP>(in, a.p, a.dst, nullptr, lo, hi);
    }
    if (a.end) barrier(a, ++e);
    if (threadIdx.x == 0) *ep = e;
}

template <typename T, int OP>
__global__ void __launch_bounds__(KYI_NVL_MAXT) k_twoshot(kyi_nvl_args_t a)
{
    uint32_t *ep = epoch_of(a);
    uint32_t e = *reinterpret_cast<volatile uint32_t *>(ep);
    size_t cs = (a.bytes + a.p - 1) / a.p;
    cs = (cs + 15) & ~(size_t)15;
    size_t lo, hi;
    block_range(cs, a.nblocks, &lo, &hi);
    char *mine = a.buf[a.me] + a.scr;
    /* push: this block's part of chunk c into member c's slot `me` (remote stores, which NVLink carries
     * better than loads, and no local copy of the whole input: 128 MiB on 4 H200s took 713 us with a
     * copy-in and pulls). Member c's scratch then holds chunk c of every member, slot j at j * cs. */
    for (int k = 1; k <= a.p; k++) {
        int c = (a.me + k) % a.p; /* my own chunk last; the others start at different members */
        size_t l = c * cs + lo, h = c * cs + hi;
        if (h > a.bytes) h = a.bytes;
        if (l < h) copy_range(a.buf[c] + a.scr + a.me * cs + lo, a.src + l, h - l);
    }
    barrier(a, ++e);
    /* reduce-scatter: my chunk from every slot, local reads, into my slot `me` (in place: each element is
     * read from every slot before it is written) and my output */
    {
        size_t l = a.me * cs + lo, h = a.me * cs + hi;
        if (h > a.bytes) h = a.bytes;
        if (l < h) {
            const char *in[KYI_NVL_MAXP];
            for (int j = 0; j < a.p; j++) in[j] = mine + (size_t)j * cs;
            reduce_range<T, OP>(in, a.p, mine + a.me * cs, a.dst ? a.dst + a.me * cs : nullptr, lo,
                                lo + (h - l));
        }
    }
    barrier(a, ++e);
    /* allgather: chunk c from member c */
    if (a.dst)
        for (int k = 1; k < a.p; k++) {
            int c = (a.me + k) % a.p;
            size_t l = c * cs + lo, h = c * cs + hi;
            if (h > a.bytes) h = a.bytes;
            if (l < h) copy_range(a.dst + l, a.buf[c] + a.scr + l, h - l);
        }
    barrier(a, ++e);
    if (threadIdx.x == 0) *ep = e;
}

__global__ void __launch_bounds__(KYI_NVL_MAXT) k_allgather(kyi_nvl_args_t a)
{
    uint32_t *ep = epoch_of(a);
    uint32_t e = *reinterpret_cast<volatile uint32_t *>(ep) + 1;
    size_t so = a.scr + (size_t)(e & 1) * a.slot, lo, hi;
    block_range(a.bytes, a.nblocks, &lo, &hi);
    if (lo < hi) copy_range(a.buf[a.me] + so + lo, a.src + lo, hi - lo);
    barrier(a, e);
    if (lo < hi)
        for (int k = 0; k < a.p; k++) {
            int c = (a.me + k) % a.p;
            char *d = a.dst + (size_t)c * a.bytes + lo;
            if (c == a.me) {
                if (d != a.src + lo) copy_range(d, a.src + lo, hi - lo);
            } else {
                copy_range(d, a.buf[c] + so + lo, hi - lo);
            }
        }
    if (a.end) barrier(a, ++e);
    if (threadIdx.x == 0) *ep = e;
}

__global__ void __launch_bounds__(KYI_NVL_MAXT) k_bcast(kyi_nvl_args_t a)
{
    uint32_t *ep = epoch_of(a);
    uint32_t e = *reinterpret_cast<volatile uint32_t *>(ep) + 1;
    size_t so = a.scr + (size_t)(e & 1) * a.slot, lo, hi;
    block_range(a.bytes, a.nblocks, &lo, &hi);
    if (a.me == a.root && lo < hi) copy_range(a.buf[a.me] + so + lo, a.src + lo, hi - lo);
    barrier(a, e);
    if (a.me != a.root && a.dst && lo < hi) copy_range(a.dst + lo, a.buf[a.root] + so + lo, hi - lo);
    if (a.end) barrier(a, ++e);
    if (threadIdx.x == 0) *ep = e;
}

/* ---- LL protocol (nvl.h) ------------------------------------------------------------------------------- */

__device__ __forceinline__ void st_line(char *p, uint32_t d0, uint32_t d1, uint32_t f)
{
    asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(d0), "r"(f), "r"(d1),
                 "r"(f)
                 : "memory");
}

/* Wait until the line at p carries flag f in both halves; its two data words. */
__device__ __forceinline__ uint2 wait_line(const kyi_nvl_args_t &a, const char *p, uint32_t f, int from)
{
    uint4 v;
    unsigned long long t0 = 0;
    unsigned spins = 0;
    for (;;) {
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p)
                     : "memory");
        if (v.y == f && v.w == f) return make_uint2(v.x, v.z);
        if ((++spins & 1023u) == 0) {
            if (!t0)
                t0 = now_ns();
            else if (now_ns() - t0 > a.timeout_ns) {
                if (a.err) *(volatile int *)a.err = from + 1;
                __threadfence_system();
                __trap();
            }
        }
    }
}

/* Bytes [off, off+8) of a `len`-byte buffer as two words (zeros past the end). */
__device__ __forceinline__ uint2 load8(const char *b, size_t off, size_t len)
{
    if (off + 8 <= len && ((reinterpret_cast<uintptr_t>(b) + off) & 7) == 0)
        return *reinterpret_cast<const uint2 *>(b + off);
    union {
        uint2 u;
        char c[8];
    } x;
    x.u = make_uint2(0, 0);
    for (int i = 0; i < 8 && off + i < len; i++) x.c[i] = b[off + i];
    return x.u;
}

__device__ __forceinline__ void store8(char *b, size_t off, size_t len, uint2 v)
{
    if (off + 8 <= len && ((reinterpret_cast<uintptr_t>(b) + off) & 7) == 0) {
        *reinterpret_cast<uint2 *>(b + off) = v;
        return;
    }
    union {
        uint2 u;
        char c[8];
    } x;
    x.u = v;
    for (int i = 0; i < 8 && off + i < len; i++) b[off + i] = x.c[i];
}

/* This LL call's flag (epochs skip 0, the value of lines never written, keeping their parity) and the
 * line of sender s, unit u in member j's LL area. */
__device__ __forceinline__ uint32_t ll_begin(const kyi_nvl_args_t &a, uint32_t **ep)
{
    *ep = reinterpret_cast<uint32_t *>(a.buf[a.me] + KYI_NVL_LLEPOCHS) + blockIdx.x;
    uint32_t e = *reinterpret_cast<volatile uint32_t *>(*ep) + 1;
    return e ? e : 2;
}

__device__ __forceinline__ char *ll_line(const kyi_nvl_args_t &a, int j, uint32_t e, int s, size_t u)
{
    return a.buf[j] + KYI_NVL_HDR + ((size_t)(e & 1) * a.p + s) * 2 * a.llmax + u * 16;
}

__device__ __forceinline__ void ll_end(uint32_t *ep, uint32_t e)
{
    __syncthreads();
    if (threadIdx.x == 0) *ep = e;
}

/* This member's lines (8 payload bytes each) into every member's LL area; thread t0 of nt handles lines
 * t0, t0 + nt, ... */
__device__ __forceinline__ void ll_send(const kyi_nvl_args_t &a, uint32_t e, size_t lines, size_t t0,
                                        size_t nt)
{
    for (size_t u = t0; u < lines; u += nt) {
        uint2 d = load8(a.src, u * 8, a.bytes);
        for (int j = 0; j < a.p; j++) st_line(ll_line(a, j, e, a.me, u), d.x, d.y, e);
    }
}

/* Every member waits for every line, output or not: that is what makes rewriting the area safe (nvl.h). */
template <typename T, int OP>
__global__ void __launch_bounds__(KYI_NVL_MAXT) k_ll_allreduce(kyi_nvl_args_t a)
{
    uint32_t *ep;
    uint32_t e = ll_begin(a, &ep);
    size_t lines = (a.bytes + 7) / 8, t0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x,
           nt = (size_t)gridDim.x * blockDim.x;
    ll_send(a, e, lines, t0, nt);
    constexpr int V = 8 / sizeof(T);
    for (size_t u = t0; u < lines; u += nt) {
        union {
            uint2 u;
            T v[V];
        } acc, x;
        acc.u = wait_line(a, ll_line(a, a.me, e, 0, u), e, 0);
        for (int j = 1; j < a.p; j++) {
            x.u = wait_line(a, ll_line(a, a.me, e, j, u), e, j);
#pragma unroll
            for (int w = 0; w < V; w++) acc.v[w] = rop<T, OP>(acc.v[w], x.v[w]);
        }
        if (a.dst) store8(a.dst, u * 8, a.bytes, acc.u);
    }
    ll_end(ep, e);
}

__global__ void __launch_bounds__(KYI_NVL_MAXT) k_ll_allgather(kyi_nvl_args_t a)
{
    uint32_t *ep;
    uint32_t e = ll_begin(a, &ep);
    size_t lines = (a.bytes + 7) / 8, t0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x,
           nt = (size_t)gridDim.x * blockDim.x;
    ll_send(a, e, lines, t0, nt);
    for (size_t i = t0; i < lines * a.p; i += nt) {
        int c = (int)(i / lines);
        size_t u = i % lines;
        uint2 d = wait_line(a, ll_line(a, a.me, e, c, u), e, c);
        store8(a.dst + (size_t)c * a.bytes, u * 8, a.bytes, d);
    }
    ll_end(ep, e);
}

typedef void (*kern_t)(kyi_nvl_args_t);

template <typename T>
kern_t pick(int kind, int op, int ll)
{
    if (kind == KYI_NVL_ONESHOT && ll) {
        switch (op) {
            case KY_SUM:
                return k_ll_allreduce<T, KY_SUM>;
            case KY_PROD:
                return k_ll_allreduce<T, KY_PROD>;
            case KY_MIN:
                return k_ll_allreduce<T, KY_MIN>;
            default:
                return k_ll_allreduce<T, KY_MAX>;
        }
    }
    if (kind == KYI_NVL_ONESHOT) {
        switch (op) {
            case KY_SUM:
                return k_oneshot<T, KY_SUM>;
            case KY_PROD:
                return k_oneshot<T, KY_PROD>;
            case KY_MIN:
                return k_oneshot<T, KY_MIN>;
            default:
                return k_oneshot<T, KY_MAX>;
        }
    }
    switch (op) {
        case KY_SUM:
            return k_twoshot<T, KY_SUM>;
        case KY_PROD:
            return k_twoshot<T, KY_PROD>;
        case KY_MIN:
            return k_twoshot<T, KY_MIN>;
        default:
            return k_twoshot<T, KY_MAX>;
    }
}

kern_t kernel_for(const kyi_nvl_args_t *a)
{
    if (a->kind == KYI_NVL_ALLGATHER) return a->ll ? k_ll_allgather : k_allgather;
    if (a->kind == KYI_NVL_BCAST) return k_bcast;
    switch (a->dtype) {
        case KY_INT32:
            return pick<int32_t>(a->kind, a->op, a->ll);
        case KY_INT64:
            return pick<int64_t>(a->kind, a->op, a->ll);
        case KY_FLOAT:
            return pick<float>(a->kind, a->op, a->ll);
        default:
            return pick<double>(a->kind, a->op, a->ll);
    }
}

size_t up256(size_t n)
{
    return (n + 255) & ~(size_t)255;
}

}  // namespace

extern "C" size_t kyi_nvl_scratch(int kind, size_t bytes, int p)
{
    (void)p;
    if (kind == KYI_NVL_TWOSHOT) return up256(bytes + 16 * (size_t)KYI_NVL_MAXP);
    return 2 * up256(bytes);
}

extern "C" size_t kyi_nvl_ll_max(void)
{
    static long long llmax = -1;
    if (llmax < 0) {
        long long v = (long long)kyi_setting_size(KYI_SET_NVL_LL_MAX);
        v = v < 0 ? 0 : v > (1 << 20) ? (1 << 20) : v;
        llmax = (v + 7) & ~7LL;
    }
    return (size_t)llmax;
}

extern "C" size_t kyi_nvl_ll_area(int p)
{
    return up256(2 * (size_t)p * 2 * kyi_nvl_ll_max());
}

extern "C" void kyi_nvl_shape(kyi_nvl_args_t *a)
{
    static long maxb = -1, threads = -1;
    if (maxb < 0) {
        long b = kyi_setting_long(KYI_SET_NVL_BLOCKS), t = kyi_setting_long(KYI_SET_NVL_THREADS);
        threads = t < 64 ? 64 : t > KYI_NVL_MAXT ? KYI_NVL_MAXT : (t / 32) * 32;
        maxb = b < 1 ? 1 : b > KYI_NVL_MAXB ? KYI_NVL_MAXB : b;
    }
    a->llmax = kyi_nvl_ll_max();
    a->scr = KYI_NVL_HDR + kyi_nvl_ll_area(a->p);
    a->slot = up256(a->bytes);
    a->ll = (a->kind == KYI_NVL_ONESHOT || a->kind == KYI_NVL_ALLGATHER) && a->bytes <= a->llmax;
    if (a->ll) {
        /* every LL launch runs all KYI_NVL_LLB blocks (their epochs stay equal); one line per thread */
        size_t lines = (a->bytes + 7) / 8 * (a->kind == KYI_NVL_ALLGATHER ? (size_t)a->p : 1);
        size_t per = (lines + KYI_NVL_LLB - 1) / KYI_NVL_LLB;
        per = (per + 31) / 32 * 32;
        a->nblocks = KYI_NVL_LLB;
        a->threads = per < 32 ? 32 : per > 512 ? 512 : (int)per;
        return;
    }
    /* bytes each block moves per member: at least U vectors per thread, so small collectives are one block */
    size_t work = a->kind == KYI_NVL_TWOSHOT ? (a->bytes + a->p - 1) / a->p : a->bytes;
    size_t per_block = (size_t)threads * 16 * U;
    long nb = (long)((work + per_block - 1) / per_block);
    if (nb < 1) nb = 1;
    if (nb > maxb) nb = maxb;
    a->nblocks = (int)nb;
    a->threads = work <= 4096 ? 128 : (int)threads;
}

extern "C" int kyi_nvl_launch(const kyi_nvl_args_t *a, void *stream, const char *call)
{
    kern_t k = kernel_for(a);
    k<<<a->nblocks, a->threads, 0, (cudaStream_t)stream>>>(*a);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return kyi_fail(KY_ERR_CUDA, call, "NVLink collective kernel launch: %s", cudaGetErrorString(e));
    return KY_OK;
}
