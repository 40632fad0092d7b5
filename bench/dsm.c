/* ky_bench_dsm: what the DSM's basic operations cost against MPI moving the same bytes.
 *
 *   fault_read       rank 0 reads one byte of each of K pages homed at rank 1 after ky_barrier: time per
 *                    fault, fetch included | MPI_Get of one page (lock shared, get, unlock) from a window
 *                    of the same size on rank 1
 *                    (floor column: what any fault-driven fetch of a page costs with no communication at
 *                    all, a read of a private PROT_NONE page whose SIGSEGV handler makes it read-write and
 *                    copies a page into it from local memory, the fetched bytes)
 *   preload_contig   ky_preload_array of k contiguous pages homed at rank 1 (k = 1, 4, 16, 64) | one
 *                    MPI_Get of k pages
 *   preload_strided  a y-halo of a [32][64][512] double array homed at rank 1: region {32, 4, 512}, 32 blocks
 *                    of 16 KiB with a 256 KiB stride (the DSM moves the 32 pages that hold them) | MPI_Get
 *                    with an MPI_Type_vector target (the 512 KiB only)
 *   sync, sync_drop, barrier_clean, barrier_dirty
 *                    ky_sync / ky_sync_drop / ky_barrier with no dirty page, and ky_barrier after every rank
 *                    wrote 8 bytes into each of 16 pages homed at the next rank (16 diffs per rank; the
 *                    writes are not timed) | MPI_Barrier
 *   view_fault, view_update
 *                    the DSM view of a distributed array, whose homes are the blocks (--mem host|gpu places
 *                    them): rank 0 reads one element of each of K rows (a page each) owned by rank 1 after
 *                    ky_array_dsm_publish, time per page | ky_array_get of the same row; and rank 0 rewrites
 *                    K rows of rank 1 through the view, then ky_array_dsm_collect, time per row | the same
 *                    rows filled in a buffer, ky_array_put, ky_comm_barrier
 * Rank 0 measures; rank 1 is the home; further ranks take part in the collective calls. Table and
 * JSON lines (bench "dsm_micro", the pingpong record shape of docs/benchmarks.md). Flags: -n ITERS (fault
 * and sync iterations), -w WARMUP, --json FILE, --mem host|gpu (where the view's blocks live; the view case
 * is skipped with a line saying so where some rank has no GPU), --node (only the node barrier of node-shared
 * mode, back to back, against MPI_Barrier: 100 x ITERS of each, median of 5 rounds). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench_util.h"

#define FAULT_PAGES 64

static const char *g_path;
static bu_opts_t g_o;

static void emit_floor(const char *title, const char *baseline, const char *floor_text, bu_point_t *pts,
                       int n)
{
    bu_table_header(title, baseline, floor_text);
    for (int i = 0; i < n; i++) {
        bu_table_row(&pts[i]);
        bu_json_write(&g_o, &pts[i]);
    }
}

static void emit(const char *title, const char *baseline, bu_point_t *pts, int n)
{
    emit_floor(title, baseline, "none (ratio only)", pts, n);
}

static void point(bu_point_t *p, const char *op, size_t bytes, int iters, double ky_s, const char *base,
                  double base_s, int verified)
{
    bu_point_init(p);
    p->bench = "dsm_micro";
    p->kcase = op;
    p->op = op;
    p->mem = "host";
    p->path = g_path;
    p->ranks = ky_nranks();
    p->bytes = bytes;
    p->iters = iters;
    p->lat_us = ky_s * 1e6;
    p->bw_GBs = bytes && ky_s > 0 ? bytes / ky_s * 1e-9 : 0;
    p->baseline = base;
    p->base_lat_us = base_s * 1e6;
    p->base_bw_GBs = bytes && base_s > 0 ? bytes / base_s * 1e-9 : -1;
    p->ratio = ky_s > 0 ? base_s / ky_s : -1;
    p->verified = verified;
}

/* The fault floor (fault_read's floor column). Kyoyu's SIGSEGV handler is set aside meanwhile and put back:
 * only this thread runs here, and it touches no global memory until then. */
static char *floor_page, *floor_src;
static size_t floor_bytes;
static void floor_handler(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)si, (void)ctx;
    mprotect(floor_page, floor_bytes, PROT_READ | PROT_WRITE);
    memcpy(floor_page, floor_src, floor_bytes);
}

static double fault_floor(size_t page, int n)
{
    floor_bytes = page;
    floor_page = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    floor_src = malloc(page);
    double *t = calloc((size_t)n, sizeof *t);
    if (floor_page == MAP_FAILED || !floor_src || !t)
        bu_die(__FILE__, __LINE__, "fault_floor: out of memory");
    memset(floor_src, 7, page);
    memset(floor_page, 0, page); /* resident, as a DSM page slot is after its first fetch */
    struct sigaction sa, kyoyu;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = floor_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &kyoyu);
    for (int i = 0; i < n; i++) {
        mprotect(floor_page, page, PROT_NONE);
        double t0 = bu_now();
        char c = ((volatile char *)floor_page)[8];
        t[i] = bu_now() - t0;
        if (c != 7) bu_die(__FILE__, __LINE__, "fault_floor: the handler's copy is not there");
    }
    sigaction(SIGSEGV, &kyoyu, NULL);
    double m = bu_median(t, n);
    munmap(floor_page, page);
    free(floor_src), free(t);
    return m;
}

/* (i) one remote page fault against MPI_Get of one page */
static void bench_fault(size_t page)
{
    int me = ky_rank(), rounds = g_o.iters / FAULT_PAGES > 3 ? g_o.iters / FAULT_PAGES : 3;
    size_t bytes = FAULT_PAGES * page;
    unsigned char *g = NULL;
    BU_KY(ky_alloc(bytes, 1, (void **)&g));
    unsigned char *win_buf = NULL, *local = malloc(page);
    MPI_Win win;
    /* MPI_Win_allocate: Open MPI's osc/sm serves it under MPI_THREAD_MULTIPLE on one node (Win_create
     * needs osc/rdma or pt2pt, which refuse that on machines without an RDMA network) */
    BU_MPI(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win));
    if (!g || !win_buf || !local) bu_die(__FILE__, __LINE__, "fault: out of memory (%s)", ky_last_error());
    if (me == 1)
        for (size_t i = 0; i < bytes; i++) g[i] = win_buf[i] = (unsigned char)(i / page + 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double *ky = calloc(rounds, sizeof(double)), *mp = calloc(rounds, sizeof(double));
    int ok = 1;
    for (int r = -1; r < rounds; r++) { /* round -1: warm-up */
        BU_KY(ky_barrier());            /* drops rank 0's copies: every first touch faults again */
        if (me == 0) {
            unsigned sum = 0;
            double t0 = bu_now();
            for (int i = 0; i < FAULT_PAGES; i++) sum += ((volatile unsigned char *)g)[(size_t)i * page + 8];
            double t1 = bu_now();
            ok &= sum == (unsigned)(FAULT_PAGES * (FAULT_PAGES + 1) / 2);
            for (int i = 0; i < FAULT_PAGES; i++) {
                BU_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
                BU_MPI(
                    MPI_Get(local, (int)page, MPI_BYTE, 1, (MPI_Aint)(i * page), (int)page, MPI_BYTE, win));
                BU_MPI(MPI_Win_unlock(1, win));
                ok &= local[8] == (unsigned char)(i + 1);
            }
            double t2 = bu_now();
            if (r >= 0) ky[r] = (t1 - t0) / FAULT_PAGES, mp[r] = (t2 - t1) / FAULT_PAGES;
        }
    }
    bu_point_t p;
    point(&p, "fault_read", page, rounds * FAULT_PAGES, bu_median(ky, rounds), "mpi_get",
          bu_median(mp, rounds), ok);
    if (me == 0) p.floor_us = fault_floor(page, rounds * FAULT_PAGES) * 1e6;
    emit_floor("dsm fault_read: one remote page fault (fetch of one page from its home) per read",
               "mpi_get: MPI_Win_lock(shared) + MPI_Get(one page) + MPI_Win_unlock",
               "a local fault on a PROT_NONE page whose handler makes it read-write and copies one page in "
               "(no communication: what any fault-driven fetch costs)",
               &p, 1);
    BU_MPI(MPI_Win_free(&win));
    BU_KY(ky_barrier());
    BU_KY(ky_free(g));
    free(local), free(ky), free(mp);
}

/* (ii) preload of k contiguous pages and of a strided y-halo against MPI_Get of the same region */
static void bench_preload(size_t page)
{
    enum { Z = 32, Y = 64, X = 512, H = 4, REPS = 9 };
    int me = ky_rank();
    size_t maxk = 64, bytes = maxk * page, abytes = (size_t)Z * Y * X * sizeof(double);
    if (abytes > bytes) bytes = abytes;
    double *g = NULL;
    BU_KY(ky_alloc(bytes, 1, (void **)&g));
    double *win_buf = NULL, *local = malloc(bytes);
    MPI_Win win;
    BU_MPI(MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win));
    if (!g || !win_buf || !local) bu_die(__FILE__, __LINE__, "preload: out of memory (%s)", ky_last_error());
    size_t n = bytes / sizeof(double);
    if (me == 1)
        for (size_t i = 0; i < n; i++) g[i] = win_buf[i] = (double)i;
    MPI_Barrier(MPI_COMM_WORLD);
    bu_point_t pts[5];
    int np = 0;
    size_t ks[4] = {1, 4, 16, 64};
    for (int c = 0; c < 5; c++) {
        int strided = c == 4;
        size_t k = strided ? 0 : ks[c], moved = strided ? (size_t)Z * H * X * sizeof(double) : k * page;
        double ky[REPS], mp[REPS];
        int ok = 1;
        MPI_Datatype vec = MPI_DATATYPE_NULL;
        if (strided) {
            BU_MPI(MPI_Type_vector(Z, H * X, Y * X, MPI_DOUBLE, &vec));
            BU_MPI(MPI_Type_commit(&vec));
        }
        for (int r = -1; r < REPS; r++) {
            BU_KY(ky_barrier());
            if (me != 0) continue;
            double t0 = bu_now();
            if (strided) {
                size_t glb[3] = {Z, Y, X}, reg[3] = {Z, H, X};
                BU_KY(ky_preload_array(g, glb, reg, 3, sizeof(double), 0));
            } else {
                size_t glb[1] = {n}, reg[1] = {k * page / sizeof(double)};
                BU_KY(ky_preload_array(g, glb, reg, 1, sizeof(double), 0));
            }
            double t1 = bu_now();
            BU_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
            if (strided)
                BU_MPI(MPI_Get(local, Z * H * X, MPI_DOUBLE, 1, 0, 1, vec, win));
            else
                BU_MPI(MPI_Get(local, (int)(k * page / sizeof(double)), MPI_DOUBLE, 1, 0,
                               (int)(k * page / sizeof(double)), MPI_DOUBLE, win));
            BU_MPI(MPI_Win_unlock(1, win));
            double t2 = bu_now();
            if (r >= 0) ky[r] = t1 - t0, mp[r] = t2 - t1;
            /* the region's last element, through the cache and through MPI */
            size_t last = strided ? ((size_t)(Z - 1) * Y + H - 1) * X + X - 1 : k * page / sizeof(double) - 1;
            ok &= g[last] == (double)last && local[moved / sizeof(double) - 1] == (double)last;
        }
        point(&pts[np], strided ? "preload_strided" : "preload_contig", moved, REPS,
              me == 0 ? bu_median(ky, REPS) : 0, strided ? "mpi_get_vector" : "mpi_get",
              me == 0 ? bu_median(mp, REPS) : 0, ok);
        np++;
        if (strided) MPI_Type_free(&vec);
    }
    emit("dsm preload_contig (k pages) and preload_strided (region {32,4,512} of [32][64][512] doubles)",
         "mpi_get / mpi_get_vector: one passive-target MPI_Get of the same region", pts, 4);
    emit("dsm preload_strided (bytes: the region; the DSM moves whole pages)", "mpi_get_vector", &pts[4], 1);
    BU_MPI(MPI_Win_free(&win));
    BU_KY(ky_barrier());
    BU_KY(ky_free(g));
    free(local);
}

/* (iii) the synchronisation calls, clean and with dirty pages, against MPI_Barrier */
static void bench_sync(size_t page)
{
    enum { DIRTY = 16 };
    int me = ky_rank(), nr = ky_nranks(), iters = g_o.iters < 100 ? g_o.iters : 100;
    int dims[2] = {(int)(nr * DIRTY * page), -1}, divs[2] = {nr, -1};
    unsigned char *g = ky_mapalloc(dims, divs, 1, 0, nr);
    if (!g) bu_die(__FILE__, __LINE__, "sync: ky_mapalloc: %s", ky_last_error());
    unsigned char *next = g + (size_t)((me + 1) % nr) * DIRTY * page;
    double *t = calloc(iters, sizeof(double)), *b = calloc(iters, sizeof(double));
    const char *ops[4] = {"sync", "sync_drop", "barrier_clean", "barrier_dirty"};
    bu_point_t pts[4];
    int verified = 1;
    for (int op = 0; op < 4; op++) {
        for (int i = -g_o.warmup; i < iters; i++) {
            if (op == 3)
                for (int d = 0; d < DIRTY; d++)
                    next[(size_t)d * page + (size_t)me * 8 % page] = (unsigned char)(i + 2);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = bu_now();
            BU_KY(op == 0 ? ky_sync() : op == 1 ? ky_sync_drop() : ky_barrier());
            double t1 = bu_now();
            MPI_Barrier(MPI_COMM_WORLD);
            double t2 = bu_now();
            BU_MPI(MPI_Barrier(MPI_COMM_WORLD));
            double t3 = bu_now();
            if (i >= 0) t[i] = t1 - t0, b[i] = t3 - t2;
        }
        if (op == 3) { /* the diffs arrived: the home's page holds the writer's last byte */
            unsigned char *mine = g + (size_t)me * DIRTY * page;
            int writer = (me + nr - 1) % nr;
            for (int d = 0; d < DIRTY; d++)
                verified &= mine[(size_t)d * page + (size_t)writer * 8 % page] == (unsigned char)(iters + 1);
        }
        point(&pts[op], ops[op], op == 3 ? DIRTY * page : 0, iters, bu_median(t, iters), "mpi_barrier",
              bu_median(b, iters), op == 3 ? verified : -1);
    }
    const char *what[4] = {"ky_sync (execution only)", "ky_sync_drop (nothing cached)",
                           "ky_barrier, no dirty page",
                           "ky_barrier after 16 dirty pages per rank (bytes: dirtied)"};
    for (int op = 0; op < 4; op++) {
        char title[160];
        snprintf(title, sizeof title, "dsm %s: %s", ops[op], what[op]);
        emit(title, "mpi_barrier: MPI_Barrier", &pts[op], 1);
    }
    BU_KY(ky_barrier());
    BU_KY(ky_free(g));
    free(t), free(b);
}

/* --node: the node barrier of node-shared mode (docs/dsm.md), as kycc's team barrier passes it in a
 * parallel phase, back to back (NPB SP class A passes 9.7 million), against MPI_Barrier back to back on the
 * same ranks: time per barrier, median of 5 rounds of 100 x ITERS */
static void bench_node_barrier(void)
{
    int rounds = 5, n = 100 * (g_o.iters > 0 ? g_o.iters : 100);
    double t[5], b[5];
    BU_KY(ky_dsm_phase(1));
    for (int r = 0; r < rounds; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = bu_now();
        for (int i = 0; i < n; i++) BU_KY(ky_barrier());
        double t1 = bu_now();
        for (int i = 0; i < n; i++) BU_MPI(MPI_Barrier(MPI_COMM_WORLD));
        double t2 = bu_now();
        t[r] = (t1 - t0) / n, b[r] = (t2 - t1) / n;
    }
    bu_point_t p;
    point(&p, "node_barrier", 0, n, bu_median(t, rounds), "mpi_barrier", bu_median(b, rounds), -1);
    emit("dsm node_barrier: ky_barrier in node-shared mode's parallel phase, back to back",
         "mpi_barrier: MPI_Barrier", &p, 1);
}

/* (iv) the DSM view of a distributed array against the array's own get/put of the same rows */
static void bench_view(size_t page)
{
    int me = ky_rank(), nr = ky_nranks(), rounds = g_o.iters / FAULT_PAGES > 3 ? g_o.iters / FAULT_PAGES : 3;
    size_t cols = page / sizeof(double), dims[2] = {(size_t)nr * FAULT_PAGES, cols}; /* a row is a page */
    int place = g_o.mem == KY_MEM_GPU ? KY_PLACE_GPU : KY_PLACE_HOST;
    int gpus = ky_ngpus() > 0;
    MPI_Allreduce(MPI_IN_PLACE, &gpus, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (place == KY_PLACE_GPU && !gpus) {
        if (me == 0)
            printf(
                "\n# dsm view_fault, view_update: --mem gpu: no GPU for every rank (or built without CUDA): "
                "skipped\n");
        return;
    }
    ky_array_t a;
    BU_KY(ky_array_create(2, dims, sizeof(double), NULL, place, NULL, &a)); /* rows blocked over the ranks */
    size_t lo[2], hi[2];
    void *blk; /* host or GPU memory: read only through ky_array_get, never dereferenced here */
    BU_KY(ky_array_local_n(a, 0, &blk, lo, hi));
    double *row = malloc(page * FAULT_PAGES);
    if (!row) bu_die(__FILE__, __LINE__, "view: out of memory");
    for (size_t i = lo[0]; i < hi[0]; i++)
        for (size_t j = 0; j < cols; j++) row[(i - lo[0]) * cols + j] = (double)(i * cols + j);
    BU_KY(ky_array_put(a, lo, hi, row)); /* FAULT_PAGES rows each */
    double *v;
    BU_KY(ky_array_dsm_view(a, (void **)&v));
    double *t[4];
    for (int k = 0; k < 4; k++) t[k] = calloc(rounds, sizeof(double));
    int ok_read = 1, ok_write = 1;
    size_t r0 = FAULT_PAGES;            /* rank 1's first row */
    for (int r = -1; r < rounds; r++) { /* round -1: warm-up */
        BU_KY(ky_array_dsm_publish(a)); /* drops every cached page: each first touch faults */
        if (me == 0) {
            double sum = 0, t0 = bu_now();
            for (int i = 0; i < FAULT_PAGES; i++) sum += ((volatile double *)v)[(r0 + (size_t)i) * cols + 8];
            double t1 = bu_now();
            for (int i = 0; i < FAULT_PAGES; i++) {
                size_t l[2] = {r0 + (size_t)i, 0}, h[2] = {r0 + (size_t)i + 1, cols};
                BU_KY(ky_array_get(a, l, h, row));
                sum -= row[8];
            }
            double t2 = bu_now();
            ok_read &= sum == 0 && (r >= 0 || row[8] == (double)((r0 + FAULT_PAGES - 1) * cols + 8));
            if (r >= 0) t[0][r] = (t1 - t0) / FAULT_PAGES, t[1][r] = (t2 - t1) / FAULT_PAGES;
        }
        /* rewrite K rows of rank 1: through the view and collect, then with put and a barrier */
        BU_KY(ky_comm_barrier());
        double t0 = bu_now();
        if (me == 0)
            for (size_t i = 0; i < (size_t)FAULT_PAGES * cols; i++)
                v[r0 * cols + i] = (double)(i + (size_t)r + 7);
        BU_KY(ky_array_dsm_collect(a));
        double t1 = bu_now();
        if (me == 1) { /* the owner finds the first element in its block (a device copy with GPU placement) */
            double first = -1;
            size_t l[2] = {r0, 0}, h[2] = {r0 + 1, 1};
            BU_KY(ky_array_get(a, l, h, &first));
            ok_write &= first == (double)(r + 7);
        }
        BU_KY(ky_comm_barrier());
        double t2 = bu_now();
        if (me == 0) {
            for (size_t i = 0; i < (size_t)FAULT_PAGES * cols; i++) row[i] = (double)(i + (size_t)r + 8);
            size_t l[2] = {r0, 0}, h[2] = {r0 + FAULT_PAGES, cols};
            BU_KY(ky_array_put(a, l, h, row));
        }
        BU_KY(ky_comm_barrier());
        double t3 = bu_now();
        if (me == 0 && r >= 0) t[2][r] = (t1 - t0) / FAULT_PAGES, t[3][r] = (t3 - t2) / FAULT_PAGES;
    }
    int ok = ok_read && ok_write;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    bu_point_t p[2];
    point(&p[0], "view_fault", page, rounds * FAULT_PAGES, bu_median(t[0], rounds), "ky_array_get",
          bu_median(t[1], rounds), ok);
    point(&p[1], "view_update", page, rounds * FAULT_PAGES, bu_median(t[2], rounds), "ky_array_put",
          bu_median(t[3], rounds), ok);
    p[0].mem = p[1].mem = bu_mem_name(g_o.mem);
    emit("dsm view_fault: a row (one page) of another rank's block read through the array's DSM view",
         "ky_array_get: the same row into a host buffer", &p[0], 1);
    emit(
        "dsm view_update: rows of another rank's block rewritten through the view, then ky_array_dsm_collect "
        "(per row)",
        "ky_array_put: the same rows from a buffer, then ky_comm_barrier", &p[1], 1);
    for (int k = 0; k < 4; k++) free(t[k]);
    free(row);
    BU_KY(ky_array_free(a));
}

int main(int argc, char **argv)
{
    int node = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--node") == 0) { /* ours, not bu_parse's: taken out of argv */
            node = 1;
            memmove(&argv[i], &argv[i + 1], sizeof(char *) * (size_t)(argc - i));
            argc--;
            i--;
        }
    BU_KY(ky_init(&argc, &argv));
    if (bu_parse(argc, argv, &g_o, "ky_bench_dsm",
                 "ky_bench_dsm uses -n, -w, --json, --mem (the view's blocks; others are ignored).\n")) {
        ky_finalize();
        return 1;
    }
    if (ky_nranks() < 2) {
        if (ky_rank() == 0) fprintf(stderr, "ky_bench_dsm: needs at least 2 ranks\n");
        ky_finalize();
        return 1;
    }
    g_path = ky_node_of(1) == ky_node() ? "shm" : "mpi";
    size_t page = ky_page_size();
    if (ky_rank() == 0)
        printf("# ky_bench_dsm: Kyoyu %s, %s, %s, %d ranks, page %zu B, fetch path rank 0 <- rank 1: %s\n",
               ky_version(), bu_machine(), bu_date(), ky_nranks(), page, g_path);
    if (node) { /* before any allocation, as the mode asks */
        int on = 0;
        BU_KY(ky_dsm_node_mode(1, &on));
        if (on)
            bench_node_barrier();
        else if (ky_rank() == 0)
            printf("# node_barrier: skipped, node-shared mode is off here (one node, KY_DSM_NODE_SHARED)\n");
        BU_KY(ky_finalize());
        return 0;
    }
    bench_fault(page);
    bench_preload(page);
    bench_sync(page);
    bench_view(page);
    BU_KY(ky_finalize());
    return 0;
}
