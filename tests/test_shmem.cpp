/* Tests of the shmem layer (include/shmem.h): the symmetric heap, put/get (contiguous, strided, _nbi, with
 * signal), atomics, locks, waits, world-team and active-set collectives, shmem_ptr, and bad input. Results
 * are checked against references computed another way: a serial formula every PE evaluates for every other
 * PE, or MPI's own collectives on MPI_COMM_WORLD. Run with 2, 3 and 4 ranks, on one node and with every rank
 * its own node (KY_NODE_SPLIT=rank: heaps not mapped, every access through the MPI path), and without a
 * progress thread. */
#include <climits>

#include "kyt.h"

#include "shmem.h"

namespace {

struct ShmemEnv : ::testing::Environment {
    void SetUp() override { shmem_init(); }
    void TearDown() override { shmem_finalize(); }
};
::testing::Environment *const shmem_env = ::testing::AddGlobalTestEnvironment(new ShmemEnv);

int me()
{
    return shmem_my_pe();
}
int np()
{
    return shmem_n_pes();
}

/* What PE p writes at element i in the tests below. */
long val(int p, size_t i, long salt)
{
    return (long)kyt::mix((uint64_t)p, i, (uint64_t)salt) >> 8;
}

/* Global variables are symmetric too (the data segment). */
long g_counter;
int g_array[64];
long g_sync[SHMEM_BCAST_SYNC_SIZE];
long g_lock;

/* ---- identity, heap ----------------------------------------------------------------------------------- */

TEST(Shmem, Identity)
{
    EXPECT_EQ(ky_rank(), me());
    EXPECT_EQ(ky_nranks(), np());
    EXPECT_EQ(me(), shmem_team_my_pe(SHMEM_TEAM_WORLD));
    EXPECT_EQ(np(), shmem_team_n_pes(SHMEM_TEAM_WORLD));
    EXPECT_EQ(-1, shmem_team_my_pe(SHMEM_TEAM_INVALID));
    int major = 0, minor = 0;
    shmem_info_get_version(&major, &minor);
    EXPECT_EQ(1, major);
    EXPECT_EQ(5, minor);
    for (int p = 0; p < np(); p++) EXPECT_TRUE(shmem_pe_accessible(p));
    EXPECT_FALSE(shmem_pe_accessible(np()));
}

TEST(Shmem, HeapIsSymmetric)
{
    /* The same sequence of calls on every PE gives the same offsets: gather them with MPI and compare. */
    std::vector<void *> blocks;
    size_t sizes[] = {1, 100, 4096, 1 << 20, 24, 1 << 16};
    for (size_t s : sizes) blocks.push_back(shmem_malloc(s));
    blocks.push_back(shmem_align(4096, 100));
    blocks.push_back(shmem_calloc(1000, sizeof(double)));
    EXPECT_EQ(0u, (uintptr_t)blocks[6] % 4096);
    shmem_free(blocks[1]);
    blocks[1] = shmem_malloc(50); /* first fit: back into the hole */
    char *base = (char *)blocks[0];
    std::vector<long> offs;
    for (void *b : blocks) {
        EXPECT_NE(nullptr, b);
        offs.push_back((long)((char *)b - base));
    }
    std::vector<long> all(offs.size() * np());
    shmem_barrier_all();
    MPI_Allgather(offs.data(), (int)offs.size(), MPI_LONG, all.data(), (int)offs.size(), MPI_LONG,
                  MPI_COMM_WORLD);
    for (int p = 0; p < np(); p++)
        for (size_t i = 0; i < offs.size(); i++)
            EXPECT_EQ(offs[i], all[p * offs.size() + i]) << "block " << i;
    const double *z = (const double *)blocks[7];
    bool zero = true;
    for (int i = 0; i < 1000; i++) zero &= z[i] == 0.0;
    EXPECT_TRUE(zero);
    /* realloc keeps the contents (grown past its neighbour, so it moves) */
    long *r = (long *)shmem_malloc(10 * sizeof(long));
    for (int i = 0; i < 10; i++) r[i] = val(me(), i, 1);
    long *guard = (long *)shmem_malloc(8);
    r = (long *)shmem_realloc(r, 100000 * sizeof(long));
    ASSERT_NE(nullptr, r);
    for (int i = 0; i < 10; i++) EXPECT_EQ(val(me(), i, 1), r[i]);
    shmem_free(guard);
    shmem_free(r);
    for (void *b : blocks) shmem_free(b);
    EXPECT_EQ(nullptr, shmem_malloc(0));
}

/* ---- put / get
 * --------------------------------------------------------------------------------------------- */

TEST(Shmem, PutGetRing)
{
    const size_t max = (size_t)kyt::scaled(1 << 18, 1024);
    long *dst = (long *)shmem_malloc(max * sizeof(long));
    long *src = (long *)shmem_malloc(max * sizeof(long));
    int right = (me() + 1) % np(), left = (me() + np() - 1) % np();
    size_t salt = 10;
    for (size_t n = 1; n <= max; n *= 8, salt++) {
        for (size_t i = 0; i < n; i++) src[i] = val(me(), i, (long)salt);
        shmem_barrier_all();
        shmem_long_put(dst, src, n, right);
        shmem_barrier_all();
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += dst[i] != val(left, i, (long)salt);
        EXPECT_EQ(0u, bad) << n << " longs put from PE " << left;
        /* get the right neighbour's source back, blocking and _nbi */
        std::vector<long> got(n, -1), got2(n, -1);
        shmem_long_get(got.data(), src, n, right);
        shmem_getmem_nbi(got2.data(), src, n * sizeof(long), right);
        shmem_quiet();
        bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += (got[i] != val(right, i, (long)salt)) + (got2[i] != val(right, i, (long)salt));
        EXPECT_EQ(0u, bad) << n << " longs got from PE " << right;
        shmem_barrier_all();
    }
    /* p / g and _nbi puts of many small pieces, completed by one quiet */
    shmem_barrier_all();
    for (int i = 0; i < 64; i++) shmem_long_put_nbi(&dst[i], &src[i], 1, right);
    shmem_double_p((double *)&dst[100], 2.5 * me(), right);
    shmem_quiet();
    shmem_barrier_all();
    bool ok = true;
    for (int i = 0; i < 64; i++) ok &= dst[i] == val(left, i, (long)salt - 1); /* the last round's source */
    EXPECT_EQ(2.5 * left, shmem_double_g((double *)&dst[100], me()));
    EXPECT_EQ(2.5 * me(), shmem_double_g((double *)&dst[100], right));
    EXPECT_TRUE(ok);
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
}

/* Every put and get is in ky_comm_stats once complete: the _nbi copies into a mapped heap are added by the
 * quiet that completes them, the others as they go. */
TEST(Shmem, NbiCountedInStats)
{
    const int n = 50;
    long *dst = (long *)shmem_malloc(n * sizeof(long));
    long src[n];
    for (int i = 0; i < n; i++) src[i] = i;
    int right = (me() + 1) % np();
    ky_comm_stats_t a, b;
    shmem_barrier_all();
    ASSERT_EQ(KY_OK, ky_comm_stats(&a));
    for (int i = 0; i < n; i++) shmem_long_put_nbi(&dst[i], &src[i], 1, right);
    shmem_getmem_nbi(src, dst, sizeof(long), right);
    shmem_quiet();
    ASSERT_EQ(KY_OK, ky_comm_stats(&b));
    unsigned long long ops = 0, bytes = 0;
    for (int p = 0; p < KY_PATH_COUNT; p++) {
        ops += b.ops[p] - a.ops[p];
        bytes += b.bytes[p] - a.bytes[p];
    }
    EXPECT_GE(ops, (unsigned long long)n + 1);
    EXPECT_GE(bytes, (n + 1) * sizeof(long));
    shmem_barrier_all();
    shmem_free(dst);
}

TEST(Shmem, StridedIputIget)
{
    const size_t n = 37;
    int *dst = (int *)shmem_calloc(n * 5, sizeof(int));
    int *src = (int *)shmem_malloc(n * 3 * sizeof(int));
    for (size_t i = 0; i < n * 3; i++) src[i] = (int)val(me(), i, 3);
    int right = (me() + 1) % np(), left = (me() + np() - 1) % np();
    shmem_barrier_all();
    shmem_int_iput(dst, src, 5, 3, n, right); /* dst[5k] = src[3k] */
    shmem_barrier_all();
    size_t bad = 0;
    for (size_t i = 0; i < n * 5; i++) bad += dst[i] != (i % 5 ? 0 : (int)val(left, (i / 5) * 3, 3));
    EXPECT_EQ(0u, bad);
    std::vector<int> got(n * 2, -7);
    shmem_int_iget(got.data(), src, 2, 3, n, right); /* got[2k] = right's src[3k] */
    bad = 0;
    for (size_t i = 0; i < n * 2; i++) bad += got[i] != (i % 2 ? -7 : (int)val(right, (i / 2) * 3, 3));
    EXPECT_EQ(0u, bad);
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
}

TEST(Shmem, Globals)
{
    int right = (me() + 1) % np(), left = (me() + np() - 1) % np();
    int mine[64];
    for (int i = 0; i < 64; i++) mine[i] = (int)val(me(), i, 4);
    shmem_barrier_all();
    shmem_int_put(g_array, mine, 64, right);
    shmem_barrier_all();
    bool ok = true;
    for (int i = 0; i < 64; i++) ok &= g_array[i] == (int)val(left, i, 4);
    EXPECT_TRUE(ok);
    EXPECT_EQ((int)val(right, 5, 4), shmem_int_g(&g_array[5], (right + 1) % np()));
    shmem_barrier_all();
}

TEST(Shmem, PutSignal)
{
    long *data = (long *)shmem_calloc(1000, sizeof(long));
    uint64_t *sig = (uint64_t *)shmem_calloc(1, sizeof(uint64_t));
    std::vector<long> mine(1000);
    for (int i = 0; i < 1000; i++) mine[i] = val(me(), i, 5);
    int right = (me() + 1) % np(), left = (me() + np() - 1) % np();
    shmem_barrier_all();
    shmem_long_put_signal(data, mine.data(), 1000, sig, 7, SHMEM_SIGNAL_SET, right);
    EXPECT_EQ(7u, shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 7));
    size_t bad = 0; /* the data is there once the signal is */
    for (int i = 0; i < 1000; i++) bad += data[i] != val(left, i, 5);
    EXPECT_EQ(0u, bad);
    shmem_barrier_all();
    shmem_free(sig);
    shmem_free(data);
}

/* ---- atomics, locks
 * ---------------------------------------------------------------------------------------- */

TEST(Shmem, AtomicsCountOnce)
{
    /* Every PE fetch-adds on PE 0's counter (heap) and on PE np-1's global: the fetched values are a
     * permutation of 0 .. total-1. */
    const int iters = kyt::scaled(200, 20);
    long *ctr = (long *)shmem_calloc(1, sizeof(long));
    g_counter = 0;
    shmem_barrier_all();
    std::vector<long> got, got2;
    for (int i = 0; i < iters; i++) {
        got.push_back(shmem_long_atomic_fetch_add(ctr, 1, 0));
        got2.push_back(shmem_long_atomic_fetch_inc(&g_counter, np() - 1));
    }
    shmem_barrier_all();
    std::vector<long> all(iters * np()), all2(iters * np());
    MPI_Allgather(got.data(), iters, MPI_LONG, all.data(), iters, MPI_LONG, MPI_COMM_WORLD);
    MPI_Allgather(got2.data(), iters, MPI_LONG, all2.data(), iters, MPI_LONG, MPI_COMM_WORLD);
    std::sort(all.begin(), all.end());
    std::sort(all2.begin(), all2.end());
    bool perm = true;
    for (long i = 0; i < (long)all.size(); i++) perm &= all[i] == i && all2[i] == i;
    EXPECT_TRUE(perm);
    EXPECT_EQ((long)iters * np(), shmem_long_atomic_fetch(ctr, 0));
    EXPECT_EQ((long)iters * np(), shmem_long_atomic_fetch(&g_counter, np() - 1));
    shmem_barrier_all();
    shmem_free(ctr);
}

TEST(Shmem, AtomicsKinds)
{
    unsigned int *bits = (unsigned int *)shmem_malloc(3 * sizeof(unsigned int));
    int *cs = (int *)shmem_malloc(sizeof(int));
    double *d = (double *)shmem_malloc(sizeof(double));
    if (me() == 0) {
        bits[0] = 0, bits[1] = ~0u, bits[2] = 0;
        *cs = 0;
        *d = 0;
    }
    shmem_barrier_all();
    shmem_uint_atomic_or(&bits[0], 1u << me(), 0);
    shmem_uint_atomic_and(&bits[1], ~(1u << me()), 0);
    shmem_uint_atomic_xor(&bits[2], 3u << me(), 0);
    /* compare-and-swap: exactly one PE wins each round */
    int wins = 0;
    for (int round = 0; round < 4; round++)
        wins += shmem_int_atomic_compare_swap(cs, round, round + 1, 0) == round;
    shmem_barrier_all();
    unsigned int want_xor = 0;
    for (int p = 0; p < np(); p++) want_xor ^= 3u << p;
    EXPECT_EQ((1u << np()) - 1, shmem_uint_atomic_fetch(&bits[0], 0));
    EXPECT_EQ(~((1u << np()) - 1), shmem_uint_atomic_fetch(&bits[1], 0));
    EXPECT_EQ(want_xor, shmem_uint_atomic_fetch(&bits[2], 0));
    EXPECT_EQ(4, shmem_int_atomic_fetch(cs, 0));
    int total = 0;
    shmem_barrier_all(); /* every PE's fetches answered before any blocks in MPI (no progress thread: PE 0
                          * serves them only inside Kyoyu's waits) */
    MPI_Allreduce(&wins, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(4, total);
    /* swap and set on a double: bits move, not arithmetic */
    shmem_barrier_all();
    if (me() == np() - 1) {
        shmem_double_atomic_set(d, 1.25, 0);
        EXPECT_EQ(1.25, shmem_double_atomic_swap(d, -3.5, 0));
        EXPECT_EQ(-3.5, shmem_double_atomic_fetch(d, 0));
    }
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(cs);
    shmem_free(bits);
}

TEST(Shmem, LockGuardsReadModifyWrite)
{
    const int iters = kyt::scaled(30, 5);
    long *x = (long *)shmem_calloc(1, sizeof(long));
    g_lock = 0;
    shmem_barrier_all();
    for (int i = 0; i < iters; i++) {
        shmem_set_lock(&g_lock);
        long v = shmem_long_g(x, 0); /* not atomic: only the lock makes this right */
        shmem_long_p(x, v + 1, 0);
        shmem_clear_lock(&g_lock);
    }
    shmem_barrier_all();
    EXPECT_EQ((long)iters * np(), shmem_long_g(x, 0));
    shmem_barrier_all();
    shmem_free(x);
}

/* ---- collectives
 * --------------------------------------------------------------------------------------------- */

/* The reference is serial: every PE computes every PE's input from the formula and reduces in PE order.
 * (Not MPI_Allreduce: Open MPI 4.1.4 here answers ULONG_MAX for MPI_MIN of {0, ULONG_MAX} on
 * MPI_UNSIGNED_LONG; docs/shmem.md.) */
template <class T>
T input(int p, size_t i)
{
    return (T)(val(p, i, 6) % 7 + 1);
}

template <class T, class Op>
void check_reduce(const char *what, int (*f)(shmem_team_t, T *, const T *, size_t), Op op, size_t n)
{
    T *src = (T *)shmem_malloc(n * sizeof(T)), *dst = (T *)shmem_malloc(n * sizeof(T));
    std::vector<T> ref(n);
    for (size_t i = 0; i < n; i++) {
        src[i] = input<T>(me(), i);
        ref[i] = input<T>(0, i);
        for (int p = 1; p < np(); p++) ref[i] = op(ref[i], input<T>(p, i));
    }
    shmem_barrier_all();
    EXPECT_EQ(0, f(SHMEM_TEAM_WORLD, dst, src, n)) << what;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += !(dst[i] == ref[i]);
    EXPECT_EQ(0u, bad) << what << " differs from the serial reduction";
    /* in place */
    shmem_barrier_all();
    EXPECT_EQ(0, f(SHMEM_TEAM_WORLD, src, src, n)) << what;
    bad = 0;
    for (size_t i = 0; i < n; i++) bad += !(src[i] == ref[i]);
    EXPECT_EQ(0u, bad) << what << " in place";
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
}

template <class T>
T add(T a, T b)
{
    return (T)(a + b);
}
template <class T>
T mul(T a, T b)
{
    return (T)(a * b);
}
template <class T>
T mn(T a, T b)
{
    return b < a ? b : a;
}
template <class T>
T mx(T a, T b)
{
    return b > a ? b : a;
}
template <class T>
T band(T a, T b)
{
    return (T)(a & b);
}
template <class T>
T bor(T a, T b)
{
    return (T)(a | b);
}
template <class T>
T bxor(T a, T b)
{
    return (T)(a ^ b);
}

TEST(Shmem, ReductionsMatchSerial)
{
    for (size_t n : {(size_t)1, (size_t)1000}) {
        check_reduce<int>("int sum", shmem_int_sum_reduce, add<int>, n);
        check_reduce<long>("long max", shmem_long_max_reduce, mx<long>, n);
        check_reduce<double>("double prod", shmem_double_prod_reduce, mul<double>, n);
        check_reduce<float>("float min", shmem_float_min_reduce, mn<float>, n);
        check_reduce<short>("short sum", shmem_short_sum_reduce, add<short>, n);
        check_reduce<unsigned long>("ulong min", shmem_ulong_min_reduce, mn<unsigned long>, n);
        check_reduce<unsigned int>("uint max", shmem_uint_max_reduce, mx<unsigned int>, n);
        check_reduce<unsigned char>("uchar xor", shmem_uchar_xor_reduce, bxor<unsigned char>, n);
        check_reduce<unsigned int>("uint or", shmem_uint_or_reduce, bor<unsigned int>, n);
        check_reduce<uint64_t>("uint64 and", shmem_uint64_and_reduce, band<uint64_t>, n);
        check_reduce<long double>("longdouble sum", shmem_longdouble_sum_reduce, add<long double>, n);
    }
}

TEST(Shmem, DataCollectivesMatchMpi)
{
    const size_t n = 100;
    int P = np();
    long *src = (long *)shmem_malloc(n * P * sizeof(long)), *dst = (long *)shmem_malloc(n * P * sizeof(long));
    std::vector<long> ref(n * P);
    for (size_t i = 0; i < n * P; i++) src[i] = val(me(), i, 7);
    for (int root = 0; root < P; root++) {
        shmem_barrier_all();
        EXPECT_EQ(0, shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, n, root));
        bool ok = true;
        for (size_t i = 0; i < n; i++) ok &= dst[i] == val(root, i, 7);
        EXPECT_TRUE(ok) << "broadcast from " << root;
    }
    shmem_barrier_all();
    EXPECT_EQ(0, shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, n));
    MPI_Allgather(src, (int)n, MPI_LONG, ref.data(), (int)n, MPI_LONG, MPI_COMM_WORLD);
    EXPECT_TRUE(std::equal(ref.begin(), ref.end(), dst)) << "fcollect";
    /* collect: PE p gives p + 1 elements */
    shmem_barrier_all();
    EXPECT_EQ(0, shmem_long_collect(SHMEM_TEAM_WORLD, dst, src, (size_t)me() + 1));
    size_t at = 0;
    bool ok = true;
    for (int p = 0; p < P; p++)
        for (int i = 0; i <= p; i++) ok &= dst[at++] == val(p, i, 7);
    EXPECT_TRUE(ok) << "collect";
    /* alltoall: block j of my source goes to PE j */
    shmem_barrier_all();
    EXPECT_EQ(0, shmem_long_alltoall(SHMEM_TEAM_WORLD, dst, src, n));
    MPI_Alltoall(src, (int)n, MPI_LONG, ref.data(), (int)n, MPI_LONG, MPI_COMM_WORLD);
    EXPECT_TRUE(std::equal(ref.begin(), ref.end(), dst)) << "alltoall";
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
}

TEST(Shmem, ActiveSetCollectives)
{
    /* The odd PEs (PE_start 1, stride 2) and, separately, every PE with a stride of 1. */
    static long pSync[SHMEM_REDUCE_SYNC_SIZE], pSync2[SHMEM_COLLECT_SYNC_SIZE];
    static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) pSync[i] = pSync2[i] = SHMEM_SYNC_VALUE;
    const int n = 10;
    long *src = (long *)shmem_malloc(n * np() * sizeof(long)),
         *dst = (long *)shmem_calloc(n * np(), sizeof(long));
    for (int i = 0; i < n * np(); i++) src[i] = val(me(), i, 8);
    shmem_barrier_all();
    int odd = np() / 2; /* PEs 1, 3, ... */
    if (me() % 2 == 1) {
        for (int rep = 0; rep < 3; rep++) shmem_barrier(1, 1, odd, pSync);
        shmem_long_sum_to_all(dst, src, n, 1, 1, odd, pWrk, pSync2);
        bool ok = true;
        for (int i = 0; i < n; i++) {
            long want = 0;
            for (int p = 1; p < np(); p += 2) want += val(p, i, 8);
            ok &= dst[i] == want;
        }
        EXPECT_TRUE(ok) << "sum_to_all over the odd PEs";
        shmem_barrier(1, 1, odd, pSync);
        shmem_fcollect64(dst, src, n, 1, 1, odd, pSync);
        ok = true;
        for (int k = 0; k < odd; k++)
            for (int i = 0; i < n; i++) ok &= dst[k * n + i] == val(2 * k + 1, i, 8);
        EXPECT_TRUE(ok) << "fcollect64 over the odd PEs";
        shmem_barrier(1, 1, odd, pSync2);
        shmem_broadcast64(dst, src, n, odd - 1, 1, 1, odd, pSync2);
        ok = true;
        if (me() != 2 * (odd - 1) + 1)
            for (int i = 0; i < n; i++) ok &= dst[i] == val(2 * (odd - 1) + 1, i, 8);
        EXPECT_TRUE(ok) << "broadcast64 over the odd PEs";
    }
    shmem_barrier_all();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        EXPECT_EQ(SHMEM_SYNC_VALUE, pSync[i]) << "pSync left as found";
    /* all PEs, variable-size collect */
    shmem_collect64(dst, src, (size_t)me() + 1, 0, 0, np(), pSync);
    size_t at = 0;
    bool ok = true;
    for (int p = 0; p < np(); p++)
        for (int i = 0; i <= p; i++) ok &= dst[at++] == val(p, i, 8);
    EXPECT_TRUE(ok) << "collect64";
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
}

TEST(Shmem, TeamsMatchSerial)
{
    /* Team of the PEs np-1, np-3, ... (negative stride), and every PE's team split 2-D. */
    int size = (np() + 1) / 2;
    shmem_team_t t = SHMEM_TEAM_INVALID;
    EXPECT_EQ(0, shmem_team_split_strided(SHMEM_TEAM_WORLD, np() - 1, -2, size, nullptr, 0, &t));
    bool member = (np() - 1 - me()) % 2 == 0;
    EXPECT_EQ(member, t != SHMEM_TEAM_INVALID);
    const int n = 20;
    long *src = (long *)shmem_malloc(n * np() * sizeof(long)),
         *dst = (long *)shmem_calloc(n * np(), sizeof(long));
    for (int i = 0; i < n * np(); i++) src[i] = val(me(), i, 11);
    shmem_barrier_all();
    if (t != SHMEM_TEAM_INVALID) {
        int tme = shmem_team_my_pe(t);
        EXPECT_EQ((np() - 1 - me()) / 2, tme);
        EXPECT_EQ(size, shmem_team_n_pes(t));
        EXPECT_EQ(me(), shmem_team_translate_pe(t, tme, SHMEM_TEAM_WORLD));
        EXPECT_EQ(tme, shmem_team_translate_pe(SHMEM_TEAM_WORLD, me(), t));
        EXPECT_EQ(0, shmem_long_sum_reduce(t, dst, src, n));
        bool ok = true;
        for (int i = 0; i < n; i++) {
            long want = 0;
            for (int k = 0; k < size; k++) want += val(np() - 1 - 2 * k, i, 11);
            ok &= dst[i] == want;
        }
        EXPECT_TRUE(ok) << "sum over the team";
        int root = size - 1; /* team PE size-1 is world PE np-1-2(size-1) */
        EXPECT_EQ(0, shmem_long_broadcast(t, dst, src, n, root));
        ok = true;
        for (int i = 0; i < n; i++) ok &= dst[i] == val(np() - 1 - 2 * root, i, 11);
        EXPECT_TRUE(ok) << "broadcast over the team (the root's dest too)";
        EXPECT_EQ(0, shmem_long_alltoall(t, dst, src, 2));
        ok = true;
        for (int k = 0; k < size; k++)
            for (int i = 0; i < 2; i++) ok &= dst[k * 2 + i] == val(np() - 1 - 2 * k, tme * 2 + i, 11);
        EXPECT_TRUE(ok) << "alltoall over the team";
        EXPECT_EQ(0, shmem_team_sync(t));
        /* a context on the team names PEs by team number */
        shmem_ctx_t c;
        EXPECT_EQ(0, shmem_team_create_ctx(t, 0, &c));
        long got = shmem_ctx_long_g(c, &src[3], 0);
        EXPECT_EQ(val(np() - 1, 3, 11), got);
        shmem_ctx_destroy(c);
    }
    shmem_team_destroy(t);
    /* 2-D: rows of 2 */
    shmem_team_t x = SHMEM_TEAM_INVALID, y = SHMEM_TEAM_INVALID;
    EXPECT_EQ(0, shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, nullptr, 0, &x, nullptr, 0, &y));
    EXPECT_EQ(me() % 2, shmem_team_my_pe(x));
    EXPECT_EQ(me() / 2, shmem_team_my_pe(y));
    EXPECT_EQ(0, shmem_long_max_reduce(y, dst, src, n));
    bool ok = true;
    for (int i = 0; i < n; i++) {
        long want = LONG_MIN;
        for (int p = me() % 2; p < np(); p += 2) want = std::max(want, val(p, i, 11));
        ok &= dst[i] == want;
    }
    EXPECT_TRUE(ok) << "max over the column";
    shmem_team_destroy(x);
    shmem_team_destroy(y);
    /* a split naming no PE is an error returned, not the job's end */
    shmem_team_t none;
    EXPECT_NE(0, shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 0, nullptr, 0, &none));
    EXPECT_EQ(SHMEM_TEAM_INVALID, none);
    EXPECT_NE(0, shmemx_last_error(nullptr));
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
}

/* ---- shmem_ptr -------------------------------------------------------------------------------------------
 */

TEST(Shmem, PtrOnSameNode)
{
    long *x = (long *)shmem_malloc(sizeof(long));
    *x = val(me(), 0, 9);
    shmem_barrier_all();
    for (int p = 0; p < np(); p++) {
        long *q = (long *)shmem_ptr(x, p);
        /* comm maps same-node heaps unless KY_PATH_HOST=mpi sends everything through the MPI path */
        const char *ph = getenv("KY_PATH_HOST");
        bool mapped = ky_node_of(p) == ky_node() && !(ph && !strcmp(ph, "mpi") && p != me());
        EXPECT_EQ(mapped, q != nullptr) << "PE " << p;
        if (q) EXPECT_EQ(val(p, 0, 9), *q);
    }
    EXPECT_EQ(&g_counter, shmem_ptr(&g_counter, me()));
    EXPECT_EQ(nullptr, np() > 1 ? shmem_ptr(&g_counter, (me() + 1) % np()) : nullptr)
        << "globals of other PEs";
    shmem_barrier_all();
    shmem_free(x);
}

/* ---- bad input: clear errors naming the PE and the call, nothing done
 * --------------------------------------- */

std::string last_error(int *st)
{
    const char *m = nullptr;
    *st = shmemx_last_error(&m);
    return m ? m : "";
}

TEST(Shmem, BadInput)
{
    int old = shmemx_error_mode(SHMEMX_ERRORS_RETURN);
    long *x = (long *)shmem_calloc(4, sizeof(long));
    long stack_var = 5;
    int st = 0;
    std::string pe_prefix = "rank " + std::to_string(me()) + ": ";

    shmem_long_put(&stack_var, x, 1, 0); /* dest not symmetric */
    std::string m = last_error(&st);
    EXPECT_EQ(KY_ERR_ARG, st);
    EXPECT_NE(std::string::npos, m.find(pe_prefix + "shmem_long_put: dest")) << m;
    EXPECT_NE(std::string::npos, m.find("is not symmetric")) << m;

    shmem_long_p(x, 1, np() + 3); /* PE out of range */
    m = last_error(&st);
    EXPECT_EQ(KY_ERR_ARG, st);
    EXPECT_NE(std::string::npos,
              m.find("shmem_long_p: target PE " + std::to_string(np() + 3) + " is out of range"))
        << m;

    shmem_long_get(&stack_var, x, SIZE_MAX / 4, 0); /* size overflow */
    m = last_error(&st);
    EXPECT_EQ(KY_ERR_ARG, st);
    EXPECT_NE(std::string::npos, m.find("shmem_long_get")) << m;
    EXPECT_NE(std::string::npos, m.find("overflow")) << m;

    shmem_long_put(x + 2, x, (size_t)1 << 40, 0); /* past the end of the heap */
    m = last_error(&st);
    EXPECT_NE(0, st);
    EXPECT_NE(std::string::npos, m.find("shmem_long_put")) << m;

    shmem_long_atomic_add((long *)((char *)x + 1), 1, 0); /* misaligned */
    m = last_error(&st);
    EXPECT_EQ(KY_ERR_ARG, st);
    EXPECT_NE(std::string::npos, m.find("shmem_long_atomic_add: dest")) << m;

    EXPECT_EQ(-1, shmem_long_sum_reduce((shmem_team_t)0x1234, x, x, 1)); /* no such team */
    m = last_error(&st);
    EXPECT_EQ(KY_ERR_ARG, st);
    EXPECT_NE(std::string::npos, m.find("shmem_long_sum_reduce: 0x1234 is not a team of this PE")) << m;

    if (np() > 1) { /* an active set without this PE */
        static long ps[SHMEM_BARRIER_SYNC_SIZE];
        shmem_barrier(me() == 0 ? 1 : 0, 0, 1, ps);
        m = last_error(&st);
        EXPECT_NE(std::string::npos,
                  m.find("this PE (" + std::to_string(me()) + ") is not in the active set"))
            << m;
    }

    /* PEs asking for different sizes: every PE is told, nothing is allocated */
    void *p = shmem_malloc(64 + (size_t)me());
    m = last_error(&st);
    if (np() > 1) {
        EXPECT_EQ(nullptr, p);
        EXPECT_NE(std::string::npos, m.find("shmem_malloc: PEs passed different")) << m;
    }
    EXPECT_EQ(0, shmemx_last_error(nullptr)) << "cleared by reading";
    /* everything still works */
    shmem_long_p(x, 42, (me() + 1) % np());
    shmem_barrier_all();
    EXPECT_EQ(42, x[0]);
    shmem_barrier_all();
    shmem_free(x);
    shmemx_error_mode(old);
}

}  // namespace
