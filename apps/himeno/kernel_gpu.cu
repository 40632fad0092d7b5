/* ky_himeno's GPU side: the Himeno kernel in CUDA, face packing, GPU memory and the copy-bandwidth floor.
 * The kernel is memory bound (56 bytes per point, 34 flops): threads run along k (coalesced), the 13
 * coefficient streams are read once and the 19 reads of p hit L1/L2. The block shape and the points each
 * thread takes along i are settable (--block, or measured at start-up by --tune, the default on GPUs). Built with -fmad=false: the same
 * float operations as the CPU kernel and the serial reference, so every decomposition gives the same field.
 * gosa: each thread sums ss^2 in double, warps and blocks reduce, one atomicAdd per block. */
#include <cuda_runtime.h>
#include <stdio.h>

#include "himeno.h"

/* Thread-block shape and points per thread along i: hg_gpu_set_shape (ky_himeno --block, or its tuning). */
static int g_bx = 64, g_by = 4, g_bz = 2, g_ich = 1;
#define HG_MAX_THREADS 1024

static cudaStream_t g_stream;  /* one stream for kernels and packing; created by hg_gpu_select */

static int cerr(cudaError_t e, const char *what, char *err, size_t len)
{
    if (e == cudaSuccess) return 0;
    snprintf(err, len, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}
#define HG_CU(call) \
    do { if (cerr((call), #call, err, len)) return -1; } while (0)

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

extern "C" void hg_gpu_free(void *ptr) { if (ptr) cudaFree(ptr); }
extern "C" void hg_gpu_host_free(void *ptr) { if (ptr) cudaFreeHost(ptr); }

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
    size_t v, si, sj;
};

/* Thread (x, y, z) of a block updates k = x, j = y and i = z, z + bz, ... (ich points along i). Threads
 * start at k = 0 (the ghost, idle) so that warps match the rows' 128-byte lines. */
__global__ void __launch_bounds__(HG_MAX_THREADS) hg_jacobi_kernel(
    hg_dev_block g, const float *__restrict__ P, float *__restrict__ Q, const float *__restrict__ A,
    const float *__restrict__ B, const float *__restrict__ C, const float *__restrict__ BND,
    const float *__restrict__ W1, float omega, double *gosa)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = g.ub1 + blockIdx.y * blockDim.y + threadIdx.y;
    const int i0 = g.ub0 + blockIdx.z * blockDim.z * g.ich + threadIdx.z;
    const size_t v = g.v, si = g.si, sj = g.sj;
    double acc = 0.0;
    if (k >= g.ub2 && k < g.ue2 && j < g.ue1) {
        for (int m = 0, i = i0; m < g.ich && i < g.ue0; m++, i += blockDim.z) {
            const size_t x = (size_t)i * si + (size_t)j * sj + (size_t)k;
            float s0 = A[x] * P[x + si] + A[v + x] * P[x + sj] + A[2 * v + x] * P[x + 1] +
                       B[x] * (P[x + si + sj] - P[x + si - sj] - P[x - si + sj] + P[x - si - sj]) +
                       B[v + x] * (P[x + sj + 1] - P[x - sj + 1] - P[x + sj - 1] + P[x - sj - 1]) +
                       B[2 * v + x] * (P[x + si + 1] - P[x - si + 1] - P[x + si - 1] + P[x - si - 1]) +
                       C[x] * P[x - si] + C[v + x] * P[x - sj] + C[2 * v + x] * P[x - 1] + W1[x];
            float ss = (s0 * A[3 * v + x] - P[x]) * BND[x];
            acc += (double)ss * (double)ss;
            Q[x] = P[x] + omega * ss;
        }
    }
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    __shared__ double part[HG_MAX_THREADS / 32];
    const int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    const int nw = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
    if ((t & 31) == 0) part[t >> 5] = acc;
    __syncthreads();
    if (t == 0) {
        double s = 0.0;
        for (int w = 0; w < nw; w++) s += part[w];
        if (s != 0.0) atomicAdd(gosa, s);
    }
}

extern "C" int hg_gpu_set_shape(int bx, int by, int bz, int ich)
{
    if (bx < 32 || bx % 32 || by < 1 || bz < 1 || ich < 1 || bx * by * bz > HG_MAX_THREADS) return -1;
    g_bx = bx, g_by = by, g_bz = bz, g_ich = ich;
    return 0;
}

extern "C" int hg_gpu_jacobi(const hg_block_t *b, const hg_coef_t *cf, const float *p, float *q, float omega,
                             double *d_gosa, char *err, size_t len)
{
    hg_dev_block g = {b->ub[0], b->ue[0], b->ub[1], b->ue[1], b->ub[2], b->ue[2], g_ich, b->vol,
                      (size_t)b->ext[1] * b->ext[2], (size_t)b->ext[2]};
    HG_CU(cudaMemsetAsync(d_gosa, 0, sizeof(double), g_stream));
    int nk = b->ue[2] - b->ub[2], nj = b->ue[1] - b->ub[1], ni = b->ue[0] - b->ub[0];
    if (nk <= 0 || nj <= 0 || ni <= 0) return 0;
    dim3 blk(g_bx, g_by, g_bz), grd((b->ue[2] + g_bx - 1) / g_bx, (nj + g_by - 1) / g_by, (ni + g_bz * g_ich - 1) / (g_bz * g_ich));
    hg_jacobi_kernel<<<grd, blk, 0, g_stream>>>(g, p, q, cf->a, cf->b, cf->c, cf->bnd, cf->wrk1, omega, d_gosa);
    HG_CU(cudaGetLastError());
    return 0;
}

/* box <-> contiguous buffer, one thread per element, k fastest */
__global__ void hg_box_kernel(float *f, float *buf, int l0, int l1, int l2, int n1, int n2, size_t total, size_t si,
                              size_t sj, int to_buf)
{
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t >= total) return;
    int k = (int)(t % n2), j = (int)(t / n2 % n1), i = (int)(t / ((size_t)n2 * n1));
    size_t x = (size_t)(l0 + i) * si + (size_t)(l1 + j) * sj + (size_t)(l2 + k);
    if (to_buf) buf[t] = f[x];
    else f[x] = buf[t];
}

static int box_launch(const hg_block_t *b, float *f, const hg_box_t *x, float *buf, int to_buf, char *err, size_t len)
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

extern "C" int hg_gpu_pack(const hg_block_t *b, const float *f, const hg_box_t *x, float *buf, char *err, size_t len)
{
    return box_launch(b, (float *)f, x, buf, 1, err, len);
}

extern "C" int hg_gpu_unpack(const hg_block_t *b, float *f, const hg_box_t *x, const float *buf, char *err, size_t len)
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
