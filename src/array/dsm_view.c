/* The DSM view of an array (issue 5; docs/api.md "DSM view"): the array's global index space as one
 * allocation of the global address space, C order, dims[0] x ... x dims[ndim-1] elements, so that any rank
 * reads and writes any element through a plain pointer (boundary conditions, irregular accesses) under the
 * DSM's release consistency.
 *
 * Homes. The view is ky_mapalloc'd cut along dimension 0 over every rank of the job (blocks of
 * ceil(dims[0] / P) rows), so with the default distribution (block along dimension 0 over all ranks) the
 * home of a page is the rank that owns its rows, as far as page boundaries allow (docs/dsm.md).
 *
 * The view and the blocks are two copies kept in step by two collective calls; rank r moves the rows the
 * view homes at r (its "slab"), so with matching homes nothing crosses the network twice:
 *   publish  barrier (the blocks hold their final values), ky_array_get of the slab from its owners into a
 *            host bounce buffer, copied into the view's home pages; ky_barrier (every rank may read).
 *            The bounce buffer: a GPU or MPI copy must not write global memory itself (docs/dsm.md).
 *   collect  ky_barrier (writes through the view reach their homes), the slab read from the view and
 *            ky_array_put to its owners, then a barrier (the owners may read their blocks).
 * Slabs move in chunks of whole rows of at most KYI_VIEW_CHUNK bytes (one row if a row is larger). */
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "runtime/log.h"

enum { KYI_VIEW_CHUNK = 16 << 20 };

/* Rows [r0, r1) of dimension 0 homed at this rank, and bytes per row. */
static void slab(const struct kyi_array *a, size_t *r0, size_t *r1, size_t *row)
{
    int p = kyi_rt.nranks, me = kyi_rt.rank;
    size_t n0 = a->dims[0], divs = n0 < (size_t)p ? n0 : (size_t)p, len = (n0 + divs - 1) / divs;
    *row = a->elem;
    for (int d = 1; d < a->ndim; d++) *row *= a->dims[d];
    *r0 = (size_t)me < divs ? (size_t)me * len : n0;
    *r1 = *r0 + len < n0 ? *r0 + len : n0;
    if (*r0 > n0) *r0 = n0;
}

/* Move this rank's slab: dir 0 blocks -> view, 1 view -> blocks. */
static int move_slab(const char *call, struct kyi_array *a, int dir)
{
    size_t r0, r1, row;
    slab(a, &r0, &r1, &row);
    if (r0 >= r1) return KY_OK;
    size_t per = row >= KYI_VIEW_CHUNK ? 1 : KYI_VIEW_CHUNK / row;
    if (per > r1 - r0) per = r1 - r0;
    char *bounce = malloc(per * row);
    if (!bounce) return kyi_fail(KY_ERR_NOMEM, call, "no memory for a %zu-byte bounce buffer", per * row);
    int st = KY_OK;
    size_t lo[KY_ARRAY_MAX_DIMS] = {0}, hi[KY_ARRAY_MAX_DIMS];
    for (int d = 1; d < a->ndim; d++) hi[d] = a->dims[d];
    for (size_t r = r0; r < r1 && st == KY_OK; r += per) {
        size_t m = r + per < r1 ? per : r1 - r;
        lo[0] = r;
        hi[0] = r + m;
        char *v = (char *)a->view + r * row;
        if (dir == 0) {
            st = ky_array_get(a, lo, hi, bounce);
            if (st == KY_OK) memcpy(v, bounce, m * row);
        } else {
            memcpy(bounce, v, m * row);
            st = ky_array_put(a, lo, hi, bounce);
        }
    }
    free(bounce);
    return st;
}

/* Every rank's status, agreed: the first failure everywhere (collective calls must not split). */
static int agree(const char *call, int st)
{
    int32_t v = st == KY_OK;
    int s = ky_allreduce(KY_IN_PLACE, &v, 1, KY_INT32, KY_MIN, KY_TEAM_WORLD);
    if (s) return s;
    if (st) return st;
    return v ? KY_OK : kyi_fail(KY_ERR_ARG, call, "another rank failed (see its message)");
}

int ky_array_dsm_publish(ky_array_t a)
{
    static const char *call = "ky_array_dsm_publish";
    KYI_CHECK(kyi_array_check(call, a));
    if (!a->view) return kyi_fail(KY_ERR_STATE, call, "the array has no DSM view: ky_array_dsm_view first");
    KYI_CHECK(ky_comm_barrier()); /* every owner has written its block */
    KYI_CHECK(agree(call, move_slab(call, a, 0)));
    return ky_barrier();
}

int ky_array_dsm_collect(ky_array_t a)
{
    static const char *call = "ky_array_dsm_collect";
    KYI_CHECK(kyi_array_check(call, a));
    if (!a->view) return kyi_fail(KY_ERR_STATE, call, "the array has no DSM view: ky_array_dsm_view first");
    KYI_CHECK(ky_barrier()); /* writes through the view are at their homes */
    KYI_CHECK(agree(call, move_slab(call, a, 1)));
    return ky_comm_barrier(); /* the owners' blocks hold the values */
}

int ky_array_dsm_view(ky_array_t a, void **base)
{
    static const char *call = "ky_array_dsm_view";
    KYI_CHECK(kyi_array_check(call, a));
    if (!base) return kyi_fail(KY_ERR_ARG, call, "base is NULL");
    *base = NULL;
    if (!a->view) {
        void *gb;
        size_t gn;
        int g = ky_gas_range(&gb, &gn);
        if (g) return kyi_fail(g, call, "no global address space for the view: %s", ky_last_error());
        int dims[KY_ARRAY_MAX_DIMS + 1], divs[KY_ARRAY_MAX_DIMS + 1], p = kyi_rt.nranks;
        for (int d = 0; d < a->ndim; d++) {
            if (a->dims[d] > (size_t)0x7fffffff)
                return kyi_fail(KY_ERR_UNSUPPORTED, call, "dimension %d has %zu elements: a view takes at most 2^31-1", d,
                                a->dims[d]);
            dims[d] = (int)a->dims[d];
            divs[d] = d == 0 ? (a->dims[0] < (size_t)p ? (int)a->dims[0] : p) : 1;
        }
        dims[a->ndim] = divs[a->ndim] = -1;
        a->view = ky_mapalloc(dims, divs, a->elem, 0, p);
        if (!a->view) return kyi_fail(KY_ERR_NOMEM, call, "ky_mapalloc of the view failed: %s", ky_last_error());
        KYI_INFO(KYI_SUB_ARRAY, "DSM view of a %d-D array at %p", a->ndim, a->view);
    }
    KYI_CHECK(ky_array_dsm_publish(a));
    *base = a->view;
    return KY_OK;
}
