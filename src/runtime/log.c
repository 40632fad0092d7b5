/* Logging: KY_DEBUG=none|warn|info|trace, KY_DEBUG_SUBSYS=all|runtime,comm,coll,dsm,array,io,gpu,
 * KY_DEBUG_FILE=path with %h (host) and %p (pid). Every line starts with "host:pid:rank". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>

#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

static int kyi_log_level = KYI_LOG_WARN;
static int kyi_log_mask = -1;
static FILE *kyi_log_out;
static pthread_mutex_t kyi_log_lock = PTHREAD_MUTEX_INITIALIZER;

static int parse_subsys(const char *s)
{
    static const struct {
        const char *name;
        int bit;
    } names[] = {{"runtime", KYI_SUB_RUNTIME}, {"comm", KYI_SUB_COMM},   {"coll", KYI_SUB_COLL},
                 {"dsm", KYI_SUB_DSM},         {"array", KYI_SUB_ARRAY}, {"io", KYI_SUB_IO},
                 {"gpu", KYI_SUB_GPU}};
    /* The settings table has checked every name; each item of the comma list is matched whole. */
    int mask = 0;
    for (const char *p = s ? s : ""; *p;) {
        size_t n = strcspn(p, ",");
        if (n == 3 && !strncmp(p, "all", 3)) return -1;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && !strncmp(p, names[i].name, n)) mask |= names[i].bit;
        p += n;
        if (*p == ',') p++;
    }
    return s && *s ? mask : -1;
}

static void open_file(const char *pattern)
{
    char path[512], host[64];
    size_t o = 0;
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;
    for (const char *p = pattern; *p && o + 64 < sizeof path; p++) {
        if (p[0] == '%' && p[1] == 'h') {
            o += snprintf(path + o, sizeof path - o, "%s", host);
            p++;
        } else if (p[0] == '%' && p[1] == 'p') {
            o += snprintf(path + o, sizeof path - o, "%d", (int)getpid());
            p++;
        } else
            path[o++] = *p;
    }
    path[o] = 0;
    FILE *f = fopen(path, "a");
    if (f) {
        setvbuf(f, NULL, _IOLBF, 0);
        kyi_log_out = f;
    }
}

void kyi_log_setup(void)
{
    if (kyi_setting_is(KYI_SET_DEBUG, "none"))
        kyi_log_level = KYI_LOG_NONE;
    else if (kyi_setting_is(KYI_SET_DEBUG, "info"))
        kyi_log_level = KYI_LOG_INFO;
    else if (kyi_setting_is(KYI_SET_DEBUG, "trace"))
        kyi_log_level = KYI_LOG_TRACE;
    else
        kyi_log_level = KYI_LOG_WARN;
    kyi_log_mask = parse_subsys(kyi_setting_str(KYI_SET_DEBUG_SUBSYS));
    const char *file = kyi_setting_str(KYI_SET_DEBUG_FILE);
    if (file && *file && !kyi_log_out) open_file(file);
}

int kyi_log_enabled(int level, int subsys)
{
    return level <= kyi_log_level && (subsys & kyi_log_mask);
}

static void vlog(FILE *out, const char *tag, const char *fmt, va_list ap)
{
    char line[1024];
    int o;
    if (kyi_rt.initialized)
        o = snprintf(line, sizeof line, "%s:%d:%d: Kyoyu %s: ", kyi_rt.host, (int)getpid(), kyi_rt.rank, tag);
    else {
        char host[64];
        gethostname(host, sizeof host);
        host[sizeof host - 1] = 0;
        o = snprintf(line, sizeof line, "%s:%d:?: Kyoyu %s: ", host, (int)getpid(), tag);
    }
    vsnprintf(line + o, sizeof line - o, fmt, ap);
    pthread_mutex_lock(&kyi_log_lock);
    fprintf(out, "%s\n", line);
    fflush(out);
    pthread_mutex_unlock(&kyi_log_lock);
}

void kyi_log(int level, int subsys, const char *fmt, ...)
{
    static const char *tags[] = {"", "warn", "info", "trace"};
    if (!kyi_log_enabled(level, subsys)) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(kyi_log_out ? kyi_log_out : stderr, tags[level], fmt, ap);
    va_end(ap);
}

void kyi_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(stderr, "fatal", fmt, ap);
    va_end(ap);
    if (kyi_log_out) {
        va_start(ap, fmt);
        vlog(kyi_log_out, "fatal", fmt, ap);
        va_end(ap);
    }
    int mpi_up = 0, mpi_down = 0;
    MPI_Initialized(&mpi_up);
    MPI_Finalized(&mpi_down);
    if (mpi_up && !mpi_down) MPI_Abort(MPI_COMM_WORLD, 70);
    abort();
}
