/* Internal: initiator side of the MPI path (mpi_ops.c). Each fills h's requests; completion (ky_wait,
 * kyi_handle_complete) checks the target's status. hdr is copied; the caller sets op, seg, off, n, args. */
#ifndef KYI_COMM_MPI_OPS_H
#define KYI_COMM_MPI_OPS_H

#include "comm/comm.h"
#include "comm/proto.h"

int kyi_mpi_put(kyi_handle_t *h, kyi_hdr_t *hdr, const void *src, int src_dev, int remote_gpu);
int kyi_mpi_get(kyi_handle_t *h, kyi_hdr_t *hdr, void *dst, int dst_dev, int remote_gpu);
/* A request with no payload either way, acknowledged with a status (memset). */
int kyi_mpi_simple(kyi_handle_t *h, kyi_hdr_t *hdr);

#endif
