/* ky_stencil kernels: the 7- and 27-point updates, the initial values and the serial reference.
 *
 * 7-point (seed 000 Fig. 7): u' = 0.4 c + 0.1 (sum of the 6 face neighbours): 8 flops per point
 * (1 mul, 5 adds, 1 mul, 1 add).
 * 27-point: u' = 0.3 c + 0.05 (6 faces) + 0.025 (12 edges) + 0.0125 (8 corners); the weights sum to 1 so
 * values stay bounded. 30 flops per point (23 adds inside the groups, 4 muls, 3 adds). */
#include <stdlib.h>

#include "stencil.h"

#define W7C 0.4
#define W7F 0.1
#define W27C 0.3
#define W27F 0.05
#define W27E 0.025
#define W27K 0.0125

int st_flops_per_point(int points)
{
    return points == 27 ? 30 : 8;
}

double st_init_value(int z, int y, int x)
{
    /* no smooth pattern: an error in one plane or row shows up at once */
    return (double)(((long)z * 31 + (long)y * 17 + (long)x * 7) % 101) / 101.0;
}

void st_fill(double *u, size_t zoff, const st_params_t *p, int z0, int z1)
{
#pragma omp for collapse(2) schedule(static)
    for (int z = z0; z < z1; z++)
        for (int y = 0; y < p->ny; y++) {
            double *row = u + ((size_t)(z - (long)zoff) * p->ny + y) * p->nx;
            for (int x = 0; x < p->nx; x++) row[x] = st_init_value(z, y, x);
        }
}

static void row7(const double *s, double *d, size_t yn, size_t zn, int nx)
{
    /* s, d point at the row's first element; yn, zn the strides to the next row and plane */
    for (int x = 1; x < nx - 1; x++)
        d[x] = W7C * s[x] + W7F * (s[x - zn] + s[x + zn] + s[x - yn] + s[x + yn] + s[x - 1] + s[x + 1]);
}

static void row27(const double *s, double *d, size_t yn, size_t zn, int nx)
{
    const double *m = s - zn, *p = s + zn; /* the planes below and above */
    for (int x = 1; x < nx - 1; x++) {
        double f = s[x - 1] + s[x + 1] + s[x - yn] + s[x + yn] + m[x] + p[x];
        double e = s[x - yn - 1] + s[x - yn + 1] + s[x + yn - 1] + s[x + yn + 1] + m[x - 1] + m[x + 1] +
                   p[x - 1] + p[x + 1] + m[x - yn] + m[x + yn] + p[x - yn] + p[x + yn];
        double k = m[x - yn - 1] + m[x - yn + 1] + m[x + yn - 1] + m[x + yn + 1] + p[x - yn - 1] +
                   p[x - yn + 1] + p[x + yn - 1] + p[x + yn + 1];
        d[x] = W27C * s[x] + W27F * f + W27E * e + W27K * k;
    }
}

void st_step(const double *src, double *dst, size_t zoff, const st_params_t *p, int z0, int z1)
{
    size_t yn = (size_t)p->nx, zn = p->plane;
#pragma omp for collapse(2) schedule(static)
    for (int z = z0; z < z1; z++)
        for (int y = 1; y < p->ny - 1; y++) {
            size_t o = ((size_t)(z - (long)zoff) * p->ny + y) * p->nx;
            if (p->points == 27)
                row27(src + o, dst + o, yn, zn, p->nx);
            else
                row7(src + o, dst + o, yn, zn, p->nx);
        }
}

/* The reference, written as the textbook loop with explicit 3-D indexing. */
double *st_reference(const st_params_t *p)
{
    size_t nz = p->nz, ny = p->ny, nx = p->nx, n = nz * ny * nx;
    double *s = malloc(n * sizeof *s), *d = malloc(n * sizeof *d);
    if (s == NULL || d == NULL) {
        free(s);
        free(d);
        return NULL;
    }
#define U(a, z, y, x) a[((size_t)(z)*ny + (size_t)(y)) * nx + (size_t)(x)]
    for (size_t z = 0; z < nz; z++)
        for (size_t y = 0; y < ny; y++)
            for (size_t x = 0; x < nx; x++)
                U(s, z, y, x) = U(d, z, y, x) = st_init_value((int)z, (int)y, (int)x);
    for (int t = 0; t < p->nt; t++) {
        for (size_t z = 1; z + 1 < nz; z++)
            for (size_t y = 1; y + 1 < ny; y++)
                for (size_t x = 1; x + 1 < nx; x++) {
                    if (p->points != 27) {
                        U(d, z, y, x) = 0.4 * U(s, z, y, x) +
                                        0.1 * (U(s, z - 1, y, x) + U(s, z + 1, y, x) + U(s, z, y - 1, x) +
                                               U(s, z, y + 1, x) + U(s, z, y, x - 1) + U(s, z, y, x + 1));
                        continue;
                    }
                    /* by distance class: |dz|+|dy|+|dx| = 1 face, 2 edge, 3 corner */
                    double sum[4] = {0, 0, 0, 0};
                    for (int dz = -1; dz <= 1; dz++)
                        for (int dy = -1; dy <= 1; dy++)
                            for (int dx = -1; dx <= 1; dx++)
                                sum[abs(dz) + abs(dy) + abs(dx)] += U(s, z + dz, y + dy, x + dx);
                    U(d, z, y, x) = W27C * sum[0] + W27F * sum[1] + W27E * sum[2] + W27K * sum[3];
                }
        double *tm = s;
        s = d;
        d = tm;
    }
#undef U
    free(d);
    return s;
}
