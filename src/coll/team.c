/* Teams: the world team (set up at its first use) and teams split from another. Each owns a channel group
 * (comm/chan.h) of its members, ranked as the team ranks them: the world team's is made by every rank and
 * waited for through the runtime's waiters, a split team's by its members only. The members are also
 * listed by world rank (t->world). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/gpu/gcoll.h"
#include "coll/hier.h"
#include "coll/shm.h"

static struct kyi_team world_team;
static int world_ready;
static pthread_mutex_t world_lock = PTHREAD_MUTEX_INITIALIZER;

static void set_tag_ub(struct kyi_team *t)
{
    t->tag_ub = kyi_chan_tag_ub();
    atomic_store(&t->seq, 0);
}

struct kyi_team *kyi_team_get(const char *call, ky_team_t team)
{
    if (kyi_require_init(call)) return NULL;
    if (team == KY_TEAM_NULL) {
        kyi_fail(KY_ERR_ARG, call, "team is KY_TEAM_NULL");
        return NULL;
    }
    if (team != KY_TEAM_WORLD) return team;
    pthread_mutex_lock(&world_lock);
    if (!world_ready) {
        struct kyi_team *t = &world_team;
        t->rank = kyi_rt.rank;
        t->size = kyi_rt.nranks;
        t->world = malloc(sizeof(int) * (size_t)t->size);
        if (!t->world) {
            pthread_mutex_unlock(&world_lock);
            kyi_fail(KY_ERR_NOMEM, call, "no memory for the world team");
            return NULL;
        }
        for (int i = 0; i < t->size; i++) t->world[i] = i;
        set_tag_ub(t);
        if (kyi_chan_group(call, t->size, NULL, &t->chan)) {
            free(t->world);
            t->world = NULL;
            pthread_mutex_unlock(&world_lock);
            return NULL;
        }
        world_ready = 1;
    }
    pthread_mutex_unlock(&world_lock);
    return &world_team;
}

int kyi_team_next_tag(struct kyi_team *t)
{
    unsigned s = atomic_fetch_add_explicit(&t->seq, 1, memory_order_relaxed);
    return 1 + (int)(s % (unsigned)(t->tag_ub - 1));
}

int ky_team_rank(ky_team_t team)
{
    struct kyi_team *t = kyi_team_get("ky_team_rank", team);
    return t ? t->rank : (kyi_require_init("ky_team_rank") ? KY_ERR_NOT_INIT : KY_ERR_ARG);
}

int ky_team_size(ky_team_t team)
{
    struct kyi_team *t = kyi_team_get("ky_team_size", team);
    return t ? t->size : (kyi_require_init("ky_team_size") ? KY_ERR_NOT_INIT : KY_ERR_ARG);
}

typedef struct {
    int color, key, prank;
} member_t;

static int by_key(const void *a, const void *b)
{
    const member_t *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->prank < y->prank ? -1 : (x->prank > y->prank);
}

int ky_team_split(ky_team_t parent, int color, int key, ky_team_t *team)
{
    static const char *call = "ky_team_split";
    struct kyi_team *pt = kyi_team_get(call, parent);
    if (!pt) return kyi_require_init(call) ? KY_ERR_NOT_INIT : KY_ERR_ARG;
    if (!team) return kyi_fail(KY_ERR_ARG, call, "team is NULL");
    *team = KY_TEAM_NULL;
    int p = pt->size;
    int mine[2] = {color < 0 ? -1 : color, key};
    int *all = malloc(sizeof(int) * 2 * (size_t)p);
    member_t *m = malloc(sizeof(member_t) * (size_t)p);
    struct kyi_team *t = calloc(1, sizeof *t);
    int st = KY_OK;
    if (!all || !m || !t) {
        st = kyi_fail(KY_ERR_NOMEM, call, "no memory for %d members", p);
        goto out; /* (the other members will time out: nothing sane is left to agree on) */
    }
    /* Everyone's (color, key) through the team's own allgather; then each new team's channel group, made by
     * its members only and ranked as the team ranks them, so a later split of the new team involves only its
     * members. Making a group blocks inside the transport (with KY_PROGRESS_THREAD=0 it serves no one-sided
     * request meanwhile); the members all make it at once, as they just allgathered. */
    st = ky_allgather(mine, sizeof mine, all, parent);
    if (st) goto out;
    if (mine[0] < 0) goto out; /* in no new team */
    int n = 0;
    for (int i = 0; i < p; i++)
        if (all[2 * i] == mine[0]) m[n++] = (member_t){all[2 * i], all[2 * i + 1], i};
    qsort(m, (size_t)n, sizeof *m, by_key);
    t->world = malloc(sizeof(int) * (size_t)n);
    if (!t->world) {
        st = kyi_fail(KY_ERR_NOMEM, call, "no memory");
        goto out; /* (the other members will time out, as above) */
    }
    t->size = n;
    for (int i = 0; i < n; i++) {
        t->world[i] = pt->world[m[i].prank];
        if (m[i].prank == pt->rank) t->rank = i;
    }
    if ((st = kyi_chan_group(call, n, t->world, &t->chan))) {
        free(t->world);
        goto out;
    }
    set_tag_ub(t);
    *team = t;
    t = NULL;
out:
    free(all);
    free(m);
    free(t);
    return st;
}

int ky_team_free(ky_team_t team)
{
    if (team == KY_TEAM_NULL || team == KY_TEAM_WORLD) return KY_OK;
    KYI_CHECK(kyi_require_init("ky_team_free"));
    kyi_gcoll_team_free(team);
    kyi_shm_team_free(team);
    kyi_hier_team_free(team);
    kyi_chan_free(team->chan);
    free(team->world);
    free(team);
    return KY_OK;
}
