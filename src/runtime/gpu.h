/* Internal: the thin CUDA service layer (src/runtime/gpu/). Everything above it (comm, coll, dsm) reaches
 * the GPU only through these calls, so a CPU-only build links the stubs in gpu_none.c and every call
 * returns KY_ERR_UNSUPPORTED (queries return "no GPU" / "host memory").
 *
 * Thread safety: all calls may be made concurrently from any thread. Calls take the device they act on
 * explicitly and set it on the calling thread themselves. */
#ifndef KYI_RUNTIME_GPU_H
#define KYI_RUNTIME_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if this build has CUDA. */
int kyi_gpu_built(void);
/* Number of visible CUDA devices (0 if none, no driver, or no CUDA in the build). Cached after first call. */
int kyi_gpu_count(void);
/* -1 if p is host memory (or unknown to CUDA), else the CUDA device that holds it. */
int kyi_gpu_ptr_device(const void *p);
/* Whether device a can access device b's memory directly (cudaDeviceCanAccessPeer); a == b -> 1. */
int kyi_gpu_can_access_peer(int a, int b);
/* Enable peer access from a to b (idempotent, thread-safe). */
int kyi_gpu_enable_peer(int a, int b);
/* PCI bus id string of a device, for matching devices across processes of one node. */
int kyi_gpu_pci_id(int dev, char *buf, size_t len);

int kyi_gpu_malloc(int dev, size_t n, void **p);
int kyi_gpu_free(void *p);
/* Pinned host memory (cudaHostAlloc portable). */
int kyi_gpu_host_alloc(size_t n, void **p);
int kyi_gpu_host_free(void *p);
/* Pin existing host memory (e.g. a shared-memory mapping) so copies to/from GPUs run at full speed. */
/* fn(arg) with dev the calling thread's current device (restored after): for libraries that act on the
 * current CUDA context, such as UCX registering GPU memory. Returns fn's result, or an error if dev cannot be
 * made current. */
int kyi_gpu_on_device(int dev, int (*fn)(void *arg), void *arg);
int kyi_gpu_host_register(void *p, size_t n);
int kyi_gpu_host_unregister(void *p);

/* CUDA IPC: export a cudaMalloc'ed pointer (the handle names the allocation; `offset` is p's distance from
 * the allocation base) and open it in another process of the node. */
typedef struct {
    unsigned char bytes[64]; /* cudaIpcMemHandle_t */
    uint64_t offset;
} kyi_gpu_ipc_t;
int kyi_gpu_ipc_export(const void *p, kyi_gpu_ipc_t *h);
/* Opens on device `dev` of this process; *p is the address of the exported pointer (base + offset). */
int kyi_gpu_ipc_open(const kyi_gpu_ipc_t *h, int dev, void **p);
int kyi_gpu_ipc_close(void *p);

/* Asynchronous copies. `dev` is the device whose streams do the work (the caller's GPU). Any of dst/src
 * may be host, local GPU or peer-mapped GPU memory (cudaMemcpyDefault semantics). Large contiguous copies
 * are split across KY_GPU_STREAMS streams. The returned op completes with kyi_gpu_op_test/wait and must be
 * freed by kyi_gpu_op_free (after completion). */
typedef struct kyi_gpu_op kyi_gpu_op_t;
int kyi_gpu_copy_async(int dev, void *dst, const void *src, size_t n, kyi_gpu_op_t **op);
/* Strided copy with the comm layer's convention (count[0] contiguous bytes, count[1..levels] blocks,
 * stride[i] byte distance between blocks of level i+1). Uses copy engines (cudaMemcpy2D/3D) when blocks
 * are long and a copy kernel when they are short and both sides are GPU-accessible. levels 0..3. */
int kyi_gpu_copy_strided_async(int dev, void *dst, const size_t dst_stride[], const void *src,
                               const size_t src_stride[], const size_t count[], int levels,
                               kyi_gpu_op_t **op);
int kyi_gpu_memset_async(int dev, void *dst, int byte, size_t n, kyi_gpu_op_t **op);
/* 0 = complete, 1 = pending, < 0 = error (KY_ERR_CUDA). */
int kyi_gpu_op_test(kyi_gpu_op_t *op);
int kyi_gpu_op_wait(kyi_gpu_op_t *op);
void kyi_gpu_op_free(kyi_gpu_op_t *op);
/* Host waits until every piece of work queued on `stream` before the call has finished (an event recorded
 * on it and synchronised). stream: a cudaStream_t of device dev, or NULL for dev's legacy default stream.
 * The array layer orders halo exchanges after the application's kernels with it. */
int kyi_gpu_stream_sync(int dev, void *stream);
/* Blocking copy convenience: copy_async + wait + free. */
int kyi_gpu_copy(int dev, void *dst, const void *src, size_t n);
/* Atomically set (add = 0) or add `value` to the 8-byte word p of dev's memory, by a one-thread kernel on a
 * stream of dev's pool; returns once the word is written. */
int kyi_gpu_atomic_u64(int dev, void *p, uint64_t value, int add);
/* Loads that kernel on dev now, not lazily at the first signal (which could wait for a spinning kernel). */
int kyi_gpu_atomic_prepare(int dev);

/* Last CUDA error text of this thread, for messages. */
const char *kyi_gpu_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
