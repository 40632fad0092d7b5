/* ky_stencil_gpu: the initial values and the update of one point, shared by the CPU reference and the
 * single-step kernels (kernels.cu) and the CPU emulation of the blocked kernels (tblock_emu.cpp, which
 * compiles it as host code). Every kernel sums in the order written here. */
#ifndef KY_STENCIL_GPU_POINT_H
#define KY_STENCIL_GPU_POINT_H

#include <stddef.h>

__host__ __device__ static inline double init_value(int z, int y, int x)
{
    unsigned h = (unsigned)z * 73856093u ^ (unsigned)y * 19349663u ^ (unsigned)x * 83492791u;
    return (double)(h % 1000u) * 1e-3;
}

/* One point; the CPU reference calls the same function. The 27-point sum is built from per-plane partial
 * sums (plane offset p = -P, 0, +P): col2(p, xo) = s[i+p-X+xo] + s[i+p+X+xo], C(p) = s[i+p],
 * F4(p) = (col2(p,0) + s[i+p-1]) + s[i+p+1] (in-plane faces), K4(p) = col2(p,-1) + col2(p,+1) (in-plane
 * corners). The GPU kernel computes each plane's partial sums once and shares them between x neighbours and
 * z steps; this order is the kernel's, so both stay bitwise equal. */
template <int PTS>
__host__ __device__ static inline double point(const double *s, size_t i, size_t P, size_t X)
{
    if (PTS == 7)
        return 0.4 * s[i] + 0.1 * (s[i - P] + s[i + P] + s[i - X] + s[i + X] + s[i - 1] + s[i + 1]);
    else {
        double C[3], F4[3], K4[3]; /* planes below, here, above */
        for (int q = 0; q < 3; q++) {
            size_t j = i + (size_t)q * P - P;
            double cm = s[j - X - 1] + s[j + X - 1]; /* col2(p, -1) */
            double c0 = s[j - X] + s[j + X];         /* col2(p, 0) */
            double cp = s[j - X + 1] + s[j + X + 1]; /* col2(p, +1) */
            C[q] = s[j];
            F4[q] = (c0 + s[j - 1]) + s[j + 1];
            K4[q] = cm + cp;
        }
        double f = (C[0] + C[2]) + F4[1];
        double e = (F4[0] + F4[2]) + K4[1];
        double k = K4[0] + K4[2];
        return 0.2 * C[1] + 0.05 * f + 0.02 * e + 0.01 * k;
    }
}

#endif
