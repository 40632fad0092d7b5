/* ky_cg: argument checks and the choice of back end (host OpenMP or GPU kernels by the matrix's
 * placement; every rank its rows, or rank 0 alone on the whole matrix: agglom.c); scheme names; NPB CG's
 * benchmark driver on top of ky_cg. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/log.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"
#include "sparse/sparse.h"

static const char *const scheme_names[KY_CG_SCHEME_COUNT] = {"allgather", "halo", "pipelined", "graph"};

const char *ky_cg_scheme_name(int scheme)
{
    return scheme >= 0 && scheme < KY_CG_SCHEME_COUNT ? scheme_names[scheme] : "?";
}

int ky_cg_scheme_parse(const char *name)
{
    for (int k = 0; name && k < KY_CG_SCHEME_COUNT; k++)
        if (strcmp(name, scheme_names[k]) == 0) return k;
    return -1;
}

int ky_cg_opts_default(ky_cg_opts_t *o)
{
    if (!o) return kyi_fail(KY_ERR_ARG, "ky_cg_opts_default", "opts is NULL");
    memset(o, 0, sizeof *o);
    o->scheme = KY_CG_HALO;
    o->max_iters = 1000;
    o->x0_zero = 1;
    o->check_every = 10;
    return KY_OK;
}

int ky_cg(ky_csr_t A, const double *b, double *x, const ky_cg_opts_t *opts, ky_cg_result_t *res)
{
    const char *call = "ky_cg";
    KYI_CHECK(kyi_require_init(call));
    ky_cg_opts_t o;
    ky_cg_result_t mine;
    if (!res) res = &mine;
    memset(res, 0, sizeof *res);
    if (opts)
        o = *opts;
    else
        ky_cg_opts_default(&o);
    int st = KY_OK;
    if (!A)
        st = kyi_fail(KY_ERR_ARG, call, "matrix is NULL");
    else if (A->nloc > 0 && (!b || !x))
        st = kyi_fail(KY_ERR_ARG, call, "b or x is NULL");
    else if (o.scheme < 0 || o.scheme >= KY_CG_SCHEME_COUNT)
        st = kyi_fail(KY_ERR_ARG, call, "unknown scheme %d", o.scheme);
    else if (o.max_iters < 1)
        st = kyi_fail(KY_ERR_ARG, call, "max_iters %d < 1", o.max_iters);
    else if (!(o.rtol >= 0) || !isfinite(o.rtol))
        st = kyi_fail(KY_ERR_ARG, call, "rtol %g is not >= 0", o.rtol);
    else if (o.allgather_algo < 0 || o.allgather_algo >= KY_ALGO_COUNT)
        st = kyi_fail(KY_ERR_ARG, call, "allgather algorithm %d unknown", o.allgather_algo);
    else if (o.scheme == KY_CG_GRAPH && A->memkind != KY_MEM_GPU)
        st = kyi_fail(KY_ERR_UNSUPPORTED, call,
                      "scheme 'graph' captures CUDA kernels: the matrix must be on the GPU");
    if (!A) return st;
    KYI_CHECK(kyi_sp_agree(call, st));
    uint64_t t0 = KYI_TRACE_T0();
    int agg = kyi_sp_agg_choose(A); /* collective: rank 0's answer (agglom.c) */
    if (agg < 0) return agg;
    if (agg) {
        st = kyi_sp_cg_agglomerated(A, b, x, &o, res); /* every rank already has rank 0's status */
    } else if (A->memkind == KY_MEM_GPU) {
        st = kyi_sp_cg_gpu(A, b, x, &o, res);
        if (!res->breakdown) st = kyi_sp_agree(call, st);
    } else {
        st = kyi_sp_cg_cpu(A, b, x, &o, res);
    }
    res->active_ranks = agg ? 1 : kyi_rt.nranks;
    KYI_TRACE_SPAN("cg", "ky_cg", t0, res->iterations, -1);
    return st;
}

/* ---- NPB CG ------------------------------------------------------------------------------------------- */

static int vec_dot2(ky_csr_t A, const double *x, const double *z, double out[2])
{
    if (A->memkind == KY_MEM_GPU)
        KYI_CHECK(kyi_sp_gpu_dot2(x, z, A->nloc, out));
    else {
        double a = 0, b = 0;
        for (int64_t i = 0; i < A->nloc; i++) {
            a += x[i] * z[i];
            b += z[i] * z[i];
        }
        out[0] = a;
        out[1] = b;
    }
    return ky_allreduce(KY_IN_PLACE, out, 2, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD);
}

static int vec_scale(ky_csr_t A, double *x, const double *z, double s)
{
    if (A->memkind == KY_MEM_GPU) return kyi_sp_gpu_scale(x, z, s, A->nloc);
    for (int64_t i = 0; i < A->nloc; i++) x[i] = s * z[i];
    return KY_OK;
}

static int vec_fill(ky_csr_t A, double *x, double v)
{
    if (A->memkind == KY_MEM_GPU) return kyi_sp_gpu_fill(x, v, A->nloc);
    for (int64_t i = 0; i < A->nloc; i++) x[i] = v;
    return KY_OK;
}

int ky_npb_cg_run(ky_csr_t A, char cls, const ky_cg_opts_t *opts, double *zeta, int *verified,
                  double *seconds, ky_cg_result_t *res)
{
    const char *call = "ky_npb_cg_run";
    KYI_CHECK(kyi_require_init(call));
    ky_npb_class_t c;
    if (!A || !zeta || !verified) return kyi_fail(KY_ERR_ARG, call, "matrix, zeta or verified is NULL");
    KYI_CHECK(ky_npb_class(cls, &c));
    if (A->n != c.na)
        return kyi_fail(KY_ERR_ARG, call, "matrix has %lld rows, class %c has %lld", (long long)A->n, c.cls,
                        (long long)c.na);
    ky_cg_opts_t o;
    if (opts)
        o = *opts;
    else
        ky_cg_opts_default(&o);
    o.max_iters = 25; /* NPB's cgitmax */
    o.rtol = 0;
    o.x0_zero = 1;
    o.allow_indefinite = 1;
    size_t bytes = sizeof(double) * (size_t)(A->nloc + 1);
    double *x = NULL, *z = NULL, *az = NULL;
    int st;
    if (A->memkind == KY_MEM_GPU) {
        st = kyi_sp_gpu_alloc(A, bytes, (void **)&x);
        if (st == KY_OK) st = kyi_sp_gpu_alloc(A, bytes, (void **)&z);
        if (st == KY_OK) st = kyi_sp_gpu_alloc(A, bytes, (void **)&az);
    } else {
        x = malloc(bytes);
        z = malloc(bytes);
        az = malloc(bytes);
        st = x && z && az ? KY_OK : kyi_fail(KY_ERR_NOMEM, call, "vectors");
    }
    st = kyi_sp_agree(call, st);
    ky_cg_result_t r, sum;
    memset(&sum, 0, sizeof sum);
    double d[2], t0 = 0, rnorm = 0;
    /* NPB runs one untimed step first (code and data warm), then starts again from x = 1 */
    for (int it = 0; it <= c.niter && st == KY_OK; it++) {
        if (it <= 1) st = vec_fill(A, x, 1.0);
        if (it == 1) {
            if (st == KY_OK) st = ky_comm_barrier();
            t0 = kyi_sp_now();
        }
        if (st == KY_OK) st = ky_cg(A, x, z, &o, &r);
        /* NPB's conj_grad ends with rnorm = ||x - A z||: one more SpMV and its dots, timed as in NPB */
        double e[2], f[2];
        if (st == KY_OK) st = ky_spmv(A, z, az, NULL);
        if (st == KY_OK) st = vec_dot2(A, x, az, e);
        if (st == KY_OK) st = vec_dot2(A, az, x, f);
        if (st == KY_OK) rnorm = sqrt(fabs(f[1] - 2 * e[0] + e[1]));
        if (st == KY_OK) st = vec_dot2(A, x, z, d);
        if (st == KY_OK) st = vec_scale(A, x, z, 1.0 / sqrt(d[1]));
        if (it >= 1) {
            *zeta = c.shift + 1.0 / d[0];
            sum.iterations += r.iterations;
            sum.t_spmv += r.t_spmv;
            sum.t_dot += r.t_dot;
            sum.t_axpy += r.t_axpy;
            sum.t_exchange += r.t_exchange;
            sum.t_allreduce += r.t_allreduce;
            sum.t_total += r.t_total;
            sum.launches_per_iter = r.launches_per_iter;
            sum.syncs_per_iter = r.syncs_per_iter;
            sum.rel_residual = r.rel_residual;
        }
    }
    double t = kyi_sp_now() - t0;
    if (st == KY_OK) {
        /* NPB reports its timer of rank 0's view; take the slowest rank so every rank prints one number */
        st = ky_allreduce(KY_IN_PLACE, &t, 1, KY_DOUBLE, KY_MAX, KY_TEAM_WORLD);
    }
    if (A->memkind == KY_MEM_GPU) {
        kyi_sp_gpu_free(x);
        kyi_sp_gpu_free(z);
        kyi_sp_gpu_free(az);
    } else {
        free(x);
        free(z);
        free(az);
    }
    KYI_INFO(KYI_SUB_RUNTIME, "NPB CG class %c: last rnorm %.13e", c.cls, rnorm);
    *verified = st == KY_OK && fabs(*zeta - c.zeta_ref) <= 1e-10;
    if (seconds) *seconds = t;
    if (res) *res = sum;
    return st;
}
