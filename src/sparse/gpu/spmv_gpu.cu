/* The sparse layer's GPU SpMV: the kernels, a second layout of the matrix for long rows of scattered
 * columns, and the choice between them, made once per exchange plan by timing every candidate on the
 * matrix itself (and dropping any whose result differs from the plain kernel's).
 *
 * Candidates:
 *   rows   V lanes per row (V about half the mean row length): the vector is read through the read-only path
 *   rows4  the same, each lane with four entries in flight before it gathers (more loads outstanding)
 *   xblk   columns cut into blocks of KYI_XB_W entries; the matrix is stored again block after block (16-bit
 *          columns inside a block, so 10 bytes per entry instead of 12), and every thread block owns a range
 *          of rows and walks the column blocks, the vector's block (or K of them) staged in shared memory.
 * Why xblk: NPB CG's rows hold ~240 columns spread over the whole vector. The vector (1.2 MB at class C)
 * sits in L2, but every gathered double costs a 32-byte L2 sector: 36 M gathers move 1.15 GB through L2 per
 * SpMV, more than the 433 MB the matrix itself streams from memory. From shared memory the gathers cost no
 * L2 traffic; the vector's blocks are read once per thread block (~160 MB at class C with 132 blocks).
 * The sums are deterministic in every candidate (fixed order: lanes, then column blocks).
 * Every kernel can also run as CG's K1 (cg_gpu.cu): q = A p with p'q summed into the solve's scalars. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/runtime.h"
#include "sparse/sparse.h"
#include "sparse/gpu/sp_kernels.cuh"

#define KYI_XB_W                                                                                             \
    8192 /* columns per block: 64 KiB of doubles, local index fits 16 bits (KY_SPMV_KERNEL=xblk1k: 1024, for \
            tests) */

#define CU(call, expr)                                                                                      \
    do {                                                                                                    \
        cudaError_t e_ = (expr);                                                                            \
        if (e_ != cudaSuccess) return kyi_fail(KY_ERR_CUDA, call, "%s: %s", #expr, cudaGetErrorString(e_)); \
    } while (0)

enum { GK_ROWS = 0, GK_ROWS4 = 1, GK_XBLK = 2 };
static const char *const gk_name[] = {"rows", "rows4", "xblk"};

/* ---- kernels ---------------------------------------------------------------------------------------- */

/* K1's epilogue and prologue (F = true): stop when the solve has, move r'r into rho, sum p'q */
template <bool F>
__device__ __forceinline__ bool k1_begin(const kyi_sp_fuse_t &f)
{
    if (!F) return false;
    if (kyi_sp_stopped(f.S)) return true;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        f.S[0] = *f.rr_glob; /* rho of this iteration */
        *f.rr_acc = 0.0;
    }
    return false;
}

template <int V, bool U, bool F>
__global__ void k_rows(int n, const int *rp, const int *col, const double *val, const double *xe, double *y,
                       kyi_sp_fuse_t f)
{
    if (k1_begin<F>(f)) return;
    int row = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) / V);
    double s = U ? kyi_sp_row4<V>(row, n, rp, col, val, xe) : kyi_sp_row<V>(row, n, rp, col, val, xe),
           c = 0.0;
    if ((threadIdx.x & (V - 1)) == 0 && row < n) {
        y[row] = s;
        if (F) c = f.p[row] * s;
    }
    if (F) kyi_sp_block_add(c, f.pq_acc);
}

/* Thread block b owns rows [b R, b R + R); for every group of K column blocks: stage the vector's entries
 * in shared memory, then each group of V lanes takes a row's entries of each block. acc[] holds the rows'
 * sums between blocks (one group per row and block, so no atomics). */
template <int V, bool F>
__global__ void __launch_bounds__(1024)
    k_xblk(int n, int R, int nc, int K, int W, int next, const int *bptr, const unsigned short *bcol,
           const double *bval, const double *xe, double *y, kyi_sp_fuse_t f)
{
    if (k1_begin<F>(f)) return;
    extern __shared__ double kyi_xb_sm[];
    double *acc = kyi_xb_sm, *xs = kyi_xb_sm + ((R + 1) & ~1);
    int r0 = blockIdx.x * R, rn = n - r0 < R ? n - r0 : R;
    if (rn < 0) rn = 0;
    int nt = blockDim.x, G = nt / V, g = threadIdx.x / V, lane = threadIdx.x & (V - 1);
    for (int i = threadIdx.x; i < rn; i += nt) acc[i] = 0.0;
    for (int c = 0; c < nc; c += K) {
        int kk = nc - c < K ? nc - c : K, x0 = c * W, xn = next - x0 < kk * W ? next - x0 : kk * W;
        __syncthreads(); /* the last group's reads of xs are done */
        for (int j = threadIdx.x; j < xn; j += nt) xs[j] = __ldg(xe + x0 + j);
        __syncthreads();
        for (int cc = 0; cc < kk; cc++) {
            const int *bp = bptr + (size_t)(c + cc) * (size_t)(n + 1) + r0;
            const double *xc = xs + cc * W;
            for (int ib = 0; ib < rn; ib += G) { /* uniform trip count: the shuffles need whole warps */
                int i = ib + g;
                int b0 = 0, b1 = 0;
                if (i < rn) {
                    b0 = __ldg(bp + i);
                    b1 = __ldg(bp + i + 1);
                }
                double s = 0.0;
#pragma unroll 2
                for (int k = b0 + lane; k < b1; k += V) s += __ldcs(bval + k) * xc[__ldcs(bcol + k)];
                for (int off = V / 2; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off, V);
                if (lane == 0 && i < rn) acc[i] += s;
            }
        }
    }
    __syncthreads();
    double cs = 0.0;
    for (int i = threadIdx.x; i < rn; i += nt) {
        double v = acc[i];
        y[r0 + i] = v;
        if (F) cs += f.p[r0 + i] * v;
    }
    if (F) kyi_sp_block_add(cs, f.pq_acc);
}

/* ---- launch ----------------------------------------------------------------------------------------- */

template <bool F>
static cudaError_t launch_rows(int U, int V, unsigned blocks, cudaStream_t s, int n, const int *rp,
                               const int *col, const double *val, const double *xe, double *y,
                               const kyi_sp_fuse_t &f)
{
#define KR(v)                                                                          \
    (U ? k_rows<v, true, F><<<blocks, KYI_SP_BLOCK, 0, s>>>(n, rp, col, val, xe, y, f) \
       : k_rows<v, false, F><<<blocks, KYI_SP_BLOCK, 0, s>>>(n, rp, col, val, xe, y, f))
    switch (V) {
        case 2:
            KR(2);
            break;
        case 4:
            KR(4);
            break;
        case 8:
            KR(8);
            break;
        case 16:
            KR(16);
            break;
        default:
            KR(32);
            break;
    }
#undef KR
    return cudaGetLastError();
}

template <bool F>
static cudaError_t launch_xblk(const kyi_sp_plan_t *P, int n, cudaStream_t s, const double *xe, double *y,
                               const kyi_sp_fuse_t &f)
{
#define KX(v)                                                                 \
    k_xblk<v, F><<<P->ggrid, P->gthreads, P->gsmem, s>>>(                     \
        n, P->gR, P->gnc, P->gK, P->gW, (int)P->next, (const int *)P->d_bptr, \
        (const unsigned short *)P->d_bcol, (const double *)P->d_bval, xe, y, f)
    switch (P->gV) {
        case 4:
            KX(4);
            break;
        case 8:
            KX(8);
            break;
        default:
            KX(16);
            break;
    }
#undef KX
    return cudaGetLastError();
}

/* y = A xe with the plan's kernel; f.p != NULL: CG's K1 (see sp_kernels.cuh) */
cudaError_t kyi_sp_gpu_spmv_launch(const kyi_csr_t *A, const kyi_sp_plan_t *P, const double *xe, double *y,
                                   const kyi_sp_fuse_t *f, cudaStream_t s)
{
    int n = (int)A->nloc;
    kyi_sp_fuse_t none;
    memset(&none, 0, sizeof none);
    const int *rp = (const int *)A->d_rowptr, *col = (const int *)P->d_col;
    const double *val = (const double *)A->d_val;
    if (P->gk == GK_XBLK)
        return f ? launch_xblk<true>(P, n, s, xe, y, *f) : launch_xblk<false>(P, n, s, xe, y, none);
    int V = P->gV > 0 ? P->gV : A->vec_width;
    unsigned blocks = (unsigned)(((size_t)n * V + KYI_SP_BLOCK - 1) / KYI_SP_BLOCK);
    if (blocks == 0) blocks = 1;
    int U = P->gk == GK_ROWS4;
    return f ? launch_rows<true>(U, V, blocks, s, n, rp, col, val, xe, y, *f)
             : launch_rows<false>(U, V, blocks, s, n, rp, col, val, xe, y, none);
}

/* ---- the column-block layout ------------------------------------------------------------------------ */

/* Build and upload the matrix block after block; refuse (return 0 in *made) where the per-block row pointers
 * would cost more than a quarter of the matrix (few entries per row and block), unless the setting forces it.
 */
static int xblk_build(kyi_csr_t *A, kyi_sp_plan_t *P, int W, int forced, int *made)
{
    const char *call = "ky_cg";
    *made = 0;
    int64_t n = A->nloc, nnz = A->lnnz;
    int nc = (int)((P->next + W - 1) / W);
    if (n <= 0 || nnz <= 0 || nc < 1) return KY_OK;
    size_t ptrs = (size_t)nc * (size_t)(n + 1);
    if ((!forced && ptrs * 4 > (size_t)nnz * 3) || ptrs > ((size_t)1 << 26) || nnz > INT32_MAX) return KY_OK;
    int *bptr = (int *)calloc(ptrs, sizeof(int));
    unsigned short *bcol = (unsigned short *)malloc(sizeof(unsigned short) * (size_t)nnz);
    double *bval = (double *)malloc(sizeof(double) * (size_t)nnz);
    int st = KY_OK;
    if (!bptr || !bcol || !bval)
        st = kyi_fail(KY_ERR_NOMEM, call, "column-block copy of %lld entries", (long long)nnz);
    if (st == KY_OK) {
        /* counts per (block, row) at [c (n+1) + row + 1], then the running sum over the block-major order */
        for (int64_t i = 0; i < n; i++)
            for (int k = A->rp32[i]; k < A->rp32[i + 1]; k++)
                bptr[(size_t)(P->col[k] / W) * (size_t)(n + 1) + (size_t)i + 1]++;
        int run = 0;
        for (int c = 0; c < nc; c++) {
            int *b = bptr + (size_t)c * (size_t)(n + 1);
            b[0] = run;
            for (int64_t i = 1; i <= n; i++) {
                run += b[i];
                b[i] = run;
            }
        }
        /* fill in row order: within a (block, row) the entries keep their order */
        int *cur = (int *)malloc(sizeof(int) * (size_t)nc);
        if (!cur) st = kyi_fail(KY_ERR_NOMEM, call, "column-block cursors");
        for (int64_t i = 0; i < n && st == KY_OK; i++) {
            for (int c = 0; c < nc; c++) cur[c] = bptr[(size_t)c * (size_t)(n + 1) + (size_t)i];
            for (int k = A->rp32[i]; k < A->rp32[i + 1]; k++) {
                int c = P->col[k] / W, pos = cur[c]++;
                bcol[pos] = (unsigned short)(P->col[k] - c * W);
                bval[pos] = A->val[k];
            }
        }
        free(cur);
    }
    if (st == KY_OK) st = kyi_sp_gpu_alloc(A, ptrs * sizeof(int), &P->d_bptr);
    if (st == KY_OK) st = kyi_sp_gpu_alloc(A, sizeof(unsigned short) * (size_t)nnz, &P->d_bcol);
    if (st == KY_OK) st = kyi_sp_gpu_alloc(A, sizeof(double) * (size_t)nnz, &P->d_bval);
    cudaError_t e = cudaSuccess;
    if (st == KY_OK) e = cudaMemcpy(P->d_bptr, bptr, ptrs * sizeof(int), cudaMemcpyHostToDevice);
    if (st == KY_OK && e == cudaSuccess)
        e = cudaMemcpy(P->d_bcol, bcol, sizeof(unsigned short) * (size_t)nnz, cudaMemcpyHostToDevice);
    if (st == KY_OK && e == cudaSuccess)
        e = cudaMemcpy(P->d_bval, bval, sizeof(double) * (size_t)nnz, cudaMemcpyHostToDevice);
    if (st == KY_OK && e != cudaSuccess)
        st = kyi_fail(KY_ERR_CUDA, call, "column-block copy: %s", cudaGetErrorString(e));
    free(bptr);
    free(bcol);
    free(bval);
    if (st == KY_OK) {
        P->gnc = nc;
        P->gW = W;
        *made = 1;
    }
    return st;
}

/* ---- the choice ------------------------------------------------------------------------------------- */

typedef struct {
    int gk, V, K, threads, R;
    unsigned grid;
    size_t smem;
} cand_t;

__global__ void k_tune_x(int n, double *x)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = 0.5 + (double)((unsigned)(i * 2654435761u) >> 8) / 16777216.0;
}

static void apply(kyi_sp_plan_t *P, const cand_t *c)
{
    P->gk = c->gk;
    P->gV = c->V;
    P->gK = c->K;
    P->gthreads = c->threads;
    P->gR = c->R;
    P->ggrid = c->grid;
    P->gsmem = c->smem;
}

/* Time each candidate (best of 5 after a warm-up) on a vector of the plan's shape, check its result against
 * the plain kernel's, keep the fastest. KY_SPMV_KERNEL names one instead. Local to the rank. */
extern "C" int kyi_sp_gpu_spmv_tune(kyi_csr_t *A, kyi_sp_plan_t *P)
{
    const char *call = "ky_cg";
    int n = (int)A->nloc;
    cand_t c0 = {GK_ROWS, A->vec_width, 0, KYI_SP_BLOCK, 0, 0, 0};
    apply(P, &c0);
    const char *want = kyi_setting_str(KYI_SET_SPMV_KERNEL);
    if (!want) want = "auto";
    if (n <= 0 || (A->lnnz < (1 << 20) && strcmp(want, "auto") == 0)) return KY_OK; /* small: launch-bound */
    if (strcmp(want, "rows") == 0) return KY_OK;
    cand_t cs[24];
    int nc = 0;
    cs[nc++] = c0;
    cs[nc++] = {GK_ROWS4, A->vec_width, 0, KYI_SP_BLOCK, 0, 0, 0};
    if (A->vec_width != 32) cs[nc++] = {GK_ROWS4, 32, 0, KYI_SP_BLOCK, 0, 0, 0};
    int made = 0;
    int small = strcmp(want, "xblk1k") == 0;
    if (small) want = "xblk";
    if (strcmp(want, "rows4") != 0)
        KYI_CHECK(xblk_build(A, P, small ? 1024 : KYI_XB_W, strcmp(want, "auto") != 0, &made));
    if (made) {
        int sms = 132, optin = 0;
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, A->device);
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, A->device);
        /* lanes per row segment: about half its mean length, 4..16 */
        double seg = (double)A->lnnz / ((double)n * P->gnc);
        int v1 = 4;
        while (v1 < 16 && v1 < seg / 2) v1 *= 2;
        int vs[2] = {v1, v1 < 16 ? 2 * v1 : 8};
        static const int shapes[][3] = {
            {1, 512, 3}, {1, 1024, 2}, {2, 1024, 1}, {3, 1024, 1}}; /* K, threads, blocks per SM */
        for (int vi = 0; vi < 2; vi++)
            for (unsigned si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
                int K = shapes[si][0];
                if (K > P->gnc) continue; /* more blocks staged than there are */
                unsigned grid = (unsigned)(sms * shapes[si][2]);
                int R = (n + (int)grid - 1) / (int)grid;
                size_t smem = sizeof(double) * (size_t)(((R + 1) & ~1) + K * P->gW);
                size_t per_sm = 228 * 1024;
                /* 1 KiB: the kernel's static shared memory (K1's flags and sums) and the block's reserve */
                if (smem + 1024 > (size_t)optin || (smem + 1024) * (size_t)shapes[si][2] > per_sm) continue;
                grid = (unsigned)((n + R - 1) / R);
                cs[nc++] = {GK_XBLK, vs[vi], K, shapes[si][1], R, grid, smem};
            }
        if (optin > 0) { /* the dynamic part may be what the static part leaves (K1's variant has some) */
#define ATTR(v, f)                                                                          \
    do {                                                                                    \
        cudaFuncAttributes fa_;                                                             \
        if (cudaFuncGetAttributes(&fa_, k_xblk<v, f>) == cudaSuccess)                       \
            cudaFuncSetAttribute(k_xblk<v, f>, cudaFuncAttributeMaxDynamicSharedMemorySize, \
                                 optin - (int)fa_.sharedSizeBytes);                         \
    } while (0)
            ATTR(4, true);
            ATTR(4, false);
            ATTR(8, true);
            ATTR(8, false);
            ATTR(16, true);
            ATTR(16, false);
#undef ATTR
            cudaGetLastError();
        }
    }
    /* forced: the first candidate of that kind */
    if (strcmp(want, "auto") != 0) {
        for (int k = 0; k < nc; k++)
            if (strcmp(gk_name[cs[k].gk], want) == 0) {
                apply(P, &cs[k]);
                return KY_OK;
            }
        KYI_WARN(KYI_SUB_GPU, "KY_SPMV_KERNEL=%s: not possible for this matrix; rows", want);
        return KY_OK;
    }
    double *x = NULL, *y0 = NULL, *y = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    size_t nb = sizeof(double) * (size_t)(n + 1);
    int st = KY_OK;
    if (cudaMalloc(&x, sizeof(double) * (size_t)(P->next + 1)) != cudaSuccess ||
        cudaMalloc(&y0, nb) != cudaSuccess || cudaMalloc(&y, nb) != cudaSuccess ||
        cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess)
        st = kyi_fail(KY_ERR_CUDA, call, "SpMV tuning buffers: %s", cudaGetErrorString(cudaGetLastError()));
    double *hy0 = (double *)malloc(nb), *hy = (double *)malloc(nb);
    if (st == KY_OK && (!hy0 || !hy)) st = kyi_fail(KY_ERR_NOMEM, call, "SpMV tuning buffers");
    char rep[1024];
    int rl = snprintf(rep, sizeof rep, "SpMV of %d rows, %lld entries, vector %lld:", n, (long long)A->lnnz,
                      (long long)P->next);
    double best = 1e30, ymax = 0;
    int bk = 0;
    if (st == KY_OK) {
        k_tune_x<<<256, 256>>>((int)P->next, x);
        for (int k = 0; k < nc && st == KY_OK; k++) {
            apply(P, &cs[k]);
            double *out = k == 0 ? y0 : y;
            float tmin = 1e30f;
            for (int rep_ = 0; rep_ < 6; rep_++) {
                cudaEventRecord(e0, 0);
                cudaError_t e = kyi_sp_gpu_spmv_launch(A, P, x, out, NULL, 0);
                cudaEventRecord(e1, 0);
                if (e != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess) {
                    tmin = -1;
                    break;
                }
                float ms = 0;
                cudaEventElapsedTime(&ms, e0, e1);
                if (rep_ > 0 && ms < tmin) tmin = ms;
            }
            if (tmin < 0) { /* a launch that fails here (resources) is no candidate; clear the error */
                cudaGetLastError();
                if (k == 0)
                    st = kyi_fail(KY_ERR_CUDA, call, "SpMV kernel: %s",
                                  cudaGetErrorString(cudaGetLastError()));
                continue;
            }
            int ok = 1;
            if (k == 0) {
                cudaMemcpy(hy0, y0, sizeof(double) * (size_t)n, cudaMemcpyDeviceToHost);
                for (int i = 0; i < n; i++) ymax = fmax(ymax, fabs(hy0[i]));
            } else {
                cudaMemcpy(hy, y, sizeof(double) * (size_t)n, cudaMemcpyDeviceToHost);
                for (int i = 0; i < n && ok; i++)
                    if (!(fabs(hy[i] - hy0[i]) <= 1e-11 * ymax + 1e-300)) ok = 0;
            }
            if (rl < (int)sizeof rep - 64)
                rl += snprintf(rep + rl, sizeof rep - rl, " %s/V%d/K%d/T%d %.1f us%s;", gk_name[cs[k].gk],
                               cs[k].V, cs[k].K, cs[k].threads, 1e3 * tmin, ok ? "" : " (WRONG, dropped)");
            if (ok && 1e3 * tmin < best) {
                best = 1e3 * tmin;
                bk = k;
            }
        }
    }
    apply(P, &cs[bk]);
    if (rl < (int)sizeof rep - 64)
        snprintf(rep + rl, sizeof rep - rl, " chosen %s/V%d/K%d/T%d", gk_name[cs[bk].gk], cs[bk].V, cs[bk].K,
                 cs[bk].threads);
    KYI_INFO(KYI_SUB_GPU, "%s", rep);
    if (P->gk != GK_XBLK && P->d_bval) { /* not chosen: give its memory back */
        kyi_sp_gpu_free(P->d_bptr);
        kyi_sp_gpu_free(P->d_bcol);
        kyi_sp_gpu_free(P->d_bval);
        P->d_bptr = P->d_bcol = P->d_bval = NULL;
    }
    cudaFree(x);
    cudaFree(y0);
    cudaFree(y);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    free(hy0);
    free(hy);
    return st;
}
