/* Internal: hierarchical collectives for teams spanning several logical nodes (hier.c; persistent plans:
 * hier_plan.c). */
#ifndef KYI_COLL_HIER_H
#define KYI_COLL_HIER_H

#include <stddef.h>

#include "coll/coll.h"

/* The sub-teams of a team that runs hierarchically (t->hier), made at its first collective. */
struct kyi_hier {
    ky_team_t node;    /* my node's members, ranked by team rank: rank 0 is the node's leader */
    ky_team_t leaders; /* the leaders, ranked by team rank (KY_TEAM_NULL off the leaders) */
    /* per team member j (computed once, the same on every member): */
    int *leader;        /* team rank of j's node's leader */
    int *in_node;       /* j's rank in its node's sub-team */
    int *node_index;    /* j's node's rank among the leaders */
    int nodes, largest; /* leaders, and members of the largest node */
};

/* Whether blocking host collectives of t run hierarchically: members on more than one node, some node
 * with two or more, KY_COLL_HIER not 0. The sub-teams are made at the first call (collective over t). */
int kyi_hier_usable(const char *call, struct kyi_team *t, int *yes);
/* The blocking collectives, after argument checks (s NULL: in place; gpu: the buffers are GPU memory). */
int kyi_hier_allreduce(struct kyi_team *t, const void *s, void *r, size_t n, ky_dtype_t dt, ky_op_t op);
int kyi_hier_bcast(struct kyi_team *t, void *buf, size_t bytes, int root);
int kyi_hier_reduce(struct kyi_team *t, const void *s, void *r, size_t n, ky_dtype_t dt, ky_op_t op, int root,
                    int gpu);
int kyi_hier_allgather(struct kyi_team *t, const void *s, size_t b, void *r, int gpu);
int kyi_hier_barrier(struct kyi_team *t);
/* Persistent plans (host buffers) in three stages; *out stays NULL when some member cannot (no shared
 * memory, KY_COLL_SHM=0): the caller builds a flat plan. Collective over t. */
struct kyi_hplan;
int kyi_hplan_allreduce(const char *call, struct kyi_team *t, const void *s, void *r, size_t n, ky_dtype_t dt,
                        ky_op_t op, struct kyi_hplan **out);
int kyi_hplan_allgather(const char *call, struct kyi_team *t, const void *s, size_t b, void *r,
                        struct kyi_hplan **out);
int kyi_hplan_start(struct kyi_hplan *hp);
int kyi_hplan_wait(struct kyi_hplan *hp);
void kyi_hplan_free(struct kyi_hplan *hp);
int kyi_hplan_active(const struct kyi_hplan *hp);
int kyi_hplan_algo(const struct kyi_hplan *hp); /* the algorithm of the stage across the nodes' leaders */
/* The sub-teams, freed (ky_team_free of t: collective like it). */
void kyi_hier_team_free(struct kyi_team *t);

#endif
