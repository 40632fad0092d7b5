/* ky_himeno's host side of the computation: the arrays' initial values (the original's mat_set and
 * mat_set_init), the OpenMP kernel on one rank's block, face packing for the host path, and the serial
 * reference: the original jacobi() with its copy-back loop on the whole grid, which the checks compare with.
 * Built with -ffp-contract=off (and the CUDA file with -fmad=false) so that every point's new value is the
 * same float on every decomposition, CPU or GPU; only the order of gosa's double sum differs. */
#include <stdlib.h>
#include <string.h>

#include "himeno.h"

#define IDX(b, i, j, k) (((size_t)(i) * (b)->ext[1] + (size_t)(j)) * (b)->ext[2] + (size_t)(k))

static float p_init(int gi, int I)
{
    return (float)(gi * gi) / (float)((I - 1) * (I - 1));
}

void hg_init_values(const hg_opts_t *o, const hg_block_t *b, float *p, hg_coef_t *cf)
{
    size_t v = b->vol;
    for (int i = 0; i < b->ext[0]; i++)
        for (int j = 0; j < b->ext[1]; j++)
            for (int k = 0; k < b->ext[2]; k++) {
                int g[3] = {b->lo[0] + i - 1, b->lo[1] + j - 1, b->lo[2] + k - 1};
                int in = k < b->n[2] + 2; /* not the row's padding */
                for (int d = 0; d < 3; d++) in &= g[d] >= 0 && g[d] < o->grid[d];
                size_t x = IDX(b, i, j, k);
                float one = in ? 1.0f : 0.0f;
                cf->a[x] = cf->a[v + x] = cf->a[2 * v + x] = one;
                cf->a[3 * v + x] = in ? (float)(1.0 / 6.0) : 0.0f;
                cf->b[x] = cf->b[v + x] = cf->b[2 * v + x] = in ? o->bcoef : 0.0f;
                cf->c[x] = cf->c[v + x] = cf->c[2 * v + x] = one;
                cf->bnd[x] = one;
                cf->wrk1[x] = 0.0f;
                p[x] = in ? p_init(g[0], o->grid[0]) : 0.0f;
            }
}

/* The original loop body, term for term and in the same order. */
#define HG_POINT(P, A, B, C, BND, WRK1, v, x, si, sj)                                                    \
    (A[x] * P[x + si] + A[v + x] * P[x + sj] + A[2 * v + x] * P[x + 1] +                                 \
     B[x] * (P[x + si + sj] - P[x + si - sj] - P[x - si + sj] + P[x - si - sj]) +                        \
     B[v + x] * (P[x + sj + 1] - P[x - sj + 1] - P[x + sj - 1] + P[x - sj - 1]) +                        \
     B[2 * v + x] * (P[x + si + 1] - P[x - si + 1] - P[x + si - 1] + P[x - si - 1]) + C[x] * P[x - si] + \
     C[v + x] * P[x - sj] + C[2 * v + x] * P[x - 1] + WRK1[x])

double hg_cpu_jacobi(const hg_block_t *b, const hg_coef_t *cf, const float *restrict p, float *restrict q,
                     float omega)
{
    const size_t v = b->vol, si = (size_t)b->ext[1] * b->ext[2], sj = (size_t)b->ext[2];
    const float *A = cf->a, *B = cf->b, *C = cf->c, *BND = cf->bnd, *W1 = cf->wrk1;
    double gosa = 0.0;
#pragma omp parallel for collapse(2) reduction(+ : gosa) schedule(static)
    for (int i = b->ub[0]; i < b->ue[0]; i++)
        for (int j = b->ub[1]; j < b->ue[1]; j++) {
            size_t x0 = IDX(b, i, j, 0);
            /* simd: a vectorised sum may add in another order (gosa is double; the field is unchanged) */
#pragma omp simd reduction(+ : gosa)
            for (int k = b->ub[2]; k < b->ue[2]; k++) {
                size_t x = x0 + (size_t)k;
                float s0 = HG_POINT(p, A, B, C, BND, W1, v, x, si, sj);
                float ss = (s0 * A[3 * v + x] - p[x]) * BND[x];
                gosa += (double)ss * (double)ss;
                q[x] = p[x] + omega * ss;
            }
        }
    return gosa;
}

void hg_cpu_pack(const hg_block_t *b, const float *f, const hg_box_t *x, float *buf)
{
    size_t n = 0;
    for (int i = x->lo[0]; i < x->hi[0]; i++)
        for (int j = x->lo[1]; j < x->hi[1]; j++)
            for (int k = x->lo[2]; k < x->hi[2]; k++) buf[n++] = f[IDX(b, i, j, k)];
}

void hg_cpu_unpack(const hg_block_t *b, float *f, const hg_box_t *x, const float *buf)
{
    size_t n = 0;
    for (int i = x->lo[0]; i < x->hi[0]; i++)
        for (int j = x->lo[1]; j < x->hi[1]; j++)
            for (int k = x->lo[2]; k < x->hi[2]; k++) f[IDX(b, i, j, k)] = buf[n++];
}

double hg_block_sum(const hg_block_t *b, const float *p)
{
    double s = 0.0;
    for (int i = b->ub[0]; i < b->ue[0]; i++)
        for (int j = b->ub[1]; j < b->ue[1]; j++)
            for (int k = b->ub[2]; k < b->ue[2]; k++) s += p[IDX(b, i, j, k)];
    return s;
}

/* The original program's arrays and jacobi(), serial, as written in himenoBMTxpa.c (MR indexing, wrk2 and
 * the copy back into p), with gosa kept both ways. */
int hg_reference(const int grid[3], int iters, float bcoef, double *gosa_d, float *gosa_f, double *psum)
{
    const size_t I = (size_t)grid[0], J = (size_t)grid[1], K = (size_t)grid[2], n = I * J * K;
    float *m = malloc(16 * n * sizeof(float));
    if (!m) return -1;
    float *p = m, *a = m + n, *b = m + 5 * n, *c = m + 8 * n, *bnd = m + 11 * n, *wrk1 = m + 12 * n,
          *wrk2 = m + 13 * n;
#define MR(mt, l, i, j, k) mt[(size_t)(l)*n + ((size_t)(i)*J + (size_t)(j)) * K + (size_t)(k)]
    for (size_t i = 0; i < I; i++)
        for (size_t j = 0; j < J; j++)
            for (size_t k = 0; k < K; k++) {
                MR(p, 0, i, j, k) = (float)(i * i) / (float)((I - 1) * (I - 1));
                for (int l = 0; l < 3; l++) {
                    MR(a, l, i, j, k) = 1.0f;
                    MR(b, l, i, j, k) = bcoef;
                    MR(c, l, i, j, k) = 1.0f;
                }
                MR(a, 3, i, j, k) = (float)(1.0 / 6.0);
                MR(bnd, 0, i, j, k) = 1.0f;
                MR(wrk1, 0, i, j, k) = 0.0f;
                MR(wrk2, 0, i, j, k) = 0.0f;
            }
    const float omega = 0.8f;
    double gd = 0.0;
    float gf = 0.0f;
    for (int it = 0; it < iters; it++) {
        gd = 0.0;
        gf = 0.0f;
        for (size_t i = 1; i < I - 1; i++)
            for (size_t j = 1; j < J - 1; j++)
                for (size_t k = 1; k < K - 1; k++) {
                    float s0 = MR(a, 0, i, j, k) * MR(p, 0, i + 1, j, k) +
                               MR(a, 1, i, j, k) * MR(p, 0, i, j + 1, k) +
                               MR(a, 2, i, j, k) * MR(p, 0, i, j, k + 1) +
                               MR(b, 0, i, j, k) * (MR(p, 0, i + 1, j + 1, k) - MR(p, 0, i + 1, j - 1, k) -
                                                    MR(p, 0, i - 1, j + 1, k) + MR(p, 0, i - 1, j - 1, k)) +
                               MR(b, 1, i, j, k) * (MR(p, 0, i, j + 1, k + 1) - MR(p, 0, i, j - 1, k + 1) -
                                                    MR(p, 0, i, j + 1, k - 1) + MR(p, 0, i, j - 1, k - 1)) +
                               MR(b, 2, i, j, k) * (MR(p, 0, i + 1, j, k + 1) - MR(p, 0, i - 1, j, k + 1) -
                                                    MR(p, 0, i + 1, j, k - 1) + MR(p, 0, i - 1, j, k - 1)) +
                               MR(c, 0, i, j, k) * MR(p, 0, i - 1, j, k) +
                               MR(c, 1, i, j, k) * MR(p, 0, i, j - 1, k) +
                               MR(c, 2, i, j, k) * MR(p, 0, i, j, k - 1) + MR(wrk1, 0, i, j, k);
                    float ss = (s0 * MR(a, 3, i, j, k) - MR(p, 0, i, j, k)) * MR(bnd, 0, i, j, k);
                    gf += ss * ss;
                    gd += (double)ss * (double)ss;
                    MR(wrk2, 0, i, j, k) = MR(p, 0, i, j, k) + omega * ss;
                }
        for (size_t i = 1; i < I - 1; i++)
            for (size_t j = 1; j < J - 1; j++)
                for (size_t k = 1; k < K - 1; k++) MR(p, 0, i, j, k) = MR(wrk2, 0, i, j, k);
    }
    double s = 0.0;
    for (size_t i = 1; i < I - 1; i++)
        for (size_t j = 1; j < J - 1; j++)
            for (size_t k = 1; k < K - 1; k++) s += MR(p, 0, i, j, k);
#undef MR
    *gosa_d = gd, *gosa_f = gf, *psum = s;
    free(m);
    return 0;
}
