/* Kyoyu comm: the one-sided layer (docs/architecture.md; GASNet-EX in spirit, seed 004 on today's links).
 *
 * Segments are registered regions of host or GPU memory, created collectively; a segment has the same
 * handle on every rank and each rank contributes its own piece (sizes may differ). Remote accesses name
 * (rank, segment, byte offset). Paths are chosen per transfer: same rank (local copy), same node host memory
 * (shared memory), same node GPU memory (CUDA IPC over NVLink), other node (MPI, GPU memory staged through
 * pinned host buffers). KY_PATH_HOST / KY_PATH_GPU force one for testing; KY_NODE_SPLIT=rank makes every
 * rank its own node.
 *
 * Completion: a blocking put returns when the data is in the target's memory; a blocking get when it is in
 * the caller's buffer. Non-blocking calls return a handle that ky_wait/ky_test complete (and free).
 * Every call may be made from any thread of a rank (MPI_THREAD_MULTIPLE). */
#ifndef KYOYU_COMM_H
#define KYOYU_COMM_H

#include <stddef.h>
#include <stdint.h>
#include "kyoyu/export.h"
#include "kyoyu/status.h"

KY_EXTERN_C_BEGIN

typedef enum { KY_MEM_HOST = 0, KY_MEM_GPU = 1 } ky_memkind_t;

typedef struct kyi_seg *ky_seg_t;       /* a collectively created segment */
typedef struct kyi_handle *ky_handle_t; /* a non-blocking operation in flight */

/* ---- segments ---------------------------------------------------------------------------------- */

/* Collective. Registers `bytes` of this rank's memory. With base == NULL Kyoyu allocates it: host memory
 * in shared memory that same-node ranks map directly (zero-filled, page-aligned; a piece no same-node rank
 * maps comes from UCX where the UCX transport carries it, KY_SEG_ALLOC), GPU memory with cudaMalloc on
 * CUDA device `device` (exported to same-node ranks by CUDA IPC). With base != NULL the caller's memory is
 * registered (GPU memory must come from cudaMalloc; user host memory is reached through MPI, not shared
 * memory). All ranks must pass the same memkind. bytes may be 0 on some ranks. */
KY_API int ky_seg_create(void *base, size_t bytes, ky_memkind_t memkind, int device, ky_seg_t *out);
/* Collective. Completes the caller's outstanding operations, frees memory Kyoyu allocated and every plan
 * cached for the segment. */
KY_API int ky_seg_destroy(ky_seg_t seg);
/* This rank's piece of the segment. */
KY_API int ky_seg_local(ky_seg_t seg, void **base, size_t *bytes);
/* Size of `rank`'s piece. */
KY_API int ky_seg_size(ky_seg_t seg, int rank, size_t *bytes);

/* ---- contiguous put / get ----------------------------------------------------------------------- */

/* src / dst may be host or GPU memory of the caller (detected). Offsets need no alignment. */
KY_API int ky_put(int rank, ky_seg_t seg, size_t off, const void *src, size_t n);
KY_API int ky_get(void *dst, int rank, ky_seg_t seg, size_t off, size_t n);
KY_API int ky_put_nb(int rank, ky_seg_t seg, size_t off, const void *src, size_t n, ky_handle_t *h);
KY_API int ky_get_nb(void *dst, int rank, ky_seg_t seg, size_t off, size_t n, ky_handle_t *h);
/* Complete and free a handle. ky_test returns KY_OK (done, freed), KY_PENDING, or the operation's error
 * (freed). A NULL handle is complete. */
KY_API int ky_wait(ky_handle_t h);
KY_API int ky_test(ky_handle_t h);
KY_API int ky_wait_all(ky_handle_t *hs, size_t n);
/* Complete every non-blocking operation the calling rank has issued through handles it has not waited on
 * yet (the handles stay valid and complete at once). */
KY_API int ky_quiet(void);
/* Order: every put to `rank` issued before the fence is complete at the target before any put issued after
 * it starts. (rank = -1: all ranks.) */
KY_API int ky_fence(int rank);

/* Single values of 1, 2, 4 or 8 bytes. */
KY_API int ky_put_val(int rank, ky_seg_t seg, size_t off, uint64_t value, size_t n);
KY_API int ky_get_val(int rank, ky_seg_t seg, size_t off, size_t n, uint64_t *value);
/* Set n bytes of the target to `byte`. */
KY_API int ky_memset(int rank, ky_seg_t seg, size_t off, int byte, size_t n);

/* ---- strided and vector ------------------------------------------------------------------------ */

#define KY_STRIDED_MAX_LEVELS 3
/* GASNet VIS convention: count[0] contiguous bytes per block; count[1..levels] blocks at each level;
 * stride[i] (i < levels) the byte distance between consecutive blocks of level i+1, on each side.
 * levels = 0 is a contiguous transfer of count[0] bytes; levels = 2 moves a 3-D sub-block. */
KY_API int ky_put_strided(int rank, ky_seg_t seg, size_t off, const size_t dst_stride[], const void *src,
                          const size_t src_stride[], const size_t count[], int levels);
KY_API int ky_get_strided(void *dst, const size_t dst_stride[], int rank, ky_seg_t seg, size_t off,
                          const size_t src_stride[], const size_t count[], int levels);
KY_API int ky_put_strided_nb(int rank, ky_seg_t seg, size_t off, const size_t dst_stride[], const void *src,
                             const size_t src_stride[], const size_t count[], int levels, ky_handle_t *h);
KY_API int ky_get_strided_nb(void *dst, const size_t dst_stride[], int rank, ky_seg_t seg, size_t off,
                             const size_t src_stride[], const size_t count[], int levels, ky_handle_t *h);
/* Vector: n pieces, piece i moves len[i] bytes between local address and remote offset. */
KY_API int ky_putv(int rank, ky_seg_t seg, size_t n, const size_t dst_off[], const void *const src[],
                   const size_t len[]);
KY_API int ky_getv(void *const dst[], int rank, ky_seg_t seg, size_t n, const size_t src_off[],
                   const size_t len[]);

/* ---- active messages --------------------------------------------------------------------------- */

#define KY_AM_MAX_HANDLERS 256 /* indices 0..KY_AM_USER_MAX-1 are the application's */
#define KY_AM_USER_MAX 200     /* 200..255 are reserved for Kyoyu's upper layers */
#define KY_AM_MAX_ARGS 16

typedef struct kyi_am_token *ky_am_token_t;
/* A handler runs on the target's progress thread (or in ky_poll). payload: medium: a buffer valid until
 * the handler returns; long: the address inside the target segment where the payload was written (a
 * device address for GPU segments); short: NULL. A handler may send replies and must not block on remote
 * operations. */
typedef void (*ky_am_handler_t)(ky_am_token_t token, void *payload, size_t nbytes, const uint64_t *args,
                                int nargs);

/* Register on this rank (do it on every rank before the first message; NULL unregisters). */
KY_API int ky_am_register(int idx, ky_am_handler_t handler);
/* Requests. They return when the caller may reuse `payload`; the handler runs later on `rank`. */
KY_API int ky_am_short(int rank, int idx, const uint64_t *args, int nargs);
KY_API int ky_am_medium(int rank, int idx, const void *payload, size_t n, const uint64_t *args, int nargs);
KY_API int ky_am_long(int rank, int idx, const void *payload, size_t n, ky_seg_t seg, size_t off,
                      const uint64_t *args, int nargs);
/* Replies, only from inside a handler, to the rank that sent the request. */
KY_API int ky_am_reply_short(ky_am_token_t token, int idx, const uint64_t *args, int nargs);
KY_API int ky_am_reply_medium(ky_am_token_t token, int idx, const void *payload, size_t n,
                              const uint64_t *args, int nargs);
KY_API int ky_am_reply_long(ky_am_token_t token, int idx, const void *payload, size_t n, ky_seg_t seg,
                            size_t off, const uint64_t *args, int nargs);
/* The rank that sent the message behind `token`. */
KY_API int ky_am_source(ky_am_token_t token);
/* Largest medium payload (KY_AM_MEDIUM_MAX). */
KY_API size_t ky_am_max_medium(void);
/* Run pending handlers on the calling thread (only needed with KY_PROGRESS_THREAD=0). Returns how many
 * ran (>= 0) or an error. */
KY_API int ky_poll(void);

/* ---- split-phase barrier ----------------------------------------------------------------------- */

/* notify first completes the caller's outstanding non-blocking operations (ky_quiet), then enters the
 * barrier; wait blocks until every rank has notified; try returns KY_OK if it has, KY_PENDING if not.
 * A second notify before wait/try succeeded is KY_ERR_STATE. */
KY_API int ky_barrier_notify(void);
KY_API int ky_barrier_wait(void);
KY_API int ky_barrier_try(void);
/* notify + wait. */
KY_API int ky_comm_barrier(void);

/* ---- statistics ---------------------------------------------------------------------------------- */

typedef enum {
    KY_PATH_SELF = 0, /* target is the caller */
    KY_PATH_SHM = 1,  /* same node, host memory mapped from shared memory */
    KY_PATH_IPC = 2,  /* same node, GPU memory mapped by CUDA IPC (copy engines or kernel) */
    KY_PATH_MPI = 3,  /* through the target's progress engine over MPI (GPU memory staged) */
    KY_PATH_UCX = 4,  /* UCX one-sided put/get (KY_TRANSPORT=ucx, host segments across nodes) */
    KY_PATH_COUNT = 5
} ky_path_t;

typedef struct {
    uint64_t ops[KY_PATH_COUNT];     /* put/get/memset/strided/vector operations per path */
    uint64_t bytes[KY_PATH_COUNT];   /* payload bytes per path */
    uint64_t am_sent, am_handled;    /* active messages sent by / run on this rank */
    uint64_t plan_hits, plan_misses; /* repeated transfers replayed from / added to the plan cache */
    uint64_t staged_chunks;          /* pinned-buffer chunks moved for GPU memory on the MPI path */
    /* long sleeps of the idle progress thread (one host: KY_PROGRESS_IDLE_MAX_US), and how many of them a
     * request's doorbell ended early */
    uint64_t engine_idle_sleeps, engine_rung;
} ky_comm_stats_t;

/* Counters of this rank since ky_init (or the last reset). */
KY_API int ky_comm_stats(ky_comm_stats_t *out);
KY_API int ky_comm_stats_reset(void);
/* The path a transfer between the caller's `local` buffer and (rank, seg) would take now. */
KY_API int ky_comm_path(int rank, ky_seg_t seg, const void *local, ky_path_t *path);

KY_EXTERN_C_END

#endif
