/* ky_stencil's baseline: the same temporal blocking written by hand with MPI, as an MPI user would.
 *
 * Each rank keeps its slab [st, ed) plus up to bt halo planes on each side, planes [lo, hi) with
 * lo = max(st - bt, 0), hi = min(ed + bt, nz), in two private arrays. Every block of bt steps starts with
 * two MPI_Sendrecv of bt whole planes (contiguous, one datatype per plane): my first planes to the rank
 * below while its last planes come in, and the other way round. The rest is the DSM variants' loop. All
 * planes of both arrays start with the initial values, so the boundary planes (z = 0, nz-1) and the
 * boundary rows of the halo planes are right in both arrays, as the global arrays of the DSM are.
 * Needs every slab to hold at least bt planes (else a halo would span two ranks). */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "stencil.h"

int st_mpi_open(const st_params_t *p, st_arrays_t *a, st_result_t *r)
{
    memset(r, 0, sizeof *r);
    memset(a, 0, sizeof *a);
    r->verified = -1;
    r->time_s = -1;
    int last_st = (p->nranks - 1) * p->block;
    if (p->nranks > 1 && (p->block < p->bt || last_st >= p->nz)) {
        snprintf(r->note, sizeof r->note,
                 "every slab but the last needs at least bt = %d planes, and the last one plane (slabs of %d "
                 "planes, the last %d)",
                 p->bt, p->block, p->nz - last_st);
        return 2;
    }
    a->lo = ST_MAX(p->st - p->bt, 0), a->hi = ST_MIN(p->ed + p->bt, p->nz);
    size_t n = (size_t)(a->hi - a->lo) * p->plane;
    a->a = malloc(n * sizeof(double)), a->b = malloc(n * sizeof(double));
    if (a->a == NULL || a->b == NULL) {
        snprintf(r->note, sizeof r->note, "out of memory for two arrays of %zu doubles", n);
        free(a->a);
        free(a->b);
        memset(a, 0, sizeof *a);
        return 2;
    }
    return 0;
}

int st_mpi_rep(const st_params_t *p, st_arrays_t *a, st_result_t *r)
{
    int lo = a->lo, hi = a->hi;
    double *X = a->a, *Y = a->b, *result = NULL;
    MPI_Datatype plane;
    MPI_Type_contiguous((int)p->plane, MPI_DOUBLE, &plane);
    MPI_Type_commit(&plane);
    int down = p->rank > 0 ? p->rank - 1 : MPI_PROC_NULL;
    int up = p->rank < p->nranks - 1 ? p->rank + 1 : MPI_PROC_NULL;
    int n_lo = p->st - lo;                     /* my lower halo: from the rank below */
    int n_hi = hi - p->ed;                     /* my upper halo: from the rank above */
    int n_down = ST_MIN(p->bt, p->nz - p->st); /* the rank below's upper halo: my first planes */
    int n_up = ST_MIN(p->bt, p->ed);           /* the rank above's lower halo: my last planes */
    int err = MPI_SUCCESS;
#pragma omp parallel
    {
        st_fill(X, lo, p, lo, hi);
        st_fill(Y, lo, p, lo, hi);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
#pragma omp parallel
    {
        double *src = X, *dst = Y, *tmp;
        for (int t = 0; t < p->nt; t += p->bt) {
            int nb = ST_MIN(p->bt, p->nt - t);
#pragma omp barrier
#pragma omp master
            {
                double *mine = src + (size_t)(p->st - lo) * p->plane;
                int e1 = MPI_Sendrecv(mine, down == MPI_PROC_NULL ? 0 : n_down, plane, down, 1,
                                      src + (size_t)(p->ed - lo) * p->plane, n_hi, plane, up, 1,
                                      MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                int e2 =
                    MPI_Sendrecv(src + (size_t)(p->ed - n_up - lo) * p->plane, up == MPI_PROC_NULL ? 0 : n_up,
                                 plane, up, 2, src, n_lo, plane, down, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (e1 != MPI_SUCCESS || e2 != MPI_SUCCESS) err = e1 != MPI_SUCCESS ? e1 : e2;
            }
#pragma omp barrier
            for (int tt = nb - 1; tt >= 0; tt--) {
                st_step(src, dst, (size_t)lo, p, ST_MAX(p->st - tt, 1), ST_MIN(p->ed + tt, p->nz - 1));
                tmp = src, src = dst, dst = tmp;
            }
        }
#pragma omp master
        result = src;
    }
    double dt = MPI_Wtime() - t0, mx;
    MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r->time_s < 0 || mx < r->time_s) r->time_s = mx;
    MPI_Type_free(&plane);
    a->result = result;
    r->ran = 1;
    if (err != MPI_SUCCESS) {
        snprintf(r->note, sizeof r->note, "MPI_Sendrecv failed (%d)", err);
        return 2;
    }
    return 0;
}

void st_mpi_close(const st_params_t *p, st_arrays_t *a, const double *ref, st_result_t *r)
{
    if (a->a == NULL) return;
    if (ref != NULL && r->ran) st_check_slab(p, a->result + (size_t)(p->st - a->lo) * p->plane, ref, r);
    free(a->a);
    free(a->b);
    memset(a, 0, sizeof *a);
}
