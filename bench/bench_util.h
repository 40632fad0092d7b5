/* Kyoyu benchmarks: shared helpers for bench/pingpong.c and bench/halo.c.
 *
 * nccl-tests-style flags (-b -e -f -n -w, -N for halo sizes, --json FILE, --mem host|gpu), size parsing
 * ("8", "64K", "256M", "1G"; powers of 1024), timers and medians, the table printed for people and the
 * JSON-lines records written for tools. The record schema is documented in docs/benchmarks.md; keep the two
 * in step. Benchmarks use only the public Kyoyu API, MPI and (for baselines) the CUDA runtime. */
#ifndef KY_BENCH_UTIL_H
#define KY_BENCH_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <mpi.h>

#include "kyoyu.h"

#ifdef KY_BENCH_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define BU_MAX_SIZES 16

typedef struct {
    size_t minbytes, maxbytes; /* -b, -e */
    double factor;             /* -f */
    int iters, warmup;         /* -n, -w */
    int halo_n[BU_MAX_SIZES];  /* -N 32,64,128 */
    int nhalo;
    const char *json; /* --json FILE (rank 0 appends one JSON object per line), NULL: none */
    int mem;          /* --mem host|gpu: KY_MEM_HOST or KY_MEM_GPU */
    int check;        /* -c 0|1: verify data (default 1) */
} bu_opts_t;

/* Fill defaults, then parse argv. Returns 0, or 1 after printing usage / an error (caller exits). */
int bu_parse(int argc, char **argv, bu_opts_t *o, const char *prog, const char *extra_usage);
/* "8" "64K" "256M" "1G" (K/M/G = 2^10/2^20/2^30, optional trailing B or iB). 0 on success, -1 on junk. */
int bu_parse_size(const char *s, size_t *out);
/* "8 B", "64 KiB", "256 MiB" into buf. */
const char *bu_fmt_size(size_t n, char *buf, size_t len);

/* Seconds, monotonic. */
double bu_now(void);
/* Median of v[0..n-1] (sorts v in place). */
double bu_median(double *v, int n);
/* Iterations for a message of n bytes: opts iters up to 64 KiB, then fewer (at least `min_iters`) so that
 * large messages do not dominate the run time. */
int bu_iters_for(const bu_opts_t *o, size_t n, int min_iters);

/* KY_BENCH_MACHINE, else the host name. Date as YYYY-MM-DD (UTC). */
const char *bu_machine(void);
const char *bu_date(void);
const char *bu_path_name(int path); /* "self" "shm" "ipc" "mpi" */
const char *bu_mem_name(int mem);   /* "host" "gpu" */

/* Abort the job with a message if a Kyoyu / MPI / CUDA call failed. */
#define BU_KY(call)                                                                                 \
    do {                                                                                            \
        int bu_st_ = (call);                                                                        \
        if (bu_st_ != KY_OK)                                                                        \
            bu_die(__FILE__, __LINE__, "%s: %s (%s)", #call, ky_strerror(bu_st_), ky_last_error()); \
    } while (0)
#define BU_MPI(call)                                                                              \
    do {                                                                                          \
        int bu_st_ = (call);                                                                      \
        if (bu_st_ != MPI_SUCCESS) bu_die(__FILE__, __LINE__, "%s: MPI error %d", #call, bu_st_); \
    } while (0)
#ifdef KY_BENCH_HAVE_CUDA
#define BU_CUDA(call)                                                                                     \
    do {                                                                                                  \
        cudaError_t bu_e_ = (call);                                                                       \
        if (bu_e_ != cudaSuccess) bu_die(__FILE__, __LINE__, "%s: %s", #call, cudaGetErrorString(bu_e_)); \
    } while (0)
#endif
void bu_die(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));

/* Spin until *flag >= want (volatile loads of local memory written by a remote put or a handler). Yields
 * the CPU after a short spin so oversubscribed runs (ranks + progress threads > cores) still progress, and
 * calls ky_poll when KY_PROGRESS_THREAD=0. Dies after 120 s naming `what`. */
void bu_wait_u64(volatile uint64_t *flag, uint64_t want, const char *what);

/* One measured point: the JSON record of docs/benchmarks.md. Negative doubles / NULL strings are "absent"
 * and left out of the record. */
typedef struct {
    const char *bench; /* "pingpong", "halo" */
    const char *kcase; /* "put_pp_host_shm" */
    const char *op;    /* "put_pp" */
    const char *mem;   /* "host" | "gpu" */
    const char *path;  /* "shm" | "ipc" | "mpi" | "self" */
    int ranks;
    size_t bytes;
    int iters;
    double lat_us, bw_GBs;
    const char *baseline;
    double base_lat_us, base_bw_GBs;
    double ratio; /* base_lat_us / lat_us: > 1 means Kyoyu is faster */
    double floor_us, floor_GBs;
    /* halo only (n < 0: absent) */
    int n;
    const char *face;
    long plan_hits, plan_misses;
    int verified; /* 1 yes, 0 failed, -1 not checked */
} bu_point_t;

void bu_point_init(bu_point_t *p);
/* Rank 0: append p as one JSON line to o->json (if set). */
void bu_json_write(const bu_opts_t *o, const bu_point_t *p);
/* Rank 0: table for people. Header once per case, then one row per point. */
void bu_table_header(const char *title, const char *baseline, const char *floor_note);
void bu_table_row(const bu_point_t *p);

/* Single-thread memcpy bandwidth of `bytes` in this process, GB/s (host floor). */
double bu_memcpy_GBs(size_t bytes);
/* Bytes of host memory still available (MemAvailable of /proc/meminfo; 0 if unknown). */
size_t bu_host_avail(void);
/* Collective, after ky_init, for the two-rank benchmarks: checks there are exactly 2 ranks and, with
 * use_gpu, that every rank has a GPU (then made current; its ordinal in *dev). Returns -1 to go on, or the
 * exit code the program should return (Kyoyu already finalised, the reason printed by rank 0). */
int bu_two_ranks(const char *prog, int use_gpu, int *dev);
#ifdef KY_BENCH_HAVE_CUDA
/* Collective over 2 ranks (GPU set): rank 0 copies `bytes` into rank 1's cudaMalloc buffer opened by CUDA
 * IPC (cudaMemcpyAsync on one stream: the cudaMemcpyPeerAsync transfer). Returns the best of a few runs in
 * GB/s on every rank, or -1 if IPC is not available. */
double bu_gpu_peer_GBs(size_t bytes);
#endif

#ifdef __cplusplus
}
#endif
#endif
