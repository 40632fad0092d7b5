/* ky_himeno's baseline: the halo exchange a programmer writes by hand with MPI and CUDA and no CUDA-aware
 * MPI (what seed 004 compared with): per dimension (k, j, i, the same boxes as the Kyoyu variant) pack each
 * face (a kernel on the GPU, a loop on the CPU), copy it to pinned host memory, MPI_Irecv/MPI_Isend to both
 * neighbours, MPI_Waitall, copy back to the GPU and unpack. Host runs skip the copies. */
#include <stdlib.h>

#include <mpi.h>

#include "himeno.h"

struct hg_mpi_halo {
    const hg_opts_t *o;
    hg_block_t b, nb[3][2];
    float *dsend[3][2], *drecv[3][2]; /* GPU staging (GPU runs) */
    float *hsend[3][2], *hrecv[3][2]; /* host buffers (pinned for GPU runs) */
    char err[256];
};

int hg_mpi_halo_create(const hg_opts_t *o, const hg_block_t *b, hg_mpi_halo_t **out)
{
    struct hg_mpi_halo *h = calloc(1, sizeof *h);
    if (!h) return -1;
    h->o = o, h->b = *b;
    size_t fb = b->slot * sizeof(float);
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            if (b->nbr[d][s] < 0) continue;
            hg_block_of(o, b->nbr[d][s], &h->nb[d][s]);
            if (o->gpu) {
                if (hg_gpu_alloc((void **)&h->dsend[d][s], fb, h->err, sizeof h->err) ||
                    hg_gpu_alloc((void **)&h->drecv[d][s], fb, h->err, sizeof h->err) ||
                    hg_gpu_host_alloc((void **)&h->hsend[d][s], fb, h->err, sizeof h->err) ||
                    hg_gpu_host_alloc((void **)&h->hrecv[d][s], fb, h->err, sizeof h->err))
                    hg_fail("rank %d: MPI baseline buffers: %s", b->rank, h->err);
            } else if (!(h->hsend[d][s] = malloc(fb)) || !(h->hrecv[d][s] = malloc(fb))) {
                hg_fail("rank %d: MPI baseline buffers: out of memory", b->rank);
            }
        }
    *out = h;
    return 0;
}

void hg_mpi_halo_destroy(hg_mpi_halo_t *h)
{
    if (!h) return;
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            if (h->o->gpu) {
                hg_gpu_free(h->dsend[d][s]), hg_gpu_free(h->drecv[d][s]);
                hg_gpu_host_free(h->hsend[d][s]), hg_gpu_host_free(h->hrecv[d][s]);
            } else {
                free(h->hsend[d][s]), free(h->hrecv[d][s]);
            }
        }
    free(h);
}

#define HG_CHK(x)                                                             \
    do {                                                                      \
        if (x) hg_fail("rank %d: MPI baseline: %s: %s", b->rank, #x, h->err); \
    } while (0)

int hg_mpi_halo_exchange(hg_mpi_halo_t *h, float *field)
{
    const hg_block_t *b = &h->b;
    for (int d = 2; d >= 0; d--) {
        MPI_Request rq[4];
        int nr = 0;
        hg_box_t send[2], dst[2], recv[2];
        size_t cnt[2] = {0, 0};
        for (int s = 0; s < 2; s++) {
            if (b->nbr[d][s] < 0) continue;
            hg_face_boxes(b, &h->nb[d][s], d, s, &send[s], &dst[s], &recv[s]);
            cnt[s] = hg_box_count(&send[s]);
            if (h->o->gpu) {
                HG_CHK(hg_gpu_pack(b, field, &send[s], h->dsend[d][s], h->err, sizeof h->err));
                HG_CHK(hg_gpu_copy(h->hsend[d][s], h->dsend[d][s], cnt[s] * sizeof(float), h->err,
                                   sizeof h->err));
            } else {
                hg_cpu_pack(b, field, &send[s], h->hsend[d][s]);
            }
        }
        for (int s = 0; s < 2; s++) {
            if (b->nbr[d][s] < 0) continue;
            /* tag = the sender's side, seen from the receiver: 2d + (1 - s) for what we send to side s */
            if (MPI_Irecv(h->hrecv[d][s], (int)hg_box_count(&recv[s]), MPI_FLOAT, b->nbr[d][s], 2 * d + s,
                          MPI_COMM_WORLD, &rq[nr++]) != MPI_SUCCESS ||
                MPI_Isend(h->hsend[d][s], (int)cnt[s], MPI_FLOAT, b->nbr[d][s], 2 * d + 1 - s, MPI_COMM_WORLD,
                          &rq[nr++]) != MPI_SUCCESS)
                hg_fail("rank %d: MPI baseline: MPI_Irecv/MPI_Isend to rank %d failed", b->rank,
                        b->nbr[d][s]);
        }
        if (MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            hg_fail("rank %d: MPI baseline: MPI_Waitall failed", b->rank);
        for (int s = 0; s < 2; s++) {
            if (b->nbr[d][s] < 0) continue;
            size_t n = hg_box_count(&recv[s]);
            if (h->o->gpu) {
                HG_CHK(hg_gpu_copy(h->drecv[d][s], h->hrecv[d][s], n * sizeof(float), h->err, sizeof h->err));
                HG_CHK(hg_gpu_unpack(b, field, &recv[s], h->drecv[d][s], h->err, sizeof h->err));
            } else {
                hg_cpu_unpack(b, field, &recv[s], h->hrecv[d][s]);
            }
        }
        if (h->o->gpu) HG_CHK(hg_gpu_sync(h->err, sizeof h->err));
    }
    return 0;
}
