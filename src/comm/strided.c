/* Strided (up to 3 levels: 3-D sub-blocks) and vector transfers. Direct paths copy block by block on the
 * host or with the GPU layer's strided copy (copy engines for long blocks, a kernel for short ones); the
 * transports move rows straight from and to the caller's buffer where they can (UCX: put_rows/get_rows),
 * else get the packed bytes and the descriptor: MPI ships one contiguous payload and unpacks at the target
 * (and the reverse for gets). Repeated shapes are replayed from the plan cache. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "comm/pack.h"
#include "comm/plan.h"
#include "comm/transport.h"
#include "runtime/trace.h"

static int check_shape(const char *call, const size_t ls[], const size_t rs[], const size_t count[],
                       int levels)
{
    if (levels < 0 || levels > KY_STRIDED_MAX_LEVELS)
        return kyi_fail(KY_ERR_ARG, call, "levels %d is not in 0..%d", levels, KY_STRIDED_MAX_LEVELS);
    if (!count) return kyi_fail(KY_ERR_ARG, call, "count is NULL");
    if (levels > 0 && (!ls || !rs)) return kyi_fail(KY_ERR_ARG, call, "a stride array is NULL");
    for (int i = 0; i <= levels; i++)
        if (KYI_SIZE_LOOKS_NEGATIVE(count[i]))
            return kyi_fail(KY_ERR_ARG, call, "count[%d] = %zu looks negative", i, count[i]);
    for (int i = 0; i < levels; i++)
        if (KYI_SIZE_LOOKS_NEGATIVE(ls[i]) || KYI_SIZE_LOOKS_NEGATIVE(rs[i]))
            return kyi_fail(KY_ERR_ARG, call, "stride[%d] looks negative", i);
    return KY_OK;
}

/* Look the transfer up in the plan cache, or check and route it and add it. */
static int plan(const char *call, int op, int rank, ky_seg_t s, size_t off, const void *local,
                const size_t ls[], const size_t rs[], const size_t count[], int levels, kyi_plan_info_t *info)
{
    uint64_t key[KYI_PLAN_KEY_MAX];
    int nk = 0;
    key[nk++] = (uint64_t)op | (uint64_t)levels << 8 | (uint64_t)rank << 16;
    key[nk++] = off;
    key[nk++] = (uint64_t)(uintptr_t)local;
    for (int i = 0; i <= levels; i++) key[nk++] = count[i];
    for (int i = 0; i < levels; i++) {
        key[nk++] = ls[i];
        key[nk++] = rs[i];
    }
    if (kyi_plan_find(s, key, nk, info)) return KY_OK;
    KYI_CHECK(kyi_check_range(call, rank, s, off, kyi_strided_extent(rs, count, levels)));
    info->path = kyi_path(rank, s);
    info->local_dev = kyi_ptr_dev(local);
    info->bytes = kyi_strided_bytes(count, levels);
    kyi_plan_add(s, key, nk, info);
    return KY_OK;
}

/* The transport's header of a strided transfer: op, target, packed size and the target-side descriptor. */
static void fill_desc(kyi_hdr_t *hdr, int op, const struct kyi_seg *s, size_t off, size_t n,
                      const size_t rs[], const size_t count[], int levels)
{
    *hdr = (kyi_hdr_t){0};
    hdr->op = (uint16_t)op;
    hdr->seg = s->id;
    hdr->off = off;
    hdr->n = n;
    hdr->levels = (uint16_t)levels;
    for (int i = 0; i < levels; i++) hdr->args[KYI_ARG_STRIDE + i] = rs[i];
    for (int i = 0; i <= levels; i++) hdr->args[KYI_ARG_COUNT + i] = count[i];
}

static int direct(kyi_handle_t *h, void *dst, int ddev, const size_t ds[], const void *src, int sdev,
                  const size_t ss[], const size_t count[], int levels)
{
    if (ddev < 0 && sdev < 0) {
        kyi_copy_strided_host(dst, ds, src, ss, count, levels);
        atomic_thread_fence(memory_order_seq_cst);
        return KY_OK;
    }
    int dev = kyi_copy_device(ddev, sdev);
    int st = kyi_gpu_copy_strided_async(dev, dst, ds, src, ss, count, levels, &h->gop);
    if (st) return kyi_fail(st, h->call, "strided GPU copy failed: %s", kyi_gpu_last_error());
    return KY_OK;
}

/* Checks shared by puts and gets; 1 in *empty when there is nothing to move. local/ls: the caller's side. */
static int prologue(const char *call, int op, int rank, ky_seg_t s, size_t off, const void *local,
                    const size_t ls[], const size_t rs[], const size_t count[], int levels, ky_handle_t *out,
                    kyi_plan_info_t *info, int *empty)
{
    if (out) *out = NULL;
    *empty = 0;
    KYI_CHECK(kyi_check_target(call, rank, s));
    KYI_CHECK(check_shape(call, ls, rs, count, levels));
    if (kyi_strided_bytes(count, levels) == 0) {
        *empty = 1;
        return KY_OK;
    }
    if (!local) return kyi_fail(KY_ERR_ARG, call, "%s is NULL", op == KYI_OP_PUT_STRIDED ? "src" : "dst");
    return plan(call, op, rank, s, off, local, ls, rs, count, levels, info);
}

static int put_strided(const char *call, int rank, ky_seg_t s, size_t off, const size_t ds[], const void *src,
                       const size_t ss[], const size_t count[], int levels, ky_handle_t *out)
{
    kyi_plan_info_t info;
    int empty;
    KYI_CHECK(
        prologue(call, KYI_OP_PUT_STRIDED, rank, s, off, src, ss, ds, count, levels, out, &info, &empty));
    if (empty) return KY_OK;
    kyi_handle_t *h = kyi_handle_new(call, rank);
    if (!h) return KY_ERR_NOMEM;
    int st;
    if (kyi_path_direct(info.path)) {
        kyi_count(info.path, info.bytes);
        st = direct(h, (char *)s->mapped[rank] + off, kyi_mapped_dev(s, rank), ds, src, info.local_dev, ss,
                    count, levels);
    } else {
        const kyi_transport_t *tp = kyi_tp_for(s);
        kyi_hdr_t hdr;
        fill_desc(&hdr, KYI_OP_PUT_STRIDED, s, off, info.bytes, ds, count, levels);
        st = tp->put_rows ? tp->put_rows(h, s, &hdr, src, ss, info.local_dev) : KY_ERR_UNSUPPORTED;
        if (st != KY_ERR_UNSUPPORTED) return kyi_handle_launch(h, st, out);
        char *packed = malloc(info.bytes);
        st = packed ? kyi_pack(call, packed, src, info.local_dev, ss, count, levels)
                    : kyi_fail(KY_ERR_NOMEM, call, "no memory to pack %zu bytes", info.bytes);
        if (!st) st = tp->put_strided(h, s, &hdr, packed);
        /* Kept until the transfer completes (an eager MPI request had copied it: one malloc'ed buffer
         * more or less is not worth a transport call). */
        if (!st)
            h->tmp2 = packed;
        else
            free(packed);
    }
    return kyi_handle_launch(h, st, out);
}

/* What a strided get over MPI needs after the reply arrived: where and how to unpack. */
struct gdesc {
    void *dst;
    int ddev, levels;
    size_t ds[3], count[4], n;
    int eager;
};

static int finish_get_strided(kyi_handle_t *h)
{
    /* tmp = [status][packed] for eager replies; finish_arg points at the saved descriptor. */
    struct gdesc *d = h->finish_arg;
    int st;
    const char *packed;
    if (d->eager) {
        int64_t rs = *(int64_t *)h->tmp;
        if (rs) {
            st = kyi_fail((int)rs, h->call, "rank %d refused the request", h->rank);
            goto out;
        }
        packed = (char *)h->tmp + sizeof(int64_t);
    } else {
        if (h->rstatus) {
            st = kyi_fail((int)h->rstatus, h->call, "rank %d refused the request", h->rank);
            goto out;
        }
        packed = h->tmp2;
    }
    st = kyi_unpack(h->call, d->dst, d->ddev, d->ds, packed, d->count, d->levels);
out:
    free(d);
    h->finish_arg = NULL;
    return st;
}

static int get_strided(const char *call, void *dst, const size_t ds[], int rank, ky_seg_t s, size_t off,
                       const size_t ss[], const size_t count[], int levels, ky_handle_t *out)
{
    kyi_plan_info_t info;
    int empty;
    KYI_CHECK(
        prologue(call, KYI_OP_GET_STRIDED, rank, s, off, dst, ds, ss, count, levels, out, &info, &empty));
    if (empty) return KY_OK;
    kyi_handle_t *h = kyi_handle_new(call, rank);
    if (!h) return KY_ERR_NOMEM;
    int st;
    if (kyi_path_direct(info.path)) {
        kyi_count(info.path, info.bytes);
        st = direct(h, dst, info.local_dev, ds, (char *)s->mapped[rank] + off, kyi_mapped_dev(s, rank), ss,
                    count, levels);
        return kyi_handle_launch(h, st, out);
    }
    const kyi_transport_t *tp = kyi_tp_for(s);
    kyi_hdr_t hdr;
    fill_desc(&hdr, KYI_OP_GET_STRIDED, s, off, info.bytes, ss, count, levels);
    if (tp->get_rows) {
        st = tp->get_rows(h, s, &hdr, dst, ds, info.local_dev);
        if (st != KY_ERR_UNSUPPORTED) return kyi_handle_launch(h, st, out);
    }
    struct gdesc *d = calloc(1, sizeof *d);
    if (!d) {
        free(h);
        return kyi_fail(KY_ERR_NOMEM, call, "no memory");
    }
    d->dst = dst;
    d->ddev = info.local_dev;
    d->levels = levels;
    for (int i = 0; i < levels; i++) d->ds[i] = ds[i];
    for (int i = 0; i <= levels; i++) d->count[i] = count[i];
    d->n = info.bytes;
    d->eager = tp->eager_get(info.bytes);
    if (d->eager) {
        /* The eager form lands [status][data] in h->tmp; finish_get_strided unpacks it. */
        st = tp->get_strided(h, s, &hdr, NULL);
    } else {
        char *packed = malloc(info.bytes);
        if (!packed)
            st = kyi_fail(KY_ERR_NOMEM, call, "no memory for %zu bytes", info.bytes);
        else {
            st = tp->get_strided(h, s, &hdr, packed);
            h->tmp2 = packed; /* received into, unpacked by finish_get_strided */
        }
    }
    h->finish = finish_get_strided;
    h->finish_arg = d;
    return kyi_handle_launch(h, st, out);
}

/* KY_TRACE: a span per strided call (blocking: until the data landed; non-blocking: until issued), with the
 * bytes it moves */
static int64_t strided_bytes(const size_t count[], int levels)
{
    if (!count || levels < 0 || levels > 16) return -1;
    int64_t n = 1;
    for (int l = 0; l <= levels; l++) n *= (int64_t)count[l];
    return n;
}

static int put_strided_span(const char *call, int rank, ky_seg_t s, size_t off, const size_t ds[],
                            const void *src, const size_t ss[], const size_t count[], int levels,
                            ky_handle_t *out)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = put_strided(call, rank, s, off, ds, src, ss, count, levels, out);
    KYI_TRACE_SPAN("comm", call, t0, strided_bytes(count, levels), rank);
    return st;
}

static int get_strided_span(const char *call, void *dst, const size_t ds[], int rank, ky_seg_t s, size_t off,
                            const size_t ss[], const size_t count[], int levels, ky_handle_t *out)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = get_strided(call, dst, ds, rank, s, off, ss, count, levels, out);
    KYI_TRACE_SPAN("comm", call, t0, strided_bytes(count, levels), rank);
    return st;
}

int ky_put_strided(int rank, ky_seg_t seg, size_t off, const size_t dst_stride[], const void *src,
                   const size_t src_stride[], const size_t count[], int levels)
{
    return put_strided_span("ky_put_strided", rank, seg, off, dst_stride, src, src_stride, count, levels,
                            NULL);
}

int ky_put_strided_nb(int rank, ky_seg_t seg, size_t off, const size_t dst_stride[], const void *src,
                      const size_t src_stride[], const size_t count[], int levels, ky_handle_t *h)
{
    if (!h) return kyi_fail(KY_ERR_ARG, "ky_put_strided_nb", "handle pointer is NULL");
    return put_strided_span("ky_put_strided_nb", rank, seg, off, dst_stride, src, src_stride, count, levels,
                            h);
}

int ky_get_strided(void *dst, const size_t dst_stride[], int rank, ky_seg_t seg, size_t off,
                   const size_t src_stride[], const size_t count[], int levels)
{
    return get_strided_span("ky_get_strided", dst, dst_stride, rank, seg, off, src_stride, count, levels,
                            NULL);
}

int ky_get_strided_nb(void *dst, const size_t dst_stride[], int rank, ky_seg_t seg, size_t off,
                      const size_t src_stride[], const size_t count[], int levels, ky_handle_t *h)
{
    if (!h) return kyi_fail(KY_ERR_ARG, "ky_get_strided_nb", "handle pointer is NULL");
    return get_strided_span("ky_get_strided_nb", dst, dst_stride, rank, seg, off, src_stride, count, levels,
                            h);
}

/* Vector transfers: every piece is started non-blocking, then all are completed. */
static int vector(const char *call, int put, int rank, ky_seg_t seg, size_t n, const size_t off[],
                  void *const local[], const size_t len[])
{
    KYI_CHECK(kyi_check_target(call, rank, seg));
    if (n && (!off || !local || !len)) return kyi_fail(KY_ERR_ARG, call, "an array argument is NULL");
    if (KYI_SIZE_LOOKS_NEGATIVE(n)) return kyi_fail(KY_ERR_ARG, call, "count %zu looks negative", n);
    for (size_t i = 0; i < n; i++) KYI_CHECK(kyi_check_range(call, rank, seg, off[i], len[i]));
    ky_handle_t *hs = calloc(n ? n : 1, sizeof *hs);
    if (!hs) return kyi_fail(KY_ERR_NOMEM, call, "no memory for %zu handles", n);
    int first = KY_OK;
    for (size_t i = 0; i < n && !first; i++)
        first = put ? ky_put_nb(rank, seg, off[i], local[i], len[i], &hs[i])
                    : ky_get_nb(local[i], rank, seg, off[i], len[i], &hs[i]);
    int st = ky_wait_all(hs, n);
    free(hs);
    return first ? first : st;
}

int ky_putv(int rank, ky_seg_t seg, size_t n, const size_t dst_off[], const void *const src[],
            const size_t len[])
{
    return vector("ky_putv", 1, rank, seg, n, dst_off, (void *const *)src, len);
}

int ky_getv(void *const dst[], int rank, ky_seg_t seg, size_t n, const size_t src_off[], const size_t len[])
{
    return vector("ky_getv", 0, rank, seg, n, src_off, dst, len);
}
