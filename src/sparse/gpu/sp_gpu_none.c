/* The sparse layer's GPU back end in a build without CUDA: every call says so. */
#include "runtime/log.h"
#include "sparse/sparse.h"

#define NO_CUDA(call) kyi_fail(KY_ERR_UNSUPPORTED, call, "this build has no CUDA")

int kyi_sp_gpu_built(void)
{
    return 0;
}
int kyi_sp_gpu_upload(kyi_csr_t *A)
{
    (void)A;
    return NO_CUDA("ky_csr");
}
int kyi_sp_gpu_plan_upload(kyi_csr_t *A, kyi_sp_plan_t *P)
{
    (void)A;
    (void)P;
    return NO_CUDA("ky_cg");
}
int kyi_sp_gpu_free(void *p)
{
    (void)p;
    return KY_OK;
}
int kyi_sp_gpu_alloc(kyi_csr_t *A, size_t bytes, void **p)
{
    (void)A;
    (void)bytes;
    *p = 0;
    return NO_CUDA("ky_cg");
}
int kyi_sp_gpu_pack(kyi_csr_t *A, kyi_sp_plan_t *P, const double *src, void *stream)
{
    (void)A;
    (void)P;
    (void)src;
    (void)stream;
    return NO_CUDA("ky_cg");
}
int kyi_sp_gpu_spmv(kyi_csr_t *A, kyi_sp_plan_t *P, const double *xext, double *y, void *stream)
{
    (void)A;
    (void)P;
    (void)xext;
    (void)y;
    (void)stream;
    return NO_CUDA("ky_spmv");
}
int kyi_sp_gpu_copy(double *dst, const double *src, int64_t n, void *stream)
{
    (void)dst;
    (void)src;
    (void)n;
    (void)stream;
    return NO_CUDA("ky_spmv");
}
int kyi_sp_gpu_sync(void *stream)
{
    (void)stream;
    return NO_CUDA("ky_cg");
}
int kyi_sp_cg_gpu(kyi_csr_t *A, const double *b, double *x, const ky_cg_opts_t *o, ky_cg_result_t *res)
{
    (void)A;
    (void)b;
    (void)x;
    (void)o;
    (void)res;
    return NO_CUDA("ky_cg");
}
int kyi_sp_gpu_dot2(const double *x, const double *z, int64_t n, double out[2])
{
    (void)x;
    (void)z;
    (void)n;
    (void)out;
    return NO_CUDA("ky_npb_cg_run");
}
int kyi_sp_gpu_scale(double *x, const double *z, double s, int64_t n)
{
    (void)x;
    (void)z;
    (void)s;
    (void)n;
    return NO_CUDA("ky_npb_cg_run");
}
int kyi_sp_gpu_fill(double *x, double v, int64_t n)
{
    (void)x;
    (void)v;
    (void)n;
    return NO_CUDA("ky_npb_cg_run");
}
void kyi_sp_gpu_ws_free(kyi_csr_t *A)
{
    (void)A;
}
