/* Distributed arrays: creation (argument checks agreed by every rank, one comm segment per local block
 * index), release, and the queries that need no communication (local blocks, layout, owner, affinity). */
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "runtime/gpu.h"
#include "runtime/log.h"

ky_dist_t ky_dist_block1(void)
{
    ky_dist_t d;
    memset(&d, 0, sizeof d);
    return d; /* all zero: block along dimension 0 over every rank, one block each */
}

int kyi_array_check(const char *call, const struct kyi_array *a)
{
    KYI_CHECK(kyi_require_init(call));
    if (!a) return kyi_fail(KY_ERR_ARG, call, "array is NULL");
    return KY_OK;
}

int kyi_array_check_block(const char *call, const struct kyi_array *a, int k)
{
    KYI_CHECK(kyi_array_check(call, a));
    if (k < 0 || k >= a->nlocal)
        return kyi_fail(KY_ERR_ARG, call, "block %d: this rank has %d local block(s) of the array", k,
                        a->nlocal);
    return KY_OK;
}

/* Fill a's description from the arguments; every error is local (create agrees on them afterwards). */
static int describe(const char *call, struct kyi_array *a, int ndim, const size_t dims[], size_t elem,
                    const ky_dist_t *dist, int place, const int halo[])
{
    if (ndim < 1 || ndim > KY_ARRAY_MAX_DIMS)
        return kyi_fail(KY_ERR_ARG, call, "ndim %d is not in 1..%d", ndim, KY_ARRAY_MAX_DIMS);
    if (!dims) return kyi_fail(KY_ERR_ARG, call, "dims is NULL");
    if (elem < 1 || elem > KYI_ARRAY_MAX_ELEM)
        return kyi_fail(KY_ERR_ARG, call, "element size %zu is not in 1..%d", elem, KYI_ARRAY_MAX_ELEM);
    if (place != KY_PLACE_HOST && place != KY_PLACE_GPU)
        return kyi_fail(KY_ERR_ARG, call, "placement %d is neither KY_PLACE_HOST nor KY_PLACE_GPU", place);
    ky_dist_t dd = dist ? *dist : ky_dist_block1();
    a->ndim = ndim;
    a->elem = elem;
    a->place = place;
    a->first = dd.first;
    a->count = dd.count ? dd.count : kyi_rt.nranks - dd.first;
    a->bpr = dd.blocks_per_rank ? dd.blocks_per_rank : 1;
    if (dd.first < 0 || dd.count < 0 || a->count < 1 || a->first + a->count > kyi_rt.nranks)
        return kyi_fail(KY_ERR_ARG, call, "rank range first %d count %d is not inside 0..%d", dd.first,
                        dd.count, kyi_rt.nranks - 1);
    if (a->bpr < 1 || a->bpr > KYI_ARRAY_MAX_BLOCKS)
        return kyi_fail(KY_ERR_ARG, call, "blocks_per_rank %d is not in 1..%d", dd.blocks_per_rank,
                        KYI_ARRAY_MAX_BLOCKS);
    int any_parts = 0;
    for (int d = 0; d < ndim; d++) any_parts |= dd.parts[d] != 0;
    long total = 1;
    for (int d = 0; d < ndim; d++) {
        a->dims[d] = dims[d];
        a->kind[d] = dd.kind[d];
        a->bsize[d] = dd.bsize[d] ? dd.bsize[d] : 1;
        a->parts[d] = any_parts ? dd.parts[d] : (d == 0 ? a->count * a->bpr : 1);
        a->halo[d] = halo ? halo[d] : 0;
        if (dims[d] == 0 || dims[d] > ((size_t)1 << 40))
            return kyi_fail(KY_ERR_ARG, call, "dims[%d] = %zu is not in 1..2^40", d, dims[d]);
        if (a->kind[d] != KY_DIST_BLOCK && a->kind[d] != KY_DIST_CYCLIC)
            return kyi_fail(KY_ERR_ARG, call,
                            "dimension %d: distribution %d is neither KY_DIST_BLOCK nor KY_DIST_CYCLIC", d,
                            a->kind[d]);
        if (a->parts[d] < 1 || (size_t)a->parts[d] > dims[d])
            return kyi_fail(KY_ERR_ARG, call, "dimension %d: %d parts for %zu elements", d, a->parts[d],
                            dims[d]);
        if (a->halo[d] < 0 || a->halo[d] > KY_ARRAY_MAX_HALO)
            return kyi_fail(KY_ERR_ARG, call, "halo[%d] = %d is not in 0..%d", d, a->halo[d],
                            KY_ARRAY_MAX_HALO);
        if (a->halo[d] > 0 && a->kind[d] == KY_DIST_CYCLIC && a->parts[d] > 1)
            return kyi_fail(KY_ERR_ARG, call,
                            "dimension %d is cyclic over %d parts: halos need a block dimension", d,
                            a->parts[d]);
        total *= a->parts[d];
        if (total > (long)a->count * a->bpr) break;
    }
    if (total != (long)a->count * a->bpr)
        return kyi_fail(KY_ERR_ARG, call,
                        "the grid of parts has %ld parts but %d ranks x %d blocks_per_rank = %d", total,
                        a->count, a->bpr, a->count * a->bpr);
    /* Every part must be at least as wide as the halo, or a neighbour would need cells beyond the next one.
     */
    for (int d = 0; d < ndim; d++)
        for (int i = 0; i < a->parts[d]; i++)
            if (kyi_adist_extent(a, d, i) < (size_t)a->halo[d])
                return kyi_fail(KY_ERR_ARG, call,
                                "dimension %d: halo %d is wider than part %d's local block (%zu elements)", d,
                                a->halo[d], i, kyi_adist_extent(a, d, i));
    a->nparts = (int)total;
    int me = kyi_rt.rank;
    a->nlocal = (me >= a->first && me < a->first + a->count) ? a->bpr : 0;
    if (place == KY_PLACE_GPU) {
        if (!kyi_gpu_built() || kyi_gpu_count() <= 0)
            return kyi_fail(KY_ERR_UNSUPPORTED, call, "GPU placement but %s",
                            kyi_gpu_built() ? "no GPU is visible" : "Kyoyu was built without CUDA");
        if (a->nlocal > kyi_rt.ngpus)
            return kyi_fail(KY_ERR_ARG, call,
                            "%d blocks per rank on GPUs but this rank drives %d GPU(s) (KY_GPUS_PER_RANK)",
                            a->nlocal, kyi_rt.ngpus);
    }
    for (int k = 0; k < a->nlocal; k++) {
        kyi_ablock_t *b = &a->blk[k];
        b->part = (me - a->first) * a->bpr + k;
        kyi_adist_coord(a, b->part, b->coord);
        kyi_adist_geom(a, b->part, b->n, b->E, b->S);
        b->bytes = b->S[0] * b->E[0] * elem;
        b->dev = place == KY_PLACE_GPU ? kyi_rt.gpus[k] : -1;
    }
    return KY_OK;
}

static unsigned long long describe_hash(const struct kyi_array *a)
{
    unsigned long long v[6 + 5 * KY_ARRAY_MAX_DIMS], h = 1469598103934665603ull;
    int n = 0;
    v[n++] = (unsigned)a->ndim;
    v[n++] = a->elem;
    v[n++] = (unsigned)a->place;
    v[n++] = (unsigned)a->first;
    v[n++] = (unsigned)a->count;
    v[n++] = (unsigned)a->bpr;
    for (int d = 0; d < a->ndim; d++) {
        v[n++] = a->dims[d];
        v[n++] = (unsigned)a->kind[d];
        v[n++] = a->bsize[d];
        v[n++] = (unsigned)a->parts[d];
        v[n++] = (unsigned)a->halo[d];
    }
    for (int i = 0; i < n; i++) h = (h ^ v[i]) * 1099511628211ull;
    return h;
}

int ky_array_create(int ndim, const size_t dims[], size_t elem, const ky_dist_t *dist, ky_place_t place,
                    const int halo[], ky_array_t *out)
{
    static const char *call = "ky_array_create";
    KYI_CHECK(kyi_require_init(call));
    struct kyi_array *a = calloc(1, sizeof *a);
    int st = !out ? kyi_fail(KY_ERR_ARG, call, "out is NULL")
             : !a ? kyi_fail(KY_ERR_NOMEM, call, "no memory")
                  : describe(call, a, ndim, dims, elem, dist, place, halo);
    /* Agree on failure so that no rank is left alone in the collective segment creation. */
    int64_t worst = st;
    if (kyi_rt_allreduce_i64(&worst, 1, KYI_RT_MIN) && !st) worst = KY_ERR_MPI;
    if (st || worst) {
        free(a);
        return st ? st : kyi_fail((int)worst, call, "another rank passed bad arguments");
    }
    /* Every rank must describe the same array (a mismatch would desynchronise the segment creations). */
    int64_t hmin = (int64_t)describe_hash(a), hmax = hmin;
    int bad = kyi_rt_allreduce_i64(&hmin, 1, KYI_RT_MIN);
    if (!bad) bad = kyi_rt_allreduce_i64(&hmax, 1, KYI_RT_MAX);
    if (bad) {
        free(a);
        return bad;
    }
    if (hmin != hmax) {
        free(a);
        return kyi_fail(KY_ERR_ARG, call,
                        "ranks passed different shapes, element sizes, distributions, placements or halos");
    }
    int memkind = place == KY_PLACE_GPU ? KY_MEM_GPU : KY_MEM_HOST;
    int k = 0, zero_st = KY_OK;
    for (; k < a->bpr; k++) {
        size_t bytes = k < a->nlocal ? a->blk[k].bytes : 0;
        int dev = k < a->nlocal ? a->blk[k].dev : -1;
        if ((st = ky_seg_create(NULL, bytes, memkind, dev, &a->seg[k]))) break;
        if (k < a->nlocal) {
            void *p = NULL;
            ky_seg_local(a->seg[k], &p, NULL);
            a->blk[k].base = p;
            size_t off = 0;
            for (int d = 0; d < ndim; d++) off += (size_t)a->halo[d] * a->blk[k].S[d];
            a->blk[k].origin = a->blk[k].base + off * elem;
            if (bytes && !zero_st) zero_st = ky_memset(kyi_rt.rank, a->seg[k], 0, 0, bytes);
        }
    }
    /* Every block is zeroed before any rank returns. ky_seg_create's exchange lets a rank leave while another
     * still zeroes its block, so a put right after the create (ky_array_put from the rank that left first)
     * could land before the owner's memset and be wiped (a flaky io test's array read back as zeros). The
     * agreement orders them and gives every rank the same status; a failed memset no longer leaves its rank
     * out of the remaining collective segment creations either. */
    if (!st) {
        int64_t worst_zero = zero_st;
        if (kyi_rt_allreduce_i64(&worst_zero, 1, KYI_RT_MIN)) worst_zero = KY_ERR_MPI;
        if (worst_zero)
            st = zero_st ? zero_st : kyi_fail((int)worst_zero, call, "another rank could not zero its block");
    }
    int member = a->nlocal > 0;
    if (!st) {
        if (a->first == 0 && a->count == kyi_rt.nranks)
            a->team = KY_TEAM_WORLD;
        else
            st = ky_team_split(KY_TEAM_WORLD, member ? 0 : -1, kyi_rt.rank, &a->team);
    }
    if (st) {
        for (int j = 0; j < k && j < a->bpr; j++) ky_seg_destroy(a->seg[j]);
        free(a);
        return st;
    }
    KYI_INFO(KYI_SUB_ARRAY, "array %dD, %d parts over ranks %d..%d, %d block(s) per rank, %s placement", ndim,
             a->nparts, a->first, a->first + a->count - 1, a->bpr, place == KY_PLACE_GPU ? "GPU" : "host");
    *out = a;
    return KY_OK;
}

int ky_array_free(ky_array_t a)
{
    KYI_CHECK(kyi_require_init("ky_array_free"));
    if (!a) return KY_OK;
    int st = a->view ? ky_free(a->view) : KY_OK; /* collective, like this call */
    kyi_halo_mpi_free(a);
    for (int k = 0; k < a->bpr; k++) {
        int s = ky_seg_destroy(a->seg[k]);
        if (!st) st = s;
    }
    if (a->team != KY_TEAM_WORLD) ky_team_free(a->team);
    free(a->ops);
    free(a->hs);
    free(a);
    return st;
}

int ky_array_nlocal(ky_array_t a)
{
    KYI_CHECK(kyi_array_check("ky_array_nlocal", a));
    return a->nlocal;
}

int ky_array_ndim(ky_array_t a)
{
    KYI_CHECK(kyi_array_check("ky_array_ndim", a));
    return a->ndim;
}

int ky_array_dims(ky_array_t a, size_t dims[], size_t *elem)
{
    KYI_CHECK(kyi_array_check("ky_array_dims", a));
    if (dims) memcpy(dims, a->dims, sizeof(size_t) * a->ndim);
    if (elem) *elem = a->elem;
    return KY_OK;
}

int ky_array_dist(ky_array_t a, ky_dist_t *dist, int halo[], ky_place_t *place)
{
    KYI_CHECK(kyi_array_check("ky_array_dist", a));
    if (dist) {
        memset(dist, 0, sizeof *dist);
        for (int d = 0; d < a->ndim; d++) {
            dist->kind[d] = a->kind[d];
            dist->bsize[d] = a->kind[d] == KY_DIST_CYCLIC ? (a->bsize[d] ? a->bsize[d] : 1) : 0;
            dist->parts[d] = a->parts[d];
        }
        dist->first = a->first;
        dist->count = a->count;
        dist->blocks_per_rank = a->bpr;
    }
    if (halo) memcpy(halo, a->halo, sizeof(int) * a->ndim);
    if (place) *place = (ky_place_t)a->place;
    return KY_OK;
}

int ky_array_local_n(ky_array_t a, int k, void **ptr, size_t lo[], size_t hi[])
{
    static const char *call = "ky_array_local";
    if (ptr) *ptr = NULL;
    KYI_CHECK(kyi_array_check_block(call, a, k));
    const kyi_ablock_t *b = &a->blk[k];
    for (int d = 0; d < a->ndim; d++) {
        size_t l = a->kind[d] == KY_DIST_BLOCK ? kyi_adist_lo(a, d, b->coord[d]) : 0;
        if (lo) lo[d] = l;
        if (hi) hi[d] = l + b->n[d];
    }
    if (ptr) *ptr = b->origin;
    return KY_OK;
}

void *ky_array_local(ky_array_t a, size_t lo[], size_t hi[])
{
    void *p = NULL;
    if (ky_array_local_n(a, 0, &p, lo, hi) != KY_OK) return NULL;
    return p;
}

int ky_array_layout(ky_array_t a, int k, size_t extent[], size_t stride[])
{
    KYI_CHECK(kyi_array_check_block("ky_array_layout", a, k));
    for (int d = 0; d < a->ndim; d++) {
        if (extent) extent[d] = a->blk[k].E[d];
        if (stride) stride[d] = a->blk[k].S[d];
    }
    return KY_OK;
}

int ky_array_device(ky_array_t a, int k, int *device)
{
    KYI_CHECK(kyi_array_check_block("ky_array_device", a, k));
    if (!device) return kyi_fail(KY_ERR_ARG, "ky_array_device", "device is NULL");
    *device = a->blk[k].dev;
    return KY_OK;
}

int ky_array_global_index(ky_array_t a, int k, int dim, size_t l, size_t *g)
{
    static const char *call = "ky_array_global_index";
    KYI_CHECK(kyi_array_check_block(call, a, k));
    if (dim < 0 || dim >= a->ndim)
        return kyi_fail(KY_ERR_ARG, call, "dimension %d is not in 0..%d", dim, a->ndim - 1);
    if (!g) return kyi_fail(KY_ERR_ARG, call, "g is NULL");
    if (l >= a->blk[k].n[dim])
        return kyi_fail(KY_ERR_RANGE, call,
                        "local index %zu outside block %d's %zu elements along dimension %d", l, k,
                        a->blk[k].n[dim], dim);
    *g = kyi_adist_global(a, dim, a->blk[k].coord[dim], l);
    return KY_OK;
}

int ky_array_owner(ky_array_t a, const size_t idx[], int *rank, int *k)
{
    static const char *call = "ky_array_owner";
    KYI_CHECK(kyi_array_check(call, a));
    if (!idx || !rank) return kyi_fail(KY_ERR_ARG, call, "%s is NULL", !idx ? "idx" : "rank");
    int c[KY_ARRAY_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) {
        if (idx[d] >= a->dims[d])
            return kyi_fail(KY_ERR_RANGE, call, "index %zu outside dimension %d (%zu elements)", idx[d], d,
                            a->dims[d]);
        c[d] = kyi_adist_part(a, d, idx[d], NULL);
    }
    kyi_adist_home(a, kyi_adist_part_of(a, c), rank, k);
    return KY_OK;
}

int ky_array_affinity_range_n(ky_array_t a, int k, int dim, size_t lo, size_t hi, size_t *mylo, size_t *myhi)
{
    static const char *call = "ky_array_affinity_range";
    KYI_CHECK(kyi_array_check(call, a));
    if (dim < 0 || dim >= a->ndim)
        return kyi_fail(KY_ERR_ARG, call, "dimension %d is not in 0..%d", dim, a->ndim - 1);
    if (!mylo || !myhi) return kyi_fail(KY_ERR_ARG, call, "%s is NULL", !mylo ? "mylo" : "myhi");
    if (lo > hi || hi > a->dims[dim])
        return kyi_fail(KY_ERR_RANGE, call, "range [%zu, %zu) is not inside dimension %d (%zu elements)", lo,
                        hi, dim, a->dims[dim]);
    if (k < 0 || (a->nlocal > 0 && k >= a->nlocal)) return kyi_array_check_block(call, a, k);
    *mylo = *myhi = 0;
    if (a->nlocal == 0) return KY_OK; /* owns nothing: empty range */
    const kyi_ablock_t *b = &a->blk[k];
    int i = b->coord[dim];
    if (a->kind[dim] == KY_DIST_BLOCK) {
        size_t blo = kyi_adist_lo(a, dim, i), bhi = blo + b->n[dim];
        size_t l = lo > blo ? lo : blo, h = hi < bhi ? hi : bhi;
        *mylo = l;
        *myhi = h > l ? h : l;
        return KY_OK;
    }
    /* Cyclic: local indices whose global index is in [lo, hi); local -> global is increasing. */
    size_t n = b->n[dim], l0 = 0, l1 = n;
    size_t lft = 0, rgt = n; /* first local index with global >= lo */
    while (lft < rgt) {
        size_t m = (lft + rgt) / 2;
        if (kyi_adist_global(a, dim, i, m) < lo)
            lft = m + 1;
        else
            rgt = m;
    }
    l0 = lft;
    lft = l0, rgt = n; /* first local index with global >= hi */
    while (lft < rgt) {
        size_t m = (lft + rgt) / 2;
        if (kyi_adist_global(a, dim, i, m) < hi)
            lft = m + 1;
        else
            rgt = m;
    }
    l1 = lft;
    *mylo = l0;
    *myhi = l1;
    return KY_OK;
}

int ky_array_affinity_range(ky_array_t a, int dim, size_t lo, size_t hi, size_t *mylo, size_t *myhi)
{
    return ky_array_affinity_range_n(a, 0, dim, lo, hi, mylo, myhi);
}
