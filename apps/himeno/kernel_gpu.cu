/* ky_himeno's GPU side: the Himeno kernel in CUDA, face packing, GPU memory and the copy-bandwidth floor.
 * The kernel is memory bound (56 bytes per point, 34 flops): threads run along k (coalesced), the 13
 * coefficient streams are read once and the 19 reads of p hit L1/L2. The block shape and the points each
 * thread takes along i are settable (--block, or measured at start-up by --tune, the default on GPUs). Built
 * with -fmad=false: the same float operations as the CPU kernel and the serial reference, so every
 * decomposition gives the same field. gosa: each thread sums ss^2 in double, warps and blocks reduce, one
 * atomicAdd per block. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "himeno.h"
#include "tb_kernel.cuh"

/* Thread-block shape and points per thread along i: hg_gpu_set_shape (ky_himeno --block, or its tuning). */
static int g_bx = 64, g_by = 4, g_bz = 2, g_ich = 1, g_vec = 0;
static int g_gosa = 1;     /* 0: --diag-nogosa, the kernel without its reduction (a measurement, not a run) */
#define HG_MAX_THREADS 512 /* the scalar kernel's largest block */
#define HG_MAX_THREADS4 256 /* the float4 kernel's: it needs about twice the registers */

static cudaStream_t g_stream; /* one stream for kernels and packing; created by hg_gpu_select */

static int cerr(cudaError_t e, const char *what, char *err, size_t len)
{
    if (e == cudaSuccess) return 0;
    snprintf(err, len, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}
#define HG_CU(call)                                   \
    do {                                              \
        if (cerr((call), #call, err, len)) return -1; \
    } while (0)

extern "C" int hg_gpu_count(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

extern "C" int hg_gpu_select(int device, char *err, size_t len)
{
    HG_CU(cudaSetDevice(device));
    /* a blocking stream: Kyoyu's copies wait for the legacy stream, ours waits for them */
    HG_CU(cudaStreamCreate(&g_stream));
    return 0;
}

extern "C" int hg_gpu_alloc(void **ptr, size_t bytes, char *err, size_t len)
{
    HG_CU(cudaMalloc(ptr, bytes));
    HG_CU(cudaMemset(*ptr, 0, bytes));
    return 0;
}

extern "C" int hg_gpu_host_alloc(void **ptr, size_t bytes, char *err, size_t len)
{
    HG_CU(cudaMallocHost(ptr, bytes));
    return 0;
}

extern "C" void hg_gpu_free(void *ptr)
{
    if (ptr) cudaFree(ptr);
}
extern "C" void hg_gpu_host_free(void *ptr)
{
    if (ptr) cudaFreeHost(ptr);
}

extern "C" int hg_gpu_copy(void *dst, const void *src, size_t bytes, char *err, size_t len)
{
    HG_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, g_stream));
    HG_CU(cudaStreamSynchronize(g_stream));
    return 0;
}

extern "C" int hg_gpu_copy_async(void *dst, const void *src, size_t bytes, char *err, size_t len)
{
    HG_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, g_stream));
    return 0;
}

extern "C" int hg_gpu_sync(char *err, size_t len)
{
    HG_CU(cudaStreamSynchronize(g_stream));
    return 0;
}

struct hg_dev_block {
    int ub0, ue0, ub1, ue1, ub2, ue2, ich;
    int kb; /* first k of the threads: ub2 rounded down to 32 (0 for a whole block), so warps stay on lines */
    size_t v, si, sj;
};

/* The block's threads' sums, added to ring[slot] by thread 0 (one atomic per block). gosa lives in a ring of
 * two doubles: the kernel of iteration n adds into ring[n & 1] and block 0 zeroes ring[(n + 1) & 1] for
 * the next, so a chain of iterations needs no memset (a launch of its own, which would also break the
 * kernel-to-kernel chain that Programmatic Dependent Launch overlaps). ring[n & 1] was zeroed by kernel n - 1
 * (or hg_gpu_gosa_reset), which finished before this one's griddepcontrol.wait returned. */
__device__ void hg_block_sum(double acc, double *ring, int slot)
{
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    __shared__ double part[HG_MAX_THREADS / 32];
    const int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    const int nw = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
    if ((t & 31) == 0) part[t >> 5] = acc;
    __syncthreads();
    if (t == 0) {
        double s = 0.0;
        for (int w = 0; w < nw; w++) s += part[w];
        if (s != 0.0) atomicAdd(ring + slot, s);
        if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) ring[slot ^ 1] = 0.0;
    }
}

/* Programmatic Dependent Launch (sm_90): a kernel launched with the attribute may start while the previous
 * kernel of the stream finishes its last wave; it loads what the previous kernel does not write (the 13
 * coefficient streams, 13 of the 14 floats a point moves) and then waits for that kernel's completion and
 * memory (griddepcontrol.wait) before it reads p or writes q. Each block lets the next kernel launch as soon
 * as it runs (launch_dependents): the next kernel's blocks then take the SMs the last wave frees. Without the
 * attribute both instructions do nothing. */
__device__ __forceinline__ void hg_pdl_launch_next(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void hg_pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* rev: the blocks take the i planes in reverse order. Iterations that alternate the direction start where the
 * previous one ended, on planes still in L2 (what a grid smaller than a few L2s gains; the HBM floor assumes
 * none of it). */
__device__ __forceinline__ int hg_bz(int rev)
{
    return rev ? (int)(gridDim.z - 1 - blockIdx.z) : (int)blockIdx.z;
}

/* Thread (x, y, z) of a block updates k = x, j = y and i = z, z + bz, ... (ich points along i). Threads
 * start at k = 0 (the ghost, idle) so that warps match the rows' 128-byte lines. */
template <bool GOSA>
__global__ void __launch_bounds__(HG_MAX_THREADS)
    hg_jacobi_kernel(hg_dev_block g, const float *__restrict__ P, float *__restrict__ Q,
                     const float *__restrict__ A, const float *__restrict__ B, const float *__restrict__ C,
                     const float *__restrict__ BND, const float *__restrict__ W1, float omega, double *ring,
                     int slot, int rev)
{
    hg_pdl_launch_next();
    const int k = g.kb + blockIdx.x * blockDim.x + threadIdx.x;
    const int j = g.ub1 + blockIdx.y * blockDim.y + threadIdx.y;
    const int i0 = g.ub0 + hg_bz(rev) * blockDim.z * g.ich + threadIdx.z;
    const size_t v = g.v, si = g.si, sj = g.sj;
    const bool on = k >= g.ub2 && k < g.ue2 && j < g.ue1 && i0 < g.ue0;
    double acc = 0.0;
    /* the first point's coefficients before the wait (nothing writes them) */
    float ca[13];
#define HG_LDC(x)                                                                                         \
    ca[0] = A[x], ca[1] = A[v + (x)], ca[2] = A[2 * v + (x)], ca[3] = A[3 * v + (x)], ca[4] = B[x],       \
    ca[5] = B[v + (x)], ca[6] = B[2 * v + (x)], ca[7] = C[x], ca[8] = C[v + (x)], ca[9] = C[2 * v + (x)], \
    ca[10] = BND[x], ca[11] = W1[x]
    if (on) {
        const size_t x = (size_t)i0 * si + (size_t)j * sj + (size_t)k;
        HG_LDC(x);
    }
    hg_pdl_wait();
    if (on) {
        for (int m = 0, i = i0; m < g.ich && i < g.ue0; m++, i += blockDim.z) {
            const size_t x = (size_t)i * si + (size_t)j * sj + (size_t)k;
            if (m) HG_LDC(x);
            float s0 = ca[0] * P[x + si] + ca[1] * P[x + sj] + ca[2] * P[x + 1] +
                       ca[4] * (P[x + si + sj] - P[x + si - sj] - P[x - si + sj] + P[x - si - sj]) +
                       ca[5] * (P[x + sj + 1] - P[x - sj + 1] - P[x + sj - 1] + P[x - sj - 1]) +
                       ca[6] * (P[x + si + 1] - P[x - si + 1] - P[x + si - 1] + P[x - si - 1]) +
                       ca[7] * P[x - si] + ca[8] * P[x - sj] + ca[9] * P[x - 1] + ca[11];
            float ss = (s0 * ca[3] - P[x]) * ca[10];
            if (GOSA) acc += (double)ss * (double)ss;
            Q[x] = P[x] + omega * ss;
        }
    }
#undef HG_LDC
    if (GOSA) hg_block_sum(acc, ring, slot);
}

/* The same update, four consecutive k per thread with 16-byte loads and stores (rows are 32-float aligned, so
 * every float4 is aligned). The k-1 and k+1 neighbours of the four come from the thread's own float4 and one
 * scalar on each side. The float operations and their order are those of hg_jacobi_kernel, element by
 * element, so the result is the same bit for bit (the tuner checks). Ghosts and padding are never written. */
#define HG_ROW(name, off)                                                                         \
    float name[6];                                                                                \
    {                                                                                             \
        float4 t_ = *reinterpret_cast<const float4 *>(P + (x + (off)));                           \
        name[0] = P[x + (off)-1], name[1] = t_.x, name[2] = t_.y, name[3] = t_.z, name[4] = t_.w; \
        name[5] = P[x + (off) + 4];                                                               \
    }
#define HG_LD4(ptr, off) (*reinterpret_cast<const float4 *>((ptr) + (x + (off))))

template <bool GOSA>
__global__ void __launch_bounds__(HG_MAX_THREADS4)
    hg_jacobi_kernel4(hg_dev_block g, const float *__restrict__ P, float *__restrict__ Q,
                      const float *__restrict__ A, const float *__restrict__ B, const float *__restrict__ C,
                      const float *__restrict__ BND, const float *__restrict__ W1, float omega, double *ring,
                      int slot, int rev)
{
    hg_pdl_launch_next();
    const int k4 = g.kb + 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    const int j = g.ub1 + blockIdx.y * blockDim.y + threadIdx.y;
    const int i0 = g.ub0 + hg_bz(rev) * blockDim.z * g.ich + threadIdx.z;
    const size_t v = g.v, si = g.si, sj = g.sj;
    const bool on = k4 + 3 >= g.ub2 && k4 < g.ue2 && j < g.ue1 && i0 < g.ue0;
    double acc = 0.0;
    /* the first point's coefficients before the wait (nothing writes them) */
    float4 a0, a1, a2, a3, b0, b1, b2, c0, c1, c2, bn, w1;
#define HG_LDC4()                                                                                          \
    a0 = HG_LD4(A, 0), a1 = HG_LD4(A, v), a2 = HG_LD4(A, 2 * v), a3 = HG_LD4(A, 3 * v), b0 = HG_LD4(B, 0), \
    b1 = HG_LD4(B, v), b2 = HG_LD4(B, 2 * v), c0 = HG_LD4(C, 0), c1 = HG_LD4(C, v), c2 = HG_LD4(C, 2 * v), \
    bn = HG_LD4(BND, 0), w1 = HG_LD4(W1, 0)
    if (on) {
        const size_t x = (size_t)i0 * si + (size_t)j * sj + (size_t)k4;
        HG_LDC4();
    }
    hg_pdl_wait();
    if (on) {
        for (int m = 0, i = i0; m < g.ich && i < g.ue0; m++, i += blockDim.z) {
            const size_t x = (size_t)i * si + (size_t)j * sj + (size_t)k4;
            if (m) HG_LDC4();
            HG_ROW(pc, 0)
            HG_ROW(pip, si)
            HG_ROW(pim, 0 - si)
            HG_ROW(pjp, sj)
            HG_ROW(pjm, 0 - sj)
            float4 d1 = HG_LD4(P, si + sj), d2 = HG_LD4(P, si - sj), d3 = HG_LD4(P, 0 - si + sj),
                   d4 = HG_LD4(P, 0 - si - sj);
            const float A0[4] = {a0.x, a0.y, a0.z, a0.w}, A1[4] = {a1.x, a1.y, a1.z, a1.w},
                        A2[4] = {a2.x, a2.y, a2.z, a2.w}, A3[4] = {a3.x, a3.y, a3.z, a3.w},
                        B0[4] = {b0.x, b0.y, b0.z, b0.w}, B1[4] = {b1.x, b1.y, b1.z, b1.w},
                        B2[4] = {b2.x, b2.y, b2.z, b2.w}, C0[4] = {c0.x, c0.y, c0.z, c0.w},
                        C1[4] = {c1.x, c1.y, c1.z, c1.w}, C2[4] = {c2.x, c2.y, c2.z, c2.w},
                        BN[4] = {bn.x, bn.y, bn.z, bn.w}, W[4] = {w1.x, w1.y, w1.z, w1.w},
                        D1[4] = {d1.x, d1.y, d1.z, d1.w}, D2[4] = {d2.x, d2.y, d2.z, d2.w},
                        D3[4] = {d3.x, d3.y, d3.z, d3.w}, D4[4] = {d4.x, d4.y, d4.z, d4.w};
            float out[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                /* row[e + 1] is the point, row[e + 2] its k + 1, row[e] its k - 1 */
                float s0 = A0[e] * pip[e + 1] + A1[e] * pjp[e + 1] + A2[e] * pc[e + 2] +
                           B0[e] * (D1[e] - D2[e] - D3[e] + D4[e]) +
                           B1[e] * (pjp[e + 2] - pjm[e + 2] - pjp[e] + pjm[e]) +
                           B2[e] * (pip[e + 2] - pim[e + 2] - pip[e] + pim[e]) + C0[e] * pim[e + 1] +
                           C1[e] * pjm[e + 1] + C2[e] * pc[e] + W[e];
                float ss = (s0 * A3[e] - pc[e + 1]) * BN[e];
                out[e] = pc[e + 1] + omega * ss;
                if (GOSA && k4 + e >= g.ub2 && k4 + e < g.ue2) acc += (double)ss * (double)ss;
            }
            if (k4 >= g.ub2 && k4 + 3 < g.ue2) {
                *reinterpret_cast<float4 *>(Q + x) = make_float4(out[0], out[1], out[2], out[3]);
            } else {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    if (k4 + e >= g.ub2 && k4 + e < g.ue2) Q[x + e] = out[e];
            }
        }
    }
#undef HG_LDC4
    if (GOSA) hg_block_sum(acc, ring, slot);
}

extern "C" void hg_gpu_set_gosa(int on)
{
    g_gosa = on;
}

extern "C" int hg_gpu_set_shape(int bx, int by, int bz, int ich, int vec)
{
    if (bx < 32 || bx % 32 || by < 1 || bz < 1 || ich < 1 ||
        bx * by * bz > (vec ? HG_MAX_THREADS4 : HG_MAX_THREADS))
        return -1;
    g_bx = bx, g_by = by, g_bz = bz, g_ich = ich, g_vec = vec != 0;
    return 0;
}

extern "C" int hg_gpu_gosa_reset(double *ring, char *err, size_t len)
{
    HG_CU(cudaMemsetAsync(ring, 0, 2 * sizeof(double), g_stream));
    return 0;
}

/* One kernel launch on g_stream over the block's update range b->ub .. b->ue (a part of it for the
 * overlapped iteration), in the shape bx x by x bz, ich points along i, vec; pdl: with the Programmatic
 * Dependent Launch attribute. */
static cudaError_t launch_shape(const hg_block_t *b, const hg_coef_t *cf, const float *p, float *q,
                                float omega, double *ring, int slot, int rev, int pdl, int bx, int by, int bz,
                                int ich, int vec)
{
    hg_dev_block g;
    g.ub0 = b->ub[0], g.ue0 = b->ue[0], g.ub1 = b->ub[1], g.ue1 = b->ue[1], g.ub2 = b->ub[2],
    g.ue2 = b->ue[2];
    g.ich = ich, g.kb = b->ub[2] & ~31;
    g.v = b->vol, g.si = (size_t)b->ext[1] * b->ext[2], g.sj = (size_t)b->ext[2];
    int nj = b->ue[1] - b->ub[1], ni = b->ue[0] - b->ub[0];
    int kth = vec ? (b->ue[2] - g.kb + 3) / 4 : b->ue[2] - g.kb; /* threads along k */
    cudaLaunchConfig_t c = {};
    c.blockDim = dim3(bx, by, bz);
    c.gridDim = dim3((kth + bx - 1) / bx, (nj + by - 1) / by, (ni + bz * ich - 1) / (bz * ich));
    c.stream = g_stream;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    c.attrs = at;
    c.numAttrs = pdl ? 1 : 0;
    const float *a = cf->a, *bb = cf->b, *cc = cf->c, *bnd = cf->bnd, *w1 = cf->wrk1;
    if (vec && g_gosa)
        return cudaLaunchKernelEx(&c, hg_jacobi_kernel4<true>, g, p, q, a, bb, cc, bnd, w1, omega, ring, slot,
                                  rev);
    if (vec)
        return cudaLaunchKernelEx(&c, hg_jacobi_kernel4<false>, g, p, q, a, bb, cc, bnd, w1, omega, ring,
                                  slot, rev);
    if (g_gosa)
        return cudaLaunchKernelEx(&c, hg_jacobi_kernel<true>, g, p, q, a, bb, cc, bnd, w1, omega, ring, slot,
                                  rev);
    return cudaLaunchKernelEx(&c, hg_jacobi_kernel<false>, g, p, q, a, bb, cc, bnd, w1, omega, ring, slot,
                              rev);
}

static cudaError_t launch(const hg_block_t *b, const hg_coef_t *cf, const float *p, float *q, float omega,
                          double *ring, int slot, int rev, int pdl)
{
    return launch_shape(b, cf, p, q, omega, ring, slot, rev, pdl, g_bx, g_by, g_bz, g_ich, g_vec);
}

static int empty_block(const hg_block_t *b)
{
    return b->ue[2] <= b->ub[2] || b->ue[1] <= b->ub[1] || b->ue[0] <= b->ub[0];
}

extern "C" int hg_gpu_jacobi(const hg_block_t *b, const hg_coef_t *cf, const float *p, float *q, float omega,
                             double *ring, int slot, char *err, size_t len)
{
    if (empty_block(b)) { /* no kernel: this rank's share of gosa is 0 */
        HG_CU(cudaMemsetAsync(ring, 0, 2 * sizeof(double), g_stream));
        return 0;
    }
    HG_CU(launch(b, cf, p, q, omega, ring, slot, 0, 0));
    HG_CU(cudaGetLastError());
    return 0;
}

/* A part of the block (the overlapped iteration: a face slab or the interior), queued on g_stream. thin: the
 * dimension along which the part is one point thick (-1: the interior, in the tuned shape). A slab takes the
 * tuned shape with one thread along its thin dimension (i, j: the others' threads moved to the other of i
 * and j), or for k a scalar 32 x 4 x 2 block of which one thread per row works; every shape computes the
 * same floats (the tuner checks), so the parts give the whole kernel's field bit for bit. rev and pdl as in
 * the chain: the i planes in reverse order; Programmatic Dependent Launch (a kernel of the stream that
 * follows another waits for it in griddepcontrol.wait, before it reads p or adds to gosa). */
extern "C" int hg_gpu_jacobi_part(const hg_block_t *b, int thin, const hg_coef_t *cf, const float *p,
                                  float *q, float omega, double *ring, int slot, int rev, int pdl, char *err,
                                  size_t len)
{
    if (empty_block(b)) return 0;
    int bx = g_bx, by = g_by, bz = g_bz, ich = g_ich, vec = g_vec;
    if (thin == 0)
        by = g_by * g_bz, bz = 1, ich = 1;
    else if (thin == 1)
        bz = g_by * g_bz, by = 1, ich = 1;
    else if (thin == 2)
        bx = 32, by = 4, bz = 2, ich = 1, vec = 0;
    HG_CU(launch_shape(b, cf, p, q, omega, ring, slot, rev, pdl, bx, by, bz, ich, vec));
    HG_CU(cudaGetLastError());
    return 0;
}

/* An event after the work queued so far (the face slabs), and the host's wait for it while the stream goes
 * on (the interior). */
static cudaEvent_t g_mark;
extern "C" int hg_gpu_mark(char *err, size_t len)
{
    if (!g_mark) HG_CU(cudaEventCreateWithFlags(&g_mark, cudaEventDisableTiming));
    HG_CU(cudaEventRecord(g_mark, g_stream));
    return 0;
}
extern "C" int hg_gpu_wait_mark(char *err, size_t len)
{
    HG_CU(cudaEventSynchronize(g_mark));
    return 0;
}

extern "C" int hg_gpu_zero(void *ptr, size_t bytes, char *err, size_t len)
{
    HG_CU(cudaMemsetAsync(ptr, 0, bytes, g_stream));
    return 0;
}

/* The chain: n iterations on one rank, kernel after kernel with nothing between them (gosa in the ring, read
 * after the chain), launched plainly, with Programmatic Dependent Launch, or as CUDA graphs of 2 x
 * HG_GRAPH_PAIRS kernels (with or without PDL edges, replayed; the remainder launched plainly). */
#define HG_GRAPH_PAIRS 16
static struct {
    cudaGraphExec_t exec;
    const void *key[4];
    int pdl, sweep, shape[5];
} g_graph;

static int chain_launches(const hg_block_t *b, const hg_coef_t *cf, float *f0, float *f1, int n0, int n,
                          float omega, double *ring, int pdl, int sweep)
{
    for (int m = n0; m < n0 + n; m++) {
        cudaError_t e = launch(b, cf, (m & 1) ? f1 : f0, (m & 1) ? f0 : f1, omega, ring, m & 1,
                               sweep && (m & 1), pdl && m > 0);
        if (e != cudaSuccess) return (int)e;
    }
    return 0;
}

extern "C" int hg_gpu_chain(const hg_block_t *b, const hg_coef_t *cf, float *f0, float *f1, int n,
                            float omega, double *ring, int mode, int sweep, char *err, size_t len)
{
    if (n <= 0) return 0;
    HG_CU(cudaMemsetAsync(ring, 0, 2 * sizeof(double), g_stream));
    if (empty_block(b)) return 0;
    int pdl = mode == HG_CHAIN_PDL || mode == HG_CHAIN_GRAPH_PDL;
    int done = 0;
    if (mode == HG_CHAIN_GRAPH || mode == HG_CHAIN_GRAPH_PDL) {
        const void *key[4] = {b, f0, f1, cf->a};
        int shape[5] = {g_bx, g_by, g_bz, g_ich, g_vec * 2 + g_gosa};
        if (!g_graph.exec || memcmp(key, g_graph.key, sizeof key) || g_graph.pdl != pdl ||
            g_graph.sweep != sweep || memcmp(shape, g_graph.shape, sizeof shape)) {
            if (g_graph.exec) cudaGraphExecDestroy(g_graph.exec), g_graph.exec = NULL;
            cudaGraph_t gr;
            HG_CU(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal));
            /* the first kernel of the graph waits for the previous launch as a whole (graph edges) */
            int e = chain_launches(b, cf, f0, f1, 0, 2 * HG_GRAPH_PAIRS, omega, ring, pdl, sweep);
            cudaError_t ec = cudaStreamEndCapture(g_stream, &gr);
            if (e) HG_CU((cudaError_t)e);
            HG_CU(ec);
            HG_CU(cudaGraphInstantiate(&g_graph.exec, gr, 0));
            cudaGraphDestroy(gr);
            memcpy(g_graph.key, key, sizeof key), memcpy(g_graph.shape, shape, sizeof shape);
            g_graph.pdl = pdl, g_graph.sweep = sweep;
        }
        for (; done + 2 * HG_GRAPH_PAIRS <= n; done += 2 * HG_GRAPH_PAIRS)
            HG_CU(cudaGraphLaunch(g_graph.exec, g_stream));
    }
    int e = chain_launches(b, cf, f0, f1, done, n - done, omega, ring, pdl, sweep);
    if (e) HG_CU((cudaError_t)e);
    HG_CU(cudaGetLastError());
    return 0;
}

/* The temporally blocked chain: passes of tb iterations, launched plainly (a pass is several iterations'
 * work, so the launch gaps the chain modes hide matter less). */
template <int TB, int TBX, int TBY, int MINB = 1>
static cudaError_t launch_tb(const hg_tb_args &g, const hg_coef_t *cf, const float *p, float *q, double *ring)
{
    dim3 grid((g.ue2 - g.ub2 + TBX - 2 * TB - 1) / (TBX - 2 * TB),
              (g.ue1 - g.ub1 + TBY - 2 * TB - 1) / (TBY - 2 * TB), (g.ue0 - g.ub0 + g.chunk - 1) / g.chunk);
    size_t smem = (size_t)TB * 3 * hg_tb_plane<TBX, TBY>() * sizeof(float);
    hg_tb_kernel<TB, TBX, TBY, MINB>
        <<<grid, dim3(TBX, TBY), smem, g_stream>>>(g, p, q, cf->a, cf->b, cf->c, cf->bnd, cf->wrk1, ring);
    return cudaGetLastError();
}

extern "C" int hg_gpu_chain_tb(const hg_block_t *b, const hg_coef_t *cf, float *f0, float *f1, int n,
                               float omega, double *ring, int tb, int tile, int chunk, int *cur, char *err,
                               size_t len)
{
    static_assert(HG_TB_RING == HG_TB_RING_SLOTS, "one ring size");
    *cur = 0;
    if (n <= 0) return 0;
    if (tb < 1 || tb > 3 || chunk < 1) {
        snprintf(err, len, "tb %d, chunk %d: expected 1..3 and >= 1", tb, chunk);
        return -1;
    }
    HG_CU(cudaMemsetAsync(ring, 0, HG_TB_RING * sizeof(double), g_stream));
    if (empty_block(b)) return 0;
    float *f[2] = {f0, f1};
    int c = 0;
    for (int it = 0; it < n;) {
        int T = n - it < tb ? n - it : tb;
        hg_tb_args g = hg_tb_args_of(b, chunk, it, omega);
        cudaError_t e;
        if (tile == 1)
            e = T == 1   ? launch_tb<1, 64, 16>(g, cf, f[c], f[c ^ 1], ring)
                : T == 2 ? launch_tb<2, 64, 16>(g, cf, f[c], f[c ^ 1], ring)
                         : launch_tb<3, 64, 16>(g, cf, f[c], f[c ^ 1], ring);
        else if (tile == 2)
            e = T == 1   ? launch_tb<1, 32, 16, 2>(g, cf, f[c], f[c ^ 1], ring)
                : T == 2 ? launch_tb<2, 32, 16, 2>(g, cf, f[c], f[c ^ 1], ring)
                         : launch_tb<3, 32, 16, 2>(g, cf, f[c], f[c ^ 1], ring);
        else
            e = T == 1   ? launch_tb<1, 32, 16>(g, cf, f[c], f[c ^ 1], ring)
                : T == 2 ? launch_tb<2, 32, 16>(g, cf, f[c], f[c ^ 1], ring)
                         : launch_tb<3, 32, 16>(g, cf, f[c], f[c ^ 1], ring);
        HG_CU(e);
        c ^= 1, it += T;
    }
    *cur = c;
    return 0;
}

/* box <-> contiguous buffer, one thread per element, k fastest */
__global__ void hg_box_kernel(float *f, float *buf, int l0, int l1, int l2, int n1, int n2, size_t total,
                              size_t si, size_t sj, int to_buf)
{
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t >= total) return;
    int k = (int)(t % n2), j = (int)(t / n2 % n1), i = (int)(t / ((size_t)n2 * n1));
    size_t x = (size_t)(l0 + i) * si + (size_t)(l1 + j) * sj + (size_t)(l2 + k);
    if (to_buf)
        buf[t] = f[x];
    else
        f[x] = buf[t];
}

static int box_launch(const hg_block_t *b, float *f, const hg_box_t *x, float *buf, int to_buf, char *err,
                      size_t len)
{
    size_t total = hg_box_count(x);
    if (!total) return 0;
    unsigned blocks = (unsigned)((total + 255) / 256);
    hg_box_kernel<<<blocks, 256, 0, g_stream>>>(f, buf, x->lo[0], x->lo[1], x->lo[2], x->hi[1] - x->lo[1],
                                                x->hi[2] - x->lo[2], total, (size_t)b->ext[1] * b->ext[2],
                                                (size_t)b->ext[2], to_buf);
    HG_CU(cudaGetLastError());
    return 0;
}

extern "C" int hg_gpu_pack(const hg_block_t *b, const float *f, const hg_box_t *x, float *buf, char *err,
                           size_t len)
{
    return box_launch(b, (float *)f, x, buf, 1, err, len);
}

extern "C" int hg_gpu_unpack(const hg_block_t *b, float *f, const hg_box_t *x, const float *buf, char *err,
                             size_t len)
{
    return box_launch(b, f, x, (float *)buf, 0, err, len);
}

extern "C" double hg_gpu_copy_bw(void)
{
    const size_t bytes = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    cudaEvent_t e0, e1;
    if (cudaMalloc(&a, bytes) != cudaSuccess) return 0.0;
    if (cudaMalloc(&b, bytes) != cudaSuccess) {
        cudaFree(a);
        return 0.0;
    }
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float best = 1e30f;
    for (int r = 0; r < 6; r++) {
        cudaEventRecord(e0, g_stream);
        cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, g_stream);
        cudaEventRecord(e1, g_stream);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r > 0 && ms < best) best = ms;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return 2.0 * bytes / (best * 1e-3) / 1e9;
}
