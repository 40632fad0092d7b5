/* CUDA service layer: CUDA IPC between processes of one node. A handle names a whole cudaMalloc
 * allocation, so export finds the allocation base of p (cuMemGetAddressRange, reached through cudart's
 * driver entry-point query: no link-time libcuda) and sends p's offset beside it. The importer keeps a
 * table from the address it handed out to the base CUDA gave it, since cudaIpcCloseMemHandle wants the
 * base. CUDA reference-counts repeated opens of one handle in one context; so does the table. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gpu/gpu_impl.h"

_Static_assert(sizeof(cudaIpcMemHandle_t) <= sizeof(((kyi_gpu_ipc_t *)0)->bytes),
               "kyi_gpu_ipc_t too small for cudaIpcMemHandle_t");

int kyi_gpu_ipc_export(const void *p, kyi_gpu_ipc_t *h)
{
    static const char *call = "kyi_gpu_ipc_export";
    if (!p || !h) return kyi_gpu_fail(KY_ERR_ARG, call, "NULL argument");
    memset(h, 0, sizeof *h);
    int dev = kyi_gpu_ptr_device(p);
    if (dev < 0) return kyi_gpu_fail(KY_ERR_ARG, call, "%p is not GPU memory", p);
    kyi_gpu_guard_t g;
    KYI_CHECK(kyi_gpu_dev_enter(dev, &g, call));
    int st = KY_OK;
    const char *base = p;
    kyi_cu_mem_range_fn range = kyi_gpu_driver_mem_range();
    if (range) {
        unsigned long long b = 0;
        size_t sz = 0;
        int r = range(&b, &sz, (unsigned long long)(uintptr_t)p);
        if (r != 0) {
            st = kyi_gpu_fail(KY_ERR_CUDA, call, "cuMemGetAddressRange(%p): CUresult %d", p, r);
            goto out;
        }
        base = (const char *)(uintptr_t)b;
    }
    /* Without the driver entry point (very old drivers) p is taken as the base, offset 0: right for the
     * comm layer, which exports its segments' cudaMalloc bases. */
    cudaIpcMemHandle_t mh;
    cudaError_t e = cudaIpcGetMemHandle(&mh, (void *)base);
    if (e != cudaSuccess) {
        st = kyi_gpu_cuda_fail(e, call, "cudaIpcGetMemHandle");
        goto out;
    }
    memcpy(h->bytes, &mh, sizeof mh);
    h->offset = (uint64_t)((const char *)p - base);
    KYI_TRACE(KYI_SUB_GPU, "IPC export %p (base %p + %llu) on GPU %d", p, (const void *)base,
              (unsigned long long)h->offset, dev);
out:
    kyi_gpu_dev_leave(&g);
    return st;
}

/* Opened mappings: the address handed out -> the base to close. */
typedef struct ipc_map {
    void *addr;
    void *base;
    int dev;
    struct ipc_map *next;
} ipc_map_t;
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static ipc_map_t *maps;

int kyi_gpu_ipc_open(const kyi_gpu_ipc_t *h, int dev, void **p)
{
    static const char *call = "kyi_gpu_ipc_open";
    if (!h || !p) return kyi_gpu_fail(KY_ERR_ARG, call, "NULL argument");
    *p = NULL;
    ipc_map_t *m = malloc(sizeof *m);
    if (!m) return kyi_gpu_fail(KY_ERR_NOMEM, call, "out of host memory");
    kyi_gpu_guard_t g;
    int st = kyi_gpu_dev_enter(dev, &g, call);
    if (st) {
        free(m);
        return st;
    }
    cudaIpcMemHandle_t mh;
    memcpy(&mh, h->bytes, sizeof mh);
    void *base = NULL;
    cudaError_t e = cudaIpcOpenMemHandle(&base, mh, cudaIpcMemLazyEnablePeerAccess);
    kyi_gpu_dev_leave(&g);
    if (e != cudaSuccess) {
        free(m);
        return kyi_gpu_cuda_fail(e, call, "cudaIpcOpenMemHandle");
    }
    m->addr = (char *)base + h->offset;
    m->base = base;
    m->dev = dev;
    pthread_mutex_lock(&map_lock);
    m->next = maps;
    maps = m;
    pthread_mutex_unlock(&map_lock);
    *p = m->addr;
    KYI_TRACE(KYI_SUB_GPU, "IPC open on GPU %d -> %p (base %p)", dev, *p, base);
    return KY_OK;
}

int kyi_gpu_ipc_close(void *p)
{
    static const char *call = "kyi_gpu_ipc_close";
    if (!p) return KY_OK;
    pthread_mutex_lock(&map_lock);
    ipc_map_t **pp = &maps;
    while (*pp && (*pp)->addr != p) pp = &(*pp)->next;
    ipc_map_t *m = *pp;
    if (m) *pp = m->next;
    pthread_mutex_unlock(&map_lock);
    if (!m) return kyi_gpu_fail(KY_ERR_ARG, call, "%p was not opened by kyi_gpu_ipc_open", p);
    kyi_gpu_guard_t g;
    int st = kyi_gpu_dev_enter(m->dev, &g, call);
    if (st == KY_OK) {
        cudaError_t e = cudaIpcCloseMemHandle(m->base);
        kyi_gpu_dev_leave(&g);
        if (e != cudaSuccess) st = kyi_gpu_cuda_fail(e, call, "cudaIpcCloseMemHandle");
    }
    free(m);
    return st;
}
