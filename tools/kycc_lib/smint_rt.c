/* smint_rt.c: run-time of SMint's data clauses and barrier (smint_rt.h; the translation is smint.py). Built
 * with -fopenmp into every kycc program: its orphaned `omp barrier`s bind to the rank's OpenMP region, so
 * they make the rank's threads meet without a global synchronisation. */
#include "smint_rt.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <kyoyu.h>
#include <kyoyu/dsm.h>

#include "kycc_rt.h"

static void smint_check(int status, const char *where, const char *call)
{
    if (status >= 0) return;
    char why[512];
    snprintf(why, sizeof why, "%s: %s (%s)", call, ky_last_error(), ky_strerror(status));
    kycc_fail(where, why);
}

/* kycc_for_static splits n iterations into one block per thread of the global team, ranks first: this
 * rank's threads hold consecutive blocks, so its iterations run from its first thread's first iteration to
 * its last thread's end. */
void smint_rank_block(long n, long *lo, long *hi)
{
    int threads = omp_get_num_threads(), team = kycc_num_threads();
    int g0 = kycc_thread_num() / threads * threads, g1 = g0 + threads - 1;
    long q = n > 0 ? n / team : 0, r = n > 0 ? n % team : 0;
    *lo = g0 * q + (g0 < r ? g0 : r);
    *hi = g1 * q + (g1 < r ? g1 : r) + q + (g1 < r);
}

void smint_load(void *base, const long ext[], const long lo[], const long hi[], int ndim, int elem, int rw,
                const char *where)
{
    size_t glb[16], region[16], stride[16];
    long offset = 0;
    if (ndim < 1 || ndim > 16) kycc_fail(where, "sections of 1 to 16 dimensions");
    for (int d = ndim - 1; d >= 0; d--) {
        long a = lo[d] < 0 ? 0 : lo[d], b = ext[d] >= 0 && hi[d] > ext[d] ? ext[d] : hi[d];
        if (b <= a) return; /* nothing of this section is touched by this rank */
        region[d] = (size_t)(b - a);
        glb[d] =
            ext[d] >= 0 ? (size_t)ext[d] : (size_t)b; /* a pointer's first extent: as far as the section */
        stride[d] = d == ndim - 1 ? 1 : stride[d + 1] * glb[d + 1];
        offset += a * (long)stride[d];
    }
    smint_check(ky_preload_array((char *)base + offset * elem, glb, region, ndim, (size_t)elem, rw), where,
                "ky_preload_array");
}

void smint_rank_sync(void)
{
#pragma omp barrier
}

void smint_drop(void)
{
#pragma omp barrier
#pragma omp master
    smint_check(ky_sync_drop(), "smint create", "ky_sync_drop");
#pragma omp barrier
}

void smint_barrier(void)
{
    if (kycc_in_region()) {
        kycc_barrier();
        return;
    }
    smint_check(ky_barrier(), "smint barrier", "ky_barrier");
}

/* Order-independent: the constructors of the units run in any order; the result is 2 only if every vote
 * was 1 and the user did not set the variable. */
static int unsafe_seen, we_set;

int smint_set_snapshot_(void)
{
    return we_set;
}

void smint_vote_(int serial_part_writes_nothing)
{
    if (!serial_part_writes_nothing) {
        unsafe_seen = 1;
        if (we_set) unsetenv("KY_DSM_SNAPSHOT");
        we_set = 0;
        return;
    }
    if (!unsafe_seen && !we_set && getenv("KY_DSM_SNAPSHOT") == NULL) {
        setenv("KY_DSM_SNAPSHOT", "2", 1);
        we_set = 1;
    }
}
