/* Initiator side of the MPI path: one request message (header + eager payload) and, for large payloads,
 * chunk messages; the answer (status, or status + data) comes back on kyi_mpi.rep with the request's tag.
 * Host buffers move without blocking the caller; GPU buffers are staged through pinned host memory inside
 * the call (bulk.c). */
#include <stdlib.h>
#include <string.h>

#include "comm/mpi/bulk.h"
#include "comm/mpi/mpi.h"
#include "comm/pack.h"
#include "comm/transport.h"

static int reserve_reqs(kyi_handle_t *h, size_t n)
{
    if (n > 4) {
        h->req = malloc(sizeof(MPI_Request) * n);
        if (!h->req) return kyi_fail(KY_ERR_NOMEM, h->call, "no memory for %zu requests", n);
    }
    MPI_Request *r = kyi_mpi_hreqs(h);
    for (size_t i = 0; i < (n > 4 ? n : 4); i++) r[i] = MPI_REQUEST_NULL;
    return KY_OK;
}

/* The handle's requests: done once all completed; the array, if any, is freed then. */
static int mpi_test(kyi_handle_t *h, int *done)
{
    int st = kyi_test_reqs(h->nreq, kyi_mpi_hreqs(h), done);
    if (st) *done = 1;
    if (*done) {
        free(h->req);
        h->req = NULL;
        h->nreq = 0;
    }
    return st;
}

static int mpi_put(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, const void *src, int src_dev)
{
    int remote_gpu = s->memkind == KY_MEM_GPU;
    int rank = h->rank;
    size_t n = hdr->n;
    hdr->tag = kyi_new_tag();
    hdr->flags |= KYI_F_ACK;
    if (n <= kyi_comm.eager) {
        char *buf = malloc(sizeof *hdr + (n ? n : 1));
        if (!buf) return kyi_fail(KY_ERR_NOMEM, h->call, "no memory for a %zu-byte request", n);
        hdr->flags |= KYI_F_EAGER;
        memcpy(buf, hdr, sizeof *hdr);
        int st = kyi_local_copy(h->call, buf + sizeof *hdr, -1, src, src_dev, n);
        if (st) {
            free(buf);
            return st;
        }
        h->tmp = buf;
        MPI_Irecv(&h->rstatus, sizeof h->rstatus, MPI_BYTE, rank, (int)hdr->tag, kyi_mpi.rep,
                  &kyi_mpi_hreqs(h)[0]);
        kyi_req_isend(buf, (int)(sizeof *hdr + n), rank, &kyi_mpi_hreqs(h)[1]);
        h->nreq = 2;
        kyi_count(KY_PATH_MPI, n);
        return KY_OK;
    }
    hdr->chunk = kyi_bulk_chunk(src_dev, remote_gpu);
    size_t k = kyi_bulk_nchunks(n, hdr->chunk);
    kyi_hdr_t *hcopy = malloc(sizeof *hdr);
    if (!hcopy) return kyi_fail(KY_ERR_NOMEM, h->call, "no memory");
    memcpy(hcopy, hdr, sizeof *hdr);
    h->tmp = hcopy;
    int host_inline = src_dev < 0;
    KYI_CHECK(reserve_reqs(h, 2 + (host_inline ? k : 0)));
    MPI_Irecv(&h->rstatus, sizeof h->rstatus, MPI_BYTE, rank, (int)hdr->tag, kyi_mpi.rep,
              &kyi_mpi_hreqs(h)[0]);
    kyi_req_isend(hcopy, sizeof *hdr, rank, &kyi_mpi_hreqs(h)[1]);
    h->nreq = 2;
    kyi_count(KY_PATH_MPI, n);
    if (host_inline) {
        if (kyi_bulk_post_host(1, (void *)src, n, hdr->chunk, rank, (int)hdr->tag, kyi_mpi.data,
                               &kyi_mpi_hreqs(h)[2]))
            return kyi_fail(KY_ERR_MPI, h->call, "posting data to rank %d failed", rank);
        h->nreq = 2 + (int)k;
        return KY_OK;
    }
    return kyi_bulk_send(h->call, src, src_dev, n, hdr->chunk, rank, (int)hdr->tag, kyi_mpi.data);
}

/* Small gets land in tmp = [status][data]; this copies the data out. */
static int finish_eager_get(kyi_handle_t *h)
{
    int64_t st = *(int64_t *)h->tmp;
    if (st) return kyi_fail((int)st, h->call, "rank %d refused the request", h->rank);
    return kyi_local_copy(h->call, h->finish_arg, (int)h->finish_n, (char *)h->tmp + sizeof(int64_t), -1,
                          h->nbytes);
}

static int mpi_get(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, void *dst, int dst_dev)
{
    int remote_gpu = s->memkind == KY_MEM_GPU;
    int rank = h->rank;
    size_t n = hdr->n;
    hdr->tag = kyi_new_tag();
    kyi_count(KY_PATH_MPI, n);
    if (n <= kyi_comm.eager) {
        char *buf = malloc(sizeof(int64_t) + sizeof *hdr + (n ? n : 1));
        if (!buf) return kyi_fail(KY_ERR_NOMEM, h->call, "no memory");
        h->tmp = buf;
        h->finish = finish_eager_get;
        h->finish_arg = dst;
        h->finish_n = (size_t)dst_dev;
        h->nbytes = n;
        kyi_hdr_t *hcopy = (kyi_hdr_t *)(buf + sizeof(int64_t) + n);
        /* the header copy sits behind the reply area; the reply is at most 8 + n bytes */
        memcpy(hcopy, hdr, sizeof *hdr);
        MPI_Irecv(buf, (int)(sizeof(int64_t) + n), MPI_BYTE, rank, (int)hdr->tag, kyi_mpi.rep,
                  &kyi_mpi_hreqs(h)[0]);
        kyi_req_isend(hcopy, sizeof *hdr, rank, &kyi_mpi_hreqs(h)[1]);
        h->nreq = 2;
        return KY_OK;
    }
    hdr->chunk = kyi_bulk_chunk(dst_dev, remote_gpu);
    size_t k = kyi_bulk_nchunks(n, hdr->chunk);
    kyi_hdr_t *hcopy = malloc(sizeof *hdr);
    if (!hcopy) return kyi_fail(KY_ERR_NOMEM, h->call, "no memory");
    memcpy(hcopy, hdr, sizeof *hdr);
    h->tmp = hcopy;
    if (dst_dev < 0) {
        /* Receives for status and every chunk are posted before the request leaves, so the target never
         * waits for us; a refusing target sends empty chunks. */
        KYI_CHECK(reserve_reqs(h, 2 + k));
        MPI_Irecv(&h->rstatus, sizeof h->rstatus, MPI_BYTE, rank, (int)hdr->tag, kyi_mpi.rep,
                  &kyi_mpi_hreqs(h)[0]);
        if (kyi_bulk_post_host(0, dst, n, hdr->chunk, rank, (int)hdr->tag, kyi_mpi.rep, &kyi_mpi_hreqs(h)[2]))
            return kyi_fail(KY_ERR_MPI, h->call, "posting receives from rank %d failed", rank);
        kyi_req_isend(hcopy, sizeof *hdr, rank, &kyi_mpi_hreqs(h)[1]);
        h->nreq = 2 + (int)k;
        return KY_OK;
    }
    /* GPU destination: status first, then the staged pipeline, inside the call. */
    MPI_Request r[2];
    MPI_Irecv(&h->rstatus, sizeof h->rstatus, MPI_BYTE, rank, (int)hdr->tag, kyi_mpi.rep, &r[0]);
    kyi_req_isend(hcopy, sizeof *hdr, rank, &r[1]);
    KYI_CHECK(kyi_wait_reqs(h->call, rank, 2, r));
    if (h->rstatus) {
        kyi_bulk_discard(h->call, n, hdr->chunk, rank, (int)hdr->tag, kyi_mpi.rep);
        return KY_OK; /* the handle's completion reports rstatus */
    }
    return kyi_bulk_recv(h->call, dst, dst_dev, n, hdr->chunk, rank, (int)hdr->tag, kyi_mpi.rep);
}

static int mpi_memset(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr)
{
    (void)s;
    hdr->tag = kyi_new_tag();
    hdr->flags |= KYI_F_ACK;
    kyi_hdr_t *hcopy = malloc(sizeof *hdr);
    if (!hcopy) return kyi_fail(KY_ERR_NOMEM, h->call, "no memory");
    memcpy(hcopy, hdr, sizeof *hdr);
    h->tmp = hcopy;
    MPI_Irecv(&h->rstatus, sizeof h->rstatus, MPI_BYTE, h->rank, (int)hdr->tag, kyi_mpi.rep,
              &kyi_mpi_hreqs(h)[0]);
    kyi_req_isend(hcopy, sizeof *hdr, h->rank, &kyi_mpi_hreqs(h)[1]);
    h->nreq = 2;
    kyi_count(KY_PATH_MPI, 0);
    return KY_OK;
}

/* Strided transfers move their packed bytes like contiguous ones; the target unpacks (serve.c). */
static int mpi_put_strided(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, const void *packed)
{
    return mpi_put(h, s, hdr, packed, -1);
}

static int mpi_get_strided(kyi_handle_t *h, struct kyi_seg *s, kyi_hdr_t *hdr, void *packed)
{
    return mpi_get(h, s, hdr, packed, -1);
}

static int mpi_eager_get(size_t n)
{
    return n <= kyi_comm.eager;
}

int kyi_mpi_am_send(const char *call, int rank, kyi_hdr_t *hdr, const void *payload, int pdev,
                    struct kyi_seg *s, int reply);

const kyi_transport_t kyi_tp_mpi = {
    .name = "mpi",
    .path = KY_PATH_MPI,
    .put = mpi_put,
    .get = mpi_get,
    .put_strided = mpi_put_strided,
    .get_strided = mpi_get_strided,
    .memset = mpi_memset,
    .eager_get = mpi_eager_get,
    .am_send = kyi_mpi_am_send,
    .test = mpi_test,
    .progress = kyi_mpi_poll,
};
