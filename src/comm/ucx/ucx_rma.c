/* One-sided transfers over UCX: a segment's host pieces are allocated by UCX (below) or registered with
 * ucp_mem_map at creation, and every rank unpacks every other rank's rkey; puts and gets are ucp_put_nbx /
 * ucp_get_nbx followed by an endpoint flush, whose completion is the handle's (a blocking ky_put returns
 * once the bytes are in the target's memory, as on the MPI path). Strided transfers move one contiguous
 * block per call from or into the packed buffer strided.c provides. The target's CPU takes no part; the
 * rkey bounds what a peer can touch to the registered piece, and the initiator checked the range. GPU
 * memory, of a segment or of the caller's buffer, goes to UCX as it is where UCX moves CUDA memory
 * (kyi_ucx.cuda: its cuda_copy, cuda_ipc and GPUDirect RDMA transports); otherwise GPU segments stay on the
 * MPI path and GPU buffers pass through a host copy. */
#include <stdlib.h>
#include <string.h>

#include "comm/pack.h"
#include "comm/ucx/ucx.h"

/* Host pieces allocated by UCX (ucp_mem_map with UCP_MEM_MAP_ALLOCATE; seg.c asks where no same-node rank
 * maps the piece): UCX takes them from its sysv or posix memory domain first, shared memory whose rkey a
 * peer process of the same host unpacks as a mapping, so its put is a store (ucx_perftest's buffers are
 * these); memory UCX only registered is reached there through cma, a system call per put. Across hosts the
 * same memory is registered for RDMA like any other. The piece is kept only where UCX did give shared
 * memory, which ucp_rkey_ptr through this rank's own endpoint proves: fresh shared memory is zero-filled,
 * page-aligned and committed page by page as touched, as the POSIX shared memory seg.c allocates is
 * (UCX's other methods, THP or the heap, give neither the mapping nor zeros: seg.c allocates those pieces
 * itself). Where UCX has xpmem, which maps registered memory too and could prove a heap allocation
 * shareable, UCX allocates nothing. Lock held by the callers below. */
static int shared_memory(ucp_mem_h memh, void *addr)
{
    void *packed = NULL, *p = NULL;
    size_t plen = 0;
    ucp_rkey_h rkey = NULL;
    int ok = ucp_rkey_pack(kyi_ucx.ctx, memh, &packed, &plen) == UCS_OK &&
             ucp_ep_rkey_unpack(kyi_ucx.ep[kyi_rt.rank], packed, &rkey) == UCS_OK &&
             ucp_rkey_ptr(rkey, (uint64_t)(uintptr_t)addr, &p) == UCS_OK;
    if (rkey) ucp_rkey_destroy(rkey);
    if (packed) ucp_rkey_buffer_release(packed);
    return ok;
}

int kyi_ucx_seg_alloc(struct kyi_seg *s)
{
    if (kyi_ucx.xpmem) return KY_ERR_UNSUPPORTED;
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                             UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                               .address = NULL,
                               .length = s->bytes,
                               .flags = UCP_MEM_MAP_ALLOCATE};
    ucp_mem_h memh = NULL;
    ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH};
    pthread_mutex_lock(&kyi_ucx.lock);
    ucs_status_t us = ucp_mem_map(kyi_ucx.ctx, &mp, &memh);
    if (us == UCS_OK) us = ucp_mem_query(memh, &attr);
    int ok = us == UCS_OK && attr.length >= s->bytes && shared_memory(memh, attr.address);
    if (!ok && memh) ucp_mem_unmap(kyi_ucx.ctx, memh);
    pthread_mutex_unlock(&kyi_ucx.lock);
    if (!ok) {
        KYI_INFO(KYI_SUB_COMM, "segment %u: UCX gave no shared memory for %zu bytes (%s): Kyoyu's own", s->id,
                 s->bytes, us == UCS_OK ? "another method" : ucs_status_string(us));
        return KY_ERR_UNSUPPORTED;
    }
    s->base = attr.address;
    s->xmem = memh;
    return KY_OK;
}

void kyi_ucx_seg_free(struct kyi_seg *s)
{
    pthread_mutex_lock(&kyi_ucx.lock);
    ucp_mem_unmap(kyi_ucx.ctx, s->xmem);
    pthread_mutex_unlock(&kyi_ucx.lock);
    s->xmem = NULL;
    s->base = NULL;
}

struct map_args {
    struct kyi_seg *s;
    kyi_ucx_seg_t *x;
    ucs_status_t us;
};

static int map_piece(void *arg)
{
    struct map_args *m = arg;
    int gpu = m->s->memkind == KY_MEM_GPU;
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                             UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                                             UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE,
                               .address = m->s->base,
                               .length = m->s->bytes,
                               .memory_type = gpu ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST};
    m->us = ucp_mem_map(kyi_ucx.ctx, &mp, &m->x->memh);
    return KY_OK;
}

int kyi_ucx_seg_attach(struct kyi_seg *s)
{
    static const char *call = "ky_seg_create";
    int n = kyi_rt.nranks, st = KY_OK;
    kyi_ucx_seg_t *x = calloc(1, sizeof *x);
    void *packed = NULL;
    size_t plen = 0;
    if (x) {
        x->addr = calloc(n, sizeof *x->addr);
        x->rkey = calloc(n, sizeof *x->rkey);
        x->ptr = calloc(n, sizeof *x->ptr);
    }
    if (!x || !x->addr || !x->rkey || !x->ptr)
        st = kyi_fail(KY_ERR_NOMEM, call, "rank %d: no memory", kyi_rt.rank);
    int gpu = s->memkind == KY_MEM_GPU;
    /* not an error: the segment keeps the MPI path's staging, as every GPU segment did before */
    int cannot = gpu && !kyi_ucx.cuda;
    pthread_mutex_lock(&kyi_ucx.lock);
    if (!st && !cannot && s->bytes) {
        struct map_args m = {s, x, UCS_OK};
        /* UCX registers CUDA memory in the current context: the piece's device */
        if (s->xmem)
            x->memh = s->xmem; /* allocated by UCX, registered with it */
        else if (gpu ? kyi_gpu_on_device(s->device, map_piece, &m) : map_piece(&m))
            m.us = UCS_ERR_NO_DEVICE;
        ucs_status_t us = m.us;
        if (us == UCS_OK) us = ucp_rkey_pack(kyi_ucx.ctx, x->memh, &packed, &plen);
        if (us != UCS_OK)
            st = kyi_fail(KY_ERR_SYSTEM, call,
                          "rank %d: registering %zu bytes of segment %u with UCX failed: %s", kyi_rt.rank,
                          s->bytes, s->id, ucs_status_string(us));
    }
    pthread_mutex_unlock(&kyi_ucx.lock);
    /* every rank's address and rkey, in slots as large as the largest rkey */
    int64_t agree[3] = {st, -(int64_t)plen, -(int64_t)cannot};
    kyi_rt_allreduce_i64(agree, 3, KYI_RT_MIN);
    if (!agree[0] && agree[2]) { /* some rank's UCX cannot take GPU memory: nobody uses UCX for s */
        if (packed) ucp_rkey_buffer_release(packed);
        s->xseg = x;
        kyi_ucx_seg_detach(s);
        if (kyi_rt.rank == 0)
            KYI_INFO(KYI_SUB_COMM, "segment %u: GPU memory, which this UCX does not move: the MPI path",
                     s->id);
        return KY_OK;
    }
    size_t slot = 2 * sizeof(uint64_t) + (size_t)(-agree[1]);
    char *mine = agree[0] ? NULL : calloc(1, slot), *all = agree[0] ? NULL : calloc(n, slot);
    int64_t ok = mine && all ? KY_OK : KY_ERR_NOMEM;
    kyi_rt_allreduce_i64(&ok, 1, KYI_RT_MIN);
    if (!agree[0] && !ok) {
        uint64_t head[2] = {(uint64_t)(uintptr_t)s->base, plen};
        memcpy(mine, head, sizeof head);
        if (plen) memcpy(mine + sizeof head, packed, plen);
        st = kyi_rt_allgather(mine, slot, all);
    }
    pthread_mutex_lock(&kyi_ucx.lock);
    for (int r = 0; r < n && !st && !agree[0] && !ok; r++) {
        const uint64_t *head = (const uint64_t *)(all + (size_t)r * slot);
        x->addr[r] = head[0];
        if (!head[1]) continue;
        ucs_status_t us = ucp_ep_rkey_unpack(kyi_ucx.ep[r], head + 2, &x->rkey[r]);
        if (us != UCS_OK)
            st = kyi_fail(KY_ERR_SYSTEM, call, "rank %d: unpacking rank %d's rkey of segment %u failed: %s",
                          kyi_rt.rank, r, s->id, ucs_status_string(us));
        else if (r != kyi_rt.rank && !gpu && ucp_rkey_ptr(x->rkey[r], x->addr[r], &x->ptr[r]) != UCS_OK)
            x->ptr[r] = NULL; /* not shared memory: UCX's RMA */
    }
    if (packed) ucp_rkey_buffer_release(packed);
    pthread_mutex_unlock(&kyi_ucx.lock);
    free(mine);
    free(all);
    s->xseg = x;
    if (agree[0] || ok || st) {
        /* Not registered everywhere: the segment stays on the MPI path (said once, by rank 0). */
        kyi_ucx_seg_detach(s);
        if (kyi_rt.rank == 0)
            KYI_WARN(KYI_SUB_COMM, "segment %u: UCX could not register every piece; it uses the MPI path",
                     s->id);
        return agree[0] || ok ? KY_OK : st;
    }
    if (kyi_log_enabled(KYI_LOG_INFO, KYI_SUB_COMM)) {
        int mapped = 0;
        for (int r = 0; r < n; r++) mapped += x->ptr[r] != NULL;
        KYI_INFO(
            KYI_SUB_COMM,
            "segment %u: %d of %d other ranks' pieces mapped through UCX's shared memory (CPU copies, no "
            "UCX request); the rest by ucp_put_nbx / ucp_get_nbx",
            s->id, mapped, n - 1);
    }
    return KY_OK;
}

void kyi_ucx_seg_detach(struct kyi_seg *s)
{
    kyi_ucx_seg_t *x = s->xseg;
    s->xseg = NULL;
    if (!x) return;
    pthread_mutex_lock(&kyi_ucx.lock);
    for (int r = 0; x->rkey && r < kyi_rt.nranks; r++)
        if (x->rkey[r]) ucp_rkey_destroy(x->rkey[r]);
    if (x->memh && x->memh != s->xmem) ucp_mem_unmap(kyi_ucx.ctx, x->memh); /* UCX's own: freed with s */
    pthread_mutex_unlock(&kyi_ucx.lock);
    free(x->rkey);
    free(x->addr);
    free(x->ptr);
    free(x);
}

/* Completion. UCX says an RMA is in the target's memory only through a flush of its endpoint, which
 * completes every operation issued to it before; one flush per operation cost a request and a round of
 * progress each (a stream of 64 KiB puts ran at 0.6-0.7x ucx_perftest's bandwidth). So an operation only
 * takes a number here, and the first test of a handle not yet covered starts one flush for everything issued
 * to that peer so far; the handles behind it complete together when it does. Lock held. */
uint64_t kyi_ucx_rma_issued(int peer)
{
    return ++kyi_ucx.fl[peer].issued;
}

static int finish_issue(kyi_handle_t *h, size_t n)
{
    h->tp = &kyi_tp_ucx;
    kyi_count(KY_PATH_UCX, n);
    h->xseq = kyi_ucx_rma_issued(h->rank);
    return KY_OK;
}

int kyi_ucx_rma_done(int peer, uint64_t seq, ucs_status_t *st)
{
    kyi_ucx_flush_t *f = &kyi_ucx.fl[peer];
    for (;;) {
        if (f->err != UCS_OK) {
            *st = f->err;
            return -1;
        }
        if (f->flushed >= seq) return 1;
        if (f->req) { /* one in flight: progress it; once done, what it covers is complete */
            kyi_ucx_progress_worker();
            ucs_status_t fs = ucp_request_check_status(f->req);
            if (fs == UCS_INPROGRESS) return 0;
            ucp_request_free(f->req);
            f->req = NULL;
            if (fs != UCS_OK)
                f->err = fs;
            else
                f->flushed = f->cover;
            continue; /* covered now, failed, or issued after it: look again */
        }
        ucp_request_param_t prm = {.op_attr_mask = 0};
        ucs_status_ptr_t p = ucp_ep_flush_nbx(kyi_ucx.ep[peer], &prm);
        if (UCS_PTR_IS_ERR(p))
            f->err = UCS_PTR_STATUS(p);
        else if (!p)
            f->flushed = f->issued; /* completed in the call */
        else {
            f->req = p;
            f->cover = f->issued;
        }
    }
}

/* Issue one put or get of n bytes at off of h->rank's piece; the request is released at once (the flush
 * that follows completes it). Lock held. */
static int rma(kyi_handle_t *h, kyi_ucx_seg_t *x, int is_put, void *buf, size_t off, size_t n)
{
    int r = h->rank;
    ucp_request_param_t prm = {.op_attr_mask = 0};
    ucs_status_ptr_t p = is_put ? ucp_put_nbx(kyi_ucx.ep[r], buf, n, x->addr[r] + off, x->rkey[r], &prm)
                                : ucp_get_nbx(kyi_ucx.ep[r], buf, n, x->addr[r] + off, x->rkey[r], &prm);
    void *req = NULL;
    KYI_CHECK(kyi_ucx_req(h->call, is_put ? "ucp_put_nbx" : "ucp_get_nbx", r, p, &req));
    if (req) ucp_request_free(req);
    return KY_OK;
}

/* rank's host piece where UCX mapped it here: contiguous's CPU copy, and rma.c's for blocking calls, which
 * it takes before any handle (kyi_transport_t.mapped) */
static char *ucx_mapped(const struct kyi_seg *s, int rank)
{
    const kyi_ucx_seg_t *x = s->xseg;
    return s->memkind == KY_MEM_HOST && x ? (char *)x->ptr[rank] : NULL;
}

/* A contiguous transfer between buf (host memory if host) and the target's piece. Where UCX mapped that
 * piece here (its shared memory, ucp_rkey_ptr) host bytes are copied with the CPU, which is what UCX's put
 * and get do on that memory, but without a request, an endpoint flush and the worker's lock: a store
 * followed by a fence is in the target's memory, so the handle is complete at once (no flush number), as
 * on the direct path (rma.c). Operations still in flight to that peer are not ordered before it, as on
 * every path: ky_fence orders. */
static int contiguous(kyi_handle_t *h, struct kyi_seg *s, int is_put, void *buf, int host, size_t off,
                      size_t n)
{
    char *m = host ? ucx_mapped(s, h->rank) : NULL;
    if (m) {
        /* host memory on both sides: the copy cannot fail */
        kyi_mapped_copy(h->call, is_put, buf, -1, m + off, -1, n);
        h->tp = &kyi_tp_ucx;
        kyi_count(KY_PATH_UCX, n);
        return KY_OK;
    }
    pthread_mutex_lock(&kyi_ucx.lock);
    int st = rma(h, s->xseg, is_put, buf, off, n);
    if (!st) st = finish_issue(h, n);
    pthread_mutex_unlock(&kyi_ucx.lock);
    return st;
}

static int ucx_put(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, const void *src, int src_dev)
{
    if (src_dev >= 0 && !kyi_ucx.cuda) { /* GPU source: through a host copy kept until completion */
        h->tmp = malloc(hdr->n);
        if (!h->tmp)
            return kyi_fail(KY_ERR_NOMEM, h->call, "no memory to stage %llu bytes",
                            (unsigned long long)hdr->n);
        KYI_CHECK(kyi_local_copy(h->call, h->tmp, -1, src, src_dev, hdr->n));
        src = h->tmp;
    }
    return contiguous(h, s, 1, (void *)src, src_dev < 0 || !kyi_ucx.cuda, hdr->off, hdr->n);
}

/* A get into GPU memory landed in h->tmp: copy it to its place. */
static int finish_gpu_get(kyi_handle_t *h)
{
    if (h->rstatus) return kyi_fail((int)h->rstatus, h->call, "get from rank %d failed", h->rank);
    return kyi_local_copy(h->call, h->finish_arg, (int)h->finish_n, h->tmp, -1, h->nbytes);
}

static int ucx_get(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, void *dst, int dst_dev)
{
    if (dst_dev >= 0 && !kyi_ucx.cuda) {
        h->tmp = malloc(hdr->n);
        if (!h->tmp)
            return kyi_fail(KY_ERR_NOMEM, h->call, "no memory to stage %llu bytes",
                            (unsigned long long)hdr->n);
        h->finish = finish_gpu_get;
        h->finish_arg = dst;
        h->finish_n = (size_t)dst_dev;
        h->nbytes = hdr->n;
        dst = h->tmp;
    }
    return contiguous(h, s, 0, dst, dst_dev < 0 || !kyi_ucx.cuda, hdr->off, hdr->n);
}

/* Every block of a strided layout (hdr: descriptor at the target), moved to or from the caller's side:
 * the packed buffer (ls NULL) or the caller's own strided buffer (ls its strides). */
static int strided(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, int is_put, char *local,
                   const size_t *ls)
{
    size_t st_[3] = {0, 0, 0}, c[4] = {1, 1, 1, 1}, l_[3] = {0, 0, 0};
    int levels = hdr->levels;
    for (int i = 0; i < levels; i++) st_[i] = hdr->args[KYI_ARG_STRIDE + i];
    for (int i = 0; i <= levels; i++) c[i] = hdr->args[KYI_ARG_COUNT + i];
    for (int i = 0; i < levels; i++) l_[i] = ls ? ls[i] : 0;
    int rc = KY_OK;
    size_t done = 0;
    pthread_mutex_lock(&kyi_ucx.lock);
    for (size_t k = 0; k < c[3] && !rc; k++)
        for (size_t j = 0; j < c[2] && !rc; j++)
            for (size_t i = 0; i < c[1] && !rc; i++) {
                size_t off = hdr->off + k * st_[2] + j * st_[1] + i * st_[0];
                char *row = ls ? local + k * l_[2] + j * l_[1] + i * l_[0] : local + done;
                rc = rma(h, s->xseg, is_put, row, off, c[0]);
                done += c[0];
            }
    if (!rc) rc = finish_issue(h, hdr->n);
    pthread_mutex_unlock(&kyi_ucx.lock);
    return rc;
}

static int ucx_put_strided(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, const void *packed)
{
    return strided(h, s, hdr, 1, (char *)packed, NULL);
}

static int ucx_get_strided(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, void *packed)
{
    return strided(h, s, hdr, 0, packed, NULL);
}

/* In place: every row straight from (to) the caller's buffer, GPU memory too where this UCX moves CUDA
 * memory (a GPU box packed on the host first cost a pageable device-to-host copy and a host-to-GPU put:
 * the 8 MiB halo of the 512^3 stencil took 5 ms a step on 4 H200s instead of NVLink's tens of us). */
static int ucx_put_rows(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, const void *src,
                        const size_t ls[], int ldev)
{
    if (ldev >= 0 && !kyi_ucx.cuda) return KY_ERR_UNSUPPORTED;
    return strided(h, s, hdr, 1, (char *)src, ls);
}

static int ucx_get_rows(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, void *dst, const size_t ls[],
                        int ldev)
{
    if (ldev >= 0 && !kyi_ucx.cuda) return KY_ERR_UNSUPPORTED;
    return strided(h, s, hdr, 0, dst, ls);
}

static int ucx_memset(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr)
{
    h->tmp = malloc(hdr->n);
    if (!h->tmp)
        return kyi_fail(KY_ERR_NOMEM, h->call, "no memory for %llu bytes", (unsigned long long)hdr->n);
    memset(h->tmp, (int)hdr->aux, hdr->n);
    return contiguous(h, s, 1, h->tmp, 1, hdr->off, hdr->n);
}

static int never_eager(size_t n)
{
    (void)n;
    return 0;
}

const kyi_transport_t kyi_tp_ucx = {
    .name = "ucx",
    .path = KY_PATH_UCX,
    .put = ucx_put,
    .get = ucx_get,
    .put_strided = ucx_put_strided,
    .get_strided = ucx_get_strided,
    .put_rows = ucx_put_rows,
    .get_rows = ucx_get_rows,
    .memset = ucx_memset,
    .mapped = ucx_mapped,
    .eager_get = never_eager,
    .am_send = kyi_ucx_am_send,
    .test = kyi_ucx_test,
    .progress = kyi_ucx_am_progress,
    .background = kyi_ucx_background,
    .seg_alloc = kyi_ucx_seg_alloc,
    .seg_free = kyi_ucx_seg_free,
    .seg_attach = kyi_ucx_seg_attach,
    .seg_detach = kyi_ucx_seg_detach,
    .fini = kyi_ucx_fini,
};
