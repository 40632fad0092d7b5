/* Calls before ky_init and after ky_finalize return KY_ERR_NOT_INIT (no GoogleTest main: this program's own
 * main makes the calls before initialising). Run with 2 ranks; every rank checks and exits non-zero on a
 * failure, printing what failed. */
#include <cstdio>
#include <cstring>

#include "kyoyu.h"

static int failures;
static int me = -1;

#define CHECK_EQ(want, got)                                                                                \
    do {                                                                                                   \
        long w_ = (long)(want), g_ = (long)(got);                                                          \
        if (w_ != g_) {                                                                                    \
            fprintf(stderr, "[rank %d] %s:%d: %s: want %ld, got %ld (%s)\n", me, __FILE__, __LINE__, #got, \
                    w_, g_, ky_last_error());                                                              \
            failures++;                                                                                    \
        }                                                                                                  \
    } while (0)

static void all_not_init(const char *when)
{
    fprintf(stderr, "checking calls %s\n", when);
    char buf[8] = {0};
    uint64_t v = 0;
    ky_seg_t seg = nullptr;
    ky_handle_t h = nullptr;
    const char *cv = nullptr;
    ky_comm_stats_t st;
    CHECK_EQ(0, ky_initialized());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_rank());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_nranks());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_node());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_nnodes());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_local_rank());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_local_nranks());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_node_of(0));
    CHECK_EQ(KY_ERR_NOT_INIT, ky_ngpus());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_seg_create(nullptr, 64, KY_MEM_HOST, 0, &seg));
    CHECK_EQ(KY_ERR_NOT_INIT, ky_put(0, seg, 0, buf, 1));
    CHECK_EQ(KY_ERR_NOT_INIT, ky_get(buf, 0, seg, 0, 1));
    CHECK_EQ(KY_ERR_NOT_INIT, ky_put_nb(0, seg, 0, buf, 1, &h));
    CHECK_EQ(KY_ERR_NOT_INIT, ky_put_val(0, seg, 0, 1, 8));
    CHECK_EQ(KY_ERR_NOT_INIT, ky_get_val(0, seg, 0, 8, &v));
    CHECK_EQ(KY_ERR_NOT_INIT, ky_memset(0, seg, 0, 0, 1));
    CHECK_EQ(KY_ERR_NOT_INIT, ky_quiet());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_fence(-1));
    CHECK_EQ(KY_ERR_NOT_INIT, ky_am_short(0, 1, nullptr, 0));
    CHECK_EQ(KY_ERR_NOT_INIT, ky_poll());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_barrier_notify());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_barrier_wait());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_barrier_try());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_comm_barrier());
    CHECK_EQ(KY_ERR_NOT_INIT, ky_comm_stats(&st));
    CHECK_EQ(KY_ERR_NOT_INIT, ky_finalize());
    /* these work without initialisation */
    if (!ky_version() || !*ky_version()) {
        fprintf(stderr, "[rank %d] ky_version() empty %s\n", me, when);
        failures++;
    }
    if (!ky_strerror(KY_ERR_NOT_INIT) || !*ky_strerror(KY_ERR_NOT_INIT)) failures++;
    CHECK_EQ(KY_OK, ky_config_get("KY_TIMEOUT", &cv));
    FILE *devnull = fopen("/dev/null", "w");
    CHECK_EQ(KY_OK, ky_config_print(devnull));
    if (devnull) fclose(devnull);
    /* the failed calls left a message naming the call */
    CHECK_EQ(KY_ERR_NOT_INIT, ky_put(0, seg, 0, buf, 1));
    if (!strstr(ky_last_error(), "ky_put")) {
        fprintf(stderr, "[rank %d] last error does not name ky_put: '%s'\n", me, ky_last_error());
        failures++;
    }
}

int main(int argc, char **argv)
{
    all_not_init("before ky_init");
    CHECK_EQ(KY_OK, ky_init(&argc, &argv));
    me = ky_rank();
    CHECK_EQ(1, ky_initialized());
    CHECK_EQ(KY_ERR_STATE, ky_init(&argc, &argv));
    ky_seg_t seg;
    CHECK_EQ(KY_OK, ky_seg_create(nullptr, 64, KY_MEM_HOST, 0, &seg));
    CHECK_EQ(KY_OK, ky_comm_barrier());
    /* finalize frees the segment still alive */
    CHECK_EQ(KY_OK, ky_finalize());
    all_not_init("after ky_finalize");
    if (failures)
        fprintf(stderr, "[rank %d] %d failures\n", me, failures);
    else
        fprintf(stderr, "[rank %d] preinit: all checks passed\n", me);
    return failures ? 1 : 0;
}
