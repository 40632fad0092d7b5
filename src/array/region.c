/* Region get/put: a global box [lo, hi) moved between the caller's dense buffer and the blocks that own
 * it. Along each dimension the box is cut into runs, each inside one part (one run per part on a block
 * dimension, one per cyclic block on a cyclic one); every combination of runs is one box in one owner's
 * block and becomes one non-blocking strided transfer. Transfers are issued in batches and completed. */
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "runtime/log.h"

typedef struct {
    int part;       /* part index along the dimension */
    size_t g, l, n; /* global start, local start in the part, length */
} run_t;

enum { BATCH = 64 };

/* Runs of [lo, hi) along d; *out is malloc'ed. */
static int cut(const char *call, const struct kyi_array *a, int d, size_t lo, size_t hi, run_t **out,
               size_t *nout)
{
    size_t cap = 8, n = 0;
    run_t *r = malloc(cap * sizeof *r);
    if (!r) return kyi_fail(KY_ERR_NOMEM, call, "no memory");
    for (size_t g = lo; g < hi;) {
        size_t l;
        int i = kyi_adist_part(a, d, g, &l);
        size_t end;
        if (a->kind[d] == KY_DIST_BLOCK)
            end = kyi_adist_lo(a, d, i) + kyi_adist_extent(a, d, i);
        else
            end = (g / a->bsize[d] + 1) * a->bsize[d];
        if (end > hi) end = hi;
        if (n == cap) {
            run_t *t = realloc(r, 2 * cap * sizeof *r);
            if (!t) {
                free(r);
                return kyi_fail(KY_ERR_NOMEM, call, "no memory");
            }
            r = t;
            cap *= 2;
        }
        r[n++] = (run_t){i, g, l, end - g};
        g = end;
    }
    *out = r;
    *nout = n;
    return KY_OK;
}

int kyi_array_region(const char *call, ky_array_t a, const size_t lo[], const size_t hi[], void *buf, int put)
{
    KYI_CHECK(kyi_array_check(call, a));
    if (!lo || !hi) return kyi_fail(KY_ERR_ARG, call, "%s is NULL", !lo ? "lo" : "hi");
    size_t total = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (lo[d] > hi[d] || hi[d] > a->dims[d])
            return kyi_fail(KY_ERR_RANGE, call, "box [%zu, %zu) is not inside dimension %d (%zu elements)",
                            lo[d], hi[d], d, a->dims[d]);
        total *= hi[d] - lo[d];
    }
    if (total == 0) return KY_OK;
    if (!buf) return kyi_fail(KY_ERR_ARG, call, "buf is NULL");
    /* The caller's dense buffer: element strides U. */
    size_t U[KY_ARRAY_MAX_DIMS];
    size_t s = 1;
    for (int d = a->ndim - 1; d >= 0; d--) {
        U[d] = s;
        s *= hi[d] - lo[d];
    }

    run_t *runs[KY_ARRAY_MAX_DIMS] = {0};
    size_t nr[KY_ARRAY_MAX_DIMS] = {0}, at[KY_ARRAY_MAX_DIMS] = {0};
    int st = KY_OK;
    for (int d = 0; d < a->ndim && !st; d++) st = cut(call, a, d, lo[d], hi[d], &runs[d], &nr[d]);
    ky_handle_t hs[BATCH];
    int nh = 0;
    while (!st) {
        /* one combination of runs: its part, its box in the owner's block and in the buffer */
        int c[KY_ARRAY_MAX_DIMS];
        size_t cnt[KY_ARRAY_MAX_DIMS], boff = 0, roff = 0;
        for (int d = 0; d < a->ndim; d++) {
            const run_t *r = &runs[d][at[d]];
            c[d] = r->part;
            cnt[d] = r->n;
            boff += (r->g - lo[d]) * U[d];
        }
        int part = kyi_adist_part_of(a, c), rank, k;
        kyi_adist_home(a, part, &rank, &k);
        size_t E[KY_ARRAY_MAX_DIMS], S[KY_ARRAY_MAX_DIMS];
        kyi_adist_geom(a, part, NULL, E, S);
        for (int d = 0; d < a->ndim; d++) roff += (runs[d][at[d]].l + (size_t)a->halo[d]) * S[d];
        size_t count[4], bs[3], rs[3];
        int levels = kyi_abox_strided(a->ndim, cnt, U, S, a->elem, count, bs, rs);
        if (levels < 0) {
            st = kyi_fail(KY_ERR_INTERNAL, call, "box needs more than 3 strided levels");
            break;
        }
        char *p = (char *)buf + boff * a->elem;
        st = put ? ky_put_strided_nb(rank, a->seg[k], roff * a->elem, rs, p, bs, count, levels, &hs[nh])
                 : ky_get_strided_nb(p, bs, rank, a->seg[k], roff * a->elem, rs, count, levels, &hs[nh]);
        if (st) break;
        if (++nh == BATCH) {
            st = ky_wait_all(hs, (size_t)nh);
            nh = 0;
        }
        /* next combination (odometer, last dimension fastest) */
        int d = a->ndim - 1;
        while (d >= 0 && ++at[d] == nr[d]) at[d--] = 0;
        if (d < 0) break;
    }
    int w = ky_wait_all(hs, (size_t)nh);
    if (!st) st = w;
    for (int d = 0; d < a->ndim; d++) free(runs[d]);
    return st;
}

int ky_array_get(ky_array_t a, const size_t lo[], const size_t hi[], void *buf)
{
    return kyi_array_region("ky_array_get", a, lo, hi, buf, 0);
}

int ky_array_put(ky_array_t a, const size_t lo[], const size_t hi[], const void *buf)
{
    return kyi_array_region("ky_array_put", a, lo, hi, (void *)buf, 1);
}

/* Global index of linear (row-major) element e. */
static void unflatten(const struct kyi_array *a, size_t e, size_t g[])
{
    for (int d = a->ndim - 1; d >= 0; d--) {
        g[d] = e % a->dims[d];
        e /= a->dims[d];
    }
}

int kyi_array_linear(const char *call, ky_array_t a, size_t e0, size_t e1, void *buf, int put)
{
    /* [e0, e1) as boxes that are dense in row-major order: fixed indices in the dimensions above d, a
     * range along d, every index below. Taking the outermost d at which e0 is aligned gives at most two
     * boxes per dimension. */
    size_t inner[KY_ARRAY_MAX_DIMS];
    inner[a->ndim - 1] = 1;
    for (int d = a->ndim - 2; d >= 0; d--) inner[d] = inner[d + 1] * a->dims[d + 1];
    char *p = buf;
    while (e0 < e1) {
        size_t g[KY_ARRAY_MAX_DIMS], lo[KY_ARRAY_MAX_DIMS], hi[KY_ARRAY_MAX_DIMS], k = 0;
        unflatten(a, e0, g);
        int d = 0;
        for (; d < a->ndim; d++) {
            if (e0 % inner[d]) continue;
            k = (e1 - e0) / inner[d];
            if (k > a->dims[d] - g[d]) k = a->dims[d] - g[d];
            if (k) break;
        }
        for (int j = 0; j < a->ndim; j++) {
            lo[j] = j < d ? g[j] : j == d ? g[d] : 0;
            hi[j] = j < d ? g[j] + 1 : j == d ? g[d] + k : a->dims[j];
        }
        KYI_CHECK(kyi_array_region(call, a, lo, hi, p, put));
        p += k * inner[d] * a->elem;
        e0 += k * inner[d];
    }
    return KY_OK;
}

/* Where element e lives: its owner, segment and byte offset in the owner's block. */
static void elem_place(const struct kyi_array *a, size_t e, int *rank, ky_seg_t *seg, size_t *off)
{
    size_t g[KY_ARRAY_MAX_DIMS], l[KY_ARRAY_MAX_DIMS], E[KY_ARRAY_MAX_DIMS], S[KY_ARRAY_MAX_DIMS], o = 0;
    int c[KY_ARRAY_MAX_DIMS], k;
    unflatten(a, e, g);
    for (int d = 0; d < a->ndim; d++) c[d] = kyi_adist_part(a, d, g[d], &l[d]);
    int part = kyi_adist_part_of(a, c);
    kyi_adist_home(a, part, rank, &k);
    kyi_adist_geom(a, part, NULL, E, S);
    for (int d = 0; d < a->ndim; d++) o += (l[d] + (size_t)a->halo[d]) * S[d];
    *seg = a->seg[k];
    *off = o * a->elem;
}

int kyi_array_elem_bytes(ky_array_t a, size_t e, size_t b, size_t n, void *buf, int put)
{
    int rank;
    ky_seg_t seg;
    size_t off;
    elem_place(a, e, &rank, &seg, &off);
    return put ? ky_put(rank, seg, off + b, buf, n) : ky_get(buf, rank, seg, off + b, n);
}

int kyi_array_elem_owner(const struct kyi_array *a, size_t e)
{
    size_t g[KY_ARRAY_MAX_DIMS];
    int rank = -1, k;
    unflatten(a, e, g);
    return ky_array_owner((ky_array_t)a, g, &rank, &k) == KY_OK ? rank : -1;
}
