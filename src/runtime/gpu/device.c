/* CUDA service layer: devices. Device count, which device a pointer lives on, peer access (queried and
 * enabled once per pair behind a mutex), PCI ids, device and pinned host allocations, and the device
 * guard every other file uses to act on an explicit device from any thread.
 *
 * Contexts: CUDA >= 12 creates a device's primary context as soon as a thread makes it current, and a
 * context costs hundreds of MiB of GPU memory. A progress thread that never chose a device has device 0
 * current, so a careless query or restore would put a context on GPU 0 in every rank. We therefore track
 * which devices have a live primary context (asking the driver through cudart's entry-point query, no
 * link-time libcuda) and never make a device current just to restore or to ask about a pointer. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "runtime/gpu/gpu_impl.h"

/* ---- device count ------------------------------------------------------------------------------------ */
static pthread_once_t count_once = PTHREAD_ONCE_INIT;
static int dev_count;

static void count_init(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        KYI_INFO(KYI_SUB_GPU, "no CUDA device: cudaGetDeviceCount: %s", cudaGetErrorString(e));
        n = 0;
    }
    if (n > KYI_GPU_MAX_DEVICES) n = KYI_GPU_MAX_DEVICES;
    dev_count = n;
}

int kyi_gpu_built(void)
{
    return 1;
}

int kyi_gpu_count(void)
{
    pthread_once(&count_once, count_init);
    return dev_count;
}

/* ---- driver entry points ----------------------------------------------------------------------------- */
typedef int (*cu_ctx_state_fn)(int dev, unsigned *flags, int *active);
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static cu_ctx_state_fn cu_ctx_state;
static kyi_cu_mem_range_fn cu_mem_range;

static void *driver_sym(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        KYI_INFO(KYI_SUB_GPU, "driver entry point %s not available", name);
        return NULL;
    }
    return fn;
}

static void driver_init(void)
{
    cu_ctx_state = (cu_ctx_state_fn)driver_sym("cuDevicePrimaryCtxGetState");
    cu_mem_range = (kyi_cu_mem_range_fn)driver_sym("cuMemGetAddressRange");
}

kyi_cu_mem_range_fn kyi_gpu_driver_mem_range(void)
{
    pthread_once(&driver_once, driver_init);
    return cu_mem_range;
}

/* ---- live primary contexts --------------------------------------------------------------------------- */
static atomic_int ctx_live[KYI_GPU_MAX_DEVICES]; /* 1 once known live (a primary context stays live) */

static void ctx_mark(int dev)
{
    if (dev >= 0 && dev < KYI_GPU_MAX_DEVICES) atomic_store_explicit(&ctx_live[dev], 1, memory_order_relaxed);
}

/* Whether dev has a live primary context. Unknown (no driver entry point): 1, the safe answer for
 * restoring a device, which then may create a context but never leaves a thread on the wrong device. */
static int ctx_is_live(int dev)
{
    if (dev < 0 || dev >= KYI_GPU_MAX_DEVICES) return 0;
    if (atomic_load_explicit(&ctx_live[dev], memory_order_relaxed)) return 1;
    pthread_once(&driver_once, driver_init);
    if (!cu_ctx_state) return 1;
    unsigned flags = 0;
    int active = 0;
    if (cu_ctx_state(dev, &flags, &active) != 0) return 1;
    if (active) ctx_mark(dev);
    return active;
}

/* ---- device guard ------------------------------------------------------------------------------------ */
int kyi_gpu_dev_enter(int dev, kyi_gpu_guard_t *g, const char *call)
{
    g->prev = -1;
    g->changed = 0;
    int n = kyi_gpu_count();
    if (dev < 0 || dev >= n) {
        if (n == 0) return kyi_gpu_fail(KY_ERR_UNSUPPORTED, call, "no CUDA device is visible");
        return kyi_gpu_fail(KY_ERR_ARG, call, "device %d does not exist (%d visible)", dev, n);
    }
    int cur = -1;
    cudaError_t e = cudaGetDevice(&cur);
    if (e != cudaSuccess) return kyi_gpu_cuda_fail(e, call, "cudaGetDevice");
    if (cur == dev && atomic_load_explicit(&ctx_live[dev], memory_order_relaxed)) return KY_OK;
    e = cudaSetDevice(dev); /* also initialises dev's primary context on a first use */
    if (e != cudaSuccess) return kyi_gpu_cuda_fail(e, call, "cudaSetDevice");
    ctx_mark(dev);
    if (cur != dev) {
        g->prev = cur;
        g->changed = 1;
    }
    return KY_OK;
}

void kyi_gpu_dev_leave(const kyi_gpu_guard_t *g)
{
    if (!g->changed || !ctx_is_live(g->prev)) return;
    cudaError_t e = cudaSetDevice(g->prev);
    if (e != cudaSuccess) (void)cudaGetLastError();
}

/* ---- pointers ---------------------------------------------------------------------------------------- */
void kyi_gpu_ptr_attr(const void *p, struct cudaPointerAttributes *a)
{
    memset(a, 0, sizeof *a);
    a->type = cudaMemoryTypeUnregistered;
    a->device = -1;
    int n = kyi_gpu_count();
    if (!p || n == 0) return;
    /* The query runs in the current device's context and would create it; if this thread's device has
     * none, ask from a device that has one, or answer "host" if no device has one (then p cannot be CUDA
     * memory of this process). */
    int cur = 0;
    if (cudaGetDevice(&cur) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    if (!ctx_is_live(cur)) {
        int any = -1;
        for (int d = 0; d < n && any < 0; d++)
            if (ctx_is_live(d)) any = d;
        if (any < 0) return;
        /* cur has no context: leaving the thread on `any` changes nothing the program could have used. */
        if (cudaSetDevice(any) != cudaSuccess) {
            (void)cudaGetLastError();
            return;
        }
    }
    cudaError_t e = cudaPointerGetAttributes(a, p);
    if (e != cudaSuccess) {
        /* CUDA < 11 reported unregistered host memory as cudaErrorInvalidValue; clear it either way. */
        (void)cudaGetLastError();
        memset(a, 0, sizeof *a);
        a->type = cudaMemoryTypeUnregistered;
        a->device = -1;
    }
}

int kyi_gpu_ptr_device(const void *p)
{
    struct cudaPointerAttributes a;
    kyi_gpu_ptr_attr(p, &a);
    if (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) return a.device;
    return -1;
}

int kyi_gpu_dev_can_touch(int dev, const void *p, int *owner)
{
    struct cudaPointerAttributes a;
    kyi_gpu_ptr_attr(p, &a);
    *owner = -1;
    switch (a.type) {
        case cudaMemoryTypeDevice:
            *owner = a.device;
            if (a.device == dev) return 1;
            /* IPC mappings opened with lazy peer access are already usable; enabling again is harmless. */
            return kyi_gpu_can_access_peer(dev, a.device) && kyi_gpu_enable_peer(dev, a.device) == KY_OK;
        case cudaMemoryTypeManaged:
            *owner = a.device;
            return 1;
        case cudaMemoryTypeHost:
            /* Pinned and mapped: with unified addressing the device uses the host address itself. */
            return a.devicePointer != NULL && a.devicePointer == p;
        default:
            return 0;
    }
}

/* ---- peer access ------------------------------------------------------------------------------------- */
static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;
/* can[a][b]: 0 unknown, 1 yes, 2 no.  enabled[a][b]: access from a to b is on. */
static unsigned char peer_can[KYI_GPU_MAX_DEVICES][KYI_GPU_MAX_DEVICES];
static atomic_uchar peer_on[KYI_GPU_MAX_DEVICES][KYI_GPU_MAX_DEVICES];

int kyi_gpu_can_access_peer(int a, int b)
{
    int n = kyi_gpu_count();
    if (a < 0 || b < 0 || a >= n || b >= n) return 0;
    if (a == b) return 1;
    pthread_mutex_lock(&peer_lock);
    if (!peer_can[a][b]) {
        int v = 0;
        cudaError_t e = cudaDeviceCanAccessPeer(&v, a, b);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            v = 0;
        }
        peer_can[a][b] = v ? 1 : 2;
    }
    int r = peer_can[a][b] == 1;
    pthread_mutex_unlock(&peer_lock);
    return r;
}

int kyi_gpu_enable_peer(int a, int b)
{
    static const char *call = "kyi_gpu_enable_peer";
    int n = kyi_gpu_count();
    if (a < 0 || b < 0 || a >= n || b >= n)
        return kyi_gpu_fail(KY_ERR_ARG, call, "devices %d, %d: out of range (%d visible)", a, b, n);
    if (a == b || atomic_load_explicit(&peer_on[a][b], memory_order_acquire)) return KY_OK;
    if (!kyi_gpu_can_access_peer(a, b))
        return kyi_gpu_fail(KY_ERR_UNSUPPORTED, call, "GPU %d cannot access GPU %d directly", a, b);
    int st = KY_OK;
    pthread_mutex_lock(&peer_lock);
    if (!atomic_load_explicit(&peer_on[a][b], memory_order_relaxed)) {
        kyi_gpu_guard_t g;
        st = kyi_gpu_dev_enter(a, &g, call);
        if (st == KY_OK) {
            cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled) {
                (void)cudaGetLastError();
                e = cudaSuccess;
            }
            if (e != cudaSuccess)
                st = kyi_gpu_cuda_fail(e, call, "cudaDeviceEnablePeerAccess");
            else
                atomic_store_explicit(&peer_on[a][b], 1, memory_order_release);
            kyi_gpu_dev_leave(&g);
        }
        if (st == KY_OK) KYI_INFO(KYI_SUB_GPU, "peer access GPU %d -> GPU %d enabled", a, b);
    }
    pthread_mutex_unlock(&peer_lock);
    return st;
}

int kyi_gpu_pci_id(int dev, char *buf, size_t len)
{
    static const char *call = "kyi_gpu_pci_id";
    if (!buf || len == 0) return kyi_gpu_fail(KY_ERR_ARG, call, "no buffer");
    int n = kyi_gpu_count();
    if (dev < 0 || dev >= n)
        return kyi_gpu_fail(KY_ERR_ARG, call, "device %d does not exist (%d visible)", dev, n);
    int l = len > (size_t)INT32_MAX ? INT32_MAX : (int)len;
    cudaError_t e = cudaDeviceGetPCIBusId(buf, l, dev);
    if (e != cudaSuccess) return kyi_gpu_cuda_fail(e, call, "cudaDeviceGetPCIBusId");
    return KY_OK;
}

/* ---- allocations ------------------------------------------------------------------------------------- */
int kyi_gpu_malloc(int dev, size_t n, void **p)
{
    static const char *call = "kyi_gpu_malloc";
    if (!p) return kyi_gpu_fail(KY_ERR_ARG, call, "output pointer is NULL");
    *p = NULL;
    kyi_gpu_guard_t g;
    KYI_CHECK(kyi_gpu_dev_enter(dev, &g, call));
    cudaError_t e = cudaMalloc(p, n ? n : 1);
    kyi_gpu_dev_leave(&g);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        *p = NULL;
        return kyi_gpu_fail(KY_ERR_NOMEM, call, "cudaMalloc of %zu bytes on GPU %d: out of memory", n, dev);
    }
    if (e != cudaSuccess) {
        *p = NULL;
        return kyi_gpu_cuda_fail(e, call, "cudaMalloc");
    }
    KYI_TRACE(KYI_SUB_GPU, "cudaMalloc %zu bytes on GPU %d -> %p", n, dev, *p);
    return KY_OK;
}

int kyi_gpu_free(void *p)
{
    if (!p) return KY_OK;
    /* cudaFree needs no particular current device under unified addressing, but a thread with no live
     * context would get one: free from the owner. */
    int dev = kyi_gpu_ptr_device(p);
    kyi_gpu_guard_t g = {-1, 0};
    if (dev >= 0) KYI_CHECK(kyi_gpu_dev_enter(dev, &g, "kyi_gpu_free"));
    cudaError_t e = cudaFree(p);
    kyi_gpu_dev_leave(&g);
    if (e != cudaSuccess) return kyi_gpu_cuda_fail(e, "kyi_gpu_free", "cudaFree");
    return KY_OK;
}

/* Host calls need some context; use one that exists, else device 0. */
static int host_enter(kyi_gpu_guard_t *g, const char *call)
{
    int n = kyi_gpu_count();
    if (n == 0) {
        g->prev = -1;
        g->changed = 0;
        return kyi_gpu_fail(KY_ERR_UNSUPPORTED, call, "no CUDA device is visible");
    }
    int cur = 0;
    if (cudaGetDevice(&cur) != cudaSuccess) {
        (void)cudaGetLastError();
        cur = 0;
    }
    int dev = -1;
    if (cur >= 0 && cur < n && ctx_is_live(cur)) dev = cur;
    for (int d = 0; d < n && dev < 0; d++)
        if (ctx_is_live(d)) dev = d;
    return kyi_gpu_dev_enter(dev < 0 ? 0 : dev, g, call);
}

int kyi_gpu_host_alloc(size_t n, void **p)
{
    static const char *call = "kyi_gpu_host_alloc";
    if (!p) return kyi_gpu_fail(KY_ERR_ARG, call, "output pointer is NULL");
    *p = NULL;
    kyi_gpu_guard_t g;
    KYI_CHECK(host_enter(&g, call));
    cudaError_t e = cudaHostAlloc(p, n ? n : 1, cudaHostAllocPortable | cudaHostAllocMapped);
    kyi_gpu_dev_leave(&g);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        *p = NULL;
        return kyi_gpu_fail(KY_ERR_NOMEM, call, "cudaHostAlloc of %zu bytes: out of memory", n);
    }
    if (e != cudaSuccess) {
        *p = NULL;
        return kyi_gpu_cuda_fail(e, call, "cudaHostAlloc");
    }
    return KY_OK;
}

int kyi_gpu_host_free(void *p)
{
    if (!p) return KY_OK;
    kyi_gpu_guard_t g;
    KYI_CHECK(host_enter(&g, "kyi_gpu_host_free"));
    cudaError_t e = cudaFreeHost(p);
    kyi_gpu_dev_leave(&g);
    if (e != cudaSuccess) return kyi_gpu_cuda_fail(e, "kyi_gpu_host_free", "cudaFreeHost");
    return KY_OK;
}

int kyi_gpu_on_device(int dev, int (*fn)(void *arg), void *arg)
{
    kyi_gpu_guard_t g;
    KYI_CHECK(kyi_gpu_dev_enter(dev, &g, "kyi_gpu_on_device"));
    int st = fn(arg);
    kyi_gpu_dev_leave(&g);
    return st;
}

int kyi_gpu_host_register(void *p, size_t n)
{
    static const char *call = "kyi_gpu_host_register";
    if (!p || n == 0) return kyi_gpu_fail(KY_ERR_ARG, call, "nothing to register (%p, %zu bytes)", p, n);
    kyi_gpu_guard_t g;
    KYI_CHECK(host_enter(&g, call));
    cudaError_t e = cudaHostRegister(p, n, cudaHostRegisterPortable | cudaHostRegisterMapped);
    if (e == cudaErrorHostMemoryAlreadyRegistered) {
        (void)cudaGetLastError();
        e = cudaSuccess;
    }
    kyi_gpu_dev_leave(&g);
    if (e != cudaSuccess) return kyi_gpu_cuda_fail(e, call, "cudaHostRegister");
    return KY_OK;
}

int kyi_gpu_host_unregister(void *p)
{
    static const char *call = "kyi_gpu_host_unregister";
    if (!p) return kyi_gpu_fail(KY_ERR_ARG, call, "pointer is NULL");
    kyi_gpu_guard_t g;
    KYI_CHECK(host_enter(&g, call));
    cudaError_t e = cudaHostUnregister(p);
    kyi_gpu_dev_leave(&g);
    if (e != cudaSuccess) return kyi_gpu_cuda_fail(e, call, "cudaHostUnregister");
    return KY_OK;
}
