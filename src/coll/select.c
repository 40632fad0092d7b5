/* Algorithm choice. Order: ky_coll_set_algo override, then KY_ALLREDUCE_ALGO / KY_ALLGATHER_ALGO, then
 * the table below (docs/api.md, "Collectives"). It began from host runs on a 2-core CI machine (few large
 * steps beat many small ones for small vectors; bandwidth-optimal ring/neighbor win once messages are
 * large) and was corrected with the seed-size points measured on the GPU machine (nvidia-h200-x2,
 * 2026-11-23, every algorithm forced, MPI schedules, 2-4 ranks; bench/results/.../coll_host_n*.jsonl):
 *   allreduce 8 B      rd 4.1 / 7.4 / 8.1 us, bruck 4.6 / 8.9 / 7.9 (p = 2 / 3 / 4): rd for every p
 *   allgather 16 B     rd 4.2 / 7.2 / 7.3, bruck 4.6 / 8.8 / 8.5: rd for every p
 *   allgather 128 KiB  rd 44.5 / 113.3 / 111.3, ring 38.3 / 73.4 / 109.6, neighbor 39.3 / - / 97.9: rd only
 *                      while the gathered result is small (<= 64 KiB), then neighbor or ring
 * Sizes in between and across real nodes are not measured: a team on several nodes mostly runs the
 * hierarchical stages (hier.c) and these schedules only between the nodes' leaders. */
#include <stdatomic.h>
#include <string.h>

#include "coll/coll.h"
#include "runtime/config.h"
#include "runtime/log.h"

static atomic_int override_algo[2]; /* KY_ALGO_AUTO: none */
static int setting_algo[2] = {-1, -1};

static const char *names[KY_ALGO_COUNT] = {"auto",         "ring",    "neighbor", "rd", "bruck",
                                           "reduce_bcast", "oneshot", "twoshot",  "shm"};

/* Algorithms an allgather cannot run. */
static int not_for_allgather(int a)
{
    return a == KY_ALGO_REDUCE_BCAST || a == KY_ALGO_TWOSHOT;
}

const char *ky_coll_algo_name(ky_coll_algo_t a)
{
    return (int)a >= 0 && a < KY_ALGO_COUNT ? names[a] : "?";
}

int ky_coll_set_algo(ky_coll_kind_t kind, ky_coll_algo_t algo)
{
    if (kind != KY_COLL_ALLREDUCE && kind != KY_COLL_ALLGATHER)
        return kyi_fail(KY_ERR_ARG, "ky_coll_set_algo",
                        "kind %d is not KY_COLL_ALLREDUCE or KY_COLL_ALLGATHER", (int)kind);
    if ((int)algo < 0 || algo >= KY_ALGO_COUNT || (kind == KY_COLL_ALLGATHER && not_for_allgather(algo)))
        return kyi_fail(KY_ERR_ARG, "ky_coll_set_algo", "algorithm %d is not one for %s", (int)algo,
                        kind == KY_COLL_ALLREDUCE ? "allreduce" : "allgather");
    atomic_store(&override_algo[kind], (int)algo);
    return KY_OK;
}

static int parse(ky_coll_kind_t kind)
{
    kyi_setting_t id = kind == KY_COLL_ALLREDUCE ? KYI_SET_ALLREDUCE_ALGO : KYI_SET_ALLGATHER_ALGO;
    const char *v = kyi_setting_str(id);
    for (int a = 0; a < KY_ALGO_COUNT; a++)
        if (!strcmp(v, names[a]) && !(kind == KY_COLL_ALLGATHER && not_for_allgather(a))) return a;
    /* The settings table has already refused names that are not algorithms (with a warning naming them all);
     * reaching here means the table and names[] disagree. */
    KYI_WARN(KYI_SUB_COLL,
             "internal: %s=%s is allowed by the settings table but is no algorithm here; using auto",
             kyi_setting_name(id), v);
    return KY_ALGO_AUTO;
}

int kyi_coll_forced(ky_coll_kind_t kind)
{
    int o = atomic_load(&override_algo[kind]);
    if (o != KY_ALGO_AUTO) return o;
    if (setting_algo[kind] < 0) setting_algo[kind] = parse(kind);
    return setting_algo[kind];
}

int kyi_coll_algo(ky_coll_kind_t kind, int p, size_t bytes)
{
    int a = kyi_coll_forced(kind);
    /* GPU-only names and shm (taken before this table when the team can) mean auto here */
    if (a != KY_ALGO_AUTO && a != KY_ALGO_ONESHOT && a != KY_ALGO_TWOSHOT && a != KY_ALGO_SHM) return a;
    if (kind == KY_COLL_ALLREDUCE) {
        /* bytes: the vector. Small: fewest steps; large: ring moves 2(p-1)/p of it instead of log2(p) x. */
        if (bytes < 64 * 1024 || p == 2) return KY_ALGO_RD;
        return KY_ALGO_RING;
    }
    /* bytes: one member's block; the gathered result is p times that. */
    size_t total = bytes * (size_t)p;
    if (total <= 64 * 1024) return KY_ALGO_RD;
    return p % 2 == 0 ? KY_ALGO_NEIGHBOR : KY_ALGO_RING;
}

/* GPU buffers. With NVLink: one-shot (one kernel, every GPU reads the whole vector of every peer) while the
 * vector is small, where latency is all; two-shot (each GPU reads 2(p-1)/p of it) beyond
 * KY_NVL_ONESHOT_MAX (measured crossover on 4 H200: between 1 and 2 MiB, nvidia-h200-x4, 2026-11-27). With
 * two members both read the same bytes and one-shot saves a barrier: it stays ahead up to 16 MiB
 * (nvidia-h200-x2, 2026-11-22), and beyond the two are equal while one-shot needs twice the scratch; with
 * three, one-shot reads 2 blocks where two-shot reads 4/3 in two phases: 10% ahead at 4 MiB, equal at 8 MiB
 * (nvidia-h200-x4, 2026-11-27). Allgather reads each block once either
 * way: one-shot. Without NVLink: the host table on the staged copies. */
int kyi_coll_algo_gpu(ky_coll_kind_t kind, int p, size_t bytes, int nvl)
{
    int a = kyi_coll_forced(kind);
    if (a == KY_ALGO_SHM) a = KY_ALGO_AUTO; /* host memory only */
    if (!nvl || (a != KY_ALGO_AUTO && a != KY_ALGO_ONESHOT && a != KY_ALGO_TWOSHOT))
        return kyi_coll_algo(kind, p, bytes);
    if (a != KY_ALGO_AUTO) return a;
    if (kind == KY_COLL_ALLGATHER) return KY_ALGO_ONESHOT;
    static size_t oneshot_max = (size_t)-1;
    if (oneshot_max == (size_t)-1) oneshot_max = kyi_setting_size(KYI_SET_NVL_ONESHOT_MAX);
    size_t floor_p = p == 2 ? (size_t)16 << 20 : p == 3 ? (size_t)4 << 20 : 0;
    size_t lim = oneshot_max < floor_p ? floor_p : oneshot_max;
    return bytes <= lim ? KY_ALGO_ONESHOT : KY_ALGO_TWOSHOT;
}
