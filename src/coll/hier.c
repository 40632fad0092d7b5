/* Hierarchical host collectives (issue 4: "across nodes: inside the node, then across"). A team whose
 * members sit on several logical nodes, some node holding two or more of them, runs its blocking
 * allreduce, bcast and barrier in three stages:
 *   1. inside each node, over the node's sub-team (one node: the shared-memory path, shm.c);
 *   2. across the nodes, over the leaders' sub-team (each node's lowest team rank; MPI schedules);
 *   3. inside each node again.
 * So each value crosses between nodes once per node instead of once per rank, and the ranks of a node
 * never exchange MPI messages with one another. The sub-teams are split from the team at its first host
 * collective (collective); which stage runs where follows from the team's member list and the node table
 * alone, so every member decides the same without talking. Persistent plans and allgather stay flat (one
 * schedule over the whole team). GPU buffers take the same stages when the team's GPU path is the staged
 * one (members on several nodes): NVLink inside each node, host staging only across the leaders. */
#include <stdlib.h>
#include <string.h>

#include "coll/hier.h"
#include "runtime/config.h"
#include "runtime/runtime.h"
#include "runtime/log.h"

struct kyi_hier {
    ky_team_t node;      /* my node's members, ranked by team rank: rank 0 is the node's leader */
    ky_team_t leaders;   /* the leaders, ranked by team rank (KY_TEAM_NULL off the leaders) */
};

static int node_of_member(const struct kyi_team *t, int j) { return kyi_rt.node_of[t->world[j]]; }

/* Leader (lowest team rank) of the node of team member j. */
static int leader_of(const struct kyi_team *t, int j)
{
    for (int i = 0; i < t->size; i++)
        if (node_of_member(t, i) == node_of_member(t, j)) return i;
    return j;
}

static int wanted(const struct kyi_team *t)
{
    if (kyi_config_long("KY_COLL_HIER") == 0 || t->size < 3) return 0;
    int nodes = 0, crowded = 0;
    for (int j = 0; j < t->size; j++) {
        int l = leader_of(t, j);
        if (l == j) nodes++;
        else crowded = 1;
    }
    return nodes > 1 && crowded;
}

int kyi_hier_usable(const char *call, struct kyi_team *t, int *yes)
{
    *yes = 0;
    if (t->hier_state == 0) {
        t->hier_state = -1;
        if (wanted(t)) {
            struct kyi_hier *h = calloc(1, sizeof *h);
            int64_t ok = h != NULL;
            KYI_CHECK(kyi_allreduce_min_i64(t, &ok, 1, call));
            if (!ok) {
                free(h);
                return kyi_fail(KY_ERR_NOMEM, call, "no memory for the hierarchical sub-teams");
            }
            int me = t->rank, lead = leader_of(t, me) == me;
            KYI_CHECK(ky_team_split(t, node_of_member(t, me), me, &h->node));
            KYI_CHECK(ky_team_split(t, lead ? 0 : -1, me, &h->leaders));
            t->hier = h;
            t->hier_state = 1;
            KYI_INFO(KYI_SUB_COLL, "%s: team of %d: hierarchical collectives (node of %d, %s)", call, t->size,
                     ky_team_size(h->node), lead ? "leader" : "member");
        }
    }
    *yes = t->hier_state == 1;
    return KY_OK;
}

void kyi_hier_team_free(struct kyi_team *t)
{
    struct kyi_hier *h = t->hier;
    t->hier = NULL;
    t->hier_state = 0;
    if (!h) return;
    ky_team_free(h->node);
    ky_team_free(h->leaders);
    free(h);
}

int kyi_hier_allreduce(struct kyi_team *t, const void *s, void *r, size_t n, ky_dtype_t dt, ky_op_t op)
{
    struct kyi_hier *h = t->hier;
    int lead = h->leaders != KY_TEAM_NULL;
    /* 1. reduce to the node's leader, into its r (the others' r is not written until stage 3) */
    const void *in = s ? s : (lead ? KY_IN_PLACE : r);
    KYI_CHECK(ky_reduce(in, lead ? r : NULL, n, dt, op, 0, h->node));
    /* 2. across the leaders */
    if (lead) KYI_CHECK(ky_allreduce(KY_IN_PLACE, r, n, dt, op, h->leaders));
    /* 3. back inside the node */
    return ky_bcast(r, n * kyi_dtype_size(dt), 0, h->node);
}

int kyi_hier_bcast(struct kyi_team *t, void *buf, size_t bytes, int root)
{
    struct kyi_hier *h = t->hier;
    int me = t->rank, root_leader = leader_of(t, root), mine = leader_of(t, me) == root_leader;
    /* the root's node first: the root hands the data to its leader (node ranks follow team ranks) */
    if (mine) {
        int node_root = 0;
        for (int j = 0; j < root; j++) node_root += leader_of(t, j) == root_leader;
        if (node_root != 0) KYI_CHECK(ky_bcast(buf, bytes, node_root, h->node));
    }
    if (h->leaders != KY_TEAM_NULL) {
        int lr = 0; /* the root's leader among the leaders */
        for (int j = 0; j < root_leader; j++) lr += leader_of(t, j) == j;
        KYI_CHECK(ky_bcast(buf, bytes, lr, h->leaders));
    }
    /* every other node from its leader (the root's node has it already, unless the root led it) */
    int node_root_is_leader = root == root_leader;
    if (!mine || node_root_is_leader) return ky_bcast(buf, bytes, 0, h->node);
    return KY_OK;
}

int kyi_hier_barrier(struct kyi_team *t)
{
    struct kyi_hier *h = t->hier;
    KYI_CHECK(ky_team_barrier(h->node));
    if (h->leaders != KY_TEAM_NULL) KYI_CHECK(ky_team_barrier(h->leaders));
    return ky_team_barrier(h->node);
}
