/* Runtime layer: initialisation state, topology against MPI's own view, configuration, status strings and
 * the last-error message. (Calls before ky_init are tested by test_preinit.cpp.) */
#include <unistd.h>

#include <set>

#include "kyt.h"

TEST(Runtime, Initialized)
{
    EXPECT_EQ(1, ky_initialized());
    KYT_EXPECT_STATUS(KY_ERR_STATE, ky_init(nullptr, nullptr));
    EXPECT_EQ(1, ky_initialized());
}

TEST(Runtime, RankAndNranksMatchMpi)
{
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    EXPECT_EQ(r, ky_rank());
    EXPECT_EQ(n, ky_nranks());
}

TEST(Runtime, NodesMatchSharedMemorySplit)
{
    int n = ky_nranks(), me = ky_rank();
    int node = ky_node(), nnodes = ky_nnodes(), lr = ky_local_rank(), ln = ky_local_nranks();
    ASSERT_GE(node, 0);
    ASSERT_LT(node, nnodes);
    ASSERT_GE(lr, 0);
    ASSERT_LT(lr, ln);
    EXPECT_EQ(node, ky_node_of(me));

    /* Every rank's node as seen by every rank agrees with what that rank says of itself. */
    std::vector<int> nodes(n);
    MPI_Allgather(&node, 1, MPI_INT, nodes.data(), 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < n; r++) EXPECT_EQ(nodes[r], ky_node_of(r)) << "rank " << r;
    std::set<int> distinct(nodes.begin(), nodes.end());
    EXPECT_EQ((size_t)nnodes, distinct.size());
    for (int v : distinct) EXPECT_TRUE(v >= 0 && v < nnodes);

    /* local ranks: 0..ln-1 among the ranks of my node, in rank order */
    int count = 0, below = 0;
    for (int r = 0; r < n; r++)
        if (nodes[r] == node) {
            count++;
            if (r < me) below++;
        }
    EXPECT_EQ(count, ln);
    EXPECT_EQ(below, lr);

    /* Against MPI's view of shared memory. */
    MPI_Comm shm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
    int shm_size, shm_rank;
    MPI_Comm_size(shm, &shm_size);
    MPI_Comm_rank(shm, &shm_rank);
    MPI_Comm_free(&shm);
    if (kyt::node_split_rank()) {
        EXPECT_EQ(n, nnodes);
        EXPECT_EQ(me, node);
        EXPECT_EQ(1, ln);
        EXPECT_EQ(0, lr);
    } else {
        EXPECT_EQ(shm_size, ln);
        EXPECT_EQ(shm_rank, lr);
    }
}

TEST(Runtime, NodeOfBadRank)
{
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_node_of(-1));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_node_of(ky_nranks()));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_node_of(1 << 30));
}

TEST(Runtime, Gpus)
{
    int g = ky_ngpus();
    EXPECT_GE(g, 0);
    if (!kyt::have_cuda()) {
        /* a build without CUDA in the tests may still have a CUDA library; only check consistency */
    }
    int d = -1;
    for (int i = 0; i < g; i++) {
        KYT_EXPECT_OK(ky_gpu_device(i, &d));
        EXPECT_GE(d, 0);
    }
    EXPECT_NE(KY_OK, ky_gpu_device(g, &d));
    EXPECT_NE(KY_OK, ky_gpu_device(-1, &d));
    if (g > 0) {
        int reach = -1;
        KYT_EXPECT_OK(ky_gpu_reachable(0, ky_rank(), 0, &reach));
        EXPECT_EQ(1, reach) << "a GPU reaches itself";
        /* another node's GPU is never directly reachable */
        for (int r = 0; r < ky_nranks(); r++) {
            if (ky_node_of(r) == ky_node()) continue;
            reach = -1;
            int st = ky_gpu_reachable(0, r, 0, &reach);
            if (st == KY_OK) {
                EXPECT_EQ(0, reach) << "rank " << r << " is on another node";
            }
        }
    }
    EXPECT_NE(KY_OK, ky_gpu_reachable(0, -1, 0, nullptr));
}

TEST(Runtime, Version)
{
    const char *v = ky_version();
    ASSERT_NE(nullptr, v);
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", KY_VERSION_MAJOR, KY_VERSION_MINOR, KY_VERSION_PATCH);
    EXPECT_STREQ(want, v);
}

TEST(Runtime, ConfigKnownNames)
{
    const char *names[] = {"KY_DEBUG",         "KY_TIMEOUT",     "KY_NODE_SPLIT",
                           "KY_PATH_HOST",     "KY_PATH_GPU",    "KY_EAGER_SIZE",
                           "KY_AM_MEDIUM_MAX", "KY_STAGE_CHUNK", "KY_PROGRESS_THREAD"};
    for (const char *n : names) {
        const char *v = nullptr;
        KYT_EXPECT_OK(ky_config_get(n, &v));
        ASSERT_NE(nullptr, v) << n;
        const char *env = getenv(n);
        if (env && *env) {
            EXPECT_STREQ(env, v) << n << " is set in the environment";
        }
    }
    /* defaults documented in the brief, where the environment does not set them */
    const char *v = nullptr;
    if (!getenv("KY_EAGER_SIZE") && ky_config_get("KY_EAGER_SIZE", &v) == KY_OK) {
        EXPECT_TRUE(!strcmp(v, "16K") || !strcmp(v, "16384")) << v;
    }
    if (!getenv("KY_AM_MEDIUM_MAX")) {
        EXPECT_EQ((size_t)64 * 1024, ky_am_max_medium());
    }
    /* our test environment sets KY_TIMEOUT */
    if (getenv("KY_TIMEOUT")) {
        KYT_EXPECT_OK(ky_config_get("KY_TIMEOUT", &v));
        EXPECT_STREQ(getenv("KY_TIMEOUT"), v);
    }
}

TEST(Runtime, ConfigUnknownAndBadArgs)
{
    const char *v = (const char *)0x1;
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_config_get("KY_NO_SUCH_SETTING", &v));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_config_get("", &v));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_config_get(nullptr, &v));
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_config_get("KY_DEBUG", nullptr));
}

TEST(Runtime, ConfigPrint)
{
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ASSERT_NE(nullptr, f);
    KYT_EXPECT_OK(ky_config_print(f));
    fclose(f);
    std::string out(buf ? buf : "", len);
    free(buf);
    for (const char *n : {"KY_DEBUG", "KY_TIMEOUT", "KY_NODE_SPLIT", "KY_PATH_HOST", "KY_PATH_GPU",
                          "KY_EAGER_SIZE", "KY_AM_MEDIUM_MAX", "KY_STAGE_CHUNK", "KY_PROGRESS_THREAD"})
        EXPECT_NE(std::string::npos, out.find(n)) << n << " missing from ky_config_print";
    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_config_print(nullptr));
}

TEST(Runtime, StrerrorEveryCode)
{
    const int codes[] = {
        KY_OK,         KY_PENDING,      KY_ERR_ARG,        KY_ERR_RANGE,   KY_ERR_NOT_INIT,    KY_ERR_NOMEM,
        KY_ERR_MPI,    KY_ERR_CUDA,     KY_ERR_NO_HANDLER, KY_ERR_TIMEOUT, KY_ERR_UNSUPPORTED, KY_ERR_STATE,
        KY_ERR_SYSTEM, KY_ERR_INTERNAL, KY_ERR_IO};
    std::set<std::string> seen;
    for (int c : codes) {
        const char *s = ky_strerror(c);
        ASSERT_NE(nullptr, s) << c;
        EXPECT_GT(strlen(s), 3u) << c;
        EXPECT_TRUE(seen.insert(s).second) << "duplicate description for " << c << ": " << s;
    }
    for (int c : {-14, -100, 2, 12345, -2147483647 - 1}) {
        const char *s = ky_strerror(c);
        ASSERT_NE(nullptr, s) << c;
        EXPECT_EQ(0u, seen.count(s)) << "unknown code " << c << " described as a known one";
    }
}

TEST(Runtime, LastErrorNamesRankAndCall)
{
    ky_seg_t seg;
    KYT_EXPECT_OK(ky_seg_create(nullptr, 64, KY_MEM_HOST, 0, &seg));
    char buf[16] = {0};
    int target = (ky_rank() + 1) % ky_nranks();
    KYT_EXPECT_STATUS(KY_ERR_RANGE, ky_put(target, seg, 60, buf, 16));
    std::string msg = ky_last_error();
    char want[32];
    snprintf(want, sizeof want, "rank %d", ky_rank());
    EXPECT_NE(std::string::npos, msg.find(want)) << msg;
    EXPECT_NE(std::string::npos, msg.find("ky_put")) << msg;

    KYT_EXPECT_STATUS(KY_ERR_ARG, ky_get(buf, -1, seg, 0, 1));
    msg = ky_last_error();
    EXPECT_NE(std::string::npos, msg.find(want)) << msg;
    EXPECT_NE(std::string::npos, msg.find("ky_get")) << msg;

    /* thread-local: another thread that has not failed sees an empty message */
    std::string other = "unset";
    std::thread t([&] { other = ky_last_error(); });
    t.join();
    EXPECT_EQ("", other);
    KYT_EXPECT_OK(ky_seg_destroy(seg));
}

TEST(Runtime, TopologyNotChangedBySegments)
{
    /* the topology calls are cheap and stable: call them many times from threads */
    int n = ky_nranks(), me = ky_rank();
    std::vector<std::thread> ts;
    std::atomic<int> bad{0};
    for (int i = 0; i < 4; i++)
        ts.emplace_back([&] {
            for (int k = 0; k < 1000; k++)
                if (ky_rank() != me || ky_nranks() != n || ky_node_of(me) != ky_node()) bad++;
        });
    for (auto &t : ts) t.join();
    EXPECT_EQ(0, bad.load());
}
