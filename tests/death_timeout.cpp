/* Death test (b): rank 1 sleeps 30 s without entering ky_comm_barrier while rank 0 waits in it with
 * KY_TIMEOUT=2. The job must end well before 30 s with a message naming rank 0, the call and the timeout
 * (CTest: PASS_REGEX and a TIMEOUT far below 30 s). With the argument "allreduce": the same in a
 * ky_allreduce on host memory after a first one made the team's shared-memory segment (coll/shm.c). */
#include <unistd.h>

#include <cstdio>
#include <string>

#include "kyoyu.h"

int main(int argc, char **argv)
{
    if (ky_init(&argc, &argv) != KY_OK) return 2;
    int me = ky_rank();
    bool coll = argc > 1 && std::string(argv[1]) == "allreduce";
    double v = 1;
    if (coll && ky_allreduce(KY_IN_PLACE, &v, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD) != KY_OK) return 3;
    if (me == 1) {
        sleep(30);
        fprintf(stderr, "rank 1: woke up after 30 s: the job should have ended already\n");
    }
    int st = coll ? ky_allreduce(KY_IN_PLACE, &v, 1, KY_DOUBLE, KY_SUM, KY_TEAM_WORLD) : ky_comm_barrier();
    fprintf(stderr, "rank %d: %s returned %d (%s)\n", me, coll ? "ky_allreduce" : "ky_comm_barrier", st,
            ky_last_error());
    ky_finalize();
    return 0;
}
