/* ky_stencil_gpu: the temporal-blocking kernels (tblock_kernels.cuh) run on the CPU, checked bit for bit
 * against bt single steps of the CPU reference (stencil_point.h), so that a machine without a GPU tests
 * them too (ctest stencil_gpu.tblock_emu; the GPU tests run the real thing).
 *
 * The kernels' source is compiled as host code: every CUDA thread of a block is a fiber (ucontext), and
 * __syncthreads() hands over to the next fiber, so the block runs in rounds from barrier to barrier as on
 * the GPU (a thread that leaves while others still wait at a barrier is reported). Shared memory starts as
 * huge values, so a result that depended on a plane nobody wrote would show. Each case is one sub-domain
 * with the ranges of sg_block_steps (neighbours below and above, the global faces), for every tile and tb
 * 2..4, with z chunks that do not divide the range.
 *
 *   ky_stencil_gpu_emu        exit status 0: every case identical */
#include <cstdio>
#include <cstring>
#include <vector>

/* what the kernels use of CUDA, and its threads as fibers */
#define SG_TB_EMULATION 1
#include "cuda_fibers.h"
static double *emu_smem;
static double *tb_smem()
{
    return emu_smem;
}

#include "stencil_point.h"
#include "tblock27s.cuh"
#include "tblock_kernels.cuh"

static bool emu_rolled; /* the first kernels (k_tb7, k_tb27) instead of k_tb7u, k_tb27u */
static int emu_staged;  /* 27-point: k_tb27s with this many planes of stage 0 (2 or 4) instead of k_tb27u */

/* ---- one case ------------------------------------------------------------------------------------------ */
template <int PTS, int TB, int TBY, int RY>
static bool launch(const double *src, double *dst, int nx, int ny, int np, tb_ranges_t r, int zc)
{
    constexpr int TBX = tb_cols<TBY>(), OW = TBX - 2 * TB, OH = TBY * RY - 2 * TB;
    int span = r.hi[TB - 1] - r.lo[TB - 1];
    if (span <= 0) return true;
    bool staged = PTS == 27 && emu_staged;
    /* zc 0: persistent blocks, here 3 (rounds of whole tiles where there are 3 or more, then shares that
     * start and end inside tiles) */
    dim3 grid = zc ? dim3{(unsigned)((nx - 2 + OW - 1) / OW), (unsigned)((ny - 2 + OH - 1) / OH),
                          (unsigned)((span + zc - 1) / zc)}
                   : dim3{3, 1, 1};
    std::vector<double> sm(std::max(tbs_doubles<TB, TBY, RY, 4>(), 2 * TB * tb_plane<TBY, RY>()));
    blockDim = dim3{TBX, TBY, 1};
    gridDim = grid;
    emu_smem = sm.data();
    emu_body = [=] {
        if constexpr (PTS == 27 && TBY != 32 && TB <= 3) /* 16-byte copies where nx is even (as tblock.cu) */
            if (staged) {
                if (emu_staged == 2 && nx % 2)
                    k_tb27s<TB, TBY, RY, 2, 1>(src, dst, nx, ny, np, r, zc);
                else if (emu_staged == 2)
                    k_tb27s<TB, TBY, RY, 2, 2>(src, dst, nx, ny, np, r, zc);
                else if (nx % 2)
                    k_tb27s<TB, TBY, RY, 4, 1>(src, dst, nx, ny, np, r, zc);
                else
                    k_tb27s<TB, TBY, RY, 4, 2>(src, dst, nx, ny, np, r, zc);
                return;
            }
        if (PTS == 7 && emu_rolled)
            k_tb7<TB, TBY, RY>(src, dst, nx, ny, np, r, zc);
        else if (PTS == 7)
            k_tb7u<TB, TBY, RY>(src, dst, nx, ny, np, r, zc);
        else if (emu_rolled)
            k_tb27<TB, TBY, RY>(src, dst, nx, ny, np, r, zc);
        else
            k_tb27u<TB, TBY, RY>(src, dst, nx, ny, np, r, zc);
    };
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                blockIdx = dim3{bx, by, bz};
                std::fill(sm.begin(), sm.end(), 1e300);
                if (!emu_block(TBX * TBY)) return false;
            }
    return true;
}

/* bt steps of the sub-domain [z0, z0 + nz) of an nx x ny x NZ grid in bt / TB passes, against the CPU */
template <int PTS, int TB, int TBY, int RY>
static int check(int nx, int ny, int NZ, int z0, int nz, int bt, int zc)
{
    int h = bt, np = nz + 2 * h, has_lo = z0 > 0, has_hi = z0 + nz < NZ;
    size_t P = (size_t)nx * ny, X = (size_t)nx;
    std::vector<double> a(P * NZ), b;
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) a[((size_t)z * ny + y) * X + x] = init_value(z, y, x);
    b = a;
    for (int t = 0; t < bt; t++) {
        for (int z = 1; z < NZ - 1; z++)
            for (int y = 1; y < ny - 1; y++)
                for (int x = 1; x < nx - 1; x++) {
                    size_t i = (size_t)z * P + (size_t)y * X + x;
                    b[i] = point<PTS>(a.data(), i, P, X);
                }
        std::swap(a, b);
    }
    /* the sub-domain's two buffers: planes z0 - h .. z0 + nz + h - 1 (0 outside the grid), as k_init */
    std::vector<double> s(P * np), d;
    for (int p = 0; p < np; p++)
        for (size_t i = 0; i < P; i++) {
            int z = z0 - h + p;
            s[p * P + i] = z >= 0 && z < NZ ? init_value(z, (int)(i / X), (int)(i % X)) : 0.0;
        }
    d = s;
    double *src = s.data(), *dst = d.data();
    bool same_barriers = true;
    for (int tt = 0; tt < bt; tt += TB) {
        tb_ranges_t r;
        for (int k = 0; k < TB; k++) { /* sg_step_range */
            int ext = bt - 1 - (tt + k), lo = h - (has_lo ? ext : 0), hi = h + nz + (has_hi ? ext : 0);
            int glo = z0 - h + lo, ghi = z0 - h + hi;
            if (glo < 1) lo += 1 - glo;
            if (ghi > NZ - 1) hi -= ghi - (NZ - 1);
            r.lo[k] = lo, r.hi[k] = hi;
        }
        same_barriers &= launch<PTS, TB, TBY, RY>(src, dst, nx, ny, np, r, zc);
        std::swap(src, dst);
    }
    long bad = 0;
    for (int p = h; p < h + nz; p++)
        for (size_t i = 0; i < P; i++) {
            const double *want = &a[(size_t)(z0 - h + p) * P + i], *got = &src[(size_t)p * P + i];
            if (memcmp(got, want, sizeof(double)) && bad++ < 3)
                printf("  z %d y %zu x %zu: %.17g, CPU %.17g\n", z0 - h + p, i / X, i % X, *got, *want);
        }
    printf("%2d-point%s tb %d tile %2dx%d, grid %d x %d x %d, planes [%2d, %2d), bt %d, z chunk %2d: %s\n",
           PTS,
           emu_rolled                ? " (first kernel)"
           : PTS == 27 && emu_staged ? (emu_staged == 2 ? " (staged, 2 planes)" : " (staged)")
                                     : "",
           TB, TBY, RY, nx, ny, NZ, z0, z0 + nz, bt, zc,
           !same_barriers ? "THREADS LEFT AT DIFFERENT BARRIERS"
           : bad          ? "DIFFERENT"
                          : "identical");
    return bad || !same_barriers;
}

/* The ranges overlap.cu gives the blocked kernels: the interior [2h + s, nz - s), the low edge cone
 * [s, 4h - s) (or from the face) and the high one, steps s = 1..h in passes of TB, against h single steps
 * with the same ranges on the same pair of buffers (what sg_launch does); the planes of the last range. */
template <int PTS, int TB, int TBY, int RY>
static int check_ranges(int nx, int ny, int NZ, int z0, int nz, int bt, int zc, int kind)
{
    int h = bt, np = nz + 2 * h;
    size_t P = (size_t)nx * ny, X = (size_t)nx;
    auto range = [&](int t, int *lo, int *hi) { /* step t = 1..h, clipped as sg_clip */
                                                if (kind == 0)
                                                    *lo = 2 * h + t, *hi = nz - t;
                                                else if (kind == 1)
                                                    *lo = z0 > 0 ? t : h, *hi = 4 * h - t;
                                                else
                                                    *lo = nz - 2 * h + t,
                                                    *hi = z0 + nz < NZ ? nz + 2 * h - t : nz + h;
                                                int glo = z0 - h + *lo, ghi = z0 - h + *hi;
                                                if (glo < 1) *lo += 1 - glo;
                                                if (ghi > NZ - 1) *hi -= ghi - (NZ - 1);
    };
    std::vector<double> s0(P * np);
    for (int p = 0; p < np; p++)
        for (size_t i = 0; i < P; i++) {
            int z = z0 - h + p;
            s0[p * P + i] = z >= 0 && z < NZ ? init_value(z, (int)(i / X), (int)(i % X)) : 0.0;
        }
    std::vector<double> a = s0, b = s0, s = s0, d = s0; /* single steps in a, b; blocked in s, d */
    double *src = a.data(), *dst = b.data();
    for (int t = 1; t <= h; t++) {
        int lo, hi;
        range(t, &lo, &hi);
        for (int z = lo; z < hi; z++)
            for (int y = 1; y < ny - 1; y++)
                for (int x = 1; x < nx - 1; x++) {
                    size_t i = (size_t)z * P + (size_t)y * X + x;
                    dst[i] = point<PTS>(src, i, P, X);
                }
        std::swap(src, dst);
    }
    const double *want = src;
    src = s.data(), dst = d.data();
    bool same_barriers = true;
    for (int t = 1; t <= h; t += TB) {
        tb_ranges_t r;
        for (int k = 0; k < TB; k++) range(t + k, &r.lo[k], &r.hi[k]);
        same_barriers &= launch<PTS, TB, TBY, RY>(src, dst, nx, ny, np, r, zc);
        std::swap(src, dst);
    }
    int lo, hi;
    range(h, &lo, &hi);
    long bad = 0;
    for (int p = lo; p < hi; p++)
        for (size_t i = 0; i < P; i++)
            if (memcmp(&src[p * P + i], &want[p * P + i], sizeof(double)) && bad++ < 3)
                printf("  plane %d y %zu x %zu: %.17g, single steps %.17g\n", p, i / X, i % X, src[p * P + i],
                       want[p * P + i]);
    printf(
        "%2d-point%s tb %d tile %2dx%d, grid %d x %d x %d, planes [%2d, %2d), bt %d, z chunk %2d, %s: %s\n",
        PTS, PTS == 27 && emu_staged ? " (staged)" : "", TB, TBY, RY, nx, ny, NZ, z0, z0 + nz, bt, zc,
        kind == 0   ? "overlap interior"
        : kind == 1 ? "low edge cone"
                    : "high edge cone",
        !same_barriers ? "THREADS LEFT AT DIFFERENT BARRIERS"
        : bad          ? "DIFFERENT"
                       : "identical");
    return bad || !same_barriers;
}

int main()
{
    int fails = 0, nx = 77, ny = 45; /* 2 tiles along x, 2..5 along y, both partial */
    const int sub[][3] = {{30, 9, 12}, {30, 0, 12}, {30, 18, 12}, {14, 0, 14}}; /* NZ, z0, nz */
    for (const auto &c : sub) {
        fails += check<7, 2, 8, 4>(nx, ny, c[0], c[1], c[2], 6, 64);
        fails += check<7, 3, 8, 2>(nx, ny, c[0], c[1], c[2], 6, 5);
        fails += check<7, 4, 4, 4>(nx, ny, c[0], c[1], c[2], 4, 3);
        fails += check<7, 3, 16, 2>(nx, ny, c[0], c[1], c[2], 6, 9);
        fails += check<27, 2, 8, 2>(nx, ny, c[0], c[1], c[2], 6, 64);
        fails += check<27, 3, 8, 4>(nx, ny, c[0], c[1], c[2], 6, 4);
        fails += check<27, 4, 4, 4>(nx, ny, c[0], c[1], c[2], 8, 7);
        fails += check<27, 3, 4, 4>(nx, ny, c[0], c[1], c[2], 6, 64);
        /* one row per thread (27-point, 1024 threads), and persistent blocks (z chunk 0) */
        fails += check<27, 2, 16, 1>(nx, ny, c[0], c[1], c[2], 6, 5);
        fails += check<27, 3, 16, 1>(nx, ny, c[0], c[1], c[2], 6, 0);
        fails += check<7, 3, 16, 2>(nx, ny, c[0], c[1], c[2], 6, 0);
        fails += check<27, 2, 8, 2>(nx, ny, c[0], c[1], c[2], 4, 0);
        fails += check<27, 2, 32, 1>(nx, ny, c[0], c[1], c[2], 6, 5);
        fails += check<27, 3, 32, 1>(nx, ny, c[0], c[1], c[2], 6, 0);
        fails += check<27, 2, 12, 2>(nx, ny, c[0], c[1], c[2], 6, 4);
        fails += check<27, 2, 12, 2>(nx, ny, c[0], c[1], c[2], 4, 0);
    }
    for (int kind = 0; kind < 3; kind++) { /* overlap.cu's sequences: 16 planes = 4 bt, neighbours or faces */
        fails += check_ranges<7, 2, 8, 4>(nx, ny, 48, 16, 16, 4, 5, kind);
        fails += check_ranges<27, 4, 4, 4>(nx, ny, 48, 16, 16, 4, 64, kind);
        fails += check_ranges<7, 3, 8, 2>(nx, ny, 24, 0, 24, 6, 64, kind);
        fails += check_ranges<27, 2, 8, 2>(nx, ny, 24, 0, 24, 6, 3, kind);
        fails += check_ranges<7, 2, 16, 2>(nx, ny, 48, 16, 16, 4, 0, kind);
        fails += check_ranges<27, 2, 16, 1>(nx, ny, 24, 0, 24, 6, 0, kind);
        fails += check_ranges<27, 2, 32, 1>(nx, ny, 48, 16, 16, 4, 0, kind);
    }
    /* the staged 27-point kernel (k_tb27s): every tile tblock.cu launches, tb 1..3, odd nx (8-byte copies)
     * and even nx (16-byte ones), z chunks that do not divide the range and persistent blocks (0), a ring
     * of 2 planes once; the edge cones of overlap.cu */
    emu_staged = 4;
    const int nxs[] = {77, 78};
    for (int nxx : nxs)
        for (const auto &c : sub) {
            fails += check<27, 1, 12, 2>(nxx, ny, c[0], c[1], c[2], 2, 5);
            fails += check<27, 1, 6, 4>(nxx, ny, c[0], c[1], c[2], 3, 0);
            fails += check<27, 1, 8, 2>(nxx, ny, c[0], c[1], c[2], 1, 64);
            fails += check<27, 2, 12, 2>(nxx, ny, c[0], c[1], c[2], 6, 64);
            fails += check<27, 2, 10, 2>(nxx, ny, c[0], c[1], c[2], 4, 5);
            fails += check<27, 2, 6, 3>(nxx, ny, c[0], c[1], c[2], 6, 0);
            fails += check<27, 2, 8, 3>(nxx, ny, c[0], c[1], c[2], 4, 3);
            fails += check<27, 2, 6, 4>(nxx, ny, c[0], c[1], c[2], 6, 7);
            fails += check<27, 3, 8, 2>(nxx, ny, c[0], c[1], c[2], 6, 4);
            fails += check<27, 3, 6, 3>(nxx, ny, c[0], c[1], c[2], 6, 0);
            fails += check<27, 3, 12, 2>(nxx, ny, c[0], c[1], c[2], 3, 64);
        }
    for (int kind = 0; kind < 3; kind++) {
        fails += check_ranges<27, 2, 12, 2>(nx, ny, 48, 16, 16, 4, 5, kind);
        fails += check_ranges<27, 3, 8, 2>(78, ny, 24, 0, 24, 6, 0, kind);
        fails += check_ranges<27, 1, 6, 4>(78, ny, 24, 0, 24, 6, 3, kind);
    }
    emu_staged = 2;
    fails += check<27, 2, 12, 2>(nx, ny, 30, 9, 12, 6, 5);
    fails += check<27, 3, 6, 3>(78, ny, 30, 0, 12, 6, 0);
    emu_staged = 0;
    /* the first kernels (k_tb7, k_tb27, --tb-unroll 0); the cases above ran k_tb7u and k_tb27u */
    emu_rolled = true;
    for (const auto &c : sub) {
        fails += check<7, 3, 16, 2>(nx, ny, c[0], c[1], c[2], 6, 9);
        fails += check<7, 4, 4, 4>(nx, ny, c[0], c[1], c[2], 4, 0);
        fails += check<27, 2, 8, 2>(nx, ny, c[0], c[1], c[2], 6, 5);
        fails += check<27, 3, 16, 1>(nx, ny, c[0], c[1], c[2], 6, 0);
    }
    fails += check_ranges<7, 2, 8, 4>(nx, ny, 48, 16, 16, 4, 5, 1);
    fails += check_ranges<27, 2, 8, 2>(nx, ny, 24, 0, 24, 6, 3, 2);
    printf("%s\n", fails ? "blocked kernels: some cases DIFFERENT" : "blocked kernels: every case identical");
    return fails != 0;
}
