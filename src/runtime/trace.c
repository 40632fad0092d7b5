/* KY_TRACE timelines (trace.h): per-thread event buffers, clock alignment at init, one Chrome trace JSON
 * file written by rank 0 at finalize. Threads append to their own buffer without locks; a buffer joins the
 * rank's list under a mutex when its thread records its first event; finalize reads the buffers after the
 * comm layer has stopped the progress thread. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kyoyu/status.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"

int kyi_trace_on = 0;

typedef struct {
    const char *cat, *name;
    uint64_t t0, t1;
    int64_t n;
    int32_t track, peer;
} ev_t;

typedef struct tbuf {
    ev_t *ev;
    size_t len, cap;
    uint64_t dropped;
    int tid;
    struct tbuf *next;
} tbuf_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tbuf_t *bufs;
static int nthreads;
static size_t max_events;
static int64_t offset_ns; /* rank 0's clock minus this rank's */
static pthread_t main_thread;
static __thread tbuf_t *mine;
#define MAX_NAMED 16
static struct {
    int track;
    const char *name;
} named[MAX_NAMED];
static int nnamed;

uint64_t kyi_trace_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static tbuf_t *my_buf(void)
{
    if (mine) return mine;
    tbuf_t *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    pthread_mutex_lock(&lock);
    b->tid = pthread_equal(pthread_self(), main_thread) ? 0 : ++nthreads;
    b->next = bufs;
    bufs = b;
    pthread_mutex_unlock(&lock);
    mine = b;
    return b;
}

void kyi_trace_event(const char *cat, const char *name, uint64_t t0, uint64_t t1, int track, int64_t n,
                     int peer)
{
    if (!kyi_trace_on) return;
    tbuf_t *b = my_buf();
    if (!b) return;
    if (b->len == b->cap) {
        size_t c = b->cap ? 2 * b->cap : 4096;
        if (c > max_events) c = max_events;
        ev_t *e = c > b->cap ? realloc(b->ev, c * sizeof *e) : NULL;
        if (!e) {
            b->dropped++;
            return;
        }
        b->ev = e;
        b->cap = c;
    }
    b->ev[b->len++] =
        (ev_t){cat, name, t0, t1 > t0 ? t1 : t0, n, track == KYI_TRACK_THREAD ? b->tid : track, peer};
}

void kyi_trace_track_name(int track, const char *name)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nnamed; i++)
        if (named[i].track == track) {
            pthread_mutex_unlock(&lock);
            return;
        }
    if (nnamed < MAX_NAMED) named[nnamed++] = (typeof(named[0])){track, name};
    pthread_mutex_unlock(&lock);
}

/* offset of this rank's clock to rank 0's: the ping-pong of least round trip out of 16 */
static void align_clocks(void)
{
    int me = kyi_rt.rank, n = kyi_rt.nranks;
    const int tag = 7301, rounds = 16;
    for (int r = 1; r < n; r++) {
        if (me == 0) {
            for (int k = 0; k < rounds; k++) {
                uint64_t dummy, t;
                MPI_Recv(&dummy, 1, MPI_UINT64_T, r, tag, kyi_rt.world, MPI_STATUS_IGNORE);
                t = kyi_trace_now();
                MPI_Send(&t, 1, MPI_UINT64_T, r, tag, kyi_rt.world);
            }
        } else if (me == r) {
            uint64_t best = UINT64_MAX;
            for (int k = 0; k < rounds; k++) {
                uint64_t t1 = kyi_trace_now(), t0;
                MPI_Send(&t1, 1, MPI_UINT64_T, 0, tag, kyi_rt.world);
                MPI_Recv(&t0, 1, MPI_UINT64_T, 0, tag, kyi_rt.world, MPI_STATUS_IGNORE);
                uint64_t t2 = kyi_trace_now();
                if (t2 - t1 < best) {
                    best = t2 - t1;
                    offset_ns = (int64_t)t0 - (int64_t)(t1 / 2 + t2 / 2);
                }
            }
        }
    }
}

int kyi_trace_init(void)
{
    const char *file = kyi_setting_str(KYI_SET_TRACE);
    int on = file && file[0], all = 0;
    /* every rank must take part in the alignment and the gather: agree (one allreduce, tracing or not) */
    MPI_Allreduce(&on, &all, 1, MPI_INT, MPI_MAX, kyi_rt.world);
    if (!all) return KY_OK;
    main_thread = pthread_self();
    long m = kyi_setting_long(KYI_SET_TRACE_MAX);
    max_events = m > 0 ? (size_t)m : 1;
    align_clocks();
    kyi_trace_on = 1;
    return KY_OK;
}

/* One rank's events as JSON objects, each followed by ",\n"; ts relative to origin (µs). */
static char *serialize(uint64_t origin, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    int pid = kyi_rt.rank;
#define EMIT(...)                                                                     \
    do {                                                                              \
        int w_;                                                                       \
        while (s && (w_ = snprintf(s + n, cap - n, __VA_ARGS__)) >= (int)(cap - n)) { \
            char *g_ = realloc(s, cap * 2);                                           \
            if (!g_) {                                                                \
                free(s);                                                              \
                s = NULL;                                                             \
                break;                                                                \
            }                                                                         \
            s = g_;                                                                   \
            cap *= 2;                                                                 \
        }                                                                             \
        if (s) n += (size_t)w_;                                                       \
    } while (0)
    EMIT(
        "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": {\"name\": \"rank %d (%s)\"}},\n",
        pid, pid, kyi_rt.host);
    EMIT("{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": %d, \"args\": {\"sort_index\": %d}},\n",
         pid, pid);
    uint64_t dropped = 0;
    for (tbuf_t *b = bufs; b; b = b->next) {
        EMIT(
            "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": "
            "\"%s\"}},\n",
            pid, b->tid, b->tid == 0 ? "main thread" : "other thread (progress)");
        dropped += b->dropped;
    }
    for (int i = 0; i < nnamed; i++)
        EMIT(
            "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": "
            "\"%s\"}},\n",
            pid, named[i].track, named[i].name);
    if (dropped)
        EMIT(
            "{\"ph\": \"i\", \"s\": \"p\", \"name\": \"%llu events dropped (KY_TRACE_MAX)\", \"pid\": %d, "
            "\"tid\": 0, \"ts\": 0},\n",
            (unsigned long long)dropped, pid);
    for (tbuf_t *b = bufs; b; b = b->next)
        for (size_t k = 0; k < b->len; k++) {
            const ev_t *e = &b->ev[k];
            double ts = ((double)((int64_t)(e->t0 - origin) + offset_ns)) / 1e3,
                   dur = (double)(e->t1 - e->t0) / 1e3;
            EMIT(
                "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, "
                "\"dur\": %.3f",
                e->cat, e->name, pid, e->track, ts, dur);
            if (e->n >= 0 || e->peer >= 0) {
                EMIT(", \"args\": {");
                if (e->n >= 0) EMIT("\"n\": %lld%s", (long long)e->n, e->peer >= 0 ? ", " : "");
                if (e->peer >= 0) EMIT("\"peer\": %d", e->peer);
                EMIT("}");
            }
            EMIT("},\n");
        }
#undef EMIT
    *len = s ? n : 0;
    return s;
}

void kyi_trace_finalize(void)
{
    if (!kyi_trace_on) return;
    kyi_trace_on = 0;
    int me = kyi_rt.rank, n = kyi_rt.nranks;
    /* origin: rank 0's trace start, the earliest event it knows of, broadcast on rank 0's clock */
    uint64_t first = UINT64_MAX, origin;
    for (tbuf_t *b = bufs; b; b = b->next)
        for (size_t k = 0; k < b->len; k++)
            if (b->ev[k].t0 + offset_ns < first) first = b->ev[k].t0 + offset_ns;
    MPI_Allreduce(&first, &origin, 1, MPI_UINT64_T, MPI_MIN, kyi_rt.world);
    if (origin == UINT64_MAX) origin = kyi_trace_now();
    size_t len = 0;
    char *s = serialize(origin, &len);
    int mylen = (int)len, *lens = NULL, *displs = NULL;
    if (me == 0) {
        lens = calloc((size_t)n, sizeof *lens);
        displs = calloc((size_t)n, sizeof *displs);
    }
    MPI_Gather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, 0, kyi_rt.world);
    char *all = NULL;
    size_t tot = 0;
    if (me == 0 && lens && displs) {
        for (int r = 0; r < n; r++) {
            displs[r] = (int)tot;
            tot += (size_t)lens[r];
        }
        all = malloc(tot + 1);
    }
    MPI_Gatherv(s, mylen, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, kyi_rt.world);
    if (me == 0 && all) {
        const char *file = kyi_setting_str(KYI_SET_TRACE);
        FILE *f = fopen(file, "w");
        if (!f) {
            KYI_WARN(KYI_SUB_RUNTIME, "KY_TRACE=%s: cannot write the trace", file);
        } else {
            time_t sec = (time_t)(origin / 1000000000ull);
            struct tm tmv;
            char when[64];
            gmtime_r(&sec, &tmv);
            strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tmv);
            fprintf(
                f,
                "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"origin_utc\": \"%s.%09lluZ\", "
                "\"origin_unix_ns\": %llu, \"ranks\": %d, \"clock\": \"time of day, aligned on rank 0\"},\n"
                "\"traceEvents\": [\n",
                when, (unsigned long long)(origin % 1000000000ull), (unsigned long long)origin, n);
            fwrite(all, 1, tot, f);
            fprintf(f, "{\"ph\": \"M\", \"name\": \"trace_end\", \"pid\": 0, \"args\": {}}\n]}\n");
            fclose(f);
        }
    }
    free(all);
    free(lens);
    free(displs);
    free(s);
    pthread_mutex_lock(&lock);
    while (bufs) {
        tbuf_t *b = bufs;
        bufs = b->next;
        free(b->ev);
        free(b);
    }
    nthreads = 0;
    nnamed = 0;
    pthread_mutex_unlock(&lock);
    mine = NULL;
}
