/* Active messages over MPI, initiator side: one message on kyi_mpi.req (header and, up to KY_EAGER_SIZE,
 * the payload); a larger long payload follows as chunks on kyi_mpi.data with the message's tag, which the
 * target's serve.c receives into the segment before the handler runs. From a handler everything is sent
 * deferred, so the engine never blocks. */
#include <stdlib.h>
#include <string.h>

#include "comm/mpi/bulk.h"
#include "comm/mpi/mpi.h"
#include "comm/transport.h"

/* Send one message (header + np payload bytes). From a handler: deferred (the engine must not block). */
static int send_msg(const char *call, int rank, const kyi_hdr_t *hdr, const void *payload, int pdev,
                    size_t np, int deferred)
{
    size_t len = sizeof *hdr + np;
    char stackbuf[512];
    char *buf = len <= sizeof stackbuf ? stackbuf : malloc(len);
    if (!buf) return kyi_fail(KY_ERR_NOMEM, call, "no memory for a %zu-byte message", len);
    memcpy(buf, hdr, sizeof *hdr);
    int st = np ? kyi_local_copy(call, buf + sizeof *hdr, -1, payload, pdev, np) : KY_OK;
    if (!st) {
        if (deferred) {
            st = kyi_send_deferred(buf, len, rank, 0, kyi_mpi.req);
            if (!st) kyi_bell_ring(rank);
        } else {
            MPI_Request r;
            if (kyi_req_isend(buf, (int)len, rank, &r) != MPI_SUCCESS)
                st = kyi_fail(KY_ERR_MPI, call, "MPI_Isend to rank %d failed", rank);
            else
                st = kyi_wait_reqs(call, rank, 1, &r);
        }
    }
    if (buf != stackbuf) free(buf);
    return st;
}

/* A long payload too large for the message: header first, then chunks. */
static int send_long_bulk(const char *call, int rank, kyi_hdr_t *h, const void *payload, int pdev,
                          struct kyi_seg *s, int reply)
{
    size_t n = h->n;
    h->tag = kyi_new_tag();
    h->chunk = kyi_bulk_chunk(reply ? -1 : pdev, s->memkind == KY_MEM_GPU);
    KYI_CHECK(send_msg(call, rank, h, NULL, -1, 0, reply));
    if (!reply) return kyi_bulk_send(call, payload, pdev, n, h->chunk, rank, (int)h->tag, kyi_mpi.data);
    /* From a handler: one copy of the payload, whose pieces the engine sends and frees. */
    size_t k = kyi_bulk_nchunks(n, h->chunk);
    int st = KY_OK;
    for (size_t i = 0; i < k && !st; i++) {
        size_t len = (i + 1 == k) ? n - i * h->chunk : h->chunk;
        char *piece = malloc(len);
        if (!piece) return kyi_fail(KY_ERR_NOMEM, call, "no memory for a %zu-byte reply", len);
        st = kyi_local_copy(call, piece, -1, (const char *)payload + i * h->chunk, pdev, len);
        if (st)
            free(piece);
        else
            st = kyi_send_deferred_owned(piece, len, rank, (int)h->tag, kyi_mpi.data);
    }
    return st;
}

int kyi_mpi_am_send(const char *call, int rank, kyi_hdr_t *h, const void *payload, int pdev,
                    struct kyi_seg *s, int reply)
{
    if (!(h->flags & KYI_F_LONG) || (h->flags & KYI_F_PLACED))
        return send_msg(call, rank, h, payload, pdev, (h->flags & KYI_F_MEDIUM) ? h->n : 0, reply);
    kyi_count(KY_PATH_MPI, h->n);
    if (h->n <= kyi_comm.eager) {
        h->flags |= KYI_F_EAGER;
        return send_msg(call, rank, h, payload, pdev, h->n, reply);
    }
    return send_long_bulk(call, rank, h, payload, pdev, s, reply);
}
