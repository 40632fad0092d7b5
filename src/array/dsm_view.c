/* The DSM view of an array (docs/api.md "DSM view"): the array's global index space as one
 * allocation of the global address space, C order, dims[0] x ... x dims[ndim-1] elements, so that any rank
 * reads and writes any element through a plain pointer (boundary conditions, irregular accesses) under the
 * DSM's release consistency.
 *
 * Homes are the blocks themselves, in host or GPU memory: the view is a store allocation of the DSM
 * (src/dsm/store.h), so there is no second copy. A fault on a page of the view reads the page's elements
 * from their owners' blocks (ky_array_get's one-sided gets: a local or CUDA IPC copy on the node, the
 * owner's progress thread across nodes); a barrier writes the elements a rank changed through the view into
 * the blocks (one-sided puts). An element that straddles two pages moves as the two byte ranges. The data
 * land in the DSM's service view of the page, host memory that no GPU copy has to fault on. */
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "dsm/store.h"
#include "runtime/log.h"

/* Bytes [off, off+len) of the view moved between buf and the blocks: a partial element at each end by
 * bytes, the whole elements between as row-major boxes. */
static int view_move(struct kyi_array *a, size_t off, size_t len, char *buf, int put)
{
    const char *call = put ? "ky_array DSM view write-back" : "ky_array DSM view fault";
    size_t elem = a->elem, e = off / elem, b = off % elem;
    if (b && len) {
        size_t n = len < elem - b ? len : elem - b;
        KYI_CHECK(kyi_array_elem_bytes(a, e, b, n, buf, put));
        buf += n, len -= n, e++;
    }
    size_t whole = len / elem;
    if (whole) KYI_CHECK(kyi_array_linear(call, a, e, e + whole, buf, put));
    buf += whole * elem, len -= whole * elem, e += whole;
    return len ? kyi_array_elem_bytes(a, e, 0, len, buf, put) : KY_OK;
}

static int view_read(void *ctx, size_t off, size_t len, void *dst)
{
    return view_move(ctx, off, len, dst, 0);
}
static int view_write(void *ctx, size_t off, size_t len, const void *src)
{
    return view_move(ctx, off, len, (char *)src, 1);
}
static int view_home(void *ctx, size_t off)
{
    const struct kyi_array *a = ctx;
    return kyi_array_elem_owner(a, off / a->elem);
}

/* Both are one ky_barrier now that the view reads the blocks: it writes the view's changes into the blocks
 * (diffs) and drops every cached page, so the next touch reads the blocks again. The barrier inside it
 * also orders the owners' own writes to their blocks before anybody's next fault. */
int ky_array_dsm_publish(ky_array_t a)
{
    static const char *call = "ky_array_dsm_publish";
    KYI_CHECK(kyi_array_check(call, a));
    if (!a->view) return kyi_fail(KY_ERR_STATE, call, "the array has no DSM view: ky_array_dsm_view first");
    return ky_barrier();
}

int ky_array_dsm_collect(ky_array_t a)
{
    static const char *call = "ky_array_dsm_collect";
    KYI_CHECK(kyi_array_check(call, a));
    if (!a->view) return kyi_fail(KY_ERR_STATE, call, "the array has no DSM view: ky_array_dsm_view first");
    return ky_barrier();
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
        size_t bytes = a->elem;
        for (int d = 0; d < a->ndim; d++) bytes *= a->dims[d];
        kyi_dsm_store_t store = {view_read, view_write, view_home, a, a->elem};
        a->view = kyi_dsm_alloc_store(call, bytes, &store);
        if (!a->view)
            return kyi_fail(KY_ERR_NOMEM, call, "no room for the view in the global space: %s",
                            ky_last_error());
        KYI_INFO(KYI_SUB_ARRAY, "DSM view of a %d-D array at %p", a->ndim, a->view);
    }
    KYI_CHECK(ky_array_dsm_publish(a));
    *base = a->view;
    return KY_OK;
}
