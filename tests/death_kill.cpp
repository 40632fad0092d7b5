/* Death test (a): rank 1 kills itself with SIGKILL while rank 0 waits on a ky_get from it. The job must end
 * rather than hang (a short CTest TIMEOUT makes a hang a failure), and for that reason: the test's PASS_REGEX
 * wants "rank 1: killing myself" followed by the launcher's report of rank 1 killed by signal 9 or Kyoyu's
 * timeout naming rank 1, so an unrelated crash does not pass. Host segment with a user base pointer: reached
 * through MPI, so the get needs rank 1's progress engine. */
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "kyoyu.h"

int main(int argc, char **argv)
{
    if (ky_init(&argc, &argv) != KY_OK) return 2;
    int me = ky_rank();
    std::vector<char> mem(1 << 20, 'x');
    ky_seg_t seg;
    if (ky_seg_create(mem.data(), mem.size(), KY_MEM_HOST, 0, &seg) != KY_OK) return 2;
    ky_comm_barrier();
    if (me == 1) {
        fprintf(stderr, "rank 1: killing myself\n");
        fflush(stderr);
        raise(SIGKILL);
    }
    if (me == 0) {
        usleep(200 * 1000); /* let rank 1 die first */
        std::vector<char> buf(mem.size());
        for (int i = 0; i < 1000; i++) {
            int st = ky_get(buf.data(), 1, seg, 0, buf.size());
            fprintf(stderr, "rank 0: ky_get from the dead rank returned %d (%s)\n", st, ky_last_error());
            if (st != KY_OK) return 1;
        }
    }
    /* other ranks (and rank 0 if a get returned) wait in a barrier rank 1 never reaches */
    ky_comm_barrier();
    fprintf(stderr, "rank %d: barrier with a dead rank returned: that is wrong\n", me);
    return 0;
}
