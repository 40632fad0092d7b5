/* Segments: collective registration of host or GPU memory, and the mappings that let same-node ranks
 * reach each other's pieces directly (POSIX shared memory for host pieces Kyoyu allocated, CUDA IPC for
 * GPU pieces). A piece nobody can map is still reachable through its transport (transport.h), which may
 * allocate a host piece itself where no same-node rank maps it (KY_SEG_ALLOC). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "comm/comm.h"
#include "comm/transport.h"
#include "comm/dev_proxy.h"

typedef struct {
    uint64_t bytes;
    int32_t memkind, device, shareable;
    int32_t gpu_key; /* GPU pieces: the device's PCI address (gpu_key), -1 unknown */
} seg_info_t;

/* The PCI address domain:bus:device.function of a GPU in 31 bits, -1 where it cannot be read: which pieces
 * live on the same physical GPU, whatever device numbers the ranks' CUDA_VISIBLE_DEVICES give it (the device
 * view's same_gpu, device.cuh). */
static int32_t gpu_key(int dev)
{
    char id[64];
    unsigned d, b, sl, f;
    if (kyi_gpu_pci_id(dev, id, sizeof id) != KY_OK || sscanf(id, "%x:%x:%x.%x", &d, &b, &sl, &f) != 4)
        return -1;
    return (int32_t)((d & 0x7fffu) << 16 | (b & 0xffu) << 8 | (sl & 0x1fu) << 3 | (f & 7u));
}

static unsigned jobkey; /* rank 0's, so names differ between jobs sharing a host */

void kyi_seg_init(void)
{
    unsigned k = (unsigned)getpid() ^ (unsigned)kyi_now_ns();
    kyi_rt_bcast(&k, sizeof k, 0);
    jobkey = k | 1;
}

static void shm_name(char *buf, size_t len, uint32_t id, int rank)
{
    snprintf(buf, len, "/kyoyu-%08x-%u-%d", jobkey, id, rank);
}

struct kyi_seg *kyi_seg_lookup(uint32_t id)
{
    if (id >= KYI_MAX_SEGS) return NULL;
    pthread_rwlock_rdlock(&kyi_comm.seg_lock);
    struct kyi_seg *s = kyi_comm.segs[id];
    pthread_rwlock_unlock(&kyi_comm.seg_lock);
    return s;
}

static int alloc_piece(const char *call, struct kyi_seg *s, void *base, size_t bytes)
{
    s->shm_fd = -1;
    /* a peer's device-API signal is applied here by a kernel launched while ours may spin: load it now */
    if (s->memkind == KY_MEM_GPU && kyi_gpu_atomic_prepare(s->device))
        return kyi_fail(KY_ERR_CUDA, call, "cannot load the signal kernel on GPU %d: %s", s->device,
                        kyi_gpu_last_error());
    if (base) {
        s->base = base;
        return KY_OK;
    }
    s->owned = 1;
    if (s->memkind == KY_MEM_GPU) {
        int st = kyi_gpu_malloc(s->device, bytes ? bytes : 1, &s->base);
        if (st)
            return kyi_fail(st, call, "cannot allocate %zu bytes on GPU %d: %s", bytes, s->device,
                            kyi_gpu_last_error());
        return KY_OK;
    }
    /* A host piece no same-node rank maps (every rank its own node, or KY_PATH_HOST=mpi) is reached only
     * through the transport: let it allocate the memory, so that a peer process of the same host gets UCX's
     * shared-memory path (a store per put) instead of one system call per put into memory UCX only
     * registered. Where it cannot, the piece is Kyoyu's own shared memory as below. */
    if (bytes && kyi_tp_extra && kyi_tp_extra->seg_alloc && kyi_comm.seg_alloc_tp &&
        (kyi_rt.local_nranks == 1 || kyi_comm.force_host_mpi) && kyi_tp_extra->seg_alloc(s) == KY_OK)
        return KY_OK;
    char name[64];
    shm_name(name, sizeof name, s->id, kyi_rt.rank);
    size_t len = bytes ? bytes : 1;
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) return kyi_fail(KY_ERR_SYSTEM, call, "shm_open(%s) failed: %m", name);
    if (ftruncate(fd, (off_t)len)) {
        close(fd);
        shm_unlink(name);
        return kyi_fail(KY_ERR_NOMEM, call,
                        "cannot size shared memory %s to %zu bytes: %m (is /dev/shm large enough?)", name,
                        len);
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        shm_unlink(name);
        return kyi_fail(KY_ERR_NOMEM, call, "mmap of %zu bytes of shared memory failed: %m", len);
    }
    s->base = p;
    s->shm_fd = fd;
    return KY_OK;
}

static void free_piece(struct kyi_seg *s)
{
    if (!s->owned || !s->base) return;
    if (s->memkind == KY_MEM_GPU)
        kyi_gpu_free(s->base);
    else if (s->xmem)
        kyi_tp_extra->seg_free(s); /* the transport outlives every segment (kyi_comm_finalize) */
    else {
        munmap(s->base, s->bytes ? s->bytes : 1);
        if (s->shm_fd >= 0) close(s->shm_fd);
    }
}

/* Map every same-node peer's piece that can be mapped (node_comm is the logical node). */
static int map_peers(const char *call, struct kyi_seg *s, const seg_info_t *info)
{
    int nl = kyi_rt.local_nranks;
    int *world_of = malloc(sizeof(int) * nl);
    kyi_gpu_ipc_t *ipc = NULL;
    if (!world_of) return kyi_fail(KY_ERR_NOMEM, call, "no memory");
    int st = kyi_rt_node_allgather(&kyi_rt.rank, sizeof(int), world_of);
    if (st) {
        free(world_of);
        return st;
    }
    if (s->memkind == KY_MEM_GPU) {
        ipc = calloc(nl, sizeof *ipc);
        if (!ipc) {
            free(world_of);
            return kyi_fail(KY_ERR_NOMEM, call, "no memory");
        }
        kyi_gpu_ipc_t mine;
        memset(&mine, 0, sizeof mine);
        int ok = info[kyi_rt.rank].shareable && kyi_gpu_ipc_export(s->base, &mine) == KY_OK;
        if (!ok) memset(&mine, 0, sizeof mine);
        st = kyi_rt_node_allgather(&mine, sizeof mine, ipc);
        int mydev = kyi_my_device();
        if (mydev < 0) mydev = s->device;
        for (int l = 0; l < nl && !st; l++) {
            int r = world_of[l];
            if (r == kyi_rt.rank || !info[r].shareable) continue;
            if (!kyi_gpu_can_access_peer(mydev, info[r].device)) continue;
            void *p = NULL;
            if (kyi_gpu_ipc_open(&ipc[l], mydev, &p) == KY_OK)
                s->mapped[r] = p;
            else
                KYI_INFO(KYI_SUB_COMM, "segment %u: cannot open rank %d's GPU piece by IPC (%s); using MPI",
                         s->id, r, kyi_gpu_last_error());
        }
    } else {
        for (int l = 0; l < nl; l++) {
            int r = world_of[l];
            if (r == kyi_rt.rank || !info[r].shareable || info[r].bytes == 0) continue;
            char name[64];
            shm_name(name, sizeof name, s->id, r);
            int fd = shm_open(name, O_RDWR, 0600);
            if (fd < 0) {
                KYI_INFO(KYI_SUB_COMM, "segment %u: shm_open(%s): %m; using MPI", s->id, name);
                continue;
            }
            void *p = mmap(NULL, info[r].bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
            if (p != MAP_FAILED) s->mapped[r] = p;
        }
        st = kyi_rt_node_barrier(); /* every peer has mapped: the name can go */
        if (s->owned && s->shm_fd >= 0) {
            char name[64];
            shm_name(name, sizeof name, s->id, kyi_rt.rank);
            shm_unlink(name);
        }
    }
    free(ipc);
    free(world_of);
    return st;
}

static void unmap_peers(struct kyi_seg *s)
{
    for (int r = 0; r < kyi_rt.nranks; r++) {
        if (r == kyi_rt.rank || !s->mapped[r]) continue;
        if (s->memkind == KY_MEM_GPU)
            kyi_gpu_ipc_close(s->mapped[r]);
        else
            munmap(s->mapped[r], s->size_of[r]);
        s->mapped[r] = NULL;
    }
}

static void seg_free(struct kyi_seg *s)
{
    free(s->size_of);
    free(s->dev_of);
    free(s->gpu_key_of);
    free(s->mapped);
    pthread_mutex_destroy(&s->plan_lock);
    free(s);
}

void kyi_plans_free(struct kyi_seg *s);

int ky_seg_create(void *base, size_t bytes, ky_memkind_t memkind, int device, ky_seg_t *out)
{
    static const char *call = "ky_seg_create";
    KYI_CHECK(kyi_require_init(call));
    /* Argument errors are agreed on collectively so that no rank is left alone in the collective. */
    int bad = 0;
    if (!out)
        bad = kyi_fail(KY_ERR_ARG, call, "out is NULL");
    else if (memkind != KY_MEM_HOST && memkind != KY_MEM_GPU)
        bad = kyi_fail(KY_ERR_ARG, call, "memkind %d is neither KY_MEM_HOST nor KY_MEM_GPU", memkind);
    else if (KYI_SIZE_LOOKS_NEGATIVE(bytes))
        bad = kyi_fail(KY_ERR_ARG, call, "size %zu looks negative", bytes);
    else if (memkind == KY_MEM_GPU && kyi_gpu_count() <= 0)
        bad = kyi_fail(KY_ERR_UNSUPPORTED, call, "GPU segment requested but %s",
                       kyi_gpu_built() ? "no GPU is visible" : "Kyoyu was built without CUDA");
    else if (memkind == KY_MEM_GPU) {
        if (device < 0) device = kyi_my_device() >= 0 ? kyi_my_device() : 0;
        if (device >= kyi_gpu_count())
            bad =
                kyi_fail(KY_ERR_ARG, call, "device %d does not exist (%d visible)", device, kyi_gpu_count());
        else if (base && kyi_gpu_ptr_device(base) != device)
            bad = kyi_fail(KY_ERR_ARG, call, "base %p is not memory of GPU %d", base, device);
    }
    int64_t worst = bad; /* statuses are negative: the minimum is an error if any rank has one */
    int ast = kyi_rt_allreduce_i64(&worst, 1, KYI_RT_MIN);
    if (bad) return bad;
    if (ast) return ast;
    if (worst) return kyi_fail((int)worst, call, "another rank passed bad arguments");

    seg_info_t mine = {bytes, memkind, device, 0, memkind == KY_MEM_GPU ? gpu_key(device) : -1};
    seg_info_t *info = malloc(sizeof *info * kyi_rt.nranks);
    struct kyi_seg *s = calloc(1, sizeof *s);
    if (!info || !s) {
        free(info);
        free(s);
        return kyi_fail(KY_ERR_NOMEM, call, "no memory");
    }
    s->size_of = calloc(kyi_rt.nranks, sizeof(size_t));
    s->dev_of = calloc(kyi_rt.nranks, sizeof(int));
    s->gpu_key_of = calloc(kyi_rt.nranks, sizeof(int32_t));
    s->mapped = calloc(kyi_rt.nranks, sizeof(void *));
    pthread_mutex_init(&s->plan_lock, NULL);
    s->memkind = memkind;
    s->device = memkind == KY_MEM_GPU ? device : -1;
    s->bytes = bytes;
    pthread_rwlock_wrlock(&kyi_comm.seg_lock);
    s->id = kyi_comm.seg_next++;
    pthread_rwlock_unlock(&kyi_comm.seg_lock);
    int st = (!s->size_of || !s->dev_of || !s->gpu_key_of || !s->mapped)
                 ? kyi_fail(KY_ERR_NOMEM, call, "no memory")
                 : KY_OK;
    if (!st && s->id >= KYI_MAX_SEGS)
        st = kyi_fail(KY_ERR_NOMEM, call, "more than %d segments were created", KYI_MAX_SEGS);
    if (!st) st = alloc_piece(call, s, base, bytes);
    /* Host pieces are shareable when Kyoyu put them in shared memory; GPU pieces when they are cudaMalloc'ed.
     */
    mine.shareable = !st && (memkind == KY_MEM_GPU ? !kyi_comm.force_gpu_mpi
                                                   : (s->shm_fd >= 0 && !kyi_comm.force_host_mpi));
    int64_t fail64 = st;
    int ast2 = kyi_rt_allreduce_i64(&fail64, 1, KYI_RT_MIN);
    int fail = ast2 ? ast2 : (int)fail64;
    if (fail) {
        free_piece(s);
        seg_free(s);
        free(info);
        if (st) return st;
        return kyi_fail(fail, call, "another rank could not create its piece");
    }
    st = kyi_rt_allgather(&mine, sizeof mine, info);
    if (st) {
        free_piece(s);
        seg_free(s);
        free(info);
        return st;
    }
    for (int r = 0; r < kyi_rt.nranks; r++) {
        s->size_of[r] = info[r].bytes;
        s->dev_of[r] = info[r].device;
        s->gpu_key_of[r] = info[r].gpu_key;
        if (info[r].memkind != (int32_t)memkind) st = KY_ERR_ARG;
    }
    if (st) {
        free_piece(s);
        seg_free(s);
        free(info);
        return kyi_fail(KY_ERR_ARG, call, "ranks passed different memkinds");
    }
    s->mapped[kyi_rt.rank] = s->base;
    st = map_peers(call, s, info);
    free(info);
    /* The pieces also go to the extra transport (collective; it leaves s on the MPI path if any rank
     * cannot register its piece, e.g. GPU memory with a UCX built without CUDA). */
    if (kyi_tp_extra) {
        int xst = kyi_tp_extra->seg_attach(s);
        if (!st) st = xst;
    }
    pthread_rwlock_wrlock(&kyi_comm.seg_lock);
    kyi_comm.segs[s->id] = s;
    pthread_rwlock_unlock(&kyi_comm.seg_lock);
    /* Kernels' signals through the device proxy arrive as active messages (dev_proxy.c). */
    if (memkind == KY_MEM_GPU && !st) st = kyi_dev_proxy_register();
    /* Nobody may send requests for this segment before every rank has registered it. */
    int bst = kyi_rt_barrier();
    if (!st) st = bst;
    KYI_INFO(KYI_SUB_COMM, "segment %u: %zu bytes of %s memory at %p%s", s->id, bytes,
             memkind == KY_MEM_GPU ? "GPU" : "host", s->base, s->xmem ? " (allocated by the transport)" : "");
    *out = s;
    return st;
}

static int seg_destroy(struct kyi_seg *s)
{
    kyi_dev_proxy_stop(s); /* its requests are remote accesses this rank still owes */
    KYI_CHECK(ky_quiet());
    KYI_CHECK(kyi_rt_barrier()); /* nobody accesses the segment any more */
    pthread_rwlock_wrlock(&kyi_comm.seg_lock);
    kyi_comm.segs[s->id] = NULL;
    pthread_rwlock_unlock(&kyi_comm.seg_lock);
    unmap_peers(s);
    if (s->xseg) kyi_tp_extra->seg_detach(s);
    kyi_rt_barrier(); /* every importer has closed its mapping before the owner frees */
    kyi_plans_free(s);
    free_piece(s);
    seg_free(s);
    return KY_OK;
}

int ky_seg_destroy(ky_seg_t seg)
{
    KYI_CHECK(kyi_require_init("ky_seg_destroy"));
    if (!seg || kyi_seg_lookup(seg->id) != seg)
        return kyi_fail(KY_ERR_ARG, "ky_seg_destroy", "not a live segment");
    return seg_destroy(seg);
}

int kyi_seg_destroy_all(void)
{
    for (uint32_t id = 0; id < kyi_comm.seg_next && id < KYI_MAX_SEGS; id++) {
        struct kyi_seg *s = kyi_seg_lookup(id);
        if (s) seg_destroy(s);
    }
    return KY_OK;
}

int ky_seg_local(ky_seg_t seg, void **base, size_t *bytes)
{
    KYI_CHECK(kyi_require_init("ky_seg_local"));
    if (!seg || kyi_seg_lookup(seg->id) != seg)
        return kyi_fail(KY_ERR_ARG, "ky_seg_local", "not a live segment");
    if (base) *base = seg->base;
    if (bytes) *bytes = seg->bytes;
    return KY_OK;
}

int ky_seg_size(ky_seg_t seg, int rank, size_t *bytes)
{
    KYI_CHECK(kyi_check_target("ky_seg_size", rank, seg));
    if (!bytes) return kyi_fail(KY_ERR_ARG, "ky_seg_size", "bytes is NULL");
    *bytes = seg->size_of[rank];
    return KY_OK;
}

int kyi_check_target(const char *call, int rank, ky_seg_t seg)
{
    KYI_CHECK(kyi_require_init(call));
    if (rank < 0 || rank >= kyi_rt.nranks)
        return kyi_fail(KY_ERR_ARG, call, "rank %d is not in 0..%d", rank, kyi_rt.nranks - 1);
    if (!seg || kyi_seg_lookup(seg->id) != seg) return kyi_fail(KY_ERR_ARG, call, "not a live segment");
    return KY_OK;
}

int kyi_check_range(const char *call, int rank, ky_seg_t seg, size_t off, size_t n)
{
    KYI_CHECK(kyi_check_target(call, rank, seg));
    if (KYI_SIZE_LOOKS_NEGATIVE(n)) return kyi_fail(KY_ERR_ARG, call, "size %zu looks negative", n);
    size_t size = seg->size_of[rank];
    if (off > size || n > size - off)
        return kyi_fail(KY_ERR_RANGE, call,
                        "offset %zu + %zu bytes outside segment %u of rank %d (%zu bytes)", off, n, seg->id,
                        rank, size);
    return KY_OK;
}
