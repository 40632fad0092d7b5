/* ky_himeno: the temporally blocked kernel (tb_kernel.cuh) run on the CPU and checked against the CPU kernel
 * (hg_cpu_jacobi, the same float operations as the GPU's single-step kernels, -ffp-contract=off), so that a
 * machine without a GPU tests it (ctest himeno.tb_emu; the GPU tests run the real thing with --tb --check).
 *
 * The kernel's source is compiled as host code: every CUDA thread of a block is a fiber (ucontext) and
 * __syncthreads() hands over to the next, so a block runs in rounds from barrier to barrier as on the GPU
 * (apps/common/cuda_fibers.h, shared with ky_stencil_gpu's test). Shared memory starts
 * as huge values (then the kernel zeroes it), the fields' ghosts and padding as NaN-free sentinels the check
 * covers too. For odd grids, both tiles, tb 1..3 and i chunks that do not divide the planes, chains of
 * m = 1 .. 7 iterations (passes of tb, the last one shorter, as hg_gpu_chain_tb runs them): the field after
 * every pass bit for bit (ghosts and padding included), and every iteration's gosa, which sums the same ss
 * in another order, within 1e-12 relative of the CPU kernel's.
 *
 *   ky_himeno_tb_emu        exit status 0: every case identical */
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "himeno.h"

/* what the kernel uses of CUDA, and its threads as fibers */
#define HG_TB_EMULATION 1
#include "cuda_fibers.h"
static float *emu_smem;
static float *hg_tb_smem()
{
    return emu_smem;
}

/* the block's sums: each thread adds its own (the order differs from the GPU's, as the GPU's from the CPU's)
 */
template <int TB>
static void hg_tb_sum(double (&acc)[TB], double *ring, int n0);

#include "tb_kernel.cuh"

template <int TB>
static void hg_tb_sum(double (&acc)[TB], double *ring, int n0)
{
    for (int s = 0; s < TB; s++) ring[(n0 + s) % HG_TB_RING] += acc[s];
}

/* ---- one pass, as hg_gpu_chain_tb launches it -----------------------------------------------------------
 */
template <int TB, int TBX, int TBY>
static bool pass(const hg_block_t *b, const hg_coef_t *cf, const float *p, float *q, double *ring, int n0,
                 int chunk)
{
    hg_tb_args g = hg_tb_args_of(b, chunk, n0, 0.8f);
    gridDim = dim3{(unsigned)((g.ue2 - g.ub2 + TBX - 2 * TB - 1) / (TBX - 2 * TB)),
                   (unsigned)((g.ue1 - g.ub1 + TBY - 2 * TB - 1) / (TBY - 2 * TB)),
                   (unsigned)((g.ue0 - g.ub0 + chunk - 1) / chunk)};
    blockDim = dim3{TBX, TBY, 1};
    std::vector<float> sm((size_t)TB * 3 * hg_tb_plane<TBX, TBY>());
    emu_smem = sm.data();
    emu_body = [=] { hg_tb_kernel<TB, TBX, TBY>(g, p, q, cf->a, cf->b, cf->c, cf->bnd, cf->wrk1, ring); };
    for (unsigned z = 0; z < gridDim.z; z++)
        for (unsigned y = 0; y < gridDim.y; y++)
            for (unsigned x = 0; x < gridDim.x; x++) {
                blockIdx = dim3{x, y, z};
                std::fill(sm.begin(), sm.end(), 1e30f);
                if (!emu_block(TBX * TBY)) return false;
            }
    return true;
}

template <int TBX, int TBY>
static bool pass_t(int T, const hg_block_t *b, const hg_coef_t *cf, const float *p, float *q, double *ring,
                   int n0, int chunk)
{
    return T == 1   ? pass<1, TBX, TBY>(b, cf, p, q, ring, n0, chunk)
           : T == 2 ? pass<2, TBX, TBY>(b, cf, p, q, ring, n0, chunk)
                    : pass<3, TBX, TBY>(b, cf, p, q, ring, n0, chunk);
}

/* m iterations of the grid in passes of tb against m CPU iterations; returns 1 if anything differs */
static int check(int I, int J, int K, float bcoef, int tb, int tile, int chunk, int m)
{
    hg_opts_t o;
    memset(&o, 0, sizeof o);
    o.grid[0] = I, o.grid[1] = J, o.grid[2] = K, o.dims[0] = o.dims[1] = o.dims[2] = 1, o.gpu = 1;
    o.bcoef = bcoef;
    hg_block_t b;
    hg_block_of(&o, 0, &b);
    size_t v = b.vol;
    std::vector<float> coef(12 * v), p0(v);
    hg_coef_t cf = {coef.data(), coef.data() + 4 * v, coef.data() + 7 * v, coef.data() + 10 * v,
                    coef.data() + 11 * v};
    hg_init_values(&o, &b, p0.data(), &cf);
    for (size_t x = 0; x < v; x++) /* ghosts and padding: values nobody may change */
        if (p0[x] == 0.0f) p0[x] = -7.0f - (float)(x % 13);
    std::vector<float> c0 = p0, c1 = p0, t0 = p0, t1 = p0;
    float *cp = c0.data(), *cq = c1.data(), *tp = t0.data(), *tq = t1.data();
    double ring[HG_TB_RING] = {0};
    int bad = 0, barriers = 1;
    double worst = 0.0;
    for (int it = 0; it < m;) {
        int T = std::min(tb, m - it);
        barriers &= tile ? pass_t<64, 16>(T, &b, &cf, tp, tq, ring, it, chunk)
                         : pass_t<32, 16>(T, &b, &cf, tp, tq, ring, it, chunk);
        std::swap(tp, tq);
        for (int s = 0; s < T; s++, it++) {
            double g = hg_cpu_jacobi(&b, &cf, cp, cq, 0.8f), got = ring[it % HG_TB_RING];
            std::swap(cp, cq);
            double rel = g == got ? 0.0 : std::fabs(got - g) / std::fabs(g);
            worst = std::max(worst, rel);
            if (!(rel <= 1e-12) && bad++ < 3) printf("  iteration %d: gosa %.17g, CPU %.17g\n", it, got, g);
        }
        for (size_t x = 0; x < v; x++)
            if (memcmp(&tp[x], &cp[x], sizeof(float)) && bad++ < 3)
                printf("  after %d iterations, i %zu j %zu k %zu: %.9g, CPU %.9g\n", it,
                       x / ((size_t)b.ext[1] * b.ext[2]), x / b.ext[2] % b.ext[1], x % b.ext[2], tp[x],
                       cp[x]);
    }
    printf(
        "grid %dx%dx%d bcoef %g, tb %d, tile %s, chunk %2d, %d iterations: %s (gosa largest rel. diff "
        "%.1e)\n",
        I, J, K, bcoef, tb, tile ? "64x16" : "32x16", chunk, m,
        !barriers ? "THREADS LEFT AT DIFFERENT BARRIERS"
        : bad     ? "DIFFERENT"
                  : "identical",
        worst);
    return bad || !barriers;
}

int main()
{
    int fails = 0;
    /* odd sizes: partial tiles along k and j, chunks that do not divide the i planes */
    const int grids[][3] = {{13, 11, 37}, {9, 23, 70}, {20, 7, 5}};
    for (const auto &gr : grids)
        for (int tb = 1; tb <= 3; tb++) {
            fails += check(gr[0], gr[1], gr[2], 0.05f, tb, 0, 4, 2 * tb + 1);
            fails += check(gr[0], gr[1], gr[2], 0.05f, tb, 1, 5, 2 * tb + 1);
        }
    fails += check(13, 11, 37, 0.0f, 2, 0, 64, 7);
    fails += check(13, 11, 37, 0.0f, 3, 0, 3, 7);
    fails += check(9, 23, 70, 0.05f, 3, 1, 64, 5);
    printf("%s\n", fails ? "blocked Himeno kernel: some cases DIFFERENT"
                         : "blocked Himeno kernel: every case identical");
    return fails != 0;
}
