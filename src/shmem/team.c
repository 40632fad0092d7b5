/* shmem layer: teams. A team is a strided set of world PEs (start, stride, size: what
 * shmem_team_split_strided can make; negative strides too) with its own symmetric sync words, taken from a
 * table of slots that shmem_init carves at the start of the heap (so at the same offset on every PE). A split
 * agrees on a slot free on every member of the parent (an OR of the members' masks, gathered by gets between
 * two barriers of the parent), so teams that share a PE never share a slot. SHMEM_TEAM_WORLD's collectives
 * are coll's (not these words); SHMEM_TEAM_SHARED is the PEs of this logical node when they form a strided
 * set (else this PE alone). */
#include <stdlib.h>
#include <string.h>

#include "shmem/internal.h"

#define SLOTS 64
#define SLOT_LONGS (SHMEM_SYNC_SIZE + 8) /* the set's pSync, then scratch words */

struct shmemi_team {
    kyi_aset_t a;
    int slot;
    shmem_team_config_t cfg;
};

shmem_team_t shmemi_team_shared = SHMEM_TEAM_INVALID;
static struct shmemi_team shared;
static long *slots;   /* [SLOTS][SLOT_LONGS], symmetric */
static uint64_t used; /* slots this PE's teams hold; 0 the world's, 1 the shared team's */

static long *slot_words(int slot)
{
    return slots + (size_t)slot * SLOT_LONGS;
}

/* The live teams of this PE, so a handle that is not one is an error, not a wild read. */
static struct shmemi_team *live[SLOTS];

static int is_live(shmem_team_t t)
{
    if (t == &shared) return 1;
    for (int i = 0; i < SLOTS; i++)
        if (live[i] == t) return 1;
    return 0;
}

int kyi_shmem_team_init(void)
{
    slots = kyi_shmem_heap_reserve(SLOTS * SLOT_LONGS * sizeof(long));
    if (!slots)
        return kyi_fail(KY_ERR_NOMEM, "shmem_init", "no room in the symmetric heap for the team table");
    for (size_t i = 0; i < SLOTS * SLOT_LONGS; i++) slots[i] = SHMEM_SYNC_VALUE;
    used = 3;
    /* the node's PEs, if strided */
    int me = kyi_shmem.me, first = -1, second = -1, n = 0, last = -1, strided = 1;
    for (int p = 0; p < kyi_shmem.npes; p++) {
        if (ky_node_of(p) != ky_node()) continue;
        if (first < 0)
            first = p;
        else if (second < 0)
            second = p;
        if (n >= 2 && p - last != second - first) strided = 0;
        last = p;
        n++;
    }
    int stride = second < 0 ? 1 : second - first;
    if (strided && first >= 0 && (me - first) % stride == 0)
        shared.a = (kyi_aset_t){first, stride, n, (me - first) / stride};
    else
        shared.a = (kyi_aset_t){me, 1, 1, 0};
    shared.slot = 1;
    shared.cfg.num_contexts = 0;
    shmemi_team_shared = &shared;
    return KY_OK;
}

void kyi_shmem_team_finalize(void)
{
    shmemi_team_shared = SHMEM_TEAM_INVALID;
}

int kyi_shmem_team(const char *call, shmem_team_t team, kyi_aset_t *a, long **psync, int *world)
{
    *a = (kyi_aset_t){0, 1, 0, -1};
    *psync = NULL;
    *world = 0;
    KYI_CHECK(kyi_shmem_ready(call));
    if (team == SHMEM_TEAM_WORLD) {
        *a = (kyi_aset_t){0, 1, kyi_shmem.npes, kyi_shmem.me};
        *psync = slot_words(0);
        *world = 1;
        return KY_OK;
    }
    if (team == SHMEM_TEAM_INVALID) return kyi_shmem_fail(KY_ERR_ARG, call, "the team is SHMEM_TEAM_INVALID");
    if (!is_live(team))
        return kyi_shmem_fail(KY_ERR_ARG, call, "%p is not a team of this PE (destroyed, or never made)",
                              (void *)team);
    *a = team->a;
    *psync = slot_words(team->slot);
    *world = 0;
    return KY_OK;
}

/* World PE of team PE pe, or -1. */
int kyi_shmem_team_world_pe(shmem_team_t team, int pe)
{
    if (team == SHMEM_TEAM_WORLD) return pe >= 0 && pe < kyi_shmem.npes ? pe : -1;
    if (team == SHMEM_TEAM_INVALID || !is_live(team) || pe < 0 || pe >= team->a.size) return -1;
    return kyi_aset_member(&team->a, pe);
}

int shmem_team_my_pe(shmem_team_t team)
{
    kyi_aset_t a;
    long *ps;
    int w;
    if (team == SHMEM_TEAM_INVALID || kyi_shmem_team("shmem_team_my_pe", team, &a, &ps, &w)) return -1;
    return a.idx;
}

int shmem_team_n_pes(shmem_team_t team)
{
    kyi_aset_t a;
    long *ps;
    int w;
    if (team == SHMEM_TEAM_INVALID || kyi_shmem_team("shmem_team_n_pes", team, &a, &ps, &w)) return -1;
    return a.size;
}

int shmem_team_sync(shmem_team_t team)
{
    kyi_aset_t a;
    long *ps;
    int w;
    kyi_shmem_returning(1);
    int r = kyi_shmem_team("shmem_team_sync", team, &a, &ps, &w) ||
            kyi_aset_barrier("shmem_team_sync", &a, ps, 0);
    kyi_shmem_returning(0);
    return r ? -1 : 0;
}

void shmemi_sync_set(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    kyi_shmem_aset_sync("shmem_sync", PE_start, logPE_stride, PE_size, pSync);
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    if (src_team == SHMEM_TEAM_INVALID || dest_team == SHMEM_TEAM_INVALID || !kyi_shmem.initialized)
        return -1;
    int w = kyi_shmem_team_world_pe(src_team, src_pe);
    if (w < 0) return -1;
    if (dest_team == SHMEM_TEAM_WORLD) return w;
    if (!is_live(dest_team)) return -1;
    const kyi_aset_t *d = &dest_team->a;
    int off = w - d->start;
    if (off % d->stride) return -1;
    int i = off / d->stride;
    return i >= 0 && i < d->size ? i : -1;
}

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)
{
    if (team == SHMEM_TEAM_INVALID || !config || (team != SHMEM_TEAM_WORLD && !is_live(team))) return -1;
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
        config->num_contexts = team == SHMEM_TEAM_WORLD ? 0 : team->cfg.num_contexts;
    return 0;
}

void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe)
{
    int w = kyi_shmem_team_world_pe(team, pe);
    return w < 0 ? NULL : shmem_ptr(dest, w);
}

static int split_strided(shmem_team_t parent, int start, int stride, int size,
                         const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team);
static int split_2d(shmem_team_t parent, int xrange, const shmem_team_config_t *xaxis_config, long xaxis_mask,
                    shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config, long yaxis_mask,
                    shmem_team_t *yaxis_team);

/* Both return their errors (-1, logged), never the job's end: a split the program cannot make is its to
 * handle (a team of no PEs, a parent this PE is not in). */
int shmem_team_split_strided(shmem_team_t parent, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team)
{
    kyi_shmem_returning(1);
    int r = split_strided(parent, start, stride, size, config, config_mask, new_team);
    kyi_shmem_returning(0);
    return r;
}

int shmem_team_split_2d(shmem_team_t parent, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team)
{
    kyi_shmem_returning(1);
    int r =
        split_2d(parent, xrange, xaxis_config, xaxis_mask, xaxis_team, yaxis_config, yaxis_mask, yaxis_team);
    kyi_shmem_returning(0);
    return r;
}

static int split_strided(shmem_team_t parent, int start, int stride, int size,
                         const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team)
{
    static const char *call = "shmem_team_split_strided";
    if (!new_team) return kyi_shmem_fail(KY_ERR_ARG, call, "new_team is NULL"), -1;
    *new_team = SHMEM_TEAM_INVALID;
    kyi_aset_t p;
    long *ps;
    int w;
    if (kyi_shmem_team(call, parent, &p, &ps, &w)) return -1;
    long last = start + (long)(size - 1) * stride;
    if (size < 1 || stride == 0 || start < 0 || start >= p.size || last < 0 || last >= p.size)
        return kyi_shmem_fail(KY_ERR_ARG, call,
                              "start %d, stride %d, size %d do not name PEs of the parent team (0..%d)",
                              start, stride, size, p.size - 1),
               -1;
    /* the slot: free on every member of the parent */
    long *scratch = ps + SHMEM_SYNC_SIZE;
    __atomic_store_n(&scratch[0], (long)used, __ATOMIC_RELEASE);
    if (kyi_aset_barrier(call, &p, ps, 1)) return -1;
    uint64_t all = used;
    for (int j = 0; j < p.size; j++) {
        long m = 0;
        if (kyi_shmem_rma(call, 0, &scratch[0], &m, sizeof m, kyi_aset_member(&p, j), 0)) return -1;
        all |= (uint64_t)m;
    }
    if (kyi_aset_barrier(call, &p, ps, 0)) return -1;
    int slot = -1;
    for (int s = 2; s < SLOTS && slot < 0; s++)
        if (!(all & (1ull << s))) slot = s;
    if (slot < 0)
        return kyi_shmem_fail(KY_ERR_NOMEM, call,
                              "all %d team slots are taken on some member of the parent team", SLOTS),
               -1;
    kyi_aset_t a = {kyi_aset_member(&p, start), stride * p.stride, size, -1};
    int off = kyi_shmem.me - a.start;
    if (off % a.stride == 0 && off / a.stride >= 0 && off / a.stride < size) a.idx = off / a.stride;
    if (a.idx < 0) return 0; /* not a member: SHMEM_TEAM_INVALID */
    struct shmemi_team *t = calloc(1, sizeof *t);
    if (!t) return kyi_shmem_fail(KY_ERR_NOMEM, call, "no memory"), -1;
    t->a = a;
    t->slot = slot;
    if (config && (config_mask & SHMEM_TEAM_NUM_CONTEXTS)) t->cfg.num_contexts = config->num_contexts;
    used |= 1ull << slot;
    live[slot] = t;
    *new_team = t;
    return 0;
}

static int split_2d(shmem_team_t parent, int xrange, const shmem_team_config_t *xaxis_config, long xaxis_mask,
                    shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config, long yaxis_mask,
                    shmem_team_t *yaxis_team)
{
    static const char *call = "shmem_team_split_2d";
    int n = shmem_team_n_pes(parent);
    if (n < 1 || xrange < 1 || !xaxis_team || !yaxis_team)
        return kyi_shmem_fail(KY_ERR_ARG, call, "parent team of %d PEs, xrange %d", n, xrange), -1;
    if (xrange > n) xrange = n;
    int ny = (n + xrange - 1) / xrange;
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    /* every member of the parent takes part in every split, in the same order */
    for (int y = 0; y < ny; y++) {
        shmem_team_t t;
        int len = n - y * xrange < xrange ? n - y * xrange : xrange;
        if (split_strided(parent, y * xrange, 1, len, xaxis_config, xaxis_mask, &t)) return -1;
        if (t != SHMEM_TEAM_INVALID) *xaxis_team = t;
    }
    for (int x = 0; x < xrange; x++) {
        shmem_team_t t;
        int len = (n - x + xrange - 1) / xrange;
        if (split_strided(parent, x, xrange, len, yaxis_config, yaxis_mask, &t)) return -1;
        if (t != SHMEM_TEAM_INVALID) *yaxis_team = t;
    }
    return 0;
}

void shmem_team_destroy(shmem_team_t team)
{
    if (team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_INVALID || team == &shared || !is_live(team)) return;
    kyi_shmem_quiet("shmem_team_destroy");
    used &= ~(1ull << team->slot);
    live[team->slot] = NULL;
    free(team);
}
