/* CUDA service layer, CPU-only build: the build links this file instead of the CUDA files of this folder.
 * Queries answer "no GPU" and "host memory"; every other call fails with KY_ERR_UNSUPPORTED, and
 * kyi_gpu_last_error() says why. */
#include "kyoyu/status.h"
#include "runtime/gpu.h"
#include "runtime/log.h"

static const char no_cuda[] = "built without CUDA";

static int unsupported(const char *call)
{
    return kyi_fail(KY_ERR_UNSUPPORTED, call, "%s", no_cuda);
}

int kyi_gpu_built(void)
{
    return 0;
}
int kyi_gpu_count(void)
{
    return 0;
}
int kyi_gpu_ptr_device(const void *p)
{
    (void)p;
    return -1;
}
int kyi_gpu_can_access_peer(int a, int b)
{
    (void)a;
    (void)b;
    return 0;
}
int kyi_gpu_enable_peer(int a, int b)
{
    (void)a;
    (void)b;
    return unsupported("kyi_gpu_enable_peer");
}

int kyi_gpu_pci_id(int dev, char *buf, size_t len)
{
    (void)dev;
    if (buf && len) buf[0] = '\0';
    return unsupported("kyi_gpu_pci_id");
}

int kyi_gpu_malloc(int dev, size_t n, void **p)
{
    (void)dev;
    (void)n;
    if (p) *p = NULL;
    return unsupported("kyi_gpu_malloc");
}
int kyi_gpu_free(void *p)
{
    (void)p;
    return unsupported("kyi_gpu_free");
}

int kyi_gpu_host_alloc(size_t n, void **p)
{
    (void)n;
    if (p) *p = NULL;
    return unsupported("kyi_gpu_host_alloc");
}
int kyi_gpu_host_free(void *p)
{
    (void)p;
    return unsupported("kyi_gpu_host_free");
}
int kyi_gpu_on_device(int dev, int (*fn)(void *arg), void *arg)
{
    (void)dev, (void)fn, (void)arg;
    return unsupported("kyi_gpu_on_device");
}

int kyi_gpu_host_register(void *p, size_t n)
{
    (void)p;
    (void)n;
    return unsupported("kyi_gpu_host_register");
}
int kyi_gpu_host_unregister(void *p)
{
    (void)p;
    return unsupported("kyi_gpu_host_unregister");
}

int kyi_gpu_ipc_export(const void *p, kyi_gpu_ipc_t *h)
{
    (void)p;
    (void)h;
    return unsupported("kyi_gpu_ipc_export");
}
int kyi_gpu_ipc_open(const kyi_gpu_ipc_t *h, int dev, void **p)
{
    (void)h;
    (void)dev;
    if (p) *p = NULL;
    return unsupported("kyi_gpu_ipc_open");
}
int kyi_gpu_ipc_close(void *p)
{
    (void)p;
    return unsupported("kyi_gpu_ipc_close");
}

int kyi_gpu_copy_async(int dev, void *dst, const void *src, size_t n, kyi_gpu_op_t **op)
{
    (void)dev;
    (void)dst;
    (void)src;
    (void)n;
    if (op) *op = NULL;
    return unsupported("kyi_gpu_copy_async");
}

int kyi_gpu_copy_strided_async(int dev, void *dst, const size_t dst_stride[], const void *src,
                               const size_t src_stride[], const size_t count[], int levels, kyi_gpu_op_t **op)
{
    (void)dev;
    (void)dst;
    (void)dst_stride;
    (void)src;
    (void)src_stride;
    (void)count;
    (void)levels;
    if (op) *op = NULL;
    return unsupported("kyi_gpu_copy_strided_async");
}

int kyi_gpu_memset_async(int dev, void *dst, int byte, size_t n, kyi_gpu_op_t **op)
{
    (void)dev;
    (void)dst;
    (void)byte;
    (void)n;
    if (op) *op = NULL;
    return unsupported("kyi_gpu_memset_async");
}

int kyi_gpu_op_test(kyi_gpu_op_t *op)
{
    (void)op;
    return unsupported("kyi_gpu_op_test");
}
int kyi_gpu_op_wait(kyi_gpu_op_t *op)
{
    (void)op;
    return unsupported("kyi_gpu_op_wait");
}
void kyi_gpu_op_free(kyi_gpu_op_t *op)
{
    (void)op;
}
int kyi_gpu_copy(int dev, void *dst, const void *src, size_t n)
{
    (void)dev;
    (void)dst;
    (void)src;
    (void)n;
    return unsupported("kyi_gpu_copy");
}
int kyi_gpu_atomic_u64(int dev, void *p, uint64_t value, int add)
{
    (void)dev;
    (void)p;
    (void)value;
    (void)add;
    return unsupported("kyi_gpu_atomic_u64");
}
int kyi_gpu_atomic_prepare(int dev)
{
    (void)dev;
    return unsupported("kyi_gpu_atomic_prepare");
}

const char *kyi_gpu_last_error(void)
{
    return no_cuda;
}

int kyi_gpu_stream_sync(int dev, void *stream)
{
    (void)dev;
    (void)stream;
    return unsupported("kyi_gpu_stream_sync");
}
