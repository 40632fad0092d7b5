/* Internal to src/runtime/gpu/: what the CUDA service layer's files share. The error helpers
 * (gpu_error.c), the device guard and context bookkeeping (device.c), the per-device stream and event pool,
 * the operation object and the cached settings (stream_pool.c). Nothing outside this folder includes it;
 * the rest of Kyoyu sees only runtime/gpu.h. C and CUDA C++ both include it. */
#ifndef KYI_RUNTIME_GPU_IMPL_H
#define KYI_RUNTIME_GPU_IMPL_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "kyoyu/status.h"
#include "runtime/gpu.h"
#include "runtime/log.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    KYI_GPU_MAX_DEVICES = 64, /* devices one process can see */
    KYI_GPU_MAX_STREAMS = 16, /* cap on KY_GPU_STREAMS */
};

/* ---- errors (gpu_error.c) ---------------------------------------------------------------------------- */
/* Record "fmt..." as this thread's kyi_gpu_last_error() text and fail through kyi_fail(status, call). */
int kyi_gpu_fail(int status, const char *call, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A CUDA call `cuda_call` failed with `err` inside `call`: a context-poisoning error ends the job through
 * kyi_fatal; any other is cleared from CUDA's per-thread last error and returned as KY_ERR_CUDA. */
int kyi_gpu_cuda_fail(cudaError_t err, const char *call, const char *cuda_call);
/* 1 if err leaves the CUDA context unusable (illegal address, launch failure, ...). */
int kyi_gpu_err_is_sticky(cudaError_t err);

/* ---- devices and contexts (device.c) ----------------------------------------------------------------- */
/* Make `dev` current on this thread for the duration of a call. leave() restores the previous device only
 * when that device already has a live primary context: restoring an unused device would create a context
 * on it (CUDA >= 12 cudaSetDevice initialises one), which costs GPU memory on a GPU the process never used.
 */
typedef struct {
    int prev;
    int changed;
} kyi_gpu_guard_t;
int kyi_gpu_dev_enter(int dev, kyi_gpu_guard_t *g, const char *call);
void kyi_gpu_dev_leave(const kyi_gpu_guard_t *g);

/* cudaPointerGetAttributes without side effects: never fails (unknown memory reads as unregistered host
 * memory, the CUDA error is cleared) and never creates a context on a device nobody used. */
void kyi_gpu_ptr_attr(const void *p, struct cudaPointerAttributes *a);
/* Whether a kernel running on `dev` may dereference p: memory of dev, of a peer with access (enabled here
 * if possible), managed memory, or host memory mapped at the same address (pinned by CUDA). *owner gets
 * kyi_gpu_ptr_device(p). */
int kyi_gpu_dev_can_touch(int dev, const void *p, int *owner);
/* Driver API entry point cuMemGetAddressRange (no link-time libcuda); NULL if the driver lacks it. */
typedef int (*kyi_cu_mem_range_fn)(unsigned long long *base, size_t *size, unsigned long long ptr);
kyi_cu_mem_range_fn kyi_gpu_driver_mem_range(void);

/* ---- streams, events, operations (stream_pool.c) ----------------------------------------------------- */
typedef struct {
    long streams;      /* KY_GPU_STREAMS, clamped to 1..KYI_GPU_MAX_STREAMS */
    size_t split_min;  /* KY_GPU_SPLIT_MIN */
    size_t kernel_max; /* KY_GPU_KERNEL_MAX_BLOCK */
} kyi_gpu_settings_t;
const kyi_gpu_settings_t *kyi_gpu_settings(void);

/* The pool of dev (created on first use, thread-safe): *streams points at n non-blocking streams. */
int kyi_gpu_streams(int dev, cudaStream_t **streams, int *n, const char *call);
/* Index of the next stream of dev's pool for a single-stream operation (round robin). */
int kyi_gpu_stream_pick(int dev);
/* SM count and max 2-D copy pitch of dev, cached. */
int kyi_gpu_sm_count(int dev);
size_t kyi_gpu_max_pitch(int dev);

struct kyi_gpu_op {
    int dev;   /* device of the events */
    int nev;   /* events recorded */
    int ndone; /* events [0, ndone) known complete */
    cudaEvent_t ev[KYI_GPU_MAX_STREAMS];
};
/* A new operation with no events (complete until something is recorded); NULL with KY_ERR_NOMEM recorded. */
kyi_gpu_op_t *kyi_gpu_op_new(int dev, const char *call);
/* Record one event of op on stream s (s must belong to op->dev, which must be current). */
int kyi_gpu_op_record(kyi_gpu_op_t *op, cudaStream_t s, const char *call);
/* Error path after partial issue: wait for the given streams (errors ignored) and free op. */
void kyi_gpu_op_abandon(kyi_gpu_op_t *op, cudaStream_t *streams, unsigned used_mask);

#ifdef __cplusplus
}
#endif

#endif
