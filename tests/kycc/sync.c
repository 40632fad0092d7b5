/* kycc test: barrier, master, single, critical (named and not), atomic, flush, the global team's
 * thread numbers, a shared local written in a region, function statics; compared with plain gcc. */
#include <stdio.h>
#include <omp.h>

int hits[64], stage[64];
double acc;

static int calls(void)
{
    static int n = 10;   /* a function's static: one copy for all ranks */
    return n++;
}

int main(void)
{
    int team = 0, masters = 0, singles = 0, crit = 0, named = 0, atom = 0, result = 0;
    long idsum = 0;
#pragma omp parallel
    {
        int me = omp_get_thread_num(), n = omp_get_num_threads();
        hits[me] = 1;
#pragma omp master
        team = n;
#pragma omp barrier
        stage[me] = hits[(me + 1) % n];      /* a neighbour's write, seen after the barrier */
#pragma omp master
        masters++;
#pragma omp single
        singles++;
#pragma omp critical
        { crit++; acc += 0.5; }
#pragma omp critical(other)
        named += 2;
#pragma omp atomic
        atom++;
#pragma omp atomic
        idsum += me;
#pragma omp flush
#pragma omp single nowait
        result = calls();
    }
    int seen = 0;
    for (int i = 0; i < team; i++) seen += stage[i];
    printf("team %d seen %d master %d single %d critical %d named %d atomic %d ids %ld acc %.1f\n", team, seen,
           masters, singles, crit, named, atom, idsum, acc);
    printf("static %d then %d, outside: thread %d of %d\n", result, calls(), omp_get_thread_num(),
           omp_get_num_threads());
    return 0;
}
