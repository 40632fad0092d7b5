/* kycc_rt.h: the run-time of programs translated by kycc (docs/kycc.md). The translator emits calls to these
 * functions; a user never includes this header. kycc compiles kycc_rt.c with -fopenmp into every program.
 *
 * The model (seed 003's Omni/SCASH on Kyoyu): every rank runs the program's serial part redundantly with
 * the same values; a parallel region runs on the OpenMP threads of every rank, which together form one
 * global team of nranks x threads; work-sharing loops are divided over that team; global and static data
 * live in the global address space (kyoyu/dsm.h), so all threads of all ranks see one copy. */
#ifndef KYCC_RT_H
#define KYCC_RT_H

#include <stddef.h>

/* Start-up: every translated unit registers its global data from a constructor; main (in kycc_rt.c)
 * initialises Kyoyu, allocates everything registered, in registration order, on every rank (the same
 * order, since every rank runs the same binary), copies the initial images and calls the user's main.
 * dims/ndim: the array's extents (ndim 0 for scalars and structs); map_dim: the dimension cut into one
 * block per rank (-1: the first, seed 003's default "block" over the whole array; -2: not mapped). */
void kycc_register(void **ptr, size_t size, size_t align, const void *init, int ndim, const long *dims,
                   size_t elem, int map_dim, const char *where);

/* Parallel regions: begin/end run on each rank's serial thread around the OpenMP parallel region; begin
 * returns `active` (the if clause): an inactive region is one thread on every rank, like the serial part. */
int kycc_region_begin(const char *where, int active);
void kycc_region_end(int active);
int kycc_in_region(void);
/* Lazy serial phase (one node, ky_dsm_node_mode): a region ends with a plain barrier and the DSM stays in
 * its parallel phase (every page read-write, one copy) while the serial code after it only reads global
 * data. kycc puts KYCC_ST before every store of the serial part that may reach global data (through a
 * global, a pointer, a call it cannot see into): the first one of a stretch begins the serial phase
 * (ky_dsm_phase(0)), so the ranks' redundant stores go to private copies as before. kycc_serial_due is set
 * between such a region end and that store, and only then; every rank runs the same code, so they all
 * call kycc_serial (a barrier) at the same point. kycc_serial_eager ends the laziness for good: a store
 * whose operands call code that may run a region, where the order of evaluation decides the phase. */
extern int kycc_serial_due;
void kycc_serial(void);
void kycc_serial_eager(void);
#define KYCC_ST (__builtin_expect(kycc_serial_due, 0) ? kycc_serial() : (void)0)
/* The same for a store through a pointer of the function's own (*p, p[i], p->f): only where its address lies
 * in the global space [kycc_gas_lo, kycc_gas_hi); a store to a caller's local begins no serial phase. */
extern const char *kycc_gas_lo, *kycc_gas_hi;
#define KYCC_STA(a)                                                              \
    (__builtin_expect(kycc_serial_due, 0) && (const char *)(a) >= kycc_gas_lo && \
             (const char *)(a) < kycc_gas_hi                                     \
         ? kycc_serial()                                                         \
         : (void)0)
/* Orphaned loops outside a region. OpenMP runs an orphaned `omp for` met in the serial part on one thread;
 * kycc's serial part runs on every rank, whose stores to global data then go to private page copies merged
 * at the next barrier (NPB SP's txinvr and add store all of rhs and u every time step). Where the translator
 * finds the loop safe for it (only global data and the function's locals stored, pure library calls),
 * kycc_orphan_begin (every rank) enters the parallel phase and returns 1, the loop's schedule then gives
 * rank 0 every iteration and the others none, and kycc_orphan_end (every rank) hands the `n` locals the loop
 * wrote (vars[k], sizes[k] bytes) from rank 0 to the others after a barrier. begin returns 0 (after the
 * KYCC_ST the loop had before) inside a region, without the lazy serial phase, on one rank, when the
 * locals exceed 64 KiB or under KYCC_ONE_RANK_LOOPS=0: every rank runs the loop as before. With
 * KYCC_SHARE_ORPHANS=1 (the user's promise that such loops' iterations are independent, as inside a region)
 * the schedule gives each rank one block instead, and the rank of the last iteration hands its locals over.
 */
int kycc_orphan_begin(const char *where, size_t local_bytes);
void kycc_orphan_end(void *const *vars, const size_t *sizes, int n);
/* Slots of the global space for the enclosing function's locals that a region writes (stack discipline). */
void *kycc_frame_push(size_t size, size_t align);
void kycc_frame_pop(void *slot);

/* The global team: rank * threads-per-rank + thread; outside regions 0 of 1 (every rank is a master). */
int kycc_thread_num(void);
int kycc_num_threads(void);
int kycc_max_threads(void);

/* Barrier of the global team (no-op outside regions): every write before it is seen by all after it. */
void kycc_barrier(void);
/* Iterations 0 .. n-1 of a static schedule (chunk 0: one block per thread): this thread runs chunks
 * first, first+stride, ... each `span` long (clipped to n). */
void kycc_for_static(long n, long chunk, long *first, long *span, long *stride);
/* schedule(affinity): iteration i (loop value lb + i * step) runs on the rank owning index value v of the
 * mapped dimension, which has `extent` indices cut into nranks blocks; split over that rank's threads. */
void kycc_for_affinity(long lb, long step, long n, long extent, long *first, long *span, long *stride);
int kycc_section(int k,
                 int n);  /* section k of n runs here: k mod team == this thread (all outside regions) */
int kycc_is_master(void); /* global thread 0 (the only master: master and single run there) */
int kycc_is_rank_master(void);
void kycc_critical_begin(int id);
void kycc_critical_end(int id);
void kycc_flush(void);

enum {
    KYCC_T_CHAR,
    KYCC_T_SCHAR,
    KYCC_T_UCHAR,
    KYCC_T_SHORT,
    KYCC_T_USHORT,
    KYCC_T_INT,
    KYCC_T_UINT,
    KYCC_T_LONG,
    KYCC_T_ULONG,
    KYCC_T_LLONG,
    KYCC_T_ULLONG,
    KYCC_T_FLOAT,
    KYCC_T_DOUBLE,
    KYCC_T_BOOL
};
enum {
    KYCC_OP_ADD,
    KYCC_OP_MUL,
    KYCC_OP_SUB,
    KYCC_OP_AND,
    KYCC_OP_OR,
    KYCC_OP_XOR,
    KYCC_OP_LAND,
    KYCC_OP_LOR,
    KYCC_OP_MAX,
    KYCC_OP_MIN
};
/* Called by every thread of the team at the end of a reduction: *target = *target op (all threads' *priv).
 * Contains barriers of the global team. */
void kycc_reduce(void *target, const void *priv, int type, int op);

/* #pragma kyoyu update/push on the region of a mapped array (kyoyu/dsm.h): run by each rank's thread 0. */
void kycc_update(void *base, const size_t glb[], const size_t region[], int ndim, size_t elem);
void kycc_push(void *base, const size_t glb[], const size_t region[], int ndim, size_t elem, int to);

/* The user's malloc family. In the serial part (every rank, same order, same sizes) every block comes from
 * the global space: blocks under 4 KiB from arenas cut into one part per rank, larger ones from their own
 * collective allocation (one block of bytes per rank once large), so data a program allocates and then
 * shares with its parallel loops is one copy for all ranks. Blocks allocated inside regions are the
 * thread's own (malloc). */
void *kycc_malloc(size_t n);
void *kycc_calloc(size_t n, size_t size);
void *kycc_realloc(void *p, size_t n);
void kycc_free(void *p);

/* A construct the run-time cannot honour (nested parallel regions): prints where and why, aborts. */
void kycc_fail(const char *where, const char *why);

#endif
