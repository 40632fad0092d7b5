/* Internal: the sparse layer's CUDA kernels, shared by sp_gpu.cu (SpMV, pack, vector helpers) and cg_gpu.cu
 * (the CG iteration). Scalars of the iteration live in device memory so no kernel waits for the host:
 * S[0] rho (r'r of the last iteration), S[3] ||r0||^2, S[4] state (0 running, 1 converged, 2 breakdown),
 * S[5] iterations done, S[6] the value that broke down. Every kernel of the iteration reads the state once
 * per block (uniform, before any __syncthreads) and returns when the solve has stopped, so a graph may be
 * replayed past the end at the cost of empty launches. */
#ifndef KYI_SPARSE_GPU_KERNELS_CUH
#define KYI_SPARSE_GPU_KERNELS_CUH

#include <cuda_runtime.h>

#define KYI_SP_BLOCK 256

/* Add v of every thread of the block into *target (one atomic per block). */
__device__ __forceinline__ void kyi_sp_block_add(double v, double *target)
{
    __shared__ double sh[32]; /* blocks of up to 1024 threads */
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (lane == 0) sh[w] = v;
    __syncthreads();
    if (w == 0) {
        v = lane < (int)(blockDim.x / 32) ? sh[lane] : 0.0;
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane == 0 && v != 0.0) atomicAdd(target, v);
    }
}

/* One row per group of V lanes; returns the row's sum on lane 0 of the group (others: partial). */
template <int V>
__device__ __forceinline__ double kyi_sp_row(int row, int n, const int *rp, const int *col, const double *val,
                                             const double *xe)
{
    int lane = threadIdx.x & (V - 1);
    double s = 0.0;
    if (row < n)
        for (int k = rp[row] + lane; k < rp[row + 1]; k += V) s += val[k] * __ldg(xe + col[k]);
    for (int off = V / 2; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off, V);
    return s;
}

/* The same with four entries per lane loaded before their gathers: more loads in flight per warp. */
template <int V>
__device__ __forceinline__ double kyi_sp_row4(int row, int n, const int *rp, const int *col,
                                              const double *val, const double *xe)
{
    int lane = threadIdx.x & (V - 1);
    double s0 = 0.0, s1 = 0.0;
    if (row < n) {
        int k = __ldg(rp + row) + lane, e = __ldg(rp + row + 1);
        for (; k + 3 * V < e; k += 4 * V) {
            int c0 = __ldg(col + k), c1 = __ldg(col + k + V), c2 = __ldg(col + k + 2 * V),
                c3 = __ldg(col + k + 3 * V);
            double v0 = __ldg(val + k), v1 = __ldg(val + k + V), v2 = __ldg(val + k + 2 * V),
                   v3 = __ldg(val + k + 3 * V);
            s0 += v0 * __ldg(xe + c0);
            s1 += v1 * __ldg(xe + c1);
            s0 += v2 * __ldg(xe + c2);
            s1 += v3 * __ldg(xe + c3);
        }
        for (; k < e; k += V) s0 += __ldg(val + k) * __ldg(xe + __ldg(col + k));
    }
    double s = s0 + s1;
    for (int off = V / 2; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off, V);
    return s;
}

__device__ __forceinline__ bool kyi_sp_stopped(const double *S)
{
    __shared__ int stop;
    if (threadIdx.x == 0) stop = S[4] != 0.0;
    __syncthreads();
    return stop != 0;
}

/* CG's K1 fused into an SpMV (gpu/spmv_gpu.cu): p != NULL: q = A p and p'q summed into *pq_acc; the kernel
 * returns at once when S[4] says the solve stopped; block 0 moves *rr_glob into S[0] (rho) and clears
 * *rr_acc for K2. */
typedef struct {
    const double *p;
    double *S, *pq_acc, *rr_acc;
    const double *rr_glob;
} kyi_sp_fuse_t;

struct kyi_csr;
struct kyi_sp_plan;
/* y = A xe with the plan's chosen kernel (fused as K1 when f != NULL), enqueued on s */
cudaError_t kyi_sp_gpu_spmv_launch(const struct kyi_csr *A, const struct kyi_sp_plan *P, const double *xe,
                                   double *y, const kyi_sp_fuse_t *f, cudaStream_t s);

#endif
