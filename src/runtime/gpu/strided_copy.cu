/* CUDA service layer: strided copies (the comm layer's convention: count[0] contiguous bytes,
 * count[1..levels] blocks per level, stride[i] bytes between blocks of level i+1; levels 0..3).
 *
 * The shape is first simplified (levels of one block dropped, levels that are contiguous on both sides
 * merged into the one below), then copied one of two ways:
 *  - copy engines, when blocks are long (count[0] > KY_GPU_KERNEL_MAX_BLOCK) or a side is memory a kernel
 *    on `dev` cannot touch (pageable host memory, a peer without access): one cudaMemcpy2DAsync for one
 *    level, cudaMemcpy3DAsync per 2-level slab when the strides allow pitched pointers, else 2-D copies in
 *    a loop; from KY_GPU_SPLIT_MIN bytes the pieces are spread over the device's streams;
 *  - a copy kernel, when blocks are short and both sides are GPU-accessible (local, peer-mapped, managed
 *    or mapped pinned host memory): one thread per element of 16, 8, 4, 2 or 1 bytes, the widest that
 *    divides count[0], every stride and both base addresses; a grid-stride loop over all blocks. */
#include <stdint.h>

#include "runtime/gpu/gpu_impl.h"

namespace {

struct shape_t {
    int levels;
    size_t c[4];  /* c[0] bytes, c[1..3] blocks */
    size_t ds[3]; /* byte strides, destination */
    size_t ss[3]; /* byte strides, source */
};

/* Remove level l (1..levels) from the shape, shifting the levels above it down. */
void remove_level(shape_t *s, int l)
{
    for (int k = l; k < s->levels; k++) {
        s->c[k] = s->c[k + 1];
        s->ds[k - 1] = s->ds[k];
        s->ss[k - 1] = s->ss[k];
    }
    s->c[s->levels] = 1;
    s->ds[s->levels - 1] = s->ss[s->levels - 1] = 0;
    s->levels--;
}

/* Drop levels of one block; merge a level into the one below where both sides are contiguous across it. */
void simplify(shape_t *s)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (int l = 1; l <= s->levels && !changed; l++) {
            if (s->c[l] == 1) {
                remove_level(s, l);
                changed = 1;
                break;
            }
            /* bytes one block of level l-1 spans when contiguous: c[0] for l == 1, else stride * count */
            size_t dunit = l == 1 ? s->c[0] : s->ds[l - 2] * s->c[l - 1];
            size_t sunit = l == 1 ? s->c[0] : s->ss[l - 2] * s->c[l - 1];
            if (s->ds[l - 1] != dunit || s->ss[l - 1] != sunit) continue;
            s->c[l - 1] *= s->c[l]; /* level l folds into level l-1 (into the bytes for l == 1) */
            remove_level(s, l);
            changed = 1;
        }
    }
}

/* ---- copy kernel ------------------------------------------------------------------------------------- */
template <typename T, typename I>
__global__ void strided_kernel(T *__restrict__ dst, const T *__restrict__ src, I n0, I c1, I c2, I total,
                               I d0, I d1, I d2, I s0, I s1, I s2)
{
    for (I e = (I)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (I)gridDim.x * blockDim.x) {
        I x = e % n0, r = e / n0;
        I i = r % c1;
        r /= c1;
        I j = r % c2, k = r / c2;
        dst[k * d2 + j * d1 + i * d0 + x] = src[k * s2 + j * s1 + i * s0 + x];
    }
}

template <typename T, typename I>
cudaError_t launch_typed(const shape_t *s, size_t w, void *dst, const void *src, int sms, cudaStream_t st)
{
    I n0 = (I)(s->c[0] / w), c1 = (I)s->c[1], c2 = (I)s->c[2];
    I total = n0 * c1 * c2 * (I)s->c[3];
    I d0 = (I)(s->ds[0] / w), d1 = (I)(s->ds[1] / w), d2 = (I)(s->ds[2] / w);
    I s0 = (I)(s->ss[0] / w), s1 = (I)(s->ss[1] / w), s2 = (I)(s->ss[2] / w);
    const unsigned threads = 256;
    size_t blocks = ((size_t)total + threads - 1) / threads;
    size_t cap = (size_t)sms * 16;
    if (blocks > cap) blocks = cap;
    if (blocks < 1) blocks = 1;
    strided_kernel<T, I><<<(unsigned)blocks, threads, 0, st>>>((T *)dst, (const T *)src, n0, c1, c2, total,
                                                               d0, d1, d2, s0, s1, s2);
    return cudaGetLastError();
}

size_t extent(const size_t *stride, const size_t *c, int levels)
{
    size_t e = c[0];
    for (int i = 0; i < levels; i++) e += (c[i + 1] - 1) * stride[i];
    return e;
}

template <typename T>
cudaError_t launch_width(const shape_t *s, size_t w, void *dst, const void *src, int sms, cudaStream_t st)
{
    size_t total = s->c[0] / w * s->c[1] * s->c[2] * s->c[3];
    size_t span = extent(s->ds, s->c, s->levels);
    size_t sspan = extent(s->ss, s->c, s->levels);
    if (sspan > span) span = sspan;
    /* 32-bit indexing while indices, offsets and the grid-stride step stay below 2^32 */
    if (total < 0xFF000000ull && span / w < 0xFFFFFFFFull)
        return launch_typed<T, unsigned>(s, w, dst, src, sms, st);
    return launch_typed<T, unsigned long long>(s, w, dst, src, sms, st);
}

cudaError_t launch_kernel(const shape_t *s, void *dst, const void *src, int sms, cudaStream_t st)
{
    uintptr_t bits = (uintptr_t)dst | (uintptr_t)src | (uintptr_t)s->c[0];
    for (int l = 0; l < s->levels; l++) bits |= (uintptr_t)(s->ds[l] | s->ss[l]);
    if (!(bits & 15)) return launch_width<uint4>(s, 16, dst, src, sms, st);
    if (!(bits & 7)) return launch_width<unsigned long long>(s, 8, dst, src, sms, st);
    if (!(bits & 3)) return launch_width<unsigned>(s, 4, dst, src, sms, st);
    if (!(bits & 1)) return launch_width<unsigned short>(s, 2, dst, src, sms, st);
    return launch_width<unsigned char>(s, 1, dst, src, sms, st);
}

/* ---- copy engines ------------------------------------------------------------------------------------ */
/* h rows of w bytes. cudaMemcpy2D wants pitches >= w and <= the device's max pitch; otherwise row by row
 * (overlapping source rows, huge strides). */
cudaError_t ce_2d(char *dst, size_t dp, const char *src, size_t sp, size_t w, size_t h, size_t max_pitch,
                  cudaStream_t st, const char **what)
{
    if (h == 1 || (dp >= w && sp >= w && dp <= max_pitch && sp <= max_pitch)) {
        *what = h == 1 ? "cudaMemcpyAsync" : "cudaMemcpy2DAsync";
        if (h == 1) return cudaMemcpyAsync(dst, src, w, cudaMemcpyDefault, st);
        return cudaMemcpy2DAsync(dst, dp, src, sp, w, h, cudaMemcpyDefault, st);
    }
    *what = "cudaMemcpyAsync";
    for (size_t i = 0; i < h; i++) {
        cudaError_t e = cudaMemcpyAsync(dst + i * dp, src + i * sp, w, cudaMemcpyDefault, st);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

/* One slab of a 2-level shape: c[2] planes of c[1] rows of c[0] bytes. As one 3-D copy when each side's
 * plane stride is a whole number of its row strides covering the rows; else a 2-D copy per plane. */
cudaError_t ce_slab(const shape_t *s, char *dst, const char *src, size_t max_pitch, cudaStream_t st,
                    const char **what)
{
    size_t w = s->c[0], h = s->c[1], d = s->c[2];
    size_t dp = s->ds[0], sp = s->ss[0], dz = s->ds[1], sz = s->ss[1];
    if (d > 1 && dp >= w && sp >= w && dp <= max_pitch && sp <= max_pitch && dz % dp == 0 && sz % sp == 0 &&
        dz / dp >= h && sz / sp >= h) {
        cudaMemcpy3DParms p = {};
        p.srcPtr = make_cudaPitchedPtr((void *)src, sp, w, sz / sp);
        p.dstPtr = make_cudaPitchedPtr(dst, dp, w, dz / dp);
        p.extent = make_cudaExtent(w, h, d);
        p.kind = cudaMemcpyDefault;
        cudaError_t e = cudaMemcpy3DAsync(&p, st);
        *what = "cudaMemcpy3DAsync";
        if (e == cudaSuccess) return e;
        if (kyi_gpu_err_is_sticky(e)) return e;
        (void)cudaGetLastError(); /* shape CUDA refuses in 3-D: fall back to planes */
    }
    for (size_t k = 0; k < d; k++) {
        cudaError_t e = ce_2d(dst + k * dz, dp, src + k * sz, sp, w, h, max_pitch, st, what);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

}  // namespace

extern "C" int kyi_gpu_copy_strided_async(int dev, void *dst, const size_t dst_stride[], const void *src,
                                          const size_t src_stride[], const size_t count[], int levels,
                                          kyi_gpu_op_t **op)
{
    static const char *call = "kyi_gpu_copy_strided_async";
    if (!op) return kyi_gpu_fail(KY_ERR_ARG, call, "op is NULL");
    *op = NULL;
    if (levels < 0 || levels > 3) return kyi_gpu_fail(KY_ERR_ARG, call, "levels %d outside 0..3", levels);
    if (!count || (levels > 0 && (!dst_stride || !src_stride)))
        return kyi_gpu_fail(KY_ERR_ARG, call, "NULL count or stride array");
    shape_t s = {};
    s.levels = levels;
    s.c[0] = count[0];
    size_t total = count[0];
    for (int l = 1; l <= 3; l++) s.c[l] = l <= levels ? count[l] : 1;
    for (int l = 0; l < 3; l++) {
        s.ds[l] = l < levels ? dst_stride[l] : 0;
        s.ss[l] = l < levels ? src_stride[l] : 0;
    }
    for (int l = 1; l <= levels; l++) total *= count[l];
    if (total && (!dst || !src)) return kyi_gpu_fail(KY_ERR_ARG, call, "NULL buffer for %zu bytes", total);
    if (total == 0) return kyi_gpu_copy_async(dev, dst, src, 0, op);
    simplify(&s);
    if (s.levels == 0) return kyi_gpu_copy_async(dev, dst, src, s.c[0], op);

    const kyi_gpu_settings_t *cfg = kyi_gpu_settings();
    int downer = -1, sowner = -1;
    int use_kernel = s.c[0] <= cfg->kernel_max && kyi_gpu_dev_can_touch(dev, dst, &downer) &&
                     kyi_gpu_dev_can_touch(dev, src, &sowner);
    if (!use_kernel && s.c[0] > cfg->kernel_max) {
        /* Copy engines between two GPUs run best (and 2-D/3-D peer copies only run everywhere) with peer
         * access on; where it cannot be enabled CUDA stages through the host. */
        int o1 = kyi_gpu_ptr_device(dst), o2 = kyi_gpu_ptr_device(src);
        if (o1 >= 0 && o1 != dev && kyi_gpu_can_access_peer(dev, o1)) (void)kyi_gpu_enable_peer(dev, o1);
        if (o2 >= 0 && o2 != dev && kyi_gpu_can_access_peer(dev, o2)) (void)kyi_gpu_enable_peer(dev, o2);
    }

    kyi_gpu_guard_t g;
    KYI_CHECK(kyi_gpu_dev_enter(dev, &g, call));
    int st = KY_OK;
    cudaStream_t *streams;
    int ns;
    kyi_gpu_op_t *o = NULL;
    unsigned used = 0;
    if ((st = kyi_gpu_streams(dev, &streams, &ns, call))) goto out;
    if (!(o = kyi_gpu_op_new(dev, call))) {
        st = KY_ERR_NOMEM;
        goto out;
    }

    if (use_kernel) {
        int i = kyi_gpu_stream_pick(dev);
        used = 1u << i;
        cudaError_t e = launch_kernel(&s, dst, src, kyi_gpu_sm_count(dev), streams[i]);
        if (e != cudaSuccess)
            st = kyi_gpu_cuda_fail(e, call, "strided copy kernel launch");
        else
            st = kyi_gpu_op_record(o, streams[i], call);
        KYI_TRACE(KYI_SUB_GPU, "strided kernel: %zu bytes in blocks of %zu, %d levels, GPU %d", total, s.c[0],
                  s.levels, dev);
    } else {
        /* Pieces: levels 1 -> row ranges of the one 2-D copy; levels 2 -> the slab; levels 3 -> one slab per
         * outer block. Spread over the streams from KY_GPU_SPLIT_MIN bytes on. */
        int nstreams = (total >= cfg->split_min && ns > 1) ? ns : 1;
        int first = nstreams == 1 ? kyi_gpu_stream_pick(dev) : 0;
        size_t max_pitch = kyi_gpu_max_pitch(dev);
        const char *what = "cudaMemcpy2DAsync";
        cudaError_t e = cudaSuccess;
        char *d = (char *)dst;
        const char *sp = (const char *)src;
        if (s.levels == 1) {
            size_t rows = (s.c[1] + (size_t)nstreams - 1) / (size_t)nstreams;
            for (size_t r0 = 0, i = 0; r0 < s.c[1] && e == cudaSuccess; r0 += rows, i++) {
                size_t h = s.c[1] - r0 < rows ? s.c[1] - r0 : rows;
                used |= 1u << (first + i);
                e = ce_2d(d + r0 * s.ds[0], s.ds[0], sp + r0 * s.ss[0], s.ss[0], s.c[0], h, max_pitch,
                          streams[first + i], &what);
            }
        } else if (s.levels == 2 && nstreams == 1) {
            used |= 1u << first;
            e = ce_slab(&s, d, sp, max_pitch, streams[first], &what);
        } else {
            /* Outer pieces: planes of a 2-level shape (so they can spread), slabs of a 3-level one. */
            shape_t one = s;
            size_t outer, dstep, sstep;
            if (s.levels == 2) {
                one.levels = 1;
                one.c[2] = 1;
                outer = s.c[2];
                dstep = s.ds[1];
                sstep = s.ss[1];
            } else {
                one.levels = 2;
                one.c[3] = 1;
                outer = s.c[3];
                dstep = s.ds[2];
                sstep = s.ss[2];
            }
            /* contiguous ranges of outer pieces per stream keep each stream's work together */
            size_t per = (outer + (size_t)nstreams - 1) / (size_t)nstreams;
            for (size_t k = 0; k < outer && e == cudaSuccess; k++) {
                int i = first + (int)(k / per);
                used |= 1u << i;
                if (one.levels == 1)
                    e = ce_2d(d + k * dstep, one.ds[0], sp + k * sstep, one.ss[0], one.c[0], one.c[1],
                              max_pitch, streams[i], &what);
                else
                    e = ce_slab(&one, d + k * dstep, sp + k * sstep, max_pitch, streams[i], &what);
            }
        }
        if (e != cudaSuccess) st = kyi_gpu_cuda_fail(e, call, what);
        for (int i = 0; i < ns && st == KY_OK; i++)
            if ((used >> i) & 1u) st = kyi_gpu_op_record(o, streams[i], call);
        KYI_TRACE(KYI_SUB_GPU,
                  "strided copy engines: %zu bytes in blocks of %zu, %d levels, GPU %d, %d streams", total,
                  s.c[0], s.levels, dev, o->nev);
    }
    if (st) {
        kyi_gpu_op_abandon(o, streams, used);
        o = NULL;
    }
out:
    kyi_gpu_dev_leave(&g);
    if (st == KY_OK) *op = o;
    return st;
}
