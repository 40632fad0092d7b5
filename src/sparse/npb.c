/* NPB CG: the matrix of its makea (sum of random sparse outer products with geometrically decreasing
 * weights, diagonal shifted by rcond - shift) and its benchmark (niter inverse-power steps of 25 CG
 * iterations each), verified against NPB's zeta values. The generator replays NPB's random stream on every
 * rank (it is sequential) and keeps the triplets of the rank's rows; duplicates are summed in the order NPB
 * sums them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/log.h"
#include "runtime/runtime.h"
#include "sparse/sparse.h"

static const ky_npb_class_t classes[] = {
    {'S', 1400, 7, 15, 10.0, 8.5971775078648},     {'W', 7000, 8, 15, 12.0, 10.362595087124},
    {'A', 14000, 11, 15, 20.0, 17.130235054029},   {'B', 75000, 13, 75, 60.0, 22.712745482631},
    {'C', 150000, 15, 75, 110.0, 28.973605592845},
};

int ky_npb_class(char c, ky_npb_class_t *out)
{
    for (size_t k = 0; k < sizeof classes / sizeof classes[0]; k++)
        if (classes[k].cls == c || classes[k].cls == c - 'a' + 'A') {
            if (out) *out = classes[k];
            return KY_OK;
        }
    return kyi_fail(KY_ERR_ARG, "ky_npb_class", "unknown NPB class '%c' (S, W, A, B, C)", c);
}

/* NPB's linear congruential generator: x <- 5^13 x mod 2^46, value x / 2^46 (exact in 128-bit integers). */
static double randlc(uint64_t *x)
{
    *x = (uint64_t)(((unsigned __int128)1220703125u * *x) & ((((unsigned __int128)1) << 46) - 1));
    return (double)*x * (1.0 / 70368744177664.0);
}

typedef struct {
    int64_t lo, hi;
    int64_t *cnt; /* pass 1: triplets per row (all rows) */
    int64_t *at;  /* pass 2: next slot per own row */
    int64_t *col;
    double *val;
} sink_t;

static void emit(sink_t *s, int64_t row, int64_t col, double v)
{
    if (s->cnt) {
        s->cnt[row]++;
        return;
    }
    if (row < s->lo || row >= s->hi) return;
    int64_t k = s->at[row - s->lo]++;
    s->col[k] = col;
    s->val[k] = v;
}

/* One replay of makea's triplet stream (0-based rows and columns). */
static int makea(const ky_npb_class_t *c, sink_t *s)
{
    int64_t n = c->na;
    int nonzer = c->nonzer;
    uint64_t tran = 314159265;
    randlc(&tran); /* NPB's main draws zeta once before makea */
    double size = 1.0, ratio = pow(0.1, 1.0 / (double)n);
    int64_t nn1 = 1;
    do nn1 *= 2;
    while (nn1 < n);
    char *mark = calloc((size_t)n + 1, 1);
    int64_t *iv = malloc(sizeof(int64_t) * (size_t)(nonzer + 2));
    double *v = malloc(sizeof(double) * (size_t)(nonzer + 2));
    if (!mark || !iv || !v) {
        free(mark);
        free(iv);
        free(v);
        return KY_ERR_NOMEM;
    }
    for (int64_t iouter = 1; iouter <= n; iouter++) {
        int nzv = 0;
        while (nzv < nonzer) { /* sprnvc: nonzer distinct random positions with random values */
            double vecelt = randlc(&tran), vecloc = randlc(&tran);
            int64_t i = (int64_t)((double)nn1 * vecloc) + 1;
            if (i > n || mark[i]) continue;
            mark[i] = 1;
            v[nzv] = vecelt;
            iv[nzv++] = i;
        }
        for (int k = 0; k < nzv; k++) mark[iv[k]] = 0;
        int set = 0; /* vecset: element iouter becomes 0.5 */
        for (int k = 0; k < nzv; k++)
            if (iv[k] == iouter) {
                v[k] = 0.5;
                set = 1;
            }
        if (!set) {
            v[nzv] = 0.5;
            iv[nzv++] = iouter;
        }
        for (int a = 0; a < nzv; a++) {
            double scale = size * v[a];
            for (int b = 0; b < nzv; b++) emit(s, iv[b] - 1, iv[a] - 1, v[b] * scale);
        }
        size *= ratio;
    }
    for (int64_t i = 0; i < n; i++) emit(s, i, i, 0.1 - c->shift);
    free(mark);
    free(iv);
    free(v);
    return KY_OK;
}

int kyi_sp_gen_npb(const char *call, char cls, int part, kyi_rows_t *rows)
{
    ky_npb_class_t c;
    KYI_CHECK(ky_npb_class(cls, &c));
    int64_t n = c.na;
    int p = kyi_rt.nranks, me = kyi_rt.rank, st;
    sink_t s = {0};
    int64_t *starts = malloc(sizeof(int64_t) * ((size_t)p + 1));
    s.cnt = calloc((size_t)n, sizeof(int64_t));
    if (!starts || !s.cnt) {
        free(starts);
        free(s.cnt);
        return kyi_fail(KY_ERR_NOMEM, call, "NPB row counts");
    }
    if (makea(&c, &s) != KY_OK) {
        free(starts);
        free(s.cnt);
        return kyi_fail(KY_ERR_NOMEM, call, "NPB makea");
    }
    kyi_sp_partition(n, s.cnt, part, p, starts);
    s.lo = starts[me];
    s.hi = starts[me + 1];
    free(starts);
    int64_t nl = s.hi - s.lo, tot = 0;
    int64_t *rp = malloc(sizeof(int64_t) * (size_t)(nl + 1));
    s.at = malloc(sizeof(int64_t) * (size_t)(nl + 1));
    if (!rp || !s.at)
        st = KY_ERR_NOMEM;
    else {
        rp[0] = 0;
        for (int64_t r = 0; r < nl; r++) {
            s.at[r] = rp[r];
            rp[r + 1] = rp[r] + s.cnt[s.lo + r];
        }
        tot = rp[nl];
        s.col = malloc(sizeof(int64_t) * (size_t)(tot + 1));
        s.val = malloc(sizeof(double) * (size_t)(tot + 1));
        free(s.cnt);
        s.cnt = NULL;
        st = s.col && s.val ? makea(&c, &s) : KY_ERR_NOMEM;
    }
    free(s.cnt);
    double *acc = st == KY_OK ? calloc((size_t)n, sizeof(double)) : NULL;
    char *seen = st == KY_OK ? calloc((size_t)n, 1) : NULL;
    int64_t *order = st == KY_OK ? malloc(sizeof(int64_t) * (size_t)n) : NULL;
    if (st != KY_OK || !acc || !seen || !order) {
        free(rp);
        free(s.at);
        free(s.col);
        free(s.val);
        free(acc);
        free(seen);
        free(order);
        return kyi_fail(KY_ERR_NOMEM, call, "NPB class %c: %lld local triplets", c.cls, (long long)tot);
    }
    /* NPB's sparse(): per row, sum duplicates in stream order, keep nonzero sums in first-seen order */
    int64_t w = 0;
    for (int64_t r = 0; r < nl; r++) {
        int64_t m = 0;
        for (int64_t k = rp[r]; k < rp[r + 1]; k++) {
            int64_t j = s.col[k];
            acc[j] += s.val[k];
            if (!seen[j] && acc[j] != 0.0) {
                seen[j] = 1;
                order[m++] = j;
            }
        }
        int64_t start = w;
        for (int64_t t = 0; t < m; t++) {
            int64_t j = order[t];
            if (acc[j] != 0.0) {
                s.col[w] = j;
                s.val[w] = acc[j];
                w++;
            }
            acc[j] = 0.0;
            seen[j] = 0;
        }
        /* columns ascending inside the row (insertion sort: rows hold a few hundred entries) */
        for (int64_t x = start + 1; x < w; x++) {
            int64_t cj = s.col[x];
            double cv = s.val[x];
            int64_t y = x - 1;
            while (y >= start && s.col[y] > cj) {
                s.col[y + 1] = s.col[y];
                s.val[y + 1] = s.val[y];
                y--;
            }
            s.col[y + 1] = cj;
            s.val[y + 1] = cv;
        }
        rp[r] = start;
    }
    rp[nl] = w;
    free(acc);
    free(seen);
    free(order);
    free(s.at);
    rows->n = n;
    rows->row_lo = s.lo;
    rows->row_hi = s.hi;
    rows->rowptr = rp;
    rows->col = s.col;
    rows->val = s.val;
    return KY_OK;
}
