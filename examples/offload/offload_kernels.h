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

/* The stencils' loop shape: FLAT, one collapsed loop over every point (the default), or ROWS, the z-y rows
 * collapsed and each row's x on the lanes (KY_OFFLOAD_INNER): no flat index to divide per point on a GPU */
enum { OFL_SHAPE_FLAT = 0, OFL_SHAPE_ROWS = 1 };
extern int ofl_loop_shape;

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
