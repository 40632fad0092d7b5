/* Path choice and local copies. A rank's piece is reached directly when this process has it mapped
 * (itself, shared memory, CUDA IPC), else through the transport that registered the segment (UCX) or the
 * target's progress engine over MPI. */
#include <string.h>

#include "comm/comm.h"
#include "comm/direct.h"
#include "comm/transport.h"

ky_path_t kyi_path(int rank, struct kyi_seg *s)
{
    if (rank == kyi_rt.rank) return KY_PATH_SELF;
    if (s->mapped[rank]) return s->memkind == KY_MEM_GPU ? KY_PATH_IPC : KY_PATH_SHM;
    return kyi_tp_for(s)->path;
}

int kyi_copy_device(int dev_a, int dev_b)
{
    if (dev_a >= 0 && dev_b >= 0) {
        int mine = kyi_my_device();
        return (mine == dev_a || mine == dev_b) ? mine : dev_a;
    }
    return dev_a >= 0 ? dev_a : dev_b;
}

int kyi_mapped_copy(const char *call, int is_put, void *local, int ldev, void *remote, int rdev, size_t n)
{
    if (is_put) {
        int st = kyi_local_copy(call, remote, rdev, local, ldev, n);
        atomic_thread_fence(memory_order_seq_cst);
        return st;
    }
    atomic_thread_fence(memory_order_seq_cst);
    return kyi_local_copy(call, local, ldev, remote, rdev, n);
}

int kyi_local_copy(const char *call, void *dst, int dst_dev, const void *src, int src_dev, size_t n)
{
    if (n == 0) return KY_OK;
    if (dst_dev < 0 && src_dev < 0) {
        memcpy(dst, src, n);
        return KY_OK;
    }
    int dev = kyi_copy_device(dst_dev, src_dev);
    int st = kyi_gpu_copy(dev, dst, src, n);
    if (st) return kyi_fail(st, call, "copy of %zu bytes on GPU %d failed: %s", n, dev, kyi_gpu_last_error());
    return KY_OK;
}

int ky_comm_path(int rank, ky_seg_t seg, const void *local, ky_path_t *path)
{
    (void)local;
    KYI_CHECK(kyi_check_target("ky_comm_path", rank, seg));
    if (!path) return kyi_fail(KY_ERR_ARG, "ky_comm_path", "path is NULL");
    *path = kyi_path(rank, seg);
    return KY_OK;
}

void *kyi_seg_peer_base(ky_seg_t seg, int rank)
{
    return rank == kyi_rt.rank ? seg->base : seg->mapped[rank];
}

void kyi_count_path(ky_path_t p, size_t n)
{
    kyi_count(p, n);
}

void kyi_count_paths(ky_path_t p, size_t ops, size_t bytes)
{
    atomic_fetch_add_explicit(&kyi_stats.ops[p], ops, memory_order_relaxed);
    atomic_fetch_add_explicit(&kyi_stats.bytes[p], bytes, memory_order_relaxed);
}

int kyi_mapped_dev(const struct kyi_seg *s, int rank)
{
    if (s->memkind != KY_MEM_GPU) return -1;
    if (rank == kyi_rt.rank) return s->device;
    return kyi_my_device() >= 0 ? kyi_my_device() : s->device; /* where map_peers opened it */
}

/* Asking CUDA what a pointer is costs about a microsecond, more than a small put through shared memory.
 * Host pages never turn into device memory (CUDA keeps device allocations in its own reserved address
 * range), so pages found to be host memory are remembered per thread; device pointers are always asked. */
#define KYI_HOST_PAGES 64
static __thread uintptr_t host_page[KYI_HOST_PAGES];

int kyi_ptr_dev(const void *p)
{
    if (kyi_gpu_count() <= 0) return -1;
    uintptr_t page = ((uintptr_t)p >> 12) + 1; /* +1: 0 marks an empty slot */
    unsigned slot = (unsigned)(page % KYI_HOST_PAGES);
    if (host_page[slot] == page) return -1;
    int dev = kyi_gpu_ptr_device(p);
    if (dev < 0) host_page[slot] = page;
    return dev;
}
