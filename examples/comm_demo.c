/* comm_demo (installed as ky_demo): a tour of Kyoyu's one-sided layer on any number of ranks (make demo
 * runs 4). Every rank
 *   1. puts a 64 KiB block into every other rank's host segment (half blocking, half non-blocking),
 *   2. gets one block back from its left neighbour,
 *   3. does an active-message round trip (a medium request whose handler replies with a short),
 *   4. puts a 4x6 sub-block of a 8x16 matrix into a 10x10 matrix of its right neighbour (strided put),
 * checks everything against values it computes itself, and sends its error count and its per-path
 * counters (ky_comm_stats) to rank 0, which prints a report and a PASS/FAIL line. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kyoyu.h>

#define BLOCK_WORDS (16 * 1024) /* 64 KiB per block */
#define MAT_N 10                /* target matrix MAT_N x MAT_N (int32) */
#define SRC_ROWS 8
#define SRC_COLS 16
#define SUB_ROWS 4
#define SUB_COLS 6
#define SUB_R0 2 /* where the sub-block lands in the target matrix */
#define SUB_C0 3
#define AM_REQ 1
#define AM_REP 2
#define AM_WORDS 256

#define CHECK(call)                                                                                 \
    do {                                                                                            \
        int s_ = (call);                                                                            \
        if (s_ != KY_OK) {                                                                          \
            fprintf(stderr, "[rank %d] %s:%d: %s: %s (%s)\n", ky_rank(), __FILE__, __LINE__, #call, \
                    ky_strerror(s_), ky_last_error());                                              \
            return 1;                                                                               \
        }                                                                                           \
    } while (0)

/* What rank src writes into rank dst's block, word i. */
static uint32_t block_word(int src, int dst, size_t i)
{
    return (uint32_t)src * 1000003u ^ (uint32_t)dst * 7919u ^ (uint32_t)i * 2654435761u;
}
/* Element (r, c) of rank src's 8x16 source matrix. */
static int32_t src_elem(int src, int r, int c)
{
    return src * 10000 + r * 100 + c;
}

static atomic_int am_done;
static uint64_t am_reply[3];

/* Request handler (runs on the target): sum the payload and reply with (cookie, sum, my rank). */
static void on_request(ky_am_token_t token, void *payload, size_t nbytes, const uint64_t *args, int nargs)
{
    const uint32_t *w = payload;
    uint64_t sum = 0;
    for (size_t i = 0; i < nbytes / sizeof(uint32_t); i++) sum += w[i];
    uint64_t rep[3] = {nargs > 0 ? args[0] : 0, sum, (uint64_t)ky_rank()};
    ky_am_reply_short(token, AM_REP, rep, 3);
}

/* Reply handler (runs back on the requester). */
static void on_reply(ky_am_token_t token, void *payload, size_t nbytes, const uint64_t *args, int nargs)
{
    (void)token, (void)payload, (void)nbytes;
    for (int i = 0; i < 3 && i < nargs; i++) am_reply[i] = args[i];
    atomic_store(&am_done, 1);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    CHECK(ky_init(&argc, &argv));
    const int me = ky_rank(), n = ky_nranks();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    uint64_t errors = 0;

    /* Segment layout: n blocks | MAT_N x MAT_N matrix | n stats records | n error counts. */
    const size_t off_blocks = 0;
    const size_t off_mat = off_blocks + (size_t)n * BLOCK_WORDS * sizeof(uint32_t);
    const size_t off_stats = off_mat + MAT_N * MAT_N * sizeof(int32_t);
    const size_t off_err = off_stats + (size_t)n * sizeof(ky_comm_stats_t);
    const size_t seg_bytes = off_err + (size_t)n * sizeof(uint64_t);

    ky_seg_t seg;
    unsigned char *base;
    CHECK(ky_seg_create(NULL, seg_bytes, KY_MEM_HOST, 0, &seg));
    CHECK(ky_seg_local(seg, (void **)&base, NULL));
    memset(base, 0, seg_bytes);
    CHECK(ky_am_register(AM_REQ, on_request));
    CHECK(ky_am_register(AM_REP, on_reply));
    CHECK(ky_comm_barrier()); /* segments cleared and handlers registered everywhere */
    CHECK(ky_comm_stats_reset());

    /* 1. one block to every other rank, into slot `me` of its segment */
    static uint32_t out[BLOCK_WORDS];
    uint32_t *outs = calloc((size_t)n * BLOCK_WORDS, sizeof(uint32_t)); /* one source buffer per target */
    ky_handle_t *handles = calloc((size_t)n, sizeof(ky_handle_t));
    if (!outs || !handles) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    size_t nh = 0;
    for (int k = 1; k < n; k++) {
        int dst = (me + k) % n;
        uint32_t *buf = outs + (size_t)dst * BLOCK_WORDS;
        for (size_t i = 0; i < BLOCK_WORDS; i++) buf[i] = block_word(me, dst, i);
        size_t off = off_blocks + (size_t)me * BLOCK_WORDS * sizeof(uint32_t);
        if (k % 2 == 0) /* blocking: returns when the data is in dst's memory */
            CHECK(ky_put(dst, seg, off, buf, BLOCK_WORDS * sizeof(uint32_t)));
        else /* non-blocking: completed by ky_wait_all below */
            CHECK(ky_put_nb(dst, seg, off, buf, BLOCK_WORDS * sizeof(uint32_t), &handles[nh++]));
    }
    CHECK(ky_wait_all(handles, nh));
    free(outs);
    free(handles);

    /* 4. strided put: rows 1..4, columns 5..10 of my 8x16 matrix -> (2..5, 3..8) of right's 10x10 */
    int32_t srcm[SRC_ROWS][SRC_COLS];
    for (int r = 0; r < SRC_ROWS; r++)
        for (int c = 0; c < SRC_COLS; c++) srcm[r][c] = src_elem(me, r, c);
    size_t count[2] = {SUB_COLS * sizeof(int32_t), SUB_ROWS};
    size_t src_stride[1] = {SRC_COLS * sizeof(int32_t)};
    size_t dst_stride[1] = {MAT_N * sizeof(int32_t)};
    if (n > 1)
        CHECK(ky_put_strided(right, seg, off_mat + (SUB_R0 * MAT_N + SUB_C0) * sizeof(int32_t), dst_stride,
                             &srcm[1][5], src_stride, count, 1));
    CHECK(ky_comm_barrier()); /* every put has landed */

    /* check the blocks others put here */
    for (int src = 0; src < n; src++) {
        if (src == me) continue;
        const uint32_t *blk = (const uint32_t *)(base + off_blocks) + (size_t)src * BLOCK_WORDS;
        for (size_t i = 0; i < BLOCK_WORDS; i++)
            if (blk[i] != block_word(src, me, i)) {
                if (errors++ < 5) fprintf(stderr, "[rank %d] block from %d word %zu wrong\n", me, src, i);
            }
    }
    /* check the matrix: the sub-block from my left neighbour, zeros elsewhere */
    const int32_t *mat = (const int32_t *)(base + off_mat);
    for (int r = 0; r < MAT_N; r++)
        for (int c = 0; c < MAT_N; c++) {
            int in = n > 1 && r >= SUB_R0 && r < SUB_R0 + SUB_ROWS && c >= SUB_C0 && c < SUB_C0 + SUB_COLS;
            int32_t want = in ? src_elem(left, 1 + r - SUB_R0, 5 + c - SUB_C0) : 0;
            if (mat[r * MAT_N + c] != want) {
                if (errors++ < 5) fprintf(stderr, "[rank %d] matrix (%d,%d) wrong\n", me, r, c);
            }
        }

    /* 2. get back the block I put into my left neighbour */
    if (n > 1) {
        CHECK(ky_get(out, left, seg, off_blocks + (size_t)me * BLOCK_WORDS * sizeof(uint32_t),
                     BLOCK_WORDS * sizeof(uint32_t)));
        for (size_t i = 0; i < BLOCK_WORDS; i++)
            if (out[i] != block_word(me, left, i)) {
                if (errors++ < 5) fprintf(stderr, "[rank %d] get from %d word %zu wrong\n", me, left, i);
            }
    }

    /* 3. active-message round trip with my right neighbour */
    uint32_t payload[AM_WORDS];
    uint64_t want_sum = 0;
    for (int i = 0; i < AM_WORDS; i++) want_sum += payload[i] = (uint32_t)(me * 31 + i);
    uint64_t cookie = 0xC0FFEE00u + (uint64_t)me;
    double t0 = now();
    CHECK(ky_am_medium(right, AM_REQ, payload, sizeof payload, &cookie, 1));
    while (!atomic_load(&am_done)) {
        ky_poll(); /* only needed with KY_PROGRESS_THREAD=0; harmless otherwise */
        if (now() - t0 > 30.0) {
            fprintf(stderr, "[rank %d] no active-message reply after 30 s\n", me);
            errors++;
            break;
        }
    }
    double am_us = (now() - t0) * 1e6;
    if (atomic_load(&am_done) &&
        (am_reply[0] != cookie || am_reply[1] != want_sum || am_reply[2] != (uint64_t)right)) {
        fprintf(stderr, "[rank %d] active-message reply wrong: cookie %llx sum %llu from %llu\n", me,
                (unsigned long long)am_reply[0], (unsigned long long)am_reply[1],
                (unsigned long long)am_reply[2]);
        errors++;
    }
    CHECK(ky_comm_barrier()); /* every request handled before the counters are read */

    /* report: counters and error count to rank 0 */
    ky_comm_stats_t st;
    CHECK(ky_comm_stats(&st));
    CHECK(ky_put(0, seg, off_stats + (size_t)me * sizeof st, &st, sizeof st));
    CHECK(ky_put_val(0, seg, off_err + (size_t)me * sizeof(uint64_t), errors, sizeof(uint64_t)));
    CHECK(ky_comm_barrier());

    int rc = errors ? 1 : 0;
    if (me == 0) {
        static const char *path_names[KY_PATH_COUNT] = {"self", "shm", "ipc", "mpi", "ucx"};
        ky_path_t p;
        CHECK(ky_comm_path(n > 1 ? 1 : 0, seg, base, &p));
        printf(
            "Kyoyu %s comm demo: %d ranks on %d node(s), host segments of %zu bytes, path to rank %d: %s\n",
            ky_version(), n, ky_nnodes(), seg_bytes, n > 1 ? 1 : 0, path_names[p]);
        printf(
            "  each rank: %d block puts of %zu KiB, 1 get, 1 strided put (%dx%d ints), 1 AM round trip "
            "(%.1f us on rank 0)\n",
            n - 1, BLOCK_WORDS * sizeof(uint32_t) / 1024, SUB_ROWS, SUB_COLS, am_us);
        printf(
            "  rank |  ops self   shm   ipc   mpi |    bytes shm     bytes mpi | am sent/run | plans "
            "hit/miss | errors\n");
        uint64_t total_err = 0;
        for (int r = 0; r < n; r++) {
            const ky_comm_stats_t *s = (const ky_comm_stats_t *)(base + off_stats) + r;
            uint64_t e = ((const uint64_t *)(base + off_err))[r];
            total_err += e;
            printf("  %4d | %9llu %5llu %5llu %5llu | %12llu %13llu | %4llu/%-6llu | %6llu/%-7llu | %llu\n",
                   r, (unsigned long long)s->ops[KY_PATH_SELF], (unsigned long long)s->ops[KY_PATH_SHM],
                   (unsigned long long)s->ops[KY_PATH_IPC], (unsigned long long)s->ops[KY_PATH_MPI],
                   (unsigned long long)s->bytes[KY_PATH_SHM], (unsigned long long)s->bytes[KY_PATH_MPI],
                   (unsigned long long)s->am_sent, (unsigned long long)s->am_handled,
                   (unsigned long long)s->plan_hits, (unsigned long long)s->plan_misses,
                   (unsigned long long)e);
        }
        printf("%s: comm demo on %d ranks, %llu error(s)\n", total_err ? "FAIL" : "PASS", n,
               (unsigned long long)total_err);
        rc = total_err ? 1 : 0;
    }
    CHECK(ky_seg_destroy(seg));
    CHECK(ky_finalize());
    return rc;
}
