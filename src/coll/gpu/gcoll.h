/* Internal: GPU collectives, the part of the coll layer that handles GPU buffers (coll_api.c calls it when
 * a collective's buffers are GPU memory). Paths:
 *   nvl     every member on one node, GPUs peer-reachable: NVLink kernels (nvl.h), one launch per call
 *   staged  otherwise (across nodes, KY_NODE_SPLIT=rank, KY_PATH_GPU=mpi, no peer access): copy to pinned
 *           host memory, the host schedule of the chosen algorithm, copy back
 * A team keeps a GPU context made at its first GPU collective (collective): the path, a blocking stream
 * for calls without one, an NVLink context for blocking calls (grown when a call needs more scratch) and a
 * pinned staging buffer. A plan owns its own NVLink context or staging buffer, made at init.
 * The CPU-only build links gcoll_none.c: no buffer is ever GPU memory there. */
#ifndef KYI_COLL_GPU_GCOLL_H
#define KYI_COLL_GPU_GCOLL_H

#include <stddef.h>

#include "coll/coll.h"

enum { KYI_GPATH_NVL = 1, KYI_GPATH_STAGED = 2 };

/* 1 if p is GPU memory (NULL and KY_IN_PLACE: 0). */
int kyi_gcoll_is_gpu(const void *p);
/* Whether the team's GPU collectives take the NVLink path (makes the team's GPU context: collective). */
int kyi_gcoll_path(const char *call, struct kyi_team *t, int *path);

/* Build pl->gpu for a collective on GPU buffers (pl->team, call, dtype, op, algo already set; algo is the
 * chosen one, never auto). persistent: a plan (own NVLink context or staging) rather than a blocking call.
 * root < 0: allreduce; else ky_reduce to root. */
int kyi_gcoll_allreduce(struct kyi_coll_plan *pl, const void *s, void *r, size_t n, int in_place, int root,
                        int persistent);
int kyi_gcoll_allgather(struct kyi_coll_plan *pl, const void *s, size_t b, void *r, int in_place,
                        int persistent);
int kyi_gcoll_bcast(struct kyi_coll_plan *pl, void *buf, size_t bytes, int root);
/* Enqueue on stream (NULL: the team's blocking stream). */
int kyi_gcoll_start(struct kyi_coll_plan *pl, void *stream);
/* Synchronise the stream of the last start (nothing while that stream is being captured). */
int kyi_gcoll_wait(struct kyi_coll_plan *pl);
/* Release pl->gpu (collective when the plan owns an NVLink context: peers may still read its scratch). */
int kyi_gcoll_release(struct kyi_coll_plan *pl);
/* Free the team's GPU context (collective over the team if it has an NVLink context). */
void kyi_gcoll_team_free(struct kyi_team *t);

#endif
