/* Kyoyu benchmark: point-to-point latency and bandwidth between two ranks (docs/benchmarks.md).
 *
 * Five Kyoyu operations, each beside its baseline in the same run, for sizes -b .. -e:
 *   put_pp      put ping-pong: rank 0 ky_put()s n bytes into rank 1's data segment, then ky_put_val()s an
 *               iteration number into rank 1's flag word (a host segment); rank 1 polls its flag word with
 *               atomic loads of local memory, then puts n bytes and the flag back. Latency = round trip / 2.
 *   am_long_pp  active-message ping-pong: rank 0 ky_am_long()s n bytes into rank 1's segment; the handler on
 *               rank 1 answers with ky_am_reply_long() of the same n bytes into rank 0's segment, whose
 *               handler bumps a counter rank 0 waits on. Latency = round trip / 2.
 *   put_bw      streaming: rank 0 issues a window of W ky_put_nb() and ky_wait_all()s them (a completed put
 *               is in the target's memory), repeated. Bandwidth = W * n / time.
 *   put_lat     host memory, 8 bytes only: ucx_perftest's put latency shape (ucp_put_lat), where the bytes
 *               put are themselves what the peer polls: one ky_put_val() of the round number into the peer's
 *               word, which it polls, then the same back; no separate flag. Latency = round trip / 2.
 *   get_lat     host memory, 8 bytes only: rank 0 ky_get_val()s rank 1's word, blocking, again and again
 *               (ucx_perftest's ucp_get shape). Latency = time per get, a round trip.
 * Baselines: host memory: MPI_Send/MPI_Recv ping-pong (put_pp, am_long_pp, put_lat; its round trip for
 * get_lat) and an osu_bw-style window of MPI_Isend/Irecv with an ack (put_bw). GPU memory:
 * "mpi_staged_pingpong" (cudaMemcpy to pinned host, MPI_Send/Recv, cudaMemcpy to the GPU on every hop: what a
 * user without CUDA-aware MPI writes) for the ping-pongs, and "cuda_peer_copy" (rank 0 opens rank 1's
 * cudaMalloc buffer by CUDA IPC and issues W cudaMemcpyAsync on one stream + cudaStreamSynchronize: exactly
 * what cudaMemcpyPeerAsync does between two devices of one process) for put_bw.
 *
 * The path is chosen by the environment (KY_PATH_HOST, KY_PATH_GPU, KY_NODE_SPLIT) and recorded from
 * ky_comm_path() in the "case" field: put_pp_host_shm, put_bw_gpu_ipc, am_long_pp_gpu_mpi, ...
 * Why the flag lives in a host segment even for GPU data: polling GPU memory from the CPU needs a
 * cudaMemcpy per poll (microseconds each) or a kernel; a blocking ky_put returns only once the data is in
 * the target's memory, so a flag written after it (to host memory, polled with plain loads) is a sound and
 * cheap completion signal, the GASNet put + AM_Short idiom of seed 004. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define H_PING 1
#define H_PONG 2
#define MAX_WINDOW 64

static int me, peer, use_gpu;
static ky_seg_t dseg, fseg;
static void *dbase;               /* this rank's piece of the data segment */
static volatile uint64_t *flags;  /* this rank's flag words: put_pp, put_bw done, put_lat, get_lat's */
static void *sbuf;                /* source buffer of this rank (host or GPU) */
static unsigned char *expect_buf; /* host: the peer's / rank 0's pattern, for verification */
static void *hbuf;                /* host buffer of the MPI baselines (pinned with CUDA) */
#ifdef KY_BENCH_HAVE_CUDA
static unsigned char *check_buf; /* host copy of received GPU data */
static void *bbuf;               /* GPU: device buffer of the baselines (rank 1's is opened by rank 0) */
static void *peer_bbuf;          /* rank 0: rank 1's bbuf through CUDA IPC, NULL if unavailable */
#endif
static uint64_t seq; /* put_pp / put_bw rounds, never reset: old flags never satisfy a wait */
static volatile uint64_t am_pings, am_pongs; /* bumped by the handlers (progress thread) */
static uint64_t am_total;                    /* pings sent so far, counted the same on both ranks */
#ifdef KY_BENCH_HAVE_CUDA
static cudaStream_t stream;
#endif

static void fill_pattern(unsigned char *p, size_t n, int rank)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)((i * 131u + 7u * (unsigned)rank + 1u) ^ (i >> 12));
}

/* ---- verification ------------------------------------------------------------------------------- */

static void poison_local(size_t n)
{
#ifdef KY_BENCH_HAVE_CUDA
    if (use_gpu) {
        BU_CUDA(cudaMemset(dbase, 0, n));
        BU_CUDA(cudaDeviceSynchronize());
    } else
#endif
        memset(dbase, 0, n);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every rank whose segment received data checks it against `from_rank`'s pattern. Returns 1 if all ok. */
static int verify(size_t n, int check_me, int from_rank)
{
    int ok = 1;
    if (check_me) {
        const unsigned char *got = dbase;
#ifdef KY_BENCH_HAVE_CUDA
        if (use_gpu) {
            BU_CUDA(cudaMemcpy(check_buf, dbase, n, cudaMemcpyDeviceToHost));
            got = check_buf;
        }
#endif
        fill_pattern(expect_buf, n, from_rank);
        ok = memcmp(got, expect_buf, n) == 0;
        if (!ok) {
            size_t i = 0;
            while (i < n && got[i] == expect_buf[i]) i++;
            fprintf(stderr,
                    "pingpong: rank %d: %zu-byte transfer wrong at byte %zu (0x%02x, expected 0x%02x)\n", me,
                    n, i, got[i], expect_buf[i]);
        }
    }
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* ---- Kyoyu operations (return one-way seconds per message on rank 0) ---------------------------- */

/* get_lat: rank 0's blocking 8-byte gets of rank 1's word flags[3] (GET_LAT_WORD); seconds per get on rank
 * 0, and whether every get read the word; rank 1 only waits. */
#define GET_LAT_WORD 0x4b796f7967657421ull
static double k_get_lat(int it, int warm, int *ok)
{
    double t0 = 0;
    *ok = 1;
    if (me != 0) return 0;
    for (int r = 0; r < warm + it; r++) {
        if (r == warm) t0 = bu_now();
        uint64_t v = 0;
        BU_KY(ky_get_val(peer, fseg, 3 * sizeof(uint64_t), 8, &v));
        *ok &= v == GET_LAT_WORD;
    }
    return (bu_now() - t0) / it;
}

/* put_lat: one 8-byte put per direction, the value being the round number the peer polls (flags[2]). */
static double k_put_lat(int it, int warm)
{
    double t0 = 0;
    for (int r = 0; r < warm + it; r++) {
        if (r == warm) t0 = bu_now();
        seq++;
        if (me == 0) {
            BU_KY(ky_put_val(peer, fseg, 2 * sizeof(uint64_t), seq, 8));
            bu_wait_u64(&flags[2], seq, "put_lat pong");
        } else {
            bu_wait_u64(&flags[2], seq, "put_lat ping");
            BU_KY(ky_put_val(peer, fseg, 2 * sizeof(uint64_t), seq, 8));
        }
    }
    return (bu_now() - t0) / it / 2;
}

static double k_put_pp(size_t n, int it, int warm)
{
    double t0 = 0;
    for (int r = 0; r < warm + it; r++) {
        if (r == warm) t0 = bu_now();
        seq++;
        if (me == 0) {
            BU_KY(ky_put(peer, dseg, 0, sbuf, n));
            BU_KY(ky_put_val(peer, fseg, 0, seq, 8));
            bu_wait_u64(&flags[0], seq, "put_pp pong");
        } else {
            bu_wait_u64(&flags[0], seq, "put_pp ping");
            BU_KY(ky_put(peer, dseg, 0, sbuf, n));
            BU_KY(ky_put_val(peer, fseg, 0, seq, 8));
        }
    }
    return (bu_now() - t0) / it / 2;
}

static void h_ping(ky_am_token_t tok, void *payload, size_t nbytes, const uint64_t *args, int nargs)
{
    int st = ky_am_reply_long(tok, H_PONG, payload, nbytes, dseg, 0, args, nargs);
    if (st) bu_die(__FILE__, __LINE__, "ky_am_reply_long: %s (%s)", ky_strerror(st), ky_last_error());
    __atomic_add_fetch(&am_pings, 1, __ATOMIC_RELEASE);
}

static void h_pong(ky_am_token_t tok, void *payload, size_t nbytes, const uint64_t *args, int nargs)
{
    (void)tok, (void)payload, (void)nbytes, (void)args, (void)nargs;
    __atomic_add_fetch(&am_pongs, 1, __ATOMIC_RELEASE);
}

static double k_am_pp(size_t n, int it, int warm)
{
    double t0 = 0;
    if (me == 0) {
        for (int r = 0; r < warm + it; r++) {
            if (r == warm) t0 = bu_now();
            uint64_t want = ++am_total;
            BU_KY(ky_am_long(peer, H_PING, sbuf, n, dseg, 0, &want, 1));
            bu_wait_u64(&am_pongs, want, "am_long pong");
        }
    } else {
        /* The handlers may run before this thread gets here: wait for a running total, not a delta. */
        am_total += (uint64_t)(warm + it);
        bu_wait_u64(&am_pings, am_total, "am_long pings");
    }
    return (bu_now() - t0) / it / 2;
}

static double k_put_bw(size_t n, int it, int warm, int w)
{
    double t0 = 0;
    seq++;
    if (me == 0) {
        ky_handle_t hs[MAX_WINDOW];
        for (int r = 0; r < warm + it; r++) {
            if (r == warm) t0 = bu_now();
            for (int i = 0; i < w; i++) BU_KY(ky_put_nb(peer, dseg, 0, sbuf, n, &hs[i]));
            BU_KY(ky_wait_all(hs, (size_t)w));
        }
        double t = bu_now() - t0;
        BU_KY(ky_put_val(peer, fseg, 8, seq, 8));
        return t / it / w;
    }
    bu_wait_u64(&flags[1], seq, "put_bw end");
    return 0;
}

/* ---- baselines ---------------------------------------------------------------------------------- */

static double b_mpi_pp(size_t n, int it, int warm)
{
    double t0 = 0;
    for (int r = 0; r < warm + it; r++) {
        if (r == warm) t0 = bu_now();
        if (me == 0) {
            MPI_Send(hbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(hbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(hbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(hbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
    }
    return (bu_now() - t0) / it / 2;
}

static double b_mpi_bw(size_t n, int it, int warm, int w)
{
    double t0 = 0;
    MPI_Request rq[MAX_WINDOW];
    char ack = 0;
    for (int r = 0; r < warm + it; r++) {
        if (r == warm) t0 = bu_now();
        for (int i = 0; i < w; i++) {
            if (me == 0)
                MPI_Isend(hbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &rq[i]);
            else
                MPI_Irecv(hbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &rq[i]);
        }
        MPI_Waitall(w, rq, MPI_STATUSES_IGNORE);
        if (me == 0)
            MPI_Recv(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
    }
    return (bu_now() - t0) / it / w;
}

#ifdef KY_BENCH_HAVE_CUDA
/* D2H, MPI, H2D on every hop: GPU data over MPI as a user without CUDA-aware MPI moves it. */
static double b_mpi_staged_pp(size_t n, int it, int warm)
{
    double t0 = 0;
    for (int r = 0; r < warm + it; r++) {
        if (r == warm) t0 = bu_now();
        if (me == 0) {
            BU_CUDA(cudaMemcpy(hbuf, sbuf, n, cudaMemcpyDeviceToHost));
            MPI_Send(hbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(hbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            BU_CUDA(cudaMemcpy(bbuf, hbuf, n, cudaMemcpyHostToDevice));
        } else {
            MPI_Recv(hbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            BU_CUDA(cudaMemcpy(bbuf, hbuf, n, cudaMemcpyHostToDevice));
            BU_CUDA(cudaMemcpy(hbuf, bbuf, n, cudaMemcpyDeviceToHost));
            MPI_Send(hbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
    }
    return (bu_now() - t0) / it / 2;
}

/* Rank 0 copies into rank 1's buffer, opened by CUDA IPC: cudaMemcpyPeerAsync's copy-engine transfer. */
static double b_cuda_peer_copy(size_t n, int it, int warm, int w)
{
    double t = -1;
    if (me == 0 && peer_bbuf) {
        double t0 = 0;
        for (int r = 0; r < warm + it; r++) {
            if (r == warm) t0 = bu_now();
            for (int i = 0; i < w; i++)
                BU_CUDA(cudaMemcpyAsync(peer_bbuf, sbuf, n, cudaMemcpyDefault, stream));
            BU_CUDA(cudaStreamSynchronize(stream));
        }
        t = (bu_now() - t0) / it / w;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

static void open_peer_buffer(size_t bytes)
{
    BU_CUDA(cudaMalloc(&bbuf, bytes));
    cudaIpcMemHandle_t h;
    memset(&h, 0, sizeof h);
    int ok = 1;
    if (me == 1 && cudaIpcGetMemHandle(&h, bbuf) != cudaSuccess) ok = 0;
    if (me == 1) {
        MPI_Send(&ok, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
        MPI_Send(&h, (int)sizeof h, MPI_BYTE, 0, 5, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&ok, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&h, (int)sizeof h, MPI_BYTE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (ok && cudaIpcOpenMemHandle(&peer_bbuf, h, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
            (void)cudaGetLastError();
            peer_bbuf = NULL;
        }
        if (!peer_bbuf)
            printf("# note: cannot open rank 1's GPU buffer by CUDA IPC: no cuda_peer_copy baseline\n");
    }
    MPI_Barrier(MPI_COMM_WORLD);
}
#endif

/* ---- driver ------------------------------------------------------------------------------------- */

typedef enum { OP_PUT_PP, OP_AM_PP, OP_PUT_BW, OP_PUT_LAT, OP_GET_LAT, OP_COUNT } op_t;
static const char *op_names[OP_COUNT] = {"put_pp", "am_long_pp", "put_bw", "put_lat", "get_lat"};

static int window_for(size_t n)
{
    size_t w = (64u << 20) / (n ? n : 1);
    if (w < 2) w = 2;
    if (w > MAX_WINDOW) w = MAX_WINDOW;
    return (int)w;
}

static const char *baseline_for(op_t op)
{
    if (op == OP_PUT_BW) return use_gpu ? "cuda_peer_copy" : "mpi_bw";
    return use_gpu ? "mpi_staged_pingpong" : "mpi_pingpong";
}

static double baseline_run(op_t op, size_t n, int it, int warm, int w)
{
#ifdef KY_BENCH_HAVE_CUDA
    if (use_gpu) return op == OP_PUT_BW ? b_cuda_peer_copy(n, it, warm, w) : b_mpi_staged_pp(n, it, warm);
#endif
    if (op == OP_GET_LAT) return 2 * b_mpi_pp(n, it, warm); /* a get is a round trip */
    return op == OP_PUT_BW ? b_mpi_bw(n, it, warm, w) : b_mpi_pp(n, it, warm);
}

int main(int argc, char **argv)
{
    BU_KY(ky_init(&argc, &argv));
    me = ky_rank();
    bu_opts_t o;
    if (bu_parse(argc, argv, &o, "pingpong", NULL)) {
        ky_finalize();
        return 2;
    }
    use_gpu = o.mem == KY_MEM_GPU;
    int dev = -1;
    int rc = bu_two_ranks("pingpong", use_gpu, &dev);
    if (rc >= 0) return rc;
    peer = 1 - me;
    size_t maxb = o.maxbytes;

    /* Buffers and segments. */
    BU_KY(ky_seg_create(NULL, maxb, o.mem, dev, &dseg));
    BU_KY(ky_seg_create(NULL, 64, KY_MEM_HOST, -1, &fseg));
    size_t got = 0;
    void *fb = NULL;
    BU_KY(ky_seg_local(dseg, &dbase, &got));
    BU_KY(ky_seg_local(fseg, &fb, &got));
    flags = fb;
    flags[0] = flags[1] = flags[2] = 0;
    flags[3] = GET_LAT_WORD;
    expect_buf = malloc(maxb);
    unsigned char *pat = malloc(maxb);
    if (!expect_buf || !pat) bu_die(__FILE__, __LINE__, "no memory for %zu-byte host buffers", maxb);
    fill_pattern(pat, maxb, me);
#ifdef KY_BENCH_HAVE_CUDA
    if (use_gpu) {
        BU_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        BU_CUDA(cudaMalloc(&sbuf, maxb));
        BU_CUDA(cudaMemcpy(sbuf, pat, maxb, cudaMemcpyHostToDevice));
        BU_CUDA(cudaMallocHost(&hbuf, maxb));
        check_buf = malloc(maxb);
        if (!check_buf) bu_die(__FILE__, __LINE__, "no memory");
        free(pat);
        open_peer_buffer(maxb);
    } else
#endif
    {
        sbuf = pat;
        hbuf = malloc(maxb);
        if (!hbuf) bu_die(__FILE__, __LINE__, "no memory");
        memset(hbuf, 0, maxb);
    }
    BU_KY(ky_am_register(H_PING, h_ping));
    BU_KY(ky_am_register(H_PONG, h_pong));
    ky_path_t path;
    BU_KY(ky_comm_path(peer, dseg, sbuf, &path));
    MPI_Barrier(MPI_COMM_WORLD);

    /* Floors: a bandwidth ceiling and a latency floor for this memory kind. */
    double floor_GBs = -1, floor_lat = -1;
    const char *floor_note;
    size_t fsz = maxb < (64u << 20) ? maxb : (64u << 20);
#ifdef KY_BENCH_HAVE_CUDA
    if (use_gpu) {
        for (int r = 0; r < 5; r++) {
            double t = b_cuda_peer_copy(8, 100, 10, 1);
            if (t > 0 && (floor_lat < 0 || t < floor_lat)) floor_lat = t;
        }
        double t = b_cuda_peer_copy(fsz, 10, 2, 4);
        if (t > 0) floor_GBs = (double)fsz / t / 1e9;
        floor_note =
            "8-byte cuda_peer_copy latency + bytes / measured cudaMemcpy-over-IPC bandwidth "
            "(H200 NV18 NVLink: ~450 GB/s nominal per direction)";
    } else
#endif
    {
        /* Best of 5 runs: a loaded machine must not inflate the floor. */
        for (int r = 0; r < 5; r++) {
            double t = b_mpi_pp(8, 200, 20);
            if (floor_lat < 0 || t < floor_lat) floor_lat = t;
        }
        if (me == 0) floor_GBs = bu_memcpy_GBs(fsz > (1u << 20) ? fsz : (1u << 20));
        floor_note = "8-byte MPI ping-pong latency + bytes / single-thread memcpy bandwidth";
    }
    MPI_Bcast(&floor_GBs, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(&floor_lat, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    if (me == 0) {
        int d1 = -1;
        if (use_gpu) MPI_Recv(&d1, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("# Kyoyu %s pingpong: kind %s, date %s, 2 ranks, %s memory, path %s%s", ky_version(),
               bu_machine(), bu_date(), bu_mem_name(o.mem), bu_path_name(path), use_gpu ? "" : "\n");
        if (use_gpu) printf(", GPUs %d and %d\n", dev, d1);
        printf("# floor: %.3f us latency, %.2f GB/s bandwidth\n", floor_lat * 1e6, floor_GBs);
    } else if (use_gpu) {
        MPI_Send(&dev, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
    }

    for (int op = 0; op < OP_COUNT; op++) {
        int word_op = op == OP_PUT_LAT || op == OP_GET_LAT; /* 8 bytes of host memory only */
        if (word_op && (use_gpu || o.minbytes > 8 || maxb < 8)) continue;
        char kcase[64], title[160];
        snprintf(kcase, sizeof kcase, "%s_%s_%s", op_names[op], bu_mem_name(o.mem), bu_path_name(path));
        snprintf(title, sizeof title, "pingpong %s (%s)", kcase,
                 op == OP_PUT_BW    ? "streaming window of ky_put_nb; us = time per message"
                 : op == OP_GET_LAT ? "time per blocking ky_get, a round trip"
                                    : "one-way latency = round trip / 2");
        bu_table_header(title, baseline_for((op_t)op), floor_note);
        size_t nlast = word_op ? 8 : maxb;
        for (size_t n = word_op ? 8 : o.minbytes; n <= nlast;) {
            int w = op == OP_PUT_BW ? window_for(n) : 1;
            int it = bu_iters_for(&o, n * (size_t)w, op == OP_PUT_BW ? 3 : 5);
            int warm = o.warmup < it ? o.warmup : it;
            if (warm < 1) warm = 1;
            int verified = -1;
            if (o.check) poison_local(n);
            MPI_Barrier(MPI_COMM_WORLD);
            double t = 0;
            int got_ok = 1;
            switch (op) {
                case OP_PUT_PP:
                    t = k_put_pp(n, it, warm);
                    break;
                case OP_AM_PP:
                    t = k_am_pp(n, it, warm);
                    break;
                case OP_PUT_LAT:
                    t = k_put_lat(it, warm);
                    break;
                case OP_GET_LAT:
                    t = k_get_lat(it, warm, &got_ok);
                    break;
                default:
                    t = k_put_bw(n, it, warm, w);
                    break;
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (o.check) {
                /* put_pp: each side holds the other's pattern; am_long_pp: both hold rank 0's (echo);
                 * put_bw: rank 1 holds rank 0's. */
                if (op == OP_GET_LAT) {
                    verified = got_ok;
                    MPI_Allreduce(MPI_IN_PLACE, &verified, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
                } else if (op == OP_PUT_LAT) {
                    /* both ranks end holding the last round's number, put by the other */
                    verified = __atomic_load_n(&flags[2], __ATOMIC_ACQUIRE) == seq;
                    MPI_Allreduce(MPI_IN_PLACE, &verified, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
                } else if (op == OP_PUT_PP)
                    verified = verify(n, 1, peer);
                else if (op == OP_AM_PP)
                    verified = verify(n, 1, 0);
                else
                    verified = verify(n, me == 1, 0);
            }
            double tb = baseline_run((op_t)op, n, it, warm, w);
            MPI_Barrier(MPI_COMM_WORLD);

            bu_point_t p;
            bu_point_init(&p);
            p.bench = "pingpong";
            p.kcase = kcase;
            p.op = op_names[op];
            p.mem = bu_mem_name(o.mem);
            p.path = bu_path_name(path);
            p.ranks = 2;
            p.bytes = n;
            p.iters = it;
            p.lat_us = t * 1e6;
            p.bw_GBs = (double)n / t / 1e9;
            p.baseline = baseline_for((op_t)op);
            if (tb > 0) {
                p.base_lat_us = tb * 1e6;
                p.base_bw_GBs = (double)n / tb / 1e9;
                p.ratio = tb / t;
            }
            if (floor_GBs > 0 && floor_lat > 0) {
                p.floor_GBs = floor_GBs;
                p.floor_us = (op == OP_PUT_BW ? 0 : (op == OP_GET_LAT ? 2 : 1) * floor_lat * 1e6) +
                             (double)n / floor_GBs / 1e3;
            }
            p.verified = verified;
            bu_table_row(&p);
            bu_json_write(&o, &p);

            size_t next = (size_t)ceil((double)n * o.factor);
            n = next > n ? next : n + 1;
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
#ifdef KY_BENCH_HAVE_CUDA
    if (use_gpu) {
        if (peer_bbuf) cudaIpcCloseMemHandle(peer_bbuf);
        MPI_Barrier(MPI_COMM_WORLD);
        cudaFree(bbuf);
        cudaFree(sbuf);
        cudaFreeHost(hbuf);
        cudaStreamDestroy(stream);
        free(check_buf);
    } else
#endif
    {
        free(sbuf);
        free(hbuf);
    }
    free(expect_buf);
    BU_KY(ky_seg_destroy(fseg));
    BU_KY(ky_seg_destroy(dseg));
    BU_KY(ky_finalize());
    return 0;
}
