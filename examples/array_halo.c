/* Distributed array example: a 2-D array split into row blocks over every rank, one halo row on each side.
 * Each rank writes its rank into the rows it owns, exchanges halos, and checks that its halo rows hold the
 * neighbours' ranks; then rank 0 reads the whole array with one region get. Host placement; with GPUs pass
 * KY_PLACE_GPU and fill the block with cudaMemcpy instead. */
#include <stdio.h>
#include <stdlib.h>
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
    size_t dims[2] = {(size_t)(4 * n), 6}; /* 4 rows per rank, 6 columns */
    int halo[2] = {1, 0};
    ky_array_t a;
    CHECK(ky_array_create(2, dims, sizeof(int), NULL, KY_PLACE_HOST, halo, &a)); /* collective */

    size_t lo[2], hi[2], ext[2], stride[2];
    int *mine = ky_array_local(a, lo, hi);     /* local index (0,0) = global (lo[0], 0) */
    CHECK(ky_array_layout(a, 0, ext, stride)); /* padded rows: stride[0] ints apart */
    for (size_t i = 0; i < hi[0] - lo[0]; i++)
        for (size_t j = 0; j < dims[1]; j++) mine[i * stride[0] + j] = me;
    CHECK(ky_array_halo_exchange(a, NULL)); /* collective: halo rows now hold the neighbours' rows */

    int ok = 1;
    long below = -(long)stride[0], above = (long)((hi[0] - lo[0]) * stride[0]);
    if (me > 0) ok &= mine[below] == me - 1;
    if (me < n - 1) ok &= mine[above] == me + 1;

    size_t owner_idx[2] = {dims[0] - 1, 0};
    int owner;
    CHECK(ky_array_owner(a, owner_idx, &owner, NULL));
    ok &= owner == n - 1;
    if (me == 0) {
        int *all = malloc(sizeof(int) * dims[0] * dims[1]);
        size_t zero[2] = {0, 0};
        CHECK(ky_array_get(a, zero, dims, all)); /* from every owner */
        for (size_t i = 0; i < dims[0]; i++) ok &= all[i * dims[1]] == (int)(i / 4);
        free(all);
    }
    printf("rank %d of %d: rows [%zu, %zu), halos and region get: %s\n", me, n, lo[0], hi[0],
           ok ? "ok" : "WRONG");
    CHECK(ky_comm_barrier());
    CHECK(ky_array_free(a));
    CHECK(ky_finalize());
    return ok ? 0 : 1;
}
