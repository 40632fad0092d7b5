/* bench_shmem: host put/get latency and bandwidth between PE 0 and PE 1 through OpenSHMEM calls.
 *
 * One source, two builds: against Kyoyu's include/shmem.h (bench_shmem, which also measures Kyoyu's own
 * ky_put/ky_get on a segment of the same kind, point by point beside the shmem calls in the same process, so
 * the layer's cost is the ratio of two numbers taken under nearly the same noise) and against Open MPI's
 * OSHMEM (bench_shmem_oshmem, built with oshcc when it is installed). bench/shmem_compare.py runs both builds
 * alternately and keeps the best of each.
 *
 *   put_lat   putmem of n bytes then quiet: the data is in PE 1's memory (ky: ky_put, which returns then)
 *   get_lat   getmem of n bytes (ky: ky_get)
 *   put_bw    a window of W putmem_nbi, then quiet (ky: W ky_put_nb, then ky_wait_all)
 *   get_bw    the same with getmem_nbi (ky: ky_get_nb)
 * Each point, each implementation in turn: warm-up, then R repetitions of ITERS operations, the fastest
 * repetition kept. The shmem call and ky_* run one after the other within the point (which one first
 * alternates), each in the steady state of its own buffers, as the OSHMEM build runs: repetitions that
 * alternated between the two (-I, the order until 2026-11-27) each started with the other's destination in
 * the cache, which cost copies beyond the caches (two destinations and the source: 24 MiB at 8 MiB) 15-25% on
 * the development machine, and only in the Kyoyu build.
 *
 *   bench_shmem [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-r REPS] [-W WINDOW] [-o OFFSET] [-I]
 *               [--json FILE]
 * -o: the local buffer starts OFFSET bytes into a page-aligned allocation (default 0; the address bits that
 * decide 4K aliasing between the copy's loads and stores, which moves copies of some KiB by up to 2x).
 * prints a table on PE 0 and appends JSON lines (bench "shmem", docs/benchmarks.md) to FILE. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <shmem.h>
#ifdef BENCH_SHMEM_KYOYU
#include "kyoyu.h"
#define IMPL "kyoyu"
#else
#define IMPL "oshmem"
#endif

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
        case 'K':
        case 'k':
            v *= 1024;
            break;
        case 'M':
        case 'm':
            v *= 1024 * 1024;
            break;
        case 'G':
        case 'g':
            v *= 1024.0 * 1024 * 1024;
            break;
        default:
            break;
    }
    return (size_t)v;
}

enum { PUT_LAT, GET_LAT, PUT_BW, GET_BW, NOPS };
static const char *op_name[NOPS] = {"put_lat", "get_lat", "put_bw", "get_bw"};

typedef struct {
    char *remote; /* symmetric: the target of puts and source of gets on PE 1 */
    char *local;  /* private buffer of PE 0 */
    int window;
#ifdef BENCH_SHMEM_KYOYU
    ky_seg_t seg; /* Kyoyu's own segment of the same kind as the heap (Kyoyu-allocated host memory) */
    ky_handle_t *h;
#endif
} ctx_t;

/* One repetition of `iters` operations of kind op, n bytes, through shmem (ky = 0) or ky_* (ky = 1).
 * Returns seconds per operation (per window for the _bw kinds). */
static double rep(const ctx_t *c, int op, int ky, size_t n, int iters)
{
    double t0 = now();
    for (int i = 0; i < iters; i++) {
        if (!ky) {
            switch (op) {
                case PUT_LAT:
                    shmem_putmem(c->remote, c->local, n, 1);
                    shmem_quiet();
                    break;
                case GET_LAT:
                    shmem_getmem(c->local, c->remote, n, 1);
                    break;
                case PUT_BW:
                    for (int k = 0; k < c->window; k++) shmem_putmem_nbi(c->remote, c->local, n, 1);
                    shmem_quiet();
                    break;
                default:
                    for (int k = 0; k < c->window; k++) shmem_getmem_nbi(c->local, c->remote, n, 1);
                    shmem_quiet();
                    break;
            }
        } else {
#ifdef BENCH_SHMEM_KYOYU
            switch (op) {
                case PUT_LAT:
                    ky_put(1, c->seg, 0, c->local, n);
                    break;
                case GET_LAT:
                    ky_get(c->local, 1, c->seg, 0, n);
                    break;
                case PUT_BW:
                    for (int k = 0; k < c->window; k++) ky_put_nb(1, c->seg, 0, c->local, n, &c->h[k]);
                    ky_wait_all(c->h, (size_t)c->window);
                    break;
                default:
                    for (int k = 0; k < c->window; k++) ky_get_nb(c->local, 1, c->seg, 0, n, &c->h[k]);
                    ky_wait_all(c->h, (size_t)c->window);
                    break;
            }
#endif
        }
    }
    return (now() - t0) / iters;
}

int main(int argc, char **argv)
{
    size_t minb = 8, maxb = 4 << 20;
    double factor = 4;
    int iters = 1000, warmup = 50, reps = 5, window = 64;
    size_t loff = 0;
    int interleave = 0;
    unsigned npoint = 0;
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-b") && v)
            minb = parse_size(v), i++;
        else if (!strcmp(a, "-e") && v)
            maxb = parse_size(v), i++;
        else if (!strcmp(a, "-f") && v)
            factor = atof(v), i++;
        else if (!strcmp(a, "-n") && v)
            iters = atoi(v), i++;
        else if (!strcmp(a, "-w") && v)
            warmup = atoi(v), i++;
        else if (!strcmp(a, "-r") && v)
            reps = atoi(v), i++;
        else if (!strcmp(a, "-W") && v)
            window = atoi(v), i++;
        else if (!strcmp(a, "-o") && v)
            loff = parse_size(v) % 4096, i++;
        else if (!strcmp(a, "-I"))
            interleave = 1;
        else if (!strcmp(a, "--json") && v)
            json = v, i++;
        else {
            fprintf(stderr,
                    "usage: %s [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-r REPS] [-W WINDOW] "
                    "[-o OFFSET] [-I] [--json FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (factor < 2) factor = 2;
    shmem_init();
    int me = shmem_my_pe(), np = shmem_n_pes();
    if (np < 2) {
        if (me == 0) fprintf(stderr, "bench_shmem: needs 2 PEs\n");
        shmem_finalize();
        return 2;
    }
    ctx_t c = {0};
    c.window = window;
    c.remote = shmem_malloc(maxb);
    char *lbuf = NULL;
    if (posix_memalign((void **)&lbuf, 4096, maxb + 4096)) return 1;
    c.local = lbuf + loff;
    memset(c.local, 1, maxb);
    memset(c.remote, 2, maxb);
    int nimpl = 1;
    const char *path = "shm";
#ifdef BENCH_SHMEM_KYOYU
    nimpl = 2;
    c.h = calloc((size_t)window, sizeof *c.h);
    if (ky_seg_create(NULL, maxb, KY_MEM_HOST, -1, &c.seg)) {
        fprintf(stderr, "bench_shmem: ky_seg_create: %s\n", ky_last_error());
        return 1;
    }
    ky_path_t p;
    ky_comm_path(1, c.seg, c.local, &p);
    path = p == KY_PATH_SHM ? "shm" : p == KY_PATH_MPI ? "mpi" : "other";
    void *kb;
    size_t kn;
    ky_seg_local(c.seg, &kb, &kn);
    memset(kb, 2, kn);
#endif
    shmem_barrier_all();
    FILE *jf = (me == 0 && json) ? fopen(json, "a") : NULL;
    char date[16];
    time_t tt = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&tt));
    const char *kind = getenv("KY_BENCH_MACHINE") ? getenv("KY_BENCH_MACHINE") : "unknown";
    if (me == 0)
        printf("# bench_shmem (%s): %d PEs, path %s, best of %d reps, window %d\n# %-8s %10s %12s %12s%s\n",
               IMPL, np, path, reps, window, "op", "bytes", "shmem us", "shmem GB/s",
               nimpl == 2 ? "        ky us     ky GB/s  shmem/ky" : "");
    for (int op = 0; op < NOPS; op++) {
        for (size_t n = minb; n <= maxb; n = (size_t)((double)n * factor)) {
            int it = iters;
            size_t per = op >= PUT_BW ? n * (size_t)window : n;
            if (per > 65536) it = (int)((double)iters * 65536.0 / (double)per);
            if (it < 3) it = 3;
            double best[2] = {1e30, 1e30};
            npoint++;
            if (me == 0) {
                int wu = warmup > it ? it : warmup;
                if (interleave) { /* each repetition measures every implementation once, under the same noise
                                   */
                    for (int k = 0; k < nimpl; k++) rep(&c, op, k, n, wu);
                    for (int r = 0; r < reps; r++)
                        for (int k = 0; k < nimpl; k++) {
                            double t = rep(&c, op, k, n, it);
                            if (t < best[k]) best[k] = t;
                        }
                } else { /* one implementation after the other, each from its own warm-up; which goes first
                          * alternates with the point and, through the process id, between runs */
                    for (int kk = 0; kk < nimpl; kk++) {
                        int k = (int)(((unsigned)getpid() + npoint + (unsigned)kk) % (unsigned)nimpl);
                        rep(&c, op, k, n, wu);
                        for (int r = 0; r < reps; r++) {
                            double t = rep(&c, op, k, n, it);
                            if (t < best[k]) best[k] = t;
                        }
                    }
                }
                double moved = (double)per;
                printf("  %-8s %10zu %12.3f %12.4f", op_name[op], n, best[0] * 1e6, moved / best[0] * 1e-9);
                if (nimpl == 2)
                    printf(" %12.3f %11.4f %9.3f", best[1] * 1e6, moved / best[1] * 1e-9, best[0] / best[1]);
                printf("\n");
                for (int k = 0; jf && k < nimpl; k++)
                    fprintf(jf,
                            "{\"bench\":\"shmem\",\"case\":\"shmem_%s\",\"kind\":\"%s\",\"date\":\"%s\","
                            "\"version\":\"%s\","
                            "\"ranks\":%d,\"impl\":\"%s\",\"api\":\"%s\",\"op\":\"%s\",\"mem\":\"host\","
                            "\"path\":\"%s\","
                            "\"bytes\":%zu,\"iters\":%d,\"reps\":%d,\"window\":%d,\"lat_us\":%.4f,\"bw_GBs\":"
                            "%.5f}\n",
                            path, kind, date,
#ifdef BENCH_SHMEM_KYOYU
                            ky_version(),
#else
                            "oshmem",
#endif
                            np, IMPL, k ? "ky" : "shmem", op_name[op], path, n, it, reps,
                            op >= PUT_BW ? window : 1, best[k] * 1e6, moved / best[k] * 1e-9);
                fflush(stdout);
            }
            shmem_barrier_all();
        }
    }
    if (jf) fclose(jf);
    if (me == 0) printf("# done\n");
    fflush(stdout);
#ifdef BENCH_SHMEM_KYOYU
    ky_seg_destroy(c.seg);
    free(c.h);
#endif
    shmem_free(c.remote);
    free(lbuf);
    shmem_finalize();
    return 0;
}
