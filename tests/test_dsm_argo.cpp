/* ArgoDSM's tests (github.com/etascale/argodsm, tests/lock.cpp, barrier.cpp, allocators.cpp, prefetch.cpp,
 * omp.cpp, backend.cpp) rewritten for Kyoyu's global address space: the same scenarios on Kyoyu's calls,
 * each test naming the ArgoDSM test it follows. Written fresh, not copied; where Kyoyu's model differs
 * (homes per page, ky_barrier made by one thread per rank, no per-node MCS or cohort locks) the comment says
 * what was changed.
 *
 * Mapping: argo::conew_ / collective_alloc -> ky_alloc, ky_mapalloc; argo::new_ / dynamic_alloc ->
 * ky_alloc_local; argo::barrier -> ky_barrier (one thread per rank, the others waiting: RankTeam below, or
 * OpenMP's barrier + master); global_tas_lock, mcs_lock, cohort_lock -> ky_lock / ky_unlock / ky_trylock;
 * atomic::compare_exchange and fetch_add -> ky_compare_swap (4 and 8 bytes) and ky_fetch_add; prefetching ->
 * ky_preload_array.
 *
 * Without a progress thread (KY_PROGRESS_THREAD=0) the global address space is refused at ky_init: one test
 * checks that its calls fail with KY_ERR_UNSUPPORTED and a reason, the rest skip. */
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "kyt.h"

namespace {

size_t page()
{
    return ky_page_size();
}

/* Every rank got the same pointer. */
bool same_everywhere(const void *p)
{
    return kyt::max((uint64_t)(uintptr_t)p) == (uint64_t)(uintptr_t)p &&
           kyt::max(~(uint64_t)(uintptr_t)p) == ~(uint64_t)(uintptr_t)p;
}

template <class F>
void run_threads(int nthreads, F f)
{
    std::vector<std::thread> th;
    for (int t = 0; t < nthreads; t++) th.emplace_back(f, t);
    for (auto &x : th) x.join();
}

/* The threads of one rank meeting: the last one to arrive makes the rank's collective call (ky_barrier) while
 * the others wait, then all go on with its status (ArgoDSM's argo::barrier(nthreads)). */
class RankTeam {
  public:
    explicit RankTeam(int nthreads) : n_(nthreads) {}
    int arrive(int (*collective)(void))
    {
        std::unique_lock<std::mutex> lk(m_);
        unsigned long gen = gen_;
        if (++arrived_ == n_) {
            status_ = collective ? collective() : KY_OK;
            arrived_ = 0;
            gen_++;
            cv_.notify_all();
        } else {
            cv_.wait(lk, [&] { return gen_ != gen; });
        }
        return status_;
    }

  private:
    std::mutex m_;
    std::condition_variable cv_;
    int n_, arrived_ = 0, status_ = KY_OK;
    unsigned long gen_ = 0;
};

/* Every test here needs the global address space. */
class DsmArgoBase : public ::testing::Test {
  protected:
    void SetUp() override
    {
        if (!kyt::progress_thread())
            GTEST_SKIP() << "the global address space needs the progress thread (KY_PROGRESS_THREAD=0 is "
                            "set); DsmArgoNoProgress.CallsRefusedWithReason checks the refusal";
    }
};
class DsmArgo : public DsmArgoBase {};

/* Names of the parametrized cases: bytes4, t8, ... */
struct ParamName {
    const char *prefix;
    std::string operator()(const ::testing::TestParamInfo<int> &i) const
    {
        return prefix + std::to_string(i.param);
    }
};

/* ---- locks (ArgoDSM tests/lock.cpp) ------------------------------------------------------------------ */

/* LockTest.TAS_trylock_all: every rank tries the lock once; the ranks that got it increment a counter and
 * mark themselves. At most every rank, at least one (the lock is only refused while somebody holds it), and
 * the counter equals the marks. */
TEST_F(DsmArgo, TrylockAll)
{
    int n = kyt::nranks(), me = kyt::rank();
    long *counter = (long *)kyt::galloc(sizeof(long) * (1 + n), 0);
    ASSERT_TRUE(counter);
    long *did = counter + 1;
    KYT_EXPECT_OK(ky_barrier());
    int st = ky_trylock(500);
    bool ok = st == KY_OK || st == KY_PENDING;
    EXPECT_TRUE(ok) << "ky_trylock -> " << st << ": " << ky_last_error();
    if (st == KY_OK) {
        (*counter)++;
        did[me] = 1;
        KYT_EXPECT_OK(ky_unlock(500));
    }
    KYT_EXPECT_OK(ky_barrier());
    long marks = 0;
    for (int r = 0; r < n; r++) marks += did[r];
    ok = ok && *counter >= 1 && *counter <= n && *counter == marks;
    EXPECT_TRUE(kyt::all(ok)) << "counter " << *counter << ", marks " << marks << ", ranks " << n;
    KYT_EXPECT_OK(ky_free(counter));
}

/* LockTest.TAS_lock_custom_barrier: a barrier made of a lock and a counter. Every rank increments under the
 * lock, then polls (reading under the lock) until all have. ArgoDSM gives up after 100000 polls; here a
 * minute, and giving up fails. */
TEST_F(DsmArgo, LockCustomBarrier)
{
    int n = kyt::nranks();
    long *counter = (long *)kyt::galloc(sizeof(long), n - 1);
    ASSERT_TRUE(counter);
    KYT_EXPECT_OK(ky_barrier());
    int errors = 0;
    errors += ky_lock(900) != KY_OK;
    (*counter)++;
    errors += ky_unlock(900) != KY_OK;
    long seen = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    do {
        errors += ky_lock(900) != KY_OK;
        seen = *counter;
        errors += ky_unlock(900) != KY_OK;
        if (seen != n) std::this_thread::sleep_for(std::chrono::microseconds(200));
    } while (seen != n && std::chrono::steady_clock::now() < deadline);
    EXPECT_EQ(n, seen) << "the lock-and-counter barrier did not complete within 60 s";
    EXPECT_EQ(0, errors);
    KYT_EXPECT_OK(ky_barrier());
    EXPECT_TRUE(kyt::all(seen == n && errors == 0 && *counter == n));
    KYT_EXPECT_OK(ky_free(counter));
}

/* LockTest.StressMCSMultipleLocks, with global locks: 16 threads per rank take lock 100 + t % 4 and then
 * lock 200 around an increment of a global counter. Every increment must survive. */
TEST_F(DsmArgo, StressMultipleLocks)
{
    int n = kyt::nranks(), T = 16, iters = kyt::scaled(1000, 20);
    long *counter = (long *)kyt::galloc(sizeof(long), 0);
    ASSERT_TRUE(counter);
    KYT_EXPECT_OK(ky_barrier());
    std::atomic<int> errors{0};
    run_threads(T, [&](int t) {
        for (int i = 0; i < iters; i++) {
            if (ky_lock(100 + t % 4) != KY_OK) errors++;
            if (ky_lock(200) != KY_OK) errors++;
            (*counter)++;
            if (ky_unlock(200) != KY_OK) errors++;
            if (ky_unlock(100 + t % 4) != KY_OK) errors++;
        }
    });
    KYT_EXPECT_OK(ky_barrier());
    long want = (long)T * iters * n, got = *counter;
    EXPECT_EQ(want, got) << (want - got) << " increments lost (" << T << " threads x " << iters << " x " << n
                         << " ranks)";
    EXPECT_EQ(0, errors.load());
    EXPECT_TRUE(kyt::all(got == want && errors == 0));
    KYT_EXPECT_OK(ky_free(counter));
}

/* LockTest.StressCohortLock: 16 threads per rank, one global lock around the increment. */
TEST_F(DsmArgo, StressOneLock)
{
    int n = kyt::nranks(), T = 16, iters = kyt::scaled(500, 10);
    long *counter = (long *)kyt::galloc(sizeof(long), n - 1);
    ASSERT_TRUE(counter);
    KYT_EXPECT_OK(ky_barrier());
    std::atomic<int> errors{0};
    run_threads(T, [&](int) {
        for (int i = 0; i < iters; i++) {
            if (ky_lock(300) != KY_OK) errors++;
            (*counter)++;
            if (ky_unlock(300) != KY_OK) errors++;
        }
    });
    KYT_EXPECT_OK(ky_barrier());
    long want = (long)T * iters * n, got = *counter;
    EXPECT_EQ(want, got) << (want - got) << " increments lost";
    EXPECT_TRUE(kyt::all(got == want && errors == 0));
    KYT_EXPECT_OK(ky_free(counter));
}

/* Not in ArgoDSM; the smallest case of StressMultipleLocks losing updates: per rank, `workers` threads
 * increment under lock 1 while `siblings` threads lock and unlock ids of their own and touch no memory. */
void sibling_locks(int workers, int siblings, int iters)
{
    int n = kyt::nranks(), me = kyt::rank();
    long *ctr = (long *)kyt::galloc(sizeof(long), 0);
    ASSERT_TRUE(ctr);
    KYT_EXPECT_OK(ky_barrier());
    std::atomic<int> errors{0}, working{workers};
    std::atomic<long> sibling_rounds{0};
    run_threads(workers + siblings, [&](int t) {
        if (t < workers) {
            for (int i = 0; i < iters; i++) {
                if (ky_lock(1) != KY_OK) errors++;
                (*ctr)++;
                if (ky_unlock(1) != KY_OK) errors++;
            }
            working--;
            return;
        }
        int id = 1000 + 32 * me + (t - workers); /* this thread's own lock */
        while (working > 0) {
            if (ky_lock(id) != KY_OK) errors++;
            if (ky_unlock(id) != KY_OK) errors++;
            sibling_rounds++;
        }
    });
    KYT_EXPECT_OK(ky_barrier());
    long want = (long)workers * iters * n, got = *ctr;
    EXPECT_EQ(want, got) << (want - got) << " increments lost; " << workers << " worker(s) and " << siblings
                         << " sibling(s) per rank, siblings locked " << sibling_rounds.load()
                         << " times here";
    EXPECT_TRUE(kyt::all(got == want && errors == 0));
    KYT_EXPECT_OK(ky_free(ctr));
}

TEST_F(DsmArgo, SiblingThreadsHoldOtherLocks)
{
    sibling_locks(1, 3, kyt::scaled(3000, 300));
}
TEST_F(DsmArgo, SiblingThreadsHoldOtherLocksMany)
{
    sibling_locks(8, 8, kyt::scaled(200, 20));
}

/* LockTest.TAS_trylock_all seen from one rank: a lock held by a thread of this rank or by another rank is
 * refused (KY_PENDING) to everybody else, and granted once released. */
TEST_F(DsmArgo, TrylockSeesHolders)
{
    int me = kyt::rank(), own = 700 + me, st_sib = 99, st_after = 99;
    KYT_EXPECT_OK(ky_lock(own));
    run_threads(1, [&](int) { st_sib = ky_trylock(own); });
    KYT_EXPECT_OK(ky_unlock(own));
    run_threads(1, [&](int) { /* the release may still be on its way to the lock's manager: retry */
                              auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
                              while ((st_after = ky_trylock(own)) == KY_PENDING &&
                                     std::chrono::steady_clock::now() < deadline)
                                  std::this_thread::sleep_for(std::chrono::microseconds(100));
                              if (st_after == KY_OK) st_after = ky_unlock(own) == KY_OK ? KY_OK : 98;
    });
    EXPECT_EQ(KY_PENDING, st_sib) << "a sibling thread got a lock its rank holds";
    EXPECT_EQ(KY_OK, st_after) << "a free lock was refused: " << ky_last_error();
    /* across ranks: rank 0 holds lock 800 while the others try */
    if (me == 0) KYT_EXPECT_OK(ky_lock(800));
    ky_comm_barrier();
    int st_remote = me == 0 ? KY_PENDING : ky_trylock(800);
    ky_comm_barrier();
    if (me == 0) KYT_EXPECT_OK(ky_unlock(800));
    ky_comm_barrier();
    EXPECT_EQ(KY_PENDING, st_remote) << "rank " << me << " got lock 800 while rank 0 held it";
    /* released: every other rank gets it in turn (the release may still be travelling: retry) */
    bool got = me == 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!got && std::chrono::steady_clock::now() < deadline) {
        int st = ky_trylock(800);
        if (st == KY_OK) {
            got = true;
            KYT_EXPECT_OK(ky_unlock(800));
        } else if (st != KY_PENDING) {
            ADD_FAILURE() << "ky_trylock -> " << st << ": " << ky_last_error();
            break;
        } else {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    }
    EXPECT_TRUE(kyt::all(got && st_sib == KY_PENDING && st_after == KY_OK && st_remote == KY_PENDING));
}

/* A spin lock made of ky_trylock (the global_tas_lock of ArgoDSM's LockTest, here over Kyoyu's lock table):
 * 4 threads per rank retry until granted, then increment. */
TEST_F(DsmArgo, TrylockSpinLock)
{
    int n = kyt::nranks(), T = 4, iters = kyt::scaled(300, 20);
    long *counter = (long *)kyt::galloc(sizeof(long), 0);
    ASSERT_TRUE(counter);
    KYT_EXPECT_OK(ky_barrier());
    std::atomic<int> errors{0};
    std::atomic<long> refused{0};
    run_threads(T, [&](int) {
        for (int i = 0; i < iters; i++) {
            int st;
            while ((st = ky_trylock(600)) == KY_PENDING) {
                refused++;
                std::this_thread::yield();
            }
            if (st != KY_OK) {
                errors++;
                continue;
            }
            (*counter)++;
            if (ky_unlock(600) != KY_OK) errors++;
        }
    });
    KYT_EXPECT_OK(ky_barrier());
    long want = (long)T * iters * n, got = *counter;
    EXPECT_EQ(want, got) << (want - got) << " increments lost (" << refused.load() << " refusals here)";
    EXPECT_EQ(0, errors.load()) << ky_last_error();
    EXPECT_TRUE(kyt::all(got == want && errors == 0));
    KYT_EXPECT_OK(ky_free(counter));
}

/* ---- compare-and-swap (ArgoDSM tests/backend.cpp, atomics) --------------------------------------------- */

class DsmArgoCas : public DsmArgoBase, public ::testing::WithParamInterface<int> {};

uint64_t mask(size_t w)
{
    return w == 4 ? 0xFFFFFFFFull : ~0ull;
}

/* The word's value, read at its home by a compare-and-swap that changes nothing. */
uint64_t cas_read(void *p, size_t w, std::atomic<int> &errors)
{
    uint64_t old = 0;
    if (ky_compare_swap(p, w, 0, 0, &old) != KY_OK) errors++;
    return old;
}

/* A plain store made of compare-and-swaps: a read-modify-write that is only correct under a lock. */
void cas_store(void *p, size_t w, uint64_t v, std::atomic<int> &errors)
{
    uint64_t cur = cas_read(p, w, errors);
    for (int tries = 0; tries < 100000; tries++) {
        uint64_t old = 0;
        if (ky_compare_swap(p, w, cur, v, &old) != KY_OK) break;
        if (old == cur) return;
        cur = old;
    }
    errors++;
}

uint64_t plain_load(const void *p, size_t w)
{
    if (w == 4) return *(const volatile uint32_t *)p;
    return *(const volatile uint64_t *)p;
}
void plain_store(void *p, size_t w, uint64_t v)
{
    if (w == 4)
        *(volatile uint32_t *)p = (uint32_t)v;
    else
        *(volatile uint64_t *)p = v;
}

/* backendTest.atomicCASAtomicity: every thread of every rank swaps 0 for its own id once; exactly one
 * succeeds, every other sees the winner's id, and after ky_barrier a plain load sees it too. Ids use the
 * word's top bit (4 bytes: no sign extension of the old value). */
TEST_P(DsmArgoCas, OneWinner)
{
    size_t w = (size_t)GetParam();
    int me = kyt::rank(), T = 4;
    char *mem = (char *)kyt::galloc(page(), 0);
    ASSERT_TRUE(mem);
    void *flag = mem + 3 * w;
    KYT_EXPECT_OK(ky_barrier());
    uint64_t top = w == 4 ? 0x80000000ull : 0x8000000000000000ull;
    std::vector<uint64_t> olds(T);
    std::atomic<int> errors{0};
    run_threads(T, [&](int t) {
        uint64_t id = top | (uint64_t)(me * T + t + 1), old = 12345;
        if (ky_compare_swap(flag, w, 0, id, &old) != KY_OK) errors++;
        olds[t] = old;
    });
    uint64_t won = 0, wins = 0;
    for (int t = 0; t < T; t++)
        if (olds[t] == 0) won = top | (uint64_t)(me * T + t + 1), wins++;
    uint64_t all_wins = kyt::sum(wins), winner = kyt::sum(won);
    bool ok = errors == 0 && all_wins == 1;
    for (int t = 0; t < T; t++) ok = ok && (olds[t] == 0 || olds[t] == winner);
    KYT_EXPECT_OK(ky_barrier());
    ok = ok && plain_load(flag, w) == winner && kyt::check_byte(mem, 3 * w, 0) == 3 * w &&
         kyt::check_byte(mem + 4 * w, 8, 0) == 8; /* the bytes around the word untouched */
    EXPECT_TRUE(kyt::all(ok)) << "winners " << all_wins << ", winner id " << std::hex << winner << ", word "
                              << plain_load(flag, w) << ", errors " << std::dec << errors.load();
    KYT_EXPECT_OK(ky_free(mem));
}

/* backendTest.atomicCASAtomicityStress and atomicFetchAddUInt: a counter incremented by compare-and-swap
 * loops from 4 threads per rank (8 bytes: half of them by ky_fetch_add on the same word), starting near the
 * top of the word; every old value is seen exactly once and the total is exact. */
TEST_P(DsmArgoCas, CounterByCasLoop)
{
    size_t w = (size_t)GetParam();
    int n = kyt::nranks(), me = kyt::rank(), T = 4, K = kyt::scaled(250, 20);
    uint64_t total = (uint64_t)n * T * K;
    uint64_t base = w == 4 ? 0xFFFFFFFFull - total : (1ull << 40) + 7;
    char *mem = (char *)kyt::galloc(page(), n - 1);
    ASSERT_TRUE(mem);
    void *ctr = mem + w;
    if (me == n - 1) plain_store(ctr, w, base); /* a plain store before the barrier: the home's value */
    KYT_EXPECT_OK(ky_barrier());
    std::vector<unsigned long long> mine((size_t)T * K);
    std::atomic<int> errors{0};
    run_threads(T, [&](int t) {
        bool fadd = w == 8 && t % 2;
        uint64_t cur = fadd ? 0 : cas_read(ctr, w, errors);
        for (int k = 0; k < K; k++) {
            if (fadd) {
                long old = kyt::fadd((long *)ctr, 1);
                if (old == LONG_MIN) errors++;
                mine[(size_t)t * K + k] = (unsigned long long)old;
                continue;
            }
            for (;;) {
                uint64_t old = 0;
                if (ky_compare_swap(ctr, w, cur, (cur + 1) & mask(w), &old) != KY_OK) {
                    errors++;
                    break;
                }
                if (old == cur) break;
                cur = old;
            }
            mine[(size_t)t * K + k] = cur;
            cur = (cur + 1) & mask(w);
        }
    });
    KYT_EXPECT_OK(ky_barrier());
    std::vector<unsigned long long> all((size_t)n * T * K);
    ky_comm_barrier();
    MPI_Allgather(mine.data(), T * K, MPI_UNSIGNED_LONG_LONG, all.data(), T * K, MPI_UNSIGNED_LONG_LONG,
                  MPI_COMM_WORLD);
    std::sort(all.begin(), all.end());
    size_t first_bad = all.size();
    for (size_t i = 0; i < all.size() && first_bad == all.size(); i++)
        if (all[i] != base + i) first_bad = i;
    uint64_t final_value = plain_load(ctr, w);
    bool ok = errors == 0 && first_bad == all.size() && final_value == base + total;
    EXPECT_TRUE(kyt::all(ok)) << "final " << final_value << ", expected " << base + total
                              << "; old values: first wrong at sorted position " << first_bad << " of "
                              << all.size() << "; errors " << errors.load() << " " << ky_last_error();
    KYT_EXPECT_OK(ky_free(mem));
}

/* A lock made of ky_compare_swap (ArgoDSM's global_tas_lock is one: a test-and-set on a global word)
 * protecting a counter that is read and then stored in two separate steps, so only mutual exclusion keeps
 * increments from being lost. The holder's id stays in the lock word while it holds it. The bytes around
 * both words must not change (4 bytes: the words sit at offset 4, not 8-aligned). */
TEST_P(DsmArgoCas, LockProtectsCounter)
{
    size_t w = (size_t)GetParam();
    int n = kyt::nranks(), me = kyt::rank(), T = 4, iters = kyt::scaled(150, 15);
    char *mem = (char *)kyt::galloc(2 * page(), n - 1);
    ASSERT_TRUE(mem);
    char *lock = mem + w, *ctr = mem + page() + w;
    const uint8_t guard = 0xA5;
    if (me == n - 1)
        for (char *b : {mem, mem + page()}) {
            memset(b, guard, w);
            memset(b + 2 * w, guard, 8);
        }
    KYT_EXPECT_OK(ky_barrier());
    uint64_t top = w == 4 ? 0x80000000ull : 0x100000000ull;
    std::atomic<int> errors{0}, violations{0}, timeouts{0};
    run_threads(T, [&](int t) {
        uint64_t id = top | (uint64_t)(me * T + t + 1);
        for (int i = 0; i < iters; i++) {
            auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            bool held = false;
            while (!held && std::chrono::steady_clock::now() < deadline) {
                uint64_t old = 1;
                if (ky_compare_swap(lock, w, 0, id, &old) != KY_OK) {
                    errors++;
                    break;
                }
                held = old == 0;
                if (!held) std::this_thread::yield();
            }
            if (!held) {
                timeouts++;
                continue;
            }
            if (cas_read(lock, w, errors) != id) violations++;
            uint64_t v = cas_read(ctr, w, errors);
            cas_store(ctr, w, v + 1, errors);
            uint64_t old = 0;
            if (ky_compare_swap(lock, w, id, 0, &old) != KY_OK) errors++;
            if (old != id) violations++;
        }
    });
    KYT_EXPECT_OK(ky_barrier());
    uint64_t want = (uint64_t)n * T * iters, got = plain_load(ctr, w);
    bool guards = true;
    for (char *b : {mem, mem + page()})
        guards = guards && kyt::check_byte(b, w, guard) == w && kyt::check_byte(b + 2 * w, 8, guard) == 8;
    EXPECT_EQ(want, got) << (want - got) << " increments lost";
    EXPECT_EQ(0, violations.load()) << "two holders at once";
    EXPECT_EQ(0, timeouts.load()) << "waited over 60 s for the lock";
    EXPECT_TRUE(guards) << "compare-and-swap changed bytes next to its word";
    EXPECT_EQ(0u, plain_load(lock, w));
    EXPECT_TRUE(kyt::all(got == want && violations == 0 && timeouts == 0 && errors == 0 && guards));
    KYT_EXPECT_OK(ky_free(mem));
}

INSTANTIATE_TEST_SUITE_P(Width, DsmArgoCas, ::testing::Values(4, 8), ParamName{"bytes"});

/* Not in ArgoDSM: what ky_trylock and ky_compare_swap refuse. */
TEST_F(DsmArgo, TrylockAndCasBadInput)
{
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_trylock(-1));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_trylock(KY_DSM_LOCKS));
    KYT_EXPECT_STATUS(KY_ERR_STATE, ky_unlock(KY_DSM_LOCKS - 1)); /* never acquired */
    char *mem = (char *)kyt::galloc(page(), 0);
    ASSERT_TRUE(mem);
    uint64_t old = 0;
    for (size_t w : {0, 1, 2, 3, 16}) KYT_EXPECT_STATUS(KY_ERR_ARG, ky_compare_swap(mem + 16, w, 0, 1, &old));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_compare_swap(mem + 2, 4, 0, 1, &old));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_compare_swap(mem + 4, 8, 0, 1, &old));
    uint64_t local = 0;
    EXPECT_LT(ky_compare_swap(&local, 8, 0, 1, &old), 0) << "a pointer outside the global space";
    EXPECT_EQ(0u, local);
    KYT_EXPECT_OK(ky_barrier());
    if (kyt::rank() == 0) KYT_EXPECT_OK(ky_compare_swap(mem + 8, 8, 0, 5, nullptr)); /* old may be NULL */
    KYT_EXPECT_OK(ky_barrier());
    const uint64_t *words = (const uint64_t *)mem;
    EXPECT_TRUE(kyt::all(words[0] == 0 && words[1] == 5 && words[2] == 0 && words[4] == 0));
    KYT_EXPECT_OK(ky_free(mem));
}

/* ---- barriers (ArgoDSM tests/barrier.cpp) ------------------------------------------------------------ */

/* barrierTest.simpleBarrier */
TEST_F(DsmArgo, SimpleBarrier)
{
    for (int i = 0; i < 3; i++) KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_sync());
    KYT_EXPECT_OK(ky_barrier());
}

/* barrierTest.barrierUpgradeWriters / barrierDowngradeAfterUpgrade (Kyoyu has no upgrade barriers; what is
 * left is the data): one rank writes pages the others read, another rewrites them after everybody cached
 * them, and after each ky_barrier every rank reads the new bytes (cached copies were invalidated). */
TEST_F(DsmArgo, BarrierWritersThenReaders)
{
    int n = kyt::nranks(), me = kyt::rank();
    size_t bytes = 8 * page() + 100;
    char *a = (char *)kyt::galloc(bytes, n > 1 ? 1 : 0);
    ASSERT_TRUE(a);
    bool ok = true;
    for (int round = 0; round < 3; round++) {
        int writer = round % n; /* round 0: rank 0, not the home; round 1: the home (rank 1) */
        if (me == writer) kyt::fill_pattern(a, bytes, 100 + round);
        KYT_EXPECT_OK(ky_barrier());
        size_t bad = kyt::check_pattern(a, bytes, 100 + round);
        if (bad != bytes && ok)
            ADD_FAILURE() << "round " << round << ": byte " << bad << " differs (writer " << writer << ")";
        ok = ok && bad == bytes;
        KYT_EXPECT_OK(ky_barrier());
    }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

class DsmArgoThreads : public DsmArgoBase, public ::testing::WithParamInterface<int> {};

/* barrierTest.threadBarrier (0..128 threads there; 1, 2, 4, 8 here): T threads per rank meet in rounds, the
 * last of them calling ky_barrier. In round i one thread of rank i % n increments a global counter and one
 * thread of every rank a rank-local one; every thread of every rank writes its own slot of a shared page.
 * After the barrier every thread of every rank sees all of it. */
TEST_P(DsmArgoThreads, ThreadBarrier)
{
    int n = kyt::nranks(), me = kyt::rank(), T = GetParam(), rounds = kyt::scaled(12, 4);
    long *g = (long *)kyt::galloc(sizeof(long) * (1 + (size_t)n * T), n - 1);
    ASSERT_TRUE(g);
    long *slot = g + 1;
    KYT_EXPECT_OK(ky_barrier());
    RankTeam team(T);
    int local = 0;
    std::atomic<int> bad{0}, errors{0};
    run_threads(T, [&](int t) {
        for (int i = 0; i < rounds; i++) {
            if (t == i % T) {
                local++;
                if (me == i % n) (*g)++;
            }
            slot[me * T + t] = i + 1;
            if (team.arrive(ky_barrier) != KY_OK) errors++;
            if (local != i + 1 || *g != i + 1) bad++;
            for (int s = 0; s < n * T; s++)
                if (slot[s] != i + 1) bad++;
            if (team.arrive(ky_barrier) != KY_OK) errors++;
        }
    });
    EXPECT_EQ(0, bad.load()) << "values not seen after ky_barrier (" << T << " threads per rank)";
    EXPECT_TRUE(kyt::all(bad == 0 && errors == 0 && *g == rounds));
    KYT_EXPECT_OK(ky_free(g));
}

INSTANTIATE_TEST_SUITE_P(Threads, DsmArgoThreads, ::testing::Values(1, 2, 4, 8), ParamName{"t"});

/* ---- allocation (ArgoDSM tests/allocators.cpp) ------------------------------------------------------- */

/* AllocatorTest.CollectiveAllocZeroBytesCollectively, ...OneByte..., CollectiveCommonAlloc and
 * AllocateAligned, with odd sizes and every home: all live at once, same pointer on every rank, aligned,
 * disjoint, zero-filled, homed as asked; the ranks write interleaved bytes and after ky_barrier all of them
 * read every byte, first and last included (PrefetchTest.FirstPage / OutOfBounds). Freed in mixed order. */
TEST_F(DsmArgo, CollectiveSizes)
{
    int n = kyt::nranks(), me = kyt::rank();
    size_t pg = page();
    std::vector<size_t> sizes = {0,  1,      10,         100,   1000,           pg - 1,
                                 pg, pg + 1, 3 * pg + 5, 12345, (1u << 20) + 7, 2 * pg - 3};
    std::vector<char *> p(sizes.size());
    bool ok = true;
    for (size_t k = 0; k < sizes.size(); k++) {
        p[k] = (char *)kyt::galloc(sizes[k], (int)(k % n));
        if (!p[k]) {
            ADD_FAILURE() << "ky_alloc(" << sizes[k] << ", " << k % n << "): " << ky_last_error();
            ok = false;
            continue;
        }
        ok = ok && same_everywhere(p[k]) && (uintptr_t)p[k] % alignof(std::max_align_t) == 0 &&
             (uintptr_t)p[k] % pg == 0 && ky_home_of(p[k]) == (int)(k % n);
        if (sizes[k]) ok = ok && ky_home_of(p[k] + sizes[k] - 1) == (int)(k % n);
    }
    ASSERT_TRUE(kyt::all(ok)) << "allocation, address or home wrong";
    std::vector<std::pair<uintptr_t, size_t>> r;
    for (size_t k = 0; k < sizes.size(); k++) r.push_back({(uintptr_t)p[k], std::max<size_t>(sizes[k], 1)});
    std::sort(r.begin(), r.end());
    for (size_t k = 1; k < r.size(); k++) ok = ok && r[k - 1].first + r[k - 1].second <= r[k].first;
    EXPECT_TRUE(ok) << "allocations overlap";
    for (size_t k = 0; k < sizes.size(); k++) {
        ok = ok && kyt::check_byte(p[k], sizes[k], 0) == sizes[k];
        for (size_t i = (size_t)me; i < sizes[k]; i += n) p[k][i] = (char)kyt::pat(i, k);
    }
    KYT_EXPECT_OK(ky_barrier());
    for (size_t k = 0; k < sizes.size(); k++) {
        size_t bad = kyt::check_pattern(p[k], sizes[k], k);
        if (bad != sizes[k] && ok)
            ADD_FAILURE() << "allocation of " << sizes[k] << " bytes: byte " << bad << " wrong";
        ok = ok && bad == sizes[k];
    }
    EXPECT_TRUE(kyt::all(ok));
    for (size_t k = 0; k < sizes.size(); k++) KYT_EXPECT_OK(ky_free(p[(k * 5) % sizes.size()]));
}

/* AllocatorTest.Collective200MBTwiceAlloc: two 200 MB allocations; their first and last bytes written by a
 * rank that is not their home, read everywhere. */
TEST_F(DsmArgo, Collective200MBTwice)
{
    int n = kyt::nranks(), me = kyt::rank();
    size_t big = 209715200;
    char *a = (char *)kyt::galloc(big, 0), *b = (char *)kyt::galloc(big, n - 1);
    ASSERT_TRUE(a && b) << ky_last_error();
    bool ok = b >= a + big || a >= b + big;
    if (me == n - 1) a[0] = 'a', a[big - 1] = 'z';
    if (me == 0) b[0] = 'A', b[big - 1] = 'Z';
    KYT_EXPECT_OK(ky_barrier());
    ok = ok && a[0] == 'a' && a[big - 1] == 'z' && b[0] == 'A' && b[big - 1] == 'Z' && a[big / 2] == 0;
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
    KYT_EXPECT_OK(ky_free(b));
}

/* AllocatorTest.CollectiveAllocExceedLimit and DynamicAllocExceedLimit: more than the space holds fails on
 * every rank with a reason, and the space still works afterwards. */
TEST_F(DsmArgo, AllocExceedLimit)
{
    void *base = nullptr;
    size_t size = 0;
    KYT_EXPECT_OK(ky_gas_range(&base, &size));
    EXPECT_EQ(nullptr, kyt::galloc(size / 2 + page(), 0));
    std::string why = ky_last_error();
    EXPECT_NE(std::string::npos, why.find("ky_alloc")) << why;
    EXPECT_EQ(nullptr, ky_alloc_local(size / 2 + 100000));
    why = ky_last_error();
    EXPECT_NE(std::string::npos, why.find("ky_alloc_local")) << why;
    char *p = (char *)kyt::galloc(100, 0);
    char *q = (char *)ky_alloc_local(100);
    EXPECT_TRUE(kyt::all(p && q)) << ky_last_error();
    KYT_EXPECT_OK(ky_free(q));
    KYT_EXPECT_OK(ky_free(p));
}

/* AllocatorTest.CollectiveAllocLoopExceedLimit (without exhausting the space): sizes 7, 14, 28, ... 56 MiB
 * all live at once, disjoint, homes dealt round-robin; each written at both ends by a rank not its home. */
TEST_F(DsmArgo, CollectiveAllocLoop)
{
    int n = kyt::nranks(), me = kyt::rank();
    std::vector<std::pair<char *, size_t>> live;
    bool ok = true;
    for (size_t sz = 7; sz <= (56u << 20); sz *= 2) {
        char *p = (char *)kyt::galloc(sz, (int)(live.size() % n));
        if (!p) {
            ok = false;
            break;
        }
        live.push_back({p, sz});
    }
    ASSERT_TRUE(kyt::all(ok)) << ky_last_error();
    for (size_t i = 0; i < live.size(); i++) {
        for (size_t j = 0; j < i; j++)
            ok = ok && (live[i].first >= live[j].first + live[j].second ||
                        live[j].first >= live[i].first + live[i].second);
        int writer = (int)((i + 1) % n);
        if (me == writer) live[i].first[0] = (char)(i + 1), live[i].first[live[i].second - 1] = (char)(i + 2);
    }
    KYT_EXPECT_OK(ky_barrier());
    for (size_t i = 0; i < live.size(); i++)
        ok = ok && live[i].first[0] == (char)(i + 1) && live[i].first[live[i].second - 1] == (char)(i + 2);
    EXPECT_TRUE(kyt::all(ok));
    for (auto &l : live) KYT_EXPECT_OK(ky_free(l.first));
}

/* AllocatorTest.StoringDynamicArrayInCollective: every rank fills a local allocation and publishes its
 * pointer in a collective array; after ky_barrier everybody reads everybody's. Then local and collective
 * allocations cycled, then the same again with a second collective array written cyclically. */
TEST_F(DsmArgo, StoringLocalArrayInCollective)
{
    int n = kyt::nranks(), me = kyt::rank(), entries = 10, cycles = kyt::scaled(100, 20);
    bool ok = true;
    for (int phase = 0; phase < 2; phase++) {
        int *mine = (int *)ky_alloc_local(entries * sizeof(int));
        int **table = (int **)kyt::galloc(n * sizeof(int *), 0);
        int *second = (int *)kyt::galloc(entries * sizeof(int), n - 1);
        bool allocated = kyt::all(mine && table && second); /* ky_alloc_local may fail on one rank alone */
        ASSERT_TRUE(allocated) << ky_last_error();
        for (int i = 0; i < entries; i++) {
            mine[i] = me + i * (10 + phase);
            if (phase == 1 && i % n == me) second[i] = i;
        }
        table[me] = mine;
        KYT_EXPECT_OK(ky_barrier());
        for (int r = 0; r < n; r++) {
            ok = ok && ky_home_of(table[r]) == r;
            for (int j = 0; j < entries; j++) {
                ok = ok && table[r][j] == r + j * (10 + phase);
                if (phase == 1) ok = ok && second[j] == j;
            }
        }
        KYT_EXPECT_OK(ky_barrier());
        KYT_EXPECT_OK(ky_free(second));
        KYT_EXPECT_OK(ky_free(table));
        KYT_EXPECT_OK(ky_free(mine));
        if (phase == 0) {
            for (int i = 0; i < cycles; i++) {
                int *d = (int *)ky_alloc_local((size_t)i * 10 * sizeof(int));
                int **c = (int **)kyt::galloc(10 * sizeof(int *), i % n);
                ok = ok && d && c;
                if (d && i) d[i * 10 - 1] = i;
                KYT_EXPECT_OK(ky_free(d));
                KYT_EXPECT_OK(ky_free(c));
            }
            KYT_EXPECT_OK(ky_barrier());
        }
    }
    EXPECT_TRUE(kyt::all(ok));
}

/* AllocatorTest.DeletingNull */
TEST_F(DsmArgo, FreeingNull)
{
    KYT_EXPECT_OK(ky_free(nullptr));
    KYT_EXPECT_OK(ky_free(NULL));
}

/* AllocatorTest.ReAllocate: allocations freed make room for the same sizes again, at or below the last of
 * them (the collective allocator is first-fit). */
TEST_F(DsmArgo, ReAllocate)
{
    size_t sizes[] = {sizeof(int), 10 * sizeof(int), sizeof(double), 10 * sizeof(double)};
    void *p[4];
    for (int k = 0; k < 4; k++) p[k] = kyt::galloc(sizes[k], k % kyt::nranks());
    ASSERT_TRUE(p[0] && p[1] && p[2] && p[3]);
    uintptr_t cut = (uintptr_t)p[3];
    KYT_EXPECT_OK(ky_barrier());
    for (int k = 0; k < 4; k++) KYT_EXPECT_OK(ky_free(p[k]));
    KYT_EXPECT_OK(ky_barrier());
    bool ok = true;
    for (int k = 0; k < 4; k++) {
        p[k] = kyt::galloc(sizes[k], 0);
        ok = ok && p[k] && (uintptr_t)p[k] <= cut;
    }
    EXPECT_TRUE(kyt::all(ok)) << "reallocations above the freed space";
    for (int k = 0; k < 4; k++) KYT_EXPECT_OK(ky_free(p[k]));
}

struct Published {
    unsigned char *p;
    size_t bytes;
};

/* AllocatorTest.DynamicCommonAlloc, with threads: 4 threads per rank make local allocations of odd sizes
 * at once, fill them and publish them in a collective table; after ky_barrier every rank reads all of them
 * (homed at their owners), writes one byte in eight of its right neighbour's, and after the next barrier
 * the owners see those writes. Then each thread cycles allocate / fill / check / free. */
TEST_F(DsmArgo, LocalAllocUsedByOthers)
{
    int n = kyt::nranks(), me = kyt::rank(), T = 4;
    size_t pg = page();
    std::vector<size_t> sizes = {1, 7, 100, pg - 1, pg + 3, 3 * pg - 1, 100001};
    int K = (int)sizes.size();
    Published *table = (Published *)kyt::galloc(sizeof(Published) * n * T * K, 0);
    ASSERT_TRUE(table);
    auto salt = [](int r, int t, int k) { return kyt::mix(r, t, k); };
    std::atomic<int> errors{0};
    run_threads(T, [&](int t) {
        for (int k = 0; k < K; k++) {
            unsigned char *q = (unsigned char *)ky_alloc_local(sizes[k]);
            if (!q) {
                errors++;
                continue;
            }
            kyt::fill_pattern(q, sizes[k], salt(me, t, k));
            table[(me * T + t) * K + k] = {q, sizes[k]};
        }
    });
    KYT_EXPECT_OK(ky_barrier());
    bool ok = errors == 0;
    int right = (me + 1) % n;
    for (int r = 0; r < n && ok; r++)
        for (int t = 0; t < T; t++)
            for (int k = 0; k < K; k++) {
                Published e = table[(r * T + t) * K + k];
                size_t bad = e.p ? kyt::check_pattern(e.p, e.bytes, salt(r, t, k)) : 0;
                if (!e.p || e.bytes != sizes[k] || ky_home_of(e.p) != r || bad != e.bytes) {
                    ADD_FAILURE() << "rank " << r << " thread " << t << " allocation " << k << " ("
                                  << sizes[k] << " bytes): home " << (e.p ? ky_home_of(e.p) : -99)
                                  << ", byte " << bad << " wrong";
                    ok = false;
                }
                if (r == right)
                    for (size_t i = (size_t)me % 8; i < e.bytes; i += 8) e.p[i] = (unsigned char)~e.p[i];
            }
    KYT_EXPECT_OK(ky_barrier());
    int left = (me + n - 1) % n;
    for (int t = 0; t < T && ok; t++)
        for (int k = 0; k < K; k++) {
            Published e = table[(me * T + t) * K + k];
            for (size_t i = 0; i < e.bytes; i++) {
                unsigned char want = kyt::pat(i, salt(me, t, k));
                if (i % 8 == (size_t)left % 8) want = (unsigned char)~want;
                if (e.p[i] != want) {
                    ADD_FAILURE() << "own allocation " << k << " of thread " << t << ": byte " << i
                                  << " not as the neighbour wrote it";
                    ok = false;
                    break;
                }
            }
        }
    KYT_EXPECT_OK(ky_barrier()); /* nobody touches them any more: the owners free */
    for (int t = 0; t < T; t++)
        for (int k = 0; k < K; k++) KYT_EXPECT_OK(ky_free(table[(me * T + t) * K + k].p));
    int cycles = kyt::scaled(60, 10);
    run_threads(T, [&](int t) {
        std::mt19937_64 g(kyt::mix(kyt::seed(), me, t));
        for (int c = 0; c < cycles; c++) {
            size_t sz = kyt::log_uniform(g, 1, 3 * pg + 17);
            unsigned char *q = (unsigned char *)ky_alloc_local(sz);
            if (!q) {
                errors++;
                continue;
            }
            kyt::fill_pattern(q, sz, kyt::mix(me, t, c));
            std::this_thread::yield();
            if (kyt::check_pattern(q, sz, kyt::mix(me, t, c)) != sz) errors++;
            if (ky_free(q) != KY_OK) errors++;
        }
    });
    EXPECT_EQ(0, errors.load()) << ky_last_error();
    EXPECT_TRUE(kyt::all(ok && errors == 0));
    KYT_EXPECT_OK(ky_free(table));
}

/* ---- prefetching (ArgoDSM tests/prefetch.cpp) -------------------------------------------------------- */

/* PrefetchTest.FirstPage, OutOfBounds and PageBoundaries: bytes at the start, the end and both sides of
 * every page boundary of an odd-sized array spread over the ranks, written by different ranks; each rank
 * preloads two-byte regions around them and reads them without faulting. */
TEST_F(DsmArgo, PreloadFirstLastAndPageBoundaries)
{
    int n = kyt::nranks(), me = kyt::rank();
    size_t pg = page(), B = 16 * pg + 13;
    int dims[] = {(int)B, -1}, divs[] = {n, -1};
    char *tmp = (char *)ky_mapalloc(dims, divs, 1, 0, n);
    ASSERT_TRUE(tmp);
    std::vector<size_t> at = {0, B - 1};
    for (size_t k = 1; k * pg < B; k++) at.push_back(k * pg - 1), at.push_back(k * pg);
    for (size_t i = 0; i < at.size(); i++)
        if ((int)(i % n) == me) tmp[at[i]] = (char)('a' + i % 26);
    KYT_EXPECT_OK(ky_barrier());
    ky_dsm_stats_t s0, s1;
    ky_dsm_stats(&s0);
    size_t glb[1] = {B};
    for (size_t i = 2; i < at.size(); i += 2) {
        size_t reg[1] = {2};
        KYT_EXPECT_OK(ky_preload_array(tmp + at[i], glb, reg, 1, 1, 0));
    }
    size_t one[1] = {1};
    KYT_EXPECT_OK(ky_preload_array(tmp, glb, one, 1, 1, 0));
    KYT_EXPECT_OK(ky_preload_array(tmp + B - 1, glb, one, 1, 1, 0));
    ky_dsm_stats(&s1);
    bool ok = true;
    for (size_t i = 0; i < at.size(); i++) ok = ok && tmp[at[i]] == (char)('a' + i % 26);
    ky_dsm_stats_t s2;
    ky_dsm_stats(&s2);
    EXPECT_EQ(s1.read_faults, s2.read_faults) << "faults on preloaded pages";
    if (n > 1) {
        EXPECT_GT(s1.pages_preloaded, s0.pages_preloaded);
    }
    KYT_EXPECT_OK(ky_barrier());
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(tmp));
}

/* PrefetchTest.AccessPrefetched: one rank writes a block of pages; every other rank preloads the block and
 * then reads all of it without a fault (read-only), or preloads it writable and writes a byte per page
 * without a fault, the home seeing every such byte after ky_barrier. */
TEST_F(DsmArgo, AccessPreloaded)
{
    int n = kyt::nranks(), me = kyt::rank();
    size_t pg = page(), np = 8, bytes = np * pg;
    char *tmp = (char *)kyt::galloc(bytes, 0);
    ASSERT_TRUE(tmp);
    if (me == 0) memset(tmp, 'a', bytes);
    KYT_EXPECT_OK(ky_barrier());
    size_t glb[1] = {bytes}, reg[1] = {bytes};
    ky_dsm_stats_t s0, s1, s2;
    ky_dsm_stats(&s0);
    KYT_EXPECT_OK(ky_preload_array(tmp, glb, reg, 1, 1, 0));
    ky_dsm_stats(&s1);
    bool ok = kyt::check_byte(tmp, bytes, 'a') == bytes;
    ky_dsm_stats(&s2);
    if (me != 0) {
        EXPECT_EQ(np, s1.pages_preloaded - s0.pages_preloaded);
        EXPECT_EQ(s1.read_faults, s2.read_faults) << "faulted on preloaded pages";
    }
    KYT_EXPECT_OK(ky_barrier());
    if (me != 0) {
        KYT_EXPECT_OK(ky_preload_array(tmp, glb, reg, 1, 1, 1));
        ky_dsm_stats(&s1);
        for (size_t p = 0; p < np; p++) tmp[p * pg + (size_t)me] = (char)('A' + me);
        ky_dsm_stats(&s2);
        EXPECT_EQ(s1.read_faults + s1.write_faults, s2.read_faults + s2.write_faults)
            << "faulted writing writable preloaded pages";
    }
    KYT_EXPECT_OK(ky_barrier());
    for (size_t p = 0; p < np; p++)
        for (int r = 0; r < n; r++) ok = ok && tmp[p * pg + r] == (r == 0 ? 'a' : (char)('A' + r));
    ok = ok && tmp[bytes - 1] == 'a';
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(tmp));
}

/* A z-slab array of odd extents (planes that are not page multiples, so pages straddle slabs). */
struct OddArray {
    int NZ, NY, NX, n, bz;
    double *a;
    OddArray(int nz, int ny, int nx) : NZ(nz), NY(ny), NX(nx), n(kyt::nranks()), bz((nz + n - 1) / n)
    {
        int dims[] = {NZ, NY, NX, -1}, divs[] = {n, 1, 1, -1};
        a = (double *)ky_mapalloc(dims, divs, sizeof(double), 0, n);
    }
    double &at(int z, int y, int x) { return a[((size_t)z * NY + y) * NX + x]; }
    int z0(int r) const { return std::min(NZ, r * bz); }
    int z1(int r) const { return std::min(NZ, (r + 1) * bz); }
    int owner(int z) const { return z / bz; }
    static double v(int z, int y, int x) { return z * 10000.0 + y * 100.0 + x + 0.5; }
    void init_own(int me)
    {
        for (int z = z0(me); z < z1(me); z++)
            for (int y = 0; y < NY; y++)
                for (int x = 0; x < NX; x++) at(z, y, x) = v(z, y, x);
    }
};

/* PrefetchTest.AccessPrefetched on odd region shapes: a 24 x 37 x 53 array of doubles in z slabs. Each rank
 * preloads read-only a box at odd offsets in its right neighbour's slab, a single element, a 2-D region
 * crossing a plane boundary, then the whole array, reading each without a fault. Then it preloads a box of
 * its neighbour's slab writable and writes the odd x of it while the owner writes the even x of the same box;
 * after ky_barrier every rank sees both. */
TEST_F(DsmArgo, PreloadOddShapes)
{
    int n = kyt::nranks(), me = kyt::rank();
    OddArray A(24, 37, 53);
    ASSERT_TRUE(A.a);
    A.init_own(me);
    KYT_EXPECT_OK(ky_barrier());
    int right = (me + 1) % n, left = (me + n - 1) % n;
    size_t glb3[3] = {(size_t)A.NZ, (size_t)A.NY, (size_t)A.NX};
    bool ok = true;
    ky_dsm_stats_t s0, s1;
    auto check_box = [&](int z, int zn, int y, int yn, int x, int xn, const char *what) {
        for (int i = z; i < z + zn; i++)
            for (int j = y; j < y + yn; j++)
                for (int k = x; k < x + xn; k++)
                    if (A.at(i, j, k) != OddArray::v(i, j, k)) {
                        ADD_FAILURE()
                            << what << ": (" << i << "," << j << "," << k << ") = " << A.at(i, j, k);
                        ok = false;
                        return;
                    }
    };
    /* a box at odd offsets in the right neighbour's slab */
    int rz = A.z0(right), rzn = std::min(2, A.z1(right) - rz);
    size_t box[3] = {(size_t)rzn, 31, 47};
    ky_dsm_stats(&s0);
    KYT_EXPECT_OK(ky_preload_array(&A.at(rz, 3, 5), glb3, box, 3, sizeof(double), 0));
    check_box(rz, rzn, 3, 31, 5, 47, "box");
    ky_dsm_stats(&s1);
    EXPECT_EQ(s0.read_faults, s1.read_faults) << "faults reading a preloaded box";
    /* the last element */
    size_t one[3] = {1, 1, 1};
    KYT_EXPECT_OK(ky_preload_array(&A.at(A.NZ - 1, A.NY - 1, A.NX - 1), glb3, one, 3, sizeof(double), 0));
    check_box(A.NZ - 1, 1, A.NY - 1, 1, A.NX - 1, 1, "last element");
    /* rows of the left neighbour's slab seen as a 2-D array, crossing from one plane into the next */
    size_t glb2[2] = {(size_t)A.NZ * A.NY, (size_t)A.NX}, rows[2] = {(size_t)A.NY + 5, 7};
    int lz = A.z0(left);
    KYT_EXPECT_OK(ky_preload_array(&A.at(lz, 2, 40), glb2, rows, 2, sizeof(double), 0));
    for (int row = 0; row < A.NY + 5; row++) {
        int z = lz + (2 + row) / A.NY, y = (2 + row) % A.NY;
        check_box(z, 1, y, 1, 40, 7, "2-D rows");
    }
    ky_dsm_stats(&s0);
    EXPECT_EQ(s0.read_faults, s1.read_faults) << "faults reading preloaded regions";
    /* everything */
    size_t all1[1] = {(size_t)A.NZ * A.NY * A.NX}, glb1[1] = {all1[0]};
    KYT_EXPECT_OK(ky_preload_array(A.a, glb1, all1, 1, sizeof(double), 0));
    check_box(0, A.NZ, 0, A.NY, 0, A.NX, "whole array");
    ky_dsm_stats(&s1);
    EXPECT_EQ(s0.read_faults, s1.read_faults) << "faults reading the preloaded array";
    KYT_EXPECT_OK(ky_barrier());

    /* writes through a writable preload, merged with the owner's writes to the same pages */
    int zn = A.z1(right) - A.z0(right);
    size_t wbox[3] = {(size_t)zn, (size_t)A.NY - 2, (size_t)A.NX - 2};
    KYT_EXPECT_OK(ky_preload_array(&A.at(A.z0(right), 1, 1), glb3, wbox, 3, sizeof(double), 1));
    auto inbox = [&](int y, int x) { return y >= 1 && y < A.NY - 1 && x >= 1 && x < A.NX - 1; };
    for (int z = A.z0(right); z < A.z1(right); z++)
        for (int y = 1; y < A.NY - 1; y++)
            for (int x = 1; x < A.NX - 1; x += 2) A.at(z, y, x) = -OddArray::v(z, y, x); /* odd x */
    for (int z = A.z0(me); z < A.z1(me); z++)
        for (int y = 1; y < A.NY - 1; y++)
            for (int x = 2; x < A.NX - 1; x += 2) A.at(z, y, x) = -OddArray::v(z, y, x);
    KYT_EXPECT_OK(ky_barrier());
    long wrong_odd = 0, wrong_even = 0, wrong_out = 0;
    for (int z = 0; z < A.NZ; z++)
        for (int y = 0; y < A.NY; y++)
            for (int x = 0; x < A.NX; x++) {
                double want = inbox(y, x) ? -OddArray::v(z, y, x) : OddArray::v(z, y, x);
                if (A.at(z, y, x) != want) (inbox(y, x) ? (x % 2 ? wrong_odd : wrong_even) : wrong_out)++;
            }
    EXPECT_EQ(0, wrong_odd) << "elements written through the writable preload (by the left neighbour) lost";
    EXPECT_EQ(0, wrong_even) << "elements written by their owner lost";
    EXPECT_EQ(0, wrong_out) << "elements nobody wrote changed";
    EXPECT_TRUE(kyt::all(ok && wrong_odd == 0 && wrong_even == 0 && wrong_out == 0));
    KYT_EXPECT_OK(ky_free(A.a));
}

/* The refresh half of prefetching on an odd shape (17 x 29 x 43): a box of the right neighbour's slab is
 * preloaded, its owner rewrites the box's elements on pages it is home of, and after ky_sync an overload
 * brings them in place, without faults. (Elements on a page homed elsewhere stay in their writer's cache
 * until a barrier: ky_sync does not send them.) After ky_barrier everybody sees every write. */
TEST_F(DsmArgo, OverloadOddBox)
{
    int n = kyt::nranks(), me = kyt::rank();
    OddArray A(17, 29, 43);
    ASSERT_TRUE(A.a);
    A.init_own(me);
    KYT_EXPECT_OK(ky_barrier());
    int right = (me + 1) % n;
    size_t glb3[3] = {(size_t)A.NZ, (size_t)A.NY, (size_t)A.NX};
    int rz = A.z0(right), rzn = A.z1(right) - rz;
    size_t box[3] = {(size_t)rzn, 25, 37};
    auto inbox = [&](int y, int x) { return y >= 2 && y < 27 && x >= 3 && x < 40; };
    auto rewritten = [&](int z, int y, int x) {
        return inbox(y, x) && ky_home_of(&A.at(z, y, x)) == A.owner(z);
    };
    KYT_EXPECT_OK(ky_preload_array(&A.at(rz, 2, 3), glb3, box, 3, sizeof(double), 0));
    KYT_EXPECT_OK(ky_sync());
    for (int z = A.z0(me); z < A.z1(me); z++)
        for (int y = 2; y < 27; y++)
            for (int x = 3; x < 40; x++)
                if (rewritten(z, y, x)) A.at(z, y, x) = -OddArray::v(z, y, x);
    KYT_EXPECT_OK(ky_sync());
    ky_dsm_stats_t s0, s1;
    ky_dsm_stats(&s0);
    KYT_EXPECT_OK(ky_overload_array(&A.at(rz, 2, 3), glb3, box, 3, sizeof(double), 0));
    long wrong = 0;
    for (int z = rz; z < rz + rzn; z++)
        for (int y = 2; y < 27; y++)
            for (int x = 3; x < 40; x++) {
                double want = rewritten(z, y, x) ? -OddArray::v(z, y, x) : OddArray::v(z, y, x);
                wrong += A.at(z, y, x) != want;
            }
    ky_dsm_stats(&s1);
    EXPECT_EQ(0, wrong) << "elements of the overloaded box not refreshed";
    if (n > 1) {
        EXPECT_EQ(s0.read_faults + s0.write_faults, s1.read_faults + s1.write_faults) << "overload faulted";
    }
    KYT_EXPECT_OK(ky_barrier());
    long wrong_after = 0;
    for (int z = 0; z < A.NZ; z++)
        for (int y = 0; y < A.NY; y++)
            for (int x = 0; x < A.NX; x++) {
                double want = rewritten(z, y, x) ? -OddArray::v(z, y, x) : OddArray::v(z, y, x);
                wrong_after += A.at(z, y, x) != want;
            }
    EXPECT_EQ(0, wrong_after) << "after ky_barrier";
    EXPECT_TRUE(kyt::all(wrong == 0 && wrong_after == 0));
    KYT_EXPECT_OK(ky_free(A.a));
}

/* ---- OpenMP (ArgoDSM tests/omp.cpp) ------------------------------------------------------------------ */

/* ompTest.WriteAndRead: each rank writes its share of a mapalloc'd array with an OpenMP parallel loop (1 to 8
 * threads; ArgoDSM's shares, which do not follow the mapping's blocks, so some writes go to pages homed
 * elsewhere), ky_barrier, then every thread checks the whole array. */
TEST_F(DsmArgo, OmpWriteAndRead)
{
#ifndef _OPENMP
    GTEST_SKIP() << "built without OpenMP";
#else
    int n = kyt::nranks(), me = kyt::rank(), amount = 100000, iters = kyt::scaled(2, 1);
    int dims[] = {amount, -1}, divs[] = {n, -1};
    int *arr = (int *)ky_mapalloc(dims, divs, sizeof(int), 0, n);
    ASSERT_TRUE(arr);
    int chunk = amount / n, start = chunk * me, end = me == n - 1 ? amount : start + chunk;
    KYT_EXPECT_OK(ky_barrier());
    long bad = 0;
    for (int it = 0; it < iters; it++)
        for (int threads = 1; threads <= 8; threads++) {
            int val = 42 + threads + 100 * it;
#pragma omp parallel for num_threads(threads)
            for (int j = start; j < end; j++) arr[j] = val;
            KYT_EXPECT_OK(ky_barrier());
            long round_bad = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : round_bad)
            for (int j = 0; j < amount; j++) round_bad += arr[j] != val;
            if (round_bad) ADD_FAILURE() << round_bad << " elements wrong with " << threads << " threads";
            bad += round_bad;
            KYT_EXPECT_OK(ky_barrier());
        }
    EXPECT_TRUE(kyt::all(bad == 0));
    KYT_EXPECT_OK(ky_free(arr));
#endif
}

/* ompTest.WriteAndRead inside one parallel region, the seed's way: `omp barrier; omp master ky_barrier();
 * omp barrier` between writing one's own part and reading a neighbour's, 4 threads per rank. */
TEST_F(DsmArgo, OmpSeedBarrierPattern)
{
#ifndef _OPENMP
    GTEST_SKIP() << "built without OpenMP";
#else
    int n = kyt::nranks(), me = kyt::rank(), amount = 3 * (int)(page() / sizeof(long)) * n + 77;
    int rounds = kyt::scaled(6, 2);
    int dims[] = {amount, -1}, divs[] = {n, -1};
    long *a = (long *)ky_mapalloc(dims, divs, sizeof(long), 0, n);
    ASSERT_TRUE(a);
    int bs = (amount + n - 1) / n, lo = std::min(amount, me * bs), hi = std::min(amount, (me + 1) * bs);
    KYT_EXPECT_OK(ky_barrier());
    long bad = 0;
    int errors = 0;
#pragma omp parallel num_threads(4)
    for (int r = 0; r < rounds; r++) {
#pragma omp for
        for (int j = lo; j < hi; j++) a[j] = (long)r * amount + j;
#pragma omp barrier
#pragma omp master
        errors += ky_barrier() != KY_OK;
#pragma omp barrier
#pragma omp for reduction(+ : bad)
        for (int j = 0; j < amount; j++) {
            int k = (j + bs) % amount; /* mostly the next rank's part */
            bad += a[k] != (long)r * amount + k;
        }
#pragma omp barrier
#pragma omp master
        errors += ky_barrier() != KY_OK;
#pragma omp barrier
    }
    EXPECT_EQ(0, bad);
    EXPECT_TRUE(kyt::all(bad == 0 && errors == 0));
    KYT_EXPECT_OK(ky_free(a));
#endif
}

/* ompTest with ArgoDSM's locks in the loop: OpenMP threads increment a global counter under a global lock
 * and another with ky_fetch_add; both totals exact. */
TEST_F(DsmArgo, OmpLockAndFetchAdd)
{
#ifndef _OPENMP
    GTEST_SKIP() << "built without OpenMP";
#else
    int n = kyt::nranks(), K = kyt::scaled(400, 40);
    long *c = (long *)kyt::galloc(2 * sizeof(long), 0);
    ASSERT_TRUE(c);
    KYT_EXPECT_OK(ky_barrier());
    int errors = 0;
#pragma omp parallel for num_threads(4) reduction(+ : errors)
    for (int k = 0; k < K; k++) {
        errors += ky_lock(42) != KY_OK;
        c[0]++;
        errors += ky_unlock(42) != KY_OK;
        errors += kyt::fadd(&c[1], 1) == LONG_MIN;
    }
    KYT_EXPECT_OK(ky_barrier());
    EXPECT_EQ((long)n * K, c[0]) << "increments under the lock lost";
    EXPECT_EQ((long)n * K, c[1]) << "fetch_add increments lost";
    EXPECT_TRUE(kyt::all(errors == 0 && c[0] == (long)n * K && c[1] == (long)n * K));
    KYT_EXPECT_OK(ky_free(c));
#endif
}

/* ---- without a progress thread ------------------------------------------------------------------------ */

/* Not in ArgoDSM. KY_PROGRESS_THREAD=0: the DSM is refused at ky_init; its calls fail with
 * KY_ERR_UNSUPPORTED and say why. */
TEST(DsmArgoNoProgress, CallsRefusedWithReason)
{
    if (kyt::progress_thread()) GTEST_SKIP() << "runs with KY_PROGRESS_THREAD=0 only";
    auto refused = [](const char *call) {
        std::string why = ky_last_error();
        EXPECT_NE(std::string::npos, why.find(call)) << why;
        EXPECT_NE(std::string::npos, why.find("KY_PROGRESS_THREAD=0")) << why;
        EXPECT_NE(std::string::npos, why.find(ky_strerror(KY_ERR_UNSUPPORTED))) << why;
    };
    EXPECT_EQ(nullptr, kyt::galloc(64, 0));
    refused("ky_alloc");
    int dims[] = {64, -1}, divs[] = {kyt::nranks(), -1};
    EXPECT_EQ(nullptr, ky_mapalloc(dims, divs, 8, 0, kyt::nranks()));
    refused("ky_mapalloc");
    EXPECT_EQ(nullptr, ky_alloc_local(64));
    refused("ky_alloc_local");
    KYT_EXPECT_STATUS(KY_ERR_UNSUPPORTED, ky_barrier());
    KYT_EXPECT_STATUS(KY_ERR_UNSUPPORTED, ky_lock(1));
    KYT_EXPECT_STATUS(KY_ERR_UNSUPPORTED, ky_trylock(1));
    uint64_t word = 0, old = 0;
    EXPECT_LT(ky_compare_swap(&word, 8, 0, 1, &old), 0);
    EXPECT_TRUE(kyt::all(true));
}

}  // namespace
