/* Distribution arithmetic of arrays: which part owns an index along a dimension, part extents, local <->
 * global indices, the grid of parts, and boxes as comm strided transfers. Pure functions of the array's
 * description, so every rank computes the same answers without communicating. */
#include "array/array.h"

size_t kyi_adist_lo(const struct kyi_array *a, int d, int i)
{
    /* balanced block: part i starts at floor(i*n/P); 128-bit free because n*P < 2^64 is checked at create */
    return (size_t)i * a->dims[d] / (size_t)a->parts[d];
}

size_t kyi_adist_extent(const struct kyi_array *a, int d, int i)
{
    size_t n = a->dims[d], P = (size_t)a->parts[d];
    if (a->kind[d] == KY_DIST_BLOCK) return kyi_adist_lo(a, d, i + 1) - kyi_adist_lo(a, d, i);
    size_t b = a->bsize[d], cyc = b * P;
    size_t full = n / cyc * b, rem = n % cyc, start = (size_t)i * b;
    size_t tail = rem > start ? rem - start : 0;
    return full + (tail < b ? tail : b);
}

int kyi_adist_part(const struct kyi_array *a, int d, size_t g, size_t *local)
{
    size_t P = (size_t)a->parts[d];
    if (a->kind[d] == KY_DIST_BLOCK) {
        int i = (int)(g * P / a->dims[d]);
        while (i + 1 < (int)P && kyi_adist_lo(a, d, i + 1) <= g) i++;
        while (i > 0 && kyi_adist_lo(a, d, i) > g) i--;
        if (local) *local = g - kyi_adist_lo(a, d, i);
        return i;
    }
    size_t b = a->bsize[d];
    if (local) *local = g / (b * P) * b + g % b;
    return (int)(g / b % P);
}

size_t kyi_adist_global(const struct kyi_array *a, int d, int i, size_t l)
{
    if (a->kind[d] == KY_DIST_BLOCK) return kyi_adist_lo(a, d, i) + l;
    size_t b = a->bsize[d], P = (size_t)a->parts[d];
    return l / b * (b * P) + (size_t)i * b + l % b;
}

int kyi_adist_part_of(const struct kyi_array *a, const int coord[])
{
    int p = 0;
    for (int d = 0; d < a->ndim; d++) p = p * a->parts[d] + coord[d];
    return p;
}

void kyi_adist_coord(const struct kyi_array *a, int part, int coord[])
{
    for (int d = a->ndim - 1; d >= 0; d--) {
        coord[d] = part % a->parts[d];
        part /= a->parts[d];
    }
}

void kyi_adist_home(const struct kyi_array *a, int part, int *rank, int *k)
{
    if (rank) *rank = a->first + part / a->bpr;
    if (k) *k = part % a->bpr;
}

void kyi_adist_geom(const struct kyi_array *a, int part, size_t n[], size_t E[], size_t S[])
{
    int c[KY_ARRAY_MAX_DIMS];
    size_t nn[KY_ARRAY_MAX_DIMS], EE[KY_ARRAY_MAX_DIMS];
    kyi_adist_coord(a, part, c);
    for (int d = 0; d < a->ndim; d++) {
        nn[d] = kyi_adist_extent(a, d, c[d]);
        EE[d] = nn[d] + 2 * (size_t)a->halo[d];
        if (n) n[d] = nn[d];
        if (E) E[d] = EE[d];
    }
    if (S) {
        size_t s = 1;
        for (int d = a->ndim - 1; d >= 0; d--) {
            S[d] = s;
            s *= EE[d];
        }
    }
}

int kyi_abox_strided(int ndim, const size_t counts[], const size_t sS[], const size_t dS[], size_t elem,
                     size_t count[4], size_t ss[3], size_t ds[3])
{
    /* lv[0] is the contiguous run (element strides 1 on both sides), lv[1..] outer levels. */
    size_t c[KY_ARRAY_MAX_DIMS + 1], s[KY_ARRAY_MAX_DIMS + 1], t[KY_ARRAY_MAX_DIMS + 1];
    int top = 0;
    c[0] = 1;
    s[0] = t[0] = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (counts[d] == 1) continue;
        if (c[top] == 1 && top > 0) { /* a level that holds one block: replace it */
            c[top] = counts[d];
            s[top] = sS[d];
            t[top] = dS[d];
            continue;
        }
        if (s[top] * c[top] == sS[d] && t[top] * c[top] == dS[d]) {
            c[top] *= counts[d]; /* contiguous continuation on both sides */
            continue;
        }
        top++;
        c[top] = counts[d];
        s[top] = sS[d];
        t[top] = dS[d];
    }
    if (top > 3) return -1;
    count[0] = c[0] * elem;
    for (int i = 1; i <= top; i++) {
        count[i] = c[i];
        ss[i - 1] = s[i] * elem;
        ds[i - 1] = t[i] * elem;
    }
    return top;
}
