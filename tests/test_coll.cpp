/* Collectives on host buffers: every algorithm, type and operation against MPI's own collective
 * on the same data (values chosen so every order of reduction is exact: small integers, powers of two),
 * counts 0, 1, odd and large, in place, teams split by parity, persistent plans started many times with
 * changing data, bad input, and (KY_CHECK=1 variants) mismatched arguments returning KY_ERR_ARG on every
 * rank instead of hanging. Algorithms are forced with ky_coll_set_algo; the env variant forces them through
 * KY_ALLREDUCE_ALGO / KY_ALLGATHER_ALGO. */
#include <chrono>

#include "kyt.h"

namespace {

const ky_coll_algo_t kAllreduceAlgos[] = {KY_ALGO_RING,         KY_ALGO_NEIGHBOR, KY_ALGO_RD,  KY_ALGO_BRUCK,
                                          KY_ALGO_REDUCE_BCAST, KY_ALGO_SHM,      KY_ALGO_AUTO};
const ky_coll_algo_t kAllgatherAlgos[] = {KY_ALGO_RING,  KY_ALGO_NEIGHBOR, KY_ALGO_RD,
                                          KY_ALGO_BRUCK, KY_ALGO_SHM,      KY_ALGO_AUTO};
/* Whether a team of these world ranks has the shared-memory path: more than one member, all on one
 * logical node (KY_NODE_SPLIT=rank or =N split the host), and KY_COLL_SHM not 0. Default: the world. */
bool shm_expected(std::vector<int> members = {})
{
    if (members.empty())
        for (int r = 0; r < ky_nranks(); r++) members.push_back(r);
    bool one = true;
    for (int r : members) one = one && ky_node_of(r) == ky_node_of(members[0]);
    return kyt::config("KY_COLL_SHM") != "0" && members.size() > 1 && one;
}
const ky_dtype_t kTypes[] = {KY_INT32, KY_INT64, KY_FLOAT, KY_DOUBLE};
const ky_op_t kOps[] = {KY_SUM, KY_PROD, KY_MIN, KY_MAX};

size_t esize(ky_dtype_t t)
{
    return t == KY_INT32 || t == KY_FLOAT ? 4 : 8;
}
MPI_Datatype mpi_type(ky_dtype_t t)
{
    switch (t) {
        case KY_INT32:
            return MPI_INT32_T;
        case KY_INT64:
            return MPI_INT64_T;
        case KY_FLOAT:
            return MPI_FLOAT;
        default:
            return MPI_DOUBLE;
    }
}
MPI_Op mpi_op(ky_op_t op)
{
    switch (op) {
        case KY_SUM:
            return MPI_SUM;
        case KY_PROD:
            return MPI_PROD;
        case KY_MIN:
            return MPI_MIN;
        default:
            return MPI_MAX;
    }
}

/* Element i of `rank`'s input: exact under any reduction order (sums of small integers, products of
 * 1, 2, -1 and 0.5 over at most 5 ranks). */
double value(ky_op_t op, ky_dtype_t t, int rank, size_t i, uint64_t salt)
{
    uint64_t h = kyt::mix(rank, i, salt);
    if (op == KY_PROD) {
        static const double f[] = {1, 2, -1, 0.5};
        double v = f[h % 4];
        if ((t == KY_INT32 || t == KY_INT64) && v == 0.5) v = 1;
        return v;
    }
    return (double)((int64_t)(h % 2001) - 1000);
}

std::vector<uint8_t> make(ky_op_t op, ky_dtype_t t, int rank, size_t n, uint64_t salt)
{
    std::vector<uint8_t> v(n * esize(t) + 1);
    for (size_t i = 0; i < n; i++) {
        double x = value(op, t, rank, i, salt);
        switch (t) {
            case KY_INT32:
                ((int32_t *)v.data())[i] = (int32_t)x;
                break;
            case KY_INT64:
                ((int64_t *)v.data())[i] = (int64_t)x * 1000003;
                break;
            case KY_FLOAT:
                ((float *)v.data())[i] = (float)x;
                break;
            default:
                ((double *)v.data())[i] = x;
                break;
        }
    }
    return v;
}

/* Forces an algorithm for the scope (every rank alike). */
struct Force {
    ky_coll_kind_t k;
    Force(ky_coll_kind_t kind, ky_coll_algo_t a) : k(kind) { ky_coll_set_algo(kind, a); }
    ~Force() { ky_coll_set_algo(k, KY_ALGO_AUTO); }
};

std::string what(ky_coll_algo_t a, ky_dtype_t t, ky_op_t op, size_t n, bool in_place)
{
    char b[160];
    snprintf(b, sizeof b, "algo %s type %d op %d count %zu%s", ky_coll_algo_name(a), (int)t, (int)op, n,
             in_place ? " in place" : "");
    return b;
}

/* One allreduce against MPI_Allreduce; returns "" or a description of the first failure. */
std::string allreduce_case(ky_coll_algo_t a, ky_dtype_t t, ky_op_t op, size_t n, bool in_place, uint64_t salt)
{
    size_t bytes = n * esize(t);
    std::vector<uint8_t> in = make(op, t, ky_rank(), n, salt), out(bytes + 1, 0xee), ref(bytes + 1, 0);
    MPI_Allreduce(in.data(), ref.data(), (int)n, mpi_type(t), mpi_op(op), MPI_COMM_WORLD);
    int st;
    if (in_place) {
        memcpy(out.data(), in.data(), bytes);
        st = ky_allreduce(KY_IN_PLACE, out.data(), n, t, op, KY_TEAM_WORLD);
    } else {
        st = ky_allreduce(in.data(), out.data(), n, t, op, KY_TEAM_WORLD);
    }
    if (st != KY_OK) return what(a, t, op, n, in_place) + ": " + ky_last_error();
    if (memcmp(out.data(), ref.data(), bytes))
        return what(a, t, op, n, in_place) + ": differs from MPI_Allreduce";
    if (!in_place && out[bytes] != 0xee) return what(a, t, op, n, in_place) + ": wrote past the end";
    return "";
}

}  // namespace

TEST(Coll, TeamWorld)
{
    EXPECT_EQ(ky_rank(), ky_team_rank(KY_TEAM_WORLD));
    EXPECT_EQ(ky_nranks(), ky_team_size(KY_TEAM_WORLD));
    EXPECT_LT(ky_team_rank(KY_TEAM_NULL), 0);
    EXPECT_STREQ("bruck", ky_coll_algo_name(KY_ALGO_BRUCK));
}

TEST(Coll, AllreduceEveryAlgoTypeOp)
{
    std::string fail;
    uint64_t salt = 1;
    for (ky_coll_algo_t a : kAllreduceAlgos) {
        Force f(KY_COLL_ALLREDUCE, a);
        for (ky_dtype_t t : kTypes)
            for (ky_op_t op : kOps)
                for (size_t n : {(size_t)0, (size_t)1, (size_t)7, (size_t)1001})
                    for (bool ip : {false, true}) {
                        std::string e = allreduce_case(a, t, op, n, ip, salt++);
                        if (fail.empty()) fail = e;
                    }
    }
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}

TEST(Coll, AllreduceLarge)
{
    std::string fail;
    size_t n = (size_t)kyt::scaled(100003, 20001) | 1;
    for (ky_coll_algo_t a : kAllreduceAlgos) {
        Force f(KY_COLL_ALLREDUCE, a);
        for (ky_dtype_t t : {KY_INT32, KY_DOUBLE}) {
            std::string e = allreduce_case(a, t, KY_SUM, n, a == KY_ALGO_RING, 77);
            if (fail.empty()) fail = e;
        }
    }
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}

TEST(Coll, AllgatherEveryAlgo)
{
    int p = ky_nranks(), me = ky_rank();
    std::string fail;
    size_t large = (size_t)kyt::scaled(100000, 20000) + 3;
    for (ky_coll_algo_t a : kAllgatherAlgos) {
        Force f(KY_COLL_ALLGATHER, a);
        for (size_t b : {(size_t)0, (size_t)1, (size_t)16, (size_t)13, (size_t)2051, large})
            for (bool ip : {false, true}) {
                std::vector<uint8_t> in(b + 1), out(b * p + 1, 0xee), ref(b * p + 1, 0);
                kyt::fill_pattern(in.data(), b, kyt::mix(me, b));
                MPI_Allgather(in.data(), (int)b, MPI_BYTE, ref.data(), (int)b, MPI_BYTE, MPI_COMM_WORLD);
                int st;
                if (ip) {
                    memcpy(out.data() + b * me, in.data(), b);
                    st = ky_allgather(KY_IN_PLACE, b, out.data(), KY_TEAM_WORLD);
                } else {
                    st = ky_allgather(in.data(), b, out.data(), KY_TEAM_WORLD);
                }
                std::string w = std::string("allgather ") + ky_coll_algo_name(a) + " bytes " +
                                std::to_string(b) + (ip ? " in place" : "");
                if (st != KY_OK && fail.empty())
                    fail = w + ": " + ky_last_error();
                else if (memcmp(out.data(), ref.data(), b * p) && fail.empty())
                    fail = w + ": differs from MPI_Allgather";
                else if (out[b * p] != 0xee && fail.empty())
                    fail = w + ": wrote past the end";
            }
    }
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}

TEST(Coll, BcastEveryRoot)
{
    int p = ky_nranks(), me = ky_rank();
    std::string fail;
    for (int root = 0; root < p; root++)
        for (size_t b : {(size_t)0, (size_t)1, (size_t)1000, (size_t)kyt::scaled(100000, 10000)}) {
            std::vector<uint8_t> buf(b + 1), ref(b + 1);
            kyt::fill_pattern(ref.data(), b, kyt::mix(root, b));
            if (me == root)
                buf = ref;
            else
                kyt::fill_pattern(buf.data(), b, 999);
            int st = ky_bcast(buf.data(), b, root, KY_TEAM_WORLD);
            if (st && fail.empty())
                fail = std::string("bcast: ") + ky_last_error();
            else if (memcmp(buf.data(), ref.data(), b) && fail.empty())
                fail = "bcast root " + std::to_string(root) + " bytes " + std::to_string(b) + ": wrong data";
        }
    /* and the same as MPI_Bcast on the same buffer */
    std::vector<uint8_t> a(64), m(64);
    kyt::fill_pattern(a.data(), 64, me == p - 1 ? 5 : me + 100);
    m = a;
    KYT_EXPECT_OK(ky_bcast(a.data(), 64, p - 1, KY_TEAM_WORLD));
    MPI_Bcast(m.data(), 64, MPI_BYTE, p - 1, MPI_COMM_WORLD);
    EXPECT_TRUE(kyt::all(fail.empty() && a == m)) << fail;
}

TEST(Coll, ReduceEveryRootTypeOp)
{
    int p = ky_nranks(), me = ky_rank();
    std::string fail;
    uint64_t salt = 5000;
    for (int root = 0; root < p; root++)
        for (ky_dtype_t t : kTypes)
            for (ky_op_t op : kOps)
                for (size_t n : {(size_t)0, (size_t)1, (size_t)513}) {
                    size_t bytes = n * esize(t);
                    std::vector<uint8_t> in = make(op, t, me, n, salt++), out(bytes + 1, 0),
                                         ref(bytes + 1, 0);
                    MPI_Reduce(in.data(), ref.data(), (int)n, mpi_type(t), mpi_op(op), root, MPI_COMM_WORLD);
                    bool ip = (n == 513) && me == root;
                    int st;
                    if (ip) {
                        memcpy(out.data(), in.data(), bytes);
                        st = ky_reduce(KY_IN_PLACE, out.data(), n, t, op, root, KY_TEAM_WORLD);
                    } else {
                        st = ky_reduce(in.data(), me == root ? out.data() : nullptr, n, t, op, root,
                                       KY_TEAM_WORLD);
                    }
                    if (st && fail.empty())
                        fail = std::string("reduce: ") + ky_last_error();
                    else if (me == root && memcmp(out.data(), ref.data(), bytes) && fail.empty())
                        fail = "reduce root " + std::to_string(root) + " " +
                               what(KY_ALGO_AUTO, t, op, n, ip) + ": differs from MPI_Reduce";
                }
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}

TEST(Coll, Barrier)
{
    /* the last rank enters 100 ms late: nobody may leave before it entered */
    int p = ky_nranks();
    for (int i = 0; i < kyt::scaled(20, 5); i++) KYT_EXPECT_OK(ky_team_barrier(KY_TEAM_WORLD));
    double t0 = MPI_Wtime();
    if (ky_rank() == p - 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    KYT_EXPECT_OK(ky_team_barrier(KY_TEAM_WORLD));
    double waited = MPI_Wtime() - t0;
    EXPECT_TRUE(kyt::all(waited > 0.09)) << "left the barrier after " << waited << " s";
}

/* ky_team_barrier orders memory: what a rank stored before it is seen by every rank after it (an MPI
 * shared-memory window of the node; MPI_Win_sync is only a processor fence, the barrier does the waiting). */
TEST(Coll, BarrierOrdersMemory)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nn, nr;
    MPI_Comm_size(node, &nn);
    MPI_Comm_rank(node, &nr);
    if (!kyt::all(nn == ky_nranks())) {
        MPI_Comm_free(&node);
        GTEST_SKIP() << "the ranks are not all on one node";
    }
    volatile int64_t *mem = nullptr;
    MPI_Win win;
    MPI_Win_allocate_shared(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, node, (void *)&mem, &win);
    std::vector<volatile int64_t *> at(nn);
    for (int j = 0; j < nn; j++) {
        MPI_Aint sz;
        int du;
        MPI_Win_shared_query(win, j, &sz, &du, (void *)&at[j]);
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    bool ok = true;
    for (int it = 1; it <= kyt::scaled(300, 50) && ok; it++) {
        *mem = it * 1000 + nr;
        MPI_Win_sync(win);
        KYT_EXPECT_OK(ky_team_barrier(KY_TEAM_WORLD));
        MPI_Win_sync(win);
        for (int j = 0; j < nn; j++)
            if (*at[j] != it * 1000 + j) {
                ADD_FAILURE() << "iteration " << it << ": rank " << j << "'s value " << *at[j]
                              << " not seen after the barrier";
                ok = false;
                break;
            }
        KYT_EXPECT_OK(ky_team_barrier(KY_TEAM_WORLD)); /* everybody read before the next store */
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    EXPECT_TRUE(kyt::all(ok));
}

/* Plans started, a blocking collective between, and the waits in a different order on odd ranks: every
 * result equals MPI's (on the shared-memory path plans run in start order whatever the wait order). */
TEST(Coll, PlansAndBlockingInterleaved)
{
    int p = ky_nranks(), me = ky_rank();
    bool ok = true;
    for (size_t n : {(size_t)3, (size_t)5000, (size_t)100000}) {
        std::vector<double> a(n), ar(n), aref(n), b(n), bref(n);
        std::vector<uint8_t> g(n), gr(n * p), gref(n * p);
        ky_coll_plan_t pa = nullptr, pg = nullptr;
        KYT_EXPECT_OK(ky_allreduce_init(a.data(), ar.data(), n, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &pa));
        KYT_EXPECT_OK(ky_allgather_init(g.data(), n, gr.data(), KY_TEAM_WORLD, &pg));
        for (int it = 0; it < 5 && pa && pg; it++) {
            for (size_t i = 0; i < n; i++) {
                a[i] = value(KY_SUM, KY_DOUBLE, me, i, 10 + it);
                b[i] = value(KY_SUM, KY_DOUBLE, me, i, 20 + it);
            }
            kyt::fill_pattern(g.data(), n, kyt::mix(me, it, n));
            MPI_Allreduce(a.data(), aref.data(), (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, b.data(), 0, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            std::vector<double> bin = b;
            MPI_Allreduce(bin.data(), bref.data(), (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allgather(g.data(), (int)n, MPI_BYTE, gref.data(), (int)n, MPI_BYTE, MPI_COMM_WORLD);
            KYT_EXPECT_OK(ky_coll_start(pa, nullptr));
            KYT_EXPECT_OK(ky_allreduce(KY_IN_PLACE, b.data(), n, KY_DOUBLE, KY_MAX, KY_TEAM_WORLD));
            KYT_EXPECT_OK(ky_coll_start(pg, nullptr));
            if (me % 2) {
                KYT_EXPECT_OK(ky_coll_wait(pg));
                KYT_EXPECT_OK(ky_coll_wait(pa));
            } else {
                KYT_EXPECT_OK(ky_coll_wait(pa));
                KYT_EXPECT_OK(ky_coll_wait(pg));
            }
            if (ar != aref || b != bref || gr != gref) {
                ADD_FAILURE() << "count " << n << " round " << it << ": allreduce " << (ar == aref)
                              << " blocking " << (b == bref) << " allgather " << (gr == gref);
                ok = false;
                break;
            }
        }
        KYT_EXPECT_OK(ky_coll_free(pa));
        KYT_EXPECT_OK(ky_coll_free(pg));
    }
    EXPECT_TRUE(kyt::all(ok));
}

TEST(Coll, TeamsSplitByParity)
{
    int me = ky_rank(), p = ky_nranks();
    ky_team_t team = KY_TEAM_NULL;
    KYT_EXPECT_OK(ky_team_split(KY_TEAM_WORLD, me % 2, -me, &team)); /* key -me: reversed order */
    MPI_Comm mc;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &mc);
    int mr, ms;
    MPI_Comm_rank(mc, &mr);
    MPI_Comm_size(mc, &ms);
    bool ok = team != KY_TEAM_NULL && ky_team_rank(team) == mr && ky_team_size(team) == ms;
    std::string fail;
    for (ky_coll_algo_t a : kAllreduceAlgos) {
        Force f(KY_COLL_ALLREDUCE, a);
        Force g(KY_COLL_ALLGATHER, a == KY_ALGO_REDUCE_BCAST ? KY_ALGO_AUTO : a);
        for (size_t n : {(size_t)1, (size_t)333}) {
            std::vector<uint8_t> in = make(KY_SUM, KY_DOUBLE, me, n, n + a), out(n * 8), ref(n * 8);
            MPI_Allreduce(in.data(), ref.data(), (int)n, MPI_DOUBLE, MPI_SUM, mc);
            if (ky_allreduce(in.data(), out.data(), n, KY_DOUBLE, KY_SUM, team) || out != ref)
                if (fail.empty())
                    fail = std::string("team allreduce ") + ky_coll_algo_name(a) + " " + ky_last_error();
            std::vector<uint8_t> g1(n * ms), gr(n * ms);
            MPI_Allgather(in.data(), (int)n, MPI_BYTE, gr.data(), (int)n, MPI_BYTE, mc);
            if (ky_allgather(in.data(), n, g1.data(), team) || g1 != gr)
                if (fail.empty())
                    fail = std::string("team allgather ") + ky_coll_algo_name(a) + " " + ky_last_error();
        }
    }
    /* a team's collectives do not mix with the world's: interleave them */
    int x = me, y = 0, wx = 0;
    KYT_EXPECT_OK(ky_allreduce(&x, &y, 1, KY_INT32, KY_MAX, team));
    KYT_EXPECT_OK(ky_allreduce(&x, &wx, 1, KY_INT32, KY_SUM, KY_TEAM_WORLD));
    ok = ok && wx == p * (p - 1) / 2 && y == (p - 1 - ((p - 1) % 2 != me % 2));
    KYT_EXPECT_OK(ky_team_barrier(team));
    /* a sub-split, and a negative color giving no team */
    ky_team_t sub = KY_TEAM_NULL;
    KYT_EXPECT_OK(ky_team_split(team, ky_team_rank(team) == 0 ? -1 : 0, 0, &sub));
    ok = ok && ((ky_team_rank(team) == 0) == (sub == KY_TEAM_NULL));
    if (sub != KY_TEAM_NULL) {
        ok = ok && ky_team_size(sub) == ms - 1;
        int one = 1, cnt = 0;
        KYT_EXPECT_OK(ky_allreduce(&one, &cnt, 1, KY_INT32, KY_SUM, sub));
        ok = ok && cnt == ms - 1;
    }
    KYT_EXPECT_OK(ky_team_free(sub));
    KYT_EXPECT_OK(ky_team_free(team));
    MPI_Comm_free(&mc);
    EXPECT_TRUE(kyt::all(ok && fail.empty())) << fail;
}

/* A team's members alone split it (the other ranks are busy elsewhere): a split is collective over the
 * parent team only. */
TEST(Coll, SplitBySubTeamMembersOnly)
{
    int me = ky_rank(), p = ky_nranks();
    ky_team_t half = KY_TEAM_NULL, quarter = KY_TEAM_NULL;
    KYT_EXPECT_OK(ky_team_split(KY_TEAM_WORLD, me % 2, me, &half));
    bool ok = true;
    if (me % 2 == 0) {
        KYT_EXPECT_OK(ky_team_split(half, ky_team_rank(half) % 2, me, &quarter));
        int one = 1, cnt = 0, want = 0;
        for (int r = 0; r < p; r += 2) want += (r / 2) % 2 == (me / 2) % 2;
        KYT_EXPECT_OK(ky_allreduce(&one, &cnt, 1, KY_INT32, KY_SUM, quarter));
        ok = cnt == want;
        KYT_EXPECT_OK(ky_team_free(quarter));
    } else {
        int x = me, mx = 0;
        for (int i = 0; i < 20; i++) KYT_EXPECT_OK(ky_allreduce(&x, &mx, 1, KY_INT32, KY_MAX, half));
        ok = mx == (p % 2 == 0 ? p - 1 : p - 2);
    }
    KYT_EXPECT_OK(ky_team_free(half));
    EXPECT_TRUE(kyt::all(ok));
}

TEST(Coll, PersistentPlans)
{
    int p = ky_nranks(), me = ky_rank();
    std::string fail;
    bool ok = true;
    for (ky_coll_algo_t a : kAllreduceAlgos) {
        Force f(KY_COLL_ALLREDUCE, a);
        Force g(KY_COLL_ALLGATHER, a == KY_ALGO_REDUCE_BCAST ? KY_ALGO_AUTO : a);
        size_t n = 257;
        std::vector<int64_t> in(n), out(n), ref(n);
        std::vector<uint8_t> gin(n), gout(n * p), gref(n * p);
        ky_coll_plan_t ar = nullptr, ag = nullptr;
        KYT_EXPECT_OK(ky_allreduce_init(in.data(), out.data(), n, KY_INT64, KY_SUM, KY_TEAM_WORLD, &ar));
        KYT_EXPECT_OK(ky_allgather_init(gin.data(), n, gout.data(), KY_TEAM_WORLD, &ag));
        ky_coll_algo_t got = KY_ALGO_AUTO;
        if (ar && a != KY_ALGO_AUTO) {
            KYT_EXPECT_OK(ky_coll_plan_algo(ar, &got));
            ky_coll_algo_t want = (a == KY_ALGO_NEIGHBOR && p % 2) ? KY_ALGO_RING : a;
            if (a == KY_ALGO_SHM)
                ok = ok && (got == KY_ALGO_SHM) == shm_expected(); /* shm: where the team can */
            else
                ok = ok && (p == 1 || got == want);
        }
        for (int it = 0; it < 20 && ar && ag; it++) {
            for (size_t i = 0; i < n; i++) in[i] = (int64_t)kyt::mix(me, i, it) % 100000;
            kyt::fill_pattern(gin.data(), n, kyt::mix(me, it));
            MPI_Allreduce(in.data(), ref.data(), (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allgather(gin.data(), (int)n, MPI_BYTE, gref.data(), (int)n, MPI_BYTE, MPI_COMM_WORLD);
            /* both in flight at once, waited in the other order */
            int s1 = ky_coll_start(ar, nullptr), s2 = ky_coll_start(ag, nullptr);
            int s3 = ky_coll_wait(ag), s4 = ky_coll_wait(ar);
            if ((s1 || s2 || s3 || s4) && fail.empty())
                fail = std::string("plan: ") + ky_last_error();
            else if ((out != ref || gout != gref) && fail.empty())
                fail = std::string("plan ") + ky_coll_algo_name(a) + " round " + std::to_string(it) +
                       ": wrong result";
        }
        if (ar) {
            /* a started plan cannot start again before its wait */
            KYT_EXPECT_OK(ky_coll_start(ar, nullptr));
            KYT_EXPECT_STATUS(KY_ERR_STATE, ky_coll_start(ar, nullptr));
            KYT_EXPECT_OK(ky_coll_wait(ar));
            KYT_EXPECT_OK(ky_coll_wait(ar)); /* not started: nothing to wait for */
        }
        KYT_EXPECT_OK(ky_coll_free(ar));
        KYT_EXPECT_OK(ky_coll_free(ag));
    }
    EXPECT_TRUE(kyt::all(ok && fail.empty())) << fail;
}

/* Under auto, a team of one rank per node runs the table of docs/api.md (src/coll/select.c). Checked where it
 * applies: every rank its own node (no shared memory, no hierarchical stages) and nothing forced. */
TEST(Coll, AutoFollowsTheTable)
{
    if (kyt::config("KY_NODE_SPLIT") != "rank" || kyt::config("KY_ALLREDUCE_ALGO") != "auto" ||
        kyt::config("KY_ALLGATHER_ALGO") != "auto")
        GTEST_SKIP() << "the table applies with KY_NODE_SPLIT=rank and nothing forced";
    int p = ky_nranks();
    std::vector<double> a(16384), r(16384);               /* 128 KiB vector */
    std::vector<uint8_t> g(32768), gr(32768 * (size_t)p); /* 32 KiB per member: p * 32 KiB gathered */
    struct Case {
        bool allreduce;
        size_t n;
        ky_coll_algo_t want;
    } cases[] = {
        {true, 1, KY_ALGO_RD},
        {true, 16384, p == 2 ? KY_ALGO_RD : KY_ALGO_RING},
        {false, 16, KY_ALGO_RD},
        {false, 32768, p == 2 ? KY_ALGO_RD : (p % 2 ? KY_ALGO_RING : KY_ALGO_NEIGHBOR)},
    };
    std::string fail;
    for (const Case &c : cases) {
        ky_coll_plan_t pl = nullptr;
        int st = c.allreduce
                     ? ky_allreduce_init(a.data(), r.data(), c.n, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &pl)
                     : ky_allgather_init(g.data(), c.n, gr.data(), KY_TEAM_WORLD, &pl);
        ky_coll_algo_t got = KY_ALGO_AUTO;
        if (st == KY_OK) ky_coll_plan_algo(pl, &got);
        if (p > 1 && got != c.want && fail.empty())
            fail = std::string(c.allreduce ? "allreduce " : "allgather ") + std::to_string(c.n) + ": " +
                   ky_coll_algo_name(got) + ", table says " + ky_coll_algo_name(c.want);
        ky_coll_free(pl);
    }
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}

TEST(Coll, EnvForcedAlgorithm)
{
    /* the env variant sets KY_ALLREDUCE_ALGO=bruck KY_ALLGATHER_ALGO=neighbor; otherwise auto */
    std::string ar_env = kyt::config("KY_ALLREDUCE_ALGO"), ag_env = kyt::config("KY_ALLGATHER_ALGO");
    int p = ky_nranks();
    double x = 1, y = 0;
    ky_coll_plan_t pl = nullptr, pg = nullptr;
    std::vector<double> g(p);
    KYT_EXPECT_OK(ky_allreduce_init(&x, &y, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &pl));
    KYT_EXPECT_OK(ky_allgather_init(&x, 8, g.data(), KY_TEAM_WORLD, &pg));
    ky_coll_algo_t a = KY_ALGO_AUTO, b = KY_ALGO_AUTO;
    ky_coll_plan_algo(pl, &a);
    ky_coll_plan_algo(pg, &b);
    bool ok = a != KY_ALGO_AUTO && b != KY_ALGO_AUTO;
    if (ar_env == "bruck") ok = ok && a == KY_ALGO_BRUCK;
    if (ag_env == "neighbor") ok = ok && b == (p % 2 ? KY_ALGO_RING : KY_ALGO_NEIGHBOR);
    KYT_EXPECT_OK(ky_coll_start(pl, nullptr));
    KYT_EXPECT_OK(ky_coll_wait(pl));
    ok = ok && y == p;
    ky_coll_free(pl);
    ky_coll_free(pg);
    EXPECT_TRUE(kyt::all(ok)) << "allreduce " << ky_coll_algo_name(a) << ", allgather "
                              << ky_coll_algo_name(b);
}

TEST(Coll, BadInput)
{
    if (kyt::config("KY_CHECK") == "1") GTEST_SKIP() << "KY_CHECK=1: see CollCheck";
    int p = ky_nranks();
    double a[4] = {0}, b[4] = {0};
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allreduce(a, nullptr, 4, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allreduce(nullptr, b, 4, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allreduce(a, b, 4, (ky_dtype_t)9, KY_SUM, KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allreduce(a, b, 4, KY_DOUBLE, (ky_op_t)-1, KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allreduce(a, b, (size_t)-4, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allreduce(a, b, 4, KY_DOUBLE, KY_SUM, KY_TEAM_NULL));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allgather(a, 8, nullptr, KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_bcast(a, 8, p, KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_bcast(a, 8, -1, KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_bcast(nullptr, 8, 0, KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_reduce(a, b, 4, KY_DOUBLE, KY_SUM, p + 3, KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_reduce(a, b, 4, (ky_dtype_t)4, KY_SUM, 0, KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_team_split(KY_TEAM_WORLD, 0, 0, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_coll_start(nullptr, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_coll_wait(nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allreduce_init(a, b, 4, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, nullptr));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_coll_set_algo(KY_COLL_ALLGATHER, KY_ALGO_REDUCE_BCAST));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_coll_set_algo((ky_coll_kind_t)7, KY_ALGO_RING));
    EXPECT_NE(std::string(ky_last_error()).find("ky_coll_set_algo"), std::string::npos);
    /* a stream with a host plan */
    ky_coll_plan_t pl = nullptr;
    KYT_EXPECT_OK(ky_allreduce_init(a, b, 4, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &pl));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_coll_start(pl, (void *)a));
    KYT_EXPECT_OK(ky_coll_free(pl));
    /* everything still works after the failures */
    double one = 1, sum = 0;
    KYT_EXPECT_OK(ky_allreduce(&one, &sum, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
    EXPECT_TRUE(kyt::all(sum == p));
}

TEST(Coll, GpuAlgorithmsOnHostBuffers)
{
    /* oneshot/twoshot are GPU (NVLink) algorithms: host buffers run the host choice, and a plan says which */
    EXPECT_STREQ("oneshot", ky_coll_algo_name(KY_ALGO_ONESHOT));
    EXPECT_STREQ("twoshot", ky_coll_algo_name(KY_ALGO_TWOSHOT));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_coll_set_algo(KY_COLL_ALLGATHER, KY_ALGO_TWOSHOT));
    std::string fail;
    for (ky_coll_algo_t a : {KY_ALGO_ONESHOT, KY_ALGO_TWOSHOT}) {
        Force f(KY_COLL_ALLREDUCE, a);
        Force g(KY_COLL_ALLGATHER, KY_ALGO_ONESHOT);
        for (size_t n : {(size_t)1, (size_t)7, (size_t)70001}) {
            std::string e = allreduce_case(a, KY_DOUBLE, KY_SUM, n, false, n + a);
            if (fail.empty()) fail = e;
        }
        double x = ky_rank(), y = 0;
        ky_coll_plan_t pl = nullptr;
        KYT_EXPECT_OK(ky_allreduce_init(&x, &y, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &pl));
        ky_coll_algo_t got = KY_ALGO_AUTO;
        KYT_EXPECT_OK(ky_coll_plan_algo(pl, &got));
        if ((got == KY_ALGO_ONESHOT || got == KY_ALGO_TWOSHOT) && fail.empty())
            fail = "a host plan runs a GPU algorithm";
        KYT_EXPECT_OK(ky_coll_free(pl));
        std::vector<int> v(ky_nranks()), ref(ky_nranks());
        int me = ky_rank() * 3;
        MPI_Allgather(&me, 1, MPI_INT, ref.data(), 1, MPI_INT, MPI_COMM_WORLD);
        if ((ky_allgather(&me, 4, v.data(), KY_TEAM_WORLD) || v != ref) && fail.empty())
            fail = "allgather oneshot on host";
    }
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}

/* ---- the shared-memory path ---------------------------------------------------------------------------- */

TEST(CollShm, ChosenWhereItCanBe)
{
    /* auto picks shm on one host (unless KY_COLL_SHM=0 or KY_NODE_SPLIT=rank); a forced MPI algorithm runs
     * MPI */
    double x = 1, y = 0, z = 0;
    ky_coll_plan_t pl = nullptr, pr = nullptr;
    KYT_EXPECT_OK(ky_allreduce_init(&x, &y, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &pl));
    ky_coll_algo_t a = KY_ALGO_AUTO, b = KY_ALGO_AUTO;
    KYT_EXPECT_OK(ky_coll_plan_algo(pl, &a));
    {
        Force f(KY_COLL_ALLREDUCE, KY_ALGO_RING);
        KYT_EXPECT_OK(ky_allreduce_init(&x, &z, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &pr));
        KYT_EXPECT_OK(ky_coll_plan_algo(pr, &b));
    }
    bool ok = (a == KY_ALGO_SHM) == shm_expected() && b == KY_ALGO_RING;
    KYT_EXPECT_OK(ky_coll_start(pl, nullptr));
    KYT_EXPECT_OK(ky_coll_start(pr, nullptr));
    KYT_EXPECT_OK(ky_coll_wait(pr));
    KYT_EXPECT_OK(ky_coll_wait(pl));
    ok = ok && y == ky_nranks() && z == ky_nranks();
    ky_coll_free(pl);
    ky_coll_free(pr);
    EXPECT_STREQ("shm", ky_coll_algo_name(KY_ALGO_SHM));
    EXPECT_TRUE(kyt::all(ok)) << "auto ran " << ky_coll_algo_name(a) << ", forced ring ran "
                              << ky_coll_algo_name(b);
}

TEST(CollShm, LargerThanTheSegment)
{
    /* 3 MiB and odd sizes: more than one 1 MiB slot, so the rounds pipeline (every collective kind) */
    int p = ky_nranks(), me = ky_rank();
    std::string fail;
    for (size_t n : {(size_t)(3 << 17) + 5, (size_t)(1 << 17) + 1}) { /* doubles: 3 MiB + 40 B, 1 MiB + 8 B */
        for (ky_dtype_t t : {KY_DOUBLE, KY_INT32}) {
            std::string e = allreduce_case(KY_ALGO_AUTO, t, KY_SUM, n, t == KY_INT32, 900 + n);
            if (fail.empty()) fail = e;
        }
        size_t b = n * 8 / (size_t)p + 3;
        std::vector<uint8_t> in(b), out(b * p), ref(b * p);
        kyt::fill_pattern(in.data(), b, kyt::mix(me, b));
        MPI_Allgather(in.data(), (int)b, MPI_BYTE, ref.data(), (int)b, MPI_BYTE, MPI_COMM_WORLD);
        if ((ky_allgather(in.data(), b, out.data(), KY_TEAM_WORLD) || out != ref) && fail.empty())
            fail = "large allgather " + std::to_string(b) + ": " + ky_last_error();
        std::vector<uint8_t> bc(n * 8), bref(n * 8);
        kyt::fill_pattern(bref.data(), n * 8, n);
        if (me == p - 1) bc = bref;
        if ((ky_bcast(bc.data(), n * 8, p - 1, KY_TEAM_WORLD) || bc != bref) && fail.empty())
            fail = "large bcast: " + std::string(ky_last_error());
        std::vector<uint8_t> rin = make(KY_MAX, KY_INT64, me, n, n), rout(n * 8), rref(n * 8);
        MPI_Reduce(rin.data(), rref.data(), (int)n, MPI_INT64_T, MPI_MAX, 1 % p, MPI_COMM_WORLD);
        int st = ky_reduce(rin.data(), rout.data(), n, KY_INT64, KY_MAX, 1 % p, KY_TEAM_WORLD);
        if ((st || (me == 1 % p && memcmp(rout.data(), rref.data(), n * 8))) && fail.empty())
            fail = "large reduce: " + std::string(st ? ky_last_error() : "differs from MPI_Reduce");
    }
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}
TEST(CollShm, SplitTeamsEachWithTheirOwn)
{
    /* two teams (parity), each its own segment, used in turn with the world's; then freed and split again */
    int me = ky_rank(), p = ky_nranks();
    std::string fail;
    for (int round = 0; round < 2; round++) {
        ky_team_t team = KY_TEAM_NULL;
        KYT_EXPECT_OK(ky_team_split(KY_TEAM_WORLD, me % 2, me, &team));
        MPI_Comm mc;
        MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &mc);
        int ms;
        MPI_Comm_size(mc, &ms);
        for (int it = 0; it < 10 && team; it++) {
            for (size_t n : {(size_t)3, (size_t)70001}) {
                std::vector<uint8_t> in = make(KY_SUM, KY_DOUBLE, me, n, it + n), out(n * 8), ref(n * 8);
                MPI_Allreduce(in.data(), ref.data(), (int)n, MPI_DOUBLE, MPI_SUM, mc);
                if ((ky_allreduce(in.data(), out.data(), n, KY_DOUBLE, KY_SUM, team) || out != ref) &&
                    fail.empty())
                    fail = "team allreduce: " + std::string(ky_last_error());
            }
            int x = me + it, w = 0, tm = 0;
            if ((ky_allreduce(&x, &w, 1, KY_INT32, KY_SUM, KY_TEAM_WORLD) || w != p * (p - 1) / 2 + p * it) &&
                fail.empty())
                fail = "world allreduce between team ones";
            if ((ky_allreduce(&x, &tm, 1, KY_INT32, KY_MAX, team) || tm != it + (ms - 1) * 2 + me % 2) &&
                fail.empty())
                fail = "team max: " + std::to_string(tm);
            KYT_EXPECT_OK(ky_team_barrier(team));
        }
        double x = 1, y = 0;
        ky_coll_plan_t pl = nullptr;
        KYT_EXPECT_OK(ky_allreduce_init(&x, &y, 1, KY_DOUBLE, KY_SUM, team, &pl));
        ky_coll_algo_t a = KY_ALGO_AUTO;
        if (pl) ky_coll_plan_algo(pl, &a);
        std::vector<int> mates;
        for (int r = me % 2; r < p; r += 2) mates.push_back(r);
        if (ms > 1 && (a == KY_ALGO_SHM) != shm_expected(mates) && fail.empty())
            fail = std::string("team plan runs ") + ky_coll_algo_name(a);
        ky_coll_free(pl);
        KYT_EXPECT_OK(ky_team_free(team));
        MPI_Comm_free(&mc);
    }
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}
/* ---- KY_CHECK=1 variants ------------------------------------------------------------------------------ */

TEST(CollCheck, MismatchesReturnArgEverywhere)
{
    if (kyt::config("KY_CHECK") != "1") GTEST_SKIP() << "needs KY_CHECK=1 (the coll.*.check variants)";
    int me = ky_rank(), p = ky_nranks();
    std::vector<double> a(16, 1.0), b(16 * p, 0.0);
    /* rank 0 passes one more element */
    KYT_EXPECT_STATUS(KY_ERR_ARG,
                      ky_allreduce(a.data(), b.data(), me == 0 ? 9 : 8, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
    EXPECT_NE(std::string(ky_last_error()).find("count"), std::string::npos) << ky_last_error();
    /* the last rank another type, another op */
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allreduce(a.data(), b.data(), 4, me == p - 1 ? KY_INT64 : KY_DOUBLE,
                                               KY_SUM, KY_TEAM_WORLD));
    EXPECT_NE(std::string(ky_last_error()).find("data type"), std::string::npos) << ky_last_error();
    KYT_EXPECT_STATUS(
        KY_ERR_ARG, ky_allreduce(a.data(), b.data(), 4, KY_DOUBLE, me == 1 ? KY_MAX : KY_SUM, KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allgather(a.data(), me == 0 ? 16 : 8, b.data(), KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_bcast(a.data(), 8, me == 0 ? 1 : 0, KY_TEAM_WORLD));
    EXPECT_NE(std::string(ky_last_error()).find("root"), std::string::npos) << ky_last_error();
    /* one rank with a bad argument: everyone fails, nobody hangs */
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allreduce(a.data(), me == 1 ? nullptr : b.data(), 4, KY_DOUBLE, KY_SUM,
                                               KY_TEAM_WORLD));
    KYT_EXPECT_STATUS(KY_ERR_ARG,
                      ky_reduce(a.data(), b.data(), 4, KY_DOUBLE, KY_SUM, me == 0 ? p : 0, KY_TEAM_WORLD));
    /* different collectives */
    if (me == 0)
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_bcast(a.data(), 8, 0, KY_TEAM_WORLD));
    else
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allgather(a.data(), 8, b.data(), KY_TEAM_WORLD));
    /* different forced algorithms */
    {
        Force f(KY_COLL_ALLREDUCE, me == 0 ? KY_ALGO_RING : KY_ALGO_RD);
        KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allreduce(a.data(), b.data(), 4, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
    }
    /* and a matching call works afterwards */
    KYT_EXPECT_OK(ky_allreduce(a.data(), b.data(), 16, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
    EXPECT_TRUE(kyt::all(b[15] == p));
}
