/* ky_finalize right after a burst of page fetches answered by messages (KY_NODE_SPLIT=rank or
 * KY_DSM_DIRECT=0). A home's replies are released by its progress engine some time after the requester has
 * them; ky_finalize used to free the page table first, and the progress thread then died in the release
 * (SIGSEGV in 8 of 20 runs with KY_NODE_SPLIT=rank). Every rank reads every other rank's pages, checks the
 * values and leaves at once, several rounds in one run. Prints "dsm_exit: OK" on every rank. */
#include <stdio.h>
#include <stdlib.h>

#include "kyoyu.h"

int main(int argc, char **argv)
{
    if (ky_init(&argc, &argv) != KY_OK) return 1;
    int me = ky_rank(), n = ky_nranks(), bad = 0;
    size_t per = 16 * ky_page_size() / sizeof(long);
    for (int round = 0; round < 4 && !bad; round++) {
        int dims[] = {(int)(per * n), -1}, divs[] = {n, -1};
        long *a = ky_mapalloc(dims, divs, sizeof(long), 0, n);
        if (!a) {
            fprintf(stderr, "dsm_exit: rank %d: %s\n", me, ky_last_error());
            return 1;
        }
        for (size_t i = per * me; i < per * (me + 1); i++) a[i] = (long)i * 3 + round;
        ky_barrier();
        for (size_t i = 0; i < per * n; i += 7) bad |= a[i] != (long)i * 3 + round; /* fetch everybody's */
        if (round < 3) ky_free(a); /* the last round ends with the pages still held and replies in flight */
    }
    printf("dsm_exit: rank %d: %s\n", me, bad ? "WRONG" : "OK");
    fflush(stdout);
    return ky_finalize() == KY_OK && !bad ? 0 : 1;
}
