/* mpc_rt.c: run-time of MpC programs translated by kycc (include/mpc.h says what each call means; kycc links
 * it into every program it builds). Shared declarations register one allocation function per unit from a
 * constructor; mpc_init runs them after ky_init, so every rank makes the same collective allocations in the
 * same order (every rank runs the same binary, so the constructors' order is the same). */
#include <stdio.h>
#include <stdlib.h>

#define __KYCC__ 1 /* mpc.h is for kycc's units; this file is part of kycc */
#include <mpc.h>

#define MPC_MAX_UNITS 1024

static void (*units[MPC_MAX_UNITS])(void);
static int nunits;

static void mpc_die(const char *where, const char *name, const char *call)
{
    fprintf(stderr, "rank %d: %s: shared %s: %s: %s\n", ky_rank(), where, name, call, ky_last_error());
    fflush(stderr);
    abort();
}

void mpc_register_(void (*alloc_unit)(void))
{
    if (nunits == MPC_MAX_UNITS) {
        fprintf(stderr, "mpc: more than %d translation units with shared data\n", MPC_MAX_UNITS);
        abort();
    }
    units[nunits++] = alloc_unit;
}

void *mpc_mapalloc_(const int dims[], const int divs[], size_t elem, int first, int count, const char *where,
                    const char *name)
{
    void *p = ky_mapalloc(dims, divs, elem, first, count);
    if (p == NULL) mpc_die(where, name, "ky_mapalloc");
    return p;
}

void *mpc_alloc_(size_t bytes, const char *where, const char *name)
{
    void *p = NULL;
    if (ky_alloc(bytes, 0, &p) != KY_OK) mpc_die(where, name, "ky_alloc");
    return p;
}

int mpc_nprocs_(void)
{
    return sms_nprocs;
}

void mpc_init(int *argc, char ***argv)
{
    sms_startup(argc, argv);
    for (int i = 0; i < nunits; i++) units[i]();
    sms_barrier();
}

void mpc_barrier(void)
{
    sms_barrier();
}
void mpc_exit(void)
{
    sms_shutdown();
}
