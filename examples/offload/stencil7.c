/* A 7-point Jacobi step written once with include/kyoyu/offload.h (seed 002's macros): the same source is
 * an OpenACC, OpenMP target, host OpenMP or serial kernel by KY_OFFLOAD_BACKEND. The arrays stay on the
 * device between steps (KY_DATA_ENTER / KY_DATA_EXIT); the loop nest is the z-y rows in parallel and x on
 * each row's lanes (KY_OFFLOAD_INNER), or one collapsed loop (ofl_loop_shape: offload_kernels.h). */
#include <string.h>

#include "offload_kernels.h"

#include <kyoyu/offload.h>

int ofl_loop_shape = OFL_SHAPE_WARPS;

static const char *const ofl_shape_names[OFL_NSHAPES] = {"flat", "rows", "warps", "gang", "team", "zstream"};
const char *ofl_shape_name(int shape)
{
    return shape >= 0 && shape < OFL_NSHAPES ? ofl_shape_names[shape] : "?";
}
int ofl_shape_parse(const char *name)
{
    for (int s = 0; s < OFL_NSHAPES; s++)
        if (!strcmp(name, ofl_shape_names[s])) return s;
    return -1;
}

#define OFL_AT(z, y, x) (((size_t)(z) * (size_t)ny + (size_t)(y)) * (size_t)nx + (size_t)(x))
/* one point, shared by the directive loop and the plain one so that both add in the same order */
#define OFL_S7_POINT(z, y, x)                                                               \
    out[OFL_AT(z, y, x)] =                                                                  \
        c0 * in[OFL_AT(z, y, x)] +                                                          \
        c1 * (in[OFL_AT(z - 1, y, x)] + in[OFL_AT(z + 1, y, x)] + in[OFL_AT(z, y - 1, x)] + \
              in[OFL_AT(z, y + 1, x)] + in[OFL_AT(z, y, x - 1)] + in[OFL_AT(z, y, x + 1)])

/* clang-format would write the array sections a[0:n] as "a[0:n]" */
/* clang-format off */
void ofl_stencil_enter(int nz, int ny, int nx, double *a, double *b)
{
    size_t n = (size_t)nz * ny * nx;
    KY_DATA_ENTER(KY_OPT_COPYIN(a[0:n], b[0:n]))
    (void)n, (void)a, (void)b; /* named in the directive only (none at all on host back ends) */
}

void ofl_stencil_exit(int nz, int ny, int nx, double *a, double *b)
{
    size_t n = (size_t)nz * ny * nx;
    KY_DATA_EXIT(KY_OPT_COPYOUT(a[0:n], b[0:n]))
    (void)n, (void)a, (void)b;
}

/* the row shapes: the z-y rows in parallel as the clauses say, each row's x on the lanes (KY_OFFLOAD with
 * KY_OFFLOAD_INNER) or on the threads of the row's block (KY_OFFLOAD_TEAMS with KY_OFFLOAD_THREADS) */
#define OFL_S7_ROWS(OUTER, INNER, ...)                                                                     \
    OUTER(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_PRESENT(in[0:n], out[0:n]), __VA_ARGS__)          \
    for (int z = 1; z < nz - 1; z++)                                                                       \
        for (int y = 1; y < ny - 1; y++) {                                                                 \
            INNER()                                                                                        \
            for (int x = 1; x < nx - 1; x++) OFL_S7_POINT(z, y, x);                                        \
        }

/* ZSTREAM: the y-x columns on the threads, each walking z with the planes below, at and above in registers
 * (zm, zc, zp); the same sum, in the same order, as OFL_S7_POINT */
#define OFL_S7_ZSTREAM()                                                                                   \
    KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_PRESENT(in[0:n], out[0:n]), KY_OPT_NUM(128)) \
    for (int y = 1; y < ny - 1; y++)                                                                       \
        for (int x = 1; x < nx - 1; x++) {                                                                 \
            double zm = in[OFL_AT(0, y, x)], zc = in[OFL_AT(1, y, x)];                                     \
            for (int z = 1; z < nz - 1; z++) {                                                             \
                double zp = in[OFL_AT(z + 1, y, x)];                                                       \
                out[OFL_AT(z, y, x)] = c0 * zc + c1 * (zm + zp + in[OFL_AT(z, y - 1, x)] +                 \
                                                       in[OFL_AT(z, y + 1, x)] + in[OFL_AT(z, y, x - 1)] + \
                                                       in[OFL_AT(z, y, x + 1)]);                           \
                zm = zc;                                                                                   \
                zc = zp;                                                                                   \
            }                                                                                              \
        }

void ofl_stencil7_step(int nz, int ny, int nx, const double *OFL_RESTRICT in, double *OFL_RESTRICT out,
                       double c0, double c1)
{
    size_t n = (size_t)nz * ny * nx;
    (void)n;
    switch (ofl_loop_shape) {
    case OFL_SHAPE_ROWS: OFL_S7_ROWS(KY_OFFLOAD, KY_OFFLOAD_INNER, OFL_CL_ROWS) return;
    case OFL_SHAPE_WARPS: OFL_S7_ROWS(KY_OFFLOAD, KY_OFFLOAD_INNER, OFL_CL_WARPS) return;
    case OFL_SHAPE_GANG: OFL_S7_ROWS(KY_OFFLOAD, KY_OFFLOAD_INNER, OFL_CL_GANG) return;
    case OFL_SHAPE_TEAM: OFL_S7_ROWS(KY_OFFLOAD_TEAMS, KY_OFFLOAD_THREADS, OFL_CL_TEAM) return;
    case OFL_SHAPE_ZSTREAM: OFL_S7_ZSTREAM() return;
    }
    KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(3), KY_OPT_PRESENT(in[0:n], out[0:n]), KY_OPT_NUM(128))
    for (int z = 1; z < nz - 1; z++)
        for (int y = 1; y < ny - 1; y++)
            for (int x = 1; x < nx - 1; x++) OFL_S7_POINT(z, y, x);
}

double *ofl_stencil7_run(int nz, int ny, int nx, double *a, double *b, double c0, double c1, int steps)
{
    size_t n = (size_t)nz * ny * nx;
    (void)n;
    for (int s = 0; s < steps; s++) {
        ofl_stencil7_step(nz, ny, nx, a, b, c0, c1);
        double *t = a;
        a = b, b = t;
    }
    KY_UPDATE_HOST(a[0:n])
    return a;
}

/* clang-format on */
void ofl_stencil7_step_plain(int nz, int ny, int nx, const double *in, double *out, double c0, double c1)
{
    for (int z = 1; z < nz - 1; z++)
        for (int y = 1; y < ny - 1; y++)
            for (int x = 1; x < nx - 1; x++) OFL_S7_POINT(z, y, x);
}
