/* Distributed CSR matrices: partition, construction from each rank's rows, queries, destroy, and the
 * public SpMV (the halo plan, built at the first call and replayed). Every collective call agrees on its
 * status so a failure on one rank is an error on all (no rank left waiting in a later collective). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/runtime.h"
#include "sparse/sparse.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* Threads of the host kernels. OMP_NUM_THREADS when the program set it. Unset, OpenMP's default is every
 * core of the host for every rank: ranks sharing the host oversubscribe it, and each of the 5 parallel
 * regions of a CG iteration then waits at its barrier for descheduled threads (4 ranks x 2 threads on 2
 * cores: 10-20x slower per iteration). So: the host's cores shared among its ranks, less one per rank
 * whose progress thread spins while idle. */
int kyi_sp_threads(void)
{
    static int cached;
    if (cached > 0) return cached;
#ifdef _OPENMP
    int t = omp_get_max_threads();
    if (kyi_rt.omp_threads == 0 && kyi_rt.initialized) {
        int ranks = kyi_rt.hw_local_nranks > 0 ? kyi_rt.hw_local_nranks : 1;
        int spin = kyi_setting_long(KYI_SET_PROGRESS_THREAD) != 0 &&
                   (kyi_setting_long(KYI_SET_PROGRESS_SPIN_US) < 0 ? !kyi_rt.cores_busy : 0);
        t = (kyi_rt.cpus - (spin ? ranks : 0)) / ranks;
    }
    cached = t > 0 ? t : 1;
#else
    cached = 1;
#endif
    return cached;
}

double kyi_sp_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void kyi_sp_partition(int64_t n, const int64_t *row_nnz, int part, int nranks, int64_t *starts)
{
    starts[0] = 0;
    starts[nranks] = n;
    if (part != KY_PART_NNZ || !row_nnz) {
        for (int r = 1; r < nranks; r++) starts[r] = n * r / nranks;
        return;
    }
    /* balanced by nonzeros: rank r starts at the first row whose prefix count reaches r/p of the total */
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) total += row_nnz[i];
    int64_t acc = 0, i = 0;
    for (int r = 1; r < nranks; r++) {
        int64_t want = (int64_t)((double)total * r / nranks);
        while (i < n && acc + row_nnz[i] <= want) acc += row_nnz[i++];
        starts[r] = i > starts[r - 1] ? i : starts[r - 1];
    }
}

int kyi_sp_agree(const char *call, int status)
{
    int mine = status < 0 ? status : KY_OK, all = mine;
    int s = ky_allreduce(&mine, &all, 1, KY_INT32, KY_MIN, KY_TEAM_WORLD);
    if (s != KY_OK) return s;
    if (mine < 0) return mine; /* this rank's own message stays */
    if (all < 0) return kyi_fail(all, call, "another rank failed (its message names the cause)");
    return KY_OK;
}

static void rows_free(kyi_rows_t *r)
{
    free(r->rowptr);
    free(r->col);
    free(r->val);
    memset(r, 0, sizeof *r);
}

int kyi_sp_multi(const kyi_csr_t *A)
{
    return kyi_rt.nranks > 1 && !A->solo;
}

int kyi_sp_agree_on(const kyi_csr_t *A, const char *call, int status)
{
    return kyi_sp_multi(A) ? kyi_sp_agree(call, status) : status;
}

void kyi_sp_csr_free_local(kyi_csr_t *A)
{
    if (!A) return;
    if (A->agg) kyi_sp_agg_free(A); /* collective where A is not solo: every rank made it */
    /* plans before the GPU workspace: a GPU coll plan looks at the stream it last ran on, the workspace's */
    for (int k = 0; k < KYI_XCH_COUNT; k++)
        if (A->plan[k]) kyi_sp_plan_free(A, A->plan[k]);
    if (A->gws) kyi_sp_gpu_ws_free(A);
    if (A->d_rowptr) kyi_sp_gpu_free(A->d_rowptr);
    if (A->d_val) kyi_sp_gpu_free(A->d_val);
    free(A->starts);
    free(A->rowptr);
    free(A->gcol);
    free(A->val);
    free(A->rp32);
    free(A);
}

int kyi_sp_from_rows(const char *call, kyi_rows_t *rows, const ky_csr_opts_t *opts, ky_csr_t *out)
{
    ky_csr_opts_t o = {0};
    if (opts) o = *opts;
    int p = kyi_rt.nranks, st = KY_OK;
    kyi_csr_t *A = calloc(1, sizeof *A);
    int64_t *lo_all = calloc((size_t)p + 1, sizeof *lo_all);
    if (!A || !lo_all) st = kyi_fail(KY_ERR_NOMEM, call, "matrix descriptor");
    if (st == KY_OK && o.memkind != KY_MEM_HOST && o.memkind != KY_MEM_GPU)
        st = kyi_fail(KY_ERR_ARG, call, "memkind %d is neither KY_MEM_HOST nor KY_MEM_GPU", o.memkind);
    if (st == KY_OK && o.memkind == KY_MEM_GPU && (!kyi_sp_gpu_built() || kyi_my_device() < 0))
        st = kyi_fail(KY_ERR_UNSUPPORTED, call, "GPU placement asked but %s",
                      kyi_sp_gpu_built() ? "this rank has no GPU" : "this build has no CUDA");
    int64_t nloc = rows->row_hi - rows->row_lo;
    if (st == KY_OK && (nloc < 0 || nloc > INT32_MAX || rows->rowptr[nloc] > INT32_MAX))
        st = kyi_fail(KY_ERR_ARG, call, "rank's rows: %lld rows / %lld nonzeros exceed 2^31", (long long)nloc,
                      (long long)rows->rowptr[nloc > 0 ? nloc : 0]);
    st = kyi_sp_agree(call, st);
    if (st != KY_OK) goto fail;
    /* every rank's first row, to check the tiling and answer owner queries */
    int64_t mine[2] = {rows->row_lo, rows->rowptr[nloc]};
    int64_t *pairs = malloc(2 * sizeof(int64_t) * (size_t)p);
    if (!pairs) {
        st = kyi_fail(KY_ERR_NOMEM, call, "partition");
        goto fail;
    }
    st = ky_allgather(mine, sizeof mine, pairs, KY_TEAM_WORLD);
    if (st == KY_OK) {
        int64_t nnz = 0;
        for (int r = 0; r < p; r++) {
            lo_all[r] = pairs[2 * r];
            nnz += pairs[2 * r + 1];
        }
        lo_all[p] = rows->n;
        A->nnz = nnz;
        for (int r = 0; r < p && st == KY_OK; r++)
            if (lo_all[r] > lo_all[r + 1] || (r == 0 && lo_all[0] != 0))
                st = kyi_fail(KY_ERR_ARG, call,
                              "row ranges do not tile [0, %lld) in rank order (rank %d starts at %lld)",
                              (long long)rows->n, r, (long long)lo_all[r]);
        if (st == KY_OK && lo_all[kyi_rt.rank + 1] != rows->row_hi)
            st = kyi_fail(KY_ERR_ARG, call, "this rank's rows end at %lld but the next rank starts at %lld",
                          (long long)rows->row_hi, (long long)lo_all[kyi_rt.rank + 1]);
    }
    free(pairs);
    st = kyi_sp_agree(call, st);
    if (st != KY_OK) goto fail;

    A->n = rows->n;
    A->row_lo = rows->row_lo;
    A->row_hi = rows->row_hi;
    A->nloc = nloc;
    A->lnnz = rows->rowptr[nloc];
    A->starts = lo_all;
    lo_all = NULL;
    A->agg_choice = -1;
    A->memkind = o.memkind;
    A->device = o.memkind == KY_MEM_GPU ? kyi_my_device() : -1;
    A->rowptr = rows->rowptr;
    A->gcol = rows->col;
    A->val = rows->val;
    memset(rows, 0, sizeof *rows);
    A->rp32 = malloc(sizeof(int) * (size_t)(nloc + 1));
    if (!A->rp32)
        st = kyi_fail(KY_ERR_NOMEM, call, "row pointers");
    else
        for (int64_t i = 0; i <= nloc; i++) A->rp32[i] = (int)A->rowptr[i];
    if (st == KY_OK && A->memkind == KY_MEM_GPU) st = kyi_sp_gpu_upload(A);
    st = kyi_sp_agree(call, st);
    if (st != KY_OK) goto fail;
    *out = A;
    return KY_OK;
fail:
    rows_free(rows);
    free(lo_all);
    if (A && !A->starts) A->starts = NULL;
    kyi_sp_csr_free_local(A);
    *out = NULL;
    return st;
}

int ky_csr_create(int64_t n, int64_t row_lo, int64_t row_hi, const int64_t *rowptr, const int64_t *colidx,
                  const double *vals, const ky_csr_opts_t *opts, ky_csr_t *out)
{
    const char *call = "ky_csr_create";
    KYI_CHECK(kyi_require_init(call));
    if (!out) return kyi_fail(KY_ERR_ARG, call, "out is NULL");
    int st = KY_OK;
    kyi_rows_t r = {n, row_lo, row_hi, NULL, NULL, NULL};
    int64_t nl = row_hi - row_lo;
    if (n < 0 || row_lo < 0 || nl < 0 || row_hi > n)
        st = kyi_fail(KY_ERR_ARG, call, "rows [%lld, %lld) are not inside [0, %lld)", (long long)row_lo,
                      (long long)row_hi, (long long)n);
    else if (!rowptr || (nl > 0 && rowptr[nl] > 0 && (!colidx || !vals)))
        st = kyi_fail(KY_ERR_ARG, call, "rowptr, colidx or vals is NULL");
    if (st == KY_OK) {
        int64_t nz = rowptr[nl] - rowptr[0];
        r.rowptr = malloc(sizeof(int64_t) * (size_t)(nl + 1));
        r.col = malloc(sizeof(int64_t) * (size_t)(nz > 0 ? nz : 1));
        r.val = malloc(sizeof(double) * (size_t)(nz > 0 ? nz : 1));
        if (!r.rowptr || !r.col || !r.val) st = kyi_fail(KY_ERR_NOMEM, call, "%lld nonzeros", (long long)nz);
        for (int64_t i = 0; st == KY_OK && i <= nl; i++) {
            r.rowptr[i] = rowptr[i] - rowptr[0];
            if (i > 0 && r.rowptr[i] < r.rowptr[i - 1])
                st = kyi_fail(KY_ERR_ARG, call, "rowptr decreases at local row %lld", (long long)i);
        }
        for (int64_t k = 0; st == KY_OK && k < nz; k++) {
            if (colidx[rowptr[0] + k] < 0 || colidx[rowptr[0] + k] >= n)
                st = kyi_fail(KY_ERR_ARG, call, "column %lld of nonzero %lld outside [0, %lld)",
                              (long long)colidx[rowptr[0] + k], (long long)k, (long long)n);
            r.col[k] = colidx[rowptr[0] + k];
            r.val[k] = vals[rowptr[0] + k];
        }
    }
    st = kyi_sp_agree(call, st);
    if (st != KY_OK) {
        rows_free(&r);
        *out = NULL;
        return st;
    }
    return kyi_sp_from_rows(call, &r, opts, out);
}

int ky_csr_destroy(ky_csr_t A)
{
    const char *call = "ky_csr_destroy";
    KYI_CHECK(kyi_require_init(call));
    if (!A) return KY_OK;
    /* plans own segments, whose destruction is collective: every rank built the same plans */
    kyi_sp_csr_free_local(A);
    return KY_OK;
}

int ky_csr_info(ky_csr_t A, ky_csr_info_t *info)
{
    if (!A || !info) return kyi_fail(KY_ERR_ARG, "ky_csr_info", "matrix or info is NULL");
    memset(info, 0, sizeof *info);
    info->n = A->n;
    info->nnz = A->nnz;
    info->row_lo = A->row_lo;
    info->row_hi = A->row_hi;
    info->local_nnz = A->lnnz;
    info->memkind = A->memkind;
    if (A->plan[KYI_XCH_HALO]) {
        info->halo_recv = A->plan[KYI_XCH_HALO]->nghost;
        info->halo_peers = A->plan[KYI_XCH_HALO]->nrecv;
    }
    return KY_OK;
}

int ky_csr_local(ky_csr_t A, const int64_t **rowptr, const int64_t **colidx, const double **vals)
{
    if (!A) return kyi_fail(KY_ERR_ARG, "ky_csr_local", "matrix is NULL");
    if (rowptr) *rowptr = A->rowptr;
    if (colidx) *colidx = A->gcol;
    if (vals) *vals = A->val;
    return KY_OK;
}

int ky_csr_rows_of(ky_csr_t A, int rank, int64_t *lo, int64_t *hi)
{
    if (!A || rank < 0 || rank >= kyi_rt.nranks || !lo || !hi)
        return kyi_fail(KY_ERR_ARG, "ky_csr_rows_of", "matrix NULL, rank %d outside [0, %d) or NULL output",
                        rank, kyi_rt.nranks);
    *lo = A->starts[rank];
    *hi = A->starts[rank + 1];
    return KY_OK;
}

void kyi_sp_spmv_cpu(const kyi_csr_t *A, const int *col, const double *xext, double *y)
{
    kyi_sp_spmv_dot_cpu(A, col, xext, y, NULL);
}

/* y = A xext and, with p, the local p'y in the same pass (CG reads p and y once less per iteration) */
double kyi_sp_spmv_dot_cpu(const kyi_csr_t *A, const int *col, const double *xext, double *y, const double *p)
{
    double acc = 0.0;
    const int *rp = A->rp32;
    const double *v = A->val;
    int64_t n = A->nloc;
    /* four rows at a time, each summed in column order (as SciPy sums, so iteration counts of
     * ill-conditioned solves stay comparable): one row's chain of dependent adds alone costs 4 cycles per
     * nonzero (nd6k's 383 per row: 10 ms per SpMV on one core of the H100 host, measured) */
    if (A->lnnz < 16 * n) { /* short rows (stencils): the chains are short, a plain loop is fastest */
#pragma omp parallel for schedule(static) reduction(+ : acc) if (A->lnnz > 200000) num_threads(kyi_sp_threads())
        for (int64_t i = 0; i < n; i++) {
            double s = 0.0;
            for (int k = rp[i]; k < rp[i + 1]; k++) s += v[k] * xext[col[k]];
            y[i] = s;
            if (p) acc += p[i] * s;
        }
        return acc;
    }
    int64_t n4 = n / 4;
#pragma omp parallel for schedule(static) reduction(+ : acc) if (A->lnnz > 200000) num_threads(kyi_sp_threads())
    for (int64_t q = 0; q < n4 + (n % 4 != 0); q++) {
        int64_t i = 4 * q;
        if (i + 4 > n) { /* the last rows one by one */
            for (; i < n; i++) {
                double s = 0.0;
                for (int k = rp[i]; k < rp[i + 1]; k++) s += v[k] * xext[col[k]];
                y[i] = s;
                if (p) acc += p[i] * s;
            }
            continue;
        }
        int a0 = rp[i], a1 = rp[i + 1], a2 = rp[i + 2], a3 = rp[i + 3], e = rp[i + 4];
        int l0 = a1 - a0, l1 = a2 - a1, l2 = a3 - a2, l3 = e - a3;
        int m = l0 < l1 ? l0 : l1;
        m = m < l2 ? m : l2;
        m = m < l3 ? m : l3;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (int t = 0; t < m; t++) {
            s0 += v[a0 + t] * xext[col[a0 + t]];
            s1 += v[a1 + t] * xext[col[a1 + t]];
            s2 += v[a2 + t] * xext[col[a2 + t]];
            s3 += v[a3 + t] * xext[col[a3 + t]];
        }
        for (int t = m; t < l0; t++) s0 += v[a0 + t] * xext[col[a0 + t]];
        for (int t = m; t < l1; t++) s1 += v[a1 + t] * xext[col[a1 + t]];
        for (int t = m; t < l2; t++) s2 += v[a2 + t] * xext[col[a2 + t]];
        for (int t = m; t < l3; t++) s3 += v[a3 + t] * xext[col[a3 + t]];
        y[i] = s0;
        y[i + 1] = s1;
        y[i + 2] = s2;
        y[i + 3] = s3;
        if (p) acc += p[i] * s0 + p[i + 1] * s1 + p[i + 2] * s2 + p[i + 3] * s3;
    }
    return acc;
}

int ky_spmv(ky_csr_t A, const double *x, double *y, void *stream)
{
    const char *call = "ky_spmv";
    KYI_CHECK(kyi_require_init(call));
    if (!A) return kyi_fail(KY_ERR_ARG, call, "matrix is NULL");
    if (A->nloc > 0 && (!x || !y)) return kyi_fail(KY_ERR_ARG, call, "x or y is NULL");
    kyi_sp_plan_t *P;
    KYI_CHECK(kyi_sp_plan_get(A, KYI_XCH_HALO, &P));
    /* the two extended vectors alternate: a neighbour one call ahead never writes ghosts being read */
    int buf = (int)((P->epoch + 1) & 1);
    double *xl = P->ext[buf] + P->loc_off;
    if (A->memkind == KY_MEM_GPU) {
        KYI_CHECK(kyi_sp_gpu_copy(xl, x, A->nloc, stream));
        KYI_CHECK(kyi_sp_exchange(A, P, buf, stream));
        return kyi_sp_gpu_spmv(A, P, P->ext[buf], y, stream);
    }
    memcpy(xl, x, sizeof(double) * (size_t)A->nloc);
    KYI_CHECK(kyi_sp_exchange(A, P, buf, NULL));
    kyi_sp_spmv_cpu(A, P->col, P->ext[buf], y);
    return KY_OK;
}
