/* The one table of KY_* settings: name, type, default, one-line doc and the values it allows. Read from
 * the environment once, at ky_init or at the first query, and checked there against the table: a value of
 * the wrong type or outside the allowed ones is replaced by the default, and rank 0 says so at ky_init
 * (kyi_config_warn_unknown) naming the setting and what it allows, as it does for an unknown KY_* name.
 * `kyrun --info` prints the table (ky_config_print). Adding a setting means adding one row here. */
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kyoyu/runtime.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

/* A limit the runtime defines, written into an allowed range ("0.." KYI_XSTR(N)) so it is stated once. */
#define KYI_STR(x) #x
#define KYI_XSTR(x) KYI_STR(x)

extern char **environ;

/* LIST: a comma list whose every item is an allowed word. */
typedef enum { KYI_CFG_LONG, KYI_CFG_DOUBLE, KYI_CFG_SIZE, KYI_CFG_STR, KYI_CFG_LIST } kyi_cfg_type_t;

typedef struct {
    const char *name;
    kyi_cfg_type_t type;
    const char *def;
    const char *doc;
    /* Allowed values, '|' between alternatives: a word ("auto") or an integer range ("1..128", "-1.." with
     * no upper bound). NULL: any value of the type (file names, sizes). Checked once, at load. */
    const char *allowed;
    const char *value; /* in effect: the environment's, or the default when the environment's is not allowed */
    const char *bad;   /* the environment's value when it was not allowed (and so ignored), else NULL */
} kyi_cfg_t;

static kyi_cfg_t kyi_cfg[] = {
    /* runtime */
    {"KY_DEBUG", KYI_CFG_STR, "warn", "log level: none, warn, info or trace", "none|warn|info|trace", 0, 0},
    {"KY_DEBUG_SUBSYS", KYI_CFG_LIST, "all", "comma list of runtime,comm,coll,dsm,array,io,gpu to log", "all|runtime|comm|coll|dsm|array|io|gpu", 0, 0},
    {"KY_DEBUG_FILE", KYI_CFG_STR, "", "log to this file instead of stderr (%h host, %p pid)", NULL, 0, 0},
    {"KY_TRACE", KYI_CFG_STR, "", "write every rank's timeline (puts, gets, collectives, CG phases, GPU kernels) to this Chrome trace JSON file at ky_finalize (Perfetto, chrome://tracing); empty: off", NULL, 0, 0},
    {"KY_TRACE_MAX", KYI_CFG_LONG, "1000000", "events kept per thread and rank when KY_TRACE is set (later ones are counted, not kept)", "1..", 0, 0},
    {"KY_TIMEOUT", KYI_CFG_DOUBLE, "300", "seconds any wait may last before the job is ended with a message", NULL, 0, 0},
    {"KY_NODE_SPLIT", KYI_CFG_STR, "node", "node: ranks sharing a host form a node; rank: every rank is its own node; N: every N consecutive ranks of a host form a node", "node|rank|1..", 0, 0},
    {"KY_GPUS_PER_RANK", KYI_CFG_LONG, "1", "GPUs each rank drives, bound by local rank (0: none)", "0.." KYI_XSTR(KYI_MAX_GPUS_PER_RANK), 0, 0},
    /* comm: paths */
    {"KY_PATH_HOST", KYI_CFG_STR, "auto", "path to host segments of other ranks: auto, shm or mpi", "auto|shm|mpi", 0, 0},
    {"KY_PATH_GPU", KYI_CFG_STR, "auto", "path to GPU segments of other ranks: auto, ipc or mpi (staged)", "auto|ipc|mpi", 0, 0},
    /* comm: progress */
    {"KY_PROGRESS_THREAD", KYI_CFG_LONG, "1", "1: a thread per rank serves remote requests; 0: only inside Kyoyu calls and ky_poll", "0..1", 0, 0},
    {"KY_POLL_SPIN_US", KYI_CFG_LONG, "-1", "microseconds a waiter spins before yielding (-1: 20000, or 0 when oversubscribed)", "-1..", 0, 0},
    {"KY_PROGRESS_SPIN_US", KYI_CFG_LONG, "-1", "microseconds the idle progress thread spins before sleeping (-1: forever, or 0 when oversubscribed or OMP_NUM_THREADS fills the cores)", "-1..", 0, 0},
    {"KY_POLL_YIELD_US", KYI_CFG_LONG, "200", "where ranks outnumber cores: microseconds a waiter polls with sched_yield before it sleeps between polls", "0..", 0, 0},
    {"KY_POLL_SLEEP_MAX_US", KYI_CFG_LONG, "200", "longest sleep between polls of an idle waiter, microseconds", "0..", 0, 0},
    /* comm: protocol */
    {"KY_EAGER_SIZE", KYI_CFG_SIZE, "16K", "payload bytes sent inside a request on the MPI path; larger go as a second message", NULL, 0, 0},
    {"KY_AM_MEDIUM_MAX", KYI_CFG_SIZE, "64K", "largest medium active-message payload", NULL, 0, 0},
    {"KY_STAGE_CHUNK", KYI_CFG_SIZE, "2M", "chunk of the pinned-host pipeline for GPU memory on the MPI path", NULL, 0, 0},
    {"KY_STAGE_DEPTH", KYI_CFG_LONG, "4", "chunks of the pinned-host pipeline in flight", "1..", 0, 0},
    {"KY_HALO_SENDRECV", KYI_CFG_LONG, "1", "array halo exchanges with neighbours on other nodes use matched MPI messages, GPU halos pipelined through pinned memory in KY_STAGE_CHUNK pieces (0: one-sided puts)", "0..1", 0, 0},
    {"KY_PLAN_CACHE", KYI_CFG_LONG, "4096", "repeated strided/vector transfers kept as plans (0: off)", "0..", 0, 0},
    /* coll */
    {"KY_ALLREDUCE_ALGO", KYI_CFG_STR, "auto", "allreduce algorithm: auto, shm, ring, neighbor, rd, bruck, reduce_bcast, oneshot or twoshot", "auto|shm|ring|neighbor|rd|bruck|reduce_bcast|oneshot|twoshot", 0, 0},
    {"KY_ALLGATHER_ALGO", KYI_CFG_STR, "auto", "allgather algorithm: auto, shm, ring, neighbor, rd, bruck or oneshot", "auto|shm|ring|neighbor|rd|bruck|oneshot", 0, 0},
    {"KY_COLL_HIER", KYI_CFG_LONG, "1", "blocking allreduce, allgather, bcast, reduce and barrier (and persistent host allreduce and allgather plans) of a team on several nodes run inside each node, across the nodes' leaders, inside again (0: one flat schedule)", "0..1", 0, 0},
    {"KY_COLL_SHM", KYI_CFG_LONG, "1", "host collectives of teams on one node go through a shared-memory segment (0: MPI schedules)", "0..1", 0, 0},
    {"KY_COLL_SHM_SLOT", KYI_CFG_SIZE, "256K", "bytes per member and round of the shared-memory collectives (larger messages run in rounds)", NULL, 0, 0},
    {"KY_COLL_SHM_CMA", KYI_CFG_SIZE, "16K", "shared-memory allgather, bcast and reduce of at least this many bytes per member copy once, straight from the other processes' buffers (process_vm_readv), instead of twice through the segment (0: never)", NULL, 0, 0},
    {"KY_COLL_SHM_ONESHOT_MAX", KYI_CFG_SIZE, "16K", "largest round a shared-memory allreduce runs one-shot (every member reduces everything); larger rounds reduce-scatter first (two members: always one-shot)", NULL, 0, 0},
    {"KY_COLL_YIELD_US", KYI_CFG_LONG, "200", "microseconds a collective polls (yielding the core) before backing off to sleeps", "0..", 0, 0},
    {"KY_COLL_GPU_PATH", KYI_CFG_STR, "auto", "GPU collectives: auto (NVLink kernels inside one node when GPUs reach each other), staged (always through pinned host memory)", "auto|staged", 0, 0},
    {"KY_NVL_ONESHOT_MAX", KYI_CFG_SIZE, "2M", "largest GPU allreduce vector auto runs one-shot over NVLink; larger run two-shot (two members: at least 16M)", NULL, 0, 0},
    {"KY_NVL_LL_MAX", KYI_CFG_SIZE, "64K", "largest GPU allreduce vector (allgather: block per rank) sent with the LL protocol (data and flag in one store, one NVLink crossing); 0: never", NULL, 0, 0},
    {"KY_NVL_BLOCKS", KYI_CFG_LONG, "64", "most thread blocks of an NVLink collective kernel (1..128)", "1..128", 0, 0},
    {"KY_NVL_THREADS", KYI_CFG_LONG, "512", "threads per block of an NVLink collective kernel moving more than 4 KiB per block (64..512)", "64..512", 0, 0},
    {"KY_CHECK", KYI_CFG_LONG, "0", "1: collectives first agree on their arguments across the team (KY_ERR_ARG everywhere instead of a hang)", "0..1", 0, 0},
    /* dsm */
    {"KY_GAS_SIZE", KYI_CFG_SIZE, "64G", "bytes of virtual address space reserved for the global space in every rank (first half: collective allocations, second half: one slice per rank for ky_alloc_local)", NULL, 0, 0},
    {"KY_GAS_BASE", KYI_CFG_SIZE, "0x300000000000", "preferred address of the global space; the ranks negotiate another if it is taken in any rank", NULL, 0, 0},
    {"KY_PAGE_SIZE", KYI_CFG_SIZE, "64K", "DSM page: unit of fetch, twin, diff and home (a power of two, multiple of the OS page)", NULL, 0, 0},
    {"KY_DSM_SNAPSHOT", KYI_CFG_LONG, "2", "which home pages keep the synchronised version while their home writes them (late fetchers never see newer writes): 2 the pages some rank has fetched (see KY_DSM_SHARED_WINDOW; a page fetched for the first time is not guarded in that interval: counted as unguarded_reads), 1 every home page, 0 none", "0..2", 0, 0},
    {"KY_DSM_SHARED_WINDOW", KYI_CFG_LONG, "-1", "with KY_DSM_SNAPSHOT=2: -1, a home page once fetched stays guarded until freed (new allocations for 2 intervals); N >= 0, only for N intervals after its last fetch or its allocation (fewer copies when sharing moves, but a page fetched again after a quiet spell is unguarded in that interval)", "-1..", 0, 0},
    {"KY_DSM_SNAPSHOT_RUN", KYI_CFG_LONG, "8", "a home's write fault snapshots and opens up to this many following write-protected home pages at once (1: one page per fault)", "1..", 0, 0},
    {"KY_DSM_DIRECT", KYI_CFG_LONG, "1", "1: pages homed on a rank of the same node are copied straight from its memory (0: always by message)", "0..1", 0, 0},
    {"KY_STATS", KYI_CFG_LONG, "0", "1: every rank prints its DSM statistics at ky_finalize", "0..1", 0, 0},
    /* gpu service layer */
    {"KY_GPU_STREAMS", KYI_CFG_LONG, "4", "streams a large GPU copy is split across", "1..", 0, 0},
    {"KY_GPU_SPLIT_MIN", KYI_CFG_SIZE, "1G", "smallest GPU copy split across streams (on H200 NVLink one stream already reaches the peer-copy rate)", NULL, 0, 0},
    {"KY_GPU_KERNEL_MAX_BLOCK", KYI_CFG_SIZE, "256", "strided GPU copies with blocks up to this many bytes use a copy kernel", NULL, 0, 0},
};
#define KYI_NCFG (sizeof kyi_cfg / sizeof kyi_cfg[0])

static pthread_once_t kyi_cfg_once = PTHREAD_ONCE_INIT;

static int parse_size(const char *s, size_t *out);

/* The whole string is an integer (C syntax: 0x.. and 0.. too), surrounding blanks aside. */
static int parse_long(const char *s, long *out)
{
    char *end;
    long v = strtol(s, &end, 0);
    if (end == s) return -1;
    while (isspace((unsigned char)*end)) end++;
    if (*end) return -1;
    *out = v;
    return 0;
}

/* Does the word w (n bytes) match one alternative of the allowed list? */
static int allowed_one(const char *allowed, const char *w, size_t n)
{
    for (const char *a = allowed; *a;) {
        size_t len = strcspn(a, "|");
        const char *dots = memchr(a, '.', len);
        if (dots && dots + 1 < a + len && dots[1] == '.') {
            char word[64];
            long v, lo = LONG_MIN, hi = LONG_MAX;
            if (n < sizeof word) {
                memcpy(word, w, n);
                word[n] = 0;
                if (dots > a) lo = strtol(a, NULL, 10);
                if (dots + 2 < a + len) hi = strtol(dots + 2, NULL, 10);
                if (!parse_long(word, &v) && v >= lo && v <= hi) return 1;
            }
        } else if (len == n && !strncmp(a, w, n)) {
            return 1;
        }
        a += len;
        if (*a == '|') a++;
    }
    return 0;
}

/* Is v a value of c's type and among the allowed ones? */
static int valid(const kyi_cfg_t *c, const char *v)
{
    long l;
    size_t z;
    char *end;
    switch (c->type) {
    case KYI_CFG_LONG:
        if (parse_long(v, &l)) return 0;
        break;
    case KYI_CFG_DOUBLE:
        strtod(v, &end);
        if (end == v) return 0;
        while (isspace((unsigned char)*end)) end++;
        if (*end) return 0;
        break;
    case KYI_CFG_SIZE:
        if (parse_size(v, &z)) return 0;
        break;
    case KYI_CFG_LIST:
        for (const char *p = v;;) {
            size_t n = strcspn(p, ",");
            if (c->allowed && !allowed_one(c->allowed, p, n)) return 0;
            if (!p[n]) return 1;
            p += n + 1;
        }
    case KYI_CFG_STR: break;
    }
    return !c->allowed || allowed_one(c->allowed, v, strlen(v));
}

static void load_once(void)
{
    for (size_t i = 0; i < KYI_NCFG; i++) {
        kyi_cfg_t *c = &kyi_cfg[i];
        const char *v = getenv(c->name);
        c->value = c->def;
        c->bad = NULL;
        if (v && *v) {
            if (valid(c, v)) c->value = v;
            else c->bad = v;
        }
    }
}

/* "one of none, warn, info or trace", "an integer from 1 to 128", "node, rank or an integer of at least 1":
 * what a setting allows, in words, for the warning. */
static void describe_allowed(const kyi_cfg_t *c, char *out, size_t cap)
{
    static const char *what[] = {"an integer", "a number", "a size (like 4096, 64K, 2M)", "any text", ""};
    size_t o = 0;
    int nalt = 0, k = 0;
    out[0] = 0;
    if (!c->allowed) { snprintf(out, cap, "%s", what[c->type]); return; }
    for (const char *a = c->allowed; *a; a++) nalt += *a == '|';
    nalt++;
    if (c->type == KYI_CFG_LIST) o += (size_t)snprintf(out + o, cap - o, "a comma list of ");
    else if (nalt > 1 && !strstr(c->allowed, "..|")) o += (size_t)snprintf(out + o, cap - o, "one of ");
    for (const char *a = c->allowed; *a && o < cap; k++) {
        size_t len = strcspn(a, "|");
        const char *dots = memchr(a, '.', len);
        const char *sep = k == 0 ? "" : k == nalt - 1 ? " or " : ", ";
        if (dots && dots[1] == '.') {
            int has_lo = dots > a, has_hi = dots + 2 < a + len;
            if (has_lo && has_hi)
                o += (size_t)snprintf(out + o, cap - o, "%san integer from %.*s to %.*s", sep, (int)(dots - a), a,
                                      (int)(a + len - dots - 2), dots + 2);
            else if (has_lo)
                o += (size_t)snprintf(out + o, cap - o, "%san integer of at least %.*s", sep, (int)(dots - a), a);
            else
                o += (size_t)snprintf(out + o, cap - o, "%san integer of at most %.*s", sep,
                                      (int)(a + len - dots - 2), dots + 2);
        } else {
            o += (size_t)snprintf(out + o, cap - o, "%s%.*s", sep, (int)len, a);
        }
        a += len;
        if (*a == '|') a++;
    }
}

void kyi_config_load(void)
{
    static atomic_int log_ready;
    pthread_once(&kyi_cfg_once, load_once);
    /* Logging reads its settings through this table, so it is set up after the table, once. */
    if (!atomic_exchange(&log_ready, 1)) kyi_log_setup();
}

static kyi_cfg_t *find(const char *name)
{
    kyi_config_load();
    for (size_t i = 0; i < KYI_NCFG; i++)
        if (!strcmp(kyi_cfg[i].name, name)) return &kyi_cfg[i];
    return NULL;
}

static kyi_cfg_t *must_find(const char *name)
{
    kyi_cfg_t *c = find(name);
    if (!c) kyi_fatal("internal: setting %s is not in the configuration table", name);
    return c;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0) return -1;
    while (isspace((unsigned char)*end)) end++;
    switch (toupper((unsigned char)*end)) {
    case 'K': v *= 1024.0; break;
    case 'M': v *= 1024.0 * 1024; break;
    case 'G': v *= 1024.0 * 1024 * 1024; break;
    case 0: break;
    default: return -1;
    }
    *out = (size_t)v;
    return 0;
}

long kyi_config_long(const char *name)
{
    kyi_cfg_t *c = must_find(name);
    char *end;
    long v = strtol(c->value, &end, 0);
    if (end == c->value) {
        KYI_WARN(KYI_SUB_RUNTIME, "%s=%s is not an integer; using the default %s", name, c->value, c->def);
        return strtol(c->def, NULL, 0);
    }
    return v;
}

long kyi_config_long_once(const char *name, long *slot)
{
    long v = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (v == KYI_CONFIG_UNREAD) {
        v = kyi_config_long(name);
        __atomic_store_n(slot, v, __ATOMIC_RELAXED);
    }
    return v;
}

double kyi_config_double(const char *name)
{
    kyi_cfg_t *c = must_find(name);
    char *end;
    double v = strtod(c->value, &end);
    if (end == c->value) {
        KYI_WARN(KYI_SUB_RUNTIME, "%s=%s is not a number; using the default %s", name, c->value, c->def);
        return strtod(c->def, NULL);
    }
    return v;
}

size_t kyi_config_size(const char *name)
{
    kyi_cfg_t *c = must_find(name);
    size_t v;
    if (parse_size(c->value, &v)) {
        KYI_WARN(KYI_SUB_RUNTIME, "%s=%s is not a size (like 4096, 64K, 2M); using the default %s", name,
                 c->value, c->def);
        parse_size(c->def, &v);
    }
    return v;
}

const char *kyi_config_str(const char *name) { return must_find(name)->value; }

void kyi_config_warn_unknown(int rank)
{
    if (rank > 0) return;
    kyi_config_load();
    for (size_t i = 0; i < KYI_NCFG; i++) {
        const kyi_cfg_t *c = &kyi_cfg[i];
        if (!c->bad) continue;
        char allowed[512];
        describe_allowed(c, allowed, sizeof allowed);
        KYI_WARN(KYI_SUB_RUNTIME, "%s=%s is not %s; using the default %s", c->name, c->bad, allowed, c->def);
    }
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "KY_", 3)) continue;
        char name[128];
        size_t n = strcspn(*e, "=");
        if (n >= sizeof name) n = sizeof name - 1;
        memcpy(name, *e, n);
        name[n] = 0;
        if (!strncmp(name, "KY_TEST_", 8) || !strncmp(name, "KY_BENCH_", 9)) continue; /* tests' and benchmarks' own */
        if (!find(name))
            KYI_WARN(KYI_SUB_RUNTIME, "unknown setting %s in the environment is ignored (kyrun --info lists them all)",
                     name);
    }
}

int ky_config_get(const char *name, const char **value)
{
    if (!name || !value) return kyi_fail(KY_ERR_ARG, "ky_config_get", "name or value is NULL");
    kyi_cfg_t *c = find(name);
    if (!c) return kyi_fail(KY_ERR_ARG, "ky_config_get", "no setting named %s", name);
    *value = c->value;
    return KY_OK;
}

int ky_config_print(FILE *out)
{
    if (!out) return kyi_fail(KY_ERR_ARG, "ky_config_print", "out is NULL");
    kyi_config_load();
    static const char *types[] = {"int", "float", "size", "string", "list"};
    fprintf(out, "Kyoyu %s settings (environment variables):\n", ky_version());
    for (size_t i = 0; i < KYI_NCFG; i++) {
        const kyi_cfg_t *c = &kyi_cfg[i];
        int set = getenv(c->name) && *getenv(c->name);
        fprintf(out, "%-24s = %-10s %-8s (default %s%s)\n    %s\n", c->name, c->value, types[c->type], c->def,
                c->bad ? "; the environment's value is not allowed" : set ? ", set in environment" : "", c->doc);
        if (c->bad) {
            char allowed[512];
            describe_allowed(c, allowed, sizeof allowed);
            fprintf(out, "    ignored: %s=%s is not %s\n", c->name, c->bad, allowed);
        }
    }
    return KY_OK;
}
