/* ky_stencil_gpu: the stencil kernels (7- and 27-point, z-marching threads), the temporal-blocking step
 * ranges, initial values and the CPU reference. Built with -fmad=false so the GPU does the same IEEE
 * operations in the same order as the CPU: every variant, the single-GPU run and the CPU agree exactly. */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include <cuda_pipeline.h>

#include "stencil_gpu.h"
#include "stencil_point.h"

void sg_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ky_stencil_gpu: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

double sg_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double sg_init_value(int z, int y, int x)
{
    return init_value(z, y, x);
}

double sg_flops_per_point(int pts)
{
    return pts == 7 ? 8.0 : 30.0;
}

enum { BX = 64 };

/* Partial sums of one plane for the 27-point kernel (see point<27>): q is this lane's point of the plane.
 * Each lane loads its own three rows (aligned); the x-1 and x+1 values come from the neighbouring lanes.
 * Lane 0 and lane 31 load the x-1 resp. x+1 column just outside the warp instead (halo, where it lies in
 * the row) and use it in place of the shuffled value. All 32 lanes must call this. */
__device__ static inline void plane27(const double *__restrict__ q, size_t X, int lane, bool halo, int hoff,
                                      double &C, double &F4, double &K4)
{
    const unsigned full = 0xffffffffu;
    double r0 = __ldg(q - X), r1 = __ldg(q), r2 = __ldg(q + X);
    double h0 = 0.0, h1 = 0.0, h2 = 0.0;
    if (halo) {
        h0 = __ldg(q + hoff - X);
        h1 = __ldg(q + hoff);
        h2 = __ldg(q + hoff + X);
    }
    double col = r0 + r2, hcol = h0 + h2;
    double cm = __shfl_up_sync(full, r1, 1), colm = __shfl_up_sync(full, col, 1);
    double cp = __shfl_down_sync(full, r1, 1), colp = __shfl_down_sync(full, col, 1);
    if (lane == 0) {
        cm = h1;
        colm = hcol;
    }
    if (lane == 31) {
        cp = h1;
        colp = hcol;
    }
    C = r1;
    F4 = (col + cm) + cp;
    K4 = colm + colp;
}

/* Planes [p_lo, p_hi) of the buffer, interior x and y. Each thread marches ZCHUNK planes. Threads start at
 * x = 0 (idle on the two x faces) so that a warp's 32 doubles are two whole 128-byte lines of a row
 * (rows of a multiple of 16 doubles): starting at x = 1 made every warp touch three lines and write two of
 * them partially. The 7-point kernel keeps the z column in registers (the plane below, this one, the one
 * above) and loads only the next plane's value and the four in-plane neighbours per point; the sums are
 * the same as point<7> in the same order, so results stay bitwise equal to the CPU's. */
template <int PTS, int BY>
__global__ void __launch_bounds__(BX *BY) k_stencil(const double *__restrict__ src, double *__restrict__ dst,
                                                    int nx, int ny, int p_lo, int p_hi, int zchunk)
{
    int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y + 1;
    if (y >= ny - 1) return; /* whole warps: a warp is 32 x of one row */
    size_t P = (size_t)nx * ny, X = (size_t)nx;
    int z0 = p_lo + (int)blockIdx.z * zchunk, z1 = min(z0 + zchunk, p_hi);
    if (z0 >= z1) return;
    if (PTS == 7) {
        if (x < 1 || x >= nx - 1) return;
        size_t i = (size_t)z0 * P + (size_t)y * X + x;
        double below = __ldg(src + i - P), here = __ldg(src + i);
        for (int z = z0; z < z1; z++, i += P) {
            double above = __ldg(src + i + P);
            dst[i] = 0.4 * here + 0.1 * (below + above + __ldg(src + i - X) + __ldg(src + i + X) +
                                         __ldg(src + i - 1) + __ldg(src + i + 1));
            below = here;
            here = above;
        }
    } else {
        /* 27-point: the 9-load-per-point version was bound by L1 loads (57% of the roofline). Now each new
         * plane costs 3 aligned loads per lane plus shuffles: C, F4 and K4 of the planes below (a), here (b)
         * and above (c) stay in registers. The lanes of a warp shuffle, so none may leave early: a warp
         * past the row returns whole; lanes past nx-1 load x = nx-1 and do not store; lanes 0 and 31 load
         * the column outside the warp (never outside the row). */
        int lane = (int)(threadIdx.x & 31u);
        if (x - lane >= nx) return;
        int xc = min(x, nx - 1);
        bool halo = (lane == 0 && x >= 1) || (lane == 31 && x + 1 <= nx - 1);
        int hoff = lane == 0 ? -1 : 1;
        bool store = x >= 1 && x <= nx - 2;
        size_t i = (size_t)z0 * P + (size_t)y * X + xc;
        double Ca, Fa, Ka, Cb, Fb, Kb, Cc, Fc, Kc;
        plane27(src + i - P, X, lane, halo, hoff, Ca, Fa, Ka);
        plane27(src + i, X, lane, halo, hoff, Cb, Fb, Kb);
        for (int z = z0; z < z1; z++, i += P) {
            plane27(src + i + P, X, lane, halo, hoff, Cc, Fc, Kc);
            double f = (Ca + Cc) + Fb;
            double e = (Fa + Fc) + Kb;
            double k = Ka + Kc;
            if (store) dst[i] = 0.2 * Cb + 0.05 * f + 0.02 * e + 0.01 * k;
            Ca = Cb;
            Fa = Fb;
            Ka = Kb;
            Cb = Cc;
            Fb = Fc;
            Kb = Kc;
        }
    }
}

/* The 27-point kernel with RY rows per thread. Both kernels were bound by L2 bandwidth (ncu on H200: L2
 * 79% busy, DRAM 55%, 68% of stalls waiting on loads): each row of a plane was loaded by the three warps
 * whose points touch it. A thread that computes RY consecutive rows loads RY + 2 rows per plane instead of
 * 3 RY. Same sums in the same order as plane27 / point<27>. Rows past ny - 1 are clamped, never stored. */
/* Loads of one plane for the 27-point kernel: RY + 2 rows at this lane's x (rows past ny - 1 clamped to
 * it), and for lanes 0 / 31 the same rows of the column beside the warp. */
template <int RY>
__device__ static inline void load27(const double *__restrict__ q, size_t X, bool halo, int hoff, int rmax,
                                     double (&r)[RY + 2], double (&h)[RY + 2])
{
#pragma unroll
    for (int k = 0; k < RY + 2; k++) {
        long ro = (long)min(k - 1, rmax) * (long)X;
        r[k] = __ldg(q + ro);
        h[k] = halo ? __ldg(q + ro + hoff) : 0.0;
    }
}

/* The plane's partial sums (see point<27>) for RY rows; x +- 1 from the neighbouring lanes. */
template <int RY>
__device__ static inline void sums27(const double (&r)[RY + 2], const double (&h)[RY + 2], int lane,
                                     double (&C)[RY], double (&F4)[RY], double (&K4)[RY])
{
    const unsigned full = 0xffffffffu;
#pragma unroll
    for (int j = 0; j < RY; j++) {
        double col = r[j] + r[j + 2], hcol = h[j] + h[j + 2];
        double cm = __shfl_up_sync(full, r[j + 1], 1), colm = __shfl_up_sync(full, col, 1);
        double cp = __shfl_down_sync(full, r[j + 1], 1), colp = __shfl_down_sync(full, col, 1);
        if (lane == 0) cm = h[j + 1], colm = hcol;
        if (lane == 31) cp = h[j + 1], colp = hcol;
        C[j] = r[j + 1];
        F4[j] = (col + cm) + cp;
        K4[j] = colm + colp;
    }
}

/* The 27-point kernel with RY rows per thread and the next plane's loads in flight while this one is
 * summed. Both kernels were bound by L2 bandwidth (ncu on H200: L2 79% busy, DRAM 55%, 68% of stalls
 * waiting on loads): each row of a plane was loaded by the three warps whose points touch it. A thread
 * that computes RY consecutive rows loads RY + 2 rows per plane instead of 3 RY; the prefetch hides the
 * latency that fewer, fatter threads expose. Same sums in the same order as point<27>. */
template <int BY, int RY>
__global__ void __launch_bounds__(BX *BY)
    k_stencil27r(const double *__restrict__ src, double *__restrict__ dst, int nx, int ny, int p_lo, int p_hi,
                 int zchunk)
{
    int x = blockIdx.x * BX + threadIdx.x, y0 = (blockIdx.y * BY + threadIdx.y) * RY + 1;
    if (y0 >= ny - 1) return; /* whole warps */
    size_t P = (size_t)nx * ny, X = (size_t)nx;
    int z0 = p_lo + (int)blockIdx.z * zchunk, z1 = min(z0 + zchunk, p_hi);
    if (z0 >= z1) return;
    int lane = (int)(threadIdx.x & 31u);
    if (x - lane >= nx) return;
    int xc = min(x, nx - 1), rmax = ny - 1 - y0, nrows = min(RY, ny - 1 - y0);
    bool halo = (lane == 0 && x >= 1) || (lane == 31 && x + 1 <= nx - 1);
    int hoff = lane == 0 ? -1 : 1;
    bool store = x >= 1 && x <= nx - 2;
    size_t i = (size_t)z0 * P + (size_t)y0 * X + xc;
    double Ca[RY], Fa[RY], Ka[RY], Cb[RY], Fb[RY], Kb[RY], Cc[RY], Fc[RY], Kc[RY];
    double r[RY + 2], h[RY + 2], rn[RY + 2], hn[RY + 2];
    load27<RY>(src + i - P, X, halo, hoff, rmax, r, h);
    sums27<RY>(r, h, lane, Ca, Fa, Ka);
    load27<RY>(src + i, X, halo, hoff, rmax, r, h);
    sums27<RY>(r, h, lane, Cb, Fb, Kb);
    load27<RY>(src + i + P, X, halo, hoff, rmax, r, h);
    for (int z = z0; z < z1; z++, i += P) {
        if (z + 1 < z1) load27<RY>(src + i + 2 * P, X, halo, hoff, rmax, rn, hn); /* plane z + 2 <= p_hi */
        sums27<RY>(r, h, lane, Cc, Fc, Kc);
#pragma unroll
        for (int j = 0; j < RY; j++) {
            double f = (Ca[j] + Cc[j]) + Fb[j];
            double e = (Fa[j] + Fc[j]) + Kb[j];
            double k = Ka[j] + Kc[j];
            if (store && j < nrows) dst[i + (size_t)j * X] = 0.2 * Cb[j] + 0.05 * f + 0.02 * e + 0.01 * k;
            Ca[j] = Cb[j], Fa[j] = Fb[j], Ka[j] = Kb[j];
            Cb[j] = Cc[j], Fb[j] = Fc[j], Kb[j] = Kc[j];
        }
#pragma unroll
        for (int k = 0; k < RY + 2; k++) r[k] = rn[k], h[k] = hn[k];
    }
}

/* The 27-point kernel with the block's planes staged in shared memory. The register kernels above still
 * loaded 1.6 values per point from L2 (the RY + 2 rows of each thread, lanes 0 / 31's extra column) and
 * needed each thread's own prefetch registers to hide the latency. Here the block copies each plane's tile
 * (BY * RY + 2 rows of 64 + 4 doubles) with cp.async 16-byte copies, S - 1 planes ahead (S = 4 or 8), so
 * every value comes from L2 about 1.13 times and the copies in flight hold no registers. Each thread reads
 * its column and both neighbours from shared memory (no shuffles: the shuffle version spent 72% of its issue
 * slots on shuffles, selects and copy addressing) and sums them exactly as point<27> does (bitwise equal). A
 * thread's copies are the same in every plane, so their offsets are computed once. Needs nx even (16-byte
 * aligned rows); copies outside the grid are zero-filled and feed only points that are never stored.
 * Measured on H200 at 512^3 (2026-11-24): 78% of the roofline with 4 x 4 rows, 8 planes per block, 4 stages;
 * ncu: L2 84% busy, DRAM 64%, so the L2 traffic of the tile halos and the z overlap is what is left
 * (128-wide tiles, 8 stages, 8 x 4 rows, longer z chunks and evict-first (.cs) stores were all slower). */
template <int BW, int BY, int RY, int S>
__global__ void __launch_bounds__(BW *BY)
    k_stencil27s(const double *__restrict__ src, double *__restrict__ dst, int nx, int ny, int p_lo, int p_hi,
                 int zchunk)
{
    constexpr int TR = BY * RY + 2, TW = BW + 4,
                  TC = TW / 2; /* tile rows, doubles and 16-byte chunks per row */
    constexpr int NT = BW * BY, NC = (TR * TC + NT - 1) / NT; /* threads, copies per thread and plane */
    extern __shared__ double2 sg_tile2[];
    double *tile = (double *)sg_tile2;
    int xb = blockIdx.x * BW,
        yb = blockIdx.y * BY * RY + 1; /* tile column 0 is x = xb - 2, row 0 is y = yb - 1 */
    size_t P = (size_t)nx * ny, X = (size_t)nx;
    int z0 = p_lo + (int)blockIdx.z * zchunk, z1 = min(z0 + zchunk, p_hi);
    if (z0 >= z1) return; /* the whole block */
    int n = z1 - z0 + 2, tid = threadIdx.y * BW + threadIdx.x;
    int soff[NC], goff[NC]; /* this thread's copies: tile offset, plane offset (-1: zero-fill, -2: none) */
#pragma unroll
    for (int j = 0; j < NC; j++) {
        int c = tid + j * NT, row = c / TC, col = (c - row * TC) * 2, gy = yb - 1 + row, gx = xb - 2 + col;
        soff[j] = row * TW + col;
        goff[j] = c >= TR * TC ? -2 : (gy < ny && gx >= 0 && gx < nx) ? gy * nx + gx : -1;
    }
    auto issue = [&](int k) { /* plane z0 - 1 + k into buffer k % S, one commit group per plane */
                              if (k < n) {
                                  double *t = tile + (k % S) * (TR * TW);
                                  const double *g0 = src + (size_t)(z0 - 1 + k) * P;
#pragma unroll
                                  for (int j = 0; j < NC; j++)
                                      if (goff[j] != -2)
                                          __pipeline_memcpy_async(t + soff[j],
                                                                  goff[j] >= 0 ? g0 + goff[j] : src, 16,
                                                                  goff[j] >= 0 ? 0 : 16);
                              }
                              __pipeline_commit();
    };
    for (int k = 0; k < S - 1; k++) issue(k);
    int x = xb + (int)threadIdx.x, y0 = yb + (int)threadIdx.y * RY, nrows = min(RY, ny - 1 - y0);
    bool store = x >= 1 && x <= nx - 2;
    double Ca[RY], Fa[RY], Ka[RY], Cb[RY], Fb[RY], Kb[RY], Cc[RY], Fc[RY], Kc[RY];
    double *out = dst + (size_t)(z0 - 1) * P + (size_t)y0 * X + x; /* the plane before the middle one */
    for (int k = 0; k < n; k++, out += P) {
        __pipeline_wait_prior(S - 2); /* this thread's copies of plane k are done */
        __syncthreads();              /* everyone's are, and everyone is done with buffer (k - 1) % S */
        issue(k + S - 1);
        const double *t = tile + (k % S) * (TR * TW) + threadIdx.y * RY * TW + threadIdx.x + 2;
        double l[RY + 2], m[RY + 2], r[RY + 2]; /* x - 1, x, x + 1 of rows y0 - 1 .. y0 + RY */
#pragma unroll
        for (int q = 0; q < RY + 2; q++) {
            l[q] = t[q * TW - 1];
            m[q] = t[q * TW];
            r[q] = t[q * TW + 1];
        }
#pragma unroll
        for (int j = 0; j < RY; j++) { /* point<27>'s plane sums: C, F4 = (col2(0) + x-1) + x+1, K4 */
            double cm = l[j] + l[j + 2], c0 = m[j] + m[j + 2], cp = r[j] + r[j + 2];
            Cc[j] = m[j + 1];
            Fc[j] = (c0 + l[j + 1]) + r[j + 1];
            Kc[j] = cm + cp;
        }
#pragma unroll
        for (int j = 0; j < RY; j++) {
            if (k >= 2 && store && j < nrows) {
                double f = (Ca[j] + Cc[j]) + Fb[j];
                double e = (Fa[j] + Fc[j]) + Kb[j];
                double kk = Ka[j] + Kc[j];
                out[(size_t)j * X - P] = 0.2 * Cb[j] + 0.05 * f + 0.02 * e + 0.01 * kk;
            }
            Ca[j] = Cb[j], Fa[j] = Fb[j], Ka[j] = Kb[j];
            Cb[j] = Cc[j], Fb[j] = Fc[j], Kb[j] = Kc[j];
        }
    }
}

template <int BW, int BY, int RY, int S>
static void launch27s_(dim3 grid, cudaStream_t s, const double *src, double *dst, int nx, int ny, int lo,
                       int hi, int zc)
{
    size_t bytes = (size_t)S * (BY * RY + 2) * (BW + 4) * sizeof(double);
    SG_CUDA(cudaFuncSetAttribute(k_stencil27s<BW, BY, RY, S>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)bytes));
    grid.x = (unsigned)((nx + BW - 1) / BW);
    k_stencil27s<BW, BY, RY, S><<<grid, dim3(BW, BY, 1), bytes, s>>>(src, dst, nx, ny, lo, hi, zc);
}

template <int BY, int RY>
static void launch27s(int stages, dim3 grid, cudaStream_t s, const double *src, double *dst, int nx, int ny,
                      int lo, int hi, int zc)
{
    if (stages == 8)
        launch27s_<64, BY, RY, 8>(grid, s, src, dst, nx, ny, lo, hi, zc);
    else
        launch27s_<64, BY, RY, 4>(grid, s, src, dst, nx, ny, lo, hi, zc);
}

__global__ void k_init(double *a, double *b, int nx, int ny, int zg0, int nplanes, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, p = blockIdx.z;
    if (x >= nx) return;
    int z = zg0 + p;
    double v = (z >= 0 && z < nz) ? init_value(z, y, x) : 0.0;
    size_t i = ((size_t)p * ny + y) * nx + x;
    a[i] = v;
    b[i] = v;
}

void sg_init_sub(const sg_prob_t *p, sg_sub_t *d)
{
    SG_CUDA(cudaSetDevice(d->dev));
    int np = d->nz + 2 * d->h;
    dim3 grid((p->nx + 127) / 128, p->ny, np);
    k_init<<<grid, 128, 0, d->s>>>(d->src, d->dst, p->nx, p->ny, d->z0 - d->h, np, p->nz);
    SG_CUDA(cudaGetLastError());
}

/* The kernel and its shape: what the options name, and for what they leave open (0 / -1) the best measured
 * on H200 (2026-11-24, 512^3): 7-point 4 thread rows x 8 planes per block (86% of the roofline);
 * 27-point shared-memory tiles, 4 stages, 4 thread rows x 4 grid rows x 8 planes (78%; the register kernel
 * with 4 rows per thread 72.6%, one row 57%), or where those cannot run (odd nx) the register kernel with 8
 * thread rows x 4 rows x 64 planes. st: shared-memory stages, 0 for the register kernels. */
static void tuning(const sg_prob_t *p, int *zc, int *by, int *ry, int *st)
{
    int fits = p->nx % 2 == 0 && p->block_y != 2 && (p->rows == -1 || p->rows == 2 || p->rows == 4);
    *st = p->pts != 27 ? 0 : p->smem < 0 ? (fits ? 4 : 0) : p->smem == 1 ? 4 : p->smem;
    *zc = p->zchunk > 0 ? p->zchunk : p->pts == 7 || *st ? 8 : 64; /* -1 is the blocked kernels' */
    *by = p->block_y ? p->block_y : p->pts == 7 || *st ? 4 : 8;
    *ry = p->pts == 27 ? (p->rows >= 0 ? p->rows : 4) : 1;
}

void sg_clip(const sg_prob_t *p, const sg_sub_t *d, int *lo, int *hi)
{
    int glo = d->z0 - d->h + *lo, ghi = d->z0 - d->h + *hi; /* keep off the fixed global faces */
    if (glo < 1) *lo += 1 - glo;
    if (ghi > p->nz - 1) *hi -= ghi - (p->nz - 1);
}

void sg_launch(const sg_prob_t *p, const sg_sub_t *d, cudaStream_t s, const double *src_, double *dst, int lo,
               int hi)
{
    double *src = (double *)src_; /* the kernels take both as plain pointers */
    sg_clip(p, d, &lo, &hi);
    if (hi <= lo) return;
    int zc, by, ry, st;
    tuning(p, &zc, &by, &ry, &st);
    int rg = ry > 0 ? ry : 1; /* grid rows per thread */
    dim3 grid((p->nx + BX - 1) / BX, (p->ny - 2 + by * rg - 1) / (by * rg), (hi - lo + zc - 1) / zc);
    dim3 block(BX, by, 1);
#define SG_LAUNCH(PTS, BY) k_stencil<PTS, BY><<<grid, block, 0, s>>>(src, dst, p->nx, p->ny, lo, hi, zc)
#define SG_LAUNCH_R(BY, RY) k_stencil27r<BY, RY><<<grid, block, 0, s>>>(src, dst, p->nx, p->ny, lo, hi, zc)
    if (st) { /* shared-memory tiles */
        if (by == 8 && ry == 4)
            launch27s<8, 4>(st, grid, s, src, dst, p->nx, p->ny, lo, hi, zc);
        else if (by == 8)
            launch27s<8, 2>(st, grid, s, src, dst, p->nx, p->ny, lo, hi, zc);
        else if (ry == 4)
            launch27s<4, 4>(st, grid, s, src, dst, p->nx, p->ny, lo, hi, zc);
        else
            launch27s<4, 2>(st, grid, s, src, dst, p->nx, p->ny, lo, hi, zc);
    } else if (p->pts == 7) {
        if (by == 8)
            SG_LAUNCH(7, 8);
        else if (by == 2)
            SG_LAUNCH(7, 2);
        else
            SG_LAUNCH(7, 4);
    } else if (ry == 0) { /* the one-row kernel without prefetch (kept for comparison) */
        if (by == 8)
            SG_LAUNCH(27, 8);
        else if (by == 2)
            SG_LAUNCH(27, 2);
        else
            SG_LAUNCH(27, 4);
    } else if (ry == 1) {
        if (by == 8)
            SG_LAUNCH_R(8, 1);
        else if (by == 2)
            SG_LAUNCH_R(2, 1);
        else
            SG_LAUNCH_R(4, 1);
    } else if (ry == 2) {
        if (by == 8)
            SG_LAUNCH_R(8, 2);
        else if (by == 2)
            SG_LAUNCH_R(2, 2);
        else
            SG_LAUNCH_R(4, 2);
    } else {
        if (by == 8)
            SG_LAUNCH_R(8, 4);
        else if (by == 2)
            SG_LAUNCH_R(2, 4);
        else
            SG_LAUNCH_R(4, 4);
    }
#undef SG_LAUNCH_R
#undef SG_LAUNCH
    SG_CUDA(cudaGetLastError());
}

void sg_step_range(const sg_prob_t *p, const sg_sub_t *d, int tt, int *lo, int *hi)
{
    int ext = p->bt - 1 - tt; /* planes of redundant computation left on each side */
    *lo = d->h - (d->has_lo ? ext : 0);
    *hi = d->h + d->nz + (d->has_hi ? ext : 0);
    sg_clip(p, d, lo, hi);
}

void sg_block_steps(const sg_prob_t *p, sg_sub_t *d)
{
    SG_CUDA(cudaSetDevice(d->dev));
    int tb = p->tb > 1 ? p->tb : 1;
    for (int tt = 0; tt < p->bt; tt += tb) {
        int lo[4], hi[4];
        for (int k = 0; k < tb; k++) sg_step_range(p, d, tt + k, &lo[k], &hi[k]);
        if (tb > 1 || sg_tb_staged(p))
            sg_launch_tb(p, d, d->s, d->src, d->dst, lo, hi);
        else
            sg_launch(p, d, d->s, d->src, d->dst, lo[0], hi[0]);
        double *t = d->src;
        d->src = d->dst;
        d->dst = t;
    }
}

void sg_cpu_run(const sg_prob_t *p, double *a)
{
    size_t P = sg_plane(p), X = (size_t)p->nx, n = P * (size_t)p->nz;
    double *b = (double *)malloc(n * sizeof(double));
    if (!b) sg_die("no memory for the CPU reference");
    for (int z = 0; z < p->nz; z++)
        for (int y = 0; y < p->ny; y++)
            for (int x = 0; x < p->nx; x++) a[((size_t)z * p->ny + y) * X + x] = init_value(z, y, x);
    memcpy(b, a, n * sizeof(double));
    double *s = a, *d = b;
    for (int t = 0; t < p->steps; t++) {
        for (int z = 1; z < p->nz - 1; z++)
            for (int y = 1; y < p->ny - 1; y++)
                for (int x = 1; x < p->nx - 1; x++) {
                    size_t i = (size_t)z * P + (size_t)y * X + x;
                    d[i] = p->pts == 7 ? point<7>(s, i, P, X) : point<27>(s, i, P, X);
                }
        double *t2 = s;
        s = d;
        d = t2;
    }
    if (s != a) memcpy(a, s, n * sizeof(double));
    free(b);
}
