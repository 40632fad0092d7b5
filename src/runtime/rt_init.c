/* Runtime bootstrap: MPI (initialised with MPI_THREAD_MULTIPLE or adopted), nodes and local ranks
 * (logical per KY_NODE_SPLIT, physical for GPU binding), GPU binding by local rank, oversubscription. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kyoyu/runtime.h"
#include "runtime/config.h"
#include "runtime/gpu.h"
#include "runtime/log.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"

kyi_rt_t kyi_rt;

const char *ky_version(void)
{
    return "0.1.0";
}

int kyi_require_init(const char *call)
{
    if (kyi_rt.initialized) return KY_OK;
    return kyi_fail(KY_ERR_NOT_INIT, call, "called before ky_init or after ky_finalize");
}

int kyi_my_device(void)
{
    return kyi_rt.ngpus > 0 ? kyi_rt.gpus[0] : -1;
}

/* Number every node by its lowest world rank so node ids are 0..nnodes-1 in rank order. */
static int number_nodes(MPI_Comm world, MPI_Comm node_comm, int *node_of, int *nnodes)
{
    int leader, nranks;
    MPI_Comm_size(world, &nranks);
    int myrank;
    MPI_Comm_rank(world, &myrank);
    MPI_Allreduce(&myrank, &leader, 1, MPI_INT, MPI_MIN, node_comm);
    int *leaders = malloc(sizeof(int) * nranks);
    if (!leaders) return KY_ERR_NOMEM;
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, world);
    int n = 0;
    for (int r = 0; r < nranks; r++) {
        if (leaders[r] == r) n++;
        /* node id = how many leaders are below this rank's leader */
        int id = 0;
        for (int q = 0; q < leaders[r]; q++) id += (leaders[q] == q);
        node_of[r] = id;
    }
    *nnodes = n;
    free(leaders);
    return KY_OK;
}

static int count_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void bind_gpus(void)
{
    int visible = kyi_gpu_count();
    long per_rank = kyi_setting_long(KYI_SET_GPUS_PER_RANK);
    if (per_rank < 0) per_rank = 0;
    if (per_rank > KYI_MAX_GPUS_PER_RANK) per_rank = KYI_MAX_GPUS_PER_RANK;
    kyi_rt.ngpus = 0;
    if (visible <= 0) return;
    if (per_rank > visible) {
        KYI_WARN(KYI_SUB_RUNTIME, "KY_GPUS_PER_RANK=%ld but only %d GPUs are visible; using %d", per_rank,
                 visible, visible);
        per_rank = visible;
    }
    if ((long)kyi_rt.hw_local_nranks * per_rank > visible && kyi_rt.hw_local_rank == 0)
        KYI_WARN(KYI_SUB_RUNTIME,
                 "%d local ranks x %ld GPUs each exceeds the %d GPUs of this host: GPUs are shared",
                 kyi_rt.hw_local_nranks, per_rank, visible);
    for (long i = 0; i < per_rank; i++)
        kyi_rt.gpus[kyi_rt.ngpus++] = (int)((kyi_rt.hw_local_rank * per_rank + i) % visible);
}

int kyi_rt_init(int *argc, char ***argv)
{
    static const char *call = "ky_init";
    if (kyi_rt.initialized) return kyi_fail(KY_ERR_STATE, call, "Kyoyu is already initialised");
    kyi_config_load();

    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (down) return kyi_fail(KY_ERR_STATE, call, "MPI was already finalized");
    if (!up) {
        int provided;
        if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
            return kyi_fail(KY_ERR_MPI, call, "MPI_Init_thread failed");
        kyi_rt.mpi_owned = 1;
        if (provided < MPI_THREAD_MULTIPLE)
            KYI_WARN(KYI_SUB_RUNTIME,
                     "MPI provides thread level %d, not MPI_THREAD_MULTIPLE; calls from "
                     "several threads and the progress thread are serialised by Kyoyu",
                     provided);
    } else {
        int provided;
        MPI_Query_thread(&provided);
        if (provided < MPI_THREAD_MULTIPLE)
            KYI_WARN(KYI_SUB_RUNTIME,
                     "the application initialised MPI with thread level %d, not "
                     "MPI_THREAD_MULTIPLE; Kyoyu's progress thread needs it",
                     provided);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &kyi_rt.world);
    MPI_Comm_set_errhandler(kyi_rt.world, MPI_ERRORS_RETURN);
    MPI_Comm_rank(kyi_rt.world, &kyi_rt.rank);
    MPI_Comm_size(kyi_rt.world, &kyi_rt.nranks);
    gethostname(kyi_rt.host, sizeof kyi_rt.host);
    kyi_rt.host[sizeof kyi_rt.host - 1] = 0;
    int n = kyi_rt.nranks;

    kyi_rt.node_of = malloc(sizeof(int) * n);
    kyi_rt.hw_node_of = malloc(sizeof(int) * n);
    kyi_rt.gpu_of = malloc(sizeof(int) * n * KYI_MAX_GPUS_PER_RANK);
    if (!kyi_rt.node_of || !kyi_rt.hw_node_of || !kyi_rt.gpu_of)
        return kyi_fail(KY_ERR_NOMEM, call, "no memory for %d-rank tables", n);

    /* Physical host: shared-memory split. */
    MPI_Comm hw;
    MPI_Comm_split_type(kyi_rt.world, MPI_COMM_TYPE_SHARED, kyi_rt.rank, MPI_INFO_NULL, &hw);
    MPI_Comm_rank(hw, &kyi_rt.hw_local_rank);
    MPI_Comm_size(hw, &kyi_rt.hw_local_nranks);
    int hw_nnodes;
    int st = number_nodes(kyi_rt.world, hw, kyi_rt.hw_node_of, &hw_nnodes);
    if (st) return kyi_fail(st, call, "numbering hosts failed");

    const char *split = kyi_setting_str(KYI_SET_NODE_SPLIT);
    if (kyi_setting_is(KYI_SET_NODE_SPLIT, "rank")) {
        MPI_Comm_free(&hw);
        MPI_Comm_dup(MPI_COMM_SELF, &kyi_rt.node_comm);
        for (int r = 0; r < n; r++) kyi_rt.node_of[r] = r;
        kyi_rt.nnodes = n;
    } else if (atoi(split) > 0) {
        /* N: every N consecutive ranks of a host form a logical node (several nodes per host: the
         * cross-node paths and the hierarchical collectives with more than one rank per node) */
        int per = atoi(split);
        MPI_Comm_split(hw, kyi_rt.hw_local_rank / per, kyi_rt.rank, &kyi_rt.node_comm);
        MPI_Comm_free(&hw);
        st = number_nodes(kyi_rt.world, kyi_rt.node_comm, kyi_rt.node_of, &kyi_rt.nnodes);
        if (st) return kyi_fail(st, call, "numbering logical nodes failed");
    } else { /* "node" (the settings table allows nothing else) */
        kyi_rt.node_comm = hw;
        memcpy(kyi_rt.node_of, kyi_rt.hw_node_of, sizeof(int) * n);
        kyi_rt.nnodes = hw_nnodes;
    }
    kyi_rt.node = kyi_rt.node_of[kyi_rt.rank];
    MPI_Comm_rank(kyi_rt.node_comm, &kyi_rt.local_rank);
    MPI_Comm_size(kyi_rt.node_comm, &kyi_rt.local_nranks);

    int threads_per_rank = 1 + (kyi_setting_long(KYI_SET_PROGRESS_THREAD) != 0);
    kyi_rt.oversubscribed = kyi_rt.hw_local_nranks * threads_per_rank > count_cpus();
    /* A hybrid program whose OpenMP threads fill the cores would lose one to a progress thread that spins
     * while idle (host CG with 2 threads on 2 cores, 1 rank: 3.4 ms per iteration against 1.3 ms without the
     * progress thread). OMP_NUM_THREADS is what the program asked for (its first level); unset, the program
     * may not use OpenMP at all, and the engine keeps spinning. */
    const char *omp = getenv("OMP_NUM_THREADS");
    int omp_threads = omp ? atoi(omp) : 0;
    kyi_rt.cores_busy =
        kyi_rt.oversubscribed ||
        (omp_threads > 0 && kyi_rt.hw_local_nranks * (omp_threads + threads_per_rank - 1) > count_cpus());
    /* one rank alone gets no requests from others: its progress thread has nothing to spin for (a spinning
     * one cost host CG 3x on a 2-core machine that other processes also used) */
    if (n == 1) kyi_rt.cores_busy = 1;
    kyi_rt.cpus = count_cpus();
    kyi_rt.omp_threads = omp_threads > 0 ? omp_threads : 0;
    /* 16 ranks of one thread on 16 cores count as oversubscribed with their progress threads, which sleep
     * when idle; a node barrier that slept instead of spinning cost NPB CG class A 0.19 -> 0.49 s (8 -> 16
     * ranks) */
    kyi_rt.threads_fit = kyi_rt.hw_local_nranks * (omp_threads > 0 ? omp_threads : 1) <= kyi_rt.cpus;

    bind_gpus();
    int mine[KYI_MAX_GPUS_PER_RANK];
    for (int i = 0; i < KYI_MAX_GPUS_PER_RANK; i++) mine[i] = i < kyi_rt.ngpus ? kyi_rt.gpus[i] : -1;
    MPI_Allgather(mine, KYI_MAX_GPUS_PER_RANK, MPI_INT, kyi_rt.gpu_of, KYI_MAX_GPUS_PER_RANK, MPI_INT,
                  kyi_rt.world);

    kyi_rt.initialized = 1;
    kyi_config_warn_unknown(kyi_rt.rank);
    kyi_trace_init(); /* collective: every rank agrees whether KY_TRACE is on, clocks aligned if it is */
    KYI_INFO(KYI_SUB_RUNTIME, "rank %d of %d, node %d of %d (local %d of %d), %d GPU(s)%s%s", kyi_rt.rank, n,
             kyi_rt.node, kyi_rt.nnodes, kyi_rt.local_rank, kyi_rt.local_nranks, kyi_rt.ngpus,
             kyi_rt.ngpus ? ", first device " : "", kyi_rt.ngpus ? "bound" : "");
    return KY_OK;
}

int kyi_rt_finalize(void)
{
    if (!kyi_rt.initialized) return kyi_fail(KY_ERR_NOT_INIT, "ky_finalize", "Kyoyu is not initialised");
    kyi_trace_finalize(); /* collective: rank 0 writes every rank's timeline */
    MPI_Comm_free(&kyi_rt.node_comm);
    MPI_Comm_free(&kyi_rt.world);
    free(kyi_rt.node_of);
    free(kyi_rt.hw_node_of);
    free(kyi_rt.gpu_of);
    int owned = kyi_rt.mpi_owned;
    memset(&kyi_rt, 0, sizeof kyi_rt);
    if (owned) MPI_Finalize();
    return KY_OK;
}

int ky_initialized(void)
{
    return kyi_rt.initialized;
}

#define KYI_TOPO_GETTER(fn, field)        \
    int fn(void)                          \
    {                                     \
        KYI_CHECK(kyi_require_init(#fn)); \
        return kyi_rt.field;              \
    }
KYI_TOPO_GETTER(ky_rank, rank)
KYI_TOPO_GETTER(ky_nranks, nranks)
KYI_TOPO_GETTER(ky_node, node)
KYI_TOPO_GETTER(ky_nnodes, nnodes)
KYI_TOPO_GETTER(ky_local_rank, local_rank)
KYI_TOPO_GETTER(ky_local_nranks, local_nranks)
KYI_TOPO_GETTER(ky_ngpus, ngpus)

int ky_node_of(int rank)
{
    KYI_CHECK(kyi_require_init("ky_node_of"));
    if (rank < 0 || rank >= kyi_rt.nranks)
        return kyi_fail(KY_ERR_ARG, "ky_node_of", "rank %d is not in 0..%d", rank, kyi_rt.nranks - 1);
    return kyi_rt.node_of[rank];
}

int ky_gpu_device(int i, int *device)
{
    KYI_CHECK(kyi_require_init("ky_gpu_device"));
    if (!device) return kyi_fail(KY_ERR_ARG, "ky_gpu_device", "device is NULL");
    if (i < 0 || i >= kyi_rt.ngpus)
        return kyi_fail(KY_ERR_ARG, "ky_gpu_device", "GPU index %d is not in 0..%d", i, kyi_rt.ngpus - 1);
    *device = kyi_rt.gpus[i];
    return KY_OK;
}

int ky_gpu_reachable(int i, int rank, int j, int *reachable)
{
    static const char *call = "ky_gpu_reachable";
    KYI_CHECK(kyi_require_init(call));
    if (!reachable) return kyi_fail(KY_ERR_ARG, call, "reachable is NULL");
    if (rank < 0 || rank >= kyi_rt.nranks) return kyi_fail(KY_ERR_ARG, call, "rank %d out of range", rank);
    if (i < 0 || i >= kyi_rt.ngpus) return kyi_fail(KY_ERR_ARG, call, "this rank has no GPU %d", i);
    if (j < 0 || j >= KYI_MAX_GPUS_PER_RANK || kyi_rt.gpu_of[rank * KYI_MAX_GPUS_PER_RANK + j] < 0)
        return kyi_fail(KY_ERR_ARG, call, "rank %d has no GPU %d", rank, j);
    /* Device ordinals are comparable only on one host with the same CUDA_VISIBLE_DEVICES (kyrun keeps it). */
    *reachable = kyi_rt.node_of[rank] == kyi_rt.node &&
                 kyi_gpu_can_access_peer(kyi_rt.gpus[i], kyi_rt.gpu_of[rank * KYI_MAX_GPUS_PER_RANK + j]);
    return KY_OK;
}

int ky_default_threads(int *threads)
{
    static const char *call = "ky_default_threads";
    KYI_CHECK(kyi_require_init(call));
    if (!threads) return kyi_fail(KY_ERR_ARG, call, "threads is NULL");
    /* the host's ranks, not the logical node's: KY_NODE_SPLIT=rank does not add cores */
    int local = kyi_rt.hw_local_nranks > 0 ? kyi_rt.hw_local_nranks : 1, per = kyi_rt.cpus / local;
    if (per >= 2 && kyi_setting_long(KYI_SET_PROGRESS_THREAD) != 0) per--;
    int mine = per > 0 ? per : 1, *all = malloc(sizeof(int) * (size_t)kyi_rt.nranks);
    if (!all) return kyi_fail(KY_ERR_NOMEM, call, "no memory for %d ranks' counts", kyi_rt.nranks);
    int st = kyi_rt_allgather(&mine, sizeof mine, all);
    if (st == KY_OK)
        for (int r = 0; r < kyi_rt.nranks; r++)
            if (all[r] < mine) mine = all[r];
    free(all);
    if (st != KY_OK) return kyi_fail(st, call, "gathering the ranks' core counts failed");
    *threads = mine;
    return KY_OK;
}
