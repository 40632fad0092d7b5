/* The global address space's rules where programs written independently of it found them broken: locks
 * held by sibling threads at once, writes to one's own elements on pages homed at a neighbour (blocks that
 * are not page multiples) through ky_sync_drop and ky_overload_array, writes through a read-write preload
 * into the neighbours' planes, and the atomics (ky_trylock, ky_compare_swap). References are computed
 * another way: closed formulas of (step, index), counts, MPI_Allgather of what each rank did. Also pages
 * still as allocated, which their home writes without a copy. */
#include <climits>
#include <cstdlib>
#include <cstring>

#include "kyt.h"

namespace {

size_t page()
{
    return ky_page_size();
}

using kyt::run_threads;

/* One thread per rank increments a counter under lock 1 while its siblings take and release their own locks
 * and touch no memory: every increment must survive (a sibling's release used to return while the worker's
 * diff was still in flight, and the next holder read the counter before it arrived). */
TEST(DsmRules, SiblingLocksLoseNothing)
{
    int n = kyt::nranks(), me = kyt::rank(), K = kyt::scaled(1500, 200), S = 3;
    long *ctr = (long *)kyt::galloc(sizeof(long), n - 1);
    ASSERT_TRUE(ctr);
    KYT_EXPECT_OK(ky_barrier());
    std::atomic<int> bad{0};
    run_threads(S + 1, [&](int t) {
        for (int k = 0; k < K; k++) {
            if (t == 0) {
                if (ky_lock(1) != KY_OK) bad++;
                (*ctr)++;
                if (ky_unlock(1) != KY_OK) bad++;
            } else {
                int id = 100 + me * 8 + t;
                if (ky_lock(id) != KY_OK || ky_unlock(id) != KY_OK) bad++;
            }
        }
    });
    KYT_EXPECT_OK(ky_barrier());
    long got = *ctr;
    EXPECT_EQ((long)n * K, got) << "lost " << (long)n * K - got << " increments";
    EXPECT_TRUE(kyt::all(bad == 0 && got == (long)n * K));
    KYT_EXPECT_OK(ky_free(ctr));
}

/* ArgoDSM's lock stress pattern: nested locks, the outer one shared by a quarter of the threads. */
TEST(DsmRules, NestedLocksFromManyThreads)
{
    int n = kyt::nranks(), T = 8, K = kyt::scaled(150, 30);
    long *ctr = (long *)kyt::galloc(2 * sizeof(long), 0);
    ASSERT_TRUE(ctr);
    KYT_EXPECT_OK(ky_barrier());
    std::atomic<int> bad{0};
    run_threads(T, [&](int t) {
        for (int k = 0; k < K; k++) {
            if (ky_lock(100 + t % 4) || ky_lock(200)) bad++;
            (*ctr)++;
            ctr[1] += 2; /* a second word of the same page, under the same lock */
            if (ky_unlock(200) || ky_unlock(100 + t % 4)) bad++;
        }
    });
    KYT_EXPECT_OK(ky_barrier());
    long want = (long)n * T * K;
    EXPECT_EQ(want, ctr[0]);
    EXPECT_EQ(2 * want, ctr[1]);
    EXPECT_TRUE(kyt::all(bad == 0 && ctr[0] == want && ctr[1] == 2 * want));
    KYT_EXPECT_OK(ky_free(ctr));
}

/* A z-slab array whose planes are not page multiples; every page boundary inside it is shared by two
 * owners. elem: double (8) or a 24-byte record. */
struct Slabs {
    int nz, ny, nx, n, me, st, ed;
    size_t elem;
    char *a;
    Slabs(int nz_, int ny_, int nx_, size_t elem_) : nz(nz_), ny(ny_), nx(nx_), elem(elem_)
    {
        n = kyt::nranks(), me = kyt::rank();
        int dims[] = {nz, ny, nx, -1}, divs[] = {n, 1, 1, -1};
        a = (char *)ky_mapalloc(dims, divs, elem, 0, n);
        int bs = (nz + n - 1) / n;
        st = std::min(nz, me * bs), ed = std::min(nz, st + bs);
    }
    size_t idx(int z, int y, int x) const { return ((size_t)z * ny + y) * nx + x; }
    /* the first 8 bytes of an element as a double; records are filled from it */
    void put(int z, int y, int x, double v)
    {
        char *p = a + idx(z, y, x) * elem;
        for (size_t o = 0; o < elem; o += 8) memcpy(p + o, &v, 8), v += 0.5;
    }
    bool is(int z, int y, int x, double v) const
    {
        const char *p = a + idx(z, y, x) * elem;
        for (size_t o = 0; o < elem; o += 8, v += 0.5)
            if (memcmp(p + o, &v, 8) != 0) return false;
        return true;
    }
    int owner(int z) const { return z / ((nz + n - 1) / n); }
};

double value(int step, size_t i)
{
    return step * 1e7 + (double)i;
}

/* Seed 000 Fig. 7's pattern on slabs that do not start on page boundaries: each step every rank writes its
 * own planes and (redundantly, with other values) its neighbours' nearest planes, then ky_sync_drop. Its own
 * writes must all survive, whether the page holding them is homed at itself or at the neighbour, and the
 * neighbours' redundant writes must all be gone. */
TEST(DsmRules, SyncDropKeepsOwnElementsOnSharedPages)
{
    for (size_t elem : {(size_t)8, (size_t)24}) {
        Slabs s(5 * kyt::nranks() + 2, 36, 40, elem);
        ASSERT_TRUE(s.a);
        bool ok = true;
        int steps = kyt::scaled(4, 2);
        for (int step = 1; step <= steps; step++) {
            for (int z = s.st; z < s.ed; z++)
                for (int y = 0; y < s.ny; y++)
                    for (int x = 0; x < s.nx; x++) s.put(z, y, x, value(step, s.idx(z, y, x)));
            for (int z : {s.st - 1, s.ed}) /* the neighbours' nearest planes: thrown away */
                if (z >= 0 && z < s.nz && s.st < s.ed)
                    for (int y = 0; y < s.ny; y++)
                        for (int x = 0; x < s.nx; x++) s.put(z, y, x, -1.0 - s.me);
            KYT_EXPECT_OK(ky_sync_drop());
            for (int z = 0; z < s.nz && ok; z++)
                for (int y = 0; y < s.ny && ok; y++)
                    for (int x = 0; x < s.nx && ok; x++)
                        if (!s.is(z, y, x, value(step, s.idx(z, y, x)))) {
                            double got;
                            memcpy(&got, s.a + s.idx(z, y, x) * elem, 8);
                            ADD_FAILURE() << "elem " << elem << " step " << step << " (" << z << "," << y
                                          << "," << x << ") owner " << s.owner(z) << " home "
                                          << ky_home_of(s.a + s.idx(z, y, x) * elem) << ": " << got
                                          << ", expected " << value(step, s.idx(z, y, x));
                            ok = false;
                        }
            KYT_EXPECT_OK(ky_sync());
        }
        EXPECT_TRUE(kyt::all(ok));
        KYT_EXPECT_OK(ky_free(s.a));
    }
}

/* ky_sync (no drop) makes a rank's writes to its own elements on a neighbour-homed page visible to ranks
 * that fetch the page afterwards, as a home's writes are. */
TEST(DsmRules, SyncPublishesOwnElementsOnSharedPages)
{
    Slabs s(3 * kyt::nranks() + 1, 37, 53, 8);
    ASSERT_TRUE(s.a);
    for (int z = s.st; z < s.ed; z++)
        for (int y = 0; y < s.ny; y++)
            for (int x = 0; x < s.nx; x++) s.put(z, y, x, value(3, s.idx(z, y, x)));
    KYT_EXPECT_OK(ky_sync());
    /* the pages this rank wrote as a cached copy stay as they are (ky_sync keeps them): not checked */
    size_t mine_lo = s.idx(s.st, 0, 0) * 8 / page(), mine_hi = (s.idx(s.ed, 0, 0) * 8 - 1) / page();
    auto held = [&](size_t e) {
        size_t pg = e * 8 / page();
        return s.st < s.ed && pg >= mine_lo && pg <= mine_hi && ky_home_of(s.a + pg * page()) != s.me;
    };
    bool ok = true;
    for (int z = 0; z < s.nz && ok; z++)
        for (int y = 0; y < s.ny && ok; y++)
            for (int x = 0; x < s.nx && ok; x++)
                if (!held(s.idx(z, y, x)) && !s.is(z, y, x, value(3, s.idx(z, y, x)))) {
                    double got;
                    memcpy(&got, s.a + s.idx(z, y, x) * 8, 8);
                    ADD_FAILURE() << "(" << z << "," << y << "," << x << ") owner " << s.owner(z) << " home "
                                  << ky_home_of(s.a + s.idx(z, y, x) * 8) << ": " << got;
                    ok = false;
                }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_free(s.a));
}

/* Writes through a read-write preload: each rank writes the odd x of its neighbours' nearest planes, the
 * owners the even x of their own planes; all of it is visible after ky_barrier. Then the same with
 * ky_overload_array between: it refreshes the neighbours' elements (the local writes to them are dropped)
 * and keeps the rank's own. */
TEST(DsmRules, PreloadWritesIntoNeighboursSurviveBarrier)
{
    Slabs s(24, 37, 53, 8);
    ASSERT_TRUE(s.a);
    for (int z = s.st; z < s.ed; z++)
        for (int y = 0; y < s.ny; y++)
            for (int x = 0; x < s.nx; x++) s.put(z, y, x, value(0, s.idx(z, y, x)));
    KYT_EXPECT_OK(ky_barrier());
    int lo = std::max(s.st - 1, 0), hi = std::min(s.ed + 1, s.nz);
    size_t glb[3] = {(size_t)s.nz, (size_t)s.ny, (size_t)s.nx},
           reg[3] = {(size_t)(hi - lo), (size_t)s.ny, (size_t)s.nx};
    if (s.st < s.ed) KYT_EXPECT_OK(ky_preload_array(s.a + s.idx(lo, 0, 0) * 8, glb, reg, 3, 8, 1));
    auto mine = [&](int z, int x) { return s.owner(z) == s.me ? x % 2 == 0 : x % 2 == 1; };
    for (int z = lo; z < hi && s.st < s.ed; z++)
        for (int y = 0; y < s.ny; y++)
            for (int x = 0; x < s.nx; x++)
                if (mine(z, x) && (s.owner(z) == s.me || z == s.st - 1 || z == s.ed))
                    s.put(z, y, x, value(1, s.idx(z, y, x)));
    KYT_EXPECT_OK(ky_barrier());
    auto expect1 = [&](int z, int y, int x) {
        int oz = s.owner(z), b = (s.nz + s.n - 1) / s.n;
        bool first = z == oz * b && oz > 0, last = z == std::min(s.nz, (oz + 1) * b) - 1 && oz < s.n - 1;
        bool odd_written = x % 2 == 1 && (first || last);
        return x % 2 == 0 || odd_written ? value(1, s.idx(z, y, x)) : value(0, s.idx(z, y, x));
    };
    bool ok = true;
    for (int z = 0; z < s.nz && ok; z++)
        for (int y = 0; y < s.ny && ok; y++)
            for (int x = 0; x < s.nx && ok; x++)
                if (!s.is(z, y, x, expect1(z, y, x))) {
                    ADD_FAILURE() << "(" << z << "," << y << "," << x << ") owner " << s.owner(z)
                                  << " after the barrier";
                    ok = false;
                }
    /* overload: own writes kept, neighbours' refreshed */
    if (s.st < s.ed) KYT_EXPECT_OK(ky_preload_array(s.a + s.idx(lo, 0, 0) * 8, glb, reg, 3, 8, 1));
    for (int z = lo; z < hi && s.st < s.ed; z++)
        for (int x = 0; x < s.nx; x++) s.put(z, 1, x, s.owner(z) == s.me ? value(2, s.idx(z, 1, x)) : -5.0);
    if (s.st < s.ed) KYT_EXPECT_OK(ky_overload_array(s.a + s.idx(lo, 0, 0) * 8, glb, reg, 3, 8, 1));
    for (int z = lo; z < hi && s.st < s.ed && ok; z++)
        for (int x = 0; x < s.nx && ok; x++) {
            double want = s.owner(z) == s.me ? value(2, s.idx(z, 1, x)) : expect1(z, 1, x);
            if (!s.is(z, 1, x, want)) {
                ADD_FAILURE() << "rank " << s.me << " (" << z << ",1," << x << ") owner " << s.owner(z)
                              << " after the overload: " << ((double *)s.a)[s.idx(z, 1, x)] << " expected "
                              << want;
                ok = false;
            }
        }
    KYT_EXPECT_OK(ky_barrier());
    for (int z = 0; z < s.nz && ok; z++)
        for (int x = 0; x < s.nx && ok; x++)
            if (!s.is(z, 1, x, value(2, s.idx(z, 1, x)))) {
                ADD_FAILURE() << "(" << z << ",1," << x << ") owner " << s.owner(z)
                              << " after the second barrier";
                ok = false;
            }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(s.a));
}

/* A spin lock on ky_trylock and one on ky_compare_swap (4- and 8-byte words), from 3 threads per rank. */
TEST(DsmRules, TrylockAndCompareSwapExclude)
{
    int n = kyt::nranks(), me = kyt::rank(), T = 3, K = kyt::scaled(100, 20);
    long *c = (long *)kyt::galloc(4 * sizeof(long), n - 1);
    ASSERT_TRUE(c);
    uint32_t *w4 = (uint32_t *)(c + 2);
    uint64_t *w8 = (uint64_t *)(c + 3);
    KYT_EXPECT_OK(ky_barrier());
    std::atomic<int> bad{0};
    run_threads(T, [&](int t) {
        uint64_t mark = (uint64_t)(me * T + t + 1);
        for (int k = 0; k < K; k++) {
            int st;
            while ((st = ky_trylock(7)) == KY_PENDING) std::this_thread::yield();
            if (st != KY_OK) bad++;
            c[0]++;
            if (ky_unlock(7)) bad++;
            /* compare-and-swap locks: the counters are read and written with the atomics themselves */
            uint64_t old = 0;
            for (;;) {
                if (ky_compare_swap(w4, 4, 0, mark, &old)) bad++;
                if (old == 0) break;
                std::this_thread::yield();
            }
            kyt::fadd(c + 1, 1);
            if (ky_compare_swap(w4, 4, mark, 0, &old) || old != mark) bad++;
            if (ky_compare_swap(w8, 8, (uint64_t)k << 40, (uint64_t)k << 40, &old))
                bad++; /* may or may not match */
        }
    });
    KYT_EXPECT_OK(ky_barrier());
    long want = (long)n * T * K;
    EXPECT_EQ(want, c[0]);
    EXPECT_EQ(want, kyt::fadd(c + 1, 0));
    uint64_t old = 1;
    KYT_EXPECT_OK(ky_compare_swap(w4, 4, 0, 0, &old));
    EXPECT_EQ(0u, old);
    /* 8 bytes: exactly one of the ranks' swaps from 0 wins */
    KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_compare_swap(w8, 8, 0, 0x100000000ull + me, &old));
    int won = old == 0, wins = (int)kyt::sum((uint64_t)won);
    EXPECT_EQ(1, wins);
    EXPECT_TRUE(kyt::all(bad == 0 && c[0] == want));
    KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_free(c));
}

TEST(DsmRules, AtomicsRefuseBadInput)
{
    long *c = (long *)kyt::galloc(2 * sizeof(long), 0);
    ASSERT_TRUE(c);
    uint64_t old;
    long local = 0;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_compare_swap(c, 2, 0, 1, &old));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_compare_swap((char *)c + 2, 4, 0, 1, &old));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_compare_swap((char *)c + 4, 8, 0, 1, &old));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_compare_swap(c, 4, 1ull << 32, 1, &old));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_compare_swap(&local, 8, 0, 1, &old));
    EXPECT_NE(nullptr, strstr(ky_last_error(), "ky_compare_swap"));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_trylock(-1));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_trylock(KY_DSM_LOCKS));
    KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_free(c));
}

/* A new allocation is guarded in its first intervals, but a page still as allocated (all zeros at the last
 * synchronisation) needs no copy when its home first writes it: a late fetch gets zeros, which is the
 * synchronised version. In the next interval the page holds data, and the home's writes copy it again. */
TEST(DsmRules, FreshPagesServeZerosWithoutCopies)
{
    int n = kyt::nranks(), me = kyt::rank();
    const char *mode = getenv("KY_DSM_SNAPSHOT");
    if (n < 2 || (mode && !strcmp(mode, "0"))) GTEST_SKIP() << "needs 2+ ranks and snapshots on";
    int per = (int)(3 * page() / sizeof(long)), next = (me + 1) % n;
    int dims[] = {n * per, -1}, divs[] = {n, -1};
    long *a = (long *)ky_mapalloc(dims, divs, sizeof(long), 0, n);
    ASSERT_TRUE(a);
    long first = (long)next * per, last = first + per - 1;
    ky_dsm_stats_t s0, s1, s2;
    ky_dsm_stats(&s0);
    for (long i = (long)me * per; i < (long)(me + 1) * per; i++) a[i] = 7 * i + 1;
    ky_dsm_stats(&s1);
    EXPECT_EQ(s0.home_snapshots, s1.home_snapshots) << "the first writes since the allocation copied pages";
    ky_comm_barrier();                       /* the neighbour has written: not a DSM synchronisation */
    bool ok = a[first] == 0 && a[last] == 0; /* a late fetch: the synchronised version */
    KYT_EXPECT_OK(ky_barrier());
    ok = ok && a[first] == 7 * first + 1;
    for (long i = (long)me * per; i < (long)(me + 1) * per; i++) a[i] = -i; /* still new: guarded, copied */
    ky_dsm_stats(&s2);
    EXPECT_GE(s2.home_snapshots, s1.home_snapshots + 3);
    ky_comm_barrier();
    ok = ok && a[last] == 7 * last + 1;
    KYT_EXPECT_OK(ky_barrier());
    ok = ok && a[first] == -first && a[last] == -last;
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

/* What changes a page that is still as allocated before its home writes it: an atomic at the home, a lock
 * holder's diff, the home's own writes under a lock. Each is seen at once, so the home's later first write
 * must copy the page, and a fetch must find them (a page taken for all zeros lost them). */
TEST(DsmRules, FreshPagesKeepAtomicsAndReleases)
{
    int n = kyt::nranks(), me = kyt::rank();
    const char *mode = getenv("KY_DSM_SNAPSHOT");
    if (n < 2 || (mode && !strcmp(mode, "0"))) GTEST_SKIP() << "needs 2+ ranks and snapshots on";
    long *p = (long *)kyt::galloc(page(), 0), *q = (long *)kyt::galloc(page(), 0),
         *r = (long *)kyt::galloc(page(), 0);
    ASSERT_TRUE(p && q && r);
    if (me == 1) {
        KYT_EXPECT_OK(ky_fetch_add(&p[1], 5, NULL));
        KYT_EXPECT_OK(ky_lock(3));
        q[2] = 3;
        KYT_EXPECT_OK(ky_unlock(3));
    }
    if (me == 0) {
        KYT_EXPECT_OK(ky_lock(4));
        r[0] = 4;
        KYT_EXPECT_OK(ky_unlock(4));
    }
    ky_comm_barrier();
    if (me == 0) p[0] = 9, q[0] = 1; /* the home's first plain writes of the interval */
    ky_comm_barrier();
    bool ok = true;
    if (me == n - 1) {
        KYT_EXPECT_OK(ky_lock(3)); /* drops every cached copy: what follows is fetched from the home */
        ok = q[2] == 3 && q[0] == 0 && p[1] == 5 && p[0] == 0;
        KYT_EXPECT_OK(ky_unlock(3));
        KYT_EXPECT_OK(ky_lock(4));
        ok = ok && r[0] == 4;
        KYT_EXPECT_OK(ky_unlock(4));
    }
    KYT_EXPECT_OK(ky_barrier());
    ok = ok && p[0] == 9 && p[1] == 5 && q[0] == 1 && q[2] == 3 && r[0] == 4;
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(p));
    KYT_EXPECT_OK(ky_free(q));
    KYT_EXPECT_OK(ky_free(r));
}

/* A rank that leaves a ky_sync before a page's home has applied that sync's diffs, and at once sends the
 * same bytes again in a lock's release (or changes them with an atomic at the home), must find the later
 * value at the home: the release's diff waits behind the sync's (applied first, the sync's older bytes
 * overwrote it; DsmStress.Mixed lost a write so about once in a few hundred CI runs), and the atomic waits
 * for the home's publish, as a fetch does. The window is widened: every rank but 0 writes all its own
 * elements of a cyclic array whose every page is mixed, so rank 0 applies thousands of small diff records
 * before it reaches the last one, which the writer then changes again and releases. */
TEST(DsmRules, ReleaseOrAtomicAfterSyncLandsAfterTheSyncsDiffs)
{
    int n = kyt::nranks(), me = kyt::rank();
    if (n < 2) GTEST_SKIP() << "needs 2+ ranks";
    const int block = 3, nelem = (int)(16 * page() / 8) + 5; /* odd blocks over 16 pages and a bit */
    int dims[] = {nelem, -1}, divs[] = {(nelem + block - 1) / block, -1};
    long *a = (long *)ky_mapalloc(dims, divs, 8, 0, n);
    ASSERT_TRUE(a);
    auto owner = [&](int i) { return (i / block) % n; };
    /* the last of my elements on a page homed at rank 0 (every rank but 0 has one) */
    int last = -1;
    for (int i = 0; i < nelem; i++)
        if (owner(i) == me && ky_home_of(&a[i]) == 0) last = i;
    bool ok = true;
    int rounds = kyt::scaled(6, 3);
    for (int round = 1; round <= rounds; round++) {
        if (me != 0)
            for (int i = 0; i < nelem; i++)
                if (owner(i) == me) a[i] = round * 1000000L + i;
        KYT_EXPECT_OK(ky_sync());
        /* odd rounds: a release of the element; even rounds: an atomic on it at its home, which must
         * see the synchronised value (and not be overwritten by it) */
        long want = round % 2 ? -round : round * 1000000L + last + 5;
        if (me != 0 && last >= 0 && round % 2) {
            a[last] = -round;
            KYT_EXPECT_OK(ky_lock(me));
            KYT_EXPECT_OK(ky_unlock(me));
        } else if (me != 0 && last >= 0) {
            long was = 0;
            KYT_EXPECT_OK(ky_fetch_add(&a[last], 5, &was));
            if (was != want - 5) {
                ADD_FAILURE() << "round " << round << ": fetch_add on element " << last << " found " << was
                              << ", expected " << want - 5 << " (written before the ky_sync)";
                ok = false;
            }
        }
        KYT_EXPECT_OK(ky_barrier());
        for (int r = 1; r < n; r++) {
            int lr = -1;
            for (int i = 0; i < nelem; i++)
                if (owner(i) == r && ky_home_of(&a[i]) == 0) lr = i;
            long w = round % 2 ? -round : round * 1000000L + lr + 5;
            if (lr >= 0 && a[lr] != w) {
                ADD_FAILURE() << "round " << round << ": element " << lr << " of rank " << r << " is "
                              << a[lr] << ", expected " << w << " (its " << (round % 2 ? "release" : "atomic")
                              << " after the ky_sync)";
                ok = false;
            }
        }
        KYT_EXPECT_OK(ky_barrier());
    }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

}  // namespace
