/* GoogleTest main for Kyoyu's multi-rank tests: initialises Kyoyu (and so MPI), runs the same tests on every
 * rank, prints the full report only on rank 0 (other ranks print just their failures, prefixed with the
 * rank), and makes every rank exit with the same code: failing if any rank failed. */
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>

#include "kyoyu.h"

namespace {

/* On ranks other than 0: only failed assertions, as "[rank r] file:line: message". */
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
  public:
    explicit RankFailurePrinter(int rank) : rank_(rank) {}
    /* (current_test_info() must not be called from OnTestPartResult: gtest holds its lock there) */
    void OnTestStart(const ::testing::TestInfo &t) override
    {
        test_ = std::string(t.test_suite_name()) + "." + t.name();
    }
    void OnTestPartResult(const ::testing::TestPartResult &r) override
    {
        if (!r.failed()) return;
        fprintf(stderr, "[rank %d] %s: %s:%d: %s\n", rank_, test_.c_str(),
                r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
        fflush(stderr);
    }

  private:
    int rank_;
    std::string test_ = "(outside a test)";
};

}  // namespace

int main(int argc, char **argv)
{
    int st = ky_init(&argc, &argv);
    if (st != KY_OK) {
        fprintf(stderr, "ky_init failed: %d %s: %s\n", st, ky_strerror(st), ky_last_error());
        return 1;
    }
    ::testing::InitGoogleTest(&argc, argv);
    int rank = ky_rank();
    ::testing::TestEventListeners &ls = ::testing::UnitTest::GetInstance()->listeners();
    if (rank != 0) {
        delete ls.Release(ls.default_result_printer());
        ls.Append(new RankFailurePrinter(rank));
    } else {
        printf(
            "kyoyu %s: %d ranks, %d nodes, KY_NODE_SPLIT=%s KY_PATH_HOST=%s KY_PATH_GPU=%s "
            "KY_PROGRESS_THREAD=%s KY_TEST_MEMKIND=%s\n",
            ky_version(), ky_nranks(), ky_nnodes(), getenv("KY_NODE_SPLIT") ? getenv("KY_NODE_SPLIT") : "",
            getenv("KY_PATH_HOST") ? getenv("KY_PATH_HOST") : "",
            getenv("KY_PATH_GPU") ? getenv("KY_PATH_GPU") : "",
            getenv("KY_PROGRESS_THREAD") ? getenv("KY_PROGRESS_THREAD") : "",
            getenv("KY_TEST_MEMKIND") ? getenv("KY_TEST_MEMKIND") : "");
        fflush(stdout);
    }
    int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && any && !failed) printf("FAILED: another rank reported failures (see [rank N] lines)\n");
    fflush(stdout);
    st = ky_finalize();
    if (st != KY_OK) {
        fprintf(stderr, "[rank %d] ky_finalize failed: %s: %s\n", rank, ky_strerror(st), ky_last_error());
        any = 1;
    }
    return any ? 1 : 0;
}
