/* Kyoyu coll: collectives (docs/architecture.md; the TCA CG seed's allgather and allreduce, any rank count).
 *
 * allreduce, allgather, bcast, reduce and barrier over a team: the world team (KY_TEAM_WORLD) or a team split
 * from another (ky_team_split). Every member calls the same collectives on a team in the same order.
 * Algorithms: ring, neighbor exchange, recursive doubling and Bruck/dissemination (the seed's four), for any
 * number of ranks, plus reduce+broadcast for allreduce; chosen by size and rank count unless
 * KY_ALLREDUCE_ALGO / KY_ALLGATHER_ALGO or ky_coll_set_algo force one. A collective that repeats can be
 * planned once (ky_allreduce_init, ky_allgather_init) and started many times.
 *
 * Buffers: host or GPU memory (detected; both buffers of a call of one kind, every member the same kind). GPU
 * buffers of one node's peer-reachable GPUs run NVLink kernels (oneshot, twoshot) with GPU-side flag waits;
 * otherwise they are staged through pinned host memory. docs/api.md, "GPU buffers".
 * KY_CHECK=1 makes every collective first agree on its arguments across the team, so mismatched counts,
 * types, operations or roots return KY_ERR_ARG on every member instead of hanging. */
#ifndef KYOYU_COLL_H
#define KYOYU_COLL_H

#include <stddef.h>
#include "kyoyu/export.h"
#include "kyoyu/status.h"

KY_EXTERN_C_BEGIN

typedef enum { KY_INT32 = 0, KY_INT64 = 1, KY_FLOAT = 2, KY_DOUBLE = 3, KY_DTYPE_COUNT = 4 } ky_dtype_t;
typedef enum { KY_SUM = 0, KY_PROD = 1, KY_MIN = 2, KY_MAX = 3, KY_OP_COUNT = 4 } ky_op_t;

/* A group of ranks with its own numbering 0 .. size-1 and its own private communication context. */
typedef struct kyi_team *ky_team_t;
#define KY_TEAM_WORLD ((ky_team_t)1) /* every rank; needs no set-up */
#define KY_TEAM_NULL ((ky_team_t)0)  /* "no team": what ky_team_split gives a rank with a negative color */

/* Pass as the send buffer for an in-place collective: allreduce/reduce take the input from (and write the
 * result to) the receive buffer; allgather takes this rank's block from its place in the receive buffer. */
#define KY_IN_PLACE ((const void *)1)

/* Collective over parent. Ranks with the same color form a team, numbered by (key, rank in parent); a
 * negative color gives *team = KY_TEAM_NULL. */
KY_API int ky_team_split(ky_team_t parent, int color, int key, ky_team_t *team);
/* Frees a team from ky_team_split (not collective; no collective may be in flight on it). NULL and
 * KY_TEAM_WORLD are ignored. */
KY_API int ky_team_free(ky_team_t team);
/* Rank of the caller in the team / number of members; >= 0, or a negative status. */
KY_API int ky_team_rank(ky_team_t team);
KY_API int ky_team_size(ky_team_t team);

/* r[i] = op over all members of s[i], i < n elements of type t, on every member. */
KY_API int ky_allreduce(const void *s, void *r, size_t n, ky_dtype_t t, ky_op_t op, ky_team_t team);
/* r (size * bytes_each) = the members' s blocks in team-rank order. */
KY_API int ky_allgather(const void *s, size_t bytes_each, void *r, ky_team_t team);
/* buf (bytes) of root copied to every member. */
KY_API int ky_bcast(void *buf, size_t bytes, int root, ky_team_t team);
/* r at root = op over members of s; r is not used elsewhere (may be NULL). */
KY_API int ky_reduce(const void *s, void *r, size_t n, ky_dtype_t t, ky_op_t op, int root, ky_team_t team);
/* Returns on every member after every member entered (dissemination). */
KY_API int ky_team_barrier(ky_team_t team);

/* ---- algorithm choice ---------------------------------------------------------------------------------- */

typedef enum {
    KY_ALGO_AUTO = 0,         /* the selection table (docs/api.md), or the KY_*_ALGO setting */
    KY_ALGO_RING = 1,         /* allgather: p-1 steps; allreduce: reduce-scatter + allgather */
    KY_ALGO_NEIGHBOR = 2,     /* neighbor exchange, p/2 steps (even p; odd p falls back to ring) */
    KY_ALGO_RD = 3,           /* recursive doubling; extra ranks of a non-power of two folded in */
    KY_ALGO_BRUCK = 4,        /* dissemination (Bruck), ceil(log2 p) steps, then a local shift */
    KY_ALGO_REDUCE_BCAST = 5, /* allreduce only: binomial reduce to team rank 0, binomial broadcast */
    KY_ALGO_ONESHOT = 6, /* GPU buffers, one node, NVLink: every GPU reads all peers' inputs (one kernel) */
    KY_ALGO_TWOSHOT = 7, /* allreduce only, GPU, NVLink: reduce-scatter + allgather through peer memory */
    KY_ALGO_SHM = 8,     /* host buffers, every member on one node: through a shared-memory segment */
    KY_ALGO_COUNT = 9
} ky_coll_algo_t;
typedef enum { KY_COLL_ALLREDUCE = 0, KY_COLL_ALLGATHER = 1 } ky_coll_kind_t;

/* Force an algorithm for later allreduces or allgathers of this process (over KY_*_ALGO); KY_ALGO_AUTO goes
 * back to the setting. Every member of a team must have the same choice (KY_CHECK=1 verifies). */
KY_API int ky_coll_set_algo(ky_coll_kind_t kind, ky_coll_algo_t algo);
/* "auto", "ring", "neighbor", "rd", "bruck", "reduce_bcast", "oneshot", "twoshot", "shm"; "?" for anything
 * else. */
KY_API const char *ky_coll_algo_name(ky_coll_algo_t algo);

/* ---- persistent plans ---------------------------------------------------------------------------------- */

typedef struct kyi_coll_plan *ky_coll_plan_t;

/* Collective: check the arguments, choose the algorithm, precompute the schedule (peers, offsets) and
 * allocate scratch. The buffers are bound to the plan; every start uses their contents at that time. */
KY_API int ky_allreduce_init(const void *s, void *r, size_t n, ky_dtype_t t, ky_op_t op, ky_team_t team,
                             ky_coll_plan_t *plan);
KY_API int ky_allgather_init(const void *s, size_t bytes_each, void *r, ky_team_t team, ky_coll_plan_t *plan);
/* Start the planned collective (every member, same order as other collectives of the team). stream must be
 * NULL for host buffers. Host plans make all the progress they can without waiting and finish in
 * ky_coll_wait; starting a host plan that is still in flight is KY_ERR_STATE. GPU plans are enqueued on
 * stream (a cudaStream_t; NULL: the team's blocking stream) without host synchronisation on the NVLink path,
 * may be started back to back and captured in a CUDA graph; the staged path synchronises the stream. */
KY_API int ky_coll_start(ky_coll_plan_t plan, void *stream);
/* Complete the started collective; returns its status. Waiting on a plan not started returns KY_OK. GPU
 * plans: synchronises the stream of the last start (nothing while it is being captured). */
KY_API int ky_coll_wait(ky_coll_plan_t plan);
/* The algorithm the plan runs (after fallbacks, e.g. neighbor on an odd team runs ring; a host plan in
 * hierarchical stages across nodes: the algorithm across the nodes' leaders). */
KY_API int ky_coll_plan_algo(ky_coll_plan_t plan, ky_coll_algo_t *algo);
/* Free a plan that is not in flight (NULL is ignored). Collective for GPU plans on the NVLink path. */
KY_API int ky_coll_free(ky_coll_plan_t plan);

KY_EXTERN_C_END

#endif
