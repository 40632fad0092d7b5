/* ky_stencil's 27-point update (apps/stencil/kernel.c) written once with include/kyoyu/offload.h: faces,
 * edges and corners summed in the same order as there, so that each back end's result is bitwise the
 * CPU application's. The arrays are on the device already (ofl_stencil_enter in stencil7.c). */
#include "offload_kernels.h"

#include <kyoyu/offload.h>

#define OFL_AT(z, y, x) (((size_t)(z) * (size_t)ny + (size_t)(y)) * (size_t)nx + (size_t)(x))
#define OFL_W27C 0.3
#define OFL_W27F 0.05
#define OFL_W27E 0.025
#define OFL_W27K 0.0125

/* one point, shared by the directive loop and the plain one: i the point, yn and zn the row and plane
 * strides; m and p stand for the planes below and above */
#define OFL_S27_POINT(i)                                                                                     \
    do {                                                                                                     \
        const size_t c_ = (i), m_ = c_ - zn, p_ = c_ + zn;                                                   \
        double f = in[c_ - 1] + in[c_ + 1] + in[c_ - yn] + in[c_ + yn] + in[m_] + in[p_];                    \
        double e = in[c_ - yn - 1] + in[c_ - yn + 1] + in[c_ + yn - 1] + in[c_ + yn + 1] + in[m_ - 1] +      \
                   in[m_ + 1] + in[p_ - 1] + in[p_ + 1] + in[m_ - yn] + in[m_ + yn] + in[p_ - yn] +          \
                   in[p_ + yn];                                                                              \
        double k = in[m_ - yn - 1] + in[m_ - yn + 1] + in[m_ + yn - 1] + in[m_ + yn + 1] + in[p_ - yn - 1] + \
                   in[p_ - yn + 1] + in[p_ + yn - 1] + in[p_ + yn + 1];                                      \
        out[c_] = OFL_W27C * in[c_] + OFL_W27F * f + OFL_W27E * e + OFL_W27K * k;                            \
    } while (0)

/* clang-format would write the array sections a[0:n] as "a [0:n]" */
/* clang-format off */
/* the row shapes (offload_kernels.h): the z-y rows in parallel as the clauses say, x on the lanes (OUTER,
 * INNER: KY_OFFLOAD, KY_OFFLOAD_INNER) or on the row's block's threads (KY_OFFLOAD_TEAMS, _THREADS) */
#define OFL_S27_ROWS(OUTER, INNER, ...)                                                                    \
    OUTER(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_PRESENT(in[0:n], out[0:n]), __VA_ARGS__)          \
    for (int z = 1; z < nz - 1; z++)                                                                       \
        for (int y = 1; y < ny - 1; y++) {                                                                 \
            INNER()                                                                                        \
            for (int x = 1; x < nx - 1; x++) OFL_S27_POINT(OFL_AT(z, y, x));                               \
        }

/* ZSTREAM: the y-x columns on the threads, each walking z with its column's values of the planes below, at
 * and above in registers (cm, cc, cp stand for in[m_], in[c_], in[p_]: the same sums, in the same order, as
 * OFL_S27_POINT) */
#define OFL_S27_ZSTREAM()                                                                                  \
    KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_PRESENT(in[0:n], out[0:n]), KY_OPT_NUM(128)) \
    for (int y = 1; y < ny - 1; y++)                                                                       \
        for (int x = 1; x < nx - 1; x++) {                                                                 \
            double cm = in[OFL_AT(0, y, x)], cc = in[OFL_AT(1, y, x)];                                     \
            for (int z = 1; z < nz - 1; z++) {                                                             \
                const size_t c_ = OFL_AT(z, y, x), m_ = c_ - zn, p_ = c_ + zn;                             \
                double cp = in[p_];                                                                        \
                double f = in[c_ - 1] + in[c_ + 1] + in[c_ - yn] + in[c_ + yn] + cm + cp;                  \
                double e = in[c_ - yn - 1] + in[c_ - yn + 1] + in[c_ + yn - 1] + in[c_ + yn + 1] +         \
                           in[m_ - 1] + in[m_ + 1] + in[p_ - 1] + in[p_ + 1] + in[m_ - yn] + in[m_ + yn] + \
                           in[p_ - yn] + in[p_ + yn];                                                      \
                double k = in[m_ - yn - 1] + in[m_ - yn + 1] + in[m_ + yn - 1] + in[m_ + yn + 1] +         \
                           in[p_ - yn - 1] + in[p_ - yn + 1] + in[p_ + yn - 1] + in[p_ + yn + 1];          \
                out[c_] = OFL_W27C * cc + OFL_W27F * f + OFL_W27E * e + OFL_W27K * k;                      \
                cm = cc;                                                                                   \
                cc = cp;                                                                                   \
            }                                                                                              \
        }

void ofl_stencil27_step(int nz, int ny, int nx, const double *OFL_RESTRICT in, double *OFL_RESTRICT out)
{
    const size_t n = (size_t)nz * ny * nx, yn = (size_t)nx, zn = (size_t)nx * ny;
    (void)n;
    switch (ofl_loop_shape) {
    case OFL_SHAPE_ROWS: OFL_S27_ROWS(KY_OFFLOAD, KY_OFFLOAD_INNER, OFL_CL_ROWS) return;
    case OFL_SHAPE_WARPS: OFL_S27_ROWS(KY_OFFLOAD, KY_OFFLOAD_INNER, OFL_CL_WARPS) return;
    case OFL_SHAPE_GANG: OFL_S27_ROWS(KY_OFFLOAD, KY_OFFLOAD_INNER, OFL_CL_GANG) return;
    case OFL_SHAPE_TEAM: OFL_S27_ROWS(KY_OFFLOAD_TEAMS, KY_OFFLOAD_THREADS, OFL_CL_TEAM) return;
    case OFL_SHAPE_ZSTREAM: OFL_S27_ZSTREAM() return;
    }
    KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(3), KY_OPT_PRESENT(in[0:n], out[0:n]), KY_OPT_NUM(128))
    for (int z = 1; z < nz - 1; z++)
        for (int y = 1; y < ny - 1; y++)
            for (int x = 1; x < nx - 1; x++) OFL_S27_POINT(OFL_AT(z, y, x));
}
/* clang-format on */

void ofl_stencil27_step_plain(int nz, int ny, int nx, const double *in, double *out)
{
    const size_t yn = (size_t)nx, zn = (size_t)nx * ny;
    for (int z = 1; z < nz - 1; z++)
        for (int y = 1; y < ny - 1; y++)
            for (int x = 1; x < nx - 1; x++) OFL_S27_POINT(OFL_AT(z, y, x));
}
