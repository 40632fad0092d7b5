/* Internal: host collectives through a shared-memory segment when every member of a team is on one node
 * (shm.c explains the layout and the protocol). exec.c runs plans that carry a shm op; coll_api.c builds
 * them. */
#ifndef KYI_COLL_SHM_H
#define KYI_COLL_SHM_H

#include <stddef.h>

#include "coll/coll.h"

enum {
    KYI_SHM_NONE = 0,
    KYI_SHM_ALLREDUCE,
    KYI_SHM_ALLGATHER,
    KYI_SHM_BCAST,
    KYI_SHM_REDUCE,
    KYI_SHM_BARRIER
};

/* Whether collectives of `t` on host memory take the segment (made at the first call: collective over the
 * team; KY_COLL_SHM=0, members on several nodes or a failed set-up: no). */
int kyi_shm_usable(const char *call, struct kyi_team *t, int *yes);
/* Make pl (team and call set) a shared-memory collective of kind KYI_SHM_* (s NULL: in place; r NULL:
 * no output; n: elements or, for allgather and bcast, bytes). */
void kyi_shm_op(struct kyi_coll_plan *pl, int kind, const void *s, void *r, size_t n, int root);
/* Start queues the plan (never waits); wait runs the team's queue up to and including pl. Blocking calls
 * are a start and a wait. */
int kyi_shm_start(struct kyi_coll_plan *pl);
int kyi_shm_wait(struct kyi_coll_plan *pl);
/* The team's segment, unmapped (ky_team_free). */
void kyi_shm_team_free(struct kyi_team *t);

#endif
