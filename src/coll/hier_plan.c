/* Persistent plans in hierarchical stages (hier.c has the stages and the sub-teams). */
#include <stdlib.h>
#include <string.h>

#include "coll/hier.h"
#include "coll/shm.h"
#include "runtime/config.h"
#include "runtime/log.h"

/* The same three stages, built once: shared-memory plans on the node sub-team for stages 1 and 3 (a team
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
    size_t b; /* allgather: bytes per member */
    struct kyi_team *t;
    int active;
    int algo; /* what ky_coll_plan_algo reports: the algorithm across the leaders */
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

int kyi_hplan_active(const struct kyi_hplan *hp)
{
    return hp && hp->active;
}
int kyi_hplan_algo(const struct kyi_hplan *hp)
{
    return hp->algo;
}

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
    if (kyi_setting_long(KYI_SET_COLL_SHM) == 0) return KY_OK; /* the same on every member */
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
    int st = !hp->nodebuf || (lead && !hp->all)
                 ? kyi_fail(KY_ERR_NOMEM, call, "no memory for the plan's staging")
                 : KY_OK;
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
    if (hp->active)
        return kyi_fail(KY_ERR_STATE, hp->in.call, "the plan is already started and not yet waited for");
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
