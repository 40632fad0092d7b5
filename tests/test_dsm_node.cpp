/* Node-shared mode (ky_dsm_node_mode): one copy of every page on the node, a serial phase in which a rank's
 * stores stay its own until the next synchronisation, and a parallel phase with no isolation. The same
 * tests run with the mode off (KY_NODE_SPLIT=rank, KY_DSM_NODE_SHARED=0, KY_DSM_DIRECT=0), where the page
 * protocol gives the reference behaviour; only the parallel phase's "seen at once" is the mode's own. The
 * references are closed formulas of (rank, index) and serial recomputations. */
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kyt.h"

namespace {

int active = -1;         /* the mode as ky_dsm_node_mode reported it */
int mode_status = KY_OK; /* and its status, with its message */
std::string mode_error;

bool expect_active()
{
    return !kyt::node_split_rank() && kyt::config("KY_DSM_NODE_SHARED") != "0" &&
           kyt::config("KY_DSM_DIRECT") != "0";
}

/* The mode is asked for once, before any allocation (the first test of the program). */
class NodeMode : public ::testing::Environment {
  public:
    void SetUp() override
    {
        mode_status = ky_dsm_node_mode(1, &active);
        if (mode_status != KY_OK) mode_error = ky_last_error();
    }
};
::testing::Environment *const node_env = ::testing::AddGlobalTestEnvironment(new NodeMode);

/* Every test here needs the global address space. */
class DsmNode : public ::testing::Test {
  protected:
    void SetUp() override
    {
        if (!kyt::progress_thread())
            GTEST_SKIP() << "the global address space needs the progress thread (KY_PROGRESS_THREAD=0 is "
                            "set); DsmNodeNoProgress.ModeRefusedWithReason checks the refusal";
    }
};

/* Without the progress thread there is no global space: the mode is refused with the reason, not left off
 * silently. */
TEST(DsmNodeNoProgress, ModeRefusedWithReason)
{
    if (kyt::progress_thread()) GTEST_SKIP() << "the progress thread runs here";
    EXPECT_NE(KY_OK, mode_status);
    EXPECT_EQ(0, active);
    EXPECT_NE(std::string::npos, mode_error.find("progress thread")) << mode_error;
}

size_t page()
{
    return ky_page_size();
}

using kyt::run_threads;

TEST_F(DsmNode, ModeAsExpected)
{
    EXPECT_EQ(expect_active() ? 1 : 0, active);
    void *p = kyt::galloc(100, 0);
    ASSERT_TRUE(p);
    int again = -1;
    EXPECT_EQ(KY_ERR_STATE, ky_dsm_node_mode(1, &again)) << "asked for after an allocation";
    EXPECT_EQ(0, again);
    EXPECT_EQ(KY_ERR_ARG, ky_dsm_phase(2));
    EXPECT_EQ(KY_ERR_ARG, ky_dsm_phase(-1));
    KYT_EXPECT_OK(ky_free(p));
}

/* Every rank runs `x = x + 1` and writes its own slot of an array that straddles pages: before the
 * barrier it sees its own writes and nobody else's; after it, every slot, and x == 1 (not nranks). */
TEST_F(DsmNode, SerialPhaseIsolates)
{
    int n = kyt::nranks(), me = kyt::rank(), R = kyt::scaled(20, 4);
    size_t len = 3 * page() / 8 + 5; /* longs: not a page multiple */
    long *x = (long *)kyt::galloc(sizeof(long), n - 1), *a = (long *)kyt::galloc(len * sizeof(long), 0);
    ASSERT_TRUE(x && a);
    KYT_EXPECT_OK(ky_barrier());
    bool ok = true;
    for (int r = 0; r < R; r++) {
        long before = *x;
        *x = *x + 1;
        ok &= *x == before + 1;
        for (size_t i = (size_t)me; i < len; i += (size_t)n) a[i] = (long)(r * 1000003 + (long)i);
        for (size_t i = 0; i < len && ok; i++) {
            long want = (int)(i % (size_t)n) == me ? (long)(r * 1000003 + (long)i)
                        : r == 0                   ? 0
                                                   : (long)((r - 1) * 1000003 + (long)i);
            if (a[i] != want) {
                ADD_FAILURE() << "round " << r << " a[" << i << "] = " << a[i] << " before the barrier, want "
                              << want;
                ok = false;
            }
        }
        KYT_EXPECT_OK(ky_barrier());
        ok &= *x == before + 1;
        for (size_t i = 0; i < len && ok; i++)
            if (a[i] != (long)(r * 1000003 + (long)i)) {
                ADD_FAILURE() << "round " << r << " a[" << i << "] = " << a[i] << " after the barrier";
                ok = false;
            }
        KYT_EXPECT_OK(ky_barrier());
    }
    EXPECT_EQ((long)R, *x);
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
    KYT_EXPECT_OK(ky_free(x));
}

/* NPB's serial set-up: an in-place prefix sum run by every rank on the same array gives one prefix sum. */
TEST_F(DsmNode, SerialReadModifyWriteOnce)
{
    size_t len = 2 * page() / sizeof(int) + 77;
    int *v = (int *)kyt::galloc(len * sizeof(int), kyt::nranks() - 1);
    ASSERT_TRUE(v);
    for (size_t i = 0; i < len; i++) v[i] = (int)(i % 7);
    KYT_EXPECT_OK(ky_barrier());
    for (size_t i = 1; i < len; i++) v[i] += v[i - 1];
    KYT_EXPECT_OK(ky_barrier());
    long sum = 0;
    bool ok = true;
    for (size_t i = 0; i < len && ok; i++) {
        sum += (long)(i % 7);
        if (v[i] != sum) {
            ADD_FAILURE() << "v[" << i << "] = " << v[i] << ", want " << sum;
            ok = false;
        }
    }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(v));
}

/* ky_sync_drop after a serial phase: every rank but the home stores into a page homed at rank 0. The page
 * protocol (mode off) drops those stores, since rank 0 owns the elements; node-shared mode merges them, as
 * ky_barrier does (dsm.h): there is no cached copy to discard. The home's own store survives both. */
TEST_F(DsmNode, SyncDropAfterSerialStores)
{
    int n = kyt::nranks(), me = kyt::rank();
    long *a = (long *)kyt::galloc((size_t)n * sizeof(long), 0);
    ASSERT_TRUE(a);
    KYT_EXPECT_OK(ky_barrier());
    a[me] = 100 + me;
    KYT_EXPECT_OK(ky_sync_drop());
    bool ok = true;
    for (int r = 0; r < n; r++) {
        long want = r == 0 || active == 1 ? 100 + r : 0;
        if (a[r] != want) {
            ADD_FAILURE() << "a[" << r << "] = " << a[r] << " after ky_sync_drop, want " << want
                          << (active == 1 ? " (node-shared: merged)" : " (protocol: dropped)");
            ok = false;
        }
    }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_free(a));
}

/* Parallel phase: 4 threads per rank write disjoint elements; after a barrier everyone sees all, and after
 * the return to a serial phase too. */
TEST_F(DsmNode, ParallelPhaseDisjointWrites)
{
    int n = kyt::nranks(), me = kyt::rank(), T = 4, R = kyt::scaled(10, 3);
    size_t len = 5 * page() / 8 + 3;
    double *a = (double *)kyt::galloc(len * sizeof(double), 0);
    ASSERT_TRUE(a);
    KYT_EXPECT_OK(ky_dsm_phase(1));
    bool ok = true;
    for (int r = 0; r < R; r++) {
        run_threads(T, [&](int t) {
            for (size_t i = (size_t)(me * T + t); i < len; i += (size_t)(n * T)) a[i] = r + 0.5 * (double)i;
        });
        KYT_EXPECT_OK(ky_barrier());
        for (size_t i = 0; i < len && ok; i++)
            if (a[i] != r + 0.5 * (double)i) {
                ADD_FAILURE() << "round " << r << " a[" << i << "] = " << a[i];
                ok = false;
            }
        KYT_EXPECT_OK(ky_barrier());
    }
    KYT_EXPECT_OK(ky_dsm_phase(0));
    for (size_t i = 0; i < len && ok; i++) ok = a[i] == R - 1 + 0.5 * (double)i;
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

/* The node barrier lets nobody through before every rank has arrived, barrier after barrier: each round every
 * rank stores the round into its slot of one of two arrays (by parity) and, after one barrier, finds every
 * slot at that round; a rank can store into the same array again only after the next barrier, which needs
 * every rank to have finished reading. Thousands of back-to-back barriers, as kycc's NPB SP passes them. */
TEST_F(DsmNode, BackToBackBarriersLetNobodyThroughEarly)
{
    int n = kyt::nranks(), me = kyt::rank(), R = kyt::scaled(3000, 300);
    long *a = (long *)kyt::galloc(2 * (size_t)n * 16 * sizeof(long), 0); /* a slot per rank, 128 B apart */
    ASSERT_TRUE(a);
    KYT_EXPECT_OK(ky_dsm_phase(1));
    int bad = 0;
    for (int r = 0; r < R && !bad; r++) {
        long *half = a + (size_t)(r & 1) * n * 16;
        __atomic_store_n(&half[me * 16], (long)r, __ATOMIC_RELAXED);
        KYT_EXPECT_OK(ky_barrier());
        for (int q = 0; q < n; q++)
            if (__atomic_load_n(&half[q * 16], __ATOMIC_RELAXED) != r) {
                ADD_FAILURE() << "round " << r << ": rank " << q << "'s slot holds "
                              << __atomic_load_n(&half[q * 16], __ATOMIC_RELAXED);
                bad = 1;
                break;
            }
    }
    EXPECT_TRUE(kyt::all(!bad));
    KYT_EXPECT_OK(ky_dsm_phase(0));
    KYT_EXPECT_OK(ky_free(a));
}

/* Pages stored to in a parallel phase are isolated again in the next serial phase: every rank's `a[i] += 1`
 * adds one, round after round (each serial phase after a parallel one that wrote the same pages). */
TEST_F(DsmNode, SerialAfterParallelIsolates)
{
    int n = kyt::nranks(), me = kyt::rank(), R = kyt::scaled(12, 4);
    size_t len = 3 * page() / 8 + 11;
    long *a = (long *)kyt::galloc(len * sizeof(long), 0);
    ASSERT_TRUE(a);
    bool ok = true;
    for (int r = 0; r < R && ok; r++) {
        KYT_EXPECT_OK(ky_dsm_phase(1));
        for (size_t i = (size_t)me; i < len; i += (size_t)n) a[i] = 10L * r;
        KYT_EXPECT_OK(ky_dsm_phase(0));
        for (size_t i = 0; i < len; i++) a[i] += 1;
        KYT_EXPECT_OK(ky_barrier());
        for (size_t i = 0; i < len && ok; i++)
            if (a[i] != 10L * r + 1) {
                ADD_FAILURE() << "round " << r << " a[" << i << "] = " << a[i] << ", want " << 10L * r + 1;
                ok = false;
            }
    }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

/* Only with one copy: in a parallel phase a store is seen by the other ranks without a synchronisation (rank
 * 0 writes, then counts a flag up; the others wait for the flag through ky_fetch_add and read). */
TEST_F(DsmNode, ParallelPhaseSeenAtOnce)
{
    if (!kyt::all(active == 1)) GTEST_SKIP() << "node-shared mode is off here";
    int me = kyt::rank();
    size_t len = 2 * page() / 8 + 9;
    long *d = (long *)kyt::galloc(len * sizeof(long), kyt::nranks() - 1), *flag = (long *)kyt::galloc(8, 0);
    ASSERT_TRUE(d && flag);
    KYT_EXPECT_OK(ky_dsm_phase(1));
    bool ok = true;
    if (me == 0) {
        for (size_t i = 0; i < len; i++) d[i] = (long)(i * 3 + 1);
        ok = kyt::fadd(flag, 1) == 0;
    } else {
        double t0 = MPI_Wtime();
        while (kyt::fadd(flag, 0) == 0 && MPI_Wtime() - t0 < 30) sched_yield();
        for (size_t i = 0; i < len && ok; i++)
            if (d[i] != (long)(i * 3 + 1)) {
                ADD_FAILURE() << "d[" << i << "] = " << d[i] << " after the flag";
                ok = false;
            }
    }
    KYT_EXPECT_OK(ky_dsm_phase(0));
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(flag));
    KYT_EXPECT_OK(ky_free(d));
}

/* Atomics and locks, serial and parallel phases, several threads: nothing lost. */
TEST_F(DsmNode, AtomicsAndLocksLoseNothing)
{
    int n = kyt::nranks(), T = 3, K = kyt::scaled(300, 40);
    long *c = (long *)kyt::galloc(2 * sizeof(long), n - 1);
    ASSERT_TRUE(c);
    KYT_EXPECT_OK(ky_barrier());
    std::atomic<int> bad{0};
    for (int phase = 0; phase < 2; phase++) {
        KYT_EXPECT_OK(ky_dsm_phase(phase));
        run_threads(T, [&](int t) {
            for (int k = 0; k < K; k++) {
                if (t == 0) {
                    if (ky_lock(7) != KY_OK) bad++;
                    c[1] = c[1] + 1;
                    if (ky_unlock(7) != KY_OK) bad++;
                } else if (kyt::fadd(&c[0], 1) == LONG_MIN) {
                    bad++;
                }
            }
        });
        KYT_EXPECT_OK(ky_barrier());
        EXPECT_EQ((long)(phase + 1) * n * K * (T - 1), c[0]) << "phase " << phase;
        EXPECT_EQ((long)(phase + 1) * n * K, c[1]) << "phase " << phase;
        EXPECT_EQ(0, bad.load());
    }
    KYT_EXPECT_OK(ky_dsm_phase(0));
    EXPECT_TRUE(kyt::all(c[0] == 2L * n * K * (T - 1) && c[1] == 2L * n * K && bad == 0));
    KYT_EXPECT_OK(ky_free(c));
}

/* Serial-phase stores and atomics on one page at once, from every rank: thread 0 stores its own slot over and
 * over (each store after a merge makes the page private again), thread 1 adds to the shared counter (each
 * add merges this rank's private pages first). A private copy that was taken later than its twin would
 * carry other ranks' adds made in between, and its merge would write them back over the adds that followed
 * (lost counts). */
TEST_F(DsmNode, AtomicsBesideSerialStores)
{
    int n = kyt::nranks(), me = kyt::rank(), R = kyt::scaled(20, 4), M = kyt::scaled(400, 50);
    long *c = (long *)kyt::galloc((size_t)(n + 1) * sizeof(long), n - 1);
    ASSERT_TRUE(c);
    KYT_EXPECT_OK(ky_barrier());
    std::atomic<int> bad{0};
    for (int r = 0; r < R; r++) {
        std::atomic<int> adding{1};
        run_threads(2, [&](int t) {
            if (t == 0) {
                long v = 0;
                while (adding.load()) c[1 + me] = ++v + (long)r * 1000000;
            } else {
                for (int k = 0; k < M; k++)
                    if (kyt::fadd(&c[0], 1) == LONG_MIN) bad++;
                adding = 0;
            }
        });
        KYT_EXPECT_OK(ky_barrier());
    }
    EXPECT_EQ((long)R * n * M, c[0]);
    EXPECT_EQ(0, bad.load());
    EXPECT_TRUE(kyt::all(c[0] == (long)R * n * M && bad == 0));
    KYT_EXPECT_OK(ky_free(c));
}

/* Local allocations of other ranks: written by their home in a serial phase, read by everyone after a barrier
 * (mapped on first touch, or preloaded), freed by the home; a new collective allocation is zeros. */
TEST_F(DsmNode, LocalBlocksAndReuse)
{
    int n = kyt::nranks(), me = kyt::rank();
    size_t bytes = page() + 1234;
    void **slot = (void **)kyt::galloc((size_t)n * sizeof(void *), 0);
    ASSERT_TRUE(slot);
    char *mine = (char *)ky_alloc_local(bytes);
    ASSERT_TRUE(mine);
    kyt::fill_pattern(mine, bytes, 40 + (uint64_t)me);
    slot[me] = mine;
    KYT_EXPECT_OK(ky_barrier());
    bool ok = true;
    for (int r = 0; r < n; r++) {
        const char *p = (const char *)slot[r];
        if (r % 2) {
            size_t glb[1] = {bytes}, reg[1] = {bytes};
            KYT_EXPECT_OK(ky_preload_array((void *)p, glb, reg, 1, 1, 0));
        }
        size_t at = kyt::check_pattern(p, bytes, 40 + (uint64_t)r);
        if (at != bytes)
            ADD_FAILURE() << "rank " << r << "'s block differs from byte " << at << " of " << bytes;
        ok &= at == bytes;
    }
    KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_free(mine));
    KYT_EXPECT_OK(ky_free(slot));
    size_t len = 3 * page() + 5;
    char *z = (char *)kyt::galloc(len, n - 1);
    ASSERT_TRUE(z);
    memset(z, 0x5a, len);
    KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_free(z));
    z = (char *)kyt::galloc(len, n - 1);
    ASSERT_TRUE(z);
    size_t nz = kyt::check_byte(z, len, 0);
    EXPECT_EQ(len, nz) << "a byte not zero in a new allocation";
    EXPECT_TRUE(kyt::all(ok && nz == len));
    KYT_EXPECT_OK(ky_free(z));
}

/* Several threads of a rank store to different pages in a serial phase at once (each page made private
 * under its own lock), then the barrier merges all of them. */
TEST_F(DsmNode, SerialStoresFromThreads)
{
    int n = kyt::nranks(), me = kyt::rank(), T = 4;
    size_t per = page() / 4 + 3, len = per * (size_t)(T * n); /* ints */
    int *a = (int *)kyt::galloc(len * sizeof(int), 0);
    ASSERT_TRUE(a);
    KYT_EXPECT_OK(ky_barrier());
    run_threads(T, [&](int t) {
        size_t b = (size_t)(me * T + t) * per;
        for (size_t i = 0; i < per; i++) a[b + i] = (int)(b + i) * 7 + 1;
    });
    KYT_EXPECT_OK(ky_barrier());
    bool ok = true;
    for (size_t i = 0; i < len && ok; i++)
        if (a[i] != (int)i * 7 + 1) {
            ADD_FAILURE() << "a[" << i << "] = " << a[i];
            ok = false;
        }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

}  // namespace
