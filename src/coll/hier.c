/* Hierarchical collectives (issue 4: "across nodes: inside the node, then across"). A team whose
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
 * take the same stages (end of file; GPU plans for their staged host part, gpu/gcoll.c). GPU buffers (allreduce,
 * bcast, allgather, reduce) take the same stages when the team's GPU path is the staged one (members on
 * several nodes): NVLink inside each node, host staging only across the leaders; their scratch is GPU
 * memory. */
#include <stdlib.h>
#include <string.h>

#include "coll/hier.h"
#include "coll/shm.h"
#include "runtime/config.h"
#include "runtime/gpu.h"
#include "runtime/runtime.h"
#include "runtime/log.h"

struct kyi_hier {
    ky_team_t node;      /* my node's members, ranked by team rank: rank 0 is the node's leader */
    ky_team_t leaders;   /* the leaders, ranked by team rank (KY_TEAM_NULL off the leaders) */
    /* per team member j (computed once, the same on every member): */
    int *leader;         /* team rank of j's node's leader */
    int *in_node;        /* j's rank in its node's sub-team */
    int *node_index;     /* j's node's rank among the leaders */
    int nodes, largest;  /* leaders, and members of the largest node */
};

/* Scratch of `bytes` in the memory kind of the collective's buffers (GPU buffers: on this rank's GPU, so
 * the sub-team collectives keep their GPU paths), and copies within it. Failing is fatal: the other
 * members would wait forever. */
static void *scratch(int gpu, size_t bytes, const char *call)
{
    void *p = NULL;
    int st = gpu ? kyi_gpu_malloc(kyi_my_device(), bytes ? bytes : 1, &p) : ((p = calloc(1, bytes ? bytes : 1)) ? KY_OK : KY_ERR_NOMEM);
    if (st || !p) kyi_fatal("rank %d: %s: no memory for %zu bytes of hierarchical staging", kyi_rt.rank, call, bytes);
    return p;
}

static void scratch_free(int gpu, void *p)
{
    if (!p) return;
    if (gpu) kyi_gpu_free(p);
    else free(p);
}

static int copy(int gpu, void *dst, const void *src, size_t n)
{
    if (!n) return KY_OK;
    if (!gpu) {
        memcpy(dst, src, n);
        return KY_OK;
    }
    int st = kyi_gpu_copy(kyi_my_device(), dst, src, n);
    return st ? kyi_fail(st, "hierarchical collective", "GPU copy of %zu bytes: %s", n, kyi_gpu_last_error()) : KY_OK;
}

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
                return kyi_fail(KY_ERR_NOMEM, call, "no memory for the hierarchical sub-teams (here or on another member)");
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
    KYI_TRACE(KYI_SUB_COLL, "ky_reduce: hierarchical, root %d (its leader %d), %zu bytes", root, root_leader, bytes);
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
            st = copy(gpu, (char *)r + (size_t)j * b, all + (size_t)h->node_index[j] * node_bytes + (size_t)h->in_node[j] * b, b);
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

/* ---- persistent plans (host buffers) -------------------------------------------------------------------- *
 * The same three stages, built once: shared-memory plans on the node sub-team for stages 1 and 3 (a team
 * node is one node, so its collectives always have the segment unless KY_COLL_SHM=0), a plan of the public
 * API on the leaders' sub-team for stage 2. Start queues stages 1 and 3 on the node's segment, so every
 * member runs them in start order whatever order it waits in; stage 1's hook starts stage 2 on the leader
 * (so the leaders start their stage-2 plans in start order too: their tags agree), stage 3's hook waits for
 * it first. The collective advances inside ky_coll_wait (or any wait that drains the node's queue), as
 * MPI's do. */
struct kyi_hplan {
    struct kyi_coll_plan in, out; /* stage 1 (node reduce / allgather) and 3 (node bcast) */
    ky_coll_plan_t across;        /* stage 2, leaders only */
    char *nodebuf, *all;          /* allgather: this node's blocks; every node's (leaders) */
    void *r;
    size_t b;                     /* allgather: bytes per member */
    struct kyi_team *t;
    int active;
    int algo;                     /* what ky_coll_plan_algo reports: the algorithm across the leaders */
};

static int start_across(void *arg)
{
    struct kyi_hplan *hp = arg;
    return hp->across ? ky_coll_start(hp->across, NULL) : KY_OK;
}

static int finish_across(void *arg)
{
    struct kyi_hplan *hp = arg;
    if (!hp->across) return KY_OK;
    int st = ky_coll_wait(hp->across);
    struct kyi_hier *h = hp->t->hier;
    if (hp->b && !st) /* allgather: every block to its member's place */
        for (int j = 0; j < hp->t->size; j++)
            memcpy((char *)hp->r + (size_t)j * hp->b,
                   hp->all + ((size_t)h->node_index[j] * h->largest + (size_t)h->in_node[j]) * hp->b, hp->b);
    return st;
}

int kyi_hplan_active(const struct kyi_hplan *hp) { return hp && hp->active; }
int kyi_hplan_algo(const struct kyi_hplan *hp) { return hp->algo; }

void kyi_hplan_free(struct kyi_hplan *hp)
{
    if (!hp) return;
    if (hp->across) ky_coll_free(hp->across);
    free(hp->nodebuf);
    free(hp->all);
    free(hp);
}

/* Common part: the node sub-team with its segment on every member, agreed over t (nobody builds the
 * stages unless everybody can). *hp NULL: the caller builds a flat plan. */
static int hplan_new(const char *call, struct kyi_team *t, struct kyi_hplan **hp, struct kyi_team **nt)
{
    *hp = NULL;
    if (kyi_config_long("KY_COLL_SHM") == 0) return KY_OK; /* the same on every member */
    struct kyi_hier *h = t->hier;
    *nt = kyi_team_get(call, h->node);
    int shm = 0;
    if (*nt) KYI_CHECK(kyi_shm_usable(call, *nt, &shm));
    struct kyi_hplan *p = shm ? calloc(1, sizeof *p) : NULL;
    int64_t ok = p != NULL;
    KYI_CHECK(kyi_allreduce_min_i64(t, &ok, 1, call));
    if (!ok) {
        free(p);
        return KY_OK;
    }
    p->t = t;
    p->in.team = p->out.team = *nt;
    p->in.call = p->out.call = call;
    p->in.after = start_across;
    p->out.before = finish_across;
    p->in.hook_arg = p->out.hook_arg = p;
    KYI_TRACE(KYI_SUB_COLL, "%s: a plan in hierarchical stages (node of %d)", call, (*nt)->size);
    *hp = p;
    return KY_OK;
}

int kyi_hplan_allreduce(const char *call, struct kyi_team *t, const void *s, void *r, size_t n, ky_dtype_t dt,
                        ky_op_t op, struct kyi_hplan **out)
{
    struct kyi_team *nt;
    struct kyi_hplan *hp;
    KYI_CHECK(hplan_new(call, t, &hp, &nt));
    if (!hp) return KY_OK;
    struct kyi_hier *h = t->hier;
    int lead = h->leaders != KY_TEAM_NULL;
    hp->r = r;
    hp->in.dtype = hp->out.dtype = dt;
    hp->in.op = hp->out.op = op;
    /* 1. reduce to the leader: in place on the leader means "from r"; a member's in place is its r */
    kyi_shm_op(&hp->in, KYI_SHM_REDUCE, s ? s : (lead ? NULL : r), lead ? r : NULL, n, 0);
    /* 2. across the leaders, in place on r */
    int st = lead ? ky_allreduce_init(KY_IN_PLACE, r, n, dt, op, h->leaders, &hp->across) : KY_OK;
    /* 3. the result from the leader */
    kyi_shm_op(&hp->out, KYI_SHM_BCAST, NULL, r, n * kyi_dtype_size(dt), 0);
    hp->algo = kyi_coll_algo(KY_COLL_ALLREDUCE, h->nodes, n * kyi_dtype_size(dt));
    if (st) {
        kyi_hplan_free(hp);
        return st;
    }
    *out = hp;
    return KY_OK;
}

int kyi_hplan_allgather(const char *call, struct kyi_team *t, const void *s, size_t b, void *r,
                        struct kyi_hplan **out)
{
    struct kyi_team *nt;
    struct kyi_hplan *hp;
    KYI_CHECK(hplan_new(call, t, &hp, &nt));
    if (!hp) return KY_OK;
    struct kyi_hier *h = t->hier;
    int lead = h->leaders != KY_TEAM_NULL;
    size_t node_bytes = (size_t)h->largest * b;
    hp->r = r;
    hp->b = b;
    hp->nodebuf = calloc(1, node_bytes ? node_bytes : 1);
    hp->all = lead ? calloc(1, (size_t)h->nodes * node_bytes + 1) : NULL;
    int st = !hp->nodebuf || (lead && !hp->all) ? kyi_fail(KY_ERR_NOMEM, call, "no memory for the plan's staging") : KY_OK;
    /* a member short of memory would leave the others in the leaders' init: agree first */
    int64_t ok = st == KY_OK;
    KYI_CHECK(kyi_allreduce_min_i64(t, &ok, 1, call));
    if (ok && lead) st = ky_allgather_init(hp->nodebuf, node_bytes, hp->all, h->leaders, &hp->across);
    if (!ok && !st) st = kyi_fail(KY_ERR_NOMEM, call, "another member had no memory for the plan's staging");
    if (st) {
        kyi_hplan_free(hp);
        return st;
    }
    kyi_shm_op(&hp->in, KYI_SHM_ALLGATHER, s ? s : (char *)r + (size_t)t->rank * b, hp->nodebuf, b, -1);
    kyi_shm_op(&hp->out, KYI_SHM_BCAST, NULL, r, (size_t)t->size * b, 0);
    hp->algo = kyi_coll_algo(KY_COLL_ALLGATHER, h->nodes, node_bytes);
    *out = hp;
    return KY_OK;
}

int kyi_hplan_start(struct kyi_hplan *hp)
{
    if (hp->active) return kyi_fail(KY_ERR_STATE, hp->in.call, "the plan is already started and not yet waited for");
    hp->active = 1;
    KYI_CHECK(kyi_shm_start(&hp->in));
    return kyi_shm_start(&hp->out);
}

int kyi_hplan_wait(struct kyi_hplan *hp)
{
    if (!hp->active) return KY_OK;
    hp->active = 0;
    int s3 = kyi_shm_wait(&hp->out); /* runs the node's queue up to stage 3: stage 1 first */
    int s1 = kyi_shm_wait(&hp->in);  /* done by now: its status */
    return s1 ? s1 : s3;
}
