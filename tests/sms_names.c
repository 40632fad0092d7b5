/* sms_names: the mSMS rank variables of sms.h in the seed's own clause. Seed 000's Figs. 9-11 start their
 * threads with `#pragma omp parallel num_threads(numgpus) firstprivate(bt, numgpus, sms_rank, sms_nprocs,
 * st, size)`, which needs sms_rank and sms_nprocs to be variables. Checked: the values after sms_startup
 * (here, inside the parallel region, and read from another translation unit, sms_names_peer.c), Fig. 10's
 * spelling sms_nproc, that the threads' copies are private, and a mapalloc'd array each thread fills with
 * its share of its rank's slab, read back whole by every rank after sms_barrier. The same file is compiled
 * as C and, through sms_names.cpp, as C++. Prints "sms_names: rank R of N: OK" (or WRONG) per rank. */
#include <omp.h>
#include <stdio.h>

#include "sms.h"

#define NZ 24 /* splits over 2, 3 and 4 ranks, and each rank's slab over 2 threads */
#define NY 6
#define NX 5

#ifdef __cplusplus
extern "C" {
#endif
int sms_names_peer_rank(void); /* sms_names_peer.c */
int sms_names_peer_nprocs(void);
#ifdef __cplusplus
}
#endif

static double value(int z, int y, int x)
{
    return 10000.0 * z + 100.0 * y + x;
}

int main(int argc, char **argv)
{
    int bt = 3, numgpus = 2, st, ed, size, z, y, x;
    int wrong = 0;
    double(*A)[NY][NX];

    if (sms_rank != 0 || sms_nprocs != 0) wrong++; /* before sms_startup: 0 and 0 */
    sms_startup(&argc, &argv);
    if (sms_rank != ky_rank() || sms_nprocs != ky_nranks() || sms_nproc != ky_nranks()) wrong++;
    if (sms_names_peer_rank() != ky_rank() || sms_names_peer_nprocs() != ky_nranks()) wrong++;

    int dim[4] = {NZ, NY, NX, -1};
    int div[4] = {sms_nproc, 1, 1, -1}; /* Fig. 10's spelling */
    A = (double(*)[NY][NX])sms_mapalloc(dim, div, sizeof(double), 0, sms_nprocs);
    size = NZ / sms_nprocs;
    st = size * sms_rank;
    ed = size * (sms_rank + 1);

    int thread_wrong = 0;
#pragma omp parallel num_threads(numgpus) firstprivate(bt, numgpus, sms_rank, sms_nprocs, st, size) \
    private(z, y, x) reduction(+ : thread_wrong)
    {
        int gpuid = omp_get_thread_num(),
            nth = omp_get_num_threads(); /* numgpus, or fewer (OMP_THREAD_LIMIT) */
        if (sms_rank != ky_rank() || sms_nprocs != ky_nranks() || bt != 3 || numgpus != 2) thread_wrong++;
        /* this thread's part of the rank's slab, as Fig. 11 splits it over the GPUs */
        int share = size / nth;
        int mst = st + share * gpuid, med = gpuid == nth - 1 ? st + size : mst + share;
        for (z = mst; z < med; z++)
            for (y = 0; y < NY; y++)
                for (x = 0; x < NX; x++) A[z][y][x] = value(z, y, x);
        /* the copies are private: writing them touches neither the globals nor the sibling's copies */
        sms_rank = -1 - gpuid;
        sms_nprocs = -1;
        st = -1 - gpuid;
#pragma omp barrier
        if (sms_rank != -1 - gpuid || st != -1 - gpuid) thread_wrong++;
    }
    wrong += thread_wrong;
    if (sms_rank != ky_rank() || sms_nprocs != ky_nranks() || st != size * ky_rank()) wrong++;

    sms_barrier();
    long bad = 0;
    for (z = 0; z < NZ; z++)
        for (y = 0; y < NY; y++)
            for (x = 0; x < NX; x++)
                if (A[z][y][x] != value(z, y, x)) bad++;
    if (bad) wrong++;
    (void)ed;
    sms_barrier();
    sms_free(A);
    printf("sms_names: rank %d of %d: %s (%d wrong checks, %ld wrong elements)\n", sms_rank, sms_nprocs,
           wrong ? "WRONG" : "OK", wrong, bad);
    fflush(stdout);
    sms_shutdown();
    return wrong ? 1 : 0;
}
