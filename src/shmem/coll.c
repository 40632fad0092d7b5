/* shmem layer: barriers and collectives. On SHMEM_TEAM_WORLD (the 1.5 calls) they are coll's world-team
 * collectives (ky_team_barrier, ky_bcast, ky_allgather, ky_allreduce); types and operations coll has no
 * kernel for (bitwise, unsigned min/max, small and long double types) are an allgather reduced here in PE
 * order, so every PE computes the same result. alltoall has no coll call: it is one-sided, each PE getting
 * its block from every PE's source between two barriers.
 * Other teams (team.c) and the deprecated active-set calls (PE_start, logPE_stride, PE_size, pSync) run on
 * any strided set of PEs: a barrier of the set through a pSync (the caller's, or the team's own symmetric
 * one; arrivals counted by atomics at the set's first PE, which then releases every member), and gets of
 * the data between two such barriers. */
#include <stdlib.h>
#include <string.h>

#include "shmem/internal.h"

/* The 1.5 collectives return a status: their errors are returned (and logged), never the job's end. */
#define RETURNS(expr)           \
    do {                        \
        kyi_shmem_returning(1); \
        int r_ = (expr);        \
        kyi_shmem_returning(0); \
        return r_;              \
    } while (0)

/* ---- world barriers and the team calls -------------------------------------------------------------------
 */

/* The world barrier. Without a progress thread a PE serves the others' atomics and gets only inside Kyoyu
 * calls, and a PE that arrived early may be the one a late PE is asking: comm's split-phase barrier, polled
 * here, keeps serving at full speed while it waits (the coll barrier's waits back off to sleeps). */
static int world_barrier(const char *call, int quiet)
{
    KYI_CHECK(kyi_shmem_ready(call));
    if (quiet) KYI_CHECK(kyi_shmem_quiet(call));
    int st;
    if (kyi_progress_threaded()) {
        st = ky_team_barrier(KY_TEAM_WORLD);
    } else {
        st = ky_barrier_notify();
        kyi_waiter_t w;
        kyi_waiter_init(&w, call, "the other PEs at a barrier", -1);
        while (!st && (st = ky_barrier_try()) == KY_PENDING) {
            st = KY_OK;
            if (ky_poll() > 0)
                kyi_waiter_progress(&w);
            else
                kyi_waiter_pause(&w);
        }
    }
    return st ? kyi_shmem_failed(st, call) : KY_OK;
}

void shmem_barrier_all(void)
{
    world_barrier("shmem_barrier_all", 1);
}
void shmem_sync_all(void)
{
    world_barrier("shmem_sync_all", 0);
}

/* ---- 1.5 collectives on the world team
 * ---------------------------------------------------------------------- */

static int set_gets(const char *call, const kyi_aset_t *a, long *pSync, size_t bytes, char *dest,
                    size_t dest_step, const char *source, size_t src_off, int only_root, int root_idx);
static int set_collect(const char *call, const kyi_aset_t *a, long *pSync, void *dest, const void *source,
                       size_t bytes);

/* The team (world or a set), its pSync, and nelems * size without overflow. */
static int team_of(const char *call, shmem_team_t team, size_t nelems, size_t size, size_t *bytes,
                   kyi_aset_t *a, long **psync, int *world)
{
    KYI_CHECK(kyi_shmem_team(call, team, a, psync, world));
    return kyi_shmem_bytes(call, nelems, size, bytes);
}

static int broadcast(const char *call, shmem_team_t team, void *dest, const void *source, size_t nelems,
                     size_t size, int root)
{
    size_t bytes;
    kyi_aset_t a;
    long *ps;
    int world;
    if (team_of(call, team, nelems, size, &bytes, &a, &ps, &world)) return -1;
    if (root < 0 || root >= a.size)
        return kyi_shmem_fail(KY_ERR_ARG, call, "root PE %d is out of range 0..%d of the team", root,
                              a.size - 1),
               -1;
    if (!bytes) return 0;
    int st;
    if (world) {
        if (kyi_shmem.me == root && dest != source) memmove(dest, source, bytes);
        st = ky_bcast(dest, bytes, root, KY_TEAM_WORLD);
        return st ? (kyi_shmem_failed(st, call), -1) : 0;
    }
    st = set_gets(call, &a, ps, bytes, dest, 0, source, 0, 1, root);
    /* 1.5: the root's dest gets the data too (after the set's last barrier: others read its source until
     * then) */
    if (!st && a.idx == root && dest != source) memmove(dest, source, bytes);
    return st ? -1 : 0;
}

static int fcollect(const char *call, shmem_team_t team, void *dest, const void *source, size_t nelems,
                    size_t size)
{
    size_t bytes;
    kyi_aset_t a;
    long *ps;
    int world;
    if (team_of(call, team, nelems, size, &bytes, &a, &ps, &world)) return -1;
    if (!bytes) return 0;
    if (!world) return set_gets(call, &a, ps, bytes, dest, bytes, source, 0, 0, 0) ? -1 : 0;
    int st = ky_allgather(source, bytes, dest, KY_TEAM_WORLD);
    return st ? (kyi_shmem_failed(st, call), -1) : 0;
}

/* Blocks of different sizes: gather every size, then every block padded to the largest, then pack. */
static int collect(const char *call, shmem_team_t team, void *dest, const void *source, size_t nelems,
                   size_t size)
{
    size_t bytes;
    kyi_aset_t a;
    long *ps;
    int world;
    if (team_of(call, team, nelems, size, &bytes, &a, &ps, &world)) return -1;
    if (!world) return set_collect(call, &a, ps, dest, source, bytes) ? -1 : 0;
    int np = kyi_shmem.npes;
    uint64_t *sizes = malloc(np * sizeof *sizes), mine = bytes, most = 0;
    if (!sizes) return kyi_shmem_fail(KY_ERR_NOMEM, call, "no memory"), -1;
    int st = ky_allgather(&mine, sizeof mine, sizes, KY_TEAM_WORLD);
    for (int i = 0; i < np; i++) most = sizes[i] > most ? sizes[i] : most;
    char *tmp = NULL;
    if (!st && most) {
        tmp = calloc(np, most);
        if (!tmp)
            st = kyi_fail(KY_ERR_NOMEM, call, "no memory for %d x %llu bytes", np, (unsigned long long)most);
        char *pad = st ? NULL : calloc(1, most);
        if (!st && !pad) st = kyi_fail(KY_ERR_NOMEM, call, "no memory");
        if (!st) {
            memcpy(pad, source, bytes);
            st = ky_allgather(pad, most, tmp, KY_TEAM_WORLD);
        }
        free(pad);
        size_t at = 0;
        for (int i = 0; !st && i < np; i++) {
            memcpy((char *)dest + at, tmp + (size_t)i * most, sizes[i]);
            at += sizes[i];
        }
    }
    free(tmp);
    free(sizes);
    return st ? (kyi_shmem_failed(st, call), -1) : 0;
}

/* One-sided on every team: member j's block for me (at my index) into block j of dest. */
static int alltoall(const char *call, shmem_team_t team, void *dest, const void *source, size_t nelems,
                    size_t size)
{
    size_t bytes;
    kyi_aset_t a;
    long *ps;
    int world;
    if (team_of(call, team, nelems, size, &bytes, &a, &ps, &world)) return -1;
    return set_gets(call, &a, ps, bytes, dest, bytes, source, (size_t)a.idx * bytes, 0, 0) ? -1 : 0;
}

/* Strided: element k of member j's block for member i sits at its source[(i * nelems + k) * sst] and lands
 * at i's dest[(j * nelems + k) * dst]; strided gets between two barriers. */
static int alltoalls(const char *call, shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                     ptrdiff_t sst, size_t nelems, size_t size)
{
    size_t bytes;
    kyi_aset_t a;
    long *ps;
    int world;
    if (team_of(call, team, nelems, size, &bytes, &a, &ps, &world)) return -1;
    if (dst < 1 || sst < 1)
        return kyi_shmem_fail(KY_ERR_ARG, call, "strides %td and %td: both must be at least 1", dst, sst), -1;
    if (kyi_aset_barrier(call, &a, ps, 1)) return -1;
    for (int j = 0; j < a.size && nelems; j++)
        if (kyi_shmem_strided(call, 0, (char *)source + (size_t)a.idx * nelems * (size_t)sst * size, sst,
                              (char *)dest + (size_t)j * nelems * (size_t)dst * size, dst, nelems, size,
                              kyi_aset_member(&a, j)))
            return -1;
    return kyi_aset_barrier(call, &a, ps, 1) ? -1 : 0;
}

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root)
{
    RETURNS(broadcast("shmem_broadcastmem", team, dest, source, nelems, 1, PE_root));
}
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    RETURNS(collect("shmem_collectmem", team, dest, source, nelems, 1));
}
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    RETURNS(fcollect("shmem_fcollectmem", team, dest, source, nelems, 1));
}
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    RETURNS(alltoall("shmem_alltoallmem", team, dest, source, nelems, 1));
}

#define DEF_COLL(NAME, T)                                                                                   \
    int shmem_##NAME##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root)   \
    {                                                                                                       \
        RETURNS(broadcast("shmem_" #NAME "_broadcast", team, dest, source, nelems, sizeof(T), PE_root));    \
    }                                                                                                       \
    int shmem_##NAME##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems)                  \
    {                                                                                                       \
        RETURNS(collect("shmem_" #NAME "_collect", team, dest, source, nelems, sizeof(T)));                 \
    }                                                                                                       \
    int shmem_##NAME##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems)                 \
    {                                                                                                       \
        RETURNS(fcollect("shmem_" #NAME "_fcollect", team, dest, source, nelems, sizeof(T)));               \
    }                                                                                                       \
    int shmem_##NAME##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems)                 \
    {                                                                                                       \
        RETURNS(alltoall("shmem_" #NAME "_alltoall", team, dest, source, nelems, sizeof(T)));               \
    }                                                                                                       \
    int shmem_##NAME##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                                 size_t nelems)                                                             \
    {                                                                                                       \
        RETURNS(alltoalls("shmem_" #NAME "_alltoalls", team, dest, source, dst, sst, nelems, sizeof(T)));   \
    }
SHMEMI_RMA_TYPES(DEF_COLL)

int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                       size_t nelems)
{
    RETURNS(alltoalls("shmem_alltoallsmem", team, dest, source, dst, sst, nelems, 1));
}

/* ---- reductions
 * ---------------------------------------------------------------------------------------------- */

enum { OP_AND, OP_OR, OP_XOR, OP_MAX, OP_MIN, OP_SUM, OP_PROD };

/* The combining loops, one per type (acc[i] = acc[i] op in[i]). */
#define COMBINE_i(T, op, acc, in, n)      \
    for (size_t i_ = 0; i_ < (n); i_++) { \
        T a_ = (acc)[i_], b_ = (in)[i_];  \
        switch (op) {                     \
            case OP_AND:                  \
                a_ = (T)(a_ & b_);        \
                break;                    \
            case OP_OR:                   \
                a_ = (T)(a_ | b_);        \
                break;                    \
            case OP_XOR:                  \
                a_ = (T)(a_ ^ b_);        \
                break;                    \
            case OP_MAX:                  \
                a_ = b_ > a_ ? b_ : a_;   \
                break;                    \
            case OP_MIN:                  \
                a_ = b_ < a_ ? b_ : a_;   \
                break;                    \
            case OP_SUM:                  \
                a_ = (T)(a_ + b_);        \
                break;                    \
            default:                      \
                a_ = (T)(a_ * b_);        \
                break;                    \
        }                                 \
        (acc)[i_] = a_;                   \
    }
#define COMBINE_f(T, op, acc, in, n)      \
    for (size_t i_ = 0; i_ < (n); i_++) { \
        T a_ = (acc)[i_], b_ = (in)[i_];  \
        switch (op) {                     \
            case OP_MAX:                  \
                a_ = b_ > a_ ? b_ : a_;   \
                break;                    \
            case OP_MIN:                  \
                a_ = b_ < a_ ? b_ : a_;   \
                break;                    \
            case OP_SUM:                  \
                a_ = a_ + b_;             \
                break;                    \
            default:                      \
                a_ = a_ * b_;             \
                break;                    \
        }                                 \
        (acc)[i_] = a_;                   \
    }

typedef void (*combine_fn)(int op, void *acc, const void *in, size_t n);
#define DEF_COMBINE(NAME, T, K)                                             \
    static void combine_##NAME(int op, void *acc, const void *in, size_t n) \
    {                                                                       \
        T *a = acc;                                                         \
        const T *b = in;                                                    \
        COMBINE_##K(T, op, a, b, n)                                         \
    }
SHMEMI_ARITH_REDUCE_TYPES(DEF_COMBINE)

/* Reduce the blocks blocks[0..m-1] (n elements each) in order into dest. */
static void reduce_blocks(combine_fn f, int op, void *dest, const char *blocks, int m, size_t n, size_t size)
{
    char *acc = (char *)dest;
    memmove(acc, blocks, n * size);
    for (int j = 1; j < m; j++) f(op, acc, blocks + (size_t)j * n * size, n);
}

/* The coll kernel for (type, op), or -1 where there is none (then allgather + local reduction). */
static int ky_type(size_t size, int is_signed, int is_float, int op)
{
    if (op <= OP_XOR) return -1;
    if (is_float) return size == 4 ? KY_FLOAT : size == 8 ? KY_DOUBLE : -1;
    if (!is_signed && (op == OP_MAX || op == OP_MIN)) return -1;
    return size == 4 ? KY_INT32 : size == 8 ? KY_INT64 : -1;
}

static int set_reduce_n(const char *call, const kyi_aset_t *a, long *pSync, void *dest, const void *source,
                        size_t n, size_t size, int op, combine_fn f);

static int reduce(const char *call, shmem_team_t team, void *dest, const void *source, size_t n, size_t size,
                  int is_signed, int is_float, int op, combine_fn f)
{
    size_t bytes;
    kyi_aset_t a;
    long *ps;
    int world;
    if (team_of(call, team, n, size, &bytes, &a, &ps, &world)) return -1;
    if (!world) return set_reduce_n(call, &a, ps, dest, source, n, size, op, f) ? -1 : 0;
    if (!n) return 0;
    int kt = ky_type(size, is_signed, is_float, op), st;
    if (kt >= 0) {
        static const ky_op_t kop[] = {
            [OP_MAX] = KY_MAX, [OP_MIN] = KY_MIN, [OP_SUM] = KY_SUM, [OP_PROD] = KY_PROD};
        st = ky_allreduce(dest == source ? KY_IN_PLACE : source, dest, n, (ky_dtype_t)kt, kop[op],
                          KY_TEAM_WORLD);
    } else {
        size_t total;
        if (kyi_shmem_bytes(call, bytes, (size_t)kyi_shmem.npes, &total)) return -1;
        char *all = malloc(total);
        if (!all) return kyi_shmem_fail(KY_ERR_NOMEM, call, "no memory for %zu bytes", total), -1;
        st = ky_allgather(source, bytes, all, KY_TEAM_WORLD);
        if (!st) reduce_blocks(f, op, dest, all, kyi_shmem.npes, n, size);
        free(all);
    }
    return st ? (kyi_shmem_failed(st, call), -1) : 0;
}

#define IS_SIGNED(T) (!((T)-1 > (T)0)) /* without -Wtype-limits noise for unsigned T */
#define IS_FLOAT_i 0
#define IS_FLOAT_f 1
/* One generated definition per line, laid out by hand. */
/* clang-format off */
#define DEF_REDUCE1(NAME, T, K, OPN, OP)                                                                     \
    int shmem_##NAME##_##OPN##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce)          \
    {                                                                                                        \
        RETURNS(reduce("shmem_" #NAME "_" #OPN "_reduce", team, dest, source, nreduce, sizeof(T),             \
                      IS_SIGNED(T), IS_FLOAT_##K, OP, combine_##NAME));                                       \
    }
#define DEF_BIT_REDUCE(NAME, T, K)                                                                           \
    DEF_REDUCE1(NAME, T, K, and, OP_AND) DEF_REDUCE1(NAME, T, K, or, OP_OR) DEF_REDUCE1(NAME, T, K, xor, OP_XOR)
#define DEF_ARITH_REDUCE(NAME, T, K)                                                                         \
    DEF_REDUCE1(NAME, T, K, max, OP_MAX) DEF_REDUCE1(NAME, T, K, min, OP_MIN)                                \
    DEF_REDUCE1(NAME, T, K, sum, OP_SUM) DEF_REDUCE1(NAME, T, K, prod, OP_PROD)
SHMEMI_BIT_REDUCE_TYPES(DEF_BIT_REDUCE)
SHMEMI_ARITH_REDUCE_TYPES(DEF_ARITH_REDUCE)
/* clang-format on */

/* ---- strided sets: active sets and teams
 * --------------------------------------------------------------------- */

static int aset_check(const char *call, int start, int logstride, int size, long *pSync, kyi_aset_t *a)
{
    KYI_CHECK(kyi_shmem_ready(call));
    int np = kyi_shmem.npes;
    if (size < 1 || start < 0 || logstride < 0 || logstride > 30)
        return kyi_shmem_fail(KY_ERR_ARG, call,
                              "active set (PE_start %d, logPE_stride %d, PE_size %d) is invalid", start,
                              logstride, size);
    long last = start + (long)(size - 1) * (1L << logstride);
    if (last >= np)
        return kyi_shmem_fail(KY_ERR_ARG, call,
                              "active set (PE_start %d, logPE_stride %d, PE_size %d) names PE %ld; "
                              "PEs are 0..%d",
                              start, logstride, size, last, np - 1);
    int d = kyi_shmem.me - start, stride = 1 << logstride;
    if (d < 0 || d % stride || d / stride >= size)
        return kyi_shmem_fail(KY_ERR_ARG, call,
                              "this PE (%d) is not in the active set (PE_start %d, logPE_stride %d, "
                              "PE_size %d)",
                              kyi_shmem.me, start, logstride, size);
    if (!pSync) return kyi_shmem_fail(KY_ERR_ARG, call, "pSync is NULL");
    int w;
    size_t off;
    KYI_CHECK(kyi_shmem_xlate(call, "pSync", pSync, 3 * sizeof(long), kyi_shmem.me, &w, &off));
    *a = (kyi_aset_t){start, stride, size, d / stride};
    return KY_OK;
}

int kyi_aset_member(const kyi_aset_t *a, int i)
{
    return a->start + i * a->stride;
}

/* pSync[0] at the set's first PE counts arrivals; it releases each member through its pSync[1]. Back-to-back
 * barriers on one pSync are safe: the first PE clears its count before releasing anyone, a member clears
 * its release before it can arrive again. quiet: complete this PE's puts first (a barrier, not a sync). */
int kyi_aset_barrier(const char *call, const kyi_aset_t *a, long *pSync, int quiet)
{
    if (quiet) KYI_CHECK(kyi_shmem_quiet(call));
    if (a->size == 1) return KY_OK;
    if (a->size == kyi_shmem.npes) return world_barrier(call, 0);
    int root = kyi_aset_member(a, 0);
    if (kyi_shmem.me != root) {
        KYI_CHECK(kyi_shmem_amo(call, KYI_AMO_ADD, &pSync[0], sizeof(long), 1, 0, root, NULL));
        KYI_CHECK(kyi_shmem_wait(call, &pSync[1], sizeof(long), 1, SHMEM_CMP_NE, (uint64_t)SHMEM_SYNC_VALUE));
        __atomic_store_n(&pSync[1], SHMEM_SYNC_VALUE, __ATOMIC_RELEASE);
        return KY_OK;
    }
    KYI_CHECK(kyi_shmem_wait(call, &pSync[0], sizeof(long), 1, SHMEM_CMP_EQ,
                             (uint64_t)(SHMEM_SYNC_VALUE + a->size - 1)));
    __atomic_store_n(&pSync[0], SHMEM_SYNC_VALUE, __ATOMIC_RELEASE);
    for (int i = 1; i < a->size; i++)
        KYI_CHECK(
            kyi_shmem_amo(call, KYI_AMO_SET, &pSync[1], sizeof(long), 1, 0, kyi_aset_member(a, i), NULL));
    return KY_OK;
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    kyi_aset_t a;
    if (!aset_check("shmem_barrier", PE_start, logPE_stride, PE_size, pSync, &a))
        kyi_aset_barrier("shmem_barrier", &a, pSync, 1);
}

/* The active-set sync: the barrier without completing puts. */
void kyi_shmem_aset_sync(const char *call, int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    kyi_aset_t a;
    if (!aset_check(call, PE_start, logPE_stride, PE_size, pSync, &a)) kyi_aset_barrier(call, &a, pSync, 0);
}

/* Barrier, the gets (started together, completed together), barrier: no source is read before every member
 * arrived and none changes before every member has read it. Member j's block (bytes at source + src_off)
 * lands at dest + j * dest_step; only_root: just the root's, at dest (the root itself gets nothing). */
static int set_gets(const char *call, const kyi_aset_t *a, long *pSync, size_t bytes, char *dest,
                    size_t dest_step, const char *source, size_t src_off, int only_root, int root_idx)
{
    KYI_CHECK(kyi_aset_barrier(call, a, pSync, 1));
    for (int j = 0; j < a->size && bytes; j++) {
        if (only_root && (j != root_idx || a->idx == root_idx)) continue;
        KYI_CHECK(kyi_shmem_rma(call, 0, (void *)(source + src_off),
                                dest + (only_root ? 0 : (size_t)j * dest_step), bytes, kyi_aset_member(a, j),
                                1));
    }
    KYI_CHECK(kyi_shmem_quiet(call));
    return kyi_aset_barrier(call, a, pSync, 0);
}

/* Every member's count sits in its pSync[2] from before the first barrier to after the second. */
static int set_collect(const char *call, const kyi_aset_t *a, long *pSync, void *dest, const void *source,
                       size_t bytes)
{
    __atomic_store_n(&pSync[2], (long)bytes, __ATOMIC_RELEASE);
    KYI_CHECK(kyi_aset_barrier(call, a, pSync, 1));
    size_t at = 0;
    for (int j = 0; j < a->size; j++) {
        long n = 0;
        KYI_CHECK(kyi_shmem_rma(call, 0, &pSync[2], &n, sizeof n, kyi_aset_member(a, j), 0));
        if (n)
            KYI_CHECK(kyi_shmem_rma(call, 0, (void *)source, (char *)dest + at, (size_t)n,
                                    kyi_aset_member(a, j), 1));
        at += (size_t)n;
    }
    KYI_CHECK(kyi_shmem_quiet(call));
    KYI_CHECK(kyi_aset_barrier(call, a, pSync, 0));
    __atomic_store_n(&pSync[2], SHMEM_SYNC_VALUE, __ATOMIC_RELEASE);
    return KY_OK;
}

/* Gather every member's source between two set barriers, then reduce in member order into dest (after the
 * second barrier: dest may be source, which the others read until then). */
static int set_reduce_n(const char *call, const kyi_aset_t *a, long *pSync, void *dest, const void *source,
                        size_t n, size_t size, int op, combine_fn f)
{
    size_t bytes, total;
    KYI_CHECK(kyi_shmem_bytes(call, n, size, &bytes));
    if (!bytes) return kyi_aset_barrier(call, a, pSync, 1);
    KYI_CHECK(kyi_shmem_bytes(call, bytes, (size_t)a->size, &total));
    char *all = malloc(total);
    if (!all) return kyi_shmem_fail(KY_ERR_NOMEM, call, "no memory for %zu bytes", total);
    int st = set_gets(call, a, pSync, bytes, all, bytes, source, 0, 0, 0);
    if (!st) reduce_blocks(f, op, dest, all, a->size, n, size);
    free(all);
    return st;
}

static void set_broadcast(const char *call, void *dest, const void *source, size_t nelems, size_t size,
                          int root, int start, int logstride, int psize, long *pSync)
{
    kyi_aset_t a;
    size_t bytes;
    if (aset_check(call, start, logstride, psize, pSync, &a) || kyi_shmem_bytes(call, nelems, size, &bytes))
        return;
    if (root < 0 || root >= a.size) {
        kyi_shmem_fail(KY_ERR_ARG, call, "PE_root %d is not an index of the active set (0..%d)", root,
                       a.size - 1);
        return;
    }
    set_gets(call, &a, pSync, bytes, dest, 0, source, 0, 1, root);
}

static void set_fcollect(const char *call, void *dest, const void *source, size_t nelems, size_t size,
                         int start, int logstride, int psize, long *pSync)
{
    kyi_aset_t a;
    size_t bytes;
    if (aset_check(call, start, logstride, psize, pSync, &a) || kyi_shmem_bytes(call, nelems, size, &bytes))
        return;
    set_gets(call, &a, pSync, bytes, dest, bytes, source, 0, 0, 0);
}

static void set_alltoall(const char *call, void *dest, const void *source, size_t nelems, size_t size,
                         int start, int logstride, int psize, long *pSync)
{
    kyi_aset_t a;
    size_t bytes;
    if (aset_check(call, start, logstride, psize, pSync, &a) || kyi_shmem_bytes(call, nelems, size, &bytes))
        return;
    set_gets(call, &a, pSync, bytes, dest, bytes, source, (size_t)a.idx * bytes, 0, 0);
}

static void set_alltoalls(const char *call, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                          size_t nelems, size_t size, int start, int logstride, int psize, long *pSync)
{
    kyi_aset_t a;
    if (aset_check(call, start, logstride, psize, pSync, &a)) return;
    if (dst < 1 || sst < 1) {
        kyi_shmem_fail(KY_ERR_ARG, call, "strides %td and %td: both must be at least 1", dst, sst);
        return;
    }
    if (kyi_aset_barrier(call, &a, pSync, 1)) return;
    for (int j = 0; j < a.size && nelems; j++)
        if (kyi_shmem_strided(call, 0, (char *)source + (size_t)a.idx * nelems * (size_t)sst * size, sst,
                              (char *)dest + (size_t)j * nelems * (size_t)dst * size, dst, nelems, size,
                              kyi_aset_member(&a, j)))
            return;
    kyi_aset_barrier(call, &a, pSync, 1);
}

static void set_collect_v(const char *call, void *dest, const void *source, size_t nelems, size_t size,
                          int start, int logstride, int psize, long *pSync)
{
    kyi_aset_t a;
    size_t bytes;
    if (aset_check(call, start, logstride, psize, pSync, &a) || kyi_shmem_bytes(call, nelems, size, &bytes))
        return;
    set_collect(call, &a, pSync, dest, source, bytes);
}

#define DEF_SET_COLL(BITS, BYTES)                                                                            \
    void shmem_broadcast##BITS(void *dest, const void *source, size_t nelems, int PE_root, int PE_start,     \
                               int logPE_stride, int PE_size, long *pSync)                                   \
    {                                                                                                        \
        set_broadcast("shmem_broadcast" #BITS, dest, source, nelems, BYTES, PE_root, PE_start, logPE_stride, \
                      PE_size, pSync);                                                                       \
    }                                                                                                        \
    void shmem_collect##BITS(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride,  \
                             int PE_size, long *pSync)                                                       \
    {                                                                                                        \
        set_collect_v("shmem_collect" #BITS, dest, source, nelems, BYTES, PE_start, logPE_stride, PE_size,   \
                      pSync);                                                                                \
    }                                                                                                        \
    void shmem_fcollect##BITS(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, \
                              int PE_size, long *pSync)                                                      \
    {                                                                                                        \
        set_fcollect("shmem_fcollect" #BITS, dest, source, nelems, BYTES, PE_start, logPE_stride, PE_size,   \
                     pSync);                                                                                 \
    }                                                                                                        \
    void shmem_alltoall##BITS(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, \
                              int PE_size, long *pSync)                                                      \
    {                                                                                                        \
        set_alltoall("shmem_alltoall" #BITS, dest, source, nelems, BYTES, PE_start, logPE_stride, PE_size,   \
                     pSync);                                                                                 \
    }                                                                                                        \
    void shmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,  \
                               int PE_start, int logPE_stride, int PE_size, long *pSync)                     \
    {                                                                                                        \
        set_alltoalls("shmem_alltoalls" #BITS, dest, source, dst, sst, nelems, BYTES, PE_start,              \
                      logPE_stride, PE_size, pSync);                                                         \
    }
DEF_SET_COLL(32, 4)
DEF_SET_COLL(64, 8)

static void set_reduce(const char *call, void *dest, const void *source, int nreduce, size_t size, int op,
                       combine_fn f, int start, int logstride, int psize, long *pSync)
{
    kyi_aset_t a;
    if (aset_check(call, start, logstride, psize, pSync, &a)) return;
    if (nreduce < 0) {
        kyi_shmem_fail(KY_ERR_ARG, call, "nreduce %d is negative", nreduce);
        return;
    }
    set_reduce_n(call, &a, pSync, dest, source, (size_t)nreduce, size, op, f);
}

#define DEF_TOALL1(NAME, T, OPN, OP)                                                                        \
    void shmem_##NAME##_##OPN##_to_all(T *dest, const T *source, int nreduce, int PE_start,                 \
                                       int logPE_stride, int PE_size, T *pWrk, long *pSync)                 \
    {                                                                                                       \
        (void)pWrk;                                                                                         \
        set_reduce("shmem_" #NAME "_" #OPN "_to_all", dest, source, nreduce, sizeof(T), OP, combine_##NAME, \
                   PE_start, logPE_stride, PE_size, pSync);                                                 \
    }
#define DEF_TOALL_BIT(NAME, T, K) \
    DEF_TOALL1(NAME, T, and, OP_AND) DEF_TOALL1(NAME, T, or, OP_OR) DEF_TOALL1(NAME, T, xor, OP_XOR)
#define DEF_TOALL_ARITH(NAME, T, K)  \
    DEF_TOALL1(NAME, T, max, OP_MAX) \
    DEF_TOALL1(NAME, T, min, OP_MIN) DEF_TOALL1(NAME, T, sum, OP_SUM) DEF_TOALL1(NAME, T, prod, OP_PROD)
SHMEMI_TOALL_BIT_TYPES(DEF_TOALL_BIT)
SHMEMI_TOALL_ARITH_TYPES(DEF_TOALL_ARITH)
