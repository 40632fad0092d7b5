/* Internal, for the layers above comm (with chan.h and pack.h): direct access to a same-node rank's piece of
 * a segment, for a layer that copies into it itself (shmem's puts and gets on its heap), counted in comm's
 * statistics like comm's own direct copies. */
#ifndef KYI_COMM_DIRECT_H
#define KYI_COMM_DIRECT_H

#include <stddef.h>

#include "kyoyu/comm.h"

/* Where rank's piece of seg is mapped in this process (this rank's own, or a same-node host piece in shared
 * memory), or NULL: then only comm's transfers reach it. */
void *kyi_seg_peer_base(ky_seg_t seg, int rank);
/* -1 for host memory, else the GPU holding p (path.c). */
int kyi_ptr_dev(const void *p);
/* Count a transfer of n bytes that took path p outside comm (ky_comm_stats). */
void kyi_count_path(ky_path_t p, size_t n);
/* Count ops transfers of bytes in all at once (a layer that tallies its copies and adds them later). */
void kyi_count_paths(ky_path_t p, size_t ops, size_t bytes);

#endif
