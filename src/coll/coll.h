/* Internal: state shared by the files of the coll layer. A collective is compiled into a schedule: a list
 * of steps, each a send and/or a receive between two buffers of the call, or a local copy or reduction
 * (sched_*.c build them). The executor (exec.c) runs a schedule with non-blocking messages on the team's
 * channel (comm/chan.h) and waits through the runtime's waiters. Blocking calls build and run a schedule at
 * once; persistent plans keep it with its scratch buffers and run it at every start. */
#ifndef KYI_COLL_COLL_H
#define KYI_COLL_COLL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "comm/chan.h"
#include "kyoyu.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

/* ---- teams (team.c) ---------------------------------------------------------------------------------- */

struct kyi_team {
    kyi_chan_t *chan; /* the team's own channel; its peers are team ranks */
    int rank, size;
    int *world;      /* [size] world rank of every member */
    atomic_uint seq; /* collectives started on this team: the tag of the next one */
    int tag_ub;
    struct kyi_gteam *gpu; /* GPU context (gpu/gcoll.h), made at the first GPU collective */
    struct kyi_shm *shm;   /* shared-memory segment (shm.h), made at the first host collective */
    int shm_state;         /* 0: not decided yet, 1: shm, -1: MPI schedules only */
    struct kyi_hier *hier; /* sub-teams of the hierarchical collectives (hier.h), made at first use */
    int hier_state;        /* 0: not decided yet, 1: hierarchical, -1: flat */
};

/* The team behind a handle (KY_TEAM_WORLD set up at first use), or NULL after recording an error. */
struct kyi_team *kyi_team_get(const char *call, ky_team_t team);
/* Tag for the next collective of the team (the same on every member). */
int kyi_team_next_tag(struct kyi_team *t);

/* ---- data types and reductions (reduce_op.c) ---------------------------------------------------------- */

size_t kyi_dtype_size(ky_dtype_t t); /* 0 for an unknown type */
const char *kyi_dtype_name(int t);
const char *kyi_op_name(int op);
/* dst[i] = dst[i] op src[i] for i < n elements. */
void kyi_reduce_local(void *dst, const void *src, size_t n, ky_dtype_t t, ky_op_t op);
/* dst = first op src, element-wise (no overlap): saves copying `first` into dst. */
void kyi_reduce_local3(void *dst, const void *first, const void *src, size_t n, ky_dtype_t t, ky_op_t op);

/* ---- schedules (sched_*.c) ---------------------------------------------------------------------------- */

enum { KYI_B_S = 0, KYI_B_R = 1, KYI_B_T = 2, KYI_B_U = 3, KYI_NBUF = 4 }; /* send, receive, two scratch */
enum { KYI_STEP_XCHG = 0, KYI_STEP_COPY = 1, KYI_STEP_REDUCE = 2 };

/* XCHG: send [sbuf+soff, slen) to team rank `to` (-1: none) and receive [rbuf+roff, rlen) from `from`
 *       (-1: none); then, if reduce, [dbuf+doff] op= [rbuf+roff] over rlen bytes.
 * COPY: [rbuf+roff] = [sbuf+soff] over slen bytes.
 * REDUCE: [dbuf+doff] op= [sbuf+soff] over slen bytes. */
typedef struct {
    uint8_t kind, sbuf, rbuf, dbuf, reduce;
    int to, from;
    size_t soff, slen, roff, rlen, doff;
} kyi_step_t;

typedef struct {
    kyi_step_t *v;
    int n, cap;
    size_t scratch[2]; /* bytes of KYI_B_T and KYI_B_U the schedule needs */
    int nomem;
} kyi_sched_t;

void kyi_sched_free(kyi_sched_t *s);
void kyi_sched_xchg(kyi_sched_t *s, int to, int sbuf, size_t soff, size_t slen, int from, int rbuf,
                    size_t roff, size_t rlen);
void kyi_sched_xchg_reduce(kyi_sched_t *s, int to, int sbuf, size_t soff, size_t slen, int from, int rbuf,
                           size_t roff, size_t rlen, int dbuf, size_t doff);
void kyi_sched_copy(kyi_sched_t *s, int sbuf, size_t soff, int rbuf, size_t roff, size_t n);
void kyi_sched_reduce(kyi_sched_t *s, int sbuf, size_t soff, int dbuf, size_t doff, size_t n);
void kyi_sched_need(kyi_sched_t *s, int buf, size_t bytes);

/* Allgather of b bytes per member from (sbuf, soff) into (rbuf, roff .. + p*b). The caller's block is
 * already in place when sbuf/soff is rbuf/roff + me*b. Bruck uses KYI_B_U as its rotation buffer. Returns
 * the algorithm actually scheduled (neighbor on odd p: ring). */
int kyi_sched_allgather(kyi_sched_t *s, int algo, int p, int me, size_t b, int sbuf, size_t soff, int rbuf,
                        size_t roff);
/* Allreduce of n elements of es bytes: input (S, or R when in_place), result in R. */
int kyi_sched_allreduce(kyi_sched_t *s, int algo, int p, int me, size_t n, size_t es, int in_place);
void kyi_sched_bcast(kyi_sched_t *s, int p, int me, int root, int buf, size_t bytes);
/* Binomial reduce into acc (which holds this member's input on entry) towards root. */
void kyi_sched_reduce_tree(kyi_sched_t *s, int p, int me, int root, int acc, size_t bytes);
void kyi_sched_barrier(kyi_sched_t *s, int p, int me);

/* ---- algorithm choice (select.c) ---------------------------------------------------------------------- */

int kyi_coll_algo(ky_coll_kind_t kind, int p, size_t bytes); /* host buffers; never KY_ALGO_AUTO */
int kyi_coll_forced(ky_coll_kind_t kind);                    /* what the setting / override asks for */
/* GPU buffers: nvl says whether the team has the NVLink path. Forcing oneshot/twoshot without it gives the
 * host choice (staged); forcing a host algorithm stages through host memory even on NVLink. */
int kyi_coll_algo_gpu(ky_coll_kind_t kind, int p, size_t bytes, int nvl);

/* ---- execution (exec.c) ------------------------------------------------------------------------------- */

struct kyi_coll_plan {
    struct kyi_team *team;
    const char *call;
    kyi_sched_t sched;
    void *buf[KYI_NBUF];
    void *owned[2]; /* scratch allocated for T and U */
    ky_dtype_t dtype;
    ky_op_t op;
    int algo;
    struct kyi_gplan *gpu; /* GPU buffers: what gpu/gcoll.c runs instead of the schedule */
    /* shared-memory path (shm.c): shm_kind != 0 (KYI_SHM_*) replaces the schedule. s: input (NULL: in
     * place), r: output (NULL: none), n: elements (allreduce, reduce) or bytes (allgather: per member) */
    int shm_kind, shm_root;
    const void *shm_s;
    void *shm_r;
    size_t shm_n;
    struct kyi_coll_plan *shm_next; /* started plans of the team waiting to run, in start order */
    int hier;             /* ky_allreduce runs it hierarchically (hier.c) with shm_s, shm_r, shm_n */
    int gpu_hier;         /* ... and its buffers are GPU memory */
    struct kyi_hplan *hp; /* a persistent plan in hierarchical stages (hier.c), run instead of the rest */
    int (*before)(void *), (*after)(void *); /* shared-memory plans: run around the collective (hier.c) */
    void *hook_arg;
    struct kyi_coll_plan *flight_next; /* MPI schedules in flight (exec.c): a wait progresses them all */
    atomic_int busy;                   /* a thread is advancing this plan */
    /* in flight */
    int active, cur, posted, tag, status;
    kyi_chan_req_t req[2]; /* the current step's receive and send */
};

/* Allocate the schedule's scratch buffers. */
int kyi_plan_scratch(struct kyi_coll_plan *pl);
int kyi_plan_start(struct kyi_coll_plan *pl);
int kyi_plan_wait(struct kyi_coll_plan *pl);
/* Release scratch and schedule (not the struct). */
void kyi_plan_release(struct kyi_coll_plan *pl);
/* Scratch, start, wait and release of a host plan built on the stack. */
int kyi_plan_run(struct kyi_coll_plan *pl);
/* Internal agreement: v[0..n) = the minimum over the team, in place (recursive doubling on host memory). Used
 * by KY_CHECK and by the GPU set-up; every member calls it in the same order. */
int kyi_allreduce_min_i64(struct kyi_team *t, int64_t *v, size_t n, const char *call);

/* ---- argument agreement (check.c) --------------------------------------------------------------------- */

enum { KYI_CK_KIND, KYI_CK_COUNT, KYI_CK_DTYPE, KYI_CK_OP, KYI_CK_ROOT, KYI_CK_ALGO, KYI_CK_BAD, KYI_CK_N };
int kyi_check_enabled(void);
/* Collective over the team when KY_CHECK=1: every member's sig[] must agree (KYI_CK_BAD: 1 if a member
 * found its own arguments invalid). Returns KY_OK, or KY_ERR_ARG on every member naming the mismatch. */
int kyi_check_agree(const char *call, struct kyi_team *t, const int64_t sig[KYI_CK_N]);

#endif
