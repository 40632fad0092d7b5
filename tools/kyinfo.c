/* kyinfo: what this Kyoyu is and where it runs. Three parts:
 *   build     Kyoyu's version, build type, compiler, MPI library, CUDA (version, architectures) and the
 *             optional libraries other runtimes use (NCCL, UCX, HDF5), on or off;
 *   machine   the job: ranks, nodes and their hosts, each rank's GPUs, which GPU pairs reach each other;
 *   settings  every KY_* setting with its value in effect, default and doc (what `kyrun --info` shows).
 * The build and the settings need no MPI launcher (no ky_init), so plain `kyinfo` prints those two; the
 * machine part starts Kyoyu, so it is asked for: `kyrun -n 4 kyinfo --machine` (alone: a job of one rank).
 * The build facts come from CMake as KYINFO_* definitions; this program is built with the library. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kyoyu.h"

#if KYINFO_CUDA
#include <cuda_runtime_api.h>
#endif

#ifndef KYINFO_BUILD_TYPE
#define KYINFO_BUILD_TYPE ""
#endif
#ifndef KYINFO_SANITIZE
#define KYINFO_SANITIZE ""
#endif
#ifndef KYINFO_CUDA_VERSION
#define KYINFO_CUDA_VERSION ""
#endif
#ifndef KYINFO_CUDA_ARCHS
#define KYINFO_CUDA_ARCHS ""
#endif

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: kyinfo [--build] [--machine] [--settings] [--all]\n"
        "       kyinfo --help\n"
        "\n"
        "What this Kyoyu is and where it runs. With no option: the build and the settings.\n"
        "  --build     version, build type, compiler, MPI library; CUDA, NCCL, UCX, HDF5: on or off, "
        "versions\n"
        "  --machine   starts Kyoyu: ranks, nodes and hosts, each rank's GPUs, GPU pairs that reach each\n"
        "              other directly. Run it under the launcher to see a job: kyrun -n 4 kyinfo --machine\n"
        "  --settings  every KY_* setting: value in effect, type, default, doc (what kyrun --info prints)\n"
        "  --all       all three\n"
        "  --help      this text\n");
}

static void print_build(void)
{
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(mpi, &len); /* one of the few MPI calls allowed before MPI_Init */
    char *nl = strchr(mpi, '\n');
    if (nl) *nl = 0;
    int mv = 0, ms = 0;
    MPI_Get_version(&mv, &ms);
    printf("Kyoyu %s build:\n", ky_version());
    printf("  %-10s %s%s%s\n", "build", *KYINFO_BUILD_TYPE ? KYINFO_BUILD_TYPE : "(no CMAKE_BUILD_TYPE)",
           *KYINFO_SANITIZE ? ", sanitizer " : "", KYINFO_SANITIZE);
#if defined(__clang__)
    printf("  %-10s clang %s\n", "compiler", __clang_version__);
#elif defined(__GNUC__)
    printf("  %-10s gcc %s\n", "compiler", __VERSION__);
#endif
    printf("  %-10s MPI %d.%d: %s\n", "MPI", mv, ms, mpi);
#if KYINFO_CUDA
    int rt = 0, drv = 0, ndev = 0;
    cudaRuntimeGetVersion(&rt);
    if (cudaDriverGetVersion(&drv) != cudaSuccess) drv = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess) ndev = 0;
    printf("  %-10s on: toolkit %s, runtime %d.%d, driver %d.%d, architectures %s, %d GPU(s) visible here\n",
           "CUDA", KYINFO_CUDA_VERSION, rt / 1000, rt % 1000 / 10, drv / 1000, drv % 1000 / 10,
           KYINFO_CUDA_ARCHS, ndev);
#else
    printf("  %-10s off (CPU-only build: GPU memory kinds return KY_ERR_UNSUPPORTED)\n", "CUDA");
#endif
    /* Kyoyu has its own NVLink collectives and MPI transport; these are named because users of other
     * runtimes look for them. */
    printf("  %-10s off (not used: GPU collectives are Kyoyu's own NVLink kernels)\n", "NCCL");
#ifdef KYINFO_UCX_VERSION
    printf("  %-10s on: UCX %s, the second transport between nodes (KY_TRANSPORT)\n", "UCX",
           KYINFO_UCX_VERSION);
#else
    printf("  %-10s off (not found at build time: between nodes Kyoyu runs over MPI)\n", "UCX");
#endif
    printf("  %-10s off (not used: Kyoyu has no file I/O layer yet)\n", "HDF5");
}

/* Every rank sends its host, node and GPUs to rank 0, which prints the job; then the GPU pairs that reach
 * each other directly (ky_gpu_reachable, asked by each rank about its own GPUs). */
static int print_machine(int *argc, char ***argv)
{
    int st = ky_init(argc, argv);
    if (st != KY_OK) {
        fprintf(stderr, "kyinfo: ky_init failed: %s\n", ky_last_error());
        return 1;
    }
    enum { MAXG = 16, HOST = 64 };
    int me = ky_rank(), n = ky_nranks();
    struct rankinfo {
        char host[HOST];
        int node, local, ngpus, dev[MAXG];
    } mine, *all = NULL;
    memset(&mine, 0, sizeof mine);
    int hl = 0;
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Get_processor_name(host, &hl);
    snprintf(mine.host, sizeof mine.host, "%s", host);
    mine.node = ky_node();
    mine.local = ky_local_rank();
    mine.ngpus = ky_ngpus() < MAXG ? ky_ngpus() : MAXG;
    for (int i = 0; i < mine.ngpus; i++) ky_gpu_device(i, &mine.dev[i]);
    if (me == 0) all = calloc((size_t)n, sizeof *all);
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);

    /* reach[r][i][j]: my GPU i reaches rank r's GPU j; gathered as one row of n*MAXG*MAXG per rank */
    size_t row = (size_t)n * MAXG * MAXG;
    unsigned char *reach = calloc(row, 1), *reach_all = me == 0 ? calloc(row * (size_t)n, 1) : NULL;
    int *ng = calloc((size_t)n, sizeof *ng);
    int ngmine = mine.ngpus;
    MPI_Allgather(&ngmine, 1, MPI_INT, ng, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < mine.ngpus; i++)
            for (int j = 0; j < ng[r]; j++) {
                int ok = 0;
                if (ky_gpu_reachable(i, r, j, &ok) == KY_OK && ok)
                    reach[((size_t)r * MAXG + i) * MAXG + j] = 1;
            }
    MPI_Gather(reach, (int)row, MPI_BYTE, reach_all, (int)row, MPI_BYTE, 0, MPI_COMM_WORLD);

    if (me == 0) {
        printf("machine: %d rank(s) on %d node(s)%s\n", n, ky_nnodes(),
               getenv("KY_NODE_SPLIT") ? " (logical nodes: KY_NODE_SPLIT is set)" : "");
        for (int node = 0; node < ky_nnodes(); node++) {
            int cnt = 0, first = -1;
            for (int r = 0; r < n; r++)
                if (all[r].node == node) {
                    cnt++;
                    if (first < 0) first = r;
                }
            printf("  node %d: host %s, %d rank(s):", node, first >= 0 ? all[first].host : "?", cnt);
            for (int r = 0; r < n; r++)
                if (all[r].node == node) printf(" %d", r);
            printf("\n");
        }
        int total = 0;
        for (int r = 0; r < n; r++) total += all[r].ngpus;
        if (!total) printf("  GPUs: none (no CUDA in this build, no GPU visible, or KY_GPUS_PER_RANK=0)\n");
        for (int r = 0; r < n && total; r++) {
            printf("  rank %d (node %d, local rank %d): %d GPU(s)", r, all[r].node, all[r].local,
                   all[r].ngpus);
            for (int i = 0; i < all[r].ngpus; i++) printf("%s device %d", i ? "," : ":", all[r].dev[i]);
            printf("\n");
        }
        int pairs = 0, shown = 0;
        for (int a = 0; a < n; a++)
            for (int i = 0; i < all[a].ngpus; i++)
                for (int b = 0; b < n; b++)
                    for (int j = 0; j < all[b].ngpus; j++) {
                        if (a > b || (a == b && i >= j)) continue; /* each unordered pair once */
                        if (!reach_all[(size_t)a * row + ((size_t)b * MAXG + i) * MAXG + j]) continue;
                        if (pairs++ == 0) printf("  GPU pairs that reach each other directly (rank.gpu):\n");
                        if (shown < 64) {
                            printf("    %d.%d <-> %d.%d\n", a, i, b, j);
                            shown++;
                        }
                    }
        if (pairs > shown) printf("    ... and %d more\n", pairs - shown);
        if (total && !pairs)
            printf(
                "  no two GPUs of the job reach each other directly (every GPU copy between ranks is "
                "staged)\n");
    }
    free(all);
    free(reach);
    free(reach_all);
    free(ng);
    st = ky_finalize();
    return st == KY_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    int build = 0, machine = 0, settings = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--build"))
            build = 1;
        else if (!strcmp(argv[i], "--machine"))
            machine = 1;
        else if (!strcmp(argv[i], "--settings"))
            settings = 1;
        else if (!strcmp(argv[i], "--all"))
            build = machine = settings = 1;
        else {
            fprintf(stderr,
                    "kyinfo: unknown option %s (one of --build, --machine, --settings, --all, --help)\n",
                    argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!build && !machine && !settings) build = settings = 1;
    /* Under a launcher only rank 0 prints the build and the settings; the rank is known from the launcher's
     * environment before ky_init (which only --machine calls). */
    int me = 0;
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r) r = getenv("PMI_RANK");
    if (r) me = atoi(r);
    if (build && me == 0) print_build();
    if (machine) {
        if (build && me == 0) printf("\n");
        int rc = print_machine(&argc, &argv);
        if (rc) return rc;
    }
    if (me != 0) return 0;
    if ((build || machine) && settings) printf("\n");
    if (settings) {
        int st = ky_config_print(stdout);
        if (st != KY_OK) {
            fprintf(stderr, "kyinfo: ky_config_print failed: %s\n", ky_strerror(st));
            return 1;
        }
    }
    if (build && !machine) printf("\n(the machine: kyrun -n N kyinfo --machine)\n");
    return 0;
}
