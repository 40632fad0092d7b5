/* Internal: the sparse layer's matrix and exchange plans, shared by its files. A matrix keeps its rows on
 * the host always (the reader and generators build them there; CPU kernels use them) and, with GPU
 * placement, a device copy. An exchange plan maps the rows' global columns onto an "extended" vector: the
 * padded gathered vector of the allgather scheme, or [local piece | ghosts] of the halo scheme. */
#ifndef KYI_SPARSE_SPARSE_H
#define KYI_SPARSE_SPARSE_H

#include <stdint.h>
#include "kyoyu/comm.h"
#include "kyoyu/coll.h"
#include "kyoyu/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { KYI_XCH_ALLGATHER = 0, KYI_XCH_HALO = 1, KYI_XCH_COUNT = 2 };

typedef struct kyi_sp_plan {
    int kind;
    int64_t next;    /* length of the extended vector */
    int64_t loc_off; /* where this rank's piece starts in it */
    int *col;        /* host: columns mapped into the extended vector (local_nnz) */
    void *d_col;     /* GPU copy */
    int nbuf;        /* halo: 2 extended vectors used alternately (pipelined CG) */
    double *ext[2];  /* the extended vectors (host or GPU); halo: segment memory */
    ky_seg_t seg[2];
    /* allgather */
    int64_t maxloc;
    int algo;
    ky_coll_plan_t ag[2];
    /* halo */
    int nsend, nrecv;
    int *send_peer;     /* [nsend] */
    int64_t *send_off;  /* [nsend + 1] into send_idx / sendbuf */
    uint64_t *send_dst; /* [nsend] byte offset of my entries in the peer's extended vector */
    int *send_idx;      /* local indices to pack */
    void *d_send_idx;
    double *sendbuf; /* host or GPU */
    int *recv_peer;  /* [nrecv] */
    int64_t nghost;
    ky_seg_t flagseg; /* host: nranks uint64 per rank, flag[s] = last epoch received from s */
    volatile uint64_t *flags;
    uint64_t *epoch_src; /* registered-free source of the flag values */
    uint64_t epoch;
    /* GPU SpMV kernel of this plan, chosen by timing candidates on the matrix when the plan is uploaded
     * (gpu/spmv_gpu.cu): gk 0 rows (V lanes per row), 1 rows unrolled, 2 column blocks with the vector's
     * block in shared memory (its own copy of the matrix: d_bptr, d_bcol 16-bit, d_bval) */
    int gk, gV, gK, gthreads, gR, gnc, gW;
    unsigned ggrid;
    size_t gsmem;
    void *d_bptr, *d_bcol, *d_bval;
} kyi_sp_plan_t;

struct kyi_csr {
    int64_t n, nnz;
    int64_t row_lo, row_hi, nloc, lnnz;
    int64_t *starts; /* [nranks + 1] first row of every rank */
    int memkind, device;
    int64_t *rowptr, *gcol; /* host, public form (ky_csr_local) */
    double *val;
    int *rp32;              /* host row pointers as int for the kernels */
    void *d_rowptr, *d_val; /* GPU copies */
    int vec_width;          /* GPU: threads per row of the SpMV kernel */
    int ag_algo;            /* allgather algorithm a new allgather plan uses */
    kyi_sp_plan_t *plan[KYI_XCH_COUNT];
    void *gws; /* GPU solver workspace (stream, vectors, scalars, allreduce plans), kept between solves */
    /* solo: every row on this rank alone (the agglomerated solve's matrix, agglom.c): no exchange, no
     * collective. agg: the agglomerated solve's state (root: that matrix), made at its first use */
    int solo;
    struct kyi_sp_agg *agg;
    int agg_choice; /* KY_CG_AGGLOMERATE's answer for this matrix: -1 not asked yet, 0 distributed, 1 one */
};
typedef struct kyi_csr kyi_csr_t;

/* Several ranks work on A's solves (0: one rank, or A is an agglomerated matrix held by one rank). */
int kyi_sp_multi(const kyi_csr_t *A);
/* Collective: every rank agrees on status, unless A is solo (then the status as it is). */
int kyi_sp_agree_on(const kyi_csr_t *A, const char *call, int status);
/* Frees a matrix's local parts (plans, GPU copies, rows, the agglomerated state). */
void kyi_sp_csr_free_local(kyi_csr_t *A);

/* Agglomerated solve (agglom.c). The choice (collective once per matrix, rank 0's answer; cost model in
 * agglom.c): 1 to solve on rank 0 alone, or a negative status. The model: µs per iteration of ranks on gpus.
 */
int kyi_sp_agg_choose(kyi_csr_t *A);
double kyi_sp_agg_model_us(int64_t n, int64_t nnz, int gpus, int ranks, double gbs, double sync_us);
/* Collective: rank 0 gathers b (and x), solves the whole system alone, every rank gets its piece of x and
 * rank 0's result and status. */
int kyi_sp_cg_agglomerated(kyi_csr_t *A, const double *b, double *x, const ky_cg_opts_t *o,
                           ky_cg_result_t *res);
void kyi_sp_agg_free(kyi_csr_t *A);

/* Host rows of this rank while a matrix is built (reader, generators). */
typedef struct {
    int64_t n, row_lo, row_hi;
    int64_t *rowptr, *col;
    double *val;
} kyi_rows_t;

/* Partition [0, n) over the ranks by rows or by the per-row counts (NULL: rows). starts: nranks + 1. */
void kyi_sp_partition(int64_t n, const int64_t *row_nnz, int part, int nranks, int64_t *starts);
/* Collective: every rank agrees on status (the minimum); a rank that was fine records that another failed. */
int kyi_sp_agree(const char *call, int status);
/* Collective: a matrix from rows (taken over: freed or kept). */
int kyi_sp_from_rows(const char *call, kyi_rows_t *rows, const ky_csr_opts_t *opts, ky_csr_t *out);
/* Build (once) and return the exchange plan of a kind; collective. */
int kyi_sp_plan_get(kyi_csr_t *A, int kind, kyi_sp_plan_t **out);
void kyi_sp_plan_free(kyi_csr_t *A, kyi_sp_plan_t *P);
/* Exchange the local piece at ext[buf] + loc_off to the other ranks' extended vectors (collective).
 * GPU: stream is synchronised first (halo) or the collective is enqueued on it (allgather). */
int kyi_sp_exchange(kyi_csr_t *A, kyi_sp_plan_t *P, int buf, void *stream);
/* Rebuild the allgather's coll plan for another algorithm (collective). */
int kyi_sp_plan_set_algo(kyi_csr_t *A, kyi_sp_plan_t *P, int algo);

/* Generators (gen.c, npb.c): fill this rank's rows; collective only through kyi_sp_partition's inputs. */
int kyi_sp_gen_poisson(const char *call, int64_t m, int points, int part, kyi_rows_t *rows);
int kyi_sp_gen_standin(const char *call, const char *name, int part, kyi_rows_t *rows);
int kyi_sp_gen_npb(const char *call, char cls, int part, kyi_rows_t *rows);

/* CPU solver (cg_cpu.c) and kernels. */
int kyi_sp_cg_cpu(kyi_csr_t *A, const double *b, double *x, const ky_cg_opts_t *o, ky_cg_result_t *res);
void kyi_sp_spmv_cpu(const kyi_csr_t *A, const int *col, const double *xext, double *y);
double kyi_sp_spmv_dot_cpu(const kyi_csr_t *A, const int *col, const double *xext, double *y,
                           const double *p);
/* OpenMP threads of the host kernels (csr.c). */
int kyi_sp_threads(void);

/* GPU back end (gpu/sp_gpu.cu, or gpu/sp_gpu_none.c: every call KY_ERR_UNSUPPORTED). */
int kyi_sp_gpu_built(void);
int kyi_sp_gpu_upload(kyi_csr_t *A);
int kyi_sp_gpu_plan_upload(kyi_csr_t *A, kyi_sp_plan_t *P);
/* Choose the plan's SpMV kernel (gpu/spmv_gpu.cu); called by the upload. */
int kyi_sp_gpu_spmv_tune(kyi_csr_t *A, kyi_sp_plan_t *P);
int kyi_sp_gpu_free(void *p);
int kyi_sp_gpu_alloc(kyi_csr_t *A, size_t bytes, void **p);
int kyi_sp_gpu_pack(kyi_csr_t *A, kyi_sp_plan_t *P, const double *src, void *stream);
int kyi_sp_gpu_spmv(kyi_csr_t *A, kyi_sp_plan_t *P, const double *xext, double *y, void *stream);
int kyi_sp_gpu_copy(double *dst, const double *src, int64_t n, void *stream);
int kyi_sp_gpu_sync(void *stream); /* NULL: the whole device */
int kyi_sp_cg_gpu(kyi_csr_t *A, const double *b, double *x, const ky_cg_opts_t *o, ky_cg_result_t *res);
/* NPB's vector steps on GPU vectors: out[0] = x'z, out[1] = z'z (local), then x = s z. */
int kyi_sp_gpu_dot2(const double *x, const double *z, int64_t n, double out[2]);
int kyi_sp_gpu_scale(double *x, const double *z, double s, int64_t n);
int kyi_sp_gpu_fill(double *x, double v, int64_t n);
void kyi_sp_gpu_ws_free(kyi_csr_t *A);

double kyi_sp_now(void);

#ifdef __cplusplus
}
#endif

#endif
