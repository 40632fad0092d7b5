/* Kyoyu shmem: a subset of OpenSHMEM 1.5 on Kyoyu's comm and coll layers, for existing SHMEM programs.
 *
 * A PE is a Kyoyu rank. The symmetric heap is one comm segment (KY_SHMEM_HEAP_SIZE bytes per PE) that
 * every PE carves with the same allocator, so a block has the same offset on every PE; same-node PEs map
 * each other's heaps (shared memory) and reach them by load/store (shmem_ptr), others through the comm
 * layer's MPI path. Global and static variables of the program (its writable data and bss) are a second,
 * registered segment, always reached through the target's progress engine. docs/shmem.md lists what is
 * here and what is not (complex reductions, pshmem profiling names, the shmemx extensions of other
 * implementations): everything absent here is undeclared, so using it fails to compile or link.
 *
 * Errors: a call on a non-symmetric address, an out-of-range PE or a size that overflows prints
 * "rank R: <call>: <cause>" and ends the job (SHMEM calls return nothing to report it in). shmemx_error_mode
 * (SHMEMX_ERRORS_RETURN) makes the calls record the error instead, read with shmemx_last_error(). */
#ifndef KYOYU_SHMEM_H
#define KYOYU_SHMEM_H

#include <stddef.h>
#include <stdint.h>
#include "kyoyu/export.h"

KY_EXTERN_C_BEGIN

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define SHMEM_MAX_NAME_LEN 64
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define SHMEM_VENDOR_STRING "Kyoyu OpenSHMEM subset"
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_LE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_GE 5
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_LE SHMEM_CMP_LE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_GE SHMEM_CMP_GE

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

/* Active-set collectives (deprecated in 1.5, still used): pSync arrays of these many longs, every element
 * SHMEM_SYNC_VALUE before the first call; the call leaves them so. Words 0 and 1 carry the set's barrier,
 * word 2 a collect's element count. */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_SYNC_SIZE 16
#define SHMEM_BARRIER_SYNC_SIZE 16
#define SHMEM_BCAST_SYNC_SIZE 16
#define SHMEM_REDUCE_SYNC_SIZE 16
#define SHMEM_COLLECT_SYNC_SIZE 16
#define SHMEM_ALLTOALL_SYNC_SIZE 16
#define SHMEM_ALLTOALLS_SYNC_SIZE 16
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 16
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_ALLTOALL_SYNC_SIZE SHMEM_ALLTOALL_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* Teams: the world, the PEs of this node (SHMEM_TEAM_SHARED: this logical node's PEs when they form a
 * strided set, else this PE alone), and strided splits of any team. */
typedef struct shmemi_team *shmem_team_t;
#define SHMEM_TEAM_WORLD ((shmem_team_t)1)
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
extern KY_API shmem_team_t shmemi_team_shared; /* set by shmem_init */
#define SHMEM_TEAM_SHARED shmemi_team_shared
typedef struct {
    int num_contexts;
} shmem_team_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS 1L

/* ---- type lists (X(NAME, TYPE)), also used by the implementation --------------------------------------- */

#define SHMEMI_RMA_TYPES(X)                                                                                  \
    X(float, float) X(double, double) X(longdouble, long double) X(char, char) X(schar, signed char)          \
    X(short, short) X(int, int) X(long, long) X(longlong, long long) X(uchar, unsigned char)                 \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long) \
    X(int8, int8_t) X(int16, int16_t) X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t)                  \
    X(uint16, uint16_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)

#define SHMEMI_AMO_TYPES(X)                                                                                  \
    X(int, int) X(long, long) X(longlong, long long) X(uint, unsigned int) X(ulong, unsigned long)           \
    X(ulonglong, unsigned long long) X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t)                 \
    X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)
#define SHMEMI_AMO_EXT_TYPES(X) SHMEMI_AMO_TYPES(X) X(float, float) X(double, double)
#define SHMEMI_AMO_BIT_TYPES(X)                                                                              \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int32, int32_t)         \
    X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t)

#define SHMEMI_P2P_TYPES(X)                                                                                  \
    X(short, short) X(int, int) X(long, long) X(longlong, long long) X(ushort, unsigned short)               \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int32, int32_t)         \
    X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)

/* Reductions (X(NAME, TYPE, KIND): KIND i integer, f floating). */
#define SHMEMI_BIT_REDUCE_TYPES(X)                                                                           \
    X(uchar, unsigned char, i) X(ushort, unsigned short, i) X(uint, unsigned int, i)                         \
    X(ulong, unsigned long, i) X(ulonglong, unsigned long long, i) X(int8, int8_t, i) X(int16, int16_t, i)   \
    X(int32, int32_t, i) X(int64, int64_t, i) X(uint8, uint8_t, i) X(uint16, uint16_t, i)                    \
    X(uint32, uint32_t, i) X(uint64, uint64_t, i) X(size, size_t, i)
#define SHMEMI_ARITH_REDUCE_TYPES(X)                                                                         \
    X(char, char, i) X(schar, signed char, i) X(short, short, i) X(int, int, i) X(long, long, i)             \
    X(longlong, long long, i) X(ptrdiff, ptrdiff_t, i) X(uchar, unsigned char, i)                            \
    X(ushort, unsigned short, i) X(uint, unsigned int, i) X(ulong, unsigned long, i)                         \
    X(ulonglong, unsigned long long, i) X(int8, int8_t, i) X(int16, int16_t, i) X(int32, int32_t, i)         \
    X(int64, int64_t, i) X(uint8, uint8_t, i) X(uint16, uint16_t, i) X(uint32, uint32_t, i)                  \
    X(uint64, uint64_t, i) X(size, size_t, i) X(float, float, f) X(double, double, f)                        \
    X(longdouble, long double, f)
/* The deprecated active-set reductions (shmem_TYPE_OP_to_all). */
#define SHMEMI_TOALL_BIT_TYPES(X) X(short, short, i) X(int, int, i) X(long, long, i) X(longlong, long long, i)
#define SHMEMI_TOALL_ARITH_TYPES(X)                                                                          \
    SHMEMI_TOALL_BIT_TYPES(X) X(float, float, f) X(double, double, f) X(longdouble, long double, f)

#define SHMEMI_SIZES(X) X(8, 1) X(16, 2) X(32, 4) X(64, 8) X(128, 16)

/* ---- library setup, query ------------------------------------------------------------------------------ */

/* Collective: ky_init (unless the program already called it), the symmetric heap, the data segment. */
KY_API void shmem_init(void);
/* As shmem_init; *provided = SHMEM_THREAD_MULTIPLE (comm is thread-safe). Returns 0, or nonzero on failure. */
KY_API int shmem_init_thread(int requested, int *provided);
KY_API void shmem_query_thread(int *provided);
/* Collective: barrier, frees the heap; ky_finalize if shmem_init called ky_init. */
KY_API void shmem_finalize(void);
/* Ends every PE of the job with this status. */
KY_API void shmem_global_exit(int status);
KY_API int shmem_my_pe(void);
KY_API int shmem_n_pes(void);
KY_API int shmem_pe_accessible(int pe);
KY_API int shmem_addr_accessible(const void *addr, int pe);
/* Address of dest on pe usable by load/store here: pe's heap when this node maps it, NULL otherwise
 * (another node, KY_NODE_SPLIT=rank, or a global variable of another PE). */
KY_API void *shmem_ptr(const void *dest, int pe);
KY_API void shmem_info_get_version(int *major, int *minor);
KY_API void shmem_info_get_name(char *name);
/* Does nothing (profiling hook). */
KY_API void shmem_pcontrol(const int level, ...);

/* Deprecated names (still in programs). */
KY_API void start_pes(int npes);
KY_API int _my_pe(void);
KY_API int _num_pes(void);

/* ---- teams ------------------------------------------------------------------------------------------------ */

KY_API int shmem_team_my_pe(shmem_team_t team);
KY_API int shmem_team_n_pes(shmem_team_t team);
/* Barrier of the team without completing puts (shmem_sync_all for the world). Returns 0 or -1. */
KY_API int shmem_team_sync(shmem_team_t team);
/* pe of src_team in dest_team, or -1 when it is not a member. */
KY_API int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
/* Collective over parent: members start, start + stride, ... (size of them; stride may be negative) of the
 * parent; SHMEM_TEAM_INVALID on the others. 0, or -1 (bad arguments; all 64 team slots taken). */
KY_API int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                                    const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team);
/* Collective over parent: rows of xrange consecutive PEs (x teams) and the columns across them (y teams). */
KY_API int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                               long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                               long yaxis_mask, shmem_team_t *yaxis_team);
KY_API int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
KY_API void shmem_team_destroy(shmem_team_t team);
/* shmem_ptr for the team's pe. */
KY_API void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);

/* ---- symmetric heap -------------------------------------------------------------------------------------- */

/* Collective (every PE, same sizes, same order); each ends in a barrier. NULL for size 0 or when the heap
 * (KY_SHMEM_HEAP_SIZE) is full. PEs asking for different sizes is an error naming both sizes. */
KY_API void *shmem_malloc(size_t size);
KY_API void *shmem_calloc(size_t count, size_t size);
KY_API void *shmem_align(size_t alignment, size_t size);
KY_API void *shmem_realloc(void *ptr, size_t size);
KY_API void *shmem_malloc_with_hints(size_t size, long hints);
KY_API void shmem_free(void *ptr);
#define SHMEM_MALLOC_ATOMICS_REMOTE 1L
#define SHMEM_MALLOC_SIGNAL_REMOTE 2L
KY_API void *shmalloc(size_t size);
KY_API void *shmemalign(size_t alignment, size_t size);
KY_API void *shrealloc(void *ptr, size_t size);
KY_API void shfree(void *ptr);

/* ---- RMA ----------------------------------------------------------------------------------------------- */

/* Blocking put returns once the data is in the target's memory (stronger than the standard's local
 * completion); _nbi forms complete at shmem_quiet (or a barrier). */
#define SHMEMI_DECL_RMA(NAME, T)                                                                             \
    KY_API void shmem_##NAME##_put(T *dest, const T *source, size_t nelems, int pe);                         \
    KY_API void shmem_##NAME##_get(T *dest, const T *source, size_t nelems, int pe);                         \
    KY_API void shmem_##NAME##_put_nbi(T *dest, const T *source, size_t nelems, int pe);                     \
    KY_API void shmem_##NAME##_get_nbi(T *dest, const T *source, size_t nelems, int pe);                     \
    KY_API void shmem_##NAME##_p(T *dest, T value, int pe);                                                  \
    KY_API T shmem_##NAME##_g(const T *source, int pe);                                                      \
    KY_API void shmem_##NAME##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,   \
                                    int pe);                                                                 \
    KY_API void shmem_##NAME##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,   \
                                    int pe);                                                                 \
    KY_API void shmem_##NAME##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,       \
                                          uint64_t signal, int sig_op, int pe);                              \
    KY_API void shmem_##NAME##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,   \
                                              uint64_t signal, int sig_op, int pe);
SHMEMI_RMA_TYPES(SHMEMI_DECL_RMA)
#undef SHMEMI_DECL_RMA

#define SHMEMI_DECL_SIZED(BITS, BYTES)                                                                       \
    KY_API void shmem_put##BITS(void *dest, const void *source, size_t nelems, int pe);                      \
    KY_API void shmem_get##BITS(void *dest, const void *source, size_t nelems, int pe);                      \
    KY_API void shmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe);                \
    KY_API void shmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe);                \
    KY_API void shmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                                 int pe);                                                                    \
    KY_API void shmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                                 int pe);                                                                    \
    KY_API void shmem_put##BITS##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,  \
                                         uint64_t signal, int sig_op, int pe);                               \
    KY_API void shmem_put##BITS##_signal_nbi(void *dest, const void *source, size_t nelems,                  \
                                             uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
SHMEMI_SIZES(SHMEMI_DECL_SIZED)
#undef SHMEMI_DECL_SIZED

KY_API void shmem_putmem(void *dest, const void *source, size_t nelems, int pe);
KY_API void shmem_getmem(void *dest, const void *source, size_t nelems, int pe);
KY_API void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe);
KY_API void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe);
KY_API void shmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                uint64_t signal, int sig_op, int pe);
KY_API void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                    uint64_t signal, int sig_op, int pe);
/* The value of a signal word (an atomic read of local memory). */
KY_API uint64_t shmem_signal_fetch(const uint64_t *sig_addr);

/* ---- ordering and completion --------------------------------------------------------------------------- */

KY_API void shmem_quiet(void);
KY_API void shmem_fence(void);
KY_API void shmem_barrier_all(void);
KY_API void shmem_sync_all(void);

/* ---- atomics (every call is complete at the target when it returns, _nbi forms included) ---------------- */

#define SHMEMI_DECL_AMO(NAME, T)                                                                             \
    KY_API T shmem_##NAME##_atomic_compare_swap(T *dest, T cond, T value, int pe);                           \
    KY_API T shmem_##NAME##_atomic_fetch_inc(T *dest, int pe);                                               \
    KY_API void shmem_##NAME##_atomic_inc(T *dest, int pe);                                                  \
    KY_API T shmem_##NAME##_atomic_fetch_add(T *dest, T value, int pe);                                      \
    KY_API void shmem_##NAME##_atomic_add(T *dest, T value, int pe);                                         \
    KY_API void shmem_##NAME##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe);          \
    KY_API void shmem_##NAME##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe);                              \
    KY_API void shmem_##NAME##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe);
SHMEMI_AMO_TYPES(SHMEMI_DECL_AMO)
#undef SHMEMI_DECL_AMO

#define SHMEMI_DECL_AMO_EXT(NAME, T)                                                                         \
    KY_API T shmem_##NAME##_atomic_fetch(const T *source, int pe);                                           \
    KY_API void shmem_##NAME##_atomic_set(T *dest, T value, int pe);                                         \
    KY_API T shmem_##NAME##_atomic_swap(T *dest, T value, int pe);                                           \
    KY_API void shmem_##NAME##_atomic_fetch_nbi(T *fetch, const T *source, int pe);                          \
    KY_API void shmem_##NAME##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe);
SHMEMI_AMO_EXT_TYPES(SHMEMI_DECL_AMO_EXT)
#undef SHMEMI_DECL_AMO_EXT

#define SHMEMI_DECL_AMO_BIT(NAME, T)                                                                         \
    KY_API T shmem_##NAME##_atomic_fetch_and(T *dest, T value, int pe);                                      \
    KY_API T shmem_##NAME##_atomic_fetch_or(T *dest, T value, int pe);                                       \
    KY_API T shmem_##NAME##_atomic_fetch_xor(T *dest, T value, int pe);                                      \
    KY_API void shmem_##NAME##_atomic_and(T *dest, T value, int pe);                                         \
    KY_API void shmem_##NAME##_atomic_or(T *dest, T value, int pe);                                          \
    KY_API void shmem_##NAME##_atomic_xor(T *dest, T value, int pe);                                         \
    KY_API void shmem_##NAME##_atomic_fetch_and_nbi(T *fetch, T *dest, T value, int pe);                     \
    KY_API void shmem_##NAME##_atomic_fetch_or_nbi(T *fetch, T *dest, T value, int pe);                      \
    KY_API void shmem_##NAME##_atomic_fetch_xor_nbi(T *fetch, T *dest, T value, int pe);
SHMEMI_AMO_BIT_TYPES(SHMEMI_DECL_AMO_BIT)
#undef SHMEMI_DECL_AMO_BIT

/* Deprecated atomic names (int, long, longlong; float and double for swap, fetch, set). */
#define SHMEMI_DECL_AMO_OLD(NAME, T)                                                                         \
    KY_API T shmem_##NAME##_cswap(T *dest, T cond, T value, int pe);                                         \
    KY_API T shmem_##NAME##_finc(T *dest, int pe);                                                           \
    KY_API void shmem_##NAME##_inc(T *dest, int pe);                                                         \
    KY_API T shmem_##NAME##_fadd(T *dest, T value, int pe);                                                  \
    KY_API void shmem_##NAME##_add(T *dest, T value, int pe);
#define SHMEMI_DECL_AMO_OLD_EXT(NAME, T)                                                                     \
    KY_API T shmem_##NAME##_swap(T *dest, T value, int pe);                                                  \
    KY_API T shmem_##NAME##_fetch(const T *source, int pe);                                                  \
    KY_API void shmem_##NAME##_set(T *dest, T value, int pe);
SHMEMI_DECL_AMO_OLD(int, int)
SHMEMI_DECL_AMO_OLD(long, long)
SHMEMI_DECL_AMO_OLD(longlong, long long)
SHMEMI_DECL_AMO_OLD_EXT(int, int)
SHMEMI_DECL_AMO_OLD_EXT(long, long)
SHMEMI_DECL_AMO_OLD_EXT(longlong, long long)
SHMEMI_DECL_AMO_OLD_EXT(float, float)
SHMEMI_DECL_AMO_OLD_EXT(double, double)
#undef SHMEMI_DECL_AMO_OLD
#undef SHMEMI_DECL_AMO_OLD_EXT
KY_API long shmem_swap(long *dest, long value, int pe);

/* Distributed locks on a symmetric long (0 before first use). */
KY_API void shmem_set_lock(long *lock);
KY_API void shmem_clear_lock(long *lock);
KY_API int shmem_test_lock(long *lock);

/* ---- point-to-point synchronisation on local symmetric memory ------------------------------------------- */

#define SHMEMI_DECL_P2P(NAME, T)                                                                             \
    KY_API void shmem_##NAME##_wait_until(T *ivar, int cmp, T cmp_value);                                    \
    KY_API int shmem_##NAME##_test(T *ivar, int cmp, T cmp_value);                                           \
    KY_API void shmem_##NAME##_wait(T *ivar, T cmp_value);
SHMEMI_P2P_TYPES(SHMEMI_DECL_P2P)
#undef SHMEMI_DECL_P2P
KY_API void shmem_wait(long *ivar, long cmp_value);
KY_API uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* ---- collectives on a team (1.5); return 0, or -1 after an error ----------------------------------------- */

KY_API int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root);
KY_API int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
KY_API int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
KY_API int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
KY_API int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                              size_t nelems);
#define SHMEMI_DECL_COLL(NAME, T)                                                                            \
    KY_API int shmem_##NAME##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,          \
                                        int PE_root);                                                        \
    KY_API int shmem_##NAME##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems);           \
    KY_API int shmem_##NAME##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems);          \
    KY_API int shmem_##NAME##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems);          \
    KY_API int shmem_##NAME##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,          \
                                        ptrdiff_t sst, size_t nelems);
SHMEMI_RMA_TYPES(SHMEMI_DECL_COLL)
#undef SHMEMI_DECL_COLL

#define SHMEMI_DECL_BIT_REDUCE(NAME, T, K)                                                                   \
    KY_API int shmem_##NAME##_and_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);       \
    KY_API int shmem_##NAME##_or_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);        \
    KY_API int shmem_##NAME##_xor_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
SHMEMI_BIT_REDUCE_TYPES(SHMEMI_DECL_BIT_REDUCE)
#undef SHMEMI_DECL_BIT_REDUCE
#define SHMEMI_DECL_ARITH_REDUCE(NAME, T, K)                                                                 \
    KY_API int shmem_##NAME##_max_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);       \
    KY_API int shmem_##NAME##_min_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);       \
    KY_API int shmem_##NAME##_sum_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);       \
    KY_API int shmem_##NAME##_prod_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
SHMEMI_ARITH_REDUCE_TYPES(SHMEMI_DECL_ARITH_REDUCE)
#undef SHMEMI_DECL_ARITH_REDUCE

/* ---- active-set collectives (deprecated in 1.5): PE_start, 2^logPE_stride, PE_size and a pSync ----------- */

KY_API void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
/* shmem_sync(team) is shmem_team_sync; shmem_sync(PE_start, logPE_stride, PE_size, pSync) the active-set sync
 * (the barrier without completing puts), told apart by the number of arguments. */
KY_API void shmemi_sync_set(int PE_start, int logPE_stride, int PE_size, long *pSync);
#define SHMEMI_SYNC_SEL(a1, a2, a3, a4, NAME, ...) NAME
#define shmem_sync(...) SHMEMI_SYNC_SEL(__VA_ARGS__, shmemi_sync_set, 0, 0, shmem_team_sync, 0)(__VA_ARGS__)
#define SHMEMI_DECL_SET_COLL(BITS, BYTES)                                                                    \
    KY_API void shmem_broadcast##BITS(void *dest, const void *source, size_t nelems, int PE_root,            \
                                      int PE_start, int logPE_stride, int PE_size, long *pSync);             \
    KY_API void shmem_collect##BITS(void *dest, const void *source, size_t nelems, int PE_start,             \
                                    int logPE_stride, int PE_size, long *pSync);                             \
    KY_API void shmem_fcollect##BITS(void *dest, const void *source, size_t nelems, int PE_start,            \
                                     int logPE_stride, int PE_size, long *pSync);                            \
    KY_API void shmem_alltoall##BITS(void *dest, const void *source, size_t nelems, int PE_start,            \
                                     int logPE_stride, int PE_size, long *pSync);                            \
    KY_API void shmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,          \
                                      size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync);
SHMEMI_DECL_SET_COLL(32, 4)
SHMEMI_DECL_SET_COLL(64, 8)
#undef SHMEMI_DECL_SET_COLL
#define SHMEMI_DECL_TOALL_BIT(NAME, T, K)                                                                    \
    KY_API void shmem_##NAME##_and_to_all(T *dest, const T *source, int nreduce, int PE_start,              \
                                          int logPE_stride, int PE_size, T *pWrk, long *pSync);              \
    KY_API void shmem_##NAME##_or_to_all(T *dest, const T *source, int nreduce, int PE_start,               \
                                         int logPE_stride, int PE_size, T *pWrk, long *pSync);               \
    KY_API void shmem_##NAME##_xor_to_all(T *dest, const T *source, int nreduce, int PE_start,              \
                                          int logPE_stride, int PE_size, T *pWrk, long *pSync);
SHMEMI_TOALL_BIT_TYPES(SHMEMI_DECL_TOALL_BIT)
#undef SHMEMI_DECL_TOALL_BIT
#define SHMEMI_DECL_TOALL_ARITH(NAME, T, K)                                                                  \
    KY_API void shmem_##NAME##_max_to_all(T *dest, const T *source, int nreduce, int PE_start,              \
                                          int logPE_stride, int PE_size, T *pWrk, long *pSync);              \
    KY_API void shmem_##NAME##_min_to_all(T *dest, const T *source, int nreduce, int PE_start,              \
                                          int logPE_stride, int PE_size, T *pWrk, long *pSync);              \
    KY_API void shmem_##NAME##_sum_to_all(T *dest, const T *source, int nreduce, int PE_start,              \
                                          int logPE_stride, int PE_size, T *pWrk, long *pSync);              \
    KY_API void shmem_##NAME##_prod_to_all(T *dest, const T *source, int nreduce, int PE_start,             \
                                           int logPE_stride, int PE_size, T *pWrk, long *pSync);
SHMEMI_TOALL_ARITH_TYPES(SHMEMI_DECL_TOALL_ARITH)
#undef SHMEMI_DECL_TOALL_ARITH

/* ---- contexts: every context, SHMEM_CTX_DEFAULT included, is the PE's one stream of operations (a quiet or
 * fence on any completes or orders them all: stronger than the standard asks, never weaker) ------------ */

typedef struct shmemi_ctx *shmem_ctx_t;
#define SHMEM_CTX_DEFAULT ((shmem_ctx_t)1)
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)
#define SHMEM_CTX_SERIALIZED 1L
#define SHMEM_CTX_PRIVATE 2L
#define SHMEM_CTX_NOSTORE 4L
/* 0 and a new context, or nonzero (team other than the world). */
KY_API int shmem_ctx_create(long options, shmem_ctx_t *ctx);
KY_API int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
KY_API void shmem_ctx_destroy(shmem_ctx_t ctx);
KY_API int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);
KY_API void shmem_ctx_quiet(shmem_ctx_t ctx);
KY_API void shmem_ctx_fence(shmem_ctx_t ctx);

#define SHMEMI_DECL_CTX_RMA(NAME, T)                                                                         \
    KY_API void shmem_ctx_##NAME##_put(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe);    \
    KY_API void shmem_ctx_##NAME##_get(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe);    \
    KY_API void shmem_ctx_##NAME##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe); \
    KY_API void shmem_ctx_##NAME##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe); \
    KY_API void shmem_ctx_##NAME##_p(shmem_ctx_t ctx, T *dest, T value, int pe);                             \
    KY_API T shmem_ctx_##NAME##_g(shmem_ctx_t ctx, const T *source, int pe);                                 \
    KY_API void shmem_ctx_##NAME##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,            \
                                        ptrdiff_t sst, size_t nelems, int pe);                               \
    KY_API void shmem_ctx_##NAME##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,            \
                                        ptrdiff_t sst, size_t nelems, int pe);                               \
    KY_API void shmem_ctx_##NAME##_put_signal(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,      \
                                              uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);      \
    KY_API void shmem_ctx_##NAME##_put_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,  \
                                                  uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
SHMEMI_RMA_TYPES(SHMEMI_DECL_CTX_RMA)
#undef SHMEMI_DECL_CTX_RMA
#define SHMEMI_DECL_CTX_SIZED(BITS, BYTES)                                                                   \
    KY_API void shmem_ctx_put##BITS(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe); \
    KY_API void shmem_ctx_get##BITS(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe); \
    KY_API void shmem_ctx_put##BITS##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,    \
                                          int pe);                                                           \
    KY_API void shmem_ctx_get##BITS##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,    \
                                          int pe);                                                           \
    KY_API void shmem_ctx_iput##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,         \
                                     ptrdiff_t sst, size_t nelems, int pe);                                  \
    KY_API void shmem_ctx_iget##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,         \
                                     ptrdiff_t sst, size_t nelems, int pe);                                  \
    KY_API void shmem_ctx_put##BITS##_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                                             uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);       \
    KY_API void shmem_ctx_put##BITS##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source,            \
                                                 size_t nelems, uint64_t *sig_addr, uint64_t signal,         \
                                                 int sig_op, int pe);
SHMEMI_SIZES(SHMEMI_DECL_CTX_SIZED)
#undef SHMEMI_DECL_CTX_SIZED
KY_API void shmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
KY_API void shmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
KY_API void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
KY_API void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
KY_API void shmem_ctx_putmem_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
KY_API void shmem_ctx_putmem_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                                        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);

#define SHMEMI_DECL_CTX_AMO(NAME, T)                                                                         \
    KY_API T shmem_ctx_##NAME##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond, T value, int pe);      \
    KY_API T shmem_ctx_##NAME##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe);                          \
    KY_API void shmem_ctx_##NAME##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe);                             \
    KY_API T shmem_ctx_##NAME##_atomic_fetch_add(shmem_ctx_t ctx, T *dest, T value, int pe);                 \
    KY_API void shmem_ctx_##NAME##_atomic_add(shmem_ctx_t ctx, T *dest, T value, int pe);                    \
    KY_API void shmem_ctx_##NAME##_atomic_compare_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T cond,       \
                                                           T value, int pe);                                 \
    KY_API void shmem_ctx_##NAME##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch, T *dest, int pe);         \
    KY_API void shmem_ctx_##NAME##_atomic_fetch_add_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
SHMEMI_AMO_TYPES(SHMEMI_DECL_CTX_AMO)
#undef SHMEMI_DECL_CTX_AMO
#define SHMEMI_DECL_CTX_AMO_EXT(NAME, T)                                                                     \
    KY_API T shmem_ctx_##NAME##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe);                      \
    KY_API void shmem_ctx_##NAME##_atomic_set(shmem_ctx_t ctx, T *dest, T value, int pe);                    \
    KY_API T shmem_ctx_##NAME##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe);                      \
    KY_API void shmem_ctx_##NAME##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch, const T *source, int pe);     \
    KY_API void shmem_ctx_##NAME##_atomic_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
SHMEMI_AMO_EXT_TYPES(SHMEMI_DECL_CTX_AMO_EXT)
#undef SHMEMI_DECL_CTX_AMO_EXT
#define SHMEMI_DECL_CTX_AMO_BIT(NAME, T)                                                                     \
    KY_API T shmem_ctx_##NAME##_atomic_fetch_and(shmem_ctx_t ctx, T *dest, T value, int pe);                 \
    KY_API T shmem_ctx_##NAME##_atomic_fetch_or(shmem_ctx_t ctx, T *dest, T value, int pe);                  \
    KY_API T shmem_ctx_##NAME##_atomic_fetch_xor(shmem_ctx_t ctx, T *dest, T value, int pe);                 \
    KY_API void shmem_ctx_##NAME##_atomic_and(shmem_ctx_t ctx, T *dest, T value, int pe);                    \
    KY_API void shmem_ctx_##NAME##_atomic_or(shmem_ctx_t ctx, T *dest, T value, int pe);                     \
    KY_API void shmem_ctx_##NAME##_atomic_xor(shmem_ctx_t ctx, T *dest, T value, int pe);                    \
    KY_API void shmem_ctx_##NAME##_atomic_fetch_and_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe); \
    KY_API void shmem_ctx_##NAME##_atomic_fetch_or_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe); \
    KY_API void shmem_ctx_##NAME##_atomic_fetch_xor_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
SHMEMI_AMO_BIT_TYPES(SHMEMI_DECL_CTX_AMO_BIT)
#undef SHMEMI_DECL_CTX_AMO_BIT

/* ---- waits on several variables (the _vector forms take a cmp_value per variable) ------------------------- */

#define SHMEMI_DECL_P2P_MANY(NAME, T)                                                                        \
    KY_API void shmem_##NAME##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,           \
                                              T cmp_value);                                                  \
    KY_API size_t shmem_##NAME##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,         \
                                                T cmp_value);                                                \
    KY_API size_t shmem_##NAME##_wait_until_some(T *ivars, size_t nelems, size_t *indices, const int *status, \
                                                 int cmp, T cmp_value);                                      \
    KY_API void shmem_##NAME##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp,    \
                                                     T *cmp_values);                                         \
    KY_API size_t shmem_##NAME##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp,  \
                                                       T *cmp_values);                                       \
    KY_API size_t shmem_##NAME##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,            \
                                                        const int *status, int cmp, T *cmp_values);          \
    KY_API int shmem_##NAME##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);    \
    KY_API size_t shmem_##NAME##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value); \
    KY_API size_t shmem_##NAME##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status,      \
                                           int cmp, T cmp_value);                                            \
    KY_API int shmem_##NAME##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,           \
                                              T *cmp_values);                                                \
    KY_API size_t shmem_##NAME##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,        \
                                                 T *cmp_values);                                             \
    KY_API size_t shmem_##NAME##_test_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status, \
                                                  int cmp, T *cmp_values);
SHMEMI_P2P_TYPES(SHMEMI_DECL_P2P_MANY)
#undef SHMEMI_DECL_P2P_MANY

/* ---- Kyoyu extensions ------------------------------------------------------------------------------------ */

#define SHMEMX_ERRORS_ABORT 0   /* default: print "rank R: call: cause" and end the job */
#define SHMEMX_ERRORS_RETURN 1  /* record the error (shmemx_last_error) and return; the call did nothing */
/* Sets the mode of the calling process; returns the previous one. */
KY_API int shmemx_error_mode(int mode);
/* Status (a negative ky_status_t) of the last failed shmem call on this thread since the previous
 * shmemx_last_error, or 0; *msg (if not NULL) gets its message. Clears it. */
KY_API int shmemx_last_error(const char **msg);

KY_EXTERN_C_END

/* ---- C11 type-generic names (an optional leading context: the first argument's type picks the form) -------- */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define SHMEMI_ARG0(a, ...) a
#define SHMEMI_ARG1(a, b, ...) b
#define SHMEMI_G_RMA(PRE, OP)                                                                                \
    float *: shmem_##PRE##float_##OP, double *: shmem_##PRE##double_##OP,                                 \
    long double *: shmem_##PRE##longdouble_##OP, char *: shmem_##PRE##char_##OP,                          \
    signed char *: shmem_##PRE##schar_##OP, short *: shmem_##PRE##short_##OP, int *: shmem_##PRE##int_##OP, \
    long *: shmem_##PRE##long_##OP, long long *: shmem_##PRE##longlong_##OP,                              \
    unsigned char *: shmem_##PRE##uchar_##OP, unsigned short *: shmem_##PRE##ushort_##OP,                  \
    unsigned int *: shmem_##PRE##uint_##OP, unsigned long *: shmem_##PRE##ulong_##OP,                      \
    unsigned long long *: shmem_##PRE##ulonglong_##OP
#define SHMEMI_G_RMA_CONST(PRE, OP)                                                                          \
    const float *: shmem_##PRE##float_##OP, const double *: shmem_##PRE##double_##OP,                     \
    const long double *: shmem_##PRE##longdouble_##OP, const char *: shmem_##PRE##char_##OP,              \
    const signed char *: shmem_##PRE##schar_##OP, const short *: shmem_##PRE##short_##OP,                 \
    const int *: shmem_##PRE##int_##OP, const long *: shmem_##PRE##long_##OP,                             \
    const long long *: shmem_##PRE##longlong_##OP, const unsigned char *: shmem_##PRE##uchar_##OP,        \
    const unsigned short *: shmem_##PRE##ushort_##OP, const unsigned int *: shmem_##PRE##uint_##OP,       \
    const unsigned long *: shmem_##PRE##ulong_##OP, const unsigned long long *: shmem_##PRE##ulonglong_##OP
#define SHMEMI_G_AMO(PRE, OP)                                                                                \
    int *: shmem_##PRE##int_##OP, long *: shmem_##PRE##long_##OP, long long *: shmem_##PRE##longlong_##OP, \
    unsigned int *: shmem_##PRE##uint_##OP, unsigned long *: shmem_##PRE##ulong_##OP,                      \
    unsigned long long *: shmem_##PRE##ulonglong_##OP
#define SHMEMI_G_AMO_EXT(PRE, OP)                                                                            \
    SHMEMI_G_AMO(PRE, OP), float *: shmem_##PRE##float_##OP, double *: shmem_##PRE##double_##OP
#define SHMEMI_G_AMO_EXT_CONST(PRE, OP)                                                                      \
    const int *: shmem_##PRE##int_##OP, const long *: shmem_##PRE##long_##OP,                             \
    const long long *: shmem_##PRE##longlong_##OP, const unsigned int *: shmem_##PRE##uint_##OP,          \
    const unsigned long *: shmem_##PRE##ulong_##OP, const unsigned long long *: shmem_##PRE##ulonglong_##OP, \
    const float *: shmem_##PRE##float_##OP, const double *: shmem_##PRE##double_##OP
/* int32_t and int64_t are int and long on the LP64 systems Kyoyu runs on */
#define SHMEMI_G_AMO_BIT(PRE, OP)                                                                            \
    unsigned int *: shmem_##PRE##uint_##OP, unsigned long *: shmem_##PRE##ulong_##OP,                      \
    unsigned long long *: shmem_##PRE##ulonglong_##OP, int *: shmem_##PRE##int32_##OP,                    \
    long *: shmem_##PRE##int64_##OP
#define SHMEMI_G_P2P(OP)                                                                                     \
    short *: shmem_short_##OP, int *: shmem_int_##OP, long *: shmem_long_##OP,                             \
    long long *: shmem_longlong_##OP, unsigned short *: shmem_ushort_##OP, unsigned int *: shmem_uint_##OP, \
    unsigned long *: shmem_ulong_##OP, unsigned long long *: shmem_ulonglong_##OP
/* LIST(PRE, OP) for the pointer that follows the context (or comes first without one). */
#define SHMEMI_GEN(LIST, OP, ...)                                                                            \
    _Generic(SHMEMI_ARG0(__VA_ARGS__, 0),                                                                   \
             shmem_ctx_t: _Generic(SHMEMI_ARG1(__VA_ARGS__, 0), LIST(ctx_, OP), default: 0),               \
             LIST(, OP))(__VA_ARGS__)
#define SHMEMI_GEN2(LIST, LIST2, OP, ...)                                                                    \
    _Generic(SHMEMI_ARG0(__VA_ARGS__, 0),                                                                   \
             shmem_ctx_t: _Generic(SHMEMI_ARG1(__VA_ARGS__, 0), LIST(ctx_, OP), LIST2(ctx_, OP), default: 0), \
             LIST(, OP), LIST2(, OP))(__VA_ARGS__)

#define shmem_put(...) SHMEMI_GEN(SHMEMI_G_RMA, put, __VA_ARGS__)
#define shmem_get(...) SHMEMI_GEN(SHMEMI_G_RMA, get, __VA_ARGS__)
#define shmem_put_nbi(...) SHMEMI_GEN(SHMEMI_G_RMA, put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...) SHMEMI_GEN(SHMEMI_G_RMA, get_nbi, __VA_ARGS__)
#define shmem_p(...) SHMEMI_GEN(SHMEMI_G_RMA, p, __VA_ARGS__)
#define shmem_g(...) SHMEMI_GEN2(SHMEMI_G_RMA, SHMEMI_G_RMA_CONST, g, __VA_ARGS__)
#define shmem_iput(...) SHMEMI_GEN(SHMEMI_G_RMA, iput, __VA_ARGS__)
#define shmem_iget(...) SHMEMI_GEN(SHMEMI_G_RMA, iget, __VA_ARGS__)
#define shmem_put_signal(...) SHMEMI_GEN(SHMEMI_G_RMA, put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...) SHMEMI_GEN(SHMEMI_G_RMA, put_signal_nbi, __VA_ARGS__)
#define shmem_atomic_fetch(...) SHMEMI_GEN2(SHMEMI_G_AMO_EXT, SHMEMI_G_AMO_EXT_CONST, atomic_fetch, __VA_ARGS__)
#define shmem_atomic_set(...) SHMEMI_GEN(SHMEMI_G_AMO_EXT, atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...) SHMEMI_GEN(SHMEMI_G_AMO_EXT, atomic_swap, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) SHMEMI_GEN(SHMEMI_G_AMO, atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) SHMEMI_GEN(SHMEMI_G_AMO, atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_inc(...) SHMEMI_GEN(SHMEMI_G_AMO, atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) SHMEMI_GEN(SHMEMI_G_AMO, atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_add(...) SHMEMI_GEN(SHMEMI_G_AMO, atomic_add, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) SHMEMI_GEN(SHMEMI_G_AMO_BIT, atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) SHMEMI_GEN(SHMEMI_G_AMO_BIT, atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) SHMEMI_GEN(SHMEMI_G_AMO_BIT, atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_and(...) SHMEMI_GEN(SHMEMI_G_AMO_BIT, atomic_and, __VA_ARGS__)
#define shmem_atomic_or(...) SHMEMI_GEN(SHMEMI_G_AMO_BIT, atomic_or, __VA_ARGS__)
#define shmem_atomic_xor(...) SHMEMI_GEN(SHMEMI_G_AMO_BIT, atomic_xor, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...) SHMEMI_GEN(SHMEMI_G_AMO_EXT, atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) SHMEMI_GEN(SHMEMI_G_AMO_EXT, atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) SHMEMI_GEN(SHMEMI_G_AMO, atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) SHMEMI_GEN(SHMEMI_G_AMO, atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) SHMEMI_GEN(SHMEMI_G_AMO, atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) SHMEMI_GEN(SHMEMI_G_AMO_BIT, atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) SHMEMI_GEN(SHMEMI_G_AMO_BIT, atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) SHMEMI_GEN(SHMEMI_G_AMO_BIT, atomic_fetch_xor_nbi, __VA_ARGS__)
#define shmem_wait_until(ivar, ...) _Generic((ivar), SHMEMI_G_P2P(wait_until))(ivar, __VA_ARGS__)
#define shmem_test(ivar, ...) _Generic((ivar), SHMEMI_G_P2P(test))(ivar, __VA_ARGS__)
#define shmem_wait_until_all(ivars, ...) _Generic((ivars), SHMEMI_G_P2P(wait_until_all))(ivars, __VA_ARGS__)
#define shmem_wait_until_any(ivars, ...) _Generic((ivars), SHMEMI_G_P2P(wait_until_any))(ivars, __VA_ARGS__)
#define shmem_wait_until_some(ivars, ...) _Generic((ivars), SHMEMI_G_P2P(wait_until_some))(ivars, __VA_ARGS__)
#define shmem_wait_until_all_vector(ivars, ...) _Generic((ivars), SHMEMI_G_P2P(wait_until_all_vector))(ivars, __VA_ARGS__)
#define shmem_wait_until_any_vector(ivars, ...) _Generic((ivars), SHMEMI_G_P2P(wait_until_any_vector))(ivars, __VA_ARGS__)
#define shmem_wait_until_some_vector(ivars, ...) _Generic((ivars), SHMEMI_G_P2P(wait_until_some_vector))(ivars, __VA_ARGS__)
#define shmem_test_all(ivars, ...) _Generic((ivars), SHMEMI_G_P2P(test_all))(ivars, __VA_ARGS__)
#define shmem_test_any(ivars, ...) _Generic((ivars), SHMEMI_G_P2P(test_any))(ivars, __VA_ARGS__)
#define shmem_test_some(ivars, ...) _Generic((ivars), SHMEMI_G_P2P(test_some))(ivars, __VA_ARGS__)
#define shmem_test_all_vector(ivars, ...) _Generic((ivars), SHMEMI_G_P2P(test_all_vector))(ivars, __VA_ARGS__)
#define shmem_test_any_vector(ivars, ...) _Generic((ivars), SHMEMI_G_P2P(test_any_vector))(ivars, __VA_ARGS__)
#define shmem_test_some_vector(ivars, ...) _Generic((ivars), SHMEMI_G_P2P(test_some_vector))(ivars, __VA_ARGS__)
#define shmem_broadcast(team, dest, ...) _Generic((dest), SHMEMI_G_RMA(, broadcast))(team, dest, __VA_ARGS__)
#define shmem_collect(team, dest, ...) _Generic((dest), SHMEMI_G_RMA(, collect))(team, dest, __VA_ARGS__)
#define shmem_fcollect(team, dest, ...) _Generic((dest), SHMEMI_G_RMA(, fcollect))(team, dest, __VA_ARGS__)
#define shmem_alltoall(team, dest, ...) _Generic((dest), SHMEMI_G_RMA(, alltoall))(team, dest, __VA_ARGS__)
#define shmem_alltoalls(team, dest, ...) _Generic((dest), SHMEMI_G_RMA(, alltoalls))(team, dest, __VA_ARGS__)
/* the deprecated generic atomics (C11 replaces the old long-only shmem_swap) */
#define SHMEMI_G_OLD(OP) int *: shmem_int_##OP, long *: shmem_long_##OP, long long *: shmem_longlong_##OP
#define SHMEMI_G_OLD_EXT(OP) SHMEMI_G_OLD(OP), float *: shmem_float_##OP, double *: shmem_double_##OP
#define shmem_swap(dest, ...) _Generic((dest), SHMEMI_G_OLD_EXT(swap))(dest, __VA_ARGS__)
#define shmem_set(dest, ...) _Generic((dest), SHMEMI_G_OLD_EXT(set))(dest, __VA_ARGS__)
#define shmem_fetch(src, ...) _Generic((src), SHMEMI_G_OLD_EXT(fetch), const int *: shmem_int_fetch,            \
    const long *: shmem_long_fetch, const long long *: shmem_longlong_fetch, const float *: shmem_float_fetch, \
    const double *: shmem_double_fetch)(src, __VA_ARGS__)
#define shmem_cswap(dest, ...) _Generic((dest), SHMEMI_G_OLD(cswap))(dest, __VA_ARGS__)
#define shmem_add(dest, ...) _Generic((dest), SHMEMI_G_OLD(add))(dest, __VA_ARGS__)
#define shmem_inc(dest, ...) _Generic((dest), SHMEMI_G_OLD(inc))(dest, __VA_ARGS__)
#define shmem_fadd(dest, ...) _Generic((dest), SHMEMI_G_OLD(fadd))(dest, __VA_ARGS__)
#define shmem_finc(dest, ...) _Generic((dest), SHMEMI_G_OLD(finc))(dest, __VA_ARGS__)
#define SHMEMI_G_BITRED(OP)                                                                                  \
    unsigned char *: shmem_uchar_##OP, unsigned short *: shmem_ushort_##OP, unsigned int *: shmem_uint_##OP, \
    unsigned long *: shmem_ulong_##OP, unsigned long long *: shmem_ulonglong_##OP,                         \
    signed char *: shmem_int8_##OP, short *: shmem_int16_##OP, int *: shmem_int32_##OP, long *: shmem_int64_##OP
#define SHMEMI_G_ARITHRED(OP)                                                                                \
    char *: shmem_char_##OP, signed char *: shmem_schar_##OP, short *: shmem_short_##OP, int *: shmem_int_##OP, \
    long *: shmem_long_##OP, long long *: shmem_longlong_##OP, unsigned char *: shmem_uchar_##OP,          \
    unsigned short *: shmem_ushort_##OP, unsigned int *: shmem_uint_##OP, unsigned long *: shmem_ulong_##OP, \
    unsigned long long *: shmem_ulonglong_##OP, float *: shmem_float_##OP, double *: shmem_double_##OP,    \
    long double *: shmem_longdouble_##OP
#define shmem_and_reduce(team, dest, ...) _Generic((dest), SHMEMI_G_BITRED(and_reduce))(team, dest, __VA_ARGS__)
#define shmem_or_reduce(team, dest, ...) _Generic((dest), SHMEMI_G_BITRED(or_reduce))(team, dest, __VA_ARGS__)
#define shmem_xor_reduce(team, dest, ...) _Generic((dest), SHMEMI_G_BITRED(xor_reduce))(team, dest, __VA_ARGS__)
#define shmem_max_reduce(team, dest, ...) _Generic((dest), SHMEMI_G_ARITHRED(max_reduce))(team, dest, __VA_ARGS__)
#define shmem_min_reduce(team, dest, ...) _Generic((dest), SHMEMI_G_ARITHRED(min_reduce))(team, dest, __VA_ARGS__)
#define shmem_sum_reduce(team, dest, ...) _Generic((dest), SHMEMI_G_ARITHRED(sum_reduce))(team, dest, __VA_ARGS__)
#define shmem_prod_reduce(team, dest, ...) _Generic((dest), SHMEMI_G_ARITHRED(prod_reduce))(team, dest, __VA_ARGS__)
#endif

#endif
