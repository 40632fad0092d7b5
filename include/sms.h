/* sms.h: the mSMS names (seed 000) on Kyoyu, so mSMS programs such as the seed's Fig. 7 stencil build
 * unchanged. Header-only, C and C++; link with libkyoyu.
 *
 *   mSMS                                        Kyoyu
 *   sms_startup(&argc, &argv)                   ky_init
 *   sms_shutdown()                              ky_finalize
 *   sms_alloc(bytes, node)                      ky_alloc
 *   sms_mapalloc(dim, div, elem, first, count)  ky_mapalloc (dim and div end with -1)
 *   sms_free(p)                                 ky_free
 *   sms_barrier() / sms_sync() / sms_sync_drop()  ky_barrier / ky_sync / ky_sync_drop
 *   sms_preload_array / sms_overload_array      ky_preload_array / ky_overload_array
 *   sms_lock(id) / sms_unlock(id)               ky_lock / ky_unlock
 *   sms_rank, sms_nprocs (sms_nproc)            ky_rank(), ky_nranks()
 *
 * mSMS programs do not check return values, so a failing call here prints Kyoyu's reason
 * ("sms_mapalloc: rank 1: ky_mapalloc: ...") and calls abort(); the launcher then ends the other ranks.
 * sms_rank, sms_nprocs and sms_nproc (the spelling of the seed's Fig. 10) are global ints, as in mSMS,
 * defined in libkyoyu (src/sms_names.c): ky_init (so sms_startup) sets them to the rank and the rank count,
 * and before it they hold 0 and 0. Being variables, they can be named in OpenMP data clauses, as the
 * seed's Figs. 9-11 do: firstprivate(bt, numgpus, sms_rank, sms_nprocs, st, size). Read them, never
 * assign them. */
#ifndef KYOYU_SMS_H
#define KYOYU_SMS_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "kyoyu.h"
#include "kyoyu/dsm.h"

KY_EXTERN_C_BEGIN
extern KY_API int sms_rank;   /* ky_rank() once ky_init has run */
extern KY_API int sms_nprocs; /* ky_nranks() once ky_init has run */
extern KY_API int sms_nproc;  /* the same as sms_nprocs */
KY_EXTERN_C_END

/* status 0: a pointer-returning call failed; its reason (with the code's text) is in ky_last_error alone. */
static inline void sms_die_(const char *call, int status)
{
    if (status == 0)
        fprintf(stderr, "%s: %s\n", call, ky_last_error());
    else
        fprintf(stderr, "%s: %s (%s)\n", call, ky_last_error(), ky_strerror(status));
    fflush(stderr);
    abort();
}

static inline int sms_check_(const char *call, int status)
{
    if (status < 0) sms_die_(call, status);
    return status;
}

/* Without OMP_NUM_THREADS the threads of each rank's parallel regions share the host's cores among its ranks
 * (ky_default_threads) instead of OpenMP's default, every core for every rank. */
static inline void sms_startup(int *argc, char ***argv)
{
    sms_check_("sms_startup", ky_init(argc, argv));
#ifdef _OPENMP
    if (!getenv("OMP_NUM_THREADS")) {
        int threads = 1;
        sms_check_("sms_startup", ky_default_threads(&threads));
        omp_set_num_threads(threads);
    }
#endif
}
static inline void sms_shutdown(void)
{
    sms_check_("sms_shutdown", ky_finalize());
}

static inline void *sms_alloc(size_t bytes, int node)
{
    void *p = NULL;
    sms_check_("sms_alloc", ky_alloc(bytes, node, &p));
    return p;
}

static inline void *sms_mapalloc(const int dim[], const int div[], size_t elem, int first, int count)
{
    void *p = ky_mapalloc(dim, div, elem, first, count);
    if (p == NULL) sms_die_("sms_mapalloc", 0);
    return p;
}

static inline void sms_free(void *p)
{
    sms_check_("sms_free", ky_free(p));
}
static inline void sms_barrier(void)
{
    sms_check_("sms_barrier", ky_barrier());
}
static inline void sms_sync(void)
{
    sms_check_("sms_sync", ky_sync());
}
static inline void sms_sync_drop(void)
{
    sms_check_("sms_sync_drop", ky_sync_drop());
}
static inline void sms_lock(int id)
{
    sms_check_("sms_lock", ky_lock(id));
}
static inline void sms_unlock(int id)
{
    sms_check_("sms_unlock", ky_unlock(id));
}

static inline void sms_preload_array(void *base, const size_t glb[], const size_t region[], int ndim,
                                     size_t elem, int rw)
{
    sms_check_("sms_preload_array", ky_preload_array(base, glb, region, ndim, elem, rw));
}

static inline void sms_overload_array(void *base, const size_t glb[], const size_t region[], int ndim,
                                      size_t elem, int rw)
{
    sms_check_("sms_overload_array", ky_overload_array(base, glb, region, ndim, elem, rw));
}

#endif
