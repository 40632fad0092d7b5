/* CUDA service layer: contiguous copies and memset. A copy runs on the streams of the device the caller
 * names; from KY_GPU_SPLIT_MIN bytes on it is cut into one piece per stream (KY_GPU_STREAMS) so several
 * copy engines work at once, each stream's piece followed by one event of the operation. Smaller copies
 * take the next stream of the pool, so copies issued from several threads overlap. cudaMemcpyDefault lets
 * either side be host, local GPU or peer GPU memory. */
#include <string.h>

#include "runtime/gpu/gpu_impl.h"

int kyi_gpu_copy_async(int dev, void *dst, const void *src, size_t n, kyi_gpu_op_t **op)
{
    static const char *call = "kyi_gpu_copy_async";
    if (!op) return kyi_gpu_fail(KY_ERR_ARG, call, "op is NULL");
    *op = NULL;
    if (n && (!dst || !src)) return kyi_gpu_fail(KY_ERR_ARG, call, "NULL buffer for %zu bytes", n);
    kyi_gpu_guard_t g;
    KYI_CHECK(kyi_gpu_dev_enter(dev, &g, call));
    int st = KY_OK;
    cudaStream_t *streams;
    int ns;
    kyi_gpu_op_t *o = NULL;
    if ((st = kyi_gpu_streams(dev, &streams, &ns, call))) goto out;
    if (!(o = kyi_gpu_op_new(dev, call))) {
        st = KY_ERR_NOMEM;
        goto out;
    }
    if (n == 0) goto out;

    const kyi_gpu_settings_t *cfg = kyi_gpu_settings();
    int pieces = (n >= cfg->split_min && ns > 1) ? ns : 1;
    int first = pieces == 1 ? kyi_gpu_stream_pick(dev) : 0;
    /* Pieces of equal size rounded up to 64 KiB keep every piece but the last aligned. */
    size_t chunk = (n + (size_t)pieces - 1) / (size_t)pieces;
    chunk = (chunk + 65535) & ~(size_t)65535;
    unsigned used = 0;
    size_t off = 0;
    for (int i = 0; off < n; i++) {
        size_t len = n - off < chunk ? n - off : chunk;
        cudaStream_t s = streams[first + i];
        used |= 1u << (first + i);
        cudaError_t e =
            cudaMemcpyAsync((char *)dst + off, (const char *)src + off, len, cudaMemcpyDefault, s);
        if (e != cudaSuccess) {
            st = kyi_gpu_cuda_fail(e, call, "cudaMemcpyAsync");
            break;
        }
        if ((st = kyi_gpu_op_record(o, s, call))) break;
        off += len;
    }
    if (st) {
        kyi_gpu_op_abandon(o, streams, used);
        o = NULL;
        goto out;
    }
    KYI_TRACE(KYI_SUB_GPU, "copy %zu bytes %p -> %p on GPU %d, %d stream(s)", n, src, dst, dev, o->nev);
out:
    kyi_gpu_dev_leave(&g);
    if (st == KY_OK) *op = o;
    return st;
}

int kyi_gpu_copy(int dev, void *dst, const void *src, size_t n)
{
    kyi_gpu_op_t *op = NULL;
    KYI_CHECK(kyi_gpu_copy_async(dev, dst, src, n, &op));
    int st = kyi_gpu_op_wait(op);
    kyi_gpu_op_free(op);
    return st;
}

int kyi_gpu_memset_async(int dev, void *dst, int byte, size_t n, kyi_gpu_op_t **op)
{
    static const char *call = "kyi_gpu_memset_async";
    if (!op) return kyi_gpu_fail(KY_ERR_ARG, call, "op is NULL");
    *op = NULL;
    if (n && !dst) return kyi_gpu_fail(KY_ERR_ARG, call, "NULL buffer for %zu bytes", n);
    int owner = -1;
    if (n) {
        struct cudaPointerAttributes a;
        kyi_gpu_ptr_attr(dst, &a);
        if (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) owner = a.device;
    }
    /* Host memory is set by the CPU, now; the operation is complete from the start. */
    if (n && owner < 0) {
        memset(dst, byte, n);
        n = 0;
    }
    /* A peer's memory is set from dev when dev may touch it, else by its owner's own streams. */
    int run_dev = dev;
    if (owner >= 0 && owner != dev &&
        !(kyi_gpu_can_access_peer(dev, owner) && kyi_gpu_enable_peer(dev, owner) == KY_OK))
        run_dev = owner;
    kyi_gpu_guard_t g;
    KYI_CHECK(kyi_gpu_dev_enter(run_dev, &g, call));
    int st = KY_OK;
    cudaStream_t *streams;
    int ns;
    kyi_gpu_op_t *o = NULL;
    if ((st = kyi_gpu_streams(run_dev, &streams, &ns, call))) goto out;
    if (!(o = kyi_gpu_op_new(run_dev, call))) {
        st = KY_ERR_NOMEM;
        goto out;
    }
    if (n == 0) goto out;
    int i = kyi_gpu_stream_pick(run_dev);
    cudaError_t e = cudaMemsetAsync(dst, byte, n, streams[i]);
    if (e != cudaSuccess)
        st = kyi_gpu_cuda_fail(e, call, "cudaMemsetAsync");
    else
        st = kyi_gpu_op_record(o, streams[i], call);
    if (st) {
        kyi_gpu_op_abandon(o, streams, 1u << i);
        o = NULL;
    }
out:
    kyi_gpu_dev_leave(&g);
    if (st == KY_OK) *op = o;
    return st;
}
