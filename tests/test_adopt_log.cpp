/* The application initialises MPI itself: ky_init adopts it (MPI_THREAD_MULTIPLE kept), ky_finalize leaves
 * MPI running for the application's own MPI_Finalize. Also the logging contract, read back from the
 * KY_DEBUG_FILE this test is run with: every line starts with host:pid:rank, a failed call is logged naming
 * rank and call and followed by the file:line trail of the checks it passed, and the unknown setting
 * KY_BOGUS_SETTING and the values the settings table does not allow (KY_GPUS_PER_RANK=-3, an unknown name in
 * KY_DEBUG_SUBSYS) drew a warning on rank 0 naming what is allowed. */
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "kyoyu.h"

static int failures;
static int me = -1;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "[rank %d] %s:%d: %s: ", me, __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fprintf(stderr, "\n");                                                   \
            failures++;                                                              \
        }                                                                            \
    } while (0)

static std::string read_log(const char *pattern)
{
    /* KY_DEBUG_FILE=dir/log.%p: this process's file */
    std::string path(pattern);
    size_t at = path.find("%p");
    if (at != std::string::npos) path.replace(at, 2, std::to_string(getpid()));
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    CHECK(ky_init(&argc, &argv) == KY_OK, "%s", ky_last_error());
    CHECK(ky_rank() == me, "ky_rank %d", ky_rank());

    /* a remote put and get work on the adopted MPI */
    ky_seg_t seg;
    CHECK(ky_seg_create(nullptr, 64, KY_MEM_HOST, -1, &seg) == KY_OK, "%s", ky_last_error());
    int n = ky_nranks(), right = (me + 1) % n, left = (me + n - 1) % n;
    uint64_t v = 1000 + me, got = 0;
    CHECK(ky_put_val(right, seg, 8, v, 8) == KY_OK, "%s", ky_last_error());
    CHECK(ky_comm_barrier() == KY_OK, "%s", ky_last_error());
    CHECK(ky_get_val(me, seg, 8, 8, &got) == KY_OK && got == (uint64_t)(1000 + left), "got %llu",
          (unsigned long long)got);

    /* a failing call, logged at info level with rank and call */
    CHECK(ky_put(right, seg, 60, &v, 8) == KY_ERR_RANGE, "out-of-range put not refused");
    CHECK(ky_seg_destroy(seg) == KY_OK, "%s", ky_last_error());
    CHECK(ky_finalize() == KY_OK, "%s", ky_last_error());

    int fin = 1;
    MPI_Finalized(&fin);
    CHECK(fin == 0, "ky_finalize finalised the application's MPI");

    const char *file = getenv("KY_DEBUG_FILE");
    CHECK(file != nullptr, "run this test with KY_DEBUG_FILE set");
    if (file) {
        std::string log = read_log(file);
        char host[64];
        gethostname(host, sizeof host);
        host[63] = 0;
        char prefix[160];
        snprintf(prefix, sizeof prefix, "%s:%d:%d: Kyoyu ", host, (int)getpid(), me);
        CHECK(!log.empty(), "log file is empty");
        std::istringstream lines(log);
        std::string line;
        while (std::getline(lines, line))
            if (line.rfind(prefix, 0) != 0 && line.find(": Kyoyu ") != std::string::npos &&
                line.find(":?: Kyoyu ") == std::string::npos)
                CHECK(false, "log line without the host:pid:rank prefix: %s", line.c_str());
        char want[128];
        snprintf(want, sizeof want, "rank %d: ky_put: offset 60 + 8 bytes outside segment", me);
        CHECK(log.find(want) != std::string::npos, "no log line \"%s\" in:\n%s", want, log.c_str());
        /* ... followed by the trail of the checks it passed on its way out (rma.c's range check) */
        size_t at = log.find(want), trail = log.find("rma.c:", at == std::string::npos ? 0 : at);
        CHECK(at != std::string::npos && trail != std::string::npos &&
                  log.compare(log.find(' ', trail) + 1, 3, "-> ") == 0 &&
                  log.find("(access outside a registered segment)", trail) != std::string::npos,
              "no trail \"rma.c:LINE -> STATUS (...)\" after the failure in:\n%s", log.c_str());
        static const char *const warnings[] = {
            "unknown setting KY_BOGUS_SETTING",
            "KY_GPUS_PER_RANK=-3 is not an integer from 0 to 16; using the default 1",
            "KY_DEBUG_SUBSYS=all,bogus is not a comma list of all, runtime, comm, coll, dsm, array, io or "
            "gpu; "
            "using the default all",
            "KY_CG_AGGLOMERATE=2 is not one of auto, 0 or 1; using the default auto",
            "KY_CG_SYNC_US=fast is not a number; using the default 3.0"};
        for (const char *w : warnings) {
            if (me == 0)
                CHECK(log.find(w) != std::string::npos, "no warning \"%s\" in:\n%s", w, log.c_str());
            else
                CHECK(log.find(w) == std::string::npos, "only rank 0 warns about settings: %s", w);
        }
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (me == 0) printf("adopt_log: %s\n", all ? "FAIL" : "PASS");
    return all ? 1 : 0;
}
