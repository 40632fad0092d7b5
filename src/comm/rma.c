/* Contiguous remote memory access: put, get, memset, single values. Each call checks its arguments at the
 * initiator against the target's registered size (the target checks again on the MPI path), then moves
 * the bytes directly when the target's piece is mapped here, or through its transport (transport.h). */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "comm/transport.h"
#include "runtime/trace.h"

static int direct_copy(kyi_handle_t *h, void *dst, int dst_dev, const void *src, int src_dev, size_t n)
{
    if (dst_dev < 0 && src_dev < 0) {
        memcpy(dst, src, n);
        atomic_thread_fence(memory_order_seq_cst); /* visible to the target before later flag writes */
        return KY_OK;
    }
    int dev = kyi_copy_device(dst_dev, src_dev);
    int st = kyi_gpu_copy_async(dev, dst, src, n, &h->gop);
    if (st) return kyi_fail(st, h->call, "GPU copy of %zu bytes failed: %s", n, kyi_gpu_last_error());
    return KY_OK;
}

/* put (is_put) or get of n bytes between the local buffer `buf` and (rank, s, off): checks, then a direct
 * copy when the target's piece is mapped here (no handle when blocking), else the transport. */
static int rma_start(const char *call, int is_put, void *buf, int rank, ky_seg_t s, size_t off, size_t n,
                     ky_handle_t *out)
{
    KYI_CHECK(kyi_check_range(call, rank, s, off, n));
    if (!buf && n) return kyi_fail(KY_ERR_ARG, call, "%s is NULL", is_put ? "src" : "dst");
    if (n == 0) return out ? (*out = NULL, KY_OK) : KY_OK;
    int ldev = kyi_ptr_dev(buf), rdev = kyi_mapped_dev(s, rank);
    ky_path_t path = kyi_path(rank, s);
    int direct = kyi_path_direct(path);
    char *remote = direct ? (char *)s->mapped[rank] + off : NULL;
    /* blocking host bytes: a host piece the transport maps here (UCX's shared memory) serves as well */
    if (!direct && !out && ldev < 0) {
        const kyi_transport_t *tp = kyi_tp_for(s);
        char *m = tp->mapped ? tp->mapped(s, rank) : NULL;
        if (m) remote = m + off; /* (rdev is -1: a host piece) */
    }
    if (remote && !out) { /* blocking, and the piece mapped here: no handle needed */
        kyi_count(path, n);
        return kyi_mapped_copy(call, is_put, buf, ldev, remote, rdev, n);
    }
    /* a blocking transfer's handle lives on this stack until it completes: no allocation per call */
    kyi_handle_t local, *h = out ? kyi_handle_new(call, rank) : kyi_handle_init(&local, call, rank);
    if (!h) return KY_ERR_NOMEM;
    int st;
    if (direct) {
        kyi_count(path, n);
        st = is_put ? direct_copy(h, remote, rdev, buf, ldev, n) : direct_copy(h, buf, ldev, remote, rdev, n);
    } else {
        kyi_hdr_t hdr = {0};
        hdr.op = is_put ? KYI_OP_PUT : KYI_OP_GET;
        hdr.seg = s->id;
        hdr.off = off;
        hdr.n = n;
        const kyi_transport_t *tp = kyi_tp_for(s);
        st = is_put ? tp->put(h, s, &hdr, buf, ldev) : tp->get(h, s, &hdr, buf, ldev);
    }
    return out ? kyi_handle_launch(h, st, out) : kyi_handle_wait_local(h, st);
}

/* KY_TRACE spans: a blocking call's lasts until its data has landed, a non-blocking call's until it is issued
 */
static int put_start(const char *call, int rank, ky_seg_t s, size_t off, const void *src, size_t n,
                     ky_handle_t *out)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = rma_start(call, 1, (void *)src, rank, s, off, n, out);
    KYI_TRACE_SPAN("comm", call, t0, (int64_t)n, rank);
    return st;
}

static int get_start(const char *call, void *dst, int rank, ky_seg_t s, size_t off, size_t n,
                     ky_handle_t *out)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = rma_start(call, 0, dst, rank, s, off, n, out);
    KYI_TRACE_SPAN("comm", call, t0, (int64_t)n, rank);
    return st;
}

int ky_put(int rank, ky_seg_t seg, size_t off, const void *src, size_t n)
{
    return put_start("ky_put", rank, seg, off, src, n, NULL);
}

int ky_get(void *dst, int rank, ky_seg_t seg, size_t off, size_t n)
{
    return get_start("ky_get", dst, rank, seg, off, n, NULL);
}

int ky_put_nb(int rank, ky_seg_t seg, size_t off, const void *src, size_t n, ky_handle_t *h)
{
    if (!h) return kyi_fail(KY_ERR_ARG, "ky_put_nb", "handle pointer is NULL");
    *h = NULL;
    return put_start("ky_put_nb", rank, seg, off, src, n, h);
}

int ky_get_nb(void *dst, int rank, ky_seg_t seg, size_t off, size_t n, ky_handle_t *h)
{
    if (!h) return kyi_fail(KY_ERR_ARG, "ky_get_nb", "handle pointer is NULL");
    *h = NULL;
    return get_start("ky_get_nb", dst, rank, seg, off, n, h);
}

static int check_val_size(const char *call, size_t n)
{
    if (n == 1 || n == 2 || n == 4 || n == 8) return KY_OK;
    return kyi_fail(KY_ERR_ARG, call, "value size %zu is not 1, 2, 4 or 8", n);
}

int ky_put_val(int rank, ky_seg_t seg, size_t off, uint64_t value, size_t n)
{
    KYI_CHECK(check_val_size("ky_put_val", n));
    /* The low n bytes of value, in memory order of this (little-endian) machine. */
    return put_start("ky_put_val", rank, seg, off, &value, n, NULL);
}

int ky_get_val(int rank, ky_seg_t seg, size_t off, size_t n, uint64_t *value)
{
    KYI_CHECK(check_val_size("ky_get_val", n));
    if (!value) return kyi_fail(KY_ERR_ARG, "ky_get_val", "value is NULL");
    uint64_t v = 0;
    KYI_CHECK(get_start("ky_get_val", &v, rank, seg, off, n, NULL));
    *value = v;
    return KY_OK;
}

int ky_memset(int rank, ky_seg_t s, size_t off, int byte, size_t n)
{
    static const char *call = "ky_memset";
    KYI_CHECK(kyi_check_range(call, rank, s, off, n));
    if (n == 0) return KY_OK;
    ky_path_t path = kyi_path(rank, s);
    kyi_handle_t *h = kyi_handle_new(call, rank);
    if (!h) return KY_ERR_NOMEM;
    int st = KY_OK;
    if (kyi_path_direct(path)) {
        kyi_count(path, n);
        void *dst = (char *)s->mapped[rank] + off;
        if (s->memkind == KY_MEM_GPU) {
            st = kyi_gpu_memset_async(kyi_mapped_dev(s, rank), dst, byte, n, &h->gop);
            if (st) st = kyi_fail(st, call, "GPU memset failed: %s", kyi_gpu_last_error());
        } else {
            memset(dst, byte, n);
            atomic_thread_fence(memory_order_seq_cst);
        }
    } else {
        kyi_hdr_t hdr = {0};
        hdr.op = KYI_OP_MEMSET;
        hdr.seg = s->id;
        hdr.off = off;
        hdr.n = n;
        hdr.aux = (uint64_t)(unsigned char)byte;
        st = kyi_tp_for(s)->memset(h, s, &hdr);
    }
    return kyi_handle_launch(h, st, NULL);
}
