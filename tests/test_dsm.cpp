/* The global address space (layer 4): allocation and homes, coherence at barrier / sync / sync_drop, the
 * synchronised-version rule, preload / overload / push, locks and fetch_add, threads, bad input.
 * References are computed another way: the mapalloc formula written out here, serial replays of the same
 * random operations, MPI_Allgather of what each rank saw. */
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include "kyt.h"

namespace {

size_t page()
{
    return ky_page_size();
}

/* Every rank got the same pointer. */
bool same_everywhere(const void *p)
{
    unsigned long long v = (unsigned long long)(uintptr_t)p, mn = 0, mx = 0;
    ky_comm_barrier();
    MPI_Allreduce(&v, &mn, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &mx, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return mn == mx;
}

/* mSMS's mapping written out independently: block coordinates, row-major block number, cyclic deal. */
int formula_home(const std::vector<int> &dims, const std::vector<int> &divs, size_t e, int first, int count)
{
    std::vector<size_t> idx(dims.size());
    for (int d = (int)dims.size() - 1; d >= 0; d--) {
        idx[d] = e % dims[d];
        e /= dims[d];
    }
    size_t blk = 0;
    for (size_t d = 0; d < dims.size(); d++) {
        size_t len = (dims[d] + divs[d] - 1) / divs[d];
        blk = blk * divs[d] + idx[d] / len;
    }
    return first + (int)(blk % count);
}

TEST(Dsm, AllocSamePointerAndHome)
{
    int n = kyt::nranks();
    bool ok = true;
    for (int h = 0; h < n; h++) {
        char *p = (char *)kyt::galloc(3 * page() + 5, h);
        ok = ok && p && same_everywhere(p) && ky_home_of(p) == h && ky_home_of(p + 3 * page()) == h;
        ok = ok && ky_is_global(p) && !ky_is_global(&ok);
        EXPECT_EQ(KY_OK, ky_free(p)) << ky_last_error();
    }
    EXPECT_TRUE(kyt::all(ok));
}

TEST(Dsm, MapallocHomesFollowFormula)
{
    int n = kyt::nranks();
    size_t pg = page();
    struct Case {
        std::vector<int> dims, divs;
        int first, count;
    };
    /* page-aligned z slabs (every byte's home is the formula's), 2-D cyclic blocks, unaligned planes */
    std::vector<Case> cases = {
        {{4 * n, 64, (int)(pg / 64 / 8)}, {n, 1, 1}, 0, n},
        {{8, 2 * (int)(pg / 8)}, {4, 2}, 0, n},
        {{3 * n, 7, 100}, {n, 1, 1}, 0, n},
        {{2 * n, 16, (int)(pg / 128)}, {2 * n, 1, 1}, n > 1 ? 1 : 0, n > 1 ? n - 1 : 1},
    };
    bool ok = true;
    for (auto &c : cases) {
        std::vector<int> d = c.dims, v = c.divs;
        d.push_back(-1), v.push_back(-1);
        double *a = (double *)ky_mapalloc(d.data(), v.data(), sizeof(double), c.first, c.count);
        ok = ok && a && same_everywhere(a);
        if (!a) continue;
        size_t total = 1;
        for (int x : c.dims) total *= x;
        for (size_t e = 0; e < total; e += 1 + e / 7) {
            size_t page_first = ((e * 8) / pg) * pg / 8; /* first element of e's page */
            int want = formula_home(c.dims, c.divs, page_first, c.first, c.count);
            if (ky_home_of(a + e) != want) {
                ADD_FAILURE() << "element " << e << ": home " << ky_home_of(a + e) << ", formula " << want;
                ok = false;
                break;
            }
        }
        EXPECT_EQ(KY_OK, ky_free(a));
    }
    EXPECT_TRUE(kyt::all(ok));
}

/* Each rank writes its own block; after ky_barrier everybody reads everything. */
TEST(Dsm, BarrierMakesWritesVisible)
{
    int n = kyt::nranks(), me = kyt::rank();
    int per = (int)(2 * page() / sizeof(long));
    int dims[] = {n * per, -1}, divs[] = {n, -1};
    long *a = (long *)ky_mapalloc(dims, divs, sizeof(long), 0, n);
    ASSERT_TRUE(a);
    bool ok = true;
    for (int round = 0; round < 3; round++) {
        for (int i = me * per; i < (me + 1) * per; i++) a[i] = round * 1000000L + i;
        KYT_EXPECT_OK(ky_barrier());
        for (int i = 0; i < n * per; i += 17) ok = ok && a[i] == round * 1000000L + i;
        KYT_EXPECT_OK(ky_barrier());
    }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

/* Every rank writes its own bytes of the same pages (homed on rank 0); all writes survive. */
TEST(Dsm, FalseSharingAllWritesSurvive)
{
    int n = kyt::nranks(), me = kyt::rank();
    size_t bytes = 2 * page() + 100;
    unsigned char *p = (unsigned char *)kyt::galloc(bytes, 0);
    ASSERT_TRUE(p);
    for (int round = 1; round <= 3; round++) {
        for (size_t i = (size_t)me; i < bytes; i += n) p[i] = (unsigned char)(round * 31 + i * 7 + me);
        KYT_EXPECT_OK(ky_barrier());
        bool ok = true;
        for (size_t i = 0; i < bytes; i++) ok = ok && p[i] == (unsigned char)(round * 31 + i * 7 + i % n);
        EXPECT_TRUE(kyt::all(ok)) << "round " << round;
    }
    KYT_EXPECT_OK(ky_free(p));
}

/* The same with 4 threads per rank writing interleaved bytes. */
TEST(Dsm, FalseSharingThreads)
{
    int n = kyt::nranks(), me = kyt::rank(), T = 4;
    size_t bytes = 3 * page();
    unsigned char *p = (unsigned char *)kyt::galloc(bytes, n - 1);
    ASSERT_TRUE(p);
    std::vector<std::thread> th;
    for (int t = 0; t < T; t++)
        th.emplace_back([=] {
            for (size_t i = (size_t)(me * T + t); i < bytes; i += (size_t)(n * T))
                p[i] = (unsigned char)(i * 13 + 1);
        });
    for (auto &t : th) t.join();
    KYT_EXPECT_OK(ky_barrier());
    bool ok = true;
    std::vector<std::thread> rd;
    std::atomic<int> bad{0};
    for (int t = 0; t < T; t++)
        rd.emplace_back([&, t] {
            for (size_t i = (size_t)t; i < bytes; i += T)
                if (p[i] != (unsigned char)(i * 13 + 1)) bad++;
        });
    for (auto &t : rd) t.join();
    ok = bad == 0;
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(p));
}

/* Random reads and writes over pages of every home, replayed serially on every rank as the reference. In
 * each round every position has one writer (chosen by hash); a read sees the value at the last barrier or
 * the reader's own write of this round, never another rank's write of this round. */
TEST(Dsm, RandomStressAgainstSerialReplay)
{
    int n = kyt::nranks(), me = kyt::rank();
    size_t N = 6 * page() / sizeof(uint32_t) * n;
    int dims[] = {(int)N, -1}, divs[] = {3 * n, -1};
    uint32_t *a = (uint32_t *)ky_mapalloc(dims, divs, sizeof(uint32_t), 0, n);
    ASSERT_TRUE(a);
    std::vector<uint32_t> ref(N, 0), mine(N, 0);
    std::vector<char> wrote(N);
    int rounds = kyt::scaled(6, 2), ops = kyt::scaled(3000, 500);
    bool ok = true;
    for (int r = 0; r < rounds; r++) {
        std::fill(wrote.begin(), wrote.end(), 0);
        std::mt19937_64 g(kyt::mix(kyt::seed(), r, me));
        for (int k = 0; k < ops; k++) {
            size_t i = g() % N;
            int writer = (int)(kyt::mix(i, r) % n);
            if (writer == me && g() % 2) {
                uint32_t v = (uint32_t)kyt::mix(i, r, k);
                a[i] = v;
                mine[i] = v, wrote[i] = 1;
            } else {
                uint32_t want = wrote[i] ? mine[i] : ref[i];
                if (a[i] != want && ok) {
                    ADD_FAILURE() << "round " << r << " index " << i << " (home " << ky_home_of(a + i)
                                  << "): read " << a[i] << ", expected " << want;
                    ok = false;
                }
            }
        }
        KYT_EXPECT_OK(ky_barrier());
        /* replay every rank's writes of this round into the reference */
        for (int q = 0; q < n; q++) {
            std::mt19937_64 gq(kyt::mix(kyt::seed(), r, q));
            for (int k = 0; k < ops; k++) {
                size_t i = gq() % N;
                int writer = (int)(kyt::mix(i, r) % n);
                if (writer == q && gq() % 2) ref[i] = (uint32_t)kyt::mix(i, r, k);
            }
        }
        for (size_t i = 0; i < N && ok; i += 3) ok = a[i] == ref[i];
    }
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

/* The home writes after a synchronisation; a rank that fetches later (ordered by a comm-layer barrier,
 * which is not a DSM synchronisation) still sees the synchronised value. */
TEST(Dsm, LateFetchSeesSynchronisedVersion)
{
    int n = kyt::nranks(), me = kyt::rank();
    long *p = (long *)kyt::galloc(page(), 0);
    ASSERT_TRUE(p);
    if (me == 0) p[0] = 1, p[page() / 8 - 1] = 1;
    KYT_EXPECT_OK(ky_barrier());
    if (me == 0) p[0] = 2; /* after the barrier: not visible to others until the next one */
    ky_comm_barrier();
    bool ok = true;
    if (me != 0)
        ok = p[0] == 1 && p[page() / 8 - 1] == 1;
    else
        ok = p[0] == 2;
    KYT_EXPECT_OK(ky_barrier());
    ok = ok && p[0] == 2;
    EXPECT_TRUE(kyt::all(ok));
    (void)n;
    KYT_EXPECT_OK(ky_free(p));
}

/* Write notices (KY_DSM_SNAPSHOT=1): a barrier drops only the cached pages another rank changed since the
 * last barrier, whichever way it changed them: the home's stores, a barrier's diff, a diff sent at a lock
 * release, an atomic at the home. Every rank caches all six pages, then each page changes one way (or not
 * at all), and after the barrier every rank must read the new values: a missing notice leaves a stale copy.
 * Under the other modes every cached page goes, and the values must be the same. */
TEST(Dsm, BarrierDropsWhatOthersChanged)
{
    int n = kyt::nranks(), me = kyt::rank();
    if (n < 2) return;
    size_t pg = page(), per = pg / sizeof(long);
    long *p = (long *)kyt::galloc(7 * pg, 0); /* all homed at rank 0 */
    ASSERT_TRUE(p);
    int w = n - 1; /* the writer that is not the home */
    for (int round = 1; round <= 3; round++) {
        KYT_EXPECT_OK(ky_barrier());
        long sum = 0;
        for (size_t q = 0; q < 7; q++) sum += p[q * per]; /* every rank caches every page */
        (void)sum;
        KYT_EXPECT_OK(ky_barrier()); /* nothing changed: the copies may stay */
        long v = 100 * round;
        /* page 0: nobody. The home's stores come last in the allocation (a home's write fault also opens
         * the following pages, and notices them) */
        if (me == w) p[1 * per + 1] = v + 1; /* page 1: a barrier diff */
        if (me == w) {                       /* page 2: a diff sent at a lock release */
            KYT_EXPECT_OK(ky_lock(3));
            p[2 * per + 2] = v + 2;
            KYT_EXPECT_OK(ky_unlock(3));
        }
        if (me == w)
            KYT_EXPECT_OK(ky_fetch_add(&p[3 * per + 3], 1, nullptr)); /* page 3: an atomic at the home */
        if (me) p[4 * per + 8 + me] = v + me; /* page 4: every other rank its own word */
        if (me == 0) {                        /* page 5: the home's store under a lock */
            KYT_EXPECT_OK(ky_lock(4));
            p[5 * per + 5] = v + 5;
            KYT_EXPECT_OK(ky_unlock(4));
        }
        if (me == 0) p[6 * per + 6] = v + 6; /* page 6: the home's store */
        KYT_EXPECT_OK(ky_barrier());
        bool ok = p[0] == 0 && p[per + 1] == v + 1 && p[2 * per + 2] == v + 2 && p[3 * per + 3] == round &&
                  p[5 * per + 5] == v + 5 && p[6 * per + 6] == v + 6;
        for (int r = 1; r < n; r++) ok = ok && p[4 * per + 8 + r] == v + r;
        if (!ok)
            ADD_FAILURE() << "rank " << me << " round " << round << ": pages 0-3, 5, 6: " << p[0] << " "
                          << p[per + 1] << " " << p[2 * per + 2] << " " << p[3 * per + 3] << " "
                          << p[5 * per + 5] << " " << p[6 * per + 6];
        EXPECT_TRUE(kyt::all(ok));
    }
    KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_free(p));
}

/* KY_DSM_SNAPSHOT=2: a home copies only pages some rank fetched in the last KY_DSM_SHARED_WINDOW intervals.
 * A page nobody fetches is written without a snapshot; once fetched it is guarded again from the next
 * interval, and a late fetcher then sees the synchronised version. */
TEST(Dsm, SnapshotsOnlyForFetchedPages)
{
    int n = kyt::nranks(), me = kyt::rank();
    const char *mode = getenv("KY_DSM_SNAPSHOT"), *win = getenv("KY_DSM_SHARED_WINDOW");
    int window = win ? atoi(win) : -1;
    if (n < 2 || (mode && strcmp(mode, "2")) || window == 0)
        GTEST_SKIP() << "needs 2+ ranks, KY_DSM_SNAPSHOT=2 (the default) and KY_DSM_SHARED_WINDOW != 0";
    if (window < 0) window = 2; /* a new allocation counts as fetched for 2 intervals */
    int per = (int)(4 * page() / sizeof(long));
    int dims[] = {n * per, -1}, divs[] = {n, -1};
    long *a = (long *)ky_mapalloc(dims, divs, sizeof(long), 0, n);
    ASSERT_TRUE(a);
    for (int k = 0; k <= window; k++) KYT_EXPECT_OK(ky_sync()); /* the allocation's own history expires */
    ky_dsm_stats_t s0, s1, s2, s3;
    ky_dsm_stats(&s0);
    for (int i = me * per; i < (me + 1) * per; i++) a[i] = 7 * i + 1; /* nobody fetched these: no copies */
    ky_dsm_stats(&s1);
    EXPECT_EQ(s0.home_snapshots, s1.home_snapshots);
    EXPECT_GE(s1.write_faults, s0.write_faults + 1);
    KYT_EXPECT_OK(ky_sync());
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    bool ok =
        a[next * per] == 7 * next * per + 1; /* first fetch: the home is not guarding it this interval */
    ky_comm_barrier(); /* the fetch is counted where it was copied: at the home or at a same-node reader */
    ky_dsm_stats(&s2);
    unsigned long long unguarded = s2.unguarded_reads - s1.unguarded_reads, total = 0;
    MPI_Allreduce(&unguarded, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(total, (unsigned long long)n) << "each rank's first page was fetched once, unguarded";
    KYT_EXPECT_OK(ky_sync_drop());
    a[me * per] = -1; /* fetched last interval: guarded now, so this write snapshots */
    ky_dsm_stats(&s3);
    EXPECT_GE(s3.home_snapshots, s2.home_snapshots + 1);
    ky_comm_barrier();
    ok = ok && a[next * per] == 7 * next * per + 1; /* late fetch: the synchronised version, not -1 */
    KYT_EXPECT_OK(ky_barrier());
    ok = ok && a[prev * per] == -1 && a[next * per] == -1;
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

/* A page fetched once stays guarded (KY_DSM_SHARED_WINDOW=-1, the default): after many intervals in which
 * nobody fetched it, a reader that fetches it while its home writes it still gets the synchronised version.
 * With a window (KY_DSM_SHARED_WINDOW=2, the former default) this read saw the home's newer value, which is
 * how ky_stencil's faults variant went wrong when it ran after the barrier variant. The home's store and the
 * neighbour's read are ordered by an MPI barrier, which is not a DSM synchronisation. */
TEST(Dsm, GuardOutlivesQuietIntervals)
{
    int n = kyt::nranks(), me = kyt::rank();
    const char *mode = getenv("KY_DSM_SNAPSHOT"), *win = getenv("KY_DSM_SHARED_WINDOW");
    if (n < 2 || (mode && !strcmp(mode, "0")) || (win && atoi(win) >= 0))
        GTEST_SKIP() << "needs 2+ ranks, snapshots on and KY_DSM_SHARED_WINDOW=-1 (the defaults)";
    int per = (int)(2 * page() / sizeof(long));
    int dims[] = {n * per, -1}, divs[] = {n, -1};
    long *a = (long *)ky_mapalloc(dims, divs, sizeof(long), 0, n);
    ASSERT_TRUE(a);
    int next = (me + 1) % n;
    for (int i = me * per; i < (me + 1) * per; i++) a[i] = 1;
    KYT_EXPECT_OK(ky_barrier());
    bool ok = a[next * per] == 1; /* the sharing pattern: everyone reads its neighbour's first page */
    for (int k = 0; k < 8; k++)
        KYT_EXPECT_OK(ky_sync_drop()); /* a quiet spell: nobody fetches, nobody writes */
    a[me * per] = 2;                   /* the home writes its page in this interval ... */
    ky_comm_barrier();                 /* ... before the neighbour reads it in the same interval */
    ok = ok && a[next * per] == 1;     /* the version of the last synchronisation, not 2 */
    KYT_EXPECT_OK(ky_barrier());
    ok = ok && a[next * per] == 2;
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

/* ky_sync keeps cached copies (stale on purpose); ky_sync_drop discards them with local writes. */
TEST(Dsm, SyncKeepsAndSyncDropDiscards)
{
    int n = kyt::nranks(), me = kyt::rank();
    long *p = (long *)kyt::galloc(page(), 0);
    ASSERT_TRUE(p);
    if (me == 0) p[0] = 10;
    KYT_EXPECT_OK(ky_barrier());
    bool ok = p[0] == 10; /* others now hold a cached copy */
    KYT_EXPECT_OK(ky_sync());
    if (me == 0) p[0] = 11;
    KYT_EXPECT_OK(ky_sync());
    ok = ok && (me == 0 ? p[0] == 11 : p[0] == 10); /* cached copy kept across ky_sync */
    if (me != 0) p[1] = 99;                         /* a local write to a page homed elsewhere */
    KYT_EXPECT_OK(ky_sync_drop());
    ok = ok && p[0] == 11 && p[1] == 0; /* refetched; the write was dropped */
    KYT_EXPECT_OK(ky_barrier());
    ok = ok && p[1] == 0;
    EXPECT_TRUE(kyt::all(ok));
    (void)n;
    KYT_EXPECT_OK(ky_free(p));
}

/* preload fetches a 3-D region in bulk (no faults when reading it); overload refreshes it in place. */
TEST(Dsm, PreloadAndOverload)
{
    int n = kyt::nranks(), me = kyt::rank();
    size_t NX = page() / sizeof(double), NY = 4, NZ = 4 * (size_t)n;
    int dims[] = {(int)NZ, (int)NY, (int)NX, -1}, divs[] = {n, 1, 1, -1};
    double *a = (double *)ky_mapalloc(dims, divs, sizeof(double), 0, n);
    ASSERT_TRUE(a);
    auto at = [&](size_t z, size_t y, size_t x) -> double & { return a[(z * NY + y) * NX + x]; };
    for (size_t z = 4 * me; z < 4 * (size_t)(me + 1); z++)
        for (size_t y = 0; y < NY; y++)
            for (size_t x = 0; x < NX; x++) at(z, y, x) = z * 1e6 + y * 1e3 + x;
    KYT_EXPECT_OK(ky_barrier());
    int right = (me + 1) % n;
    size_t glb[3] = {NZ, NY, NX}, reg[3] = {2, NY, NX / 2};
    ky_dsm_stats_t s0, s1, s2;
    ky_dsm_stats(&s0);
    KYT_EXPECT_OK(ky_preload_array(&at(4 * right, 0, 0), glb, reg, 3, sizeof(double), 1));
    ky_dsm_stats(&s1);
    bool ok = true;
    for (size_t z = 4 * right; z < 4 * right + 2; z++)
        for (size_t y = 0; y < NY; y++)
            for (size_t x = 0; x < NX / 2; x++) ok = ok && at(z, y, x) == z * 1e6 + y * 1e3 + x;
    at(4 * right, 0, 0) = -1; /* preloaded read-write: no fault */
    ky_dsm_stats(&s2);
    if (n > 1) {
        EXPECT_EQ(s1.pages_preloaded - s0.pages_preloaded, 2 * NY);
        EXPECT_EQ(s2.read_faults + s2.write_faults, s1.read_faults + s1.write_faults)
            << "faulted on preloaded pages";
    }
    KYT_EXPECT_OK(ky_sync());
    for (size_t z = 4 * me; z < 4 * (size_t)(me + 1); z++) at(z, 0, 0) = -7.0 - z; /* homes update */
    KYT_EXPECT_OK(ky_sync());
    ky_dsm_stats(&s2); /* the homes' own writes above fault (snapshots); the overload must not */
    KYT_EXPECT_OK(ky_overload_array(&at(4 * right, 0, 0), glb, reg, 3, sizeof(double), 1));
    ky_dsm_stats_t s3;
    ky_dsm_stats(&s3);
    ok = ok && at(4 * right, 0, 0) == -7.0 - 4 * right && at(4 * right + 1, 0, 0) == -7.0 - (4 * right + 1) &&
         at(4 * right + 1, 2, 3) == (4 * right + 1) * 1e6 + 2e3 + 3;
    if (n > 1) EXPECT_EQ(s3.read_faults + s3.write_faults, s2.read_faults + s2.write_faults);
    KYT_EXPECT_OK(ky_sync_drop());
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

/* The home pushes a region; the receiver reads it without faulting. */
TEST(Dsm, PushArrivesAheadOfNeed)
{
    int n = kyt::nranks(), me = kyt::rank();
    size_t N = 4 * page() / sizeof(int);
    int *a = (int *)kyt::galloc(N * sizeof(int), 0);
    ASSERT_TRUE(a);
    if (me == 0)
        for (size_t i = 0; i < N; i++) a[i] = (int)(i * 3);
    KYT_EXPECT_OK(ky_barrier());
    size_t glb[1] = {N}, reg[1] = {N};
    if (me == 0)
        for (int r = 1; r < n; r++) KYT_EXPECT_OK(ky_push_array(a, glb, reg, 1, sizeof(int), r));
    KYT_EXPECT_OK(ky_sync());
    ky_dsm_stats_t s0, s1;
    ky_dsm_stats(&s0);
    bool ok = true;
    for (size_t i = 0; i < N; i += 5) ok = ok && a[i] == (int)(i * 3);
    ky_dsm_stats(&s1);
    if (me != 0) EXPECT_EQ(s1.read_faults, s0.read_faults) << "pushed pages faulted";
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_free(a));
}

TEST(Dsm, FetchAddCounts)
{
    int n = kyt::nranks(), T = 4, K = kyt::scaled(200, 20);
    long *c = (long *)kyt::galloc(sizeof(long) * 2, n - 1);
    ASSERT_TRUE(c);
    std::vector<long> got((size_t)T * K);
    std::vector<std::thread> th;
    for (int t = 0; t < T; t++)
        th.emplace_back([&, t] {
            for (int k = 0; k < K; k++) got[(size_t)t * K + k] = kyt::fadd(c, 1);
        });
    for (auto &t : th) t.join();
    KYT_EXPECT_OK(ky_barrier());
    bool ok = c[0] == (long)n * T * K;
    std::vector<long> all((size_t)n * T * K);
    ky_comm_barrier();
    MPI_Allgather(got.data(), T * K, MPI_LONG, all.data(), T * K, MPI_LONG, MPI_COMM_WORLD);
    std::sort(all.begin(), all.end());
    for (size_t i = 0; i < all.size(); i++) ok = ok && all[i] == (long)i; /* every old value exactly once */
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(c));
}

struct Node {
    long key;
    int rank;
    Node *next, *left, *right;
};

/* A global list and a binary search tree built concurrently from ky_alloc_local nodes under locks, then
 * walked by every rank. */
TEST(Dsm, ListAndTreeWithLocalAllocAndLocks)
{
    int n = kyt::nranks(), me = kyt::rank(), per = kyt::scaled(40, 10), T = 2;
    Node **roots = (Node **)kyt::galloc(2 * sizeof(Node *), 0); /* [0] list head, [1] tree root */
    ASSERT_TRUE(roots);
    KYT_EXPECT_OK(ky_barrier());
    std::vector<std::thread> th;
    std::atomic<int> errors{0};
    for (int t = 0; t < T; t++)
        th.emplace_back([&, t] {
            for (int i = t; i < per; i += T) {
                Node *nd = (Node *)ky_alloc_local(sizeof(Node));
                if (!nd) {
                    errors++;
                    continue;
                }
                long key = (long)(kyt::mix(me, i) % 1000000007ull) * 64 + me * 8 + (i % 8);
                *nd = Node{key, me, nullptr, nullptr, nullptr};
                if (ky_lock(1) != KY_OK) errors++;
                nd->next = roots[0];
                roots[0] = nd;
                Node **slot = &roots[1];
                while (*slot) slot = key < (*slot)->key ? &(*slot)->left : &(*slot)->right;
                *slot = nd;
                if (ky_unlock(1) != KY_OK) errors++;
            }
        });
    for (auto &t : th) t.join();
    KYT_EXPECT_OK(ky_barrier());
    std::vector<long> keys;
    std::set<std::pair<int, long>> seen;
    for (Node *p = roots[0]; p; p = p->next) {
        seen.insert({p->rank, p->key});
        if (seen.size() > (size_t)n * per + 1) break;
    }
    std::function<void(Node *)> walk = [&](Node *p) {
        if (!p) return;
        walk(p->left);
        keys.push_back(p->key);
        walk(p->right);
    };
    walk(roots[1]);
    bool ok = errors == 0 && seen.size() == (size_t)n * per && keys.size() == (size_t)n * per &&
              std::is_sorted(keys.begin(), keys.end());
    /* the reference: every rank's keys, computed here */
    std::vector<long> want;
    for (int q = 0; q < n; q++)
        for (int i = 0; i < per; i++)
            want.push_back((long)(kyt::mix(q, i) % 1000000007ull) * 64 + q * 8 + (i % 8));
    std::sort(want.begin(), want.end());
    ok = ok && keys == want;
    EXPECT_TRUE(kyt::all(ok)) << "list " << seen.size() << " tree " << keys.size() << " of " << n * per;
    KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_free(roots));
}

/* ky_sync_nofetch: homes write without faults or snapshots in the promised interval; the next ky_sync
 * publishes what they wrote and write-protects again. */
TEST(Dsm, SyncNofetchOpensHomePages)
{
    int n = kyt::nranks(), me = kyt::rank();
    int per = (int)(4 * page() / sizeof(long));
    int dims[] = {n * per, -1}, divs[] = {n, -1};
    long *a = (long *)ky_mapalloc(dims, divs, sizeof(long), 0, n);
    ASSERT_TRUE(a);
    KYT_EXPECT_OK(ky_barrier());
    ky_dsm_stats_t s0, s1, s2;
    KYT_EXPECT_OK(ky_sync_nofetch());
    ky_dsm_stats(&s0);
    for (int i = me * per; i < (me + 1) * per; i++) a[i] = 5 * i + 1;
    ky_dsm_stats(&s1);
    EXPECT_EQ(s0.write_faults, s1.write_faults) << "home writes faulted in a ky_sync_nofetch interval";
    EXPECT_EQ(s0.home_snapshots, s1.home_snapshots);
    KYT_EXPECT_OK(ky_sync());
    bool ok = true;
    for (int i = 0; i < n * per; i += 97) ok = ok && a[i] == 5 * i + 1;
    for (int r = 0; r < n; r++)
        ok = ok && a[r * per] == 5 * r * per + 1; /* every block's first page fetched */
    ky_comm_barrier();                            /* ... before its home writes it */
    ky_dsm_stats(&s2);
    a[me * per] = 3; /* protected again (others just fetched it): the home's first write snapshots */
    ky_dsm_stats_t s3;
    ky_dsm_stats(&s3);
    /* the fault snapshots this page and, with KY_DSM_SNAPSHOT_RUN, up to the rest of the rank's 4 pages */
    if (n > 1) {
        EXPECT_GE(s3.home_snapshots, s2.home_snapshots + 1);
        EXPECT_LE(s3.home_snapshots, s2.home_snapshots + 4);
        EXPECT_EQ(s2.write_faults + 1, s3.write_faults);
    }
    KYT_EXPECT_OK(ky_barrier());
    ok = ok && a[0] == 3 && a[(n - 1) * per] == 3;
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

/* The seed's preload pattern with promises: nofetch (homes compute) and nostore (others fetch) alternate;
 * homes never fault, fetches see the last synchronised values. */
TEST(Dsm, SyncNostoreKeepsPagesOpen)
{
    int n = kyt::nranks(), me = kyt::rank();
    int per = (int)(2 * page() / sizeof(long));
    int dims[] = {n * per, -1}, divs[] = {n, -1};
    long *a = (long *)ky_mapalloc(dims, divs, sizeof(long), 0, n);
    ASSERT_TRUE(a);
    KYT_EXPECT_OK(ky_barrier());
    bool ok = true;
    ky_dsm_stats_t s0, s1;
    ky_dsm_stats(&s0);
    for (int round = 1; round <= 3; round++) {
        KYT_EXPECT_OK(ky_sync_nofetch());
        for (int i = me * per; i < (me + 1) * per; i++) a[i] = round * 100000L + i;
        KYT_EXPECT_OK(ky_sync_nostore());
        int other = (me + 1) % n;
        size_t glb[1] = {(size_t)n * per}, reg[1] = {(size_t)per};
        KYT_EXPECT_OK(ky_overload_array(a + other * per, glb, reg, 1, sizeof(long), 0));
        for (int i = other * per; i < (other + 1) * per; i += 33) ok = ok && a[i] == round * 100000L + i;
    }
    ky_dsm_stats(&s1);
    EXPECT_EQ(s0.write_faults, s1.write_faults) << "homes faulted although every interval was promised";
    EXPECT_EQ(s0.home_snapshots, s1.home_snapshots);
    KYT_EXPECT_OK(ky_sync_drop());
    EXPECT_TRUE(kyt::all(ok));
    KYT_EXPECT_OK(ky_free(a));
}

TEST(Dsm, BadInput)
{
    int n = kyt::nranks(), me = kyt::rank();
    void *got = &n;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_alloc(16, n, &got));
    EXPECT_EQ(nullptr, got) << "a failed ky_alloc leaves *out NULL";
    EXPECT_NE(std::string::npos, std::string(ky_last_error()).find("ky_alloc"));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_alloc(16, 0, nullptr));
    /* a NULL out on one rank fails on all */
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_alloc(16, 0, me == n - 1 ? nullptr : &got));
    EXPECT_EQ(nullptr, got);
    EXPECT_EQ(nullptr, kyt::galloc(16, -1));
    EXPECT_EQ(nullptr, kyt::galloc((size_t)-5, 0));
    EXPECT_EQ(nullptr, kyt::galloc(16 + (n > 1 ? me : 0) * 4096, 0))
        << "mismatched sizes must fail on every rank";
    int d1[] = {8, 8, -1}, v1[] = {2, -1};
    EXPECT_EQ(nullptr, ky_mapalloc(d1, v1, 8, 0, n));
    int d2[] = {8, -1}, v2[] = {0, -1};
    EXPECT_EQ(nullptr, ky_mapalloc(d2, v2, 8, 0, n));
    int v3[] = {2, -1};
    EXPECT_EQ(nullptr, ky_mapalloc(d2, v3, 8, 0, n + 1));
    EXPECT_EQ(nullptr, ky_mapalloc(nullptr, v3, 8, 0, n));
    long local = 0;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_free(&local));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_home_of(&local));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_lock(-1));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_lock(KY_DSM_LOCKS));
    KYT_EXPECT_STATUS(KY_ERR_STATE, ky_unlock(3));
    long was = 7;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_fetch_add(&local, 1, &was));
    EXPECT_EQ(7, was) << "a refused fetch_add leaves *old alone";
    char *p = (char *)kyt::galloc(page(), 0);
    ASSERT_TRUE(p);
    KYT_EXPECT_OK(ky_fetch_add((long *)p, 0, nullptr)); /* old may be NULL */
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_free(p + 8));
    EXPECT_EQ(LONG_MIN, kyt::fadd((long *)(p + 4), 1));
    size_t glb[1] = {page()}, big[1] = {page() + 1}, reg[1] = {16};
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_preload_array(p, glb, big, 1, 1, 0));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_preload_array(p, glb, reg, 0, 1, 0));
    KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_preload_array(&local, glb, reg, 1, 1, 0));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_push_array(p, glb, reg, 1, 1, n));
    /* a page of the global space that belongs to no allocation */
    void *gbase;
    size_t gsize;
    KYT_EXPECT_OK(ky_gas_range(&gbase, &gsize));
    KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_home_of((char *)gbase + gsize / 2 - page()));
    KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_free(p));
}

TEST(Dsm, StatsCountFaultsAndDiffs)
{
    int n = kyt::nranks(), me = kyt::rank();
    if (n < 2) return;
    char *p = (char *)kyt::galloc(4 * page(), 0);
    ASSERT_TRUE(p);
    KYT_EXPECT_OK(ky_barrier());
    KYT_EXPECT_OK(ky_dsm_stats_reset());
    ky_comm_barrier(); /* every rank reset before anybody fetches */
    if (me == 1) {
        volatile char c = p[0];
        (void)c;
        p[page()] = 1;
    }
    KYT_EXPECT_OK(ky_barrier());
    ky_dsm_stats_t s;
    KYT_EXPECT_OK(ky_dsm_stats(&s));
    if (me == 1) {
        EXPECT_EQ(1u, s.read_faults);
        EXPECT_EQ(1u, s.write_faults);
        EXPECT_EQ(2u, s.pages_fetched);
        EXPECT_EQ(1u, s.diffs);
        /* with write notices (every home page guarded) nobody else changed either page: both stay */
        const char *mode = getenv("KY_DSM_SNAPSHOT");
        EXPECT_EQ(mode && !strcmp(mode, "1") ? 0u : 2u, s.invalidations);
    }
    /* a same-node reader copies straight from the home's memory (KY_DSM_DIRECT): nothing to serve */
    const char *direct = getenv("KY_DSM_DIRECT");
    bool same_node_direct = ky_node_of(1) == ky_node_of(0) && !(direct && !strcmp(direct, "0"));
    if (me == 0) EXPECT_EQ(same_node_direct ? 0u : 2u, s.pages_served);
    EXPECT_GE(s.barriers, 1u);
    ky_comm_barrier(); /* everybody read its statistics before the reads below fetch more pages */
    EXPECT_TRUE(kyt::all(p[page()] == 1));
    KYT_EXPECT_OK(ky_free(p));
}

}  // namespace
