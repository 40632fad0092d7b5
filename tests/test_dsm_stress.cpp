/* Randomized stress of the global address space, checked against a serial replay (CTest: dsm_stress.*).
 *
 * Every rank runs T threads (KY_TEST_STRESS_THREADS, default 4) through rounds. A round is 1-4 intervals
 * separated by random execution syncs (ky_sync, ky_sync_drop, ky_sync_nofetch, ky_sync_nostore) and ends with
 * ky_barrier; collectives are made by thread 0 while the others wait at a pthread barrier. In each interval
 * every thread runs operations drawn from (seed, round, rank, thread, interval): reads and writes of
 * odd-sized elements of ky_mapalloc arrays (z slabs of doubles, 2-D cyclic blocks of 24-byte structs, a 1-D
 * uint32 array dealt to ranks 1..n-1), a ky_alloc array (one home) and every rank's ky_alloc_local array;
 * lock-protected logs under striped locks (ky_lock or ky_trylock, some nested under a global lock);
 * ky_fetch_add counters; ky_compare_swap increments (4 and 8 bytes) and one-winner slot claims;
 * ky_preload_array of random boxes (read-only or read-write) followed by accesses inside them, and
 * ky_overload_array of boxes preloaded before.
 *
 * Every rank generates every thread's operations of the round (the same seed everywhere), so it knows who
 * writes what and replays the writes serially into its reference. The documented semantics decide what a read
 * may see (docs/dsm.md):
 *  - after ky_barrier everything written before it is visible everywhere: after each round every rank
 *    compares the pages it picks (all of them in the last round) with the reference;
 *  - in a round every element has at most one writer (rank, thread). A read sees the value at the last
 * barrier unless its own rank wrote the element since (then that write: its own thread's latest, or a
 * sibling's from an earlier interval; a sibling's write of the same interval is not read at all), or another
 * rank did (a race: not checked; if that rank writes it only in a later interval, the barrier value is
 * checked), except that writes an owner made to its own elements before a ky_sync_drop are visible to all
 * after it;
 *  - ky_sync_drop keeps a rank's writes to the elements it owns (the mapalloc formula; the home for ky_alloc
 *    and ky_alloc_local) and drops its writes to others' elements, so writes to others' elements are made
 * only after the round's last ky_sync_drop;
 *  - promises are kept: after ky_sync_nofetch a rank touches only elements on pages homed at itself and takes
 *    no lock, preloads nothing; after ky_sync_nostore it stores only to pages homed elsewhere and takes no
 * lock;
 *  - overload refreshes a box preloaded by the same thread since the last drop; the rank's writes to its own
 *    elements survive it, its writes to others' elements on the refreshed pages do not (so none is made
 * before an overload of the rank covers its page; KY_TEST_STRESS_OVERLOAD=all makes them and expects them
 * kept). An overload excludes the rank's other accesses to that array (a test-side shared mutex): refreshing
 * a page in place while a sibling stores to it is a race of the program;
 *  - lock logs, counters and claims must end exactly right (counts, sums, the set of entries, one winner).
 * A mismatch prints the round, interval, sync, element (coordinates), owner, page home, expected and actual
 * values and which operation wrote each; the run stops after the first round with a failure on any rank.
 *
 * Knobs: KY_TEST_SCALE scales the default (short) run; KY_TEST_STRESS_OPS=N (or KY_STRESS_OPS) runs about N
 * operations per test over all ranks and threads (the long mode: the `stress-dsm` target runs 10^6 on 4 ranks
 * x 4 threads on every path); KY_TEST_STRESS_ROUND_OPS (operations per thread per round, default 160, 300 in
 * the long mode); KY_TEST_SEED; KY_TEST_STRESS_THREADS; KY_TEST_STRESS_WITHOUT=lock,overload,ky_sync_drop,...
 * (also nested, trylock: locks without those forms) leaves operations or syncs out, to narrow a failure down;
 * KY_TEST_STRESS_LOCKLOG=DIR writes, when a lock log is wrong, what every holder of the round saw (count,
 * sum, times, and the rank's DSM write faults, twins and diffs between its writes and its unlock) to
 * DIR/locklog.<rank>.txt. */
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

#include <chrono>
#include <climits>
#include <cstdarg>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "kyt.h"

namespace {

/* ---- elements and their values --------------------------------------------------------------------- */

enum Kind { K_U32, K_F64, K_U64, K_S24 };
struct S24 {
    uint64_t a;
    uint32_t b;
    uint16_t c, d;
    double e;
};
static_assert(sizeof(S24) == 24, "a 24-byte element");

size_t kind_size(int k)
{
    return k == K_U32 ? 4 : k == K_S24 ? 24 : 8;
}

/* The bytes an element holds after a write of tag v (the reference). */
void encode(int kind, uint64_t v, void *out)
{
    switch (kind) {
        case K_U32: {
            uint32_t x = (uint32_t)v;
            memcpy(out, &x, 4);
            break;
        }
        case K_F64: {
            double x = (double)(v >> 12);
            memcpy(out, &x, 8);
            break;
        }
        case K_U64:
            memcpy(out, &v, 8);
            break;
        default: {
            S24 s{v, (uint32_t)(v >> 7), (uint16_t)(v >> 3), (uint16_t)(v >> 41), (double)(v >> 13)};
            memcpy(out, &s, 24);
        }
    }
}

/* The store a program makes (typed, a struct field by field). */
void store(int kind, char *p, uint64_t v)
{
    switch (kind) {
        case K_U32:
            *(uint32_t *)p = (uint32_t)v;
            break;
        case K_F64:
            *(double *)p = (double)(v >> 12);
            break;
        case K_U64:
            *(uint64_t *)p = v;
            break;
        default: {
            S24 *s = (S24 *)p;
            s->a = v, s->b = (uint32_t)(v >> 7), s->c = (uint16_t)(v >> 3), s->d = (uint16_t)(v >> 41);
            s->e = (double)(v >> 13);
        }
    }
}

std::string show(int kind, const void *b)
{
    char s[96];
    if (kind == K_U32)
        snprintf(s, sizeof s, "%#x", *(const uint32_t *)b);
    else if (kind == K_F64)
        snprintf(s, sizeof s, "%.17g", *(const double *)b);
    else if (kind == K_U64)
        snprintf(s, sizeof s, "%#llx", (unsigned long long)*(const uint64_t *)b);
    else {
        const S24 *x = (const S24 *)b;
        snprintf(s, sizeof s, "{%#llx, %#x, %#x, %#x, %.17g}", (unsigned long long)x->a, x->b, x->c, x->d,
                 x->e);
    }
    return s;
}

/* ---- syncs and operations -------------------------------------------------------------------------- */

enum Sync { SY_BARRIER, SY_SYNC, SY_DROP, SY_NOFETCH, SY_NOSTORE };
const char *sync_name(int s)
{
    static const char *n[] = {"ky_barrier", "ky_sync", "ky_sync_drop", "ky_sync_nofetch", "ky_sync_nostore"};
    return n[s];
}
int do_sync(int s)
{
    switch (s) {
        case SY_BARRIER:
            return ky_barrier();
        case SY_SYNC:
            return ky_sync();
        case SY_DROP:
            return ky_sync_drop();
        case SY_NOFETCH:
            return ky_sync_nofetch();
        default:
            return ky_sync_nostore();
    }
}

enum OpType : uint8_t {
    OP_READ,
    OP_WRITE,
    OP_LOCK,
    OP_FADD,
    OP_CASINC,
    OP_CLAIM,
    OP_PRELOAD,
    OP_OVERLOAD,
    OP_NTYPES
};
const char *op_name(int t)
{
    static const char *n[] = {"read",    "write", "lock",    "fetch_add",
                              "cas_inc", "claim", "preload", "overload"};
    return n[t];
}
enum { LK_TRY = 1, LK_NESTED = 2 };
struct Op {
    uint8_t type, flag; /* flag: lock LK_*, claim width, preload/overload rw */
    int32_t a;          /* element, stripe, counter, word, slot or box */
    uint64_t v;         /* value tag, add, claim tag */
};

/* Mixes of operations and syncs (weights). */
struct Profile {
    const char *name;
    int w[OP_NTYPES]; /* read write lock fadd casinc claim preload overload */
    int sy[5];        /* boundary syncs inside a round: -, sync, drop, nofetch, nostore */
    int max_subs;     /* intervals per round 1..max_subs */
    int rounds;       /* in the short mode, at KY_TEST_SCALE=1 (lock-heavy rounds are slow on 2 cores) */
};
const Profile kMixed = {"mixed", {40, 26, 8, 8, 3, 5, 5, 5}, {0, 30, 30, 20, 20}, 4, 20};
const Profile kLocks = {"locks", {14, 10, 40, 16, 10, 10, 0, 0}, {0, 50, 30, 10, 10}, 3, 8};
const Profile kRegions = {"regions", {28, 30, 4, 4, 2, 2, 15, 15}, {0, 25, 45, 10, 20}, 4, 20};

constexpr int kMaxSubs = 4;
constexpr int kStripes = 8, kLockBase = 300, kLockGlobal = 299;
constexpr int kCounters = 24, kCounterStride = 131; /* longs apart: counters on many pages and homes */
constexpr int kCasWords = 32;                       /* 16 uint32 then 16 uint64 */
constexpr int kSlotsPerRound = 48;
uint64_t mono_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
long lock_amount(uint64_t tag)
{
    return 1 + (long)((tag >> 8) % 9);
} /* what a lock op adds to its sum */

struct Box {
    int arr, nd;
    size_t lo[3], len[3];
    int rw;
};
struct WRec { /* a planned write */
    int32_t e, k;
    int16_t sub, stream;
    uint64_t v;
};
struct Who { /* the write that produced an element's reference value */
    int32_t round = -1, k = -1;
    int16_t sub = -1, stream = -1;
};

struct Arr {
    std::string name;
    char *base = nullptr;
    int kind = K_U32;
    size_t elem = 4, n = 0, first = 0; /* first: global id of element 0 */
    std::vector<size_t> dims;
    bool region = false; /* preload/overload target */
    std::vector<uint8_t> ref, prev;
};

/* mSMS's mapping (docs/dsm.md; test_dsm.cpp's formula_home): block coordinates, row-major number, cyclic. */
int formula_owner(const std::vector<size_t> &dims, const std::vector<int> &divs, size_t e, int first,
                  int count)
{
    std::vector<size_t> idx(dims.size());
    for (int d = (int)dims.size() - 1; d >= 0; d--) idx[d] = e % dims[d], e /= dims[d];
    size_t blk = 0;
    for (size_t d = 0; d < dims.size(); d++)
        blk = blk * divs[d] + idx[d] / ((dims[d] + divs[d] - 1) / divs[d]);
    return first + (int)(blk % count);
}

struct Plan {
    int round = 0, nsub = 1;
    int begin[kMaxSubs] = {};         /* the sync that began each interval */
    int end[kMaxSubs] = {};           /* the sync that ends it (the last: ky_barrier) */
    int drop_le[kMaxSubs] = {};       /* latest interval <= s begun by ky_sync_drop, or -1 */
    int drop_start = 0;               /* first interval after the round's last ky_sync_drop */
    std::vector<int16_t> writer;      /* per element: stream or -1 */
    std::vector<std::vector<Op>> ops; /* [stream * nsub + sub] */
    std::vector<Box> boxes;
    std::vector<int> wstart;
    std::vector<WRec> w; /* writes by element, in program order */
    std::vector<int> lock_n;
    std::vector<long> lock_add;
    std::vector<std::vector<uint64_t>> lock_tags;
    std::unordered_map<uint64_t, uint32_t> lock_src; /* log tag -> stream << 20 | sub << 16 | op */
    long g_add = 0;
    std::vector<long> fadd;
    std::vector<int> f0_per_rank;
    std::vector<long> cas_inc;
    std::vector<uint64_t> claim_mask[2]; /* [width 4, 8][slot]: streams that try it */
};

class Stress {
  public:
    Stress(const Profile &p) : prof(p)
    {
        /* KY_TEST_STRESS_WITHOUT=overload,lock,ky_sync_drop,...: leave operations or syncs out (to narrow a
         * failure) */
        const char *wo = getenv("KY_TEST_STRESS_WITHOUT");
        std::string list = wo ? std::string(",") + wo + "," : "";
        for (int i = 0; i < OP_NTYPES; i++)
            if (list.find(std::string(",") + op_name(i) + ",") != std::string::npos) prof.w[i] = 0;
        for (int i = 1; i < 5; i++)
            if (list.find(std::string(",") + sync_name(i) + ",") != std::string::npos) prof.sy[i] = 0;
        if (!prof.sy[1] && !prof.sy[2] && !prof.sy[3] && !prof.sy[4]) prof.sy[1] = 1, prof.max_subs = 1;
        no_nested = list.find(",nested,") != std::string::npos; /* locks without the global lock inside */
        no_try = list.find(",trylock,") != std::string::npos;
    }
    bool run();

  private:
    Profile prof;
    int n = 1, me = 0, T = 4, rounds = 1, ops_per_round = 160;
    bool no_nested = false, no_try = false;
    bool overload_owners =
        true; /* docs/dsm.md's rule; KY_TEST_STRESS_OVERLOAD=all: overload keeps every write */
    uint64_t seed = 0;
    size_t pg = 4096, E = 0, lock_cap = 256;
    std::vector<Arr> arrs;
    std::vector<int16_t> owner, home_lo, home_hi;
    std::vector<uint8_t> arr_of;
    std::vector<Who> who;
    std::vector<std::vector<int>> cands; /* per stream: elements it writes this round */
    long *lockd = nullptr, *gctr = nullptr, *fctr = nullptr;
    char *casw = nullptr;
    uint64_t *slots64 = nullptr;
    uint32_t *slots32 = nullptr;
    void **ptrtab = nullptr;
    std::vector<long> lock_count, lock_sum, fbase;
    long g_base = 0;
    std::vector<uint64_t> cas_base;
    Plan P;
    pthread_barrier_t bar;
    std::shared_mutex region_mu;
    std::mutex fail_mu;
    std::vector<std::string> fails;
    long nfails = 0;
    std::atomic<bool> local_bad{false};
    bool stop = false;
    /* per thread: fetch_add(counter 0) old values, claims won, last fetch_add values seen */
    std::vector<std::vector<long>> f0_olds;
    std::vector<std::vector<std::pair<int, uint64_t>>> won;
    /* What each lock holder of this round saw (KY_TEST_STRESS_LOCKLOG=DIR writes them there on a log
     * failure, one file per rank: which holder missed which update, on one monotonic clock). */
    struct LockSeen {
        int t, k, stripe, flag, tid;
        long c, sum;
        uint64_t tag, t_in, t_out;
        unsigned long long wf0, wf1, twins0, twins1, diffs0, diffs1, db0, db1; /* the rank's DSM counters */
    };
    std::vector<std::vector<LockSeen>> lock_seen;
    std::atomic<long> cnt[OP_NTYPES + 6] = {};
    std::atomic<int> holder[kStripes + 1] =
        {}; /* thread + 1 of this rank holding a stripe (or the global) lock */
    enum { C_CHECKED = OP_NTYPES, C_SKIPPED, C_BUSY, C_CASRETRY, C_WON, C_VERIFIED };

    void wait() { pthread_barrier_wait(&bar); }
    void fail(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    bool setup();
    void teardown();
    void plan_round(int round);
    void drop_doomed_writes();
    std::vector<size_t> box_pages(const Box &b) const;
    void gen_stream(int stream, std::mt19937_64 *gs);
    int pick_box(std::mt19937_64 &g, Box *b);
    bool in_box(const Box &b, size_t e) const;
    bool can_read(size_t e, int r, int mode) const;
    bool can_write(size_t e, int r, int s, int mode) const;
    int expect(size_t e, int stream, int s, int k, const WRec **src) const;
    void run_ops(int t, int s);
    void op_lock(int t, int s, int k, const Op &op);
    void op_claim(int t, int s, int k, const Op &op);
    void op_read(int t, int s, int k, const Op &op);
    void update_reference();
    void check_data(int t);
    void check_specials();
    void dump_lock_seen(int stripe) const;
    std::string where(size_t e) const;
    std::string origin(size_t e, const void *bytes) const;
    std::string describe_write(const WRec &w) const;
    std::string structure() const;
    std::string ops_between(int stream, int s0, int k0, int s1, int k1) const;
    std::string lock_entry(uint64_t tag) const;
    std::string page_history(size_t e, int upto_sub) const;
    char *ptr(size_t e) const
    {
        const Arr &a = arrs[arr_of[e]];
        return a.base + (e - a.first) * a.elem;
    }
    int stream_rank(int st) const { return st / T; }
};

void Stress::fail(const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    local_bad = true;
    std::lock_guard<std::mutex> g(fail_mu);
    if (nfails++ < 12) {
        fails.push_back(buf);
        fprintf(stderr, "[rank %d] stress(%s): %s\n", me, prof.name, buf);
        fflush(stderr);
    }
}

long env_long(const char *a, const char *b, long dflt)
{
    const char *s = getenv(a);
    if ((!s || !*s) && b) s = getenv(b);
    return s && *s ? strtol(s, nullptr, 0) : dflt;
}

/* ---- setup: the arrays, the tables of owners and page homes ---------------------------------------- */

bool Stress::setup()
{
    n = kyt::nranks(), me = kyt::rank(), pg = ky_page_size();
    T = (int)env_long("KY_TEST_STRESS_THREADS", nullptr, 4);
    const char *ov = getenv("KY_TEST_STRESS_OVERLOAD");
    overload_owners = !(ov && !strcmp(ov, "all"));
    T = std::max(1, std::min(T, 64 / n));
    seed = kyt::mix(kyt::seed(), std::hash<std::string>()(prof.name));
    long total = env_long("KY_TEST_STRESS_OPS", "KY_STRESS_OPS", 0);
    ops_per_round = (int)env_long("KY_TEST_STRESS_ROUND_OPS", nullptr, total ? 300 : 160);
    if (total)
        rounds = (int)std::max(1L, (total + (long)n * T * ops_per_round - 1) / ((long)n * T * ops_per_round));
    else
        rounds = kyt::scaled(prof.rounds, 3);
    lock_cap = (size_t)ops_per_round * n * T / kStripes / 2 + 32;
    pthread_barrier_init(&bar, nullptr, (unsigned)T);
    f0_olds.resize(T), won.resize(T), lock_seen.resize(T);

    bool ok = true;
    auto add = [&](const char *name, void *base, int kind, std::vector<size_t> dims, bool region) {
        Arr a;
        a.name = name, a.base = (char *)base, a.kind = kind, a.elem = kind_size(kind), a.dims = dims;
        a.n = 1;
        for (size_t d : dims) a.n *= d;
        a.first = E, a.region = region;
        a.ref.assign(a.n * a.elem, 0);
        E += a.n;
        ok = ok && base;
        arrs.push_back(std::move(a));
    };
    /* z slabs of doubles: planes of 37 x 53 (15688 bytes), not page multiples */
    std::vector<size_t> d0 = {13, 37, 53};
    int dz[] = {13, 37, 53, -1}, vz[] = {n, 1, 1, -1};
    add("zslab", ky_mapalloc(dz, vz, 8, 0, n), K_F64, d0, true);
    /* 2-D blocks (5 x 3 of 30 x 33) of 24-byte structs dealt cyclically; rows of 2328 bytes */
    std::vector<size_t> d1 = {150, 97};
    int dc[] = {150, 97, -1}, vc[] = {5, 3, -1};
    add("cyclic", ky_mapalloc(dc, vc, 24, 0, n), K_S24, d1, true);
    /* 1-D uint32 in 2n+1 blocks dealt to ranks 1..n-1 (rank 0 owns nothing) */
    int f2 = n > 1 ? 1 : 0, c2 = n > 1 ? n - 1 : 1;
    int d2[] = {40009, -1}, v2[] = {2 * n + 1, -1};
    add("ring", ky_mapalloc(d2, v2, 4, f2, c2), K_U32, {40009}, false);
    add("single", kyt::galloc(12347 * 4, n - 1), K_U32, {12347}, false);
    /* special words */
    int dl[] = {(int)(kStripes * (2 + lock_cap)), -1}, vl[] = {2 * n + 1, -1};
    lockd = (long *)ky_mapalloc(dl, vl, sizeof(long), 0, n);
    gctr = (long *)kyt::galloc(64, n - 1);
    int df[] = {kCounters * kCounterStride, -1}, vf[] = {n, -1};
    fctr = (long *)ky_mapalloc(df, vf, sizeof(long), 0, n);
    casw = (char *)kyt::galloc(16 * 4 + 16 * 8, n > 1 ? 1 : 0);
    int ds[] = {std::max(rounds * kSlotsPerRound, n), -1}, vs[] = {n, -1};
    slots64 = (uint64_t *)ky_mapalloc(ds, vs, 8, 0, n);
    slots32 = (uint32_t *)kyt::galloc((size_t)rounds * kSlotsPerRound * 4, 0);
    ptrtab = (void **)kyt::galloc(n * sizeof(void *), 0);
    ok = ok && lockd && gctr && fctr && casw && slots64 && slots32 && ptrtab;
    /* every rank's local array (sizes differ), announced through ptrtab */
    size_t nloc = 3001 + 17 * (size_t)me;
    uint64_t *loc = (uint64_t *)ky_alloc_local(nloc * 8);
    ok = ok && loc;
    if (!kyt::all(ok)) {
        ADD_FAILURE() << "allocation failed: " << ky_last_error();
        return false;
    }
    for (size_t i = 0; i < nloc; i++) loc[i] = 0;
    ptrtab[me] = loc;
    /* zero what the documentation does not promise zero (mapalloc, alloc_local) */
    if (me == 0) {
        memset(lockd, 0, kStripes * (2 + lock_cap) * sizeof(long));
        memset(fctr, 0, kCounters * kCounterStride * sizeof(long));
        memset(slots64, 0, std::max(rounds * kSlotsPerRound, n) * 8);
        memset(arrs[0].base, 0, arrs[0].n * arrs[0].elem);
        memset(arrs[1].base, 0, arrs[1].n * arrs[1].elem);
        memset(arrs[2].base, 0, arrs[2].n * arrs[2].elem);
    }
    KYT_EXPECT_OK(ky_barrier());
    std::vector<std::string> names(n);
    for (int r = 0; r < n; r++) {
        names[r] = "local" + std::to_string(r);
        add(names[r].c_str(), ptrtab[r], K_U64, {3001 + 17 * (size_t)r}, false);
    }
    /* owners, page homes */
    owner.resize(E), home_lo.resize(E), home_hi.resize(E), arr_of.resize(E), who.resize(E);
    std::vector<int> vdiv[3] = {{n, 1, 1}, {5, 3}, {2 * n + 1}};
    for (size_t a = 0; a < arrs.size(); a++) {
        Arr &A = arrs[a];
        for (size_t i = 0; i < A.n; i++) {
            size_t e = A.first + i;
            arr_of[e] = (uint8_t)a;
            if (a == 0 || a == 1)
                owner[e] = (int16_t)formula_owner(A.dims, vdiv[a], i, 0, n);
            else if (a == 2)
                owner[e] = (int16_t)formula_owner(A.dims, vdiv[2], i, f2, c2);
            else if (a == 3)
                owner[e] = (int16_t)(n - 1);
            else
                owner[e] = (int16_t)(a - 4);
            char *p = A.base + i * A.elem;
            home_lo[e] = (int16_t)ky_home_of(p);
            home_hi[e] = (int16_t)ky_home_of(p + A.elem - 1);
            ok = ok && home_lo[e] >= 0 && home_hi[e] >= 0;
        }
    }
    if (!kyt::all(ok)) {
        ADD_FAILURE() << "ky_home_of failed: " << ky_last_error();
        return false;
    }
    lock_count.assign(kStripes, 0), lock_sum.assign(kStripes, 0), fbase.assign(kCounters, 0);
    cas_base.assign(kCasWords, 0);
    cands.resize((size_t)n * T);
    if (me == 0)
        printf(
            "stress(%s): %d ranks x %d threads, %d rounds x %d ops per thread, %zu elements in %zu arrays, "
            "page %zu, seed %#llx\n",
            prof.name, n, T, rounds, ops_per_round, E, arrs.size(), pg, (unsigned long long)seed);
    return true;
}

void Stress::teardown()
{
    KYT_EXPECT_OK(ky_barrier());
    for (int a = 0; a < 4; a++) KYT_EXPECT_OK(ky_free(arrs[a].base));
    KYT_EXPECT_OK(ky_free(lockd));
    KYT_EXPECT_OK(ky_free(gctr));
    KYT_EXPECT_OK(ky_free(fctr));
    KYT_EXPECT_OK(ky_free(casw));
    KYT_EXPECT_OK(ky_free(slots64));
    KYT_EXPECT_OK(ky_free(slots32));
    KYT_EXPECT_OK(ky_free(arrs[4 + me].base)); /* nobody touches it after the barrier above */
    KYT_EXPECT_OK(ky_free(ptrtab));
    pthread_barrier_destroy(&bar);
}

/* ---- the plan of a round: the same on every rank --------------------------------------------------- */

bool Stress::can_read(size_t e, int r, int mode) const
{
    return mode != SY_NOFETCH || (home_lo[e] == r && home_hi[e] == r);
}

bool Stress::can_write(size_t e, int r, int s, int mode) const
{
    if (owner[e] != r && s < P.drop_start) return false; /* a later ky_sync_drop would drop it */
    if (mode == SY_NOFETCH) return home_lo[e] == r && home_hi[e] == r;
    if (mode == SY_NOSTORE) return home_lo[e] != r && home_hi[e] != r;
    return true;
}

int Stress::pick_box(std::mt19937_64 &g, Box *b)
{
    b->arr = (int)(g() % 2);
    const Arr &A = arrs[b->arr];
    b->nd = (int)A.dims.size();
    for (int d = 0; d < b->nd; d++) {
        size_t D = A.dims[d], cap = d == 0 && b->nd == 3 ? 3 : D / 2 + 1;
        b->lo[d] = g() % D;
        b->len[d] = 1 + g() % std::min(cap, D - b->lo[d]);
    }
    b->rw = (int)(g() % 2);
    return 0;
}

bool Stress::in_box(const Box &b, size_t e) const
{
    const Arr &A = arrs[b.arr];
    if (arr_of[e] != b.arr) return false;
    size_t i = e - A.first;
    for (int d = b.nd - 1; d >= 0; d--) {
        size_t x = i % A.dims[d];
        i /= A.dims[d];
        if (x < b.lo[d] || x >= b.lo[d] + b.len[d]) return false;
    }
    return true;
}

void Stress::gen_stream(int st, std::mt19937_64 *gsub)
{
    int r = stream_rank(st);
    std::vector<size_t> preloaded; /* boxes this thread preloaded since the last drop */
    int tot = 0;
    for (int i = 0; i < OP_NTYPES; i++) tot += prof.w[i];
    for (int s = 0; s < P.nsub; s++) {
        std::mt19937_64 &g = gsub[s];
        int mode = P.begin[s];
        if (mode == SY_DROP) preloaded.clear();
        std::vector<Op> &out = P.ops[(size_t)st * P.nsub + s];
        int budget = ops_per_round / P.nsub;
        auto rnd_elem = [&](bool write, const Box *b) -> long {
            const std::vector<int> &c = cands[st];
            for (int tries = 0; tries < 12; tries++) {
                size_t e;
                if (write) {
                    if (c.empty()) return -1;
                    e = c[g() % c.size()];
                } else if (b) {
                    const Arr &A = arrs[b->arr];
                    size_t i = 0;
                    for (int d = 0; d < b->nd; d++) i = i * A.dims[d] + b->lo[d] + g() % b->len[d];
                    e = A.first + i;
                } else {
                    e = g() % E;
                }
                if (b && !in_box(*b, e)) continue;
                if (write ? can_write(e, r, s, mode) : can_read(e, r, mode)) return (long)e;
            }
            return -1;
        };
        auto box_accesses = [&](const Box &b, int m) {
            /* writes: this thread's elements inside the box */
            std::vector<int> mine;
            for (int e : cands[st])
                if (in_box(b, e) && can_write(e, r, s, mode)) mine.push_back(e);
            for (int j = 0; j < m; j++) {
                if (!mine.empty() && g() % 2)
                    out.push_back(
                        {OP_WRITE, 0, mine[g() % mine.size()], kyt::mix(seed, P.round, st, out.size()) | 1});
                else if (!mine.empty() && g() % 2)
                    out.push_back({OP_READ, 0, mine[g() % mine.size()], 0});
                else {
                    long e = rnd_elem(false, &b);
                    if (e >= 0) out.push_back({OP_READ, 0, (int32_t)e, 0});
                }
            }
        };
        while ((int)out.size() < budget) {
            int x = (int)(g() % tot), type = 0;
            while (x >= prof.w[type]) x -= prof.w[type++];
            if (mode == SY_NOFETCH && (type == OP_LOCK || type == OP_PRELOAD || type == OP_OVERLOAD))
                type = OP_READ;
            if (mode == SY_NOSTORE && type == OP_LOCK) type = OP_FADD;
            if (type == OP_OVERLOAD && preloaded.empty()) type = OP_PRELOAD;
            switch (type) {
                case OP_READ:
                case OP_WRITE: {
                    long e = rnd_elem(type == OP_WRITE, nullptr);
                    if (e < 0 && type == OP_WRITE) type = OP_READ, e = rnd_elem(false, nullptr);
                    if (e < 0) {
                        out.push_back({OP_FADD, 0, (int32_t)(1 + g() % (kCounters - 1)), 0});
                        break;
                    }
                    out.push_back({(uint8_t)type, 0, (int32_t)e,
                                   type == OP_WRITE ? kyt::mix(seed, P.round, st, out.size()) | 1 : 0});
                    break;
                }
                case OP_LOCK: {
                    int k = (int)(g() % kStripes);
                    if (P.lock_n[k] >= (int)lock_cap) {
                        out.push_back({OP_FADD, 0, 1, 1});
                        P.fadd[1] += 1;
                        break;
                    }
                    uint8_t fl = (uint8_t)((g() % 2 ? LK_TRY : 0) | (g() % 4 == 0 ? LK_NESTED : 0));
                    if (no_nested) fl &= (uint8_t)~LK_NESTED;
                    if (no_try) fl &= (uint8_t)~LK_TRY;
                    uint64_t tag = kyt::mix(seed, P.round, st, out.size()) | 1, v = lock_amount(tag);
                    P.lock_src[tag] = (uint32_t)st << 20 | (uint32_t)s << 16 | (uint32_t)out.size();
                    out.push_back({OP_LOCK, fl, k, tag});
                    P.lock_n[k]++, P.lock_add[k] += (long)v, P.lock_tags[k].push_back(tag);
                    if (fl & LK_NESTED) P.g_add++;
                    break;
                }
                case OP_FADD: {
                    int c = (int)(g() % kCounters);
                    long v = c == 0 ? 1 : g() % 4 == 0 ? 0 : 1 + (long)(g() % 9);
                    out.push_back({OP_FADD, 0, c, (uint64_t)v});
                    P.fadd[c] += v;
                    if (c == 0) P.f0_per_rank[r]++;
                    break;
                }
                case OP_CASINC: {
                    int w = (int)(g() % kCasWords);
                    out.push_back({OP_CASINC, 0, w, 0});
                    P.cas_inc[w]++;
                    break;
                }
                case OP_CLAIM: {
                    int wide = (int)(g() % 2), slot = (int)(g() % kSlotsPerRound);
                    uint64_t tag = (kyt::mix(seed, P.round, st, out.size()) << 8) | (uint64_t)(st + 1);
                    if (!wide) tag &= 0xffffffffull;
                    out.push_back({OP_CLAIM, (uint8_t)(wide ? 8 : 4), slot, tag});
                    P.claim_mask[wide][slot] |= 1ull << st;
                    break;
                }
                case OP_PRELOAD: {
                    Box b;
                    pick_box(g, &b);
                    P.boxes.push_back(b);
                    preloaded.push_back(P.boxes.size() - 1);
                    out.push_back({OP_PRELOAD, (uint8_t)b.rw, (int32_t)(P.boxes.size() - 1), 0});
                    box_accesses(b, 1 + (int)(g() % 6));
                    break;
                }
                case OP_OVERLOAD: {
                    size_t bi = preloaded[g() % preloaded.size()];
                    Box b = P.boxes[bi];
                    out.push_back({OP_OVERLOAD, (uint8_t)b.rw, (int32_t)bi, 0});
                    box_accesses(b, 1 + (int)(g() % 6));
                    break;
                }
            }
        }
    }
}

void Stress::plan_round(int round)
{
    Plan &p = P;
    p.round = round;
    std::mt19937_64 g(kyt::mix(seed, round, 0x5u));
    p.nsub = 1 + (int)(g() % prof.max_subs);
    int tot = 0;
    for (int i = 1; i < 5; i++) tot += prof.sy[i];
    p.begin[0] = round == 0 ? SY_BARRIER : SY_SYNC;
    for (int s = 0; s + 1 < p.nsub; s++) {
        int x = (int)(g() % tot), k = 1;
        while (x >= prof.sy[k]) x -= prof.sy[k++];
        p.end[s] = k, p.begin[s + 1] = k;
    }
    p.end[p.nsub - 1] = SY_BARRIER;
    p.drop_start = 0;
    for (int s = 0; s < p.nsub; s++) {
        if (s > 0 && p.begin[s] == SY_DROP) p.drop_start = s;
        p.drop_le[s] = s > 0 && p.begin[s] == SY_DROP ? s : s > 0 ? p.drop_le[s - 1] : -1;
    }
    /* writers: a quarter of the elements, half of them by their owner, any thread */
    int streams = n * T;
    p.writer.assign(E, -1);
    for (auto &c : cands) c.clear();
    for (size_t e = 0; e < E; e++) {
        uint64_t h = kyt::mix(seed, round, e, 0x77);
        if ((h & 1023) >= 256) continue;
        int r = (h >> 10) % 100 < 50 ? owner[e] : (int)((h >> 20) % n);
        int st = r * T + (int)((h >> 40) % T);
        p.writer[e] = (int16_t)st;
        cands[st].push_back((int)e);
    }
    p.ops.assign((size_t)streams * p.nsub, {});
    p.boxes.clear();
    p.lock_n.assign(kStripes, 0), p.lock_add.assign(kStripes, 0), p.lock_tags.assign(kStripes, {});
    p.lock_src.clear();
    p.g_add = 0;
    p.fadd.assign(kCounters, 0), p.f0_per_rank.assign(n, 0), p.cas_inc.assign(kCasWords, 0);
    for (auto &m : p.claim_mask) m.assign(kSlotsPerRound, 0);
    for (int st = 0; st < streams; st++) {
        std::mt19937_64 gs[kMaxSubs];
        for (int s = 0; s < p.nsub; s++) gs[s].seed(kyt::mix(seed, round, st, 100 + s));
        gen_stream(st, gs);
    }
    if (overload_owners) drop_doomed_writes();
    /* the writes of every element in program order (an element has one writer stream) */
    p.wstart.assign(E + 1, 0);
    size_t nw = 0;
    for (auto &ops : p.ops)
        for (auto &o : ops)
            if (o.type == OP_WRITE) p.wstart[o.a + 1]++, nw++;
    for (size_t e = 0; e < E; e++) p.wstart[e + 1] += p.wstart[e];
    p.w.assign(nw, {});
    std::vector<int> fill(p.wstart.begin(), p.wstart.end() - 1);
    for (int st = 0; st < streams; st++)
        for (int s = 0; s < p.nsub; s++) {
            auto &ops = p.ops[(size_t)st * p.nsub + s];
            for (size_t k = 0; k < ops.size(); k++)
                if (ops[k].type == OP_WRITE)
                    p.w[fill[ops[k].a]++] = {ops[k].a, (int32_t)k, (int16_t)s, (int16_t)st, ops[k].v};
        }
}

/* Global page numbers a box touches, sorted. */
std::vector<size_t> Stress::box_pages(const Box &b) const
{
    const Arr &A = arrs[b.arr];
    std::vector<size_t> out;
    size_t rows = b.nd == 3 ? b.len[0] * b.len[1] : b.len[0];
    for (size_t r = 0; r < rows; r++) {
        size_t i = b.nd == 3
                       ? ((b.lo[0] + r / b.len[1]) * A.dims[1] + b.lo[1] + r % b.len[1]) * A.dims[2] + b.lo[2]
                       : (b.lo[0] + r) * A.dims[1] + b.lo[1];
        uintptr_t a0 = (uintptr_t)(A.base + i * A.elem), a1 = a0 + b.len[b.nd - 1] * A.elem - 1;
        for (size_t p = a0 / pg; p <= a1 / pg; p++) out.push_back(p);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

/* docs/dsm.md ("Owners and homes"): an overload replaces the caller's writes to other owners' elements on the
 * pages it refreshes (and, at their home, reverts them). Such a write is not made: it becomes a read when an
 * overload by its rank covering its page follows it in the round (or may run concurrently with it: the same
 * interval, another thread). KY_TEST_STRESS_OVERLOAD=all keeps them (an overload that keeps every write). */
void Stress::drop_doomed_writes()
{
    struct Ov {
        int stream, sub, k;
        std::vector<size_t> pages;
    };
    std::vector<std::vector<Ov>> ovs(n);
    for (int st = 0; st < n * T; st++)
        for (int s = 0; s < P.nsub; s++) {
            auto &ops = P.ops[(size_t)st * P.nsub + s];
            for (size_t k = 0; k < ops.size(); k++)
                if (ops[k].type == OP_OVERLOAD)
                    ovs[stream_rank(st)].push_back({st, s, (int)k, box_pages(P.boxes[ops[k].a])});
        }
    for (int st = 0; st < n * T; st++) {
        int r = stream_rank(st);
        for (int s = 0; s < P.nsub; s++) {
            auto &ops = P.ops[(size_t)st * P.nsub + s];
            for (size_t k = 0; k < ops.size(); k++) {
                Op &o = ops[k];
                if (o.type != OP_WRITE || owner[o.a] == r) continue;
                uintptr_t a0 = (uintptr_t)ptr(o.a), a1 = a0 + arrs[arr_of[o.a]].elem - 1;
                for (const Ov &v : ovs[r]) {
                    bool after = v.sub > s || (v.sub == s && (v.stream != st || v.k > (int)k));
                    if (!after) continue;
                    if (std::binary_search(v.pages.begin(), v.pages.end(), a0 / pg) ||
                        std::binary_search(v.pages.begin(), v.pages.end(), a1 / pg)) {
                        o.type = OP_READ, o.v = 0;
                        break;
                    }
                }
            }
        }
    }
}

/* What a read of e by `stream` at (s, k) must return: 1 the value of *src (or the reference when *src is
 * null), 0 anything (another rank writes it this round: a race, or not yet published), -1 do not touch it (a
 * sibling thread writes it in this interval: a data race inside the process). */
int Stress::expect(size_t e, int stream, int s, int k, const WRec **src) const
{
    *src = nullptr;
    int w = P.writer[e], lo = P.wstart[e], hi = P.wstart[e + 1];
    if (w < 0 || lo == hi) return 1;
    const WRec *rec = &P.w[0];
    if (stream_rank(w) == stream_rank(stream)) {
        for (int i = lo; i < hi; i++) {
            if (w != stream && rec[i].sub == s) return -1;
            if (rec[i].sub < s || (w == stream && rec[i].sub == s && rec[i].k < k)) *src = &rec[i];
        }
        return 1;
    }
    if (rec[lo].sub > s) return 1; /* not written yet */
    int D = P.drop_le[s];
    if (owner[e] != stream_rank(w) || D < 0) return 0;
    for (int i = lo; i < hi; i++) {
        if (rec[i].sub >= D && rec[i].sub <= s) return 0;
        if (rec[i].sub < D) *src = &rec[i];
    }
    return *src ? 1 : 0;
}

/* ---- execution ------------------------------------------------------------------------------------- */

std::string Stress::where(size_t e) const
{
    const Arr &A = arrs[arr_of[e]];
    size_t i = e - A.first;
    std::string c;
    size_t x = i;
    for (int d = (int)A.dims.size() - 1; d >= 0; d--)
        c = "[" + std::to_string(x % A.dims[d]) + "]" + c, x /= A.dims[d];
    char s[256];
    std::string hh = home_hi[e] != home_lo[e] ? " and " + std::to_string(home_hi[e]) : "";
    snprintf(s, sizeof s, "%s%s (element %zu, byte %zu of the array's page %zu), owner %d, page home %d%s",
             A.name.c_str(), c.c_str(), i, (size_t)((uintptr_t)(A.base + i * A.elem) % pg), i * A.elem / pg,
             owner[e], home_lo[e], hh.c_str());
    return s;
}

std::string Stress::describe_write(const WRec &w) const
{
    char s[160];
    snprintf(s, sizeof s, "written by rank %d thread %d in round %d interval %d (after %s), op %d",
             stream_rank(w.stream), w.stream % T, P.round, w.sub, sync_name(P.begin[w.sub]), w.k);
    return s;
}

/* The round's intervals: "ky_sync_drop | ky_sync | ky_barrier" */
std::string Stress::structure() const
{
    std::string r = "intervals ended by ";
    for (int s = 0; s < P.nsub; s++) r += std::string(s ? ", " : "") + sync_name(P.end[s]);
    return r;
}

/* A thread's operations from (s0, k0) to (s1, k1), exclusive, for a diagnosis: "write, lock, |ky_sync| read".
 */
std::string Stress::ops_between(int stream, int s0, int k0, int s1, int k1) const
{
    std::string r;
    for (int s = s0; s <= s1; s++) {
        if (s > s0) r += std::string(" |") + sync_name(P.begin[s]) + "|";
        const std::vector<Op> &ops = P.ops[(size_t)stream * P.nsub + s];
        for (int k = s == s0 ? k0 + 1 : 0; k < (s == s1 ? k1 : (int)ops.size()); k++) {
            r += std::string(" ") + op_name(ops[k].type);
            if (ops[k].type == OP_PRELOAD || ops[k].type == OP_OVERLOAD) {
                const Box &b = P.boxes[ops[k].a];
                r += "(" + arrs[b.arr].name + (b.rw ? ",rw" : ",ro");
                for (int d = 0; d < b.nd; d++)
                    r += "," + std::to_string(b.lo[d]) + "+" + std::to_string(b.len[d]);
                r += ")";
            }
            if (r.size() > 600) return r + " ...";
        }
    }
    return r;
}

/* For a diagnosis: the round's operations, up to interval upto_sub, that touch e's page(s) in bulk (preloads
 * and overloads covering them), write e, or take a lock on e's writer's rank. */
std::string Stress::page_history(size_t e, int upto_sub) const
{
    uintptr_t a0 = (uintptr_t)ptr(e), a1 = a0 + arrs[arr_of[e]].elem - 1;
    int w = P.writer[e];
    std::string r;
    for (int s = 0; s <= upto_sub && s < P.nsub; s++) {
        r += std::string(" |") + sync_name(P.begin[s]) + "|";
        for (int st = 0; st < n * T; st++) {
            auto &ops = P.ops[(size_t)st * P.nsub + s];
            for (size_t k = 0; k < ops.size(); k++) {
                const Op &o = ops[k];
                std::string what;
                if ((o.type == OP_PRELOAD || o.type == OP_OVERLOAD) &&
                    arrs[P.boxes[o.a].arr].base == arrs[arr_of[e]].base) {
                    std::vector<size_t> pages = box_pages(P.boxes[o.a]);
                    if (std::binary_search(pages.begin(), pages.end(), a0 / pg) ||
                        std::binary_search(pages.begin(), pages.end(), a1 / pg))
                        what = std::string(op_name(o.type)) + (P.boxes[o.a].rw ? "(rw)" : "(ro)");
                } else if (o.type == OP_WRITE && (size_t)o.a == e) {
                    what = "write";
                } else if (o.type == OP_LOCK && w >= 0 && stream_rank(st) == stream_rank(w)) {
                    what = "lock";
                }
                if (what.empty()) continue;
                r += " " + what + "@r" + std::to_string(stream_rank(st)) + "t" + std::to_string(st % T) +
                     "op" + std::to_string(k);
                if (r.size() > 900) return r + " ...";
            }
        }
    }
    return r;
}

/* Which lock operation of this round wrote a log entry. */
std::string Stress::lock_entry(uint64_t tag) const
{
    auto it = P.lock_src.find(tag);
    if (it == P.lock_src.end()) return "an entry of an earlier round";
    char s[128];
    int st = (int)(it->second >> 20);
    snprintf(s, sizeof s, "the entry of rank %d thread %d interval %d op %d", stream_rank(st), st % T,
             (int)(it->second >> 16 & 15), (int)(it->second & 0xffff));
    return s;
}

/* Where a value seen in e comes from, as far as the test can tell. */
std::string Stress::origin(size_t e, const void *bytes) const
{
    const Arr &A = arrs[arr_of[e]];
    size_t i = e - A.first;
    if (!memcmp(bytes, &A.ref[i * A.elem], A.elem)) {
        const Who &h = who[e];
        if (h.round < 0) return "the initial zero";
        char s[160];
        snprintf(s, sizeof s,
                 "the reference value, written by rank %d thread %d in round %d interval %d op %d",
                 stream_rank(h.stream), h.stream % T, h.round, h.sub, h.k);
        return s;
    }
    if (!A.prev.empty() && !memcmp(bytes, &A.prev[i * A.elem], A.elem))
        return "the value before the last barrier (stale)";
    std::vector<uint8_t> buf(A.elem);
    for (int j = P.wstart[e]; j < P.wstart[e + 1]; j++) {
        encode(A.kind, P.w[j].v, buf.data());
        if (!memcmp(bytes, buf.data(), A.elem)) return "the value " + describe_write(P.w[j]);
    }
    buf.assign(A.elem, 0);
    if (!memcmp(bytes, buf.data(), A.elem)) return "zero";
    return "a value nobody wrote to this element this round";
}

void Stress::op_read(int t, int s, int k, const Op &op)
{
    int stream = me * T + t;
    size_t e = (size_t)op.a;
    const WRec *src;
    int x = expect(e, stream, s, k, &src);
    if (x < 0) {
        cnt[C_SKIPPED]++;
        return;
    }
    const Arr &A = arrs[arr_of[e]];
    uint8_t got[24], want[24];
    {
        std::shared_lock<std::shared_mutex> lk(region_mu, std::defer_lock);
        if (A.region) lk.lock();
        memcpy(got, ptr(e), A.elem);
    }
    cnt[OP_READ]++;
    if (!x) return;
    cnt[C_CHECKED]++;
    if (src)
        encode(A.kind, src->v, want);
    else
        memcpy(want, &A.ref[(e - A.first) * A.elem], A.elem);
    if (!memcmp(got, want, A.elem)) return;
    std::string since = src && src->stream == stream ? "; this thread's operations since the write:" +
                                                           ops_between(stream, src->sub, src->k, s, k)
                                                     : "";
    fail(
        "round %d (%s) interval %d (after %s) thread %d op %d: read %s: expected %s (%s), got %s (%s)%s; the "
        "round's bulk operations on its page, its writes and its writer rank's locks:%s",
        P.round, structure().c_str(), s, sync_name(P.begin[s]), t, k, where(e).c_str(),
        show(A.kind, want).c_str(), src ? describe_write(*src).c_str() : origin(e, want).c_str(),
        show(A.kind, got).c_str(), origin(e, got).c_str(), since.c_str(), page_history(e, s).c_str());
}

void Stress::op_lock(int t, int s, int k, const Op &op)
{
    int stripe = op.a, id = kLockBase + stripe, st;
    if (op.flag & LK_TRY) {
        int tries = 0;
        while ((st = ky_trylock(id)) == KY_PENDING) {
            cnt[C_BUSY]++;
            if (++tries > 64) {
                st = ky_lock(id);
                break;
            }
            sched_yield();
        }
    } else {
        st = ky_lock(id);
    }
    if (st != KY_OK) {
        fail("round %d interval %d thread %d op %d: lock %d -> %d: %s", P.round, s, t, k, id, st,
             ky_last_error());
        return;
    }
    int other = holder[stripe].exchange(t + 1);
    if (other)
        fail("round %d interval %d thread %d op %d: %s(%d) granted while thread %d of this rank holds it",
             P.round, s, t, k, op.flag & LK_TRY ? "ky_trylock" : "ky_lock", id, other - 1);
    long *d = lockd + (size_t)stripe * (2 + lock_cap), c = d[0], lo = lock_count[stripe];
    if (c < lo || c >= lo + P.lock_n[stripe])
        fail(
            "round %d interval %d (after %s) thread %d op %d: under lock %d the count of stripe %d is %ld, "
            "expected "
            "%ld .. %ld (holders' writes lost or stale)",
            P.round, s, sync_name(P.begin[s]), t, k, id, stripe, c, lo, lo + P.lock_n[stripe] - 1);
    long prev = d[2 + (size_t)c % lock_cap];
    if (c >= lo && P.lock_src.count((uint64_t)prev))
        fail(
            "round %d (%s) interval %d (after %s) thread %d op %d: under lock %d the count of stripe %d is "
            "%ld but "
            "log slot %ld already holds %s: this holder did not see the previous holder's count",
            P.round, structure().c_str(), s, sync_name(P.begin[s]), t, k, id, stripe, c, c,
            lock_entry(prev).c_str());
    ky_dsm_stats_t s0;
    ky_dsm_stats(&s0);
    LockSeen seen = {t,
                     k,
                     stripe,
                     op.flag,
                     (int)syscall(SYS_gettid),
                     c,
                     d[1],
                     op.v,
                     mono_ns(),
                     0,
                     s0.write_faults,
                     0,
                     s0.twins,
                     0,
                     s0.diffs,
                     0,
                     s0.diff_bytes,
                     0};
    d[2 + (size_t)c % lock_cap] = (long)op.v;
    d[0] = c + 1;
    d[1] += lock_amount(op.v);
    if (op.flag & LK_NESTED) {
        if ((st = ky_lock(kLockGlobal)) != KY_OK)
            fail("nested ky_lock -> %d: %s", st, ky_last_error());
        else {
            if ((other = holder[kStripes].exchange(t + 1)))
                fail("round %d thread %d op %d: ky_lock(%d) granted while thread %d of this rank holds it",
                     P.round, t, k, kLockGlobal, other - 1);
            gctr[0]++;
            holder[kStripes] = 0;
            if ((st = ky_unlock(kLockGlobal)) != KY_OK)
                fail("nested ky_unlock -> %d: %s", st, ky_last_error());
        }
    }
    holder[stripe] = 0;
    if ((st = ky_unlock(id)) != KY_OK) fail("ky_unlock(%d) -> %d: %s", id, st, ky_last_error());
    seen.t_out = mono_ns();
    ky_dsm_stats_t s1;
    ky_dsm_stats(&s1);
    seen.wf1 = s1.write_faults, seen.twins1 = s1.twins, seen.diffs1 = s1.diffs, seen.db1 = s1.diff_bytes;
    lock_seen[t].push_back(seen);
    cnt[OP_LOCK]++;
}

void Stress::op_claim(int t, int s, int k, const Op &op)
{
    int w = op.flag, slot = op.a;
    size_t gslot = (size_t)P.round * kSlotsPerRound + slot;
    void *p = w == 8 ? (void *)&slots64[gslot] : (void *)&slots32[gslot];
    uint64_t old = ~0ull;
    int st = ky_compare_swap(p, w, 0, op.v, &old);
    cnt[OP_CLAIM]++;
    if (st != KY_OK) {
        fail("round %d thread %d op %d: ky_compare_swap(claim) -> %d: %s", P.round, t, k, st,
             ky_last_error());
        return;
    }
    if (old == 0) {
        won[t].push_back({slot + (w == 8 ? kSlotsPerRound : 0), op.v});
        cnt[C_WON]++;
        return;
    }
    int by = (int)(old & 0xff) - 1;
    if (by < 0 || by >= n * T || !(P.claim_mask[w == 8][slot] >> by & 1))
        fail(
            "round %d interval %d thread %d op %d: claim of %d-byte slot %d found %#llx, which no claimer of "
            "this slot "
            "wrote",
            P.round, s, t, k, w, slot, (unsigned long long)old);
}

void Stress::run_ops(int t, int s)
{
    int stream = me * T + t;
    const std::vector<Op> &ops = P.ops[(size_t)stream * P.nsub + s];
    std::vector<long> seen(kCounters, LONG_MIN);
    uint64_t cas_seen[kCasWords];
    for (int w = 0; w < kCasWords; w++) cas_seen[w] = cas_base[w];
    for (size_t k = 0; k < ops.size(); k++) {
        const Op &op = ops[k];
        switch (op.type) {
            case OP_READ:
                op_read(t, s, (int)k, op);
                break;
            case OP_WRITE: {
                const Arr &A = arrs[arr_of[op.a]];
                std::shared_lock<std::shared_mutex> lk(region_mu, std::defer_lock);
                if (A.region) lk.lock();
                store(A.kind, ptr(op.a), op.v);
                cnt[OP_WRITE]++;
                break;
            }
            case OP_LOCK:
                op_lock(t, s, (int)k, op);
                break;
            case OP_FADD: {
                int c = op.a;
                long old = kyt::fadd(&fctr[(size_t)c * kCounterStride], (long)op.v);
                cnt[OP_FADD]++;
                long lo = std::max(fbase[c], seen[c]), hi = fbase[c] + P.fadd[c] - (long)op.v;
                if (old == LONG_MIN)
                    fail("ky_fetch_add -> LONG_MIN: %s", ky_last_error());
                else if (old < lo || old > hi)
                    fail(
                        "round %d interval %d (after %s) thread %d op %zu: kyt::fadd(counter %d, %ld) "
                        "returned %ld, "
                        "expected %ld .. %ld",
                        P.round, s, sync_name(P.begin[s]), t, k, c, (long)op.v, old, lo, hi);
                else
                    seen[c] = old + (long)op.v;
                if (c == 0 && old != LONG_MIN) f0_olds[t].push_back(old);
                break;
            }
            case OP_CASINC: {
                int w = op.a, bytes = w < 16 ? 4 : 8;
                void *p = w < 16 ? (void *)(casw + 4 * w) : (void *)(casw + 64 + 8 * (w - 16));
                uint64_t guess = cas_seen[w], old = 0, mask = bytes == 4 ? 0xffffffffull : ~0ull;
                int st;
                for (;;) {
                    st = ky_compare_swap(p, bytes, guess, (guess + 1) & mask, &old);
                    if (st != KY_OK || old == guess) break;
                    cnt[C_CASRETRY]++;
                    guess = old;
                }
                cnt[OP_CASINC]++;
                if (st != KY_OK)
                    fail("ky_compare_swap(%d bytes) -> %d: %s", bytes, st, ky_last_error());
                else if (((guess - cas_base[w]) & mask) >= (uint64_t)P.cas_inc[w])
                    fail(
                        "round %d thread %d op %zu: cas word %d was %#llx, beyond base %#llx + %ld "
                        "increments",
                        P.round, t, k, w, (unsigned long long)guess, (unsigned long long)cas_base[w],
                        P.cas_inc[w]);
                cas_seen[w] = (guess + 1) & mask;
                break;
            }
            case OP_CLAIM:
                op_claim(t, s, (int)k, op);
                break;
            case OP_PRELOAD:
            case OP_OVERLOAD: {
                const Box &b = P.boxes[op.a];
                const Arr &A = arrs[b.arr];
                size_t i = 0;
                for (int d = 0; d < b.nd; d++) i = i * A.dims[d] + b.lo[d];
                std::unique_lock<std::shared_mutex> lk(region_mu, std::defer_lock);
                if (op.type == OP_OVERLOAD) lk.lock();
                int st = (op.type == OP_PRELOAD ? ky_preload_array : ky_overload_array)(
                    A.base + i * A.elem, A.dims.data(), b.len, b.nd, A.elem, b.rw);
                cnt[op.type]++;
                if (st != KY_OK)
                    fail("round %d thread %d op %zu: %s of %s -> %d: %s", P.round, t, k, op_name(op.type),
                         A.name.c_str(), st, ky_last_error());
                break;
            }
        }
    }
}

/* ---- after the barrier: the reference, the data, the special words --------------------------------- */

void Stress::update_reference()
{
    for (auto &A : arrs) A.prev = A.ref;
    for (size_t e = 0; e < E; e++) {
        int hi = P.wstart[e + 1];
        if (hi == P.wstart[e]) continue;
        const WRec &w = P.w[hi - 1];
        Arr &A = arrs[arr_of[e]];
        encode(A.kind, w.v, &A.ref[(e - A.first) * A.elem]);
        who[e].round = P.round, who[e].sub = w.sub, who[e].stream = w.stream, who[e].k = w.k;
    }
}

void Stress::check_data(int t)
{
    bool last = P.round == rounds - 1;
    for (size_t a = 0; a < arrs.size(); a++) {
        const Arr &A = arrs[a];
        size_t bytes = A.n * A.elem, npages = (bytes + pg - 1) / pg;
        for (size_t p = t; p < npages; p += T) {
            if (!last && (kyt::mix(seed, P.round, me, a * 100003 + p) & 1)) continue;
            size_t i0 = p * pg / A.elem, i1 = std::min(A.n, ((p + 1) * pg + A.elem - 1) / A.elem);
            int bad = 0;
            for (size_t i = i0; i < i1; i++) {
                const uint8_t *want = &A.ref[i * A.elem];
                uint8_t got[24];
                memcpy(got, A.base + i * A.elem, A.elem);
                if (!memcmp(got, want, A.elem)) continue;
                size_t e = A.first + i;
                if (bad++ < 2)
                    fail(
                        "round %d (%s): after ky_barrier %s: expected %s (%s), got %s (%s); the round's bulk "
                        "operations on its page, its writes and its writer rank's locks:%s",
                        P.round, structure().c_str(), where(e).c_str(), show(A.kind, want).c_str(),
                        origin(e, want).c_str(), show(A.kind, got).c_str(), origin(e, got).c_str(),
                        page_history(e, P.nsub - 1).c_str());
            }
            if (bad > 2)
                fail("round %d: %s page %zu: %d wrong elements in all", P.round, A.name.c_str(), p, bad);
        }
    }
}

void Stress::dump_lock_seen(int stripe) const
{
    const char *dir = getenv("KY_TEST_STRESS_LOCKLOG");
    if (!dir || !*dir) return;
    std::string path = std::string(dir) + "/locklog." + std::to_string(me) + ".txt";
    FILE *f = fopen(path.c_str(), "a");
    if (!f) return;
    for (int t = 0; t < T; t++)
        for (const LockSeen &x : lock_seen[t])
            if (x.stripe == stripe || stripe < 0)
                fprintf(f,
                        "round %d stripe %d rank %d thread %d op %d flag %d saw count %ld sum %ld wrote tag "
                        "%llx in %llu out %llu wf %llu twins %llu diffs %llu diff_bytes %llu tid %d\n",
                        P.round, x.stripe, me, x.t, x.k, x.flag, x.c, x.sum, (unsigned long long)x.tag,
                        (unsigned long long)x.t_in, (unsigned long long)x.t_out, x.wf1 - x.wf0,
                        x.twins1 - x.twins0, x.diffs1 - x.diffs0, x.db1 - x.db0, x.tid);
    fclose(f);
}

void Stress::check_specials()
{
    /* lock-protected logs: count, sum, and the set of entries of this round */
    for (int k = 0; k < kStripes; k++) {
        long *d = lockd + (size_t)k * (2 + lock_cap);
        long want_c = lock_count[k] + P.lock_n[k];
        std::vector<uint64_t> got, want = P.lock_tags[k];
        for (int i = 0; i < P.lock_n[k]; i++)
            got.push_back((uint64_t)d[2 + (size_t)(lock_count[k] + i) % lock_cap]);
        std::sort(got.begin(), got.end()), std::sort(want.begin(), want.end());
        long want_s = lock_sum[k] + P.lock_add[k];
        if (d[0] != want_c || d[1] != want_s || got != want) {
            std::vector<uint64_t> missing;
            std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                                std::back_inserter(missing));
            fail(
                "round %d (%s): lock stripe %d (lock %d, data on page home %d): count %ld, expected %ld; sum "
                "%ld, "
                "expected %ld; %zu of %d log entries of this round missing%s%s",
                P.round, structure().c_str(), k, kLockBase + k, ky_home_of(d), d[0], want_c, d[1], want_s,
                missing.size(), P.lock_n[k],
                missing.empty() ? "" : ", first: ", missing.empty() ? "" : lock_entry(missing[0]).c_str());
            dump_lock_seen(-1);
        }
        lock_count[k] = want_c, lock_sum[k] = want_s;
    }
    if (gctr[0] != g_base + P.g_add)
        fail("round %d: nested-lock counter %ld, expected %ld", P.round, gctr[0], g_base + P.g_add);
    g_base += P.g_add;
    /* fetch_add counters, read through kyt::fadd(p, 0) */
    for (int c = 0; c < kCounters; c++) {
        long v = kyt::fadd(&fctr[(size_t)c * kCounterStride], 0);
        if (v != fbase[c] + P.fadd[c])
            fail("round %d: fetch_add counter %d (home %d) is %ld, expected %ld", P.round, c,
                 ky_home_of(&fctr[(size_t)c * kCounterStride]), v, fbase[c] + P.fadd[c]);
        fbase[c] += P.fadd[c];
    }
    /* compare-and-swap counters, read with a CAS that changes nothing */
    for (int w = 0; w < kCasWords; w++) {
        int bytes = w < 16 ? 4 : 8;
        void *p = w < 16 ? (void *)(casw + 4 * w) : (void *)(casw + 64 + 8 * (w - 16));
        uint64_t mask = bytes == 4 ? 0xffffffffull : ~0ull, want = (cas_base[w] + P.cas_inc[w]) & mask,
                 old = 0;
        int st = ky_compare_swap(p, bytes, 0, 0, &old);
        if (st != KY_OK || old != want)
            fail("round %d: cas word %d (%d bytes) is %#llx, expected %#llx (status %d)", P.round, w, bytes,
                 (unsigned long long)old, (unsigned long long)want, st);
        cas_base[w] = want;
    }
    /* claims: one winner per slot tried, the slot holds its tag */
    std::vector<int> wins(2 * kSlotsPerRound, 0), all(2 * kSlotsPerRound, 0);
    for (int t = 0; t < T; t++)
        for (auto &x : won[t]) {
            wins[x.first]++;
            size_t gslot = (size_t)P.round * kSlotsPerRound + x.first % kSlotsPerRound;
            bool wide = x.first >= kSlotsPerRound;
            uint64_t old = 0;
            int st = ky_compare_swap(wide ? (void *)&slots64[gslot] : (void *)&slots32[gslot], wide ? 8 : 4,
                                     0, 0, &old);
            if (st != KY_OK || old != x.second)
                fail("round %d: claimed %d-byte slot %d holds %#llx, the winner wrote %#llx", P.round,
                     wide ? 8 : 4, x.first % kSlotsPerRound, (unsigned long long)old,
                     (unsigned long long)x.second);
            else
                cnt[C_VERIFIED]++;
        }
    ky_comm_barrier();
    MPI_Allreduce(wins.data(), all.data(), 2 * kSlotsPerRound, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int j = 0; j < 2 * kSlotsPerRound; j++) {
        int tried = P.claim_mask[j >= kSlotsPerRound][j % kSlotsPerRound] != 0;
        if (all[j] != tried)
            fail("round %d: %d-byte slot %d was won %d times, expected %d", P.round,
                 j >= kSlotsPerRound ? 8 : 4, j % kSlotsPerRound, all[j], tried);
    }
    /* counter 0 (adds of 1): every old value exactly once over all ranks */
    std::vector<long> mine, every;
    for (int t = 0; t < T; t++) mine.insert(mine.end(), f0_olds[t].begin(), f0_olds[t].end());
    std::vector<int> counts(n), displs(n);
    int total = 0;
    for (int r = 0; r < n; r++) displs[r] = total, counts[r] = P.f0_per_rank[r], total += counts[r];
    if ((int)mine.size() != counts[me]) {
        fail("round %d: %zu fetch_adds of counter 0 returned, %d made", P.round, mine.size(), counts[me]);
        mine.resize(counts[me], -1);
    }
    every.resize(total);
    ky_comm_barrier();
    MPI_Allgatherv(mine.data(), counts[me], MPI_LONG, every.data(), counts.data(), displs.data(), MPI_LONG,
                   MPI_COMM_WORLD);
    std::sort(every.begin(), every.end());
    long base0 = fbase[0] - P.fadd[0];
    for (int i = 0; i < total; i++)
        if (every[i] != base0 + i) {
            fail(
                "round %d: kyt::fadd(counter 0, 1) old values: position %d is %ld, expected %ld (each value "
                "once)",
                P.round, i, every[i], base0 + i);
            break;
        }
    for (int t = 0; t < T; t++) f0_olds[t].clear(), won[t].clear(), lock_seen[t].clear();
}

bool Stress::run()
{
    if (!setup()) return false;
    auto t0 = std::chrono::steady_clock::now();
    auto body = [&](int t) {
        for (int round = 0; round < rounds; round++) {
            if (t == 0) plan_round(round);
            wait();
            for (int s = 0; s < P.nsub; s++) {
                run_ops(t, s);
                wait();
                if (t == 0) {
                    int st = do_sync(P.end[s]);
                    if (st != KY_OK)
                        fail("round %d: %s -> %d: %s", round, sync_name(P.end[s]), st, ky_last_error());
                }
                wait();
            }
            if (t == 0) update_reference();
            wait();
            check_data(t);
            wait();
            if (t == 0) {
                check_specials();
                stop = !kyt::all(!local_bad);
                int st = ky_sync(); /* the checks' reads end before anybody writes the next round */
                if (st != KY_OK) fail("ky_sync -> %d: %s", st, ky_last_error());
                if (me == 0 && rounds >= 20 && (round + 1) % (rounds / 10) == 0) {
                    printf("stress(%s): round %d of %d, %.1f s\n", prof.name, round + 1, rounds,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
                    fflush(stdout);
                }
            }
            wait();
            if (stop) {
                if (t == 0 && me == 0)
                    printf("stress(%s): stopped after round %d (failures above)\n", prof.name, round);
                break;
            }
        }
    };
    std::vector<std::thread> th;
    for (int t = 1; t < T; t++) th.emplace_back(body, t);
    body(0);
    for (auto &x : th) x.join();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t c[OP_NTYPES + 6];
    for (int i = 0; i < OP_NTYPES + 6; i++) c[i] = kyt::sum((uint64_t)cnt[i].load());
    uint64_t all_ops = 0;
    for (int i = 0; i < OP_NTYPES; i++) all_ops += c[i];
    if (me == 0)
        printf(
            "stress(%s): %llu operations in %.2f s (%.0f/s): %llu reads (%llu checked, %llu skipped), %llu "
            "writes, "
            "%llu locks (%llu trylock busy), %llu fetch_adds, %llu cas increments (%llu retries), %llu "
            "claims "
            "(%llu won, %llu verified), %llu preloads, %llu overloads\n",
            prof.name, (unsigned long long)all_ops, secs, all_ops / secs, (unsigned long long)c[OP_READ],
            (unsigned long long)c[C_CHECKED], (unsigned long long)c[C_SKIPPED],
            (unsigned long long)c[OP_WRITE], (unsigned long long)c[OP_LOCK], (unsigned long long)c[C_BUSY],
            (unsigned long long)c[OP_FADD], (unsigned long long)c[OP_CASINC],
            (unsigned long long)c[C_CASRETRY], (unsigned long long)c[OP_CLAIM], (unsigned long long)c[C_WON],
            (unsigned long long)c[C_VERIFIED], (unsigned long long)c[OP_PRELOAD],
            (unsigned long long)c[OP_OVERLOAD]);
    for (auto &f : fails) ADD_FAILURE() << "rank " << me << ": " << f;
    if (nfails > (long)fails.size())
        ADD_FAILURE() << "rank " << me << ": " << nfails - (long)fails.size() << " more";
    teardown();
    return kyt::all(nfails == 0);
}

TEST(DsmStress, Mixed)
{
    EXPECT_TRUE(Stress(kMixed).run());
}
TEST(DsmStress, Locks)
{
    EXPECT_TRUE(Stress(kLocks).run());
}
TEST(DsmStress, Regions)
{
    EXPECT_TRUE(Stress(kRegions).run());
}

}  // namespace
