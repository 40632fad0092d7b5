/* Matrix generators: 3-D Poisson (7 and 27 points) and SPD stand-ins with the N and nnz of the seed's six
 * matrices; ky_csr_generate dispatches by name (NPB's makea is in npb.c). Each rank builds only its rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/log.h"
#include "runtime/runtime.h"
#include "sparse/sparse.h"

static int rows_alloc(const char *call, kyi_rows_t *rows, int64_t n, int64_t lo, int64_t hi, int64_t nz)
{
    rows->n = n;
    rows->row_lo = lo;
    rows->row_hi = hi;
    rows->rowptr = calloc((size_t)(hi - lo) + 1, sizeof(int64_t));
    rows->col = malloc(sizeof(int64_t) * (size_t)(nz + 1));
    rows->val = malloc(sizeof(double) * (size_t)(nz + 1));
    if (!rows->rowptr || !rows->col || !rows->val)
        return kyi_fail(KY_ERR_NOMEM, call, "%lld rows, %lld nonzeros", (long long)(hi - lo), (long long)nz);
    return KY_OK;
}

/* ---- Poisson ------------------------------------------------------------------------------------------ */

static int64_t poisson_row_nnz(int64_t m, int points, int64_t i)
{
    int64_t x = i % m, y = (i / m) % m, z = i / (m * m);
    int64_t cx = 1 + (x > 0) + (x < m - 1), cy = 1 + (y > 0) + (y < m - 1), cz = 1 + (z > 0) + (z < m - 1);
    return points == 7 ? cx + cy + cz - 2 : cx * cy * cz;
}

int kyi_sp_gen_poisson(const char *call, int64_t m, int points, int part, kyi_rows_t *rows)
{
    if (m < 1 || m > 2000)
        return kyi_fail(KY_ERR_ARG, call, "poisson grid side %lld not in 1..2000", (long long)m);
    int64_t n = m * m * m;
    int p = kyi_rt.nranks, me = kyi_rt.rank;
    int64_t *starts = malloc(sizeof(int64_t) * ((size_t)p + 1)), *cnt = NULL;
    if (!starts) return kyi_fail(KY_ERR_NOMEM, call, "partition");
    if (part == KY_PART_NNZ) {
        cnt = malloc(sizeof(int64_t) * (size_t)n);
        if (!cnt) {
            free(starts);
            return kyi_fail(KY_ERR_NOMEM, call, "row counts");
        }
        for (int64_t i = 0; i < n; i++) cnt[i] = poisson_row_nnz(m, points, i);
    }
    kyi_sp_partition(n, cnt, part, p, starts);
    free(cnt);
    int64_t lo = starts[me], hi = starts[me + 1], nz = 0;
    free(starts);
    for (int64_t i = lo; i < hi; i++) nz += poisson_row_nnz(m, points, i);
    KYI_CHECK(rows_alloc(call, rows, n, lo, hi, nz));
    int64_t w = 0;
    for (int64_t i = lo; i < hi; i++) {
        int64_t x = i % m, y = (i / m) % m, z = i / (m * m);
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int far = (dx != 0) + (dy != 0) + (dz != 0);
                    if (points == 7 && far > 1) continue;
                    int64_t X = x + dx, Y = y + dy, Z = z + dz;
                    if (X < 0 || X >= m || Y < 0 || Y >= m || Z < 0 || Z >= m) continue;
                    rows->col[w] = (Z * m + Y) * m + X;
                    rows->val[w] = far == 0 ? (points == 7 ? 6.0 : 26.0) : -1.0;
                    w++;
                }
        rows->rowptr[i - lo + 1] = w;
    }
    return KY_OK;
}

/* ---- stand-ins ---------------------------------------------------------------------------------------- */

/* The seed's Table 5 (University of Florida collection): N and nnz. */
static const struct {
    const char *name;
    int64_t n, nnz;
} standins[] = {
    {"nasa2910", 2910, 174296},      {"s1rmq4m1", 5489, 281111}, {"nd3k", 9000, 3279690},
    {"Pres_Poisson", 14822, 715804}, {"nd6k", 18000, 6897316},   {"smt", 25710, 3753184},
};

/* A symmetric off-diagonal value in [-1, -0.1] from the pair (hash), so both triangles agree. */
static double pair_val(int64_t a, int64_t b)
{
    uint64_t h =
        (uint64_t)(a < b ? a : b) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(a < b ? b : a) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return -(0.1 + 0.9 * (double)(h >> 11) / 9007199254740992.0);
}

/* Band of half-width w plus the first `extra` rows of diagonal w+1 (and their mirrors): nnz(w) = N +
 * w(2N - w - 1) + 2 extra hits the seed's count exactly (its nnz - N is even, as for any symmetric matrix
 * with a full diagonal). Diagonal = (1 + 1e-6) sum |off-diagonal|: strictly diagonally dominant, so SPD,
 * with a condition number near 2e6 so CG runs the seed's 1000 iterations without reaching round-off. */
static int64_t standin_row(int64_t n, int64_t w, int64_t extra, int64_t i, int64_t *col, double *val)
{
    int64_t k = 0, d = 0;
    double diag = 1.0;
    if (i - w - 1 >= 0 && i - w - 1 < extra) {
        col[k] = i - w - 1;
        val[k] = pair_val(i, i - w - 1);
        diag -= val[k++];
    }
    for (int64_t j = i - w > 0 ? i - w : 0; j <= i + w && j < n; j++) {
        if (j == i) {
            d = k;
            col[k] = j;
            val[k++] = 0;
            continue;
        }
        col[k] = j;
        val[k] = pair_val(i, j);
        diag -= val[k++];
    }
    if (i < extra) {
        col[k] = i + w + 1;
        val[k] = pair_val(i, i + w + 1);
        diag -= val[k++];
    }
    val[d] = (1.0 + 1e-6) * (diag - 1.0); /* condition number near 2e6, like a real matrix */
    return k;
}

int kyi_sp_gen_standin(const char *call, const char *name, int part, kyi_rows_t *rows)
{
    int which = -1;
    for (size_t s = 0; s < sizeof standins / sizeof standins[0]; s++)
        if (strcmp(name, standins[s].name) == 0) which = (int)s;
    if (which < 0)
        return kyi_fail(KY_ERR_ARG, call,
                        "unknown stand-in '%s' (nasa2910, s1rmq4m1, nd3k, Pres_Poisson, nd6k, smt)", name);
    int64_t n = standins[which].n, target = standins[which].nnz, w = 0;
    while (n + (w + 1) * (2 * n - (w + 1) - 1) <= target) w++;
    int64_t extra = (target - (n + w * (2 * n - w - 1))) / 2;
    int p = kyi_rt.nranks, me = kyi_rt.rank;
    int64_t *starts = malloc(sizeof(int64_t) * ((size_t)p + 1)), *cnt = malloc(sizeof(int64_t) * (size_t)n);
    if (!starts || !cnt) {
        free(starts);
        free(cnt);
        return kyi_fail(KY_ERR_NOMEM, call, "partition");
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t a = i - w > 0 ? i - w : 0, b = i + w < n - 1 ? i + w : n - 1;
        cnt[i] = b - a + 1 + (i < extra) + (i - w - 1 >= 0 && i - w - 1 < extra);
    }
    kyi_sp_partition(n, cnt, part, p, starts);
    int64_t lo = starts[me], hi = starts[me + 1], nz = 0;
    for (int64_t i = lo; i < hi; i++) nz += cnt[i];
    free(starts);
    free(cnt);
    KYI_CHECK(rows_alloc(call, rows, n, lo, hi, nz));
    int64_t at = 0;
    for (int64_t i = lo; i < hi; i++) {
        at += standin_row(n, w, extra, i, rows->col + at, rows->val + at);
        rows->rowptr[i - lo + 1] = at;
    }
    return KY_OK;
}

int ky_csr_generate(const char *spec, const ky_csr_opts_t *opts, ky_csr_t *out)
{
    const char *call = "ky_csr_generate";
    KYI_CHECK(kyi_require_init(call));
    if (!out) return kyi_fail(KY_ERR_ARG, call, "out is NULL");
    *out = NULL;
    kyi_rows_t rows = {0};
    int part = opts ? opts->part : KY_PART_ROWS, st;
    const char *arg = spec ? strchr(spec, ':') : NULL;
    if (!spec || !arg || !arg[1]) {
        st = kyi_fail(KY_ERR_ARG, call, "'%s' is not poisson7:N, poisson27:N, npb:CLASS or standin:NAME",
                      spec ? spec : "(null)");
    } else if (strncmp(spec, "poisson7:", 9) == 0 || strncmp(spec, "poisson27:", 10) == 0) {
        char *end;
        long long m = strtoll(arg + 1, &end, 10);
        st = *end ? kyi_fail(KY_ERR_ARG, call, "'%s': grid side is not a number", spec)
                  : kyi_sp_gen_poisson(call, m, spec[7] == '7' ? 7 : 27, part, &rows);
    } else if (strncmp(spec, "npb:", 4) == 0) {
        st = arg[2] ? kyi_fail(KY_ERR_ARG, call, "'%s': NPB class is one letter (S, W, A, B, C)", spec)
                    : kyi_sp_gen_npb(call, arg[1], part, &rows);
    } else if (strncmp(spec, "standin:", 8) == 0) {
        st = kyi_sp_gen_standin(call, arg + 1, part, &rows);
    } else {
        st = kyi_fail(KY_ERR_ARG, call, "'%s' is not poisson7:N, poisson27:N, npb:CLASS or standin:NAME",
                      spec);
    }
    st = kyi_sp_agree(call, st);
    if (st != KY_OK) {
        free(rows.rowptr);
        free(rows.col);
        free(rows.val);
        return st;
    }
    return kyi_sp_from_rows(call, &rows, opts, out);
}
