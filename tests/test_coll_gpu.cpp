/* Collectives on GPU buffers: every algorithm (the host ones staged through pinned
 * memory, oneshot/twoshot over NVLink), type and operation against MPI_Allreduce / MPI_Allgather computed on
 * host copies of the same data; counts 0, 1, odd and large; in place; bcast and reduce; persistent plans
 * started many times back to back on a stream with changing data; a plan captured in a CUDA graph and
 * replayed; a split team. Variants (tests/CMakeLists.txt): default (NVLink on one node), split
 * (KY_NODE_SPLIT=rank: every rank its own node, the staged path), staged (KY_COLL_GPU_PATH=staged).
 * Without a GPU on every rank (or without CUDA in the build) every test skips with a message. */
#include "kyt.h"

#ifdef KY_TEST_HAVE_CUDA

namespace {

const ky_coll_algo_t kAllreduceAlgos[] = {KY_ALGO_ONESHOT,      KY_ALGO_TWOSHOT, KY_ALGO_RING,
                                          KY_ALGO_NEIGHBOR,     KY_ALGO_RD,      KY_ALGO_BRUCK,
                                          KY_ALGO_REDUCE_BCAST, KY_ALGO_AUTO};
const ky_coll_algo_t kAllgatherAlgos[] = {KY_ALGO_ONESHOT, KY_ALGO_RING,  KY_ALGO_NEIGHBOR,
                                          KY_ALGO_RD,      KY_ALGO_BRUCK, KY_ALGO_AUTO};
const ky_dtype_t kTypes[] = {KY_INT32, KY_INT64, KY_FLOAT, KY_DOUBLE};
const ky_op_t kOps[] = {KY_SUM, KY_PROD, KY_MIN, KY_MAX};

size_t esize(ky_dtype_t t)
{
    return t == KY_INT32 || t == KY_FLOAT ? 4 : 8;
}
MPI_Datatype mpi_type(ky_dtype_t t)
{
    return t == KY_INT32 ? MPI_INT32_T : t == KY_INT64 ? MPI_INT64_T : t == KY_FLOAT ? MPI_FLOAT : MPI_DOUBLE;
}
MPI_Op mpi_op(ky_op_t op)
{
    return op == KY_SUM ? MPI_SUM : op == KY_PROD ? MPI_PROD : op == KY_MIN ? MPI_MIN : MPI_MAX;
}

/* Values exact under any reduction order (small integers; products of 1, 2, -1, 0.5 over <= 5 ranks). */
std::vector<uint8_t> make(ky_op_t op, ky_dtype_t t, int rank, size_t n, uint64_t salt)
{
    std::vector<uint8_t> v(n * esize(t) + 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t h = kyt::mix(rank, i, salt);
        double x = (double)((int64_t)(h % 2001) - 1000);
        if (op == KY_PROD) {
            static const double f[] = {1, 2, -1, 0.5};
            x = f[h % 4];
            if ((t == KY_INT32 || t == KY_INT64) && x == 0.5) x = 1;
        }
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

struct Force {
    ky_coll_kind_t k;
    Force(ky_coll_kind_t kind, ky_coll_algo_t a) : k(kind) { ky_coll_set_algo(kind, a); }
    ~Force() { ky_coll_set_algo(k, KY_ALGO_AUTO); }
};

/* A GPU buffer of this rank's device, freed with the scope. */
struct Dev {
    void *p = nullptr;
    explicit Dev(size_t n) { p = kyt::mem_alloc(KY_MEM_GPU, n ? n : 1); }
    ~Dev() { kyt::mem_free(KY_MEM_GPU, p); }
    char *c() const { return (char *)p; }
};

void put(void *d, const void *h, size_t n)
{
    kyt::mem_write(KY_MEM_GPU, d, h, n);
}
std::vector<uint8_t> get(const void *d, size_t n)
{
    std::vector<uint8_t> v(n);
    kyt::mem_read(KY_MEM_GPU, v.data(), d, n);
    return v;
}

std::string what(const char *c, ky_coll_algo_t a, ky_dtype_t t, ky_op_t op, size_t n, bool ip)
{
    char b[200];
    snprintf(b, sizeof b, "%s algo %s type %d op %d count %zu%s", c, ky_coll_algo_name(a), (int)t, (int)op, n,
             ip ? " in place" : "");
    return b;
}

std::string allreduce_case(ky_coll_algo_t a, ky_dtype_t t, ky_op_t op, size_t n, bool ip, uint64_t salt)
{
    size_t bytes = n * esize(t);
    std::vector<uint8_t> in = make(op, t, ky_rank(), n, salt), ref(bytes + 1, 0);
    MPI_Allreduce(in.data(), ref.data(), (int)n, mpi_type(t), mpi_op(op), MPI_COMM_WORLD);
    Dev s(bytes), r(bytes + 16);
    put(s.p, in.data(), bytes);
    std::vector<uint8_t> guard(bytes + 16, 0xee);
    put(r.p, guard.data(), bytes + 16);
    int st;
    if (ip) {
        put(r.p, in.data(), bytes);
        st = ky_allreduce(KY_IN_PLACE, r.p, n, t, op, KY_TEAM_WORLD);
    } else {
        st = ky_allreduce(s.p, r.p, n, t, op, KY_TEAM_WORLD);
    }
    std::vector<uint8_t> out = get(r.p, bytes + 16);
    if (st != KY_OK) return what("allreduce", a, t, op, n, ip) + ": " + ky_last_error();
    if (memcmp(out.data(), ref.data(), bytes))
        return what("allreduce", a, t, op, n, ip) + ": differs from MPI_Allreduce";
    if (!ip && out[bytes] != 0xee) return what("allreduce", a, t, op, n, ip) + ": wrote past the end";
    if (memcmp(get(s.p, bytes).data(), in.data(), bytes))
        return what("allreduce", a, t, op, n, ip) + ": input changed";
    return "";
}

bool gpus()
{
    return kyt::gpu_everywhere();
}
#define NEED_GPUS()                                                                                       \
    do {                                                                                                  \
        if (!gpus())                                                                                      \
            GTEST_SKIP() << "GPU collectives: no GPU on some rank (ky_ngpus()==0) or built without CUDA"; \
    } while (0)

}  // namespace

TEST(CollGpu, AllreduceEveryAlgoTypeOp)
{
    NEED_GPUS();
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

TEST(CollGpu, AllreduceLarge)
{
    NEED_GPUS();
    std::string fail;
    size_t n = ((size_t)kyt::scaled(1 << 21, 1 << 16)) | 3; /* 8 MiB+ of int32, 16 MiB+ of double, odd */
    for (ky_coll_algo_t a : {KY_ALGO_ONESHOT, KY_ALGO_TWOSHOT, KY_ALGO_AUTO, KY_ALGO_RING}) {
        Force f(KY_COLL_ALLREDUCE, a);
        for (ky_dtype_t t : {KY_INT32, KY_DOUBLE})
            for (bool ip : {false, true}) {
                std::string e = allreduce_case(a, t, KY_SUM, n, ip, 77 + a);
                if (fail.empty()) fail = e;
            }
        std::string e = allreduce_case(a, KY_FLOAT, KY_MAX, n / 2 + 1, false, 99);
        if (fail.empty()) fail = e;
    }
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}

TEST(CollGpu, AllgatherEveryAlgo)
{
    NEED_GPUS();
    int p = ky_nranks(), me = ky_rank();
    std::string fail;
    size_t large = (size_t)kyt::scaled(3 << 20, 1 << 18) + 3;
    for (ky_coll_algo_t a : kAllgatherAlgos) {
        Force f(KY_COLL_ALLGATHER, a);
        for (size_t b : {(size_t)0, (size_t)1, (size_t)8, (size_t)13, (size_t)16, (size_t)2051, large})
            for (bool ip : {false, true}) {
                std::vector<uint8_t> in(b + 1), ref(b * p + 1, 0), guard(b * p + 16, 0xee);
                kyt::fill_pattern(in.data(), b, kyt::mix(me, b, a));
                MPI_Allgather(in.data(), (int)b, MPI_BYTE, ref.data(), (int)b, MPI_BYTE, MPI_COMM_WORLD);
                Dev s(b), r(b * p + 16);
                put(s.p, in.data(), b);
                put(r.p, guard.data(), b * p + 16);
                int st;
                if (ip) {
                    put(r.c() + b * me, in.data(), b);
                    st = ky_allgather(KY_IN_PLACE, b, r.p, KY_TEAM_WORLD);
                } else {
                    st = ky_allgather(s.p, b, r.p, KY_TEAM_WORLD);
                }
                std::vector<uint8_t> out = get(r.p, b * p + 16);
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

TEST(CollGpu, BcastAndReduceEveryRoot)
{
    NEED_GPUS();
    int p = ky_nranks(), me = ky_rank();
    std::string fail;
    for (int root = 0; root < p; root++) {
        for (size_t b : {(size_t)0, (size_t)1, (size_t)1000, (size_t)kyt::scaled(1 << 20, 1 << 16) + 5}) {
            std::vector<uint8_t> ref(b + 1), mine(b + 1);
            kyt::fill_pattern(ref.data(), b, kyt::mix(root, b));
            kyt::fill_pattern(mine.data(), b, 999 + me);
            Dev d(b);
            put(d.p, me == root ? ref.data() : mine.data(), b);
            int st = ky_bcast(d.p, b, root, KY_TEAM_WORLD);
            if (st && fail.empty())
                fail = std::string("bcast: ") + ky_last_error();
            else if (memcmp(get(d.p, b).data(), ref.data(), b) && fail.empty())
                fail = "bcast root " + std::to_string(root) + " bytes " + std::to_string(b) + ": wrong data";
        }
        for (ky_dtype_t t : kTypes)
            for (ky_op_t op : kOps)
                for (size_t n : {(size_t)1, (size_t)513, (size_t)100003}) {
                    size_t bytes = n * esize(t);
                    std::vector<uint8_t> in = make(op, t, me, n, n + root), ref(bytes + 1, 0);
                    MPI_Reduce(in.data(), ref.data(), (int)n, mpi_type(t), mpi_op(op), root, MPI_COMM_WORLD);
                    Dev s(bytes), r(bytes);
                    put(s.p, in.data(), bytes);
                    int st = ky_reduce(s.p, me == root ? r.p : nullptr, n, t, op, root, KY_TEAM_WORLD);
                    if (st && fail.empty())
                        fail = std::string("reduce: ") + ky_last_error();
                    else if (me == root && memcmp(get(r.p, bytes).data(), ref.data(), bytes) && fail.empty())
                        fail = what("reduce", KY_ALGO_AUTO, t, op, n, false) + " root " +
                               std::to_string(root) + ": differs from MPI_Reduce";
                }
    }
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}

/* Plans started back to back on a stream, K rounds with new input each, one wait at the end. */
TEST(CollGpu, PersistentPlansOnAStream)
{
    NEED_GPUS();
    int p = ky_nranks(), me = ky_rank();
    std::string fail;
    bool ok = true;
    cudaStream_t stream;
    cudaSetDevice(kyt::my_device());
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    const int K = 40;
    for (ky_coll_algo_t a : {KY_ALGO_ONESHOT, KY_ALGO_TWOSHOT, KY_ALGO_AUTO, KY_ALGO_RING, KY_ALGO_BRUCK}) {
        Force f(KY_COLL_ALLREDUCE, a);
        Force g(KY_COLL_ALLGATHER, a == KY_ALGO_TWOSHOT ? KY_ALGO_ONESHOT : a);
        for (size_t n : {(size_t)1, (size_t)1027, (size_t)300001}) {
            size_t bytes = n * 8;
            Dev in(bytes), out(bytes), gin(n), gout(n * p);
            ky_coll_plan_t ar = nullptr, ag = nullptr;
            KYT_EXPECT_OK(ky_allreduce_init(in.p, out.p, n, KY_INT64, KY_SUM, KY_TEAM_WORLD, &ar));
            KYT_EXPECT_OK(ky_allgather_init(gin.p, n, gout.p, KY_TEAM_WORLD, &ag));
            ky_coll_algo_t got = KY_ALGO_AUTO;
            if (ar) ky_coll_plan_algo(ar, &got);
            if (a == KY_ALGO_ONESHOT || a == KY_ALGO_TWOSHOT)
                /* NVLink kernels only inside one node: several (logical) nodes use the staged or hierarchical
                 * path */
                ok = ok &&
                     (got == a || ky_nnodes() > 1 || kyt::config("KY_COLL_GPU_PATH") == "staged" || p == 1);
            if (!ok && fail.empty())
                fail = std::string("forced ") + ky_coll_algo_name(a) + " but the plan chose " +
                       ky_coll_algo_name(got);
            /* staged plans synchronise the stream inside start, still correct */
            std::vector<std::vector<int64_t>> hin(K, std::vector<int64_t>(n)),
                href(K, std::vector<int64_t>(n));
            std::vector<std::vector<uint8_t>> gh(K, std::vector<uint8_t>(n)),
                gref(K, std::vector<uint8_t>(n * p));
            int64_t *pin_out = nullptr;
            uint8_t *pin_gout = nullptr;
            cudaMallocHost((void **)&pin_out, bytes * K);
            cudaMallocHost((void **)&pin_gout, n * p * K);
            for (int k = 0; k < K; k++) {
                for (size_t i = 0; i < n; i++) hin[k][i] = (int64_t)(kyt::mix(me, i, k + 100 * a) % 100000);
                kyt::fill_pattern(gh[k].data(), n, kyt::mix(me, k, a));
                MPI_Allreduce(hin[k].data(), href[k].data(), (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
                MPI_Allgather(gh[k].data(), (int)n, MPI_BYTE, gref[k].data(), (int)n, MPI_BYTE,
                              MPI_COMM_WORLD);
            }
            for (int k = 0; k < K && ar && ag; k++) {
                cudaMemcpyAsync(in.p, hin[k].data(), bytes, cudaMemcpyHostToDevice, stream);
                cudaMemcpyAsync(gin.p, gh[k].data(), n, cudaMemcpyHostToDevice, stream);
                int s1 = ky_coll_start(ar, stream), s2 = ky_coll_start(ag, stream);
                if ((s1 || s2) && fail.empty()) fail = std::string("start: ") + ky_last_error();
                cudaMemcpyAsync(pin_out + n * k, out.p, bytes, cudaMemcpyDeviceToHost, stream);
                cudaMemcpyAsync(pin_gout + n * p * k, gout.p, n * p, cudaMemcpyDeviceToHost, stream);
            }
            if (ar && (ky_coll_wait(ar) || ky_coll_wait(ag)) && fail.empty())
                fail = std::string("wait: ") + ky_last_error();
            cudaStreamSynchronize(stream);
            for (int k = 0; k < K && fail.empty(); k++) {
                if (memcmp(pin_out + n * k, href[k].data(), bytes))
                    fail = std::string("plan allreduce ") + ky_coll_algo_name(a) + " n " + std::to_string(n) +
                           " round " + std::to_string(k) + ": wrong result";
                else if (memcmp(pin_gout + n * p * k, gref[k].data(), n * p))
                    fail = std::string("plan allgather ") + ky_coll_algo_name(a) + " n " + std::to_string(n) +
                           " round " + std::to_string(k) + ": wrong result";
            }
            cudaFreeHost(pin_out);
            cudaFreeHost(pin_gout);
            KYT_EXPECT_OK(ky_coll_free(ar));
            KYT_EXPECT_OK(ky_coll_free(ag));
        }
    }
    cudaStreamDestroy(stream);
    EXPECT_TRUE(kyt::all(ok && fail.empty())) << fail;
}

/* A plan captured in a CUDA graph (NVLink path only: the staged path needs the host) replayed with new
 * data; replays also run back to back. */
TEST(CollGpu, GraphCapturedPlan)
{
    NEED_GPUS();
    int p = ky_nranks(), me = ky_rank();
    ky_coll_plan_t probe = nullptr;
    double x = 0, *dx = nullptr;
    cudaSetDevice(kyt::my_device());
    cudaMalloc((void **)&dx, 8);
    cudaMemcpy(dx, &x, 8, cudaMemcpyHostToDevice);
    Force f0(KY_COLL_ALLREDUCE, KY_ALGO_ONESHOT);
    KYT_EXPECT_OK(ky_allreduce_init(dx, dx, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &probe));
    ky_coll_algo_t got = KY_ALGO_AUTO;
    ky_coll_plan_algo(probe, &got);
    KYT_EXPECT_OK(ky_coll_free(probe));
    cudaFree(dx);
    if (!kyt::all(got == KY_ALGO_ONESHOT))
        GTEST_SKIP() << "no NVLink path in this variant: staged plans cannot be captured";
    std::string fail;
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    for (ky_coll_algo_t a : {KY_ALGO_ONESHOT, KY_ALGO_TWOSHOT}) {
        Force f(KY_COLL_ALLREDUCE, a);
        size_t n = a == KY_ALGO_ONESHOT ? 1 : 200003, bytes = n * 8, gb = 8;
        Dev in(bytes), out(bytes), gin(gb), gout(gb * p);
        ky_coll_plan_t ar = nullptr, ag = nullptr;
        KYT_EXPECT_OK(ky_allreduce_init(in.p, out.p, n, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &ar));
        KYT_EXPECT_OK(ky_allgather_init(gin.p, gb, gout.p, KY_TEAM_WORLD, &ag));
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
        int s1 = ky_coll_start(ar, stream), s2 = ky_coll_start(ag, stream);
        int s3 = ky_coll_wait(ar); /* inside a capture: nothing to wait for */
        cudaError_t ce = cudaStreamEndCapture(stream, &graph);
        if ((s1 || s2 || s3 || ce != cudaSuccess) && fail.empty())
            fail = std::string("capture: ") + ky_last_error() + " / " + cudaGetErrorString(ce);
        if (graph && cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess && fail.empty())
            fail = "cudaGraphInstantiate failed";
        for (int rep = 0; rep < 6 && exec; rep++) {
            std::vector<double> h(n), ref(n), gh(1), gref(p), o(n), go(p);
            for (size_t i = 0; i < n; i++) h[i] = (double)(kyt::mix(me, i, rep) % 1000);
            gh[0] = me * 10 + rep;
            MPI_Allreduce(h.data(), ref.data(), (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allgather(gh.data(), 8, MPI_BYTE, gref.data(), 8, MPI_BYTE, MPI_COMM_WORLD);
            cudaMemcpy(in.p, h.data(), bytes, cudaMemcpyHostToDevice);
            cudaMemcpy(gin.p, gh.data(), 8, cudaMemcpyHostToDevice);
            cudaGraphLaunch(exec, stream);
            if (rep % 2) cudaGraphLaunch(exec, stream); /* again, back to back: same input, same result */
            cudaError_t e = cudaStreamSynchronize(stream);
            cudaMemcpy(o.data(), out.p, bytes, cudaMemcpyDeviceToHost);
            cudaMemcpy(go.data(), gout.p, 8 * p, cudaMemcpyDeviceToHost);
            if (e != cudaSuccess && fail.empty())
                fail = std::string("replay: ") + cudaGetErrorString(e);
            else if ((o != ref || go != gref) && fail.empty())
                fail = std::string("graph replay ") + std::to_string(rep) + " " + ky_coll_algo_name(a) +
                       ": wrong result";
        }
        if (exec) cudaGraphExecDestroy(exec);
        if (graph) cudaGraphDestroy(graph);
        KYT_EXPECT_OK(ky_coll_free(ar));
        KYT_EXPECT_OK(ky_coll_free(ag));
    }
    cudaStreamDestroy(stream);
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}

/* auto's choice between one-shot and two-shot on NVLink follows the crossovers measured per member count (4
 * H200s, 2026-11-27): two members one-shot to 16 MiB, three to 4 MiB, four and more to KY_NVL_ONESHOT_MAX
 * (2 MiB). The plan is only made (no data moves); the staged variants run neither. */
TEST(CollGpu, AutoOneshotLimitByMembers)
{
    NEED_GPUS();
    if (!kyt::config("KY_NVL_ONESHOT_MAX").empty()) GTEST_SKIP() << "KY_NVL_ONESHOT_MAX set: its own limit";
    int p = ky_nranks();
    size_t one = p == 2 ? (size_t)16 << 20 : p == 3 ? (size_t)4 << 20 : (size_t)2 << 20, two = 2 * one;
    Dev d(two);
    std::string fail;
    bool nvl = true;
    for (size_t bytes : {one, two}) {
        ky_coll_plan_t pl = nullptr;
        KYT_EXPECT_OK(ky_allreduce_init(d.p, d.p, bytes / 8, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD, &pl));
        ky_coll_algo_t got = KY_ALGO_AUTO;
        if (pl) ky_coll_plan_algo(pl, &got);
        ky_coll_free(pl);
        if (got != KY_ALGO_ONESHOT && got != KY_ALGO_TWOSHOT) nvl = false;
        ky_coll_algo_t want = bytes == one ? KY_ALGO_ONESHOT : KY_ALGO_TWOSHOT;
        if (nvl && got != want && fail.empty())
            fail = std::to_string(bytes) + " B on " + std::to_string(p) +
                   " members: " + ky_coll_algo_name(got) + ", expected " + ky_coll_algo_name(want);
    }
    if (!kyt::all(nvl)) GTEST_SKIP() << "no NVLink path in this variant";
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}

TEST(CollGpu, SplitTeam)
{
    NEED_GPUS();
    int me = ky_rank();
    ky_team_t team = KY_TEAM_NULL;
    KYT_EXPECT_OK(ky_team_split(KY_TEAM_WORLD, me % 2, me, &team));
    MPI_Comm mc;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &mc);
    int ms;
    MPI_Comm_size(mc, &ms);
    std::string fail;
    for (size_t n : {(size_t)1, (size_t)4099, (size_t)500000}) {
        std::vector<uint8_t> in = make(KY_SUM, KY_DOUBLE, me, n, n), ref(n * 8), gref(n * ms);
        MPI_Allreduce(in.data(), ref.data(), (int)n, MPI_DOUBLE, MPI_SUM, mc);
        MPI_Allgather(in.data(), (int)n, MPI_BYTE, gref.data(), (int)n, MPI_BYTE, mc);
        Dev s(n * 8), r(n * 8), g(n * ms);
        put(s.p, in.data(), n * 8);
        if ((ky_allreduce(s.p, r.p, n, KY_DOUBLE, KY_SUM, team) || get(r.p, n * 8) != ref) && fail.empty())
            fail = std::string("team allreduce ") + ky_last_error();
        if ((ky_allgather(s.p, n, g.p, team) || get(g.p, n * ms) != gref) && fail.empty())
            fail = std::string("team allgather ") + ky_last_error();
    }
    KYT_EXPECT_OK(ky_team_free(team));
    MPI_Comm_free(&mc);
    EXPECT_TRUE(kyt::all(fail.empty())) << fail;
}

TEST(CollGpu, MixedKindsRefused)
{
    NEED_GPUS();
    Dev d(64);
    double h[8] = {0};
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_allreduce(h, d.p, 8, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
    EXPECT_NE(std::string(ky_last_error()).find("host memory"), std::string::npos) << ky_last_error();
    /* and a good call afterwards */
    double one = 1;
    put(d.p, &one, 8);
    KYT_EXPECT_OK(ky_allreduce(KY_IN_PLACE, d.p, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD));
    double got = 0;
    kyt::mem_read(KY_MEM_GPU, &got, d.p, 8);
    EXPECT_TRUE(kyt::all(got == ky_nranks())) << got;
}

#else

TEST(CollGpu, Skipped)
{
    GTEST_SKIP() << "GPU collectives: the tests were built without CUDA";
}

#endif
