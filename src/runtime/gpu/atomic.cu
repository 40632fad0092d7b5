/* One 8-byte atomic (set or add) on a word of GPU memory, from the host: a one-thread kernel on a stream of
 * the device's pool, waited for. Comm's device-API proxy delivers signals that a peer's kernel sent through
 * the host with it, so they stay atomic against the signals that same-node peers add with GPU atomics. */
#include <stdint.h>

#include "runtime/gpu/gpu_impl.h"

namespace {

__global__ void atomic_u64_kernel(unsigned long long *p, unsigned long long v, int add)
{
    if (add)
        atomicAdd(p, v);
    else
        atomicExch(p, v);
    __threadfence_system(); /* the waiting kernel and the host see the word before we report done */
}

}  // namespace

extern "C" int kyi_gpu_atomic_u64(int dev, void *p, uint64_t value, int add)
{
    static const char *call = "kyi_gpu_atomic_u64";
    if (!p || ((uintptr_t)p & 7)) return kyi_gpu_fail(KY_ERR_ARG, call, "word %p is not 8-byte aligned", p);
    kyi_gpu_guard_t g;
    KYI_CHECK(kyi_gpu_dev_enter(dev, &g, call));
    cudaStream_t *streams;
    int ns, st = kyi_gpu_streams(dev, &streams, &ns, call);
    if (!st) {
        cudaStream_t s = streams[kyi_gpu_stream_pick(dev)];
        atomic_u64_kernel<<<1, 1, 0, s>>>((unsigned long long *)p, (unsigned long long)value, add);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
        if (e != cudaSuccess) st = kyi_gpu_cuda_fail(e, call, "atomic kernel");
    }
    kyi_gpu_dev_leave(&g);
    return st;
}

/* Load the atomic kernel's module now. CUDA loads modules lazily (CUDA_MODULE_LOADING=LAZY, the default),
 * and loading one synchronises the context: the first signal a proxy delivers arrives while the target's
 * kernel spins in ky_dev_wait_until for it, so a lazy load there would wait for that kernel, which waits
 * for the signal (a deadlock seen on the GPU machine). GPU segments call this when they are created. */
extern "C" int kyi_gpu_atomic_prepare(int dev)
{
    static const char *call = "kyi_gpu_atomic_prepare";
    kyi_gpu_guard_t g;
    KYI_CHECK(kyi_gpu_dev_enter(dev, &g, call));
    cudaFuncAttributes attr;
    cudaError_t e = cudaFuncGetAttributes(&attr, atomic_u64_kernel);
    kyi_gpu_dev_leave(&g);
    return e == cudaSuccess ? KY_OK : kyi_gpu_cuda_fail(e, call, "cudaFuncGetAttributes");
}
