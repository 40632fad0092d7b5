/* ky_stencil_gpu: the staged 27-point kernel of temporal blocking inside the kernel (--tb-kernel staged;
 * launched by tblock.cu, run on the CPU by tblock_emu.cpp). The same stages, tiles, work split and ranges
 * as k_tb27u (tblock_kernels.cuh: read its top first), the same sums in the same order (point<27>), so
 * bitwise equal to it, the single-step kernels and the CPU. What differs is how a plane reaches a stage:
 *   - stage 0 is never in registers: the block copies each plane of its tile from global to shared memory
 *     with asynchronous copies (cp.async, 16 bytes where nx is even, else 8), S - 1 planes ahead into a ring
 *     of S planes. Three planes in flight cost no registers (k_tb27u held its prefetch, 2 planes x RY rows,
 *     in registers), and stage 1 reads the plane in the iteration it arrives: stage s lags stage s - 1 by
 *     two planes, stage 1 the load by one (the last stage writes plane zi - 2 TB + 1);
 *   - each thread sums RY consecutive rows of one column from the 3 x (RY + 2) values around them: per
 *     point and stage 3 (RY + 2) / RY shared loads (4.5 with 4 rows, k_tb27u's 2 rows 6) plus one store
 *     per point of every stage but the last (k_tb27u stored stage 0 too);
 *   - shared-memory rows are 68 doubles (the 64 columns, one each side for the x neighbours, and room to
 *     start the row at an even x so that the 16-byte copies are aligned).
 * With tb 1 the kernel is a single-step kernel too (stage 1 writes to global memory): tiles of 64 x 4 RY
 * columns x rows stream z chunks (or persistent shares) with less halo than k_stencil27s's 64 x 16 tiles
 * and 8-plane chunks re-read. */
#ifndef KY_STENCIL_GPU_TBLOCK27S_CUH
#define KY_STENCIL_GPU_TBLOCK27S_CUH

#ifndef SG_TB_EMULATION
#include <cuda_pipeline.h>
#endif

#include "tblock_kernels.cuh"

/* a plane of the tile in shared memory: TBY * RY + 2 rows of 68 doubles */
constexpr int TBS_TW = 68;
template <int TBY, int RY>
__host__ __device__ constexpr int tbs_plane()
{
    return (TBY * RY + 2) * TBS_TW;
}
/* the block's doubles of shared memory: the ring of S planes of stage 0, two planes per stage 1 .. TB-1 */
template <int TB, int TBY, int RY, int S>
__host__ __device__ constexpr int tbs_doubles()
{
    return (S + 2 * (TB - 1)) * tbs_plane<TBY, RY>();
}

/* The copies of one plane of the tile: chunks of VEC doubles, chunk c of a plane at shared offset c * VEC
 * (rows of 68 doubles are 68 / VEC chunks), thread tid copying chunks tid, tid + NT, ...; their plane offsets
 * (-1: outside the grid, zero-filled; -2: no chunk) are the same for every plane of a segment. */
template <int TBY, int RY, int VEC>
struct tbs_copies_t {
    static constexpr int NT = 64 * TBY, CPR = TBS_TW / VEC, NCH = (TBY * RY + 2) * CPR,
                         NC = (NCH + NT - 1) / NT;
    int goff[NC];
    /* xs: the global x of shared column 0 (even); y0: the global y of shared row 0 */
    __device__ void setup(int nx, int ny, int xs, int y0)
    {
        int tid = (int)(threadIdx.y * blockDim.x + threadIdx.x);
#pragma unroll
        for (int k = 0; k < NC; k++) {
            int c = tid + k * NT, row = c / CPR, gy = y0 + row, gx = xs + (c - row * CPR) * VEC;
            /* nx even: VEC 2 chunks start at even x, so they lie in the row or outside it whole */
            goff[k] = c >= NCH ? -2 : gy >= 0 && gy < ny && gx >= 0 && gx < nx ? gy * nx + gx : -1;
        }
    }
    /* plane z (zero outside [0, zend)) into t; one commit group per plane, even where nothing is copied */
    __device__ void issue(const double *__restrict__ src, size_t P, int z, int zend, double *t) const
    {
        bool zok = z >= 0 && z < zend;
        const double *g = zok ? src + (size_t)z * P : src;
        int tid = (int)(threadIdx.y * blockDim.x + threadIdx.x);
#pragma unroll
        for (int k = 0; k < NC; k++)
            if (goff[k] != -2) {
                bool in = zok && goff[k] >= 0;
                __pipeline_memcpy_async(t + (tid + k * NT) * VEC, in ? g + goff[k] : src,
                                        VEC * sizeof(double), in ? 0 : VEC * sizeof(double));
            }
        __pipeline_commit();
    }
};

template <int TB, int RY>
struct tbs_regs_t {
    double C[TB][2][RY], F[TB][2][RY], K[TB][2][RY]; /* per stage: slot PH % 2 plane below, other: at */
};

/* One z iteration (PH: its phase, so that every ring slot is a compile-time offset; S divides 4). Stage s + 1
 * computes plane zi - 2s - 1 from stage s's plane zi - 2s (s = 0: the ring slot that just arrived; else the
 * plane stage s wrote in the previous iteration) and the partial sums of the two planes below it. */
template <int TB, int TBY, int RY, int S, int VEC, int PH>
__device__ static inline void tbs_plane_step(tbs_regs_t<TB, RY> &g, const tb_thread_t<TB, TBY, RY> &t,
                                             const tbs_copies_t<TBY, RY, VEC> &cp, double *sm, int my,
                                             const double *__restrict__ src, double *&st, size_t P, int zi,
                                             int zend, int zlo, const tb_ranges_t &r, unsigned mask)
{
    constexpr int TW = TBS_TW, PL = tbs_plane<TBY, RY>();
    constexpr int A = PH % 2, BB = (PH + 1) % 2; /* the slots of the planes below (a) and at (b) */
    __pipeline_wait_prior(S - 2);                /* this thread's copies of plane zi are done */
    __syncthreads(); /* everyone's are, the previous iteration's planes are written and its reads done */
    cp.issue(src, P, zi + S - 1, zend, sm + (PH + S - 1) % S * PL); /* the slot plane zi - 1 had */
    double v[RY];
#pragma unroll
    for (int s = 0; s < TB; s++) {
        const double *rb = sm + my + (s == 0 ? PH % S : S + 2 * (s - 1) + BB) * PL;
        double l[RY + 2], m[RY + 2], rr[RY + 2]; /* x - 1, x, x + 1 of rows -1 .. RY */
#pragma unroll
        for (int q = 0; q < RY + 2; q++) {
            l[q] = rb[(q - 1) * TW - 1];
            m[q] = rb[(q - 1) * TW];
            rr[q] = rb[(q - 1) * TW + 1];
        }
        int zo = zi - 2 * s - 1; /* stage s + 1 computes this plane */
        bool zin = zo >= r.lo[s] && zo < r.hi[s];
#pragma unroll
        for (int j = 0; j < RY; j++) {
            /* point<27>'s plane sums of the plane above: C, F4 = (col2(0) + x-1) + x+1, K4 */
            double cm = l[j] + l[j + 2], c0 = m[j] + m[j + 2], cpl = rr[j] + rr[j + 2];
            double Cc = m[j + 1], Fc = (c0 + l[j + 1]) + rr[j + 1], Kc = cm + cpl;
            double f = (g.C[s][A][j] + Cc) + g.F[s][BB][j];
            double e = (g.F[s][A][j] + Fc) + g.K[s][BB][j];
            double k = g.K[s][A][j] + Kc;
            double c = 0.2 * g.C[s][BB][j] + 0.05 * f + 0.02 * e + 0.01 * k;
            v[j] = zin && (mask >> (s * RY + j) & 1u) ? c : g.C[s][BB][j]; /* else the value passes through */
            g.C[s][A][j] = Cc, g.F[s][A][j] = Fc, g.K[s][A][j] = Kc;
        }
        if (s + 1 < TB) { /* stage s + 1's buffer, slot of this phase */
            double *wb = sm + my + (S + 2 * s + A) * PL;
#pragma unroll
            for (int j = 0; j < RY; j++) wb[j * TW] = v[j];
        }
    }
    if (zi - 2 * TB + 1 >= zlo) { /* st: plane zi - 2 TB + 1 */
#pragma unroll
        for (int j = 0; j < RY; j++)
            if (t.store[j]) st[t.off[j]] = v[j];
        st += P;
    }
}

template <int TB, int TBY, int RY, int S, int VEC>
__global__ void __launch_bounds__(64 * TBY, 1)
    k_tb27s(const double *__restrict__ src, double *__restrict__ dst, int nx, int ny, int np, tb_ranges_t r,
            int zchunk)
{
    static_assert(TBY != 32 && (S == 2 || S == 4) && (VEC == 1 || VEC == 2), "64-column tiles, S | 4");
    constexpr int PL = tbs_plane<TBY, RY>(), OW = 64 - 2 * TB, OH = TBY * RY - 2 * TB;
    double *sm = tb_smem();
    /* the stage buffers start as zeros (read before they are first written; the ring is always copied) */
    for (int i = (int)(threadIdx.y * blockDim.x + threadIdx.x); i < 2 * (TB - 1) * PL;
         i += (int)(blockDim.x * blockDim.y))
        sm[S * PL + i] = 0.0;
    size_t P = (size_t)nx * ny;
    tb_work_t<TB, TBY, RY> work(nx, ny, r, zchunk);
    for (int bx, by, zlo, zhi; work.next(nx, ny, r, bx, by, zlo, zhi);) {
        const tb_thread_t<TB, TBY, RY> t(nx, ny, bx, by);
        int zend = min(np, zhi + TB); /* planes the pass reads: [zlo - TB, zhi + TB) */
        unsigned mask = tb_stage_mask(t, ny);
        /* shared column 0 is global x xs, even and at most x - 2 of the tile's first column; row 0 is the
         * row above the tile */
        int gx0 = bx * OW + 1 - TB, xs = (gx0 - 1) & ~1, y0 = by * OH - TB;
        int my = (t.row0 + 1) * TBS_TW + t.gx - xs;
        tbs_copies_t<TBY, RY, VEC> cp;
        cp.setup(nx, ny, xs, y0);
        tbs_regs_t<TB, RY> g;
#pragma unroll
        for (int s = 0; s < TB; s++)
#pragma unroll
            for (int k = 0; k < 2; k++)
#pragma unroll
                for (int j = 0; j < RY; j++) g.C[s][k][j] = g.F[s][k][j] = g.K[s][k][j] = 0.0;
        int zi = zlo - TB, zstop = zhi + 2 * TB - 1;
#pragma unroll
        for (int k = 0; k < S - 1; k++) cp.issue(src, P, zi + k, zend, sm + k * PL);
        /* plane numbers below 0 only arise before the stores they would address are made */
        double *st = dst + (ptrdiff_t)zlo * (ptrdiff_t)P;
        for (;;) {
#define SG_TBS_PLANE(PH)                                                                           \
    tbs_plane_step<TB, TBY, RY, S, VEC, PH>(g, t, cp, sm, my, src, st, P, zi, zend, zlo, r, mask); \
    if (++zi >= zstop) break;
            SG_TBS_PLANE(0)
            SG_TBS_PLANE(1)
            SG_TBS_PLANE(2)
            SG_TBS_PLANE(3)
#undef SG_TBS_PLANE
        }
        /* the copies still in flight land before the next segment's, and every read of the ring is done */
        __pipeline_wait_prior(0);
        __syncthreads();
    }
}

#endif
