/* Target side of remote accesses and active messages on the MPI path. Every request is checked here, at the
 * target, against the segment it names (the initiator checked too; this is the line of defence that keeps a
 * remote request from touching anything but registered memory). Failures answer with a status and leave
 * memory untouched. */
#include <stdlib.h>
#include <string.h>

#include "comm/mpi/bulk.h"
#include "comm/mpi/mpi.h"
#include "comm/pack.h"
#include "comm/transport.h"

static int check(const kyi_hdr_t *h, int src, struct kyi_seg **out, size_t extent)
{
    struct kyi_seg *s = kyi_seg_lookup(h->seg);
    if (!s) {
        KYI_WARN(KYI_SUB_COMM, "request from rank %d names segment %u, which does not exist here", src,
                 h->seg);
        return KY_ERR_RANGE;
    }
    if (h->off > s->bytes || extent > s->bytes - h->off) {
        KYI_WARN(KYI_SUB_COMM, "request from rank %d: offset %llu + %zu bytes outside segment %u (%zu bytes)",
                 src, (unsigned long long)h->off, extent, h->seg, s->bytes);
        return KY_ERR_RANGE;
    }
    *out = s;
    return KY_OK;
}

static int seg_dev(const struct kyi_seg *s)
{
    return s->memkind == KY_MEM_GPU ? s->device : -1;
}

static void ack(const kyi_hdr_t *h, int src, int64_t status)
{
    kyi_send_deferred(&status, sizeof status, src, (int)h->tag, kyi_mpi.rep);
}

/* A large get that failed: its status, then the empty chunks the initiator has already posted receives for.
 */
static void refuse_bulk(const kyi_hdr_t *h, int src, int64_t status)
{
    ack(h, src, status);
    size_t k = kyi_bulk_nchunks(h->n, h->chunk);
    for (size_t i = 0; i < k; i++) kyi_send_deferred(NULL, 0, src, (int)h->tag, kyi_mpi.rep);
}

static void serve_put(const kyi_hdr_t *h, void *payload, int src)
{
    static const char *call = "serve put";
    struct kyi_seg *s = NULL;
    int st = check(h, src, &s, h->n);
    if (h->flags & KYI_F_EAGER) {
        if (!st && h->n) st = kyi_local_copy(call, (char *)s->base + h->off, seg_dev(s), payload, -1, h->n);
    } else if (!st) {
        st = kyi_bulk_recv(call, (char *)s->base + h->off, seg_dev(s), h->n, h->chunk, src, (int)h->tag,
                           kyi_mpi.data);
    } else {
        kyi_bulk_discard(call, h->n, h->chunk, src, (int)h->tag, kyi_mpi.data);
    }
    ack(h, src, st);
}

static void serve_get(const kyi_hdr_t *h, int src)
{
    static const char *call = "serve get";
    struct kyi_seg *s = NULL;
    int st = check(h, src, &s, h->n);
    if (h->n <= kyi_comm.eager && !st) {
        char *buf = malloc(sizeof(int64_t) + h->n);
        if (!buf) {
            ack(h, src, KY_ERR_NOMEM);
            return;
        }
        *(int64_t *)buf = st;
        st = kyi_local_copy(call, buf + sizeof(int64_t), -1, (char *)s->base + h->off, seg_dev(s), h->n);
        if (st) {
            free(buf);
            ack(h, src, st);
            return;
        }
        kyi_send_deferred(buf, sizeof(int64_t) + h->n, src, (int)h->tag, kyi_mpi.rep);
        free(buf);
        return;
    }
    if (st) {
        if (h->n <= kyi_comm.eager)
            ack(h, src, st);
        else
            refuse_bulk(h, src, st);
        return;
    }
    ack(h, src, st);
    kyi_bulk_send(call, (char *)s->base + h->off, seg_dev(s), h->n, h->chunk, src, (int)h->tag, kyi_mpi.rep);
}

static void serve_memset(const kyi_hdr_t *h, int src)
{
    struct kyi_seg *s = NULL;
    int st = check(h, src, &s, h->n);
    if (!st && h->n) {
        if (s->memkind == KY_MEM_GPU) {
            kyi_gpu_op_t *op = NULL;
            st = kyi_gpu_memset_async(s->device, (char *)s->base + h->off, (int)h->aux, h->n, &op);
            if (!st) {
                st = kyi_gpu_op_wait(op);
                kyi_gpu_op_free(op);
            }
        } else {
            memset((char *)s->base + h->off, (int)h->aux, h->n);
        }
    }
    ack(h, src, st);
}

static void desc(const kyi_hdr_t *h, size_t stride[3], size_t count[4])
{
    for (int i = 0; i < 3; i++) stride[i] = h->args[KYI_ARG_STRIDE + i];
    for (int i = 0; i < 4; i++) count[i] = h->args[KYI_ARG_COUNT + i];
}

static void serve_put_strided(const kyi_hdr_t *h, void *payload, int src)
{
    static const char *call = "serve put_strided";
    size_t stride[3], count[4];
    desc(h, stride, count);
    struct kyi_seg *s = NULL;
    int st = check(h, src, &s, kyi_strided_extent(stride, count, h->levels));
    if (!st && kyi_strided_bytes(count, h->levels) != h->n) st = KY_ERR_ARG;
    void *packed = payload;
    if (!(h->flags & KYI_F_EAGER)) {
        packed = st ? NULL : malloc(h->n ? h->n : 1);
        if (!st && !packed) st = KY_ERR_NOMEM;
        if (st)
            kyi_bulk_discard(call, h->n, h->chunk, src, (int)h->tag, kyi_mpi.data);
        else
            st = kyi_bulk_recv(call, packed, -1, h->n, h->chunk, src, (int)h->tag, kyi_mpi.data);
    }
    if (!st) st = kyi_unpack(call, (char *)s->base + h->off, seg_dev(s), stride, packed, count, h->levels);
    if (packed != payload) free(packed);
    ack(h, src, st);
}

static void serve_get_strided(const kyi_hdr_t *h, int src)
{
    static const char *call = "serve get_strided";
    size_t stride[3], count[4];
    desc(h, stride, count);
    struct kyi_seg *s = NULL;
    int st = check(h, src, &s, kyi_strided_extent(stride, count, h->levels));
    if (!st && kyi_strided_bytes(count, h->levels) != h->n) st = KY_ERR_ARG;
    char *buf = st ? NULL : malloc(sizeof(int64_t) + (h->n ? h->n : 1));
    if (!st && !buf) st = KY_ERR_NOMEM;
    if (!st)
        st = kyi_pack(call, buf + sizeof(int64_t), (char *)s->base + h->off, seg_dev(s), stride, count,
                      h->levels);
    if (st && h->n > kyi_comm.eager) {
        refuse_bulk(h, src, st);
    } else if (st || h->n > kyi_comm.eager) {
        ack(h, src, st);
        if (!st)
            kyi_bulk_send(call, buf + sizeof(int64_t), -1, h->n, h->chunk, src, (int)h->tag, kyi_mpi.rep);
    } else {
        *(int64_t *)buf = KY_OK;
        kyi_send_deferred(buf, sizeof(int64_t) + h->n, src, (int)h->tag, kyi_mpi.rep);
    }
    free(buf);
}

/* An active message: a long one's bulk payload is received into its segment here, so the API side (am.c,
 * through kyi_am_deliver) sees it placed; one outside its segment is drained and dropped. */
static void serve_am(const kyi_hdr_t *h, void *payload, int src)
{
    static const char *call = "active message";
    if (!(h->flags & KYI_F_LONG) || (h->flags & (KYI_F_PLACED | KYI_F_EAGER))) {
        kyi_am_deliver(h, payload, src);
        return;
    }
    struct kyi_seg *s = kyi_seg_lookup(h->seg);
    int ok = s && h->off <= s->bytes && h->n <= s->bytes - h->off;
    if (ok)
        ok = kyi_bulk_recv(call, (char *)s->base + h->off, seg_dev(s), h->n, h->chunk, src, (int)h->tag,
                           kyi_mpi.data) == KY_OK;
    else
        kyi_bulk_discard(call, h->n, h->chunk, src, (int)h->tag, kyi_mpi.data);
    kyi_hdr_t placed = *h;
    placed.flags |= KYI_F_PLACED;
    kyi_am_deliver(ok ? &placed : h, NULL, src);
}

void kyi_serve(const kyi_hdr_t *h, void *payload, size_t np, int src)
{
    if ((h->flags & KYI_F_EAGER) && np < h->n) {
        KYI_WARN(KYI_SUB_COMM, "request from rank %d carries %zu of %llu payload bytes; dropped", src, np,
                 (unsigned long long)h->n);
        if (h->flags & KYI_F_ACK) ack(h, src, KY_ERR_INTERNAL);
        return;
    }
    switch (h->op) {
        case KYI_OP_PUT:
            serve_put(h, payload, src);
            break;
        case KYI_OP_GET:
            serve_get(h, src);
            break;
        case KYI_OP_MEMSET:
            serve_memset(h, src);
            break;
        case KYI_OP_PUT_STRIDED:
            serve_put_strided(h, payload, src);
            break;
        case KYI_OP_GET_STRIDED:
            serve_get_strided(h, src);
            break;
        case KYI_OP_AM:
            serve_am(h, payload, src);
            break;
        default:
            KYI_WARN(KYI_SUB_COMM, "unknown request %u from rank %d dropped", h->op, src);
            if (h->flags & KYI_F_ACK) ack(h, src, KY_ERR_INTERNAL);
    }
}
