/* ky_stencil_gpu: the multi-GPU temporal-blocking stencil of seed 000 (Figs. 9-13) in four variants.
 * Shared declarations of the program's files: kernels.cu (stencil kernels, temporal-blocking steps, CPU
 * reference; the point update itself in stencil_point.h), tblock.cu and tblock_kernels.cuh (the kernels that
 * advance --tb steps per pass through memory; tblock_emu.cpp runs them on the CPU), variants.cu (the seed's
 * host-staged and GPUDirect P2P exchanges and the hand-written MPI+CUDA / NCCL baseline), main.cu (options,
 * the Kyoyu-array variant, checks, output).
 *
 * The grid is NZ x NY x NX doubles, z-distributed (rank r owns planes [r*NZ/R, (r+1)*NZ/R)), with the outer
 * faces fixed (Dirichlet: never written). A sub-domain keeps bt halo planes on each side; one exchange of bt
 * planes serves bt steps, computed redundantly on shrinking ranges (the seed's temporal blocking). */
#ifndef KY_STENCIL_GPU_H
#define KY_STENCIL_GPU_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>
#include <mpi.h>

#define SG_CUDA(call)                                                                                      \
    do {                                                                                                   \
        cudaError_t e_ = (call);                                                                           \
        if (e_ != cudaSuccess) sg_die("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
    } while (0)
#define SG_KY(call)                                                                       \
    do {                                                                                  \
        int s_ = (call);                                                                  \
        if (s_ != 0) sg_die("%s:%d: %s: %s", __FILE__, __LINE__, #call, ky_last_error()); \
    } while (0)

void sg_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
double sg_now(void);

typedef struct {
    int nx, ny, nz; /* global grid */
    int pts;        /* 7 or 27 */
    int bt;         /* temporal blocking: steps per exchange = halo planes */
    int steps;      /* total steps (a multiple of bt) */
    int zchunk;     /* planes each GPU thread marches (kernel tuning; 0: best measured, see tuning() in
                       kernels.cu) */
    int block_y;    /* thread rows per thread block: 2, 4 or 8 (0: best measured) */
    int rows; /* 27-point: grid rows per thread, 1, 2 or 4 (0: the one-row kernel without prefetch; -1: 4) */
    int smem; /* 27-point: planes staged in shared memory in 4 (1, 4) or 8 buffers; 0 off; -1 where it fits */
    int tb;   /* steps per pass through memory (temporal blocking inside the kernel, tblock.cu): 1 (the
                 single-step kernels) to 4; bt a multiple */
    int tb_by,
        tb_rows;   /* tb > 1: thread rows per block and grid rows per thread, 8 x 4, 8 x 2, 4 x 4,
                      16 x 2 (7-point) or 16 x 1, 32 x 1, 12 x 2 (27-point), a tile of 64 columns x tb_by *
                      tb_rows   rows, halos included (0: sg_tb_shape's choice); zchunk -1: persistent blocks */
    int tb_rolled; /* tb > 1: the first kernels, one plane per loop iteration (k_tb7, k_tb27), instead
                      of k_tb7u and k_tb27u (--tb-unroll 0) */
    int tb_staged; /* 27-point, tb 1..3: k_tb27s (tblock27s.cuh: planes copied to shared memory ahead,
                      rows summed in registers; --tb-kernel staged), tiles 8x2, 12x2, 6x4 (tb 1), 10x2,
                      6x3, 8x3, 6x4, 12x2 (tb 2), 8x2, 6x3, 12x2 (tb 3); the 7-point stencil keeps k_tb7u */
} sg_prob_t;

/* One GPU's part of the grid: planes [z0, z0+nz) owned, h halo planes each side, two buffers. */
typedef struct {
    double *src, *dst; /* (nz + 2h) * ny * nx doubles each; plane p is global z = z0 - h + p */
    int z0, nz, h;
    int dev;
    int has_lo, has_hi; /* a neighbour below / above (not the global boundary) */
    cudaStream_t s;
} sg_sub_t;

/* Phase times of one run, seconds (summed over the run): the categories of seed Figs. 12-13. compute:
 * kernels until the stream is idle; gpu_halo: GPU-to-GPU halo moves (peer copies, NCCL, Kyoyu's exchange,
 * which includes its own synchronisation); host_xfer: GPU<->host copies; mpi: host-side MPI messages;
 * sync: handshakes and barriers. */
typedef struct {
    double total, compute, gpu_halo, host_xfer, mpi, sync;
} sg_phase_t;

static inline size_t sg_plane(const sg_prob_t *p)
{
    return (size_t)p->nx * p->ny;
}

/* kernels.cu */
void sg_init_sub(const sg_prob_t *p, sg_sub_t *d);    /* initial values, halos included (async on d->s) */
void sg_block_steps(const sg_prob_t *p, sg_sub_t *d); /* bt steps, src/dst swapped after each (async) */
/* One step on local planes [lo, hi) (clipped off the fixed global faces by sg_clip), src -> dst on stream s.
 * src and dst are addressed by d's local plane numbering (plane 0 = global z0 - h). */
void sg_launch(const sg_prob_t *p, const sg_sub_t *d, cudaStream_t s, const double *src, double *dst, int lo,
               int hi);
void sg_clip(const sg_prob_t *p, const sg_sub_t *d, int *lo, int *hi);
/* Local planes [lo, hi) step tt (0 .. bt-1) of a block computes, clipped: the range shrinks by one plane
 * per step on each side with a neighbour (the redundant computation on the halo planes). */
void sg_step_range(const sg_prob_t *p, const sg_sub_t *d, int tt, int *lo, int *hi);
double sg_init_value(int z, int y, int x);
/* CPU reference: `steps` steps on the whole grid, result in a (NZ*NY*NX). */
void sg_cpu_run(const sg_prob_t *p, double *a);
double sg_flops_per_point(int pts);

/* tblock.cu: p->tb steps in one pass, src -> dst on stream s; step k (0 .. tb-1) of the pass computes local
 * planes [lo[k], hi[k]) (clipped; each range inside the one before, one plane less on each side except at a
 * fixed face, as sg_step_range gives them). Only the last step's planes are written to dst. */
void sg_launch_tb(const sg_prob_t *p, const sg_sub_t *d, cudaStream_t s, const double *src, double *dst,
                  const int *lo, const int *hi);
/* The blocked kernels' tile: thread rows per block and grid rows per thread (64 columns, by * rows rows). */
void sg_tb_shape(const sg_prob_t *p, int *by, int *rows);
/* The staged kernel runs this problem's passes (tb 1 too: then sg_launch_tb does the single steps). */
static inline int sg_tb_staged(const sg_prob_t *p)
{
    return p->tb_staged && p->pts == 27 && p->tb <= 3;
}

/* overlap.cu: the Kyoyu variant's block with the exchange behind the interior (see the file's top). */
typedef struct {
    double *lo[2], *hi[2]; /* per side a pair of 4*bt-plane buffers: local planes [0, 4h), [nz-2h, nz+2h) */
    cudaStream_t s2;       /* the interior's stream */
    cudaEvent_t ready, snap, inner;
} sg_edges_t;
int sg_overlap_ok(const sg_prob_t *p, const sg_sub_t *d);
void sg_edges_alloc(const sg_prob_t *p, const sg_sub_t *d, sg_edges_t *e);
void sg_edges_free(sg_edges_t *e);
/* Queue the snapshot and the interior on e->s2 after everything on d->s (d->src, d->dst end swapped bt
 * times, as after sg_block_steps). Then the caller exchanges the halos of the time-T buffer A. */
void sg_inner_steps(const sg_prob_t *p, sg_sub_t *d, sg_edges_t *e);
/* After the exchange: the edges on d->s, their planes into d->src once the interior is done. */
void sg_edge_steps(const sg_prob_t *p, sg_sub_t *d, sg_edges_t *e, const double *A);

/* variants.cu: one run of `steps` steps; phases when `phased` (streams synchronised per phase). The
 * sub-domain buffers are allocated by the caller. */
void sg_run_staged(const sg_prob_t *p, sg_sub_t *d, int phased, sg_phase_t *ph);   /* (a) seed Fig. 10 */
void sg_run_p2p(const sg_prob_t *p, sg_sub_t *d, int phased, sg_phase_t *ph);      /* (b) seed Fig. 11 */
void sg_run_baseline(const sg_prob_t *p, sg_sub_t *d, int phased, sg_phase_t *ph); /* (d) NCCL or MPI */
const char *sg_baseline_name(void);
void sg_variants_setup(const sg_prob_t *p, sg_sub_t *d); /* IPC handles, NCCL communicator */
void sg_variants_teardown(void);

#endif
