/* hello_put: every rank puts its rank number into its right neighbour's segment, then checks its own. */
#include <stdio.h>
#include <kyoyu.h>

#define CHECK(call)                                              \
    do {                                                         \
        int s_ = (call);                                         \
        if (s_ != KY_OK) {                                       \
            fprintf(stderr, "%s: %s\n", #call, ky_strerror(s_)); \
            return 1;                                            \
        }                                                        \
    } while (0)

int main(int argc, char **argv)
{
    ky_seg_t seg;
    int *mine;
    CHECK(ky_init(&argc, &argv));
    int me = ky_rank(), n = ky_nranks();
    CHECK(ky_seg_create(NULL, sizeof(int), KY_MEM_HOST, 0, &seg)); /* collective: one int per rank */
    CHECK(ky_seg_local(seg, (void **)&mine, NULL));
    *mine = -1;
    CHECK(ky_comm_barrier());
    CHECK(ky_put((me + 1) % n, seg, 0, &me, sizeof me)); /* into the right neighbour */
    CHECK(ky_comm_barrier());                            /* every put has landed */
    int ok = *mine == (me + n - 1) % n;
    printf("rank %d of %d: got %d from my left neighbour: %s\n", me, n, *mine, ok ? "ok" : "WRONG");
    CHECK(ky_seg_destroy(seg));
    CHECK(ky_finalize());
    return ok ? 0 : 1;
}
