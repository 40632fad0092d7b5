/* The table behind KY_IO_PATH=auto: which path moved GPU memory to and from files fastest on this machine,
 * per file-system type, direction and size, as `kybench io-tune` measured it (docs/io.md, "Tuning"). The file
 * KY_IO_TABLE names is plain text, one row per measured point:
 *
 *   # kyoyu-io-table 1 ...                      comments
 *   ext4 write 4194304 1.92 2.71                file system, direction, bytes per rank, bounce GB/s, cufile
 * GB/s
 *
 * ("-" for a path that was not measured; "*" as the file system: rows for any file system without rows of its
 * own). A request of B bytes takes the row of the largest size <= B (the smallest row below them all), and
 * the path with the higher rate there. Read once per process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "runtime/config.h"
#include "runtime/log.h"

typedef struct {
    char fs[32];
    int put;
    size_t bytes;
    double bounce, cufile; /* GB/s, < 0: not measured */
} row_t;

static row_t *rows;
static size_t nrows;
static int loaded;
static char load_note[200];

static double rate(const char *s)
{
    return strcmp(s, "-") == 0 ? -1.0 : atof(s);
}

static void load(void)
{
    loaded = 1;
    const char *name = kyi_setting_str(KYI_SET_IO_TABLE);
    if (!name || !*name) {
        snprintf(load_note, sizeof load_note, "no KY_IO_TABLE");
        return;
    }
    FILE *fp = fopen(name, "r");
    if (!fp) {
        KYI_WARN(KYI_SUB_IO,
                 "KY_IO_TABLE=%s cannot be read: the io layer's auto path uses its built-in threshold", name);
        snprintf(load_note, sizeof load_note, "KY_IO_TABLE %s unreadable", name);
        return;
    }
    char line[512];
    size_t cap = 0, lineno = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        char fs[32], dir[16], b[32], c[32];
        unsigned long long bytes;
        if (line[0] == '#' || line[0] == '\n') continue;
        if (sscanf(line, "%31s %15s %llu %31s %31s", fs, dir, &bytes, b, c) != 5 ||
            (strcmp(dir, "write") && strcmp(dir, "read"))) {
            KYI_WARN(KYI_SUB_IO,
                     "KY_IO_TABLE=%s line %zu is not 'fs write|read bytes bounce_GBs cufile_GBs': left out",
                     name, lineno);
            continue;
        }
        if (nrows == cap) {
            cap = cap ? 2 * cap : 64;
            row_t *r = realloc(rows, cap * sizeof *r);
            if (!r) break;
            rows = r;
        }
        row_t *r = &rows[nrows++];
        snprintf(r->fs, sizeof r->fs, "%s", fs);
        r->put = strcmp(dir, "write") == 0;
        r->bytes = (size_t)bytes;
        r->bounce = rate(b);
        r->cufile = rate(c);
    }
    fclose(fp);
    snprintf(load_note, sizeof load_note, "KY_IO_TABLE %s", name);
    KYI_INFO(KYI_SUB_IO, "KY_IO_TABLE=%s: %zu rows", name, nrows);
}

/* The row for `bytes` among the rows of file system `fs` ("*": rows for any file system) */
static const row_t *pick(const char *fs, int put, size_t bytes)
{
    const row_t *best = NULL, *smallest = NULL;
    for (size_t i = 0; i < nrows; i++) {
        const row_t *r = &rows[i];
        if (r->put != put || strcmp(r->fs, fs) != 0) continue;
        if (!smallest || r->bytes < smallest->bytes) smallest = r;
        if (r->bytes <= bytes && (!best || r->bytes > best->bytes)) best = r;
    }
    return best ? best : smallest;
}

int kyi_io_table_choose(const char *fs, int put, size_t bytes, char *why, size_t len)
{
    if (!loaded) load();
    const row_t *best = pick(fs, put, bytes);
    if (!best) best = pick("*", put, bytes);
    if (!best || (best->bounce < 0 && best->cufile < 0)) {
        snprintf(why, len, "%s: no row for %s %s", load_note, fs, put ? "writes" : "reads");
        return -1;
    }
    int cufile = best->cufile > best->bounce;
    snprintf(why, len, "%s: %s %s %zu bytes: bounce %.2f, cufile %.2f GB/s", load_note, best->fs,
             put ? "write" : "read", best->bytes, best->bounce, best->cufile);
    return cufile ? KYI_IO_CUFILE : KYI_IO_BOUNCE;
}
