/* ky_himeno without CUDA: the GPU calls exist and say so, so that main.c needs no #ifdef. */
#include <stdio.h>

#include "himeno.h"

static int none(char *err, size_t len)
{
    snprintf(err, len, "this ky_himeno was built without CUDA");
    return -1;
}

int hg_gpu_count(void)
{
    return 0;
}
int hg_gpu_select(int device, char *err, size_t len)
{
    (void)device;
    return none(err, len);
}
int hg_gpu_alloc(void **ptr, size_t bytes, char *err, size_t len)
{
    (void)ptr, (void)bytes;
    return none(err, len);
}
int hg_gpu_host_alloc(void **ptr, size_t bytes, char *err, size_t len)
{
    (void)ptr, (void)bytes;
    return none(err, len);
}
void hg_gpu_free(void *ptr)
{
    (void)ptr;
}
void hg_gpu_host_free(void *ptr)
{
    (void)ptr;
}
int hg_gpu_copy(void *dst, const void *src, size_t bytes, char *err, size_t len)
{
    (void)dst, (void)src, (void)bytes;
    return none(err, len);
}
int hg_gpu_gosa_reset(double *ring, char *err, size_t len)
{
    (void)ring;
    return none(err, len);
}
int hg_gpu_jacobi(const hg_block_t *b, const hg_coef_t *cf, const float *p, float *q, float omega,
                  double *ring, int slot, char *err, size_t len)
{
    (void)b, (void)cf, (void)p, (void)q, (void)omega, (void)ring, (void)slot;
    return none(err, len);
}
int hg_gpu_chain(const hg_block_t *b, const hg_coef_t *cf, float *f0, float *f1, int n, float omega,
                 double *ring, int mode, int sweep, char *err, size_t len)
{
    (void)b, (void)cf, (void)f0, (void)f1, (void)n, (void)omega, (void)ring, (void)mode, (void)sweep;
    return none(err, len);
}
int hg_gpu_chain_tb(const hg_block_t *b, const hg_coef_t *cf, float *f0, float *f1, int n, float omega,
                    double *ring, int tb, int tile, int chunk, int *cur, char *err, size_t len)
{
    (void)b, (void)cf, (void)f0, (void)f1, (void)n, (void)omega, (void)ring, (void)tb, (void)tile,
        (void)chunk;
    *cur = 0;
    return none(err, len);
}
int hg_gpu_jacobi_part(const hg_block_t *b, int thin, const hg_coef_t *cf, const float *p, float *q,
                       float omega, double *ring, int slot, int rev, int pdl, char *err, size_t len)
{
    (void)b, (void)thin, (void)cf, (void)p, (void)q, (void)omega, (void)ring, (void)slot, (void)rev,
        (void)pdl;
    return none(err, len);
}
int hg_gpu_mark(char *err, size_t len)
{
    return none(err, len);
}
int hg_gpu_wait_mark(char *err, size_t len)
{
    return none(err, len);
}
int hg_gpu_zero(void *ptr, size_t bytes, char *err, size_t len)
{
    (void)ptr, (void)bytes;
    return none(err, len);
}
int hg_gpu_pack(const hg_block_t *b, const float *f, const hg_box_t *x, float *buf, char *err, size_t len)
{
    (void)b, (void)f, (void)x, (void)buf;
    return none(err, len);
}
int hg_gpu_unpack(const hg_block_t *b, float *f, const hg_box_t *x, const float *buf, char *err, size_t len)
{
    (void)b, (void)f, (void)x, (void)buf;
    return none(err, len);
}
int hg_gpu_copy_async(void *dst, const void *src, size_t bytes, char *err, size_t len)
{
    (void)dst, (void)src, (void)bytes;
    return none(err, len);
}
int hg_gpu_sync(char *err, size_t len)
{
    return none(err, len);
}
void hg_gpu_set_gosa(int on)
{
    (void)on;
}
int hg_gpu_set_shape(int bx, int by, int bz, int ich, int vec)
{
    (void)bx, (void)by, (void)bz, (void)ich, (void)vec;
    return -1;
}
double hg_gpu_copy_bw(void)
{
    return 0.0;
}
