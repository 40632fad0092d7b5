/* ky_stencil on the DSM: the faults-only (seed 000 Fig. 7), preload/overload (App. 1) and barrier variants.
 *
 * Both arrays come from ky_mapalloc with the z axis cut into nranks blocks, so rank r is the home of its
 * slab. One OpenMP parallel region runs the whole time loop; collective DSM calls follow the seed's
 * pattern (omp barrier, omp master, ky_*, omp barrier: App. 2).
 *
 * Page boundaries: faults and preload compute the neighbours' planes redundantly and throw those writes
 * away (ky_sync_drop, ky_overload_array). A page that holds the end of one slab and the start of the next
 * is homed at the first slab's rank; the DSM knows each element's owner and keeps every rank's writes to
 * its own planes through both calls (docs/dsm.md, "Owners and homes"), so every variant runs at any plane
 * size. The barrier variant writes only its own planes and ends every step with ky_barrier. */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "stencil.h"

/* Slabs start on page boundaries: no page is shared by two ranks (only a check of the homes uses it). */
static int slabs_page_aligned(const st_params_t *p)
{
    size_t page = ky_page_size(), slab = (size_t)p->block * p->plane * sizeof(double);
    return p->nranks == 1 || (page && slab % page == 0);
}

/* The seed's all-threads all-ranks synchronisation; *st collects the first failure. */
#define ST_COLLECTIVE(call, st)                            \
    do {                                                   \
        _Pragma("omp barrier") _Pragma("omp master")       \
        {                                                  \
            int s_ = (call);                               \
            if (s_ != KY_OK && *(st) == KY_OK) *(st) = s_; \
        }                                                  \
        _Pragma("omp barrier")                             \
    } while (0)

/* Halo regions (bt planes below and above the slab, clipped to the grid) of `u`; count 0 if none. */
static void halo_regions(const st_params_t *p, int *lo_z, int *lo_n, int *hi_n)
{
    *lo_z = ST_MAX(p->st - p->bt, 0);
    *lo_n = p->st < p->ed ? p->st - *lo_z : 0;
    *hi_n = p->st < p->ed ? ST_MIN(p->ed + p->bt, p->nz) - p->ed : 0;
}

static int halo_call(int overload, double *u, const st_params_t *p)
{
    size_t glb[3] = {(size_t)p->nz, (size_t)p->ny, (size_t)p->nx};
    int lo_z, lo_n, hi_n, s = KY_OK;
    halo_regions(p, &lo_z, &lo_n, &hi_n);
    if (lo_n > 0) {
        size_t reg[3] = {(size_t)lo_n, (size_t)p->ny, (size_t)p->nx};
        double *b = u + (size_t)lo_z * p->plane;
        s = overload ? ky_overload_array(b, glb, reg, 3, sizeof(double), 1)
                     : ky_preload_array(b, glb, reg, 3, sizeof(double), 1);
    }
    if (s == KY_OK && hi_n > 0) {
        size_t reg[3] = {(size_t)hi_n, (size_t)p->ny, (size_t)p->nx};
        double *b = u + (size_t)p->ed * p->plane;
        s = overload ? ky_overload_array(b, glb, reg, 3, sizeof(double), 1)
                     : ky_preload_array(b, glb, reg, 3, sizeof(double), 1);
    }
    return s;
}

/* The time loop of one variant. Returns the array holding the result; *status the first failure. */
static double *time_loop(int variant, double *A, double *B, const st_params_t *p, int *status)
{
    double *result = NULL;
#pragma omp parallel
    {
        double *src = A, *dst = B, *tmp;
        if (variant == ST_PRELOAD) {
            /* App. 1 (1): the bt-deep halos of both arrays, read-write, once; writes to them never fault */
#pragma omp master
            {
                int s = halo_call(0, A, p);
                if (s == KY_OK) s = halo_call(0, B, p);
                if (s != KY_OK) *status = s;
            }
            /* the compute interval fetches nothing (every halo page is held): homes need no snapshots */
            ST_COLLECTIVE(ky_sync_nofetch(), status);
        }
        if (variant == ST_BARRIER) {
            for (int t = 0; t < p->nt && *status == KY_OK; t++) {
                if (p->st < p->ed) st_step(src, dst, 0, p, ST_MAX(p->st, 1), ST_MIN(p->ed, p->nz - 1));
                tmp = src, src = dst, dst = tmp;
                ST_COLLECTIVE(ky_barrier(), status);
            }
        } else {
            for (int t = 0; t < p->nt && *status == KY_OK; t += p->bt) {
                int nb = ST_MIN(p->bt, p->nt - t); /* the last block may be shorter */
                for (int tt = nb - 1; tt >= 0; tt--) {
                    if (p->st < p->ed)
                        st_step(src, dst, 0, p, ST_MAX(p->st - tt, 1), ST_MIN(p->ed + tt, p->nz - 1));
                    tmp = src, src = dst, dst = tmp;
                }
                if (variant == ST_FAULTS) {
                    ST_COLLECTIVE(ky_sync_drop(), status); /* Fig. 7: drop the neighbours' pages */
                } else if (t + nb < p->nt) {
                    /* App. 1 (2): everyone done; refresh the halo of the next block's source; everyone done.
                     * The seed uses sms_sync for both; the promises say what it knows: no home stores while
                     * halos are refreshed, no fetches while computing, so homes never pay for protection. */
                    ST_COLLECTIVE(ky_sync_nostore(), status); /* refresh next: no home stores */
#pragma omp master
                    {
                        int s = halo_call(1, src, p);
                        if (s != KY_OK) *status = s;
                    }
                    ST_COLLECTIVE(ky_sync_nofetch(), status); /* compute next: no fetch, as above */
                }
            }
            /* preload: the cached halos (with the redundant writes) go before anyone reads the result */
            if (variant == ST_PRELOAD) ST_COLLECTIVE(ky_sync_drop(), status);
        }
#pragma omp master
        result = src;
    }
    return result;
}

int st_dsm_open(int variant, const st_params_t *p, st_arrays_t *a, st_result_t *r)
{
    (void)variant; /* every DSM variant runs on every grid */
    memset(r, 0, sizeof *r);
    memset(a, 0, sizeof *a);
    r->verified = -1;
    r->time_s = -1;
    int dims[4] = {p->nz, p->ny, p->nx, -1}, divs[4] = {p->nranks, 1, 1, -1};
    double *A = ky_mapalloc(dims, divs, sizeof(double), 0, p->nranks);
    double *B = A ? ky_mapalloc(dims, divs, sizeof(double), 0, p->nranks) : NULL;
    if (A == NULL || B == NULL) {
        snprintf(r->note, sizeof r->note, "ky_mapalloc: %s", ky_last_error());
        if (A) ky_free(A);
        return 2;
    }
    if (slabs_page_aligned(p) && p->st < p->ed &&
        (ky_home_of(A + (size_t)p->st * p->plane) != p->rank ||
         ky_home_of(B + (size_t)p->ed * p->plane - 1) != p->rank)) {
        /* a wrong home would make the variant silently slow (every own plane a remote page): say so */
        fprintf(stderr, "ky_stencil: rank %d: home of slab [%d,%d) is %d/%d, expected %d\n", p->rank, p->st,
                p->ed, ky_home_of(A + (size_t)p->st * p->plane), ky_home_of(B + (size_t)p->ed * p->plane - 1),
                p->rank);
    }
    a->a = A, a->b = B;
    return 0;
}

int st_dsm_rep(int variant, const st_params_t *p, st_arrays_t *a, st_result_t *r)
{
    double *A = a->a, *B = a->b;
#pragma omp parallel
    {
        st_fill(A, 0, p, p->st, p->ed);
        st_fill(B, 0, p, p->st, p->ed);
    }
    int status = ky_barrier();
    if (status == KY_OK) {
        ky_dsm_stats_reset();
        double t0 = MPI_Wtime();
        a->result = time_loop(variant, A, B, p, &status);
        double dt = MPI_Wtime() - t0, mx;
        MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r->time_s < 0 || mx < r->time_s) r->time_s = mx;
    }
    int bad = status != KY_OK, anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anybad) {
        snprintf(r->note, sizeof r->note, "%s", status != KY_OK ? ky_last_error() : "failed on another rank");
        fprintf(stderr, "ky_stencil: rank %d: %s: %s\n", p->rank, st_variant_name(variant), r->note);
        ky_barrier();
        ky_free(B);
        ky_free(A);
        memset(a, 0, sizeof *a);
        return 2;
    }
    /* statistics of this (so far the last) repetition, summed over ranks */
    ky_dsm_stats_t s;
    ky_dsm_stats(&s);
    uint64_t mine[ST_NSTATS] = {s.read_faults,     s.write_faults,     s.pages_fetched,  s.bytes_fetched,
                                s.pages_preloaded, s.pages_overloaded, s.pages_pushed,   s.twins,
                                s.diffs,           s.diff_bytes,       s.home_snapshots, s.pages_served,
                                s.bytes_served,    s.invalidations,    s.drops,          s.barriers,
                                s.syncs,           s.lock_acquires};
    MPI_Allreduce(mine, r->s, ST_NSTATS, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&s.coherence_s, &r->coherence_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (p->verbose) ky_dsm_stats_print();
    r->ran = 1;
    return 0;
}

void st_dsm_close(const st_params_t *p, st_arrays_t *a, const double *ref, st_result_t *r)
{
    if (a->a == NULL) return;
    /* own slab: home pages, plain reads (barrier variant: a shared boundary page is fetched merged) */
    if (ref != NULL && r->ran) st_check_slab(p, a->result + (size_t)p->st * p->plane, ref, r);
    ky_barrier();
    ky_free(a->b);
    ky_free(a->a);
    memset(a, 0, sizeof *a);
}
