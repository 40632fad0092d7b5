/* kycc_rt.c: run-time of programs translated by kycc (kycc_rt.h says what each call means; docs/kycc.md the
 * model). Built with -fopenmp into every kycc program: the orphaned `omp barrier`s below bind to the
 * translated program's parallel region, so a global barrier is the rank's threads meeting, one thread per
 * rank calling ky_barrier, and the threads meeting again (dsm.h's pattern for OpenMP; kycc_barrier does the
 * same with a counter and a generation instead of the two omp barriers). */
#include "kycc_rt.h"
#include "smint_rt.h"

#include <limits.h>
#include <malloc.h>
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <kyoyu.h>
#include <kyoyu/dsm.h>

#define KYCC_MAX_VARS 4096
#define KYCC_SMALL 4096               /* data below this share one allocation homed at rank 0 */
#define KYCC_FRAME_BYTES (1u << 20)   /* slots for locals that regions write */
#define KYCC_ORPHAN_BYTES (64u << 10) /* locals an orphaned loop run once hands to the other ranks */
#define KYCC_LOCK_BASE (KY_DSM_LOCKS - 2048)
#define KYCC_FLUSH_LOCK (KY_DSM_LOCKS - 1)

typedef struct {
    void **ptr;
    size_t size, align, elem;
    const void *init;
    int ndim, map_dim;
    long dims[16];
    const char *where;
} kycc_var_t;

static kycc_var_t vars[KYCC_MAX_VARS];
static int nvars;
static int in_region; /* set by the serial thread before its threads start */
static char *frame_base;
static size_t frame_top;
static char *orphan_slots; /* KYCC_ORPHAN_BYTES of the global space: the source rank's locals (orphan_src) */
static int orphan_active;  /* an orphaned loop runs once, not on every rank (kycc_orphan_begin) */
static int one_rank_loops; /* KYCC_ONE_RANK_LOOPS (default 1) */
static int share_orphans;  /* KYCC_SHARE_ORPHANS=1: such loops are shared out over the ranks instead */
static int orphan_src;     /* the rank whose locals the others take at the loop's end */
static unsigned char *red_slots; /* two 64-byte slots per rank for reduction partials */
static int me, nranks;
static int lazy; /* node-shared mode with the lazy serial phase (KYCC_LAZY_PHASE=0 turns it off) */
/* parallel phase outside a region: the next store of the serial part switches */
int kycc_serial_due;
/* the global space's reserved range, for KYCC_STA (empty until ky_init) */
const char *kycc_gas_lo, *kycc_gas_hi;
/* if(false) regions being run (their bodies are serial code that kycc did not check) */
static int inactive;
static struct {
    unsigned long regions, serial, skipped, one_rank;
    double phase_s;
} stats;

void kycc_fail(const char *where, const char *why)
{
    fprintf(stderr, "rank %d: kycc: %s: %s\n", me, where, why);
    fflush(stderr);
    abort();
}

static void check(int status, const char *where, const char *call)
{
    if (status >= 0) return;
    char why[512];
    snprintf(why, sizeof why, "%s: %s (%s)", call, ky_last_error(), ky_strerror(status));
    kycc_fail(where, why);
}

void kycc_register(void **ptr, size_t size, size_t align, const void *init, int ndim, const long *dims,
                   size_t elem, int map_dim, const char *where)
{
    if (nvars == KYCC_MAX_VARS) kycc_fail(where, "more than 4096 global variables");
    if (ndim > 15) kycc_fail(where, "arrays of more than 15 dimensions cannot be mapped");
    kycc_var_t *v = &vars[nvars++];
    *v = (kycc_var_t){ptr, size, align ? align : 1, elem, init, ndim, map_dim, {0}, where};
    for (int d = 0; d < ndim; d++) v->dims[d] = dims[d];
}

/* ky_alloc homed at rank 0, NULL on failure (the caller names what it was for) */
static void *galloc(size_t bytes)
{
    void *p = NULL;
    return ky_alloc(bytes, 0, &p) == KY_OK ? p : NULL;
}

/* Mapped arrays get ky_mapalloc (one block of the mapped dimension per rank, seed 003's "block"); small data
 * is packed into one page range homed at rank 0 so a scalar costs no page of its own. */
static void allocate_globals(void)
{
    /* KYCC_PLACEMENT=whole: arrays without a mapping directive are cut as seed 003's Omni/SCASH cut them (the
     * whole array in equal blocks), not on their first dimension; for comparing its variants' page counts */
    const char *pl = getenv("KYCC_PLACEMENT");
    int whole = pl && strcmp(pl, "whole") == 0;
    if (pl && *pl && !whole && strcmp(pl, "first") != 0)
        kycc_fail("start-up", "KYCC_PLACEMENT is first or whole");
    size_t small = 0;
    for (int i = 0; i < nvars; i++)
        if (vars[i].size < KYCC_SMALL && vars[i].map_dim == -1)
            small = (small + vars[i].align - 1) / vars[i].align * vars[i].align + vars[i].size;
    char *pack = small ? galloc(small) : NULL;
    if (small && !pack) check(-1, "start-up", "ky_alloc of the small globals");
    size_t off = 0;
    for (int i = 0; i < nvars; i++) {
        kycc_var_t *v = &vars[i];
        void *p;
        if (v->size < KYCC_SMALL && v->map_dim == -1) {
            off = (off + v->align - 1) / v->align * v->align;
            p = pack + off;
            off += v->size;
        } else if (v->ndim > 0 && v->map_dim != -2) {
            int d = v->map_dim < 0 ? 0 : v->map_dim, dims[17], divs[17];
            for (int k = 0; k < v->ndim; k++) {
                dims[k] = (int)v->dims[k];
                divs[k] = k == d ? nranks : 1;
            }
            dims[v->ndim] = divs[v->ndim] = -1;
            if (v->map_dim == -1 && whole && v->size / v->elem <= INT_MAX) {
                /* Omni/SCASH's default: the array as one run of elements in nranks equal blocks */
                dims[0] = (int)(v->size / v->elem), divs[0] = nranks;
                dims[1] = divs[1] = -1;
            }
            p = ky_mapalloc(dims, divs, v->elem, 0, nranks);
            if (!p) check(-1, v->where, "ky_mapalloc");
        } else {
            p = galloc(v->size);
            if (!p) check(-1, v->where, "ky_alloc");
        }
        *v->ptr = p;
        if (v->init && me == 0) memcpy(p, v->init, v->size);
    }
    red_slots = galloc((size_t)nranks * 2 * 64);
    frame_base = galloc(KYCC_FRAME_BYTES);
    orphan_slots = galloc(KYCC_ORPHAN_BYTES);
    if (!red_slots || !frame_base || !orphan_slots) check(-1, "start-up", "ky_alloc of the run-time's slots");
    check(ky_barrier(), "start-up", "ky_barrier");
}

/* ky_dsm_phase, timed for KYCC_STATS */
static void phase(int parallel, const char *where)
{
    double t0 = omp_get_wtime();
    check(ky_dsm_phase(parallel), where, "ky_dsm_phase");
    stats.phase_s += omp_get_wtime() - t0;
    if (!parallel) stats.serial++;
}

static void finish(void)
{
    const char *st = getenv("KYCC_STATS");
    if (st && *st && strcmp(st, "0") != 0)
        fprintf(
            stderr,
            "kycc rank %d: regions %lu | serial phases %lu | phase changes skipped %lu | orphaned loops run "
            "once %lu | in ky_dsm_phase %.3f s\n",
            me, stats.regions, stats.serial, stats.skipped, stats.one_rank, stats.phase_s);
    ky_finalize();
}

extern int __kycc_entry(int argc, char **argv);

int main(int argc, char **argv)
{
    /* Every rank runs the serial part, read-modify-writes included (x[i] += 1, in-place prefix sums). A rank
     * fetching a page in the interval in which its home writes it must get the synchronised version, or it
     * applies the update twice: under KY_DSM_SNAPSHOT=2 a page nobody had fetched yet is not guarded
     * (docs/dsm.md, "The hole"), and NPB CG on 3 ranks with 4 KiB pages failed 5 runs in 6. Guard all. */
    setenv("KY_DSM_SNAPSHOT", "1", 0);
    int s = ky_init(&argc, &argv);
    if (s != KY_OK) {
        fprintf(stderr, "kycc: ky_init: %s (%s)\n", ky_last_error(), ky_strerror(s));
        return 1;
    }
    me = ky_rank();
    nranks = ky_nranks();
    void *gas = NULL;
    size_t gas_bytes = 0;
    check(ky_gas_range(&gas, &gas_bytes), "start-up", "ky_gas_range");
    kycc_gas_lo = gas;
    kycc_gas_hi = kycc_gas_lo + gas_bytes;
    /* Ranks of one host share one copy of every page (docs/kycc.md, "One node"): OpenMP's parallel parts are
     * race-free and its serial part runs on every rank alike, which is what the mode asks for. */
    int node = 0;
    check(ky_dsm_node_mode(1, &node), "start-up", "ky_dsm_node_mode");
    const char *lz = getenv("KYCC_LAZY_PHASE");
    lazy = node && !(lz && strcmp(lz, "0") == 0);
    const char *ol = getenv("KYCC_ONE_RANK_LOOPS");
    one_rank_loops = !(ol && strcmp(ol, "0") == 0);
    const char *so = getenv("KYCC_SHARE_ORPHANS");
    share_orphans = so && strcmp(so, "1") == 0;
    /* OMP_NUM_THREADS unset: OpenMP would give every rank all of its host's cores, and ranks sharing a host
     * then oversubscribe it (NPB CG class S, 2 ranks on 2 cores: 9.4 s against 0.66 s with one thread each,
     * every team barrier waiting for descheduled threads): ky_default_threads shares the cores instead. */
    if (!getenv("OMP_NUM_THREADS")) {
        int team = 1;
        check(ky_default_threads(&team), "start-up", "ky_default_threads");
        omp_set_num_threads(team);
    }
    /* A user's other value is taken, but not silently: NPB CG fails verification under KY_DSM_SNAPSHOT=0 */
    const char *snap = getenv("KY_DSM_SNAPSHOT");
    if (me == 0 && snap && strcmp(snap, "1") != 0 && !smint_set_snapshot_())
        fprintf(
            stderr,
            "kycc: warning: KY_DSM_SNAPSHOT=%s: every rank runs the serial part, and its in-place updates "
            "(x[i] += 1) need KY_DSM_SNAPSHOT=1 (docs/kycc.md, \"Limits\"); results may be wrong\n",
            snap);
    /* The serial part runs on every rank; one copy of its output is enough (KYCC_OUTPUT=all keeps all). */
    const char *out = getenv("KYCC_OUTPUT");
    if (me != 0 && !(out && strcmp(out, "all") == 0)) {
        if (!freopen("/dev/null", "w", stdout)) kycc_fail("start-up", "cannot silence stdout");
    }
    allocate_globals();
    atexit(finish);
    exit(__kycc_entry(argc, argv));
}

int kycc_region_begin(const char *where, int active)
{
    if (in_region || omp_in_parallel()) kycc_fail(where, "nested parallel regions are not supported");
    /* if(false): one thread, which every rank runs like the serial part, stores included */
    if (!active) {
        kycc_serial();
        inactive++;
        return 0;
    }
    stats.regions++;
    /* still parallel since the last region (no store between): the phase change is a barrier */
    if (kycc_serial_due) stats.skipped++;
    kycc_serial_due = 0;
    phase(1, where);
    in_region = 1;
    return 1;
}

void kycc_region_end(int active)
{
    if (!active) {
        inactive--;
        return;
    }
    in_region = 0;
    /* the body of an if(false) region is serial code without checks: a region it runs ends in the serial
     * phase */
    if (lazy && !inactive) {
        check(ky_barrier(), "end of a parallel region", "ky_barrier");
        kycc_serial_due = 1;
    } else {
        phase(0, "end of a parallel region");
    }
}

void kycc_serial(void)
{
    if (!kycc_serial_due || in_region) return;
    kycc_serial_due = 0;
    phase(0, "a store of the serial part");
}

void kycc_serial_eager(void)
{
    if (in_region) return;
    kycc_serial();
    lazy = 0;
}

int kycc_in_region(void)
{
    return in_region;
}

int kycc_orphan_begin(const char *where, size_t local_bytes)
{
    /* inside a region (the loop's function called from one) the loop is shared out as usual */
    if (in_region || omp_in_parallel()) return 0;
    /* the parallel phase is what lets the loop's stores reach the one copy; without it (page protocol, an
     * if(false) region's unchecked body, or off) every rank runs the loop in the serial phase */
    if (!lazy || inactive || !one_rank_loops || nranks == 1 ||
        local_bytes > KYCC_ORPHAN_BYTES / 2) { /* half: room for the slots' alignment */
        KYCC_ST;
        return 0;
    }
    /* the barrier in the phase change: no rank still reads, in the serial code before, what the loop stores
     */
    kycc_serial_due = 0;
    phase(1, where);
    orphan_active = 1;
    stats.one_rank++;
    return 1;
}

/* the source rank's locals into the slots, or the slots into another rank's locals */
static void orphan_copy(void *const *vars, const size_t *sizes, int n, int to_slots)
{
    size_t at = 0;
    for (int k = 0; k < n; k++) {
        if (at + sizes[k] > KYCC_ORPHAN_BYTES)
            kycc_fail("end of an orphaned loop", "its locals exceed 64 KiB");
        if (to_slots)
            memcpy(orphan_slots + at, vars[k], sizes[k]);
        else
            memcpy(vars[k], orphan_slots + at, sizes[k]);
        at += (sizes[k] + 15) / 16 * 16;
    }
}

void kycc_orphan_end(void *const *vars, const size_t *sizes, int n)
{
    int src = orphan_src;
    if (me == src) orphan_copy(vars, sizes, n, 1);
    /* the loop's stores and the source rank's locals are everyone's after it; the slots are written again
     * only after the next orphaned loop's phase change, a barrier every rank passes after reading them */
    check(ky_barrier(), "end of an orphaned loop", "ky_barrier");
    if (me != src) orphan_copy(vars, sizes, n, 0);
    orphan_active = 0;
    kycc_serial_due = 1; /* still the parallel phase: the next serial store switches */
}

void *kycc_frame_push(size_t size, size_t align)
{
    kycc_serial(); /* the caller copies the local into its slot next: a store to the global space */
    size_t at = (frame_top + align - 1) / align * align;
    if (at + size > KYCC_FRAME_BYTES) kycc_fail("parallel region", "shared locals exceed the 1 MiB frame");
    frame_top = at + size;
    return frame_base + at;
}

void kycc_frame_pop(void *slot)
{
    frame_top = (size_t)((char *)slot - frame_base);
}

int kycc_thread_num(void)
{
    return in_region ? me * omp_get_num_threads() + omp_get_thread_num() : 0;
}
int kycc_num_threads(void)
{
    return in_region ? nranks * omp_get_num_threads() : 1;
}
int kycc_max_threads(void)
{
    return nranks * omp_get_max_threads();
}
int kycc_is_master(void)
{
    return !in_region || (me == 0 && omp_get_thread_num() == 0);
}
int kycc_section(int k, int n)
{
    (void)n;
    return k % kycc_num_threads() == kycc_thread_num();
}

int kycc_is_rank_master(void)
{
    return omp_get_thread_num() == 0;
}

/* The rank's side of a team barrier: its threads arrive on a counter, the last one passes the node's
 * barrier for all of them (ky_barrier) and releases them with a generation. Two `omp barrier`s around one
 * thread's ky_barrier cost 2 x 0.45 us at 2 threads per rank on the 16-core host, for NPB SP's 9.7 million
 * barriers (8 ranks x 2 threads ran 0.75x of OpenMP's 16 threads where 16 x 1 ran 0.80x). The atomics
 * order the threads' stores as the omp barrier did: each arrival releases, the last one acquires them all
 * before ky_barrier, and the generation's release/acquire hands everything to the waiting threads. */
static struct {
    _Alignas(64) atomic_int arrived;
    _Alignas(64) atomic_uint gen;
} team;

static void team_wait(unsigned gen)
{
    /* spin about 10 us, then yield: a rank's threads that outnumber its cores must not keep the last
     * thread from the core it needs */
    for (unsigned i = 0; atomic_load_explicit(&team.gen, memory_order_acquire) == gen; i++) {
        if (i < 4096) {
#if defined(__x86_64__)
            __builtin_ia32_pause();
#endif
        } else
            sched_yield();
    }
}

/* 1 for the last of the rank's threads to arrive, which then acts for all of them and calls team_release;
 * 0 for the others, once released */
static int team_last(unsigned *gen)
{
    int t = omp_get_num_threads();
    *gen = atomic_load_explicit(&team.gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&team.arrived, 1, memory_order_acq_rel) != t - 1) {
        team_wait(*gen);
        return 0;
    }
    atomic_store_explicit(&team.arrived, 0, memory_order_relaxed);
    return 1;
}

static void team_release(unsigned gen)
{
    atomic_store_explicit(&team.gen, gen + 1, memory_order_release);
}

void kycc_barrier(void)
{
    unsigned gen;
    if (!in_region || !team_last(&gen)) return;
    check(ky_barrier(), "omp barrier", "ky_barrier");
    team_release(gen);
}

static void split(long lo, long hi, int parts, int part, long *first, long *span)
{
    long n = hi > lo ? hi - lo : 0, q = n / parts, r = n % parts;
    *first = lo + part * q + (part < r ? part : r);
    *span = q + (part < r);
}

/* an orphaned loop run once: all of it on rank 0, or one block per rank under KYCC_SHARE_ORPHANS=1 */
static int orphan_share(long n, long *first, long *span, long *stride)
{
    if (!orphan_active) return 0;
    if (share_orphans) { /* one block per rank; the last iteration's rank hands its locals over */
        split(0, n, nranks, me, first, span);
        orphan_src = n <= 0 ? 0 : n < nranks ? (int)n - 1 : nranks - 1;
    } else {
        *first = 0;
        *span = me == 0 ? n : 0;
        orphan_src = 0;
    }
    *stride = n > 0 ? n : 1;
    return 1;
}

void kycc_for_static(long n, long chunk, long *first, long *span, long *stride)
{
    if (orphan_share(n, first, span, stride)) return;
    int g = kycc_thread_num(), team = kycc_num_threads();
    if (chunk <= 0) {
        split(0, n, team, g, first, span);
        *stride = n > 0 ? n : 1;
    } else {
        *first = (long)g * chunk;
        *span = chunk;
        *stride = (long)team * chunk;
    }
}

static long clampl(long v, long lo, long hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}
static long floordiv(long a, long b)
{
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

void kycc_for_affinity(long lb, long step, long n, long extent, long *first, long *span, long *stride)
{
    if (orphan_share(n, first, span, stride)) return;
    if (!in_region) {
        *first = 0;
        *span = n;
        *stride = n > 0 ? n : 1;
        return;
    }
    long b = (extent + nranks - 1) / nranks, lo, hi; /* rank r owns values [r*b, (r+1)*b) */
    if (b < 1) b = 1;
    if (step > 0) {
        lo = me == 0 ? 0 : -floordiv(-((long)me * b - lb), step);
        hi = me == nranks - 1 ? n : -floordiv(-((long)(me + 1) * b - lb), step);
    } else {
        long s = -step;
        lo = me == nranks - 1 ? 0 : floordiv(lb - (long)(me + 1) * b, s) + 1;
        hi = me == 0 ? n : floordiv(lb - (long)me * b, s) + 1;
    }
    lo = clampl(lo, 0, n);
    hi = clampl(hi, lo, n);
    split(lo, hi, omp_get_num_threads(), omp_get_thread_num(), first, span);
    *stride = n > 0 ? n : 1;
}

void kycc_critical_begin(int id)
{
    if (in_region) check(ky_lock(KYCC_LOCK_BASE + id), "omp critical", "ky_lock");
}

void kycc_critical_end(int id)
{
    if (in_region) check(ky_unlock(KYCC_LOCK_BASE + id), "omp critical", "ky_unlock");
}

/* Release this rank's writes and see every earlier release: an acquire and a release of a lock. */
void kycc_flush(void)
{
    __sync_synchronize();
    if (!in_region) return;
    check(ky_lock(KYCC_FLUSH_LOCK), "omp flush", "ky_lock");
    check(ky_unlock(KYCC_FLUSH_LOCK), "omp flush", "ky_unlock");
}

#define KYCC_COMBINE(T)               \
    {                                 \
        T *a = acc;                   \
        T b = *(const T *)v;          \
        switch (op) {                 \
            case KYCC_OP_ADD:         \
            case KYCC_OP_SUB:         \
                *a = *a + b;          \
                break;                \
            case KYCC_OP_MUL:         \
                *a = *a * b;          \
                break;                \
            case KYCC_OP_LAND:        \
                *a = *a && b;         \
                break;                \
            case KYCC_OP_LOR:         \
                *a = *a || b;         \
                break;                \
            case KYCC_OP_MAX:         \
                *a = *a > b ? *a : b; \
                break;                \
            case KYCC_OP_MIN:         \
                *a = *a < b ? *a : b; \
                break;                \
            default:                  \
                return 0;             \
        }                             \
        return 1;                     \
    }
#define KYCC_COMBINE_INT(T)      \
    {                            \
        T *a = acc;              \
        T b = *(const T *)v;     \
        if (op == KYCC_OP_AND) { \
            *a = *a & b;         \
            return 1;            \
        }                        \
        if (op == KYCC_OP_OR) {  \
            *a = *a | b;         \
            return 1;            \
        }                        \
        if (op == KYCC_OP_XOR) { \
            *a = *a ^ b;         \
            return 1;            \
        }                        \
        KYCC_COMBINE(T)          \
    }

static int combine(void *acc, const void *v, int type, int op)
{
    switch (type) {
        case KYCC_T_CHAR:
            KYCC_COMBINE_INT(char)
        case KYCC_T_SCHAR:
            KYCC_COMBINE_INT(signed char)
        case KYCC_T_UCHAR:
            KYCC_COMBINE_INT(unsigned char)
        case KYCC_T_SHORT:
            KYCC_COMBINE_INT(short)
        case KYCC_T_USHORT:
            KYCC_COMBINE_INT(unsigned short)
        case KYCC_T_INT:
            KYCC_COMBINE_INT(int)
        case KYCC_T_UINT:
            KYCC_COMBINE_INT(unsigned)
        case KYCC_T_LONG:
            KYCC_COMBINE_INT(long)
        case KYCC_T_ULONG:
            KYCC_COMBINE_INT(unsigned long)
        case KYCC_T_LLONG:
            KYCC_COMBINE_INT(long long)
        case KYCC_T_ULLONG:
            KYCC_COMBINE_INT(unsigned long long)
        case KYCC_T_BOOL:
            KYCC_COMBINE_INT(_Bool)
        case KYCC_T_FLOAT:
            KYCC_COMBINE(float)
        case KYCC_T_DOUBLE:
            KYCC_COMBINE(double)
    }
    return 0;
}

static const size_t type_size[] = {1,
                                   1,
                                   1,
                                   sizeof(short),
                                   sizeof(short),
                                   sizeof(int),
                                   sizeof(int),
                                   sizeof(long),
                                   sizeof(long),
                                   sizeof(long long),
                                   sizeof(long long),
                                   sizeof(float),
                                   sizeof(double),
                                   sizeof(_Bool)};

/* Threads fold their values into the rank's partial; each rank's partial goes to its slot in the global
 * space; after a global barrier every rank folds all slots, in rank order, into its view of the target,
 * so all ranks compute the same bits and write the same value. */
void kycc_reduce(void *target, const void *priv, int type, int op)
{
    static unsigned char partial[64];
    static int have;
    size_t sz = type_size[type];
    if (!in_region) {
        kycc_serial();
        if (!combine(target, priv, type, op)) kycc_fail("reduction", "operator not defined for this type");
        return;
    }
#pragma omp critical(kycc_reduce)
    {
        if (!have)
            memcpy(partial, priv, sz);
        else if (!combine(partial, priv, type, op))
            kycc_fail("reduction", "operator not defined for this type");
        have = 1;
    }
    unsigned gen;
    if (team_last(&gen)) { /* the rank's last thread, for all of them (kycc_barrier) */
        /* Two sets of slots, used in turn: with one copy on the node (ky_dsm_node_mode) a rank leaving a
         * reduction with nowait could fill its slot for the next one while another still reads this one. */
        static unsigned turn;
        unsigned char *slots = red_slots + (size_t)(turn++ & 1) * (size_t)nranks * 64;
        memcpy(slots + (size_t)me * 64, partial, sz);
        have = 0;
        /* the target's value before anybody writes the result into it: read before the barrier */
        unsigned char v[64];
        memcpy(v, target, sz);
        check(ky_barrier(), "reduction", "ky_barrier");
        for (int r = 0; r < nranks; r++) combine(v, slots + (size_t)r * 64, type, op);
        memcpy(target, v, sz);
        team_release(gen);
    }
}

void kycc_update(void *base, const size_t glb[], const size_t region[], int ndim, size_t elem)
{
    check(ky_preload_array(base, glb, region, ndim, elem, 0), "kyoyu update", "ky_preload_array");
}

void kycc_push(void *base, const size_t glb[], const size_t region[], int ndim, size_t elem, int to)
{
    if (to == me) return;
    check(ky_push_array(base, glb, region, ndim, elem, to), "kyoyu push", "ky_push_array");
}

/* Global blocks carry a header of 64 bytes (keeps any type aligned): the size, for realloc, and whether the
 * block has its own allocation or lies in an arena. Small blocks (MG allocates every row of its grids on
 * its own) are cut from arenas of KYCC_ARENA bytes, one block of bytes per rank: every rank makes the same
 * calls in the same order, so a bump pointer gives the same addresses everywhere with no communication. */
#define KYCC_HDR 64
#define KYCC_ARENA ((size_t)4 << 20)

static char *arena;
static size_t arena_used = KYCC_ARENA;

static char *distributed(size_t total)
{
    if (total < (size_t)nranks * ky_page_size()) return galloc(total);
    size_t per = (total + nranks - 1) / nranks;
    if (per > 0x7fffffff) return galloc(total);
    int dims[] = {nranks, (int)per, -1}, divs[] = {nranks, 1, -1};
    return ky_mapalloc(dims, divs, 1, 0, nranks);
}

static void *global_block(size_t n)
{
    kycc_serial(); /* the block's header is a store to the global space */
    size_t total = (n + KYCC_HDR + 63) / 64 * 64;
    char *p;
    int in_arena = total < KYCC_SMALL;
    if (in_arena) {
        if (arena_used + total > KYCC_ARENA) {
            arena = distributed(KYCC_ARENA);
            if (!arena) return NULL;
            arena_used = 0;
        }
        p = arena + arena_used;
        arena_used += total;
    } else {
        p = distributed(total);
        if (!p) return NULL;
    }
    ((size_t *)p)[0] = n;
    ((size_t *)p)[1] = (size_t)in_arena;
    return p + KYCC_HDR;
}

void *kycc_malloc(size_t n)
{
    if (in_region || omp_in_parallel()) return malloc(n);
    return global_block(n);
}

void *kycc_calloc(size_t n, size_t size)
{
    if (in_region || omp_in_parallel()) return calloc(n, size);
    return global_block(n * size); /* the global space is zero-filled and arenas never reuse a block */
}

void kycc_free(void *p)
{
    if (!p) return;
    if (!ky_is_global(p)) {
        free(p);
        return;
    }
    size_t *h = (size_t *)((char *)p - KYCC_HDR);
    kycc_serial();
    if (h[1] || in_region || omp_in_parallel()) return; /* arena blocks stay; freeing is collective */
    check(ky_free(h), "free", "ky_free");
}

void *kycc_realloc(void *p, size_t n)
{
    if (!p) return kycc_malloc(n);
    if (in_region || omp_in_parallel()) {
        if (!ky_is_global(p)) return realloc(p, n);
        kycc_fail("realloc", "a global block cannot be resized inside a parallel region");
    }
    size_t old = ky_is_global(p) ? ((size_t *)((char *)p - KYCC_HDR))[0] : malloc_usable_size(p);
    void *q = global_block(n);
    if (q) {
        memcpy(q, p, old < n ? old : n);
        kycc_free(p);
    }
    return q;
}
