/* ky_himeno: temporal blocking inside the kernel (--tb 2 or 3): one pass through memory advances TB Jacobi
 * iterations. Compiled by kernel_gpu.cu, and as host code by tb_emu.cpp, which runs it on the CPU (every CUDA
 * thread a fiber) and compares it bit for bit with the CPU kernel.
 *
 * 2.5-D streaming along i (the slowest index): a block of TBX x TBY threads owns a k-j tile (TB-wide halos
 * included, so (TBX - 2 TB) x (TBY - 2 TB) points are its own) and a chunk of i planes, and marches along i.
 * Iteration zi of the march:
 *   - stage 0 loads plane zi of p (one float per thread) into shared memory, and the thread's 12 coefficients
 *     of plane zi into registers;
 *   - stage s (1..TB) computes plane zi - s of iteration s of the pass from the three planes zi - s - 1 ..
 *     zi - s + 1 of stage s - 1 (shared memory: a ring of 3 planes per stage below TB; a barrier between
 *     stages), with the coefficients of plane zi - s, which the thread loaded s marches ago and carries in
 *     a delay line of registers (a point's coefficients are only its own: they are read once per pass for
 *     all stages, 48 bytes per point, plus p read once and written once);
 *   - stage TB writes its plane to global memory (own points only).
 * A stage computes a point exactly when the single-step kernel would (the update range; the planes the
 * chunk's output depends on), every other point passes the previous stage's value through: the fixed
 * boundary is the same in every stage. Each computed value is stage s - 1's neighbours combined with the
 * float operations, in the order, of hg_jacobi_kernel (and -fmad=false): p is bitwise the single-step field.
 * gosa: stage s adds ss * ss (ss the same float as the single-step kernel's) in double over the points the
 * block owns, the points of iteration n0 + s - 1 counted once over all blocks; block sums go to
 * ring[(n0 + s - 1) % HG_TB_RING] by one atomicAdd each. The sum's order differs from the single-step
 * kernel's (other blocks), so gosa agrees to the rounding of a double sum, not bitwise. */
#ifndef KY_HIMENO_TB_KERNEL_CUH
#define KY_HIMENO_TB_KERNEL_CUH

#include <stddef.h>

#include "himeno.h"

/* Ring of per-iteration gosa slots of the blocked chain: a pass of T <= 3 iterations adds into T slots and
 * zeroes the 3 that follow (the next pass's), which must not be its own: 6. */
#define HG_TB_RING 6

struct hg_tb_args {
    int ub0, ue0, ub1, ue1, ub2, ue2; /* update range (local indices) */
    int ext0, ext1, ext2;             /* local extents: loads outside are 0 */
    int chunk;                        /* own planes per block along i */
    int n0;                           /* chain iteration of stage 1 */
    size_t v, si, sj;
    float omega;
};

/* The arguments of a pass over block b: chunk own planes per thread block, stage 1 at chain iteration n0. */
static inline hg_tb_args hg_tb_args_of(const hg_block_t *b, int chunk, int n0, float omega)
{
    return hg_tb_args{b->ub[0],
                      b->ue[0],
                      b->ub[1],
                      b->ue[1],
                      b->ub[2],
                      b->ue[2],
                      b->ext[0],
                      b->ext[1],
                      b->ext[2],
                      chunk,
                      n0,
                      b->vol,
                      (size_t)b->ext[1] * b->ext[2],
                      (size_t)b->ext[2],
                      omega};
}

/* The block's dynamic shared memory: TB stages x 3 planes of (TBX + 2) x (TBY + 2) floats (a padding row and
 * column on each side, read by tile-edge points whose results are never used). */
template <int TBX, int TBY>
__host__ __device__ constexpr int hg_tb_plane()
{
    return (TBX + 2) * (TBY + 2);
}

#ifndef HG_TB_EMULATION
__device__ static inline float *hg_tb_smem()
{
    extern __shared__ float hg_tb_sm[];
    return hg_tb_sm;
}

/* Each stage's block sum into its iteration's slot: warps, then thread 0 over the warps, one atomic. */
template <int TB>
__device__ static inline void hg_tb_sum(double (&acc)[TB], double *ring, int n0)
{
    __shared__ double part[TB][32];
    const int t = threadIdx.y * blockDim.x + threadIdx.x, nw = (blockDim.x * blockDim.y + 31) / 32;
#pragma unroll
    for (int s = 0; s < TB; s++) {
        for (int o = 16; o > 0; o >>= 1) acc[s] += __shfl_down_sync(0xffffffffu, acc[s], o);
        if ((t & 31) == 0) part[s][t >> 5] = acc[s];
    }
    __syncthreads();
    if (t < TB) {
        double sum = 0.0;
        for (int w = 0; w < nw; w++) sum += part[t][w];
        if (sum != 0.0) atomicAdd(ring + (n0 + t) % HG_TB_RING, sum);
    }
}
#endif

/* MINB: blocks per SM the registers must allow (2: 64 registers for 512 threads, at the price of spills) */
template <int TB, int TBX, int TBY, int MINB = 1>
__global__ void __launch_bounds__(TBX *TBY, MINB)
    hg_tb_kernel(hg_tb_args g, const float *__restrict__ P, float *__restrict__ Q,
                 const float *__restrict__ A, const float *__restrict__ B, const float *__restrict__ C,
                 const float *__restrict__ BND, const float *__restrict__ W1, double *ring)
{
    constexpr int OW = TBX - 2 * TB, OH = TBY - 2 * TB, W = TBX + 2, PL = hg_tb_plane<TBX, TBY>();
    float *sm = hg_tb_smem();
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int k = g.ub2 - TB + (int)blockIdx.x * OW + tx, j = g.ub1 - TB + (int)blockIdx.y * OH + ty;
    const int zlo = g.ub0 + (int)blockIdx.z * g.chunk, zhi = min(zlo + g.chunk, g.ue0);
    const bool ld = k >= 0 && k < g.ext2 && j >= 0 && j < g.ext1;
    const bool in_jk = k >= g.ub2 && k < g.ue2 && j >= g.ub1 && j < g.ue1;
    const bool own = in_jk && tx >= TB && tx < TBX - TB && ty >= TB && ty < TBY - TB;
    const int my = (ty + 1) * W + tx + 1;
    const size_t x0 = ld ? (size_t)j * g.sj + (size_t)k : 0, v = g.v;
    for (int x = ty * TBX + tx; x < TB * 3 * PL; x += TBX * TBY) sm[x] = 0.0f;
    __syncthreads();
    float cq[TB + 1][12] = {};    /* cq[s]: the coefficients of plane zi - s */
    float pn = 0.0f, cn[12] = {}; /* plane zi + 1, in flight during march zi */
    double acc[TB];
#pragma unroll
    for (int s = 0; s < TB; s++) acc[s] = 0.0;
    auto load = [&](int z) {
        pn = 0.0f;
        if (ld && z >= 0 && z < g.ext0 && z < zhi + TB) {
            const size_t x = (size_t)z * g.si + x0;
            pn = P[x];
            if (in_jk)
                cn[0] = A[x], cn[1] = A[v + x], cn[2] = A[2 * v + x], cn[3] = A[3 * v + x], cn[4] = B[x],
                cn[5] = B[v + x], cn[6] = B[2 * v + x], cn[7] = C[x], cn[8] = C[v + x], cn[9] = C[2 * v + x],
                cn[10] = BND[x], cn[11] = W1[x];
        }
    };
    /* plane c of stage s in the ring: c >= zlo - 2 TB - 1 >= -5 */
#define HG_TB_AT(s, c) (sm + ((s)*3 + ((c) + 9) % 3) * PL)
    load(zlo - TB);
    for (int zi = zlo - TB; zi < zhi + TB; zi++) {
        const float p0 = pn;
#pragma unroll
        for (int e = 0; e < 12; e++) cq[0][e] = cn[e];
        load(zi + 1);
        HG_TB_AT(0, zi)[my] = p0;
        __syncthreads();
#pragma unroll
        for (int s = 1; s <= TB; s++) {
            const int c = zi - s;
            const float *pm = HG_TB_AT(s - 1, c - 1), *pc = HG_TB_AT(s - 1, c), *pp = HG_TB_AT(s - 1, c + 1);
            float val = pc[my];
            /* the stage's cone: the planes, rows and columns the later stages read (whole warps skip
             * rows) */
            if (in_jk && c >= g.ub0 && c < g.ue0 && c >= zlo - (TB - s) && c < zhi + (TB - s) && ty >= s &&
                ty < TBY - s && tx >= s && tx < TBX - s) {
                const float *ca = cq[s];
                /* hg_jacobi_kernel's expression: i +- 1 is pp / pm, j +- 1 is my +- W, k +- 1 is my +- 1 */
                float s0 = ca[0] * pp[my] + ca[1] * pc[my + W] + ca[2] * pc[my + 1] +
                           ca[4] * (pp[my + W] - pp[my - W] - pm[my + W] + pm[my - W]) +
                           ca[5] * (pc[my + W + 1] - pc[my - W + 1] - pc[my + W - 1] + pc[my - W - 1]) +
                           ca[6] * (pp[my + 1] - pm[my + 1] - pp[my - 1] + pm[my - 1]) + ca[7] * pm[my] +
                           ca[8] * pc[my - W] + ca[9] * pc[my - 1] + ca[11];
                float ss = (s0 * ca[3] - pc[my]) * ca[10];
                if (own && c >= zlo && c < zhi) acc[s - 1] += (double)ss * (double)ss;
                val = pc[my] + g.omega * ss;
            }
            if (s < TB) {
                HG_TB_AT(s, c)[my] = val;
                __syncthreads();
            } else if (own && c >= zlo && c < zhi) {
                Q[(size_t)c * g.si + x0] = val;
            }
        }
        /* one stage: the next march's stage 0 overwrites the plane this march's stage 1 read (ring of 3) */
        if (TB == 1) __syncthreads();
#pragma unroll
        for (int s = TB; s > 0; s--)
#pragma unroll
            for (int e = 0; e < 12; e++) cq[s][e] = cq[s - 1][e];
    }
#undef HG_TB_AT
    hg_tb_sum<TB>(acc, ring, g.n0);
    /* the next pass's slots, zeroed for it (it starts after this pass ends) */
    if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && tx == 0 && ty == 0)
        for (int s = 0; s < 3; s++) ring[(g.n0 + TB + s) % HG_TB_RING] = 0.0;
}

#endif
