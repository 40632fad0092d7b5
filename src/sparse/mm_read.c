/* Matrix Market reader. Every rank parses the whole file (the seed's matrices are a few million entries)
 * and keeps its own rows, so every rank finds the same problem in a bad file and reports it with the file,
 * the line and the cause; the ranks then agree on the status, so nobody waits for a rank that gave up. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime/log.h"
#include "runtime/runtime.h"
#include "sparse/sparse.h"

typedef struct {
    int64_t *i, *j;
    double *v;
    int64_t *line;
    int64_t n, cap;
} entries_t;

static const char *CALL = "ky_csr_read_mm";

static int entries_push(entries_t *e, int64_t i, int64_t j, double v, int64_t line)
{
    if (e->n == e->cap) {
        int64_t c = e->cap ? 2 * e->cap : 1024;
        int64_t *ni = realloc(e->i, sizeof(int64_t) * (size_t)c),
                *nj = ni ? realloc(e->j, sizeof(int64_t) * (size_t)c) : NULL;
        if (ni) e->i = ni;
        if (nj) e->j = nj;
        double *nv = nj ? realloc(e->v, sizeof(double) * (size_t)c) : NULL;
        if (nv) e->v = nv;
        int64_t *nl = nv ? realloc(e->line, sizeof(int64_t) * (size_t)c) : NULL;
        if (nl) e->line = nl;
        if (!nl) return kyi_fail(KY_ERR_NOMEM, CALL, "%lld entries", (long long)c);
        e->cap = c;
    }
    e->i[e->n] = i;
    e->j[e->n] = j;
    e->v[e->n] = v;
    e->line[e->n] = line;
    e->n++;
    return KY_OK;
}

static void entries_free(entries_t *e)
{
    free(e->i);
    free(e->j);
    free(e->v);
    free(e->line);
}

static int blank_or_comment(const char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    return *s == 0 || *s == '%';
}

/* Parse the banner (line 1, already read). symmetric: 0 general, 1 symmetric. */
static int parse_banner(const char *file, char *ln, int *symmetric)
{
    char obj[64] = "", fmt[64] = "", field[64] = "", sym[64] = "";
    int k = sscanf(ln, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym);
    if (k < 4)
        return kyi_fail(
            KY_ERR_ARG, CALL,
            "%s:1: malformed banner (want %%%%MatrixMarket matrix coordinate real general|symmetric)", file);
    if (strcasecmp(obj, "matrix") != 0)
        return kyi_fail(KY_ERR_ARG, CALL, "%s:1: object '%s' is not a matrix", file, obj);
    if (strcasecmp(fmt, "coordinate") != 0)
        return kyi_fail(KY_ERR_ARG, CALL, "%s:1: format '%s' not supported (coordinate only)", file, fmt);
    if (strcasecmp(field, "real") != 0 && strcasecmp(field, "integer") != 0 &&
        strcasecmp(field, "double") != 0)
        return kyi_fail(KY_ERR_ARG, CALL,
                        "%s:1: field '%s' not supported (real or integer only: CG needs real values)", file,
                        field);
    if (strcasecmp(sym, "general") == 0)
        *symmetric = 0;
    else if (strcasecmp(sym, "symmetric") == 0)
        *symmetric = 1;
    else
        return kyi_fail(KY_ERR_ARG, CALL, "%s:1: symmetry '%s' not supported (general or symmetric only)",
                        file, sym);
    return KY_OK;
}

static int parse_file(const char *file, entries_t *e, int64_t *n_out, int *sym_out)
{
    FILE *f = fopen(file, "r");
    if (!f) return kyi_fail(KY_ERR_ARG, CALL, "%s: cannot open: %s", file, strerror(errno));
    static __thread char iobuf[1 << 16];
    setvbuf(f, iobuf, _IOFBF, sizeof iobuf);
    char *ln = NULL;
    size_t cap = 0;
    int64_t line = 0, m = -1, n = -1, nnz = -1, got = 0;
    int st = KY_OK, sym = 0, have_size = 0;
    while (st == KY_OK && getline(&ln, &cap, f) >= 0) {
        line++;
        if (line == 1 && strncmp(ln, "%%MatrixMarket", 14) == 0) {
            st = parse_banner(file, ln, &sym);
            continue;
        }
        if (blank_or_comment(ln)) continue;
        char *p = ln, *q;
        if (!have_size) {
            errno = 0;
            m = strtoll(p, &q, 10);
            if (q != p) {
                p = q;
                n = strtoll(p, &q, 10);
            }
            if (q != p) {
                p = q;
                nnz = strtoll(p, &q, 10);
            }
            if (q == p || errno || m < 0 || n < 0 || nnz < 0) {
                st = kyi_fail(KY_ERR_ARG, CALL, "%s:%lld: malformed size line (want 'rows cols entries')",
                              file, (long long)line);
                break;
            }
            while (*q && isspace((unsigned char)*q)) q++;
            if (*q) {
                st =
                    kyi_fail(KY_ERR_ARG, CALL, "%s:%lld: unexpected text after the size line's three numbers",
                             file, (long long)line);
                break;
            }
            if (m != n) {
                st = kyi_fail(KY_ERR_ARG, CALL, "%s:%lld: matrix is %lld x %lld, not square", file,
                              (long long)line, (long long)m, (long long)n);
                break;
            }
            have_size = 1;
            continue;
        }
        errno = 0;
        int64_t i = strtoll(p, &q, 10), j = 0;
        double v = 0;
        int ok = q != p;
        if (ok) {
            p = q;
            j = strtoll(p, &q, 10);
            ok = q != p;
        }
        if (ok) {
            p = q;
            v = strtod(p, &q);
            ok = q != p;
        }
        if (ok) {
            while (*q && isspace((unsigned char)*q)) q++;
            ok = *q == 0;
        }
        if (!ok || errno == EINVAL) {
            st = kyi_fail(KY_ERR_ARG, CALL, "%s:%lld: malformed entry (want 'row col value')", file,
                          (long long)line);
            break;
        }
        if (i < 1 || i > n || j < 1 || j > n) {
            st = kyi_fail(KY_ERR_ARG, CALL, "%s:%lld: index (%lld, %lld) out of range 1..%lld", file,
                          (long long)line, (long long)i, (long long)j, (long long)n);
            break;
        }
        if (got == nnz) {
            st = kyi_fail(KY_ERR_ARG, CALL, "%s:%lld: more entries than the %lld the size line declares",
                          file, (long long)line, (long long)nnz);
            break;
        }
        got++;
        st = entries_push(e, i - 1, j - 1, v, line);
    }
    if (st == KY_OK && ferror(f))
        st = kyi_fail(KY_ERR_ARG, CALL, "%s:%lld: read error: %s", file, (long long)line, strerror(errno));
    if (st == KY_OK && !have_size)
        st = kyi_fail(KY_ERR_ARG, CALL, "%s:%lld: no size line (empty or truncated file)", file,
                      (long long)line);
    if (st == KY_OK && got < nnz)
        st = kyi_fail(KY_ERR_ARG, CALL,
                      "%s:%lld: file ends after %lld of the %lld entries declared (truncated)", file,
                      (long long)line, (long long)got, (long long)nnz);
    free(ln);
    fclose(f);
    *n_out = n;
    *sym_out = sym;
    return st;
}

static const entries_t *g_sort;
static int cmp_mirror(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    int64_t xi = g_sort->i[x] > g_sort->j[x] ? g_sort->i[x] : g_sort->j[x],
            xj = g_sort->i[x] ^ g_sort->j[x] ^ xi;
    int64_t yi = g_sort->i[y] > g_sort->j[y] ? g_sort->i[y] : g_sort->j[y],
            yj = g_sort->i[y] ^ g_sort->j[y] ^ yi;
    if (xi != yi) return xi < yi ? -1 : 1;
    if (xj != yj) return xj < yj ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int same_pair(const entries_t *e, int64_t x, int64_t y)
{
    int64_t xa = e->i[x] > e->j[x] ? e->i[x] : e->j[x], xb = e->i[x] + e->j[x] - xa;
    int64_t ya = e->i[y] > e->j[y] ? e->i[y] : e->j[y], yb = e->i[y] + e->j[y] - ya;
    return xa == ya && xb == yb;
}

/* A symmetric file normally stores one triangle. One storing both must store each pair with one value;
 * then one copy of every pair is dropped (marked i = -1). */
static int check_symmetric(const char *file, entries_t *e)
{
    int64_t lower = 0, upper = 0;
    for (int64_t k = 0; k < e->n; k++) {
        if (e->i[k] > e->j[k])
            lower++;
        else if (e->i[k] < e->j[k])
            upper++;
    }
    if (lower == 0 || upper == 0) return KY_OK;
    int64_t *ord = malloc(sizeof(int64_t) * (size_t)e->n);
    if (!ord) return kyi_fail(KY_ERR_NOMEM, CALL, "symmetry check");
    int64_t m = 0;
    for (int64_t k = 0; k < e->n; k++)
        if (e->i[k] != e->j[k]) ord[m++] = k;
    g_sort = e;
    qsort(ord, (size_t)m, sizeof *ord, cmp_mirror);
    int st = KY_OK;
    for (int64_t a = 0; a < m && st == KY_OK;) {
        int64_t b = a + 1, x = ord[a];
        while (b < m && same_pair(e, x, ord[b])) b++;
        int64_t y = b - a == 2 ? ord[a + 1] : -1;
        if (y >= 0 && e->i[y] == e->j[x]) {
            if (e->v[x] != e->v[y])
                st = kyi_fail(KY_ERR_ARG, CALL,
                              "%s:%lld: declared symmetric but (%lld, %lld) = %g here and (%lld, %lld) = %g "
                              "at line %lld",
                              file, (long long)e->line[y], (long long)e->i[y] + 1, (long long)e->j[y] + 1,
                              e->v[y], (long long)e->i[x] + 1, (long long)e->j[x] + 1, e->v[x],
                              (long long)e->line[x]);
            else
                e->i[e->i[y] < e->j[y] ? y : x] = -1; /* keep the lower copy */
        } else if (b - a == 1) {
            st = kyi_fail(KY_ERR_ARG, CALL,
                          "%s:%lld: declared symmetric but (%lld, %lld) has no mirror entry (the file stores "
                          "both triangles)",
                          file, (long long)e->line[x], (long long)e->i[x] + 1, (long long)e->j[x] + 1);
        } else {
            st = kyi_fail(
                KY_ERR_ARG, CALL,
                "%s:%lld: declared symmetric but (%lld, %lld) appears %lld times counting its mirror", file,
                (long long)e->line[ord[b - 1]], (long long)e->i[x] + 1, (long long)e->j[x] + 1,
                (long long)(b - a));
        }
        a = b;
    }
    free(ord);
    return st;
}

/* Own rows as CSR: columns sorted, duplicates summed. */
static int own_rows(entries_t *e, int64_t n, int sym, int part, kyi_rows_t *rows)
{
    int p = kyi_rt.nranks, me = kyi_rt.rank;
    int64_t *cnt = calloc((size_t)n + 1, sizeof *cnt), *starts = malloc(sizeof(int64_t) * ((size_t)p + 1));
    if (!cnt || !starts) {
        free(cnt);
        free(starts);
        return kyi_fail(KY_ERR_NOMEM, CALL, "row counts");
    }
    for (int64_t k = 0; k < e->n; k++) {
        if (e->i[k] < 0) continue;
        cnt[e->i[k]]++;
        if (sym && e->i[k] != e->j[k]) cnt[e->j[k]]++;
    }
    kyi_sp_partition(n, cnt, part, p, starts);
    int64_t lo = starts[me], hi = starts[me + 1], nl = hi - lo;
    free(starts);
    rows->n = n;
    rows->row_lo = lo;
    rows->row_hi = hi;
    rows->rowptr = calloc((size_t)nl + 1, sizeof(int64_t));
    int64_t tot = 0;
    for (int64_t r = lo; r < hi; r++) tot += cnt[r];
    rows->col = malloc(sizeof(int64_t) * (size_t)(tot + 1));
    rows->val = malloc(sizeof(double) * (size_t)(tot + 1));
    int64_t *fill = calloc((size_t)nl + 1, sizeof(int64_t));
    if (!rows->rowptr || !rows->col || !rows->val || !fill) {
        free(cnt);
        free(fill);
        return kyi_fail(KY_ERR_NOMEM, CALL, "%lld local entries", (long long)tot);
    }
    for (int64_t r = 0; r < nl; r++) rows->rowptr[r + 1] = rows->rowptr[r] + cnt[lo + r];
    free(cnt);
    for (int64_t k = 0; k < e->n; k++) {
        int64_t i = e->i[k], j = e->j[k];
        if (i < 0) continue;
        for (int t = 0; t < 1 + (sym && i != j); t++) {
            int64_t r = t ? j : i, c = t ? i : j;
            if (r < lo || r >= hi) continue;
            int64_t at = rows->rowptr[r - lo] + fill[r - lo]++;
            rows->col[at] = c;
            rows->val[at] = e->v[k];
        }
    }
    free(fill);
    /* sort each row by column (insertion sort: rows are short and mostly sorted) and sum duplicates */
    int64_t w = 0;
    for (int64_t r = 0; r < nl; r++) {
        int64_t a = rows->rowptr[r], b = rows->rowptr[r + 1];
        for (int64_t x = a + 1; x < b; x++) {
            int64_t c = rows->col[x];
            double v = rows->val[x];
            int64_t y = x - 1;
            while (y >= a && rows->col[y] > c) {
                rows->col[y + 1] = rows->col[y];
                rows->val[y + 1] = rows->val[y];
                y--;
            }
            rows->col[y + 1] = c;
            rows->val[y + 1] = v;
        }
        rows->rowptr[r] = w;
        for (int64_t x = a; x < b; x++) {
            if (w > rows->rowptr[r] && rows->col[w - 1] == rows->col[x])
                rows->val[w - 1] += rows->val[x];
            else {
                rows->col[w] = rows->col[x];
                rows->val[w] = rows->val[x];
                w++;
            }
        }
    }
    rows->rowptr[nl] = w;
    return KY_OK;
}

int ky_csr_read_mm(const char *file, const ky_csr_opts_t *opts, ky_csr_t *out)
{
    KYI_CHECK(kyi_require_init(CALL));
    if (!out) return kyi_fail(KY_ERR_ARG, CALL, "out is NULL");
    *out = NULL;
    entries_t e = {0};
    kyi_rows_t rows = {0};
    int64_t n = 0;
    int sym = 0, st = KY_OK;
    if (!file) st = kyi_fail(KY_ERR_ARG, CALL, "file is NULL");
    if (st == KY_OK) st = parse_file(file, &e, &n, &sym);
    if (st == KY_OK && sym) st = check_symmetric(file, &e);
    if (st == KY_OK) st = own_rows(&e, n, sym, opts ? opts->part : KY_PART_ROWS, &rows);
    entries_free(&e);
    st = kyi_sp_agree(CALL, st);
    if (st != KY_OK) {
        free(rows.rowptr);
        free(rows.col);
        free(rows.val);
        return st;
    }
    return kyi_sp_from_rows(CALL, &rows, opts, out);
}
