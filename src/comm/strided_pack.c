/* Strided descriptors (GASNet VIS convention: count[0] contiguous bytes, count[1..levels] blocks per level,
 * stride[i] bytes between blocks of level i+1) and packing to and from contiguous buffers. */
#include <string.h>

#include "comm/comm.h"
#include "comm/pack.h"

size_t kyi_strided_bytes(const size_t count[], int levels)
{
    size_t n = count[0];
    for (int i = 1; i <= levels; i++) n *= count[i];
    return n;
}

size_t kyi_strided_extent(const size_t stride[], const size_t count[], int levels)
{
    if (kyi_strided_bytes(count, levels) == 0) return 0;
    size_t e = count[0];
    for (int i = 0; i < levels; i++) e += (count[i + 1] - 1) * stride[i];
    return e;
}

/* Block copy specialised for the small power-of-two blocks of element-strided faces: a memcpy call per
 * 8-byte element costs several times the element itself. */
#define KYI_COPY_LOOP(T)                             \
    for (size_t k = 0; k < c3; k++)                  \
        for (size_t j = 0; j < c2; j++) {            \
            char *d_ = dst + k * d2 + j * d1;        \
            const char *s_ = src + k * s2 + j * s1;  \
            for (size_t i = 0; i < c1; i++) {        \
                T v_;                                \
                memcpy(&v_, s_ + i * s0, sizeof v_); \
                memcpy(d_ + i * d0, &v_, sizeof v_); \
            }                                        \
        }

/* Dense strides of the packed (contiguous) side of a layout. */
static void dense_strides(const size_t count[], int levels, size_t out[3])
{
    size_t s = count[0];
    for (int i = 0; i < 3; i++) {
        out[i] = s;
        if (i + 1 <= levels) s *= count[i + 1];
    }
}

void kyi_copy_strided_host(char *dst, const size_t ds[], const char *src, const size_t ss[],
                           const size_t count[], int levels)
{
    size_t c1 = levels >= 1 ? count[1] : 1, c2 = levels >= 2 ? count[2] : 1, c3 = levels >= 3 ? count[3] : 1;
    size_t d0 = levels >= 1 ? ds[0] : 0, d1 = levels >= 2 ? ds[1] : 0, d2 = levels >= 3 ? ds[2] : 0;
    size_t s0 = levels >= 1 ? ss[0] : 0, s1 = levels >= 2 ? ss[1] : 0, s2 = levels >= 3 ? ss[2] : 0;
    switch (count[0]) {
        case 1:
            KYI_COPY_LOOP(uint8_t) return;
        case 2:
            KYI_COPY_LOOP(uint16_t) return;
        case 4:
            KYI_COPY_LOOP(uint32_t) return;
        case 8:
            KYI_COPY_LOOP(uint64_t) return;
        default:
            break;
    }
    for (size_t k = 0; k < c3; k++)
        for (size_t j = 0; j < c2; j++)
            for (size_t i = 0; i < c1; i++)
                memcpy(dst + k * d2 + j * d1 + i * d0, src + k * s2 + j * s1 + i * s0, count[0]);
}

/* One strided side, the other dense (packed): pack = strided source, unpack = strided destination. */
static int copy_one_side(const char *call, void *dst, const size_t *dst_stride, const void *src,
                         const size_t *src_stride, int dev, const size_t count[], int levels,
                         const char *what)
{
    size_t dense[3];
    dense_strides(count, levels, dense);
    const size_t *ds = dst_stride ? dst_stride : dense, *ss = src_stride ? src_stride : dense;
    if (dev < 0) {
        kyi_copy_strided_host(dst, ds, src, ss, count, levels);
        return KY_OK;
    }
    kyi_gpu_op_t *op = NULL;
    int st = kyi_gpu_copy_strided_async(dev, dst, ds, src, ss, count, levels, &op);
    if (!st) {
        st = kyi_gpu_op_wait(op);
        kyi_gpu_op_free(op);
    }
    if (st) return kyi_fail(st, call, "%s GPU %d: %s", what, dev, kyi_gpu_last_error());
    return KY_OK;
}

void kyi_pack_host(void *dst, const void *src, const size_t src_stride[], const size_t count[], int levels)
{
    copy_one_side(NULL, dst, NULL, src, src_stride, -1, count, levels, NULL);
}

void kyi_unpack_host(void *dst, const size_t dst_stride[], const void *src, const size_t count[], int levels)
{
    copy_one_side(NULL, dst, dst_stride, src, NULL, -1, count, levels, NULL);
}

int kyi_pack(const char *call, void *dst, const void *src, int src_dev, const size_t src_stride[],
             const size_t count[], int levels)
{
    return copy_one_side(call, dst, NULL, src, src_stride, src_dev, count, levels, "packing from");
}

int kyi_unpack(const char *call, void *dst, int dst_dev, const size_t dst_stride[], const void *src,
               const size_t count[], int levels)
{
    return copy_one_side(call, dst, dst_stride, src, NULL, dst_dev, count, levels, "unpacking to");
}
