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
    const char
        *value;      /* in effect: the environment's, or the default when the environment's is not allowed */
    const char *bad; /* the environment's value when it was not allowed (and so ignored), else NULL */
} kyi_cfg_t;

static kyi_cfg_t kyi_cfg[KYI_SET_COUNT] = {
#define KYI_SETTING(id, name, type, def, doc, allowed) [KYI_SET_##id] = {name, type, def, doc, allowed, 0, 0},
#include "runtime/settings.def"
#undef KYI_SETTING
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
        case KYI_CFG_STR:
            break;
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
            if (valid(c, v))
                c->value = v;
            else
                c->bad = v;
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
    if (!c->allowed) {
        snprintf(out, cap, "%s", what[c->type]);
        return;
    }
    for (const char *a = c->allowed; *a; a++) nalt += *a == '|';
    nalt++;
    if (c->type == KYI_CFG_LIST)
        o += (size_t)snprintf(out + o, cap - o, "a comma list of ");
    else if (nalt > 1 && !strstr(c->allowed, "..|"))
        o += (size_t)snprintf(out + o, cap - o, "one of ");
    for (const char *a = c->allowed; *a && o < cap; k++) {
        size_t len = strcspn(a, "|");
        const char *dots = memchr(a, '.', len);
        const char *sep = k == 0 ? "" : k == nalt - 1 ? " or " : ", ";
        if (dots && dots[1] == '.') {
            int has_lo = dots > a, has_hi = dots + 2 < a + len;
            if (has_lo && has_hi)
                o += (size_t)snprintf(out + o, cap - o, "%san integer from %.*s to %.*s", sep,
                                      (int)(dots - a), a, (int)(a + len - dots - 2), dots + 2);
            else if (has_lo)
                o += (size_t)snprintf(out + o, cap - o, "%san integer of at least %.*s", sep, (int)(dots - a),
                                      a);
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

static kyi_cfg_t *get(kyi_setting_t id)
{
    if ((unsigned)id >= KYI_SET_COUNT) kyi_fatal("internal: setting index %d is not in the table", (int)id);
    kyi_config_load();
    return &kyi_cfg[id];
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0) return -1;
    while (isspace((unsigned char)*end)) end++;
    switch (toupper((unsigned char)*end)) {
        case 'K':
            v *= 1024.0;
            break;
        case 'M':
            v *= 1024.0 * 1024;
            break;
        case 'G':
            v *= 1024.0 * 1024 * 1024;
            break;
        case 0:
            break;
        default:
            return -1;
    }
    *out = (size_t)v;
    return 0;
}

/* load_once checked every value against its type, so these parses cannot fail (a default that does not
 * parse is caught by the settings tests). */
long kyi_setting_long(kyi_setting_t id)
{
    return strtol(get(id)->value, NULL, 0);
}

long kyi_setting_long_once(kyi_setting_t id, long *slot)
{
    long v = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (v == KYI_CONFIG_UNREAD) {
        v = kyi_setting_long(id);
        __atomic_store_n(slot, v, __ATOMIC_RELAXED);
    }
    return v;
}

double kyi_setting_double(kyi_setting_t id)
{
    return strtod(get(id)->value, NULL);
}

size_t kyi_setting_size(kyi_setting_t id)
{
    size_t v = 0;
    parse_size(get(id)->value, &v);
    return v;
}

const char *kyi_setting_str(kyi_setting_t id)
{
    return get(id)->value;
}

const char *kyi_setting_name(kyi_setting_t id)
{
    return get(id)->name;
}

int kyi_setting_is(kyi_setting_t id, const char *word)
{
    const kyi_cfg_t *c = get(id);
    if (!c->allowed || !allowed_one(c->allowed, word, strlen(word)))
        kyi_fatal("internal: %s is compared with \"%s\", a value it does not allow (%s)", c->name, word,
                  c->allowed ? c->allowed : "any");
    return !strcmp(c->value, word);
}

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
        if (!strncmp(name, "KY_TEST_", 8) || !strncmp(name, "KY_BENCH_", 9))
            continue; /* tests' and benchmarks' own */
        if (!find(name))
            KYI_WARN(KYI_SUB_RUNTIME,
                     "unknown setting %s in the environment is ignored (kyrun --info lists them all)", name);
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
                c->bad ? "; the environment's value is not allowed"
                : set  ? ", set in environment"
                       : "",
                c->doc);
        if (c->bad) {
            char allowed[512];
            describe_allowed(c, allowed, sizeof allowed);
            fprintf(out, "    ignored: %s=%s is not %s\n", c->name, c->bad, allowed);
        }
    }
    return KY_OK;
}
