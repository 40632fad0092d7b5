/* ky_himeno's halos on Kyoyu's one-sided layer (seed 004: put/puts + AM_Short in place of MPI sends).
 *
 * Each rank's two p buffers (p and wrk2, swapped every iteration) and twelve receive slots for packed faces
 * (six per buffer) live in one segment (GPU memory for GPU runs), so a neighbour's ghost layer is (rank,
 * segment, offset).
 * The exchange runs the dimensions k, j, i in turn; a face carries the ghost layers of the dimensions already
 * done, so the edge ghosts the 19-point stencil reads (i-j, j-k, i-k) arrive without diagonal messages and
 * every ghost is written exactly once. Per dimension: put both faces (ky_put_strided_nb of the box, or a
 * packed face by one ky_put_nb), wait for them (a completed put is in the target's memory), then write the
 * iteration number into the neighbour's flag word in a host segment (ky_put_val), and spin on our own flags.
 * The same calls repeat every iteration with the same arguments, so the layer replays them from its plan
 * cache (the seed's descriptor cache; plan_hits in ky_comm_stats). No ready-to-receive handshake is needed:
 * a rank writes buffer B's ghosts while its neighbour's kernel reads buffer A, and it reaches the next
 * iteration's writes into A only after that neighbour's flag of this iteration, which the neighbour writes
 * after everything of its kernel that reads ghosts (the whole kernel, or with --overlap its face slabs: the
 * interior reads none) and after unpacking the faces of the iterations before; packed faces land in the
 * slots of the buffer they belong to, so the next iteration's cannot overwrite a slot not yet unpacked. No
 * gosa reduction between iterations is needed for any of it (--gosa-defer). */
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <kyoyu.h>

#include "himeno.h"

#define HG_FLAG_TIMEOUT 300.0

struct hg_ky_halo {
    const hg_opts_t *o;
    hg_block_t b, nb[3][2];
    ky_seg_t field, flags;
    char *base;              /* this rank's piece of field */
    int poll;                /* no progress thread: every wait runs the layer's progress */
    volatile uint64_t *flag; /* this rank's 6 flag words: [d * 2 + side] written by that side's neighbour */
    float *sendbuf[3][2];    /* packed faces (GPU or host memory, private) */
    char err[256];
};

size_t hg_box_count(const hg_box_t *x)
{
    size_t n = 1;
    for (int d = 0; d < 3; d++) n *= (size_t)(x->hi[d] > x->lo[d] ? x->hi[d] - x->lo[d] : 0);
    return n;
}

void hg_face_boxes(const hg_block_t *b, const hg_block_t *nb, int d, int s, hg_box_t *send, hg_box_t *dst,
                   hg_box_t *recv)
{
    for (int e = 0; e < 3; e++) {
        /* dimensions exchanged earlier (e > d: k first) travel with their ghosts, the others without */
        int lo = e > d ? 0 : 1, hi = e > d ? b->ext[e] : b->n[e] + 1;
        send->lo[e] = dst->lo[e] = recv->lo[e] = lo;
        send->hi[e] = dst->hi[e] = recv->hi[e] = hi;
    }
    send->lo[d] = s ? b->n[d] : 1;
    send->hi[d] = send->lo[d] + 1;
    dst->lo[d] = s ? 0 : nb->n[d] + 1;
    dst->hi[d] = dst->lo[d] + 1;
    recv->lo[d] = s ? b->n[d] + 1 : 0;
    recv->hi[d] = recv->lo[d] + 1;
}

static size_t idx(const hg_block_t *b, const int l[3])
{
    return ((size_t)l[0] * b->ext[1] + (size_t)l[1]) * b->ext[2] + (size_t)l[2];
}

static size_t slot_off(const hg_block_t *nb, int buf, int d, int s)
{
    return (2 * nb->vol + (size_t)(buf * 6 + d * 2 + s) * nb->slot) * sizeof(float);
}

/* The box as a GASNet-VIS strided put: contiguous k runs, merged with j (and i) where whole rows (planes)
 * are contiguous on both sides; levels of one block are dropped. */
static int put_box(struct hg_ky_halo *h, int rank, const hg_block_t *nb, int buf, const hg_box_t *src,
                   const hg_box_t *dst, ky_handle_t *hd)
{
    const hg_block_t *b = &h->b;
    int n[3];
    for (int e = 0; e < 3; e++) n[e] = src->hi[e] - src->lo[e];
    size_t soff = (buf * b->vol + idx(b, src->lo)) * sizeof(float);
    size_t doff = (buf * nb->vol + idx(nb, dst->lo)) * sizeof(float);
    size_t count[4] = {(size_t)n[2] * sizeof(float), 0, 0, 0}, ss[3], ds[3];
    size_t sst[2] = {(size_t)b->ext[2] * sizeof(float), (size_t)b->ext[1] * b->ext[2] * sizeof(float)};
    size_t dst_[2] = {(size_t)nb->ext[2] * sizeof(float), (size_t)nb->ext[1] * nb->ext[2] * sizeof(float)};
    int levels = 0, jfull = n[2] == b->ext[2] && n[2] == nb->ext[2];
    if (jfull)
        count[0] *= (size_t)n[1]; /* whole rows: the j runs are one block */
    else if (n[1] > 1)
        ss[levels] = sst[0], ds[levels] = dst_[0], count[++levels] = (size_t)n[1];
    if (jfull && n[1] == b->ext[1] && n[1] == nb->ext[1])
        count[0] *= (size_t)n[0]; /* whole planes */
    else if (n[0] > 1)
        ss[levels] = sst[1], ds[levels] = dst_[1], count[++levels] = (size_t)n[0];
    const char *s = h->base + soff;
    if (levels == 0) return ky_put_nb(rank, h->field, doff, s, count[0], hd);
    return ky_put_strided_nb(rank, h->field, doff, ds, s, ss, count, levels, hd);
}

int hg_ky_halo_create(const hg_opts_t *o, const hg_block_t *b, hg_ky_halo_t **out, float **f0, float **f1)
{
    struct hg_ky_halo *h = calloc(1, sizeof *h);
    if (!h) return KY_ERR_NOMEM;
    h->o = o, h->b = *b;
    int dev = 0, rc;
    if (o->gpu && (rc = ky_gpu_device(0, &dev)) != KY_OK) goto fail;
    size_t bytes = (2 * b->vol + 12 * b->slot) * sizeof(float);
    if ((rc = ky_seg_create(NULL, bytes, o->gpu ? KY_MEM_GPU : KY_MEM_HOST, dev, &h->field)) != KY_OK)
        goto fail;
    if ((rc = ky_seg_create(NULL, 8 * sizeof(uint64_t), KY_MEM_HOST, 0, &h->flags)) != KY_OK) goto fail;
    void *p;
    if ((rc = ky_seg_local(h->field, &p, NULL)) != KY_OK) goto fail;
    h->base = p;
    if ((rc = ky_seg_local(h->flags, &p, NULL)) != KY_OK) goto fail;
    h->flag = p;
    for (int s = 0; s < 8; s++) h->flag[s] = 0;
    const char *pt = NULL;
    h->poll = ky_config_get("KY_PROGRESS_THREAD", &pt) == KY_OK && pt && !strcmp(pt, "0");
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            if (b->nbr[d][s] < 0) continue;
            hg_block_of(o, b->nbr[d][s], &h->nb[d][s]);
            if (!(o->pack >> d & 1)) continue;
            size_t fb = b->slot * sizeof(float);
            if (o->gpu) {
                if (hg_gpu_alloc((void **)&h->sendbuf[d][s], fb, h->err, sizeof h->err)) {
                    fprintf(stderr, "ky_himeno: rank %d: face buffer: %s\n", b->rank, h->err);
                    rc = KY_ERR_NOMEM;
                    goto fail;
                }
            } else if (!(h->sendbuf[d][s] = malloc(fb))) {
                rc = KY_ERR_NOMEM;
                goto fail;
            }
        }
    /* every rank's flags are zero before anyone writes one */
    if ((rc = ky_comm_barrier()) != KY_OK) goto fail;
    *f0 = (float *)h->base, *f1 = (float *)h->base + b->vol;
    *out = h;
    return KY_OK;
fail:
    /* local clean-up only: ky_seg_destroy is collective and the other ranks may not have failed; the caller
     * ends the job */
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            if (o->gpu)
                hg_gpu_free(h->sendbuf[d][s]);
            else
                free(h->sendbuf[d][s]);
        }
    free(h);
    return rc;
}

void hg_ky_halo_destroy(hg_ky_halo_t *h)
{
    if (!h) return;
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            if (h->o->gpu)
                hg_gpu_free(h->sendbuf[d][s]);
            else
                free(h->sendbuf[d][s]);
        }
    /* collective; a failure here leaves nothing to undo, but it is said */
    if (h->field && ky_seg_destroy(h->field) != KY_OK)
        fprintf(stderr, "ky_himeno: rank %d: ky_seg_destroy(field): %s\n", h->b.rank, ky_last_error());
    if (h->flags && ky_seg_destroy(h->flags) != KY_OK)
        fprintf(stderr, "ky_himeno: rank %d: ky_seg_destroy(flags): %s\n", h->b.rank, ky_last_error());
    free(h);
}

static int wait_flag(struct hg_ky_halo *h, int slot, uint64_t seq, int from)
{
    double t0 = hg_now();
    unsigned spins = 0;
    while (__atomic_load_n(&h->flag[slot], __ATOMIC_ACQUIRE) < seq) {
        /* as gosa.c's waits: this rank runs the layer's progress itself, every 64th turn where a progress
         * thread does it (which sleeps where ranks fill the cores) */
        if (h->poll || spins % 64 == 63) {
            int r = ky_poll();
            if (r < 0) return r;
        }
        /* ranks may outnumber cores (CI): let the progress thread that delivers the flag run */
        if (++spins % 64 == 0) sched_yield();
        if (spins % 4096 == 0 && hg_now() - t0 > HG_FLAG_TIMEOUT)
            hg_fail("rank %d: halo: no face from rank %d after %.0f s (iteration flag %llu)", h->b.rank, from,
                    HG_FLAG_TIMEOUT, (unsigned long long)seq);
    }
    return KY_OK;
}

int hg_ky_halo_exchange(hg_ky_halo_t *h, int buf, uint64_t seq)
{
    const hg_block_t *b = &h->b;
    float *field = (float *)h->base + (size_t)buf * b->vol;
    for (int d = 2; d >= 0; d--) {
        ky_handle_t hd[2] = {NULL, NULL};
        int packed = h->o->pack >> d & 1, rc;
        hg_box_t send[2], dst[2], recv[2];
        for (int s = 0; s < 2; s++)
            if (b->nbr[d][s] >= 0) hg_face_boxes(b, &h->nb[d][s], d, s, &send[s], &dst[s], &recv[s]);
        if (packed) {
            for (int s = 0; s < 2; s++) {
                if (b->nbr[d][s] < 0) continue;
                if (!h->o->gpu)
                    hg_cpu_pack(b, field, &send[s], h->sendbuf[d][s]);
                else if (hg_gpu_pack(b, field, &send[s], h->sendbuf[d][s], h->err, sizeof h->err))
                    hg_fail("rank %d: halo: packing the %c face: %s", b->rank, "ijk"[d], h -> err);
            }
            if (h->o->gpu && hg_gpu_sync(h->err, sizeof h->err))
                hg_fail("rank %d: halo: %s", b->rank, h->err);
        }
        for (int s = 0; s < 2; s++) {
            int r = b->nbr[d][s];
            if (r < 0) continue;
            if (packed)
                rc = ky_put_nb(r, h->field, slot_off(&h->nb[d][s], buf, d, 1 - s), h->sendbuf[d][s],
                               hg_box_count(&send[s]) * sizeof(float), &hd[s]);
            else
                rc = put_box(h, r, &h->nb[d][s], buf, &send[s], &dst[s], &hd[s]);
            if (rc != KY_OK) return rc;
        }
        if ((rc = ky_wait_all(hd, 2)) != KY_OK) return rc;
        for (int s = 0; s < 2; s++)
            if (b->nbr[d][s] >= 0 &&
                (rc = ky_put_val(b->nbr[d][s], h->flags, (size_t)(d * 2 + 1 - s) * sizeof(uint64_t), seq,
                                 8)) != KY_OK)
                return rc;
        for (int s = 0; s < 2; s++)
            if (b->nbr[d][s] >= 0 && (rc = wait_flag(h, d * 2 + s, seq, b->nbr[d][s])) != KY_OK) return rc;
        if (packed) {
            for (int s = 0; s < 2; s++) {
                if (b->nbr[d][s] < 0) continue;
                const float *slot = (const float *)(h->base + slot_off(b, buf, d, s));
                if (!h->o->gpu)
                    hg_cpu_unpack(b, field, &recv[s], slot);
                else if (hg_gpu_unpack(b, field, &recv[s], slot, h->err, sizeof h->err))
                    hg_fail("rank %d: halo: unpacking the %c face: %s", b->rank, "ijk"[d], h -> err);
            }
            /* the next dimension's faces carry these ghosts */
            if (h->o->gpu && hg_gpu_sync(h->err, sizeof h->err))
                hg_fail("rank %d: halo: %s", b->rank, h->err);
        }
    }
    return KY_OK;
}
