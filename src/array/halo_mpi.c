/* Halo exchange with ranks on other nodes as matched messages (KY_HALO_SENDRECV=auto, the default, for
 * neighbours on the MPI transport; 1: on UCX as well), on a channel of the array's team (comm/chan.h).
 *
 * Why not the one-sided puts of halo.c: a put to another node goes through the target's progress engine,
 * and for GPU memory it stages the whole transfer inside the call, one put after the other; the target's
 * engine then copies each chunk to its GPU before it answers. On the 2 x H200 machine with every rank its
 * own node that made the exchange of a 512 x 512 x 4-plane halo 1.5x slower than the seed's hand-written
 * host staging. A halo exchange is collective, so both sides know every message in advance: the receiver
 * posts its receives first, the sender copies its boundary to pinned memory chunk by chunk on its GPU
 * (KY_STAGE_CHUNK) and sends each chunk as soon as its copy is done, the receiver copies each chunk to its
 * halo as soon as it arrives; every direction at once. The GPU copy, the network and the copy back
 * overlap, the progress engine stays out of the way, and no barrier is needed: each side writes only its
 * own memory, after its own stream has finished with it.
 *
 * Host arrays take the same path: contiguous boxes are sent from and received into the array in place,
 * strided ones are packed.
 *
 * Matching: the tag names the receiver's block and the direction the data comes from; chunks of one
 * message are sent in order on one tag, and a channel does not reorder messages of one tag between two
 * ranks. */
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "coll/coll.h"
#include "comm/chan.h"
#include "comm/pack.h"
#include "runtime/config.h"
#include "runtime/gpu.h"
#include "runtime/log.h"

typedef struct {
    int send;  /* 1: my boundary cells out; 0: my halo cells in */
    int peer;  /* rank in the halo channel (the array's team) */
    int world; /* the same rank in the world, for messages */
    int tag;
    int dev;                    /* -1: host block */
    char *box;                  /* first byte of the box in the block */
    size_t count[4], stride[3]; /* the box, strided (comm convention), and its dense layout's strides */
    size_t dense[3];
    int levels;
    size_t bytes;
    char *stage; /* dense copy: pinned for GPU blocks, malloc'ed for strided host boxes; NULL: in place */
    int first, nchunk; /* its chunks: [first, first + nchunk) of the exchange's chunk arrays */
} kyi_hmsg_t;

struct kyi_halo_mpi {
    kyi_chan_t *chan;
    int nmsg, nchunk;
    kyi_hmsg_t *msg;
    size_t chunk;
    /* per chunk, reused by every exchange */
    kyi_chan_req_t *req;
    kyi_gpu_op_t **gop;
    unsigned char *state;
};

enum { CH_COPY = 1, CH_MSG = 2, CH_DONE = 3 };

/* A neighbour whose block comm reaches through the target's progress engine (the MPI transport), not by a
 * direct copy. Under KY_HALO_SENDRECV=auto a UCX neighbour gets puts: UCX moves the bytes itself (RDMA,
 * cuda_ipc over NVLink, shared memory) with no staging and no target CPU, which the pinned-memory pipeline
 * below can only slow down (4 H200s, every rank its own node: the staged messages held the 512^3 stencil's
 * weak scaling at 45-50% on 4 GPUs, their pinned copies sharing the host's memory bandwidth). */
static int by_msg(int rank, ky_seg_t seg)
{
    ky_path_t p = KY_PATH_SELF;
    if (ky_comm_path(rank, seg, NULL, &p) != KY_OK) return 0;
    return p == KY_PATH_MPI || (p == KY_PATH_UCX && kyi_setting_is(KYI_SET_HALO_SENDRECV, "1"));
}

static int dir_index(int ndim, const int dir[])
{
    int i = 0;
    for (int d = 0; d < ndim; d++) i = 3 * i + dir[d] + 1;
    return i;
}

static int team_rank(const struct kyi_team *t, int world)
{
    if (!t->world) return world;
    for (int r = 0; r < t->size; r++)
        if (t->world[r] == world) return r;
    return -1;
}

/* The box of block k that goes out in direction dir (send) or comes in from direction dir (receive). */
static int box_of(struct kyi_array *a, int k, const int dir[], int send, kyi_hmsg_t *m)
{
    const kyi_ablock_t *b = &a->blk[k];
    size_t cnt[KY_ARRAY_MAX_DIMS], dense[KY_ARRAY_MAX_DIMS], off = 0;
    for (int d = 0; d < a->ndim; d++) {
        size_t h = (size_t)a->halo[d], from;
        if (dir[d] == 0) {
            cnt[d] = b->n[d];
            from = h;
        } else if (send) {
            cnt[d] = h;
            from = dir[d] > 0 ? b->n[d] : h;
        } /* my cells next to that side */
        else {
            cnt[d] = h;
            from = dir[d] > 0 ? h + b->n[d] : 0;
        } /* my halo on that side */
        off += from * b->S[d];
    }
    size_t s = 1;
    for (int d = a->ndim - 1; d >= 0; d--) {
        dense[d] = s;
        s *= cnt[d];
    }
    m->levels = kyi_abox_strided(a->ndim, cnt, b->S, dense, a->elem, m->count, m->stride, m->dense);
    if (m->levels < 0) return -1;
    m->bytes = kyi_strided_bytes(m->count, m->levels);
    m->box = b->base + off * a->elem;
    m->dev = b->dev;
    m->send = send;
    return 0;
}

/* Add the messages of block k in direction dir whose other side is reached over MPI. */
static int plan_msgs(struct kyi_array *a, const struct kyi_team *t, int k, const int dir[], int *n)
{
    int q = kyi_halo_part(a, k, dir);
    if (q < 0) return KY_OK;
    int rank, kk;
    kyi_adist_home(a, q, &rank, &kk);
    if (!by_msg(rank, a->seg[kk])) return KY_OK;
    int back[KY_ARRAY_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) back[d] = -dir[d];
    int ndir = 1;
    for (int d = 0; d < a->ndim; d++) ndir *= 3;
    for (int send = 1; send >= 0; send--) {
        kyi_hmsg_t *m = &a->hm->msg[(*n)++];
        if (box_of(a, k, dir, send, m)) return KY_ERR_INTERNAL;
        m->world = rank;
        m->peer = team_rank(t, rank);
        if (m->peer < 0) return KY_ERR_INTERNAL;
        /* the receiver's block and the direction it sees the data come from */
        m->tag = send ? kk * ndir + dir_index(a->ndim, back) : k * ndir + dir_index(a->ndim, dir);
    }
    return KY_OK;
}

int kyi_halo_mpi_plan(const char *call, struct kyi_array *a)
{
    if (kyi_setting_is(KYI_SET_HALO_SENDRECV, "0")) return KY_OK;
    struct kyi_team *t = kyi_team_get(call, a->team);
    if (!t) return KY_ERR_ARG;
    int ndir = 1;
    for (int d = 0; d < a->ndim; d++) ndir *= 3;
    struct kyi_halo_mpi *hm = calloc(1, sizeof *hm);
    if (!hm || !(hm->msg = calloc((size_t)(2 * ndir * a->nlocal), sizeof *hm->msg))) {
        free(hm);
        return kyi_fail(KY_ERR_NOMEM, call, "no memory for the halo plan");
    }
    a->hm = hm;
    int n = 0, st = KY_OK;
    for (int k = 0; k < a->nlocal && !st; k++)
        for (int i = 0; i < ndir && !st; i++) {
            int dir[KY_ARRAY_MAX_DIMS], r = i, zero = 1;
            for (int d = a->ndim - 1; d >= 0; d--) {
                dir[d] = r % 3 - 1;
                r /= 3;
                zero &= dir[d] == 0;
            }
            if (!zero) st = plan_msgs(a, t, k, dir, &n);
        }
    if (st) return kyi_fail(st, call, "halo box needs more than 3 strided levels");
    hm->nmsg = n;
    /* GPU boxes stream through pinned memory in chunks; host boxes go whole (MPI counts are ints) */
    hm->chunk = a->place == KY_PLACE_GPU ? kyi_stage_chunk() : (size_t)1 << 30;
    for (int i = 0; i < n; i++) {
        kyi_hmsg_t *m = &hm->msg[i];
        int contiguous = m->levels == 0;
        if (m->dev >= 0) {
            if ((st = kyi_gpu_host_alloc(m->bytes ? m->bytes : 1, (void **)&m->stage)))
                return kyi_fail(st, call, "no pinned staging memory of %zu bytes for the halo", m->bytes);
        } else if (!contiguous && !(m->stage = malloc(m->bytes ? m->bytes : 1)))
            return kyi_fail(KY_ERR_NOMEM, call, "no memory to pack a halo box of %zu bytes", m->bytes);
        /* strided GPU boxes go as one strided copy, so as one message */
        size_t c = (m->dev >= 0 && !contiguous) ? (m->bytes ? m->bytes : 1) : hm->chunk;
        m->first = hm->nchunk;
        m->nchunk = m->bytes ? (int)((m->bytes + c - 1) / c) : 0;
        hm->nchunk += m->nchunk;
    }
    hm->req = malloc(sizeof *hm->req * (size_t)(hm->nchunk + 1));
    hm->gop = calloc((size_t)hm->nchunk + 1, sizeof *hm->gop);
    hm->state = calloc((size_t)hm->nchunk + 1, 1);
    if (!hm->req || !hm->gop || !hm->state)
        return kyi_fail(KY_ERR_NOMEM, call, "no memory for the halo plan");
    KYI_CHECK(kyi_chan_group(call, t->size, t->world, &hm->chan));
    KYI_INFO(KYI_SUB_ARRAY, "halo plan: %d message(s) over MPI in %d chunk(s)", n, hm->nchunk);
    return KY_OK;
}

int kyi_halo_by_msg(const struct kyi_array *a, int rank, ky_seg_t seg)
{
    return a->hm != NULL && by_msg(rank, seg);
}

void kyi_halo_mpi_free(struct kyi_array *a)
{
    struct kyi_halo_mpi *hm = a->hm;
    if (!hm) return;
    for (int i = 0; i < hm->nmsg; i++) {
        kyi_hmsg_t *m = &hm->msg[i];
        if (m->dev >= 0 && m->stage)
            kyi_gpu_host_free(m->stage);
        else
            free(m->stage);
    }
    kyi_chan_free(hm->chan);
    free(hm->msg);
    free(hm->req);
    free(hm->gop);
    free(hm->state);
    free(hm);
    a->hm = NULL;
}

static size_t chunk_len(const struct kyi_halo_mpi *hm, const kyi_hmsg_t *m, int c)
{
    size_t per = m->nchunk > 1 ? hm->chunk : m->bytes;
    size_t lo = (size_t)c * per;
    return m->bytes - lo < per ? m->bytes - lo : per;
}

/* Where chunk c of message m lives in host memory (the stage, or the box itself in place). */
static char *host_of(const struct kyi_halo_mpi *hm, const kyi_hmsg_t *m, int c)
{
    size_t per = m->nchunk > 1 ? hm->chunk : m->bytes;
    return (m->stage ? m->stage : m->box) + (size_t)c * per;
}

/* Start the GPU copy of chunk c (to the stage for sends, to the halo for receives). */
static int gpu_copy(const struct kyi_halo_mpi *hm, const kyi_hmsg_t *m, int c, kyi_gpu_op_t **op)
{
    size_t per = m->nchunk > 1 ? hm->chunk : m->bytes, len = chunk_len(hm, m, c);
    if (m->levels == 0) {
        char *dev = m->box + (size_t)c * per, *host = m->stage + (size_t)c * per;
        return m->send ? kyi_gpu_copy_async(m->dev, host, dev, len, op)
                       : kyi_gpu_copy_async(m->dev, dev, host, len, op);
    }
    return m->send ? kyi_gpu_copy_strided_async(m->dev, m->stage, m->dense, m->box, m->stride, m->count,
                                                m->levels, op)
                   : kyi_gpu_copy_strided_async(m->dev, m->box, m->stride, m->stage, m->dense, m->count,
                                                m->levels, op);
}

int kyi_halo_mpi_start(const char *call, struct kyi_array *a)
{
    struct kyi_halo_mpi *hm = a->hm;
    if (!hm || !hm->nchunk) return KY_OK;
    int st = KY_OK;
    for (int i = 0; i < hm->nchunk; i++) {
        hm->gop[i] = NULL;
        hm->state[i] = 0;
    }
    /* receives first, so that no chunk waits in an unexpected-message queue */
    for (int i = 0; i < hm->nmsg && !st; i++) {
        kyi_hmsg_t *m = &hm->msg[i];
        if (m->send) continue;
        for (int c = 0; c < m->nchunk; c++) {
            st = kyi_chan_irecv(call, hm->chan, m->peer, m->tag, host_of(hm, m, c), chunk_len(hm, m, c),
                                &hm->req[m->first + c]);
            if (st) break;
            hm->state[m->first + c] = CH_MSG;
        }
    }
    for (int i = 0; i < hm->nmsg && !st; i++) {
        kyi_hmsg_t *m = &hm->msg[i];
        if (!m->send) continue;
        if (m->dev < 0 && m->stage) kyi_pack_host(m->stage, m->box, m->stride, m->count, m->levels);
        for (int c = 0; c < m->nchunk && !st; c++) {
            if (m->dev >= 0) {
                if ((st = gpu_copy(hm, m, c, &hm->gop[m->first + c])))
                    st = kyi_fail(st, call, "copying halo cells from GPU %d: %s", m->dev,
                                  kyi_gpu_last_error());
                hm->state[m->first + c] = CH_COPY;
            } else if ((st = kyi_chan_isend(call, hm->chan, m->peer, m->tag, host_of(hm, m, c),
                                            chunk_len(hm, m, c), &hm->req[m->first + c]))) {
                st = kyi_fail(st, call, "sending halo cells to rank %d", m->world);
            } else
                hm->state[m->first + c] = CH_MSG;
        }
    }
    return st;
}

/* One pass over message m's chunks; returns how many moved on. Sends leave in chunk order (one tag per
 * message), so a chunk whose copy is done waits for the ones before it. */
static int advance(const char *call, struct kyi_halo_mpi *hm, kyi_hmsg_t *m, int *st)
{
    int moved = 0, held = 0;
    for (int c = 0; c < m->nchunk; c++) {
        int j = m->first + c;
        if (hm->state[j] == CH_COPY) {
            int r = held ? 1 : kyi_gpu_op_test(hm->gop[j]);
            if (r == 1) {
                held |= m->send;
                continue;
            }
            kyi_gpu_op_free(hm->gop[j]);
            hm->gop[j] = NULL;
            hm->state[j] = CH_DONE;
            moved++;
            if (r < 0) {
                *st = kyi_fail(KY_ERR_CUDA, call, "halo copy on GPU %d: %s", m->dev, kyi_gpu_last_error());
                continue;
            }
            if (!m->send) continue;
            if (kyi_chan_isend(call, hm->chan, m->peer, m->tag, host_of(hm, m, c), chunk_len(hm, m, c),
                               &hm->req[j])) {
                *st = kyi_fail(KY_ERR_MPI, call, "sending halo cells to rank %d failed", m->world);
                continue;
            }
            hm->state[j] = CH_MSG;
        } else if (hm->state[j] == CH_MSG) {
            int done = 0;
            if (kyi_chan_test(call, &hm->req[j], &done)) {
                *st = kyi_fail(KY_ERR_MPI, call, "halo message %s rank %d failed", m->send ? "to" : "from",
                               m->world);
                hm->state[j] = CH_DONE;
                continue;
            }
            if (!done) continue;
            moved++;
            hm->state[j] = CH_DONE;
            if (m->send || m->dev < 0) continue;
            if (gpu_copy(hm, m, c, &hm->gop[j])) {
                *st = kyi_fail(KY_ERR_CUDA, call, "copying halo cells to GPU %d: %s", m->dev,
                               kyi_gpu_last_error());
                continue;
            }
            hm->state[j] = CH_COPY;
        }
    }
    return moved;
}

int kyi_halo_mpi_finish(const char *call, struct kyi_array *a, int st)
{
    struct kyi_halo_mpi *hm = a->hm;
    if (!hm || !hm->nchunk) return st;
    kyi_waiter_t w;
    kyi_waiter_init(&w, call, "halo cells", -1);
    for (;;) {
        int pending = 0, moved = 0;
        for (int i = 0; i < hm->nmsg; i++) moved += advance(call, hm, &hm->msg[i], &st);
        for (int j = 0; j < hm->nchunk; j++) pending += hm->state[j] != 0 && hm->state[j] != CH_DONE;
        if (!pending) break;
        if (moved)
            kyi_waiter_progress(&w);
        else
            kyi_waiter_pause(&w);
    }
    for (int i = 0; i < hm->nmsg; i++) { /* strided host halos arrive packed */
        kyi_hmsg_t *m = &hm->msg[i];
        if (!m->send && m->dev < 0 && m->stage)
            kyi_unpack_host(m->box, m->stride, m->stage, m->count, m->levels);
    }
    return st;
}
