/* The MPI transport's side of the progress engine: the loop that serves requests arriving on kyi_mpi.req
 * (remote puts/gets on this rank's segments, active messages) through serve.c, the sends handlers make
 * without blocking ("deferred", so two engines never wait on each other), and the waits on MPI requests
 * that keep serving when no progress thread does. progress.c runs the loop on its thread or in waits. */
#include <stdlib.h>
#include <string.h>

#include "comm/mpi/mpi.h"
#include "comm/transport.h"

static char *rbuf;
static size_t rbuf_cap;

/* Deferred sends: owned buffers with their requests, completed by the engine. */
typedef struct deferred {
    MPI_Request req;
    void *buf;
    void (*release)(void *); /* what gives buf back once sent: release(ctx) */
    void *ctx;
    struct deferred *next;
} deferred_t;
static pthread_mutex_t def_lock = PTHREAD_MUTEX_INITIALIZER;
static deferred_t *def_head;

unsigned kyi_new_tag(void)
{
    unsigned t = atomic_fetch_add_explicit(&kyi_mpi.tag_next, 1, memory_order_relaxed);
    return 16 + t % (unsigned)(kyi_mpi.tag_ub - 16);
}

int kyi_send_deferred(const void *buf, size_t n, int dest, int tag, MPI_Comm comm)
{
    void *copy = malloc(n ? n : 1);
    if (!copy) return kyi_fail(KY_ERR_NOMEM, "kyi_send_deferred", "no memory for %zu bytes", n);
    if (n) memcpy(copy, buf, n);
    return kyi_send_deferred_owned(copy, n, dest, tag, comm);
}

int kyi_send_deferred_owned(void *copy, size_t n, int dest, int tag, MPI_Comm comm)
{
    return kyi_send_deferred_release(copy, n, dest, tag, comm, free, copy);
}

int kyi_send_deferred_release(const void *buf, size_t n, int dest, int tag, MPI_Comm comm,
                              void (*release)(void *), void *ctx)
{
    deferred_t *d = malloc(sizeof *d);
    if (!d) {
        release(ctx);
        return kyi_fail(KY_ERR_NOMEM, "kyi_send_deferred", "no memory");
    }
    d->buf = (void *)buf;
    d->release = release;
    d->ctx = ctx;
    kyi_hb_release(KYI_HB_REPLY); /* comm.h */
    if (MPI_Isend(buf, (int)n, MPI_BYTE, dest, tag, comm, &d->req) != MPI_SUCCESS) {
        release(ctx);
        free(d);
        return kyi_fail(KY_ERR_MPI, "kyi_send_deferred", "MPI_Isend to rank %d failed", dest);
    }
    pthread_mutex_lock(&def_lock);
    d->next = def_head;
    def_head = d;
    pthread_mutex_unlock(&def_lock);
    return KY_OK;
}

int kyi_progress_deferred(void)
{
    int pending = 0;
    pthread_mutex_lock(&def_lock);
    deferred_t **pp = &def_head;
    while (*pp) {
        deferred_t *d = *pp;
        int flag = 0;
        MPI_Test(&d->req, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            *pp = d->next;
            d->release(d->ctx);
            free(d);
        } else {
            pp = &d->next;
            pending++;
        }
    }
    pthread_mutex_unlock(&def_lock);
    return pending;
}

int kyi_mpi_poll(void)
{
    int handled = 0;
    for (;;) {
        int flag = 0, count = 0;
        MPI_Message msg;
        MPI_Status st;
        if (MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, kyi_mpi.req, &flag, &msg, &st) != MPI_SUCCESS)
            kyi_fatal("rank %d: progress engine: MPI_Improbe failed", kyi_rt.rank);
        if (!flag) break;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if ((size_t)count > rbuf_cap) {
            char *nb = realloc(rbuf, count);
            if (!nb)
                kyi_fatal("rank %d: progress engine: no memory for a %d-byte request", kyi_rt.rank, count);
            rbuf = nb;
            rbuf_cap = count;
        }
        MPI_Mrecv(rbuf, count, MPI_BYTE, &msg, &st);
        if ((size_t)count < sizeof(kyi_hdr_t)) {
            KYI_WARN(KYI_SUB_COMM, "dropping a %d-byte message from rank %d: shorter than a header", count,
                     st.MPI_SOURCE);
            continue;
        }
        kyi_hdr_t *h = (kyi_hdr_t *)rbuf;
        if (h->op == KYI_OP_STOP) return -1;
        kyi_hb_acquire(KYI_HB_BARRIER);
        kyi_serve(h, rbuf + sizeof(kyi_hdr_t), (size_t)count - sizeof(kyi_hdr_t), st.MPI_SOURCE);
        kyi_hb_release(KYI_HB_BARRIER);
        handled++;
    }
    kyi_progress_deferred();
    return handled;
}

void kyi_mpi_stop_thread(void)
{
    kyi_hdr_t h;
    memset(&h, 0, sizeof h);
    h.op = KYI_OP_STOP;
    MPI_Send(&h, sizeof h, MPI_BYTE, kyi_rt.rank, 0, kyi_mpi.req);
    kyi_bell_ring(kyi_rt.rank); /* the engine may sleep on its doorbell (bell.c) */
}

void kyi_mpi_poll_free(void)
{
    free(rbuf);
    rbuf = NULL;
    rbuf_cap = 0;
}

int kyi_test_reqs(int n, MPI_Request *reqs, int *done)
{
    if (MPI_Testall(n, reqs, done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        return kyi_fail(KY_ERR_MPI, "kyi_test_reqs", "MPI_Testall failed");
    if (*done) {
        kyi_progress_hb_sync();
        kyi_hb_acquire(KYI_HB_REPLY);
    }
    return KY_OK;
}

int kyi_wait_reqs(const char *call, int peer, int n, MPI_Request *reqs)
{
    kyi_waiter_t w;
    kyi_waiter_init(&w, call, "a reply", peer);
    for (;;) {
        int done = 0;
        if (MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return kyi_fail(KY_ERR_MPI, call, "MPI_Testall failed waiting on rank %d", peer);
        if (done) {
            kyi_progress_hb_sync();
            kyi_hb_acquire(KYI_HB_REPLY);
            return KY_OK;
        }
        if (!kyi_comm.progress_thread && kyi_progress_poll() > 0) continue;
        kyi_tp_background();
        kyi_waiter_pause(&w);
    }
}
