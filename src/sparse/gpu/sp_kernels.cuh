/* Internal: the sparse layer's CUDA kernels, shared by sp_gpu.cu (SpMV, pack, vector helpers) and cg_gpu.cu
 * (the CG iteration). Scalars of the iteration live in device memory so no kernel waits for the host:
 * S[0] rho (r'r of the last iteration), S[3] ||r0||^2, S[4] state (0 running, 1 converged, 2 breakdown),
 * S[5] iterations done, S[6] the value that broke down. Every kernel of the iteration reads the state once
 * per block (uniform, before any __syncthreads) and returns when the solve has stopped, so a graph may be
 * replayed past the end at the cost of empty launches. */
#ifndef KYI_SPARSE_GPU_KERNELS_CUH
#define KYI_SPARSE_GPU_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdio.h>

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

/* ---- scheme push (cg_gpu.cu): no collectives; every rank stores into every peer's memory ---------------
 * Each rank's sync words (a GPU segment every GPU of the node maps), 5 np 64-bit words: [k np + s], k = 0, 1,
 * 2: the epoch of the last p (k = 0), p'q (1) and r'r (2) that rank s stored here; [(2 + k) np + s], k = 1,
 * 2: rank s's partial p'q and r'r (doubles). A kernel's last block (a counter per kernel) stores the rank's
 * partial sum into every rank's slot, then the flag with release semantics; the next kernel's blocks wait
 * for every rank's flag (acquire) and sum the slots in rank order, so every rank gets the same bits. K3
 * also stores each entry of p into every peer's gathered p; its last block then raises the p flags and the
 * epoch. Every rank's kernels stop at the same iteration (the state follows from those identical sums), so
 * no kernel waits for a flag that a stopped peer will not raise. */
#define KYI_PUSH_MAX 8

typedef struct {
    double *pfull[KYI_PUSH_MAX];            /* rank r's gathered p (the allgather's padded layout), mapped */
    unsigned long long *sync[KYI_PUSH_MAX]; /* rank r's sync words, mapped */
    int me, np;
    long long loc_off;       /* this rank's piece in the gathered p */
    unsigned long long *cnt; /* this GPU: blocks done of K1, K2, K3 */
    unsigned long long *ep;  /* this GPU: the epoch of the p K1 reads next */
    unsigned long long timeout_ns;
} kyi_sp_push_t;

__device__ __forceinline__ unsigned long long kyi_sp_ld_acquire(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void kyi_sp_st_release(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ unsigned long long kyi_sp_now_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* The block waits until every rank's flag k is at least e; returns the sum of the ranks' slots of k (k = 1,
 * 2) in rank order, the same on every thread. A peer silent for KY_TIMEOUT ends the kernel (and the job). */
__device__ __forceinline__ double kyi_sp_push_wait(const kyi_sp_push_t *pu, int k, unsigned long long e)
{
    __shared__ double sum;
    if (threadIdx.x == 0) {
        const unsigned long long *mine = pu->sync[pu->me];
        int np = pu->np;
        unsigned long long t0 = 0;
        for (int r = 0; r < np; r++)
            while (kyi_sp_ld_acquire(mine + k * np + r) < e) {
                unsigned long long now = kyi_sp_now_ns();
                if (!t0) t0 = now;
                if (now - t0 > pu->timeout_ns) {
                    printf(
                        "Kyoyu: ky_cg scheme push: rank %d waited past KY_TIMEOUT for rank %d (flag %d, "
                        "epoch "
                        "%llu)\n",
                        pu->me, r, k, e);
                    __trap();
                }
            }
        double s = 0.0;
        if (k > 0)
            for (int r = 0; r < np; r++) s += ((volatile const double *)mine)[(2 + k) * np + r];
        sum = s;
    }
    __syncthreads();
    return sum;
}

/* Every block calls it once at its end: 1 on the block that finished last (its counter is reset), whose
 * thread 0 then sees every other block's stores, peers' memory included. */
__device__ __forceinline__ bool kyi_sp_push_last(unsigned long long *cnt)
{
    __shared__ int last;
    __threadfence_system(); /* this thread's stores, peers' memory included, before the count */
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t = atomicAdd(cnt, 1ULL);
        last = t == (unsigned long long)gridDim.x - 1;
        if (last) {
            *cnt = 0;
            __threadfence();
        }
    }
    __syncthreads();
    return last != 0;
}

/* Thread 0 of the last block: value v of kind k (1 p'q, 2 r'r) into every rank's slot, then its flag e. */
__device__ __forceinline__ void kyi_sp_push_scalar(const kyi_sp_push_t *pu, int k, double v,
                                                   unsigned long long e)
{
    int np = pu->np, me = pu->me;
    for (int r = 0; r < np; r++) {
        unsigned long long *w = pu->sync[r];
        ((volatile double *)w)[(2 + k) * np + me] = v;
        kyi_sp_st_release(w + k * np + me, e); /* orders the value before the flag */
    }
}

/* CG's K1 fused into an SpMV (gpu/spmv_gpu.cu): p != NULL: q = A p and p'q summed into *pq_acc; the kernel
 * returns at once when S[4] says the solve stopped; block 0 moves *rr_glob into S[0] (rho) and clears
 * *rr_acc for K2. push != NULL (scheme push): every block first waits for every rank's p, and the last block
 * stores the rank's p'q into every rank's slot. */
typedef struct {
    const double *p;
    double *S, *pq_acc, *rr_acc;
    const double *rr_glob;
    const kyi_sp_push_t *push;
} kyi_sp_fuse_t;

struct kyi_csr;
struct kyi_sp_plan;
/* y = A xe with the plan's chosen kernel (fused as K1 when f != NULL), enqueued on s */
cudaError_t kyi_sp_gpu_spmv_launch(const struct kyi_csr *A, const struct kyi_sp_plan *P, const double *xe,
                                   double *y, const kyi_sp_fuse_t *f, cudaStream_t s);

#endif
