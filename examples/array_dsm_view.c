/* The DSM view of a distributed array (docs/api.md "DSM view of an array"): boundary conditions written as
 * plain code through one global pointer. A 2-D array is split into row blocks over every rank; each rank
 * fills the rows it owns, then the view makes the whole array one allocation of the global address space
 * whose homes are the blocks themselves: any rank reads any element with v[i * cols + j]. Here rank 0 alone
 * sets the global boundary (first and last row and column, most of it owned by other ranks) through the view,
 * ky_array_dsm_collect brings the writes into the owners' blocks, and every rank checks its rows and reads a
 * far element. Host placement; with GPU placement the same calls work once the blocks' streams are
 * synchronised. */
#include <stdio.h>
#include <kyoyu.h>

#define CHECK(call)                                              \
    do {                                                         \
        int s_ = (call);                                         \
        if (s_ != KY_OK) {                                       \
            fprintf(stderr, "%s: %s\n", #call, ky_last_error()); \
            return 1;                                            \
        }                                                        \
    } while (0)

int main(int argc, char **argv)
{
    CHECK(ky_init(&argc, &argv));
    int me = ky_rank(), n = ky_nranks();
    const size_t rows = (size_t)(5 * n + 1), cols = 7;
    size_t dims[2] = {rows, cols};
    ky_array_t a;
    CHECK(ky_array_create(2, dims, sizeof(double), NULL, KY_PLACE_HOST, NULL, &a)); /* collective */

    size_t lo[2], hi[2], ext[2], stride[2];
    double *mine = ky_array_local(a, lo, hi);
    CHECK(ky_array_layout(a, 0, ext, stride));
    for (size_t i = lo[0]; i < hi[0]; i++)
        for (size_t j = 0; j < cols; j++) mine[(i - lo[0]) * stride[0] + j] = 1000.0 * (double)i + (double)j;

    double *v;
    CHECK(ky_array_dsm_view(a, (void **)&v)); /* collective: the blocks readable through v */
    if (me == 0) /* boundary condition: plain stores, most of them into rows other ranks own */
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < cols; j++)
                if (i == 0 || i == rows - 1 || j == 0 || j == cols - 1) v[i * cols + j] = -1.0;
    CHECK(ky_array_dsm_collect(a)); /* collective: the changed elements in the owners' blocks */

    int ok = 1;
    for (size_t i = lo[0]; i < hi[0]; i++)
        for (size_t j = 0; j < cols; j++) {
            int edge = i == 0 || i == rows - 1 || j == 0 || j == cols - 1;
            double want = edge ? -1.0 : 1000.0 * (double)i + (double)j;
            ok &= mine[(i - lo[0]) * stride[0] + j] == want;
        }
    /* any element through the view, here one in the middle of the last rank's rows */
    size_t far = rows - 3;
    ok &= v[far * cols + 3] == 1000.0 * (double)far + 3.0;
    printf("rank %d: rows [%zu, %zu), boundary from rank 0 and a far element through the view: %s\n", me,
           lo[0], hi[0], ok ? "OK" : "WRONG");
    CHECK(ky_array_free(a)); /* collective; frees the view */
    CHECK(ky_finalize());
    return ok ? 0 : 1;
}
