/* CUDA service layer: per-device stream pools and operations. Each device gets KY_GPU_STREAMS
 * non-blocking streams on first use (created once under a lock, read lock-free after). An operation
 * (kyi_gpu_op_t) is the set of events recorded on the streams it used; test queries them, wait
 * synchronises on them. Events are timing-free and recycled through a small per-device free list.
 *
 * Streams are non-blocking: they do not wait for work the program queued on the legacy default stream.
 * As with CUDA-aware MPI, a caller synchronises its own streams before handing buffers to Kyoyu.
 * Operations are independent: two operations may run in either order or at once. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "runtime/config.h"
#include "runtime/gpu/gpu_impl.h"

/* ---- settings ---------------------------------------------------------------------------------------- */
static pthread_once_t settings_once = PTHREAD_ONCE_INIT;
static kyi_gpu_settings_t settings;

static void settings_init(void)
{
    long n = kyi_setting_long(KYI_SET_GPU_STREAMS);
    if (n < 1) n = 1;
    if (n > KYI_GPU_MAX_STREAMS) n = KYI_GPU_MAX_STREAMS;
    settings.streams = n;
    settings.split_min = kyi_setting_size(KYI_SET_GPU_SPLIT_MIN);
    if (settings.split_min < 1) settings.split_min = 1;
    settings.kernel_max = kyi_setting_size(KYI_SET_GPU_KERNEL_MAX_BLOCK);
}

const kyi_gpu_settings_t *kyi_gpu_settings(void)
{
    pthread_once(&settings_once, settings_init);
    return &settings;
}

/* ---- pools ------------------------------------------------------------------------------------------- */
enum { EVENT_CACHE = 64 };

typedef struct {
    atomic_int ready;
    int n;
    cudaStream_t s[KYI_GPU_MAX_STREAMS];
    atomic_uint next; /* round robin for single-stream work */
    int sm_count;
    size_t max_pitch;
    pthread_mutex_t ev_lock; /* initialised with the pool */
    int nfree;
    cudaEvent_t free_ev[EVENT_CACHE];
} pool_t;

static pool_t pools[KYI_GPU_MAX_DEVICES];
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;

/* Create dev's pool; called with pools_lock held and dev current. */
static int pool_create(int dev, pool_t *pl, const char *call)
{
    int n = (int)kyi_gpu_settings()->streams;
    /* Blocking streams, on purpose: they wait for work the application queued on the legacy default stream
     * (a kernel that filled the buffer, a cudaMemcpy from pageable memory whose DMA is still in flight), so
     * a ky_put sends what the program wrote before the call, as CUDA-aware MPI does. Work on the
     * application's own non-blocking streams must be synchronised by the application (docs/api.md). */
    for (int i = 0; i < n; i++) {
        cudaError_t e = cudaStreamCreateWithFlags(&pl->s[i], cudaStreamDefault);
        if (e != cudaSuccess) {
            for (int j = 0; j < i; j++) cudaStreamDestroy(pl->s[j]);
            return kyi_gpu_cuda_fail(e, call, "cudaStreamCreateWithFlags");
        }
    }
    int v = 0;
    cudaError_t e = cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        v = 0;
    }
    pl->sm_count = v > 0 ? v : 32;
    v = 0;
    e = cudaDeviceGetAttribute(&v, cudaDevAttrMaxPitch, dev);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        v = 0;
    }
    pl->max_pitch = v > 0 ? (size_t)v : ((size_t)1 << 31) - 1;
    pthread_mutex_init(&pl->ev_lock, NULL);
    pl->nfree = 0;
    pl->n = n;
    atomic_store_explicit(&pl->ready, 1, memory_order_release);
    KYI_INFO(KYI_SUB_GPU, "GPU %d: %d copy streams, %d SMs", dev, n, pl->sm_count);
    return KY_OK;
}

/* dev's pool, created if needed. dev must be valid and current (callers hold a guard). */
static pool_t *pool_get(int dev, const char *call, int *st)
{
    pool_t *pl = &pools[dev];
    *st = KY_OK;
    if (atomic_load_explicit(&pl->ready, memory_order_acquire)) return pl;
    pthread_mutex_lock(&pools_lock);
    if (!atomic_load_explicit(&pl->ready, memory_order_relaxed)) *st = pool_create(dev, pl, call);
    pthread_mutex_unlock(&pools_lock);
    return *st ? NULL : pl;
}

int kyi_gpu_streams(int dev, cudaStream_t **streams, int *n, const char *call)
{
    int st;
    pool_t *pl = pool_get(dev, call, &st);
    if (!pl) return st;
    *streams = pl->s;
    *n = pl->n;
    return KY_OK;
}

int kyi_gpu_stream_pick(int dev)
{
    pool_t *pl = &pools[dev];
    return (int)(atomic_fetch_add_explicit(&pl->next, 1, memory_order_relaxed) % (unsigned)pl->n);
}

int kyi_gpu_sm_count(int dev)
{
    return pools[dev].sm_count;
}
size_t kyi_gpu_max_pitch(int dev)
{
    return pools[dev].max_pitch;
}

/* ---- events ------------------------------------------------------------------------------------------ */
static int event_get(int dev, cudaEvent_t *ev, const char *call)
{
    int st;
    pool_t *pl = pool_get(dev, call, &st);
    if (!pl) return st;
    pthread_mutex_lock(&pl->ev_lock);
    int have = pl->nfree > 0;
    if (have) *ev = pl->free_ev[--pl->nfree];
    pthread_mutex_unlock(&pl->ev_lock);
    if (have) return KY_OK;
    cudaError_t e = cudaEventCreateWithFlags(ev, cudaEventDisableTiming);
    if (e != cudaSuccess) return kyi_gpu_cuda_fail(e, call, "cudaEventCreateWithFlags");
    return KY_OK;
}

/* Return a completed event to dev's cache (or destroy it). An event still pending is destroyed: CUDA
 * releases it once the work completes, and a recycled one would be re-recorded under it. */
static void event_put(int dev, cudaEvent_t ev, int complete)
{
    pool_t *pl = &pools[dev];
    if (complete && atomic_load_explicit(&pl->ready, memory_order_acquire)) {
        pthread_mutex_lock(&pl->ev_lock);
        int kept = pl->nfree < EVENT_CACHE;
        if (kept) pl->free_ev[pl->nfree++] = ev;
        pthread_mutex_unlock(&pl->ev_lock);
        if (kept) return;
    }
    if (cudaEventDestroy(ev) != cudaSuccess) (void)cudaGetLastError();
}

/* ---- operations -------------------------------------------------------------------------------------- */
kyi_gpu_op_t *kyi_gpu_op_new(int dev, const char *call)
{
    kyi_gpu_op_t *op = calloc(1, sizeof *op);
    if (!op) {
        kyi_gpu_fail(KY_ERR_NOMEM, call, "out of host memory");
        return NULL;
    }
    op->dev = dev;
    return op;
}

int kyi_gpu_op_record(kyi_gpu_op_t *op, cudaStream_t s, const char *call)
{
    if (op->nev >= KYI_GPU_MAX_STREAMS)
        return kyi_gpu_fail(KY_ERR_INTERNAL, call, "too many events in one operation");
    cudaEvent_t ev;
    KYI_CHECK(event_get(op->dev, &ev, call));
    cudaError_t e = cudaEventRecord(ev, s);
    if (e != cudaSuccess) {
        event_put(op->dev, ev, 0);
        return kyi_gpu_cuda_fail(e, call, "cudaEventRecord");
    }
    op->ev[op->nev++] = ev;
    return KY_OK;
}

void kyi_gpu_op_abandon(kyi_gpu_op_t *op, cudaStream_t *streams, unsigned used_mask)
{
    for (int i = 0; i < KYI_GPU_MAX_STREAMS; i++)
        if ((used_mask >> i) & 1u)
            if (cudaStreamSynchronize(streams[i]) != cudaSuccess) (void)cudaGetLastError();
    kyi_gpu_op_free(op);
}

int kyi_gpu_op_test(kyi_gpu_op_t *op)
{
    if (!op) return kyi_gpu_fail(KY_ERR_ARG, "kyi_gpu_op_test", "operation is NULL");
    while (op->ndone < op->nev) {
        cudaError_t e = cudaEventQuery(op->ev[op->ndone]);
        if (e == cudaErrorNotReady) return 1;
        if (e != cudaSuccess) return kyi_gpu_cuda_fail(e, "kyi_gpu_op_test", "cudaEventQuery");
        op->ndone++;
    }
    return 0;
}

int kyi_gpu_op_wait(kyi_gpu_op_t *op)
{
    if (!op) return kyi_gpu_fail(KY_ERR_ARG, "kyi_gpu_op_wait", "operation is NULL");
    while (op->ndone < op->nev) {
        cudaError_t e = cudaEventSynchronize(op->ev[op->ndone]);
        if (e != cudaSuccess) return kyi_gpu_cuda_fail(e, "kyi_gpu_op_wait", "cudaEventSynchronize");
        op->ndone++;
    }
    return 0;
}

void kyi_gpu_op_free(kyi_gpu_op_t *op)
{
    if (!op) return;
    for (int i = 0; i < op->nev; i++) {
        int complete = i < op->ndone;
        if (!complete) {
            cudaError_t e = cudaEventQuery(op->ev[i]);
            complete = e == cudaSuccess;
            if (e != cudaSuccess && e != cudaErrorNotReady) (void)cudaGetLastError();
        }
        event_put(op->dev, op->ev[i], complete);
    }
    free(op);
}

/* ---- ordering after application streams ------------------------------------------------------------- */
int kyi_gpu_stream_sync(int dev, void *stream)
{
    static const char *call = "kyi_gpu_stream_sync";
    kyi_gpu_guard_t g;
    KYI_CHECK(kyi_gpu_dev_enter(dev, &g, call));
    cudaEvent_t ev;
    int st = event_get(dev, &ev, call);
    if (!st) {
        cudaError_t e = cudaEventRecord(ev, stream ? (cudaStream_t)stream : cudaStreamLegacy);
        if (e == cudaSuccess) e = cudaEventSynchronize(ev);
        if (e != cudaSuccess) st = kyi_gpu_cuda_fail(e, call, "cudaEventRecord/cudaEventSynchronize");
        event_put(dev, ev, e == cudaSuccess);
    }
    kyi_gpu_dev_leave(&g);
    return st;
}
