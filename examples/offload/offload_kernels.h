/* The kernels of examples/offload, written once with include/kyoyu/offload.h: a 7-point Jacobi step
 * (stencil7.c) and the Himeno benchmark's jacobi iteration (himeno_kernel.c). They need no Kyoyu library,
 * only the header; build them with one back end, e.g.
 *     gcc -O3 -fopenacc -DKY_OFFLOAD_BACKEND=acc_parallel -I<kyoyu>/include stencil7.c ...
 * Arrays live on the device between calls: the caller maps them (ofl_*_enter / ofl_*_exit, or its own
 * KY_DATA_ENTER) and every loop names them present. */
#ifndef KYOYU_EXAMPLES_OFFLOAD_KERNELS_H
#define KYOYU_EXAMPLES_OFFLOAD_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
#define OFL_RESTRICT __restrict
extern "C" {
#else
#define OFL_RESTRICT restrict
#endif

/* ---- stencils on nz x ny x nx doubles, x fastest, the interior updated, out's boundary left as it is;
 * both arrays on the device from ofl_stencil_enter (copy in) to ofl_stencil_exit (copy out) ------------ */
void ofl_stencil_enter(int nz, int ny, int nx, double *a, double *b);
void ofl_stencil_exit(int nz, int ny, int nx, double *a, double *b);

/* The kernels' loop shape (ofl_loop_shape; the stencils and Himeno alike):
 *   FLAT  one collapsed loop over every point, 128 lanes per block (the first GPU run's): GCC's nvptx code
 *         divides the flat index into three per point (four 32-bit div/rem), and its OpenMP target puts
 *         such a loop on one lane of each warp (no simd)
 *   ROWS  the z-y rows collapsed, each row's x on the lanes (KY_OFFLOAD_INNER), 128 per block, the levels
 *         the compiler's (GCC OpenACC: gang worker, rows of 128 lanes)
 *   WARPS rows on gangs and workers, 32 lanes (one warp per row), 8 workers per gang: OpenACC broadcasts a
 *         row's values by warp shuffles, no block barrier per row (the default)
 *   GANG  rows on gangs only, 128 lanes (one block per row)
 *   TEAM  one block per row and its x on the block's threads by KY_OFFLOAD_TEAMS / KY_OFFLOAD_THREADS, 128
 *         threads: OpenMP target teams distribute with parallel for inside (GCC: parallel for simd), so
 *         that Clang, which runs simd loops on one thread, does not walk each row on one thread; OpenACC's
 *         code is GANG's
 *   ZSTREAM the y-x columns collapsed onto the threads (128 per block), each thread walking its column along
 *         the slowest dimension (z; Himeno's i) and keeping the column's values of the planes below, at and
 *         above in registers, so a point loads its in-plane neighbours and one new value instead of
 *         every neighbour: the 2.5-D streaming of the CUDA kernels (apps/stencil_gpu), as directives can
 *         say it (sums in the same order as the other shapes: bitwise the same results)
 * OpenMP target makes the same code of ROWS, WARPS and GANG but their thread_limit (GCC: OpenMP threads are
 * warps, simd the lanes; Clang: each row on one thread). ofl_shape_name / ofl_shape_parse: "flat", "rows",
 * "warps", "gang", "team", "zstream". */
enum {
    OFL_SHAPE_FLAT = 0,
    OFL_SHAPE_ROWS = 1,
    OFL_SHAPE_WARPS = 2,
    OFL_SHAPE_GANG = 3,
    OFL_SHAPE_TEAM = 4,
    OFL_SHAPE_ZSTREAM = 5,
    OFL_NSHAPES = 6
};
extern int ofl_loop_shape;
const char *ofl_shape_name(int shape);
int ofl_shape_parse(const char *name); /* -1 if unknown */

/* The row shapes' clauses, beside KY_OPT_COLLAPSE(2) on the z-y loops (expanded where offload.h is); the
 * first three with KY_OFFLOAD and KY_OFFLOAD_INNER, TEAM's with KY_OFFLOAD_TEAMS and KY_OFFLOAD_THREADS */
#define OFL_CL_ROWS KY_OPT_NUM(128)
#define OFL_CL_WARPS KY_OPT_GANG, KY_OPT_WORKER, KY_OPT_NUM(32), KY_OPT_NUM_WORKERS(8)
#define OFL_CL_GANG KY_OPT_GANG, KY_OPT_NUM(128)
#define OFL_CL_TEAM KY_OPT_NUM(128)

/* 7-point (stencil7.c): out = c0 * in + c1 * (sum of the 6 face neighbours); ky_stencil's with c0 = 0.4,
 * c1 = 0.1, added in its order */
void ofl_stencil7_step(int nz, int ny, int nx, const double *OFL_RESTRICT in, double *OFL_RESTRICT out,
                       double c0, double c1);
/* steps times, in and out swapped after each; returns the array holding the last step, updated on the
 * host */
double *ofl_stencil7_run(int nz, int ny, int nx, double *a, double *b, double c0, double c1, int steps);
/* the same loop without directives, for checks */
void ofl_stencil7_step_plain(int nz, int ny, int nx, const double *in, double *out, double c0, double c1);

/* 27-point (stencil27.c): ky_stencil's, 0.3 c + 0.05 (6 faces) + 0.025 (12 edges) + 0.0125 (8 corners),
 * each group added in its order, so results are bitwise ky_stencil's */
void ofl_stencil27_step(int nz, int ny, int nx, const double *OFL_RESTRICT in, double *OFL_RESTRICT out);
void ofl_stencil27_step_plain(int nz, int ny, int nx, const double *in, double *out);

/* ---- Himeno: the original jacobi() on an I x J x K grid (k fastest), its arrays in one struct -------- */
typedef struct {
    int I, J, K;
    float *p, *a, *b, *c, *bnd, *wrk1, *wrk2; /* a: 4 planes of I*J*K, b and c: 3, the others 1 */
} ofl_himeno_t;

int ofl_himeno_alloc(ofl_himeno_t *h, int I, int J, int K); /* and the original's initial values */
void ofl_himeno_free(ofl_himeno_t *h);
void ofl_himeno_enter(ofl_himeno_t *h);
void ofl_himeno_exit(ofl_himeno_t *h); /* p back to the host */
/* iters iterations on the device arrays; returns the last iteration's gosa (sum of ss^2, in double) */
double ofl_himeno_jacobi(ofl_himeno_t *h, int iters, float omega);
double ofl_himeno_jacobi_plain(ofl_himeno_t *h, int iters, float omega);

#ifdef __cplusplus
}
#endif
#endif
