/* The sparse layer's GPU back end, part 1: the matrix and plans on the device, SpMV, the halo pack and the
 * small vector steps NPB's driver needs. Own kernels (spmv_gpu.cu: chosen per plan by timing them on the
 * matrix) instead of cuSPARSE: the library links only cudart, and CG fuses its dots into them (cg_gpu.cu). */
#include <cuda_runtime.h>
#include <stdio.h>

#include "runtime/log.h"
#include "runtime/runtime.h"
#include "sparse/sparse.h"
#include "sparse/gpu/sp_kernels.cuh"

#define CU(call, expr)                                                                                      \
    do {                                                                                                    \
        cudaError_t e_ = (expr);                                                                            \
        if (e_ != cudaSuccess) return kyi_fail(KY_ERR_CUDA, call, "%s: %s", #expr, cudaGetErrorString(e_)); \
    } while (0)

extern "C" int kyi_sp_gpu_built(void)
{
    return 1;
}

extern "C" int kyi_sp_gpu_alloc(kyi_csr_t *A, size_t bytes, void **p)
{
    *p = NULL;
    if (A && A->device >= 0) CU("ky_cg", cudaSetDevice(A->device));
    CU("ky_cg", cudaMalloc(p, bytes ? bytes : 8));
    CU("ky_cg", cudaMemset(*p, 0, bytes ? bytes : 8));
    return KY_OK;
}

extern "C" int kyi_sp_gpu_free(void *p)
{
    if (p) cudaFree(p);
    return KY_OK;
}

extern "C" int kyi_sp_gpu_upload(kyi_csr_t *A)
{
    const char *call = "ky_csr";
    CU(call, cudaSetDevice(A->device));
    KYI_CHECK(kyi_sp_gpu_alloc(A, sizeof(int) * (size_t)(A->nloc + 1), &A->d_rowptr));
    KYI_CHECK(kyi_sp_gpu_alloc(A, sizeof(double) * (size_t)A->lnnz, &A->d_val));
    CU(call, cudaMemcpy(A->d_rowptr, A->rp32, sizeof(int) * (size_t)(A->nloc + 1), cudaMemcpyHostToDevice));
    CU(call, cudaMemcpy(A->d_val, A->val, sizeof(double) * (size_t)A->lnnz, cudaMemcpyHostToDevice));
    /* lanes per row: about half the mean row length, 2..32 (short rows waste fewer lanes, long rows load
     * coalesced) */
    double mean = A->nloc > 0 ? (double)A->lnnz / (double)A->nloc : 1.0;
    int v = 2;
    while (v < 32 && v < mean / 2) v *= 2;
    A->vec_width = v;
    return KY_OK;
}

extern "C" int kyi_sp_gpu_plan_upload(kyi_csr_t *A, kyi_sp_plan_t *P)
{
    const char *call = "ky_cg";
    KYI_CHECK(kyi_sp_gpu_alloc(A, sizeof(int) * (size_t)A->lnnz, &P->d_col));
    CU(call, cudaMemcpy(P->d_col, P->col, sizeof(int) * (size_t)A->lnnz, cudaMemcpyHostToDevice));
    if (P->kind == KYI_XCH_HALO && P->send_off[P->nsend] > 0) {
        size_t b = sizeof(int) * (size_t)P->send_off[P->nsend];
        KYI_CHECK(kyi_sp_gpu_alloc(A, b, &P->d_send_idx));
        CU(call, cudaMemcpy(P->d_send_idx, P->send_idx, b, cudaMemcpyHostToDevice));
    }
    return kyi_sp_gpu_spmv_tune(A, P);
}

__global__ void k_pack(int n, const int *idx, const double *src, double *dst)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        dst[i] = src[idx[i]];
}

extern "C" int kyi_sp_gpu_pack(kyi_csr_t *A, kyi_sp_plan_t *P, const double *src, void *stream)
{
    int n = (int)P->send_off[P->nsend];
    (void)A;
    if (n == 0) return KY_OK;
    k_pack<<<(n + KYI_SP_BLOCK - 1) / KYI_SP_BLOCK, KYI_SP_BLOCK, 0, (cudaStream_t)stream>>>(
        n, (const int *)P->d_send_idx, src, P->sendbuf);
    CU("ky_cg", cudaGetLastError());
    return KY_OK;
}

extern "C" int kyi_sp_gpu_spmv(kyi_csr_t *A, kyi_sp_plan_t *P, const double *xext, double *y, void *stream)
{
    if (A->nloc == 0) return KY_OK;
    CU("ky_spmv", kyi_sp_gpu_spmv_launch(A, P, xext, y, NULL, (cudaStream_t)stream));
    return KY_OK;
}

extern "C" int kyi_sp_gpu_copy(double *dst, const double *src, int64_t n, void *stream)
{
    if (n > 0)
        CU("ky_spmv",
           cudaMemcpyAsync(dst, src, sizeof(double) * (size_t)n, cudaMemcpyDefault, (cudaStream_t)stream));
    return KY_OK;
}

extern "C" int kyi_sp_gpu_sync(void *stream)
{
    if (!stream) { /* the caller's vectors may come from any stream of the device */
        CU("ky_cg", cudaDeviceSynchronize());
        return KY_OK;
    }
    CU("ky_cg", cudaStreamSynchronize((cudaStream_t)stream));
    return KY_OK;
}

__global__ void k_dot2(int n, const double *x, const double *z, double *out)
{
    double a = 0, b = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        a += x[i] * z[i];
        b += z[i] * z[i];
    }
    kyi_sp_block_add(a, out);
    __syncthreads();
    kyi_sp_block_add(b, out + 1);
}

extern "C" int kyi_sp_gpu_dot2(const double *x, const double *z, int64_t n, double out[2])
{
    static __thread double *d = NULL;
    if (!d) CU("ky_npb_cg_run", cudaMalloc(&d, 2 * sizeof(double)));
    CU("ky_npb_cg_run", cudaMemset(d, 0, 2 * sizeof(double)));
    if (n > 0)
        k_dot2<<<(unsigned)((n + KYI_SP_BLOCK - 1) / KYI_SP_BLOCK < 1024
                                ? (n + KYI_SP_BLOCK - 1) / KYI_SP_BLOCK
                                : 1024),
                 KYI_SP_BLOCK>>>((int)n, x, z, d);
    CU("ky_npb_cg_run", cudaMemcpy(out, d, 2 * sizeof(double), cudaMemcpyDeviceToHost));
    return KY_OK;
}

__global__ void k_scale(int n, double *x, const double *z, double s, int fill)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = fill ? s : s * z[i];
}

extern "C" int kyi_sp_gpu_scale(double *x, const double *z, double s, int64_t n)
{
    if (n > 0)
        k_scale<<<(unsigned)((n + KYI_SP_BLOCK - 1) / KYI_SP_BLOCK), KYI_SP_BLOCK>>>((int)n, x, z, s, 0);
    CU("ky_npb_cg_run", cudaGetLastError());
    return KY_OK;
}

extern "C" int kyi_sp_gpu_fill(double *x, double v, int64_t n)
{
    if (n > 0)
        k_scale<<<(unsigned)((n + KYI_SP_BLOCK - 1) / KYI_SP_BLOCK), KYI_SP_BLOCK>>>((int)n, x, NULL, v, 1);
    CU("ky_npb_cg_run", cudaGetLastError());
    return KY_OK;
}
