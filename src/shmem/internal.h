/* Internal: state shared by the files of the shmem layer (include/shmem.h), an OpenSHMEM subset written on
 * comm and coll. A symmetric address is (segment, offset): the heap segment (Kyoyu-allocated, mapped by
 * same-node PEs) or the data segment (the program's own writable data and bss, registered as user memory,
 * so reached through the target's progress engine). Every PE computes the same offsets, so an address of
 * its own names the same object on any PE. */
#ifndef KYI_SHMEM_INTERNAL_H
#define KYI_SHMEM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "comm/chan.h"
#include "comm/direct.h"
#include "kyoyu.h"
#include "runtime/log.h"
#include "runtime/runtime.h"
#include "shmem.h"

enum { KYI_SHM_HEAP = 0, KYI_SHM_DATA = 1, KYI_SHM_NSEGS = 2 };

typedef struct {
    int initialized;
    int own_ky; /* shmem_init called ky_init, so shmem_finalize calls ky_finalize */
    int me, npes;
    ky_seg_t seg[KYI_SHM_NSEGS];
    char *base[KYI_SHM_NSEGS];
    size_t size[KYI_SHM_NSEGS];
    int error_mode;
    /* Read by every put and get, set once by shmem_init: where each PE's heap is mapped in this process
     * (NULL: reached through comm only), whether no GPU is visible (every local buffer is host memory) and
     * whether there is no progress thread (transfers then poll to serve the others). */
    char **heap_peer;
    int host_only, poll;
} kyi_shmem_t;

extern kyi_shmem_t kyi_shmem;

/* The error path of every call: records "rank R: call: cause" (ky_last_error, shmemx_last_error) and, in
 * SHMEMX_ERRORS_ABORT mode, prints it and ends the job. Returns status (when it returns). */
int kyi_shmem_fail(int status, const char *call, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Calls that return a status (team splits, the 1.5 collectives) bracket their work with these: inside,
 * errors are logged and returned, never the job's end. */
void kyi_shmem_returning(int on);
/* The same for a status a comm or coll call returned (its message is ky_last_error's). */
int kyi_shmem_failed(int status, const char *call);
/* KY_OK when shmem_init ran, else the error. */
int kyi_shmem_ready(const char *call);

/* [addr, addr + n) as a symmetric range of a PE: checks the PE and the range. which: KYI_SHM_HEAP/DATA. */
int kyi_shmem_xlate(const char *call, const char *what, const void *addr, size_t n, int pe, int *which,
                    size_t *off);
/* Address of (which, off) of pe in this process when it is mapped here (same node, heap), else NULL. */
void *kyi_shmem_peer_addr(int which, size_t off, int pe);
/* n * size without overflow, else an error. */
int kyi_shmem_bytes(const char *call, size_t n, size_t size, size_t *bytes);

/* rma.c: completes the _nbi operations of this PE (shmem_quiet). */
int kyi_shmem_quiet(const char *call);
int kyi_shmem_rma(const char *call, int put, void *remote, void *local, size_t n, int pe, int nbi);

/* amo.c: one atomic of size 4 or 8 bytes; returns the old value in *old (may be NULL). */
enum {
    KYI_AMO_FETCH,
    KYI_AMO_SET,
    KYI_AMO_SWAP,
    KYI_AMO_CSWAP,
    KYI_AMO_ADD,
    KYI_AMO_AND,
    KYI_AMO_OR,
    KYI_AMO_XOR
};
int kyi_shmem_amo(const char *call, int op, void *dest, size_t size, uint64_t value, uint64_t cond, int pe,
                  uint64_t *old);
int kyi_shmem_amo_init(void);
/* Waits (with progress when there is no progress thread) until cmp(*ivar, value) holds; size 1..8. */
int kyi_shmem_wait(const char *call, const void *ivar, size_t size, int is_signed, int cmp, uint64_t value);
int kyi_shmem_cmp(const void *ivar, size_t size, int is_signed, int cmp, uint64_t value, int *holds);

/* heap.c; reserve: a block carved at shmem_init, before any program allocation (same offset everywhere) */
int kyi_shmem_heap_init(void);
void kyi_shmem_heap_finalize(void);
void *kyi_shmem_heap_reserve(size_t bytes);

/* rma.c: nelems elements of size bytes at strides (in elements) between remote and local, blocking */
int kyi_shmem_strided(const char *call, int put, void *remote, ptrdiff_t rstride, void *local,
                      ptrdiff_t lstride, size_t nelems, size_t size, int pe);

/* coll.c: a strided set of world PEs (an active set or a team): member i is start + i * stride; idx is the
 * caller's index. The barrier goes through the set's pSync (quiet: complete this PE's puts first). */
typedef struct {
    int start, stride, size, idx;
} kyi_aset_t;
int kyi_aset_member(const kyi_aset_t *a, int i);
int kyi_aset_barrier(const char *call, const kyi_aset_t *a, long *pSync, int quiet);
void kyi_shmem_aset_sync(const char *call, int PE_start, int logPE_stride, int PE_size, long *pSync);

/* team.c: the team as a set and its sync words; *world = 1 for SHMEM_TEAM_WORLD (coll's collectives) */
int kyi_shmem_team_init(void);
void kyi_shmem_team_finalize(void);
int kyi_shmem_team(const char *call, shmem_team_t team, kyi_aset_t *a, long **psync, int *world);
int kyi_shmem_team_world_pe(shmem_team_t team, int pe);

#endif
