/* Internal: the process-wide runtime state (one per rank) shared by every layer. Written once by ky_init,
 * read-only afterwards, so no lock protects it. */
#ifndef KYI_RUNTIME_RUNTIME_H
#define KYI_RUNTIME_RUNTIME_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KYI_MAX_GPUS_PER_RANK 16
/* Sizes this large are negative numbers cast to size_t (argument checks of every layer). */
#define KYI_SIZE_LOOKS_NEGATIVE(n) ((n) > ((size_t)1 << 56))

typedef struct {
    int initialized;
    int mpi_owned; /* ky_init called MPI_Init_thread, so ky_finalize calls MPI_Finalize */
    int rank, nranks;
    int node, nnodes; /* logical nodes (KY_NODE_SPLIT=rank: one per rank) */
    int local_rank, local_nranks;
    int hw_local_rank, hw_local_nranks; /* on the physical host, whatever KY_NODE_SPLIT says: GPU binding */
    int *node_of;                       /* [nranks] logical node of every rank */
    int *hw_node_of;                    /* [nranks] physical host of every rank */
    int *gpu_of;        /* [nranks * KYI_MAX_GPUS_PER_RANK] device ordinals of every rank's GPUs, -1 none */
    MPI_Comm world;     /* private duplicate of MPI_COMM_WORLD for runtime collectives */
    MPI_Comm node_comm; /* ranks of this logical node */
    int ngpus;
    int gpus[KYI_MAX_GPUS_PER_RANK];
    int oversubscribed; /* more busy threads than cores on this host: never spin */
    int threads_fit; /* the program's own threads (ranks x OMP_NUM_THREADS, progress threads not counted) fit
                      * the host's cores: a wait for other ranks' program threads only may spin */
    int cores_busy;  /* with the OpenMP threads the program asked for (OMP_NUM_THREADS) the rank's threads
                      * and progress threads outnumber the cores: the idle progress thread does not spin */
    int cpus;        /* cores this process may run on */
    int omp_threads; /* OMP_NUM_THREADS as the program set it; 0: unset */
    char host[64];
} kyi_rt_t;

extern kyi_rt_t kyi_rt;

/* KY_OK if initialised, else records "ky_xxx: called before ky_init" and returns KY_ERR_NOT_INIT. */
int kyi_require_init(const char *call);
/* The device the calling rank uses for its own GPU work: its first GPU, or -1. */
int kyi_my_device(void);

/* Waiting without melting down: spin briefly (not when oversubscribed), then yield, then sleep with a
 * growing interval; past KY_TIMEOUT, abort the job with "rank R: call: timed out after T s waiting for
 * WHAT". */
typedef struct {
    uint64_t first_ns; /* when the wait began: the timeout counts from here */
    uint64_t start_ns; /* last progress: the spin phase counts from here */
    uint64_t next_check_ns;
    unsigned rounds;
    const char *call;
    const char *what;
    int peer;
    int program_only;   /* kyi_waiter_init_program: what it waits for needs no progress thread */
    unsigned spin_left; /* pauses before the clock is read again (spin phase) */
} kyi_waiter_t;
void kyi_waiter_init(kyi_waiter_t *w, const char *call, const char *what, int peer);
/* A wait that only other ranks' program threads end (a barrier in shared memory): where the program's threads
 * fit the cores it spins 10 us, then polls with sched_yield for 200 ms before sleeping, even if the progress
 * threads make the host count as oversubscribed, since those sleep while idle and nothing this wait needs
 * runs on them. */
void kyi_waiter_init_program(kyi_waiter_t *w, const char *call, const char *what);
/* One pause of a wait: spin, yield or sleep by how long it has waited. Returns 1 when it slept the longest
 * sleep (KY_POLL_SLEEP_MAX_US): the wait is in its idle phase. */
int kyi_waiter_pause(kyi_waiter_t *w);
/* Reset the spin phase after progress was made. */
void kyi_waiter_progress(kyi_waiter_t *w);
uint64_t kyi_now_ns(void);

/* boot.c: the bootstrap collectives, over every rank of the job on the runtime's communicator, for set-up
 * and for the agreements of collective creation calls (every rank calls them in the same order). The one
 * place above comm that layers may reach every rank without comm; everything else goes through comm. */
typedef enum { KYI_RT_MIN, KYI_RT_MAX } kyi_rt_op_t;
/* v[0..n) replaced by its minimum or maximum over the ranks. */
int kyi_rt_allreduce_i64(int64_t *v, int n, kyi_rt_op_t op);
/* all[r * bytes ..] receives rank r's `bytes` bytes at mine. */
int kyi_rt_allgather(const void *mine, size_t bytes, void *all);
/* theirs[r] receives rank r's mine[this rank] (one 8-byte word per pair). */
int kyi_rt_alltoall_u64(const uint64_t *mine, uint64_t *theirs);
/* root's `bytes` bytes at buf to every rank's buf. */
int kyi_rt_bcast(void *buf, size_t bytes, int root);
int kyi_rt_barrier(void);
/* The same over the ranks of this rank's logical node (node_comm), in their local order. */
int kyi_rt_node_allgather(const void *mine, size_t bytes, void *all);
int kyi_rt_node_barrier(void);
/* End the whole job now with exit status `status` (what the launcher reports): for a program's own request
 * to end everything (shmem_global_exit); errors go through kyi_fatal instead. Does not return. */
void kyi_rt_abort(int status) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif
