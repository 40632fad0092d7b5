/* ky_stencil_gpu: launching the temporal-blocking kernels of tblock_kernels.cuh and tblock27s.cuh (--tb,
 * --tb-kernel): the tile chosen at run time, the grid over the tile's written points and the z chunks of the
 * last step's range. */
#include <string.h>

#include "stencil_gpu.h"
#include "tblock27s.cuh"
#include "tblock_kernels.cuh"

template <int PTS, int TB, int TBY, int RY>
static void launch_tb(const sg_prob_t *p, int np, cudaStream_t s, const double *src, double *dst,
                      const tb_ranges_t &r, int zc)
{
    constexpr int TBX = tb_cols<TBY>();
    void (*kern)(const double *, double *, int, int, int, tb_ranges_t, int);
    if constexpr (PTS == 7)
        kern = p->tb_rolled ? k_tb7<TB, TBY, RY> : k_tb7u<TB, TBY, RY>;
    else
        kern = p->tb_rolled ? k_tb27<TB, TBY, RY> : k_tb27u<TB, TBY, RY>;
    size_t bytes = (size_t)2 * TB * tb_plane<TBY, RY>() * sizeof(double);
    static int resident[2]; /* per kernel: blocks per SM x SMs (the same kind of GPU on every rank) */
    int &res = resident[p->tb_rolled];
    SG_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    if (!res) {
        int dev, sms, per_sm;
        SG_CUDA(cudaGetDevice(&dev));
        SG_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        SG_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, TBX * TBY, bytes));
        res = sms * (per_sm > 0 ? per_sm : 1);
    }
    constexpr int OW = TBX - 2 * TB, OH = TBY * RY - 2 * TB;
    int span = r.hi[TB - 1] - r.lo[TB - 1];
    /* zc < 0: persistent blocks (the kernel's zchunk 0), as many as are resident at once */
    dim3 grid = zc > 0 ? dim3((unsigned)((p->nx - 2 + OW - 1) / OW), (unsigned)((p->ny - 2 + OH - 1) / OH),
                              (unsigned)((span + zc - 1) / zc))
                       : dim3((unsigned)res, 1, 1);
    kern<<<grid, dim3(TBX, TBY, 1), bytes, s>>>(src, dst, p->nx, p->ny, np, r, zc > 0 ? zc : 0);
}

template <int PTS, int TB>
static void launch_tb_shape(const sg_prob_t *p, int np, cudaStream_t s, const double *src, double *dst,
                            const tb_ranges_t &r, int zc, int by, int rows)
{
    /* 1024 threads in 64 registers: the 7-point stage with 2 rows per thread, the 27-point one with 1 */
    if constexpr (PTS == 7)
        if (by == 16) return launch_tb<PTS, TB, 16, 2>(p, np, s, src, dst, r, zc);
    if constexpr (PTS == 27) {
        if (by == 16) return launch_tb<PTS, TB, 16, 1>(p, np, s, src, dst, r, zc);
        if (by == 32) return launch_tb<PTS, TB, 32, 1>(p, np, s, src, dst, r, zc); /* 32 x 32 points */
        if (by == 12) return launch_tb<PTS, TB, 12, 2>(p, np, s, src, dst, r, zc); /* 768 threads */
    }
    if (by == 4 && rows == 4)
        launch_tb<PTS, TB, 4, 4>(p, np, s, src, dst, r, zc);
    else if (rows == 2)
        launch_tb<PTS, TB, 8, 2>(p, np, s, src, dst, r, zc);
    else
        launch_tb<PTS, TB, 8, 4>(p, np, s, src, dst, r, zc);
}

/* The staged 27-point kernel (tblock27s.cuh, --tb-kernel staged): 16-byte copies where nx is even, 8-byte
 * ones otherwise; 4 planes of stage 0 in shared memory (3 in flight). */
template <int TB, int TBY, int RY>
static void launch_tbs(const sg_prob_t *p, int np, cudaStream_t s, const double *src, double *dst,
                       const tb_ranges_t &r, int zc)
{
    constexpr int S = 4, OW = 64 - 2 * TB, OH = TBY * RY - 2 * TB;
    void (*kern)(const double *, double *, int, int, int, tb_ranges_t, int) =
        p->nx % 2 ? k_tb27s<TB, TBY, RY, S, 1> : k_tb27s<TB, TBY, RY, S, 2>;
    size_t bytes = (size_t)tbs_doubles<TB, TBY, RY, S>() * sizeof(double);
    static int resident[2]; /* per kernel (copy width) */
    int &res = resident[p->nx % 2];
    SG_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    if (!res) {
        int dev, sms, per_sm;
        SG_CUDA(cudaGetDevice(&dev));
        SG_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        SG_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 64 * TBY, bytes));
        res = sms * (per_sm > 0 ? per_sm : 1);
    }
    int span = r.hi[TB - 1] - r.lo[TB - 1];
    dim3 grid = zc > 0 ? dim3((unsigned)((p->nx - 2 + OW - 1) / OW), (unsigned)((p->ny - 2 + OH - 1) / OH),
                              (unsigned)((span + zc - 1) / zc))
                       : dim3((unsigned)res, 1, 1);
    kern<<<grid, dim3(64, TBY, 1), bytes, s>>>(src, dst, p->nx, p->ny, np, r, zc > 0 ? zc : 0);
}

/* the staged kernel's tiles per tb (sg_tb_shape names the one to use) */
template <int TB>
static void launch_tbs_shape(const sg_prob_t *p, int np, cudaStream_t s, const double *src, double *dst,
                             const tb_ranges_t &r, int zc, int by, int rows)
{
#define SG_TBS(BY, RY) \
    if (by == BY && rows == RY) return launch_tbs<TB, BY, RY>(p, np, s, src, dst, r, zc)
    if constexpr (TB == 1) {
        SG_TBS(8, 2);
        SG_TBS(12, 2);
        SG_TBS(6, 4);
    } else if constexpr (TB == 2) {
        SG_TBS(10, 2);
        SG_TBS(6, 3);
        SG_TBS(8, 3);
        SG_TBS(6, 4);
        SG_TBS(12, 2);
    } else {
        SG_TBS(8, 2);
        SG_TBS(6, 3);
        SG_TBS(12, 2);
    }
#undef SG_TBS
    sg_die("--tb-kernel staged: no tile %dx%d at tb %d", by, rows, TB);
}

/* The tile the blocked kernels use (64 columns x by * rows rows, halos included; 32 x 32 for 32x1): what
 * --tb-tile names (16 x 2 for the 7-point stencil only, 16 x 1, 32 x 1 and 12 x 2 for the 27-point one only;
 * the 7-point stencil takes 16 x 2 for those, the 27-point one 16 x 1 for 16 x 2), else 16 x 2 for the
 * 7-point stencil (the fastest measured at every tb, H200 2026-11-27) and 8 x 2 for the 27-point one (the
 * fastest measured at tb 2; k_tb27u keeps its 6 partial sums per row in 110-128 registers without spills up
 * to tb 4, where k_tb27 spilled from tb 3 on and 4 x 4 was the default there; ptxas, sm_90). */
void sg_tb_shape(const sg_prob_t *p, int *by, int *rows)
{
    if (sg_tb_staged(p)) { /* 64 x 24 (12 x 2) where not named */
        *by = p->tb_by ? p->tb_by : 12, *rows = p->tb_by ? p->tb_rows : 2;
        return;
    }
    if (p->tb_by >= 16 || p->tb_by == 12) {
        *by = p->pts == 7 ? 16 : p->tb_by, *rows = p->pts == 7 || p->tb_by == 12 ? 2 : 1;
        return;
    }
    *by = p->tb_by ? p->tb_by : p->pts == 7 ? 16 : 8;
    *rows = p->tb_by ? p->tb_rows : 2;
}

void sg_launch_tb(const sg_prob_t *p, const sg_sub_t *d, cudaStream_t s, const double *src, double *dst,
                  const int *lo, const int *hi)
{
    tb_ranges_t r;
    memset(&r, 0, sizeof r);
    for (int k = 0; k < p->tb; k++) {
        r.lo[k] = lo[k];
        r.hi[k] = hi[k];
    }
    if (r.hi[p->tb - 1] <= r.lo[p->tb - 1]) return;
    int np = d->nz + 2 * d->h, zc = p->zchunk ? p->zchunk : 64, by, rows; /* -1: persistent */
    sg_tb_shape(p, &by, &rows);
    if (sg_tb_staged(p)) {
        if (p->tb == 1)
            launch_tbs_shape<1>(p, np, s, src, dst, r, zc, by, rows);
        else if (p->tb == 2)
            launch_tbs_shape<2>(p, np, s, src, dst, r, zc, by, rows);
        else
            launch_tbs_shape<3>(p, np, s, src, dst, r, zc, by, rows);
        SG_CUDA(cudaGetLastError());
        return;
    }
#define SG_TB(PTS)                                                        \
    do {                                                                  \
        if (p->tb == 2)                                                   \
            launch_tb_shape<PTS, 2>(p, np, s, src, dst, r, zc, by, rows); \
        else if (p->tb == 3)                                              \
            launch_tb_shape<PTS, 3>(p, np, s, src, dst, r, zc, by, rows); \
        else                                                              \
            launch_tb_shape<PTS, 4>(p, np, s, src, dst, r, zc, by, rows); \
    } while (0)
    if (p->pts == 7)
        SG_TB(7);
    else
        SG_TB(27);
#undef SG_TB
    SG_CUDA(cudaGetLastError());
}
