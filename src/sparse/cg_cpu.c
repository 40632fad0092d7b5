/* CG on host vectors (OpenMP), the three host schemes:
 *   classic CG (the seed's Fig. 3 with the dot of line 16 reduced before the division) over the allgather
 *   or the halo exchange: per iteration one exchange, one SpMV, two dots each followed by an allreduce of
 *   one double, two AXPYs (x, r) and the direction update;
 *   pipelined CG (Ghysels and Vanroose 2014): one allreduce of two doubles per iteration, started before
 *   the SpMV and its halo exchange and completed after them.
 * Times of each phase are taken on every rank (the seed's Figs. 9-10). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/log.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"
#include "sparse/sparse.h"

/* ||r|| / ||r0|| below which a non-positive p'Ap is rounding noise of a converged solve */
#define ROUNDOFF 1e-14
#define ROUNDOFF_PIPELINED \
    1e-6              /* pipelined CG's attainable accuracy: seen from 1e-7 on the seed's stand-ins */
#define OMP_MIN 50000 /* below this many entries a parallel region costs more than it saves */

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0.0;
#pragma omp parallel for reduction(+ : s) schedule(static) if (n > OMP_MIN) num_threads(kyi_sp_threads())
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static int breakdown_check(double denom, const ky_cg_opts_t *o)
{
    if (!isfinite(denom)) return 1;
    if (o->allow_indefinite) return denom == 0.0;
    return !(denom > 0.0);
}

/* a phase's time into res (the seed's Figs. 9-10) and, with KY_TRACE, a span named for the phase */
#define TIC(tm)                   \
    double tm##_0 = kyi_sp_now(); \
    uint64_t tm##_t = KYI_TRACE_T0()
#define TOC(tm, acc)                                                   \
    do {                                                               \
        (acc) += kyi_sp_now() - tm##_0;                                \
        KYI_TRACE_SPAN("cg", phase_name(&(acc), res), tm##_t, -1, -1); \
    } while (0)

static const char *phase_name(const double *acc, const ky_cg_result_t *res)
{
    if (acc == &res->t_spmv) return "spmv";
    if (acc == &res->t_dot) return "dot";
    if (acc == &res->t_axpy) return "axpy";
    if (acc == &res->t_exchange) return "exchange (allgather/halo)";
    if (acc == &res->t_allreduce) return "allreduce";
    return "cg";
}

/* red[0] summed over the ranks working on A (none to sum with on a solo matrix) */
static int sum_ranks(const kyi_csr_t *A, double *red)
{
    return kyi_sp_multi(A) ? ky_allreduce(KY_IN_PLACE, red, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD) : KY_OK;
}

static int classic(kyi_csr_t *A, kyi_sp_plan_t *P, const double *b, double *x, const ky_cg_opts_t *o,
                   ky_cg_result_t *res)
{
    const char *call = "ky_cg";
    int64_t n = A->nloc;
    double *pe = P->ext[0], *p = pe + P->loc_off;
    double *r = malloc(sizeof(double) * (size_t)(n + 1)), *q = malloc(sizeof(double) * (size_t)(n + 1));
    int st = r && q ? KY_OK : kyi_fail(KY_ERR_NOMEM, call, "work vectors of %lld entries", (long long)n);
    st = kyi_sp_agree_on(A, call, st);
    if (st != KY_OK) {
        free(r);
        free(q);
        return st;
    }
    double t0 = kyi_sp_now(), red[1];
    /* r = b - A x */
    if (o->x0_zero) {
        memset(x, 0, sizeof(double) * (size_t)n);
        memcpy(r, b, sizeof(double) * (size_t)n);
    } else {
        memcpy(p, x, sizeof(double) * (size_t)n);
        KYI_CHECK(kyi_sp_exchange(A, P, 0, NULL));
        kyi_sp_spmv_cpu(A, P->col, pe, q);
        for (int64_t i = 0; i < n; i++) r[i] = b[i] - q[i];
    }
    double rr = dot(r, r, n);
    KYI_CHECK(sum_ranks(A, (red[0] = rr, red)));
    rr = red[0];
    res->norm0 = sqrt(rr);
    res->rel_residual = rr > 0 ? 1.0 : 0.0;
    if (rr == 0.0 || !isfinite(rr)) {
        free(r);
        free(q);
        res->t_total = kyi_sp_now() - t0;
        if (!isfinite(rr)) {
            res->breakdown = 1;
            return kyi_fail(KY_ERR_ARG, call, "initial residual is not finite");
        }
        res->converged = 1;
        return KY_OK;
    }
    memcpy(p, r, sizeof(double) * (size_t)n);
    for (int k = 1; k <= o->max_iters; k++) {
        TIC(tx);
        st = kyi_sp_exchange(A, P, 0, NULL);
        TOC(tx, res->t_exchange);
        if (st != KY_OK) break;
        TIC(ts);
        red[0] = kyi_sp_spmv_dot_cpu(A, P->col, pe, q, p); /* q = A p and p'q in one pass */
        TOC(ts, res->t_spmv);
        TIC(ta);
        st = sum_ranks(A, red);
        TOC(ta, res->t_allreduce);
        if (st != KY_OK) break;
        double pq = red[0];
        if (breakdown_check(pq, o) && sqrt(rr) < ROUNDOFF * res->norm0) {
            res->converged = 1; /* residual at round-off: p'Ap is noise, not a breakdown */
            break;
        }
        if (breakdown_check(pq, o)) {
            res->breakdown = 1;
            st = kyi_fail(KY_ERR_ARG, call,
                          "CG breakdown at iteration %d: p'Ap = %g (the matrix is not positive definite)", k,
                          pq);
            break;
        }
        double alpha = rr / pq;
        TIC(tu);
        double rr_loc = 0.0; /* r'r summed in the update's pass */
#pragma omp parallel for schedule(static) reduction(+ : rr_loc) if (n > OMP_MIN) num_threads(kyi_sp_threads())
        for (int64_t i = 0; i < n; i++) {
            x[i] += alpha * p[i];
            double ri = r[i] - alpha * q[i];
            r[i] = ri;
            rr_loc += ri * ri;
        }
        red[0] = rr_loc;
        TOC(tu, res->t_axpy);
        TIC(ta2);
        st = sum_ranks(A, red);
        TOC(ta2, res->t_allreduce);
        if (st != KY_OK) break;
        double rr_new = red[0];
        res->iterations = k;
        res->rel_residual = sqrt(rr_new) / res->norm0;
        if (!isfinite(rr_new)) {
            res->breakdown = 1;
            st = kyi_fail(KY_ERR_ARG, call, "CG breakdown at iteration %d: residual is not finite", k);
            break;
        }
        if (o->rtol > 0 && (res->rel_residual < o->rtol || res->rel_residual <= 1e-15)) {
            res->converged = 1;
            break;
        }
        double beta = rr_new / rr;
        rr = rr_new;
        TIC(tp);
#pragma omp parallel for schedule(static) if (n > OMP_MIN) num_threads(kyi_sp_threads())
        for (int64_t i = 0; i < n; i++) p[i] = r[i] + beta * p[i];
        TOC(tp, res->t_axpy);
    }
    res->t_total = kyi_sp_now() - t0;
    free(r);
    free(q);
    return st;
}

static int pipelined(kyi_csr_t *A, kyi_sp_plan_t *P, const double *b, double *x, const ky_cg_opts_t *o,
                     ky_cg_result_t *res)
{
    const char *call = "ky_cg";
    int64_t n = A->nloc;
    size_t bytes = sizeof(double) * (size_t)(n + 1);
    double *r = malloc(bytes), *w = malloc(bytes), *m = malloc(bytes), *z = calloc(1, bytes),
           *s = calloc(1, bytes), *p = calloc(1, bytes);
    double red[2], *loc = P->loc_off + P->ext[0];
    ky_coll_plan_t ar = NULL;
    int st = r && w && m && z && s && p
                 ? KY_OK
                 : kyi_fail(KY_ERR_NOMEM, call, "work vectors of %lld entries", (long long)n);
    st = kyi_sp_agree_on(A, call, st);
    if (st == KY_OK && kyi_sp_multi(A))
        st = ky_allreduce_init(KY_IN_PLACE, red, 2, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &ar);
    if (st != KY_OK) goto out;
    double t0 = kyi_sp_now();
    int buf = 0;
#define SPMV_EXT(vec, outv)                                               \
    do {                                                                  \
        buf = (int)((P->epoch + 1) & 1);                                  \
        loc = P->ext[buf] + P->loc_off;                                   \
        memcpy(loc, (vec), sizeof(double) * (size_t)n);                   \
        TIC(tx);                                                          \
        st = kyi_sp_exchange(A, P, buf, NULL);                            \
        TOC(tx, res->t_exchange);                                         \
        TIC(ts);                                                          \
        if (st == KY_OK) kyi_sp_spmv_cpu(A, P->col, P->ext[buf], (outv)); \
        TOC(ts, res->t_spmv);                                             \
    } while (0)
    if (o->x0_zero) {
        memset(x, 0, sizeof(double) * (size_t)n);
        memcpy(r, b, sizeof(double) * (size_t)n);
    } else {
        SPMV_EXT(x, m);
        if (st != KY_OK) goto out;
        for (int64_t i = 0; i < n; i++) r[i] = b[i] - m[i];
    }
    SPMV_EXT(r, w);
    if (st != KY_OK) goto out;
    double gamma_old = 0, alpha_old = 0;
    for (int i = 0;; i++) {
        TIC(td);
        red[0] = 0;
        red[1] = 0;
#pragma omp parallel for reduction(+ : red[:2]) schedule(static) if (n > OMP_MIN) num_threads(kyi_sp_threads())
        for (int64_t k = 0; k < n; k++) {
            red[0] += r[k] * r[k];
            red[1] += w[k] * r[k];
        }
        TOC(td, res->t_dot);
        TIC(ta);
        st = ar ? ky_coll_start(ar, NULL) : KY_OK;
        TOC(ta, res->t_allreduce);
        if (st != KY_OK) break;
        if (i < o->max_iters) SPMV_EXT(w, m); /* overlapped with the allreduce */
        TIC(ta2);
        int s2 = ar ? ky_coll_wait(ar) : KY_OK;
        TOC(ta2, res->t_allreduce);
        if (st == KY_OK) st = s2;
        if (st != KY_OK) break;
        double gamma = red[0], delta = red[1];
        if (i == 0) {
            res->norm0 = sqrt(gamma);
            if (gamma == 0.0) {
                res->converged = 1;
                break;
            }
        }
        res->rel_residual = sqrt(gamma) / res->norm0;
        if (!isfinite(gamma)) {
            res->breakdown = 1;
            st = kyi_fail(KY_ERR_ARG, call, "CG breakdown at iteration %d: residual is not finite", i);
            break;
        }
        if (o->rtol > 0 && res->rel_residual < o->rtol) {
            res->converged = 1;
            break;
        }
        if (i == o->max_iters) break;
        double beta = i > 0 ? gamma / gamma_old : 0.0;
        double denom = i > 0 ? delta - beta * gamma / alpha_old : delta;
        if (i > 0 &&
            breakdown_check(denom, o)) { /* the recurrences drifted: restart the directions (beta = 0) */
            beta = 0.0;
            denom = delta;
        }
        if (breakdown_check(denom, o) && res->rel_residual < ROUNDOFF_PIPELINED) {
            /* the denominator is a difference of recurrences: it loses its sign once the residual nears
             * pipelined CG's attainable accuracy (~1e-12 relative on poisson7:48, 1e-7 on the seed's
             * stand-ins), well above round-off: the solve stops there, converged only without an rtol */
            res->converged = o->rtol == 0;
            break;
        }
        if (breakdown_check(denom, o)) {
            res->breakdown = 1;
            st = kyi_fail(KY_ERR_ARG, call,
                          "CG breakdown at iteration %d: p'Ap = %g (the matrix is not positive definite)",
                          i + 1, denom);
            break;
        }
        double alpha = gamma / denom;
        TIC(tu);
#pragma omp parallel for schedule(static) if (n > OMP_MIN) num_threads(kyi_sp_threads())
        for (int64_t k = 0; k < n; k++) {
            z[k] = m[k] + beta * z[k];
            s[k] = w[k] + beta * s[k];
            p[k] = r[k] + beta * p[k];
            x[k] += alpha * p[k];
            r[k] -= alpha * s[k];
            w[k] -= alpha * z[k];
        }
        TOC(tu, res->t_axpy);
        gamma_old = gamma;
        alpha_old = alpha;
        res->iterations = i + 1;
    }
    res->t_total = kyi_sp_now() - t0;
out:
    if (ar) ky_coll_free(ar);
    free(r);
    free(w);
    free(m);
    free(z);
    free(s);
    free(p);
    return st;
}

int kyi_sp_cg_cpu(kyi_csr_t *A, const double *b, double *x, const ky_cg_opts_t *o, ky_cg_result_t *res)
{
    kyi_sp_plan_t *P;
    int kind = o->scheme == KY_CG_ALLGATHER ? KYI_XCH_ALLGATHER : KYI_XCH_HALO;
    A->ag_algo = o->allgather_algo;
    KYI_CHECK(kyi_sp_plan_get(A, kind, &P));
    KYI_CHECK(kyi_sp_plan_set_algo(A, P, o->allgather_algo));
    int st = o->scheme == KY_CG_PIPELINED ? pipelined(A, P, b, x, o, res) : classic(A, P, b, x, o, res);
    /* a breakdown is seen by every rank at once (the values are allreduced); other failures are agreed */
    if (res->breakdown) return st;
    return kyi_sp_agree_on(A, "ky_cg", st);
}
