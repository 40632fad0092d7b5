/* ky_stencil: shared declarations of the stencil application (apps/stencil).
 *
 * A 3-D grid u[z][y][x] (x fastest) of nz x ny x nx doubles, cut into z slabs: rank r owns planes
 * [st, ed) with block = ceil(nz / nranks), st = r*block (ky_mapalloc's distribution with divs {nranks,1,1}).
 * The boundary (z, y or x = 0 or n-1) never changes. Every variant runs nt steps with temporal blocking of
 * width bt (seed 000 Figs. 6-7): a block of bt steps computes, at step tt = bt-1 .. 0, planes
 * [max(st-tt, 1), min(ed+tt, nz-1)), i.e. bt-1 planes of the neighbours redundantly, so halos move once per
 * block. Variants (kernel.c has the arithmetic, dsm_variants.c and mpi_variant.c the data movement):
 *   faults   DSM, halos by page faults, ky_sync_drop every block (Fig. 7)
 *   preload  DSM, halos preloaded read-write once, ky_sync + ky_overload_array + ky_sync_nofetch per block
 *            (App. 1; the compute interval fetches nothing, so homes skip snapshots)
 *   barrier  DSM, no blocking: one step then ky_barrier (diffs back home); works with any slab alignment
 *   mpi      private slabs with bt halo planes, MPI_Sendrecv of bt planes per block (the baseline) */
#ifndef KY_STENCIL_H
#define KY_STENCIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kyoyu.h"
#include "kyoyu/dsm.h"

#define ST_MAX(a, b) ((a) > (b) ? (a) : (b))
#define ST_MIN(a, b) ((a) < (b) ? (a) : (b))

enum { ST_MPI, ST_FAULTS, ST_PRELOAD, ST_BARRIER, ST_NVARIANTS };

typedef struct {
    int nx, ny, nz, nt, bt, points; /* grid, steps, blocking width, 7 or 27 */
    int threads, reps, check, verbose;
    int weak;           /* > 0: per-rank N^3 block (nx = ny = N, nz = N * nranks) */
    const char *json;   /* --json FILE: rank 0 appends JSON lines */
    const char *record; /* "dsm" (default) or "stencil" (weak-scaling records) */
    int rank, nranks;
    int block, st, ed; /* this rank's slab [st, ed) */
    size_t plane;      /* ny * nx */
} st_params_t;

/* Statistics of ky_dsm_stats_t as summed over ranks (counts) and the largest coherence time. */
#define ST_NSTATS 18
typedef struct {
    double time_s; /* slowest rank, best of reps */
    uint64_t s[ST_NSTATS];
    double coherence_s; /* largest over ranks */
    int verified;       /* 1 ok, 0 mismatch, -1 not checked */
    long wrong;
    double max_err;
    int ran; /* 0: skipped (why in note) */
    char note[320];
} st_result_t;
/* indices into st_result_t.s, in ky_dsm_stats_t's order */
enum {
    SS_RFAULTS,
    SS_WFAULTS,
    SS_PAGES,
    SS_BYTES,
    SS_PRELOADED,
    SS_OVERLOADED,
    SS_PUSHED,
    SS_TWINS,
    SS_DIFFS,
    SS_DIFF_BYTES,
    SS_SNAPSHOTS,
    SS_SERVED,
    SS_BYTES_SERVED,
    SS_INVALIDATIONS,
    SS_DROPS,
    SS_BARRIERS,
    SS_SYNCS,
    SS_LOCKS
};

/* kernel.c */
double st_init_value(int z, int y, int x);
/* Fill planes [z0, z1) of u (u holds planes from zoff on) with the initial values. Inside a parallel region
 * or not (orphaned omp for). */
void st_fill(double *u, size_t zoff, const st_params_t *p, int z0, int z1);
/* One step on planes [z0, z1) (interior y, x only), dst from src; both arrays hold planes from zoff on.
 * Must be reached by every thread of the team (omp for with its closing barrier). */
void st_step(const double *src, double *dst, size_t zoff, const st_params_t *p, int z0, int z1);
/* Serial reference of the whole grid, written another way (plain triple loops, one step at a time):
 * returns a malloc'd nz*ny*nx array after nt steps, or NULL if memory is short. */
double *st_reference(const st_params_t *p);
int st_flops_per_point(int points);

/* One variant's arrays, kept from open to close so that every repetition runs all variants one after the
 * other (a shared machine's drift then hits them alike; best of reps per variant). */
typedef struct {
    double *a, *b;  /* DSM: the two global arrays; MPI: private planes [lo, hi) */
    int lo, hi;     /* MPI: planes held */
    double *result; /* the array holding the last repetition's result */
} st_arrays_t;

/* dsm_variants.c: variant ST_FAULTS, ST_PRELOAD or ST_BARRIER. Collective. open returns 0, or 2 when the
 * variant cannot run (why in r->note, r->ran = 0); rep runs one timed repetition (keeps the best time and
 * the statistics of the last) and returns 0 or 2 on failure (arrays freed); close checks the result
 * against ref (this rank's reference slab; NULL: no check) and frees the arrays. */
int st_dsm_open(int variant, const st_params_t *p, st_arrays_t *a, st_result_t *r);
int st_dsm_rep(int variant, const st_params_t *p, st_arrays_t *a, st_result_t *r);
void st_dsm_close(const st_params_t *p, st_arrays_t *a, const double *ref, st_result_t *r);
/* mpi_variant.c: the same three steps for the MPI baseline */
int st_mpi_open(const st_params_t *p, st_arrays_t *a, st_result_t *r);
int st_mpi_rep(const st_params_t *p, st_arrays_t *a, st_result_t *r);
void st_mpi_close(const st_params_t *p, st_arrays_t *a, const double *ref, st_result_t *r);
/* Compare this rank's slab with ref (relative tolerance 1e-12); fills r->verified/wrong/max_err, summed over
 * ranks. Collective. */
void st_check_slab(const st_params_t *p, const double *mine, const double *ref, st_result_t *r);

/* report.c */
const char *st_variant_name(int v);
void st_print_header(const st_params_t *p);
void st_print_row(const st_params_t *p, int v, const st_result_t *r, const st_result_t *mpi);
void st_json_write(const st_params_t *p, int v, const st_result_t *r, const st_result_t *mpi);

#endif
