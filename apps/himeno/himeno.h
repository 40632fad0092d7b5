/* ky_himeno: the Himeno benchmark (RIKEN, the 19-point point-Jacobi of the pressure Poisson equation, single
 * precision, 34 flops per point) on Kyoyu's one-sided layer, as seed 004 ran it on GPUs over GASNet/TCA.
 * Shared declarations of the program's files:
 *   args.c      options, sizes, the process grid (decompositions i, j, k, ij, 3d, --dims) and its checks
 *   kernel_cpu.c  the arrays' initial values, the OpenMP kernel, face packing, the serial reference
 *   kernel_gpu.cu the CUDA kernel, packing and GPU memory (gpu_none.c in builds without CUDA)
 *   halo_ky.c   halos by ky_put_strided / ky_put on Kyoyu segments, with put + flag completion
 *   halo_mpi.c  the hand-written MPI baseline (GPU faces staged through pinned host buffers)
 *   gosa.c      the residual summed per iteration: active messages to rank 0 and back, or ky_allreduce;
 *               or every iteration's value kept and the sums taken after the loop (--gosa-defer)
 *   overlap.c   the update range in parts for --overlap: the face slabs the neighbours need, the interior
 *   main.c      the iteration loop, the check against the serial reference, the output and JSON
 *
 * Layout: the global grid is I x J x K points (boundaries included; the original's mimax, mjmax, mkmax),
 * p[i][j][k] with k fastest. Ranks form a dims[0] x dims[1] x dims[2] grid; each owns a block of points and
 * keeps one ghost layer on each side (local index 0 and n+1; rows padded to 32 floats). Points on the global
 * boundary are never updated. The original's copy of wrk2 back into p is a swap of two buffers (same values
 * bit for bit). */
#ifndef KY_HIMENO_H
#define KY_HIMENO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HG_FLOPS_PER_POINT 34.0
/* Bytes each updated point must move per iteration with ping-pong buffers: 13 floats read (p once, a[4],
 * b[3], c[3], bnd, wrk1) and one written (the new p): 14 x 4 B. The original's copy-back would add 8. */
#define HG_BYTES_PER_POINT 56.0

enum { HG_GOSA_AM = 1, HG_GOSA_ALLREDUCE = 2, HG_GOSA_BOTH = 3 };
enum { HG_VAR_KY = 1, HG_VAR_MPI = 2 };
/* How one rank's GPU iterations follow one another (--chain): the host reads gosa after every kernel (sync,
 * the only way with several ranks), or the kernels run back to back with gosa kept on the GPU and read after
 * the loop: plain launches, Programmatic Dependent Launch, CUDA graphs, graphs with PDL edges. */
enum { HG_CHAIN_SYNC = 0, HG_CHAIN_PLAIN, HG_CHAIN_PDL, HG_CHAIN_GRAPH, HG_CHAIN_GRAPH_PDL };

typedef struct {
    int grid[3];    /* points I, J, K, boundaries included */
    char size[8];   /* XS .. XL, or "grid" */
    int dims[3];    /* process grid */
    char decomp[8]; /* i, j, k, ij, 3d, or dims (given by --dims) */
    int iters;      /* timed iterations */
    int warmup;     /* untimed iterations, then the fields start again from their initial values */
    double target;  /* > 0: the original's procedure: 3 rehearsal iterations size the loop to target s */
    int gpu;        /* CUDA kernels, arrays and segments in GPU memory */
    int gosa;       /* HG_GOSA_* */
    int pack;       /* bit d set: faces of dimension d are packed and moved by one ky_put */
    int variants;   /* HG_VAR_* bits, run in this order: ky, then mpi */
    int check;      /* rank 0 runs the serial reference and compares gosa (1e-6 relative) */
    int threads;    /* OpenMP threads per rank (0: as OMP_NUM_THREADS says) */
    int quiet;      /* no per-rank phase table */
    int block[5];   /* GPU kernel: bx, by, bz, points per thread along i, float4 along k (--tune measures) */
    int weak;       /* --weak: grid multiplied by dims (weak scaling) */
    int nogosa;     /* --diag-nogosa: GPU kernel without the gosa reduction (diagnostic) */
    int tune;       /* GPU: time a few shapes at start-up and keep the fastest (default unless --block) */
    int chain;      /* HG_CHAIN_*: one rank's GPU iterations (several ranks: always sync) */
    int sweep;      /* 1: odd iterations take the i planes in reverse order (L2 reuse between iterations) */
    float bcoef;    /* value of b[0..2] (0 in the benchmark; nonzero makes the edge halos matter) */
    int overlap;  /* ky variant, several ranks: face slabs first, their halos sent while the interior runs */
    int defer;    /* ky variant: every iteration's local gosa kept (GPU: on the GPU), summed after the loop */
    int tb;       /* GPU, one rank, chained: iterations per pass of the temporally blocked kernel (1: none) */
    int tb_tile;  /* its tile: 0 32x16 threads (k x j), 1 64x16, 2 32x16 in 64 registers (2 blocks per SM) */
    int tb_chunk; /* its i planes per block */
    const char *json; /* append one record per variant */
} hg_opts_t;

/* One rank's block. Local index l along dimension d is global lo[d] + l - 1. */
typedef struct {
    int rank;
    int coord[3];
    int lo[3], n[3];  /* owned global points [lo, lo + n) */
    int ext[3];       /* n + 2 (k: rounded up to a multiple of 32; the rest of the row is padding) */
    int ub[3], ue[3]; /* local range updated by the kernel (global interior points only) */
    int nbr[3][2];    /* neighbour rank per dimension and side (0: lower, 1: upper), -1 at the boundary */
    size_t vol;       /* ext[0] * ext[1] * ext[2] */
    size_t slot;      /* floats in one packed-face receive slot: the largest face */
} hg_block_t;

/* A box of local indices, half open. */
typedef struct {
    int lo[3], hi[3];
} hg_box_t;

/* The coefficient arrays of one block (host or GPU memory; vol floats per plane of a, b, c). */
typedef struct {
    float *a, *b, *c, *bnd, *wrk1;
} hg_coef_t;

/* Phase times of a run, seconds summed over the timed iterations. */
typedef struct {
    double total, kernel, halo, reduce;
} hg_phase_t;

/* args.c */
int hg_parse(int argc, char **argv, int nranks, hg_opts_t *o, char *err, size_t errlen); /* 0, 1 (help), -1 */
void hg_usage(FILE *out);
void hg_block_of(const hg_opts_t *o, int rank, hg_block_t *b);
const char *hg_variant_name(int v);

/* kernel_cpu.c (host memory) */
void hg_init_values(const hg_opts_t *o, const hg_block_t *b, float *p, hg_coef_t *cf);
double hg_cpu_jacobi(const hg_block_t *b, const hg_coef_t *cf, const float *p, float *q, float omega);
void hg_cpu_pack(const hg_block_t *b, const float *f, const hg_box_t *x, float *buf);
void hg_cpu_unpack(const hg_block_t *b, float *f, const hg_box_t *x, const float *buf);
double hg_block_sum(const hg_block_t *b, const float *p); /* sum of the owned interior points */
/* The original algorithm on the whole grid, serially (the check): gosa of the last of `iters` iterations
 * summed in double (gosa_d) and in float in the original's loop order (gosa_f), and the sum of p's
 * interior points after them. Returns 0, or -1 when out of memory. */
int hg_reference(const int grid[3], int iters, float bcoef, double *gosa_d, float *gosa_f, double *psum);

/* kernel_gpu.cu (gpu_none.c without CUDA): every call returns 0 or -1 with a message in err. */
int hg_gpu_count(void);
int hg_gpu_select(int device, char *err, size_t errlen);
int hg_gpu_alloc(void **ptr, size_t bytes, char *err, size_t errlen);
int hg_gpu_host_alloc(void **ptr, size_t bytes, char *err, size_t errlen); /* pinned */
void hg_gpu_free(void *ptr);
void hg_gpu_host_free(void *ptr);
int hg_gpu_copy(void *dst, const void *src, size_t bytes, char *err, size_t errlen); /* any direction */
/* Queued after the kernel on its stream; complete at the next hg_gpu_sync. */
int hg_gpu_copy_async(void *dst, const void *src, size_t bytes, char *err, size_t errlen);
/* The kernel: q = p + omega * ss on the update range; gosa (sum of ss^2 in double) into ring[slot], and
 * ring[slot ^ 1] zeroed for the next iteration (hg_gpu_gosa_reset zeroes both before the first). */
int hg_gpu_gosa_reset(double *ring, char *err, size_t errlen);
int hg_gpu_jacobi(const hg_block_t *b, const hg_coef_t *cf, const float *p, float *q, float omega,
                  double *ring, int slot, char *err, size_t errlen);
/* n iterations back to back (HG_CHAIN_* mode other than sync), p in f0 first, then f1, ...: the field is in
 * f[n & 1] after them and the last iteration's gosa in ring[(n - 1) & 1] once hg_gpu_sync returns. */
int hg_gpu_chain(const hg_block_t *b, const hg_coef_t *cf, float *f0, float *f1, int n, float omega,
                 double *ring, int mode, int sweep, char *err, size_t errlen);
/* The same n iterations by the temporally blocked kernel (tb_kernel.cuh): passes of tb iterations (the last
 * one shorter), tile 0 (32x16), 1 (64x16) or 2 (32x16, two blocks per SM), chunk i planes per block. ring:
 * HG_TB_RING_SLOTS doubles, iteration m's gosa in ring[m % HG_TB_RING_SLOTS] (the last: m = n - 1); the field
 * ends in f[*cur]. */
#define HG_TB_RING_SLOTS 6
int hg_gpu_chain_tb(const hg_block_t *b, const hg_coef_t *cf, float *f0, float *f1, int n, float omega,
                    double *ring, int tb, int tile, int chunk, int *cur, char *err, size_t errlen);
/* --overlap: the kernel on a part of the block (b's update range replaced by the part's: hg_block_part),
 * thin: the dimension along which the part is one point thick (a face slab), -1 for the interior; gosa added
 * into ring[slot] as hg_gpu_jacobi does; rev: the i planes in reverse order; pdl: launched with Programmatic
 * Dependent Launch. Queued on the stream; nothing for an empty part. */
int hg_gpu_jacobi_part(const hg_block_t *b, int thin, const hg_coef_t *cf, const float *p, float *q,
                       float omega, double *ring, int slot, int rev, int pdl, char *err, size_t errlen);
/* An event after the work queued so far, and the host's wait for it (later work goes on). */
int hg_gpu_mark(char *err, size_t errlen);
int hg_gpu_wait_mark(char *err, size_t errlen);
int hg_gpu_zero(void *ptr, size_t bytes, char *err, size_t errlen); /* queued */
int hg_gpu_pack(const hg_block_t *b, const float *f, const hg_box_t *x, float *buf, char *err, size_t errlen);
int hg_gpu_unpack(const hg_block_t *b, float *f, const hg_box_t *x, const float *buf, char *err,
                  size_t errlen);
int hg_gpu_sync(char *err, size_t errlen);
/* The kernel's block (bx threads along k, a multiple of 32; by along j; bz along i), points per thread
 * along i, and vec: four k per thread with 16-byte accesses; -1 if out of range. */
int hg_gpu_set_shape(int bx, int by, int bz, int ich, int vec);
/* 0: the kernel leaves gosa out (--diag-nogosa: what the per-iteration reduction costs; gosa is then 0). */
void hg_gpu_set_gosa(int on);
/* Device-to-device copy bandwidth of a 1 GiB buffer, GB/s (read + write bytes per second): the floor. */
double hg_gpu_copy_bw(void);

/* halo_ky.c / halo_mpi.c: exchange the ghost layers of field buffer `buf` (0 or 1). */
typedef struct hg_ky_halo hg_ky_halo_t;
int hg_ky_halo_create(const hg_opts_t *o, const hg_block_t *b, hg_ky_halo_t **h, float **field0,
                      float **field1);
int hg_ky_halo_exchange(hg_ky_halo_t *h, int buf, uint64_t seq);
void hg_ky_halo_destroy(hg_ky_halo_t *h);
typedef struct hg_mpi_halo hg_mpi_halo_t;
int hg_mpi_halo_create(const hg_opts_t *o, const hg_block_t *b, hg_mpi_halo_t **h);
int hg_mpi_halo_exchange(hg_mpi_halo_t *h, float *field);
void hg_mpi_halo_destroy(hg_mpi_halo_t *h);
/* The faces of dimension d, side s (0 lower, 1 upper): what this rank sends, and where it lands in the
 * neighbour's local indices (the neighbour's block nb), and the ghost box this rank receives into. */
void hg_face_boxes(const hg_block_t *b, const hg_block_t *nb, int d, int s, hg_box_t *send, hg_box_t *dst,
                   hg_box_t *recv);
size_t hg_box_count(const hg_box_t *x);

/* gosa.c */
int hg_gosa_setup(const hg_opts_t *o);
/* Sum of every rank's local gosa: *h_local (host), or read from d_local (GPU) when h_local is NULL.
 * ky_allreduce sums d_local into d_sum on GPU runs (the GPU-buffer path), h_local on host runs. */
int hg_gosa_sum(const hg_opts_t *o, int mode, const double *h_local, double *d_local, double *d_sum,
                uint64_t iter, double *out);
int hg_gosa_mpi(const hg_opts_t *o, const double *h_local, double *d_local, double *out);
/* --gosa-defer: the sums over all ranks of n iterations' local values (host), out[m] for iteration m: by
 * active-message mode every rank's values gathered and added in rank order (rank 0's first: the same double
 * additions as the per-iteration reduction, so the same values), by ky_allreduce one collective on the
 * vector; both: compared as per iteration. */
int hg_gosa_sum_all(const hg_opts_t *o, int mode, const double *local, size_t n, double *out);

/* overlap.c: the update range of b in parts. The slabs: for each dimension and side with a neighbour, the
 * points at local index ub or ue - 1 there (what that neighbour's ghost layer needs), each slab without the
 * points of the slabs before it, so that every point is in exactly one part; thin[s] is slab s's dimension.
 * The interior: the rest, whose stencil reads no ghost. Returns the number of nonempty slabs (at most 6). */
int hg_split_update(const hg_block_t *b, hg_box_t slab[6], int thin[6], hg_box_t *interior);
/* b with its update range replaced by the box x (the block that hg_cpu_jacobi / hg_gpu_jacobi_part update).
 */
void hg_block_part(const hg_block_t *b, const hg_box_t *x, hg_block_t *part);

/* main.c */
void hg_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
double hg_now(void);

#define HG_KY(call)                                                                        \
    do {                                                                                   \
        int s_ = (call);                                                                   \
        if (s_ != 0) hg_fail("%s:%d: %s: %s", __FILE__, __LINE__, #call, ky_last_error()); \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif
