/* Internal: state shared by the files of the comm layer. A segment records, for every rank, its piece's
 * size and, where this process can reach it directly, the address at which it is mapped here (shared
 * memory for host pieces, CUDA IPC for GPU pieces). Transfers pick a path from that (path.c). */
#ifndef KYI_COMM_COMM_H
#define KYI_COMM_COMM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "comm/chan.h"
#include "kyoyu.h"
#include "runtime/gpu.h"
#include "runtime/hb.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

#define KYI_MAX_SEGS 4096

struct kyi_plan;

struct kyi_seg {
    uint32_t id;
    int memkind;
    int device; /* CUDA device of this rank's piece (GPU segments) */
    void *base; /* this rank's piece */
    size_t bytes;
    int owned;           /* Kyoyu allocated base */
    int shm_fd;          /* host pieces in shared memory */
    size_t *size_of;     /* [nranks] */
    int *dev_of;         /* [nranks] device of each rank's piece (GPU) */
    int32_t *gpu_key_of; /* [nranks] the physical GPU of each rank's piece (PCI address), -1 unknown */
    void **mapped;       /* [nranks] address of each rank's piece in this process, NULL if not mapped */
    pthread_mutex_t plan_lock;
    void *plans; /* hash buckets of cached plans (plan.c) */
    void *xseg;  /* the extra transport's registration (transport.h), NULL: reached through MPI */
    void *xmem;  /* the extra transport's allocation of base (seg_alloc), NULL: seg.c's own or the user's */
};

typedef struct {
    int progress_thread;
    char hb_barrier, hb_reply; /* ThreadSanitizer tokens (below) */
    size_t eager, am_medium_max, stage_chunk;
    int stage_depth;
    int force_host_mpi, force_gpu_mpi;
    int seg_alloc_tp; /* KY_SEG_ALLOC=auto: the extra transport may allocate host pieces */
    pthread_rwlock_t seg_lock;
    struct kyi_seg *segs[KYI_MAX_SEGS];
    uint32_t seg_next;
} kyi_comm_t;

extern kyi_comm_t kyi_comm;

/* ThreadSanitizer (runtime/hb.h): the barrier promises that every remote access this rank served before it
 * is complete when it ends, and that the program's accesses before it precede every request served after
 * it. One token states both: released by the engine after serving a request and by ky_barrier_notify,
 * acquired by the engine before serving one and by the barrier's completion. */
#define KYI_HB_BARRIER ((void *)&kyi_comm.hb_barrier)
/* And a reply: what a handler did before answering (a put into this rank's own segment, served for one of
 * its threads) precedes the waiter's return. Released before every deferred send, acquired where a thread's
 * wait or test sees its requests complete (kyi_wait_reqs, kyi_test_reqs). */
#define KYI_HB_REPLY ((void *)&kyi_comm.hb_reply)

/* Statistics (atomics, updated on every path). */
typedef struct {
    atomic_ullong ops[KY_PATH_COUNT], bytes[KY_PATH_COUNT];
    atomic_ullong am_sent, am_handled, plan_hits, plan_misses, staged_chunks;
    atomic_ullong engine_idle_sleeps, engine_rung;
} kyi_stats_t;
extern kyi_stats_t kyi_stats;
static inline void kyi_count(ky_path_t p, size_t n)
{
    atomic_fetch_add_explicit(&kyi_stats.ops[p], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&kyi_stats.bytes[p], n, memory_order_relaxed);
}

/* init.c order: runtime, then these. */
int kyi_comm_init(void);
int kyi_comm_finalize(void);
int kyi_seg_destroy_all(void);

/* seg.c */
struct kyi_seg *kyi_seg_lookup(uint32_t id); /* target side: NULL if no such segment */
void kyi_seg_init(void);
void kyi_plans_free(struct kyi_seg *s);

/* Argument checks shared by every call: initialised, rank in range, segment valid, [off, off+n) inside
 * the target's piece. They record the error under `call`. */
int kyi_check_target(const char *call, int rank, ky_seg_t seg);
int kyi_check_range(const char *call, int rank, ky_seg_t seg, size_t off, size_t n);

/* path.c */
ky_path_t kyi_path(int rank, struct kyi_seg *s);
/* Whether a path is a direct copy (self, shared memory, CUDA IPC) rather than a transport. */
static inline int kyi_path_direct(ky_path_t p)
{
    return p == KY_PATH_SELF || p == KY_PATH_SHM || p == KY_PATH_IPC;
}
/* Device that should run a copy between a and b (either may be -1 = host), or -1 if both are host. */
int kyi_copy_device(int dev_a, int dev_b);
/* Device whose address space holds rank's mapped piece of s here (-1 for host pieces). */
int kyi_mapped_dev(const struct kyi_seg *s, int rank);
/* -1 for host memory, else the GPU holding p (cheap when no GPU exists). */
int kyi_ptr_dev(const void *p);
/* Blocking local copy between any two addresses of this process (host, GPU, peer-mapped GPU). */
int kyi_local_copy(const char *call, void *dst, int dst_dev, const void *src, int src_dev, size_t n);
/* A put (is_put) or get of n bytes between `local` (on GPU ldev, or the host: -1) and another rank's piece
 * mapped here at `remote` (rdev): a put's bytes are in the target's memory before any later flag write of
 * this thread, a get reads after this thread's earlier ones (the direct path, rma.c; UCX's mapped pieces). */
int kyi_mapped_copy(const char *call, int is_put, void *local, int ldev, void *remote, int rdev, size_t n);

/* handle.c: non-blocking operations */
typedef struct kyi_handle {
    int nreq;  /* the MPI transport's requests (mpi/mpi.h): in req_inline, or an array in req */
    void *req; /* NULL: req_inline */
    uint64_t req_inline[4];
    kyi_gpu_op_t *gop;
    int64_t rstatus; /* remote status received into here (acks) */
    int status;      /* final status once done */
    int done;
    int linked;                         /* on the outstanding list (under its lock) */
    atomic_int refs;                    /* the user's, the outstanding list's, and a ky_quiet in progress */
    int rank;                           /* target, for fence */
    const struct kyi_transport *tp;     /* transport whose requests sit in xreq (NULL: none) */
    void *xreq[2];                      /* that transport's requests */
    uint64_t xseq;                      /* that transport's number for the operation (UCX: its flush order) */
    void *tmp, *tmp2;                   /* buffers freed on completion */
    int (*finish)(struct kyi_handle *); /* runs once after the requests completed (unpack, checks) */
    void *finish_arg;
    size_t finish_n;
    size_t nbytes;
    const char *call;
    struct kyi_handle *prev, *next; /* outstanding list */
} kyi_handle_t;

kyi_handle_t *kyi_handle_new(const char *call, int rank);
/* The same in memory of the caller's (a blocking operation's handle on its stack: no allocation), finished
 * by kyi_handle_wait_local, never linked or freed. */
kyi_handle_t *kyi_handle_init(kyi_handle_t *h, const char *call, int rank);
/* Blocking, for a handle from kyi_handle_init: complete it; returns st if that is an error, else its status.
 */
int kyi_handle_wait_local(kyi_handle_t *h, int st);
/* A handle already complete with `status` (for operations finished inside the call). */
int kyi_handle_done(kyi_handle_t *h, int status, ky_handle_t *out);
/* Track an in-flight handle for ky_quiet/ky_fence and return it. */
int kyi_handle_start(kyi_handle_t *h, ky_handle_t *out);
/* Hand a started operation to its caller: on error complete and free it; non-blocking (out != NULL): track
 * it and return it in *out; blocking: complete and free it. Returns the operation's status. */
int kyi_handle_launch(kyi_handle_t *h, int st, ky_handle_t *out);
/* Complete h (blocking), keep it allocated; returns its status. */
int kyi_handle_complete(kyi_handle_t *h);

/* progress.c */
int kyi_progress_start(void);
int kyi_progress_stop(void);

/* bell.c: doorbells that wake a same-host rank's idle progress thread (one logical node, no UCX). open is
 * collective (ky_init, before the engine starts), close after the engine stopped. ring(rank): after a
 * message to rank's engine was sent. The engine: ready, then arm (returns the count seen), one more poll,
 * then wait (up to KY_PROGRESS_IDLE_MAX_US; until a ring changes the count) or disarm. */
int kyi_bell_open(void);
void kyi_bell_close(void);
int kyi_bell_ready(void);
void kyi_bell_ring(int rank);
uint32_t kyi_bell_arm(void);
void kyi_bell_disarm(void);
int kyi_bell_wait(uint32_t seen); /* 1: rung, 0: the timeout */
/* kyi_progress_poll (chan.h) serves pending requests on the calling thread: ky_poll, and waits without a
 * progress thread. The MPI transport's own waits and deferred sends are in mpi/mpi.h. */

#endif
