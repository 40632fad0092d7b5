/* Hierarchical collectives ("across nodes: inside the node, then across"). A team whose
 * members sit on several logical nodes, some node holding two or more of them, runs its blocking
 * allreduce, allgather, bcast, reduce and barrier in three stages:
 *   1. inside each node, over the node's sub-team (one node: the shared-memory path, shm.c);
 *   2. across the nodes, over the leaders' sub-team (each node's lowest team rank; MPI schedules);
 *   3. inside each node again.
 * So each value crosses between nodes once per node instead of once per rank, and the ranks of a node
 * never exchange MPI messages with one another. The sub-teams are split from the team at its first host
 * collective (collective); which stage runs where follows from the team's member list and the node table
 * alone, so every member decides the same without talking. Allgather: the node's blocks gathered at every
 * member of the node, the leaders exchange their nodes' blocks (padded to the largest node, as the API has
 * no allgatherv), each leader puts every block at its team rank, the node gets the whole result from its
 * leader. Reduce: to each node's leader, across the leaders to the root's leader, and inside the root's
 * node from its leader to the root when the root does not lead. Persistent allreduce and allgather plans
 * take the same stages (hier_plan.c; GPU plans for their staged host part, gpu/gcoll.c). GPU buffers
 * (allreduce, bcast, allgather, reduce) take the same stages when the team's GPU path is the staged one
 * (members on several nodes): NVLink inside each node, host staging only across the leaders; their scratch is
 * GPU memory. */
#include <stdlib.h>
#include <string.h>

#include "coll/hier.h"
#include "coll/shm.h"
#include "runtime/config.h"
#include "runtime/gpu.h"
#include "runtime/runtime.h"
#include "runtime/log.h"

/* Scratch of `bytes` in the memory kind of the collective's buffers (GPU buffers: on this rank's GPU, so
 * the sub-team collectives keep their GPU paths), and copies within it. Failing is fatal: the other
 * members would wait forever. */
static void *scratch(int gpu, size_t bytes, const char *call)
{
    void *p = NULL;
    int st = gpu ? kyi_gpu_malloc(kyi_my_device(), bytes ? bytes : 1, &p)
                 : ((p = calloc(1, bytes ? bytes : 1)) ? KY_OK : KY_ERR_NOMEM);
    if (st || !p)
        kyi_fatal("rank %d: %s: no memory for %zu bytes of hierarchical staging", kyi_rt.rank, call, bytes);
    return p;
}

static void scratch_free(int gpu, void *p)
{
    if (!p) return;
    if (gpu)
        kyi_gpu_free(p);
    else
        free(p);
}

static int copy(int gpu, void *dst, const void *src, size_t n)
{
    if (!n) return KY_OK;
    if (!gpu) {
        memcpy(dst, src, n);
        return KY_OK;
    }
    int st = kyi_gpu_copy(kyi_my_device(), dst, src, n);
    return st ? kyi_fail(st, "hierarchical collective", "GPU copy of %zu bytes: %s", n, kyi_gpu_last_error())
              : KY_OK;
}

static int node_of_member(const struct kyi_team *t, int j)
{
    return kyi_rt.node_of[t->world[j]];
}

/* Leader (lowest team rank) of the node of team member j. */
static int leader_of(const struct kyi_team *t, int j)
{
    for (int i = 0; i < t->size; i++)
        if (node_of_member(t, i) == node_of_member(t, j)) return i;
    return j;
}

static int wanted(const struct kyi_team *t)
{
    if (kyi_setting_long(KYI_SET_COLL_HIER) == 0 || t->size < 3) return 0;
    int nodes = 0, crowded = 0;
    for (int j = 0; j < t->size; j++) {
        int l = leader_of(t, j);
        if (l == j)
            nodes++;
        else
            crowded = 1;
    }
    return nodes > 1 && crowded;
}

int kyi_hier_usable(const char *call, struct kyi_team *t, int *yes)
{
    *yes = 0;
    if (t->hier_state == 0) {
        t->hier_state = -1;
        if (wanted(t)) {
            int me = t->rank, p = t->size, lead = leader_of(t, me) == me;
            struct kyi_hier *h = calloc(1, sizeof *h);
            int *seen = calloc((size_t)p, sizeof(int)); /* members counted so far per leader */
            if (h) h->leader = malloc(sizeof(int) * 3 * (size_t)p);
            int64_t ok = h && h->leader && seen;
            KYI_CHECK(kyi_allreduce_min_i64(t, &ok, 1, call)); /* nobody splits unless everybody can */
            if (!ok) {
                if (h) free(h->leader);
                free(h);
                free(seen);
                return kyi_fail(KY_ERR_NOMEM, call,
                                "no memory for the hierarchical sub-teams (here or on another member)");
            }
            h->in_node = h->leader + p;
            h->node_index = h->leader + 2 * p;
            for (int j = 0; j < p; j++) {
                int l = h->leader[j] = leader_of(t, j);
                h->in_node[j] = seen[l]++;
                if (seen[l] > h->largest) h->largest = seen[l];
            }
            for (int j = 0; j < p; j++) /* nodes numbered by their leaders' team ranks */
                if (h->leader[j] == j) seen[j] = h->nodes++;
            for (int j = 0; j < p; j++) h->node_index[j] = seen[h->leader[j]];
            free(seen);
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
    free(h->leader);
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

int kyi_hier_reduce(struct kyi_team *t, const void *s, void *r, size_t n, ky_dtype_t dt, ky_op_t op, int root,
                    int gpu)
{
    struct kyi_hier *h = t->hier;
    int lead = h->leaders != KY_TEAM_NULL, me = t->rank, root_leader = h->leader[root];
    int in_root_node = h->leader[me] == root_leader, relay = root != root_leader && in_root_node;
    size_t bytes = n * kyi_dtype_size(dt);
    KYI_TRACE(KYI_SUB_COLL, "ky_reduce: hierarchical, root %d (its leader %d), %zu bytes", root, root_leader,
              bytes);
    /* Leaders other than the root accumulate in scratch (r is the root's alone); so do the root's node's
     * other members, which receive the relay of stage 3. */
    void *tmp = (lead || relay) && me != root ? scratch(gpu, bytes, "ky_reduce") : NULL;
    void *acc = me == root ? r : tmp;
    /* 1. to the node's leader (node rank 0); the data is in s, or in r on an in-place root */
    const void *mine = s ? s : r;
    int st = ky_reduce(lead && mine == acc ? KY_IN_PLACE : mine, lead ? acc : NULL, n, dt, op, 0, h->node);
    /* 2. across the leaders, to the root's leader */
    if (lead && !st)
        st = ky_reduce(me == root_leader ? KY_IN_PLACE : acc, me == root_leader ? acc : NULL, n, dt, op,
                       h->node_index[root], h->leaders);
    /* 3. the root's node, when the root does not lead it: from the leader (every member takes part) */
    if (relay) {
        int s3 = ky_bcast(acc, bytes, 0, h->node);
        if (!st) st = s3;
    }
    scratch_free(gpu, tmp);
    return st;
}

int kyi_hier_bcast(struct kyi_team *t, void *buf, size_t bytes, int root)
{
    struct kyi_hier *h = t->hier;
    int root_leader = h->leader[root], mine = h->leader[t->rank] == root_leader;
    /* the root's node first: the root hands the data to its leader (node ranks follow team ranks) */
    if (mine && h->in_node[root] != 0) KYI_CHECK(ky_bcast(buf, bytes, h->in_node[root], h->node));
    if (h->leaders != KY_TEAM_NULL) KYI_CHECK(ky_bcast(buf, bytes, h->node_index[root], h->leaders));
    /* every other node from its leader (the root's node has it already, unless the root led it) */
    int node_root_is_leader = root == root_leader;
    if (!mine || node_root_is_leader) return ky_bcast(buf, bytes, 0, h->node);
    return KY_OK;
}

int kyi_hier_allgather(struct kyi_team *t, const void *s, size_t b, void *r, int gpu)
{
    struct kyi_hier *h = t->hier;
    int p = t->size, lead = h->leaders != KY_TEAM_NULL;
    const char *mine = s ? s : (const char *)r + (size_t)t->rank * b;
    size_t node_bytes = (size_t)h->largest * b;
    /* 1. the node's blocks at every member of the node (node ranks follow team ranks) */
    char *nodebuf = scratch(gpu, node_bytes, "ky_allgather");
    char *all = lead ? scratch(gpu, (size_t)h->nodes * node_bytes, "ky_allgather") : NULL;
    int st = ky_allgather(mine, b, nodebuf, h->node);
    /* 2. the leaders exchange whole nodes; each puts every block at its member's team rank */
    if (lead) {
        int s2 = ky_allgather(nodebuf, node_bytes, all, h->leaders);
        if (!st) st = s2;
        for (int j = 0; j < p && !st; j++)
            st = copy(gpu, (char *)r + (size_t)j * b,
                      all + (size_t)h->node_index[j] * node_bytes + (size_t)h->in_node[j] * b, b);
    }
    /* 3. the whole result from the leader to its node */
    int s3 = ky_bcast(r, (size_t)p * b, 0, h->node);
    if (!st) st = s3;
    scratch_free(gpu, all);
    scratch_free(gpu, nodebuf);
    return st;
}

int kyi_hier_barrier(struct kyi_team *t)
{
    struct kyi_hier *h = t->hier;
    KYI_CHECK(ky_team_barrier(h->node));
    if (h->leaders != KY_TEAM_NULL) KYI_CHECK(ky_team_barrier(h->leaders));
    return ky_team_barrier(h->node);
}
