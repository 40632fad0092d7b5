/* The plan cache (seed 004's descriptor cache): a transfer that repeats with the same peer, segment,
 * offset, local buffer and shape is validated and routed once; later calls replay the plan and skip the
 * range arithmetic, the pointer-kind query and the path choice. Plans live with their segment and are
 * freed with it. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "comm/plan.h"

#define KYI_PLAN_BUCKETS 64

struct kyi_plan {
    uint64_t key[KYI_PLAN_KEY_MAX];
    int nkey;
    kyi_plan_info_t info;
    struct kyi_plan *next;
};

static atomic_long plans_alive;

static unsigned hash(const uint64_t *key, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) h = (h ^ key[i]) * 1099511628211ull;
    return (unsigned)(h ^ (h >> 29)) % KYI_PLAN_BUCKETS;
}

int kyi_plan_find(struct kyi_seg *s, const uint64_t *key, int nkey, kyi_plan_info_t *out)
{
    int hit = 0;
    pthread_mutex_lock(&s->plan_lock);
    struct kyi_plan **b = (struct kyi_plan **)s->plans;
    if (b) {
        for (struct kyi_plan *p = b[hash(key, nkey)]; p; p = p->next)
            if (p->nkey == nkey && !memcmp(p->key, key, sizeof(uint64_t) * nkey)) {
                *out = p->info;
                hit = 1;
                break;
            }
    }
    pthread_mutex_unlock(&s->plan_lock);
    atomic_fetch_add_explicit(hit ? &kyi_stats.plan_hits : &kyi_stats.plan_misses, 1, memory_order_relaxed);
    return hit;
}

void kyi_plan_add(struct kyi_seg *s, const uint64_t *key, int nkey, const kyi_plan_info_t *info)
{
    static long limit = -1;
    if (limit < 0) limit = kyi_setting_long(KYI_SET_PLAN_CACHE);
    if (atomic_load(&plans_alive) >= limit) return;
    struct kyi_plan *p = malloc(sizeof *p);
    if (!p) return; /* a plan is an optimisation: without memory we just do not cache */
    memcpy(p->key, key, sizeof(uint64_t) * nkey);
    p->nkey = nkey;
    p->info = *info;
    pthread_mutex_lock(&s->plan_lock);
    if (!s->plans) s->plans = calloc(KYI_PLAN_BUCKETS, sizeof(struct kyi_plan *));
    struct kyi_plan **b = (struct kyi_plan **)s->plans;
    if (!b) {
        pthread_mutex_unlock(&s->plan_lock);
        free(p);
        return;
    }
    unsigned i = hash(key, nkey);
    p->next = b[i];
    b[i] = p;
    atomic_fetch_add(&plans_alive, 1);
    pthread_mutex_unlock(&s->plan_lock);
}

void kyi_plans_free(struct kyi_seg *s)
{
    pthread_mutex_lock(&s->plan_lock);
    struct kyi_plan **b = (struct kyi_plan **)s->plans;
    for (int i = 0; b && i < KYI_PLAN_BUCKETS; i++)
        for (struct kyi_plan *p = b[i], *n; p; p = n) {
            n = p->next;
            free(p);
            atomic_fetch_sub(&plans_alive, 1);
        }
    free(b);
    s->plans = NULL;
    pthread_mutex_unlock(&s->plan_lock);
}
