/* Kyoyu benchmarks: flag parsing, timers, table printer and JSON-lines writer shared by every benchmark.
 * See bench_util.h; the JSON schema is docs/benchmarks.md. */
#define _GNU_SOURCE
#include "bench_util.h"

#include <ctype.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void bu_die(const char *file, int line, const char *fmt, ...)
{
    int rank = -1;
    int init = 0;
    MPI_Initialized(&init);
    if (init) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "bench: rank %d: %s:%d: %s\n", rank, file, line, msg);
    fflush(stderr);
    if (init) MPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

int bu_parse_size(const char *s, size_t *out)
{
    if (!s || !*s) return -1;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || v < 0) return -1;
    double mul = 1;
    switch (toupper((unsigned char)*end)) {
        case 'K':
            mul = 1024.0;
            end++;
            break;
        case 'M':
            mul = 1024.0 * 1024;
            end++;
            break;
        case 'G':
            mul = 1024.0 * 1024 * 1024;
            end++;
            break;
        default:
            break;
    }
    if (toupper((unsigned char)*end) == 'I') end++;
    if (toupper((unsigned char)*end) == 'B') end++;
    if (*end) return -1;
    *out = (size_t)(v * mul + 0.5);
    return 0;
}

const char *bu_fmt_size(size_t n, char *buf, size_t len)
{
    if (n >= (1u << 30) && n % (1u << 30) == 0)
        snprintf(buf, len, "%zu GiB", n >> 30);
    else if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", n >> 20);
    else if (n >= (1u << 10) && n % (1u << 10) == 0)
        snprintf(buf, len, "%zu KiB", n >> 10);
    else
        snprintf(buf, len, "%zu B", n);
    return buf;
}

/* Messages about flags: rank 0 only (every rank parses the same argv). */
#define BU_ERR(...) (ky_rank() > 0 ? 0 : fprintf(stderr, __VA_ARGS__))

static void usage(const char *prog, const char *extra)
{
    BU_ERR(
        "usage: %s [options]\n"
        "  -b SIZE     smallest message (default 8)\n"
        "  -e SIZE     largest message (default 256M)\n"
        "  -f FACTOR   size multiplier between points (default 2)\n"
        "  -n ITERS    timed iterations per point (default 200; fewer above 64 KiB)\n"
        "  -w WARMUP   untimed iterations per point (default 10)\n"
        "  -N LIST     halo sizes, comma separated (default 32,64,128,256,512)\n"
        "  -c 0|1      verify transferred data (default 1)\n"
        "  --json FILE append one JSON object per measured point (docs/benchmarks.md)\n"
        "  --mem host|gpu  memory of the segments and buffers (default host)\n"
        "SIZE: 8, 64K, 256M, 1G (powers of 1024).\n%s",
        prog, extra ? extra : "");
}

int bu_parse(int argc, char **argv, bu_opts_t *o, const char *prog, const char *extra_usage)
{
    memset(o, 0, sizeof *o);
    o->minbytes = 8;
    o->maxbytes = 256u << 20;
    o->factor = 2;
    o->iters = 200;
    o->warmup = 10;
    const int defn[] = {32, 64, 128, 256, 512};
    o->nhalo = 5;
    for (int i = 0; i < 5; i++) o->halo_n[i] = defn[i];
    o->json = NULL;
    o->mem = KY_MEM_HOST;
    o->check = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        int used = 1;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(prog, extra_usage);
            return 1;
        } else if (!strcmp(a, "-b") && v) {
            if (bu_parse_size(v, &o->minbytes)) goto bad;
        } else if (!strcmp(a, "-e") && v) {
            if (bu_parse_size(v, &o->maxbytes)) goto bad;
        } else if (!strcmp(a, "-f") && v) {
            o->factor = atof(v);
            if (!(o->factor > 1)) goto bad;
        } else if (!strcmp(a, "-n") && v) {
            o->iters = atoi(v);
            if (o->iters < 1) goto bad;
        } else if (!strcmp(a, "-w") && v) {
            o->warmup = atoi(v);
            if (o->warmup < 0) goto bad;
        } else if (!strcmp(a, "-c") && v) {
            o->check = atoi(v) != 0;
        } else if (!strcmp(a, "-N") && v) {
            o->nhalo = 0;
            char *dup = strdup(v), *save = NULL;
            for (char *t = strtok_r(dup, ",", &save); t && o->nhalo < BU_MAX_SIZES;
                 t = strtok_r(NULL, ",", &save)) {
                int n = atoi(t);
                if (n < 2) {
                    free(dup);
                    goto bad;
                }
                o->halo_n[o->nhalo++] = n;
            }
            free(dup);
            if (!o->nhalo) goto bad;
        } else if (!strcmp(a, "--json") && v) {
            o->json = v;
        } else if (!strcmp(a, "--mem") && v) {
            if (!strcmp(v, "host"))
                o->mem = KY_MEM_HOST;
            else if (!strcmp(v, "gpu"))
                o->mem = KY_MEM_GPU;
            else
                goto bad;
        } else {
            used = 0;
        }
        if (!used) {
            BU_ERR("%s: unknown option or missing value: %s\n", prog, a);
            usage(prog, extra_usage);
            return 1;
        }
        i++;
        continue;
    bad:
        BU_ERR("%s: bad value for %s: %s\n", prog, a, v);
        usage(prog, extra_usage);
        return 1;
    }
    if (o->maxbytes > (size_t)1 << 30) {
        BU_ERR("%s: -e is at most 1G (MPI counts are int)\n", prog);
        return 1;
    }
    if (o->minbytes < 1) o->minbytes = 1;
    if (o->maxbytes < o->minbytes) o->maxbytes = o->minbytes;
    return 0;
}

double bu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bu_median(double *v, int n)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int bu_iters_for(const bu_opts_t *o, size_t n, int min_iters)
{
    const size_t knee = 64u << 10;
    if (n <= knee) return o->iters;
    double it = (double)o->iters * (double)knee / (double)n;
    int r = (int)it;
    if (r < min_iters) r = min_iters;
    return r < o->iters ? r : o->iters;
}

const char *bu_machine(void)
{
    static char buf[256];
    const char *m = getenv("KY_BENCH_MACHINE");
    if (m && *m) return m;
    if (!buf[0] && gethostname(buf, sizeof buf - 1)) strcpy(buf, "unknown");
    return buf;
}

const char *bu_date(void)
{
    static char buf[16];
    if (!buf[0]) {
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    }
    return buf;
}

const char *bu_path_name(int path)
{
    switch (path) {
        case KY_PATH_SELF:
            return "self";
        case KY_PATH_SHM:
            return "shm";
        case KY_PATH_IPC:
            return "ipc";
        case KY_PATH_MPI:
            return "mpi";
        case KY_PATH_UCX:
            return "ucx";
        default:
            return "unknown";
    }
}

const char *bu_mem_name(int mem)
{
    return mem == KY_MEM_GPU ? "gpu" : "host";
}

void bu_wait_u64(volatile uint64_t *flag, uint64_t want, const char *what)
{
    static int poll_mode = -1; /* 1: no progress thread, call ky_poll */
    if (poll_mode < 0) {
        const char *v = NULL;
        poll_mode = (ky_config_get("KY_PROGRESS_THREAD", &v) == KY_OK && v && !strcmp(v, "0")) ? 1 : 0;
    }
    unsigned long spins = 0;
    double t0 = 0;
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < want) {
        spins++;
        if (poll_mode) ky_poll();
        if (spins > 4096) {
            sched_yield();
            if ((spins & 0xffff) == 0) {
                double t = bu_now();
                if (t0 == 0)
                    t0 = t;
                else if (t - t0 > 120)
                    bu_die(__FILE__, __LINE__, "waited 120 s for %s (%llu < %llu)", what,
                           (unsigned long long)*flag, (unsigned long long)want);
            }
        }
    }
}

void bu_point_init(bu_point_t *p)
{
    memset(p, 0, sizeof *p);
    p->lat_us = p->bw_GBs = p->base_lat_us = p->base_bw_GBs = p->ratio = p->floor_us = p->floor_GBs = -1;
    p->n = -1;
    p->plan_hits = p->plan_misses = -1;
    p->verified = -1;
}

static void jstr(FILE *f, const char *k, const char *v, int *first)
{
    if (!v) return;
    fprintf(f, "%s\"%s\":\"", *first ? "" : ",", k);
    for (const char *c = v; *c; c++) {
        if (*c == '"' || *c == '\\') fputc('\\', f);
        if ((unsigned char)*c >= 0x20) fputc(*c, f);
    }
    fputc('"', f);
    *first = 0;
}

static void jnum(FILE *f, const char *k, double v, int *first)
{
    if (!(v >= 0) || !isfinite(v)) return;
    fprintf(f, "%s\"%s\":%.6g", *first ? "" : ",", k, v);
    *first = 0;
}

static void jint(FILE *f, const char *k, long long v, int *first)
{
    if (v < 0) return;
    fprintf(f, "%s\"%s\":%lld", *first ? "" : ",", k, v);
    *first = 0;
}

void bu_json_write(const bu_opts_t *o, const bu_point_t *p)
{
    int rank = ky_rank();
    if (rank != 0 || !o->json) return;
    FILE *f = fopen(o->json, "a");
    if (!f) {
        fprintf(stderr, "bench: cannot open %s for appending\n", o->json);
        return;
    }
    int first = 1;
    fputc('{', f);
    jstr(f, "bench", p->bench, &first);
    jstr(f, "case", p->kcase, &first);
    jstr(f, "op", p->op, &first);
    jstr(f, "mem", p->mem, &first);
    jstr(f, "path", p->path, &first);
    jstr(f, "kind", bu_machine(), &first);
    jstr(f, "date", bu_date(), &first);
    jstr(f, "version", ky_version(), &first);
    jint(f, "ranks", p->ranks, &first);
    jint(f, "bytes", (long long)p->bytes, &first);
    jint(f, "iters", p->iters, &first);
    jnum(f, "lat_us", p->lat_us, &first);
    jnum(f, "bw_GBs", p->bw_GBs, &first);
    jstr(f, "baseline", p->baseline, &first);
    jnum(f, "base_lat_us", p->base_lat_us, &first);
    jnum(f, "base_bw_GBs", p->base_bw_GBs, &first);
    jnum(f, "ratio", p->ratio, &first);
    jnum(f, "floor_us", p->floor_us, &first);
    jnum(f, "floor_GBs", p->floor_GBs, &first);
    jint(f, "N", p->n, &first);
    jstr(f, "face", p->face, &first);
    jint(f, "plan_hits", p->plan_hits, &first);
    jint(f, "plan_misses", p->plan_misses, &first);
    if (p->verified >= 0) fprintf(f, ",\"verified\":%s", p->verified ? "true" : "false");
    fputs("}\n", f);
    fclose(f);
}

void bu_table_header(const char *title, const char *baseline, const char *floor_note)
{
    if (ky_rank() != 0) return;
    printf(
        "\n# %s\n#   baseline: %s\n#   floor: %s\n#   ratio = baseline time / Kyoyu time (> 1: Kyoyu "
        "faster)\n",
        title, baseline, floor_note);
    printf("%16s %8s %11s %10s %11s %10s %7s %10s %7s\n", "bytes", "iters", "ky_us", "ky_GB/s", "base_us",
           "base_GB/s", "ratio", "floor_us", "%floor");
    fflush(stdout);
}

void bu_table_row(const bu_point_t *p)
{
    if (ky_rank() != 0) return;
    char sz[48], b[32];
    if (p->n >= 0)
        snprintf(sz, sizeof sz, "N=%d %s", p->n, bu_fmt_size(p->bytes, b, sizeof b));
    else
        bu_fmt_size(p->bytes, sz, sizeof sz);
    double pf = (p->floor_us > 0 && p->lat_us > 0) ? 100.0 * p->floor_us / p->lat_us : -1;
    printf("%16s %8d %11.2f %10.3f %11.2f %10.3f %7.2f %10.2f %6.1f%%%s\n", sz, p->iters, p->lat_us,
           p->bw_GBs, p->base_lat_us, p->base_bw_GBs, p->ratio, p->floor_us, pf,
           p->verified == 0 ? "  VERIFY FAILED" : "");
    fflush(stdout);
}

double bu_memcpy_GBs(size_t bytes)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    if (!a || !b) {
        free(a);
        free(b);
        return -1;
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    double best = 1e30;
    for (int i = 0; i < 6; i++) {
        double t0 = bu_now();
        memcpy(b, a, bytes);
        double t = bu_now() - t0;
        if (t < best) best = t;
        a[i] = b[bytes - 1 - i]; /* keep the copies observable */
    }
    free(a);
    free(b);
    return (double)bytes / best / 1e9;
}

size_t bu_host_avail(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %zu kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024;
}

#ifdef KY_BENCH_HAVE_CUDA
double bu_gpu_peer_GBs(size_t bytes)
{
    int me = ky_rank();
    void *buf = NULL, *peer = NULL;
    BU_CUDA(cudaMalloc(&buf, bytes));
    cudaIpcMemHandle_t h;
    memset(&h, 0, sizeof h);
    if (me == 1 && cudaIpcGetMemHandle(&h, buf) != cudaSuccess) {
        (void)cudaGetLastError();
        memset(&h, 0, sizeof h);
    }
    MPI_Bcast(&h, (int)sizeof h, MPI_BYTE, 1, MPI_COMM_WORLD);
    double best = -1;
    if (me == 0) {
        if (cudaIpcOpenMemHandle(&peer, h, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
            (void)cudaGetLastError();
            peer = NULL;
        }
        if (peer) {
            cudaStream_t s;
            BU_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
            for (int r = 0; r < 6; r++) {
                double t0 = bu_now();
                BU_CUDA(cudaMemcpyAsync(peer, buf, bytes, cudaMemcpyDefault, s));
                BU_CUDA(cudaStreamSynchronize(s));
                double t = bu_now() - t0;
                if (r > 0 && (best < 0 || (double)bytes / t / 1e9 > best)) best = (double)bytes / t / 1e9;
            }
            BU_CUDA(cudaStreamDestroy(s));
            BU_CUDA(cudaIpcCloseMemHandle(peer));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    BU_CUDA(cudaFree(buf));
    MPI_Bcast(&best, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return best;
}
#endif

int bu_two_ranks(const char *prog, int use_gpu, int *dev)
{
    int me = ky_rank();
    if (ky_nranks() != 2) {
        if (me == 0) fprintf(stderr, "%s: needs exactly 2 ranks (got %d)\n", prog, ky_nranks());
        ky_finalize();
        return 2;
    }
    *dev = -1;
    if (!use_gpu) return -1;
    int have = 0;
#ifdef KY_BENCH_HAVE_CUDA
    have = ky_ngpus() > 0 && ky_gpu_device(0, dev) == KY_OK;
    if (have) BU_CUDA(cudaSetDevice(*dev));
#endif
    int all = 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (me == 0) printf("%s: --mem gpu: no GPU for every rank (or built without CUDA): skipped\n", prog);
        ky_finalize();
        return 0;
    }
    return -1;
}
