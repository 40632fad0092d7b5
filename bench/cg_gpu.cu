/* bench_cg: Kyoyu's CG (ky_cg on GPU matrices, each scheme) against two baselines in the same process:
 *   cusparse  single-GPU CG with cuSPARSE SpMV and cuBLAS dot/axpy/scal, written as a user would (pointer
 *             mode host: every dot returns its value to the host), whole matrix on rank 0's GPU (1 rank)
 *   seed      the seed's scheme with MPI + CUDA: cuSPARSE SpMV on the rank's rows against the whole vector,
 *             the vector gathered by cudaMemcpy to the host + MPI_Allgatherv + cudaMemcpy back, dots by
 *             cuBLAS + MPI_Allreduce (several ranks)
 * Fixed iteration count (the seed's 1000), the fastest of --reps solves; b = A * ones. Prints a table with
 * time per iteration and the ratio Kyoyu / baseline, and JSON lines (--json FILE). Matrices by Kyoyu's
 * generators (stand-ins, Poisson, NPB) or a Matrix Market file. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <kyoyu.h>

extern "C" {
#include "bench_util.h"
}

#define CK(x)                                                                                      \
    do {                                                                                           \
        auto e_ = (x);                                                                             \
        if ((int)e_ != 0) {                                                                        \
            fprintf(stderr, "bench_cg: %s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, (int)e_); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static double now()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

struct Local {
    int64_t n, lo, hi, nnz;
    std::vector<int> rp, col;
    std::vector<double> val;
};

static Local local_rows(ky_csr_t A)
{
    ky_csr_info_t in;
    ky_csr_info(A, &in);
    const int64_t *rp, *col;
    const double *val;
    ky_csr_local(A, &rp, &col, &val);
    Local L;
    L.n = in.n;
    L.lo = in.row_lo;
    L.hi = in.row_hi;
    L.nnz = rp[L.hi - L.lo];
    for (int64_t i = 0; i <= L.hi - L.lo; i++) L.rp.push_back((int)rp[i]);
    for (int64_t k = 0; k < L.nnz; k++) {
        L.col.push_back((int)col[k]);
        L.val.push_back(val[k]);
    }
    return L;
}

/* Baseline CG; gathered = 0: single GPU, whole matrix; 1: the seed's allgather scheme over MPI. */
static double baseline(const Local &L, int iters, int gathered, double *relres)
{
    int p, me;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int nl = (int)(L.hi - L.lo), N = (int)L.n;
    cusparseHandle_t sh;
    cublasHandle_t bh;
    CK(cusparseCreate(&sh));
    CK(cublasCreate(&bh));
    int *drp, *dcol;
    double *dval, *x, *r, *pfull, *q, *b;
    CK(cudaMalloc(&drp, sizeof(int) * (nl + 1)));
    CK(cudaMalloc(&dcol, sizeof(int) * (L.nnz + 1)));
    CK(cudaMalloc(&dval, sizeof(double) * (L.nnz + 1)));
    CK(cudaMalloc(&x, sizeof(double) * (nl + 1)));
    CK(cudaMalloc(&r, sizeof(double) * (nl + 1)));
    CK(cudaMalloc(&q, sizeof(double) * (nl + 1)));
    CK(cudaMalloc(&b, sizeof(double) * (nl + 1)));
    CK(cudaMalloc(&pfull, sizeof(double) * (N + 1)));
    CK(cudaMemcpy(drp, L.rp.data(), sizeof(int) * (nl + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dcol, L.col.data(), sizeof(int) * L.nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dval, L.val.data(), sizeof(double) * L.nnz, cudaMemcpyHostToDevice));
    double *pl = pfull + L.lo; /* the rank's piece of p, inside the gathered vector */
    cusparseSpMatDescr_t mA;
    cusparseDnVecDescr_t vp, vq;
    CK(cusparseCreateCsr(&mA, nl, N, L.nnz, drp, dcol, dval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CK(cusparseCreateDnVec(&vp, N, pfull, CUDA_R_64F));
    CK(cusparseCreateDnVec(&vq, nl, q, CUDA_R_64F));
    double one = 1.0, zero = 0.0;
    size_t bufsz = 0;
    void *buf = NULL;
    CK(cusparseSpMV_bufferSize(sh, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, vp, &zero, vq, CUDA_R_64F,
                               CUSPARSE_SPMV_ALG_DEFAULT, &bufsz));
    CK(cudaMalloc(&buf, bufsz ? bufsz : 8));
    std::vector<double> hfull(N + 1, 1.0), hloc(nl + 1);
    std::vector<int> counts(p), displs(p);
    {
        int64_t mine[2] = {L.lo, L.hi};
        std::vector<int64_t> all(2 * p);
        MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, MPI_COMM_WORLD);
        for (int k = 0; k < p; k++) {
            displs[k] = (int)all[2 * k];
            counts[k] = (int)(all[2 * k + 1] - all[2 * k]);
        }
    }
    auto gather = [&]() {
        if (!gathered) return;
        CK(cudaMemcpy(hloc.data(), pl, sizeof(double) * nl, cudaMemcpyDeviceToHost));
        MPI_Allgatherv(hloc.data(), nl, MPI_DOUBLE, hfull.data(), counts.data(), displs.data(), MPI_DOUBLE,
                       MPI_COMM_WORLD);
        CK(cudaMemcpy(pfull, hfull.data(), sizeof(double) * N, cudaMemcpyHostToDevice));
    };
    auto dot = [&](const double *u, const double *v) {
        double d;
        CK(cublasDdot(bh, nl, u, 1, v, 1, &d));
        if (gathered) MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        return d;
    };
    /* b = A * ones; x = 0; r = b; p = r */
    CK(cudaMemcpy(pfull, hfull.data(), sizeof(double) * N, cudaMemcpyHostToDevice));
    CK(cusparseSpMV(sh, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, vp, &zero, vq, CUDA_R_64F,
                    CUSPARSE_SPMV_ALG_DEFAULT, buf));
    CK(cudaMemcpy(b, q, sizeof(double) * nl, cudaMemcpyDeviceToDevice));
    CK(cudaMemset(x, 0, sizeof(double) * nl));
    CK(cudaMemcpy(r, b, sizeof(double) * nl, cudaMemcpyDeviceToDevice));
    CK(cudaMemcpy(pl, r, sizeof(double) * nl, cudaMemcpyDeviceToDevice));
    double rr = dot(r, r), rr0 = rr;
    CK(cudaDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (int k = 0; k < iters; k++) {
        gather();
        CK(cusparseSpMV(sh, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, vp, &zero, vq, CUDA_R_64F,
                        CUSPARSE_SPMV_ALG_DEFAULT, buf));
        double alpha = rr / dot(pl, q), malpha = -alpha;
        CK(cublasDaxpy(bh, nl, &alpha, pl, 1, x, 1));
        CK(cublasDaxpy(bh, nl, &malpha, q, 1, r, 1));
        double rrn = dot(r, r), beta = rrn / rr;
        rr = rrn;
        CK(cublasDscal(bh, nl, &beta, pl, 1));
        CK(cublasDaxpy(bh, nl, &one, r, 1, pl, 1));
    }
    CK(cudaDeviceSynchronize());
    double t = now() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *relres = sqrt(rr / rr0);
    cusparseDestroySpMat(mA);
    cusparseDestroyDnVec(vp);
    cusparseDestroyDnVec(vq);
    cudaFree(buf);
    cudaFree(drp);
    cudaFree(dcol);
    cudaFree(dval);
    cudaFree(x);
    cudaFree(r);
    cudaFree(q);
    cudaFree(b);
    cudaFree(pfull);
    cublasDestroy(bh);
    cusparseDestroy(sh);
    return t / iters;
}

/* the fields every kybench record has (docs/benchmarks.md), ranks and bench written by the caller */
static std::string common(const std::string &spec)
{
    char b[512];
    snprintf(b, sizeof b, "\"case\": \"cg_%s\", \"kind\": \"%s\", \"date\": \"%s\", \"version\": \"%s\", ",
             spec.substr(spec.find(':') + 1).c_str(), bu_machine(), bu_date(), ky_version());
    return b;
}

/* SpMV alone on one GPU: cusparseSpMV (CSR, default algorithm) and ky_spmv on the same matrix and vector,
 * best of reps x 20 calls, beside the floor: the bytes one SpMV must move (values 8 B and columns 4 B per
 * entry, row pointers, x once, y) over the device-to-device copy bandwidth measured here (read + write). */
static void spmv_compare(ky_csr_t A, const Local &L, const std::string &spec, int reps, FILE *js)
{
    int nl = (int)(L.hi - L.lo), N = (int)L.n;
    cusparseHandle_t sh;
    CK(cusparseCreate(&sh));
    int *drp, *dcol;
    double *dval, *x, *y, *y2;
    CK(cudaMalloc(&drp, sizeof(int) * (nl + 1)));
    CK(cudaMalloc(&dcol, sizeof(int) * (L.nnz + 1)));
    CK(cudaMalloc(&dval, sizeof(double) * (L.nnz + 1)));
    CK(cudaMalloc(&x, sizeof(double) * (N + 1)));
    CK(cudaMalloc(&y, sizeof(double) * (nl + 1)));
    CK(cudaMalloc(&y2, sizeof(double) * (nl + 1)));
    CK(cudaMemcpy(drp, L.rp.data(), sizeof(int) * (nl + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dcol, L.col.data(), sizeof(int) * L.nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dval, L.val.data(), sizeof(double) * L.nnz, cudaMemcpyHostToDevice));
    std::vector<double> hx(N + 1);
    for (int i = 0; i <= N; i++) hx[i] = 0.5 + (double)((unsigned)(i * 2654435761u) >> 8) / 16777216.0;
    CK(cudaMemcpy(x, hx.data(), sizeof(double) * N, cudaMemcpyHostToDevice));
    cusparseSpMatDescr_t mA;
    cusparseDnVecDescr_t vx, vy;
    CK(cusparseCreateCsr(&mA, nl, N, L.nnz, drp, dcol, dval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CK(cusparseCreateDnVec(&vx, N, x, CUDA_R_64F));
    CK(cusparseCreateDnVec(&vy, nl, y, CUDA_R_64F));
    double one = 1.0, zero = 0.0;
    size_t bufsz = 0;
    void *buf = NULL;
    CK(cusparseSpMV_bufferSize(sh, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, vx, &zero, vy, CUDA_R_64F,
                               CUSPARSE_SPMV_ALG_DEFAULT, &bufsz));
    CK(cudaMalloc(&buf, bufsz ? bufsz : 8));
    const int calls = 20;
    auto best_of = [&](auto fn) {
        fn();
        CK(cudaDeviceSynchronize());
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            for (int k = 0; k < calls; k++) fn();
            CK(cudaDeviceSynchronize());
            double t = (now() - t0) / calls;
            best = t < best ? t : best;
        }
        return best;
    };
    double t_cus = best_of([&]() {
        CK(cusparseSpMV(sh, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, vx, &zero, vy, CUDA_R_64F,
                        CUSPARSE_SPMV_ALG_DEFAULT, buf));
    });
    double t_ky = best_of([&]() { CK(ky_spmv(A, x + L.lo, y2, NULL)); });
    /* both results against each other (the same sums in another order) */
    std::vector<double> a(nl + 1), b(nl + 1);
    CK(cudaMemcpy(a.data(), y, sizeof(double) * nl, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), y2, sizeof(double) * nl, cudaMemcpyDeviceToHost));
    double dmax = 0, amax = 0;
    for (int i = 0; i < nl; i++) {
        dmax = std::max(dmax, std::abs(a[i] - b[i]));
        amax = std::max(amax, std::abs(a[i]));
    }
    /* copy bandwidth over a buffer the size of the matrix's values (at least 256 MB: past the L2) */
    size_t cb = std::max((size_t)256 << 20, sizeof(double) * (size_t)L.nnz);
    void *c0, *c1;
    CK(cudaMalloc(&c0, cb));
    CK(cudaMalloc(&c1, cb));
    double t_copy = best_of([&]() { CK(cudaMemcpyAsync(c1, c0, cb, cudaMemcpyDeviceToDevice, 0)); });
    double bw = 2.0 * cb / t_copy;
    double bytes = 12.0 * L.nnz + 4.0 * (nl + 1) + 8.0 * N + 8.0 * nl;
    double floor_s = bytes / bw;
    printf(
        "spmv %-18s N %7d nnz %9lld  bytes %.1f MB  copy %.0f GB/s  floor %.1f us  cusparse %.1f us (%.0f%% "
        "of floor speed)  "
        "ky_spmv %.1f us (%.0f%%)  ky/cusparse %.2f  max|diff| %.1e of %.1e\n",
        spec.c_str(), N, (long long)L.nnz, bytes / 1e6, bw / 1e9, 1e6 * floor_s, 1e6 * t_cus,
        100 * floor_s / t_cus, 1e6 * t_ky, 100 * floor_s / t_ky, t_ky / t_cus, dmax, amax);
    if (js)
        fprintf(js,
                "{\"bench\": \"cg_spmv\", %s\"matrix\": \"%s\", \"N\": %d, \"nnz\": %lld, \"bytes\": %.0f, "
                "\"copy_GBs\": %.1f, "
                "\"floor_us\": %.3f, \"cusparse_us\": %.3f, \"ky_us\": %.3f, \"ratio\": %.4f, \"max_diff\": "
                "%.3e}\n",
                common(spec).c_str(), spec.c_str(), N, (long long)L.nnz, bytes, bw / 1e9, 1e6 * floor_s,
                1e6 * t_cus, 1e6 * t_ky, t_ky / t_cus, dmax);
    cudaFree(c0);
    cudaFree(c1);
    cusparseDestroySpMat(mA);
    cusparseDestroyDnVec(vx);
    cusparseDestroyDnVec(vy);
    cudaFree(buf);
    cudaFree(drp);
    cudaFree(dcol);
    cudaFree(dval);
    cudaFree(x);
    cudaFree(y);
    cudaFree(y2);
    cusparseDestroy(sh);
}

int main(int argc, char **argv)
{
    std::string mats =
        "standin:nasa2910,standin:s1rmq4m1,standin:nd3k,standin:Pres_Poisson,standin:nd6k,standin:smt";
    std::string schemes = "graph,allgather,halo,pipelined";
    const char *json = NULL;
    int iters = 1000, reps = 3, spmv = 0;
    for (int i = 1; i < argc; i++) {
        std::string o = argv[i];
        if (o == "--help") {
            printf(
                "usage: bench_cg [--matrix SPEC,...] [--scheme S,...] [--iters N] [--reps R] [--spmv 0|1] "
                "[--json FILE]\n");
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "bench_cg: %s needs a value\n", argv[i]);
            return 2;
        }
        const char *v = argv[++i];
        if (o == "--matrix")
            mats = v;
        else if (o == "--scheme")
            schemes = v;
        else if (o == "--iters")
            iters = atoi(v);
        else if (o == "--reps")
            reps = atoi(v);
        else if (o == "--json")
            json = v;
        else if (o == "--spmv")
            spmv = atoi(v); /* 1: also SpMV alone against cusparseSpMV (one rank) */
        else {
            fprintf(stderr, "bench_cg: unknown option %s\n", o.c_str());
            return 2;
        }
    }
    if (ky_init(&argc, &argv) != KY_OK) {
        fprintf(stderr, "bench_cg: %s\n", ky_last_error());
        return 1;
    }
    int me = ky_rank(), p = ky_nranks();
    if (ky_ngpus() == 0) {
        if (me == 0) printf("bench_cg: skipped: no GPU\n");
        ky_finalize();
        return 77; /* kybench's (and CTest's) skip code */
    }
    FILE *js = me == 0 && json ? fopen(json, "a") : NULL;
    if (me == 0)
        printf("%-22s %7s %9s %-16s %6s %11s %10s %9s\n", "matrix", "N", "nnz", "impl", "ranks", "us/iter",
               "rel.res", "ratio");
    size_t a = 0;
    while (a <= mats.size()) {
        size_t e = mats.find(',', a);
        if (e == std::string::npos) e = mats.size();
        std::string spec = mats.substr(a, e - a);
        a = e + 1;
        if (spec.empty()) continue;
        ky_csr_t A;
        ky_csr_opts_t co = {KY_PART_ROWS, KY_MEM_GPU};
        int st = spec.find(':') != std::string::npos ? ky_csr_generate(spec.c_str(), &co, &A)
                                                     : ky_csr_read_mm(spec.c_str(), &co, &A);
        if (st != KY_OK) {
            if (me == 0) fprintf(stderr, "bench_cg: %s: %s\n", spec.c_str(), ky_last_error());
            continue;
        }
        Local L = local_rows(A);
        int nl = (int)(L.hi - L.lo);
        ky_csr_info_t info;
        ky_csr_info(A, &info);
        double *ones, *b, *x;
        cudaMalloc(&ones, sizeof(double) * (nl + 1));
        cudaMalloc(&b, sizeof(double) * (nl + 1));
        cudaMalloc(&x, sizeof(double) * (nl + 1));
        std::vector<double> h(nl + 1, 1.0);
        cudaMemcpy(ones, h.data(), sizeof(double) * nl, cudaMemcpyHostToDevice);
        ky_spmv(A, ones, b, NULL);
        if (spmv && p == 1) spmv_compare(A, L, spec, reps, js);
        double base_rr = 0, base = 0, seed_rr = 0, seed = 0;
        if (p == 1) {
            base = 1e30;
            for (int k = 0; k < reps; k++) {
                double t = baseline(L, iters, 0, &base_rr);
                base = t < base ? t : base;
            }
        } else {
            seed = 1e30;
            for (int k = 0; k < reps; k++) {
                double t = baseline(L, iters, 1, &seed_rr);
                seed = t < seed ? t : seed;
            }
        }
        double ref = p == 1 ? base : seed;
        const char *refname = p == 1 ? "cusparse" : "seed_mpi_cuda";
        if (me == 0) {
            printf("%-22s %7lld %9lld %-16s %6d %11.2f %10.2e %9s\n", spec.c_str(), (long long)info.n,
                   (long long)info.nnz, refname, p, 1e6 * ref, p == 1 ? base_rr : seed_rr, "1.00");
            if (js)
                fprintf(js,
                        "{\"bench\": \"cg\", %s\"matrix\": \"%s\", \"N\": %lld, \"nnz\": %lld, \"impl\": "
                        "\"%s\", \"ranks\": %d, \"iters\": %d, \"us_per_iter\": %.4f, \"rel_residual\": "
                        "%.3e, \"ratio\": 1.0}\n",
                        common(spec).c_str(), spec.c_str(), (long long)info.n, (long long)info.nnz, refname,
                        p, iters, 1e6 * ref, p == 1 ? base_rr : seed_rr);
        }
        size_t s0 = 0;
        while (s0 <= schemes.size()) {
            size_t s1 = schemes.find(',', s0);
            if (s1 == std::string::npos) s1 = schemes.size();
            std::string sn = schemes.substr(s0, s1 - s0);
            s0 = s1 + 1;
            if (sn.empty()) continue;
            ky_cg_opts_t o;
            ky_cg_opts_default(&o);
            o.scheme = ky_cg_scheme_parse(sn.c_str());
            o.max_iters = iters;
            o.allow_indefinite =
                spec.compare(0, 4, "npb:") == 0; /* NPB's matrix is shifted, as its driver says */
            double best = 1e30;
            ky_cg_result_t r;
            memset(&r, 0, sizeof r);
            int ok = 1;
            for (int k = 0; k < reps && ok; k++) {
                if (ky_cg(A, b, x, &o, &r) != KY_OK) {
                    ok = 0;
                    if (me == 0)
                        printf("%-22s %7s %9s ky_%-13s %6d %s\n", spec.c_str(), "", "", sn.c_str(), p,
                               ky_last_error());
                    break;
                }
                double t = r.t_total / (r.iterations > 0 ? r.iterations : 1);
                ky_allreduce(KY_IN_PLACE, &t, 1, KY_DOUBLE, KY_MAX, KY_TEAM_WORLD);
                best = t < best ? t : best;
            }
            if (!ok) continue;
            if (me == 0) {
                printf(
                    "%-22s %7lld %9lld ky_%-13s %6d %11.2f %10.2e %9.2f  (%d launches, %d syncs per "
                    "iteration, %d iterations, %d active rank%s)\n",
                    spec.c_str(), (long long)info.n, (long long)info.nnz, sn.c_str(), p, 1e6 * best,
                    r.rel_residual, best / ref, r.launches_per_iter, r.syncs_per_iter, r.iterations,
                    r.active_ranks, r.active_ranks == 1 ? "" : "s");
                if (js)
                    fprintf(js,
                            "{\"bench\": \"cg\", %s\"matrix\": \"%s\", \"N\": %lld, \"nnz\": %lld, \"impl\": "
                            "\"ky_%s\", \"ranks\": %d, \"iters\": %d, \"us_per_iter\": %.4f, "
                            "\"rel_residual\": %.3e, \"ratio\": %.4f, \"baseline\": \"%s\", "
                            "\"launches_per_iter\": %d, \"syncs_per_iter\": %d, \"active_ranks\": %d, "
                            "\"agglomerated\": %s}\n",
                            common(spec).c_str(), spec.c_str(), (long long)info.n, (long long)info.nnz,
                            sn.c_str(), p, r.iterations, 1e6 * best, r.rel_residual, best / ref, refname,
                            r.launches_per_iter, r.syncs_per_iter, r.active_ranks,
                            r.active_ranks < p ? "true" : "false");
            }
        }
        cudaFree(ones);
        cudaFree(b);
        cudaFree(x);
        ky_csr_destroy(A);
    }
    if (js) fclose(js);
    ky_finalize();
    return 0;
}
