/* ky_stencil_gpu: the stencil kernels (7- and 27-point, z-marching threads), the temporal-blocking step
 * ranges, initial values and the CPU reference. Built with -fmad=false so the GPU does the same IEEE
 * operations in the same order as the CPU: every variant, the single-GPU run and the CPU agree exactly. */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "stencil_gpu.h"

void sg_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ky_stencil_gpu: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

double sg_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

__host__ __device__ static inline double init_value(int z, int y, int x)
{
    unsigned h = (unsigned)z * 73856093u ^ (unsigned)y * 19349663u ^ (unsigned)x * 83492791u;
    return (double)(h % 1000u) * 1e-3;
}
double sg_init_value(int z, int y, int x) { return init_value(z, y, x); }

double sg_flops_per_point(int pts) { return pts == 7 ? 8.0 : 30.0; }

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

enum { BX = 64, BY = 4, ZCHUNK = 16 };

/* Partial sums of one plane for the 27-point kernel (see point<27>): q is this lane's point of the plane.
 * Each lane loads its own three rows (aligned); the x-1 and x+1 values come from the neighbouring lanes.
 * Lane 0 and lane 31 load the x-1 resp. x+1 column just outside the warp instead (halo, where it lies in
 * the row) and use it in place of the shuffled value. All 32 lanes must call this. */
__device__ static inline void plane27(const double *__restrict__ q, size_t X, int lane, bool halo, int hoff,
                                      double &C, double &F4, double &K4)
{
    const unsigned full = 0xffffffffu;
    double r0 = __ldg(q - X), r1 = __ldg(q), r2 = __ldg(q + X);
    double h0 = 0.0, h1 = 0.0, h2 = 0.0;
    if (halo) {
        h0 = __ldg(q + hoff - X);
        h1 = __ldg(q + hoff);
        h2 = __ldg(q + hoff + X);
    }
    double col = r0 + r2, hcol = h0 + h2;
    double cm = __shfl_up_sync(full, r1, 1), colm = __shfl_up_sync(full, col, 1);
    double cp = __shfl_down_sync(full, r1, 1), colp = __shfl_down_sync(full, col, 1);
    if (lane == 0) {
        cm = h1;
        colm = hcol;
    }
    if (lane == 31) {
        cp = h1;
        colp = hcol;
    }
    C = r1;
    F4 = (col + cm) + cp;
    K4 = colm + colp;
}

/* Planes [p_lo, p_hi) of the buffer, interior x and y. Each thread marches ZCHUNK planes. Threads start at
 * x = 0 (idle on the two x faces) so that a warp's 32 doubles are two whole 128-byte lines of a row
 * (rows of a multiple of 16 doubles): starting at x = 1 made every warp touch three lines and write two of
 * them partially. The 7-point kernel keeps the z column in registers (the plane below, this one, the one
 * above) and loads only the next plane's value and the four in-plane neighbours per point; the sums are
 * the same as point<7> in the same order, so results stay bitwise equal to the CPU's. */
template <int PTS>
__global__ void __launch_bounds__(BX * BY) k_stencil(const double *__restrict__ src, double *__restrict__ dst,
                                                     int nx, int ny, int p_lo, int p_hi)
{
    int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y + 1;
    if (y >= ny - 1) return; /* whole warps: a warp is 32 x of one row */
    size_t P = (size_t)nx * ny, X = (size_t)nx;
    int z0 = p_lo + (int)blockIdx.z * ZCHUNK, z1 = min(z0 + ZCHUNK, p_hi);
    if (z0 >= z1) return;
    if (PTS == 7) {
        if (x < 1 || x >= nx - 1) return;
        size_t i = (size_t)z0 * P + (size_t)y * X + x;
        double below = __ldg(src + i - P), here = __ldg(src + i);
        for (int z = z0; z < z1; z++, i += P) {
            double above = __ldg(src + i + P);
            dst[i] = 0.4 * here + 0.1 * (below + above + __ldg(src + i - X) + __ldg(src + i + X) +
                                         __ldg(src + i - 1) + __ldg(src + i + 1));
            below = here;
            here = above;
        }
    } else {
        /* 27-point: the 9-load-per-point version was bound by L1 loads (57% of the roofline). Now each new
         * plane costs 3 aligned loads per lane plus shuffles: C, F4 and K4 of the planes below (a), here (b)
         * and above (c) stay in registers. The lanes of a warp shuffle, so none may leave early: a warp
         * past the row returns whole; lanes past nx-1 load x = nx-1 and do not store; lanes 0 and 31 load
         * the column outside the warp (never outside the row). */
        int lane = (int)(threadIdx.x & 31u);
        if (x - lane >= nx) return;
        int xc = min(x, nx - 1);
        bool halo = (lane == 0 && x >= 1) || (lane == 31 && x + 1 <= nx - 1);
        int hoff = lane == 0 ? -1 : 1;
        bool store = x >= 1 && x <= nx - 2;
        size_t i = (size_t)z0 * P + (size_t)y * X + xc;
        double Ca, Fa, Ka, Cb, Fb, Kb, Cc, Fc, Kc;
        plane27(src + i - P, X, lane, halo, hoff, Ca, Fa, Ka);
        plane27(src + i, X, lane, halo, hoff, Cb, Fb, Kb);
        for (int z = z0; z < z1; z++, i += P) {
            plane27(src + i + P, X, lane, halo, hoff, Cc, Fc, Kc);
            double f = (Ca + Cc) + Fb;
            double e = (Fa + Fc) + Kb;
            double k = Ka + Kc;
            if (store) dst[i] = 0.2 * Cb + 0.05 * f + 0.02 * e + 0.01 * k;
            Ca = Cb;
            Fa = Fb;
            Ka = Kb;
            Cb = Cc;
            Fb = Fc;
            Kb = Kc;
        }
    }
}

__global__ void k_init(double *a, double *b, int nx, int ny, int zg0, int nplanes, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, p = blockIdx.z;
    if (x >= nx) return;
    int z = zg0 + p;
    double v = (z >= 0 && z < nz) ? init_value(z, y, x) : 0.0;
    size_t i = ((size_t)p * ny + y) * nx + x;
    a[i] = v;
    b[i] = v;
}

void sg_init_sub(const sg_prob_t *p, sg_sub_t *d)
{
    SG_CUDA(cudaSetDevice(d->dev));
    int np = d->nz + 2 * d->h;
    dim3 grid((p->nx + 127) / 128, p->ny, np);
    k_init<<<grid, 128, 0, d->s>>>(d->src, d->dst, p->nx, p->ny, d->z0 - d->h, np, p->nz);
    SG_CUDA(cudaGetLastError());
}

void sg_block_steps(const sg_prob_t *p, sg_sub_t *d)
{
    SG_CUDA(cudaSetDevice(d->dev));
    for (int tt = 0; tt < p->bt; tt++) {
        int ext = p->bt - 1 - tt; /* planes of redundant computation left on each side */
        int lo = d->h - (d->has_lo ? ext : 0), hi = d->h + d->nz + (d->has_hi ? ext : 0);
        int glo = d->z0 - d->h + lo, ghi = d->z0 - d->h + hi; /* keep off the fixed global faces */
        if (glo < 1) lo += 1 - glo;
        if (ghi > p->nz - 1) hi -= ghi - (p->nz - 1);
        if (hi > lo) {
            dim3 grid((p->nx + BX - 1) / BX, (p->ny - 2 + BY - 1) / BY, (hi - lo + ZCHUNK - 1) / ZCHUNK);
            dim3 block(BX, BY, 1);
            if (p->pts == 7) k_stencil<7><<<grid, block, 0, d->s>>>(d->src, d->dst, p->nx, p->ny, lo, hi);
            else k_stencil<27><<<grid, block, 0, d->s>>>(d->src, d->dst, p->nx, p->ny, lo, hi);
            SG_CUDA(cudaGetLastError());
        }
        double *t = d->src;
        d->src = d->dst;
        d->dst = t;
    }
}

void sg_cpu_run(const sg_prob_t *p, double *a)
{
    size_t P = sg_plane(p), X = (size_t)p->nx, n = P * (size_t)p->nz;
    double *b = (double *)malloc(n * sizeof(double));
    if (!b) sg_die("no memory for the CPU reference");
    for (int z = 0; z < p->nz; z++)
        for (int y = 0; y < p->ny; y++)
            for (int x = 0; x < p->nx; x++) a[((size_t)z * p->ny + y) * X + x] = init_value(z, y, x);
    memcpy(b, a, n * sizeof(double));
    double *s = a, *d = b;
    for (int t = 0; t < p->steps; t++) {
        for (int z = 1; z < p->nz - 1; z++)
            for (int y = 1; y < p->ny - 1; y++)
                for (int x = 1; x < p->nx - 1; x++) {
                    size_t i = (size_t)z * P + (size_t)y * X + x;
                    d[i] = p->pts == 7 ? point<7>(s, i, P, X) : point<27>(s, i, P, X);
                }
        double *t2 = s;
        s = d;
        d = t2;
    }
    if (s != a) memcpy(a, s, n * sizeof(double));
    free(b);
}
