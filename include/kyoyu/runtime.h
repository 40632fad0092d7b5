/* Kyoyu runtime: process model, bootstrap, topology and configuration (docs/architecture.md).
 * One OS process per rank, started by MPI. A rank drives ky_ngpus() GPUs (KY_GPUS_PER_RANK, bound by local
 * rank). KY_NODE_SPLIT=rank makes every rank its own node so cross-node paths run on one host. */
#ifndef KYOYU_RUNTIME_H
#define KYOYU_RUNTIME_H

#include <stdio.h>
#include "kyoyu/export.h"
#include "kyoyu/status.h"

KY_EXTERN_C_BEGIN

/* Initialise Kyoyu (and MPI with MPI_THREAD_MULTIPLE unless the application already initialised it, in
 * which case Kyoyu adopts it and leaves MPI_Finalize to the application). Collective over MPI_COMM_WORLD. */
KY_API int ky_init(int *argc, char ***argv);
/* Collective. Frees every segment still alive; finalises MPI only if ky_init initialised it. */
KY_API int ky_finalize(void);
/* 1 between ky_init and ky_finalize, else 0. */
KY_API int ky_initialized(void);

/* Topology. Each returns the value (>= 0) or KY_ERR_NOT_INIT. */
KY_API int ky_rank(void);
KY_API int ky_nranks(void);
KY_API int ky_node(void); /* index of this rank's node, 0 .. ky_nnodes()-1 */
KY_API int ky_nnodes(void);
KY_API int ky_local_rank(void); /* index of this rank among the ranks of its node */
KY_API int ky_local_nranks(void);
KY_API int ky_node_of(int rank); /* node of any rank, or KY_ERR_ARG */
KY_API int ky_ngpus(void);       /* GPUs this rank drives (0 without CUDA or without GPUs) */
/* CUDA device ordinal of this rank's i-th GPU (0 <= i < ky_ngpus()). */
KY_API int ky_gpu_device(int i, int *device);
/* Whether this rank's GPU i can load/store/copy directly to GPU j of `rank` (same node, peer access over
 * NVLink or PCIe). *reachable = 1 or 0. */
KY_API int ky_gpu_reachable(int i, int rank, int j, int *reachable);

/* Collective. The OpenMP threads per rank for a program that did not set OMP_NUM_THREADS (kycc's programs and
 * sms.h's sms_startup take it): the cores this rank may run on shared among the ranks of its host, less one
 * for the rank's progress thread where two or more remain, at least 1; the least over all ranks, since a
 * team of ranks x threads has one count. OpenMP's own default, every core for every rank, oversubscribes a
 * host that runs several ranks. */
KY_API int ky_default_threads(int *threads);

/* Configuration: the one table of KY_* settings (name, value in effect, default, one-line doc). */
KY_API int ky_config_get(const char *name, const char **value);
/* Print every setting with its value, default and doc (what `kyrun --info` shows). Works before ky_init. */
KY_API int ky_config_print(FILE *out);

/* Library version string, e.g. "0.1.0". */
KY_API const char *ky_version(void);

KY_EXTERN_C_END

#endif
