/* The Himeno benchmark's jacobi() (himenoBMTxpa.c: the 19-point pressure update with its gosa residual and
 * the copy back from wrk2) written once with include/kyoyu/offload.h: OpenACC, OpenMP target, host OpenMP
 * or serial by KY_OFFLOAD_BACKEND. The arrays stay on the device across iterations; gosa is a reduction
 * in double (the original sums in float) so that back ends differ only in the order of the sum. */
#include <stdlib.h>

#include "offload_kernels.h"

#include <kyoyu/offload.h>

/* element (l, i, j, k) of a multi-plane array, the original's MR() */
#define OFL_MR(m, l, i, j, k) \
    m[(size_t)(l)*n + ((size_t)(i) * (size_t)J + (size_t)(j)) * (size_t)K + (size_t)(k)]

/* One point of the original loop, term for term; the directive loop and the plain one share it */
#define OFL_HIMENO_POINT(i, j, k)                                                                        \
    float s0 = OFL_MR(a, 0, i, j, k) * OFL_MR(p, 0, i + 1, j, k) +                                       \
               OFL_MR(a, 1, i, j, k) * OFL_MR(p, 0, i, j + 1, k) +                                       \
               OFL_MR(a, 2, i, j, k) * OFL_MR(p, 0, i, j, k + 1) +                                       \
               OFL_MR(b, 0, i, j, k) * (OFL_MR(p, 0, i + 1, j + 1, k) - OFL_MR(p, 0, i + 1, j - 1, k) -  \
                                        OFL_MR(p, 0, i - 1, j + 1, k) + OFL_MR(p, 0, i - 1, j - 1, k)) + \
               OFL_MR(b, 1, i, j, k) * (OFL_MR(p, 0, i, j + 1, k + 1) - OFL_MR(p, 0, i, j - 1, k + 1) -  \
                                        OFL_MR(p, 0, i, j + 1, k - 1) + OFL_MR(p, 0, i, j - 1, k - 1)) + \
               OFL_MR(b, 2, i, j, k) * (OFL_MR(p, 0, i + 1, j, k + 1) - OFL_MR(p, 0, i - 1, j, k + 1) -  \
                                        OFL_MR(p, 0, i + 1, j, k - 1) + OFL_MR(p, 0, i - 1, j, k - 1)) + \
               OFL_MR(c, 0, i, j, k) * OFL_MR(p, 0, i - 1, j, k) +                                       \
               OFL_MR(c, 1, i, j, k) * OFL_MR(p, 0, i, j - 1, k) +                                       \
               OFL_MR(c, 2, i, j, k) * OFL_MR(p, 0, i, j, k - 1) + OFL_MR(wrk1, 0, i, j, k);             \
    float ss = (s0 * OFL_MR(a, 3, i, j, k) - OFL_MR(p, 0, i, j, k)) * OFL_MR(bnd, 0, i, j, k);           \
    gosa += (double)ss * (double)ss;                                                                     \
    OFL_MR(wrk2, 0, i, j, k) = OFL_MR(p, 0, i, j, k) + omega * ss

/* the arrays' names as the loops use them */
#define OFL_HIMENO_LOCALS                                                                                 \
    const int I = h->I, J = h->J, K = h->K;                                                               \
    const size_t n = (size_t)I * J * K;                                                                   \
    float *OFL_RESTRICT p = h->p, *OFL_RESTRICT a = h->a, *OFL_RESTRICT b = h->b, *OFL_RESTRICT c = h->c, \
                        *OFL_RESTRICT bnd = h->bnd, *OFL_RESTRICT wrk1 = h->wrk1,                         \
                        *OFL_RESTRICT wrk2 = h->wrk2

int ofl_himeno_alloc(ofl_himeno_t *h, int I, int J, int K)
{
    const size_t n = (size_t)I * J * K;
    float *m = (float *)malloc(14 * n * sizeof(float));
    if (!m) return -1;
    h->I = I, h->J = J, h->K = K;
    h->p = m, h->a = m + n, h->b = m + 5 * n, h->c = m + 8 * n, h->bnd = m + 11 * n, h->wrk1 = m + 12 * n,
    h->wrk2 = m + 13 * n;
    float *p = h->p, *a = h->a, *b = h->b, *c = h->c, *bnd = h->bnd, *wrk1 = h->wrk1, *wrk2 = h->wrk2;
    for (int i = 0; i < I; i++)
        for (int j = 0; j < J; j++)
            for (int k = 0; k < K; k++) {
                OFL_MR(p, 0, i, j, k) = (float)(i * i) / (float)((I - 1) * (I - 1));
                for (int l = 0; l < 3; l++) {
                    OFL_MR(a, l, i, j, k) = 1.0f;
                    OFL_MR(b, l, i, j, k) = 0.0f;
                    OFL_MR(c, l, i, j, k) = 1.0f;
                }
                OFL_MR(a, 3, i, j, k) = (float)(1.0 / 6.0);
                OFL_MR(bnd, 0, i, j, k) = 1.0f;
                OFL_MR(wrk1, 0, i, j, k) = 0.0f;
                OFL_MR(wrk2, 0, i, j, k) = 0.0f;
            }
    return 0;
}

void ofl_himeno_free(ofl_himeno_t *h)
{
    free(h->p);
    h->p = NULL;
}

/* clang-format would write the array sections a[0:n] as "a[0:n]" */
/* clang-format off */
void ofl_himeno_enter(ofl_himeno_t *h)
{
    OFL_HIMENO_LOCALS;
    (void)I, (void)J, (void)K, (void)n, (void)p, (void)a, (void)b, (void)c, (void)bnd, (void)wrk1, (void)wrk2;
    KY_DATA_ENTER(
        KY_OPT_COPYIN(p[0:n], a[0:4 * n], b[0:3 * n], c[0:3 * n], bnd[0:n], wrk1[0:n], wrk2[0:n]))
}

void ofl_himeno_exit(ofl_himeno_t *h)
{
    OFL_HIMENO_LOCALS;
    (void)I, (void)J, (void)K, (void)n, (void)p, (void)a, (void)b, (void)c, (void)bnd, (void)wrk1, (void)wrk2;
    KY_DATA_EXIT(KY_OPT_COPYOUT(p[0:n]),
                 KY_OPT_DELETE(a[0:4 * n], b[0:3 * n], c[0:3 * n], bnd[0:n], wrk1[0:n], wrk2[0:n]))
}

/* the row shapes (offload_kernels.h): the i-j rows in parallel as the clauses say, k on the lanes (OUTER,
 * INNER: KY_OFFLOAD, KY_OFFLOAD_INNER) or on the row's block's threads (KY_OFFLOAD_TEAMS, _THREADS); gosa
 * reduced over both levels */
#define OFL_HIMENO_ROWS(OUTER, INNER, ...)                                                                 \
    OUTER(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_REDUCTION(+ : gosa),                              \
               KY_OPT_PRESENT(p[0:n], a[0:4 * n], b[0:3 * n], c[0:3 * n], bnd[0:n], wrk1[0:n], wrk2[0:n]), \
               __VA_ARGS__)                                                                                \
    for (int i = 1; i < I - 1; i++)                                                                        \
        for (int j = 1; j < J - 1; j++) {                                                                  \
            INNER(KY_OPT_REDUCTION(+ : gosa))                                                              \
            for (int k = 1; k < K - 1; k++) {                                                              \
                OFL_HIMENO_POINT(i, j, k);                                                                 \
            }                                                                                              \
        }                                                                                                  \
    OUTER(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_PRESENT(p[0:n], wrk2[0:n]), __VA_ARGS__)          \
    for (int i = 1; i < I - 1; i++)                                                                        \
        for (int j = 1; j < J - 1; j++) {                                                                  \
            INNER()                                                                                        \
            for (int k = 1; k < K - 1; k++) OFL_MR(p, 0, i, j, k) = OFL_MR(wrk2, 0, i, j, k);              \
        }

/* ZSTREAM: the j-k columns on the threads, each walking i with p's column values of the planes i - 1, i and
 * i + 1 in registers (pm, pc, pp); term for term OFL_HIMENO_POINT, in its order. The copy back walks the
 * same way. */
#define OFL_HIMENO_ZSTREAM()                                                                                \
    KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_REDUCTION(+ : gosa), KY_OPT_NUM(128),         \
               KY_OPT_PRESENT(p[0:n], a[0:4 * n], b[0:3 * n], c[0:3 * n], bnd[0:n], wrk1[0:n], wrk2[0:n]))  \
    for (int j = 1; j < J - 1; j++)                                                                         \
        for (int k = 1; k < K - 1; k++) {                                                                   \
            float pm = OFL_MR(p, 0, 0, j, k), pc = OFL_MR(p, 0, 1, j, k);                                   \
            for (int i = 1; i < I - 1; i++) {                                                               \
                float pp = OFL_MR(p, 0, i + 1, j, k);                                                       \
                float s0 = OFL_MR(a, 0, i, j, k) * pp + OFL_MR(a, 1, i, j, k) * OFL_MR(p, 0, i, j + 1, k) + \
                           OFL_MR(a, 2, i, j, k) * OFL_MR(p, 0, i, j, k + 1) +                              \
                           OFL_MR(b, 0, i, j, k) *                                                          \
                               (OFL_MR(p, 0, i + 1, j + 1, k) - OFL_MR(p, 0, i + 1, j - 1, k) -             \
                                OFL_MR(p, 0, i - 1, j + 1, k) + OFL_MR(p, 0, i - 1, j - 1, k)) +            \
                           OFL_MR(b, 1, i, j, k) *                                                          \
                               (OFL_MR(p, 0, i, j + 1, k + 1) - OFL_MR(p, 0, i, j - 1, k + 1) -             \
                                OFL_MR(p, 0, i, j + 1, k - 1) + OFL_MR(p, 0, i, j - 1, k - 1)) +            \
                           OFL_MR(b, 2, i, j, k) *                                                          \
                               (OFL_MR(p, 0, i + 1, j, k + 1) - OFL_MR(p, 0, i - 1, j, k + 1) -             \
                                OFL_MR(p, 0, i + 1, j, k - 1) + OFL_MR(p, 0, i - 1, j, k - 1)) +            \
                           OFL_MR(c, 0, i, j, k) * pm + OFL_MR(c, 1, i, j, k) * OFL_MR(p, 0, i, j - 1, k) + \
                           OFL_MR(c, 2, i, j, k) * OFL_MR(p, 0, i, j, k - 1) + OFL_MR(wrk1, 0, i, j, k);    \
                float ss = (s0 * OFL_MR(a, 3, i, j, k) - pc) * OFL_MR(bnd, 0, i, j, k);                     \
                gosa += (double)ss * (double)ss;                                                            \
                OFL_MR(wrk2, 0, i, j, k) = pc + omega * ss;                                                 \
                pm = pc;                                                                                    \
                pc = pp;                                                                                    \
            }                                                                                               \
        }                                                                                                   \
    KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_NUM(128), KY_OPT_PRESENT(p[0:n], wrk2[0:n]))  \
    for (int j = 1; j < J - 1; j++)                                                                         \
        for (int k = 1; k < K - 1; k++)                                                                     \
            for (int i = 1; i < I - 1; i++) OFL_MR(p, 0, i, j, k) = OFL_MR(wrk2, 0, i, j, k);

double ofl_himeno_jacobi(ofl_himeno_t *h, int iters, float omega)
{
    OFL_HIMENO_LOCALS;
    double gosa = 0.0;
    for (int it = 0; it < iters; it++) {
        gosa = 0.0;
        switch (ofl_loop_shape) {
        case OFL_SHAPE_ROWS: OFL_HIMENO_ROWS(KY_OFFLOAD, KY_OFFLOAD_INNER, OFL_CL_ROWS) break;
        case OFL_SHAPE_WARPS: OFL_HIMENO_ROWS(KY_OFFLOAD, KY_OFFLOAD_INNER, OFL_CL_WARPS) break;
        case OFL_SHAPE_GANG: OFL_HIMENO_ROWS(KY_OFFLOAD, KY_OFFLOAD_INNER, OFL_CL_GANG) break;
        case OFL_SHAPE_TEAM: OFL_HIMENO_ROWS(KY_OFFLOAD_TEAMS, KY_OFFLOAD_THREADS, OFL_CL_TEAM) break;
        case OFL_SHAPE_ZSTREAM: OFL_HIMENO_ZSTREAM() break;
        default:
            KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(3), KY_OPT_REDUCTION(+ : gosa), KY_OPT_NUM(128),
                       KY_OPT_PRESENT(p[0:n], a[0:4 * n], b[0:3 * n], c[0:3 * n], bnd[0:n], wrk1[0:n], wrk2[0:n]))
            for (int i = 1; i < I - 1; i++)
                for (int j = 1; j < J - 1; j++)
                    for (int k = 1; k < K - 1; k++) {
                        OFL_HIMENO_POINT(i, j, k);
                    }
            KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(3), KY_OPT_NUM(128),
                       KY_OPT_PRESENT(p[0:n], wrk2[0:n]))
            for (int i = 1; i < I - 1; i++)
                for (int j = 1; j < J - 1; j++)
                    for (int k = 1; k < K - 1; k++) OFL_MR(p, 0, i, j, k) = OFL_MR(wrk2, 0, i, j, k);
        }
    }
    return gosa;
}

/* clang-format on */
double ofl_himeno_jacobi_plain(ofl_himeno_t *h, int iters, float omega)
{
    OFL_HIMENO_LOCALS;
    double gosa = 0.0;
    for (int it = 0; it < iters; it++) {
        gosa = 0.0;
        for (int i = 1; i < I - 1; i++)
            for (int j = 1; j < J - 1; j++)
                for (int k = 1; k < K - 1; k++) {
                    OFL_HIMENO_POINT(i, j, k);
                }
        for (int i = 1; i < I - 1; i++)
            for (int j = 1; j < J - 1; j++)
                for (int k = 1; k < K - 1; k++) OFL_MR(p, 0, i, j, k) = OFL_MR(wrk2, 0, i, j, k);
    }
    return gosa;
}
