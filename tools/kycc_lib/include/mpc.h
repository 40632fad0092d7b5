/* mpc.h: MpC (seed 000 section 2.3, Fig. 6) on Kyoyu. C with `shared` global data carrying distribution maps,
 * compiled by kycc, whose MpC front end (kycc_lib/mpc.py, docs/mpc.md) rewrites
 *     shared double A[NZ][NY][NX]::[NPROCS][1][1](0,NPROCS);
 * into a pointer that mpc_init sets to ky_mapalloc(dims, divs, sizeof(double), first, count) (sms_mapalloc);
 * every use of A goes through it. The program is SPMD like MPI: every rank runs main; OpenMP inside a rank
 * is plain OpenMP. The SMS library (sms.h, included here) may be mixed in, as the seed's Fig. 6 does with
 * sms_sync_drop. */
#ifndef KYOYU_MPC_H
#define KYOYU_MPC_H

#ifndef __KYCC__
#error \
    "MpC programs are compiled by kycc (tools/kycc prog.c -o prog), which translates their shared declarations"
#endif

#include <sms.h>

#define MYPID (sms_rank)    /* this rank, 0 .. NPROCS-1 (MPI's rank), valid after mpc_init */
#define NPROCS (sms_nprocs) /* the number of ranks */
/* Fig. 6 uses MAX and MIN without defining them (its line 1 elides the rest): mpc.h provides them */
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

#ifdef __cplusplus
extern "C" {
#endif
/* Start: ky_init, then every shared declaration of every unit is allocated (the same order on every rank),
 * then a barrier. Shared data must not be touched before. A failure prints the rank and cause and aborts. */
void mpc_init(int *argc, char ***argv);
void mpc_barrier(void); /* ky_barrier: every write before it, of any rank, is seen after it by all */
void mpc_exit(void);    /* ky_finalize: the end of the multi-node part */

/* Called by the translated code only. */
void mpc_register_(void (*alloc_unit)(void));
void *mpc_mapalloc_(const int dims[], const int divs[], size_t elem, int first, int count, const char *where,
                    const char *name);
void *mpc_alloc_(size_t bytes, const char *where, const char *name);
int mpc_nprocs_(void);
#ifdef __cplusplus
}
#endif

#endif
