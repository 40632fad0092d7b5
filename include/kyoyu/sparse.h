/* Kyoyu sparse: distributed CSR matrices, SpMV with an exchange planned once, and conjugate gradient (the
 * sparse layer of docs/architecture.md; seed 001, the TCA CG paper).
 *
 * A matrix is split by rows (1-D): rank r holds rows [row_lo, row_hi) with their nonzeros, balanced by rows
 * or by nonzeros, in host memory (OpenMP kernels) or on the rank's GPU (CUDA kernels). Vectors are the
 * rank's local piece (row_hi - row_lo doubles) in the matrix's placement. Every call that creates, reads or
 * solves is collective over all ranks; a failure on any rank makes every rank return an error naming the
 * rank, the call and the cause (for a bad Matrix Market file: the file, the line and the problem).
 *
 * Exchange schemes of the SpMV inside CG:
 *   KY_CG_ALLGATHER  the seed's: allgather of the whole direction vector (seed's four algorithms selectable)
 *                    and one allreduce per dot product
 *   KY_CG_HALO       each rank receives only the entries its rows touch, one-sided puts planned once
 *   KY_CG_PIPELINED  pipelined CG (Ghysels-Vanroose): one fused allreduce per iteration, overlapped with the
 *                    SpMV (halo exchange)
 *   KY_CG_GRAPH      GPU only: the whole iteration (kernels and stream-ordered collectives) captured once in
 *                    a CUDA graph and replayed
 * How many ranks work (KY_CG_AGGLOMERATE): every rank its rows, or, where one GPU beats the cross-GPU
 * synchronisation of several (a cost model on the matrix's size: small matrices), rank 0 alone on the whole
 * matrix, gathered once; the arguments and every rank's piece of x are the same either way. */
#ifndef KYOYU_SPARSE_H
#define KYOYU_SPARSE_H

#include <stddef.h>
#include <stdint.h>
#include "kyoyu/export.h"
#include "kyoyu/status.h"
#include "kyoyu/comm.h"

KY_EXTERN_C_BEGIN

typedef struct kyi_csr *ky_csr_t;

typedef enum { KY_PART_ROWS = 0, KY_PART_NNZ = 1 } ky_part_t;
typedef enum {
    KY_CG_ALLGATHER = 0,
    KY_CG_HALO = 1,
    KY_CG_PIPELINED = 2,
    KY_CG_GRAPH = 3,
    KY_CG_SCHEME_COUNT = 4
} ky_cg_scheme_t;

/* How a matrix is distributed and where it lives. Zero-initialised = rows balanced, host memory. */
typedef struct {
    ky_part_t part;
    ky_memkind_t memkind; /* the rank's first GPU for KY_MEM_GPU */
} ky_csr_opts_t;

/* Collective. Reads a Matrix Market file (coordinate, real or integer, general or symmetric; a file without
 * the %%MatrixMarket banner is read as real general). Symmetric files give both triangles; duplicates of a
 * general file are summed. Refused with KY_ERR_ARG and "FILE:LINE: problem" on every rank: pattern, complex,
 * Hermitian, skew-symmetric or array files, a non-square matrix, a malformed or truncated file, an index out
 * of range, a matrix declared symmetric whose two triangles disagree. opts may be NULL. */
KY_API int ky_csr_read_mm(const char *file, const ky_csr_opts_t *opts, ky_csr_t *out);
/* Collective. Generates a matrix by name, each rank only its rows:
 *   "poisson7:N", "poisson27:N"  3-D Poisson on an N^3 grid, Dirichlet (SPD)
 *   "npb:S|W|A|B|C"             NPB CG's makea (its random outer products, shift included: indefinite)
 *   "standin:NAME"              a banded SPD stand-in with the N and nnz of the seed's matrices: nasa2910,
 *                               s1rmq4m1, nd3k, Pres_Poisson, nd6k, smt */
KY_API int ky_csr_generate(const char *spec, const ky_csr_opts_t *opts, ky_csr_t *out);
/* Collective. A matrix from each rank's own rows [row_lo, row_hi) of an n x n matrix, given as host CSR
 * with global 0-based column indices (copied). Ranks' ranges must tile [0, n) in rank order. */
KY_API int ky_csr_create(int64_t n, int64_t row_lo, int64_t row_hi, const int64_t *rowptr,
                         const int64_t *colidx, const double *vals, const ky_csr_opts_t *opts, ky_csr_t *out);
/* Collective. Frees the matrix, its exchange plans and their segments. NULL is ignored. */
KY_API int ky_csr_destroy(ky_csr_t A);

typedef struct {
    int64_t n, nnz;         /* global */
    int64_t row_lo, row_hi; /* this rank's rows */
    int64_t local_nnz;
    ky_memkind_t memkind;
    int64_t halo_recv; /* entries this rank receives per halo exchange (0 before it is planned) */
    int halo_peers;    /* ranks it receives them from */
} ky_csr_info_t;
KY_API int ky_csr_info(ky_csr_t A, ky_csr_info_t *info);
/* This rank's rows as host CSR (row pointers local, columns global). Pointers stay valid until destroy. */
KY_API int ky_csr_local(ky_csr_t A, const int64_t **rowptr, const int64_t **colidx, const double **vals);
/* Collective: the rows [lo, hi) every rank owns, for distributing a right-hand side read elsewhere. */
KY_API int ky_csr_rows_of(ky_csr_t A, int rank, int64_t *lo, int64_t *hi);

/* Collective. y = A x on this rank's pieces (matrix placement; stream: a cudaStream_t for GPU matrices or
 * NULL). The halo exchange is planned at the first call and replayed. */
KY_API int ky_spmv(ky_csr_t A, const double *x, double *y, void *stream);

typedef struct {
    int scheme;         /* ky_cg_scheme_t */
    int allgather_algo; /* KY_CG_ALLGATHER: a ky_coll_algo_t (0: auto; the seed used recursive doubling) */
    int max_iters;      /* > 0 */
    double rtol;        /* stop when ||r|| / ||r0|| < rtol (or at round-off, 1e-15); 0: run exactly max_iters
                           (the seed's 1000) */
    int x0_zero;        /* 1: start from x = 0 (x's contents ignored), else from the given x */
    int allow_indefinite; /* 1: p'Ap <= 0 is no breakdown (NPB's shifted matrix); non-finite values still are
                           */
    int timers;           /* 1: per-phase times (GPU: a stream synchronisation after every phase) */
    int check_every;      /* GPU with rtol: look at the residual every k iterations (0: 10) */
} ky_cg_opts_t;

/* Per-rank results; times in seconds on this rank (the seed's Figs. 9-10 phases). */
typedef struct {
    int iterations;      /* CG iterations done */
    int converged;       /* rtol reached */
    int breakdown;       /* 1: p'Ap <= 0 or a non-finite value; the solve stopped there */
    double rel_residual; /* ||r|| / ||r0|| of the recurrence at exit */
    double norm0;        /* ||r0|| */
    double t_total;
    double t_spmv, t_dot, t_axpy, t_exchange, t_allreduce;
    int launches_per_iter; /* GPU: kernel launches (graph: nodes) and host synchronisations per iteration */
    int syncs_per_iter;
    double t_setup;   /* GPU: before the first iteration (plans, workspace, r0, graph capture), not in
                         t_total; the host back end counts r0 in t_total and plans in neither. An agglomerated
                         solve adds its gathers of the matrix, b and x and the scatter of x */
    int active_ranks; /* ranks whose GPU (or cores) ran the iterations: every rank, or 1 where the solve was
                         agglomerated on rank 0 (KY_CG_AGGLOMERATE; then every rank reports rank 0's result)
                       */
} ky_cg_result_t;

/* Fills opts with the defaults: KY_CG_HALO, auto allgather, 1000 iterations, rtol 0, x0 = 0. */
KY_API int ky_cg_opts_default(ky_cg_opts_t *opts);
/* Collective. Solves A x = b by CG from x (or 0); b and x are this rank's pieces in the matrix's placement.
 * A breakdown (A not positive definite) returns KY_ERR_ARG with the iteration and p'Ap in ky_last_error()
 * and res->breakdown = 1, x holding the last finite iterate. res may be NULL. */
KY_API int ky_cg(ky_csr_t A, const double *b, double *x, const ky_cg_opts_t *opts, ky_cg_result_t *res);
/* "allgather", "halo", "pipelined", "graph"; "?" otherwise. And back: -1 for an unknown name. */
KY_API const char *ky_cg_scheme_name(int scheme);
KY_API int ky_cg_scheme_parse(const char *name);

/* ---- NPB CG ------------------------------------------------------------------------------------------- */

typedef struct {
    char cls; /* 'S', 'W', 'A', 'B', 'C' */
    int64_t na;
    int nonzer, niter;
    double shift, zeta_ref;
} ky_npb_class_t;
/* NPB CG's parameters and verification value for class c; KY_ERR_ARG for an unknown class. */
KY_API int ky_npb_class(char c, ky_npb_class_t *out);
/* Collective. NPB CG's benchmark on A = ky_csr_generate("npb:c"): niter inverse-power steps of 25 CG
 * iterations each (scheme and timers from opts, iterations fixed), zeta = shift + 1/(x'z). *verified: zeta
 * within 1e-10 of NPB's value. *seconds: the timed part, as NPB times it. */
KY_API int ky_npb_cg_run(ky_csr_t A, char cls, const ky_cg_opts_t *opts, double *zeta, int *verified,
                         double *seconds, ky_cg_result_t *res);

KY_EXTERN_C_END

#endif
