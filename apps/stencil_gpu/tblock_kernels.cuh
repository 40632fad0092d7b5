/* ky_stencil_gpu: the kernels of temporal blocking inside the kernel (launched by tblock.cu; also compiled
 * as host code by tblock_emu.cpp, which runs them on the CPU). One pass through memory advances TB time
 * steps (--tb, 2 to 4): 2.5-D streaming along z. A thread block owns an x-y tile (64 columns x TBY * RY
 * rows, TB-wide halos included, so 64 - 2 TB by TBY RY - 2 TB points are written), marches along z (a
 * chunk of planes, or with persistent blocks a share of all tiles' planes: tb_work_t) and keeps every stage
 * but the last on chip:
 *   - each thread owns one tile column and RY consecutive rows of it; stage 0 is the plane it loads from
 *     global memory (one or two planes ahead, in registers), stage s (1..TB) is step s of the pass;
 *   - a stage's z neighbours stay in the thread's registers, its x-y neighbours come from shared memory,
 *     where every stage below TB keeps a ring of two planes (one written, one read per z iteration, so one
 *     __syncthreads per iteration orders everything);
 *   - the 7-point stage s lags stage s-1 by one plane (its plane above is stage s-1's value just computed,
 *     in a register); the 27-point stage needs the x-y neighbours of the plane above too, so it lags by two
 *     planes and keeps the plane partial sums (C, F4, K4 of point<27>) of the two planes below in registers;
 *   - only stage TB is written to global memory: 16 bytes per point per pass, 16 / TB per step.
 * A stage computes a point exactly when the single-step kernel of that step would (the plane range of the
 * step, interior x and y); every other point passes the previous stage's value through. The ranges shrink
 * by one plane per step except at the fixed global faces (sg_block_steps), so every point a computed point
 * reads is either computed by the stage before or a fixed face, whose value is the same in every stage and
 * buffer. Same sums in the same order as point<27> / point<7> (and -fmad=false): bitwise equal to the
 * single-step kernels and the CPU. The tile halo is computed redundantly (rows outside a stage's shrinking
 * cone are skipped warp by warp, columns are not). */
#ifndef KY_STENCIL_GPU_TBLOCK_KERNELS_CUH
#define KY_STENCIL_GPU_TBLOCK_KERNELS_CUH

#include <stddef.h>

/* The block's dynamic shared memory (tblock_emu.cpp brings its own). */
#ifndef SG_TB_EMULATION
__device__ static inline double *tb_smem()
{
    extern __shared__ double sg_tb_smem[];
    return sg_tb_smem;
}
#endif

/* Threads per tile row (= tile columns): 64, or 32 for the tiles of 32 thread rows (32 x 32 points, 1024
 * threads: the 27-point stencil's square tile, whose halo costs less than 64 x 16's); TBY thread rows. */
template <int TBY>
__host__ __device__ constexpr int tb_cols()
{
    return TBY == 32 ? 32 : 64;
}

struct tb_ranges_t {
    int lo[4], hi[4]; /* stage s (1..TB) computes local planes [lo[s-1], hi[s-1]) */
};

/* Rows y0 .. y0 + RY - 1 of this thread's column of plane z into v (0 outside the grid or the planes the
 * pass needs). off[j] < 0: the row or column lies outside the grid. */
template <int RY>
__device__ static inline void tb_load(const double *__restrict__ src, size_t P, const int (&off)[RY], int z,
                                      int zend, double (&v)[RY])
{
    bool zok = z >= 0 && z < zend;
#pragma unroll
    for (int j = 0; j < RY; j++)
        v[j] = zok && off[j] >= 0 ? __ldg(src + (size_t)z * P + (size_t)off[j]) : 0.0;
}

/* The planes in flight: each thread holds its rows of the next PF planes in registers, so a load has PF
 * iterations of stage work to arrive. */
template <int RY, int PF>
struct tb_prefetch_t {
    double q[PF][RY];
    __device__ void start(const double *__restrict__ src, size_t P, const int (&off)[RY], int z, int zend)
    {
#pragma unroll
        for (int k = 0; k < PF; k++) tb_load<RY>(src, P, off, z + k, zend, q[k]);
    }
    /* v = plane z (the oldest in flight); plane z + PF goes in flight */
    __device__ void next(const double *__restrict__ src, size_t P, const int (&off)[RY], int z, int zend,
                         double (&v)[RY])
    {
#pragma unroll
        for (int j = 0; j < RY; j++) v[j] = q[0][j];
#pragma unroll
        for (int k = 0; k + 1 < PF; k++)
#pragma unroll
            for (int j = 0; j < RY; j++) q[k][j] = q[k + 1][j];
        tb_load<RY>(src, P, off, z + PF, zend, q[PF - 1]);
    }
};

/* Shared memory of a block: for stages 0 .. TB-1 two planes of (8 RY + 2) x 66 doubles (one padding row and
 * column on each side, so edge threads read zeros instead of leaving the tile). */
template <int TBY, int RY>
__host__ __device__ constexpr int tb_plane()
{
    return (TBY * RY + 2) * (tb_cols<TBY>() + 2);
}

/* The per-thread set-up both kernels share: global coordinates, load offsets, what this thread writes. */
template <int TB, int TBY, int RY>
struct tb_thread_t {
    int gx, gy0;    /* global x of the column, global y of row 0 */
    int off[RY];    /* plane offsets of the rows (-1: outside the grid) */
    bool in_x;      /* the column is computed (interior x) */
    bool store_x;   /* the column is one of the tile's outputs */
    bool store[RY]; /* the row is one of the tile's outputs */
    int row0, my;   /* tile row of row 0; shared-memory index of (row 0, column) in a plane */
    __device__ tb_thread_t(int nx, int ny, int bx, int by)
    {
        constexpr int TBX = tb_cols<TBY>(), OW = TBX - 2 * TB, OH = TBY * RY - 2 * TB;
        int tx = (int)threadIdx.x;
        row0 = (int)threadIdx.y * RY;
        gx = bx * OW + 1 - TB + tx;
        gy0 = by * OH + 1 - TB + row0;
        in_x = gx >= 1 && gx <= nx - 2;
        store_x = in_x && tx >= TB && tx < TBX - TB;
#pragma unroll
        for (int j = 0; j < RY; j++) {
            int gy = gy0 + j, row = row0 + j;
            off[j] = gx >= 0 && gx < nx && gy >= 0 && gy < ny ? gy * nx + gx : -1;
            store[j] = store_x && row >= TB && row < TBY * RY - TB && gy <= ny - 2;
        }
        my = (row0 + 1) * (TBX + 2) + tx + 1;
    }
    __device__ bool in_y(int j, int ny) const
    {
        return gy0 + j >= 1 && gy0 + j <= ny - 2;
    }
};

/* What a block computes: segments (a tile, a range of the last step's planes), one after the other. With
 * zchunk > 0 one segment: chunk blockIdx.z (zchunk planes) of tile (blockIdx.x, blockIdx.y). With zchunk == 0
 * (persistent: gridDim.x blocks, as many as are resident at once) block b first takes whole tiles b,
 * b + gridDim.x, ... in rounds (all blocks stream the same planes at the same time, so the halo a tile shares
 * with its neighbours is read from L2, as with chunks), then an equal share of the tiles left over, their
 * plane ranges laid end to end tile by tile (a share may span tiles). Equal work leaves no tail wave, and a
 * block pays the start-up of a stream (2 tb or 3 tb planes) about once per tile instead of once per chunk. */
template <int TB, int TBY, int RY>
struct tb_work_t {
    /* rounds taken (-1: chunks); the share of the leftover line, [w, w1) (below 2^31: tiles x planes); the
     * rest is recomputed from the kernel's arguments, which cost no registers */
    int k, w, w1;
    __device__ tb_work_t(int nx, int ny, const tb_ranges_t &r, int zchunk)
    {
        constexpr int TBX = tb_cols<TBY>(), OW = TBX - 2 * TB, OH = TBY * RY - 2 * TB;
        int span = r.hi[TB - 1] - r.lo[TB - 1], ntx = (nx - 2 + OW - 1) / OW,
            nt = ntx * ((ny - 2 + OH - 1) / OH);
        if (zchunk > 0) {
            int t = (int)blockIdx.y * ntx + (int)blockIdx.x;
            k = -1;
            w = t * span + (int)blockIdx.z * zchunk;
            w1 = min(w + zchunk, (t + 1) * span);
        } else {
            int nb = (int)gridDim.x, done = nt / nb * nb; /* tiles taken in rounds */
            long long left = (long long)(nt - done) * span;
            k = 0;
            w = done * span + (int)(left * blockIdx.x / nb);
            w1 = done * span + (int)(left * (blockIdx.x + 1) / nb);
        }
    }
    /* the next segment: tile (bx, by), planes [zlo, zhi); false when there is none */
    __device__ bool next(int nx, int ny, const tb_ranges_t &r, int &bx, int &by, int &zlo, int &zhi)
    {
        constexpr int TBX = tb_cols<TBY>(), OW = TBX - 2 * TB, OH = TBY * RY - 2 * TB;
        int span = r.hi[TB - 1] - r.lo[TB - 1], ntx = (nx - 2 + OW - 1) / OW,
            nt = ntx * ((ny - 2 + OH - 1) / OH);
        int t, z, n;
        if (k >= 0 && k < nt / (int)gridDim.x) { /* a round: a whole tile */
            t = (int)blockIdx.x + k++ * (int)gridDim.x, z = 0, n = span;
        } else {
            if (w >= w1) return false;
            t = w / span, z = w - t * span, n = min(span - z, w1 - w);
            w += n;
        }
        bx = t % ntx, by = t / ntx, zlo = r.lo[TB - 1] + z, zhi = zlo + n;
        return true;
    }
};

/* Which of a thread's rows each stage computes, for the unrolled kernels' selects: bit s * RY + j is set when
 * stage s + 1 computes row j (a stage's rows shrink by one at each tile edge, and rows off the grid never
 * count). */
template <int TB, int TBY, int RY>
__device__ static inline unsigned tb_stage_mask(const tb_thread_t<TB, TBY, RY> &t, int ny)
{
    constexpr int TH = TBY * RY;
    unsigned mask = 0;
#pragma unroll
    for (int s = 0; s < TB; s++)
#pragma unroll
        for (int j = 0; j < RY; j++)
            if (t.row0 + j >= s + 1 && t.row0 + j < TH - s - 1 && t.in_x && t.in_y(j, ny))
                mask |= 1u << (s * RY + j);
    return mask;
}

/* Zero the block's shared memory (the padding and the planes not yet written are read by points whose
 * results are never used: zeros keep them finite and tools quiet). */
__device__ static inline void tb_zero(double *sm, int n)
{
    for (int i = (int)(threadIdx.y * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * blockDim.y))
        sm[i] = 0.0;
}

/* 7-point: iteration zi loads plane zi (stage 0); stage s computes plane zi - s from stage s-1's planes
 * zi-s-1 (register `below`), zi-s (register `here` and, for x-y neighbours, the shared plane written in the
 * previous iteration) and zi-s+1 (stage s-1's value of this iteration, in a register). Tiles of 8 x 2
 * thread rows x rows: at most 64 registers, so that 2 blocks share an SM. */
template <int TB, int TBY, int RY>
__global__ void __launch_bounds__(tb_cols<TBY>() * TBY, TBY == 8 && RY == 2 ? 2 : 1)
    k_tb7(const double *__restrict__ src, double *__restrict__ dst, int nx, int ny, int np, tb_ranges_t r,
          int zchunk)
{
    constexpr int TH = TBY * RY, TW = tb_cols<TBY>() + 2, PL = tb_plane<TBY, RY>();
    double *sm = tb_smem();
    tb_zero(sm, 2 * TB * PL);
    size_t P = (size_t)nx * ny;
    tb_work_t<TB, TBY, RY> work(nx, ny, r, zchunk);
    /* a segment's first __syncthreads orders its writes after the previous segment's last reads */
    for (int bx, by, zlo, zhi; work.next(nx, ny, r, bx, by, zlo, zhi);) {
        const tb_thread_t<TB, TBY, RY> t(nx, ny, bx, by);
        int zend = min(np, zhi + TB); /* planes the pass reads: [zlo - TB, zhi + TB) */
        double below[TB][RY], here[TB][RY];
        tb_prefetch_t<RY, 2>
            pf; /* two planes ahead: the registers are there (at most 128 with 4 rows, tb 4) */
#pragma unroll
        for (int s = 0; s < TB; s++)
#pragma unroll
            for (int j = 0; j < RY; j++) below[s][j] = here[s][j] = 0.0;
        pf.start(src, P, t.off, zlo - TB, zend);
        int b = 0;
        for (int zi = zlo - TB; zi < zhi + TB; zi++, b ^= 1) {
            double v[RY];
            pf.next(src, P, t.off, zi, zend, v);
            __syncthreads(); /* the previous iteration's planes are written, and its reads are done */
#pragma unroll
            for (int s = 0; s < TB; s++) {
                double *wb = sm + (2 * s + b) * PL + t.my;
                const double *rb = sm + (2 * s + (b ^ 1)) * PL + t.my; /* stage s, plane zi - s - 1 */
#pragma unroll
                for (int j = 0; j < RY; j++) wb[j * TW] = v[j];
                int zo = zi - s - 1; /* stage s + 1 computes this plane */
                bool zin = zo >= r.lo[s] && zo < r.hi[s];
                double o[RY];
#pragma unroll
                for (int j = 0; j < RY; j++) {
                    int row = t.row0 + j;
                    o[j] = here[s][j]; /* not computed: the value passes through */
                    if (row >= s + 1 && row < TH - s - 1 && zin && t.in_x && t.in_y(j, ny)) {
                        double ym = j > 0 ? here[s][j - 1] : rb[-TW];
                        double yp = j < RY - 1 ? here[s][j + 1] : rb[RY * TW];
                        /* point<7>'s order: centre, z-1, z+1, y-1, y+1, x-1, x+1 */
                        o[j] = 0.4 * here[s][j] +
                               0.1 * (below[s][j] + v[j] + ym + yp + rb[j * TW - 1] + rb[j * TW + 1]);
                    }
                }
#pragma unroll
                for (int j = 0; j < RY; j++) {
                    below[s][j] = here[s][j];
                    here[s][j] = v[j];
                    v[j] = o[j];
                }
            }
            int zo = zi - TB;
            if (zo >= zlo)
#pragma unroll
                for (int j = 0; j < RY; j++)
                    if (t.store[j]) dst[(size_t)zo * P + (size_t)t.off[j]] = v[j];
        }
    }
}

/* The 7-point kernel with fewer instructions per plane (the default; k_tb7 above is the first version,
 * --tb-unroll 0). Same stages, same points, same sums; what changes is bookkeeping, which was about half of
 * the instructions of an iteration (sm_90 SASS of k_tb7<3, 16, 2>: 268 per warp and plane, about three
 * quarters of the issue slots an H200 has at the measured 386 Gpoint/s; k_tb7u: 150-160):
 *   - the z loop is unrolled by 6 (tb7u_plane<PH>), so that the phases are compile-time constants: the
 *     shared-memory buffer (period 2) and the in-flight plane (period 2) are immediate offsets and
 *     registers, and each stage's planes below and here live in a ring of 3 registers (period 3) instead of
 *     being moved down every iteration (two 32-bit moves per double);
 *   - which rows and columns a stage computes is a mask made once per segment; a point out of range selects
 *     the value passing through instead of branching around the sum (no convergence barriers; the sum of a
 *     point outside the cone reads finite values and is dropped);
 *   - loads and stores walk pointers instead of multiplying plane numbers. */
template <int TB, int RY>
struct tb7u_regs_t {
    double ring[TB][3][RY]; /* stage s's planes: slot PH % 3 takes this iteration's, then below / here */
    double q[2][RY];        /* the planes in flight: slot PH % 2 is this iteration's, refilled 2 ahead */
};

template <int TB, int TBY, int RY, int PH>
__device__ static inline void tb7u_plane(tb7u_regs_t<TB, RY> &g, const tb_thread_t<TB, TBY, RY> &t,
                                         double *smy, const double *&ld, double *&st, size_t P, int zi,
                                         int zend, int zlo, const tb_ranges_t &r, unsigned mask)
{
    constexpr int TW = tb_cols<TBY>() + 2, PL = tb_plane<TBY, RY>(), B = PH % 2;
    constexpr int HERE = (PH + 2) % 3, BELOW = (PH + 1) % 3, NEW = PH % 3;
    double v[RY];
    bool zok = zi + 2 < zend && zi + 2 >= 0;
#pragma unroll
    for (int j = 0; j < RY; j++) {
        v[j] = g.q[B][j];
        g.q[B][j] = zok && t.off[j] >= 0 ? __ldg(ld + t.off[j]) : 0.0;
    }
    ld += P;
    __syncthreads(); /* the previous iteration's planes are written, and its reads are done */
#pragma unroll
    for (int s = 0; s < TB; s++) {
        double *wb = smy + (2 * s + B) * PL;
        const double *rb = smy + (2 * s + (B ^ 1)) * PL; /* stage s, plane zi - s - 1 */
#pragma unroll
        for (int j = 0; j < RY; j++) wb[j * TW] = v[j];
        int zo = zi - s - 1; /* stage s + 1 computes this plane */
        bool zin = zo >= r.lo[s] && zo < r.hi[s];
        double o[RY];
#pragma unroll
        for (int j = 0; j < RY; j++) {
            const double(&h)[RY] = g.ring[s][HERE];
            double ym = j > 0 ? h[j - 1] : rb[-TW];
            double yp = j < RY - 1 ? h[j + 1] : rb[RY * TW];
            /* point<7>'s order: centre, z-1, z+1, y-1, y+1, x-1, x+1 */
            double c =
                0.4 * h[j] + 0.1 * (g.ring[s][BELOW][j] + v[j] + ym + yp + rb[j * TW - 1] + rb[j * TW + 1]);
            o[j] = zin && (mask >> (s * RY + j) & 1u) ? c : h[j]; /* else the value passes through */
        }
#pragma unroll
        for (int j = 0; j < RY; j++) {
            g.ring[s][NEW][j] = v[j];
            v[j] = o[j];
        }
    }
    if (zi - TB >= zlo) { /* st: plane zi - TB */
#pragma unroll
        for (int j = 0; j < RY; j++)
            if (t.store[j]) st[t.off[j]] = v[j];
        st += P;
    }
}

template <int TB, int TBY, int RY>
__global__ void __launch_bounds__(tb_cols<TBY>() * TBY, TBY == 8 && RY == 2 ? 2 : 1)
    k_tb7u(const double *__restrict__ src, double *__restrict__ dst, int nx, int ny, int np, tb_ranges_t r,
           int zchunk)
{
    constexpr int PL = tb_plane<TBY, RY>();
    double *sm = tb_smem();
    tb_zero(sm, 2 * TB * PL);
    size_t P = (size_t)nx * ny;
    tb_work_t<TB, TBY, RY> work(nx, ny, r, zchunk);
    /* a segment's first __syncthreads orders its writes after the previous segment's last reads */
    for (int bx, by, zlo, zhi; work.next(nx, ny, r, bx, by, zlo, zhi);) {
        const tb_thread_t<TB, TBY, RY> t(nx, ny, bx, by);
        int zend = min(np, zhi + TB); /* planes the pass reads: [zlo - TB, zhi + TB) */
        unsigned mask = tb_stage_mask(t, ny);
        tb7u_regs_t<TB, RY> g;
#pragma unroll
        for (int s = 0; s < TB; s++)
#pragma unroll
            for (int k = 0; k < 3; k++)
#pragma unroll
                for (int j = 0; j < RY; j++) g.ring[s][k][j] = 0.0;
        int z0 = zlo - TB;
        tb_load<RY>(src, P, t.off, z0, zend, g.q[0]);
        tb_load<RY>(src, P, t.off, z0 + 1, zend, g.q[1]);
        /* pointers to plane z0 + 2 (the next load) and plane zlo (the first store); plane numbers below 0
         * only arise before the loads and stores they would address are made (zok, zi - TB >= zlo) */
        const double *ld = src + (ptrdiff_t)(z0 + 2) * (ptrdiff_t)P;
        double *st = dst + (ptrdiff_t)zlo * (ptrdiff_t)P;
        double *smy = sm + t.my;
        int zi = z0, zstop = zhi + TB;
        for (;;) {
#define SG_TB7U_PLANE(PH)                                                      \
    tb7u_plane<TB, TBY, RY, PH>(g, t, smy, ld, st, P, zi, zend, zlo, r, mask); \
    if (++zi >= zstop) break;
            SG_TB7U_PLANE(0)
            SG_TB7U_PLANE(1)
            SG_TB7U_PLANE(2)
            SG_TB7U_PLANE(3)
            SG_TB7U_PLANE(4)
            SG_TB7U_PLANE(5)
#undef SG_TB7U_PLANE
        }
    }
}

/* 27-point: iteration zi loads plane zi; stage s computes plane zi - 2s from stage s-1's planes
 * zi-2s-1 and zi-2s (their partial sums, in registers) and zi-2s+1 (the shared plane stage s-1 wrote in
 * the previous iteration: its partial sums need the x-y neighbours). */
template <int TB, int TBY, int RY>
__global__ void __launch_bounds__(tb_cols<TBY>() * TBY, 1)
    k_tb27(const double *__restrict__ src, double *__restrict__ dst, int nx, int ny, int np, tb_ranges_t r,
           int zchunk)
{
    constexpr int TH = TBY * RY, TW = tb_cols<TBY>() + 2, PL = tb_plane<TBY, RY>();
    double *sm = tb_smem();
    tb_zero(sm, 2 * TB * PL);
    size_t P = (size_t)nx * ny;
    tb_work_t<TB, TBY, RY> work(nx, ny, r, zchunk);
    for (int bx, by, zlo, zhi; work.next(nx, ny, r, bx, by, zlo, zhi);) {
        const tb_thread_t<TB, TBY, RY> t(nx, ny, bx, by);
        int zend = min(np, zhi + TB); /* planes the pass reads: [zlo - TB, zhi + TB) */
        /* partial sums of stage s's planes below (a) and at (b) the plane stage s + 1 computes */
        double Ca[TB][RY], Fa[TB][RY], Ka[TB][RY], Cb[TB][RY], Fb[TB][RY], Kb[TB][RY];
        /* two planes ahead where the registers allow it (ptxas, sm_90: no spills), else one */
        tb_prefetch_t<RY, TB == 2 || (TB == 3 && TBY == 4) ? 2 : 1> pf;
#pragma unroll
        for (int s = 0; s < TB; s++)
#pragma unroll
            for (int j = 0; j < RY; j++)
                Ca[s][j] = Fa[s][j] = Ka[s][j] = Cb[s][j] = Fb[s][j] = Kb[s][j] = 0.0;
        pf.start(src, P, t.off, zlo - TB, zend);
        int b = 0;
        for (int zi = zlo - TB; zi < zhi + 2 * TB; zi++, b ^= 1) {
            double v[RY];
            pf.next(src, P, t.off, zi, zend, v);
            __syncthreads(); /* the previous iteration's planes are written, and its reads are done */
#pragma unroll
            for (int s = 0; s < TB; s++) {
                double *wb = sm + (2 * s + b) * PL + t.my;
                const double *rb = sm + (2 * s + (b ^ 1)) * PL + t.my; /* stage s, plane zi - 2s - 1 */
#pragma unroll
                for (int j = 0; j < RY; j++) wb[j * TW] = v[j];
                int zo = zi - 2 * s - 2; /* stage s + 1 computes this plane */
                bool zin = zo >= r.lo[s] && zo < r.hi[s];
                double o[RY];
#pragma unroll
                for (int j = 0; j < RY; j++) {
                    int row = t.row0 + j;
                    o[j] = Cb[s][j]; /* not computed: the value passes through */
                    if (row >= s + 1 && row < TH - s - 1) {
                        /* point<27>'s plane sums of the plane above: x - 1, x, x + 1 of rows j - 1 .. j + 1
                         */
                        const double *q = rb + j * TW;
                        double cm = q[-TW - 1] + q[TW - 1], c0 = q[-TW] + q[TW], cp = q[-TW + 1] + q[TW + 1];
                        double Cc = q[0], Fc = (c0 + q[-1]) + q[1], Kc = cm + cp;
                        if (zin && t.in_x && t.in_y(j, ny)) {
                            double f = (Ca[s][j] + Cc) + Fb[s][j];
                            double e = (Fa[s][j] + Fc) + Kb[s][j];
                            double k = Ka[s][j] + Kc;
                            o[j] = 0.2 * Cb[s][j] + 0.05 * f + 0.02 * e + 0.01 * k;
                        }
                        Ca[s][j] = Cb[s][j], Fa[s][j] = Fb[s][j], Ka[s][j] = Kb[s][j];
                        Cb[s][j] = Cc, Fb[s][j] = Fc, Kb[s][j] = Kc;
                    }
                }
#pragma unroll
                for (int j = 0; j < RY; j++) v[j] = o[j];
            }
            int zo = zi - 2 * TB;
            if (zo >= zlo)
#pragma unroll
                for (int j = 0; j < RY; j++)
                    if (t.store[j]) dst[(size_t)zo * P + (size_t)t.off[j]] = v[j];
        }
    }
}

/* The 27-point kernel with less bookkeeping (the default; k_tb27 above is the first version, --tb-unroll 0),
 * as k_tb7u: the z loop unrolled by 2, so that the shared-memory buffer, the in-flight planes and the
 * partial sums of the planes below and at the computed one (a ring of 2 per stage: this iteration's plane
 * above takes the slot of the plane below) are compile-time; a mask made per segment and selects instead of
 * branches; pointer walks. */
template <int TB, int RY, int PF>
struct tb27u_regs_t {
    double C[TB][2][RY], F[TB][2][RY], K[TB][2][RY]; /* slot PH % 2: plane below, the other: plane at */
    double q[PF][RY];                                /* the planes in flight: slot PH % PF is this one's */
};

template <int TB, int TBY, int RY, int PF, int PH>
__device__ static inline void tb27u_plane(tb27u_regs_t<TB, RY, PF> &g, const tb_thread_t<TB, TBY, RY> &t,
                                          double *smy, const double *&ld, double *&st, size_t P, int zi,
                                          int zend, int zlo, const tb_ranges_t &r, unsigned mask)
{
    constexpr int TW = tb_cols<TBY>() + 2, PL = tb_plane<TBY, RY>(), B = PH % 2, QS = PH % PF;
    constexpr int A = PH % 2, BB = (PH + 1) % 2; /* the slots of the planes below (a) and at (b) */
    double v[RY];
    bool zok = zi + PF < zend && zi + PF >= 0;
#pragma unroll
    for (int j = 0; j < RY; j++) {
        v[j] = g.q[QS][j];
        g.q[QS][j] = zok && t.off[j] >= 0 ? __ldg(ld + t.off[j]) : 0.0;
    }
    ld += P;
    __syncthreads(); /* the previous iteration's planes are written, and its reads are done */
#pragma unroll
    for (int s = 0; s < TB; s++) {
        double *wb = smy + (2 * s + B) * PL;
        const double *rb = smy + (2 * s + (B ^ 1)) * PL; /* stage s, plane zi - 2s - 1 */
#pragma unroll
        for (int j = 0; j < RY; j++) wb[j * TW] = v[j];
        int zo = zi - 2 * s - 2; /* stage s + 1 computes this plane */
        bool zin = zo >= r.lo[s] && zo < r.hi[s];
        double o[RY];
#pragma unroll
        for (int j = 0; j < RY; j++) {
            /* point<27>'s plane sums of the plane above: x - 1, x, x + 1 of rows j - 1 .. j + 1 */
            const double *q = rb + j * TW;
            double cm = q[-TW - 1] + q[TW - 1], c0 = q[-TW] + q[TW], cp = q[-TW + 1] + q[TW + 1];
            double Cc = q[0], Fc = (c0 + q[-1]) + q[1], Kc = cm + cp;
            double f = (g.C[s][A][j] + Cc) + g.F[s][BB][j];
            double e = (g.F[s][A][j] + Fc) + g.K[s][BB][j];
            double k = g.K[s][A][j] + Kc;
            double c = 0.2 * g.C[s][BB][j] + 0.05 * f + 0.02 * e + 0.01 * k;
            o[j] = zin && (mask >> (s * RY + j) & 1u) ? c : g.C[s][BB][j]; /* else the value passes through */
            g.C[s][A][j] = Cc, g.F[s][A][j] = Fc, g.K[s][A][j] = Kc;
        }
#pragma unroll
        for (int j = 0; j < RY; j++) v[j] = o[j];
    }
    if (zi - 2 * TB >= zlo) { /* st: plane zi - 2 TB */
#pragma unroll
        for (int j = 0; j < RY; j++)
            if (t.store[j]) st[t.off[j]] = v[j];
        st += P;
    }
}

template <int TB, int TBY, int RY>
__global__ void __launch_bounds__(tb_cols<TBY>() * TBY, 1)
    k_tb27u(const double *__restrict__ src, double *__restrict__ dst, int nx, int ny, int np, tb_ranges_t r,
            int zchunk)
{
    /* two planes ahead where the registers allow it (ptxas, sm_90: no spills), else one */
    constexpr int PL = tb_plane<TBY, RY>(), PF = TB == 2 || (TB == 3 && TBY == 4) ? 2 : 1;
    double *sm = tb_smem();
    tb_zero(sm, 2 * TB * PL);
    size_t P = (size_t)nx * ny;
    tb_work_t<TB, TBY, RY> work(nx, ny, r, zchunk);
    /* a segment's first __syncthreads orders its writes after the previous segment's last reads */
    for (int bx, by, zlo, zhi; work.next(nx, ny, r, bx, by, zlo, zhi);) {
        const tb_thread_t<TB, TBY, RY> t(nx, ny, bx, by);
        int zend = min(np, zhi + TB); /* planes the pass reads: [zlo - TB, zhi + TB) */
        unsigned mask = tb_stage_mask(t, ny);
        tb27u_regs_t<TB, RY, PF> g;
#pragma unroll
        for (int s = 0; s < TB; s++)
#pragma unroll
            for (int k = 0; k < 2; k++)
#pragma unroll
                for (int j = 0; j < RY; j++) g.C[s][k][j] = g.F[s][k][j] = g.K[s][k][j] = 0.0;
        int z0 = zlo - TB;
#pragma unroll
        for (int k = 0; k < PF; k++) tb_load<RY>(src, P, t.off, z0 + k, zend, g.q[k]);
        /* pointers to plane z0 + PF (the next load) and plane zlo (the first store); plane numbers below 0
         * only arise before the loads and stores they would address are made (zok, zi - 2 TB >= zlo) */
        const double *ld = src + (ptrdiff_t)(z0 + PF) * (ptrdiff_t)P;
        double *st = dst + (ptrdiff_t)zlo * (ptrdiff_t)P;
        double *smy = sm + t.my;
        int zi = z0, zstop = zhi + 2 * TB;
        for (;;) {
            tb27u_plane<TB, TBY, RY, PF, 0>(g, t, smy, ld, st, P, zi, zend, zlo, r, mask);
            if (++zi >= zstop) break;
            tb27u_plane<TB, TBY, RY, PF, 1>(g, t, smy, ld, st, P, zi, zend, zlo, r, mask);
            if (++zi >= zstop) break;
        }
    }
}

#endif
