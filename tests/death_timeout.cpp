/* Death test (b): rank 1 sleeps 30 s without entering ky_comm_barrier while rank 0 waits in it with
 * KY_TIMEOUT=2. The job must end well before 30 s with a message naming rank 0, the call and the timeout
 * (CTest: PASS_REGEX and a TIMEOUT far below 30 s). */
#include <unistd.h>

#include <cstdio>

#include "kyoyu.h"

int main(int argc, char **argv)
{
    if (ky_init(&argc, &argv) != KY_OK) return 2;
    int me = ky_rank();
    if (me == 1) {
        sleep(30);
        fprintf(stderr, "rank 1: woke up after 30 s: the job should have ended already\n");
    }
    int st = ky_comm_barrier();
    fprintf(stderr, "rank %d: ky_comm_barrier returned %d (%s)\n", me, st, ky_last_error());
    ky_finalize();
    return 0;
}
