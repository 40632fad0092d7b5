/* ky_stencil output: the table for people (rank 0, stdout) and the JSON lines of docs/benchmarks.md
 * (--json FILE; records "dsm" by default, "stencil" with --record stencil for the weak-scaling suite). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stencil.h"

static const char *names[ST_NVARIANTS] = {"mpi", "faults", "preload", "barrier"};

const char *st_variant_name(int v)
{
    return v >= 0 && v < ST_NVARIANTS ? names[v] : "?";
}

static double gflops(const st_params_t *p, double t)
{
    double pts = (double)(p->nz - 2) * (p->ny - 2) * (p->nx - 2);
    return t > 0 ? pts * p->nt * st_flops_per_point(p->points) / t * 1e-9 : 0.0;
}

void st_print_header(const st_params_t *p)
{
    if (p->rank != 0) return;
    printf(
        "# ky_stencil %d-point, grid %d x %d x %d (z y x), %d steps, bt %d, %d ranks x %d threads, slabs of "
        "%d "
        "planes, page %zu B, %d flops/point, best of %d\n",
        p->points, p->nz, p->ny, p->nx, p->nt, p->bt, p->nranks, p->threads, p->block, ky_page_size(),
        st_flops_per_point(p->points), p->reps);
    printf(
        "#   time_s: slowest rank, best of the runs; GFLOP/s: interior points x steps x flops per point / "
        "time_s\n"
        "#   x MPI = variant time / MPI time; goal: the variant's goal (preload <= 1.05, faults <= 1.30; "
        "barrier\n"
        "#   has none), met or missed; check: every point against the serial run. DSM counts summed over "
        "ranks:\n"
        "#   r/w_faults: faults taken; pages, MiB_fetch: fetched from homes (faults, preload, overload); "
        "preload,\n"
        "#   overload: pages fetched by those calls; snaps: home pages copied before the home's first write "
        "after a\n"
        "#   sync; diffs: pages written back as diffs; drops: cached pages dropped at sync_drop; coh_s: time "
        "in\n"
        "#   coherence calls and faults (slowest rank)\n");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores > 0 && (long)p->nranks * p->threads > cores)
        printf(
            "#   note: %d ranks x %d threads on %ld cores: the ranks take turns on the cores, so waits for "
            "other\n"
            "#   ranks dominate and the ratios say little; the goals are judged with a core per thread\n"
            "#   (docs/performance.md)\n",
            p->nranks, p->threads, cores);
    printf("%-8s %10s %9s %7s %13s %6s %9s %9s %9s %10s %9s %9s %8s %8s %8s %8s\n", "variant", "time_s",
           "GFLOP/s", "x MPI", "goal", "check", "r_faults", "w_faults", "pages", "MiB_fetch", "preload",
           "overload", "snaps", "diffs", "drops", "coh_s");
}

/* The variant's goal against MPI: "<= 1.05 met", "<= 1.30 missed", or "-" where it has none. */
static void goal_mark(int v, const char *ratio_text, double ratio, char *out, size_t cap)
{
    double goal = v == ST_PRELOAD ? 1.05 : v == ST_FAULTS ? 1.30 : 0;
    if (goal == 0 || ratio_text[0] == '-') {
        snprintf(out, cap, "-");
        return;
    }
    snprintf(out, cap, "<=%.2f %s", goal, ratio <= goal ? "met" : "missed");
}

void st_print_row(const st_params_t *p, int v, const st_result_t *r, const st_result_t *mpi)
{
    if (p->rank != 0) return;
    if (!r->ran) {
        printf("%-8s skipped: %s\n", st_variant_name(v), r->note);
        return;
    }
    char ratio[16] = "-", goal[24];
    double x = mpi && mpi->ran && mpi->time_s > 0 ? r->time_s / mpi->time_s : 0;
    if (x > 0) snprintf(ratio, sizeof ratio, "%.2f", x);
    goal_mark(v, ratio, x, goal, sizeof goal);
    const char *chk = r->verified < 0 ? "-" : r->verified ? "OK" : "FAIL";
    if (v == ST_MPI) {
        printf("%-8s %10.4f %9.2f %7s %13s %6s\n", st_variant_name(v), r->time_s, gflops(p, r->time_s), ratio,
               goal, chk);
    } else {
        printf(
            "%-8s %10.4f %9.2f %7s %13s %6s %9llu %9llu %9llu %10.2f %9llu %9llu %8llu %8llu %8llu %8.4f\n",
            st_variant_name(v), r->time_s, gflops(p, r->time_s), ratio, goal, chk,
            (unsigned long long)r->s[SS_RFAULTS], (unsigned long long)r->s[SS_WFAULTS],
            (unsigned long long)r->s[SS_PAGES], r->s[SS_BYTES] / 1048576.0,
            (unsigned long long)r->s[SS_PRELOADED], (unsigned long long)r->s[SS_OVERLOADED],
            (unsigned long long)r->s[SS_SNAPSHOTS], (unsigned long long)r->s[SS_DIFFS],
            (unsigned long long)r->s[SS_DROPS], r->coherence_s);
    }
    if (r->verified == 0)
        printf("#   %s: %ld points differ from the serial run (max relative error %.3g)\n",
               st_variant_name(v), r->wrong, r->max_err);
    fflush(stdout);
}

/* ---- JSON lines ---------------------------------------------------------------------------------- */
typedef struct {
    char b[2048];
    size_t n;
} jb_t;

static void jraw(jb_t *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (j->n < sizeof j->b) j->n += (size_t)vsnprintf(j->b + j->n, sizeof j->b - j->n, fmt, ap);
    va_end(ap);
}
static void jstr(jb_t *j, const char *k, const char *v)
{
    jraw(j, "%s\"%s\":\"%s\"", j->n > 1 ? "," : "", k, v);
}
static void jint(jb_t *j, const char *k, long long v)
{
    jraw(j, "%s\"%s\":%lld", j->n > 1 ? "," : "", k, v);
}
static void jnum(jb_t *j, const char *k, double v)
{
    jraw(j, "%s\"%s\":%.6g", j->n > 1 ? "," : "", k, v);
}

static const char *machine(void)
{
    static char host[256];
    const char *m = getenv("KY_BENCH_MACHINE");
    if (m && *m) return m;
    if (gethostname(host, sizeof host - 1) != 0) return "unknown";
    return host;
}

void st_json_write(const st_params_t *p, int v, const st_result_t *r, const st_result_t *mpi)
{
    if (p->rank != 0 || p->json == NULL || !r->ran) return;
    char date[16], name[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    int stencil = strcmp(p->record, "stencil") == 0;
    jb_t j = {"{", 1};
    if (stencil) {
        snprintf(name, sizeof name, "%dpt_%s_host", p->points, st_variant_name(v));
        jstr(&j, "bench", "stencil");
        jstr(&j, "case", name);
        jstr(&j, "variant", st_variant_name(v));
        snprintf(name, sizeof name, "%dpt", p->points);
        jstr(&j, "stencil", name);
        jstr(&j, "mem", "host");
        jint(&j, "N", p->weak > 0 ? p->weak : p->nx);
        jint(&j, "steps", p->nt);
        jint(&j, "bt", p->bt);
        jnum(&j, "gflops", gflops(p, r->time_s));
    } else {
        snprintf(name, sizeof name, "stencil%d_%s", p->points, st_variant_name(v));
        jstr(&j, "bench", "dsm");
        jstr(&j, "case", name);
        snprintf(name, sizeof name, "stencil%d", p->points);
        jstr(&j, "app", name);
        jstr(&j, "variant", st_variant_name(v));
        jint(&j, "pages_fetched", (long long)r->s[SS_PAGES]);
        jint(&j, "faults_read", (long long)r->s[SS_RFAULTS]);
        jint(&j, "faults_write", (long long)r->s[SS_WFAULTS]);
        jint(&j, "bytes_fetched", (long long)r->s[SS_BYTES]);
        jint(&j, "pages_preloaded", (long long)r->s[SS_PRELOADED]);
        jint(&j, "pages_overloaded", (long long)r->s[SS_OVERLOADED]);
        jint(&j, "diffs", (long long)r->s[SS_DIFFS]);
        jint(&j, "diff_bytes", (long long)r->s[SS_DIFF_BYTES]);
        jint(&j, "drops", (long long)r->s[SS_DROPS]);
        jint(&j, "home_snapshots", (long long)r->s[SS_SNAPSHOTS]);
        jnum(&j, "coherence_s", r->coherence_s);
        jint(&j, "N", p->nx);
        jint(&j, "nz", p->nz);
        jint(&j, "ny", p->ny);
        jint(&j, "nx", p->nx);
        jint(&j, "steps", p->nt);
        jint(&j, "bt", p->bt);
        jnum(&j, "gflops", gflops(p, r->time_s));
    }
    jstr(&j, "kind", machine());
    jstr(&j, "date", date);
    jstr(&j, "version", ky_version());
    jint(&j, "ranks", p->nranks);
    jint(&j, "threads", p->threads);
    jnum(&j, "time_s", r->time_s);
    if (mpi && mpi->ran && mpi->time_s > 0) {
        jstr(&j, "baseline", "mpi");
        jnum(&j, "base_time_s", mpi->time_s);
        jnum(&j, "ratio", mpi->time_s / r->time_s);
    }
    if (r->verified >= 0) jraw(&j, ",\"verified\":%s", r->verified ? "true" : "false");
    jraw(&j, "}\n");
    FILE *f = fopen(p->json, "a");
    if (f == NULL) {
        perror(p->json);
        return;
    }
    fputs(j.b, f);
    fclose(f);
}
